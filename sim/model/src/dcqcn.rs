//! DCQCN (Zhu et al., SIGCOMM 2015): the notification point (receiver side,
//! CE-marked packet -> at most one CNP per interval) and the reaction point
//! (sender side, per-QP rate: cut on CNP, alpha decay, fast recovery,
//! additive and hyper increase driven by a timer and a byte counter).
//!
//! A pure algorithm on explicit time; the NIC owns one [`ReactionPoint`]
//! per sending QP and one [`NotificationPoint`] per receiving QP.
//!
//! Reading of the paper's reaction point, with `bobzhuyb/ns3-rdma`
//! (`qbb-net-device.cc`, the first author's simulator) settling what the
//! paper leaves open:
//!
//! - Stage counters count the timer expiries (`T`) and byte-counter
//!   expiries (`BC`) since the last CNP; the firing counter is incremented
//!   before the increase is chosen.
//! - The three conditions overlap as usually stated ("i < F" with
//!   `i = min(T, BC)` for fast recovery, "max stage F" for additive). As in
//!   ns-3 (`rpr_fast_*` / `rpr_active_select`): fast recovery while
//!   `max(T, BC) < F`; hyper increase once `min(T, BC) >= F`, adding
//!   `i * R_HAI` with `i = min(T, BC) - F + 1` (1 on the first hyper step);
//!   additive increase in between.
//! - Not taken from ns-3, because the paper does not have them:
//!   ns-3 halves T and B in hyper increase (a QCN leftover), divides the
//!   target by 8 when it is 10x the rate, sets the target on a CNP only if
//!   the byte stage is non-zero, and starts alpha at 0.5. Here T and B are
//!   fixed, the target is always the pre-cut rate, and alpha starts at 1.
//! - The byte counter counts bytes sent since the last CNP and fires every
//!   full `B` (the remainder carries over); it only runs after a CNP.
//! - When the alpha timer and the rate timer fall due at the same instant,
//!   alpha decays first (ns-3 schedules it first). Neither affects the
//!   other's result.
//!
//! Idle choice: once an increase brings the rate back to line rate the RP
//! goes idle: no rate timer, no byte counter, no deadlines, so an
//! uncongested sender costs the simulation nothing. Alpha keeps decaying
//! every K in principle (as in ns-3, where its timer never stops); the
//! decays an idle RP missed are applied at the next CNP, so the cut uses
//! exactly the alpha a free-running timer would have left.

use crate::Time;
use serde::Serialize;

/// DCQCN parameters (NVIDIA's names in parentheses). A zero period or byte
/// count disables that timer or counter.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DcqcnConfig {
    pub enabled: bool,
    /// The NIC sends CNPs for the CE-marked packets it receives (NVIDIA's
    /// `roce_np` enable).
    pub notification_point: bool,
    /// The NIC's sending QPs react to the CNPs they receive (rate cuts,
    /// recovery, pacing). Off: the NIC sends CNPs as a notification point
    /// and only counts the ones it receives: the RTL core, whose halves
    /// drop CNPs until its reaction point is joined (its shadow model runs
    /// so).
    pub reaction_point: bool,
    /// Alpha gain (`dce_tcp_g`).
    pub g: f64,
    /// Alpha decay period K (`dce_tcp_rtt`).
    pub alpha_update_ns: Time,
    /// Rate increase timer T (`rpg_time_reset`).
    pub rate_increase_ns: Time,
    /// Byte counter B (`rpg_byte_reset`).
    pub byte_counter: u64,
    /// Fast recovery iterations F (`rpg_threshold`).
    pub fast_recovery_steps: u32,
    /// R_AI (`rpg_ai_rate`).
    pub ai_rate_bps: f64,
    /// R_HAI (`rpg_hai_rate`).
    pub hai_rate_bps: f64,
    /// Rate floor (`rpg_min_rate`).
    pub min_rate_bps: f64,
    /// Minimum spacing of CNPs per flow N (`min_time_between_cnps`).
    pub cnp_interval_ns: Time,
    /// The floor of a cut as a fraction of Rc: a CNP leaves at least
    /// `min_dec_fac` Rc (`rpg_min_dec_fac`, a percentage there; 0: none).
    pub min_dec_fac: f64,
    /// At most one cut per this period; CNPs within it of the last cut are
    /// ignored (`rate_reduce_monitor_period`; 0: every CNP cuts).
    pub monitor_period_ns: Time,
    /// Alpha before the first CNP (`initial_alpha_value`).
    pub initial_alpha: f64,
    /// log2 of the cut's divisor Gd: a cut takes Rc alpha / 2^gd (the
    /// paper's Gd = 2: 1; NVIDIA's `rpg_gd` is `gd + 10`).
    pub gd: u32,
    /// Every cut sets Rt to Rc (the paper; `clamp_tgt_rate`); false: only
    /// the first cut after an increase does, so a run of cuts keeps the
    /// rate the QP had before it as the target to recover to.
    pub clamp_target: bool,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig::rocenic()
    }
}

