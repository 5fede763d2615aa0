//! `ResponseQueue`: the responder's per-QP queue of what it owes the
//! requester (ACK, NAK, RNR NAK, atomic ACK, READ response), and the
//! transmit side's source of response packet descriptors. The contract is
//! `rocenic_model::response_queue::ResponseQueue`, which the model's
//! responder uses as its own queue.
//!
//! `2^A` QPs (`A` = 10 by default) of `2^D` items each (`D` = 3). Items
//! live in synchronous-read block RAM; READ data does not: the transmit
//! side fetches each packet's payload by DMA from the descriptor's VA and
//! length (the model reads it at execution; READ responses re-read memory
//! in the RTL, as a retried READ does in the model).
//!
//! # Ports
//!
//! - `clock`. No reset: the per-QP records are zero after configuration,
//!   i.e. every queue empty and not live.
//! - `command` (in, valid/ready; an offered command must stay offered,
//!   unchanged, until taken: the block reads the QP's record before it
//!   decides whether a push fits), `op` with its fields:
//!   - [`OP_CONFIGURE`] `qpn`, `mtu_code` ([`mtu::shift_code`]: 0 = 256
//!     .. 4 = 4096): the QP enters RTR: its queue is emptied, it is live, with this path MTU.
//!   - [`OP_PUSH_ACK`] `psn`, `msn`: an ACK (syndrome 0x1F), merged into
//!     the tail item when that is an ACK (cumulative), else appended.
//!   - [`OP_PUSH_NAK`] `syndrome`, `psn`, `msn`: a NAK or RNR NAK.
//!   - [`OP_PUSH_ATOMIC_ACK`] `psn`, `value` (original data), `msn`.
//!   - [`OP_PUSH_READ`] `psn`, `value` (VA), `rkey`, `len`, `msn`.
//!   - [`OP_DROP_READS`] `psn` (first), `len` (PSN count, at most 2^23):
//!     voids the queued READs starting in that range (a duplicate READ
//!     restarts them). The responder queues the restarted READ or a NAK
//!     right after, so no ACK merges across a void.
//!   - [`OP_FLUSH`]: the QP went to ERR: it is no longer live; its
//!     non-NAK items are dropped when they reach the head (lazily: the
//!     model removes them at once; no push follows before the next
//!     `OP_CONFIGURE`, so what leaves is the same, but the slots stay taken
//!     until drained).
//! - `packet` (out, valid/ready): the next response packet of some QP:
//!   `qpn`, `opcode`, `psn`, `aeth` + `syndrome` + `msn` (24 bits),
//!   `atomic` + `orig`, `read` + `va` (READ VA + offset) + `rkey` +
//!   `offset` + `len` (payload bytes of this packet). An item is popped
//!   when its last packet is accepted.
//! - `full_waits` (out): pushes that found their QP's queue full and
//!   waited (each counted once, however long it waited).
//! - `command_wseq` (in, [`WSEQ_BITS`]), sampled with the command: the
//!   write sequence number a push depends on (the responder's count of
//!   DMA write requests issued once the packet's own are counted); kept
//!   with the item (a merging ACK replaces it with its own, later one)
//!   and presented as `packet.wseq`, so the transmit side can hold the
//!   packet until those writes were accepted
//!   ([`crate::responder::response_write_gate`]). Nothing here compares it.
//!
//! # Capacity: back-pressure
//!
//! The model's queue is unbounded; this one holds `2^D` items per QP. A
//! push that needs a slot (anything but an ACK merging into a tail ACK)
//! while its QP's queue is full is **not taken** (`ready` low) until that
//! QP's head item has left (its last packet accepted, or a voided READ
//! dropped at the head): the block answers the attempt by dequeuing first
//! (the QP is in the ready FIFO, so some packet leaves) and retries after
//! each dequeue. Nothing is dropped, whatever `max_dest_rd_atomic` is.
//! Without waits `2 * max_dest_rd_atomic + 2` items suffice (at most
//! `max_dest_rd_atomic` READ / atomic items, the ACKs merged between them,
//! one NAK), i.e. 8 items for `max_dest_rd_atomic <= 3`
//! ([`max_dest_rd_atomic`]); but a voided READ keeps its slot until it
//! reaches the head, and the model's scenarios at `max_dest_rd_atomic` 16
//! reach 28 items under loss (`sim/tests/blocks/response_queue.rs`), so no
//! practical depth makes waits impossible.
//!
//! The default is `D` = 5, 32 items per QP: enough for the usual
//! `max_dest_rd_atomic` 16 with waits only when voided READs pile up. With
//! fewer, a QP's READs beyond the queue's depth wait in the responder's
//! input, and so do its duplicate READs after a loss: they reach the queue
//! only after the answers they should void were sent, and every other
//! QP's requests wait behind them (`docs/transport-core.md` has the
//! figures, `docs/status.md` the block RAM).
//!
//! # Order
//!
//! QPs with items wait in a ready FIFO (each QP at most once: `2^A`
//! entries never overflow). A dequeue takes the QP at its head, presents
//! one packet of the QP's head item and, if items remain, puts the QP back
//! at the tail: QPs take turns packet by packet (a long READ does not hold
//! up the others' ACKs). Within a QP the order is the model's. Items that
//! may not leave (not live and not a NAK, or voided) are dropped at the
//! head without a packet.
//!
//! # Latency and throughput
//!
//! One state machine serializes everything, so nothing needs forwarding and
//! no hazard exists between a push and the tail or head of the same QP: a
//! command takes 2 cycles, latched in the first and taken (`ready`) in the
//! second once the QP's record says it fits (`OP_DROP_READS` 2 + one per
//! queued item of the QP; a push that does not fit costs its 2 cycles and
//! the next dequeue goes first); a packet takes 4 cycles from the start of
//! its dequeue to `packet.valid`, then waits for `ready` (commands wait
//! too: a presented descriptor never changes), 5 cycles per packet at full
//! rate (50 Mpps at 250 MHz). When both wait, commands and dequeues
//! alternate.
//!
//! # Memory
//!
//! Item fields in `2^S`-deep RAMs (flags: kind and void, syndrome, PSN,
//! MSN, value, R_Key, length, write sequence number: 195 bits), per-QP records in `2^A`-deep
//! RAMs (head, count, flags: tail is an ACK, in the ready FIFO, live,
//! MTU; packets of the head item sent), the ready FIFO in a `2^A x A`
//! RAM. All simple dual port (one write, one synchronous read). The
//! per-QP records and the FIFO are zero after configuration; the item RAMs
//! have no power-up value, since only slots below a QP's count, which a
//! push wrote, are ever read (and a clearing loop over 8K items costs Yosys
//! two minutes per run). A read that coincides with a write to its address
//! is never used, so collision logic is left out (`no_rw_check`).

