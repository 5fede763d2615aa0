//! Per-QP timers lockstep: the Verilated `qp_timers` block (1024 QPs)
//! against the contract model (`QpTimersModel`), cycle by cycle: every
//! expiry must name a running timer of its kind, come no earlier than its
//! deadline and within the documented lateness bound, exactly once; a
//! timer stopped or re-armed before it fires never fires with the old
//! deadline; nothing fires unarmed; a held expiry stays put; the time base
//! is the documented one. Each firing is also held to real time: not
//! before the arm cycle plus the duration the reference model
//! (`rocenic_model::timers`) gives for its kind and code, and due at most
//! one unit (ACK timeout) or two (RNR wait, rounded up) after that.
//!
//! The traffic: arms (short codes that expire during the run, medium and
//! long ones, codes whose deadline wraps the time base, which wraps
//! 131072 cycles after configuration), stops, re-arms aimed at timers
//! already due but not yet fired (racing the scanner), bursts of one
//! command per cycle, and expiry backpressure from none to long stalls;
//! commands in each cycle of the scanner's read-to-decision window; all
//! QPs due at once; arms around the wrap.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::qp::qp_timers::{
    duration_units, time_at, Command, Fired, QpTimersModel, CLOCK_NS, KIND_ACK_TIMEOUT,
    KIND_RNR_WAIT, TIME_BITS, TIME_ORIGIN, UNIT_CYCLES, UNIT_NS,
};
use rocenic_model::timers::{ack_timeout_ns, rnr_timer_ns};
use verilator_sys::{QpTimers as Rtl, Sim};

const A: usize = 10;
const QPS: u32 = 1 << A;

/// The reference model's duration of a timer, in ns (`None`: infinite).
fn model_ns(kind: bool, code: u8) -> Option<u64> {
    if kind == KIND_RNR_WAIT {
        Some(rnr_timer_ns(code))
    } else {
        ack_timeout_ns(code)
    }
}

#[derive(Debug, Default)]
struct Stats {
    commands: u64,
    arms: u64,
    stops: u64,
    /// Commands for a QP whose timer was already due and not yet fired.
    raced: u64,
    /// Arms whose deadline lies past the wrap of the time base.
    wrapping: u64,
    fired: u64,
    held_cycles: u64,
    /// Cycles from due to presented, worst case.
    max_late: u64,
    /// Cycles a command was presented in a cycle right after another.
    back_to_back: u64,
}

