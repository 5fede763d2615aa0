//! What every NIC harness shares (`RtlNic`, `RtlRequesterNic`,
//! `RtlCoreNic`): the [`RtlHarness`] surface a fabric node drives; the one
//! clocked run loop (`ClockedHarness`) with the ports every core has
//! (`CoreRun`: MAC-side streams, host DMA, the fabric clock); the run
//! bookkeeping (the shadow model and the host's CQs, the first mismatch
//! with its cycle, the setup window before the run), the scoreboard's
//! write and CQE queues and the leftover checks at the end of a run.

use super::dma_ports::{DmaReadPorts, DmaWritePorts};
use super::host_dma::HostDma;
use super::stream::{AxisInPorts, AxisOutPorts, ReceivedFrame, StreamSink, StreamSource};
use super::RtlError;
use rocenic_fabric::{Endpoint, Time};
use rocenic_hdl::codes::{wc_opcode, wc_status};
use rocenic_model::memory::HostMemory;
use rocenic_model::nic::{Nic, TxClass};
use rocenic_model::verbs::{CqId, Cqe, QpState, Qpn, RecvWr, SendWr, WcOpcode, WcStatus};
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{Block, Input, Output, Sim, SimError};

/// Core clock period: 250 MHz (defined with the scenario node contract,
/// whose `core_cycles` count in it).
pub use rocenic_model::node::NS_PER_CYCLE;

/// Cycles without any port activity after which a core counts as idle.
const QUIET_CYCLES: u64 = 64;
/// Frames the MAC side holds before it backpressures the core.
const MAC_FRAMES: usize = 2;

/// The run loop every NIC harness is clocked by: the harness says how to
/// program its core ([`ClockedHarness::start`]) and what one cycle of it
/// does with its scoreboard ([`ClockedHarness::cycle`]); the loop, the
/// idle skipping, the end-of-run drain and the fabric-facing timing are
/// here, once.
pub(crate) trait ClockedHarness: HarnessParts {
    /// The fabric should call the harness at time 0, before anything
    /// arrives: a core with a requester half is programmed then and sends
    /// the WQEs posted before the run. (A responder half waits for the
    /// fabric's first call.)
    const STARTS_AT_ZERO: bool;

    /// Programs the core from the shadow's state.
    fn start(&mut self) -> Result<(), RtlError>;
    /// One clock cycle of the core with its scoreboard; it sets
    /// `book().busy` to whether the core has work in flight.
    fn cycle(&mut self) -> Result<(), String>;
    /// [`Endpoint::receive`]: a frame from the wire for the core (and,
    /// by the harness's rules, its shadow).
    fn receive_frame(&mut self, now: Time, frame: Vec<u8>);

    /// Keeps the first difference, with the core's cycle.
    fn fail(&mut self, what: String) {
        let cycle = self.core().map_or(0, |r| r.sim.cycle());
        self.book_mut().fail(cycle, what);
    }

    /// Runs the core up to fabric time `now`: programmed on first use,
    /// then clocked cycle by cycle while it has work in flight, and while
    /// it has none the clock's origin moves instead (an idle core's state
    /// does not change: a harness whose core counts time stays busy while
    /// it does). Stops at the first mismatch.
    fn run_to(&mut self, now: Time) {
        if self.book().mismatch.is_some() {
            return;
        }
        if self.core().is_none() {
            if let Err(e) = self.start() {
                self.fail(format!("programming the core: {e}"));
                return;
            }
        }
        let target = now.div_ceil(NS_PER_CYCLE);
        loop {
            let busy = self.book().busy;
            let core = self.core_mut().expect("started");
            if core.fabric_cycle() >= target {
                break;
            }
            if !busy {
                core.skip_to(target);
                break;
            }
            if let Err(e) = self.cycle() {
                self.fail(e);
                return;
            }
        }
    }

    /// The end of a run: the core finishes what it has in flight, in at
    /// most `max_cycles` (the frames it emits then are scored and go
    /// nowhere); the first mismatch, if any.
    fn drain(&mut self, max_cycles: u64) -> Result<(), String> {
        for _ in 0..max_cycles {
            let done = !self.book().busy || self.book().mismatch.is_some();
            let Some(r) = self.core_mut() else { break };
            r.out.clear();
            if done {
                break;
            }
            if let Err(e) = self.cycle() {
                self.fail(e);
            }
        }
        match &self.book().mismatch {
            Some(m) => Err(m.clone()),
            None => Ok(()),
        }
    }

    /// [`Endpoint::transmit`]: the core's next frame for the MAC, once it
    /// has run up to `now`; taking one frees room for the next.
    fn transmit_frame(&mut self, now: Time) -> Option<Vec<u8>> {
        self.run_to(now);
        let frame = self.core_mut()?.out.pop_front();
        if frame.is_some() {
            self.book_mut().busy = true;
        }
        frame
    }

