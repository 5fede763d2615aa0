//! `RtlRequesterNic`: the Verilated requester half of a NIC core
//! (`requester_path`) as a fabric [`Endpoint`], scored by a shadow model
//! NIC (docs/transport-core.md, "The shadow of the requester half"). The
//! sibling of [`RtlNic`](super::nic::RtlNic), which drives the responder
//! half; both share the host DMA model, the stream drivers and the
//! configuration programming.
//!
//! The verbs go to the shadow before the run (PDs, CQs, QPs, MRs, host
//! memory); send WQEs go to the core's `post_*` port as they are posted.
//! When the fabric first calls, the core is programmed from the shadow
//! (MR table and MTT, QP context records, per-QP addresses) and then runs
//! one cycle per 4 ns of fabric time. The shadow is given the core's
//! inputs when the core takes them:
//!
//! - a send WQE when the core takes its post (`Nic::post_send`);
//! - a response frame when the core's event loop takes its header
//!   (`rsp_fire`); a frame the core's parser drops (not a response, or one
//!   the codec refuses) goes to the shadow as it arrives, where it is
//!   dropped alike;
//! - a QP's timer when a timer event of the QP is done (`Nic::fire_timers`:
//!   nothing else of the QP is taken in between);
//! - at each grant status of QP `q`, `Nic::transmit_from(.., Request, q)`
//!   until the shadow's send cursor reaches the status's `next_psn` (one
//!   call more on a local error, which the shadow then finds). Those
//!   frames are the ones the core must emit next (grants leave in order,
//!   so one queue for all QPs).
//!
//! Every core DMA write must hold the bytes the shadow's memory holds,
//! every send CQE must be the shadow's next of its QP, and host memories
//! must be equal at the end; the first difference is kept with its cycle
//! ([`RtlRequesterNic::mismatch`]). The core runs every cycle while a QP
//! has unacknowledged PSNs (its timers count time) and skips idle
//! stretches otherwise.

use super::harness::{
    confirm_writes, leftover_checks, match_send_cqes, nic_harness_surface, shadow_sends,
    timers_running, Bookkeeping, ClockedHarness, CoreRun, CoreSendCqe, FrameMatch, SendCqePorts,
    ShadowCqes, NS_PER_CYCLE,
};
use super::host_dma::{HostDma, HostDmaConfig};
use super::host_ports;
use super::mr_config::start_core;
use super::qp_config::context_record;
use super::RtlError;
use rocenic_fabric::{Endpoint, Time};
use rocenic_hdl::codes::{send_op_kind, wc_opcode, wqe_kind};
use rocenic_hdl::requester::completer_datapath::EV_TIMER;
use rocenic_hdl::requester::send_queue_tracker::DEFAULT_SLOT_BITS as SEND_SLOT_BITS;
use rocenic_model::completer::{self, WqeKind};
use rocenic_model::nic::{frame_kind, FrameKind, Nic, NicConfig};
use rocenic_model::requester::{message_psns, send_window};
use rocenic_model::verbs::{QpState, Qpn, RecvWr, SendOp, SendWr, Sge};
use rocenic_wire::{DecodeOptions, RoceFrame};
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{Block, Input, Output, Sim};

/// Cycles [`RtlRequesterNic::finish_check`] gives the core to finish.
const FINISH_CYCLES: u64 = 2_000_000;
/// QPNs the core's response path handles (`response_placement`).
const CORE_QPNS: u32 = 1 << rocenic_hdl::requester::response_placement::QPN_BITS;

/// A send WQE's operation as the core's post port takes it: `(kind
/// (a [`send_op_kind`] code), remote VA, R_Key, imm, compare, swap/add)`.
pub fn op_fields(op: &SendOp) -> (u64, u64, u32, u32, u64, u64) {
    let (remote_va, rkey, imm, compare, swap_add) = match *op {
        SendOp::Send => (0, 0, 0, 0, 0),
        SendOp::SendWithImm { imm } => (0, 0, imm, 0, 0),
        SendOp::SendWithInv { rkey } => (0, 0, rkey, 0, 0),
        SendOp::Write { remote_addr, rkey } => (remote_addr, rkey, 0, 0, 0),
        SendOp::WriteWithImm {
            remote_addr,
            rkey,
            imm,
        } => (remote_addr, rkey, imm, 0, 0),
        SendOp::Read { remote_addr, rkey } => (remote_addr, rkey, 0, 0, 0),
        SendOp::CompareSwap {
            remote_addr,
            rkey,
            compare,
            swap,
        } => (remote_addr, rkey, 0, compare, swap),
        SendOp::FetchAdd {
            remote_addr,
            rkey,
            add,
        } => (remote_addr, rkey, 0, 0, add),
    };
    (
        send_op_kind::encode(op),
        remote_va,
        rkey,
        imm,
        compare,
        swap_add,
    )
}

