//! Responder (rxe_resp.c): checks the PSN and opcode sequence of incoming
//! requests, executes SEND / WRITE / READ / atomics on host memory through
//! R_Key and L_Key translation, answers duplicates without executing twice
//! (READ re-executed from its recorded resource, atomics replayed), and
//! queues ACKs, NAKs, READ responses and atomic ACKs, which it frames at
//! transmit time.

use crate::completer::move_to_error;
use crate::dma::{read_segments, sgl_segments, write_segments, LocalError};
use crate::mr::{DmaSegment, MrError, MrTable};
use crate::nic::{Env, TxClass};
pub use crate::qp::RdResource;
use crate::qp::{InProgress, PathAttrs, Qp};
use crate::response_queue::{capture_ops, QueueOp, RespPacket};
use crate::trace::{self, Trace};
use crate::verbs::{Access, Cqe, PdId, QpState, Sge, WcOpcode, WcStatus};
use rocenic_wire::{
    op, psn, syndrome, Aeth, AtomicAckEth, AtomicEth, Bth, ExtHeaders, Reth, RoceFrame,
};
use std::collections::VecDeque;
use std::net::IpAddr;

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

/// One request a responder handled (see [`record_requests`]): the QP, the
/// check's input and outcome, and every operation the responder applied
/// to the QP's response queue for it, in order (ACK / NAK, READ, atomic
/// ACK, drop-reads, flush to ERR): the RTL responder's `rspq` commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    pub qpn: u32,
    pub input: CheckInput,
    pub outcome: CheckOutcome,
    pub queue_ops: Vec<QueueOp>,
}

thread_local! {
    static REQUEST_TRACE: Trace<RequestRecord> = const { Trace::new(None) };
}

/// Runs `f` recording every request the responders of this thread handle,
/// with the response-queue operations each one applied, in order.
pub fn record_requests<R>(f: impl FnOnce() -> R) -> (R, Vec<RequestRecord>) {
    trace::record(&REQUEST_TRACE, f)
}

/// Handles an RC request packet for `qp`: [`check_request`] decides, then
/// the memory work of an executed request follows.
pub(crate) fn on_request(qp: &mut Qp, env: &mut Env, f: &RoceFrame) {
    if !trace::is_recording(&REQUEST_TRACE) {
        handle_request(qp, env, f);
        return;
    }
    let ((input, outcome), queue_ops) = capture_ops(|| handle_request(qp, env, f));
    let record = RequestRecord {
        qpn: qp.qpn,
        input,
        outcome,
        queue_ops,
    };
    trace::push(&REQUEST_TRACE, || record);
}

fn handle_request(qp: &mut Qp, env: &mut Env, f: &RoceFrame) -> (CheckInput, CheckOutcome) {
    let input = check_input(qp, f);
    let out = check_request(&input);
    trace::push(&CHECK_TRACE, || (input, out));
    qp.resp.nak_sent = out.nak_sent;
    match out.verdict {
        Verdict::QpState => env.drop_frame("qp_state"),
        Verdict::OutOfSequence => {
            if let Some(r) = out.response {
                queue_response(qp, r);
                env.counters.naks_sent.psn_sequence += 1;
            }
            env.drop_frame("out_of_sequence");
        }
        Verdict::Duplicate(class) => {
            env.counters.duplicate_requests += 1;
            match (class, out.response) {
                (DuplicateClass::SendWrite, Some(r)) => queue_response(qp, r),
                _ => duplicate(qp, env, f),
            }
        }
        Verdict::Rnr => {
            if let Some(r) = out.response {
                queue_response(qp, r);
            }
            env.counters.naks_sent.rnr += 1;
            env.drop_frame("rnr");
        }
        Verdict::InvalidRequest => fail(qp, env, Fault::InvalidRequest, f.bth.psn),
        Verdict::RemoteAccess => fail(qp, env, Fault::RemoteAccess, f.bth.psn),
        _ => match execute(qp, env, f, &out) {
            Ok(()) => {
                qp.resp.epsn = out.epsn;
                qp.resp.msn = out.msn;
                if let Some(r) = out.response {
                    queue_response(qp, r);
                }
            }
            Err(fault) => fail(qp, env, fault, f.bth.psn),
        },
    }
    (input, out)
}

/// The response-queue push of a request's ACK or NAK: an ACK (merged
/// into a queued ACK, ACKs being cumulative) when the syndrome's type is
/// ACK, else a NAK or RNR NAK. What the responder queues for every
/// request with a response; the RTL responder path turns each outcome's
/// ACK/NAK into this command.
pub fn queue_push(r: Response) -> QueueOp {
    if r.syndrome & syndrome::TYPE_MASK == 0 {
        QueueOp::PushAck {
            psn: r.psn,
            msn: r.msn,
        }
    } else {
        QueueOp::PushNak {
            syndrome: r.syndrome,
            psn: r.psn,
            msn: r.msn,
        }
    }
}

/// Queues `r` on `qp`'s response queue as [`queue_push`] says.
fn queue_response(qp: &mut Qp, r: Response) {
    match queue_push(r) {
        QueueOp::PushAck { psn, msn } => qp.resp.out.push_ack(psn, msn),
        QueueOp::PushNak { syndrome, psn, msn } => qp.resp.out.push_nak(syndrome, psn, msn),
        op => unreachable!("not a push of an ACK or NAK: {op:?}"),
    }
}

