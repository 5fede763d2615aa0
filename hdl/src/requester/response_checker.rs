//! `ResponseChecker`: the completer's per-response decision — what the
//! requester does with one received ACK, NAK, RNR NAK, READ response or
//! atomic ACK, given the packet's header, its QP's context and the send
//! WQE the packet's PSN falls in. The RTL of `rocenic_model::completer`'s
//! `classify_response`, `check_read_response` and `check_atomic_ack`
//! (which `on_response` calls, so they are the oracle).
//!
//! The block has no state: it is a pipelined function of its inputs. It
//! is the mirror of the responder's request check on the requester side.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high) empties the pipeline.
//! - Input (valid/ready): `in_valid`, `in_ready`, a 16-bit `in_tag`
//!   returned with the decision, and
//!   - from the header record ([`crate::frame::rx::header_record`]): `pkt_opcode`,
//!     `pkt_psn` (24 bits), `pkt_has_aeth`, `pkt_aeth_syndrome` (bit 7 is
//!     reserved and ignored, as the model's `Aeth::kind` does),
//!     `pkt_payload_len` (32 bits; the record's 13 zero-extended). Not
//!     the AETH's MSN: the model's completer (like rxe's) acknowledges by
//!     PSN alone, so no decision depends on it;
//!   - from the QP context ([`crate::qp::qp_context_record`]): `ctx_state`,
//!     `ctx_una_psn` (`sq_una_psn`), `ctx_max_sent_psn`
//!     (`sq_max_sent_psn`: the PSN after the highest ever sent) and
//!     `ctx_path_mtu` (IBA code 1..=5; others give `128 << code` bytes);
//!   - from the tracker of the on-chip send-queue ring, the WQE whose PSN
//!     range holds `pkt_psn`: `wqe_found` (low: no WQE does; the other
//!     `wqe_*` fields are then ignored), `wqe_kind` ([`wqe_kind`]
//!     codes), `wqe_first_psn`, `wqe_npsn` (PSNs it owns, >= 1),
//!     `wqe_done_psn` (first PSN not yet acknowledged / answered),
//!     `wqe_len` (bytes, 32 bits as in a RETH), `wqe_complete`,
//!     `wqe_error` (it has failed). The tracker keeps the model's
//!     invariants: `wqe_first_psn <= pkt_psn < wqe_first_psn + wqe_npsn`
//!     modulo 2^24, and a READ's `wqe_npsn` is `max(1, ceil(len / MTU))`;
//!     the placement outputs rely on them (the decision codes do not).
//! - Output (valid/ready), one decision per input, in order: `out_valid`,
//!   `out_ready`, `out_tag`, and
//!   - `out_action`: [`ACTION_DROP`], [`ACTION_ACK`], [`ACTION_RNR_NAK`],
//!     [`ACTION_SEQUENCE_NAK`], [`ACTION_ERROR_NAK`],
//!     [`ACTION_ATOMIC_ACK`], [`ACTION_READ_RESPONSE`]
//!     (`ResponseAction`'s variants);
//!   - `out_drop`: for `ACTION_DROP`, why ([`DROP_QP_STATE`] ..
//!     [`DROP_UNEXPECTED_OPCODE`], `ResponseDrop`'s variants), else 0;
//!   - `out_ack_end`: the implicit ACK covers every PSN before it
//!     (`pkt_psn + 1` for an ACK, `pkt_psn` otherwise; 0 for a drop);
//!   - `out_rnr_timer`: the RNR NAK's timer code, else 0;
//!   - `out_status`: for `ACTION_ERROR_NAK`, the completion status
//!     ([`STATUS_REM_INV_REQ`], [`STATUS_REM_ACCESS`], [`STATUS_REM_OP`]),
//!     else 0;
//!   - `out_wqe`: for `ACTION_ATOMIC_ACK` and `ACTION_READ_RESPONSE`, the
//!     WQE check ([`WQE_OK`], [`WQE_UNEXPECTED`], [`WQE_DUPLICATE`],
//!     [`WQE_GAP`], [`WQE_BAD_RESPONSE`]: `Ok` and `WqeDrop`'s variants),
//!     else [`WQE_NONE`]; `out_gap_retry` is high exactly for [`WQE_GAP`];
//!   - for a READ response that passed (`WQE_OK`): `out_offset` (bytes
//!     into the message), `out_len` (payload bytes to place, which the
//!     packet carries) and `out_completes_wqe` (it is the READ's last
//!     packet); all zero otherwise.
//!
//! # Contract with the ACK engine (not built here)
//!
//! The retransmit/ACK engine owns the WQE ring and the timers and acts on
//! each decision as the model's `on_response` does:
//!
//! - every action but a drop first acknowledges implicitly: walking the
//!   ring from its oldest incomplete WQE, SEND/WRITE WQEs that end at or
//!   before `out_ack_end` complete (a partly covered one advances its done
//!   PSN); the walk stops at a failed WQE, and reaching a READ or atomic
//!   that ends by `out_ack_end` means its response was lost ("loss");
//! - ACK: on loss, Go-Back-N (rewind the send PSN to `una`, once per
//!   `una`, spending the retry budget or failing with RETRY_EXC_ERR);
//! - RNR NAK: on loss Go-Back-N, else an RNR wait for `out_rnr_timer`
//!   through the timers (spending the RNR budget, rewinding to `una`);
//! - sequence NAK: always Go-Back-N after the walk;
//! - error NAK: the WQE holding the PSN fails with `out_status`, the QP
//!   goes to ERR and the queues flush;
//! - atomic ACK and READ response: on loss Go-Back-N and the WQE check is
//!   ignored (the implicit ACK never changes the WQE holding `pkt_psn`,
//!   so the block checks it in parallel with the walk); else on `WQE_OK`
//!   write the data (atomic: the original value; READ: `out_len` bytes at
//!   `out_offset` through MR translation), advance the WQE's done PSN and
//!   complete it (atomic always, READ when `out_completes_wqe`), on
//!   `WQE_GAP` drop and Go-Back-N, on the other codes drop;
//! - a drop only counts `rx_dropped` under the model's reason name.
//!
//! # Latency and throughput
//!
//! One input per cycle. The decision for an input accepted at the rising
//! edge ending cycle c is on the outputs in cycle c + 2 (two register
//! stages: A the PSN distances, AETH and WQE flags and the READ offset; B
//! the payload length check and the output codes). `in_ready` is
//! `!out_valid | out_ready` (one global stall, as in
//! [`crate::dma::mr_translate`]), so the block keeps the rate the consumer
//! takes and the engine may stall it; a register slice in front cuts the
//! combinational ready path if it gets long.

