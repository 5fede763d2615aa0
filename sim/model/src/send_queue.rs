//! The completer's operations on the send queue (the WQEs posted and not
//! yet completed, oldest first), on any WQE record: the model's
//! [`crate::completer`] runs them on its full WQEs, the send-queue tracker
//! RTL's tests ([`Ring`]) on the small records the on-chip ring holds.
//!
//! - [`implicit_ack`]: an ACK (or NAK, READ response, atomic ACK) covers
//!   every PSN before its end;
//! - [`una`]: the oldest unacknowledged PSN;
//! - [`index_of`]: the WQE holding a PSN;
//! - [`mark_response`]: a READ response placed / an atomic ACK taken;
//! - [`fail_choice`]: which WQE an error lands on;
//! - [`drain`]: completions due at the head, in posting order;
//! - [`flush`]: the move to ERR: every WQE left completes in error.
//!
//! A [`crate::nic::Nic`] records every one of them on its queues when
//! asked to ([`crate::nic::Nic::record_ring_ops`]; [`RingRecord`]).

use crate::qp::WqeKind;
use crate::verbs::{Cqe, Qpn, WcOpcode, WcStatus};
use rocenic_wire::psn;
use std::collections::VecDeque;

/// What the send-queue operations read and change of a WQE.
pub trait RingWqe {
    fn kind(&self) -> WqeKind;
    fn first_psn(&self) -> u32;
    fn npsn(&self) -> u32;
    /// First PSN not yet acknowledged / answered.
    fn done_psn(&self) -> u32;
    fn set_done_psn(&mut self, p: u32);
    fn complete(&self) -> bool;
    fn set_complete(&mut self);
    fn error(&self) -> Option<WcStatus>;
    fn set_error(&mut self, status: WcStatus);

    fn end_psn(&self) -> u32 {
        psn::add(self.first_psn(), self.npsn())
    }

    fn contains(&self, p: u32) -> bool {
        let d = psn::diff(p, self.first_psn());
        d >= 0 && (d as u32) < self.npsn()
    }
}

/// Implements [`RingWqe`] for a struct with the fields of the same names
/// (`kind`, `first_psn`, `npsn`, `done_psn`, `complete`, `error`).
macro_rules! ring_wqe_fields {
    ($t:ty) => {
        impl $crate::send_queue::RingWqe for $t {
            fn kind(&self) -> $crate::qp::WqeKind {
                self.kind
            }
            fn first_psn(&self) -> u32 {
                self.first_psn
            }
            fn npsn(&self) -> u32 {
                self.npsn
            }
            fn done_psn(&self) -> u32 {
                self.done_psn
            }
            fn set_done_psn(&mut self, p: u32) {
                self.done_psn = p;
            }
            fn complete(&self) -> bool {
                self.complete
            }
            fn set_complete(&mut self) {
                self.complete = true;
            }
            fn error(&self) -> Option<$crate::verbs::WcStatus> {
                self.error
            }
            fn set_error(&mut self, status: $crate::verbs::WcStatus) {
                self.error = Some(status);
            }
        }
    };
}
pub(crate) use ring_wqe_fields;

/// Oldest PSN not yet acknowledged: the done PSN of the oldest incomplete
/// WQE, or `next_psn` (the first PSN of the next WQE posted) when none is.
pub fn una<W: RingWqe>(wqes: &VecDeque<W>, next_psn: u32) -> u32 {
    wqes.iter()
        .find(|w| !w.complete())
        .map_or(next_psn, |w| w.done_psn())
}

/// The first WQE whose PSN range holds `p`.
pub fn index_of<W: RingWqe>(wqes: &VecDeque<W>, p: u32) -> Option<usize> {
    wqes.iter().position(|w| w.contains(p))
}

/// READ and atomic WQEs before index `idx` whose response has not
/// arrived: what the requester's `max_rd_atomic` limits (the tracker's
/// lookup counts them on its walk to the hit).
pub fn unanswered_before<W: RingWqe>(wqes: &VecDeque<W>, idx: usize) -> usize {
    wqes.iter()
        .take(idx)
        .filter(|w| w.kind().needs_response() && !w.complete())
        .count()
}

/// Acknowledges every PSN before `end`: from the oldest, SEND/WRITE WQEs
/// entirely before it complete, a partly covered one advances its done
/// PSN; the walk stops at a failed WQE. Returns true when the range covers
/// a READ or atomic whose response has not (fully) arrived: the responder
/// has executed it, so its response was lost and the requester must retry.
pub fn implicit_ack<W: RingWqe>(wqes: &mut VecDeque<W>, end: u32) -> bool {
    for w in wqes.iter_mut() {
        if w.complete() {
            continue;
        }
        if w.error().is_some() {
            break;
        }
        if psn::diff(end, w.end_psn()) >= 0 {
            if w.kind().needs_response() {
                return true;
            }
            w.set_done_psn(w.end_psn());
            w.set_complete();
        } else {
            if !w.kind().needs_response() && psn::diff(end, w.done_psn()) > 0 {
                w.set_done_psn(end);
            }
            break;
        }
    }
    false
}

