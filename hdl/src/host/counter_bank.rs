//! `CounterBank`: the host ABI's event counters (`rocenic-abi`'s
//! `COUNTERS`, `docs/abi.md`'s counters block), 64 bits each, kept in
//! block RAM behind the synchronous read port that
//! [`BarRegisters`](crate::host::bar_registers::BarRegisters) reads them
//! through. Every counter takes one increment per cycle, indefinitely; a
//! small accumulator per counter in flip-flops collects them and a flush
//! adds one accumulator per cycle, round robin, into the RAM.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high) and `clear` (a soft reset:
//!   `BarRegisters::soft_reset`'s pulse), the same: every counter to
//!   zero, by a clearing sweep (below).
//! - `events` (in, 64 bits): bit `k` is counter `k`'s +1 this cycle, `k`
//!   the counter's index in the ABI ([`counter_index`], [`event_bit`]).
//!   The bits of the byte counters and those beyond the ABI's counters are
//!   ignored.
//! - `rx_bytes`, `tx_bytes` (in, [`AMOUNT_BITS`] = 16 bits): the amount
//!   the byte counters of those names take this cycle, any value from 0
//!   to 65535 every cycle: a beat's bytes (at most 64) or a whole frame's
//!   length at its end (at most 9216 with jumbo frames, 65535 by IP's
//!   length fields).
//! - `counter_index` (in, 6 bits) → `counter_value` (out, 64 bits): the
//!   counter at the index presented in the cycle before, as a RAM reads
//!   (the port of `BarRegisters`). Indices beyond the ABI's counters
//!   read 0.
//! - `clearing` (out): high while a clearing sweep runs (for
//!   `BarRegisters::reset_busy`).
//!
//! # Latency and throughput
//!
//! A read presented in cycle `r` answers in `r + 1`, one read per cycle.
//! Its value counts every increment presented up to cycle `r -`
//! [`STALENESS`] (`STALENESS` = counters + 1 = 48 cycles) and none
//! presented in `r - 1` or later: reads lag by at most 48 cycles (192 ns
//! at 250 MHz), are never ahead, and after 48 quiet cycles every counter
//! reads its exact count. Increments: one per counter per cycle, all
//! counters at once, indefinitely (nothing stalls, no input has a ready).
//!
//! # Accumulators and flush
//!
//! With `N` counters (47), a pointer visits counter `0, 1, .., N - 1, 0,
//! ..`, one per cycle. In the cycle the pointer is at counter `k`, `k`'s
//! accumulator is taken (it holds the increments of the cycles before)
//! and restarts from this cycle's increment, so nothing is lost in the
//! cycle of its own flush; the next cycle reads `k`'s word from the flush
//! RAM and writes back word + accumulator (read-add-write: the read at
//! the pointer in one cycle, the write the cycle after, and the next read
//! of the same word `N` cycles later, so the two never meet). An
//! increment waits at most `N` cycles for its counter's flush and is in
//! the RAM the cycle after: hence the staleness of `N + 1`.
//!
//! No accumulator can overflow: the flush never stalls, so between two
//! takes of counter `k` lie exactly `N` cycles, and an accumulator holds
//! at most `N` increments (the one of the take cycle and `N - 1` more),
//! as it does after a clear (one per cycle since, and counter `k` is
//! taken `k + 1 <= N` cycles after). Event counters: at most `N` = 47 <
//! 2^[`EVENT_ACC_BITS`] = 64. Byte counters: at most 47 x 65535 =
//! 3,080,145 < 2^[`BYTE_ACC_BITS`] = 4,194,304. Compile-time assertions
//! hold both for the ABI's count (a 64th counter would need a seventh
//! event bit). The 64-bit counters wrap modulo 2^64, after 2300 years of
//! an event every cycle at 250 MHz, or 36 years of a 64-byte beat every
//! cycle.
//!
//! The event accumulators are kept as 6 bit planes of 64 bits (plane `j`
//! holds bit `j` of every counter's accumulator), so all counters add
//! their increment at once by one ripple of AND and XOR over the planes;
//! the two byte accumulators are registers of their own.
//!
//! # The read port
//!
//! A second RAM, written in lockstep with the flush RAM, has the read
//! port to itself. A read of the word being written at the same edge
//! takes the new word (forwarded from a register), so block RAM's
//! collision behaviour never matters.
//!
//! # Clear
//!
//! `reset` or `clear` high at an edge (cycle `c`) empties every
//! accumulator, keeps the increments of cycle `c` itself and restarts the
//! pointer at counter 0 for a sweep: one round of the flush in cycles `c +
//! 1` to `c + N`, writing each accumulator over its word instead of adding
//! it, so the sweep costs no increment: those of cycle `c` on count after
//! the clear. Counter `k`'s word is cleared (and holds its count since
//! the clear) at the edge that ends cycle `c + 2 + k`; the sweep is done
//! after `N + 1` cycles ([`CLEAR_CYCLES`] = 48), with `clearing` high in
//! cycles `c + 1` to `c + N`. Reads presented from cycle `c` on return a
//! counter not yet swept as 0 (never its value from before the clear), so
//! the staleness bound above holds through a clear for counts taken from
//! it. A clear during a sweep restarts it.
//!
//! # Memory
//!
//! Two 64 x 64 RAMs (`SyncRam`, synchronous read, zero at power-up; the
//! counters beyond the ABI's are never written and read 0) marked for
//! block RAM: one RAMB36 (512 x 72, simple dual port) each on
//! UltraScale+.

