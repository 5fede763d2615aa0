//! The verbs vocabulary of the model: work requests, completions, QP
//! states and attributes, in the terms of the IBA spec (ch. 11) and
//! libibverbs.

use serde::Serialize;
use std::net::IpAddr;

pub type Qpn = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct PdId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CqId(pub u32);

/// Memory access rights of an MR or a QP (libibverbs `IBV_ACCESS_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Access(pub u8);

impl Access {
    pub const NONE: Access = Access(0);
    pub const LOCAL_WRITE: Access = Access(1 << 0);
    pub const REMOTE_WRITE: Access = Access(1 << 1);
    pub const REMOTE_READ: Access = Access(1 << 2);
    pub const REMOTE_ATOMIC: Access = Access(1 << 3);
    pub const ALL: Access = Access(0xF);

    pub const fn union(self, other: Access) -> Access {
        Access(self.0 | other.0)
    }

    pub const fn contains(self, other: Access) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Access {
    type Output = Access;
    fn bitor(self, rhs: Access) -> Access {
        self.union(rhs)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum QpState {
    Reset,
    Init,
    Rtr,
    Rts,
    Err,
}

/// Where the remote end of a connection lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RemoteAddress {
    pub mac: [u8; 6],
    pub ip: IpAddr,
}

/// Sizes fixed at QP creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct QpCaps {
    pub max_send_wr: u32,
    pub max_recv_wr: u32,
    pub max_sge: u32,
}

impl Default for QpCaps {
    fn default() -> Self {
        QpCaps {
            max_send_wr: 1024,
            max_recv_wr: 1024,
            max_sge: 16,
        }
    }
}

/// One legal QP state transition with the attributes it requires
/// (IBA table 91; libibverbs `ibv_modify_qp` attribute masks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ModifyQp {
    /// RESET -> INIT.
    ToInit {
        /// Remote operations this QP's responder allows.
        access: Access,
        pkey: u16,
    },
    /// INIT -> RTR.
    ToRtr {
        remote: RemoteAddress,
        dest_qpn: Qpn,
        /// Expected PSN of the first incoming request.
        rq_psn: u32,
        /// 256, 512, 1024, 2048 or 4096.
        path_mtu: u32,
        /// Incoming READ/atomic requests the responder keeps resources for.
        max_dest_rd_atomic: u8,
        /// RNR NAK timer code (0..31) this responder advertises.
        min_rnr_timer: u8,
    },
    /// RTR -> RTS.
    ToRts {
        sq_psn: u32,
        /// Local ACK timeout: 4.096 us * 2^timeout, 0 = infinite.
        timeout: u8,
        /// 0..7.
        retry_cnt: u8,
        /// 0..7, 7 = infinite.
        rnr_retry: u8,
        /// Outstanding READ/atomic requests this requester may issue.
        max_rd_atomic: u8,
    },
    /// Any state -> ERR: outstanding work flushes.
    ToErr,
    /// Any state -> RESET: all queues emptied, no completions.
    ToReset,
}

/// A scatter/gather element: a local buffer by virtual address and L_Key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Sge {
    pub addr: u64,
    pub length: u32,
    pub lkey: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SendOp {
    Send,
    SendWithImm {
        imm: u32,
    },
    SendWithInv {
        rkey: u32,
    },
    Write {
        remote_addr: u64,
        rkey: u32,
    },
    WriteWithImm {
        remote_addr: u64,
        rkey: u32,
        imm: u32,
    },
    Read {
        remote_addr: u64,
        rkey: u32,
    },
    /// The original 8 bytes land in the (8-byte) local SGE.
    CompareSwap {
        remote_addr: u64,
        rkey: u32,
        compare: u64,
        swap: u64,
    },
    FetchAdd {
        remote_addr: u64,
        rkey: u32,
        add: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SendWr {
    pub wr_id: u64,
    pub op: SendOp,
    pub sgl: Vec<Sge>,
    /// Generate a completion on success (errors always complete).
    pub signaled: bool,
    pub solicited: bool,
    /// Start only once every earlier READ and atomic of the QP has
    /// completed (IBA 10.8.3.3, the fence indicator).
    pub fence: bool,
    /// SEND and WRITE variants: the message's bytes themselves, taken at
    /// post time (libibverbs IBV_SEND_INLINE; the host interface copies
    /// them out of the WQE), sent instead of reading `sgl`, which is then
    /// empty.
    pub inline_data: Option<Vec<u8>>,
}

impl SendWr {
    /// The message length: the inline bytes, or the SGL's sum.
    pub fn message_len(&self) -> u64 {
        match &self.inline_data {
            Some(data) => data.len() as u64,
            None => crate::dma::sgl_len(&self.sgl),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecvWr {
    pub wr_id: u64,
    pub sgl: Vec<Sge>,
}

/// Work completion status (libibverbs `ibv_wc_status`). The RTL's CQE
/// ports carry its declaration index (`as u64`; back with `from_repr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, strum::FromRepr)]
pub enum WcStatus {
    Success,
    LocLenErr,
    LocQpOpErr,
    LocProtErr,
    WrFlushErr,
    BadRespErr,
    LocAccessErr,
    RemInvReqErr,
    RemAccessErr,
    RemOpErr,
    RetryExcErr,
    RnrRetryExcErr,
}

/// A work completion's opcode; as [`WcStatus`], the RTL carries its
/// declaration index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, strum::FromRepr)]
pub enum WcOpcode {
    Send,
    RdmaWrite,
    RdmaRead,
    CompSwap,
    FetchAdd,
    Recv,
    RecvRdmaWithImm,
}

/// A work completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cqe {
    pub wr_id: u64,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    pub qpn: Qpn,
    /// Bytes received (receive completions) or transferred.
    pub byte_len: u32,
    pub imm: Option<u32>,
    pub invalidated_rkey: Option<u32>,
}

/// Why a verb was refused synchronously (the call returns `Err`, no
/// completion is generated).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
pub enum VerbsError {
    #[error("no such QP {0}")]
    NoSuchQp(Qpn),
    #[error("no such CQ {0:?}")]
    NoSuchCq(CqId),
    #[error("no such PD {0:?}")]
    NoSuchPd(PdId),
    #[error("no such MR with key {0:#x}")]
    NoSuchMr(u32),
    #[error("QP {qpn} is in state {state:?}, which does not allow this")]
    WrongQpState { qpn: Qpn, state: QpState },
    #[error("invalid attribute: {0}")]
    InvalidAttribute(&'static str),
    #[error("queue full")]
    QueueFull,
    #[error("too many scatter/gather elements")]
    TooManySges,
    #[error("resource still in use")]
    Busy,
    #[error("out of resources")]
    NoResources,
}
