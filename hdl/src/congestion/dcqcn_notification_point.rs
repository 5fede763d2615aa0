//! `DcqcnNotificationPoint`: DCQCN's notification point for `2^A`
//! receiving QPs, one event per cycle: a CE-marked RoCEv2 packet for a QP
//! asks for a CNP to the QP's peer unless the QP sent one less than
//! `cfg.interval` time units before (NVIDIA's `min_time_between_cnps`).
//! Each QP's last CNP time sits in one block RAM word, read, updated and
//! written back in a forwarding read-modify-write. The event function is
//! `rocenic_model::dcqcn_integer::notify` (the block's oracle, bit for
//! bit).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops the events in flight
//!   (their records are not written). The RAM is zero at power-up, every
//!   QP's reset record; a QP created later is reset by an event.
//! - `event_valid`, `event_reset` (high: the QP's record to zero; low: a
//!   CE-marked packet for the QP), `event_qpn` (`A` bits), `now` (32 bits,
//!   the time base). No ready: an event is taken in every cycle its valid
//!   is high.
//! - `cfg` ([`NpParamsPort`]): `enabled`, `interval`, read in the cycle
//!   after an event's: change them with no event in flight.
//! - The outcome of each event: `out_valid`, `out_qpn`, `out_cnp` (send a
//!   CNP to the QP's peer; also the `tx_cnps` counter's increment) and
//!   `out_record` (the QP's record after the event, the RAM word).
//!
//! # Latency and throughput
//!
//! An event presented in cycle `c` has its outcome in `c + 2`. One event
//! per cycle, indefinitely, the same QP in consecutive cycles included: a
//! read that meets the write of the event just before on the same QP
//! takes that event's record from the outcome register (block RAM's
//! read-during-write result is never used). The update is one 32-bit
//! subtract and compare after the RAM's output.
//!
//! # Memory
//!
//! One `2^A` x [`NP_RECORD_BITS`] RAM (`SyncRam`, marked for block RAM).

use crate::primitives::sync_ram::SyncRam;
use rust_hdl::prelude::*;

/// Bits of a QP's record.
pub const NP_RECORD_BITS: usize = 33;

/// One receiving QP's state: `rocenic_model::dcqcn_integer::NpRecord`.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct NpRecord {
    pub last_cnp: Bits<32>,
    pub sent: Bit,
}

impl NpRecord {
    /// The record as the model holds it.
    pub fn to_model(&self) -> rocenic_model::dcqcn_integer::NpRecord {
        rocenic_model::dcqcn_integer::NpRecord {
            last_cnp: self.last_cnp.to_u64() as u32,
            sent: self.sent,
        }
    }
}

/// The notification point's parameters, the fields of the model's
/// `NpParams` (Verilog `cfg$enabled`, `cfg$interval`).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "NpParamsSource"]
pub struct NpParamsPort {
    pub enabled: Signal<In, Bit>,
    pub interval: Signal<In, Bits<32>>,
}

/// The driving side of [`NpParamsPort`] (the congestion registers').
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "NpParamsPort"]
pub struct NpParamsSource {
    pub enabled: Signal<Out, Bit>,
    pub interval: Signal<Out, Bits<32>>,
}

impl NpParamsPort {
    /// Drives both signals from the model's parameters (a test bench's,
    /// in rust-hdl's simulator).
    pub fn drive(&mut self, p: &rocenic_model::dcqcn_integer::NpParams) {
        self.enabled.next = p.enabled;
        self.interval.next = bits(p.interval.into());
    }
}

