//! The verbs, shaped like libibverbs: a [`Context`] opened on a
//! [`Device`] hands out protection domains, memory regions, completion
//! queues and RC queue pairs, posts work and polls completions.
//!
//! Everything goes through the host ABI (`docs/abi.md`): objects are
//! created by admin commands, work requests are written into the QP's
//! rings in host memory and rung through its doorbell page, completions
//! are read from the CQ ring by owner bit. Misuse is a typed [`Error`]
//! before anything reaches the device.
//!
//! This module holds the types, `Context::open` and the admin queue;
//! `objects.rs` creates, changes and destroys PDs, MRs, CQs and QPs;
//! `work.rs` is the data path (posting, polling, CQ events).

use crate::bar0::{Bar0, Bar0Error, DeviceAttr, ParameterError};
use crate::device::{Bar0Mmio, Device, DeviceError};
use rocenic_abi::admin::{self, completion, inputs, qp_attributes as attr};
use rocenic_abi::codes;
use rocenic_abi::layout::{CodeSet, Field};
use rocenic_abi::registers::{self as regs, control_bits};
use rocenic_abi::{cqe, eqe, wqe};
use std::collections::BTreeMap;
use std::net::IpAddr;

mod objects;
mod work;

pub use work::{decode_cqe, encode_send};

/// What a verb can fail with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Bar0(#[from] Bar0Error),
    #[error(transparent)]
    Memory(#[from] DeviceError),
    #[error(transparent)]
    Parameter(#[from] ParameterError),
    #[error("QP {qpn} is in {state:?}, which does not allow this")]
    WrongQpState { qpn: u32, state: QpState },
    #[error("the queue is full")]
    QueueFull,
    #[error("{given} SGEs; this queue takes at most {max}")]
    TooManySges { given: usize, max: usize },
    #[error("{given} bytes of inline data; this QP takes at most {max}")]
    InlineTooLong { given: u64, max: u32 },
    #[error("SGE {addr:#x} + {length:#x} with L_Key {lkey:#x} is not inside a registered MR")]
    SgeOutsideMr { addr: u64, length: u32, lkey: u32 },
    #[error("bad attribute: {0}")]
    BadAttribute(&'static str),
    #[error("busy: {0}")]
    Busy(&'static str),
    #[error("no such {0} {1}")]
    NoSuchObject(&'static str, u32),
    #[error("the device answered {command} with {status}")]
    Device {
        command: &'static str,
        status: &'static str,
    },
    #[error("the device did not answer {0} in time")]
    Timeout(&'static str),
}

pub type Result<T> = std::result::Result<T, Error>;

fn name_of(set: &CodeSet, value: u64) -> &'static str {
    set.by_value(value).map_or("UNKNOWN", |c| c.name)
}

fn get(buf: &[u8], field: &Field) -> u64 {
    field.get(buf).expect("the ABI's layouts fit their entries")
}

/// `ibv_qp_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    Reset,
    Init,
    Rtr,
    Rts,
    Err,
}

impl QpState {
    fn abi_name(self) -> &'static str {
        match self {
            QpState::Reset => "RESET",
            QpState::Init => "INIT",
            QpState::Rtr => "RTR",
            QpState::Rts => "RTS",
            QpState::Err => "ERR",
        }
    }

    fn from_abi(value: u64) -> Option<QpState> {
        [
            QpState::Reset,
            QpState::Init,
            QpState::Rtr,
            QpState::Rts,
            QpState::Err,
        ]
        .into_iter()
        .find(|s| codes::QP_STATE.value_of(s.abi_name()) == value)
    }
}

/// `ibv_access_flags`.
pub mod access {
    pub const LOCAL_WRITE: u8 = 1 << 0;
    pub const REMOTE_WRITE: u8 = 1 << 1;
    pub const REMOTE_READ: u8 = 1 << 2;
    pub const REMOTE_ATOMIC: u8 = 1 << 3;
}

/// `ibv_qp_attr_mask`: which [`QpAttr`] fields a [`Context::modify_qp`]
/// applies.
pub mod attr_mask {
    pub const STATE: u32 = 1 << 0;
    pub const ACCESS_FLAGS: u32 = 1 << 3;
    pub const PKEY_INDEX: u32 = 1 << 4;
    pub const AV: u32 = 1 << 7;
    pub const PATH_MTU: u32 = 1 << 8;
    pub const TIMEOUT: u32 = 1 << 9;
    pub const RETRY_CNT: u32 = 1 << 10;
    pub const RNR_RETRY: u32 = 1 << 11;
    pub const RQ_PSN: u32 = 1 << 12;
    pub const MAX_QP_RD_ATOMIC: u32 = 1 << 13;
    pub const MIN_RNR_TIMER: u32 = 1 << 15;
    pub const SQ_PSN: u32 = 1 << 16;
    pub const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
    pub const DEST_QPN: u32 = 1 << 20;
}

/// A protection domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pd(pub u32);

/// A registered memory region (L_Key = R_Key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mr {
    pub pd: Pd,
    pub addr: u64,
    pub length: u64,
    pub lkey: u32,
    pub rkey: u32,
    pub access: u8,
}

/// A completion queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cq {
    pub cqn: u32,
    /// Entries the ring holds.
    pub cqe: u32,
}

