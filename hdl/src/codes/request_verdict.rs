//! The responder's request verdicts (`request_checker` `out_verdict`,
//! and `responder_datapath`'s, which adds the codes from
//! [`PARSER_DROP`] on): the model's `responder::Verdict` in declaration
//! order, then the datapath's own outcomes. A duplicate's class travels
//! beside it as a [`crate::codes::duplicate_class`] code. The blocks write
//! these as literals (`hdl_gen` reads a constant's path as a signal name),
//! so the values here are fixed.

use rocenic_model::responder::Verdict;

/// Width of the code on ports.
pub const BITS: usize = 4;

/// QP not in RTR/RTS; dropped, nothing changes.
pub const QP_STATE: u64 = 0;
/// Ahead of the expected PSN; dropped, NAKed unless `nak_sent`.
pub const OUT_OF_SEQUENCE: u64 = 1;
/// Behind the expected PSN; the duplicate class says what answers it.
pub const DUPLICATE: u64 = 2;
/// No receive WQE: RNR NAK.
pub const RNR: u64 = 3;
/// NAK invalid request, QP to ERR.
pub const INVALID_REQUEST: u64 = 4;
/// The QP lacks the remote right (or the MR refuses an executed WRITE):
/// NAK remote access error, QP to ERR.
pub const REMOTE_ACCESS: u64 = 5;
/// Execute: place a SEND's payload.
pub const SEND: u64 = 6;
/// Execute: write an RDMA WRITE's payload.
pub const WRITE: u64 = 7;
/// Execute a READ.
pub const READ: u64 = 8;
/// Execute an atomic.
pub const ATOMIC: u64 = 9;
/// The datapath's: the parser dropped the frame.
pub const PARSER_DROP: u64 = 10;
/// The datapath's: not a request, or a QPN beyond the table; dropped.
pub const NOT_HANDLED: u64 = 11;
/// The datapath's: the receive WQE refused an executed SEND packet (its
/// buffer too short, or its L_Key); NAK, the WQE completed with the
/// error, the QP in ERR.
pub const RECEIVE_FAULT: u64 = 12;

/// The code of a model verdict (its fields travel on their own ports).
pub fn encode(verdict: &Verdict) -> u64 {
    match verdict {
        Verdict::QpState => QP_STATE,
        Verdict::OutOfSequence => OUT_OF_SEQUENCE,
        Verdict::Duplicate(_) => DUPLICATE,
        Verdict::Rnr => RNR,
        Verdict::InvalidRequest => INVALID_REQUEST,
        Verdict::RemoteAccess => REMOTE_ACCESS,
        Verdict::Send { .. } => SEND,
        Verdict::Write { .. } => WRITE,
        Verdict::Read { .. } => READ,
        Verdict::Atomic => ATOMIC,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocenic_model::responder::DuplicateClass;

    #[test]
    fn codes_follow_the_model_order_then_the_datapaths() {
        let verdicts = [
            Verdict::QpState,
            Verdict::OutOfSequence,
            Verdict::Duplicate(DuplicateClass::Read),
            Verdict::Rnr,
            Verdict::InvalidRequest,
            Verdict::RemoteAccess,
            Verdict::Send {
                offset: 0,
                len: 0,
                take_wqe: false,
                last: false,
            },
            Verdict::Write {
                va: 0,
                rkey: 0,
                len: 0,
                whole_len: 0,
                take_wqe: false,
                last: false,
            },
            Verdict::Read { npsn: 1 },
            Verdict::Atomic,
        ];
        for (i, v) in verdicts.iter().enumerate() {
            assert_eq!(encode(v), i as u64, "{v:?}");
        }
        assert_eq!(
            [PARSER_DROP, NOT_HANDLED, RECEIVE_FAULT],
            [10, 11, 12],
            "the datapath's follow the model's"
        );
        const { assert!(RECEIVE_FAULT < 1 << BITS) };
    }
}