/// The send-WQE post port (`post_*`): a WQE offered with `post_valid` is
/// taken in a cycle `post_ready` is high; its ring's answer comes later on
/// `post_result_*`. Shared by every harness with a requester half.
pub struct SendPostPorts<B: Block> {
    fields: [Input<B>; 16],
    pub valid: Input<B>,
    pub ready: Output<B>,
    pub result_valid: Output<B>,
    pub result_qpn: Output<B>,
    pub result_accepted: Output<B>,
    pub result_slot: Output<B>,
}

/// The post port's fields, in [`SendPostPorts::drive`]'s order.
const POST_FIELDS: [&str; 16] = [
    "post_qpn",
    "post_kind",
    "post_opcode",
    "post_npsn",
    "post_len",
    "post_signaled",
    "post_status",
    "post_lkey",
    "post_va",
    "post_op",
    "post_remote_va",
    "post_rkey",
    "post_imm",
    "post_compare",
    "post_swap_add",
    "post_solicited",
];

impl<B: Block> SendPostPorts<B> {
    pub fn named() -> Result<Self, RtlError> {
        let mut fields = Vec::new();
        for f in POST_FIELDS {
            fields.push(B::input(f)?);
        }
        Ok(SendPostPorts {
            fields: fields
                .try_into()
                .map_err(|_| RtlError::Mismatch("ports".into()))?,
            valid: B::input("post_valid")?,
            ready: B::output("post_ready")?,
            result_valid: B::output("post_result_valid")?,
            result_qpn: B::output("post_result_qpn")?,
            result_accepted: B::output("post_result_accepted")?,
            result_slot: B::output("post_result_slot")?,
        })
    }

    /// Drives the post port with `wr` of `qpn` (`mtu` the QP's path MTU);
    /// refuses what the port has no field for (inline data, the fence
    /// indicator) rather than posting a different WQE.
    pub fn drive(&self, sim: &mut Sim<B>, qpn: Qpn, wr: &SendWr, mtu: u32) -> Result<(), String> {
        if wr.inline_data.is_some() || wr.fence {
            return Err(format!(
                "QP {qpn}: WQE {} is inline or fenced, which the core's post port does not carry",
                wr.wr_id
            ));
        }
        let len: u64 = wr.sgl.iter().map(|s| u64::from(s.length)).sum();
        let kind = WqeKind::of(&wr.op);
        let sge = wr.sgl.first().copied().unwrap_or(Sge {
            addr: 0,
            length: 0,
            lkey: 0,
        });
        let (op, remote_va, rkey, imm, compare, swap_add) = op_fields(&wr.op);
        let values = [
            u64::from(qpn),
            wqe_kind::encode(kind),
            wc_opcode::encode(completer::wc_opcode(&wr.op)),
            u64::from(message_psns(&wr.op, len, mtu)),
            len,
            u64::from(wr.signaled),
            0,
            u64::from(sge.lkey),
            sge.addr,
            op,
            remote_va,
            u64::from(rkey),
            u64::from(imm),
            compare,
            swap_add,
            u64::from(wr.solicited),
        ];
        for (port, v) in self.fields.iter().zip(values) {
            sim.set_u64(*port, v);
        }
        Ok(())
    }

    /// After `eval`: `(qpn, accepted, slot)` in the cycle a post's answer
    /// comes.
    pub fn result(&self, sim: &Sim<B>) -> Option<(Qpn, bool, u64)> {
        sim.get_bit(self.result_valid).then(|| {
            (
                sim.get_u64(self.result_qpn) as Qpn,
                sim.get_bit(self.result_accepted),
                sim.get_u64(self.result_slot),
            )
        })
    }
}

