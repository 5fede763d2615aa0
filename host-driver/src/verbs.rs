//! The verbs, shaped like libibverbs: a [`Context`] opened on a
//! [`Device`] hands out protection domains, memory regions, completion
//! queues and RC queue pairs, posts work and polls completions.
//!
//! Everything goes through the host ABI (`docs/abi.md`): objects are
//! created by admin commands, work requests are written into the QP's
//! rings in host memory and rung through its doorbell page, completions
//! are read from the CQ ring by owner bit. Misuse is a typed [`Error`]
//! before anything reaches the device.

use crate::bar0::{Bar0, Bar0Error, DeviceAttr};
use crate::device::{Bar0Mmio, Device, DeviceError};
use rocenic_abi::admin::{self, completion, inputs, qp_attributes as attr};
use rocenic_abi::codes;
use rocenic_abi::layout::{CodeSet, Field};
use rocenic_abi::registers::{self as regs, control_bits};
use rocenic_abi::{cqe, eqe, wqe};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// What a verb can fail with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Bar0(#[from] Bar0Error),
    #[error(transparent)]
    Memory(#[from] DeviceError),
    #[error("QP {qpn} is in {state:?}, which does not allow this")]
    WrongQpState { qpn: u32, state: QpState },
    #[error("the queue is full")]
    QueueFull,
    #[error("{given} SGEs; this queue takes at most {max}")]
    TooManySges { given: usize, max: usize },
    #[error("SGE {addr:#x} + {length:#x} with L_Key {lkey:#x} is not inside a registered MR")]
    SgeOutsideMr { addr: u64, length: u32, lkey: u32 },
    #[error("bad attribute: {0}")]
    BadAttribute(&'static str),
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

    /// `ibv_alloc_pd`.
    pub fn alloc_pd(&mut self) -> Result<Pd> {
        self.admin("CREATE_PD", |_| {}, None, false).map(Pd)
    }

    /// `ibv_dealloc_pd`: refused while an MR or QP uses it.
    pub fn dealloc_pd(&mut self, pd: Pd) -> Result<()> {
        let in_use = self.mrs.values().any(|m| m.pd == pd) || self.qps.values().any(|q| q.pd == pd);
        if in_use {
            return Err(Error::BadAttribute("the PD is still used by an MR or a QP"));
        }
        self.admin(
            "DESTROY_PD",
            |c| inputs::PDN.put(c, u64::from(pd.0)),
            None,
            false,
        )
        .map(drop)
    }

    /// `ibv_reg_mr` of `[addr, addr + length)` of memory from
    /// [`Context::alloc`].
    pub fn reg_mr(&mut self, pd: Pd, addr: u64, length: u64, access_flags: u8) -> Result<Mr> {
        use access::*;
        if access_flags & !(LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC) != 0 {
            return Err(Error::BadAttribute("unknown access flags"));
        }
        if access_flags & (REMOTE_WRITE | REMOTE_ATOMIC) != 0 && access_flags & LOCAL_WRITE == 0 {
            return Err(Error::BadAttribute(
                "remote write or atomic access needs local write",
            ));
        }
        if length == 0 {
            return Err(Error::BadAttribute("a zero-length MR"));
        }
        let (page_size, pages) = self.device().pin(addr, length)?;
        let list: Vec<u8> = pages.iter().flat_map(|p| p.to_le_bytes()).collect();
        let key = self.admin(
            "REG_MR",
            |c| {
                use inputs::reg_mr::*;
                PDN.put(c, u64::from(pd.0));
                ACCESS.put(c, u64::from(access_flags));
                PAGE_SHIFT.put(c, u64::from(page_size.trailing_zeros()));
                PAGE_COUNT.put(c, pages.len() as u64);
                VA.put(c, addr);
                LENGTH.put(c, length);
            },
            Some(&list),
            false,
        )?;
        let mr = Mr {
            pd,
            addr,
            length,
            lkey: key,
            rkey: key,
            access: access_flags,
        };
        self.mrs.insert(key, mr);
        Ok(mr)
    }

    /// `ibv_dereg_mr`: once it returns, no access through the key
    /// succeeds.
    pub fn dereg_mr(&mut self, mr: Mr) -> Result<()> {
        self.admin(
            "DEREG_MR",
            |c| inputs::KEY.put(c, u64::from(mr.lkey)),
            None,
            false,
        )?;
        self.mrs.remove(&mr.lkey);
        Ok(())
    }

    /// `ibv_create_cq` with at least `cqe` entries.
    pub fn create_cq(&mut self, cqe: u32) -> Result<Cq> {
        let log_size = cqe.max(2).next_power_of_two().trailing_zeros();
        if log_size > regs::limits::LOG_MAX_CQE {
            return Err(Error::BadAttribute("more CQEs than the device's max_cqe"));
        }
        let bytes = (cqe::LAYOUT.size as u64) << log_size;
        let (va, bus) = self.device().alloc_coherent(bytes)?;
        self.device().write(va, &vec![0; bytes as usize])?;
        let eqn = self.eqn;
        let cqn = self.admin(
            "CREATE_CQ",
            |c| {
                inputs::create_cq::LOG_SIZE.put(c, u64::from(log_size));
                inputs::create_cq::EQN.put(c, u64::from(eqn));
                inputs::create_cq::RING.put(c, bus);
            },
            None,
            false,
        )?;
        let ring = RingMemory {
            va,
            bus,
            log_size,
            log_stride: cqe::LAYOUT.size.trailing_zeros(),
        };
        self.cqs.insert(cqn, CqRing { ring, consumer: 0 });
        Ok(Cq {
            cqn,
            cqe: 1 << log_size,
        })
    }

    /// `ibv_destroy_cq`: refused while a QP uses it.
    pub fn destroy_cq(&mut self, cq: Cq) -> Result<()> {
        if self
            .qps
            .values()
            .any(|q| q.send_cq == cq.cqn || q.recv_cq == cq.cqn)
        {
            return Err(Error::BadAttribute("the CQ is still used by a QP"));
        }
        self.admin(
            "DESTROY_CQ",
            |c| inputs::CQN.put(c, u64::from(cq.cqn)),
            None,
            false,
        )?;
        self.cqs.remove(&cq.cqn);
        Ok(())
    }

    /// `ibv_create_qp` of an RC QP, in RESET.
    pub fn create_qp(&mut self, pd: Pd, send_cq: Cq, recv_cq: Cq, cap: QpCap) -> Result<Qp> {
        for cq in [send_cq, recv_cq] {
            if !self.cqs.contains_key(&cq.cqn) {
                return Err(Error::NoSuchObject("CQ", cq.cqn));
            }
        }
        let stride = |sges: u32, max_sge: fn(u32) -> usize| {
            wqe::LOG_STRIDES
                .into_iter()
                .find(|&s| sges as usize <= max_sge(s))
                .ok_or(Error::BadAttribute("more SGEs than a WQE holds"))
        };
        let sq_stride = stride(cap.max_send_sge, wqe::send::max_sge)?;
        let rq_stride = stride(cap.max_recv_sge, wqe::recv::max_sge)?;
        let log_size = |wr: u32| {
            let log = wr.max(1).next_power_of_two().trailing_zeros();
            (wr != 0 && log <= regs::limits::LOG_MAX_QP_WR)
                .then_some(log.max(1))
                .ok_or(Error::BadAttribute("work requests: 1 ..= max_qp_wr"))
        };
        let (sq_log, rq_log) = (log_size(cap.max_send_wr)?, log_size(cap.max_recv_wr)?);
        let mut ring = |log_size: u32, log_stride: u32| -> Result<RingMemory> {
            let bytes = 1u64 << (log_size + log_stride);
            let (va, bus) = self.device().alloc_coherent(bytes)?;
            self.device().write(va, &vec![0; bytes as usize])?;
            Ok(RingMemory {
                va,
                bus,
                log_size,
                log_stride,
            })
        };
        let sq = ring(sq_log, sq_stride)?;
        let rq = ring(rq_log, rq_stride)?;
        let qpn = self.admin(
            "CREATE_QP",
            |c| {
                use inputs::create_qp::*;
                PDN.put(c, u64::from(pd.0));
                SEND_CQN.put(c, u64::from(send_cq.cqn));
                RECV_CQN.put(c, u64::from(recv_cq.cqn));
                SQ_LOG_SIZE.put(c, u64::from(sq.log_size));
                SQ_LOG_STRIDE.put(c, u64::from(sq.log_stride));
                RQ_LOG_SIZE.put(c, u64::from(rq.log_size));
                RQ_LOG_STRIDE.put(c, u64::from(rq.log_stride));
                SQ_RING.put(c, sq.bus);
                RQ_RING.put(c, rq.bus);
            },
            None,
            false,
        )?;
        self.qps.insert(
            qpn,
            QpRings {
                state: QpState::Reset,
                send_cq: send_cq.cqn,
                recv_cq: recv_cq.cqn,
                pd,
                sq: WorkQueue::new(sq),
                rq: WorkQueue::new(rq),
            },
        );
        Ok(Qp { qp_num: qpn })
    }

    fn qp(&self, qp: Qp) -> Result<&QpRings> {
        self.qps
            .get(&qp.qp_num)
            .ok_or(Error::NoSuchObject("QP", qp.qp_num))
    }

    /// `ibv_modify_qp`: moves the QP to `attr.qp_state` (IBA table 91),
    /// applying the attributes `mask` names; the transition's required
    /// attributes must be among them.
    pub fn modify_qp(&mut self, qp: Qp, attr: &QpAttr, mask: u32) -> Result<()> {
        use attr_mask::*;
        let current = self.qp(qp)?.state;
        if mask & STATE == 0 {
            return Err(Error::BadAttribute("the mask must name the target state"));
        }
        let required = match (current, attr.qp_state) {
            (_, QpState::Reset | QpState::Err) => 0,
            (QpState::Reset, QpState::Init) => ACCESS_FLAGS | PKEY_INDEX,
            (QpState::Init, QpState::Rtr) => {
                AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER
            }
            (QpState::Rtr, QpState::Rts) => {
                SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC
            }
            (state, _) => {
                return Err(Error::WrongQpState {
                    qpn: qp.qp_num,
                    state,
                })
            }
        };
        if mask & required != required {
            return Err(Error::BadAttribute(
                "the mask lacks an attribute the transition requires",
            ));
        }
        let mtu_code = match attr.path_mtu {
            256 => 1,
            512 => 2,
            1024 => 3,
            2048 => 4,
            4096 => 5,
            _ if mask & PATH_MTU == 0 => 0,
            _ => {
                return Err(Error::BadAttribute(
                    "path_mtu: 256, 512, 1024, 2048 or 4096",
                ))
            }
        };
        if mask & AV != 0 && attr.ah.is_none() {
            return Err(Error::BadAttribute(
                "AV in the mask without an address vector",
            ));
        }
        if attr.retry_cnt > 7 || attr.rnr_retry > 7 || attr.min_rnr_timer > 31 {
            return Err(Error::BadAttribute(
                "retry_cnt, rnr_retry: 0 ..= 7; min_rnr_timer: 0 ..= 31",
            ));
        }
        let max_rd = self.attr.max_qp_rd_atom;
        if u32::from(attr.max_rd_atomic) > max_rd || u32::from(attr.max_dest_rd_atomic) > max_rd {
            return Err(Error::BadAttribute(
                "max_rd_atomic above the device's max_qp_rd_atom",
            ));
        }
        let mut a = [0u8; attr::LAYOUT.size];
        for (field, value) in [
            (
                &attr::STATE,
                codes::QP_STATE.value_of(attr.qp_state.abi_name()),
            ),
            (&attr::PATH_MTU, mtu_code),
            (&attr::TIMEOUT, u64::from(attr.timeout)),
            (&attr::RETRY_CNT, u64::from(attr.retry_cnt)),
            (&attr::RNR_RETRY, u64::from(attr.rnr_retry)),
            (&attr::MIN_RNR_TIMER, u64::from(attr.min_rnr_timer)),
            (&attr::MAX_RD_ATOMIC, u64::from(attr.max_rd_atomic)),
            (
                &attr::MAX_DEST_RD_ATOMIC,
                u64::from(attr.max_dest_rd_atomic),
            ),
            (&attr::ACCESS, u64::from(attr.qp_access_flags)),
            (&attr::PKEY, u64::from(attr.pkey)),
            (&attr::DEST_QPN, u64::from(attr.dest_qp_num & 0xFF_FFFF)),
            (&attr::RQ_PSN, u64::from(attr.rq_psn & 0xFF_FFFF)),
            (&attr::SQ_PSN, u64::from(attr.sq_psn & 0xFF_FFFF)),
        ] {
            field.put(&mut a, value);
        }
        if let Some(ah) = attr.ah {
            let mut mac = [0u8; 8];
            mac[..6].copy_from_slice(&ah.dmac);
            attr::DMAC.put(&mut a, u64::from_le_bytes(mac));
            attr::DSCP.put(&mut a, u64::from(ah.dscp & 0x3F));
            attr::UDP_SRC_PORT.put(&mut a, u64::from(ah.udp_src_port));
            attr::IPV6.put(&mut a, u64::from(ah.dgid.is_ipv6()));
            let gid = match ah.dgid {
                IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
                IpAddr::V6(v6) => v6.octets(),
            };
            attr::LAYOUT.areas[1]
                .set(&mut a, &gid)
                .expect("16-byte GID");
        }
        self.admin(
            "MODIFY_QP",
            |c| {
                inputs::modify_qp::QPN.put(c, u64::from(qp.qp_num));
                inputs::modify_qp::ATTR_MASK.put(c, u64::from(mask));
            },
            Some(&a),
            false,
        )?;
        let rings = self.qps.get_mut(&qp.qp_num).expect("looked up above");
        rings.state = attr.qp_state;
        if attr.qp_state == QpState::Reset {
            rings.sq = WorkQueue::new(rings.sq.ring);
            rings.rq = WorkQueue::new(rings.rq.ring);
        }
        Ok(())
    }

    /// RESET -> INIT -> RTR -> RTS in three [`Context::modify_qp`]s, each
    /// with the attributes IBA requires for its step taken from `attr`
    /// (its `qp_state` is ignored): what perftest and rdma_cm do once the
    /// peer's QPN, PSN and address are known.
    pub fn connect_rc(&mut self, qp: Qp, attr: &QpAttr) -> Result<()> {
        use attr_mask::*;
        let steps = [
            (QpState::Init, ACCESS_FLAGS | PKEY_INDEX),
            (
                QpState::Rtr,
                AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
            ),
            (
                QpState::Rts,
                SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC,
            ),
        ];
        for (qp_state, mask) in steps {
            self.modify_qp(qp, &QpAttr { qp_state, ..*attr }, STATE | mask)?;
        }
        Ok(())
    }

    /// `ibv_query_qp`: the device's view of the QP (its state included,
    /// which may have moved to ERR on its own).
    pub fn query_qp(&mut self, qp: Qp) -> Result<QpAttr> {
        self.qp(qp)?;
        self.admin(
            "QUERY_QP",
            |c| inputs::QPN.put(c, u64::from(qp.qp_num)),
            None,
            true,
        )?;
        let a = self.mailbox_output(attr::LAYOUT.size)?;
        let g = |f: &Field| get(&a, f);
        let state = QpState::from_abi(g(&attr::STATE)).unwrap_or(QpState::Err);
        if let Some(rings) = self.qps.get_mut(&qp.qp_num) {
            rings.state = state;
        }
        Ok(QpAttr {
            qp_state: state,
            path_mtu: match g(&attr::PATH_MTU) {
                code @ 1..=5 => 128 << code,
                _ => 0,
            },
            timeout: g(&attr::TIMEOUT) as u8,
            retry_cnt: g(&attr::RETRY_CNT) as u8,
            rnr_retry: g(&attr::RNR_RETRY) as u8,
            min_rnr_timer: g(&attr::MIN_RNR_TIMER) as u8,
            max_rd_atomic: g(&attr::MAX_RD_ATOMIC) as u8,
            max_dest_rd_atomic: g(&attr::MAX_DEST_RD_ATOMIC) as u8,
            qp_access_flags: g(&attr::ACCESS) as u8,
            pkey: g(&attr::PKEY) as u16,
            dest_qp_num: g(&attr::DEST_QPN) as u32,
            rq_psn: g(&attr::RQ_PSN) as u32,
            sq_psn: g(&attr::SQ_PSN) as u32,
            ah: None,
        })
    }

    /// `ibv_destroy_qp`: outstanding work is dropped without completions.
    pub fn destroy_qp(&mut self, qp: Qp) -> Result<()> {
        self.qp(qp)?;
        self.admin(
            "DESTROY_QP",
            |c| inputs::QPN.put(c, u64::from(qp.qp_num)),
            None,
            false,
        )?;
        self.qps.remove(&qp.qp_num);
        Ok(())
    }

    fn check_sges(&self, pd: Pd, sges: &[Sge]) -> Result<()> {
        for s in sges {
            let inside = self.mrs.get(&s.lkey).is_some_and(|mr| {
                mr.pd == pd
                    && s.addr >= mr.addr
                    && s.addr
                        .checked_add(u64::from(s.length))
                        .is_some_and(|end| end <= mr.addr + mr.length)
            });
            if !inside {
                return Err(Error::SgeOutsideMr {
                    addr: s.addr,
                    length: s.length,
                    lkey: s.lkey,
                });
            }
        }
        Ok(())
    }

    /// Where the QP's rings are and where its producers stand, as
    /// mlx5dv's direct verbs give them: for tools and tests that write a
    /// WQE or ring a doorbell themselves.
    pub fn qp_rings(&self, qp: Qp) -> Result<QpRingInfo> {
        let q = self.qp(qp)?;
        Ok(QpRingInfo {
            sq_va: q.sq.ring.va,
            sq_log_size: q.sq.ring.log_size,
            sq_log_stride: q.sq.ring.log_stride,
            sq_producer: q.sq.producer,
            rq_va: q.rq.ring.va,
            rq_log_size: q.rq.ring.log_size,
            rq_log_stride: q.rq.ring.log_stride,
            rq_producer: q.rq.producer,
        })
    }

    /// `ibv_post_send`: one WQE into the send ring, then the doorbell.
    pub fn post_send(&mut self, qp: Qp, wr: &SendWr) -> Result<()> {
        let rings = self.qp(qp)?.clone();
        if !matches!(rings.state, QpState::Rts | QpState::Err) {
            return Err(Error::WrongQpState {
                qpn: qp.qp_num,
                state: rings.state,
            });
        }
        rings.sq.check_room()?;
        let atomic = matches!(
            wr.opcode,
            Opcode::CompareSwap { .. } | Opcode::FetchAdd { .. }
        );
        let max = if atomic {
            1
        } else {
            wqe::send::max_sge(rings.sq.ring.log_stride)
        };
        check_sge_count(wr.sg_list.len(), max)?;
        if atomic && (wr.sg_list.len() != 1 || wr.sg_list[0].length != 8) {
            return Err(Error::BadAttribute("an atomic takes one 8-byte SGE"));
        }
        self.check_sges(rings.pd, &wr.sg_list)?;
        let slot = encode_send(wr, rings.sq.producer, rings.sq.ring.log_stride);
        self.post(qp, Queue::Send, &slot)
    }

    /// `ibv_post_recv`: one WQE into the receive ring, then the doorbell.
    pub fn post_recv(&mut self, qp: Qp, wr: &RecvWr) -> Result<()> {
        let rings = self.qp(qp)?.clone();
        if rings.state == QpState::Reset {
            return Err(Error::WrongQpState {
                qpn: qp.qp_num,
                state: rings.state,
            });
        }
        rings.rq.check_room()?;
        check_sge_count(
            wr.sg_list.len(),
            wqe::recv::max_sge(rings.rq.ring.log_stride),
        )?;
        self.check_sges(rings.pd, &wr.sg_list)?;
        let mut slot = vec![0u8; 1 << rings.rq.ring.log_stride];
        wqe::recv::WR_ID.put(&mut slot, wr.wr_id);
        wqe::recv::SGE_COUNT.put(&mut slot, wr.sg_list.len() as u64);
        wqe::recv::INDEX.put(&mut slot, u64::from(rings.rq.producer));
        for (i, s) in wr.sg_list.iter().enumerate() {
            encode_sge(&mut slot[wqe::recv::SEGMENTS + 16 * i..], s);
        }
        self.post(qp, Queue::Recv, &slot)
    }

    /// Writes `slot` at the ring's producer index and rings the QP's
    /// doorbell with the index after it.
    fn post(&mut self, qp: Qp, queue: Queue, slot: &[u8]) -> Result<()> {
        let rings = self.qps.get(&qp.qp_num).expect("looked up by the caller");
        let (work, doorbell) = match queue {
            Queue::Send => (rings.sq, 0x000),
            Queue::Recv => (rings.rq, 0x004),
        };
        self.device()
            .write(work.ring.slot_va(u64::from(work.producer)), slot)?;
        let producer = work.producer.wrapping_add(1);
        let rings = self.qps.get_mut(&qp.qp_num).expect("looked up");
        match queue {
            Queue::Send => rings.sq.producer = producer,
            Queue::Recv => rings.rq.producer = producer,
        }
        let offset = qp.qp_num * regs::PAGE_SIZE + doorbell;
        self.device().write32(2, offset, u32::from(producer));
        Ok(())
    }

    /// `ibv_poll_cq`: up to `max` completions, oldest first; never waits.
    /// A polling loop on a simulated device gives it a turn
    /// ([`Device::service`]) when a round found nothing, so the device
    /// time of each completion is the time it was written.
    pub fn poll_cq(&mut self, cq: Cq, max: usize) -> Result<Vec<WorkCompletion>> {
        let mut ring = self
            .cqs
            .get(&cq.cqn)
            .ok_or(Error::NoSuchObject("CQ", cq.cqn))?
            .clone();
        let mut out = Vec::new();
        while out.len() < max {
            let mut e = [0u8; cqe::LAYOUT.size];
            self.device()
                .read(ring.ring.slot_va(ring.consumer), &mut e)?;
            if get(&e, &cqe::OWNER) != cqe::owner_for(ring.consumer, ring.ring.log_size) {
                break;
            }
            let wc = decode_cqe(&e);
            if let Some(q) = self.qps.get_mut(&wc.qp_num) {
                let next = wc.wqe_index.wrapping_add(1);
                if wc.opcode.starts_with("RECV") {
                    q.rq.completed = next;
                } else {
                    q.sq.completed = next;
                }
                if !wc.is_success() {
                    q.state = QpState::Err;
                }
            }
            out.push(wc);
            ring.consumer += 1;
        }
        if !out.is_empty() {
            let consumer = (ring.consumer & 0xFF_FFFF) as u32;
            self.device().write32(4, cq.cqn * regs::PAGE_SIZE, consumer);
            self.cqs.insert(cq.cqn, ring);
        }
        Ok(out)
    }

    /// `ibv_req_notify_cq`: an event at the CQ's next CQE (with
    /// `solicited_only`, its next solicited or error CQE).
    pub fn req_notify_cq(&mut self, cq: Cq, solicited_only: bool) -> Result<()> {
        use regs::cq_doorbell::{ARM, ARM_SOLICITED, CONSUMER};
        let ring = self
            .cqs
            .get(&cq.cqn)
            .ok_or(Error::NoSuchObject("CQ", cq.cqn))?;
        let mut word = [0u8; 4];
        CONSUMER.put(&mut word, ring.consumer & 0xFF_FFFF);
        let arm = if solicited_only { ARM_SOLICITED } else { ARM };
        arm.put(&mut word, 1);
        self.device()
            .write32(4, cq.cqn * regs::PAGE_SIZE, u32::from_le_bytes(word));
        Ok(())
    }

    /// The next event of this context's EQ, unarmed read.
    fn next_event(&mut self) -> Result<Option<Event>> {
        let mut e = [0u8; eqe::LAYOUT.size];
        let at = self.eq.slot_va(self.eq_consumer);
        self.device().read(at, &mut e)?;
        if get(&e, &eqe::OWNER) != cqe::owner_for(self.eq_consumer, self.eq.log_size) {
            return Ok(None);
        }
        self.eq_consumer += 1;
        self.ring_eq(false);
        Ok(Some(Event {
            event: name_of(&eqe::EVENT_TYPE, get(&e, &eqe::EVENT)),
            cause: name_of(&eqe::QP_ERROR_CAUSE, get(&e, &eqe::CAUSE)),
            object: get(&e, &eqe::OBJECT) as u32,
            detail: get(&e, &eqe::DETAIL) as u32,
        }))
    }

    fn ring_eq(&mut self, arm: bool) {
        use regs::eq_doorbell::{ARM, CONSUMER};
        let mut word = [0u8; 4];
        CONSUMER.put(&mut word, self.eq_consumer & 0xFF_FFFF);
        ARM.put(&mut word, u64::from(arm));
        let value = u32::from_le_bytes(word);
        let eqn = self.eqn;
        let offset = self
            .bar
            .register_offset(&regs::EVENT_QUEUES, "eq_doorbell", eqn);
        self.device().write32(0, offset, value);
    }

    /// The next event (an armed CQ's completion, a QP or CQ error),
    /// sleeping on the EQ's interrupt when there is none; `Timeout` after
    /// `timeout_ns` of device time.
    pub fn get_event(&mut self, timeout_ns: u64) -> Result<Event> {
        let deadline = self.device().now_ns().saturating_add(timeout_ns);
        loop {
            if let Some(event) = self.next_event()? {
                return Ok(event);
            }
            self.ring_eq(true);
            if let Some(event) = self.next_event()? {
                return Ok(event);
            }
            let left = deadline.saturating_sub(self.device().now_ns());
            if left == 0 || !self.device().wait_interrupt(EQ_VECTOR, left)? {
                return Err(Error::Timeout("an event"));
            }
        }
    }

    /// Polls until `count` completions arrived or `timeout_ns` of device
    /// time passed.
    pub fn wait_cq(
        &mut self,
        cq: Cq,
        count: usize,
        timeout_ns: u64,
    ) -> Result<Vec<WorkCompletion>> {
        let deadline = self.device().now_ns().saturating_add(timeout_ns);
        let mut got = Vec::new();
        while got.len() < count {
            let polled = self.poll_cq(cq, count - got.len())?;
            if polled.is_empty() {
                if self.device().now_ns() > deadline {
                    return Err(Error::Timeout("completions"));
                }
                self.device().service();
            }
            got.extend(polled);
        }
        Ok(got)
    }
}

fn encode_sge(at: &mut [u8], s: &Sge) {
    wqe::sge::ADDR.put(at, s.addr);
    wqe::sge::LENGTH.put(at, u64::from(s.length));
    wqe::sge::LKEY.put(at, u64::from(s.lkey));
}

/// The send WQE of `wr` at ring index `index`, in a slot of
/// `2^log_stride` bytes.
pub fn encode_send(wr: &SendWr, index: u16, log_stride: u32) -> Vec<u8> {
    use wqe::send::*;
    let mut slot = vec![0u8; 1 << log_stride];
    let (name, remote_addr, rkey, imm) = match wr.opcode {
        Opcode::Send => ("SEND", 0, 0, 0),
        Opcode::SendWithImm { imm } => ("SEND_WITH_IMM", 0, 0, imm),
        Opcode::SendWithInv { rkey } => ("SEND_WITH_INV", 0, 0, rkey),
        Opcode::RdmaWrite { remote_addr, rkey } => ("RDMA_WRITE", remote_addr, rkey, 0),
        Opcode::RdmaWriteWithImm {
            remote_addr,
            rkey,
            imm,
        } => ("RDMA_WRITE_WITH_IMM", remote_addr, rkey, imm),
        Opcode::RdmaRead { remote_addr, rkey } => ("RDMA_READ", remote_addr, rkey, 0),
        Opcode::CompareSwap {
            remote_addr, rkey, ..
        } => ("ATOMIC_CMP_AND_SWP", remote_addr, rkey, 0),
        Opcode::FetchAdd {
            remote_addr, rkey, ..
        } => ("ATOMIC_FETCH_AND_ADD", remote_addr, rkey, 0),
    };
    let flag = |on: bool, name: &str| {
        if on {
            codes::SEND_FLAGS.value_of(name)
        } else {
            0
        }
    };
    let flags =
        flag(wr.signaled, "SIGNALED") | flag(wr.solicited, "SOLICITED") | flag(wr.fence, "FENCE");
    for (field, value) in [
        (&OPCODE, codes::SEND_OPCODE.value_of(name)),
        (&FLAGS, flags),
        (&SGE_COUNT, wr.sg_list.len() as u64),
        (&INDEX, u64::from(index)),
        (&WR_ID, wr.wr_id),
        (&REMOTE_ADDR, remote_addr),
        (&RKEY, u64::from(rkey)),
        (&IMM_OR_INVALIDATE, u64::from(imm)),
    ] {
        field.put(&mut slot, value);
    }
    match wr.opcode {
        Opcode::CompareSwap { compare, swap, .. } => {
            atomic::COMPARE_OR_ADD.put(&mut slot, compare);
            atomic::SWAP.put(&mut slot, swap);
        }
        Opcode::FetchAdd { add, .. } => atomic::COMPARE_OR_ADD.put(&mut slot, add),
        _ => {}
    }
    let first_sge = if let Opcode::CompareSwap { .. } | Opcode::FetchAdd { .. } = wr.opcode {
        atomic::RESULT_SGE
    } else {
        SEGMENTS
    };
    for (i, s) in wr.sg_list.iter().enumerate() {
        encode_sge(&mut slot[first_sge + 16 * i..], s);
    }
    slot
}

/// A CQE read from a ring.
pub fn decode_cqe(e: &[u8]) -> WorkCompletion {
    let flags = get(e, &cqe::FLAGS);
    let extra = get(e, &cqe::IMM_OR_INVALIDATED) as u32;
    let has = |name: &str| flags & codes::CQE_FLAGS.value_of(name) != 0;
    WorkCompletion {
        wr_id: get(e, &cqe::WR_ID),
        status: name_of(&codes::WC_STATUS, get(e, &cqe::STATUS)),
        opcode: name_of(&codes::WC_OPCODE, get(e, &cqe::OPCODE)),
        qp_num: get(e, &cqe::QPN) as u32,
        byte_len: get(e, &cqe::BYTE_LEN) as u32,
        imm_data: has("WITH_IMM").then_some(extra),
        invalidated_rkey: has("WITH_INV").then_some(extra),
        wqe_index: get(e, &cqe::WQE_INDEX) as u16,
        vendor_err: get(e, &cqe::VENDOR_SYNDROME) as u8,
    }
}
