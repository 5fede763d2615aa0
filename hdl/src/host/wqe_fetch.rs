//! `WqeFetch`: the work rings' fetch engine. It keeps the cursors of every
//! QP's send and receive ring, takes their doorbells, and reads the rung
//! WQEs from host memory by DMA in batches, at most as many per ring as
//! the transport has room for, handing them on in ring order, one 64-byte
//! beat per cycle (`rocenic_abi::wqe`; a 128-byte slot is two beats).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; hold it one cycle): drops what is
//!   in flight and sweeps the ring table to zero (2048 cycles, every
//!   `ready` low meanwhile): every ring is created again after a reset.
//! - `command` ([`RingCommand`], valid/ready): CREATE a ring (bus address,
//!   4 KiB aligned; `log_size` 1 ..= 15; `log_stride` 0 for 64-byte slots,
//!   1 for 128) with its three cursors at 0, or DESTROY it. The admin
//!   engine decides whether it is allowed; a ring is destroyed or created
//!   again only once the transport has retired what was fetched from it.
//! - `doorbell` ([`RingDoorbell`], valid/ready): the new producer index of
//!   a ring (mod 2^16). One that lies more than the ring's size ahead of
//!   the oldest WQE not retired is refused: its QP on `qp_error` (cause
//!   DOORBELL_BEYOND_RING) and a pulse on `doorbell_error`; a doorbell of
//!   a ring that does not exist pulses `doorbell_error` only.
//! - `retire` ([`RingRetire`], valid/ready): the transport has completed
//!   the oldest WQE it took from this ring, so it has room for one more.
//!   A retire of a ring with nothing fetched is ignored.
//! - `dma` ([`DmaReadPort`]): one read per batch: up to 4 slots of 64
//!   bytes or 2 of 128, never across the ring's end; tag 0..7.
//! - `wqe` ([`WqeStream`]): the WQEs, each ring's in index order, every
//!   beat with its QP, ring, index and `last` (the WQE's last beat).
//! - `qp_error` ([`QpErrorOut`]), `doorbell_error` (pulse): above.
//!
//! # Rules
//!
//! A ring's cursors: `producer` (rung by software), `fetch_at` (the next
//! index to fetch) and `done` (the oldest index fetched and not retired). A
//! doorbell is taken when `producer - done <= 2^log_size` (mod 2^16). A
//! batch starts at `fetch_at` and takes the fewest of: the WQEs rung and not
//! fetched, the transport's room (`CORE_WQES - (fetch_at - done)`), the slots
//! to the ring's end, and 256 bytes of slots. A ring with WQEs to fetch
//! and room waits in a work list (once), so busy rings take turns, one
//! batch each.
//!
//! # Latency and throughput
//!
//! One command, doorbell, retire or batch per cycle, in that priority,
//! back to back on the same ring (its record is read, updated and written
//! in two cycles; the next operation on the same ring takes the updated
//! record from a forwarding register). A doorbell taken in cycle `t`
//! queues its ring in cycle `t + 1`; the ring's batch can be taken from
//! `t + 3` and its read request is on `dma` from `t + 6`. The WQEs of a
//! batch leave 4 cycles after its read's last beat, one beat per cycle.
//! Up to 8 batches (32 WQEs of 64 bytes) are in flight, so with host reads
//! of L cycles about 32 / (L + 10) WQEs a cycle.

use crate::dma::dma_port::DmaReadPort;
use crate::host::cqe_writer::{QpErrorOut, QueuedQpError};
use crate::primitives::sync_fifo::SyncFifo;
use crate::primitives::sync_ram::SyncRam;
use crate::requester::send_queue_tracker;
use rocenic_abi::eqe;
use rocenic_abi::registers::limits;
use rocenic_abi::wqe;
use rust_hdl::prelude::*;

