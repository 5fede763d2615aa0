//! `RtlNic`: a Verilated NIC core as a fabric [`Endpoint`], scored by a
//! shadow model NIC (docs/transport-core.md, "Scoreboard: a shadow model
//! per RTL NIC").
//!
//! The verbs (PD, CQ, QP, MR, receive WQEs) go to the shadow, a model
//! [`Nic`], which checks them and keeps the host's view; when the fabric
//! first calls the endpoint the RTL is programmed from the shadow's state
//! (QP context records, per-QP addresses, response queues, the MR table and
//! MTT, receive WQEs) and host memory is copied into the [`HostDma`] that
//! serves the RTL's DMA ports. From then on the RTL runs one clock cycle per
//! 4 ns of fabric time (250 MHz), and the shadow is given exactly the RTL's
//! inputs at the RTL's times:
//!
//! - a received frame when the RTL's response queue starts to hold its
//!   effects: the frame's first queue command (`queue_fire`), or its
//!   outcome if it has none (`responder_path`'s "commit point"; outcomes
//!   are taken as they come);
//! - when the RTL's response transmitter takes a descriptor of QP `q`, the
//!   shadow is asked for its next response frame of `q`, and the frame the
//!   RTL then emits must equal it byte for byte;
//! - every DMA write beat of the RTL must hold the bytes the shadow's host
//!   memory holds at that address once the shadow has received the frame
//!   behind it, and every receive CQE must be the shadow's next CQE of that
//!   QP; at the end host memories must be equal.
//!
//! The first difference is kept ([`RtlNic::mismatch`]) with its cycle and
//! the run should stop there. While the RTL has work in flight the endpoint
//! asks to run every cycle; when it is quiet it sleeps and skips the idle
//! cycles (nothing in the responder path counts time).
//!
//! This first `RtlNic` drives the responder half (`responder_path`): it
//! answers SEND, WRITE, READ and atomic requests and sends none of its
//! own; the core's DMA ports are `dma` (reads) and `dmaw` (writes).

use super::harness::{
    confirm_writes, describe, leftover_checks, match_receive_cqes, nic_harness_surface,
    Bookkeeping, ClockedHarness, CoreRun, ReceiveCqePorts, ShadowCqes, NS_PER_CYCLE,
};
use super::host_dma::{HostDma, HostDmaConfig};
use super::host_ports::{self, RecvPostPorts};
use super::mr_config::start_core;
use super::qp_config::context_record;
use super::RtlError;
use rocenic_fabric::{Endpoint, Time};
use rocenic_hdl::codes::mtu;
use rocenic_hdl::requester::send_queue_tracker::DEFAULT_SLOT_BITS as SEND_SLOT_BITS;
use rocenic_hdl::responder::receive_queue::DEFAULT_SLOT_BITS as RECV_SLOT_BITS;
use rocenic_hdl::responder::response_queue::OP_CONFIGURE;
use rocenic_model::nic::{Nic, NicConfig, TxClass};
use rocenic_model::verbs::{Cqe, QpState, Qpn, RecvWr, SendWr, VerbsError};
use std::collections::VecDeque;
use verilator_sys::{Block, Input, Output, Sim};

/// Cycles [`RtlNic::finish_check`] gives the core to finish its work.
const FINISH_CYCLES: u64 = 1_000_000;

/// Frames at the core's MAC-side ports with their core cycles, for
/// latency figures ([`RtlNic::log_port_frames`]). A beat moves at the
/// clock edge that ends the cycle it is counted in, on both ports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortLog {
    /// Frames the core took, in order, each with the cycle its last beat
    /// was accepted (frames not fully taken yet are left out).
    pub rx: Vec<(u64, Vec<u8>)>,
    /// Frames the core emitted, in order, each with the cycle its first
    /// beat left.
    pub tx: Vec<(u64, Vec<u8>)>,
    /// DMA write beats the host port accepted, in order, each with its
    /// cycle (counted as `tx`'s) and its byte count.
    pub dma_writes: Vec<(u64, usize)>,
}