impl DcqcnConfig {
    /// DCQCN is on and the sending QPs react to CNPs.
    pub fn reacts(&self) -> bool {
        self.enabled && self.reaction_point
    }

    /// DCQCN is on and the NIC sends CNPs.
    pub fn notifies(&self) -> bool {
        self.enabled && self.notification_point
    }

    /// rocenic's set for 100 GbE (`docs/dcqcn.md` has the measurements
    /// behind it): NVIDIA's alpha gain (g = 5/1024, starting at 1023/1024)
    /// every 2 us, cuts of at most half, at most one per 15 us and CNPs at
    /// most every 4 us; recovery by the timer alone, in additive steps
    /// from the first (T = 30 us, F = 1, R_AI = 0.5 Gb/s, no byte counter:
    /// an increase per byte sent favours the fast flows, and fairness
    /// comes from equal additive steps), and Rt clamped to Rc on every
    /// cut, so a recovery aims at the rate the flow had just before its
    /// last cut rather than at line rate.
    pub fn rocenic() -> Self {
        DcqcnConfig {
            enabled: true,
            notification_point: true,
            reaction_point: true,
            g: 5.0 / 1024.0,
            alpha_update_ns: 2_000,
            rate_increase_ns: 30_000,
            byte_counter: 0,
            fast_recovery_steps: 1,
            ai_rate_bps: 0.5e9,
            hai_rate_bps: 0.5e9,
            min_rate_bps: 1e6,
            cnp_interval_ns: 4_000,
            min_dec_fac: 0.5,
            monitor_period_ns: 15_000,
            initial_alpha: 1023.0 / 1024.0,
            gd: 1,
            clamp_target: true,
        }
    }

    /// NVIDIA ConnectX's firmware defaults, as NVIDIA's "DCQCN CC
    /// Parameters" page (DOCA documentation) and `mlxconfig` list them:
    /// `dce_tcp_g` 1019 (alpha keeps 1019/1024: g = 5/1024), `dce_tcp_rtt`
    /// 1 us, `initial_alpha_value` 1023, `rpg_gd` 11 (a cut of alpha / 2),
    /// `rpg_min_dec_fac` 50 %, `rpg_min_rate` 1 Mb/s,
    /// `rate_reduce_monitor_period` 4 us, `clamp_tgt_rate` off,
    /// `rpg_time_reset` 300 us, `rpg_byte_reset` 32,767 (taken as bytes),
    /// `rpg_threshold` 1, `rpg_ai_rate` 5 Mb/s, `rpg_hai_rate` 50 Mb/s, and
    /// at the notification point `min_time_between_cnps` 4 us.
    pub fn nvidia() -> Self {
        DcqcnConfig {
            enabled: true,
            notification_point: true,
            reaction_point: true,
            g: 5.0 / 1024.0,
            alpha_update_ns: 1_000,
            rate_increase_ns: 300_000,
            byte_counter: 32_767,
            fast_recovery_steps: 1,
            ai_rate_bps: 5e6,
            hai_rate_bps: 50e6,
            min_rate_bps: 1e6,
            cnp_interval_ns: 4_000,
            min_dec_fac: 0.5,
            monitor_period_ns: 4_000,
            initial_alpha: 1023.0 / 1024.0,
            gd: 1,
            clamp_target: false,
        }
    }

    /// The commonly cited values: g = 1/256, K = T = 55 us, B = 10 MB,
    /// F = 5, N = 50 us (the paper's), R_AI = 40 Mb/s and R_HAI = 200 Mb/s
    /// (`bobzhuyb/ns3-rdma` `mix/config.txt`), and a 100 Mb/s floor; every
    /// CNP cuts, by alpha / 2 with no floor, and sets Rt to Rc.
    pub fn paper() -> Self {
        DcqcnConfig {
            enabled: true,
            notification_point: true,
            reaction_point: true,
            g: 1.0 / 256.0,
            alpha_update_ns: 55_000,
            rate_increase_ns: 55_000,
            byte_counter: 10_000_000,
            fast_recovery_steps: 5,
            ai_rate_bps: 40e6,
            hai_rate_bps: 200e6,
            min_rate_bps: 100e6,
            cnp_interval_ns: 50_000,
            min_dec_fac: 0.0,
            monitor_period_ns: 0,
            initial_alpha: 1.0,
            gd: 1,
            clamp_target: true,
        }
    }
}

