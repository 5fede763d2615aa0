//! Requester (rxe_req.c): picks the next request packet of a QP and builds
//! it at transmit time from the send queue's "next PSN to send" cursor, so
//! Go-Back-N only has to rewind the cursor. Payload is re-read from
//! registered memory through the L_Key on every (re)transmission, except
//! inline data, which the WQE carries. A WQE with the fence indicator
//! waits for every earlier READ and atomic to complete.

use crate::completer::SqSnapshot;
use crate::dma::{read_segments, sgl_segments, LocalError};
use crate::nic::{Env, TxClass};
use crate::qp::{Qp, SendWqe, WqeKind};
use crate::send_queue::{self, RingWqe};
use crate::verbs::{Access, QpState, SendOp, WcStatus};
use crate::Time;
use rocenic_wire::{op, psn, AtomicEth, Bth, ExtHeaders, Reth};
use std::collections::VecDeque;

/// Preamble, start delimiter, FCS and inter-frame gap: wire bytes a frame
/// costs beyond what `transmit` hands over.
pub(crate) const WIRE_OVERHEAD: usize = 24;

/// A request packet decided but not yet framed.
struct Request {
    bth: Bth,
    ext: ExtHeaders,
    payload: Vec<u8>,
    /// PSNs the packet consumes (a READ request covers its responses).
    psns: u32,
}

/// The next request frame of `qp`, if one may leave now. A WQE whose local
/// buffers fail their checks is marked failed instead (the caller drains
/// completions).
pub(crate) fn next_request(qp: &mut Qp, env: &mut Env, now: Time) -> Option<Vec<u8>> {
    let entry = env.completer_log.is_some().then(|| SqSnapshot::of(qp));
    let ready = qp.state == QpState::Rts && qp.sq.rnr_until.is_none();
    if ready {
        qp.send?;
        if env.config.dcqcn.reacts() && !qp.rp.may_send(now) {
            return None;
        }
    }
    let choice = grant_choice(
        qp.state,
        qp.sq.rnr_until.is_some(),
        qp.sq.send_psn,
        qp.sq.next_psn,
        &qp.sq.wqes,
        qp.send.map_or(0, |a| a.max_rd_atomic),
    );
    qp.sq.send_psn = choice.send_psn;
    let idx = match choice.wqe {
        Ok(idx) => idx,
        Err(refusal) => {
            if let Some(entry) = entry {
                env.record_grant(qp, entry, Err(refusal), choice.skipped);
            }
            return None;
        }
    };
    if fence_holds(&qp.sq.wqes, idx) {
        // The RTL does not implement FENCE (it is never given a fenced
        // WQE), so the completer log has no grant refusal for this wait.
        return None;
    }
    let send_psn = choice.send_psn;
    let wqe = &qp.sq.wqes[idx];
    let first_psn = wqe.first_psn;
    let psns = request_psns(&plan_input(qp, idx), send_psn);
    let Some(window_full) =
        window_gate(send_psn, psns, qp.sq.una(), env.config.max_outstanding_psns)
    else {
        if let Some(entry) = entry {
            env.record_grant(qp, entry, Ok(first_psn), choice.skipped);
            env.record_sent(qp, first_psn, SentPacket::None);
        }
        return None;
    };
    let req = match build(qp, idx, send_psn, env, window_full) {
        Ok(r) => r,
        Err(status) => {
            if let Some(entry) = entry {
                env.record_grant(qp, entry, Ok(first_psn), choice.skipped);
                env.record_sent(qp, first_psn, SentPacket::Error(status));
            }
            crate::completer::local_error(qp, env, idx, send_psn, status);
            return None;
        }
    };
    let bytes = crate::tx::frame(
        env,
        qp,
        TxClass::Request,
        req.bth,
        req.ext,
        req.payload,
        true,
    )?;
    if let Some(entry) = entry {
        env.record_grant(qp, entry, Ok(first_psn), choice.skipped);
    }

    let timeout = qp.ack_timeout_ns();
    let sq = &mut qp.sq;
    if psn::diff(send_psn, sq.max_sent_end) < 0 {
        env.counters.retransmitted_frames += 1;
    }
    let after = after_packet(
        SendProgress {
            send_psn,
            max_sent_end: sq.max_sent_end,
            ackreq_end: sq.ackreq_end,
        },
        req.psns,
        req.bth.ack_req,
    );
    sq.send_psn = after.send_psn;
    sq.max_sent_end = after.max_sent_end;
    sq.ackreq_end = after.ackreq_end;
    if req.bth.ack_req && sq.ack_timer.is_none() {
        sq.ack_timer = timeout.map(|t| now + t);
    }
    if env.config.dcqcn.reacts() {
        let bits = ((bytes.len() + WIRE_OVERHEAD) * 8) as f64;
        qp.rp.charge(now, bits);
        qp.rp.on_sent(&env.config.dcqcn, now, bytes.len() as u64);
    }
    if entry.is_some() {
        let end = psn::add(send_psn, req.psns);
        env.record_sent(
            qp,
            first_psn,
            SentPacket::Sent {
                end,
                ack_req: req.bth.ack_req,
            },
        );
    }
    Some(bytes)
}

