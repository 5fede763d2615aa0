//! `ReceiveQueue`: the responder's per-QP receive queues — the receive
//! WQEs the host posted and no message has consumed yet, oldest first, in
//! an on-chip ring per QP — with what the responder does to them: ask
//! whether a QP has one (in the cycle of its check), read the head WQE,
//! complete it with a receive CQE, flush them all with WR_FLUSH_ERR when
//! the QP goes to ERR, and drop them all when the QP is reset. The RTL of
//! the model's `Qp::rq` (a `VecDeque<RecvWr>`): `Nic::post_recv` appends,
//! the responder's `take_wqe` pops the head, `completer::flush_receive_queue`
//! (from `move_to_error`) empties it.
//!
//! `2^A` QPs (index, the client maps the QPN) of `2^D` WQEs each (build
//! parameters; defaults 1024 QPs x 16 WQEs, `D` <= 7). A post to a full
//! ring is refused and says so (`res_accepted` low, counted in
//! `refused_posts`); the driver must not exceed the depth, as the model's
//! `QueueFull`.
//!
//! # One SGE per receive WQE
//!
//! A WQE is `wr_id` (64 bits) and one scatter entry: `lkey`, `va`, `len`.
//! The model takes a scatter list; the RTL keeps one entry (the RTL's
//! limit: the driver posts receive WQEs of at most one SGE, `max_sge` 1 on
//! the receive side; a zero-length receive is `len` 0).
//!
//! # The WQE of a message in progress stays at the head
//!
//! The model pops the WQE at a SEND's first packet and keeps it beside the
//! message in progress; the move to ERR puts it back in front before the
//! flush. Here the responder reads the head ([`OP_PEEK`]) for each packet
//! of a SEND and removes it only when the message ends or fails
//! ([`OP_COMPLETE`], which also emits the receive CQE), so the flush finds
//! it first without a push-back, and the responder keeps only the offset.
//! The availability answer (`query_available`: the ring is not empty) is
//! then exact for the checker: it asks only for a packet starting a
//! message, and a message start while a SEND is in progress is an opcode
//! sequence error before the RNR check (the model's `check_in_order`).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): back to idle, a CQE waiting in
//!   the output register is dropped; the rings are kept.
//! - `query_qpn` (in, `A` bits) -> `query_available` (out): combinational,
//!   from a `2^A`-bit table of non-empty flags (LUT RAM, written when a
//!   command finishes), so the request checker can sample it in the cycle
//!   it decides (the responder datapath's `rq_query`/`rq_available`
//!   contract is kept).
//! - Command (valid/ready; `cmd_ready` is high when idle): `cmd_op`
//!   ([`OP_POST`] .. [`OP_CLEAR`]), `cmd_qpn`, and per command
//!   - post: the WQE `cmd_wr_id`, `cmd_lkey`, `cmd_va`, `cmd_len`;
//!   - peek: nothing more;
//!   - complete: the receive CQE's `cmd_status` (a [`wc_status`] code:
//!     the model's `WcStatus` in declaration order), `cmd_opcode`
//!     ([`wc_opcode::RECV`] or [`wc_opcode::RECV_RDMA_WITH_IMM`]), `cmd_byte_len`, `cmd_imm_valid`,
//!     `cmd_imm`;
//!   - flush, clear: nothing more.
//! - Result: `res_valid` high for one cycle when a command is finished,
//!   with `res_op`, `res_qpn`, `res_accepted` (post: it was queued),
//!   `res_found` (peek, complete: the ring had a head WQE) and that WQE:
//!   `res_wr_id`, `res_lkey`, `res_va`, `res_len` (zero when not found).
//! - CQE stream (valid/ready): `cqe_qpn`, `cqe_wr_id`, `cqe_status`,
//!   `cqe_opcode`, `cqe_byte_len`, `cqe_imm_valid`, `cqe_imm`; per QP in
//!   the order of the WQEs. A complete emits one (with the head's
//!   `wr_id`), a flush one per WQE (WR_FLUSH_ERR, RECV, byte_len 0, no
//!   immediate: the model's `flush_recv`); complete and flush of an empty
//!   ring emit nothing.
//! - `refused_posts` (32 bits): posts refused since reset.
//!
//! The ring does not know the QP state: the model's refusal of a post in
//! RESET and its immediate WR_FLUSH_ERR for a post in ERR belong to the
//! host interface in front (a post then a flush gives the latter).
//!
//! # Latency and throughput
//!
//! One command at a time: taken in cycle `t` (pointer read), pointers in
//! `t + 1`, the head WQE in `t + 2`, the result at `t + 3` (post, clear,
//! a command on an empty ring: `t + 2`); a flush takes one cycle per WQE
//! more. Every cycle a CQE waits on `cqe_ready` is added. A SEND packet
//! costs the responder one peek (4 cycles with the hand-over), the last
//! one a complete: within the responder's one-packet-at-a-time decision
//! budget (about 11 cycles per executed packet).
//!
//! # Memory
//!
//! The ring: `2^(A+D)` records of 192 bits (`{len, lkey, va, wr_id}`) in a
//! simple dual-port synchronous-read RAM addressed `{qpn, slot}` (block
//! RAM), no initial value (only slots a post wrote are read: every read
//! is below `count`). The pointers: `2^A` words `{count, head}` in a
//! second such RAM, zero (every ring empty) at power-up. The non-empty
//! flags: `2^A` x 1 bit, asynchronous read. A read never meets a write to
//! the same address (a command reads its pointers the cycle after the
//! previous one wrote them), so no RAM needs collision logic.

