//! RequestSegmenter in rust-hdl's simulator on a few WQEs against the
//! model's `segment_wqe` (the thorough lockstep runs under Verilator in
//! `sim/tests/blocks/request_segmenter.rs`), and its synthesis with Yosys:
//! logic and flip-flops only, no multiplier, no RAM.

use rocenic_hdl::codes::{mtu, send_op_kind};
use rocenic_hdl::requester::request_segmenter::{RequestSegmenter, LATENCY};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::requester::{message_psns, segment_wqe, WqePlanInput};
use rocenic_model::verbs::SendOp;
use rocenic_wire::op;
use rust_hdl::prelude::*;

struct Wqe {
    kind: u64,
    op: SendOp,
    len: u64,
    first_psn: u32,
    start: u32,
    una: u32,
    window: u32,
}

const MTU: u32 = 1024;
const INTERVAL: u32 = 4;

fn plan_input(w: &Wqe) -> WqePlanInput {
    WqePlanInput {
        op: w.op,
        len: w.len,
        first_psn: w.first_psn,
        npsn: message_psns(&w.op, w.len, MTU),
        dest_qp: 0x42,
        solicited: true,
    }
}

fn offer(sim: &mut CycleSim<RequestSegmenter>, tag: usize, w: &Wqe) {
    let (va, rkey, imm) = match w.op {
        SendOp::WriteWithImm {
            remote_addr,
            rkey,
            imm,
        } => (remote_addr, rkey, imm),
        SendOp::Read { remote_addr, rkey } => (remote_addr, rkey, 0),
        _ => (0, 0, 0),
    };
    let u = &mut sim.uut;
    u.wqe_valid.next = true;
    u.wqe_tag.next = bits(tag as u64);
    u.wqe_kind.next = bits(w.kind);
    u.wqe_len.next = bits(w.len);
    u.wqe_first_psn.next = bits(w.first_psn.into());
    u.wqe_start_psn.next = bits(w.start.into());
    u.wqe_mtu.next = bits(mtu::iba_code(MTU).expect("an IBA MTU").into());
    u.wqe_dest_qp.next = bits(0x42);
    u.wqe_remote_va.next = bits(va);
    u.wqe_rkey.next = bits(rkey.into());
    u.wqe_imm.next = bits(imm.into());
    u.wqe_compare.next = bits(0);
    u.wqe_swap_add.next = bits(0);
    u.wqe_solicited.next = true;
    u.wqe_una.next = bits(w.una.into());
    u.wqe_window.next = bits(w.window.into());
    u.wqe_ack_req_interval.next = bits(INTERVAL.into());
}

/// Four WQEs back to back with the output always ready: a 3-packet SEND
/// across the PSN wrap, a one-packet WRITE with immediate, a READ resumed
/// at its third PSN, a SEND cut by the window after two packets. Every
/// descriptor matches the model, with no bubble between WQEs.
#[test]
fn back_to_back_wqes_match_the_model() {
    let wqes = [
        Wqe {
            kind: send_op_kind::SEND,
            op: SendOp::Send,
            len: 2 * 1024 + 1,
            first_psn: 0xFF_FFFF,
            start: 0xFF_FFFF,
            una: 0xFF_FFF0,
            window: 100,
        },
        Wqe {
            kind: send_op_kind::WRITE_WITH_IMM,
            op: SendOp::WriteWithImm {
                remote_addr: 0x1234_5678_9000,
                rkey: 0x77,
                imm: 0xDEAD_BEEF,
            },
            len: 1024,
            first_psn: 2,
            start: 2,
            una: 0,
            window: 100,
        },
        Wqe {
            kind: send_op_kind::READ,
            op: SendOp::Read {
                remote_addr: 0x1000,
                rkey: 9,
            },
            len: 5 * 1024 - 3,
            first_psn: 3,
            start: 5,
            una: 5,
            window: 2,
        },
        Wqe {
            kind: send_op_kind::SEND,
            op: SendOp::Send,
            len: 8 * 1024,
            first_psn: 8,
            start: 8,
            una: 6,
            window: 4,
        },
    ];
    let mut want = vec![];
    for (tag, w) in wqes.iter().enumerate() {
        let s = segment_wqe(&plan_input(w), w.start, MTU, INTERVAL, w.una, w.window);
        let n = s.plans.len();
        for (i, p) in s.plans.iter().enumerate() {
            let end = i + 1 == n;
            want.push((
                tag as u64,
                p.bth.opcode,
                p.bth.psn,
                p.bth.ack_req,
                p.payload_offset,
                p.payload_len,
                p.psns,
                end,
                end.then_some((s.next_psn, s.cut)),
            ));
        }
    }
    assert_eq!(want.len(), 3 + 1 + 1 + 2);
    assert_eq!(want[4].1, op::READ_REQUEST);
    assert_eq!(want[6].8, Some((10, true)));

    let mut sim = CycleSim::new(RequestSegmenter::default(), |b| &mut b.clock);
    sim.uut.reset.next = false;
    sim.uut.pkt_ready.next = true;
    let mut got = vec![];
    let mut next = 0;
    let mut first_at = None;
    while got.len() < want.len() {
        assert!(sim.cycles() < 40, "stuck");
        if next < wqes.len() {
            offer(&mut sim, next, &wqes[next]);
        } else {
            sim.uut.wqe_valid.next = false;
        }
        sim.settle();
        let u = &sim.uut;
        if u.pkt_valid.val() {
            first_at.get_or_insert(sim.cycles());
            assert!(u.pkt_packet.val());
            let end = u.pkt_wqe_end.val();
            got.push((
                u.pkt_tag.val().to_u64(),
                u.pkt_opcode.val().to_u64() as u8,
                u.pkt_psn.val().to_u64() as u32,
                u.pkt_ack_req.val(),
                u.pkt_payload_offset.val().to_u64(),
                u.pkt_payload_len.val().to_u64(),
                u.pkt_psns.val().to_u64() as u32,
                end,
                end.then(|| (u.pkt_next_psn.val().to_u64() as u32, u.pkt_cut.val())),
            ));
        }
        if next < wqes.len() && u.wqe_ready.val() {
            next += 1;
        }
        sim.tick();
    }
    assert_eq!(got, want);
    assert_eq!(
        first_at,
        Some(LATENCY),
        "first descriptor LATENCY cycles in"
    );
    assert_eq!(sim.cycles(), LATENCY + want.len() as u64, "no bubble");
}

/// Yosys synth_xilinx: no DSP (offsets are shifts and adds), no block or
/// LUT RAM; the flip-flops are the WQE and descriptor registers (1,112
/// measured with the grant cap's packet counter and limit).
#[test]
fn synthesizes_to_logic_without_multipliers() {
    let verilog = verilog_of::<RequestSegmenter>();
    let report = xilinx_synth("request_segmenter", &verilog).unwrap();
    assert_eq!(report.count("DSP48E2"), 0, "{}", report.log);
    assert!(
        report.cells.iter().all(|(c, _)| !c.starts_with("RAM")),
        "{}",
        report.log
    );
    assert!(report.luts() > 0, "{}", report.log);
    assert!(report.flip_flops() <= 1150, "{}", report.log);
}
