//! The RTL responder half on the fabric: a model requester NIC sends
//! WRITE, WRITE with immediate, SEND, SEND with immediate, READ and
//! FETCH_ADD messages on several QPs to an `RtlNic` whose core is
//! `responder_path`, over links with loss, duplication and reordering.
//! The core's shadow model predicts every response frame, DMA write and
//! receive CQE (`rocenic_rtl::nic`); independently of it, every
//! message must complete exactly once at the requester, every receive CQE
//! must arrive, the responder's memory must hold each written message's
//! bytes, each READ must bring the responder's bytes back, and the
//! fetch-and-adds must return the counter's successive values.

use crate::rtl_common::messages::{connected_qps, random_messages, MessageQps};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{Fabric, FaultConfig, LinkConfig, NodeId, SwitchConfig};
use rocenic_model::nic::Nic;
use rocenic_model::verbs::{Cqe, RecvWr, SendOp, SendWr, Sge, WcOpcode, WcStatus};
use rocenic_rtl::host_dma::HostDmaConfig;
use rocenic_rtl::nic::RtlNic;
use rocenic_rtl::node::Node;
use rocenic_sim::scenario::{nic_config, ScenarioConfig};
use std::collections::BTreeMap;
use verilator_sys::ResponderPath;

type Core = ResponderPath;

#[derive(Clone, Copy, Debug)]
struct Case {
    seed: u64,
    mtu: u32,
    qps: usize,
    msgs: usize,
    ipv6: bool,
    loss: f64,
    dup: f64,
    reorder: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Write,
    WriteImm,
    Send,
    SendImm,
    Read,
    FetchAdd,
}

/// The message takes a receive WQE at the responder.
fn consumes(k: Kind) -> bool {
    matches!(k, Kind::WriteImm | Kind::Send | Kind::SendImm)
}

struct Outcome {
    requester_cqes: usize,
    responder_cqes: usize,
    frames_out: u64,
    dma_bytes: u64,
    cycles: u64,
}

