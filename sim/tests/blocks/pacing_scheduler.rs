//! Pacing scheduler at 1024 QPs: the Verilated `pacing_scheduler`, every
//! outcome of its gate checked against the model's `pace` (grant or hold,
//! and the record, bit for bit, at the cycle its question was asked), and
//! every grant against the work it answers (the QP was queued, with the
//! size of the pulse that queued it; pulses while it waits are ignored).
//!
//! First a stress phase: pulses and rate updates on a few hot QPs and on
//! any of the 1024, the same QP in consecutive cycles, duplicate pulses
//! with other sizes. Then pacing accuracy: all 1024 QPs backlogged at
//! assorted rates from 10 to 90 Mb/s with frames of 256 to 4096 bytes for
//! 20 ms, each QP's rate measured from its grants within 1 % of its Rc.
//! Then one QP unthrottled beside the 1023 others, all sharing one
//! 100 GbE link that carries every granted frame: the unthrottled QP
//! keeps a frame waiting while the link's queue is short, and the link is
//! never idle (its frames fill what the throttled ones leave, up to the
//! framing bound) while the others keep their rates.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::wire_bytes;
use rocenic_hdl::congestion::pacing_gate::PacingRecord as RtlRecord;
use rocenic_model::pacing::{pace, PacingEvent, PacingParams, PacingRecord};
use std::collections::VecDeque;
use verilator_sys::{PacingScheduler as Rtl, Sim};

const QPS: usize = 1024;
/// The link's bytes per 250 MHz cycle at 100 Gb/s.
const LINK_BYTES_PER_CYCLE: f64 = 50.0;

struct Bench {
    sim: Sim<Rtl>,
    params: PacingParams,
    records: Vec<PacingRecord>,
    queued: Vec<bool>,
    /// The size each queued QP was queued with.
    frame: Vec<u16>,
    /// Last cycle's pulse, decided in this one.
    pulse: Option<(u32, u16)>,
    /// Rate updates in the gate: (cycle presented, qpn, event).
    updates: VecDeque<(u64, u32, PacingEvent)>,
    /// The grants of the cycle just run: (qpn, bytes).
    granted: Vec<(u32, u16)>,
    checked: u64,
    grants: u64,
    holds: u64,
    ignored: u64,
}

impl Bench {
    fn new() -> Bench {
        let mut sim = Sim::<Rtl>::new().expect("pacing_scheduler is exported");
        let params = PacingParams::line_100g();
        sim.set_u64(Rtl::CFG_LINE_RATE, params.line_rate.into());
        sim.set_u64(Rtl::CFG_BYTE_COST, params.byte_cost.into());
        sim.set_u64(Rtl::CFG_BURST, params.burst);
        Bench {
            sim,
            params,
            records: vec![PacingRecord::default(); QPS],
            queued: vec![false; QPS],
            frame: vec![0; QPS],
            pulse: None,
            updates: VecDeque::new(),
            granted: Vec::new(),
            checked: 0,
            grants: 0,
            holds: 0,
            ignored: 0,
        }
    }

