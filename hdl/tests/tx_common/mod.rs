//! Shared by the TX tests: random frames the codec accepts, the TX header
//! record of a frame, and byte/`Bits` conversions.

#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::frame::tx::tx_header::TxHeader;
use rocenic_hdl::primitives::stream::{AxisSink, AxisSource, DATA_BITS, KEEP_BITS};
use rocenic_hdl::primitives::wide::{bits_from_words, bits_to_bytes};
use rocenic_wire::opcode::{ExtSet, OPCODES};
use rocenic_wire::*;
use rust_hdl::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Every opcode the codec knows.
pub fn all_opcodes() -> Vec<u8> {
    OPCODES.iter().map(|o| o.code).collect()
}

pub fn carries_payload(opcode: u8) -> bool {
    opcode::info(opcode).is_some_and(|o| o.has_payload)
}

/// A frame with random field values for `opcode`, the extension headers the
/// opcode names, and `payload_len` random payload bytes.
pub fn random_frame(r: &mut ChaCha8Rng, opcode: u8, ipv6: bool, payload_len: usize) -> RoceFrame {
    let info = opcode::info(opcode).expect("known opcode");
    let set = info.headers;
    let ip = if ipv6 {
        IpHeader::V6(Ipv6Header {
            src: Ipv6Addr::from(r.gen::<u128>()),
            dst: Ipv6Addr::from(r.gen::<u128>()),
            dscp: r.gen_range(0..64),
            ecn: r.gen_range(0..4),
            flow_label: r.gen_range(0..1 << 20),
            hop_limit: r.gen(),
        })
    } else {
        IpHeader::V4(Ipv4Header {
            src: Ipv4Addr::from(r.gen::<u32>()),
            dst: Ipv4Addr::from(r.gen::<u32>()),
            dscp: r.gen_range(0..64),
            ecn: r.gen_range(0..4),
            identification: r.gen(),
            dont_fragment: r.gen(),
            ttl: r.gen(),
        })
    };
    let mut bth = Bth::new(opcode, r.gen(), r.gen());
    bth.solicited = r.gen();
    bth.mig_req = r.gen();
    bth.pkey = r.gen();
    bth.fecn = r.gen();
    bth.becn = r.gen();
    bth.ack_req = r.gen();
    let ext = ExtHeaders {
        deth: set.contains(ExtSet::DETH).then(|| Deth {
            qkey: r.gen(),
            src_qp: r.gen_range(0..1 << 24),
        }),
        reth: set.contains(ExtSet::RETH).then(|| Reth {
            va: r.gen(),
            rkey: r.gen(),
            dma_len: r.gen(),
        }),
        atomic_eth: set.contains(ExtSet::ATOMIC_ETH).then(|| AtomicEth {
            va: r.gen(),
            rkey: r.gen(),
            swap_add: r.gen(),
            compare: r.gen(),
        }),
        aeth: set.contains(ExtSet::AETH).then(|| Aeth {
            syndrome: r.gen(),
            msn: r.gen_range(0..1 << 24),
        }),
        atomic_ack_eth: set
            .contains(ExtSet::ATOMIC_ACK_ETH)
            .then(|| AtomicAckEth { orig: r.gen() }),
        imm: set.contains(ExtSet::IMM).then(|| r.gen()),
        ieth: set.contains(ExtSet::IETH).then(|| r.gen()),
    };
    RoceFrame {
        eth: EthHeader {
            dst: r.gen(),
            src: r.gen(),
        },
        ip,
        udp_src_port: r.gen(),
        udp_checksum: false,
        bth,
        ext,
        payload: (0..payload_len).map(|_| r.gen()).collect(),
    }
}

fn mac(m: [u8; 6]) -> Bits<48> {
    let mut b = [0u8; 8];
    b[2..].copy_from_slice(&m);
    bits(u64::from_be_bytes(b))
}

fn b128(v: u128) -> Bits<128> {
    bits_from_words(&[v as u64, (v >> 64) as u64])
}

