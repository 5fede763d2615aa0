//! Completer (rxe_comp.c): consumes ACKs, NAKs, READ responses and atomic
//! ACKs for the send queue, runs the local ACK timeout and RNR timers,
//! decides Go-Back-N retries, and writes send completions in posting
//! order. Also owns the transition to ERR with its flush of every queue.

use crate::dma::{sgl_segments, write_segments, LocalError};
use crate::mr::{DmaSegment, MrTable};
use crate::nic::Env;
pub use crate::qp::WqeKind;
use crate::qp::{Qp, SendWqe};
use crate::send_queue::{self, RingOp, RingWqe, SendCqe, WqeRecord};
use crate::timers::rnr_timer_ns;
use crate::verbs::{Access, Cqe, PdId, QpState, RecvWr, SendOp, Sge, WcOpcode, WcStatus};
use crate::Time;
use rocenic_wire::{op, psn, Aeth, AethKind, RoceFrame};
use std::collections::VecDeque;

/// Why the requester goes back to the oldest unacknowledged PSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Retry {
    /// Local ACK timeout: always a new attempt.
    Timeout,
    /// A PSN-sequence NAK, or a response that shows an earlier READ or
    /// atomic response (or part of one) was lost.
    Implicit,
}

/// Why the completer drops a response packet before looking at its WQE
/// (the `rx_dropped` reason is [`ResponseDrop::reason`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseDrop {
    /// The QP is not in RTS.
    QpState,
    /// The PSN is before the oldest unacknowledged one.
    DuplicateResponse,
    /// The PSN is at or after the end of what was ever sent.
    ResponseOutOfWindow,
    /// An ACK without AETH, or with a reserved syndrome or NAK code.
    BadAeth,
    /// Not an RC response opcode.
    UnexpectedOpcode,
}

impl ResponseDrop {
    pub fn reason(self) -> &'static str {
        match self {
            ResponseDrop::QpState => "qp_state",
            ResponseDrop::DuplicateResponse => "duplicate_response",
            ResponseDrop::ResponseOutOfWindow => "response_out_of_window",
            ResponseDrop::BadAeth => "bad_aeth",
            ResponseDrop::UnexpectedOpcode => "unexpected_opcode",
        }
    }
}

/// What the completer does with a response packet, decided from its header
/// and the QP's state and PSN window alone. Every variant but `Drop`
/// starts with an implicit ACK of every PSN before `ack_end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseAction {
    Drop(ResponseDrop),
    /// ACK: then Go-Back-N if the ACK covers an unanswered READ/atomic.
    Ack {
        ack_end: u32,
    },
    /// RNR NAK: Go-Back-N as for an ACK, else wait for RNR timer `timer`.
    RnrNak {
        ack_end: u32,
        timer: u8,
    },
    /// PSN sequence error NAK: Go-Back-N from `ack_end`.
    SequenceNak {
        ack_end: u32,
    },
    /// NAK invalid request (also code 4, invalid RD request), remote
    /// access or remote operational error: the WQE holding the PSN fails
    /// with `status` and the QP goes to ERR.
    ErrorNak {
        ack_end: u32,
        status: WcStatus,
    },
    /// Atomic ACK: Go-Back-N if the implicit ACK found a lost response,
    /// else [`check_atomic_ack`] on the WQE holding the PSN.
    AtomicAck {
        ack_end: u32,
    },
    /// READ response: Go-Back-N if the implicit ACK found a lost response,
    /// else [`check_read_response`] on the WQE holding the PSN.
    ReadResponse {
        ack_end: u32,
    },
}

