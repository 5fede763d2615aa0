//! `CqeWriter`: the completion queues. It keeps every CQ's ring state,
//! writes each completion into its CQ's ring in host memory as one 32-byte
//! DMA write in the ABI's CQE format (`rocenic_abi::cqe`, owner bit
//! included), takes the CQ doorbells (consumer index, arming), raises the
//! completion event of an armed CQ, and refuses a CQE its ring has no room
//! for: never an overwrite of an entry software has not consumed.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): empties the pipeline and the
//!   output queues. The CQ table is block RAM and is not cleared: after a
//!   reset every CQ is created again (CREATE writes the whole context).
//! - `command` ([`CqCommand`], valid/ready): CREATE a CQ (ring bus address,
//!   4 KiB aligned; `log_size`, 1 ..= 16; the EQ of its events), producer
//!   and consumer at 0, unarmed; or DESTROY it. The admin engine decides
//!   whether a command is allowed (a QP still using the CQ, a CQ that
//!   exists already); this block carries it out.
//! - `doorbell` ([`CqDoorbell`], valid/ready): a write of a CQ's doorbell
//!   page: the new consumer index (mod 2^24) and the arm bits. A consumer
//!   index that would put more entries in the ring than it holds (ahead of
//!   the NIC's producer), or a doorbell of a CQ that does not exist, is
//!   ignored and pulses `doorbell_error`.
//! - `completion` ([`CompletionIn`], valid/ready): a completion, its fields
//!   already in the ABI's codes. It must be presented only after every DMA
//!   write of the data it reports was taken by the write path that also
//!   takes `dma`, so PCIe's ordering of posted writes puts the CQE after
//!   its data.
//! - `dma` ([`DmaWritePort`]): the CQE writes, one beat each (32 bytes in
//!   one half of a 64-byte beat, `first` and `last` set).
//! - `event` ([`CqEvent`], valid/ready): for the event-queue writer: a
//!   COMPLETION event of an armed CQ (after its CQE's DMA write was
//!   queued), or one CQ_ERR event when a CQ first overflows.
//! - `qp_error` ([`QpErrorOut`], valid/ready): the QP whose CQE did not fit
//!   (cause CQ_OVERFLOW): the transport moves it to ERR.
//! - `overflow`, `doorbell_error`: one-cycle pulses for the `cq_overflows`
//!   and `doorbell_errors` counters.
//!
//! # Rules
//!
//! Entry `p mod 2^log_size` of the ring takes the `p`-th CQE (from 0) with
//! owner bit `((p >> log_size) & 1) ^ 1` ([`rocenic_abi::cqe::owner_for`]).
//! The ring is full when `producer - consumer` (mod 2^24) reaches
//! `2^log_size`. A CQE that finds its ring full, or its CQ already
//! overflowed, or no CQ, is not written: it pulses `overflow` and reports
//! its QP on `qp_error`; the first one of a CQ also raises CQ_ERR and
//! leaves the CQ overflowed until it is destroyed: in the verbs a CQ
//! overrun is an error of the CQ itself, reported as an affiliated
//! asynchronous event (`IBV_EVENT_CQ_ERR`), not a condition it recovers
//! from. Arming is the verbs rule of
//! `ibv_req_notify_cq`: `arm` asks for an event at the next CQE written,
//! `arm_solicited` at the next solicited or error CQE; the event disarms
//! both.
//!
//! # Latency and throughput
//!
//! One command, doorbell or completion per cycle, back to back on the same
//! CQ (the context is read, updated and written in two cycles, the next
//! operation on the same CQ takes the updated context from a forwarding
//! register). Priority: command, doorbell, completion. The DMA write of a
//! completion taken in cycle `t` is valid in cycle `t + 3`. Each output
//! has an 8-entry queue; the block takes an operation only while every
//! queue has room for what is in flight, so a stalled output stalls the
//! inputs and nothing is lost.

use crate::dma::dma_port::DmaWritePort;
use crate::primitives::sync_fifo::SyncFifo;
use crate::primitives::sync_ram::SyncRam;
use rocenic_abi::cqe;
use rocenic_abi::eqe;
use rocenic_abi::registers::limits;
use rust_hdl::prelude::*;

