//! `RtlCoreNic`: the whole Verilated NIC (`nic_top`: the core `nic_core`
//! with both halves, the frame arbiter, one DMA read and one DMA write
//! port, behind BAR0 and the counters) as a fabric [`Endpoint`]. Its
//! congestion control is set through BAR0 as software sets it
//! ([`program_congestion`]); at the end of a run
//! ([`RtlCoreNic::finish_check`]) BAR0's counters are read against what
//! the core's ports showed. It is scored by ONE shadow model NIC fed both
//! halves' inputs exactly as the single-half harnesses feed theirs
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

use super::bar0::{program_congestion, VerilatedBar};
use super::dcqcn_watch::{drive_pacing, DcqcnWatch};
use super::harness::{
    confirm_writes, leftover_checks, match_receive_cqes, match_send_cqes, nic_harness_surface,
    shadow_sends, timers_running, Bookkeeping, ClockedHarness, CoreRun, CoreSendCqe, FrameMatch,
    ReceiveCqePorts, SendCqePorts, ShadowCqes, NS_PER_CYCLE,
};
use super::host_dma::{HostDma, HostDmaConfig};
use super::host_ports::{self, RecvPostPorts};
use super::mr_config::start_core;
use super::nic::RecvPosts;
use super::qp_config::context_record;
use super::requester_nic::{is_core_response, SendPostPorts, SendPosts};
use super::RtlError;
use rocenic_driver::bar0::Bar0;
use rocenic_fabric::{Endpoint, Time};
use rocenic_hdl::codes::mtu;
use rocenic_hdl::host::counter_bank::STALENESS;
use rocenic_hdl::nic::nic_top::FED_COUNTERS;
use rocenic_hdl::requester::completer_datapath::EV_TIMER;
use rocenic_hdl::requester::send_queue_tracker::DEFAULT_SLOT_BITS as SEND_SLOT_BITS;
use rocenic_hdl::responder::receive_queue::DEFAULT_SLOT_BITS as RECV_SLOT_BITS;
use rocenic_hdl::responder::response_queue::OP_CONFIGURE;
use rocenic_model::nic::{frame_kind, FrameKind, Nic, NicConfig, TxClass};
use rocenic_model::pacing::PacingParams;
use rocenic_model::requester::send_window;
use rocenic_model::verbs::{Cqe, QpState, Qpn, RecvWr, SendWr, VerbsError};
use std::collections::VecDeque;
use verilator_sys::{Block, Input, Output};

/// Cycles [`RtlCoreNic::finish_check`] gives the core to finish.
const FINISH_CYCLES: u64 = 2_000_000;

/// The named ports of the core `B`.
struct Ports<B: Block> {
    cfg_window: Input<B>,
    cfg_ack_req_interval: Input<B>,
    tx_priority: Input<B>,
    pfc_paused: Output<B>,
    pause_frame: Output<B>,
    pause_trips: Output<B>,
    now: Input<B>,
    cnp_fire: Output<B>,
    cnp_qpn: Output<B>,
    ce_events: Output<B>,
    cnp_lost: Output<B>,
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
            cfg_window: B::input("cfg_window")?,
            cfg_ack_req_interval: B::input("cfg_ack_req_interval")?,
            tx_priority: B::input("tx_priority")?,
            pfc_paused: B::output("pfc_paused")?,
            pause_frame: B::output("pause_frame")?,
            pause_trips: B::output("pause_trips")?,
            now: B::input("now")?,
            cnp_fire: B::output("cnp_fire")?,
            cnp_qpn: B::output("cnp_qpn")?,
            ce_events: B::output("ce_events")?,
            cnp_lost: B::output("cnp_lost")?,
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
    core: CoreRun<B>,
    p: Ports<B>,
    /// Every frame given to the core whose responder outcome has not come
    /// yet, and whether it is a response (the requester's, fed at
    /// `rsp_fire`) or the responder's (fed at its commit point).
    rx_frames: VecDeque<(Vec<u8>, bool)>,
    /// The oldest of them is already with the shadow (its first queue
    /// command was accepted before its outcome).
    front_fed: bool,
    /// Response frames whose header the requester has not taken yet.
    rsp_frames: VecDeque<Vec<u8>>,
    responses: FrameMatch,
    requests: FrameMatch,
    cnps: FrameMatch,
    shadow_cqes: ShadowCqes,
    receive_cqes: Vec<(u64, Cqe)>,
    send_cqes: Vec<CoreSendCqe>,
    /// Receive WQEs posted while running.
    recv_posts: RecvPosts,
    /// Send WQEs for the core.
    send_posts: SendPosts,
    /// DCQCN's sending side, replayed on the model's integer functions.
    dcqcn: DcqcnWatch<B>,
    /// Bytes of the request frames the core sent.
    request_bytes: u64,
    /// Bytes of every frame given to the core, and of every frame it sent.
    bytes_in: u64,
    bytes_out: u64,
}

