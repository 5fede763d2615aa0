//! The per-QP context (the RTL's QP context RAM entry): attributes set by
//! the state machine (IBA 10.3, table 91), the send queue with its PSN
//! bookkeeping for requester and completer, the receive queue, and the
//! responder's state (expected PSN, MSN, message in progress, READ/atomic
//! replay resources, queued responses).

use crate::dcqcn::{DcqcnConfig, NotificationPoint, ReactionPoint};
use crate::response_queue::ResponseQueue;
use crate::send_queue::{self, WqeRecord};
use crate::verbs::{
    Access, CqId, ModifyQp, PdId, QpCaps, QpState, Qpn, RecvWr, RemoteAddress, SendOp, SendWr,
    VerbsError, WcStatus,
};
use crate::Time;
use rocenic_wire::{psn, MASK24};
use std::collections::VecDeque;
use std::net::IpAddr;

pub(crate) const VALID_MTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// Attributes from INIT -> RTR: where the peer is and how the responder
/// behaves.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PathAttrs {
    pub remote: RemoteAddress,
    /// Our source address in the IP version of `remote`.
    pub local_ip: IpAddr,
    pub dest_qpn: Qpn,
    pub mtu: u32,
    pub max_dest_rd_atomic: u8,
    pub min_rnr_timer: u8,
}

/// Attributes from RTR -> RTS: how the requester retries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SendAttrs {
    pub timeout: u8,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub max_rd_atomic: u8,
}

/// What a send WQE asks for, as far as the transport cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WqeKind {
    Send,
    Write,
    Read,
    Atomic,
}

impl WqeKind {
    pub fn of(op: &SendOp) -> WqeKind {
        match op {
            SendOp::Send | SendOp::SendWithImm { .. } | SendOp::SendWithInv { .. } => WqeKind::Send,
            SendOp::Write { .. } | SendOp::WriteWithImm { .. } => WqeKind::Write,
            SendOp::Read { .. } => WqeKind::Read,
            SendOp::CompareSwap { .. } | SendOp::FetchAdd { .. } => WqeKind::Atomic,
        }
    }

    /// READ and atomics need a response carrying data, not just an ACK.
    pub fn needs_response(self) -> bool {
        matches!(self, WqeKind::Read | WqeKind::Atomic)
    }
}

/// A send WQE with the PSN range it owns. PSNs are assigned at post time:
/// the range depends only on the length and the path MTU, both fixed then.
#[derive(Clone, Debug)]
pub(crate) struct SendWqe {
    pub wr: SendWr,
    pub kind: WqeKind,
    /// Message length in bytes.
    pub len: u64,
    pub first_psn: u32,
    pub npsn: u32,
    /// First PSN of this WQE not yet acknowledged (SEND/WRITE) or whose
    /// response has not arrived (READ); `end_psn` when all are.
    pub done_psn: u32,
    pub complete: bool,
    /// Set when the WQE failed; it completes with this status in order.
    pub error: Option<WcStatus>,
}

impl SendWqe {
    /// What the send-queue tracker keeps of it.
    pub fn record(&self) -> WqeRecord {
        WqeRecord {
            kind: self.kind,
            opcode: crate::completer::wc_opcode(&self.wr.op),
            first_psn: self.first_psn,
            npsn: self.npsn,
            done_psn: self.done_psn,
            len: self.len as u32,
            signaled: self.wr.signaled,
            complete: self.complete,
            error: self.error,
        }
    }
}

send_queue::ring_wqe_fields!(SendWqe);

/// Requester and completer state of the send queue.
#[derive(Clone, Debug, Default)]
pub(crate) struct SendQueue {
    pub wqes: VecDeque<SendWqe>,
    /// First PSN of the next posted WQE.
    pub next_psn: u32,
    /// Next PSN the requester transmits; Go-Back-N rewinds it.
    pub send_psn: u32,
    /// PSN after the highest ever transmitted: responses up to here are
    /// within the window.
    pub max_sent_end: u32,
    pub retry_left: u8,
    pub rnr_left: u8,
    /// PSN after the last AckReq request sent since the last rewind.
    pub ackreq_end: u32,
    /// Local ACK timeout deadline, armed while a request that asked for an
    /// ACK is unacknowledged.
    pub ack_timer: Option<Time>,
    /// Requester paused by an RNR NAK until then.
    pub rnr_until: Option<Time>,
    /// `una` when the last implicit retry (gap, NAK) started: a second
    /// trigger without progress in between is the same loss, not a new one.
    pub retry_una: Option<u32>,
}