use crate::codes::mtu;
use rust_hdl::core::timing::TimingInfo;
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// Default QP address bits: 1024 QPs.
pub const DEFAULT_QPN_BITS: usize = 10;
/// Default item address bits per QP: 32 items (see "Capacity").
pub const DEFAULT_DEPTH_BITS: usize = 5;
/// Width of the write sequence numbers (`command_wseq`, `packet.wseq`).
pub const WSEQ_BITS: usize = 8;

/// The largest `max_dest_rd_atomic` a queue of `2^depth_bits` items per
/// QP serves without a push ever waiting, voids aside ("Capacity":
/// `2 * max_dest_rd_atomic + 2` items): 3 for the default 8. Larger
/// values are served too, with waits.
pub const fn max_dest_rd_atomic(depth_bits: usize) -> u8 {
    (((1usize << depth_bits) - 2) / 2) as u8
}

pub const OP_CONFIGURE: u64 = 0;
pub const OP_PUSH_ACK: u64 = 1;
pub const OP_PUSH_NAK: u64 = 2;
pub const OP_PUSH_ATOMIC_ACK: u64 = 3;
pub const OP_PUSH_READ: u64 = 4;
pub const OP_DROP_READS: u64 = 5;
pub const OP_FLUSH: u64 = 6;

/// Item kinds (flags bits 1:0; bit 2 is `void`).
pub const KIND_ACK: u64 = 0;
pub const KIND_ATOMIC_ACK: u64 = 1;
pub const KIND_READ: u64 = 2;

/// The command port, as the queue takes it.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "QueueCommandSource"]
pub struct QueueCommand<const A: usize> {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub op: Signal<In, Bits<3>>,
    pub qpn: Signal<In, Bits<A>>,
    pub syndrome: Signal<In, Bits<8>>,
    pub psn: Signal<In, Bits<24>>,
    pub msn: Signal<In, Bits<24>>,
    /// Atomic original value or READ VA.
    pub value: Signal<In, Bits<64>>,
    pub rkey: Signal<In, Bits<32>>,
    /// READ length, or the PSN count of `OP_DROP_READS`.
    pub len: Signal<In, Bits<32>>,
    pub mtu_code: Signal<In, Bits<3>>,
}

/// The command port as a client drives it (the responder's queue
/// commands), joined to [`QueueCommand`].
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "QueueCommand"]
pub struct QueueCommandSource<const A: usize> {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub op: Signal<Out, Bits<3>>,
    pub qpn: Signal<Out, Bits<A>>,
    pub syndrome: Signal<Out, Bits<8>>,
    pub psn: Signal<Out, Bits<24>>,
    pub msn: Signal<Out, Bits<24>>,
    /// Atomic original value or READ VA.
    pub value: Signal<Out, Bits<64>>,
    pub rkey: Signal<Out, Bits<32>>,
    /// READ length, or the PSN count of `OP_DROP_READS`.
    pub len: Signal<Out, Bits<32>>,
    pub mtu_code: Signal<Out, Bits<3>>,
}

#[derive(Clone, Debug, Default, LogicInterface)]
pub struct ResponsePacket<const A: usize> {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<A>>,
    pub opcode: Signal<Out, Bits<8>>,
    pub psn: Signal<Out, Bits<24>>,
    pub aeth: Signal<Out, Bit>,
    pub syndrome: Signal<Out, Bits<8>>,
    pub msn: Signal<Out, Bits<24>>,
    pub atomic: Signal<Out, Bit>,
    pub orig: Signal<Out, Bits<64>>,
    pub read: Signal<Out, Bit>,
    pub va: Signal<Out, Bits<64>>,
    pub rkey: Signal<Out, Bits<32>>,
    pub offset: Signal<Out, Bits<32>>,
    pub len: Signal<Out, Bits<16>>,
    /// The item's `command_wseq`.
    pub wseq: Signal<Out, Bits<WSEQ_BITS>>,
}

