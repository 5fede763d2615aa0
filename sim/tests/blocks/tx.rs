//! TX lockstep: the Verilated TX builder against `RoceFrame::encode`. For
//! every opcode, both IP versions and edge payload sizes, and for
//! proptest-generated frames, the header record and payload stream go in
//! and the frames that come out are bit-identical to the codec's, under
//! random input gaps and output backpressure; records the codec refuses are
//! counted and send nothing; IPv4 frames without UDP checksum leave one
//! beat per cycle back to back.

use crate::rtl_common;

use proptest::prelude::*;
use rocenic_rtl::gen::{frame_of_len, frame_with};
use rocenic_rtl::stream::BEAT_BYTES;
use rocenic_rtl::tx::{run_tx_builder, TxDrive, TxRun};
use rocenic_wire::opcode::OPCODES;
use rocenic_wire::{IpHeader, RoceFrame};
use rtl_common::valid_frame;
use verilator_sys::TxBuilder;

/// Runs `frames` under `drive` and asserts that what comes out is exactly
/// the encodings of the frames the codec accepts, in order.
fn lockstep(frames: &[RoceFrame], drive: TxDrive) -> TxRun {
    let want: Vec<Vec<u8>> = frames.iter().filter_map(|f| f.encode().ok()).collect();
    let refused = (frames.len() - want.len()) as u64;
    let run = run_tx_builder::<TxBuilder>(frames, want.len(), drive)
        .unwrap_or_else(|e| panic!("{drive:?}: {e}"));
    assert_eq!(run.frames.len(), want.len());
    for (i, (got, want)) in run.frames.iter().zip(&want).enumerate() {
        if got.bytes != *want {
            let at = got
                .bytes
                .iter()
                .zip(want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.bytes.len().min(want.len()));
            panic!(
                "frame {i} under {drive:?}: {} bytes, codec {}; first difference at byte {at}\n rtl   {:02x?}\n codec {:02x?}",
                got.bytes.len(),
                want.len(),
                got.bytes,
                want
            );
        }
    }
    assert_eq!(run.dropped, refused, "dropped_frames counter");
    run
}

const BACKPRESSURE: TxDrive = TxDrive {
    p_header_valid: 0.6,
    p_payload_valid: 0.7,
    p_frame_ready: 0.4,
    seed: 3,
};

#[test]
fn every_opcode_ip_version_and_edge_size_is_bit_identical() {
    let mut frames = Vec::new();
    for (i, info) in OPCODES.iter().enumerate() {
        for v6 in [false, true] {
            let sizes: &[usize] = if info.has_payload {
                &[0, 1, 3, 4, 60, 64, 65, 200, 4096]
            } else {
                &[0]
            };
            for &len in sizes {
                frames.push(frame_with(i, v6, len, (i * 7919 + len) as u64));
            }
        }
    }
    lockstep(&frames, TxDrive::default());
    lockstep(&frames, BACKPRESSURE);
}

#[test]
fn records_the_codec_refuses_send_nothing() {
    let good = frame_with(4, false, 100, 1);
    // An opcode RoCEv2 does not use, and a payload on an opcode without
    // one; both between valid frames.
    let mut unknown = frame_with(4, false, 30, 2);
    unknown.bth.opcode = 0x1F;
    let read = OPCODES.iter().position(|o| o.code == 0x0C).unwrap();
    let mut with_payload = frame_with(read, true, 0, 3);
    with_payload.payload = vec![7; 70];
    let frames = vec![
        good.clone(),
        unknown,
        frame_with(10, true, 64, 4),
        with_payload,
        good,
    ];
    assert_eq!(frames.iter().filter(|f| f.encode().is_err()).count(), 2);
    lockstep(&frames, TxDrive::default());
    lockstep(&frames, BACKPRESSURE);
}

#[test]
fn ipv4_frames_leave_one_beat_per_cycle_back_to_back() {
    let sizes = [
        58usize, 62, 64, 65, 66, 100, 127, 128, 129, 130, 191, 192, 193, 256, 257, 1000, 1500,
        2048, 4096, 4150,
    ];
    let frames: Vec<RoceFrame> = sizes
        .iter()
        .flat_map(|&s| (0..3).map(move |k| frame_of_len(s, (s * 3 + k) as u64)))
        .collect();
    assert!(frames
        .iter()
        .all(|f| matches!(f.ip, IpHeader::V4(_)) && !f.udp_checksum));
    let run = lockstep(&frames, TxDrive::default());
    let beats: u64 = frames
        .iter()
        .map(|f| f.wire_len().div_ceil(BEAT_BYTES) as u64)
        .sum();
    assert_eq!(run.frame_beats, beats);
    let first = run.frames[0].first_cycle;
    let last = run.frames.last().unwrap().last_cycle;
    assert_eq!(last - first + 1, beats, "no idle output cycle");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// Random frames (any opcode, IPv4/IPv6, payload 0..=4096) under
    /// random gaps and backpressure come out bit-identical.
    #[test]
    fn random_frames_are_bit_identical(
        frames in prop::collection::vec(valid_frame(), 1..6),
        seed in any::<u64>(),
        p_header_valid in 0.2f64..=1.0,
        p_payload_valid in 0.2f64..=1.0,
        p_frame_ready in 0.1f64..=1.0,
    ) {
        lockstep(&frames, TxDrive { p_header_valid, p_payload_valid, p_frame_ready, seed });
    }
}
