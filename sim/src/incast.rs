//! DCQCN under incast: `flows` sender NICs each stream RDMA WRITEs on one QP
//! to a single receiver NIC, so the switch port towards the receiver is the
//! bottleneck. The switch marks ECN (congestion point), the receiver sends
//! CNPs (notification point), the senders' rate limiters react (reaction
//! point); with PFC on, the switch also pauses the senders' priority when
//! their bytes in its buffer pass XOFF. Reported per measurement window:
//! each flow's rate on the bottleneck link, Jain's fairness index, link
//! utilisation, the bottleneck queue (time-weighted mean and maximum),
//! PFC pauses and drops; and when fairness converged.

use crate::scenario::{connect, nic_config, ScenarioConfig};
use anyhow::Result;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{
    wire_bytes, CaptureKind, EcnConfig, Fabric, LinkConfig, NodeId, PfcConfig, SwitchConfig, Time,
};
use rocenic_model::dcqcn::DcqcnConfig;
use rocenic_model::dcqcn_fluid::fixed_point_marking;
use rocenic_model::nic::{Nic, NicConfig};
use rocenic_model::node::ScenarioNode;
use rocenic_model::verbs::*;
use rocenic_wire::RoceFrame;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Serialize)]
pub struct IncastConfig {
    pub flows: usize,
    pub duration_ns: Time,
    /// Width of one measurement window.
    pub window_ns: Time,
    /// Jain index every window from convergence on must reach.
    pub fairness_target: f64,
    /// Bottleneck utilisation every window from convergence on must reach.
    pub utilisation_target: f64,
    /// Convergence is judged on rates averaged over this many consecutive
    /// windows, so one window's jitter does not count as unsettled.
    pub smoothing_windows: usize,
    pub message_size: u64,
    /// WRITEs each sender keeps posted.
    pub outstanding: u32,
    pub mtu: u32,
    pub seed: u64,
    pub link: LinkConfig,
    pub ecn: EcnConfig,
    pub buffer_bytes: u64,
    /// Priority flow control at the switch; `None`: lossy.
    pub pfc: Option<PfcConfig>,
    pub dcqcn: DcqcnConfig,
    /// WRITEs each flow sends in all; `None` keeps `outstanding` posted
    /// until the end.
    pub messages_per_flow: Option<u64>,
}

impl Default for IncastConfig {
    fn default() -> Self {
        IncastConfig {
            flows: 2,
            duration_ns: 100_000_000,
            window_ns: 1_000_000,
            fairness_target: 0.98,
            utilisation_target: 0.90,
            smoothing_windows: 5,
            message_size: 1 << 20,
            outstanding: 4,
            mtu: 4096,
            seed: 1,
            link: LinkConfig::default(),
            ecn: incast_ecn(),
            buffer_bytes: 32 << 20,
            pfc: Some(incast_pfc()),
            dcqcn: DcqcnConfig::default(),
            messages_per_flow: None,
        }
    }
}

/// The congestion point for 100 GbE: marking from 20 KB, with up to 20 %
/// of the frames at 400 KB and all beyond, as frames leave the queue (a
/// mark then reports the queue as it is, not as it was a queueing delay
/// ago); `docs/dcqcn.md` has the runs behind the values.
pub fn incast_ecn() -> EcnConfig {
    EcnConfig {
        kmin_bytes: 20_000,
        kmax_bytes: 400_000,
        pmax: 0.2,
        on_dequeue: true,
    }
}

/// PFC on RoCE's priority with XOFF above the marking range (512 KiB per
/// ingress port, XON 32 KiB lower, 32 KiB of headroom): DCQCN acts first
/// and PFC only catches what it cannot.
pub fn incast_pfc() -> PfcConfig {
    PfcConfig {
        xoff_bytes: 512 << 10,
        xon_bytes: 480 << 10,
        headroom_bytes: 32 << 10,
        ..PfcConfig::default()
    }
}

