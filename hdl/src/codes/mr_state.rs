//! MR table entry states of the MR translation's configuration port
//! (`mr_translate` `cfg.mr_state`): the model's `MrState` in declaration
//! order.

use rocenic_model::mr::MrState;

/// Width of the code on the port and in the table.
pub const BITS: usize = 2;

/// The entry names no MR (keys through it are invalid).
pub const FREE: u64 = 0;
/// Registered and usable.
pub const VALID: u64 = 1;
/// Remotely invalidated, not re-registered since.
pub const INVALIDATED: u64 = 2;

/// The code of a model state.
pub fn encode(state: MrState) -> u64 {
    match state {
        MrState::Free => FREE,
        MrState::Valid => VALID,
        MrState::Invalidated => INVALIDATED,
    }
}

/// The model state of a code, `None` for the free code 3.
pub fn decode(code: u64) -> Option<MrState> {
    match code {
        FREE => Some(MrState::Free),
        VALID => Some(MrState::Valid),
        INVALIDATED => Some(MrState::Invalidated),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_follow_the_model_order() {
        let all = [MrState::Free, MrState::Valid, MrState::Invalidated];
        for (i, state) in all.into_iter().enumerate() {
            assert_eq!(encode(state), i as u64, "{state:?}");
            assert_eq!(decode(encode(state)), Some(state));
            assert!(encode(state) < 1 << BITS);
        }
        assert_eq!(decode(3), None);
    }
}
