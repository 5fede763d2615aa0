//! DcqcnReactionPoint in rust-hdl's simulator against the integer
//! reaction point of the model (`rocenic_model::dcqcn_integer::react`),
//! bit for bit: every outcome (record, rate, scan, cut, held, increase)
//! two cycles after its event, for seeded random events on a few hot QPs
//! (the same QP in consecutive cycles: the forwarding path) and scattered
//! ones, with idle cycles carrying garbage, across parameter sets that
//! reach every phase, the floors, the monitor period, saturation and the
//! wrap of the time base. Then the recorded cycles on the Verilog under
//! Verilator, the lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::congestion::dcqcn_reaction_point::{
    DcqcnReactionPoint, DEFAULT_QPN_BITS, KIND_CNP, KIND_RESET, KIND_SENT, KIND_TICK,
};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::dcqcn_integer::{react, Increase, RpEvent, RpOutcome, RpParams, RpRecord};
use rust_hdl::prelude::*;
use std::collections::{HashMap, VecDeque};

type Rtl = DcqcnReactionPoint<DEFAULT_QPN_BITS>;

struct Bench {
    sim: CycleSim<Rtl>,
    params: RpParams,
    rng: ChaCha8Rng,
    records: HashMap<u32, RpRecord>,
    /// Outcomes due: (cycle presented, qpn, outcome).
    due: VecDeque<(u64, u32, RpOutcome)>,
    now: u32,
    checked: u64,
    increases: [u64; 4],
    cuts: u64,
    held: u64,
}

impl Bench {
    fn new(seed: u64, params: RpParams, now: u32) -> Bench {
        let mut sim = CycleSim::new(Rtl::default(), |b| &mut b.clock);
        sim.record();
        let mut b = Bench {
            sim,
            params,
            rng: ChaCha8Rng::seed_from_u64(seed),
            records: HashMap::new(),
            due: VecDeque::new(),
            now,
            checked: 0,
            increases: [0; 4],
            cuts: 0,
            held: 0,
        };
        b.set_params();
        b
    }

    fn set_params(&mut self) {
        let p = self.params;
        let u = &mut self.sim.uut;
        u.cfg.drive(&p);
    }

    /// One cycle: `event` presented (None: idle with garbage fields), the
    /// outcome due this cycle checked.
    fn cycle(&mut self, event: Option<(u32, RpEvent)>) {
        let c = self.sim.cycles();
        let garbage = self.rng.gen::<u64>();
        let (kind, qpn, bytes) = match event {
            Some((q, RpEvent::Reset)) => (KIND_RESET, q, garbage & 0xFFFF),
            Some((q, RpEvent::Cnp { .. })) => (KIND_CNP, q, garbage & 0xFFFF),
            Some((q, RpEvent::Sent { bytes })) => (KIND_SENT, q, u64::from(bytes)),
            Some((q, RpEvent::Tick { .. })) => (KIND_TICK, q, garbage & 0xFFFF),
            None => (
                garbage & 3,
                (garbage >> 8) as u32 & 1023,
                garbage >> 20 & 0xFFFF,
            ),
        };
        let u = &mut self.sim.uut;
        u.reset.next = false;
        u.event_valid.next = event.is_some();
        u.event_kind.next = bits(kind);
        u.event_qpn.next = bits(qpn.into());
        u.event_bytes.next = bits(bytes);
        u.now.next = bits(self.now.into());
        self.sim.settle();
        let u = &self.sim.uut;
        match self.due.front() {
            Some(&(at, q, want)) if at + 2 == c => {
                self.due.pop_front();
                assert!(u.out_valid.val(), "cycle {c}: no outcome for QP {q}");
                let got = RpOutcome {
                    record: u.out_record.val().to_model(),
                    rate: u.out_rate.val().to_u64() as u32,
                    scan: u.out_scan.val(),
                    cut: u.out_cut.val(),
                    held: u.out_held.val(),
                    increase: Increase::from_code(u.out_increase.val().to_u64()),
                };
                assert_eq!(u.out_qpn.val().to_u64() as u32, q, "cycle {c}");
                assert_eq!(got, want, "cycle {c}, QP {q}");
                self.checked += 1;
                self.increases[want.increase as usize] += 1;
                self.cuts += u64::from(want.cut);
                self.held += u64::from(want.held);
            }
            _ => assert!(
                !u.out_valid.val(),
                "cycle {c}: an outcome nothing asked for"
            ),
        }
        if let Some((q, e)) = event {
            let record = self.records.get(&q).copied().unwrap_or_default();
            let outcome = react(&self.params, &record, e);
            self.records.insert(q, outcome.record);
            self.due.push_back((c, q, outcome));
        }
        self.sim.tick();
    }

