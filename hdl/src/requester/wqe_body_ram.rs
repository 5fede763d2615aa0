//! `WqeBodyRam`: the part of each outstanding send WQE that the
//! completer's rings do not keep and `requester_datapath`'s grant needs:
//! the remote VA, R_Key, immediate, atomic compare and swap/add operands,
//! the solicited flag and the request kind the segmenter takes
//! ([`crate::codes::send_op_kind`]: SEND with immediate or invalidate and
//! WRITE with immediate, which the completer's 2-bit kind cannot tell
//! apart). One [`WqeBody`] per `{qpn, slot}`, the send-queue rings'
//! addressing (`send_queue_tracker`, `completer_datapath`'s `post_slot`
//! and `grant_slot`): written when a post is accepted, read when the WQE
//! is granted.
//!
//! # Ports
//!
//! - `clock`;
//! - `write_enable`, `write_qpn`, `write_slot`, `write_data`: the body of
//!   the WQE posted into `slot` of `qpn`, stored at the rising edge;
//! - `read_qpn`, `read_slot` → `read_data`: the body at the address
//!   sampled by a rising edge, presented from that edge on.
//!
//! # Latency and throughput
//!
//! One write and one read per cycle; read latency 1. A read of the word
//! written at the same edge is don't-care (the client never reads a slot
//! before its post has been written).
//!
//! # Memory
//!
//! A [`QpSlotRam`] of `2^(A+D)` x [`BODY_BITS`] (260) bits, synchronous
//! read, no power-up value (only posted slots are read): 1024 QPs x 16
//! slots is 16384 x 260 bits (4.2 Mbit, at least 116 RAMB36).

use crate::qp::qp_slot_ram::QpSlotRam;
use rust_hdl::prelude::*;

/// One WQE's remote side and operands.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct WqeBody {
    /// The WQE's [`crate::codes::send_op_kind`] code.
    pub op: Bits<3>,
    pub remote_va: Bits<64>,
    pub rkey: Bits<32>,
    pub imm: Bits<32>,
    pub compare: Bits<64>,
    pub swap_add: Bits<64>,
    pub solicited: Bit,
}

/// Bits of a [`WqeBody`].
pub const BODY_BITS: usize = 260;
const _: () = assert!(<WqeBody as Synth>::BITS == BODY_BITS);

/// The RAM (see the module doc).
#[derive(LogicBlock, Default)]
pub struct WqeBodyRam<const A: usize, const D: usize> {
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_qpn: Signal<In, Bits<A>>,
    pub write_slot: Signal<In, Bits<D>>,
    pub write_data: Signal<In, WqeBody>,
    pub read_qpn: Signal<In, Bits<A>>,
    pub read_slot: Signal<In, Bits<D>>,
    pub read_data: Signal<Out, WqeBody>,
    ram: QpSlotRam<WqeBody, A, D>,
}

impl<const A: usize, const D: usize> Logic for WqeBodyRam<A, D> {
    #[hdl_gen]
    fn update(&mut self) {
        self.ram.clock.next = self.clock.val();
        self.ram.write_enable.next = self.write_enable.val();
        self.ram.write_qpn.next = self.write_qpn.val();
        self.ram.write_slot.next = self.write_slot.val();
        self.ram.write_data.next = self.write_data.val();
        self.ram.read_qpn.next = self.read_qpn.val();
        self.ram.read_slot.next = self.read_slot.val();
        self.read_data.next = self.ram.read_data.val();
    }
}