/// The TX header record that asks the builder for `frame`.
pub fn tx_header_of(f: &RoceFrame) -> TxHeader {
    let mut h = TxHeader {
        eth_dst: mac(f.eth.dst),
        eth_src: mac(f.eth.src),
        udp_src_port: bits(u64::from(f.udp_src_port)),
        udp_checksum: f.udp_checksum,
        opcode: bits(u64::from(f.bth.opcode)),
        solicited: f.bth.solicited,
        mig_req: f.bth.mig_req,
        tver: bits(u64::from(f.bth.tver)),
        pkey: bits(u64::from(f.bth.pkey)),
        fecn: f.bth.fecn,
        becn: f.bth.becn,
        dest_qp: bits(u64::from(f.bth.dest_qp)),
        ack_req: f.bth.ack_req,
        psn: bits(u64::from(f.bth.psn)),
        payload_len: bits(f.payload.len() as u64),
        ..Default::default()
    };
    match f.ip {
        IpHeader::V4(ip) => {
            h.ipv6 = false;
            h.ip_src = b128(u128::from(u32::from(ip.src)));
            h.ip_dst = b128(u128::from(u32::from(ip.dst)));
            h.dscp = bits(u64::from(ip.dscp));
            h.ecn = bits(u64::from(ip.ecn));
            h.ipv4_identification = bits(u64::from(ip.identification));
            h.ipv4_dont_fragment = ip.dont_fragment;
            h.ttl = bits(u64::from(ip.ttl));
        }
        IpHeader::V6(ip) => {
            h.ipv6 = true;
            h.ip_src = b128(u128::from(ip.src));
            h.ip_dst = b128(u128::from(ip.dst));
            h.dscp = bits(u64::from(ip.dscp));
            h.ecn = bits(u64::from(ip.ecn));
            h.ipv6_flow_label = bits(u64::from(ip.flow_label));
            h.ttl = bits(u64::from(ip.hop_limit));
        }
    }
    if let Some(d) = f.ext.deth {
        h.deth_qkey = bits(u64::from(d.qkey));
        h.deth_src_qp = bits(u64::from(d.src_qp));
    }
    if let Some(x) = f.ext.reth {
        h.reth_va = bits(x.va);
        h.reth_rkey = bits(u64::from(x.rkey));
        h.reth_dma_len = bits(u64::from(x.dma_len));
    }
    if let Some(a) = f.ext.atomic_eth {
        h.atomic_va = bits(a.va);
        h.atomic_rkey = bits(u64::from(a.rkey));
        h.atomic_swap_add = bits(a.swap_add);
        h.atomic_compare = bits(a.compare);
    }
    if let Some(a) = f.ext.aeth {
        h.aeth_syndrome = bits(u64::from(a.syndrome));
        h.aeth_msn = bits(u64::from(a.msn));
    }
    if let Some(a) = f.ext.atomic_ack_eth {
        h.atomic_ack_orig = bits(a.orig);
    }
    if let Some(i) = f.ext.imm {
        h.imm = bits(u64::from(i));
    }
    if let Some(i) = f.ext.ieth {
        h.ieth_rkey = bits(u64::from(i));
    }
    h
}

/// Header length (Ethernet through the extension headers) of `f`.
pub fn header_len(f: &RoceFrame) -> usize {
    let ext = opcode::info(f.bth.opcode).map_or(0, |o| o.headers.wire_len());
    ETH_LEN + f.ip.header_len() + UDP_LEN + BTH_LEN + ext
}

/// Offset of the UDP checksum in an encoded frame.
pub fn udp_checksum_at(f: &RoceFrame) -> usize {
    ETH_LEN + f.ip.header_len() + 6
}

/// `encode` with the UDP checksum bytes cleared: what the frame looks like
/// before a checksum is filled in (the ICRC masks those bytes, so it is the
/// same either way).
pub fn encode_without_udp_checksum(f: &RoceFrame) -> Vec<u8> {
    let mut bytes = f.encode().expect("frame encodes");
    let at = udp_checksum_at(f);
    bytes[at] = 0;
    bytes[at + 1] = 0;
    bytes
}

