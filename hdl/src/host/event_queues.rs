//! `EventQueues`: the event queues and their MSI-X messages. It keeps the
//! ABI's 8 EQ contexts, writes each event into its EQ's ring in host
//! memory as one 16-byte DMA write in the ABI's EQE format
//! (`rocenic_abi::eqe`, owner bit included), takes the EQ doorbells
//! (consumer index, arming), and after the EQE of an armed EQ sends the
//! EQ's MSI-X message (a 4-byte posted write of the vector's data at its
//! address) on the same DMA port, or sets the vector's pending bit while
//! the vector is masked and sends the message when it is unmasked.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): returns to idle, empties the
//!   output queue and clears the pending bits. The EQ contexts are a small
//!   RAM and are not cleared: after a reset every EQ is created again.
//! - `command` ([`EqCommand`], valid/ready): CREATE an EQ (ring bus
//!   address, 4 KiB aligned; `log_size`, 1 ..= 23; its MSI-X vector),
//!   producer and consumer at 0, unarmed; or DESTROY it. The admin engine
//!   decides whether a command is allowed; this block carries it out.
//! - `doorbell` ([`EqDoorbell`], valid/ready): an EQ doorbell write, as
//!   `bar_registers`' `eq_doorbell_eqn` / `eq_doorbell_value` give it
//!   (`rocenic_abi::registers::eq_doorbell`: the consumer index, mod
//!   2^24, and `arm`). A consumer index that would put more entries in the
//!   ring than it holds, or a doorbell of an EQ that does not exist, is
//!   ignored and pulses `doorbell_error`. `arm` asks for the message at the
//!   next EQE, or at once if entries are unconsumed (producer differs from
//!   the new consumer index), as the ABI's `arm` field says.
//! - `event` ([`EventIn`], valid/ready): an event for EQ `eqn`, its fields
//!   in the ABI's codes (`event`: an `event_type`, `cause`: a
//!   `qp_error_cause` or 0, `object`, `detail`). `cqe_writer`'s `event`
//!   output connects to it (`cause` and `detail` 0).
//! - `dma` ([`DmaWritePort`]): the EQE writes (16 bytes in their quarter
//!   of a 64-byte beat) and the MSI-X messages (4 bytes in their dword),
//!   one beat each, `first` and `last` set, `keep` marking the bytes (the
//!   bytes outside `keep` are copies). A message address is dword aligned
//!   (PCIe MSI-X: its bits 1:0 are zero). A
//!   message follows its EQE on this port, so PCIe's ordering of posted
//!   writes delivers the EQE first.
//! - MSI-X, to `bar_registers`: `vector_lookup` / `vector_lookup_index`
//!   (out) and `vector_address` / `vector_data` (in, the cycle after the
//!   lookup), `msix_mask` (in, the vectors' mask bits), `msix_pending`
//!   (out, the PBA).
//! - `eq_overflow`: a one-cycle pulse per event dropped (see below);
//!   `eq_fatal`: a one-cycle pulse when an EQ first overruns (for the
//!   control block's fatal cause); `doorbell_error`: a one-cycle pulse per
//!   refused doorbell.
//!
//! # Rules
//!
//! Entry `p mod 2^log_size` of the ring takes the `p`-th EQE (from 0) with
//! owner bit `((p >> log_size) & 1) ^ 1` ([`rocenic_abi::cqe::owner_for`]).
//! The ring is full when `producer - consumer` (mod 2^24) reaches
//! `2^log_size`. An event that finds its ring full is not written (never
//! an overwrite) and not held either: holding it would stall the CQ path
//! behind an EQ software is not draining. It is dropped, pulses
//! `eq_overflow`, and leaves the EQ overrun (a sticky flag): an overrun EQ
//! has lost an event, so, as mlx5 treats an EQ overrun as fatal, it drops
//! every later event too (each pulsing `eq_overflow`) until it is
//! destroyed, and its first overrun pulses `eq_fatal`. An event for an EQ
//! that does not exist is dropped the same way (no `eq_fatal`).
//!
//! After an EQE is written to an armed EQ, the EQ is disarmed and its
//! vector's message sent: the vector is looked up; if its mask bit is
//! clear the message is queued behind the EQE and the vector's pending bit
//! cleared, else the pending bit is set. A pending vector found unmasked
//! (one vector looked at per idle cycle, round robin) is looked up and its
//! message sent, which clears the bit (PCIe MSI-X).
//!
//! # Latency and throughput
//!
//! One operation at a time: an idle cycle takes it (priority: command,
//! doorbell, a pending message, event), the next updates the context and
//! queues the EQE; a message takes two more cycles (lookup, then queue).
//! So an event takes 2 cycles, 4 with its message; the EQE's DMA write of
//! an event taken in cycle `t` is valid in cycle `t + 3`. The output queue
//! has 8 entries; an operation is taken only while it has room for two,
//! so a stalled `dma` stalls the inputs and nothing is lost.

