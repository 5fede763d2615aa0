//! The BAR register map.
//!
//! BAR0 (16 KiB) is the driver's: a chain of register blocks, each opening
//! with the same header (`type`, `version`, `next`), so a driver walks the
//! chain from offset 0 and finds each block by its type instead of by a
//! fixed offset. BAR2 holds one 4 KiB doorbell page per QP and BAR4 one
//! per CQ, so a process maps only the pages of the objects it owns.
//! How registers take accesses: [`ACCESS_RULES`].

use crate::layout::Field;

/// The rules of every MMIO access (rendered into `docs/abi.md`).
pub const ACCESS_RULES: &[&str] = &[
    "Registers are little-endian and take 32- and 64-bit accesses; a write that does not \
     cover a whole 32-bit half of its 8-byte word (all four byte enables) leaves that half alone.",
    "A 64-bit register takes one 64-bit access or two 32-bit accesses. Reading a counter's low \
     half latches its high half, which the next read of the high half returns, so a 32-bit host \
     reads one consistent value low half first.",
    "Bits a register does not implement (those outside its fields, where it lists fields) read 0 \
     and ignore writes.",
    "An offset no register occupies reads 0 and ignores writes; each such read, and each 32-bit \
     half written there, counts `mmio_unmapped`.",
    "Reset values hold after power-up and after `control.soft_reset`, except the MSI-X table's \
     `vector_address` and `vector_data`, which are undefined after a reset (PCIe MSI-X: software \
     writes a vector before unmasking it).",
];

/// What software may do with a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only; writes are ignored.
    ReadOnly,
    /// Read and write.
    ReadWrite,
    /// Write only (a doorbell); reads return 0.
    WriteOnly,
    /// Write 1 to clear a bit.
    WriteOneToClear,
}

impl Access {
    pub const fn short(self) -> &'static str {
        match self {
            Access::ReadOnly => "RO",
            Access::ReadWrite => "RW",
            Access::WriteOnly => "WO",
            Access::WriteOneToClear => "W1C",
        }
    }
}

/// One register, or `count` registers `stride` bytes apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Register {
    pub name: &'static str,
    /// From the start of its block.
    pub offset: u32,
    /// 32 or 64.
    pub width: u32,
    pub access: Access,
    pub reset: u64,
    pub doc: &'static str,
    /// Bit fields, when the register has several (offsets 0..width/8).
    pub fields: &'static [Field],
    pub count: u32,
    pub stride: u32,
}

const fn reg(
    name: &'static str,
    offset: u32,
    width: u32,
    access: Access,
    reset: u64,
    doc: &'static str,
) -> Register {
    Register {
        name,
        offset,
        width,
        access,
        reset,
        doc,
        fields: &[],
        count: 1,
        stride: 0,
    }
}

const fn ro32(name: &'static str, offset: u32, reset: u64, doc: &'static str) -> Register {
    reg(name, offset, 32, Access::ReadOnly, reset, doc)
}

/// A read-only 64-bit event counter (see [`COUNTERS`]).
const fn counter(name: &'static str, index: u32, doc: &'static str) -> Register {
    reg(name, COUNTER_BASE + 8 * index, 64, Access::ReadOnly, 0, doc)
}

/// A register block: the shared header, then its registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterBlock {
    pub name: &'static str,
    pub type_id: u32,
    pub version: u32,
    pub doc: &'static str,
    /// Bytes the block spans, header included.
    pub size: u32,
    pub registers: &'static [Register],
}

/// The header every BAR0 block opens with.
pub mod header {
    use super::*;
    pub const TYPE: Register = ro32("type", 0x0, 0, "The block's type: which block this is.");
    pub const VERSION: Register = ro32("version", 0x4, 0, "The block's layout version: major in bits 31:16, minor in 15:0. A driver accepts any minor of a major it knows.");
    pub const NEXT: Register = ro32(
        "next",
        0x8,
        0,
        "BAR0 offset of the next block; 0 after the last.",
    );
    pub const ALL: [Register; 3] = [TYPE, VERSION, NEXT];
    /// Where a block's own registers start.
    pub const SIZE: u32 = 0x10;
}