    /// One cycle: a rate update and a work pulse in; the gate's outcome
    /// due in it checked; `again` asked, after the outcome, for a pulse of
    /// its own in the same cycle (a consumer that answers a grant at once).
    fn cycle(
        &mut self,
        update: Option<(u32, PacingEvent)>,
        work: Option<(u32, u16)>,
        again: &mut dyn FnMut(&Bench) -> Option<(u32, u16)>,
    ) {
        let c = self.sim.cycle();
        let s = &mut self.sim;
        let (reset, rate, qpn) = match update {
            Some((q, PacingEvent::Reset)) => (true, 0, q),
            Some((q, PacingEvent::Rate(r))) => (false, r, q),
            Some((_, PacingEvent::Send(_) | PacingEvent::Charge(_))) => {
                unreachable!("sends and charges are the scheduler's")
            }
            None => (c & 1 == 1, c as u32, (c >> 1) as u32 & 1023),
        };
        s.set_bit(Rtl::RATE_VALID, update.is_some());
        s.set_bit(Rtl::RATE_RESET, reset);
        s.set_u64(Rtl::RATE_QPN, qpn.into());
        s.set_u64(Rtl::RATE_VALUE, rate.into());
        s.set_u64(Rtl::NOW, c & 0xFFFF_FFFF);
        s.eval();

        self.granted.clear();
        if s.get_bit(Rtl::OUT_VALID) {
            let q = s.get_u64(Rtl::OUT_QPN) as u32;
            let record = RtlRecord::model_from_words(&s.get(Rtl::OUT_RECORD));
            let allowed = s.get_bit(Rtl::OUT_ALLOWED);
            let (event, at) = if s.get_bit(Rtl::OUT_SEND) {
                assert!(self.queued[q as usize], "cycle {c}: QP {q} asked unqueued");
                (PacingEvent::Send(self.frame[q as usize]), c - 2)
            } else {
                let (at, uq, e) = self.updates.pop_front().expect("an update's outcome");
                assert_eq!((at + 2, uq), (c, q), "cycle {c}: the update's outcome");
                (e, at)
            };
            let want = pace(&self.params, &self.records[q as usize], event, at as u32);
            assert_eq!(
                (record, allowed),
                (want.record, want.allowed),
                "cycle {c}, QP {q}, {event:?}"
            );
            self.records[q as usize] = want.record;
            self.checked += 1;
            if let PacingEvent::Send(bytes) = event {
                assert_eq!(s.get_bit(Rtl::GRANT_VALID), allowed, "cycle {c}");
                if allowed {
                    assert_eq!(s.get_u64(Rtl::GRANT_QPN) as u32, q, "cycle {c}");
                    assert_eq!(s.get_u64(Rtl::GRANT_BYTES) as u16, bytes, "cycle {c}");
                    self.queued[q as usize] = false;
                    self.granted.push((q, bytes));
                    self.grants += 1;
                } else {
                    self.holds += 1;
                }
            }
        } else {
            assert!(
                !s.get_bit(Rtl::GRANT_VALID),
                "cycle {c}: a grant without a question"
            );
            assert!(
                self.updates.front().is_none_or(|u| u.0 + 2 > c),
                "cycle {c}: an update without an outcome"
            );
        }
        // Last cycle's pulse is decided now, after this cycle's grant.
        if let Some((q, bytes)) = self.pulse.take() {
            if self.queued[q as usize] {
                self.ignored += 1;
            } else {
                self.queued[q as usize] = true;
                self.frame[q as usize] = bytes;
            }
        }
        if let Some((q, e)) = update {
            self.updates.push_back((c, q, e));
        }

        let pulse = work.or_else(|| again(self));
        let s = &mut self.sim;
        s.set_bit(Rtl::WORK_VALID, pulse.is_some());
        s.set_u64(Rtl::WORK_QPN, pulse.map_or(c >> 3 & 1023, |p| p.0.into()));
        s.set_u64(Rtl::WORK_BYTES, pulse.map_or(c & 0xFFFF, |p| p.1.into()));
        self.pulse = pulse;
        s.tick();
    }
}

/// Per-QP grant times in a phase: each QP's rate from its first grant to
/// its last.
#[derive(Clone, Copy, Default)]
struct Meter {
    first: Option<u64>,
    last: u64,
    frames: u64,
}

impl Meter {
    fn grant(&mut self, cycle: u64) {
        self.first.get_or_insert(cycle);
        self.last = cycle;
        self.frames += 1;
    }

    /// kb/s at 250 MHz, for frames of `bytes`.
    fn rate_kbps(&self, bytes: u16) -> f64 {
        let span = (self.last - self.first.expect("granted")) as f64 * 4e-9;
        (self.frames - 1) as f64 * f64::from(bytes) * 8.0 / span / 1e3
    }
}

fn check_rates(meters: &[Meter], rates: &[u32], sizes: &[u16], qps: std::ops::Range<usize>) {
    let mut worst = 0f64;
    for q in qps {
        let m = &meters[q];
        assert!(m.frames >= 3, "QP {q}: {} frames", m.frames);
        let err = (m.rate_kbps(sizes[q]) / f64::from(rates[q]) - 1.0).abs();
        assert!(
            err < 0.01,
            "QP {q}: {:.0} kb/s for {}",
            m.rate_kbps(sizes[q]),
            rates[q]
        );
        worst = worst.max(err);
    }
    eprintln!("pacing_scheduler: worst rate error {:.4} %", worst * 100.0);
}