use crate::codes::{wc_opcode, wc_status};
use crate::primitives::sync_ram::SyncRam;
use crate::qp::qp_slot_ram::QpSlotRam;
use rust_hdl::core::timing::TimingInfo;
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// `cmd_op` codes.
pub const OP_POST: u64 = 0;
pub const OP_PEEK: u64 = 1;
pub const OP_COMPLETE: u64 = 2;
pub const OP_FLUSH: u64 = 3;
pub const OP_CLEAR: u64 = 4;

/// Default QP index bits: 1024 QPs.
pub const DEFAULT_QPN_BITS: usize = 10;
/// Default slot bits: 16 receive WQEs per QP.
pub const DEFAULT_SLOT_BITS: usize = 4;

/// Bits of one ring record: `{len[191:160], lkey[159:128], va[127:64],
/// wr_id[63:0]}`.
pub const RECORD_BITS: usize = 192;

pub type Word = Bits<RECORD_BITS>;

/// States of the command sequencer.
mod state {
    pub const IDLE: u64 = 0;
    /// The QP's pointers arrive.
    pub const LOAD: u64 = 1;
    /// peek, complete: the head WQE arrives (complete waits for the CQE
    /// register here).
    pub const HEAD: u64 = 2;
    /// flush: one WQE per cycle from the head.
    pub const WALK: u64 = 3;
    /// Pointers and flag written back, result out.
    pub const FINISH: u64 = 4;
}

/// The receive queues (see the module doc).
/// A receive completion stream (valid/ready): the QP (`Q` bits), the
/// WQE's `wr_id`, `status` and `opcode` (the model's `WcStatus` /
/// `WcOpcode` declaration indices), `byte_len` and the immediate if any.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct ReceiveCqeStream<const Q: usize> {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<Q>>,
    pub wr_id: Signal<Out, Bits<64>>,
    pub status: Signal<Out, Bits<4>>,
    pub opcode: Signal<Out, Bits<3>>,
    pub byte_len: Signal<Out, Bits<32>>,
    pub imm_valid: Signal<Out, Bit>,
    pub imm: Signal<Out, Bits<32>>,
}

/// The driver's `post_recv` of one one-SGE WQE (valid/ready, the fields
/// sampled when taken), answered by a one-cycle `done` with `accepted`
/// low if the QP's ring was full.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct ReceivePost<const Q: usize> {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<Q>>,
    pub wr_id: Signal<In, Bits<64>>,
    pub lkey: Signal<In, Bits<32>>,
    pub va: Signal<In, Bits<64>>,
    pub len: Signal<In, Bits<32>>,
    pub done: Signal<Out, Bit>,
    pub accepted: Signal<Out, Bit>,
}

