//! The QP context record: one QP's transport state as one 288-bit word of
//! the QP context RAM ([`crate::qp::qp_context`]), its bit layout, and a typed
//! Rust view that packs to and unpacks from that word.
//!
//! The fields are what the reference model keeps per QP (`sim/model`
//! `qp.rs`: `Qp`, `PathAttrs`, `SendAttrs`, `SendQueue`, `ResponderState`)
//! and the per-packet requester, completer and responder steps read or
//! change. Layout, least significant bit first (offset, width):
//!
//! | bits | field | meaning |
//! |---|---|---|
//! | 0, 3 | `state` | [`crate::codes::qp_state`] code: RESET 0, INIT 1, RTR 2, RTS 3, ERR 4 |
//! | 3, 4 | `access` | remote access the responder allows (`verbs::Access` bits) |
//! | 7, 3 | `path_mtu` | IBA MTU code 1..5 = 256..4096 bytes ([`crate::codes::mtu`]) |
//! | 10, 16 | `pkey` | P_Key sent in BTH and checked on receive |
//! | 26, 16 | `pd` | protection domain, matched against the MR's |
//! | 42, 24 | `dest_qpn` | remote QPN (BTH DestQP of our requests/responses) |
//! | 66, 14 | `addr_index` | entry of the address table: peer MAC, IP, IPv6 flag, our source IP |
//! | 80, 24 | `sq_next_psn` | first PSN of the next posted WQE |
//! | 104, 24 | `sq_send_psn` | next PSN the requester transmits (Go-Back-N rewinds it) |
//! | 128, 24 | `sq_una_psn` | oldest PSN not yet acknowledged |
//! | 152, 24 | `sq_max_sent_psn` | PSN after the highest ever sent: responses up to here are in the window |
//! | 176, 24 | `sq_ackreq_end_psn` | PSN after the last AckReq request: the ACK timer runs while it is after `una` |
//! | 200, 5 | `timeout` | local ACK timeout code (4.096 us * 2^code, 0 = infinite) |
//! | 205, 3 | `retry_cnt` | retry count attribute (reload value) |
//! | 208, 3 | `rnr_retry` | RNR retry attribute (reload value, 7 = infinite) |
//! | 211, 3 | `retry_left` | transport retries left |
//! | 214, 3 | `rnr_left` | RNR retries left |
//! | 217, 5 | `max_rd_atomic` | READ/atomic requests this requester may have outstanding |
//! | 222, 5 | `rd_atomic_outstanding` | READ/atomic requests outstanding now |
//! | 227, 24 | `rq_epsn` | responder: expected PSN |
//! | 251, 24 | `rq_msn` | responder: message sequence number |
//! | 275, 1 | `nak_sent` | a sequence or RNR NAK was sent; silent until the expected PSN arrives |
//! | 276, 5 | `max_dest_rd_atomic` | READ/atomic responder resources |
//! | 281, 5 | `min_rnr_timer` | RNR NAK timer code this responder advertises |
//! | 286, 2 | `in_progress` | [`in_progress`] message the responder is in the middle of |
//!
//! Width choices. One word, because every per-packet step reads the state
//! and most of the PSNs together and must update them atomically (one RMW
//! of one word, one forwarding path). 288 bits is 8 x 36, so 1024 QPs fill
//! exactly 8 RAMB36 (1K x 36 each) with nothing wasted. What is left out
//! lives elsewhere on purpose:
//! - Addressing is an index into an address table instead of the 177 bits
//!   of peer MAC, 128-bit IP and IPv6 flag (plus our source IP): those are
//!   only read when the TX builder forms a frame, never modified per packet,
//!   and many QPs share a peer. Inline they would more than double the word
//!   (and the BRAM count) of the RMW path. 14 bits index as many entries as
//!   the largest build has QPs, so one entry per QP always fits.
//! - Timer deadlines (ACK timeout, RNR wait) belong to the retransmit/ACK
//!   engine, which scans them on its own schedule; the DCQCN reaction
//!   point's rate and alpha belong to the rate shaper's RAM, read per
//!   transmitted packet, not per received one.
//! - The send and receive queues (WQE rings, the responder's message in
//!   progress with its VA/R_Key/offset, its READ/atomic resources) live in
//!   host memory or their own RAMs indexed by QPN; `in_progress` says
//!   whether the responder has one open.
//! - `max_rd_atomic`, `max_dest_rd_atomic` and the outstanding count are 5
//!   bits (up to 31): the device advertises at most that many, where the
//!   model's verbs accept any `u8` (the driver must refuse larger values).

use crate::primitives::wide::{bits_from_words, bits_to_words};
use rust_hdl::prelude::*;