/// NAKs request `p` for `fault` and moves the QP to ERR.
fn fail(qp: &mut Qp, env: &mut Env, fault: Fault, p: u32) {
    let msn = qp.resp.msn;
    let nak = |syndrome| Response {
        syndrome,
        psn: p,
        msn,
    };
    match fault {
        Fault::Rnr => unreachable!("RNR is decided by check_request"),
        Fault::InvalidRequest => {
            queue_response(qp, nak(syndrome::NAK_INVALID_REQUEST));
            env.counters.naks_sent.invalid_request += 1;
            env.drop_frame("invalid_request");
        }
        Fault::RemoteAccess => {
            queue_response(qp, nak(syndrome::NAK_REMOTE_ACCESS_ERROR));
            env.counters.naks_sent.remote_access += 1;
            env.drop_frame("remote_access");
        }
        Fault::Receive(syn) => {
            queue_response(qp, nak(syn));
            if syn == syndrome::NAK_INVALID_REQUEST {
                env.counters.naks_sent.invalid_request += 1;
            } else {
                env.counters.naks_sent.remote_operational += 1;
            }
            env.drop_frame("receive_wqe");
        }
    }
    move_to_error(qp, env);
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

/// The memory work of a request [`check_request`] executes: receive WQE
/// placement, MR translation, the data movement and the responses. On
/// success the caller applies the outcome's PSN, MSN and ACK.
fn execute(qp: &mut Qp, env: &mut Env, f: &RoceFrame, out: &CheckOutcome) -> Result<(), Fault> {
    match out.verdict {
        Verdict::Send {
            offset,
            take_wqe,
            last,
            ..
        } => execute_send(qp, env, f, offset, take_wqe, last, out.message),
        Verdict::Write {
            va,
            rkey,
            len,
            whole_len,
            take_wqe,
            ..
        } => {
            let segs = write_translation(env.mrs, qp.pd, rkey, va, len, whole_len)
                .map_err(|_| Fault::RemoteAccess)?;
            write_segments(env.memory, &segs, &f.payload);
            let total = match (&qp.resp.cur, f.ext.reth) {
                (Some(InProgress::Write { len, .. }), _) => *len,
                (_, Some(reth)) => reth.dma_len,
                _ => 0,
            };
            qp.resp.cur = match out.message {
                Message::Write {
                    va,
                    rkey,
                    len,
                    offset,
                } => Some(InProgress::Write {
                    va,
                    rkey,
                    len,
                    offset,
                }),
                _ => None,
            };
            if take_wqe {
                if let Some(wr) = qp.rq.pop_front() {
                    env.complete_solicited(
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
                        f.bth.solicited,
                    );
                }
            }
            Ok(())
        }
        Verdict::Read { npsn } => execute_read(qp, env, f, npsn, out.msn),
        Verdict::Atomic => execute_atomic(qp, env, f, out.msn),
        _ => unreachable!("not an executed verdict"),
    }
}

#[allow(clippy::too_many_arguments)]
fn execute_send(
    qp: &mut Qp,
    env: &mut Env,
    f: &RoceFrame,
    offset: u64,
    take_wqe: bool,
    last: bool,
    next: Message,
) -> Result<(), Fault> {
    let wr = if take_wqe {
        qp.rq.pop_front().expect("check_request saw a receive WQE")
    } else {
        match qp.resp.cur.take() {
            Some(InProgress::Send { wr, .. }) => wr,
            _ => unreachable!("check_request saw a SEND in progress"),
        }
    };
    let len = f.payload.len() as u64;
    let segs = match send_placement(env.mrs, qp.pd, &wr.sgl, offset, len) {
        Ok(s) => s,
        Err((status, nak)) => {
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
        let Message::Send { offset } = next else {
            unreachable!("a SEND not yet complete stays in progress")
        };
        qp.resp.cur = Some(InProgress::Send { wr, offset });
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
    env.complete_solicited(
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
        f.bth.solicited,
    );
    Ok(())
}

/// The receive side of an executed SEND packet: its `len` bytes at
/// `offset` of the message into the receive WQE's scatter list, through
/// each entry's L_Key with the QP's `pd` and local write. A refusal gives
/// the receive CQE's status and the NAK the requester gets: a receive
/// buffer too small is an invalid request for the requester, a bad L_Key
/// in the receive WQE a remote operational error (rxe: RESPST_ERR_LENGTH /
/// MALFORMED_WQE); either moves the QP to ERR.
pub fn send_placement(
    mrs: &MrTable,
    pd: PdId,
    sgl: &[Sge],
    offset: u64,
    len: u64,
) -> Result<Vec<DmaSegment>, (WcStatus, u8)> {
    sgl_segments(mrs, pd, sgl, offset, len, Access::LOCAL_WRITE).map_err(|e| match e {
        LocalError::Length => (WcStatus::LocLenErr, syndrome::NAK_INVALID_REQUEST),
        LocalError::Protection => (WcStatus::LocProtErr, syndrome::NAK_REMOTE_OPERATIONAL_ERROR),
    })
}

/// The MR stage of an executed RDMA WRITE packet (`Verdict::Write`): a
/// WRITE FIRST's whole RETH range (`whole_len` > 0) is checked before the
/// first byte lands, then the packet's `len` bytes at `va` are translated,
/// both through `rkey` with the QP's `pd` and remote write; zero bytes
/// check and translate nothing (IBA 9.4.4). The first refusal wins. The
/// RTL responder datapath makes the same requests in the same order.
pub fn write_translation(
    mrs: &MrTable,
    pd: PdId,
    rkey: u32,
    va: u64,
    len: u32,
    whole_len: u32,
) -> Result<Vec<DmaSegment>, MrError> {
    let translate = |len: u32| {
        if len == 0 {
            Ok(Vec::new())
        } else {
            mrs.translate_remote(rkey, pd, va, u64::from(len), Access::REMOTE_WRITE)
        }
    };
    translate(whole_len)?;
    translate(len)
}

/// Translates a remote range through the MR table; the QP's rights were
/// checked by [`check_request`]. Zero-length transfers check nothing (IBA
/// 9.4.4: the R_Key of a zero-length RDMA is not validated).
fn translate(
    env: &Env,
    qp: &Qp,
    rkey: u32,
    va: u64,
    len: u32,
    need: Access,
) -> Result<Vec<DmaSegment>, Fault> {
    if len == 0 {
        return Ok(Vec::new());
    }
    env.mrs
        .translate_remote(rkey, qp.pd, va, u64::from(len), need)
        .map_err(|_| Fault::RemoteAccess)
}

/// Translates a remote range, requiring both the QP's and the MR's
/// rights (for duplicate READs, which are re-executed).
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

fn execute_read(
    qp: &mut Qp,
    env: &mut Env,
    f: &RoceFrame,
    npsn: u32,
    msn: u32,
) -> Result<(), Fault> {
    let p = f.bth.psn;
    let max_res = qp.path.map_or(0, |a| a.max_dest_rd_atomic);
    let reth = f.ext.reth.expect("check_request saw the RETH");
    let segs = translate(
        env,
        qp,
        reth.rkey,
        reth.va,
        reth.dma_len,
        Access::REMOTE_READ,
    )?;
    let data = read_segments(env.memory, &segs);
    push_qp_resource(
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
    qp.resp
        .out
        .push_read(p, reth.va, reth.rkey, reth.dma_len, msn, data);
    Ok(())
}

fn execute_atomic(qp: &mut Qp, env: &mut Env, f: &RoceFrame, msn: u32) -> Result<(), Fault> {
    let p = f.bth.psn;
    let max_res = qp.path.map_or(0, |a| a.max_dest_rd_atomic);
    let a = f.ext.atomic_eth.expect("check_request saw the AtomicETH");
    let segs = translate(env, qp, a.rkey, a.va, 8, Access::REMOTE_ATOMIC)?;
    let mut word = [0u8; 8];
    word.copy_from_slice(&read_segments(env.memory, &segs)[..8]);
    // Host memory is little-endian (x86); the AtomicETH operands are
    // numbers (carried big-endian on the wire, decoded by the codec).
    let orig = u64::from_le_bytes(word);
    let new = atomic_result(f.bth.opcode, orig, a.compare, a.swap_add);
    write_segments(env.memory, &segs, &new.to_le_bytes());
    push_qp_resource(qp, max_res, RdResource::Atomic { psn: p, orig });
    qp.resp.out.push_atomic_ack(p, orig, msn);
    Ok(())
}

/// The responder's message in progress as the request check sees it (the
/// RTL keeps it in its own per-QP RAM beside the QP context; a SEND's
/// receive WQE stays with the placement stage).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Message {
    #[default]
    None,
    /// A SEND: bytes of it already received.
    Send { offset: u64 },
    /// An RDMA WRITE: its RETH and the bytes already written.
    Write {
        va: u64,
        rkey: u32,
        len: u32,
        offset: u32,
    },
}

/// Everything [`check_request`] decides from: the request's header, the
/// QP's context and message in progress, and whether a receive WQE waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckInput {
    pub state: QpState,
    /// Path MTU in bytes.
    pub mtu: u32,
    /// Remote rights the QP grants.
    pub access: Access,
    /// Expected PSN.
    pub epsn: u32,
    pub msn: u32,
    pub nak_sent: bool,
    pub max_dest_rd_atomic: u8,
    pub min_rnr_timer: u8,
    pub message: Message,
    /// The receive queue holds a WQE.
    pub rq_available: bool,
    pub opcode: u8,
    pub psn: u32,
    pub ack_req: bool,
    /// Payload bytes (pad excluded).
    pub payload_len: u32,
    pub reth: Option<Reth>,
    pub atomic_eth: Option<AtomicEth>,
}

/// What a duplicate request is, for the stage that answers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DuplicateClass {
    /// SEND or WRITE: acknowledged again (the outcome's response).
    SendWrite,
    /// READ: re-executed from its responder resource, if any.
    Read,
    /// Atomic: answered from the replay cache, if any.
    Atomic,
    /// Any other opcode: dropped.
    Other,
}

/// The decision on one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// QP not in RTR/RTS: dropped, nothing changes.
    QpState,
    /// Ahead of the expected PSN: dropped, NAKed once (`response`).
    OutOfSequence,
    /// Behind the expected PSN: never executed again.
    Duplicate(DuplicateClass),
    /// No receive WQE: RNR NAK, silent until the PSN is retried.
    Rnr,
    /// Opcode sequence, length or RETH violation: NAK, QP to ERR.
    InvalidRequest,
    /// The QP does not grant the remote right: NAK, QP to ERR.
    RemoteAccess,
    /// Place `len` payload bytes at `offset` of the receive WQE's buffer;
    /// `take_wqe`: the WQE at the head of the receive queue starts this
    /// message; `last`: the message completes.
    Send {
        offset: u64,
        len: u32,
        take_wqe: bool,
        last: bool,
    },
    /// Write `len` payload bytes at `va` through `rkey`. `whole_len` is
    /// the RETH length of a WRITE FIRST, whose whole range is translated
    /// before its first byte lands (0 otherwise); `take_wqe`: the message
    /// carries an immediate and consumes a receive WQE as it completes.
    Write {
        va: u64,
        rkey: u32,
        len: u32,
        whole_len: u32,
        take_wqe: bool,
        last: bool,
    },
    /// Execute the READ of the RETH; its response takes `npsn` PSNs.
    Read { npsn: u32 },
    /// Execute the atomic of the AtomicETH.
    Atomic,
}

