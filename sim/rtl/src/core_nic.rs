//! `RtlCoreNic`: the whole Verilated NIC core (`nic_core`: both halves, the
//! frame arbiter, one DMA read and one DMA write port) as a fabric
//! [`Endpoint`], scored by ONE shadow model NIC fed both halves' inputs
//! exactly as the single-half harnesses feed theirs
//! ([`RtlNic`](super::nic::RtlNic) for the responder,
//! [`RtlRequesterNic`](super::requester_nic::RtlRequesterNic) for the
//! requester):
//!
//! - a request frame (every frame the requester's parser does not take as
//!   a response header) when the responder's response queue starts to
//!   hold its effects (`queue_fire`, or its outcome if it has none); the
//!   responder gives one outcome per frame, the other halves' frames
//!   included, so outcomes are matched against every frame in order;
//! - a response frame when the requester's event loop takes its header
//!   (`rsp_fire`);
//! - receive WQEs when the core's ring answers their post (no frame enters
//!   the core while one waits), send WQEs when the core takes their post;
//! - a QP's timers when a timer event of the QP is done;
//! - at `desc_fire` of QP `q`, `transmit_from(Response, q)`; at each grant
//!   status of QP `q`, `transmit_from(Request, q)` until the shadow's send
//!   cursor reaches the status's next PSN.
//!
//! The frame arbiter interleaves whole frames, so each frame out is
//! matched against the expected queue of its class (by opcode: response or
//! request). Receive CQEs (`rcqe`) and send CQEs (`scqe`) are separate
//! streams, each checked per QP against the shadow's CQEs of that
//! direction; DMA writes of both halves come through `dmaw`, every beat
//! must hold what the shadow's memory holds; host memories equal at the
//! end. The first difference is kept with its cycle
//! ([`RtlCoreNic::mismatch`]).
//!
//! Known gap of the core (`nic_core`'s doc): a QP moved to ERR by the
//! requester side does not flush its receive WQEs; a run where that
//! happens to a QP with posted receive WQEs reports the shadow's flush
//! CQEs as never come.

use super::dma_ports::{DmaReadPorts, DmaWritePorts};
use super::harness::{
    confirm_writes, leftover_checks, match_receive_cqes, match_send_cqes, shadow_sends,
    timers_running, Bookkeeping, CoreSendCqe, FrameMatch, ReceiveCqePorts, RtlHarness, RtlNicStats,
    SendCqePorts, ShadowCqes, NS_PER_CYCLE,
};
use super::host_dma::{HostDma, HostDmaConfig};
use super::host_ports::{self, RecvPostPorts};
use super::mr_config::start_core;
use super::qp_config::context_record;
use super::requester_nic::{is_core_response, SendPostPorts};
use super::stream::{AxisInPorts, AxisOutPorts, StreamSink, StreamSource};
use super::RtlError;
use rocenic_fabric::{Endpoint, Time};
use rocenic_hdl::requester::completer_datapath::EV_TIMER;
use rocenic_hdl::requester::send_queue_tracker::DEFAULT_SLOT_BITS as SEND_SLOT_BITS;
use rocenic_hdl::responder::receive_queue::DEFAULT_SLOT_BITS as RECV_SLOT_BITS;
use rocenic_hdl::responder::response_queue::{mtu_code as queue_mtu_code, OP_CONFIGURE};
use rocenic_model::memory::HostMemory;
use rocenic_model::nic::{frame_kind, FrameKind, Nic, NicConfig, TxClass};
use rocenic_model::requester::send_window;
use rocenic_model::verbs::{CqId, Cqe, QpState, Qpn, RecvWr, SendWr, VerbsError};
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{Block, Input, Output, Sim};

/// Cycles without any port activity after which the core counts as idle.
const QUIET_CYCLES: u64 = 64;
/// Frames the MAC side holds before it backpressures the core.
const MAC_FRAMES: usize = 2;
/// Cycles [`RtlCoreNic::finish_check`] gives the core to finish.
const FINISH_CYCLES: u64 = 2_000_000;

