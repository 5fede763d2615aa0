//! Helpers shared by the RTL integration tests.

pub mod frames;
