//! RoCEv2 test frames for the RTL tests, encoded with the reference codec
//! (`rocenic_wire`): the shared ICRC vectors, one frame of a chosen opcode,
//! IP version and payload size with random field values, and helpers to
//! split frames into 64-byte beats. Shared by the in-crate unit tests
//! (included by path) and the integration tests.

#![allow(dead_code)]

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rocenic_wire::opcode::{OpcodeInfo, OPCODES};
use rocenic_wire::*;

/// The three frames of `sim/wire/tests/vectors/icrc.txt`, as bytes.
pub fn vectors() -> Vec<(String, Vec<u8>)> {
    include_str!("../../../sim/wire/tests/vectors/icrc.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let fields: Vec<&str> = l.split('|').map(str::trim).collect();
            let hex = fields[2];
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (fields[0].to_string(), bytes)
        })
        .collect()
}

/// A valid frame of `opcode` with random header values and `payload_len`
/// random payload bytes (forced to 0 for opcodes without payload).
pub fn frame(opcode: u8, ipv6: bool, payload_len: usize, seed: u64) -> RoceFrame {
    let info: &OpcodeInfo = opcode::info(opcode).expect("known opcode");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rocenic_wire::random::frame_of(&mut rng, info, ipv6, payload_len)
}

/// Encoded bytes of [`frame`].
pub fn frame_bytes(opcode: u8, ipv6: bool, payload_len: usize, seed: u64) -> Vec<u8> {
    frame(opcode, ipv6, payload_len, seed)
        .encode()
        .expect("valid frame")
}

/// Every opcode of the codec, in table order.
pub fn opcodes() -> Vec<u8> {
    OPCODES.iter().map(|o| o.code).collect()
}

/// A mix for the ICRC tests: the vectors, every opcode on both IP
/// versions, and the payload sizes around beat boundaries.
pub fn icrc_frames() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = vectors().into_iter().map(|(_, b)| b).collect();
    for (i, op) in opcodes().into_iter().enumerate() {
        for ipv6 in [false, true] {
            out.push(frame_bytes(op, ipv6, (i * 37) % 200, i as u64));
        }
    }
    for (i, len) in [0usize, 1, 3, 4, 60, 64, 65, 127, 128, 4096]
        .into_iter()
        .enumerate()
    {
        for ipv6 in [false, true] {
            out.push(frame_bytes(op::SEND_ONLY, ipv6, len, 100 + i as u64));
        }
    }
    out
}