/// Why the requester sends nothing from a QP (at WQE granularity; the
/// window and DCQCN pacing are the transmit scheduler's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GrantRefusal {
    /// Not in RTS.
    NotRts,
    /// An RNR wait is under way.
    RnrWait,
    /// The send cursor is at `next_psn` (or no WQE holds it).
    Nothing,
    /// The WQE at the cursor has failed its local checks (it completes in
    /// error when it reaches the head).
    FailedWqe,
    /// The WQE at the cursor is a READ or atomic and `max_rd_atomic`
    /// older ones are still unanswered.
    RdAtomicLimit,
}

/// What [`grant_choice`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrantChoice {
    /// The send cursor after skipping the WQEs acknowledged while it was
    /// rewound (the model writes it back whatever the outcome).
    pub send_psn: u32,
    /// WQEs skipped.
    pub skipped: u32,
    /// The index of the WQE to send from at `send_psn`, or why none.
    pub wqe: Result<usize, GrantRefusal>,
}

/// The WQE-level part of `next_request`: in RTS without an RNR wait, the
/// WQE whose PSN range holds the send cursor, after skipping complete
/// ones (moving the cursor to their end); refused at a failed WQE and at
/// a READ/atomic with `max_rd_atomic` unanswered READ/atomic WQEs before
/// it. The RTL's completer datapath grant event mirrors it.
pub fn grant_choice<W: RingWqe>(
    state: QpState,
    rnr_waiting: bool,
    send_psn: u32,
    next_psn: u32,
    wqes: &VecDeque<W>,
    max_rd_atomic: u8,
) -> GrantChoice {
    let mut choice = GrantChoice {
        send_psn,
        skipped: 0,
        wqe: Err(GrantRefusal::NotRts),
    };
    if let Err(refusal) = may_send(state, rnr_waiting, send_psn, next_psn) {
        choice.wqe = Err(refusal);
        return choice;
    }
    choice.wqe = loop {
        if psn::diff(choice.send_psn, next_psn) >= 0 {
            break Err(GrantRefusal::Nothing);
        }
        let Some(idx) = send_queue::index_of(wqes, choice.send_psn) else {
            break Err(GrantRefusal::Nothing);
        };
        let w = &wqes[idx];
        if w.complete() {
            // Acknowledged while the cursor was rewound: nothing to resend.
            choice.send_psn = w.end_psn();
            choice.skipped += 1;
            continue;
        }
        if w.error().is_some() {
            break Err(GrantRefusal::FailedWqe);
        }
        if w.kind().needs_response()
            && send_queue::unanswered_before(wqes, idx) >= usize::from(max_rd_atomic)
        {
            break Err(GrantRefusal::RdAtomicLimit);
        }
        break Ok(idx);
    };
    choice
}

