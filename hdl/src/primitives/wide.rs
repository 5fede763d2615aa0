//! Conversions between rust-hdl `Bits` and plain little-endian words and
//! bytes, and Verilog hex literals of any width.
//!
//! The simulation models of the custom-Verilog primitives and the
//! testbenches work on words and bytes; keeping the conversions here keeps
//! the rest of the crate independent of how rust-hdl stores wide values.

use rust_hdl::core::bitvec::BitVec;
use rust_hdl::prelude::*;

/// Bit `i` of `b` lands in bit `i % 64` of word `i / 64`.
pub fn bits_to_words<const N: usize>(b: Bits<N>) -> Vec<u64> {
    let mut words = vec![0u64; N.div_ceil(64)];
    for i in 0..N {
        if b.get_bit(i) {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    words
}

/// The inverse of [`bits_to_words`]; bits past `N` are ignored, missing
/// words read as zero.
pub fn bits_from_words<const N: usize>(words: &[u64]) -> Bits<N> {
    let bit = |i: usize| words.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0);
    if N <= 32 {
        let mut v = 0u64;
        for i in 0..N {
            if bit(i) {
                v |= 1 << i;
            }
        }
        v.into()
    } else {
        let mut flags = [false; N];
        for (i, f) in flags.iter_mut().enumerate() {
            *f = bit(i);
        }
        Bits::Long(BitVec::from(flags))
    }
}

/// Byte `k` of the result is bits `8k+7:8k` of `b` (the datapath's lane
/// order: byte 0 of a frame in bits 7:0).
pub fn bits_to_bytes<const N: usize>(b: Bits<N>) -> Vec<u8> {
    bits_to_words(b)
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take(N / 8)
        .collect()
}

/// The inverse of [`bits_to_bytes`]; missing bytes read as zero.
pub fn bits_from_bytes<const N: usize>(bytes: &[u8]) -> Bits<N> {
    let mut words = vec![0u64; N.div_ceil(64)];
    for (k, &byte) in bytes.iter().enumerate().take(N.div_ceil(8)) {
        words[k / 8] |= u64::from(byte) << (8 * (k % 8));
    }
    bits_from_words(&words)
}

/// A sized Verilog hex literal, e.g. `32'hdebb20e3`.
pub fn verilog_hex(width: usize, words: &[u64]) -> String {
    let digits = width.div_ceil(4);
    let mut hex = String::with_capacity(digits);
    for d in (0..digits).rev() {
        let nibble = words.get(d / 16).map_or(0, |w| (w >> (4 * (d % 16))) & 0xF);
        hex.push(char::from_digit(nibble as u32, 16).expect("nibble"));
    }
    format!("{width}'h{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_bytes_round_trip() {
        let words: Vec<u64> = (0..8)
            .map(|i| 0x0123_4567_89AB_CDEFu64.rotate_left(i))
            .collect();
        let b: Bits<512> = bits_from_words(&words);
        assert_eq!(bits_to_words(b), words);
        let bytes = bits_to_bytes(b);
        assert_eq!(bytes.len(), 64);
        assert_eq!(bytes[0], 0xEF);
        assert_eq!(bits_from_bytes::<512>(&bytes), b);
        let small: Bits<24> = bits_from_words(&[0xFFAB_CDEF]);
        assert_eq!(small, bits::<24>(0xAB_CDEF));
        assert_eq!(bits_to_words(small), vec![0xAB_CDEF]);
    }

    #[test]
    fn hex_literals_are_sized() {
        assert_eq!(verilog_hex(32, &[0xDEBB_20E3]), "32'hdebb20e3");
        assert_eq!(verilog_hex(6, &[5]), "6'h05");
        assert_eq!(verilog_hex(72, &[1, 0xAB]), "72'hab0000000000000001");
    }
}
