//! PacingScheduler in rust-hdl's simulator: a lone unthrottled QP that
//! pulses again with each grant is granted every 6 cycles (a second pulse
//! while it waits changes nothing); a throttled QP beside it is held and
//! asked again until it has earned its frame, while the unthrottled one
//! keeps its pace; a rate update takes the gate's cycle. Then the recorded
//! cycles on the Verilog under Verilator, the lint and one Yosys
//! synthesis. The 1024-QP accuracy test runs the Verilated block
//! (`sim/tests/blocks/pacing_scheduler.rs`).

use crate::common::assert_lint_clean;
use rocenic_hdl::congestion::pacing_scheduler::PacingSchedulerDefault as Rtl;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::pacing::PacingParams;
use rust_hdl::prelude::*;

struct Bench {
    sim: CycleSim<Rtl>,
    /// (cycle, qpn, bytes) of every grant.
    grants: Vec<(u64, u32, u32)>,
    held: u64,
}

impl Bench {
    fn new() -> Bench {
        let mut sim = CycleSim::new(Rtl::default(), |b| &mut b.clock);
        sim.record();
        sim.uut.cfg.drive(&PacingParams::line_100g());
        Bench {
            sim,
            grants: Vec::new(),
            held: 0,
        }
    }

    /// One cycle with an optional work pulse and rate update; a QP in
    /// `again` pulses again (same size) in the cycle of its grant.
    fn cycle(&mut self, work: Option<(u32, u32)>, rate: Option<(u32, u32)>, again: &[u32]) {
        let c = self.sim.cycles();
        let u = &mut self.sim.uut;
        u.reset.next = false;
        u.now.next = bits(c);
        u.rate_valid.next = rate.is_some();
        u.rate_reset.next = false;
        u.rate_qpn.next = bits(rate.map_or(0, |r| r.0).into());
        u.rate_value.next = bits(rate.map_or(0, |r| r.1).into());
        self.sim.settle();
        let u = &self.sim.uut;
        let mut pulse = work;
        if u.out_valid.val() & u.out_send.val() {
            let q = u.out_qpn.val().to_u64() as u32;
            assert_eq!(u.grant_valid.val(), u.out_allowed.val(), "cycle {c}");
            if u.grant_valid.val() {
                assert_eq!(u.grant_qpn.val().to_u64() as u32, q, "cycle {c}");
                let bytes = u.grant_bytes.val().to_u64() as u32;
                self.grants.push((c, q, bytes));
                if again.contains(&q) {
                    assert!(work.is_none(), "cycle {c}: the bench pulses twice");
                    pulse = Some((q, bytes));
                }
            } else {
                self.held += 1;
            }
        } else {
            assert!(
                !u.grant_valid.val(),
                "cycle {c}: a grant without a question"
            );
        }
        let u = &mut self.sim.uut;
        u.work_valid.next = pulse.is_some();
        u.work_qpn.next = bits(pulse.map_or(0, |p| p.0).into());
        u.work_bytes.next = bits(pulse.map_or(0, |p| p.1).into());
        self.sim.tick();
    }

    fn grants_of(&self, qpn: u32) -> Vec<u64> {
        self.grants
            .iter()
            .filter(|g| g.1 == qpn)
            .map(|g| g.0)
            .collect()
    }
}

#[test]
fn a_lone_qp_every_six_cycles_and_a_throttled_one_held_until_it_has_earned() {
    let mut b = Bench::new();
    // QP 7 unthrottled, from cycle 0; a second pulse while it waits.
    b.cycle(Some((7, 1000)), None, &[7]);
    b.cycle(None, None, &[7]);
    b.cycle(Some((7, 64)), None, &[7]);
    for _ in 3..61 {
        b.cycle(None, None, &[7]);
    }
    let lone: Vec<u64> = (1..=10).map(|k| 6 * k).collect();
    assert_eq!(b.grants_of(7), lone);
    assert!(b.grants.iter().all(|g| g.2 == 1000), "{:?}", b.grants);

    // QP 300 at 10 Gb/s (40 bits a cycle) from cycle 61: a 500-byte frame
    // costs 100 cycles of its rate. The first is granted at once, each
    // next one when the QP has earned what the one before cost, asked
    // again at least every 6 cycles meanwhile; QP 7 keeps its pace but
    // for the cycle the rate update takes.
    b.cycle(Some((300, 500)), Some((300, 10_000_000)), &[7, 300]);
    for _ in 62..300 {
        b.cycle(None, None, &[7, 300]);
    }
    let asked: Vec<u64> = b.grants_of(300).iter().map(|g| g - 2).collect();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!((65..=67).contains(&asked[0]), "{asked:?}");
    assert!((161..=167).contains(&asked[1]), "{asked:?}");
    assert!((100..=106).contains(&(asked[2] - asked[1])), "{asked:?}");
    // Held, and asked again, at least every 6 cycles while it waits.
    assert!(b.held >= (asked[2] - asked[0]) / 6 - 2, "held {}", b.held);
    let paced = b.grants_of(7);
    assert!(paced.len() >= 45, "{} grants", paced.len());
    for pair in paced.windows(2) {
        assert!(pair[1] - pair[0] <= 7, "{paced:?}");
    }
    let cycles = b.sim.replay_in_verilator("pacing_scheduler").unwrap();
    assert_eq!(cycles, 300);
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("pacing_scheduler", &verilog_of::<Rtl>());
}

