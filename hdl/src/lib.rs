//! rocenic RTL: the RoCEv2 transport as rust-hdl blocks, exported to
//! Verilog for the FPGA flow.
//!
//! The datapath is 512 bits wide at 250 MHz, enough for 100 GbE line rate,
//! and every block talks AXI-Stream ([`stream`]). Each block mirrors a part
//! of the reference model in `sim`, which is its oracle; `sim/tests/rtl_*`
//! run the Verilated blocks against it frame by frame.
//!
//! The packet datapath exists:
//!
//! - [`rx_parser`]: Ethernet/IPv4/IPv6/UDP/BTH and extension headers into a
//!   [`header_record`], the payload realigned to lane 0, the ICRC checked in
//!   line ([`icrc_checker`]), drops counted per reason;
//! - [`tx_builder`]: header record + payload into a whole frame with IPv4
//!   checksum or IPv6 header, UDP length, pad and ICRC ([`icrc_generator`]);
//! - the CRC-32 engine behind both ([`crc32_beat`], [`crc32_math`],
//!   [`gf2_matrix`]) and small shared blocks (skid buffer, register slice,
//!   FIFO, byte rotator, the block RAMs [`sync_ram`] and the per-QP ring
//!   storage [`qp_slot_ram`]).
//!
//! The RC transport is being built block by block (the plan and how the
//! blocks fit: `docs/transport-core.md`). Each decision block mirrors a
//! pure function of the model, which the model itself calls:
//!
//! - [`qp_context`]: per-QP state in block RAM with a pipelined
//!   read-modify-write that forwards in-flight updates;
//! - [`mr_translate`]: MR table and MTT in block RAM, (key, VA, length) to
//!   host DMA segments split at page boundaries, every protection check in
//!   hardware;
//! - [`qp_timers`]: the retransmit engine's per-QP local ACK timeout and
//!   RNR wait, a RAM of deadlines scanned round robin;
//! - [`request_checker`]: the responder's per-request decision (QP state,
//!   PSN class, opcode sequence and lengths, RNR, ACK/NAK, new context and
//!   message in progress, placement) from the header and the QP's state;
//! - [`request_segmenter`]: the requester's segmentation, a send WQE and
//!   its resume PSN into request packet descriptors (opcode, PSN, AckReq,
//!   extension headers, payload offset and length), one per cycle, stopped
//!   by the send window as the model's requester is;
//! - [`response_checker`]: the completer's per-response decision (ACK,
//!   NAK, RNR NAK, READ response placement, atomic ACK) from the header,
//!   the QP context and the WQE the response belongs to;
//! - [`response_queue`]: the responder's per-QP queue of ACKs, NAKs,
//!   atomic ACKs and READ responses in block RAM, with a ready-QP FIFO,
//!   yielding response packet descriptors (READ split by MTU);
//! - [`send_queue_tracker`]: the ACK engine's per-QP rings of outstanding
//!   send WQEs (implicit-ACK walk, response lookup and marking, errors,
//!   flush) and the send CQEs due in posting order;
//! - [`receive_queue`]: the responder's per-QP rings of posted receive
//!   WQEs (one SGE each) with the non-empty flag the request checker
//!   samples, head read, completion with the receive CQE, flush to
//!   WR_FLUSH_ERR and clear;
//! - [`rd_atomic_resources`]: the responder's per-QP READ/atomic resources
//!   in block RAM and the decision for a duplicate READ (fits, re-execute)
//!   or atomic (replay the original value);
//! - [`atomic_unit`]: CMP_SWAP / FETCH_ADD on host memory through a DMA
//!   read and a posted DMA write, one atomic at a time.
//!
//! The composite paths built from them so far:
//!
//! - [`payload_fetch`]: a transmit path's payload fetch, shared by both
//!   transmit paths: key check and page split, tagged DMA reads
//!   reassembled out of order in 8 packet slots, payload realigned;
//! - [`dma_write_mover`]: a receive path's DMA write side, shared by both
//!   receive paths: a payload stream rotated onto host address lanes and
//!   written to its one or two page segments as framed DMA write requests;
//! - [`completer_datapath`]: the completer path, one completer event
//!   (response, timer expiry, send WQE posted, transmit grant and its
//!   status) of one QP with its context fields through the response
//!   checker and the send-queue tracker into the context write-back, the
//!   timer command, the response's placement, the granted WQE and the send
//!   CQEs;
//! - [`requester_datapath`]: the requester's transmit path, a grant (one
//!   WQE with a one-SGE local buffer) through the segmenter, the local key
//!   check and page split, tagged DMA reads reassembled out of order, and
//!   the TX builder into request frames;
//! - [`requester_events`]: the requester half's event loop, host posts,
//!   response headers, timer expiries ([`qp_timers`] inside), grant
//!   requests from the [`ready_set`], sent statuses and moves to ERR,
//!   round robin, one at a time through its own QP context into the
//!   completer datapath, with the WQE bodies ([`wqe_body_ram`]) joined to
//!   the grants;
//! - [`nic_core`]: the whole RC transport of one NIC, both halves with
//!   the receive stream copied to each, the frame and DMA arbiters and the
//!   ERR events between the halves;
//! - [`requester_path`]: the requester half of a NIC, the event loop,
//!   the ready set, the response placement path (its headers into the
//!   event loop, one placement command each) and the transmit datapath
//!   (grants with the QP's addressing from a [`qp_address_ram`], their
//!   statuses back as sent events);
//! - [`responder_datapath`]: the responder's receive path for SEND, RDMA
//!   WRITE, READ and atomics, frames in (parser, QP context and message
//!   RAM, request checker, MR translation, receive queue, READ / atomic
//!   resources, atomic unit) to host DMA writes and atomic reads, receive
//!   CQEs, response-queue commands and per-packet verdicts;
//! - [`response_placement`]: the requester's response receive path,
//!   frames in (parser) to response headers for the completer, the payload
//!   held in a FIFO until its placement command, then the local-write MR
//!   check and page split into host DMA writes, with a check result;
//! - [`response_transmitter`]: the responder's transmit path, response
//!   packet descriptors (ACK, NAK, atomic ACK, READ response) through the
//!   R_Key check and page split, tagged DMA reads of READ data reassembled
//!   out of order, and the TX builder into response frames;
//! - [`response_write_gate`]: response descriptors held, in order, until
//!   the DMA writes they depend on (write sequence numbers) were accepted
//!   by the host port: no ACK before its data.
//!
//! And the first pieces of the core's own: [`frame_arbiter`], the CNP,
//! response and request frame sources joined into the MAC's transmit
//! stream, whole frames in the model's priority order; [`dma_read_arbiter`],
//! two tagged DMA read clients on one host read port; [`dma_write_arbiter`],
//! two DMA write clients on one host write port, whole bursts.
//!
//! To come, mirroring `sim/model`: the other paths and the core that wires
//! them (event arbitration, TX scheduler, DMA engines); the DCQCN rate
//! shaper; the host interface (doorbells, WQE fetch, CQE write).
//!
//! [`export::blocks`] lists what is exported to Verilog for Verilator and
//! for `make lint-rtl` / `make synth`.