/// The phase the last rate increase was in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IncreasePhase {
    FastRecovery,
    Additive,
    Hyper,
}

/// Sender-side DCQCN state of one QP.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReactionPoint {
    line_rate_bps: f64,
    /// Rc.
    rate_bps: f64,
    /// Rt.
    target_bps: f64,
    alpha: f64,
    time_stage: u32,
    byte_stage: u32,
    /// Bytes sent since the byte counter last fired (or the last CNP).
    bytes: u64,
    /// A CNP arrived and the rate is not yet back at line rate.
    active: bool,
    /// Next alpha decay; kept while idle to replay missed decays.
    alpha_due: Option<Time>,
    /// Next rate-increase timer expiry; only while active.
    rate_due: Option<Time>,
    last_phase: Option<IncreasePhase>,
    /// When the last cut was (for the monitor period).
    last_cut: Option<Time>,
    /// An increase came since the last cut (or none was made yet).
    increased: bool,
    /// Pacing: bits sent and not yet paid for at the rate, as of
    /// `settled_at`. The debt is paid at whatever the rate is while it
    /// lasts, so a rate raised during a long wait shortens it.
    debt_bits: f64,
    settled_at: Time,
    cnps: u64,
    cuts: u64,
}

impl ReactionPoint {
    /// Starts at line rate with alpha at `initial_alpha` and no timer
    /// armed until the first CNP.
    pub fn new(cfg: &DcqcnConfig, line_rate_bps: f64) -> Self {
        ReactionPoint {
            line_rate_bps,
            rate_bps: line_rate_bps,
            target_bps: line_rate_bps,
            alpha: cfg.initial_alpha,
            time_stage: 0,
            byte_stage: 0,
            bytes: 0,
            active: false,
            alpha_due: None,
            rate_due: None,
            last_phase: None,
            last_cut: None,
            increased: true,
            debt_bits: 0.0,
            settled_at: 0,
            cnps: 0,
            cuts: 0,
        }
    }

    /// Current rate Rc.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// Target rate Rt.
    pub fn target_bps(&self) -> f64 {
        self.target_bps
    }