use crate::dma::dma_port::DmaWritePort;
use crate::primitives::sync_fifo::SyncFifo;
use crate::primitives::sync_ram::SyncRam;
use rocenic_abi::eqe;
use rocenic_abi::registers::{eq_doorbell, limits};
use rust_hdl::prelude::*;

/// EQ number bits: the ABI's EQ count.
pub const EQN_BITS: usize = 3;
/// MSI-X vector number bits: the ABI's vector count.
pub const VECTOR_BITS: usize = 5;
const _: () = assert!(1 << EQN_BITS == limits::EQS && 1 << VECTOR_BITS == limits::MSIX_VECTORS);
const _: () = assert!(eqe::LAYOUT.size == 16);

// The EQE is assembled with these bit positions (hdl_gen takes only
// literals); the compiler holds them to the ABI's fields.
const _: () = assert!(eqe::EVENT.first_bit() == 0 && eqe::EVENT.width == 8);
const _: () = assert!(eqe::CAUSE.first_bit() == 8 && eqe::CAUSE.width == 8);
const _: () = assert!(eqe::OBJECT.first_bit() == 32 && eqe::OBJECT.width == 24);
const _: () = assert!(eqe::DETAIL.first_bit() == 64 && eqe::DETAIL.width == 32);
const _: () = assert!(eqe::OWNER.first_bit() == 120 && eqe::OWNER.width == 1);
// The doorbell word's fields, as `EqDoorbell` takes them apart.
const _: () = assert!(eq_doorbell::CONSUMER.first_bit() == 0 && eq_doorbell::CONSUMER.width == 24);
const _: () = assert!(eq_doorbell::ARM.first_bit() == 31);

/// `EqOperation::op` values.
const OP_EVENT: u64 = 0;
const OP_DOORBELL: u64 = 1;
const OP_CREATE: u64 = 2;
const OP_DESTROY: u64 = 3;

/// `EventQueues::state` values.
const STATE_IDLE: u64 = 0;
const STATE_WORK: u64 = 1;
const STATE_LOOKUP: u64 = 2;
const STATE_MESSAGE: u64 = 3;

/// Create (`destroy` low) or destroy an EQ (valid/ready).
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct EqCommand {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub destroy: Signal<In, Bit>,
    pub eqn: Signal<In, Bits<EQN_BITS>>,
    pub ring: Signal<In, Bits<64>>,
    pub log_size: Signal<In, Bits<5>>,
    pub vector: Signal<In, Bits<VECTOR_BITS>>,
}

/// An EQ doorbell write (valid/ready): the doorbell word's fields.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct EqDoorbell {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub eqn: Signal<In, Bits<EQN_BITS>>,
    pub consumer: Signal<In, Bits<24>>,
    pub arm: Signal<In, Bit>,
}

/// An event to write (valid/ready), fields in the ABI's codes; the same
/// names as `cqe_writer::CqEvent`.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct EventIn {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub eqn: Signal<In, Bits<EQN_BITS>>,
    pub event: Signal<In, Bits<8>>,
    pub cause: Signal<In, Bits<8>>,
    pub object: Signal<In, Bits<24>>,
    pub detail: Signal<In, Bits<32>>,
}

/// One EQ's state, one word of the EQ RAM.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct EqContext {
    pub valid: Bit,
    pub overrun: Bit,
    /// The ring's bus address over 4 KiB.
    pub ring_page: Bits<52>,
    pub log_size: Bits<5>,
    pub vector: Bits<VECTOR_BITS>,
    /// EQEs written since creation (mod 2^24).
    pub producer: Bits<24>,
    /// EQEs software has consumed (mod 2^24).
    pub consumer: Bits<24>,
    pub armed: Bit,
}

