//! What every NIC harness shares (`RtlNic`, `RtlRequesterNic`,
//! `RtlCoreNic`): the [`RtlHarness`] surface a fabric node drives, the run
//! bookkeeping (the shadow model and the host's CQs, the first mismatch
//! with its cycle, the setup window before the run), the scoreboard's
//! write and CQE queues and the leftover checks at the end of a run.

use super::RtlError;
use rocenic_fabric::{Endpoint, Time};
use rocenic_model::memory::HostMemory;
use rocenic_model::nic::{Nic, TxClass};
use rocenic_model::verbs::{CqId, Cqe, QpState, Qpn, RecvWr, SendWr, WcOpcode, WcStatus};
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{Block, Input, Output, Sim, SimError};

/// Core clock period: 250 MHz (defined with the scenario node contract,
/// whose `core_cycles` count in it).
pub use rocenic_model::node::NS_PER_CYCLE;

/// What the scoreboard matched, and the core's own counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtlNicStats {
    /// Cycles run since the core was programmed.
    pub cycles: u64,
    pub frames_in: u64,
    pub frames_out: u64,
    pub dma_write_beats: u64,
    pub dma_write_bytes: u64,
    pub cqes: u64,
    /// Response-queue pushes that found their QP's queue full and waited.
    pub queue_full_waits: u64,
}

/// What a fabric node needs of an RTL NIC harness (a Verilated half of the
/// core, or the whole core, behind its shadow model): the shadow for the
/// verbs set up before the run, the core's own verbs while it runs, and its
/// scoreboard's verdict.
pub trait RtlHarness: Endpoint {
    /// The shadow, to set up (PDs, CQs, QPs, MRs) before the run.
    fn setup(&mut self) -> Result<&mut Nic, RtlError>;
    fn shadow(&self) -> &Nic;
    fn post_send(&mut self, qpn: Qpn, wr: SendWr) -> anyhow::Result<()>;
    fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> anyhow::Result<()>;
    fn poll_cq(&mut self, cq: CqId, max: usize) -> Vec<Cqe>;
    fn cq_len(&self, cq: CqId) -> usize;
    fn memory(&self) -> &HostMemory;
    fn mismatch(&self) -> Option<&str>;
    fn finish_check(&mut self) -> Result<(), String>;
    /// Cycles the core has run.
    fn cycles(&self) -> u64;
}

/// A frame's BTH in a line, for mismatch reports.
pub(crate) fn describe(frame: &[u8]) -> String {
    match rocenic_wire::RoceFrame::decode(frame) {
        Ok(f) => format!(
            "opcode {:#04x} to QP {} PSN {} with {} payload bytes",
            f.bth.opcode,
            f.bth.dest_qp,
            f.bth.psn,
            f.payload.len()
        ),
        Err(e) => format!("undecodable ({e})"),
    }
}

/// What a harness keeps besides its core: the shadow, the completions
/// the host may poll, the first difference and whether the core has work.
pub struct Bookkeeping {
    pub shadow: Nic,
    /// The core's CQEs per CQ, each matched with the shadow's, for `poll_cq`.
    pub cqs: BTreeMap<CqId, VecDeque<Cqe>>,
    pub mismatch: Option<String>,
    pub busy: bool,
}

impl Bookkeeping {
    pub fn new(shadow: Nic) -> Bookkeeping {
        Bookkeeping {
            shadow,
            cqs: BTreeMap::new(),
            mismatch: None,
            busy: false,
        }
    }

    /// Keeps the first difference, with the core's cycle.
    pub fn fail(&mut self, cycle: u64, what: String) {
        if self.mismatch.is_none() {
            self.mismatch = Some(format!("cycle {cycle}: {what}"));
        }
    }

    /// The shadow, to set up before the run; refused once the core runs
    /// (its host ports for changes while running are not driven).
    pub fn setup(&mut self, running: bool) -> Result<&mut Nic, RtlError> {
        if running {
            return Err(RtlError::Unsupported(
                "configuration changes while the RTL core runs".into(),
            ));
        }
        Ok(&mut self.shadow)
    }

