//! The admin command queue: how the driver creates, modifies, queries and
//! destroys PDs, MRs, CQs, EQs and QPs.
//!
//! The driver writes 64-byte commands into the admin submission ring and
//! rings `asq_tail` (control register block `admin`); the NIC fetches
//! them in order, runs each one to its end, and writes a 16-byte
//! completion into the admin completion ring (owner-bit rule as for CQEs)
//! and, if an EQ is set for admin events, an ADMIN_COMPLETION EQE.
//! Commands with more input than fits read it from `in_mailbox` (a bus
//! address); commands with output write it to `out_mailbox`.

use crate::layout::{Area, Code, CodeSet, Field, Layout};

pub const OPCODE_FIELD: Field = Field::bytes("opcode", 0x00, 2, "An admin `opcode`.");
pub const TOKEN: Field = Field::bytes("token", 0x04, 4, "Any value; returned in the completion.");
pub const IN_MAILBOX: Field = Field::bytes(
    "in_mailbox",
    0x08,
    8,
    "Bus address of the command's input structure, or 0.",
);
pub const OUT_MAILBOX: Field = Field::bytes(
    "out_mailbox",
    0x10,
    8,
    "Bus address the command's output structure is written to, or 0.",
);
/// Where each command's own inputs start.
pub const INPUTS: usize = 0x18;

pub const COMMAND: Layout = Layout {
    name: "admin_command",
    size: 64,
    doc: "An admin command: the common header, then the inputs of its opcode (the per-opcode tables below).",
    fields: &[OPCODE_FIELD, TOKEN, IN_MAILBOX, OUT_MAILBOX],
    areas: &[Area::new("inputs", INPUTS, 40, "The opcode's inputs.")],
};

pub mod completion {
    use super::*;
    pub const TOKEN: Field = Field::bytes("token", 0x00, 4, "The command's token.");
    pub const STATUS: Field = Field::bytes("status", 0x04, 1, "An admin `status`.");
    pub const RESULT: Field = Field::bytes(
        "result",
        0x08,
        4,
        "The created object's number (PDN, CQN, EQN, QPN) or MR key.",
    );
    pub const OWNER: Field = Field::flag("owner", 0x0F, 0, "The pass bit, as in a CQE.");
    pub const LAYOUT: Layout = Layout {
        name: "admin_completion",
        size: 16,
        doc: "An admin completion: one 16-byte DMA write, the owner bit in its last byte.",
        fields: &[TOKEN, STATUS, RESULT, OWNER],
        areas: &[],
    };
}

pub const OPCODE: CodeSet = CodeSet {
    name: "admin_opcode",
    doc: "Admin commands.",
    flags: false,
    codes: &[
        Code::new("CREATE_PD", 0x01, "A protection domain; `result` is its PDN."),
        Code::new("DESTROY_PD", 0x02, "Refused (BUSY) while an MR or QP uses it."),
        Code::new("REG_MR", 0x03, "Register memory: the NIC reads the page list from `in_mailbox` into its MTT; `result` is the key (L_Key = R_Key)."),
        Code::new("DEREG_MR", 0x04, "When it completes, no later access through the key succeeds (remote: NAK remote access)."),
        Code::new("CREATE_CQ", 0x05, "A CQ ring; `result` is its CQN."),
        Code::new("DESTROY_CQ", 0x06, "Refused (BUSY) while a QP uses it."),
        Code::new("CREATE_EQ", 0x07, "An EQ ring tied to an MSI-X vector; `result` is its EQN."),
        Code::new("DESTROY_EQ", 0x08, "Refused (BUSY) while a CQ uses it."),
        Code::new("CREATE_QP", 0x09, "An RC QP in RESET; `result` is its QPN."),
        Code::new("MODIFY_QP", 0x0A, "Apply the `qp_attributes` in `in_mailbox` selected by `attr_mask`, moving to `state` (IBA table 91)."),
        Code::new("QUERY_QP", 0x0B, "Write the QP's `qp_attributes` (with its current state) to `out_mailbox`."),
        Code::new("DESTROY_QP", 0x0C, "The QP's number is free again; a QP created under it later starts clean."),
    ],
};

