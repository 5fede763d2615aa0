//! `QpTimers`: the per-QP timers of the retransmit engine, the local ACK
//! timeout and the RNR wait, as a RAM of deadlines and a scanner that
//! visits every QP in turn. With up to 16384 QPs there cannot be a counter
//! per QP; one 36-bit record per QP in block RAM and one comparator do.
//!
//! One timer per QP is enough: in the model's requester an RNR wait stops
//! the ACK timer and rewinds the outstanding window (`ackreq_end = una`),
//! and nothing is sent until the wait ends, so the two never run at once.
//!
//! The QP count is `2^A` (`A` address bits, 10 = 1024 QPs by default, 2 to
//! 14 = 16384).
//!
//! # Ports
//!
//! - `clock`. No reset: the state after configuration is every timer
//!   stopped, and a QP's client stops its timer when it resets the QP.
//! - `command` (in, valid/ready): `qpn`, `arm`, `kind`, `code`. With `arm`
//!   high, (re)start the timer of `qpn` as `kind` ([`KIND_ACK_TIMEOUT`]
//!   or [`KIND_RNR_WAIT`]) with the duration of the 5-bit `code` (local
//!   ACK timeout 4.096 us * 2^code, 0 = infinite, i.e. no timer; RNR NAK
//!   timer code per IBA table 45); with `arm` low, stop it. `ready` is
//!   always high: one command per cycle, indefinitely.
//! - `expiry` (out, valid/ready): `qpn`, `kind` of a timer that fired.
//! - `now` (out): the time base in units (for the client's logs).
//!
//! # Time
//!
//! A free-running time base counts units of [`UNIT_CYCLES`] = 512 cycles,
//! 2.048 us at 250 MHz, in [`TIME_BITS`] = 34 bits. Durations are rounded
//! up to whole units ([`duration_units`]): local ACK timeouts are exact
//! (2^(code+1) units), RNR waits up to one unit longer. An arm in cycle `t`
//! stores `deadline = now + 1 + duration`, so the deadline unit begins at
//! least `duration` after `t` (never early) and at most one unit later
//! than that plus the rounding. The longest timer (ACK code 31, 2^32 units,
//! 2.44 h) is half the 2^34-unit range, so `now - deadline` taken mod 2^34
//! tells past from future for every code ("due" is its top bit clear),
//! across the wrap of the time base, as long as a due timer is decided
//! within 2^33 units (4.9 h) of its deadline, i.e. unless backpressure
//! holds the scan that long.
//!
//! The time base starts at [`TIME_ORIGIN`], 256 units (524 us) before it
//! wraps, as Linux starts `jiffies` just before its wrap: a comparison
//! that breaks at the wrap breaks in every test, not after 9.8 hours.
//!
//! # Scanner and ordering
//!
//! The scanner reads one QP per cycle, round robin: the read in cycle `c`
//! is decided in cycle `c + 2`, and a due, armed timer fires there: its
//! expiry goes to the output register (presented from `c + 3`) and the
//! record is disarmed in the same cycle, through the scanner's own RAM
//! port, which costs that cycle's read. So a timer fires exactly once.
//!
//! Commands are blind writes (the new record does not depend on the old),
//! so they need no read. The cycle a command is presented orders it: a
//! command for a QP whose record the scanner has read but not yet decided
//! (cycles `c` to `c + 2`) makes that read stale, and the scanner drops it
//! instead of firing: after a command the newest record is stopped or due
//! in the future (at least a unit away), so dropping is what the newest
//! record says. A command presented in the cycle an expiry is first
//! presented, or later, comes after that firing and acts on the disarmed
//! timer.
//!
//! Backpressure: when a timer is due and the output register is still
//! held, the decision waits (the scanner stops, the two reads behind it
//! are dropped and redone), still dropping the read if a command for the
//! QP comes meanwhile. Nothing is lost.
//!
//! # Latency and throughput
//!
//! - Commands: one per cycle, indefinitely (`ready` is constant high); a
//!   command acts in the cycle it is presented.
//! - Scan: one QP read per cycle, less one cycle per expiry and the
//!   cycles of backpressure stalls. A read is decided 2 cycles later
//!   ([`DECISION_LATENCY`]) and its expiry presented 3 cycles after the
//!   read, from a register.
//!
//! # Lateness and scan period
//!
//! A timer whose deadline unit began in cycle `d` is presented by cycle
//! `d + 2^A + E + 3 H` ([`lateness_bound`]), where `E` counts the expiries
//! presented and `H` the cycles an expiry was held (valid, not ready) from
//! `d - 4` on: a full scan is `2^A` reads, each firing takes one cycle
//! from the scan and each held cycle at most three. The deadline unit
//! begins at most one unit (ACK timeout) or two (RNR wait) after arm +
//! duration. So at 1024 QPs, without backpressure, a timer fires at most
//! one scan (4.096 us, plus 4 ns per expiry in it; 8.2 us if all 1024
//! fire at once) plus one unit (RNR: two) late; the scan is shorter than
//! the shortest timer (ACK code 1, 8.192 us; RNR code 1, 10 us). At 16384
//! QPs a scan is 65.5 us (131 us if all fire at once), so short codes
//! fire up to that late; codes of 65.5 us and more (ACK 4+, RNR 7+) stay
//! within about their own duration.
//!
//! # Memory
//!
//! [`QpTimerRam`]: `2^A` x [`RECORD_BITS`] (bit 0 armed, bit 1 kind, bits
//! 2.. deadline), true dual port, synchronous read, zero (stopped) at
//! power-up: port A takes the commands (write only), port B the scanner
//! (a read, or the disarm write of a firing). Collisions of one address on
//! both ports are never used (the ordering above drops those reads, and a
//! firing never coincides with a command for its QP), so the RAM is
//! `no_rw_check` and maps to one RAMB36 (1K x 36) at 1024 QPs.