/// An RC queue pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Qp {
    pub qp_num: u32,
}

/// Work queue sizes of a new QP (`ibv_qp_cap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpCap {
    pub max_send_wr: u32,
    pub max_recv_wr: u32,
    pub max_send_sge: u32,
    pub max_recv_sge: u32,
    /// The most bytes a send WQE may carry inline ([`SendWr::inline`]).
    pub max_inline_data: u32,
}

/// The address of the peer (`ibv_ah_attr` for RoCE v2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressVector {
    pub dmac: [u8; 6],
    pub dgid: IpAddr,
    pub dscp: u8,
    pub udp_src_port: u16,
}

/// `ibv_qp_attr`: a [`Context::modify_qp`] applies the fields its mask
/// names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpAttr {
    pub qp_state: QpState,
    /// 256, 512, 1024, 2048 or 4096.
    pub path_mtu: u32,
    pub timeout: u8,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub min_rnr_timer: u8,
    pub max_rd_atomic: u8,
    pub max_dest_rd_atomic: u8,
    pub qp_access_flags: u8,
    pub pkey: u16,
    pub dest_qp_num: u32,
    pub rq_psn: u32,
    pub sq_psn: u32,
    pub ah: Option<AddressVector>,
}

impl Default for QpAttr {
    fn default() -> Self {
        QpAttr {
            qp_state: QpState::Reset,
            path_mtu: 4096,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            max_rd_atomic: 16,
            max_dest_rd_atomic: 16,
            qp_access_flags: 0,
            pkey: 0xFFFF,
            dest_qp_num: 0,
            rq_psn: 0,
            sq_psn: 0,
            ah: None,
        }
    }
}

/// A scatter/gather element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sge {
    pub addr: u64,
    pub length: u32,
    pub lkey: u32,
}

/// What a send WQE does (`ibv_wr_opcode` with its operands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    Send,
    SendWithImm {
        imm: u32,
    },
    SendWithInv {
        rkey: u32,
    },
    RdmaWrite {
        remote_addr: u64,
        rkey: u32,
    },
    RdmaWriteWithImm {
        remote_addr: u64,
        rkey: u32,
        imm: u32,
    },
    RdmaRead {
        remote_addr: u64,
        rkey: u32,
    },
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

/// `ibv_send_wr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendWr {
    pub wr_id: u64,
    pub opcode: Opcode,
    pub sg_list: Vec<Sge>,
    pub signaled: bool,
    pub solicited: bool,
    pub fence: bool,
    /// `IBV_SEND_INLINE`: SEND and RDMA WRITE variants only. The bytes the
    /// SGEs point at are copied into the WQE by `post_send` (their L_Keys
    /// are not used), so the buffers may be reused as soon as it returns.
    pub inline: bool,
}