/// Send WQEs for a core's post port, oldest first, each with whether the
/// shadow has it already (posted to it before the run); a WQE goes to
/// the shadow when the core takes it. Shared by every harness with a
/// requester half.
pub(crate) struct SendPosts {
    queue: VecDeque<(Qpn, SendWr, bool)>,
    /// The front one has been taken by the core (and given to the shadow)
    /// and waits for its ring's answer.
    taken: bool,
    /// Each QP's ring slots: the wr_id posted into each.
    slots: BTreeMap<(Qpn, u64), u64>,
}

impl SendPosts {
    /// The posts a core starts with: the WQEs posted to the shadow before
    /// the run (a scenario's setup posts through the verbs) first, in
    /// posting order per QP, then `pending` (posted to the harness before
    /// the run).
    pub fn starting(shadow: &Nic, pending: Vec<(Qpn, SendWr)>) -> SendPosts {
        let mut queue: VecDeque<(Qpn, SendWr, bool)> = VecDeque::new();
        for qpn in shadow.qpns() {
            for wr in shadow.send_queue(qpn).unwrap_or_default() {
                queue.push_back((qpn, wr, true));
            }
        }
        queue.extend(pending.into_iter().map(|(q, wr)| (q, wr, false)));
        SendPosts {
            queue,
            taken: false,
            slots: BTreeMap::new(),
        }
    }

