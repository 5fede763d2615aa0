//! The scenarios of `rocenic sim` with NIC B's core in RTL
//! (`--backend rtl-responder`: the Verilated `responder_path`, scored
//! against its shadow model frame by frame, DMA write by DMA write and CQE
//! by CQE; NIC A is the model requester). Each run must complete every
//! message once, in order, with both hosts' memory as the sequential
//! prediction says, and the scoreboard must find no difference. The core's
//! rings hold 16 work requests per QP, so a count above that posts the
//! workload while traffic flows: receive WQEs go into the running core
//! between frames.
//!
//! The core serves `max_dest_rd_atomic` 16: its response queue holds 8
//! items per QP and makes a push to a full QP queue wait, where a lossy
//! READ run on 8 QPs once overflowed it (see `response_queue`,
//! "Capacity"). The lossy READ and atomic runs below fill queues.

use crate::rtl_common::faults::lossy;
use proptest::prelude::*;
use rocenic_fabric::FaultConfig;
use rocenic_model::nic::{Nic, NicConfig};
use rocenic_model::verbs::{QpCaps, VerbsError};
use rocenic_rtl::host_dma::HostDmaConfig;
use rocenic_rtl::nic::RtlNic;
use rocenic_sim::scenario::{run_backend, Backend, Report, ScenarioConfig, Workload};
use verilator_sys::ResponderPath;

const WORKLOADS: [Workload; 5] = [
    Workload::Write,
    Workload::Read,
    Workload::Send,
    Workload::Atomic,
    Workload::Mix,
];

fn rtl(config: &ScenarioConfig) -> Report {
    run_backend(Backend::RtlResponder, config, None).unwrap()
}

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
    assert_eq!(report.backend, "rtl-responder");
    let cycles = report.cycles.expect("an RTL run reports cycles");
    assert_eq!(cycles, report.sim_time_ns.div_ceil(4), "{config:?}");
    assert!(report
        .core_active_cycles
        .is_some_and(|c| c > 0 && c <= cycles));
    assert_eq!(report.clock_mhz, Some(250.0));
}

#[test]
fn every_verb_and_size_on_the_rtl_responder() {
    for workload in WORKLOADS {
        for size in [0, 1, 4097, 65536] {
            for mtu in [256, 4096] {
                let config = ScenarioConfig {
                    workload,
                    size,
                    count: 4,
                    mtu,
                    seed: size ^ u64::from(mtu),
                    ..ScenarioConfig::default()
                };
                let report = rtl(&config);
                assert_clean(&config, &report);
                assert_eq!(report.retransmitted_frames, 0, "{config:?}");
            }
        }
    }
}

#[test]
fn lossy_links_and_more_messages_than_the_rings_hold() {
    for (seed, workload, ipv6, qps) in [
        (1, Workload::Mix, false, 4),
        (2, Workload::Send, true, 2),
        (3, Workload::Read, false, 8),
        (4, Workload::Atomic, false, 8),
    ] {
        let config = ScenarioConfig {
            workload,
            size: 3000,
            count: 40,
            qps,
            mtu: 1024,
            ipv6,
            faults: FaultConfig {
                loss: 0.02,
                duplicate: 0.02,
                reorder: 0.02,
                reorder_delay_ns: 3_000,
                corrupt: 0.01,
            },
            seed,
            ..ScenarioConfig::default()
        };
        let report = rtl(&config);
        assert_clean(&config, &report);
        assert!(
            report.retransmitted_frames > 0,
            "{config:?}: the links lose"
        );
    }
}

/// Issue #4's scale and loss corner on the responder half: 64 QPs active
/// at once, 5 % loss plus duplication and reordering, every workload.
/// Few messages per QP keep it to seconds; what it checks is that the
/// core keeps 64 QPs' state apart under retransmission (every message
/// once, in order, both memories as predicted, the shadow agreeing
/// frame by frame).
#[test]
fn sixty_four_qps_with_five_percent_loss_duplication_and_reordering() {
    for (i, workload) in WORKLOADS.into_iter().enumerate() {
        let config = ScenarioConfig {
            workload,
            // Three packets at MTU 1024 (atomics move 8 bytes).
            size: 3000,
            count: 6,
            qps: 64,
            mtu: 1024,
            faults: FaultConfig {
                loss: 0.05,
                duplicate: 0.05,
                reorder: 0.05,
                reorder_delay_ns: 3_000,
                ..FaultConfig::default()
            },
            seed: 64 + i as u64,
            ..ScenarioConfig::default()
        };
        let report = rtl(&config);
        assert_clean(&config, &report);
        let f = &report.fabric;
        assert!(
            report.retransmitted_frames > 0
                && f.duplicated > 0
                && f.reordered > 0
                && f.dropped.loss > 0,
            "{config:?}: every fault happened: {f:?}"
        );
        println!(
            "{workload:?}: {} messages on 64 QPs, {} frames ({} retransmitted, {} duplicated, {} reordered), {} core cycles",
            report.messages_completed,
            report.frames,
            report.retransmitted_frames,
            f.duplicated,
            f.reordered,
            report.core_active_cycles.unwrap_or(0)
        );
    }
}

