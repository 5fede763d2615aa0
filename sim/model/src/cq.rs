//! Completion queues: CQEs in the order the transport generates them.

use crate::verbs::Cqe;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub(crate) struct Cq {
    pub depth: u32,
    pub entries: VecDeque<Cqe>,
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
    pub fn push(&mut self, cqe: Cqe) -> bool {
        let fits = self.entries.len() < self.depth as usize;
        self.entries.push_back(cqe);
        fits
    }

    pub fn poll(&mut self, max: usize) -> Vec<Cqe> {
        let n = max.min(self.entries.len());
        self.entries.drain(..n).collect()
    }
}
