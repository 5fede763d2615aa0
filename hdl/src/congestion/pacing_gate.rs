//! `PacingGate`: the transmit side's rate check for `2^A` sending QPs,
//! one question per cycle: may this QP start a frame of this many bytes
//! now, at its rate (DCQCN's Rc)? Each QP's rate and token count sit in
//! one block RAM word, read, updated and written back in a forwarding
//! read-modify-write. A throttled QP earns its rate in tokens every cycle
//! and pays for each frame it starts; an unthrottled one is never held,
//! but counted at the line rate, so that a cut finds in its count the
//! bytes it had decided ahead of the wire.
//! The event function, its units and widths are
//! `rocenic_model::pacing::pace` (the block's oracle, bit for bit).
//!
//! A scheduler asks the gate for each QP with work in turn; an idle QP
//! costs its RAM word only.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops the events in flight
//!   (their records are not written). The RAM is zero at power-up: every
//!   QP unthrottled.
//! - `event_valid`, `event_qpn` (`A` bits), `event_value` (32 bits),
//!   `now` (32 bits, the clock cycle count), and the event's kind:
//!   `event_reset` high: the QP unthrottled, count 0; else `event_rate`
//!   high: `event_value` is the QP's rate in kb/s from now on; else
//!   `event_charge` high: frames of `event_value[15:0]` bytes were
//!   decided, the QP pays for them whatever its count; else a send: may
//!   the QP start a frame of `event_value[15:0]` bytes? No ready: an event
//!   is taken in every cycle its valid is high.
//! - `cfg` ([`PacingParamsPort`]): `line_rate`, `byte_cost`, `burst`,
//!   read in an event's cycle and the one after: change them with no
//!   event in flight.
//! - The outcome of each event: `out_valid`, `out_qpn`, `out_allowed`
//!   (a send granted: the frame may start; it has been paid for) and
//!   `out_record` (the QP's record after the event, the RAM word).
//!
//! # Latency and throughput
//!
//! An event presented in cycle `c` has its outcome in `c + 2`. One event
//! per cycle, indefinitely, the same QP in consecutive cycles included: a
//! read that meets the write of the event just before on the same QP
//! takes that event's record from the outcome register (block RAM's
//! read-during-write result is never used). A frame's price (bytes x
//! `byte_cost`, two 16 x 16 products) is formed in the event's cycle; the
//! cycle after the RAM's output holds the earning (two 16 x 16 products),
//! a 52-bit add, the cap, and the payment.
//!
//! # Memory
//!
//! One `2^A` x [`PACING_RECORD_BITS`] RAM (`SyncRam`, marked for block
//! RAM).

use crate::primitives::sync_ram::SyncRam;
use crate::primitives::wide::bits_from_words;
use rust_hdl::prelude::*;

/// Bits of a QP's record.
pub const PACING_RECORD_BITS: usize = 32 + 52 + 32;

/// One sending QP's state: `rocenic_model::pacing::PacingRecord`.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PacingRecord {
    pub rate: Bits<32>,
    pub tokens: Bits<52>,
    pub last: Bits<32>,
}

impl PacingRecord {
    /// The record as the model holds it.
    pub fn to_model(&self) -> rocenic_model::pacing::PacingRecord {
        rocenic_model::pacing::PacingRecord {
            rate: self.rate.to_u64() as u32,
            tokens: self.tokens.to_u64(),
            last: self.last.to_u64() as u32,
        }
    }

    /// The model's record from an `out_record` port's bits (64-bit words,
    /// least significant first, the fields in declaration order from bit
    /// 0, as rust-hdl packs a `LogicStruct`).
    pub fn model_from_words(words: &[u64]) -> rocenic_model::pacing::PacingRecord {
        let port = bits_from_words::<PACING_RECORD_BITS>(words);
        PacingRecord {
            rate: port.get_bits::<32>(0),
            tokens: port.get_bits::<52>(32),
            last: port.get_bits::<32>(84),
        }
        .to_model()
    }
}

/// The gate's parameters, the fields of the model's `PacingParams`
/// (Verilog `cfg$line_rate`, `cfg$byte_cost`, `cfg$burst`).
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct PacingParamsPort {
    pub line_rate: Signal<In, Bits<32>>,
    pub byte_cost: Signal<In, Bits<32>>,
    pub burst: Signal<In, Bits<47>>,
}