    pub fn poll_cq(&mut self, cq: CqId, max: usize) -> Vec<Cqe> {
        let Some(q) = self.cqs.get_mut(&cq) else {
            return Vec::new();
        };
        let n = max.min(q.len());
        q.drain(..n).collect()
    }

    pub fn cq_len(&self, cq: CqId) -> usize {
        self.cqs.get(&cq).map_or(0, VecDeque::len)
    }

    /// A matched core CQE of QP `qpn` to its CQ (the send CQ if `send`).
    pub fn deliver(&mut self, cqe: Cqe, send: bool) {
        if let Some((send_cq, recv_cq)) = self.shadow.qp_cqs(cqe.qpn) {
            let cq = if send { send_cq } else { recv_cq };
            self.cqs.entry(cq).or_default().push_back(cqe);
        }
    }
}

/// The CQE completes a receive WQE (the responder side's stream), not a
/// send WQE.
pub fn is_receive_cqe(c: &Cqe) -> bool {
    matches!(c.opcode, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm)
}

/// The shadow's CQEs not matched yet, per direction and QP.
#[derive(Default)]
pub struct ShadowCqes {
    pub receive: BTreeMap<Qpn, VecDeque<Cqe>>,
    pub send: BTreeMap<Qpn, VecDeque<Cqe>>,
}

impl ShadowCqes {
    /// Moves the shadow's new CQEs into the per-QP expectations.
    pub fn collect(&mut self, shadow: &mut Nic) {
        for cq in shadow.cq_ids() {
            for c in shadow.poll_cq(cq, usize::MAX) {
                let side = if is_receive_cqe(&c) {
                    &mut self.receive
                } else {
                    &mut self.send
                };
                side.entry(c.qpn).or_default().push_back(c);
            }
        }
    }

    /// The first shadow CQE no core CQE matched.
    pub fn leftover(&self) -> Option<(Qpn, &Cqe)> {
        self.receive
            .iter()
            .chain(&self.send)
            .find_map(|(q, c)| c.front().map(|c| (*q, c)))
    }
}

/// Drops the core's DMA write beats whose bytes the shadow's memory holds.
pub fn confirm_writes(memory: &HostMemory, writes: &mut Vec<(u64, Vec<u8>)>) {
    writes.retain(|(addr, bytes)| {
        let mut held = vec![0u8; bytes.len()];
        memory.read_phys(*addr, &mut held);
        held != *bytes
    });
}

/// One class of frames out of a core matched in order against the
/// shadow's: whichever side comes first waits for the other.
#[derive(Default)]
pub struct FrameMatch {
    pub core: VecDeque<Vec<u8>>,
    pub expected: VecDeque<Vec<u8>>,
}

impl FrameMatch {
    pub fn confirm(&mut self, class: &str) -> Result<(), String> {
        while !self.core.is_empty() && !self.expected.is_empty() {
            let (got, want) = (
                self.core.pop_front().unwrap_or_default(),
                self.expected.pop_front().unwrap_or_default(),
            );
            if got != want {
                let at = got.iter().zip(&want).position(|(a, b)| a != b);
                return Err(format!(
                    "a {class} frame of the core ({}) differs from the shadow's ({}), first at byte {at:?}",
                    describe(&got),
                    describe(&want)
                ));
            }
        }
        Ok(())
    }

    pub fn leftover(&self, class: &str) -> Option<String> {
        if let Some(first) = self.expected.front() {
            return Some(format!(
                "{} predicted {class} frames never emitted, the first {}",
                self.expected.len(),
                describe(first)
            ));
        }
        self.core
            .front()
            .map(|f| format!("a {class} frame the shadow never sent: {}", describe(f)))
    }
}

/// What the end of a run checks beyond the frames: writes confirmed,
/// CQEs matched, host memories equal.
pub fn leftover_checks(
    writes: &[(u64, Vec<u8>)],
    shadow_cqes: &ShadowCqes,
    core_memory: &HostMemory,
    shadow: &Nic,
) -> Option<String> {
    if let Some((addr, bytes)) = writes.first() {
        return Some(format!(
            "DMA write of {} bytes at {addr:#x} the shadow never made ({} such writes)",
            bytes.len(),
            writes.len()
        ));
    }
    if let Some((q, c)) = shadow_cqes.leftover() {
        return Some(format!("QP {q}: the shadow's CQE {c:?} never came"));
    }
    (core_memory != shadow.memory()).then(|| "host memory differs from the shadow's".into())
}