struct Bench {
    sim: Sim<Rtl>,
    model: QpTimersModel,
    stats: Stats,
    last_command: bool,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            sim: Sim::<Rtl>::new().expect("qp_timers is exported"),
            model: QpTimersModel::new(A),
            stats: Stats::default(),
            last_command: false,
        }
    }

    fn cycle(&self) -> u64 {
        self.model.cycles()
    }

    /// One cycle in lockstep; the firing presented first in it, checked.
    fn step(&mut self, command: Option<Command>, ready: bool) -> Option<Fired> {
        let c = self.cycle();
        let s = &mut self.sim;
        // Idle fields carry garbage on purpose: only `valid` may matter.
        let (qpn, arm, kind, code) = match command {
            Some(Command::Arm { qpn, kind, code }) => (qpn, true, kind, code),
            Some(Command::Stop { qpn }) => (qpn, false, c & 1 == 1, (c % 32) as u8),
            None => ((c * 7 % u64::from(QPS)) as u32, true, false, 1),
        };
        s.set_bit(Rtl::COMMAND_VALID, command.is_some());
        s.set_u64(Rtl::COMMAND_QPN, u64::from(qpn));
        s.set_bit(Rtl::COMMAND_ARM, arm);
        s.set_bit(Rtl::COMMAND_KIND, kind);
        s.set_u64(Rtl::COMMAND_CODE, u64::from(code));
        s.set_bit(Rtl::EXPIRY_READY, ready);
        s.eval();
        assert!(
            s.get_bit(Rtl::COMMAND_READY),
            "cycle {c}: command not ready"
        );
        assert_eq!(s.get_u64(Rtl::NOW), time_at(c), "cycle {c}: time base");
        let expiry = s.get_bit(Rtl::EXPIRY_VALID).then(|| {
            (
                s.get_u64(Rtl::EXPIRY_QPN) as u32,
                s.get_bit(Rtl::EXPIRY_KIND),
            )
        });
        if let Some(cmd) = command {
            self.stats.commands += 1;
            self.stats.back_to_back += u64::from(self.last_command);
            let running = self.model.timer(cmd.qpn());
            if running.is_some_and(|t| t.due_cycle() <= c) {
                self.stats.raced += 1;
            }
            match cmd {
                Command::Arm { kind, code, .. } => {
                    self.stats.arms += 1;
                    if let Some(units) = duration_units(kind, code) {
                        let deadline = QpTimersModel::unwrapped_time(c) + 1 + units;
                        if deadline >> TIME_BITS > QpTimersModel::unwrapped_time(c) >> TIME_BITS {
                            self.stats.wrapping += 1;
                        }
                    }
                }
                Command::Stop { .. } => self.stats.stops += 1,
            }
        }
        self.last_command = command.is_some();
        self.stats.held_cycles += u64::from(expiry.is_some() && !ready);
        let fired = self
            .model
            .cycle_with(command, expiry, ready)
            .unwrap_or_else(|e| panic!("{e}"));
        if let Err(e) = self.model.check_overdue() {
            panic!("{e}");
        }
        if let Some(f) = fired {
            self.check_real_time(&f);
            self.stats.fired += 1;
            let late = f.presented - f.timer.due_cycle();
            self.stats.max_late = self.stats.max_late.max(late);
        }
        self.sim.tick();
        fired
    }

    /// The firing against the reference model's duration in real time.
    fn check_real_time(&self, f: &Fired) {
        let t = f.timer;
        let ns = model_ns(t.kind, t.code).expect("an infinite timer never fires");
        let expires = t.armed_in * CLOCK_NS + ns;
        // Decided in the cycle before it was presented.
        let decided = (f.presented - 1) * CLOCK_NS;
        assert!(decided >= expires, "fired early in real time: {f:?}");
        let due = t.due_cycle() * CLOCK_NS;
        let slack = if t.kind == KIND_ACK_TIMEOUT {
            UNIT_NS
        } else {
            2 * UNIT_NS
        };
        assert!(
            due > expires && due <= expires + slack,
            "deadline unit not within {slack} ns after the duration: {f:?}"
        );
    }
}

/// A random arm: mostly codes that expire within the run, some medium,
/// some of every code (most never expire; many wrap the time base).
fn random_arm(rng: &mut ChaCha8Rng, qpn: u32) -> Command {
    let kind = rng.gen();
    let code = match rng.gen_range(0..20) {
        0..=1 => rng.gen_range(0..32),
        2..=4 => {
            if kind == KIND_RNR_WAIT {
                rng.gen_range(5..12)
            } else {
                rng.gen_range(4..7)
            }
        }
        _ => {
            if kind == KIND_RNR_WAIT {
                rng.gen_range(1..5)
            } else {
                rng.gen_range(1..4)
            }
        }
    };
    Command::Arm { qpn, kind, code }
}

