//! The fixed point of the DCQCN fluid model (Zhu et al., SIGCOMM 2015,
//! section 5): the marking probability at which N flows sharing a link
//! each hold the fair share `C / N` with neither the rate nor the target
//! rate drifting. Through the switch's marking curve it gives the queue
//! the control loop should settle at, the yardstick for a measured mean
//! queue (`docs/dcqcn.md`, "The fluid model's fixed point").
//!
//! Per flow, in packets, with `p` the marking probability, `tau` the time
//! between cuts, `tau'` the alpha period, `T` the rate timer, `B` the byte
//! counter (in packets) and `F` the fast-recovery steps:
//!
//! ```text
//! a = 1 - (1-p)^(tau Rc)          alpha* = 1 - (1-p)^(tau' Rc)
//! b = p / ((1-p)^-B - 1)          c = b (1-p)^(F B)
//! d = p / ((1-p)^-(T Rc) - 1)     e = d (1-p)^(F T Rc)
//! dRt/dt = -(Rt - Rc) a / tau + R_AI Rc (c + e)
//! dRc/dt = -Rc alpha a / (Gd tau) + (Rt - Rc) Rc (b + d) / 2
//! ```
//!
//! Both derivatives vanish where `(2 / Gd) alpha* a^2 = R_AI Rc tau^2 (b +
//! d)(c + e)` (the paper's Gd is 2); a disabled timer or byte counter drops its terms. The time between
//! cuts is the longer of the monitor period and the CNP interval (a flow is
//! cut at most once in each); the fluid model has neither the cut floor
//! (`min_dec_fac`) nor the clamp of the target rate.

use crate::dcqcn::DcqcnConfig;

/// The marking probability `p*` at the fluid model's fixed point for flows
/// of `flow_rate_bps` each (the fair share) sending `packet_bytes`-byte
/// packets under `cfg`; `None` when no probability in (0, 1) balances the
/// loop (no increase at all, or more than every packet marked needed).
pub fn fixed_point_marking(
    cfg: &DcqcnConfig,
    flow_rate_bps: f64,
    packet_bytes: f64,
) -> Option<f64> {
    let rc = flow_rate_bps / (8.0 * packet_bytes);
    let r_ai = cfg.ai_rate_bps / (8.0 * packet_bytes);
    let tau = cfg.monitor_period_ns.max(cfg.cnp_interval_ns) as f64 * 1e-9;
    let tau_alpha = cfg.alpha_update_ns as f64 * 1e-9;
    let timer = cfg.rate_increase_ns as f64 * 1e-9;
    let bytes = cfg.byte_counter as f64 / packet_bytes;
    let f = f64::from(cfg.fast_recovery_steps);
    // 2 / Gd.
    let cut_share = 2.0 / 2f64.powi(cfg.gd as i32);
    // One increase source: its rate of increase events (b or d) and the
    // part of them past fast recovery (c or e).
    let source = |p: f64, packets: f64| -> (f64, f64) {
        if packets <= 0.0 {
            return (0.0, 0.0);
        }
        let events = p / ((1.0 - p).powf(-packets) - 1.0);
        (events, events * (1.0 - p).powf(f * packets))
    };
    let balance = |p: f64| -> f64 {
        let a = 1.0 - (1.0 - p).powf(tau * rc);
        let alpha = 1.0 - (1.0 - p).powf(tau_alpha * rc);
        let (b, c) = source(p, bytes);
        let (d, e) = source(p, timer * rc);
        cut_share * alpha * a * a - r_ai * rc * tau * tau * (b + d) * (c + e)
    };
    // Bisection on log p: the cut side grows with p, the increase side
    // falls, so the balance changes sign once.
    let (mut lo, mut hi) = (1e-12_f64, 1.0 - 1e-9);
    if balance(lo) >= 0.0 || balance(hi) <= 0.0 {
        return None;
    }
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if balance(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some((lo * hi).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4,158-byte frames (MTU 4096 WRITE middles with their FCS) on 100
    /// GbE; the values came from solving the same equation independently
    /// (a Python bisection). Today's set, and the one before it (T = 55
    /// us, F = 5, R_AI = 1 Gb/s, K = 1 us, 20 us between cuts).
    #[test]
    fn rocenic_s_sets_balance_where_an_independent_solver_says() {
        let before = DcqcnConfig {
            alpha_update_ns: 1_000,
            rate_increase_ns: 55_000,
            fast_recovery_steps: 5,
            ai_rate_bps: 1e9,
            monitor_period_ns: 20_000,
            ..DcqcnConfig::rocenic()
        };
        let sets = [
            (DcqcnConfig::rocenic(), [0.00943, 0.02247, 0.05248, 0.11813]),
            (before, [0.0054, 0.0121, 0.0268, 0.0584]),
        ];
        for (cfg, want) in sets {
            for (flows, want) in [2.0, 4.0, 8.0, 16.0].into_iter().zip(want) {
                let p = fixed_point_marking(&cfg, 100e9 / flows, 4158.0).unwrap();
                assert!(
                    (p / want - 1.0).abs() < 0.01,
                    "{flows} flows: p* {p}, {want} wanted"
                );
            }
        }
    }

    #[test]
    fn more_flows_need_more_marking_and_no_increase_has_no_fixed_point() {
        let cfg = DcqcnConfig::rocenic();
        let few = fixed_point_marking(&cfg, 50e9, 4158.0).unwrap();
        let many = fixed_point_marking(&cfg, 5e9, 4158.0).unwrap();
        assert!(many > few);
        let still = DcqcnConfig {
            rate_increase_ns: 0,
            byte_counter: 0,
            ..DcqcnConfig::rocenic()
        };
        assert_eq!(fixed_point_marking(&still, 50e9, 4158.0), None);
    }
}
