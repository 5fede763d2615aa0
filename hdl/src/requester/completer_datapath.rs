//! `CompleterDatapath`: the completer path of the transport core — one
//! completer event of one QP at a time, with the QP's context record fields
//! as the event arbiter supplies them, to its effects: the context fields
//! to write back, the timer command, the READ response / atomic ACK
//! placement (offered, and the answer of its local MR check awaited), the
//! send-queue ring operations and the send CQEs. The RTL of
//! the model's `completer::on_response` (with the drain after it),
//! `completer::on_timer`, the ring side of `Nic::post_send` and of
//! `completer::move_to_error` when something else moves the QP to ERR,
//! and of the send queue's half of `requester::next_request`: the
//! transmit grant (`requester::grant_choice`: which WQE the requester
//! sends from next, at WQE granularity) and its status (the packets'
//! `requester::after_packet` updates, the ACK timer armed, a local error);
//! the lockstep test replays events a model NIC recorded
//! (`Nic::record_completer`: every event's state before and after and its
//! CQEs) and holds every output to them.
//!
//! Inside: a [`ResponseChecker`] (the decision), a [`SendQueueTracker`]
//! (the per-QP rings: lookup, implicit-ACK walk, complete_response, fail,
//! flush, drain, post, clear), an [`SgeRam`] with the local buffer (L_Key,
//! VA) of every WQE in the rings, and a per-QP side RAM of the completer state
//! the context record has no room for: `retry_una` (valid + 24 bits: the
//! una of the Go-Back-N under way, so a burst of gap responses or a
//! duplicated NAK rewinds once), `rnr_waiting` (the model's
//! `rnr_until.is_some()`: one RNR wait at a time, and the single hardware
//! timer of a QP must not be stopped while it times an RNR wait) and
//! `ack_running` (the model's `ack_timer.is_some()`: a packet with AckReq
//! arms the ACK timer only when it is not running, so every event that
//! arms or stops it, and its expiry, keeps this bit).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): back to idle (the rings, the
//!   side RAM and the tracker's RAMs keep their contents).
//! - Event (valid/ready; `ev_ready` is high when idle and in the cycle of
//!   `done_valid`, the event is taken in the cycle both are high and all
//!   its inputs are sampled then; one taken with a done must be of
//!   another QP):
//!   `ev_kind` ([`EV_RESPONSE`], [`EV_TIMER`], [`EV_POST`], [`EV_CLEAR`],
//!   [`EV_TO_ERROR`], [`EV_GRANT`], [`EV_SENT`]),
//!   `ev_qpn`, and
//!   - response: `pkt_opcode`, `pkt_psn`, `pkt_has_aeth`,
//!     `pkt_aeth_syndrome`, `pkt_payload_len`, `pkt_atomic_orig` (the
//!     AtomicAckETH's original value);
//!   - timer: `timer_rnr` (high: the end of an RNR wait; low: the local
//!     ACK timeout), as `qp_timers`' expiry says;
//!   - post: the WQE `post_kind`, `post_opcode` (CQE opcode), `post_npsn`,
//!     `post_len`, `post_signaled`, `post_status` (posted in error, e.g. a
//!     local length error, else 0), its local buffer `post_lkey`,
//!     `post_va` (one SGE, as `requester_datapath` takes); its first PSN
//!     is `ctx_next_psn`;
//!   - clear: nothing (the QP went to RESET: ring and side state emptied,
//!     timer stopped; the context write-back is the input's);
//!   - to error: nothing (the QP moves to ERR for a reason outside this
//!     block, the host's `modify_qp` or a responder error: its ring is
//!     flushed, state ERR, una the next PSN, timer stopped, RNR wait over);
//!   - grant: nothing (the transmit scheduler asks what the QP may send
//!     from next);
//!   - sent (the status of the grant's packets, as `requester_datapath`
//!     reports it when its last packet's local check is decided): `sent_next_psn` (the
//!     send cursor after them), `sent_ackreq` and `sent_ackreq_end` (a
//!     packet carried AckReq; the PSN after the last such packet),
//!     `sent_error` with `sent_status` (the packet at `sent_next_psn`
//!     failed its local check: LOC_PROT_ERR or LOC_LEN_ERR);
//!   - every event: the QP context fields (`qp_context_record` names
//!     without `sq_`): `ctx_state`, `ctx_next_psn`, `ctx_send_psn`,
//!     `ctx_una_psn`, `ctx_max_sent_psn`, `ctx_ackreq_end_psn`,
//!     `ctx_timeout`, `ctx_retry_cnt`, `ctx_rnr_retry`, `ctx_retry_left`,
//!     `ctx_rnr_left`, `ctx_path_mtu`, `ctx_max_rd_atomic`.
//! - Placement (a response whose WQE check passed): `place_valid` is high
//!   while the block waits for the answer, with the WQE's `place_slot`,
//!   `place_lkey`, `place_va` (its buffer's VA plus the offset),
//!   `place_offset` and `place_len` (bytes into the buffer), or with
//!   `place_atomic` the 8-byte `place_atomic_orig` at offset 0, all stable
//!   until the answer. The answer: `place_result_valid` for one cycle (in
//!   the first cycle of `place_valid` at the earliest; sampled only while
//!   `place_valid` is high) with `place_result_error` and
//!   `place_result_status` (the WC status code the WQE fails with,
//!   LOC_PROT_ERR or LOC_LEN_ERR, as `post_status`). The local-write MR
//!   check, page split and payload DMA are outside this block
//!   (`response_placement` answers; the model's `completer::place_check`):
//!   it must answer every request, and the block waits as long as it
//!   takes.
//! - Done: `done_valid` is high for one cycle when the event's decision is
//!   final (every ring command finished), with `done_qpn` and
//!   - the write-back: `wb_state`, `wb_next_psn`, `wb_send_psn`,
//!     `wb_una_psn`, `wb_max_sent_psn`, `wb_ackreq_end_psn`,
//!     `wb_retry_left`, `wb_rnr_left` (the event's input values where it
//!     changed nothing); the side state as written:
//!     `done_retry_una_valid`, `done_retry_una`, `done_rnr_waiting`,
//!     `done_ack_running`;
//!   - the timer command for `qp_timers`: `timer_op` ([`TIMER_NONE`],
//!     [`TIMER_ARM`] with `timer_kind` (high: RNR wait) and `timer_code`
//!     (ACK: the context's `timeout`; RNR: the NAK's timer code), or
//!     [`TIMER_STOP`]);
//!   - post: `post_accepted` (low: the ring was full, or the QP not in
//!     RTS or ERR), `post_slot` (the handle the host maps to its wr_id);
//!   - grant: `grant_valid` with the WQE `grant_slot`, `grant_kind`,
//!     `grant_opcode` (CQE opcode), `grant_first_psn`, `grant_npsn`,
//!     `grant_len`, `grant_signaled`, its local buffer `grant_lkey`,
//!     `grant_va` and `grant_resume_psn` (the send cursor, also written
//!     back as `wb_send_psn`): what `requester_datapath`'s grant takes
//!     from the ring (remote VA, R_Key, immediate and atomic operands are
//!     the core's, by the same `{qpn, slot}`); or low with
//!     `grant_refusal` (a [`grant_refusal`] code, the model's
//!     `GrantRefusal`); `grant_skipped`: WQEs skipped;
//!   - `done_action`, `done_wqe_check`: the checker's decision codes (for
//!     counters and logs).
//! - CQE stream (valid/ready): the tracker's, `cqe_qpn`, `cqe_slot`,
//!   `cqe_status`, `cqe_opcode`, `cqe_byte_len`, per QP in posting order.
//!
//! # What an event does (the model's order)
//!
//! Response: ring lookup of the PSN's WQE (a READ response or atomic ACK:
//! an ACK's or NAK's decision needs no WQE, the model looks none up),
//! then the checker; a drop
//! changes nothing. Otherwise the implicit-ACK walk up to the checker's
//! ACK end; if una moved, progress (budgets refilled, `retry_una`
//! cleared, `send_psn` moved up to una, the ACK timer re-armed while an
//! AckReq is outstanding, else stopped). Then per action: ACK (on a lost
//! READ/atomic response: Go-Back-N), RNR NAK (lost: Go-Back-N, else an RNR
//! wait: RNR budget, rewind, arm the RNR timer), sequence NAK (Go-Back-N),
//! error NAK (fail the WQE, flush, ERR), READ response / atomic ACK (lost:
//! Go-Back-N; WQE check OK: the placement offered and its answer awaited,
//! then on success complete_response and progress, on a local error the
//! WQE at the PSN fails (the model's `local_error`: no progress); gap:
//! Go-Back-N). Go-Back-N: once per una, else spend a retry (rewind
//! `send_psn` and `ackreq_end` to una, stop the ACK timer) or with none
//! left fail with RETRY_EXC_ERR. Finally, if the drain after a ring
//! command found a failed WQE at the head, flush and go to ERR (the
//! model's drain).
//!
//! Timer (in RTS only): RNR wait end: `send_psn` = una; ACK timeout with
//! an AckReq outstanding: Go-Back-N (always a new attempt). Post: in RTS
//! append the WQE (next PSN advances), in ERR append and flush it at once
//! (a WR_FLUSH_ERR CQE). Move to ERR stops the timer and ends an RNR wait.
//!
//! Grant: refused when the QP is not in RTS or waits out an RNR NAK, or
//! when `send_psn` is not behind `next_psn`; else a ring lookup at
//! `send_psn`: no WQE holds it: nothing to send; the WQE is complete
//! (acknowledged while the cursor was rewound): `send_psn` moves to its
//! end and the lookup repeats; it has failed: refused; it is a READ or
//! atomic with `max_rd_atomic` unanswered READ/atomic WQEs before it (the
//! tracker counts them on its walk): refused; else granted. The window
//! and DCQCN pacing are not the grant's (the scheduler's ready set and
//! `requester_datapath`'s segmenter).
//!
//! Sent: `send_psn` = `sent_next_psn`, `max_sent_psn` and
//! `ackreq_end_psn` moved forward to it / to `sent_ackreq_end` (what the
//! model's per-packet updates leave after those packets), the ACK timer
//! armed if a packet carried AckReq and it was not running (and the
//! context's `timeout` is not 0); with `sent_error` the WQE holding
//! `sent_next_psn` fails (the model's `local_error`) and the drain moves
//! the QP to ERR if it is the oldest.
//!
//! Not here: the MR check of a placement (the response's local buffer
//! against its L_Key, LOCAL_WRITE, bounds) and its DMA: the placement
//! stage after this block decides and answers (see Placement above).
//!
//! # Latency and throughput
//!
//! One event at a time, from `ev_valid` to `done_valid` (both cycles
//! counted, on the lockstep test's traces; an event taken in a done cycle
//! counts from there): a post 5 cycles (9 in ERR),
//! a timer 4 to 6 (36 when the retries are exhausted: fail and flush), a
//! response 5 to 50: a drop 5 (an ACK or NAK, no lookup) or after a
//! lookup walk, an ACK completing one WQE 9 to 20, a READ response or
//! atomic ACK placed 24 to 32 plus the cycles from the first of
//! `place_valid` to the answer, long walks and flushes up to 50; a move
//! to ERR 6 to 26, a grant 3 to 21 (3 when the context alone refuses it;
//! else a lookup and one more per WQE skipped), a sent 3 (10 to 14 with a
//! local error: a fail, and a flush if the WQE is the oldest). A ring
//! command costs 3 cycles plus its walk and drain, plus every cycle a CQE
//! waits on `cqe_ready`. That is line rate at MTU-sized frames (65 cycles
//! at MTU 4096) and not for minimum-size responses; the core's arbiter
//! holds the QP's context meanwhile.
//!
//! # Memory
//!
//! The tracker's ring (`2^(A+D)` x 115 bits) and pointers (`2^A` x 16),
//! the local buffer of every ring slot ([`SgeRam`], `2^(A+D)` x
//! [`SGE_BITS`]), and the side RAM (`2^A` x [`SIDE_BITS`], zero at
//! power-up: no retry under way, no RNR wait), all synchronous-read block
//! RAM. The side RAM
//! is read when an event is taken and written when it is done; events are
//! sequential, so no collision logic.