/// The operation taken, as the next cycle works on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct EqOperation {
    pub op: Bits<2>,
    pub eqn: Bits<EQN_BITS>,
    /// CREATE: the ring address. Event: `detail`.
    pub wide: Bits<64>,
    /// CREATE: `log_size`.
    pub log_size: Bits<5>,
    /// CREATE: the vector.
    pub vector: Bits<VECTOR_BITS>,
    /// Doorbell: the consumer index. Event: `object`.
    pub index: Bits<24>,
    /// Doorbell: `arm`.
    pub arm: Bit,
    pub event: Bits<8>,
    pub cause: Bits<8>,
}

/// A queued DMA write: an EQE (16 bytes) or a message (`message` high, 4
/// bytes, repeated four times), its bus address and its bytes. The beat
/// repeats them in every quarter, and `keep` picks the ones at the
/// address: no lane shifter.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct QueuedWrite {
    pub message: Bit,
    pub address: Bits<64>,
    pub bytes: Bits<128>,
}

/// Output queue address bits: 8 entries.
const QUEUE_BITS: usize = 3;

/// The EQs (see the module doc).
#[derive(LogicBlock)]
pub struct EventQueues {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub command: EqCommand,
    pub doorbell: EqDoorbell,
    pub event: EventIn,
    pub dma: DmaWritePort,
    pub vector_lookup: Signal<Out, Bit>,
    pub vector_lookup_index: Signal<Out, Bits<VECTOR_BITS>>,
    pub vector_address: Signal<In, Bits<64>>,
    pub vector_data: Signal<In, Bits<32>>,
    pub msix_mask: Signal<In, Bits<32>>,
    pub msix_pending: Signal<Out, Bits<32>>,
    pub eq_overflow: Signal<Out, Bit>,
    pub eq_fatal: Signal<Out, Bit>,
    pub doorbell_error: Signal<Out, Bit>,

    contexts: SyncRam<EqContext, EQN_BITS>,
    writes: SyncFifo<QueuedWrite, QUEUE_BITS, 4>,

    state: DFF<Bits<2>>,
    operation: DFF<EqOperation>,
    /// The vector of the message being sent.
    vector: DFF<Bits<VECTOR_BITS>>,
    pending: DFF<Bits<32>>,
    /// The pending bit looked at this idle cycle.
    scan: DFF<Bits<VECTOR_BITS>>,

    idle: Signal<Local, Bit>,
    room: Signal<Local, Bit>,
    sendable: Signal<Local, Bits<32>>,
    scanned: Signal<Local, Bits<32>>,
    resend: Signal<Local, Bit>,
    take_command: Signal<Local, Bit>,
    take_doorbell: Signal<Local, Bit>,
    take_event: Signal<Local, Bit>,
    eq: Signal<Local, EqContext>,
    updated: Signal<Local, EqContext>,
    ring_size: Signal<Local, Bits<25>>,
    used: Signal<Local, Bits<24>>,
    used_after_doorbell: Signal<Local, Bits<24>>,
    working: Signal<Local, Bit>,
    is_event: Signal<Local, Bit>,
    is_doorbell: Signal<Local, Bit>,
    fits: Signal<Local, Bit>,
    written: Signal<Local, Bit>,
    dropped: Signal<Local, Bit>,
    notify: Signal<Local, Bit>,
    doorbell_ok: Signal<Local, Bit>,
    arm_now: Signal<Local, Bit>,
    slot: Signal<Local, Bits<24>>,
    /// Passes over the ring so far: its parity gives the owner bit.
    pass: Signal<Local, Bits<24>>,
    owner: Signal<Local, Bit>,
    entry: Signal<Local, Bits<128>>,
    vector_bit: Signal<Local, Bits<32>>,
    masked_bits: Signal<Local, Bits<32>>,
    masked: Signal<Local, Bit>,
    lane: Signal<Local, Bits<6>>,

    op_event: Constant<Bits<2>>,
    op_doorbell: Constant<Bits<2>>,
    op_create: Constant<Bits<2>>,
    op_destroy: Constant<Bits<2>>,
    state_idle: Constant<Bits<2>>,
    state_work: Constant<Bits<2>>,
    state_lookup: Constant<Bits<2>>,
    state_message: Constant<Bits<2>>,
    queue_limit: Constant<Bits<4>>,
    beat_mask: Constant<Bits<64>>,
    entry_keep: Constant<Bits<64>>,
    message_keep: Constant<Bits<64>>,
}

