//! Requester (rxe_req.c): picks the next request packet of a QP and builds
//! it at transmit time from the send queue's "next PSN to send" cursor, so
//! Go-Back-N only has to rewind the cursor. Payload is re-read from
//! registered memory through the L_Key on every (re)transmission.

use crate::dma::{read_segments, sgl_segments, LocalError};
use crate::nic::Env;
use crate::qp::{Qp, SendWqe, WqeKind};
use crate::send_queue::RingWqe;
use crate::verbs::{Access, QpState, SendOp, WcStatus};
use crate::Time;
use rocenic_wire::{op, psn, AtomicEth, Bth, ExtHeaders, Reth};

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
    if qp.state != QpState::Rts || qp.sq.rnr_until.is_some() {
        return None;
    }
    let attrs = qp.send?;
    if env.config.dcqcn.enabled && (now as f64) < qp.sq.pace_at {
        return None;
    }
    let (idx, send_psn) = loop {
        let send_psn = qp.sq.send_psn;
        if psn::diff(send_psn, qp.sq.next_psn) >= 0 {
            return None;
        }
        let idx = qp.sq.index_of(send_psn)?;
        let w = &qp.sq.wqes[idx];
        if w.complete {
            // Acknowledged while the cursor was rewound: nothing to resend.
            qp.sq.send_psn = w.end_psn();
            continue;
        }
        if w.error.is_some() {
            return None;
        }
        break (idx, send_psn);
    };
    let wqe = &qp.sq.wqes[idx];
    let psns = match wqe.kind {
        WqeKind::Read => psn::diff(wqe.end_psn(), send_psn) as u32,
        _ => 1,
    };
    let una = qp.sq.una();
    let in_flight_after = psn::diff(psn::add(send_psn, psns), una).max(0) as u32;
    let window = env.config.max_outstanding_psns.clamp(1, 1 << 22);
    if in_flight_after > window && send_psn != una {
        return None;
    }
    if wqe.kind.needs_response() {
        let outstanding = qp
            .sq
            .wqes
            .iter()
            .take(idx)
            .filter(|w| w.kind.needs_response() && !w.complete)
            .count();
        if outstanding >= usize::from(attrs.max_rd_atomic) {
            return None;
        }
    }
    let window_full = in_flight_after >= window;
    let req = match build(qp, idx, send_psn, env, window_full) {
        Ok(r) => r,
        Err(status) => {
            crate::completer::local_error(qp, env, idx, send_psn, status);
            return None;
        }
    };
    let bytes = crate::tx::frame(env, qp, req.bth, req.ext, req.payload, true)?;

    let timeout = qp.ack_timeout_ns();
    let sq = &mut qp.sq;
    if psn::diff(send_psn, sq.max_sent_end) < 0 {
        env.counters.retransmitted_frames += 1;
    }
    sq.send_psn = psn::add(send_psn, req.psns);
    if psn::diff(sq.send_psn, sq.max_sent_end) > 0 {
        sq.max_sent_end = sq.send_psn;
    }
    if req.bth.ack_req {
        if psn::diff(sq.send_psn, sq.ackreq_end) > 0 {
            sq.ackreq_end = sq.send_psn;
        }
        if sq.ack_timer.is_none() {
            sq.ack_timer = timeout.map(|t| now + t);
        }
    }
    if env.config.dcqcn.enabled {
        let bits = ((bytes.len() + WIRE_OVERHEAD) * 8) as f64;
        let rate = qp.rp.rate_bps().max(1.0);
        qp.sq.pace_at = qp.sq.pace_at.max(now as f64) + bits * 1e9 / rate;
        qp.rp.on_sent(&env.config.dcqcn, now, bytes.len() as u64);
    }
    Some(bytes)
}

fn local_status(e: LocalError) -> WcStatus {
    match e {
        LocalError::Length => WcStatus::LocLenErr,
        LocalError::Protection => WcStatus::LocProtErr,
    }
}

