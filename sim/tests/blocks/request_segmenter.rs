//! Request segmenter lockstep: the Verilated `RequestSegmenter` against
//! the model's requester (`rocenic_model::requester::segment_wqe`, i.e.
//! `window_gate` and `plan_request` packet after packet, as `next_request`
//! and `build` use them).
//!
//! Seeded random WQEs of every kind: lengths 0..=1 MiB and the edges
//! (exact multiples of the MTU, MTU - 1, MTU + 1, 2^31), every MTU from
//! 256 to 4096, first PSNs near the 2^24 wrap, resume PSNs in the middle
//! of the WQE, windows that cut messages or hold a WQE back entirely,
//! AckReq intervals (powers of two and others), under random input gaps and output backpressure. Every
//! descriptor must equal the model's plan for its PSN, in order, none
//! missing or extra, and a stalled descriptor must hold still. Also: one
//! descriptor per cycle across back-to-back WQEs, the latency, a WQE cut
//! by the window and resumed, and reset in the middle of a WQE.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::codes::{mtu, send_op_kind};
use rocenic_hdl::requester::request_segmenter::{DIVIDER_CYCLES, LATENCY};
use rocenic_model::requester::{
    message_psns, segment_grant, segment_wqe, RequestPlan, WqePlanInput,
};
use rocenic_model::verbs::SendOp;
use rocenic_rtl::requester_nic::op_fields;
use rocenic_wire::psn;
use std::collections::VecDeque;
use verilator_sys::{RequestSegmenter as Dut, Sim};

const MTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];
/// Live PSNs stay within 2^22 of `una` (`post_send` refuses more).
const MAX_SPAN: u32 = 1 << 22;

#[derive(Clone, Copy, Debug)]
struct Wqe {
    w: WqePlanInput,
    start: u32,
    mtu: u32,
    una: u32,
    window: u32,
    interval: u32,
    /// The grant's packet cap (0: none).
    max_packets: u32,
}

/// One descriptor in the model's terms; fields a descriptor does not
/// carry (absent headers, the cursor before the WQE's end, everything of
/// a descriptor without a packet) are left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Desc {
    tag: u32,
    packet: Option<Packet>,
    /// `(next_psn, cut)` on a WQE's last descriptor.
    end: Option<(u32, bool)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Packet {
    opcode: u8,
    psn: u32,
    dest_qp: u32,
    ack_req: bool,
    solicited: bool,
    first: bool,
    last: bool,
    /// `(va, rkey, dma_len)`.
    reth: Option<(u64, u32, u32)>,
    imm: Option<u32>,
    ieth: Option<u32>,
    /// `(va, rkey, swap_add, compare)`.
    atomic: Option<(u64, u32, u64, u64)>,
    payload_offset: u64,
    payload_len: u64,
    psns: u32,
}

fn packet_of(p: &RequestPlan) -> Packet {
    Packet {
        opcode: p.bth.opcode,
        psn: p.bth.psn,
        dest_qp: p.bth.dest_qp,
        ack_req: p.bth.ack_req,
        solicited: p.bth.solicited,
        first: p.first,
        last: p.last,
        reth: p.ext.reth.map(|r| (r.va, r.rkey, r.dma_len)),
        imm: p.ext.imm,
        ieth: p.ext.ieth,
        atomic: p
            .ext
            .atomic_eth
            .map(|a| (a.va, a.rkey, a.swap_add, a.compare)),
        payload_offset: p.payload_offset,
        payload_len: p.payload_len,
        psns: p.psns,
    }
}

/// The model's descriptors of `wqe` (tagged `tag`).
fn expected(tag: u32, q: &Wqe) -> Vec<Desc> {
    let s = segment_grant(
        &q.w,
        q.start,
        q.mtu,
        q.interval,
        q.una,
        q.window,
        q.max_packets,
    );
    let end = Some((s.next_psn, s.cut));
    if s.plans.is_empty() {
        return vec![Desc {
            tag,
            packet: None,
            end,
        }];
    }
    let n = s.plans.len();
    s.plans
        .iter()
        .enumerate()
        .map(|(i, p)| Desc {
            tag,
            packet: Some(packet_of(p)),
            end: if i + 1 == n { end } else { None },
        })
        .collect()
}

