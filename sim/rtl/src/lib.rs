//! The Verilated RTL blocks (through `verilator-sys`) side by side with the
//! reference model: stream driver and scoreboard, per-block harnesses that
//! run frames through a block and say what it did, in the model's terms,
//! and the NIC harnesses that put a Verilated core on the fabric behind a
//! shadow model ([`nic::RtlNic`] for the responder half,
//! [`requester_nic::RtlRequesterNic`] for the requester half,
//! [`core_nic::RtlCoreNic`] for the whole core), all clocked by one run
//! loop (`harness::ClockedHarness`); [`node::Node`] makes a model NIC or
//! one of them a scenario's fabric node.
//!
//! Everything here is cycle-stepped and seeded: the same inputs and seed
//! give the same cycles, so a failure replays. Nothing here knows the
//! scenario engine or the command line (`rocenic-sim` drives these).

pub mod bar0;
pub mod core_nic;
pub mod dcqcn_watch;
pub mod dma_ports;
pub mod gen;
pub mod harness;
pub mod host_dma;
pub mod host_ports;
pub mod icrc;
pub mod mr_config;
pub mod nic;
pub mod node;
pub mod qp_config;
pub mod requester_nic;
pub mod rx;
pub mod stream;
pub mod tx;

use std::fmt;

/// Why an RTL run could not produce an answer the model can be compared
/// with.
#[derive(Debug)]
pub enum RtlError {
    /// The bridge refused (a port name or clock the block does not have).
    Sim(verilator_sys::SimError),
    /// The block broke a stream rule.
    Axi(stream::AxiViolation),
    /// The block stopped producing what it owes.
    Stuck { cycle: u64, what: String },
    /// The block produced something that cannot be lined up with its
    /// inputs (an output with no input behind it, say).
    Mismatch(String),
    /// The harness cannot drive this input.
    Unsupported(String),
}

impl fmt::Display for RtlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RtlError::Sim(e) => write!(f, "{e}"),
            RtlError::Axi(v) => write!(f, "AXI-Stream rule broken: {v}"),
            RtlError::Stuck { cycle, what } => {
                write!(f, "stuck at cycle {cycle}: waiting for {what}")
            }
            RtlError::Mismatch(m) => write!(f, "{m}"),
            RtlError::Unsupported(m) => write!(f, "cannot drive: {m}"),
        }
    }
}

impl std::error::Error for RtlError {}

impl From<verilator_sys::SimError> for RtlError {
    fn from(e: verilator_sys::SimError) -> Self {
        RtlError::Sim(e)
    }
}

impl From<stream::AxiViolation> for RtlError {
    fn from(v: stream::AxiViolation) -> Self {
        RtlError::Axi(v)
    }
}
