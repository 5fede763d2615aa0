//! The DCQCN congestion point: CE marking probability measured against the
//! formula, over a queue that grows through the whole Kmin..Kmax band.

mod common;

use common::*;
use rocenic_fabric::*;
use rocenic_wire::{ecn, RoceFrame};

const N: u32 = 40_000;
const FRAME: u64 = 1026;
const CP: EcnConfig = EcnConfig {
    kmin_bytes: 1_000_000,
    kmax_bytes: 11_000_000,
    pmax: 0.5,
    on_dequeue: false,
};

fn not_ect(psn: u32) -> bool {
    psn % 10 == 9
}

/// A at 100 Gb/s floods C at 50 Gb/s: the egress queue grows by half a
/// frame per frame, from 0 to about 20 MB.
fn run(seed: u64, cp: Option<EcnConfig>) -> Fabric<TestNode> {
    let mut plan = Plan::to(mac(3), N);
    plan.ecn = |psn| {
        if not_ect(psn) {
            ecn::NOT_ECT
        } else {
            ecn::ECT0
        }
    };
    let sw = SwitchConfig {
        buffer_bytes: 64 << 20,
        ecn: cp,
        pfc: None,
        latency_ns: 0,
    };
    let mut f = Fabric::new(seed, sw);
    f.add_node(TestNode::source(1, plan), LinkConfig::default());
    f.add_node(
        TestNode::sink(3),
        LinkConfig {
            rate_bps: 50e9,
            ..LinkConfig::default()
        },
    );
    f.run_until(1_000_000_000);
    f
}

/// (queue bytes found on arrival, ECN codepoint delivered) per frame.
/// The queue is reconstructed from observed times alone: frame k reaches
/// the switch at emission + 84 + 500 ns; frame j leaves the egress port at
/// its delivery - 500 ns and, if that is the same nanosecond, after frame k
/// joined (k's arrival was scheduled first).
fn observe(f: &Fabric<TestNode>) -> Vec<(u64, u8)> {
    let sent = &f.node(NodeId(0)).sent;
    let got = &f.node(NodeId(1)).received;
    assert_eq!(got.len() as u32, N, "nothing may be dropped");
    let done: Vec<Time> = got.iter().map(|(t, _)| t - 500).collect();
    let mut left = 0usize;
    let mut out = Vec::new();
    for (k, ((ts, _), (_, r))) in sent.iter().zip(got).enumerate() {
        let arrive = ts + 84 + 500;
        while left < k && done[left] < arrive {
            left += 1;
        }
        let decoded = RoceFrame::decode(r).expect("marked frames still decode");
        assert_eq!(decoded.bth.psn, k as u32, "FIFO order");
        out.push(((k - left) as u64 * FRAME, decoded.ip.ecn()));
    }
    out
}

#[test]
fn marking_follows_the_red_ramp() {
    let f = run(21, Some(CP));
    let obs = observe(&f);
    let marked_total = obs.iter().filter(|(_, e)| *e == ecn::CE).count() as u64;
    assert_eq!(f.stats().ecn_marked, marked_total);
    assert_eq!(f.stats().nodes[1].ecn_marked, marked_total);

    let (mut below, mut above) = (0, 0);
    // Ten bins across the band: expected marks and variance per bin.
    let mut bins = [(0u64, 0u64, 0.0f64, 0.0f64); 10];
    for (k, &(q, e)) in obs.iter().enumerate() {
        if not_ect(k as u32) {
            assert_eq!(e, ecn::NOT_ECT, "Not-ECT frame {k} changed");
            continue;
        }
        let marked = e == ecn::CE;
        if q <= CP.kmin_bytes {
            below += 1;
            assert!(!marked, "frame {k} marked at q = {q} <= Kmin");
        } else if q > CP.kmax_bytes {
            above += 1;
            assert!(marked, "frame {k} unmarked at q = {q} > Kmax");
        } else {
            assert_eq!(e, if marked { ecn::CE } else { ecn::ECT0 });
            let p = CP.pmax * (q - CP.kmin_bytes) as f64 / (CP.kmax_bytes - CP.kmin_bytes) as f64;
            let i = (((q - CP.kmin_bytes - 1) * 10) / (CP.kmax_bytes - CP.kmin_bytes)) as usize;
            let b = &mut bins[i];
            b.0 += 1;
            b.1 += u64::from(marked);
            b.2 += p;
            b.3 += p * (1.0 - p);
        }
    }
    assert!(
        below > 1500 && above > 15_000,
        "{below} below, {above} above"
    );
    let (mut n, mut obs_sum, mut exp_sum, mut var_sum) = (0, 0, 0.0, 0.0);
    for (i, (count, marks, exp, var)) in bins.iter().enumerate() {
        assert!(*count > 1500, "bin {i} has only {count} frames");
        let dev = (*marks as f64 - exp).abs();
        assert!(
            dev <= 4.5 * var.sqrt() + 1.0,
            "bin {i}: {marks} marks, expected {exp:.1} +- {:.1}",
            4.5 * var.sqrt()
        );
        n += count;
        obs_sum += marks;
        exp_sum += exp;
        var_sum += var;
    }
    assert!(
        (obs_sum as f64 - exp_sum).abs() <= 4.5 * var_sum.sqrt(),
        "{obs_sum} marks in the band over {n} frames, expected {exp_sum:.1}"
    );
}