use crate::primitives::sync_ram::SyncRam;
use rocenic_abi::registers as abi;
use rust_hdl::prelude::*;

/// The ABI's counters: how many the bank holds.
pub const COUNTERS: usize = abi::COUNTERS.len();
/// Bits of a counter index (the read port's, and the events' 64).
pub const INDEX_BITS: usize = 6;
/// Bits of the byte counters' per-cycle amounts.
pub const AMOUNT_BITS: usize = 16;
/// Bits of an event counter's accumulator.
pub const EVENT_ACC_BITS: usize = 6;
/// Bits of a byte counter's accumulator.
pub const BYTE_ACC_BITS: usize = 22;
/// A read presented in cycle `r` counts every increment up to `r -
/// STALENESS`.
pub const STALENESS: u64 = COUNTERS as u64 + 1;
/// Cycles from a clear to the last counter's word cleared.
pub const CLEAR_CYCLES: u64 = COUNTERS as u64 + 1;
/// The counters that take amounts (`rx_bytes`, `tx_bytes` ports).
pub const BYTE_COUNTERS: [&str; 2] = ["rx_bytes", "tx_bytes"];

const _: () = assert!(COUNTERS >= 2 && COUNTERS <= 1 << INDEX_BITS);
// An accumulator holds at most COUNTERS increments (module doc).
const _: () = assert!(COUNTERS < 1 << EVENT_ACC_BITS);
const _: () = assert!(COUNTERS * ((1 << AMOUNT_BITS) - 1) < 1 << BYTE_ACC_BITS);

/// The index of the ABI's counter `name`: its place in the counters
/// block, `(offset - offset of counter 0) / 8`.
pub fn counter_index(name: &str) -> usize {
    let base = abi::COUNTERS[0].offset;
    let (place, counter) = abi::COUNTERS
        .iter()
        .enumerate()
        .find(|(_, c)| c.name == name)
        .unwrap_or_else(|| panic!("the ABI has no counter {name}"));
    let index = ((counter.offset - base) / 8) as usize;
    assert_eq!(index, place, "the ABI lists its counters in index order");
    index
}

/// Counter `name`'s bit in `events`, for a composite's `Constant`.
pub fn event_bit(name: &str) -> Bits<64> {
    bits(1 << counter_index(name))
}

/// The counter bank (see the module doc).
#[derive(LogicBlock)]
pub struct CounterBank {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub clear: Signal<In, Bit>,
    pub events: Signal<In, Bits<64>>,
    pub rx_bytes: Signal<In, Bits<AMOUNT_BITS>>,
    pub tx_bytes: Signal<In, Bits<AMOUNT_BITS>>,
    pub counter_index: Signal<In, Bits<INDEX_BITS>>,
    pub counter_value: Signal<Out, Bits<64>>,
    pub clearing: Signal<Out, Bit>,

    /// The counter taken this cycle.
    pointer: DFF<Bits<INDEX_BITS>>,
    sweeping: DFF<Bit>,
    /// The event accumulators' bit planes: bit `k` of `plane_j` is bit
    /// `j` of counter `k`'s accumulator.
    plane0: DFF<Bits<64>>,
    plane1: DFF<Bits<64>>,
    plane2: DFF<Bits<64>>,
    plane3: DFF<Bits<64>>,
    plane4: DFF<Bits<64>>,
    plane5: DFF<Bits<64>>,
    rx_bytes_acc: DFF<Bits<BYTE_ACC_BITS>>,
    tx_bytes_acc: DFF<Bits<BYTE_ACC_BITS>>,
    // The write of the accumulator taken in the cycle before.
    flush_valid: DFF<Bit>,
    flush_index: DFF<Bits<INDEX_BITS>>,
    flush_amount: DFF<Bits<BYTE_ACC_BITS>>,
    /// A sweep's write: the amount over the word, not added to it.
    flush_fresh: DFF<Bit>,
    // The read port's answer: the word written at the edge of the read,
    // or 0 for a counter not yet swept.
    forward: DFF<Bit>,
    forward_value: DFF<Bits<64>>,
    read_zero: DFF<Bit>,
    flush_ram: SyncRam<Bits<64>, INDEX_BITS>,
    read_ram: SyncRam<Bits<64>, INDEX_BITS>,