/// The response queue (see the module doc).
#[derive(LogicBlock)]
pub struct ResponseQueue<const A: usize, const D: usize> {
    pub clock: Signal<In, Clock>,
    pub command: QueueCommand<A>,
    pub packet: ResponsePacket<A>,
    pub full_waits: Signal<Out, Bits<32>>,
    pub command_wseq: Signal<In, Bits<WSEQ_BITS>>,
    // Item RAMs.
    item_flags: FieldRam<A, 3>,
    item_syndrome: FieldRam<A, 8>,
    item_psn: FieldRam<A, 24>,
    item_msn: FieldRam<A, 24>,
    item_value: FieldRam<A, 64>,
    item_rkey: FieldRam<A, 32>,
    item_len: FieldRam<A, 32>,
    item_wseq: FieldRam<A, WSEQ_BITS>,
    // Per-QP records: flags bit 0 tail is an ACK, 1 in the ready FIFO,
    // 2 live, 5:3 MTU code.
    qp_head: FieldRam<A, 8>,
    qp_count: FieldRam<A, 8>,
    qp_flags: FieldRam<A, 8>,
    qp_sent: FieldRam<A, 24>,
    ready_fifo: FieldRam<A, A>,
    // Build parameters as constants.
    slot_mask: Constant<Bits<8>>,
    capacity: Constant<Bits<8>>,
    mtu_base: Constant<Bits<40>>,
    // States.
    st_idle: Constant<Bits<3>>,
    st_dq_fifo: Constant<Bits<3>>,
    st_dq_record: Constant<Bits<3>>,
    st_dq_item: Constant<Bits<3>>,
    st_out: Constant<Bits<3>>,
    st_command: Constant<Bits<3>>,
    st_walk: Constant<Bits<3>>,
    state: DFF<Bits<3>>,
    prefer_dequeue: DFF<Bit>,
    fifo_read: DFF<Bits<16>>,
    fifo_write: DFF<Bits<16>>,
    full_wait_count: DFF<Bits<32>>,
    /// The offered push already found its queue full (counted once).
    waiting: DFF<Bit>,
    walk_index: DFF<Bits<8>>,
    // The command being executed.
    c_op: DFF<Bits<3>>,
    c_qpn: DFF<Bits<A>>,
    c_syndrome: DFF<Bits<8>>,
    c_psn: DFF<Bits<24>>,
    c_msn: DFF<Bits<24>>,
    c_value: DFF<Bits<64>>,
    c_rkey: DFF<Bits<32>>,
    c_len: DFF<Bits<32>>,
    c_mtu: DFF<Bits<3>>,
    c_wseq: DFF<Bits<WSEQ_BITS>>,
    // The QP being dequeued: its record and head item.
    d_qpn: DFF<Bits<A>>,
    r_head: DFF<Bits<8>>,
    r_count: DFF<Bits<8>>,
    r_flags: DFF<Bits<8>>,
    r_sent: DFF<Bits<24>>,
    i_flags: DFF<Bits<3>>,
    i_syndrome: DFF<Bits<8>>,
    i_psn: DFF<Bits<24>>,
    i_msn: DFF<Bits<24>>,
    i_value: DFF<Bits<64>>,
    i_rkey: DFF<Bits<32>>,
    i_len: DFF<Bits<32>>,
    i_wseq: DFF<Bits<WSEQ_BITS>>,
    // Combinational.
    cmd_record_count: Signal<Local, Bits<8>>,
    cmd_record_head: Signal<Local, Bits<8>>,
    cmd_record_flags: Signal<Local, Bits<8>>,
    cmd_tail_is_ack: Signal<Local, Bit>,
    cmd_merges: Signal<Local, Bit>,
    cmd_is_push: Signal<Local, Bit>,
    cmd_full: Signal<Local, Bit>,
    cmd_blocked: Signal<Local, Bit>,
    cmd_take: Signal<Local, Bit>,
    cmd_slot: Signal<Local, Bits<8>>,
    walk_slot: Signal<Local, Bits<8>>,
    walk_next_slot: Signal<Local, Bits<8>>,
    walk_distance: Signal<Local, Bits<24>>,
    walk_hit: Signal<Local, Bit>,
    walk_last: Signal<Local, Bit>,
    item_read_qpn: Signal<Local, Bits<A>>,
    item_read_slot: Signal<Local, Bits<8>>,
    item_write_qpn: Signal<Local, Bits<A>>,
    item_write_slot: Signal<Local, Bits<8>>,
    item_write_all: Signal<Local, Bit>,
    item_write_flags: Signal<Local, Bit>,
    head_is_nak: Signal<Local, Bit>,
    head_dropped: Signal<Local, Bit>,
    is_read: Signal<Local, Bit>,
    mtu_shift: Signal<Local, Bits<8>>,
    mtu_bytes: Signal<Local, Bits<40>>,
    read_offset: Signal<Local, Bits<40>>,
    read_rest: Signal<Local, Bits<40>>,
    first_packet: Signal<Local, Bit>,
    last_packet: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    advance: Signal<Local, Bit>,
    popped_count: Signal<Local, Bits<8>>,
    requeue: Signal<Local, Bit>,
}

impl<const A: usize, const D: usize> Default for ResponseQueue<A, D> {
    fn default() -> Self {
        assert!((1..=16).contains(&A), "2 to 65536 QPs");
        assert!((1..=7).contains(&D), "2 to 128 items per QP");
        let d = D;
        ResponseQueue {
            clock: Default::default(),
            command: Default::default(),
            packet: Default::default(),
            full_waits: Default::default(),
            command_wseq: Default::default(),
            item_flags: FieldRam::uninitialised(d),
            item_syndrome: FieldRam::uninitialised(d),
            item_psn: FieldRam::uninitialised(d),
            item_msn: FieldRam::uninitialised(d),
            item_value: FieldRam::uninitialised(d),
            item_rkey: FieldRam::uninitialised(d),
            item_len: FieldRam::uninitialised(d),
            item_wseq: FieldRam::uninitialised(d),
            qp_head: FieldRam::new(0),
            qp_count: FieldRam::new(0),
            qp_flags: FieldRam::new(0),
            qp_sent: FieldRam::new(0),
            ready_fifo: FieldRam::new(0),
            slot_mask: Constant::new(bits((1 << d) - 1)),
            capacity: Constant::new(bits(1 << d)),
            mtu_base: Constant::new(bits(256)),
            st_idle: Constant::new(bits(0)),
            st_dq_fifo: Constant::new(bits(1)),
            st_dq_record: Constant::new(bits(2)),
            st_dq_item: Constant::new(bits(3)),
            st_out: Constant::new(bits(4)),
            st_command: Constant::new(bits(5)),
            st_walk: Constant::new(bits(6)),
            state: Default::default(),
            prefer_dequeue: Default::default(),
            fifo_read: Default::default(),
            fifo_write: Default::default(),
            full_wait_count: Default::default(),
            waiting: Default::default(),
            walk_index: Default::default(),
            c_op: Default::default(),
            c_qpn: Default::default(),
            c_syndrome: Default::default(),
            c_psn: Default::default(),
            c_msn: Default::default(),
            c_value: Default::default(),
            c_rkey: Default::default(),
            c_len: Default::default(),
            c_mtu: Default::default(),
            c_wseq: Default::default(),
            d_qpn: Default::default(),
            r_head: Default::default(),
            r_count: Default::default(),
            r_flags: Default::default(),
            r_sent: Default::default(),
            i_flags: Default::default(),
            i_syndrome: Default::default(),
            i_psn: Default::default(),
            i_msn: Default::default(),
            i_value: Default::default(),
            i_rkey: Default::default(),
            i_len: Default::default(),
            i_wseq: Default::default(),
            cmd_record_count: Default::default(),
            cmd_record_head: Default::default(),
            cmd_record_flags: Default::default(),
            cmd_tail_is_ack: Default::default(),
            cmd_merges: Default::default(),
            cmd_is_push: Default::default(),
            cmd_full: Default::default(),
            cmd_blocked: Default::default(),
            cmd_take: Default::default(),
            cmd_slot: Default::default(),
            walk_slot: Default::default(),
            walk_next_slot: Default::default(),
            walk_distance: Default::default(),
            walk_hit: Default::default(),
            walk_last: Default::default(),
            item_read_qpn: Default::default(),
            item_read_slot: Default::default(),
            item_write_qpn: Default::default(),
            item_write_slot: Default::default(),
            item_write_all: Default::default(),
            item_write_flags: Default::default(),
            head_is_nak: Default::default(),
            head_dropped: Default::default(),
            is_read: Default::default(),
            mtu_shift: Default::default(),
            mtu_bytes: Default::default(),
            read_offset: Default::default(),
            read_rest: Default::default(),
            first_packet: Default::default(),
            last_packet: Default::default(),
            pop: Default::default(),
            advance: Default::default(),
            popped_count: Default::default(),
            requeue: Default::default(),
        }
    }
}

