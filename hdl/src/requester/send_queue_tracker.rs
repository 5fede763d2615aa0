//! `SendQueueTracker`: the ring part of the ACK engine — per QP, the send
//! WQEs posted and not yet completed, oldest first, as small records in an
//! on-chip ring (no payload, no SGL: those stay in host memory and are
//! re-read), with the completer's operations on them: the implicit-ACK
//! walk, the lookup of the WQE a response belongs to (the
//! [`crate::requester::response_checker`]'s `wqe_*` inputs), READ/atomic completion
//! marking, errors, the flush of the move to ERR, and the completions due
//! in posting order. The RTL of `rocenic_model::send_queue` (`Ring`), whose
//! functions the model's completer itself runs.
//!
//! `2^A` QPs (index, the client maps the QPN) of `2^D` slots each (build
//! parameters; defaults 1024 QPs x 16 outstanding WQEs; `D` <= 7). The host
//! must not post more WQEs than the depth (a post to a full ring is refused
//! and says so). A WQE's handle is its slot: the host keeps slot -> wr_id
//! per QP (slots are used in order, modulo the depth), and every CQE
//! carries the slot.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): back to idle, a CQE waiting in
//!   the output register is dropped. The rings are kept; a command cut
//!   short may leave its QP's ring half updated.
//! - Command (valid/ready; `cmd_ready` is high when the block is idle):
//!   `cmd_op` ([`OP_POST`] .. [`OP_CLEAR`]), `cmd_qpn`, and per command
//!   - post: the record `cmd_kind` (a [`wqe_kind`] code),
//!     `cmd_opcode` (CQE opcode, a send [`crate::codes::wc_opcode`] code),
//!     `cmd_first_psn`, `cmd_npsn` (>= 1), `cmd_len` (bytes),
//!     `cmd_signaled`, `cmd_status` (an error it is posted with, e.g. a
//!     local length error, else 0);
//!   - ack: `cmd_psn` = the ACK's end (every PSN before it is
//!     acknowledged), `cmd_next_psn` = the QP's next PSN (the una when no
//!     WQE is left incomplete);
//!   - lookup: `cmd_psn`;
//!   - complete_response: `cmd_slot`, `cmd_psn` = the new done PSN,
//!     `cmd_completes`;
//!   - fail: `cmd_psn`, `cmd_status`;
//!   - flush, clear: nothing more.
//! - Result: `res_valid` is high for one cycle when a command (with the
//!   drain after it) is finished, with `res_op`, `res_qpn` and
//!   - post: `res_accepted` (low: the ring was full), `res_slot`;
//!   - ack: `res_lost` (the ACK covers a READ/atomic whose response has not
//!     arrived: it was lost, Go-Back-N), `res_una` (done PSN of the oldest
//!     incomplete WQE after the walk, else `cmd_next_psn`);
//!   - lookup: `res_found`, `res_slot` and the record `res_wqe_*`;
//!     `res_rd_atomic_before`: the READ/atomic WQEs before it not yet
//!     complete (the requester's `max_rd_atomic` limit);
//!   - ack, complete_response, fail: `res_to_error`: the drain found a
//!     failed WQE at the head; the engine must move the QP to ERR (a
//!     flush command for this ring).
//! - CQE stream (valid/ready, backpressure): `cqe_valid`, `cqe_ready`,
//!   `cqe_qpn`, `cqe_slot`, `cqe_status` (a [`wc_status`] code: the
//!   model's `WcStatus` in declaration order), `cqe_opcode`,
//!   `cqe_byte_len`. Per QP in posting order.
//!
//! # Semantics (the model's `completer`/`send_queue`)
//!
//! - post appends (`done_psn` = first PSN, not complete);
//! - ack runs `implicit_ack` from the head: complete WQEs are skipped,
//!   SEND/WRITE WQEs ending at or before the end complete, a partly
//!   covered SEND/WRITE advances its done PSN and stops the walk, a
//!   covered READ/atomic sets `res_lost` and stops it, so does a failed
//!   WQE or one not covered;
//! - lookup returns the first WQE whose PSN range holds the PSN;
//! - complete_response sets the slot's done PSN and, with
//!   `cmd_completes`, completes it (READ: done + 1, complete on its last
//!   packet; atomic: done = end, complete);
//! - fail marks the WQE holding the PSN, unless that one is complete, else
//!   the oldest incomplete one, with the status (`fail_at`'s choice;
//!   `fail_at` itself is fail then flush);
//! - flush emits every WQE left, in order, with its own error or
//!   WR_FLUSH_ERR and byte_len 0, and empties the ring (`move_to_error`);
//! - clear empties the ring without CQEs (QP to RESET);
//! - after ack, complete_response and fail, the drain: completed WQEs
//!   leave the head in order, signaled ones with a success CQE (byte_len =
//!   length); it stops at the first incomplete WQE, raising `res_to_error`
//!   if it has failed. A post or a lookup changes no WQE and runs no drain:
//!   the completer drains after every command that can complete or fail
//!   the head and flushes the ring when it finds a failed one, so the head
//!   a post or lookup meets is incomplete and has not failed.
//!
//! # Latency and throughput
//!
//! One command at a time; a walk handles one WQE per cycle (the next
//! slot's read is issued while the current one is decided). A command
//! takes 1 cycle to be taken, 1 to read the QP's pointers, `w` walk cycles
//! (ack: up to the first WQE it stops at; lookup: up to the hit; fail and
//! flush: every WQE), for the commands that drain 1 per WQE drained plus
//! 1 for the head it stops at (the head's read is issued in the walk's
//! last cycle), and 1 to write the pointers back with the result: a post
//! 3 cycles, a lookup 3 plus its walk, an ack completing the one WQE in
//! the ring 5, worst case (an ack completing a full ring of `2^D` WQEs)
//! `2^D + 2^D + 3` = 35 cycles at `D` = 4, plus every cycle a CQE waits
//! on `cqe_ready`. At 250 MHz a minimum-size response frame lasts 1.68
//! cycles on a 100 GbE wire and a short command takes 3 to 7: a
//! line-rate stream of tiny responses outruns the tracker, so the engine
//! queues them and may coalesce ACKs of one QP (an ACK covers everything
//! an earlier one did).
//!
//! # Memory
//!
//! The ring: `2^(A+D)` records of [`RECORD_BITS`] bits (layout in
//! [`record`]) in one simple dual-port, synchronous-read RAM addressed
//! `{qpn, slot}` (block RAM: 52 RAMB36 at the defaults). The pointers: a
//! second such RAM of `2^A` 16-bit words `{count, head}` (one RAMB18).
//! The pointers are zero at power-up: every ring empty. The ring itself
//! has no initial value: only slots a post wrote are ever decided (every
//! walk stops at `count`), and leaving out a 16K-entry initialisation loop
//! keeps Yosys from unrolling it (minutes per run). Neither RAM has
//! collision logic (`no_rw_check`): a command reads its pointers a cycle
//! after the last command wrote them, the walk writes the slot it decided
//! and reads the next, and the one read that can meet a write, the head's
//! as the drain starts while the walk's last record is written, takes the
//! written record from a forwarding register instead.