/// The named ports of the core `B`.
struct Ports<B: Block> {
    rx: AxisInPorts<B>,
    frame: AxisOutPorts<B>,
    dma_read: DmaReadPorts<B>,
    cfg_window: Input<B>,
    cfg_ack_req_interval: Input<B>,
    // ---- the responder half
    out_valid: Output<B>,
    out_ready: Input<B>,
    queue_fire: Output<B>,
    desc_fire: Output<B>,
    desc_qpn: Output<B>,
    rcqe: ReceiveCqePorts<B>,
    rq_post: RecvPostPorts<B>,
    queue_full_waits: Output<B>,
    // ---- the requester half
    post: SendPostPorts<B>,
    scqe: SendCqePorts<B>,
    rsp_fire: Output<B>,
    done_valid: Output<B>,
    done_qpn: Output<B>,
    done_kind: Output<B>,
    status_valid: Output<B>,
    status_qpn: Output<B>,
    status_next_psn: Output<B>,
    status_error: Output<B>,
    req_payload_last_errors: Output<B>,
    rsp_payload_last_errors: Output<B>,
}

impl<B: Block> Ports<B> {
    fn named() -> Result<Self, RtlError> {
        Ok(Ports {
            rx: AxisInPorts::named("rx")?,
            frame: AxisOutPorts::named("frame", &[])?,
            dma_read: DmaReadPorts::named("dma")?,
            cfg_window: B::input("cfg_window")?,
            cfg_ack_req_interval: B::input("cfg_ack_req_interval")?,
            out_valid: B::output("out_valid")?,
            out_ready: B::input("out_ready")?,
            queue_fire: B::output("queue_fire")?,
            desc_fire: B::output("desc_fire")?,
            desc_qpn: B::output("desc_qpn")?,
            rcqe: ReceiveCqePorts::named("rcqe")?,
            rq_post: RecvPostPorts::named()?,
            queue_full_waits: B::output("queue_full_waits")?,
            post: SendPostPorts::named()?,
            scqe: SendCqePorts::named("scqe")?,
            rsp_fire: B::output("rsp_fire")?,
            done_valid: B::output("done_valid")?,
            done_qpn: B::output("done_qpn")?,
            done_kind: B::output("done_kind")?,
            status_valid: B::output("status_valid")?,
            status_qpn: B::output("status_qpn")?,
            status_next_psn: B::output("status_next_psn")?,
            status_error: B::output("status_error")?,
            req_payload_last_errors: B::output("req_payload_last_errors")?,
            rsp_payload_last_errors: B::output("rsp_payload_last_errors")?,
        })
    }
}

/// The core once programmed, and the scoreboard's queues.
struct Running<B: Block> {
    sim: Sim<B>,
    p: Ports<B>,
    host: HostDma,
    dma_write: DmaWritePorts<B>,
    rx: StreamSource,
    /// Every frame given to the core whose responder outcome has not come
    /// yet, and whether it is a response (the requester's, fed at
    /// `rsp_fire`) or the responder's (fed at its commit point).
    rx_frames: VecDeque<(Vec<u8>, bool)>,
    /// The oldest of them is already with the shadow (its first queue
    /// command was accepted before its outcome).
    front_fed: bool,
    /// Response frames whose header the requester has not taken yet.
    rsp_frames: VecDeque<Vec<u8>>,
    tx: StreamSink,
    /// Frames the core emitted, waiting for the MAC.
    out: VecDeque<Vec<u8>>,
    responses: FrameMatch,
    requests: FrameMatch,
    writes: Vec<(u64, Vec<u8>)>,
    shadow_cqes: ShadowCqes,
    receive_cqes: Vec<(u64, Cqe)>,
    send_cqes: Vec<CoreSendCqe>,
    /// Each QP's send ring slots: the wr_id posted into each.
    slots: BTreeMap<(Qpn, u64), u64>,
    /// Receive WQEs posted while running; the front one is with the core
    /// once `recv_taken`.
    recv_posts: VecDeque<(Qpn, RecvWr)>,
    recv_taken: bool,
    /// Send WQEs for the core and whether the shadow has each already; the
    /// front one is taken (and with the shadow) once `send_taken`.
    send_posts: VecDeque<(Qpn, SendWr, bool)>,
    send_taken: bool,
    offset: i64,
    quiet: u64,
    stats: RtlNicStats,
}

