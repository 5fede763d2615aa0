//! WqeDecoder in rust-hdl's simulator against the model's decode of the
//! same slot (`rocenic_model::host_interface::work_queues::decode_send` and
//! `decode_recv`, what the model NIC behind the ABI does at fetch): random
//! send and receive WQEs in 64- and 128-byte slots, interleaved, most well
//! formed, the rest with one rule broken (index, flags, opcode, SGE count,
//! inline length, inline READ or atomic); malformed exactly when the model
//! finds no WQE, and otherwise every field, code and SGE as the model
//! decoded it. Random valid/ready delays; then the recorded cycles on the
//! Verilog under Verilator, the lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_abi::codes::{SEND_FLAGS, SEND_OPCODE};
use rocenic_abi::layout::Field;
use rocenic_abi::wqe::{recv, send, sge};
use rocenic_hdl::codes::{send_op_kind, wc_opcode, wqe_kind};
use rocenic_hdl::host::wqe_decoder::WqeDecoder;
use rocenic_hdl::primitives::wide::{bits_from_bytes, bits_to_bytes};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::completer::{wc_opcode as model_wc_opcode, WqeKind};
use rocenic_model::host_interface::work_queues::{decode_recv, decode_send};
use rocenic_model::verbs::{SendOp, SendWr, Sge};
use rust_hdl::prelude::*;

/// A WQE's slot, its QP, ring (`recv`), ring index and stride.
#[derive(Clone, Debug)]
struct Slot {
    bytes: Vec<u8>,
    qpn: u64,
    recv: bool,
    index: u16,
    log_stride: u32,
}

impl Slot {
    fn decodes(&self) -> bool {
        if self.recv {
            decode_recv(&self.bytes, self.index, self.log_stride).is_some()
        } else {
            decode_send(&self.bytes, self.index, self.log_stride).is_some()
        }
    }
}

/// A WQE of the send or receive ring, of a random QP.
fn random_slot(rng: &mut ChaCha8Rng, recv: bool) -> Slot {
    let (bytes, index, log_stride) = if recv {
        random_recv_wqe(rng)
    } else {
        random_send_wqe(rng)
    };
    Slot {
        bytes,
        qpn: rng.gen_range(0..1024),
        recv,
        index,
        log_stride,
    }
}

/// The SGE lengths of a slot's SGE area from byte `first`: most small,
/// some near 2^32 so that sums carry.
fn random_sge_lengths(rng: &mut ChaCha8Rng, bytes: &mut [u8], first: usize) {
    for at in (first..bytes.len()).step_by(sge::LAYOUT.size) {
        if rng.gen_ratio(3, 4) {
            let len = if rng.gen_ratio(1, 8) {
                rng.gen_range(0xFFFF_0000..=0xFFFF_FFFF)
            } else {
                rng.gen_range(0..70_000)
            };
            sge::LENGTH.set(&mut bytes[at..at + 16], len).unwrap();
        }
    }
}

/// SGE `i` of an SGE area, as the model's `Sge` has it.
fn sge_at(area: &[u8], i: usize) -> (u64, u64, u64) {
    let at = i * sge::LAYOUT.size;
    let g = |f: &Field| f.get(&area[at..at + 16]).unwrap();
    (g(&sge::ADDR), g(&sge::LENGTH), g(&sge::LKEY))
}

