//! Two-node scenarios on the reference model: every verb, message sizes
//! 0 B ..= 1 MiB, with and without loss, duplication and reordering. Each
//! run checks every completion (once, in order, successful) and every byte
//! of both hosts' buffers against a sequential prediction.

use crate::faults::lossy;
use proptest::prelude::*;
use rocenic_fabric::FaultConfig;
use rocenic_sim::scenario::{run, Report, ScenarioConfig, Workload};

const WORKLOADS: [Workload; 5] = [
    Workload::Write,
    Workload::Read,
    Workload::Send,
    Workload::Atomic,
    Workload::Mix,
];

fn assert_clean(config: &ScenarioConfig, report: &Report) {
    assert!(
        report.data_verified && report.messages_completed == report.messages_posted,
        "{config:?}\n{:#?}",
        (
            &report.mismatches,
            &report.completions_by_status,
            report.messages_completed,
            report.messages_posted
        )
    );
    assert_eq!(
        report.messages_posted,
        u64::from(config.count * config.qps),
        "{config:?}"
    );
}

#[test]
fn every_verb_and_size_without_faults() {
    for workload in WORKLOADS {
        for size in [0, 1, 255, 256, 257, 4095, 4096, 4097, 65536] {
            for mtu in [256, 4096] {
                let config = ScenarioConfig {
                    workload,
                    size,
                    count: 6,
                    mtu,
                    seed: size ^ u64::from(mtu),
                    ..ScenarioConfig::default()
                };
                let report = run(&config, None).unwrap();
                assert_clean(&config, &report);
                assert_eq!(report.retransmitted_frames, 0, "{config:?}");
            }
        }
    }
}

#[test]
fn one_mebibyte_messages_of_every_verb() {
    for workload in [
        Workload::Write,
        Workload::Read,
        Workload::Send,
        Workload::Mix,
    ] {
        let config = ScenarioConfig {
            workload,
            size: 1 << 20,
            count: 3,
            ..ScenarioConfig::default()
        };
        let report = run(&config, None).unwrap();
        assert_clean(&config, &report);
    }
}

/// The reference model is a line-rate transport: long back-to-back WRITEs
/// and READs at MTU 4096 come within 1 % of the 100 GbE framing bound and
/// never above it (which would mean the fabric or the bound is wrong).
#[test]
fn long_transfers_reach_the_framing_bound() {
    for workload in [Workload::Write, Workload::Read] {
        let config = ScenarioConfig {
            workload,
            size: 1 << 20,
            count: 16,
            ..ScenarioConfig::default()
        };
        let report = run(&config, None).unwrap();
        assert_clean(&config, &report);
        let bound = report
            .goodput_bound_gbps
            .expect("a single-verb workload has a bound");
        assert!(
            report.goodput_gbps <= bound && report.goodput_gbps >= 0.99 * bound,
            "{workload:?}: {:.3} Gb/s against a bound of {bound:.3}",
            report.goodput_gbps
        );
        // 16 messages of 1 MiB at the bound: about 11,700 a second.
        let per_second = report.goodput_gbps * 1e9 / 8.0 / (1 << 20) as f64;
        assert!((report.messages_per_second - per_second).abs() < per_second * 1e-9);
        assert!(report.cycles_per_second.is_none(), "no RTL node");
    }
    let atomics = ScenarioConfig {
        workload: Workload::Atomic,
        count: 2,
        ..ScenarioConfig::default()
    };
    assert_eq!(run(&atomics, None).unwrap().goodput_bound_gbps, None);
}

/// A slower link is the bottleneck: the framing bound is its, and with
/// ECN the switch marks what queues towards it and only the NIC behind it
/// sends CNPs, which the other one receives (WRITEs into a slow B; READs
/// by a slow A, whose responses queue).
#[test]
fn a_slow_link_is_the_bottleneck_and_is_marked() {
    for (workload, slow_a) in [(Workload::Write, false), (Workload::Read, true)] {
        let (slow, fast) = (25e9, 100e9);
        let config = ScenarioConfig {
            workload,
            size: 65536,
            count: 8,
            qps: 2,
            ecn: true,
            a_link_bps: if slow_a { slow } else { fast },
            b_link_bps: if slow_a { fast } else { slow },
            ..ScenarioConfig::default()
        };
        let report = run(&config, None).unwrap();
        assert_clean(&config, &report);
        let bound = report.goodput_bound_gbps.unwrap();
        assert!((24.0..25.0).contains(&bound), "{workload:?}: bound {bound}");
        assert!(report.goodput_gbps <= bound);
        let (notifier, sender) = if slow_a {
            (&report.requester, &report.responder)
        } else {
            (&report.responder, &report.requester)
        };
        assert!(
            report.fabric.ecn_marked > 0 && notifier.cnps_sent > 0,
            "{workload:?}"
        );
        assert_eq!(notifier.ecn_ce_received, report.fabric.ecn_marked);
        assert_eq!(
            (sender.cnps_sent, sender.cnps_received),
            (0, notifier.cnps_sent)
        );
    }
}

