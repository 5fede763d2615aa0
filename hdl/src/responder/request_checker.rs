//! `RequestChecker`: the RC responder's decision on one request packet
//! from its header and its QP's state alone — the RTL of
//! `rocenic_model::responder::check_request`, which is its oracle (the
//! model's `on_request` calls the same function before doing the memory
//! work).
//!
//! Per request it decides: the QP state (not RTR/RTS: drop); the PSN class
//! (in order, duplicate, or ahead: one PSN-sequence-error NAK, then silence
//! until the expected PSN arrives, `nak_sent`); the opcode sequence and the
//! packet length rules, the RETH length fit and a WRITE continuation's
//! offset fit (NAK invalid request, QP to ERR); the QP's remote rights (NAK
//! remote access error, QP to ERR); RNR (SEND FIRST/ONLY or WRITE with
//! immediate without a receive WQE: RNR NAK with the QP's `min_rnr_timer`,
//! `nak_sent`); the ACK to schedule, the MSN increment when a message
//! completes, the next expected PSN (a READ takes one per response
//! packet); the new context record and message in progress; and where an
//! executed SEND/WRITE lands.
//!
//! # Contract with the stages around it
//!
//! - The context record comes from [`crate::qp::qp_context`] (lookup at `t`,
//!   record at `t + 2`) and `out_context` is its update at `t + 3`: this
//!   block's latency of one cycle is exactly the RMW slot, so back-to-back
//!   requests of one QP each see the previous one's decision. The message
//!   in progress (`req_message` / `out_message`, [`MessageState`]) lives in
//!   its own per-QP RAM read and written the same way.
//! - Later stages, not here: MR translation and its faults
//!   ([`crate::dma::mr_translate`]: R_Key, PD, bounds, MR rights), receive WQE
//!   SGL placement and its faults, SEND-with-invalidate, READ
//!   re-execution of a duplicate and the atomic replay cache. When one of
//!   those fails an executed request, that stage NAKs it and writes the QP
//!   to ERR instead of keeping this block's new state (as the model does).
//!   For duplicates this block says which class (`out_dup_class`) and
//!   passes the request's RETH / AtomicETH through.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops the request in flight.
//! - Request, one per cycle, `req_valid` (no backpressure: the QP context
//!   RMW it sits in cannot stall either; a consumer that may stall needs a
//!   FIFO on `out_*`): the header record fields `req_opcode`, `req_psn`,
//!   `req_ack_req`, `req_payload_len` (pad excluded), `req_has_reth`,
//!   `req_reth_va` / `_rkey` / `_dma_len`, `req_has_atomic_eth`,
//!   `req_atomic_va` / `_rkey` / `_swap_add` / `_compare`; the QP's
//!   `req_context` ([`ContextRecordBits`], the 288-bit record), its
//!   `req_message`; `req_rq_available` (its receive queue holds a WQE);
//!   `req_tag`, carried through.
//! - Outcome, registered, in the next cycle: `out_valid`, `out_tag`,
//!   `out_verdict` ([`crate::codes::request_verdict`]), `out_dup_class`
//!   ([`crate::codes::duplicate_class`]), the ACK/NAK to
//!   queue (`out_response_valid`, `_syndrome`, `_psn`, `_msn`),
//!   `out_context` (the record with `state`, `rq_epsn`, `rq_msn`,
//!   `nak_sent` and `in_progress` updated, every other field as read; the
//!   update to write back whenever `out_valid`), `out_message` (likewise); the placement, meaningful for the
//!   verdicts named: `out_take_wqe` and `out_last` (SEND, WRITE),
//!   `out_recv_offset` (SEND: where in the receive buffer),
//!   `out_place_va` / `_rkey` / `_len` (WRITE: target of this packet's
//!   payload; READ and duplicate READ: the RETH; ATOMIC and duplicate
//!   atomic: the AtomicETH's VA and R_Key, length 8), `out_whole_len`
//!   (WRITE FIRST: the RETH length, whose whole range the MR stage checks
//!   before the first byte lands; 0 otherwise), `out_read_npsn` (READ:
//!   response packets); and `out_psn`, `out_opcode`, `out_swap_add`,
//!   `out_compare` passed through.
//!
//! # Latency and throughput
//!
//! One cycle (inputs sampled at the edge closing cycle `t`, outcome
//! presented in cycle `t + 1`), one request per cycle indefinitely. All the
//! checks are one level of logic before that register: 24-bit PSN
//! distance, 32/33-bit length and offset compares, the 64-bit target
//! address add, and the READ's PSN count (a shift by the MTU).
//!
//! Widths: PSN and MSN 24 bits, lengths and offsets 32, VAs 64. A SEND's
//! receive offset is 32 bits (the model's is 64): a SEND past 4 GiB, twice
//! IBA's largest message, would wrap here. `in_progress` code 3 (unused)
//! makes every in-sequence request an invalid request. `path_mtu` must be a
//! valid code (1..5), as the context RAM's writer guarantees.
//!
//! No memory: logic and the outcome register (context and message words,
//! placement, pass-through).