/// One measurement window.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub start_ns: Time,
    /// Each flow's rate on the bottleneck link, wire bytes (with preamble,
    /// FCS and inter-frame gap) per second, in Gb/s.
    pub flow_gbps: Vec<f64>,
    pub jain: f64,
    /// Busy fraction of the bottleneck link.
    pub utilisation: f64,
    /// The switch's queue towards the receiver, time-weighted over the
    /// window, and its largest value in it.
    pub queue_bytes_mean: f64,
    pub queue_bytes_max: u64,
    /// PFC pauses (XOFF frames, refreshes included) the switch sent.
    pub pfc_pauses: u64,
    /// Frames the fabric dropped (the switch's drops and any link faults).
    pub drops: u64,
    /// CNPs the senders received and rate cuts their reaction points made
    /// (as polled, every 2 us).
    pub cnps_received: u64,
    pub rate_cuts: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct IncastReport {
    /// The NICs that ran: `model` or `rtl`.
    pub backend: &'static str,
    pub flows: usize,
    pub line_rate_gbps: f64,
    /// Start of the first window from which the rates, averaged over
    /// `smoothing_windows` windows, always met both the fairness and the
    /// utilisation target; `None` if the flows never settled.
    pub convergence_ns: Option<Time>,
    /// Averages over all windows from convergence to the end.
    pub jain_after_convergence: f64,
    pub utilisation_after_convergence: f64,
    pub flow_gbps_after_convergence: Vec<f64>,
    pub cnps_sent: u64,
    pub cnps_received: u64,
    /// Rate cuts the senders' reaction points made.
    pub rate_cuts: u64,
    pub ecn_marked: u64,
    pub buffer_drops: u64,
    pub retransmitted_frames: u64,
    pub pfc_pauses: u64,
    /// PFC frames the senders received (pauses and XONs), and the pauses
    /// their watchdogs stopped honouring.
    pub rx_pause_frames: u64,
    pub pause_watchdog_trips: u64,
    pub queue_bytes_max: u64,
    /// The queue's time-weighted mean from 1 ms on (the start-up's queue
    /// left out); 0 for a shorter run.
    pub queue_bytes_mean_after_1ms: f64,
    /// Where the DCQCN fluid model says the queue settles for these flows
    /// and parameters; `None` where it has no fixed point.
    pub fluid_fixed_point: Option<FluidFixedPoint>,
    /// WRITEs completed, all flows.
    pub messages_completed: u64,
    /// When the last of `messages_per_flow` WRITEs of every flow
    /// completed (as polled, every 2 us); `None` when they did not all
    /// complete, or without `messages_per_flow`.
    pub completion_ns: Option<Time>,
    /// On the RTL backend: the run's length in core clock cycles (250
    /// MHz), and those cycles per second of wall time, the simulation's
    /// speed (every NIC runs them; the one figure that varies between runs
    /// of the same seed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycles: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycles_per_second: Option<f64>,
    pub samples: Vec<Sample>,
}

/// The DCQCN fluid model's fixed point for an incast
/// ([`rocenic_model::dcqcn_fluid`]): the marking probability at which
/// every flow holds the fair share, and the queue at which the switch's
/// marking curve gives it (`Kmax` when it takes more than `Pmax`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FluidFixedPoint {
    pub marking_probability: f64,
    pub queue_bytes: f64,
}

impl FluidFixedPoint {
    /// For `config`'s flows, parameters and marking curve; the packets are
    /// full frames of its MTU (the messages' middles) with their 62 bytes
    /// of Ethernet, IPv4, UDP, BTH, ICRC and FCS.
    pub fn of(config: &IncastConfig) -> Option<FluidFixedPoint> {
        let packet_bytes = config.message_size.min(u64::from(config.mtu)) as f64 + 62.0;
        let share_bps = config.link.rate_bps / config.flows as f64;
        let p = fixed_point_marking(&config.dcqcn, share_bps, packet_bytes)?;
        let ecn = &config.ecn;
        let (kmin, kmax) = (ecn.kmin_bytes as f64, ecn.kmax_bytes as f64);
        let queue_bytes = if p <= ecn.pmax {
            kmin + p / ecn.pmax * (kmax - kmin)
        } else {
            kmax
        };
        Some(FluidFixedPoint {
            marking_probability: p,
            queue_bytes,
        })
    }
}

/// The bottleneck queue over the windows: integrates each level over the
/// time it held, so the mean is time-weighted and the maximum misses no
/// level the queue reached.
struct QueueMeter {
    window_ns: Time,
    integral: Vec<f64>,
    max: Vec<u64>,
    pauses: Vec<u64>,
    drops: Vec<u64>,
    since: Time,
    level: u64,
    pauses_seen: u64,
    drops_seen: u64,
}