/// Block type numbers ("RC" and an index).
pub mod block_type {
    pub const DEVICE: u32 = 0x5243_0001;
    pub const CONTROL: u32 = 0x5243_0002;
    pub const ADMIN: u32 = 0x5243_0003;
    pub const EVENT_QUEUES: u32 = 0x5243_0004;
    pub const COUNTERS: u32 = 0x5243_0005;
    pub const MSIX: u32 = 0x5243_0006;
    pub const CONGESTION: u32 = 0x5243_0007;
}

/// The build's sizes; the capability registers report them.
pub mod limits {
    pub const QPS: u32 = 1024;
    pub const MRS: u32 = 1024;
    pub const CQS: u32 = 1024;
    pub const PDS: u32 = 1024;
    pub const EQS: u32 = 8;
    pub const MSIX_VECTORS: u32 = 32;
    pub const LOG_MAX_QP_WR: u32 = 15;
    pub const LOG_MAX_CQE: u32 = 16;
    pub const MTT_ENTRIES: u32 = 65536;
}

pub const DEVICE: RegisterBlock = RegisterBlock {
    name: "device",
    type_id: block_type::DEVICE,
    version: 0x0001_0000,
    doc: "Who the device is and what it can do.",
    size: 0x100,
    registers: &[
        ro32(
            "device_id",
            0x10,
            0x0001,
            "rocenic's device number (the PCI IDs are in config space).",
        ),
        ro32(
            "abi_version",
            0x14,
            crate::ABI_VERSION as u64,
            "This contract's version: major in 31:16, minor in 15:0.",
        ),
        ro32(
            "build_id",
            0x18,
            0,
            "The RTL build (the source revision's first 32 bits; 0 in simulation).",
        ),
        ro32(
            "cap_qps",
            0x20,
            limits::QPS as u64,
            "QPs (QPN 0 is reserved: QPNs 1 ..= cap_qps - 1).",
        ),
        ro32("cap_mrs", 0x24, limits::MRS as u64, "MRs."),
        ro32("cap_cqs", 0x28, limits::CQS as u64, "CQs."),
        ro32("cap_pds", 0x2C, limits::PDS as u64, "PDs."),
        ro32("cap_eqs", 0x30, limits::EQS as u64, "EQs."),
        ro32(
            "cap_msix_vectors",
            0x34,
            limits::MSIX_VECTORS as u64,
            "MSI-X vectors.",
        ),
        ro32(
            "cap_max_mtu",
            0x38,
            5,
            "The largest path MTU, an `mtu` code.",
        ),
        ro32(
            "cap_max_send_sge",
            0x3C,
            crate::wqe::send::max_sge(7) as u64,
            "SGEs per send WQE (128-byte slots).",
        ),
        ro32(
            "cap_max_recv_sge",
            0x40,
            crate::wqe::recv::max_sge(7) as u64,
            "SGEs per receive WQE (128-byte slots).",
        ),
        ro32(
            "cap_max_inline",
            0x44,
            crate::wqe::send::max_inline(7) as u64,
            "Inline bytes per send WQE (128-byte slots).",
        ),
        ro32(
            "cap_log_max_qp_wr",
            0x48,
            limits::LOG_MAX_QP_WR as u64,
            "log2 of the slots of the largest SQ or RQ.",
        ),
        ro32(
            "cap_log_max_cqe",
            0x4C,
            limits::LOG_MAX_CQE as u64,
            "log2 of the entries of the largest CQ.",
        ),
        ro32(
            "cap_mtt_entries",
            0x50,
            limits::MTT_ENTRIES as u64,
            "Page entries of all MRs together.",
        ),
        ro32(
            "cap_max_rd_atomic",
            0x54,
            16,
            "Largest `max_rd_atomic` / `max_dest_rd_atomic`.",
        ),
        ro32(
            "cap_counters",
            0x58,
            COUNTERS.len() as u64,
            "Counters in the counters block.",
        ),
    ],
};

/// Control register bits.
pub mod control_bits {
    use super::*;
    pub const ENABLE: Field = Field::flag(
        "enable",
        0,
        0,
        "Take doorbells and admin commands; frames flow.",
    );
    pub const SOFT_RESET: Field = Field::flag("soft_reset", 0, 1, "Write 1: every object destroyed, counters cleared, the registers back to their reset values; reads 1 until done.");
    pub const READY: Field = Field::flag("ready", 0, 0, "Reset is done and the device is enabled.");
    pub const FATAL: Field = Field::flag(
        "fatal",
        0,
        1,
        "A fatal error stopped the device (`fatal_cause`).",
    );
}