/// A whole Verilated core on the fabric with its shadow model (see the
/// module doc). `B` is `verilator_sys::NicTop`.
pub struct RtlCoreNic<B: Block> {
    book: Bookkeeping,
    /// The core's reaction point runs (the configuration's
    /// `dcqcn.reacts()`; the shadow's is off, see `new`).
    reacts: bool,
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
        // The core's reaction point and pacing are checked on their own
        // (`DcqcnWatch`: every outcome against the model's integer
        // functions, with the core's own tick times); the shadow predicts
        // frames when the core sends them, so it neither cuts nor paces.
        let reacts = config.dcqcn.reacts();
        config.dcqcn.reaction_point = false;
        RtlCoreNic {
            book: Bookkeeping::new(Nic::new(config)),
            reacts,
            dma,
            pending_posts: Vec::new(),
            run: None,
        }
    }

    /// Posts a send WQE: to the core's post port in posting order, and to
    /// the shadow when the core takes it.
    pub fn post_send(&mut self, qpn: Qpn, wr: SendWr) {
        match self.run.as_mut() {
            Some(r) => r.send_posts.push(qpn, wr),
            None => self.pending_posts.push((qpn, wr)),
        }
        self.book.busy = true;
    }

    /// Posts a receive WQE as `RtlNic::post_recv` does.
    pub fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> Result<(), VerbsError> {
        let Some(r) = self.run.as_mut() else {
            return self.book.shadow.post_recv(qpn, wr);
        };
        r.recv_posts.post(&self.book.shadow, qpn, wr)?;
        self.book.busy = true;
        Ok(())
    }

    /// Checks what only the end of a run can tell (see `RtlNic`'s), after
    /// letting the core finish what it has in flight.
    pub fn finish_check(&mut self) -> Result<(), String> {
        self.drain(FINISH_CYCLES)?;
        let Some(r) = &self.run else {
            return Ok(());
        };
        let cycle = r.core.sim.cycle();
        let leftover = r
            .responses
            .leftover("response")
            .or_else(|| r.requests.leftover("request"))
            .or_else(|| r.cnps.leftover("CNP"))
            .or_else(|| {
                let shadow = self.book.shadow.counters().cnps_received;
                (r.dcqcn.tally.cnps != shadow).then(|| {
                    format!(
                        "the reaction point took {} CNPs, the shadow received {shadow}",
                        r.dcqcn.tally.cnps
                    )
                })
            })
            .or_else(|| {
                (r.dcqcn.tally.sent_bytes != r.request_bytes).then(|| {
                    format!(
                        "the reaction point counted {} bytes sent, the core sent {} in request frames",
                        r.dcqcn.tally.sent_bytes, r.request_bytes
                    )
                })
            })
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
                    &r.core.writes,
                    &r.shadow_cqes,
                    r.core.host.memory(),
                    &self.book.shadow,
                )
            });
        if let Some(what) = leftover {
            return Err(format!("cycle {cycle}: {what}"));
        }
        self.counters_check()
            .map_err(|what| format!("cycle {cycle}: {what}"))
    }

    /// The counters the NIC top feeds, read through BAR0 as `ethtool -S`
    /// would, against what the harness saw on the core's ports: frames and
    /// bytes each way, CNPs sent, CNPs the reaction point took and its
    /// cuts, pause frames and watchdog trips.
    fn counters_check(&mut self) -> Result<(), String> {
        let Some(r) = self.run.as_mut() else {
            return Ok(());
        };
        let stats = &r.core.stats;
        let expected = [
            ("rx_frames", stats.frames_in),
            ("rx_bytes", r.bytes_in),
            ("tx_frames", stats.frames_out),
            ("tx_bytes", r.bytes_out),
            ("tx_cnps", stats.cnps_sent),
            ("rx_cnps", r.dcqcn.tally.cnps),
            ("rate_cuts", r.dcqcn.tally.cuts),
            ("rx_pause_frames", stats.rx_pause_frames),
            ("pause_watchdog_trips", stats.pause_watchdog_trips),
            ("mmio_unmapped", 0),
        ];
        debug_assert_eq!(expected.map(|e| e.0), FED_COUNTERS);
        r.core.sim.ticks(STALENESS);
        let bar = VerilatedBar::new(&mut r.core.sim).map_err(|e| e.to_string())?;
        let mut bar = Bar0::open(bar).map_err(|e| format!("BAR0: {e}"))?;
        let counters = bar.counters();
        bar.mmio().stuck().map_err(|e| e.to_string())?;
        for (name, want) in expected {
            let read = counters.iter().find(|(n, _)| *n == name).map(|c| c.1);
            if read != Some(want) {
                return Err(format!(
                    "BAR0's counter {name} reads {read:?}, the core's ports showed {want}"
                ));
            }
        }
        Ok(())
    }

    /// Matches frames, writes and CQEs the shadow has caught up with.
    fn confirm(&mut self) -> Result<(), String> {
        let r = self.run.as_mut().expect("started");
        let book = &mut self.book;
        r.shadow_cqes.collect(&mut book.shadow);
        r.responses.confirm("response")?;
        r.requests.confirm("request")?;
        r.cnps.confirm("CNP")?;
        confirm_writes(book.shadow.memory(), &mut r.core.writes);
        match_receive_cqes(&mut r.receive_cqes, &mut r.shadow_cqes, book)?;
        if r.send_posts.taken() {
            return Ok(());
        }
        match_send_cqes(
            &mut r.send_cqes,
            r.send_posts.slots(),
            &mut r.shadow_cqes,
            book,
        )
    }
}

