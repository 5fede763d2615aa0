//! Priority flow control at the switch: per-ingress XOFF/XON with
//! headroom makes an incast lossless, a pause from a node holds only its
//! priority's queue, a node that pauses forever backs the pause up to
//! the senders, refreshed, without a drop, until it lets go, and a pause
//! storm towards a node holds it to the end.

mod common;

use common::*;
use rocenic_fabric::{wire_bytes, Fabric, LinkConfig, NodeId, PfcConfig, SwitchConfig, Time};
use rocenic_wire::pfc::{PfcFrame, PFC_DEST_MAC};

const SOURCES: u8 = 4;
const FRAMES: u32 = 500;
const SINK: u8 = 9;
const TOTAL: u64 = SOURCES as u64 * FRAMES as u64;

fn pfc() -> PfcConfig {
    PfcConfig {
        priorities: 1 << 3,
        xoff_bytes: 16 << 10,
        xon_bytes: 12 << 10,
        // Two 500 ns links at 100 Gb/s (12,500 bytes) and two 1,026-byte
        // frames in serialisation.
        headroom_bytes: 16 << 10,
        pause_quanta: 0xFFFF,
    }
}

/// A buffer that holds every source's XOFF and headroom, but not the
/// whole incast.
fn switch(pfc: Option<PfcConfig>) -> SwitchConfig {
    SwitchConfig {
        buffer_bytes: u64::from(SOURCES) * (32 << 10) + 4096,
        ecn: None,
        pfc,
        latency_ns: 0,
    }
}

/// `SOURCES` nodes each sending `FRAMES` back to back to one sink, all at
/// 100 Gb/s: a 4:1 incast.
fn incast(pfc: Option<PfcConfig>) -> (Fabric<TestNode>, Vec<NodeId>, NodeId) {
    let mut f = Fabric::new(7, switch(pfc));
    let sink = f.add_node(TestNode::sink(SINK), LinkConfig::default());
    let sources = (1..=SOURCES)
        .map(|n| {
            let node = TestNode::source(n, Plan::to(mac(SINK), FRAMES)).honouring_pfc(100e9);
            f.add_node(node, LinkConfig::default())
        })
        .collect();
    (f, sources, sink)
}

fn is_pfc(frame: &[u8]) -> bool {
    frame[..6] == PFC_DEST_MAC
}

#[test]
fn without_pfc_the_incast_overflows_the_buffer() {
    let (mut f, _, sink) = incast(None);
    f.run_until(10_000_000);
    let st = f.stats();
    assert!(st.dropped.buffer_full > 100, "{:?}", st.dropped);
    assert_eq!(st.pfc_pauses, 0);
    let got = f.node(sink).received.len() as u64;
    assert_eq!(got + st.dropped.total(), TOTAL);
}

#[test]
fn with_pfc_the_incast_loses_nothing_and_keeps_the_link_full() {
    let (mut f, sources, sink) = incast(Some(pfc()));
    let mut most_held = 0;
    let mut most_buffered = 0;
    while f.step() {
        for &s in &sources {
            most_held = most_held.max(f.ingress_bytes(s, 3));
        }
        most_buffered = most_buffered.max(f.buffer_used());
    }
    let st = f.stats();
    assert_eq!(st.dropped.total(), 0, "{:?}", st.dropped);
    let cfg = pfc();
    assert!(
        most_held > cfg.xoff_bytes && most_held <= cfg.xoff_bytes + cfg.headroom_bytes,
        "an ingress held {most_held} bytes"
    );
    assert!(most_buffered <= f.switch_config().buffer_bytes);

    // Every frame arrived, each source's in order.
    let received = &f.node(sink).received;
    assert_eq!(received.len() as u64, TOTAL);
    for n in 1..=SOURCES {
        let psns: Vec<u32> = received
            .iter()
            .filter(|(_, fr)| fr[6..12] == mac(n))
            .map(|(_, fr)| psn_of(fr))
            .collect();
        assert_eq!(psns, (0..FRAMES).collect::<Vec<_>>(), "source {n}");
    }

    // Each source was paused and resumed, and the sink's link never idled
    // once the first frame was in: the run took the bottleneck's time for
    // the frames, plus a frame's and two links' latency at the start.
    for &s in &sources {
        let ns = &st.nodes[s.0];
        assert!(ns.pfc_xoff_sent > 0 && ns.pfc_xon_sent > 0, "{ns:?}");
        let pauses = f
            .node(s)
            .received
            .iter()
            .filter(|(_, fr)| is_pfc(fr))
            .count() as u64;
        assert_eq!(pauses, ns.pfc_xoff_sent + ns.pfc_xon_sent);
    }
    let last = received.last().map(|(t, _)| *t).unwrap_or_default();
    let bottleneck_ns = TOTAL * wire_bytes(received[0].1.len()) * 8 / 100;
    assert!(
        last <= bottleneck_ns + 1_200,
        "last frame at {last} ns, the bottleneck alone takes {bottleneck_ns} ns"
    );
}