/// The per-packet decision of [`on_response`] before it touches the send
/// queue: QP state, PSN window (`una` .. `max_sent_end`), opcode and AETH.
pub fn classify_response(
    state: QpState,
    una: u32,
    max_sent_end: u32,
    opcode: u8,
    aeth: Option<Aeth>,
    p: u32,
) -> ResponseAction {
    if state != QpState::Rts {
        return ResponseAction::Drop(ResponseDrop::QpState);
    }
    if psn::diff(p, una) < 0 {
        return ResponseAction::Drop(ResponseDrop::DuplicateResponse);
    }
    if psn::diff(p, max_sent_end) >= 0 {
        return ResponseAction::Drop(ResponseDrop::ResponseOutOfWindow);
    }
    match opcode {
        op::ACKNOWLEDGE => {
            let Some(aeth) = aeth else {
                return ResponseAction::Drop(ResponseDrop::BadAeth);
            };
            match aeth.kind() {
                AethKind::Ack { .. } => ResponseAction::Ack {
                    ack_end: psn::add(p, 1),
                },
                AethKind::RnrNak { timer } => ResponseAction::RnrNak { ack_end: p, timer },
                // The NAK acknowledges everything before its PSN, which
                // is where the responder wants us to resume.
                AethKind::Nak { code: 0 } => ResponseAction::SequenceNak { ack_end: p },
                AethKind::Nak { code } if code <= 4 => ResponseAction::ErrorNak {
                    ack_end: p,
                    status: match code {
                        2 => WcStatus::RemAccessErr,
                        3 => WcStatus::RemOpErr,
                        _ => WcStatus::RemInvReqErr,
                    },
                },
                _ => ResponseAction::Drop(ResponseDrop::BadAeth),
            }
        }
        op::ATOMIC_ACKNOWLEDGE => ResponseAction::AtomicAck { ack_end: p },
        op::READ_RESPONSE_FIRST
        | op::READ_RESPONSE_MIDDLE
        | op::READ_RESPONSE_LAST
        | op::READ_RESPONSE_ONLY => ResponseAction::ReadResponse { ack_end: p },
        _ => ResponseAction::Drop(ResponseDrop::UnexpectedOpcode),
    }
}

/// What the response checks read of the send WQE holding a response's PSN
/// (as the tracker of the send queue ring would present it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WqeView {
    pub kind: WqeKind,
    pub first_psn: u32,
    pub npsn: u32,
    /// First PSN not yet acknowledged / answered.
    pub done_psn: u32,
    /// Message length in bytes.
    pub len: u64,
    pub complete: bool,
    /// The WQE has failed (it completes in error in order).
    pub error: bool,
}

impl WqeView {
    pub(crate) fn of(w: &SendWqe) -> WqeView {
        WqeView {
            kind: w.kind,
            first_psn: w.first_psn,
            npsn: w.npsn,
            done_psn: w.done_psn,
            len: w.len,
            complete: w.complete,
            error: w.error.is_some(),
        }
    }

    pub fn end_psn(&self) -> u32 {
        psn::add(self.first_psn, self.npsn)
    }

    pub fn last_psn(&self) -> u32 {
        psn::add(self.first_psn, self.npsn.wrapping_sub(1))
    }
}

/// Why a READ response or atomic ACK is dropped after its WQE was looked
/// at (the `rx_dropped` reason is [`WqeDrop::reason`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WqeDrop {
    /// No WQE holds the PSN, or it is of the wrong kind, already complete,
    /// failed (READ) or the PSN is not its first (atomic).
    Unexpected,
    /// A READ response packet already placed.
    Duplicate,
    /// A READ response packet after one that was lost: Go-Back-N.
    Gap,
    /// Wrong opcode for its place in the READ, or wrong payload length.
    BadResponse,
}

impl WqeDrop {
    pub fn reason(self) -> &'static str {
        match self {
            WqeDrop::Unexpected => "unexpected_response",
            WqeDrop::Duplicate => "duplicate_response",
            WqeDrop::Gap => "response_gap",
            WqeDrop::BadResponse => "bad_response",
        }
    }
}

/// Where a READ response packet's payload goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadPlacement {
    /// Byte offset within the READ's message.
    pub offset: u64,
    /// Payload bytes (what the packet must carry).
    pub len: u64,
    /// The packet is the READ's last: the WQE completes once it is placed.
    pub completes_wqe: bool,
}

