//! BAR0's congestion block (`rocenic_abi::registers::CONGESTION`) in the
//! model's terms: what a NIC configuration its registers' values make.
//! The register names are NVIDIA ConnectX's; the units those of
//! `docs/abi.md` (microseconds, Mb/s, percent, 1024ths).

use crate::dcqcn::DcqcnConfig;
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
    for r in abi::CONGESTION.registers {
        let value = register(r.name);
        match r.name {
            "cnp_dscp" => config.cnp_dscp = value as u8,
            "pfc_enable" => config.pfc_honoured = value as u8,
            "pfc_watchdog" => config.pfc_watchdog_ns = Time::from(value) * 1_000,
            name => set_dcqcn(&mut config.dcqcn, name, value)
                .unwrap_or_else(|why| panic!("the congestion block's {name}: {why}")),
        }
    }
    // The RTL reaction point always sets Rt to Rc on a cut, as NVIDIA's
    // `clamp_tgt_rate` does when set.
    config.dcqcn.clamp_target = true;
}

/// `d` with DCQCN parameter `name` (a register of the congestion block,
/// NVIDIA's name) at `value` in the register's unit; `Err` for a name
/// that is not a DCQCN parameter or a value wider than its register.
pub fn set_dcqcn(d: &mut DcqcnConfig, name: &str, value: u32) -> Result<(), String> {
    let register = abi::CONGESTION
        .register(name)
        .ok_or_else(|| format!("no DCQCN parameter is named {name:?}"))?;
    if !register.fits(value.into()) {
        return Err(format!(
            "{name} takes at most {:#x}; {value:#x} given",
            register.implemented()
        ));
    }
    let us = Time::from(value) * 1_000;
    let mbps = f64::from(value) * 1e6;
    match name {
        "enable" => {
            let word = value.to_le_bytes();
            d.enabled = true;
            d.notification_point = congestion_bits::NP_ENABLE.get(&word) == Ok(1);
            d.reaction_point = congestion_bits::RP_ENABLE.get(&word) == Ok(1);
        }
        "min_time_between_cnps" => d.cnp_interval_ns = us,
        "rpg_time_reset" => d.rate_increase_ns = us,
        "rpg_byte_reset" => d.byte_counter = u64::from(value),
        "rpg_threshold" => d.fast_recovery_steps = value,
        "rpg_ai_rate" => d.ai_rate_bps = mbps,
        "rpg_hai_rate" => d.hai_rate_bps = mbps,
        "rpg_gd" => d.gd = value.clamp(RPG_GD_BASE, RPG_GD_BASE + GD_MAX) - RPG_GD_BASE,
        "rpg_min_dec_fac" => d.min_dec_fac = f64::from(value.min(100)) / 100.0,
        "rpg_min_rate" => d.min_rate_bps = mbps,
        "dce_tcp_g" => {
            d.g = f64::from(ALPHA_DENOMINATOR - value.min(ALPHA_DENOMINATOR))
                / f64::from(ALPHA_DENOMINATOR)
        }
        "dce_tcp_rtt" => d.alpha_update_ns = us,
        "rate_reduce_monitor_period" => d.monitor_period_ns = us,
        "initial_alpha_value" => {
            d.initial_alpha = f64::from(value.min(ALPHA_DENOMINATOR)) / f64::from(ALPHA_DENOMINATOR)
        }
        other => return Err(format!("{other} is not a DCQCN parameter")),
    }
    Ok(())
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

    fn base() -> NicConfig {
        NicConfig::new([2, 0, 0, 0, 0, 1], "10.0.0.1".parse().unwrap())
    }

    /// The registers at their reset values but for `values`.
    fn overriding(values: &'static [(&'static str, u32)]) -> impl Fn(&str) -> u32 {
        move |name| {
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map_or_else(|| reset_value(name), |(_, v)| *v)
        }
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
        let nvidia = overriding(&[
            ("rpg_time_reset", 300),
            ("rpg_byte_reset", 32_767),
            ("rpg_ai_rate", 5),
            ("rpg_hai_rate", 50),
            ("dce_tcp_rtt", 1),
            ("rate_reduce_monitor_period", 4),
        ]);
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
        let beyond = overriding(&[
            ("rpg_gd", 3),
            ("rpg_min_dec_fac", 127),
            ("dce_tcp_g", 1023),
            ("initial_alpha_value", 2047),
            ("enable", 0b10),
        ]);
        let mut config = base();
        apply(beyond, &mut config);
        let d = &config.dcqcn;
        assert_eq!((d.gd, d.min_dec_fac), (0, 1.0));
        assert_eq!((d.g, d.initial_alpha), (1.0 / 1024.0, 1.0));
        assert!(!d.notifies() && d.reacts());
        apply(overriding(&[("rpg_gd", 31)]), &mut config);
        assert_eq!(config.dcqcn.gd, GD_MAX);
    }

    #[test]
    fn one_parameter_at_a_time_and_the_names_that_are_not_dcqcn_s() {
        let mut d = DcqcnConfig::paper();
        set_dcqcn(&mut d, "rpg_time_reset", 300).unwrap();
        assert_eq!(
            d,
            DcqcnConfig {
                rate_increase_ns: 300_000,
                ..DcqcnConfig::paper()
            }
        );
        assert!(set_dcqcn(&mut d, "pfc_watchdog", 1).is_err());
        assert!(set_dcqcn(&mut d, "rpg_gdd", 11).is_err());
        assert!(set_dcqcn(&mut d, "rpg_threshold", 32).is_err());
    }
}
