//! The verbs end to end on the model backend: two hosts, every verb
//! through rings, doorbells and CQEs; the misuse errors; the host-side
//! error paths of the NIC.

use rocenic_driver::device::Device;
use rocenic_driver::model::{host_address, ModelCluster, ModelDevice};
use rocenic_driver::verbs::{
    access, attr_mask::*, Context, Cq, Error, Mr, Opcode, Qp, QpAttr, QpCap, QpState, RecvWr,
    SendWr, Sge, WorkCompletion,
};

const BUF: u64 = 64 << 10;
const ALL_ACCESS: u8 =
    access::LOCAL_WRITE | access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC;
const TIMEOUT_NS: u64 = 10_000_000;

struct Host {
    ctx: Context<ModelDevice>,
    cq: Cq,
    qp: Qp,
    buf: u64,
    mr: Mr,
}

fn host(cluster: &ModelCluster, n: u8, cap: QpCap, cq_entries: u32) -> Host {
    let mut ctx = Context::open(cluster.device(n)).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(cq_entries).unwrap();
    let qp = ctx.create_qp(pd, cq, cq, cap).unwrap();
    let buf = ctx.alloc(BUF).unwrap();
    let mr = ctx.reg_mr(pd, buf, BUF, ALL_ACCESS).unwrap();
    Host {
        ctx,
        cq,
        qp,
        buf,
        mr,
    }
}

fn to_rts(h: &mut Host, peer: u8, peer_qpn: u32) {
    h.ctx.connect_rc(h.qp, &rc_attr(peer, peer_qpn)).unwrap();
}

/// The attributes of an RC connection to `peer_qpn` on host `peer`.
fn rc_attr(peer: u8, peer_qpn: u32) -> QpAttr {
    QpAttr {
        path_mtu: 1024,
        qp_access_flags: ALL_ACCESS,
        dest_qp_num: peer_qpn,
        ah: Some(host_address(peer)),
        ..QpAttr::default()
    }
}

const CAP: QpCap = QpCap {
    max_send_wr: 16,
    max_recv_wr: 16,
    max_send_sge: 4,
    max_recv_sge: 4,
    max_inline_data: 64,
};

fn pair(cap: QpCap, cq_entries: u32) -> (ModelCluster, Host, Host) {
    let cluster = ModelCluster::new(2, 7, Default::default());
    let mut a = host(&cluster, 1, cap, cq_entries);
    let mut b = host(&cluster, 2, cap, cq_entries);
    let (qa, qb) = (a.qp.qp_num, b.qp.qp_num);
    to_rts(&mut a, 2, qb);
    to_rts(&mut b, 1, qa);
    (cluster, a, b)
}

fn sge(h: &Host, offset: u64, length: u32) -> Sge {
    Sge {
        addr: h.buf + offset,
        length,
        lkey: h.mr.lkey,
    }
}

fn send(wr_id: u64, opcode: Opcode, sg_list: Vec<Sge>) -> SendWr {
    SendWr {
        wr_id,
        opcode,
        sg_list,
        signaled: true,
        solicited: false,
        fence: false,
        inline: false,
    }
}

fn wait(h: &mut Host, n: usize) -> Vec<WorkCompletion> {
    h.ctx.wait_cq(h.cq, n, TIMEOUT_NS).unwrap()
}

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

