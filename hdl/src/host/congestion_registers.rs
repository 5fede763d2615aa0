//! `CongestionRegisters`: BAR0's congestion block (`rocenic_abi`'s
//! `CONGESTION`, `docs/abi.md`): the DCQCN and PFC parameters software
//! writes in NVIDIA ConnectX's names and units (microseconds, Mb/s,
//! percent, 1024ths), held in flip-flops and converted to the units the
//! core's blocks count in (cycles of 4 ns, kb/s, Q1.15, Q0.16, PFC quanta
//! of 100 GbE) on the parameter ports of the notification point, the
//! reaction point and the PFC block. It sits inside
//! [`BarRegisters`](crate::host::bar_registers::BarRegisters), which
//! decodes the accesses.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; `BarRegisters` raises it for a
//!   soft reset too): every register to its ABI reset value.
//! - Window: `write` with `write_dword` (the dword's index in the block,
//!   0 ..= 63) and `write_data`: one register written, its unimplemented
//!   bits dropped; a dword with no register ignores it. `read_dword` (in)
//!   → `read_value` (out, the cycle after: a synchronous read): the
//!   register at that dword as it reads, 0 where none is (the header
//!   dwords are `BarRegisters`' constants).
//! - `np` ([`NpParamsSource`]), `rp` ([`RpParamsSource`]), `pfc`
//!   ([`PfcParamsSource`]), `cnp_dscp`: the parameters in the units of
//!   the core's ports, as the model's `NpParams`, `RpParams` and
//!   `PfcParams::for_nic` convert the same configuration (the block's
//!   test checks every output against them).
//!
//! # Conversions
//!
//! Each register is converted as it is written, by one converter per kind
//! shared by the registers of that kind, into a flip-flop that drives its
//! port. Microseconds to cycles: x 250 (shifts and adds); Mb/s to kb/s:
//! x 1000;
//! `dce_tcp_g` to the gain g in Q1.15: (1024 - g) x 32; 1024ths of alpha
//! to Q1.15: x 32; `rpg_gd` to the cut's shift: `rpg_gd - 10`, bounded to
//! 0 ..= 15; a percentage to Q0.16: a 128-entry table rounded as the model
//! rounds; microseconds to PFC quanta of 512 bit times at 100 Gb/s: x
//! 3125 / 16, rounded down. A value beyond its range acts as its nearest
//! bound. The line rate (100 Gb/s) and the PFC block's bit times per cycle
//! (400) are the build's, not registers.
//!
//! # Latency and throughput
//!
//! A write is in its register, and on its parameter port, at the edge
//! that takes it. One write and one read per cycle.

use crate::congestion::dcqcn_notification_point::NpParamsSource;
use crate::congestion::dcqcn_reaction_point::RpParamsSource;
use crate::congestion::pfc_pause::PfcParamsSource;
use rocenic_abi::registers::{self as abi, Register};
use rocenic_model::dcqcn_integer::{NpParams, RpParams};
use rocenic_model::host_interface::congestion;
use rocenic_model::nic::NicConfig;
use rocenic_model::pfc_pause::PfcParams;
use rust_hdl::prelude::*;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Dword index bits within the block (its 256 bytes).
pub const DWORD_BITS: usize = 6;
const _: () = assert!(abi::CONGESTION.size == 4 << DWORD_BITS);

/// The reaction point's rate at rest, kb/s: the port speed.
pub const LINE_RATE_KBPS: u64 = abi::PORT_RATE_MBPS as u64 * 1000;
/// Link bit times per 4 ns cycle at 100 Gb/s.
pub const PFC_BITS_PER_CYCLE: u64 = 400;
const _: () = assert!(abi::PORT_RATE_MBPS == 100_000);

fn register(name: &str) -> &'static Register {
    abi::CONGESTION
        .register(name)
        .unwrap_or_else(|| panic!("the ABI's congestion block has no {name}"))
}

