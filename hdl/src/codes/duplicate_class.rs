//! Duplicate request classes (`request_checker` `out_dup_class`, with a
//! [`crate::codes::request_verdict::DUPLICATE`] verdict): the model's
//! `responder::DuplicateClass` in declaration order.

use rocenic_model::responder::DuplicateClass;

/// Width of the code on ports.
pub const BITS: usize = 2;

/// SEND/WRITE, re-ACKed (the response).
pub const SEND_WRITE: u64 = 0;
/// READ: re-executed from its responder resource.
pub const READ: u64 = 1;
/// Atomic: answered from the replay cache.
pub const ATOMIC: u64 = 2;
/// Anything else: dropped.
pub const OTHER: u64 = 3;

/// Every model class, in code order.
pub const ALL: [DuplicateClass; 4] = [
    DuplicateClass::SendWrite,
    DuplicateClass::Read,
    DuplicateClass::Atomic,
    DuplicateClass::Other,
];

/// The code of a model class.
pub fn encode(class: DuplicateClass) -> u64 {
    match class {
        DuplicateClass::SendWrite => SEND_WRITE,
        DuplicateClass::Read => READ,
        DuplicateClass::Atomic => ATOMIC,
        DuplicateClass::Other => OTHER,
    }
}

/// The model class of a code; every 2-bit code is one, `None` for wider
/// values.
pub fn decode(code: u64) -> Option<DuplicateClass> {
    usize::try_from(code).ok().and_then(|i| ALL.get(i).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_fill_the_width() {
        for (i, class) in ALL.into_iter().enumerate() {
            assert_eq!(encode(class), i as u64, "{class:?}");
            assert_eq!(decode(encode(class)), Some(class));
        }
        assert_eq!(ALL.len(), 1 << BITS);
        assert_eq!(decode(1 << BITS), None);
    }
}
