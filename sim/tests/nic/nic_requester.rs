//! The RTL requester half on the fabric: an `RtlRequesterNic` whose core is
//! `requester_path` sends WRITE, WRITE with immediate, SEND, READ,
//! FETCH_ADD and CMP_SWAP messages on several QPs to a model responder
//! NIC, over lossless and lossy (loss, duplication, reordering) links.
//! The core's shadow model predicts every request frame, DMA write and
//! send CQE (`rocenic_rtl::requester_nic`); independently of it,
//! every message must complete exactly once and in order, the responder's
//! memory must hold each written message's bytes, each READ must bring
//! the responder's bytes back, and the fetch-and-adds must return the
//! counter's successive values. A dead peer (every frame lost) makes the
//! oldest WQE of each QP fail with RETRY_EXC_ERR and the rest flush;
//! receive WQEs posted late at the responder make the SENDs wait out RNR
//! NAKs.

use crate::rtl_common::messages::{connected_qps, random_messages, MessageQps};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{Fabric, FaultConfig, LinkConfig, SwitchConfig};
use rocenic_model::nic::Nic;
use rocenic_model::verbs::{Cqe, RecvWr, SendOp, SendWr, Sge, WcStatus};
use rocenic_rtl::host_dma::HostDmaConfig;
use rocenic_rtl::node::Node as FabricNode;
use rocenic_rtl::requester_nic::RtlRequesterNic;
use rocenic_sim::scenario::{nic_config, run_backend, Backend, ScenarioConfig, Workload};
use std::collections::BTreeMap;
use verilator_sys::RequesterPath;

type Core = RequesterPath;

/// A model responder or the RTL requester on one fabric.
type Node = FabricNode<RtlRequesterNic<Core>>;

#[derive(Clone, Copy, Debug)]
struct Case {
    seed: u64,
    mtu: u32,
    qps: usize,
    msgs: usize,
    loss: f64,
    dup: f64,
    reorder: f64,
    /// The requester's link drops every frame.
    dead_peer: bool,
    /// The responder's receive WQEs are posted after 200 us.
    late_recv: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Write,
    WriteImm,
    Send,
    Read,
    FetchAdd,
    CompareSwap,
}