impl<B: Block> Running<B> {
    fn fabric_cycle(&self) -> u64 {
        (self.sim.cycle() as i64 + self.offset) as u64
    }
}

/// A whole Verilated core on the fabric with its shadow model (see the
/// module doc). `B` is `verilator_sys::NicCore`.
pub struct RtlCoreNic<B: Block> {
    book: Bookkeeping,
    dma: HostDmaConfig,
    /// Send WQEs posted before the run, for the core once programmed.
    pending_posts: Vec<(Qpn, SendWr)>,
    run: Option<Running<B>>,
}

impl<B: Block> RtlCoreNic<B> {
    /// An RTL NIC with `config`, whose device limits become the core's
    /// (each half's, see `RtlNic::new` and `RtlRequesterNic::new`).
    pub fn new(mut config: NicConfig, dma: HostDmaConfig) -> RtlCoreNic<B> {
        config.max_qp_wr = 1 << RECV_SLOT_BITS.min(SEND_SLOT_BITS);
        config.max_sge = 1;
        config.max_qp_rd_atom = 16;
        RtlCoreNic {
            book: Bookkeeping::new(Nic::new(config)),
            dma,
            pending_posts: Vec::new(),
            run: None,
        }
    }

    pub fn shadow(&self) -> &Nic {
        &self.book.shadow
    }

    pub fn mismatch(&self) -> Option<&str> {
        self.book.mismatch.as_deref()
    }

    pub fn stats(&self) -> RtlNicStats {
        self.run
            .as_ref()
            .map_or_else(RtlNicStats::default, |r| r.stats)
    }

    /// Host memory as the core's DMA left it (the shadow's until it runs).
    pub fn memory(&self) -> &HostMemory {
        match &self.run {
            Some(r) => r.host.memory(),
            None => self.book.shadow.memory(),
        }
    }

    pub fn setup(&mut self) -> Result<&mut Nic, RtlError> {
        self.book.setup(self.run.is_some())
    }

    /// Posts a send WQE: to the core's post port in posting order, and to
    /// the shadow when the core takes it.
    pub fn post_send(&mut self, qpn: Qpn, wr: SendWr) {
        match self.run.as_mut() {
            Some(r) => r.send_posts.push_back((qpn, wr, false)),
            None => self.pending_posts.push((qpn, wr)),
        }
        self.book.busy = true;
    }

    /// Posts a receive WQE as `RtlNic::post_recv` does.
    pub fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> Result<(), VerbsError> {
        let Some(r) = self.run.as_mut() else {
            return self.book.shadow.post_recv(qpn, wr);
        };
        let state = self.book.shadow.qp_state(qpn)?;
        if state == QpState::Err {
            return Err(VerbsError::WrongQpState { qpn, state });
        }
        let queued = r.recv_posts.iter().filter(|(q, _)| *q == qpn).count();
        self.book.shadow.check_post_recv(qpn, &wr, queued)?;
        r.recv_posts.push_back((qpn, wr));
        self.book.busy = true;
        Ok(())
    }

    pub fn poll_cq(&mut self, cq: CqId, max: usize) -> Vec<Cqe> {
        self.book.poll_cq(cq, max)
    }

    pub fn cq_len(&self, cq: CqId) -> usize {
        self.book.cq_len(cq)
    }

    fn fail(&mut self, what: String) {
        let cycle = self.run.as_ref().map_or(0, |r| r.sim.cycle());
        self.book.fail(cycle, what);
    }

    /// Checks what only the end of a run can tell (see `RtlNic`'s), after
    /// letting the core finish what it has in flight.
    pub fn finish_check(&mut self) -> Result<(), String> {
        for _ in 0..FINISH_CYCLES {
            let Some(r) = self.run.as_mut() else { break };
            r.out.clear();
            if !self.book.busy || self.book.mismatch.is_some() {
                break;
            }
            if let Err(e) = self.cycle() {
                self.fail(e);
            }
        }
        if let Some(m) = &self.book.mismatch {
            return Err(m.clone());
        }
        let Some(r) = &self.run else {
            return Ok(());
        };
        let cycle = r.sim.cycle();
        let leftover = r
            .responses
            .leftover("response")
            .or_else(|| r.requests.leftover("request"))
            .or_else(|| {
                r.receive_cqes
                    .first()
                    .map(|(_, c)| format!("receive CQE {c:?} the shadow never made"))
            })
            .or_else(|| {
                r.send_cqes
                    .first()
                    .map(|c| format!("send CQE {c:?} the shadow never made"))
            })
            .or_else(|| {
                leftover_checks(
                    &r.writes,
                    &r.shadow_cqes,
                    r.host.memory(),
                    &self.book.shadow,
                )
            });
        match leftover {
            Some(what) => Err(format!("cycle {cycle}: {what}")),
            None => Ok(()),
        }
    }

