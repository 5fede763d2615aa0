//! TxUdpChecksum against the codec: frames with a zero UDP checksum go in,
//! `RoceFrame::encode`'s frames come out: IPv6 frames and IPv4 frames that
//! ask for it get the checksum (a computed zero sent as 0xFFFF), other IPv4
//! frames pass unchanged; random stalls neither lose, repeat nor reorder
//! beats; frames of one kind leave back to back; the Verilog agrees.

use crate::tx_common;

use rand::Rng;
use rocenic_hdl::frame::tx::tx_udp_checksum::{TxUdpChecksum, FULL_RATE_RELEASE_DELAY};
use rocenic_hdl::primitives::sync_fifo::SyncFifo;
use rocenic_hdl_testbench::{yosys_synth, CycleSim};
use rocenic_wire::{op, IpHeader, RoceFrame};
use rust_hdl::prelude::*;
use tx_common::*;

fn input_beats(f: &RoceFrame) -> Vec<(Beat, bool, bool)> {
    let bytes = encode_without_udp_checksum(f);
    let v6 = matches!(f.ip, IpHeader::V6(_));
    stream_beats(&bytes, 0)
        .into_iter()
        .map(|b| (b, v6, v6 || f.udp_checksum))
        .collect()
}

fn run(
    uut: TxUdpChecksum,
    frames: &[RoceFrame],
    p_valid: f64,
    p_ready: f64,
    seed: u64,
) -> (Vec<Beat>, Vec<usize>, CycleSim<TxUdpChecksum>) {
    let input: Vec<_> = frames.iter().flat_map(input_beats).collect();
    let mut r = rng(seed);
    let mut sim = CycleSim::new(uut, |b| &mut b.clock);
    sim.record();
    sim.uut.reset.next = true;
    sim.tick();
    sim.uut.reset.next = false;
    let (mut next, mut cycle) = (0, 0);
    let mut out = Vec::new();
    let mut at = Vec::new();
    let mut held: Option<Beat> = None;
    while out.len() < input.len() {
        cycle += 1;
        assert!(cycle < 40 * input.len() + 200, "stuck");
        let offer = next < input.len() && r.gen_bool(p_valid);
        sim.uut.up.tvalid.next = offer;
        if let Some((b, v6, ck)) = input.get(next) {
            drive_beat(&mut sim.uut.up, b);
            sim.uut.up_ipv6.next = *v6;
            sim.uut.up_udp_checksum.next = *ck;
        }
        let ready = r.gen_bool(p_ready);
        sim.uut.down.tready.next = ready;
        sim.settle();
        let u = &sim.uut;
        if offer && u.up.tready.val() {
            next += 1;
        }
        if let Some(beat) = take_beat(&u.down, ready, &mut held) {
            out.push(beat);
            at.push(cycle);
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
    (out, at, sim)
}

fn check(frames: &[RoceFrame], beats: &[Beat]) {
    let got = frames_of(beats);
    assert_eq!(got.len(), frames.len());
    for (i, (g, f)) in got.iter().zip(frames).enumerate() {
        assert_eq!(
            g,
            &f.encode().unwrap(),
            "frame {i}: opcode {:#x} len {}",
            f.bth.opcode,
            f.payload.len()
        );
    }
}

/// An IPv6 frame whose computed UDP checksum is zero, so it goes out as
/// 0xFFFF (found by trying payloads).
fn frame_with_zero_checksum() -> RoceFrame {
    let mut r = rng(30);
    let mut f = random_frame(&mut r, op::SEND_ONLY, true, 6);
    loop {
        f.payload = (0..6).map(|_| r.gen()).collect();
        let wire = f.encode().unwrap();
        let at = udp_checksum_at(&f);
        if wire[at..at + 2] == [0xFF, 0xFF] {
            return f;
        }
    }
}

fn mixed_frames(seed: u64) -> Vec<RoceFrame> {
    let mut r = rng(seed);
    let mut frames = opcode_sweep(&mut r, &[0, 1, 3, 4, 60, 64, 65, 200], &[false, true]);
    for f in frames.iter_mut() {
        f.udp_checksum = r.gen();
    }
    frames.push(frame_with_zero_checksum());
    frames
}

#[test]
fn every_opcode_on_both_ip_versions_under_random_stalls() {
    let frames = mixed_frames(31);
    let (beats, _, _) = run(TxUdpChecksum::default(), &frames, 0.8, 0.7, 32);
    check(&frames, &beats);
    let (beats, _, _) = run(
        TxUdpChecksum::new(FULL_RATE_RELEASE_DELAY),
        &frames,
        0.9,
        0.8,
        33,
    );
    check(&frames, &beats);
}

fn assert_back_to_back(at: &[usize], what: &str) {
    for (i, t) in at.iter().enumerate() {
        assert_eq!(*t, at[0] + i, "{what}: bubble before beat {i}");
    }
}

#[test]
fn cut_through_frames_leave_back_to_back_after_three_cycles() {
    let mut r = rng(34);
    let frames: Vec<RoceFrame> = [0usize, 200, 4, 4096, 65, 0]
        .iter()
        .map(|&len| random_frame(&mut r, op::SEND_ONLY, false, len))
        .collect();
    let (beats, at, _) = run(TxUdpChecksum::default(), &frames, 1.0, 1.0, 35);
    check(&frames, &beats);
    // Taken at the end of cycle 1: readable pointer, RAM read, output
    // register.
    assert_eq!(at[0], 4, "latency 3");
    assert_back_to_back(&at, "cut-through");
}

#[test]
fn checksummed_frame_waits_for_its_last_byte_without_a_release_delay() {
    let mut r = rng(36);
    let frames = vec![random_frame(&mut r, op::SEND_ONLY, true, 1000)];
    let (beats, at, _) = run(TxUdpChecksum::default(), &frames, 1.0, 1.0, 37);
    check(&frames, &beats);
    let n = beats.len();
    // The last beat is taken at the end of cycle n; sum stages 1 to 5, the
    // checksum FIFO's readable pointer and the output register follow.
    assert_eq!(at[0], n + 7);
    assert_back_to_back(&at, "one frame");
}

#[test]
fn full_rate_release_delay_keeps_mixed_traffic_back_to_back() {
    let mut r = rng(38);
    // Short frames before the longest ones, checksummed or not, in turns.
    let frames: Vec<RoceFrame> = [
        (false, false, 0usize),
        (true, true, 4096),
        (false, false, 4),
        (false, true, 4096),
        (true, true, 0),
        (false, false, 4096),
        (true, true, 1),
        (false, true, 65),
    ]
    .iter()
    .map(|&(v6, checksum, len)| {
        let mut f = random_frame(&mut r, op::SEND_ONLY, v6, len);
        f.udp_checksum = checksum;
        f
    })
    .collect();
    let (beats, at, _) = run(
        TxUdpChecksum::new(FULL_RATE_RELEASE_DELAY),
        &frames,
        1.0,
        1.0,
        39,
    );
    check(&frames, &beats);
    assert_eq!(
        at[0],
        FULL_RATE_RELEASE_DELAY + 3,
        "latency: delay + RAM read + output"
    );
    assert_back_to_back(&at, "release delay");
    // One cycle less and the longest checksummed frame is not ready in time.
    let (beats, at, _) = run(
        TxUdpChecksum::new(FULL_RATE_RELEASE_DELAY - 1),
        &frames,
        1.0,
        1.0,
        39,
    );
    check(&frames, &beats);
    assert!(
        at.windows(2).any(|w| w[1] != w[0] + 1),
        "the delay is the smallest that works"
    );
}

#[test]
fn verilog_agrees_and_synthesizes() {
    let mut r = rng(40);
    let mut frames: Vec<RoceFrame> = [
        (op::SEND_ONLY, true, 70),
        (op::ACKNOWLEDGE, false, 0),
        (op::WRITE_ONLY, false, 3),
    ]
    .iter()
    .map(|&(c, v6, len)| random_frame(&mut r, c, v6, len))
    .collect();
    frames[2].udp_checksum = true;
    for (name, uut) in [
        ("tx_udp_checksum", TxUdpChecksum::default()),
        ("tx_udp_checksum_delayed", TxUdpChecksum::new(5)),
    ] {
        let (beats, _, sim) = run(uut, &frames, 0.8, 0.7, 41);
        check(&frames, &beats);
        let cycles = sim.replay_in_verilator(name).unwrap();
        assert!(cycles > beats.len());
        if name == "tx_udp_checksum" {
            let v = generate_verilog(&sim.uut);
            let report = yosys_synth(name, &v, "synth -top top").unwrap();
            assert!(
                report.cells.iter().any(|(c, _)| c.contains("DFF")),
                "{}",
                report.log
            );
        }
    }
}

#[test]
fn fifo_synthesizes_with_its_memory_as_a_ram() {
    let mut fifo = SyncFifo::<Bits<64>, 7, 8>::default();
    fifo.connect_all();
    let v = generate_verilog(&fifo);
    // Yosys's generic `synth` maps memories to flip-flops (it knows no RAM
    // primitives), so stop at memory inference: one 128 x 64 memory.
    let report = yosys_synth("sync_fifo", &v, "proc; opt; memory -nomap").unwrap();
    // (`stat` lists the memory in its module and again in the totals.)
    assert!(report.count("$mem_v2") >= 1, "{}", report.log);
}

#[test]
fn a_slow_sink_fills_the_store_and_backpressure_loses_nothing() {
    let mut r = rng(42);
    let frames: Vec<RoceFrame> = (0..5)
        .map(|i| {
            let mut f = random_frame(&mut r, op::WRITE_ONLY, i % 2 == 0, 4096 - i);
            f.udp_checksum = true;
            f
        })
        .collect();
    // 330 beats offered every cycle, taken one cycle in four: the 128-beat
    // store fills and holds the input back many times over.
    let (beats, at, _) = run(TxUdpChecksum::default(), &frames, 1.0, 0.25, 43);
    check(&frames, &beats);
    let span = at.last().unwrap() - at.first().unwrap();
    assert!(
        span > 3 * beats.len(),
        "the sink set the pace ({span} cycles)"
    );
}