/// Bits in one context record.
pub const RECORD_BITS: usize = 288;
/// 64-bit words in one packed record.
pub const RECORD_WORDS: usize = RECORD_BITS.div_ceil(64);

/// A packed record: little-endian 64-bit words, bit `i` in word `i / 64`.
pub type RecordWords = [u64; RECORD_WORDS];

/// One field of the record: where it sits in the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub width: usize,
}

impl Field {
    /// Largest value the field holds.
    pub const fn max(self) -> u64 {
        (1u64 << self.width) - 1
    }
}

/// A field's type in [`ContextRecordBits`]: `Bits<width>`, or the type
/// given after `=>` in the layout (`Bit` for flags).
macro_rules! field_type {
    ($width:literal) => { Bits<$width> };
    ($width:literal, $ty:ty) => { $ty };
}

/// A layout value into its logic type.
pub trait FromField {
    fn from_field(value: u32) -> Self;
}

impl<const N: usize> FromField for Bits<N> {
    fn from_field(value: u32) -> Self {
        Bits::<N>::from(u64::from(value))
    }
}

impl FromField for Bit {
    fn from_field(value: u32) -> Self {
        value != 0
    }
}

/// A field's logic value read out of a whole record word.
pub trait FromWord {
    fn from_word(word: Bits<RECORD_BITS>, offset: usize) -> Self;
}

impl<const N: usize> FromWord for Bits<N> {
    fn from_word(word: Bits<RECORD_BITS>, offset: usize) -> Self {
        word.get_bits::<N>(offset)
    }
}

impl FromWord for Bit {
    fn from_word(word: Bits<RECORD_BITS>, offset: usize) -> Self {
        word.get_bit(offset)
    }
}

macro_rules! layout {
    ($($konst:ident $field:ident : $offset:literal, $width:literal $(=> $ty:ty)?;)*) => {
        $(
            #[doc = concat!("`", stringify!($field), "` field.")]
            pub const $konst: Field = Field {
                name: stringify!($field),
                offset: $offset,
                width: $width,
            };
        )*

        /// Every field, in bit order.
        pub const FIELDS: &[Field] = &[$($konst),*];

        /// The record as a logic struct of its fields, for blocks that
        /// read and rewrite fields (rust-hdl packs the first field at bit
        /// 0, so this is the word's layout; `hdl/tests/request_checker.rs`
        /// checks every offset).
        #[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
        pub struct ContextRecordBits {
            $(pub $field: field_type!($width $(, $ty)?),)*
        }

        impl ContextRecordBits {
            /// The fields of a record word (rust-hdl converts a struct to
            /// bits but not back).
            pub fn from_word(word: Bits<RECORD_BITS>) -> Self {
                ContextRecordBits {
                    $($field: FromWord::from_word(word, $offset),)*
                }
            }
        }

        impl QpContextRecord {
            /// The record as the logic struct blocks take.
            pub fn to_bits(&self) -> ContextRecordBits {
                ContextRecordBits {
                    $($field: FromField::from_field(self.$field),)*
                }
            }
        }

        /// The typed view of one record (see the module doc for meanings).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct QpContextRecord {
            $(pub $field: u32,)*
        }

        impl QpContextRecord {
            /// Packs the record; a value wider than its field is an error.
            pub fn pack(&self) -> Result<RecordWords, RecordError> {
                let mut words = [0u64; RECORD_WORDS];
                $(put(&mut words, $konst, u64::from(self.$field))?;)*
                Ok(words)
            }

            /// Reads a record from its packed words (missing words are
            /// zero, bits past the record ignored).
            pub fn unpack(words: &[u64]) -> QpContextRecord {
                QpContextRecord {
                    $($field: get(words, $konst) as u32,)*
                }
            }

            /// The value of one field by its layout entry.
            pub fn field(&self, field: Field) -> u32 {
                match field.name {
                    $(stringify!($field) => self.$field,)*
                    _ => 0,
                }
            }

            /// Sets one field by its layout entry (unknown fields ignored).
            pub fn set_field(&mut self, field: Field, value: u32) {
                match field.name {
                    $(stringify!($field) => self.$field = value,)*
                    _ => {}
                }
            }
        }
    };
}

