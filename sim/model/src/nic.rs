//! One NIC port with its host memory: the verbs interface on the host side
//! and a [`rocenic_fabric::Endpoint`] on the wire side. Dispatches received
//! frames to the responder (requests) or completer (responses), schedules
//! transmission (CNPs, then responder output, then requester packets
//! round-robin over QPs, paced by DCQCN), and keeps the counters.

use crate::completer::{self, CompleterEvent, CompleterRecord, ResponseRecord};
use crate::cq::Cq;
use crate::dcqcn::DcqcnConfig;
use crate::link_pause::LinkPause;
use crate::memory::HostMemory;
use crate::mr::{MrKeys, MrTable, DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES};
use crate::qp::{Qp, SendWqe, WqeKind};
use crate::requester;
use crate::responder;
use crate::send_queue::{RingOp, RingRecord, SendCqe};
use crate::verbs::{
    Access, CqId, Cqe, ModifyQp, PdId, QpCaps, QpState, Qpn, RecvWr, SendWr, VerbsError, WcOpcode,
    WcStatus,
};
use crate::Time;
use rocenic_wire::pfc::{PfcFrame, PFC_DEST_MAC};
use rocenic_wire::{ecn, op, psn, Bth, DecodeOptions, ExtHeaders, RoceFrame, MASK24};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::IpAddr;

/// Static configuration of one NIC port.
#[derive(Clone, Debug)]
pub struct NicConfig {
    pub mac: [u8; 6],
    /// IPv4 or IPv6; frames to a QP use the IP version of its remote
    /// address (an IPv4 address is used in its IPv4-mapped IPv6 form).
    pub ip: IpAddr,
    pub line_rate_bps: f64,
    /// Send data frames (requests, READ responses) ECT(0) so switches can
    /// mark them.
    pub ecn: bool,
    pub dscp: u8,
    /// DSCP of the CNPs the NIC sends (NVIDIA's `cnp_dscp`). Their PFC
    /// priority is `cnp_dscp / 8` (48: priority 6, NVIDIA's
    /// `cnp_802p_prio`), so a pause of the data's priority does not hold
    /// the notifications that would relieve it.
    pub cnp_dscp: u8,
    /// AckReq on the last packet of a message and every Nth packet of long
    /// ones (0: only on the last).
    pub ack_req_interval: u32,
    /// Go-Back-N window of unacknowledged request PSNs.
    pub max_outstanding_psns: u32,
    pub dcqcn: DcqcnConfig,
    /// Device limits a QP's capabilities must stay within
    /// (`ibv_device_attr.max_qp_wr` and `max_sge`): a hardware core's
    /// per-QP ring depths and the SGEs its WQE format holds.
    pub max_qp_wr: u32,
    pub max_sge: u32,
    /// The most READ / atomic requests a QP's responder keeps
    /// outstanding (`ibv_device_attr.max_qp_rd_atom`): the bound on
    /// `max_dest_rd_atomic`.
    pub max_qp_rd_atom: u8,
    /// Priorities whose received PFC pauses the transmitter honours (bit
    /// `i`: priority `i`). The NIC's frames are all of priority
    /// `dscp / 8`, the switch's map.
    pub pfc_honoured: u8,
    /// A pause that lasts this long without a break trips the PFC
    /// watchdog and is no longer honoured until it ends (0: no watchdog).
    pub pfc_watchdog_ns: Time,
}

impl NicConfig {
    pub fn new(mac: [u8; 6], ip: IpAddr) -> NicConfig {
        NicConfig {
            mac,
            ip,
            line_rate_bps: 100e9,
            ecn: true,
            dscp: 26,
            cnp_dscp: 48,
            ack_req_interval: 64,
            max_outstanding_psns: 2048,
            dcqcn: DcqcnConfig::default(),
            max_qp_wr: 1 << 15,
            max_sge: 16,
            max_qp_rd_atom: 16,
            pfc_honoured: 0xFF,
            pfc_watchdog_ns: 100_000_000,
        }
    }
}

/// NAKs by kind (AETH NAK codes and RNR).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NakCounters {
    pub psn_sequence: u64,
    pub rnr: u64,
    pub invalid_request: u64,
    pub remote_access: u64,
    pub remote_operational: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct NicCounters {
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
    /// Request packets sent again by Go-Back-N (timeout, NAK or gap).
    pub retransmitted_frames: u64,
    /// Local ACK timeouts that fired with requests outstanding.
    pub timeouts: u64,
    /// Received frames not acted upon, by reason: the codec's
    /// `DecodeError::reason()`, or the transport's ("unknown_qp",
    /// "qp_state", "out_of_sequence", "duplicate_response", ...).
    pub rx_dropped: BTreeMap<String, u64>,
    /// Frames the NIC failed to build (a model bug if ever non-zero).
    pub tx_errors: BTreeMap<String, u64>,
    pub naks_sent: NakCounters,
    pub naks_received: NakCounters,
    pub acks_sent: u64,
    pub acks_received: u64,
    pub read_responses_sent: u64,
    /// RNR NAKs that paused a requester.
    pub rnr_waits: u64,
    pub cnps_sent: u64,
    pub cnps_received: u64,
    pub ecn_ce_received: u64,
    /// Requests behind the expected PSN (answered without re-execution).
    pub duplicate_requests: u64,
    /// CQEs written to a CQ that was already full.
    pub cq_overflows: u64,
    /// PFC frames received (they are not counted in `rx_frames`).
    pub rx_pause_frames: u64,
    /// Pauses that lasted past the watchdog time and stopped being honoured.
    pub pause_watchdog_trips: u64,
}

/// The kinds of frame a NIC transmits, in the order its transmitter
/// serves them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TxClass {
    /// Congestion notification to a flow's sender (DCQCN).
    Cnp,
    /// The responder's ACK, NAK, READ response or atomic ACK.
    Response,
    /// The requester's request packet (first send or Go-Back-N resend).
    Request,
}

