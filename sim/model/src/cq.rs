//! Completion queues: CQEs in the order the transport generates them,
//! each with whether it is solicited (IBA 11.4.2.2: a receive completion
//! of a message whose last packet carried the Solicited Event bit), which
//! is not part of the verbs' work completion but decides a CQ's
//! solicited-only events.

use crate::verbs::Cqe;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub(crate) struct Cq {
    pub depth: u32,
    pub entries: VecDeque<(Cqe, bool)>,
}

impl Cq {
    pub fn new(depth: u32) -> Cq {
        Cq {
            depth,
            entries: VecDeque::new(),
        }
    }

    /// Appends a CQE; returns false when the CQ was already full. The
    /// model keeps the entry anyway so no completion is ever lost to a
    /// test, and the overflow is counted by the caller (real hardware
    /// would raise a CQ error event).
    pub fn push(&mut self, cqe: Cqe, solicited: bool) -> bool {
        let fits = self.entries.len() < self.depth as usize;
        self.entries.push_back((cqe, solicited));
        fits
    }

    pub fn poll(&mut self, max: usize) -> Vec<(Cqe, bool)> {
        let n = max.min(self.entries.len());
        self.entries.drain(..n).collect()
    }
}
