//! `WqeDecoder`: a fetched WQE (the ABI's `send_wqe` or `recv_wqe` in a
//! 64- or 128-byte slot, as [`WqeFetch`](crate::host::wqe_fetch::WqeFetch)
//! hands it on) to the transport's codes and fields, with the format
//! checks that make a WQE malformed (which the host interface completes
//! LOC_QP_OP_ERR, moving its QP to ERR).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops a half-taken 128-byte
//!   slot and the outputs.
//! - `wqe` ([`WqeSink`]): both rings' WQE beats (`queue` 0 send, 1
//!   receive); a slot of two beats (128 bytes) has `last` on its second.
//! - `send` ([`DecodedSendWqe`]), `recv` ([`DecodedRecvWqe`]) (valid/
//!   ready): one per WQE of that ring, in order. A WQE waits at `wqe`
//!   while its ring's output holds one not taken.
//!
//! # Rules (`rocenic_abi::wqe`)
//!
//! A send WQE is malformed when its `index` is not the ring index it was
//! fetched at, a flag bit is not FENCE, SIGNALED, SOLICITED or INLINE, its
//! `opcode` is not one of `send_opcode`'s, INLINE comes with SGEs, with an
//! `inline_len` beyond the slot's segment area or with a READ or an atomic,
//! an atomic has other than one SGE, or another WQE has more SGEs than its
//! slot holds (2 in 64 bytes, 6 in 128). A receive WQE is malformed when
//! its `index` is not its ring index or it has more SGEs than its slot
//! holds (3 in 64 bytes, 7 in 128). A malformed WQE's other fields are
//! what its bytes say; only `qpn`, `index` and `wr_id` count.
//!
//! # Latency and throughput
//!
//! A WQE is on its output in the cycle after its last beat is taken; one
//! beat a cycle, so one WQE a cycle of 64-byte slots, one per two cycles
//! of 128-byte ones, while the outputs are taken.

use crate::codes::{send_op_kind, wc_opcode, wqe_kind};
use crate::host::wqe_fetch::{WqeSink, QPN_BITS};
use rocenic_abi::codes::{SEND_FLAGS, SEND_OPCODE};
use rocenic_abi::wqe::{recv, send, sge};
use rocenic_model::completer::wc_opcode as model_wc_opcode;
use rocenic_model::completer::WqeKind;
use rocenic_model::verbs::SendOp;
use rust_hdl::prelude::*;

// The fields are cut at these bit positions (hdl_gen takes only
// literals); the compiler holds them to the ABI's layout.
const _: () = assert!(send::OPCODE.first_bit() == 0 && send::FLAGS.first_bit() == 8);
const _: () = assert!(send::SGE_COUNT.first_bit() == 16 && send::INDEX.first_bit() == 32);
const _: () = assert!(send::INLINE_LEN.first_bit() == 48 && send::WR_ID.first_bit() == 64);
const _: () = assert!(send::REMOTE_ADDR.first_bit() == 128 && send::RKEY.first_bit() == 192);
const _: () = assert!(send::IMM_OR_INVALIDATE.first_bit() == 224 && send::SEGMENTS == 32);
const _: () = assert!(send::atomic::SWAP.first_bit() == 320 && send::atomic::RESULT_SGE == 48);
const _: () = assert!(
    sge::ADDR.first_bit() == 0 && sge::LENGTH.first_bit() == 64 && sge::LKEY.first_bit() == 96
);
const _: () = assert!(send::max_sge(6) == 2 && send::max_sge(7) == 6);
const _: () = assert!(send::max_inline(6) == 32 && send::max_inline(7) == 96);
const _: () = assert!(send_op_kind::BITS == 3 && wqe_kind::BITS == 2 && wc_opcode::BITS == 3);

/// The segment area of a 128-byte slot: 96 bytes.
pub const SEGMENT_BITS: usize = 768;

