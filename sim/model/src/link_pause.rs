//! The model NIC's side of priority flow control in fabric time
//! (nanoseconds): the rules [`crate::pfc_pause`] applies cycle by cycle for
//! the RTL, for the NIC on the fabric.
//!
//! Per priority: a PFC frame whose class-enable bit is set, on a priority
//! the NIC honours, pauses it for the frame's time (quanta of 512 bit times
//! at the link rate) from the frame's arrival, or ends the pause (time 0,
//! XON). The watchdog measures how long a pause has lasted without a break
//! (refreshes do not break it; its end does); once that reaches the
//! watchdog time, the priority trips once and its pause is no longer
//! honoured until the peer's pause ends, after which it is watched afresh.

use crate::Time;
use rocenic_wire::pfc::{PfcFrame, QUANTUM_BITS};

const PRIORITIES: usize = 8;

/// The pause state of one link's receive side.
#[derive(Clone, Debug, Default)]
pub struct LinkPause {
    /// When each priority's pause ends (in the past: not paused).
    until: [Time; PRIORITIES],
    /// When the current unbroken pause began.
    since: [Option<Time>; PRIORITIES],
    tripped: [bool; PRIORITIES],
}

impl LinkPause {
    /// Takes a PFC frame that arrived at `now` on a link of `rate_bps`;
    /// `honoured` has bit `i` set for each priority whose pauses count.
    pub fn on_frame(&mut self, now: Time, frame: &PfcFrame, rate_bps: f64, honoured: u8) {
        for (p, &quanta) in frame.quanta.iter().enumerate() {
            if frame.enable & honoured & (1 << p) == 0 {
                continue;
            }
            if quanta == 0 || self.until[p] <= now {
                // An XON, or a pause that ran out unseen: the next one is
                // watched afresh.
                self.end(p, now);
            }
            if quanta == 0 {
                continue;
            } else {
                let bits = u64::from(quanta) * QUANTUM_BITS;
                self.until[p] = now + (bits as f64 * 1e9 / rate_bps).ceil() as Time;
                self.since[p].get_or_insert(now);
            }
        }
    }

    /// Ends the pauses that ran out by `now` and trips the watchdog of
    /// those that lasted `watchdog_ns` (0: no watchdog). Returns how many
    /// priorities tripped.
    pub fn advance(&mut self, now: Time, watchdog_ns: Time) -> u64 {
        let mut trips = 0;
        for p in 0..PRIORITIES {
            match self.since[p] {
                Some(_) if self.until[p] <= now => self.end(p, now),
                Some(since)
                    if watchdog_ns > 0 && !self.tripped[p] && now - since >= watchdog_ns =>
                {
                    self.tripped[p] = true;
                    trips += 1;
                }
                _ => {}
            }
        }
        trips
    }

    /// Whether transmit must not start a frame of `priority` at `now`.
    pub fn paused(&self, now: Time, priority: u8) -> bool {
        let p = usize::from(priority) % PRIORITIES;
        self.since[p].is_some() && self.until[p] > now && !self.tripped[p]
    }

    /// When `priority`'s state next changes by itself: its pause's end, or
    /// the watchdog's trip if sooner.
    pub fn next_change(&self, priority: u8, watchdog_ns: Time) -> Option<Time> {
        let p = usize::from(priority) % PRIORITIES;
        let since = self.since[p]?;
        let trip = (watchdog_ns > 0 && !self.tripped[p]).then_some(since + watchdog_ns);
        Some(trip.map_or(self.until[p], |t| t.min(self.until[p])))
    }

    fn end(&mut self, p: usize, now: Time) {
        self.until[p] = self.until[p].min(now);
        self.since[p] = None;
        self.tripped[p] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pfc(priority: usize, quanta: u16) -> PfcFrame {
        let mut f = PfcFrame {
            enable: 1 << priority,
            ..PfcFrame::default()
        };
        f.quanta[priority] = quanta;
        f
    }

    #[test]
    fn a_pause_lasts_its_quanta_at_the_link_rate() {
        let mut l = LinkPause::default();
        // 1000 quanta at 100 Gb/s: 5.12 us.
        l.on_frame(100, &pfc(3, 1000), 100e9, 0xFF);
        assert!(l.paused(100, 3) && l.paused(5_219, 3));
        assert!(!l.paused(5_220, 3));
        assert!(!l.paused(100, 2), "other priorities flow");
        assert_eq!(l.next_change(3, 0), Some(5_220));
        assert_eq!(l.advance(5_220, 0), 0);
        assert_eq!(l.next_change(3, 0), None);
    }

    #[test]
    fn xon_ends_a_pause_and_unhonoured_priorities_are_ignored() {
        let mut l = LinkPause::default();
        l.on_frame(0, &pfc(3, 0xFFFF), 100e9, 0xFF);
        l.on_frame(10, &pfc(3, 0), 100e9, 0xFF);
        assert!(!l.paused(10, 3));
        l.on_frame(20, &pfc(5, 0xFFFF), 100e9, !(1 << 5));
        assert!(!l.paused(20, 5));
    }

    #[test]
    fn the_watchdog_trips_once_on_an_endless_pause_and_rearms_after_it() {
        let mut l = LinkPause::default();
        let watchdog = 1_000_000;
        let mut trips = 0;
        // Refreshed every 100 us for 3 ms: trips at 1 ms, once.
        for t in (0..3_000_000).step_by(100_000) {
            trips += l.advance(t, watchdog);
            l.on_frame(t, &pfc(3, 0xFFFF), 100e9, 0xFF);
            assert_eq!(l.paused(t, 3), t < watchdog, "at {t}");
        }
        assert_eq!(trips, 1);
        assert_eq!(l.next_change(3, watchdog), Some(2_900_000 + 335_540));
        // XON ends it; the next pause is honoured and watched afresh.
        l.on_frame(3_000_000, &pfc(3, 0), 100e9, 0xFF);
        l.on_frame(3_000_010, &pfc(3, 0xFFFF), 100e9, 0xFF);
        assert!(l.paused(3_000_010, 3));
        assert_eq!(l.next_change(3, watchdog), Some(3_335_550));
        assert_eq!(l.advance(3_335_550, watchdog), 0);
        assert!(!l.paused(3_335_550, 3));
    }
}