#[test]
fn every_verb_moves_the_right_bytes_and_completes_as_the_abi_says() {
    let (_cluster, mut a, mut b) = pair(CAP, 64);
    a.ctx.write(a.buf, &pattern(1, 8192)).unwrap();

    // SEND with immediate from two SGEs into a receive WQE of three.
    let recv = RecvWr {
        wr_id: 100,
        sg_list: vec![sge(&b, 0, 1000), sge(&b, 4096, 1000), sge(&b, 8192, 4000)],
    };
    b.ctx.post_recv(b.qp, &recv).unwrap();
    let wr = send(
        1,
        Opcode::SendWithImm { imm: 0xDEAD_BEEF },
        vec![sge(&a, 0, 1500), sge(&a, 2000, 1500)],
    );
    a.ctx.post_send(a.qp, &wr).unwrap();
    let sent = wait(&mut a, 1);
    assert_eq!(
        (sent[0].wr_id, sent[0].opcode, sent[0].status),
        (1, "SEND", "SUCCESS")
    );
    assert_eq!(sent[0].wqe_index, 0);
    let got = wait(&mut b, 1);
    assert_eq!(
        (got[0].wr_id, got[0].opcode, got[0].byte_len),
        (100, "RECV", 3000)
    );
    assert_eq!(got[0].imm_data, Some(0xDEAD_BEEF));
    let sent_bytes = [
        a.ctx.read(a.buf, 1500).unwrap(),
        a.ctx.read(a.buf + 2000, 1500).unwrap(),
    ]
    .concat();
    let placed = [
        b.ctx.read(b.buf, 1000).unwrap(),
        b.ctx.read(b.buf + 4096, 1000).unwrap(),
        b.ctx.read(b.buf + 8192, 1000).unwrap(),
    ]
    .concat();
    assert_eq!(placed, sent_bytes);

    // RDMA WRITE with immediate: data at the address, a RECV_RDMA_WITH_IMM.
    b.ctx
        .post_recv(
            b.qp,
            &RecvWr {
                wr_id: 101,
                sg_list: vec![],
            },
        )
        .unwrap();
    let target = b.buf + 16384;
    let wr = send(
        2,
        Opcode::RdmaWriteWithImm {
            remote_addr: target,
            rkey: b.mr.rkey,
            imm: 7,
        },
        vec![sge(&a, 100, 5000)],
    );
    a.ctx.post_send(a.qp, &wr).unwrap();
    assert_eq!(wait(&mut a, 1)[0].opcode, "RDMA_WRITE");
    let got = wait(&mut b, 1);
    assert_eq!(
        (got[0].wr_id, got[0].opcode, got[0].imm_data),
        (101, "RECV_RDMA_WITH_IMM", Some(7))
    );
    assert_eq!(
        b.ctx.read(target, 5000).unwrap(),
        a.ctx.read(a.buf + 100, 5000).unwrap()
    );

    // RDMA READ back into a fresh place.
    let wr = send(
        3,
        Opcode::RdmaRead {
            remote_addr: target,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 32768, 5000)],
    );
    a.ctx.post_send(a.qp, &wr).unwrap();
    let read = wait(&mut a, 1);
    assert_eq!(
        (read[0].opcode, read[0].status, read[0].byte_len),
        ("RDMA_READ", "SUCCESS", 5000)
    );
    assert_eq!(
        a.ctx.read(a.buf + 32768, 5000).unwrap(),
        a.ctx.read(a.buf + 100, 5000).unwrap()
    );

    // Atomics on an 8-byte word of B.
    let word = b.buf + 40960;
    b.ctx.write(word, &10u64.to_le_bytes()).unwrap();
    let wr = send(
        4,
        Opcode::FetchAdd {
            remote_addr: word,
            rkey: b.mr.rkey,
            add: 5,
        },
        vec![sge(&a, 40960, 8)],
    );
    a.ctx.post_send(a.qp, &wr).unwrap();
    assert_eq!(wait(&mut a, 1)[0].opcode, "FETCH_ADD");
    assert_eq!(a.ctx.read(a.buf + 40960, 8).unwrap(), 10u64.to_le_bytes());
    let wr = send(
        5,
        Opcode::CompareSwap {
            remote_addr: word,
            rkey: b.mr.rkey,
            compare: 15,
            swap: 99,
        },
        vec![sge(&a, 40968, 8)],
    );
    a.ctx.post_send(a.qp, &wr).unwrap();
    assert_eq!(wait(&mut a, 1)[0].opcode, "COMP_SWAP");
    assert_eq!(a.ctx.read(a.buf + 40968, 8).unwrap(), 15u64.to_le_bytes());
    assert_eq!(b.ctx.read(word, 8).unwrap(), 99u64.to_le_bytes());

    // SEND with invalidate: the receiver learns the key, which then fails.
    b.ctx
        .post_recv(
            b.qp,
            &RecvWr {
                wr_id: 102,
                sg_list: vec![sge(&b, 0, 64)],
            },
        )
        .unwrap();
    let wr = send(
        6,
        Opcode::SendWithInv { rkey: b.mr.rkey },
        vec![sge(&a, 0, 64)],
    );
    a.ctx.post_send(a.qp, &wr).unwrap();
    assert!(wait(&mut a, 1)[0].is_success());
    let got = wait(&mut b, 1);
    assert_eq!(got[0].invalidated_rkey, Some(b.mr.rkey));

    let counters: std::collections::BTreeMap<_, _> = a.ctx.counters().into_iter().collect();
    assert!(
        counters["tx_frames"] >= 6 && counters["rx_frames"] >= 6,
        "{counters:?}"
    );
}

#[test]
fn the_cq_ring_wraps_with_the_owner_bit_and_unsignaled_wqes_complete_with_the_next() {
    let (_cluster, mut a, b) = pair(CAP, 4);
    let mut seen = Vec::new();
    for i in 0..40u64 {
        let mut wr = send(
            i,
            Opcode::RdmaWrite {
                remote_addr: b.buf + 64 * i,
                rkey: b.mr.rkey,
            },
            vec![sge(&a, 64 * i, 64)],
        );
        wr.signaled = i % 2 == 1;
        while let Err(e) = a.ctx.post_send(a.qp, &wr) {
            assert_eq!(e, Error::QueueFull);
            seen.extend(a.ctx.wait_cq(a.cq, 1, TIMEOUT_NS).unwrap());
        }
        seen.extend(a.ctx.poll_cq(a.cq, 1).unwrap());
    }
    let missing = 20 - seen.len();
    seen.extend(a.ctx.wait_cq(a.cq, missing, TIMEOUT_NS).unwrap());
    let ids: Vec<u64> = seen.iter().map(|w| w.wr_id).collect();
    assert_eq!(ids, (0..40).filter(|i| i % 2 == 1).collect::<Vec<_>>());
    assert!(seen
        .iter()
        .all(|w| w.is_success() && u64::from(w.wqe_index) == w.wr_id % 65536));
}

#[test]
fn a_bad_rkey_completes_rem_access_err_and_the_qp_recovers_through_reset() {
    let (_cluster, mut a, mut b) = pair(CAP, 64);
    let bad = send(
        9,
        Opcode::RdmaWrite {
            remote_addr: b.buf,
            rkey: b.mr.rkey ^ 0x100,
        },
        vec![sge(&a, 0, 64)],
    );
    a.ctx.post_send(a.qp, &bad).unwrap();
    let after = send(
        10,
        Opcode::RdmaWrite {
            remote_addr: b.buf,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 0, 64)],
    );
    a.ctx.post_send(a.qp, &after).unwrap();
    let wcs = wait(&mut a, 2);
    assert_eq!(
        wcs.iter().map(|w| (w.wr_id, w.status)).collect::<Vec<_>>(),
        [(9, "REM_ACCESS_ERR"), (10, "WR_FLUSH_ERR")]
    );
    assert_eq!(a.ctx.query_qp(a.qp).unwrap().qp_state, QpState::Err);
    let counters: std::collections::BTreeMap<_, _> = b.ctx.counters().into_iter().collect();
    assert_eq!(counters["tx_naks_remote_access"], 1);

    // ERR -> RESET -> RTS on both sides, then the same WRITE works.
    for h in [&mut a, &mut b] {
        let reset = QpAttr {
            qp_state: QpState::Reset,
            ..QpAttr::default()
        };
        h.ctx.modify_qp(h.qp, &reset, STATE).unwrap();
    }
    let (qa, qb) = (a.qp.qp_num, b.qp.qp_num);
    to_rts(&mut a, 2, qb);
    to_rts(&mut b, 1, qa);
    a.ctx.write(a.buf, &pattern(3, 64)).unwrap();
    a.ctx.post_send(a.qp, &after).unwrap();
    assert_eq!(wait(&mut a, 1)[0].status, "SUCCESS");
    assert_eq!(b.ctx.read(b.buf, 64).unwrap(), pattern(3, 64));
}

