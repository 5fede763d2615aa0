//! The rocenic simulator: scenarios that run NICs over the simulated fabric,
//! and the pieces of the `rocenic` command line.

pub mod bound;
pub mod decode;
pub mod frames;
pub mod incast;
pub mod rtl;
pub mod scenario;