impl<const A: usize, const D: usize> Logic for ResponseQueue<A, D> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            prefer_dequeue,
            fifo_read,
            fifo_write,
            full_wait_count,
            waiting,
            walk_index,
            c_op,
            c_qpn,
            c_syndrome,
            c_psn,
            c_msn,
            c_value,
            c_rkey,
            c_len,
            c_mtu,
            c_wseq,
            d_qpn,
            r_head,
            r_count,
            r_flags,
            r_sent,
            i_flags,
            i_syndrome,
            i_psn,
            i_msn,
            i_value,
            i_rkey,
            i_len,
            i_wseq
        );
        clock!(
            self,
            clock,
            item_flags,
            item_syndrome,
            item_psn,
            item_msn,
            item_value,
            item_rkey,
            item_len,
            item_wseq,
            qp_head,
            qp_count,
            qp_flags,
            qp_sent,
            ready_fifo
        );

        // The QP record as read for the command (valid in st_command).
        self.cmd_record_head.next = self.qp_head.read_data.val();
        self.cmd_record_count.next = self.qp_count.read_data.val();
        self.cmd_record_flags.next = self.qp_flags.read_data.val();
        self.cmd_tail_is_ack.next =
            self.cmd_record_flags.val().get_bit(0) & self.cmd_record_count.val().any();
        self.cmd_is_push.next = (self.c_op.q.val() == 1)
            | (self.c_op.q.val() == 2)
            | (self.c_op.q.val() == 3)
            | (self.c_op.q.val() == 4);
        self.cmd_merges.next = (self.c_op.q.val() == 1) & self.cmd_tail_is_ack.val();
        self.cmd_full.next = self.cmd_record_count.val() == self.capacity.val();
        // A push that needs a slot in a full queue is not taken: it stays
        // offered until the QP's head item has left.
        self.cmd_blocked.next =
            self.cmd_is_push.val() & !self.cmd_merges.val() & self.cmd_full.val();
        self.cmd_take.next = (self.state.q.val() == self.st_command.val())
            & self.command.valid.val()
            & !self.cmd_blocked.val();
        self.cmd_slot.next =
            (self.cmd_record_head.val() + self.cmd_record_count.val()) & self.slot_mask.val();
        if self.cmd_merges.val() {
            self.cmd_slot.next = (self.cmd_record_head.val() + self.cmd_record_count.val() - 1)
                & self.slot_mask.val();
        }

        // The walk of OP_DROP_READS: item `walk_index` is on the RAM outputs.
        self.walk_next_slot.next =
            (self.r_head.q.val() + self.walk_index.q.val() + 1) & self.slot_mask.val();
        self.walk_slot.next =
            (self.r_head.q.val() + self.walk_index.q.val()) & self.slot_mask.val();
        self.walk_distance.next = self.item_psn.read_data.val() - self.c_psn.q.val();
        self.walk_hit.next = (self.item_flags.read_data.val().get_bits::<2>(0) == 2)
            & (bit_cast::<32, 24>(self.walk_distance.val()) < self.c_len.q.val());
        self.walk_last.next = (self.walk_index.q.val() + 1) == self.r_count.q.val();

        // The head item being dequeued (valid from st_dq_item on).
        self.is_read.next = self.i_flags.q.val().get_bits::<2>(0) == 2;
        self.head_is_nak.next = (self.i_flags.q.val().get_bits::<2>(0) == 0)
            & (self.i_syndrome.q.val().get_bits::<2>(5) != 0);
        self.head_dropped.next = self.i_flags.q.val().get_bit(2)
            | (!self.r_flags.q.val().get_bit(2) & !self.head_is_nak.val());
        self.mtu_shift.next = bit_cast::<8, 3>(self.r_flags.q.val().get_bits::<3>(3)) + 8;
        self.mtu_bytes.next = self.mtu_base.val() << self.r_flags.q.val().get_bits::<3>(3);
        self.read_offset.next = bit_cast::<40, 24>(self.r_sent.q.val()) << self.mtu_shift.val();
        self.read_rest.next = bit_cast::<40, 32>(self.i_len.q.val()) - self.read_offset.val();
        self.first_packet.next = !self.r_sent.q.val().any();
        self.last_packet.next = !self.is_read.val()
            | ((self.read_offset.val() + self.mtu_bytes.val())
                >= bit_cast::<40, 32>(self.i_len.q.val()));

        // The descriptor, presented in st_out.
        self.packet.valid.next =
            (self.state.q.val() == self.st_out.val()) & !self.head_dropped.val();
        self.packet.qpn.next = self.d_qpn.q.val();
        self.packet.psn.next = self.i_psn.q.val();
        self.packet.aeth.next = true;
        self.packet.syndrome.next = 0x1F.into();
        self.packet.msn.next = self.i_msn.q.val();
        self.packet.atomic.next = false;
        self.packet.orig.next = 0.into();
        self.packet.read.next = false;
        self.packet.va.next = 0.into();
        self.packet.rkey.next = 0.into();
        self.packet.offset.next = 0.into();
        self.packet.len.next = 0.into();
        self.packet.wseq.next = self.i_wseq.q.val();
        self.packet.opcode.next = 0x11.into();
        if self.i_flags.q.val().get_bits::<2>(0) == 0 {
            self.packet.syndrome.next = self.i_syndrome.q.val();
        }
        if self.i_flags.q.val().get_bits::<2>(0) == 1 {
            self.packet.opcode.next = 0x12.into();
            self.packet.atomic.next = true;
            self.packet.orig.next = self.i_value.q.val();
        }
        if self.is_read.val() {
            self.packet.psn.next = self.i_psn.q.val() + self.r_sent.q.val();
            self.packet.read.next = true;
            self.packet.va.next = self.i_value.q.val() + bit_cast::<64, 40>(self.read_offset.val());
            self.packet.rkey.next = self.i_rkey.q.val();
            self.packet.offset.next = bit_cast::<32, 40>(self.read_offset.val());
            self.packet.len.next = bit_cast::<16, 40>(self.read_rest.val());
            if self.read_rest.val() > self.mtu_bytes.val() {
                self.packet.len.next = bit_cast::<16, 40>(self.mtu_bytes.val());
            }
            if self.first_packet.val() & self.last_packet.val() {
                self.packet.opcode.next = 0x10.into();
            } else if self.first_packet.val() {
                self.packet.opcode.next = 0x0D.into();
            } else if self.last_packet.val() {
                self.packet.opcode.next = 0x0F.into();
            } else {
                self.packet.opcode.next = 0x0E.into();
                self.packet.aeth.next = false;
            }
        }
        self.full_waits.next = self.full_wait_count.q.val();

        // In st_out the head item is popped (dropped, or its last packet
        // accepted) or advances one packet (accepted, not the last).
        self.pop.next = false;
        self.advance.next = false;
        if self.state.q.val() == self.st_out.val() {
            if self.head_dropped.val() {
                self.pop.next = true;
            } else if self.packet.ready.val() {
                self.pop.next = self.last_packet.val();
                self.advance.next = !self.last_packet.val();
            }
        }
        self.popped_count.next = self.r_count.q.val() - 1;
        self.requeue.next = self.advance.val() | (self.pop.val() & self.popped_count.val().any());

        // RAM defaults: no writes; reads aimed by the state below.
        self.item_read_qpn.next = self.d_qpn.q.val();
        self.item_read_slot.next = self.r_head.q.val();
        self.item_write_qpn.next = self.c_qpn.q.val();
        self.item_write_slot.next = self.cmd_slot.val();
        self.item_write_all.next = false;
        self.item_write_flags.next = false;
        self.qp_head.read_qpn.next = self.command.qpn.val();
        self.qp_count.read_qpn.next = self.command.qpn.val();
        self.qp_flags.read_qpn.next = self.command.qpn.val();
        self.qp_sent.read_qpn.next = self.command.qpn.val();
        self.qp_head.write_enable.next = false;
        self.qp_count.write_enable.next = false;
        self.qp_flags.write_enable.next = false;
        self.qp_sent.write_enable.next = false;
        self.qp_head.write_qpn.next = self.d_qpn.q.val();
        self.qp_count.write_qpn.next = self.d_qpn.q.val();
        self.qp_flags.write_qpn.next = self.d_qpn.q.val();
        self.qp_sent.write_qpn.next = self.d_qpn.q.val();
        self.qp_head.write_data.next = self.r_head.q.val();
        self.qp_count.write_data.next = self.r_count.q.val();
        self.qp_flags.write_data.next = self.r_flags.q.val();
        self.qp_sent.write_data.next = self.r_sent.q.val();
        self.ready_fifo.read_qpn.next = bit_cast::<A, 16>(self.fifo_read.q.val());
        self.ready_fifo.write_qpn.next = bit_cast::<A, 16>(self.fifo_write.q.val());
        self.ready_fifo.write_data.next = self.d_qpn.q.val();
        self.ready_fifo.write_enable.next = false;
        self.command.ready.next = false;
        self.qp_head.read_slot.next = 0.into();
        self.qp_count.read_slot.next = 0.into();
        self.qp_flags.read_slot.next = 0.into();
        self.qp_sent.read_slot.next = 0.into();
        self.ready_fifo.read_slot.next = 0.into();
        self.qp_head.write_slot.next = 0.into();
        self.qp_count.write_slot.next = 0.into();
        self.qp_flags.write_slot.next = 0.into();
        self.qp_sent.write_slot.next = 0.into();
        self.ready_fifo.write_slot.next = 0.into();

        if self.state.q.val() == self.st_idle.val() {
            if (self.fifo_read.q.val() != self.fifo_write.q.val())
                & (!self.command.valid.val() | self.prefer_dequeue.q.val())
            {
                self.prefer_dequeue.d.next = false;
                self.fifo_read.d.next = self.fifo_read.q.val() + 1;
                self.state.d.next = self.st_dq_fifo.val();
            } else if self.command.valid.val() {
                // Latched to read the QP's record; taken (`ready`) in
                // st_command if it fits.
                self.c_op.d.next = self.command.op.val();
                self.c_qpn.d.next = self.command.qpn.val();
                self.c_syndrome.d.next = self.command.syndrome.val();
                self.c_psn.d.next = self.command.psn.val();
                self.c_msn.d.next = self.command.msn.val();
                self.c_value.d.next = self.command.value.val();
                self.c_rkey.d.next = self.command.rkey.val();
                self.c_len.d.next = self.command.len.val();
                self.c_mtu.d.next = self.command.mtu_code.val();
                self.c_wseq.d.next = self.command_wseq.val();
                self.state.d.next = self.st_command.val();
            }
        }

        if self.state.q.val() == self.st_dq_fifo.val() {
            self.d_qpn.d.next = self.ready_fifo.read_data.val();
            self.qp_head.read_qpn.next = self.ready_fifo.read_data.val();
            self.qp_count.read_qpn.next = self.ready_fifo.read_data.val();
            self.qp_flags.read_qpn.next = self.ready_fifo.read_data.val();
            self.qp_sent.read_qpn.next = self.ready_fifo.read_data.val();
            self.state.d.next = self.st_dq_record.val();
        }

        if self.state.q.val() == self.st_dq_record.val() {
            self.r_head.d.next = self.qp_head.read_data.val();
            self.r_count.d.next = self.qp_count.read_data.val();
            self.r_flags.d.next = self.qp_flags.read_data.val();
            self.r_sent.d.next = self.qp_sent.read_data.val();
            self.item_read_slot.next = self.qp_head.read_data.val();
            if self.qp_count.read_data.val().any() {
                self.state.d.next = self.st_dq_item.val();
            } else {
                // Emptied by OP_CONFIGURE while waiting: leave the FIFO.
                self.qp_flags.write_enable.next = true;
                self.qp_flags.write_data.next = self.qp_flags.read_data.val() & 0xFD;
                self.state.d.next = self.st_idle.val();
            }
        }

        if self.state.q.val() == self.st_dq_item.val() {
            self.i_flags.d.next = self.item_flags.read_data.val();
            self.i_syndrome.d.next = self.item_syndrome.read_data.val();
            self.i_psn.d.next = self.item_psn.read_data.val();
            self.i_msn.d.next = self.item_msn.read_data.val();
            self.i_value.d.next = self.item_value.read_data.val();
            self.i_rkey.d.next = self.item_rkey.read_data.val();
            self.i_len.d.next = self.item_len.read_data.val();
            self.i_wseq.d.next = self.item_wseq.read_data.val();
            self.state.d.next = self.st_out.val();
        }

        // A dropped item (`head_dropped`) spends its st_out cycle without
        // `packet.valid`.
        if (self.state.q.val() == self.st_out.val()) & (self.pop.val() | self.advance.val()) {
            self.state.d.next = self.st_idle.val();
            self.qp_head.write_enable.next = true;
            self.qp_count.write_enable.next = true;
            self.qp_flags.write_enable.next = true;
            self.qp_sent.write_enable.next = true;
            self.qp_sent.write_data.next = self.r_sent.q.val() + 1;
            if self.pop.val() {
                self.qp_head.write_data.next = (self.r_head.q.val() + 1) & self.slot_mask.val();
                self.qp_count.write_data.next = self.popped_count.val();
                self.qp_sent.write_data.next = 0.into();
                if !self.popped_count.val().any() {
                    // Empty: no tail ACK, out of the FIFO.
                    self.qp_flags.write_data.next = self.r_flags.q.val() & 0xFC;
                }
            }
            if self.requeue.val() {
                self.ready_fifo.write_enable.next = true;
                self.fifo_write.d.next = self.fifo_write.q.val() + 1;
            }
        }

        if self.state.q.val() == self.st_command.val() {
            self.state.d.next = self.st_idle.val();
            self.prefer_dequeue.d.next = true;
            // A blocked push: dequeues go first until one frees a slot
            // (the QP is in the ready FIFO: its queue is full).
            self.waiting.d.next = self.command.valid.val() & self.cmd_blocked.val();
            if self.command.valid.val() & self.cmd_blocked.val() & !self.waiting.q.val() {
                self.full_wait_count.d.next = self.full_wait_count.q.val() + 1;
            }
            if self.cmd_take.val() {
                self.command.ready.next = true;
                self.qp_head.write_qpn.next = self.c_qpn.q.val();
                self.qp_count.write_qpn.next = self.c_qpn.q.val();
                self.qp_flags.write_qpn.next = self.c_qpn.q.val();
                self.qp_sent.write_qpn.next = self.c_qpn.q.val();
                self.qp_head.write_data.next = self.cmd_record_head.val();
                self.qp_count.write_data.next = self.cmd_record_count.val();
                self.qp_flags.write_data.next = self.cmd_record_flags.val();
                self.qp_sent.write_data.next = self.qp_sent.read_data.val();
                self.ready_fifo.write_data.next = self.c_qpn.q.val();
                if self.c_op.q.val() == 0 {
                    // Configure: empty, live, MTU; FIFO membership kept.
                    self.qp_count.write_enable.next = true;
                    self.qp_flags.write_enable.next = true;
                    self.qp_sent.write_enable.next = true;
                    self.qp_count.write_data.next = 0.into();
                    self.qp_sent.write_data.next = 0.into();
                    self.qp_flags.write_data.next = (self.cmd_record_flags.val() & 0x02)
                        | 0x04
                        | (bit_cast::<8, 3>(self.c_mtu.q.val()) << 3);
                }
                if self.c_op.q.val() == 6 {
                    self.qp_flags.write_enable.next = true;
                    self.qp_flags.write_data.next = self.cmd_record_flags.val() & 0xFB;
                }
                if self.cmd_is_push.val() {
                    if self.cmd_merges.val() {
                        self.item_write_all.next = true;
                    } else {
                        self.item_write_all.next = true;
                        self.qp_count.write_enable.next = true;
                        self.qp_flags.write_enable.next = true;
                        self.qp_count.write_data.next = self.cmd_record_count.val() + 1;
                        self.qp_flags.write_data.next = (self.cmd_record_flags.val() & 0xFC) | 0x02;
                        if self.c_op.q.val() == 1 {
                            self.qp_flags.write_data.next = self.cmd_record_flags.val() | 0x03;
                        }
                        if !self.cmd_record_flags.val().get_bit(1) {
                            self.ready_fifo.write_enable.next = true;
                            self.fifo_write.d.next = self.fifo_write.q.val() + 1;
                        }
                    }
                }
                if (self.c_op.q.val() == 5) & self.cmd_record_count.val().any() {
                    self.r_head.d.next = self.cmd_record_head.val();
                    self.r_count.d.next = self.cmd_record_count.val();
                    self.walk_index.d.next = 0.into();
                    self.item_read_qpn.next = self.c_qpn.q.val();
                    self.item_read_slot.next = self.cmd_record_head.val();
                    self.state.d.next = self.st_walk.val();
                }
            }
        }

        if self.state.q.val() == self.st_walk.val() {
            self.item_write_qpn.next = self.c_qpn.q.val();
            self.item_write_slot.next = self.walk_slot.val();
            self.item_write_flags.next = self.walk_hit.val();
            self.item_read_qpn.next = self.c_qpn.q.val();
            self.item_read_slot.next = self.walk_next_slot.val();
            self.walk_index.d.next = self.walk_index.q.val() + 1;
            if self.walk_last.val() {
                self.state.d.next = self.st_idle.val();
            }
        }

        // Item RAM ports.
        self.item_flags.read_qpn.next = self.item_read_qpn.val();
        self.item_syndrome.read_qpn.next = self.item_read_qpn.val();
        self.item_psn.read_qpn.next = self.item_read_qpn.val();
        self.item_msn.read_qpn.next = self.item_read_qpn.val();
        self.item_value.read_qpn.next = self.item_read_qpn.val();
        self.item_rkey.read_qpn.next = self.item_read_qpn.val();
        self.item_len.read_qpn.next = self.item_read_qpn.val();
        self.item_wseq.read_qpn.next = self.item_read_qpn.val();
        self.item_flags.read_slot.next = self.item_read_slot.val();
        self.item_syndrome.read_slot.next = self.item_read_slot.val();
        self.item_psn.read_slot.next = self.item_read_slot.val();
        self.item_msn.read_slot.next = self.item_read_slot.val();
        self.item_value.read_slot.next = self.item_read_slot.val();
        self.item_rkey.read_slot.next = self.item_read_slot.val();
        self.item_len.read_slot.next = self.item_read_slot.val();
        self.item_wseq.read_slot.next = self.item_read_slot.val();
        self.item_flags.write_qpn.next = self.item_write_qpn.val();
        self.item_syndrome.write_qpn.next = self.item_write_qpn.val();
        self.item_psn.write_qpn.next = self.item_write_qpn.val();
        self.item_msn.write_qpn.next = self.item_write_qpn.val();
        self.item_value.write_qpn.next = self.item_write_qpn.val();
        self.item_rkey.write_qpn.next = self.item_write_qpn.val();
        self.item_len.write_qpn.next = self.item_write_qpn.val();
        self.item_wseq.write_qpn.next = self.item_write_qpn.val();
        self.item_flags.write_slot.next = self.item_write_slot.val();
        self.item_syndrome.write_slot.next = self.item_write_slot.val();
        self.item_psn.write_slot.next = self.item_write_slot.val();
        self.item_msn.write_slot.next = self.item_write_slot.val();
        self.item_value.write_slot.next = self.item_write_slot.val();
        self.item_rkey.write_slot.next = self.item_write_slot.val();
        self.item_len.write_slot.next = self.item_write_slot.val();
        self.item_wseq.write_slot.next = self.item_write_slot.val();
        self.item_flags.write_enable.next = self.item_write_all.val() | self.item_write_flags.val();
        self.item_syndrome.write_enable.next = self.item_write_all.val();
        self.item_psn.write_enable.next = self.item_write_all.val();
        self.item_msn.write_enable.next = self.item_write_all.val();
        self.item_value.write_enable.next = self.item_write_all.val();
        self.item_rkey.write_enable.next = self.item_write_all.val();
        self.item_len.write_enable.next = self.item_write_all.val();
        self.item_wseq.write_enable.next = self.item_write_all.val();
        // kind = op - 2 for NAK..READ (ACK/NAK 0, atomic 1, READ 2).
        self.item_flags.write_data.next = 0.into();
        if self.c_op.q.val() == 3 {
            self.item_flags.write_data.next = 1.into();
        }
        if self.c_op.q.val() == 4 {
            self.item_flags.write_data.next = 2.into();
        }
        if self.item_write_flags.val() {
            self.item_flags.write_data.next = self.item_flags.read_data.val() | 4;
        }
        self.item_syndrome.write_data.next = self.c_syndrome.q.val();
        if self.c_op.q.val() == 1 {
            self.item_syndrome.write_data.next = 0x1F.into();
        }
        self.item_psn.write_data.next = self.c_psn.q.val();
        self.item_msn.write_data.next = self.c_msn.q.val();
        self.item_value.write_data.next = self.c_value.q.val();
        self.item_rkey.write_data.next = self.c_rkey.q.val();
        self.item_len.write_data.next = self.c_len.q.val();
        self.item_wseq.write_data.next = self.c_wseq.q.val();
    }
}