/// Send CQEs, request frames, DMA write bytes and core cycles of a run.
fn run(case: Case) -> (usize, u64, u64, u64) {
    let Case {
        seed,
        mtu,
        qps,
        msgs,
        ..
    } = case;
    let config = ScenarioConfig {
        mtu,
        seed,
        timeout: if case.dead_peer { 1 } else { 8 },
        ..ScenarioConfig::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rtl = RtlRequesterNic::<Core>::new(
        nic_config(1, &config),
        HostDmaConfig {
            read_latency: 100,
            reorder: true,
            seed,
            ..HostDmaConfig::default()
        },
    );
    let mut b = Nic::new(nic_config(2, &config));
    let a = rtl.setup().expect("before the run");
    let slot = 3 * u64::from(mtu) + 200;
    let region = slot * msgs as u64 + 8;
    let MessageQps {
        a_cq, qpns, bufs, ..
    } = connected_qps(a, &mut b, qps, msgs, region, &config, &mut rng);
    let kinds = [
        Kind::Write,
        Kind::WriteImm,
        Kind::Send,
        Kind::Read,
        Kind::FetchAdd,
        Kind::CompareSwap,
    ];
    let messages = random_messages(&mut rng, msgs, qps, mtu, slot, &kinds, |kind| {
        matches!(kind, Kind::FetchAdd | Kind::CompareSwap)
    });
    let mut posts = Vec::new();
    let mut late = Vec::new();
    for (n, m) in messages.iter().enumerate() {
        let (qa, qb) = qpns[m.qp];
        let (va_a, keys_a, va_b, keys_b, _, _) = &bufs[m.qp];
        let remote_addr = va_b + m.offset;
        if matches!(m.kind, Kind::WriteImm | Kind::Send) {
            let wr = RecvWr {
                wr_id: n as u64,
                sgl: vec![Sge {
                    addr: remote_addr,
                    length: slot as u32,
                    lkey: keys_b.lkey,
                }],
            };
            if case.late_recv {
                late.push((qb, wr));
            } else {
                b.post_recv(qb, wr).unwrap();
            }
        }
        let rkey = keys_b.rkey;
        let counter = va_b + region - 8;
        let op = match m.kind {
            Kind::Write => SendOp::Write { remote_addr, rkey },
            Kind::WriteImm => SendOp::WriteWithImm {
                remote_addr,
                rkey,
                imm: n as u32,
            },
            Kind::Send => SendOp::Send,
            Kind::Read => SendOp::Read { remote_addr, rkey },
            Kind::FetchAdd => SendOp::FetchAdd {
                remote_addr: counter,
                rkey,
                add: n as u64 + 1,
            },
            // Never equal to the counter: a CMP_SWAP that leaves it as is.
            Kind::CompareSwap => SendOp::CompareSwap {
                remote_addr: counter,
                rkey,
                compare: u64::MAX,
                swap: 0,
            },
        };
        posts.push((
            qa,
            SendWr {
                wr_id: n as u64,
                op,
                sgl: vec![Sge {
                    addr: va_a + m.offset,
                    length: m.len as u32,
                    lkey: keys_a.lkey,
                }],
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            },
        ));
    }
    for (qa, wr) in posts {
        rtl.post_send(qa, wr);
    }

    let faults = FaultConfig {
        loss: case.loss,
        duplicate: case.dup,
        reorder: case.reorder,
        ..FaultConfig::default()
    };
    let mut fabric = Fabric::new(seed, SwitchConfig::default());
    let rtl_link = LinkConfig {
        faults: FaultConfig {
            loss: if case.dead_peer { 1.0 } else { faults.loss },
            ..faults.clone()
        },
        ..LinkConfig::default()
    };
    let a_id = fabric.add_node(Node::Rtl(Box::new(rtl)), rtl_link);
    let b_id = fabric.add_node(
        Node::Model(Box::new(b)),
        LinkConfig {
            faults,
            ..LinkConfig::default()
        },
    );
    let mut sent: Vec<Cqe> = Vec::new();
    let limit = 30_000_000;
    let poll = |fabric: &mut Fabric<Node>| match fabric.node_mut(a_id) {
        Node::Rtl(n) => n.poll_cq(a_cq, usize::MAX),
        Node::Model(_) => unreachable!(),
    };
    while sent.len() < messages.len() && fabric.now() < limit {
        let until = fabric.now() + 20_000;
        fabric.run_until(until);
        if fabric.now() >= 200_000 && !late.is_empty() {
            let Node::Model(b) = fabric.node_mut(b_id) else {
                unreachable!()
            };
            for (qb, wr) in late.drain(..) {
                b.post_recv(qb, wr).unwrap();
            }
        }
        if let Node::Rtl(n) = fabric.node(a_id) {
            if let Some(m) = n.mismatch() {
                panic!("{case:?}: scoreboard: {m}");
            }
        }
        sent.extend(poll(&mut fabric));
    }
    let settle = fabric.now() + 100_000;
    fabric.run_until(settle);
    sent.extend(poll(&mut fabric));
    let Node::Rtl(rtl) = fabric.node_mut(a_id) else {
        unreachable!()
    };
    if let Err(m) = rtl.finish_check() {
        panic!("{case:?}: scoreboard at the end: {m}");
    }
    sent.extend(rtl.poll_cq(a_cq, usize::MAX));
    assert_eq!(
        sent.len(),
        messages.len(),
        "{case:?}: every message completes once"
    );
    let mut by_qp: BTreeMap<u32, Vec<&Cqe>> = BTreeMap::new();
    for c in &sent {
        by_qp.entry(c.qpn).or_default().push(c);
    }
    for cqes in by_qp.values() {
        assert!(
            cqes.windows(2).all(|w| w[0].wr_id < w[1].wr_id),
            "{case:?}: in order"
        );
        if case.dead_peer {
            assert_eq!(cqes[0].status, WcStatus::RetryExcErr, "{case:?}");
            assert!(
                cqes[1..].iter().all(|c| c.status == WcStatus::WrFlushErr),
                "{case:?}"
            );
        }
    }
    let stats = rtl.stats();
    let counters = rtl.shadow().counters();
    if case.late_recv {
        assert!(counters.rnr_waits > 0, "{case:?}: no RNR wait");
    }
    if case.loss > 0.0 || case.dead_peer {
        assert!(
            counters.retransmitted_frames > 0,
            "{case:?}: no retransmission"
        );
    }
    let outcome = (
        sent.len(),
        stats.frames_out,
        stats.dma_write_bytes,
        stats.cycles,
    );
    if case.dead_peer {
        return outcome;
    }
    assert!(
        sent.iter().all(|c| c.status == WcStatus::Success),
        "{case:?}: {:?}",
        sent.iter().find(|c| c.status != WcStatus::Success)
    );
    let memory = rtl.memory().clone();
    let Node::Model(responder) = fabric.node(b_id) else {
        unreachable!()
    };
    for (q, (va_a, _, va_b, _, data, b_init)) in bufs.iter().enumerate() {
        let tail = region as usize - 8;
        let mut counter = u64::from_le_bytes(b_init[tail..].try_into().unwrap());
        for (n, m) in messages.iter().enumerate().filter(|(_, m)| m.qp == q) {
            let range = m.offset as usize..(m.offset + m.len) as usize;
            let mut got = vec![0u8; m.len as usize];
            match m.kind {
                Kind::Read => {
                    memory.read_va(va_a + m.offset, &mut got).unwrap();
                    assert!(got == b_init[range], "{case:?}: READ {n} bytes");
                }
                Kind::FetchAdd | Kind::CompareSwap => {
                    memory.read_va(va_a + m.offset, &mut got).unwrap();
                    let old = u64::from_le_bytes(got[..8].try_into().unwrap());
                    assert_eq!(old, counter, "{case:?}: atomic {n}");
                    if m.kind == Kind::FetchAdd {
                        counter = counter.wrapping_add(n as u64 + 1);
                    }
                }
                _ => {
                    responder
                        .memory()
                        .read_va(va_b + m.offset, &mut got)
                        .unwrap();
                    assert!(got == data[range], "{case:?}: message {n} bytes");
                }
            }
        }
        let mut got = [0u8; 8];
        responder
            .memory()
            .read_va(va_b + region - 8, &mut got)
            .unwrap();
        assert_eq!(u64::from_le_bytes(got), counter, "{case:?}: QP {q} counter");
    }
    outcome
}

fn check(case: Case) {
    let (cqes, frames, dma, cycles) = run(case);
    println!(
        "{case:?}: {cqes} send CQEs, {frames} request frames, {dma} DMA write bytes, {cycles} core cycles"
    );
}

#[test]
fn lossless_mtu_4096() {
    check(Case {
        seed: 1,
        mtu: 4096,
        qps: 3,
        msgs: 8,
        loss: 0.0,
        dup: 0.0,
        reorder: 0.0,
        dead_peer: false,
        late_recv: false,
    });
}

#[test]
fn lossy_mtu_256() {
    check(Case {
        seed: 2,
        mtu: 256,
        qps: 3,
        msgs: 8,
        loss: 0.05,
        dup: 0.02,
        reorder: 0.05,
        dead_peer: false,
        late_recv: false,
    });
}

#[test]
fn dead_peer_exhausts_the_retries() {
    check(Case {
        seed: 3,
        mtu: 1024,
        qps: 2,
        msgs: 3,
        loss: 0.0,
        dup: 0.0,
        reorder: 0.0,
        dead_peer: true,
        late_recv: false,
    });
}

#[test]
fn lossy_mtu_4096_many_qps() {
    check(Case {
        seed: 4,
        mtu: 4096,
        qps: 6,
        msgs: 10,
        loss: 0.03,
        dup: 0.03,
        reorder: 0.03,
        dead_peer: false,
        late_recv: false,
    });
}

#[test]
fn lossy_mtu_1024_seeds() {
    for seed in 11..14 {
        check(Case {
            seed,
            mtu: 1024,
            qps: 2,
            msgs: 12,
            loss: 0.05,
            dup: 0.05,
            reorder: 0.05,
            dead_peer: false,
            late_recv: false,
        });
    }
}

#[test]
fn late_receive_wqes_make_sends_wait_out_rnr_naks() {
    check(Case {
        seed: 5,
        mtu: 512,
        qps: 2,
        msgs: 6,
        loss: 0.0,
        dup: 0.0,
        reorder: 0.0,
        dead_peer: false,
        late_recv: true,
    });
}

/// A QP's transmit grants are capped (`requester_path::GRANT_PACKETS`), so
/// its ACKs and NAKs are taken between grants instead of after a whole
/// WQE: at 1 % loss on 1 MiB WRITEs (2 QPs, 8 messages each) the RTL
/// requester retransmits, summed over three seeds, at most 1.5x the frames
/// the model requester does (with a whole WQE per grant, on seed 1 alone:
/// 31,682 against 2,139, the rest of a message sent past a NAK before the
/// rewind). One seed alone swings either way: with 4-packet grants seeds
/// 1, 2 and 3 gave 4,620, 2,979 and 6,869 against the model's 2,139, 2,969
/// and 5,433.
#[test]
fn a_nak_is_acted_on_between_capped_grants() {
    let (mut model, mut rtl) = (0, 0);
    for seed in 1..=3 {
        let config = ScenarioConfig {
            workload: Workload::Write,
            size: 1 << 20,
            count: 8,
            qps: 2,
            faults: FaultConfig {
                loss: 0.01,
                ..FaultConfig::default()
            },
            seed,
            ..ScenarioConfig::default()
        };
        let m = run_backend(Backend::Model, &config, None).unwrap();
        let r = run_backend(Backend::RtlRequester, &config, None).unwrap();
        eprintln!(
            "seed {seed}: retransmitted frames: RTL requester {} of {}, model {} of {}",
            r.retransmitted_frames, r.frames, m.retransmitted_frames, m.frames
        );
        assert!(r.data_verified && r.messages_completed == r.messages_posted);
        assert!(m.retransmitted_frames > 100);
        model += m.retransmitted_frames;
        rtl += r.retransmitted_frames;
    }
    assert!(2 * rtl <= 3 * model, "RTL {rtl} against model {model}");
}