#[test]
fn headroom_short_of_the_round_trip_drops_frames() {
    let short = PfcConfig {
        headroom_bytes: 2 << 10,
        ..pfc()
    };
    let (mut f, _, sink) = incast(Some(short));
    f.run_until(10_000_000);
    let st = f.stats();
    assert!(st.dropped.headroom_full > 0, "{:?}", st.dropped);
    assert_eq!(st.dropped.buffer_full, 0);
    let got = f.node(sink).received.len() as u64;
    assert_eq!(got + st.dropped.total(), TOTAL);
}

fn pause(src: u8, priority: usize, quanta: u16) -> Vec<u8> {
    let mut frame = PfcFrame {
        src_mac: mac(src),
        enable: 1 << priority,
        ..PfcFrame::default()
    };
    frame.quanta[priority] = quanta;
    frame.encode()
}

/// Frames the sink received from source `n`.
fn from(f: &Fabric<TestNode>, sink: NodeId, n: u8) -> usize {
    f.node(sink)
        .received
        .iter()
        .filter(|(_, fr)| fr[6..12] == mac(n))
        .count()
}

#[test]
fn a_node_s_pause_holds_only_its_priority() {
    let both = PfcConfig {
        priorities: (1 << 3) | (1 << 6),
        ..pfc()
    };
    let mut f = Fabric::new(3, switch(Some(both)));
    let sink = f.add_node(TestNode::sink(SINK), LinkConfig::default());
    let mut paced = Plan::to(mac(SINK), 200);
    paced.interval_ns = 400;
    let honouring = |n, plan| TestNode::source(n, plan).honouring_pfc(100e9);
    let low = f.add_node(honouring(1, paced.clone()), LinkConfig::default());
    let high = f.add_node(
        honouring(2, Plan { dscp: 48, ..paced }),
        LinkConfig::default(),
    );
    // The sink pauses priority 3 for 10,000 quanta (51.2 us) at 10 us.
    f.run_until(10_000);
    f.node_mut(sink).outbox.push_back(pause(SINK, 3, 10_000));
    f.run_until(20_000);
    let (low_at_pause, high_at_pause) = (from(&f, sink, 1), from(&f, sink, 2));
    f.run_until(60_000);
    assert!(
        from(&f, sink, 1) <= low_at_pause + 1,
        "priority 3 kept flowing"
    );
    assert!(
        from(&f, sink, 2) >= high_at_pause + 90,
        "priority 6 stopped"
    );
    assert_eq!(f.stats().nodes[sink.0].pfc_frames_received, 1);
    // It resumes by itself after the pause time; nothing was lost.
    f.run_until(1_000_000);
    assert_eq!(from(&f, sink, 1), 200);
    assert_eq!(from(&f, sink, 2), 200);
    assert_eq!(f.stats().dropped.total(), 0);
    assert!(
        f.stats().nodes[low.0].pfc_xoff_sent > 0,
        "the held queue backed up"
    );
    assert_eq!(f.stats().nodes[high.0].pfc_xoff_sent, 0);
}

