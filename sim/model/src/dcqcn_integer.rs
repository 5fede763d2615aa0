//! DCQCN in integers: the per-QP state and the event functions of the RTL
//! blocks `congestion::dcqcn_reaction_point` ([`react`]) and
//! `congestion::dcqcn_notification_point` ([`notify`]), with their widths
//! and their rounding, so the RTL can be checked against them bit for
//! bit. [`crate::dcqcn`] is the same algorithm in floating point on
//! explicit deadlines; `tracks_the_floating_point_reaction_point` and
//! `tracks_the_floating_point_notification_point` below hold the two
//! together.
//!
//! # Units and widths
//!
//! - Rates: 32-bit kb/s (100 Gb/s is 100,000,000; the largest is 4.29
//!   Tb/s). Sums saturate at `u32::MAX`.
//! - Alpha: Q1.15 in 16 bits, 1.0 = [`ALPHA_ONE`] = 32768. `g` is in
//!   the same units (1/256 = 128).
//! - Time: a 32-bit time base that wraps, in whatever unit the periods are
//!   given in (the block's user ties it to a clock). An instant `t` is due
//!   at `now` when `now - t`, modulo 2^32, is below 2^31: deadlines are
//!   compared correctly while they lie within 2^31 units of `now`.
//! - Stage counters: 8 bits, saturating.
//! - Bytes: 32 bits, saturating.
//!
//! # Events (one per QP per call, as the block takes one per cycle)
//!
//! - [`RpEvent::Reset`]: the QP's record to zero (a QP created): idle at
//!   line rate, alpha not yet started.
//! - [`RpEvent::Cnp`]: a CNP for this QP at `now`. Ignored (`held`) within
//!   `monitor_period` of the last cut (NVIDIA's
//!   `rate_reduce_monitor_period`: at most one cut per period; 0 cuts on
//!   every CNP). Otherwise: Rt = Rc, alpha = alpha (1 - g) + g (from
//!   `initial_alpha` before the first CNP), Rc = Rc - Rc alpha / 2^gd,
//!   at least Rc `min_dec_fac` / 2^16 and `min_rate`, at most the line
//!   rate; stages and byte count to 0, both timers armed a period ahead.
//! - [`RpEvent::Sent`]: `bytes` left on this QP. While recovering, the byte
//!   counter adds them; at `byte_reset` it fires once (the remainder
//!   carries): the byte stage up by one, one increase.
//! - [`RpEvent::Tick`]: a look at the QP's timers at `now` (a scanner
//!   visits every QP whose [`RpOutcome::scan`] is set). An alpha deadline
//!   due: alpha = alpha (1 - g), the deadline one period on; and,
//!   independently, a rate deadline due while recovering: the time stage
//!   up by one, one increase, the deadline one period on. At most one of
//!   each per tick: a QP visited late catches up over the following
//!   ticks, and deadlines advance by whole periods, so lateness never
//!   accumulates.
//!
//! One increase: with `hi` / `lo` the larger / smaller stage and `F` =
//! `threshold`: fast recovery while `hi < F`, additive (Rt += `ai_rate`)
//! while `lo < F`, else hyper (Rt += (lo - F + 1) `hai_rate`); then Rc =
//! (Rt + Rc) / 2 rounded down, at most the line rate. Rc back at the line
//! rate ends the recovery (the QP is idle: no rate timer, no byte
//! counter). The alpha timer runs on while alpha is above 0 and stops
//! once alpha has decayed to 0 with the QP idle: a QP costs the scanner
//! nothing once both are done.
//!
//! Multiplications are 16 x 16 bits, as the RTL builds them.
//!
//! # The notification point
//!
//! A receiving QP's record is the time of its last CNP and whether it has
//! sent one. [`NpEvent::Ce`], a CE-marked packet for the QP at `now`,
//! asks for a CNP to the QP's peer unless the last was sent less than
//! `interval` time units before (`now - last`, modulo 2^32: after 2^32
//! units of silence a CE-marked packet may be held for at most `interval`
//! units, once); [`NpEvent::Reset`] zeroes the record (a QP created).

use serde::Serialize;