#[derive(LogicBlock)]
pub struct ReceiveQueue<const A: usize, const D: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub query_qpn: Signal<In, Bits<A>>,
    pub query_available: Signal<Out, Bit>,

    pub cmd_valid: Signal<In, Bit>,
    pub cmd_ready: Signal<Out, Bit>,
    pub cmd_op: Signal<In, Bits<3>>,
    pub cmd_qpn: Signal<In, Bits<A>>,
    pub cmd_wr_id: Signal<In, Bits<64>>,
    pub cmd_lkey: Signal<In, Bits<32>>,
    pub cmd_va: Signal<In, Bits<64>>,
    pub cmd_len: Signal<In, Bits<32>>,
    pub cmd_status: Signal<In, Bits<4>>,
    pub cmd_opcode: Signal<In, Bits<3>>,
    pub cmd_byte_len: Signal<In, Bits<32>>,
    pub cmd_imm_valid: Signal<In, Bit>,
    pub cmd_imm: Signal<In, Bits<32>>,

    pub res_valid: Signal<Out, Bit>,
    pub res_op: Signal<Out, Bits<3>>,
    pub res_qpn: Signal<Out, Bits<A>>,
    pub res_accepted: Signal<Out, Bit>,
    pub res_found: Signal<Out, Bit>,
    pub res_wr_id: Signal<Out, Bits<64>>,
    pub res_lkey: Signal<Out, Bits<32>>,
    pub res_va: Signal<Out, Bits<64>>,
    pub res_len: Signal<Out, Bits<32>>,

    pub cqe: ReceiveCqeStream<A>,

    pub refused_posts: Signal<Out, Bits<32>>,

    ring: ReceiveRingRam<A, D>,
    /// `{count[15:8], head[7:0]}` per QP, zero (every ring empty) at power-up.
    pointers: SyncRam<Bits<16>, A>,
    /// Per QP: the ring is not empty.
    nonempty: FlagTable<A>,

    state: DFF<Bits<3>>,
    // The command.
    op: DFF<Bits<3>>,
    qpn: DFF<Bits<A>>,
    post_word: DFF<Word>,
    status_in: DFF<Bits<4>>,
    opcode_in: DFF<Bits<3>>,
    byte_len_in: DFF<Bits<32>>,
    imm_valid_in: DFF<Bit>,
    imm_in: DFF<Bits<32>>,
    // The QP's ring.
    head: DFF<Bits<D>>,
    count: DFF<Bits<8>>,
    /// flush: walk position from the head.
    index: DFF<Bits<8>>,
    // The result.
    accepted: DFF<Bit>,
    found: DFF<Bit>,
    word_out: DFF<Word>,
    refused: DFF<Bits<32>>,
    // The CQE output register.
    cqe_full: DFF<Bit>,
    cqe_qpn_q: DFF<Bits<A>>,
    cqe_wr_id_q: DFF<Bits<64>>,
    cqe_status_q: DFF<Bits<4>>,
    cqe_opcode_q: DFF<Bits<3>>,
    cqe_byte_len_q: DFF<Bits<32>>,
    cqe_imm_valid_q: DFF<Bit>,
    cqe_imm_q: DFF<Bits<32>>,

    st_idle: Constant<Bits<3>>,
    st_load: Constant<Bits<3>>,
    st_head: Constant<Bits<3>>,
    st_walk: Constant<Bits<3>>,
    st_finish: Constant<Bits<3>>,
    op_post: Constant<Bits<3>>,
    op_peek: Constant<Bits<3>>,
    op_complete: Constant<Bits<3>>,
    op_flush: Constant<Bits<3>>,
    status_flush: Constant<Bits<4>>,
    opcode_recv: Constant<Bits<3>>,
    depth: Constant<Bits<8>>,

    /// The slot under the walk.
    slot: Signal<Local, Bits<D>>,
    last: Signal<Local, Bit>,
    /// The CQE register is free this cycle.
    cqe_free: Signal<Local, Bit>,
    load_cqe: Signal<Local, Bit>,
    ptr_head: Signal<Local, Bits<D>>,
    ptr_count: Signal<Local, Bits<8>>,
}