fn run(case: Case) -> Outcome {
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
        ipv6: case.ipv6,
        timeout: 8,
        ..ScenarioConfig::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut a = Nic::new(nic_config(1, &config));
    let mut rtl = RtlNic::<Core>::new(
        nic_config(2, &config),
        HostDmaConfig {
            read_latency: 200,
            reorder: true,
            seed,
            ..HostDmaConfig::default()
        },
    );
    let b = rtl.setup().expect("before the run");
    let slot = 3 * u64::from(mtu) + 200;
    // The message slots, then each QP's fetch-and-add counter.
    let region = slot * msgs as u64 + 8;
    let MessageQps {
        a_cq,
        b_cq,
        qpns,
        bufs,
    } = connected_qps(&mut a, b, qps, msgs, region, &config, &mut rng);
    let kinds = [
        Kind::Write,
        Kind::WriteImm,
        Kind::Send,
        Kind::SendImm,
        Kind::Read,
        Kind::FetchAdd,
    ];
    let messages = random_messages(&mut rng, msgs, qps, mtu, slot, &kinds, |kind| {
        kind == Kind::FetchAdd
    });
    for (n, m) in messages.iter().enumerate() {
        let (qa, qb) = qpns[m.qp];
        let (va_a, keys_a, va_b, keys_b, _, _) = &bufs[m.qp];
        let remote_addr = va_b + m.offset;
        if consumes(m.kind) {
            // Each receive WQE names its message's slot: a SEND lands there.
            b.post_recv(
                qb,
                RecvWr {
                    wr_id: n as u64,
                    sgl: vec![Sge {
                        addr: remote_addr,
                        length: slot as u32,
                        lkey: keys_b.lkey,
                    }],
                },
            )
            .unwrap();
        }
        let rkey = keys_b.rkey;
        let imm = n as u32 ^ 0xABCD_0000;
        let op = match m.kind {
            Kind::Write => SendOp::Write { remote_addr, rkey },
            Kind::WriteImm => SendOp::WriteWithImm {
                remote_addr,
                rkey,
                imm,
            },
            Kind::Send => SendOp::Send,
            Kind::SendImm => SendOp::SendWithImm { imm },
            Kind::Read => SendOp::Read { remote_addr, rkey },
            Kind::FetchAdd => SendOp::FetchAdd {
                remote_addr: va_b + region - 8,
                rkey,
                add: n as u64 + 1,
            },
        };
        a.post_send(
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
        )
        .unwrap();
    }

    let link = LinkConfig {
        faults: FaultConfig {
            loss: case.loss,
            duplicate: case.dup,
            reorder: case.reorder,
            ..FaultConfig::default()
        },
        ..LinkConfig::default()
    };
    let mut fabric = Fabric::new(seed, SwitchConfig::default());
    let a_id = fabric.add_node(Node::<RtlNic<Core>>::Model(Box::new(a)), link.clone());
    let b_id = fabric.add_node(Node::Rtl(Box::new(rtl)), link);
    let want_recv = messages.iter().filter(|m| consumes(m.kind)).count();
    let mut sent: Vec<Cqe> = Vec::new();
    let mut received: Vec<Cqe> = Vec::new();
    let limit = 50_000_000; // 50 ms of fabric time
    let poll = |fabric: &mut Fabric<Node<RtlNic<Core>>>, id: NodeId| -> Vec<Cqe> {
        match fabric.node_mut(id) {
            Node::Model(n) => n.poll_cq(a_cq, usize::MAX),
            Node::Rtl(n) => n.poll_cq(b_cq, usize::MAX),
        }
    };
    while (sent.len() < messages.len() || received.len() < want_recv) && fabric.now() < limit {
        let until = fabric.now() + 20_000;
        fabric.run_until(until);
        if let Some(m) = fabric.node(b_id).rtl().and_then(|r| r.mismatch()) {
            panic!("{case:?}: scoreboard: {m}");
        }
        sent.extend(poll(&mut fabric, a_id));
        received.extend(poll(&mut fabric, b_id));
    }
    // Stragglers (duplicates, late ACKs) still go through the scoreboard.
    let settle = fabric.now() + 100_000;
    fabric.run_until(settle);
    sent.extend(poll(&mut fabric, a_id));
    received.extend(poll(&mut fabric, b_id));

    let rtl = fabric.node_mut(b_id).rtl_mut().expect("the RTL node");
    if let Err(m) = rtl.finish_check() {
        panic!("{case:?}: scoreboard at the end: {m}");
    }
    assert_eq!(
        sent.len(),
        messages.len(),
        "{case:?}: every message completes once"
    );
    assert!(
        sent.iter().all(|c| c.status == WcStatus::Success),
        "{case:?}: {:?}",
        sent.iter().find(|c| c.status != WcStatus::Success)
    );
    // Per QP, the requester's completions in posting order.
    let mut by_qp: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for c in &sent {
        by_qp.entry(c.qpn).or_default().push(c.wr_id);
    }
    for ids in by_qp.values() {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{case:?}: in order");
    }
    assert_eq!(
        received.len(),
        want_recv,
        "{case:?}: every receive CQE once"
    );
    for c in &received {
        let m = &messages[c.wr_id as usize];
        assert_eq!(c.status, WcStatus::Success, "{case:?}: {c:?}");
        let (opcode, imm) = match m.kind {
            Kind::WriteImm => (WcOpcode::RecvRdmaWithImm, true),
            Kind::SendImm => (WcOpcode::Recv, true),
            _ => (WcOpcode::Recv, false),
        };
        assert_eq!(
            (c.opcode, c.imm.is_some()),
            (opcode, imm),
            "{case:?}: {c:?}"
        );
        assert_eq!(u64::from(c.byte_len), m.len, "{case:?}: {c:?}");
    }
    // Independently of the shadow, the buffers' contents are the reference:
    // the responder's memory holds every written message's bytes, READs
    // brought the responder's bytes to the requester, and each QP's
    // fetch-and-adds returned the counter's successive values.
    let rtl = fabric.node(b_id).rtl().expect("the RTL node");
    let memory = rtl.memory();
    let requester = fabric.node(a_id).model().expect("the model node");
    for (q, (va_a, _, va_b, _, data, b_init)) in bufs.iter().enumerate() {
        let tail = region as usize - 8;
        let mut counter = u64::from_le_bytes(b_init[tail..].try_into().unwrap());
        for (n, m) in messages.iter().enumerate().filter(|(_, m)| m.qp == q) {
            let range = m.offset as usize..(m.offset + m.len) as usize;
            let mut got = vec![0u8; m.len as usize];
            match m.kind {
                Kind::Read => {
                    requester
                        .memory()
                        .read_va(va_a + m.offset, &mut got)
                        .unwrap();
                    assert!(got == b_init[range], "{case:?}: READ {n} bytes");
                }
                Kind::FetchAdd => {
                    requester
                        .memory()
                        .read_va(va_a + m.offset, &mut got)
                        .unwrap();
                    let old = u64::from_le_bytes(got[..8].try_into().unwrap());
                    assert_eq!(old, counter, "{case:?}: FETCH_ADD {n}");
                    counter = counter.wrapping_add(n as u64 + 1);
                }
                _ => {
                    memory.read_va(va_b + m.offset, &mut got).unwrap();
                    assert!(
                        got == data[range],
                        "{case:?}: message {n} bytes at {:#x}",
                        va_b + m.offset
                    );
                }
            }
        }
        let mut got = [0u8; 8];
        memory.read_va(va_b + region - 8, &mut got).unwrap();
        assert_eq!(u64::from_le_bytes(got), counter, "{case:?}: QP {q} counter");
    }
    assert_eq!(
        memory.stray_writes(),
        0,
        "{case:?}: nothing outside the buffers"
    );
    let stats = rtl.stats();
    assert!(stats.frames_out > 0 && stats.frames_in >= messages.len() as u64);
    Outcome {
        requester_cqes: sent.len(),
        responder_cqes: received.len(),
        frames_out: stats.frames_out,
        dma_bytes: stats.dma_write_bytes,
        cycles: stats.cycles,
    }
}

fn check(case: Case) {
    let o = run(case);
    println!(
        "{case:?}: {} messages, {} receive CQEs, {} response frames, {} DMA bytes, {} core cycles",
        o.requester_cqes, o.responder_cqes, o.frames_out, o.dma_bytes, o.cycles
    );
}

#[test]
fn lossless_ipv4_mtu_1024() {
    check(Case {
        seed: 1,
        mtu: 1024,
        qps: 4,
        msgs: 12,
        ipv6: false,
        loss: 0.0,
        dup: 0.0,
        reorder: 0.0,
    });
}

#[test]
fn lossy_ipv6_mtu_4096() {
    check(Case {
        seed: 2,
        mtu: 4096,
        qps: 2,
        msgs: 10,
        ipv6: true,
        loss: 0.02,
        dup: 0.02,
        reorder: 0.02,
    });
}

#[test]
fn lossy_ipv4_mtu_256() {
    check(Case {
        seed: 3,
        mtu: 256,
        qps: 3,
        msgs: 10,
        ipv6: false,
        loss: 0.05,
        dup: 0.02,
        reorder: 0.05,
    });
}

#[test]
fn many_qps_lossy_mtu_512() {
    check(Case {
        seed: 4,
        mtu: 512,
        qps: 8,
        msgs: 16,
        ipv6: false,
        loss: 0.05,
        dup: 0.05,
        reorder: 0.05,
    });
}
