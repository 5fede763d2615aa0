//! SendQueueTracker in rust-hdl's simulator, 4 QPs x 4 slots: one
//! hand-checked life of a ring (posts until full across the PSN wrap, a
//! lookup, a partial ACK, an ACK completing a SEND, a READ completed by its
//! response, an ACK finding an atomic's response lost, a fail and the
//! flush, a clear) with every result and CQE checked, the CQE stream
//! stalled every other cycle. Yosys synth_xilinx at the default 1024 QPs x
//! 16 slots: both RAMs in block RAM. (The comparison with the model is
//! `sim/tests/blocks/send_queue_tracker.rs` under Verilator.)

use rocenic_hdl::codes::{wc_opcode, wc_status, wqe_kind};
use rocenic_hdl::requester::send_queue_tracker::*;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;

type Small = SendQueueTracker<2, 2>;

#[derive(Clone, Copy, Debug, Default)]
struct Cmd {
    op: u64,
    qpn: u64,
    psn: u64,
    next_psn: u64,
    slot: u64,
    completes: bool,
    status: u64,
    kind: u64,
    opcode: u64,
    first_psn: u64,
    npsn: u64,
    len: u64,
    signaled: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Res {
    accepted: bool,
    found: bool,
    slot: u64,
    lost: bool,
    una: u64,
    to_error: bool,
    /// (kind, first PSN, npsn, done PSN, complete) of a lookup hit.
    wqe: Option<(u64, u64, u64, u64, bool)>,
}

/// (qpn, slot, status, opcode, byte_len)
type Cqe = (u64, u64, u64, u64, u64);

fn post(qpn: u64, kind: u64, opcode: u64, first: u64, npsn: u64, len: u64, sig: bool) -> Cmd {
    Cmd {
        op: OP_POST,
        qpn,
        kind,
        opcode,
        first_psn: first,
        npsn,
        len,
        signaled: sig,
        ..Cmd::default()
    }
}

fn cmd(op: u64, qpn: u64, psn: u64) -> Cmd {
    Cmd {
        op,
        qpn,
        psn,
        ..Cmd::default()
    }
}

/// Settles the cycle with `cqe_ready` high every other cycle, keeping the
/// CQE taken.
fn take_cqe(sim: &mut CycleSim<Small>, cqes: &mut Vec<Cqe>) {
    let ready = sim.cycles().is_multiple_of(2);
    sim.uut.cqe_ready.next = ready;
    sim.settle();
    let u = &sim.uut;
    if u.cqe_valid.val() && ready {
        cqes.push((
            u.cqe_qpn.val().to_u64(),
            u.cqe_slot.val().to_u64(),
            u.cqe_status.val().to_u64(),
            u.cqe_opcode.val().to_u64(),
            u.cqe_byte_len.val().to_u64(),
        ));
    }
}

/// Runs one command to its result; CQEs taken every other cycle.
fn run(sim: &mut CycleSim<Small>, c: &Cmd, cqes: &mut Vec<Cqe>) -> Res {
    let u = &mut sim.uut;
    u.cmd_valid.next = true;
    u.cmd_op.next = bits(c.op);
    u.cmd_qpn.next = bits(c.qpn);
    u.cmd_psn.next = bits(c.psn);
    u.cmd_next_psn.next = bits(c.next_psn);
    u.cmd_slot.next = bits(c.slot);
    u.cmd_completes.next = c.completes;
    u.cmd_status.next = bits(c.status);
    u.cmd_kind.next = bits(c.kind);
    u.cmd_opcode.next = bits(c.opcode);
    u.cmd_first_psn.next = bits(c.first_psn);
    u.cmd_npsn.next = bits(c.npsn);
    u.cmd_len.next = bits(c.len);
    u.cmd_signaled.next = c.signaled;
    for _ in 0..100 {
        take_cqe(sim, cqes);
        let u = &sim.uut;
        let taken = u.cmd_valid.val() && u.cmd_ready.val();
        let result = u.res_valid.val().then(|| {
            assert_eq!(u.res_op.val().to_u64(), c.op);
            assert_eq!(u.res_qpn.val().to_u64(), c.qpn);
            Res {
                accepted: u.res_accepted.val(),
                found: u.res_found.val(),
                slot: u.res_slot.val().to_u64(),
                lost: u.res_lost.val(),
                una: u.res_una.val().to_u64(),
                to_error: u.res_to_error.val(),
                wqe: u.res_found.val().then(|| {
                    (
                        u.res_wqe_kind.val().to_u64(),
                        u.res_wqe_first_psn.val().to_u64(),
                        u.res_wqe_npsn.val().to_u64(),
                        u.res_wqe_done_psn.val().to_u64(),
                        u.res_wqe_complete.val(),
                    )
                }),
            }
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

fn drain_cqes(sim: &mut CycleSim<Small>, cqes: &mut Vec<Cqe>) {
    for _ in 0..6 {
        take_cqe(sim, cqes);
        sim.tick();
    }
}

#[test]
fn life_of_a_ring() {
    let mut sim = CycleSim::new(Small::default(), |b| &mut b.clock);
    sim.uut.reset.next = true;
    sim.tick();
    sim.uut.reset.next = false;
    let mut cqes = Vec::new();
    let ok = |slot| Res {
        accepted: true,
        slot,
        ..Res::default()
    };
    const REM_ACCESS: u64 = 8;
    let steps: Vec<(Cmd, Res, Vec<Cqe>)> = vec![
        // SEND 0xFFFFFE..=0xFFFFFF, READ 0..=2, WRITE 3, atomic 4: full.
        (
            post(1, wqe_kind::SEND, wc_opcode::SEND, 0xFF_FFFE, 2, 100, true),
            ok(0),
            vec![],
        ),
        (
            post(1, wqe_kind::READ, wc_opcode::RDMA_READ, 0, 3, 700, true),
            ok(1),
            vec![],
        ),
        (
            post(1, wqe_kind::WRITE, wc_opcode::RDMA_WRITE, 3, 1, 5, false),
            ok(2),
            vec![],
        ),
        (
            post(1, wqe_kind::ATOMIC, wc_opcode::FETCH_ADD, 4, 1, 8, true),
            ok(3),
            vec![],
        ),
        (
            post(1, wqe_kind::SEND, wc_opcode::SEND, 5, 1, 1, true),
            Res::default(),
            vec![],
        ),
        (
            cmd(OP_LOOKUP, 1, 1),
            Res {
                found: true,
                slot: 1,
                wqe: Some((wqe_kind::READ, 0, 3, 0, false)),
                ..Res::default()
            },
            vec![],
        ),
        // Partial ACK of the SEND.
        (
            Cmd {
                next_psn: 5,
                ..cmd(OP_ACK, 1, 0xFF_FFFF)
            },
            Res {
                una: 0xFF_FFFF,
                ..Res::default()
            },
            vec![],
        ),
        // The SEND completes; the READ (not covered) waits for its data.
        (
            Cmd {
                next_psn: 5,
                ..cmd(OP_ACK, 1, 2)
            },
            Res {
                una: 0,
                ..Res::default()
            },
            vec![(1, 0, wc_status::SUCCESS, wc_opcode::SEND, 100)],
        ),
        // The READ's last response packet.
        (
            Cmd {
                slot: 1,
                completes: true,
                ..cmd(OP_COMPLETE_RESPONSE, 1, 3)
            },
            Res::default(),
            vec![(1, 1, wc_status::SUCCESS, wc_opcode::RDMA_READ, 700)],
        ),
        // The WRITE completes silently; the atomic's response was lost.
        (
            Cmd {
                next_psn: 5,
                ..cmd(OP_ACK, 1, 5)
            },
            Res {
                lost: true,
                una: 4,
                ..Res::default()
            },
            vec![],
        ),
        (
            Cmd {
                status: REM_ACCESS,
                ..cmd(OP_FAIL, 1, 4)
            },
            Res {
                to_error: true,
                ..Res::default()
            },
            vec![],
        ),
        (
            cmd(OP_FLUSH, 1, 0),
            Res::default(),
            vec![(1, 3, REM_ACCESS, wc_opcode::FETCH_ADD, 0)],
        ),
        // Empty again; its next slot is 0 (4 mod 4).
        (
            post(1, wqe_kind::SEND, wc_opcode::SEND, 5, 1, 1, true),
            ok(0),
            vec![],
        ),
        (
            cmd(OP_FLUSH, 1, 0),
            Res::default(),
            vec![(1, 0, wc_status::WR_FLUSH_ERR, wc_opcode::SEND, 0)],
        ),
        // Another QP: clear drops without CQEs, slots move on.
        (
            post(2, wqe_kind::WRITE, wc_opcode::RDMA_WRITE, 9, 1, 1, true),
            ok(0),
            vec![],
        ),
        (cmd(OP_CLEAR, 2, 0), Res::default(), vec![]),
        (
            post(2, wqe_kind::WRITE, wc_opcode::RDMA_WRITE, 9, 1, 1, true),
            ok(1),
            vec![],
        ),
    ];
    for (i, (c, want, want_cqes)) in steps.iter().enumerate() {
        let got = run(&mut sim, c, &mut cqes);
        assert_eq!(&got, want, "step {i}: {c:?}");
        drain_cqes(&mut sim, &mut cqes);
        assert_eq!(&cqes, want_cqes, "step {i}: {c:?}");
        cqes.clear();
    }
}

#[test]
fn ring_and_pointers_map_to_block_ram() {
    let report = xilinx_synth(
        "send_queue_tracker",
        &verilog_of::<SendQueueTrackerDefault>(),
    )
    .unwrap();
    let bram36 = report.count("RAMB36E2");
    let bram18 = report.count("RAMB18E2");
    // 16384 x 115 bits of ring (1.88 Mbit: 52 RAMB36, nothing wasted)
    // and 1024 x 16 of pointers (one RAMB18); no LUT RAM.
    assert_eq!((bram36, bram18), (52, 1), "{}", report.log);
    report.assert_memories_in_block_ram();
    // The command, walk and result registers; no memory in flip-flops.
    assert!(report.flip_flops() <= 800, "{}", report.log);
}