impl TxClass {
    /// Which of the NIC's IPv4 identification counters numbers this
    /// class's frames. Every RoCEv2 frame has DF set, so its
    /// identification only has to be unique per source for a while (RFC
    /// 6864: any value for atomic datagrams); one counter per class lets
    /// each of the RTL's frame builders keep its own, in its own order,
    /// and still produce exactly the model's frames.
    pub fn ip_id_counter(self) -> usize {
        match self {
            TxClass::Cnp => 0,
            TxClass::Response => 1,
            TxClass::Request => 2,
        }
    }
}

/// The pieces of the NIC the transport blocks share while one QP is
/// borrowed mutably.
pub(crate) struct Env<'a> {
    pub config: &'a NicConfig,
    pub memory: &'a mut HostMemory,
    pub mrs: &'a mut MrTable,
    pub counters: &'a mut NicCounters,
    pub cqs: &'a mut BTreeMap<CqId, Cq>,
    /// The IPv4 identification counters, one per [`TxClass`].
    pub ip_id: &'a mut [u16; 3],
    /// Where the completer records response packets, when asked to.
    pub response_log: &'a mut Option<Vec<ResponseRecord>>,
    /// Where the send-queue operations are recorded, when asked to.
    pub ring_log: &'a mut Option<Vec<RingRecord>>,
    /// Where the completer's events are recorded, when asked to.
    pub completer_log: &'a mut Option<Vec<CompleterRecord>>,
}

impl Env<'_> {
    pub fn drop_frame(&mut self, reason: &str) {
        *self
            .counters
            .rx_dropped
            .entry(reason.to_string())
            .or_default() += 1;
    }

    pub fn count_tx_error(&mut self, reason: &str) {
        *self
            .counters
            .tx_errors
            .entry(reason.to_string())
            .or_default() += 1;
    }

    /// Starts recording a completer event of `qp` (when asked to): its
    /// state now, and every send CQE until [`Env::end_completer_event`].
    /// Inside another event (a move to ERR within a response) nothing
    /// starts: false.
    pub(crate) fn begin_completer_event(
        &mut self,
        qp: &Qp,
        event: impl FnOnce() -> CompleterEvent,
    ) -> bool {
        let Some(log) = self.completer_log.as_mut() else {
            return false;
        };
        if log.last().is_some_and(|r| r.after.is_none()) {
            return false;
        }
        log.push(CompleterRecord {
            qpn: qp.qpn,
            event: event(),
            before: completer::SqSnapshot::of(qp),
            after: None,
            cqes: Vec::new(),
        });
        true
    }

    /// The state of `qp` after the event `begin_completer_event` opened
    /// (`opened`: what it returned).
    pub(crate) fn end_completer_event(&mut self, qp: &Qp, opened: bool) {
        if !opened {
            return;
        }
        if let Some(open) = self
            .completer_log
            .as_mut()
            .and_then(|log| log.last_mut())
            .filter(|r| r.after.is_none())
        {
            open.after = Some(completer::SqSnapshot::of(qp));
        }
    }

    /// Records a transmit grant of `qp` (see [`CompleterEvent::Grant`]):
    /// `before` is the QP as `next_request` found it, the QP now is after
    /// its grant decision (cursor skipped past acknowledged WQEs). A
    /// grant of the WQE whose run of packets the QP's last record is (and
    /// nothing changed since) is not a new grant.
    pub(crate) fn record_grant(
        &mut self,
        qp: &Qp,
        before: completer::SqSnapshot,
        wqe: Result<u32, crate::requester::GrantRefusal>,
        skipped: u32,
    ) {
        let Some(log) = self.completer_log.as_mut() else {
            return;
        };
        let after = completer::SqSnapshot::of(qp);
        let event = CompleterEvent::Grant { wqe, skipped };
        if after == before {
            let last = log
                .iter()
                .rev()
                .find(|r| r.qpn == qp.qpn)
                .filter(|r| r.after == Some(before));
            let repeat = last.is_some_and(|r| match (wqe, r.event) {
                (Err(_), e) => e == event,
                (
                    Ok(first),
                    CompleterEvent::Sent {
                        first_psn,
                        next_psn,
                        error: None,
                        ..
                    },
                ) => first_psn == first && next_psn == before.send_psn,
                _ => false,
            });
            if repeat {
                return;
            }
        }
        log.push(CompleterRecord {
            qpn: qp.qpn,
            event,
            before,
            after: Some(after),
            cqes: Vec::new(),
        });
    }

    /// What `next_request` did with the granted WQE `first_psn` of `qp`:
    /// opens the grant's `Sent` after its `Grant`, or extends the run the
    /// QP's last record is. An error leaves the record open (the drain
    /// after it belongs to it) and last in the log, for
    /// [`Env::end_completer_event`].
    pub(crate) fn record_sent(
        &mut self,
        qp: &Qp,
        first_psn: u32,
        packet: crate::requester::SentPacket,
    ) {
        use crate::requester::SentPacket;
        let Some(log) = self.completer_log.as_mut() else {
            return;
        };
        let Some(at) = log.iter().rposition(|r| r.qpn == qp.qpn) else {
            return;
        };
        if let CompleterEvent::Grant { wqe: Ok(first), .. } = log[at].event {
            debug_assert_eq!(first, first_psn);
            let granted = log[at].after.expect("a grant is closed");
            log.push(CompleterRecord {
                qpn: qp.qpn,
                event: CompleterEvent::Sent {
                    first_psn,
                    next_psn: granted.send_psn,
                    ackreq_end: None,
                    error: None,
                },
                before: granted,
                after: Some(granted),
                cqes: Vec::new(),
            });
        }
        let at = log.iter().rposition(|r| r.qpn == qp.qpn).expect("the sent");
        let rec = &mut log[at];
        let CompleterEvent::Sent {
            next_psn,
            ackreq_end,
            error,
            ..
        } = &mut rec.event
        else {
            unreachable!("a run of packets is a Sent record");
        };
        match packet {
            SentPacket::None => {}
            SentPacket::Sent { end, ack_req } => {
                *next_psn = end;
                if ack_req {
                    *ackreq_end = Some(end);
                }
                rec.after = Some(completer::SqSnapshot::of(qp));
            }
            SentPacket::Error(status) => {
                *error = Some(status);
                rec.after = None;
                let open = log.remove(at);
                log.push(open);
            }
        }
    }

    /// Records a send-queue operation of `qpn` when asked to.
    pub fn log_ring(&mut self, qpn: Qpn, op: impl FnOnce() -> RingOp) {
        if let Some(log) = self.ring_log.as_mut() {
            log.push(RingRecord { qpn, op: op() });
        }
    }

    pub fn complete(&mut self, cq: CqId, cqe: Cqe) {
        self.complete_solicited(cq, cqe, false);
    }

    /// [`Env::complete`] of a receive completion whose message's last
    /// packet carried the Solicited Event bit when `solicited`.
    pub fn complete_solicited(&mut self, cq: CqId, cqe: Cqe, solicited: bool) {
        if let Some(open) = self
            .completer_log
            .as_mut()
            .and_then(|log| log.last_mut())
            .filter(|r| r.after.is_none() && r.qpn == cqe.qpn)
        {
            if !matches!(cqe.opcode, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm) {
                open.cqes.push(SendCqe::of(&cqe));
            }
        }
        if let Some(cq) = self.cqs.get_mut(&cq) {
            if !cq.push(cqe, solicited) {
                self.counters.cq_overflows += 1;
            }
        }
    }
}

