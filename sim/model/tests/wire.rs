//! Wire-level behaviour of the transport, observed frame by frame: the
//! Go-Back-N window and max_rd_atomic limits, AckReq placement, MSN in
//! every AETH, READ retry resuming at the received offset, ACK timeout
//! retransmission, CNPs and DCQCN pacing, IPv6 paths.

mod common;

use common::*;
use rocenic_model::nic::NicConfig;
use rocenic_model::verbs::*;
use rocenic_wire::{op, psn, AethKind, IpHeader, RoceFrame};
use std::cell::RefCell;
use std::rc::Rc;

type Log = Rc<RefCell<Vec<(usize, RoceFrame)>>>;

/// Records every frame (side that sent it, decoded frame); drops those
/// `drop` picks.
fn record(pair: &mut Pair, mut drop: impl FnMut(usize, &RoceFrame) -> bool + 'static) -> Log {
    let log: Log = Rc::default();
    let sink = log.clone();
    pair.filter = Some(Box::new(move |from, f| {
        sink.borrow_mut().push((from, f.clone()));
        drop(from, f)
    }));
    log
}

#[test]
fn window_limits_unacknowledged_psns_and_ackreq_follows_the_interval() {
    let mut a_cfg = NicConfig::new(mac(0), ip(0));
    a_cfg.max_outstanding_psns = 16;
    a_cfg.ack_req_interval = 4;
    let mut pair = Pair::with_configs(1, a_cfg, NicConfig::new(mac(1), ip(1)));
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 256,
            ..ConnOpts::default()
        },
    );
    let log = record(&mut pair, |_, _| false);
    let src = buffer(&mut pair.nics[0], a.pd, 100 * 256, Access::ALL);
    let dst = buffer(&mut pair.nics[1], b.pd, 100 * 256, Access::ALL);
    let data = pattern(1, 100 * 256);
    fill(&mut pair.nics[0], src.va, &data);
    pair.nics[0]
        .post_send(
            a.qpn,
            send_wr(1, dst.write_op(), vec![src.sge(0, 100 * 256)]),
        )
        .unwrap();
    assert!(pair.run(1_000_000_000));
    assert_eq!(read(&pair.nics[1], dst.va, data.len()), data);
    let mut next_unacked: Option<u32> = None;
    let mut max_seen = 0;
    let mut requests = 0;
    for (from, f) in log.borrow().iter() {
        if *from == 0 {
            requests += 1;
            let first = *next_unacked.get_or_insert(f.bth.psn);
            let in_flight = psn::diff(f.bth.psn, first) + 1;
            max_seen = max_seen.max(in_flight);
            assert!(
                in_flight <= 16,
                "PSN {:#x} with {in_flight} unacknowledged",
                f.bth.psn
            );
            let i = psn::diff(f.bth.psn, 0xFF_FF00);
            let last = f.bth.opcode == op::WRITE_LAST;
            assert_eq!(
                f.bth.ack_req,
                last || (i + 1) % 4 == 0,
                "AckReq at packet {i}"
            );
        } else if f.bth.opcode == op::ACKNOWLEDGE {
            next_unacked = Some(psn::add(f.bth.psn, 1));
        }
    }
    assert_eq!(requests, 100);
    assert_eq!(max_seen, 16);
    assert!(pair.nics[0].poll_cq(a.scq, 4)[0].status == WcStatus::Success);
}