use rust_hdl::core::timing::TimingInfo;
use rust_hdl::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// Default address bits: 1024 QPs.
pub const DEFAULT_QPN_BITS: usize = 10;
/// Clock period of the 250 MHz core clock.
pub const CLOCK_NS: u64 = 4;
/// Cycles per time unit: 2^9.
pub const UNIT_CYCLES_LOG2: usize = 9;
pub const UNIT_CYCLES: u64 = 1 << UNIT_CYCLES_LOG2;
/// A time unit, 2.048 us.
pub const UNIT_NS: u64 = UNIT_CYCLES * CLOCK_NS;
/// Width of the time base and of deadlines.
pub const TIME_BITS: usize = 34;
/// The time base after configuration: 256 units before it wraps.
pub const TIME_ORIGIN: u64 = (1 << TIME_BITS) - 256;
/// Width of a duration in units (ACK code 31 is 2^32 units).
pub const DURATION_BITS: usize = 33;
/// Bits of one timer record: armed, kind, deadline.
pub const RECORD_BITS: usize = 2 + TIME_BITS;
/// `kind` of a local ACK timeout.
pub const KIND_ACK_TIMEOUT: bool = false;
/// `kind` of an RNR wait.
pub const KIND_RNR_WAIT: bool = true;
/// Cycles from the read of a record to the decision on it.
pub const DECISION_LATENCY: u64 = 2;

/// RNR NAK timer codes in units of 0.01 ms (IBA table 45); the model's
/// `rocenic_model::timers::rnr_timer_ns` is the reference the tests hold
/// this to.
const RNR_CENTI_MS: [u64; 32] = [
    65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
];

/// The duration table of the block: units for `kind` and `code`, rounded
/// up; `None` for an infinite timer (ACK code 0).
pub fn duration_units(kind: bool, code: u8) -> Option<u64> {
    let code = code & 31;
    if kind == KIND_RNR_WAIT {
        Some((RNR_CENTI_MS[usize::from(code)] * 10_000).div_ceil(UNIT_NS))
    } else if code == 0 {
        None
    } else {
        // 4.096 us * 2^code = 2^(code+1) units of 2.048 us.
        Some(2u64 << code)
    }
}

