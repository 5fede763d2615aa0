//! The header record: every field of a parsed RoCEv2 frame's headers, with
//! the parser's verdict, travelling beside the payload stream so later
//! blocks never re-parse bytes.
//!
//! Field names and widths follow the TX side's `TxHeader` where both carry
//! the same field, and `rocenic_wire::RoceFrame` otherwise; multi-byte
//! fields hold the number the wire carries big-endian. IPv4 addresses sit
//! in the low 32 bits of `ip_src`/`ip_dst`. Fields of extension headers the
//! opcode does not carry are zero and their `has_*` bit is low. rust-hdl
//! packs the fields in declaration order from bit 0; [`HeaderRecord::unpack`]
//! reads a record back from the raw bits (as a Verilator port delivers it).
//!
//! Also here: the drop reason codes, one per `rocenic_wire::DecodeError`
//! reason, in the order the codec checks them, and the record handshake
//! interfaces.

use crate::primitives::wide::bits_from_words;
use rust_hdl::prelude::*;

/// Builds a record field from little-endian words.
pub trait FromWords {
    fn from_words(words: &[u64]) -> Self;
}

impl FromWords for bool {
    fn from_words(words: &[u64]) -> Self {
        words.first().is_some_and(|w| w & 1 != 0)
    }
}

impl<const N: usize> FromWords for Bits<N> {
    fn from_words(words: &[u64]) -> Self {
        bits_from_words(words)
    }
}

