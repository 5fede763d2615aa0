//! CounterBank in rust-hdl's simulator against a reference count per
//! counter: seeded random event streams and byte amounts (the maximum
//! every cycle included), random reads every cycle, which are never ahead
//! of the reference nor more than `STALENESS` cycles behind it (and that
//! bound is reached); exact counts after a quiet period; clears and resets
//! in the middle of traffic, the sweep's timing as the module doc gives
//! it. Then the recorded cycles on the Verilog under Verilator, the
//! Verilator lint and one Yosys synthesis. Last, `BarRegisters` and
//! `CounterBank` wired together and read through the AXI4-Lite BAR by the
//! driver's `Bar0::counters`.

use crate::common::assert_lint_clean;
use crate::common::axi_lite::AxiLiteInitiator;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_abi::registers as abi;
use rocenic_driver::bar0::{Bar0, Mmio};
use rocenic_hdl::host::axi_lite::AxiLiteTarget;
use rocenic_hdl::host::bar_registers::{BarRegisters, ADDRESS_BITS};
use rocenic_hdl::host::counter_bank::{
    counter_index, event_bit, CounterBank, BYTE_COUNTERS, CLEAR_CYCLES, COUNTERS, STALENESS,
};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;

/// One cycle's inputs.
#[derive(Clone, Copy, Debug, Default)]
struct Step {
    events: u64,
    rx_bytes: u64,
    tx_bytes: u64,
    clear: bool,
    reset: bool,
    index: u64,
}

/// The reference: what each counter holds after each cycle.
#[derive(Default)]
struct Reference {
    /// `after[t][k]`: counter `k` after cycle `t`'s increments, counted
    /// from the latest clear or reset at or before `t`.
    after: Vec<Vec<u64>>,
    /// The cycles that cleared.
    clears: Vec<u64>,
}

impl Reference {
    /// Cycle `t`'s inputs (cycles come in order from 0).
    fn step(&mut self, step: &Step) {
        let t = self.after.len() as u64;
        let mut counts = self
            .after
            .last()
            .cloned()
            .unwrap_or_else(|| vec![0; COUNTERS]);
        if step.clear || step.reset {
            counts.iter_mut().for_each(|c| *c = 0);
            self.clears.push(t);
        }
        for (k, count) in counts.iter_mut().enumerate() {
            if !BYTE_COUNTERS.iter().any(|b| counter_index(b) == k) {
                *count += (step.events >> k) & 1;
            }
        }
        counts[counter_index("rx_bytes")] += step.rx_bytes;
        counts[counter_index("tx_bytes")] += step.tx_bytes;
        self.after.push(counts);
    }

    /// Counter `k` after cycle `t`, as seen from cycle `r >= t`: zero when
    /// a clear at or before `r` came after `t`.
    fn seen_from(&self, r: u64, t: i64, k: usize) -> u64 {
        if t < 0 || k >= COUNTERS {
            return 0;
        }
        let t = t as u64;
        let cleared_after = self.clears.iter().any(|c| *c > t && *c <= r);
        if cleared_after {
            0
        } else {
            self.after[t as usize][k]
        }
    }

    fn now(&self, k: usize) -> u64 {
        self.after.last().map_or(0, |a| a[k])
    }
}

struct Bench {
    sim: CycleSim<CounterBank>,
    rng: ChaCha8Rng,
    reference: Reference,
    /// The read presented in the cycle before: (cycle, index).
    presented: Option<(u64, u64)>,
    reads: u64,
    /// Reads that lagged by the whole `STALENESS`: below the count of
    /// cycle `r - STALENESS + 1`.
    reads_at_the_bound: u64,
    /// `clearing` as seen in each cycle.
    clearing: Vec<bool>,
    /// Every answer: (cycle presented, index, value).
    answers: Vec<(u64, u64, u64)>,
}

