//! Error paths of the RC transport: retry exhaustion on a dead peer, RNR
//! and its exhaustion, remote protection violations (nothing written),
//! atomics never executed twice, verbs in the wrong QP state, and
//! malformed input that must be counted, never panic.

mod common;

use common::*;
use rocenic_fabric::Endpoint;
use rocenic_model::nic::Nic;
use rocenic_model::verbs::*;
use rocenic_wire::op;

#[test]
fn dead_peer_exhausts_retries_then_flushes() {
    let mut pair = Pair::new(1);
    let o = ConnOpts {
        timeout: 1,
        retry_cnt: 3,
        ..ConnOpts::default()
    };
    let (a, b) = connect(&mut pair, &o);
    pair.mute[0] = true;
    let src = buffer(&mut pair.nics[0], a.pd, 4096, Access::ALL);
    for i in 0..3 {
        let mut wr = send_wr(
            i,
            SendOp::Write {
                remote_addr: 0x1000,
                rkey: 0x100,
            },
            vec![src.sge(0, 3000)],
        );
        wr.signaled = i != 1;
        pair.nics[0].post_send(a.qpn, wr).unwrap();
    }
    pair.nics[0]
        .post_recv(a.qpn, recv_wr(77, vec![src.sge(0, 64)]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    let cqes = pair.nics[0].poll_cq(a.scq, 16);
    let st: Vec<(u64, WcStatus)> = cqes.iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(
        st,
        vec![
            (0, WcStatus::RetryExcErr),
            (1, WcStatus::WrFlushErr),
            (2, WcStatus::WrFlushErr)
        ]
    );
    let r = pair.nics[0].poll_cq(a.rcq, 16);
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].wr_id, r[0].status), (77, WcStatus::WrFlushErr));
    assert_eq!(pair.nics[0].qp_state(a.qpn), Ok(QpState::Err));
    let c = pair.nics[0].counters();
    // retry_cnt retries, then the expiry that gives up.
    assert_eq!(c.timeouts, 4);
    assert!(c.retransmitted_frames >= 3);
    // Posting to the QP in ERR is accepted and flushed at once.
    pair.nics[0]
        .post_send(a.qpn, send_wr(9, SendOp::Send, vec![]))
        .unwrap();
    let f = pair.nics[0].poll_cq(a.scq, 16);
    assert_eq!((f[0].wr_id, f[0].status), (9, WcStatus::WrFlushErr));
    let _ = b;
}