impl QueueMeter {
    fn new(windows: usize, window_ns: Time) -> Self {
        QueueMeter {
            window_ns,
            integral: vec![0.0; windows],
            max: vec![0; windows],
            pauses: vec![0; windows],
            drops: vec![0; windows],
            since: 0,
            level: 0,
            pauses_seen: 0,
            drops_seen: 0,
        }
    }

    /// The queue held `self.level` until `now`, then became `level`;
    /// `pauses` and `drops` are the fabric's running totals.
    fn observe(&mut self, now: Time, level: u64, pauses: u64, drops: u64) {
        let windows = self.integral.len() as Time;
        let mut t = self.since;
        while t < now && t / self.window_ns < windows {
            let w = (t / self.window_ns) as usize;
            let end = now.min((w as Time + 1) * self.window_ns);
            self.integral[w] += (end - t) as f64 * self.level as f64;
            self.max[w] = self.max[w].max(self.level);
            t = end;
        }
        let w = (now / self.window_ns) as usize;
        if w < self.max.len() {
            self.max[w] = self.max[w].max(level);
            self.pauses[w] += pauses - self.pauses_seen;
            self.drops[w] += drops - self.drops_seen;
        }
        (self.since, self.level) = (now, level);
        (self.pauses_seen, self.drops_seen) = (pauses, drops);
    }
}

/// The queue's mean over the windows that start at `from_ns` or later (0
/// if there is none).
fn mean_queue_after(samples: &[Sample], from_ns: Time) -> f64 {
    let later: Vec<f64> = samples
        .iter()
        .filter(|s| s.start_ns >= from_ns)
        .map(|s| s.queue_bytes_mean)
        .collect();
    if later.is_empty() {
        0.0
    } else {
        later.iter().sum::<f64>() / later.len() as f64
    }
}

/// The senders' CNPs and cuts per window: each poll's increase counts in
/// the window the poll ends.
struct ReactionMeter {
    window_ns: Time,
    cnps: Vec<u64>,
    cuts: Vec<u64>,
    seen: (u64, u64),
}

impl ReactionMeter {
    fn new(windows: usize, window_ns: Time) -> Self {
        ReactionMeter {
            window_ns,
            cnps: vec![0; windows],
            cuts: vec![0; windows],
            seen: (0, 0),
        }
    }

    fn observe<N: ScenarioNode>(&mut self, now: Time, fabric: &Fabric<N>, senders: &[NodeId]) {
        let cnps = senders
            .iter()
            .map(|&id| fabric.node(id).model_view().counters().cnps_received)
            .sum::<u64>();
        let cuts = senders
            .iter()
            .map(|&id| fabric.node(id).congestion().rate_cuts)
            .sum::<u64>();
        let w = (now.max(1) - 1) / self.window_ns;
        if let (Some(c), Some(k)) = (self.cnps.get_mut(w as usize), self.cuts.get_mut(w as usize)) {
            *c += cnps - self.seen.0;
            *k += cuts - self.seen.1;
        }
        self.seen = (cnps, cuts);
    }
}

/// Each flow's rate averaged over `samples` (empty: no flows).
fn mean_rates(samples: &[Sample]) -> Vec<f64> {
    let Some(first) = samples.first() else {
        return Vec::new();
    };
    (0..first.flow_gbps.len())
        .map(|flow| samples.iter().map(|s| s.flow_gbps[flow]).sum::<f64>() / samples.len() as f64)
        .collect()
}

/// Jain's fairness index: (sum x)^2 / (n * sum x^2); 1 is perfectly fair.
pub fn jain(rates: &[f64]) -> f64 {
    let sum: f64 = rates.iter().sum();
    let squares: f64 = rates.iter().map(|r| r * r).sum();
    if squares == 0.0 {
        0.0
    } else {
        sum * sum / (rates.len() as f64 * squares)
    }
}

const POLL_INTERVAL_NS: Time = 2_000;

/// What the NICs of an incast are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum IncastBackend {
    /// The reference model.
    Model,
    /// Every NIC is the Verilated NIC (`nic_top`) behind its shadow
    /// model: the receiver's notification point sends the CNPs, each
    /// sender's reaction point and pacing act on them (checked bit for
    /// bit against the model's integer DCQCN), its pause tap takes the
    /// switch's PFC frames.
    Rtl,
}

impl IncastBackend {
    pub fn name(self) -> &'static str {
        match self {
            IncastBackend::Model => "model",
            IncastBackend::Rtl => "rtl",
        }
    }
}