use crate::codes::{grant_refusal, qp_state, wc_status};
use crate::primitives::sync_ram::SyncRam;
use crate::qp::qp_slot_ram::QpSlotRam;
use crate::requester::response_checker::{self as rc, ResponseChecker};
use crate::requester::send_ports::SendCqeStream;
use crate::requester::send_queue_tracker::{self as sqt, SendQueueTracker};
use rust_hdl::prelude::*;

/// `ev_kind` codes.
pub const EV_RESPONSE: u64 = 0;
pub const EV_TIMER: u64 = 1;
pub const EV_POST: u64 = 2;
pub const EV_CLEAR: u64 = 3;
pub const EV_TO_ERROR: u64 = 4;
pub const EV_GRANT: u64 = 5;
pub const EV_SENT: u64 = 6;

/// `timer_op` codes.
pub const TIMER_NONE: u64 = 0;
pub const TIMER_ARM: u64 = 1;
pub const TIMER_STOP: u64 = 2;

/// Bits of a side RAM word:
/// `{ack_running, retry_una[23:0], retry_una_valid, rnr_waiting}`.
pub const SIDE_BITS: usize = 27;

/// Bits of a local buffer word: `{lkey[31:0], va[63:0]}`.
pub const SGE_BITS: usize = 96;

/// The checker's error NAK status 1..=3 plus this: REM_INV_REQ_ERR,
/// REM_ACCESS_ERR, REM_OP_ERR (the checker's order is the WC statuses').
const STATUS_NAK_BASE: u64 = wc_status::REM_INV_REQ_ERR - rc::STATUS_REM_INV_REQ;
const _: () = assert!(
    wc_status::REM_ACCESS_ERR - rc::STATUS_REM_ACCESS == STATUS_NAK_BASE
        && wc_status::REM_OP_ERR - rc::STATUS_REM_OP == STATUS_NAK_BASE
);

const ST_IDLE: u64 = 0;
/// The side RAM's word arrives; dispatch on the event kind.
const ST_LOAD: u64 = 1;
/// A ring command in `c_*` is presented to the tracker (one decided in
/// `ST_LOAD` or `ST_CHECK_WAIT` is presented there already and skips
/// this state when the tracker takes it).
const ST_ISSUE: u64 = 2;
/// Its result is awaited, then acted on per `c_op`.
const ST_WAIT: u64 = 3;
/// The checker takes a response with the WQE its lookup found (an ACK or
/// NAK needs none: the checker takes it in `ST_LOAD`).
const ST_CHECK: u64 = 4;
/// The checker's decision is awaited.
const ST_CHECK_WAIT: u64 = 5;
/// After the implicit-ACK walk: what the action does next.
const ST_DECIDE: u64 = 6;
/// Go-Back-N (`retry`).
const ST_RETRY: u64 = 7;
/// RNR wait (`rnr_wait`).
const ST_RNR: u64 = 8;
const ST_TIMER: u64 = 9;
/// The final drain: a failed WQE at the head moves the QP to ERR.
const ST_END: u64 = 10;
const ST_FINISH: u64 = 11;
/// Grant, after a WQE skipped: the cursor against the next PSN, then a
/// lookup at the cursor (`ST_LOAD` does the same for the first).
const ST_GRANT: u64 = 12;
/// A response's data is offered for placement (`place_valid`); the
/// placement stage's answer is awaited.
const ST_PLACE: u64 = 13;

/// The default build: 1024 QPs x 16 outstanding WQEs.
pub type CompleterDatapathDefault =
    CompleterDatapath<{ sqt::DEFAULT_QPN_BITS }, { sqt::DEFAULT_SLOT_BITS }>;