/// The time base in cycle `cycle` after configuration, mod 2^34.
pub fn time_at(cycle: u64) -> u64 {
    (TIME_ORIGIN + (cycle >> UNIT_CYCLES_LOG2)) & ((1 << TIME_BITS) - 1)
}

/// Latest cycle an expiry of a timer due from cycle `due` may be first
/// presented: `due + 2^A + expiries + 3 * held`, counting from `due - 4`
/// (see the module doc).
pub fn lateness_bound(qpn_bits: usize, due: u64, expiries: u64, held: u64) -> u64 {
    due + (1 << qpn_bits) + expiries + 3 * held
}

fn duration_table(kind: bool) -> Bits<{ 32 * DURATION_BITS }> {
    let mut table = Bits::<{ 32 * DURATION_BITS }>::default();
    for code in 0..32u8 {
        table.set_bits::<DURATION_BITS>(
            usize::from(code) * DURATION_BITS,
            bits(duration_units(kind, code).unwrap_or(0)),
        );
    }
    table
}

#[derive(Clone, Debug, Default, LogicInterface)]
pub struct TimerCommand<const A: usize> {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<A>>,
    /// High: arm with `kind` and `code`; low: stop.
    pub arm: Signal<In, Bit>,
    pub kind: Signal<In, Bit>,
    pub code: Signal<In, Bits<5>>,
}

#[derive(Clone, Debug, Default, LogicInterface)]
pub struct TimerExpiry<const A: usize> {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<A>>,
    pub kind: Signal<Out, Bit>,
}

/// The per-QP timers (see the module doc).
#[derive(LogicBlock)]
pub struct QpTimers<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub command: TimerCommand<A>,
    pub expiry: TimerExpiry<A>,
    pub now: Signal<Out, Bits<TIME_BITS>>,
    ram: QpTimerRam<A>,
    ack_units: Constant<Bits<{ 32 * DURATION_BITS }>>,
    rnr_units: Constant<Bits<{ 32 * DURATION_BITS }>>,
    prescale: DFF<Bits<UNIT_CYCLES_LOG2>>,
    /// (`time` is a Verilog keyword.)
    time_base: DFFWithInit<Bits<TIME_BITS>>,
    // The command's record.
    cmd_duration: Signal<Local, Bits<DURATION_BITS>>,
    cmd_deadline: Signal<Local, Bits<TIME_BITS>>,
    cmd_fields: Signal<Local, Bits<RECORD_BITS>>,
    cmd_record: Signal<Local, Bits<RECORD_BITS>>,
    // Scanner: the next QP to read, the read under way (s1) and the record
    // being decided (s2); `dirty` = a command for the QP came after the read.
    next_qpn: DFF<Bits<A>>,
    s1_valid: DFF<Bit>,
    s1_qpn: DFF<Bits<A>>,
    s1_dirty: DFF<Bit>,
    s2_valid: DFF<Bit>,
    s2_qpn: DFF<Bits<A>>,
    s2_dirty: DFF<Bit>,
    s2_record: DFF<Bits<RECORD_BITS>>,
    s2_elapsed: Signal<Local, Bits<TIME_BITS>>,
    due: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    stall: Signal<Local, Bit>,
    out_valid: DFF<Bit>,
    out_qpn: DFF<Bits<A>>,
    out_kind: DFF<Bit>,
}

impl<const A: usize> Default for QpTimers<A> {
    fn default() -> Self {
        // Two QPs at least, so a record read right behind a firing is
        // never the one the firing disarms.
        assert!((2..=14).contains(&A), "4 to 16384 QPs");
        QpTimers {
            clock: Default::default(),
            command: Default::default(),
            expiry: Default::default(),
            now: Default::default(),
            ram: Default::default(),
            ack_units: Constant::new(duration_table(KIND_ACK_TIMEOUT)),
            rnr_units: Constant::new(duration_table(KIND_RNR_WAIT)),
            prescale: Default::default(),
            time_base: DFFWithInit::new(bits(TIME_ORIGIN)),
            cmd_duration: Default::default(),
            cmd_deadline: Default::default(),
            cmd_fields: Default::default(),
            cmd_record: Default::default(),
            next_qpn: Default::default(),
            s1_valid: Default::default(),
            s1_qpn: Default::default(),
            s1_dirty: Default::default(),
            s2_valid: Default::default(),
            s2_qpn: Default::default(),
            s2_dirty: Default::default(),
            s2_record: Default::default(),
            s2_elapsed: Default::default(),
            due: Default::default(),
            fire: Default::default(),
            stall: Default::default(),
            out_valid: Default::default(),
            out_qpn: Default::default(),
            out_kind: Default::default(),
        }
    }
}