impl Default for EventQueues {
    fn default() -> Self {
        EventQueues {
            clock: Default::default(),
            reset: Default::default(),
            command: Default::default(),
            doorbell: Default::default(),
            event: Default::default(),
            dma: Default::default(),
            vector_lookup: Default::default(),
            vector_lookup_index: Default::default(),
            vector_address: Default::default(),
            vector_data: Default::default(),
            msix_mask: Default::default(),
            msix_pending: Default::default(),
            eq_overflow: Default::default(),
            eq_fatal: Default::default(),
            doorbell_error: Default::default(),
            contexts: Default::default(),
            writes: Default::default(),
            state: Default::default(),
            operation: Default::default(),
            vector: Default::default(),
            pending: Default::default(),
            scan: Default::default(),
            idle: Default::default(),
            room: Default::default(),
            sendable: Default::default(),
            scanned: Default::default(),
            resend: Default::default(),
            take_command: Default::default(),
            take_doorbell: Default::default(),
            take_event: Default::default(),
            eq: Default::default(),
            updated: Default::default(),
            ring_size: Default::default(),
            used: Default::default(),
            used_after_doorbell: Default::default(),
            working: Default::default(),
            is_event: Default::default(),
            is_doorbell: Default::default(),
            fits: Default::default(),
            written: Default::default(),
            dropped: Default::default(),
            notify: Default::default(),
            doorbell_ok: Default::default(),
            arm_now: Default::default(),
            slot: Default::default(),
            pass: Default::default(),
            owner: Default::default(),
            entry: Default::default(),
            vector_bit: Default::default(),
            masked_bits: Default::default(),
            masked: Default::default(),
            lane: Default::default(),
            op_event: Constant::new(bits(OP_EVENT)),
            op_doorbell: Constant::new(bits(OP_DOORBELL)),
            op_create: Constant::new(bits(OP_CREATE)),
            op_destroy: Constant::new(bits(OP_DESTROY)),
            state_idle: Constant::new(bits(STATE_IDLE)),
            state_work: Constant::new(bits(STATE_WORK)),
            state_lookup: Constant::new(bits(STATE_LOOKUP)),
            state_message: Constant::new(bits(STATE_MESSAGE)),
            // Room for an EQE and its message.
            queue_limit: Constant::new(bits((1 << QUEUE_BITS) - 2)),
            beat_mask: Constant::new(bits(!63u64)),
            entry_keep: Constant::new(bits(0xFFFF)),
            message_keep: Constant::new(bits(0xF)),
        }
    }
}