use crate::codes::{qp_state, wqe_kind};
use rust_hdl::prelude::*;

/// `out_action` codes.
pub const ACTION_DROP: u64 = 0;
pub const ACTION_ACK: u64 = 1;
pub const ACTION_RNR_NAK: u64 = 2;
pub const ACTION_SEQUENCE_NAK: u64 = 3;
pub const ACTION_ERROR_NAK: u64 = 4;
pub const ACTION_ATOMIC_ACK: u64 = 5;
pub const ACTION_READ_RESPONSE: u64 = 6;

/// `out_drop` codes (0: not dropped here).
pub const DROP_NONE: u64 = 0;
pub const DROP_QP_STATE: u64 = 1;
pub const DROP_DUPLICATE_RESPONSE: u64 = 2;
pub const DROP_RESPONSE_OUT_OF_WINDOW: u64 = 3;
pub const DROP_BAD_AETH: u64 = 4;
pub const DROP_UNEXPECTED_OPCODE: u64 = 5;

/// `out_status` codes of an error NAK (0: none).
pub const STATUS_NONE: u64 = 0;
/// NAK invalid request (code 1) or invalid RD request (code 4).
pub const STATUS_REM_INV_REQ: u64 = 1;
pub const STATUS_REM_ACCESS: u64 = 2;
pub const STATUS_REM_OP: u64 = 3;

/// `out_wqe` codes.
pub const WQE_NONE: u64 = 0;
pub const WQE_OK: u64 = 1;
pub const WQE_UNEXPECTED: u64 = 2;
pub const WQE_DUPLICATE: u64 = 3;
pub const WQE_GAP: u64 = 4;
pub const WQE_BAD_RESPONSE: u64 = 5;

