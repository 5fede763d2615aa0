//! RdAtomicResources in rust-hdl's simulator, 4 QPs x 4 entries: one
//! hand-checked life of a QP's resources (pushes beyond the limit, READ
//! lookups that fit and that do not, an atomic replayed, a lookup across
//! the PSN wrap, a clear). Yosys synth_xilinx at the default 1024 QPs x 16
//! entries: both RAMs in block RAM. (The comparison with the model is
//! `sim/tests/blocks/rd_atomic_resources.rs` under Verilator.)

use rocenic_hdl::responder::rd_atomic_resources::*;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};

type Small = RdAtomicResources<2, 2>;

#[derive(Clone, Copy, Debug, Default)]
struct Cmd {
    op: u64,
    qpn: u64,
    limit: u64,
    kind: bool,
    opcode: u64,
    psn: u64,
    npsn: u64,
    va: u64,
    rkey: u64,
    len: u64,
    orig: u64,
    /// IBA MTU code (3 = 1024).
    mtu: u64,
}

/// (answer, found, first_psn, npsn, rkey, orig) of a lookup.
type Res = (u64, bool, u64, u64, u64, u64);

fn read(psn: u64, npsn: u64, va: u64, len: u64) -> Cmd {
    Cmd {
        op: OP_PUSH,
        qpn: 1,
        limit: 3,
        psn,
        npsn,
        va,
        rkey: 0x77,
        len,
        ..Cmd::default()
    }
}

fn atomic(psn: u64, orig: u64) -> Cmd {
    Cmd {
        op: OP_PUSH,
        qpn: 1,
        limit: 3,
        kind: true,
        psn,
        orig,
        ..Cmd::default()
    }
}

fn lookup(opcode: u64, psn: u64, va: u64, rkey: u64, len: u64) -> Cmd {
    Cmd {
        op: OP_LOOKUP,
        qpn: 1,
        opcode,
        psn,
        va,
        rkey,
        len,
        mtu: 3,
        ..Cmd::default()
    }
}

fn run(sim: &mut CycleSim<Small>, c: &Cmd) -> Res {
    let u = &mut sim.uut;
    u.cmd_valid.next = true;
    u.cmd_op.next = c.op.into();
    u.cmd_qpn.next = c.qpn.into();
    u.cmd_limit.next = c.limit.into();
    u.cmd_kind.next = c.kind;
    u.cmd_opcode.next = c.opcode.into();
    u.cmd_psn.next = c.psn.into();
    u.cmd_npsn.next = c.npsn.into();
    u.cmd_va.next = c.va.into();
    u.cmd_rkey.next = c.rkey.into();
    u.cmd_len.next = c.len.into();
    u.cmd_orig.next = c.orig.into();
    u.cmd_path_mtu.next = c.mtu.into();
    sim.settle();
    assert!(sim.uut.cmd_ready.val());
    sim.tick();
    sim.uut.cmd_valid.next = false;
    for _ in 0..40 {
        sim.settle();
        let u = &sim.uut;
        if u.res_valid.val() {
            assert_eq!(u.res_op.val().to_u64(), c.op);
            assert_eq!(u.res_qpn.val().to_u64(), c.qpn);
            let r = (
                u.res_answer.val().to_u64(),
                u.res_found.val(),
                u.res_first_psn.val().to_u64(),
                u.res_npsn.val().to_u64(),
                u.res_rkey.val().to_u64(),
                u.res_orig.val().to_u64(),
            );
            sim.tick();
            return r;
        }
        sim.tick();
    }
    panic!("{c:?}: no result");
}

#[test]
fn life_of_a_qps_resources() {
    const READ: u64 = 0x0C;
    const CMP_SWAP: u64 = 0x13;
    const FETCH_ADD: u64 = 0x14;
    let mut sim = CycleSim::new(Small::default(), |b| &mut b.clock);
    sim.uut.reset.next = true;
    sim.tick();
    sim.uut.reset.next = false;
    let none = (ANSWER_NO_RESOURCE, false, 0, 0, 0, 0);
    // Limit 3: the READ at 0xFFFFF0 is pushed out by the fourth.
    run(&mut sim, &read(0xFF_FFF0, 2, 0x1000, 2048));
    run(&mut sim, &read(0xFF_FFFE, 4, 0x8000, 4096));
    run(&mut sim, &atomic(2, 0xDEAD_BEEF_0000_0001));
    run(&mut sim, &read(3, 1, 0x2000, 100));
    assert_eq!(
        run(&mut sim, &lookup(READ, 0xFF_FFF0, 0x1000, 0x77, 2048)),
        none
    );
    let hit = |answer| (answer, true, 0xFF_FFFE, 4, 0x77, 0x8000);
    // Across the wrap: PSN 1 is the READ's fourth response, 1 PSN left.
    assert_eq!(
        run(&mut sim, &lookup(READ, 1, 0x8000 + 3072, 0x77, 1024)),
        hit(ANSWER_READ)
    );
    // Two PSNs' worth of bytes do not fit the one left.
    assert_eq!(
        run(&mut sim, &lookup(READ, 1, 0x8000 + 2048, 0x77, 2048)),
        hit(ANSWER_MISMATCH)
    );
    // Other R_Key; beyond the recorded range.
    assert_eq!(
        run(&mut sim, &lookup(READ, 0xFF_FFFE, 0x8000, 0x78, 16)),
        hit(ANSWER_MISMATCH)
    );
    assert_eq!(
        run(&mut sim, &lookup(READ, 0xFF_FFFE, 0x8000, 0x77, 4097)),
        hit(ANSWER_MISMATCH)
    );
    // A zero-length READ at the start still needs one PSN.
    assert_eq!(
        run(&mut sim, &lookup(READ, 0xFF_FFFF, 0x8000, 0x77, 0)),
        hit(ANSWER_READ)
    );
    let atomic_hit = |answer| (answer, true, 2, 1, 0, 0xDEAD_BEEF_0000_0001);
    assert_eq!(
        run(&mut sim, &lookup(FETCH_ADD, 2, 0, 0, 0)),
        atomic_hit(ANSWER_ATOMIC)
    );
    assert_eq!(
        run(&mut sim, &lookup(CMP_SWAP, 2, 0, 0, 0)),
        atomic_hit(ANSWER_ATOMIC)
    );
    // A READ at an atomic's PSN: no resource of its kind.
    assert_eq!(
        run(&mut sim, &lookup(READ, 2, 0, 0, 0)),
        atomic_hit(ANSWER_NO_RESOURCE)
    );
    // Another QP has nothing; a clear empties QP 1.
    assert_eq!(
        run(
            &mut sim,
            &Cmd {
                qpn: 2,
                ..lookup(FETCH_ADD, 2, 0, 0, 0)
            }
        ),
        none
    );
    run(
        &mut sim,
        &Cmd {
            op: OP_CLEAR,
            qpn: 1,
            ..Cmd::default()
        },
    );
    assert_eq!(run(&mut sim, &lookup(FETCH_ADD, 2, 0, 0, 0)), none);
}

#[test]
fn entries_and_pointers_map_to_block_ram() {
    let report = xilinx_synth(
        "rd_atomic_resources",
        &verilog_of::<RdAtomicResourcesDefault>(),
    )
    .unwrap();
    let bram36 = report.count("RAMB36E2");
    let bram18 = report.count("RAMB18E2");
    assert!(bram36 > 0 && bram18 > 0, "{}", report.log);
    report.assert_memories_in_block_ram();
    // The command, held entry and result registers; no memory in flip-flops.
    assert!(report.flip_flops() <= 800, "{}", report.log);
}
