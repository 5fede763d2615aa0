//! No response before the data it depends on: the RTL responder half
//! (`responder_path` in an `RtlNic`, scored by its shadow model) answers a
//! model requester's WRITEs (with and without immediate), SENDs, READs,
//! FETCH_ADDs and CMP_SWAPs, and a WRITE through a wrong R_Key (NAK remote
//! access), over lossless links, with a fast and a slow host DMA write
//! port. For every response frame the core emits (ACK, NAK, atomic ACK,
//! READ response) the DMA write beats of the request it answers and of
//! every request before it (all QPs: the core writes in arrival order)
//! must have been accepted by the host port before the frame's first beat
//! leaves. Lossless and with receive WQEs for every SEND, each WRITE /
//! SEND request writes its payload and each atomic its 8 bytes, so the
//! bytes the first `i + 1` requests write are a prefix of the DMA write
//! log.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{Fabric, LinkConfig, SwitchConfig};
use rocenic_model::nic::Nic;
use rocenic_model::verbs::{Access, QpCaps, RecvWr, SendOp, SendWr, Sge, WcStatus};
use rocenic_rtl::host_dma::HostDmaConfig;
use rocenic_rtl::nic::{PortLog, RtlNic};
use rocenic_rtl::node::Node;
use rocenic_sim::scenario::{connect, nic_config, ScenarioConfig};
use rocenic_wire::{op, RoceFrame};
use verilator_sys::ResponderPath;

const QPS: usize = 3;
const WRS_PER_QP: usize = 16;

/// What one run checked.
#[derive(Debug, Default)]
struct Checked {
    requests: usize,
    responses: usize,
    acks: usize,
    naks: usize,
    atomic_acks: usize,
    read_responses: usize,
    /// Least slack seen: cycles between the last covered write beat and
    /// the response's first beat.
    min_slack: Option<u64>,
}

/// Bytes a request writes to the responder's host memory (lossless run,
/// every SEND finds a receive WQE): its payload for WRITE and SEND, 8 for
/// an atomic, nothing for a READ or a refused WRITE (`refused_qpn`).
fn bytes_written(f: &RoceFrame, refused_qpn: u32) -> usize {
    let o = f.bth.opcode;
    if f.bth.dest_qp == refused_qpn {
        return 0;
    }
    if o == op::COMPARE_SWAP || o == op::FETCH_ADD {
        8
    } else if o == op::READ_REQUEST {
        0
    } else {
        f.payload.len()
    }
}

