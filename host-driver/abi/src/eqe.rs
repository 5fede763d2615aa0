//! Event queue entries: completion notifications of armed CQs and
//! asynchronous errors, each followed by the EQ's MSI-X message.
//!
//! An EQ ring holds `2^log_size` 16-byte entries, written and owned with
//! the same owner-bit rule as CQEs ([`crate::cqe::owner_for`]). After
//! writing an entry the NIC sends the EQ's MSI-X vector if the EQ is armed
//! (EQ doorbell), and disarms it.

use crate::layout::{Code, CodeSet, Field, Layout};

pub const EVENT: Field = Field::bytes("event", 0x00, 1, "An `event_type`.");
pub const CAUSE: Field = Field::bytes(
    "cause",
    0x01,
    1,
    "QP errors: a `qp_error_cause`; 0 otherwise.",
);
pub const OBJECT: Field = Field::new(
    "object",
    0x04,
    0,
    24,
    "The CQ (completion, CQ overflow) or QP (QP errors) the event is about.",
);
pub const DETAIL: Field = Field::bytes(
    "detail",
    0x08,
    4,
    "Event-specific: the admin command's token, or the WQE index a QP error stopped at.",
);
pub const OWNER: Field = Field::flag("owner", 0x0F, 0, "The pass bit, as in a CQE.");

pub const LAYOUT: Layout = Layout {
    name: "eqe",
    size: 16,
    doc: "An event: one 16-byte DMA write, the owner bit in its last byte.",
    fields: &[EVENT, CAUSE, OBJECT, DETAIL, OWNER],
    areas: &[],
};

pub const EVENT_TYPE: CodeSet = CodeSet {
    name: "event_type",
    doc: "What an EQE reports (names after libibverbs `ibv_event_type` where one exists). A CQ's events go to the EQ its CREATE_CQ named, a QP's errors to the EQ of its send CQ, admin completions to `admin_eqn`.",
    flags: false,
    codes: &[
        Code::new("COMPLETION", 0, "An armed CQ received a CQE (solicited-only arming: a solicited or error CQE)."),
        Code::new("CQ_ERR", 1, "A CQ overflowed: the CQE that did not fit was not written; the QP whose CQE it was is in ERR."),
        Code::new("QP_FATAL", 2, "A QP went to ERR for a local reason (`cause`)."),
        Code::new("QP_REQ_ERR", 3, "A QP went to ERR because the peer NAKed a request as invalid."),
        Code::new("QP_ACCESS_ERR", 4, "A QP went to ERR because the peer NAKed a request for access."),
        Code::new("ADMIN_COMPLETION", 5, "An admin command completed (`detail` is its token)."),
        Code::new("DEVICE_FATAL", 6, "The device failed; see the control block's `fatal_cause`."),
    ],
};

pub const QP_ERROR_CAUSE: CodeSet = CodeSet {
    name: "qp_error_cause",
    doc: "Why a QP went to ERR (an EQE's `cause`).",
    flags: false,
    codes: &[
        Code::new("NONE", 0, "No local cause (peer NAK, retries exhausted)."),
        Code::new(
            "DOORBELL_BEYOND_RING",
            1,
            "A producer index more than the ring size ahead of the consumer.",
        ),
        Code::new(
            "BAD_WQE",
            2,
            "A WQE with an unknown opcode, SGE count, inline length or index.",
        ),
        Code::new(
            "SGE_OUTSIDE_MR",
            3,
            "An SGE outside its MR or with an invalid L_Key.",
        ),
        Code::new(
            "DMA_READ_ERROR",
            4,
            "A WQE or payload read completed with an error.",
        ),
        Code::new("DMA_WRITE_ERROR", 5, "A data or CQE write failed."),
        Code::new("CQ_OVERFLOW", 6, "The QP's CQ had no room for its CQE."),
    ],
};