impl<const A: usize, const D: usize> Default for ReceiveQueue<A, D> {
    fn default() -> Self {
        assert!((1..=14).contains(&A), "1 to 16384 QPs");
        assert!((1..=7).contains(&D), "2 to 128 WQEs per QP");
        let c3 = |v: u64| Constant::new(bits::<3>(v));
        ReceiveQueue {
            clock: Default::default(),
            reset: Default::default(),
            query_qpn: Default::default(),
            query_available: Default::default(),
            cmd_valid: Default::default(),
            cmd_ready: Default::default(),
            cmd_op: Default::default(),
            cmd_qpn: Default::default(),
            cmd_wr_id: Default::default(),
            cmd_lkey: Default::default(),
            cmd_va: Default::default(),
            cmd_len: Default::default(),
            cmd_status: Default::default(),
            cmd_opcode: Default::default(),
            cmd_byte_len: Default::default(),
            cmd_imm_valid: Default::default(),
            cmd_imm: Default::default(),
            res_valid: Default::default(),
            res_op: Default::default(),
            res_qpn: Default::default(),
            res_accepted: Default::default(),
            res_found: Default::default(),
            res_wr_id: Default::default(),
            res_lkey: Default::default(),
            res_va: Default::default(),
            res_len: Default::default(),
            cqe: Default::default(),
            refused_posts: Default::default(),
            ring: Default::default(),
            pointers: Default::default(),
            nonempty: Default::default(),
            state: Default::default(),
            op: Default::default(),
            qpn: Default::default(),
            post_word: Default::default(),
            status_in: Default::default(),
            opcode_in: Default::default(),
            byte_len_in: Default::default(),
            imm_valid_in: Default::default(),
            imm_in: Default::default(),
            head: Default::default(),
            count: Default::default(),
            index: Default::default(),
            accepted: Default::default(),
            found: Default::default(),
            word_out: Default::default(),
            refused: Default::default(),
            cqe_full: Default::default(),
            cqe_qpn_q: Default::default(),
            cqe_wr_id_q: Default::default(),
            cqe_status_q: Default::default(),
            cqe_opcode_q: Default::default(),
            cqe_byte_len_q: Default::default(),
            cqe_imm_valid_q: Default::default(),
            cqe_imm_q: Default::default(),
            st_idle: c3(state::IDLE),
            st_load: c3(state::LOAD),
            st_head: c3(state::HEAD),
            st_walk: c3(state::WALK),
            st_finish: c3(state::FINISH),
            op_post: c3(OP_POST),
            op_peek: c3(OP_PEEK),
            op_complete: c3(OP_COMPLETE),
            op_flush: c3(OP_FLUSH),
            status_flush: Constant::new(bits::<4>(wc_status::WR_FLUSH_ERR)),
            opcode_recv: c3(wc_opcode::RECV),
            depth: Constant::new(bits::<8>(1 << D)),
            slot: Default::default(),
            last: Default::default(),
            cqe_free: Default::default(),
            load_cqe: Default::default(),
            ptr_head: Default::default(),
            ptr_count: Default::default(),
        }
    }
}