/// QP number bits: the ABI's QP count.
pub const QPN_BITS: usize = 10;
/// Ring number bits: a QP's send ring and receive ring.
pub const RING_BITS: usize = QPN_BITS + 1;
/// WQEs of one ring the transport holds at most: the send queue
/// tracker's and the receive queue's slots per QP.
pub const CORE_WQES: u64 = 1 << send_queue_tracker::DEFAULT_SLOT_BITS;
/// Batches in flight, each one DMA read into its own part of the buffer.
pub const BATCHES: u64 = 8;
/// Buffer beats a batch holds: 256 bytes of slots.
pub const BATCH_BEATS: u64 = 4;
const _: () = assert!(1 << QPN_BITS == limits::QPS && limits::LOG_MAX_QP_WR <= 15);
const _: () = assert!(
    CORE_WQES == 1 << crate::responder::receive_queue::DEFAULT_SLOT_BITS,
    "both rings' room in the transport is one constant"
);
const _: () = assert!(wqe::LOG_STRIDES[0] == 6 && wqe::LOG_STRIDES[1] == 7);

/// `RingOperation::op` values.
const OP_FETCH: u64 = 0;
const OP_DOORBELL: u64 = 1;
const OP_RETIRE: u64 = 2;
const OP_CREATE: u64 = 3;
const OP_DESTROY: u64 = 4;

/// Create (`destroy` low) or destroy a ring (valid/ready). `queue`: 0 the
/// send ring, 1 the receive ring.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct RingCommand {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub destroy: Signal<In, Bit>,
    pub qpn: Signal<In, Bits<QPN_BITS>>,
    pub queue: Signal<In, Bit>,
    pub ring: Signal<In, Bits<64>>,
    pub log_size: Signal<In, Bits<4>>,
    pub log_stride: Signal<In, Bit>,
}

/// A ring's doorbell: its new producer index (valid/ready).
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct RingDoorbell {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<QPN_BITS>>,
    pub queue: Signal<In, Bit>,
    pub producer: Signal<In, Bits<16>>,
}

/// The transport completed a ring's oldest WQE (valid/ready).
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct RingRetire {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<QPN_BITS>>,
    pub queue: Signal<In, Bit>,
}

/// The fetched WQEs (valid/ready), one 64-byte beat each: byte 0 of the
/// beat is byte `64 n` of the slot for its `n`-th beat.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "WqeSink"]
pub struct WqeStream {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<QPN_BITS>>,
    pub queue: Signal<Out, Bit>,
    pub index: Signal<Out, Bits<16>>,
    pub data: Signal<Out, Bits<512>>,
    pub last: Signal<Out, Bit>,
}

/// The receiving side of a [`WqeStream`], joined to it.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "WqeStream"]
pub struct WqeSink {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<QPN_BITS>>,
    pub queue: Signal<In, Bit>,
    pub index: Signal<In, Bits<16>>,
    pub data: Signal<In, Bits<512>>,
    pub last: Signal<In, Bit>,
}

/// One ring's record in the ring table.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct WorkRing {
    pub valid: Bit,
    /// The ring is in the work list (exactly once).
    pub queued: Bit,
    /// The ring's bus address over 4 KiB.
    pub ring_page: Bits<52>,
    pub log_size: Bits<4>,
    pub log_stride: Bit,
    pub producer: Bits<16>,
    pub fetch_at: Bits<16>,
    pub done: Bits<16>,
}

/// The operation taken in one cycle, as the next cycle works on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct RingOperation {
    pub op: Bits<3>,
    pub ring: Bits<RING_BITS>,
    /// CREATE: the ring's bus address.
    pub address: Bits<64>,
    pub log_size: Bits<4>,
    pub log_stride: Bit,
    /// Doorbell: the producer index.
    pub producer: Bits<16>,
}

/// A batch's read request.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct BatchRead {
    pub tag: Bits<3>,
    pub address: Bits<64>,
    pub len: Bits<9>,
}

/// A batch as its readout needs it (in fetch order).
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct Batch {
    pub ring: Bits<RING_BITS>,
    pub index: Bits<16>,
    /// Beats, 1 ..= 4.
    pub beats: Bits<3>,
    pub log_stride: Bit,
}

/// A beat on its way out.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct WqeBeat {
    pub ring: Bits<RING_BITS>,
    pub index: Bits<16>,
    pub last: Bit,
    pub data: Bits<512>,
}

/// Output and request queue address bits: 8 entries.
const QUEUE_BITS: usize = 3;

