//! Shared pieces of the RTL lockstep tests: proptest strategies for frames,
//! the known ICRC vectors, the drain check of the DMA-reading transmit
//! paths and the DMA write port check of the writing blocks.

#![allow(dead_code)]

pub mod completer;
pub mod dma_write;
pub mod drain;
pub mod faults;
pub mod messages;
pub mod responder;
pub mod traffic;

use proptest::prelude::*;
use rocenic_rtl::gen::frame_with;
use rocenic_wire::opcode::OPCODES;
use rocenic_wire::{RoceFrame, MAX_PAYLOAD};

/// Payload lengths biased to the edges: tiny, around one and two beats,
/// the maximum, and anything in between.
pub fn payload_len() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 0usize..8,
        2 => 56usize..140,
        3 => 0usize..=MAX_PAYLOAD,
        1 => (MAX_PAYLOAD - 8)..=MAX_PAYLOAD,
    ]
}

/// A valid frame: any opcode, IPv4 or IPv6, any payload length; all other
/// fields from a seed (so a shrunk case still shows the frame in full).
pub fn valid_frame() -> impl Strategy<Value = RoceFrame> {
    (0..OPCODES.len(), any::<bool>(), payload_len(), any::<u64>())
        .prop_map(|(op, v6, len, seed)| frame_with(op, v6, len, seed))
}

/// The frames of `sim/wire/tests/vectors/icrc.txt`: name and bytes.
pub fn icrc_vectors() -> Vec<(String, Vec<u8>)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/wire/tests/vectors/icrc.txt");
    let text = std::fs::read_to_string(path).expect("the ICRC vectors");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            let hex = cols[2];
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (cols[0].to_string(), bytes)
        })
        .collect()
}
