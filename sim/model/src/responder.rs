//! Responder (rxe_resp.c): checks the PSN and opcode sequence of incoming
//! requests, executes SEND / WRITE / READ / atomics on host memory through
//! R_Key and L_Key translation, answers duplicates without executing twice
//! (READ re-executed from its recorded resource, atomics replayed), and
//! queues ACKs, NAKs, READ responses and atomic ACKs, which it frames at
//! transmit time.

use crate::completer::move_to_error;
use crate::dma::{read_segments, sgl_segments, write_segments, LocalError};
use crate::mr::DmaSegment;
use crate::nic::Env;
use crate::qp::{InProgress, Qp, RdResource, RespItem};
use crate::verbs::{Access, Cqe, QpState, WcOpcode, WcStatus};
use rocenic_wire::{op, psn, syndrome, Aeth, AtomicAckEth, Bth, ExtHeaders, RoceFrame, MASK24};

/// Largest RDMA message (IBA: 2^31 bytes).
const MAX_MESSAGE: u32 = 1 << 31;

/// Why a request in sequence was not executed.
enum Fault {
    /// No receive WQE: RNR NAK, retry later.
    Rnr,
    /// Opcode sequence, length or alignment violation (NAK invalid request).
    InvalidRequest,
    /// R_Key, bounds or access rights (NAK remote access error).
    RemoteAccess,
    /// The receive WQE failed locally (its CQE is written): the requester
    /// gets a NAK with this syndrome.
    Receive(u8),
}

/// Handles an RC request packet for `qp`.
pub(crate) fn on_request(qp: &mut Qp, env: &mut Env, f: &RoceFrame) {
    if !matches!(qp.state, QpState::Rtr | QpState::Rts) {
        env.drop_frame("qp_state");
        return;
    }
    let p = f.bth.psn;
    let d = psn::diff(p, qp.resp.epsn);
    if d > 0 {
        if !qp.resp.nak_sent {
            qp.resp.nak_sent = true;
            let epsn = qp.resp.epsn;
            qp.resp.push_nak(syndrome::NAK_PSN_SEQUENCE_ERROR, epsn);
            env.counters.naks_sent.psn_sequence += 1;
        }
        env.drop_frame("out_of_sequence");
        return;
    }
    if d < 0 {
        env.counters.duplicate_requests += 1;
        duplicate(qp, env, f);
        return;
    }
    qp.resp.nak_sent = false;
    match execute(qp, env, f) {
        Ok(()) => {}
        Err(Fault::Rnr) => {
            let code = qp.path.map_or(0, |a| a.min_rnr_timer);
            qp.resp.push_nak(syndrome::RNR_NAK | code, p);
            // Later packets of the same burst are dropped silently until
            // the retried one arrives, as after a sequence NAK.
            qp.resp.nak_sent = true;
            env.counters.naks_sent.rnr += 1;
            env.drop_frame("rnr");
        }
        Err(Fault::InvalidRequest) => {
            qp.resp.push_nak(syndrome::NAK_INVALID_REQUEST, p);
            env.counters.naks_sent.invalid_request += 1;
            env.drop_frame("invalid_request");
            move_to_error(qp, env);
        }
        Err(Fault::RemoteAccess) => {
            qp.resp.push_nak(syndrome::NAK_REMOTE_ACCESS_ERROR, p);
            env.counters.naks_sent.remote_access += 1;
            env.drop_frame("remote_access");
            move_to_error(qp, env);
        }
        Err(Fault::Receive(nak)) => {
            qp.resp.push_nak(nak, p);
            if nak == syndrome::NAK_INVALID_REQUEST {
                env.counters.naks_sent.invalid_request += 1;
            } else {
                env.counters.naks_sent.remote_operational += 1;
            }
            env.drop_frame("receive_wqe");
            move_to_error(qp, env);
        }
    }
}

fn is_send(opcode: u8) -> bool {
    matches!(
        opcode,
        op::SEND_FIRST
            | op::SEND_MIDDLE
            | op::SEND_LAST
            | op::SEND_LAST_IMM
            | op::SEND_ONLY
            | op::SEND_ONLY_IMM
            | op::SEND_LAST_INV
            | op::SEND_ONLY_INV
    )
}

fn is_write(opcode: u8) -> bool {
    (op::WRITE_FIRST..=op::WRITE_ONLY_IMM).contains(&opcode)
}