macro_rules! header_record {
    ($($(#[doc = $doc:literal])* $field:ident : $ty:ty),* $(,)?) => {
        /// One received frame's headers and verdict (see the module doc).
        #[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
        pub struct HeaderRecord {
            $($(#[doc = $doc])* pub $field: $ty,)*
        }

        impl HeaderRecord {
            /// Reads a record from its packed bits, little-endian words.
            pub fn unpack(words: &[u64]) -> HeaderRecord {
                let mut at = 0usize;
                let mut take = |width: usize| {
                    let mut v = [0u64; 2];
                    for i in 0..width {
                        let bit = at + i;
                        if words.get(bit / 64).is_some_and(|w| w >> (bit % 64) & 1 != 0) {
                            v[i / 64] |= 1 << (i % 64);
                        }
                    }
                    at += width;
                    v
                };
                HeaderRecord {
                    $($field: FromWords::from_words(&take(<$ty as Synth>::BITS)),)*
                }
            }

            /// Field names and widths in packing order.
            pub fn layout() -> Vec<(&'static str, usize)> {
                vec![$((stringify!($field), <$ty as Synth>::BITS)),*]
            }
        }
    };
}

header_record! {
    /// The frame is to be discarded; `reason` says why.
    drop: Bit,
    /// A [`DropReason`] code; 0 when the frame is accepted.
    reason: Bits<5>,
    /// A payload segment on the payload stream belongs to this record.
    has_payload: Bit,
    eth_dst: Bits<48>,
    eth_src: Bits<48>,
    /// Low: IPv4; high: IPv6.
    ipv6: Bit,
    ip_src: Bits<128>,
    ip_dst: Bits<128>,
    dscp: Bits<6>,
    ecn: Bits<2>,
    ipv4_identification: Bits<16>,
    ipv4_dont_fragment: Bit,
    /// IPv4 TTL or IPv6 hop limit.
    ttl: Bits<8>,
    ipv6_flow_label: Bits<20>,
    udp_src_port: Bits<16>,
    /// The UDP checksum field was not zero.
    udp_checksum: Bit,
    opcode: Bits<8>,
    solicited: Bit,
    mig_req: Bit,
    pad_count: Bits<2>,
    tver: Bits<4>,
    pkey: Bits<16>,
    fecn: Bit,
    becn: Bit,
    dest_qp: Bits<24>,
    ack_req: Bit,
    psn: Bits<24>,
    has_deth: Bit,
    has_reth: Bit,
    has_atomic_eth: Bit,
    has_aeth: Bit,
    has_atomic_ack_eth: Bit,
    has_imm: Bit,
    has_ieth: Bit,
    deth_qkey: Bits<32>,
    deth_src_qp: Bits<24>,
    reth_va: Bits<64>,
    reth_rkey: Bits<32>,
    reth_dma_len: Bits<32>,
    atomic_va: Bits<64>,
    atomic_rkey: Bits<32>,
    atomic_swap_add: Bits<64>,
    atomic_compare: Bits<64>,
    aeth_syndrome: Bits<8>,
    aeth_msn: Bits<24>,
    atomic_ack_orig: Bits<64>,
    imm: Bits<32>,
    ieth_rkey: Bits<32>,
    /// Payload bytes (pad excluded), 0..=4096 for an accepted frame.
    payload_len: Bits<13>,
}

/// Why a frame was dropped, numbered as the record's `reason` field. The
/// order is the order in which `RoceFrame::decode` checks, so the first
/// failing check wins in hardware as in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    Truncated = 1,
    Ethertype,
    IpVersion,
    Ipv4Options,
    Ipv4Checksum,
    Ipv4Fragment,
    IpLength,
    NotUdp,
    UdpPort,
    UdpLength,
    UdpChecksum,
    Tver,
    Opcode,
    HeaderOpcodeMismatch,
    UnexpectedPayload,
    PayloadTooLarge,
    Pad,
    Icrc,
}

impl DropReason {
    pub const ALL: [DropReason; 18] = [
        DropReason::Truncated,
        DropReason::Ethertype,
        DropReason::IpVersion,
        DropReason::Ipv4Options,
        DropReason::Ipv4Checksum,
        DropReason::Ipv4Fragment,
        DropReason::IpLength,
        DropReason::NotUdp,
        DropReason::UdpPort,
        DropReason::UdpLength,
        DropReason::UdpChecksum,
        DropReason::Tver,
        DropReason::Opcode,
        DropReason::HeaderOpcodeMismatch,
        DropReason::UnexpectedPayload,
        DropReason::PayloadTooLarge,
        DropReason::Pad,
        DropReason::Icrc,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<DropReason> {
        DropReason::ALL.iter().copied().find(|r| r.code() == code)
    }

    /// The same short name as `rocenic_wire::DecodeError::reason()`.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Truncated => "truncated",
            DropReason::Ethertype => "ethertype",
            DropReason::IpVersion => "ip_version",
            DropReason::Ipv4Options => "ipv4_options",
            DropReason::Ipv4Checksum => "ipv4_checksum",
            DropReason::Ipv4Fragment => "ipv4_fragment",
            DropReason::IpLength => "ip_length",
            DropReason::NotUdp => "not_udp",
            DropReason::UdpPort => "udp_port",
            DropReason::UdpLength => "udp_length",
            DropReason::UdpChecksum => "udp_checksum",
            DropReason::Tver => "tver",
            DropReason::Opcode => "opcode",
            DropReason::HeaderOpcodeMismatch => "header_opcode_mismatch",
            DropReason::UnexpectedPayload => "unexpected_payload",
            DropReason::PayloadTooLarge => "payload_too_large",
            DropReason::Pad => "pad",
            DropReason::Icrc => "icrc",
        }
    }
}

/// The producing side of the record handshake (a transfer happens on a
/// rising edge where `valid` and `ready` are both high, AXI-Stream style).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "HeaderRecordSink"]
pub struct HeaderRecordSource {
    pub record: Signal<Out, HeaderRecord>,
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
}

/// The consuming side of the record handshake.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "HeaderRecordSource"]
pub struct HeaderRecordSink {
    pub record: Signal<In, HeaderRecord>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::wide::bits_to_words;

    #[test]
    fn every_drop_reason_has_its_bar_counter() {
        for reason in DropReason::ALL {
            let name = format!("rx_drop_{}", reason.name());
            assert!(
                rocenic_abi::registers::COUNTERS
                    .iter()
                    .any(|c| c.name == name),
                "the host ABI has no counter {name}"
            );
        }
    }

    #[test]
    fn unpack_reads_back_what_rust_hdl_packs() {
        let r = HeaderRecord {
            drop: true,
            reason: bits(DropReason::Icrc.code().into()),
            ip_src: bits_from_words(&[0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210]),
            opcode: bits(0x0A),
            psn: bits(0xFF_FFFE),
            atomic_compare: bits(0xDEAD_BEEF_0BAD_F00D),
            payload_len: bits(4096),
            ..Default::default()
        };
        let packed: Bits<{ HeaderRecord::BITS }> = r.into();
        assert_eq!(HeaderRecord::unpack(&bits_to_words(packed)), r);
        let width: usize = HeaderRecord::layout().iter().map(|f| f.1).sum();
        assert_eq!(width, HeaderRecord::BITS);
        assert_eq!(r.get_my_offset_reason(), 1);
    }

    #[test]
    fn reason_codes_round_trip_in_decode_order() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(usize::from(r.code()), i + 1);
            assert_eq!(DropReason::from_code(r.code()), Some(*r));
        }
        assert_eq!(DropReason::from_code(0), None);
        assert!(DropReason::ALL.len() < 32, "fits the 5-bit field");
    }
}
