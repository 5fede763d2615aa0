//! Helpers shared by the RTL integration tests.

pub mod frames;
pub mod rx;