#[test]
fn misuse_is_a_typed_error_before_anything_reaches_the_device() {
    let cluster = ModelCluster::new(2, 3, Default::default());
    let mut h = host(
        &cluster,
        1,
        QpCap {
            max_send_wr: 2,
            ..CAP
        },
        8,
    );
    let write = send(
        1,
        Opcode::RdmaWrite {
            remote_addr: 0,
            rkey: 0,
        },
        vec![sge(&h, 0, 8)],
    );
    assert!(matches!(
        h.ctx.post_send(h.qp, &write),
        Err(Error::WrongQpState {
            state: QpState::Reset,
            ..
        })
    ));
    let rts = QpAttr {
        qp_state: QpState::Rts,
        ..QpAttr::default()
    };
    assert!(matches!(
        h.ctx.modify_qp(h.qp, &rts, STATE | SQ_PSN),
        Err(Error::WrongQpState { .. })
    ));
    let init = QpAttr {
        qp_state: QpState::Init,
        ..QpAttr::default()
    };
    assert!(matches!(
        h.ctx.modify_qp(h.qp, &init, STATE),
        Err(Error::BadAttribute(_))
    ));
    let outside = Sge {
        addr: h.buf + BUF - 4,
        length: 8,
        lkey: h.mr.lkey,
    };
    let recv = RecvWr {
        wr_id: 1,
        sg_list: vec![outside],
    };
    h.ctx
        .modify_qp(
            h.qp,
            &QpAttr {
                qp_access_flags: ALL_ACCESS,
                ..init
            },
            STATE | ACCESS_FLAGS | PKEY_INDEX,
        )
        .unwrap();
    assert!(matches!(
        h.ctx.post_recv(h.qp, &recv),
        Err(Error::SgeOutsideMr { .. })
    ));
    let five = RecvWr {
        wr_id: 1,
        sg_list: vec![sge(&h, 0, 8); 8],
    };
    assert!(matches!(
        h.ctx.post_recv(h.qp, &five),
        Err(Error::TooManySges { given: 8, .. })
    ));
    assert!(matches!(
        h.ctx.reg_mr(h.mr.pd, h.buf, 0, 0),
        Err(Error::BadAttribute(_))
    ));
    assert!(matches!(
        h.ctx.reg_mr(h.mr.pd, h.buf, 64, access::REMOTE_WRITE),
        Err(Error::BadAttribute(_))
    ));
    assert!(matches!(
        h.ctx.reg_mr(h.mr.pd, 0x10, 64, 0),
        Err(Error::Memory(_))
    ));
    assert!(matches!(h.ctx.dealloc_pd(h.mr.pd), Err(Error::Busy(_))));
    assert!(matches!(h.ctx.destroy_cq(h.cq), Err(Error::Busy(_))));
    assert!(matches!(
        h.ctx.create_cq(1 << 20),
        Err(Error::BadAttribute(_))
    ));
    let mr = h.mr;
    h.ctx.dereg_mr(mr).unwrap();
    assert!(matches!(
        h.ctx.dereg_mr(mr),
        Err(Error::Device {
            command: "DEREG_MR",
            status: "NO_SUCH_OBJECT"
        })
    ));
    // The receive ring holds 2^log entries; one more is refused.
    let mr = h.ctx.reg_mr(h.mr.pd, h.buf, BUF, ALL_ACCESS).unwrap();
    let one = RecvWr {
        wr_id: 2,
        sg_list: vec![Sge {
            addr: h.buf,
            length: 8,
            lkey: mr.lkey,
        }],
    };
    let depth = 1 << h.ctx.qp_rings(h.qp).unwrap().rq_log_size;
    for _ in 0..depth {
        h.ctx.post_recv(h.qp, &one).unwrap();
    }
    assert_eq!(h.ctx.post_recv(h.qp, &one), Err(Error::QueueFull));
    let qp = h.qp;
    h.ctx.destroy_qp(qp).unwrap();
    assert!(matches!(
        h.ctx.post_recv(qp, &one),
        Err(Error::NoSuchObject("QP", _))
    ));
}

fn counter(h: &mut Host, name: &str) -> u64 {
    h.ctx
        .counters()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap()
        .1
}

#[test]
fn host_side_errors_complete_in_error_and_are_counted_never_written_outside() {
    let (_cluster, mut a, b) = pair(CAP, 64);
    // A WQE with an unknown opcode, written and rung by hand.
    let rings = a.ctx.qp_rings(a.qp).unwrap();
    let good = send(
        1,
        Opcode::RdmaWrite {
            remote_addr: b.buf,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 0, 8)],
    );
    a.ctx.post_send(a.qp, &good).unwrap();
    let mut slot = rocenic_driver::verbs::encode_send(&good, None, 1, rings.sq_log_stride);
    slot[0] = 0x77;
    slot[8] = 2;
    a.ctx
        .write(rings.sq_va + (1 << rings.sq_log_stride), &slot)
        .unwrap();
    a.ctx.device().write32(2, a.qp.qp_num * 4096, 2);
    let wcs = wait(&mut a, 2);
    assert_eq!(
        wcs.iter()
            .map(|w| (w.wr_id, w.status, w.wqe_index))
            .collect::<Vec<_>>(),
        [(1, "SUCCESS", 0), (2, "LOC_QP_OP_ERR", 1)]
    );
    assert_eq!(counter(&mut a, "wqe_errors"), 1);
    assert_eq!(a.ctx.query_qp(a.qp).unwrap().qp_state, QpState::Err);

    // A doorbell beyond the ring and an unmapped offset.
    let beyond = u32::from(rings.sq_producer) + 1000;
    a.ctx.device().write32(2, a.qp.qp_num * 4096, beyond);
    assert_eq!(counter(&mut a, "doorbell_errors"), 1);
    assert_eq!(a.ctx.device().read32(0, 0x0F00), 0);
    assert_eq!(counter(&mut a, "mmio_unmapped"), 1);
}