#[test]
fn rnr_nak_then_receive_posted_completes() {
    let mut pair = Pair::new(2);
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            min_rnr_timer: 1,
            rnr_retry: 7,
            ..ConnOpts::default()
        },
    );
    let src = buffer(&mut pair.nics[0], a.pd, 5000, Access::ALL);
    let dst = buffer(&mut pair.nics[1], b.pd, 5000, Access::ALL);
    let data = pattern(3, 5000);
    fill(&mut pair.nics[0], src.va, &data);
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, SendOp::Send, vec![src.sge(0, 5000)]))
        .unwrap();
    // Long enough for several RNR rounds of 10 us each (rnr_retry 7 = forever).
    assert!(!pair.run(200_000));
    assert!(pair.nics[1].counters().naks_sent.rnr >= 5);
    assert!(pair.nics[0].counters().rnr_waits >= 5);
    assert!(pair.nics[0].poll_cq(a.scq, 4).is_empty());
    assert!(
        read(&pair.nics[1], dst.va, 5000).iter().all(|&x| x == 0),
        "RNR'd SEND must not be executed"
    );
    pair.nics[1]
        .post_recv(b.qpn, recv_wr(2, vec![dst.sge(0, 5000)]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    assert_eq!(read(&pair.nics[1], dst.va, 5000), data);
    let s = pair.nics[0].poll_cq(a.scq, 4);
    assert_eq!((s.len(), s[0].status), (1, WcStatus::Success));
    let r = pair.nics[1].poll_cq(b.rcq, 4);
    assert_eq!(
        (r.len(), r[0].status, r[0].byte_len),
        (1, WcStatus::Success, 5000)
    );
}

#[test]
fn rnr_retry_exhaustion() {
    for verb in [Verb::Send, Verb::WriteImm] {
        let mut pair = Pair::new(3);
        let (a, b) = connect(
            &mut pair,
            &ConnOpts {
                min_rnr_timer: 1,
                rnr_retry: 2,
                ..ConnOpts::default()
            },
        );
        let src = buffer(&mut pair.nics[0], a.pd, 64, Access::ALL);
        let dst = buffer(&mut pair.nics[1], b.pd, 64, Access::ALL);
        let op = match verb {
            Verb::Send => SendOp::Send,
            _ => SendOp::WriteWithImm {
                remote_addr: dst.va,
                rkey: dst.rkey,
                imm: 5,
            },
        };
        pair.nics[0]
            .post_send(a.qpn, send_wr(1, op, vec![src.sge(0, 64)]))
            .unwrap();
        pair.nics[0]
            .post_send(a.qpn, send_wr(2, SendOp::Send, vec![src.sge(0, 8)]))
            .unwrap();
        assert!(pair.run(1_000_000_000));
        let s = pair.nics[0].poll_cq(a.scq, 4);
        let st: Vec<(u64, WcStatus)> = s.iter().map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(
            st,
            vec![(1, WcStatus::RnrRetryExcErr), (2, WcStatus::WrFlushErr)],
            "{verb:?}"
        );
        // The first RNR NAK and two retries, each answered with RNR.
        assert_eq!(pair.nics[0].counters().naks_received.rnr, 3);
        assert_eq!(pair.nics[0].qp_state(a.qpn), Ok(QpState::Err));
        assert!(read(&pair.nics[1], dst.va, 64).iter().all(|&x| x == 0));
    }
}

/// How a remote access is made invalid.
#[derive(Clone, Copy, Debug)]
enum Bad {
    WrongKey,
    StaleKey,
    WrongPd,
    MissingMrAccess,
    MissingQpAccess,
    OutOfBounds,
}

fn protection_case(bad: Bad, verb: Verb) {
    let mut pair = Pair::new(4);
    let qp_access = match bad {
        Bad::MissingQpAccess => Access::LOCAL_WRITE,
        _ => Access::ALL,
    };
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            access: qp_access,
            mtu: 1024,
            ..ConnOpts::default()
        },
    );
    let len = 10_000u64;
    let target_pd = match bad {
        Bad::WrongPd => pair.nics[1].alloc_pd(),
        _ => b.pd,
    };
    let mr_access = match bad {
        Bad::MissingMrAccess => Access::LOCAL_WRITE,
        _ => Access::ALL,
    };
    let target = buffer(&mut pair.nics[1], target_pd, len, mr_access);
    let original = pattern(40, len as usize);
    fill(&mut pair.nics[1], target.va, &original);
    let mut rkey = target.rkey;
    let mut remote_addr = target.va;
    match bad {
        Bad::WrongKey => rkey ^= 0x300,
        Bad::StaleKey => {
            let fresh = pair.nics[1].rereg_mr(target.lkey).unwrap();
            assert_ne!(fresh.rkey, rkey);
        }
        // The first 3 KiB would fit; the end does not.
        Bad::OutOfBounds => remote_addr += 3000,
        _ => {}
    }
    let local = buffer(&mut pair.nics[0], a.pd, len, Access::ALL);
    let local_orig = pattern(41, len as usize);
    fill(&mut pair.nics[0], local.va, &local_orig);
    let (op, n) = match verb {
        Verb::Write => (SendOp::Write { remote_addr, rkey }, len),
        Verb::Read => (SendOp::Read { remote_addr, rkey }, len),
        _ => (
            SendOp::FetchAdd {
                remote_addr: remote_addr + 8 * 1000,
                rkey,
                add: 1,
            },
            8,
        ),
    };
    let op = match (bad, op) {
        (Bad::OutOfBounds, SendOp::FetchAdd { rkey, add, .. }) => SendOp::FetchAdd {
            remote_addr: target.va + len,
            rkey,
            add,
        },
        (_, op) => op,
    };
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, op, vec![local.sge(0, n as u32)]))
        .unwrap();
    pair.nics[0]
        .post_send(a.qpn, send_wr(2, SendOp::Send, vec![]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    let ctx = format!("{bad:?} {verb:?}");
    assert!(
        read(&pair.nics[1], target.va, len as usize) == original,
        "{ctx}: target written"
    );
    assert!(
        read(&pair.nics[0], local.va, len as usize) == local_orig,
        "{ctx}: local written"
    );
    let s = pair.nics[0].poll_cq(a.scq, 4);
    let st: Vec<(u64, WcStatus)> = s.iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(
        st,
        vec![(1, WcStatus::RemAccessErr), (2, WcStatus::WrFlushErr)],
        "{ctx}"
    );
    assert_eq!(pair.nics[1].counters().naks_sent.remote_access, 1, "{ctx}");
    assert_eq!(
        pair.nics[0].counters().naks_received.remote_access,
        1,
        "{ctx}"
    );
    assert_eq!(pair.nics[1].qp_state(b.qpn), Ok(QpState::Err));
    assert_eq!(pair.nics[0].qp_state(a.qpn), Ok(QpState::Err));
}

#[test]
fn remote_protection_violations_write_nothing() {
    for bad in [
        Bad::WrongKey,
        Bad::StaleKey,
        Bad::WrongPd,
        Bad::MissingMrAccess,
        Bad::MissingQpAccess,
        Bad::OutOfBounds,
    ] {
        for verb in [Verb::Write, Verb::Read, Verb::Send] {
            // Verb::Send stands for the atomic case here.
            protection_case(bad, verb);
        }
    }
}

#[test]
fn send_with_invalidate_revokes_the_rkey() {
    let mut pair = Pair::new(5);
    let (a, b) = connect(&mut pair, &ConnOpts::default());
    let target = buffer(&mut pair.nics[1], b.pd, 256, Access::ALL);
    let src = buffer(&mut pair.nics[0], a.pd, 256, Access::ALL);
    let rbuf = buffer(&mut pair.nics[1], b.pd, 256, Access::ALL);
    pair.nics[1]
        .post_recv(b.qpn, recv_wr(1, vec![rbuf.sge(0, 256)]))
        .unwrap();
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, target.write_op(), vec![src.sge(0, 16)]))
        .unwrap();
    pair.nics[0]
        .post_send(
            a.qpn,
            send_wr(2, SendOp::SendWithInv { rkey: target.rkey }, vec![]),
        )
        .unwrap();
    pair.nics[0]
        .post_send(a.qpn, send_wr(3, target.write_op(), vec![src.sge(0, 16)]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    let st = statuses(&mut pair.nics[0], a.scq, 8);
    assert_eq!(
        st,
        vec![WcStatus::Success, WcStatus::Success, WcStatus::RemAccessErr]
    );
    let r = pair.nics[1].poll_cq(b.rcq, 8);
    assert_eq!(r[0].invalidated_rkey, Some(target.rkey));
}

#[test]
fn receive_buffer_too_small() {
    let mut pair = Pair::new(6);
    let (a, b) = connect(&mut pair, &ConnOpts::default());
    let src = buffer(&mut pair.nics[0], a.pd, 3000, Access::ALL);
    let rbuf = buffer(&mut pair.nics[1], b.pd, 2000, Access::ALL);
    pair.nics[1]
        .post_recv(b.qpn, recv_wr(1, vec![rbuf.sge(0, 2000)]))
        .unwrap();
    pair.nics[1]
        .post_recv(b.qpn, recv_wr(2, vec![rbuf.sge(0, 2000)]))
        .unwrap();
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, SendOp::Send, vec![src.sge(0, 3000)]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    let s = pair.nics[0].poll_cq(a.scq, 4);
    assert_eq!(s[0].status, WcStatus::RemInvReqErr);
    let r: Vec<(u64, WcStatus)> = pair.nics[1]
        .poll_cq(b.rcq, 4)
        .iter()
        .map(|c| (c.wr_id, c.status))
        .collect();
    assert_eq!(r, vec![(1, WcStatus::LocLenErr), (2, WcStatus::WrFlushErr)]);
    assert_eq!(pair.nics[1].counters().naks_sent.invalid_request, 1);
}

#[test]
fn local_key_errors_complete_with_loc_prot_err() {
    let mut pair = Pair::new(7);
    let (a, b) = connect(&mut pair, &ConnOpts::default());
    let src = buffer(&mut pair.nics[0], a.pd, 4096, Access::ALL);
    let ro = buffer(&mut pair.nics[0], a.pd, 4096, Access::NONE);
    let target = buffer(&mut pair.nics[1], b.pd, 4096, Access::ALL);
    let ok = send_wr(1, target.write_op(), vec![src.sge(0, 100)]);
    let bad_key = send_wr(
        2,
        target.write_op(),
        vec![Sge {
            addr: src.va,
            length: 100,
            lkey: src.lkey ^ 0x500,
        }],
    );
    pair.nics[0].post_send(a.qpn, ok).unwrap();
    pair.nics[0].post_send(a.qpn, bad_key).unwrap();
    assert!(pair.run(1_000_000_000));
    let st = statuses(&mut pair.nics[0], a.scq, 4);
    assert_eq!(st, vec![WcStatus::Success, WcStatus::LocProtErr]);
    assert_eq!(pair.nics[0].qp_state(a.qpn), Ok(QpState::Err));

    // A READ into a buffer without LOCAL_WRITE fails before it is sent.
    let mut pair = Pair::new(8);
    let (a, b) = connect(&mut pair, &ConnOpts::default());
    let ro2 = buffer(&mut pair.nics[0], a.pd, 4096, Access::NONE);
    let target = buffer(&mut pair.nics[1], b.pd, 4096, Access::ALL);
    pair.nics[0]
        .post_send(
            a.qpn,
            send_wr(
                1,
                SendOp::Read {
                    remote_addr: target.va,
                    rkey: target.rkey,
                },
                vec![ro2.sge(0, 64)],
            ),
        )
        .unwrap();
    assert!(pair.run(1_000_000_000));
    let st = statuses(&mut pair.nics[0], a.scq, 4);
    assert_eq!(st, vec![WcStatus::LocProtErr]);
    assert_eq!(pair.nics[1].counters().rx_frames, 0, "nothing may be sent");
    let _ = ro;
}

#[test]
fn local_buffer_changed_while_a_read_or_atomic_is_in_flight_fails_it() {
    // The requester checks a READ's or atomic's buffer when it sends the
    // request; an MR re-registered (shorter, new keys) before the response
    // comes makes the placement fail: LocProtErr, nothing written, the
    // QP to ERR and the WQE behind it flushed.
    for atomic in [false, true] {
        let mut pair = Pair::new(10 + u64::from(atomic));
        let (a, b) = connect(&mut pair, &ConnOpts::default());
        pair.nics[0].record_responses();
        let target = buffer(&mut pair.nics[1], b.pd, 4096, Access::ALL);
        fill(&mut pair.nics[1], target.va, &pattern(3, 4096));
        let dst = buffer(&mut pair.nics[0], a.pd, 4096, Access::LOCAL_WRITE);
        let other = buffer(&mut pair.nics[0], a.pd, 4096, Access::LOCAL_WRITE);
        let (remote_addr, rkey) = (target.va, target.rkey);
        let (op, len) = if atomic {
            let add = 1;
            (
                SendOp::FetchAdd {
                    remote_addr,
                    rkey,
                    add,
                },
                8,
            )
        } else {
            (SendOp::Read { remote_addr, rkey }, 3000)
        };
        let first = pair.nics[0].qp_context(a.qpn).unwrap().sq_send_psn;
        for (wr_id, buf) in [(1, dst), (2, other)] {
            let wr = send_wr(wr_id, op, vec![buf.sge(0, len)]);
            pair.nics[0].post_send(a.qpn, wr).unwrap();
        }
        assert!(pair.run_until(1_000_000, |p| {
            p.nics[0].qp_context(a.qpn).unwrap().sq_send_psn != first
        }));
        pair.nics[0].dereg_mr(dst.lkey).unwrap();
        pair.nics[0]
            .reg_mr(a.pd, dst.va, 4, Access::LOCAL_WRITE)
            .unwrap();
        assert!(pair.run(1_000_000_000));
        let st: Vec<(u64, WcStatus)> = pair.nics[0]
            .poll_cq(a.scq, 4)
            .iter()
            .map(|c| (c.wr_id, c.status))
            .collect();
        assert_eq!(
            st,
            vec![(1, WcStatus::LocProtErr), (2, WcStatus::WrFlushErr)],
            "atomic {atomic}"
        );
        assert_eq!(pair.nics[0].qp_state(a.qpn), Ok(QpState::Err));
        assert_eq!(
            read(&pair.nics[0], dst.va, len as usize),
            vec![0; len as usize]
        );
        let placements: Vec<_> = pair.nics[0]
            .take_response_log()
            .iter()
            .filter_map(|r| r.placement)
            .collect();
        assert_eq!(
            placements,
            vec![Err(WcStatus::LocProtErr)],
            "atomic {atomic}"
        );
    }
}

#[test]
fn misaligned_atomic_is_an_invalid_request() {
    let mut pair = Pair::new(9);
    let (a, b) = connect(&mut pair, &ConnOpts::default());
    let target = buffer(&mut pair.nics[1], b.pd, 64, Access::ALL);
    let res = buffer(&mut pair.nics[0], a.pd, 8, Access::ALL);
    let before = read(&pair.nics[1], target.va, 64);
    pair.nics[0]
        .post_send(
            a.qpn,
            send_wr(
                1,
                SendOp::FetchAdd {
                    remote_addr: target.va + 4,
                    rkey: target.rkey,
                    add: 1,
                },
                vec![res.sge(0, 8)],
            ),
        )
        .unwrap();
    assert!(pair.run(1_000_000_000));
    assert_eq!(
        pair.nics[0].poll_cq(a.scq, 4)[0].status,
        WcStatus::RemInvReqErr
    );
    assert_eq!(read(&pair.nics[1], target.va, 64), before);
    assert_eq!(pair.nics[1].counters().naks_sent.invalid_request, 1);
}

#[test]
fn duplicate_atomic_is_executed_once() {
    for cmp_swap in [false, true] {
        let mut pair = Pair::new(10);
        let (a, b) = connect(
            &mut pair,
            &ConnOpts {
                timeout: 2,
                ..ConnOpts::default()
            },
        );
        let target = buffer(&mut pair.nics[1], b.pd, 8, Access::ALL);
        let res = buffer(&mut pair.nics[0], a.pd, 8, Access::ALL);
        fill(&mut pair.nics[1], target.va, &100u64.to_le_bytes());
        let mut dropped = 0;
        pair.filter = Some(Box::new(move |from, f| {
            let hit = from == 1 && f.bth.opcode == op::ATOMIC_ACKNOWLEDGE && dropped < 2;
            dropped += u32::from(hit);
            hit
        }));
        let op = if cmp_swap {
            SendOp::CompareSwap {
                remote_addr: target.va,
                rkey: target.rkey,
                compare: 100,
                swap: 7,
            }
        } else {
            SendOp::FetchAdd {
                remote_addr: target.va,
                rkey: target.rkey,
                add: 5,
            }
        };
        pair.nics[0]
            .post_send(a.qpn, send_wr(1, op, vec![res.sge(0, 8)]))
            .unwrap();
        assert!(pair.run(1_000_000_000));
        let c = pair.nics[0].poll_cq(a.scq, 4);
        assert_eq!((c.len(), c[0].status), (1, WcStatus::Success));
        // Executed once: 100 + 5 (not 110 or 115), or swapped once.
        let want: u64 = if cmp_swap { 7 } else { 105 };
        assert_eq!(read(&pair.nics[1], target.va, 8), want.to_le_bytes());
        assert_eq!(read(&pair.nics[0], res.va, 8), 100u64.to_le_bytes());
        assert_eq!(pair.nics[1].counters().duplicate_requests, 2);
        assert_eq!(pair.nics[0].counters().timeouts, 2);
    }
}

#[test]
fn verbs_in_the_wrong_state_are_refused() {
    let mut nic = Nic::new(rocenic_model::nic::NicConfig::new(mac(0), ip(0)));
    let side = make_side(&mut nic);
    let q = side.qpn;
    assert!(q >= 2);
    let wr = || send_wr(1, SendOp::Send, vec![]);
    let wrong = |state| Err(VerbsError::WrongQpState { qpn: q, state });
    assert_eq!(nic.qp_state(q), Ok(QpState::Reset));
    assert_eq!(nic.post_send(q, wr()), wrong(QpState::Reset));
    assert_eq!(nic.post_recv(q, recv_wr(1, vec![])), wrong(QpState::Reset));
    let rts = ModifyQp::ToRts {
        sq_psn: 0,
        timeout: 8,
        retry_cnt: 7,
        rnr_retry: 7,
        max_rd_atomic: 4,
    };
    let rtr = |mtu, rnr| ModifyQp::ToRtr {
        remote: RemoteAddress {
            mac: mac(1),
            ip: ip(1),
        },
        dest_qpn: 0x11,
        rq_psn: 0,
        path_mtu: mtu,
        max_dest_rd_atomic: 4,
        min_rnr_timer: rnr,
    };
    assert_eq!(nic.modify_qp(q, rtr(1024, 1)), wrong(QpState::Reset));
    assert_eq!(nic.modify_qp(q, rts), wrong(QpState::Reset));
    nic.modify_qp(
        q,
        ModifyQp::ToInit {
            access: Access::ALL,
            pkey: 0xFFFF,
        },
    )
    .unwrap();
    assert_eq!(nic.post_send(q, wr()), wrong(QpState::Init));
    assert_eq!(nic.post_recv(q, recv_wr(1, vec![])), Ok(()));
    assert_eq!(nic.modify_qp(q, rts), wrong(QpState::Init));
    assert_eq!(
        nic.modify_qp(q, rtr(1000, 1)),
        Err(VerbsError::InvalidAttribute("path_mtu"))
    );
    assert_eq!(
        nic.modify_qp(q, rtr(1024, 32)),
        Err(VerbsError::InvalidAttribute("min_rnr_timer"))
    );
    nic.modify_qp(q, rtr(1024, 1)).unwrap();
    assert_eq!(nic.post_send(q, wr()), wrong(QpState::Rtr));
    let rts_with = |timeout, retry_cnt, rnr_retry| ModifyQp::ToRts {
        sq_psn: 0,
        timeout,
        retry_cnt,
        rnr_retry,
        max_rd_atomic: 4,
    };
    for (bad, what) in [
        (rts_with(8, 8, 7), "retry_cnt"),
        (rts_with(8, 7, 8), "rnr_retry"),
        (rts_with(32, 7, 7), "timeout"),
    ] {
        assert_eq!(
            nic.modify_qp(q, bad),
            Err(VerbsError::InvalidAttribute(what))
        );
    }
    nic.modify_qp(q, rts).unwrap();
    assert_eq!(
        nic.modify_qp(
            q,
            ModifyQp::ToInit {
                access: Access::ALL,
                pkey: 0xFFFF
            }
        ),
        wrong(QpState::Rts)
    );
    assert_eq!(nic.post_send(q, wr()), Ok(()));
    nic.modify_qp(q, ModifyQp::ToErr).unwrap();
    assert_eq!(nic.qp_state(q), Ok(QpState::Err));
    // The posted SEND and the receive flush.
    assert_eq!(nic.poll_cq(side.scq, 4)[0].status, WcStatus::WrFlushErr);
    assert_eq!(nic.poll_cq(side.rcq, 4)[0].status, WcStatus::WrFlushErr);
    assert_eq!(nic.modify_qp(q, rts), wrong(QpState::Err));
    nic.modify_qp(q, ModifyQp::ToReset).unwrap();
    assert_eq!(nic.qp_state(q), Ok(QpState::Reset));
    assert_eq!(nic.post_send(0x99, wr()), Err(VerbsError::NoSuchQp(0x99)));
    assert_eq!(nic.dealloc_pd(side.pd), Err(VerbsError::Busy));
}

/// Frames A sent during a short exchange, for mutation.
fn captured_frames() -> (Pair, Side, Side, Vec<rocenic_wire::RoceFrame>) {
    use std::cell::RefCell;
    use std::rc::Rc;
    let mut pair = Pair::new(12);
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 256,
            ..ConnOpts::default()
        },
    );
    let seen = Rc::new(RefCell::new(Vec::new()));
    let sink = seen.clone();
    pair.filter = Some(Box::new(move |_, f| {
        sink.borrow_mut().push(f.clone());
        false
    }));
    let ops = [
        Op::Message(Verb::Send, 700),
        Op::Message(Verb::WriteImm, 600),
        Op::Message(Verb::Read, 900),
        Op::FetchAdd(3),
    ];
    run_workload(&mut pair, a, b, &ops, 1, 1_000_000_000);
    pair.filter = None;
    let frames = seen.borrow().clone();
    (pair, a, b, frames)
}