impl<const A: usize, const D: usize> Logic for ReceiveQueue<A, D> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            op,
            qpn,
            post_word,
            status_in,
            opcode_in,
            byte_len_in,
            imm_valid_in,
            imm_in,
            head,
            count,
            index,
            accepted,
            found,
            word_out,
            refused,
            cqe_full,
            cqe_qpn_q,
            cqe_wr_id_q,
            cqe_status_q,
            cqe_opcode_q,
            cqe_byte_len_q,
            cqe_imm_valid_q,
            cqe_imm_q
        );
        self.ring.clock.next = self.clock.val();
        self.pointers.clock.next = self.clock.val();
        self.nonempty.clock.next = self.clock.val();

        self.nonempty.read_address.next = self.query_qpn.val();
        self.query_available.next = self.nonempty.read_data.val();

        self.slot.next = self.head.q.val() + bit_cast::<D, 8>(self.index.q.val());
        self.last.next = (self.index.q.val() + 1) == self.count.q.val();
        self.ptr_head.next = self.pointers.read_data.val().get_bits::<D>(0);
        self.ptr_count.next = self.pointers.read_data.val().get_bits::<8>(8);

        // ---- defaults: nothing written, the walk's next slot read
        self.cmd_ready.next = false;
        self.pointers.read_address.next = self.cmd_qpn.val();
        self.pointers.write_enable.next = false;
        self.pointers.write_address.next = self.qpn.q.val();
        self.pointers.write_data.next =
            (bit_cast::<16, 8>(self.count.q.val()) << 8) | bit_cast::<16, D>(self.head.q.val());
        self.nonempty.write_enable.next = false;
        self.nonempty.write_address.next = self.qpn.q.val();
        self.nonempty.write_data.next = self.count.q.val() != 0;
        self.ring.read_qpn.next = self.qpn.q.val();
        self.ring.read_slot.next = self.slot.val() + 1;
        self.ring.write_enable.next = false;
        self.ring.write_qpn.next = self.qpn.q.val();
        self.ring.write_slot.next = self.ptr_head.val() + bit_cast::<D, 8>(self.ptr_count.val());
        self.ring.write_data.next = self.post_word.q.val();
        self.cqe_free.next = !self.cqe_full.q.val() | self.cqe.ready.val();
        self.load_cqe.next = false;
        if self.cqe.ready.val() {
            self.cqe_full.d.next = false;
        }

        if self.state.q.val() == self.st_idle.val() {
            self.cmd_ready.next = true;
            if self.cmd_valid.val() {
                self.op.d.next = self.cmd_op.val();
                self.qpn.d.next = self.cmd_qpn.val();
                self.post_word.d.next = bit_cast::<RECORD_BITS, 64>(self.cmd_wr_id.val())
                    | (bit_cast::<RECORD_BITS, 64>(self.cmd_va.val()) << 64)
                    | (bit_cast::<RECORD_BITS, 32>(self.cmd_lkey.val()) << 128)
                    | (bit_cast::<RECORD_BITS, 32>(self.cmd_len.val()) << 160);
                self.status_in.d.next = self.cmd_status.val();
                self.opcode_in.d.next = self.cmd_opcode.val();
                self.byte_len_in.d.next = self.cmd_byte_len.val();
                self.imm_valid_in.d.next = self.cmd_imm_valid.val();
                self.imm_in.d.next = self.cmd_imm.val();
                self.state.d.next = self.st_load.val();
            }
        } else if self.state.q.val() == self.st_load.val() {
            self.head.d.next = self.ptr_head.val();
            self.count.d.next = self.ptr_count.val();
            self.index.d.next = 0.into();
            self.accepted.d.next = false;
            self.found.d.next = false;
            self.word_out.d.next = 0.into();
            self.ring.read_slot.next = self.ptr_head.val();
            self.state.d.next = self.st_finish.val();
            if self.op.q.val() == self.op_post.val() {
                if self.ptr_count.val() != self.depth.val() {
                    self.ring.write_enable.next = true;
                    self.count.d.next = self.ptr_count.val() + 1;
                    self.accepted.d.next = true;
                } else {
                    self.refused.d.next = self.refused.q.val() + 1;
                }
            } else if (self.op.q.val() == self.op_peek.val())
                | (self.op.q.val() == self.op_complete.val())
            {
                if self.ptr_count.val() != 0 {
                    self.state.d.next = self.st_head.val();
                }
            } else if self.op.q.val() == self.op_flush.val() {
                if self.ptr_count.val() != 0 {
                    self.state.d.next = self.st_walk.val();
                }
            } else {
                // clear
                self.count.d.next = 0.into();
            }
        } else if self.state.q.val() == self.st_head.val() {
            // The head's read address is held while the CQE waits.
            self.ring.read_slot.next = self.head.q.val();
            if self.op.q.val() == self.op_complete.val() {
                if self.cqe_free.val() {
                    self.load_cqe.next = true;
                    self.cqe_wr_id_q.d.next = self.ring.read_data.val().get_bits::<64>(0);
                    self.cqe_status_q.d.next = self.status_in.q.val();
                    self.cqe_opcode_q.d.next = self.opcode_in.q.val();
                    self.cqe_byte_len_q.d.next = self.byte_len_in.q.val();
                    self.cqe_imm_valid_q.d.next = self.imm_valid_in.q.val();
                    self.cqe_imm_q.d.next = self.imm_in.q.val();
                    self.head.d.next = self.head.q.val() + 1;
                    self.count.d.next = self.count.q.val() - 1;
                    self.found.d.next = true;
                    self.word_out.d.next = self.ring.read_data.val();
                    self.state.d.next = self.st_finish.val();
                }
            } else {
                self.found.d.next = true;
                self.word_out.d.next = self.ring.read_data.val();
                self.state.d.next = self.st_finish.val();
            }
        } else if self.state.q.val() == self.st_walk.val() {
            // flush: every WQE left, in order.
            if self.cqe_free.val() {
                self.load_cqe.next = true;
                self.cqe_wr_id_q.d.next = self.ring.read_data.val().get_bits::<64>(0);
                self.cqe_status_q.d.next = self.status_flush.val();
                self.cqe_opcode_q.d.next = self.opcode_recv.val();
                self.cqe_byte_len_q.d.next = 0.into();
                self.cqe_imm_valid_q.d.next = false;
                self.cqe_imm_q.d.next = 0.into();
                self.index.d.next = self.index.q.val() + 1;
                if self.last.val() {
                    self.head.d.next = self.slot.val() + 1;
                    self.count.d.next = 0.into();
                    self.state.d.next = self.st_finish.val();
                }
            } else {
                self.ring.read_slot.next = self.slot.val();
            }
        } else if self.state.q.val() == self.st_finish.val() {
            self.pointers.write_enable.next = true;
            self.nonempty.write_enable.next = true;
            self.state.d.next = self.st_idle.val();
        } else {
            self.state.d.next = self.st_idle.val();
        }

        if self.load_cqe.val() {
            self.cqe_full.d.next = true;
            self.cqe_qpn_q.d.next = self.qpn.q.val();
        }
        self.cqe.valid.next = self.cqe_full.q.val();
        self.cqe.qpn.next = self.cqe_qpn_q.q.val();
        self.cqe.wr_id.next = self.cqe_wr_id_q.q.val();
        self.cqe.status.next = self.cqe_status_q.q.val();
        self.cqe.opcode.next = self.cqe_opcode_q.q.val();
        self.cqe.byte_len.next = self.cqe_byte_len_q.q.val();
        self.cqe.imm_valid.next = self.cqe_imm_valid_q.q.val();
        self.cqe.imm.next = self.cqe_imm_q.q.val();

        self.res_valid.next = self.state.q.val() == self.st_finish.val();
        self.res_op.next = self.op.q.val();
        self.res_qpn.next = self.qpn.q.val();
        self.res_accepted.next = self.accepted.q.val();
        self.res_found.next = self.found.q.val();
        self.res_wr_id.next = self.word_out.q.val().get_bits::<64>(0);
        self.res_va.next = self.word_out.q.val().get_bits::<64>(64);
        self.res_lkey.next = self.word_out.q.val().get_bits::<32>(128);
        self.res_len.next = self.word_out.q.val().get_bits::<32>(160);
        self.refused_posts.next = self.refused.q.val();

        if self.reset.val() {
            self.state.d.next = self.st_idle.val();
            self.cqe_full.d.next = false;
            self.refused.d.next = 0.into();
        }
    }
}

