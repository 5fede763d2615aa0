//! `IcrcMask`: prepares the beats of a RoCEv2 frame for the ICRC, the
//! front stage shared by the ICRC checker (RX) and generator (TX).
//!
//! The ICRC (IBA Annex A17.3.3) covers the frame
//! from the IP header on, with the fields a router may change set to ones,
//! after 8 bytes of 0xFF. Here the frame keeps its Ethernet header (no
//! realignment): the 14 Ethernet bytes are zeroed, and the register the
//! CRC starts from is `A⁻¹⁴·R`, where `R` is the register after the eight
//! 0xFF bytes, so that 14 zero bytes bring it to exactly `R`. That start
//! value, and the contribution of every field forced to ones, are constants
//! folded into the beat's offset term; the masked fields themselves are
//! zeroed by a constant AND mask. Masked fields at fixed frame offsets:
//! IPv4 TOS (15), TTL (22), header checksum (24-25), UDP checksum (40-41),
//! BTH byte 4 (46); IPv6 traffic class and flow label (low nibble of 14,
//! 15-17), hop limit (21), UDP checksum (60-61) and BTH byte 4 (66, lane 2
//! of the second beat).
//!
//! Ports:
//! - `clock`, `reset` (synchronous), `advance` (clock enable);
//! - `beat_valid`, `beat_first` (beat 0 of a frame), `beat_ipv6`,
//!   `beat_end` (this beat holds the last covered byte), `beat_end_bytes`
//!   (6 bits: covered bytes of the end beat, 0 meaning all 64),
//!   `beat_data` (512, frame byte 0 in bits 7:0). Beats after the end beat
//!   must not be presented as valid;
//! - `masked_valid`, `masked_first`, `masked_data`, `masked_offset`,
//!   `masked_tag` (bit 6: end, bits 5:0: zero bytes filled in after the
//!   last covered byte): ready for [`crate::frame::crc::crc32_beat::Crc32Beat`].
//!
//! Latency: 1 advance. Throughput: one beat per cycle.

use crate::frame::crc::crc32_math::{
    beat_data_map, beat_words, undo_zero_bytes_map, zero_bytes_map, BEAT_BYTES, RESIDUE_REGISTER,
};
use crate::primitives::byte_lane_select::ByteLaneSelect;
use crate::primitives::wide::bits_from_words;
use rust_hdl::prelude::*;

/// Ethernet header bytes, not covered by the ICRC.
pub const ETH_BYTES: usize = 14;

/// Bits forced to ones, per frame byte, for the first beat of an IPv4
/// frame.
pub const IPV4_FIRST_ONES: &[(usize, u8)] = &[
    (15, 0xFF),
    (22, 0xFF),
    (24, 0xFF),
    (25, 0xFF),
    (40, 0xFF),
    (41, 0xFF),
    (46, 0xFF),
];
/// The same for the first beat of an IPv6 frame (the version nibble of byte
/// 14 stays covered).
pub const IPV6_FIRST_ONES: &[(usize, u8)] = &[
    (14, 0x0F),
    (15, 0xFF),
    (16, 0xFF),
    (17, 0xFF),
    (21, 0xFF),
    (60, 0xFF),
    (61, 0xFF),
];
/// The same for the second beat of an IPv6 frame: BTH byte 4 is frame byte
/// 66.
pub const IPV6_SECOND_ONES: &[(usize, u8)] = &[(2, 0xFF)];

/// The constants of the masking stage, as words and registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcrcConstants {
    pub ipv4_first_and: [u64; 8],
    pub ipv6_first_and: [u64; 8],
    pub ipv6_second_and: [u64; 8],
    pub ipv4_first_offset: u32,
    pub ipv6_first_offset: u32,
    pub ipv6_second_offset: u32,
}

fn ones_beat(ones: &[(usize, u8)]) -> [u8; BEAT_BYTES] {
    let mut beat = [0u8; BEAT_BYTES];
    for &(at, bits) in ones {
        beat[at] = bits;
    }
    beat
}

impl Default for IcrcConstants {
    fn default() -> Self {
        let data = beat_data_map();
        let term = |ones: &[(usize, u8)]| data.apply(&beat_words(&ones_beat(ones))) as u32;
        let and = |ones: &[(usize, u8)]| {
            let mut w = beat_words(&ones_beat(ones));
            w.iter_mut().for_each(|x| *x = !*x);
            w
        };
        // The register before beat 0 is A⁻¹⁴·R; after the whole beat that
        // contributes A⁶⁴·A⁻¹⁴·R.
        let start = undo_zero_bytes_map(ETH_BYTES).apply_u64(u64::from(RESIDUE_REGISTER));
        let start_term = zero_bytes_map(BEAT_BYTES).apply_u64(start) as u32;
        IcrcConstants {
            ipv4_first_and: and(IPV4_FIRST_ONES),
            ipv6_first_and: and(IPV6_FIRST_ONES),
            ipv6_second_and: and(IPV6_SECOND_ONES),
            ipv4_first_offset: start_term ^ term(IPV4_FIRST_ONES),
            ipv6_first_offset: start_term ^ term(IPV6_FIRST_ONES),
            ipv6_second_offset: term(IPV6_SECOND_ONES),
        }
    }
}