pub const CONTROL: RegisterBlock = RegisterBlock {
    name: "control",
    type_id: block_type::CONTROL,
    version: 0x0001_0000,
    doc: "Global control and status.",
    size: 0x100,
    registers: &[
        Register {
            fields: &[control_bits::ENABLE, control_bits::SOFT_RESET],
            ..reg(
                "control",
                0x10,
                32,
                Access::ReadWrite,
                0,
                "Enable and reset.",
            )
        },
        Register {
            fields: &[control_bits::READY, control_bits::FATAL],
            ..ro32("status", 0x14, 0, "Device state.")
        },
        reg(
            "fatal_cause",
            0x18,
            32,
            Access::WriteOneToClear,
            0,
            "Why `fatal` is set (bit per cause, 0 today: no fatal cause is defined yet).",
        ),
        reg(
            "scratch",
            0x1C,
            32,
            Access::ReadWrite,
            0,
            "Read back as written: a check that MMIO reaches the device.",
        ),
        reg(
            "admin_eqn",
            0x20,
            32,
            Access::ReadWrite,
            0xFFFF_FFFF,
            "EQ that admin completions signal; all ones: none (the driver polls).",
        ),
    ],
};

/// Admin queue register bits.
pub mod admin_bits {
    use super::*;
    pub const LOG_SIZE: Field = Field::new("log_size", 0, 0, 4, "log2 of the ring's entries.");
    pub const INDEX: Field = Field::new(
        "index",
        0,
        0,
        16,
        "Entries since the queue was set up (mod 2^16).",
    );
}

pub const ADMIN: RegisterBlock = RegisterBlock {
    name: "admin",
    type_id: block_type::ADMIN,
    version: 0x0001_0000,
    doc: "The admin command queue: rings of `admin_command` and `admin_completion` entries.",
    size: 0x100,
    registers: &[
        reg(
            "asq_base",
            0x10,
            64,
            Access::ReadWrite,
            0,
            "Bus address of the submission ring (64-byte commands), 4 KiB aligned.",
        ),
        Register {
            fields: &[admin_bits::LOG_SIZE],
            ..reg(
                "asq_log_size",
                0x18,
                32,
                Access::ReadWrite,
                0,
                "log2 of its entries, 1 ..= 12; 0: the queue is off.",
            )
        },
        Register {
            fields: &[admin_bits::INDEX],
            ..reg(
                "asq_tail",
                0x1C,
                32,
                Access::WriteOnly,
                0,
                "Doorbell: commands written so far (mod 2^16).",
            )
        },
        Register {
            fields: &[admin_bits::INDEX],
            ..reg(
                "asq_head",
                0x20,
                32,
                Access::ReadOnly,
                0,
                "Commands the device has taken (mod 2^16).",
            )
        },
        reg(
            "acq_base",
            0x28,
            64,
            Access::ReadWrite,
            0,
            "Bus address of the completion ring (16-byte entries), 4 KiB aligned.",
        ),
        Register {
            fields: &[admin_bits::LOG_SIZE],
            ..reg(
                "acq_log_size",
                0x30,
                32,
                Access::ReadWrite,
                0,
                "log2 of its entries; equal to `asq_log_size`.",
            )
        },
        Register {
            fields: &[admin_bits::INDEX],
            ..reg(
                "acq_head",
                0x34,
                32,
                Access::WriteOnly,
                0,
                "Completions software has consumed (mod 2^16): room for more.",
            )
        },
    ],
};

/// EQ doorbell bits.
pub mod eq_doorbell {
    use super::*;
    pub const CONSUMER: Field = Field::new(
        "consumer",
        0,
        0,
        24,
        "Entries software has consumed (mod 2^24).",
    );
    pub const ARM: Field = Field::flag(
        "arm",
        0,
        31,
        "Send the EQ's MSI-X message at its next entry (or now, if entries are unconsumed).",
    );
}

