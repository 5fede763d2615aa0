//! Congestion control in the NIC's own logic: DCQCN's reaction point (a
//! rate per sending QP, cut on CNPs and raised by timers and a byte
//! counter) and the scan that ticks its timers.

pub mod dcqcn_rate_control;
pub mod dcqcn_reaction_point;