#[test]
fn max_rd_atomic_bounds_outstanding_reads() {
    let mut pair = Pair::new(2);
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 1024,
            max_rd_atomic: 2,
            ..ConnOpts::default()
        },
    );
    let log = record(&mut pair, |_, _| false);
    let remote = buffer(&mut pair.nics[1], b.pd, 8 * 3000, Access::ALL);
    let local = buffer(&mut pair.nics[0], a.pd, 8 * 3000, Access::ALL);
    let data = pattern(2, 8 * 3000);
    fill(&mut pair.nics[1], remote.va, &data);
    for i in 0..8u64 {
        let op = SendOp::Read {
            remote_addr: remote.va + i * 3000,
            rkey: remote.rkey,
        };
        pair.nics[0]
            .post_send(a.qpn, send_wr(i, op, vec![local.sge(i * 3000, 3000)]))
            .unwrap();
    }
    assert!(pair.run(1_000_000_000));
    assert_eq!(read(&pair.nics[0], local.va, data.len()), data);
    let mut outstanding = 0i32;
    let mut peak = 0;
    for (_, f) in log.borrow().iter() {
        match f.bth.opcode {
            op::READ_REQUEST => outstanding += 1,
            op::READ_RESPONSE_LAST | op::READ_RESPONSE_ONLY => outstanding -= 1,
            _ => {}
        }
        peak = peak.max(outstanding);
    }
    assert_eq!(peak, 2);
    let ids: Vec<u64> = pair.nics[0]
        .poll_cq(a.scq, 16)
        .iter()
        .map(|c| c.wr_id)
        .collect();
    assert_eq!(ids, (0..8).collect::<Vec<_>>());
}

#[test]
fn msn_counts_messages_in_every_aeth() {
    let mut pair = Pair::new(3);
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 256,
            ..ConnOpts::default()
        },
    );
    let log = record(&mut pair, |_, _| false);
    let buf = buffer(&mut pair.nics[0], a.pd, 4096, Access::ALL);
    let remote = buffer(&mut pair.nics[1], b.pd, 4096, Access::ALL);
    // Three messages (1, 3 and 1 packets), a READ, a WRITE, an atomic.
    for (i, len) in [100u32, 600, 0].into_iter().enumerate() {
        pair.nics[1]
            .post_recv(b.qpn, recv_wr(i as u64, vec![remote.sge(0, 4096)]))
            .unwrap();
        pair.nics[0]
            .post_send(
                a.qpn,
                send_wr(i as u64, SendOp::Send, vec![buf.sge(0, len)]),
            )
            .unwrap();
    }
    let rd = SendOp::Read {
        remote_addr: remote.va,
        rkey: remote.rkey,
    };
    pair.nics[0]
        .post_send(a.qpn, send_wr(3, rd, vec![buf.sge(0, 700)]))
        .unwrap();
    let wr = remote.write_op();
    pair.nics[0]
        .post_send(a.qpn, send_wr(4, wr, vec![buf.sge(0, 300)]))
        .unwrap();
    let fa = SendOp::FetchAdd {
        remote_addr: remote.va + 8,
        rkey: remote.rkey,
        add: 1,
    };
    pair.nics[0]
        .post_send(a.qpn, send_wr(5, fa, vec![buf.sge(0, 8)]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    let msns: Vec<(u8, u32)> = log
        .borrow()
        .iter()
        .filter(|(from, f)| *from == 1 && f.ext.aeth.is_some())
        .map(|(_, f)| (f.bth.opcode, f.ext.aeth.unwrap().msn))
        .collect();
    assert_eq!(
        msns,
        vec![
            (op::ACKNOWLEDGE, 1),
            (op::ACKNOWLEDGE, 2),
            (op::ACKNOWLEDGE, 3),
            (op::READ_RESPONSE_FIRST, 4),
            (op::READ_RESPONSE_LAST, 4),
            (op::ACKNOWLEDGE, 5),
            (op::ATOMIC_ACKNOWLEDGE, 6),
        ]
    );
    assert_eq!(pair.nics[0].poll_cq(a.scq, 16).len(), 6);
}

#[test]
fn retried_read_resumes_at_the_received_offset() {
    let mut pair = Pair::new(4);
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 1024,
            timeout: 4,
            ..ConnOpts::default()
        },
    );
    let mut dropped = false;
    // Lose the third response packet once (PSN first + 2).
    let log = record(&mut pair, move |from, f| {
        let hit = from == 1
            && f.bth.opcode == op::READ_RESPONSE_MIDDLE
            && f.bth.psn == psn::add(0xFF_FF00, 2)
            && !dropped;
        dropped |= hit;
        hit
    });
    let remote = buffer(&mut pair.nics[1], b.pd, 10 * 1024, Access::ALL);
    let local = buffer(&mut pair.nics[0], a.pd, 10 * 1024, Access::ALL);
    let data = pattern(4, 10 * 1024 - 7);
    fill(&mut pair.nics[1], remote.va, &data);
    let rd = SendOp::Read {
        remote_addr: remote.va,
        rkey: remote.rkey,
    };
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, rd, vec![local.sge(0, data.len() as u32)]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    assert_eq!(read(&pair.nics[0], local.va, data.len()), data);
    let reqs: Vec<(u32, u64, u32)> = log
        .borrow()
        .iter()
        .filter(|(_, f)| f.bth.opcode == op::READ_REQUEST)
        .map(|(_, f)| {
            let r = f.ext.reth.unwrap();
            (f.bth.psn, r.va - remote.va, r.dma_len)
        })
        .collect();
    let len = data.len() as u32;
    assert_eq!(
        reqs,
        vec![
            (0xFF_FF00, 0, len),
            (psn::add(0xFF_FF00, 2), 2048, len - 2048)
        ]
    );
    assert_eq!(pair.nics[0].counters().retransmitted_frames, 1);
    assert_eq!(pair.nics[1].counters().duplicate_requests, 1);
    let c = pair.nics[0].poll_cq(a.scq, 4);
    assert_eq!(
        (c.len(), c[0].status, c[0].byte_len),
        (1, WcStatus::Success, len)
    );
}