/// The checks of a READ response packet against the WQE holding its PSN
/// (`None`: no WQE does), for a path MTU of `mtu` bytes.
pub fn check_read_response(
    wqe: Option<&WqeView>,
    mtu: u32,
    opcode: u8,
    p: u32,
    payload_len: u64,
) -> Result<ReadPlacement, WqeDrop> {
    let Some(w) = wqe else {
        return Err(WqeDrop::Unexpected);
    };
    if w.kind != WqeKind::Read || w.complete || w.error {
        return Err(WqeDrop::Unexpected);
    }
    let d = psn::diff(p, w.done_psn);
    if d < 0 {
        return Err(WqeDrop::Duplicate);
    }
    if d > 0 {
        return Err(WqeDrop::Gap);
    }
    // Packets of a (possibly resumed) READ: every one but the last carries
    // a full MTU; the last carries the rest. A resumed READ restarts with
    // FIRST (or ONLY) at any PSN of the range.
    let mtu = u64::from(mtu);
    let i = psn::diff(p, w.first_psn) as u64;
    let is_last = p == w.last_psn();
    let offset = i * mtu;
    let want = if is_last { w.len - offset } else { mtu };
    let opcode_ok = match opcode {
        op::READ_RESPONSE_FIRST | op::READ_RESPONSE_MIDDLE => !is_last,
        _ => is_last,
    };
    if !opcode_ok || payload_len != want {
        // IBA C9-... says a malformed response is a Bad Response error;
        // the packet may also be a stale one from an earlier attempt of a
        // READ whose length we see differently, so it is only dropped and
        // the retry machinery repairs the READ.
        return Err(WqeDrop::BadResponse);
    }
    Ok(ReadPlacement {
        offset,
        len: want,
        completes_wqe: psn::add(w.done_psn, 1) == w.end_psn(),
    })
}

/// The checks of an atomic ACK against the WQE holding its PSN (`None`: no
/// WQE does): an atomic, not complete, and the PSN is its own.
pub fn check_atomic_ack(wqe: Option<&WqeView>, p: u32) -> Result<(), WqeDrop> {
    match wqe {
        Some(w) if w.kind == WqeKind::Atomic && !w.complete && w.first_psn == p => Ok(()),
        _ => Err(WqeDrop::Unexpected),
    }
}

/// The outcome of the WQE check of a READ response or atomic ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WqeOutcome {
    Read(Result<ReadPlacement, WqeDrop>),
    Atomic(Result<(), WqeDrop>),
}

/// One response packet as the completer saw it: the inputs of
/// [`classify_response`] and of the WQE checks, and their outcomes. A
/// [`crate::nic::Nic`] keeps them when asked to
/// ([`crate::nic::Nic::record_responses`]), so the RTL of the decision can
/// be checked against real runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseRecord {
    pub state: QpState,
    pub una: u32,
    pub max_sent_end: u32,
    pub opcode: u8,
    pub aeth: Option<Aeth>,
    pub psn: u32,
    pub payload_len: u64,
    pub mtu: u32,
    /// The WQE holding the PSN when the packet arrived.
    pub wqe: Option<WqeView>,
    pub action: ResponseAction,
    /// The WQE check's outcome, when it ran: READ responses and atomic
    /// ACKs whose implicit ACK found no lost response.
    pub wqe_outcome: Option<WqeOutcome>,
    /// The local buffer's check ([`place_check`]), when the WQE check
    /// passed: `Ok` (the data written, the response marked, progress) or
    /// the status the WQE failed with ([`local_error`]; no progress).
    pub placement: Option<Result<(), WcStatus>>,
}

/// A QP's send-side transport state as the completer reads and changes
/// it: the fields of the RTL's QP context record, the completer's own
/// per-QP state (`retry_una`, the RNR wait) and the timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqSnapshot {
    pub state: QpState,
    pub next_psn: u32,
    pub send_psn: u32,
    pub una: u32,
    pub max_sent_end: u32,
    pub ackreq_end: u32,
    pub retry_left: u8,
    pub rnr_left: u8,
    pub retry_una: Option<u32>,
    pub ack_timer: Option<Time>,
    pub rnr_until: Option<Time>,
    /// The attributes (0 when the QP never reached RTS).
    pub timeout: u8,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub max_rd_atomic: u8,
    pub mtu: u32,
}

impl SqSnapshot {
    pub(crate) fn of(qp: &Qp) -> SqSnapshot {
        let sq = &qp.sq;
        let attrs = qp.send;
        SqSnapshot {
            state: qp.state,
            next_psn: sq.next_psn,
            send_psn: sq.send_psn,
            una: sq.una(),
            max_sent_end: sq.max_sent_end,
            ackreq_end: sq.ackreq_end,
            retry_left: sq.retry_left,
            rnr_left: sq.rnr_left,
            retry_una: sq.retry_una,
            ack_timer: sq.ack_timer,
            rnr_until: sq.rnr_until,
            timeout: attrs.map_or(0, |a| a.timeout),
            retry_cnt: attrs.map_or(0, |a| a.retry_cnt),
            rnr_retry: attrs.map_or(0, |a| a.rnr_retry),
            max_rd_atomic: attrs.map_or(0, |a| a.max_rd_atomic),
            mtu: qp.mtu(),
        }
    }
}