impl<const A: usize> Logic for QpTimers<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, prescale, time_base, next_qpn, s1_valid, s1_qpn, s1_dirty, s2_valid,
            s2_qpn, s2_dirty, s2_record, out_valid, out_qpn, out_kind
        );
        self.ram.clock.next = self.clock.val();

        // The time base.
        self.prescale.d.next = self.prescale.q.val() + 1;
        if self.prescale.q.val().all() {
            self.time_base.d.next = self.time_base.q.val() + 1;
        }
        self.now.next = self.time_base.q.val();

        // Commands: a blind write of the new record through port A.
        // 33 = DURATION_BITS: the HDL subset takes literals, not constants.
        self.cmd_duration.next = self
            .ack_units
            .val()
            .get_bits::<33>(self.command.code.val().index() * 33);
        if self.command.kind.val() {
            self.cmd_duration.next = self
                .rnr_units
                .val()
                .get_bits::<33>(self.command.code.val().index() * 33);
        }
        self.cmd_deadline.next = self.time_base.q.val()
            + bit_cast::<TIME_BITS, DURATION_BITS>(self.cmd_duration.val())
            + 1;
        self.cmd_fields.next = bit_cast::<RECORD_BITS, TIME_BITS>(self.cmd_deadline.val()) << 2;
        self.cmd_record.next = 0.into();
        if self.command.arm.val() & self.cmd_duration.val().any() {
            self.cmd_record.next = self.cmd_fields.val() | 1;
            if self.command.kind.val() {
                self.cmd_record.next = self.cmd_fields.val() | 3;
            }
        }
        self.command.ready.next = true;
        self.ram.a_write_enable.next = self.command.valid.val();
        self.ram.a_address.next = self.command.qpn.val();
        self.ram.a_write_data.next = self.cmd_record.val();

        // Decision on the record read two cycles ago.
        self.s2_elapsed.next = self.time_base.q.val() - self.s2_record.q.val().get_bits::<34>(2);
        self.due.next = self.s2_valid.q.val()
            & !self.s2_dirty.q.val()
            & !(self.command.valid.val() & (self.command.qpn.val() == self.s2_qpn.q.val()))
            & self.s2_record.q.val().get_bit(0)
            & !self.s2_elapsed.val().get_bit(33);
        self.fire.next = self.due.val() & (!self.out_valid.q.val() | self.expiry.ready.val());
        self.stall.next = self.due.val() & self.out_valid.q.val() & !self.expiry.ready.val();

        // The expiry register.
        if self.expiry.ready.val() {
            self.out_valid.d.next = false;
        }
        if self.fire.val() {
            self.out_valid.d.next = true;
            self.out_qpn.d.next = self.s2_qpn.q.val();
            self.out_kind.d.next = self.s2_record.q.val().get_bit(1);
        }
        self.expiry.valid.next = self.out_valid.q.val();
        self.expiry.qpn.next = self.out_qpn.q.val();
        self.expiry.kind.next = self.out_kind.q.val();

        // Port B: the disarm of a firing, else the next read.
        self.ram.b_write_enable.next = self.fire.val();
        self.ram.b_write_data.next = 0.into();
        self.ram.b_address.next = self.next_qpn.q.val();
        if self.fire.val() {
            self.ram.b_address.next = self.s2_qpn.q.val();
        }
        self.s1_valid.d.next = !self.fire.val() & !self.stall.val();
        self.s1_qpn.d.next = self.next_qpn.q.val();
        self.s1_dirty.d.next =
            self.command.valid.val() & (self.command.qpn.val() == self.next_qpn.q.val());
        if !self.fire.val() & !self.stall.val() {
            self.next_qpn.d.next = self.next_qpn.q.val() + 1;
        }

        if self.stall.val() {
            // Hold the decision; drop the reads behind it and redo them.
            self.next_qpn.d.next = self.s2_qpn.q.val() + 1;
            self.s2_dirty.d.next = self.s2_dirty.q.val()
                | (self.command.valid.val() & (self.command.qpn.val() == self.s2_qpn.q.val()));
        } else {
            self.s2_valid.d.next = self.s1_valid.q.val();
            self.s2_qpn.d.next = self.s1_qpn.q.val();
            self.s2_dirty.d.next = self.s1_dirty.q.val()
                | (self.command.valid.val() & (self.command.qpn.val() == self.s1_qpn.q.val()));
            self.s2_record.d.next = self.ram.b_read_data.val();
        }
    }
}