/// Clock cycles from accepting an input to its decision on the outputs.
pub const LATENCY: u64 = 2;

const OP_READ_RESPONSE_FIRST: u64 = 0x0D;
const OP_READ_RESPONSE_MIDDLE: u64 = 0x0E;
const OP_READ_RESPONSE_ONLY: u64 = 0x10;
/// The ACK / NAK opcode: the only response whose decision needs no WQE.
pub const OP_ACKNOWLEDGE: u64 = 0x11;
const OP_ATOMIC_ACKNOWLEDGE: u64 = 0x12;

#[derive(LogicBlock)]
pub struct ResponseChecker {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_tag: Signal<In, Bits<16>>,
    pub pkt_opcode: Signal<In, Bits<8>>,
    pub pkt_psn: Signal<In, Bits<24>>,
    pub pkt_has_aeth: Signal<In, Bit>,
    pub pkt_aeth_syndrome: Signal<In, Bits<8>>,
    pub pkt_payload_len: Signal<In, Bits<32>>,
    pub ctx_state: Signal<In, Bits<3>>,
    pub ctx_una_psn: Signal<In, Bits<24>>,
    pub ctx_max_sent_psn: Signal<In, Bits<24>>,
    pub ctx_path_mtu: Signal<In, Bits<3>>,
    pub wqe_found: Signal<In, Bit>,
    pub wqe_kind: Signal<In, Bits<2>>,
    pub wqe_first_psn: Signal<In, Bits<24>>,
    pub wqe_npsn: Signal<In, Bits<24>>,
    pub wqe_done_psn: Signal<In, Bits<24>>,
    pub wqe_len: Signal<In, Bits<32>>,
    pub wqe_complete: Signal<In, Bit>,
    pub wqe_error: Signal<In, Bit>,

    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_tag: Signal<Out, Bits<16>>,
    pub out_action: Signal<Out, Bits<3>>,
    pub out_drop: Signal<Out, Bits<3>>,
    pub out_ack_end: Signal<Out, Bits<24>>,
    pub out_rnr_timer: Signal<Out, Bits<5>>,
    pub out_status: Signal<Out, Bits<2>>,
    pub out_wqe: Signal<Out, Bits<3>>,
    pub out_gap_retry: Signal<Out, Bit>,
    pub out_offset: Signal<Out, Bits<32>>,
    pub out_len: Signal<Out, Bits<32>>,
    pub out_completes_wqe: Signal<Out, Bit>,

    // Stage A: the header decision and the WQE's PSN relations.
    a_valid: DFF<Bit>,
    a_tag: DFF<Bits<16>>,
    a_action: DFF<Bits<3>>,
    a_drop: DFF<Bits<3>>,
    a_ack_end: DFF<Bits<24>>,
    a_rnr_timer: DFF<Bits<5>>,
    a_status: DFF<Bits<2>>,
    /// READ check, in the model's order: not a live READ WQE, PSN before
    /// its done PSN, after it.
    a_read_unexpected: DFF<Bit>,
    a_read_duplicate: DFF<Bit>,
    a_read_gap: DFF<Bit>,
    a_opcode_fits: DFF<Bit>,
    a_is_last: DFF<Bit>,
    a_offset: DFF<Bits<32>>,
    a_mtu: DFF<Bits<32>>,
    a_wqe_len: DFF<Bits<32>>,
    a_payload_len: DFF<Bits<32>>,
    a_atomic_ok: DFF<Bit>,

    // Stage B: the output register.
    b_valid: DFF<Bit>,
    b_tag: DFF<Bits<16>>,
    b_action: DFF<Bits<3>>,
    b_drop: DFF<Bits<3>>,
    b_ack_end: DFF<Bits<24>>,
    b_rnr_timer: DFF<Bits<5>>,
    b_status: DFF<Bits<2>>,
    b_wqe: DFF<Bits<3>>,
    b_offset: DFF<Bits<32>>,
    b_len: DFF<Bits<32>>,
    b_completes_wqe: DFF<Bit>,

