//! The QPs' send and receive rings and the CQ rings: doorbells, WQE fetch
//! and decode (`rocenic_abi::wqe`), and CQE write-back (`rocenic_abi::cqe`).
//!
//! A doorbell takes the WQEs between the NIC's fetch cursor and the new
//! producer index in order. A WQE the transport cannot take yet (its PSN
//! window is full, or the QP is not in RTS yet) stays in the ring and is
//! fetched again after the next event. A malformed send WQE stops the
//! fetch; once every earlier WQE has completed it moves its QP to ERR and
//! completes LOC_QP_OP_ERR (a malformed receive WQE does so at once, as
//! receive WQEs complete only when used); a doorbell beyond its ring moves the QP to ERR without fetching.
//! CQEs leave for the ring in the order the transport completed them,
//! each as one write with its owner bit; a full ring is never overwritten:
//! the CQEs wait, the overflow is counted once and the QP of the waiting
//! CQE goes to ERR.

use super::event_queues::Event;
use super::{ConsumedRing, HostCounters};
use crate::nic::Nic;
use crate::qp::WqeKind;
use crate::verbs::{
    CqId, Cqe, ModifyQp, QpState, Qpn, RecvWr, SendOp, SendWr, Sge, VerbsError, WcOpcode, WcStatus,
};
use rocenic_abi::codes;
use rocenic_abi::layout::Field;
use rocenic_abi::{cqe, wqe};
use std::collections::{BTreeMap, VecDeque};

/// A ring of `2^log_size` slots of `2^log_stride` bytes at bus address
/// `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    pub base: u64,
    pub log_size: u32,
    pub log_stride: u32,
}

impl Ring {
    fn size(&self) -> u16 {
        1 << self.log_size
    }

    fn slot(&self, index: u16) -> u64 {
        self.base + ((u64::from(index) % (1 << self.log_size)) << self.log_stride)
    }
}

/// A work ring and the NIC's cursors in it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct WorkRing {
    ring: Ring,
    /// The next WQE index to fetch, and the producer index last rung.
    next: u16,
    producer: u16,
    /// A WQE that came through the inline window (its index and bytes),
    /// taken instead of its slot when the fetch cursor reaches it.
    window_copy: Option<(u16, Vec<u8>)>,
}

impl WorkRing {
    fn new(ring: Ring) -> WorkRing {
        WorkRing {
            ring,
            next: 0,
            producer: 0,
            window_copy: None,
        }
    }

    /// Takes a doorbell unless it lies more than the ring's size ahead of
    /// `oldest`, the oldest WQE not yet completed.
    fn ring_doorbell(&mut self, producer: u16, oldest: Option<u16>) -> bool {
        let within = producer.wrapping_sub(oldest.unwrap_or(self.next)) <= self.ring.size();
        if within {
            self.producer = producer;
        } else {
            self.window_copy = None;
        }
        within
    }

    /// The rung WQE at the fetch cursor: its index and slot (the window's
    /// copy if it came that way).
    fn peek(&self, nic: &Nic) -> Option<(u16, Vec<u8>)> {
        if self.next == self.producer {
            return None;
        }
        if let Some((index, wqe)) = &self.window_copy {
            if *index == self.next {
                return Some((self.next, wqe.clone()));
            }
        }
        let mut slot = vec![0u8; 1 << self.ring.log_stride];
        nic.memory().read_phys(self.ring.slot(self.next), &mut slot);
        Some((self.next, slot))
    }

    /// The WQE at `index` is taken: the cursor moves past it.
    fn advance(&mut self, index: u16) {
        self.next = index.wrapping_add(1);
        if self.window_copy.as_ref().is_some_and(|(i, _)| *i == index) {
            self.window_copy = None;
        }
    }

    /// Drops what was rung beyond the cursor (a QP in RESET).
    fn refuse(&mut self) {
        self.producer = self.next;
        self.window_copy = None;
    }
}

/// Which work ring of a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    Send,
    Recv,
}

/// A send WQE the transport has taken, waiting for its CQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Posted {
    index: u16,
    wr_id: u64,
    signaled: bool,
}

