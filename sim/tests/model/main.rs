//! Model-tier tests: scenarios on the reference model over the fabric,
//! DCQCN, `rocenic perf` through the driver, and the shadow-model mechanism the RTL harnesses rely on. Build and
//! run without Verilator (`--no-default-features`).

#[path = "../rtl_common/faults.rs"]
mod faults;
#[allow(dead_code)]
#[path = "../rtl_common/traffic.rs"]
mod traffic;

mod cli;
mod dcqcn;
mod perf;
mod scenarios;
mod shadow_model;
