//! WQE kind codes of the send queue: the model's `WqeKind` (what a WQE's
//! completion waits for) in declaration order, as the send queue tracker's
//! ring records, the response checker's `wqe_kind` and the completer's
//! post and grant ports carry it. The segmenter's finer kinds, which name
//! the operation, are [`crate::codes::send_op_kind`].

use rocenic_model::completer::WqeKind;

/// Width of the code on ports and in records.
pub const BITS: usize = 2;

pub const SEND: u64 = 0;
pub const WRITE: u64 = 1;
pub const READ: u64 = 2;
pub const ATOMIC: u64 = 3;

/// Every model kind, in code order.
pub const ALL: [WqeKind; 4] = [
    WqeKind::Send,
    WqeKind::Write,
    WqeKind::Read,
    WqeKind::Atomic,
];

/// The code of a model kind.
pub fn encode(kind: WqeKind) -> u64 {
    match kind {
        WqeKind::Send => SEND,
        WqeKind::Write => WRITE,
        WqeKind::Read => READ,
        WqeKind::Atomic => ATOMIC,
    }
}

/// The model kind of a code; every 2-bit code is one, `None` for wider
/// values.
pub fn decode(code: u64) -> Option<WqeKind> {
    usize::try_from(code).ok().and_then(|i| ALL.get(i).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_fill_the_width() {
        for (i, kind) in ALL.into_iter().enumerate() {
            assert_eq!(encode(kind), i as u64, "{kind:?}");
            assert_eq!(decode(encode(kind)), Some(kind));
        }
        assert_eq!(ALL.len(), 1 << BITS);
        assert_eq!(decode(1 << BITS), None);
        assert_eq!([SEND, WRITE, READ, ATOMIC], ALL.map(encode));
    }
}