/// IBA 10.8.3.3: WQE `idx` carries the fence indicator and a READ or
/// atomic posted before it has not completed, so it may not start yet
/// (the data it sends may depend on what they return).
pub(crate) fn fence_holds(wqes: &VecDeque<SendWqe>, idx: usize) -> bool {
    wqes[idx].wr.fence && send_queue::unanswered_before(wqes, idx) > 0
}

/// Whether a QP may send at all, before its WQEs are looked at: in RTS,
/// no RNR wait under way, the send cursor behind the next PSN; else the
/// refusal. The transmit scheduler's "sendable" (the RTL's ready set
/// queues a QP whose event leaves this `Ok`) and the start of
/// [`grant_choice`].
pub fn may_send(
    state: QpState,
    rnr_waiting: bool,
    send_psn: u32,
    next_psn: u32,
) -> Result<(), GrantRefusal> {
    if state != QpState::Rts {
        return Err(GrantRefusal::NotRts);
    }
    if rnr_waiting {
        return Err(GrantRefusal::RnrWait);
    }
    if psn::diff(send_psn, next_psn) >= 0 {
        return Err(GrantRefusal::Nothing);
    }
    Ok(())
}

/// The send window a grant carries: the configured `max_outstanding_psns`
/// clamped to 1 ..= 2^22 (a window of 0 would stop every QP; PSN
/// comparisons need live PSNs within half the 24-bit space).
pub fn send_window(max_outstanding: u32) -> u32 {
    max_outstanding.clamp(1, 1 << 22)
}

/// The send-side cursors a request packet moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendProgress {
    /// The packet's PSN before, the next PSN to send after.
    pub send_psn: u32,
    pub max_sent_end: u32,
    pub ackreq_end: u32,
}

/// The cursors after a packet at `before.send_psn` consuming `psns` PSNs,
/// with AckReq `ack_req`: the send cursor past it, the highest PSN ever
/// sent and the end of the last AckReq packet never move back. (The ACK
/// timer is armed by an AckReq packet when it is not running.)
pub fn after_packet(before: SendProgress, psns: u32, ack_req: bool) -> SendProgress {
    let send_psn = psn::add(before.send_psn, psns);
    let later = |a: u32, b: u32| if psn::diff(a, b) > 0 { a } else { b };
    SendProgress {
        send_psn,
        max_sent_end: later(send_psn, before.max_sent_end),
        ackreq_end: if ack_req {
            later(send_psn, before.ackreq_end)
        } else {
            before.ackreq_end
        },
    }
}

/// What one `next_request` call did with the WQE of an open grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SentPacket {
    /// The window held it back: nothing sent.
    None,
    /// A packet ending (next PSN) at `end`.
    Sent { end: u32, ack_req: bool },
    /// Its local buffer failed its check.
    Error(WcStatus),
}

fn local_status(e: LocalError) -> WcStatus {
    match e {
        LocalError::Length => WcStatus::LocLenErr,
        LocalError::Protection => WcStatus::LocProtErr,
    }
}

/// A WQE as the request planner sees it: plain values, without the SGL
/// (the payload is read through it once the packet is planned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WqePlanInput {
    pub op: SendOp,
    /// Message length in bytes (at most 2^31: longer WQEs fail at post
    /// time and are never sent).
    pub len: u64,
    pub first_psn: u32,
    /// PSNs the WQE owns ([`message_psns`]).
    pub npsn: u32,
    pub dest_qp: u32,
    pub solicited: bool,
}

