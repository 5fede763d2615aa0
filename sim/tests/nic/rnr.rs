//! RNR on the RTL responder: a model requester sends SENDs and RDMA WRITEs
//! with immediate (each takes a receive WQE) to an `RtlNic`
//! (`responder_path`) whose QP has no receive WQE. The core answers each
//! with an RNR NAK, scored byte for byte against its shadow model; the
//! requester waits out the RNR timer and retries. Receive WQEs posted into
//! the running core then let every message complete exactly once with its
//! bytes in place; without them the requester gives up after `rnr_retry`
//! retries with RNR_RETRY_EXC_ERR (IBA 9.7.5.2.8), flushing what is
//! behind, while the responder's QP stays in RTS with nothing written.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{Fabric, LinkConfig, SwitchConfig};
use rocenic_model::nic::Nic;
use rocenic_model::verbs::{
    Access, Cqe, ModifyQp, QpCaps, QpState, Qpn, RecvWr, RemoteAddress, SendOp, SendWr, Sge,
    WcOpcode, WcStatus,
};
use rocenic_rtl::host_dma::HostDmaConfig;
use rocenic_rtl::nic::RtlNic;
use rocenic_rtl::node::Node;
use rocenic_sim::scenario::{nic_config, ScenarioConfig};
use rocenic_wire::{op, syndrome, RoceFrame};
use verilator_sys::ResponderPath;

type Core = ResponderPath;

const MTU: u32 = 1024;
/// The requester's first PSN: the messages' PSNs wrap past 2^24.
const FIRST_PSN: u32 = 0xFF_FFFE;
/// IBA's RNR timer code 1: 0.01 ms.
const MIN_RNR_TIMER: u8 = 1;

/// Connects `qa` and `qb` as `rocenic_sim::scenario::connect` does, with
/// the requester's `rnr_retry` given.
fn connect(a: &mut Nic, qa: Qpn, b: &mut Nic, qb: Qpn, rnr_retry: u8) {
    let address = |nic: &Nic| RemoteAddress {
        mac: nic.config().mac,
        ip: nic.config().ip,
    };
    let (a_address, b_address) = (address(a), address(b));
    let rd_atomic = a.config().max_qp_rd_atom.min(b.config().max_qp_rd_atom);
    for (nic, qpn, remote, peer, rq_psn, sq_psn) in [
        (&mut *a, qa, b_address, qb, 0xFF_FFF0, FIRST_PSN),
        (&mut *b, qb, a_address, qa, FIRST_PSN, 0xFF_FFF0),
    ] {
        nic.modify_qp(
            qpn,
            ModifyQp::ToInit {
                access: Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC,
                pkey: 0xFFFF,
            },
        )
        .unwrap();
        nic.modify_qp(
            qpn,
            ModifyQp::ToRtr {
                remote,
                dest_qpn: peer,
                rq_psn,
                path_mtu: MTU,
                max_dest_rd_atomic: rd_atomic,
                min_rnr_timer: MIN_RNR_TIMER,
            },
        )
        .unwrap();
        nic.modify_qp(
            qpn,
            ModifyQp::ToRts {
                sq_psn,
                timeout: 8,
                retry_cnt: 7,
                rnr_retry,
                max_rd_atomic: rd_atomic,
            },
        )
        .unwrap();
    }
}

struct Outcome {
    /// The core's frames out.
    frames_out: Vec<RoceFrame>,
    /// Fabric times (to within a microsecond) at which the requester took
    /// each RNR NAK.
    rnr_times: Vec<u64>,
    sent: Vec<Cqe>,
    received: Vec<Cqe>,
    /// RNR NAKs the core sent (its shadow's count: every frame of the
    /// core equals the shadow's).
    rnr_naks: u64,
    /// RNR NAKs the requester had taken when the receive WQEs were posted.
    rnr_before_post: u64,
    requester_state: QpState,
    responder_state: QpState,
    cycles: u64,
}

/// A message that takes a receive WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Send,
    WriteImm,
}