use crate::qp::qp_context_record::ContextRecordBits;
use rust_hdl::prelude::*;

/// The responder's message in progress, one word of its per-QP RAM (the
/// context's `in_progress` says which kind). A WRITE: its RETH's `va`,
/// `rkey`, `len` and the bytes already written, `offset`. A SEND: the
/// bytes already received, `offset`; the rest zero. None: all zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct MessageState {
    pub va: Bits<64>,
    pub rkey: Bits<32>,
    pub len: Bits<32>,
    pub offset: Bits<32>,
}

/// The registered outcome, apart from the context and message words.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct CheckerOutcome {
    pub valid: Bit,
    pub tag: Bits<16>,
    pub verdict: Bits<4>,
    pub dup_class: Bits<2>,
    pub response_valid: Bit,
    pub response_syndrome: Bits<8>,
    pub response_psn: Bits<24>,
    pub response_msn: Bits<24>,
    pub take_wqe: Bit,
    pub last: Bit,
    pub recv_offset: Bits<32>,
    pub place_va: Bits<64>,
    pub place_rkey: Bits<32>,
    pub place_len: Bits<32>,
    pub whole_len: Bits<32>,
    pub read_npsn: Bits<24>,
    pub psn: Bits<24>,
    pub opcode: Bits<8>,
    pub swap_add: Bits<64>,
    pub compare: Bits<64>,
}

#[derive(LogicBlock, Default)]
pub struct RequestChecker {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub req_valid: Signal<In, Bit>,
    pub req_tag: Signal<In, Bits<16>>,
    pub req_opcode: Signal<In, Bits<8>>,
    pub req_psn: Signal<In, Bits<24>>,
    pub req_ack_req: Signal<In, Bit>,
    pub req_payload_len: Signal<In, Bits<13>>,
    pub req_has_reth: Signal<In, Bit>,
    pub req_reth_va: Signal<In, Bits<64>>,
    pub req_reth_rkey: Signal<In, Bits<32>>,
    pub req_reth_dma_len: Signal<In, Bits<32>>,
    pub req_has_atomic_eth: Signal<In, Bit>,
    pub req_atomic_va: Signal<In, Bits<64>>,
    pub req_atomic_rkey: Signal<In, Bits<32>>,
    pub req_atomic_swap_add: Signal<In, Bits<64>>,
    pub req_atomic_compare: Signal<In, Bits<64>>,
    pub req_context: Signal<In, ContextRecordBits>,
    pub req_message: Signal<In, MessageState>,
    pub req_rq_available: Signal<In, Bit>,