#[test]
fn a_full_cq_is_never_overwritten_its_qp_goes_to_err_and_nothing_is_lost() {
    let (_cluster, mut a, b) = pair(
        QpCap {
            max_send_wr: 64,
            ..CAP
        },
        4,
    );
    for i in 0..8u64 {
        let wr = send(
            i,
            Opcode::RdmaWrite {
                remote_addr: b.buf,
                rkey: b.mr.rkey,
            },
            vec![sge(&a, 0, 8)],
        );
        a.ctx.post_send(a.qp, &wr).unwrap();
    }
    // Let the NIC finish without polling: the ring fills at 4.
    for _ in 0..10_000 {
        a.ctx.device().service();
    }
    assert_eq!(counter(&mut a, "cq_overflows"), 1);
    let got = a.ctx.wait_cq(a.cq, 8, TIMEOUT_NS).unwrap();
    let ids: Vec<u64> = got.iter().map(|w| w.wr_id).collect();
    assert_eq!(ids, (0..8).collect::<Vec<_>>(), "in order, none lost");
    assert_eq!(a.ctx.query_qp(a.qp).unwrap().qp_state, QpState::Err);
}

#[test]
fn an_armed_cq_raises_one_completion_event_and_an_unarmed_one_none() {
    let (_cluster, mut a, b) = pair(CAP, 64);
    let write = send(
        1,
        Opcode::RdmaWrite {
            remote_addr: b.buf,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 0, 64)],
    );
    a.ctx.post_send(a.qp, &write).unwrap();
    wait(&mut a, 1);
    assert_eq!(a.ctx.get_event(100_000), Err(Error::Timeout("an event")));

    a.ctx.req_notify_cq(a.cq, false).unwrap();
    a.ctx.post_send(a.qp, &write).unwrap();
    let event = a.ctx.get_event(TIMEOUT_NS).unwrap();
    assert_eq!((event.event, event.object), ("COMPLETION", a.cq.cqn));
    assert_eq!(wait(&mut a, 1)[0].wr_id, 1);
    // One event per arming.
    a.ctx.post_send(a.qp, &write).unwrap();
    wait(&mut a, 1);
    assert_eq!(a.ctx.get_event(100_000), Err(Error::Timeout("an event")));
}

#[test]
fn qp_errors_are_events_naming_the_qp_and_their_cause() {
    let (_cluster, mut a, b) = pair(CAP, 64);
    let bad = send(
        9,
        Opcode::RdmaWrite {
            remote_addr: b.buf,
            rkey: b.mr.rkey ^ 0x100,
        },
        vec![sge(&a, 0, 64)],
    );
    a.ctx.post_send(a.qp, &bad).unwrap();
    assert_eq!(wait(&mut a, 1)[0].status, "REM_ACCESS_ERR");
    let event = a.ctx.get_event(TIMEOUT_NS).unwrap();
    assert_eq!((event.event, event.object), ("QP_ACCESS_ERR", a.qp.qp_num));

    // A doorbell beyond the ring of a fresh QP: QP_FATAL with its cause.
    let (_cluster, mut a, _b) = pair(CAP, 64);
    let qpn = a.qp.qp_num;
    a.ctx.device().write32(2, qpn * 4096, 999);
    let event = a.ctx.get_event(TIMEOUT_NS).unwrap();
    assert_eq!(
        (event.event, event.cause, event.object, event.detail),
        ("QP_FATAL", "DOORBELL_BEYOND_RING", qpn, 999)
    );
}

#[test]
fn a_masked_vector_holds_its_message_pending_until_unmasked() {
    use rocenic_driver::abi::registers as regs;
    let (_cluster, mut a, b) = pair(CAP, 64);
    let control =
        regs::bar0_offset(&regs::MSIX) + regs::MSIX.register("vector_control").unwrap().offset;
    let pba = regs::bar0_offset(&regs::MSIX) + regs::MSIX.register("pending").unwrap().offset;
    a.ctx.device().write32(0, control, 1);
    a.ctx.req_notify_cq(a.cq, false).unwrap();
    let write = send(
        1,
        Opcode::RdmaWrite {
            remote_addr: b.buf,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 0, 64)],
    );
    a.ctx.post_send(a.qp, &write).unwrap();
    wait(&mut a, 1);
    // The EQE is written; arming the EQ now finds it and raises the
    // message, which the mask holds.
    assert_eq!(a.ctx.get_event(TIMEOUT_NS).unwrap().event, "COMPLETION");
    a.ctx.req_notify_cq(a.cq, false).unwrap();
    a.ctx.post_send(a.qp, &write).unwrap();
    wait(&mut a, 1);
    let mut word = [0u8; 4];
    let eq_doorbell = regs::bar0_offset(&regs::EVENT_QUEUES) + 0x10;
    regs::eq_doorbell::CONSUMER.set(&mut word, 1).unwrap();
    regs::eq_doorbell::ARM.set(&mut word, 1).unwrap();
    a.ctx
        .device()
        .write32(0, eq_doorbell, u32::from_le_bytes(word));
    assert_eq!(a.ctx.device().read32(0, pba) & 1, 1, "pending while masked");
    assert!(!a.ctx.device().wait_interrupt(0, 10_000).unwrap());
    a.ctx.device().write32(0, control, 0);
    assert_eq!(a.ctx.device().read32(0, pba) & 1, 0, "sent on unmask");
    assert!(a.ctx.device().wait_interrupt(0, 10_000).unwrap());
}

