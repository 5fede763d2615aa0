//! TxIcrcAppend against the codec: frames up to their pad go in, frames
//! with the codec's ICRC come out, for IPv4 and IPv6, each of the 16 lanes
//! a frame can end at (2, 6, .., 62; at 62 the ICRC straddles into an extra
//! beat), under random stalls on both sides; without stalls the output
//! moves a beat every cycle; the Verilog does the same.

use crate::tx_common;

use rand::Rng;
use rocenic_hdl::frame::tx::tx_icrc_append::{end_lanes, TxIcrcAppend};
use rocenic_hdl_testbench::{yosys_synth, CycleSim};
use rocenic_wire::{op, IpHeader, RoceFrame};
use rust_hdl::prelude::*;
use tx_common::*;

/// The input beats of `f`: its bytes up to the pad, 64 a beat, and the
/// sideband (ipv6, udp_checksum, end bytes mod 64).
fn input_beats(f: &RoceFrame) -> Vec<(Beat, (bool, bool, u64))> {
    let mut bytes = encode_without_udp_checksum(f);
    bytes.truncate(bytes.len() - 4);
    let v6 = matches!(f.ip, IpHeader::V6(_));
    stream_beats(&bytes, 0)
        .into_iter()
        .map(|b| {
            let end = if b.last { (bytes.len() % 64) as u64 } else { 0 };
            (b, (v6, v6 || f.udp_checksum, end))
        })
        .collect()
}

struct Outcome {
    beats: Vec<Beat>,
    side: Vec<(bool, bool)>,
    at: Vec<usize>,
}

fn run_append(
    frames: &[RoceFrame],
    p_valid: f64,
    p_ready: f64,
    seed: u64,
) -> (Outcome, CycleSim<TxIcrcAppend>) {
    let input: Vec<_> = frames.iter().flat_map(input_beats).collect();
    let expect: usize = frames
        .iter()
        .map(|f| f.encode().unwrap().len().div_ceil(64))
        .sum();
    let mut r = rng(seed);
    let mut sim = CycleSim::new(TxIcrcAppend::default(), |b| &mut b.clock);
    sim.record();
    sim.uut.reset.next = true;
    sim.tick();
    sim.uut.reset.next = false;
    let mut next = 0;
    let mut out = Outcome {
        beats: vec![],
        side: vec![],
        at: vec![],
    };
    let mut held: Option<Beat> = None;
    let mut cycle = 0;
    while out.beats.len() < expect {
        cycle += 1;
        assert!(cycle < 40 * expect + 100, "stuck");
        let offer = next < input.len() && r.gen_bool(p_valid);
        sim.uut.up.tvalid.next = offer;
        if let Some((b, (v6, ck, end))) = input.get(next) {
            drive_beat(&mut sim.uut.up, b);
            sim.uut.up_ipv6.next = *v6;
            sim.uut.up_udp_checksum.next = *ck;
            sim.uut.up_end_bytes.next = bits(*end);
        }
        let ready = r.gen_bool(p_ready);
        sim.uut.down.tready.next = ready;
        sim.settle();
        let u = &sim.uut;
        if offer && u.up.tready.val() {
            next += 1;
        }
        if let Some(beat) = take_beat(&u.down, ready, &mut held) {
            out.beats.push(beat);
            out.side
                .push((u.down_ipv6.val(), u.down_udp_checksum.val()));
            out.at.push(cycle);
        }
        sim.tick();
    }
    sim.uut.down.tready.next = true;
    sim.uut.up.tvalid.next = false;
    for _ in 0..10 {
        sim.settle();
        assert!(!sim.uut.down.tvalid.val(), "more beats than expected");
        sim.tick();
    }
    (out, sim)
}

fn check(frames: &[RoceFrame], out: &Outcome) {
    let got = frames_of(&out.beats);
    assert_eq!(got.len(), frames.len());
    let mut beat = 0;
    for (i, (g, f)) in got.iter().zip(frames).enumerate() {
        assert_eq!(
            g,
            &encode_without_udp_checksum(f),
            "frame {i}: len {}",
            f.payload.len()
        );
        let v6 = matches!(f.ip, IpHeader::V6(_));
        for k in 0..g.len().div_ceil(64) {
            assert_eq!(out.side[beat + k], (v6, v6 || f.udp_checksum), "frame {i}");
        }
        beat += g.len().div_ceil(64);
    }
}

/// SEND_ONLY frames whose bytes up to the pad end in each of the 16 lanes
/// a frame can end at (62 among them, where the ICRC straddles into an
/// extra beat), on IPv4 and IPv6, with odd payload lengths too.
fn end_lane_sweep(seed: u64) -> Vec<RoceFrame> {
    let mut r = rng(seed);
    let mut frames = Vec::new();
    let ipv4_lens = (0..64).step_by(4).chain([1, 3, 65, 200]);
    let ipv6_lens = [0usize, 1, 3, 50, 52, 64, 65, 116, 200].into_iter();
    for (v6, lens) in [
        (false, ipv4_lens.collect::<Vec<_>>()),
        (true, ipv6_lens.collect()),
    ] {
        for len in lens {
            let mut f = random_frame(&mut r, op::SEND_ONLY, v6, len);
            f.udp_checksum = r.gen();
            frames.push(f);
        }
    }
    let mut ends: Vec<usize> = frames
        .iter()
        .map(|f| (f.encode().unwrap().len() - 4) % 64)
        .collect();
    ends.sort_unstable();
    ends.dedup();
    assert_eq!(ends, end_lanes(), "the sweep covers every end lane");
    frames
}

#[test]
fn icrc_follows_every_end_lane_under_random_stalls() {
    let frames = end_lane_sweep(20);
    let (out, _) = run_append(&frames, 0.7, 0.6, 21);
    check(&frames, &out);
}

#[test]
fn every_opcode_on_ipv4_and_ipv6() {
    let mut r = rng(22);
    let frames = opcode_sweep(&mut r, &[0, 1, 3, 4, 60, 64, 65, 200], &[false, true]);
    let (out, _) = run_append(&frames, 0.8, 0.8, 23);
    check(&frames, &out);
}

#[test]
fn back_to_back_moves_a_beat_every_cycle_and_verilog_agrees() {
    let frames = end_lane_sweep(24);
    let (out, sim) = run_append(&frames, 1.0, 1.0, 25);
    check(&frames, &out);
    let first = out.at[0];
    for (i, at) in out.at.iter().enumerate() {
        assert_eq!(*at, first + i, "bubble before output beat {i}");
    }
    // Offered in cycle 1: six delay stages and the output register.
    assert_eq!(first, 8);
    let cycles = sim.replay_in_verilator("tx_icrc_append").unwrap();
    assert!(cycles > out.beats.len());
    let v = generate_verilog(&sim.uut);
    let report = yosys_synth("tx_icrc_append", &v, "synth -top top").unwrap();
    assert!(
        report.cells.iter().any(|(c, _)| c.contains("DFF")),
        "{}",
        report.log
    );
}