/// The completer datapath (see the module doc).
#[derive(LogicBlock)]
pub struct CompleterDatapath<const A: usize, const D: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub ev_valid: Signal<In, Bit>,
    pub ev_ready: Signal<Out, Bit>,
    pub ev_kind: Signal<In, Bits<3>>,
    pub ev_qpn: Signal<In, Bits<A>>,
    pub pkt_opcode: Signal<In, Bits<8>>,
    pub pkt_psn: Signal<In, Bits<24>>,
    pub pkt_has_aeth: Signal<In, Bit>,
    pub pkt_aeth_syndrome: Signal<In, Bits<8>>,
    pub pkt_payload_len: Signal<In, Bits<32>>,
    pub pkt_atomic_orig: Signal<In, Bits<64>>,
    pub timer_rnr: Signal<In, Bit>,
    pub post_kind: Signal<In, Bits<2>>,
    pub post_opcode: Signal<In, Bits<3>>,
    pub post_npsn: Signal<In, Bits<24>>,
    pub post_len: Signal<In, Bits<32>>,
    pub post_signaled: Signal<In, Bit>,
    pub post_status: Signal<In, Bits<4>>,
    pub post_lkey: Signal<In, Bits<32>>,
    pub post_va: Signal<In, Bits<64>>,
    pub ctx_state: Signal<In, Bits<3>>,
    pub ctx_next_psn: Signal<In, Bits<24>>,
    pub ctx_send_psn: Signal<In, Bits<24>>,
    pub ctx_una_psn: Signal<In, Bits<24>>,
    pub ctx_max_sent_psn: Signal<In, Bits<24>>,
    pub ctx_ackreq_end_psn: Signal<In, Bits<24>>,
    pub ctx_timeout: Signal<In, Bits<5>>,
    pub ctx_retry_cnt: Signal<In, Bits<3>>,
    pub ctx_rnr_retry: Signal<In, Bits<3>>,
    pub ctx_retry_left: Signal<In, Bits<3>>,
    pub ctx_rnr_left: Signal<In, Bits<3>>,
    pub ctx_path_mtu: Signal<In, Bits<3>>,
    pub ctx_max_rd_atomic: Signal<In, Bits<5>>,
    pub sent_next_psn: Signal<In, Bits<24>>,
    pub sent_ackreq: Signal<In, Bit>,
    pub sent_ackreq_end: Signal<In, Bits<24>>,
    pub sent_error: Signal<In, Bit>,
    pub sent_status: Signal<In, Bits<4>>,
    pub place_result_valid: Signal<In, Bit>,
    pub place_result_error: Signal<In, Bit>,
    pub place_result_status: Signal<In, Bits<4>>,
    pub done_valid: Signal<Out, Bit>,
    pub done_qpn: Signal<Out, Bits<A>>,
    pub wb_state: Signal<Out, Bits<3>>,
    pub wb_next_psn: Signal<Out, Bits<24>>,
    pub wb_send_psn: Signal<Out, Bits<24>>,
    pub wb_una_psn: Signal<Out, Bits<24>>,
    pub wb_ackreq_end_psn: Signal<Out, Bits<24>>,
    pub wb_max_sent_psn: Signal<Out, Bits<24>>,
    pub wb_retry_left: Signal<Out, Bits<3>>,
    pub wb_rnr_left: Signal<Out, Bits<3>>,
    pub done_retry_una_valid: Signal<Out, Bit>,
    pub done_retry_una: Signal<Out, Bits<24>>,
    pub done_rnr_waiting: Signal<Out, Bit>,
    pub done_ack_running: Signal<Out, Bit>,
    pub done_action: Signal<Out, Bits<3>>,
    pub done_wqe_check: Signal<Out, Bits<3>>,
    pub timer_op: Signal<Out, Bits<2>>,
    pub timer_kind: Signal<Out, Bit>,
    pub timer_code: Signal<Out, Bits<5>>,
    pub place_valid: Signal<Out, Bit>,
    pub place_atomic: Signal<Out, Bit>,
    pub place_slot: Signal<Out, Bits<D>>,
    pub place_offset: Signal<Out, Bits<32>>,
    pub place_len: Signal<Out, Bits<32>>,
    pub place_atomic_orig: Signal<Out, Bits<64>>,
    pub place_lkey: Signal<Out, Bits<32>>,
    pub place_va: Signal<Out, Bits<64>>,
    pub post_accepted: Signal<Out, Bit>,
    pub post_slot: Signal<Out, Bits<D>>,
    pub grant_valid: Signal<Out, Bit>,
    pub grant_refusal: Signal<Out, Bits<3>>,
    pub grant_skipped: Signal<Out, Bits<5>>,
    pub grant_slot: Signal<Out, Bits<D>>,
    pub grant_kind: Signal<Out, Bits<2>>,
    pub grant_opcode: Signal<Out, Bits<3>>,
    pub grant_first_psn: Signal<Out, Bits<24>>,
    pub grant_npsn: Signal<Out, Bits<24>>,
    pub grant_len: Signal<Out, Bits<32>>,
    pub grant_signaled: Signal<Out, Bit>,
    pub grant_lkey: Signal<Out, Bits<32>>,
    pub grant_va: Signal<Out, Bits<64>>,
    pub grant_resume_psn: Signal<Out, Bits<24>>,
    pub cqe: SendCqeStream<A, D>,
    checker: ResponseChecker,
    tracker: SendQueueTracker<A, D>,
    side: SyncRam<Bits<SIDE_BITS>, A>,
    sges: SgeRam<A, D>,
    state: DFF<Bits<4>>,
    kind: DFF<Bits<3>>,
    qpn: DFF<Bits<A>>,
    pkt_opcode_q: DFF<Bits<8>>,
    pkt_psn_q: DFF<Bits<24>>,
    pkt_has_aeth_q: DFF<Bit>,
    pkt_syndrome_q: DFF<Bits<8>>,
    pkt_payload_len_q: DFF<Bits<32>>,
    pkt_orig_q: DFF<Bits<64>>,
    timer_rnr_q: DFF<Bit>,
    post_kind_q: DFF<Bits<2>>,
    post_opcode_q: DFF<Bits<3>>,
    post_npsn_q: DFF<Bits<24>>,
    post_len_q: DFF<Bits<32>>,
    post_signaled_q: DFF<Bit>,
    post_status_q: DFF<Bits<4>>,
    post_lkey_q: DFF<Bits<32>>,
    post_va_q: DFF<Bits<64>>,
    max_sent_q: DFF<Bits<24>>,
    timeout_q: DFF<Bits<5>>,
    retry_cnt_q: DFF<Bits<3>>,
    rnr_retry_q: DFF<Bits<3>>,
    mtu_q: DFF<Bits<3>>,
    w_state: DFF<Bits<3>>,
    w_next_psn: DFF<Bits<24>>,
    w_send_psn: DFF<Bits<24>>,
    w_una: DFF<Bits<24>>,
    w_ackreq_end: DFF<Bits<24>>,
    w_retry_left: DFF<Bits<3>>,
    w_rnr_left: DFF<Bits<3>>,
    rnr_waiting: DFF<Bit>,
    retry_una_valid: DFF<Bit>,
    retry_una: DFF<Bits<24>>,
    t_op: DFF<Bits<2>>,
    t_kind: DFF<Bit>,
    t_code: DFF<Bits<5>>,
    c_op: DFF<Bits<3>>,
    c_psn: DFF<Bits<24>>,
    c_slot: DFF<Bits<D>>,
    c_completes: DFF<Bit>,
    c_status: DFF<Bits<4>>,
    query: DFF<Bit>,
    wqe_found: DFF<Bit>,
    wqe_slot: DFF<Bits<D>>,
    wqe_kind: DFF<Bits<2>>,
    wqe_first: DFF<Bits<24>>,
    wqe_npsn: DFF<Bits<24>>,
    wqe_done: DFF<Bits<24>>,
    wqe_len: DFF<Bits<32>>,
    wqe_complete: DFF<Bit>,
    wqe_error: DFF<Bit>,
    act: DFF<Bits<3>>,
    ack_end: DFF<Bits<24>>,
    rnr_timer: DFF<Bits<5>>,
    nak_status: DFF<Bits<2>>,
    wqe_check: DFF<Bits<3>>,
    rd_offset: DFF<Bits<32>>,
    rd_len: DFF<Bits<32>>,
    rd_completes: DFF<Bit>,
    lost: DFF<Bit>,
    to_error: DFF<Bit>,
    retry_timeout: DFF<Bit>,
    place_failed: DFF<Bit>,
    p_atomic: DFF<Bit>,
    p_slot: DFF<Bits<D>>,
    p_offset: DFF<Bits<32>>,
    p_len: DFF<Bits<32>>,
    accepted: DFF<Bit>,
    post_slot_q: DFF<Bits<D>>,
    max_rd_atomic_q: DFF<Bits<5>>,
    sent_next_q: DFF<Bits<24>>,
    sent_ackreq_q: DFF<Bit>,
    sent_ackreq_end_q: DFF<Bits<24>>,
    sent_error_q: DFF<Bit>,
    sent_status_q: DFF<Bits<4>>,
    ack_running: DFF<Bit>,
    wqe_opcode: DFF<Bits<3>>,
    wqe_signaled: DFF<Bit>,
    wqe_rd_before: DFF<Bits<8>>,
    g_valid: DFF<Bit>,
    g_refusal: DFF<Bits<3>>,
    g_skipped: DFF<Bits<5>>,
    st_idle: Constant<Bits<4>>,
    st_load: Constant<Bits<4>>,
    st_issue: Constant<Bits<4>>,
    st_wait: Constant<Bits<4>>,
    st_check: Constant<Bits<4>>,
    st_check_wait: Constant<Bits<4>>,
    st_decide: Constant<Bits<4>>,
    st_retry: Constant<Bits<4>>,
    st_rnr: Constant<Bits<4>>,
    st_timer: Constant<Bits<4>>,
    st_end: Constant<Bits<4>>,
    st_finish: Constant<Bits<4>>,
    st_grant: Constant<Bits<4>>,
    st_place: Constant<Bits<4>>,
    ev_response: Constant<Bits<3>>,
    ev_timer: Constant<Bits<3>>,
    ev_post: Constant<Bits<3>>,
    ev_clear: Constant<Bits<3>>,
    ev_grant: Constant<Bits<3>>,
    ev_sent: Constant<Bits<3>>,
    grant_not_rts: Constant<Bits<3>>,
    grant_rnr_wait: Constant<Bits<3>>,
    grant_nothing: Constant<Bits<3>>,
    grant_failed_wqe: Constant<Bits<3>>,
    grant_rd_atomic_limit: Constant<Bits<3>>,
    qp_rts: Constant<Bits<3>>,
    qp_err: Constant<Bits<3>>,
    op_post: Constant<Bits<3>>,
    op_ack: Constant<Bits<3>>,
    op_lookup: Constant<Bits<3>>,
    op_complete_response: Constant<Bits<3>>,
    op_fail: Constant<Bits<3>>,
    op_flush: Constant<Bits<3>>,
    op_clear: Constant<Bits<3>>,
    action_drop: Constant<Bits<3>>,
    action_ack: Constant<Bits<3>>,
    action_rnr_nak: Constant<Bits<3>>,
    action_sequence_nak: Constant<Bits<3>>,
    action_error_nak: Constant<Bits<3>>,
    action_atomic_ack: Constant<Bits<3>>,
    wqe_ok: Constant<Bits<3>>,
    wqe_gap: Constant<Bits<3>>,
    status_retry_exc: Constant<Bits<4>>,
    status_rnr_retry_exc: Constant<Bits<4>>,
    status_nak_base: Constant<Bits<4>>,
    timer_none: Constant<Bits<2>>,
    timer_arm: Constant<Bits<2>>,
    timer_stop: Constant<Bits<2>>,
    rnr_forever: Constant<Bits<3>>,
    op_acknowledge: Constant<Bits<8>>,
    /// An ACK or NAK in `ST_LOAD`: the checker takes it at once, with no
    /// WQE (its decision needs none).
    ack_at_load: Signal<Local, Bit>,
    /// A ring command decided from registers and the checker's output
    /// goes to the (idle) tracker in the cycle it is decided: `early_*`.
    early_valid: Signal<Local, Bit>,
    early_op: Signal<Local, Bits<3>>,
    early_psn: Signal<Local, Bits<24>>,
    early_status: Signal<Local, Bits<4>>,
    progress: Signal<Local, Bit>,
    progress_una: Signal<Local, Bits<24>>,
    since_send: Signal<Local, Bits<24>>,
    awaiting_after: Signal<Local, Bits<24>>,
    awaiting_now: Signal<Local, Bits<24>>,
    same_loss: Signal<Local, Bit>,
    send_behind: Signal<Local, Bits<24>>,
    sent_past_max: Signal<Local, Bits<24>>,
    sent_past_ackreq: Signal<Local, Bits<24>>,
}