/// Everything about one request packet except its payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestPlan {
    pub bth: Bth,
    pub ext: ExtHeaders,
    /// The packet is the message's first.
    pub first: bool,
    /// Nothing of the message follows the packet: the last SEND/WRITE
    /// packet, and every READ request (it asks for all remaining bytes) and
    /// atomic.
    pub last: bool,
    /// SEND/WRITE: where the payload starts in the message. READ: where
    /// the remaining response bytes land in the local buffer. Atomic: 0.
    pub payload_offset: u64,
    /// Payload bytes the packet carries (0 for READ and atomics).
    pub payload_len: u64,
    /// PSNs the packet consumes (a READ request covers its responses).
    pub psns: u32,
}

/// PSNs a message of `len` bytes owns at path MTU `mtu`: one per packet
/// (at least one), one for an atomic; a message over 2^31 bytes holds one
/// PSN for the local length error it completes with.
pub fn message_psns(op: &SendOp, len: u64, mtu: u32) -> u32 {
    match WqeKind::of(op) {
        WqeKind::Atomic => 1,
        _ if len > 1 << 31 => 1,
        _ => len.div_ceil(u64::from(mtu)).max(1) as u32,
    }
}

/// PSNs the packet of `w` at PSN `p` consumes: a READ request covers every
/// response from `p` to the end of the WQE, other packets one.
pub fn request_psns(w: &WqePlanInput, p: u32) -> u32 {
    match WqeKind::of(&w.op) {
        WqeKind::Read => psn::diff(psn::add(w.first_psn, w.npsn), p) as u32,
        _ => 1,
    }
}

/// The send window's rule for a packet at PSN `p` consuming `psns` PSNs
/// while `una` is the oldest unacknowledged PSN and `max_outstanding` the
/// configured window: `None` when it must wait (it would leave more than
/// the window outstanding and is not the oldest), else whether it fills
/// the window (it then asks for an ACK).
pub fn window_gate(p: u32, psns: u32, una: u32, max_outstanding: u32) -> Option<bool> {
    let in_flight_after = psn::diff(psn::add(p, psns), una).max(0) as u32;
    let window = send_window(max_outstanding);
    if in_flight_after > window && p != una {
        return None;
    }
    Some(in_flight_after >= window)
}

