//! rocenic RTL: the RoCEv2 transport as rust-hdl blocks, exported to
//! Verilog for the FPGA flow.
//!
//! The datapath is 512 bits wide at 250 MHz, enough for 100 GbE line rate,
//! and every block talks AXI-Stream ([`stream`]). The blocks to be built
//! mirror the reference model in `sim/model`, which is their oracle at the
//! transaction level:
//!
//! - RX parser: Ethernet/IP/UDP/BTH and extension-header extraction;
//! - ICRC: check on receive, generation on transmit;
//! - TX builder: header assembly in front of payload beats;
//! - QP context RAM: per-QP state (PSNs, MSN, credits, timers);
//! - requester and responder: the RC/UC/UD send, RDMA read/write and atomic
//!   state machines;
//! - retransmit/ACK engine: Go-Back-N, ACK coalescing, NAK and RNR handling,
//!   the retry timers;
//! - MR translation: memory-key checks and virtual-to-DMA address lookup;
//! - DCQCN: ECN-driven rate control per QP (CNP generation and reaction);
//! - host interface: doorbells, work-queue and completion-queue DMA over PCIe.
//!
//! None of those exist yet. What exists is the shared stream interface and
//! the register slice that every block boundary will use to close timing.

pub mod byte_lane_select;
pub mod byte_reverse;
pub mod byte_rotator;
pub mod crc32_beat;
pub mod crc32_math;
pub mod export;
pub mod gf2_matrix;
pub mod header_record;
pub mod icrc_checker;
pub mod icrc_generator;
pub mod icrc_mask;
pub mod opcode_headers;
pub mod register_slice;
pub mod rx_parser;
pub mod skid_buffer;
pub mod stream;
pub mod sync_fifo;
pub mod testbench;
pub mod tx_builder;
pub mod tx_frame_merge;
pub mod tx_header;
pub mod tx_header_prep;
pub mod tx_icrc_append;
pub mod tx_udp_checksum;
pub mod wide;

pub use register_slice::AxisRegisterSlice;
pub use stream::{AxisSink, AxisSource, DATA_BITS, KEEP_BITS};