    action_drop: Constant<Bits<3>>,
    action_ack: Constant<Bits<3>>,
    action_rnr_nak: Constant<Bits<3>>,
    action_sequence_nak: Constant<Bits<3>>,
    action_error_nak: Constant<Bits<3>>,
    action_atomic_ack: Constant<Bits<3>>,
    action_read_response: Constant<Bits<3>>,
    drop_none: Constant<Bits<3>>,
    drop_qp_state: Constant<Bits<3>>,
    drop_duplicate_response: Constant<Bits<3>>,
    drop_response_out_of_window: Constant<Bits<3>>,
    drop_bad_aeth: Constant<Bits<3>>,
    drop_unexpected_opcode: Constant<Bits<3>>,
    status_none: Constant<Bits<2>>,
    status_rem_inv_req: Constant<Bits<2>>,
    status_rem_access: Constant<Bits<2>>,
    status_rem_op: Constant<Bits<2>>,
    wqe_none: Constant<Bits<3>>,
    wqe_ok: Constant<Bits<3>>,
    wqe_unexpected: Constant<Bits<3>>,
    wqe_duplicate: Constant<Bits<3>>,
    wqe_gap: Constant<Bits<3>>,
    wqe_bad_response: Constant<Bits<3>>,
    kind_read: Constant<Bits<2>>,
    kind_atomic: Constant<Bits<2>>,
    state_rts: Constant<Bits<3>>,
    op_read_response_first: Constant<Bits<8>>,
    op_read_response_middle: Constant<Bits<8>>,
    op_read_response_only: Constant<Bits<8>>,
    op_acknowledge: Constant<Bits<8>>,
    op_atomic_acknowledge: Constant<Bits<8>>,
    /// The smallest MTU (code 0 would be 128 bytes): MTU = this << code.
    mtu_unit: Constant<Bits<16>>,

    /// Stages A and B move (B is empty or being taken).
    advance: Signal<Local, Bit>,
    /// `pkt_psn - ctx_una_psn` modulo 2^24: bit 23 set when before `una`.
    since_una: Signal<Local, Bits<24>>,
    /// `pkt_psn - ctx_max_sent_psn`: bit 23 clear when at or beyond it.
    since_max_sent: Signal<Local, Bits<24>>,
    aeth_type: Signal<Local, Bits<2>>,
    aeth_value: Signal<Local, Bits<5>>,
    since_done: Signal<Local, Bits<24>>,
    /// Packets of the WQE before this one.
    index_in_wqe: Signal<Local, Bits<24>>,
    last_psn: Signal<Local, Bits<24>>,
    is_last: Signal<Local, Bit>,
    /// READ response FIRST or MIDDLE: not the READ's last packet.
    not_last_opcode: Signal<Local, Bit>,
    offset_wide: Signal<Local, Bits<36>>,
    expected_len: Signal<Local, Bits<32>>,
}