pub const EVENT_QUEUES: RegisterBlock = RegisterBlock {
    name: "event_queues",
    type_id: block_type::EVENT_QUEUES,
    version: 0x0001_0000,
    doc: "EQ doorbells (EQs are created with CREATE_EQ).",
    size: 0x100,
    registers: &[Register {
        fields: &[eq_doorbell::CONSUMER, eq_doorbell::ARM],
        count: limits::EQS,
        stride: 4,
        ..reg(
            "eq_doorbell",
            0x10,
            32,
            Access::WriteOnly,
            0,
            "EQ n's doorbell at 0x10 + 4 n.",
        )
    }],
};

/// Where counter 0 sits in the counters block.
const COUNTER_BASE: u32 = 0x10;

/// The counters, `ethtool -S` style: 64-bit, counting from reset, never
/// cleared by reading.
pub const COUNTERS: &[Register] = &[
    counter("rx_frames", 0, "Frames received from the MAC."),
    counter("rx_bytes", 1, "Their bytes (Ethernet header to ICRC)."),
    counter("tx_frames", 2, "Frames sent."),
    counter("tx_bytes", 3, "Their bytes."),
    counter(
        "rx_drop_truncated",
        4,
        "Dropped: shorter than its headers or lengths say.",
    ),
    counter("rx_drop_ethertype", 5, "Dropped: neither IPv4 nor IPv6."),
    counter("rx_drop_ip_version", 6, "Dropped: IP version field."),
    counter(
        "rx_drop_ipv4_options",
        7,
        "Dropped: IPv4 header with options.",
    ),
    counter("rx_drop_ipv4_checksum", 8, "Dropped: IPv4 header checksum."),
    counter("rx_drop_ipv4_fragment", 9, "Dropped: an IPv4 fragment."),
    counter(
        "rx_drop_ip_length",
        10,
        "Dropped: IP length inconsistent with the frame.",
    ),
    counter("rx_drop_not_udp", 11, "Dropped: not UDP."),
    counter(
        "rx_drop_udp_port",
        12,
        "Dropped: UDP destination port is not 4791.",
    ),
    counter("rx_drop_udp_length", 13, "Dropped: UDP length."),
    counter(
        "rx_drop_udp_checksum",
        14,
        "Dropped: UDP checksum (not checked by this build: stays 0).",
    ),
    counter("rx_drop_tver", 15, "Dropped: BTH transport version not 0."),
    counter(
        "rx_drop_opcode",
        16,
        "Dropped: an opcode this NIC does not take.",
    ),
    counter(
        "rx_drop_header_opcode_mismatch",
        17,
        "Dropped: headers do not match the opcode.",
    ),
    counter(
        "rx_drop_unexpected_payload",
        18,
        "Dropped: payload on an opcode without one.",
    ),
    counter(
        "rx_drop_payload_too_large",
        19,
        "Dropped: payload above 4096 bytes.",
    ),
    counter("rx_drop_pad", 20, "Dropped: pad count inconsistent."),
    counter("rx_drop_icrc", 21, "Dropped: ICRC mismatch."),
    counter(
        "rx_drop_unknown_qp",
        22,
        "Dropped: no such QP, or the QP does not take packets in its state.",
    ),
    counter(
        "rx_duplicate_requests",
        23,
        "Duplicate requests answered again (IBA 9.9.2).",
    ),
    counter(
        "tx_retransmitted_frames",
        24,
        "Request frames sent again (Go-Back-N after NAK or timeout).",
    ),
    counter("tx_naks_psn_seq_err", 25, "NAKs sent: PSN sequence error."),
    counter("tx_naks_invalid_request", 26, "NAKs sent: invalid request."),
    counter(
        "tx_naks_remote_access",
        27,
        "NAKs sent: remote access error.",
    ),
    counter(
        "tx_naks_remote_operational",
        28,
        "NAKs sent: remote operational error.",
    ),
    counter("tx_rnr_naks", 29, "RNR NAKs sent."),
    counter(
        "rx_naks_psn_seq_err",
        30,
        "NAKs received: PSN sequence error.",
    ),
    counter(
        "rx_naks_invalid_request",
        31,
        "NAKs received: invalid request.",
    ),
    counter(
        "rx_naks_remote_access",
        32,
        "NAKs received: remote access error.",
    ),
    counter(
        "rx_naks_remote_operational",
        33,
        "NAKs received: remote operational error.",
    ),
    counter(
        "rx_rnr_naks",
        34,
        "RNR NAKs received (each starts an RNR wait).",
    ),
    counter("local_ack_timeouts", 35, "Local ACK timer expiries."),
    counter(
        "retry_exceeded",
        36,
        "QPs that ran out of `retry_cnt` or `rnr_retry`.",
    ),
    counter("tx_cnps", 37, "CNPs sent (notification point)."),
    counter("rx_cnps", 38, "CNPs received (reaction point)."),
    counter("rate_cuts", 39, "DCQCN rate decreases."),
    counter(
        "rx_pause_frames",
        40,
        "PFC frames received with a non-zero quanta for an enabled priority.",
    ),
    counter(
        "pause_watchdog_trips",
        41,
        "Pauses longer than the watchdog allows.",
    ),
    counter("doorbell_errors", 42, "Doorbells beyond their ring."),
    counter(
        "wqe_errors",
        43,
        "WQEs refused (opcode, SGE count, index, SGE outside its MR).",
    ),
    counter(
        "dma_read_errors",
        44,
        "DMA reads that completed with an error.",
    ),
    counter("cq_overflows", 45, "CQEs that found their CQ full."),
    counter(
        "mmio_unmapped",
        46,
        "Reads of, and 32-bit halves written to, offsets no register occupies.",
    ),
];

