//! Header records of a RoCEv2 frame, each with its big-endian wire form.

use serde::Serialize;
use std::net::{Ipv4Addr, Ipv6Addr};

pub const ETH_LEN: usize = 14;
pub const IPV4_LEN: usize = 20;
pub const IPV6_LEN: usize = 40;
pub const UDP_LEN: usize = 8;
pub const BTH_LEN: usize = 12;
pub const RETH_LEN: usize = 16;
pub const AETH_LEN: usize = 4;
pub const ATOMIC_ETH_LEN: usize = 28;
pub const ATOMIC_ACK_ETH_LEN: usize = 8;
pub const IMM_LEN: usize = 4;
pub const IETH_LEN: usize = 4;
pub const DETH_LEN: usize = 8;
pub const CNP_RESERVED_LEN: usize = 16;
pub const ICRC_LEN: usize = 4;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const IP_PROTO_UDP: u8 = 17;
pub const ROCEV2_UDP_PORT: u16 = 4791;
pub const DEFAULT_PKEY: u16 = 0xFFFF;

/// PSNs and QPNs are 24-bit quantities.
pub const MASK24: u32 = 0x00FF_FFFF;

/// ECN codepoints of the IP header (RFC 3168).
pub mod ecn {
    pub const NOT_ECT: u8 = 0b00;
    pub const ECT1: u8 = 0b01;
    pub const ECT0: u8 = 0b10;
    pub const CE: u8 = 0b11;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct EthHeader {
    pub dst: [u8; 6],
    pub src: [u8; 6],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Ipv4Header {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub dscp: u8,
    pub ecn: u8,
    pub identification: u16,
    pub dont_fragment: bool,
    pub ttl: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Ipv6Header {
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
    pub dscp: u8,
    pub ecn: u8,
    /// 20 bits.
    pub flow_label: u32,
    pub hop_limit: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "version")]
pub enum IpHeader {
    #[serde(rename = "4")]
    V4(Ipv4Header),
    #[serde(rename = "6")]
    V6(Ipv6Header),
}

impl IpHeader {
    pub fn ecn(&self) -> u8 {
        match self {
            IpHeader::V4(h) => h.ecn,
            IpHeader::V6(h) => h.ecn,
        }
    }

    pub fn header_len(&self) -> usize {
        match self {
            IpHeader::V4(_) => IPV4_LEN,
            IpHeader::V6(_) => IPV6_LEN,
        }
    }
}

/// Base Transport Header. `pad_count` is derived from the payload when
/// encoding; decoding reports what the wire said.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Bth {
    pub opcode: u8,
    pub solicited: bool,
    pub mig_req: bool,
    pub pad_count: u8,
    pub tver: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    /// 24 bits.
    pub dest_qp: u32,
    pub ack_req: bool,
    /// 24 bits.
    pub psn: u32,
}

impl Bth {
    /// A BTH with the defaults every rocenic sender uses.
    pub fn new(opcode: u8, dest_qp: u32, psn: u32) -> Bth {
        Bth {
            opcode,
            solicited: false,
            mig_req: false,
            pad_count: 0,
            tver: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp: dest_qp & MASK24,
            ack_req: false,
            psn: psn & MASK24,
        }
    }

    pub fn write(&self, out: &mut [u8]) {
        out[0] = self.opcode;
        out[1] = (u8::from(self.solicited) << 7)
            | (u8::from(self.mig_req) << 6)
            | ((self.pad_count & 3) << 4)
            | (self.tver & 0xF);
        out[2..4].copy_from_slice(&self.pkey.to_be_bytes());
        out[4] = (u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6);
        out[5..8].copy_from_slice(&self.dest_qp.to_be_bytes()[1..]);
        out[8] = u8::from(self.ack_req) << 7;
        out[9..12].copy_from_slice(&self.psn.to_be_bytes()[1..]);
    }