impl Default for ResponseChecker {
    fn default() -> Self {
        let c3 = |v: u64| Constant::new(bits::<3>(v));
        let c2 = |v: u64| Constant::new(bits::<2>(v));
        let c8 = |v: u64| Constant::new(bits::<8>(v));
        ResponseChecker {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_tag: Default::default(),
            pkt_opcode: Default::default(),
            pkt_psn: Default::default(),
            pkt_has_aeth: Default::default(),
            pkt_aeth_syndrome: Default::default(),
            pkt_payload_len: Default::default(),
            ctx_state: Default::default(),
            ctx_una_psn: Default::default(),
            ctx_max_sent_psn: Default::default(),
            ctx_path_mtu: Default::default(),
            wqe_found: Default::default(),
            wqe_kind: Default::default(),
            wqe_first_psn: Default::default(),
            wqe_npsn: Default::default(),
            wqe_done_psn: Default::default(),
            wqe_len: Default::default(),
            wqe_complete: Default::default(),
            wqe_error: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_tag: Default::default(),
            out_action: Default::default(),
            out_drop: Default::default(),
            out_ack_end: Default::default(),
            out_rnr_timer: Default::default(),
            out_status: Default::default(),
            out_wqe: Default::default(),
            out_gap_retry: Default::default(),
            out_offset: Default::default(),
            out_len: Default::default(),
            out_completes_wqe: Default::default(),
            a_valid: Default::default(),
            a_tag: Default::default(),
            a_action: Default::default(),
            a_drop: Default::default(),
            a_ack_end: Default::default(),
            a_rnr_timer: Default::default(),
            a_status: Default::default(),
            a_read_unexpected: Default::default(),
            a_read_duplicate: Default::default(),
            a_read_gap: Default::default(),
            a_opcode_fits: Default::default(),
            a_is_last: Default::default(),
            a_offset: Default::default(),
            a_mtu: Default::default(),
            a_wqe_len: Default::default(),
            a_payload_len: Default::default(),
            a_atomic_ok: Default::default(),
            b_valid: Default::default(),
            b_tag: Default::default(),
            b_action: Default::default(),
            b_drop: Default::default(),
            b_ack_end: Default::default(),
            b_rnr_timer: Default::default(),
            b_status: Default::default(),
            b_wqe: Default::default(),
            b_offset: Default::default(),
            b_len: Default::default(),
            b_completes_wqe: Default::default(),
            action_drop: c3(ACTION_DROP),
            action_ack: c3(ACTION_ACK),
            action_rnr_nak: c3(ACTION_RNR_NAK),
            action_sequence_nak: c3(ACTION_SEQUENCE_NAK),
            action_error_nak: c3(ACTION_ERROR_NAK),
            action_atomic_ack: c3(ACTION_ATOMIC_ACK),
            action_read_response: c3(ACTION_READ_RESPONSE),
            drop_none: c3(DROP_NONE),
            drop_qp_state: c3(DROP_QP_STATE),
            drop_duplicate_response: c3(DROP_DUPLICATE_RESPONSE),
            drop_response_out_of_window: c3(DROP_RESPONSE_OUT_OF_WINDOW),
            drop_bad_aeth: c3(DROP_BAD_AETH),
            drop_unexpected_opcode: c3(DROP_UNEXPECTED_OPCODE),
            status_none: c2(STATUS_NONE),
            status_rem_inv_req: c2(STATUS_REM_INV_REQ),
            status_rem_access: c2(STATUS_REM_ACCESS),
            status_rem_op: c2(STATUS_REM_OP),
            wqe_none: c3(WQE_NONE),
            wqe_ok: c3(WQE_OK),
            wqe_unexpected: c3(WQE_UNEXPECTED),
            wqe_duplicate: c3(WQE_DUPLICATE),
            wqe_gap: c3(WQE_GAP),
            wqe_bad_response: c3(WQE_BAD_RESPONSE),
            kind_read: c2(wqe_kind::READ),
            kind_atomic: c2(wqe_kind::ATOMIC),
            state_rts: c3(u64::from(qp_state::RTS)),
            op_read_response_first: c8(OP_READ_RESPONSE_FIRST),
            op_read_response_middle: c8(OP_READ_RESPONSE_MIDDLE),
            op_read_response_only: c8(OP_READ_RESPONSE_ONLY),
            op_acknowledge: c8(OP_ACKNOWLEDGE),
            op_atomic_acknowledge: c8(OP_ATOMIC_ACKNOWLEDGE),
            mtu_unit: Constant::new(bits::<16>(128)),
            advance: Default::default(),
            since_una: Default::default(),
            since_max_sent: Default::default(),
            aeth_type: Default::default(),
            aeth_value: Default::default(),
            since_done: Default::default(),
            index_in_wqe: Default::default(),
            last_psn: Default::default(),
            is_last: Default::default(),
            not_last_opcode: Default::default(),
            offset_wide: Default::default(),
            expected_len: Default::default(),
        }
    }
}