impl<const A: usize, const D: usize> Default for CompleterDatapath<A, D> {
    fn default() -> Self {
        CompleterDatapath {
            clock: Default::default(),
            reset: Default::default(),
            ev_valid: Default::default(),
            ev_ready: Default::default(),
            ev_kind: Default::default(),
            ev_qpn: Default::default(),
            pkt_opcode: Default::default(),
            pkt_psn: Default::default(),
            pkt_has_aeth: Default::default(),
            pkt_aeth_syndrome: Default::default(),
            pkt_payload_len: Default::default(),
            pkt_atomic_orig: Default::default(),
            timer_rnr: Default::default(),
            post_kind: Default::default(),
            post_opcode: Default::default(),
            post_npsn: Default::default(),
            post_len: Default::default(),
            post_signaled: Default::default(),
            post_status: Default::default(),
            post_lkey: Default::default(),
            post_va: Default::default(),
            ctx_state: Default::default(),
            ctx_next_psn: Default::default(),
            ctx_send_psn: Default::default(),
            ctx_una_psn: Default::default(),
            ctx_max_sent_psn: Default::default(),
            ctx_ackreq_end_psn: Default::default(),
            ctx_timeout: Default::default(),
            ctx_retry_cnt: Default::default(),
            ctx_rnr_retry: Default::default(),
            ctx_retry_left: Default::default(),
            ctx_rnr_left: Default::default(),
            ctx_path_mtu: Default::default(),
            ctx_max_rd_atomic: Default::default(),
            sent_next_psn: Default::default(),
            sent_ackreq: Default::default(),
            sent_ackreq_end: Default::default(),
            sent_error: Default::default(),
            sent_status: Default::default(),
            place_result_valid: Default::default(),
            place_result_error: Default::default(),
            place_result_status: Default::default(),
            done_valid: Default::default(),
            done_qpn: Default::default(),
            wb_state: Default::default(),
            wb_next_psn: Default::default(),
            wb_send_psn: Default::default(),
            wb_una_psn: Default::default(),
            wb_ackreq_end_psn: Default::default(),
            wb_max_sent_psn: Default::default(),
            wb_retry_left: Default::default(),
            wb_rnr_left: Default::default(),
            done_retry_una_valid: Default::default(),
            done_retry_una: Default::default(),
            done_rnr_waiting: Default::default(),
            done_ack_running: Default::default(),
            done_action: Default::default(),
            done_wqe_check: Default::default(),
            timer_op: Default::default(),
            timer_kind: Default::default(),
            timer_code: Default::default(),
            place_valid: Default::default(),
            place_atomic: Default::default(),
            place_slot: Default::default(),
            place_offset: Default::default(),
            place_len: Default::default(),
            place_atomic_orig: Default::default(),
            place_lkey: Default::default(),
            place_va: Default::default(),
            post_accepted: Default::default(),
            post_slot: Default::default(),
            grant_valid: Default::default(),
            grant_refusal: Default::default(),
            grant_skipped: Default::default(),
            grant_slot: Default::default(),
            grant_kind: Default::default(),
            grant_opcode: Default::default(),
            grant_first_psn: Default::default(),
            grant_npsn: Default::default(),
            grant_len: Default::default(),
            grant_signaled: Default::default(),
            grant_lkey: Default::default(),
            grant_va: Default::default(),
            grant_resume_psn: Default::default(),
            cqe: Default::default(),
            checker: Default::default(),
            tracker: Default::default(),
            side: SyncRam::default(),
            sges: Default::default(),
            state: Default::default(),
            kind: Default::default(),
            qpn: Default::default(),
            pkt_opcode_q: Default::default(),
            pkt_psn_q: Default::default(),
            pkt_has_aeth_q: Default::default(),
            pkt_syndrome_q: Default::default(),
            pkt_payload_len_q: Default::default(),
            pkt_orig_q: Default::default(),
            timer_rnr_q: Default::default(),
            post_kind_q: Default::default(),
            post_opcode_q: Default::default(),
            post_npsn_q: Default::default(),
            post_len_q: Default::default(),
            post_signaled_q: Default::default(),
            post_status_q: Default::default(),
            post_lkey_q: Default::default(),
            post_va_q: Default::default(),
            max_sent_q: Default::default(),
            timeout_q: Default::default(),
            retry_cnt_q: Default::default(),
            rnr_retry_q: Default::default(),
            mtu_q: Default::default(),
            w_state: Default::default(),
            w_next_psn: Default::default(),
            w_send_psn: Default::default(),
            w_una: Default::default(),
            w_ackreq_end: Default::default(),
            w_retry_left: Default::default(),
            w_rnr_left: Default::default(),
            rnr_waiting: Default::default(),
            retry_una_valid: Default::default(),
            retry_una: Default::default(),
            t_op: Default::default(),
            t_kind: Default::default(),
            t_code: Default::default(),
            c_op: Default::default(),
            c_psn: Default::default(),
            c_slot: Default::default(),
            c_completes: Default::default(),
            c_status: Default::default(),
            query: Default::default(),
            wqe_found: Default::default(),
            wqe_slot: Default::default(),
            wqe_kind: Default::default(),
            wqe_first: Default::default(),
            wqe_npsn: Default::default(),
            wqe_done: Default::default(),
            wqe_len: Default::default(),
            wqe_complete: Default::default(),
            wqe_error: Default::default(),
            act: Default::default(),
            ack_end: Default::default(),
            rnr_timer: Default::default(),
            nak_status: Default::default(),
            wqe_check: Default::default(),
            rd_offset: Default::default(),
            rd_len: Default::default(),
            rd_completes: Default::default(),
            lost: Default::default(),
            to_error: Default::default(),
            retry_timeout: Default::default(),
            place_failed: Default::default(),
            p_atomic: Default::default(),
            p_slot: Default::default(),
            p_offset: Default::default(),
            p_len: Default::default(),
            accepted: Default::default(),
            post_slot_q: Default::default(),
            max_rd_atomic_q: Default::default(),
            sent_next_q: Default::default(),
            sent_ackreq_q: Default::default(),
            sent_ackreq_end_q: Default::default(),
            sent_error_q: Default::default(),
            sent_status_q: Default::default(),
            ack_running: Default::default(),
            wqe_opcode: Default::default(),
            wqe_signaled: Default::default(),
            wqe_rd_before: Default::default(),
            g_valid: Default::default(),
            g_refusal: Default::default(),
            g_skipped: Default::default(),
            st_idle: Constant::new(bits::<4>(ST_IDLE)),
            st_load: Constant::new(bits::<4>(ST_LOAD)),
            st_issue: Constant::new(bits::<4>(ST_ISSUE)),
            st_wait: Constant::new(bits::<4>(ST_WAIT)),
            st_check: Constant::new(bits::<4>(ST_CHECK)),
            st_check_wait: Constant::new(bits::<4>(ST_CHECK_WAIT)),
            st_decide: Constant::new(bits::<4>(ST_DECIDE)),
            st_retry: Constant::new(bits::<4>(ST_RETRY)),
            st_rnr: Constant::new(bits::<4>(ST_RNR)),
            st_timer: Constant::new(bits::<4>(ST_TIMER)),
            st_end: Constant::new(bits::<4>(ST_END)),
            st_finish: Constant::new(bits::<4>(ST_FINISH)),
            st_grant: Constant::new(bits::<4>(ST_GRANT)),
            st_place: Constant::new(bits::<4>(ST_PLACE)),
            ev_response: Constant::new(bits::<3>(EV_RESPONSE)),
            ev_timer: Constant::new(bits::<3>(EV_TIMER)),
            ev_post: Constant::new(bits::<3>(EV_POST)),
            ev_clear: Constant::new(bits::<3>(EV_CLEAR)),
            ev_grant: Constant::new(bits::<3>(EV_GRANT)),
            ev_sent: Constant::new(bits::<3>(EV_SENT)),
            grant_not_rts: Constant::new(bits::<3>(grant_refusal::NOT_RTS)),
            grant_rnr_wait: Constant::new(bits::<3>(grant_refusal::RNR_WAIT)),
            grant_nothing: Constant::new(bits::<3>(grant_refusal::NOTHING)),
            grant_failed_wqe: Constant::new(bits::<3>(grant_refusal::FAILED_WQE)),
            grant_rd_atomic_limit: Constant::new(bits::<3>(grant_refusal::RD_ATOMIC_LIMIT)),
            qp_rts: Constant::new(bits::<3>(u64::from(qp_state::RTS))),
            qp_err: Constant::new(bits::<3>(u64::from(qp_state::ERR))),
            op_post: Constant::new(bits::<3>(sqt::OP_POST)),
            op_ack: Constant::new(bits::<3>(sqt::OP_ACK)),
            op_lookup: Constant::new(bits::<3>(sqt::OP_LOOKUP)),
            op_complete_response: Constant::new(bits::<3>(sqt::OP_COMPLETE_RESPONSE)),
            op_fail: Constant::new(bits::<3>(sqt::OP_FAIL)),
            op_flush: Constant::new(bits::<3>(sqt::OP_FLUSH)),
            op_clear: Constant::new(bits::<3>(sqt::OP_CLEAR)),
            action_drop: Constant::new(bits::<3>(rc::ACTION_DROP)),
            action_ack: Constant::new(bits::<3>(rc::ACTION_ACK)),
            action_rnr_nak: Constant::new(bits::<3>(rc::ACTION_RNR_NAK)),
            action_sequence_nak: Constant::new(bits::<3>(rc::ACTION_SEQUENCE_NAK)),
            action_error_nak: Constant::new(bits::<3>(rc::ACTION_ERROR_NAK)),
            action_atomic_ack: Constant::new(bits::<3>(rc::ACTION_ATOMIC_ACK)),
            wqe_ok: Constant::new(bits::<3>(rc::WQE_OK)),
            wqe_gap: Constant::new(bits::<3>(rc::WQE_GAP)),
            status_retry_exc: Constant::new(bits::<4>(wc_status::RETRY_EXC_ERR)),
            status_rnr_retry_exc: Constant::new(bits::<4>(wc_status::RNR_RETRY_EXC_ERR)),
            status_nak_base: Constant::new(bits::<4>(STATUS_NAK_BASE)),
            timer_none: Constant::new(bits::<2>(TIMER_NONE)),
            timer_arm: Constant::new(bits::<2>(TIMER_ARM)),
            timer_stop: Constant::new(bits::<2>(TIMER_STOP)),
            rnr_forever: Constant::new(bits::<3>(7)),
            op_acknowledge: Constant::new(bits::<8>(rc::OP_ACKNOWLEDGE)),
            ack_at_load: Default::default(),
            early_valid: Default::default(),
            early_op: Default::default(),
            early_psn: Default::default(),
            early_status: Default::default(),
            progress: Default::default(),
            progress_una: Default::default(),
            since_send: Default::default(),
            awaiting_after: Default::default(),
            awaiting_now: Default::default(),
            same_loss: Default::default(),
            send_behind: Default::default(),
            sent_past_max: Default::default(),
            sent_past_ackreq: Default::default(),
        }
    }
}