/// The named ports of the core `B`.
struct Ports<B: Block> {
    out_valid: Output<B>,
    out_ready: Input<B>,
    queue_fire: Output<B>,
    desc_fire: Output<B>,
    desc_qpn: Output<B>,
    cqe: ReceiveCqePorts<B>,
    rq_post: RecvPostPorts<B>,
    queue_full_waits: Output<B>,
}

impl<B: Block> Ports<B> {
    fn named() -> Result<Self, RtlError> {
        Ok(Ports {
            out_valid: B::output("out_valid")?,
            out_ready: B::input("out_ready")?,
            queue_fire: B::output("queue_fire")?,
            desc_fire: B::output("desc_fire")?,
            desc_qpn: B::output("desc_qpn")?,
            cqe: ReceiveCqePorts::named("cqe")?,
            rq_post: RecvPostPorts::named()?,
            queue_full_waits: B::output("queue_full_waits")?,
        })
    }
}

/// The core once programmed, and the scoreboard's queues.
struct Running<B: Block> {
    core: CoreRun<B>,
    p: Ports<B>,
    /// Frames given to the core whose outcome has not come yet.
    rx_frames: VecDeque<Vec<u8>>,
    /// The oldest of them is already with the shadow (its first queue
    /// command was accepted before its outcome).
    front_fed: bool,
    /// The shadow's frames for the descriptors the core took, in order.
    expected: VecDeque<Vec<u8>>,
    /// The shadow's CQEs per QP not yet matched, and the core's waiting
    /// for the shadow's.
    shadow_cqes: ShadowCqes,
    core_cqes: Vec<(u64, Cqe)>,
    /// Receive WQEs posted while the core runs.
    posts: RecvPosts,
}

/// Receive WQEs posted while a core runs, oldest first, on their way
/// through its `rq_post` port (see [`RtlNic::post_recv`]); shared by every
/// harness with a responder half.
#[derive(Default)]
pub(crate) struct RecvPosts {
    queue: VecDeque<(Qpn, RecvWr)>,
    /// The front one is with the core, waiting for its ring's answer.
    taken: bool,
}

impl RecvPosts {
    /// `post_recv` while running: the verb's errors are the shadow's,
    /// counting posts still on their way; a QP in ERR is refused (the
    /// core's ring does not flush posts yet).
    pub fn post(&mut self, shadow: &Nic, qpn: Qpn, wr: RecvWr) -> Result<(), VerbsError> {
        let state = shadow.qp_state(qpn)?;
        if state == QpState::Err {
            return Err(VerbsError::WrongQpState { qpn, state });
        }
        let queued = self.queue.iter().filter(|(q, _)| *q == qpn).count();
        shadow.check_post_recv(qpn, &wr, queued)?;
        self.queue.push_back((qpn, wr));
        Ok(())
    }

    /// Posts wait: no new frame may enter the core.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The post to offer the core this cycle: the oldest, once no frame is
    /// inside the core (`core_empty`) and none is with it already.
    pub fn offer(&self, core_empty: bool) -> Option<(Qpn, &RecvWr)> {
        self.queue
            .front()
            .filter(|_| !self.taken && core_empty)
            .map(|(q, wr)| (*q, wr))
    }

    /// The core took the offered post.
    pub fn took(&mut self) {
        self.taken = true;
    }

    /// The core's ring answered the post it took: the shadow takes it
    /// too, which the core must have accepted.
    pub fn answered(&mut self, accepted: bool, shadow: &mut Nic) -> Result<(), String> {
        let (qpn, wr) = self
            .queue
            .pop_front()
            .filter(|_| std::mem::take(&mut self.taken))
            .ok_or("a receive WQE result with no post behind it")?;
        if !accepted {
            return Err(format!(
                "the core refused receive WQE {} of QP {qpn} the shadow takes",
                wr.wr_id
            ));
        }
        shadow
            .post_recv(qpn, wr)
            .map_err(|e| format!("the shadow refused a receive WQE of QP {qpn}: {e}"))
    }
}