/// The request packet of `w` at PSN `p` (within the WQE's PSNs) at path
/// MTU `mtu`: opcode, AckReq (the last packet, a full window, every
/// `ack_req_interval`-th packet of a message; always for READ and atomics),
/// extension headers and where its payload lies in the message.
pub fn plan_request(
    w: &WqePlanInput,
    p: u32,
    mtu: u32,
    ack_req_interval: u32,
    window_full: bool,
) -> RequestPlan {
    let mtu = u64::from(mtu);
    let i = psn::diff(p, w.first_psn) as u32;
    let first = i == 0;
    let last = i + 1 == w.npsn;
    let mut ext = ExtHeaders::default();
    let mut bth;
    let (payload_offset, payload_len, last) = match w.op {
        SendOp::Read { remote_addr, rkey } => {
            // A retried READ resumes at the first PSN whose response has
            // not arrived, asking only for the remaining bytes.
            let off = (u64::from(i) * mtu).min(w.len);
            ext.reth = Some(Reth {
                va: remote_addr.wrapping_add(off),
                rkey,
                dma_len: (w.len - off) as u32,
            });
            bth = Bth::new(op::READ_REQUEST, w.dest_qp, p);
            bth.ack_req = true;
            (off, 0, true)
        }
        SendOp::CompareSwap {
            remote_addr,
            rkey,
            compare,
            swap,
        } => {
            ext.atomic_eth = Some(AtomicEth {
                va: remote_addr,
                rkey,
                swap_add: swap,
                compare,
            });
            bth = Bth::new(op::COMPARE_SWAP, w.dest_qp, p);
            bth.ack_req = true;
            (0, 0, true)
        }
        SendOp::FetchAdd {
            remote_addr,
            rkey,
            add,
        } => {
            ext.atomic_eth = Some(AtomicEth {
                va: remote_addr,
                rkey,
                swap_add: add,
                compare: 0,
            });
            bth = Bth::new(op::FETCH_ADD, w.dest_qp, p);
            bth.ack_req = true;
            (0, 0, true)
        }
        SendOp::Send
        | SendOp::SendWithImm { .. }
        | SendOp::SendWithInv { .. }
        | SendOp::Write { .. }
        | SendOp::WriteWithImm { .. } => {
            let off = u64::from(i) * mtu;
            let len = mtu.min(w.len - off);
            let opcode = match (w.op, first, last) {
                (SendOp::Send, true, true) => op::SEND_ONLY,
                (SendOp::SendWithImm { .. }, true, true) => op::SEND_ONLY_IMM,
                (SendOp::SendWithInv { .. }, true, true) => op::SEND_ONLY_INV,
                (
                    SendOp::Send | SendOp::SendWithImm { .. } | SendOp::SendWithInv { .. },
                    true,
                    false,
                ) => op::SEND_FIRST,
                (SendOp::Send, false, true) => op::SEND_LAST,
                (SendOp::SendWithImm { .. }, false, true) => op::SEND_LAST_IMM,
                (SendOp::SendWithInv { .. }, false, true) => op::SEND_LAST_INV,
                (SendOp::Write { .. }, true, true) => op::WRITE_ONLY,
                (SendOp::WriteWithImm { .. }, true, true) => op::WRITE_ONLY_IMM,
                (SendOp::Write { .. } | SendOp::WriteWithImm { .. }, true, false) => {
                    op::WRITE_FIRST
                }
                (SendOp::Write { .. }, false, true) => op::WRITE_LAST,
                (SendOp::WriteWithImm { .. }, false, true) => op::WRITE_LAST_IMM,
                (SendOp::Write { .. } | SendOp::WriteWithImm { .. }, false, false) => {
                    op::WRITE_MIDDLE
                }
                _ => op::SEND_MIDDLE,
            };
            if let SendOp::Write { remote_addr, rkey }
            | SendOp::WriteWithImm {
                remote_addr, rkey, ..
            } = w.op
            {
                if first {
                    ext.reth = Some(Reth {
                        va: remote_addr,
                        rkey,
                        dma_len: w.len as u32,
                    });
                }
            }
            if last {
                match w.op {
                    SendOp::SendWithImm { imm } | SendOp::WriteWithImm { imm, .. } => {
                        ext.imm = Some(imm)
                    }
                    SendOp::SendWithInv { rkey } => ext.ieth = Some(rkey),
                    _ => {}
                }
            }
            bth = Bth::new(opcode, w.dest_qp, p);
            bth.ack_req = last
                || window_full
                || (ack_req_interval > 0 && (i + 1).is_multiple_of(ack_req_interval));
            bth.solicited = last && w.solicited;
            (off, len, last)
        }
    };
    RequestPlan {
        bth,
        ext,
        first,
        last,
        payload_offset,
        payload_len,
        psns: request_psns(w, p),
    }
}

/// The packets of one WQE the requester sends in a row: what it sends of
/// `w` from PSN `start` while the window (`una`, `max_outstanding`) stays
/// as given, which is what `next_request` does packet by packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WqeSegments {
    pub plans: Vec<RequestPlan>,
    /// The send cursor after them: the WQE's end, or the first PSN the
    /// window holds back.
    pub next_psn: u32,
    /// The window held the WQE back before its end.
    pub cut: bool,
}

/// [`request_psns`], [`window_gate`] and [`plan_request`] packet after
/// packet from `start` to the end of `w` or to the first packet the window
/// holds back (the contract of the RTL's request segmenter).
pub fn segment_wqe(
    w: &WqePlanInput,
    start: u32,
    mtu: u32,
    ack_req_interval: u32,
    una: u32,
    max_outstanding: u32,
) -> WqeSegments {
    segment_grant(w, start, mtu, ack_req_interval, una, max_outstanding, 0)
}