/// First QPN handed out; 0 and 1 are the special QPs of IBA.
const FIRST_QPN: Qpn = 0x11;

/// The lowest number from `first` up that `used` (ascending) lacks.
fn lowest_free(used: impl Iterator<Item = u32>, first: u32) -> u32 {
    let mut next = first;
    for n in used.skip_while(|&n| n < first) {
        if n != next {
            break;
        }
        next += 1;
    }
    next
}

/// A connected QP's addressing and attributes, as its frames use them
/// ([`Nic::qp_tx_attrs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpTxAttrs {
    pub pd: PdId,
    pub pkey: u16,
    pub dest_qpn: Qpn,
    pub remote_mac: [u8; 6],
    pub local_ip: IpAddr,
    pub remote_ip: IpAddr,
    pub mtu: u32,
}

/// The per-QP transport state an RTL core keeps in its QP context
/// ([`Nic::qp_context`]): what the driver's `modify_qp` sets and the
/// packet pipelines then change, read from this NIC so an RTL NIC can be
/// programmed exactly as this model stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpContextView {
    pub state: QpState,
    /// Remote access flags (`Access` bits).
    pub access: u8,
    pub pd: PdId,
    pub pkey: u16,
    /// Path MTU in bytes (0 before RTR).
    pub mtu: u32,
    pub dest_qpn: Qpn,
    pub max_dest_rd_atomic: u8,
    pub min_rnr_timer: u8,
    /// Responder: expected PSN and MSN.
    pub rq_epsn: u32,
    pub rq_msn: u32,
    /// Requester (RTS only, else 0): next PSN to assign, send cursor,
    /// oldest unacknowledged PSN.
    pub sq_next_psn: u32,
    pub sq_send_psn: u32,
    pub sq_una_psn: u32,
    pub timeout: u8,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub max_rd_atomic: u8,
}

pub struct Nic {
    config: NicConfig,
    memory: HostMemory,
    mrs: MrTable,
    pds: BTreeSet<u32>,
    next_pd: u32,
    cqs: BTreeMap<CqId, Cq>,
    qps: BTreeMap<Qpn, Qp>,
    counters: NicCounters,
    /// IPv4 identification counters, one per [`TxClass`] (see
    /// [`TxClass::ip_id_counter`]).
    ip_id: [u16; 3],
    /// CNPs to send, with the local QP whose flow they answer.
    cnps: VecDeque<(Qpn, Vec<u8>)>,
    /// Round-robin positions: the QP served last.
    rr_resp: Qpn,
    rr_req: Qpn,
    /// Received PFC pauses.
    pause: LinkPause,
    /// Latest time the fabric told us about.
    now: Time,
    response_log: Option<Vec<ResponseRecord>>,
    ring_log: Option<Vec<RingRecord>>,
    completer_log: Option<Vec<CompleterRecord>>,
}

/// What a log a `record_*` call opened holds, leaving it open and empty
/// (nothing when none was opened).
fn take_log<T>(log: &mut Option<Vec<T>>) -> Vec<T> {
    log.as_mut().map(std::mem::take).unwrap_or_default()
}

/// Splits the NIC into one QP and the shared environment.
macro_rules! with_qp {
    ($self:ident, $qpn:expr, |$qp:ident, $env:ident| $body:expr) => {{
        let (mut $env, qps) = $self.env_and_qps();
        match qps.get_mut(&$qpn) {
            Some($qp) => Some($body),
            None => None,
        }
    }};
}

impl Nic {
    pub fn new(config: NicConfig) -> Nic {
        let seed = config.mac.iter().fold(0x0072_6f63_656e_6963_u64, |a, &b| {
            a.rotate_left(8) ^ u64::from(b)
        });
        Nic {
            memory: HostMemory::new(seed),
            mrs: MrTable::new(DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES),
            config,
            pds: BTreeSet::new(),
            next_pd: 1,
            cqs: BTreeMap::new(),
            qps: BTreeMap::new(),
            counters: NicCounters::default(),
            ip_id: [0; 3],
            cnps: VecDeque::new(),
            rr_resp: 0,
            rr_req: 0,
            pause: LinkPause::default(),
            now: 0,
            response_log: None,
            ring_log: None,
            completer_log: None,
        }
    }

    /// From now on, records every response packet the completer handles
    /// (its inputs and the decision; see [`ResponseRecord`]).
    pub fn record_responses(&mut self) {
        self.response_log.get_or_insert_with(Vec::new);
    }

    /// From now on, records every event the completer handles (send WQE
    /// posted, response, timer fired) with the QP's send-side state
    /// before and after it and the send CQEs it wrote (see
    /// [`CompleterRecord`]), for the completer datapath's RTL checks.
    pub fn record_completer(&mut self) {
        self.completer_log.get_or_insert_with(Vec::new);
    }

    /// The completer events recorded so far (emptying the log).
    pub fn take_completer_log(&mut self) -> Vec<CompleterRecord> {
        take_log(&mut self.completer_log)
    }