pub const COUNTERS_BLOCK: RegisterBlock = RegisterBlock {
    name: "counters",
    type_id: block_type::COUNTERS,
    version: 0x0001_0000,
    doc: "Event counters (`rocenic stats` prints them by name).",
    size: 0x400,
    registers: COUNTERS,
};

pub const MSIX: RegisterBlock = RegisterBlock {
    name: "msix",
    type_id: block_type::MSIX,
    version: 0x0001_0000,
    doc: "The MSI-X table and pending bit array (PCI Local Bus / PCIe base spec, MSI-X capability); the capability in config space points here.",
    size: 0x1000,
    registers: &[
        Register {
            count: limits::MSIX_VECTORS,
            stride: 16,
            ..reg("vector_address", 0x100, 64, Access::ReadWrite, 0, "Vector n's message address at 0x100 + 16 n; undefined after reset.")
        },
        Register {
            count: limits::MSIX_VECTORS,
            stride: 16,
            ..reg("vector_data", 0x108, 32, Access::ReadWrite, 0, "Vector n's message data; undefined after reset.")
        },
        Register {
            count: limits::MSIX_VECTORS,
            stride: 16,
            fields: &[Field::flag("masked", 0, 0, "The vector sends no message; one that comes up is held as pending.")],
            ..reg("vector_control", 0x10C, 32, Access::ReadWrite, 1, "Vector n's control at 0x10C + 16 n; masked at reset.")
        },
        reg("pending", 0x800, 64, Access::ReadOnly, 0, "Pending bit array: bit n, vector n has a message held back by its mask."),
    ],
};

/// The congestion block's fields. A parameter register holds one unsigned
/// `value` in its low bits; the bits above it read 0 and ignore writes.
pub mod congestion_bits {
    use super::*;
    pub const NP_ENABLE: Field = Field::flag(
        "np_enable",
        0,
        0,
        "Notification point: CE-marked RoCEv2 packets get CNPs.",
    );
    pub const RP_ENABLE: Field = Field::flag(
        "rp_enable",
        0,
        1,
        "Reaction point: CNPs cut the sending QP's rate, pacing holds it there.",
    );
    const fn value(bits: u32) -> Field {
        Field::new("value", 0, 0, bits, "The parameter.")
    }
    pub const VALUE_5: Field = value(5);
    pub const VALUE_6: Field = value(6);
    pub const VALUE_7: Field = value(7);
    pub const VALUE_8: Field = value(8);
    pub const VALUE_10: Field = value(10);
    pub const VALUE_11: Field = value(11);
    pub const VALUE_20: Field = value(20);
    pub const VALUE_24: Field = value(24);
    pub const VALUE_32: Field = value(32);
}