/// [`segment_wqe`] for a transmit grant of at most `max_packets` packets
/// (0: no cap): the packets are the same, the grant also stops (`cut`)
/// after its `max_packets`-th one, and the next grant resumes at
/// `next_psn`, so the packets of all the grants are those of
/// [`segment_wqe`] (the RTL requester caps its grants so that a QP's
/// responses are taken between them).
pub fn segment_grant(
    w: &WqePlanInput,
    start: u32,
    mtu: u32,
    ack_req_interval: u32,
    una: u32,
    max_outstanding: u32,
    max_packets: u32,
) -> WqeSegments {
    let end = psn::add(w.first_psn, w.npsn);
    let mut plans = Vec::new();
    let mut p = start;
    while p != end {
        let psns = request_psns(w, p);
        let capped = max_packets != 0 && plans.len() == max_packets as usize;
        let Some(window_full) = window_gate(p, psns, una, max_outstanding).filter(|_| !capped)
        else {
            return WqeSegments {
                plans,
                next_psn: p,
                cut: true,
            };
        };
        plans.push(plan_request(w, p, mtu, ack_req_interval, window_full));
        p = psn::add(p, psns);
    }
    WqeSegments {
        plans,
        next_psn: p,
        cut: false,
    }
}

/// The planner's view of WQE `idx` of `qp`.
fn plan_input(qp: &Qp, idx: usize) -> WqePlanInput {
    let wqe: &SendWqe = &qp.sq.wqes[idx];
    WqePlanInput {
        op: wqe.wr.op,
        len: wqe.len,
        first_psn: wqe.first_psn,
        npsn: wqe.npsn,
        dest_qp: qp.path.map_or(0, |a| a.dest_qpn),
        solicited: wqe.wr.solicited,
    }
}

/// The local buffer bytes a request packet touches and the right its
/// L_Key must grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalAccess {
    /// Offset of the first byte in the WQE's SGL.
    pub offset: u64,
    /// Bytes; an empty range is not checked at all.
    pub len: u64,
    pub need: Access,
    /// The bytes are the packet's payload, read now (SEND/WRITE); else
    /// they are only checked here and written when the response comes.
    pub read_payload: bool,
}

/// What [`plan_request`]'s packet `plan` of a WQE doing `op` on `wqe_len` bytes
/// does with the local buffer: SEND/WRITE read their payload (no right
/// needed), a READ request's remaining response bytes and an atomic's
/// 8-byte original value are to be written (LOCAL_WRITE). The RTL
/// requester datapath checks the same range through its MR translation.
pub fn local_access(op: &SendOp, plan: &RequestPlan, wqe_len: u64) -> LocalAccess {
    match WqeKind::of(op) {
        WqeKind::Send | WqeKind::Write => LocalAccess {
            offset: plan.payload_offset,
            len: plan.payload_len,
            need: Access::NONE,
            read_payload: true,
        },
        WqeKind::Read => LocalAccess {
            offset: plan.payload_offset,
            len: wqe_len - plan.payload_offset,
            need: Access::LOCAL_WRITE,
            read_payload: false,
        },
        WqeKind::Atomic => LocalAccess {
            offset: 0,
            len: 8,
            need: Access::LOCAL_WRITE,
            read_payload: false,
        },
    }
}