/// The notification point (see the module doc).
#[derive(LogicBlock)]
pub struct DcqcnNotificationPoint<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub event_valid: Signal<In, Bit>,
    pub event_reset: Signal<In, Bit>,
    pub event_qpn: Signal<In, Bits<A>>,
    pub now: Signal<In, Bits<32>>,
    pub cfg: NpParamsPort,

    pub out_valid: Signal<Out, Bit>,
    pub out_qpn: Signal<Out, Bits<A>>,
    pub out_cnp: Signal<Out, Bit>,
    pub out_record: Signal<Out, NpRecord>,

    records: SyncRam<NpRecord, A>,
    // The event whose record the RAM presents this cycle.
    s1_valid: DFF<Bit>,
    s1_reset: DFF<Bit>,
    s1_qpn: DFF<Bits<A>>,
    s1_now: DFF<Bits<32>>,
    // The outcome of the event before it: also the forwarded record.
    done_valid: DFF<Bit>,
    done_qpn: DFF<Bits<A>>,
    done_cnp: DFF<Bit>,
    done_record: DFF<NpRecord>,

    record: Signal<Local, NpRecord>,
    updated: Signal<Local, NpRecord>,
    elapsed: Signal<Local, Bits<32>>,
    cnp: Signal<Local, Bit>,
    blank: Constant<NpRecord>,
}

impl<const A: usize> Default for DcqcnNotificationPoint<A> {
    fn default() -> Self {
        DcqcnNotificationPoint {
            clock: Default::default(),
            reset: Default::default(),
            event_valid: Default::default(),
            event_reset: Default::default(),
            event_qpn: Default::default(),
            now: Default::default(),
            cfg: Default::default(),
            out_valid: Default::default(),
            out_qpn: Default::default(),
            out_cnp: Default::default(),
            out_record: Default::default(),
            records: SyncRam::block_ram(),
            s1_valid: Default::default(),
            s1_reset: Default::default(),
            s1_qpn: Default::default(),
            s1_now: Default::default(),
            done_valid: Default::default(),
            done_qpn: Default::default(),
            done_cnp: Default::default(),
            done_record: Default::default(),
            record: Default::default(),
            updated: Default::default(),
            elapsed: Default::default(),
            cnp: Default::default(),
            blank: Constant::new(NpRecord::default()),
        }
    }
}

impl<const A: usize> Logic for DcqcnNotificationPoint<A> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, records);
        dff_setup!(
            self,
            clock,
            s1_valid,
            s1_reset,
            s1_qpn,
            s1_now,
            done_valid,
            done_qpn,
            done_cnp,
            done_record
        );

        // The event's cycle: its record is read.
        self.records.read_address.next = self.event_qpn.val();
        self.s1_valid.d.next = self.event_valid.val() & !self.reset.val();
        self.s1_reset.d.next = self.event_reset.val();
        self.s1_qpn.d.next = self.event_qpn.val();
        self.s1_now.d.next = self.now.val();

        // The next cycle: the record, or the one written at the read's
        // edge by the event before on the same QP.
        self.record.next = self.records.read_data.val();
        if self.done_valid.q.val() & (self.done_qpn.q.val() == self.s1_qpn.q.val()) {
            self.record.next = self.done_record.q.val();
        }
        self.elapsed.next = self.s1_now.q.val() - self.record.val().last_cnp;
        self.cnp.next = self.s1_valid.q.val()
            & !self.s1_reset.q.val()
            & self.cfg.enabled.val()
            & (!self.record.val().sent | (self.elapsed.val() >= self.cfg.interval.val()));
        self.updated.next = self.record.val();
        if self.s1_reset.q.val() {
            self.updated.next = self.blank.val();
        }
        if self.cnp.val() {
            self.updated.next.last_cnp = self.s1_now.q.val();
            self.updated.next.sent = true;
        }
        self.records.write_enable.next = self.s1_valid.q.val() & !self.reset.val();
        self.records.write_address.next = self.s1_qpn.q.val();
        self.records.write_data.next = self.updated.val();

        // The outcome, registered.
        self.done_valid.d.next = self.s1_valid.q.val() & !self.reset.val();
        self.done_qpn.d.next = self.s1_qpn.q.val();
        self.done_cnp.d.next = self.cnp.val();
        self.done_record.d.next = self.updated.val();
        self.out_valid.next = self.done_valid.q.val();
        self.out_qpn.next = self.done_qpn.q.val();
        self.out_cnp.next = self.done_cnp.q.val();
        self.out_record.next = self.done_record.q.val();
    }
}