/// The fetch engine (see the module doc).
#[derive(LogicBlock)]
pub struct WqeFetch {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub command: RingCommand,
    pub doorbell: RingDoorbell,
    pub retire: RingRetire,
    pub dma: DmaReadPort,
    pub wqe: WqeStream,
    pub qp_error: QpErrorOut,
    pub doorbell_error: Signal<Out, Bit>,

    rings: SyncRam<WorkRing, RING_BITS>,
    work_list: SyncFifo<Bits<RING_BITS>, RING_BITS, 12>,
    reads: SyncFifo<BatchRead, QUEUE_BITS, 4>,
    batches: SyncFifo<Batch, QUEUE_BITS, 4>,
    buffer: SyncRam<Bits<512>, 5>,
    beats_out: SyncFifo<WqeBeat, QUEUE_BITS, 4>,
    qp_errors: SyncFifo<QueuedQpError, QUEUE_BITS, 4>,

    sweeping: DFF<Bit>,
    sweep_ring: DFF<Bits<RING_BITS>>,
    /// The operation whose record the table presents this cycle.
    working: DFF<Bit>,
    operation: DFF<RingOperation>,
    /// The record written at the last edge, for an operation on the same
    /// ring right behind it.
    last_written_valid: DFF<Bit>,
    last_written_ring: DFF<Bits<RING_BITS>>,
    last_written: DFF<WorkRing>,
    /// Batches fetched and not yet read out; the next one's buffer part.
    batches_held: DFF<Bits<4>>,
    next_tag: DFF<Bits<3>>,
    /// Per buffer part: beats of its read arrived so far (2 bits each),
    /// and whether its last beat has.
    arrived_beats: DFF<Bits<16>>,
    arrived: DFF<Bits<8>>,
    /// Readout: the part at the head and the beat in it; the beat whose
    /// buffer read is under way.
    head_tag: DFF<Bits<3>>,
    head_beat: DFF<Bits<2>>,
    reading: DFF<Bit>,
    read_beat: DFF<WqeBeat>,

    room: Signal<Local, Bit>,
    take_command: Signal<Local, Bit>,
    take_doorbell: Signal<Local, Bit>,
    take_retire: Signal<Local, Bit>,
    take_fetch: Signal<Local, Bit>,
    ring: Signal<Local, WorkRing>,
    updated: Signal<Local, WorkRing>,
    is_op: Signal<Local, Bits<8>>,
    ring_size: Signal<Local, Bits<17>>,
    slot_mask: Signal<Local, Bits<16>>,
    rung: Signal<Local, Bits<16>>,
    in_core: Signal<Local, Bits<16>>,
    core_room: Signal<Local, Bits<16>>,
    to_end: Signal<Local, Bits<16>>,
    batch_limit: Signal<Local, Bits<16>>,
    count_a: Signal<Local, Bits<16>>,
    count_b: Signal<Local, Bits<16>>,
    count: Signal<Local, Bits<16>>,
    fetch: Signal<Local, Bit>,
    requeue: Signal<Local, Bit>,
    doorbell_ok: Signal<Local, Bit>,
    retire_ok: Signal<Local, Bit>,
    wake: Signal<Local, Bit>,
    /// Bytes of a slot, as a shift: 6 or 7.
    slot_shift: Signal<Local, Bits<7>>,
    slot_offset: Signal<Local, Bits<64>>,
    data_tag: Signal<Local, Bits<3>>,
    data_shift: Signal<Local, Bits<5>>,
    data_beats_shifted: Signal<Local, Bits<16>>,
    data_beat: Signal<Local, Bits<2>>,
    head_arrived: Signal<Local, Bits<8>>,
    data_fire: Signal<Local, Bit>,
    head: Signal<Local, Batch>,
    head_ready: Signal<Local, Bit>,
    out_room: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    batch_end: Signal<Local, Bit>,
    beat_wqe: Signal<Local, Bits<2>>,
    arrived_set: Signal<Local, Bits<8>>,
    arrived_clear: Signal<Local, Bits<8>>,