pub mod atomic_unit;
pub mod byte_lane_select;
pub mod byte_reverse;
pub mod byte_rotator;
pub mod completer_datapath;
pub mod crc32_beat;
pub mod crc32_math;
pub mod dma_port;
pub mod dma_read_arbiter;
pub mod dma_write_arbiter;
pub mod dma_write_mover;
pub mod export;
pub mod frame_arbiter;
pub mod gf2_matrix;
pub mod header_record;
pub mod icrc_checker;
pub mod icrc_generator;
pub mod icrc_mask;
pub mod mr_translate;
pub mod nic_core;
pub mod opcode_headers;
pub mod payload_fetch;
pub mod qp_address_ram;
pub mod qp_context;
pub mod qp_context_record;
pub mod qp_slot_ram;
pub mod qp_timers;
pub mod rd_atomic_resources;
pub mod ready_set;
pub mod receive_queue;
pub mod register_slice;
pub mod request_checker;
pub mod request_segmenter;
pub mod requester_datapath;
pub mod requester_events;
pub mod requester_path;
pub mod responder_datapath;
pub mod responder_path;
pub mod response_checker;
pub mod response_placement;
pub mod response_queue;
pub mod response_transmitter;
pub mod response_write_gate;
pub mod rx_parser;
pub mod send_queue_tracker;
pub mod skid_buffer;
pub mod stream;
pub mod sync_fifo;
pub mod sync_ram;
pub mod testbench;
pub mod tx_builder;
pub mod tx_frame_merge;
pub mod tx_header;
pub mod tx_header_prep;
pub mod tx_icrc_append;
pub mod tx_udp_checksum;
pub mod wide;
pub mod wqe_body_ram;

pub use register_slice::AxisRegisterSlice;
pub use stream::{AxisSink, AxisSource, DATA_BITS, KEEP_BITS};
