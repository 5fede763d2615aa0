//! `DcqcnReactionPoint`: DCQCN's reaction point for `2^A` QPs, one
//! event per cycle: each QP's rate Rc, target Rt, alpha, stage counters,
//! byte counter and timer deadlines in one block RAM word, read, updated
//! and written back in a forwarding read-modify-write. The event function,
//! its units and widths are `rocenic_model::dcqcn_integer` (the block's
//! oracle, bit for bit); this file says how the block computes it.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops the events in flight
//!   (their records are not written).
//!   The RAM is zero at power-up, which is every QP's reset record; a QP
//!   created later is reset by an event.
//! - `event_valid`, `event_kind` ([`KIND_RESET`], [`KIND_CNP`],
//!   [`KIND_SENT`], [`KIND_TICK`]), `event_qpn` (`A` bits), `event_bytes`
//!   (16 bits, for `KIND_SENT`), `now` (32 bits, the time base, for
//!   `KIND_CNP` and `KIND_TICK`). There is no ready: an event is taken in
//!   every cycle its valid is high.
//! - `cfg` ([`RpParamsPort`]): the parameters, one signal per field of
//!   `RpParams`, read in the cycle after an event's: change them with no
//!   event in flight (two cycles after the last).
//! - The outcome of each event: `out_valid`, `out_qpn`, `out_rate` (kb/s,
//!   the line rate when idle: the pacing scheduler's rate), `out_scan`
//!   (the QP needs ticks), `out_cut`, `out_held` (a CNP within the monitor
//!   period), `out_increase` (0 none, 1 fast recovery, 2 additive, 3
//!   hyper) and `out_record` (the QP's record after the event, the RAM
//!   word, for the checks and for a host read).
//!
//! # Latency and throughput
//!
//! An event presented in cycle `c` has its outcome presented in cycle
//! `c + 2`. One event per cycle, indefinitely, for any mix of QPs, the
//! same QP in consecutive cycles included: the RAM is read in the event's
//! cycle and written in the next, and a read that meets the write of the
//! event just before on the same QP takes that event's record from the
//! outcome register instead (block RAM's read-during-write result is
//! never used). The update is one cycle of logic after the RAM's output:
//! seven 16 x 16 products (alpha's decay; the cut and the cut's floor, two
//! each for a 32-bit rate; the hyper step, two), adds and compares.
//!
//! # Memory
//!
//! One `2^A` x [`RECORD_BITS`] RAM (`SyncRam`, marked for block RAM): at
//! 1024 QPs, 227 bits wide, thirteen 1K x 18 block RAMs on UltraScale+.

use crate::primitives::sync_ram::SyncRam;
use rust_hdl::prelude::*;

/// QPs of the default build.
pub const DEFAULT_QPN_BITS: usize = 10;
/// `event_kind`: the QP's record to zero.
pub const KIND_RESET: u64 = 0;
/// `event_kind`: a CNP for the QP at `now`.
pub const KIND_CNP: u64 = 1;
/// `event_kind`: `event_bytes` sent on the QP.
pub const KIND_SENT: u64 = 2;
/// `event_kind`: a look at the QP's timers at `now`.
pub const KIND_TICK: u64 = 3;
/// Alpha = 1.0, Q1.15.
pub const ALPHA_ONE: u64 = 1 << 15;
/// Bits of a QP's record.
pub const RECORD_BITS: usize = 6 * 32 + 16 + 2 * 8 + 3;

/// One QP's state: `rocenic_model::dcqcn_integer::RpRecord`.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct RpRecord {
    pub rate: Bits<32>,
    pub target: Bits<32>,
    pub alpha: Bits<16>,
    pub time_stage: Bits<8>,
    pub byte_stage: Bits<8>,
    pub bytes: Bits<32>,
    pub alpha_due: Bits<32>,
    pub rate_due: Bits<32>,
    pub last_cut: Bits<32>,
    pub rate_active: Bit,
    pub alpha_active: Bit,
    pub started: Bit,
}