/// A QP destroyed and created again under the same number starts clean:
/// PSNs, queues and responder state begin anew, on both sides.
#[test]
fn a_qp_created_again_under_its_old_number_starts_clean() {
    let (_cluster, mut a, mut b) = pair(CAP, 64);
    for i in 0..5u64 {
        let wr = send(
            i,
            Opcode::RdmaWrite {
                remote_addr: b.buf,
                rkey: b.mr.rkey,
            },
            vec![sge(&a, 0, 9000)],
        );
        a.ctx.post_send(a.qp, &wr).unwrap();
    }
    let read = send(
        5,
        Opcode::RdmaRead {
            remote_addr: b.buf,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 0, 64)],
    );
    a.ctx.post_send(a.qp, &read).unwrap();
    wait(&mut a, 6);
    assert_ne!(
        a.ctx.query_qp(a.qp).unwrap().sq_psn,
        0,
        "the old QP moved its PSN"
    );
    let (old_a, old_b) = (a.qp, b.qp);
    for h in [&mut a, &mut b] {
        let qp = h.qp;
        h.ctx.destroy_qp(qp).unwrap();
        let pd = h.mr.pd;
        h.qp = h.ctx.create_qp(pd, h.cq, h.cq, CAP).unwrap();
    }
    assert_eq!((a.qp, b.qp), (old_a, old_b), "the numbers are reused");
    let fresh = a.ctx.query_qp(a.qp).unwrap();
    assert_eq!(
        (
            fresh.qp_state,
            fresh.sq_psn,
            fresh.rq_psn,
            fresh.dest_qp_num
        ),
        (QpState::Reset, 0, 0, 0)
    );
    let (qa, qb) = (a.qp.qp_num, b.qp.qp_num);
    to_rts(&mut a, 2, qb);
    to_rts(&mut b, 1, qa);
    a.ctx.write(a.buf, &pattern(9, 64)).unwrap();
    let wr = send(
        7,
        Opcode::RdmaWrite {
            remote_addr: b.buf + 100,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 0, 64)],
    );
    a.ctx.post_send(a.qp, &wr).unwrap();
    let wc = wait(&mut a, 1);
    assert_eq!(
        (wc[0].wr_id, wc[0].status, wc[0].wqe_index),
        (7, "SUCCESS", 0)
    );
    assert_eq!(b.ctx.read(b.buf + 100, 64).unwrap(), pattern(9, 64));
}

/// Once DEREG_MR has completed, no byte of a peer's WRITE lands in the
/// region: the peer's next access is NAKed (REM_ACCESS_ERR).
#[test]
fn an_mr_deregistered_under_a_stream_of_writes_takes_no_byte_after() {
    let (_cluster, mut a, mut b) = pair(
        QpCap {
            max_send_wr: 64,
            ..CAP
        },
        64,
    );
    a.ctx.write(a.buf, &pattern(5, 16384)).unwrap();
    for i in 0..32u64 {
        let wr = send(
            i,
            Opcode::RdmaWrite {
                remote_addr: b.buf + 1024 * (i % 16),
                rkey: b.mr.rkey,
            },
            vec![sge(&a, 0, 16384)],
        );
        a.ctx.post_send(a.qp, &wr).unwrap();
    }
    let first = wait(&mut a, 1);
    assert!(first[0].is_success());
    let mr = b.mr;
    b.ctx.dereg_mr(mr).unwrap();
    let snapshot = b.ctx.read(b.buf, BUF as usize).unwrap();
    let rest = wait(&mut a, 31);
    let statuses: Vec<&str> = rest.iter().map(|w| w.status).collect();
    let failed = statuses
        .iter()
        .position(|s| *s != "SUCCESS")
        .expect("an access after DEREG_MR fails");
    assert_eq!(statuses[failed], "REM_ACCESS_ERR", "{statuses:?}");
    assert!(
        statuses[failed + 1..].iter().all(|s| *s == "WR_FLUSH_ERR"),
        "{statuses:?}"
    );
    assert_eq!(
        b.ctx.read(b.buf, BUF as usize).unwrap(),
        snapshot,
        "no byte after DEREG_MR"
    );
}

fn inline(wr: SendWr) -> SendWr {
    SendWr { inline: true, ..wr }
}

/// The bytes of `h`'s send ring slot `index`.
fn sq_slot_va(h: &mut Host, index: u16) -> u64 {
    let rings = h.ctx.qp_rings(h.qp).unwrap();
    rings.sq_va + ((u64::from(index) % (1 << rings.sq_log_size)) << rings.sq_log_stride)
}

#[test]
fn an_inline_send_carries_the_bytes_of_post_time_not_of_the_buffer_or_ring_later() {
    let (_cluster, mut a, mut b) = pair(CAP, 64);
    let sent = pattern(3, 50);
    a.ctx.write(a.buf, &sent).unwrap();
    b.ctx
        .post_recv(
            b.qp,
            &RecvWr {
                wr_id: 100,
                sg_list: vec![sge(&b, 0, 256)],
            },
        )
        .unwrap();
    // Two SGEs, one with an L_Key no MR has: inline data does not use it.
    let mut sg_list = vec![sge(&a, 0, 20), sge(&a, 20, 30)];
    sg_list[1].lkey = 0xDEAD;
    let wr = inline(send(1, Opcode::SendWithImm { imm: 5 }, sg_list));
    a.ctx.post_send(a.qp, &wr).unwrap();
    // The caller reuses its buffer at once, and the ring slot is
    // scribbled over: neither reaches the wire.
    a.ctx.write(a.buf, &[0xAA; 50]).unwrap();
    let slot = sq_slot_va(&mut a, 0);
    a.ctx.write(slot + 32, &[0xBB; 64]).unwrap();
    let done = wait(&mut a, 1);
    assert_eq!((done[0].status, done[0].byte_len), ("SUCCESS", 50));
    let got = wait(&mut b, 1);
    assert_eq!((got[0].byte_len, got[0].imm_data), (50, Some(5)));
    assert_eq!(b.ctx.read(b.buf, 50).unwrap(), sent);

    // An inline RDMA WRITE of the slot's whole capacity for this QP.
    let written = pattern(4, 64);
    a.ctx.write(a.buf + 4096, &written).unwrap();
    let wr = inline(send(
        2,
        Opcode::RdmaWrite {
            remote_addr: b.buf + 8192,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 4096, 64)],
    ));
    a.ctx.post_send(a.qp, &wr).unwrap();
    a.ctx.write(a.buf + 4096, &[0; 64]).unwrap();
    assert_eq!(wait(&mut a, 1)[0].status, "SUCCESS");
    assert_eq!(b.ctx.read(b.buf + 8192, 64).unwrap(), written);
}