/// `pairs`: (requester QPN, responder QPN) of each connection.
fn check_log(log: &PortLog, refused_qpn: u32, pairs: &[(u32, u32)]) -> Result<Checked, String> {
    let mut c = Checked::default();
    let requests: Vec<RoceFrame> = log
        .rx
        .iter()
        .map(|(_, f)| RoceFrame::decode(f).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    c.requests = requests.len();
    // Bytes written by requests 0..=i.
    let mut prefix = Vec::with_capacity(requests.len());
    let mut total = 0usize;
    for f in &requests {
        total += bytes_written(f, refused_qpn);
        prefix.push(total);
    }
    let written: usize = log.dma_writes.iter().map(|w| w.1).sum();
    if written != total {
        return Err(format!(
            "{written} bytes written, the requests carry {total}"
        ));
    }
    // Cycle by which the first n bytes were accepted.
    let mut accepted = Vec::with_capacity(log.dma_writes.len());
    let mut sum = 0usize;
    for &(cycle, n) in &log.dma_writes {
        sum += n;
        accepted.push((sum, cycle));
    }
    let cycle_of_byte = |n: usize| -> Option<u64> {
        if n == 0 {
            return None;
        }
        let i = accepted.partition_point(|&(s, _)| s < n);
        Some(accepted[i].1)
    };
    for (out_cycle, bytes) in &log.tx {
        let r = RoceFrame::decode(bytes).map_err(|e| e.to_string())?;
        let o = r.bth.opcode;
        match o {
            op::ACKNOWLEDGE => {
                if r.ext.aeth.as_ref().is_some_and(|a| a.syndrome >> 5 == 0) {
                    c.acks += 1;
                } else {
                    c.naks += 1;
                }
            }
            op::ATOMIC_ACKNOWLEDGE => c.atomic_acks += 1,
            _ => c.read_responses += 1,
        }
        c.responses += 1;
        // The request it answers: the latest of that QP with the PSN
        // before the frame (a READ response's PSN is its request's first
        // PSN plus the packet index: the latest READ at or before it).
        let peer_qp = r.bth.dest_qp;
        let is_read_response = (0x0D..=0x10).contains(&o);
        let answered = requests.iter().rposition(|q| {
            let same_qp = pairs
                .iter()
                .any(|&(a, b)| a == peer_qp && b == q.bth.dest_qp);
            let d = r.bth.psn.wrapping_sub(q.bth.psn) & 0xFF_FFFF;
            same_qp
                && if is_read_response {
                    q.bth.opcode == op::READ_REQUEST && d < 0x80_0000
                } else {
                    d == 0
                }
        });
        let Some(i) = answered else {
            return Err(format!(
                "response {:?} at cycle {out_cycle} answers no request",
                r.bth
            ));
        };
        if let Some(last_write) = cycle_of_byte(prefix[i]) {
            if last_write >= *out_cycle {
                return Err(format!(
                    "response opcode {o:#04x} PSN {} of request {i} leaves at cycle {out_cycle}, \
                     the writes up to that request ({} bytes) are accepted only at cycle {last_write}",
                    r.bth.psn, prefix[i]
                ));
            }
            let slack = out_cycle - last_write;
            c.min_slack = Some(c.min_slack.map_or(slack, |s| s.min(slack)));
        }
    }
    Ok(c)
}

fn run(seed: u64, mtu: u32, dma: HostDmaConfig) -> Checked {
    let config = ScenarioConfig {
        mtu,
        ..ScenarioConfig::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut a = Nic::new(nic_config(1, &config));
    let mut rtl = RtlNic::<ResponderPath>::new(nic_config(2, &config), dma);
    rtl.log_port_frames();
    let b = rtl.setup().expect("setup");
    let caps = QpCaps {
        max_send_wr: WRS_PER_QP as u32,
        max_recv_wr: WRS_PER_QP as u32,
        max_sge: 1,
    };
    let (a_pd, b_pd) = (a.alloc_pd(), b.alloc_pd());
    let (a_cq, b_cq) = (a.create_cq(256), b.create_cq(256));
    // Receive buffers in the first MiB, WRITE / READ / atomic targets in
    // the second, 16 KiB per work request.
    let region = 2 << 20;
    let a_va = a.memory_mut().alloc(region, 4096);
    let a_key = a
        .reg_mr(a_pd, a_va, region, Access::LOCAL_WRITE)
        .expect("reg");
    let b_va = b.memory_mut().alloc(region, 4096);
    let b_key = b
        .reg_mr(
            b_pd,
            b_va,
            region,
            Access::LOCAL_WRITE
                | Access::REMOTE_WRITE
                | Access::REMOTE_READ
                | Access::REMOTE_ATOMIC,
        )
        .expect("reg");
    let fill: Vec<u8> = (0..region).map(|_| rng.gen()).collect();
    a.memory_mut().write_va(a_va, &fill).expect("fill");
    let mut pairs = Vec::new();
    let mut refused_qpn = u32::MAX;
    let mut posted = 0;
    for q in 0..=QPS {
        let qa = a.create_qp(a_pd, a_cq, a_cq, caps).expect("qp");
        let qb = b.create_qp(b_pd, b_cq, b_cq, caps).expect("qp");
        connect(&mut a, qa, b, qb, &config, &mut rng).expect("connect");
        pairs.push((qa, qb));
        if q == QPS {
            // A WRITE through a wrong R_Key: NAK remote access, after the
            // other QPs' requests (it goes last).
            refused_qpn = qb;
            continue;
        }
        for i in 0..WRS_PER_QP {
            let slot = (q * WRS_PER_QP + i) as u64 * 16384;
            let len = match rng.gen_range(0..4) {
                0 => rng.gen_range(1..=64),
                1 => rng.gen_range(1..=4096),
                _ => rng.gen_range(4097..=16384),
            };
            let remote_addr = b_va + (1 << 20) + slot + rng.gen_range(0..64);
            let sge = |length| Sge {
                addr: a_va + slot,
                length,
                lkey: a_key.lkey,
            };
            let kind = rng.gen_range(0..7);
            if kind == 2 || kind == 3 {
                // WRITE with immediate and SEND take a receive WQE.
                b.post_recv(
                    qb,
                    RecvWr {
                        wr_id: i as u64,
                        sgl: vec![Sge {
                            addr: b_va + slot,
                            length: 16384,
                            lkey: b_key.lkey,
                        }],
                    },
                )
                .expect("recv");
            }
            let (op, sgl) = match kind {
                0 | 1 => (
                    SendOp::Write {
                        remote_addr,
                        rkey: b_key.rkey,
                    },
                    vec![sge(len)],
                ),
                2 => (
                    SendOp::WriteWithImm {
                        remote_addr,
                        rkey: b_key.rkey,
                        imm: rng.gen(),
                    },
                    vec![sge(len)],
                ),
                3 => (SendOp::Send, vec![sge(len)]),
                4 => (
                    SendOp::Read {
                        remote_addr,
                        rkey: b_key.rkey,
                    },
                    vec![sge(len)],
                ),
                5 => (
                    SendOp::FetchAdd {
                        remote_addr: (remote_addr & !7) + 8 * (i as u64 % 2),
                        rkey: b_key.rkey,
                        add: rng.gen(),
                    },
                    vec![sge(8)],
                ),
                _ => (
                    SendOp::CompareSwap {
                        remote_addr: remote_addr & !7,
                        rkey: b_key.rkey,
                        compare: 0,
                        swap: rng.gen(),
                    },
                    vec![sge(8)],
                ),
            };
            a.post_send(
                qa,
                SendWr {
                    wr_id: (q * WRS_PER_QP + i) as u64,
                    op,
                    sgl,
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                },
            )
            .expect("post");
            posted += 1;
        }
    }
    let (qa_bad, _) = pairs[QPS];
    a.post_send(
        qa_bad,
        SendWr {
            wr_id: 999,
            op: SendOp::Write {
                remote_addr: b_va,
                rkey: b_key.rkey ^ 0x100,
            },
            sgl: vec![Sge {
                addr: a_va,
                length: 256,
                lkey: a_key.lkey,
            }],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        },
    )
    .expect("post");

    let mut fabric = Fabric::new(1, SwitchConfig::default());
    let a_id = fabric.add_node(
        Node::<RtlNic<ResponderPath>>::Model(Box::new(a)),
        LinkConfig::default(),
    );
    let b_id = fabric.add_node(Node::Rtl(Box::new(rtl)), LinkConfig::default());
    let mut done = Vec::new();
    while done.len() < posted + 1 && fabric.now() < 20_000_000 {
        let until = fabric.now() + 1_000;
        fabric.run_until(until);
        if let Some(m) = fabric.node(b_id).rtl().and_then(|r| r.mismatch()) {
            panic!("seed {seed}: {m}");
        }
        if let Some(a) = fabric.node_mut(a_id).model_mut() {
            done.extend(a.poll_cq(a_cq, usize::MAX));
        }
    }
    assert_eq!(done.len(), posted + 1, "seed {seed}: completions {done:?}");
    for c in &done {
        let want = if c.wr_id == 999 {
            WcStatus::RemAccessErr
        } else {
            WcStatus::Success
        };
        assert_eq!(c.status, want, "seed {seed}: {c:?}");
    }
    let rtl = fabric.node_mut(b_id).rtl_mut().expect("rtl");
    rtl.finish_check()
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let log = rtl.port_log().expect("log");
    check_log(&log, refused_qpn, &pairs).unwrap_or_else(|e| panic!("seed {seed}, MTU {mtu}: {e}"))
}

fn slow_writes() -> HostDmaConfig {
    HostDmaConfig {
        // A beat every 4 cycles: the writes lag the decisions far behind.
        write_bytes_per_cycle: 16,
        ..HostDmaConfig::default()
    }
}

#[test]
fn responses_leave_after_the_writes_they_cover() {
    let mut total = Checked::default();
    for (seed, mtu, dma) in [
        (1, 4096, HostDmaConfig::default()),
        (2, 4096, slow_writes()),
        (3, 1024, slow_writes()),
        (4, 256, HostDmaConfig::default()),
        (5, 4096, HostDmaConfig::default()),
        (6, 4096, slow_writes()),
        (7, 2048, HostDmaConfig::default()),
        (8, 512, slow_writes()),
    ] {
        let c = run(seed, mtu, dma);
        eprintln!("seed {seed}, MTU {mtu}: {c:?}");
        assert!(c.acks > 0 && c.naks == 1 && c.atomic_acks > 0 && c.read_responses > 0);
        total.requests += c.requests;
        total.responses += c.responses;
    }
    eprintln!(
        "{} requests, {} responses checked",
        total.requests, total.responses
    );
}