/// An ACK or NAK to queue (AETH syndrome, BTH PSN, AETH MSN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    pub syndrome: u8,
    pub psn: u32,
    pub msn: u32,
}

/// The verdict and the responder state after the request, as far as the
/// header and the QP's state decide them. Memory translation and the
/// receive WQE may still fail an executed request (then the QP goes to
/// ERR with a NAK instead, and none of this state is kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckOutcome {
    pub verdict: Verdict,
    pub response: Option<Response>,
    /// The QP moves to ERR.
    pub to_error: bool,
    pub epsn: u32,
    pub msn: u32,
    pub nak_sent: bool,
    pub message: Message,
}

/// The responder's decision on one request from its header and the QP's
/// state alone (rxe_resp.c `check_psn`, `check_op_seq`, `check_op_valid`,
/// `check_resource`, `check_length`, `check_rkey` up to the MR lookup):
/// the part of [`on_request`] the RTL request checker computes.
pub fn check_request(i: &CheckInput) -> CheckOutcome {
    let mut o = CheckOutcome {
        verdict: Verdict::QpState,
        response: None,
        to_error: false,
        epsn: i.epsn,
        msn: i.msn,
        nak_sent: i.nak_sent,
        message: i.message,
    };
    if !matches!(i.state, QpState::Rtr | QpState::Rts) {
        return o;
    }
    let p = i.psn;
    let d = psn::diff(p, i.epsn);
    if d > 0 {
        o.verdict = Verdict::OutOfSequence;
        if !i.nak_sent {
            o.nak_sent = true;
            o.response = Some(Response {
                syndrome: syndrome::NAK_PSN_SEQUENCE_ERROR,
                psn: i.epsn,
                msn: i.msn,
            });
        }
        return o;
    }
    if d < 0 {
        let class = if is_send(i.opcode) || is_write(i.opcode) {
            // C9-105: acknowledge again with the latest PSN executed.
            o.response = Some(Response {
                syndrome: syndrome::ACK_UNLIMITED_CREDITS,
                psn: psn::sub(i.epsn, 1),
                msn: i.msn,
            });
            DuplicateClass::SendWrite
        } else if i.opcode == op::READ_REQUEST {
            DuplicateClass::Read
        } else if i.opcode == op::COMPARE_SWAP || i.opcode == op::FETCH_ADD {
            DuplicateClass::Atomic
        } else {
            DuplicateClass::Other
        };
        o.verdict = Verdict::Duplicate(class);
        return o;
    }
    o.nak_sent = false;
    let nak = |syndrome| {
        Some(Response {
            syndrome,
            psn: p,
            msn: i.msn,
        })
    };
    match check_in_order(i) {
        Err(Fault::Rnr) => {
            o.verdict = Verdict::Rnr;
            o.response = nak(syndrome::RNR_NAK | i.min_rnr_timer);
            // Later packets of the same burst are dropped silently until
            // the retried one arrives, as after a sequence NAK.
            o.nak_sent = true;
        }
        Err(Fault::RemoteAccess) => {
            o.verdict = Verdict::RemoteAccess;
            o.response = nak(syndrome::NAK_REMOTE_ACCESS_ERROR);
            o.to_error = true;
        }
        Err(_) => {
            o.verdict = Verdict::InvalidRequest;
            o.response = nak(syndrome::NAK_INVALID_REQUEST);
            o.to_error = true;
        }
        Ok((verdict, message)) => {
            o.verdict = verdict;
            o.message = message;
            let completes = match verdict {
                Verdict::Send { last, .. } | Verdict::Write { last, .. } => last,
                _ => true,
            };
            if completes {
                o.msn = psn::add(i.msn, 1);
            }
            o.epsn = match verdict {
                Verdict::Read { npsn } => psn::add(p, npsn),
                _ => psn::add(p, 1),
            };
            // READ and atomics are answered by their response instead.
            let answered = matches!(verdict, Verdict::Read { .. } | Verdict::Atomic);
            if i.ack_req && !answered {
                o.response = Some(Response {
                    syndrome: syndrome::ACK_UNLIMITED_CREDITS,
                    psn: p,
                    msn: o.msn,
                });
            }
        }
    }
    o
}