impl SendQueue {
    /// Oldest PSN not yet acknowledged.
    pub fn una(&self) -> u32 {
        send_queue::una(&self.wqes, self.next_psn)
    }

    /// A request that asked for an ACK is still unacknowledged: the local
    /// ACK timer must run (IBA 9.7.6.1.1). Packets without AckReq are not
    /// timed on their own; every burst ends with one that has it.
    pub fn awaiting_ack(&self) -> bool {
        psn::diff(self.ackreq_end, self.una()) > 0
    }

    pub fn index_of(&self, p: u32) -> Option<usize> {
        send_queue::index_of(&self.wqes, p)
    }
}

/// A message the responder has started and not finished.
#[derive(Clone, Debug)]
pub(crate) enum InProgress {
    Send {
        wr: RecvWr,
        offset: u64,
    },
    Write {
        va: u64,
        rkey: u32,
        len: u32,
        offset: u32,
    },
}

/// What the responder keeps of an executed READ or atomic, to answer
/// duplicates (IBA 9.7.5.1.3 "responder resources").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdResource {
    Read {
        first_psn: u32,
        npsn: u32,
        va: u64,
        rkey: u32,
        len: u32,
    },
    Atomic {
        psn: u32,
        orig: u64,
    },
}

#[derive(Clone, Debug, Default)]
pub(crate) struct ResponderState {
    pub epsn: u32,
    pub msn: u32,
    /// A NAK (sequence or RNR) was sent: drop silently until the expected
    /// PSN arrives (IBA 9.7.5.2.2: one NAK per error).
    pub nak_sent: bool,
    pub cur: Option<InProgress>,
    pub resources: VecDeque<RdResource>,
    /// Queued responses; a READ keeps the bytes read at execution.
    pub out: ResponseQueue<Vec<u8>>,
}

impl ResponderState {
    /// Queues an ACK with the current MSN (merged into a queued ACK).
    pub fn push_ack(&mut self, psn: u32) {
        self.out.push_ack(psn, self.msn);
    }

    pub fn push_nak(&mut self, syndrome: u8, psn: u32) {
        self.out.push_nak(syndrome, psn, self.msn);
    }
}

pub(crate) struct Qp {
    pub qpn: Qpn,
    pub pd: PdId,
    pub send_cq: CqId,
    pub recv_cq: CqId,
    pub caps: QpCaps,
    pub state: QpState,
    pub access: Access,
    pub pkey: u16,
    pub path: Option<PathAttrs>,
    pub send: Option<SendAttrs>,
    pub sq: SendQueue,
    pub rq: VecDeque<RecvWr>,
    pub resp: ResponderState,
    pub np: NotificationPoint,
    pub rp: ReactionPoint,
}

impl Qp {
    pub fn new(
        qpn: Qpn,
        pd: PdId,
        send_cq: CqId,
        recv_cq: CqId,
        caps: QpCaps,
        dcqcn: &DcqcnConfig,
        line_rate_bps: f64,
    ) -> Qp {
        Qp {
            qpn,
            pd,
            send_cq,
            recv_cq,
            caps,
            state: QpState::Reset,
            access: Access::NONE,
            pkey: rocenic_wire::DEFAULT_PKEY,
            path: None,
            send: None,
            sq: SendQueue::default(),
            rq: VecDeque::new(),
            resp: ResponderState::default(),
            np: NotificationPoint::new(),
            rp: ReactionPoint::new(dcqcn, line_rate_bps),
        }
    }

    pub fn mtu(&self) -> u32 {
        self.path.map_or(256, |p| p.mtu)
    }

