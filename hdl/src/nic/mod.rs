//! The core top: both transport halves joined into one NIC with one MAC
//! stream (the frame arbiter's CNP, response and request sources), one DMA
//! read and one DMA write port, and the ERR events between the halves; the
//! NIC top puts it behind BAR0 and the host ABI's counters.

pub mod frame_arbiter;
pub mod nic_core;
pub mod nic_top;
