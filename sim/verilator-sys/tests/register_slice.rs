//! The Verilated 512-bit AXI-Stream register slice (rocenic-hdl's first RTL
//! block) through the bridge: beats pass bit-exact, in order, exactly once
//! under random valid/ready patterns, stalled beats hold still, full rate
//! without backpressure, and reset empties the slice.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use verilator_sys::{AxisRegisterSlice as Slice, Sim};

#[derive(Clone, Debug, PartialEq, Eq)]
struct Beat {
    data: [u64; 8],
    keep: u64,
    last: bool,
}

/// Packets of 1 to 8 beats, full keep except on the last beat, which keeps
/// 1 to 64 low bytes.
fn random_beats(rng: &mut ChaCha8Rng, count: usize) -> Vec<Beat> {
    let mut left_in_packet = 0;
    (0..count)
        .map(|_| {
            if left_in_packet == 0 {
                left_in_packet = rng.gen_range(1..=8);
            }
            left_in_packet -= 1;
            let last = left_in_packet == 0;
            let kept = if last { rng.gen_range(1..=64) } else { 64 };
            Beat {
                data: rng.gen(),
                keep: if kept == 64 {
                    u64::MAX
                } else {
                    (1 << kept) - 1
                },
                last,
            }
        })
        .collect()
}

fn drive_up(sim: &mut Sim<Slice>, beat: Option<&Beat>) {
    match beat {
        Some(b) => {
            sim.set(Slice::UP_TDATA, &b.data);
            sim.set_u64(Slice::UP_TKEEP, b.keep);
            sim.set_bit(Slice::UP_TLAST, b.last);
            sim.set_bit(Slice::UP_TVALID, true);
        }
        None => {
            // Idle data is garbage on purpose: it must never come out.
            sim.set(Slice::UP_TDATA, &[0xdead_beef; 8]);
            sim.set_bit(Slice::UP_TVALID, false);
        }
    }
}

fn down_beat(sim: &Sim<Slice>) -> Beat {
    let mut data = [0; 8];
    sim.get_into(Slice::DOWN_TDATA, &mut data);
    Beat {
        data,
        keep: sim.get_u64(Slice::DOWN_TKEEP),
        last: sim.get_bit(Slice::DOWN_TLAST),
    }
}

struct Outcome {
    received: Vec<Beat>,
    cycles: u64,
}

/// Sends `beats` through a fresh slice: the source offers its next beat with
/// probability `p_valid` when idle (and then holds it until it moves, as
/// AXI requires), the sink is ready with probability `p_ready`. Checks the
/// AXI stability rule on the output while it runs.
fn run(seed: u64, beats: &[Beat], p_valid: f64, p_ready: f64) -> Outcome {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sim = Sim::<Slice>::new().unwrap();
    let mut next = 0;
    let mut offering = false;
    let mut received = Vec::new();
    let mut stalled: Option<Beat> = None;
    let limit = 100 + beats.len() as u64 * 200;
    while received.len() < beats.len() {
        assert!(sim.cycle() < limit, "stuck after {} beats", received.len());
        if !offering && next < beats.len() && rng.gen_bool(p_valid) {
            offering = true;
        }
        drive_up(&mut sim, offering.then(|| &beats[next]));
        let ready = rng.gen_bool(p_ready);
        sim.set_bit(Slice::DOWN_TREADY, ready);
        sim.eval();

        let up_moves = offering && sim.get_bit(Slice::UP_TREADY);
        let down_valid = sim.get_bit(Slice::DOWN_TVALID);
        if let Some(held) = stalled.take() {
            assert!(
                down_valid,
                "valid dropped while stalled at cycle {}",
                sim.cycle()
            );
            assert_eq!(down_beat(&sim), held, "stalled beat changed");
        }
        if down_valid {
            if ready {
                received.push(down_beat(&sim));
            } else {
                stalled = Some(down_beat(&sim));
            }
        }
        sim.tick();
        if up_moves {
            offering = false;
            next += 1;
        }
    }
    // Nothing more may come out once everything was delivered.
    drive_up(&mut sim, None);
    sim.set_bit(Slice::DOWN_TREADY, true);
    for _ in 0..4 {
        sim.eval();
        assert!(
            !sim.get_bit(Slice::DOWN_TVALID),
            "extra beat after the last"
        );
        sim.tick();
    }
    Outcome {
        received,
        cycles: sim.cycle() - 4,
    }
}

#[test]
fn random_backpressure_loses_duplicates_and_reorders_nothing() {
    let patterns = [(0.5, 0.5), (0.9, 0.3), (0.3, 0.9), (1.0, 0.1), (0.95, 0.95)];
    for (i, &(p_valid, p_ready)) in patterns.iter().enumerate() {
        let seed = 0x51ce_0000 + i as u64;
        let beats = random_beats(&mut ChaCha8Rng::seed_from_u64(seed), 3000);
        let out = run(seed, &beats, p_valid, p_ready);
        assert_eq!(out.received.len(), beats.len());
        for (n, (got, want)) in out.received.iter().zip(&beats).enumerate() {
            assert_eq!(
                got, want,
                "beat {n} with p_valid {p_valid} p_ready {p_ready}"
            );
        }
    }
}

#[test]
fn full_rate_without_backpressure() {
    let beats = random_beats(&mut ChaCha8Rng::seed_from_u64(1), 5000);
    let out = run(1, &beats, 1.0, 1.0);
    assert_eq!(out.received, beats);
    // One cycle of latency, then one beat per cycle.
    assert_eq!(out.cycles, beats.len() as u64 + 1);
}

#[test]
fn reset_empties_a_full_slice() {
    let beats = random_beats(&mut ChaCha8Rng::seed_from_u64(2), 4);
    let mut sim = Sim::<Slice>::new().unwrap();
    sim.set_bit(Slice::DOWN_TREADY, false);
    // Two beats fill `main` and `skid`; then upstream sees a stall.
    for beat in &beats[..2] {
        drive_up(&mut sim, Some(beat));
        sim.eval();
        assert!(sim.get_bit(Slice::UP_TREADY));
        sim.tick();
    }
    drive_up(&mut sim, Some(&beats[2]));
    sim.eval();
    assert!(!sim.get_bit(Slice::UP_TREADY));
    assert!(sim.get_bit(Slice::DOWN_TVALID));
    assert_eq!(down_beat(&sim), beats[0]);

    drive_up(&mut sim, None);
    sim.set_bit(Slice::RESET, true);
    sim.tick();
    sim.set_bit(Slice::RESET, false);
    sim.eval();
    assert!(!sim.get_bit(Slice::DOWN_TVALID));
    assert!(sim.get_bit(Slice::UP_TREADY));

    // After reset the slice carries new beats normally.
    sim.set_bit(Slice::DOWN_TREADY, true);
    drive_up(&mut sim, Some(&beats[3]));
    sim.tick();
    drive_up(&mut sim, None);
    sim.eval();
    assert!(sim.get_bit(Slice::DOWN_TVALID));
    assert_eq!(down_beat(&sim), beats[3]);
    sim.tick();
    sim.eval();
    assert!(!sim.get_bit(Slice::DOWN_TVALID));
}