fn drive(sim: &mut Sim<Dut>, tag: u32, q: &Wqe) {
    let (kind, va, rkey, imm, compare, swap_add) = op_fields(&q.w.op);
    sim.set_u64(Dut::WQE_TAG, tag.into());
    sim.set_u64(Dut::WQE_KIND, kind);
    sim.set_u64(Dut::WQE_LEN, q.w.len);
    sim.set_u64(Dut::WQE_FIRST_PSN, q.w.first_psn.into());
    sim.set_u64(Dut::WQE_START_PSN, q.start.into());
    sim.set_u64(
        Dut::WQE_MTU,
        mtu::iba_code(q.mtu).expect("an IBA MTU").into(),
    );
    sim.set_u64(Dut::WQE_DEST_QP, q.w.dest_qp.into());
    sim.set_u64(Dut::WQE_REMOTE_VA, va);
    sim.set_u64(Dut::WQE_RKEY, rkey.into());
    sim.set_u64(Dut::WQE_IMM, imm.into());
    sim.set_u64(Dut::WQE_COMPARE, compare);
    sim.set_u64(Dut::WQE_SWAP_ADD, swap_add);
    sim.set_bit(Dut::WQE_SOLICITED, q.w.solicited);
    sim.set_u64(Dut::WQE_UNA, q.una.into());
    sim.set_u64(Dut::WQE_WINDOW, q.window.into());
    sim.set_u64(Dut::WQE_ACK_REQ_INTERVAL, q.interval.into());
    sim.set_u64(Dut::WQE_MAX_PACKETS, q.max_packets.into());
}

fn observe(sim: &Sim<Dut>) -> Desc {
    let u32_of = |port| sim.get_u64(port) as u32;
    let end = sim
        .get_bit(Dut::PKT_WQE_END)
        .then(|| (u32_of(Dut::PKT_NEXT_PSN), sim.get_bit(Dut::PKT_CUT)));
    let packet = sim.get_bit(Dut::PKT_PACKET).then(|| {
        let va = sim.get_u64(Dut::PKT_REMOTE_VA);
        let rkey = u32_of(Dut::PKT_RKEY);
        let imm = u32_of(Dut::PKT_IMM);
        Packet {
            opcode: sim.get_u64(Dut::PKT_OPCODE) as u8,
            psn: u32_of(Dut::PKT_PSN),
            dest_qp: u32_of(Dut::PKT_DEST_QP),
            ack_req: sim.get_bit(Dut::PKT_ACK_REQ),
            solicited: sim.get_bit(Dut::PKT_SOLICITED),
            first: sim.get_bit(Dut::PKT_FIRST),
            last: sim.get_bit(Dut::PKT_LAST),
            reth: sim
                .get_bit(Dut::PKT_HAS_RETH)
                .then(|| (va, rkey, u32_of(Dut::PKT_DMA_LEN))),
            imm: sim.get_bit(Dut::PKT_HAS_IMM).then_some(imm),
            ieth: sim.get_bit(Dut::PKT_HAS_IETH).then_some(imm),
            atomic: sim.get_bit(Dut::PKT_HAS_ATOMIC).then(|| {
                (
                    va,
                    rkey,
                    sim.get_u64(Dut::PKT_SWAP_ADD),
                    sim.get_u64(Dut::PKT_COMPARE),
                )
            }),
            payload_offset: sim.get_u64(Dut::PKT_PAYLOAD_OFFSET),
            payload_len: sim.get_u64(Dut::PKT_PAYLOAD_LEN),
            psns: u32_of(Dut::PKT_PSNS),
        }
    });
    Desc {
        tag: u32_of(Dut::PKT_TAG),
        packet,
        end,
    }
}

/// An op of `kind` (a `send_op_kind` code) with random remote fields.
fn op_of_kind(kind: u64, rng: &mut ChaCha8Rng) -> SendOp {
    let (va, rkey, imm) = (rng.gen::<u64>(), rng.gen::<u32>(), rng.gen::<u32>());
    match kind {
        send_op_kind::SEND => SendOp::Send,
        send_op_kind::SEND_WITH_IMM => SendOp::SendWithImm { imm },
        send_op_kind::SEND_WITH_INV => SendOp::SendWithInv { rkey },
        send_op_kind::WRITE => SendOp::Write {
            remote_addr: va,
            rkey,
        },
        send_op_kind::WRITE_WITH_IMM => SendOp::WriteWithImm {
            remote_addr: va,
            rkey,
            imm,
        },
        send_op_kind::READ => SendOp::Read {
            remote_addr: va,
            rkey,
        },
        send_op_kind::COMPARE_SWAP => SendOp::CompareSwap {
            remote_addr: va,
            rkey,
            compare: rng.gen(),
            swap: rng.gen(),
        },
        _ => SendOp::FetchAdd {
            remote_addr: va,
            rkey,
            add: rng.gen(),
        },
    }
}