#[test]
fn inline_beyond_the_qps_max_or_with_a_read_or_atomic_is_refused() {
    let (_cluster, mut a, b) = pair(CAP, 64);
    let before = a.ctx.qp_rings(a.qp).unwrap().sq_producer;
    let write = |sg_list| {
        send(
            1,
            Opcode::RdmaWrite {
                remote_addr: b.buf,
                rkey: b.mr.rkey,
            },
            sg_list,
        )
    };
    assert_eq!(
        a.ctx
            .post_send(a.qp, &inline(write(vec![sge(&a, 0, 40), sge(&a, 40, 25)]))),
        Err(Error::InlineTooLong { given: 65, max: 64 })
    );
    let read = send(
        2,
        Opcode::RdmaRead {
            remote_addr: b.buf,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 0, 8)],
    );
    let add = send(
        3,
        Opcode::FetchAdd {
            remote_addr: b.buf,
            rkey: b.mr.rkey,
            add: 1,
        },
        vec![sge(&a, 0, 8)],
    );
    for wr in [read, add] {
        assert!(matches!(
            a.ctx.post_send(a.qp, &inline(wr)),
            Err(Error::BadAttribute(_))
        ));
    }
    assert_eq!(a.ctx.qp_rings(a.qp).unwrap().sq_producer, before);

    // The cap picks the slot, and is bounded by the device's.
    let device_max = a.ctx.query_device().max_inline_data;
    let pd = a.ctx.alloc_pd().unwrap();
    let cap = |max_inline_data| QpCap {
        max_send_sge: 1,
        max_inline_data,
        ..CAP
    };
    let small = a.ctx.create_qp(pd, a.cq, a.cq, cap(32)).unwrap();
    let large = a.ctx.create_qp(pd, a.cq, a.cq, cap(33)).unwrap();
    assert_eq!(a.ctx.qp_rings(small).unwrap().sq_log_stride, 6);
    assert_eq!(a.ctx.qp_rings(large).unwrap().sq_log_stride, 7);
    assert!(matches!(
        a.ctx.create_qp(pd, a.cq, a.cq, cap(device_max + 1)),
        Err(Error::BadAttribute(_))
    ));
}

#[test]
fn malformed_inline_wqes_complete_loc_qp_op_err_and_move_the_qp_to_err() {
    use rocenic_driver::abi::wqe::send as layout;
    type Mangle = fn(&mut [u8]);
    let mangles: [(&str, Mangle); 3] = [
        ("inline_len past the slot", |slot| {
            let len = slot.len() as u64 - 32 + 1;
            layout::INLINE_LEN.set(slot, len).unwrap();
        }),
        ("INLINE with RDMA_READ", |slot| {
            layout::OPCODE.set(slot, 4).unwrap();
        }),
        ("INLINE with an SGE", |slot| {
            layout::SGE_COUNT.set(slot, 1).unwrap();
        }),
    ];
    for (what, mangle) in mangles {
        let (_cluster, mut a, b) = pair(CAP, 64);
        a.ctx.write(a.buf, &[7; 8]).unwrap();
        let wr = send(
            1,
            Opcode::RdmaWrite {
                remote_addr: b.buf,
                rkey: b.mr.rkey,
            },
            vec![],
        );
        let stride = a.ctx.qp_rings(a.qp).unwrap().sq_log_stride;
        let mut slot = rocenic_driver::verbs::encode_send(&wr, Some(&[7; 8]), 0, stride);
        mangle(&mut slot);
        let at = sq_slot_va(&mut a, 0);
        a.ctx.write(at, &slot).unwrap();
        a.ctx.device().write32(2, a.qp.qp_num * 4096, 1);
        let wc = wait(&mut a, 1);
        assert_eq!((wc[0].wr_id, wc[0].status), (1, "LOC_QP_OP_ERR"), "{what}");
        assert_eq!(counter(&mut a, "wqe_errors"), 1, "{what}");
        assert_eq!(
            a.ctx.query_qp(a.qp).unwrap().qp_state,
            QpState::Err,
            "{what}"
        );
    }
}

/// The bytes of an inline SEND WQE of `data` with `wr_id` at `index`.
fn inline_send_wqe(h: &mut Host, wr_id: u64, data: &[u8], index: u16) -> Vec<u8> {
    let stride = h.ctx.qp_rings(h.qp).unwrap().sq_log_stride;
    let wr = send(wr_id, Opcode::Send, vec![]);
    rocenic_driver::verbs::encode_send(&wr, Some(data), index, stride)
}

/// Writes `wqe` into `h`'s inline window, 32 bits at a time.
fn write_window(h: &mut Host, wqe: &[u8]) {
    let page = h.qp.qp_num * 4096 + 0x100;
    for (i, word) in wqe.chunks_exact(4).enumerate() {
        let value = u32::from_le_bytes(word.try_into().unwrap());
        h.ctx.device().write32(2, page + 4 * i as u32, value);
    }
}