/// What started a completer event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompleterEvent {
    /// A send WQE accepted by `post_send`: in RTS queued, in ERR completed
    /// at once with WR_FLUSH_ERR (the record is what it would have been).
    Post {
        record: WqeRecord,
        wr_id: u64,
        /// Its first local buffer, where a READ response or atomic ACK
        /// lands.
        sge: Option<Sge>,
    },
    /// A response packet (opcodes 0x0D..=0x12), with the drain after it.
    Response {
        opcode: u8,
        psn: u32,
        aeth: Option<Aeth>,
        payload_len: u64,
        atomic_orig: u64,
    },
    /// [`on_timer`] in RTS with a timer due: the end of an RNR wait
    /// (`rnr`) and/or the local ACK timeout (`ack`).
    Timer { rnr: bool, ack: bool },
    /// The QP moved to ERR outside the completer's own events
    /// (`modify_qp`, a responder error): every send WQE flushed.
    ToError,
    /// The QP went back to RESET (`modify_qp`): its ring emptied without
    /// completions, its completer state forgotten.
    Clear,
    /// A transmit grant: what the requester sends from next, at WQE
    /// granularity ([`crate::requester::grant_choice`]): the first PSN of
    /// the WQE at the send cursor (after skipping acknowledged ones; the
    /// resume PSN is the cursor after the event), or why nothing.
    ///
    /// Recorded when the model's `next_request` starts sending from a WQE
    /// (its first packet after any other event of the QP, or of another
    /// WQE), when the window holds back the first packet of a WQE (a grant
    /// followed by a `Sent` of no packet), when the first packet fails its
    /// local check, and when it refuses (a refusal that changes nothing
    /// is recorded once: not again while the QP's last record is the same
    /// refusal). DCQCN pacing is the scheduler's and is not recorded.
    Grant {
        wqe: Result<u32, crate::requester::GrantRefusal>,
        /// WQEs skipped (acknowledged while the cursor was rewound).
        skipped: u32,
    },
    /// The status of a grant: the packets the model sent from its WQE in
    /// a row, from the `Grant` to the next event of the QP or the next
    /// `next_request` call that sends from elsewhere: the send cursor after
    /// them, the PSN after the last one with AckReq (if any did), and
    /// the local error the last one failed with (then the WQE is failed
    /// and the drain after it is part of the event).
    Sent {
        first_psn: u32,
        next_psn: u32,
        ackreq_end: Option<u32>,
        error: Option<WcStatus>,
    },
}

/// One completer event of one QP: the QP's state before and after it
/// and the send CQEs it wrote. A [`crate::nic::Nic`] keeps them when asked
/// to ([`crate::nic::Nic::record_completer`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompleterRecord {
    pub qpn: u32,
    pub event: CompleterEvent,
    pub before: SqSnapshot,
    /// `None` only while the event is being handled.
    pub after: Option<SqSnapshot>,
    pub cqes: Vec<SendCqe>,
}

/// Handles an RC response packet (opcodes 0x0D..=0x12) for `qp`.
pub(crate) fn on_response(qp: &mut Qp, env: &mut Env, now: Time, f: &RoceFrame) {
    let p = f.bth.psn;
    let action = classify_response(
        qp.state,
        qp.sq.una(),
        qp.sq.max_sent_end,
        f.bth.opcode,
        f.ext.aeth,
        p,
    );
    let record = env.response_log.is_some().then(|| ResponseRecord {
        state: qp.state,
        una: qp.sq.una(),
        max_sent_end: qp.sq.max_sent_end,
        opcode: f.bth.opcode,
        aeth: f.ext.aeth,
        psn: p,
        payload_len: f.payload.len() as u64,
        mtu: qp.mtu(),
        wqe: qp.sq.index_of(p).map(|i| WqeView::of(&qp.sq.wqes[i])),
        action,
        wqe_outcome: None,
        placement: None,
    });
    let (wqe_outcome, placement) = act_on_response(qp, env, now, f, action);
    if let (Some(log), Some(record)) = (env.response_log.as_mut(), record) {
        log.push(ResponseRecord {
            wqe_outcome,
            placement,
            ..record
        });
    }
}