    /// A WQE posted while the core runs.
    pub fn push(&mut self, qpn: Qpn, wr: SendWr) {
        self.queue.push_back((qpn, wr, false));
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// A post is with the core, its ring's answer not in yet.
    pub fn taken(&self) -> bool {
        self.taken
    }

    /// The wr_id posted into each QP's ring slot.
    pub fn slots(&self) -> &BTreeMap<(Qpn, u64), u64> {
        &self.slots
    }

    /// Before `eval`: offers the oldest WQE not taken yet on `ports` (at
    /// its QP's path MTU in the shadow), or nothing; the WQE offered, or
    /// why the port cannot carry it.
    pub fn offer<B: Block>(
        &self,
        ports: &SendPostPorts<B>,
        sim: &mut Sim<B>,
        shadow: &Nic,
    ) -> Result<Option<(Qpn, SendWr, bool)>, String> {
        let post = self.queue.front().filter(|_| !self.taken).cloned();
        if let Some((q, wr, _)) = &post {
            let mtu = shadow.qp_context(*q).map_or(4096, |v| v.mtu.max(256));
            ports.drive(sim, *q, wr, mtu)?;
        }
        sim.set_bit(ports.valid, post.is_some());
        Ok(post)
    }

    /// The core took the `offered` WQE: the shadow takes it too, unless it
    /// has it.
    pub fn took(&mut self, offered: (Qpn, SendWr, bool), shadow: &mut Nic) -> Result<(), String> {
        let (qpn, wr, in_shadow) = offered;
        self.taken = true;
        if !in_shadow {
            shadow
                .post_send(qpn, wr)
                .map_err(|e| format!("QP {qpn}: the shadow refuses a WQE the core took: {e}"))?;
        }
        Ok(())
    }

    /// The core's ring answered the post it took (`(qpn, accepted, slot)`,
    /// [`SendPostPorts::result`]): it must have accepted it, into `slot`.
    pub fn answered(&mut self, (qpn, accepted, slot): (Qpn, bool, u64)) -> Result<(), String> {
        let (q, wr, _) = self
            .queue
            .pop_front()
            .filter(|_| std::mem::take(&mut self.taken))
            .ok_or("a post result with no post behind it")?;
        if q != qpn || !accepted {
            return Err(format!(
                "QP {q}: the core refused (or misplaced) WQE {} the shadow took",
                wr.wr_id
            ));
        }
        self.slots.insert((qpn, slot), wr.wr_id);
        Ok(())
    }
}

/// The named ports of the core `B` beyond the shared helpers'.
struct Ports<B: Block> {
    cfg_window: Input<B>,
    cfg_ack_req_interval: Input<B>,
    post: SendPostPorts<B>,
    err_valid: Input<B>,
    err_qpn: Input<B>,
    cqe: SendCqePorts<B>,
    rsp_fire: Output<B>,
    done_valid: Output<B>,
    done_qpn: Output<B>,
    done_kind: Output<B>,
    status_valid: Output<B>,
    status_qpn: Output<B>,
    status_next_psn: Output<B>,
    status_error: Output<B>,
    payload_last_errors: Output<B>,
}

impl<B: Block> Ports<B> {
    fn named() -> Result<Self, RtlError> {
        Ok(Ports {
            cfg_window: B::input("cfg_window")?,
            cfg_ack_req_interval: B::input("cfg_ack_req_interval")?,
            post: SendPostPorts::named()?,
            err_valid: B::input("err_valid")?,
            err_qpn: B::input("err_qpn")?,
            cqe: SendCqePorts::named("cqe")?,
            rsp_fire: B::output("rsp_fire")?,
            done_valid: B::output("done_valid")?,
            done_qpn: B::output("done_qpn")?,
            done_kind: B::output("done_kind")?,
            status_valid: B::output("status_valid")?,
            status_qpn: B::output("status_qpn")?,
            status_next_psn: B::output("status_next_psn")?,
            status_error: B::output("status_error")?,
            payload_last_errors: B::output("payload_last_errors")?,
        })
    }
}

/// The core once programmed, and the scoreboard's queues.
struct Running<B: Block> {
    core: CoreRun<B>,
    p: Ports<B>,
    /// Frames given to the core whose header the core has not taken yet,
    /// and whether the core's parser passes each on as a header.
    rx_frames: VecDeque<Vec<u8>>,
    /// Core frames not yet predicted, and the shadow's frames not yet
    /// emitted (one of the two is empty).
    frames: FrameMatch,
    shadow_cqes: ShadowCqes,
    core_cqes: Vec<CoreSendCqe>,
    posts: SendPosts,
}

/// The requester half of a core on the fabric with its shadow model (see
/// the module doc). `B` is the Verilated core
/// (`verilator_sys::RequesterPath`).
pub struct RtlRequesterNic<B: Block> {
    book: Bookkeeping,
    dma: HostDmaConfig,
    /// Posts before the run, for the core once programmed.
    pending_posts: Vec<(Qpn, SendWr)>,
    run: Option<Running<B>>,
    /// Posts taken and frames out, kept once `log_port_frames` asked.
    port_log: Option<RequesterPortLog>,
}

/// The core's post and frame ports with their core cycles, for latency
/// figures ([`RtlRequesterNic::log_port_frames`]); a post or beat moves at
/// the clock edge that ends the cycle it is counted in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequesterPortLog {
    /// Send WQEs the core took on its post port: `(cycle, qpn, wr_id)`.
    pub posts: Vec<(u64, Qpn, u64)>,
    /// Frames the core emitted, in order, each with the cycle its first
    /// beat left.
    pub tx: Vec<(u64, Vec<u8>)>,
}

/// The core's parser passes `frame` on as a response header.
pub(crate) fn is_core_response(frame: &[u8]) -> bool {
    RoceFrame::decode_with(frame, DecodeOptions::NIC)
        .is_ok_and(|f| frame_kind(f.bth.opcode) == FrameKind::Response && f.bth.dest_qp < CORE_QPNS)
}

impl<B: Block> RtlRequesterNic<B> {
    /// An RTL requester with `config`, whose device limits become the
    /// core's: as many WQEs per QP as its rings hold, one SGE per WQE.
    pub fn new(mut config: NicConfig, dma: HostDmaConfig) -> RtlRequesterNic<B> {
        config.max_qp_wr = 1 << SEND_SLOT_BITS;
        config.max_sge = 1;
        RtlRequesterNic {
            book: Bookkeeping::new(Nic::new(config)),
            dma,
            pending_posts: Vec::new(),
            run: None,
            port_log: None,
        }
    }

    /// Keeps every post taken and frame out from now on with its port
    /// cycle (see [`RequesterPortLog`]).
    pub fn log_port_frames(&mut self) {
        self.port_log.get_or_insert_with(Default::default);
    }

