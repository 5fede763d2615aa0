//! DcqcnRateControl in rust-hdl's simulator: the reaction point fed by the
//! NIC's events and by its own timer scan. Every outcome, the scan's ticks
//! included, equals the model's integer reaction point on the event it
//! reports (kind and QP from the outcome, time and bytes from the cycle
//! the event went in); every QP whose timers run is ticked within a bound
//! set by the number of such QPs; once traffic stops, every QP decays to
//! idle and the scan falls silent. Then the recorded cycles on the
//! Verilog under Verilator, the lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::congestion::dcqcn_rate_control::DcqcnRateControlDefault as Rtl;
use rocenic_hdl::congestion::dcqcn_reaction_point::{KIND_CNP, KIND_RESET, KIND_SENT, KIND_TICK};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::dcqcn_integer::{react, Increase, RpEvent, RpOutcome, RpParams, RpRecord};
use rust_hdl::prelude::*;
use std::collections::HashMap;

/// One cycle's inputs, kept to rebuild the event an outcome reports.
#[derive(Clone, Copy)]
struct Presented {
    now: u32,
    bytes: u16,
    /// The NIC's event: (kind, qpn).
    event: Option<(u64, u32)>,
}

struct Bench {
    sim: CycleSim<Rtl>,
    params: RpParams,
    rng: ChaCha8Rng,
    records: HashMap<u32, RpRecord>,
    presented: Vec<Presented>,
    /// QPs whose timers run, with the cycle of their last tick or cut.
    scanned: HashMap<u32, u64>,
    outcomes: u64,
    ticks: u64,
    /// The longest wait of a scanned QP for a tick, and the most QPs
    /// scanned at once.
    max_gap: u64,
    max_scanned: usize,
    increases: [u64; 4],
}

impl Bench {
    fn new(seed: u64, params: RpParams) -> Bench {
        let mut sim = CycleSim::new(Rtl::default(), |b| &mut b.clock);
        sim.record();
        let p = params;
        let u = &mut sim.uut;
        u.cfg.drive(&p);
        u.reset.next = true;
        sim.tick();
        sim.uut.reset.next = false;
        Bench {
            sim,
            params,
            rng: ChaCha8Rng::seed_from_u64(seed),
            records: HashMap::new(),
            presented: vec![Presented {
                now: 0,
                bytes: 0,
                event: None,
            }],
            scanned: HashMap::new(),
            outcomes: 0,
            ticks: 0,
            max_gap: 0,
            max_scanned: 0,
            increases: [0; 4],
        }
    }

    fn cycle(&mut self, event: Option<(u64, u32)>) {
        let c = self.sim.cycles();
        let here = Presented {
            now: c as u32,
            bytes: self.rng.gen(),
            event,
        };
        let u = &mut self.sim.uut;
        u.event_valid.next = event.is_some();
        u.event_kind.next = bits(event.map_or(KIND_SENT, |e| e.0));
        u.event_qpn.next = bits(event.map_or(5, |e| u64::from(e.1)));
        u.event_bytes.next = bits(here.bytes.into());
        u.now.next = bits(here.now.into());
        self.sim.settle();
        let u = &self.sim.uut;
        assert!(u.event_ready.val());
        if u.out_valid.val() {
            self.check_outcome(c);
        }
        self.presented.push(here);
        for (&q, &since) in &self.scanned {
            let gap = c - since;
            self.max_gap = self.max_gap.max(gap);
            assert!(gap <= 64, "cycle {c}: QP {q} not ticked for {gap} cycles");
        }
        self.max_scanned = self.max_scanned.max(self.scanned.len());
        self.sim.tick();
    }

