//! ReceiveQueue in rust-hdl's simulator, 4 QPs x 4 WQEs: one hand-checked
//! life of a ring (posts until full and one refused, the availability flag
//! per QP, peeks, completes with their CQEs, a flush of what is left, a
//! clear, the slots wrapping) with every result and CQE checked and the
//! CQE stream stalled every other cycle. Yosys synth_xilinx at the default
//! 1024 QPs x 16 WQEs: the ring and pointers in block RAM. (The comparison
//! with a model under random traffic is `sim/tests/blocks/receive_queue.rs`.)

use rocenic_hdl::codes::{wc_opcode, wc_status};
use rocenic_hdl::responder::receive_queue::*;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;

type Small = ReceiveQueue<2, 2>;

#[derive(Clone, Copy, Debug, Default)]
struct Cmd {
    op: u64,
    qpn: u64,
    wr_id: u64,
    lkey: u64,
    va: u64,
    len: u64,
    status: u64,
    opcode: u64,
    byte_len: u64,
    imm: Option<u64>,
}

/// (accepted, found, (wr_id, lkey, va, len))
type Res = (bool, bool, (u64, u64, u64, u64));

/// (qpn, wr_id, status, opcode, byte_len, imm)
type Cqe = (u64, u64, u64, u64, u64, Option<u64>);

fn take_cqe(sim: &mut CycleSim<Small>, cqes: &mut Vec<Cqe>) {
    let ready = sim.cycles().is_multiple_of(2);
    sim.uut.cqe.ready.next = ready;
    sim.settle();
    let u = &sim.uut;
    if u.cqe.valid.val() && ready {
        cqes.push((
            u.cqe.qpn.val().to_u64(),
            u.cqe.wr_id.val().to_u64(),
            u.cqe.status.val().to_u64(),
            u.cqe.opcode.val().to_u64(),
            u.cqe.byte_len.val().to_u64(),
            u.cqe.imm_valid.val().then(|| u.cqe.imm.val().to_u64()),
        ));
    }
}

fn run(sim: &mut CycleSim<Small>, c: &Cmd, cqes: &mut Vec<Cqe>) -> Res {
    let u = &mut sim.uut;
    u.cmd_valid.next = true;
    u.cmd_op.next = bits(c.op);
    u.cmd_qpn.next = bits(c.qpn);
    u.cmd_wr_id.next = bits(c.wr_id);
    u.cmd_lkey.next = bits(c.lkey);
    u.cmd_va.next = bits(c.va);
    u.cmd_len.next = bits(c.len);
    u.cmd_status.next = bits(c.status);
    u.cmd_opcode.next = bits(c.opcode);
    u.cmd_byte_len.next = bits(c.byte_len);
    u.cmd_imm_valid.next = c.imm.is_some();
    u.cmd_imm.next = bits(c.imm.unwrap_or(0));
    for _ in 0..60 {
        take_cqe(sim, cqes);
        let u = &sim.uut;
        let taken = u.cmd_valid.val() && u.cmd_ready.val();
        let result = u.res_valid.val().then(|| {
            assert_eq!(u.res_op.val().to_u64(), c.op);
            assert_eq!(u.res_qpn.val().to_u64(), c.qpn);
            (
                u.res_accepted.val(),
                u.res_found.val(),
                (
                    u.res_wr_id.val().to_u64(),
                    u.res_lkey.val().to_u64(),
                    u.res_va.val().to_u64(),
                    u.res_len.val().to_u64(),
                ),
            )
        });
        sim.tick();
        if taken {
            sim.uut.cmd_valid.next = false;
        }
        if let Some(r) = result {
            return r;
        }
    }
    panic!("{c:?}: no result");
}

fn available(sim: &mut CycleSim<Small>, qpn: u64) -> bool {
    sim.uut.query_qpn.next = bits(qpn);
    sim.settle();
    sim.uut.query_available.val()
}

fn post(qpn: u64, wr_id: u64) -> Cmd {
    Cmd {
        op: OP_POST,
        qpn,
        wr_id,
        lkey: 0x100 + wr_id,
        va: 0xFEDC_BA98_7654_0000 + wr_id,
        len: 1000 + wr_id,
        ..Cmd::default()
    }
}

fn wqe(wr_id: u64) -> (u64, u64, u64, u64) {
    (
        wr_id,
        0x100 + wr_id,
        0xFEDC_BA98_7654_0000 + wr_id,
        1000 + wr_id,
    )
}

fn cmd(op: u64, qpn: u64) -> Cmd {
    Cmd {
        op,
        qpn,
        ..Cmd::default()
    }
}

