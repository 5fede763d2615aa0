//! PacingGate in rust-hdl's simulator against the model's pacing
//! (`rocenic_model::pacing::pace`), bit for bit: every outcome (record,
//! grant) two cycles after its event, for seeded random sends, charges,
//! rate updates and resets on a few hot QPs (the same QP in consecutive cycles:
//! the forwarding path) and scattered ones, idle cycles carrying garbage,
//! rates from unthrottled through the slowest to above the line rate,
//! silences longer than the 65,535 cycles an event counts, the wrap of the
//! time base, and parameters at the ends of their widths. Then the
//! recorded cycles on the Verilog under Verilator, the lint and one Yosys
//! synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::congestion::dcqcn_reaction_point::DEFAULT_QPN_BITS;
use rocenic_hdl::congestion::pacing_gate::PacingGate;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::pacing::{pace, PacingEvent, PacingOutcome, PacingParams, PacingRecord};
use rust_hdl::prelude::*;
use std::collections::{HashMap, VecDeque};

type Rtl = PacingGate<DEFAULT_QPN_BITS>;

struct Bench {
    sim: CycleSim<Rtl>,
    params: PacingParams,
    rng: ChaCha8Rng,
    records: HashMap<u32, PacingRecord>,
    /// Outcomes due: (cycle presented, qpn, outcome).
    due: VecDeque<(u64, u32, PacingOutcome)>,
    now: u32,
    checked: u64,
    granted: u64,
    held: u64,
    /// Charges that left a QP's count negative.
    in_debt: u64,
    /// Sends on a QP whose count was negative before it earned: a held
    /// QP's earning decided the grant.
    repaid: u64,
}

impl Bench {
    fn new(seed: u64, params: PacingParams, now: u32) -> Bench {
        let mut sim = CycleSim::new(Rtl::default(), |b| &mut b.clock);
        sim.record();
        sim.uut.cfg.drive(&params);
        Bench {
            sim,
            params,
            rng: ChaCha8Rng::seed_from_u64(seed),
            records: HashMap::new(),
            due: VecDeque::new(),
            now,
            checked: 0,
            granted: 0,
            held: 0,
            in_debt: 0,
            repaid: 0,
        }
    }

    /// New parameters, once the events in flight are done.
    fn set_params(&mut self, params: PacingParams) {
        self.cycle(None);
        self.cycle(None);
        self.params = params;
        self.sim.uut.cfg.drive(&params);
    }

    /// One cycle; the outcome due in it compared.
    fn cycle(&mut self, event: Option<(u32, PacingEvent)>) {
        let c = self.sim.cycles();
        let garbage: u64 = self.rng.gen();
        let (reset, rate, charge, qpn, value) = match event {
            Some((q, PacingEvent::Reset)) => {
                (true, garbage & 1 == 1, garbage & 4 == 4, q, garbage as u32)
            }
            Some((q, PacingEvent::Rate(r))) => (false, true, garbage & 4 == 4, q, r),
            Some((q, PacingEvent::Charge(b))) => (false, false, true, q, u32::from(b)),
            Some((q, PacingEvent::Send(b))) => (false, false, false, q, u32::from(b)),
            None => (
                garbage & 1 == 1,
                garbage & 2 == 2,
                garbage & 4 == 4,
                (garbage >> 8) as u32 & 1023,
                (garbage >> 32) as u32,
            ),
        };
        let u = &mut self.sim.uut;
        u.reset.next = false;
        u.event_valid.next = event.is_some();
        u.event_reset.next = reset;
        u.event_rate.next = rate;
        u.event_charge.next = charge;
        u.event_qpn.next = bits(qpn.into());
        u.event_value.next = bits(value.into());
        u.now.next = bits(self.now.into());
        self.sim.settle();
        let u = &self.sim.uut;
        match self.due.front() {
            Some(&(at, q, want)) if at + 2 == c => {
                self.due.pop_front();
                assert!(u.out_valid.val(), "cycle {c}: no outcome for QP {q}");
                let got = PacingOutcome {
                    record: u.out_record.val().to_model(),
                    allowed: u.out_allowed.val(),
                };
                assert_eq!(u.out_qpn.val().to_u64() as u32, q, "cycle {c}");
                assert_eq!(got, want, "cycle {c}, QP {q}, {:?}", self.params);
                self.checked += 1;
            }
            _ => {
                assert!(
                    !u.out_valid.val(),
                    "cycle {c}: an outcome nothing asked for"
                );
                assert!(!u.out_allowed.val(), "cycle {c}: a grant without an event");
            }
        }
        if let Some((q, e)) = event {
            let record = self.records.get(&q).copied().unwrap_or_default();
            let outcome = pace(&self.params, &record, e, self.now);
            self.records.insert(q, outcome.record);
            self.due.push_back((c, q, outcome));
            if let PacingEvent::Charge(_) = e {
                self.in_debt += u64::from(outcome.record.token_count() < 0);
            }
            if let PacingEvent::Send(_) = e {
                self.granted += u64::from(outcome.allowed);
                self.held += u64::from(!outcome.allowed);
                self.repaid += u64::from(outcome.allowed && record.token_count() < 0);
            }
        }
        self.sim.tick();
    }

