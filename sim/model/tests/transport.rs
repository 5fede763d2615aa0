//! End-to-end tests of the RC transport: two NICs on an in-memory wire,
//! every verb at the sizes around the MTU, with memory checked byte for
//! byte and completions checked exactly once and in order.

mod common;

use common::*;
use rocenic_model::nic::Nic;
use rocenic_model::verbs::*;

fn expect_one(nic: &mut Nic, cq: CqId) -> Cqe {
    let cqes = nic.poll_cq(cq, 16);
    assert_eq!(cqes.len(), 1, "expected exactly one CQE, got {cqes:?}");
    cqes[0]
}

/// Runs one message of `verb` and `size` bytes from A to B (READ: B's bytes
/// to A) and checks memory and completions.
fn one_message(pair: &mut Pair, a: Side, b: Side, verb: Verb, size: u64, seed: u64) {
    let data = pattern(seed, size as usize);
    let slack = 16u64;
    let (src, dst, dst_nic) = message_buffers(pair, a, b, verb, &data, slack);
    let inv_target = buffer(&mut pair.nics[1], b.pd, 64, Access::ALL);

    let wr_id = 0x1000 + seed;
    let imm = 0xC0DE_0000 | seed as u32;
    let op = verb.op(&src, &dst, inv_target.rkey, imm);
    let local = if verb == Verb::Read { dst } else { src };
    let needs_recv = verb.needs_recv();
    if needs_recv {
        pair.nics[1]
            .post_recv(b.qpn, recv_wr(wr_id + 1, verb.recv_sgl(&dst, size + slack)))
            .unwrap();
    }
    pair.nics[0]
        .post_send(
            a.qpn,
            SendWr {
                wr_id,
                op,
                sgl: split_sgl(&local, size),
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            },
        )
        .unwrap();
    assert!(pair.run(1_000_000_000), "did not go idle");

    let mut expect = data.clone();
    expect.extend_from_slice(&vec![0xEE; slack as usize]);
    assert!(
        read(&pair.nics[dst_nic], dst.va, (size + slack) as usize) == expect,
        "{verb:?} {size}: memory differs"
    );

    let c = expect_one(&mut pair.nics[0], a.scq);
    let opcode = verb.send_opcode();
    assert_eq!(
        c,
        Cqe {
            wr_id,
            status: WcStatus::Success,
            opcode,
            qpn: a.qpn,
            byte_len: size as u32,
            imm: None,
            invalidated_rkey: None
        }
    );
    if needs_recv {
        let r = expect_one(&mut pair.nics[1], b.rcq);
        let want = verb.recv_cqe(wr_id + 1, b.qpn, size as u32, imm, inv_target.rkey);
        assert_eq!(r, want);
    } else {
        assert!(pair.nics[1].poll_cq(b.rcq, 16).is_empty());
    }
    assert!(pair.nics[1].poll_cq(b.scq, 16).is_empty());
}

fn sizes(mtu: u64) -> [u64; 7] {
    [0, 1, mtu - 1, mtu, mtu + 1, 64 << 10, 1 << 20]
}

fn every_size(verb: Verb) {
    for mtu in [256u32, 4096] {
        let mut pair = Pair::new(u64::from(mtu));
        let (a, b) = connect(
            &mut pair,
            &ConnOpts {
                mtu,
                ..ConnOpts::default()
            },
        );
        for (i, size) in sizes(u64::from(mtu)).into_iter().enumerate() {
            one_message(&mut pair, a, b, verb, size, i as u64);
        }
        // Every data packet really crossed the wire: requests from A, or
        // READ responses from B.
        let packets: u64 = sizes(u64::from(mtu))
            .iter()
            .map(|s| s.div_ceil(u64::from(mtu)).max(1))
            .sum();
        let data_side = if verb == Verb::Read { 1 } else { 0 };
        assert!(pair.nics[data_side].counters().tx_frames >= packets);
        if verb == Verb::Read {
            assert_eq!(pair.nics[1].counters().read_responses_sent, packets);
        }
        let c = pair.nics[0].counters();
        assert_eq!(c.retransmitted_frames, 0);
        assert_eq!(c.timeouts, 0);
        assert!(
            pair.nics[1].counters().rx_dropped.is_empty(),
            "{:?}",
            pair.nics[1].counters().rx_dropped
        );
    }
}

#[test]
fn send_every_size() {
    every_size(Verb::Send);
}

#[test]
fn send_with_imm_every_size() {
    every_size(Verb::SendImm);
}

#[test]
fn send_with_inv_every_size() {
    every_size(Verb::SendInv);
}

#[test]
fn write_every_size() {
    every_size(Verb::Write);
}

#[test]
fn write_with_imm_every_size() {
    every_size(Verb::WriteImm);
}

#[test]
fn read_every_size() {
    every_size(Verb::Read);
}

fn inline_wr(wr_id: u64, op: SendOp, data: &[u8]) -> SendWr {
    SendWr {
        inline_data: Some(data.to_vec()),
        ..send_wr(wr_id, op, Vec::new())
    }
}

