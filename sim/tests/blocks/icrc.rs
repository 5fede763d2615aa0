//! ICRC lockstep: the Verilated ICRC checker against the model's ICRC on
//! the known vectors, on every single-bit corruption of them, on masked
//! rewrites, and on proptest-generated frames of every opcode, both IP
//! versions and payloads up to 4096 bytes, with random valid gaps and
//! stalls; plus its full-rate timing.

use crate::rtl_common;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_rtl::icrc::{
    covered_mask, icrc_span, masked_bytes, model_icrc_ok, run_icrc_checker, IcrcDrive,
};
use rocenic_rtl::stream::BEAT_BYTES;
use rtl_common::{icrc_vectors, valid_frame};

/// Every copy of `frame` with one covered bit flipped that the checker can
/// still be driven with (a flipped IP length may point past the frame).
fn bit_flips(frame: &[u8]) -> Vec<Vec<u8>> {
    let span = icrc_span(frame).expect("a valid frame");
    let mut out = Vec::new();
    for at in 0..frame.len() {
        let mask = covered_mask(&span, at);
        for bit in 0..8 {
            if mask >> bit & 1 == 1 {
                let mut bad = frame.to_vec();
                bad[at] ^= 1 << bit;
                if icrc_span(&bad).is_some() {
                    out.push(bad);
                }
            }
        }
    }
    out
}

/// `frame` with every masked bit set to random values.
fn masked_rewrite(frame: &[u8], rng: &mut ChaCha8Rng) -> Vec<u8> {
    let span = icrc_span(frame).expect("a valid frame");
    let mut out = frame.to_vec();
    for (at, bits) in masked_bytes(&span) {
        out[at] = (out[at] & !bits) | (rng.gen::<u8>() & bits);
    }
    out
}

/// Runs `frames` under each drive and checks every verdict against the
/// model; returns the verdicts.
fn lockstep(frames: &[Vec<u8>], drives: &[IcrcDrive]) -> Vec<bool> {
    let model: Vec<bool> = frames
        .iter()
        .map(|f| model_icrc_ok(f).expect("span"))
        .collect();
    for drive in drives {
        let run = run_icrc_checker(frames, *drive).unwrap_or_else(|e| panic!("{drive:?}: {e}"));
        for (i, (rtl, m)) in run.verdicts.iter().zip(&model).enumerate() {
            assert_eq!(rtl, m, "frame {i} under {drive:?}: {:02x?}", frames[i]);
        }
        assert_eq!(run.verdicts.len(), frames.len());
    }
    model
}

const GAPS: IcrcDrive = IcrcDrive {
    p_valid: 0.6,
    p_advance: 0.7,
    seed: 77,
};

#[test]
fn vectors_pass_every_covered_bit_flip_fails_masked_rewrites_pass() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for (name, frame) in icrc_vectors() {
        let flips = bit_flips(&frame);
        let span = icrc_span(&frame).unwrap();
        // Only flips of the IP length that point past the frame are left
        // out: at most 16 bits.
        let covered_bits: usize = (0..frame.len())
            .map(|at| covered_mask(&span, at).count_ones() as usize)
            .sum();
        assert!(
            flips.len() + 16 >= covered_bits,
            "{name}: {} of {covered_bits}",
            flips.len()
        );
        let rewrites: Vec<Vec<u8>> = (0..16).map(|_| masked_rewrite(&frame, &mut rng)).collect();
        let mut all = vec![frame.clone()];
        all.extend(flips.iter().cloned());
        all.extend(rewrites.iter().cloned());
        let verdicts = lockstep(&all, &[IcrcDrive::default(), GAPS]);
        assert!(verdicts[0], "{name} passes");
        assert!(
            verdicts[1..=flips.len()].iter().all(|ok| !ok),
            "{name}: every flip fails"
        );
        assert!(
            verdicts[flips.len() + 1..].iter().all(|&ok| ok),
            "{name}: masked rewrites pass"
        );
    }
}

#[test]
fn ethernet_padding_after_the_icrc_is_not_checked() {
    let mut frames = Vec::new();
    for (_, f) in icrc_vectors() {
        let mut padded = f.clone();
        padded.extend([0x5A; 30]);
        frames.push(padded);
        frames.push(f);
    }
    let verdicts = lockstep(&frames, &[IcrcDrive::default(), GAPS]);
    assert!(verdicts.iter().all(|&ok| ok));
}

#[test]
fn one_beat_per_cycle_back_to_back_with_a_fixed_latency() {
    // One-beat, two-beat and boundary-sized frames back to back.
    let frames: Vec<Vec<u8>> = [58usize, 62, 64, 65, 66, 100, 127, 128, 129, 1500, 4150]
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            rocenic_rtl::gen::frame_of_len(len, i as u64)
                .encode()
                .unwrap()
        })
        .collect();
    let beats: u64 = frames
        .iter()
        .map(|f| f.len().div_ceil(BEAT_BYTES) as u64)
        .sum();
    let run = run_icrc_checker(&frames, IcrcDrive::default()).unwrap();
    assert!(run.verdicts.iter().all(|&ok| ok));
    let latency = run.latency[0];
    assert!(
        run.latency.iter().all(|&l| l == latency),
        "{:?}",
        run.latency
    );
    // The first beat moves in the first cycle; the last verdict comes
    // `latency` cycles after the last beat: no bubble anywhere.
    assert_eq!(run.cycles, beats + latency);
    assert_eq!(run.stalled_cycles, 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Valid frames pass, a copy with a random covered bit flipped fails,
    /// a masked rewrite passes, as the model says, under random gaps and
    /// stalls.
    #[test]
    fn random_frames_agree_with_the_model(
        frames in prop::collection::vec(valid_frame(), 1..5),
        pick in any::<u64>(),
        seed in any::<u64>(),
        p_valid in 0.3f64..=1.0,
        p_advance in 0.3f64..=1.0,
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(pick);
        let mut all = Vec::new();
        let mut expect = Vec::new();
        for f in &frames {
            let bytes = f.encode().unwrap();
            let flips = bit_flips(&bytes);
            all.push(bytes.clone());
            expect.push(true);
            all.push(flips[rng.gen_range(0..flips.len())].clone());
            expect.push(false);
            all.push(masked_rewrite(&bytes, &mut rng));
            expect.push(true);
        }
        let drives = [IcrcDrive { p_valid, p_advance, seed }, IcrcDrive::default()];
        let verdicts = lockstep(&all, &drives);
        prop_assert_eq!(verdicts, expect);
    }
}