/// What the masking stage hands the CRC core for one beat, computed in
/// plain Rust: the software model of this block.
pub fn mask_beat(
    k: &IcrcConstants,
    beat: &[u8],
    index: usize,
    ipv6: bool,
    end_bytes: Option<usize>,
) -> ([u64; 8], u32) {
    let mut bytes = [0u8; BEAT_BYTES];
    let covered = end_bytes.unwrap_or(BEAT_BYTES).min(beat.len());
    bytes[..covered].copy_from_slice(&beat[..covered]);
    if index == 0 {
        bytes[..ETH_BYTES].iter_mut().for_each(|b| *b = 0);
    }
    let mut words = beat_words(&bytes);
    let (and, offset) = match (index, ipv6) {
        (0, false) => (Some(&k.ipv4_first_and), k.ipv4_first_offset),
        (0, true) => (Some(&k.ipv6_first_and), k.ipv6_first_offset),
        (1, true) => (Some(&k.ipv6_second_and), k.ipv6_second_offset),
        _ => (None, 0),
    };
    if let Some(and) = and {
        words.iter_mut().zip(and).for_each(|(w, m)| *w &= m);
    }
    (words, offset)
}

#[derive(LogicBlock)]
pub struct IcrcMask {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub advance: Signal<In, Bit>,
    pub beat_valid: Signal<In, Bit>,
    pub beat_first: Signal<In, Bit>,
    pub beat_ipv6: Signal<In, Bit>,
    pub beat_end: Signal<In, Bit>,
    pub beat_end_bytes: Signal<In, Bits<6>>,
    pub beat_data: Signal<In, Bits<512>>,
    pub masked_valid: Signal<Out, Bit>,
    pub masked_first: Signal<Out, Bit>,
    pub masked_data: Signal<Out, Bits<512>>,
    pub masked_offset: Signal<Out, Bits<32>>,
    pub masked_tag: Signal<Out, Bits<8>>,
    lanes: ByteLaneSelect<512, 64>,
    lane_keep: Signal<Local, Bits<64>>,
    end_fill: Signal<Local, Bits<6>>,
    field_and: Signal<Local, Bits<512>>,
    previous_was_first: DFF<Bit>,
    out_valid: DFF<Bit>,
    out_first: DFF<Bit>,
    out_data: DFF<Bits<512>>,
    out_offset: DFF<Bits<32>>,
    out_tag: DFF<Bits<8>>,
    ipv4_first_and: Constant<Bits<512>>,
    ipv6_first_and: Constant<Bits<512>>,
    ipv6_second_and: Constant<Bits<512>>,
    ipv4_first_offset: Constant<Bits<32>>,
    ipv6_first_offset: Constant<Bits<32>>,
    ipv6_second_offset: Constant<Bits<32>>,
    all_lanes: Constant<Bits<64>>,
    all_bits: Constant<Bits<512>>,
    payload_lanes_of_first_beat: Constant<Bits<64>>,
}

impl Default for IcrcMask {
    fn default() -> Self {
        let k = IcrcConstants::default();
        IcrcMask {
            clock: Default::default(),
            reset: Default::default(),
            advance: Default::default(),
            beat_valid: Default::default(),
            beat_first: Default::default(),
            beat_ipv6: Default::default(),
            beat_end: Default::default(),
            beat_end_bytes: Default::default(),
            beat_data: Default::default(),
            masked_valid: Default::default(),
            masked_first: Default::default(),
            masked_data: Default::default(),
            masked_offset: Default::default(),
            masked_tag: Default::default(),
            lanes: Default::default(),
            lane_keep: Default::default(),
            end_fill: Default::default(),
            field_and: Default::default(),
            previous_was_first: Default::default(),
            out_valid: Default::default(),
            out_first: Default::default(),
            out_data: Default::default(),
            out_offset: Default::default(),
            out_tag: Default::default(),
            ipv4_first_and: Constant::new(bits_from_words(&k.ipv4_first_and)),
            ipv6_first_and: Constant::new(bits_from_words(&k.ipv6_first_and)),
            ipv6_second_and: Constant::new(bits_from_words(&k.ipv6_second_and)),
            ipv4_first_offset: Constant::new(bits::<32>(u64::from(k.ipv4_first_offset))),
            ipv6_first_offset: Constant::new(bits::<32>(u64::from(k.ipv6_first_offset))),
            ipv6_second_offset: Constant::new(bits::<32>(u64::from(k.ipv6_second_offset))),
            all_lanes: Constant::new(bits_from_words(&[u64::MAX])),
            all_bits: Constant::new(bits_from_words(&[u64::MAX; 8])),
            payload_lanes_of_first_beat: Constant::new(bits_from_words(&[u64::MAX << ETH_BYTES])),
        }
    }
}

