//! rocenic RTL: the RoCEv2 RC transport as rust-hdl blocks, exported to
//! Verilog for the FPGA flow.
//!
//! The datapath is 512 bits wide at 250 MHz, enough for 100 GbE line rate,
//! and blocks talk AXI-Stream ([`primitives::stream`]). Each block mirrors a
//! part of the reference model (`rocenic-model`), which is its oracle: the
//! decision blocks compute a pure function the model itself calls, and the
//! Verilated blocks run against the model frame by frame.
//!
//! The groups, lowest first; a group uses only groups above it in this list:
//!
//! - [`primitives`]: streams, RAMs, FIFOs, skid and register slices, byte
//!   lanes;
//! - [`codes`]: the transport's codes (opcodes and their headers);
//! - [`frame`]: a frame's bytes: CRC-32 per beat, the ICRC checker and
//!   generator ([`frame::crc`]), the receive parser ([`frame::rx`]) and
//!   the transmit frame builder ([`frame::tx`]);
//! - [`qp`]: per-QP state (context record and RAM, address RAM, timers);
//! - [`dma`]: host DMA ports, MR translation, payload fetch, write mover,
//!   arbiters;
//! - [`responder`], [`requester`]: the two halves of the RC transport;
//! - [`congestion`]: DCQCN's notification and reaction points, per-QP
//!   pacing on transmit, PFC pause on receive;
//! - [`nic`]: the core that joins them;
//! - [`host`]: the host interface in front of it (BAR registers, counters,
//!   completion and event queues, in the host ABI's layouts, `rocenic-abi`).
//!
//! How the blocks fit together: `docs/transport-core.md`; what is built and
//! how big each block synthesizes: `docs/status.md`. [`export::blocks`]
//! lists what is exported to Verilog for Verilator and for `make lint-rtl` /
//! `make synth`.

pub mod codes;
pub mod congestion;
pub mod dma;
pub mod export;
pub mod frame;
pub mod host;
pub mod nic;
pub mod primitives;
pub mod qp;
pub mod requester;
pub mod responder;