/// A send CQE of a core before its ring slot is mapped to the wr_id.
#[derive(Clone, Copy, Debug)]
pub struct CoreSendCqe {
    pub cycle: u64,
    pub qpn: Qpn,
    pub slot: u64,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    pub byte_len: u32,
}

/// The responder side's scoring of receive CQEs: each core CQE (with its
/// cycle) must be the shadow's next receive CQE of its QP; matched ones go
/// to the host's CQ, the others wait for the shadow.
pub fn match_receive_cqes(
    core: &mut Vec<(u64, Cqe)>,
    shadow_cqes: &mut ShadowCqes,
    book: &mut Bookkeeping,
) -> Result<(), String> {
    let mut kept = Vec::new();
    for (cycle, c) in std::mem::take(core) {
        match shadow_cqes
            .receive
            .get_mut(&c.qpn)
            .and_then(|q| q.pop_front())
        {
            Some(want) if want == c => book.deliver(c, false),
            Some(want) => {
                return Err(format!(
                    "cycle {cycle}: receive CQE {c:?}, the shadow's is {want:?}"
                ))
            }
            None => kept.push((cycle, c)),
        }
    }
    *core = kept;
    Ok(())
}

/// The requester side's scoring of send CQEs: each core CQE, its slot
/// mapped to the wr_id posted into it (`slots`), must be the shadow's
/// next send CQE of its QP. Call only while no post waits for its ring's
/// answer (a WQE posted in ERR completes before its result).
pub fn match_send_cqes(
    core: &mut Vec<CoreSendCqe>,
    slots: &BTreeMap<(Qpn, u64), u64>,
    shadow_cqes: &mut ShadowCqes,
    book: &mut Bookkeeping,
) -> Result<(), String> {
    let mut kept = Vec::new();
    for c in std::mem::take(core) {
        let Some(&wr_id) = slots.get(&(c.qpn, c.slot)) else {
            return Err(format!("send CQE {c:?} of a slot never posted"));
        };
        let cqe = Cqe {
            wr_id,
            status: c.status,
            opcode: c.opcode,
            qpn: c.qpn,
            byte_len: c.byte_len,
            imm: None,
            invalidated_rkey: None,
        };
        match shadow_cqes.send.get_mut(&c.qpn).and_then(|q| q.pop_front()) {
            Some(want) if want == cqe => book.deliver(cqe, true),
            Some(want) => {
                return Err(format!(
                    "cycle {}: send CQE {cqe:?}, the shadow's is {want:?}",
                    c.cycle
                ))
            }
            None => kept.push(c),
        }
    }
    *core = kept;
    Ok(())
}

/// The requester side's clock: a QP in RTS has unacknowledged PSNs in the
/// shadow, so the core's timers count and the core must run every cycle.
pub fn timers_running(shadow: &Nic) -> bool {
    shadow.qpns().into_iter().any(|q| {
        shadow
            .qp_context(q)
            .is_some_and(|v| v.state == QpState::Rts && v.sq_una_psn != v.sq_next_psn)
    })
}

/// The requester side's feed at a grant status of `qpn`: the shadow sends
/// what the core's grant sent, frames until its cursor reaches `next_psn`,
/// then its local error if the core found one (the shadow must then send
/// nothing). The frames the core must emit next.
pub fn shadow_sends(
    shadow: &mut Nic,
    now: Time,
    qpn: Qpn,
    next_psn: u32,
    error: bool,
) -> Result<Vec<Vec<u8>>, String> {
    let mut frames = Vec::new();
    loop {
        let view = shadow.qp_context(qpn).ok_or("a status of no QP")?;
        if view.state != QpState::Rts || view.sq_send_psn == next_psn {
            break;
        }
        match shadow.transmit_from(now, TxClass::Request, qpn) {
            Some(f) => frames.push(f),
            None => {
                return Err(format!(
                    "QP {qpn}: the shadow stops at PSN {} before the core's {next_psn}",
                    view.sq_send_psn
                ))
            }
        }
    }
    if error {
        if let Some(f) = shadow.transmit_from(now, TxClass::Request, qpn) {
            return Err(format!(
                "QP {qpn}: the core's grant failed a local check, the shadow sends {}",
                describe(&f)
            ));
        }
    }
    Ok(frames)
}