    pub out_valid: Signal<Out, Bit>,
    pub out_tag: Signal<Out, Bits<16>>,
    pub out_verdict: Signal<Out, Bits<4>>,
    pub out_dup_class: Signal<Out, Bits<2>>,
    pub out_response_valid: Signal<Out, Bit>,
    pub out_response_syndrome: Signal<Out, Bits<8>>,
    pub out_response_psn: Signal<Out, Bits<24>>,
    pub out_response_msn: Signal<Out, Bits<24>>,
    pub out_context: Signal<Out, ContextRecordBits>,
    pub out_message: Signal<Out, MessageState>,
    pub out_take_wqe: Signal<Out, Bit>,
    pub out_last: Signal<Out, Bit>,
    pub out_recv_offset: Signal<Out, Bits<32>>,
    pub out_place_va: Signal<Out, Bits<64>>,
    pub out_place_rkey: Signal<Out, Bits<32>>,
    pub out_place_len: Signal<Out, Bits<32>>,
    pub out_whole_len: Signal<Out, Bits<32>>,
    pub out_read_npsn: Signal<Out, Bits<24>>,
    pub out_psn: Signal<Out, Bits<24>>,
    pub out_opcode: Signal<Out, Bits<8>>,
    pub out_swap_add: Signal<Out, Bits<64>>,
    pub out_compare: Signal<Out, Bits<64>>,

    outcome_q: DFF<CheckerOutcome>,
    context_q: DFF<ContextRecordBits>,
    message_q: DFF<MessageState>,

    ctx: Signal<Local, ContextRecordBits>,
    msg: Signal<Local, MessageState>,
    live: Signal<Local, Bit>,
    psn_delta: Signal<Local, Bits<24>>,
    ahead: Signal<Local, Bit>,
    behind: Signal<Local, Bit>,
    is_send: Signal<Local, Bit>,
    is_write: Signal<Local, Bit>,
    is_read: Signal<Local, Bit>,
    is_atomic: Signal<Local, Bit>,
    first: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    with_imm: Signal<Local, Bit>,
    mtu: Signal<Local, Bits<32>>,
    mtu_shift: Signal<Local, Bits<4>>,
    plen: Signal<Local, Bits<32>>,
    len_ok: Signal<Local, Bit>,
    seq_ok: Signal<Local, Bit>,
    access: Signal<Local, Bits<4>>,
    may_write: Signal<Local, Bit>,
    may_read: Signal<Local, Bit>,
    may_atomic: Signal<Local, Bit>,
    beyond_max_message: Signal<Local, Bit>,
    first_fits: Signal<Local, Bit>,
    cont_end: Signal<Local, Bits<33>>,
    cont_fits: Signal<Local, Bit>,
    write_va: Signal<Local, Bits<64>>,
    write_rkey: Signal<Local, Bits<32>>,
    write_total: Signal<Local, Bits<32>>,
    write_offset: Signal<Local, Bits<32>>,
    npsn: Signal<Local, Bits<24>>,
    recv_offset: Signal<Local, Bits<32>>,
    /// The verdict on an in-sequence request.
    in_order: Signal<Local, Bits<4>>,
    next_psn: Signal<Local, Bits<24>>,
    next_msn: Signal<Local, Bits<24>>,
}