/// The outcome of a placement's local check: `Err` is the WC status.
type Placed = Result<(), WcStatus>;

fn act_on_response(
    qp: &mut Qp,
    env: &mut Env,
    now: Time,
    f: &RoceFrame,
    action: ResponseAction,
) -> (Option<WqeOutcome>, Option<Placed>) {
    match action {
        ResponseAction::Drop(why) => env.drop_frame(why.reason()),
        ResponseAction::Ack { ack_end } => {
            env.counters.acks_received += 1;
            if implicit_ack(qp, env, now, ack_end) {
                retry(qp, env, Retry::Implicit);
            }
        }
        ResponseAction::RnrNak { ack_end, timer } => {
            env.counters.naks_received.rnr += 1;
            if implicit_ack(qp, env, now, ack_end) {
                retry(qp, env, Retry::Implicit);
            } else {
                rnr_wait(qp, env, now, timer);
            }
        }
        ResponseAction::SequenceNak { ack_end } => {
            env.counters.naks_received.psn_sequence += 1;
            implicit_ack(qp, env, now, ack_end);
            retry(qp, env, Retry::Implicit);
        }
        ResponseAction::ErrorNak { ack_end, status } => {
            let naks = &mut env.counters.naks_received;
            match status {
                WcStatus::RemAccessErr => naks.remote_access += 1,
                WcStatus::RemOpErr => naks.remote_operational += 1,
                _ => naks.invalid_request += 1,
            }
            implicit_ack(qp, env, now, ack_end);
            fail_at(qp, env, f.bth.psn, status);
        }
        ResponseAction::AtomicAck { ack_end } => {
            return on_atomic_ack(qp, env, now, f, ack_end).map_or((None, None), |(o, placed)| {
                (Some(WqeOutcome::Atomic(o)), placed)
            });
        }
        ResponseAction::ReadResponse { ack_end } => {
            return on_read_response(qp, env, now, f, ack_end)
                .map_or((None, None), |(o, placed)| {
                    (Some(WqeOutcome::Read(o)), placed)
                });
        }
    }
    (None, None)
}

fn on_atomic_ack(
    qp: &mut Qp,
    env: &mut Env,
    now: Time,
    f: &RoceFrame,
    ack_end: u32,
) -> Option<(Result<(), WqeDrop>, Option<Placed>)> {
    let (p, idx, view) = answered_wqe(qp, env, now, f, ack_end)?;
    let outcome = check_atomic_ack(view.as_ref(), p);
    let (Ok(()), Some(idx)) = (outcome, idx) else {
        env.drop_frame(WqeDrop::Unexpected.reason());
        return Some((outcome, None));
    };
    let orig = f.ext.atomic_ack_eth.map_or(0, |a| a.orig);
    let end = qp.sq.wqes[idx].end_psn();
    // Host memory is little-endian (x86): the original value lands
    // as a native u64.
    let placed = place(qp, env, now, idx, p, 0, &orig.to_le_bytes(), end, true);
    Some((outcome, Some(placed)))
}

fn on_read_response(
    qp: &mut Qp,
    env: &mut Env,
    now: Time,
    f: &RoceFrame,
    ack_end: u32,
) -> Option<(Result<ReadPlacement, WqeDrop>, Option<Placed>)> {
    let (p, idx, view) = answered_wqe(qp, env, now, f, ack_end)?;
    let outcome = check_read_response(
        view.as_ref(),
        qp.mtu(),
        f.bth.opcode,
        p,
        f.payload.len() as u64,
    );
    let (Ok(at), Some(idx)) = (outcome, idx) else {
        if let Err(why) = outcome {
            env.drop_frame(why.reason());
            if why == WqeDrop::Gap {
                // A response packet in between was lost: ask again from
                // there.
                retry(qp, env, Retry::Implicit);
            }
        }
        return Some((outcome, None));
    };
    let done = psn::add(qp.sq.wqes[idx].done_psn, 1);
    let placed = place(
        qp,
        env,
        now,
        idx,
        p,
        at.offset,
        &f.payload,
        done,
        at.completes_wqe,
    );
    Some((outcome, Some(placed)))
}