/// Executes an in-sequence request; on success the expected PSN advances.
fn execute(qp: &mut Qp, env: &mut Env, f: &RoceFrame) -> Result<(), Fault> {
    let opcode = f.bth.opcode;
    let p = f.bth.psn;
    let mtu = qp.mtu() as usize;
    let len = f.payload.len();
    let (first, last) = match opcode {
        op::SEND_FIRST | op::WRITE_FIRST => (true, false),
        op::SEND_MIDDLE | op::WRITE_MIDDLE => (false, false),
        op::SEND_LAST
        | op::SEND_LAST_IMM
        | op::SEND_LAST_INV
        | op::WRITE_LAST
        | op::WRITE_LAST_IMM => (false, true),
        _ => (true, true),
    };
    // Packet length rules (IBA 9.7.5.1.1 / C9-88..C9-92): FIRST and MIDDLE
    // carry exactly one MTU, LAST 1..=MTU, ONLY 0..=MTU.
    let len_ok = match (first, last) {
        (true, false) | (false, false) => len == mtu,
        (false, true) => (1..=mtu).contains(&len),
        (true, true) => len <= mtu,
    };
    // A new message may only start when none is in progress, and a
    // continuation must continue a message of the same kind.
    let seq_ok = match (&qp.resp.cur, first) {
        (None, true) => true,
        (Some(InProgress::Send { .. }), false) => is_send(opcode),
        (Some(InProgress::Write { .. }), false) => is_write(opcode),
        _ => false,
    };
    if !seq_ok || ((is_send(opcode) || is_write(opcode)) && !len_ok) {
        return Err(Fault::InvalidRequest);
    }

    if is_send(opcode) {
        execute_send(qp, env, f, first, last)?;
    } else if is_write(opcode) {
        execute_write(qp, env, f, first, last)?;
    } else if opcode == op::READ_REQUEST {
        return execute_read(qp, env, f);
    } else if opcode == op::COMPARE_SWAP || opcode == op::FETCH_ADD {
        return execute_atomic(qp, env, f);
    } else {
        return Err(Fault::InvalidRequest);
    }
    qp.resp.epsn = psn::add(p, 1);
    if f.bth.ack_req {
        qp.resp.push_ack(p);
    }
    Ok(())
}

fn execute_send(
    qp: &mut Qp,
    env: &mut Env,
    f: &RoceFrame,
    first: bool,
    last: bool,
) -> Result<(), Fault> {
    let (wr, offset) = if first {
        let Some(wr) = qp.rq.pop_front() else {
            return Err(Fault::Rnr);
        };
        (wr, 0)
    } else {
        match qp.resp.cur.take() {
            Some(InProgress::Send { wr, offset }) => (wr, offset),
            _ => return Err(Fault::InvalidRequest),
        }
    };
    let len = f.payload.len() as u64;
    let placed = sgl_segments(env.mrs, qp.pd, &wr.sgl, offset, len, Access::LOCAL_WRITE);
    let segs = match placed {
        Ok(s) => s,
        Err(e) => {
            // C9-... : a receive buffer too small is an invalid request for
            // the requester; a bad L_Key in the receive WQE is a remote
            // operational error (rxe: RESPST_ERR_LENGTH / MALFORMED_WQE).
            let (status, nak) = match e {
                LocalError::Length => (WcStatus::LocLenErr, syndrome::NAK_INVALID_REQUEST),
                LocalError::Protection => {
                    (WcStatus::LocProtErr, syndrome::NAK_REMOTE_OPERATIONAL_ERROR)
                }
            };
            env.complete(
                qp.recv_cq,
                recv_cqe(qp.qpn, wr.wr_id, status, WcOpcode::Recv, 0, None, None),
            );
            return Err(Fault::Receive(nak));
        }
    };
    write_segments(env.memory, &segs, &f.payload);
    let total = offset + len;
    if !last {
        qp.resp.cur = Some(InProgress::Send { wr, offset: total });
        return Ok(());
    }
    let mut invalidated = None;
    if let Some(rkey) = f.ext.ieth {
        if env.mrs.invalidate(rkey, qp.pd).is_err() {
            // rxe completes the receive with REM_INV_REQ_ERR and moves the
            // QP to ERR; the requester is also told (invalid request).
            env.complete(
                qp.recv_cq,
                recv_cqe(
                    qp.qpn,
                    wr.wr_id,
                    WcStatus::RemInvReqErr,
                    WcOpcode::Recv,
                    0,
                    None,
                    None,
                ),
            );
            return Err(Fault::Receive(syndrome::NAK_INVALID_REQUEST));
        }
        invalidated = Some(rkey);
    }
    qp.resp.msn = psn::add(qp.resp.msn, 1);
    env.complete(
        qp.recv_cq,
        recv_cqe(
            qp.qpn,
            wr.wr_id,
            WcStatus::Success,
            WcOpcode::Recv,
            total as u32,
            f.ext.imm,
            invalidated,
        ),
    );
    Ok(())
}

