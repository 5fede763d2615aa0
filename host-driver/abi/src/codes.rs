//! The code families of the contract. Where libibverbs has the same
//! family, its numbering is used, so a value in a CQE or a command reads
//! the same as in `ibv_wc`, `ibv_qp_attr` or `ibv_send_wr`.

use crate::layout::{Code, CodeSet};

/// `ibv_wr_opcode`: a send WQE's `opcode`.
pub const SEND_OPCODE: CodeSet = CodeSet {
    name: "send_opcode",
    doc: "A send WQE's operation (libibverbs `ibv_wr_opcode` numbering).",
    flags: false,
    codes: &[
        Code::new(
            "RDMA_WRITE",
            0,
            "RDMA WRITE of the SGE list to `remote_addr`/`rkey`.",
        ),
        Code::new(
            "RDMA_WRITE_WITH_IMM",
            1,
            "RDMA WRITE that also consumes a receive WQE at the peer and delivers `imm`.",
        ),
        Code::new("SEND", 2, "SEND into the peer's next receive WQE."),
        Code::new("SEND_WITH_IMM", 3, "SEND carrying `imm`."),
        Code::new(
            "RDMA_READ",
            4,
            "RDMA READ of `remote_addr`/`rkey` into the SGE list.",
        ),
        Code::new(
            "ATOMIC_CMP_AND_SWP",
            5,
            "8-byte compare-and-swap at `remote_addr`; the original value lands in the SGE.",
        ),
        Code::new(
            "ATOMIC_FETCH_AND_ADD",
            6,
            "8-byte fetch-and-add at `remote_addr`; the original value lands in the SGE.",
        ),
        Code::new(
            "SEND_WITH_INV",
            9,
            "SEND that invalidates the peer's R_Key `imm`.",
        ),
    ],
};

/// Send WQE `flags`.
pub const SEND_FLAGS: CodeSet = CodeSet {
    name: "send_flags",
    doc: "A send WQE's `flags` (libibverbs `ibv_send_flags` meanings).",
    flags: true,
    codes: &[
        Code::new(
            "FENCE",
            1 << 0,
            "Start only after every earlier READ and atomic of this QP has completed.",
        ),
        Code::new(
            "SIGNALED",
            1 << 1,
            "Write a CQE when the WQE completes successfully (errors always complete).",
        ),
        Code::new(
            "SOLICITED",
            1 << 2,
            "Set the BTH solicited event bit of the last packet.",
        ),
        Code::new(
            "INLINE",
            1 << 3,
            "The data is in the WQE (`inline_len` bytes from the segment area), not behind SGEs.",
        ),
    ],
};

/// `ibv_wc_status`: a CQE's `status`.
pub const WC_STATUS: CodeSet = CodeSet {
    name: "wc_status",
    doc: "A CQE's completion status (libibverbs `ibv_wc_status` numbering).",
    flags: false,
    codes: &[
        Code::new("SUCCESS", 0, "The work request completed."),
        Code::new(
            "LOC_LEN_ERR",
            1,
            "A received message was longer than the receive WQE's SGE list.",
        ),
        Code::new(
            "LOC_QP_OP_ERR",
            2,
            "The WQE was malformed (opcode, SGE count, inline length, index).",
        ),
        Code::new(
            "LOC_PROT_ERR",
            4,
            "An SGE is outside its MR, its L_Key is invalid, or the MR lacks the access.",
        ),
        Code::new(
            "WR_FLUSH_ERR",
            5,
            "The QP was in ERR: the WQE was flushed without running.",
        ),
        Code::new(
            "BAD_RESP_ERR",
            7,
            "The responder answered with an unexpected opcode or length.",
        ),
        Code::new(
            "LOC_ACCESS_ERR",
            8,
            "A local memory access failed (a DMA error while reading or writing host memory).",
        ),
        Code::new(
            "REM_INV_REQ_ERR",
            9,
            "The responder NAKed: invalid request.",
        ),
        Code::new(
            "REM_ACCESS_ERR",
            10,
            "The responder NAKed: remote access error (R_Key, range, rights).",
        ),
        Code::new(
            "REM_OP_ERR",
            11,
            "The responder NAKed: remote operational error.",
        ),
        Code::new(
            "RETRY_EXC_ERR",
            12,
            "No answer after `retry_cnt` retries of the local ACK timeout.",
        ),
        Code::new(
            "RNR_RETRY_EXC_ERR",
            13,
            "Receiver not ready after `rnr_retry` retries.",
        ),
        Code::new(
            "FATAL_ERR",
            19,
            "The device failed; no further completions follow.",
        ),
        Code::new("GENERAL_ERR", 21, "Any other failure."),
    ],
};

/// `ibv_wc_opcode`: a CQE's `opcode`.
pub const WC_OPCODE: CodeSet = CodeSet {
    name: "wc_opcode",
    doc: "What a CQE completes (libibverbs `ibv_wc_opcode` numbering).",
    flags: false,
    codes: &[
        Code::new(
            "SEND",
            0,
            "A send WQE of opcode SEND, SEND_WITH_IMM or SEND_WITH_INV.",
        ),
        Code::new(
            "RDMA_WRITE",
            1,
            "A send WQE of opcode RDMA_WRITE or RDMA_WRITE_WITH_IMM.",
        ),
        Code::new("RDMA_READ", 2, "An RDMA READ."),
        Code::new("COMP_SWAP", 3, "A compare-and-swap."),
        Code::new("FETCH_ADD", 4, "A fetch-and-add."),
        Code::new("RECV", 128, "A receive WQE consumed by a SEND."),
        Code::new(
            "RECV_RDMA_WITH_IMM",
            129,
            "A receive WQE consumed by an RDMA WRITE with immediate.",
        ),
    ],
};