/// The frame job the header stage should make for `f`, built in plain Rust
/// from the codec's bytes (an independent reference for the merger tests).
pub fn job_of(f: &RoceFrame, drop: bool) -> rocenic_hdl::frame::tx::tx_header_prep::TxJob {
    use rocenic_hdl::primitives::wide::bits_from_bytes;
    let wire = encode_without_udp_checksum(f);
    let h = header_len(f);
    let len = f.payload.len();
    let e = h + len + pad_for(len);
    let v6 = matches!(f.ip, IpHeader::V6(_));
    rocenic_hdl::frame::tx::tx_header_prep::TxJob {
        header_lanes: bits_from_bytes(&wire[..h]),
        header_len: bits(h as u64),
        payload_beats: bits(len.div_ceil(64) as u64),
        payload_last_bytes: bits((len % 64) as u64),
        frame_beats: bits(e.div_ceil(64) as u64),
        frame_last_bytes: bits((e % 64) as u64),
        drop,
        ipv6: v6,
        udp_checksum: v6 || f.udp_checksum,
    }
}

/// One beat of a 512-bit stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Beat {
    pub data: Vec<u8>,
    pub keep: u64,
    pub last: bool,
}

/// `bytes` as a 512-bit stream carries them: 64 bytes a beat, tlast on the
/// last, keep covering the bytes present, the rest of the last beat
/// `fill`.
pub fn stream_beats(bytes: &[u8], fill: u8) -> Vec<Beat> {
    let chunks: Vec<&[u8]> = bytes.chunks(64).collect();
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut data = c.to_vec();
            data.resize(64, fill);
            let keep = if c.len() == 64 {
                u64::MAX
            } else {
                (1u64 << c.len()) - 1
            };
            Beat {
                data,
                keep,
                last: i + 1 == n,
            }
        })
        .collect()
}

/// The payload beats of `f` as the payload stream carries them. Bytes past
/// the payload are filled with `junk` so the tests see that the block
/// zeroes them.
pub fn payload_beats(f: &RoceFrame, junk: u8) -> Vec<Beat> {
    stream_beats(&f.payload, junk)
}

/// Puts beat `b` on the input stream `port` (its tvalid is the caller's).
pub fn drive_beat(port: &mut AxisSink<DATA_BITS, KEEP_BITS>, b: &Beat) {
    let (d, k) = beat_bits(b);
    port.tdata.next = d;
    port.tkeep.next = k;
    port.tlast.next = b.last;
}

/// The output stream `port` after settle, with the tready the test drove:
/// the beat it hands over this cycle, if any. A beat held back by tready
/// low is kept in `held`, and must not change until taken.
pub fn take_beat(
    port: &AxisSource<DATA_BITS, KEEP_BITS>,
    ready: bool,
    held: &mut Option<Beat>,
) -> Option<Beat> {
    if !port.tvalid.val() {
        return None;
    }
    let beat = Beat {
        data: bits_to_bytes(port.tdata.val()),
        keep: port.tkeep.val().to_u64(),
        last: port.tlast.val(),
    };
    if let Some(h) = held.as_ref() {
        assert_eq!(h, &beat, "a stalled beat changed");
    }
    if ready {
        *held = None;
        Some(beat)
    } else {
        *held = Some(beat);
        None
    }
}

/// Splits received beats into frames at tlast, checking the stream rules on
/// the way: full keep inside a frame, contiguous keep on the last beat, zero
/// bytes past keep. Returns the frames' bytes.
pub fn frames_of(beats: &[Beat]) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    let mut cur = Vec::new();
    for (i, b) in beats.iter().enumerate() {
        let n = b.keep.trailing_ones() as usize;
        if b.last {
            assert!(n > 0, "beat {i}: empty last beat");
            assert_eq!(
                b.keep,
                if n == 64 { u64::MAX } else { (1u64 << n) - 1 },
                "beat {i}: keep not contiguous"
            );
        } else {
            assert_eq!(b.keep, u64::MAX, "beat {i}: partial keep inside a frame");
        }
        assert!(
            b.data[n..].iter().all(|&x| x == 0),
            "beat {i}: non-zero bytes past keep"
        );
        cur.extend_from_slice(&b.data[..n]);
        if b.last {
            frames.push(std::mem::take(&mut cur));
        }
    }
    assert!(cur.is_empty(), "stream ended inside a frame");
    frames
}

pub fn beat_bits(b: &Beat) -> (Bits<512>, Bits<64>) {
    (
        rocenic_hdl::primitives::wide::bits_from_bytes(&b.data),
        bits(b.keep),
    )
}