    /// `cycles` of random traffic on `hot` QPs (and a scattered one in
    /// eight), time advancing by 0 to `step` units a cycle.
    fn traffic(&mut self, cycles: u64, hot: u32, step: u32, big_sends: bool) {
        for _ in 0..cycles {
            self.now = self.now.wrapping_add(self.rng.gen_range(0..=step));
            if self.rng.gen_bool(0.15) {
                self.cycle(None);
                continue;
            }
            let qpn = if self.rng.gen_bool(0.125) {
                self.rng.gen_range(0..1024)
            } else {
                self.rng.gen_range(0..hot)
            };
            let now = self.now;
            let event = match self.rng.gen_range(0..100) {
                0..=2 => RpEvent::Reset,
                3..=14 => RpEvent::Cnp { now },
                15..=54 => RpEvent::Sent {
                    bytes: if big_sends && self.rng.gen_bool(0.3) {
                        self.rng.gen()
                    } else {
                        self.rng.gen_range(0..4096)
                    },
                },
                _ => RpEvent::Tick { now },
            };
            self.cycle(Some((qpn, event)));
        }
        self.cycle(None);
        self.cycle(None);
        assert!(self.due.is_empty());
    }
}

/// Small periods so that every timer fires within a few hundred cycles.
fn fast(p: RpParams) -> RpParams {
    RpParams {
        alpha_period: 40,
        rate_period: 90,
        byte_reset: 6000,
        threshold: 2,
        g: 4096,
        ..p
    }
}

#[test]
fn matches_the_integer_model_bit_for_bit() {
    let mut b = Bench::new(1, fast(RpParams::paper()), u32::MAX - 3000);
    b.traffic(1500, 4, 8, false);
    assert!(b.now < 1 << 20, "the time base wrapped during the run");
    // Floors, a larger Gd, a monitor period and a hyper step that
    // saturates the target.
    b.params = RpParams {
        min_dec_fac: 0x9000,
        gd: 2,
        monitor_period: 150,
        hai_rate: 3_000_000_000,
        initial_alpha: 20_000,
        ..b.params
    };
    b.set_params();
    b.traffic(1500, 3, 10, true);
    // g above 1, alpha above 1 before the first CNP, floors above the
    // line rate: the clamps.
    b.params = RpParams {
        g: 40_000,
        initial_alpha: 65_535,
        min_rate: 200_000_000,
        line_rate: 150_000_000,
        ..b.params
    };
    b.set_params();
    b.traffic(300, 3, 10, true);
    b.params = RpParams {
        enabled: false,
        ..fast(RpParams::paper())
    };
    b.set_params();
    b.traffic(200, 3, 10, false);
    assert!(b.checked > 2800, "{} outcomes", b.checked);
    assert!(
        b.increases.iter().all(|&n| n > 10),
        "every phase reached: {:?}",
        b.increases
    );
    assert!(
        b.cuts > 100 && b.held > 10,
        "{} cuts, {} held",
        b.cuts,
        b.held
    );
    let cycles = b.sim.replay_in_verilator("dcqcn_reaction_point").unwrap();
    assert!(cycles > 3000, "replayed {cycles} cycles");
}

#[test]
fn one_qp_every_cycle_reads_its_own_last_write() {
    let mut b = Bench::new(2, fast(RpParams::paper()), 0);
    for k in 0..400u32 {
        b.now += 3;
        let now = b.now;
        let event = match k % 5 {
            0 => RpEvent::Cnp { now },
            1 | 3 => RpEvent::Sent { bytes: 2500 },
            _ => RpEvent::Tick { now },
        };
        b.cycle(Some((7, event)));
    }
    b.cycle(None);
    b.cycle(None);
    assert_eq!(b.checked, 400);
    assert!(b.records[&7].started);
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("dcqcn_reaction_point", &verilog_of::<Rtl>());
}

#[test]
fn synthesizes_with_the_records_in_block_ram() {
    let report = xilinx_synth("dcqcn_reaction_point", &verilog_of::<Rtl>()).unwrap();
    report.assert_block_ram_and_lut_budget(6, 3000);
}