    /// What was logged since [`RtlRequesterNic::log_port_frames`].
    pub fn port_log(&self) -> Option<&RequesterPortLog> {
        self.port_log.as_ref()
    }

    /// Posts a send WQE: it goes to the core's post port (in posting
    /// order), and to the shadow when the core takes it.
    pub fn post_send(&mut self, qpn: Qpn, wr: SendWr) {
        match self.run.as_mut() {
            Some(r) => r.posts.push(qpn, wr),
            None => self.pending_posts.push((qpn, wr)),
        }
        self.book.busy = true;
    }

    /// Checks what only the end of a run can tell (see `RtlNic`'s).
    pub fn finish_check(&mut self) -> Result<(), String> {
        self.drain(FINISH_CYCLES)?;
        let Some(r) = &self.run else {
            return Ok(());
        };
        let cycle = r.core.sim.cycle();
        let leftover = r
            .frames
            .leftover("request")
            .or_else(|| {
                r.core_cqes
                    .first()
                    .map(|c| format!("CQE {c:?} the shadow never made"))
            })
            .or_else(|| {
                leftover_checks(
                    &r.core.writes,
                    &r.shadow_cqes,
                    r.core.host.memory(),
                    &self.book.shadow,
                )
            });
        match leftover {
            Some(what) => Err(format!("cycle {cycle}: {what}")),
            None => Ok(()),
        }
    }

    fn collect_shadow_cqes(&mut self) {
        let r = self.run.as_mut().expect("started");
        r.shadow_cqes.collect(&mut self.book.shadow);
    }

    /// Matches frames, writes and CQEs the shadow has caught up with.
    fn confirm(&mut self) -> Result<(), String> {
        let r = self.run.as_mut().expect("started");
        r.frames.confirm("request")?;
        confirm_writes(self.book.shadow.memory(), &mut r.core.writes);
        // A CQE's slot is mapped once its post's result is in (a WQE
        // posted in ERR completes before its result).
        if r.posts.taken() {
            return Ok(());
        }
        match_send_cqes(
            &mut r.core_cqes,
            r.posts.slots(),
            &mut r.shadow_cqes,
            &mut self.book,
        )
    }
}

impl<B: Block> ClockedHarness for RtlRequesterNic<B> {
    const STARTS_AT_ZERO: bool = true;

    fn start(&mut self) -> Result<(), RtlError> {
        let mut sim = start_core::<B>(self.book.shadow.mr_table())?;
        let p = Ports::<B>::named()?;
        let config = self.book.shadow.config().clone();
        sim.set_u64(
            p.cfg_window,
            send_window(config.max_outstanding_psns).into(),
        );
        sim.set_u64(p.cfg_ack_req_interval, config.ack_req_interval.into());
        sim.set_bit(p.err_valid, false);
        sim.set_u64(p.err_qpn, 0);
        for qpn in self.book.shadow.qpns() {
            let Some(view) = self.book.shadow.qp_context(qpn) else {
                continue;
            };
            if view.state == QpState::Reset {
                continue;
            }
            // Nothing is sent before the run: the WQEs the shadow holds
            // are posted to the core from the send cursor on.
            let mut record = context_record(&view);
            record.sq_next_psn = view.sq_send_psn;
            host_ports::write_context(&mut sim, qpn, &record)?;
            if let Some(attrs) = self.book.shadow.qp_tx_attrs(qpn) {
                host_ports::write_address(
                    &mut sim,
                    qpn,
                    &attrs,
                    config.mac,
                    config.dscp,
                    config.ecn,
                )?;
            }
        }
        let posts = SendPosts::starting(&self.book.shadow, std::mem::take(&mut self.pending_posts));
        let host = HostDma::new(self.dma, self.book.shadow.memory().clone());
        self.run = Some(Running {
            core: CoreRun::new(sim, host)?,
            p,
            rx_frames: VecDeque::new(),
            frames: FrameMatch::default(),
            shadow_cqes: ShadowCqes::default(),
            core_cqes: Vec::new(),
            posts,
        });
        // WQEs the shadow holds go in first.
        self.book.busy = true;
        Ok(())
    }