/// `ibv_recv_wr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecvWr {
    pub wr_id: u64,
    pub sg_list: Vec<Sge>,
}

/// `ibv_wc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkCompletion {
    pub wr_id: u64,
    /// A `wc_status` name: "SUCCESS", "REM_ACCESS_ERR", ...
    pub status: &'static str,
    /// A `wc_opcode` name: "RDMA_WRITE", "RECV", ...
    pub opcode: &'static str,
    pub qp_num: u32,
    pub byte_len: u32,
    pub imm_data: Option<u32>,
    pub invalidated_rkey: Option<u32>,
    pub wqe_index: u16,
    pub vendor_err: u8,
}

/// An event from the device (`ibv_get_cq_event` and
/// `ibv_get_async_event` in one stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// An `event_type` name: "COMPLETION", "QP_FATAL", "CQ_ERR", ...
    pub event: &'static str,
    /// For QP errors, a `qp_error_cause` name ("NONE" otherwise).
    pub cause: &'static str,
    /// The CQ or QP the event is about.
    pub object: u32,
    pub detail: u32,
}

impl WorkCompletion {
    pub fn is_success(&self) -> bool {
        self.status == "SUCCESS"
    }
}

/// A QP's rings ([`Context::qp_rings`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpRingInfo {
    pub sq_va: u64,
    pub sq_log_size: u32,
    pub sq_log_stride: u32,
    pub sq_producer: u16,
    pub rq_va: u64,
    pub rq_log_size: u32,
    pub rq_log_stride: u32,
    pub rq_producer: u16,
}

/// A ring in host memory.
#[derive(Clone, Copy, Debug)]
struct RingMemory {
    va: u64,
    bus: u64,
    log_size: u32,
    log_stride: u32,
}

impl RingMemory {
    fn slot_va(&self, index: u64) -> u64 {
        self.va + ((index % (1 << self.log_size)) << self.log_stride)
    }
}

/// The driver's side of a QP.
#[derive(Clone, Debug)]
struct QpRings {
    state: QpState,
    send_cq: u32,
    recv_cq: u32,
    pd: Pd,
    sq: WorkQueue,
    rq: WorkQueue,
    /// The QP's `max_inline_data`.
    max_inline: u32,
}

/// A send or receive ring and the driver's indexes in it.
#[derive(Clone, Copy, Debug)]
struct WorkQueue {
    ring: RingMemory,
    producer: u16,
    /// One past the newest WQE a CQE reported complete.
    completed: u16,
}

impl WorkQueue {
    fn new(ring: RingMemory) -> WorkQueue {
        WorkQueue {
            ring,
            producer: 0,
            completed: 0,
        }
    }

    fn check_room(&self) -> Result<()> {
        let used = self.producer.wrapping_sub(self.completed);
        if used >= 1 << self.ring.log_size {
            return Err(Error::QueueFull);
        }
        Ok(())
    }
}

/// Which ring of a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queue {
    Send,
    Recv,
}

fn check_sge_count(given: usize, max: usize) -> Result<()> {
    if given > max {
        return Err(Error::TooManySges { given, max });
    }
    Ok(())
}

/// The driver's side of a CQ.
#[derive(Clone, Debug)]
struct CqRing {
    ring: RingMemory,
    consumer: u64,
}

/// Commands that wait longer than this many services are answered
/// [`Error::Timeout`].
const ADMIN_PATIENCE: u32 = 1_000_000;

/// An opened device.
pub struct Context<D: Device> {
    bar: Bar0<Bar0Mmio<D>>,
    attr: DeviceAttr,
    asq: RingMemory,
    acq: RingMemory,
    admin_tail: u16,
    mailbox: (u64, u64, u64),
    /// The EQ every CQ and QP of this context reports to, and where its
    /// consumer stands.
    eq: RingMemory,
    eqn: u32,
    eq_consumer: u64,
    mrs: BTreeMap<u32, Mr>,
    cqs: BTreeMap<u32, CqRing>,
    qps: BTreeMap<u32, QpRings>,
    /// Post a send WQE through the QP's inline window when its ring is
    /// idle ([`Context::set_inline_doorbell`]).
    inline_doorbell: bool,
}