/// A read-write parameter of the congestion block whose value is `field`.
const fn parameter(
    name: &'static str,
    offset: u32,
    field: &'static Field,
    reset: u64,
    doc: &'static str,
) -> Register {
    Register {
        fields: std::slice::from_ref(field),
        ..reg(name, offset, 32, Access::ReadWrite, reset, doc)
    }
}

/// The port speed the rate parameters are bounded by, Mb/s.
pub const PORT_RATE_MBPS: u32 = 100_000;

/// DCQCN (notification and reaction point) and PFC parameters. The names
/// and meanings are NVIDIA ConnectX's (`/sys/class/net/<if>/ecn/roce_np`
/// and `roce_rp`, `mlnx_qos`); the units are in each description. Writes
/// take effect at once, for every QP.
pub const CONGESTION: RegisterBlock = RegisterBlock {
    name: "congestion",
    type_id: block_type::CONGESTION,
    version: 0x0001_0000,
    doc: "Congestion control: DCQCN's notification point (CNPs) and reaction point \
          (per-QP rate), and PFC. Names and meanings are NVIDIA ConnectX's (`roce_np`, \
          `roce_rp`); the reset values are rocenic's set (`docs/dcqcn.md`). Writes take effect \
          at once for every QP. Values beyond a parameter's range act as its nearest bound.",
    size: 0x100,
    registers: &[
        Register {
            fields: &[congestion_bits::NP_ENABLE, congestion_bits::RP_ENABLE],
            ..reg("enable", 0x10, 32, Access::ReadWrite, 0b11, "DCQCN's two halves.")
        },
        parameter("min_time_between_cnps", 0x14, &congestion_bits::VALUE_20, 4, "Least time between two CNPs for one QP, microseconds; 0: a CNP per CE-marked packet."),
        parameter("cnp_dscp", 0x18, &congestion_bits::VALUE_6, 48, "DSCP of the CNPs sent; their PFC priority is `cnp_dscp / 8`."),
        parameter("rpg_time_reset", 0x20, &congestion_bits::VALUE_20, 30, "Rate increase timer T, microseconds; 0: no timer."),
        parameter("rpg_byte_reset", 0x24, &congestion_bits::VALUE_32, 0, "Rate increase byte counter B, bytes sent; 0: no counter."),
        parameter("rpg_threshold", 0x28, &congestion_bits::VALUE_5, 1, "Fast recovery steps F before additive increase."),
        parameter("rpg_ai_rate", 0x30, &congestion_bits::VALUE_20, 500, "Additive increase step R_AI, Mb/s."),
        parameter("rpg_hai_rate", 0x34, &congestion_bits::VALUE_20, 500, "Hyper increase step R_HAI, Mb/s."),
        parameter("rpg_gd", 0x38, &congestion_bits::VALUE_5, 11, "A cut takes Rc alpha / 2^(rpg_gd - 10): 11 cuts by alpha / 2. 10 ..= 25."),
        parameter("rpg_min_dec_fac", 0x3C, &congestion_bits::VALUE_7, 50, "A cut leaves at least this percentage of Rc; 0 ..= 100, 0: no floor but `rpg_min_rate`."),
        parameter("rpg_min_rate", 0x40, &congestion_bits::VALUE_20, 1, "The rate floor, Mb/s."),
        parameter("dce_tcp_g", 0x44, &congestion_bits::VALUE_10, 1019, "Alpha's gain: every `dce_tcp_rtt` alpha becomes alpha (dce_tcp_g / 1024) plus (1024 - dce_tcp_g) / 1024 if a CNP came."),
        parameter("dce_tcp_rtt", 0x48, &congestion_bits::VALUE_20, 2, "Alpha's update period K, microseconds; 0: alpha is not updated."),
        parameter("rate_reduce_monitor_period", 0x4C, &congestion_bits::VALUE_20, 15, "At most one cut per this period, microseconds; 0: every CNP cuts."),
        parameter("initial_alpha_value", 0x50, &congestion_bits::VALUE_11, 1023, "Alpha before a QP's first CNP, in 1024ths; 0 ..= 1024."),
        parameter("pfc_enable", 0x60, &congestion_bits::VALUE_8, 0xFF, "Priorities whose PFC pauses transmit honours, bit n for priority n."),
        parameter("pfc_watchdog", 0x64, &congestion_bits::VALUE_24, 100_000, "A pause unbroken for this long trips the watchdog (`pause_watchdog_trips`), which then ignores that priority's pauses until they stop, microseconds; 0: no watchdog."),
    ],
};