/// Alpha = 1.0 in Q1.15.
pub const ALPHA_ONE: u16 = 1 << 15;

/// The reaction point's registers (NVIDIA's names in parentheses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RpParams {
    pub enabled: bool,
    /// Rc at rest, kb/s.
    pub line_rate: u32,
    /// The rate floor, kb/s (`rpg_min_rate`).
    pub min_rate: u32,
    /// Additive increase, kb/s (`rpg_ai_rate`).
    pub ai_rate: u32,
    /// Hyper increase step, kb/s (`rpg_hai_rate`).
    pub hai_rate: u32,
    /// Alpha gain g in Q1.15, at most [`ALPHA_ONE`] (`dce_tcp_g`).
    pub g: u16,
    /// log2 of the cut's divisor: Rc -= Rc alpha / 2^gd; the paper's is 1
    /// (`rpg_gd`), at most 15.
    pub gd: u8,
    /// The cut's floor as a fraction of Rc, Q0.16 (`rpg_min_dec_fac`, a
    /// percentage there; 0 leaves only `min_rate`).
    pub min_dec_fac: u16,
    /// Alpha before the first CNP, Q1.15 (`initial_alpha_value`).
    pub initial_alpha: u16,
    /// Alpha decay period K, time units (`dce_tcp_rtt`); 0 stops alpha's
    /// timer.
    pub alpha_period: u32,
    /// Rate increase timer T, time units (`rpg_time_reset`); 0 disables it.
    pub rate_period: u32,
    /// Byte counter B (`rpg_byte_reset`); 0 disables it.
    pub byte_reset: u32,
    /// Fast recovery steps F (`rpg_threshold`).
    pub threshold: u8,
    /// At most one cut per this many time units
    /// (`rate_reduce_monitor_period`); 0 cuts on every CNP.
    pub monitor_period: u32,
}

impl RpParams {
    /// [`crate::dcqcn::DcqcnConfig::rocenic`] with time in ns: 100 Gb/s,
    /// g = 5/1024 (160) every 2 us from 1023/1024, cuts of alpha / 2 but
    /// at most half and at most one per 15 us, T = 30 us, no byte counter,
    /// F = 1, R_AI = R_HAI = 0.5 Gb/s, a 1 Mb/s floor.
    pub fn rocenic() -> RpParams {
        RpParams {
            enabled: true,
            line_rate: 100_000_000,
            min_rate: 1_000,
            ai_rate: 500_000,
            hai_rate: 500_000,
            g: 160,
            gd: 1,
            min_dec_fac: 1 << 15,
            initial_alpha: ALPHA_ONE - 32,
            alpha_period: 2_000,
            rate_period: 30_000,
            byte_reset: 0,
            threshold: 1,
            monitor_period: 15_000,
        }
    }

