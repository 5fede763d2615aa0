//! The responder half of the RC transport: the per-request decision (PSN
//! class, opcode sequence, access), receive WQE rings, READ / atomic
//! resources and the atomic unit, the queue of ACKs, NAKs and READ
//! responses, the gate that holds a response until its data is written, the
//! response transmitter, and the receive and whole responder paths.

pub mod atomic_unit;
pub mod outcome_stream;
pub mod rd_atomic_resources;
pub mod receive_queue;
pub mod request_checker;
pub mod responder_datapath;
pub mod responder_path;
pub mod response_queue;
pub mod response_transmitter;
pub mod response_write_gate;