/// CQ number bits: the ABI's CQ count.
pub const CQN_BITS: usize = 10;
/// EQ number bits.
pub const EQN_BITS: usize = 3;
const _: () = assert!(1 << CQN_BITS == limits::CQS && 1 << EQN_BITS == limits::EQS);
const _: () = assert!(limits::LOG_MAX_CQE <= 16 && cqe::LAYOUT.size == 32);

// The CQE is assembled with these bit positions (hdl_gen takes only
// literals); the compiler holds them to the ABI's fields.
const _: () = assert!(cqe::WR_ID.first_bit() == 0 && cqe::WR_ID.width == 64);
const _: () = assert!(cqe::BYTE_LEN.first_bit() == 64 && cqe::BYTE_LEN.width == 32);
const _: () = assert!(cqe::IMM_OR_INVALIDATED.first_bit() == 96);
const _: () = assert!(cqe::QPN.first_bit() == 128 && cqe::QPN.width == 24);
const _: () = assert!(cqe::WQE_INDEX.first_bit() == 160 && cqe::WQE_INDEX.width == 16);
const _: () = assert!(cqe::VENDOR_SYNDROME.first_bit() == 176);
const _: () = assert!(cqe::OPCODE.first_bit() == 192 && cqe::STATUS.first_bit() == 200);
const _: () = assert!(cqe::FLAGS.first_bit() == 208 && cqe::OWNER.first_bit() == 248);

/// `CqOperation::op` values.
const OP_COMPLETION: u64 = 0;
const OP_DOORBELL: u64 = 1;
const OP_CREATE: u64 = 2;
const OP_DESTROY: u64 = 3;

/// Create (`destroy` low) or destroy a CQ (valid/ready).
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct CqCommand {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub destroy: Signal<In, Bit>,
    pub cqn: Signal<In, Bits<CQN_BITS>>,
    pub ring: Signal<In, Bits<64>>,
    pub log_size: Signal<In, Bits<5>>,
    pub eqn: Signal<In, Bits<EQN_BITS>>,
}

/// A CQ doorbell write (valid/ready).
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct CqDoorbell {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub cqn: Signal<In, Bits<CQN_BITS>>,
    pub consumer: Signal<In, Bits<24>>,
    pub arm: Signal<In, Bit>,
    pub arm_solicited: Signal<In, Bit>,
}

/// A completion to write (valid/ready): the CQE's fields in the ABI's
/// codes, its CQ, and whether it is solicited (a SEND with the solicited
/// event bit) for `arm_solicited`.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct CompletionIn {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub cqn: Signal<In, Bits<CQN_BITS>>,
    pub qpn: Signal<In, Bits<24>>,
    pub wr_id: Signal<In, Bits<64>>,
    pub byte_len: Signal<In, Bits<32>>,
    pub imm_or_invalidated: Signal<In, Bits<32>>,
    pub wqe_index: Signal<In, Bits<16>>,
    pub vendor_syndrome: Signal<In, Bits<8>>,
    pub opcode: Signal<In, Bits<8>>,
    pub status: Signal<In, Bits<8>>,
    pub flags: Signal<In, Bits<8>>,
    pub solicited: Signal<In, Bit>,
}

/// An event for the event-queue writer (valid/ready): an `event_type`
/// about CQ `object`, for EQ `eqn`.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct CqEvent {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub eqn: Signal<Out, Bits<EQN_BITS>>,
    pub event: Signal<Out, Bits<8>>,
    pub object: Signal<Out, Bits<24>>,
}

/// A QP to move to ERR (valid/ready), with a `qp_error_cause`.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct QpErrorOut {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<24>>,
    pub cause: Signal<Out, Bits<8>>,
}

/// One CQ's state, one word of the CQ table.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct CqContext {
    pub valid: Bit,
    pub overflowed: Bit,
    /// The ring's bus address over 4 KiB.
    pub ring_page: Bits<52>,
    pub log_size: Bits<5>,
    pub eqn: Bits<EQN_BITS>,
    /// CQEs written since creation (mod 2^24).
    pub producer: Bits<24>,
    /// CQEs software has consumed (mod 2^24).
    pub consumer: Bits<24>,
    pub arm: Bit,
    pub arm_solicited: Bit,
}

