//! The requester half of the RC transport with its completer: segmentation
//! of send WQEs into request packets, the transmit datapath, the send-queue
//! tracker (outstanding WQEs, implicit ACKs, send CQEs), the per-response
//! decision, the completer datapath, WQE bodies, the ready set of sendable
//! QPs, the event loop, the response placement path and the whole requester
//! path.

pub mod completer_datapath;
pub mod ready_set;
pub mod request_segmenter;
pub mod requester_datapath;
pub mod requester_events;
pub mod requester_path;
pub mod response_checker;
pub mod response_placement;
pub mod send_ports;
pub mod send_queue_tracker;
pub mod wqe_body_ram;