/// The checks on an in-sequence request, in rxe's (and the model's
/// former) order; the verdict and the new message in progress.
fn check_in_order(i: &CheckInput) -> Result<(Verdict, Message), Fault> {
    let opcode = i.opcode;
    let mtu = i.mtu;
    let len = i.payload_len;
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
    let seq_ok = match (i.message, first) {
        (Message::None, true) => true,
        (Message::Send { .. }, false) => is_send(opcode),
        (Message::Write { .. }, false) => is_write(opcode),
        _ => false,
    };
    if !seq_ok || ((is_send(opcode) || is_write(opcode)) && !len_ok) {
        return Err(Fault::InvalidRequest);
    }
    if is_send(opcode) {
        let offset = match i.message {
            Message::Send { offset } => offset,
            _ => 0,
        };
        if first && !i.rq_available {
            return Err(Fault::Rnr);
        }
        let end = offset + u64::from(len);
        let message = if last {
            Message::None
        } else {
            Message::Send { offset: end }
        };
        let verdict = Verdict::Send {
            offset,
            len,
            take_wqe: first,
            last,
        };
        return Ok((verdict, message));
    }
    if is_write(opcode) {
        let (va, rkey, total, offset) = if first {
            let Some(reth) = i.reth else {
                return Err(Fault::InvalidRequest);
            };
            let fits = if last {
                reth.dma_len == len
            } else {
                reth.dma_len > mtu && reth.dma_len <= MAX_MESSAGE
            };
            if !fits {
                return Err(Fault::InvalidRequest);
            }
            // The whole target range is checked before the first byte
            // lands; the QP's rights here, the MR's by the translation.
            if !last && reth.dma_len > 0 && !i.access.contains(Access::REMOTE_WRITE) {
                return Err(Fault::RemoteAccess);
            }
            (reth.va, reth.rkey, reth.dma_len, 0u32)
        } else {
            let Message::Write {
                va,
                rkey,
                len: total,
                offset,
            } = i.message
            else {
                return Err(Fault::InvalidRequest);
            };
            let end = u64::from(offset) + u64::from(len);
            let fits = if last {
                end == u64::from(total)
            } else {
                end < u64::from(total)
            };
            if !fits {
                return Err(Fault::InvalidRequest);
            }
            (va, rkey, total, offset)
        };
        let with_imm = opcode == op::WRITE_ONLY_IMM || opcode == op::WRITE_LAST_IMM;
        if with_imm && !i.rq_available {
            return Err(Fault::Rnr);
        }
        // Zero-length transfers check nothing (IBA 9.4.4).
        if len > 0 && !i.access.contains(Access::REMOTE_WRITE) {
            return Err(Fault::RemoteAccess);
        }
        let message = if last {
            Message::None
        } else {
            Message::Write {
                va,
                rkey,
                len: total,
                offset: offset + len,
            }
        };
        let verdict = Verdict::Write {
            va: va.wrapping_add(u64::from(offset)),
            rkey,
            len,
            whole_len: if first && !last { total } else { 0 },
            take_wqe: with_imm,
            last,
        };
        return Ok((verdict, message));
    }
    if opcode == op::READ_REQUEST {
        let Some(reth) = i.reth else {
            return Err(Fault::InvalidRequest);
        };
        if i.max_dest_rd_atomic == 0 || reth.dma_len > MAX_MESSAGE {
            return Err(Fault::InvalidRequest);
        }
        if reth.dma_len > 0 && !i.access.contains(Access::REMOTE_READ) {
            return Err(Fault::RemoteAccess);
        }
        let npsn = read_psns(reth.dma_len, mtu);
        return Ok((Verdict::Read { npsn }, i.message));
    }
    if opcode == op::COMPARE_SWAP || opcode == op::FETCH_ADD {
        let Some(a) = i.atomic_eth else {
            return Err(Fault::InvalidRequest);
        };
        if i.max_dest_rd_atomic == 0 || a.va % 8 != 0 {
            return Err(Fault::InvalidRequest);
        }
        if !i.access.contains(Access::REMOTE_ATOMIC) {
            return Err(Fault::RemoteAccess);
        }
        return Ok((Verdict::Atomic, i.message));
    }
    Err(Fault::InvalidRequest)
}