    /// Programs the core from the shadow's state: both directions' QP
    /// contexts, addresses, response queues, MR tables, receive WQEs; the
    /// send WQEs the shadow holds are posted first once running.
    fn start(&mut self) -> Result<(), RtlError> {
        let shadow = &self.book.shadow;
        let mut sim = start_core::<B>(shadow.mr_table())?;
        let p = Ports::<B>::named()?;
        let config = shadow.config().clone();
        sim.set_u64(
            p.cfg_window,
            send_window(config.max_outstanding_psns).into(),
        );
        sim.set_u64(p.cfg_ack_req_interval, config.ack_req_interval.into());
        for qpn in shadow.qpns() {
            let Some(view) = shadow.qp_context(qpn) else {
                continue;
            };
            if view.state == QpState::Reset {
                continue;
            }
            let record = context_record(&view);
            host_ports::write_context_at(&mut sim, "rsp_qp_host", qpn, &record)?;
            // Nothing is sent before the run: the WQEs the shadow holds are
            // posted to the core from the send cursor on.
            let mut requester = record;
            requester.sq_next_psn = view.sq_send_psn;
            host_ports::write_context_at(&mut sim, "req_qp_host", qpn, &requester)?;
            let Some(attrs) = shadow.qp_tx_attrs(qpn) else {
                continue;
            };
            host_ports::write_address(&mut sim, qpn, &attrs, config.mac, config.dscp, config.ecn)?;
            if matches!(view.state, QpState::Rtr | QpState::Rts) {
                host_ports::queue_command(
                    &mut sim,
                    OP_CONFIGURE,
                    qpn,
                    queue_mtu_code(attrs.mtu).into(),
                )?;
            }
        }
        for qpn in shadow.qpns() {
            for wr in shadow.recv_queue(qpn).unwrap_or_default() {
                if !host_ports::post_recv(&mut sim, qpn, &wr)? {
                    return Err(RtlError::Mismatch(format!(
                        "the core refused receive WQE {} of QP {qpn} the shadow took",
                        wr.wr_id
                    )));
                }
            }
        }
        let mut send_posts: VecDeque<(Qpn, SendWr, bool)> = VecDeque::new();
        for qpn in shadow.qpns() {
            for wr in shadow.send_queue(qpn).unwrap_or_default() {
                send_posts.push_back((qpn, wr, true));
            }
        }
        send_posts.extend(
            std::mem::take(&mut self.pending_posts)
                .into_iter()
                .map(|(q, wr)| (q, wr, false)),
        );
        let host = HostDma::new(self.dma, shadow.memory().clone());
        let offset = -(sim.cycle() as i64);
        self.run = Some(Running {
            sim,
            p,
            host,
            dma_write: DmaWritePorts::named("dmaw")?,
            rx: StreamSource::new(1.0, 0),
            rx_frames: VecDeque::new(),
            front_fed: false,
            rsp_frames: VecDeque::new(),
            tx: StreamSink::new("frame", 1.0, 0),
            out: VecDeque::new(),
            responses: FrameMatch::default(),
            requests: FrameMatch::default(),
            writes: Vec::new(),
            shadow_cqes: ShadowCqes::default(),
            receive_cqes: Vec::new(),
            send_cqes: Vec::new(),
            slots: BTreeMap::new(),
            recv_posts: VecDeque::new(),
            recv_taken: false,
            send_posts,
            send_taken: false,
            offset,
            quiet: 0,
            stats: RtlNicStats::default(),
        });
        Ok(())
    }