/// SENDs and WRITEs with immediate of `lens` bytes to a receiver without
/// receive WQEs (message `i` lands in slot `i`); with `post`
/// the receive WQEs are posted into the running core once the requester
/// has taken `post_after` RNR NAKs.
fn run(seed: u64, lens: &[(Kind, u64)], rnr_retry: u8, post: bool, post_after: u64) -> Outcome {
    let config = ScenarioConfig {
        mtu: MTU,
        seed,
        ..ScenarioConfig::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut a = Nic::new(nic_config(1, &config));
    let mut rtl = RtlNic::<Core>::new(nic_config(2, &config), HostDmaConfig::default());
    rtl.log_port_frames();
    let b = rtl.setup().unwrap();
    let caps = QpCaps {
        max_send_wr: 16,
        max_recv_wr: 16,
        max_sge: 1,
    };
    let (a_pd, b_pd) = (a.alloc_pd(), b.alloc_pd());
    let (a_cq, b_cq) = (a.create_cq(64), b.create_cq(64));
    let qa = a.create_qp(a_pd, a_cq, a_cq, caps).unwrap();
    let qb = b.create_qp(b_pd, b_cq, b_cq, caps).unwrap();
    connect(&mut a, qa, b, qb, rnr_retry);
    let slot = 4 * u64::from(MTU);
    let region = slot * lens.len() as u64;
    let a_va = a.memory_mut().alloc(region, 4096);
    let data: Vec<u8> = (0..region).map(|_| rng.gen()).collect();
    a.memory_mut().write_va(a_va, &data).unwrap();
    let a_keys = a.reg_mr(a_pd, a_va, region, Access::LOCAL_WRITE).unwrap();
    let b_va = b.memory_mut().alloc(region, 4096);
    let b_keys = b
        .reg_mr(
            b_pd,
            b_va,
            region,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE,
        )
        .unwrap();
    let snapshot = b.memory().clone();
    for (i, &(kind, len)) in lens.iter().enumerate() {
        assert!(len <= slot);
        a.post_send(
            qa,
            SendWr {
                wr_id: i as u64,
                op: match kind {
                    Kind::Send => SendOp::Send,
                    Kind::WriteImm => SendOp::WriteWithImm {
                        remote_addr: b_va + i as u64 * slot,
                        rkey: b_keys.rkey,
                        imm: 0xC0DE_0000 | i as u32,
                    },
                },
                sgl: vec![Sge {
                    addr: a_va + i as u64 * slot,
                    length: len as u32,
                    lkey: a_keys.lkey,
                }],
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            },
        )
        .unwrap();
    }

    let mut fabric = Fabric::new(seed, SwitchConfig::default());
    let a_id = fabric.add_node(
        Node::<RtlNic<Core>>::Model(Box::new(a)),
        LinkConfig::default(),
    );
    let b_id = fabric.add_node(Node::Rtl(Box::new(rtl)), LinkConfig::default());
    let mut sent = Vec::new();
    let mut received = Vec::new();
    let mut rnr_before_post = 0;
    let mut rnr_times = Vec::new();
    let mut posted = false;
    let want_received = if post { lens.len() } else { 0 };
    while (sent.len() < lens.len() || received.len() < want_received) && fabric.now() < 20_000_000 {
        let until = fabric.now() + 1_000;
        fabric.run_until(until);
        if let Some(m) = fabric.node(b_id).rtl().and_then(|r| r.mismatch()) {
            panic!("seed {seed}: scoreboard: {m}");
        }
        let rnr_seen = fabric
            .node(a_id)
            .model()
            .unwrap()
            .counters()
            .naks_received
            .rnr;
        while (rnr_times.len() as u64) < rnr_seen {
            rnr_times.push(fabric.now());
        }
        if post && !posted && rnr_seen >= post_after {
            rnr_before_post = rnr_seen;
            posted = true;
            let rtl = fabric.node_mut(b_id).rtl_mut().unwrap();
            for i in 0..lens.len() {
                rtl.post_recv(
                    qb,
                    RecvWr {
                        wr_id: 100 + i as u64,
                        sgl: vec![Sge {
                            addr: b_va + i as u64 * slot,
                            length: slot as u32,
                            lkey: b_keys.lkey,
                        }],
                    },
                )
                .unwrap();
            }
        }
        sent.extend(fabric.node_mut(a_id).model_mut().unwrap().poll_cq(a_cq, 64));
        received.extend(fabric.node_mut(b_id).rtl_mut().unwrap().poll_cq(b_cq, 64));
    }
    let settle = fabric.now() + 100_000;
    fabric.run_until(settle);
    sent.extend(fabric.node_mut(a_id).model_mut().unwrap().poll_cq(a_cq, 64));
    received.extend(fabric.node_mut(b_id).rtl_mut().unwrap().poll_cq(b_cq, 64));
    let rtl = fabric.node_mut(b_id).rtl_mut().unwrap();
    if let Err(m) = rtl.finish_check() {
        panic!("seed {seed}: scoreboard at the end: {m}");
    }
    let rtl = fabric.node(b_id).rtl().unwrap();
    // The responder's memory: every message's bytes in its receive WQE's
    // slot, nothing else changed.
    let mut want = snapshot;
    if post {
        for (i, &(_, len)) in lens.iter().enumerate() {
            let at = i as u64 * slot;
            want.write_va(b_va + at, &data[at as usize..(at + len) as usize])
                .unwrap();
        }
    }
    assert!(
        *rtl.memory() == want,
        "seed {seed}: the RTL NIC's memory differs from the prediction"
    );
    let frames_out = rtl
        .port_log()
        .unwrap()
        .tx
        .iter()
        .map(|(_, f)| RoceFrame::decode(f).unwrap())
        .collect();
    Outcome {
        frames_out,
        rnr_times,
        sent,
        received,
        rnr_naks: rtl.shadow().counters().naks_sent.rnr,
        rnr_before_post,
        requester_state: fabric.node(a_id).model().unwrap().qp_state(qa).unwrap(),
        responder_state: rtl.shadow().qp_state(qb).unwrap(),
        cycles: rtl.stats().cycles,
    }
}

/// The core's RNR NAKs, checked independently of the shadow: each one
/// of the first message's PSN advertising the QP's minimum RNR timer, and
/// the requester's retries at least that timer apart.
fn check_rnr_naks(o: &Outcome) {
    let naks: Vec<&RoceFrame> = o
        .frames_out
        .iter()
        .filter(|f| {
            f.ext
                .aeth
                .is_some_and(|a| a.syndrome & syndrome::TYPE_MASK == syndrome::RNR_NAK)
        })
        .collect();
    assert_eq!(
        naks.len() as u64,
        o.rnr_naks,
        "every RNR NAK of the core counted"
    );
    for f in naks {
        assert_eq!(f.bth.opcode, op::ACKNOWLEDGE);
        assert_eq!(f.bth.psn, FIRST_PSN, "the first message is the one refused");
        assert_eq!(
            f.ext.aeth.unwrap().syndrome,
            syndrome::RNR_NAK | MIN_RNR_TIMER
        );
    }
    // 0.01 ms, less the polling step.
    for w in o.rnr_times.windows(2) {
        assert!(
            w[1] - w[0] >= 9_000,
            "retried after the RNR timer: {:?}",
            o.rnr_times
        );
    }
}

fn check_completed_once(lens: &[(Kind, u64)], o: &Outcome) {
    let sent: Vec<(u64, WcStatus)> = o.sent.iter().map(|c| (c.wr_id, c.status)).collect();
    let want: Vec<(u64, WcStatus)> = (0..lens.len() as u64)
        .map(|i| (i, WcStatus::Success))
        .collect();
    assert_eq!(sent, want, "every message completes once, in order");
    type Received = (u64, WcStatus, WcOpcode, u64, Option<u32>);
    let received: Vec<Received> = o
        .received
        .iter()
        .map(|c| (c.wr_id, c.status, c.opcode, u64::from(c.byte_len), c.imm))
        .collect();
    let want: Vec<Received> = lens
        .iter()
        .enumerate()
        .map(|(i, &(kind, len))| {
            let (opcode, imm) = match kind {
                Kind::Send => (WcOpcode::Recv, None),
                Kind::WriteImm => (WcOpcode::RecvRdmaWithImm, Some(0xC0DE_0000 | i as u32)),
            };
            (100 + i as u64, WcStatus::Success, opcode, len, imm)
        })
        .collect();
    assert_eq!(received, want, "every receive WQE completes once");
    assert_eq!(o.requester_state, QpState::Rts);
    assert_eq!(o.responder_state, QpState::Rts);
}

#[test]
fn rnr_naks_until_receive_wqes_are_posted_then_every_message_once() {
    // 0 B, one packet, three packets and a partial one.
    let lens = [
        (Kind::Send, 0),
        (Kind::WriteImm, 700),
        (Kind::Send, 3 * u64::from(MTU)),
        (Kind::WriteImm, 2500),
    ];
    for (seed, rnr_retry, post_after) in [(1, 7, 3), (2, 4, 2)] {
        let o = run(seed, &lens, rnr_retry, true, post_after);
        assert!(
            o.rnr_before_post >= post_after,
            "the requester retried after RNR NAKs"
        );
        assert!(o.rnr_naks >= post_after, "{} RNR NAKs", o.rnr_naks);
        check_rnr_naks(&o);
        check_completed_once(&lens, &o);
        println!(
            "rnr_retry {rnr_retry}: {} RNR NAKs from the core ({} before the posts), {} core cycles",
            o.rnr_naks, o.rnr_before_post, o.cycles
        );
    }
}

#[test]
fn rnr_retry_exhausted_fails_the_message_with_rnr_retry_exc_err() {
    for (seed, rnr_retry, first) in [(3, 0, Kind::Send), (4, 3, Kind::WriteImm)] {
        let lens = [
            (first, 100),
            (Kind::Send, 2 * u64::from(MTU)),
            (Kind::WriteImm, 64),
        ];
        let o = run(seed, &lens, rnr_retry, false, 0);
        let sent: Vec<(u64, WcStatus)> = o.sent.iter().map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(
            sent,
            [
                (0, WcStatus::RnrRetryExcErr),
                (1, WcStatus::WrFlushErr),
                (2, WcStatus::WrFlushErr)
            ],
            "rnr_retry {rnr_retry}"
        );
        // The first try and each retry of the first message met an RNR NAK.
        assert_eq!(
            o.rnr_naks,
            u64::from(rnr_retry) + 1,
            "rnr_retry {rnr_retry}"
        );
        check_rnr_naks(&o);
        assert!(o.received.is_empty());
        assert_eq!(o.requester_state, QpState::Err);
        // RNR is no error of the responder's QP.
        assert_eq!(o.responder_state, QpState::Rts);
        println!(
            "rnr_retry {rnr_retry}: {} RNR NAKs, {} core cycles",
            o.rnr_naks, o.cycles
        );
    }
}
