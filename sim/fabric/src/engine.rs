//! The discrete-event engine: endpoints on full-duplex links to one
//! shared-buffer, output-queued, store-and-forward switch.
//!
//! Path of a frame: the sender's transmitter serialises it at its link rate
//! (one frame at a time, [`crate::wire_bytes`] per frame), link faults apply, it
//! propagates for the link latency and is fully received by the switch,
//! which waits its pipeline latency, forwards on the destination MAC, admits
//! it to the shared buffer (tail drop), CE-marks it by the DCQCN congestion
//! point rule, and queues it at the destination's port. That port
//! serialises at the destination's link rate; link faults of that direction
//! apply; after the link latency the destination's `receive` runs. A frame
//! holds its buffer space until its last bit has left the egress port.
//!
//! With PFC configured ([`crate::PfcConfig`]) the switch also counts each
//! ingress port's bytes of each lossless priority, pauses the port's node
//! when they pass XOFF and resumes it at XON; its egress ports keep one
//! queue per priority and honour the pauses their nodes send. PFC frames
//! the switch sends go out ahead of the port's queues.
//!
//! Transmitters keep time in picoseconds so back-to-back frames keep exact
//! line rate; events happen at whole nanoseconds (the ceiling of the
//! picosecond instant a frame's last bit leaves).

use crate::config::{serialisation_ps, ConfigError, LinkConfig, PfcConfig, SwitchConfig};
use crate::faults::LinkFaults;
use crate::stats::{CaptureEvent, CaptureKind, DropReason, FabricStats, NodeStats};
use crate::{Endpoint, Time};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_wire::pfc::{PfcFrame, PFC_DEST_MAC};
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

/// Index of a node, in the order of [`Fabric::add_node`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct NodeId(pub usize);

/// A capture sink: sees every frame event in time order.
pub type CaptureSink = Box<dyn FnMut(&CaptureEvent) + Send>;

const PS_PER_NS: u64 = 1000;
/// Priorities of 802.1Q.
const PRIORITIES: usize = 8;

/// The source MAC of the PFC frames the switch port towards node `i` sends.
pub fn switch_port_mac(i: usize) -> [u8; 6] {
    let [.., hi, lo] = (i as u64).to_be_bytes();
    [0x02, 0x5C, 0x00, 0x00, hi, lo]
}

fn ceil_ns(ps: u64) -> Time {
    ps.div_ceil(PS_PER_NS)
}

#[derive(Debug)]
enum Event {
    /// Query the endpoint again (transmit when idle, deadline), no advance.
    Kick { node: usize },
    /// The endpoint's deadline; stale unless `token` is still current.
    Wake { node: usize, token: u64 },
    /// The node's transmitter finished its frame.
    TxDone { node: usize },
    /// A frame fully received by the switch from `from`'s link.
    SwitchArrive { from: usize, frame: Vec<u8> },
    /// The switch port towards `port` finished its head frame.
    EgressDone { port: usize },
    /// A frame reaches the node.
    Deliver { node: usize, frame: Vec<u8> },
    /// Time to send XOFF again to `node` for `priority`, unless XON went
    /// out since (`token` no longer current).
    PfcRefresh {
        node: usize,
        priority: usize,
        token: u64,
    },
    /// A pause on the switch port towards `port` may have ended.
    EgressResume { port: usize },
}