    fn cycle(&mut self) -> Result<(), String> {
        let r = self.run.as_mut().expect("started");
        let p = &r.p;
        let core = &mut r.core;
        let now = core.fabric_cycle() * NS_PER_CYCLE;
        core.drive_rx(false);
        let post = r.posts.offer(&p.post, &mut core.sim, &self.book.shadow)?;
        let mut ports = core.drive_mac_and_dma();
        core.sim.set_bit(p.cqe.ready, true);
        core.sim.eval();
        let (mut active, _) = core.observe_dma(&mut ports)?;
        let sim = &core.sim;
        if sim.get_u64(p.payload_last_errors) != 0 {
            return Err("the TX builder's payload ended off its frame".into());
        }
        if let Some(c) = p.cqe.take(sim)? {
            r.core_cqes.push(c);
            core.stats.cqes += 1;
            active = true;
        }
        let post_taken_now = post.is_some() && sim.get_bit(p.post.ready);
        let post_result = p.post.result(sim);
        let rsp_fire = sim.get_bit(p.rsp_fire);
        let timer_done = sim.get_bit(p.done_valid) && sim.get_u64(p.done_kind) == EV_TIMER;
        let done_qpn = sim.get_u64(p.done_qpn) as Qpn;
        let status = sim.get_bit(p.status_valid).then(|| {
            (
                sim.get_u64(p.status_qpn) as Qpn,
                sim.get_u64(p.status_next_psn) as u32,
                sim.get_bit(p.status_error),
            )
        });
        active |= post_taken_now || post_result.is_some() || rsp_fire || status.is_some();
        active |= sim.get_bit(p.done_valid);
        active |= core.observe_frame(&ports)?;
        let post_cycle = core.sim.cycle();
        let (rx_moved, frames) = core.tick(&ports);
        active |= rx_moved;
        for f in frames {
            core.stats.frames_out += 1;
            if let Some(log) = self.port_log.as_mut() {
                log.tx.push((f.first_cycle, f.bytes.clone()));
            }
            r.frames.core.push_back(f.bytes.clone());
            core.out.push_back(f.bytes);
        }
        core.stats.cycles += 1;

        // ---- the shadow takes the core's inputs in the core's order
        if post_taken_now {
            let offered = post.expect("offered");
            if let Some(log) = self.port_log.as_mut() {
                log.posts.push((post_cycle, offered.0, offered.1.wr_id));
            }
            r.posts.took(offered, &mut self.book.shadow)?;
        }
        if let Some(result) = post_result {
            r.posts.answered(result)?;
        }
        if rsp_fire {
            let frame = r
                .rx_frames
                .pop_front()
                .ok_or("a response header with no frame behind it")?;
            self.book.shadow.receive(now, frame);
        }
        if timer_done {
            self.book.shadow.fire_timers(now, done_qpn);
        }
        if let Some((qpn, next_psn, error)) = status {
            let frames = shadow_sends(&mut self.book.shadow, now, qpn, next_psn, error)?;
            let r = self.run.as_mut().expect("started");
            r.frames.expected.extend(frames);
        }
        self.collect_shadow_cqes();
        self.confirm()?;
        let timers = timers_running(&self.book.shadow);
        let r = self.run.as_mut().expect("started");
        let pending = !r.rx_frames.is_empty() || !r.posts.is_empty() || timers;
        self.book.busy = r.core.settle(active, pending);
        Ok(())
    }

    fn receive_frame(&mut self, now: Time, frame: Vec<u8>) {
        self.run_to(now);
        let Some(r) = self.run.as_mut() else {
            return;
        };
        r.core.stats.frames_in += 1;
        if !is_core_response(&frame) {
            // The core's parser drops it; the shadow drops it too.
            self.book.shadow.receive(now, frame);
            return;
        }
        if r.core.rx.push_frame(&frame) {
            r.rx_frames.push_back(frame);
            self.book.busy = true;
        }
    }
}

nic_harness_surface! {
    RtlRequesterNic;

    fn post_send(&mut self, qpn: Qpn, wr: SendWr) -> anyhow::Result<()> {
        RtlRequesterNic::post_send(self, qpn, wr);
        Ok(())
    }

    fn post_recv(&mut self, _: Qpn, _: RecvWr) -> anyhow::Result<()> {
        anyhow::bail!("post_recv on the RTL requester half: it has no receive queue")
    }
}