impl RpRecord {
    /// The record as the model holds it.
    pub fn to_model(&self) -> rocenic_model::dcqcn_integer::RpRecord {
        rocenic_model::dcqcn_integer::RpRecord {
            rate: self.rate.to_u64() as u32,
            target: self.target.to_u64() as u32,
            alpha: self.alpha.to_u64() as u16,
            time_stage: self.time_stage.to_u64() as u8,
            byte_stage: self.byte_stage.to_u64() as u8,
            bytes: self.bytes.to_u64() as u32,
            alpha_due: self.alpha_due.to_u64() as u32,
            rate_due: self.rate_due.to_u64() as u32,
            last_cut: self.last_cut.to_u64() as u32,
            rate_active: self.rate_active,
            alpha_active: self.alpha_active,
            started: self.started,
        }
    }
}

/// The model's record from the `out_record` port's bits (64-bit words,
/// least significant first): the fields in declaration order from bit 0,
/// as rust-hdl packs a `LogicStruct`.
pub fn model_record(words: &[u64]) -> rocenic_model::dcqcn_integer::RpRecord {
    let field = |at: usize, width: usize| -> u64 {
        let low = words[at / 64] >> (at % 64);
        let high = match (at % 64 + width > 64, words.get(at / 64 + 1)) {
            (true, Some(w)) => w << (64 - at % 64),
            _ => 0,
        };
        (low | high) & ((1u64 << width) - 1)
    };
    rocenic_model::dcqcn_integer::RpRecord {
        rate: field(0, 32) as u32,
        target: field(32, 32) as u32,
        alpha: field(64, 16) as u16,
        time_stage: field(80, 8) as u8,
        byte_stage: field(88, 8) as u8,
        bytes: field(96, 32) as u32,
        alpha_due: field(128, 32) as u32,
        rate_due: field(160, 32) as u32,
        last_cut: field(192, 32) as u32,
        rate_active: field(224, 1) == 1,
        alpha_active: field(225, 1) == 1,
        started: field(226, 1) == 1,
    }
}

/// The reaction point's parameters, one signal per field of the model's
/// `RpParams` (same names, same units). A block that holds a reaction
/// point declares the same port and `link`s it through, so the Verilog
/// ports are `cfg$line_rate` .. at every level.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RpParamsSource"]
pub struct RpParamsPort {
    pub enabled: Signal<In, Bit>,
    pub line_rate: Signal<In, Bits<32>>,
    pub min_rate: Signal<In, Bits<32>>,
    pub ai_rate: Signal<In, Bits<32>>,
    pub hai_rate: Signal<In, Bits<32>>,
    pub g: Signal<In, Bits<16>>,
    pub gd: Signal<In, Bits<4>>,
    pub min_dec_fac: Signal<In, Bits<16>>,
    pub initial_alpha: Signal<In, Bits<16>>,
    pub alpha_period: Signal<In, Bits<32>>,
    pub rate_period: Signal<In, Bits<32>>,
    pub byte_reset: Signal<In, Bits<32>>,
    pub threshold: Signal<In, Bits<8>>,
    pub monitor_period: Signal<In, Bits<32>>,
}

/// The driving side of [`RpParamsPort`] (the congestion registers').
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RpParamsPort"]
pub struct RpParamsSource {
    pub enabled: Signal<Out, Bit>,
    pub line_rate: Signal<Out, Bits<32>>,
    pub min_rate: Signal<Out, Bits<32>>,
    pub ai_rate: Signal<Out, Bits<32>>,
    pub hai_rate: Signal<Out, Bits<32>>,
    pub g: Signal<Out, Bits<16>>,
    pub gd: Signal<Out, Bits<4>>,
    pub min_dec_fac: Signal<Out, Bits<16>>,
    pub initial_alpha: Signal<Out, Bits<16>>,
    pub alpha_period: Signal<Out, Bits<32>>,
    pub rate_period: Signal<Out, Bits<32>>,
    pub byte_reset: Signal<Out, Bits<32>>,
    pub threshold: Signal<Out, Bits<8>>,
    pub monitor_period: Signal<Out, Bits<32>>,
}