/// The operation taken in one cycle, as the next cycle works on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct CqOperation {
    pub op: Bits<2>,
    pub cqn: Bits<CQN_BITS>,
    /// CREATE: the ring address. Completion: `wr_id`.
    pub wide: Bits<64>,
    /// CREATE: `log_size`.
    pub log_size: Bits<5>,
    /// CREATE: `eqn`.
    pub eqn: Bits<EQN_BITS>,
    /// Doorbell: the consumer index. Completion: the QPN.
    pub index: Bits<24>,
    /// Doorbell: `arm`. Completion: solicited.
    pub arm: Bit,
    pub arm_solicited: Bit,
    pub byte_len: Bits<32>,
    pub imm_or_invalidated: Bits<32>,
    pub wqe_index: Bits<16>,
    pub vendor_syndrome: Bits<8>,
    pub opcode: Bits<8>,
    pub status: Bits<8>,
    pub flags: Bits<8>,
}

/// A queued CQE write: the entry's bus address and its 32 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct CqeWrite {
    pub address: Bits<64>,
    pub entry: Bits<256>,
}

/// A queued event.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct QueuedEvent {
    pub eqn: Bits<EQN_BITS>,
    pub event: Bits<8>,
    pub object: Bits<24>,
}

/// A queued QP error.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct QueuedQpError {
    pub qpn: Bits<24>,
    pub cause: Bits<8>,
}

/// Output queue address bits: 8 entries.
const QUEUE_BITS: usize = 3;

/// The CQs (see the module doc).
#[derive(LogicBlock)]
pub struct CqeWriter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub command: CqCommand,
    pub doorbell: CqDoorbell,
    pub completion: CompletionIn,
    pub dma: DmaWritePort,
    pub event: CqEvent,
    pub qp_error: QpErrorOut,
    pub overflow: Signal<Out, Bit>,
    pub doorbell_error: Signal<Out, Bit>,

    contexts: SyncRam<CqContext, CQN_BITS>,
    writes: SyncFifo<CqeWrite, QUEUE_BITS, 4>,
    events: SyncFifo<QueuedEvent, QUEUE_BITS, 4>,
    qp_errors: SyncFifo<QueuedQpError, QUEUE_BITS, 4>,

    /// The operation whose context the table presents this cycle.
    working: DFF<Bit>,
    operation: DFF<CqOperation>,
    /// The context written at the last edge, for an operation on the same
    /// CQ right behind it.
    last_written_valid: DFF<Bit>,
    last_written_cqn: DFF<Bits<CQN_BITS>>,
    last_written: DFF<CqContext>,

    room: Signal<Local, Bit>,
    take_command: Signal<Local, Bit>,
    take_doorbell: Signal<Local, Bit>,
    take_completion: Signal<Local, Bit>,
    cq: Signal<Local, CqContext>,
    updated: Signal<Local, CqContext>,
    ring_size: Signal<Local, Bits<25>>,
    used: Signal<Local, Bits<24>>,
    used_after_doorbell: Signal<Local, Bits<24>>,
    is_completion: Signal<Local, Bit>,
    is_doorbell: Signal<Local, Bit>,
    fits: Signal<Local, Bit>,
    written: Signal<Local, Bit>,
    refused: Signal<Local, Bit>,
    notify: Signal<Local, Bit>,
    doorbell_ok: Signal<Local, Bit>,
    slot: Signal<Local, Bits<24>>,
    /// Passes over the ring so far: its parity gives the owner bit.
    pass: Signal<Local, Bits<24>>,
    owner: Signal<Local, Bit>,
    entry: Signal<Local, Bits<256>>,
    head_half: Signal<Local, Bit>,

    op_completion: Constant<Bits<2>>,
    op_doorbell: Constant<Bits<2>>,
    op_create: Constant<Bits<2>>,
    op_destroy: Constant<Bits<2>>,
    queue_limit: Constant<Bits<4>>,
    success: Constant<Bits<8>>,
    event_completion: Constant<Bits<8>>,
    event_cq_error: Constant<Bits<8>>,
    cause_cq_overflow: Constant<Bits<8>>,
    beat_mask: Constant<Bits<64>>,
    low_half: Constant<Bits<64>>,
    high_half: Constant<Bits<64>>,
}

fn code(set: &rocenic_abi::layout::CodeSet, name: &str) -> Constant<Bits<8>> {
    let code = set
        .by_name(name)
        .unwrap_or_else(|| panic!("the ABI's {} has no {name}", set.name));
    Constant::new(bits(code.value))
}