/// Builds the packet of WQE `idx` at PSN `p`: [`plan_request`], then the
/// local buffers checked ([`local_access`]) and the payload read through
/// the SGL.
fn build(
    qp: &Qp,
    idx: usize,
    p: u32,
    env: &mut Env,
    window_full: bool,
) -> Result<Request, WcStatus> {
    let wqe: &SendWqe = &qp.sq.wqes[idx];
    let plan = plan_request(
        &plan_input(qp, idx),
        p,
        qp.mtu(),
        env.config.ack_req_interval,
        window_full,
    );
    let access = local_access(&wqe.wr.op, &plan, wqe.len);
    let payload = match &wqe.wr.inline_data {
        // Copied out of the WQE when it was posted (SEND/WRITE only): no
        // L_Key to check, and later changes to the caller's buffer or the
        // ring do not reach the wire, retransmissions included.
        Some(data) => {
            let at = access.offset as usize;
            data[at..at + access.len as usize].to_vec()
        }
        None => {
            let segs = sgl_segments(
                env.mrs,
                qp.pd,
                &wqe.wr.sgl,
                access.offset,
                access.len,
                access.need,
            )
            .map_err(local_status)?;
            if access.read_payload {
                read_segments(env.memory, &segs)
            } else {
                Vec::new()
            }
        }
    };
    Ok(Request {
        bth: plan.bth,
        ext: plan.ext,
        payload,
        psns: plan.psns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::send_queue::WqeRecord;
    use crate::verbs::WcOpcode;

    fn wqe(op: SendOp, len: u64, first_psn: u32, mtu: u32) -> WqePlanInput {
        WqePlanInput {
            op,
            len,
            first_psn,
            npsn: message_psns(&op, len, mtu),
            dest_qp: 0x12_3456,
            solicited: true,
        }
    }

    #[test]
    fn window_lets_the_oldest_go_and_stops_past_the_window() {
        let una = 0xFF_FFFE;
        assert_eq!(window_gate(una, 100, una, 4), Some(true));
        assert_eq!(window_gate(psn::add(una, 2), 1, una, 4), Some(false));
        assert_eq!(window_gate(psn::add(una, 3), 1, una, 4), Some(true));
        assert_eq!(window_gate(psn::add(una, 4), 1, una, 4), None);
        // A window of 0 is clamped to 1.
        assert_eq!(window_gate(psn::add(una, 1), 1, una, 0), None);
    }

    #[test]
    fn plans_split_at_the_mtu_and_a_retried_read_asks_for_the_rest() {
        let op = SendOp::SendWithImm { imm: 7 };
        let w = wqe(op, 3 * 256 + 1, 0xFF_FFFF, 256);
        assert_eq!(w.npsn, 4);
        let mid = plan_request(&w, 0, 256, 0, false);
        assert_eq!((mid.bth.opcode, mid.bth.ack_req), (op::SEND_MIDDLE, false));
        assert_eq!((mid.payload_offset, mid.payload_len), (256, 256));
        let last = plan_request(&w, 2, 256, 0, false);
        assert_eq!(last.bth.opcode, op::SEND_LAST_IMM);
        assert!(last.last && last.bth.ack_req && last.bth.solicited);
        assert_eq!(
            (last.payload_offset, last.payload_len, last.ext.imm),
            (768, 1, Some(7))
        );

        let read = SendOp::Read {
            remote_addr: 0x1000,
            rkey: 9,
        };
        let w = wqe(read, 4096 + 5, 10, 1024);
        let p = plan_request(&w, 12, 1024, 0, false);
        assert_eq!(
            p.ext.reth,
            Some(Reth {
                va: 0x1000 + 2048,
                rkey: 9,
                dma_len: 2048 + 5
            })
        );
        assert_eq!((p.psns, p.payload_offset, p.last), (3, 2048, true));
        assert_eq!(message_psns(&SendOp::Send, 0, 4096), 1);

        // The window (4 from una = 11) holds the READ back from PSN 11 on
        // but lets the oldest go; a SEND is cut after the window fills.
        let s = segment_wqe(&w, 11, 1024, 0, 11, 4);
        assert_eq!((s.plans.len(), s.next_psn, s.cut), (1, 15, false));
        let s = segment_wqe(&w, 12, 1024, 0, 11, 2);
        assert_eq!((s.plans.len(), s.next_psn, s.cut), (0, 12, true));
        let send = wqe(SendOp::Send, 10 * 256, 100, 256);
        let s = segment_wqe(&send, 102, 256, 0, 100, 5);
        assert_eq!((s.plans.len(), s.next_psn, s.cut), (3, 105, true));
        assert!(s.plans[2].bth.ack_req && !s.plans[1].bth.ack_req);
        assert_eq!(message_psns(&SendOp::Send, (1 << 31) + 1, 4096), 1);
    }

    fn ring_wqe(kind: WqeKind, first_psn: u32, npsn: u32, complete: bool) -> WqeRecord {
        WqeRecord {
            kind,
            opcode: WcOpcode::Send,
            first_psn,
            npsn,
            done_psn: first_psn,
            len: npsn * 256,
            signaled: true,
            complete,
            error: None,
        }
    }

    #[test]
    fn grant_choice_skips_acknowledged_wqes_and_says_why_not() {
        // PSNs wrap inside the ring: 0xFF_FFFE..=1 a READ, 2 a WRITE
        // acknowledged, 3..=4 a READ, 5 an atomic.
        let mut wqes: VecDeque<WqeRecord> = [
            ring_wqe(WqeKind::Read, 0xFF_FFFE, 4, false),
            ring_wqe(WqeKind::Write, 2, 1, true),
            ring_wqe(WqeKind::Read, 3, 2, false),
            ring_wqe(WqeKind::Atomic, 5, 1, false),
        ]
        .into();
        let next = 6;
        let choose = |wqes: &VecDeque<WqeRecord>, state, rnr, p, limit| {
            let c = grant_choice(state, rnr, p, next, wqes, limit);
            (c.send_psn, c.skipped, c.wqe)
        };
        assert_eq!(
            choose(&wqes, QpState::Rts, false, 0xFF_FFFF, 2),
            (0xFF_FFFF, 0, Ok(0))
        );
        // The acknowledged WRITE is skipped; the READ after it is the
        // second outstanding one.
        assert_eq!(choose(&wqes, QpState::Rts, false, 2, 2), (3, 1, Ok(2)));
        assert_eq!(
            choose(&wqes, QpState::Rts, false, 2, 1),
            (3, 1, Err(GrantRefusal::RdAtomicLimit))
        );
        assert_eq!(
            choose(&wqes, QpState::Rts, false, 5, 2),
            (5, 0, Err(GrantRefusal::RdAtomicLimit))
        );
        assert_eq!(choose(&wqes, QpState::Rts, false, 5, 3), (5, 0, Ok(3)));
        assert_eq!(
            choose(&wqes, QpState::Rts, false, 6, 16),
            (6, 0, Err(GrantRefusal::Nothing))
        );
        assert_eq!(
            choose(&wqes, QpState::Rts, true, 3, 16),
            (3, 0, Err(GrantRefusal::RnrWait))
        );
        assert_eq!(
            choose(&wqes, QpState::Err, false, 3, 16),
            (3, 0, Err(GrantRefusal::NotRts))
        );
        wqes[2].error = Some(WcStatus::LocProtErr);
        assert_eq!(
            choose(&wqes, QpState::Rts, false, 2, 16),
            (3, 1, Err(GrantRefusal::FailedWqe))
        );
        // Every WQE acknowledged: the cursor runs to the next PSN.
        for w in wqes.iter_mut() {
            w.complete = true;
        }
        assert_eq!(
            choose(&wqes, QpState::Rts, false, 0xFF_FFFE, 16),
            (6, 4, Err(GrantRefusal::Nothing))
        );
    }

    #[test]
    fn after_packet_moves_the_cursors_only_forward() {
        let before = SendProgress {
            send_psn: 0xFF_FFFF,
            max_sent_end: 3,
            ackreq_end: 0xFF_FFF0,
        };
        // A retransmission behind max_sent_end without AckReq.
        assert_eq!(
            after_packet(before, 1, false),
            SendProgress {
                send_psn: 0,
                max_sent_end: 3,
                ackreq_end: 0xFF_FFF0
            }
        );
        // A READ request covering 5 PSNs with AckReq, past both.
        assert_eq!(
            after_packet(before, 5, true),
            SendProgress {
                send_psn: 4,
                max_sent_end: 4,
                ackreq_end: 4
            }
        );
    }
}
