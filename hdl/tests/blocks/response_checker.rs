//! ResponseChecker in rust-hdl's simulator: one hand-checked case of every
//! action, drop reason and WQE outcome (the rules are those of
//! `rocenic_model::completer`; the exhaustive comparison with the model is
//! `sim/tests/blocks/response_checker.rs` under Verilator), back to back at
//! one per cycle, then held under output backpressure, replayed on the
//! generated Verilog under Verilator; Verilator lint; Yosys synth_xilinx:
//! logic only, no memory, within a LUT and flip-flop budget.

use rocenic_hdl::codes::{mtu, qp_state, wqe_kind};
use rocenic_hdl::requester::response_checker::*;
use rocenic_hdl_testbench::{verilator_lint, verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;

#[derive(Clone, Copy, Debug)]
struct Input {
    opcode: u64,
    psn: u64,
    /// AETH syndrome, `None` when the packet has no AETH.
    aeth: Option<u64>,
    payload_len: u64,
    state: u64,
    una: u64,
    max_sent: u64,
    mtu_code: u64,
    /// (kind, first PSN, PSN count, done PSN, length, complete, error)
    wqe: Option<(u64, u64, u64, u64, u64, bool, bool)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Output {
    action: u64,
    drop: u64,
    ack_end: u64,
    rnr_timer: u64,
    status: u64,
    wqe: u64,
    offset: u64,
    len: u64,
    completes: bool,
}

/// An in-window packet of an RTS QP with 1024-byte MTU: PSNs 0x100..0x200
/// were sent and 0x100 is the oldest unacknowledged.
fn base(opcode: u64, psn: u64) -> Input {
    Input {
        opcode,
        psn,
        aeth: None,
        payload_len: 0,
        state: qp_state::RTS.into(),
        una: 0x100,
        max_sent: 0x200,
        mtu_code: mtu::IBA_1024.into(),
        wqe: None,
    }
}

fn drop(reason: u64) -> Output {
    Output {
        action: ACTION_DROP,
        drop: reason,
        ..Output::default()
    }
}

fn act(action: u64, ack_end: u64) -> Output {
    Output {
        action,
        ack_end,
        ..Output::default()
    }
}

/// A READ of 2500 bytes at 1024-byte MTU: PSNs 0x140..=0x142, 0x141 next.
const READ: (u64, u64, u64, u64, u64, bool, bool) =
    (wqe_kind::READ, 0x140, 3, 0x141, 2500, false, false);

fn cases() -> Vec<(Input, Output)> {
    let ack = |syndrome: u64, psn: u64| Input {
        aeth: Some(syndrome),
        ..base(0x11, psn)
    };
    let read = |opcode: u64, psn: u64, len: u64, wqe| Input {
        payload_len: len,
        wqe: Some(wqe),
        ..base(opcode, psn)
    };
    let atomic = |psn: u64, wqe| Input {
        aeth: Some(0x1F),
        wqe: Some(wqe),
        ..base(0x12, psn)
    };
    let read_outcome = |wqe: u64| Output {
        wqe,
        ..act(ACTION_READ_RESPONSE, 0x141)
    };
    vec![
        (
            Input {
                state: qp_state::ERR.into(),
                ..ack(0x1F, 0x120)
            },
            drop(DROP_QP_STATE),
        ),
        (ack(0x1F, 0xFF), drop(DROP_DUPLICATE_RESPONSE)),
        (ack(0x1F, 0x200), drop(DROP_RESPONSE_OUT_OF_WINDOW)),
        (base(0x11, 0x120), drop(DROP_BAD_AETH)),
        (ack(0x40, 0x120), drop(DROP_BAD_AETH)),
        (ack(0x65, 0x120), drop(DROP_BAD_AETH)),
        (base(0x0C, 0x120), drop(DROP_UNEXPECTED_OPCODE)),
        // ACK across the 2^24 wrap, reserved syndrome bit 7 ignored.
        (
            Input {
                una: 0xFF_FFF0,
                max_sent: 0x10,
                ..ack(0x9F, 0xFF_FFFF)
            },
            act(ACTION_ACK, 0),
        ),
        (
            ack(0x2E, 0x120),
            Output {
                rnr_timer: 14,
                ..act(ACTION_RNR_NAK, 0x120)
            },
        ),
        (ack(0x60, 0x120), act(ACTION_SEQUENCE_NAK, 0x120)),
        (
            ack(0x61, 0x120),
            Output {
                status: STATUS_REM_INV_REQ,
                ..act(ACTION_ERROR_NAK, 0x120)
            },
        ),
        (
            ack(0x62, 0x120),
            Output {
                status: STATUS_REM_ACCESS,
                ..act(ACTION_ERROR_NAK, 0x120)
            },
        ),
        (
            ack(0x63, 0x120),
            Output {
                status: STATUS_REM_OP,
                ..act(ACTION_ERROR_NAK, 0x120)
            },
        ),
        (
            ack(0x64, 0x120),
            Output {
                status: STATUS_REM_INV_REQ,
                ..act(ACTION_ERROR_NAK, 0x120)
            },
        ),
        (
            atomic(0x130, (wqe_kind::ATOMIC, 0x130, 1, 0x130, 8, false, false)),
            Output {
                wqe: WQE_OK,
                ..act(ACTION_ATOMIC_ACK, 0x130)
            },
        ),
        (
            atomic(0x130, (wqe_kind::ATOMIC, 0x130, 1, 0x131, 8, true, false)),
            Output {
                wqe: WQE_UNEXPECTED,
                ..act(ACTION_ATOMIC_ACK, 0x130)
            },
        ),
        (
            Input {
                wqe: None,
                ..atomic(0x130, READ)
            },
            Output {
                wqe: WQE_UNEXPECTED,
                ..act(ACTION_ATOMIC_ACK, 0x130)
            },
        ),
        // READ: middle packet in place, then the last one (2500 - 2048).
        (
            read(0x0E, 0x141, 1024, READ),
            Output {
                offset: 1024,
                len: 1024,
                ..read_outcome(WQE_OK)
            },
        ),
        (
            read(
                0x0F,
                0x142,
                452,
                (wqe_kind::READ, 0x140, 3, 0x142, 2500, false, false),
            ),
            Output {
                ack_end: 0x142,
                offset: 2048,
                len: 452,
                completes: true,
                ..read_outcome(WQE_OK)
            },
        ),
        (
            read(0x0E, 0x141, 1000, READ),
            read_outcome(WQE_BAD_RESPONSE),
        ),
        (
            read(0x10, 0x141, 1024, READ),
            read_outcome(WQE_BAD_RESPONSE),
        ),
        (
            read(0x0E, 0x142, 452, READ),
            Output {
                ack_end: 0x142,
                ..read_outcome(WQE_GAP)
            },
        ),
        (
            read(0x0D, 0x140, 1024, READ),
            Output {
                ack_end: 0x140,
                ..read_outcome(WQE_DUPLICATE)
            },
        ),
        (
            read(
                0x0E,
                0x141,
                1024,
                (wqe_kind::READ, 0x140, 3, 0x141, 2500, false, true),
            ),
            read_outcome(WQE_UNEXPECTED),
        ),
        (
            read(
                0x0E,
                0x141,
                1024,
                (wqe_kind::WRITE, 0x140, 3, 0x141, 2500, false, false),
            ),
            read_outcome(WQE_UNEXPECTED),
        ),
    ]
}

fn drive(sim: &mut CycleSim<ResponseChecker>, tag: u64, i: Option<&Input>) {
    let u = &mut sim.uut;
    u.in_valid.next = i.is_some();
    u.in_tag.next = bits(tag);
    let i = i.copied().unwrap_or(base(0, 0));
    u.pkt_opcode.next = bits(i.opcode);
    u.pkt_psn.next = bits(i.psn);
    u.pkt_has_aeth.next = i.aeth.is_some();
    u.pkt_aeth_syndrome.next = bits(i.aeth.unwrap_or(0));
    u.pkt_payload_len.next = bits(i.payload_len);
    u.ctx_state.next = bits(i.state);
    u.ctx_una_psn.next = bits(i.una);
    u.ctx_max_sent_psn.next = bits(i.max_sent);
    u.ctx_path_mtu.next = bits(i.mtu_code);
    let (kind, first, npsn, done, len, complete, error) =
        i.wqe.unwrap_or((0, 0, 1, 0, 0, false, false));
    u.wqe_found.next = i.wqe.is_some();
    u.wqe_kind.next = bits(kind);
    u.wqe_first_psn.next = bits(first);
    u.wqe_npsn.next = bits(npsn);
    u.wqe_done_psn.next = bits(done);
    u.wqe_len.next = bits(len);
    u.wqe_complete.next = complete;
    u.wqe_error.next = error;
}

fn observe(sim: &CycleSim<ResponseChecker>) -> Option<(u64, Output)> {
    let u = &sim.uut;
    if !u.out_valid.val() {
        return None;
    }
    assert_eq!(u.out_gap_retry.val(), u.out_wqe.val().to_u64() == WQE_GAP);
    Some((
        u.out_tag.val().to_u64(),
        Output {
            action: u.out_action.val().to_u64(),
            drop: u.out_drop.val().to_u64(),
            ack_end: u.out_ack_end.val().to_u64(),
            rnr_timer: u.out_rnr_timer.val().to_u64(),
            status: u.out_status.val().to_u64(),
            wqe: u.out_wqe.val().to_u64(),
            offset: u.out_offset.val().to_u64(),
            len: u.out_len.val().to_u64(),
            completes: u.out_completes_wqe.val(),
        },
    ))
}

#[test]
fn every_action_back_to_back_then_under_backpressure() {
    let cases = cases();
    let mut sim = CycleSim::new(ResponseChecker::default(), |b| &mut b.clock);
    sim.record();
    sim.uut.reset.next = true;
    sim.uut.out_ready.next = true;
    drive(&mut sim, 0, None);
    sim.tick();
    sim.uut.reset.next = false;

    // One input per cycle, consumer always ready: each decision appears
    // LATENCY cycles after its input, in order.
    let mut got = Vec::new();
    for cycle in 0..cases.len() as u64 + LATENCY {
        let input = cases.get(cycle as usize).map(|c| &c.0);
        drive(&mut sim, cycle, input);
        sim.settle();
        assert!(sim.uut.in_ready.val());
        if let Some(out) = observe(&sim) {
            assert_eq!(out.0 + LATENCY, cycle, "latency");
            got.push(out);
        }
        sim.tick();
    }
    assert_eq!(got.len(), cases.len());
    for ((tag, out), (input, want)) in got.iter().zip(&cases) {
        assert_eq!(out, want, "case {tag}: {input:?}");
    }

    // The consumer stalls every other cycle: nothing is lost or repeated.
    let mut got = Vec::new();
    let mut next = 0usize;
    let mut cycle = 0u64;
    while got.len() < cases.len() {
        let ready = cycle % 2 == 1;
        sim.uut.out_ready.next = ready;
        drive(&mut sim, next as u64, cases.get(next).map(|c| &c.0));
        sim.settle();
        let accepted = sim.uut.in_ready.val() && next < cases.len();
        if let Some(out) = observe(&sim) {
            if ready {
                got.push(out);
            }
        }
        if accepted {
            next += 1;
        }
        sim.tick();
        cycle += 1;
        assert!(cycle < 200, "stuck");
    }
    for (i, ((tag, out), (_, want))) in got.iter().zip(&cases).enumerate() {
        assert_eq!((*tag as usize, out), (i, want));
    }
    let cycles = sim.replay_in_verilator("response_checker").unwrap();
    assert!(cycles > cases.len());
}

#[test]
fn verilator_lint_is_clean() {
    let warnings = verilator_lint("response_checker", &verilog_of::<ResponseChecker>()).unwrap();
    assert!(warnings.is_empty(), "{warnings:#?}");
}

#[test]
fn synthesizes_to_logic_only() {
    let report = xilinx_synth("response_checker", &verilog_of::<ResponseChecker>()).unwrap();
    assert!(
        report
            .cells
            .iter()
            .all(|(c, _)| !c.starts_with("RAM") && !c.starts_with("DSP")),
        "{}",
        report.log
    );
    // Stage A's and B's registers (about 270 bits) and the comparisons.
    assert!(report.flip_flops() <= 300, "{}", report.log);
    assert!(report.luts() <= 600, "{}", report.log);
}