#[test]
fn lost_last_packet_is_resent_after_the_ack_timeout() {
    let mut pair = Pair::new(5);
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            timeout: 3,
            ..ConnOpts::default()
        },
    );
    let mut dropped = false;
    let log = record(&mut pair, move |from, f| {
        let hit = from == 0 && f.bth.opcode == op::SEND_ONLY && !dropped;
        dropped |= hit;
        hit
    });
    let buf = buffer(&mut pair.nics[0], a.pd, 64, Access::ALL);
    let rbuf = buffer(&mut pair.nics[1], b.pd, 64, Access::ALL);
    fill(&mut pair.nics[0], buf.va, &[7; 64]);
    pair.nics[1]
        .post_recv(b.qpn, recv_wr(1, vec![rbuf.sge(0, 64)]))
        .unwrap();
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, SendOp::Send, vec![buf.sge(0, 64)]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    assert_eq!(read(&pair.nics[1], rbuf.va, 64), vec![7; 64]);
    let c = pair.nics[0].counters();
    assert_eq!((c.timeouts, c.retransmitted_frames), (1, 1));
    // The retransmission left one timeout (4.096 us * 2^3) after the first.
    let sends: Vec<usize> = log
        .borrow()
        .iter()
        .enumerate()
        .filter(|(_, (from, _))| *from == 0)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(sends.len(), 2);
    assert!(pair.now >= 32_768);
    assert_eq!(pair.nics[1].poll_cq(b.rcq, 4).len(), 1);
}

/// A pair whose link CE-marks each ECN-capable frame with probability
/// `mark`, A writing `len` bytes to B on one QP at MTU 4096; every frame
/// recorded.
fn marked_write(seed: u64, mark: f64, len: u64) -> (Pair, Side, Log) {
    let mut pair = Pair::new(seed);
    pair.faults.ce_mark = mark;
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 4096,
            ..ConnOpts::default()
        },
    );
    let log = record(&mut pair, |_, _| false);
    let src = buffer(&mut pair.nics[0], a.pd, len, Access::ALL);
    let dst = buffer(&mut pair.nics[1], b.pd, len, Access::ALL);
    pair.nics[0]
        .post_send(
            a.qpn,
            send_wr(1, dst.write_op(), vec![src.sge(0, len as u32)]),
        )
        .unwrap();
    (pair, a, log)
}