/// One field of a RAM of records: `2^(AW + depth_bits)` words of `W`
/// bits (the address is formed in Verilog: stable Rust cannot write
/// `Bits<{AW + D}>`), one write port and one read port,
/// each addressed by (`qpn`, `slot`) = `qpn * 2^depth_bits + slot`; read
/// data registered at the edge that samples the read address. Zero after
/// configuration, as FPGA block RAM is ([`FieldRam::new`]), or without a
/// defined power-up value ([`FieldRam::uninitialised`]) for the item RAMs,
/// whose slots are only read once a push wrote them (every read is of a
/// slot below the QP's count): Yosys unrolls a clearing loop word by word,
/// two minutes for the 8K items. [`ResponseQueue`] never uses a read
/// that collides with a write, so collision logic is left out
/// (`no_rw_check`).
#[derive(LogicBlock)]
pub struct FieldRam<const AW: usize, const W: usize> {
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_qpn: Signal<In, Bits<AW>>,
    pub write_slot: Signal<In, Bits<8>>,
    pub write_data: Signal<In, Bits<W>>,
    pub read_qpn: Signal<In, Bits<AW>>,
    pub read_slot: Signal<In, Bits<8>>,
    pub read_data: Signal<Out, Bits<W>>,
    _depth_bits: usize,
    _contents: BTreeMap<u64, Bits<W>>,
    _zero_at_power_up: bool,
}

