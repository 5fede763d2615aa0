//! The rocenic simulator: scenarios that run NICs over the simulated fabric,
//! and the pieces of the `rocenic` command line.
//!
//! With the `rtl` feature (on by default) a scenario's NICs can also be the
//! Verilated RTL (`rocenic-rtl`), and `rocenic bench` and
//! `rocenic decode --backend rtl` exist; without it nothing here needs
//! Verilator.

#[cfg(feature = "rtl")]
pub mod bench;
pub mod bound;
pub mod decode;
pub mod frames;
pub mod incast;
pub mod perf;
pub mod plot;
#[cfg(feature = "rtl")]
pub mod rtl_decode;
pub mod scenario;