pub const STATUS: CodeSet = CodeSet {
    name: "admin_status",
    doc: "An admin completion's `status`.",
    flags: false,
    codes: &[
        Code::new("OK", 0, "Done."),
        Code::new("BAD_OPCODE", 1, "Unknown opcode."),
        Code::new("BAD_PARAMETER", 2, "An input out of range (size, stride, MTU, access, attribute not allowed in the transition)."),
        Code::new("NO_SUCH_OBJECT", 3, "A PDN, CQN, EQN, QPN or key that does not exist."),
        Code::new("NO_RESOURCES", 4, "No free object or MTT entries."),
        Code::new("BAD_STATE", 5, "The QP state transition is not allowed."),
        Code::new("BUSY", 6, "The object is still in use."),
        Code::new("DMA_ERROR", 7, "A mailbox or page-list read failed."),
    ],
};

/// Per-opcode inputs, at their offsets in the 64-byte command.
pub mod inputs {
    use super::*;

    /// The layout of one opcode's inputs: fields of the 64-byte command.
    const fn command_inputs(
        name: &'static str,
        doc: &'static str,
        fields: &'static [Field],
    ) -> Layout {
        Layout {
            name,
            size: COMMAND.size,
            doc,
            fields,
            areas: &[],
        }
    }

    pub const PDN: Field = Field::bytes("pdn", INPUTS, 4, "The protection domain.");
    pub const DESTROY_PD: Layout = command_inputs("DESTROY_PD", "", &[PDN]);

    pub mod reg_mr {
        use super::*;
        pub const PDN: Field = Field::bytes("pdn", INPUTS, 4, "The MR's protection domain.");
        pub const ACCESS: Field = Field::bytes("access", INPUTS + 0x04, 1, "`access` flags.");
        pub const PAGE_SHIFT: Field = Field::bytes(
            "page_shift",
            INPUTS + 0x05,
            1,
            "log2 of the page size, 12 ..= 30.",
        );
        pub const PAGE_COUNT: Field = Field::bytes(
            "page_count",
            INPUTS + 0x08,
            4,
            "Entries of the page list in `in_mailbox` (8-byte bus addresses).",
        );
        pub const VA: Field =
            Field::bytes("va", INPUTS + 0x10, 8, "The MR's first virtual address.");
        pub const LENGTH: Field = Field::bytes("length", INPUTS + 0x18, 8, "The MR's bytes.");
        pub const LAYOUT: Layout = command_inputs(
            "REG_MR",
            "`va` may sit anywhere in the first page; the pages cover `va .. va + length`.",
            &[PDN, ACCESS, PAGE_SHIFT, PAGE_COUNT, VA, LENGTH],
        );
    }

    pub const KEY: Field = Field::bytes("key", INPUTS, 4, "The MR's key.");
    pub const DEREG_MR: Layout = command_inputs("DEREG_MR", "", &[KEY]);

    pub mod create_cq {
        use super::*;
        pub const LOG_SIZE: Field = Field::bytes(
            "log_size",
            INPUTS,
            1,
            "log2 of the entries, 1 ..= `cap_log_max_cqe`.",
        );
        pub const EQN: Field = Field::bytes(
            "eqn",
            INPUTS + 0x01,
            1,
            "The EQ its completion events go to.",
        );
        pub const RING: Field = Field::bytes(
            "ring",
            INPUTS + 0x08,
            8,
            "Bus address of the zeroed ring, 4 KiB aligned.",
        );
        pub const LAYOUT: Layout = command_inputs("CREATE_CQ", "", &[LOG_SIZE, EQN, RING]);
    }

    pub const CQN: Field = Field::bytes("cqn", INPUTS, 4, "The CQ.");
    pub const DESTROY_CQ: Layout = command_inputs("DESTROY_CQ", "", &[CQN]);

    pub mod create_eq {
        use super::*;
        pub const LOG_SIZE: Field = Field::bytes("log_size", INPUTS, 1, "log2 of the entries.");
        pub const VECTOR: Field =
            Field::bytes("vector", INPUTS + 0x02, 2, "The MSI-X vector it signals.");
        pub const RING: Field = Field::bytes(
            "ring",
            INPUTS + 0x08,
            8,
            "Bus address of the zeroed ring, 4 KiB aligned.",
        );
        pub const LAYOUT: Layout = command_inputs("CREATE_EQ", "", &[LOG_SIZE, VECTOR, RING]);
    }

    pub const EQN: Field = Field::bytes("eqn", INPUTS, 4, "The EQ.");
    pub const DESTROY_EQ: Layout = command_inputs("DESTROY_EQ", "", &[EQN]);