    fn run_to(&mut self, now: Time) {
        if self.book.mismatch.is_some() {
            return;
        }
        if self.run.is_none() {
            if let Err(e) = self.start() {
                self.fail(format!("programming the core: {e}"));
                return;
            }
            self.book.busy = true;
        }
        loop {
            let r = self.run.as_mut().expect("started");
            let target = now.div_ceil(NS_PER_CYCLE);
            if r.fabric_cycle() >= target {
                break;
            }
            if !self.book.busy {
                r.offset = target as i64 - r.sim.cycle() as i64;
                break;
            }
            if let Err(e) = self.cycle() {
                self.fail(e);
                return;
            }
        }
    }

    /// One clock cycle of the core with its scoreboard.
    fn cycle(&mut self) -> Result<(), String> {
        let r = self.run.as_mut().expect("started");
        let p = &r.p;
        let now = r.fabric_cycle() * NS_PER_CYCLE;
        // ---- inputs
        r.rx.begin_cycle_holding(!r.recv_posts.is_empty());
        p.rx.drive(r.sim.dut_mut(), r.rx.current());
        let offer_recv = !r.recv_taken
            && r.rx.current().is_none()
            && r.rx_frames.len() == r.rx.frames_not_started();
        let recv_post = r.recv_posts.front().filter(|_| offer_recv);
        p.rq_post
            .drive(&mut r.sim, recv_post.map(|(q, wr)| (*q, wr)))
            .map_err(|e| e.to_string())?;
        let recv_offered = recv_post.is_some();
        let send_post = r.send_posts.front().filter(|_| !r.send_taken).cloned();
        if let Some((q, wr, _)) = &send_post {
            let mtu = self
                .book
                .shadow
                .qp_context(*q)
                .map_or(4096, |v| v.mtu.max(256));
            p.post.drive(&mut r.sim, *q, wr, mtu);
        }
        r.sim.set_bit(p.post.valid, send_post.is_some());
        r.tx.begin_cycle();
        let mac_ready = r.out.len() < MAC_FRAMES;
        p.frame.set_ready(r.sim.dut_mut(), mac_ready);
        p.dma_read.drive(&mut r.sim, &r.host);
        let write_ready = r.dma_write.drive(&mut r.sim, &r.host, true);
        r.sim.set_bit(p.out_ready, true);
        r.sim.set_bit(p.rcqe.ready, true);
        r.sim.set_bit(p.scqe.ready, true);
        r.sim.eval();

        // ---- outputs
        let mut active = false;
        let rx_ready = p.rx.ready(r.sim.dut());
        let read_taken = p
            .dma_read
            .observe(&r.sim, &mut r.host)
            .map_err(|e| e.to_string())?;
        active |= read_taken;
        if let Some(w) = r
            .dma_write
            .observe(&r.sim, &mut r.host, write_ready)
            .map_err(|e| e.to_string())?
        {
            r.stats.dma_write_beats += 1;
            r.stats.dma_write_bytes += w.1.len() as u64;
            r.writes.push(w);
            active = true;
        }
        if r.sim.get_u64(p.req_payload_last_errors) != 0
            || r.sim.get_u64(p.rsp_payload_last_errors) != 0
        {
            return Err("a TX builder's payload ended off its frame".into());
        }
        if let Some(cqe) = p.rcqe.take(&r.sim)? {
            r.receive_cqes.push((r.sim.cycle(), cqe));
            r.stats.cqes += 1;
            active = true;
        }
        if let Some(c) = p.scqe.take(&r.sim)? {
            r.send_cqes.push(c);
            r.stats.cqes += 1;
            active = true;
        }
        let recv_taken_now = recv_offered && p.rq_post.ready(&r.sim);
        let recv_result = p.rq_post.result(&r.sim);
        let send_taken_now = send_post.is_some() && r.sim.get_bit(p.post.ready);
        let send_result = p.post.result(&r.sim);
        r.stats.queue_full_waits = r.sim.get_u64(p.queue_full_waits);
        let decided = r.sim.get_bit(p.out_valid);
        let queued = r.sim.get_bit(p.queue_fire);
        let desc = r
            .sim
            .get_bit(p.desc_fire)
            .then(|| r.sim.get_u64(p.desc_qpn) as Qpn);
        let rsp_fire = r.sim.get_bit(p.rsp_fire);
        let timer_done = r.sim.get_bit(p.done_valid) && r.sim.get_u64(p.done_kind) == EV_TIMER;
        let done_qpn = r.sim.get_u64(p.done_qpn) as Qpn;
        let status = r.sim.get_bit(p.status_valid).then(|| {
            (
                r.sim.get_u64(p.status_qpn) as Qpn,
                r.sim.get_u64(p.status_next_psn) as u32,
                r.sim.get_bit(p.status_error),
            )
        });
        active |= recv_taken_now || recv_result.is_some() || send_taken_now;
        active |= send_result.is_some() || decided || queued || desc.is_some();
        active |= rsp_fire || status.is_some() || r.sim.get_bit(p.done_valid);
        if mac_ready {
            let beat = p.frame.beat(r.sim.dut());
            let valid = p.frame.valid(r.sim.dut());
            active |=
                r.tx.observe(r.sim.cycle(), valid, &beat, &[])
                    .map_err(|e| e.to_string())?;
        }
        r.sim.tick();
        r.host.clock(read_taken);
        if r.rx.end_cycle(r.sim.cycle(), rx_ready).is_some() {
            active = true;
        }
        for f in r.tx.take_frames() {
            r.stats.frames_out += 1;
            let class = match rocenic_wire::RoceFrame::decode(&f.bytes) {
                Ok(d) if frame_kind(d.bth.opcode) == FrameKind::Response => &mut r.responses,
                _ => &mut r.requests,
            };
            class.core.push_back(f.bytes.clone());
            r.out.push_back(f.bytes);
        }
        r.stats.cycles += 1;

        // ---- the shadow takes the core's inputs in the core's order:
        // the responder half's first
        if recv_taken_now {
            r.recv_taken = true;
        }
        let shadow = &mut self.book.shadow;
        if let Some(qpn) = desc {
            match shadow.transmit_from(now, TxClass::Response, qpn) {
                Some(f) => r.responses.expected.push_back(f),
                None => {
                    return Err(format!(
                        "the core sends a response of QP {qpn} the shadow does not owe"
                    ))
                }
            }
        }
        if decided {
            let (frame, response) = r
                .rx_frames
                .pop_front()
                .ok_or("an outcome with no frame behind it")?;
            if !std::mem::take(&mut r.front_fed) && !response {
                shadow.receive(now, frame);
            }
        }
        if queued && !r.front_fed {
            let (frame, response) = r
                .rx_frames
                .front()
                .ok_or("a queue command with no frame behind it")?
                .clone();
            if response {
                return Err("a queue command for a response frame".into());
            }
            r.front_fed = true;
            shadow.receive(now, frame);
        }
        if let Some(accepted) = recv_result {
            let (qpn, wr) = r
                .recv_posts
                .pop_front()
                .filter(|_| std::mem::take(&mut r.recv_taken))
                .ok_or("a receive WQE result with no post behind it")?;
            if !accepted {
                return Err(format!(
                    "the core refused receive WQE {} of QP {qpn} the shadow takes",
                    wr.wr_id
                ));
            }
            shadow
                .post_recv(qpn, wr)
                .map_err(|e| format!("the shadow refused a receive WQE of QP {qpn}: {e}"))?;
        }
        // ---- then the requester half's
        if send_taken_now {
            let (qpn, wr, in_shadow) = send_post.expect("offered");
            r.send_taken = true;
            if !in_shadow {
                shadow.post_send(qpn, wr).map_err(|e| {
                    format!("QP {qpn}: the shadow refuses a WQE the core took: {e}")
                })?;
            }
        }
        if let Some((qpn, accepted, slot)) = send_result {
            let (q, wr, _) = r
                .send_posts
                .pop_front()
                .filter(|_| std::mem::take(&mut r.send_taken))
                .ok_or("a post result with no post behind it")?;
            if q != qpn || !accepted {
                return Err(format!(
                    "QP {q}: the core refused (or misplaced) WQE {} the shadow took",
                    wr.wr_id
                ));
            }
            r.slots.insert((qpn, slot), wr.wr_id);
        }
        if rsp_fire {
            let frame = r
                .rsp_frames
                .pop_front()
                .ok_or("a response header with no frame behind it")?;
            shadow.receive(now, frame);
        }
        if timer_done {
            shadow.fire_timers(now, done_qpn);
        }
        if let Some((qpn, next_psn, error)) = status {
            let frames = shadow_sends(&mut self.book.shadow, now, qpn, next_psn, error)?;
            let r = self.run.as_mut().expect("started");
            r.requests.expected.extend(frames);
        }
        self.confirm()?;
        let timers = timers_running(&self.book.shadow);
        let r = self.run.as_mut().expect("started");
        r.quiet = if active { 0 } else { r.quiet + 1 };
        self.book.busy = !r.rx.is_idle()
            || !r.rx_frames.is_empty()
            || !r.rsp_frames.is_empty()
            || !r.recv_posts.is_empty()
            || !r.send_posts.is_empty()
            || r.host.reads_in_flight() > 0
            || r.host.offered().is_some()
            || !r.dma_write.idle()
            || r.tx.mid_frame()
            || timers
            || r.quiet < QUIET_CYCLES;
        Ok(())
    }