    /// [`Endpoint::next_deadline`]: the next cycle while the core has work
    /// (nothing after a mismatch); before it runs, time 0 if it
    /// [`STARTS_AT_ZERO`](ClockedHarness::STARTS_AT_ZERO).
    fn wake_at(&self) -> Option<Time> {
        let Some(r) = self.core() else {
            return Self::STARTS_AT_ZERO.then_some(0);
        };
        (self.book().busy && self.book().mismatch.is_none())
            .then(|| (r.fabric_cycle() + 1) * NS_PER_CYCLE)
    }

    fn run_stats(&self) -> RtlNicStats {
        self.core().map_or_else(RtlNicStats::default, |r| r.stats)
    }

    /// Host memory as the core's DMA left it (the shadow's until the core
    /// runs).
    fn core_memory(&self) -> &HostMemory {
        match self.core() {
            Some(r) => r.host.memory(),
            None => self.book().shadow.memory(),
        }
    }

    /// The shadow, to set up before the run (refused once the core runs).
    fn setup_shadow(&mut self) -> Result<&mut Nic, RtlError> {
        let running = self.core().is_some();
        self.book_mut().setup(running)
    }
}

/// A harness's two parts, its bookkeeping and its running core:
/// [`nic_harness_surface!`] implements it for a harness that keeps them
/// in its fields `book` and `run` (whose `core` is the [`CoreRun`]).
pub(crate) trait HarnessParts {
    /// The Verilated core.
    type Core: Block;

    fn book(&self) -> &Bookkeeping;
    fn book_mut(&mut self) -> &mut Bookkeeping;
    /// The running core's shared ports, once programmed.
    fn core(&self) -> Option<&CoreRun<Self::Core>>;
    fn core_mut(&mut self) -> Option<&mut CoreRun<Self::Core>>;
}

/// What every running core has, whichever half it is: the simulation, the
/// host DMA model behind its `dma` (read) and `dmaw` (write) ports, the
/// MAC side (`rx` in, `frame` out), the fabric's clock and the counts; and
/// the per-cycle plumbing of those ports, the same in every harness.
pub(crate) struct CoreRun<B: Block> {
    pub sim: Sim<B>,
    pub host: HostDma,
    rx_ports: AxisInPorts<B>,
    /// The frames given to the core, beat by beat.
    pub rx: StreamSource,
    frame_ports: AxisOutPorts<B>,
    tx: StreamSink,
    dma_read: DmaReadPorts<B>,
    dma_write: DmaWritePorts<B>,
    /// Frames the core emitted, waiting for the MAC.
    pub out: VecDeque<Vec<u8>>,
    /// Core write beats not yet confirmed by the shadow's memory.
    pub writes: Vec<(u64, Vec<u8>)>,
    /// Fabric cycle (fabric time / 4 ns) minus the core's cycle.
    offset: i64,
    /// Cycles in a row without port activity.
    quiet: u64,
    pub stats: RtlNicStats,
}

/// The shared ports' state within one cycle, from
/// [`CoreRun::drive_mac_and_dma`] to [`CoreRun::tick`].
pub(crate) struct SharedPorts {
    mac_ready: bool,
    write_ready: bool,
    rx_ready: bool,
    read_taken: bool,
}

impl<B: Block> CoreRun<B> {
    /// The programmed core `sim` with its host, its clock's origin at the
    /// fabric's time 0.
    pub fn new(sim: Sim<B>, host: HostDma) -> Result<Self, RtlError> {
        let offset = -(sim.cycle() as i64);
        Ok(CoreRun {
            rx_ports: AxisInPorts::named("rx")?,
            rx: StreamSource::new(1.0, 0),
            frame_ports: AxisOutPorts::named("frame", &[])?,
            tx: StreamSink::new("frame", 1.0, 0),
            dma_read: DmaReadPorts::named("dma")?,
            dma_write: DmaWritePorts::named("dmaw")?,
            sim,
            host,
            out: VecDeque::new(),
            writes: Vec::new(),
            offset,
            quiet: 0,
            stats: RtlNicStats::default(),
        })
    }

    /// The core's current cycle on the fabric's clock.
    pub fn fabric_cycle(&self) -> u64 {
        (self.sim.cycle() as i64 + self.offset) as u64
    }

    /// Moves the clock's origin so the core's current cycle is fabric
    /// cycle `target`, instead of simulating idle cycles.
    fn skip_to(&mut self, target: u64) {
        self.offset = target as i64 - self.sim.cycle() as i64;
    }

    /// Before `eval`, first: the next beat of the frames in; with `hold`
    /// no new frame starts ([`StreamSource::begin_cycle_holding`]).
    pub fn drive_rx(&mut self, hold: bool) {
        self.rx.begin_cycle_holding(hold);
        self.rx_ports.drive(self.sim.dut_mut(), self.rx.current());
    }

