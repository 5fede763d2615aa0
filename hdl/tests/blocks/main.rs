//! Block tests on rust-hdl's simulator, one module per block: each block
//! against its reference (the model's function or codec), recorded and
//! replayed cycle by cycle on its generated Verilog under Verilator, and the
//! per-block Verilator lint and Yosys checks.

#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
#[path = "../tx_common/mod.rs"]
mod tx_common;

mod atomic_unit;
mod bar_registers;
mod cnp_generator;
mod cnp_transmitter;
mod completer_datapath;
mod counter_bank;
mod cqe_writer;
mod dcqcn_notification_point;
mod dcqcn_rate_control;
mod dcqcn_reaction_point;
mod dcqcn_sender;
mod dma_write_mover;
mod event_queues;
mod icrc;
mod mr_translate;
mod nic_core;
mod pacing_gate;
mod pacing_scheduler;
mod pfc_pause;
mod qp_context;
mod qp_timers;
mod rd_atomic_resources;
mod receive_queue;
mod register_slice;
mod request_checker;
mod request_segmenter;
mod requester_datapath;
mod requester_events;
mod requester_path;
mod responder_datapath;
mod responder_path;
mod response_checker;
mod response_placement;
mod response_queue;
mod response_transmitter;
mod response_write_gate;
mod rx_parser;
mod send_queue_tracker;
mod tx_builder;
mod tx_frame_merge;
mod tx_header_prep;
mod tx_icrc_append;
mod tx_udp_checksum;
mod wqe_decoder;
mod wqe_fetch;