    op_fetch: Constant<Bits<3>>,
    op_doorbell: Constant<Bits<3>>,
    op_retire: Constant<Bits<3>>,
    op_create: Constant<Bits<3>>,
    op_destroy: Constant<Bits<3>>,
    core_wqes: Constant<Bits<16>>,
    batches_max: Constant<Bits<4>>,
    queue_limit: Constant<Bits<4>>,
    last_ring: Constant<Bits<RING_BITS>>,
    batch_slots_64: Constant<Bits<16>>,
    batch_slots_128: Constant<Bits<16>>,
    empty_ring: Constant<WorkRing>,
    cause_beyond_ring: Constant<Bits<8>>,
}

impl Default for WqeFetch {
    fn default() -> Self {
        let cause = eqe::QP_ERROR_CAUSE
            .by_name("DOORBELL_BEYOND_RING")
            .expect("the ABI names the cause");
        WqeFetch {
            clock: Default::default(),
            reset: Default::default(),
            command: Default::default(),
            doorbell: Default::default(),
            retire: Default::default(),
            dma: Default::default(),
            wqe: Default::default(),
            qp_error: Default::default(),
            doorbell_error: Default::default(),
            rings: Default::default(),
            work_list: Default::default(),
            reads: Default::default(),
            batches: Default::default(),
            buffer: Default::default(),
            beats_out: Default::default(),
            qp_errors: Default::default(),
            sweeping: Default::default(),
            sweep_ring: Default::default(),
            working: Default::default(),
            operation: Default::default(),
            last_written_valid: Default::default(),
            last_written_ring: Default::default(),
            last_written: Default::default(),
            batches_held: Default::default(),
            next_tag: Default::default(),
            arrived_beats: Default::default(),
            arrived: Default::default(),
            head_tag: Default::default(),
            head_beat: Default::default(),
            reading: Default::default(),
            read_beat: Default::default(),
            room: Default::default(),
            take_command: Default::default(),
            take_doorbell: Default::default(),
            take_retire: Default::default(),
            take_fetch: Default::default(),
            ring: Default::default(),
            updated: Default::default(),
            is_op: Default::default(),
            ring_size: Default::default(),
            slot_mask: Default::default(),
            rung: Default::default(),
            in_core: Default::default(),
            core_room: Default::default(),
            to_end: Default::default(),
            batch_limit: Default::default(),
            count_a: Default::default(),
            count_b: Default::default(),
            count: Default::default(),
            fetch: Default::default(),
            requeue: Default::default(),
            doorbell_ok: Default::default(),
            retire_ok: Default::default(),
            wake: Default::default(),
            slot_shift: Default::default(),
            slot_offset: Default::default(),
            data_tag: Default::default(),
            data_shift: Default::default(),
            data_beats_shifted: Default::default(),
            data_beat: Default::default(),
            head_arrived: Default::default(),
            data_fire: Default::default(),
            head: Default::default(),
            head_ready: Default::default(),
            out_room: Default::default(),
            issue: Default::default(),
            batch_end: Default::default(),
            beat_wqe: Default::default(),
            arrived_set: Default::default(),
            arrived_clear: Default::default(),
            op_fetch: Constant::new(bits(OP_FETCH)),
            op_doorbell: Constant::new(bits(OP_DOORBELL)),
            op_retire: Constant::new(bits(OP_RETIRE)),
            op_create: Constant::new(bits(OP_CREATE)),
            op_destroy: Constant::new(bits(OP_DESTROY)),
            core_wqes: Constant::new(bits(CORE_WQES)),
            batches_max: Constant::new(bits(BATCHES)),
            // An operation taken now pushes one entry two edges on; what
            // the operation in flight pushes comes first.
            queue_limit: Constant::new(bits((1 << QUEUE_BITS) - 1)),
            last_ring: Constant::new(bits((1 << RING_BITS) - 1)),
            batch_slots_64: Constant::new(bits(BATCH_BEATS)),
            batch_slots_128: Constant::new(bits(BATCH_BEATS / 2)),
            empty_ring: Constant::new(WorkRing::default()),
            cause_beyond_ring: Constant::new(bits(cause.value)),
        }
    }
}