    /// `cfg` in the block's units for a NIC whose line runs at
    /// `line_rate_bps`, on a time base of `ns_per_unit` ns (rates to kb/s,
    /// fractions to Q1.15 / Q0.16 rounded to nearest, periods to whole
    /// units rounded up, the cut alpha / 2). `enabled` is `cfg.reacts()`.
    /// Refused: a set that keeps Rt across a run of cuts (`clamp_target`
    /// false: the block sets Rt = Rc on every cut) and values beyond the
    /// block's widths.
    pub fn for_nic(
        cfg: &crate::dcqcn::DcqcnConfig,
        line_rate_bps: f64,
        ns_per_unit: u64,
    ) -> Result<RpParams, String> {
        if !cfg.clamp_target {
            return Err("the RTL reaction point sets Rt = Rc on every cut (clamp_target)".into());
        }
        let kbps = |bps: f64, what: &str| -> Result<u32, String> {
            let k = (bps / 1e3).round();
            if (0.0..=f64::from(u32::MAX)).contains(&k) {
                Ok(k as u32)
            } else {
                Err(format!("{what} {bps} b/s is beyond 32 bits of kb/s"))
            }
        };
        let units = |ns: u64, what: &str| -> Result<u32, String> {
            u32::try_from(ns.div_ceil(ns_per_unit.max(1)))
                .ok()
                .filter(|&u| u < 1 << 31)
                .ok_or(format!("{what} {ns} ns is beyond the 31-bit time base"))
        };
        let q = |x: f64, one: f64| (x.clamp(0.0, 1.0) * one).round();
        Ok(RpParams {
            enabled: cfg.reacts(),
            line_rate: kbps(line_rate_bps, "the line rate")?,
            min_rate: kbps(cfg.min_rate_bps, "rpg_min_rate")?,
            ai_rate: kbps(cfg.ai_rate_bps, "rpg_ai_rate")?,
            hai_rate: kbps(cfg.hai_rate_bps, "rpg_hai_rate")?,
            g: q(cfg.g, f64::from(ALPHA_ONE)) as u16,
            gd: u8::try_from(cfg.gd)
                .ok()
                .filter(|&gd| gd <= 15)
                .ok_or(format!("rpg_gd's shift {} is beyond 15", cfg.gd))?,
            min_dec_fac: q(cfg.min_dec_fac, 65536.0).min(65535.0) as u16,
            initial_alpha: q(cfg.initial_alpha, f64::from(ALPHA_ONE)) as u16,
            alpha_period: units(cfg.alpha_update_ns, "dce_tcp_rtt")?,
            rate_period: units(cfg.rate_increase_ns, "rpg_time_reset")?,
            byte_reset: u32::try_from(cfg.byte_counter)
                .map_err(|_| format!("rpg_byte_reset {} is beyond 32 bits", cfg.byte_counter))?,
            threshold: u8::try_from(cfg.fast_recovery_steps).map_err(|_| {
                format!("rpg_threshold {} is beyond 8 bits", cfg.fast_recovery_steps)
            })?,
            monitor_period: units(cfg.monitor_period_ns, "rate_reduce_monitor_period")?,
        })
    }

    /// The paper's parameters (those of [`crate::dcqcn::DcqcnConfig`]'s
    /// default) with time in ns: 100 Gb/s, g = 1/256, K = T = 55 us,
    /// B = 10 MB, F = 5, R_AI = 40 Mb/s, R_HAI = 200 Mb/s, a 100 Mb/s
    /// floor, Gd = 2, no monitor period.
    pub fn paper() -> RpParams {
        RpParams {
            enabled: true,
            line_rate: 100_000_000,
            min_rate: 100_000,
            ai_rate: 40_000,
            hai_rate: 200_000,
            g: 128,
            gd: 1,
            min_dec_fac: 0,
            initial_alpha: ALPHA_ONE,
            alpha_period: 55_000,
            rate_period: 55_000,
            byte_reset: 10_000_000,
            threshold: 5,
            monitor_period: 0,
        }
    }
}

/// One QP's reaction-point state: the block's RAM word, field by field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RpRecord {
    /// Rc, kb/s (meaningful while `rate_active`; the line rate otherwise).
    pub rate: u32,
    /// Rt, kb/s.
    pub target: u32,
    pub alpha: u16,
    pub time_stage: u8,
    pub byte_stage: u8,
    /// Bytes since the byte counter last fired (or the last cut).
    pub bytes: u32,
    pub alpha_due: u32,
    pub rate_due: u32,
    pub last_cut: u32,
    /// Recovering from a cut: the rate timer and byte counter run.
    pub rate_active: bool,
    /// Alpha's timer runs.
    pub alpha_active: bool,
    /// A CNP was taken since the QP was reset: `alpha` and `last_cut`
    /// hold.
    pub started: bool,
}

/// What one event does to a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RpEvent {
    Reset,
    Cnp { now: u32 },
    Sent { bytes: u16 },
    Tick { now: u32 },
}

/// The increase an event made, as the block reports it (`phase` port).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Increase {
    None = 0,
    FastRecovery = 1,
    Additive = 2,
    Hyper = 3,
}

impl Increase {
    /// The increase a 2-bit `phase` code reports (its low two bits).
    pub fn from_code(code: u64) -> Increase {
        match code & 3 {
            0 => Increase::None,
            1 => Increase::FastRecovery,
            2 => Increase::Additive,
            _ => Increase::Hyper,
        }
    }
}