/// Translates a remote range, requiring both the QP's and the MR's
/// rights. Zero-length transfers check nothing (IBA 9.4.4: the R_Key of a
/// zero-length RDMA is not validated).
fn remote(
    qp: &Qp,
    env: &Env,
    rkey: u32,
    va: u64,
    len: u64,
    need: Access,
) -> Result<Vec<DmaSegment>, Fault> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if !qp.access.contains(need) {
        return Err(Fault::RemoteAccess);
    }
    env.mrs
        .translate_remote(rkey, qp.pd, va, len, need)
        .map_err(|_| Fault::RemoteAccess)
}

fn execute_write(
    qp: &mut Qp,
    env: &mut Env,
    f: &RoceFrame,
    first: bool,
    last: bool,
) -> Result<(), Fault> {
    let opcode = f.bth.opcode;
    let mtu = qp.mtu();
    let plen = f.payload.len() as u32;
    let (va, rkey, total, offset) = if first {
        let Some(reth) = f.ext.reth else {
            return Err(Fault::InvalidRequest);
        };
        let fits = if last {
            reth.dma_len == plen
        } else {
            reth.dma_len > mtu && reth.dma_len <= MAX_MESSAGE
        };
        if !fits {
            return Err(Fault::InvalidRequest);
        }
        if !last && reth.dma_len > 0 {
            // The whole target range is checked before the first byte lands.
            remote(
                qp,
                env,
                reth.rkey,
                reth.va,
                u64::from(reth.dma_len),
                Access::REMOTE_WRITE,
            )?;
        }
        (reth.va, reth.rkey, reth.dma_len, 0u32)
    } else {
        match qp.resp.cur {
            Some(InProgress::Write {
                va,
                rkey,
                len,
                offset,
            }) => {
                let end = u64::from(offset) + u64::from(plen);
                let fits = if last {
                    end == u64::from(len)
                } else {
                    end < u64::from(len)
                };
                if !fits {
                    return Err(Fault::InvalidRequest);
                }
                (va, rkey, len, offset)
            }
            _ => return Err(Fault::InvalidRequest),
        }
    };
    let with_imm = opcode == op::WRITE_ONLY_IMM || opcode == op::WRITE_LAST_IMM;
    if with_imm && qp.rq.is_empty() {
        return Err(Fault::Rnr);
    }
    let segs = remote(
        qp,
        env,
        rkey,
        va.wrapping_add(u64::from(offset)),
        u64::from(plen),
        Access::REMOTE_WRITE,
    )?;
    write_segments(env.memory, &segs, &f.payload);
    let offset = offset + plen;
    if !last {
        qp.resp.cur = Some(InProgress::Write {
            va,
            rkey,
            len: total,
            offset,
        });
        return Ok(());
    }
    qp.resp.cur = None;
    qp.resp.msn = psn::add(qp.resp.msn, 1);
    if with_imm {
        if let Some(wr) = qp.rq.pop_front() {
            env.complete(
                qp.recv_cq,
                recv_cqe(
                    qp.qpn,
                    wr.wr_id,
                    WcStatus::Success,
                    WcOpcode::RecvRdmaWithImm,
                    total,
                    f.ext.imm,
                    None,
                ),
            );
        }
    }
    Ok(())
}

fn execute_read(qp: &mut Qp, env: &mut Env, f: &RoceFrame) -> Result<(), Fault> {
    let p = f.bth.psn;
    let max_res = qp.path.map_or(0, |a| a.max_dest_rd_atomic);
    let Some(reth) = f.ext.reth else {
        return Err(Fault::InvalidRequest);
    };
    if max_res == 0 || reth.dma_len > MAX_MESSAGE {
        return Err(Fault::InvalidRequest);
    }
    let segs = remote(
        qp,
        env,
        reth.rkey,
        reth.va,
        u64::from(reth.dma_len),
        Access::REMOTE_READ,
    )?;
    let data = read_segments(env.memory, &segs);
    let npsn = read_psns(reth.dma_len, qp.mtu());
    push_resource(
        qp,
        max_res,
        RdResource::Read {
            first_psn: p,
            npsn,
            va: reth.va,
            rkey: reth.rkey,
            len: reth.dma_len,
        },
    );
    qp.resp.msn = psn::add(qp.resp.msn, 1);
    let msn = qp.resp.msn;
    qp.resp.out.push_back(RespItem::Read {
        psn: p,
        data,
        sent: 0,
        msn,
    });
    qp.resp.epsn = psn::add(p, npsn);
    Ok(())
}

