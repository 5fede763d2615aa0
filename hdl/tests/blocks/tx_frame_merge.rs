//! TxFrameMerge against the codec: header bytes, payload shifted behind
//! them and zero pad are `RoceFrame::encode`'s bytes up to the ICRC (UDP
//! checksum aside) for every opcode on IPv4 and IPv6 and the payload sizes
//! 0, 1, 3, 4, 60, 64, 65, 200; random stalls on every input and output
//! neither lose, repeat nor reorder anything; without stalls the output
//! moves one beat every cycle across frames; refused jobs swallow their
//! payload; a payload whose tlast disagrees with the job is counted.

use crate::tx_common;

use rand::Rng;
use rocenic_hdl::frame::tx::tx_frame_merge::TxFrameMerge;
use rocenic_hdl::frame::tx::tx_header_prep::TxJob;
use rocenic_hdl::primitives::byte_rotator::ByteRotator;
use rocenic_hdl::primitives::wide::{bits_from_bytes, bits_to_bytes};
use rocenic_hdl_testbench::{yosys_synth, CycleSim};
use rocenic_wire::{op, RoceFrame};
use rust_hdl::prelude::*;
use tx_common::*;

struct Outcome {
    beats: Vec<Beat>,
    /// (ipv6, udp_checksum, end_bytes) seen with each beat.
    side: Vec<(bool, bool, u64)>,
    /// Cycle of each output beat.
    at: Vec<usize>,
    dropped: u64,
    last_errors: u64,
}

/// Feeds `jobs` and `payload` (beats of all frames in order) with
/// probabilities `p_job`, `p_payload` of offering each cycle, and a sink
/// ready with probability `p_ready`. Stalled outputs must hold still.
fn run_merge(
    jobs: &[TxJob],
    payload: &[Beat],
    expect_beats: usize,
    (p_job, p_payload, p_ready): (f64, f64, f64),
    seed: u64,
    record: bool,
) -> (Outcome, CycleSim<TxFrameMerge>) {
    let mut r = rng(seed);
    let mut sim = CycleSim::new(TxFrameMerge::default(), |b| &mut b.clock);
    if record {
        sim.record();
    }
    sim.uut.reset.next = true;
    sim.tick();
    sim.uut.reset.next = false;
    let (mut next_job, mut next_beat) = (0, 0);
    let mut out = Outcome {
        beats: vec![],
        side: vec![],
        at: vec![],
        dropped: 0,
        last_errors: 0,
    };
    let mut held: Option<Beat> = None;
    let mut cycle = 0;
    while out.beats.len() < expect_beats || next_beat < payload.len() || next_job < jobs.len() {
        cycle += 1;
        assert!(
            cycle < 50 * (expect_beats + payload.len() + jobs.len()) + 100,
            "stuck"
        );
        let offer_job = next_job < jobs.len() && r.gen_bool(p_job);
        sim.uut.job_valid.next = offer_job;
        sim.uut.job.next = jobs[next_job.min(jobs.len() - 1)];
        let offer_beat = next_beat < payload.len() && r.gen_bool(p_payload);
        sim.uut.payload.tvalid.next = offer_beat;
        if let Some(b) = payload.get(next_beat) {
            drive_beat(&mut sim.uut.payload, b);
        }
        let ready = r.gen_bool(p_ready);
        sim.uut.frame.tready.next = ready;
        sim.settle();
        let u = &sim.uut;
        if offer_job && u.job_ready.val() {
            next_job += 1;
        }
        if offer_beat && u.payload.tready.val() {
            next_beat += 1;
        }
        if let Some(beat) = take_beat(&u.frame, ready, &mut held) {
            out.beats.push(beat);
            out.side.push((
                u.frame_ipv6.val(),
                u.frame_udp_checksum.val(),
                u.frame_end_bytes.val().to_u64(),
            ));
            out.at.push(cycle);
        } else if !u.frame.tvalid.val() {
            assert!(held.is_none(), "valid dropped before the beat moved");
        }
        sim.tick();
    }
    sim.uut.frame.tready.next = true;
    for _ in 0..4 {
        sim.settle();
        assert!(!sim.uut.frame.tvalid.val(), "more beats than expected");
        sim.tick();
    }
    out.dropped = sim.uut.dropped_frames.val().to_u64();
    out.last_errors = sim.uut.payload_last_errors.val().to_u64();
    (out, sim)
}

