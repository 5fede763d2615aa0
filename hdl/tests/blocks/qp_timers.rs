//! QpTimers in rust-hdl's simulator against the contract model
//! (`QpTimersModel`) on an 8-QP instance: timers armed, re-armed and
//! stopped with short codes under random expiry backpressure, every expiry
//! checked (armed, due, on time, exactly once), replayed on the generated
//! Verilog under Verilator; a re-arm in each cycle of the scanner's read to
//! decision window never fires the old deadline; expiries held back by
//! backpressure come out once each in round-robin order; the QP count as
//! a build parameter up to 16384 (Verilog, Verilator lint); one block RAM
//! for the records (Yosys synth_xilinx). The long random runs, wrap of the time
//! base included, are under Verilator (`sim/tests/blocks/qp_timers.rs`).

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::qp::qp_timers::{
    time_at, Command, Fired, QpTimers, QpTimersModel, DECISION_LATENCY, KIND_ACK_TIMEOUT,
    KIND_RNR_WAIT, UNIT_CYCLES,
};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;

const A: usize = 3;
type Small = QpTimers<A>;

struct Bench {
    sim: CycleSim<Small>,
    model: QpTimersModel,
    fired: Vec<Fired>,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            sim: CycleSim::new(Small::default(), |b| &mut b.clock),
            model: QpTimersModel::new(A),
            fired: Vec::new(),
        }
    }

    /// One cycle on both; the block's expiry (valid) is judged by the model.
    fn step(&mut self, command: Option<Command>, ready: bool) {
        let u = &mut self.sim.uut;
        u.command.valid.next = command.is_some();
        let (qpn, arm, kind, code) = match command {
            Some(Command::Arm { qpn, kind, code }) => (qpn, true, kind, code),
            Some(Command::Stop { qpn }) => (qpn, false, true, 7),
            None => (5, true, false, 1),
        };
        u.command.qpn.next = bits(u64::from(qpn));
        u.command.arm.next = arm;
        u.command.kind.next = kind;
        u.command.code.next = bits(u64::from(code));
        u.expiry.ready.next = ready;
        self.sim.settle();
        let u = &self.sim.uut;
        assert!(u.command.ready.val());
        assert_eq!(
            u.now.val().to_u64(),
            time_at(self.sim.cycles()),
            "time base"
        );
        let expiry = u
            .expiry
            .valid
            .val()
            .then(|| (u.expiry.qpn.val().to_u64() as u32, u.expiry.kind.val()));
        match self.model.cycle_with(command, expiry, ready) {
            Ok(Some(f)) => self.fired.push(f),
            Ok(None) => {}
            Err(e) => panic!("{e}"),
        }
        if let Err(e) = self.model.check_overdue() {
            panic!("{e}");
        }
        self.sim.tick();
    }
}

#[test]
fn random_timers_fire_once_on_time_under_backpressure() {
    let seed = 0x7133_0001;
    eprintln!("seed {seed:#x}");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Bench::new();
    b.sim.record();
    let cycles = 150_000u64;
    let (mut arms, mut stops) = (0, 0);
    for cycle in 0..cycles {
        // Phases of no, some and heavy backpressure.
        let ready = match (cycle / 5000) % 3 {
            0 => true,
            1 => rng.gen_bool(0.5),
            _ => rng.gen_bool(0.05),
        };
        let command = rng.gen_bool(0.0015).then(|| {
            let qpn = rng.gen_range(0..1 << A);
            if rng.gen_bool(0.2) {
                stops += 1;
                Command::Stop { qpn }
            } else {
                arms += 1;
                // ACK 1..2 (4 and 8 units), RNR 1..2 (5 and 10 units), and
                // now and then ACK 0 (no timer) or a long one.
                let kind = rng.gen();
                let code = match rng.gen_range(0..20) {
                    0 => rng.gen_range(0..32),
                    _ => rng.gen_range(1..3),
                };
                Command::Arm { qpn, kind, code }
            }
        });
        b.step(command, ready);
    }
    eprintln!(
        "seed {seed:#x}: {arms} arms, {stops} stops, {} fired, {} running",
        b.fired.len(),
        b.model.running()
    );
    assert!(
        b.fired.len() > 40,
        "seed {seed:#x}: {} fired",
        b.fired.len()
    );
    let kinds = |k| b.fired.iter().filter(|f| f.timer.kind == k).count();
    assert!(kinds(KIND_ACK_TIMEOUT) > 10 && kinds(KIND_RNR_WAIT) > 10);
    let n = b.sim.replay_in_verilator("qp_timers").unwrap();
    assert_eq!(n as u64, cycles);
}