    /// Applies a state transition after validating it and its attributes.
    /// Moving to ERR or RESET is done by the caller (they touch CQs).
    pub fn apply(&mut self, change: &ModifyQp, local_ip: IpAddr) -> Result<(), VerbsError> {
        let wrong = VerbsError::WrongQpState {
            qpn: self.qpn,
            state: self.state,
        };
        match *change {
            ModifyQp::ToInit { access, pkey } => {
                if self.state != QpState::Reset {
                    return Err(wrong);
                }
                self.access = access;
                self.pkey = pkey;
                self.state = QpState::Init;
            }
            ModifyQp::ToRtr {
                remote,
                dest_qpn,
                rq_psn,
                path_mtu,
                max_dest_rd_atomic,
                min_rnr_timer,
            } => {
                if self.state != QpState::Init {
                    return Err(wrong);
                }
                if !VALID_MTUS.contains(&path_mtu) {
                    return Err(VerbsError::InvalidAttribute("path_mtu"));
                }
                if min_rnr_timer > 31 {
                    return Err(VerbsError::InvalidAttribute("min_rnr_timer"));
                }
                if dest_qpn > MASK24 {
                    return Err(VerbsError::InvalidAttribute("dest_qpn"));
                }
                if rq_psn > MASK24 {
                    return Err(VerbsError::InvalidAttribute("rq_psn"));
                }
                let local_ip = source_ip_for(local_ip, remote.ip)
                    .ok_or(VerbsError::InvalidAttribute("remote ip version"))?;
                self.path = Some(PathAttrs {
                    remote,
                    local_ip,
                    dest_qpn,
                    mtu: path_mtu,
                    max_dest_rd_atomic,
                    min_rnr_timer,
                });
                self.resp = ResponderState {
                    epsn: rq_psn,
                    ..ResponderState::default()
                };
                crate::responder::record_resource_op(
                    self.path.as_ref(),
                    self.qpn,
                    crate::responder::ResourceOp::Clear,
                );
                self.state = QpState::Rtr;
            }
            ModifyQp::ToRts {
                sq_psn,
                timeout,
                retry_cnt,
                rnr_retry,
                max_rd_atomic,
            } => {
                if self.state != QpState::Rtr {
                    return Err(wrong);
                }
                if timeout > 31 {
                    return Err(VerbsError::InvalidAttribute("timeout"));
                }
                if retry_cnt > 7 {
                    return Err(VerbsError::InvalidAttribute("retry_cnt"));
                }
                if rnr_retry > 7 {
                    return Err(VerbsError::InvalidAttribute("rnr_retry"));
                }
                if sq_psn > MASK24 {
                    return Err(VerbsError::InvalidAttribute("sq_psn"));
                }
                self.send = Some(SendAttrs {
                    timeout,
                    retry_cnt,
                    rnr_retry,
                    max_rd_atomic,
                });
                self.sq = SendQueue {
                    next_psn: sq_psn,
                    send_psn: sq_psn,
                    max_sent_end: sq_psn,
                    ackreq_end: sq_psn,
                    retry_left: retry_cnt,
                    rnr_left: rnr_retry,
                    ..SendQueue::default()
                };
                self.state = QpState::Rts;
            }
            ModifyQp::ToErr | ModifyQp::ToReset => {}
        }
        Ok(())
    }

    /// Local ACK timeout in ns; `None` for timeout 0 (wait forever).
    pub fn ack_timeout_ns(&self) -> Option<Time> {
        self.send
            .and_then(|a| crate::timers::ack_timeout_ns(a.timeout))
    }

    /// Back to RESET: every queue emptied, attributes forgotten.
    pub fn reset(&mut self, dcqcn: &DcqcnConfig, line_rate_bps: f64) {
        *self = Qp::new(
            self.qpn,
            self.pd,
            self.send_cq,
            self.recv_cq,
            self.caps,
            dcqcn,
            line_rate_bps,
        );
    }
}

/// Our source address for a peer: same IP version as the peer's, an IPv4
/// address standing in as its IPv4-mapped IPv6 form (RoCEv2 GIDs are IPv6
/// addresses, IPv4 ones mapped; Annex A17.4.5.1).
pub(crate) fn source_ip_for(local: IpAddr, remote: IpAddr) -> Option<IpAddr> {
    match (local, remote) {
        (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => Some(local),
        (IpAddr::V4(l), IpAddr::V6(_)) => Some(IpAddr::V6(l.to_ipv6_mapped())),
        (IpAddr::V6(l), IpAddr::V4(_)) => l.to_ipv4_mapped().map(IpAddr::V4),
    }
}
