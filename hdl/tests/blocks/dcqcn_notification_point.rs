//! DcqcnNotificationPoint in rust-hdl's simulator against the integer
//! notification point of the model
//! (`rocenic_model::dcqcn_integer::notify`), bit for bit: every outcome
//! (record, CNP) two cycles after its event, for seeded random CE-marked
//! packets and resets on a few hot QPs (the same QP in consecutive cycles:
//! the forwarding path) and scattered ones, idle cycles carrying garbage,
//! intervals from none to longer than the run, the wrap of the time base
//! and the block disabled. Then the recorded cycles on the Verilog under
//! Verilator, the lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::congestion::dcqcn_notification_point::DcqcnNotificationPoint;
use rocenic_hdl::congestion::dcqcn_reaction_point::DEFAULT_QPN_BITS;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::dcqcn_integer::{notify, NpEvent, NpOutcome, NpParams, NpRecord};
use rust_hdl::prelude::*;
use std::collections::{HashMap, VecDeque};

type Rtl = DcqcnNotificationPoint<DEFAULT_QPN_BITS>;

struct Bench {
    sim: CycleSim<Rtl>,
    params: NpParams,
    rng: ChaCha8Rng,
    records: HashMap<u32, NpRecord>,
    /// Outcomes due: (cycle presented, qpn, outcome).
    due: VecDeque<(u64, u32, NpOutcome)>,
    now: u32,
    checked: u64,
    cnps: u64,
    held: u64,
}

impl Bench {
    fn new(seed: u64, params: NpParams, now: u32) -> Bench {
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
            cnps: 0,
            held: 0,
        }
    }

    /// New parameters, once the events in flight are done.
    fn set_params(&mut self, params: NpParams) {
        self.cycle(None);
        self.cycle(None);
        self.params = params;
        self.sim.uut.cfg.drive(&params);
    }

    /// One cycle; the outcome due in it compared.
    fn cycle(&mut self, event: Option<(u32, NpEvent)>) {
        let c = self.sim.cycles();
        let garbage: u64 = self.rng.gen();
        let (reset, qpn) = match event {
            Some((q, e)) => (e == NpEvent::Reset, q),
            None => (garbage & 1 == 1, (garbage >> 8) as u32 & 1023),
        };
        let u = &mut self.sim.uut;
        u.reset.next = false;
        u.event_valid.next = event.is_some();
        u.event_reset.next = reset;
        u.event_qpn.next = bits(qpn.into());
        u.now.next = bits(self.now.into());
        self.sim.settle();
        let u = &self.sim.uut;
        match self.due.front() {
            Some(&(at, q, want)) if at + 2 == c => {
                self.due.pop_front();
                assert!(u.out_valid.val(), "cycle {c}: no outcome for QP {q}");
                let got = NpOutcome {
                    record: u.out_record.val().to_model(),
                    cnp: u.out_cnp.val(),
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
                assert!(!u.out_cnp.val(), "cycle {c}: a CNP without an event");
            }
        }
        if let Some((q, e)) = event {
            let record = self.records.get(&q).copied().unwrap_or_default();
            let outcome = notify(&self.params, &record, e);
            self.records.insert(q, outcome.record);
            self.due.push_back((c, q, outcome));
            self.cnps += u64::from(outcome.cnp);
            self.held += u64::from(matches!(e, NpEvent::Ce { .. }) && !outcome.cnp);
        }
        self.sim.tick();
    }

    /// `cycles` of random events on `hot` QPs (and a scattered one in
    /// eight), time advancing by 0 to `step` units a cycle.
    fn traffic(&mut self, cycles: u64, hot: u32, step: u32) {
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
            let event = if self.rng.gen_bool(0.04) {
                NpEvent::Reset
            } else {
                NpEvent::Ce { now: self.now }
            };
            self.cycle(Some((qpn, event)));
        }
        self.cycle(None);
        self.cycle(None);
        assert!(self.due.is_empty());
    }
}

#[test]
fn matches_the_integer_model_bit_for_bit() {
    let on = |interval| NpParams {
        enabled: true,
        interval,
    };
    let mut b = Bench::new(1, on(40), u32::MAX - 2000);
    b.traffic(1500, 4, 8);
    assert!(b.now < 1 << 20, "the time base wrapped during the run");
    b.set_params(on(0));
    b.traffic(400, 3, 2);
    // Longer than the run: one CNP per QP and reset.
    b.set_params(on(u32::MAX));
    b.traffic(600, 5, 10);
    b.set_params(on(7));
    b.traffic(600, 2, 3);
    b.set_params(NpParams {
        enabled: false,
        interval: 7,
    });
    b.traffic(300, 3, 3);
    assert!(b.checked > 2800, "{} outcomes", b.checked);
    assert!(
        b.cnps > 600 && b.held > 1000,
        "{} CNPs, {} held",
        b.cnps,
        b.held
    );
    let cycles = b
        .sim
        .replay_in_verilator("dcqcn_notification_point")
        .unwrap();
    assert!(cycles > 3400, "replayed {cycles} cycles");
}

/// One QP in every cycle, one time unit apart, interval 3: a CNP in every
/// third cycle exactly, each decided on the record its predecessor wrote
/// in the cycle before.
#[test]
fn one_qp_every_cycle_reads_its_own_last_write() {
    let params = NpParams {
        enabled: true,
        interval: 3,
    };
    let mut b = Bench::new(2, params, 100);
    for _ in 0..300 {
        b.now += 1;
        let now = b.now;
        b.cycle(Some((9, NpEvent::Ce { now })));
    }
    b.cycle(None);
    b.cycle(None);
    assert_eq!((b.checked, b.cnps, b.held), (300, 100, 200));
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("dcqcn_notification_point", &verilog_of::<Rtl>());
}

#[test]
fn synthesizes_with_the_records_in_block_ram() {
    let report = xilinx_synth("dcqcn_notification_point", &verilog_of::<Rtl>()).unwrap();
    report.assert_block_ram_and_lut_budget(1, 300);
}