/// True dual-port RAM of `2^A` timer records: port A write only, port B
/// read or write, read data registered at the edge that samples
/// `b_address`. Zero (every timer stopped) at power-up, as FPGA block RAM
/// is after configuration. [`QpTimers`] never puts one address on both
/// ports in one cycle, so the collision behaviour is don't-care
/// (`no_rw_check`) and no collision logic is built.
#[derive(LogicBlock, Default)]
pub struct QpTimerRam<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub a_write_enable: Signal<In, Bit>,
    pub a_address: Signal<In, Bits<A>>,
    pub a_write_data: Signal<In, Bits<RECORD_BITS>>,
    pub b_write_enable: Signal<In, Bit>,
    pub b_address: Signal<In, Bits<A>>,
    pub b_write_data: Signal<In, Bits<RECORD_BITS>>,
    pub b_read_data: Signal<Out, Bits<RECORD_BITS>>,
    /// Written entries only; the rest read as zero.
    _contents: BTreeMap<u64, Bits<RECORD_BITS>>,
}

impl<const A: usize> Logic for QpTimerRam<A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let b = self.b_address.val().to_u64();
            self.b_read_data.next = self._contents.get(&b).copied().unwrap_or_default();
            if self.b_write_enable.val() {
                self._contents.insert(b, self.b_write_data.val());
            }
            if self.a_write_enable.val() {
                self._contents
                    .insert(self.a_address.val().to_u64(), self.a_write_data.val());
            }
        }
    }

    fn connect(&mut self) {
        self.b_read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
(* no_rw_check *)
reg [{top}:0] mem [0:{last}];
integer i;
initial begin
    for (i = 0; i <= {last}; i = i + 1) begin
        mem[i] = {width}'d0;
    end
    b_read_data = {width}'d0;
end

always @(posedge clock) begin
    if (a_write_enable) begin
        mem[a_address] <= a_write_data;
    end
end

always @(posedge clock) begin
    if (b_write_enable) begin
        mem[b_address] <= b_write_data;
    end
    b_read_data <= mem[b_address];
end
",
            top = RECORD_BITS - 1,
            last = (1usize << A) - 1,
            width = RECORD_BITS,
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "qp_timer_ram".into(),
            clock: "clock".into(),
            inputs: vec![
                "a_write_enable".into(),
                "a_address".into(),
                "a_write_data".into(),
                "b_write_enable".into(),
                "b_address".into(),
                "b_write_data".into(),
            ],
            outputs: vec!["b_read_data".into()],
        }]
    }
}

/// One command for [`QpTimersModel`], as presented on `command`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Arm { qpn: u32, kind: bool, code: u8 },
    Stop { qpn: u32 },
}

impl Command {
    pub fn qpn(&self) -> u32 {
        match *self {
            Command::Arm { qpn, .. } | Command::Stop { qpn } => qpn,
        }
    }
}

/// A running timer of [`QpTimersModel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArmedTimer {
    pub kind: bool,
    pub code: u8,
    /// Cycle of the arm command.
    pub armed_in: u64,
    /// Deadline in units, not wrapped (the block keeps it mod 2^34).
    pub deadline: u64,
}

impl ArmedTimer {
    /// The first cycle whose time base has reached the deadline.
    pub fn due_cycle(&self) -> u64 {
        (self.deadline - TIME_ORIGIN) << UNIT_CYCLES_LOG2
    }
}