use crate::codes::{wc_status, wqe_kind};
use crate::primitives::sync_ram::SyncRam;
use crate::qp::qp_slot_ram::QpSlotRam;
use rust_hdl::prelude::*;

/// `cmd_op` codes.
pub const OP_POST: u64 = 0;
pub const OP_ACK: u64 = 1;
pub const OP_LOOKUP: u64 = 2;
pub const OP_COMPLETE_RESPONSE: u64 = 3;
pub const OP_FAIL: u64 = 4;
pub const OP_FLUSH: u64 = 5;
pub const OP_CLEAR: u64 = 6;

// The walk tells the WQEs that wait for a response (READ, atomic) by
// bit 1 of their kind.
const _: () = assert!(
    wqe_kind::SEND & 2 == 0
        && wqe_kind::WRITE & 2 == 0
        && wqe_kind::READ & 2 != 0
        && wqe_kind::ATOMIC & 2 != 0
);
// A record's error field holds 0 (SUCCESS) for no error.
const _: () = assert!(wc_status::SUCCESS == 0);

/// Default QP index bits: 1024 QPs.
pub const DEFAULT_QPN_BITS: usize = 10;
/// Default slot bits: 16 outstanding WQEs per QP.
pub const DEFAULT_SLOT_BITS: usize = 4;

/// Bits of one ring record.
pub const RECORD_BITS: usize = 115;

/// The record layout, least significant bit first: `(offset, width)`.
pub mod record {
    pub const KIND: (usize, usize) = (0, 2);
    pub const OPCODE: (usize, usize) = (2, 3);
    pub const SIGNALED: (usize, usize) = (5, 1);
    pub const COMPLETE: (usize, usize) = (6, 1);
    /// 0: not failed; else the completion status it fails with.
    pub const ERROR: (usize, usize) = (7, 4);
    pub const FIRST_PSN: (usize, usize) = (11, 24);
    pub const NPSN: (usize, usize) = (35, 24);
    pub const DONE_PSN: (usize, usize) = (59, 24);
    pub const LEN: (usize, usize) = (83, 32);
}

pub type Word = Bits<RECORD_BITS>;

