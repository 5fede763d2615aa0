//! MR translation answer codes (`mr_translate` `resp_status`, and the
//! `res_mr_status` of the blocks that pass it on): [`OK`], else the
//! model's `MrError` in declaration order plus one.

use rocenic_model::mr::MrError;

/// Width of the code on ports.
pub const BITS: usize = 3;

pub const OK: u64 = 0;
pub const INVALID_KEY: u64 = 1;
pub const STALE_KEY: u64 = 2;
pub const INVALIDATED: u64 = 3;
pub const PD_MISMATCH: u64 = 4;
pub const ACCESS_DENIED: u64 = 5;
pub const OUT_OF_BOUNDS: u64 = 6;

/// Every model error, in code order from [`INVALID_KEY`].
pub const ERRORS: [MrError; 6] = [
    MrError::InvalidKey,
    MrError::StaleKey,
    MrError::Invalidated,
    MrError::PdMismatch,
    MrError::AccessDenied,
    MrError::OutOfBounds,
];

/// The code of a model answer: [`OK`] or the error's.
pub fn encode<T>(answer: &Result<T, MrError>) -> u64 {
    match answer {
        Ok(_) => OK,
        Err(MrError::InvalidKey) => INVALID_KEY,
        Err(MrError::StaleKey) => STALE_KEY,
        Err(MrError::Invalidated) => INVALIDATED,
        Err(MrError::PdMismatch) => PD_MISMATCH,
        Err(MrError::AccessDenied) => ACCESS_DENIED,
        Err(MrError::OutOfBounds) => OUT_OF_BOUNDS,
    }
}

/// The model error of a code, `None` for [`OK`] and the free code 7.
pub fn error(code: u64) -> Option<MrError> {
    let index = usize::try_from(code.checked_sub(1)?).ok()?;
    ERRORS.get(index).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_follow_the_model_order() {
        assert_eq!(encode(&Ok::<(), MrError>(())), OK);
        assert_eq!(error(OK), None);
        for (i, e) in ERRORS.into_iter().enumerate() {
            let code = encode(&Err::<(), MrError>(e));
            assert_eq!(code, i as u64 + 1, "{e:?}");
            assert_eq!(error(code), Some(e));
            assert!(code < 1 << BITS);
        }
        assert_eq!(error(ERRORS.len() as u64 + 1), None);
    }
}