impl Default for CqeWriter {
    fn default() -> Self {
        CqeWriter {
            clock: Default::default(),
            reset: Default::default(),
            command: Default::default(),
            doorbell: Default::default(),
            completion: Default::default(),
            dma: Default::default(),
            event: Default::default(),
            qp_error: Default::default(),
            overflow: Default::default(),
            doorbell_error: Default::default(),
            contexts: Default::default(),
            writes: Default::default(),
            events: Default::default(),
            qp_errors: Default::default(),
            working: Default::default(),
            operation: Default::default(),
            last_written_valid: Default::default(),
            last_written_cqn: Default::default(),
            last_written: Default::default(),
            room: Default::default(),
            take_command: Default::default(),
            take_doorbell: Default::default(),
            take_completion: Default::default(),
            cq: Default::default(),
            updated: Default::default(),
            ring_size: Default::default(),
            used: Default::default(),
            used_after_doorbell: Default::default(),
            is_completion: Default::default(),
            is_doorbell: Default::default(),
            fits: Default::default(),
            written: Default::default(),
            refused: Default::default(),
            notify: Default::default(),
            doorbell_ok: Default::default(),
            slot: Default::default(),
            pass: Default::default(),
            owner: Default::default(),
            entry: Default::default(),
            head_half: Default::default(),
            // An operation taken now pushes one entry two edges on; what
            // the operation in flight pushes comes first.
            op_completion: Constant::new(bits(OP_COMPLETION)),
            op_doorbell: Constant::new(bits(OP_DOORBELL)),
            op_create: Constant::new(bits(OP_CREATE)),
            op_destroy: Constant::new(bits(OP_DESTROY)),
            queue_limit: Constant::new(bits((1 << QUEUE_BITS) - 1)),
            success: code(&rocenic_abi::codes::WC_STATUS, "SUCCESS"),
            event_completion: code(&eqe::EVENT_TYPE, "COMPLETION"),
            event_cq_error: code(&eqe::EVENT_TYPE, "CQ_ERR"),
            cause_cq_overflow: code(&eqe::QP_ERROR_CAUSE, "CQ_OVERFLOW"),
            beat_mask: Constant::new(bits(!63u64)),
            low_half: Constant::new(bits(0x0000_0000_FFFF_FFFF)),
            high_half: Constant::new(bits(0xFFFF_FFFF_0000_0000)),
        }
    }
}