/// The local check of a READ response's or atomic ACK's placement: bytes
/// `[offset, offset + len)` of the WQE's SGL must be writable through
/// their L_Keys (LOCAL_WRITE, in the QP's PD); else the status the WQE
/// fails with. The requester checked the same range when it sent the
/// request, so this fails only when an MR changed while the request was
/// in flight. In the RTL the check is the placement stage's
/// (`response_placement`, held to this function), after
/// `completer_datapath`, which waits for its answer. On success, the host
/// segments the bytes land in, in order; nothing is written on an error.
pub fn place_check(
    mrs: &MrTable,
    pd: PdId,
    sgl: &[Sge],
    offset: u64,
    len: u64,
) -> Result<Vec<DmaSegment>, WcStatus> {
    sgl_segments(mrs, pd, sgl, offset, len, Access::LOCAL_WRITE).map_err(local_status)
}

/// A checked response's `data` to bytes `offset..` of WQE `idx`'s buffer
/// (the WQE holds `p`): written, the response marked up to `done`, and
/// progress; or, when [`place_check`] fails, the WQE fails
/// ([`local_error`]) and nothing else changes.
#[allow(clippy::too_many_arguments)]
fn place(
    qp: &mut Qp,
    env: &mut Env,
    now: Time,
    idx: usize,
    p: u32,
    offset: u64,
    data: &[u8],
    done: u32,
    completes: bool,
) -> Placed {
    let sgl = &qp.sq.wqes[idx].wr.sgl;
    match place_check(env.mrs, qp.pd, sgl, offset, data.len() as u64) {
        Ok(segs) => {
            write_segments(env.memory, &segs, data);
            complete_response(qp, env, idx, p, done, completes);
            progress(qp, now);
            Ok(())
        }
        Err(status) => {
            local_error(qp, env, idx, p, status);
            Err(status)
        }
    }
}

/// The start of a READ response's or atomic ACK's handling: `None` when
/// the acknowledgement it implies up to `ack_end` shows an earlier
/// response lost (the requester then resends from there); else its PSN,
/// the WQE holding that PSN and a view of the WQE.
fn answered_wqe(
    qp: &mut Qp,
    env: &mut Env,
    now: Time,
    f: &RoceFrame,
    ack_end: u32,
) -> Option<(u32, Option<usize>, Option<WqeView>)> {
    if implicit_ack(qp, env, now, ack_end) {
        retry(qp, env, Retry::Implicit);
        return None;
    }
    let p = f.bth.psn;
    let idx = lookup(qp, env, p);
    Some((p, idx, idx.map(|i| WqeView::of(&qp.sq.wqes[i]))))
}

/// The WQE holding `p`, for a READ response or atomic ACK.
fn lookup(qp: &Qp, env: &mut Env, p: u32) -> Option<usize> {
    let idx = qp.sq.index_of(p);
    env.log_ring(qp.qpn, || RingOp::Lookup {
        psn: p,
        found: idx.map(|i| qp.sq.wqes[i].record()),
    });
    idx
}

/// [`send_queue::mark_response`] on WQE `idx`, which holds `p`.
fn complete_response(qp: &mut Qp, env: &mut Env, idx: usize, p: u32, done: u32, completes: bool) {
    env.log_ring(qp.qpn, || RingOp::CompleteResponse {
        psn: p,
        new_done: done,
        completes,
    });
    send_queue::mark_response(&mut qp.sq.wqes[idx], done, completes);
}

/// WQE `idx`, which holds `p` and is not complete, fails its local
/// checks: it completes in error when it reaches the head.
pub(crate) fn local_error(qp: &mut Qp, env: &mut Env, idx: usize, p: u32, status: WcStatus) {
    env.log_ring(qp.qpn, || RingOp::Fail { psn: p, status });
    debug_assert_eq!(send_queue::fail_choice(&qp.sq.wqes, p), Some(idx));
    qp.sq.wqes[idx].set_error(status);
}

fn local_status(e: LocalError) -> WcStatus {
    match e {
        LocalError::Length => WcStatus::LocLenErr,
        LocalError::Protection => WcStatus::LocProtErr,
    }
}

/// Acknowledges every PSN before `end` ([`send_queue::implicit_ack`]);
/// true when a READ or atomic response was lost.
fn implicit_ack(qp: &mut Qp, env: &mut Env, now: Time, end: u32) -> bool {
    let before = qp.sq.una();
    let lost = send_queue::implicit_ack(&mut qp.sq.wqes, end);
    let una = qp.sq.una();
    env.log_ring(qp.qpn, || RingOp::Ack {
        end,
        next_psn: qp.sq.next_psn,
        lost,
        una,
    });
    if una != before {
        progress(qp, now);
    }
    lost
}