#[test]
fn loss_duplication_and_reordering_are_survived() {
    for loss in [0.01, 0.05] {
        for workload in WORKLOADS {
            for (size, mtu) in [(0, 1024), (3000, 1024), (65536, 4096), (1 << 20, 4096)] {
                let config = ScenarioConfig {
                    workload,
                    size,
                    count: if size >= 1 << 20 { 2 } else { 12 },
                    qps: 2,
                    mtu,
                    faults: lossy(loss),
                    seed: 1000 + size,
                    ..ScenarioConfig::default()
                };
                let report = run(&config, None).unwrap();
                assert_clean(&config, &report);
                // Hundreds of frames each: some requests (or READ
                // responses) are lost and must be sent again.
                if size >= 65536 && workload != Workload::Atomic {
                    assert!(
                        report.retransmitted_frames > 0,
                        "{config:?}: no retransmission under loss"
                    );
                }
            }
        }
    }
}

#[test]
fn corrupted_frames_are_dropped_and_recovered() {
    let config = ScenarioConfig {
        workload: Workload::Mix,
        size: 20000,
        count: 16,
        faults: FaultConfig {
            corrupt: 0.03,
            ..FaultConfig::default()
        },
        seed: 5,
        ..ScenarioConfig::default()
    };
    let report = run(&config, None).unwrap();
    assert_clean(&config, &report);
    let dropped: u64 = report.requester.rx_dropped.values().sum::<u64>()
        + report.responder.rx_dropped.values().sum::<u64>();
    assert!(dropped > 0, "corruption caused no drop");
    assert!(report.retransmitted_frames > 0);
}

#[test]
fn a_dead_peer_exhausts_retries_and_flushes() {
    let config = ScenarioConfig {
        workload: Workload::Write,
        size: 8192,
        count: 5,
        faults: FaultConfig {
            loss: 1.0,
            ..FaultConfig::default()
        },
        timeout: 4,
        retry_cnt: 3,
        time_limit_ns: 50_000_000,
        ..ScenarioConfig::default()
    };
    let report = run(&config, None).unwrap();
    assert_eq!(report.messages_completed, 0);
    assert!(!report.data_verified);
    assert_eq!(report.completions_by_status.get("RetryExcErr"), Some(&1));
    assert_eq!(report.completions_by_status.get("WrFlushErr"), Some(&4));
    // Initial transmission plus retry_cnt retries of the oldest message.
    assert!(report.requester.timeouts >= 4, "{:?}", report.requester);
}

#[test]
fn ipv6_and_many_qps() {
    let config = ScenarioConfig {
        workload: Workload::Mix,
        size: 5000,
        count: 8,
        qps: 64,
        mtu: 1024,
        ipv6: true,
        faults: lossy(0.01),
        seed: 64,
        ..ScenarioConfig::default()
    };
    let report = run(&config, None).unwrap();
    assert_clean(&config, &report);
}

#[test]
fn page_sizes_from_4k_to_2m() {
    for page_size in [4096, 65536, 2 << 20] {
        let config = ScenarioConfig {
            workload: Workload::Mix,
            size: 300_000,
            count: 4,
            page_size,
            seed: page_size,
            ..ScenarioConfig::default()
        };
        let report = run(&config, None).unwrap();
        assert_clean(&config, &report);
    }
}

#[test]
fn the_same_seed_gives_the_same_capture() {
    let dir = std::env::temp_dir().join(format!("rocenic-det-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = ScenarioConfig {
        workload: Workload::Mix,
        size: 9000,
        count: 10,
        faults: lossy(0.05),
        seed: 77,
        ..ScenarioConfig::default()
    };
    let mut captures = Vec::new();
    for (i, seed) in [77, 77, 78].into_iter().enumerate() {
        let path = dir.join(format!("{i}.pcap"));
        let report = run(
            &ScenarioConfig {
                seed,
                ..config.clone()
            },
            Some(&path),
        )
        .unwrap();
        assert_clean(&config, &report);
        captures.push(std::fs::read(&path).unwrap());
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(captures[0].len() > 10_000);
    assert_eq!(captures[0], captures[1]);
    assert_ne!(captures[0], captures[2]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random scenarios; a failure shrinks to a config whose seed replays it
    /// (`rocenic sim` takes the same flags).
    #[test]
    fn random_scenarios_complete_with_correct_memory(
        workload in proptest::sample::select(WORKLOADS.to_vec()),
        size in prop_oneof![0u64..64, 64u64..20_000, Just(1u64 << 17)],
        count in 1u32..10,
        qps in 1u32..5,
        mtu in proptest::sample::select(vec![256u32, 512, 1024, 2048, 4096]),
        loss in prop_oneof![Just(0.0), 0.0..0.05],
        seed in any::<u64>(),
    ) {
        let config = ScenarioConfig { workload, size, count, qps, mtu, faults: lossy(loss), seed, ..ScenarioConfig::default() };
        let report = run(&config, None).unwrap();
        prop_assert!(report.data_verified, "{:?} {:?}", config, report.mismatches);
        prop_assert_eq!(report.messages_completed, report.messages_posted);
    }
}
