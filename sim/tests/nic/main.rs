//! System tests on the Verilated NIC: the responder half, the requester half
//! and the whole NIC (`nic_top`: the core behind BAR0) on the simulated
//! fabric, each scored against its shadow model, and the `rocenic bench`
//! figures.

#[path = "../rtl_common/mod.rs"]
mod rtl_common;

mod ack_after_data;
mod bench;
mod dcqcn_incast;
mod nic_core;
mod nic_pair;
mod nic_requester;
mod nic_responder;
mod nic_top;
mod protection;
mod responder_path;
mod rnr;
mod scenarios;
