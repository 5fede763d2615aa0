//! [`ScenarioNode`]: the verbs surface a scenario drives on a fabric node,
//! whether the node is a model [`Nic`] or a Verilated NIC core behind its
//! shadow model (`rocenic_rtl::node::Node`).
//!
//! It lives with the model, below both the scenario engine
//! (`rocenic-sim`) and the RTL harnesses (`rocenic-rtl`): the harnesses
//! implement it without knowing the scenario engine, and the engine runs
//! on model nodes without the RTL.

use crate::memory::HostMemory;
use crate::nic::Nic;
use crate::verbs::{CqId, Cqe, Qpn, RecvWr, SendWr};
use anyhow::Result;
use rocenic_fabric::Endpoint;

/// The RTL core's clock period (250 MHz): fabric nanoseconds per core
/// cycle, the unit of [`ScenarioNode::core_cycles`].
pub const NS_PER_CYCLE: u64 = 4;

/// A fabric node a scenario runs on: the model NIC itself, or an RTL NIC
/// behind its shadow model (`rocenic_rtl::node::Node`). The verbs that set
/// a node up go to its model view; completions and host memory are the
/// node's own (the RTL core's, for an RTL node).
pub trait ScenarioNode: Endpoint {
    /// The model to give the setup verbs to (PDs, CQs, QPs, MRs, buffers,
    /// receive WQEs), before the run.
    fn verbs(&mut self) -> Result<&mut Nic>;
    /// The model state after the run: the NIC itself, or the shadow that
    /// matched the RTL (counters come from it).
    fn model_view(&self) -> &Nic;
    fn post_send(&mut self, qpn: Qpn, wr: SendWr) -> Result<()>;
    fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> Result<()>;
    fn poll_cq(&mut self, cq: CqId, max: usize) -> Vec<Cqe>;
    fn cq_len(&self, cq: CqId) -> usize;
    /// The host memory the node's DMA acted on.
    fn host_memory(&self) -> &HostMemory;
    /// A difference between an RTL core and its shadow; the run stops.
    fn mismatch(&self) -> Option<String> {
        None
    }
    /// The end-of-run check of an RTL node (drain, memory equal).
    fn finish_check(&mut self) -> std::result::Result<(), String> {
        Ok(())
    }
    /// Core clock cycles run, for an RTL node.
    fn core_cycles(&self) -> Option<u64> {
        None
    }
    /// What the node's transmit side did about congestion (for an RTL
    /// node, the core's own counts).
    fn congestion(&self) -> CongestionCounters {
        let nic = self.model_view();
        CongestionCounters {
            rate_cuts: nic.rate_cuts(),
            rx_pause_frames: nic.counters().rx_pause_frames,
            pause_watchdog_trips: nic.counters().pause_watchdog_trips,
        }
    }
}

/// A node's answers to congestion: DCQCN's rate cuts and PFC's pauses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CongestionCounters {
    /// Rate cuts its sending QPs' reaction points made.
    pub rate_cuts: u64,
    /// PFC frames it received (the model counts each; an RTL core each
    /// that paused a priority it honours).
    pub rx_pause_frames: u64,
    /// Pauses that lasted past the watchdog time and stopped being
    /// honoured.
    pub pause_watchdog_trips: u64,
}

impl ScenarioNode for Nic {
    fn verbs(&mut self) -> Result<&mut Nic> {
        Ok(self)
    }

    fn model_view(&self) -> &Nic {
        self
    }

    fn post_send(&mut self, qpn: Qpn, wr: SendWr) -> Result<()> {
        Ok(Nic::post_send(self, qpn, wr)?)
    }

    fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> Result<()> {
        Ok(Nic::post_recv(self, qpn, wr)?)
    }

    fn poll_cq(&mut self, cq: CqId, max: usize) -> Vec<Cqe> {
        Nic::poll_cq(self, cq, max)
    }

    fn cq_len(&self, cq: CqId) -> usize {
        Nic::cq_len(self, cq)
    }

    fn host_memory(&self) -> &HostMemory {
        self.memory()
    }
}