/// A Verilated core on the fabric with its shadow model (see the module
/// doc). `B` is the Verilated core (`verilator_sys::ResponderPath`).
pub struct RtlNic<B: Block> {
    book: Bookkeeping,
    dma: HostDmaConfig,
    run: Option<Running<B>>,
    /// Frames in and out, kept once `log_port_frames` asked for them; the
    /// cycles of the frames in are filled in by `port_log`.
    port_log: Option<PortLog>,
}

impl<B: Block> RtlNic<B> {
    /// An RTL NIC with `config`, whose device limits become the core's:
    /// as many work requests per QP as its rings hold, one SGE per WQE,
    /// as many READ / atomic requests outstanding at the responder as its
    /// resources hold (16 per QP; the response queue makes a push to a
    /// full QP queue wait, so its 32 items do not limit this).
    pub fn new(mut config: NicConfig, dma: HostDmaConfig) -> RtlNic<B> {
        config.max_qp_wr = 1 << RECV_SLOT_BITS.min(SEND_SLOT_BITS);
        config.max_sge = 1;
        config.max_qp_rd_atom = 16;
        RtlNic {
            book: Bookkeeping::new(Nic::new(config)),
            dma,
            run: None,
            port_log: None,
        }
    }

    /// Keeps every frame in and out from now on with its port cycle (see
    /// [`PortLog`]); call before the run.
    pub fn log_port_frames(&mut self) {
        self.port_log.get_or_insert_with(Default::default);
    }

    /// The frames logged since [`RtlNic::log_port_frames`].
    pub fn port_log(&self) -> Option<PortLog> {
        let log = self.port_log.as_ref()?;
        // The source counts a beat after the tick that moved it.
        let last = self
            .run
            .as_ref()
            .map_or(&[][..], |r| r.core.rx.last_moved());
        Some(PortLog {
            rx: last
                .iter()
                .zip(&log.rx)
                .map(|(&c, (_, f))| (c - 1, f.clone()))
                .collect(),
            tx: log.tx.clone(),
            dma_writes: log.dma_writes.clone(),
        })
    }

    /// Posts a receive WQE: before the run to the shadow (the core gets
    /// it when programmed); while the core runs, through its `rq_post`
    /// port. The shadow takes it in the cycle the core's ring answers, and
    /// to keep the two in one order no new frame enters the core from the
    /// moment a post waits until it is in (a frame already inside
    /// finishes first: its receive WQE lookup must not race the post).
    /// The verb's errors are the shadow's, counting posts still on their
    /// way; a QP in ERR is not supported while running (the core's ring
    /// does not flush posts made in ERR).
    pub fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> Result<(), VerbsError> {
        let Some(r) = self.run.as_mut() else {
            return self.book.shadow.post_recv(qpn, wr);
        };
        r.posts.post(&self.book.shadow, qpn, wr)?;
        self.book.busy = true;
        Ok(())
    }

    /// Checks what only the end of a run can tell: every frame emitted and
    /// matched, every write and CQE confirmed, host memories equal.
    /// First the core finishes what it has in flight (at most
    /// a million cycles; the frames it emits then are scored and go
    /// nowhere).
    pub fn finish_check(&mut self) -> Result<(), String> {
        self.drain(FINISH_CYCLES)?;
        let Some(r) = &self.run else {
            return Ok(());
        };
        let cycle = r.core.sim.cycle();
        let fail = |what: String| Err(format!("cycle {cycle}: {what}"));
        if let Some(first) = r.expected.front() {
            return fail(format!(
                "{} predicted frames never emitted, the first {}",
                r.expected.len(),
                describe(first)
            ));
        }
        if let Some((_, c)) = r.core_cqes.first() {
            return fail(format!("CQE {c:?} the shadow never made"));
        }
        match leftover_checks(
            &r.core.writes,
            &r.shadow_cqes,
            r.core.host.memory(),
            &self.book.shadow,
        ) {
            Some(what) => fail(what),
            None => Ok(()),
        }
    }