/// One QP's rings and cursors.
#[derive(Clone, Debug)]
pub struct QpRings {
    sq: WorkRing,
    rq: WorkRing,
    send_cq: CqId,
    recv_cq: CqId,
    sq_posted: VecDeque<Posted>,
    rq_posted: VecDeque<u16>,
    /// A malformed send WQE (index, wr_id) waiting for every earlier one
    /// to complete before it fails; nothing after it is fetched.
    sq_malformed: Option<(u16, u64)>,
    /// The SQ's inline window as software last wrote it.
    window: [u8; INLINE_WINDOW_SIZE],
}

const INLINE_WINDOW_SIZE: usize = rocenic_abi::registers::qp_doorbell::INLINE_WINDOW_SIZE as usize;

impl QpRings {
    pub fn new(sq: Ring, rq: Ring, send_cq: CqId, recv_cq: CqId) -> QpRings {
        QpRings {
            sq: WorkRing::new(sq),
            rq: WorkRing::new(rq),
            send_cq,
            recv_cq,
            sq_posted: VecDeque::new(),
            rq_posted: VecDeque::new(),
            sq_malformed: None,
            window: [0; INLINE_WINDOW_SIZE],
        }
    }

    /// The WQE index of a CQE the transport wrote: receive completions
    /// come in ring order; a send CQE completes every earlier unsignaled
    /// WQE too.
    fn index_of(&mut self, c: &Cqe) -> u16 {
        if matches!(c.opcode, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm) {
            return self.rq_posted.pop_front().unwrap_or(0);
        }
        while let Some(p) = self.sq_posted.pop_front() {
            if p.wr_id == c.wr_id && (p.signaled || c.status != WcStatus::Success) {
                return p.index;
            }
        }
        0
    }
}

/// One CQ's ring and the CQEs waiting for room in it.
#[derive(Clone, Debug)]
pub struct CqRing {
    base: u64,
    log_size: u32,
    indexes: ConsumedRing,
    /// Each with whether it counts as solicited for arming.
    pending: VecDeque<([u8; cqe::LAYOUT.size], bool)>,
    /// The QP of each waiting CQE.
    pending_qpn: VecDeque<Qpn>,
    overflowed: bool,
    /// The EQ its completion events go to, and whether an event is
    /// requested at the next CQE.
    eqn: u32,
    armed: Option<Arm>,
}

/// What a CQ's next event waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arm {
    /// Any CQE.
    Next,
    /// A solicited CQE (a receive completion of a message whose last
    /// packet carried the Solicited Event bit) or an error CQE (IBA
    /// 11.4.2.2).
    Solicited,
}

impl CqRing {
    pub fn new(base: u64, log_size: u32, eqn: u32) -> CqRing {
        CqRing {
            base,
            log_size,
            indexes: ConsumedRing::default(),
            pending: VecDeque::new(),
            pending_qpn: VecDeque::new(),
            overflowed: false,
            eqn,
            armed: None,
        }
    }

    /// Whether the CQ has an arm request outstanding.
    pub fn armed(&self) -> bool {
        self.armed.is_some()
    }
}

/// Every QP's and CQ's rings.
#[derive(Clone, Debug, Default)]
pub struct WorkQueues {
    qps: BTreeMap<Qpn, QpRings>,
    cqs: BTreeMap<CqId, CqRing>,
    /// Events raised, for the host interface to post.
    events: Vec<Event>,
}

fn status_name(s: WcStatus) -> &'static str {
    match s {
        WcStatus::Success => "SUCCESS",
        WcStatus::LocLenErr => "LOC_LEN_ERR",
        WcStatus::LocQpOpErr => "LOC_QP_OP_ERR",
        WcStatus::LocProtErr => "LOC_PROT_ERR",
        WcStatus::WrFlushErr => "WR_FLUSH_ERR",
        WcStatus::BadRespErr => "BAD_RESP_ERR",
        WcStatus::LocAccessErr => "LOC_ACCESS_ERR",
        WcStatus::RemInvReqErr => "REM_INV_REQ_ERR",
        WcStatus::RemAccessErr => "REM_ACCESS_ERR",
        WcStatus::RemOpErr => "REM_OP_ERR",
        WcStatus::RetryExcErr => "RETRY_EXC_ERR",
        WcStatus::RnrRetryExcErr => "RNR_RETRY_EXC_ERR",
    }
}