/// BAR0's blocks in chain order, each with its offset.
pub const BAR0_BLOCKS: &[(u32, &RegisterBlock)] = &[
    (0x0000, &DEVICE),
    (0x0100, &CONTROL),
    (0x0200, &ADMIN),
    (0x0300, &EVENT_QUEUES),
    (0x0400, &CONGESTION),
    (0x1000, &COUNTERS_BLOCK),
    (0x2000, &MSIX),
];
pub const BAR0_SIZE: u32 = 0x4000;

/// A doorbell page: 4 KiB per object in BAR2 (QPs) or BAR4 (CQs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DoorbellPage {
    pub name: &'static str,
    pub bar: u8,
    pub doc: &'static str,
    pub registers: &'static [Register],
}

pub const PAGE_SIZE: u32 = 4096;

pub mod qp_doorbell {
    use super::*;
    pub const PRODUCER: Field = Field::new(
        "producer",
        0,
        0,
        16,
        "WQEs posted to the ring so far (mod 2^16).",
    );
    /// The inline window's offset in the page.
    pub const INLINE_WINDOW: u32 = 0x100;
    /// Its bytes: one WQE of the largest stride.
    pub const INLINE_WINDOW_SIZE: u32 =
        1 << crate::wqe::LOG_STRIDES[crate::wqe::LOG_STRIDES.len() - 1];
}

pub const QP_PAGE: DoorbellPage = DoorbellPage {
    name: "qp_page",
    bar: 2,
    doc: "QP n's page at BAR2 + 4096 n.",
    registers: &[
        Register {
            fields: &[qp_doorbell::PRODUCER],
            ..reg("sq_producer", 0x000, 32, Access::WriteOnly, 0, "SQ doorbell: the new producer index. A value more than the ring size ahead of the NIC's consumer is refused (doorbell_errors; the QP goes to ERR, cause DOORBELL_BEYOND_RING).")
        },
        Register {
            fields: &[qp_doorbell::PRODUCER],
            ..reg("rq_producer", 0x004, 32, Access::WriteOnly, 0, "RQ doorbell: the new producer index, checked the same way.")
        },
        Register {
            count: qp_doorbell::INLINE_WINDOW_SIZE / 8,
            stride: 8,
            ..reg(
                "sq_inline_wqe",
                qp_doorbell::INLINE_WINDOW,
                64,
                Access::WriteOnly,
                0,
                "Inline window (BlueFlame style), instead of an `sq_producer` write for one send WQE: software that has written the WQE into its ring slot also writes it here, each byte at its offset in the slot, the last 8 bytes last (one write-combined burst, or 32- or 64-bit writes in ascending order). The write that ends at the slot's stride is the doorbell: the NIC takes it as an `sq_producer` write of the WQE's `index` + 1 (checked the same way). If every WQE rung before has been fetched and `index` is the producer index last rung, the NIC takes the WQE from the window and does not fetch the slot; otherwise it fetches the slot as usual, so the slot must hold the same WQE. Writes at or past the QP's stride are ignored (`mmio_unmapped`); a window write to a QP that does not exist counts `doorbell_errors`.",
            )
        },
    ],
};

pub mod cq_doorbell {
    use super::*;
    pub const CONSUMER: Field = Field::new(
        "consumer",
        0,
        0,
        24,
        "CQEs software has consumed (mod 2^24): room for more.",
    );
    pub const ARM_SOLICITED: Field = Field::flag(
        "arm_solicited",
        0,
        30,
        "Request an event at the next solicited or error CQE.",
    );
    pub const ARM: Field = Field::flag("arm", 0, 31, "Request an event at the next CQE.");
}

