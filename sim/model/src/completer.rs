//! Completer (rxe_comp.c): consumes ACKs, NAKs, READ responses and atomic
//! ACKs for the send queue, runs the local ACK timeout and RNR timers,
//! decides Go-Back-N retries, and writes send completions in posting
//! order. Also owns the transition to ERR with its flush of every queue.

use crate::dma::{sgl_segments, write_segments, LocalError};
use crate::nic::Env;
use crate::qp::{Qp, RespItem, WqeKind};
use crate::timers::rnr_timer_ns;
use crate::verbs::{Access, Cqe, QpState, SendOp, WcOpcode, WcStatus};
use crate::Time;
use rocenic_wire::{op, psn, syndrome, AethKind, RoceFrame};

/// Why the requester goes back to the oldest unacknowledged PSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Retry {
    /// Local ACK timeout: always a new attempt.
    Timeout,
    /// A PSN-sequence NAK, or a response that shows an earlier READ or
    /// atomic response (or part of one) was lost.
    Implicit,
}

/// Handles an RC response packet (opcodes 0x0D..=0x12) for `qp`.
pub(crate) fn on_response(qp: &mut Qp, env: &mut Env, now: Time, f: &RoceFrame) {
    if qp.state != QpState::Rts {
        env.drop_frame("qp_state");
        return;
    }
    let p = f.bth.psn;
    let una = qp.sq.una();
    if psn::diff(p, una) < 0 {
        env.drop_frame("duplicate_response");
        return;
    }
    if psn::diff(p, qp.sq.max_sent_end) >= 0 {
        env.drop_frame("response_out_of_window");
        return;
    }
    match f.bth.opcode {
        op::ACKNOWLEDGE => {
            let Some(aeth) = f.ext.aeth else {
                env.drop_frame("bad_aeth");
                return;
            };
            match aeth.kind() {
                AethKind::Ack { .. } => {
                    env.counters.acks_received += 1;
                    if implicit_ack(qp, now, psn::add(p, 1)) {
                        retry(qp, env, Retry::Implicit);
                    }
                }
                AethKind::RnrNak { timer } => {
                    env.counters.naks_received.rnr += 1;
                    if implicit_ack(qp, now, p) {
                        retry(qp, env, Retry::Implicit);
                    } else {
                        rnr_wait(qp, env, now, timer);
                    }
                }
                AethKind::Nak { code: 0 } => {
                    env.counters.naks_received.psn_sequence += 1;
                    // The NAK acknowledges everything before its PSN, which
                    // is where the responder wants us to resume.
                    implicit_ack(qp, now, p);
                    retry(qp, env, Retry::Implicit);
                }
                AethKind::Nak { code } if code <= 4 => {
                    let status = match code {
                        2 => {
                            env.counters.naks_received.remote_access += 1;
                            WcStatus::RemAccessErr
                        }
                        3 => {
                            env.counters.naks_received.remote_operational += 1;
                            WcStatus::RemOpErr
                        }
                        _ => {
                            env.counters.naks_received.invalid_request += 1;
                            WcStatus::RemInvReqErr
                        }
                    };
                    implicit_ack(qp, now, p);
                    fail_at(qp, env, p, status);
                }
                _ => env.drop_frame("bad_aeth"),
            }
        }
        op::ATOMIC_ACKNOWLEDGE => {
            if implicit_ack(qp, now, p) {
                retry(qp, env, Retry::Implicit);
                return;
            }
            let Some(idx) = qp.sq.index_of(p) else {
                env.drop_frame("unexpected_response");
                return;
            };
            let w = &qp.sq.wqes[idx];
            if w.kind != WqeKind::Atomic || w.complete || w.first_psn != p {
                env.drop_frame("unexpected_response");
                return;
            }
            let orig = f.ext.atomic_ack_eth.map_or(0, |a| a.orig);
            // Host memory is little-endian (x86): the original value lands
            // as a native u64.
            match sgl_segments(env.mrs, qp.pd, &w.wr.sgl, 0, 8, Access::LOCAL_WRITE) {
                Ok(segs) => {
                    write_segments(env.memory, &segs, &orig.to_le_bytes());
                    let w = &mut qp.sq.wqes[idx];
                    w.done_psn = w.end_psn();
                    w.complete = true;
                    progress(qp, now);
                }
                Err(e) => qp.sq.wqes[idx].error = Some(local_status(e)),
            }
        }
        op::READ_RESPONSE_FIRST
        | op::READ_RESPONSE_MIDDLE
        | op::READ_RESPONSE_LAST
        | op::READ_RESPONSE_ONLY => on_read_response(qp, env, now, f),
        _ => env.drop_frame("unexpected_opcode"),
    }
}