/// A firing `QpTimersModel::cycle` accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fired {
    pub qpn: u32,
    pub timer: ArmedTimer,
    /// Cycle the expiry was first presented.
    pub presented: u64,
}

/// The contract of [`QpTimers`] (the oracle of its tests): the set of
/// running timers with their deadlines and the window in which each may
/// fire. A command presented in cycle `c` acts in cycle `c` (arm: deadline
/// `time + 1 + duration`, where `time` is the unwrapped time base of cycle
/// `c`; stop, or an infinite duration: no timer). An expiry first presented
/// in cycle `f` must name a running timer of that kind whose deadline the
/// time base of cycle `f - 1` (the decision) has reached, no later than
/// [`lateness_bound`]; it stops that timer before cycle `f`'s command
/// acts. A held expiry must stay as it is until taken.
#[derive(Clone, Debug)]
pub struct QpTimersModel {
    qpn_bits: usize,
    timers: Vec<Option<ArmedTimer>>,
    /// `(due cycle, qpn)` of every running timer.
    by_due: BTreeSet<(u64, u32)>,
    cycle: u64,
    /// The expiry presented and not taken in the previous cycle.
    held: Option<(u32, bool)>,
    /// Prefix counts per cycle: expiries first presented and held cycles
    /// in cycles before index `i`.
    expiries_before: Vec<u64>,
    held_before: Vec<u64>,
}

impl QpTimersModel {
    /// `2^qpn_bits` QPs, every timer stopped, cycle 0 (configuration).
    pub fn new(qpn_bits: usize) -> Self {
        QpTimersModel {
            qpn_bits,
            timers: vec![None; 1 << qpn_bits],
            by_due: BTreeSet::new(),
            cycle: 0,
            held: None,
            expiries_before: vec![0],
            held_before: vec![0],
        }
    }

    pub fn cycles(&self) -> u64 {
        self.cycle
    }

    /// The time base of `cycle`, not wrapped.
    pub fn unwrapped_time(cycle: u64) -> u64 {
        TIME_ORIGIN + (cycle >> UNIT_CYCLES_LOG2)
    }

    pub fn timer(&self, qpn: u32) -> Option<ArmedTimer> {
        self.timers[qpn as usize]
    }

    pub fn running(&self) -> usize {
        self.by_due.len()
    }

    /// `(due cycle, qpn)` of the `n` running timers due first.
    pub fn earliest_due(&self, n: usize) -> Vec<(u64, u32)> {
        self.by_due.iter().take(n).copied().collect()
    }

    fn counts_since(&self, due: u64) -> (u64, u64) {
        let from = due.saturating_sub(4).min(self.cycle) as usize;
        let to = self.cycle as usize;
        (
            self.expiries_before[to] - self.expiries_before[from],
            self.held_before[to] - self.held_before[from],
        )
    }

    /// The latest cycle the timer due in `due` may be first presented, as
    /// far as the expiries and held cycles seen so far go.
    pub fn deadline_for(&self, due: u64) -> u64 {
        let (expiries, held) = self.counts_since(due);
        lateness_bound(self.qpn_bits, due, expiries, held)
    }

    fn stop(&mut self, qpn: u32) -> Option<ArmedTimer> {
        let old = self.timers[qpn as usize].take();
        if let Some(t) = old {
            self.by_due.remove(&(t.due_cycle(), qpn));
        }
        old
    }