#[test]
fn ce_marks_produce_cnps_that_slow_the_sender() {
    let mut elapsed = Vec::new();
    for mark in [0.0, 1.0] {
        let (mut pair, a, log) = marked_write(6, mark, 8 << 20);
        let start = pair.now;
        assert!(pair.run_until(1_000_000_000, |p| !p.nics[0].poll_cq(a.scq, 1).is_empty()));
        elapsed.push(pair.now - start);
        let (ca, cb) = (pair.nics[0].counters(), pair.nics[1].counters());
        if mark == 0.0 {
            assert_eq!(cb.cnps_sent, 0);
            assert_eq!(pair.nics[0].qp_rate_bps(a.qpn).unwrap(), 100e9);
        } else {
            assert!(cb.ecn_ce_received > 1000);
            assert!(cb.cnps_sent >= 2, "{cb:?}");
            assert_eq!(ca.cnps_received, cb.cnps_sent);
            assert!(pair.nics[0].qp_rate_bps(a.qpn).unwrap() < 100e9);
            // CNPs: BECN set, to A's QP, PSN 0, never ECN-capable.
            for (_, f) in log
                .borrow()
                .iter()
                .filter(|(from, f)| *from == 1 && f.bth.opcode == op::CNP)
            {
                assert!(f.bth.becn);
                assert_eq!((f.bth.dest_qp, f.bth.psn), (a.qpn, 0));
                assert_eq!(f.ip.ecn(), rocenic_wire::ecn::NOT_ECT);
            }
        }
        // Data frames leave ECT(0) (the log sees them before the wire
        // marks them); ACKs and CNPs are not ECN-capable.
        for (from, f) in log.borrow().iter() {
            let want = if *from == 0 {
                rocenic_wire::ecn::ECT0
            } else {
                rocenic_wire::ecn::NOT_ECT
            };
            assert_eq!(f.ip.ecn(), want);
        }
    }
    // 8 MiB at 100 Gb/s is ~0.7 ms; the CNPs must at least halve the pace.
    assert!(elapsed[1] > 2 * elapsed[0], "{elapsed:?}");
}

/// The DSCP of a decoded frame.
fn dscp(f: &RoceFrame) -> u8 {
    match f.ip {
        IpHeader::V4(h) => h.dscp,
        IpHeader::V6(h) => h.dscp,
    }
}

/// CNPs go on a priority of their own (DSCP 48: priority 6, NVIDIA's
/// default): a PFC pause of the data's priority (DSCP 26: 3) at the
/// notifying NIC holds its ACKs but not its CNPs, and a pause of priority
/// 6 holds the CNPs but not the ACKs.
#[test]
fn cnps_have_a_priority_of_their_own() {
    use rocenic_fabric::Endpoint;
    use rocenic_wire::pfc::PfcFrame;
    for paused in [3usize, 6] {
        let (mut pair, _, log) = marked_write(7, 1.0, 4 << 20);
        pair.run(20_000);
        let mut quanta = [0u16; 8];
        quanta[paused] = 0xFFFF;
        let pause = PfcFrame {
            src_mac: mac(0),
            enable: 1 << paused,
            quanta,
        };
        // 65,535 quanta of 512 bits at 100 Gb/s: 335 us.
        let now = pair.now;
        pair.nics[1].receive(now, pause.encode());
        let before = log.borrow().len();
        pair.run(200_000);
        let from_b: Vec<RoceFrame> = log.borrow()[before..]
            .iter()
            .filter(|(from, _)| *from == 1)
            .map(|(_, f)| f.clone())
            .collect();
        let cnps = from_b.iter().filter(|f| f.bth.opcode == op::CNP).count();
        let acks = from_b.len() - cnps;
        assert!(from_b
            .iter()
            .all(|f| dscp(f) == if f.bth.opcode == op::CNP { 48 } else { 26 }));
        if paused == 3 {
            assert!(cnps > 10 && acks == 0, "{cnps} CNPs, {acks} ACKs");
        } else {
            assert!(cnps == 0 && acks > 0, "{cnps} CNPs, {acks} ACKs");
        }
    }
}