fn opcode_name(o: WcOpcode) -> &'static str {
    match o {
        WcOpcode::Send => "SEND",
        WcOpcode::RdmaWrite => "RDMA_WRITE",
        WcOpcode::RdmaRead => "RDMA_READ",
        WcOpcode::CompSwap => "COMP_SWAP",
        WcOpcode::FetchAdd => "FETCH_ADD",
        WcOpcode::Recv => "RECV",
        WcOpcode::RecvRdmaWithImm => "RECV_RDMA_WITH_IMM",
    }
}

/// The 32-byte CQE of a completion, its owner bit still clear.
pub fn encode_cqe(c: &Cqe, wqe_index: u16) -> [u8; cqe::LAYOUT.size] {
    let mut e = [0u8; cqe::LAYOUT.size];
    let (extra, flag) = match (c.imm, c.invalidated_rkey) {
        (Some(imm), _) => (imm, Some("WITH_IMM")),
        (None, Some(rkey)) => (rkey, Some("WITH_INV")),
        (None, None) => (0, None),
    };
    for (field, value) in [
        (&cqe::WR_ID, c.wr_id),
        (&cqe::BYTE_LEN, u64::from(c.byte_len)),
        (&cqe::IMM_OR_INVALIDATED, u64::from(extra)),
        (&cqe::QPN, u64::from(c.qpn)),
        (&cqe::WQE_INDEX, u64::from(wqe_index)),
        (
            &cqe::OPCODE,
            codes::WC_OPCODE.value_of(opcode_name(c.opcode)),
        ),
        (
            &cqe::STATUS,
            codes::WC_STATUS.value_of(status_name(c.status)),
        ),
        (
            &cqe::FLAGS,
            flag.map_or(0, |f| codes::CQE_FLAGS.value_of(f)),
        ),
    ] {
        field.put(&mut e, value);
    }
    e
}

/// Why a WQE could not be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fetch {
    /// Malformed: complete it LOC_QP_OP_ERR.
    Malformed,
    /// The transport cannot take it yet; fetch it again later.
    Later,
    /// The QP is in RESET: its doorbells are not taken.
    Refused,
}