#[test]
fn malformed_and_misdirected_frames_are_counted_not_fatal() {
    use rand::{Rng, SeedableRng};
    let (mut pair, a, b, frames) = captured_frames();
    assert!(frames.len() > 10);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(99);
    let now = pair.now + 1;
    let rx_before = pair.nics[1].counters().rx_frames;
    // Byte-level damage: caught by the codec, counted by reason.
    for _ in 0..3000 {
        let f = &frames[rng.gen_range(0..frames.len())];
        let mut bytes = f.encode().unwrap();
        match rng.gen_range(0..3) {
            0 => {
                let i = rng.gen_range(0..bytes.len());
                bytes[i] ^= 1 << rng.gen_range(0..8);
            }
            1 => bytes.truncate(rng.gen_range(0..bytes.len())),
            _ => bytes = (0..rng.gen_range(0..200)).map(|_| rng.gen()).collect(),
        }
        pair.nics[1].receive(now, bytes);
    }
    let c = pair.nics[1].counters();
    assert_eq!(c.rx_frames - rx_before, 3000);
    assert!(
        c.rx_dropped.get("icrc").copied().unwrap_or(0) > 100,
        "{:?}",
        c.rx_dropped
    );
    assert!(
        c.rx_dropped.get("truncated").copied().unwrap_or(0) > 100,
        "{:?}",
        c.rx_dropped
    );

    // Well-formed frames to a QP that does not exist, from the wrong
    // source, and to a QP that is only in INIT.
    let mut f = frames[0].clone();
    f.bth.dest_qp = 0x4242;
    pair.nics[1].receive(now, f.encode().unwrap());
    assert_eq!(pair.nics[1].counters().rx_dropped["unknown_qp"], 1);
    let mut f = frames[0].clone();
    if let rocenic_wire::IpHeader::V4(h) = &mut f.ip {
        h.src = std::net::Ipv4Addr::new(10, 9, 9, 9);
    }
    pair.nics[1].receive(now, f.encode().unwrap());
    assert_eq!(pair.nics[1].counters().rx_dropped["wrong_source"], 1);
    let idle = pair.nics[1]
        .create_qp(b.pd, b.scq, b.rcq, QpCaps::default())
        .unwrap();
    pair.nics[1]
        .modify_qp(
            idle,
            ModifyQp::ToInit {
                access: Access::ALL,
                pkey: 0xFFFF,
            },
        )
        .unwrap();
    let mut f = frames[0].clone();
    f.bth.dest_qp = idle;
    pair.nics[1].receive(now, f.encode().unwrap());
    assert_eq!(pair.nics[1].counters().rx_dropped["qp_state"], 1);

    // Old valid frames replayed: duplicates, answered and never executed.
    let dup_before = pair.nics[1].counters().duplicate_requests;
    let recv_before = pair.nics[1].poll_cq(b.rcq, 64).len();
    assert_eq!(recv_before, 0);
    for f in &frames {
        if f.bth.opcode <= op::FETCH_ADD && f.bth.opcode != op::READ_REQUEST {
            pair.nics[1].receive(now, f.encode().unwrap());
        }
    }
    assert!(pair.nics[1].counters().duplicate_requests > dup_before);
    assert!(pair.nics[1].poll_cq(b.rcq, 64).is_empty());
    assert_eq!(pair.nics[1].qp_state(b.qpn), Ok(QpState::Rts));
    assert!(pair.run(1_000_000_000));
    assert_eq!(pair.nics[0].qp_state(a.qpn), Ok(QpState::Rts));
}