struct Scheduled {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    /// Reversed: `BinaryHeap` is a max-heap and we want the earliest
    /// (time, sequence) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// A frame in the switch buffer, with the ingress port and priority PFC
/// accounts it to.
struct Buffered {
    frame: Vec<u8>,
    ingress: usize,
    priority: usize,
}

enum OnWire {
    Control(Vec<u8>),
    Data(Buffered),
}

#[derive(Default)]
struct EgressPort {
    /// One FIFO per priority; without PFC everything is in queue 0.
    queues: [VecDeque<Buffered>; PRIORITIES],
    /// PFC frames to the node, sent before any queue.
    control: VecDeque<Vec<u8>>,
    on_wire: Option<OnWire>,
    /// Data bytes queued, the frame on the wire included: all queues, and
    /// each.
    bytes: u64,
    queue_bytes: [u64; PRIORITIES],
    /// When the last frame's last bit left (ps).
    free_ps: u64,
    /// Until when (ps) the node paused each priority.
    paused_until_ps: [u64; PRIORITIES],
    /// The pending `EgressResume`, so one is scheduled per pause end.
    resume_at: Option<Time>,
}

/// PFC state of one ingress port: bytes held per priority, and whether the
/// node is paused (with the current refresh's token).
#[derive(Default)]
struct IngressPort {
    bytes: [u64; PRIORITIES],
    xoff_token: [Option<u64>; PRIORITIES],
    /// Priorities in a pause storm ([`Fabric::start_pause_storm`]): XOFF
    /// refreshed forever, no XON.
    storming: [bool; PRIORITIES],
}

struct Node<E> {
    endpoint: E,
    link: LinkConfig,
    /// Node -> switch direction.
    up: LinkFaults,
    /// Switch -> node direction.
    down: LinkFaults,
    tx_busy: bool,
    tx_free_ps: u64,
    /// The one pending wakeup: (time, token).
    wake: Option<(Time, u64)>,
    last_advance: Option<Time>,
    kick_pending: bool,
    egress: EgressPort,
    ingress: IngressPort,
}

/// A deterministic fabric of endpoints around one switch.
pub struct Fabric<E: Endpoint> {
    seed: u64,
    switch: SwitchConfig,
    nodes: Vec<Node<E>>,
    macs: BTreeMap<[u8; 6], usize>,
    events: BinaryHeap<Scheduled>,
    seq: u64,
    now: Time,
    next_token: u64,
    ecn_rng: ChaCha8Rng,
    buffer_used: u64,
    stats: FabricStats,
    captures: Vec<CaptureSink>,
}

impl<E: Endpoint> Fabric<E> {
    /// A fabric with no nodes. Panics on an invalid switch configuration;
    /// see [`Fabric::try_new`].
    pub fn new(seed: u64, switch: SwitchConfig) -> Self {
        match Self::try_new(seed, switch) {
            Ok(f) => f,
            Err(e) => panic!("invalid switch configuration: {e}"),
        }
    }

    pub fn try_new(seed: u64, switch: SwitchConfig) -> Result<Self, ConfigError> {
        switch.validate()?;
        let mut ecn_rng = ChaCha8Rng::seed_from_u64(seed);
        // Stream 0 marks; streams 1.. belong to link directions.
        ecn_rng.set_stream(0);
        Ok(Fabric {
            seed,
            switch,
            nodes: Vec::new(),
            macs: BTreeMap::new(),
            events: BinaryHeap::new(),
            seq: 0,
            now: 0,
            next_token: 0,
            ecn_rng,
            buffer_used: 0,
            stats: FabricStats::default(),
            captures: Vec::new(),
        })
    }

    /// Attaches an endpoint; the switch learns its `mac()` (a later node with
    /// the same MAC takes it over). Panics on an invalid link configuration;
    /// see [`Fabric::try_add_node`].
    pub fn add_node(&mut self, endpoint: E, link: LinkConfig) -> NodeId {
        match self.try_add_node(endpoint, link) {
            Ok(id) => id,
            Err(e) => panic!("invalid link configuration: {e}"),
        }
    }

    pub fn try_add_node(&mut self, endpoint: E, link: LinkConfig) -> Result<NodeId, ConfigError> {
        link.validate()?;
        let i = self.nodes.len();
        self.macs.insert(endpoint.mac(), i);
        let stream = 1 + 2 * i as u64;
        self.nodes.push(Node {
            endpoint,
            link,
            up: LinkFaults::new(self.seed, stream),
            down: LinkFaults::new(self.seed, stream + 1),
            tx_busy: false,
            tx_free_ps: 0,
            wake: None,
            last_advance: None,
            kick_pending: false,
            egress: EgressPort::default(),
            ingress: IngressPort::default(),
        });
        self.stats.nodes.push(NodeStats::default());
        self.schedule_kick(i);
        Ok(NodeId(i))
    }

    pub fn node(&self, id: NodeId) -> &E {
        &self.nodes[id.0].endpoint
    }

