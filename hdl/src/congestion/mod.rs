//! Congestion control in the NIC's own logic: DCQCN's notification point
//! (a CNP for a CE-marked packet, at most one per interval per QP, and the
//! generator that frames it to the QP's peer), its
//! reaction point (a rate per sending QP, cut on CNPs and raised by timers
//! and a byte counter) and the scan that ticks the reaction point's timers;
//! the pacing gate that holds each sending QP to its rate on transmit and
//! the scheduler that asks it for each QP with work in turn; the sending
//! NIC's DCQCN that joins those two to the requester's grant path; priority
//! flow control's pause on receive, with its watchdog.

pub mod cnp_generator;
pub mod cnp_transmitter;
pub mod dcqcn_notification_point;
pub mod dcqcn_rate_control;
pub mod dcqcn_reaction_point;
pub mod dcqcn_sender;
pub mod pacing_gate;
pub mod pacing_scheduler;
pub mod pfc_pause;