/// A decoded send WQE (valid/ready). `op`, `kind` and `cqe_opcode` are the
/// `send_op_kind`, `wqe_kind` and `wc_opcode` codes. `length`: the
/// inline bytes, or the sum of the SGEs' lengths. `sge_*`: the first SGE
/// (an atomic's result SGE). `segments`: the slot's segment area (byte 32
/// on), SGEs or inline data, zero beyond a 64-byte slot.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct DecodedSendWqe {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<QPN_BITS>>,
    pub index: Signal<Out, Bits<16>>,
    pub malformed: Signal<Out, Bit>,
    pub wr_id: Signal<Out, Bits<64>>,
    pub op: Signal<Out, Bits<3>>,
    pub kind: Signal<Out, Bits<2>>,
    pub cqe_opcode: Signal<Out, Bits<3>>,
    pub signaled: Signal<Out, Bit>,
    pub solicited: Signal<Out, Bit>,
    pub fence: Signal<Out, Bit>,
    pub inline: Signal<Out, Bit>,
    pub sge_count: Signal<Out, Bits<8>>,
    pub length: Signal<Out, Bits<35>>,
    pub remote_addr: Signal<Out, Bits<64>>,
    pub rkey: Signal<Out, Bits<32>>,
    pub imm: Signal<Out, Bits<32>>,
    pub compare_or_add: Signal<Out, Bits<64>>,
    pub swap: Signal<Out, Bits<64>>,
    pub sge_addr: Signal<Out, Bits<64>>,
    pub sge_length: Signal<Out, Bits<32>>,
    pub sge_lkey: Signal<Out, Bits<32>>,
    pub segments: Signal<Out, Bits<SEGMENT_BITS>>,
}

/// The send output register.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct SendWqeFields {
    pub qpn: Bits<QPN_BITS>,
    pub index: Bits<16>,
    pub malformed: Bit,
    pub wr_id: Bits<64>,
    pub op: Bits<3>,
    pub kind: Bits<2>,
    pub cqe_opcode: Bits<3>,
    pub signaled: Bit,
    pub solicited: Bit,
    pub fence: Bit,
    pub inline: Bit,
    pub sge_count: Bits<8>,
    pub length: Bits<35>,
    pub remote_addr: Bits<64>,
    pub rkey: Bits<32>,
    pub imm: Bits<32>,
    pub compare_or_add: Bits<64>,
    pub swap: Bits<64>,
    pub sge_addr: Bits<64>,
    pub sge_length: Bits<32>,
    pub sge_lkey: Bits<32>,
    pub segments: Bits<SEGMENT_BITS>,
}

const _: () = assert!(recv::WR_ID.first_bit() == 0 && recv::SGE_COUNT.first_bit() == 64);
const _: () = assert!(recv::INDEX.first_bit() == 96 && recv::SEGMENTS == 16);
const _: () = assert!(recv::max_sge(6) == 3 && recv::max_sge(7) == 7);

/// The SGE area of a 128-byte receive slot: 7 SGEs.
pub const SGE_BITS: usize = 896;

/// A decoded receive WQE (valid/ready). `length`: the sum of the SGEs'
/// lengths; `sge_*`: the first SGE; `sges`: the slot's SGE area (byte 16
/// on), zero beyond a 64-byte slot.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct DecodedRecvWqe {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<QPN_BITS>>,
    pub index: Signal<Out, Bits<16>>,
    pub malformed: Signal<Out, Bit>,
    pub wr_id: Signal<Out, Bits<64>>,
    pub sge_count: Signal<Out, Bits<8>>,
    pub length: Signal<Out, Bits<35>>,
    pub sge_addr: Signal<Out, Bits<64>>,
    pub sge_length: Signal<Out, Bits<32>>,
    pub sge_lkey: Signal<Out, Bits<32>>,
    pub sges: Signal<Out, Bits<SGE_BITS>>,
}

