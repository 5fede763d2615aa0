//! Fault injection: measured rates match the configured probabilities,
//! each fault does what it claims, and a perfect link has none.

mod common;

use common::*;
use rocenic_fabric::*;
use rocenic_wire::RoceFrame;
use std::collections::BTreeMap;

const N: u32 = 20_000;
const PAYLOAD: usize = 128;
/// 14 + 20 + 8 + 12 + 128 + 4 = 186 bytes, 210 on the wire: 16.8 ns.
const FRAME_LEN: usize = 186;

/// A sends N frames back to back to B; B's link carries `faults`.
fn run(faults: FaultConfig, seed: u64) -> Fabric<TestNode> {
    let mut plan = Plan::to(mac(2), N);
    plan.payload = PAYLOAD;
    let mut f = Fabric::new(
        seed,
        SwitchConfig {
            ecn: None,
            ..SwitchConfig::default()
        },
    );
    f.add_node(TestNode::source(1, plan), LinkConfig::default());
    f.add_node(
        TestNode::sink(2),
        LinkConfig {
            faults,
            ..LinkConfig::default()
        },
    );
    f.run_until(100_000_000);
    f
}

fn faults() -> FaultConfig {
    FaultConfig::NONE
}

/// Where frame k would arrive on a perfect link: A's transmitter and the
/// egress port both run back to back at 16.8 ns per frame.
fn clean_arrival(k: u64) -> Time {
    let first_switch = 17 + 500; // ceil(16.8) + latency
    first_switch + (16_800 * (k + 1)).div_ceil(1000) + 500
}

#[test]
fn perfect_links_have_no_faults() {
    let f = run(faults(), 5);
    let st = f.stats();
    assert_eq!(st.emitted_frames, u64::from(N));
    assert_eq!(st.delivered_frames, u64::from(N));
    assert_eq!(st.dropped.total(), 0);
    assert_eq!((st.duplicated, st.reordered, st.corrupted), (0, 0, 0));
    let got = &f.node(NodeId(1)).received;
    let sent = &f.node(NodeId(0)).sent;
    for (k, ((t, r), (_, s))) in got.iter().zip(sent).enumerate() {
        assert_eq!(r.len(), FRAME_LEN);
        assert_eq!(r, s);
        assert_eq!(psn_of(r), k as u32);
        assert_eq!(*t, clean_arrival(k as u64), "frame {k}");
    }
}

#[test]
fn loss_rate_matches_and_survivors_stay_in_order() {
    let f = run(
        FaultConfig {
            loss: 0.1,
            ..faults()
        },
        6,
    );
    let st = f.stats();
    assert_binomial(st.dropped.loss, u64::from(N), 0.1, 4.5, "losses");
    assert_eq!(st.dropped.total(), st.dropped.loss);
    assert_eq!(st.delivered_frames + st.dropped.loss, u64::from(N));
    let got = &f.node(NodeId(1)).received;
    assert_eq!(got.len() as u64, st.delivered_frames);
    let psns: Vec<u32> = got.iter().map(|(_, r)| psn_of(r)).collect();
    assert!(psns.windows(2).all(|w| w[0] < w[1]));
    // Survivors are untouched and on time.
    for (t, r) in got {
        assert_eq!(*t, clean_arrival(u64::from(psn_of(r))));
    }
}

#[test]
fn loss_applies_in_both_directions_of_the_faulty_link() {
    // A (lossy link) and B send to each other: A -> B crosses A's link
    // towards the switch, B -> A crosses it towards A.
    let mut fab = Fabric::new(
        11,
        SwitchConfig {
            ecn: None,
            ..SwitchConfig::default()
        },
    );
    let mut pa = Plan::to(mac(2), N);
    pa.payload = PAYLOAD;
    let mut pb = Plan::to(mac(1), N);
    pb.payload = PAYLOAD;
    let lossy = LinkConfig {
        faults: FaultConfig {
            loss: 0.2,
            ..faults()
        },
        ..LinkConfig::default()
    };
    let a = fab.add_node(TestNode::source(1, pa), lossy);
    let b = fab.add_node(TestNode::source(2, pb), LinkConfig::default());
    fab.run_until(100_000_000);
    let a_to_b = fab.node(b).received.len() as u64;
    let b_to_a = fab.node(a).received.len() as u64;
    assert_binomial(u64::from(N) - a_to_b, u64::from(N), 0.2, 4.5, "A->B losses");
    assert_binomial(u64::from(N) - b_to_a, u64::from(N), 0.2, 4.5, "B->A losses");
    assert_eq!(fab.stats().dropped.loss, 2 * u64::from(N) - a_to_b - b_to_a);
}