impl<const AW: usize, const W: usize> FieldRam<AW, W> {
    pub fn new(depth_bits: usize) -> Self {
        FieldRam {
            clock: Default::default(),
            write_enable: Default::default(),
            write_qpn: Default::default(),
            write_slot: Default::default(),
            write_data: Default::default(),
            read_qpn: Default::default(),
            read_slot: Default::default(),
            read_data: Default::default(),
            _depth_bits: depth_bits,
            _contents: BTreeMap::new(),
            _zero_at_power_up: true,
        }
    }

    /// Without the power-up clearing loop in the Verilog (simulation still
    /// reads unwritten words as zero).
    pub fn uninitialised(depth_bits: usize) -> Self {
        FieldRam {
            _zero_at_power_up: false,
            ..Self::new(depth_bits)
        }
    }

    fn key(&self, qpn: Bits<AW>, slot: Bits<8>) -> u64 {
        let mask = (1u64 << self._depth_bits) - 1;
        (qpn.to_u64() << self._depth_bits) | (slot.to_u64() & mask)
    }

    fn address(&self, port: &str) -> String {
        if self._depth_bits == 0 {
            format!("{port}_qpn")
        } else {
            format!("{{{port}_qpn, {port}_slot[{}:0]}}", self._depth_bits - 1)
        }
    }
}