/// Forward progress: retry budgets refill and the ACK timer restarts.
fn progress(qp: &mut Qp, now: Time) {
    let timeout = qp.ack_timeout_ns();
    let Some(attrs) = qp.send else { return };
    let sq = &mut qp.sq;
    sq.retry_left = attrs.retry_cnt;
    sq.rnr_left = attrs.rnr_retry;
    sq.retry_una = None;
    let una = sq.una();
    if psn::diff(una, sq.send_psn) > 0 {
        sq.send_psn = una;
    }
    sq.ack_timer = if sq.awaiting_ack() {
        timeout.map(|t| now + t)
    } else {
        None
    };
}

/// Go-Back-N to the oldest unacknowledged PSN, or fail the QP when the
/// retry budget is spent.
fn retry(qp: &mut Qp, env: &mut Env, why: Retry) {
    let una = qp.sq.una();
    if why == Retry::Implicit && qp.sq.retry_una == Some(una) {
        // Same loss as the retry already under way (a burst of gap
        // responses, a duplicated NAK): one rewind is enough.
        return;
    }
    if qp.sq.retry_left == 0 {
        fail_at(qp, env, una, WcStatus::RetryExcErr);
        return;
    }
    qp.sq.retry_left -= 1;
    qp.sq.retry_una = Some(una);
    qp.sq.send_psn = una;
    qp.sq.ackreq_end = una;
    // The timer restarts when the retransmission actually leaves (the
    // requester arms it): a retransmission held back by DCQCN pacing must
    // not time out before it was even sent.
    qp.sq.ack_timer = None;
}

/// Pauses the requester for the RNR timer the responder asked for.
fn rnr_wait(qp: &mut Qp, env: &mut Env, now: Time, code: u8) {
    if qp.sq.rnr_until.is_some() {
        return;
    }
    let una = qp.sq.una();
    if qp.sq.rnr_left == 0 {
        fail_at(qp, env, una, WcStatus::RnrRetryExcErr);
        return;
    }
    // rnr_retry 7 means retry forever (IBA 9.7.5.2.8).
    if qp.send.is_some_and(|a| a.rnr_retry != 7) {
        qp.sq.rnr_left -= 1;
    }
    env.counters.rnr_waits += 1;
    qp.sq.rnr_until = Some(now + rnr_timer_ns(code));
    qp.sq.send_psn = una;
    qp.sq.ackreq_end = una;
    qp.sq.ack_timer = None;
}

/// The WQE holding `p` (or the oldest incomplete one) fails with
/// `status`; completions run and the QP goes to ERR.
fn fail_at(qp: &mut Qp, env: &mut Env, p: u32, status: WcStatus) {
    env.log_ring(qp.qpn, || RingOp::Fail { psn: p, status });
    if let Some(i) = send_queue::fail_choice(&qp.sq.wqes, p) {
        qp.sq.wqes[i].set_error(status);
    }
    drain(qp, env);
    if qp.state != QpState::Err {
        move_to_error(qp, env);
    }
}

/// Fires the local ACK timeout and the end of an RNR wait.
pub(crate) fn on_timer(qp: &mut Qp, env: &mut Env, now: Time) {
    if qp.state != QpState::Rts {
        return;
    }
    let rnr = qp.sq.rnr_until.is_some_and(|t| t <= now);
    let ack = qp.sq.ack_timer.is_some_and(|t| t <= now);
    let opened =
        (rnr || ack) && env.begin_completer_event(qp, || CompleterEvent::Timer { rnr, ack });
    if qp.sq.rnr_until.is_some_and(|t| t <= now) {
        qp.sq.rnr_until = None;
        qp.sq.send_psn = qp.sq.una();
    }
    if qp.sq.ack_timer.is_some_and(|t| t <= now) {
        if !qp.sq.awaiting_ack() {
            qp.sq.ack_timer = None;
        } else {
            env.counters.timeouts += 1;
            retry(qp, env, Retry::Timeout);
        }
    }
    drain(qp, env);
    env.end_completer_event(qp, opened);
}