#[test]
fn every_outcome_matches_the_model_and_1024_qps_keep_their_rates() {
    let mut rng = ChaCha8Rng::seed_from_u64(25);
    let mut b = Bench::new();

    // Stress: a pulse in most cycles (hot QPs, duplicates with other
    // sizes), rate updates and resets in some, consumers that pulse again
    // at once.
    for _ in 0..200_000 {
        let pick = |rng: &mut ChaCha8Rng| {
            if rng.gen_bool(0.2) {
                rng.gen_range(0..QPS as u32)
            } else {
                rng.gen_range(0..6)
            }
        };
        let update = match rng.gen_range(0..20) {
            0 => Some((pick(&mut rng), PacingEvent::Reset)),
            1..=2 => Some((
                pick(&mut rng),
                PacingEvent::Rate(rng.gen_range(1..120_000_000)),
            )),
            _ => None,
        };
        let work = rng
            .gen_bool(0.6)
            .then(|| (pick(&mut rng), rng.gen_range(1..=4200)));
        let coin: bool = rng.gen();
        b.cycle(update, work, &mut |b: &Bench| {
            coin.then(|| b.granted.first().copied()).flatten()
        });
    }
    let stress = (b.checked, b.grants, b.holds, b.ignored);
    assert!(
        stress.1 > 50_000 && stress.2 > 20_000 && stress.3 > 20_000,
        "{stress:?}"
    );
    eprintln!("pacing_scheduler: stress (outcomes, grants, holds, pulses ignored) {stress:?}");
    // Every QP unthrottled: the held ones are granted within a lap.
    for q in 0..QPS as u32 {
        b.cycle(Some((q, PacingEvent::Reset)), None, &mut |_: &Bench| None);
    }
    for _ in 0..3 * QPS {
        b.cycle(None, None, &mut |_: &Bench| None);
    }
    assert!(b.queued.iter().all(|&q| !q), "work left after the stress");

    // Accuracy: 1024 backlogged QPs at assorted rates.
    let rates: Vec<u32> = (0..QPS).map(|_| rng.gen_range(10_000..=90_000)).collect();
    let sizes: Vec<u16> = (0..QPS).map(|_| rng.gen_range(256..=4096)).collect();
    for q in 0..QPS {
        b.cycle(
            Some((q as u32, PacingEvent::Rate(rates[q]))),
            Some((q as u32, sizes[q])),
            &mut |_: &Bench| None,
        );
    }
    let mut meters = vec![Meter::default(); QPS];
    let backlogged = |b: &Bench| b.granted.first().map(|&(q, bytes)| (q, bytes));
    for _ in 0..5_000_000 {
        b.cycle(None, None, &mut |b: &Bench| backlogged(b));
        for &(q, _) in &b.granted {
            meters[q as usize].grant(b.sim.cycle() - 1);
        }
    }
    check_rates(&meters, &rates, &sizes, 0..QPS);

    // One QP unthrottled (the last), the others as before, one link.
    let lone = QPS as u32 - 1;
    let lone_frame = 4096u16;
    b.cycle(Some((lone, PacingEvent::Reset)), None, &mut |b: &Bench| {
        backlogged(b)
    });
    let mut meters = vec![Meter::default(); QPS];
    let mut link_backlog = 0f64;
    let (mut idle, mut lone_bytes) = (0u64, 0u64);
    let phase = 2_500_000;
    for cycle in 0..phase {
        // The lone QP pulses when it has no frame waiting and the link has
        // less than two of its frames queued; the others as before.
        let room = link_backlog < 2.0 * wire_bytes(lone_frame.into()) as f64;
        b.cycle(None, None, &mut |b: &Bench| {
            let mine = !b.queued[lone as usize] && room && b.pulse.is_none_or(|p| p.0 != lone);
            match b.granted.first() {
                Some(&(q, bytes)) if q != lone => Some((q, bytes)),
                _ if mine => Some((lone, lone_frame)),
                _ => None,
            }
        });
        for &(q, bytes) in &b.granted {
            link_backlog += wire_bytes(bytes.into()) as f64;
            if q == lone {
                lone_bytes += u64::from(bytes);
            } else {
                meters[q as usize].grant(b.sim.cycle() - 1);
            }
        }
        if link_backlog < LINK_BYTES_PER_CYCLE && cycle > 1_000 {
            idle += 1;
        }
        link_backlog = (link_backlog - LINK_BYTES_PER_CYCLE).max(0.0);
    }
    check_rates(&meters, &rates, &sizes, 0..QPS - 1);
    assert_eq!(idle, 0, "the link idled for {idle} cycles");
    let lone_gbps = lone_bytes as f64 * 8.0 / (phase as f64 * 4e-9) / 1e9;
    let others: f64 = rates[..QPS - 1].iter().map(|&r| f64::from(r)).sum::<f64>() / 1e6;
    eprintln!(
        "pacing_scheduler: {} outcomes checked; the unthrottled QP {lone_gbps:.2} Gb/s beside {others:.2} Gb/s throttled",
        b.checked
    );
}