/// Frames of every opcode on IPv4 and IPv6 with the payload sizes the tests
/// cover (`sizes` cycles through the opcodes that carry a payload).
pub fn opcode_sweep(r: &mut ChaCha8Rng, sizes: &[usize], ipv6: &[bool]) -> Vec<RoceFrame> {
    let mut frames = Vec::new();
    let mut k = 0;
    for code in all_opcodes() {
        for &v6 in ipv6 {
            let len = if carries_payload(code) {
                k += 1;
                sizes[k % sizes.len()]
            } else {
                0
            };
            frames.push(random_frame(r, code, v6, len));
        }
    }
    frames
}

/// A QP's peer as its address entry holds it, and the CNP to it: what the
/// RoCEv2 annex (A17.9.3) lays out and ConnectX sends, encoded by
/// `rocenic_wire` (BTH opcode 0x81, P_Key 0xFFFF, BECN, the peer's QPN,
/// PSN 0, 16 zero bytes, ICRC; Not-ECT, TTL 64, DF on IPv4).
#[derive(Clone, Copy, Debug)]
pub struct CnpPeer {
    pub eth_dst: u64,
    pub eth_src: u64,
    pub ipv6: bool,
    pub ip_src: u128,
    pub ip_dst: u128,
    pub dest_qp: u32,
    pub udp_src_port: u16,
    /// The QP's data frames' DSCP (a CNP carries the NIC's CNP DSCP).
    pub dscp: u8,
}

impl CnpPeer {
    pub fn random(r: &mut ChaCha8Rng, ipv6: bool) -> CnpPeer {
        let (ip_src, ip_dst) = if ipv6 {
            (r.gen(), r.gen())
        } else {
            (u128::from(r.gen::<u32>()), u128::from(r.gen::<u32>()))
        };
        CnpPeer {
            eth_dst: r.gen::<u64>() & 0xFEFF_FFFF_FFFF,
            eth_src: r.gen::<u64>() & 0xFEFF_FFFF_FFFF,
            ipv6,
            ip_src,
            ip_dst,
            dest_qp: r.gen_range(0..1 << 24),
            udp_src_port: r.gen(),
            dscp: r.gen_range(0..64),
        }
    }

    /// The QP's address entry; its P_Key, ECN codepoint and DSCP are
    /// ones a CNP must not carry.
    pub fn address(&self) -> rocenic_hdl::qp::qp_address_ram::QpAddress {
        let words = |v: u128| bits_from_words(&[v as u64, (v >> 64) as u64]);
        rocenic_hdl::qp::qp_address_ram::QpAddress {
            pd: bits(7),
            dest_qp: bits(self.dest_qp.into()),
            pkey: bits(0x8001),
            eth_dst: bits(self.eth_dst),
            eth_src: bits(self.eth_src),
            ipv6: self.ipv6,
            ip_src: words(self.ip_src),
            ip_dst: words(self.ip_dst),
            dscp: bits(self.dscp.into()),
            ecn: bits(ecn::ECT0.into()),
            udp_src_port: bits(self.udp_src_port.into()),
        }
    }

    /// The CNP to this peer with DSCP `dscp` and IPv4 identification `id`.
    pub fn cnp(&self, dscp: u8, id: u16) -> Vec<u8> {
        let mac = |m: u64| {
            let b = m.to_be_bytes();
            [b[2], b[3], b[4], b[5], b[6], b[7]]
        };
        let ip = if self.ipv6 {
            IpHeader::V6(Ipv6Header {
                src: Ipv6Addr::from(self.ip_src),
                dst: Ipv6Addr::from(self.ip_dst),
                dscp,
                ecn: ecn::NOT_ECT,
                flow_label: 0,
                hop_limit: 64,
            })
        } else {
            IpHeader::V4(Ipv4Header {
                src: Ipv4Addr::from(self.ip_src as u32),
                dst: Ipv4Addr::from(self.ip_dst as u32),
                dscp,
                ecn: ecn::NOT_ECT,
                identification: id,
                dont_fragment: true,
                ttl: 64,
            })
        };
        let mut bth = Bth::new(op::CNP, self.dest_qp, 0);
        bth.becn = true;
        let f = RoceFrame {
            eth: EthHeader {
                dst: mac(self.eth_dst),
                src: mac(self.eth_src),
            },
            ip,
            udp_src_port: self.udp_src_port,
            udp_checksum: false,
            bth,
            ext: ExtHeaders::default(),
            payload: Vec::new(),
        };
        f.encode().expect("a CNP encodes")
    }
}