    /// Alpha as of the last call that took a time (idle decays are applied
    /// lazily, see the module notes).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn line_rate_bps(&self) -> f64 {
        self.line_rate_bps
    }

    /// Rate-increase timer expiries since the last CNP.
    pub fn time_stage(&self) -> u32 {
        self.time_stage
    }

    /// Byte-counter expiries since the last CNP.
    pub fn byte_stage(&self) -> u32 {
        self.byte_stage
    }

    /// Recovering from a CNP (timers armed).
    pub fn is_active(&self) -> bool {
        self.active
    }

    pub fn last_phase(&self) -> Option<IncreasePhase> {
        self.last_phase
    }

    /// CNPs taken: cuts and those within a monitor period.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    /// CNPs that cut the rate.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// A CNP for this QP arrived: cut the rate, unless the last cut was
    /// less than the monitor period ago.
    pub fn on_cnp(&mut self, cfg: &DcqcnConfig, now: Time) {
        if !cfg.enabled {
            return;
        }
        // Timers that fell due before this instant act first.
        self.advance(cfg, now);
        self.settle(now);
        self.catch_up_alpha(cfg, now);
        self.cnps += 1;
        if self
            .last_cut
            .is_some_and(|t| now < t.saturating_add(cfg.monitor_period_ns))
        {
            return;
        }
        self.last_cut = Some(now);
        self.cuts += 1;
        if cfg.clamp_target || self.increased {
            self.target_bps = self.rate_bps;
        }
        self.increased = false;
        self.alpha = (1.0 - cfg.g) * self.alpha + cfg.g;
        self.rate_bps = (self.rate_bps * (1.0 - self.alpha / 2f64.powi(cfg.gd as i32)))
            .max(self.rate_bps * cfg.min_dec_fac)
            .max(cfg.min_rate_bps)
            .min(self.line_rate_bps);
        self.time_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
        self.active = true;
        self.last_phase = None;
        self.alpha_due = (cfg.alpha_update_ns > 0).then(|| now + cfg.alpha_update_ns);
        self.rate_due = (cfg.rate_increase_ns > 0).then(|| now + cfg.rate_increase_ns);
    }

    /// `bytes` left on this QP at `now`: the byte-counter stage.
    pub fn on_sent(&mut self, cfg: &DcqcnConfig, now: Time, bytes: u64) {
        if !cfg.enabled {
            return;
        }
        self.advance(cfg, now);
        self.settle(now);
        if !self.active || cfg.byte_counter == 0 {
            return;
        }
        self.bytes = self.bytes.saturating_add(bytes);
        while self.active && self.bytes >= cfg.byte_counter {
            self.bytes -= cfg.byte_counter;
            self.byte_stage = self.byte_stage.saturating_add(1);
            self.increase(cfg);
        }
    }

    /// Pays the pacing debt at the rate up to `now`.
    fn settle(&mut self, now: Time) {
        if now > self.settled_at {
            let paid = self.rate_bps * (now - self.settled_at) as f64 * 1e-9;
            self.debt_bits = (self.debt_bits - paid).max(0.0);
            self.settled_at = now;
        }
    }

    /// Whether the QP may start a frame at `now`: its earlier frames are
    /// paid for at the rate.
    pub fn may_send(&mut self, now: Time) -> bool {
        self.settle(now);
        self.debt_bits <= 0.0
    }

    /// A frame of `bits` on the wire started at `now`.
    pub fn charge(&mut self, now: Time, bits: f64) {
        self.settle(now);
        self.debt_bits += bits;
    }

    /// When the debt will be paid at the current rate; `None` when there
    /// is none.
    pub fn send_at(&self) -> Option<Time> {
        (self.debt_bits > 0.0)
            .then(|| self.settled_at + (self.debt_bits * 1e9 / self.rate_bps).ceil() as Time)
    }

    /// The next alpha or rate-timer expiry; `None` when idle.
    pub fn next_deadline(&self) -> Option<Time> {
        if !self.active {
            return None;
        }
        match (self.alpha_due, self.rate_due) {
            (Some(a), Some(r)) => Some(a.min(r)),
            (a, r) => a.or(r),
        }
    }

    /// Fires every timer due at or before `now`, in time order.
    pub fn advance(&mut self, cfg: &DcqcnConfig, now: Time) {
        if !cfg.enabled {
            return;
        }
        while self.active {
            let alpha_next = self.alpha_due.filter(|&t| t <= now);
            let rate_next = self.rate_due.filter(|&t| t <= now);
            match (alpha_next, rate_next) {
                (Some(a), r) if r.is_none_or(|r| a <= r) => {
                    self.alpha *= 1.0 - cfg.g;
                    self.alpha_due = Some(a + cfg.alpha_update_ns);
                }
                (_, Some(r)) => {
                    self.settle(r);
                    self.rate_due = Some(r + cfg.rate_increase_ns);
                    self.time_stage = self.time_stage.saturating_add(1);
                    self.increase(cfg);
                }
                _ => break,
            }
        }
    }

    /// Applies the alpha decays an idle RP skipped up to `now`.
    fn catch_up_alpha(&mut self, cfg: &DcqcnConfig, now: Time) {
        if self.active || cfg.alpha_update_ns == 0 {
            return;
        }
        let Some(due) = self.alpha_due.filter(|&t| t <= now) else {
            return;
        };
        let n = (now - due) / cfg.alpha_update_ns + 1;
        self.alpha = decay(self.alpha, 1.0 - cfg.g, n);
        self.alpha_due = Some(due + n * cfg.alpha_update_ns);
    }

    /// One rate increase event (timer or byte counter, stage already
    /// counted).
    fn increase(&mut self, cfg: &DcqcnConfig) {
        let f = cfg.fast_recovery_steps;
        let hi = self.time_stage.max(self.byte_stage);
        let lo = self.time_stage.min(self.byte_stage);
        let phase = if hi < f {
            IncreasePhase::FastRecovery
        } else if lo < f {
            self.target_bps += cfg.ai_rate_bps;
            IncreasePhase::Additive
        } else {
            let i = lo - f + 1;
            self.target_bps += f64::from(i) * cfg.hai_rate_bps;
            IncreasePhase::Hyper
        };
        self.last_phase = Some(phase);
        self.increased = true;
        self.rate_bps = ((self.target_bps + self.rate_bps) / 2.0).min(self.line_rate_bps);
        if self.rate_bps >= self.line_rate_bps {
            self.active = false;
            self.rate_due = None;
            self.bytes = 0;
        }
    }
}

