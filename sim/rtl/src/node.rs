//! [`Node`]: a fabric node that is a model NIC or an RTL NIC harness, so
//! both kinds share one fabric and one scenario ([`ScenarioNode`]).

use crate::harness::RtlHarness;
use rocenic_fabric::{Endpoint, Time};
use rocenic_model::memory::HostMemory;
use rocenic_model::nic::Nic;
use rocenic_model::node::{CongestionCounters, ScenarioNode};
use rocenic_model::verbs::{CqId, Cqe, Qpn, RecvWr, SendWr};

/// A fabric node that is a model NIC or an RTL NIC harness `R`, so both
/// kinds share one fabric.
pub enum Node<R> {
    Model(Box<Nic>),
    Rtl(Box<R>),
}

impl<R> Node<R> {
    pub fn model(&self) -> Option<&Nic> {
        match self {
            Node::Model(n) => Some(n),
            Node::Rtl(_) => None,
        }
    }

    pub fn model_mut(&mut self) -> Option<&mut Nic> {
        match self {
            Node::Model(n) => Some(n),
            Node::Rtl(_) => None,
        }
    }

    pub fn rtl(&self) -> Option<&R> {
        match self {
            Node::Rtl(n) => Some(n),
            Node::Model(_) => None,
        }
    }

    pub fn rtl_mut(&mut self) -> Option<&mut R> {
        match self {
            Node::Rtl(n) => Some(n),
            Node::Model(_) => None,
        }
    }
}

impl<R: RtlHarness> Endpoint for Node<R> {
    fn mac(&self) -> [u8; 6] {
        match self {
            Node::Model(n) => n.mac(),
            Node::Rtl(n) => n.mac(),
        }
    }

    fn receive(&mut self, now: Time, frame: Vec<u8>) {
        match self {
            Node::Model(n) => n.receive(now, frame),
            Node::Rtl(n) => n.receive(now, frame),
        }
    }

    fn transmit(&mut self, now: Time) -> Option<Vec<u8>> {
        match self {
            Node::Model(n) => n.transmit(now),
            Node::Rtl(n) => n.transmit(now),
        }
    }

    fn next_deadline(&self) -> Option<Time> {
        match self {
            Node::Model(n) => n.next_deadline(),
            Node::Rtl(n) => n.next_deadline(),
        }
    }

    fn advance(&mut self, now: Time) {
        match self {
            Node::Model(n) => n.advance(now),
            Node::Rtl(n) => n.advance(now),
        }
    }
}

impl<R: RtlHarness> ScenarioNode for Node<R> {
    fn verbs(&mut self) -> anyhow::Result<&mut Nic> {
        match self {
            Node::Model(n) => Ok(n),
            Node::Rtl(n) => Ok(n.setup()?),
        }
    }

    fn model_view(&self) -> &Nic {
        match self {
            Node::Model(n) => n,
            Node::Rtl(n) => n.shadow(),
        }
    }

    fn post_send(&mut self, qpn: Qpn, wr: SendWr) -> anyhow::Result<()> {
        match self {
            Node::Model(n) => Ok(n.post_send(qpn, wr)?),
            Node::Rtl(n) => n.post_send(qpn, wr),
        }
    }

    fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> anyhow::Result<()> {
        match self {
            Node::Model(n) => Ok(n.post_recv(qpn, wr)?),
            Node::Rtl(n) => n.post_recv(qpn, wr),
        }
    }

    fn poll_cq(&mut self, cq: CqId, max: usize) -> Vec<Cqe> {
        match self {
            Node::Model(n) => n.poll_cq(cq, max),
            Node::Rtl(n) => n.poll_cq(cq, max),
        }
    }

    fn cq_len(&self, cq: CqId) -> usize {
        match self {
            Node::Model(n) => n.cq_len(cq),
            Node::Rtl(n) => n.cq_len(cq),
        }
    }

    fn host_memory(&self) -> &HostMemory {
        match self {
            Node::Model(n) => n.memory(),
            Node::Rtl(n) => n.memory(),
        }
    }

    fn mismatch(&self) -> Option<String> {
        self.rtl().and_then(|n| n.mismatch().map(str::to_owned))
    }

    fn finish_check(&mut self) -> Result<(), String> {
        self.rtl_mut().map_or(Ok(()), |n| n.finish_check())
    }

    fn core_cycles(&self) -> Option<u64> {
        self.rtl().map(|n| n.cycles())
    }

    fn congestion(&self) -> CongestionCounters {
        match self {
            Node::Model(n) => n.congestion(),
            Node::Rtl(n) => n.congestion(),
        }
    }
}