#[test]
fn life_of_a_ring() {
    let mut sim = CycleSim::new(Small::default(), |b| &mut b.clock);
    sim.uut.reset.next = true;
    sim.tick();
    sim.uut.reset.next = false;
    let mut cqes = Vec::new();
    let accepted = (true, false, (0, 0, 0, 0));
    let none = (false, false, (0, 0, 0, 0));
    let found = |id| (false, true, wqe(id));
    let complete = |qpn, status, opcode, byte_len, imm| Cmd {
        status,
        opcode,
        byte_len,
        imm,
        ..cmd(OP_COMPLETE, qpn)
    };
    let flushed = |qpn, id| (qpn, id, wc_status::WR_FLUSH_ERR, wc_opcode::RECV, 0, None);
    let steps: Vec<(Cmd, Res, Vec<Cqe>)> = vec![
        (cmd(OP_PEEK, 1), none, vec![]),
        (complete(1, 0, wc_opcode::RECV, 5, None), none, vec![]),
        (post(1, 10), accepted, vec![]),
        (post(1, 11), accepted, vec![]),
        (post(1, 12), accepted, vec![]),
        (post(1, 13), accepted, vec![]),
        (post(1, 14), none, vec![]),
        (post(2, 20), accepted, vec![]),
        (cmd(OP_PEEK, 1), found(10), vec![]),
        (cmd(OP_PEEK, 1), found(10), vec![]),
        (
            complete(
                1,
                wc_status::SUCCESS,
                wc_opcode::RECV,
                9000,
                Some(0xABCD_0123),
            ),
            found(10),
            vec![(
                1,
                10,
                wc_status::SUCCESS,
                wc_opcode::RECV,
                9000,
                Some(0xABCD_0123),
            )],
        ),
        (
            complete(
                1,
                wc_status::SUCCESS,
                wc_opcode::RECV_RDMA_WITH_IMM,
                77,
                Some(5),
            ),
            found(11),
            vec![(
                1,
                11,
                wc_status::SUCCESS,
                wc_opcode::RECV_RDMA_WITH_IMM,
                77,
                Some(5),
            )],
        ),
        // Wraps: slots 0 and 1 again.
        (post(1, 15), accepted, vec![]),
        (post(1, 16), accepted, vec![]),
        (
            complete(1, wc_status::LOC_LEN_ERR, wc_opcode::RECV, 0, None),
            found(12),
            vec![(1, 12, wc_status::LOC_LEN_ERR, wc_opcode::RECV, 0, None)],
        ),
        (
            cmd(OP_FLUSH, 1),
            none,
            vec![flushed(1, 13), flushed(1, 15), flushed(1, 16)],
        ),
        (cmd(OP_FLUSH, 1), none, vec![]),
        (cmd(OP_PEEK, 2), found(20), vec![]),
        (cmd(OP_CLEAR, 2), none, vec![]),
        (cmd(OP_PEEK, 2), none, vec![]),
        (post(2, 21), accepted, vec![]),
        (cmd(OP_PEEK, 2), found(21), vec![]),
    ];
    for (i, (c, want, want_cqes)) in steps.iter().enumerate() {
        let got = run(&mut sim, c, &mut cqes);
        assert_eq!(&got, want, "step {i}: {c:?}");
        for _ in 0..6 {
            take_cqe(&mut sim, &mut cqes);
            sim.tick();
        }
        assert_eq!(&cqes, want_cqes, "step {i}: {c:?}");
        cqes.clear();
        if i == 7 {
            assert!(available(&mut sim, 1) && available(&mut sim, 2));
            assert!(!available(&mut sim, 0) && !available(&mut sim, 3));
        }
        if i == 16 {
            assert!(!available(&mut sim, 1) && available(&mut sim, 2));
        }
        if i == 18 {
            assert!(!available(&mut sim, 2));
        }
    }
    assert_eq!(sim.uut.refused_posts.val().to_u64(), 1);
}

#[test]
fn ring_and_pointers_map_to_block_ram() {
    let report = xilinx_synth("receive_queue", &verilog_of::<ReceiveQueueDefault>()).unwrap();
    let bram36 = report.count("RAMB36E2");
    let bram18 = report.count("RAMB18E2");
    // 16384 x 192 bits of ring (3 Mbit: 88 RAMB36) and 1024 x 16 of
    // pointers (one RAMB18).
    assert_eq!((bram36, bram18), (88, 1), "{}", report.log);
    // The command and result registers; no memory in flip-flops (the
    // 1024 flags are LUT RAM).
    assert!(report.flip_flops() <= 800, "{}", report.log);
}