impl Bench {
    fn new(seed: u64) -> Bench {
        let mut sim = CycleSim::new(CounterBank::default(), |b| &mut b.clock);
        sim.record();
        let mut bench = Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed),
            reference: Reference::default(),
            presented: None,
            reads: 0,
            reads_at_the_bound: 0,
            clearing: Vec::new(),
            answers: Vec::new(),
        };
        bench.tick(Step {
            reset: true,
            ..Step::default()
        });
        bench
    }

    /// One cycle: the answer to the read of the cycle before is checked
    /// against the reference, then this cycle's inputs go in.
    fn tick(&mut self, step: Step) {
        let r = self.sim.cycles();
        let u = &mut self.sim.uut;
        u.events.next = bits(step.events);
        u.rx_bytes.next = bits(step.rx_bytes);
        u.tx_bytes.next = bits(step.tx_bytes);
        u.clear.next = step.clear;
        u.reset.next = step.reset;
        u.counter_index.next = bits(step.index);
        self.sim.settle();
        self.clearing.push(self.sim.uut.clearing.val());
        if let Some((at, index)) = self.presented.take() {
            let value = self.sim.uut.counter_value.val().to_u64();
            self.check_read(at, index, value);
        }
        self.reference.step(&step);
        self.presented = Some((r, step.index));
        self.sim.tick();
    }

    fn check_read(&mut self, r: u64, index: u64, value: u64) {
        let k = index as usize;
        let reference = &self.reference;
        let ri = r as i64;
        let lowest = reference.seen_from(r, ri - STALENESS as i64, k);
        let highest = reference.seen_from(r, ri - 2, k);
        assert!(
            value >= lowest,
            "cycle {r}: counter {k} read {value}, more than {STALENESS} cycles behind \
             ({lowest} by cycle {})",
            ri - STALENESS as i64
        );
        assert!(
            value <= highest,
            "cycle {r}: counter {k} read {value}, ahead of {highest}, its count two cycles before"
        );
        if value < reference.seen_from(r, ri - STALENESS as i64 + 1, k) {
            self.reads_at_the_bound += 1;
        }
        self.reads += 1;
        self.answers.push((r, index, value));
    }

    /// Random traffic for `cycles`: events with density about `density`,
    /// bytes up to `most`, a read of a random index every cycle, clears
    /// with probability `clears`.
    fn traffic(&mut self, cycles: u64, density: f64, most: u64, clears: f64) {
        for _ in 0..cycles {
            let mut events = 0u64;
            for bit in 0..64 {
                if self.rng.gen_bool(density) {
                    events |= 1 << bit;
                }
            }
            let step = Step {
                events,
                rx_bytes: self.rng.gen_range(0..=most),
                tx_bytes: self.rng.gen_range(0..=most),
                clear: self.rng.gen_bool(clears),
                reset: false,
                index: self.random_index(),
            };
            self.tick(step);
        }
    }

    /// Mostly the ABI's counters, sometimes an index beyond them.
    fn random_index(&mut self) -> u64 {
        if self.rng.gen_bool(0.05) {
            self.rng.gen_range(0..64)
        } else {
            self.rng.gen_range(0..COUNTERS as u64)
        }
    }

    fn quiet(&mut self, cycles: u64) {
        for _ in 0..cycles {
            let index = self.random_index();
            self.tick(Step {
                index,
                ..Step::default()
            });
        }
    }

    /// Reads every counter (and the unused indices) after a quiet
    /// period: each equals its reference.
    fn assert_exact(&mut self) {
        self.quiet(STALENESS);
        for index in 0..64u64 {
            self.tick(Step {
                index,
                ..Step::default()
            });
            self.tick(Step::default());
            let (_, read, value) = *self.answers.last().unwrap();
            assert_eq!(read, index);
            let k = index as usize;
            let expected = if k < COUNTERS {
                self.reference.now(k)
            } else {
                0
            };
            let name = abi::COUNTERS.get(k).map_or("(none)", |c| c.name);
            assert_eq!(value, expected, "counter {k} ({name}) after a quiet period");
        }
    }
}