/// Message lengths biased to the MTU edges, up to 1 MiB, and 2^31.
fn random_len(rng: &mut ChaCha8Rng, mtu: u64) -> u64 {
    let k = rng.gen_range(1..=8);
    match rng.gen_range(0..12) {
        0 => 0,
        1 => rng.gen_range(1..mtu),
        2 => mtu - 1,
        3 => mtu,
        4 => mtu + 1,
        5 => k * mtu,
        6 => k * mtu - 1,
        7 => k * mtu + 1,
        8 => 1 << 31,
        9 => (1 << 31) - rng.gen_range(0..2 * mtu),
        _ => rng.gen_range(0..=1 << 20),
    }
}

/// A WQE as the requester could hold it: PSNs within `MAX_SPAN` of `una`,
/// `una` at or before the resume PSN, at most `max_packets` descriptors.
fn random_wqe(rng: &mut ChaCha8Rng, max_packets: usize) -> Wqe {
    loop {
        let op = op_of_kind(rng.gen_range(0..8), rng);
        let mut mtu = MTUS[rng.gen_range(0..MTUS.len())];
        let atomic = matches!(op, SendOp::CompareSwap { .. } | SendOp::FetchAdd { .. });
        let len = if atomic {
            8
        } else {
            random_len(rng, mtu.into())
        };
        if message_psns(&op, len, mtu) > MAX_SPAN {
            // 2^31 bytes at 256 take 2^23 PSNs, more than a QP may have.
            mtu = 512;
        }
        let npsn = message_psns(&op, len, mtu);
        let first_psn = if rng.gen_bool(0.4) {
            psn::sub(0, rng.gen_range(1..=2 * npsn.min(64)))
        } else {
            rng.gen::<u32>() & 0xFF_FFFF
        };
        let index = match rng.gen_range(0..4) {
            0 | 1 => 0,
            2 => npsn - rng.gen_range(1..=npsn.min(3)),
            _ => rng.gen_range(0..npsn),
        };
        let start = psn::add(first_psn, index);
        let behind = match rng.gen_range(0..4) {
            0 => 0,
            1 => rng.gen_range(0..=16),
            2 => rng.gen_range(0..=index),
            _ => rng.gen_range(0..=MAX_SPAN - npsn),
        };
        let window = match rng.gen_range(0..6) {
            0 => rng.gen_range(0..=4),
            1 => rng.gen_range(1..=64),
            2 => 2048,
            3 => MAX_SPAN + rng.gen_range(0..=1),
            4 => u32::MAX,
            _ => rng.gen_range(1..=4096),
        };
        let interval = match rng.gen_range(0..6) {
            0 => 0,
            1 => 64,
            2 => 1 << rng.gen_range(0..6),
            3 => 1 << rng.gen_range(0..32),
            4 => rng.gen_range(3..=100),
            _ => rng.gen(),
        };
        let q = Wqe {
            w: WqePlanInput {
                op,
                len,
                first_psn,
                npsn,
                dest_qp: rng.gen::<u32>() & 0xFF_FFFF,
                solicited: rng.gen(),
            },
            start,
            mtu,
            una: psn::sub(start, behind),
            window,
            interval,
            max_packets: if rng.gen_range(0..3) == 0 {
                rng.gen_range(1..=20)
            } else {
                0
            },
        };
        if expected(0, &q).len() <= max_packets {
            return q;
        }
    }
}

#[derive(Debug, Default)]
struct Stats {
    wqes: usize,
    descriptors: usize,
    empty: usize,
    cut: usize,
    /// WQEs the packet cap stopped before the window or the end did.
    capped: usize,
    resumed: usize,
    cycles: u64,
    stalls: u64,
}