/// The block's output for one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RpOutcome {
    /// The QP's record after the event.
    pub record: RpRecord,
    /// The rate to pace the QP at: Rc, or the line rate when idle.
    pub rate: u32,
    /// The QP needs the scanner's ticks (a timer runs).
    pub scan: bool,
    /// A CNP cut the rate.
    pub cut: bool,
    /// A CNP fell within the monitor period and was ignored.
    pub held: bool,
    pub increase: Increase,
}

/// `now` has reached `t` on the wrapping time base.
pub fn is_due(now: u32, t: u32) -> bool {
    now.wrapping_sub(t) < 1 << 31
}

/// `a * b` for a 32-bit `a` and 16-bit `b`, as two 16 x 16 products.
fn mul_32x16(a: u32, b: u16) -> u64 {
    let lo = (a & 0xFFFF) * u32::from(b);
    let hi = (a >> 16) * u32::from(b);
    (u64::from(hi) << 16) + u64::from(lo)
}

/// Alpha times (1 - g), rounded down.
fn decayed(alpha: u16, g: u16) -> u16 {
    let keep = ALPHA_ONE.saturating_sub(g);
    ((u32::from(alpha) * u32::from(keep)) >> 15) as u16
}

/// The event on a QP whose record is `record`.
pub fn react(p: &RpParams, record: &RpRecord, event: RpEvent) -> RpOutcome {
    let mut r = *record;
    let (mut cut, mut held, mut increase) = (false, false, Increase::None);
    match event {
        RpEvent::Reset => r = RpRecord::default(),
        _ if !p.enabled => {}
        RpEvent::Cnp { now } => {
            if r.started && now.wrapping_sub(r.last_cut) < p.monitor_period {
                held = true;
            } else {
                cut = true;
                let rc = if r.rate_active { r.rate } else { p.line_rate };
                let before = if r.started { r.alpha } else { p.initial_alpha };
                let raised = u32::from(decayed(before, p.g)) + u32::from(p.g);
                let alpha = raised.min(u32::from(ALPHA_ONE)) as u16;
                let cut_by = (mul_32x16(rc, alpha) >> (15 + u32::from(p.gd.min(15)))) as u32;
                let floor = (mul_32x16(rc, p.min_dec_fac) >> 16) as u32;
                r.target = rc;
                r.rate = (rc - cut_by).max(floor).max(p.min_rate).min(p.line_rate);
                r.alpha = alpha;
                r.time_stage = 0;
                r.byte_stage = 0;
                r.bytes = 0;
                r.alpha_due = now.wrapping_add(p.alpha_period);
                r.rate_due = now.wrapping_add(p.rate_period);
                r.last_cut = now;
                r.rate_active = true;
                r.alpha_active = p.alpha_period != 0;
                r.started = true;
            }
        }
        RpEvent::Sent { bytes } => {
            if r.rate_active && p.byte_reset != 0 {
                r.bytes = r.bytes.saturating_add(u32::from(bytes));
                if r.bytes >= p.byte_reset {
                    r.bytes -= p.byte_reset;
                    r.byte_stage = r.byte_stage.saturating_add(1);
                    increase = increase_rate(p, &mut r);
                }
            }
        }
        RpEvent::Tick { now } => {
            if r.alpha_active && is_due(now, r.alpha_due) {
                r.alpha = decayed(r.alpha, p.g);
                r.alpha_due = r.alpha_due.wrapping_add(p.alpha_period);
                r.alpha_active = r.alpha != 0 || r.rate_active;
            }
            if r.rate_active && p.rate_period != 0 && is_due(now, r.rate_due) {
                r.rate_due = r.rate_due.wrapping_add(p.rate_period);
                r.time_stage = r.time_stage.saturating_add(1);
                increase = increase_rate(p, &mut r);
            }
        }
    }
    RpOutcome {
        record: r,
        rate: if r.rate_active { r.rate } else { p.line_rate },
        scan: r.rate_active || r.alpha_active,
        cut,
        held,
        increase,
    }
}