    /// From now on, records every operation on the send queues and what
    /// it found (see [`RingRecord`]), for the send-queue tracker's RTL
    /// checks.
    pub fn record_ring_ops(&mut self) {
        self.ring_log.get_or_insert_with(Vec::new);
    }

    /// The send-queue operations recorded since the last call, in order.
    pub fn take_ring_log(&mut self) -> Vec<RingRecord> {
        take_log(&mut self.ring_log)
    }

    /// The responses recorded since the last call, in arrival order.
    pub fn take_response_log(&mut self) -> Vec<ResponseRecord> {
        take_log(&mut self.response_log)
    }

    pub fn config(&self) -> &NicConfig {
        &self.config
    }

    /// The configuration, to change: before traffic starts (a test that
    /// wants a small send window), or at any time for the congestion
    /// parameters, which every use reads afresh (BAR0's congestion block).
    pub fn config_mut(&mut self) -> &mut NicConfig {
        &mut self.config
    }

    pub fn memory(&self) -> &HostMemory {
        &self.memory
    }

    pub fn memory_mut(&mut self) -> &mut HostMemory {
        &mut self.memory
    }

    /// The MR table (MRs and MTT), e.g. to load the same table into RTL.
    pub fn mr_table(&self) -> &MrTable {
        &self.mrs
    }

    pub fn counters(&self) -> &NicCounters {
        &self.counters
    }

    pub fn alloc_pd(&mut self) -> PdId {
        let pd = self.next_pd;
        self.next_pd += 1;
        self.pds.insert(pd);
        PdId(pd)
    }

    /// `NoSuchPd` unless `pd` is allocated.
    fn check_pd(&self, pd: PdId) -> Result<(), VerbsError> {
        if self.pds.contains(&pd.0) {
            Ok(())
        } else {
            Err(VerbsError::NoSuchPd(pd))
        }
    }

    /// Fails with `Busy` while a QP or an MR still uses the PD.
    pub fn dealloc_pd(&mut self, pd: PdId) -> Result<(), VerbsError> {
        self.check_pd(pd)?;
        if self.qps.values().any(|q| q.pd == pd) || self.mrs.uses_pd(pd) {
            return Err(VerbsError::Busy);
        }
        self.pds.remove(&pd.0);
        Ok(())
    }

    pub fn reg_mr(
        &mut self,
        pd: PdId,
        va: u64,
        len: u64,
        access: Access,
    ) -> Result<MrKeys, VerbsError> {
        self.check_pd(pd)?;
        self.mrs.register(pd, va, len, access, &self.memory)
    }

    /// Registers [va, va+len) backed by the bus pages a driver's REG_MR
    /// lists (pages of `page_size`, the first holding `va`).
    pub fn reg_mr_pages(
        &mut self,
        pd: PdId,
        va: u64,
        len: u64,
        access: Access,
        page_size: u64,
        pages: &[u64],
    ) -> Result<MrKeys, VerbsError> {
        self.check_pd(pd)?;
        self.mrs
            .register_pages(pd, va, len, access, page_size, pages)
    }

    /// New key variant for the same registration; the old keys go stale.
    pub fn rereg_mr(&mut self, lkey: u32) -> Result<MrKeys, VerbsError> {
        self.mrs.reregister(lkey)
    }

    /// Local invalidation (what a Local Invalidate work request does, IBA
    /// 10.6.5): the MR's keys fail as [`crate::mr::MrError::Invalidated`]
    /// until it is re-registered, as after a remote SEND with Invalidate.
    pub fn invalidate_mr(&mut self, key: u32) -> Result<(), VerbsError> {
        let pd = self
            .mrs
            .entry(key)
            .map(|e| e.pd)
            .ok_or(VerbsError::NoSuchMr(key))?;
        self.mrs
            .invalidate(key, pd)
            .map_err(|_| VerbsError::NoSuchMr(key))
    }

    pub fn dereg_mr(&mut self, lkey: u32) -> Result<(), VerbsError> {
        self.mrs.deregister(lkey)
    }

    pub fn create_cq(&mut self, depth: u32) -> CqId {
        let id = CqId(lowest_free(self.cqs.keys().map(|c| c.0), 1));
        self.cqs.insert(id, Cq::new(depth.max(1)));
        id
    }

    pub fn create_qp(
        &mut self,
        pd: PdId,
        send_cq: CqId,
        recv_cq: CqId,
        caps: QpCaps,
    ) -> Result<Qpn, VerbsError> {
        self.check_pd(pd)?;
        for cq in [send_cq, recv_cq] {
            if !self.cqs.contains_key(&cq) {
                return Err(VerbsError::NoSuchCq(cq));
            }
        }
        if caps.max_send_wr == 0 || caps.max_recv_wr == 0 || caps.max_sge == 0 {
            return Err(VerbsError::InvalidAttribute("caps"));
        }
        let limits = &self.config;
        if caps.max_send_wr.max(caps.max_recv_wr) > limits.max_qp_wr {
            return Err(VerbsError::InvalidAttribute(
                "caps: more work requests than the device's max_qp_wr",
            ));
        }
        if caps.max_sge > limits.max_sge {
            return Err(VerbsError::InvalidAttribute(
                "caps: more SGEs than the device's max_sge",
            ));
        }
        // The lowest free number, as a hardware QP table hands them out: a
        // QP destroyed and created again gets its old number.
        let qpn = lowest_free(self.qps.keys().copied(), FIRST_QPN);
        if qpn > MASK24 {
            return Err(VerbsError::NoResources);
        }
        let qp = Qp::new(
            qpn,
            pd,
            send_cq,
            recv_cq,
            caps,
            &self.config.dcqcn,
            self.config.line_rate_bps,
        );
        self.qps.insert(qpn, qp);
        Ok(qpn)
    }

    /// Fails with `Busy` while a QP completes into the CQ.
    pub fn destroy_cq(&mut self, cq: CqId) -> Result<(), VerbsError> {
        if !self.cqs.contains_key(&cq) {
            return Err(VerbsError::NoSuchCq(cq));
        }
        if self
            .qps
            .values()
            .any(|q| q.send_cq == cq || q.recv_cq == cq)
        {
            return Err(VerbsError::Busy);
        }
        self.cqs.remove(&cq);
        Ok(())
    }