#[test]
fn random_traffic_reads_within_staleness_and_exact_when_quiet() {
    let mut b = Bench::new(1);
    b.traffic(1500, 0.5, 64, 0.0);
    b.assert_exact();
    assert!(
        (0..COUNTERS).all(|k| b.reference.now(k) > 0),
        "every counter counted"
    );
    b.traffic(1500, 0.1, 9216, 0.003);
    b.traffic(600, 0.9, 65535, 0.003);
    // A reset in the middle of traffic acts as a clear.
    b.traffic(100, 0.5, 1500, 0.0);
    let reset_at = b.sim.cycles();
    b.tick(Step {
        events: u64::MAX,
        rx_bytes: 1000,
        tx_bytes: 2000,
        reset: true,
        ..Step::default()
    });
    b.traffic(800, 0.3, 65535, 0.0);
    b.assert_exact();
    assert!(
        b.reference.clears.len() >= 4,
        "clears in traffic: {:?}",
        b.reference.clears
    );
    assert!(b.reference.clears.contains(&reset_at));
    assert!(b.reads > 4000, "{} reads", b.reads);
    assert!(
        b.reads_at_the_bound > 0,
        "some read lags the whole STALENESS: the bound is not loose"
    );
    let cycles = b.sim.replay_in_verilator("counter_bank").unwrap();
    assert!(cycles > 4000, "replayed {cycles} cycles");
}

#[test]
fn the_maximum_every_cycle_loses_nothing() {
    let mut b = Bench::new(2);
    // 20 rounds of the flush with every counter at its most every cycle:
    // the accumulators hold their largest sums.
    let cycles = 20 * COUNTERS as u64 + 7;
    for _ in 0..cycles {
        let index = b.random_index();
        b.tick(Step {
            events: u64::MAX,
            rx_bytes: 65535,
            tx_bytes: 65535,
            index,
            ..Step::default()
        });
    }
    b.assert_exact();
    for (k, counter) in abi::COUNTERS.iter().enumerate() {
        let expected = if BYTE_COUNTERS.contains(&counter.name) {
            cycles * 65535
        } else {
            cycles
        };
        assert_eq!(b.reference.now(k), expected, "{}", counter.name);
    }
}

#[test]
fn a_clear_sweeps_in_clear_cycles_and_keeps_its_own_increments() {
    let mut b = Bench::new(3);
    b.traffic(700, 0.5, 65535, 0.0);
    // A clear with every counter counting every cycle, through and after
    // the sweep; counter k is read in the cycle before and in the cycle
    // the doc says its word is cleared.
    let c = b.sim.cycles();
    for cycle in 0..CLEAR_CYCLES + 60 {
        let index = match cycle {
            0 => 5,
            _ => (cycle - 1) / 2 % 64,
        };
        b.tick(Step {
            events: u64::MAX,
            rx_bytes: 3,
            tx_bytes: 5,
            clear: cycle == 0,
            index,
            ..Step::default()
        });
    }
    b.tick(Step::default());
    for (r, index, value) in b.answers.iter().filter(|a| a.0 >= c && a.0 <= c + 128) {
        let k = *index;
        if k >= COUNTERS as u64 {
            assert_eq!(*value, 0);
            continue;
        }
        let per_cycle = match abi::COUNTERS[k as usize].name {
            "rx_bytes" => 3,
            "tx_bytes" => 5,
            _ => 1,
        };
        if *r <= c + 1 + k {
            assert_eq!(
                *value,
                0,
                "counter {k} read in cycle {} of the clear",
                r - c
            );
        } else if *r == c + 2 + k {
            assert_eq!(
                *value,
                (k + 1) * per_cycle,
                "counter {k}: swept at the edge ending cycle c + 2 + k, with the increments \
                 of cycles c to c + k"
            );
        }
    }
    let high: Vec<u64> = (c..c + CLEAR_CYCLES + 2)
        .filter(|t| b.clearing[*t as usize])
        .map(|t| t - c)
        .collect();
    assert_eq!(
        high,
        (1..CLEAR_CYCLES).collect::<Vec<u64>>(),
        "clearing in cycles c + 1 to c + N"
    );
    b.assert_exact();
    assert_eq!(
        b.reference.now(counter_index("rx_frames")),
        CLEAR_CYCLES + 60,
        "the clear cycle's own increment counts after the clear"
    );
}