impl<const A: usize, const D: usize> Logic for CompleterDatapath<A, D> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            kind,
            qpn,
            pkt_opcode_q,
            pkt_psn_q,
            pkt_has_aeth_q,
            pkt_syndrome_q,
            pkt_payload_len_q,
            pkt_orig_q,
            timer_rnr_q,
            post_kind_q,
            post_opcode_q,
            post_npsn_q,
            post_len_q,
            post_signaled_q,
            post_status_q,
            post_lkey_q,
            post_va_q,
            max_sent_q,
            timeout_q,
            retry_cnt_q,
            rnr_retry_q,
            mtu_q,
            w_state,
            w_next_psn,
            w_send_psn,
            w_una,
            w_ackreq_end,
            w_retry_left,
            w_rnr_left,
            rnr_waiting,
            retry_una_valid,
            retry_una,
            t_op,
            t_kind,
            t_code,
            c_op,
            c_psn,
            c_slot,
            c_completes,
            c_status,
            query,
            wqe_found,
            wqe_slot,
            wqe_kind,
            wqe_first,
            wqe_npsn,
            wqe_done,
            wqe_len,
            wqe_complete,
            wqe_error,
            act,
            ack_end,
            rnr_timer,
            nak_status,
            wqe_check,
            rd_offset,
            rd_len,
            rd_completes,
            lost,
            to_error,
            retry_timeout,
            place_failed,
            p_atomic,
            p_slot,
            p_offset,
            p_len,
            accepted,
            post_slot_q,
            max_rd_atomic_q,
            sent_next_q,
            sent_ackreq_q,
            sent_ackreq_end_q,
            sent_error_q,
            sent_status_q,
            ack_running,
            wqe_opcode,
            wqe_signaled,
            wqe_rd_before,
            g_valid,
            g_refusal,
            g_skipped
        );
        clock!(self, clock, checker, tracker, side, sges);
        self.checker.reset.next = self.reset.val();
        self.tracker.reset.next = self.reset.val();

        // ---- the checker: the packet, the context as taken, the WQE found
        self.ack_at_load.next = (self.state.q.val() == self.st_load.val())
            & (self.kind.q.val() == self.ev_response.val())
            & (self.pkt_opcode_q.q.val() == self.op_acknowledge.val());
        self.checker.in_valid.next =
            (self.state.q.val() == self.st_check.val()) | self.ack_at_load.val();
        self.checker.in_tag.next = 0.into();
        self.checker.pkt_opcode.next = self.pkt_opcode_q.q.val();
        self.checker.pkt_psn.next = self.pkt_psn_q.q.val();
        self.checker.pkt_has_aeth.next = self.pkt_has_aeth_q.q.val();
        self.checker.pkt_aeth_syndrome.next = self.pkt_syndrome_q.q.val();
        self.checker.pkt_payload_len.next = self.pkt_payload_len_q.q.val();
        self.checker.ctx_state.next = self.w_state.q.val();
        self.checker.ctx_una_psn.next = self.w_una.q.val();
        self.checker.ctx_max_sent_psn.next = self.max_sent_q.q.val();
        self.checker.ctx_path_mtu.next = self.mtu_q.q.val();
        self.checker.wqe_found.next = self.wqe_found.q.val();
        self.checker.wqe_kind.next = self.wqe_kind.q.val();
        self.checker.wqe_first_psn.next = self.wqe_first.q.val();
        self.checker.wqe_npsn.next = self.wqe_npsn.q.val();
        self.checker.wqe_done_psn.next = self.wqe_done.q.val();
        self.checker.wqe_len.next = self.wqe_len.q.val();
        self.checker.wqe_complete.next = self.wqe_complete.q.val();
        self.checker.wqe_error.next = self.wqe_error.q.val();
        self.checker.out_ready.next = true;

        // ---- the tracker: the command in c_* (or `early_*`, below)
        self.tracker.cmd_valid.next = self.state.q.val() == self.st_issue.val();
        self.tracker.cmd_op.next = self.c_op.q.val();
        self.tracker.cmd_qpn.next = self.qpn.q.val();
        self.tracker.cmd_psn.next = self.c_psn.q.val();
        self.tracker.cmd_next_psn.next = self.w_next_psn.q.val();
        self.tracker.cmd_slot.next = self.c_slot.q.val();
        self.tracker.cmd_completes.next = self.c_completes.q.val();
        self.tracker.cmd_status.next = self.c_status.q.val();
        self.tracker.cmd_kind.next = self.post_kind_q.q.val();
        self.tracker.cmd_opcode.next = self.post_opcode_q.q.val();
        self.tracker.cmd_first_psn.next = self.w_next_psn.q.val();
        self.tracker.cmd_npsn.next = self.post_npsn_q.q.val();
        self.tracker.cmd_len.next = self.post_len_q.q.val();
        self.tracker.cmd_signaled.next = self.post_signaled_q.q.val();
        self.tracker.cqe_ready.next = self.cqe.ready.val();
        self.cqe.valid.next = self.tracker.cqe_valid.val();
        self.cqe.qpn.next = self.tracker.cqe_qpn.val();
        self.cqe.slot.next = self.tracker.cqe_slot.val();
        self.cqe.status.next = self.tracker.cqe_status.val();
        self.cqe.opcode.next = self.tracker.cqe_opcode.val();
        self.cqe.byte_len.next = self.tracker.cqe_byte_len.val();

        // ---- the side RAM: read when an event is taken, written when done
        self.side.read_address.next = self.ev_qpn.val();
        self.side.write_enable.next = self.state.q.val() == self.st_finish.val();
        self.side.write_address.next = self.qpn.q.val();
        self.side.write_data.next = bit_cast::<SIDE_BITS, 1>(self.rnr_waiting.q.val().into())
            | (bit_cast::<SIDE_BITS, 1>(self.retry_una_valid.q.val().into()) << 1)
            | (bit_cast::<SIDE_BITS, 24>(self.retry_una.q.val()) << 2)
            | (bit_cast::<SIDE_BITS, 1>(self.ack_running.q.val().into()) << 26);

        // ---- the local buffers: written when a post is taken, read at the
        // WQE a response belongs to (stable from its lookup to done)
        self.sges.write_enable.next = (self.state.q.val() == self.st_wait.val())
            & self.tracker.res_valid.val()
            & (self.c_op.q.val() == self.op_post.val())
            & self.tracker.res_accepted.val();
        self.sges.write_qpn.next = self.qpn.q.val();
        self.sges.write_slot.next = self.tracker.res_slot.val();
        self.sges.write_data.next = bit_cast::<SGE_BITS, 64>(self.post_va_q.q.val())
            | (bit_cast::<SGE_BITS, 32>(self.post_lkey_q.q.val()) << 64);
        self.sges.read_qpn.next = self.qpn.q.val();
        self.sges.read_slot.next = self.wqe_slot.q.val();
        // A grant is done in the cycle after its lookup's result: the read
        // starts with the result.
        if (self.state.q.val() == self.st_wait.val())
            & self.tracker.res_valid.val()
            & (self.c_op.q.val() == self.op_lookup.val())
        {
            self.sges.read_slot.next = self.tracker.res_slot.val();
        }

        // ---- progress (the model's `progress`) at the una a walk found:
        // after a walk that moved una, and after every placed response.
        self.progress.next = false;
        self.progress_una.next = self.tracker.res_una.val();
        if (self.state.q.val() == self.st_wait.val())
            & self.tracker.res_valid.val()
            & (self.c_op.q.val() == self.op_ack.val())
        {
            self.progress.next =
                self.query.q.val() | (self.tracker.res_una.val() != self.w_una.q.val());
        }
        self.since_send.next = self.progress_una.val() - self.w_send_psn.q.val();
        self.awaiting_after.next = self.w_ackreq_end.q.val() - self.progress_una.val();
        self.awaiting_now.next = self.w_ackreq_end.q.val() - self.w_una.q.val();
        self.send_behind.next = self.w_send_psn.q.val() - self.w_next_psn.q.val();
        self.sent_past_max.next = self.sent_next_q.q.val() - self.max_sent_q.q.val();
        self.sent_past_ackreq.next = self.sent_ackreq_end_q.q.val() - self.w_ackreq_end.q.val();
        self.same_loss.next = !self.retry_timeout.q.val()
            & self.retry_una_valid.q.val()
            & (self.retry_una.q.val() == self.w_una.q.val());

        // ---- a ring command presented at once: the one that
        // `ST_LOAD` (a response's lookup, a post, a grant's first lookup)
        // or `ST_CHECK_WAIT` (the implicit-ACK walk) decides; the state
        // logic below makes the same choice and sets c_* alike.
        self.early_valid.next = false;
        self.early_op.next = self.op_lookup.val();
        self.early_psn.next = self.pkt_psn_q.q.val();
        self.early_status.next = 0.into();
        if self.state.q.val() == self.st_load.val() {
            if self.kind.q.val() == self.ev_response.val() {
                self.early_valid.next = !self.ack_at_load.val();
            } else if self.kind.q.val() == self.ev_post.val() {
                self.early_valid.next = (self.w_state.q.val() == self.qp_rts.val())
                    | (self.w_state.q.val() == self.qp_err.val());
                self.early_op.next = self.op_post.val();
                self.early_status.next = self.post_status_q.q.val();
            } else if self.kind.q.val() == self.ev_grant.val() {
                self.early_valid.next = (self.w_state.q.val() == self.qp_rts.val())
                    & !self.side.read_data.val().get_bit(0)
                    & self.send_behind.val().get_bit(23);
                self.early_psn.next = self.w_send_psn.q.val();
            }
        }
        if (self.state.q.val() == self.st_check_wait.val())
            & self.checker.out_valid.val()
            & (self.checker.out_action.val() != self.action_drop.val())
        {
            self.early_valid.next = true;
            self.early_op.next = self.op_ack.val();
            self.early_psn.next = self.checker.out_ack_end.val();
        }
        if self.early_valid.val() {
            self.tracker.cmd_valid.next = true;
            self.tracker.cmd_op.next = self.early_op.val();
            self.tracker.cmd_psn.next = self.early_psn.val();
            self.tracker.cmd_status.next = self.early_status.val();
        }

        // The next event is taken in the done's own cycle as well: the
        // done's outputs come from registers, and the event loop never
        // offers an event of the done's QP then (its side word is written
        // in this cycle).
        self.ev_ready.next = false;
        if (self.state.q.val() == self.st_idle.val()) | (self.state.q.val() == self.st_finish.val())
        {
            self.ev_ready.next = true;
            self.state.d.next = self.st_idle.val();
            if self.ev_valid.val() {
                self.kind.d.next = self.ev_kind.val();
                self.qpn.d.next = self.ev_qpn.val();
                self.pkt_opcode_q.d.next = self.pkt_opcode.val();
                self.pkt_psn_q.d.next = self.pkt_psn.val();
                self.pkt_has_aeth_q.d.next = self.pkt_has_aeth.val();
                self.pkt_syndrome_q.d.next = self.pkt_aeth_syndrome.val();
                self.pkt_payload_len_q.d.next = self.pkt_payload_len.val();
                self.pkt_orig_q.d.next = self.pkt_atomic_orig.val();
                self.timer_rnr_q.d.next = self.timer_rnr.val();
                self.post_kind_q.d.next = self.post_kind.val();
                self.post_opcode_q.d.next = self.post_opcode.val();
                self.post_npsn_q.d.next = self.post_npsn.val();
                self.post_len_q.d.next = self.post_len.val();
                self.post_signaled_q.d.next = self.post_signaled.val();
                self.post_status_q.d.next = self.post_status.val();
                self.post_lkey_q.d.next = self.post_lkey.val();
                self.post_va_q.d.next = self.post_va.val();
                self.max_sent_q.d.next = self.ctx_max_sent_psn.val();
                self.timeout_q.d.next = self.ctx_timeout.val();
                self.retry_cnt_q.d.next = self.ctx_retry_cnt.val();
                self.rnr_retry_q.d.next = self.ctx_rnr_retry.val();
                self.mtu_q.d.next = self.ctx_path_mtu.val();
                self.w_state.d.next = self.ctx_state.val();
                self.w_next_psn.d.next = self.ctx_next_psn.val();
                self.w_send_psn.d.next = self.ctx_send_psn.val();
                self.w_una.d.next = self.ctx_una_psn.val();
                self.w_ackreq_end.d.next = self.ctx_ackreq_end_psn.val();
                self.w_retry_left.d.next = self.ctx_retry_left.val();
                self.w_rnr_left.d.next = self.ctx_rnr_left.val();
                self.t_op.d.next = self.timer_none.val();
                self.t_kind.d.next = false;
                self.t_code.d.next = 0.into();
                self.query.d.next = false;
                self.lost.d.next = false;
                self.to_error.d.next = false;
                self.retry_timeout.d.next = false;
                self.act.d.next = self.action_drop.val();
                self.wqe_check.d.next = 0.into();
                self.place_failed.d.next = false;
                self.p_atomic.d.next = false;
                self.p_slot.d.next = 0.into();
                self.p_offset.d.next = 0.into();
                self.p_len.d.next = 0.into();
                self.accepted.d.next = false;
                self.post_slot_q.d.next = 0.into();
                self.max_rd_atomic_q.d.next = self.ctx_max_rd_atomic.val();
                self.sent_next_q.d.next = self.sent_next_psn.val();
                self.sent_ackreq_q.d.next = self.sent_ackreq.val();
                self.sent_ackreq_end_q.d.next = self.sent_ackreq_end.val();
                self.sent_error_q.d.next = self.sent_error.val();
                self.sent_status_q.d.next = self.sent_status.val();
                self.g_valid.d.next = false;
                self.g_refusal.d.next = 0.into();
                self.g_skipped.d.next = 0.into();
                self.wqe_found.d.next = false;
                self.c_completes.d.next = false;
                self.c_status.d.next = 0.into();
                self.c_slot.d.next = 0.into();
                self.state.d.next = self.st_load.val();
            }
        } else if self.state.q.val() == self.st_load.val() {
            self.rnr_waiting.d.next = self.side.read_data.val().get_bit(0);
            self.retry_una_valid.d.next = self.side.read_data.val().get_bit(1);
            self.retry_una.d.next = self.side.read_data.val().get_bits::<24>(2);
            self.ack_running.d.next = self.side.read_data.val().get_bit(26);
            if self.kind.q.val() == self.ev_response.val() {
                if self.ack_at_load.val() {
                    self.state.d.next = self.st_check_wait.val();
                } else {
                    self.c_op.d.next = self.op_lookup.val();
                    self.c_psn.d.next = self.pkt_psn_q.q.val();
                    self.state.d.next = self.st_issue.val();
                }
            } else if self.kind.q.val() == self.ev_timer.val() {
                self.state.d.next = self.st_timer.val();
            } else if self.kind.q.val() == self.ev_post.val() {
                self.c_op.d.next = self.op_post.val();
                self.c_status.d.next = self.post_status_q.q.val();
                self.state.d.next = self.st_finish.val();
                if (self.w_state.q.val() == self.qp_rts.val())
                    | (self.w_state.q.val() == self.qp_err.val())
                {
                    self.state.d.next = self.st_issue.val();
                }
            } else if self.kind.q.val() == self.ev_clear.val() {
                self.c_op.d.next = self.op_clear.val();
                self.t_op.d.next = self.timer_stop.val();
                self.rnr_waiting.d.next = false;
                self.ack_running.d.next = false;
                self.retry_una_valid.d.next = false;
                self.retry_una.d.next = 0.into();
                self.state.d.next = self.st_issue.val();
            } else if self.kind.q.val() == self.ev_grant.val() {
                self.state.d.next = self.st_finish.val();
                if self.w_state.q.val() != self.qp_rts.val() {
                    self.g_refusal.d.next = self.grant_not_rts.val();
                } else if self.side.read_data.val().get_bit(0) {
                    self.g_refusal.d.next = self.grant_rnr_wait.val();
                } else if !self.send_behind.val().get_bit(23) {
                    self.g_refusal.d.next = self.grant_nothing.val();
                } else {
                    self.c_op.d.next = self.op_lookup.val();
                    self.c_psn.d.next = self.w_send_psn.q.val();
                    self.state.d.next = self.st_issue.val();
                }
            } else if self.kind.q.val() == self.ev_sent.val() {
                // The packets' cursor updates at once (each only moves
                // forward), the ACK timer armed by the first AckReq packet
                // if it was not running.
                self.w_send_psn.d.next = self.sent_next_q.q.val();
                if !self.sent_past_max.val().get_bit(23) & self.sent_past_max.val().any() {
                    self.max_sent_q.d.next = self.sent_next_q.q.val();
                }
                if self.sent_ackreq_q.q.val() {
                    if !self.sent_past_ackreq.val().get_bit(23) & self.sent_past_ackreq.val().any()
                    {
                        self.w_ackreq_end.d.next = self.sent_ackreq_end_q.q.val();
                    }
                    if !self.side.read_data.val().get_bit(26) & self.timeout_q.q.val().any() {
                        self.ack_running.d.next = true;
                        self.t_op.d.next = self.timer_arm.val();
                        self.t_kind.d.next = false;
                        self.t_code.d.next = self.timeout_q.q.val();
                    }
                }
                self.state.d.next = self.st_finish.val();
                if self.sent_error_q.q.val() {
                    // The model's `local_error`: the WQE at the cursor
                    // fails; the drain after it decides the move to ERR.
                    self.c_op.d.next = self.op_fail.val();
                    self.c_psn.d.next = self.sent_next_q.q.val();
                    self.c_status.d.next = self.sent_status_q.q.val();
                    self.state.d.next = self.st_issue.val();
                }
            } else {
                self.c_op.d.next = self.op_flush.val();
                self.state.d.next = self.st_issue.val();
            }
        } else if self.state.q.val() == self.st_grant.val() {
            self.state.d.next = self.st_finish.val();
            if !self.send_behind.val().get_bit(23) {
                self.g_refusal.d.next = self.grant_nothing.val();
            } else {
                self.c_op.d.next = self.op_lookup.val();
                self.c_psn.d.next = self.w_send_psn.q.val();
                self.state.d.next = self.st_issue.val();
            }
        } else if self.state.q.val() == self.st_issue.val() {
            if self.tracker.cmd_ready.val() {
                self.state.d.next = self.st_wait.val();
            }
        } else if self.state.q.val() == self.st_wait.val() {
            if self.tracker.res_valid.val() {
                if (self.c_op.q.val() != self.op_flush.val())
                    & (self.c_op.q.val() != self.op_clear.val())
                    & self.tracker.res_to_error.val()
                {
                    self.to_error.d.next = true;
                }
                if self.c_op.q.val() == self.op_lookup.val() {
                    self.wqe_found.d.next = self.tracker.res_found.val();
                    self.wqe_slot.d.next = self.tracker.res_slot.val();
                    self.wqe_kind.d.next = self.tracker.res_wqe_kind.val();
                    self.wqe_first.d.next = self.tracker.res_wqe_first_psn.val();
                    self.wqe_npsn.d.next = self.tracker.res_wqe_npsn.val();
                    self.wqe_done.d.next = self.tracker.res_wqe_done_psn.val();
                    self.wqe_len.d.next = self.tracker.res_wqe_len.val();
                    self.wqe_complete.d.next = self.tracker.res_wqe_complete.val();
                    self.wqe_error.d.next = self.tracker.res_wqe_error.val().any();
                    self.wqe_opcode.d.next = self.tracker.res_wqe_opcode.val();
                    self.wqe_signaled.d.next = self.tracker.res_wqe_signaled.val();
                    self.wqe_rd_before.d.next = self.tracker.res_rd_atomic_before.val();
                    self.state.d.next = self.st_check.val();
                    if self.kind.q.val() == self.ev_grant.val() {
                        // The grant's WQE decided as it arrives: skipped,
                        // refused or granted.
                        self.state.d.next = self.st_finish.val();
                        if !self.tracker.res_found.val() {
                            self.g_refusal.d.next = self.grant_nothing.val();
                        } else if self.tracker.res_wqe_complete.val() {
                            // Acknowledged while the cursor was rewound.
                            self.w_send_psn.d.next = self.tracker.res_wqe_first_psn.val()
                                + self.tracker.res_wqe_npsn.val();
                            self.g_skipped.d.next = self.g_skipped.q.val() + 1;
                            self.state.d.next = self.st_grant.val();
                        } else if self.tracker.res_wqe_error.val().any() {
                            self.g_refusal.d.next = self.grant_failed_wqe.val();
                        } else if self.tracker.res_wqe_kind.val().get_bit(1)
                            & (self.tracker.res_rd_atomic_before.val()
                                >= bit_cast::<8, 5>(self.max_rd_atomic_q.q.val()))
                        {
                            self.g_refusal.d.next = self.grant_rd_atomic_limit.val();
                        } else {
                            self.g_valid.d.next = true;
                        }
                    }
                } else if self.c_op.q.val() == self.op_ack.val() {
                    self.w_una.d.next = self.tracker.res_una.val();
                    if !self.query.q.val() {
                        self.lost.d.next = self.tracker.res_lost.val();
                        self.state.d.next = self.st_decide.val();
                        // An ACK with nothing lost and no move to ERR has
                        // nothing left for `ST_DECIDE` to do.
                        if (self.act.q.val() == self.action_ack.val())
                            & !self.tracker.res_lost.val()
                            & !((self.to_error.q.val() | self.tracker.res_to_error.val())
                                & (self.w_state.q.val() != self.qp_err.val()))
                        {
                            self.state.d.next = self.st_finish.val();
                        }
                    } else {
                        self.state.d.next = self.st_end.val();
                    }
                } else if self.c_op.q.val() == self.op_complete_response.val() {
                    // The una after the mark: a walk that changes nothing.
                    self.c_op.d.next = self.op_ack.val();
                    self.c_psn.d.next = self.ack_end.q.val();
                    self.query.d.next = true;
                    self.state.d.next = self.st_issue.val();
                } else if self.c_op.q.val() == self.op_fail.val() {
                    self.c_op.d.next = self.op_flush.val();
                    self.state.d.next = self.st_issue.val();
                    if (self.kind.q.val() == self.ev_sent.val()) | self.place_failed.q.val() {
                        self.state.d.next = self.st_end.val();
                    }
                } else if self.c_op.q.val() == self.op_flush.val() {
                    // The ring is empty: una is the next PSN.
                    self.w_state.d.next = self.qp_err.val();
                    self.w_una.d.next = self.w_next_psn.q.val();
                    self.rnr_waiting.d.next = false;
                    self.ack_running.d.next = false;
                    self.t_op.d.next = self.timer_stop.val();
                    self.t_kind.d.next = false;
                    self.t_code.d.next = 0.into();
                    self.state.d.next = self.st_finish.val();
                } else if self.c_op.q.val() == self.op_post.val() {
                    self.accepted.d.next = self.tracker.res_accepted.val();
                    self.post_slot_q.d.next = self.tracker.res_slot.val();
                    if self.w_state.q.val() == self.qp_err.val() {
                        self.c_op.d.next = self.op_flush.val();
                        self.state.d.next = self.st_issue.val();
                    } else {
                        if self.tracker.res_accepted.val() {
                            self.w_next_psn.d.next =
                                self.w_next_psn.q.val() + self.post_npsn_q.q.val();
                        }
                        // A post runs no drain: no failed head to act on.
                        self.state.d.next = self.st_finish.val();
                    }
                } else {
                    self.state.d.next = self.st_finish.val();
                }
            }
        } else if self.state.q.val() == self.st_check.val() {
            self.state.d.next = self.st_check_wait.val();
        } else if self.state.q.val() == self.st_check_wait.val() {
            if self.checker.out_valid.val() {
                self.act.d.next = self.checker.out_action.val();
                self.ack_end.d.next = self.checker.out_ack_end.val();
                self.rnr_timer.d.next = self.checker.out_rnr_timer.val();
                self.nak_status.d.next = self.checker.out_status.val();
                self.wqe_check.d.next = self.checker.out_wqe.val();
                self.rd_offset.d.next = self.checker.out_offset.val();
                self.rd_len.d.next = self.checker.out_len.val();
                self.rd_completes.d.next = self.checker.out_completes_wqe.val();
                self.state.d.next = self.st_finish.val();
                if self.checker.out_action.val() != self.action_drop.val() {
                    self.c_op.d.next = self.op_ack.val();
                    self.c_psn.d.next = self.checker.out_ack_end.val();
                    self.state.d.next = self.st_issue.val();
                }
            }
        } else if self.state.q.val() == self.st_decide.val() {
            // `ST_END` at once for the actions that do nothing more.
            self.state.d.next = self.st_finish.val();
            if self.to_error.q.val() & (self.w_state.q.val() != self.qp_err.val()) {
                self.c_op.d.next = self.op_flush.val();
                self.state.d.next = self.st_issue.val();
            }
            if self.act.q.val() == self.action_ack.val() {
                if self.lost.q.val() {
                    self.state.d.next = self.st_retry.val();
                }
            } else if self.act.q.val() == self.action_rnr_nak.val() {
                self.state.d.next = self.st_rnr.val();
                if self.lost.q.val() {
                    self.state.d.next = self.st_retry.val();
                }
            } else if self.act.q.val() == self.action_sequence_nak.val() {
                self.state.d.next = self.st_retry.val();
            } else if self.act.q.val() == self.action_error_nak.val() {
                self.c_op.d.next = self.op_fail.val();
                self.c_psn.d.next = self.pkt_psn_q.q.val();
                self.c_status.d.next =
                    bit_cast::<4, 2>(self.nak_status.q.val()) + self.status_nak_base.val();
                self.state.d.next = self.st_issue.val();
            } else if self.lost.q.val() | (self.wqe_check.q.val() == self.wqe_gap.val()) {
                self.state.d.next = self.st_retry.val();
            } else if self.wqe_check.q.val() == self.wqe_ok.val() {
                // The complete_response the placement's success issues.
                self.p_slot.d.next = self.wqe_slot.q.val();
                self.c_op.d.next = self.op_complete_response.val();
                self.c_slot.d.next = self.wqe_slot.q.val();
                self.state.d.next = self.st_place.val();
                if self.act.q.val() == self.action_atomic_ack.val() {
                    self.p_atomic.d.next = true;
                    self.p_offset.d.next = 0.into();
                    self.p_len.d.next = 8.into();
                    self.c_psn.d.next = self.wqe_first.q.val() + self.wqe_npsn.q.val();
                    self.c_completes.d.next = true;
                } else {
                    self.p_offset.d.next = self.rd_offset.q.val();
                    self.p_len.d.next = self.rd_len.q.val();
                    self.c_psn.d.next = self.wqe_done.q.val() + 1;
                    self.c_completes.d.next = self.rd_completes.q.val();
                }
            }
        } else if self.state.q.val() == self.st_place.val() {
            if self.place_result_valid.val() {
                self.state.d.next = self.st_issue.val();
                if self.place_result_error.val() {
                    // The model's `local_error`: the WQE fails and nothing
                    // progresses; the drain at the end moves the QP to
                    // ERR if the WQE is the oldest.
                    self.place_failed.d.next = true;
                    self.c_op.d.next = self.op_fail.val();
                    self.c_psn.d.next = self.pkt_psn_q.q.val();
                    self.c_status.d.next = self.place_result_status.val();
                }
            }
        } else if self.state.q.val() == self.st_retry.val() {
            self.state.d.next = self.st_end.val();
            if self.same_loss.val() {
                self.state.d.next = self.st_end.val();
            } else if self.w_retry_left.q.val() == 0 {
                self.c_op.d.next = self.op_fail.val();
                self.c_psn.d.next = self.w_una.q.val();
                self.c_status.d.next = self.status_retry_exc.val();
                self.state.d.next = self.st_issue.val();
            } else {
                self.w_retry_left.d.next = self.w_retry_left.q.val() - 1;
                self.retry_una_valid.d.next = true;
                self.retry_una.d.next = self.w_una.q.val();
                self.w_send_psn.d.next = self.w_una.q.val();
                self.w_ackreq_end.d.next = self.w_una.q.val();
                self.ack_running.d.next = false;
                if !self.rnr_waiting.q.val() {
                    self.t_op.d.next = self.timer_stop.val();
                    self.t_kind.d.next = false;
                    self.t_code.d.next = 0.into();
                }
            }
        } else if self.state.q.val() == self.st_rnr.val() {
            self.state.d.next = self.st_end.val();
            if self.rnr_waiting.q.val() {
                self.state.d.next = self.st_end.val();
            } else if self.w_rnr_left.q.val() == 0 {
                self.c_op.d.next = self.op_fail.val();
                self.c_psn.d.next = self.w_una.q.val();
                self.c_status.d.next = self.status_rnr_retry_exc.val();
                self.state.d.next = self.st_issue.val();
            } else {
                if self.rnr_retry_q.q.val() != self.rnr_forever.val() {
                    self.w_rnr_left.d.next = self.w_rnr_left.q.val() - 1;
                }
                self.rnr_waiting.d.next = true;
                self.ack_running.d.next = false;
                self.w_send_psn.d.next = self.w_una.q.val();
                self.w_ackreq_end.d.next = self.w_una.q.val();
                self.t_op.d.next = self.timer_arm.val();
                self.t_kind.d.next = true;
                self.t_code.d.next = self.rnr_timer.q.val();
            }
        } else if self.state.q.val() == self.st_timer.val() {
            self.state.d.next = self.st_finish.val();
            if self.w_state.q.val() == self.qp_rts.val() {
                if self.timer_rnr_q.q.val() {
                    if self.rnr_waiting.q.val() {
                        self.rnr_waiting.d.next = false;
                        self.w_send_psn.d.next = self.w_una.q.val();
                    }
                } else {
                    // The ACK timer fired: it runs no more (the model
                    // clears it, and a retry re-arms at transmit).
                    self.ack_running.d.next = false;
                    if !self.awaiting_now.val().get_bit(23) & self.awaiting_now.val().any() {
                        self.retry_timeout.d.next = true;
                        self.state.d.next = self.st_retry.val();
                    }
                }
            }
        } else if self.state.q.val() == self.st_end.val() {
            self.state.d.next = self.st_finish.val();
            if self.to_error.q.val() & (self.w_state.q.val() != self.qp_err.val()) {
                self.c_op.d.next = self.op_flush.val();
                self.state.d.next = self.st_issue.val();
            }
        } else {
            self.state.d.next = self.st_idle.val();
        }

        // A command the tracker took at once is awaited, not presented.
        if self.early_valid.val() & self.tracker.cmd_ready.val() {
            self.state.d.next = self.st_wait.val();
        }

        // After the state logic, which may take the same registers: a
        // progress overrides nothing it does not own.
        if self.progress.val() {
            self.w_retry_left.d.next = self.retry_cnt_q.q.val();
            self.w_rnr_left.d.next = self.rnr_retry_q.q.val();
            self.retry_una_valid.d.next = false;
            if !self.since_send.val().get_bit(23) & self.since_send.val().any() {
                self.w_send_psn.d.next = self.progress_una.val();
            }
            self.ack_running.d.next = false;
            if !self.awaiting_after.val().get_bit(23)
                & self.awaiting_after.val().any()
                & self.timeout_q.q.val().any()
            {
                self.ack_running.d.next = true;
                self.t_op.d.next = self.timer_arm.val();
                self.t_kind.d.next = false;
                self.t_code.d.next = self.timeout_q.q.val();
            } else if !self.rnr_waiting.q.val() {
                self.t_op.d.next = self.timer_stop.val();
                self.t_kind.d.next = false;
                self.t_code.d.next = 0.into();
            }
        }

        self.done_valid.next = self.state.q.val() == self.st_finish.val();
        self.done_qpn.next = self.qpn.q.val();
        self.wb_state.next = self.w_state.q.val();
        self.wb_next_psn.next = self.w_next_psn.q.val();
        self.wb_send_psn.next = self.w_send_psn.q.val();
        self.wb_una_psn.next = self.w_una.q.val();
        self.wb_ackreq_end_psn.next = self.w_ackreq_end.q.val();
        self.wb_retry_left.next = self.w_retry_left.q.val();
        self.wb_rnr_left.next = self.w_rnr_left.q.val();
        self.done_retry_una_valid.next = self.retry_una_valid.q.val();
        self.done_retry_una.next = self.retry_una.q.val();
        self.done_rnr_waiting.next = self.rnr_waiting.q.val();
        self.done_ack_running.next = self.ack_running.q.val();
        self.wb_max_sent_psn.next = self.max_sent_q.q.val();
        self.grant_valid.next = self.g_valid.q.val();
        self.grant_refusal.next = self.g_refusal.q.val();
        self.grant_skipped.next = self.g_skipped.q.val();
        self.grant_slot.next = self.wqe_slot.q.val();
        self.grant_kind.next = self.wqe_kind.q.val();
        self.grant_opcode.next = self.wqe_opcode.q.val();
        self.grant_first_psn.next = self.wqe_first.q.val();
        self.grant_npsn.next = self.wqe_npsn.q.val();
        self.grant_len.next = self.wqe_len.q.val();
        self.grant_signaled.next = self.wqe_signaled.q.val();
        self.grant_lkey.next = self.sges.read_data.val().get_bits::<32>(64);
        self.grant_va.next = self.sges.read_data.val().get_bits::<64>(0);
        self.grant_resume_psn.next = self.w_send_psn.q.val();
        self.done_action.next = self.act.q.val();
        self.done_wqe_check.next = self.wqe_check.q.val();
        self.timer_op.next = self.t_op.q.val();
        self.timer_kind.next = self.t_kind.q.val();
        self.timer_code.next = self.t_code.q.val();
        self.place_valid.next = self.state.q.val() == self.st_place.val();
        self.place_atomic.next = self.p_atomic.q.val();
        self.place_slot.next = self.p_slot.q.val();
        self.place_offset.next = self.p_offset.q.val();
        self.place_len.next = self.p_len.q.val();
        self.place_atomic_orig.next = self.pkt_orig_q.q.val();
        self.place_lkey.next = self.sges.read_data.val().get_bits::<32>(64);
        self.place_va.next =
            self.sges.read_data.val().get_bits::<64>(0) + bit_cast::<64, 32>(self.p_offset.q.val());
        self.post_accepted.next = self.accepted.q.val();
        self.post_slot.next = self.post_slot_q.q.val();

        if self.reset.val() {
            self.state.d.next = self.st_idle.val();
        }
    }
}

/// The local buffer (`{lkey[31:0], va[63:0]}`, [`SGE_BITS`]) of every ring
/// slot, addressed `{qpn, slot}`; a slot is read only for a WQE a post
/// wrote, and a read of the address written in the same cycle only
/// happens in a post, which does not use the data.
pub type SgeRam<const A: usize, const D: usize> = QpSlotRam<Bits<SGE_BITS>, A, D>;