impl<B: Block> ClockedHarness for RtlCoreNic<B> {
    const STARTS_AT_ZERO: bool = true;

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
        sim.set_u64(p.tx_priority, u64::from((config.dscp & 0x3F) >> 3));
        let rp = program_congestion(&mut sim, &config, self.reacts)?;
        let pacing = PacingParams::for_line(config.line_rate_bps, 1_000_000_000 / NS_PER_CYCLE);
        drive_pacing(&mut sim, &pacing)?;
        let dcqcn = DcqcnWatch::new(rp, pacing)?;
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
                    u64::from(mtu::shift_code(attrs.mtu).expect("an RTL path MTU")),
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
        let send_posts = SendPosts::starting(shadow, std::mem::take(&mut self.pending_posts));
        let host = HostDma::new(self.dma, shadow.memory().clone());
        self.run = Some(Running {
            core: CoreRun::new(sim, host)?,
            p,
            rx_frames: VecDeque::new(),
            front_fed: false,
            rsp_frames: VecDeque::new(),
            responses: FrameMatch::default(),
            requests: FrameMatch::default(),
            cnps: FrameMatch::default(),
            shadow_cqes: ShadowCqes::default(),
            receive_cqes: Vec::new(),
            send_cqes: Vec::new(),
            recv_posts: RecvPosts::default(),
            send_posts,
            dcqcn,
            request_bytes: 0,
            bytes_in: 0,
            bytes_out: 0,
        });
        // The send WQEs the shadow holds go in first.
        self.book.busy = true;
        Ok(())
    }

    /// One clock cycle of the core with its scoreboard.
    fn cycle(&mut self) -> Result<(), String> {
        let r = self.run.as_mut().expect("started");
        let p = &r.p;
        let core = &mut r.core;
        let now = core.fabric_cycle() * NS_PER_CYCLE;
        // ---- inputs
        core.drive_rx(!r.recv_posts.is_empty());
        let core_empty =
            core.rx.current().is_none() && r.rx_frames.len() == core.rx.frames_not_started();
        let recv_post = r.recv_posts.offer(core_empty);
        p.rq_post
            .drive(&mut core.sim, recv_post)
            .map_err(|e| e.to_string())?;
        let recv_offered = recv_post.is_some();
        let send_post = r
            .send_posts
            .offer(&p.post, &mut core.sim, &self.book.shadow)?;
        let mut ports = core.drive_mac_and_dma();
        core.sim
            .set_u64(p.now, core.fabric_cycle() & u64::from(u32::MAX));
        core.sim.set_bit(p.out_ready, true);
        core.sim.set_bit(p.rcqe.ready, true);
        core.sim.set_bit(p.scqe.ready, true);
        core.sim.eval();

        // ---- outputs
        let (mut active, _) = core.observe_dma(&mut ports)?;
        if core.sim.get_u64(p.req_payload_last_errors) != 0
            || core.sim.get_u64(p.rsp_payload_last_errors) != 0
        {
            return Err("a TX builder's payload ended off its frame".into());
        }
        if let Some(cqe) = p.rcqe.take(&core.sim)? {
            r.receive_cqes.push((core.sim.cycle(), cqe));
            core.stats.cqes += 1;
            active = true;
        }
        if let Some(c) = p.scqe.take(&core.sim)? {
            r.send_cqes.push(c);
            core.stats.cqes += 1;
            active = true;
        }
        let recv_taken_now = recv_offered && p.rq_post.ready(&core.sim);
        let recv_result = p.rq_post.result(&core.sim);
        let send_taken_now = send_post.is_some() && core.sim.get_bit(p.post.ready);
        let send_result = p.post.result(&core.sim);
        core.stats.queue_full_waits = core.sim.get_u64(p.queue_full_waits);
        if core.sim.get_bit(p.pause_frame) {
            core.stats.rx_pause_frames += 1;
        }
        if core.sim.get_u64(p.cnp_lost) != 0 {
            return Err("the notification point lost a CE event or a CNP".into());
        }
        core.stats.ce_events = core.sim.get_u64(p.ce_events);
        r.dcqcn.observe(&core.sim)?;
        // A throttled QP's questions come while it waits: work in flight.
        active |= r.dcqcn.tally.held != core.stats.pacing_holds;
        core.stats.pacing_holds = r.dcqcn.tally.held;
        core.stats.cnps_received = r.dcqcn.tally.cnps;
        core.stats.rate_cuts = r.dcqcn.tally.cuts;
        let cnp = core
            .sim
            .get_bit(p.cnp_fire)
            .then(|| core.sim.get_u64(p.cnp_qpn) as Qpn);
        let trips = core.sim.get_u64(p.pause_trips).count_ones();
        core.stats.pause_watchdog_trips += u64::from(trips);
        // A pause counts time in the core: it stays clocked while one runs.
        let pausing = core.sim.get_u64(p.pfc_paused) != 0;
        let decided = core.sim.get_bit(p.out_valid);
        let queued = core.sim.get_bit(p.queue_fire);
        let desc = core
            .sim
            .get_bit(p.desc_fire)
            .then(|| core.sim.get_u64(p.desc_qpn) as Qpn);
        let rsp_fire = core.sim.get_bit(p.rsp_fire);
        let timer_done =
            core.sim.get_bit(p.done_valid) && core.sim.get_u64(p.done_kind) == EV_TIMER;
        let done_qpn = core.sim.get_u64(p.done_qpn) as Qpn;
        let status = core.sim.get_bit(p.status_valid).then(|| {
            (
                core.sim.get_u64(p.status_qpn) as Qpn,
                core.sim.get_u64(p.status_next_psn) as u32,
                core.sim.get_bit(p.status_error),
            )
        });
        active |= recv_taken_now || recv_result.is_some() || send_taken_now;
        active |= send_result.is_some() || decided || queued || desc.is_some();
        active |= rsp_fire || status.is_some() || core.sim.get_bit(p.done_valid);
        active |= cnp.is_some();
        active |= core.observe_frame(&ports)?;
        let (rx_moved, frames) = core.tick(&ports);
        active |= rx_moved;
        for f in frames {
            core.stats.frames_out += 1;
            r.bytes_out += f.bytes.len() as u64;
            let class = match rocenic_wire::RoceFrame::decode(&f.bytes) {
                Ok(d) if frame_kind(d.bth.opcode) == FrameKind::Response => &mut r.responses,
                Ok(d) if frame_kind(d.bth.opcode) == FrameKind::Cnp => &mut r.cnps,
                _ => {
                    r.request_bytes += f.bytes.len() as u64;
                    &mut r.requests
                }
            };
            class.core.push_back(f.bytes.clone());
            core.out.push_back(f.bytes);
        }
        core.stats.cycles += 1;

        // ---- the shadow takes the core's inputs in the core's order:
        // the responder half's first
        if recv_taken_now {
            r.recv_posts.took();
        }
        let shadow = &mut self.book.shadow;
        if let Some(qpn) = cnp {
            r.core.stats.cnps_sent += 1;
            match shadow.transmit_from(now, TxClass::Cnp, qpn) {
                Some(f) => r.cnps.expected.push_back(f),
                None => {
                    return Err(format!(
                        "the core sends a CNP for QP {qpn} the shadow does not owe"
                    ))
                }
            }
        }
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
            r.recv_posts.answered(accepted, shadow)?;
        }
        // ---- then the requester half's
        if send_taken_now {
            r.send_posts.took(send_post.expect("offered"), shadow)?;
        }
        if let Some(result) = send_result {
            r.send_posts.answered(result)?;
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
        let pending = !r.rx_frames.is_empty()
            || !r.rsp_frames.is_empty()
            || !r.recv_posts.is_empty()
            || !r.send_posts.is_empty()
            || timers
            || pausing;
        self.book.busy = r.core.settle(active, pending);
        Ok(())
    }

    fn receive_frame(&mut self, now: Time, frame: Vec<u8>) {
        self.run_to(now);
        let Some(r) = self.run.as_mut() else {
            return;
        };
        if r.core.rx.push_frame(&frame) {
            let response = is_core_response(&frame);
            if response {
                r.rsp_frames.push_back(frame.clone());
            }
            r.bytes_in += frame.len() as u64;
            r.rx_frames.push_back((frame, response));
            r.core.stats.frames_in += 1;
            self.book.busy = true;
        }
    }
}

nic_harness_surface! {
    RtlCoreNic;

    fn post_send(&mut self, qpn: Qpn, wr: SendWr) -> anyhow::Result<()> {
        RtlCoreNic::post_send(self, qpn, wr);
        Ok(())
    }

    fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> anyhow::Result<()> {
        Ok(RtlCoreNic::post_recv(self, qpn, wr)?)
    }
}