    pub mod create_qp {
        use super::*;
        pub const PDN: Field = Field::bytes("pdn", INPUTS, 4, "The QP's protection domain.");
        pub const SEND_CQN: Field = Field::new(
            "send_cqn",
            INPUTS + 0x04,
            0,
            24,
            "CQ of its send completions.",
        );
        pub const RECV_CQN: Field = Field::new(
            "recv_cqn",
            INPUTS + 0x08,
            0,
            24,
            "CQ of its receive completions.",
        );
        pub const SQ_LOG_SIZE: Field = Field::bytes(
            "sq_log_size",
            INPUTS + 0x0C,
            1,
            "log2 of the send ring's slots.",
        );
        pub const SQ_LOG_STRIDE: Field = Field::bytes(
            "sq_log_stride",
            INPUTS + 0x0D,
            1,
            "6 or 7: 64- or 128-byte slots.",
        );
        pub const RQ_LOG_SIZE: Field = Field::bytes(
            "rq_log_size",
            INPUTS + 0x0E,
            1,
            "log2 of the receive ring's slots.",
        );
        pub const RQ_LOG_STRIDE: Field = Field::bytes("rq_log_stride", INPUTS + 0x0F, 1, "6 or 7.");
        pub const SQ_RING: Field = Field::bytes(
            "sq_ring",
            INPUTS + 0x10,
            8,
            "Bus address of the send ring, 4 KiB aligned.",
        );
        pub const RQ_RING: Field = Field::bytes(
            "rq_ring",
            INPUTS + 0x18,
            8,
            "Bus address of the receive ring, 4 KiB aligned.",
        );
        pub const LAYOUT: Layout = command_inputs(
            "CREATE_QP",
            "",
            &[
                PDN,
                SEND_CQN,
                RECV_CQN,
                SQ_LOG_SIZE,
                SQ_LOG_STRIDE,
                RQ_LOG_SIZE,
                RQ_LOG_STRIDE,
                SQ_RING,
                RQ_RING,
            ],
        );
    }

    pub mod modify_qp {
        use super::*;
        pub const QPN: Field = Field::new("qpn", INPUTS, 0, 24, "The QP.");
        pub const ATTR_MASK: Field = Field::bytes(
            "attr_mask",
            INPUTS + 0x04,
            4,
            "`qp_attr_mask`: the mailbox attributes to apply.",
        );
        pub const LAYOUT: Layout = command_inputs(
            "MODIFY_QP",
            "`in_mailbox` holds a `qp_attributes`.",
            &[QPN, ATTR_MASK],
        );
    }

    pub const QPN: Field = Field::new("qpn", INPUTS, 0, 24, "The QP.");
    pub const QUERY_QP: Layout = command_inputs(
        "QUERY_QP",
        "`out_mailbox` receives a `qp_attributes`.",
        &[QPN],
    );
    pub const DESTROY_QP: Layout = command_inputs(
        "DESTROY_QP",
        "Outstanding WQEs are dropped without completions, as in RESET.",
        &[QPN],
    );

    /// The input layout of each opcode (CREATE_PD has none).
    pub const ALL: &[&Layout] = &[
        &DESTROY_PD,
        &reg_mr::LAYOUT,
        &DEREG_MR,
        &create_cq::LAYOUT,
        &DESTROY_CQ,
        &create_eq::LAYOUT,
        &DESTROY_EQ,
        &create_qp::LAYOUT,
        &modify_qp::LAYOUT,
        &QUERY_QP,
        &DESTROY_QP,
    ];
}

/// The QP attributes of MODIFY_QP (in) and QUERY_QP (out): 128 bytes.
pub mod qp_attributes {
    use super::*;
    use std::net::{IpAddr, Ipv6Addr};

    /// A MAC as `dmac` and `smac` hold it: its first byte (first on the
    /// wire) in bits 7:0.
    pub fn mac_value(mac: [u8; 6]) -> u64 {
        let mut bytes = [0u8; 8];
        bytes[..6].copy_from_slice(&mac);
        u64::from_le_bytes(bytes)
    }

