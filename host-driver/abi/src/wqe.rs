//! Work queue entries: what software writes into a QP's send and receive
//! rings, and the NIC fetches by DMA (or takes from the doorbell page's
//! inline window, see [`crate::registers::QP_PAGE`]).
//!
//! A ring holds `2^log_size` slots of `2^log_stride` bytes (64 or 128,
//! fixed at CREATE_QP). A send WQE is a 32-byte header followed by its
//! segment area, the rest of the slot: SGEs, the atomic operands and one
//! SGE, or inline data. A receive WQE is a 16-byte header and SGEs.

use crate::layout::{Area, Field, Layout};

/// The slot sizes a ring may have, as `log_stride`.
pub const LOG_STRIDES: [u32; 2] = [6, 7];

/// One scatter/gather element: 16 bytes.
pub mod sge {
    use super::*;
    pub const ADDR: Field = Field::bytes(
        "addr",
        0x00,
        8,
        "Virtual address of the buffer, in the MR's address space.",
    );
    pub const LENGTH: Field = Field::bytes("length", 0x08, 4, "Bytes; 0 contributes nothing.");
    pub const LKEY: Field = Field::bytes("lkey", 0x0C, 4, "L_Key of the MR the buffer lies in.");
    pub const LAYOUT: Layout = Layout {
        name: "sge",
        size: 16,
        doc: "A scatter/gather element.",
        fields: &[ADDR, LENGTH, LKEY],
        areas: &[],
    };
}

/// The send WQE.
pub mod send {
    use super::*;
    pub const OPCODE: Field = Field::bytes("opcode", 0x00, 1, "The operation, a `send_opcode`.");
    pub const FLAGS: Field = Field::bytes("flags", 0x01, 1, "`send_flags`.");
    pub const SGE_COUNT: Field = Field::bytes(
        "sge_count",
        0x02,
        1,
        "SGEs in the segment area: 0 ..= (stride - 32) / 16; exactly 1 for atomics; 0 with INLINE.",
    );
    pub const INDEX: Field = Field::bytes(
        "index",
        0x04,
        2,
        "The slot's position counted as the SQ producer index counts (mod 2^16). The NIC refuses a WQE whose index is not the one it expects (LOC_QP_OP_ERR).",
    );
    pub const INLINE_LEN: Field = Field::bytes(
        "inline_len",
        0x06,
        2,
        "With INLINE: the data bytes, 0 ..= stride - 32.",
    );
    pub const WR_ID: Field = Field::bytes("wr_id", 0x08, 8, "Returned in the WQE's CQE.");
    pub const REMOTE_ADDR: Field = Field::bytes(
        "remote_addr",
        0x10,
        8,
        "RDMA and atomic: the peer's virtual address.",
    );
    pub const RKEY: Field = Field::bytes("rkey", 0x18, 4, "RDMA and atomic: the peer's R_Key.");
    pub const IMM_OR_INVALIDATE: Field = Field::bytes(
        "imm_or_invalidate",
        0x1C,
        4,
        "WITH_IMM opcodes: the immediate data (sent big-endian as the IBA ImmDt); SEND_WITH_INV: the R_Key to invalidate.",
    );
    /// Where the segment area starts.
    pub const SEGMENTS: usize = 0x20;
    pub const LAYOUT: Layout = Layout {
        name: "send_wqe",
        size: 64,
        doc: "The send WQE in a 64-byte slot: header and two SGEs (a 128-byte slot has six).",
        fields: &[
            OPCODE,
            FLAGS,
            SGE_COUNT,
            INDEX,
            INLINE_LEN,
            WR_ID,
            REMOTE_ADDR,
            RKEY,
            IMM_OR_INVALIDATE,
        ],
        areas: &[Area::new(
            "segments",
            SEGMENTS,
            32,
            "SGEs (16 bytes each, `sge` layout) or inline data; to the end of the slot.",
        )],
    };

    /// The segment area of an atomic WQE.
    pub mod atomic {
        use super::*;
        pub const COMPARE_OR_ADD: Field = Field::bytes(
            "compare_or_add",
            SEGMENTS,
            8,
            "CMP_AND_SWP: the value compared; FETCH_AND_ADD: the addend.",
        );
        pub const SWAP: Field = Field::bytes(
            "swap",
            SEGMENTS + 0x08,
            8,
            "CMP_AND_SWP: the value written when equal.",
        );
        pub const RESULT_SGE: usize = SEGMENTS + 0x10;
        pub const LAYOUT: Layout = Layout {
            name: "send_wqe_atomic_segments",
            size: 64,
            doc: "An atomic send WQE: the operands, then the one SGE (8 bytes) the original value is written to.",
            fields: &[COMPARE_OR_ADD, SWAP],
            areas: &[Area::new("result_sge", RESULT_SGE, 16, "The `sge` the original 8-byte value lands in.")],
        };
    }

    /// SGEs a slot of `2^log_stride` bytes holds.
    pub const fn max_sge(log_stride: u32) -> usize {
        ((1usize << log_stride) - SEGMENTS) / sge::LAYOUT.size
    }

    /// Inline bytes a slot of `2^log_stride` bytes holds.
    pub const fn max_inline(log_stride: u32) -> usize {
        (1usize << log_stride) - SEGMENTS
    }
}

/// The receive WQE.
pub mod recv {
    use super::*;
    pub const WR_ID: Field = Field::bytes("wr_id", 0x00, 8, "Returned in the WQE's CQE.");
    pub const SGE_COUNT: Field = Field::bytes(
        "sge_count",
        0x08,
        1,
        "SGEs that follow: 0 ..= (stride - 16) / 16.",
    );
    pub const INDEX: Field = Field::bytes(
        "index",
        0x0C,
        2,
        "The slot's position as the RQ producer index counts (mod 2^16).",
    );
    pub const SEGMENTS: usize = 0x10;
    pub const LAYOUT: Layout = Layout {
        name: "recv_wqe",
        size: 64,
        doc:
            "The receive WQE in a 64-byte slot: header and three SGEs (a 128-byte slot has seven). \
              A message scatters over the SGEs in order.",
        fields: &[WR_ID, SGE_COUNT, INDEX],
        areas: &[Area::new(
            "sges",
            SEGMENTS,
            48,
            "`sge_count` SGEs, 16 bytes each; to the end of the slot.",
        )],
    };

    pub const fn max_sge(log_stride: u32) -> usize {
        ((1usize << log_stride) - SEGMENTS) / sge::LAYOUT.size
    }
}