layout! {
    STATE state: 0, 3;
    ACCESS access: 3, 4;
    PATH_MTU path_mtu: 7, 3;
    PKEY pkey: 10, 16;
    PD pd: 26, 16;
    DEST_QPN dest_qpn: 42, 24;
    ADDR_INDEX addr_index: 66, 14;
    SQ_NEXT_PSN sq_next_psn: 80, 24;
    SQ_SEND_PSN sq_send_psn: 104, 24;
    SQ_UNA_PSN sq_una_psn: 128, 24;
    SQ_MAX_SENT_PSN sq_max_sent_psn: 152, 24;
    SQ_ACKREQ_END_PSN sq_ackreq_end_psn: 176, 24;
    TIMEOUT timeout: 200, 5;
    RETRY_CNT retry_cnt: 205, 3;
    RNR_RETRY rnr_retry: 208, 3;
    RETRY_LEFT retry_left: 211, 3;
    RNR_LEFT rnr_left: 214, 3;
    MAX_RD_ATOMIC max_rd_atomic: 217, 5;
    RD_ATOMIC_OUTSTANDING rd_atomic_outstanding: 222, 5;
    RQ_EPSN rq_epsn: 227, 24;
    RQ_MSN rq_msn: 251, 24;
    NAK_SENT nak_sent: 275, 1 => Bit;
    MAX_DEST_RD_ATOMIC max_dest_rd_atomic: 276, 5;
    MIN_RNR_TIMER min_rnr_timer: 281, 5;
    IN_PROGRESS in_progress: 286, 2;
}

const _: () = assert!(<ContextRecordBits as Synth>::BITS == RECORD_BITS);

/// `in_progress` codes: the responder's open multi-packet message.
pub mod in_progress {
    pub const NONE: u32 = 0;
    pub const SEND: u32 = 1;
    pub const WRITE: u32 = 2;
}

/// Why a record does not pack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordError {
    /// The value does not fit the field's width.
    Overflow { field: &'static str, value: u64 },
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::Overflow { field, value } => {
                write!(f, "{value} does not fit the context field {field}")
            }
        }
    }
}

impl std::error::Error for RecordError {}

fn put(words: &mut RecordWords, field: Field, value: u64) -> Result<(), RecordError> {
    if value > field.max() {
        return Err(RecordError::Overflow {
            field: field.name,
            value,
        });
    }
    for i in 0..field.width {
        let bit = field.offset + i;
        words[bit / 64] |= (value >> i & 1) << (bit % 64);
    }
    Ok(())
}

fn get(words: &[u64], field: Field) -> u64 {
    (0..field.width).fold(0, |v, i| {
        let bit = field.offset + i;
        let set = words
            .get(bit / 64)
            .is_some_and(|w| w >> (bit % 64) & 1 != 0);
        v | u64::from(set) << i
    })
}

/// The write mask selecting `fields` (for a configuration write of
/// selected fields: set bits are written, clear bits keep their value).
pub fn field_mask(fields: &[Field]) -> RecordWords {
    let mut words = [0u64; RECORD_WORDS];
    for f in fields {
        // Cannot overflow: `max` fits the field by construction.
        let _ = put(&mut words, *f, f.max());
    }
    words
}

/// Packed words as the rust-hdl value of a record.
pub fn record_bits(words: &RecordWords) -> Bits<RECORD_BITS> {
    bits_from_words(words)
}

/// A rust-hdl record value as packed words.
pub fn record_words(b: Bits<RECORD_BITS>) -> RecordWords {
    let mut words = [0u64; RECORD_WORDS];
    words.copy_from_slice(&bits_to_words(b));
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_tile_the_word_exactly() {
        let mut next = 0;
        for f in FIELDS {
            assert_eq!(f.offset, next, "{} leaves a gap or overlaps", f.name);
            assert!(f.width > 0 && f.width <= 32, "{}", f.name);
            next += f.width;
        }
        assert_eq!(next, RECORD_BITS);
        assert_eq!(RECORD_BITS % 36, 0, "whole 36-bit BRAM columns");
    }

    #[test]
    fn every_field_round_trips_alone_at_its_place() {
        for f in FIELDS {
            let mut r = QpContextRecord::default();
            r.set_field(*f, f.max() as u32);
            let words = r.pack().unwrap();
            assert_eq!(words, field_mask(&[*f]), "{}", f.name);
            assert_eq!(QpContextRecord::unpack(&words), r, "{}", f.name);
            assert_eq!(
                record_words(record_bits(&words)),
                words,
                "{} through Bits",
                f.name
            );
        }
    }

    #[test]
    fn overflow_is_an_error_not_a_truncation() {
        let r = QpContextRecord {
            state: 8,
            ..Default::default()
        };
        assert_eq!(
            r.pack(),
            Err(RecordError::Overflow {
                field: "state",
                value: 8
            })
        );
        let r = QpContextRecord {
            rq_epsn: 1 << 24,
            ..Default::default()
        };
        assert!(r.pack().is_err());
    }
}