/// A send WQE's bytes, ring index and stride.
fn random_send_wqe(rng: &mut ChaCha8Rng) -> (Vec<u8>, u16, u32) {
    let log_stride = if rng.gen_ratio(1, 2) { 6 } else { 7 };
    let mut bytes = vec![0u8; 1 << log_stride];
    rng.fill(&mut bytes[..]);
    let index: u16 = rng.gen();
    let set =
        |bytes: &mut Vec<u8>, f: &rocenic_abi::layout::Field, v: u64| f.set(bytes, v).unwrap();
    let opcode = SEND_OPCODE.codes[rng.gen_range(0..SEND_OPCODE.codes.len())].value;
    set(&mut bytes, &send::OPCODE, opcode);
    set(&mut bytes, &send::INDEX, u64::from(index));
    let known = SEND_FLAGS.codes.iter().fold(0, |all, c| all | c.value);
    let inline = rng.gen_ratio(1, 4);
    let mut flags = rng.gen_range(0..=known) & !SEND_FLAGS.value_of("INLINE");
    if inline {
        flags |= SEND_FLAGS.value_of("INLINE");
    }
    set(&mut bytes, &send::FLAGS, flags);
    let atomic = opcode == SEND_OPCODE.value_of("ATOMIC_CMP_AND_SWP")
        || opcode == SEND_OPCODE.value_of("ATOMIC_FETCH_AND_ADD");
    let count = if inline {
        0
    } else if atomic {
        1
    } else {
        rng.gen_range(0..=send::max_sge(log_stride))
    };
    set(&mut bytes, &send::SGE_COUNT, count as u64);
    let inline_len = rng.gen_range(0..=send::max_inline(log_stride));
    set(&mut bytes, &send::INLINE_LEN, inline_len as u64);
    random_sge_lengths(rng, &mut bytes, send::SEGMENTS);
    // One rule broken in one WQE of four.
    if rng.gen_ratio(1, 4) {
        match rng.gen_range(0..7) {
            0 => set(
                &mut bytes,
                &send::INDEX,
                u64::from(index ^ (1 << rng.gen_range(0..16))),
            ),
            1 => set(&mut bytes, &send::FLAGS, flags | 1 << rng.gen_range(4..8)),
            2 => set(&mut bytes, &send::OPCODE, rng.gen_range(7..=255)),
            3 => set(
                &mut bytes,
                &send::SGE_COUNT,
                rng.gen_range(send::max_sge(log_stride) as u64 + 1..=255),
            ),
            4 => {
                set(
                    &mut bytes,
                    &send::FLAGS,
                    flags | SEND_FLAGS.value_of("INLINE"),
                );
                set(
                    &mut bytes,
                    &send::INLINE_LEN,
                    rng.gen_range(send::max_inline(log_stride) as u64 + 1..=0xFFFF),
                );
            }
            5 => {
                set(
                    &mut bytes,
                    &send::FLAGS,
                    flags | SEND_FLAGS.value_of("INLINE"),
                );
                set(&mut bytes, &send::SGE_COUNT, rng.gen_range(1..=2));
            }
            _ => {
                set(
                    &mut bytes,
                    &send::FLAGS,
                    flags | SEND_FLAGS.value_of("INLINE"),
                );
                set(&mut bytes, &send::SGE_COUNT, 0);
                let op = ["RDMA_READ", "ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD"]
                    [rng.gen_range(0..3)];
                set(&mut bytes, &send::OPCODE, SEND_OPCODE.value_of(op));
            }
        }
    }
    (bytes, index, log_stride)
}

/// The send output, field by field, against the model's decode.
fn check_send(u: &WqeDecoder, slot: &Slot, n: usize) {
    let d = &u.send;
    assert_eq!(d.qpn.val().to_u64(), slot.qpn, "WQE {n}");
    assert_eq!(d.index.val().to_u64(), u64::from(slot.index), "WQE {n}");
    assert_eq!(
        d.wr_id.val().to_u64(),
        send::WR_ID.get(&slot.bytes).unwrap(),
        "WQE {n}"
    );
    let Some(wr) = decode_send(&slot.bytes, slot.index, slot.log_stride) else {
        assert!(d.malformed.val(), "WQE {n}: the model finds it malformed");
        return;
    };
    assert!(!d.malformed.val(), "WQE {n}: the model decodes it: {wr:?}");
    let SendWr {
        op,
        sgl,
        signaled,
        solicited,
        fence,
        inline_data,
        ..
    } = &wr;
    assert_eq!(d.op.val().to_u64(), send_op_kind::encode(op), "WQE {n}");
    assert_eq!(
        d.kind.val().to_u64(),
        wqe_kind::encode(WqeKind::of(op)),
        "WQE {n}"
    );
    assert_eq!(
        d.cqe_opcode.val().to_u64(),
        wc_opcode::encode(model_wc_opcode(op)),
        "WQE {n}"
    );
    assert_eq!(
        (d.signaled.val(), d.solicited.val(), d.fence.val()),
        (*signaled, *solicited, *fence),
        "WQE {n}"
    );
    let (remote, rkey, imm, compare, swap) = match *op {
        SendOp::Send => (None, None, None, None, None),
        SendOp::SendWithImm { imm } | SendOp::SendWithInv { rkey: imm } => {
            (None, None, Some(imm), None, None)
        }
        SendOp::Write { remote_addr, rkey } | SendOp::Read { remote_addr, rkey } => {
            (Some(remote_addr), Some(rkey), None, None, None)
        }
        SendOp::WriteWithImm {
            remote_addr,
            rkey,
            imm,
        } => (Some(remote_addr), Some(rkey), Some(imm), None, None),
        SendOp::CompareSwap {
            remote_addr,
            rkey,
            compare,
            swap,
        } => (
            Some(remote_addr),
            Some(rkey),
            None,
            Some(compare),
            Some(swap),
        ),
        SendOp::FetchAdd {
            remote_addr,
            rkey,
            add,
        } => (Some(remote_addr), Some(rkey), None, Some(add), None),
    };
    let same = |got: u64, want: Option<u64>, what: &str| {
        if let Some(w) = want {
            assert_eq!(got, w, "WQE {n}: {what}");
        }
    };
    same(d.remote_addr.val().to_u64(), remote, "remote_addr");
    same(d.rkey.val().to_u64(), rkey.map(u64::from), "rkey");
    same(d.imm.val().to_u64(), imm.map(u64::from), "imm");
    same(d.compare_or_add.val().to_u64(), compare, "compare_or_add");
    same(d.swap.val().to_u64(), swap, "swap");
    let segments = bits_to_bytes(d.segments.val());
    assert_eq!(d.inline.val(), inline_data.is_some(), "WQE {n}");
    if let Some(data) = inline_data {
        assert_eq!(d.length.val().to_u64(), data.len() as u64, "WQE {n}");
        assert_eq!(&segments[..data.len()], &data[..], "WQE {n}: inline bytes");
        return;
    }
    // An atomic's one SGE sits after its operands, not in the SGE area.
    let area = (WqeKind::of(op) != WqeKind::Atomic).then_some(&segments[..]);
    let first = (d.sge_addr.val(), d.sge_length.val(), d.sge_lkey.val());
    check_sges(
        n,
        d.length.val().to_u64(),
        d.sge_count.val().to_u64(),
        first,
        area,
        sgl,
    );
}

