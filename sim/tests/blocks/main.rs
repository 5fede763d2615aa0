//! Block lockstep tests: each exported RTL block under Verilator against
//! the reference model's function for it, on the same stimulus (one module
//! per block).

#[path = "../../model/tests/common/mod.rs"]
mod harness;
#[path = "../rtl_common/mod.rs"]
mod rtl_common;

mod atomic_unit;
mod completer_datapath;
mod dcqcn_reaction_point;
mod decode;
mod dma_write_mover;
mod icrc;
mod mr_translate;
mod pacing_scheduler;
mod qp_context;
mod qp_timers;
mod rd_atomic_resources;
mod receive_queue;
mod request_checker;
mod request_segmenter;
mod requester_datapath;
mod requester_events;
mod responder_datapath;
mod response_checker;
mod response_placement;
mod response_queue;
mod response_transmitter;
mod rx;
mod send_queue_tracker;
mod tx;
