//! RX parser lockstep: the Verilated RX parser against the model's decoder
//! on valid frames of every opcode, IP version and payload size, and on
//! malformed frames of every drop reason: accept/drop, reason, every header
//! field, payload bytes realigned, per-reason counters; random valid gaps
//! and output backpressure lose, duplicate or reorder nothing; at full rate
//! the parser takes one beat per cycle and never stalls its input.

use crate::rtl_common;

use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::frame::rx::rx_parser::RECORD_LATENCY;
use rocenic_rtl::gen::{frame_of_len, frame_with, malform, Malformation};
use rocenic_rtl::rx::{compare_rx, expected_counters, model_rx, run_rx_parser, RxDrive, RxRun};
use rocenic_rtl::stream::BEAT_BYTES;
use rocenic_wire::opcode::OPCODES;
use rtl_common::{icrc_vectors, valid_frame};
use verilator_sys::RxParser;

/// Runs `frames` under `drive` and asserts that every output agrees with
/// the model and the counters add up.
fn lockstep(frames: &[Vec<u8>], drive: RxDrive) -> RxRun {
    let run = run_rx_parser::<RxParser>(frames, drive).unwrap_or_else(|e| panic!("{drive:?}: {e}"));
    let mut failures = Vec::new();
    for (i, (bytes, out)) in frames.iter().zip(&run.outputs).enumerate() {
        let diffs = compare_rx(bytes, out);
        if !diffs.is_empty() {
            failures.push(format!(
                "frame {i} ({} bytes, model {:?}): {}\n  bytes {:02x?}",
                bytes.len(),
                model_rx(bytes).reason,
                diffs.join("; "),
                bytes
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} frames disagree under {drive:?}:\n{}",
        failures.len(),
        frames.len(),
        failures.join("\n")
    );
    let expects: Vec<_> = frames.iter().map(|f| model_rx(f)).collect();
    assert_eq!(run.counters, expected_counters(&expects), "counters");
    run
}

const BACKPRESSURE: RxDrive = RxDrive {
    p_valid: 0.7,
    p_payload_ready: 0.4,
    p_record_ready: 0.5,
    seed: 5,
};

fn encode_all(frames: &[rocenic_wire::RoceFrame]) -> Vec<Vec<u8>> {
    frames.iter().map(|f| f.encode().unwrap()).collect()
}

#[test]
fn every_opcode_ip_version_and_edge_size_agrees() {
    let mut frames = Vec::new();
    for (i, info) in OPCODES.iter().enumerate() {
        for v6 in [false, true] {
            let sizes: &[usize] = if info.has_payload {
                &[0, 1, 3, 4, 60, 64, 65, 4096]
            } else {
                &[0]
            };
            for &len in sizes {
                frames.push(frame_with(i, v6, len, (i * 1000 + len) as u64));
            }
        }
    }
    let mut bytes = encode_all(&frames);
    bytes.extend(icrc_vectors().into_iter().map(|(_, b)| b));
    let run = lockstep(&bytes, RxDrive::default());
    assert_eq!(run.input_stalls, 0, "full rate: the input never waits");
    lockstep(&bytes, BACKPRESSURE);
}

#[test]
fn every_malformation_agrees_with_the_model() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut frames = Vec::new();
    for seed in 0..24u64 {
        let len = [0, 1, 2, 3, 5, 61, 64, 300, 4096, 130, 7, 66][seed as usize % 12];
        let f = frame_with(seed as usize * 5, seed % 2 == 1, len, seed);
        for kind in Malformation::ALL {
            frames.push(malform(&f, kind, &mut rng));
        }
        frames.push(f.encode().unwrap());
    }
    let reasons: std::collections::BTreeSet<_> =
        frames.iter().map(|f| model_rx(f).reason).collect();
    // Every reason the RTL can give (udp_checksum is not verified there).
    assert_eq!(reasons.len(), 18, "{reasons:?}");
    let run = lockstep(&frames, RxDrive::default());
    assert_eq!(run.self_stalls, 0);
    lockstep(&frames, BACKPRESSURE);
}

#[test]
fn one_beat_per_cycle_back_to_back_at_every_size() {
    // Sizes from one beat to 66 beats, and just over each boundary.
    let sizes = [
        58usize, 60, 62, 64, 65, 66, 100, 127, 128, 129, 130, 191, 192, 193, 256, 257, 1000, 1500,
        2048, 4096, 4150,
    ];
    let frames: Vec<Vec<u8>> = sizes
        .iter()
        .flat_map(|&s| (0..3).map(move |k| frame_of_len(s, (s * 3 + k) as u64)))
        .map(|f| f.encode().unwrap())
        .collect();
    let beats: u64 = frames
        .iter()
        .map(|f| f.len().div_ceil(BEAT_BYTES) as u64)
        .sum();
    let run = lockstep(&frames, RxDrive::default());
    assert_eq!(run.input_stalls, 0);
    assert_eq!(run.input_beats, beats, "one offer per beat: no beat waited");
    // Input beats move on consecutive cycles.
    let first = run.input_first[0];
    assert_eq!(*run.input_last.last().unwrap(), first + beats - 1);
    // Every frame's record comes the promised number of cycles after its
    // last beat went in.
    let latency: Vec<u64> = run
        .outputs
        .iter()
        .zip(&run.input_last)
        .map(|(o, &last)| o.record_cycle - last)
        .collect();
    assert!(
        latency.iter().all(|&l| l == RECORD_LATENCY),
        "the parser promises {RECORD_LATENCY}: {latency:?}"
    );
}

/// A valid frame, or a copy broken in one of the ways of [`Malformation`].
fn any_frame() -> impl Strategy<Value = Vec<u8>> {
    (
        valid_frame(),
        prop::option::weighted(0.5, 0..Malformation::ALL.len()),
        any::<u64>(),
    )
        .prop_map(|(f, kind, seed)| match kind {
            None => f.encode().unwrap(),
            Some(k) => malform(
                &f,
                Malformation::ALL[k],
                &mut ChaCha8Rng::seed_from_u64(seed),
            ),
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    /// Random valid and malformed frames, random gaps and backpressure on
    /// both outputs: every frame agrees with the model.
    #[test]
    fn random_frames_agree_under_backpressure(
        frames in prop::collection::vec(any_frame(), 1..8),
        seed in any::<u64>(),
        p_valid in 0.2f64..=1.0,
        p_payload_ready in 0.1f64..=1.0,
        p_record_ready in 0.1f64..=1.0,
    ) {
        lockstep(&frames, RxDrive { p_valid, p_payload_ready, p_record_ready, seed });
    }
}