#[test]
fn synthesizes_with_its_marks_queues_and_records_in_block_ram() {
    let report = xilinx_synth("pacing_scheduler", &verilog_of::<Rtl>()).unwrap();
    report.assert_block_ram_and_lut_budget(4, 1500);
}

/// Asked with 0 bytes and paying per frame: QP 400 at 10 Gb/s pulses for
/// a grant and is charged two 250-byte frames after each (100 cycles of
/// its rate), so its grants come about 100 cycles apart; each charge and
/// the rate update are reported with their kind and value, a charge takes
/// the gate's cycle from a question, and while `hold` is high nothing is
/// asked.
#[test]
fn charges_pay_for_frames_and_hold_stops_the_questions() {
    use rocenic_hdl::congestion::pacing_scheduler::{OUT_CHARGE, OUT_QUESTION, OUT_RATE};
    let mut sim = CycleSim::new(Rtl::default(), |b| &mut b.clock);
    sim.uut.cfg.drive(&PacingParams::line_100g());
    let mut grants = Vec::new();
    let mut charges_owed: Vec<u64> = Vec::new();
    let (mut charged, mut rates, mut questions) = (0, 0, 0);
    for c in 0..700u64 {
        let hold = (400..500).contains(&c);
        let u = &mut sim.uut;
        u.reset.next = false;
        u.now.next = bits(c);
        u.hold.next = hold;
        u.rate_valid.next = c == 0;
        u.rate_reset.next = false;
        u.rate_qpn.next = bits(400);
        u.rate_value.next = bits(10_000_000);
        u.work_valid.next = c == 1;
        u.work_qpn.next = bits(400);
        u.work_bytes.next = bits(0);
        let charge = charges_owed.first().is_some_and(|&at| at <= c);
        u.charge_valid.next = charge;
        u.charge_qpn.next = bits(400);
        u.charge_bytes.next = bits(250);
        sim.settle();
        let u = &sim.uut;
        assert_eq!(u.charge_ready.val(), c != 0, "cycle {c}");
        if charge && u.charge_ready.val() {
            charges_owed.remove(0);
        }
        let mut again = false;
        if u.out_valid.val() {
            let kind = u.out_kind.val().to_u64();
            assert_eq!(u.out_send.val(), kind == OUT_QUESTION, "cycle {c}");
            match kind {
                OUT_RATE => {
                    assert_eq!(u.out_value.val().to_u64(), 10_000_000);
                    rates += 1;
                }
                OUT_CHARGE => {
                    assert_eq!(u.out_value.val().to_u64(), 250);
                    charged += 1;
                }
                _ => {
                    assert_eq!(kind, OUT_QUESTION, "cycle {c}");
                    assert_eq!(u.out_value.val().to_u64(), 0);
                    assert!(
                        !(402..502).contains(&c),
                        "cycle {c}: a question asked under hold"
                    );
                    questions += 1;
                }
            }
            if u.grant_valid.val() {
                grants.push(c);
                charges_owed.extend([c + 1, c + 1]);
                again = true;
            }
        }
        let u = &mut sim.uut;
        if again {
            u.work_valid.next = true;
        }
        sim.tick();
    }
    assert_eq!(rates, 1);
    assert!(questions > 20, "{questions} questions");
    assert_eq!(charged, 2 * grants.len() as u64 - charges_owed.len() as u64);
    // 500 bytes at 40 bits a cycle: 100 cycles (less the few cycles the
    // QP earned before its first question); the first grant at once; the
    // credit earned under the hold spent after it.
    assert!(grants.len() >= 6, "{grants:?}");
    for pair in grants.windows(2) {
        let gap = pair[1] - pair[0];
        assert!((95..=108).contains(&gap) || pair[1] >= 502, "{grants:?}");
    }
    assert!(grants.iter().all(|g| !(403..502).contains(g)), "{grants:?}");
}