impl RpParamsPort {
    /// Drives every signal from the model's parameters (a test bench's,
    /// in rust-hdl's simulator).
    pub fn drive(&mut self, p: &rocenic_model::dcqcn_integer::RpParams) {
        self.enabled.next = p.enabled;
        self.line_rate.next = bits(p.line_rate.into());
        self.min_rate.next = bits(p.min_rate.into());
        self.ai_rate.next = bits(p.ai_rate.into());
        self.hai_rate.next = bits(p.hai_rate.into());
        self.g.next = bits(p.g.into());
        self.gd.next = bits(p.gd.into());
        self.min_dec_fac.next = bits(p.min_dec_fac.into());
        self.initial_alpha.next = bits(p.initial_alpha.into());
        self.alpha_period.next = bits(p.alpha_period.into());
        self.rate_period.next = bits(p.rate_period.into());
        self.byte_reset.next = bits(p.byte_reset.into());
        self.threshold.next = bits(p.threshold.into());
        self.monitor_period.next = bits(p.monitor_period.into());
    }
}

/// The reaction point (see the module doc).
#[derive(LogicBlock)]
pub struct DcqcnReactionPoint<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub event_valid: Signal<In, Bit>,
    pub event_kind: Signal<In, Bits<2>>,
    pub event_qpn: Signal<In, Bits<A>>,
    pub event_bytes: Signal<In, Bits<16>>,
    pub now: Signal<In, Bits<32>>,

    pub cfg: RpParamsPort,

    pub out_valid: Signal<Out, Bit>,
    pub out_qpn: Signal<Out, Bits<A>>,
    pub out_rate: Signal<Out, Bits<32>>,
    pub out_scan: Signal<Out, Bit>,
    pub out_cut: Signal<Out, Bit>,
    pub out_held: Signal<Out, Bit>,
    pub out_increase: Signal<Out, Bits<2>>,
    pub out_record: Signal<Out, RpRecord>,

    records: SyncRam<RpRecord, A>,
    // The event whose record the RAM presents this cycle.
    s1_valid: DFF<Bit>,
    s1_kind: DFF<Bits<2>>,
    s1_qpn: DFF<Bits<A>>,
    s1_bytes: DFF<Bits<16>>,
    s1_now: DFF<Bits<32>>,
    // The outcome of the event before it: also the forwarded record.
    done_valid: DFF<Bit>,
    done_qpn: DFF<Bits<A>>,
    done_rate: DFF<Bits<32>>,
    done_cut: DFF<Bit>,
    done_held: DFF<Bit>,
    done_increase: DFF<Bits<2>>,
    done_record: DFF<RpRecord>,

    record: Signal<Local, RpRecord>,
    updated: Signal<Local, RpRecord>,
    is_reset: Signal<Local, Bit>,
    is_cnp: Signal<Local, Bit>,
    is_sent: Signal<Local, Bit>,
    is_tick: Signal<Local, Bit>,
    // A CNP.
    held: Signal<Local, Bit>,
    cut: Signal<Local, Bit>,
    rc: Signal<Local, Bits<32>>,
    alpha_before: Signal<Local, Bits<16>>,
    keep: Signal<Local, Bits<16>>,
    alpha_product: Signal<Local, Bits<32>>,
    alpha_decayed: Signal<Local, Bits<16>>,
    alpha_sum: Signal<Local, Bits<17>>,
    alpha_raised: Signal<Local, Bits<16>>,
    cut_lo: Signal<Local, Bits<32>>,
    cut_hi: Signal<Local, Bits<32>>,
    cut_product: Signal<Local, Bits<48>>,
    cut_by: Signal<Local, Bits<32>>,
    floor_lo: Signal<Local, Bits<32>>,
    floor_hi: Signal<Local, Bits<32>>,
    floor_product: Signal<Local, Bits<48>>,
    floor_rate: Signal<Local, Bits<32>>,
    cut_rate: Signal<Local, Bits<32>>,
    // Sent bytes.
    bytes_sum: Signal<Local, Bits<33>>,
    bytes_counted: Signal<Local, Bits<32>>,
    byte_counting: Signal<Local, Bit>,
    byte_fire: Signal<Local, Bit>,
    // A tick.
    alpha_lag: Signal<Local, Bits<32>>,
    rate_lag: Signal<Local, Bits<32>>,
    alpha_fire: Signal<Local, Bit>,
    rate_fire: Signal<Local, Bit>,
    // One increase.
    increasing: Signal<Local, Bit>,
    time_stage: Signal<Local, Bits<8>>,
    byte_stage: Signal<Local, Bits<8>>,
    stage_hi: Signal<Local, Bits<8>>,
    stage_lo: Signal<Local, Bits<8>>,
    hyper_steps: Signal<Local, Bits<16>>,
    hyper_lo: Signal<Local, Bits<32>>,
    hyper_hi: Signal<Local, Bits<32>>,
    hyper_product: Signal<Local, Bits<48>>,
    step: Signal<Local, Bits<32>>,
    phase: Signal<Local, Bits<2>>,
    target_sum: Signal<Local, Bits<33>>,
    target_new: Signal<Local, Bits<32>>,
    rate_sum: Signal<Local, Bits<33>>,
    rate_new: Signal<Local, Bits<32>>,

    blank: Constant<RpRecord>,
    kind_reset: Constant<Bits<2>>,
    kind_cnp: Constant<Bits<2>>,
    kind_sent: Constant<Bits<2>>,
    kind_tick: Constant<Bits<2>>,
    alpha_one: Constant<Bits<16>>,
    /// The largest 32-bit value: where saturating sums stop.
    saturated: Constant<Bits<32>>,
    stage_most: Constant<Bits<8>>,
}