    /// Matches frames, writes and CQEs the shadow has caught up with.
    fn confirm(&mut self) -> Result<(), String> {
        let r = self.run.as_mut().expect("started");
        let book = &mut self.book;
        r.shadow_cqes.collect(&mut book.shadow);
        r.responses.confirm("response")?;
        r.requests.confirm("request")?;
        confirm_writes(book.shadow.memory(), &mut r.writes);
        match_receive_cqes(&mut r.receive_cqes, &mut r.shadow_cqes, book)?;
        if r.send_taken {
            return Ok(());
        }
        match_send_cqes(&mut r.send_cqes, &r.slots, &mut r.shadow_cqes, book)
    }
}

impl<B: Block> Endpoint for RtlCoreNic<B> {
    fn mac(&self) -> [u8; 6] {
        self.book.shadow.config().mac
    }

    fn receive(&mut self, now: Time, frame: Vec<u8>) {
        self.run_to(now);
        let Some(r) = self.run.as_mut() else {
            return;
        };
        if r.rx.push_frame(&frame) {
            let response = is_core_response(&frame);
            if response {
                r.rsp_frames.push_back(frame.clone());
            }
            r.rx_frames.push_back((frame, response));
            r.stats.frames_in += 1;
            self.book.busy = true;
        }
    }