const ADMIN_LOG_SIZE: u32 = 6;
const EQ_LOG_SIZE: u32 = 10;
/// The MSI-X vector of the context's EQ.
const EQ_VECTOR: u16 = 0;
const MAILBOX_BYTES: u64 = 64 << 10;

impl<D: Device> Context<D> {
    /// Opens the device: finds its registers, checks the ABI, enables it
    /// and sets up the admin queue.
    pub fn open(device: D) -> Result<Context<D>> {
        let mut bar = Bar0::open(Bar0Mmio(device))?;
        let attr = bar.query_device();
        let enable = 1u32 << control_bits::ENABLE.bit;
        bar.write32(&regs::CONTROL, "control", enable);
        let device = &mut bar.mmio().0;
        let ring = |d: &mut D, log_stride: u32| -> Result<RingMemory> {
            let bytes = 1u64 << (ADMIN_LOG_SIZE + log_stride);
            let (va, bus) = d.alloc_coherent(bytes)?;
            d.write(va, &vec![0; bytes as usize])?;
            Ok(RingMemory {
                va,
                bus,
                log_size: ADMIN_LOG_SIZE,
                log_stride,
            })
        };
        let asq = ring(device, admin::COMMAND.size.trailing_zeros())?;
        let acq = ring(device, completion::LAYOUT.size.trailing_zeros())?;
        let (mailbox_va, mailbox_bus) = device.alloc_coherent(MAILBOX_BYTES)?;
        let admin_block = &regs::ADMIN;
        bar.write64(admin_block, "asq_base", asq.bus);
        bar.write64(admin_block, "acq_base", acq.bus);
        bar.write32(admin_block, "acq_log_size", ADMIN_LOG_SIZE);
        bar.write32(admin_block, "asq_log_size", ADMIN_LOG_SIZE);
        let device = &mut bar.mmio().0;
        let eq_bytes = (eqe::LAYOUT.size as u64) << EQ_LOG_SIZE;
        let (eq_va, eq_bus) = device.alloc_coherent(eq_bytes)?;
        device.write(eq_va, &vec![0; eq_bytes as usize])?;
        device.enable_interrupt(EQ_VECTOR)?;
        let eq = RingMemory {
            va: eq_va,
            bus: eq_bus,
            log_size: EQ_LOG_SIZE,
            log_stride: eqe::LAYOUT.size.trailing_zeros(),
        };
        let mut ctx = Context {
            bar,
            attr,
            asq,
            acq,
            admin_tail: 0,
            mailbox: (mailbox_va, mailbox_bus, MAILBOX_BYTES),
            eq,
            eqn: 0,
            eq_consumer: 0,
            mrs: BTreeMap::new(),
            cqs: BTreeMap::new(),
            qps: BTreeMap::new(),
            inline_doorbell: false,
        };
        ctx.eqn = ctx.admin(
            "CREATE_EQ",
            |c| {
                use inputs::create_eq::*;
                LOG_SIZE.put(c, u64::from(EQ_LOG_SIZE));
                VECTOR.put(c, u64::from(EQ_VECTOR));
                RING.put(c, eq_bus);
            },
            None,
            false,
        )?;
        Ok(ctx)
    }

    /// `ibv_query_device`.
    pub fn query_device(&self) -> DeviceAttr {
        self.attr
    }

    /// The counters, `ethtool -S` style, by their ABI names.
    pub fn counters(&mut self) -> Vec<(&'static str, u64)> {
        self.bar.counters()
    }

    /// The congestion control parameters by name (DCQCN as NVIDIA's
    /// `roce_np` / `roce_rp` name them, and PFC; `docs/abi.md`).
    pub fn congestion(&mut self) -> Vec<(&'static str, u32)> {
        self.bar.congestion()
    }