    /// The MAC a `dmac` or `smac` value holds.
    pub fn mac_of(value: u64) -> [u8; 6] {
        let bytes = value.to_le_bytes();
        [bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5]]
    }

    /// The GID of an address: an IPv6 address itself, an IPv4 address
    /// mapped (::ffff:a.b.c.d).
    pub fn gid_of(ip: IpAddr) -> [u8; 16] {
        match ip {
            IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
            IpAddr::V6(v6) => v6.octets(),
        }
    }

    /// The address a GID names; without the `ipv6` flag an IPv4-mapped GID
    /// is the IPv4 address.
    pub fn address_of_gid(gid: [u8; 16], ipv6: bool) -> IpAddr {
        let v6 = Ipv6Addr::from(gid);
        match (ipv6, v6.to_ipv4_mapped()) {
            (false, Some(v4)) => IpAddr::V4(v4),
            _ => IpAddr::V6(v6),
        }
    }
    pub const STATE: Field = Field::bytes("state", 0x00, 1, "A `qp_state`.");
    pub const PATH_MTU: Field = Field::bytes("path_mtu", 0x01, 1, "An `mtu` code.");
    pub const TIMEOUT: Field = Field::bytes(
        "timeout",
        0x02,
        1,
        "Local ACK timeout 4.096 us * 2^timeout; 0 = infinite (IBA 9.7.6.1.3).",
    );
    pub const RETRY_CNT: Field = Field::bytes("retry_cnt", 0x03, 1, "0 ..= 7.");
    pub const RNR_RETRY: Field = Field::bytes("rnr_retry", 0x04, 1, "0 ..= 7; 7 = infinite.");
    pub const MIN_RNR_TIMER: Field = Field::bytes(
        "min_rnr_timer",
        0x05,
        1,
        "The RNR NAK timer code this responder advertises, 0 ..= 31 (IBA table 45).",
    );
    pub const MAX_RD_ATOMIC: Field = Field::bytes(
        "max_rd_atomic",
        0x06,
        1,
        "READ/atomic requests this requester keeps outstanding.",
    );
    pub const MAX_DEST_RD_ATOMIC: Field = Field::bytes(
        "max_dest_rd_atomic",
        0x07,
        1,
        "Incoming READ/atomic requests this responder keeps resources for.",
    );
    pub const ACCESS: Field = Field::bytes(
        "access",
        0x08,
        1,
        "`access`: the remote operations the responder allows.",
    );
    pub const IPV6: Field = Field::flag(
        "ipv6",
        0x09,
        0,
        "The GIDs are IPv6 addresses (else IPv4-mapped, ::ffff:a.b.c.d).",
    );
    pub const PKEY: Field = Field::bytes(
        "pkey",
        0x0A,
        2,
        "The P_Key sent in the BTH and checked on receive.",
    );
    pub const DEST_QPN: Field = Field::new("dest_qpn", 0x0C, 0, 24, "The peer's QPN.");
    pub const RQ_PSN: Field = Field::new(
        "rq_psn",
        0x10,
        0,
        24,
        "Expected PSN of the first incoming request.",
    );
    pub const SQ_PSN: Field = Field::new("sq_psn", 0x14, 0, 24, "PSN of the first request sent.");
    pub const DMAC: Field = Field::bytes(
        "dmac",
        0x18,
        6,
        "The peer's (next hop's) MAC, first byte on the wire in bits 7:0.",
    );
    pub const DSCP: Field = Field::new("dscp", 0x1E, 0, 6, "DSCP of the QP's frames.");
    pub const SMAC: Field = Field::bytes("smac", 0x20, 6, "The source MAC.");
    pub const UDP_SRC_PORT: Field = Field::bytes(
        "udp_src_port",
        0x26,
        2,
        "UDP source port (flow entropy; the destination is always 4791).",
    );
    pub const LAYOUT: Layout = Layout {
        name: "qp_attributes",
        size: 128,
        doc: "A QP's attributes, in a mailbox. Fields a MODIFY_QP's `attr_mask` does not select are ignored.",
        fields: &[
            STATE, PATH_MTU, TIMEOUT, RETRY_CNT, RNR_RETRY, MIN_RNR_TIMER, MAX_RD_ATOMIC, MAX_DEST_RD_ATOMIC, ACCESS, IPV6, PKEY,
            DEST_QPN, RQ_PSN, SQ_PSN, DMAC, DSCP, SMAC, UDP_SRC_PORT,
        ],
        areas: &[
            Area::new("sgid", 0x28, 16, "Source GID: the IPv6 address, or the IPv4-mapped address, in network order."),
            Area::new("dgid", 0x38, 16, "Destination GID, as `sgid`."),
        ],
    };
}