impl PacingParamsPort {
    /// Drives the signals from the model's parameters (a test bench's, in
    /// rust-hdl's simulator).
    pub fn drive(&mut self, p: &rocenic_model::pacing::PacingParams) {
        self.line_rate.next = bits(p.line_rate.into());
        self.byte_cost.next = bits(p.byte_cost.into());
        self.burst.next = bits(p.burst);
    }
}

/// The pacing gate (see the module doc).
#[derive(LogicBlock)]
pub struct PacingGate<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub event_valid: Signal<In, Bit>,
    pub event_reset: Signal<In, Bit>,
    pub event_rate: Signal<In, Bit>,
    pub event_charge: Signal<In, Bit>,
    pub event_qpn: Signal<In, Bits<A>>,
    pub event_value: Signal<In, Bits<32>>,
    pub now: Signal<In, Bits<32>>,
    pub cfg: PacingParamsPort,

    pub out_valid: Signal<Out, Bit>,
    pub out_qpn: Signal<Out, Bits<A>>,
    pub out_allowed: Signal<Out, Bit>,
    pub out_record: Signal<Out, PacingRecord>,

    records: SyncRam<PacingRecord, A>,
    // The event whose record the RAM presents this cycle.
    s1_valid: DFF<Bit>,
    s1_reset: DFF<Bit>,
    s1_rate: DFF<Bit>,
    s1_charge: DFF<Bit>,
    s1_qpn: DFF<Bits<A>>,
    s1_value: DFF<Bits<32>>,
    s1_now: DFF<Bits<32>>,
    s1_price: DFF<Bits<52>>,
    // The outcome of the event before it: also the forwarded record.
    done_valid: DFF<Bit>,
    done_qpn: DFF<Bits<A>>,
    done_allowed: DFF<Bit>,
    done_record: DFF<PacingRecord>,

    price_lo: Signal<Local, Bits<32>>,
    price_hi: Signal<Local, Bits<32>>,
    record: Signal<Local, PacingRecord>,
    throttled: Signal<Local, Bit>,
    earning: Signal<Local, Bits<32>>,
    elapsed: Signal<Local, Bits<32>>,
    counted: Signal<Local, Bits<16>>,
    earn_lo: Signal<Local, Bits<32>>,
    earn_hi: Signal<Local, Bits<32>>,
    sum: Signal<Local, Bits<52>>,
    burst: Signal<Local, Bits<52>>,
    earned: Signal<Local, Bits<52>>,
    send: Signal<Local, Bit>,
    charge: Signal<Local, Bit>,
    allowed: Signal<Local, Bit>,
    updated: Signal<Local, PacingRecord>,
    blank: Constant<PacingRecord>,
}

impl<const A: usize> Default for PacingGate<A> {
    fn default() -> Self {
        PacingGate {
            clock: Default::default(),
            reset: Default::default(),
            event_valid: Default::default(),
            event_reset: Default::default(),
            event_rate: Default::default(),
            event_charge: Default::default(),
            event_qpn: Default::default(),
            event_value: Default::default(),
            now: Default::default(),
            cfg: Default::default(),
            out_valid: Default::default(),
            out_qpn: Default::default(),
            out_allowed: Default::default(),
            out_record: Default::default(),
            records: SyncRam::block_ram(),
            s1_valid: Default::default(),
            s1_reset: Default::default(),
            s1_rate: Default::default(),
            s1_charge: Default::default(),
            s1_qpn: Default::default(),
            s1_value: Default::default(),
            s1_now: Default::default(),
            s1_price: Default::default(),
            done_valid: Default::default(),
            done_qpn: Default::default(),
            done_allowed: Default::default(),
            done_record: Default::default(),
            price_lo: Default::default(),
            price_hi: Default::default(),
            record: Default::default(),
            throttled: Default::default(),
            earning: Default::default(),
            elapsed: Default::default(),
            counted: Default::default(),
            earn_lo: Default::default(),
            earn_hi: Default::default(),
            sum: Default::default(),
            burst: Default::default(),
            earned: Default::default(),
            send: Default::default(),
            charge: Default::default(),
            allowed: Default::default(),
            updated: Default::default(),
            blank: Constant::new(PacingRecord::default()),
        }
    }
}

