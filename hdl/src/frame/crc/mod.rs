//! CRC-32 at 64 bytes per cycle and the RoCEv2 ICRC on it: the CRC algebra
//! (GF(2) matrices for zero-run shifts), the per-beat engine, the ICRC's
//! masking of the variant header fields, and the checker (receive) and
//! generator (transmit) built from them.

pub mod crc32_beat;
pub mod crc32_math;
pub mod gf2_matrix;
pub mod icrc_checker;
pub mod icrc_generator;
pub mod icrc_mask;