/// The incast on the NICs `backend` names.
pub fn run_incast_backend(backend: IncastBackend, config: &IncastConfig) -> Result<IncastReport> {
    match backend {
        IncastBackend::Model => run_incast(config),
        IncastBackend::Rtl => run_incast_rtl(config),
    }
}

/// The incast on model NICs.
pub fn run_incast(config: &IncastConfig) -> Result<IncastReport> {
    run_incast_on(IncastBackend::Model, config, Nic::new)
}

/// The incast on Verilated cores, each scored by its shadow model.
#[cfg(feature = "rtl")]
fn run_incast_rtl(config: &IncastConfig) -> Result<IncastReport> {
    use rocenic_model::dcqcn_integer::RpParams;
    use rocenic_model::node::NS_PER_CYCLE;
    use rocenic_rtl::core_nic::RtlCoreNic;
    use rocenic_rtl::host_dma::HostDmaConfig;
    use rocenic_rtl::node::Node;
    type Core = verilator_sys::NicTop;
    if let Err(why) = RpParams::for_nic(&config.dcqcn, config.link.rate_bps, NS_PER_CYCLE) {
        anyhow::bail!(
            "--backend rtl: the core's reaction point cannot run these parameters: {why}"
        );
    }
    run_incast_on(IncastBackend::Rtl, config, |nic_config| {
        Node::<RtlCoreNic<Core>>::Rtl(Box::new(RtlCoreNic::new(
            nic_config,
            HostDmaConfig::default(),
        )))
    })
}

/// Without the `rtl` feature there is no Verilated core to run.
#[cfg(not(feature = "rtl"))]
fn run_incast_rtl(_: &IncastConfig) -> Result<IncastReport> {
    anyhow::bail!(
        "--backend rtl: this rocenic was built without the `rtl` feature (no Verilated RTL); rebuild with default features"
    )
}