/// CQE `flags`.
pub const CQE_FLAGS: CodeSet = CodeSet {
    name: "cqe_flags",
    doc: "Which of a CQE's optional fields are valid (libibverbs `ibv_wc_flags` meanings).",
    flags: true,
    codes: &[
        Code::new(
            "WITH_IMM",
            1 << 1,
            "`imm_or_invalidated` holds the immediate data.",
        ),
        Code::new(
            "WITH_INV",
            1 << 3,
            "`imm_or_invalidated` holds the R_Key the SEND invalidated.",
        ),
    ],
};

/// `ibv_qp_state`.
pub const QP_STATE: CodeSet = CodeSet {
    name: "qp_state",
    doc: "A QP's state (libibverbs `ibv_qp_state` numbering; IBA 10.3.1).",
    flags: false,
    codes: &[
        Code::new(
            "RESET",
            0,
            "Created, or reset: no work is taken, queues are empty.",
        ),
        Code::new(
            "INIT",
            1,
            "Receive WQEs may be posted; nothing is processed.",
        ),
        Code::new(
            "RTR",
            2,
            "Ready to receive: incoming requests are answered.",
        ),
        Code::new("RTS", 3, "Ready to send: send WQEs are processed."),
        Code::new(
            "ERR",
            6,
            "Error: outstanding and new WQEs complete with WR_FLUSH_ERR.",
        ),
    ],
};

/// `ibv_access_flags`.
pub const ACCESS: CodeSet = CodeSet {
    name: "access",
    doc: "Access rights of an MR or of a QP's responder (libibverbs `ibv_access_flags`).",
    flags: true,
    codes: &[
        Code::new("LOCAL_WRITE", 1 << 0, "The NIC may write the memory for local operations (receive, READ response, atomic result)."),
        Code::new("REMOTE_WRITE", 1 << 1, "A peer may RDMA WRITE it."),
        Code::new("REMOTE_READ", 1 << 2, "A peer may RDMA READ it."),
        Code::new("REMOTE_ATOMIC", 1 << 3, "A peer may run atomics on it."),
    ],
};

/// IBA path MTU codes (IBA 9.7.2, `ibv_mtu`).
pub const MTU: CodeSet = CodeSet {
    name: "mtu",
    doc: "Path MTU codes (`ibv_mtu`): the payload bytes of one packet.",
    flags: false,
    codes: &[
        Code::new("MTU_256", 1, "256 bytes."),
        Code::new("MTU_512", 2, "512 bytes."),
        Code::new("MTU_1024", 3, "1024 bytes."),
        Code::new("MTU_2048", 4, "2048 bytes."),
        Code::new("MTU_4096", 5, "4096 bytes."),
    ],
};

/// `ibv_qp_attr_mask` bits: which attributes a MODIFY_QP sets.
pub const QP_ATTR_MASK: CodeSet = CodeSet {
    name: "qp_attr_mask",
    doc: "MODIFY_QP `attr_mask`: the attributes of the mailbox to apply (libibverbs `ibv_qp_attr_mask`). \
          The transition decides which are required and which are allowed (IBA table 91).",
    flags: true,
    codes: &[
        Code::new("STATE", 1 << 0, "`state`: the target state."),
        Code::new("ACCESS_FLAGS", 1 << 3, "`access`."),
        Code::new("PKEY_INDEX", 1 << 4, "`pkey` (rocenic carries the P_Key itself)."),
        Code::new("AV", 1 << 7, "The address vector: `dmac`, `smac`, `sgid`, `dgid`, `ipv6`, `dscp`, `udp_src_port`."),
        Code::new("PATH_MTU", 1 << 8, "`path_mtu`."),
        Code::new("TIMEOUT", 1 << 9, "`timeout`."),
        Code::new("RETRY_CNT", 1 << 10, "`retry_cnt`."),
        Code::new("RNR_RETRY", 1 << 11, "`rnr_retry`."),
        Code::new("RQ_PSN", 1 << 12, "`rq_psn`."),
        Code::new("MAX_QP_RD_ATOMIC", 1 << 13, "`max_rd_atomic`."),
        Code::new("MIN_RNR_TIMER", 1 << 15, "`min_rnr_timer`."),
        Code::new("SQ_PSN", 1 << 16, "`sq_psn`."),
        Code::new("MAX_DEST_RD_ATOMIC", 1 << 17, "`max_dest_rd_atomic`."),
        Code::new("DEST_QPN", 1 << 20, "`dest_qpn`."),
    ],
};

/// Every code family, in the order `docs/abi.md` lists them.
pub const ALL: &[&CodeSet] = &[
    &SEND_OPCODE,
    &SEND_FLAGS,
    &WC_STATUS,
    &WC_OPCODE,
    &CQE_FLAGS,
    &QP_STATE,
    &ACCESS,
    &MTU,
    &QP_ATTR_MASK,
    &crate::eqe::EVENT_TYPE,
    &crate::eqe::QP_ERROR_CAUSE,
    &crate::admin::OPCODE,
    &crate::admin::STATUS,
];