#[test]
fn ipv6_path_and_headers() {
    use std::net::{IpAddr, Ipv6Addr};
    let ip6 = |i: u16| IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, i + 1));
    let mut pair = Pair::with_configs(
        7,
        NicConfig::new(mac(0), ip6(0)),
        NicConfig::new(mac(1), ip6(1)),
    );
    let a = make_side(&mut pair.nics[0]);
    let b = make_side(&mut pair.nics[1]);
    let o = ConnOpts::default();
    for (nic, me, peer, dq) in [(0usize, a, 1u16, b.qpn), (1, b, 0, a.qpn)] {
        let n = &mut pair.nics[nic];
        n.modify_qp(
            me.qpn,
            ModifyQp::ToInit {
                access: Access::ALL,
                pkey: 0xFFFF,
            },
        )
        .unwrap();
        let remote = RemoteAddress {
            mac: mac(peer as u8),
            ip: ip6(peer),
        };
        let rtr = ModifyQp::ToRtr {
            remote,
            dest_qpn: dq,
            rq_psn: 0,
            path_mtu: 1024,
            max_dest_rd_atomic: 4,
            min_rnr_timer: 1,
        };
        n.modify_qp(me.qpn, rtr).unwrap();
        let rts = ModifyQp::ToRts {
            sq_psn: 0,
            timeout: o.timeout,
            retry_cnt: 7,
            rnr_retry: 7,
            max_rd_atomic: 4,
        };
        n.modify_qp(me.qpn, rts).unwrap();
    }
    let log = record(&mut pair, |_, _| false);
    run_workload(
        &mut pair,
        a,
        b,
        &[
            Op::Message(Verb::Write, 5000),
            Op::Message(Verb::Read, 3000),
            Op::Message(Verb::SendImm, 10),
        ],
        3,
        1_000_000_000,
    );
    for (from, f) in log.borrow().iter() {
        let IpHeader::V6(h) = f.ip else {
            panic!("IPv4 frame on an IPv6 path")
        };
        assert_eq!(
            h.src,
            if *from == 0 { "fd00::1" } else { "fd00::2" }
                .parse::<Ipv6Addr>()
                .unwrap()
        );
        assert_eq!(h.hop_limit, 64);
        assert_eq!(h.dscp, 26);
        let (l, r) = if *from == 0 {
            (a.qpn, b.qpn)
        } else {
            (b.qpn, a.qpn)
        };
        assert_eq!(f.udp_src_port, rocenic_wire::udp_src_port(l, r));
    }
}

#[test]
fn rnr_nak_carries_the_responders_timer_code() {
    let mut pair = Pair::new(8);
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            min_rnr_timer: 14,
            rnr_retry: 0,
            ..ConnOpts::default()
        },
    );
    let log = record(&mut pair, |_, _| false);
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, SendOp::Send, vec![]))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    let naks: Vec<AethKind> = log
        .borrow()
        .iter()
        .filter(|(from, _)| *from == 1)
        .map(|(_, f)| f.ext.aeth.unwrap().kind())
        .collect();
    assert_eq!(naks, vec![AethKind::RnrNak { timer: 14 }]);
    assert_eq!(
        pair.nics[0].poll_cq(a.scq, 4)[0].status,
        WcStatus::RnrRetryExcErr
    );
    let _ = b;
}

