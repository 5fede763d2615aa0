//! Per-QP rate pacing on transmit, as the RTL block
//! `congestion::pacing_gate` computes it (its oracle, bit for bit): each
//! QP has a rate (DCQCN's Rc, kb/s) and a token count; a QP may start a
//! frame while its count is not negative, and the frame's bytes are then
//! taken off, so over any run a backlogged QP sends at its rate to within
//! one frame and a deficit is paid back before the next frame.
//!
//! # Units
//!
//! Time is clock cycles (32-bit, wrapping). A token is `1 / (cycles per
//! second / 1000)` bit, so that a QP at `r` kb/s gains exactly `r` tokens
//! per cycle: no division anywhere. A byte costs `byte_cost = 8 x cycles
//! per second / 1000` tokens (2,000,000 at 250 MHz).
//!
//! # Per event
//!
//! Every event first brings the QP's count up to `now`: `r x min(now -
//! last, 65535)` tokens more, capped at `burst` (the credit an idle QP
//! may bank), where `r` is the rate of a throttled QP (`0 < r <
//! line_rate`) and `line_rate` for an unthrottled one (rate 0, the state
//! after a reset, or at least `line_rate`), which sends whenever asked.
//! Then:
//!
//! - [`PacingEvent::Send`]`(bytes)`: may the QP start a frame of `bytes`
//!   now? Yes if unthrottled or its count is not negative; if so the QP
//!   pays `bytes x byte_cost`.
//! - [`PacingEvent::Charge`]`(bytes)`: the QP pays `bytes x byte_cost`
//!   whatever its count: a frame of a grant (a scheduler that asks with
//!   `Send(0)` before a grant of several frames charges its frames when
//!   they are decided).
//! - [`PacingEvent::Rate`]`(r)`: the QP's rate from now on (its count as
//!   earned at the old rate; an unthrottled QP's at most 0).
//! - [`PacingEvent::Reset`]: the QP back to unthrottled, count 0.
//!
//! An unthrottled QP is counted at the line rate, though never held, so
//! that when a cut throttles it, its count already holds what it has
//! decided ahead of the wire: a transmit path that decides frames while
//! earlier ones still wait for the wire has that many bytes out at the
//! line rate after the cut, and the QP pays them back at its new rate
//! before its next grant; the credit it banked at the line rate goes at
//! the cut, as an idle QP's would have. (Counted at 0 instead, a sender whose first
//! cut found eight MTU-4096 frames decided sent 33 KB it was never
//! charged for, and an incast of four such senders cut deeper than the
//! model's.) The count stays between `burst` and minus the bytes the
//! transmit path can hold decided.
//!
//! Elapsed time counts at most 65,535 cycles (262 us at 250 MHz) per
//! event: a backlogged QP must be asked at least that often, or it earns
//! less than its rate (a scheduler that asks every QP with work in turn
//! asks each of 1024 QPs every 1024 cycles at the latest). A QP silent
//! for a multiple of 2^32 cycles earns as if the silence were shorter by
//! it, at most `burst` too little.
//!
//! # Widths
//!
//! Rates and `line_rate` are 32 bits, `byte_cost` 32, `burst` 47, `bytes`
//! 16. The count is 52-bit two's complement: it stays in `[-2^48, 2^47)`
//! while the charges a QP owes at once stay under 2^48 (one is under
//! 2^40; the transmit path holds a few), and the sums before the cap stay
//! under 2^49, so no step overflows.

use serde::Serialize;

/// The count's bits (two's complement).
pub const TOKEN_BITS: u32 = 52;
/// Bits of `burst`.
pub const BURST_BITS: u32 = 47;
/// The most cycles one event counts.
pub const MAX_ELAPSED: u32 = 0xFFFF;

/// Tokens per byte at a clock of `hz`: 8 x hz / 1000.
pub const fn byte_cost_at(hz: u64) -> u32 {
    (8 * hz / 1000) as u32
}

/// The block's parameters (registers, the RTL's `cfg$...` signals).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PacingParams {
    /// kb/s; a rate at or above it is not paced.
    pub line_rate: u32,
    /// Tokens per byte: [`byte_cost_at`] the clock.
    pub byte_cost: u32,
    /// The largest count an idle QP keeps (47 bits).
    pub burst: u64,
}

impl PacingParams {
    /// 100 Gb/s at 250 MHz, and two 4 KiB frames' worth of credit.
    pub fn line_100g() -> PacingParams {
        PacingParams::for_line(100e9, 250_000_000)
    }

    /// A line of `line_rate_bps` on a clock of `hz`, and two 4 KiB frames'
    /// worth of credit.
    pub fn for_line(line_rate_bps: f64, hz: u64) -> PacingParams {
        let byte_cost = byte_cost_at(hz);
        PacingParams {
            line_rate: (line_rate_bps / 1e3).round().min(f64::from(u32::MAX)) as u32,
            byte_cost,
            burst: 2 * 4096 * u64::from(byte_cost),
        }
    }
}