    /// Mutable access, e.g. to post work. The fabric then asks the endpoint
    /// again (transmit, deadline) at the current time, since it may have
    /// something new to send.
    pub fn node_mut(&mut self, id: NodeId) -> &mut E {
        self.schedule_kick(id.0);
        &mut self.nodes[id.0].endpoint
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn link(&self, id: NodeId) -> &LinkConfig {
        &self.nodes[id.0].link
    }

    pub fn switch_config(&self) -> &SwitchConfig {
        &self.switch
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn stats(&self) -> &FabricStats {
        &self.stats
    }

    /// Bytes queued (including the frame on the wire) at the switch port
    /// towards `id`.
    pub fn egress_queue_bytes(&self, id: NodeId) -> u64 {
        self.nodes[id.0].egress.bytes
    }

    /// Bytes of `priority` from the node `id` that the switch holds, as PFC
    /// counts them (0 without PFC or for a lossy priority).
    pub fn ingress_bytes(&self, id: NodeId, priority: u8) -> u64 {
        self.nodes[id.0].ingress.bytes[usize::from(priority) % PRIORITIES]
    }

    /// Whether the switch holds `id`'s node paused for `priority` (it sent
    /// XOFF and no XON since).
    pub fn pfc_pausing(&self, id: NodeId, priority: u8) -> bool {
        self.nodes[id.0].ingress.xoff_token[usize::from(priority) % PRIORITIES].is_some()
    }

    /// Starts a PFC storm towards `id`'s node: from now on the switch port
    /// towards it pauses `priority` with the longest pause (0xFFFF quanta),
    /// refreshed before each ends, and never resumes it, as a switch stuck
    /// at XOFF or a broken peer does (the pauses count in
    /// [`FabricStats::pfc_pauses`]). Only the node's pause watchdog lets it
    /// send that priority again.
    pub fn start_pause_storm(&mut self, id: NodeId, priority: u8) {
        let priority = usize::from(priority) % PRIORITIES;
        let ingress = &mut self.nodes[id.0].ingress;
        ingress.storming[priority] = true;
        if ingress.xoff_token[priority].is_none() {
            self.send_xoff(id.0, priority);
        }
    }

    /// Bytes held in the shared switch buffer.
    pub fn buffer_used(&self) -> u64 {
        self.buffer_used
    }

    /// Time of the next pending event (stale wakeups included).
    pub fn next_event_time(&self) -> Option<Time> {
        self.events.peek().map(|e| e.time)
    }

    /// Adds a capture sink; every later frame event is reported to all sinks
    /// in the order added.
    pub fn add_capture(&mut self, sink: CaptureSink) {
        self.captures.push(sink);
    }

    /// Replaces all capture sinks by `sink`.
    pub fn set_capture(&mut self, sink: CaptureSink) {
        self.captures.clear();
        self.captures.push(sink);
    }

    /// Removes (and so drops) every capture sink.
    pub fn clear_captures(&mut self) {
        self.captures.clear();
    }

    /// Processes every event with time <= `t`, then sets the clock to `t`
    /// (if later than now).
    pub fn run_until(&mut self, t: Time) {
        while self.events.peek().is_some_and(|e| e.time <= t) {
            self.step();
        }
        self.now = self.now.max(t);
    }

    /// Processes events while `cond` holds (checked before each event) and
    /// the next event is no later than `limit`. If it stops because nothing
    /// is left before `limit`, the clock moves to `limit`. Returns now.
    pub fn run_while(&mut self, limit: Time, mut cond: impl FnMut(&Self) -> bool) -> Time {
        loop {
            if !cond(self) {
                return self.now;
            }
            if self.events.peek().is_some_and(|e| e.time <= limit) {
                self.step();
            } else {
                self.now = self.now.max(limit);
                return self.now;
            }
        }
    }

    /// Processes the single next event. Returns false when none is left.
    pub fn step(&mut self) -> bool {
        let Some(s) = self.events.pop() else {
            return false;
        };
        self.now = s.time;
        match s.event {
            Event::Kick { node } => {
                self.nodes[node].kick_pending = false;
                self.service(node);
            }
            Event::Wake { node, token } => {
                if self.nodes[node].wake.is_some_and(|(_, t)| t == token) {
                    let n = &mut self.nodes[node];
                    n.wake = None;
                    n.last_advance = Some(self.now);
                    n.endpoint.advance(self.now);
                    self.service(node);
                }
            }
            Event::TxDone { node } => {
                self.nodes[node].tx_busy = false;
                self.service(node);
            }
            Event::SwitchArrive { from, frame } => self.switch_arrive(from, frame),
            Event::EgressDone { port } => self.egress_done(port),
            Event::PfcRefresh {
                node,
                priority,
                token,
            } => {
                if self.nodes[node].ingress.xoff_token[priority] == Some(token) {
                    self.send_xoff(node, priority);
                }
            }
            Event::EgressResume { port } => {
                let eg = &mut self.nodes[port].egress;
                if eg.resume_at == Some(self.now) {
                    eg.resume_at = None;
                }
                self.start_egress(port);
            }
            Event::Deliver { node, frame } => {
                let st = &mut self.stats;
                st.delivered_frames += 1;
                st.delivered_bytes += frame.len() as u64;
                st.nodes[node].rx_frames += 1;
                st.nodes[node].rx_bytes += frame.len() as u64;
                self.capture(node, CaptureKind::Delivered, &frame);
                self.nodes[node].endpoint.receive(self.now, frame);
                self.service(node);
            }
        }
        true
    }

    fn push(&mut self, time: Time, event: Event) {
        self.seq += 1;
        self.events.push(Scheduled {
            time,
            seq: self.seq,
            event,
        });
    }

    fn schedule_kick(&mut self, node: usize) {
        if !self.nodes[node].kick_pending {
            self.nodes[node].kick_pending = true;
            self.push(self.now, Event::Kick { node });
        }
    }

    fn capture(&mut self, node: usize, kind: CaptureKind, frame: &[u8]) {
        if self.captures.is_empty() {
            return;
        }
        let ev = CaptureEvent {
            time: self.now,
            node: NodeId(node),
            kind,
            frame,
        };
        for sink in &mut self.captures {
            sink(&ev);
        }
    }

    fn drop_frame(&mut self, node: usize, reason: DropReason, frame: &[u8]) {
        self.stats.dropped.count(reason);
        self.capture(node, CaptureKind::Dropped { reason }, frame);
    }

    /// After any call into the endpoint: offer the idle transmitter, then
    /// (re)arm the single wakeup at the endpoint's deadline.
    fn service(&mut self, node: usize) {
        let now = self.now;
        if !self.nodes[node].tx_busy {
            if let Some(frame) = self.nodes[node].endpoint.transmit(now) {
                self.start_tx(node, frame);
            }
        }
        let n = &mut self.nodes[node];
        let Some(deadline) = n.endpoint.next_deadline() else {
            // Any pending wakeup is now stale.
            n.wake = None;
            return;
        };
        // A deadline already due is served now, but at most one advance per
        // node per nanosecond, so an endpoint that keeps reporting a past
        // deadline cannot stall the clock.
        let at = if deadline > now {
            deadline
        } else if n.last_advance == Some(now) {
            now + 1
        } else {
            now
        };
        if n.wake.is_some_and(|(t, _)| t == at) {
            return;
        }
        self.next_token += 1;
        let token = self.next_token;
        self.nodes[node].wake = Some((at, token));
        self.push(at, Event::Wake { node, token });
    }

    /// The frame's first bit goes out at the instant the transmitter became
    /// idle if that is this nanosecond (back to back), else now.
    fn start_ps(now: Time, free_ps: u64) -> u64 {
        if ceil_ns(free_ps) == now {
            free_ps
        } else {
            now.saturating_mul(PS_PER_NS).max(free_ps)
        }
    }

    fn start_tx(&mut self, node: usize, mut frame: Vec<u8>) {
        let now = self.now;
        let len = frame.len() as u64;
        self.stats.emitted_frames += 1;
        self.stats.emitted_bytes += len;
        self.stats.nodes[node].tx_frames += 1;
        self.stats.nodes[node].tx_bytes += len;
        self.capture(node, CaptureKind::Emitted, &frame);

        let n = &mut self.nodes[node];
        let start = Self::start_ps(now, n.tx_free_ps);
        let end = start + serialisation_ps(frame.len(), n.link.rate_bps);
        n.tx_free_ps = end;
        n.tx_busy = true;
        let done = ceil_ns(end);
        let decision = n.up.decide(&n.link.faults, &mut frame);
        let arrive = done + n.link.latency_ns + self.switch.latency_ns;
        let reorder_delay = n.link.faults.reorder_delay_ns;
        self.push(done, Event::TxDone { node });
        self.cross_link(node, decision, frame, arrive, reorder_delay, |frame| {
            Event::SwitchArrive { from: node, frame }
        });
    }

    /// Finishes a frame's trip over `link` as the fault `decision` says:
    /// lost, or arriving at `arrive` (later when reordered), once or twice.
    /// `arrival` makes the event for one copy.
    fn cross_link(
        &mut self,
        link: usize,
        decision: crate::faults::FaultDecision,
        frame: Vec<u8>,
        arrive: Time,
        reorder_delay: Time,
        arrival: impl Fn(Vec<u8>) -> Event,
    ) {
        if decision.lost {
            self.drop_frame(link, DropReason::Loss, &frame);
            return;
        }
        self.count_faults(decision);
        let at = if decision.reordered {
            arrive + reorder_delay
        } else {
            arrive
        };
        if decision.duplicated {
            self.push(at, arrival(frame.clone()));
        }
        self.push(at, arrival(frame));
    }

    fn count_faults(&mut self, d: crate::faults::FaultDecision) {
        self.stats.corrupted += u64::from(d.corrupted);
        self.stats.duplicated += u64::from(d.duplicated);
        self.stats.reordered += u64::from(d.reordered);
    }

    fn switch_arrive(&mut self, from: usize, mut frame: Vec<u8>) {
        if frame.len() < rocenic_wire::ETH_LEN {
            self.drop_frame(from, DropReason::Runt, &frame);
            return;
        }
        let mut dst = [0u8; 6];
        dst.copy_from_slice(&frame[..6]);
        if dst == PFC_DEST_MAC && self.switch.pfc.is_some() {
            self.pfc_from_node(from, &frame);
            return;
        }
        let Some(&port) = self.macs.get(&dst) else {
            self.drop_frame(from, DropReason::UnknownDestination, &frame);
            return;
        };
        let len = frame.len() as u64;
        if self.buffer_used + len > self.switch.buffer_bytes {
            self.stats.nodes[port].buffer_drops += 1;
            self.drop_frame(from, DropReason::BufferFull, &frame);
            return;
        }
        let (priority, lossless) = match &self.switch.pfc {
            Some(pfc) => {
                let p = PfcConfig::priority_of(&frame);
                (usize::from(p), pfc.is_lossless(p))
            }
            None => (0, false),
        };
        if lossless {
            let pfc = self.switch.pfc.as_ref().expect("lossless implies PFC");
            let held = self.nodes[from].ingress.bytes[priority];
            if held + len > pfc.xoff_bytes + pfc.headroom_bytes {
                self.drop_frame(from, DropReason::HeadroomFull, &frame);
                return;
            }
        }
        let queued = self.nodes[port].egress.queue_bytes[priority];
        if self.switch.ecn.as_ref().is_some_and(|e| !e.on_dequeue) {
            self.ecn_mark(port, queued, &mut frame);
        }
        self.buffer_used += len;
        self.stats.buffer_high_water_bytes =
            self.stats.buffer_high_water_bytes.max(self.buffer_used);
        if lossless {
            let xoff = self.switch.pfc.as_ref().map_or(u64::MAX, |p| p.xoff_bytes);
            let ingress = &mut self.nodes[from].ingress;
            ingress.bytes[priority] += len;
            if ingress.bytes[priority] >= xoff && ingress.xoff_token[priority].is_none() {
                self.send_xoff(from, priority);
            }
        }
        let eg = &mut self.nodes[port].egress;
        eg.bytes += len;
        eg.queue_bytes[priority] += len;
        eg.queues[priority].push_back(Buffered {
            frame,
            ingress: from,
            priority,
        });
        let hw = &mut self.stats.nodes[port].egress_high_water_bytes;
        *hw = (*hw).max(eg.bytes);
        if eg.on_wire.is_none() {
            self.start_egress(port);
        }
    }

    /// A PFC frame from `from`'s node: its lossless priorities pause (or
    /// resume) on the switch port towards it.
    fn pfc_from_node(&mut self, from: usize, frame: &[u8]) {
        let Ok(pfc_frame) = PfcFrame::decode(frame) else {
            self.drop_frame(from, DropReason::UnsupportedControl, frame);
            return;
        };
        let lossless = self.switch.pfc.as_ref().map_or(0, |p| p.priorities);
        self.stats.nodes[from].pfc_frames_received += 1;
        let now_ps = self.now * PS_PER_NS;
        let n = &mut self.nodes[from];
        for (priority, &quanta) in pfc_frame.quanta.iter().enumerate() {
            if pfc_frame.enable & lossless & (1 << priority) != 0 {
                n.egress.paused_until_ps[priority] =
                    now_ps + PfcConfig::quanta_ps(quanta, n.link.rate_bps);
            }
        }
        if n.egress.on_wire.is_none() {
            self.start_egress(from);
        }
    }

    /// Sends `node` a pause of `priority` and schedules its refresh.
    fn send_xoff(&mut self, node: usize, priority: usize) {
        let quanta = if self.nodes[node].ingress.storming[priority] {
            u16::MAX
        } else {
            self.switch.pfc.as_ref().map_or(0, |p| p.pause_quanta)
        };
        self.next_token += 1;
        let token = self.next_token;
        self.nodes[node].ingress.xoff_token[priority] = Some(token);
        self.stats.pfc_pauses += 1;
        self.stats.nodes[node].pfc_xoff_sent += 1;
        self.send_pfc(node, priority, quanta);
        let half = PfcConfig::quanta_ps(quanta, self.nodes[node].link.rate_bps) / 2;
        self.push(
            self.now + ceil_ns(half).max(1),
            Event::PfcRefresh {
                node,
                priority,
                token,
            },
        );
    }

    fn send_pfc(&mut self, node: usize, priority: usize, quanta: u16) {
        let mut frame = PfcFrame {
            src_mac: switch_port_mac(node),
            enable: 1 << priority,
            ..PfcFrame::default()
        };
        frame.quanta[priority] = quanta;
        let eg = &mut self.nodes[node].egress;
        eg.control.push_back(frame.encode());
        if eg.on_wire.is_none() {
            self.start_egress(node);
        }
    }

    /// A lossless frame from `ingress` left the buffer: XON once its count
    /// is down to the threshold.
    fn release(&mut self, ingress: usize, priority: usize, len: u64) {
        let xon = self.switch.pfc.as_ref().map_or(0, |p| p.xon_bytes);
        let port = &mut self.nodes[ingress].ingress;
        port.bytes[priority] -= len;
        if port.xoff_token[priority].is_some()
            && !port.storming[priority]
            && port.bytes[priority] <= xon
        {
            port.xoff_token[priority] = None;
            self.stats.nodes[ingress].pfc_xon_sent += 1;
            self.send_pfc(ingress, priority, 0);
        }
    }

    /// Puts the port's next frame on the wire, if it is idle: a PFC frame,
    /// else the head of the highest priority queue its node has not
    /// paused. When only paused queues hold frames, a resume is scheduled
    /// for the first pause's end.
    fn start_egress(&mut self, port: usize) {
        let now = self.now;
        let now_ps = now * PS_PER_NS;
        let eg = &mut self.nodes[port].egress;
        if eg.on_wire.is_some() {
            return;
        }
        let next = if let Some(control) = eg.control.pop_front() {
            OnWire::Control(control)
        } else {
            let ready = (0..PRIORITIES)
                .rev()
                .find(|&p| !eg.queues[p].is_empty() && eg.paused_until_ps[p] <= now_ps);
            let Some(priority) = ready else {
                let resume = (0..PRIORITIES)
                    .filter(|&p| !eg.queues[p].is_empty())
                    .map(|p| ceil_ns(eg.paused_until_ps[p]))
                    .min();
                if let Some(at) = resume {
                    if eg.resume_at.is_none_or(|t| at < t) {
                        eg.resume_at = Some(at);
                        self.push(at, Event::EgressResume { port });
                    }
                }
                return;
            };
            let head = eg.queues[priority].pop_front().expect("queue is not empty");
            OnWire::Data(head)
        };
        let len = match &next {
            OnWire::Control(frame) | OnWire::Data(Buffered { frame, .. }) => frame.len(),
        };
        let n = &mut self.nodes[port];
        let start = Self::start_ps(now, n.egress.free_ps);
        let end = start + serialisation_ps(len, n.link.rate_bps);
        n.egress.free_ps = end;
        n.egress.on_wire = Some(next);
        self.push(ceil_ns(end), Event::EgressDone { port });
    }

    /// CE-marks `frame` on its way to `port` with the congestion point's
    /// probability for a queue of `queued` bytes.
    fn ecn_mark(&mut self, port: usize, queued: u64, frame: &mut [u8]) {
        let Some(ecn) = &self.switch.ecn else {
            return;
        };
        let p = ecn.mark_probability(queued);
        // Draw only in the random band: below Kmin and above Kmax the
        // outcome is certain.
        let mark = p >= 1.0 || (p > 0.0 && self.ecn_rng.gen::<f64>() < p);
        if mark && rocenic_wire::mark_ce(frame) {
            self.stats.ecn_marked += 1;
            self.stats.nodes[port].ecn_marked += 1;
        }
    }

    fn egress_done(&mut self, port: usize) {
        let now = self.now;
        let n = &mut self.nodes[port];
        let Some(done) = n.egress.on_wire.take() else {
            return;
        };
        let mut frame = match done {
            OnWire::Control(frame) => frame,
            OnWire::Data(mut b) => {
                let len = b.frame.len() as u64;
                n.egress.bytes -= len;
                n.egress.queue_bytes[b.priority] -= len;
                let behind = n.egress.queue_bytes[b.priority];
                self.buffer_used -= len;
                let lossless = self
                    .switch
                    .pfc
                    .as_ref()
                    .is_some_and(|p| p.is_lossless(b.priority as u8));
                if lossless {
                    self.release(b.ingress, b.priority, len);
                }
                if self.switch.ecn.as_ref().is_some_and(|e| e.on_dequeue) {
                    self.ecn_mark(port, behind, &mut b.frame);
                }
                b.frame
            }
        };
        let n = &mut self.nodes[port];
        let decision = n.down.decide(&n.link.faults, &mut frame);
        let arrive = now + n.link.latency_ns;
        let reorder_delay = n.link.faults.reorder_delay_ns;
        self.start_egress(port);
        self.cross_link(port, decision, frame, arrive, reorder_delay, |frame| {
            Event::Deliver { node: port, frame }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reports a deadline that is always already due.
    struct Nagger {
        advances: u64,
    }

    impl Endpoint for Nagger {
        fn mac(&self) -> [u8; 6] {
            [2, 0, 0, 0, 0, 9]
        }
        fn receive(&mut self, _: Time, _: Vec<u8>) {}
        fn transmit(&mut self, _: Time) -> Option<Vec<u8>> {
            None
        }
        fn next_deadline(&self) -> Option<Time> {
            Some(0)
        }
        fn advance(&mut self, _: Time) {
            self.advances += 1;
        }
    }

    #[test]
    fn past_deadlines_cannot_stall_the_clock() {
        let mut f = Fabric::new(1, SwitchConfig::default());
        let id = f.add_node(Nagger { advances: 0 }, LinkConfig::default());
        f.run_until(1000);
        assert_eq!(f.now(), 1000);
        // At most one advance per nanosecond, and it keeps being served.
        let a = f.node(id).advances;
        assert!((1000..=1001).contains(&a), "{a} advances");
    }

    #[test]
    fn ordering_is_by_time_then_sequence() {
        let a = Scheduled {
            time: 5,
            seq: 2,
            event: Event::TxDone { node: 0 },
        };
        let b = Scheduled {
            time: 5,
            seq: 1,
            event: Event::TxDone { node: 0 },
        };
        let c = Scheduled {
            time: 4,
            seq: 9,
            event: Event::TxDone { node: 0 },
        };
        let mut h = BinaryHeap::from(vec![a, b, c]);
        assert_eq!(h.pop().map(|s| (s.time, s.seq)), Some((4, 9)));
        assert_eq!(h.pop().map(|s| (s.time, s.seq)), Some((5, 1)));
        assert_eq!(h.pop().map(|s| (s.time, s.seq)), Some((5, 2)));
    }
}