    /// The QP and all its state are gone; outstanding work is dropped
    /// without completions, as in RESET. Frames still arriving for it are
    /// dropped as `unknown_qp`.
    pub fn destroy_qp(&mut self, qpn: Qpn) -> Result<(), VerbsError> {
        self.modify_qp(qpn, ModifyQp::ToReset)?;
        self.qps.remove(&qpn);
        Ok(())
    }

    /// Legal transitions: RESET->INIT->RTR->RTS, any->ERR, any->RESET.
    pub fn modify_qp(&mut self, qpn: Qpn, change: ModifyQp) -> Result<(), VerbsError> {
        if let ModifyQp::ToRtr {
            max_dest_rd_atomic, ..
        } = change
        {
            if max_dest_rd_atomic > self.config.max_qp_rd_atom {
                return Err(VerbsError::InvalidAttribute(
                    "max_dest_rd_atomic above the device's max_qp_rd_atom",
                ));
            }
        }
        let local_ip = self.config.ip;
        let dcqcn = self.config.dcqcn.clone();
        let rate = self.config.line_rate_bps;
        with_qp!(self, qpn, |qp, env| match change {
            ModifyQp::ToErr => {
                completer::move_to_error(qp, &mut env);
                Ok(())
            }
            ModifyQp::ToReset => {
                if !qp.sq.wqes.is_empty() {
                    env.log_ring(qpn, || RingOp::Clear);
                }
                let opened = env.begin_completer_event(qp, || CompleterEvent::Clear);
                qp.reset(&dcqcn, rate);
                env.end_completer_event(qp, opened);
                Ok(())
            }
            _ => qp.apply(&change, local_ip),
        })
        .unwrap_or(Err(VerbsError::NoSuchQp(qpn)))
    }

    /// DCQCN rate cuts of the QPs that exist now.
    pub fn rate_cuts(&self) -> u64 {
        self.qps.values().map(|q| q.rp.cuts()).sum()
    }

    /// The DCQCN sending rate Rc of a QP's requester.
    pub fn qp_rate_bps(&self, qpn: Qpn) -> Result<f64, VerbsError> {
        self.qps
            .get(&qpn)
            .map(|q| q.rp.rate_bps())
            .ok_or(VerbsError::NoSuchQp(qpn))
    }

    /// Every QP this NIC has, in QPN order.
    pub fn qpns(&self) -> Vec<Qpn> {
        self.qps.keys().copied().collect()
    }

    /// What the transmit side of a connected QP needs to frame its
    /// packets (the per-QP table an RTL core keeps beside the context).
    pub fn qp_tx_attrs(&self, qpn: Qpn) -> Option<QpTxAttrs> {
        let qp = self.qps.get(&qpn)?;
        let path = qp.path?;
        Some(QpTxAttrs {
            pd: qp.pd,
            pkey: qp.pkey,
            dest_qpn: path.dest_qpn,
            remote_mac: path.remote.mac,
            local_ip: path.local_ip,
            remote_ip: path.remote.ip,
            mtu: path.mtu,
        })
    }

    /// The receive WQEs waiting on `qpn`, oldest first.
    pub fn recv_queue(&self, qpn: Qpn) -> Option<Vec<RecvWr>> {
        Some(self.qps.get(&qpn)?.rq.iter().cloned().collect())
    }

    /// The send WQEs of `qpn` not yet completed, oldest first (what an RTL
    /// core programmed from this NIC must be posted).
    pub fn send_queue(&self, qpn: Qpn) -> Option<Vec<SendWr>> {
        Some(
            self.qps
                .get(&qpn)?
                .sq
                .wqes
                .iter()
                .map(|w| w.wr.clone())
                .collect(),
        )
    }

    /// The send and receive CQ of `qpn`.
    pub fn qp_cqs(&self, qpn: Qpn) -> Option<(CqId, CqId)> {
        let qp = self.qps.get(&qpn)?;
        Some((qp.send_cq, qp.recv_cq))
    }

    /// Every CQ this NIC has, in id order.
    pub fn cq_ids(&self) -> Vec<CqId> {
        self.cqs.keys().copied().collect()
    }

    /// The transport state of `qpn` as an RTL QP context holds it.
    pub fn qp_context(&self, qpn: Qpn) -> Option<QpContextView> {
        let qp = self.qps.get(&qpn)?;
        let path = qp.path;
        let send = qp.send;
        Some(QpContextView {
            state: qp.state,
            access: qp.access.0,
            pd: qp.pd,
            pkey: qp.pkey,
            mtu: path.map_or(0, |p| p.mtu),
            dest_qpn: path.map_or(0, |p| p.dest_qpn),
            max_dest_rd_atomic: path.map_or(0, |p| p.max_dest_rd_atomic),
            min_rnr_timer: path.map_or(0, |p| p.min_rnr_timer),
            rq_epsn: qp.resp.epsn,
            rq_msn: qp.resp.msn,
            sq_next_psn: qp.sq.next_psn,
            sq_send_psn: qp.sq.send_psn,
            sq_una_psn: qp.sq.una(),
            timeout: send.map_or(0, |s| s.timeout),
            retry_cnt: send.map_or(0, |s| s.retry_cnt),
            rnr_retry: send.map_or(0, |s| s.rnr_retry),
            max_rd_atomic: send.map_or(0, |s| s.max_rd_atomic),
        })
    }

    pub fn qp_state(&self, qpn: Qpn) -> Result<QpState, VerbsError> {
        self.qps
            .get(&qpn)
            .map(|q| q.state)
            .ok_or(VerbsError::NoSuchQp(qpn))
    }

