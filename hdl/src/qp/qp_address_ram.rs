//! `QpAddressRam`: the per-QP table of what a transmit path needs to
//! frame a QP's packets and check its payload's key (the peer's addresses,
//! the QP's PD, P_Key, DSCP / ECN and UDP source port), in block RAM
//! beside the QP context. The model's counterpart is `Nic::qp_tx_attrs`
//! plus the NIC's own MAC, DSCP and ECN setting: the driver writes a QP's
//! entry when it moves the QP to RTR, and a transmit path reads it for
//! every packet. The responder path reads it per response descriptor, the
//! requester path (an instance of its own) per grant.
//!
//! # Ports
//!
//! - `clock`. No reset: an entry is whatever was last written (zero, or
//!   undefined in the Verilog, until then; see below).
//! - Write port: `write` (high for one cycle per entry), `write_qpn`,
//!   `write_data` ([`QpAddress`]).
//! - Read port: `read_qpn` (in) -> `read_data` (out, [`QpAddress`]): the
//!   entry of the QPN sampled at a rising edge, presented from that edge
//!   on. Latency 1, one read and one write per cycle.
//!
//! A read of the entry written at the same edge gives the old entry in
//! simulation and is a don't-care in the Verilog (`no_rw_check`, as
//! [`SyncRam`]): a client that may read an entry while the driver rewrites
//! it reads again the cycle after (the responder path does).
//!
//! # Memory
//!
//! One simple dual-port RAM of `2^A` x 449 bits: 13 RAMB36 at 1024 QPs.
//! No power-up clearing loop: a transmit path only reads the entry of a
//! QP that has been brought up, so the entry was written before.

use crate::primitives::sync_ram::SyncRam;
use crate::primitives::wide::bits_to_words;
use rust_hdl::prelude::*;

/// One QP's addressing for its outgoing frames: the entry of this table
/// and the port the transmit paths take it on
/// ([`ResponseTransmitter`](crate::responder::response_transmitter::ResponseTransmitter)'s
/// `desc_address`, [`RequesterDatapath`](crate::requester::requester_datapath::RequesterDatapath)'s
/// `grant_address`). A port of this type is one 449-bit Verilog port,
/// the fields packed in declaration order from bit 0 (`pd` in bits 31:0,
/// `udp_src_port` in bits 448:433); [`QpAddress::to_words`] gives that
/// value as port words.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct QpAddress {
    /// The QP's protection domain (a READ response's R_Key check).
    pub pd: Bits<32>,
    /// The peer's QPN (BTH destination QP).
    pub dest_qp: Bits<24>,
    pub pkey: Bits<16>,
    pub eth_dst: Bits<48>,
    pub eth_src: Bits<48>,
    pub ipv6: Bit,
    /// IPv4 addresses in the low 32 bits.
    pub ip_src: Bits<128>,
    pub ip_dst: Bits<128>,
    pub dscp: Bits<6>,
    /// The codepoint of data frames (ECT(0) when the NIC runs DCQCN).
    pub ecn: Bits<2>,
    pub udp_src_port: Bits<16>,
}

impl QpAddress {
    /// The packed record as a port value: bit `i` in bit `i % 64` of word
    /// `i / 64` (the Verilator bridge's word order).
    pub fn to_words(&self) -> Vec<u64> {
        let packed: Bits<{ QpAddress::BITS }> = (*self).into();
        bits_to_words(packed)
    }
}

/// The table (see the module doc).
#[derive(LogicBlock)]
pub struct QpAddressRam<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub write: Signal<In, Bit>,
    pub write_qpn: Signal<In, Bits<A>>,
    pub write_data: Signal<In, QpAddress>,
    pub read_qpn: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, QpAddress>,
    ram: SyncRam<QpAddress, A>,
}

impl<const A: usize> Default for QpAddressRam<A> {
    fn default() -> Self {
        QpAddressRam {
            clock: Default::default(),
            write: Default::default(),
            write_qpn: Default::default(),
            write_data: Default::default(),
            read_qpn: Default::default(),
            read_data: Default::default(),
            ram: SyncRam::uninitialised(),
        }
    }
}

impl<const A: usize> Logic for QpAddressRam<A> {
    #[hdl_gen]
    fn update(&mut self) {
        self.ram.clock.next = self.clock.val();
        self.ram.write_enable.next = self.write.val();
        self.ram.write_address.next = self.write_qpn.val();
        self.ram.write_data.next = self.write_data.val();
        self.ram.read_address.next = self.read_qpn.val();
        self.read_data.next = self.ram.read_data.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::wide::bits_from_words;

    fn wide(v: u128) -> Bits<128> {
        bits_from_words(&[v as u64, (v >> 64) as u64])
    }

    fn with(set: fn(&mut QpAddress)) -> QpAddress {
        let mut a = QpAddress::default();
        set(&mut a);
        a
    }

    /// Every field at its place in the packed word (the offsets the
    /// exported Verilog slices the port at), nothing else set.
    #[test]
    fn fields_pack_in_declaration_order_from_bit_0() {
        let cases: [(QpAddress, usize, u128); 11] = [
            (with(|a| a.pd = bits(0xFFFF_FFFF)), 0, 0xFFFF_FFFF),
            (with(|a| a.dest_qp = bits(0xAB_CDEF)), 32, 0xAB_CDEF),
            (with(|a| a.pkey = bits(0x8001)), 56, 0x8001),
            (
                with(|a| a.eth_dst = bits(0x8000_0000_0001)),
                72,
                0x8000_0000_0001,
            ),
            (
                with(|a| a.eth_src = bits(0xC000_0000_0003)),
                120,
                0xC000_0000_0003,
            ),
            (with(|a| a.ipv6 = true), 168, 1),
            (with(|a| a.ip_src = wide(u128::MAX)), 169, u128::MAX),
            (with(|a| a.ip_dst = wide(1 << 127 | 5)), 297, 1 << 127 | 5),
            (with(|a| a.dscp = bits(0x21)), 425, 0x21),
            (with(|a| a.ecn = bits(2)), 431, 2),
            (with(|a| a.udp_src_port = bits(0xC0DE)), 433, 0xC0DE),
        ];
        for (address, offset, value) in cases {
            let mut want = vec![0u64; 8];
            for i in (0..128).filter(|i| value >> i & 1 != 0) {
                want[(offset + i) / 64] |= 1 << ((offset + i) % 64);
            }
            assert_eq!(address.to_words(), want, "{address:?} at bit {offset}");
        }
        assert_eq!(QpAddress::BITS, 449);
    }
}