impl<const A: usize> Logic for PacingGate<A> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, records);
        dff_setup!(
            self,
            clock,
            s1_valid,
            s1_reset,
            s1_rate,
            s1_charge,
            s1_qpn,
            s1_value,
            s1_now,
            s1_price,
            done_valid,
            done_qpn,
            done_allowed,
            done_record
        );

        // The event's cycle: its record is read and a frame's price formed.
        self.records.read_address.next = self.event_qpn.val();
        self.s1_valid.d.next = self.event_valid.val() & !self.reset.val();
        self.s1_reset.d.next = self.event_reset.val();
        self.s1_rate.d.next = self.event_rate.val();
        self.s1_charge.d.next = self.event_charge.val();
        self.s1_qpn.d.next = self.event_qpn.val();
        self.s1_value.d.next = self.event_value.val();
        self.s1_now.d.next = self.now.val();
        self.price_lo.next =
            self.event_value.val().get_bits::<16>(0) * self.cfg.byte_cost.val().get_bits::<16>(0);
        self.price_hi.next =
            self.event_value.val().get_bits::<16>(0) * self.cfg.byte_cost.val().get_bits::<16>(16);
        self.s1_price.d.next = bit_cast::<52, 32>(self.price_lo.val())
            + (bit_cast::<52, 32>(self.price_hi.val()) << 16);

        // The next cycle: the record, or the one written at the read's
        // edge by the event before on the same QP.
        self.record.next = self.records.read_data.val();
        if self.done_valid.q.val() & (self.done_qpn.q.val() == self.s1_qpn.q.val()) {
            self.record.next = self.done_record.q.val();
        }
        self.throttled.next =
            self.record.val().rate.any() & (self.record.val().rate < self.cfg.line_rate.val());

        // The tokens earned since the record's last event, capped.
        self.elapsed.next = self.s1_now.q.val() - self.record.val().last;
        self.counted.next = self.elapsed.val().get_bits::<16>(0);
        if self.elapsed.val().get_bits::<16>(16).any() {
            self.counted.next = bits::<16>(0xFFFF);
        }
        self.earning.next = self.cfg.line_rate.val();
        if self.throttled.val() {
            self.earning.next = self.record.val().rate;
        }
        self.earn_lo.next = self.earning.val().get_bits::<16>(0) * self.counted.val();
        self.earn_hi.next = self.earning.val().get_bits::<16>(16) * self.counted.val();
        self.sum.next = self.record.val().tokens
            + bit_cast::<52, 32>(self.earn_lo.val())
            + (bit_cast::<52, 32>(self.earn_hi.val()) << 16);
        self.burst.next = bit_cast::<52, 47>(self.cfg.burst.val());
        self.earned.next = self.sum.val();
        if !self.sum.val().get_bit(51) & (self.sum.val() > self.burst.val()) {
            self.earned.next = self.burst.val();
        }

        // A send: granted unless a throttled QP's count is negative; paid,
        // as a charge always is.
        self.send.next = !self.s1_reset.q.val() & !self.s1_rate.q.val() & !self.s1_charge.q.val();
        self.charge.next = !self.s1_reset.q.val() & !self.s1_rate.q.val() & self.s1_charge.q.val();
        self.allowed.next = self.s1_valid.q.val()
            & self.send.val()
            & (!self.throttled.val() | !self.earned.val().get_bit(51));
        self.updated.next = self.record.val();
        self.updated.next.tokens = self.earned.val();
        if self.allowed.val() | self.charge.val() {
            self.updated.next.tokens = self.earned.val() - self.s1_price.q.val();
        }
        self.updated.next.last = self.s1_now.q.val();
        if self.s1_rate.q.val() {
            self.updated.next.rate = self.s1_value.q.val();
            // Counted at the line rate, a QP keeps its debt, not its credit.
            if !self.throttled.val() & !self.earned.val().get_bit(51) {
                self.updated.next.tokens = bits::<52>(0);
            }
        }
        if self.s1_reset.q.val() {
            self.updated.next = self.blank.val();
        }
        self.records.write_enable.next = self.s1_valid.q.val() & !self.reset.val();
        self.records.write_address.next = self.s1_qpn.q.val();
        self.records.write_data.next = self.updated.val();

        // The outcome, registered.
        self.done_valid.d.next = self.s1_valid.q.val() & !self.reset.val();
        self.done_qpn.d.next = self.s1_qpn.q.val();
        self.done_allowed.d.next = self.allowed.val();
        self.done_record.d.next = self.updated.val();
        self.out_valid.next = self.done_valid.q.val();
        self.out_qpn.next = self.done_qpn.q.val();
        self.out_allowed.next = self.done_allowed.q.val();
        self.out_record.next = self.done_record.q.val();
    }
}