thread_local! {
    static CHECK_TRACE: Trace<(CheckInput, CheckOutcome)> = const { Trace::new(None) };
}

/// Runs `f` recording every request check the responders of this thread
/// make (input and outcome, in order): traces for the RTL request checker.
pub fn record_checks<R>(f: impl FnOnce() -> R) -> (R, Vec<(CheckInput, CheckOutcome)>) {
    trace::record(&CHECK_TRACE, f)
}

fn check_input(qp: &Qp, f: &RoceFrame) -> CheckInput {
    CheckInput {
        state: qp.state,
        mtu: qp.mtu(),
        access: qp.access,
        epsn: qp.resp.epsn,
        msn: qp.resp.msn,
        nak_sent: qp.resp.nak_sent,
        max_dest_rd_atomic: qp.path.map_or(0, |a| a.max_dest_rd_atomic),
        min_rnr_timer: qp.path.map_or(0, |a| a.min_rnr_timer),
        message: match &qp.resp.cur {
            None => Message::None,
            Some(InProgress::Send { offset, .. }) => Message::Send { offset: *offset },
            Some(InProgress::Write {
                va,
                rkey,
                len,
                offset,
            }) => Message::Write {
                va: *va,
                rkey: *rkey,
                len: *len,
                offset: *offset,
            },
        },
        rq_available: !qp.rq.is_empty(),
        opcode: f.bth.opcode,
        psn: f.bth.psn,
        ack_req: f.bth.ack_req,
        payload_len: f.payload.len() as u32,
        reth: f.ext.reth,
        atomic_eth: f.ext.atomic_eth,
    }
}

/// PSNs a READ of `len` bytes occupies: its response packets.
pub fn read_psns(len: u32, mtu: u32) -> u32 {
    len.div_ceil(mtu).max(1)
}

/// The value an atomic leaves in memory: CMP_SWAP swaps in `swap_add`
/// when the original equals `compare`, FETCH_ADD adds modulo 2^64 (host
/// memory is little-endian; the operands are numbers, the AtomicETH's
/// big-endian wire order already decoded).
pub fn atomic_result(opcode: u8, orig: u64, compare: u64, swap_add: u64) -> u64 {
    if opcode == op::COMPARE_SWAP {
        if orig == compare {
            swap_add
        } else {
            orig
        }
    } else {
        orig.wrapping_add(swap_add)
    }
}

/// Records `r` in a QP's resources, a FIFO of at most
/// `max(1, max_dest_rd_atomic)` entries: the oldest ones leave first.
pub fn push_resource(resources: &mut VecDeque<RdResource>, max_dest_rd_atomic: u8, r: RdResource) {
    while resources.len() >= usize::from(max_dest_rd_atomic.max(1)) {
        resources.pop_front();
    }
    resources.push_back(r);
}

