//! The requester half's port groups, each one `LogicInterface` that
//! `nic_core`, `requester_path`, `requester_events` and the completer
//! datapath pass down or up unchanged: the driver's send-WQE post and its
//! answer, the send CQE stream, the move of a QP to ERR from the responder
//! half, and the events a harness or counter watches (a QP's event done,
//! a WQE's transmit status).
//!
//! In Verilog a group's signals are `group$field` (`post$valid`); the
//! Verilator bridge names them `group_field` (`post_valid`).

use rust_hdl::prelude::*;

/// A send WQE posted by the driver (valid/ready; the fields are sampled
/// when taken). `kind` is the WQE kind code, `opcode` the CQE opcode code,
/// `npsn` the PSN after its last packet, `status` a status the WQE
/// completes with at once (a post refused by the driver layer), `op` the
/// request operation; `lkey` / `va` / `len` its one local SGE; the rest the
/// remote side and the atomic operands.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct SendPost<const A: usize> {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<A>>,
    pub kind: Signal<In, Bits<2>>,
    pub opcode: Signal<In, Bits<3>>,
    pub npsn: Signal<In, Bits<24>>,
    pub len: Signal<In, Bits<32>>,
    pub signaled: Signal<In, Bit>,
    pub status: Signal<In, Bits<4>>,
    pub lkey: Signal<In, Bits<32>>,
    pub va: Signal<In, Bits<64>>,
    pub op: Signal<In, Bits<3>>,
    pub remote_va: Signal<In, Bits<64>>,
    pub rkey: Signal<In, Bits<32>>,
    pub imm: Signal<In, Bits<32>>,
    pub compare: Signal<In, Bits<64>>,
    pub swap_add: Signal<In, Bits<64>>,
    pub solicited: Signal<In, Bit>,
}

/// The answer to one taken [`SendPost`], one cycle: `accepted` low when
/// the QP's send ring was full; `slot` the ring slot the WQE took.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct PostResult<const A: usize, const D: usize> {
    pub valid: Signal<Out, Bit>,
    pub qpn: Signal<Out, Bits<A>>,
    pub accepted: Signal<Out, Bit>,
    pub slot: Signal<Out, Bits<D>>,
}

/// The send completions (valid/ready) in posting order per QP: the WQE's
/// ring `slot`, `status` and `opcode` (the model's `WcStatus` / `WcOpcode`
/// declaration indices) and `byte_len`.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct SendCqeStream<const A: usize, const D: usize> {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<A>>,
    pub slot: Signal<Out, Bits<D>>,
    pub status: Signal<Out, Bits<4>>,
    pub opcode: Signal<Out, Bits<3>>,
    pub byte_len: Signal<Out, Bits<32>>,
}

/// A QP the other half moved to ERR (valid/ready): the requester flushes
/// its send queue.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct QpErrorEvent<const A: usize> {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<A>>,
}

/// One event of the requester's event loop done, one cycle: the QP, the
/// event kind code and the QP's state after it.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct QpEventDone<const A: usize> {
    pub valid: Signal<Out, Bit>,
    pub qpn: Signal<Out, Bits<A>>,
    pub kind: Signal<Out, Bits<3>>,
    pub state: Signal<Out, Bits<3>>,
}

/// A granted WQE's transmit status, one cycle: where the QP's send PSN
/// stands and whether the transmit path failed it.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct SentStatusEvent {
    pub valid: Signal<Out, Bit>,
    pub qpn: Signal<Out, Bits<24>>,
    pub next_psn: Signal<Out, Bits<24>>,
    pub error: Signal<Out, Bit>,
}
