//! PfcPause in rust-hdl's simulator against the model's PFC receive side
//! (`rocenic_model::pfc_pause`), cycle by cycle: every output in every
//! cycle, for a seeded stream of PFC frames (pauses, XONs, storms that
//! never end, every priority and class-enable vector), frames that are
//! almost PFC (802.3x PAUSE, another EtherType, a unicast destination, a
//! runt), long frames whose later beats hold a PFC frame's bytes, and
//! idle cycles, across link rates, honoured masks and watchdog limits.
//! Then the recorded cycles on the Verilog under Verilator, the lint and
//! one Yosys synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::congestion::pfc_pause::PfcPause as Rtl;
use rocenic_hdl::primitives::wide::bits_from_bytes;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::pfc_pause::{PfcOutputs, PfcParams, PfcPause};
use rocenic_wire::pfc::PfcFrame;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

struct Bench {
    sim: CycleSim<Rtl>,
    model: PfcPause,
    params: PfcParams,
    rng: ChaCha8Rng,
    /// Beats still to send: (data bytes, last, the frame as PFC on its
    /// first beat).
    beats: VecDeque<(Vec<u8>, bool, Option<PfcFrame>)>,
    cycles: u64,
    pfc_frames: u64,
    near_misses: u64,
    paused_seen: u8,
    paused_cycles: u64,
    /// Pauses that ended (a `paused` bit falling).
    pause_ends: u32,
    last_paused: u8,
    trips: u32,
    pause_frames: u64,
}

impl Bench {
    fn new(seed: u64, params: PfcParams) -> Bench {
        let mut sim = CycleSim::new(Rtl::default(), |b| &mut b.clock);
        sim.record();
        sim.uut.cfg.drive(&params);
        sim.uut.reset.next = true;
        sim.tick();
        sim.uut.reset.next = false;
        Bench {
            sim,
            model: PfcPause::new(),
            params,
            rng: ChaCha8Rng::seed_from_u64(seed),
            beats: VecDeque::new(),
            cycles: 0,
            pfc_frames: 0,
            near_misses: 0,
            paused_seen: 0,
            paused_cycles: 0,
            pause_ends: 0,
            last_paused: 0,
            trips: 0,
            pause_frames: 0,
        }
    }

    fn set_params(&mut self, params: PfcParams) {
        self.params = params;
        self.sim.uut.cfg.drive(&params);
    }

    fn queue(&mut self, bytes: Vec<u8>) {
        let mut pfc = PfcFrame::decode(&bytes).ok();
        let n = bytes.len().div_ceil(64);
        for (i, c) in bytes.chunks(64).enumerate() {
            self.beats.push_back((c.to_vec(), i + 1 == n, pfc.take()));
        }
    }

    fn random_pfc(&mut self, storm: bool) -> PfcFrame {
        let r = &mut self.rng;
        let mut quanta = [0u16; 8];
        for q in &mut quanta {
            *q = match r.gen_range(0..40) {
                0..=7 => 0,
                8 => 0xFFFF,
                _ => r.gen_range(1..120),
            };
            if storm {
                *q = 0xFFFF;
            }
        }
        PfcFrame {
            src_mac: r.gen(),
            enable: if storm { 1 << 6 } else { r.gen() },
            quanta,
        }
    }

    /// A frame: PFC, almost PFC, or a long one with PFC bytes inside.
    fn queue_random(&mut self, storm: bool) {
        let pfc = self.random_pfc(storm);
        let mut bytes = pfc.encode();
        match self.rng.gen_range(0..10) {
            0 => bytes[15] = 0x00, // 802.3x PAUSE's opcode 0x0001 reads 0x0100
            1 => bytes[12] = 0x08,
            2 => bytes[0] = 0x03,
            3 => bytes.truncate(self.rng.gen_range(34..60)),
            4 => {
                // A RoCE-sized frame whose second and later beats carry
                // PFC frames' bytes.
                let mut long = vec![0u8; 64];
                long[12..14].copy_from_slice(&[0x08, 0x00]);
                for _ in 0..self.rng.gen_range(1..4) {
                    long.extend_from_slice(&bytes);
                    long.resize(long.len().div_ceil(64) * 64, 0);
                }
                bytes = long;
                bytes.truncate(bytes.len() - self.rng.gen_range(0..8));
            }
            5 => bytes.extend(std::iter::repeat_n(0x5A, self.rng.gen_range(1..80))),
            _ => {}
        }
        if PfcFrame::decode(&bytes).is_ok() {
            self.pfc_frames += 1;
        } else {
            self.near_misses += 1;
        }
        self.queue(bytes);
    }

