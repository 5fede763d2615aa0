//! Work completion status codes on the CQE ports (send queue tracker,
//! receive queue, completer) and the WQE error fields. The code is the
//! model's `WcStatus` declaration index, NOT `ibv_wc_status`'s numbering:
//! the model leaves out the statuses the RTL never produces
//! (LOC_EEC_OP_ERR, MW_BIND_ERR, ...), so from LOC_PROT_ERR on the two
//! differ (LOC_PROT_ERR is 3 here, 4 in `ibv_wc_status`). The driver maps
//! to `ibv_wc_status` where it builds the host's CQE.

use rocenic_model::verbs::WcStatus;

/// Width of the code on ports and in records.
pub const BITS: usize = 4;

pub const SUCCESS: u64 = 0;
pub const LOC_LEN_ERR: u64 = 1;
pub const LOC_QP_OP_ERR: u64 = 2;
pub const LOC_PROT_ERR: u64 = 3;
pub const WR_FLUSH_ERR: u64 = 4;
pub const BAD_RESP_ERR: u64 = 5;
pub const LOC_ACCESS_ERR: u64 = 6;
pub const REM_INV_REQ_ERR: u64 = 7;
pub const REM_ACCESS_ERR: u64 = 8;
pub const REM_OP_ERR: u64 = 9;
pub const RETRY_EXC_ERR: u64 = 10;
pub const RNR_RETRY_EXC_ERR: u64 = 11;

/// The code of a model status.
pub fn encode(status: WcStatus) -> u64 {
    status as u64
}

/// The model status of a code, `None` past the last status.
pub fn decode(code: u64) -> Option<WcStatus> {
    usize::try_from(code).ok().and_then(WcStatus::from_repr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_models_and_round_trip() {
        let named = [
            (SUCCESS, WcStatus::Success),
            (LOC_LEN_ERR, WcStatus::LocLenErr),
            (LOC_QP_OP_ERR, WcStatus::LocQpOpErr),
            (LOC_PROT_ERR, WcStatus::LocProtErr),
            (WR_FLUSH_ERR, WcStatus::WrFlushErr),
            (BAD_RESP_ERR, WcStatus::BadRespErr),
            (LOC_ACCESS_ERR, WcStatus::LocAccessErr),
            (REM_INV_REQ_ERR, WcStatus::RemInvReqErr),
            (REM_ACCESS_ERR, WcStatus::RemAccessErr),
            (REM_OP_ERR, WcStatus::RemOpErr),
            (RETRY_EXC_ERR, WcStatus::RetryExcErr),
            (RNR_RETRY_EXC_ERR, WcStatus::RnrRetryExcErr),
        ];
        for (i, (code, status)) in named.into_iter().enumerate() {
            assert_eq!(code, i as u64, "{status:?}: codes are dense");
            assert_eq!(encode(status), code, "{status:?}");
            assert_eq!(decode(code), Some(status));
            assert!(code < 1 << BITS);
        }
        assert_eq!(decode(named.len() as u64), None, "every status named");
    }
}