    fn program_qp(&self, sim: &mut Sim<B>, qpn: Qpn) -> Result<(), RtlError> {
        let Some(view) = self.book.shadow.qp_context(qpn) else {
            return Ok(());
        };
        if view.state == QpState::Reset {
            return Ok(());
        }
        host_ports::write_context(sim, qpn, &context_record(&view))?;
        let Some(attrs) = self.book.shadow.qp_tx_attrs(qpn) else {
            return Ok(());
        };
        let config = self.book.shadow.config();
        host_ports::write_address(sim, qpn, &attrs, config.mac, config.dscp, config.ecn)?;
        if matches!(view.state, QpState::Rtr | QpState::Rts) {
            host_ports::queue_command(
                sim,
                OP_CONFIGURE,
                qpn,
                u64::from(mtu::shift_code(attrs.mtu).expect("an RTL path MTU")),
            )?;
        }
        Ok(())
    }

    /// Moves the shadow's new CQEs into the per-QP expectations.
    fn collect_shadow_cqes(&mut self) {
        let r = self.run.as_mut().expect("started");
        r.shadow_cqes.collect(&mut self.book.shadow);
    }

    /// Confirms the core's writes and CQEs the shadow has caught up with.
    fn confirm(&mut self) {
        let r = self.run.as_mut().expect("started");
        confirm_writes(self.book.shadow.memory(), &mut r.core.writes);
        if let Err(m) = match_receive_cqes(&mut r.core_cqes, &mut r.shadow_cqes, &mut self.book) {
            self.fail(m);
        }
    }
}

impl<B: Block> ClockedHarness for RtlNic<B> {
    const STARTS_AT_ZERO: bool = false;

    /// Programs the core from the shadow's state (see the module doc).
    fn start(&mut self) -> Result<(), RtlError> {
        let mut sim = start_core::<B>(self.book.shadow.mr_table())?;
        let p = Ports::<B>::named()?;
        for qpn in self.book.shadow.qpns() {
            self.program_qp(&mut sim, qpn)?;
        }
        for qpn in self.book.shadow.qpns() {
            for wr in self.book.shadow.recv_queue(qpn).unwrap_or_default() {
                if !host_ports::post_recv(&mut sim, qpn, &wr)? {
                    return Err(RtlError::Mismatch(format!(
                        "the core refused receive WQE {} of QP {qpn} the shadow took",
                        wr.wr_id
                    )));
                }
            }
        }
        let host = HostDma::new(self.dma, self.book.shadow.memory().clone());
        self.run = Some(Running {
            core: CoreRun::new(sim, host)?,
            p,
            rx_frames: VecDeque::new(),
            front_fed: false,
            expected: VecDeque::new(),
            shadow_cqes: ShadowCqes::default(),
            core_cqes: Vec::new(),
            posts: RecvPosts::default(),
        });
        Ok(())
    }