fn push_qp_resource(qp: &mut Qp, max: u8, r: RdResource) {
    record_resource_op(
        qp.path.as_ref(),
        qp.qpn,
        ResourceOp::Push {
            max_dest_rd_atomic: max,
            resource: r,
        },
    );
    push_resource(&mut qp.resp.resources, max, r);
}

/// The newest resource whose PSN range holds `p` (a READ's
/// `first_psn .. first_psn + npsn`, an atomic's PSN; 24-bit PSN space).
pub fn find_resource(resources: &VecDeque<RdResource>, p: u32) -> Option<RdResource> {
    resources
        .iter()
        .rev()
        .find(|r| match r {
            RdResource::Read {
                first_psn, npsn, ..
            } => {
                let d = psn::diff(p, *first_psn);
                d >= 0 && (d as u32) < *npsn
            }
            RdResource::Atomic { psn, .. } => *psn == p,
        })
        .copied()
}

/// Whether a retried READ at PSN `p` asking for `reth` may be answered
/// from the recorded READ `recorded` (which holds `p`): a part of what the
/// original asked (same R_Key), whose responses fit the PSNs left.
pub fn read_fits(recorded: &RdResource, p: u32, reth: &Reth, mtu: u32) -> bool {
    let RdResource::Read {
        first_psn,
        npsn,
        va,
        rkey,
        len,
    } = *recorded
    else {
        return false;
    };
    let end = va.wrapping_add(u64::from(len));
    let req_end = reth.va.wrapping_add(u64::from(reth.dma_len));
    let psns_left = npsn - psn::diff(p, first_psn) as u32;
    reth.rkey == rkey
        && reth.va >= va
        && req_end >= reth.va
        && req_end <= end
        && read_psns(reth.dma_len, mtu) <= psns_left
}

/// What a duplicate READ or atomic request gets from its QP's resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DuplicateAnswer {
    /// No resource of the request's kind holds its PSN: dropped.
    NoResource,
    /// A READ resource holds it but the retried READ does not fit: dropped.
    Mismatch,
    /// Re-executed from current memory with the recorded R_Key; queued
    /// responses of the recorded READ (`first_psn`, `npsn`) are dropped.
    Read {
        first_psn: u32,
        npsn: u32,
        rkey: u32,
    },
    /// Answered with the original value again.
    Atomic { orig: u64 },
}

/// The decision for a duplicate READ (`reth`) or atomic at PSN `p`: the
/// newest resource holding `p`, then the `fits` rule for a READ.
pub fn duplicate_answer(
    resources: &VecDeque<RdResource>,
    opcode: u8,
    p: u32,
    reth: Option<&Reth>,
    mtu: u32,
) -> DuplicateAnswer {
    let found = find_resource(resources, p);
    match (opcode, found) {
        (
            op::READ_REQUEST,
            Some(
                r @ RdResource::Read {
                    first_psn,
                    npsn,
                    rkey,
                    ..
                },
            ),
        ) => match reth {
            Some(reth) if read_fits(&r, p, reth, mtu) => DuplicateAnswer::Read {
                first_psn,
                npsn,
                rkey,
            },
            _ => DuplicateAnswer::Mismatch,
        },
        (op::COMPARE_SWAP | op::FETCH_ADD, Some(RdResource::Atomic { orig, .. })) => {
            DuplicateAnswer::Atomic { orig }
        }
        _ => DuplicateAnswer::NoResource,
    }
}

/// One operation on a QP's READ/atomic resources, as recorded by
/// [`record_resource_ops`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceOp {
    /// The QP entered RTR: no resources.
    Clear,
    Push {
        max_dest_rd_atomic: u8,
        resource: RdResource,
    },
    /// A duplicate READ or atomic looked up, and what it got.
    Lookup {
        opcode: u8,
        psn: u32,
        reth: Option<Reth>,
        mtu: u32,
        answer: DuplicateAnswer,
    },
}

/// A recorded resource operation: the NIC (the QP's local IP address) and
/// QP it ran on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceRecord {
    pub local_ip: Option<IpAddr>,
    pub qpn: u32,
    pub op: ResourceOp,
}

thread_local! {
    static RESOURCE_TRACE: Trace<ResourceRecord> = const { Trace::new(None) };
}

/// Runs `f` recording every operation the responders of this thread make
/// on their READ/atomic resources, in order: traces for the RTL resource
/// ring.
pub fn record_resource_ops<R>(f: impl FnOnce() -> R) -> (R, Vec<ResourceRecord>) {
    trace::record(&RESOURCE_TRACE, f)
}