#[test]
fn random_well_formed_requests_never_panic() {
    use rand::{Rng, SeedableRng};
    use rocenic_wire::*;
    let (mut pair, _a, b, frames) = captured_frames();
    let template = frames[0].clone();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let opcodes: Vec<u8> = opcode::OPCODES.iter().map(|o| o.code).collect();
    let mut base = 0;
    for round in 0..4000u32 {
        if round % 50 == 0 {
            // Revive the responder QP (errors move it to ERR) so later
            // frames hit live state too.
            base = rng.gen::<u32>() & MASK24;
            let nic = &mut pair.nics[1];
            nic.modify_qp(b.qpn, ModifyQp::ToReset).unwrap();
            bring_up(
                nic,
                b.qpn,
                0,
                0x11,
                (base, 0),
                &ConnOpts {
                    mtu: 256,
                    ..ConnOpts::default()
                },
            );
            for i in 0..4 {
                let rbuf = buffer(nic, b.pd, 512, Access::ALL);
                nic.post_recv(b.qpn, recv_wr(i, vec![rbuf.sge(0, 512)]))
                    .unwrap();
            }
        }
        let code = opcodes[rng.gen_range(0..opcodes.len())];
        let info = opcode::info(code).unwrap();
        let mut f = template.clone();
        // Mostly near the expected PSN, so in-sequence paths run.
        let p = if rng.gen_bool(0.9) {
            psn::add(base, rng.gen_range(0..6))
        } else {
            rng.gen::<u32>() & MASK24
        };
        f.bth = Bth::new(code, b.qpn, p);
        f.bth.ack_req = rng.gen();
        let h = info.headers;
        let va = if rng.gen() {
            rng.gen()
        } else {
            rng.gen_range(0..1u64 << 48)
        };
        f.ext = ExtHeaders {
            reth: h.contains(ExtSet::RETH).then(|| Reth {
                va,
                rkey: rng.gen(),
                dma_len: rng.gen_range(0..5000),
            }),
            atomic_eth: h.contains(ExtSet::ATOMIC_ETH).then(|| AtomicEth {
                va,
                rkey: rng.gen(),
                swap_add: rng.gen(),
                compare: rng.gen(),
            }),
            aeth: h.contains(ExtSet::AETH).then(|| Aeth {
                syndrome: rng.gen(),
                msn: rng.gen::<u32>() & MASK24,
            }),
            atomic_ack_eth: h
                .contains(ExtSet::ATOMIC_ACK_ETH)
                .then(|| AtomicAckEth { orig: rng.gen() }),
            imm: h.contains(ExtSet::IMM).then(|| rng.gen()),
            ieth: h.contains(ExtSet::IETH).then(|| rng.gen()),
            deth: h.contains(ExtSet::DETH).then(|| Deth {
                qkey: rng.gen(),
                src_qp: rng.gen::<u32>() & MASK24,
            }),
        };
        f.payload = if info.has_payload {
            vec![0x5A; rng.gen_range(0..=300)]
        } else {
            Vec::new()
        };
        pair.nics[1].receive(pair.now, f.encode().unwrap());
        while pair.nics[1].transmit(pair.now).is_some() {}
        pair.nics[1].advance(pair.now);
        pair.now += 1000;
    }
    let c = pair.nics[1].counters();
    assert!(c.rx_dropped.values().sum::<u64>() > 1000);
    assert!(c.naks_sent.invalid_request + c.naks_sent.remote_access > 0);
}

