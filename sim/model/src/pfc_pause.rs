//! The NIC's side of priority flow control (IEEE 802.1Qbb) on receive,
//! clock cycle by clock cycle, as the RTL block `congestion::pfc_pause`
//! computes it (its oracle, bit for bit): a pause timer per priority
//! loaded from received PFC frames and counted down in quanta of 512 bit
//! times, and a watchdog that stops honouring a pause that never ends.
//!
//! # Time
//!
//! A quantum is 512 bit times of the link. A 10-bit fraction gains
//! `bits_per_cycle` every cycle (400 for 100 Gb/s at 250 MHz); in a cycle
//! in which it reaches 512, one quantum passes and 512 is taken off. So a
//! pause of `q` quanta lasts `q * 512 / bits_per_cycle` cycles, to within
//! one cycle. `bits_per_cycle` is at most 512 (one quantum per cycle).
//!
//! # Per priority, at every clock edge
//!
//! - A PFC frame whose first beat arrived in the cycle and whose
//!   class-enable bit for the priority is set, on a priority the NIC
//!   honours, loads the timer with the frame's time (0 ends the pause);
//!   otherwise a quantum that passes takes one off a running timer.
//! - The watchdog counts the quanta a pause has lasted without a break
//!   (refreshes by the peer do not break it; the timer reaching 0 does).
//!   When the count reaches `watchdog_quanta` (0: no watchdog), the
//!   priority trips: one pulse on `trips`, and the pause is no longer
//!   honoured until the peer's pause ends (the timer reaches 0, by an XON
//!   or by running out), after which the priority is watched afresh.
//! - `paused` (transmit must not start a frame of the priority): the
//!   timer runs and the priority has not tripped.
//!
//! Outputs are registered: what a frame or an edge changes shows from the
//! next cycle.

use rocenic_wire::pfc::PfcFrame;
use serde::Serialize;

/// The fraction's width: the RTL's.
const FRACTION_MASK: u16 = 0x3FF;
/// Bit times in one quantum.
const QUANTUM: u16 = 512;

/// The pause block's registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PfcParams {
    /// Priorities whose pauses are honoured (bit `i`: priority `i`).
    pub honoured: u8,
    /// Link bit times per clock cycle, 1..=512 (10 bits).
    pub bits_per_cycle: u16,
    /// Quanta of unbroken pause that trip the watchdog; 0: no watchdog.
    pub watchdog_quanta: u32,
}

impl PfcParams {
    /// The registers that make the block act as [`crate::link_pause`]
    /// does for a NIC of `config` clocked every `ns_per_cycle`: its
    /// honoured priorities, its link's bit times per cycle, its watchdog
    /// time in quanta (rounded down).
    pub fn for_nic(config: &crate::nic::NicConfig, ns_per_cycle: u64) -> PfcParams {
        let bit_ns = 1e9 / config.line_rate_bps;
        // Bit times first, so a whole number of quanta stays whole.
        let bit_times = config.pfc_watchdog_ns as f64 * config.line_rate_bps / 1e9;
        let quanta = (bit_times / f64::from(QUANTUM)).floor();
        PfcParams {
            honoured: config.pfc_honoured,
            bits_per_cycle: (ns_per_cycle as f64 / bit_ns).round() as u16,
            watchdog_quanta: quanta.min(f64::from(u32::MAX)) as u32,
        }
    }

    /// 100 Gb/s at 250 MHz, every priority honoured, a 100 ms watchdog
    /// (19,531,250 quanta).
    pub fn line_100g() -> PfcParams {
        PfcParams {
            honoured: 0xFF,
            bits_per_cycle: 400,
            watchdog_quanta: 19_531_250,
        }
    }
}

/// What the block shows in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PfcOutputs {
    /// Bit `i`: priority `i` is paused.
    pub paused: u8,
    /// Bit `i`: priority `i` has tripped the watchdog and its pause is
    /// ignored.
    pub tripped: u8,
    /// A PFC frame with a non-zero time for an honoured priority arrived
    /// in the cycle before (the `rx_pause_frames` counter's increment).
    pub pause_frame: bool,
    /// Bit `i`: priority `i` tripped at the last edge (the
    /// `pause_watchdog_trips` counter's increments).
    pub trips: u8,
}

/// The block's state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PfcPause {
    fraction: u16,
    timers: [u16; 8],
    stalled: [u32; 8],
    tripped: u8,
    pause_frame: bool,
    trips: u8,
}

impl PfcPause {
    pub fn new() -> PfcPause {
        PfcPause::default()
    }

    /// The outputs of the current cycle.
    pub fn outputs(&self) -> PfcOutputs {
        let running = (0..8).fold(0u8, |m, i| m | (u8::from(self.timers[i] != 0) << i));
        PfcOutputs {
            paused: running & !self.tripped,
            tripped: self.tripped,
            pause_frame: self.pause_frame,
            trips: self.trips,
        }
    }