pub(crate) fn record_resource_op(path: Option<&PathAttrs>, qpn: u32, op: ResourceOp) {
    trace::push(&RESOURCE_TRACE, || ResourceRecord {
        local_ip: path.map(|p| p.local_ip),
        qpn,
        op,
    });
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
    let mtu = qp.mtu();
    let answer = duplicate_answer(&qp.resp.resources, opcode, p, f.ext.reth.as_ref(), mtu);
    record_resource_op(
        qp.path.as_ref(),
        qp.qpn,
        ResourceOp::Lookup {
            opcode,
            psn: p,
            reth: f.ext.reth,
            mtu,
            answer,
        },
    );
    match answer {
        DuplicateAnswer::Mismatch => env.drop_frame("duplicate_mismatch"),
        DuplicateAnswer::Read {
            first_psn,
            npsn,
            rkey,
        } => {
            let reth = f.ext.reth.expect("a READ that fits has its RETH");
            // The requester has gone back to `p`: whatever is still queued
            // of earlier answers to this READ lies beyond its gap and would
            // only be discarded there.
            qp.resp.out.drop_reads(first_psn, npsn);
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
                    qp.resp
                        .out
                        .push_read(p, reth.va, rkey, reth.dma_len, msn, data);
                }
                Err(_) => {
                    qp.resp.push_nak(syndrome::NAK_REMOTE_ACCESS_ERROR, p);
                    env.counters.naks_sent.remote_access += 1;
                    move_to_error(qp, env);
                }
            }
        }
        DuplicateAnswer::Atomic { orig } => {
            let msn = qp.resp.msn;
            qp.resp.out.push_atomic_ack(p, orig, msn);
        }
        DuplicateAnswer::NoResource => env.drop_frame("duplicate_no_resource"),
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
/// The headers of response packet `p` sent to `dest_qp`, and whether the
/// frame is ECN-capable (READ responses, the data frames): what the
/// transmit side adds to a response descriptor besides the payload.
pub fn response_headers(p: &RespPacket, dest_qp: u32) -> (Bth, ExtHeaders, bool) {
    let ext = ExtHeaders {
        aeth: p.aeth.map(|(syndrome, msn)| Aeth { syndrome, msn }),
        atomic_ack_eth: p.atomic_orig.map(|orig| AtomicAckEth { orig }),
        ..ExtHeaders::default()
    };
    (Bth::new(p.opcode, dest_qp, p.psn), ext, p.read.is_some())
}

/// One response packet a responder sent: the descriptor it dequeued and
/// the frame it sent for it (see [`record_sent_responses`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentResponse {
    /// The sending NIC's MAC (tells the NICs of a thread apart).
    pub nic_mac: [u8; 6],
    pub qpn: u32,
    pub packet: RespPacket,
    pub frame: Vec<u8>,
}

thread_local! {
    static SENT_TRACE: Trace<SentResponse> = const { Trace::new(None) };
}

/// Runs `f` recording every response packet the responders of this thread
/// send (descriptor and frame, in order): traces for the RTL response
/// transmitter.
pub fn record_sent_responses<R>(f: impl FnOnce() -> R) -> (R, Vec<SentResponse>) {
    trace::record(&SENT_TRACE, f)
}

pub(crate) fn next_output(qp: &mut Qp, env: &mut Env) -> Option<Vec<u8>> {
    let dest_qp = qp.path?.dest_qpn;
    let mtu = qp.mtu();
    loop {
        let live = matches!(qp.state, QpState::Rtr | QpState::Rts);
        let (packet, payload) = qp.resp.out.next_packet_with(live, mtu, |p, data| {
            let payload = match (p.read, data) {
                (Some(r), Some(data)) => {
                    let (off, end) = (r.offset as usize, (r.offset + r.len) as usize);
                    data[off.min(data.len())..end.min(data.len())].to_vec()
                }
                _ => Vec::new(),
            };
            (*p, payload)
        })?;
        let (bth, ext, ect) = response_headers(&packet, dest_qp);
        if bth.opcode == op::ACKNOWLEDGE
            && ext
                .aeth
                .is_some_and(|a| a.syndrome & syndrome::TYPE_MASK == 0)
        {
            env.counters.acks_sent += 1;
        }
        if payload_is_read(bth.opcode) {
            env.counters.read_responses_sent += 1;
        }
        if let Some(bytes) = crate::tx::frame(env, qp, TxClass::Response, bth, ext, payload, ect) {
            trace::push(&SENT_TRACE, || SentResponse {
                nic_mac: env.config.mac,
                qpn: qp.qpn,
                packet,
                frame: bytes.clone(),
            });
            return Some(bytes);
        }
    }
}

