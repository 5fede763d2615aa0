//! Link rate, latency and switch queueing, checked against arrival times
//! computed by hand.

mod common;

use common::*;
use rocenic_fabric::*;

fn link(rate_bps: f64, latency_ns: Time) -> LinkConfig {
    LinkConfig {
        rate_bps,
        latency_ns,
        faults: FaultConfig::NONE,
    }
}

fn no_ecn() -> SwitchConfig {
    SwitchConfig {
        ecn: None,
        ..SwitchConfig::default()
    }
}

#[test]
fn back_to_back_frames_arrive_at_exact_times() {
    let sw = SwitchConfig {
        latency_ns: 100,
        ..no_ecn()
    };
    let mut f = Fabric::new(1, sw);
    let a = f.add_node(TestNode::source(1, Plan::to(mac(2), 100)), link(100e9, 500));
    let b = f.add_node(TestNode::sink(2), link(100e9, 500));
    f.run_until(1_000_000);

    // 1026-byte frames are 1050 wire bytes: 84 ns at 100 Gb/s. Frame k
    // leaves A during [84k, 84k+84), reaches the switch at 84k+84+500, is
    // forwarded 100 ns later, leaves the idle egress port 84 ns after that
    // and arrives 500 ns later: 1268 + 84k.
    let sent = &f.node(a).sent;
    let got = &f.node(b).received;
    assert_eq!(sent.len(), 100);
    assert_eq!(got.len(), 100);
    for (k, ((ts, fs), (tr, fr))) in sent.iter().zip(got).enumerate() {
        let k = k as u64;
        assert_eq!(fs.len(), 1026);
        assert_eq!(*ts, 84 * k, "emission of frame {k}");
        assert_eq!(*tr, 1268 + 84 * k, "arrival of frame {k}");
        assert_eq!(fs, fr);
    }
    let st = f.stats();
    assert_eq!(st.emitted_frames, 100);
    assert_eq!(st.delivered_frames, 100);
    assert_eq!(st.delivered_bytes, 102_600);
    assert_eq!(st.dropped.total(), 0);
    assert_eq!(st.nodes[a.0].tx_frames, 100);
    assert_eq!(st.nodes[b.0].rx_bytes, 102_600);
}

#[test]
fn minimum_frames_keep_exact_line_rate_without_rounding_drift() {
    // 60-byte frames pad to 64 and occupy 84 wire bytes: 6.72 ns at
    // 100 Gb/s. Frame k's last bit leaves A at 6.72(k+1) ns, reaches the
    // switch at the next whole ns plus 500; the egress port then runs back
    // to back from 507 ns, so frame k arrives at ceil(507 + 6.72(k+1)) + 500.
    let mut plan = Plan::to(mac(2), 1000);
    plan.raw_len = Some(60);
    let mut f = Fabric::new(1, no_ecn());
    f.add_node(TestNode::source(1, plan), link(100e9, 500));
    let b = f.add_node(TestNode::sink(2), link(100e9, 500));
    f.run_until(100_000);
    let got = &f.node(b).received;
    assert_eq!(got.len(), 1000);
    for (k, (t, fr)) in got.iter().enumerate() {
        let k = k as u64;
        assert_eq!(fr.len(), 60);
        assert_eq!(*t, 1007 + (6720 * (k + 1)).div_ceil(1000), "frame {k}");
    }
    // 1000 frames in 6720 ns: exactly the framing bound.
    assert_eq!(got[999].0 - got[0].0, 6720 - 7);
}

#[test]
fn slower_egress_link_and_asymmetric_latency() {
    // A at 100 Gb/s, 200 ns; B at 25 Gb/s, 1000 ns. The switch port towards
    // B serialises each 1050-byte wire frame in 336 ns, starting with frame
    // 0 at 84 + 200 = 284 ns, back to back after that.
    let mut f = Fabric::new(1, no_ecn());
    let a = f.add_node(TestNode::source(1, Plan::to(mac(2), 20)), link(100e9, 200));
    let b = f.add_node(TestNode::sink(2), link(25e9, 1000));
    f.run_until(1_000_000);
    let got = &f.node(b).received;
    assert_eq!(got.len(), 20);
    for (k, (t, _)) in got.iter().enumerate() {
        assert_eq!(*t, 284 + 336 * (k as u64 + 1) + 1000, "frame {k}");
    }
    // A transmitted at its own 100 Gb/s regardless of B.
    assert_eq!(f.node(a).sent[19].0, 84 * 19);
    // Queue towards B peaked while A outran it.
    assert!(f.stats().nodes[b.0].egress_high_water_bytes >= 10 * 1026);
}

#[test]
fn paced_source_wakes_at_its_deadlines() {
    let mut plan = Plan::to(mac(2), 10);
    plan.interval_ns = 1000;
    plan.start_ns = 250;
    let mut f = Fabric::new(1, no_ecn());
    let a = f.add_node(TestNode::source(1, plan), link(100e9, 500));
    let b = f.add_node(TestNode::sink(2), link(100e9, 500));
    f.run_until(100_000);
    let sent: Vec<Time> = f.node(a).sent.iter().map(|s| s.0).collect();
    assert_eq!(sent, (0..10).map(|k| 250 + 1000 * k).collect::<Vec<_>>());
    let got: Vec<Time> = f.node(b).received.iter().map(|s| s.0).collect();
    assert_eq!(
        got,
        (0..10).map(|k| 250 + 1168 + 1000 * k).collect::<Vec<_>>()
    );
    // Woken once per frame, not once per nanosecond.
    assert!(f.node(a).advances <= 11, "{} advances", f.node(a).advances);
}