    pub fn read(b: &[u8]) -> Bth {
        Bth {
            opcode: b[0],
            solicited: b[1] & 0x80 != 0,
            mig_req: b[1] & 0x40 != 0,
            pad_count: (b[1] >> 4) & 3,
            tver: b[1] & 0xF,
            pkey: u16::from_be_bytes([b[2], b[3]]),
            fecn: b[4] & 0x80 != 0,
            becn: b[4] & 0x40 != 0,
            dest_qp: be24(&b[5..8]),
            ack_req: b[8] & 0x80 != 0,
            psn: be24(&b[9..12]),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Reth {
    pub va: u64,
    pub rkey: u32,
    pub dma_len: u32,
}

/// AETH syndrome encodings (IBA 9.3.5, the AETH's syndrome field).
pub mod syndrome {
    pub const ACK_UNLIMITED_CREDITS: u8 = 0x1F;
    pub const RNR_NAK: u8 = 0x20;
    pub const NAK: u8 = 0x60;
    pub const NAK_PSN_SEQUENCE_ERROR: u8 = 0x60;
    pub const NAK_INVALID_REQUEST: u8 = 0x61;
    pub const NAK_REMOTE_ACCESS_ERROR: u8 = 0x62;
    pub const NAK_REMOTE_OPERATIONAL_ERROR: u8 = 0x63;
    pub const NAK_INVALID_RD_REQUEST: u8 = 0x64;
    pub const TYPE_MASK: u8 = 0x60;
    pub const VALUE_MASK: u8 = 0x1F;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Aeth {
    pub syndrome: u8,
    /// 24 bits.
    pub msn: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AethKind {
    Ack { credits: u8 },
    RnrNak { timer: u8 },
    Reserved,
    Nak { code: u8 },
}

impl Aeth {
    pub fn kind(&self) -> AethKind {
        let value = self.syndrome & syndrome::VALUE_MASK;
        match self.syndrome & syndrome::TYPE_MASK {
            0x00 => AethKind::Ack { credits: value },
            0x20 => AethKind::RnrNak { timer: value },
            0x40 => AethKind::Reserved,
            _ => AethKind::Nak { code: value },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AtomicEth {
    pub va: u64,
    pub rkey: u32,
    pub swap_add: u64,
    pub compare: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AtomicAckEth {
    pub orig: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Deth {
    pub qkey: u32,
    /// 24 bits.
    pub src_qp: u32,
}

/// The extension headers of one packet; which are present is fixed by the
/// opcode (`opcode::info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
pub struct ExtHeaders {
    pub deth: Option<Deth>,
    pub reth: Option<Reth>,
    pub atomic_eth: Option<AtomicEth>,
    pub aeth: Option<Aeth>,
    pub atomic_ack_eth: Option<AtomicAckEth>,
    pub imm: Option<u32>,
    pub ieth: Option<u32>,
}

impl ExtHeaders {
    /// The set of headers present (CNP's reserved bytes are not a record).
    pub fn present(&self) -> crate::opcode::ExtSet {
        use crate::opcode::ExtSet;
        let mut set = ExtSet::NONE;
        let flags = [
            (self.deth.is_some(), ExtSet::DETH),
            (self.reth.is_some(), ExtSet::RETH),
            (self.atomic_eth.is_some(), ExtSet::ATOMIC_ETH),
            (self.aeth.is_some(), ExtSet::AETH),
            (self.atomic_ack_eth.is_some(), ExtSet::ATOMIC_ACK_ETH),
            (self.imm.is_some(), ExtSet::IMM),
            (self.ieth.is_some(), ExtSet::IETH),
        ];
        for (present, bit) in flags {
            if present {
                set = set.union(bit);
            }
        }
        set
    }

    /// Writes the headers in wire order; `out` must hold `wire_len` bytes
    /// of `set`. Headers named by `set` but absent here are written as zero.
    pub(crate) fn write(&self, set: crate::opcode::ExtSet, out: &mut Vec<u8>) {
        use crate::opcode::ExtSet;
        if set.contains(ExtSet::DETH) {
            let d = self.deth.unwrap_or(Deth { qkey: 0, src_qp: 0 });
            out.extend_from_slice(&d.qkey.to_be_bytes());
            out.extend_from_slice(&(d.src_qp & MASK24).to_be_bytes());
        }
        if set.contains(ExtSet::RETH) {
            let r = self.reth.unwrap_or(Reth {
                va: 0,
                rkey: 0,
                dma_len: 0,
            });
            out.extend_from_slice(&r.va.to_be_bytes());
            out.extend_from_slice(&r.rkey.to_be_bytes());
            out.extend_from_slice(&r.dma_len.to_be_bytes());
        }
        if set.contains(ExtSet::ATOMIC_ETH) {
            let a = self.atomic_eth.unwrap_or(AtomicEth {
                va: 0,
                rkey: 0,
                swap_add: 0,
                compare: 0,
            });
            out.extend_from_slice(&a.va.to_be_bytes());
            out.extend_from_slice(&a.rkey.to_be_bytes());
            out.extend_from_slice(&a.swap_add.to_be_bytes());
            out.extend_from_slice(&a.compare.to_be_bytes());
        }
        if set.contains(ExtSet::AETH) {
            let a = self.aeth.unwrap_or(Aeth {
                syndrome: 0,
                msn: 0,
            });
            out.push(a.syndrome);
            out.extend_from_slice(&a.msn.to_be_bytes()[1..]);
        }
        if set.contains(ExtSet::ATOMIC_ACK_ETH) {
            let a = self.atomic_ack_eth.unwrap_or(AtomicAckEth { orig: 0 });
            out.extend_from_slice(&a.orig.to_be_bytes());
        }
        if set.contains(ExtSet::IMM) {
            out.extend_from_slice(&self.imm.unwrap_or(0).to_be_bytes());
        }
        if set.contains(ExtSet::IETH) {
            out.extend_from_slice(&self.ieth.unwrap_or(0).to_be_bytes());
        }
        if set.contains(ExtSet::CNP_RESERVED) {
            out.extend_from_slice(&[0; CNP_RESERVED_LEN]);
        }
    }

    /// Reads the headers of `set` from `b`, which holds at least
    /// `set.wire_len()` bytes.
    pub(crate) fn read(set: crate::opcode::ExtSet, b: &[u8]) -> ExtHeaders {
        use crate::opcode::ExtSet;
        let mut h = ExtHeaders::default();
        let mut at = 0;
        if set.contains(ExtSet::DETH) {
            h.deth = Some(Deth {
                qkey: be32(&b[at..]),
                src_qp: be24(&b[at + 5..at + 8]),
            });
            at += DETH_LEN;
        }
        if set.contains(ExtSet::RETH) {
            h.reth = Some(Reth {
                va: be64(&b[at..]),
                rkey: be32(&b[at + 8..]),
                dma_len: be32(&b[at + 12..]),
            });
            at += RETH_LEN;
        }
        if set.contains(ExtSet::ATOMIC_ETH) {
            h.atomic_eth = Some(AtomicEth {
                va: be64(&b[at..]),
                rkey: be32(&b[at + 8..]),
                swap_add: be64(&b[at + 12..]),
                compare: be64(&b[at + 20..]),
            });
            at += ATOMIC_ETH_LEN;
        }
        if set.contains(ExtSet::AETH) {
            h.aeth = Some(Aeth {
                syndrome: b[at],
                msn: be24(&b[at + 1..at + 4]),
            });
            at += AETH_LEN;
        }
        if set.contains(ExtSet::ATOMIC_ACK_ETH) {
            h.atomic_ack_eth = Some(AtomicAckEth {
                orig: be64(&b[at..]),
            });
            at += ATOMIC_ACK_ETH_LEN;
        }
        if set.contains(ExtSet::IMM) {
            h.imm = Some(be32(&b[at..]));
            at += IMM_LEN;
        }
        if set.contains(ExtSet::IETH) {
            h.ieth = Some(be32(&b[at..]));
        }
        h
    }
}

pub(crate) fn be24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

pub(crate) fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

pub(crate) fn be64(b: &[u8]) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_be_bytes(w)
}