/// Decodes the send WQE in `slot`, expected at ring index `index`.
pub fn decode_send(slot: &[u8], index: u16, log_stride: u32) -> Option<SendWr> {
    let get = |f: &Field| f.get(slot).unwrap_or(0);
    if get(&wqe::send::INDEX) != u64::from(index) {
        return None;
    }
    let flags = get(&wqe::send::FLAGS);
    let flag = |name: &str| flags & codes::SEND_FLAGS.value_of(name) != 0;
    let known = ["FENCE", "SIGNALED", "SOLICITED", "INLINE"]
        .iter()
        .fold(0, |all, n| all | codes::SEND_FLAGS.value_of(n));
    if flags & !known != 0 {
        return None;
    }
    let opcode = codes::SEND_OPCODE.by_value(get(&wqe::send::OPCODE))?.name;
    let count = get(&wqe::send::SGE_COUNT) as usize;
    let sge_at = |at: usize| -> Option<Sge> {
        let bytes = slot.get(at..at + wqe::sge::LAYOUT.size)?;
        let g = |f: &Field| f.get(bytes).unwrap_or(0);
        Some(Sge {
            addr: g(&wqe::sge::ADDR),
            length: g(&wqe::sge::LENGTH) as u32,
            lkey: g(&wqe::sge::LKEY) as u32,
        })
    };
    let (remote_addr, rkey) = (get(&wqe::send::REMOTE_ADDR), get(&wqe::send::RKEY) as u32);
    let imm = get(&wqe::send::IMM_OR_INVALIDATE) as u32;
    let atomic = opcode.starts_with("ATOMIC");
    // Copied out of the slot now: what is sent is what the WQE held when
    // fetched, whatever software writes into the ring or its buffer later.
    let inline_data = if flag("INLINE") {
        let len = get(&wqe::send::INLINE_LEN) as usize;
        if count != 0 || len > wqe::send::max_inline(log_stride) {
            return None;
        }
        Some(
            slot.get(wqe::send::SEGMENTS..wqe::send::SEGMENTS + len)?
                .to_vec(),
        )
    } else {
        None
    };
    let sgl: Vec<Sge> = if atomic {
        if count != 1 {
            return None;
        }
        vec![sge_at(wqe::send::atomic::RESULT_SGE)?]
    } else {
        if count > wqe::send::max_sge(log_stride) {
            return None;
        }
        (0..count)
            .map(|i| sge_at(wqe::send::SEGMENTS + i * wqe::sge::LAYOUT.size))
            .collect::<Option<_>>()?
    };
    let compare_or_add = get(&wqe::send::atomic::COMPARE_OR_ADD);
    let op = match opcode {
        "RDMA_WRITE" => SendOp::Write { remote_addr, rkey },
        "RDMA_WRITE_WITH_IMM" => SendOp::WriteWithImm {
            remote_addr,
            rkey,
            imm,
        },
        "SEND" => SendOp::Send,
        "SEND_WITH_IMM" => SendOp::SendWithImm { imm },
        "SEND_WITH_INV" => SendOp::SendWithInv { rkey: imm },
        "RDMA_READ" => SendOp::Read { remote_addr, rkey },
        "ATOMIC_CMP_AND_SWP" => SendOp::CompareSwap {
            remote_addr,
            rkey,
            compare: compare_or_add,
            swap: get(&wqe::send::atomic::SWAP),
        },
        "ATOMIC_FETCH_AND_ADD" => SendOp::FetchAdd {
            remote_addr,
            rkey,
            add: compare_or_add,
        },
        _ => return None,
    };
    if inline_data.is_some() && WqeKind::of(&op).needs_response() {
        return None;
    }
    Some(SendWr {
        wr_id: get(&wqe::send::WR_ID),
        op,
        sgl,
        signaled: flag("SIGNALED"),
        solicited: flag("SOLICITED"),
        fence: flag("FENCE"),
        inline_data,
    })
}

/// Decodes the receive WQE in `slot`, expected at ring index `index`.
pub fn decode_recv(slot: &[u8], index: u16, log_stride: u32) -> Option<RecvWr> {
    let get = |f: &Field| f.get(slot).unwrap_or(0);
    let count = get(&wqe::recv::SGE_COUNT) as usize;
    if get(&wqe::recv::INDEX) != u64::from(index) || count > wqe::recv::max_sge(log_stride) {
        return None;
    }
    let sgl = (0..count)
        .map(|i| {
            let at = wqe::recv::SEGMENTS + i * wqe::sge::LAYOUT.size;
            let bytes = &slot[at..at + wqe::sge::LAYOUT.size];
            let g = |f: &Field| f.get(bytes).unwrap_or(0);
            Sge {
                addr: g(&wqe::sge::ADDR),
                length: g(&wqe::sge::LENGTH) as u32,
                lkey: g(&wqe::sge::LKEY) as u32,
            }
        })
        .collect();
    Some(RecvWr {
        wr_id: get(&wqe::recv::WR_ID),
        sgl,
    })
}

fn fetch_outcome(result: Result<(), VerbsError>) -> Result<(), Fetch> {
    match result {
        Ok(()) => Ok(()),
        Err(VerbsError::QueueFull) => Err(Fetch::Later),
        Err(VerbsError::WrongQpState {
            state: QpState::Reset,
            ..
        }) => Err(Fetch::Refused),
        Err(VerbsError::WrongQpState { .. }) => Err(Fetch::Later),
        Err(_) => Err(Fetch::Malformed),
    }
}

impl WorkQueues {
    pub fn add_qp(&mut self, qpn: Qpn, rings: QpRings) {
        self.qps.insert(qpn, rings);
    }