/// One QP's state (the RTL's record word).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PacingRecord {
    /// kb/s; 0: not set (unthrottled).
    pub rate: u32,
    /// Two's complement in the low [`TOKEN_BITS`] bits.
    pub tokens: u64,
    /// The cycle the count was brought up to.
    pub last: u32,
}

impl PacingRecord {
    /// The count as a signed number.
    pub fn token_count(&self) -> i64 {
        ((self.tokens << (64 - TOKEN_BITS)) as i64) >> (64 - TOKEN_BITS)
    }
}

/// What happens to a QP, at a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacingEvent {
    /// May the QP start a frame of this many bytes?
    Send(u16),
    /// A frame of this many bytes left: a throttled QP pays for it.
    Charge(u16),
    /// The QP's rate (kb/s) from now on.
    Rate(u32),
    /// The QP unthrottled, its count 0.
    Reset,
}

/// An event's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PacingOutcome {
    pub record: PacingRecord,
    /// A `Send` granted.
    pub allowed: bool,
}

fn to_bits(count: i64) -> u64 {
    count as u64 & ((1 << TOKEN_BITS) - 1)
}

/// The event at cycle `now` on a QP whose state was `record`.
pub fn pace(
    p: &PacingParams,
    record: &PacingRecord,
    event: PacingEvent,
    now: u32,
) -> PacingOutcome {
    let throttled = record.rate != 0 && record.rate < p.line_rate;
    let elapsed = now.wrapping_sub(record.last).min(MAX_ELAPSED);
    let burst = (p.burst & ((1 << BURST_BITS) - 1)) as i64;
    let earning = if throttled { record.rate } else { p.line_rate };
    let earned = (record.token_count() + i64::from(earning) * i64::from(elapsed)).min(burst);
    let (record, allowed) = match event {
        PacingEvent::Reset => (PacingRecord::default(), false),
        PacingEvent::Rate(rate) => (
            PacingRecord {
                rate,
                // A QP counted at the line rate keeps its debt, not its
                // credit: it starts its new rate with no more than 0.
                tokens: to_bits(if throttled { earned } else { earned.min(0) }),
                last: now,
            },
            false,
        ),
        PacingEvent::Send(bytes) | PacingEvent::Charge(bytes) => {
            let send = matches!(event, PacingEvent::Send(_));
            let allowed = send && (!throttled || earned >= 0);
            let paid = if allowed || !send {
                earned - i64::from(bytes) * i64::from(p.byte_cost)
            } else {
                earned
            };
            (
                PacingRecord {
                    rate: record.rate,
                    tokens: to_bits(paid),
                    last: now,
                },
                allowed,
            )
        }
    };
    PacingOutcome { record, allowed }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `qps` backlogged QPs asked in turn, one per cycle, each granted
    /// frame holding the link for its wire time; the bytes each sent.
    fn run(p: &PacingParams, rates: &[u32], frame: u16, cycles: u32) -> Vec<u64> {
        let mut records: Vec<PacingRecord> = rates
            .iter()
            .map(|&r| pace(p, &PacingRecord::default(), PacingEvent::Rate(r), 0).record)
            .collect();
        let mut sent = vec![0u64; rates.len()];
        // 100 Gb/s: 400 bits a cycle.
        let frame_cycles = (u32::from(frame) * 8).div_ceil(400);
        let mut busy_until = 0;
        let mut next = 0;
        for now in 1..cycles {
            if now < busy_until {
                continue;
            }
            let q = next;
            next = (next + 1) % rates.len();
            let o = pace(p, &records[q], PacingEvent::Send(frame), now);
            records[q] = o.record;
            if o.allowed {
                sent[q] += u64::from(frame);
                busy_until = now + frame_cycles;
            }
        }
        sent
    }

    #[test]
    fn backlogged_qps_send_at_their_rates() {
        let p = PacingParams::line_100g();
        // 1024 QPs from 10 Mb/s to 70 Mb/s: about 41 Gb/s together, under
        // the link's 100, so each is held back by its own rate only. The
        // slowest sends about 122 frames in the run, so one frame more or
        // less is within 1 %.
        let rates: Vec<u32> = (0..1024u32)
            .map(|q| 10_000 + (q * 57_637) % 60_000)
            .collect();
        let cycles = 250_000_000 / 10; // 100 ms
        let sent = run(&p, &rates, 1024, cycles);
        for (q, (&r, &bytes)) in rates.iter().zip(&sent).enumerate() {
            let want = f64::from(r) * 1e3 * 0.1 / 8.0;
            let err = (bytes as f64 - want).abs() / want;
            assert!(
                err < 0.01,
                "QP {q} at {r} kb/s: {bytes} bytes, {want} wanted"
            );
        }
    }

    #[test]
    fn an_unthrottled_qp_is_never_held() {
        let p = PacingParams::line_100g();
        let mut r = PacingRecord::default();
        for now in 0..1000 {
            let o = pace(&p, &r, PacingEvent::Send(u16::MAX), now);
            assert!(o.allowed);
            r = o.record;
        }
        assert!(r.token_count() < 0);
        let r = pace(&p, &r, PacingEvent::Rate(p.line_rate), 1000).record;
        assert!(pace(&p, &r, PacingEvent::Send(9000), 1000).allowed);
    }

    #[test]
    fn a_cut_finds_the_bytes_decided_ahead_of_the_line() {
        let p = PacingParams::line_100g();
        // Two 4,158-byte frames decided at cycle 0 hold a 100 Gb/s line
        // (400 bits a cycle) for 166.32 cycles; cut to 10 Gb/s at cycle
        // 10, the QP owes the 156.32 cycles of line time not yet earned,
        // and pays them at 40 bits a cycle: 1563.2 cycles.
        let r = pace(
            &p,
            &PacingRecord::default(),
            PacingEvent::Charge(2 * 4158),
            0,
        )
        .record;
        assert_eq!(r.token_count(), -2 * 4158 * i64::from(p.byte_cost));
        let cut = pace(&p, &r, PacingEvent::Rate(10_000_000), 10).record;
        assert_eq!(
            cut.token_count(),
            r.token_count() + 10 * i64::from(p.line_rate)
        );
        assert!(!pace(&p, &cut, PacingEvent::Send(0), 10 + 1563).allowed);
        assert!(pace(&p, &cut, PacingEvent::Send(0), 10 + 1564).allowed);
        // Left alone, an unthrottled QP banks no more than `burst`, and
        // loses it when a rate throttles it.
        let idle = pace(&p, &r, PacingEvent::Send(0), 60_000).record;
        assert_eq!(idle.token_count(), p.burst as i64);
        let slowed = pace(&p, &idle, PacingEvent::Rate(10_000_000), 60_001).record;
        assert_eq!(slowed.token_count(), 0);
    }

    /// A QP set to 10 Gb/s (40 bits a cycle) at cycle 0.
    fn at_10_gbps(p: &PacingParams) -> PacingRecord {
        pace(
            p,
            &PacingRecord::default(),
            PacingEvent::Rate(10_000_000),
            0,
        )
        .record
    }

    #[test]
    fn a_deficit_is_paid_back_before_the_next_frame() {
        let p = PacingParams::line_100g();
        // A 1000-byte frame costs 200 cycles.
        let r = at_10_gbps(&p);
        let o = pace(&p, &r, PacingEvent::Send(1000), 0);
        assert!(o.allowed);
        assert_eq!(o.record.token_count(), -2_000_000_000);
        assert!(!pace(&p, &o.record, PacingEvent::Send(1000), 199).allowed);
        assert!(pace(&p, &o.record, PacingEvent::Send(1000), 200).allowed);
    }

    #[test]
    fn charges_are_paid_whatever_the_count() {
        let p = PacingParams::line_100g();
        // A question of 0 bytes allowed, then two 1000-byte frames
        // charged: 400 cycles of debt, paid back by cycle 400.
        let r = at_10_gbps(&p);
        let asked = pace(&p, &r, PacingEvent::Send(0), 0);
        assert!(asked.allowed);
        assert_eq!(asked.record.token_count(), 0);
        let once = pace(&p, &asked.record, PacingEvent::Charge(1000), 1);
        let twice = pace(&p, &once.record, PacingEvent::Charge(1000), 2);
        assert!(!once.allowed && !twice.allowed);
        assert_eq!(twice.record.token_count(), 20_000_000 - 4_000_000_000);
        assert!(!pace(&p, &twice.record, PacingEvent::Send(0), 399).allowed);
        assert!(pace(&p, &twice.record, PacingEvent::Send(0), 400).allowed);
        // An unthrottled QP is charged too, and earns at the line rate.
        let free = pace(&p, &PacingRecord::default(), PacingEvent::Charge(9000), 7);
        assert_eq!(
            free.record.token_count(),
            7 * i64::from(p.line_rate) - 9000 * i64::from(p.byte_cost)
        );
    }

    #[test]
    fn idle_credit_is_capped_at_the_burst() {
        let p = PacingParams::line_100g();
        let r = pace(
            &p,
            &PacingRecord::default(),
            PacingEvent::Rate(50_000_000),
            0,
        )
        .record;
        let r = pace(&p, &r, PacingEvent::Rate(50_000_000), 60_000).record;
        assert_eq!(r.token_count(), p.burst as i64);
        // Longer than 65,535 cycles counts as 65,535.
        let slow = pace(&p, &PacingRecord::default(), PacingEvent::Rate(1), 0).record;
        let later = pace(&p, &slow, PacingEvent::Rate(1), 1 << 20).record;
        assert_eq!(later.token_count(), 65_535);
    }
}