    fn check_outcome(&mut self, c: u64) {
        let u = &self.sim.uut;
        let source = self.presented[c as usize - 2];
        let kind = u.out_kind.val().to_u64();
        let qpn = u.out_qpn.val().to_u64() as u32;
        match source.event {
            Some(e) => assert_eq!((kind, qpn), e, "cycle {c}: the NIC's event comes first"),
            None => assert_eq!(kind, KIND_TICK, "cycle {c}: only the scan fills a gap"),
        }
        let event = match kind {
            KIND_RESET => RpEvent::Reset,
            KIND_CNP => RpEvent::Cnp { now: source.now },
            KIND_SENT => RpEvent::Sent {
                bytes: source.bytes,
            },
            _ => RpEvent::Tick { now: source.now },
        };
        let record = self.records.get(&qpn).copied().unwrap_or_default();
        let want = react(&self.params, &record, event);
        let got = RpOutcome {
            record: u.out_record.val().to_model(),
            rate: u.out_rate.val().to_u64() as u32,
            scan: u.out_scan.val(),
            cut: u.out_cut.val(),
            held: u.out_held.val(),
            increase: Increase::from_code(u.out_increase.val().to_u64()),
        };
        assert_eq!(got, want, "cycle {c}: QP {qpn}, {event:?}");
        self.records.insert(qpn, want.record);
        self.outcomes += 1;
        self.increases[want.increase as usize] += 1;
        if kind == KIND_TICK {
            self.ticks += 1;
        }
        if want.scan {
            if kind == KIND_TICK || !self.scanned.contains_key(&qpn) {
                self.scanned.insert(qpn, c);
            }
        } else {
            self.scanned.remove(&qpn);
        }
    }
}

#[test]
fn the_scan_ticks_every_recovering_qp_and_goes_quiet() {
    let params = RpParams {
        alpha_period: 50,
        rate_period: 70,
        byte_reset: 20_000,
        threshold: 2,
        g: 6000,
        // Large steps: every QP is back at line rate within the run.
        ai_rate: 10_000_000,
        hai_rate: 20_000_000,
        ..RpParams::paper()
    };
    let mut b = Bench::new(3, params);
    // NIC events in one cycle in three on 16 QPs.
    for _ in 0..2500 {
        let event = b.rng.gen_bool(0.33).then(|| {
            let kind = match b.rng.gen_range(0..10) {
                0 => KIND_RESET,
                1..=3 => KIND_CNP,
                _ => KIND_SENT,
            };
            (kind, b.rng.gen_range(0..16))
        });
        b.cycle(event);
    }
    assert!(b.max_scanned >= 10, "{} QPs scanned at once", b.max_scanned);
    assert!(b.increases[1..].iter().all(|&n| n > 5), "{:?}", b.increases);
    // No more NIC events: every QP recovers, alpha decays to 0, and the
    // scan stops.
    let mut quiet_since = None;
    for k in 0..9000u64 {
        b.cycle(None);
        if b.sim.uut.out_valid.val() {
            quiet_since = None;
        } else if quiet_since.is_none() {
            quiet_since = Some(k);
        }
    }
    assert!(b.scanned.is_empty(), "still scanned: {:?}", b.scanned);
    assert!(
        quiet_since.is_some_and(|k| k < 8000),
        "the scan falls silent: {quiet_since:?}"
    );
    assert!(b.records.values().all(|r| !r.rate_active && r.alpha == 0));
    assert!(b.ticks > 1000, "{} ticks", b.ticks);
    eprintln!(
        "dcqcn_rate_control: {} outcomes, {} ticks, at most {} QPs scanned, longest wait {} cycles",
        b.outcomes, b.ticks, b.max_scanned, b.max_gap
    );
    let cycles = b.sim.replay_in_verilator("dcqcn_rate_control").unwrap();
    assert!(cycles > 6000, "replayed {cycles} cycles");
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("dcqcn_rate_control", &verilog_of::<Rtl>());
}

#[test]
fn synthesizes_with_the_records_in_block_ram() {
    let report = xilinx_synth("dcqcn_rate_control", &verilog_of::<Rtl>()).unwrap();
    // The records (13 RAMB18) and the scan's FIFO in block RAM; the
    // scan's 1024 queued bits are ReadySet's, in 16 LUT RAM sites.
    assert!(
        report.block_rams() >= 14,
        "{} block RAMs",
        report.block_rams()
    );
    assert!(
        report.lut_rams() <= 16,
        "{} LUT RAM sites",
        report.lut_rams()
    );
    assert!(report.luts() < 3000, "{} LUTs", report.luts());
}