fn on_read_response(qp: &mut Qp, env: &mut Env, now: Time, f: &RoceFrame) {
    let p = f.bth.psn;
    if implicit_ack(qp, now, p) {
        retry(qp, env, Retry::Implicit);
        return;
    }
    let Some(idx) = qp.sq.index_of(p) else {
        env.drop_frame("unexpected_response");
        return;
    };
    let mtu = u64::from(qp.mtu());
    let w = &qp.sq.wqes[idx];
    if w.kind != WqeKind::Read || w.complete || w.error.is_some() {
        env.drop_frame("unexpected_response");
        return;
    }
    let d = psn::diff(p, w.done_psn);
    if d < 0 {
        env.drop_frame("duplicate_response");
        return;
    }
    if d > 0 {
        // A response packet in between was lost: ask again from there.
        env.drop_frame("response_gap");
        retry(qp, env, Retry::Implicit);
        return;
    }
    // Packets of a (possibly resumed) READ: every one but the last carries
    // a full MTU; the last carries the rest. A resumed READ restarts with
    // FIRST (or ONLY) at any PSN of the range.
    let i = psn::diff(p, w.first_psn) as u64;
    let is_last = p == w.last_psn();
    let off = i * mtu;
    let want = if is_last { w.len - off } else { mtu };
    let opcode_ok = match f.bth.opcode {
        op::READ_RESPONSE_FIRST | op::READ_RESPONSE_MIDDLE => !is_last,
        _ => is_last,
    };
    if !opcode_ok || f.payload.len() as u64 != want {
        // IBA C9-... says a malformed response is a Bad Response error;
        // the packet may also be a stale one from an earlier attempt of a
        // READ whose length we see differently, so it is only dropped and
        // the retry machinery repairs the READ.
        env.drop_frame("bad_response");
        return;
    }
    match sgl_segments(env.mrs, qp.pd, &w.wr.sgl, off, want, Access::LOCAL_WRITE) {
        Ok(segs) => {
            write_segments(env.memory, &segs, &f.payload);
            let w = &mut qp.sq.wqes[idx];
            w.done_psn = psn::add(w.done_psn, 1);
            if w.done_psn == w.end_psn() {
                w.complete = true;
            }
            progress(qp, now);
        }
        Err(e) => qp.sq.wqes[idx].error = Some(local_status(e)),
    }
}

fn local_status(e: LocalError) -> WcStatus {
    match e {
        LocalError::Length => WcStatus::LocLenErr,
        LocalError::Protection => WcStatus::LocProtErr,
    }
}

/// Acknowledges every PSN before `end`: SEND/WRITE WQEs entirely before it
/// complete. Returns true when that range covers a READ or atomic whose
/// response has not (fully) arrived: the responder has executed it, so
/// its response was lost and the requester must retry.
fn implicit_ack(qp: &mut Qp, now: Time, end: u32) -> bool {
    let before = qp.sq.una();
    let mut lost = false;
    for w in qp.sq.wqes.iter_mut() {
        if w.complete {
            continue;
        }
        if w.error.is_some() {
            break;
        }
        if psn::diff(end, w.end_psn()) >= 0 {
            if w.kind.needs_response() {
                lost = true;
                break;
            }
            w.done_psn = w.end_psn();
            w.complete = true;
        } else {
            if !w.kind.needs_response() && psn::diff(end, w.done_psn) > 0 {
                w.done_psn = end;
            }
            break;
        }
    }
    if qp.sq.una() != before {
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
    let idx = qp
        .sq
        .index_of(p)
        .filter(|&i| !qp.sq.wqes[i].complete)
        .or_else(|| qp.sq.wqes.iter().position(|w| !w.complete));
    if let Some(i) = idx {
        qp.sq.wqes[i].error = Some(status);
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
}

fn wc_opcode(op: &SendOp) -> WcOpcode {
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
    while let Some(w) = qp.sq.wqes.front() {
        if w.complete {
            let w = qp.sq.wqes.pop_front().expect("front exists");
            if w.wr.signaled {
                env.complete(
                    qp.send_cq,
                    Cqe {
                        wr_id: w.wr.wr_id,
                        status: WcStatus::Success,
                        opcode: wc_opcode(&w.wr.op),
                        qpn: qp.qpn,
                        byte_len: w.len as u32,
                        imm: None,
                        invalidated_rkey: None,
                    },
                );
            }
        } else if w.error.is_some() {
            move_to_error(qp, env);
            return;
        } else {
            return;
        }
    }
}

/// Any state -> ERR: every send WQE not yet completed completes with its
/// own error or WR_FLUSH_ERR, in order, then every receive WQE (the one
/// in progress first); timers stop. Queued NAKs still go out so the peer
/// learns why.
pub(crate) fn move_to_error(qp: &mut Qp, env: &mut Env) {
    qp.state = QpState::Err;
    for w in std::mem::take(&mut qp.sq.wqes) {
        env.complete(
            qp.send_cq,
            Cqe {
                wr_id: w.wr.wr_id,
                status: w.error.unwrap_or(WcStatus::WrFlushErr),
                opcode: wc_opcode(&w.wr.op),
                qpn: qp.qpn,
                byte_len: 0,
                imm: None,
                invalidated_rkey: None,
            },
        );
    }
    qp.sq.ack_timer = None;
    qp.sq.rnr_until = None;
    if let Some(crate::qp::InProgress::Send { wr, .. }) = qp.resp.cur.take() {
        qp.rq.push_front(wr);
    }
    for r in std::mem::take(&mut qp.rq) {
        env.complete(qp.recv_cq, flush_recv(qp.qpn, r.wr_id));
    }
    qp.resp
        .out
        .retain(|i| matches!(i, RespItem::Ack { syndrome: s, .. } if s & syndrome::TYPE_MASK != 0));
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