#[test]
fn message_longer_than_2_gib_fails_locally_in_order() {
    let mut pair = Pair::new(13);
    let (a, b) = connect(&mut pair, &ConnOpts::default());
    let src = buffer(&mut pair.nics[0], a.pd, 4096, Access::ALL);
    let target = buffer(&mut pair.nics[1], b.pd, 4096, Access::ALL);
    let write = target.write_op();
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, write, vec![src.sge(0, 100)]))
        .unwrap();
    // Two SGEs summing past 2^31 bytes: never sent, fails after WR 1.
    let huge = vec![
        Sge {
            addr: src.va,
            length: 1 << 30,
            lkey: src.lkey,
        },
        Sge {
            addr: src.va,
            length: (1 << 30) + 1,
            lkey: src.lkey,
        },
    ];
    pair.nics[0]
        .post_send(a.qpn, send_wr(2, write, huge))
        .unwrap();
    pair.nics[0]
        .post_send(a.qpn, send_wr(3, write, vec![src.sge(0, 100)]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    let st: Vec<(u64, WcStatus)> = pair.nics[0]
        .poll_cq(a.scq, 8)
        .iter()
        .map(|c| (c.wr_id, c.status))
        .collect();
    assert_eq!(
        st,
        vec![
            (1, WcStatus::Success),
            (2, WcStatus::LocLenErr),
            (3, WcStatus::WrFlushErr)
        ]
    );
    assert_eq!(pair.nics[1].counters().rx_frames, 1);
}
