//! Work completion opcode codes on the CQE ports: the model's `WcOpcode`
//! declaration index. Send completions use [`SEND`] ..= [`FETCH_ADD`]
//! (libibverbs `ibv_wc_opcode` order, 0..4), receive completions [`RECV`]
//! and [`RECV_RDMA_WITH_IMM`] (5, 6 here; 128, 129 in `ibv_wc_opcode`).

use rocenic_model::verbs::WcOpcode;

/// Width of the code on ports and in records.
pub const BITS: usize = 3;

pub const SEND: u64 = 0;
pub const RDMA_WRITE: u64 = 1;
pub const RDMA_READ: u64 = 2;
pub const COMP_SWAP: u64 = 3;
pub const FETCH_ADD: u64 = 4;
pub const RECV: u64 = 5;
pub const RECV_RDMA_WITH_IMM: u64 = 6;

/// The code of a model opcode.
pub fn encode(opcode: WcOpcode) -> u64 {
    opcode as u64
}

/// The model opcode of a code, `None` for the free code 7.
pub fn decode(code: u64) -> Option<WcOpcode> {
    usize::try_from(code).ok().and_then(WcOpcode::from_repr)
}

/// The model opcode of a send completion's code, `None` for receive
/// opcodes and free codes.
pub fn decode_send(code: u64) -> Option<WcOpcode> {
    decode(code).filter(|_| code <= FETCH_ADD)
}

/// The model opcode of a receive completion's code, `None` for send
/// opcodes and free codes.
pub fn decode_recv(code: u64) -> Option<WcOpcode> {
    decode(code).filter(|_| code >= RECV)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_models_and_round_trip() {
        let named = [
            (SEND, WcOpcode::Send),
            (RDMA_WRITE, WcOpcode::RdmaWrite),
            (RDMA_READ, WcOpcode::RdmaRead),
            (COMP_SWAP, WcOpcode::CompSwap),
            (FETCH_ADD, WcOpcode::FetchAdd),
            (RECV, WcOpcode::Recv),
            (RECV_RDMA_WITH_IMM, WcOpcode::RecvRdmaWithImm),
        ];
        for (i, (code, opcode)) in named.into_iter().enumerate() {
            assert_eq!(code, i as u64, "{opcode:?}: codes are dense");
            assert_eq!(encode(opcode), code, "{opcode:?}");
            assert_eq!(decode(code), Some(opcode));
            assert_eq!(decode_send(code).is_some(), code <= FETCH_ADD);
            assert_eq!(decode_recv(code).is_some(), code >= RECV);
            assert!(code < 1 << BITS);
        }
        assert_eq!(decode(named.len() as u64), None, "every opcode named");
    }
}