impl Logic for EventQueues {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, contexts, writes);
        dff_setup!(self, clock, state, operation, vector, pending, scan);
        self.writes.reset.next = self.reset.val();

        // Idle: take one operation while the queue has room for it.
        self.idle.next = (self.state.q.val() == self.state_idle.val()) & !self.reset.val();
        self.room.next = self.writes.fill.val() <= self.queue_limit.val();
        self.sendable.next = self.pending.q.val() & !self.msix_mask.val();
        self.scanned.next = self.sendable.val() >> self.scan.q.val();
        self.resend.next = self.idle.val()
            & self.room.val()
            & !self.command.valid.val()
            & !self.doorbell.valid.val()
            & self.scanned.val().get_bit(0);
        self.take_command.next = self.idle.val() & self.room.val() & self.command.valid.val();
        self.take_doorbell.next = self.idle.val()
            & self.room.val()
            & !self.command.valid.val()
            & self.doorbell.valid.val();
        self.take_event.next = self.idle.val()
            & self.room.val()
            & !self.command.valid.val()
            & !self.doorbell.valid.val()
            & !self.scanned.val().get_bit(0)
            & self.event.valid.val();
        self.command.ready.next = self.idle.val() & self.room.val();
        self.doorbell.ready.next = self.idle.val() & self.room.val() & !self.command.valid.val();
        self.event.ready.next = self.idle.val()
            & self.room.val()
            & !self.command.valid.val()
            & !self.doorbell.valid.val()
            & !self.scanned.val().get_bit(0);
        if self.idle.val() & !self.resend.val() {
            self.scan.d.next = self.scan.q.val() + 1;
        }

        if self.idle.val() {
            self.operation.d.next.op = self.op_event.val();
            self.operation.d.next.eqn = self.event.eqn.val();
            self.operation.d.next.wide = bit_cast::<64, 32>(self.event.detail.val());
            self.operation.d.next.log_size = self.command.log_size.val();
            self.operation.d.next.vector = self.command.vector.val();
            self.operation.d.next.index = self.event.object.val();
            self.operation.d.next.arm = false;
            self.operation.d.next.event = self.event.event.val();
            self.operation.d.next.cause = self.event.cause.val();
        }
        if self.take_doorbell.val() {
            self.operation.d.next.op = self.op_doorbell.val();
            self.operation.d.next.eqn = self.doorbell.eqn.val();
            self.operation.d.next.index = self.doorbell.consumer.val();
            self.operation.d.next.arm = self.doorbell.arm.val();
        }
        if self.take_command.val() {
            self.operation.d.next.op = self.op_create.val();
            if self.command.destroy.val() {
                self.operation.d.next.op = self.op_destroy.val();
            }
            self.operation.d.next.eqn = self.command.eqn.val();
            self.operation.d.next.wide = self.command.ring.val();
        }
        self.contexts.read_address.next = self.operation.d.val().eqn;

        // Work: the context of the operation taken, updated.
        self.eq.next = self.contexts.read_data.val();
        self.working.next = self.state.q.val() == self.state_work.val();
        self.is_event.next =
            self.working.val() & (self.operation.q.val().op == self.op_event.val());
        self.is_doorbell.next =
            self.working.val() & (self.operation.q.val().op == self.op_doorbell.val());
        self.ring_size.next = bits::<25>(1) << self.eq.val().log_size;
        self.used.next = self.eq.val().producer - self.eq.val().consumer;
        self.used_after_doorbell.next = self.eq.val().producer - self.operation.q.val().index;
        self.fits.next = self.eq.val().valid
            & !self.eq.val().overrun
            & (bit_cast::<25, 24>(self.used.val()) < self.ring_size.val());
        self.written.next = self.is_event.val() & self.fits.val();
        self.dropped.next = self.is_event.val() & !self.fits.val();
        self.notify.next = self.written.val() & self.eq.val().armed;
        self.doorbell_ok.next = self.is_doorbell.val()
            & self.eq.val().valid
            & (bit_cast::<25, 24>(self.used_after_doorbell.val()) <= self.ring_size.val());
        self.arm_now.next = self.doorbell_ok.val()
            & self.operation.q.val().arm
            & (self.operation.q.val().index != self.eq.val().producer);
        self.doorbell_error.next = self.is_doorbell.val() & !self.doorbell_ok.val();
        self.eq_overflow.next = self.dropped.val();
        self.eq_fatal.next = self.dropped.val() & self.eq.val().valid & !self.eq.val().overrun;

        self.updated.next = self.eq.val();
        if self.written.val() {
            self.updated.next.producer = self.eq.val().producer + 1;
        }
        if self.notify.val() {
            self.updated.next.armed = false;
        }
        if self.dropped.val() & self.eq.val().valid {
            self.updated.next.overrun = true;
        }
        if self.doorbell_ok.val() {
            self.updated.next.consumer = self.operation.q.val().index;
            self.updated.next.armed =
                (self.eq.val().armed | self.operation.q.val().arm) & !self.arm_now.val();
        }
        if self.working.val() & (self.operation.q.val().op == self.op_create.val()) {
            self.updated.next.valid = true;
            self.updated.next.overrun = false;
            self.updated.next.ring_page = self.operation.q.val().wide.get_bits::<52>(12);
            self.updated.next.log_size = self.operation.q.val().log_size;
            self.updated.next.vector = self.operation.q.val().vector;
            self.updated.next.producer = bits::<24>(0);
            self.updated.next.consumer = bits::<24>(0);
            self.updated.next.armed = false;
        }
        if self.working.val() & (self.operation.q.val().op == self.op_destroy.val()) {
            self.updated.next.valid = false;
        }
        self.contexts.write_enable.next = self.working.val();
        self.contexts.write_address.next = self.operation.q.val().eqn;
        self.contexts.write_data.next = self.updated.val();

        // The EQE, at entry `producer mod 2^log_size`.
        self.slot.next =
            self.eq.val().producer & (bit_cast::<24, 25>(self.ring_size.val()) - bits::<24>(1));
        self.pass.next = self.eq.val().producer >> self.eq.val().log_size;
        self.owner.next = !self.pass.val().get_bit(0);
        self.entry.next = bit_cast::<128, 8>(self.operation.q.val().event)
            | (bit_cast::<128, 8>(self.operation.q.val().cause) << 8)
            | (bit_cast::<128, 24>(self.operation.q.val().index) << 32)
            | (bit_cast::<128, 32>(self.operation.q.val().wide.get_bits::<32>(0)) << 64)
            | (bit_cast::<128, 1>(self.owner.val().into()) << 120);

        // Lookup, then message: the vector's mask bit decides.
        self.vector_lookup.next = self.state.q.val() == self.state_lookup.val();
        self.vector_lookup_index.next = self.vector.q.val();
        self.vector_bit.next = bits::<32>(1) << self.vector.q.val();
        self.masked_bits.next = self.msix_mask.val() >> self.vector.q.val();
        self.masked.next = self.masked_bits.val().get_bit(0);

        self.writes.write.next = self.written.val();
        self.writes.data_in.next.message = false;
        self.writes.data_in.next.address = (bit_cast::<64, 52>(self.eq.val().ring_page) << 12)
            + (bit_cast::<64, 24>(self.slot.val()) << 4);
        self.writes.data_in.next.bytes = self.entry.val();

        self.state.d.next = self.state.q.val();
        if self.take_command.val() | self.take_doorbell.val() | self.take_event.val() {
            self.state.d.next = self.state_work.val();
        }
        if self.resend.val() {
            self.state.d.next = self.state_lookup.val();
            self.vector.d.next = self.scan.q.val();
        }
        if self.working.val() {
            self.state.d.next = self.state_idle.val();
            if self.notify.val() | self.arm_now.val() {
                self.state.d.next = self.state_lookup.val();
                self.vector.d.next = self.eq.val().vector;
            }
        }
        if self.state.q.val() == self.state_lookup.val() {
            self.state.d.next = self.state_message.val();
        }
        if self.state.q.val() == self.state_message.val() {
            self.state.d.next = self.state_idle.val();
            if self.masked.val() {
                self.pending.d.next = self.pending.q.val() | self.vector_bit.val();
            } else {
                self.pending.d.next = self.pending.q.val() & !self.vector_bit.val();
                self.writes.write.next = true;
                self.writes.data_in.next.message = true;
                self.writes.data_in.next.address = self.vector_address.val();
                self.writes.data_in.next.bytes = bit_cast::<128, 32>(self.vector_data.val())
                    | (bit_cast::<128, 32>(self.vector_data.val()) << 32)
                    | (bit_cast::<128, 32>(self.vector_data.val()) << 64)
                    | (bit_cast::<128, 32>(self.vector_data.val()) << 96);
            }
        }
        self.msix_pending.next = self.pending.q.val();

        // The output, from the queue's head, in its lanes.
        self.lane.next = self.writes.data_out.val().address.get_bits::<6>(0);
        self.dma.valid.next = !self.writes.empty.val();
        self.dma.addr.next = self.writes.data_out.val().address & self.beat_mask.val();
        self.dma.data.next = bit_cast::<512, 128>(self.writes.data_out.val().bytes)
            | (bit_cast::<512, 128>(self.writes.data_out.val().bytes) << 128)
            | (bit_cast::<512, 128>(self.writes.data_out.val().bytes) << 256)
            | (bit_cast::<512, 128>(self.writes.data_out.val().bytes) << 384);
        self.dma.keep.next = self.entry_keep.val() << self.lane.val();
        self.dma.req_len.next = bits::<13>(16);
        if self.writes.data_out.val().message {
            self.dma.keep.next = self.message_keep.val() << self.lane.val();
            self.dma.req_len.next = bits::<13>(4);
        }
        self.dma.first.next = true;
        self.dma.last.next = true;
        self.dma.req_addr.next = self.writes.data_out.val().address;
        self.writes.read.next = !self.writes.empty.val() & self.dma.ready.val();

        if self.reset.val() {
            self.state.d.next = self.state_idle.val();
            self.pending.d.next = bits::<32>(0);
        }
    }
}