/// `alpha * factor^n`: one multiplication per period, as a running timer
/// would do, for short gaps; by squaring for long ones so a long idle
/// spell costs O(log n).
fn decay(alpha: f64, factor: f64, n: u64) -> f64 {
    if n <= 1024 {
        let mut a = alpha;
        for _ in 0..n {
            a *= factor;
        }
        return a;
    }
    let (mut base, mut e, mut acc) = (factor, n, 1.0f64);
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        base *= base;
        e >>= 1;
    }
    alpha * acc
}

/// Receiver-side DCQCN state of one flow (QP).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NotificationPoint {
    last_cnp: Option<Time>,
    ce_seen: u64,
    cnps: u64,
}

impl NotificationPoint {
    pub fn new() -> Self {
        Self::default()
    }

    /// A CE-marked packet of this flow arrived. True: send one CNP now.
    /// CNPs are at least `cnp_interval_ns` apart (exactly N apart is
    /// allowed).
    pub fn on_ce(&mut self, cfg: &DcqcnConfig, now: Time) -> bool {
        if !cfg.enabled {
            return false;
        }
        self.ce_seen += 1;
        let allowed = self
            .last_cnp
            .is_none_or(|t| now >= t.saturating_add(cfg.cnp_interval_ns));
        if allowed {
            self.last_cnp = Some(now);
            self.cnps += 1;
        }
        allowed
    }

    /// CE-marked packets seen.
    pub fn ce_seen(&self) -> u64 {
        self.ce_seen
    }

    /// CNPs requested.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: f64 = 100e9;
    const US: Time = 1000;

    fn cfg() -> DcqcnConfig {
        DcqcnConfig::paper()
    }

    #[test]
    fn the_paper_set_is_the_papers_values() {
        let c = cfg();
        assert!(c.enabled);
        assert_eq!(c.g, 1.0 / 256.0);
        assert_eq!((c.alpha_update_ns, c.rate_increase_ns), (55 * US, 55 * US));
        assert_eq!(c.byte_counter, 10_000_000);
        assert_eq!(c.fast_recovery_steps, 5);
        assert_eq!((c.ai_rate_bps, c.hai_rate_bps), (40e6, 200e6));
        assert_eq!(c.min_rate_bps, 100e6);
        assert_eq!(c.cnp_interval_ns, 50 * US);
    }

    #[test]
    fn starts_idle_at_line_rate() {
        let c = cfg();
        let mut rp = ReactionPoint::new(&c, LINE);
        assert_eq!(
            (rp.rate_bps(), rp.target_bps(), rp.alpha()),
            (LINE, LINE, 1.0)
        );
        assert_eq!(rp.next_deadline(), None);
        // No CNP yet: neither traffic nor time changes anything.
        rp.on_sent(&c, 10, 1 << 40);
        rp.advance(&c, 1_000_000_000);
        assert_eq!(rp.rate_bps(), LINE);
        assert_eq!(rp.byte_stage(), 0);
        assert_eq!(rp.next_deadline(), None);
    }