/// A receive WQE's bytes, ring index and stride.
fn random_recv_wqe(rng: &mut ChaCha8Rng) -> (Vec<u8>, u16, u32) {
    let log_stride = if rng.gen_ratio(1, 2) { 6 } else { 7 };
    let mut bytes = vec![0u8; 1 << log_stride];
    rng.fill(&mut bytes[..]);
    let index: u16 = rng.gen();
    let max = recv::max_sge(log_stride);
    let mut count = rng.gen_range(0..=max) as u64;
    let mut written_index = index;
    if rng.gen_ratio(1, 4) {
        if rng.gen_ratio(1, 2) {
            count = rng.gen_range(max as u64 + 1..=255);
        } else {
            written_index ^= 1 << rng.gen_range(0..16);
        }
    }
    recv::SGE_COUNT.set(&mut bytes, count).unwrap();
    recv::INDEX
        .set(&mut bytes, u64::from(written_index))
        .unwrap();
    random_sge_lengths(rng, &mut bytes, recv::SEGMENTS);
    (bytes, index, log_stride)
}

/// The receive output against the model's decode.
fn check_recv(u: &WqeDecoder, slot: &Slot, n: usize) {
    let d = &u.recv;
    assert_eq!(
        (d.qpn.val().to_u64(), d.index.val().to_u64()),
        (slot.qpn, u64::from(slot.index)),
        "WQE {n}"
    );
    assert_eq!(
        d.wr_id.val().to_u64(),
        recv::WR_ID.get(&slot.bytes).unwrap(),
        "WQE {n}"
    );
    let Some(wr) = decode_recv(&slot.bytes, slot.index, slot.log_stride) else {
        assert!(d.malformed.val(), "WQE {n}: the model finds it malformed");
        return;
    };
    assert!(!d.malformed.val(), "WQE {n}: the model decodes it: {wr:?}");
    let sges = bits_to_bytes(d.sges.val());
    let first = (d.sge_addr.val(), d.sge_length.val(), d.sge_lkey.val());
    let count = d.sge_count.val().to_u64();
    check_sges(
        n,
        d.length.val().to_u64(),
        count,
        first,
        Some(&sges),
        &wr.sgl,
    );
}

/// A decoded WQE's SGEs against the model's list: their total length, the
/// first SGE, and (given its SGE area) the count and every SGE in it.
fn check_sges(
    n: usize,
    length: u64,
    count: u64,
    first: (Bits<64>, Bits<32>, Bits<32>),
    area: Option<&[u8]>,
    sgl: &[Sge],
) {
    let total: u64 = sgl.iter().map(|s| u64::from(s.length)).sum();
    assert_eq!(length, total, "WQE {n}: the SGEs' bytes");
    if let Some(s) = sgl.first() {
        assert_eq!(
            (first.0.to_u64(), first.1.to_u64(), first.2.to_u64()),
            (s.addr, u64::from(s.length), u64::from(s.lkey)),
            "WQE {n}: first SGE"
        );
    }
    let Some(area) = area else {
        return;
    };
    assert_eq!(count, sgl.len() as u64, "WQE {n}");
    for (i, s) in sgl.iter().enumerate() {
        assert_eq!(
            sge_at(area, i),
            (s.addr, u64::from(s.length), u64::from(s.lkey)),
            "WQE {n}: SGE {i}"
        );
    }
}