/// The receive output register.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct RecvWqeFields {
    pub qpn: Bits<QPN_BITS>,
    pub index: Bits<16>,
    pub malformed: Bit,
    pub wr_id: Bits<64>,
    pub sge_count: Bits<8>,
    pub length: Bits<35>,
    pub sges: Bits<SGE_BITS>,
}

/// The ABI's send opcodes with an operation of each (its fields unused):
/// the tables below are built from the model's own codes of them.
fn abi_operations() -> [(&'static str, SendOp); 8] {
    let (remote_addr, rkey) = (0, 0);
    [
        ("RDMA_WRITE", SendOp::Write { remote_addr, rkey }),
        (
            "RDMA_WRITE_WITH_IMM",
            SendOp::WriteWithImm {
                remote_addr,
                rkey,
                imm: 0,
            },
        ),
        ("SEND", SendOp::Send),
        ("SEND_WITH_IMM", SendOp::SendWithImm { imm: 0 }),
        ("SEND_WITH_INV", SendOp::SendWithInv { rkey }),
        ("RDMA_READ", SendOp::Read { remote_addr, rkey }),
        (
            "ATOMIC_CMP_AND_SWP",
            SendOp::CompareSwap {
                remote_addr,
                rkey,
                compare: 0,
                swap: 0,
            },
        ),
        (
            "ATOMIC_FETCH_AND_ADD",
            SendOp::FetchAdd {
                remote_addr,
                rkey,
                add: 0,
            },
        ),
    ]
}

/// The decoder (see the module doc).
#[derive(LogicBlock)]
pub struct WqeDecoder {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub wqe: WqeSink,
    pub send: DecodedSendWqe,
    pub recv: DecodedRecvWqe,

    /// The first beat of a 128-byte slot.
    first_valid: DFF<Bit>,
    first_beat: DFF<Bits<512>>,
    send_valid: DFF<Bit>,
    send_out: DFF<SendWqeFields>,
    recv_valid: DFF<Bit>,
    recv_out: DFF<RecvWqeFields>,

    take: Signal<Local, Bit>,
    slot: Signal<Local, Bits<1024>>,
    wide: Signal<Local, Bit>,
    opcode: Signal<Local, Bits<8>>,
    flags: Signal<Local, Bits<8>>,
    count: Signal<Local, Bits<8>>,
    inline_len: Signal<Local, Bits<16>>,
    op_entry_shifted: Signal<Local, Bits<64>>,
    op_entry: Signal<Local, Bits<4>>,
    op_known: Signal<Local, Bit>,
    op: Signal<Local, Bits<3>>,
    op_shift: Signal<Local, Bits<8>>,
    kind_shifted: Signal<Local, Bits<16>>,
    kind: Signal<Local, Bits<2>>,
    wc_shifted: Signal<Local, Bits<24>>,
    is_atomic: Signal<Local, Bit>,
    needs_response: Signal<Local, Bit>,
    is_inline: Signal<Local, Bit>,
    max_sge: Signal<Local, Bits<8>>,
    max_inline: Signal<Local, Bits<16>>,
    sge_ok: Signal<Local, Bit>,
    inline_ok: Signal<Local, Bit>,
    is_recv: Signal<Local, Bit>,
    send_area: Signal<Local, Bits<1024>>,
    /// The SGE area: byte 32 of a send slot, byte 16 of a receive slot.
    sge_area: Signal<Local, Bits<SGE_BITS>>,
    recv_count: Signal<Local, Bits<8>>,
    recv_max_sge: Signal<Local, Bits<8>>,
    sge_count: Signal<Local, Bits<8>>,
    /// The lengths of SGEs 0 ..= 6 of the SGE area, 0 beyond the count.
    sge_lengths: [Signal<Local, Bits<35>>; 7],
    length_sum: Signal<Local, Bits<35>>,

    flags_unknown: Constant<Bits<8>>,
    flag_fence: Constant<Bits<8>>,
    flag_signaled: Constant<Bits<8>>,
    flag_solicited: Constant<Bits<8>>,
    flag_inline: Constant<Bits<8>>,
    /// `send_opcode` value v to `1 << 3 | send_op_kind` at bits 4v.., 0
    /// where v is no opcode.
    op_table: Constant<Bits<64>>,
    /// `send_op_kind` c to its `wqe_kind` at bits 2c.. and `wc_opcode` at
    /// bits 3c...
    kind_table: Constant<Bits<16>>,
    wc_table: Constant<Bits<24>>,
    wqe_kind_read: Constant<Bits<2>>,
    wqe_kind_atomic: Constant<Bits<2>>,
}

impl Default for WqeDecoder {
    fn default() -> Self {
        let flag = |name: &str| Constant::new(bits(SEND_FLAGS.value_of(name)));
        let known = ["FENCE", "SIGNALED", "SOLICITED", "INLINE"]
            .iter()
            .fold(0, |all, n| all | SEND_FLAGS.value_of(n));
        let (mut ops, mut kinds, mut wcs) = (0u64, 0u64, 0u64);
        for (name, op) in abi_operations() {
            let value = SEND_OPCODE
                .by_name(name)
                .unwrap_or_else(|| panic!("the ABI has no send opcode {name}"))
                .value;
            assert!(value < 16, "send opcodes fit the table");
            let code = send_op_kind::encode(&op);
            ops |= (8 | code) << (4 * value);
            kinds |= wqe_kind::encode(WqeKind::of(&op)) << (2 * code);
            wcs |= wc_opcode::encode(model_wc_opcode(&op)) << (3 * code);
        }
        assert_eq!(SEND_OPCODE.codes.len(), 8, "every ABI opcode in the table");
        WqeDecoder {
            clock: Default::default(),
            reset: Default::default(),
            wqe: Default::default(),
            send: Default::default(),
            recv: Default::default(),
            first_valid: Default::default(),
            first_beat: Default::default(),
            send_valid: Default::default(),
            send_out: Default::default(),
            recv_valid: Default::default(),
            recv_out: Default::default(),
            take: Default::default(),
            slot: Default::default(),
            wide: Default::default(),
            opcode: Default::default(),
            flags: Default::default(),
            count: Default::default(),
            inline_len: Default::default(),
            op_entry_shifted: Default::default(),
            op_entry: Default::default(),
            op_known: Default::default(),
            op: Default::default(),
            op_shift: Default::default(),
            kind_shifted: Default::default(),
            kind: Default::default(),
            wc_shifted: Default::default(),
            is_atomic: Default::default(),
            needs_response: Default::default(),
            is_inline: Default::default(),
            max_sge: Default::default(),
            max_inline: Default::default(),
            sge_ok: Default::default(),
            inline_ok: Default::default(),
            is_recv: Default::default(),
            send_area: Default::default(),
            sge_area: Default::default(),
            recv_count: Default::default(),
            recv_max_sge: Default::default(),
            sge_count: Default::default(),
            sge_lengths: Default::default(),
            length_sum: Default::default(),
            flags_unknown: Constant::new(bits(!known & 0xFF)),
            flag_fence: flag("FENCE"),
            flag_signaled: flag("SIGNALED"),
            flag_solicited: flag("SOLICITED"),
            flag_inline: flag("INLINE"),
            op_table: Constant::new(bits(ops)),
            kind_table: Constant::new(bits(kinds)),
            wc_table: Constant::new(bits(wcs)),
            wqe_kind_read: Constant::new(bits(wqe_kind::READ)),
            wqe_kind_atomic: Constant::new(bits(wqe_kind::ATOMIC)),
        }
    }
}

impl Logic for WqeDecoder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            first_valid,
            first_beat,
            send_valid,
            send_out,
            recv_valid,
            recv_out
        );

        self.is_recv.next = self.wqe.queue.val();
        self.wqe.ready.next = !self.send_valid.q.val() | self.send.ready.val();
        if self.is_recv.val() {
            self.wqe.ready.next = !self.recv_valid.q.val() | self.recv.ready.val();
        }
        self.take.next = self.wqe.valid.val() & self.wqe.ready.val();
        if self.take.val() & !self.wqe.last.val() {
            self.first_valid.d.next = true;
            self.first_beat.d.next = self.wqe.data.val();
        }
        if self.take.val() & self.wqe.last.val() {
            self.first_valid.d.next = false;
        }

        // The whole slot: a lone beat is a 64-byte slot.
        self.wide.next = self.first_valid.q.val();
        self.slot.next = bit_cast::<1024, 512>(self.wqe.data.val());
        if self.wide.val() {
            self.slot.next = bit_cast::<1024, 512>(self.first_beat.q.val())
                | (bit_cast::<1024, 512>(self.wqe.data.val()) << 512);
        }
        self.opcode.next = self.slot.val().get_bits::<8>(0);
        self.flags.next = self.slot.val().get_bits::<8>(8);
        self.count.next = self.slot.val().get_bits::<8>(16);
        self.inline_len.next = self.slot.val().get_bits::<16>(48);

        self.op_shift.next = bit_cast::<8, 8>(self.opcode.val()) << 2;
        self.op_entry_shifted.next = self.op_table.val() >> self.op_shift.val();
        self.op_entry.next = self.op_entry_shifted.val().get_bits::<4>(0);
        self.op_known.next = (self.opcode.val() < bits::<8>(16)) & self.op_entry.val().get_bit(3);
        self.op.next = self.op_entry.val().get_bits::<3>(0);
        self.kind_shifted.next = self.kind_table.val() >> (bit_cast::<16, 3>(self.op.val()) << 1);
        self.kind.next = self.kind_shifted.val().get_bits::<2>(0);
        self.wc_shifted.next = self.wc_table.val()
            >> (bit_cast::<24, 3>(self.op.val()) + (bit_cast::<24, 3>(self.op.val()) << 1));
        self.is_atomic.next = self.kind.val() == self.wqe_kind_atomic.val();
        self.needs_response.next =
            self.is_atomic.val() | (self.kind.val() == self.wqe_kind_read.val());
        self.is_inline.next = (self.flags.val() & self.flag_inline.val()).any();

        self.max_sge.next = bits::<8>(2);
        self.max_inline.next = bits::<16>(32);
        if self.wide.val() {
            self.max_sge.next = bits::<8>(6);
            self.max_inline.next = bits::<16>(96);
        }
        self.sge_ok.next = self.count.val() <= self.max_sge.val();
        if self.is_atomic.val() {
            self.sge_ok.next = self.count.val() == bits::<8>(1);
        }
        self.inline_ok.next = !self.is_inline.val()
            | ((self.count.val() == bits::<8>(0))
                & (self.inline_len.val() <= self.max_inline.val())
                & !self.needs_response.val());

        // The SGEs' lengths, each counted when the WQE has that many.
        self.send_area.next = self.slot.val() >> 256;
        self.sge_area.next = self.send_area.val().get_bits::<SGE_BITS>(0);
        if self.is_recv.val() {
            self.sge_area.next = self.slot.val().get_bits::<SGE_BITS>(128);
        }
        self.recv_count.next = self.slot.val().get_bits::<8>(64);
        self.recv_max_sge.next = bits::<8>(3);
        if self.wide.val() {
            self.recv_max_sge.next = bits::<8>(7);
        }
        self.sge_count.next = self.count.val();
        if self.is_recv.val() {
            self.sge_count.next = self.recv_count.val();
        }
        self.sge_lengths[0].next = bits::<35>(0);
        if self.sge_count.val() > bits::<8>(0) {
            self.sge_lengths[0].next = bit_cast::<35, 32>(self.sge_area.val().get_bits::<32>(64));
        }
        self.sge_lengths[1].next = bits::<35>(0);
        if self.sge_count.val() > bits::<8>(1) {
            self.sge_lengths[1].next = bit_cast::<35, 32>(self.sge_area.val().get_bits::<32>(192));
        }
        self.sge_lengths[2].next = bits::<35>(0);
        if self.sge_count.val() > bits::<8>(2) {
            self.sge_lengths[2].next = bit_cast::<35, 32>(self.sge_area.val().get_bits::<32>(320));
        }
        self.sge_lengths[3].next = bits::<35>(0);
        if self.sge_count.val() > bits::<8>(3) {
            self.sge_lengths[3].next = bit_cast::<35, 32>(self.sge_area.val().get_bits::<32>(448));
        }
        self.sge_lengths[4].next = bits::<35>(0);
        if self.sge_count.val() > bits::<8>(4) {
            self.sge_lengths[4].next = bit_cast::<35, 32>(self.sge_area.val().get_bits::<32>(576));
        }
        self.sge_lengths[5].next = bits::<35>(0);
        if self.sge_count.val() > bits::<8>(5) {
            self.sge_lengths[5].next = bit_cast::<35, 32>(self.sge_area.val().get_bits::<32>(704));
        }
        self.sge_lengths[6].next = bits::<35>(0);
        if self.sge_count.val() > bits::<8>(6) {
            self.sge_lengths[6].next = bit_cast::<35, 32>(self.sge_area.val().get_bits::<32>(832));
        }
        self.length_sum.next = self.sge_lengths[0].val()
            + self.sge_lengths[1].val()
            + self.sge_lengths[2].val()
            + self.sge_lengths[3].val()
            + self.sge_lengths[4].val()
            + self.sge_lengths[5].val()
            + self.sge_lengths[6].val();

        if self.take.val() & self.wqe.last.val() & !self.is_recv.val() {
            self.send_out.d.next.qpn = self.wqe.qpn.val();
            self.send_out.d.next.index = self.wqe.index.val();
            self.send_out.d.next.malformed = (self.slot.val().get_bits::<16>(32)
                != self.wqe.index.val())
                | (self.flags.val() & self.flags_unknown.val()).any()
                | !self.op_known.val()
                | !self.sge_ok.val()
                | !self.inline_ok.val();
            self.send_out.d.next.wr_id = self.slot.val().get_bits::<64>(64);
            self.send_out.d.next.op = self.op.val();
            self.send_out.d.next.kind = self.kind.val();
            self.send_out.d.next.cqe_opcode = self.wc_shifted.val().get_bits::<3>(0);
            self.send_out.d.next.signaled = (self.flags.val() & self.flag_signaled.val()).any();
            self.send_out.d.next.solicited = (self.flags.val() & self.flag_solicited.val()).any();
            self.send_out.d.next.fence = (self.flags.val() & self.flag_fence.val()).any();
            self.send_out.d.next.inline = self.is_inline.val();
            self.send_out.d.next.sge_count = self.count.val();
            self.send_out.d.next.length = self.length_sum.val();
            if self.is_inline.val() {
                self.send_out.d.next.length = bit_cast::<35, 16>(self.inline_len.val());
            }
            self.send_out.d.next.remote_addr = self.slot.val().get_bits::<64>(128);
            self.send_out.d.next.rkey = self.slot.val().get_bits::<32>(192);
            self.send_out.d.next.imm = self.slot.val().get_bits::<32>(224);
            self.send_out.d.next.compare_or_add = self.slot.val().get_bits::<64>(256);
            self.send_out.d.next.swap = self.slot.val().get_bits::<64>(320);
            self.send_out.d.next.sge_addr = self.slot.val().get_bits::<64>(256);
            self.send_out.d.next.sge_length = self.slot.val().get_bits::<32>(320);
            self.send_out.d.next.sge_lkey = self.slot.val().get_bits::<32>(352);
            if self.is_atomic.val() {
                self.send_out.d.next.sge_addr = self.slot.val().get_bits::<64>(384);
                self.send_out.d.next.sge_length = self.slot.val().get_bits::<32>(448);
                self.send_out.d.next.sge_lkey = self.slot.val().get_bits::<32>(480);
                self.send_out.d.next.length =
                    bit_cast::<35, 32>(self.slot.val().get_bits::<32>(448));
            }
            self.send_out.d.next.segments = self.slot.val().get_bits::<SEGMENT_BITS>(256);
        }
        if self.take.val() & self.wqe.last.val() & !self.is_recv.val() {
            self.send_valid.d.next = true;
        } else if self.send.ready.val() {
            self.send_valid.d.next = false;
        }
        if self.take.val() & self.wqe.last.val() & self.is_recv.val() {
            self.recv_out.d.next.qpn = self.wqe.qpn.val();
            self.recv_out.d.next.index = self.wqe.index.val();
            self.recv_out.d.next.malformed = (self.slot.val().get_bits::<16>(96)
                != self.wqe.index.val())
                | (self.recv_count.val() > self.recv_max_sge.val());
            self.recv_out.d.next.wr_id = self.slot.val().get_bits::<64>(0);
            self.recv_out.d.next.sge_count = self.recv_count.val();
            self.recv_out.d.next.length = self.length_sum.val();
            self.recv_out.d.next.sges = self.sge_area.val();
            self.recv_valid.d.next = true;
        } else if self.recv.ready.val() {
            self.recv_valid.d.next = false;
        }

        self.send.valid.next = self.send_valid.q.val();
        self.send.qpn.next = self.send_out.q.val().qpn;
        self.send.index.next = self.send_out.q.val().index;
        self.send.malformed.next = self.send_out.q.val().malformed;
        self.send.wr_id.next = self.send_out.q.val().wr_id;
        self.send.op.next = self.send_out.q.val().op;
        self.send.kind.next = self.send_out.q.val().kind;
        self.send.cqe_opcode.next = self.send_out.q.val().cqe_opcode;
        self.send.signaled.next = self.send_out.q.val().signaled;
        self.send.solicited.next = self.send_out.q.val().solicited;
        self.send.fence.next = self.send_out.q.val().fence;
        self.send.inline.next = self.send_out.q.val().inline;
        self.send.sge_count.next = self.send_out.q.val().sge_count;
        self.send.length.next = self.send_out.q.val().length;
        self.send.remote_addr.next = self.send_out.q.val().remote_addr;
        self.send.rkey.next = self.send_out.q.val().rkey;
        self.send.imm.next = self.send_out.q.val().imm;
        self.send.compare_or_add.next = self.send_out.q.val().compare_or_add;
        self.send.swap.next = self.send_out.q.val().swap;
        self.send.sge_addr.next = self.send_out.q.val().sge_addr;
        self.send.sge_length.next = self.send_out.q.val().sge_length;
        self.send.sge_lkey.next = self.send_out.q.val().sge_lkey;
        self.send.segments.next = self.send_out.q.val().segments;

        self.recv.valid.next = self.recv_valid.q.val();
        self.recv.qpn.next = self.recv_out.q.val().qpn;
        self.recv.index.next = self.recv_out.q.val().index;
        self.recv.malformed.next = self.recv_out.q.val().malformed;
        self.recv.wr_id.next = self.recv_out.q.val().wr_id;
        self.recv.sge_count.next = self.recv_out.q.val().sge_count;
        self.recv.length.next = self.recv_out.q.val().length;
        self.recv.sge_addr.next = self.recv_out.q.val().sges.get_bits::<64>(0);
        self.recv.sge_length.next = self.recv_out.q.val().sges.get_bits::<32>(64);
        self.recv.sge_lkey.next = self.recv_out.q.val().sges.get_bits::<32>(96);
        self.recv.sges.next = self.recv_out.q.val().sges;

        if self.reset.val() {
            self.first_valid.d.next = false;
            self.send_valid.d.next = false;
            self.recv_valid.d.next = false;
        }
    }
}