impl Logic for RequestChecker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, outcome_q, context_q, message_q);
        self.ctx.next = self.req_context.val();
        self.msg.next = self.req_message.val();

        // ---- the opcode: kind, position in its message
        self.is_send.next = (self.req_opcode.val() <= 0x05)
            | (self.req_opcode.val() == 0x16)
            | (self.req_opcode.val() == 0x17);
        self.is_write.next = (self.req_opcode.val() >= 0x06) & (self.req_opcode.val() <= 0x0B);
        self.is_read.next = self.req_opcode.val() == 0x0C;
        self.is_atomic.next = (self.req_opcode.val() == 0x13) | (self.req_opcode.val() == 0x14);
        self.first.next = true;
        self.last.next = true;
        if (self.req_opcode.val() == 0x00) | (self.req_opcode.val() == 0x06) {
            self.last.next = false;
        }
        if (self.req_opcode.val() == 0x01) | (self.req_opcode.val() == 0x07) {
            self.first.next = false;
            self.last.next = false;
        }
        if (self.req_opcode.val() == 0x02)
            | (self.req_opcode.val() == 0x03)
            | (self.req_opcode.val() == 0x16)
            | (self.req_opcode.val() == 0x08)
            | (self.req_opcode.val() == 0x09)
        {
            self.first.next = false;
        }
        self.with_imm.next = (self.req_opcode.val() == 0x09) | (self.req_opcode.val() == 0x0B);

        // ---- the QP: MTU (IBA code 1..5 = 256..4096 bytes) and rights
        self.mtu_shift.next = bit_cast::<4, 3>(self.ctx.val().path_mtu) + 7;
        self.mtu.next = bits::<32>(1) << self.mtu_shift.val();
        // (Through a signal of its own: Verilog-2005 cannot index a slice.)
        self.access.next = self.ctx.val().access;
        self.may_write.next = self.access.val().get_bit(1);
        self.may_read.next = self.access.val().get_bit(2);
        self.may_atomic.next = self.access.val().get_bit(3);
        self.live.next = (self.ctx.val().state == 2) | (self.ctx.val().state == 3);

        // ---- PSN class, modulo 2^24: behind when the distance's sign bit
        // is set (-2^23 included, as `psn::diff` has it)
        self.psn_delta.next = self.req_psn.val() - self.ctx.val().rq_epsn;
        self.behind.next = self.psn_delta.val().get_bit(23);
        self.ahead.next = (self.psn_delta.val() != 0) & !self.psn_delta.val().get_bit(23);

        // ---- packet length and opcode sequence (IBA C9-88..C9-92): FIRST
        // and MIDDLE exactly one MTU, LAST 1..=MTU, ONLY 0..=MTU
        self.plen.next = bit_cast::<32, 13>(self.req_payload_len.val());
        if !self.last.val() {
            self.len_ok.next = self.plen.val() == self.mtu.val();
        } else if !self.first.val() {
            self.len_ok.next = (self.plen.val() != 0) & (self.plen.val() <= self.mtu.val());
        } else {
            self.len_ok.next = self.plen.val() <= self.mtu.val();
        }
        self.seq_ok.next = false;
        if self.ctx.val().in_progress == 0 {
            self.seq_ok.next = self.first.val();
        } else if self.ctx.val().in_progress == 1 {
            self.seq_ok.next = !self.first.val() & self.is_send.val();
        } else if self.ctx.val().in_progress == 2 {
            self.seq_ok.next = !self.first.val() & self.is_write.val();
        }

        // Longer than IBA's largest message, 2^31 bytes.
        self.beyond_max_message.next = self.req_reth_dma_len.val().get_bit(31)
            & (self.req_reth_dma_len.val().get_bits::<31>(0) != 0);

        // ---- WRITE: the RETH of a FIRST/ONLY must fit (ONLY: exactly the
        // payload; FIRST: more than one MTU, at most 2^31), a continuation
        // must stay inside the message (LAST: end exactly at its length)
        if self.last.val() {
            self.first_fits.next = self.req_reth_dma_len.val() == self.plen.val();
        } else {
            self.first_fits.next =
                (self.req_reth_dma_len.val() > self.mtu.val()) & !self.beyond_max_message.val();
        }
        self.cont_end.next =
            bit_cast::<33, 32>(self.msg.val().offset) + bit_cast::<33, 32>(self.plen.val());
        if self.last.val() {
            self.cont_fits.next = self.cont_end.val() == bit_cast::<33, 32>(self.msg.val().len);
        } else {
            self.cont_fits.next = self.cont_end.val() < bit_cast::<33, 32>(self.msg.val().len);
        }
        if self.first.val() {
            self.write_va.next = self.req_reth_va.val();
            self.write_rkey.next = self.req_reth_rkey.val();
            self.write_total.next = self.req_reth_dma_len.val();
            self.write_offset.next = 0.into();
        } else {
            self.write_va.next = self.msg.val().va;
            self.write_rkey.next = self.msg.val().rkey;
            self.write_total.next = self.msg.val().len;
            self.write_offset.next = self.msg.val().offset;
        }

        // ---- READ: response packets, max(ceil(len / MTU), 1)
        self.npsn.next = bit_cast::<24, 32>(self.req_reth_dma_len.val() >> self.mtu_shift.val());
        if (self.req_reth_dma_len.val() & (self.mtu.val() - 1)) != 0 {
            self.npsn.next =
                bit_cast::<24, 32>(self.req_reth_dma_len.val() >> self.mtu_shift.val()) + 1;
        }
        if self.req_reth_dma_len.val() == 0 {
            self.npsn.next = 1.into();
        }

        // ---- the verdict on an in-sequence request, in the model's order
        // (`codes::request_verdict`)
        if !self.seq_ok.val() | ((self.is_send.val() | self.is_write.val()) & !self.len_ok.val()) {
            self.in_order.next = bits::<4>(4);
        } else if self.is_send.val() {
            self.in_order.next = bits::<4>(6);
            if self.first.val() & !self.req_rq_available.val() {
                self.in_order.next = bits::<4>(3);
            }
        } else if self.is_write.val() {
            if self.first.val() & (!self.req_has_reth.val() | !self.first_fits.val()) {
                self.in_order.next = bits::<4>(4);
            } else if self.first.val()
                & !self.last.val()
                & (self.req_reth_dma_len.val() != 0)
                & !self.may_write.val()
            {
                self.in_order.next = bits::<4>(5);
            } else if !self.first.val() & !self.cont_fits.val() {
                self.in_order.next = bits::<4>(4);
            } else if self.with_imm.val() & !self.req_rq_available.val() {
                self.in_order.next = bits::<4>(3);
            } else if (self.plen.val() != 0) & !self.may_write.val() {
                self.in_order.next = bits::<4>(5);
            } else {
                self.in_order.next = bits::<4>(7);
            }
        } else if self.is_read.val() {
            if !self.req_has_reth.val()
                | (self.ctx.val().max_dest_rd_atomic == 0)
                | self.beyond_max_message.val()
            {
                self.in_order.next = bits::<4>(4);
            } else if (self.req_reth_dma_len.val() != 0) & !self.may_read.val() {
                self.in_order.next = bits::<4>(5);
            } else {
                self.in_order.next = bits::<4>(8);
            }
        } else if self.is_atomic.val() {
            if !self.req_has_atomic_eth.val()
                | (self.ctx.val().max_dest_rd_atomic == 0)
                | (self.req_atomic_va.val().get_bits::<3>(0) != 0)
            {
                self.in_order.next = bits::<4>(4);
            } else if !self.may_atomic.val() {
                self.in_order.next = bits::<4>(5);
            } else {
                self.in_order.next = bits::<4>(9);
            }
        } else {
            self.in_order.next = bits::<4>(4);
        }
        self.next_psn.next = self.req_psn.val() + 1;
        self.next_msn.next = self.ctx.val().rq_msn + 1;

        // ---- the outcome: by default nothing changes and nothing is said
        self.context_q.d.next = self.ctx.val();
        self.message_q.d.next = self.msg.val();
        self.outcome_q.d.next.valid = self.req_valid.val();
        self.outcome_q.d.next.tag = self.req_tag.val();
        self.outcome_q.d.next.verdict = bits::<4>(0);
        self.outcome_q.d.next.dup_class = bits::<2>(3);
        self.outcome_q.d.next.response_valid = false;
        self.outcome_q.d.next.response_syndrome = bits::<8>(0x1F);
        self.outcome_q.d.next.response_psn = self.req_psn.val();
        self.outcome_q.d.next.response_msn = self.ctx.val().rq_msn;
        self.outcome_q.d.next.take_wqe = false;
        self.outcome_q.d.next.last = self.last.val();
        self.recv_offset.next = 0.into();
        if !self.first.val() {
            self.recv_offset.next = self.msg.val().offset;
        }
        self.outcome_q.d.next.recv_offset = self.recv_offset.val();
        self.outcome_q.d.next.place_va =
            self.write_va.val() + bit_cast::<64, 32>(self.write_offset.val());
        self.outcome_q.d.next.place_rkey = self.write_rkey.val();
        self.outcome_q.d.next.place_len = self.plen.val();
        if self.is_read.val() {
            self.outcome_q.d.next.place_va = self.req_reth_va.val();
            self.outcome_q.d.next.place_rkey = self.req_reth_rkey.val();
            self.outcome_q.d.next.place_len = self.req_reth_dma_len.val();
        }
        if self.is_atomic.val() {
            self.outcome_q.d.next.place_va = self.req_atomic_va.val();
            self.outcome_q.d.next.place_rkey = self.req_atomic_rkey.val();
            self.outcome_q.d.next.place_len = bits::<32>(8);
        }
        self.outcome_q.d.next.whole_len = 0.into();
        if self.first.val() & !self.last.val() {
            self.outcome_q.d.next.whole_len = self.req_reth_dma_len.val();
        }
        self.outcome_q.d.next.read_npsn = self.npsn.val();
        self.outcome_q.d.next.psn = self.req_psn.val();
        self.outcome_q.d.next.opcode = self.req_opcode.val();
        self.outcome_q.d.next.swap_add = self.req_atomic_swap_add.val();
        self.outcome_q.d.next.compare = self.req_atomic_compare.val();

        if !self.live.val() {
            // request_verdict::QP_STATE: the defaults.
        } else if self.ahead.val() {
            self.outcome_q.d.next.verdict = bits::<4>(1);
            if !self.ctx.val().nak_sent {
                self.context_q.d.next.nak_sent = true;
                self.outcome_q.d.next.response_valid = true;
                self.outcome_q.d.next.response_syndrome = bits::<8>(0x60);
                self.outcome_q.d.next.response_psn = self.ctx.val().rq_epsn;
            }
        } else if self.behind.val() {
            self.outcome_q.d.next.verdict = bits::<4>(2);
            if self.is_send.val() | self.is_write.val() {
                // C9-105: acknowledged again with the latest PSN executed.
                self.outcome_q.d.next.dup_class = bits::<2>(0);
                self.outcome_q.d.next.response_valid = true;
                self.outcome_q.d.next.response_psn = self.ctx.val().rq_epsn - 1;
            } else if self.is_read.val() {
                self.outcome_q.d.next.dup_class = bits::<2>(1);
            } else if self.is_atomic.val() {
                self.outcome_q.d.next.dup_class = bits::<2>(2);
            }
        } else {
            self.outcome_q.d.next.verdict = self.in_order.val();
            self.context_q.d.next.nak_sent = false;
            if self.in_order.val() == 3 {
                // RNR: silent, as after a sequence NAK, until the retry.
                self.context_q.d.next.nak_sent = true;
                self.outcome_q.d.next.response_valid = true;
                self.outcome_q.d.next.response_syndrome =
                    bits::<8>(0x20) | bit_cast::<8, 5>(self.ctx.val().min_rnr_timer);
            } else if self.in_order.val() == 4 {
                self.context_q.d.next.state = bits::<3>(4);
                self.outcome_q.d.next.response_valid = true;
                self.outcome_q.d.next.response_syndrome = bits::<8>(0x61);
            } else if self.in_order.val() == 5 {
                self.context_q.d.next.state = bits::<3>(4);
                self.outcome_q.d.next.response_valid = true;
                self.outcome_q.d.next.response_syndrome = bits::<8>(0x62);
            } else {
                // Executed: the expected PSN moves on (a READ by its
                // response packets); a completed message counts in the MSN
                // and is acknowledged with it when asked.
                self.context_q.d.next.rq_epsn = self.next_psn.val();
                if self.last.val() {
                    self.context_q.d.next.rq_msn = self.next_msn.val();
                    self.outcome_q.d.next.response_msn = self.next_msn.val();
                }
                self.outcome_q.d.next.response_valid = self.req_ack_req.val();
                if self.in_order.val() == 6 {
                    self.outcome_q.d.next.take_wqe = self.first.val();
                    self.context_q.d.next.in_progress = bits::<2>(0);
                    self.message_q.d.next.va = 0.into();
                    self.message_q.d.next.rkey = 0.into();
                    self.message_q.d.next.len = 0.into();
                    self.message_q.d.next.offset = 0.into();
                    if !self.last.val() {
                        self.context_q.d.next.in_progress = bits::<2>(1);
                        self.message_q.d.next.offset = self.recv_offset.val() + self.plen.val();
                    }
                } else if self.in_order.val() == 7 {
                    self.outcome_q.d.next.take_wqe = self.with_imm.val();
                    self.context_q.d.next.in_progress = bits::<2>(0);
                    self.message_q.d.next.va = 0.into();
                    self.message_q.d.next.rkey = 0.into();
                    self.message_q.d.next.len = 0.into();
                    self.message_q.d.next.offset = 0.into();
                    if !self.last.val() {
                        self.context_q.d.next.in_progress = bits::<2>(2);
                        self.message_q.d.next.va = self.write_va.val();
                        self.message_q.d.next.rkey = self.write_rkey.val();
                        self.message_q.d.next.len = self.write_total.val();
                        self.message_q.d.next.offset = self.write_offset.val() + self.plen.val();
                    }
                } else {
                    // READ and atomics are answered by their response.
                    self.outcome_q.d.next.response_valid = false;
                    if self.in_order.val() == 8 {
                        self.context_q.d.next.rq_epsn = self.req_psn.val() + self.npsn.val();
                    }
                }
            }
        }
        if self.reset.val() {
            self.outcome_q.d.next.valid = false;
        }

        self.out_valid.next = self.outcome_q.q.val().valid;
        self.out_tag.next = self.outcome_q.q.val().tag;
        self.out_verdict.next = self.outcome_q.q.val().verdict;
        self.out_dup_class.next = self.outcome_q.q.val().dup_class;
        self.out_response_valid.next = self.outcome_q.q.val().response_valid;
        self.out_response_syndrome.next = self.outcome_q.q.val().response_syndrome;
        self.out_response_psn.next = self.outcome_q.q.val().response_psn;
        self.out_response_msn.next = self.outcome_q.q.val().response_msn;
        self.out_context.next = self.context_q.q.val();
        self.out_message.next = self.message_q.q.val();
        self.out_take_wqe.next = self.outcome_q.q.val().take_wqe;
        self.out_last.next = self.outcome_q.q.val().last;
        self.out_recv_offset.next = self.outcome_q.q.val().recv_offset;
        self.out_place_va.next = self.outcome_q.q.val().place_va;
        self.out_place_rkey.next = self.outcome_q.q.val().place_rkey;
        self.out_place_len.next = self.outcome_q.q.val().place_len;
        self.out_whole_len.next = self.outcome_q.q.val().whole_len;
        self.out_read_npsn.next = self.outcome_q.q.val().read_npsn;
        self.out_psn.next = self.outcome_q.q.val().psn;
        self.out_opcode.next = self.outcome_q.q.val().opcode;
        self.out_swap_add.next = self.outcome_q.q.val().swap_add;
        self.out_compare.next = self.outcome_q.q.val().compare;
    }
}