    fn transmit(&mut self, now: Time) -> Option<Vec<u8>> {
        self.run_to(now);
        let r = self.run.as_mut()?;
        let f = r.out.pop_front();
        if f.is_some() {
            self.book.busy = true;
        }
        f
    }

    fn next_deadline(&self) -> Option<Time> {
        let Some(r) = self.run.as_ref() else {
            return Some(0);
        };
        (self.book.busy && self.book.mismatch.is_none())
            .then(|| (r.fabric_cycle() + 1) * NS_PER_CYCLE)
    }

    fn advance(&mut self, now: Time) {
        self.run_to(now);
    }
}

impl<B: Block> RtlHarness for RtlCoreNic<B> {
    fn setup(&mut self) -> Result<&mut Nic, RtlError> {
        RtlCoreNic::setup(self)
    }

    fn shadow(&self) -> &Nic {
        RtlCoreNic::shadow(self)
    }

    fn post_send(&mut self, qpn: Qpn, wr: SendWr) -> anyhow::Result<()> {
        RtlCoreNic::post_send(self, qpn, wr);
        Ok(())
    }

    fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> anyhow::Result<()> {
        Ok(RtlCoreNic::post_recv(self, qpn, wr)?)
    }

    fn poll_cq(&mut self, cq: CqId, max: usize) -> Vec<Cqe> {
        RtlCoreNic::poll_cq(self, cq, max)
    }

    fn cq_len(&self, cq: CqId) -> usize {
        RtlCoreNic::cq_len(self, cq)
    }

    fn memory(&self) -> &HostMemory {
        RtlCoreNic::memory(self)
    }

    fn mismatch(&self) -> Option<&str> {
        RtlCoreNic::mismatch(self)
    }

    fn finish_check(&mut self) -> Result<(), String> {
        RtlCoreNic::finish_check(self)
    }

    fn cycles(&self) -> u64 {
        self.stats().cycles
    }
}