/// Presents every slot's beats with random gaps and takes both outputs at
/// random, checking each WQE as it leaves; the cycles they left in.
fn run(
    sim: &mut CycleSim<WqeDecoder>,
    rng: &mut ChaCha8Rng,
    slots: &[Slot],
    busy: u32,
) -> Vec<u64> {
    let beats: Vec<(usize, usize)> = slots
        .iter()
        .enumerate()
        .flat_map(|(n, s)| (0..s.bytes.len() / 64).map(move |b| (n, b)))
        .collect();
    let order = |recv: bool| -> Vec<usize> {
        (0..slots.len())
            .filter(|&n| slots[n].recv == recv)
            .collect()
    };
    let (sends, recvs) = (order(false), order(true));
    let (mut next_beat, mut sent, mut received, mut out_cycles) = (0, 0, 0, Vec::new());
    let mut presenting = false;
    for _ in 0..100_000 {
        if sent == sends.len() && received == recvs.len() {
            return out_cycles;
        }
        if !presenting && next_beat < beats.len() && rng.gen_ratio(busy, 8) {
            let (n, beat) = beats[next_beat];
            let s = &slots[n];
            let u = &mut sim.uut;
            u.wqe.valid.next = true;
            u.wqe.qpn.next = bits(s.qpn);
            u.wqe.queue.next = s.recv;
            u.wqe.index.next = bits(u64::from(s.index));
            u.wqe.data.next = bits_from_bytes(&s.bytes[beat * 64..beat * 64 + 64]);
            u.wqe.last.next = (beat + 1) * 64 == s.bytes.len();
            presenting = true;
        }
        let (send_ready, recv_ready) = (rng.gen_ratio(busy, 8), rng.gen_ratio(busy, 8));
        sim.uut.send.ready.next = send_ready;
        sim.uut.recv.ready.next = recv_ready;
        sim.settle();
        let u = &sim.uut;
        let taken = u.wqe.valid.val() && u.wqe.ready.val();
        if u.send.valid.val() && send_ready {
            check_send(u, &slots[sends[sent]], sends[sent]);
            sent += 1;
            out_cycles.push(sim.cycles());
        }
        if u.recv.valid.val() && recv_ready {
            check_recv(u, &slots[recvs[received]], recvs[received]);
            received += 1;
            out_cycles.push(sim.cycles());
        }
        sim.tick();
        if taken {
            next_beat += 1;
            sim.uut.wqe.valid.next = false;
            presenting = false;
        }
    }
    panic!("the decoder stopped");
}

fn new_sim() -> CycleSim<WqeDecoder> {
    let mut sim = CycleSim::new(WqeDecoder::default(), |b| &mut b.clock);
    sim.record();
    sim.uut.reset.next = true;
    sim.tick();
    sim.uut.reset.next = false;
    sim
}

#[test]
fn random_wqes_of_both_rings_decode_as_the_model_decodes_them() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let slots: Vec<Slot> = (0..2500)
        .map(|_| {
            let recv = rng.gen_ratio(1, 2);
            random_slot(&mut rng, recv)
        })
        .collect();
    for recv in [false, true] {
        let (all, malformed) = slots
            .iter()
            .filter(|s| s.recv == recv)
            .fold((0, 0), |(a, m), s| (a + 1, m + usize::from(!s.decodes())));
        assert!(
            malformed * 8 > all && malformed * 2 < all,
            "both kinds well covered: {malformed} of {all} malformed"
        );
    }
    let mut sim = new_sim();
    run(&mut sim, &mut rng, &slots, 6);
    let cycles = sim.replay_in_verilator("wqe_decoder").unwrap();
    assert!(cycles > 4000, "replayed {cycles} cycles");
}

#[test]
fn a_wqe_a_cycle_of_64_byte_slots() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let slots: Vec<Slot> = std::iter::repeat_with(|| {
        let recv = rng.gen_ratio(1, 2);
        random_slot(&mut rng, recv)
    })
    .filter(|s| s.log_stride == 6)
    .take(64)
    .collect();
    let mut sim = new_sim();
    let c = run(&mut sim, &mut rng, &slots, 8);
    assert_eq!(c[63] - c[0], 63, "back to back");
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("wqe_decoder", &verilog_of::<WqeDecoder>());
}

#[test]
fn synthesizes_small() {
    let report = xilinx_synth("wqe_decoder", &verilog_of::<WqeDecoder>()).unwrap();
    assert!(report.luts() < 3000, "{} LUTs", report.luts());
}
