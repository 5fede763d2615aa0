//! The TX header record: everything the transmit path needs to build one
//! RoCEv2 frame except its payload bytes, and the valid/ready handshake that
//! carries one record per frame into the TX builder.
//!
//! Multi-byte fields hold the number the wire carries big-endian (the first
//! wire byte is the most significant), so `eth_dst` = 0x0211_2233_4455 is
//! sent as 02 11 22 33 44 55. The extension headers that go on the wire are
//! chosen by `opcode` (IBA table 38, as `rocenic_wire::opcode::info`); the
//! fields of headers the opcode does not carry are ignored. Lengths, pad
//! count, checksums and the ICRC are computed by the builder, not carried.

use rust_hdl::prelude::*;

/// Largest payload one packet carries (path MTU 4096), as in the model.
pub const MAX_PAYLOAD: u64 = 4096;

/// One frame's header fields. 1 085 bits wide; rust-hdl packs the fields
/// in declaration order from bit 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct TxHeader {
    pub eth_dst: Bits<48>,
    pub eth_src: Bits<48>,
    /// Low: IPv4 (EtherType 0x0800); high: IPv6 (0x86DD).
    pub ipv6: Bit,
    /// IPv4 addresses sit in the low 32 bits.
    pub ip_src: Bits<128>,
    pub ip_dst: Bits<128>,
    pub dscp: Bits<6>,
    pub ecn: Bits<2>,
    pub ipv4_identification: Bits<16>,
    pub ipv4_dont_fragment: Bit,
    /// IPv4 TTL or IPv6 hop limit.
    pub ttl: Bits<8>,
    pub ipv6_flow_label: Bits<20>,
    pub udp_src_port: Bits<16>,
    /// Ask for a UDP checksum on IPv4 (IPv6 always carries one).
    pub udp_checksum: Bit,
    pub opcode: Bits<8>,
    pub solicited: Bit,
    pub mig_req: Bit,
    pub tver: Bits<4>,
    pub pkey: Bits<16>,
    pub fecn: Bit,
    pub becn: Bit,
    pub dest_qp: Bits<24>,
    pub ack_req: Bit,
    pub psn: Bits<24>,
    pub deth_qkey: Bits<32>,
    pub deth_src_qp: Bits<24>,
    pub reth_va: Bits<64>,
    pub reth_rkey: Bits<32>,
    pub reth_dma_len: Bits<32>,
    pub atomic_va: Bits<64>,
    pub atomic_rkey: Bits<32>,
    pub atomic_swap_add: Bits<64>,
    pub atomic_compare: Bits<64>,
    pub aeth_syndrome: Bits<8>,
    pub aeth_msn: Bits<24>,
    pub atomic_ack_orig: Bits<64>,
    pub imm: Bits<32>,
    pub ieth_rkey: Bits<32>,
    /// Payload bytes that follow on the payload stream, 0..=4096. The
    /// payload stream carries exactly ceil(len / 64) beats for the frame.
    pub payload_len: Bits<13>,
}

/// The producing side of the record handshake (a transfer happens on a
/// rising edge where `valid` and `ready` are both high, AXI-Stream style).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "TxHeaderSink"]
pub struct TxHeaderSource {
    pub record: Signal<Out, TxHeader>,
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
}

/// The consuming side of the record handshake.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "TxHeaderSource"]
pub struct TxHeaderSink {
    pub record: Signal<In, TxHeader>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_width_and_field_offsets() {
        assert_eq!(TxHeader::BITS, 1085);
        let h = TxHeader::default();
        assert_eq!(h.get_my_offset_eth_dst(), 0);
        assert_eq!(h.get_my_offset_eth_src(), 48);
        assert_eq!(h.get_my_offset_payload_len() + 13, TxHeader::BITS);
    }

    #[test]
    fn fields_pack_where_the_offsets_say() {
        let h = TxHeader {
            opcode: bits(0x0A),
            payload_len: bits(4096),
            ..Default::default()
        };
        let packed: Bits<{ TxHeader::BITS }> = h.into();
        assert_eq!(
            packed.get_bits::<8>(h.get_my_offset_opcode()),
            bits::<8>(0x0A)
        );
        assert_eq!(
            packed.get_bits::<13>(h.get_my_offset_payload_len()),
            bits::<13>(4096)
        );
    }
}