/// Runs `wqes` through the block, offered with probability `p_valid` per
/// idle cycle, the output ready with probability `p_ready`; checks every
/// descriptor against the model, in order, and that a stalled one holds.
fn run(sim: &mut Sim<Dut>, wqes: &[Wqe], p_valid: f64, p_ready: f64, seed: u64) -> Stats {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5e6);
    let mut want: VecDeque<Desc> = VecDeque::new();
    let mut queue: VecDeque<(u32, &Wqe)> = wqes
        .iter()
        .enumerate()
        .map(|(i, q)| (i as u32, q))
        .collect();
    for &(tag, q) in &queue {
        want.extend(expected(tag, q));
    }
    let mut stats = Stats {
        wqes: wqes.len(),
        descriptors: want.len(),
        empty: want.iter().filter(|d| d.packet.is_none()).count(),
        cut: want.iter().filter(|d| d.end.is_some_and(|e| e.1)).count(),
        capped: wqes
            .iter()
            .filter(|q| {
                let whole = segment_wqe(&q.w, q.start, q.mtu, q.interval, q.una, q.window);
                whole.plans.len() > q.max_packets as usize && q.max_packets != 0
            })
            .count(),
        resumed: wqes.iter().filter(|q| q.start != q.w.first_psn).count(),
        ..Stats::default()
    };
    let budget = 100
        + (DIVIDER_CYCLES + 4) * wqes.len() as u64
        + 4 * want.len() as u64 * (1.0 / p_ready.min(p_valid)).ceil() as u64;
    let mut offered = false;
    let mut held: Option<Desc> = None;
    let mut taken = 0usize;
    let start = sim.cycle();
    while !want.is_empty() {
        let cycle = sim.cycle() - start;
        assert!(cycle < budget, "seed {seed}: stuck at cycle {cycle}");
        offered = !queue.is_empty() && (offered || rng.gen_bool(p_valid));
        sim.set_bit(Dut::WQE_VALID, offered);
        if let Some(&(tag, q)) = queue.front() {
            drive(sim, tag, q);
        }
        let ready = rng.gen_bool(p_ready);
        sim.set_bit(Dut::PKT_READY, ready);
        sim.eval();
        if offered && sim.get_bit(Dut::WQE_READY) {
            queue.pop_front();
            offered = false;
        }
        if sim.get_bit(Dut::PKT_VALID) {
            let got = observe(sim);
            if let Some(h) = held {
                assert_eq!(
                    got, h,
                    "seed {seed}, cycle {cycle}: a stalled descriptor changed"
                );
            }
            held = (!ready).then_some(got);
            if ready {
                let w = want.pop_front().unwrap_or_else(|| {
                    panic!("seed {seed}, cycle {cycle}: extra descriptor {got:?}")
                });
                let q = wqes[got.tag as usize];
                assert_eq!(
                    got, w,
                    "seed {seed}, cycle {cycle}: descriptor {taken} of WQE {q:?}"
                );
                taken += 1;
            } else {
                stats.stalls += 1;
            }
        } else {
            assert!(held.is_none(), "seed {seed}, cycle {cycle}: valid dropped");
        }
        sim.tick();
    }
    stats.cycles = sim.cycle() - start;
    // Nothing more comes out.
    sim.set_bit(Dut::WQE_VALID, false);
    sim.set_bit(Dut::PKT_READY, true);
    for _ in 0..4 {
        sim.eval();
        assert!(
            !sim.get_bit(Dut::PKT_VALID),
            "seed {seed}: extra descriptor"
        );
        sim.tick();
    }
    stats
}

fn fresh() -> Sim<Dut> {
    let mut sim = Sim::<Dut>::new().expect("request_segmenter is exported");
    sim.set_bit(Dut::RESET, true);
    sim.tick();
    sim.set_bit(Dut::RESET, false);
    sim
}

