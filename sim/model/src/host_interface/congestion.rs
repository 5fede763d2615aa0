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

/// Register values of the block, by name.
pub type Registers = Vec<(&'static str, u32)>;

/// The block's registers that make `config`'s congestion parameters, by
/// name: the inverse of [`apply`], with the configuration they make
/// (`config` as [`apply`] leaves it: the same parameters, the enables as
/// two bits, the clamp on). `Err` names the first parameter the
/// registers cannot hold (a time that is not whole microseconds, a rate
/// that is not whole Mb/s, a fraction finer than the register's unit, a
/// value beyond its bits), so that a caller never runs a NIC on a
/// configuration other than the one asked for.
pub fn registers_of(config: &NicConfig) -> Result<(Registers, NicConfig), String> {
    let d = &config.dcqcn;
    let us = |ns: Time, name: &str| {
        ns.is_multiple_of(1_000)
            .then_some(ns / 1_000)
            .ok_or(format!("{name}: {ns} ns is not whole microseconds"))
    };
    let mbps = |bps: f64, name: &str| {
        let m = bps / 1e6;
        (m.fract() == 0.0 && m >= 0.0)
            .then_some(m as u64)
            .ok_or(format!("{name}: {bps} b/s is not whole Mb/s"))
    };
    let fraction = |x: f64, one: f64, name: &str| {
        let v = x * one;
        (v.fract() == 0.0 && v >= 0.0)
            .then_some(v as u64)
            .ok_or(format!("{name}: {x} is not a whole number of 1/{one}"))
    };
    let mut enable = [0u8; 4];
    congestion_bits::NP_ENABLE
        .set(&mut enable, u64::from(d.notifies()))
        .map_err(|e| format!("enable: {e:?}"))?;
    congestion_bits::RP_ENABLE
        .set(&mut enable, u64::from(d.reacts()))
        .map_err(|e| format!("enable: {e:?}"))?;
    let values: [(&'static str, u64); 17] = [
        ("enable", u32::from_le_bytes(enable).into()),
        (
            "min_time_between_cnps",
            us(d.cnp_interval_ns, "min_time_between_cnps")?,
        ),
        ("rpg_time_reset", us(d.rate_increase_ns, "rpg_time_reset")?),
        ("rpg_byte_reset", d.byte_counter),
        ("rpg_threshold", d.fast_recovery_steps.into()),
        ("rpg_ai_rate", mbps(d.ai_rate_bps, "rpg_ai_rate")?),
        ("rpg_hai_rate", mbps(d.hai_rate_bps, "rpg_hai_rate")?),
        ("rpg_gd", u64::from(d.gd) + u64::from(RPG_GD_BASE)),
        (
            "rpg_min_dec_fac",
            fraction(d.min_dec_fac, 100.0, "rpg_min_dec_fac")?,
        ),
        ("rpg_min_rate", mbps(d.min_rate_bps, "rpg_min_rate")?),
        (
            "dce_tcp_g",
            u64::from(ALPHA_DENOMINATOR)
                - fraction(d.g, f64::from(ALPHA_DENOMINATOR), "dce_tcp_g")?
                    .min(ALPHA_DENOMINATOR.into()),
        ),
        ("dce_tcp_rtt", us(d.alpha_update_ns, "dce_tcp_rtt")?),
        (
            "rate_reduce_monitor_period",
            us(d.monitor_period_ns, "rate_reduce_monitor_period")?,
        ),
        (
            "initial_alpha_value",
            fraction(
                d.initial_alpha,
                f64::from(ALPHA_DENOMINATOR),
                "initial_alpha_value",
            )?,
        ),
        ("cnp_dscp", config.cnp_dscp.into()),
        ("pfc_enable", config.pfc_honoured.into()),
        ("pfc_watchdog", us(config.pfc_watchdog_ns, "pfc_watchdog")?),
    ];
    let mut registers = Vec::with_capacity(values.len());
    for (name, value) in values {
        let register = abi::CONGESTION
            .register(name)
            .unwrap_or_else(|| panic!("the congestion block has no {name}"));
        if !register.fits(value) {
            return Err(format!("{name}: {value} is beyond its register"));
        }
        registers.push((register.name, value as u32));
    }
    let mut back = config.clone();
    apply(
        |name| {
            registers
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(0, |r| r.1)
        },
        &mut back,
    );
    // What the registers cannot say and need not: the enables as the two
    // bits, and the clamp of a reaction point that is off (the registers
    // always clamp: the RTL sets Rt to Rc on every cut).
    let want = DcqcnConfig {
        enabled: true,
        notification_point: d.notifies(),
        reaction_point: d.reacts(),
        clamp_target: d.clamp_target || !d.reacts(),
        ..d.clone()
    };
    if back.dcqcn != want {
        return Err(format!("the registers give {:?}, not {want:?}", back.dcqcn));
    }
    Ok((registers, back))
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

    #[test]
    fn registers_of_inverts_apply_for_every_parameter_set() {
        for dcqcn in [
            DcqcnConfig::rocenic(),
            DcqcnConfig::nvidia(),
            DcqcnConfig::paper(),
        ] {
            let mut config = base();
            config.dcqcn = DcqcnConfig {
                clamp_target: true,
                ..dcqcn
            };
            config.cnp_dscp = 26;
            config.pfc_honoured = 0x08;
            config.pfc_watchdog_ns = 7_000;
            let (registers, made) = registers_of(&config).expect("representable");
            assert_eq!(made.dcqcn, config.dcqcn);
            assert_eq!(registers.len(), abi::CONGESTION.registers.len());
            let mut back = base();
            apply(
                |n| registers.iter().find(|r| r.0 == n).unwrap().1,
                &mut back,
            );
            assert_eq!(back.dcqcn, config.dcqcn);
            assert_eq!(
                (back.cnp_dscp, back.pfc_honoured, back.pfc_watchdog_ns),
                (26, 0x08, 7_000)
            );
        }
        let mut config = base();
        config.dcqcn.cnp_interval_ns = 4_500;
        let why = registers_of(&config).unwrap_err();
        assert!(why.contains("min_time_between_cnps"), "{why}");
        config.dcqcn.cnp_interval_ns = 4_000;
        config.dcqcn.g = 1.0 / 3.0;
        assert!(registers_of(&config).unwrap_err().contains("dce_tcp_g"));
    }
}