    /// One cycle: the command presented, the expiry presented (`valid`
    /// high) and `expiry.ready`. Returns the firing this cycle presents
    /// first, or what broke the contract.
    pub fn cycle_with(
        &mut self,
        command: Option<Command>,
        expiry: Option<(u32, bool)>,
        ready: bool,
    ) -> Result<Option<Fired>, String> {
        let c = self.cycle;
        let mut fired = None;
        let new = match (self.held, expiry) {
            (Some(h), Some(e)) if h == e => false,
            (Some(h), e) => return Err(format!("cycle {c}: held expiry {h:?} became {e:?}")),
            (None, e) => e.is_some(),
        };
        if let (true, Some((qpn, kind))) = (new, expiry) {
            if qpn as usize >= self.timers.len() {
                return Err(format!("cycle {c}: expiry of QP {qpn} out of range"));
            }
            let Some(t) = self.timers[qpn as usize] else {
                return Err(format!("cycle {c}: QP {qpn} fired, no timer running"));
            };
            if t.kind != kind {
                return Err(format!("cycle {c}: QP {qpn} fired kind {kind}, runs {t:?}"));
            }
            if c == 0 || Self::unwrapped_time(c - 1) < t.deadline {
                return Err(format!("cycle {c}: QP {qpn} fired early: {t:?}"));
            }
            // Counting this expiry too: it is in the window.
            let (expiries, held) = self.counts_since(t.due_cycle());
            let latest = lateness_bound(self.qpn_bits, t.due_cycle(), expiries + 1, held);
            if c > latest {
                return Err(format!(
                    "cycle {c}: QP {qpn} fired late (latest {latest}, {expiries} expiries and \
                     {held} held cycles since due): {t:?}"
                ));
            }
            self.stop(qpn);
            fired = Some(Fired {
                qpn,
                timer: t,
                presented: c,
            });
        }
        self.held = expiry.filter(|_| !ready);
        match command {
            Some(Command::Arm { qpn, kind, code }) => {
                self.stop(qpn);
                if let Some(units) = duration_units(kind, code) {
                    let t = ArmedTimer {
                        kind,
                        code,
                        armed_in: c,
                        deadline: Self::unwrapped_time(c) + 1 + units,
                    };
                    self.timers[qpn as usize] = Some(t);
                    self.by_due.insert((t.due_cycle(), qpn));
                }
            }
            Some(Command::Stop { qpn }) => {
                self.stop(qpn);
            }
            None => {}
        }
        self.cycle += 1;
        let e = self.expiries_before[c as usize] + u64::from(new);
        let h = self.held_before[c as usize] + u64::from(expiry.is_some() && !ready);
        self.expiries_before.push(e);
        self.held_before.push(h);
        Ok(fired)
    }

    /// Fails if some running timer is past its latest firing cycle.
    pub fn check_overdue(&self) -> Result<(), String> {
        // The earliest due is the first to be overdue, unless a later one
        // falls behind by more held cycles; check a few.
        for &(due, qpn) in self.by_due.iter().take(8) {
            if due > self.cycle {
                break;
            }
            let latest = self.deadline_for(due);
            if self.cycle > latest {
                return Err(format!(
                    "cycle {}: QP {qpn} due in cycle {due} has not fired (latest {latest}): {:?}",
                    self.cycle, self.timers[qpn as usize]
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_units_rounded_up() {
        assert_eq!(UNIT_NS, 2048);
        assert_eq!(duration_units(KIND_ACK_TIMEOUT, 0), None);
        assert_eq!(duration_units(KIND_ACK_TIMEOUT, 1), Some(4));
        assert_eq!(duration_units(KIND_ACK_TIMEOUT, 31), Some(1 << 32));
        // 10 us is 4.88 units.
        assert_eq!(duration_units(KIND_RNR_WAIT, 1), Some(5));
        // 655.36 ms is exactly 320000 units.
        assert_eq!(duration_units(KIND_RNR_WAIT, 0), Some(320_000));
        let longest = (0..32)
            .filter_map(|c| duration_units(KIND_ACK_TIMEOUT, c))
            .chain((0..32).filter_map(|c| duration_units(KIND_RNR_WAIT, c)))
            .max()
            .unwrap();
        assert!(longest < 1 << (DURATION_BITS), "fits the table");
        assert!(longest + 2 <= 1 << (TIME_BITS - 1), "wrap-safe compare");
    }

    #[test]
    fn time_base_wraps_soon_after_configuration() {
        assert_eq!(time_at(0), TIME_ORIGIN);
        assert_eq!(time_at(256 * UNIT_CYCLES - 1), (1 << TIME_BITS) - 1);
        assert_eq!(time_at(256 * UNIT_CYCLES), 0);
    }
}