pub fn wc_opcode(op: &SendOp) -> WcOpcode {
    match op {
        SendOp::Send | SendOp::SendWithImm { .. } | SendOp::SendWithInv { .. } => WcOpcode::Send,
        SendOp::Write { .. } | SendOp::WriteWithImm { .. } => WcOpcode::RdmaWrite,
        SendOp::Read { .. } => WcOpcode::RdmaRead,
        SendOp::CompareSwap { .. } => WcOpcode::CompSwap,
        SendOp::FetchAdd { .. } => WcOpcode::FetchAdd,
    }
}

/// Writes the completions that are due, in posting order: finished WQEs
/// at the head of the queue; a failed one moves the QP to ERR.
pub(crate) fn drain(qp: &mut Qp, env: &mut Env) {
    let (done, failed) = send_queue::drain(&mut qp.sq.wqes);
    let mut logged = Vec::new();
    for w in done.iter().filter(|w| w.wr.signaled) {
        let cqe = Cqe {
            wr_id: w.wr.wr_id,
            status: WcStatus::Success,
            opcode: wc_opcode(&w.wr.op),
            qpn: qp.qpn,
            byte_len: w.len as u32,
            imm: None,
            invalidated_rkey: None,
        };
        logged.push(SendCqe::of(&cqe));
        env.complete(qp.send_cq, cqe);
    }
    if !done.is_empty() || failed {
        env.log_ring(qp.qpn, || RingOp::Drain {
            cqes: logged,
            failed,
        });
    }
    if failed {
        move_to_error(qp, env);
    }
}

/// Any state -> ERR: every send WQE not yet completed completes with its
/// own error or WR_FLUSH_ERR, in order, then every receive WQE (the one
/// in progress first); timers stop. Queued NAKs still go out so the peer
/// learns why.
pub(crate) fn move_to_error(qp: &mut Qp, env: &mut Env) {
    let opened = env.begin_completer_event(qp, || CompleterEvent::ToError);
    qp.state = QpState::Err;
    let mut logged = Vec::new();
    for (w, status) in send_queue::flush(&mut qp.sq.wqes) {
        let cqe = Cqe {
            wr_id: w.wr.wr_id,
            status,
            opcode: wc_opcode(&w.wr.op),
            qpn: qp.qpn,
            byte_len: 0,
            imm: None,
            invalidated_rkey: None,
        };
        logged.push(SendCqe::of(&cqe));
        env.complete(qp.send_cq, cqe);
    }
    env.log_ring(qp.qpn, || RingOp::Flush { cqes: logged });
    qp.sq.ack_timer = None;
    qp.sq.rnr_until = None;
    let in_progress = match qp.resp.cur.take() {
        Some(crate::qp::InProgress::Send { wr, .. }) => Some(wr),
        _ => None,
    };
    for cqe in flush_receive_queue(qp.qpn, in_progress, &mut qp.rq) {
        env.complete(qp.recv_cq, cqe);
    }
    qp.resp.out.flush_to_error();
    env.end_completer_event(qp, opened);
}

/// The receive queue's part of the move to ERR: the WQE of the SEND in
/// progress (if any) first, then every posted one in order, each with
/// WR_FLUSH_ERR; the queue is left empty. The RTL `receive_queue` keeps
/// the WQE of a message in progress at the head of its ring, so its flush
/// gives the same CQEs in the same order.
pub fn flush_receive_queue(
    qpn: u32,
    in_progress: Option<RecvWr>,
    rq: &mut VecDeque<RecvWr>,
) -> Vec<Cqe> {
    in_progress
        .into_iter()
        .chain(std::mem::take(rq))
        .map(|r| flush_recv(qpn, r.wr_id))
        .collect()
}

pub(crate) fn flush_recv(qpn: u32, wr_id: u64) -> Cqe {
    Cqe {
        wr_id,
        status: WcStatus::WrFlushErr,
        opcode: WcOpcode::Recv,
        qpn,
        byte_len: 0,
        imm: None,
        invalidated_rkey: None,
    }
}

/// A send WQE posted to a QP in ERR completes at once with WR_FLUSH_ERR.
pub(crate) fn flush_send(qpn: u32, wr_id: u64, op: &SendOp) -> Cqe {
    Cqe {
        wr_id,
        status: WcStatus::WrFlushErr,
        opcode: wc_opcode(op),
        qpn,
        byte_len: 0,
        imm: None,
        invalidated_rkey: None,
    }
}