impl Logic for WqeFetch {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, rings, work_list, reads, batches, buffer, beats_out, qp_errors);
        dff_setup!(
            self,
            clock,
            sweeping,
            sweep_ring,
            working,
            operation,
            last_written_valid,
            last_written_ring,
            last_written,
            batches_held,
            next_tag,
            arrived_beats,
            arrived,
            head_tag,
            head_beat,
            reading,
            read_beat
        );
        self.work_list.reset.next = self.reset.val();
        self.reads.reset.next = self.reset.val();
        self.batches.reset.next = self.reset.val();
        self.beats_out.reset.next = self.reset.val();
        self.qp_errors.reset.next = self.reset.val();

        // ---- Taking one operation a cycle: while the QP error queue has
        // room for it and the one in flight; a batch only while a buffer
        // part is free for it and for the one in flight.
        self.room.next = ((bit_cast::<4, 4>(self.qp_errors.fill.val())
            + bit_cast::<4, 1>(self.working.q.val().into()))
            < self.queue_limit.val())
            & !self.sweeping.q.val()
            & !self.reset.val();
        self.take_command.next = self.room.val() & self.command.valid.val();
        self.take_doorbell.next =
            self.room.val() & !self.command.valid.val() & self.doorbell.valid.val();
        self.take_retire.next = self.room.val()
            & !self.command.valid.val()
            & !self.doorbell.valid.val()
            & self.retire.valid.val();
        self.take_fetch.next = self.room.val()
            & !self.command.valid.val()
            & !self.doorbell.valid.val()
            & !self.retire.valid.val()
            & !self.work_list.empty.val()
            & ((self.batches_held.q.val() + bit_cast::<4, 1>(self.working.q.val().into()))
                < self.batches_max.val());
        self.command.ready.next = self.room.val();
        self.doorbell.ready.next = self.room.val() & !self.command.valid.val();
        self.retire.ready.next =
            self.room.val() & !self.command.valid.val() & !self.doorbell.valid.val();
        self.work_list.read.next = self.take_fetch.val();

        self.working.d.next = self.take_command.val()
            | self.take_doorbell.val()
            | self.take_retire.val()
            | self.take_fetch.val();
        self.operation.d.next.op = self.op_fetch.val();
        self.operation.d.next.ring = self.work_list.data_out.val();
        self.operation.d.next.address = self.command.ring.val();
        self.operation.d.next.log_size = self.command.log_size.val();
        self.operation.d.next.log_stride = self.command.log_stride.val();
        self.operation.d.next.producer = self.doorbell.producer.val();
        if self.take_retire.val() {
            self.operation.d.next.op = self.op_retire.val();
            self.operation.d.next.ring = (bit_cast::<RING_BITS, QPN_BITS>(self.retire.qpn.val())
                << 1)
                | bit_cast::<RING_BITS, 1>(self.retire.queue.val().into());
        }
        if self.take_doorbell.val() {
            self.operation.d.next.op = self.op_doorbell.val();
            self.operation.d.next.ring = (bit_cast::<RING_BITS, QPN_BITS>(self.doorbell.qpn.val())
                << 1)
                | bit_cast::<RING_BITS, 1>(self.doorbell.queue.val().into());
        }
        if self.take_command.val() {
            self.operation.d.next.op = self.op_create.val();
            if self.command.destroy.val() {
                self.operation.d.next.op = self.op_destroy.val();
            }
            self.operation.d.next.ring = (bit_cast::<RING_BITS, QPN_BITS>(self.command.qpn.val())
                << 1)
                | bit_cast::<RING_BITS, 1>(self.command.queue.val().into());
        }
        self.rings.read_address.next = self.operation.d.val().ring;

        // ---- The operation in flight, on its ring's record.
        self.ring.next = self.rings.read_data.val();
        if self.last_written_valid.q.val()
            & (self.last_written_ring.q.val() == self.operation.q.val().ring)
        {
            self.ring.next = self.last_written.q.val();
        }
        // One bit per operation code, low unless an operation is in flight.
        self.is_op.next = bits::<8>(0);
        if self.working.q.val() {
            self.is_op.next = bits::<8>(1) << self.operation.q.val().op;
        }
        self.ring_size.next = bits::<17>(1) << self.ring.val().log_size;
        self.slot_mask.next = bit_cast::<16, 17>(self.ring_size.val() - bits::<17>(1));
        self.rung.next = self.ring.val().producer - self.ring.val().fetch_at;
        self.in_core.next = self.ring.val().fetch_at - self.ring.val().done;
        self.core_room.next = bits::<16>(0);
        if self.in_core.val() < self.core_wqes.val() {
            self.core_room.next = self.core_wqes.val() - self.in_core.val();
        }
        self.to_end.next = bit_cast::<16, 17>(
            self.ring_size.val()
                - bit_cast::<17, 16>(self.ring.val().fetch_at & self.slot_mask.val()),
        );
        self.batch_limit.next = self.batch_slots_64.val();
        if self.ring.val().log_stride {
            self.batch_limit.next = self.batch_slots_128.val();
        }
        self.count_a.next = self.rung.val();
        if self.core_room.val() < self.rung.val() {
            self.count_a.next = self.core_room.val();
        }
        self.count_b.next = self.count_a.val();
        if self.to_end.val() < self.count_a.val() {
            self.count_b.next = self.to_end.val();
        }
        self.count.next = self.count_b.val();
        if self.batch_limit.val() < self.count_b.val() {
            self.count.next = self.batch_limit.val();
        }
        self.fetch.next =
            self.is_op.val().get_bit(0) & self.ring.val().valid & self.count.val().any();
        self.requeue.next = self.fetch.val()
            & (self.rung.val() != self.count.val())
            & (self.core_room.val() != self.count.val());
        self.doorbell_ok.next = self.is_op.val().get_bit(1)
            & self.ring.val().valid
            & (bit_cast::<17, 16>(self.operation.q.val().producer - self.ring.val().done)
                <= self.ring_size.val());
        self.doorbell_error.next = self.is_op.val().get_bit(1) & !self.doorbell_ok.val();
        self.retire_ok.next = self.is_op.val().get_bit(2)
            & self.ring.val().valid
            & (self.ring.val().done != self.ring.val().fetch_at);
        // A ring joins the work list when it has WQEs to fetch and room
        // in the transport and is not in the list already.
        self.wake.next = !self.ring.val().queued
            & ((self.doorbell_ok.val()
                & (self.operation.q.val().producer != self.ring.val().fetch_at)
                & self.core_room.val().any())
                | (self.retire_ok.val() & (self.ring.val().producer != self.ring.val().fetch_at)));

        self.updated.next = self.ring.val();
        if self.is_op.val().get_bit(0) {
            self.updated.next.queued = self.requeue.val();
        }
        if self.fetch.val() {
            self.updated.next.fetch_at = self.ring.val().fetch_at + self.count.val();
        }
        if self.doorbell_ok.val() {
            self.updated.next.producer = self.operation.q.val().producer;
        }
        if self.retire_ok.val() {
            self.updated.next.done = self.ring.val().done + bits::<16>(1);
        }
        if self.wake.val() {
            self.updated.next.queued = true;
        }
        if self.is_op.val().get_bit(3) {
            self.updated.next.valid = true;
            self.updated.next.ring_page = self.operation.q.val().address.get_bits::<52>(12);
            self.updated.next.log_size = self.operation.q.val().log_size;
            self.updated.next.log_stride = self.operation.q.val().log_stride;
            self.updated.next.producer = bits::<16>(0);
            self.updated.next.fetch_at = bits::<16>(0);
            self.updated.next.done = bits::<16>(0);
        }
        if self.is_op.val().get_bit(4) {
            self.updated.next.valid = false;
        }
        self.rings.write_enable.next = self.working.q.val();
        self.rings.write_address.next = self.operation.q.val().ring;
        self.rings.write_data.next = self.updated.val();
        self.last_written_valid.d.next = self.working.q.val();
        self.last_written_ring.d.next = self.operation.q.val().ring;
        self.last_written.d.next = self.updated.val();

        self.work_list.write.next = self.requeue.val() | self.wake.val();
        self.work_list.data_in.next = self.operation.q.val().ring;

        self.qp_errors.write.next =
            self.is_op.val().get_bit(1) & self.ring.val().valid & !self.doorbell_ok.val();
        self.qp_errors.data_in.next.qpn =
            bit_cast::<24, RING_BITS>(self.operation.q.val().ring >> 1);
        self.qp_errors.data_in.next.cause = self.cause_beyond_ring.val();

        // ---- A batch: its read and its place in the readout order.
        self.slot_shift.next = bits::<7>(6) | bit_cast::<7, 1>(self.ring.val().log_stride.into());
        self.slot_offset.next = bit_cast::<64, 16>(self.ring.val().fetch_at & self.slot_mask.val())
            << bit_cast::<64, 7>(self.slot_shift.val());
        self.reads.write.next = self.fetch.val();
        self.reads.data_in.next.tag = self.next_tag.q.val();
        self.reads.data_in.next.address =
            (bit_cast::<64, 52>(self.ring.val().ring_page) << 12) + self.slot_offset.val();
        self.reads.data_in.next.len =
            bit_cast::<9, 16>(self.count.val()) << bit_cast::<9, 7>(self.slot_shift.val());
        self.batches.write.next = self.fetch.val();
        self.batches.data_in.next.ring = self.operation.q.val().ring;
        self.batches.data_in.next.index = self.ring.val().fetch_at;
        self.batches.data_in.next.beats = bit_cast::<3, 16>(self.count.val())
            << bit_cast::<3, 1>(self.ring.val().log_stride.into());
        self.batches.data_in.next.log_stride = self.ring.val().log_stride;
        if self.fetch.val() {
            self.next_tag.d.next = self.next_tag.q.val() + bits::<3>(1);
        }

        self.dma.req_valid.next = !self.reads.empty.val();
        self.dma.req_tag.next = bit_cast::<8, 3>(self.reads.data_out.val().tag);
        self.dma.req_addr.next = self.reads.data_out.val().address;
        self.dma.req_len.next = bit_cast::<32, 9>(self.reads.data_out.val().len);
        self.reads.read.next = !self.reads.empty.val() & self.dma.req_ready.val();

        // ---- Read data into the batch's part of the buffer, in any order
        // of tags (each part has room for its whole read).
        self.dma.rd_ready.next = true;
        self.data_fire.next = self.dma.rd_valid.val();
        self.data_tag.next = self.dma.rd_tag.val().get_bits::<3>(0);
        self.data_shift.next = bit_cast::<5, 3>(self.data_tag.val()) << 1;
        self.data_beats_shifted.next = self.arrived_beats.q.val() >> self.data_shift.val();
        self.data_beat.next = self.data_beats_shifted.val().get_bits::<2>(0);
        self.buffer.write_enable.next = self.data_fire.val();
        self.buffer.write_address.next =
            (bit_cast::<5, 3>(self.data_tag.val()) << 2) | bit_cast::<5, 2>(self.data_beat.val());
        self.buffer.write_data.next = self.dma.rd_data.val();
        // A part's count goes back to 0 with its last beat (at most 4).
        if self.data_fire.val() {
            self.arrived_beats.d.next = (self.arrived_beats.q.val()
                & !(bits::<16>(3) << self.data_shift.val()))
                | (bit_cast::<16, 2>(self.data_beat.val() + bits::<2>(1)) << self.data_shift.val());
            if self.dma.rd_last.val() {
                self.arrived_beats.d.next =
                    self.arrived_beats.q.val() & !(bits::<16>(3) << self.data_shift.val());
            }
        }

        // ---- Readout: the oldest batch, once its read is whole, a beat
        // a cycle while the output queue has room for the beat in flight.
        self.head.next = self.batches.data_out.val();
        self.head_arrived.next = self.arrived.q.val() >> bit_cast::<8, 3>(self.head_tag.q.val());
        self.head_ready.next = !self.batches.empty.val() & self.head_arrived.val().get_bit(0);
        self.out_room.next = (bit_cast::<4, 4>(self.beats_out.fill.val())
            + bit_cast::<4, 1>(self.reading.q.val().into()))
            < self.queue_limit.val();
        self.issue.next = self.head_ready.val() & self.out_room.val();
        self.batch_end.next = self.issue.val()
            & ((bit_cast::<3, 2>(self.head_beat.q.val()) + bits::<3>(1)) == self.head.val().beats);
        self.buffer.read_address.next = (bit_cast::<5, 3>(self.head_tag.q.val()) << 2)
            | bit_cast::<5, 2>(self.head_beat.q.val());
        self.beat_wqe.next = self.head_beat.q.val();
        if self.head.val().log_stride {
            self.beat_wqe.next = self.head_beat.q.val() >> 1;
        }
        self.reading.d.next = self.issue.val();
        self.read_beat.d.next.ring = self.head.val().ring;
        self.read_beat.d.next.index =
            self.head.val().index + bit_cast::<16, 2>(self.beat_wqe.val());
        self.read_beat.d.next.last =
            !self.head.val().log_stride | self.head_beat.q.val().get_bit(0);
        self.read_beat.d.next.data = bits::<512>(0);
        if self.issue.val() {
            self.head_beat.d.next = self.head_beat.q.val() + bits::<2>(1);
        }
        self.batches.read.next = self.batch_end.val();
        if self.batch_end.val() {
            self.head_beat.d.next = bits::<2>(0);
            self.head_tag.d.next = self.head_tag.q.val() + bits::<3>(1);
        }
        self.arrived_set.next = bits::<8>(0);
        if self.data_fire.val() & self.dma.rd_last.val() {
            self.arrived_set.next = bits::<8>(1) << bit_cast::<8, 3>(self.data_tag.val());
        }
        self.arrived_clear.next = bits::<8>(0);
        if self.batch_end.val() {
            self.arrived_clear.next = bits::<8>(1) << bit_cast::<8, 3>(self.head_tag.q.val());
        }
        self.arrived.d.next =
            (self.arrived.q.val() | self.arrived_set.val()) & !self.arrived_clear.val();
        self.batches_held.d.next = self.batches_held.q.val();
        if self.fetch.val() & !self.batch_end.val() {
            self.batches_held.d.next = self.batches_held.q.val() + bits::<4>(1);
        }
        if !self.fetch.val() & self.batch_end.val() {
            self.batches_held.d.next = self.batches_held.q.val() - bits::<4>(1);
        }
        self.beats_out.write.next = self.reading.q.val();
        self.beats_out.data_in.next = self.read_beat.q.val();
        self.beats_out.data_in.next.data = self.buffer.read_data.val();

        self.wqe.valid.next = !self.beats_out.empty.val();
        self.wqe.qpn.next =
            bit_cast::<QPN_BITS, RING_BITS>(self.beats_out.data_out.val().ring >> 1);
        self.wqe.queue.next = self.beats_out.data_out.val().ring.get_bit(0);
        self.wqe.index.next = self.beats_out.data_out.val().index;
        self.wqe.data.next = self.beats_out.data_out.val().data;
        self.wqe.last.next = self.beats_out.data_out.val().last;
        self.beats_out.read.next = !self.beats_out.empty.val() & self.wqe.ready.val();

        self.qp_error.valid.next = !self.qp_errors.empty.val();
        self.qp_error.qpn.next = self.qp_errors.data_out.val().qpn;
        self.qp_error.cause.next = self.qp_errors.data_out.val().cause;
        self.qp_errors.read.next = !self.qp_errors.empty.val() & self.qp_error.ready.val();

        // ---- The sweep after a reset: every ring record to zero.
        if self.sweeping.q.val() {
            self.rings.write_enable.next = true;
            self.rings.write_address.next = self.sweep_ring.q.val();
            self.rings.write_data.next = self.empty_ring.val();
            self.sweep_ring.d.next = self.sweep_ring.q.val() + bits::<RING_BITS>(1);
            if self.sweep_ring.q.val() == self.last_ring.val() {
                self.sweeping.d.next = false;
            }
        }
        if self.reset.val() {
            self.sweeping.d.next = true;
            self.sweep_ring.d.next = bits::<RING_BITS>(0);
            self.working.d.next = false;
            self.last_written_valid.d.next = false;
            self.batches_held.d.next = bits::<4>(0);
            self.next_tag.d.next = bits::<3>(0);
            self.arrived_beats.d.next = bits::<16>(0);
            self.arrived.d.next = bits::<8>(0);
            self.head_tag.d.next = bits::<3>(0);
            self.head_beat.d.next = bits::<2>(0);
            self.reading.d.next = false;
        }
    }
}
