//! Congestion control in the NIC's own logic: DCQCN's reaction point (a
//! rate per sending QP, cut on CNPs and raised by timers and a byte
//! counter), with the notification point and the pacing scheduler to join
//! it.

pub mod dcqcn_reaction_point;
