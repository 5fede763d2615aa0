//! Send operation codes: the segmenter's `wqe_kind` and the WQE body's
//! `op` (`wqe_body_ram`), one per model `SendOp` variant in declaration
//! order. They name the operation, where [`crate::codes::wqe_kind`] names
//! only what its completion waits for.

use rocenic_model::completer::WqeKind;
use rocenic_model::verbs::SendOp;

/// Width of the code on ports and in records.
pub const BITS: usize = 3;

pub const SEND: u64 = 0;
pub const SEND_WITH_IMM: u64 = 1;
pub const SEND_WITH_INV: u64 = 2;
pub const WRITE: u64 = 3;
pub const WRITE_WITH_IMM: u64 = 4;
pub const READ: u64 = 5;
pub const COMPARE_SWAP: u64 = 6;
pub const FETCH_ADD: u64 = 7;

/// The code of a model operation (its fields travel on their own ports).
pub fn encode(op: &SendOp) -> u64 {
    match op {
        SendOp::Send => SEND,
        SendOp::SendWithImm { .. } => SEND_WITH_IMM,
        SendOp::SendWithInv { .. } => SEND_WITH_INV,
        SendOp::Write { .. } => WRITE,
        SendOp::WriteWithImm { .. } => WRITE_WITH_IMM,
        SendOp::Read { .. } => READ,
        SendOp::CompareSwap { .. } => COMPARE_SWAP,
        SendOp::FetchAdd { .. } => FETCH_ADD,
    }
}

/// The model's WQE kind of an operation code, `None` for wider values.
pub fn wqe_kind(code: u64) -> Option<WqeKind> {
    match code {
        SEND..=SEND_WITH_INV => Some(WqeKind::Send),
        WRITE | WRITE_WITH_IMM => Some(WqeKind::Write),
        READ => Some(WqeKind::Read),
        COMPARE_SWAP | FETCH_ADD => Some(WqeKind::Atomic),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_models_send_ops_and_kinds() {
        let ops = [
            SendOp::Send,
            SendOp::SendWithImm { imm: 1 },
            SendOp::SendWithInv { rkey: 2 },
            SendOp::Write {
                remote_addr: 3,
                rkey: 4,
            },
            SendOp::WriteWithImm {
                remote_addr: 5,
                rkey: 6,
                imm: 7,
            },
            SendOp::Read {
                remote_addr: 8,
                rkey: 9,
            },
            SendOp::CompareSwap {
                remote_addr: 10,
                rkey: 11,
                compare: 12,
                swap: 13,
            },
            SendOp::FetchAdd {
                remote_addr: 14,
                rkey: 15,
                add: 16,
            },
        ];
        for (i, op) in ops.iter().enumerate() {
            assert_eq!(encode(op), i as u64, "{op:?}: codes are dense");
            assert_eq!(wqe_kind(encode(op)), Some(WqeKind::of(op)), "{op:?}");
        }
        assert_eq!(ops.len(), 1 << BITS);
        assert_eq!(wqe_kind(1 << BITS), None);
    }
}