#[test]
fn incast_two_to_one_tail_drops_exactly() {
    // A and B each send 1000 back-to-back frames to C; all links 100 Gb/s.
    // The buffer holds exactly 50 frames, counted until their last bit
    // leaves. At 584 + 84k both frame k's arrive (A's first: it was
    // emitted first) before the egress finishes a frame, so the occupancy
    // they find is k + 1. Both fit up to k = 47; from k = 48 on, A's fills
    // the last slot and B's is dropped: 952 drops, 1048 deliveries.
    let sw = SwitchConfig {
        buffer_bytes: 50 * 1026,
        ecn: None,
        pfc: None,
        latency_ns: 0,
    };
    let mut f = Fabric::new(3, sw);
    let a = f.add_node(
        TestNode::source(1, Plan::to(mac(3), 1000)),
        link(100e9, 500),
    );
    let b = f.add_node(
        TestNode::source(2, Plan::to(mac(3), 1000)),
        link(100e9, 500),
    );
    let c = f.add_node(TestNode::sink(3), link(100e9, 500));
    f.run_until(10_000_000);
    let st = f.stats();
    assert_eq!(st.emitted_frames, 2000);
    assert_eq!(st.dropped.buffer_full, 952);
    assert_eq!(st.nodes[c.0].buffer_drops, 952);
    assert_eq!(st.delivered_frames, 1048);
    assert_eq!(st.buffer_high_water_bytes, 50 * 1026);
    assert_eq!(st.nodes[c.0].egress_high_water_bytes, 50 * 1026);
    assert_eq!(f.buffer_used(), 0);

    let got = &f.node(c).received;
    let from = |n: u8| got.iter().filter(|(_, fr)| fr[11] == n).count();
    assert_eq!(from(1), 1000);
    assert_eq!(from(2), 48);
    // The egress port never idles: one frame every 84 ns from 584 on.
    for (k, (t, _)) in got.iter().enumerate() {
        assert_eq!(*t, 584 + 84 * (k as u64 + 1) + 500, "delivery {k}");
    }
    assert_eq!(f.node(a).sent.len(), 1000);
    assert_eq!(f.node(b).sent.len(), 1000);
}

#[test]
fn unknown_destinations_and_runts_are_dropped_and_counted() {
    let mut f = Fabric::new(1, no_ecn());
    f.add_node(TestNode::source(1, Plan::to(mac(99), 7)), link(100e9, 10));
    let mut runt = Plan::to(mac(2), 5);
    runt.raw_len = Some(9);
    f.add_node(TestNode::source(3, runt), link(100e9, 10));
    let b = f.add_node(TestNode::sink(2), link(100e9, 10));
    let drops = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let d2 = drops.clone();
    f.add_capture(Box::new(move |ev: &CaptureEvent| {
        if let CaptureKind::Dropped { reason } = ev.kind {
            d2.lock().unwrap().push((ev.node, reason));
        }
    }));
    f.run_until(1_000_000);
    let st = f.stats();
    assert_eq!(st.dropped.unknown_destination, 7);
    assert_eq!(st.dropped.runt, 5);
    assert_eq!(st.delivered_frames, 0);
    assert!(f.node(b).received.is_empty());
    let drops = drops.lock().unwrap();
    assert_eq!(drops.len(), 12);
    assert!(drops[..].contains(&(NodeId(0), DropReason::UnknownDestination)));
    assert!(drops[..].contains(&(NodeId(1), DropReason::Runt)));
}

#[test]
fn work_posted_through_node_mut_is_sent() {
    let mut f = Fabric::new(1, no_ecn());
    let a = f.add_node(TestNode::sink(1), link(100e9, 500));
    let b = f.add_node(TestNode::sink(2), link(100e9, 500));
    f.run_until(10_000);
    assert_eq!(f.stats().emitted_frames, 0);
    let frame = send_frame(mac(1), mac(2), 5, 100, 0);
    f.node_mut(a).outbox.push_back(frame.clone());
    f.run_until(20_000);
    assert_eq!(f.node(a).sent, vec![(10_000, frame.clone())]);
    assert_eq!(f.node(b).received.len(), 1);
    assert_eq!(f.node(b).received[0].1, frame);
}

#[test]
fn run_while_stops_on_condition_and_at_limit() {
    let mut f = Fabric::new(1, no_ecn());
    f.add_node(TestNode::source(1, Plan::to(mac(2), 100)), link(100e9, 500));
    let b = f.add_node(TestNode::sink(2), link(100e9, 500));
    let t = f.run_while(1_000_000, |f| f.node(b).received.len() < 10);
    assert_eq!(f.node(b).received.len(), 10);
    assert_eq!(t, 1168 + 84 * 9);
    let t = f.run_while(5_000, |_| true);
    assert_eq!(t, 5_000);
    assert!(f.node(b).received.len() < 100);
    let t = f.run_while(u64::MAX / 2, |_| true);
    assert_eq!(t, u64::MAX / 2);
    assert_eq!(f.node(b).received.len(), 100);
    assert_eq!(f.next_event_time(), None);
}

#[test]
fn invalid_configurations_are_errors() {
    let bad_link = LinkConfig {
        rate_bps: -1.0,
        ..LinkConfig::default()
    };
    let mut f = Fabric::new(1, no_ecn());
    assert!(f.try_add_node(TestNode::sink(1), bad_link).is_err());
    assert_eq!(f.node_count(), 0);
    let bad_switch = SwitchConfig {
        ecn: Some(EcnConfig {
            kmin_bytes: 10,
            kmax_bytes: 5,
            pmax: 0.1,
            on_dequeue: false,
        }),
        ..SwitchConfig::default()
    };
    assert!(Fabric::<TestNode>::try_new(1, bad_switch).is_err());
}