/// States of the command sequencer.
mod state {
    pub const IDLE: u64 = 0;
    /// The QP's pointers arrive.
    pub const LOAD: u64 = 1;
    /// One WQE per cycle from the head (ack, lookup, fail, flush).
    pub const WALK: u64 = 2;
    /// complete_response: the slot's record arrives.
    pub const MARK: u64 = 3;
    /// fail: no incomplete WQE held the PSN; the oldest incomplete one
    /// gets the error.
    pub const FAIL_OLDEST: u64 = 4;
    /// One completed WQE per cycle leaves the head.
    pub const DRAIN: u64 = 5;
    /// Pointers written back, result out.
    pub const FINISH: u64 = 6;
}

/// The send-queue tracker (see the module doc).
#[derive(LogicBlock)]
pub struct SendQueueTracker<const A: usize, const D: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub cmd_valid: Signal<In, Bit>,
    pub cmd_ready: Signal<Out, Bit>,
    pub cmd_op: Signal<In, Bits<3>>,
    pub cmd_qpn: Signal<In, Bits<A>>,
    pub cmd_psn: Signal<In, Bits<24>>,
    pub cmd_next_psn: Signal<In, Bits<24>>,
    pub cmd_slot: Signal<In, Bits<D>>,
    pub cmd_completes: Signal<In, Bit>,
    pub cmd_status: Signal<In, Bits<4>>,
    pub cmd_kind: Signal<In, Bits<2>>,
    pub cmd_opcode: Signal<In, Bits<3>>,
    pub cmd_first_psn: Signal<In, Bits<24>>,
    pub cmd_npsn: Signal<In, Bits<24>>,
    pub cmd_len: Signal<In, Bits<32>>,
    pub cmd_signaled: Signal<In, Bit>,

    pub res_valid: Signal<Out, Bit>,
    pub res_op: Signal<Out, Bits<3>>,
    pub res_qpn: Signal<Out, Bits<A>>,
    pub res_accepted: Signal<Out, Bit>,
    pub res_found: Signal<Out, Bit>,
    pub res_rd_atomic_before: Signal<Out, Bits<8>>,
    pub res_slot: Signal<Out, Bits<D>>,
    pub res_lost: Signal<Out, Bit>,
    pub res_una: Signal<Out, Bits<24>>,
    pub res_to_error: Signal<Out, Bit>,
    pub res_wqe_kind: Signal<Out, Bits<2>>,
    pub res_wqe_opcode: Signal<Out, Bits<3>>,
    pub res_wqe_signaled: Signal<Out, Bit>,
    pub res_wqe_complete: Signal<Out, Bit>,
    pub res_wqe_error: Signal<Out, Bits<4>>,
    pub res_wqe_first_psn: Signal<Out, Bits<24>>,
    pub res_wqe_npsn: Signal<Out, Bits<24>>,
    pub res_wqe_done_psn: Signal<Out, Bits<24>>,
    pub res_wqe_len: Signal<Out, Bits<32>>,

    pub cqe_valid: Signal<Out, Bit>,
    pub cqe_ready: Signal<In, Bit>,
    pub cqe_qpn: Signal<Out, Bits<A>>,
    pub cqe_slot: Signal<Out, Bits<D>>,
    pub cqe_status: Signal<Out, Bits<4>>,
    pub cqe_opcode: Signal<Out, Bits<3>>,
    pub cqe_byte_len: Signal<Out, Bits<32>>,

    ring: RingRam<A, D>,
    /// `{count[15:8], head[7:0]}` per QP, zero (every ring empty) at power-up.
    pointers: SyncRam<Bits<16>, A>,

    state: DFF<Bits<3>>,
    // The command.
    op: DFF<Bits<3>>,
    qpn: DFF<Bits<A>>,
    psn: DFF<Bits<24>>,
    next_psn: DFF<Bits<24>>,
    slot_in: DFF<Bits<D>>,
    completes: DFF<Bit>,
    status_in: DFF<Bits<4>>,
    post_word: DFF<Word>,
    // The QP's ring.
    head: DFF<Bits<D>>,
    count: DFF<Bits<8>>,
    /// Walk position from the head.
    index: DFF<Bits<8>>,
    // fail: a WQE holding the PSN was seen; the oldest incomplete one.
    fail_seen: DFF<Bit>,
    oldest_found: DFF<Bit>,
    oldest_slot: DFF<Bits<D>>,
    oldest_word: DFF<Word>,
    // The result.
    accepted: DFF<Bit>,
    found: DFF<Bit>,
    rd_atomic_before: DFF<Bits<8>>,
    slot_out: DFF<Bits<D>>,
    word_out: DFF<Word>,
    lost: DFF<Bit>,
    una: DFF<Bits<24>>,
    to_error: DFF<Bit>,
    // The CQE output register.
    cqe_full: DFF<Bit>,
    cqe_qpn_q: DFF<Bits<A>>,
    cqe_slot_q: DFF<Bits<D>>,
    cqe_status_q: DFF<Bits<4>>,
    cqe_opcode_q: DFF<Bits<3>>,
    cqe_byte_len_q: DFF<Bits<32>>,
    /// Last cycle's ring write was to the slot it read: its record is
    /// the read's data.
    fwd_hit: DFF<Bit>,
    fwd_word: DFF<Word>,

    st_idle: Constant<Bits<3>>,
    st_load: Constant<Bits<3>>,
    st_walk: Constant<Bits<3>>,
    st_mark: Constant<Bits<3>>,
    st_fail_oldest: Constant<Bits<3>>,
    st_drain: Constant<Bits<3>>,
    st_finish: Constant<Bits<3>>,
    op_post: Constant<Bits<3>>,
    op_ack: Constant<Bits<3>>,
    op_lookup: Constant<Bits<3>>,
    op_complete_response: Constant<Bits<3>>,
    op_fail: Constant<Bits<3>>,
    op_clear: Constant<Bits<3>>,
    status_flush: Constant<Bits<4>>,
    depth: Constant<Bits<8>>,
    /// Every field but complete, error and done PSN (the ones written back).
    keep_mask: Constant<Word>,

    /// The record being decided: the RAM's read data, or in `FailOldest`
    /// the oldest incomplete one kept from the walk.
    word: Signal<Local, Word>,
    kind: Signal<Local, Bits<2>>,
    opcode: Signal<Local, Bits<3>>,
    signaled: Signal<Local, Bit>,
    complete: Signal<Local, Bit>,
    error: Signal<Local, Bits<4>>,
    first_psn: Signal<Local, Bits<24>>,
    npsn: Signal<Local, Bits<24>>,
    done_psn: Signal<Local, Bits<24>>,
    len: Signal<Local, Bits<32>>,
    end_psn: Signal<Local, Bits<24>>,
    /// `psn - first_psn` modulo 2^24.
    into_wqe: Signal<Local, Bits<24>>,
    contains: Signal<Local, Bit>,
    /// `psn - end_psn`: bit 23 clear when the ACK covers the whole WQE.
    past_end: Signal<Local, Bits<24>>,
    /// `psn - done_psn`: the ACK acknowledges more of the WQE.
    past_done: Signal<Local, Bits<24>>,
    slot: Signal<Local, Bits<D>>,
    last: Signal<Local, Bit>,
    /// The CQE register is free this cycle.
    cqe_free: Signal<Local, Bit>,
    load_cqe: Signal<Local, Bit>,
    /// The command's last record is decided: the drain reads the head.
    drain_next: Signal<Local, Bit>,
    new_slot: Signal<Local, Bits<D>>,
    ptr_head: Signal<Local, Bits<D>>,
    ptr_count: Signal<Local, Bits<8>>,
    // The record written back: `word`'s fields with these changed.
    w_complete: Signal<Local, Bit>,
    w_error: Signal<Local, Bits<4>>,
    w_done_psn: Signal<Local, Bits<24>>,
}