/// The dword index of register `name` within the block.
pub fn dword_of(name: &str) -> u64 {
    u64::from(register(name).offset / 4)
}

fn at(name: &str) -> Constant<Bits<DWORD_BITS>> {
    Constant::new(bits(dword_of(name)))
}

fn reset<const N: usize>(name: &str) -> Constant<Bits<N>> {
    let r = register(name);
    assert!(r.implemented() < 1 << N, "{name} is wider than {N} bits");
    Constant::new(bits(r.reset))
}

/// Q0.16 of a percentage, as `RpParams::for_nic` rounds it, for every
/// 7-bit value (those over 100 as 100).
pub fn percent_q16(percent: u64) -> u64 {
    ((percent.min(100) as f64 / 100.0 * 65536.0).round()).min(65535.0) as u64
}

/// Nanoseconds per cycle: the unit of the core's time parameters.
const NS_PER_CYCLE: u64 = 4;

/// The ports' values at reset: the model's conversion of the block's reset
/// values (the converters below do the same to each value written).
fn ports_at_reset() -> (RpParams, NpParams, PfcParams) {
    let unaddressed = NicConfig::new([0; 6], IpAddr::from([0, 0, 0, 0]));
    let config = congestion::at_reset(unaddressed);
    let rp = RpParams::for_nic(&config.dcqcn, config.line_rate_bps, NS_PER_CYCLE)
        .expect("the reset values convert");
    let np = NpParams::for_nic(&config.dcqcn, NS_PER_CYCLE);
    (rp, np, PfcParams::for_nic(&config, NS_PER_CYCLE))
}

fn constant<const N: usize>(value: impl Into<u64>) -> Constant<Bits<N>> {
    Constant::new(bits(value.into()))
}

/// The congestion registers (see the module doc).
#[derive(LogicBlock)]
pub struct CongestionRegisters {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub write: Signal<In, Bit>,
    pub write_dword: Signal<In, Bits<DWORD_BITS>>,
    pub write_data: Signal<In, Bits<32>>,
    pub read_dword: Signal<In, Bits<DWORD_BITS>>,
    pub read_value: Signal<Out, Bits<32>>,
    pub np: NpParamsSource,
    pub rp: RpParamsSource,
    pub pfc: PfcParamsSource,
    pub cnp_dscp: Signal<Out, Bits<6>>,

    // The registers as written, each its ABI width.
    enable: DFF<Bits<2>>,
    min_time_between_cnps: DFF<Bits<20>>,
    cnp_dscp_value: DFF<Bits<6>>,
    rpg_time_reset: DFF<Bits<20>>,
    rpg_byte_reset: DFF<Bits<32>>,
    rpg_threshold: DFF<Bits<5>>,
    rpg_ai_rate: DFF<Bits<20>>,
    rpg_hai_rate: DFF<Bits<20>>,
    rpg_gd: DFF<Bits<5>>,
    rpg_min_dec_fac: DFF<Bits<7>>,
    rpg_min_rate: DFF<Bits<20>>,
    dce_tcp_g: DFF<Bits<10>>,
    dce_tcp_rtt: DFF<Bits<20>>,
    rate_reduce_monitor_period: DFF<Bits<20>>,
    initial_alpha_value: DFF<Bits<11>>,
    pfc_enable: DFF<Bits<8>>,
    pfc_watchdog: DFF<Bits<24>>,
    read_data: DFF<Bits<32>>,

    // The same registers in the core's units.
    np_interval: DFF<Bits<32>>,
    rp_min_rate: DFF<Bits<32>>,
    rp_ai_rate: DFF<Bits<32>>,
    rp_hai_rate: DFF<Bits<32>>,
    rp_g: DFF<Bits<16>>,
    rp_gd: DFF<Bits<4>>,
    rp_min_dec_fac: DFF<Bits<16>>,
    rp_initial_alpha: DFF<Bits<16>>,
    rp_alpha_period: DFF<Bits<32>>,
    rp_rate_period: DFF<Bits<32>>,
    rp_monitor_period: DFF<Bits<32>>,
    pfc_watchdog_quanta: DFF<Bits<32>>,
    percent_to_q16: ROM<Bits<16>, 7>,