fn expected(frames: &[RoceFrame]) -> (Vec<TxJob>, Vec<Beat>, Vec<Vec<u8>>) {
    let jobs = frames.iter().map(|f| job_of(f, false)).collect();
    let payload = frames.iter().flat_map(|f| payload_beats(f, 0xA5)).collect();
    let bytes = frames
        .iter()
        .map(|f| {
            let mut w = encode_without_udp_checksum(f);
            w.truncate(w.len() - 4);
            w
        })
        .collect();
    (jobs, payload, bytes)
}

fn check(frames: &[RoceFrame], out: &Outcome, want: &[Vec<u8>]) {
    let got = frames_of(&out.beats);
    assert_eq!(got.len(), want.len());
    let mut beat = 0;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g,
            w,
            "frame {i}: opcode {:#x} len {}",
            frames[i].bth.opcode,
            frames[i].payload.len()
        );
        let n = w.len().div_ceil(64);
        for k in 0..n {
            let v6 = matches!(frames[i].ip, rocenic_wire::IpHeader::V6(_));
            let end = if k + 1 == n { (w.len() % 64) as u64 } else { 0 };
            assert_eq!(out.side[beat + k], (v6, v6 || frames[i].udp_checksum, end));
        }
        beat += n;
    }
}

#[test]
fn every_opcode_and_size_under_random_stalls() {
    let mut r = rng(10);
    let frames = opcode_sweep(&mut r, &[0, 1, 3, 4, 60, 64, 65, 200], &[false, true]);
    let (jobs, payload, want) = expected(&frames);
    let n = want.iter().map(|w| w.len().div_ceil(64)).sum();
    let (out, _) = run_merge(&jobs, &payload, n, (0.7, 0.7, 0.6), 11, false);
    check(&frames, &out, &want);
    assert_eq!((out.dropped, out.last_errors), (0, 0));
}

#[test]
fn back_to_back_without_stalls_moves_a_beat_every_cycle() {
    let mut r = rng(12);
    // One-beat frames (ACK, empty SEND), two-header-beat IPv6 frames and
    // long payloads, mixed.
    let frames: Vec<RoceFrame> = [
        (op::ACKNOWLEDGE, false, 0),
        (op::SEND_ONLY, false, 0),
        (op::SEND_ONLY, false, 4),
        (op::WRITE_ONLY, true, 200),
        (op::ACKNOWLEDGE, true, 0),
        (op::SEND_MIDDLE, false, 256),
        (op::CNP, false, 0),
        (op::READ_RESPONSE_ONLY, true, 65),
    ]
    .iter()
    .map(|&(c, v6, len)| random_frame(&mut r, c, v6, len))
    .collect();
    let (jobs, payload, want) = expected(&frames);
    let n = want.iter().map(|w| w.len().div_ceil(64)).sum();
    let (out, _) = run_merge(&jobs, &payload, n, (1.0, 1.0, 1.0), 13, false);
    check(&frames, &out, &want);
    let first = out.at[0];
    for (i, at) in out.at.iter().enumerate() {
        assert_eq!(*at, first + i, "bubble before output beat {i}");
    }
    // Offered in cycle 1, the job is registered at its end and the first
    // beat at the end of cycle 2: latency 2 (job register, output register).
    assert_eq!(first, 3);
}

