//! QP state codes: the context record's `state` field and the `ctx_state`
//! ports that carry it. The model's `QpState` in declaration order, which
//! is also the IBA's (and `ibv_qp_state`'s) order up to RTS; the RTL has
//! no SQD or SQE (5..7 are free for them), so ERR is 4 here where
//! `ibv_qp_state` has 6. `u32` like the record's typed view; ports take
//! `u64::from(code)`.

use rocenic_model::verbs::QpState;

/// Width of the code in the record and on ports.
pub const BITS: usize = 3;

pub const RESET: u32 = 0;
pub const INIT: u32 = 1;
pub const RTR: u32 = 2;
pub const RTS: u32 = 3;
pub const ERR: u32 = 4;

/// Every model state, in code order.
pub const ALL: [QpState; 5] = [
    QpState::Reset,
    QpState::Init,
    QpState::Rtr,
    QpState::Rts,
    QpState::Err,
];

/// The code of a model state.
pub fn encode(state: QpState) -> u32 {
    match state {
        QpState::Reset => RESET,
        QpState::Init => INIT,
        QpState::Rtr => RTR,
        QpState::Rts => RTS,
        QpState::Err => ERR,
    }
}

/// The model state of a code, `None` for the free codes.
pub fn decode(code: u32) -> Option<QpState> {
    ALL.get(code as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_follow_the_model_order() {
        for (i, s) in ALL.into_iter().enumerate() {
            assert_eq!(encode(s), i as u32);
            assert_eq!(decode(encode(s)), Some(s));
            assert!(encode(s) < 1 << BITS);
        }
        assert_eq!(decode(5), None);
        assert_eq!(decode(7), None);
        assert_eq!(
            [RESET, INIT, RTR, RTS, ERR],
            ALL.map(encode),
            "names match the model's"
        );
    }
}
