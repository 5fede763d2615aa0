//! Reliability of the RC transport on a faulty wire: loss, duplication and
//! reordering are repaired by Go-Back-N, duplicates are never executed
//! twice, and every message completes exactly once with memory intact.

mod common;

use common::*;

fn mixed_ops() -> Vec<Op> {
    let mut ops = Vec::new();
    let sizes = [0u64, 1, 1023, 1024, 1025, 5000, 64 << 10, 200_000];
    for (i, &size) in sizes.iter().enumerate() {
        for (j, &verb) in ALL_VERBS.iter().enumerate() {
            if (i + j) % 2 == 0 {
                ops.push(Op::Message(verb, size));
            }
        }
        ops.push(if i % 2 == 0 {
            Op::FetchAdd(i as u64 + 1)
        } else {
            Op::CmpSwap(i % 4 == 1)
        });
    }
    ops.push(Op::Message(Verb::Write, 1 << 20));
    ops.push(Op::Message(Verb::Read, 1 << 20));
    ops
}

fn lossy(seed: u64, faults: Faults) -> Pair {
    let mut pair = Pair::new(seed);
    pair.faults = faults;
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 1024,
            timeout: 6,
            ..ConnOpts::default()
        },
    );
    run_workload(&mut pair, a, b, &mixed_ops(), seed, 20_000_000_000);
    pair
}

#[test]
fn one_percent_loss_with_duplication_and_reordering() {
    let pair = lossy(
        11,
        Faults {
            drop: 0.01,
            duplicate: 0.01,
            reorder: 0.01,
            reorder_ns: 3000,
            ce_mark: 0.01,
        },
    );
    assert!(pair.frames_dropped > 0 && pair.frames_duplicated > 0);
    let a = pair.nics[0].counters();
    let b = pair.nics[1].counters();
    assert!(a.retransmitted_frames > 0, "{a:?}");
    assert!(b.duplicate_requests > 0, "{b:?}");
}

#[test]
fn five_percent_loss_with_duplication_and_reordering() {
    for seed in [21, 22] {
        let pair = lossy(
            seed,
            Faults {
                drop: 0.05,
                duplicate: 0.02,
                reorder: 0.02,
                reorder_ns: 5000,
                ce_mark: 0.02,
            },
        );
        let a = pair.nics[0].counters();
        let b = pair.nics[1].counters();
        assert!(a.retransmitted_frames > 0);
        assert!(b.naks_sent.psn_sequence > 0, "{b:?}");
        assert_eq!(
            a.naks_received.psn_sequence,
            b.naks_sent.psn_sequence - lost_naks(&pair)
        );
    }
}

/// NAKs B sent that A never saw: bounded by what the wire dropped.
fn lost_naks(pair: &Pair) -> u64 {
    let sent = pair.nics[1].counters().naks_sent.psn_sequence;
    let got = pair.nics[0].counters().naks_received.psn_sequence;
    assert!(got <= sent + pair.frames_duplicated);
    sent.saturating_sub(got)
}

#[test]
fn lossless_run_needs_no_retransmission() {
    let pair = lossy(5, Faults::default());
    let a = pair.nics[0].counters();
    assert_eq!(a.retransmitted_frames, 0);
    assert_eq!(a.timeouts, 0);
    assert_eq!(pair.nics[1].counters().duplicate_requests, 0);
}