    /// Sets one congestion control parameter, for every QP at once.
    pub fn set_congestion(&mut self, name: &str, value: u32) -> Result<()> {
        Ok(self.bar.set_congestion(name, value)?)
    }

    /// The device underneath (for a backend's own calls).
    pub fn device(&mut self) -> &mut D {
        &mut self.bar.mmio().0
    }

    /// `len` bytes of host memory for buffers: its address.
    pub fn alloc(&mut self, len: u64) -> Result<u64> {
        Ok(self.device().alloc(len)?)
    }

    /// CPU write of host memory.
    pub fn write(&mut self, va: u64, data: &[u8]) -> Result<()> {
        Ok(self.device().write(va, data)?)
    }

    /// CPU read of host memory.
    pub fn read(&mut self, va: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0; len];
        self.device().read(va, &mut buf)?;
        Ok(buf)
    }

    /// Runs an admin command whose one input is the handle of the object
    /// it destroys (`handle` in the field `field`): DESTROY_*, DEREG_MR.
    fn admin_destroy(&mut self, command: &'static str, field: Field, handle: u32) -> Result<u32> {
        self.admin(command, |c| field.put(c, u64::from(handle)), None, false)
    }

    /// Runs one admin command: `fill` writes its inputs; `input` goes to
    /// the mailbox. Returns the completion's `result`.
    fn admin(
        &mut self,
        command: &'static str,
        fill: impl FnOnce(&mut [u8]),
        input: Option<&[u8]>,
        output: bool,
    ) -> Result<u32> {
        let (mailbox_va, mailbox_bus, mailbox_len) = self.mailbox;
        let mut entry = [0u8; admin::COMMAND.size];
        admin::OPCODE_FIELD.put(&mut entry, admin::OPCODE.value_of(command));
        admin::TOKEN.put(&mut entry, u64::from(self.admin_tail));
        if let Some(input) = input {
            if input.len() as u64 > mailbox_len {
                return Err(Error::BadAttribute(
                    "more mailbox input than the mailbox holds",
                ));
            }
            self.device().write(mailbox_va, input)?;
            admin::IN_MAILBOX.put(&mut entry, mailbox_bus);
        }
        if output {
            admin::OUT_MAILBOX.put(&mut entry, mailbox_bus);
        }
        fill(&mut entry);
        let index = u64::from(self.admin_tail);
        let (slot, reply_at) = (self.asq.slot_va(index), self.acq.slot_va(index));
        self.device().write(slot, &entry)?;
        self.admin_tail = self.admin_tail.wrapping_add(1);
        let tail = u32::from(self.admin_tail);
        self.bar.write32(&regs::ADMIN, "asq_tail", tail);
        let owner = cqe::owner_for(index, self.acq.log_size);
        for _ in 0..ADMIN_PATIENCE {
            let mut reply = [0u8; completion::LAYOUT.size];
            self.device().read(reply_at, &mut reply)?;
            if get(&reply, &completion::OWNER) == owner {
                self.bar.write32(&regs::ADMIN, "acq_head", tail);
                let status = get(&reply, &completion::STATUS);
                if status != admin::STATUS.value_of("OK") {
                    return Err(Error::Device {
                        command,
                        status: name_of(&admin::STATUS, status),
                    });
                }
                return Ok(get(&reply, &completion::RESULT) as u32);
            }
            self.device().service();
        }
        Err(Error::Timeout(command))
    }

    fn mailbox_output(&mut self, len: usize) -> Result<Vec<u8>> {
        let va = self.mailbox.0;
        self.read(va, len)
    }

    /// The driver's side of a QP, or `NoSuchObject`.
    fn qp(&self, qp: Qp) -> Result<&QpRings> {
        self.qps
            .get(&qp.qp_num)
            .ok_or(Error::NoSuchObject("QP", qp.qp_num))
    }
}