    // The converters, on the written value.
    low_20: Signal<Local, Bits<32>>,
    in_cycles: Signal<Local, Bits<32>>,
    in_kbps: Signal<Local, Bits<32>>,
    gd_above_base: Signal<Local, Bits<5>>,
    gd_shift: Signal<Local, Bits<4>>,
    alpha_1024ths: Signal<Local, Bits<16>>,
    watchdog_us: Signal<Local, Bits<40>>,
    watchdog_bit_times_x16: Signal<Local, Bits<40>>,

    at_enable: Constant<Bits<DWORD_BITS>>,
    at_min_time_between_cnps: Constant<Bits<DWORD_BITS>>,
    at_cnp_dscp: Constant<Bits<DWORD_BITS>>,
    at_rpg_time_reset: Constant<Bits<DWORD_BITS>>,
    at_rpg_byte_reset: Constant<Bits<DWORD_BITS>>,
    at_rpg_threshold: Constant<Bits<DWORD_BITS>>,
    at_rpg_ai_rate: Constant<Bits<DWORD_BITS>>,
    at_rpg_hai_rate: Constant<Bits<DWORD_BITS>>,
    at_rpg_gd: Constant<Bits<DWORD_BITS>>,
    at_rpg_min_dec_fac: Constant<Bits<DWORD_BITS>>,
    at_rpg_min_rate: Constant<Bits<DWORD_BITS>>,
    at_dce_tcp_g: Constant<Bits<DWORD_BITS>>,
    at_dce_tcp_rtt: Constant<Bits<DWORD_BITS>>,
    at_rate_reduce_monitor_period: Constant<Bits<DWORD_BITS>>,
    at_initial_alpha_value: Constant<Bits<DWORD_BITS>>,
    at_pfc_enable: Constant<Bits<DWORD_BITS>>,
    at_pfc_watchdog: Constant<Bits<DWORD_BITS>>,
    reset_enable: Constant<Bits<2>>,
    reset_min_time_between_cnps: Constant<Bits<20>>,
    reset_cnp_dscp: Constant<Bits<6>>,
    reset_rpg_time_reset: Constant<Bits<20>>,
    reset_rpg_byte_reset: Constant<Bits<32>>,
    reset_rpg_threshold: Constant<Bits<5>>,
    reset_rpg_ai_rate: Constant<Bits<20>>,
    reset_rpg_hai_rate: Constant<Bits<20>>,
    reset_rpg_gd: Constant<Bits<5>>,
    reset_rpg_min_dec_fac: Constant<Bits<7>>,
    reset_rpg_min_rate: Constant<Bits<20>>,
    reset_dce_tcp_g: Constant<Bits<10>>,
    reset_dce_tcp_rtt: Constant<Bits<20>>,
    reset_rate_reduce_monitor_period: Constant<Bits<20>>,
    reset_initial_alpha_value: Constant<Bits<11>>,
    reset_pfc_enable: Constant<Bits<8>>,
    reset_pfc_watchdog: Constant<Bits<24>>,
    reset_np_interval: Constant<Bits<32>>,
    reset_rp_min_rate: Constant<Bits<32>>,
    reset_rp_ai_rate: Constant<Bits<32>>,
    reset_rp_hai_rate: Constant<Bits<32>>,
    reset_rp_g: Constant<Bits<16>>,
    reset_rp_gd: Constant<Bits<4>>,
    reset_rp_min_dec_fac: Constant<Bits<16>>,
    reset_rp_initial_alpha: Constant<Bits<16>>,
    reset_rp_alpha_period: Constant<Bits<32>>,
    reset_rp_rate_period: Constant<Bits<32>>,
    reset_rp_monitor_period: Constant<Bits<32>>,
    reset_pfc_watchdog_quanta: Constant<Bits<32>>,
    line_rate: Constant<Bits<32>>,
    bits_per_cycle: Constant<Bits<10>>,
}