impl Logic for ResponseChecker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            a_valid,
            a_tag,
            a_action,
            a_drop,
            a_ack_end,
            a_rnr_timer,
            a_status,
            a_read_unexpected,
            a_read_duplicate,
            a_read_gap,
            a_opcode_fits,
            a_is_last,
            a_offset,
            a_mtu,
            a_wqe_len,
            a_payload_len,
            a_atomic_ok,
            b_valid,
            b_tag,
            b_action,
            b_drop,
            b_ack_end,
            b_rnr_timer,
            b_status,
            b_wqe,
            b_offset,
            b_len,
            b_completes_wqe
        );
        self.advance.next = !self.b_valid.q.val() | self.out_ready.val();
        self.in_ready.next = self.advance.val();

        // ---- header decision (classify_response), in the model's order
        self.since_una.next = self.pkt_psn.val() - self.ctx_una_psn.val();
        self.since_max_sent.next = self.pkt_psn.val() - self.ctx_max_sent_psn.val();
        self.aeth_type.next = self.pkt_aeth_syndrome.val().get_bits::<2>(5);
        self.aeth_value.next = self.pkt_aeth_syndrome.val().get_bits::<5>(0);

        // ---- WQE relations (check_read_response, check_atomic_ack)
        self.since_done.next = self.pkt_psn.val() - self.wqe_done_psn.val();
        self.index_in_wqe.next = self.pkt_psn.val() - self.wqe_first_psn.val();
        self.last_psn.next = self.wqe_first_psn.val() + self.wqe_npsn.val() - 1;
        self.is_last.next = self.pkt_psn.val() == self.last_psn.val();
        self.not_last_opcode.next = (self.pkt_opcode.val() == self.op_read_response_first.val())
            | (self.pkt_opcode.val() == self.op_read_response_middle.val());
        // index < 2^24 packets of at most 4096 = 2^12 bytes: 36 bits; a READ
        // of at most 2^32 - 1 bytes keeps it below 2^32.
        self.offset_wide.next = (bit_cast::<36, 24>(self.index_in_wqe.val())
            << bit_cast::<36, 3>(self.ctx_path_mtu.val()))
            << 7;

        if self.advance.val() {
            self.a_valid.d.next = self.in_valid.val();
            self.a_tag.d.next = self.in_tag.val();
            self.a_action.d.next = self.action_drop.val();
            self.a_drop.d.next = self.drop_none.val();
            self.a_ack_end.d.next = 0.into();
            self.a_rnr_timer.d.next = 0.into();
            self.a_status.d.next = self.status_none.val();
            if self.ctx_state.val() != self.state_rts.val() {
                self.a_drop.d.next = self.drop_qp_state.val();
            } else if self.since_una.val().get_bit(23) {
                self.a_drop.d.next = self.drop_duplicate_response.val();
            } else if !self.since_max_sent.val().get_bit(23) {
                self.a_drop.d.next = self.drop_response_out_of_window.val();
            } else if self.pkt_opcode.val() == self.op_acknowledge.val() {
                if !self.pkt_has_aeth.val() {
                    self.a_drop.d.next = self.drop_bad_aeth.val();
                } else if self.aeth_type.val() == 0 {
                    self.a_action.d.next = self.action_ack.val();
                    self.a_ack_end.d.next = self.pkt_psn.val() + 1;
                } else if self.aeth_type.val() == 1 {
                    self.a_action.d.next = self.action_rnr_nak.val();
                    self.a_ack_end.d.next = self.pkt_psn.val();
                    self.a_rnr_timer.d.next = self.aeth_value.val();
                } else if self.aeth_type.val() == 2 {
                    self.a_drop.d.next = self.drop_bad_aeth.val();
                } else if self.aeth_value.val() == 0 {
                    self.a_action.d.next = self.action_sequence_nak.val();
                    self.a_ack_end.d.next = self.pkt_psn.val();
                } else if self.aeth_value.val() <= 4 {
                    self.a_action.d.next = self.action_error_nak.val();
                    self.a_ack_end.d.next = self.pkt_psn.val();
                    self.a_status.d.next = self.status_rem_inv_req.val();
                    if self.aeth_value.val() == 2 {
                        self.a_status.d.next = self.status_rem_access.val();
                    }
                    if self.aeth_value.val() == 3 {
                        self.a_status.d.next = self.status_rem_op.val();
                    }
                } else {
                    self.a_drop.d.next = self.drop_bad_aeth.val();
                }
            } else if self.pkt_opcode.val() == self.op_atomic_acknowledge.val() {
                self.a_action.d.next = self.action_atomic_ack.val();
                self.a_ack_end.d.next = self.pkt_psn.val();
            } else if (self.pkt_opcode.val() >= self.op_read_response_first.val())
                & (self.pkt_opcode.val() <= self.op_read_response_only.val())
            {
                self.a_action.d.next = self.action_read_response.val();
                self.a_ack_end.d.next = self.pkt_psn.val();
            } else {
                self.a_drop.d.next = self.drop_unexpected_opcode.val();
            }

            self.a_read_unexpected.d.next = !self.wqe_found.val()
                | (self.wqe_kind.val() != self.kind_read.val())
                | self.wqe_complete.val()
                | self.wqe_error.val();
            self.a_read_duplicate.d.next = self.since_done.val().get_bit(23);
            self.a_read_gap.d.next = self.since_done.val().any();
            self.a_is_last.d.next = self.is_last.val();
            self.a_opcode_fits.d.next = self.not_last_opcode.val() ^ self.is_last.val();
            self.a_offset.d.next = bit_cast::<32, 36>(self.offset_wide.val());
            self.a_mtu.d.next = bit_cast::<32, 16>(
                self.mtu_unit.val() << bit_cast::<16, 3>(self.ctx_path_mtu.val()),
            );
            self.a_wqe_len.d.next = self.wqe_len.val();
            self.a_payload_len.d.next = self.pkt_payload_len.val();
            self.a_atomic_ok.d.next = self.wqe_found.val()
                & (self.wqe_kind.val() == self.kind_atomic.val())
                & !self.wqe_complete.val()
                & (self.wqe_first_psn.val() == self.pkt_psn.val());
        }

        // ---- stage B: the READ's payload length, the WQE code, outputs
        self.expected_len.next = self.a_mtu.q.val();
        if self.a_is_last.q.val() {
            self.expected_len.next = self.a_wqe_len.q.val() - self.a_offset.q.val();
        }
        if self.advance.val() {
            self.b_valid.d.next = self.a_valid.q.val();
            self.b_tag.d.next = self.a_tag.q.val();
            self.b_action.d.next = self.a_action.q.val();
            self.b_drop.d.next = self.a_drop.q.val();
            self.b_ack_end.d.next = self.a_ack_end.q.val();
            self.b_rnr_timer.d.next = self.a_rnr_timer.q.val();
            self.b_status.d.next = self.a_status.q.val();
            self.b_wqe.d.next = self.wqe_none.val();
            self.b_offset.d.next = 0.into();
            self.b_len.d.next = 0.into();
            self.b_completes_wqe.d.next = false;
            if self.a_action.q.val() == self.action_atomic_ack.val() {
                self.b_wqe.d.next = self.wqe_unexpected.val();
                if self.a_atomic_ok.q.val() {
                    self.b_wqe.d.next = self.wqe_ok.val();
                }
            }
            if self.a_action.q.val() == self.action_read_response.val() {
                if self.a_read_unexpected.q.val() {
                    self.b_wqe.d.next = self.wqe_unexpected.val();
                } else if self.a_read_duplicate.q.val() {
                    self.b_wqe.d.next = self.wqe_duplicate.val();
                } else if self.a_read_gap.q.val() {
                    self.b_wqe.d.next = self.wqe_gap.val();
                } else if !self.a_opcode_fits.q.val()
                    | (self.a_payload_len.q.val() != self.expected_len.val())
                {
                    self.b_wqe.d.next = self.wqe_bad_response.val();
                } else {
                    self.b_wqe.d.next = self.wqe_ok.val();
                    self.b_offset.d.next = self.a_offset.q.val();
                    self.b_len.d.next = self.expected_len.val();
                    self.b_completes_wqe.d.next = self.a_is_last.q.val();
                }
            }
        }
        self.out_valid.next = self.b_valid.q.val();
        self.out_tag.next = self.b_tag.q.val();
        self.out_action.next = self.b_action.q.val();
        self.out_drop.next = self.b_drop.q.val();
        self.out_ack_end.next = self.b_ack_end.q.val();
        self.out_rnr_timer.next = self.b_rnr_timer.q.val();
        self.out_status.next = self.b_status.q.val();
        self.out_wqe.next = self.b_wqe.q.val();
        self.out_gap_retry.next = self.b_wqe.q.val() == self.wqe_gap.val();
        self.out_offset.next = self.b_offset.q.val();
        self.out_len.next = self.b_len.q.val();
        self.out_completes_wqe.next = self.b_completes_wqe.q.val();

        if self.reset.val() {
            self.a_valid.d.next = false;
            self.b_valid.d.next = false;
        }
    }
}
