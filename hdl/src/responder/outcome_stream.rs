//! `OutcomeStream`: the responder's per-frame outcome port (valid/ready),
//! one per received frame in arrival order once the frame is decided,
//! passed up unchanged from `responder_datapath` through `responder_path`.
//!
//! `verdict` is the checker's `VERDICT_*` or the datapath's own;
//! `dup_class` the duplicate class; `response_*` the ACK/NAK to queue;
//! `take_wqe`, `last` and `place_*` what the later stages do with the
//! frame; `mr_status` why the MR refused an executed WRITE; `ce` that the
//! frame is a CE-marked request for a QP in the table. In Verilog the
//! signals are `out$field`; the Verilator bridge names them `out_field`.

use rust_hdl::prelude::*;

#[derive(Clone, Debug, Default, LogicInterface)]
pub struct OutcomeStream {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<24>>,
    pub psn: Signal<Out, Bits<24>>,
    pub opcode: Signal<Out, Bits<8>>,
    pub verdict: Signal<Out, Bits<4>>,
    pub dup_class: Signal<Out, Bits<2>>,
    pub response_valid: Signal<Out, Bit>,
    pub response_syndrome: Signal<Out, Bits<8>>,
    pub response_psn: Signal<Out, Bits<24>>,
    pub response_msn: Signal<Out, Bits<24>>,
    pub take_wqe: Signal<Out, Bit>,
    pub last: Signal<Out, Bit>,
    pub mr_status: Signal<Out, Bits<3>>,
    pub place_va: Signal<Out, Bits<64>>,
    pub place_rkey: Signal<Out, Bits<32>>,
    pub place_len: Signal<Out, Bits<32>>,
    pub ce: Signal<Out, Bit>,
}