    /// Accepted in RTS; in ERR accepted and completed at once with
    /// WR_FLUSH_ERR; refused in RESET, INIT and RTR.
    pub fn post_send(&mut self, qpn: Qpn, wr: SendWr) -> Result<(), VerbsError> {
        let max_window = self.config.max_outstanding_psns;
        with_qp!(self, qpn, |qp, env| {
            match qp.state {
                QpState::Rts => {}
                QpState::Err => {
                    let len = wr.message_len();
                    let first_psn = qp.sq.next_psn;
                    let record = crate::send_queue::WqeRecord {
                        kind: WqeKind::of(&wr.op),
                        opcode: completer::wc_opcode(&wr.op),
                        first_psn,
                        npsn: requester::message_psns(&wr.op, len, qp.mtu()),
                        done_psn: first_psn,
                        len: len as u32,
                        signaled: wr.signaled,
                        complete: false,
                        error: None,
                    };
                    let (wr_id, sge) = (wr.wr_id, wr.sgl.first().copied());
                    let opened = env.begin_completer_event(qp, || CompleterEvent::Post {
                        record,
                        wr_id,
                        sge,
                    });
                    env.complete(qp.send_cq, completer::flush_send(qp.qpn, wr.wr_id, &wr.op));
                    env.end_completer_event(qp, opened);
                    return Ok(());
                }
                state => return Err(VerbsError::WrongQpState { qpn, state }),
            }
            if wr.sgl.len() > qp.caps.max_sge as usize {
                return Err(VerbsError::TooManySges);
            }
            if qp.sq.wqes.len() >= qp.caps.max_send_wr as usize {
                return Err(VerbsError::QueueFull);
            }
            let kind = WqeKind::of(&wr.op);
            let len = wr.message_len();
            let attrs = qp.send.ok_or(VerbsError::WrongQpState {
                qpn,
                state: qp.state,
            })?;
            if wr.inline_data.is_some() && (kind.needs_response() || !wr.sgl.is_empty()) {
                return Err(VerbsError::InvalidAttribute(
                    "inline data: SEND and WRITE only, without an SGL",
                ));
            }
            if kind == WqeKind::Atomic && len != 8 {
                return Err(VerbsError::InvalidAttribute(
                    "atomic needs 8 bytes of local buffer",
                ));
            }
            if kind.needs_response() && attrs.max_rd_atomic == 0 {
                return Err(VerbsError::InvalidAttribute("max_rd_atomic is 0"));
            }
            // IBA caps a message at 2^31 bytes: longer ones fail with a
            // local length error, in order, without sending anything.
            let too_long = len > 1 << 31;
            let npsn = requester::message_psns(&wr.op, len, qp.mtu());
            // Keep every live PSN within half the 24-bit space so PSN
            // comparisons stay unambiguous.
            let span = psn::diff(psn::add(qp.sq.next_psn, npsn), qp.sq.una());
            if span < 0 || span as u32 > (1 << 22).max(max_window) {
                return Err(VerbsError::QueueFull);
            }
            let first = qp.sq.next_psn;
            let wqe = SendWqe {
                wr,
                kind,
                len,
                first_psn: first,
                npsn,
                done_psn: first,
                complete: false,
                error: too_long.then_some(WcStatus::LocLenErr),
            };
            env.log_ring(qpn, || RingOp::Post {
                record: wqe.record(),
                wr_id: wqe.wr.wr_id,
            });
            let (record, wr_id, sge) = (wqe.record(), wqe.wr.wr_id, wqe.wr.sgl.first().copied());
            let opened =
                env.begin_completer_event(qp, || CompleterEvent::Post { record, wr_id, sge });
            qp.sq.next_psn = psn::add(first, npsn);
            qp.sq.wqes.push_back(wqe);
            completer::drain(qp, &mut env);
            env.end_completer_event(qp, opened);
            Ok(())
        })
        .unwrap_or(Err(VerbsError::NoSuchQp(qpn)))
    }

    /// Refused in RESET; in ERR completed at once with WR_FLUSH_ERR.
    pub fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> Result<(), VerbsError> {
        if self.qp_state(qpn)? == QpState::Err {
            with_qp!(self, qpn, |qp, env| {
                env.complete(qp.recv_cq, completer::flush_recv(qp.qpn, wr.wr_id))
            });
            return Ok(());
        }
        self.check_post_recv(qpn, &wr, 0)?;
        self.qps
            .get_mut(&qpn)
            .ok_or(VerbsError::NoSuchQp(qpn))?
            .rq
            .push_back(wr);
        Ok(())
    }