    #[test]
    fn first_cnp_cuts_by_half_and_arms_both_timers() {
        let c = cfg();
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 1000);
        // alpha = (1 - 1/256) * 1 + 1/256 = 1; Rc = 100G * (1 - 1/2).
        assert_eq!(rp.alpha(), 1.0);
        assert_eq!(rp.target_bps(), LINE);
        assert_eq!(rp.rate_bps(), 50e9);
        assert_eq!(rp.next_deadline(), Some(1000 + 55 * US));
        assert!(rp.is_active());
    }

    #[test]
    fn timer_sequence_fast_recovery_then_additive_to_line_rate() {
        let c = cfg();
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 0);
        // Each T halves the gap to Rt = 100G; alpha decays once per K too.
        let expect_fast = [75e9, 87.5e9, 93.75e9, 96.875e9];
        for (k, want) in expect_fast.iter().enumerate() {
            let t = (k as Time + 1) * 55 * US;
            assert_eq!(rp.next_deadline(), Some(t));
            rp.advance(&c, t);
            assert_eq!(rp.rate_bps(), *want, "after T{}", k + 1);
            assert_eq!(rp.target_bps(), LINE);
            assert_eq!(rp.last_phase(), Some(IncreasePhase::FastRecovery));
            assert_eq!(rp.alpha(), (255.0f64 / 256.0).powi(k as i32 + 1));
        }
        // T5: the timer has completed F: additive increase.
        rp.advance(&c, 5 * 55 * US);
        assert_eq!(rp.last_phase(), Some(IncreasePhase::Additive));
        assert_eq!(rp.target_bps(), LINE + 40e6);
        assert_eq!(rp.rate_bps(), (LINE + 40e6 + 96.875e9) / 2.0);
        // Additive steps continue (byte stage stays 0) until Rc would pass
        // the line rate: then it is capped and the RP goes idle.
        let (mut rt, mut rc) = (LINE + 40e6, (LINE + 40e6 + 96.875e9) / 2.0);
        let mut t = 5 * 55 * US;
        while rc < LINE {
            t += 55 * US;
            assert_eq!(rp.next_deadline(), Some(t));
            rp.advance(&c, t);
            rt += 40e6;
            rc = ((rt + rc) / 2.0).min(LINE);
            assert_eq!(rp.target_bps(), rt);
            assert_eq!(rp.rate_bps(), rc);
            assert_eq!(rp.last_phase(), Some(IncreasePhase::Additive));
        }
        assert_eq!(rp.rate_bps(), LINE);
        assert!(!rp.is_active());
        assert_eq!(rp.next_deadline(), None);
        // 4 fast recovery steps, then 100.04G/98.46G, 100.08G/99.27G,
        // 100.12G/99.69G, 100.16G/99.93G, and 100.2G/100.06G capped.
        assert_eq!(rp.time_stage(), 9);
    }

    #[test]
    fn byte_counter_and_timer_reach_hyper_increase() {
        let c = DcqcnConfig {
            byte_counter: 1000,
            ..cfg()
        };
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 0);
        rp.on_cnp(&c, 0);
        // Second CNP: Rt = 50G, alpha stays 1, Rc = 25G.
        assert_eq!(
            (rp.target_bps(), rp.rate_bps(), rp.alpha()),
            (50e9, 25e9, 1.0)
        );
        // Four byte-counter expiries (the remainder carries: 400 + 600).
        for (k, want) in [37.5e9, 43.75e9, 46.875e9, 48.4375e9].iter().enumerate() {
            let now = 1000 + k as Time;
            rp.on_sent(&c, now, 400);
            rp.on_sent(&c, now, 600);
            assert_eq!(rp.rate_bps(), *want);
            assert_eq!(rp.byte_stage(), k as u32 + 1);
        }
        rp.on_sent(&c, 2000, 999);
        assert_eq!(rp.byte_stage(), 4, "999 bytes is not a full B");
        // Four timer expiries: still fast recovery (max stage 4).
        for (k, want) in [49.21875e9, 49.609375e9, 49.8046875e9, 49.90234375e9]
            .iter()
            .enumerate()
        {
            rp.advance(&c, (k as Time + 1) * 55 * US);
            assert_eq!(rp.rate_bps(), *want);
            assert_eq!(rp.last_phase(), Some(IncreasePhase::FastRecovery));
        }
        // Byte stage 5, time stage 4: additive.
        rp.on_sent(&c, 4 * 55 * US + 1, 1);
        assert_eq!(rp.last_phase(), Some(IncreasePhase::Additive));
        let mut rt = 50e9 + 40e6;
        let mut rc = (rt + 49.90234375e9) / 2.0;
        assert_eq!((rp.target_bps(), rp.rate_bps()), (rt, rc));
        // Time stage 5 too: hyper, i = 1.
        rp.advance(&c, 5 * 55 * US);
        assert_eq!(rp.last_phase(), Some(IncreasePhase::Hyper));
        rt += 200e6;
        rc = (rt + rc) / 2.0;
        assert_eq!((rp.target_bps(), rp.rate_bps()), (rt, rc));
        // Byte stage 6, time stage 5: i = min - F + 1 = 1.
        rp.on_sent(&c, 5 * 55 * US + 1, 1000);
        rt += 200e6;
        rc = (rt + rc) / 2.0;
        assert_eq!((rp.target_bps(), rp.rate_bps()), (rt, rc));
        // Both 6: i = 2.
        rp.advance(&c, 6 * 55 * US);
        rt += 2.0 * 200e6;
        rc = (rt + rc) / 2.0;
        assert_eq!((rp.target_bps(), rp.rate_bps()), (rt, rc));
        assert_eq!((rp.time_stage(), rp.byte_stage()), (6, 6));
        assert_eq!(rc, 50.556396484375e9);
    }

    #[test]
    fn repeated_cnps_stop_at_the_rate_floor() {
        let c = cfg();
        let mut rp = ReactionPoint::new(&c, LINE);
        let mut want = LINE;
        for k in 0..12 {
            rp.on_cnp(&c, k);
            want = (want / 2.0).max(100e6);
            assert_eq!(rp.rate_bps(), want);
        }
        assert_eq!(rp.rate_bps(), 100e6);
        assert_eq!(rp.cnps(), 12);
    }

    #[test]
    fn hyper_increase_is_capped_at_line_rate() {
        let c = DcqcnConfig {
            byte_counter: 1,
            fast_recovery_steps: 1,
            hai_rate_bps: 200e9,
            ..cfg()
        };
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 0);
        rp.on_cnp(&c, 0);
        rp.on_cnp(&c, 0);
        assert_eq!(rp.rate_bps(), 12.5e9);
        // Byte stage 1, time stage 0: additive; then the timer makes both
        // >= F = 1: hyper with 200G steps overshoots and is capped.
        rp.on_sent(&c, 1, 1);
        assert_eq!(rp.last_phase(), Some(IncreasePhase::Additive));
        rp.advance(&c, 55 * US);
        assert_eq!(rp.last_phase(), Some(IncreasePhase::Hyper));
        assert!(rp.target_bps() > LINE);
        assert_eq!(rp.rate_bps(), LINE);
        assert_eq!(rp.next_deadline(), None);
    }

    #[test]
    fn late_advance_fires_every_missed_timer_in_order() {
        let c = DcqcnConfig {
            alpha_update_ns: 10 * US,
            ..cfg()
        };
        let mut step = ReactionPoint::new(&c, LINE);
        let mut jump = ReactionPoint::new(&c, LINE);
        step.on_cnp(&c, 0);
        jump.on_cnp(&c, 0);
        while let Some(t) = step.next_deadline().filter(|&t| t <= 200 * US) {
            step.advance(&c, t);
        }
        jump.advance(&c, 200 * US);
        assert_eq!(step, jump);
        assert_eq!(jump.time_stage(), 3);
        let mut a = 1.0f64;
        for _ in 0..20 {
            a *= 255.0 / 256.0;
        }
        assert_eq!(jump.alpha(), a);
    }

    #[test]
    fn idle_rp_replays_missed_alpha_decays_at_the_next_cnp() {
        let c = DcqcnConfig {
            alpha_update_ns: 10 * US,
            ..cfg()
        };
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 0);
        while let Some(t) = rp.next_deadline() {
            rp.advance(&c, t);
        }
        assert_eq!(rp.rate_bps(), LINE);
        // Decays due at 10 us, 20 us, ..., 1000 us (inclusive): 100 of them.
        rp.on_cnp(&c, 1000 * US);
        let mut a = 1.0f64;
        for _ in 0..100 {
            a *= 1.0 - c.g;
        }
        let a = (1.0 - c.g) * a + c.g;
        assert_eq!(rp.alpha(), a);
        assert_eq!(rp.rate_bps(), LINE * (1.0 - a / 2.0));
        assert_eq!(rp.target_bps(), LINE);
        assert_eq!(rp.next_deadline(), Some(1010 * US));
    }

    #[test]
    fn long_idle_decay_is_cheap_and_sane() {
        assert_eq!(decay(1.0, 0.5, 3), 0.125);
        assert_eq!(decay(1.0, 0.5, 2000), 0.0);
        let a = decay(1.0, 1.0 - 1.0 / 256.0, 5000);
        let want = (1.0f64 - 1.0 / 256.0).powi(5000);
        assert!((a / want - 1.0).abs() < 1e-9, "{a} vs {want}");
        let c = DcqcnConfig {
            alpha_update_ns: 1,
            ..cfg()
        };
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 0);
        while let Some(t) = rp.next_deadline() {
            rp.advance(&c, t);
        }
        // An hour of 1 ns alpha periods: alpha reaches 0, then g.
        rp.on_cnp(&c, 3_600_000_000_000);
        assert_eq!(rp.alpha(), c.g);
    }

    #[test]
    fn disabled_dcqcn_does_nothing() {
        let c = DcqcnConfig {
            enabled: false,
            ..cfg()
        };
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 5);
        rp.on_sent(&c, 6, 1 << 30);
        assert_eq!(rp.rate_bps(), LINE);
        assert_eq!(rp.next_deadline(), None);
        let mut np = NotificationPoint::new();
        assert!(!np.on_ce(&c, 0));
        assert_eq!(np.cnps(), 0);
    }

    #[test]
    fn np_sends_at_most_one_cnp_per_interval() {
        let c = cfg();
        let mut np = NotificationPoint::new();
        assert!(np.on_ce(&c, 0));
        assert!(!np.on_ce(&c, 1));
        assert!(!np.on_ce(&c, 49_999));
        assert!(np.on_ce(&c, 50_000), "exactly N later is allowed");
        assert!(!np.on_ce(&c, 50_001));
        assert!(!np.on_ce(&c, 99_999));
        assert!(np.on_ce(&c, 120_000));
        assert!(!np.on_ce(&c, 169_999));
        assert!(np.on_ce(&c, 170_000));
        assert_eq!((np.ce_seen(), np.cnps()), (9, 4));
        // A CE every microsecond for a millisecond: one CNP per 50 us.
        let mut np = NotificationPoint::new();
        let sent = (0..1000 * US)
            .step_by(US as usize)
            .filter(|&t| np.on_ce(&c, t))
            .count();
        assert_eq!(sent, 20);
    }

    #[test]
    fn cnp_on_a_fresh_rp_with_floor_above_line_rate_stays_sane() {
        let c = DcqcnConfig {
            min_rate_bps: 200e9,
            ..cfg()
        };
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 0);
        assert_eq!(rp.rate_bps(), LINE);
    }

    #[test]
    fn the_monitor_period_allows_one_cut_and_min_dec_fac_bounds_it() {
        let c = DcqcnConfig {
            monitor_period_ns: 20 * US,
            min_dec_fac: 0.75,
            ..cfg()
        };
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 0);
        // Alpha 1 would halve the rate; the floor keeps 75 %.
        assert_eq!(rp.rate_bps(), 0.75 * LINE);
        rp.on_cnp(&c, 19_999);
        assert_eq!(rp.rate_bps(), 0.75 * LINE, "within the monitor period");
        rp.on_cnp(&c, 20 * US);
        assert_eq!(rp.rate_bps(), 0.75 * 0.75 * LINE);
        assert_eq!((rp.cnps(), rp.cuts()), (3, 2));
    }

    #[test]
    fn without_clamping_a_run_of_cuts_keeps_the_target_it_started_from() {
        let c = DcqcnConfig {
            clamp_target: false,
            ..cfg()
        };
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 0);
        rp.on_cnp(&c, 10 * US);
        assert_eq!(rp.target_bps(), LINE, "no increase between the cuts");
        // One timer increase, then a cut: that cut moves Rt to Rc.
        rp.advance(&c, c.rate_increase_ns + 10 * US);
        let before = rp.rate_bps();
        rp.on_cnp(&c, c.rate_increase_ns + 11 * US);
        assert_eq!(rp.target_bps(), before);
        let clamped = cfg();
        let mut rp = ReactionPoint::new(&clamped, LINE);
        rp.on_cnp(&clamped, 0);
        let first = rp.rate_bps();
        rp.on_cnp(&clamped, 10 * US);
        assert_eq!(rp.target_bps(), first, "the paper: Rt = Rc on every cut");
    }

    #[test]
    fn pacing_debt_is_paid_at_the_rate_of_the_moment() {
        let c = cfg();
        let mut rp = ReactionPoint::new(&c, LINE);
        rp.on_cnp(&c, 0);
        // 50 Gb/s: 10,000 bits take 200 ns.
        assert!(rp.may_send(0));
        rp.charge(0, 10_000.0);
        assert!(!rp.may_send(199));
        assert_eq!(rp.send_at(), Some(200));
        assert!(rp.may_send(200) && rp.send_at().is_none());
        // A long wait at a low rate ends sooner when the rate rises.
        let c = DcqcnConfig {
            min_dec_fac: 0.0,
            min_rate_bps: 1e6,
            clamp_target: false,
            ..cfg()
        };
        let mut rp = ReactionPoint::new(&c, LINE);
        for k in 0..30 {
            rp.on_cnp(&c, k * US);
        }
        let slow = rp.rate_bps();
        rp.charge(30 * US, 1e6);
        let wait = rp.send_at().unwrap() - 30 * US;
        assert!(wait as f64 >= 1e6 / slow * 1e9 - 1.0);
        // The rate timer raises the rate at 55 us past the last cut.
        let raised_at = 29 * US + c.rate_increase_ns;
        rp.advance(&c, raised_at);
        assert!(rp.rate_bps() > slow);
        assert!(rp.send_at().unwrap() < 30 * US + wait);
    }
}