/// A READ response packet placed or an atomic ACK taken: the WQE's done
/// PSN becomes `new_done` and it completes if `completes`.
pub fn mark_response<W: RingWqe>(w: &mut W, new_done: u32, completes: bool) {
    w.set_done_psn(new_done);
    if completes {
        w.set_complete();
    }
}

/// The WQE an error at PSN `p` lands on: the one holding `p` unless it is
/// complete, else the oldest incomplete one.
pub fn fail_choice<W: RingWqe>(wqes: &VecDeque<W>, p: u32) -> Option<usize> {
    index_of(wqes, p)
        .filter(|&i| !wqes[i].complete())
        .or_else(|| wqes.iter().position(|w| !w.complete()))
}

/// Removes the completed WQEs at the head, in posting order (the caller
/// writes a success CQE for each signaled one). Returns them and whether
/// the WQE then at the head has failed: the QP must move to ERR.
pub fn drain<W: RingWqe>(wqes: &mut VecDeque<W>) -> (Vec<W>, bool) {
    let mut done = Vec::new();
    while let Some(w) = wqes.front() {
        if !w.complete() {
            let failed = w.error().is_some();
            return (done, failed);
        }
        done.extend(wqes.pop_front());
    }
    (done, false)
}

/// The send queue's part of the move to ERR: every WQE left completes, in
/// order, with its own error or WR_FLUSH_ERR.
pub fn flush<W: RingWqe>(wqes: &mut VecDeque<W>) -> Vec<(W, WcStatus)> {
    std::mem::take(wqes)
        .into_iter()
        .map(|w| {
            let status = w.error().unwrap_or(WcStatus::WrFlushErr);
            (w, status)
        })
        .collect()
}

/// The record the send-queue tracker keeps of one WQE (no payload, no
/// SGL, no wr_id: the host maps the ring slot to its wr_id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WqeRecord {
    pub kind: WqeKind,
    /// What the CQE reports.
    pub opcode: WcOpcode,
    pub first_psn: u32,
    pub npsn: u32,
    pub done_psn: u32,
    /// Message length in bytes (the success CQE's byte_len).
    pub len: u32,
    pub signaled: bool,
    pub complete: bool,
    pub error: Option<WcStatus>,
}

ring_wqe_fields!(WqeRecord);

/// One send completion as the tracker emits it: the ring slot stands for
/// the wr_id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingCqe {
    pub slot: usize,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    pub byte_len: u32,
}

/// A command to one QP's ring (the send-queue tracker's command port).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingCommand {
    Post(WqeRecord),
    /// Implicit ACK of every PSN before `end`; `next_psn` is the QP's
    /// next PSN, the una when no WQE is left incomplete.
    Ack {
        end: u32,
        next_psn: u32,
    },
    Lookup(u32),
    CompleteResponse {
        slot: usize,
        new_done: u32,
        completes: bool,
    },
    Fail {
        psn: u32,
        status: WcStatus,
    },
    Flush,
    /// QP to RESET: the ring empties without completions.
    Clear,
}

/// A command's result (the drain after it aside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingResult {
    /// The slot taken, `None` when the ring was full.
    Post(Option<usize>),
    Ack {
        lost: bool,
        una: u32,
    },
    /// The slot and record holding the PSN.
    Lookup(Option<(usize, WqeRecord)>),
    Done,
}

/// What one command did: its result, the CQEs it and the drain after it
/// emitted, and whether the drain found a failed WQE at the head (the
/// engine must move the QP to ERR, i.e. flush).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingOutcome {
    pub result: RingResult,
    pub cqes: Vec<RingCqe>,
    pub to_error: bool,
}

/// One QP's ring of `depth` slots as the send-queue tracker keeps it:
/// the completer's operations above on [`WqeRecord`]s, each command that
/// completes or fails a WQE (ack, complete_response, fail) followed by a
/// [`drain`]. A post or a lookup changes no WQE, so after one the head is
/// what the last drain left: the completer drains after every command that
/// could leave a completed WQE at the head and flushes when it finds a
/// failed one, so there is nothing for a drain to do and no drain runs.
#[derive(Clone, Debug)]
pub struct Ring {
    depth: usize,
    /// Slot of the oldest WQE.
    head: usize,
    wqes: VecDeque<WqeRecord>,
}