#[test]
fn the_inline_window_rings_the_doorbell_and_replaces_the_fetch_only_for_the_next_wqe() {
    // An idle ring: the NIC takes the window's WQE, not the slot's.
    let small_slots = QpCap {
        max_send_sge: 1,
        max_inline_data: 32,
        ..CAP
    };
    let (_cluster, mut a, mut b) = pair(small_slots, 64);
    for i in 0..2 {
        let recv = RecvWr {
            wr_id: 100 + i,
            sg_list: vec![sge(&b, 1024 * i, 64)],
        };
        b.ctx.post_recv(b.qp, &recv).unwrap();
    }
    let in_ring = inline_send_wqe(&mut a, 1, b"from the ring", 0);
    let in_window = inline_send_wqe(&mut a, 2, b"from the window", 0);
    let at = sq_slot_va(&mut a, 0);
    a.ctx.write(at, &in_ring).unwrap();
    write_window(&mut a, &in_window);
    assert_eq!(wait(&mut a, 1)[0].wr_id, 2);
    assert_eq!(wait(&mut b, 1)[0].byte_len, 15);
    assert_eq!(b.ctx.read(b.buf, 15).unwrap(), b"from the window");

    // A window write past the QP's 64-byte stride is unmapped.
    assert_eq!(a.ctx.qp_rings(a.qp).unwrap().sq_log_stride, 6);
    a.ctx
        .device()
        .write32(2, a.qp.qp_num * 4096 + 0x100 + 64, 0);
    assert_eq!(counter(&mut a, "mmio_unmapped"), 1);

    // A ring the NIC has not fetched up to (its QP not in RTS yet): the
    // window still rings the doorbell, but the WQE is fetched from its
    // slot, in order.
    let cluster = ModelCluster::new(2, 7, Default::default());
    let mut a = host(&cluster, 1, CAP, 64);
    let mut b = host(&cluster, 2, CAP, 64);
    to_rts(&mut b, 1, a.qp.qp_num);
    for i in 0..2 {
        let recv = RecvWr {
            wr_id: 100 + i,
            sg_list: vec![sge(&b, 1024 * i, 64)],
        };
        b.ctx.post_recv(b.qp, &recv).unwrap();
    }
    let attr = rc_attr(2, b.qp.qp_num);
    a.ctx
        .modify_qp(
            a.qp,
            &QpAttr {
                qp_state: QpState::Init,
                ..attr
            },
            STATE | ACCESS_FLAGS | PKEY_INDEX,
        )
        .unwrap();
    let first = inline_send_wqe(&mut a, 10, b"first", 0);
    let at = sq_slot_va(&mut a, 0);
    a.ctx.write(at, &first).unwrap();
    a.ctx.device().write32(2, a.qp.qp_num * 4096, 1);
    let second_in_ring = inline_send_wqe(&mut a, 11, b"second, ring", 1);
    let second_in_window = inline_send_wqe(&mut a, 12, b"second, window", 1);
    let at = sq_slot_va(&mut a, 1);
    a.ctx.write(at, &second_in_ring).unwrap();
    write_window(&mut a, &second_in_window);
    for (qp_state, mask) in [
        (
            QpState::Rtr,
            AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
        ),
        (
            QpState::Rts,
            SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC,
        ),
    ] {
        a.ctx
            .modify_qp(a.qp, &QpAttr { qp_state, ..attr }, STATE | mask)
            .unwrap();
    }
    let ids: Vec<u64> = wait(&mut a, 2).iter().map(|w| w.wr_id).collect();
    assert_eq!(ids, [10, 11]);
    wait(&mut b, 2);
    assert_eq!(b.ctx.read(b.buf + 1024, 12).unwrap(), b"second, ring");
}

#[test]
fn the_driver_posts_through_the_inline_window_when_asked() {
    let (_cluster, mut a, mut b) = pair(CAP, 64);
    a.ctx.set_inline_doorbell(true);
    a.ctx.write(a.buf, &pattern(6, 4096)).unwrap();
    let (local, lkey, remote, rkey) = (a.buf, a.mr.lkey, b.buf, b.mr.rkey);
    let write = |i: u64, inline_it: bool| {
        let wr = send(
            i,
            Opcode::RdmaWrite {
                remote_addr: remote + 64 * i,
                rkey,
            },
            vec![Sge {
                addr: local + 64 * i,
                length: 64,
                lkey,
            }],
        );
        SendWr {
            inline: inline_it,
            ..wr
        }
    };
    // Posts on an idle ring (the window, with and without inline data),
    // then a burst behind them (the doorbell).
    for i in 0..4 {
        a.ctx.post_send(a.qp, &write(i, i % 2 == 0)).unwrap();
        assert_eq!(wait(&mut a, 1)[0].wr_id, i);
    }
    for i in 4..8 {
        a.ctx.post_send(a.qp, &write(i, false)).unwrap();
    }
    let ids: Vec<u64> = wait(&mut a, 4).iter().map(|w| w.wr_id).collect();
    assert_eq!(ids, [4, 5, 6, 7]);
    assert_eq!(
        b.ctx.read(b.buf, 8 * 64).unwrap(),
        a.ctx.read(a.buf, 8 * 64).unwrap()
    );
}

/// A READ of B's bytes into A's buffer, then a WRITE of that buffer back
/// to another place of B, with `fence` on the WRITE: what the WRITE put.
fn read_then_write_back(fence: bool) -> (Vec<u8>, Vec<u8>) {
    let (_cluster, mut a, mut b) = pair(CAP, 64);
    let fetched = pattern(8, 256);
    b.ctx.write(b.buf, &fetched).unwrap();
    a.ctx.write(a.buf, &[0x55; 256]).unwrap();
    let read = send(
        1,
        Opcode::RdmaRead {
            remote_addr: b.buf,
            rkey: b.mr.rkey,
        },
        vec![sge(&a, 0, 256)],
    );
    let write_back = SendWr {
        fence,
        ..send(
            2,
            Opcode::RdmaWrite {
                remote_addr: b.buf + 4096,
                rkey: b.mr.rkey,
            },
            vec![sge(&a, 0, 256)],
        )
    };
    a.ctx.post_send(a.qp, &read).unwrap();
    a.ctx.post_send(a.qp, &write_back).unwrap();
    let ids: Vec<u64> = wait(&mut a, 2).iter().map(|w| w.wr_id).collect();
    assert_eq!(ids, [1, 2]);
    (b.ctx.read(b.buf + 4096, 256).unwrap(), fetched)
}

#[test]
fn a_fenced_write_sends_what_the_read_before_it_fetched() {
    let (written, fetched) = read_then_write_back(true);
    assert_eq!(written, fetched);
    // Unfenced, the WRITE leaves before the READ's response lands.
    let (written, _) = read_then_write_back(false);
    assert_eq!(written, [0x55; 256]);
}