impl<const A: usize, const D: usize> Default for SendQueueTracker<A, D> {
    fn default() -> Self {
        assert!((1..=14).contains(&A), "1 to 16384 QPs");
        assert!((1..=7).contains(&D), "2 to 128 slots per QP");
        let c3 = |v: u64| Constant::new(bits::<3>(v));
        SendQueueTracker {
            clock: Default::default(),
            reset: Default::default(),
            cmd_valid: Default::default(),
            cmd_ready: Default::default(),
            cmd_op: Default::default(),
            cmd_qpn: Default::default(),
            cmd_psn: Default::default(),
            cmd_next_psn: Default::default(),
            cmd_slot: Default::default(),
            cmd_completes: Default::default(),
            cmd_status: Default::default(),
            cmd_kind: Default::default(),
            cmd_opcode: Default::default(),
            cmd_first_psn: Default::default(),
            cmd_npsn: Default::default(),
            cmd_len: Default::default(),
            cmd_signaled: Default::default(),
            res_valid: Default::default(),
            res_op: Default::default(),
            res_qpn: Default::default(),
            res_accepted: Default::default(),
            res_found: Default::default(),
            res_rd_atomic_before: Default::default(),
            res_slot: Default::default(),
            res_lost: Default::default(),
            res_una: Default::default(),
            res_to_error: Default::default(),
            res_wqe_kind: Default::default(),
            res_wqe_opcode: Default::default(),
            res_wqe_signaled: Default::default(),
            res_wqe_complete: Default::default(),
            res_wqe_error: Default::default(),
            res_wqe_first_psn: Default::default(),
            res_wqe_npsn: Default::default(),
            res_wqe_done_psn: Default::default(),
            res_wqe_len: Default::default(),
            cqe_valid: Default::default(),
            cqe_ready: Default::default(),
            cqe_qpn: Default::default(),
            cqe_slot: Default::default(),
            cqe_status: Default::default(),
            cqe_opcode: Default::default(),
            cqe_byte_len: Default::default(),
            ring: Default::default(),
            pointers: Default::default(),
            state: Default::default(),
            op: Default::default(),
            qpn: Default::default(),
            psn: Default::default(),
            next_psn: Default::default(),
            slot_in: Default::default(),
            completes: Default::default(),
            status_in: Default::default(),
            post_word: Default::default(),
            head: Default::default(),
            count: Default::default(),
            index: Default::default(),
            fail_seen: Default::default(),
            oldest_found: Default::default(),
            oldest_slot: Default::default(),
            oldest_word: Default::default(),
            accepted: Default::default(),
            found: Default::default(),
            rd_atomic_before: Default::default(),
            slot_out: Default::default(),
            word_out: Default::default(),
            lost: Default::default(),
            una: Default::default(),
            to_error: Default::default(),
            cqe_full: Default::default(),
            cqe_qpn_q: Default::default(),
            cqe_slot_q: Default::default(),
            cqe_status_q: Default::default(),
            cqe_opcode_q: Default::default(),
            cqe_byte_len_q: Default::default(),
            fwd_hit: Default::default(),
            fwd_word: Default::default(),
            st_idle: c3(state::IDLE),
            st_load: c3(state::LOAD),
            st_walk: c3(state::WALK),
            st_mark: c3(state::MARK),
            st_fail_oldest: c3(state::FAIL_OLDEST),
            st_drain: c3(state::DRAIN),
            st_finish: c3(state::FINISH),
            op_post: c3(OP_POST),
            op_ack: c3(OP_ACK),
            op_lookup: c3(OP_LOOKUP),
            op_complete_response: c3(OP_COMPLETE_RESPONSE),
            op_fail: c3(OP_FAIL),
            op_clear: c3(OP_CLEAR),
            status_flush: Constant::new(bits::<4>(wc_status::WR_FLUSH_ERR)),
            depth: Constant::new(bits::<8>(1 << D)),
            keep_mask: Constant::new(
                !((bits::<RECORD_BITS>(1) << 6)
                    | (bits::<RECORD_BITS>(0xF) << 7)
                    | (bits::<RECORD_BITS>(0xFF_FFFF) << 59)),
            ),
            word: Default::default(),
            kind: Default::default(),
            opcode: Default::default(),
            signaled: Default::default(),
            complete: Default::default(),
            error: Default::default(),
            first_psn: Default::default(),
            npsn: Default::default(),
            done_psn: Default::default(),
            len: Default::default(),
            end_psn: Default::default(),
            into_wqe: Default::default(),
            contains: Default::default(),
            past_end: Default::default(),
            past_done: Default::default(),
            slot: Default::default(),
            last: Default::default(),
            cqe_free: Default::default(),
            load_cqe: Default::default(),
            drain_next: Default::default(),
            new_slot: Default::default(),
            ptr_head: Default::default(),
            ptr_count: Default::default(),
            w_complete: Default::default(),
            w_error: Default::default(),
            w_done_psn: Default::default(),
        }
    }
}