    restart: Signal<Local, Bit>,
    /// The accumulators emptied at this edge: the pointer's, or all.
    taken: Signal<Local, Bits<64>>,
    counted: Signal<Local, Bits<64>>,
    carry1: Signal<Local, Bits<64>>,
    carry2: Signal<Local, Bits<64>>,
    carry3: Signal<Local, Bits<64>>,
    carry4: Signal<Local, Bits<64>>,
    carry5: Signal<Local, Bits<64>>,
    event_count: Signal<Local, Bits<BYTE_ACC_BITS>>,
    word: Signal<Local, Bits<64>>,

    last_counter: Constant<Bits<INDEX_BITS>>,
    rx_bytes_at: Constant<Bits<INDEX_BITS>>,
    tx_bytes_at: Constant<Bits<INDEX_BITS>>,
    /// The `events` bits that count: the ABI's counters but the bytes.
    event_counters: Constant<Bits<64>>,
    one: Constant<Bits<64>>,
    all: Constant<Bits<64>>,
}

impl Default for CounterBank {
    fn default() -> Self {
        let bytes = BYTE_COUNTERS
            .iter()
            .fold(0u64, |m, name| m | (1 << counter_index(name)));
        let counters = if COUNTERS == 64 {
            u64::MAX
        } else {
            (1 << COUNTERS) - 1
        };
        let at = |name: &str| Constant::new(bits(counter_index(name) as u64));
        CounterBank {
            clock: Default::default(),
            reset: Default::default(),
            clear: Default::default(),
            events: Default::default(),
            rx_bytes: Default::default(),
            tx_bytes: Default::default(),
            counter_index: Default::default(),
            counter_value: Default::default(),
            clearing: Default::default(),
            pointer: Default::default(),
            sweeping: Default::default(),
            plane0: Default::default(),
            plane1: Default::default(),
            plane2: Default::default(),
            plane3: Default::default(),
            plane4: Default::default(),
            plane5: Default::default(),
            rx_bytes_acc: Default::default(),
            tx_bytes_acc: Default::default(),
            flush_valid: Default::default(),
            flush_index: Default::default(),
            flush_amount: Default::default(),
            flush_fresh: Default::default(),
            forward: Default::default(),
            forward_value: Default::default(),
            read_zero: Default::default(),
            flush_ram: SyncRam::block_ram(),
            read_ram: SyncRam::block_ram(),
            restart: Default::default(),
            taken: Default::default(),
            counted: Default::default(),
            carry1: Default::default(),
            carry2: Default::default(),
            carry3: Default::default(),
            carry4: Default::default(),
            carry5: Default::default(),
            event_count: Default::default(),
            word: Default::default(),
            last_counter: Constant::new(bits(COUNTERS as u64 - 1)),
            rx_bytes_at: at(BYTE_COUNTERS[0]),
            tx_bytes_at: at(BYTE_COUNTERS[1]),
            event_counters: Constant::new(bits(counters & !bytes)),
            one: Constant::new(bits(1)),
            all: Constant::new(bits(u64::MAX)),
        }
    }
}