#[test]
fn a_cq_armed_for_solicited_events_wakes_only_for_solicited_or_error_receives() {
    let (_cluster, mut a, mut b) = pair(CAP, 64);
    for i in 0..4 {
        let length = if i == 3 { 8 } else { 1024 };
        let recv = RecvWr {
            wr_id: 100 + i,
            sg_list: vec![sge(&b, 1024 * i, length)],
        };
        b.ctx.post_recv(b.qp, &recv).unwrap();
    }
    let payload = sge(&a, 0, 64);
    let message = |wr_id, solicited| SendWr {
        solicited,
        ..send(wr_id, Opcode::Send, vec![payload])
    };
    let no_event = Err(Error::Timeout("an event"));

    // A SEND without SE: a CQE, no event. The sender's own successful
    // completions are never solicited either.
    b.ctx.req_notify_cq(b.cq, true).unwrap();
    a.ctx.req_notify_cq(a.cq, true).unwrap();
    a.ctx.post_send(a.qp, &message(1, false)).unwrap();
    assert_eq!(wait(&mut b, 1)[0].wr_id, 100);
    assert_eq!(b.ctx.get_event(100_000), no_event);
    wait(&mut a, 1);
    assert_eq!(a.ctx.get_event(100_000), no_event);

    // A SEND with SE: the event.
    a.ctx.post_send(a.qp, &message(2, true)).unwrap();
    let event = b.ctx.get_event(TIMEOUT_NS).unwrap();
    assert_eq!((event.event, event.object), ("COMPLETION", b.cq.cqn));
    assert_eq!(wait(&mut b, 1)[0].wr_id, 101);

    // A WRITE with immediate and SE consumes a receive WQE: solicited too.
    b.ctx.req_notify_cq(b.cq, true).unwrap();
    let write_imm = SendWr {
        solicited: true,
        ..send(
            3,
            Opcode::RdmaWriteWithImm {
                remote_addr: b.buf + 8192,
                rkey: b.mr.rkey,
                imm: 1,
            },
            vec![sge(&a, 0, 64)],
        )
    };
    a.ctx.post_send(a.qp, &write_imm).unwrap();
    assert_eq!(b.ctx.get_event(TIMEOUT_NS).unwrap().event, "COMPLETION");
    assert_eq!(wait(&mut b, 1)[0].opcode, "RECV_RDMA_WITH_IMM");

    // A SEND without SE into an 8-byte buffer: an error CQE, which wakes
    // a CQ armed for solicited events.
    b.ctx.req_notify_cq(b.cq, true).unwrap();
    a.ctx.post_send(a.qp, &message(4, false)).unwrap();
    let event = b.ctx.get_event(TIMEOUT_NS).unwrap();
    assert_eq!((event.event, event.object), ("COMPLETION", b.cq.cqn));
    assert_eq!(wait(&mut b, 1)[0].status, "LOC_LEN_ERR");
}

/// Hosts 1 and 3 each WRITE `rounds` x 16 x 64 KiB into host 2 (a 2:1
/// incast at the switch, which marks ECN), after `setup` ran on host 2;
/// host 2's CNPs sent and host 1's rate cuts.
fn incast_into_host_2(setup: impl FnOnce(&mut Host)) -> (u64, u64) {
    let cluster = ModelCluster::new(3, 7, Default::default());
    let mut senders = [host(&cluster, 1, CAP, 64), host(&cluster, 3, CAP, 64)];
    let mut sink = host(&cluster, 2, CAP, 64);
    setup(&mut sink);
    let pd = sink.ctx.alloc_pd().unwrap();
    let second = sink.ctx.create_qp(pd, sink.cq, sink.cq, CAP).unwrap();
    let sink_qps = [sink.qp, second];
    for (sender, (sink_qp, peer)) in senders.iter_mut().zip(sink_qps.into_iter().zip([1, 3])) {
        to_rts(sender, 2, sink_qp.qp_num);
        sink.ctx
            .connect_rc(sink_qp, &rc_attr(peer, sender.qp.qp_num))
            .unwrap();
    }
    for round in 0..4 {
        for sender in &mut senders {
            for i in 0..16 {
                let wr = send(
                    round * 16 + i,
                    Opcode::RdmaWrite {
                        remote_addr: sink.buf,
                        rkey: sink.mr.rkey,
                    },
                    vec![sge(sender, 0, BUF as u32)],
                );
                sender.ctx.post_send(sender.qp, &wr).unwrap();
            }
        }
        for sender in &mut senders {
            assert_eq!(wait(sender, 16).len(), 16);
        }
    }
    let [ref mut first, _] = senders;
    (counter(&mut sink, "tx_cnps"), counter(first, "rate_cuts"))
}

#[test]
fn congestion_parameters_read_back_and_turn_the_notification_point_off() {
    let cluster = ModelCluster::new(1, 7, Default::default());
    let mut ctx = Context::open(cluster.device(1)).unwrap();
    let reset: Vec<(&str, u32)> = ctx.congestion();
    assert!(reset.contains(&("rpg_ai_rate", 500)) && reset.contains(&("dce_tcp_g", 1019)));
    ctx.set_congestion("rpg_ai_rate", 40).unwrap();
    ctx.set_congestion("rpg_time_reset", 55).unwrap();
    assert!(ctx.congestion().contains(&("rpg_ai_rate", 40)));
    let dcqcn = cluster
        .device(1)
        .host_interface(|h| h.nic().config().dcqcn.clone());
    assert_eq!((dcqcn.ai_rate_bps, dcqcn.rate_increase_ns), (40e6, 55_000));
    // Misuse is a typed error and writes nothing.
    assert!(matches!(
        ctx.set_congestion("rpg_gd", 32),
        Err(Error::Parameter(_))
    ));
    assert!(matches!(
        ctx.set_congestion("rpg_no_such", 1),
        Err(Error::Parameter(_))
    ));
    assert!(ctx.congestion().contains(&("rpg_gd", 11)));

    let (cnps, cuts) = incast_into_host_2(|_| {});
    assert!(cnps > 0 && cuts > 0, "{cnps} CNPs, {cuts} cuts");
    let (cnps, cuts) = incast_into_host_2(|sink| sink.ctx.set_congestion("enable", 0b10).unwrap());
    assert_eq!((cnps, cuts), (0, 0));
}
