//! Primitives every other group builds on: the AXI-Stream interface and its
//! register slice and skid buffer, synchronous-read block RAM and the FIFO
//! on it, byte-lane selection, reversal and rotation of a 512-bit beat, and
//! the conversions between wide `Bits` and 64-bit words.

pub mod byte_lane_select;
pub mod byte_reverse;
pub mod byte_rotator;
pub mod register_slice;
pub mod skid_buffer;
pub mod stream;
pub mod sync_fifo;
pub mod sync_ram;
pub mod wide;