/// One rate increase (its stage already counted).
fn increase_rate(p: &RpParams, r: &mut RpRecord) -> Increase {
    let hi = r.time_stage.max(r.byte_stage);
    let lo = r.time_stage.min(r.byte_stage);
    let phase = if hi < p.threshold {
        Increase::FastRecovery
    } else if lo < p.threshold {
        r.target = r.target.saturating_add(p.ai_rate);
        Increase::Additive
    } else {
        let steps = u16::from(lo - p.threshold) + 1;
        let add = mul_32x16(p.hai_rate, steps).min(u64::from(u32::MAX)) as u32;
        r.target = r.target.saturating_add(add);
        Increase::Hyper
    };
    r.rate = (((u64::from(r.target) + u64::from(r.rate)) >> 1) as u32).min(p.line_rate);
    if r.rate >= p.line_rate {
        r.rate_active = false;
        r.bytes = 0;
    }
    phase
}

/// The notification point's registers (NVIDIA's names in parentheses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NpParams {
    pub enabled: bool,
    /// Least time between two CNPs of one QP, time units
    /// (`min_time_between_cnps`); 0 answers every CE-marked packet.
    pub interval: u32,
}

impl NpParams {
    /// The notification point of `cfg` counting in units of
    /// `ns_per_unit`: the model's `now >= last + interval_ns` on that
    /// grid.
    pub fn for_nic(cfg: &crate::dcqcn::DcqcnConfig, ns_per_unit: u64) -> NpParams {
        let interval = cfg.cnp_interval_ns.div_ceil(ns_per_unit.max(1));
        NpParams {
            enabled: cfg.notifies(),
            interval: interval.min(u64::from(u32::MAX)) as u32,
        }
    }
}

/// One receiving QP's notification state, as the RTL stores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NpRecord {
    /// When the last CNP was sent.
    pub last_cnp: u32,
    /// A CNP was sent since the QP was reset.
    pub sent: bool,
}

/// An event at the notification point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum NpEvent {
    Reset,
    Ce { now: u32 },
}

/// The notification point's output for one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NpOutcome {
    pub record: NpRecord,
    /// Send a CNP to the QP's peer.
    pub cnp: bool,
}

