//! The ICRC blocks in rust-hdl's simulator: the checker accepts the shared
//! vectors and frames of every opcode and size, rejects corrupted copies,
//! ignores rewritten masked fields, keeps pace with back-to-back frames and
//! stalls; the generator reproduces the codec's ICRC. Every run is replayed
//! on the generated Verilog under Verilator.

use crate::common;

use common::frames;
use rocenic_hdl::frame::crc::icrc_checker::IcrcChecker;
use rocenic_hdl::frame::crc::icrc_generator::IcrcGenerator;
use rocenic_hdl::primitives::wide::bits_from_bytes;
use rocenic_hdl_testbench::CycleSim;
use rust_hdl::prelude::*;

/// One beat of a frame as the ICRC blocks see it.
#[derive(Clone, Debug)]
struct Beat {
    data: Vec<u8>,
    first: bool,
    ipv6: bool,
    end: bool,
    end_bytes: usize,
}

/// Beats of `bytes` covering its first `covered` bytes (the ICRC blocks
/// are told where the covered bytes end; later bytes are not presented).
fn beats(bytes: &[u8], covered: usize) -> Vec<Beat> {
    let ipv6 = bytes[12] == 0x86;
    let chunks: Vec<&[u8]> = bytes[..covered].chunks(64).collect();
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, c)| Beat {
            data: c.to_vec(),
            first: i == 0,
            ipv6,
            end: i + 1 == n,
            end_bytes: c.len() % 64,
        })
        .collect()
}

macro_rules! present {
    ($uut:expr, $beat:expr) => {
        match $beat {
            Some(b) => {
                $uut.beat_valid.next = true;
                $uut.beat_first.next = b.first;
                $uut.beat_ipv6.next = b.ipv6;
                $uut.beat_end.next = b.end;
                $uut.beat_end_bytes.next = bits::<6>(b.end_bytes as u64);
                // Bytes past the end are junk on a real bus: fill them.
                let mut data = b.data.clone();
                data.resize(64, 0xA5);
                $uut.beat_data.next = bits_from_bytes(&data);
            }
            None => {
                $uut.beat_valid.next = false;
                $uut.beat_end.next = false;
            }
        }
    };
}

/// Runs frames through the checker, one beat per cycle (or with the
/// stall pattern: `advance` low on cycles where `stall(cycle)`), and
/// returns the verdicts in order.
fn check(frames: &[Vec<u8>], stall: impl Fn(u64) -> bool, replay: &str) -> Vec<bool> {
    let mut sim = CycleSim::new(IcrcChecker::default(), |b| &mut b.clock);
    sim.record();
    sim.uut.reset.next = false;
    let all: Vec<Beat> = frames.iter().flat_map(|f| beats(f, f.len())).collect();
    let mut next = 0;
    let mut verdicts = Vec::new();
    let mut idle = 0;
    while idle < 8 {
        let advance = !stall(sim.cycles());
        sim.uut.advance.next = advance;
        present!(sim.uut, all.get(next));
        sim.settle();
        if advance && sim.uut.result_valid.val() {
            verdicts.push(sim.uut.result_ok.val());
        }
        sim.tick();
        if advance {
            if next < all.len() {
                next += 1;
            } else {
                idle += 1;
            }
        }
    }
    let cycles = sim.replay_in_verilator(replay).expect("Verilog matches");
    assert_eq!(cycles as u64, sim.cycles());
    verdicts
}

#[test]
fn vectors_pass_and_corrupted_copies_fail() {
    let good: Vec<Vec<u8>> = frames::vectors().into_iter().map(|(_, b)| b).collect();
    let mut mixed = Vec::new();
    let mut expect = Vec::new();
    for f in &good {
        mixed.push(f.clone());
        expect.push(true);
        // A covered payload/header bit, the ICRC itself, the IP source
        // address: each breaks the ICRC.
        for at in [f.len() - 10, f.len() - 1, 14 + 12] {
            let mut bad = f.clone();
            bad[at] ^= 0x04;
            mixed.push(bad);
            expect.push(false);
        }
        // The TTL and BTH byte 4 (FECN/BECN) are masked: still good.
        let mut rewritten = f.clone();
        rewritten[14 + 8] = rewritten[14 + 8].wrapping_sub(3);
        rewritten[14 + 20 + 8 + 4] ^= 0xC0;
        mixed.push(rewritten);
        expect.push(true);
    }
    assert_eq!(check(&mixed, |_| false, "icrc_vectors"), expect);
}

#[test]
fn every_opcode_and_size_back_to_back() {
    let all = frames::icrc_frames();
    let verdicts = check(&all, |_| false, "icrc_all");
    assert_eq!(verdicts.len(), all.len());
    assert!(verdicts.iter().all(|&ok| ok));
}

#[test]
fn stalls_change_nothing() {
    let mut list: Vec<Vec<u8>> = frames::vectors().into_iter().map(|(_, b)| b).collect();
    list.push(frames::frame_bytes(0x0A, true, 150, 9));
    list.push(frames::frame_bytes(0x0A, false, 61, 10));
    let mut bad = list[3].clone();
    bad[100] ^= 1;
    list.push(bad);
    let verdicts = check(&list, |c| c % 3 == 1 || c % 7 == 0, "icrc_stalls");
    assert_eq!(verdicts, vec![true, true, true, true, true, false]);
}

#[test]
fn generator_reproduces_the_codec_icrc() {
    let mut list: Vec<Vec<u8>> = frames::vectors().into_iter().map(|(_, b)| b).collect();
    for (i, len) in [0usize, 1, 5, 58, 59, 60, 64, 123, 200]
        .into_iter()
        .enumerate()
    {
        list.push(frames::frame_bytes(0x04, i % 2 == 1, len, 40 + i as u64));
    }
    let mut sim = CycleSim::new(IcrcGenerator::default(), |b| &mut b.clock);
    sim.record();
    sim.uut.reset.next = false;
    sim.uut.advance.next = true;
    let all: Vec<Beat> = list.iter().flat_map(|f| beats(f, f.len() - 4)).collect();
    let mut got = Vec::new();
    for cycle in 0..all.len() + 10 {
        present!(sim.uut, all.get(cycle));
        sim.settle();
        if sim.uut.icrc_valid.val() {
            got.push(sim.uut.icrc.val().to_u64() as u32);
        }
        sim.tick();
    }
    let expect: Vec<u32> = list
        .iter()
        .map(|f| u32::from_le_bytes(f[f.len() - 4..].try_into().unwrap()))
        .collect();
    assert_eq!(got, expect);
    let cycles = sim
        .replay_in_verilator("icrc_generator")
        .expect("Verilog matches");
    assert_eq!(cycles, all.len() + 10);
}