    pub fn remove_qp(&mut self, qpn: Qpn) {
        self.qps.remove(&qpn);
    }

    /// RESET: the rings start again at index 0.
    pub fn reset_qp(&mut self, qpn: Qpn) {
        if let Some(q) = self.qps.get_mut(&qpn) {
            *q = QpRings::new(q.sq.ring, q.rq.ring, q.send_cq, q.recv_cq);
        }
    }

    pub fn add_cq(&mut self, cq: CqId, ring: CqRing) {
        self.cqs.insert(cq, ring);
    }

    pub fn remove_cq(&mut self, cq: CqId) {
        self.cqs.remove(&cq);
    }

    pub fn cq(&self, cq: CqId) -> Option<&CqRing> {
        self.cqs.get(&cq)
    }

    /// Whether a CQ sends its events to `eqn`.
    pub fn eq_in_use(&self, eqn: u32) -> bool {
        self.cqs.values().any(|c| c.eqn == eqn)
    }

    /// The events raised since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// A QP went to ERR: an event on the EQ of its send CQ.
    fn qp_event(&mut self, qpn: Qpn, event: &'static str, cause: &'static str, detail: u32) {
        let Some(eqn) = self
            .qps
            .get(&qpn)
            .and_then(|q| self.cqs.get(&q.send_cq))
            .map(|c| c.eqn)
        else {
            return;
        };
        self.events.push(Event {
            eqn,
            event,
            cause,
            object: qpn,
            detail,
        });
    }

    /// A doorbell of `qpn`'s send or receive ring: the new producer
    /// index.
    pub fn doorbell(
        &mut self,
        nic: &mut Nic,
        counters: &mut HostCounters,
        qpn: Qpn,
        queue: Queue,
        producer: u16,
    ) {
        let Some(q) = self.qps.get_mut(&qpn) else {
            counters.doorbell_errors += 1;
            return;
        };
        let taken = match queue {
            Queue::Send => {
                let oldest = q.sq_posted.front().map(|p| p.index);
                q.sq.ring_doorbell(producer, oldest)
            }
            Queue::Recv => {
                let oldest = q.rq_posted.front().copied();
                q.rq.ring_doorbell(producer, oldest)
            }
        };
        if !taken {
            counters.doorbell_errors += 1;
            let _ = nic.modify_qp(qpn, ModifyQp::ToErr);
            let detail = u32::from(producer);
            self.qp_event(qpn, "QP_FATAL", "DOORBELL_BEYOND_RING", detail);
            return;
        }
        match queue {
            Queue::Send => self.fetch_sends(nic, counters, qpn),
            Queue::Recv => self.fetch_recvs(nic, counters, qpn),
        }
    }

    /// A 32-bit write at byte `at` of `qpn`'s inline window: the write of
    /// the slot's last word rings the doorbell of the WQE the window then
    /// holds (`rocenic_abi::registers::QP_PAGE`, `sq_inline_wqe`).
    pub fn inline_window(
        &mut self,
        nic: &mut Nic,
        counters: &mut HostCounters,
        qpn: Qpn,
        at: usize,
        value: u32,
    ) {
        let Some(q) = self.qps.get_mut(&qpn) else {
            counters.doorbell_errors += 1;
            return;
        };
        let stride = 1 << q.sq.ring.log_stride;
        if at + 4 > stride {
            counters.mmio_unmapped += 1;
            return;
        }
        q.window[at..at + 4].copy_from_slice(&value.to_le_bytes());
        if at + 4 < stride {
            return;
        }
        let wqe = q.window[..stride].to_vec();
        let index = wqe::send::INDEX.get(&wqe).unwrap_or(0) as u16;
        // Only the WQE right after everything fetched so far may skip its
        // fetch; any other is fetched from its slot in ring order.
        let next_in_line = q.sq.next == q.sq.producer && index == q.sq.producer;
        q.sq.window_copy = next_in_line.then_some((index, wqe));
        self.doorbell(nic, counters, qpn, Queue::Send, index.wrapping_add(1));
    }