impl Logic for CqeWriter {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, contexts, writes, events, qp_errors);
        dff_setup!(
            self,
            clock,
            working,
            operation,
            last_written_valid,
            last_written_cqn,
            last_written
        );
        self.writes.reset.next = self.reset.val();
        self.events.reset.next = self.reset.val();
        self.qp_errors.reset.next = self.reset.val();

        // Take one operation while every queue has room for it and for the
        // one in flight.
        self.room.next = ((bit_cast::<4, 4>(self.writes.fill.val())
            + bit_cast::<4, 1>(self.working.q.val().into()))
            < self.queue_limit.val())
            & ((bit_cast::<4, 4>(self.events.fill.val())
                + bit_cast::<4, 1>(self.working.q.val().into()))
                < self.queue_limit.val())
            & ((bit_cast::<4, 4>(self.qp_errors.fill.val())
                + bit_cast::<4, 1>(self.working.q.val().into()))
                < self.queue_limit.val())
            & !self.reset.val();
        self.take_command.next = self.room.val() & self.command.valid.val();
        self.take_doorbell.next =
            self.room.val() & !self.command.valid.val() & self.doorbell.valid.val();
        self.take_completion.next = self.room.val()
            & !self.command.valid.val()
            & !self.doorbell.valid.val()
            & self.completion.valid.val();
        self.command.ready.next = self.room.val();
        self.doorbell.ready.next = self.room.val() & !self.command.valid.val();
        self.completion.ready.next =
            self.room.val() & !self.command.valid.val() & !self.doorbell.valid.val();

        self.working.d.next =
            self.take_command.val() | self.take_doorbell.val() | self.take_completion.val();
        self.operation.d.next.op = self.op_completion.val();
        self.operation.d.next.cqn = self.completion.cqn.val();
        self.operation.d.next.wide = self.completion.wr_id.val();
        self.operation.d.next.log_size = self.command.log_size.val();
        self.operation.d.next.eqn = self.command.eqn.val();
        self.operation.d.next.index = self.completion.qpn.val();
        self.operation.d.next.arm = self.completion.solicited.val();
        self.operation.d.next.arm_solicited = false;
        self.operation.d.next.byte_len = self.completion.byte_len.val();
        self.operation.d.next.imm_or_invalidated = self.completion.imm_or_invalidated.val();
        self.operation.d.next.wqe_index = self.completion.wqe_index.val();
        self.operation.d.next.vendor_syndrome = self.completion.vendor_syndrome.val();
        self.operation.d.next.opcode = self.completion.opcode.val();
        self.operation.d.next.status = self.completion.status.val();
        self.operation.d.next.flags = self.completion.flags.val();
        if self.take_doorbell.val() {
            self.operation.d.next.op = self.op_doorbell.val();
            self.operation.d.next.cqn = self.doorbell.cqn.val();
            self.operation.d.next.index = self.doorbell.consumer.val();
            self.operation.d.next.arm = self.doorbell.arm.val();
            self.operation.d.next.arm_solicited = self.doorbell.arm_solicited.val();
        }
        if self.take_command.val() {
            self.operation.d.next.op = self.op_create.val();
            if self.command.destroy.val() {
                self.operation.d.next.op = self.op_destroy.val();
            }
            self.operation.d.next.cqn = self.command.cqn.val();
            self.operation.d.next.wide = self.command.ring.val();
        }
        self.contexts.read_address.next = self.operation.d.val().cqn;

        // The context of the operation in flight, updated.
        self.cq.next = self.contexts.read_data.val();
        if self.last_written_valid.q.val()
            & (self.last_written_cqn.q.val() == self.operation.q.val().cqn)
        {
            self.cq.next = self.last_written.q.val();
        }
        self.is_completion.next =
            self.working.q.val() & (self.operation.q.val().op == self.op_completion.val());
        self.is_doorbell.next =
            self.working.q.val() & (self.operation.q.val().op == self.op_doorbell.val());
        self.ring_size.next = bits::<25>(1) << self.cq.val().log_size;
        self.used.next = self.cq.val().producer - self.cq.val().consumer;
        self.used_after_doorbell.next = self.cq.val().producer - self.operation.q.val().index;
        self.fits.next = self.cq.val().valid
            & !self.cq.val().overflowed
            & (bit_cast::<25, 24>(self.used.val()) < self.ring_size.val());
        self.written.next = self.is_completion.val() & self.fits.val();
        self.refused.next = self.is_completion.val() & !self.fits.val();
        self.notify.next = self.written.val()
            & (self.cq.val().arm
                | (self.cq.val().arm_solicited
                    & (self.operation.q.val().arm
                        | (self.operation.q.val().status != self.success.val()))));
        self.doorbell_ok.next = self.is_doorbell.val()
            & self.cq.val().valid
            & (bit_cast::<25, 24>(self.used_after_doorbell.val()) <= self.ring_size.val());
        self.doorbell_error.next = self.is_doorbell.val() & !self.doorbell_ok.val();
        self.overflow.next = self.refused.val();

        self.updated.next = self.cq.val();
        if self.written.val() {
            self.updated.next.producer = self.cq.val().producer + 1;
        }
        if self.notify.val() {
            self.updated.next.arm = false;
            self.updated.next.arm_solicited = false;
        }
        if self.refused.val() & self.cq.val().valid {
            self.updated.next.overflowed = true;
        }
        if self.doorbell_ok.val() {
            self.updated.next.consumer = self.operation.q.val().index;
            self.updated.next.arm = self.cq.val().arm | self.operation.q.val().arm;
            self.updated.next.arm_solicited =
                self.cq.val().arm_solicited | self.operation.q.val().arm_solicited;
        }
        if self.working.q.val() & (self.operation.q.val().op == self.op_create.val()) {
            self.updated.next.valid = true;
            self.updated.next.overflowed = false;
            self.updated.next.ring_page = self.operation.q.val().wide.get_bits::<52>(12);
            self.updated.next.log_size = self.operation.q.val().log_size;
            self.updated.next.eqn = self.operation.q.val().eqn;
            self.updated.next.producer = bits::<24>(0);
            self.updated.next.consumer = bits::<24>(0);
            self.updated.next.arm = false;
            self.updated.next.arm_solicited = false;
        }
        if self.working.q.val() & (self.operation.q.val().op == self.op_destroy.val()) {
            self.updated.next.valid = false;
        }
        self.contexts.write_enable.next = self.working.q.val();
        self.contexts.write_address.next = self.operation.q.val().cqn;
        self.contexts.write_data.next = self.updated.val();
        self.last_written_valid.d.next = self.working.q.val();
        self.last_written_cqn.d.next = self.operation.q.val().cqn;
        self.last_written.d.next = self.updated.val();

        // The CQE, at entry `producer mod 2^log_size`.
        self.slot.next =
            self.cq.val().producer & (bit_cast::<24, 25>(self.ring_size.val()) - bits::<24>(1));
        self.pass.next = self.cq.val().producer >> self.cq.val().log_size;
        self.owner.next = !self.pass.val().get_bit(0);
        self.entry.next = bit_cast::<256, 64>(self.operation.q.val().wide)
            | (bit_cast::<256, 32>(self.operation.q.val().byte_len) << 64)
            | (bit_cast::<256, 32>(self.operation.q.val().imm_or_invalidated) << 96)
            | (bit_cast::<256, 24>(self.operation.q.val().index) << 128)
            | (bit_cast::<256, 16>(self.operation.q.val().wqe_index) << 160)
            | (bit_cast::<256, 8>(self.operation.q.val().vendor_syndrome) << 176)
            | (bit_cast::<256, 8>(self.operation.q.val().opcode) << 192)
            | (bit_cast::<256, 8>(self.operation.q.val().status) << 200)
            | (bit_cast::<256, 8>(self.operation.q.val().flags) << 208)
            | (bit_cast::<256, 1>(self.owner.val().into()) << 248);
        self.writes.write.next = self.written.val();
        self.writes.data_in.next.address = (bit_cast::<64, 52>(self.cq.val().ring_page) << 12)
            + (bit_cast::<64, 24>(self.slot.val()) << 5);
        self.writes.data_in.next.entry = self.entry.val();

        self.events.write.next = self.notify.val()
            | (self.refused.val() & self.cq.val().valid & !self.cq.val().overflowed);
        self.events.data_in.next.eqn = self.cq.val().eqn;
        self.events.data_in.next.event = self.event_completion.val();
        if self.refused.val() {
            self.events.data_in.next.event = self.event_cq_error.val();
        }
        self.events.data_in.next.object = bit_cast::<24, CQN_BITS>(self.operation.q.val().cqn);

        self.qp_errors.write.next = self.refused.val();
        self.qp_errors.data_in.next.qpn = self.operation.q.val().index;
        self.qp_errors.data_in.next.cause = self.cause_cq_overflow.val();

        // The outputs, from the queues' heads.
        self.head_half.next = self.writes.data_out.val().address.get_bit(5);
        self.dma.valid.next = !self.writes.empty.val();
        self.dma.addr.next = self.writes.data_out.val().address & self.beat_mask.val();
        self.dma.data.next = bit_cast::<512, 256>(self.writes.data_out.val().entry);
        self.dma.keep.next = self.low_half.val();
        if self.head_half.val() {
            self.dma.data.next = bit_cast::<512, 256>(self.writes.data_out.val().entry) << 256;
            self.dma.keep.next = self.high_half.val();
        }
        self.dma.first.next = true;
        self.dma.last.next = true;
        self.dma.req_addr.next = self.writes.data_out.val().address;
        self.dma.req_len.next = bits::<13>(32);
        self.writes.read.next = !self.writes.empty.val() & self.dma.ready.val();

        self.event.valid.next = !self.events.empty.val();
        self.event.eqn.next = self.events.data_out.val().eqn;
        self.event.event.next = self.events.data_out.val().event;
        self.event.object.next = self.events.data_out.val().object;
        self.events.read.next = !self.events.empty.val() & self.event.ready.val();

        self.qp_error.valid.next = !self.qp_errors.empty.val();
        self.qp_error.qpn.next = self.qp_errors.data_out.val().qpn;
        self.qp_error.cause.next = self.qp_errors.data_out.val().cause;
        self.qp_errors.read.next = !self.qp_errors.empty.val() & self.qp_error.ready.val();

        if self.reset.val() {
            self.working.d.next = false;
            self.last_written_valid.d.next = false;
        }
    }
}