impl<const A: usize> Default for DcqcnReactionPoint<A> {
    fn default() -> Self {
        DcqcnReactionPoint {
            clock: Default::default(),
            reset: Default::default(),
            event_valid: Default::default(),
            event_kind: Default::default(),
            event_qpn: Default::default(),
            event_bytes: Default::default(),
            now: Default::default(),
            cfg: Default::default(),
            out_valid: Default::default(),
            out_qpn: Default::default(),
            out_rate: Default::default(),
            out_scan: Default::default(),
            out_cut: Default::default(),
            out_held: Default::default(),
            out_increase: Default::default(),
            out_record: Default::default(),
            records: SyncRam::block_ram(),
            s1_valid: Default::default(),
            s1_kind: Default::default(),
            s1_qpn: Default::default(),
            s1_bytes: Default::default(),
            s1_now: Default::default(),
            done_valid: Default::default(),
            done_qpn: Default::default(),
            done_rate: Default::default(),
            done_cut: Default::default(),
            done_held: Default::default(),
            done_increase: Default::default(),
            done_record: Default::default(),
            record: Default::default(),
            updated: Default::default(),
            is_reset: Default::default(),
            is_cnp: Default::default(),
            is_sent: Default::default(),
            is_tick: Default::default(),
            held: Default::default(),
            cut: Default::default(),
            rc: Default::default(),
            alpha_before: Default::default(),
            keep: Default::default(),
            alpha_product: Default::default(),
            alpha_decayed: Default::default(),
            alpha_sum: Default::default(),
            alpha_raised: Default::default(),
            cut_lo: Default::default(),
            cut_hi: Default::default(),
            cut_product: Default::default(),
            cut_by: Default::default(),
            floor_lo: Default::default(),
            floor_hi: Default::default(),
            floor_product: Default::default(),
            floor_rate: Default::default(),
            cut_rate: Default::default(),
            bytes_sum: Default::default(),
            bytes_counted: Default::default(),
            byte_counting: Default::default(),
            byte_fire: Default::default(),
            alpha_lag: Default::default(),
            rate_lag: Default::default(),
            alpha_fire: Default::default(),
            rate_fire: Default::default(),
            increasing: Default::default(),
            time_stage: Default::default(),
            byte_stage: Default::default(),
            stage_hi: Default::default(),
            stage_lo: Default::default(),
            hyper_steps: Default::default(),
            hyper_lo: Default::default(),
            hyper_hi: Default::default(),
            hyper_product: Default::default(),
            step: Default::default(),
            phase: Default::default(),
            target_sum: Default::default(),
            target_new: Default::default(),
            rate_sum: Default::default(),
            rate_new: Default::default(),
            blank: Constant::new(RpRecord::default()),
            kind_reset: Constant::new(bits(KIND_RESET)),
            kind_cnp: Constant::new(bits(KIND_CNP)),
            kind_sent: Constant::new(bits(KIND_SENT)),
            kind_tick: Constant::new(bits(KIND_TICK)),
            alpha_one: Constant::new(bits(ALPHA_ONE)),
            saturated: Constant::new(bits(u64::from(u32::MAX))),
            stage_most: Constant::new(bits(0xFF)),
        }
    }
}