impl Default for CongestionRegisters {
    fn default() -> Self {
        let (rp, np, pfc) = ports_at_reset();
        let percent: BTreeMap<Bits<7>, Bits<16>> =
            (0..128).map(|p| (bits(p), bits(percent_q16(p)))).collect();
        CongestionRegisters {
            clock: Default::default(),
            reset: Default::default(),
            write: Default::default(),
            write_dword: Default::default(),
            write_data: Default::default(),
            read_dword: Default::default(),
            read_value: Default::default(),
            np: Default::default(),
            rp: Default::default(),
            pfc: Default::default(),
            cnp_dscp: Default::default(),
            enable: Default::default(),
            min_time_between_cnps: Default::default(),
            cnp_dscp_value: Default::default(),
            rpg_time_reset: Default::default(),
            rpg_byte_reset: Default::default(),
            rpg_threshold: Default::default(),
            rpg_ai_rate: Default::default(),
            rpg_hai_rate: Default::default(),
            rpg_gd: Default::default(),
            rpg_min_dec_fac: Default::default(),
            rpg_min_rate: Default::default(),
            dce_tcp_g: Default::default(),
            dce_tcp_rtt: Default::default(),
            rate_reduce_monitor_period: Default::default(),
            initial_alpha_value: Default::default(),
            pfc_enable: Default::default(),
            pfc_watchdog: Default::default(),
            read_data: Default::default(),
            np_interval: Default::default(),
            rp_min_rate: Default::default(),
            rp_ai_rate: Default::default(),
            rp_hai_rate: Default::default(),
            rp_g: Default::default(),
            rp_gd: Default::default(),
            rp_min_dec_fac: Default::default(),
            rp_initial_alpha: Default::default(),
            rp_alpha_period: Default::default(),
            rp_rate_period: Default::default(),
            rp_monitor_period: Default::default(),
            pfc_watchdog_quanta: Default::default(),
            percent_to_q16: ROM::new(percent),
            low_20: Default::default(),
            in_cycles: Default::default(),
            in_kbps: Default::default(),
            gd_above_base: Default::default(),
            gd_shift: Default::default(),
            alpha_1024ths: Default::default(),
            watchdog_us: Default::default(),
            watchdog_bit_times_x16: Default::default(),
            at_enable: at("enable"),
            at_min_time_between_cnps: at("min_time_between_cnps"),
            at_cnp_dscp: at("cnp_dscp"),
            at_rpg_time_reset: at("rpg_time_reset"),
            at_rpg_byte_reset: at("rpg_byte_reset"),
            at_rpg_threshold: at("rpg_threshold"),
            at_rpg_ai_rate: at("rpg_ai_rate"),
            at_rpg_hai_rate: at("rpg_hai_rate"),
            at_rpg_gd: at("rpg_gd"),
            at_rpg_min_dec_fac: at("rpg_min_dec_fac"),
            at_rpg_min_rate: at("rpg_min_rate"),
            at_dce_tcp_g: at("dce_tcp_g"),
            at_dce_tcp_rtt: at("dce_tcp_rtt"),
            at_rate_reduce_monitor_period: at("rate_reduce_monitor_period"),
            at_initial_alpha_value: at("initial_alpha_value"),
            at_pfc_enable: at("pfc_enable"),
            at_pfc_watchdog: at("pfc_watchdog"),
            reset_enable: reset("enable"),
            reset_min_time_between_cnps: reset("min_time_between_cnps"),
            reset_cnp_dscp: reset("cnp_dscp"),
            reset_rpg_time_reset: reset("rpg_time_reset"),
            reset_rpg_byte_reset: reset("rpg_byte_reset"),
            reset_rpg_threshold: reset("rpg_threshold"),
            reset_rpg_ai_rate: reset("rpg_ai_rate"),
            reset_rpg_hai_rate: reset("rpg_hai_rate"),
            reset_rpg_gd: reset("rpg_gd"),
            reset_rpg_min_dec_fac: reset("rpg_min_dec_fac"),
            reset_rpg_min_rate: reset("rpg_min_rate"),
            reset_dce_tcp_g: reset("dce_tcp_g"),
            reset_dce_tcp_rtt: reset("dce_tcp_rtt"),
            reset_rate_reduce_monitor_period: reset("rate_reduce_monitor_period"),
            reset_initial_alpha_value: reset("initial_alpha_value"),
            reset_pfc_enable: reset("pfc_enable"),
            reset_pfc_watchdog: reset("pfc_watchdog"),
            reset_np_interval: constant(np.interval),
            reset_rp_min_rate: constant(rp.min_rate),
            reset_rp_ai_rate: constant(rp.ai_rate),
            reset_rp_hai_rate: constant(rp.hai_rate),
            reset_rp_g: constant(rp.g),
            reset_rp_gd: constant(rp.gd),
            reset_rp_min_dec_fac: constant(rp.min_dec_fac),
            reset_rp_initial_alpha: constant(rp.initial_alpha),
            reset_rp_alpha_period: constant(rp.alpha_period),
            reset_rp_rate_period: constant(rp.rate_period),
            reset_rp_monitor_period: constant(rp.monitor_period),
            reset_pfc_watchdog_quanta: constant(pfc.watchdog_quanta),
            line_rate: Constant::new(bits(LINE_RATE_KBPS)),
            bits_per_cycle: Constant::new(bits(PFC_BITS_PER_CYCLE)),
        }
    }
}