/// `cycles` of random traffic from `seed` (see the module doc).
fn run(seed: u64, cycles: u64) -> Stats {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Bench::new();
    // Command phases: quiet, bursts at one per cycle over all QPs, races
    // against timers due now; backpressure phases independent of them.
    let mut phase = 0u8;
    let mut phase_left = 0u64;
    let mut ready_mode = 0u8;
    let mut ready_left = 0u64;
    while b.cycle() < cycles {
        if phase_left == 0 {
            phase = rng.gen_range(0..4);
            phase_left = match phase {
                1 => rng.gen_range(100..2000),
                _ => rng.gen_range(500..8000),
            };
        }
        phase_left -= 1;
        if ready_left == 0 {
            ready_mode = rng.gen_range(0..5);
            ready_left = match ready_mode {
                4 => rng.gen_range(100..6000),
                _ => rng.gen_range(1000..20000),
            };
        }
        ready_left -= 1;
        let ready = match ready_mode {
            0 | 1 => true,
            2 => rng.gen_bool(0.5),
            3 => rng.gen_bool(0.05),
            _ => false,
        };
        let c = b.cycle();
        let command = match phase {
            // Quiet: a command every 50 cycles or so.
            0 => rng.gen_bool(0.02).then(|| {
                let qpn = rng.gen_range(0..QPS);
                if rng.gen_bool(0.15) {
                    Command::Stop { qpn }
                } else {
                    random_arm(&mut rng, qpn)
                }
            }),
            // Burst: one arm per cycle.
            1 => {
                let qpn = rng.gen_range(0..QPS);
                Some(random_arm(&mut rng, qpn))
            }
            // Races: re-arm or stop a timer that is due now (or within a
            // few cycles) and has not fired yet.
            2 => {
                let due: Vec<u32> = b
                    .model
                    .earliest_due(16)
                    .into_iter()
                    .filter(|&(d, _)| d <= c + 4)
                    .map(|(_, q)| q)
                    .collect();
                (!due.is_empty() && rng.gen_bool(0.3)).then(|| {
                    let qpn = due[rng.gen_range(0..due.len())];
                    if rng.gen_bool(0.3) {
                        Command::Stop { qpn }
                    } else {
                        random_arm(&mut rng, qpn)
                    }
                })
            }
            _ => rng.gen_bool(0.05).then(|| {
                let qpn = rng.gen_range(0..QPS);
                random_arm(&mut rng, qpn)
            }),
        };
        b.step(command, ready);
    }
    // Drain: everything due by now fires once backpressure ends.
    let end = b.cycle() + 2 * u64::from(QPS) + 2 * UNIT_CYCLES;
    while b.cycle() < end {
        b.step(None, true);
    }
    b.stats
}

#[test]
fn random_traffic_fires_every_timer_once_on_time() {
    for seed in [1u64, 2, 3] {
        // A failure inside the run panics with the cycle; this names the seed.
        eprintln!("seed {seed}: 1M cycles");
        let s = run(seed, 1_000_000);
        eprintln!("seed {seed}: {s:?}");
        assert!(s.fired > 15_000, "seed {seed}: {s:?}");
        assert!(s.raced > 8_000, "seed {seed}: {s:?}");
        assert!(s.wrapping > 1_000, "seed {seed}: {s:?}");
        assert!(s.held_cycles > 80_000, "seed {seed}: {s:?}");
        assert!(s.back_to_back > 40_000, "seed {seed}: {s:?}");
    }
}

/// The block's duration table is the reference model's durations rounded
/// up to whole units.
#[test]
fn duration_table_is_the_model_rounded_up_to_units() {
    for kind in [KIND_ACK_TIMEOUT, KIND_RNR_WAIT] {
        for code in 0..32u8 {
            assert_eq!(
                duration_units(kind, code),
                model_ns(kind, code).map(|ns| ns.div_ceil(UNIT_NS)),
                "kind {kind} code {code}"
            );
        }
    }
}

/// Every QP armed in 1024 consecutive cycles (one command per cycle) with
/// one code, so all come due within two units and fire in one scan with
/// no backpressure: each firing costs the scan a cycle, and the last comes
/// within the bound, 2^A + expiries after due.
#[test]
fn all_qps_due_together_fire_in_one_scan() {
    let mut b = Bench::new();
    for kind in [KIND_ACK_TIMEOUT, KIND_RNR_WAIT] {
        let first = b.cycle();
        for qpn in 0..QPS {
            b.step(Some(Command::Arm { qpn, kind, code: 2 }), true);
        }
        let mut fired = Vec::new();
        while fired.len() < QPS as usize {
            assert!(
                b.cycle() < first + 20 * UNIT_CYCLES,
                "{} fired",
                fired.len()
            );
            if let Some(f) = b.step(None, true) {
                fired.push(f);
            }
        }
        let mut qpns: Vec<u32> = fired.iter().map(|f| f.qpn).collect();
        qpns.sort_unstable();
        assert_eq!(qpns, (0..QPS).collect::<Vec<_>>());
        let late = fired
            .iter()
            .map(|f| f.presented - f.timer.due_cycle())
            .max()
            .unwrap();
        eprintln!("kind {kind}: 1024 due together, latest {late} cycles after due");
        assert!(late <= 2 * u64::from(QPS), "{late}");
        for _ in 0..3 * QPS {
            assert!(b.step(None, true).is_none(), "fired twice");
        }
    }
}