#[test]
fn marking_is_random_but_seeded() {
    let a = observe(&run(1, Some(CP)));
    let b = observe(&run(1, Some(CP)));
    let c = observe(&run(2, Some(CP)));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn no_congestion_point_never_marks() {
    let f = run(21, None);
    assert_eq!(f.stats().ecn_marked, 0);
    let obs = observe(&f);
    assert!(obs.iter().all(|(_, e)| *e != ecn::CE));
    assert!(obs.last().unwrap().0 > CP.kmax_bytes);
}

/// Marking on dequeue: a frame is marked as it leaves (the end of its
/// serialisation, its delivery less the link latency) when the bytes
/// queued behind it then are above the threshold, so the tail of a burst,
/// leaving a queue that drains, goes unmarked, where marked on arrival
/// (into the longest queue) it is.
#[test]
fn marking_on_dequeue_reports_the_queue_behind_the_frame() {
    const BURST: u32 = 2_000;
    const K: u64 = 200_000;
    let step = |on_dequeue| EcnConfig {
        kmin_bytes: K,
        kmax_bytes: K,
        pmax: 1.0,
        on_dequeue,
    };
    let burst = |cp: EcnConfig| {
        let sw = SwitchConfig {
            buffer_bytes: 64 << 20,
            ecn: Some(cp),
            pfc: None,
            latency_ns: 0,
        };
        let mut plan = Plan::to(mac(3), BURST);
        plan.ecn = |_| ecn::ECT0;
        let mut f = Fabric::new(5, sw);
        f.add_node(TestNode::source(1, plan), LinkConfig::default());
        let slow = LinkConfig {
            rate_bps: 50e9,
            ..LinkConfig::default()
        };
        f.add_node(TestNode::sink(3), slow);
        f.run_until(1_000_000_000);
        f
    };
    let marks = |f: &Fabric<TestNode>| -> Vec<bool> {
        let got = &f.node(NodeId(1)).received;
        assert_eq!(got.len() as u32, BURST);
        got.iter()
            .map(|(_, r)| RoceFrame::decode(r).unwrap().ip.ecn() == ecn::CE)
            .collect()
    };

    let on_arrival = marks(&burst(step(false)));
    assert!(!on_arrival[0] && on_arrival[BURST as usize - 1]);

    let f = burst(step(true));
    let on_dequeue = marks(&f);
    assert!(on_dequeue.iter().any(|&m| m) && !on_dequeue[BURST as usize - 1]);
    assert_eq!(
        f.stats().ecn_marked,
        on_dequeue.iter().filter(|&&m| m).count() as u64
    );
    // Frame by frame, where the timing leaves no doubt: frames behind j
    // are those that reached the switch (emission + 84 + 500 ns) before
    // j left; one arriving in the same nanosecond may count either way.
    let sent = &f.node(NodeId(0)).sent;
    let left: Vec<Time> = f
        .node(NodeId(1))
        .received
        .iter()
        .map(|(t, _)| t - 500)
        .collect();
    let arrive: Vec<Time> = sent.iter().map(|(t, _)| t + 84 + 500).collect();
    let mut checked = 0;
    for j in 0..BURST as usize {
        let behind = |strict: bool| {
            let n = arrive[j + 1..]
                .iter()
                .filter(|&&a| if strict { a < left[j] } else { a <= left[j] })
                .count();
            n as u64 * FRAME > K
        };
        if behind(true) == behind(false) {
            assert_eq!(on_dequeue[j], behind(true), "frame {j}");
            checked += 1;
        }
    }
    assert!(
        checked > BURST * 9 / 10,
        "only {checked} frames unambiguous"
    );
}