/// A receive CQE stream (`<prefix>_valid/ready/qpn/wr_id/status/opcode/
/// byte_len/imm_valid/imm`): `rcqe` on a NIC core, `cqe` on the
/// responder half.
pub struct ReceiveCqePorts<B: Block> {
    pub valid: Output<B>,
    pub ready: Input<B>,
    qpn: Output<B>,
    wr_id: Output<B>,
    status: Output<B>,
    opcode: Output<B>,
    byte_len: Output<B>,
    imm_valid: Output<B>,
    imm: Output<B>,
}

impl<B: Block> ReceiveCqePorts<B> {
    pub fn named(prefix: &str) -> Result<Self, SimError> {
        let o = |n: &str| B::output(&format!("{prefix}_{n}"));
        Ok(ReceiveCqePorts {
            valid: o("valid")?,
            ready: B::input(&format!("{prefix}_ready"))?,
            qpn: o("qpn")?,
            wr_id: o("wr_id")?,
            status: o("status")?,
            opcode: o("opcode")?,
            byte_len: o("byte_len")?,
            imm_valid: o("imm_valid")?,
            imm: o("imm")?,
        })
    }

    /// After `eval`, with `ready` high: the CQE taken this cycle.
    pub fn take(&self, sim: &Sim<B>) -> Result<Option<Cqe>, String> {
        if !sim.get_bit(self.valid) {
            return Ok(None);
        }
        let qpn = sim.get_u64(self.qpn) as Qpn;
        let (status, opcode) = codes(sim.get_u64(self.status), sim.get_u64(self.opcode))
            .ok_or_else(|| format!("receive CQE of QP {qpn} with an unknown code"))?;
        Ok(Some(Cqe {
            wr_id: sim.get_u64(self.wr_id),
            status,
            opcode,
            qpn,
            byte_len: sim.get_u64(self.byte_len) as u32,
            imm: sim
                .get_bit(self.imm_valid)
                .then(|| sim.get_u64(self.imm) as u32),
            invalidated_rkey: None,
        }))
    }
}

/// A send CQE stream (`<prefix>_valid/ready/qpn/slot/status/opcode/
/// byte_len`): `scqe` on a NIC core, `cqe` on the requester half.
pub struct SendCqePorts<B: Block> {
    pub valid: Output<B>,
    pub ready: Input<B>,
    qpn: Output<B>,
    slot: Output<B>,
    status: Output<B>,
    opcode: Output<B>,
    byte_len: Output<B>,
}

impl<B: Block> SendCqePorts<B> {
    pub fn named(prefix: &str) -> Result<Self, SimError> {
        let o = |n: &str| B::output(&format!("{prefix}_{n}"));
        Ok(SendCqePorts {
            valid: o("valid")?,
            ready: B::input(&format!("{prefix}_ready"))?,
            qpn: o("qpn")?,
            slot: o("slot")?,
            status: o("status")?,
            opcode: o("opcode")?,
            byte_len: o("byte_len")?,
        })
    }

    /// After `eval`, with `ready` high: the CQE taken this cycle.
    pub fn take(&self, sim: &Sim<B>) -> Result<Option<CoreSendCqe>, String> {
        if !sim.get_bit(self.valid) {
            return Ok(None);
        }
        let qpn = sim.get_u64(self.qpn) as Qpn;
        let (status, opcode) = codes(sim.get_u64(self.status), sim.get_u64(self.opcode))
            .ok_or_else(|| format!("send CQE of QP {qpn} with an unknown code"))?;
        Ok(Some(CoreSendCqe {
            cycle: sim.cycle(),
            qpn,
            slot: sim.get_u64(self.slot),
            status,
            opcode,
            byte_len: sim.get_u64(self.byte_len) as u32,
        }))
    }
}

fn codes(status: u64, opcode: u64) -> Option<(WcStatus, WcOpcode)> {
    WcStatus::from_repr(status as usize).zip(WcOpcode::from_repr(opcode as usize))
}