#[test]
fn random_wqes_match_the_model_under_gaps_and_backpressure() {
    let mut total = Stats::default();
    for seed in 1..=12u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let wqes: Vec<Wqe> = (0..300).map(|_| random_wqe(&mut rng, 5000)).collect();
        let (p_valid, p_ready) =
            [(1.0, 1.0), (0.5, 0.9), (0.9, 0.3), (0.2, 0.5)][seed as usize % 4];
        let mut sim = fresh();
        let s = run(&mut sim, &wqes, p_valid, p_ready, seed);
        eprintln!("seed {seed} (p_valid {p_valid}, p_ready {p_ready}): {s:?}");
        total.wqes += s.wqes;
        total.descriptors += s.descriptors;
        total.empty += s.empty;
        total.cut += s.cut;
        total.capped += s.capped;
        total.resumed += s.resumed;
        total.cycles += s.cycles;
        total.stalls += s.stalls;
    }
    eprintln!("total: {total:?}");
    assert!(total.descriptors > 20_000, "{total:?}");
    assert!(total.empty > 100 && total.cut > 300, "{total:?}");
    assert!(total.capped > 100, "{total:?}");
    assert!(total.resumed > 500 && total.stalls > 5_000, "{total:?}");
}

/// Every kind and MTU at the length edges, offered back to back with the
/// output always ready: one descriptor per cycle from the first to the
/// last, no bubble between WQEs, and the first `LATENCY` cycles after the
/// first WQE is offered.
#[test]
fn back_to_back_wqes_leave_one_descriptor_per_cycle() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xb2b);
    let mut wqes = vec![];
    for &mtu in &MTUS {
        for kind in 0..8 {
            for len in [0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu, 3 * mtu + 1] {
                let op = op_of_kind(kind, &mut rng);
                let len = if kind >= send_op_kind::COMPARE_SWAP {
                    8
                } else {
                    u64::from(len)
                };
                let first_psn = psn::sub(0, rng.gen_range(0..4));
                wqes.push(Wqe {
                    w: WqePlanInput {
                        op,
                        len,
                        first_psn,
                        npsn: message_psns(&op, len, mtu),
                        dest_qp: 0xABCDEF,
                        solicited: true,
                    },
                    start: first_psn,
                    mtu,
                    una: first_psn,
                    window: 1 << 22,
                    interval: 2,
                    max_packets: 0,
                });
            }
        }
    }
    let mut sim = fresh();
    let s = run(&mut sim, &wqes, 1.0, 1.0, 0);
    eprintln!("back to back: {s:?}");
    assert_eq!(s.empty + s.cut, 0);
    assert_eq!(
        s.cycles,
        LATENCY + s.descriptors as u64,
        "{} WQEs, {} descriptors",
        s.wqes,
        s.descriptors
    );
}

/// A 1 MiB WRITE at MTU 4096 in grants of at most 16 packets, each
/// resumed at the last one's cursor: 16 grants of 16 descriptors, every
/// one but the last cut, and together exactly the uncapped WQE's
/// descriptors (AckReq on the same packets: the interval's, the last).
#[test]
fn a_capped_grant_stops_after_its_packets_and_resumes_unchanged() {
    let first_psn = 0xFF_FF00;
    let op = SendOp::Write {
        remote_addr: 0x1000,
        rkey: 7,
    };
    let w = WqePlanInput {
        npsn: message_psns(&op, 1 << 20, 4096),
        op,
        len: 1 << 20,
        first_psn,
        dest_qp: 5,
        solicited: false,
    };
    let whole = segment_wqe(&w, first_psn, 4096, 64, first_psn, 2048);
    assert!(!whole.cut && whole.plans.len() == 256);
    let mut grants = Vec::new();
    let mut start = first_psn;
    loop {
        let g = Wqe {
            w,
            start,
            mtu: 4096,
            una: first_psn,
            window: 2048,
            interval: 64,
            max_packets: 16,
        };
        let s = segment_grant(&w, start, 4096, 64, first_psn, 2048, 16);
        assert_eq!(s.plans.len(), 16);
        grants.push(g);
        start = s.next_psn;
        if !s.cut {
            break;
        }
    }
    assert_eq!(grants.len(), 16);
    let mut sim = fresh();
    let s = run(&mut sim, &grants, 1.0, 1.0, 11);
    assert_eq!((s.descriptors, s.cut, s.capped), (256, 15, 15));
    let planned: Vec<_> = grants
        .iter()
        .flat_map(|g| segment_grant(&w, g.start, 4096, 64, first_psn, 2048, 16).plans)
        .collect();
    assert_eq!(planned, whole.plans);
    assert_eq!(s.cycles, LATENCY + 256);
}