#[test]
fn a_pause_that_never_ends_backs_up_refreshed_without_a_drop_until_xon() {
    let (mut f, sources, sink) = incast(Some(pfc()));
    // The sink keeps priority 3 paused: a refresh every 100 us for 2 ms.
    let mut t: Time = 0;
    while t < 2_000_000 {
        f.node_mut(sink).outbox.push_back(pause(SINK, 3, 0xFFFF));
        t += 100_000;
        f.run_until(t);
    }
    let st = f.stats().clone();
    let before = f.node(sink).received.len();
    assert!(before < 10, "{before} frames passed the pause");
    assert_eq!(st.dropped.total(), 0, "{:?}", st.dropped);
    for &s in &sources {
        let ns = &st.nodes[s.0];
        // XOFF at the start, then again each half pause (168 us) of 2 ms.
        assert!((11..=13).contains(&ns.pfc_xoff_sent), "{ns:?}");
        assert_eq!(ns.pfc_xon_sent, 0);
        assert!(f.pfc_pausing(s, 3));
    }
    assert!(f.egress_queue_bytes(sink) > u64::from(SOURCES) * pfc().xoff_bytes);
    // XON: everything drains, in order, and the sources are let go.
    f.node_mut(sink).outbox.push_back(pause(SINK, 3, 0));
    f.run_until(10_000_000);
    assert_eq!(f.node(sink).received.len() as u64, TOTAL);
    assert_eq!(f.stats().dropped.total(), 0);
    for &s in &sources {
        assert!(!f.pfc_pausing(s, 3));
        assert!(f.stats().nodes[s.0].pfc_xon_sent > 0);
    }
}

#[test]
fn pause_frames_the_switch_does_not_act_on_are_counted_drops() {
    let mut f = Fabric::new(1, switch(Some(pfc())));
    let a = f.add_node(TestNode::sink(1), LinkConfig::default());
    // 802.3x PAUSE (opcode 0x0001) to the same address.
    let mut pause_8023x = pause(1, 3, 100);
    pause_8023x[14] = 0x00;
    f.node_mut(a).outbox.push_back(pause_8023x);
    f.run_until(10_000);
    assert_eq!(f.stats().dropped.unsupported_control, 1);
    assert_eq!(f.stats().nodes[a.0].pfc_frames_received, 0);
    // Without PFC a pause is an unknown destination, as before.
    let mut g = Fabric::new(1, switch(None));
    let b = g.add_node(TestNode::sink(1), LinkConfig::default());
    g.node_mut(b).outbox.push_back(pause(1, 3, 100));
    g.run_until(10_000);
    assert_eq!(g.stats().dropped.unknown_destination, 1);
}

/// A pause storm towards one source (`Fabric::start_pause_storm`): its
/// priority stays paused, refreshed every half pause, with no XON even
/// once the switch holds none of its bytes, so a source without a pause
/// watchdog sends nothing more; the others finish.
#[test]
fn a_pause_storm_holds_its_node_until_the_end() {
    let (mut f, sources, sink) = incast(Some(pfc()));
    f.run_until(1_000);
    let sent_before = f.node(sources[0]).sent.len();
    f.start_pause_storm(sources[0], 3);
    f.run_until(3_000_000);
    // It sends on for the pause's 500 ns on the wire: 1,026-byte frames
    // take 84 ns each at 100 Gb/s.
    let sent = f.node(sources[0]).sent.len();
    assert!(
        sent <= sent_before + 7,
        "the stormed node sent {sent_before} then {sent}"
    );
    assert_eq!(from(&f, sink, 1), sent);
    for n in 2..=SOURCES {
        assert_eq!(from(&f, sink, n), FRAMES as usize);
    }
    let ns = &f.stats().nodes[sources[0].0];
    // The first XOFF, then one each half pause (168 us) of 3 ms.
    assert!((18..=19).contains(&ns.pfc_xoff_sent), "{ns:?}");
    assert_eq!(ns.pfc_xon_sent, 0);
    assert!(f.pfc_pausing(sources[0], 3));
    assert_eq!(f.ingress_bytes(sources[0], 3), 0);
}