fn execute_atomic(qp: &mut Qp, env: &mut Env, f: &RoceFrame) -> Result<(), Fault> {
    let p = f.bth.psn;
    let max_res = qp.path.map_or(0, |a| a.max_dest_rd_atomic);
    let Some(a) = f.ext.atomic_eth else {
        return Err(Fault::InvalidRequest);
    };
    if max_res == 0 || a.va % 8 != 0 {
        return Err(Fault::InvalidRequest);
    }
    if !qp.access.contains(Access::REMOTE_ATOMIC) {
        return Err(Fault::RemoteAccess);
    }
    let segs = env
        .mrs
        .translate_remote(a.rkey, qp.pd, a.va, 8, Access::REMOTE_ATOMIC)
        .map_err(|_| Fault::RemoteAccess)?;
    let mut word = [0u8; 8];
    word.copy_from_slice(&read_segments(env.memory, &segs)[..8]);
    // Host memory is little-endian (x86); the AtomicETH operands are
    // numbers (carried big-endian on the wire, decoded by the codec).
    let orig = u64::from_le_bytes(word);
    let new = if f.bth.opcode == op::COMPARE_SWAP {
        if orig == a.compare {
            a.swap_add
        } else {
            orig
        }
    } else {
        orig.wrapping_add(a.swap_add)
    };
    write_segments(env.memory, &segs, &new.to_le_bytes());
    push_resource(qp, max_res, RdResource::Atomic { psn: p, orig });
    qp.resp.msn = psn::add(qp.resp.msn, 1);
    let msn = qp.resp.msn;
    qp.resp
        .out
        .push_back(RespItem::AtomicAck { psn: p, orig, msn });
    qp.resp.epsn = psn::add(p, 1);
    Ok(())
}

/// PSNs a READ of `len` bytes occupies: its response packets.
pub(crate) fn read_psns(len: u32, mtu: u32) -> u32 {
    len.div_ceil(mtu).max(1)
}

fn push_resource(qp: &mut Qp, max: u8, r: RdResource) {
    while qp.resp.resources.len() >= usize::from(max.max(1)) {
        qp.resp.resources.pop_front();
    }
    qp.resp.resources.push_back(r);
}

/// A request behind the expected PSN: answered, never executed again.
fn duplicate(qp: &mut Qp, env: &mut Env, f: &RoceFrame) {
    let p = f.bth.psn;
    let opcode = f.bth.opcode;
    if is_send(opcode) || is_write(opcode) {
        // C9-105: acknowledge again with the latest PSN executed.
        let last = psn::sub(qp.resp.epsn, 1);
        qp.resp.push_ack(last);
        return;
    }
    let found = qp.resp.resources.iter().rev().find(|r| match r {
        RdResource::Read {
            first_psn, npsn, ..
        } => {
            let d = psn::diff(p, *first_psn);
            d >= 0 && (d as u32) < *npsn
        }
        RdResource::Atomic { psn, .. } => *psn == p,
    });
    match (opcode, found.copied()) {
        (
            op::READ_REQUEST,
            Some(RdResource::Read {
                first_psn,
                npsn,
                va,
                rkey,
                len,
            }),
        ) => {
            let Some(reth) = f.ext.reth else {
                env.drop_frame("duplicate_mismatch");
                return;
            };
            // A retried READ must ask for a part of what the original
            // asked (same R_Key), and its responses must fit its PSNs.
            let end = va + u64::from(len);
            let req_end = reth.va.wrapping_add(u64::from(reth.dma_len));
            let psns_left = npsn - psn::diff(p, first_psn) as u32;
            let fits = reth.rkey == rkey
                && reth.va >= va
                && req_end >= reth.va
                && req_end <= end
                && read_psns(reth.dma_len, qp.mtu()) <= psns_left;
            if !fits {
                env.drop_frame("duplicate_mismatch");
                return;
            }
            // The requester has gone back to `p`: whatever is still queued
            // of earlier answers to this READ lies beyond its gap and would
            // only be discarded there.
            qp.resp.out.retain(|item| match item {
                RespItem::Read { psn: q, .. } => {
                    let d = psn::diff(*q, first_psn);
                    d < 0 || d as u32 >= npsn
                }
                _ => true,
            });
            // Re-executed from current memory, with the access checks.
            match remote(
                qp,
                env,
                rkey,
                reth.va,
                u64::from(reth.dma_len),
                Access::REMOTE_READ,
            ) {
                Ok(segs) => {
                    let data = read_segments(env.memory, &segs);
                    let msn = qp.resp.msn;
                    qp.resp.out.push_back(RespItem::Read {
                        psn: p,
                        data,
                        sent: 0,
                        msn,
                    });
                }
                Err(_) => {
                    qp.resp.push_nak(syndrome::NAK_REMOTE_ACCESS_ERROR, p);
                    env.counters.naks_sent.remote_access += 1;
                    move_to_error(qp, env);
                }
            }
        }
        (op::COMPARE_SWAP | op::FETCH_ADD, Some(RdResource::Atomic { orig, .. })) => {
            let msn = qp.resp.msn;
            qp.resp
                .out
                .push_back(RespItem::AtomicAck { psn: p, orig, msn });
        }
        _ => env.drop_frame("duplicate_no_resource"),
    }
}

