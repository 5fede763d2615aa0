//! DCQCN reaction point lockstep: the Verilated `dcqcn_reaction_point`
//! (1024 QPs) against the model's integer reaction point
//! (`rocenic_model::dcqcn_integer::react`), every field of every outcome
//! compared, for a million events. Each round draws a parameter set from
//! the whole range of every register (zero periods and byte counts, g
//! and alpha above 1, every Gd, floors above the line rate, rates that
//! saturate the target) and runs events on a few hot QPs (back to back on
//! one QP: the forwarding path) and on any of the 1024, with idle cycles
//! carrying garbage, time steps from none to jumps past 2^31 (deadlines
//! then read as not due) and sends up to 65535 bytes.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::congestion::dcqcn_reaction_point::{
    model_record, KIND_CNP, KIND_RESET, KIND_SENT, KIND_TICK,
};
use rocenic_model::dcqcn_integer::{react, Increase, RpEvent, RpOutcome, RpParams, RpRecord};
use std::collections::VecDeque;
use verilator_sys::{DcqcnReactionPoint as Rtl, Sim};

const QPS: usize = 1024;

fn random_params(rng: &mut ChaCha8Rng) -> RpParams {
    let rate = |rng: &mut ChaCha8Rng| match rng.gen_range(0..4) {
        0 => rng.gen(),
        _ => rng.gen_range(0..200_000_000),
    };
    let period = |rng: &mut ChaCha8Rng| match rng.gen_range(0..6) {
        0 => 0,
        _ => rng.gen_range(1..400),
    };
    RpParams {
        enabled: rng.gen_bool(0.95),
        line_rate: rate(rng),
        min_rate: rate(rng) / if rng.gen_bool(0.8) { 1000 } else { 1 },
        ai_rate: rate(rng) / 100,
        hai_rate: rate(rng),
        g: if rng.gen_bool(0.9) {
            rng.gen_range(0..=32768)
        } else {
            rng.gen()
        },
        gd: rng.gen_range(0..16),
        min_dec_fac: if rng.gen_bool(0.5) { 0 } else { rng.gen() },
        initial_alpha: if rng.gen_bool(0.9) {
            rng.gen_range(0..=32768)
        } else {
            rng.gen()
        },
        alpha_period: period(rng),
        rate_period: period(rng),
        byte_reset: match rng.gen_range(0..5) {
            0 => 0,
            1 => rng.gen(),
            _ => rng.gen_range(1..200_000),
        },
        threshold: rng.gen_range(0..8),
        monitor_period: if rng.gen_bool(0.5) {
            0
        } else {
            rng.gen_range(1..500)
        },
    }
}

struct Bench {
    sim: Sim<Rtl>,
    records: Vec<RpRecord>,
    /// (cycle presented, qpn, outcome).
    due: VecDeque<(u64, u32, RpOutcome)>,
    now: u32,
    checked: u64,
    increases: [u64; 4],
    cuts: u64,
    held: u64,
    /// Outcomes whose target saturated.
    saturated: u64,
}

impl Bench {
    fn set_params(&mut self, p: &RpParams) {
        let s = &mut self.sim;
        s.set_bit(Rtl::CFG_ENABLED, p.enabled);
        s.set_u64(Rtl::CFG_LINE_RATE, p.line_rate.into());
        s.set_u64(Rtl::CFG_MIN_RATE, p.min_rate.into());
        s.set_u64(Rtl::CFG_AI_RATE, p.ai_rate.into());
        s.set_u64(Rtl::CFG_HAI_RATE, p.hai_rate.into());
        s.set_u64(Rtl::CFG_G, p.g.into());
        s.set_u64(Rtl::CFG_GD, p.gd.into());
        s.set_u64(Rtl::CFG_MIN_DEC_FAC, p.min_dec_fac.into());
        s.set_u64(Rtl::CFG_INITIAL_ALPHA, p.initial_alpha.into());
        s.set_u64(Rtl::CFG_ALPHA_PERIOD, p.alpha_period.into());
        s.set_u64(Rtl::CFG_RATE_PERIOD, p.rate_period.into());
        s.set_u64(Rtl::CFG_BYTE_RESET, p.byte_reset.into());
        s.set_u64(Rtl::CFG_THRESHOLD, p.threshold.into());
        s.set_u64(Rtl::CFG_MONITOR_PERIOD, p.monitor_period.into());
    }