#[test]
fn the_core_limits_are_the_shadow_device_limits() {
    let config = ScenarioConfig::default();
    let mut nic = RtlNic::<ResponderPath>::new(
        rocenic_sim::scenario::nic_config(2, &config),
        HostDmaConfig::default(),
    );
    let shadow = nic.setup().unwrap();
    assert_eq!(shadow.config().max_qp_wr, 16);
    // READ / atomic resources per QP, not the response queue's 8 items.
    assert_eq!(shadow.config().max_qp_rd_atom, 16);
    let pd = shadow.alloc_pd();
    let cq = shadow.create_cq(64);
    let caps = |wr, sge| QpCaps {
        max_send_wr: wr,
        max_recv_wr: wr,
        max_sge: sge,
    };
    assert!(shadow.create_qp(pd, cq, cq, caps(16, 1)).is_ok());
    for bad in [caps(17, 1), caps(16, 2)] {
        assert!(matches!(
            shadow.create_qp(pd, cq, cq, bad),
            Err(VerbsError::InvalidAttribute(_))
        ));
    }
    // The model NIC keeps its large default.
    let model = Nic::new(NicConfig::new([2, 0, 0, 0, 0, 1], [10, 0, 0, 1].into()));
    assert!(model.config().max_qp_wr > 16);
}

#[test]
fn ecn_is_refused_on_an_rtl_half() {
    let config = ScenarioConfig {
        ecn: true,
        ..ScenarioConfig::default()
    };
    for backend in [Backend::RtlResponder, Backend::RtlRequester] {
        let err = run_backend(backend, &config, None).unwrap_err();
        assert!(err.to_string().contains("--ecn"), "{err}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// Random scenarios on the RTL responder; a failure shrinks to a config
    /// whose flags replay it (`rocenic sim --backend rtl-responder`).
    #[test]
    fn random_scenarios_on_the_rtl_responder(
        workload in proptest::sample::select(WORKLOADS.to_vec()),
        size in prop_oneof![0u64..64, 64u64..20_000],
        count in 1u32..24,
        qps in 1u32..5,
        mtu in proptest::sample::select(vec![256u32, 512, 1024, 2048, 4096]),
        loss in prop_oneof![Just(0.0), 0.0..0.05],
        seed in any::<u64>(),
    ) {
        let config = ScenarioConfig {
            workload,
            size,
            count,
            qps,
            mtu,
            faults: lossy(loss),
            seed,
            ..ScenarioConfig::default()
        };
        let report = rtl(&config);
        prop_assert!(report.data_verified, "{:?} {:?}", config, report.mismatches);
        prop_assert_eq!(report.messages_completed, report.messages_posted);
    }
}

/// `--backend rtl-requester`: NIC A's core is the Verilated
/// `requester_path`, scored against its shadow model; every workload, a
/// count above the rings' 16 WQEs per QP (posted as completions free
/// room), lossless, and lossy for Write, Send and Mix.
#[test]
fn every_workload_on_the_rtl_requester() {
    for (i, workload) in WORKLOADS.into_iter().enumerate() {
        // Lossy runs for every other workload (CI time).
        let lossy_run = (i % 2 == 0).then_some((20_000, 4096, 0.03));
        for (size, mtu, loss) in [(4097, 256, 0.0)].into_iter().chain(lossy_run) {
            let config = ScenarioConfig {
                workload,
                size,
                count: 20,
                qps: 2,
                mtu,
                faults: lossy(loss),
                seed: i as u64 * 7 + size,
                time_limit_ns: 50_000_000,
                ..ScenarioConfig::default()
            };
            let report = run_backend(Backend::RtlRequester, &config, None).unwrap();
            assert!(
                report.data_verified && report.messages_completed == report.messages_posted,
                "{config:?}\n{:#?}",
                (&report.mismatches, &report.completions_by_status)
            );
            assert_eq!(report.messages_posted, 40, "{config:?}");
            assert_eq!(report.backend, "rtl-requester");
            assert!(report.core_active_cycles.is_some_and(|c| c > 0));
        }
    }
}
