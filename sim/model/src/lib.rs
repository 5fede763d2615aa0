//! The reference model of the rocenic RoCEv2 transport: the oracle every RTL
//! block is checked against.
//!
//! One [`nic::Nic`] is one NIC port with its host memory: verbs on the host
//! side, frames on the wire side. It mirrors the RTL blocks one to one at
//! the transaction level (requester, responder, completer, MR translation,
//! DCQCN), in the spirit of Linux Soft-RoCE (`drivers/infiniband/sw/rxe`).

pub mod completer;
pub(crate) mod cq;
pub mod dcqcn;
pub mod dcqcn_fluid;
pub mod dcqcn_integer;
pub(crate) mod dma;
pub mod host_interface;
pub mod link_pause;
pub mod memory;
pub mod mr;
pub mod nic;
pub mod node;
pub mod pacing;
pub mod pfc_pause;
pub(crate) mod qp;
pub mod requester;
pub mod responder;
pub mod response_queue;
pub mod send_queue;
pub mod timers;
pub(crate) mod trace;
pub(crate) mod tx;
pub mod verbs;

pub use fabric::Time;
use rocenic_fabric as fabric;