pub const CQ_PAGE: DoorbellPage = DoorbellPage {
    name: "cq_page",
    bar: 4,
    doc: "CQ n's page at BAR4 + 4096 n.",
    registers: &[Register {
        fields: &[
            cq_doorbell::CONSUMER,
            cq_doorbell::ARM_SOLICITED,
            cq_doorbell::ARM,
        ],
        ..reg(
            "cq_doorbell",
            0x000,
            32,
            Access::WriteOnly,
            0,
            "Consumer index and arming, one write.",
        )
    }],
};

impl RegisterBlock {
    /// The block's header registers with the values they read: its type,
    /// its version and `next`, the offset of the block that follows it.
    pub fn header(&self, next: u32) -> [Register; 3] {
        let [type_id, version, next_block] = header::ALL;
        [
            Register {
                reset: u64::from(self.type_id),
                ..type_id
            },
            Register {
                reset: u64::from(self.version),
                ..version
            },
            Register {
                reset: u64::from(next),
                ..next_block
            },
        ]
    }

    /// A register of the block's own (not the header's) by name.
    pub fn register(&self, name: &str) -> Option<&Register> {
        self.registers.iter().find(|r| r.name == name)
    }
}

/// The BAR0 offset of `block`, one of [`BAR0_BLOCKS`].
pub fn bar0_offset(block: &RegisterBlock) -> u32 {
    BAR0_BLOCKS
        .iter()
        .find(|(_, b)| b.name == block.name)
        .map(|(offset, _)| *offset)
        .unwrap_or_else(|| panic!("{} is not a BAR0 block", block.name))
}

/// The BAR0 offset of the block after the one at `index` of
/// [`BAR0_BLOCKS`], 0 for the last.
pub fn next_block_offset(index: usize) -> u32 {
    BAR0_BLOCKS.get(index + 1).map_or(0, |(offset, _)| *offset)
}

impl Register {
    /// The bits the register implements: its fields', or all of them.
    pub fn implemented(&self) -> u64 {
        if self.fields.is_empty() {
            u64::MAX >> (64 - self.width)
        } else {
            self.fields
                .iter()
                .map(|f| f.max() << (8 * f.offset as u32 + f.bit))
                .fold(0, |all, bits| all | bits)
        }
    }

    /// `value` sets no bit the register does not implement.
    pub fn fits(&self, value: u64) -> bool {
        value & !self.implemented() == 0
    }

    /// The bytes from the first instance's start to the last one's end.
    pub const fn span(&self) -> u32 {
        if self.count <= 1 {
            self.width / 8
        } else {
            (self.count - 1) * self.stride + self.width / 8
        }
    }

    /// Offset of instance `n` within its block.
    pub const fn offset_of(&self, n: u32) -> u32 {
        self.offset + n * self.stride
    }
}

/// The register instance a BAR0 byte offset falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterAt {
    pub block: &'static RegisterBlock,
    /// The block's BAR0 offset.
    pub base: u32,
    /// Header registers are built per block, so they are returned by value.
    pub register: Register,
    pub instance: u32,
    /// The offset's byte within the instance.
    pub byte: u32,
}

/// The register `offset` falls in, or `None` where no register is: the
/// offsets that read 0 and count `mmio_unmapped`.
pub fn bar0_register_at(offset: u32) -> Option<RegisterAt> {
    let index = BAR0_BLOCKS
        .iter()
        .position(|(base, block)| offset >= *base && offset < base + block.size)?;
    let (base, block) = BAR0_BLOCKS[index];
    let within = offset - base;
    block
        .header(next_block_offset(index))
        .into_iter()
        .chain(block.registers.iter().copied())
        .find_map(|register| {
            (0..register.count).find_map(|instance| {
                let start = register.offset_of(instance);
                // Lazily: `within - start` underflows for the instances
                // past `within`.
                (within >= start && within < start + register.width / 8).then(|| RegisterAt {
                    block,
                    base,
                    register,
                    instance,
                    byte: within - start,
                })
            })
        })
}

/// The value BAR0 reads at `offset` (32-bit aligned) after reset: what a
/// driver's discovery walk sees. Offsets no register occupies read 0.
pub fn bar0_reset_read32(offset: u32) -> u32 {
    match bar0_register_at(offset) {
        Some(at) if at.register.access != Access::WriteOnly => {
            (at.register.reset >> (8 * at.byte)) as u32
        }
        _ => 0,
    }
}