#[test]
fn slow_pacing_causes_no_spurious_timeouts() {
    // Every data frame CE-marked: DCQCN drives the rate towards its floor,
    // so packets leave tens of microseconds apart, longer than the 8 us
    // ACK timeout. The timer must only run for requests that asked for an
    // ACK and from when a retransmission really leaves.
    let mut pair = Pair::new(9);
    pair.faults.ce_mark = 1.0;
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 1024,
            timeout: 1,
            retry_cnt: 1,
            ..ConnOpts::default()
        },
    );
    let len = 2u64 << 20;
    let src = buffer(&mut pair.nics[0], a.pd, len, Access::ALL);
    let dst = buffer(&mut pair.nics[1], b.pd, len, Access::ALL);
    let data = pattern(9, len as usize);
    fill(&mut pair.nics[0], src.va, &data);
    let wr = dst.write_op();
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, wr, vec![src.sge(0, len as u32)]))
        .unwrap();
    let mut cqes = Vec::new();
    assert!(pair.run_until(10_000_000_000, |p| {
        cqes.extend(p.nics[0].poll_cq(a.scq, 4));
        !cqes.is_empty()
    }));
    assert!(pair.nics[0].qp_rate_bps(a.qpn).unwrap() < 10e9);
    assert_eq!(cqes[0].status, WcStatus::Success);
    // 2 MiB at 100 Gb/s would take ~170 us.
    assert!(pair.now > 1_000_000, "{}", pair.now);
    // Nothing was lost: no timer may have expired.
    assert_eq!(pair.nics[0].counters().timeouts, 0);
    assert_eq!(pair.nics[0].counters().retransmitted_frames, 0);
    assert_eq!(read(&pair.nics[1], dst.va, data.len()), data);
}

/// A READ of 512 bytes from B (one response), then a WRITE to B posted right behind it,
/// with `fence` on the WRITE: the frames in the order they were sent.
fn read_then_write(fence: bool) -> Vec<(usize, u8)> {
    let mut pair = Pair::new(31);
    let (a, b) = connect(&mut pair, &ConnOpts::default());
    let log = record(&mut pair, |_, _| false);
    let local = buffer(&mut pair.nics[0], a.pd, 8192, Access::ALL);
    let remote = buffer(&mut pair.nics[1], b.pd, 8192, Access::ALL);
    let read = SendOp::Read {
        remote_addr: remote.va,
        rkey: remote.rkey,
    };
    let write = SendOp::Write {
        remote_addr: remote.va + 4096,
        rkey: remote.rkey,
    };
    pair.nics[0]
        .post_send(a.qpn, send_wr(1, read, vec![local.sge(0, 512)]))
        .unwrap();
    let fenced = SendWr {
        fence,
        ..send_wr(2, write, vec![local.sge(4096, 64)])
    };
    pair.nics[0].post_send(a.qpn, fenced).unwrap();
    assert!(pair.run(1_000_000_000));
    let statuses: Vec<_> = pair.nics[0]
        .poll_cq(a.scq, 8)
        .iter()
        .map(|c| (c.wr_id, c.status))
        .collect();
    assert_eq!(
        statuses,
        [(1, WcStatus::Success), (2, WcStatus::Success)],
        "both complete, in order"
    );
    let order = log
        .borrow()
        .iter()
        .map(|(from, f)| (*from, f.bth.opcode))
        .collect();
    order
}

#[test]
fn a_fenced_write_starts_only_after_the_read_before_it_answered() {
    let order = read_then_write(true);
    let at = |want: (usize, u8)| order.iter().position(|&o| o == want).unwrap();
    let (read_response, write) = (at((1, op::READ_RESPONSE_ONLY)), at((0, op::WRITE_ONLY)));
    assert!(at((0, op::READ_REQUEST)) < read_response);
    assert!(
        read_response < write,
        "the fenced WRITE left before the READ response: {order:x?}"
    );
}

#[test]
fn without_fence_a_write_does_not_wait_for_the_read_response() {
    let order = read_then_write(false);
    let at = |want: (usize, u8)| order.iter().position(|&o| o == want).unwrap();
    assert!(
        at((0, op::WRITE_ONLY)) < at((1, op::READ_RESPONSE_ONLY)),
        "the WRITE waited for the READ response: {order:x?}"
    );
}