/// A long WRITE at 256 bytes cut by the window, then resumed where it was
/// cut with `una` moved on, to the end: the two halves are the whole
/// message, and the first WQE's last descriptor asked for an ACK.
#[test]
fn a_cut_wqe_resumes_where_the_window_stopped_it() {
    let op = SendOp::Write {
        remote_addr: 0x7000_0000,
        rkey: 5,
    };
    let len = 100 * 256 + 17;
    let first_psn = 0xFF_FFC0;
    let w = WqePlanInput {
        op,
        len,
        first_psn,
        npsn: message_psns(&op, len, 256),
        dest_qp: 3,
        solicited: false,
    };
    let head = Wqe {
        w,
        start: first_psn,
        mtu: 256,
        una: psn::sub(first_psn, 10),
        window: 64,
        interval: 0,
        max_packets: 0,
    };
    let cut = segment_wqe(&w, head.start, 256, 0, head.una, head.window);
    assert!(cut.cut && cut.plans.len() == 54, "{}", cut.plans.len());
    let tail = Wqe {
        start: cut.next_psn,
        una: cut.next_psn,
        window: 1 << 22,
        ..head
    };
    let mut sim = fresh();
    let s = run(&mut sim, &[head, tail], 1.0, 1.0, 7);
    assert_eq!((s.descriptors, s.cut), (101, 1));
    assert_eq!(s.cycles, LATENCY + 101);
}

/// Reset in the middle of a long SEND, with a descriptor waiting on the
/// output and the next WQE offered: nothing of either comes out after it,
/// and the next run starts clean.
#[test]
fn reset_drops_the_wqe_in_progress() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5e7);
    let w = WqePlanInput {
        op: SendOp::Send,
        len: 50 * 1024,
        first_psn: 100,
        npsn: 50,
        dest_qp: 1,
        solicited: false,
    };
    let long = Wqe {
        w,
        start: 100,
        mtu: 1024,
        una: 100,
        window: 2048,
        interval: 0,
        max_packets: 0,
    };
    let mut sim = fresh();
    drive(&mut sim, 0, &long);
    sim.set_bit(Dut::WQE_VALID, true);
    sim.set_bit(Dut::PKT_READY, true);
    sim.ticks(5);
    sim.set_bit(Dut::PKT_READY, false);
    sim.eval();
    assert!(sim.get_bit(Dut::PKT_VALID) && !sim.get_bit(Dut::PKT_WQE_END));
    sim.set_bit(Dut::RESET, true);
    sim.tick();
    sim.set_bit(Dut::RESET, false);
    sim.set_bit(Dut::WQE_VALID, false);
    sim.eval();
    assert!(!sim.get_bit(Dut::PKT_VALID), "output emptied");
    assert!(sim.get_bit(Dut::WQE_READY), "no WQE in progress");
    let wqes: Vec<Wqe> = (0..20).map(|_| random_wqe(&mut rng, 50)).collect();
    let s = run(&mut sim, &wqes, 0.7, 0.7, 0x5e7);
    assert!(s.descriptors >= 20);
}

/// The first descriptor's latency: `LATENCY` for a WQE from its first PSN
/// or resumed with a power-of-two interval, `DIVIDER_CYCLES` more for one
/// resumed with another interval (AckReq still on the model's packets).
#[test]
fn latency_is_two_cycles_and_the_divider_adds_its_own_for_resumed_wqes() {
    let w = WqePlanInput {
        op: SendOp::Send,
        len: 1000 * 256,
        first_psn: 0xFF_FF00,
        npsn: 1000,
        dest_qp: 9,
        solicited: false,
    };
    for (start_index, interval, extra) in [
        (0, 7, 0),
        (0, 64, 0),
        (993, 64, 0),
        (993, 0, 0),
        (993, 7, DIVIDER_CYCLES),
        (994, 1000, DIVIDER_CYCLES),
    ] {
        let start = psn::add(w.first_psn, start_index);
        let q = Wqe {
            w,
            start,
            mtu: 256,
            una: start,
            window: 2048,
            interval,
            max_packets: 0,
        };
        let mut sim = fresh();
        let s = run(&mut sim, &[q], 1.0, 1.0, start_index.into());
        let n = (1000 - start_index) as u64;
        assert_eq!(s.descriptors as u64, n);
        assert_eq!(s.cycles, LATENCY + extra + n, "{start_index} {interval}");
    }
}