    /// The clock edge that ends a cycle in which `frame` (a PFC frame whose
    /// first beat was taken in the cycle), or nothing, arrived.
    pub fn clock(&mut self, p: &PfcParams, frame: Option<&PfcFrame>) {
        let sum = self.fraction + (p.bits_per_cycle & FRACTION_MASK);
        let quantum = sum >= QUANTUM;
        self.fraction = (if quantum { sum - QUANTUM } else { sum }) & FRACTION_MASK;
        let loads = frame.map_or(0, |f| f.enable & p.honoured);
        self.pause_frame =
            frame.is_some_and(|f| (0..8).any(|i| loads >> i & 1 == 1 && f.quanta[i] != 0));
        self.trips = 0;
        for i in 0..8 {
            let bit = 1u8 << i;
            let running = self.timers[i] != 0;
            if !running {
                self.stalled[i] = 0;
                self.tripped &= !bit;
            } else {
                if p.watchdog_quanta != 0
                    && self.tripped & bit == 0
                    && self.stalled[i] >= p.watchdog_quanta
                {
                    self.tripped |= bit;
                    self.trips |= bit;
                }
                if quantum {
                    self.stalled[i] = self.stalled[i].saturating_add(1);
                }
            }
            self.timers[i] = match frame {
                Some(f) if loads & bit != 0 => f.quanta[i],
                _ if quantum && running => self.timers[i] - 1,
                _ => self.timers[i],
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pfc(enable: u8, quanta: u16) -> PfcFrame {
        PfcFrame {
            src_mac: [2, 0, 0, 0, 0, 1],
            enable,
            quanta: [quanta; 8],
        }
    }

    /// Cycles until priority 0's pause ends, from the cycle after `frame`.
    fn pause_cycles(p: &PfcParams, frame: &PfcFrame) -> u64 {
        let mut b = PfcPause::new();
        b.clock(p, Some(frame));
        let mut n = 0;
        while b.outputs().paused & 1 != 0 {
            b.clock(p, None);
            n += 1;
        }
        n
    }

    #[test]
    fn a_pause_lasts_its_quanta_at_the_link_rate() {
        let p = PfcParams::line_100g();
        // 1000 quanta = 512,000 bit times = 1280 cycles of 400 bits.
        let n = pause_cycles(&p, &pfc(1, 1000));
        assert!((1279..=1281).contains(&n), "{n} cycles");
        let slow = PfcParams {
            bits_per_cycle: 100,
            ..p
        };
        let n = pause_cycles(&slow, &pfc(1, 1000));
        assert!((5119..=5121).contains(&n), "{n} cycles");
        let one_per_cycle = PfcParams {
            bits_per_cycle: 512,
            ..p
        };
        assert_eq!(pause_cycles(&one_per_cycle, &pfc(1, 1000)), 1000);
    }

    #[test]
    fn only_enabled_and_honoured_priorities_pause_and_xon_ends_a_pause() {
        let p = PfcParams {
            honoured: 0b0000_1100,
            ..PfcParams::line_100g()
        };
        let mut b = PfcPause::new();
        b.clock(&p, Some(&pfc(0b0000_0110, 500)));
        assert_eq!(b.outputs().paused, 0b0000_0100);
        assert!(b.outputs().pause_frame);
        b.clock(&p, None);
        assert!(!b.outputs().pause_frame);
        b.clock(&p, Some(&pfc(0b0000_0100, 0)));
        assert_eq!(b.outputs().paused, 0);
        assert!(!b.outputs().pause_frame, "an XON is not a pause frame");
        b.clock(&p, Some(&pfc(0b0000_0011, 500)));
        assert_eq!(b.outputs().paused, 0);
        assert!(!b.outputs().pause_frame);
    }

    #[test]
    fn the_watchdog_trips_a_storm_and_lets_other_priorities_pause() {
        let p = PfcParams {
            watchdog_quanta: 3000,
            bits_per_cycle: 512,
            ..PfcParams::line_100g()
        };
        let mut b = PfcPause::new();
        let mut trips = 0;
        // Priority 3 refreshed forever; priority 5 paused now and then.
        for c in 0..20_000u32 {
            let frame = match c % 1000 {
                0 => Some(pfc(1 << 3, 0xFFFF)),
                500 if c % 4000 == 500 => Some(pfc(1 << 5, 100)),
                _ => None,
            };
            b.clock(&p, frame.as_ref());
            let out = b.outputs();
            trips += out.trips.count_ones();
            if c > 3100 {
                assert_eq!(out.tripped, 1 << 3, "cycle {c}");
                assert_eq!(
                    out.paused & 1 << 3,
                    0,
                    "cycle {c}: the storm still honoured"
                );
            }
            if c % 4000 == 520 {
                assert_ne!(out.paused & 1 << 5, 0, "cycle {c}: priority 5 not paused");
            }
        }
        assert_eq!(trips, 1);
        // The peer stops: an XON clears the trip and the watch restarts.
        b.clock(&p, Some(&pfc(1 << 3, 0)));
        b.clock(&p, None);
        assert_eq!(b.outputs().tripped, 0);
        b.clock(&p, Some(&pfc(1 << 3, 10)));
        assert_eq!(b.outputs().paused, 1 << 3);
    }

    #[test]
    fn no_watchdog_honours_a_storm_forever() {
        let p = PfcParams {
            watchdog_quanta: 0,
            bits_per_cycle: 512,
            ..PfcParams::line_100g()
        };
        let mut b = PfcPause::new();
        for c in 0..200_000u32 {
            let frame = (c % 60_000 == 0).then(|| pfc(1, 0xFFFF));
            b.clock(&p, frame.as_ref());
            assert_eq!(b.outputs().paused & 1, 1, "cycle {c}");
        }
        assert_eq!(b.outputs().tripped, 0);
    }
}