    fn fetch_sends(&mut self, nic: &mut Nic, counters: &mut HostCounters, qpn: Qpn) {
        while let Some(q) = self.qps.get_mut(&qpn) {
            if let Some((index, wr_id)) = q.sq_malformed {
                let earlier_done = nic.send_queue(qpn).is_none_or(|wqes| wqes.is_empty());
                if !earlier_done {
                    return;
                }
                q.sq_malformed = None;
                q.sq.advance(index);
                let cq = q.send_cq;
                self.fail_wqe(nic, counters, qpn, cq, wr_id, index, WcOpcode::Send);
                continue;
            }
            let Some((index, slot)) = q.sq.peek(nic) else {
                return;
            };
            let decoded = decode_send(&slot, index, q.sq.ring.log_stride);
            let outcome = match &decoded {
                Some(wr) => fetch_outcome(nic.post_send(qpn, wr.clone())),
                None => Err(Fetch::Malformed),
            };
            match outcome {
                Ok(()) => {
                    let wr = decoded.expect("taken WQEs decoded");
                    q.sq_posted.push_back(Posted {
                        index,
                        wr_id: wr.wr_id,
                        signaled: wr.signaled,
                    });
                }
                Err(Fetch::Later) => return,
                Err(Fetch::Refused) => {
                    counters.doorbell_errors += 1;
                    q.sq.refuse();
                    return;
                }
                Err(Fetch::Malformed) => {
                    q.sq_malformed = Some((index, wqe::send::WR_ID.get(&slot).unwrap_or(0)));
                    continue;
                }
            }
            q.sq.advance(index);
        }
    }

    fn fetch_recvs(&mut self, nic: &mut Nic, counters: &mut HostCounters, qpn: Qpn) {
        while let Some(q) = self.qps.get_mut(&qpn) {
            let Some((index, slot)) = q.rq.peek(nic) else {
                return;
            };
            let decoded = decode_recv(&slot, index, q.rq.ring.log_stride);
            let outcome = match &decoded {
                Some(wr) => fetch_outcome(nic.post_recv(qpn, wr.clone())),
                None => Err(Fetch::Malformed),
            };
            match outcome {
                Ok(()) => q.rq_posted.push_back(index),
                Err(Fetch::Later) => return,
                Err(Fetch::Refused) => {
                    counters.doorbell_errors += 1;
                    q.rq.refuse();
                    return;
                }
                Err(Fetch::Malformed) => {
                    let wr_id = wqe::recv::WR_ID.get(&slot).unwrap_or(0);
                    let cq = q.recv_cq;
                    self.fail_wqe(nic, counters, qpn, cq, wr_id, index, WcOpcode::Recv);
                }
            }
            if let Some(q) = self.qps.get_mut(&qpn) {
                q.rq.advance(index);
            }
        }
    }

    /// A malformed WQE: the QP goes to ERR (flushing what it had taken),
    /// then the WQE completes LOC_QP_OP_ERR after those completions.
    #[allow(clippy::too_many_arguments)]
    fn fail_wqe(
        &mut self,
        nic: &mut Nic,
        counters: &mut HostCounters,
        qpn: Qpn,
        cq: CqId,
        wr_id: u64,
        index: u16,
        opcode: WcOpcode,
    ) {
        counters.wqe_errors += 1;
        let _ = nic.modify_qp(qpn, ModifyQp::ToErr);
        self.qp_event(qpn, "QP_FATAL", "BAD_WQE", u32::from(index));
        self.collect_completions(nic, counters);
        let failed = Cqe {
            wr_id,
            status: WcStatus::LocQpOpErr,
            opcode,
            qpn,
            byte_len: 0,
            imm: None,
            invalidated_rkey: None,
        };
        if let Some(ring) = self.cqs.get_mut(&cq) {
            ring.pending.push_back((encode_cqe(&failed, index), true));
            ring.pending_qpn.push_back(qpn);
        }
    }