/// Around the wrap of the time base (unit 2^34 - 1 to 0, 131072 cycles
/// after configuration): timers armed before it whose deadlines lie after
/// it fire on time, not at once (a plain unsigned compare would), and the
/// longest timers (ACK code 31, 2.4 h; RNR code 0, 655 ms) never fire.
#[test]
fn deadlines_across_the_wrap_of_the_time_base() {
    let mut b = Bench::new();
    let wrap = ((1u64 << TIME_BITS) - TIME_ORIGIN) * UNIT_CYCLES;
    assert_eq!(wrap, 131_072);
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let (mut armed_short, mut armed_long) = (0, 0);
    while b.cycle() < wrap + 40 * UNIT_CYCLES {
        let c = b.cycle();
        // Arms in the 60 units before the wrap, each QP once.
        let window = wrap - 60 * UNIT_CYCLES..wrap;
        let command = (window.contains(&c) && c.is_multiple_of(32)).then(|| {
            let qpn = ((c / 32) % u64::from(QPS)) as u32;
            match qpn % 4 {
                0 | 1 => {
                    armed_long += 1;
                    Command::Arm {
                        qpn,
                        kind: qpn % 4 == 1,
                        // ACK code 31 (2.4 h) or RNR code 0 (655 ms).
                        code: if qpn.is_multiple_of(4) { 31 } else { 0 },
                    }
                }
                _ => {
                    armed_short += 1;
                    Command::Arm {
                        qpn,
                        kind: rng.gen(),
                        code: rng.gen_range(1..4),
                    }
                }
            }
        });
        if let Some(f) = b.step(command, true) {
            assert!(f.qpn % 4 >= 2, "a long timer fired: {f:?}");
        }
    }
    // Every short timer fired (the model fails on any overdue one), the
    // long ones all still run.
    assert_eq!(b.stats.fired, armed_short, "{:?}", b.stats);
    assert_eq!(b.model.running() as u64, armed_long);
    assert!(armed_long >= 480 && b.stats.wrapping > 500, "{:?}", b.stats);
}

/// A command for a QP in each cycle around the decision on its first due
/// read (the scanner reads QP q in cycles q mod 1024 while nothing fires,
/// so QP 510, due in cycle 2560, is read in 2558 and decided in 2560): up
/// to the decision cycle the command wins and the old deadline never
/// fires; after it, the old expiry (presented in 2561) came first.
#[test]
fn commands_racing_the_scanner_win() {
    let qpn = 510;
    let arm = Command::Arm {
        qpn,
        kind: KIND_ACK_TIMEOUT,
        code: 1,
    };
    let due = 5 * UNIT_CYCLES;
    for offset in -4i64..=4 {
        for stop in [false, true] {
            let mut b = Bench::new();
            let at = (due as i64 + offset) as u64;
            let mut fired = Vec::new();
            while b.cycle() < at + 7 * UNIT_CYCLES {
                let command = match b.cycle() {
                    0 => Some(arm),
                    c if c == at && stop => Some(Command::Stop { qpn }),
                    c if c == at => Some(arm),
                    _ => None,
                };
                if let Some(f) = b.step(command, true) {
                    fired.push((f.presented, f.timer.armed_in));
                }
            }
            let new = fired.last().map_or(0, |f| f.0);
            let old = (due + 1, 0);
            let expect = match (offset <= 0, stop) {
                (true, true) => vec![],
                (true, false) => vec![(new, at)],
                (false, true) => vec![old],
                (false, false) => vec![old, (new, at)],
            };
            assert_eq!(
                fired, expect,
                "command {offset} cycles from due, stop {stop}"
            );
        }
    }
}