    /// A rate from every range the gate treats apart.
    fn rate(&mut self) -> u32 {
        let line = self.params.line_rate;
        match self.rng.gen_range(0..8) {
            0 => 0,
            1 => line,
            2 => self.rng.gen_range(line..=u32::MAX),
            3 => self.rng.gen_range(1..1000),
            4 => line.saturating_sub(1).max(1),
            _ => self.rng.gen_range(1..line.max(2)),
        }
    }

    /// `cycles` of random events on `hot` QPs (and a scattered one in
    /// eight), time advancing by 0 to `step` cycles a cycle, with now and
    /// then a silence longer than an event counts.
    fn traffic(&mut self, cycles: u64, hot: u32, step: u32) {
        for _ in 0..cycles {
            self.now = self.now.wrapping_add(self.rng.gen_range(0..=step));
            if self.rng.gen_bool(0.005) {
                self.now = self.now.wrapping_add(self.rng.gen_range(60_000..200_000));
            }
            if self.rng.gen_bool(0.15) {
                self.cycle(None);
                continue;
            }
            let qpn = if self.rng.gen_bool(0.125) {
                self.rng.gen_range(0..1024)
            } else {
                self.rng.gen_range(0..hot)
            };
            let event = match self.rng.gen_range(0..100) {
                0..=2 => PacingEvent::Reset,
                3..=14 => PacingEvent::Rate(self.rate()),
                15..=17 => PacingEvent::Send(self.rng.gen()),
                18..=29 => PacingEvent::Charge(self.rng.gen_range(1..=9018)),
                30..=31 => PacingEvent::Charge(self.rng.gen()),
                _ => PacingEvent::Send(self.rng.gen_range(1..=9018)),
            };
            self.cycle(Some((qpn, event)));
        }
        self.cycle(None);
        self.cycle(None);
        assert!(self.due.is_empty());
    }
}

#[test]
fn matches_the_model_bit_for_bit() {
    let line = PacingParams::line_100g();
    let mut b = Bench::new(1, line, u32::MAX - 3000);
    b.traffic(2500, 4, 40);
    assert!(b.now < 1 << 24, "the time base wrapped during the run");
    // A cap small enough to bind often.
    b.set_params(PacingParams {
        burst: 3_000_000_000,
        ..line
    });
    b.traffic(1200, 3, 400);
    // Every parameter at the end of its width: the largest price, the
    // largest earning, the largest cap.
    b.set_params(PacingParams {
        line_rate: u32::MAX,
        byte_cost: u32::MAX,
        burst: (1 << 47) - 1,
    });
    b.traffic(1200, 3, 70_000);
    b.set_params(PacingParams { burst: 0, ..line });
    b.traffic(600, 2, 100);
    assert!(b.checked > 4500, "{} outcomes", b.checked);
    assert!(
        b.granted > 1000 && b.held > 500 && b.repaid > 100 && b.in_debt > 150,
        "{} granted, {} held, {} granted after a deficit, {} charges into debt",
        b.granted,
        b.held,
        b.repaid,
        b.in_debt
    );
    let cycles = b.sim.replay_in_verilator("pacing_gate").unwrap();
    assert!(cycles > 5500, "replayed {cycles} cycles");
}

/// One QP at 10 Gb/s asked in every cycle for a 1000-byte frame: a grant
/// every 200 cycles exactly (1000 bytes x 8 / 40 bits a cycle), each
/// decided on the record its predecessor wrote in the cycle before.
#[test]
fn one_qp_every_cycle_is_granted_at_its_rate() {
    let mut b = Bench::new(2, PacingParams::line_100g(), 0);
    b.cycle(Some((9, PacingEvent::Rate(10_000_000))));
    for now in 0..=1000 {
        b.now = now;
        b.cycle(Some((9, PacingEvent::Send(1000))));
    }
    b.cycle(None);
    b.cycle(None);
    // Granted at cycles 0, 200, .. 1000.
    assert_eq!((b.checked, b.granted, b.held), (1002, 6, 995));
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("pacing_gate", &verilog_of::<Rtl>());
}

#[test]
fn synthesizes_with_the_records_in_block_ram() {
    let report = xilinx_synth("pacing_gate", &verilog_of::<Rtl>()).unwrap();
    report.assert_block_ram_and_lut_budget(2, 800);
}