fn payload_is_read(opcode: u8) -> bool {
    (op::READ_RESPONSE_FIRST..=op::READ_RESPONSE_ONLY).contains(&opcode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_push_by_syndrome_type() {
        let r = |syndrome| Response {
            syndrome,
            psn: 7,
            msn: 9,
        };
        assert_eq!(
            queue_push(r(syndrome::ACK_UNLIMITED_CREDITS)),
            QueueOp::PushAck { psn: 7, msn: 9 }
        );
        for s in [
            syndrome::RNR_NAK | 12,
            syndrome::NAK_PSN_SEQUENCE_ERROR,
            syndrome::NAK_INVALID_REQUEST,
            syndrome::NAK_REMOTE_ACCESS_ERROR,
        ] {
            assert_eq!(
                queue_push(r(s)),
                QueueOp::PushNak {
                    syndrome: s,
                    psn: 7,
                    msn: 9
                }
            );
        }
    }

    fn live(epsn: u32) -> CheckInput {
        CheckInput {
            state: QpState::Rts,
            mtu: 1024,
            access: Access::ALL,
            epsn,
            msn: 0xFF_FFFF,
            nak_sent: false,
            max_dest_rd_atomic: 4,
            min_rnr_timer: 12,
            message: Message::None,
            rq_available: true,
            opcode: op::SEND_ONLY,
            psn: epsn,
            ack_req: true,
            payload_len: 10,
            reth: None,
            atomic_eth: None,
        }
    }

    #[test]
    fn psn_classes_wrap_at_2_pow_24() {
        let i = CheckInput {
            psn: 0,
            ..live(0xFF_FFFF)
        };
        let o = check_request(&i);
        assert_eq!(o.verdict, Verdict::OutOfSequence);
        assert_eq!(o.response.map(|r| r.psn), Some(0xFF_FFFF));
        assert!(o.nak_sent);
        let o = check_request(&CheckInput {
            nak_sent: true,
            ..i
        });
        assert_eq!((o.verdict, o.response), (Verdict::OutOfSequence, None));

        let o = check_request(&CheckInput {
            psn: 0xFF_FFFF,
            ..live(0)
        });
        assert_eq!(o.verdict, Verdict::Duplicate(DuplicateClass::SendWrite));
        assert_eq!(o.response.map(|r| r.psn), Some(0xFF_FFFF));

        // In order: executed, the PSN and the MSN wrap.
        let o = check_request(&live(0xFF_FFFF));
        assert_eq!((o.epsn, o.msn), (0, 0));
        assert_eq!(o.response.map(|r| (r.psn, r.msn)), Some((0xFF_FFFF, 0)));
    }

    #[test]
    fn write_sequence_carries_its_reth_and_checks_the_fit() {
        let reth = Reth {
            va: 0x1000,
            rkey: 0xAB,
            dma_len: 2048 + 5,
        };
        let first = CheckInput {
            opcode: op::WRITE_FIRST,
            payload_len: 1024,
            reth: Some(reth),
            ..live(7)
        };
        let o = check_request(&first);
        assert_eq!(
            o.verdict,
            Verdict::Write {
                va: 0x1000,
                rkey: 0xAB,
                len: 1024,
                whole_len: 2053,
                take_wqe: false,
                last: false,
            }
        );
        let mid = CheckInput {
            opcode: op::WRITE_MIDDLE,
            psn: 8,
            epsn: o.epsn,
            message: o.message,
            reth: None,
            ..first
        };
        let o = check_request(&mid);
        assert!(matches!(o.verdict, Verdict::Write { va: 0x1400, .. }));
        // Five bytes are left: a LAST of six does not fit.
        let last = CheckInput {
            opcode: op::WRITE_LAST_IMM,
            psn: 9,
            epsn: o.epsn,
            message: o.message,
            payload_len: 6,
            ..mid
        };
        let bad = check_request(&last);
        assert_eq!(bad.verdict, Verdict::InvalidRequest);
        assert!(bad.to_error);
        let o = check_request(&CheckInput {
            payload_len: 5,
            ..last
        });
        assert!(matches!(
            o.verdict,
            Verdict::Write {
                take_wqe: true,
                last: true,
                ..
            }
        ));
        assert_eq!(o.message, Message::None);
        let o = check_request(&CheckInput {
            payload_len: 5,
            rq_available: false,
            ..last
        });
        assert_eq!(o.verdict, Verdict::Rnr);
        assert_eq!(o.response.map(|r| r.syndrome), Some(syndrome::RNR_NAK | 12));
    }

    /// A WRITE FIRST's whole range is checked before its own bytes: a
    /// first packet inside the MR is refused when the message overruns
    /// it; zero bytes check nothing, not even the key; the packet's bytes
    /// come back split at page boundaries.
    #[test]
    fn write_translation_checks_the_whole_message_first() {
        use crate::memory::HostMemory;
        use crate::mr::{DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES};
        let mut mem = HostMemory::new(5);
        let mut mrs = MrTable::new(DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES);
        let va = mem.alloc(3 * 4096, 4096);
        let pd = PdId(1);
        let key = mrs
            .register(pd, va, 3 * 4096, Access::ALL, &mem)
            .expect("register")
            .rkey;
        let segs = write_translation(&mrs, pd, key, va + 4000, 1024, 0).expect("inside");
        assert_eq!(segs.iter().map(|s| s.len).collect::<Vec<_>>(), [96, 928]);
        assert_eq!(
            write_translation(&mrs, pd, key, va + 4096, 1024, 4 * 4096),
            Err(MrError::OutOfBounds)
        );
        assert!(write_translation(&mrs, pd, key, va + 4096, 1024, 2 * 4096).is_ok());
        assert_eq!(
            write_translation(&mrs, pd, key ^ 0x100, va, 0, 0),
            Ok(vec![])
        );
        assert_eq!(
            write_translation(&mrs, PdId(2), key, va, 1, 0),
            Err(MrError::PdMismatch)
        );
    }

    #[test]
    fn send_placement_refusals() {
        let mut mem = crate::memory::HostMemory::new(3);
        let va = mem.alloc(8192, 4096);
        let mut mrs = MrTable::new(4, 64);
        let keys = mrs
            .register(PdId(1), va, 8192, Access::LOCAL_WRITE, &mem)
            .unwrap();
        let sgl = [Sge {
            addr: va + 100,
            length: 5000,
            lkey: keys.lkey,
        }];
        let segs = send_placement(&mrs, PdId(1), &sgl, 4000, 1000).unwrap();
        assert_eq!(segs.iter().map(|s| s.len).sum::<u32>(), 1000);
        assert_eq!(segs[0].phys, mem.va_to_pa(va + 4100).unwrap());
        // One byte past the receive buffer.
        assert_eq!(
            send_placement(&mrs, PdId(1), &sgl, 4001, 1000),
            Err((WcStatus::LocLenErr, syndrome::NAK_INVALID_REQUEST))
        );
        // Another PD, or a key that is not registered.
        let refused = Err((WcStatus::LocProtErr, syndrome::NAK_REMOTE_OPERATIONAL_ERROR));
        assert_eq!(send_placement(&mrs, PdId(2), &sgl, 0, 10), refused);
        let bad = [Sge {
            lkey: keys.lkey ^ 0x100,
            ..sgl[0]
        }];
        assert_eq!(send_placement(&mrs, PdId(1), &bad, 0, 10), refused);
    }
}