#[test]
fn the_indices_come_from_the_abi() {
    for (k, counter) in abi::COUNTERS.iter().enumerate() {
        assert_eq!(counter_index(counter.name), k);
        assert_eq!(event_bit(counter.name).to_u64(), 1 << k);
    }
    assert_eq!(COUNTERS, abi::COUNTERS.len());
    assert_eq!(STALENESS, COUNTERS as u64 + 1);
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("counter_bank", &verilog_of::<CounterBank>());
}

#[test]
fn synthesizes_with_the_counters_in_block_ram() {
    let report = xilinx_synth("counter_bank", &verilog_of::<CounterBank>()).unwrap();
    report.assert_memories_in_block_ram();
    assert!(
        report.flip_flops() < 1000,
        "accumulators, not 64-bit counters, in flops: {} FFs",
        report.flip_flops()
    );
    assert!(report.luts() < 1500, "{} LUTs", report.luts());
}

/// BAR0 with the counter bank behind its counter port, as the host
/// interface wires them: the BAR's `unmapped` pulse is the
/// `mmio_unmapped` event and `soft_reset` clears the bank, whose sweep is
/// `reset_busy`.
#[derive(LogicBlock)]
struct BarWithCounters {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub mmio: AxiLiteTarget<ADDRESS_BITS>,
    pub events: Signal<In, Bits<64>>,
    pub rx_bytes: Signal<In, Bits<16>>,
    pub tx_bytes: Signal<In, Bits<16>>,
    bar: BarRegisters,
    bank: CounterBank,
    mmio_unmapped: Constant<Bits<64>>,
}

impl Default for BarWithCounters {
    fn default() -> Self {
        BarWithCounters {
            clock: Default::default(),
            reset: Default::default(),
            mmio: Default::default(),
            events: Default::default(),
            rx_bytes: Default::default(),
            tx_bytes: Default::default(),
            bar: Default::default(),
            bank: Default::default(),
            mmio_unmapped: Constant::new(event_bit("mmio_unmapped")),
        }
    }
}

impl Logic for BarWithCounters {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, bar, bank);
        AxiLiteTarget::<ADDRESS_BITS>::link(&mut self.mmio, &mut self.bar.mmio);
        self.bar.reset.next = self.reset.val();
        self.bank.reset.next = self.reset.val();
        self.bank.clear.next = self.bar.soft_reset.val();
        self.bar.reset_busy.next = self.bank.clearing.val();
        self.bank.counter_index.next = self.bar.counter_index.val();
        self.bar.counter_value.next = self.bank.counter_value.val();
        self.bank.events.next = self.events.val();
        if self.bar.unmapped.val() {
            self.bank.events.next = self.events.val() | self.mmio_unmapped.val();
        }
        self.bank.rx_bytes.next = self.rx_bytes.val();
        self.bank.tx_bytes.next = self.tx_bytes.val();
        self.bar.fatal.next = false;
        self.bar.fatal_set.next = bits::<32>(0);
        self.bar.asq_head.next = bits::<16>(0);
        self.bar.msix_pending.next = bits::<32>(0);
        self.bar.vector_lookup.next = false;
        self.bar.vector_lookup_index.next = bits::<5>(0);
    }
}

/// An AXI4-Lite initiator on the composite, with traffic into the bank
/// while it runs and the reference of what it was given.
struct HostBench {
    sim: CycleSim<BarWithCounters>,
    rng: ChaCha8Rng,
    traffic: bool,
    counts: Vec<u64>,
}