    /// Whether [`Nic::post_recv`] would take `wr` into the receive queue
    /// of `qpn` with `queued` more WQEs already on their way to it (a
    /// hardware NIC's posts not yet in its ring): the verb's errors, for a
    /// QP not in ERR (there a post completes at once, flushed).
    pub fn check_post_recv(&self, qpn: Qpn, wr: &RecvWr, queued: usize) -> Result<(), VerbsError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        if qp.state == QpState::Reset {
            return Err(VerbsError::WrongQpState {
                qpn,
                state: QpState::Reset,
            });
        }
        if wr.sgl.len() > qp.caps.max_sge as usize {
            return Err(VerbsError::TooManySges);
        }
        if qp.rq.len() + queued >= qp.caps.max_recv_wr as usize {
            return Err(VerbsError::QueueFull);
        }
        Ok(())
    }

    pub fn poll_cq(&mut self, cq: CqId, max: usize) -> Vec<Cqe> {
        let polled = self.poll_cq_solicited(cq, max);
        polled.into_iter().map(|(cqe, _)| cqe).collect()
    }

    /// [`Nic::poll_cq`], each CQE with whether it is solicited: a receive
    /// completion of a message whose last packet carried the Solicited
    /// Event bit (what a CQ armed for solicited events waits for, with
    /// the error completions).
    pub fn poll_cq_solicited(&mut self, cq: CqId, max: usize) -> Vec<(Cqe, bool)> {
        self.cqs.get_mut(&cq).map_or_else(Vec::new, |c| c.poll(max))
    }

    /// CQEs waiting in `cq` (0 for an unknown CQ), without taking them.
    pub fn cq_len(&self, cq: CqId) -> usize {
        self.cqs.get(&cq).map_or(0, |c| c.entries.len())
    }

    /// QPNs in round-robin order, starting after `last`.
    /// The next frame `qpn` has of `class`, as [`Endpoint::transmit`]
    /// would send it when its round robin reaches that QP and class. A
    /// scoreboard that runs this NIC as the shadow of an RTL NIC asks it
    /// for the frame of the QP and class the RTL just sent, so the RTL may
    /// arbitrate between QPs and classes differently while each QP's
    /// streams must match.
    ///
    /// [`Endpoint::transmit`]: rocenic_fabric::Endpoint::transmit
    pub fn transmit_from(&mut self, now: Time, class: TxClass, qpn: Qpn) -> Option<Vec<u8>> {
        self.now = self.now.max(now);
        let frame = match class {
            TxClass::Cnp => {
                let at = self.cnps.iter().position(|(q, _)| *q == qpn)?;
                self.counters.cnps_sent += 1;
                self.cnps.remove(at).map(|(_, f)| f)
            }
            TxClass::Response => {
                with_qp!(self, qpn, |qp, env| responder::next_output(qp, &mut env)).flatten()
            }
            TxClass::Request => with_qp!(self, qpn, |qp, env| {
                let frame = requester::next_request(qp, &mut env, now);
                // A WQE that failed its local checks completes now if it
                // is the oldest.
                completer::drain(qp, &mut env);
                // Its `Sent` record, left open for the drain, closes.
                env.end_completer_event(qp, true);
                frame
            })
            .flatten(),
        }?;
        self.count_tx(&frame);
        Some(frame)
    }

    /// Which of this NIC's QPs sent `frame`, and as what: the local QP
    /// whose peer (destination QPN and IP address) the frame is addressed
    /// to. `None` for a frame no QP of this NIC would send.
    pub fn tx_class_of(&self, frame: &[u8]) -> Option<(TxClass, Qpn)> {
        let f = RoceFrame::decode_with(frame, DecodeOptions::NIC).ok()?;
        let dst = match f.ip {
            rocenic_wire::IpHeader::V4(h) => IpAddr::V4(h.dst),
            rocenic_wire::IpHeader::V6(h) => IpAddr::V6(h.dst),
        };
        let class = match f.bth.opcode {
            op::CNP => TxClass::Cnp,
            o if (op::READ_RESPONSE_FIRST..=op::ATOMIC_ACKNOWLEDGE).contains(&o) => {
                TxClass::Response
            }
            _ => TxClass::Request,
        };
        let qpn = self.qps.iter().find_map(|(&qpn, qp)| {
            let path = qp.path?;
            (path.dest_qpn == f.bth.dest_qp && path.remote.ip.to_canonical() == dst.to_canonical())
                .then_some(qpn)
        })?;
        Some((class, qpn))
    }

    /// Fires `qpn`'s timers that are due at `now` (local ACK timeout, end
    /// of an RNR wait, the DCQCN reaction point's), as [`Endpoint::advance`]
    /// does for every QP: a shadow NIC fires a QP's timers when the RTL's
    /// fired, never on its own schedule.
    ///
    /// [`Endpoint::advance`]: rocenic_fabric::Endpoint::advance
    pub fn fire_timers(&mut self, now: Time, qpn: Qpn) {
        self.now = self.now.max(now);
        with_qp!(self, qpn, |qp, env| {
            completer::on_timer(qp, &mut env, now);
            if env.config.dcqcn.reacts() {
                qp.rp.advance(&env.config.dcqcn, now);
            }
        });
    }

    /// The shared environment every QP's blocks work in, and the QPs
    /// beside it (borrowed apart, so that one QP can be worked on in it).
    fn env_and_qps(&mut self) -> (Env<'_>, &mut BTreeMap<Qpn, Qp>) {
        // Each field of `Env` borrows the `Nic` field of its name.
        macro_rules! split {
            ($($field:ident),*) => {{
                let Nic { qps, $($field,)* .. } = self;
                (Env { $($field),* }, qps)
            }};
        }
        split!(
            config,
            memory,
            mrs,
            counters,
            cqs,
            ip_id,
            response_log,
            ring_log,
            completer_log
        )
    }

    fn rr_order(&self, last: Qpn) -> Vec<Qpn> {
        self.qps
            .range(last.saturating_add(1)..)
            .chain(self.qps.range(..=last))
            .map(|(&q, _)| q)
            .collect()
    }

    fn count_tx(&mut self, frame: &[u8]) {
        self.counters.tx_frames += 1;
        self.counters.tx_bytes += frame.len() as u64;
    }

    fn queue_cnp(&mut self, qpn: Qpn) {
        let Some(qp) = self.qps.get(&qpn) else { return };
        let Some(path) = qp.path else { return };
        let mut bth = Bth::new(op::CNP, path.dest_qpn, 0);
        bth.becn = true;
        let (mut env, qps) = self.env_and_qps();
        if let Some(frame) = crate::tx::frame(
            &mut env,
            &qps[&qpn],
            TxClass::Cnp,
            bth,
            ExtHeaders::default(),
            Vec::new(),
            false,
        ) {
            self.cnps.push_back((qpn, frame));
        }
    }

    fn handle(&mut self, now: Time, frame: &[u8]) {
        let f = match RoceFrame::decode_with(frame, DecodeOptions::NIC) {
            Ok(f) => f,
            Err(e) => return self.drop_frame(e.reason()),
        };
        if f.eth.dst != self.config.mac {
            return self.drop_frame("wrong_mac");
        }
        let (src, dst) = match f.ip {
            rocenic_wire::IpHeader::V4(h) => (IpAddr::V4(h.src), IpAddr::V4(h.dst)),
            rocenic_wire::IpHeader::V6(h) => (IpAddr::V6(h.src), IpAddr::V6(h.dst)),
        };
        if dst.to_canonical() != self.config.ip.to_canonical() {
            return self.drop_frame("wrong_ip");
        }
        let ce = f.ip.ecn() == ecn::CE;
        if ce {
            self.counters.ecn_ce_received += 1;
        }
        let qpn = f.bth.dest_qp;
        let Some(qp) = self.qps.get_mut(&qpn) else {
            return self.drop_frame("unknown_qp");
        };
        if frame_kind(f.bth.opcode) == FrameKind::Cnp {
            self.counters.cnps_received += 1;
            if self.config.dcqcn.reacts() {
                qp.rp.on_cnp(&self.config.dcqcn, now);
            }
            return;
        }
        if matches!(qp.state, QpState::Reset | QpState::Init) {
            return self.drop_frame("qp_state");
        }
        let Some(path) = qp.path else {
            return self.drop_frame("qp_state");
        };
        if src.to_canonical() != path.remote.ip.to_canonical() {
            return self.drop_frame("wrong_source");
        }
        // P_Key match: same 15-bit key (IBA 10.9.3; membership bits are not
        // modelled).
        if f.bth.pkey & 0x7FFF != qp.pkey & 0x7FFF {
            return self.drop_frame("pkey");
        }
        if ce && self.config.dcqcn.notifies() && qp.np.on_ce(&self.config.dcqcn, now) {
            self.queue_cnp(qpn);
        }
        let kind = frame_kind(f.bth.opcode);
        with_qp!(self, qpn, |qp, env| {
            let mut opened = false;
            if kind == FrameKind::Request {
                responder::on_request(qp, &mut env, &f);
            } else if kind == FrameKind::Response {
                opened = env.begin_completer_event(qp, || CompleterEvent::Response {
                    opcode: f.bth.opcode,
                    psn: f.bth.psn,
                    aeth: f.ext.aeth,
                    payload_len: f.payload.len() as u64,
                    atomic_orig: f.ext.atomic_ack_eth.map_or(0, |a| a.orig),
                });
                completer::on_response(qp, &mut env, now, &f);
            } else {
                env.drop_frame("unsupported_opcode");
            }
            completer::drain(qp, &mut env);
            env.end_completer_event(qp, opened);
        });
    }

    /// The PFC priority of the NIC's frames but its CNPs.
    fn priority(&self) -> u8 {
        (self.config.dscp & 0x3F) >> 3
    }

    /// The PFC priority of its CNPs.
    fn cnp_priority(&self) -> u8 {
        (self.config.cnp_dscp & 0x3F) >> 3
    }

    fn pause_advance(&mut self, now: Time) {
        let trips = self.pause.advance(now, self.config.pfc_watchdog_ns);
        self.counters.pause_watchdog_trips += trips;
    }

    fn drop_frame(&mut self, reason: &str) {
        *self
            .counters
            .rx_dropped
            .entry(reason.to_string())
            .or_default() += 1;
    }
}