#[test]
fn inline_send_and_write_carry_their_own_bytes_through_a_retransmission() {
    let mut pair = Pair::new(41);
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 256,
            ..ConnOpts::default()
        },
    );
    // The first middle packet is lost once: Go-Back-N resends from it,
    // and the inline bytes are all there is to resend from.
    let mut dropped = false;
    pair.filter = Some(Box::new(move |from, f| {
        let drop = from == 0 && f.bth.opcode == rocenic_wire::op::SEND_MIDDLE && !dropped;
        dropped |= drop;
        drop
    }));
    let dst = buffer(&mut pair.nics[1], b.pd, 4096, Access::ALL);
    pair.nics[1]
        .post_recv(b.qpn, recv_wr(10, vec![dst.sge(0, 1024)]))
        .unwrap();
    let message = pattern(41, 700);
    let written = pattern(42, 100);
    pair.nics[0]
        .post_send(a.qpn, inline_wr(1, SendOp::Send, &message))
        .unwrap();
    let write = SendOp::Write {
        remote_addr: dst.va + 2048,
        rkey: dst.rkey,
    };
    pair.nics[0]
        .post_send(a.qpn, inline_wr(2, write, &written))
        .unwrap();
    assert!(pair.run(1_000_000_000));
    assert!(pair.nics[0].counters().retransmitted_frames > 0);
    let sends: Vec<_> = pair.nics[0]
        .poll_cq(a.scq, 8)
        .iter()
        .map(|c| (c.wr_id, c.status, c.byte_len))
        .collect();
    assert_eq!(
        sends,
        [(1, WcStatus::Success, 700), (2, WcStatus::Success, 100)]
    );
    let recv = expect_one(&mut pair.nics[1], b.rcq);
    assert_eq!((recv.wr_id, recv.byte_len), (10, 700));
    assert_eq!(read(&pair.nics[1], dst.va, 700), message);
    assert_eq!(read(&pair.nics[1], dst.va + 2048, 100), written);
}

#[test]
fn inline_data_is_refused_for_reads_atomics_and_with_an_sgl() {
    let mut pair = Pair::new(43);
    let (a, b) = connect(&mut pair, &ConnOpts::default());
    let local = buffer(&mut pair.nics[0], a.pd, 64, Access::ALL);
    let remote = buffer(&mut pair.nics[1], b.pd, 64, Access::ALL);
    let refused = VerbsError::InvalidAttribute("inline data: SEND and WRITE only, without an SGL");
    let read = SendOp::Read {
        remote_addr: remote.va,
        rkey: remote.rkey,
    };
    let add = SendOp::FetchAdd {
        remote_addr: remote.va,
        rkey: remote.rkey,
        add: 1,
    };
    for op in [read, add] {
        assert_eq!(
            pair.nics[0].post_send(a.qpn, inline_wr(1, op, &[0; 8])),
            Err(refused.clone())
        );
    }
    let with_sgl = SendWr {
        sgl: vec![local.sge(0, 8)],
        ..inline_wr(1, SendOp::Send, &[0; 8])
    };
    assert_eq!(pair.nics[0].post_send(a.qpn, with_sgl), Err(refused));
}

#[test]
fn receive_completions_are_solicited_when_the_last_packet_carried_se() {
    let mut pair = Pair::new(44);
    let (a, b) = connect(
        &mut pair,
        &ConnOpts {
            mtu: 256,
            ..ConnOpts::default()
        },
    );
    let src = buffer(&mut pair.nics[0], a.pd, 4096, Access::ALL);
    let dst = buffer(&mut pair.nics[1], b.pd, 4096, Access::ALL);
    let write_imm = SendOp::WriteWithImm {
        remote_addr: dst.va,
        rkey: dst.rkey,
        imm: 9,
    };
    // Multi-packet messages: SE rides on the last packet only.
    let messages = [
        (SendOp::Send, false),
        (SendOp::Send, true),
        (SendOp::SendWithImm { imm: 3 }, true),
        (write_imm, true),
        (write_imm, false),
    ];
    for (i, (op, solicited)) in messages.into_iter().enumerate() {
        let i = i as u64;
        pair.nics[1]
            .post_recv(b.qpn, recv_wr(100 + i, vec![dst.sge(1024, 1024)]))
            .unwrap();
        let wr = SendWr {
            solicited,
            ..send_wr(i, op, vec![src.sge(0, 600)])
        };
        pair.nics[0].post_send(a.qpn, wr).unwrap();
    }
    assert!(pair.run(1_000_000_000));
    let got: Vec<(u64, bool)> = pair.nics[1]
        .poll_cq_solicited(b.rcq, 16)
        .iter()
        .map(|(c, solicited)| (c.wr_id, *solicited))
        .collect();
    assert_eq!(
        got,
        [
            (100, false),
            (101, true),
            (102, true),
            (103, true),
            (104, false)
        ]
    );
}