    /// Before `eval`: the MAC side takes frames while it has room for
    /// them, the host DMA answers reads and takes writes.
    pub fn drive_mac_and_dma(&mut self) -> SharedPorts {
        self.tx.begin_cycle();
        let mac_ready = self.out.len() < MAC_FRAMES;
        self.frame_ports.set_ready(self.sim.dut_mut(), mac_ready);
        self.dma_read.drive(&mut self.sim, &self.host);
        let write_ready = self.dma_write.drive(&mut self.sim, &self.host, true);
        SharedPorts {
            mac_ready,
            write_ready,
            rx_ready: false,
            read_taken: false,
        }
    }

    /// After `eval`, first: the `rx` port's ready and the DMA ports. A
    /// write beat accepted is kept for the shadow to confirm; returns
    /// whether a port moved and the byte count of that beat.
    pub fn observe_dma(
        &mut self,
        ports: &mut SharedPorts,
    ) -> Result<(bool, Option<usize>), String> {
        ports.rx_ready = self.rx_ports.ready(self.sim.dut());
        ports.read_taken = self
            .dma_read
            .observe(&self.sim, &mut self.host)
            .map_err(|e| e.to_string())?;
        let mut written = None;
        if let Some(w) = self
            .dma_write
            .observe(&self.sim, &mut self.host, ports.write_ready)
            .map_err(|e| e.to_string())?
        {
            self.stats.dma_write_beats += 1;
            self.stats.dma_write_bytes += w.1.len() as u64;
            written = Some(w.1.len());
            self.writes.push(w);
        }
        Ok((ports.read_taken || written.is_some(), written))
    }

    /// After `eval`, last: the `frame` port's beat, while the MAC side has
    /// room (the core's tready); whether one moved.
    pub fn observe_frame(&mut self, ports: &SharedPorts) -> Result<bool, String> {
        if !ports.mac_ready {
            return Ok(false);
        }
        let beat = self.frame_ports.beat(self.sim.dut());
        let valid = self.frame_ports.valid(self.sim.dut());
        self.tx
            .observe(self.sim.cycle(), valid, &beat, &[])
            .map_err(|e| e.to_string())
    }

    /// The clock edge: whether a frame in finished entering, and the
    /// frames out the core finished.
    pub fn tick(&mut self, ports: &SharedPorts) -> (bool, Vec<ReceivedFrame>) {
        self.sim.tick();
        self.host.clock(ports.read_taken);
        let rx_moved = self
            .rx
            .end_cycle(self.sim.cycle(), ports.rx_ready)
            .is_some();
        (rx_moved, self.tx.take_frames())
    }

    /// The end of a cycle in which a port moved if `active`: whether the
    /// core has work in flight, `pending` for the harness's own (frames
    /// and posts the scoreboard waits for, timers counting).
    pub fn settle(&mut self, active: bool, pending: bool) -> bool {
        self.quiet = if active { 0 } else { self.quiet + 1 };
        pending
            || !self.rx.is_idle()
            || self.host.reads_in_flight() > 0
            || self.host.offered().is_some()
            || !self.dma_write.idle()
            || self.tx.mid_frame()
            || self.quiet < QUIET_CYCLES
    }
}

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
    /// PFC frames that paused an honoured priority, and pauses the
    /// watchdog stopped honouring (the core only).
    pub rx_pause_frames: u64,
    pub pause_watchdog_trips: u64,
    /// CE-marked frames the notification point decided on, and the CNPs
    /// it sent (the core only).
    pub ce_events: u64,
    pub cnps_sent: u64,
    /// CNPs the reaction point took, the rate cuts they made, and pacing
    /// questions a throttled QP was held at (the core only).
    pub cnps_received: u64,
    pub rate_cuts: u64,
    pub pacing_holds: u64,
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
    /// The core's rate cuts and pauses taken (0 for a half: it has
    /// neither a reaction point nor a pause tap).
    fn congestion(&self) -> rocenic_model::node::CongestionCounters;
}