/// Which side of the NIC a received frame's opcode goes to, once the
/// frame passed the decode and the NIC-level checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// To the responder (`responder::on_request`).
    Request,
    /// To the completer (`completer::on_response`): ACK, NAK, READ
    /// response first / middle / last / only, atomic ACK (0x0D..=0x12).
    Response,
    /// A congestion notification, to the QP's DCQCN reaction point.
    Cnp,
    /// Dropped (`unsupported_opcode`).
    Unsupported,
}

/// The side of the NIC an opcode is handled by; the receive split of the
/// RTL (`response_placement` keeps [`FrameKind::Response`]) is held to it.
pub fn frame_kind(opcode: u8) -> FrameKind {
    match opcode {
        op::CNP => FrameKind::Cnp,
        op::SEND_FIRST..=op::READ_REQUEST
        | op::COMPARE_SWAP
        | op::FETCH_ADD
        | op::SEND_LAST_INV
        | op::SEND_ONLY_INV => FrameKind::Request,
        op::READ_RESPONSE_FIRST..=op::ATOMIC_ACKNOWLEDGE => FrameKind::Response,
        _ => FrameKind::Unsupported,
    }
}

impl rocenic_fabric::Endpoint for Nic {
    fn mac(&self) -> [u8; 6] {
        self.config.mac
    }

    fn receive(&mut self, now: Time, frame: Vec<u8>) {
        self.now = self.now.max(now);
        if frame.get(..6) == Some(&PFC_DEST_MAC[..]) {
            match PfcFrame::decode(&frame) {
                Ok(pfc) => {
                    self.counters.rx_pause_frames += 1;
                    self.pause_advance(now);
                    let rate = self.config.line_rate_bps;
                    self.pause
                        .on_frame(now, &pfc, rate, self.config.pfc_honoured);
                }
                Err(_) => self.drop_frame("unsupported_control"),
            }
            return;
        }
        self.counters.rx_frames += 1;
        self.counters.rx_bytes += frame.len() as u64;
        self.handle(now, &frame);
    }

    fn transmit(&mut self, now: Time) -> Option<Vec<u8>> {
        self.now = self.now.max(now);
        self.pause_advance(now);
        if let Some(&(qpn, _)) = self.cnps.front() {
            if !self.pause.paused(now, self.cnp_priority()) {
                return self.transmit_from(now, TxClass::Cnp, qpn);
            }
        }
        if self.pause.paused(now, self.priority()) {
            return None;
        }
        for qpn in self.rr_order(self.rr_resp) {
            if let Some(frame) = self.transmit_from(now, TxClass::Response, qpn) {
                self.rr_resp = qpn;
                return Some(frame);
            }
        }
        for qpn in self.rr_order(self.rr_req) {
            if let Some(frame) = self.transmit_from(now, TxClass::Request, qpn) {
                self.rr_req = qpn;
                return Some(frame);
            }
        }
        None
    }

    fn next_deadline(&self) -> Option<Time> {
        let mut best: Option<Time> = None;
        let mut consider = |t: Option<Time>| {
            if let Some(t) = t {
                best = Some(best.map_or(t, |b| b.min(t)));
            }
        };
        consider(
            self.pause
                .next_change(self.priority(), self.config.pfc_watchdog_ns),
        );
        if !self.cnps.is_empty() {
            consider(
                self.pause
                    .next_change(self.cnp_priority(), self.config.pfc_watchdog_ns),
            );
        }
        for qp in self.qps.values() {
            if qp.state != QpState::Rts {
                continue;
            }
            consider(qp.sq.ack_timer);
            consider(qp.sq.rnr_until);
            if self.config.dcqcn.reacts() {
                consider(qp.rp.next_deadline());
                let has_work =
                    qp.sq.rnr_until.is_none() && psn::diff(qp.sq.send_psn, qp.sq.next_psn) < 0;
                if has_work {
                    consider(qp.rp.send_at().filter(|&t| t > self.now));
                }
            }
        }
        best
    }

    fn advance(&mut self, now: Time) {
        self.pause_advance(now);
        let qpns: Vec<Qpn> = self.qps.keys().copied().collect();
        for qpn in qpns {
            self.fire_timers(now, qpn);
        }
    }
}
