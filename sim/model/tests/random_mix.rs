//! Property test: random mixes of every verb and size, at every path MTU,
//! over a wire with random loss, duplication, reordering and CE marks (so
//! DCQCN pacing interacts with retransmission), with short ACK timeouts. Each case
//! checks memory byte for byte and every completion exactly once, in
//! order. The runner is deterministic (fixed seed, fixed case count).

mod common;

use common::*;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

fn op_strategy() -> impl Strategy<Value = Op> {
    let size = prop_oneof![
        Just(0u64),
        1u64..8,
        240u64..4100,
        4100u64..40_000,
        Just(200_000u64),
    ];
    let verb = prop_oneof![
        Just(Verb::Send),
        Just(Verb::SendImm),
        Just(Verb::SendInv),
        Just(Verb::Write),
        Just(Verb::WriteImm),
        Just(Verb::Read),
    ];
    prop_oneof![
        6 => (verb, size).prop_map(|(v, s)| Op::Message(v, s)),
        1 => any::<u64>().prop_map(Op::FetchAdd),
        1 => any::<bool>().prop_map(Op::CmpSwap),
    ]
}

#[test]
fn random_verb_mixes_complete_exactly_once() {
    let config = Config {
        cases: 128,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let strategy = (
        any::<u64>(),
        0usize..5,
        vec(op_strategy(), 1..20),
        0u32..11,
        any::<bool>(),
    );
    let cases = std::cell::Cell::new(0u32);
    let frames = std::cell::Cell::new(0u64);
    runner
        .run(&strategy, |(seed, mtu_idx, ops, loss, window_small)| {
            let mtu = [256, 512, 1024, 2048, 4096][mtu_idx];
            let mut a_cfg = rocenic_model::nic::NicConfig::new(mac(0), ip(0));
            if window_small {
                a_cfg.max_outstanding_psns = 64;
                a_cfg.ack_req_interval = 8;
            }
            let b_cfg = rocenic_model::nic::NicConfig::new(mac(1), ip(1));
            let mut pair = Pair::with_configs(seed, a_cfg, b_cfg);
            let p = f64::from(loss) / 100.0;
            pair.faults = Faults {
                drop: p,
                duplicate: p,
                reorder: p,
                reorder_ns: 4000,
                ce_mark: p,
            };
            let o = ConnOpts {
                mtu,
                timeout: [1u8, 3, 6][(seed % 3) as usize],
                max_rd_atomic: 1 + (seed % 8) as u8,
                ..ConnOpts::default()
            };
            let (a, b) = connect(&mut pair, &o);
            run_workload(&mut pair, a, b, &ops, seed & 0xFFFF, 30_000_000_000);
            cases.set(cases.get() + 1);
            frames.set(
                frames.get()
                    + pair.nics[0].counters().tx_frames
                    + pair.nics[1].counters().tx_frames,
            );
            Ok(())
        })
        .unwrap();
    assert_eq!(cases.get(), 128);
    assert!(frames.get() > 10_000);
}