/// Builds the packet of WQE `idx` at PSN `p`.
fn build(
    qp: &Qp,
    idx: usize,
    p: u32,
    env: &mut Env,
    window_full: bool,
) -> Result<Request, WcStatus> {
    let wqe: &SendWqe = &qp.sq.wqes[idx];
    let mtu = u64::from(qp.mtu());
    let dest_qp = qp.path.map_or(0, |a| a.dest_qpn);
    let i = psn::diff(p, wqe.first_psn) as u32;
    let n = wqe.npsn;
    let first = i == 0;
    let last = i + 1 == n;
    let mut ext = ExtHeaders::default();
    let mut payload = Vec::new();
    let mut bth;

    match wqe.kind {
        WqeKind::Send | WqeKind::Write => {
            let off = u64::from(i) * mtu;
            let len = mtu.min(wqe.len - off);
            let segs = sgl_segments(env.mrs, qp.pd, &wqe.wr.sgl, off, len, Access::NONE)
                .map_err(local_status)?;
            payload = read_segments(env.memory, &segs);
            let opcode = match (wqe.wr.op, first, last) {
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
            } = wqe.wr.op
            {
                if first {
                    ext.reth = Some(Reth {
                        va: remote_addr,
                        rkey,
                        dma_len: wqe.len as u32,
                    });
                }
            }
            if last {
                match wqe.wr.op {
                    SendOp::SendWithImm { imm } | SendOp::WriteWithImm { imm, .. } => {
                        ext.imm = Some(imm)
                    }
                    SendOp::SendWithInv { rkey } => ext.ieth = Some(rkey),
                    _ => {}
                }
            }
            bth = Bth::new(opcode, dest_qp, p);
            let interval = env.config.ack_req_interval;
            bth.ack_req = last || window_full || (interval > 0 && (i + 1).is_multiple_of(interval));
            bth.solicited = last && wqe.wr.solicited;
        }
        WqeKind::Read => {
            let SendOp::Read { remote_addr, rkey } = wqe.wr.op else {
                return Err(WcStatus::LocQpOpErr);
            };
            // A retried READ resumes at the first PSN whose response has
            // not arrived, asking only for the remaining bytes.
            let off = (u64::from(i) * mtu).min(wqe.len);
            sgl_segments(
                env.mrs,
                qp.pd,
                &wqe.wr.sgl,
                off,
                wqe.len - off,
                Access::LOCAL_WRITE,
            )
            .map_err(local_status)?;
            ext.reth = Some(Reth {
                va: remote_addr.wrapping_add(off),
                rkey,
                dma_len: (wqe.len - off) as u32,
            });
            bth = Bth::new(op::READ_REQUEST, dest_qp, p);
            bth.ack_req = true;
        }
        WqeKind::Atomic => {
            sgl_segments(env.mrs, qp.pd, &wqe.wr.sgl, 0, 8, Access::LOCAL_WRITE)
                .map_err(local_status)?;
            let (opcode, atomic) = match wqe.wr.op {
                SendOp::CompareSwap {
                    remote_addr,
                    rkey,
                    compare,
                    swap,
                } => (
                    op::COMPARE_SWAP,
                    AtomicEth {
                        va: remote_addr,
                        rkey,
                        swap_add: swap,
                        compare,
                    },
                ),
                SendOp::FetchAdd {
                    remote_addr,
                    rkey,
                    add,
                } => (
                    op::FETCH_ADD,
                    AtomicEth {
                        va: remote_addr,
                        rkey,
                        swap_add: add,
                        compare: 0,
                    },
                ),
                _ => return Err(WcStatus::LocQpOpErr),
            };
            ext.atomic_eth = Some(atomic);
            bth = Bth::new(opcode, dest_qp, p);
            bth.ack_req = true;
        }
    }
    let psns = match wqe.kind {
        WqeKind::Read => n - i,
        _ => 1,
    };
    Ok(Request {
        bth,
        ext,
        payload,
        psns,
    })
}
