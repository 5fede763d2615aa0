//! SendWqeDecoder in rust-hdl's simulator against the model's decode of
//! the same slot (`rocenic_model::host_interface::work_queues::decode_send`,
//! what the model NIC behind the ABI does at fetch): random send WQEs in
//! 64- and 128-byte slots, most well formed, the rest with one rule
//! broken (index, flags, opcode, SGE count, inline length, inline READ or
//! atomic); malformed exactly when the model finds no WQE, and otherwise
//! every field, code and SGE as the model decoded it. Random valid/ready
//! delays; then the recorded cycles on the Verilog under Verilator, the
//! lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_abi::codes::{SEND_FLAGS, SEND_OPCODE};
use rocenic_abi::wqe::{send, sge};
use rocenic_hdl::codes::{send_op_kind, wc_opcode, wqe_kind};
use rocenic_hdl::host::send_wqe_decoder::SendWqeDecoder;
use rocenic_hdl::primitives::wide::{bits_from_bytes, bits_to_bytes};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::completer::{wc_opcode as model_wc_opcode, WqeKind};
use rocenic_model::host_interface::work_queues::decode_send;
use rocenic_model::verbs::{SendOp, SendWr};
use rust_hdl::prelude::*;
use std::collections::VecDeque;

/// A send WQE's slot, its ring index and stride.
#[derive(Clone, Debug)]
struct Slot {
    bytes: Vec<u8>,
    qpn: u64,
    index: u16,
    log_stride: u32,
}

fn random_slot(rng: &mut ChaCha8Rng) -> Slot {
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
    // Most SGE lengths small, some near 2^32 so that sums carry.
    for i in 0..send::max_sge(log_stride) {
        let at = send::SEGMENTS + i * sge::LAYOUT.size;
        if rng.gen_ratio(3, 4) {
            let len = rng.gen_range(0..70_000);
            sge::LENGTH.set(&mut bytes[at..at + 16], len).unwrap();
        }
    }
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
    Slot {
        bytes,
        qpn: rng.gen_range(0..1024),
        index,
        log_stride,
    }
}

/// The decoder's output, field by field, against the model's decode.
fn check(u: &SendWqeDecoder, slot: &Slot, n: usize) {
    let d = &u.decoded;
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
    let total: u64 = sgl.iter().map(|s| u64::from(s.length)).sum();
    assert_eq!(d.length.val().to_u64(), total, "WQE {n}: the SGEs' bytes");
    if let Some(first) = sgl.first() {
        assert_eq!(
            (
                d.sge_addr.val().to_u64(),
                d.sge_length.val().to_u64(),
                d.sge_lkey.val().to_u64()
            ),
            (first.addr, u64::from(first.length), u64::from(first.lkey)),
            "WQE {n}: first SGE"
        );
    }
    if WqeKind::of(op) != WqeKind::Atomic {
        assert_eq!(d.sge_count.val().to_u64(), sgl.len() as u64, "WQE {n}");
        for (i, s) in sgl.iter().enumerate() {
            let at = i * sge::LAYOUT.size;
            let g = |f: &rocenic_abi::layout::Field| f.get(&segments[at..at + 16]).unwrap();
            assert_eq!(
                (g(&sge::ADDR), g(&sge::LENGTH), g(&sge::LKEY)),
                (s.addr, u64::from(s.length), u64::from(s.lkey)),
                "WQE {n}: SGE {i} in the segments"
            );
        }
    }
}

struct Bench {
    sim: CycleSim<SendWqeDecoder>,
    rng: ChaCha8Rng,
    /// Beats to present: the slot's number and its beat.
    beats: VecDeque<(usize, usize)>,
    slots: Vec<Slot>,
    decoded: usize,
    busy: u32,
    ready: u32,
    cycles_of_output: Vec<u64>,
}

impl Bench {
    fn new(seed: u64, busy: u32, ready: u32) -> Bench {
        let mut sim = CycleSim::new(SendWqeDecoder::default(), |b| &mut b.clock);
        sim.record();
        sim.uut.reset.next = true;
        sim.tick();
        sim.uut.reset.next = false;
        Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed),
            beats: VecDeque::new(),
            slots: Vec::new(),
            decoded: 0,
            busy,
            ready,
            cycles_of_output: Vec::new(),
        }
    }

    fn push(&mut self, slot: Slot) {
        let n = self.slots.len();
        for beat in 0..slot.bytes.len() / 64 {
            self.beats.push_back((n, beat));
        }
        self.slots.push(slot);
    }

    fn run(&mut self) {
        let mut presenting = false;
        for _ in 0..100_000 {
            if self.decoded == self.slots.len() {
                return;
            }
            if !presenting && self.rng.gen_ratio(self.busy, 8) {
                if let Some(&(n, beat)) = self.beats.front() {
                    let s = &self.slots[n];
                    let u = &mut self.sim.uut;
                    u.wqe.valid.next = true;
                    u.wqe.qpn.next = bits(s.qpn);
                    u.wqe.queue.next = false;
                    u.wqe.index.next = bits(u64::from(s.index));
                    u.wqe.data.next = bits_from_bytes(&s.bytes[beat * 64..beat * 64 + 64]);
                    u.wqe.last.next = (beat + 1) * 64 == s.bytes.len();
                    presenting = true;
                }
            }
            let out_ready = self.rng.gen_ratio(self.ready, 8);
            self.sim.uut.decoded.ready.next = out_ready;
            self.sim.settle();
            let u = &self.sim.uut;
            let taken = u.wqe.valid.val() && u.wqe.ready.val();
            if u.decoded.valid.val() && out_ready {
                check(u, &self.slots[self.decoded], self.decoded);
                self.decoded += 1;
                self.cycles_of_output.push(self.sim.cycles());
            }
            self.sim.tick();
            if taken {
                self.beats.pop_front();
                self.sim.uut.wqe.valid.next = false;
                presenting = false;
            }
        }
        panic!("the decoder stopped");
    }
}

#[test]
fn random_send_wqes_decode_as_the_model_decodes_them() {
    let mut b = Bench::new(1, 6, 6);
    let mut malformed = 0;
    for _ in 0..1500 {
        let slot = random_slot(&mut b.rng);
        malformed += usize::from(decode_send(&slot.bytes, slot.index, slot.log_stride).is_none());
        b.push(slot);
    }
    b.run();
    assert!(
        (200..800).contains(&malformed),
        "both kinds well covered: {malformed} of 1500 malformed"
    );
    let cycles = b.sim.replay_in_verilator("send_wqe_decoder").unwrap();
    assert!(cycles > 2000, "replayed {cycles} cycles");
}

#[test]
fn a_wqe_a_cycle_of_64_byte_slots() {
    let mut b = Bench::new(2, 8, 8);
    for _ in 0..64 {
        let mut slot = random_slot(&mut b.rng);
        while slot.log_stride != 6 {
            slot = random_slot(&mut b.rng);
        }
        b.push(slot);
    }
    b.run();
    let c = &b.cycles_of_output;
    assert_eq!(c[63] - c[0], 63, "back to back");
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("send_wqe_decoder", &verilog_of::<SendWqeDecoder>());
}

#[test]
fn synthesizes_small() {
    let report = xilinx_synth("send_wqe_decoder", &verilog_of::<SendWqeDecoder>()).unwrap();
    assert!(report.luts() < 2500, "{} LUTs", report.luts());
}