    /// One cycle; the outcome due in it compared.
    fn cycle(&mut self, p: &RpParams, event: Option<(u32, RpEvent)>, garbage: u64) {
        let c = self.sim.cycle();
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
        let s = &mut self.sim;
        s.set_bit(Rtl::EVENT_VALID, event.is_some());
        s.set_u64(Rtl::EVENT_KIND, kind);
        s.set_u64(Rtl::EVENT_QPN, qpn.into());
        s.set_u64(Rtl::EVENT_BYTES, bytes);
        s.set_u64(Rtl::NOW, self.now.into());
        s.eval();
        match self.due.front() {
            Some(&(at, q, want)) if at + 2 == c => {
                self.due.pop_front();
                assert!(
                    s.get_bit(Rtl::OUT_VALID),
                    "cycle {c}: no outcome for QP {q}"
                );
                let got = RpOutcome {
                    record: model_record(&s.get(Rtl::OUT_RECORD)),
                    rate: s.get_u64(Rtl::OUT_RATE) as u32,
                    scan: s.get_bit(Rtl::OUT_SCAN),
                    cut: s.get_bit(Rtl::OUT_CUT),
                    held: s.get_bit(Rtl::OUT_HELD),
                    increase: Increase::from_code(s.get_u64(Rtl::OUT_INCREASE)),
                };
                assert_eq!(s.get_u64(Rtl::OUT_QPN) as u32, q, "cycle {c}");
                assert_eq!(got, want, "cycle {c}, QP {q}, parameters {p:?}");
                self.checked += 1;
                self.increases[want.increase as usize] += 1;
                self.cuts += u64::from(want.cut);
                self.held += u64::from(want.held);
                self.saturated += u64::from(want.record.target == u32::MAX);
            }
            _ => assert!(
                !s.get_bit(Rtl::OUT_VALID),
                "cycle {c}: an outcome nothing asked for"
            ),
        }
        if let Some((q, e)) = event {
            let outcome = react(p, &self.records[q as usize], e);
            self.records[q as usize] = outcome.record;
            self.due.push_back((c, q, outcome));
        }
        s.tick();
    }
}

#[test]
fn a_million_events_match_the_integer_model() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let mut b = Bench {
        sim: Sim::<Rtl>::new().expect("dcqcn_reaction_point is exported"),
        records: vec![RpRecord::default(); QPS],
        due: VecDeque::new(),
        now: rng.gen(),
        checked: 0,
        increases: [0; 4],
        cuts: 0,
        held: 0,
        saturated: 0,
    };
    let rounds = 50;
    for _ in 0..rounds {
        // The events still in the block finish on the old parameters.
        b.cycle(&RpParams::paper(), None, 0);
        b.cycle(&RpParams::paper(), None, 0);
        let p = random_params(&mut rng);
        b.set_params(&p);
        let hot = rng.gen_range(1..12u32);
        let step = *[1u32, 4, 20].get(rng.gen_range(0..3)).unwrap();
        for _ in 0..20_000 {
            b.now = match rng.gen_range(0..10_000) {
                0 => b.now.wrapping_add(rng.gen_range(1 << 31..u32::MAX)),
                _ => b.now.wrapping_add(rng.gen_range(0..=step)),
            };
            let garbage = rng.gen();
            if rng.gen_bool(0.1) {
                b.cycle(&p, None, garbage);
                continue;
            }
            let qpn = if rng.gen_bool(0.1) {
                rng.gen_range(0..QPS as u32)
            } else {
                rng.gen_range(0..hot)
            };
            let now = b.now;
            let event = match rng.gen_range(0..100) {
                0..=1 => RpEvent::Reset,
                2..=11 => RpEvent::Cnp { now },
                12..=55 => RpEvent::Sent {
                    bytes: if rng.gen_bool(0.2) {
                        rng.gen()
                    } else {
                        rng.gen_range(0..9000)
                    },
                },
                _ => RpEvent::Tick { now },
            };
            b.cycle(&p, Some((qpn, event)), garbage);
        }
    }
    b.cycle(&RpParams::paper(), None, 0);
    b.cycle(&RpParams::paper(), None, 0);
    assert!(b.due.is_empty());
    assert!(b.checked > 850_000, "{} outcomes", b.checked);
    assert!(
        b.increases.iter().all(|&n| n > 5_000),
        "every phase reached: {:?}",
        b.increases
    );
    assert!(
        b.cuts > 10_000 && b.held > 1_000,
        "{} cuts, {} held",
        b.cuts,
        b.held
    );
    assert!(b.saturated > 100, "{} saturated targets", b.saturated);
    eprintln!(
        "dcqcn_reaction_point: {} outcomes, increases {:?}, {} cuts, {} held, {} saturated",
        b.checked, b.increases, b.cuts, b.held, b.saturated
    );
}