impl<const AW: usize, const W: usize> Logic for FieldRam<AW, W> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let r = self.key(self.read_qpn.val(), self.read_slot.val());
            self.read_data.next = self._contents.get(&r).copied().unwrap_or_default();
            if self.write_enable.val() {
                let w = self.key(self.write_qpn.val(), self.write_slot.val());
                self._contents.insert(w, self.write_data.val());
            }
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let slot_use = if self._depth_bits < 8 {
            // The slot's upper bits are zero by construction.
            format!(
                "wire _unused_slots = &{{1'b0, write_slot[7:{d}], read_slot[7:{d}]}};\n",
                d = self._depth_bits
            )
        } else {
            String::new()
        };
        let last = (1usize << (AW + self._depth_bits)) - 1;
        let clear = if self._zero_at_power_up {
            format!(
                "\
integer i;
initial begin
    for (i = 0; i <= {last}; i = i + 1) begin
        mem[i] = {W}'d0;
    end
end
"
            )
        } else {
            String::new()
        };
        Verilog::Custom(format!(
            "\
{slot_use}(* no_rw_check *)
reg [{top}:0] mem [0:{last}];
{clear}initial read_data = {W}'d0;

always @(posedge clock) begin
    if (write_enable) begin
        mem[{write}] <= write_data;
    end
    read_data <= mem[{read}];
end
",
            top = W - 1,
            write = self.address("write"),
            read = self.address("read"),
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "field_ram".into(),
            clock: "clock".into(),
            inputs: vec![
                "write_enable".into(),
                "write_qpn".into(),
                "write_slot".into(),
                "write_data".into(),
                "read_qpn".into(),
                "read_slot".into(),
            ],
            outputs: vec!["read_data".into()],
        }]
    }
}