impl Logic for CongestionRegisters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            enable,
            min_time_between_cnps,
            cnp_dscp_value,
            rpg_time_reset,
            rpg_byte_reset,
            rpg_threshold,
            rpg_ai_rate,
            rpg_hai_rate,
            rpg_gd,
            rpg_min_dec_fac,
            rpg_min_rate,
            dce_tcp_g,
            dce_tcp_rtt,
            rate_reduce_monitor_period,
            initial_alpha_value,
            pfc_enable,
            pfc_watchdog,
            read_data,
            np_interval,
            rp_min_rate,
            rp_ai_rate,
            rp_hai_rate,
            rp_g,
            rp_gd,
            rp_min_dec_fac,
            rp_initial_alpha,
            rp_alpha_period,
            rp_rate_period,
            rp_monitor_period,
            pfc_watchdog_quanta
        );

        // The converters. x 250 = x 256 - x 4 - x 2; x 1000 = x 1024 - x
        // 16 - x 8; x 3125 = x (2048 + 1024 + 32 + 16 + 4 + 1).
        self.low_20.next = bit_cast::<32, 20>(self.write_data.val().get_bits::<20>(0));
        self.in_cycles.next =
            (self.low_20.val() << 8) - (self.low_20.val() << 2) - (self.low_20.val() << 1);
        self.in_kbps.next =
            (self.low_20.val() << 10) - (self.low_20.val() << 4) - (self.low_20.val() << 3);
        self.gd_above_base.next = self.write_data.val().get_bits::<5>(0) - bits::<5>(10);
        self.gd_shift.next = self.gd_above_base.val().get_bits::<4>(0);
        if self.write_data.val().get_bits::<5>(0) <= 10 {
            self.gd_shift.next = bits::<4>(0);
        }
        if self.write_data.val().get_bits::<5>(0) > 25 {
            self.gd_shift.next = bits::<4>(15);
        }
        self.percent_to_q16.address.next = self.write_data.val().get_bits::<7>(0);
        self.alpha_1024ths.next = bit_cast::<16, 11>(self.write_data.val().get_bits::<11>(0));
        if self.alpha_1024ths.val() > 1024 {
            self.alpha_1024ths.next = bits::<16>(1024);
        }
        self.watchdog_us.next = bit_cast::<40, 24>(self.write_data.val().get_bits::<24>(0));
        self.watchdog_bit_times_x16.next = (self.watchdog_us.val() << 11)
            + (self.watchdog_us.val() << 10)
            + (self.watchdog_us.val() << 5)
            + (self.watchdog_us.val() << 4)
            + (self.watchdog_us.val() << 2)
            + self.watchdog_us.val();

        // Writes: each register keeps the bits it implements, and its
        // converted copy what its converter makes of them.
        if self.write.val() {
            if self.write_dword.val() == self.at_enable.val() {
                self.enable.d.next = self.write_data.val().get_bits::<2>(0);
            }
            if self.write_dword.val() == self.at_min_time_between_cnps.val() {
                self.min_time_between_cnps.d.next = self.write_data.val().get_bits::<20>(0);
                self.np_interval.d.next = self.in_cycles.val();
            }
            if self.write_dword.val() == self.at_cnp_dscp.val() {
                self.cnp_dscp_value.d.next = self.write_data.val().get_bits::<6>(0);
            }
            if self.write_dword.val() == self.at_rpg_time_reset.val() {
                self.rpg_time_reset.d.next = self.write_data.val().get_bits::<20>(0);
                self.rp_rate_period.d.next = self.in_cycles.val();
            }
            if self.write_dword.val() == self.at_rpg_byte_reset.val() {
                self.rpg_byte_reset.d.next = self.write_data.val();
            }
            if self.write_dword.val() == self.at_rpg_threshold.val() {
                self.rpg_threshold.d.next = self.write_data.val().get_bits::<5>(0);
            }
            if self.write_dword.val() == self.at_rpg_ai_rate.val() {
                self.rpg_ai_rate.d.next = self.write_data.val().get_bits::<20>(0);
                self.rp_ai_rate.d.next = self.in_kbps.val();
            }
            if self.write_dword.val() == self.at_rpg_hai_rate.val() {
                self.rpg_hai_rate.d.next = self.write_data.val().get_bits::<20>(0);
                self.rp_hai_rate.d.next = self.in_kbps.val();
            }
            if self.write_dword.val() == self.at_rpg_gd.val() {
                self.rpg_gd.d.next = self.write_data.val().get_bits::<5>(0);
                self.rp_gd.d.next = self.gd_shift.val();
            }
            if self.write_dword.val() == self.at_rpg_min_dec_fac.val() {
                self.rpg_min_dec_fac.d.next = self.write_data.val().get_bits::<7>(0);
                self.rp_min_dec_fac.d.next = self.percent_to_q16.data.val();
            }
            if self.write_dword.val() == self.at_rpg_min_rate.val() {
                self.rpg_min_rate.d.next = self.write_data.val().get_bits::<20>(0);
                self.rp_min_rate.d.next = self.in_kbps.val();
            }
            if self.write_dword.val() == self.at_dce_tcp_g.val() {
                self.dce_tcp_g.d.next = self.write_data.val().get_bits::<10>(0);
                self.rp_g.d.next = (bits::<16>(1024)
                    - bit_cast::<16, 10>(self.write_data.val().get_bits::<10>(0)))
                    << 5;
            }
            if self.write_dword.val() == self.at_dce_tcp_rtt.val() {
                self.dce_tcp_rtt.d.next = self.write_data.val().get_bits::<20>(0);
                self.rp_alpha_period.d.next = self.in_cycles.val();
            }
            if self.write_dword.val() == self.at_rate_reduce_monitor_period.val() {
                self.rate_reduce_monitor_period.d.next = self.write_data.val().get_bits::<20>(0);
                self.rp_monitor_period.d.next = self.in_cycles.val();
            }
            if self.write_dword.val() == self.at_initial_alpha_value.val() {
                self.initial_alpha_value.d.next = self.write_data.val().get_bits::<11>(0);
                self.rp_initial_alpha.d.next = self.alpha_1024ths.val() << 5;
            }
            if self.write_dword.val() == self.at_pfc_enable.val() {
                self.pfc_enable.d.next = self.write_data.val().get_bits::<8>(0);
            }
            if self.write_dword.val() == self.at_pfc_watchdog.val() {
                self.pfc_watchdog.d.next = self.write_data.val().get_bits::<24>(0);
                self.pfc_watchdog_quanta.d.next =
                    self.watchdog_bit_times_x16.val().get_bits::<32>(4);
            }
        }

        // Reads, one cycle after the dword is presented.
        self.read_data.d.next = bits::<32>(0);
        if self.read_dword.val() == self.at_enable.val() {
            self.read_data.d.next = bit_cast::<32, 2>(self.enable.q.val());
        }
        if self.read_dword.val() == self.at_min_time_between_cnps.val() {
            self.read_data.d.next = bit_cast::<32, 20>(self.min_time_between_cnps.q.val());
        }
        if self.read_dword.val() == self.at_cnp_dscp.val() {
            self.read_data.d.next = bit_cast::<32, 6>(self.cnp_dscp_value.q.val());
        }
        if self.read_dword.val() == self.at_rpg_time_reset.val() {
            self.read_data.d.next = bit_cast::<32, 20>(self.rpg_time_reset.q.val());
        }
        if self.read_dword.val() == self.at_rpg_byte_reset.val() {
            self.read_data.d.next = self.rpg_byte_reset.q.val();
        }
        if self.read_dword.val() == self.at_rpg_threshold.val() {
            self.read_data.d.next = bit_cast::<32, 5>(self.rpg_threshold.q.val());
        }
        if self.read_dword.val() == self.at_rpg_ai_rate.val() {
            self.read_data.d.next = bit_cast::<32, 20>(self.rpg_ai_rate.q.val());
        }
        if self.read_dword.val() == self.at_rpg_hai_rate.val() {
            self.read_data.d.next = bit_cast::<32, 20>(self.rpg_hai_rate.q.val());
        }
        if self.read_dword.val() == self.at_rpg_gd.val() {
            self.read_data.d.next = bit_cast::<32, 5>(self.rpg_gd.q.val());
        }
        if self.read_dword.val() == self.at_rpg_min_dec_fac.val() {
            self.read_data.d.next = bit_cast::<32, 7>(self.rpg_min_dec_fac.q.val());
        }
        if self.read_dword.val() == self.at_rpg_min_rate.val() {
            self.read_data.d.next = bit_cast::<32, 20>(self.rpg_min_rate.q.val());
        }
        if self.read_dword.val() == self.at_dce_tcp_g.val() {
            self.read_data.d.next = bit_cast::<32, 10>(self.dce_tcp_g.q.val());
        }
        if self.read_dword.val() == self.at_dce_tcp_rtt.val() {
            self.read_data.d.next = bit_cast::<32, 20>(self.dce_tcp_rtt.q.val());
        }
        if self.read_dword.val() == self.at_rate_reduce_monitor_period.val() {
            self.read_data.d.next = bit_cast::<32, 20>(self.rate_reduce_monitor_period.q.val());
        }
        if self.read_dword.val() == self.at_initial_alpha_value.val() {
            self.read_data.d.next = bit_cast::<32, 11>(self.initial_alpha_value.q.val());
        }
        if self.read_dword.val() == self.at_pfc_enable.val() {
            self.read_data.d.next = bit_cast::<32, 8>(self.pfc_enable.q.val());
        }
        if self.read_dword.val() == self.at_pfc_watchdog.val() {
            self.read_data.d.next = bit_cast::<32, 24>(self.pfc_watchdog.q.val());
        }
        self.read_value.next = self.read_data.q.val();

        self.np.enabled.next = self.enable.q.val().get_bit(0);
        self.np.interval.next = self.np_interval.q.val();
        self.cnp_dscp.next = self.cnp_dscp_value.q.val();
        self.rp.enabled.next = self.enable.q.val().get_bit(1);
        self.rp.line_rate.next = self.line_rate.val();
        self.rp.min_rate.next = self.rp_min_rate.q.val();
        self.rp.ai_rate.next = self.rp_ai_rate.q.val();
        self.rp.hai_rate.next = self.rp_hai_rate.q.val();
        self.rp.g.next = self.rp_g.q.val();
        self.rp.gd.next = self.rp_gd.q.val();
        self.rp.min_dec_fac.next = self.rp_min_dec_fac.q.val();
        self.rp.initial_alpha.next = self.rp_initial_alpha.q.val();
        self.rp.alpha_period.next = self.rp_alpha_period.q.val();
        self.rp.rate_period.next = self.rp_rate_period.q.val();
        self.rp.byte_reset.next = self.rpg_byte_reset.q.val();
        self.rp.threshold.next = bit_cast::<8, 5>(self.rpg_threshold.q.val());
        self.rp.monitor_period.next = self.rp_monitor_period.q.val();
        self.pfc.honoured.next = self.pfc_enable.q.val();
        self.pfc.bits_per_cycle.next = self.bits_per_cycle.val();
        self.pfc.watchdog_quanta.next = self.pfc_watchdog_quanta.q.val();

        if self.reset.val() {
            self.enable.d.next = self.reset_enable.val();
            self.min_time_between_cnps.d.next = self.reset_min_time_between_cnps.val();
            self.cnp_dscp_value.d.next = self.reset_cnp_dscp.val();
            self.rpg_time_reset.d.next = self.reset_rpg_time_reset.val();
            self.rpg_byte_reset.d.next = self.reset_rpg_byte_reset.val();
            self.rpg_threshold.d.next = self.reset_rpg_threshold.val();
            self.rpg_ai_rate.d.next = self.reset_rpg_ai_rate.val();
            self.rpg_hai_rate.d.next = self.reset_rpg_hai_rate.val();
            self.rpg_gd.d.next = self.reset_rpg_gd.val();
            self.rpg_min_dec_fac.d.next = self.reset_rpg_min_dec_fac.val();
            self.rpg_min_rate.d.next = self.reset_rpg_min_rate.val();
            self.dce_tcp_g.d.next = self.reset_dce_tcp_g.val();
            self.dce_tcp_rtt.d.next = self.reset_dce_tcp_rtt.val();
            self.rate_reduce_monitor_period.d.next = self.reset_rate_reduce_monitor_period.val();
            self.initial_alpha_value.d.next = self.reset_initial_alpha_value.val();
            self.pfc_enable.d.next = self.reset_pfc_enable.val();
            self.pfc_watchdog.d.next = self.reset_pfc_watchdog.val();
            self.np_interval.d.next = self.reset_np_interval.val();
            self.rp_min_rate.d.next = self.reset_rp_min_rate.val();
            self.rp_ai_rate.d.next = self.reset_rp_ai_rate.val();
            self.rp_hai_rate.d.next = self.reset_rp_hai_rate.val();
            self.rp_g.d.next = self.reset_rp_g.val();
            self.rp_gd.d.next = self.reset_rp_gd.val();
            self.rp_min_dec_fac.d.next = self.reset_rp_min_dec_fac.val();
            self.rp_initial_alpha.d.next = self.reset_rp_initial_alpha.val();
            self.rp_alpha_period.d.next = self.reset_rp_alpha_period.val();
            self.rp_rate_period.d.next = self.reset_rp_rate_period.val();
            self.rp_monitor_period.d.next = self.reset_rp_monitor_period.val();
            self.pfc_watchdog_quanta.d.next = self.reset_pfc_watchdog_quanta.val();
        }
    }
}