/// The incast on fabric nodes of kind `N`, each made by `node` from its
/// NIC's configuration; `backend` names them in the report. An RTL node's
/// first difference from its shadow stops the run with an error.
pub fn run_incast_on<N: ScenarioNode>(
    backend: IncastBackend,
    config: &IncastConfig,
    node: impl Fn(NicConfig) -> N,
) -> Result<IncastReport> {
    anyhow::ensure!(config.flows >= 1, "at least one flow");
    anyhow::ensure!(
        config.window_ns > 0 && config.duration_ns >= config.window_ns,
        "the run must hold at least one window"
    );
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let scenario = ScenarioConfig {
        mtu: config.mtu,
        ecn: true,
        seed: config.seed,
        ..ScenarioConfig::default()
    };
    let nic = |n: u8| {
        let mut nic_config = nic_config(n, &scenario);
        nic_config.dcqcn = config.dcqcn.clone();
        node(nic_config)
    };

    let mut receiver_node = nic(100);
    let receiver = receiver_node.verbs()?;
    let r_pd = receiver.alloc_pd();
    let r_cq = receiver.create_cq(64);
    let r_buf = receiver.memory_mut().alloc(config.message_size, 2 << 20);
    let r_keys = receiver.reg_mr(
        r_pd,
        r_buf,
        config.message_size,
        Access::LOCAL_WRITE | Access::REMOTE_WRITE,
    )?;
    // WRITEs only: each sender keeps `outstanding` posted, nothing
    // consumes a receive WQE.
    let caps = QpCaps {
        max_send_wr: config.outstanding,
        max_recv_wr: 1,
        max_sge: 1,
    };

    struct Sender {
        qpn: Qpn,
        cq: CqId,
        sge: Sge,
        posted: u64,
    }
    let mut senders = Vec::new();
    let mut flow_of_qpn = BTreeMap::new();
    let mut nics = Vec::new();
    for flow in 0..config.flows {
        let mut sender_node = nic(flow as u8 + 1);
        let s = sender_node.verbs()?;
        let pd = s.alloc_pd();
        let cq = s.create_cq(config.outstanding * 2 + 16);
        let buf = s.memory_mut().alloc(config.message_size, 2 << 20);
        let keys = s.reg_mr(pd, buf, config.message_size, Access::LOCAL_WRITE)?;
        let qpn = s.create_qp(pd, cq, cq, caps)?;
        let r_qpn = receiver_node.verbs()?.create_qp(r_pd, r_cq, r_cq, caps)?;
        connect(s, qpn, receiver_node.verbs()?, r_qpn, &scenario, &mut rng)?;
        flow_of_qpn.insert(r_qpn, flow);
        senders.push(Sender {
            qpn,
            cq,
            sge: Sge {
                addr: buf,
                length: config.message_size as u32,
                lkey: keys.lkey,
            },
            posted: 0,
        });
        nics.push(sender_node);
    }

    let switch = SwitchConfig {
        buffer_bytes: config.buffer_bytes,
        ecn: Some(config.ecn.clone()),
        pfc: config.pfc.clone(),
        ..SwitchConfig::default()
    };
    let mut fabric = Fabric::try_new(config.seed, switch)?;
    let receiver_id = fabric.add_node(receiver_node, config.link.clone());
    let sender_ids: Vec<NodeId> = nics
        .into_iter()
        .map(|n| fabric.add_node(n, config.link.clone()))
        .collect();

    let windows = (config.duration_ns / config.window_ns) as usize;
    let buckets = Arc::new(Mutex::new(vec![vec![0u64; config.flows]; windows]));
    {
        let buckets = Arc::clone(&buckets);
        let window_ns = config.window_ns;
        fabric.add_capture(Box::new(move |event| {
            if event.node != receiver_id || event.kind != CaptureKind::Delivered {
                return;
            }
            let Ok(parsed) = RoceFrame::parse(event.frame) else {
                return;
            };
            let Some(&flow) = flow_of_qpn.get(&parsed.frame.bth.dest_qp) else {
                return;
            };
            let window = (event.time / window_ns) as usize;
            if let Some(bucket) = buckets
                .lock()
                .expect("capture sink poisoned")
                .get_mut(window)
            {
                bucket[flow] += wire_bytes(event.frame.len());
            }
        }));
    }

    let post = |fabric: &mut Fabric<N>, id: NodeId, s: &mut Sender| -> Result<()> {
        fabric.node_mut(id).post_send(
            s.qpn,
            SendWr {
                wr_id: s.posted,
                op: SendOp::Write {
                    remote_addr: r_buf,
                    rkey: r_keys.rkey,
                },
                sgl: vec![s.sge],
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            },
        )?;
        s.posted += 1;
        Ok(())
    };
    let started = std::time::Instant::now();
    let budget = config.messages_per_flow.unwrap_or(u64::MAX);
    for (s, &id) in senders.iter_mut().zip(&sender_ids) {
        for _ in 0..u64::from(config.outstanding).min(budget) {
            post(&mut fabric, id, s)?;
        }
    }
    let mut queue = QueueMeter::new(windows, config.window_ns);
    let mut reactions = ReactionMeter::new(windows, config.window_ns);
    let mut completed = 0;
    let mut completion_ns = None;
    let all = config.messages_per_flow.map(|m| m * config.flows as u64);
    while fabric.now() < config.duration_ns && completion_ns.is_none() {
        let next = (fabric.now() + POLL_INTERVAL_NS).min(config.duration_ns);
        while fabric.next_event_time().is_some_and(|t| t <= next) {
            fabric.step();
            let stats = fabric.stats();
            let (pauses, drops) = (stats.pfc_pauses, stats.dropped.total());
            let level = fabric.egress_queue_bytes(receiver_id);
            queue.observe(fabric.now(), level, pauses, drops);
        }
        fabric.run_until(next);
        if let Some(difference) = std::iter::once(receiver_id)
            .chain(sender_ids.iter().copied())
            .find_map(|id| fabric.node(id).mismatch())
        {
            anyhow::bail!("an RTL NIC differs from its shadow model: {difference}");
        }
        reactions.observe(fabric.now(), &fabric, &sender_ids);
        for (s, &id) in senders.iter_mut().zip(&sender_ids) {
            for cqe in fabric.node_mut(id).poll_cq(s.cq, usize::MAX) {
                anyhow::ensure!(
                    cqe.status == WcStatus::Success,
                    "flow QP {} failed: {cqe:?}",
                    s.qpn
                );
                completed += 1;
                if s.posted < budget {
                    post(&mut fabric, id, s)?;
                }
            }
        }
        if all == Some(completed) {
            completion_ns = Some(fabric.now());
        }
    }
    let stats = fabric.stats();
    let level = fabric.egress_queue_bytes(receiver_id);
    queue.observe(fabric.now(), level, stats.pfc_pauses, stats.dropped.total());

    let line_rate_bps = config.link.rate_bps;
    let samples: Vec<Sample> = buckets
        .lock()
        .expect("capture sink poisoned")
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            let seconds = config.window_ns as f64 * 1e-9;
            let flow_gbps: Vec<f64> = bytes
                .iter()
                .map(|&b| b as f64 * 8.0 / seconds / 1e9)
                .collect();
            let total: f64 = flow_gbps.iter().sum();
            Sample {
                start_ns: i as Time * config.window_ns,
                jain: jain(&flow_gbps),
                utilisation: total * 1e9 / line_rate_bps,
                flow_gbps,
                queue_bytes_mean: queue.integral[i] / config.window_ns as f64,
                queue_bytes_max: queue.max[i],
                pfc_pauses: queue.pauses[i],
                drops: queue.drops[i],
                cnps_received: reactions.cnps[i],
                rate_cuts: reactions.cuts[i],
            }
        })
        .collect();
    let span = config.smoothing_windows.clamp(1, samples.len());
    let settled = |from: usize| {
        let rates = mean_rates(&samples[from..from + span]);
        jain(&rates) >= config.fairness_target
            && rates.iter().sum::<f64>() * 1e9 / line_rate_bps >= config.utilisation_target
    };
    let starts = samples.len() - span + 1;
    let settled_from = (0..starts)
        .rposition(|from| !settled(from))
        .map_or(0, |last_unsettled| last_unsettled + 1);
    let settled_from = if settled_from == starts {
        samples.len()
    } else {
        settled_from
    };
    let convergence_ns = (settled_from < samples.len()).then(|| samples[settled_from].start_ns);
    let tail = &samples[settled_from.min(samples.len())..];
    let mean = |f: &dyn Fn(&Sample) -> f64| {
        if tail.is_empty() {
            0.0
        } else {
            tail.iter().map(f).sum::<f64>() / tail.len() as f64
        }
    };
    let flow_gbps_after_convergence = mean_rates(tail);

    let wall = started.elapsed().as_secs_f64();
    let cycles = (backend == IncastBackend::Rtl)
        .then(|| fabric.now().div_ceil(rocenic_model::node::NS_PER_CYCLE));
    let receiver = fabric.node(receiver_id).model_view();
    let mut cnps_received = 0;
    let mut retransmitted_frames = 0;
    let (mut rate_cuts, mut rx_pause_frames, mut pause_watchdog_trips) = (0, 0, 0);
    for &id in &sender_ids {
        let c = fabric.node(id).model_view().counters();
        cnps_received += c.cnps_received;
        retransmitted_frames += c.retransmitted_frames;
        let congestion = fabric.node(id).congestion();
        rate_cuts += congestion.rate_cuts;
        rx_pause_frames += congestion.rx_pause_frames;
        pause_watchdog_trips += congestion.pause_watchdog_trips;
    }
    Ok(IncastReport {
        backend: backend.name(),
        flows: config.flows,
        line_rate_gbps: line_rate_bps / 1e9,
        convergence_ns,
        jain_after_convergence: jain(&flow_gbps_after_convergence),
        utilisation_after_convergence: mean(&|s: &Sample| s.utilisation),
        flow_gbps_after_convergence,
        cnps_sent: receiver.counters().cnps_sent,
        cnps_received,
        rate_cuts,
        ecn_marked: stats.ecn_marked,
        buffer_drops: stats.dropped.buffer_full,
        retransmitted_frames,
        pfc_pauses: stats.pfc_pauses,
        rx_pause_frames,
        pause_watchdog_trips,
        queue_bytes_max: queue.max.iter().copied().max().unwrap_or(0),
        queue_bytes_mean_after_1ms: mean_queue_after(&samples, 1_000_000),
        fluid_fixed_point: FluidFixedPoint::of(config),
        messages_completed: completed,
        completion_ns,
        cycles,
        cycles_per_second: cycles.map(|c| c as f64 / wall.max(f64::MIN_POSITIVE)),
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn jain_index_is_one_when_fair_and_one_over_n_when_one_takes_all() {
        assert!((jain(&[5.0, 5.0, 5.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[9.0, 0.0, 0.0]) - 1.0 / 3.0).abs() < 1e-12);
        assert!((jain(&[1.0, 3.0]) - 0.8).abs() < 1e-12);
    }
}