impl HostBench {
    fn new(seed: u64) -> HostBench {
        let mut sim = CycleSim::new(BarWithCounters::default(), |b| &mut b.clock);
        sim.uut.reset.next = true;
        sim.tick();
        sim.uut.reset.next = false;
        HostBench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed),
            traffic: false,
            counts: vec![0; COUNTERS],
        }
    }

    fn tick(&mut self) {
        let mut events = 0;
        let (mut rx, mut tx) = (0, 0);
        if self.traffic {
            events = self.rng.gen::<u64>() & !event_bit("mmio_unmapped").to_u64();
            rx = self.rng.gen_range(0..=65535);
            tx = self.rng.gen_range(0..=64);
        }
        let u = &mut self.sim.uut;
        u.events.next = bits(events);
        u.rx_bytes.next = bits(rx);
        u.tx_bytes.next = bits(tx);
        for (k, count) in self.counts.iter_mut().enumerate() {
            if !BYTE_COUNTERS.iter().any(|b| counter_index(b) == k) {
                *count += (events >> k) & 1;
            }
        }
        self.counts[counter_index("rx_bytes")] += rx;
        self.counts[counter_index("tx_bytes")] += tx;
        self.sim.tick();
    }
}

impl AxiLiteInitiator for HostBench {
    fn mmio(&mut self) -> &mut AxiLiteTarget<ADDRESS_BITS> {
        &mut self.sim.uut.mmio
    }

    fn settle(&mut self) {
        self.sim.settle();
    }

    fn tick(&mut self) {
        HostBench::tick(self);
    }
}

impl Mmio for HostBench {
    fn read32(&mut self, offset: u32) -> u32 {
        self.axi_read32(offset)
    }

    fn write32(&mut self, offset: u32, value: u32) {
        self.axi_write32(offset, value)
    }
}

#[test]
fn the_driver_reads_the_bank_through_the_bar() {
    let mut bar = Bar0::open(HostBench::new(4)).expect("the driver opens BAR0");
    // Unmapped accesses count through the BAR's own pulse.
    let unmapped = [0x0FF0, 0x0FF4, 0x3FF8];
    for offset in unmapped {
        assert_eq!(bar.mmio().read32(offset), 0);
    }
    bar.mmio().write32(0x0FF0, 1);
    bar.mmio().traffic = true;
    for _ in 0..3000 {
        bar.mmio().tick();
    }
    bar.mmio().traffic = false;
    for _ in 0..STALENESS {
        bar.mmio().tick();
    }
    let mut expected = bar.mmio().counts.clone();
    expected[counter_index("mmio_unmapped")] = unmapped.len() as u64 + 1;
    let read = bar.counters();
    assert_eq!(read.len(), COUNTERS);
    for ((name, value), want) in read.iter().zip(&expected) {
        assert_eq!(value, want, "{name} through the BAR");
    }
    assert!(read.iter().all(|(_, v)| *v > 0), "every counter moved");

    // While traffic runs: each counter read between the counts at the
    // start (less the staleness) and at the end.
    bar.mmio().traffic = true;
    let before = bar.mmio().counts.clone();
    let read = bar.counters();
    let after = bar.mmio().counts.clone();
    for (k, (name, value)) in read.iter().enumerate() {
        if *name != "mmio_unmapped" {
            assert!(
                *value >= before[k] && *value <= after[k],
                "{name}: {value} outside {}..={}",
                before[k],
                after[k]
            );
        }
    }

    // control.soft_reset clears the bank; control reads it busy meanwhile.
    bar.mmio().traffic = false;
    bar.write32(&abi::CONTROL, "control", 0b10);
    let mut busy = 0;
    while bar.read32(&abi::CONTROL, "control") & 0b10 != 0 {
        busy += 1;
        assert!(busy < 100, "the clear ends");
    }
    assert!(busy > 0, "soft_reset reads 1 while the bank clears");
    for (name, value) in bar.counters() {
        assert_eq!(value, 0, "{name} after soft_reset");
    }
    // And counts from zero again.
    let base = bar.mmio().counts.clone();
    bar.mmio().traffic = true;
    for _ in 0..500 {
        bar.mmio().tick();
    }
    bar.mmio().traffic = false;
    for _ in 0..STALENESS {
        bar.mmio().tick();
    }
    let counts = bar.mmio().counts.clone();
    for ((name, value), k) in bar.counters().into_iter().zip(0..) {
        assert_eq!(value, counts[k] - base[k], "{name} since soft_reset");
    }
}