impl Logic for CounterBank {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            pointer,
            sweeping,
            plane0,
            plane1,
            plane2,
            plane3,
            plane4,
            plane5,
            rx_bytes_acc,
            tx_bytes_acc,
            flush_valid,
            flush_index,
            flush_amount,
            flush_fresh,
            forward,
            forward_value,
            read_zero
        );
        clock!(self, clock, flush_ram, read_ram);

        self.restart.next = self.reset.val() | self.clear.val();
        self.taken.next = self.one.val() << self.pointer.q.val();
        if self.restart.val() {
            self.taken.next = self.all.val();
        }

        // The pointer's accumulator is taken for the flush.
        self.event_count.next = bits::<BYTE_ACC_BITS>(0);
        self.event_count.next = self
            .event_count
            .val()
            .replace_bit(0, self.plane0.q.val().get_bit(self.pointer.q.val().index()));
        self.event_count.next = self
            .event_count
            .val()
            .replace_bit(1, self.plane1.q.val().get_bit(self.pointer.q.val().index()));
        self.event_count.next = self
            .event_count
            .val()
            .replace_bit(2, self.plane2.q.val().get_bit(self.pointer.q.val().index()));
        self.event_count.next = self
            .event_count
            .val()
            .replace_bit(3, self.plane3.q.val().get_bit(self.pointer.q.val().index()));
        self.event_count.next = self
            .event_count
            .val()
            .replace_bit(4, self.plane4.q.val().get_bit(self.pointer.q.val().index()));
        self.event_count.next = self
            .event_count
            .val()
            .replace_bit(5, self.plane5.q.val().get_bit(self.pointer.q.val().index()));
        self.flush_amount.d.next = self.event_count.val();
        if self.pointer.q.val() == self.rx_bytes_at.val() {
            self.flush_amount.d.next = self.rx_bytes_acc.q.val();
        }
        if self.pointer.q.val() == self.tx_bytes_at.val() {
            self.flush_amount.d.next = self.tx_bytes_acc.q.val();
        }
        self.flush_index.d.next = self.pointer.q.val();
        self.flush_valid.d.next = !self.restart.val();
        self.flush_fresh.d.next = self.sweeping.q.val();

        // Every accumulator adds this cycle's increment (a taken one
        // restarts from it): a ripple of carries over the bit planes.
        self.counted.next = self.events.val() & self.event_counters.val();
        self.plane0.d.next = (self.plane0.q.val() & !self.taken.val()) ^ self.counted.val();
        self.carry1.next = self.plane0.q.val() & !self.taken.val() & self.counted.val();
        self.plane1.d.next = (self.plane1.q.val() & !self.taken.val()) ^ self.carry1.val();
        self.carry2.next = self.plane1.q.val() & !self.taken.val() & self.carry1.val();
        self.plane2.d.next = (self.plane2.q.val() & !self.taken.val()) ^ self.carry2.val();
        self.carry3.next = self.plane2.q.val() & !self.taken.val() & self.carry2.val();
        self.plane3.d.next = (self.plane3.q.val() & !self.taken.val()) ^ self.carry3.val();
        self.carry4.next = self.plane3.q.val() & !self.taken.val() & self.carry3.val();
        self.plane4.d.next = (self.plane4.q.val() & !self.taken.val()) ^ self.carry4.val();
        self.carry5.next = self.plane4.q.val() & !self.taken.val() & self.carry4.val();
        self.plane5.d.next = (self.plane5.q.val() & !self.taken.val()) ^ self.carry5.val();
        self.rx_bytes_acc.d.next =
            self.rx_bytes_acc.q.val() + bit_cast::<BYTE_ACC_BITS, AMOUNT_BITS>(self.rx_bytes.val());
        if self.taken.val().get_bit(self.rx_bytes_at.val().index()) {
            self.rx_bytes_acc.d.next = bit_cast::<BYTE_ACC_BITS, AMOUNT_BITS>(self.rx_bytes.val());
        }
        self.tx_bytes_acc.d.next =
            self.tx_bytes_acc.q.val() + bit_cast::<BYTE_ACC_BITS, AMOUNT_BITS>(self.tx_bytes.val());
        if self.taken.val().get_bit(self.tx_bytes_at.val().index()) {
            self.tx_bytes_acc.d.next = bit_cast::<BYTE_ACC_BITS, AMOUNT_BITS>(self.tx_bytes.val());
        }

        // The pointer: round robin; a clear restarts it for a sweep.
        self.pointer.d.next = self.pointer.q.val() + 1;
        if self.pointer.q.val() == self.last_counter.val() {
            self.pointer.d.next = bits::<INDEX_BITS>(0);
            self.sweeping.d.next = false;
        }
        if self.restart.val() {
            self.pointer.d.next = bits::<INDEX_BITS>(0);
            self.sweeping.d.next = true;
        }
        self.clearing.next = self.sweeping.q.val();

        // Read-add-write: the word at the pointer is read now and written
        // back with the accumulator taken now in the next cycle.
        self.flush_ram.read_address.next = self.pointer.q.val();
        self.word.next = self.flush_ram.read_data.val()
            + bit_cast::<64, BYTE_ACC_BITS>(self.flush_amount.q.val());
        if self.flush_fresh.q.val() {
            self.word.next = bit_cast::<64, BYTE_ACC_BITS>(self.flush_amount.q.val());
        }
        self.flush_ram.write_enable.next = self.flush_valid.q.val();
        self.flush_ram.write_address.next = self.flush_index.q.val();
        self.flush_ram.write_data.next = self.word.val();
        self.read_ram.write_enable.next = self.flush_valid.q.val();
        self.read_ram.write_address.next = self.flush_index.q.val();
        self.read_ram.write_data.next = self.word.val();

        // The read port.
        self.read_ram.read_address.next = self.counter_index.val();
        self.forward.d.next =
            self.flush_valid.q.val() & (self.flush_index.q.val() == self.counter_index.val());
        self.forward_value.d.next = self.word.val();
        self.read_zero.d.next = self.restart.val()
            | (self.sweeping.q.val() & (self.counter_index.val() >= self.pointer.q.val()));
        self.counter_value.next = self.read_ram.read_data.val();
        if self.forward.q.val() {
            self.counter_value.next = self.forward_value.q.val();
        }
        if self.read_zero.q.val() {
            self.counter_value.next = bits::<64>(0);
        }
    }
}