    /// CQ doorbell of `cqn`: consumer index and arming.
    pub fn cq_doorbell(&mut self, counters: &mut HostCounters, cqn: u32, value: u32) {
        use rocenic_abi::registers::cq_doorbell as bits;
        let Some(ring) = self.cqs.get_mut(&CqId(cqn)) else {
            counters.doorbell_errors += 1;
            return;
        };
        let word = value.to_le_bytes();
        let consumer = bits::CONSUMER.get(&word).unwrap_or(0) as u32;
        if !ring.indexes.consume(consumer) {
            counters.doorbell_errors += 1;
            return;
        }
        if bits::ARM.get(&word) == Ok(1) {
            ring.armed = Some(Arm::Next);
        } else if bits::ARM_SOLICITED.get(&word) == Ok(1) && ring.armed.is_none() {
            ring.armed = Some(Arm::Solicited);
        }
    }

    /// Takes the transport's completions into the CQs' waiting lists.
    fn collect_completions(&mut self, nic: &mut Nic, counters: &mut HostCounters) {
        let mut qp_events = Vec::new();
        for (&cq, ring) in self.cqs.iter_mut() {
            for (c, solicited) in nic.poll_cq_solicited(cq, usize::MAX) {
                let event = match c.status {
                    WcStatus::RetryExcErr | WcStatus::RnrRetryExcErr => {
                        counters.retry_exceeded += 1;
                        Some("QP_FATAL")
                    }
                    WcStatus::RemAccessErr => Some("QP_ACCESS_ERR"),
                    WcStatus::RemInvReqErr => Some("QP_REQ_ERR"),
                    _ => None,
                };
                let index = self.qps.get_mut(&c.qpn).map_or(0, |q| q.index_of(&c));
                qp_events.extend(event.map(|e| (c.qpn, e, index)));
                let solicited = solicited || c.status != WcStatus::Success;
                ring.pending.push_back((encode_cqe(&c, index), solicited));
                ring.pending_qpn.push_back(c.qpn);
            }
        }
        for (qpn, event, index) in qp_events {
            self.qp_event(qpn, event, "NONE", u32::from(index));
        }
    }

    /// Fetches the WQEs that waited, then writes every CQE the rings have
    /// room for.
    pub fn service(&mut self, nic: &mut Nic, counters: &mut HostCounters) {
        let qpns: Vec<Qpn> = self.qps.keys().copied().collect();
        for &qpn in &qpns {
            self.fetch_sends(nic, counters, qpn);
            self.fetch_recvs(nic, counters, qpn);
        }
        self.collect_completions(nic, counters);
        let mut overflowing = Vec::new();
        for (&cq, ring) in self.cqs.iter_mut() {
            while let Some(&(entry, solicited)) = ring.pending.front() {
                if ring.indexes.in_ring() >= 1 << ring.log_size {
                    if !ring.overflowed {
                        ring.overflowed = true;
                        counters.cq_overflows += 1;
                        overflowing.extend(ring.pending_qpn.front().copied());
                        self.events.push(Event {
                            eqn: ring.eqn,
                            event: "CQ_ERR",
                            cause: "NONE",
                            object: cq.0,
                            detail: 0,
                        });
                    }
                    break;
                }
                let mut entry = entry;
                cqe::OWNER.put(
                    &mut entry,
                    cqe::owner_for(ring.indexes.produced, ring.log_size),
                );
                let at =
                    ring.base + (ring.indexes.produced % (1 << ring.log_size)) * entry.len() as u64;
                nic.memory_mut().write_phys(at, &entry);
                ring.indexes.produced += 1;
                ring.pending.pop_front();
                ring.pending_qpn.pop_front();
                ring.overflowed = false;
                if ring.armed == Some(Arm::Next) || (ring.armed.is_some() && solicited) {
                    ring.armed = None;
                    self.events.push(Event {
                        eqn: ring.eqn,
                        event: "COMPLETION",
                        cause: "NONE",
                        object: cq.0,
                        detail: 0,
                    });
                }
            }
        }
        for qpn in overflowing {
            let _ = nic.modify_qp(qpn, ModifyQp::ToErr);
            self.qp_event(qpn, "QP_FATAL", "CQ_OVERFLOW", 0);
        }
    }
}
