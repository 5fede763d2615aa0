//! BAR0's congestion block (`rocenic_abi::registers::CONGESTION`) in the
//! model's terms: what a NIC configuration its registers' values make.
//! The register names are NVIDIA ConnectX's; the units those of
//! `docs/abi.md` (microseconds, Mb/s, percent, 1024ths).

use crate::nic::NicConfig;
use crate::Time;
use rocenic_abi::registers::{self as abi, congestion_bits};

/// The NVIDIA `rpg_gd` that means a cut of alpha / 2^0.
pub const RPG_GD_BASE: u32 = 10;
/// The largest shift the reaction point takes (`rpg_gd` 25).
pub const GD_MAX: u32 = 15;
/// Alpha is written in 1024ths.
pub const ALPHA_DENOMINATOR: u32 = 1024;

/// `config` with the congestion parameters that `register` (a register
/// of the block by name, as it reads) gives. Each value is bounded as the
/// ABI says (a value beyond its range acts as its nearest bound).
pub fn apply(register: impl Fn(&str) -> u32, config: &mut NicConfig) {
    let us = |name: &str| Time::from(register(name)) * 1_000;
    let mbps = |name: &str| f64::from(register(name)) * 1e6;
    let enable = register("enable").to_le_bytes();
    let d = &mut config.dcqcn;
    d.enabled = true;
    d.notification_point = congestion_bits::NP_ENABLE.get(&enable) == Ok(1);
    d.reaction_point = congestion_bits::RP_ENABLE.get(&enable) == Ok(1);
    d.cnp_interval_ns = us("min_time_between_cnps");
    d.rate_increase_ns = us("rpg_time_reset");
    d.byte_counter = u64::from(register("rpg_byte_reset"));
    d.fast_recovery_steps = register("rpg_threshold");
    d.ai_rate_bps = mbps("rpg_ai_rate");
    d.hai_rate_bps = mbps("rpg_hai_rate");
    d.gd = register("rpg_gd").clamp(RPG_GD_BASE, RPG_GD_BASE + GD_MAX) - RPG_GD_BASE;
    d.min_dec_fac = f64::from(register("rpg_min_dec_fac").min(100)) / 100.0;
    d.min_rate_bps = mbps("rpg_min_rate");
    d.g = f64::from(ALPHA_DENOMINATOR - register("dce_tcp_g").min(ALPHA_DENOMINATOR))
        / f64::from(ALPHA_DENOMINATOR);
    d.alpha_update_ns = us("dce_tcp_rtt");
    d.monitor_period_ns = us("rate_reduce_monitor_period");
    d.initial_alpha = f64::from(register("initial_alpha_value").min(ALPHA_DENOMINATOR))
        / f64::from(ALPHA_DENOMINATOR);
    // The RTL reaction point always sets Rt to Rc on a cut, as NVIDIA's
    // `clamp_tgt_rate` does when set.
    d.clamp_target = true;
    config.cnp_dscp = register("cnp_dscp") as u8;
    config.pfc_honoured = register("pfc_enable") as u8;
    config.pfc_watchdog_ns = us("pfc_watchdog");
}

/// The block's registers at their reset values, by name.
pub fn reset_value(name: &str) -> u32 {
    abi::CONGESTION
        .register(name)
        .unwrap_or_else(|| panic!("the congestion block has no {name}"))
        .reset as u32
}

/// The configuration a NIC comes out of reset with: `base` with the
/// block's reset values applied.
pub fn at_reset(mut base: NicConfig) -> NicConfig {
    apply(reset_value, &mut base);
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dcqcn::DcqcnConfig;

    fn base() -> NicConfig {
        NicConfig::new([2, 0, 0, 0, 0, 1], "10.0.0.1".parse().unwrap())
    }

    #[test]
    fn the_reset_values_are_rocenic_s_set() {
        let config = at_reset(base());
        assert_eq!(config.dcqcn, DcqcnConfig::rocenic());
        assert_eq!(config.cnp_dscp, 48);
        assert_eq!(config.pfc_honoured, 0xFF);
        assert_eq!(config.pfc_watchdog_ns, base().pfc_watchdog_ns);
    }

    #[test]
    fn nvidia_s_values_give_nvidia_s_set_but_its_clamp() {
        let nvidia = |name: &str| match name {
            "rpg_time_reset" => 300,
            "rpg_byte_reset" => 32_767,
            "rpg_ai_rate" => 5,
            "rpg_hai_rate" => 50,
            "dce_tcp_rtt" => 1,
            "rate_reduce_monitor_period" => 4,
            other => reset_value(other),
        };
        let mut config = base();
        apply(nvidia, &mut config);
        let want = DcqcnConfig {
            clamp_target: true,
            ..DcqcnConfig::nvidia()
        };
        assert_eq!(config.dcqcn, want);
    }

    #[test]
    fn values_beyond_a_range_act_as_its_bound() {
        let beyond = |name: &str| match name {
            "rpg_gd" => 3,
            "rpg_min_dec_fac" => 127,
            "dce_tcp_g" => 1023,
            "initial_alpha_value" => 2047,
            "enable" => 0b10,
            other => reset_value(other),
        };
        let mut config = base();
        apply(beyond, &mut config);
        let d = &config.dcqcn;
        assert_eq!((d.gd, d.min_dec_fac), (0, 1.0));
        assert_eq!((d.g, d.initial_alpha), (1.0 / 1024.0, 1.0));
        assert!(!d.notifies() && d.reacts());
        apply(|n| if n == "rpg_gd" { 31 } else { beyond(n) }, &mut config);
        assert_eq!(config.dcqcn.gd, GD_MAX);
    }
}