#[test]
fn duplicates_are_extra_identical_copies() {
    let f = run(
        FaultConfig {
            duplicate: 0.05,
            ..faults()
        },
        7,
    );
    let st = f.stats();
    assert_binomial(st.duplicated, u64::from(N), 0.05, 4.5, "duplicates");
    let got = &f.node(NodeId(1)).received;
    assert_eq!(got.len() as u64, u64::from(N) + st.duplicated);
    let mut seen: BTreeMap<u32, Vec<(Time, &[u8])>> = BTreeMap::new();
    for (t, r) in got {
        seen.entry(psn_of(r)).or_default().push((*t, r));
    }
    assert_eq!(seen.len() as u32, N);
    let twice: Vec<_> = seen.values().filter(|v| v.len() == 2).collect();
    assert_eq!(twice.len() as u64, st.duplicated);
    assert!(seen.values().all(|v| v.len() <= 2));
    for v in twice {
        assert_eq!(v[0], v[1], "copy differs in time or bytes");
    }
}

#[test]
fn reordered_frames_are_held_back_and_overtaken() {
    let delay = 10_000;
    let f = run(
        FaultConfig {
            reorder: 0.05,
            reorder_delay_ns: delay,
            ..faults()
        },
        8,
    );
    let st = f.stats();
    assert_binomial(st.reordered, u64::from(N), 0.05, 4.5, "reorders");
    let got = &f.node(NodeId(1)).received;
    assert_eq!(got.len() as u32, N);
    let mut late = 0;
    for (t, r) in got {
        let on_time = clean_arrival(u64::from(psn_of(r)));
        if *t == on_time + delay {
            late += 1;
        } else {
            assert_eq!(*t, on_time);
        }
    }
    assert_eq!(late, st.reordered);
    // Held-back frames are overtaken: some PSN arrives after a larger one.
    let psns: Vec<u32> = got.iter().map(|(_, r)| psn_of(r)).collect();
    let inversions = psns.windows(2).filter(|w| w[0] > w[1]).count() as u64;
    assert!(inversions > 0 && inversions <= st.reordered);
}

#[test]
fn corrupted_frames_fail_decoding_and_the_rest_are_intact() {
    let f = run(
        FaultConfig {
            corrupt: 0.05,
            ..faults()
        },
        9,
    );
    let st = f.stats();
    assert_binomial(st.corrupted, u64::from(N), 0.05, 4.5, "corruptions");
    assert_eq!(st.delivered_frames, u64::from(N));
    let sent = &f.node(NodeId(0)).sent;
    let got = &f.node(NodeId(1)).received;
    let mut bad = 0;
    for ((_, s), (_, r)) in sent.iter().zip(got) {
        assert_eq!(r.len(), s.len());
        assert_eq!(r[..14], s[..14], "the Ethernet header is never hit");
        let flipped: u32 = r.iter().zip(s).map(|(x, y)| (x ^ y).count_ones()).sum();
        match flipped {
            0 => assert!(RoceFrame::decode(r).is_ok()),
            1 => {
                bad += 1;
                assert!(RoceFrame::decode(r).is_err(), "corruption not caught");
            }
            n => panic!("{n} bits flipped in one frame"),
        }
    }
    assert_eq!(bad, st.corrupted);
}

#[test]
fn all_faults_at_once_keep_the_books_balanced() {
    let f = run(
        FaultConfig {
            loss: 0.05,
            duplicate: 0.05,
            reorder: 0.05,
            reorder_delay_ns: 1_000,
            corrupt: 0.05,
        },
        10,
    );
    let st = f.stats();
    assert_eq!(
        st.delivered_frames,
        st.emitted_frames - st.dropped.loss + st.duplicated
    );
    assert_eq!(f.node(NodeId(1)).received.len() as u64, st.delivered_frames);
    for (count, what) in [
        (st.dropped.loss, "loss"),
        (st.duplicated, "dup"),
        (st.reordered, "reorder"),
        (st.corrupted, "corrupt"),
    ] {
        // Three of the four only apply to frames that were not lost.
        let p = if what == "loss" { 0.05 } else { 0.05 * 0.95 };
        assert_binomial(count, u64::from(N), p, 4.5, what);
    }
}