impl<const A: usize> Logic for DcqcnReactionPoint<A> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, records);
        dff_setup!(
            self,
            clock,
            s1_valid,
            s1_kind,
            s1_qpn,
            s1_bytes,
            s1_now,
            done_valid,
            done_qpn,
            done_rate,
            done_cut,
            done_held,
            done_increase,
            done_record
        );

        // The event's cycle: its record is read.
        self.records.read_address.next = self.event_qpn.val();
        self.s1_valid.d.next = self.event_valid.val() & !self.reset.val();
        self.s1_kind.d.next = self.event_kind.val();
        self.s1_qpn.d.next = self.event_qpn.val();
        self.s1_bytes.d.next = self.event_bytes.val();
        self.s1_now.d.next = self.now.val();

        // The next cycle: the record, or the one written at the read's
        // edge by the event before on the same QP.
        self.record.next = self.records.read_data.val();
        if self.done_valid.q.val() & (self.done_qpn.q.val() == self.s1_qpn.q.val()) {
            self.record.next = self.done_record.q.val();
        }
        self.is_reset.next = self.s1_kind.q.val() == self.kind_reset.val();
        self.is_cnp.next = (self.s1_kind.q.val() == self.kind_cnp.val()) & self.cfg.enabled.val();
        self.is_sent.next = (self.s1_kind.q.val() == self.kind_sent.val()) & self.cfg.enabled.val();
        self.is_tick.next = (self.s1_kind.q.val() == self.kind_tick.val()) & self.cfg.enabled.val();

        // Alpha: decayed by a tick, decayed and raised by g by a cut.
        self.alpha_before.next = self.cfg.initial_alpha.val();
        if self.record.val().started {
            self.alpha_before.next = self.record.val().alpha;
        }
        self.keep.next = self.alpha_one.val() - self.cfg.g.val();
        if self.cfg.g.val() > self.alpha_one.val() {
            self.keep.next = bits::<16>(0);
        }
        self.alpha_product.next = self.alpha_before.val() * self.keep.val();
        self.alpha_decayed.next = self.alpha_product.val().get_bits::<16>(15);
        self.alpha_sum.next =
            bit_cast::<17, 16>(self.alpha_decayed.val()) + bit_cast::<17, 16>(self.cfg.g.val());
        self.alpha_raised.next = self.alpha_sum.val().get_bits::<16>(0);
        if self.alpha_sum.val() > bit_cast::<17, 16>(self.alpha_one.val()) {
            self.alpha_raised.next = self.alpha_one.val();
        }

        // A CNP: held within the monitor period, else a cut of Rc by
        // Rc alpha / 2^gd, floored.
        self.held.next = self.is_cnp.val()
            & self.record.val().started
            & ((self.s1_now.q.val() - self.record.val().last_cut) < self.cfg.monitor_period.val());
        self.cut.next = self.is_cnp.val() & !self.held.val();
        self.rc.next = self.cfg.line_rate.val();
        if self.record.val().rate_active {
            self.rc.next = self.record.val().rate;
        }
        self.cut_lo.next = self.rc.val().get_bits::<16>(0) * self.alpha_raised.val();
        self.cut_hi.next = self.rc.val().get_bits::<16>(16) * self.alpha_raised.val();
        self.cut_product.next =
            bit_cast::<48, 32>(self.cut_lo.val()) + (bit_cast::<48, 32>(self.cut_hi.val()) << 16);
        self.cut_by.next = self.cut_product.val().get_bits::<32>(15) >> self.cfg.gd.val();
        self.floor_lo.next = self.rc.val().get_bits::<16>(0) * self.cfg.min_dec_fac.val();
        self.floor_hi.next = self.rc.val().get_bits::<16>(16) * self.cfg.min_dec_fac.val();
        self.floor_product.next = bit_cast::<48, 32>(self.floor_lo.val())
            + (bit_cast::<48, 32>(self.floor_hi.val()) << 16);
        self.floor_rate.next = self.floor_product.val().get_bits::<32>(16);
        self.cut_rate.next = self.rc.val() - self.cut_by.val();
        if self.floor_rate.val() > self.cut_rate.val() {
            self.cut_rate.next = self.floor_rate.val();
        }
        if self.cfg.min_rate.val() > self.cut_rate.val() {
            self.cut_rate.next = self.cfg.min_rate.val();
        }
        if self.cut_rate.val() > self.cfg.line_rate.val() {
            self.cut_rate.next = self.cfg.line_rate.val();
        }

        // Sent bytes: the byte counter, while recovering.
        self.bytes_sum.next =
            bit_cast::<33, 32>(self.record.val().bytes) + bit_cast::<33, 16>(self.s1_bytes.q.val());
        self.bytes_counted.next = self.bytes_sum.val().get_bits::<32>(0);
        if self.bytes_sum.val().get_bit(32) {
            self.bytes_counted.next = self.saturated.val();
        }
        self.byte_counting.next =
            self.is_sent.val() & self.record.val().rate_active & self.cfg.byte_reset.val().any();
        self.byte_fire.next =
            self.byte_counting.val() & (self.bytes_counted.val() >= self.cfg.byte_reset.val());

        // A tick: each timer due fires once (due: `now` at most 2^31 - 1
        // past its deadline).
        self.alpha_lag.next = self.s1_now.q.val() - self.record.val().alpha_due;
        self.rate_lag.next = self.s1_now.q.val() - self.record.val().rate_due;
        self.alpha_fire.next =
            self.is_tick.val() & self.record.val().alpha_active & !self.alpha_lag.val().get_bit(31);
        self.rate_fire.next = self.is_tick.val()
            & self.record.val().rate_active
            & self.cfg.rate_period.val().any()
            & !self.rate_lag.val().get_bit(31);

        // One increase, by the stages after this event's.
        self.increasing.next = self.byte_fire.val() | self.rate_fire.val();
        self.time_stage.next = self.record.val().time_stage;
        if self.rate_fire.val() & (self.record.val().time_stage != self.stage_most.val()) {
            self.time_stage.next = self.record.val().time_stage + 1;
        }
        self.byte_stage.next = self.record.val().byte_stage;
        if self.byte_fire.val() & (self.record.val().byte_stage != self.stage_most.val()) {
            self.byte_stage.next = self.record.val().byte_stage + 1;
        }
        self.stage_hi.next = self.time_stage.val();
        self.stage_lo.next = self.byte_stage.val();
        if self.byte_stage.val() > self.time_stage.val() {
            self.stage_hi.next = self.byte_stage.val();
            self.stage_lo.next = self.time_stage.val();
        }
        self.hyper_steps.next =
            bit_cast::<16, 8>(self.stage_lo.val() - self.cfg.threshold.val()) + 1;
        self.hyper_lo.next = self.cfg.hai_rate.val().get_bits::<16>(0) * self.hyper_steps.val();
        self.hyper_hi.next = self.cfg.hai_rate.val().get_bits::<16>(16) * self.hyper_steps.val();
        self.hyper_product.next = bit_cast::<48, 32>(self.hyper_lo.val())
            + (bit_cast::<48, 32>(self.hyper_hi.val()) << 16);
        self.phase.next = bits::<2>(3);
        self.step.next = self.hyper_product.val().get_bits::<32>(0);
        if self.hyper_product.val().get_bits::<16>(32).any() {
            self.step.next = self.saturated.val();
        }
        if self.stage_lo.val() < self.cfg.threshold.val() {
            self.phase.next = bits::<2>(2);
            self.step.next = self.cfg.ai_rate.val();
        }
        if self.stage_hi.val() < self.cfg.threshold.val() {
            self.phase.next = bits::<2>(1);
            self.step.next = bits::<32>(0);
        }
        self.target_sum.next =
            bit_cast::<33, 32>(self.record.val().target) + bit_cast::<33, 32>(self.step.val());
        self.target_new.next = self.target_sum.val().get_bits::<32>(0);
        if self.target_sum.val().get_bit(32) {
            self.target_new.next = self.saturated.val();
        }
        self.rate_sum.next =
            bit_cast::<33, 32>(self.target_new.val()) + bit_cast::<33, 32>(self.record.val().rate);
        self.rate_new.next = self.rate_sum.val().get_bits::<32>(1);
        if self.rate_new.val() > self.cfg.line_rate.val() {
            self.rate_new.next = self.cfg.line_rate.val();
        }

        // The record after the event.
        self.updated.next = self.record.val();
        if self.is_reset.val() {
            self.updated.next = self.blank.val();
        }
        if self.cut.val() {
            self.updated.next.target = self.rc.val();
            self.updated.next.rate = self.cut_rate.val();
            self.updated.next.alpha = self.alpha_raised.val();
            self.updated.next.time_stage = bits::<8>(0);
            self.updated.next.byte_stage = bits::<8>(0);
            self.updated.next.bytes = bits::<32>(0);
            self.updated.next.alpha_due = self.s1_now.q.val() + self.cfg.alpha_period.val();
            self.updated.next.rate_due = self.s1_now.q.val() + self.cfg.rate_period.val();
            self.updated.next.last_cut = self.s1_now.q.val();
            self.updated.next.rate_active = true;
            self.updated.next.alpha_active = self.cfg.alpha_period.val().any();
            self.updated.next.started = true;
        }
        if self.byte_counting.val() {
            self.updated.next.bytes = self.bytes_counted.val();
        }
        if self.byte_fire.val() {
            self.updated.next.bytes = self.bytes_counted.val() - self.cfg.byte_reset.val();
            self.updated.next.byte_stage = self.byte_stage.val();
        }
        if self.alpha_fire.val() {
            self.updated.next.alpha = self.alpha_decayed.val();
            self.updated.next.alpha_due = self.record.val().alpha_due + self.cfg.alpha_period.val();
            self.updated.next.alpha_active =
                self.alpha_decayed.val().any() | self.record.val().rate_active;
        }
        if self.rate_fire.val() {
            self.updated.next.rate_due = self.record.val().rate_due + self.cfg.rate_period.val();
            self.updated.next.time_stage = self.time_stage.val();
        }
        if self.increasing.val() {
            self.updated.next.target = self.target_new.val();
            self.updated.next.rate = self.rate_new.val();
            if self.rate_new.val() >= self.cfg.line_rate.val() {
                self.updated.next.rate_active = false;
                self.updated.next.bytes = bits::<32>(0);
            }
        }
        self.records.write_enable.next = self.s1_valid.q.val() & !self.reset.val();
        self.records.write_address.next = self.s1_qpn.q.val();
        self.records.write_data.next = self.updated.val();

        // The outcome, registered.
        self.done_valid.d.next = self.s1_valid.q.val() & !self.reset.val();
        self.done_qpn.d.next = self.s1_qpn.q.val();
        self.done_record.d.next = self.updated.val();
        self.done_rate.d.next = self.cfg.line_rate.val();
        if self.updated.val().rate_active {
            self.done_rate.d.next = self.updated.val().rate;
        }
        self.done_cut.d.next = self.cut.val();
        self.done_held.d.next = self.held.val();
        self.done_increase.d.next = bits::<2>(0);
        if self.increasing.val() {
            self.done_increase.d.next = self.phase.val();
        }
        self.out_valid.next = self.done_valid.q.val();
        self.out_qpn.next = self.done_qpn.q.val();
        self.out_rate.next = self.done_rate.q.val();
        self.out_scan.next =
            self.done_record.q.val().rate_active | self.done_record.q.val().alpha_active;
        self.out_cut.next = self.done_cut.q.val();
        self.out_held.next = self.done_held.q.val();
        self.out_increase.next = self.done_increase.q.val();
        self.out_record.next = self.done_record.q.val();
    }
}
