//! Timer durations of the RC requester, from their wire and attribute
//! encodings: the local ACK timeout (QP attribute `timeout`) and the RNR
//! wait (the timer field of an RNR NAK). The model's completer and
//! requester use these, and the RTL timer block's tests check its duration
//! table against them.

use crate::Time;

/// Local ACK timeout for attribute code `code` (0..=31): 4.096 us * 2^code,
/// `None` for code 0 (wait forever; IBA 9.7.6.1.3).
pub fn ack_timeout_ns(code: u8) -> Option<Time> {
    match code & 31 {
        0 => None,
        c => Some(4096u64 << c),
    }
}

/// RNR NAK timer code (0..=31) in ns (IBA table 45). Code
/// 0 is the longest wait, 655.36 ms.
pub fn rnr_timer_ns(code: u8) -> Time {
    // In units of 0.01 ms.
    const UNITS: [u64; 32] = [
        65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
        1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
    ];
    UNITS[usize::from(code & 31)] * 10_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_follow_the_reference_card() {
        assert_eq!(ack_timeout_ns(0), None);
        assert_eq!(ack_timeout_ns(1), Some(8_192));
        assert_eq!(ack_timeout_ns(14), Some(67_108_864));
        // The longest local ACK timeout is about 2.44 hours.
        assert_eq!(ack_timeout_ns(31), Some(4096 << 31));
        assert_eq!(rnr_timer_ns(0), 655_360_000);
        assert_eq!(rnr_timer_ns(1), 10_000);
        assert_eq!(rnr_timer_ns(14), 1_280_000);
        assert_eq!(rnr_timer_ns(31), 491_520_000);
    }
}