impl<const A: usize, const D: usize> Logic for SendQueueTracker<A, D> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            op,
            qpn,
            psn,
            next_psn,
            slot_in,
            completes,
            status_in,
            post_word,
            head,
            count,
            index,
            fail_seen,
            oldest_found,
            oldest_slot,
            oldest_word,
            accepted,
            found,
            rd_atomic_before,
            slot_out,
            word_out,
            lost,
            una,
            to_error,
            cqe_full,
            cqe_qpn_q,
            cqe_slot_q,
            cqe_status_q,
            cqe_opcode_q,
            cqe_byte_len_q,
            fwd_hit,
            fwd_word
        );
        self.ring.clock.next = self.clock.val();
        self.pointers.clock.next = self.clock.val();

        // ---- the record under decision and its relations to `psn`
        self.word.next = self.ring.read_data.val();
        if self.fwd_hit.q.val() {
            self.word.next = self.fwd_word.q.val();
        }
        if self.state.q.val() == self.st_fail_oldest.val() {
            self.word.next = self.oldest_word.q.val();
        }
        self.kind.next = self.word.val().get_bits::<2>(0);
        self.opcode.next = self.word.val().get_bits::<3>(2);
        self.signaled.next = self.word.val().get_bit(5);
        self.complete.next = self.word.val().get_bit(6);
        self.error.next = self.word.val().get_bits::<4>(7);
        self.first_psn.next = self.word.val().get_bits::<24>(11);
        self.npsn.next = self.word.val().get_bits::<24>(35);
        self.done_psn.next = self.word.val().get_bits::<24>(59);
        self.len.next = self.word.val().get_bits::<32>(83);
        self.end_psn.next = self.first_psn.val() + self.npsn.val();
        self.into_wqe.next = self.psn.q.val() - self.first_psn.val();
        self.contains.next =
            !self.into_wqe.val().get_bit(23) & (self.into_wqe.val() < self.npsn.val());
        self.past_end.next = self.psn.q.val() - self.end_psn.val();
        self.past_done.next = self.psn.q.val() - self.done_psn.val();
        self.slot.next = self.head.q.val() + bit_cast::<D, 8>(self.index.q.val());
        self.last.next = (self.index.q.val() + 1) == self.count.q.val();
        self.ptr_head.next = self.pointers.read_data.val().get_bits::<D>(0);
        self.ptr_count.next = self.pointers.read_data.val().get_bits::<8>(8);
        self.new_slot.next = self.ptr_head.val() + bit_cast::<D, 8>(self.ptr_count.val());

        // ---- defaults: nothing written, the walk's next slot read
        self.cmd_ready.next = false;
        self.pointers.read_address.next = self.cmd_qpn.val();
        self.pointers.write_enable.next = false;
        self.pointers.write_address.next = self.qpn.q.val();
        self.pointers.write_data.next =
            (bit_cast::<16, 8>(self.count.q.val()) << 8) | bit_cast::<16, D>(self.head.q.val());
        self.ring.read_qpn.next = self.qpn.q.val();
        self.ring.read_slot.next = self.slot.val() + 1;
        self.ring.write_enable.next = false;
        self.ring.write_qpn.next = self.qpn.q.val();
        self.ring.write_slot.next = self.slot.val();
        self.w_complete.next = self.complete.val();
        self.w_error.next = self.error.val();
        self.w_done_psn.next = self.done_psn.val();
        self.cqe_free.next = !self.cqe_full.q.val() | self.cqe_ready.val();
        self.load_cqe.next = false;
        self.drain_next.next = false;
        if self.cqe_ready.val() {
            self.cqe_full.d.next = false;
        }

        if self.state.q.val() == self.st_idle.val() {
            self.cmd_ready.next = true;
            if self.cmd_valid.val() {
                self.op.d.next = self.cmd_op.val();
                self.qpn.d.next = self.cmd_qpn.val();
                self.psn.d.next = self.cmd_psn.val();
                self.next_psn.d.next = self.cmd_next_psn.val();
                self.slot_in.d.next = self.cmd_slot.val();
                self.completes.d.next = self.cmd_completes.val();
                self.status_in.d.next = self.cmd_status.val();
                self.post_word.d.next = bit_cast::<RECORD_BITS, 2>(self.cmd_kind.val())
                    | (bit_cast::<RECORD_BITS, 3>(self.cmd_opcode.val()) << 2)
                    | (bit_cast::<RECORD_BITS, 1>(self.cmd_signaled.val().into()) << 5)
                    | (bit_cast::<RECORD_BITS, 4>(self.cmd_status.val()) << 7)
                    | (bit_cast::<RECORD_BITS, 24>(self.cmd_first_psn.val()) << 11)
                    | (bit_cast::<RECORD_BITS, 24>(self.cmd_npsn.val()) << 35)
                    | (bit_cast::<RECORD_BITS, 24>(self.cmd_first_psn.val()) << 59)
                    | (bit_cast::<RECORD_BITS, 32>(self.cmd_len.val()) << 83);
                self.state.d.next = self.st_load.val();
            }
        } else if self.state.q.val() == self.st_load.val() {
            self.head.d.next = self.ptr_head.val();
            self.count.d.next = self.ptr_count.val();
            self.index.d.next = 0.into();
            self.fail_seen.d.next = false;
            self.oldest_found.d.next = false;
            self.accepted.d.next = false;
            self.found.d.next = false;
            self.rd_atomic_before.d.next = 0.into();
            self.slot_out.d.next = 0.into();
            self.word_out.d.next = 0.into();
            self.lost.d.next = false;
            self.una.d.next = self.next_psn.q.val();
            self.to_error.d.next = false;
            self.ring.read_slot.next = self.ptr_head.val();
            // A post, a clear and a command on an empty ring end here.
            self.state.d.next = self.st_finish.val();
            if self.op.q.val() == self.op_post.val() {
                if self.ptr_count.val() != self.depth.val() {
                    self.ring.write_enable.next = true;
                    self.ring.write_slot.next = self.new_slot.val();
                    self.count.d.next = self.ptr_count.val() + 1;
                    self.accepted.d.next = true;
                    self.slot_out.d.next = self.new_slot.val();
                }
            } else if self.op.q.val() == self.op_complete_response.val() {
                self.ring.read_slot.next = self.slot_in.q.val();
                self.state.d.next = self.st_mark.val();
            } else if self.op.q.val() == self.op_clear.val() {
                self.head.d.next = self.new_slot.val();
                self.count.d.next = 0.into();
            } else if self.ptr_count.val() != 0 {
                self.state.d.next = self.st_walk.val();
            }
        } else if self.state.q.val() == self.st_walk.val() {
            self.index.d.next = self.index.q.val() + 1;
            if self.op.q.val() == self.op_ack.val() {
                if self.complete.val() {
                    if self.last.val() {
                        self.drain_next.next = true;
                    }
                } else if self.error.val() != 0 {
                    self.una.d.next = self.done_psn.val();
                    self.drain_next.next = true;
                } else if !self.past_end.val().get_bit(23) {
                    if self.kind.val().get_bit(1) {
                        // A READ/atomic the ACK covers: its response was lost.
                        self.lost.d.next = true;
                        self.una.d.next = self.done_psn.val();
                        self.drain_next.next = true;
                    } else {
                        self.ring.write_enable.next = true;
                        self.w_complete.next = true;
                        self.w_done_psn.next = self.end_psn.val();
                        if self.last.val() {
                            self.drain_next.next = true;
                        }
                    }
                } else {
                    self.una.d.next = self.done_psn.val();
                    if !self.kind.val().get_bit(1)
                        & !self.past_done.val().get_bit(23)
                        & self.past_done.val().any()
                    {
                        self.ring.write_enable.next = true;
                        self.w_done_psn.next = self.psn.q.val();
                        self.una.d.next = self.psn.q.val();
                    }
                    self.drain_next.next = true;
                }
            } else if self.op.q.val() == self.op_lookup.val() {
                if self.contains.val() {
                    self.found.d.next = true;
                    self.slot_out.d.next = self.slot.val();
                    self.word_out.d.next = self.word.val();
                    self.state.d.next = self.st_finish.val();
                } else {
                    if self.kind.val().get_bit(1) & !self.complete.val() {
                        self.rd_atomic_before.d.next = self.rd_atomic_before.q.val() + 1;
                    }
                    if self.last.val() {
                        self.state.d.next = self.st_finish.val();
                    }
                }
            } else if self.op.q.val() == self.op_fail.val() {
                if self.contains.val() & !self.fail_seen.q.val() & !self.complete.val() {
                    self.ring.write_enable.next = true;
                    self.w_error.next = self.status_in.q.val();
                    self.drain_next.next = true;
                } else {
                    if self.contains.val() {
                        self.fail_seen.d.next = true;
                    }
                    if !self.complete.val() & !self.oldest_found.q.val() {
                        self.oldest_found.d.next = true;
                        self.oldest_slot.d.next = self.slot.val();
                        self.oldest_word.d.next = self.word.val();
                    }
                    if self.last.val() {
                        self.state.d.next = self.st_fail_oldest.val();
                    }
                }
            } else {
                // flush: every WQE left, in order.
                if self.cqe_free.val() {
                    self.load_cqe.next = true;
                    self.cqe_slot_q.d.next = self.slot.val();
                    self.cqe_status_q.d.next = self.status_flush.val();
                    if self.error.val() != 0 {
                        self.cqe_status_q.d.next = self.error.val();
                    }
                    self.cqe_opcode_q.d.next = self.opcode.val();
                    self.cqe_byte_len_q.d.next = 0.into();
                    if self.last.val() {
                        self.head.d.next = self.slot.val() + 1;
                        self.count.d.next = 0.into();
                        self.state.d.next = self.st_finish.val();
                    }
                } else {
                    self.index.d.next = self.index.q.val();
                    self.ring.read_slot.next = self.slot.val();
                }
            }
        } else if self.state.q.val() == self.st_mark.val() {
            self.ring.write_enable.next = true;
            self.ring.write_slot.next = self.slot_in.q.val();
            self.w_done_psn.next = self.psn.q.val();
            self.w_complete.next = self.complete.val() | self.completes.q.val();
            self.drain_next.next = true;
        } else if self.state.q.val() == self.st_fail_oldest.val() {
            self.ring.write_enable.next = self.oldest_found.q.val();
            self.ring.write_slot.next = self.oldest_slot.q.val();
            self.w_error.next = self.status_in.q.val();
            self.drain_next.next = true;
        } else if self.state.q.val() == self.st_drain.val() {
            self.ring.read_slot.next = self.head.q.val();
            if !self.complete.val() {
                self.to_error.d.next = self.error.val() != 0;
                self.state.d.next = self.st_finish.val();
            } else if self.cqe_free.val() | !self.signaled.val() {
                if self.signaled.val() {
                    self.load_cqe.next = true;
                    self.cqe_slot_q.d.next = self.head.q.val();
                    self.cqe_status_q.d.next = 0.into();
                    self.cqe_opcode_q.d.next = self.opcode.val();
                    self.cqe_byte_len_q.d.next = self.len.val();
                }
                self.head.d.next = self.head.q.val() + 1;
                self.count.d.next = self.count.q.val() - 1;
                self.ring.read_slot.next = self.head.q.val() + 1;
                if self.count.q.val() == 1 {
                    self.state.d.next = self.st_finish.val();
                }
            }
        } else if self.state.q.val() == self.st_finish.val() {
            self.pointers.write_enable.next = true;
            self.state.d.next = self.st_idle.val();
        } else {
            self.state.d.next = self.st_idle.val();
        }

        // The drain starts at the head in the cycle the command's last
        // record is decided; the head's read may meet that record's write,
        // which `fwd_*` forwards.
        if self.drain_next.val() {
            self.ring.read_slot.next = self.head.q.val();
            self.state.d.next = self.st_drain.val();
            if self.count.q.val() == 0 {
                self.state.d.next = self.st_finish.val();
            }
        }

        // After the state logic, which sets the `w_*` fields (a
        // combinational read before the write would see last cycle's).
        self.ring.write_data.next = (self.word.val() & self.keep_mask.val())
            | (bit_cast::<RECORD_BITS, 1>(self.w_complete.val().into()) << 6)
            | (bit_cast::<RECORD_BITS, 4>(self.w_error.val()) << 7)
            | (bit_cast::<RECORD_BITS, 24>(self.w_done_psn.val()) << 59);
        if self.state.q.val() == self.st_load.val() {
            self.ring.write_data.next = self.post_word.q.val();
        }

        self.fwd_hit.d.next = self.ring.write_enable.val()
            & (self.ring.write_slot.val() == self.ring.read_slot.val());
        self.fwd_word.d.next = self.ring.write_data.val();

        if self.load_cqe.val() {
            self.cqe_full.d.next = true;
            self.cqe_qpn_q.d.next = self.qpn.q.val();
        }
        self.cqe_valid.next = self.cqe_full.q.val();
        self.cqe_qpn.next = self.cqe_qpn_q.q.val();
        self.cqe_slot.next = self.cqe_slot_q.q.val();
        self.cqe_status.next = self.cqe_status_q.q.val();
        self.cqe_opcode.next = self.cqe_opcode_q.q.val();
        self.cqe_byte_len.next = self.cqe_byte_len_q.q.val();

        self.res_valid.next = self.state.q.val() == self.st_finish.val();
        self.res_op.next = self.op.q.val();
        self.res_qpn.next = self.qpn.q.val();
        self.res_accepted.next = self.accepted.q.val();
        self.res_found.next = self.found.q.val();
        self.res_rd_atomic_before.next = self.rd_atomic_before.q.val();
        self.res_slot.next = self.slot_out.q.val();
        self.res_lost.next = self.lost.q.val();
        self.res_una.next = self.una.q.val();
        self.res_to_error.next = self.to_error.q.val();
        self.res_wqe_kind.next = self.word_out.q.val().get_bits::<2>(0);
        self.res_wqe_opcode.next = self.word_out.q.val().get_bits::<3>(2);
        self.res_wqe_signaled.next = self.word_out.q.val().get_bit(5);
        self.res_wqe_complete.next = self.word_out.q.val().get_bit(6);
        self.res_wqe_error.next = self.word_out.q.val().get_bits::<4>(7);
        self.res_wqe_first_psn.next = self.word_out.q.val().get_bits::<24>(11);
        self.res_wqe_npsn.next = self.word_out.q.val().get_bits::<24>(35);
        self.res_wqe_done_psn.next = self.word_out.q.val().get_bits::<24>(59);
        self.res_wqe_len.next = self.word_out.q.val().get_bits::<32>(83);

        if self.reset.val() {
            self.state.d.next = self.st_idle.val();
            self.cqe_full.d.next = false;
        }
    }
}

/// The ring RAM: `2^(A+D)` records addressed `{qpn, slot}` (see the
/// module doc); the tracker never reads the address it writes in the same
/// cycle.
pub type RingRam<const A: usize, const D: usize> = QpSlotRam<Word, A, D>;

/// The default build: 1024 QPs x 16 slots.
pub type SendQueueTrackerDefault = SendQueueTracker<DEFAULT_QPN_BITS, DEFAULT_SLOT_BITS>;