    /// One cycle, with the next queued beat if `send`.
    fn cycle(&mut self, send: bool) {
        let beat = if send { self.beats.pop_front() } else { None };
        let mut data = [0u8; 64];
        let mut keep = 0u64;
        match &beat {
            Some((bytes, _, _)) => {
                data[..bytes.len()].copy_from_slice(bytes);
                keep = u64::MAX >> (64 - bytes.len());
            }
            None => self.rng.fill(&mut data[..]),
        }
        let u = &mut self.sim.uut;
        u.rx_valid.next = beat.is_some();
        u.rx_data.next = bits_from_bytes(&data);
        u.rx_keep.next = bits(keep);
        u.rx_last.next = beat.as_ref().is_some_and(|b| b.1);
        self.sim.settle();
        let u = &self.sim.uut;
        let got = PfcOutputs {
            paused: u.paused.val().to_u64() as u8,
            tripped: u.tripped.val().to_u64() as u8,
            pause_frame: u.pause_frame.val(),
            trips: u.trips.val().to_u64() as u8,
        };
        let want = self.model.outputs();
        assert_eq!(got, want, "cycle {}, {:?}", self.cycles, self.params);
        self.paused_seen |= want.paused;
        self.paused_cycles += u64::from(want.paused != 0);
        self.pause_ends += (self.last_paused & !want.paused).count_ones();
        self.last_paused = want.paused;
        self.trips += want.trips.count_ones();
        self.pause_frames += u64::from(want.pause_frame);
        let frame = beat.and_then(|b| b.2);
        self.model.clock(&self.params, frame.as_ref());
        self.sim.tick();
        self.cycles += 1;
    }

    /// `cycles` cycles of frames (`storm`: PFC frames that pause priority
    /// 6 forever among them), a beat in most cycles.
    fn traffic(&mut self, cycles: u64, storm: bool) {
        for _ in 0..cycles {
            if self.beats.is_empty() && self.rng.gen_bool(0.3) {
                let storming = storm && self.rng.gen_bool(0.3);
                self.queue_random(storming);
            }
            let send = self.rng.gen_bool(0.8);
            self.cycle(send);
        }
    }
}

#[test]
fn matches_the_model_cycle_by_cycle() {
    let mut b = Bench::new(
        3,
        PfcParams {
            honoured: 0xFF,
            bits_per_cycle: 400,
            watchdog_quanta: 300,
        },
    );
    b.traffic(4000, false);
    b.traffic(3000, true);
    // One quantum per cycle, half the priorities, a long watchdog.
    b.set_params(PfcParams {
        honoured: 0b1010_0101,
        bits_per_cycle: 512,
        watchdog_quanta: 2000,
    });
    b.traffic(3000, true);
    // A slow link, no watchdog: a storm is honoured throughout.
    b.set_params(PfcParams {
        honoured: 0b0100_0000,
        bits_per_cycle: 37,
        watchdog_quanta: 0,
    });
    b.traffic(2000, true);
    b.set_params(PfcParams {
        honoured: 0xFF,
        bits_per_cycle: 1,
        watchdog_quanta: 1,
    });
    b.traffic(1000, false);
    assert!(
        b.pfc_frames > 300 && b.near_misses > 250,
        "{} PFC, {} near misses",
        b.pfc_frames,
        b.near_misses
    );
    assert_eq!(
        b.paused_seen, 0xFF,
        "priorities paused: {:08b}",
        b.paused_seen
    );
    assert!(b.paused_cycles > 5000, "{} cycles paused", b.paused_cycles);
    assert!(b.pause_ends > 500, "{} pauses ended", b.pause_ends);
    assert!(b.trips > 10, "{} watchdog trips", b.trips);
    assert!(
        b.pause_frames > 200,
        "{} pause frames counted",
        b.pause_frames
    );
    eprintln!(
        "pfc_pause: {} PFC frames, {} near misses, {} cycles paused, {} pauses ended, {} trips, {} pause frames",
        b.pfc_frames, b.near_misses, b.paused_cycles, b.pause_ends, b.trips, b.pause_frames
    );
    let cycles = b.sim.replay_in_verilator("pfc_pause").unwrap();
    assert!(cycles > 13_000, "replayed {cycles} cycles");
}

/// A storm on priority 6 trips the watchdog once and is then ignored while
/// priority 2 still pauses and resumes; the storm's end clears the trip.
#[test]
fn a_storm_trips_the_watchdog_and_other_priorities_keep_pausing() {
    let mut b = Bench::new(
        4,
        PfcParams {
            honoured: 0xFF,
            bits_per_cycle: 512,
            watchdog_quanta: 500,
        },
    );
    let pfc = |enable: u8, q: u16| PfcFrame {
        src_mac: [2, 0, 0, 0, 0, 7],
        enable,
        quanta: [q; 8],
    };
    let mut priority_2_paused = 0;
    for c in 0..3000u32 {
        if c % 200 == 0 {
            b.queue(pfc(1 << 6, 0xFFFF).encode());
        } else if c % 700 == 350 {
            b.queue(pfc(1 << 2, 40).encode());
        }
        b.cycle(true);
        // What the next cycle shows (and checks against the RTL).
        let next = b.model.outputs();
        let paused = next.paused;
        if c > 520 {
            assert_eq!(paused & 1 << 6, 0, "cycle {c}: the storm still honoured");
            assert_eq!(next.tripped, 1 << 6, "cycle {c}");
        }
        priority_2_paused += u32::from(paused & 1 << 2 != 0);
    }
    assert_eq!(b.trips, 1);
    assert!(
        (150..=170).contains(&priority_2_paused),
        "{priority_2_paused} cycles"
    );
    b.queue(pfc(1 << 6, 0).encode());
    for _ in 0..3 {
        b.cycle(true);
    }
    assert_eq!(b.model.outputs().tripped, 0);
    b.cycle(false);
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("pfc_pause", &verilog_of::<Rtl>());
}

#[test]
fn synthesizes_in_a_few_hundred_luts() {
    let report = xilinx_synth("pfc_pause", &verilog_of::<Rtl>()).unwrap();
    assert_eq!(report.block_rams(), 0);
    assert!(report.luts() < 1500, "{} LUTs", report.luts());
}