fn recv_cqe(
    qpn: u32,
    wr_id: u64,
    status: WcStatus,
    opcode: WcOpcode,
    byte_len: u32,
    imm: Option<u32>,
    invalidated_rkey: Option<u32>,
) -> Cqe {
    Cqe {
        wr_id,
        status,
        opcode,
        qpn,
        byte_len,
        imm,
        invalidated_rkey,
    }
}

/// The next queued response of `qp`, framed. In ERR only NAKs still leave.
pub(crate) fn next_output(qp: &mut Qp, env: &mut Env) -> Option<Vec<u8>> {
    let dest_qp = qp.path?.dest_qpn;
    let mtu = qp.mtu() as usize;
    loop {
        let live = matches!(qp.state, QpState::Rtr | QpState::Rts);
        let item = qp.resp.out.front_mut()?;
        let (bth, ext, payload, ect, done) = match item {
            RespItem::Ack {
                syndrome: s,
                psn,
                msn,
            } => {
                let is_nak = *s & syndrome::TYPE_MASK != 0;
                if !live && !is_nak {
                    qp.resp.out.pop_front();
                    continue;
                }
                let ext = ExtHeaders {
                    aeth: Some(Aeth {
                        syndrome: *s,
                        msn: *msn & MASK24,
                    }),
                    ..ExtHeaders::default()
                };
                if !is_nak {
                    env.counters.acks_sent += 1;
                }
                (
                    Bth::new(op::ACKNOWLEDGE, dest_qp, *psn),
                    ext,
                    Vec::new(),
                    false,
                    true,
                )
            }
            RespItem::AtomicAck { psn, orig, msn } => {
                if !live {
                    qp.resp.out.pop_front();
                    continue;
                }
                let ext = ExtHeaders {
                    aeth: Some(Aeth {
                        syndrome: syndrome::ACK_UNLIMITED_CREDITS,
                        msn: *msn & MASK24,
                    }),
                    atomic_ack_eth: Some(AtomicAckEth { orig: *orig }),
                    ..ExtHeaders::default()
                };
                (
                    Bth::new(op::ATOMIC_ACKNOWLEDGE, dest_qp, *psn),
                    ext,
                    Vec::new(),
                    false,
                    true,
                )
            }
            RespItem::Read {
                psn: first,
                data,
                sent,
                msn,
            } => {
                if !live {
                    qp.resp.out.pop_front();
                    continue;
                }
                let n = read_psns(data.len() as u32, mtu as u32);
                let i = *sent;
                let off = i as usize * mtu;
                let chunk = data[off.min(data.len())..(off + mtu).min(data.len())].to_vec();
                let opcode = match (i == 0, i + 1 == n) {
                    (true, true) => op::READ_RESPONSE_ONLY,
                    (true, false) => op::READ_RESPONSE_FIRST,
                    (false, true) => op::READ_RESPONSE_LAST,
                    (false, false) => op::READ_RESPONSE_MIDDLE,
                };
                let mut ext = ExtHeaders::default();
                if opcode != op::READ_RESPONSE_MIDDLE {
                    ext.aeth = Some(Aeth {
                        syndrome: syndrome::ACK_UNLIMITED_CREDITS,
                        msn: *msn & MASK24,
                    });
                }
                *sent += 1;
                env.counters.read_responses_sent += 1;
                (
                    Bth::new(opcode, dest_qp, psn::add(*first, i)),
                    ext,
                    chunk,
                    true,
                    *sent >= n,
                )
            }
        };
        if done {
            qp.resp.out.pop_front();
        }
        if let Some(bytes) = crate::tx::frame(env, qp, bth, ext, payload, ect) {
            return Some(bytes);
        }
    }
}