/// The event on a receiving QP whose record is `record`.
pub fn notify(p: &NpParams, record: &NpRecord, event: NpEvent) -> NpOutcome {
    match event {
        NpEvent::Reset => NpOutcome {
            record: NpRecord::default(),
            cnp: false,
        },
        NpEvent::Ce { now } => {
            let cnp =
                p.enabled && (!record.sent || now.wrapping_sub(record.last_cnp) >= p.interval);
            NpOutcome {
                record: if cnp {
                    NpRecord {
                        last_cnp: now,
                        sent: true,
                    }
                } else {
                    *record
                },
                cnp,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_sets_convert_to_the_blocks_units() {
        use crate::dcqcn::DcqcnConfig;
        let rocenic = RpParams::for_nic(&DcqcnConfig::rocenic(), 100e9, 1).unwrap();
        assert_eq!(rocenic, RpParams::rocenic());
        let cycles = RpParams::for_nic(&DcqcnConfig::rocenic(), 25e9, 4).unwrap();
        assert_eq!(
            (
                cycles.line_rate,
                cycles.alpha_period,
                cycles.rate_period,
                cycles.monitor_period
            ),
            (25_000_000, 500, 7_500, 3_750)
        );
        let paper = RpParams::for_nic(&DcqcnConfig::paper(), 100e9, 1).unwrap();
        assert_eq!(
            (paper.g, paper.byte_reset, paper.ai_rate),
            (128, 10_000_000, 40_000)
        );
        assert!(RpParams::for_nic(&DcqcnConfig::nvidia(), 100e9, 1).is_err());
    }
    use crate::dcqcn::{DcqcnConfig, NotificationPoint, ReactionPoint};

    fn cnp(now: u32) -> RpEvent {
        RpEvent::Cnp { now }
    }

    fn tick(now: u32) -> RpEvent {
        RpEvent::Tick { now }
    }

    /// The events in order on one QP; the outcomes.
    fn run(p: &RpParams, events: &[RpEvent]) -> Vec<RpOutcome> {
        let mut record = RpRecord::default();
        events
            .iter()
            .map(|&e| {
                let o = react(p, &record, e);
                record = o.record;
                o
            })
            .collect()
    }

    #[test]
    fn a_reset_qp_is_idle_at_line_rate_and_needs_no_scan() {
        let p = RpParams::paper();
        for e in [RpEvent::Reset, RpEvent::Sent { bytes: 65535 }, tick(99)] {
            let o = react(&p, &RpRecord::default(), e);
            assert_eq!((o.rate, o.scan, o.cut), (p.line_rate, false, false));
            assert_eq!(o.record, RpRecord::default());
        }
    }

    #[test]
    fn the_first_cnp_halves_the_rate_exactly() {
        let p = RpParams::paper();
        let o = run(&p, &[cnp(1000)])[0];
        // alpha = 1 (1 - g) + g = 1 exactly in Q1.15; Rc = Rc / 2.
        assert_eq!(o.record.alpha, ALPHA_ONE);
        assert_eq!((o.rate, o.record.target), (50_000_000, 100_000_000));
        assert_eq!((o.record.alpha_due, o.record.rate_due), (56_000, 56_000));
        assert!(o.cut && o.scan && o.record.rate_active);
    }

    #[test]
    fn fast_recovery_then_additive_back_to_line_rate() {
        let p = RpParams::paper();
        let mut events = vec![cnp(0)];
        events.extend((1..=40).map(|k| tick(k * 55_000)));
        let out = run(&p, &events);
        let rates: Vec<u32> = out[1..5].iter().map(|o| o.rate).collect();
        assert_eq!(rates, [75_000_000, 87_500_000, 93_750_000, 96_875_000]);
        assert!(out[1..5]
            .iter()
            .all(|o| o.increase == Increase::FastRecovery));
        assert_eq!(out[5].increase, Increase::Additive);
        assert_eq!(out[5].record.target, 100_040_000);
        // Back at line rate after 9 timer steps (as the float model):
        // idle, the rate timer stops, the alpha timer runs on.
        let idle = out.iter().position(|o| !o.record.rate_active).unwrap();
        assert_eq!(idle, 9);
        assert_eq!(out[idle].rate, p.line_rate);
        assert!(out[idle].scan && out[idle].record.alpha_active);
        assert_eq!(out[40].record.time_stage, 9, "no rate step once idle");
    }

    #[test]
    fn alpha_decays_to_zero_then_the_qp_leaves_the_scan() {
        let p = RpParams {
            rate_period: 1,
            ..RpParams::paper()
        };
        let mut record = react(&p, &RpRecord::default(), cnp(0)).record;
        let mut now = 0u32;
        let mut decays = 0;
        while record.alpha_active {
            now = now.wrapping_add(1000);
            let o = react(&p, &record, tick(now));
            if o.record.alpha != record.alpha {
                decays += 1;
                assert!(o.record.alpha < record.alpha);
            }
            record = o.record;
            assert!(decays < 5000, "alpha never reached 0");
        }
        assert_eq!((record.alpha, record.rate_active), (0, false));
        assert!(!react(&p, &record, tick(now)).scan);
        // Q1.15 from 1.0 with g = 1/256: rounding down takes at least 1
        // a step, so about 256 ln(2^15 / 2^8) decays to 256 and 256 more.
        assert!((1200..1600).contains(&decays), "{decays} decays");
    }

    #[test]
    fn the_monitor_period_allows_one_cut_per_period() {
        let p = RpParams {
            monitor_period: 4000,
            ..RpParams::paper()
        };
        let out = run(&p, &[cnp(10), cnp(11), cnp(4009), cnp(4010), cnp(8010)]);
        let cuts: Vec<bool> = out.iter().map(|o| o.cut).collect();
        assert_eq!(cuts, [true, false, false, true, true]);
        assert!(out[1].held && out[2].held);
        assert_eq!(out[2].rate, 50_000_000, "a held CNP changes nothing");
        // Wrapping time: a cut at 2^32 - 10 holds a CNP at 5.
        let w = run(&p, &[cnp(u32::MAX - 9), cnp(5), cnp(3990)]);
        assert_eq!((w[1].held, w[2].cut), (true, true));
    }

    #[test]
    fn cut_floors_and_gd() {
        let p = RpParams {
            min_dec_fac: 0xC000,
            ..RpParams::paper()
        };
        // alpha 1 would halve; the floor keeps 3/4.
        assert_eq!(run(&p, &[cnp(0)])[0].rate, 75_000_000);
        let p = RpParams {
            gd: 3,
            ..RpParams::paper()
        };
        assert_eq!(run(&p, &[cnp(0)])[0].rate, 87_500_000);
        let p = RpParams::paper();
        let out = run(&p, &(0..20).map(cnp).collect::<Vec<_>>());
        assert_eq!(out[19].rate, p.min_rate);
    }

    #[test]
    fn byte_counter_fires_once_per_event_and_carries_the_rest() {
        let p = RpParams {
            byte_reset: 1000,
            ..RpParams::paper()
        };
        let mut events = vec![cnp(0)];
        events.extend([400, 600, 999, 1, 3000, 0].map(|b| RpEvent::Sent { bytes: b }));
        let out = run(&p, &events);
        let stages: Vec<u8> = out.iter().map(|o| o.record.byte_stage).collect();
        assert_eq!(stages, [0, 0, 1, 1, 2, 3, 4]);
        assert_eq!(out[5].record.bytes, 2000, "one firing per event");
        assert_eq!(out[6].record.bytes, 1000);
    }

    #[test]
    fn hyper_increase_grows_with_the_smaller_stage() {
        let p = RpParams {
            byte_reset: 1000,
            threshold: 1,
            ..RpParams::paper()
        };
        let sent = RpEvent::Sent { bytes: 1000 };
        let out = run(&p, &[cnp(0), cnp(0), cnp(0), sent, tick(55_000), sent]);
        assert_eq!(out[3].increase, Increase::Additive);
        assert_eq!(out[4].increase, Increase::Hyper);
        assert_eq!(out[4].record.target, out[3].record.target + 200_000);
        // Stages (1, 2): i = 1 still.
        assert_eq!(out[5].record.target, out[4].record.target + 200_000);
    }

    #[test]
    fn disabled_changes_nothing_but_reset() {
        let p = RpParams {
            enabled: false,
            ..RpParams::paper()
        };
        let o = run(&p, &[cnp(0), tick(1 << 20)]);
        assert_eq!(o[1].record, RpRecord::default());
        assert_eq!(o[1].rate, p.line_rate);
    }

    /// The float model and the integer one, on the paper's parameters in
    /// ns, ticked at every deadline: the same phases in the same order and
    /// rates within 0.01 % (Q1.15 alpha and kb/s rounding).
    #[test]
    fn tracks_the_floating_point_reaction_point() {
        let p = RpParams {
            byte_reset: 64_000,
            ..RpParams::paper()
        };
        let cfg = DcqcnConfig {
            byte_counter: 64_000,
            ..DcqcnConfig::paper()
        };
        track(&p, &cfg, &[0, 24_000, 300_000], 1e-4);
        // rocenic's set: a CNP 10 us after a cut falls in the monitor
        // period, the floor of half holds the first cut, alpha decays
        // every microsecond. Each decay rounds alpha down by up to one
        // Q1.15 step, and the shortfall compounds: after the 270 decays
        // between the cuts at 30 us and 300 us alpha is about 1.5 % low,
        // each cut that much too small, and Rc drifts 0.3 % high over the
        // run (`docs/dcqcn.md`, "Integer alpha").
        track(
            &RpParams::rocenic(),
            &DcqcnConfig::rocenic(),
            &[0, 10_000, 24_000, 30_000, 300_000, 301_000, 330_000],
            5e-3,
        );
    }

    /// The integer and float reaction points on the same events: CNPs at
    /// `cnps`, 1500 B sent every 120 ns (100 Gb/s) otherwise; the integer
    /// QP is ticked before every event, as the float one fires its
    /// deadlines before every call. Rc agrees within `tolerance` (a
    /// fraction) throughout.
    fn track(p: &RpParams, cfg: &DcqcnConfig, cnps: &[u32], tolerance: f64) {
        let mut float = ReactionPoint::new(cfg, 100e9);
        let mut record = RpRecord::default();
        let mut compared = 0;
        let mut now = 0u32;
        while now < 8_000_000 {
            record = react(p, &record, tick(now)).record;
            let event = if cnps.contains(&now) {
                float.on_cnp(cfg, u64::from(now));
                cnp(now)
            } else {
                float.on_sent(cfg, u64::from(now), 1500);
                RpEvent::Sent { bytes: 1500 }
            };
            record = react(p, &record, event).record;
            let rc = if record.rate_active {
                record.rate
            } else {
                p.line_rate
            };
            let want = float.rate_bps() / 1e3;
            assert!(
                (f64::from(rc) - want).abs() <= want * tolerance,
                "at {now} ns: integer {rc} kb/s, float {want}"
            );
            compared += 1;
            now += 120;
        }
        assert!(compared > 20_000);
        assert!(!float.is_active() && !record.rate_active);
    }

    fn ce(now: u32) -> NpEvent {
        NpEvent::Ce { now }
    }

    /// Which of the CE-marked packets at `times` get a CNP.
    fn cnps(p: &NpParams, events: &[NpEvent]) -> Vec<bool> {
        let mut record = NpRecord::default();
        events
            .iter()
            .map(|&e| {
                let out = notify(p, &record, e);
                record = out.record;
                out.cnp
            })
            .collect()
    }

    #[test]
    fn at_most_one_cnp_per_interval_exactly_apart_allowed() {
        let p = NpParams {
            enabled: true,
            interval: 100,
        };
        let events = [ce(5), ce(6), ce(104), ce(105), ce(200), ce(205), ce(306)];
        assert_eq!(
            cnps(&p, &events),
            [true, false, false, true, false, true, true]
        );
        let every = NpParams { interval: 0, ..p };
        assert_eq!(cnps(&every, &[ce(7), ce(7), ce(8)]), [true, true, true]);
    }

    #[test]
    fn the_first_cnp_is_sent_at_any_time_and_a_reset_forgets_the_last() {
        let p = NpParams {
            enabled: true,
            interval: 1000,
        };
        // Time 0 is a time like any other: the first CE is answered.
        assert_eq!(cnps(&p, &[ce(0), ce(1)]), [true, false]);
        assert_eq!(
            cnps(&p, &[ce(50), NpEvent::Reset, ce(60), ce(70)]),
            [true, false, true, false]
        );
    }

    #[test]
    fn the_interval_is_measured_across_the_wrap_of_the_time_base() {
        let p = NpParams {
            enabled: true,
            interval: 100,
        };
        let near = u32::MAX - 10;
        assert_eq!(
            cnps(&p, &[ce(near), ce(near.wrapping_add(99)), ce(89)]),
            [true, false, true]
        );
    }

    #[test]
    fn disabled_sends_nothing_and_keeps_the_record() {
        let p = NpParams {
            enabled: false,
            interval: 0,
        };
        let record = NpRecord {
            last_cnp: 9,
            sent: true,
        };
        let out = notify(&p, &record, ce(500));
        assert_eq!((out.record, out.cnp), (record, false));
        assert_eq!(
            notify(&p, &record, NpEvent::Reset).record,
            NpRecord::default()
        );
    }

    /// The same CE-marked arrivals in ns: the same CNPs as the
    /// floating-point model's notification point.
    #[test]
    fn tracks_the_floating_point_notification_point() {
        let cfg = DcqcnConfig::paper();
        let p = NpParams {
            enabled: true,
            interval: cfg.cnp_interval_ns as u32,
        };
        let mut float = NotificationPoint::new();
        let mut record = NpRecord::default();
        let mut now = 0u32;
        let mut seed = 7u64;
        for _ in 0..100_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            now += (seed >> 33) as u32 % 20_000;
            let want = float.on_ce(&cfg, u64::from(now));
            let out = notify(&p, &record, ce(now));
            record = out.record;
            assert_eq!(out.cnp, want, "at {now} ns");
        }
        assert!(
            float.cnps() > 10_000 && float.cnps() < 50_000,
            "{}",
            float.cnps()
        );
    }
}