/// The ring RAM: `2^(A+D)` records addressed `{qpn, slot}` (see the
/// module doc).
pub type ReceiveRingRam<const A: usize, const D: usize> = QpSlotRam<Word, A, D>;

/// `2^A` one-bit flags, zero at power-up, written at the clock edge, read
/// combinationally (LUT RAM): the per-QP answer the request checker needs
/// in the cycle it decides.
#[derive(LogicBlock)]
pub struct FlagTable<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, Bit>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, Bit>,
    /// Set flags only.
    _contents: BTreeMap<u64, bool>,
}

impl<const A: usize> Default for FlagTable<A> {
    fn default() -> Self {
        FlagTable {
            clock: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            _contents: BTreeMap::new(),
        }
    }
}

impl<const A: usize> Logic for FlagTable<A> {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.write_enable.val() {
            self._contents
                .insert(self.write_address.val().to_u64(), self.write_data.val());
        }
        self.read_data.next = self
            ._contents
            .get(&self.read_address.val().to_u64())
            .copied()
            .unwrap_or(false);
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
reg mem [0:{last}];
integer i;
initial begin
    for (i = 0; i <= {last}; i = i + 1) begin
        mem[i] = 1'b0;
    end
end

always @(posedge clock) begin
    if (write_enable) begin
        mem[write_address] <= write_data;
    end
end

always @(*) begin
    read_data = mem[read_address];
end
",
            last = (1usize << A) - 1,
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "flag_table".into(),
            clock: "clock".into(),
            inputs: vec![
                "write_enable".into(),
                "write_address".into(),
                "write_data".into(),
            ],
            outputs: vec![],
        }]
    }
}

/// The default build: 1024 QPs x 16 receive WQEs.
pub type ReceiveQueueDefault = ReceiveQueue<DEFAULT_QPN_BITS, DEFAULT_SLOT_BITS>;