/// The `command` port values of one command (unused fields zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommandFields {
    pub op: u64,
    pub qpn: u64,
    pub syndrome: u64,
    pub psn: u64,
    pub msn: u64,
    pub value: u64,
    pub rkey: u64,
    pub len: u64,
    pub mtu_code: u64,
}

impl CommandFields {
    pub fn configure(qpn: u32, mtu: u32) -> Self {
        CommandFields {
            op: OP_CONFIGURE,
            qpn: qpn.into(),
            mtu_code: mtu::shift_code(mtu)
                .unwrap_or_else(|| panic!("{mtu} bytes is not a path MTU"))
                .into(),
            ..Default::default()
        }
    }

    pub fn push_ack(qpn: u32, psn: u32, msn: u32) -> Self {
        CommandFields {
            op: OP_PUSH_ACK,
            qpn: qpn.into(),
            psn: psn.into(),
            msn: msn.into(),
            ..Default::default()
        }
    }

    pub fn push_nak(qpn: u32, syndrome: u8, psn: u32, msn: u32) -> Self {
        CommandFields {
            op: OP_PUSH_NAK,
            syndrome: syndrome.into(),
            ..Self::push_ack(qpn, psn, msn)
        }
    }

    pub fn push_atomic_ack(qpn: u32, psn: u32, orig: u64, msn: u32) -> Self {
        CommandFields {
            op: OP_PUSH_ATOMIC_ACK,
            value: orig,
            ..Self::push_ack(qpn, psn, msn)
        }
    }

    pub fn push_read(qpn: u32, psn: u32, va: u64, rkey: u32, len: u32, msn: u32) -> Self {
        CommandFields {
            op: OP_PUSH_READ,
            value: va,
            rkey: rkey.into(),
            len: len.into(),
            ..Self::push_ack(qpn, psn, msn)
        }
    }

    pub fn drop_reads(qpn: u32, first_psn: u32, npsn: u32) -> Self {
        CommandFields {
            op: OP_DROP_READS,
            qpn: qpn.into(),
            psn: first_psn.into(),
            len: npsn.into(),
            ..Default::default()
        }
    }

    pub fn flush(qpn: u32) -> Self {
        CommandFields {
            op: OP_FLUSH,
            qpn: qpn.into(),
            ..Default::default()
        }
    }
}