impl Logic for IcrcMask {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            previous_was_first,
            out_valid,
            out_first,
            out_data,
            out_offset,
            out_tag
        );
        // Covered lanes: all but the Ethernet header of beat 0, and on the
        // end beat only the bytes up to the last covered one.
        self.lane_keep.next = self.all_lanes.val();
        if self.beat_end.val() & (self.beat_end_bytes.val() != 0) {
            self.lane_keep.next = !(self.all_lanes.val() << self.beat_end_bytes.val());
        }
        if self.beat_first.val() {
            self.lane_keep.next = self.lane_keep.val() & self.payload_lanes_of_first_beat.val();
        }
        // Zero bytes filled in after the last covered byte: (64 - n) mod
        // 64, which is -n in six bits (the assignment truncates).
        self.end_fill.next = bits::<6>(0) - self.beat_end_bytes.val();
        self.lanes.when_set.next = self.beat_data.val();
        self.lanes.when_clear.next = 0.into();
        self.lanes.lane_select.next = self.lane_keep.val();
        self.field_and.next = self.all_bits.val();
        if self.beat_first.val() {
            if self.beat_ipv6.val() {
                self.field_and.next = self.ipv6_first_and.val();
            } else {
                self.field_and.next = self.ipv4_first_and.val();
            }
        } else if self.beat_ipv6.val() & self.previous_was_first.q.val() {
            self.field_and.next = self.ipv6_second_and.val();
        }
        if self.advance.val() {
            self.out_valid.d.next = self.beat_valid.val();
            self.out_first.d.next = self.beat_first.val();
            self.out_data.d.next = self.lanes.chosen.val() & self.field_and.val();
            self.out_offset.d.next = 0.into();
            if self.beat_first.val() {
                if self.beat_ipv6.val() {
                    self.out_offset.d.next = self.ipv6_first_offset.val();
                } else {
                    self.out_offset.d.next = self.ipv4_first_offset.val();
                }
            } else if self.beat_ipv6.val() & self.previous_was_first.q.val() {
                self.out_offset.d.next = self.ipv6_second_offset.val();
            }
            self.out_tag.d.next = 0.into();
            if self.beat_end.val() {
                self.out_tag.d.next = bit_cast::<8, 6>(self.end_fill.val()) | 64;
            }
            if self.beat_valid.val() {
                self.previous_was_first.d.next = self.beat_first.val();
            }
        }
        if self.reset.val() {
            self.out_valid.d.next = false;
            self.previous_was_first.d.next = false;
        }
        self.masked_valid.next = self.out_valid.q.val();
        self.masked_first.next = self.out_first.q.val();
        self.masked_data.next = self.out_data.q.val();
        self.masked_offset.next = self.out_offset.q.val();
        self.masked_tag.next = self.out_tag.q.val();
    }
}

#[cfg(test)]
#[path = "../../../tests/common/frames.rs"]
mod test_frames;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::crc::crc32_math::{padded_residues, BeatCrc, UndoStages};

    use super::test_frames as frames;

    /// Frame-level model of the whole hardware algorithm: masked beats,
    /// offsets, the beat core, then either the padded-residue compare or
    /// the undo stages. Fast, so it runs over many frames.
    #[test]
    fn beat_algorithm_reproduces_the_codec_icrc() {
        let k = IcrcConstants::default();
        let crc = BeatCrc::default();
        let undo = UndoStages::default();
        let residues = padded_residues();
        for frame in frames::icrc_frames() {
            let ipv6 = frame[12] == 0x86;
            let ip_len = if ipv6 { 40 } else { 20 };
            let end = frame.len();
            // Generator view: everything before the ICRC.
            let (state, fill) = run(&k, &crc, &frame[..end - 4], ipv6);
            let icrc = !undo.apply(state, fill);
            let wire = rocenic_wire::icrc::compute(&frame[ETH_BYTES..end - 4], ip_len)
                .expect("whole headers");
            assert_eq!(icrc, wire);
            assert_eq!(&icrc.to_le_bytes(), &frame[end - 4..]);
            // Checker view: the ICRC bytes included, compared to the table.
            let (state, fill) = run(&k, &crc, &frame, ipv6);
            assert_eq!(state, residues[fill]);
            // A flipped covered bit (the BTH opcode) misses the table.
            let mut bad = frame.clone();
            bad[ETH_BYTES + ip_len + 8] ^= 0x01;
            let (state, fill) = run(&k, &crc, &bad, ipv6);
            assert_ne!(state, residues[fill]);
        }
    }

    /// The register after `bytes` as the engine computes it (masking stage,
    /// then the beat core), and the zero bytes filled into the last beat.
    fn run(k: &IcrcConstants, crc: &BeatCrc, bytes: &[u8], ipv6: bool) -> (u32, usize) {
        let mut state = 0u32;
        let mut fill = 0;
        for (i, chunk) in bytes.chunks(BEAT_BYTES).enumerate() {
            let last = (i + 1) * BEAT_BYTES >= bytes.len();
            let (words, offset) = mask_beat(k, chunk, i, ipv6, last.then_some(chunk.len()));
            let base = if i == 0 {
                0
            } else {
                crc.state.apply_u64(u64::from(state)) as u32
            };
            state = base ^ crc.data.apply(&words) as u32 ^ offset;
            fill = BEAT_BYTES - chunk.len();
        }
        (state, fill)
    }
}