    /// One clock cycle of the core with its scoreboard.
    fn cycle(&mut self) -> Result<(), String> {
        let r = self.run.as_mut().expect("started");
        let p = &r.p;
        let core = &mut r.core;
        let now = core.fabric_cycle() * NS_PER_CYCLE;
        core.drive_rx(!r.posts.is_empty());
        // A post goes in once no frame is inside the core (see `post_recv`).
        let core_empty =
            core.rx.current().is_none() && r.rx_frames.len() == core.rx.frames_not_started();
        let post = r.posts.offer(core_empty);
        p.rq_post
            .drive(&mut core.sim, post)
            .map_err(|e| e.to_string())?;
        let mut ports = core.drive_mac_and_dma();
        core.sim.set_bit(p.out_ready, true);
        core.sim.set_bit(p.cqe.ready, true);
        core.sim.eval();
        let (mut active, written) = core.observe_dma(&mut ports)?;
        if let (Some(len), Some(log)) = (written, self.port_log.as_mut()) {
            log.dma_writes.push((core.sim.cycle(), len));
        }
        if let Some(cqe) = p.cqe.take(&core.sim)? {
            r.core_cqes.push((core.sim.cycle(), cqe));
            core.stats.cqes += 1;
            active = true;
        }
        if post.is_some() && p.rq_post.ready(&core.sim) {
            r.posts.took();
            active = true;
        }
        let post_result = p.rq_post.result(&core.sim);
        core.stats.queue_full_waits = core.sim.get_u64(p.queue_full_waits);
        let decided = core.sim.get_bit(p.out_valid);
        let queued = core.sim.get_bit(p.queue_fire);
        active |= decided | queued;
        if core.sim.get_bit(p.desc_fire) {
            let qpn = core.sim.get_u64(p.desc_qpn) as Qpn;
            match self.book.shadow.transmit_from(now, TxClass::Response, qpn) {
                Some(f) => r.expected.push_back(f),
                None => {
                    return Err(format!(
                        "the core sends a response of QP {qpn} the shadow does not owe"
                    ))
                }
            }
            active = true;
        }
        active |= core.observe_frame(&ports)?;
        let (rx_moved, frames) = core.tick(&ports);
        active |= rx_moved;
        for f in frames {
            let want = r.expected.pop_front();
            if want.as_deref() != Some(&f.bytes[..]) {
                return Err(format!(
                    "frame {} of the core ({}) differs from the shadow's ({})",
                    core.stats.frames_out,
                    describe(&f.bytes),
                    want.as_deref().map_or("none".into(), describe)
                ));
            }
            core.stats.frames_out += 1;
            if let Some(log) = self.port_log.as_mut() {
                log.tx.push((f.first_cycle, f.bytes.clone()));
            }
            core.out.push_back(f.bytes);
        }
        core.stats.cycles += 1;
        // The shadow gets a frame when the core's response queue starts to
        // hold its effects: its first queue command, or its outcome
        // (`responder_path`'s doc, "The commit point").
        if decided {
            let frame = r
                .rx_frames
                .pop_front()
                .ok_or("an outcome with no frame behind it")?;
            if !std::mem::take(&mut r.front_fed) {
                self.book.shadow.receive(now, frame);
            }
        }
        if queued && !r.front_fed {
            let frame = r
                .rx_frames
                .front()
                .ok_or("a queue command with no frame behind it")?
                .clone();
            r.front_fed = true;
            self.book.shadow.receive(now, frame);
        }
        if let Some(accepted) = post_result {
            r.posts.answered(accepted, &mut self.book.shadow)?;
        }
        if decided || queued {
            self.collect_shadow_cqes();
        }
        self.confirm();
        let r = self.run.as_mut().expect("started");
        let pending = !r.rx_frames.is_empty() || !r.posts.is_empty();
        self.book.busy = r.core.settle(active, pending);
        Ok(())
    }

    fn receive_frame(&mut self, now: Time, frame: Vec<u8>) {
        self.run_to(now);
        let Some(r) = self.run.as_mut() else {
            return;
        };
        if r.core.rx.push_frame(&frame) {
            if let Some(log) = self.port_log.as_mut() {
                log.rx.push((0, frame.clone()));
            }
            r.rx_frames.push_back(frame);
            r.core.stats.frames_in += 1;
            self.book.busy = true;
        }
    }
}

nic_harness_surface! {
    RtlNic;

    fn post_send(&mut self, _: Qpn, _: SendWr) -> anyhow::Result<()> {
        anyhow::bail!("post_send on the RTL responder half: it has no send queue")
    }

    fn post_recv(&mut self, qpn: Qpn, wr: RecvWr) -> anyhow::Result<()> {
        Ok(RtlNic::post_recv(self, qpn, wr)?)
    }
}