/// The part of a NIC harness that is the same in each of them, for
/// `$harness<B>`, a [`ClockedHarness`] whose fields `book` and `run` hold
/// its [`Bookkeeping`] and its running core: [`HarnessParts`], the
/// accessors over the bookkeeping and the run, the fabric's [`Endpoint`]
/// and the [`RtlHarness`] surface. The harness writes the two posting
/// verbs of [`RtlHarness`] itself (a half refuses the one it has no
/// queue for), given after the name.
macro_rules! nic_harness_surface {
    ($harness:ident; $($posting_verbs:tt)*) => {
        impl<B: verilator_sys::Block> $crate::harness::HarnessParts for $harness<B> {
            type Core = B;

            fn book(&self) -> &$crate::harness::Bookkeeping {
                &self.book
            }

            fn book_mut(&mut self) -> &mut $crate::harness::Bookkeeping {
                &mut self.book
            }

            fn core(&self) -> Option<&$crate::harness::CoreRun<B>> {
                self.run.as_ref().map(|r| &r.core)
            }

            fn core_mut(&mut self) -> Option<&mut $crate::harness::CoreRun<B>> {
                self.run.as_mut().map(|r| &mut r.core)
            }
        }

        impl<B: verilator_sys::Block> $harness<B> {
            /// The shadow model: the host's view of PDs, QPs, MRs and
            /// memory, and what the core must do.
            pub fn shadow(&self) -> &rocenic_model::nic::Nic {
                &self.book.shadow
            }

            /// The first difference between the core and its shadow, if
            /// any.
            pub fn mismatch(&self) -> Option<&str> {
                self.book.mismatch.as_deref()
            }

            pub fn stats(&self) -> $crate::harness::RtlNicStats {
                $crate::harness::ClockedHarness::run_stats(self)
            }

            /// Host memory as the core's DMA left it (the shadow's until
            /// the core runs).
            pub fn memory(&self) -> &rocenic_model::memory::HostMemory {
                $crate::harness::ClockedHarness::core_memory(self)
            }

            /// The shadow, to set the NIC up before the run: PDs, CQs,
            /// QPs and their `modify_qp`, MRs, buffers in host memory and
            /// posted WQEs, as on a model NIC. The core is programmed from
            /// it when the fabric first calls the endpoint; from then on
            /// this is an error (the harness does not drive the core's
            /// host ports for changes while it runs).
            pub fn setup(
                &mut self,
            ) -> Result<&mut rocenic_model::nic::Nic, $crate::RtlError> {
                $crate::harness::ClockedHarness::setup_shadow(self)
            }

            /// Up to `max` completions the core wrote to `cq`, each
            /// checked against the shadow's.
            pub fn poll_cq(
                &mut self,
                cq: rocenic_model::verbs::CqId,
                max: usize,
            ) -> Vec<rocenic_model::verbs::Cqe> {
                self.book.poll_cq(cq, max)
            }

            /// Completions waiting in `cq`.
            pub fn cq_len(&self, cq: rocenic_model::verbs::CqId) -> usize {
                self.book.cq_len(cq)
            }
        }

        impl<B: verilator_sys::Block> rocenic_fabric::Endpoint for $harness<B> {
            fn mac(&self) -> [u8; 6] {
                self.book.shadow.config().mac
            }

            fn receive(&mut self, now: rocenic_fabric::Time, frame: Vec<u8>) {
                $crate::harness::ClockedHarness::receive_frame(self, now, frame)
            }

            fn transmit(&mut self, now: rocenic_fabric::Time) -> Option<Vec<u8>> {
                $crate::harness::ClockedHarness::transmit_frame(self, now)
            }

            fn next_deadline(&self) -> Option<rocenic_fabric::Time> {
                $crate::harness::ClockedHarness::wake_at(self)
            }

            fn advance(&mut self, now: rocenic_fabric::Time) {
                $crate::harness::ClockedHarness::run_to(self, now)
            }
        }

        impl<B: verilator_sys::Block> $crate::harness::RtlHarness for $harness<B> {
            $($posting_verbs)*

            fn setup(
                &mut self,
            ) -> Result<&mut rocenic_model::nic::Nic, $crate::RtlError> {
                $harness::setup(self)
            }

            fn shadow(&self) -> &rocenic_model::nic::Nic {
                $harness::shadow(self)
            }

            fn poll_cq(
                &mut self,
                cq: rocenic_model::verbs::CqId,
                max: usize,
            ) -> Vec<rocenic_model::verbs::Cqe> {
                $harness::poll_cq(self, cq, max)
            }

            fn cq_len(&self, cq: rocenic_model::verbs::CqId) -> usize {
                $harness::cq_len(self, cq)
            }

            fn memory(&self) -> &rocenic_model::memory::HostMemory {
                $harness::memory(self)
            }

            fn mismatch(&self) -> Option<&str> {
                $harness::mismatch(self)
            }

            fn finish_check(&mut self) -> Result<(), String> {
                $harness::finish_check(self)
            }

            fn cycles(&self) -> u64 {
                self.stats().cycles
            }

            fn congestion(&self) -> rocenic_model::node::CongestionCounters {
                let stats = self.stats();
                rocenic_model::node::CongestionCounters {
                    rate_cuts: stats.rate_cuts,
                    rx_pause_frames: stats.rx_pause_frames,
                    pause_watchdog_trips: stats.pause_watchdog_trips,
                }
            }
        }
    };
}
pub(crate) use nic_harness_surface;

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
    wc_status::decode(status).zip(wc_opcode::decode(opcode))
}
