//! The completion queue entry the NIC writes into a CQ ring.
//!
//! A CQ ring holds `2^log_size` 32-byte entries. The NIC writes each CQE
//! with one 32-byte DMA write, after every DMA write of the data the CQE
//! reports, and the `owner` bit is part of that write, so software that
//! sees the owner bit it expects sees the whole entry. Software zeroes the
//! ring before CREATE_CQ; the NIC writes entry `i` with owner
//! `((i >> log_size) & 1) ^ 1` (1 on the first pass, 0 on the second...),
//! and software, at consumer index `ci`, owns the entry when its owner bit
//! equals `((ci >> log_size) & 1) ^ 1`.

use crate::layout::{Field, Layout};

pub const WR_ID: Field = Field::bytes("wr_id", 0x00, 8, "The WQE's `wr_id`.");
pub const BYTE_LEN: Field = Field::bytes(
    "byte_len",
    0x08,
    4,
    "Receive: the message's bytes. RDMA READ and atomics: bytes placed.",
);
pub const IMM_OR_INVALIDATED: Field = Field::bytes("imm_or_invalidated", 0x0C, 4, "See `flags`.");
pub const QPN: Field = Field::new("qpn", 0x10, 0, 24, "The local QP the WQE belongs to.");
pub const WQE_INDEX: Field = Field::bytes(
    "wqe_index",
    0x14,
    2,
    "The completed WQE's `index`; with unsignaled WQEs, every earlier WQE is complete too.",
);
pub const VENDOR_SYNDROME: Field = Field::bytes(
    "vendor_syndrome",
    0x16,
    1,
    "For error CQEs: the transport's own reason, for diagnosis (0 on success).",
);
pub const OPCODE: Field = Field::bytes("opcode", 0x18, 1, "A `wc_opcode`.");
pub const STATUS: Field = Field::bytes("status", 0x19, 1, "A `wc_status`.");
pub const FLAGS: Field = Field::bytes("flags", 0x1A, 1, "`cqe_flags`.");
pub const OWNER: Field = Field::flag("owner", 0x1F, 0, "The pass bit; see the module rules.");

pub const LAYOUT: Layout = Layout {
    name: "cqe",
    size: 32,
    doc: "A completion: one 32-byte DMA write, the owner bit in its last byte.",
    fields: &[
        WR_ID,
        BYTE_LEN,
        IMM_OR_INVALIDATED,
        QPN,
        WQE_INDEX,
        VENDOR_SYNDROME,
        OPCODE,
        STATUS,
        FLAGS,
        OWNER,
    ],
    areas: &[],
};

/// The owner bit the NIC writes into entry `index` of a ring of
/// `2^log_size` entries (and software expects there).
pub const fn owner_for(index: u64, log_size: u32) -> u64 {
    ((index >> log_size) & 1) ^ 1
}