#[test]
fn refused_jobs_swallow_their_payload_and_tlast_mismatches_count() {
    let mut r = rng(14);
    let frames: Vec<RoceFrame> = [
        (op::SEND_ONLY, false, 130),
        (op::SEND_ONLY, true, 10),
        (op::WRITE_ONLY, false, 70),
    ]
    .iter()
    .map(|&(c, v6, len)| random_frame(&mut r, c, v6, len))
    .collect();
    let (mut jobs, mut payload, want) = expected(&frames);
    // The first frame is refused: its three payload beats vanish.
    jobs[0].drop = true;
    // The third frame's first payload beat claims to be its last.
    let third = payload.len() - 2;
    payload[third].last = true;
    let keep: Vec<Vec<u8>> = want[1..].to_vec();
    let n = keep.iter().map(|w| w.len().div_ceil(64)).sum();
    let (out, _) = run_merge(&jobs, &payload, n, (0.8, 0.8, 0.7), 15, false);
    check(&frames[1..], &out, &keep);
    assert_eq!(out.dropped, 1);
    assert_eq!(out.last_errors, 1);
}

#[test]
fn merge_verilog_matches_simulation_and_synthesizes() {
    let mut r = rng(16);
    let frames: Vec<RoceFrame> = [
        (op::SEND_ONLY, false, 70),
        (op::WRITE_ONLY_IMM, true, 3),
        (op::ACKNOWLEDGE, false, 0),
    ]
    .iter()
    .map(|&(c, v6, len)| random_frame(&mut r, c, v6, len))
    .collect();
    let (jobs, payload, want) = expected(&frames);
    let n = want.iter().map(|w| w.len().div_ceil(64)).sum();
    let (out, sim) = run_merge(&jobs, &payload, n, (0.8, 0.8, 0.7), 17, true);
    check(&frames, &out, &want);
    assert!(sim.replay_in_verilator("tx_frame_merge").unwrap() > 10);
    let v = generate_verilog(&sim.uut);
    let report = yosys_synth("tx_frame_merge", &v, "synth -top top").unwrap();
    assert!(
        report.cells.iter().any(|(c, _)| c.contains("DFF")),
        "{}",
        report.log
    );
}

/// The merger's rotator lists all 64 rotations, so its Verilog is the
/// six-stage barrel; a clocked harness lets the replay check every amount.
#[derive(LogicBlock)]
struct RotatorHarness {
    clock: Signal<In, Clock>,
    operand: Signal<In, Bits<512>>,
    amount: Signal<In, Bits<6>>,
    rotated: Signal<Out, Bits<512>>,
    rotator: ByteRotator<512>,
}

impl Logic for RotatorHarness {
    #[hdl_gen]
    fn update(&mut self) {
        self.rotator.operand.next = self.operand.val();
        self.rotator.amount.next = self.amount.val();
        self.rotated.next = self.rotator.rotated.val();
    }
}

#[test]
fn full_rotator_verilog_rotates_by_every_amount() {
    let harness = RotatorHarness {
        clock: Default::default(),
        operand: Default::default(),
        amount: Default::default(),
        rotated: Default::default(),
        rotator: ByteRotator::new(&(0..64).collect::<Vec<_>>()),
    };
    let mut sim = CycleSim::new(harness, |b| &mut b.clock);
    sim.record();
    let bytes: Vec<u8> = (0..64).map(|i| i * 3 + 1).collect();
    for amount in 0..64 {
        sim.uut.operand.next = bits_from_bytes(&bytes);
        sim.uut.amount.next = bits(amount as u64);
        sim.settle();
        let mut want = bytes.clone();
        want.rotate_left(amount);
        assert_eq!(
            bits_to_bytes(sim.uut.rotated.val()),
            want,
            "amount {amount}"
        );
        sim.tick();
    }
    let v = generate_verilog(&sim.uut);
    assert!(v.contains("rotate_stage_4"), "the barrel, not the case");
    let cycles = sim.replay_in_verilator("full_rotator").unwrap();
    assert_eq!(cycles, 64);
}