impl Ring {
    pub fn new(depth: usize) -> Ring {
        Ring {
            depth,
            head: 0,
            wqes: VecDeque::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.wqes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.wqes.is_empty()
    }

    pub fn wqes(&self) -> &VecDeque<WqeRecord> {
        &self.wqes
    }

    fn slot(&self, index: usize) -> usize {
        (self.head + index) % self.depth
    }

    /// The slot of the first WQE holding `p`.
    pub fn slot_of(&self, p: u32) -> Option<usize> {
        index_of(&self.wqes, p).map(|i| self.slot(i))
    }

    /// Index in posting order of the WQE in `slot`, if it holds one.
    pub fn index_of_slot(&self, slot: usize) -> Option<usize> {
        let i = (slot + self.depth - self.head) % self.depth;
        (i < self.wqes.len()).then_some(i)
    }

    pub fn apply(&mut self, command: RingCommand) -> RingOutcome {
        let mut cqes = Vec::new();
        let result = match command {
            RingCommand::Post(record) => {
                if self.wqes.len() == self.depth {
                    RingResult::Post(None)
                } else {
                    self.wqes.push_back(record);
                    RingResult::Post(Some(self.slot(self.wqes.len() - 1)))
                }
            }
            RingCommand::Ack { end, next_psn } => {
                let lost = implicit_ack(&mut self.wqes, end);
                RingResult::Ack {
                    lost,
                    una: una(&self.wqes, next_psn),
                }
            }
            RingCommand::Lookup(p) => {
                RingResult::Lookup(index_of(&self.wqes, p).map(|i| (self.slot(i), self.wqes[i])))
            }
            RingCommand::CompleteResponse {
                slot,
                new_done,
                completes,
            } => {
                if let Some(i) = self.index_of_slot(slot) {
                    mark_response(&mut self.wqes[i], new_done, completes);
                }
                RingResult::Done
            }
            RingCommand::Fail { psn, status } => {
                if let Some(i) = fail_choice(&self.wqes, psn) {
                    self.wqes[i].set_error(status);
                }
                RingResult::Done
            }
            RingCommand::Flush => {
                let head = self.head;
                let n = self.wqes.len();
                for (i, (w, status)) in flush(&mut self.wqes).into_iter().enumerate() {
                    cqes.push(RingCqe {
                        slot: (head + i) % self.depth,
                        status,
                        opcode: w.opcode,
                        byte_len: 0,
                    });
                }
                self.head = (head + n) % self.depth;
                RingResult::Done
            }
            RingCommand::Clear => {
                self.head = (self.head + self.wqes.len()) % self.depth;
                self.wqes.clear();
                RingResult::Done
            }
        };
        let drains = matches!(
            command,
            RingCommand::Ack { .. }
                | RingCommand::CompleteResponse { .. }
                | RingCommand::Fail { .. }
        );
        let (done, to_error) = if drains {
            drain(&mut self.wqes)
        } else {
            (Vec::new(), false)
        };
        for w in done {
            if w.signaled {
                cqes.push(RingCqe {
                    slot: self.head,
                    status: WcStatus::Success,
                    opcode: w.opcode,
                    byte_len: w.len,
                });
            }
            self.head = (self.head + 1) % self.depth;
        }
        RingOutcome {
            result,
            cqes,
            to_error,
        }
    }
}

/// One send-queue operation of a model NIC's completer (or requester) and
/// what it found, in the order they ran: see
/// [`crate::nic::Nic::record_ring_ops`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingRecord {
    pub qpn: Qpn,
    pub op: RingOp,
}

/// A CQE the model wrote for a send WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendCqe {
    pub wr_id: u64,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    pub byte_len: u32,
}

impl SendCqe {
    pub fn of(c: &Cqe) -> SendCqe {
        SendCqe {
            wr_id: c.wr_id,
            status: c.status,
            opcode: c.opcode,
            byte_len: c.byte_len,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RingOp {
    /// A WQE appended (posting order), with the wr_id the host keeps.
    Post { record: WqeRecord, wr_id: u64 },
    /// [`implicit_ack`] to `end`: `lost` and the una after it.
    Ack {
        end: u32,
        next_psn: u32,
        lost: bool,
        una: u32,
    },
    /// The WQE holding `psn` looked up for a READ response / atomic ACK.
    Lookup { psn: u32, found: Option<WqeRecord> },
    /// [`mark_response`] on the WQE holding `psn`.
    CompleteResponse {
        psn: u32,
        new_done: u32,
        completes: bool,
    },
    /// An error at `psn` ([`fail_choice`]; also a WQE failing its local
    /// checks, which is the one holding the PSN about to be sent).
    Fail { psn: u32, status: WcStatus },
    /// A [`drain`] that completed WQEs or found a failed one at the head.
    Drain { cqes: Vec<SendCqe>, failed: bool },
    /// The move to ERR ([`flush`]), with the CQEs written.
    Flush { cqes: Vec<SendCqe> },
    /// The QP went back to RESET: the queue emptied without completions.
    Clear,
}
