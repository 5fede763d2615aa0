//! Grant answer codes of the completer's `grant_refusal` port: [`OK`]
//! for a grant, else the model's `GrantRefusal` in declaration order plus
//! one.

use rocenic_model::requester::GrantRefusal;

/// Width of the code on the port.
pub const BITS: usize = 3;

pub const OK: u64 = 0;
pub const NOT_RTS: u64 = 1;
pub const RNR_WAIT: u64 = 2;
pub const NOTHING: u64 = 3;
pub const FAILED_WQE: u64 = 4;
pub const RD_ATOMIC_LIMIT: u64 = 5;

/// Every model refusal, in code order from [`NOT_RTS`].
pub const ALL: [GrantRefusal; 5] = [
    GrantRefusal::NotRts,
    GrantRefusal::RnrWait,
    GrantRefusal::Nothing,
    GrantRefusal::FailedWqe,
    GrantRefusal::RdAtomicLimit,
];

/// The code of a model grant answer: [`OK`] or the refusal's.
pub fn encode(answer: Result<(), GrantRefusal>) -> u64 {
    match answer {
        Ok(()) => OK,
        Err(GrantRefusal::NotRts) => NOT_RTS,
        Err(GrantRefusal::RnrWait) => RNR_WAIT,
        Err(GrantRefusal::Nothing) => NOTHING,
        Err(GrantRefusal::FailedWqe) => FAILED_WQE,
        Err(GrantRefusal::RdAtomicLimit) => RD_ATOMIC_LIMIT,
    }
}

/// The model grant answer of a code, `None` for the free codes.
pub fn decode(code: u64) -> Option<Result<(), GrantRefusal>> {
    match code {
        OK => Some(Ok(())),
        _ => usize::try_from(code - 1)
            .ok()
            .and_then(|i| ALL.get(i).copied())
            .map(Err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_follow_the_model_order() {
        assert_eq!(decode(encode(Ok(()))), Some(Ok(())));
        for (i, why) in ALL.into_iter().enumerate() {
            assert_eq!(encode(Err(why)), i as u64 + 1, "{why:?}");
            assert_eq!(decode(encode(Err(why))), Some(Err(why)));
            assert!(encode(Err(why)) < 1 << BITS);
        }
        assert_eq!(decode(ALL.len() as u64 + 1), None);
    }
}