/// QP 6 armed with ACK code 1 (4 units), then re-armed or stopped in a
/// cycle around the one its first due visit is decided in: the scanner
/// reads QP 6 in cycle `due - 2` (8-QP scan, no expiries before) and
/// decides in `due`, so commands in `due - 2 ..= due` hit the read in each
/// pipeline stage. A command up to the decision cycle wins (the old
/// deadline never fires; the new one fires once unless stopped); one after
/// it comes after the firing presented in `due + 1`.
#[test]
fn command_racing_the_scanner_wins() {
    let arm = Command::Arm {
        qpn: 6,
        kind: KIND_ACK_TIMEOUT,
        code: 1,
    };
    // Deadline unit origin + 5 begins in cycle 2560.
    let due = 5 * UNIT_CYCLES;
    assert_eq!((due - DECISION_LATENCY) % 8, 6);
    for offset in -4i64..=4 {
        for stop in [false, true] {
            let mut b = Bench::new();
            let at = (due as i64 + offset) as u64;
            for cycle in 0..at + 7 * UNIT_CYCLES {
                let command = match cycle {
                    0 => Some(arm),
                    c if c == at && stop => Some(Command::Stop { qpn: 6 }),
                    c if c == at => Some(arm),
                    _ => None,
                };
                b.step(command, true);
            }
            let presented: Vec<(u64, u64)> = b
                .fired
                .iter()
                .map(|f| (f.presented, f.timer.armed_in))
                .collect();
            let old = (due + 1, 0);
            let new = b.fired.last().map(|f| f.presented).unwrap_or(0);
            let expect = match (offset <= 0, stop) {
                (true, true) => vec![],
                (true, false) => vec![(new, at)],
                (false, true) => vec![old],
                (false, false) => vec![old, (new, at)],
            };
            assert_eq!(
                presented, expect,
                "command {offset} cycles from due, stop {stop}"
            );
        }
    }
}

/// All eight timers due while the expiry output is blocked: the first
/// goes to the output register, the scanner waits on the next one, loses
/// none, and after the release (under random backpressure, so it stalls
/// again and again) resumes each time at the QP after the one it waited
/// on: the expiries come out once each, in round-robin order.
#[test]
fn backpressure_pauses_the_scan_in_order() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7133_0002);
    let mut b = Bench::new();
    for round in 0..4u64 {
        let start = b.sim.cycles();
        let before = b.fired.len();
        for qpn in 0..1 << A {
            let kind = rng.gen();
            b.step(Some(Command::Arm { qpn, kind, code: 1 }), false);
        }
        // ACK code 1 (4 units) and RNR code 1 (5 units) are due within
        // 7 units; hold the output until then.
        while b.sim.cycles() < start + 8 * UNIT_CYCLES {
            b.step(None, false);
        }
        // The first due one went to the output register, the rest wait.
        assert_eq!(b.fired.len(), before + 1);
        while b.sim.cycles() < start + 9 * UNIT_CYCLES {
            let ready = rng.gen_bool(if round.is_multiple_of(2) { 0.5 } else { 0.2 });
            b.step(None, ready);
        }
        let order: Vec<u32> = b.fired[before..].iter().map(|f| f.qpn).collect();
        assert_eq!(order.len(), 1 << A, "round {round}: {order:?}");
        // The first went out before the hold; the scanner waited on the
        // second and then went on round robin (skipping the first).
        let expect: Vec<u32> = (0..1 << A)
            .map(|i| (order[1] + i) % (1 << A))
            .filter(|&q| q != order[0])
            .collect();
        assert_eq!(order[1..], expect[..], "round {round}");
    }
}

#[test]
fn qp_count_is_a_build_parameter_up_to_16384() {
    for (verilog, qps) in [
        (verilog_of::<QpTimers<10>>(), 1024u32),
        (verilog_of::<QpTimers<14>>(), 16384),
    ] {
        let words = verilog.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(&format!("reg [35:0] mem [0:{}];", qps - 1)),
            "{qps}"
        );
        let qpn_msb = qps.trailing_zeros() - 1;
        assert!(words.contains(&format!("input wire [{qpn_msb}:0] command$qpn")));
        assert!(words.contains(&format!("output reg [{qpn_msb}:0] expiry$qpn")));
        assert_lint_clean(&format!("qp_timers_{qps}"), &verilog);
    }
}

#[test]
fn records_map_to_one_block_ram() {
    let report = xilinx_synth("qp_timers_1024", &verilog_of::<QpTimers<10>>()).unwrap();
    // 1024 x 36 bits is one RAMB36 in 1K x 36 true dual-port mode; no
    // LUT RAM, no collision logic.
    assert_eq!(report.count("RAMB36E2"), 1, "{}", report.log);
    assert_eq!(report.count("RAMB18E2"), 0, "{}", report.log);
    assert!(
        report
            .cells
            .iter()
            .all(|(c, _)| !c.starts_with("RAM32") && !c.starts_with("RAM64")),
        "{}",
        report.log
    );
    assert!(report.flip_flops() < 160, "{}", report.log);
}
