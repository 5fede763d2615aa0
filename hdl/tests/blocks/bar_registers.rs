//! BarRegisters in rust-hdl's simulator against the host ABI's tables:
//! BAR0 reads after reset exactly as `bar0_reset_read32` says and the
//! driver's discovery walk finds every block through it; every RW
//! register reads back what was written (its implemented bits) and drives
//! its port; doorbells pulse once with their value; counters read
//! consistently low half first; the MSI-X table, its masks and lookup
//! port; unmapped, narrow and read-only accesses; soft reset; the
//! congestion block's parameters on the core's ports exactly as the
//! model converts them. Every
//! transfer under random valid/ready delays. Then the recorded cycles on
//! the Verilog under Verilator, the Verilator lint and one Yosys
//! synthesis.

use crate::common::assert_lint_clean;
use crate::common::axi_lite::AxiLiteInitiator;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_abi::registers::{self as abi, Access, RegisterBlock, BAR0_BLOCKS};
use rocenic_driver::bar0::{Bar0, Mmio};
use rocenic_driver::discovery::discover;
use rocenic_hdl::host::axi_lite::AxiLiteTarget;
use rocenic_hdl::host::bar_registers::{dword_of, mapped_dwords, BarRegisters, ADDRESS_BITS};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::dcqcn_integer::{NpParams, RpParams};
use rocenic_model::host_interface::congestion;
use rocenic_model::nic::NicConfig;
use rocenic_model::pfc_pause::PfcParams;
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// The core's clock period: the units of its time parameters.
const NS_PER_CYCLE: u64 = 4;

/// A one-cycle output pulse seen by the bench, with its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pulse {
    SoftReset,
    AsqTail(u64),
    AcqHead(u64),
    EqDoorbell { eqn: u64, value: u64 },
    Unmapped,
}

/// An AXI4-Lite initiator and the block's other neighbours: counters that
/// answer `counter_index` one cycle later, as a registered source does.
struct Bench {
    sim: CycleSim<BarRegisters>,
    rng: ChaCha8Rng,
    /// Counter `k` reads `counters(k, cycle)`.
    counters: fn(u64, u64) -> u64,
    presented_index: u64,
    pulses: Vec<Pulse>,
}

fn still(_: u64, _: u64) -> u64 {
    0
}

impl Bench {
    fn new(seed: u64) -> Bench {
        let mut sim = CycleSim::new(BarRegisters::default(), |b| &mut b.clock);
        sim.record();
        let mut bench = Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed),
            counters: still,
            presented_index: 0,
            pulses: Vec::new(),
        };
        bench.sim.uut.reset.next = true;
        bench.tick();
        bench.sim.uut.reset.next = false;
        bench
    }

    /// One cycle: the counter source answers the index of the last cycle,
    /// the pulses of this cycle are noted, then the edge.
    fn tick(&mut self) {
        let cycle = self.sim.cycles();
        self.sim.uut.counter_value.next = bits((self.counters)(self.presented_index, cycle));
        self.sim.settle();
        let u = &self.sim.uut;
        if u.soft_reset.val() {
            self.pulses.push(Pulse::SoftReset);
        }
        if u.asq_tail_valid.val() {
            self.pulses.push(Pulse::AsqTail(u.asq_tail.val().to_u64()));
        }
        if u.acq_head_valid.val() {
            self.pulses.push(Pulse::AcqHead(u.acq_head.val().to_u64()));
        }
        if u.eq_doorbell_valid.val() {
            self.pulses.push(Pulse::EqDoorbell {
                eqn: u.eq_doorbell_eqn.val().to_u64(),
                value: u.eq_doorbell_value.val().to_u64(),
            });
        }
        if u.unmapped.val() {
            self.pulses.push(Pulse::Unmapped);
        }
        self.presented_index = u.counter_index.val().to_u64();
        self.sim.tick();
    }

    fn idle_cycles(&mut self, most: u32) {
        for _ in 0..self.rng.gen_range(0..=most) {
            self.tick();
        }
    }

    fn take_pulses(&mut self) -> Vec<Pulse> {
        std::mem::take(&mut self.pulses)
    }
}

/// The driver's MMIO over the RTL: 32-bit accesses, as a 32-bit host
/// makes them.
impl Mmio for Bench {
    fn read32(&mut self, offset: u32) -> u32 {
        self.axi_read32(offset)
    }

    fn write32(&mut self, offset: u32, value: u32) {
        self.axi_write32(offset, value)
    }
}

/// Every transfer after up to two idle cycles, each response ready
/// paused at random.
impl AxiLiteInitiator for Bench {
    fn mmio(&mut self) -> &mut AxiLiteTarget<ADDRESS_BITS> {
        &mut self.sim.uut.mmio
    }

    fn settle(&mut self) {
        self.sim.settle();
    }

    fn tick(&mut self) {
        Bench::tick(self);
    }

    fn response_ready(&mut self) -> bool {
        self.rng.gen_bool(0.6)
    }

    fn before_transfer(&mut self) {
        self.idle_cycles(2);
    }
}

fn address_of(block: &RegisterBlock, name: &str, n: u32) -> u32 {
    abi::bar0_offset(block) + block.register(name).unwrap().offset_of(n)
}

#[test]
fn bar0_reads_the_abi_reset_image_and_the_driver_finds_every_block() {
    let mut b = Bench::new(1);
    let mapped = mapped_dwords();
    // Every mapped 8-byte word, and every 16th unmapped one.
    let mut words: Vec<u32> = mapped.iter().map(|d| (*d as u32 * 4) & !7).collect();
    words.extend((0..abi::BAR0_SIZE).step_by(128));
    words.sort_unstable();
    words.dedup();
    for word in &words {
        let value = b.axi_read(*word);
        for (half, addr) in [(0, *word), (32, word + 4)] {
            assert_eq!(
                (value >> half) as u32,
                abi::bar0_reset_read32(addr),
                "BAR0 {addr:#06x} after reset"
            );
        }
    }
    let unmapped_words = words
        .iter()
        .filter(|w| !mapped.contains(&u64::from(**w / 4)))
        .count();
    assert!(unmapped_words > 50, "the sample reaches unmapped space");

    let found = discover(|offset| b.axi_read32(offset)).expect("the walk succeeds on the RTL");
    for (offset, block) in BAR0_BLOCKS {
        assert_eq!(found.offset(block), *offset, "{}", block.name);
    }
}

#[test]
fn registers_read_back_what_was_written_and_drive_their_ports() {
    let mut b = Bench::new(2);
    let mut written = Vec::new();
    for (offset, block) in BAR0_BLOCKS {
        for r in block
            .registers
            .iter()
            .filter(|r| r.access == Access::ReadWrite)
        {
            for n in 0..r.count.max(1) {
                let addr = offset + r.offset_of(n);
                // control.soft_reset would undo the rest: only `enable`.
                let mask = if r.name == "control" {
                    1
                } else {
                    r.implemented()
                };
                let value = b.rng.gen::<u64>() & mask;
                if r.width == 64 {
                    b.axi_write(addr, value, 0xFF);
                } else {
                    b.axi_write32(addr, value as u32);
                }
                written.push((addr, r, value));
            }
        }
    }
    for (addr, r, value) in &written {
        let got = if r.width == 64 {
            b.axi_read(*addr)
        } else {
            u64::from(b.axi_read32(*addr))
        };
        assert_eq!(got, *value, "{} at {addr:#06x}", r.name);
    }
    let value_at = |block: &RegisterBlock, name: &str| {
        let addr = address_of(block, name, 0);
        written.iter().find(|(a, _, _)| *a == addr).unwrap().2
    };
    let u = &b.sim.uut;
    assert_eq!(u.enable.val(), value_at(&abi::CONTROL, "control") == 1);
    assert_eq!(
        u.admin_eqn.val().to_u64(),
        value_at(&abi::CONTROL, "admin_eqn")
    );
    assert_eq!(u.asq_base.val().to_u64(), value_at(&abi::ADMIN, "asq_base"));
    assert_eq!(
        u.asq_log_size.val().to_u64(),
        value_at(&abi::ADMIN, "asq_log_size")
    );
    assert_eq!(u.acq_base.val().to_u64(), value_at(&abi::ADMIN, "acq_base"));
    assert_eq!(
        u.acq_log_size.val().to_u64(),
        value_at(&abi::ADMIN, "acq_log_size")
    );
    let masks: u64 = (0..32)
        .map(|n| {
            let addr = address_of(&abi::MSIX, "vector_control", n);
            written.iter().find(|(a, _, _)| *a == addr).unwrap().2 << n
        })
        .sum();
    assert_eq!(u.msix_mask.val().to_u64(), masks);
    let pulses = b.take_pulses();
    assert!(pulses.is_empty(), "RW registers pulse nothing: {pulses:?}");

    // Doorbells: one pulse each, with the written value; they read 0.
    b.axi_write32(address_of(&abi::ADMIN, "asq_tail", 0), 0xABCD_1234);
    b.axi_write32(address_of(&abi::ADMIN, "acq_head", 0), 0x0000_0042);
    for eqn in 0..8 {
        b.axi_write32(
            address_of(&abi::EVENT_QUEUES, "eq_doorbell", eqn),
            0x8000_0000 | (eqn * 3),
        );
    }
    let mut expected = vec![Pulse::AsqTail(0x1234), Pulse::AcqHead(0x42)];
    expected.extend((0..8).map(|eqn| Pulse::EqDoorbell {
        eqn,
        value: 0x8000_0000 | (eqn * 3),
    }));
    assert_eq!(b.take_pulses(), expected);
    assert_eq!(b.axi_read32(address_of(&abi::ADMIN, "asq_tail", 0)), 0);
    b.sim.uut.asq_head.next = bits(0x7777);
    assert_eq!(b.axi_read32(address_of(&abi::ADMIN, "asq_head", 0)), 0x7777);

    let cycles = b.sim.replay_in_verilator("bar_registers").unwrap();
    assert!(cycles > 1000, "replayed {cycles} cycles");
}

/// Counter `k` at cycle `c`: both halves move every cycle, so a torn read
/// shows as halves of different cycles.
fn moving(k: u64, c: u64) -> u64 {
    ((c + k) << 32) | (c + k)
}

#[test]
fn counters_read_whole_and_low_half_first() {
    let mut b = Bench::new(3);
    b.counters = moving;
    for (k, counter) in abi::COUNTERS.iter().enumerate() {
        let addr = address_of(&abi::COUNTERS_BLOCK, counter.name, 0);
        let whole = b.axi_read(addr);
        assert_eq!(
            whole >> 32,
            whole & 0xFFFF_FFFF,
            "{}: one 64-bit read is one value",
            counter.name
        );
        assert!((whole & 0xFFFF_FFFF) > k as u64, "counter {k} answered");
        let low = b.axi_read32(addr);
        b.idle_cycles(5);
        let high = b.axi_read32(addr + 4);
        assert_eq!(
            high, low,
            "{}: the high half latched by the low read",
            counter.name
        );
    }
    assert!(b.take_pulses().is_empty());
}

#[test]
fn the_msix_table_holds_vectors_for_the_lookup_port() {
    let mut b = Bench::new(4);
    assert_eq!(
        b.sim.uut.msix_mask.val().to_u64(),
        0xFFFF_FFFF,
        "masked at reset"
    );
    let vectors: Vec<(u64, u32)> = (0..32).map(|_| (b.rng.gen(), b.rng.gen())).collect();
    for (n, (address, data)) in vectors.iter().enumerate() {
        b.axi_write(
            address_of(&abi::MSIX, "vector_address", n as u32),
            *address,
            0xFF,
        );
        b.axi_write32(address_of(&abi::MSIX, "vector_data", n as u32), *data);
    }
    b.axi_write32(address_of(&abi::MSIX, "vector_control", 5), 0);
    assert_eq!(b.sim.uut.msix_mask.val().to_u64(), 0xFFFF_FFFF & !(1 << 5));
    for (n, (address, data)) in vectors.iter().enumerate() {
        assert_eq!(
            b.axi_read(address_of(&abi::MSIX, "vector_address", n as u32)),
            *address
        );
        assert_eq!(
            b.axi_read32(address_of(&abi::MSIX, "vector_data", n as u32)),
            *data
        );
    }
    // The lookup port, every cycle for a while, while BAR reads of the
    // table run: each answers the cycle after its request.
    let mut asked: Option<usize> = None;
    let table_read = address_of(&abi::MSIX, "vector_address", 9);
    b.sim.uut.mmio.araddr.next = bits(u64::from(table_read));
    b.sim.uut.mmio.arvalid.next = true;
    b.sim.uut.mmio.rready.next = true;
    let mut reads = Vec::new();
    for cycle in 0..200u64 {
        b.sim.settle();
        if let Some(n) = asked {
            assert_eq!(
                b.sim.uut.vector_address.val().to_u64(),
                vectors[n].0,
                "cycle {cycle}"
            );
            assert_eq!(
                b.sim.uut.vector_data.val().to_u64(),
                u64::from(vectors[n].1)
            );
        }
        if b.sim.uut.mmio.rvalid.val() {
            reads.push(b.sim.uut.mmio.rdata.val().to_u64());
        }
        let n = b.rng.gen_range(0..32);
        let lookup = b.rng.gen_bool(0.5);
        b.sim.uut.vector_lookup.next = lookup;
        b.sim.uut.vector_lookup_index.next = bits(n as u64);
        asked = lookup.then_some(n);
        b.tick();
    }
    b.sim.uut.mmio.arvalid.next = false;
    b.sim.uut.vector_lookup.next = false;
    assert!(reads.len() > 10, "BAR reads went on beside the lookups");
    assert!(
        reads.iter().all(|r| *r == vectors[9].0),
        "a lookup never corrupts a BAR read"
    );

    b.sim.uut.msix_pending.next = bits(0x8000_0001);
    assert_eq!(
        b.axi_read(address_of(&abi::MSIX, "pending", 0)),
        0x8000_0001
    );
}

#[test]
fn unmapped_narrow_and_read_only_accesses_change_nothing() {
    let mut b = Bench::new(5);
    let scratch = address_of(&abi::CONTROL, "scratch", 0);
    b.axi_write32(scratch, 0x1111_2222);
    // Unmapped: reads 0, one pulse per read and per dword written; a
    // write lands nowhere.
    assert_eq!(b.axi_read(0x0FF0), 0);
    assert_eq!(b.axi_read(0x0FF4), 0);
    assert_eq!(b.take_pulses(), vec![Pulse::Unmapped, Pulse::Unmapped]);
    b.axi_write(0x0FF0, u64::MAX, 0xFF);
    assert_eq!(b.take_pulses(), vec![Pulse::Unmapped, Pulse::Unmapped]);
    // A 16-bit write is not a 32-bit access: ignored.
    b.axi_write(scratch & !7, 0xFFFF_FFFF_FFFF_FFFF, 0x30);
    assert_eq!(b.axi_read32(scratch), 0x1111_2222);
    // Read-only registers ignore writes and are mapped.
    let cap_qps = address_of(&abi::DEVICE, "cap_qps", 0);
    b.axi_write32(cap_qps, 7);
    assert_eq!(b.axi_read32(cap_qps), abi::limits::QPS);
    assert!(b.take_pulses().is_empty());
    // Nothing else moved.
    assert_eq!(b.axi_read32(scratch), 0x1111_2222);
}

#[test]
fn soft_reset_status_and_fatal_cause() {
    let mut b = Bench::new(6);
    let control = address_of(&abi::CONTROL, "control", 0);
    let status = address_of(&abi::CONTROL, "status", 0);
    let fatal_cause = address_of(&abi::CONTROL, "fatal_cause", 0);
    let scratch = address_of(&abi::CONTROL, "scratch", 0);
    let asq_base = address_of(&abi::ADMIN, "asq_base", 0);
    b.axi_write32(control, 1);
    assert_eq!(b.axi_read32(status), 1, "ready once enabled");
    b.sim.uut.reset_busy.next = true;
    b.sim.uut.fatal.next = true;
    assert_eq!(b.axi_read32(status), 2, "busy: not ready; fatal shown");
    assert_eq!(
        b.axi_read32(control),
        3,
        "soft_reset reads the reset in progress"
    );
    b.sim.uut.reset_busy.next = false;
    b.sim.uut.fatal.next = false;

    b.sim.uut.fatal_set.next = bits(0b1010);
    b.tick();
    b.sim.uut.fatal_set.next = bits(0);
    assert_eq!(b.axi_read32(fatal_cause), 0b1010);
    b.axi_write32(fatal_cause, 0b0010);
    assert_eq!(b.axi_read32(fatal_cause), 0b1000, "write 1 to clear");

    b.axi_write32(scratch, 0xDEAD_BEEF);
    b.axi_write(asq_base, 0x1234_5678_9ABC_D000, 0xFF);
    b.axi_write32(address_of(&abi::MSIX, "vector_control", 0), 0);
    b.take_pulses();
    b.axi_write32(control, 0b11);
    assert_eq!(b.take_pulses(), vec![Pulse::SoftReset]);
    assert_eq!(b.axi_read32(scratch), 0);
    assert_eq!(b.axi_read(asq_base), 0);
    assert_eq!(b.axi_read32(control), 0, "disabled by the reset");
    assert_eq!(b.axi_read32(fatal_cause), 0);
    assert_eq!(
        b.sim.uut.msix_mask.val().to_u64(),
        0xFFFF_FFFF,
        "masked again"
    );
    assert_eq!(
        b.axi_read32(address_of(&abi::CONTROL, "admin_eqn", 0)),
        abi::CONTROL.register("admin_eqn").unwrap().reset as u32
    );
}

#[test]
fn the_driver_opens_the_rtl_bar_and_reads_its_attributes_and_counters() {
    let mut bench = Bench::new(7);
    bench.counters = moving;
    let mut bar = Bar0::open(bench).expect("the driver opens BAR0 of the RTL");
    let attr = bar.query_device();
    assert_eq!(attr.max_qp, abi::limits::QPS);
    assert_eq!(attr.max_eq, abi::limits::EQS);
    assert_eq!(attr.abi_version, rocenic_abi::ABI_VERSION);
    let counters = bar.counters();
    assert_eq!(counters.len(), abi::COUNTERS.len());
    for (name, value) in counters {
        assert_eq!(
            value >> 32,
            value & 0xFFFF_FFFF,
            "{name}: low half first gives one value"
        );
        assert_ne!(value, 0, "{name} read from the counter port");
    }
}

#[test]
fn the_constants_come_from_the_abi() {
    // The dword the RTL compares against is the ABI's offset / 4.
    assert_eq!(
        dword_of(&abi::ADMIN, "asq_tail") * 4,
        u64::from(address_of(&abi::ADMIN, "asq_tail", 0))
    );
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("bar_registers", &verilog_of::<BarRegisters>());
}

#[test]
fn synthesizes_small_with_the_table_in_lut_ram() {
    let report = xilinx_synth("bar_registers", &verilog_of::<BarRegisters>()).unwrap();
    assert_eq!(
        report.block_rams(),
        0,
        "three 32 x 32 tables belong in LUT RAM"
    );
    assert!(
        report.lut_rams() > 0,
        "the MSI-X table is in LUT RAM, not flops"
    );
    assert!(report.luts() < 1500, "{} LUTs", report.luts());
}

/// Cycles from the edge that takes an access to the first cycle its
/// response is valid, with the response channel ready throughout.
fn response_latency(write: bool, addr: u32) -> u64 {
    let mut b = Bench::new(8);
    let m = &mut b.sim.uut.mmio;
    m.bready.next = true;
    m.rready.next = true;
    if write {
        m.awaddr.next = bits(u64::from(addr));
        m.wstrb.next = bits(0xFF);
        m.awvalid.next = true;
        m.wvalid.next = true;
    } else {
        m.araddr.next = bits(u64::from(addr));
        m.arvalid.next = true;
    }
    b.sim.settle();
    assert!(
        b.sim.uut.mmio.awready.val() || b.sim.uut.mmio.arready.val(),
        "taken at once when idle"
    );
    b.tick();
    let m = &mut b.sim.uut.mmio;
    m.awvalid.next = false;
    m.wvalid.next = false;
    m.arvalid.next = false;
    for cycles in 0..16 {
        b.sim.settle();
        if b.sim.uut.mmio.bvalid.val() || b.sim.uut.mmio.rvalid.val() {
            return cycles;
        }
        b.tick();
    }
    panic!("no response");
}

#[test]
fn latency_is_what_the_module_doc_says() {
    let scratch = address_of(&abi::CONTROL, "scratch", 0);
    assert_eq!(response_latency(true, scratch & !7), 2, "write");
    assert_eq!(
        response_latency(false, scratch & !7),
        4,
        "64-bit or low-half read"
    );
    assert_eq!(response_latency(false, scratch), 2, "high-half read");
}

/// The congestion block's ports as the model converts the configuration
/// its registers make (`reference`: each register's value by name).
fn assert_congestion_ports(uut: &BarRegisters, reference: &BTreeMap<&str, u32>) {
    let mut config = NicConfig::new([2, 0, 0, 0, 0, 1], "10.0.0.1".parse().unwrap());
    congestion::apply(|name| reference[name], &mut config);
    let ns = NS_PER_CYCLE;
    let rp = RpParams::for_nic(&config.dcqcn, config.line_rate_bps, ns).unwrap();
    let np = NpParams::for_nic(&config.dcqcn, ns);
    let pfc = PfcParams::for_nic(&config, ns);
    let got = |s: &Signal<Out, Bits<32>>| s.val().to_u64();
    let r = &uut.rp;
    let got_rp = RpParams {
        enabled: r.enabled.val(),
        line_rate: got(&r.line_rate) as u32,
        min_rate: got(&r.min_rate) as u32,
        ai_rate: got(&r.ai_rate) as u32,
        hai_rate: got(&r.hai_rate) as u32,
        g: r.g.val().to_u64() as u16,
        gd: r.gd.val().to_u64() as u8,
        min_dec_fac: r.min_dec_fac.val().to_u64() as u16,
        initial_alpha: r.initial_alpha.val().to_u64() as u16,
        alpha_period: got(&r.alpha_period) as u32,
        rate_period: got(&r.rate_period) as u32,
        byte_reset: got(&r.byte_reset) as u32,
        threshold: r.threshold.val().to_u64() as u8,
        monitor_period: got(&r.monitor_period) as u32,
    };
    assert_eq!(got_rp, rp, "after {reference:?}");
    let got_np = NpParams {
        enabled: uut.np.enabled.val(),
        interval: got(&uut.np.interval) as u32,
    };
    assert_eq!(got_np, np);
    let got_pfc = PfcParams {
        honoured: uut.pfc.honoured.val().to_u64() as u8,
        bits_per_cycle: uut.pfc.bits_per_cycle.val().to_u64() as u16,
        watchdog_quanta: got(&uut.pfc.watchdog_quanta) as u32,
    };
    assert_eq!(got_pfc, pfc);
    assert_eq!(uut.cnp_dscp.val().to_u64(), u64::from(config.cnp_dscp));
}

#[test]
fn congestion_parameters_reach_the_core_ports_as_the_model_converts_them() {
    let mut bench = Bench::new(11);
    bench.tick();
    let reset: BTreeMap<&str, u32> = abi::CONGESTION
        .registers
        .iter()
        .map(|r| (r.name, r.reset as u32))
        .collect();
    assert_congestion_ports(&bench.sim.uut, &reset);
    let mut reference = reset.clone();
    let mut bar = Bar0::open(bench).expect("the driver opens BAR0 of the RTL");
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for _ in 0..150 {
        let r = &abi::CONGESTION.registers[rng.gen_range(0..abi::CONGESTION.registers.len())];
        let max = r.implemented() as u32;
        // Small values, full-width ones, and the ends of each range.
        let value = match rng.gen_range(0..4) {
            0 => rng.gen_range(0..=max.min(30)),
            1 => rng.gen::<u32>() & max,
            2 => max,
            _ => 0,
        };
        bar.set_congestion(r.name, value).unwrap();
        reference.insert(r.name, value);
        let bench = bar.mmio();
        bench.tick();
        bench.tick();
        assert_congestion_ports(&bench.sim.uut, &reference);
    }
    let read: BTreeMap<&str, u32> = bar.congestion().into_iter().collect();
    assert_eq!(read, reference);
    // A soft reset returns every parameter to its reset value.
    bar.write32(&abi::CONTROL, "control", 2);
    let bench = bar.mmio();
    for _ in 0..3 {
        bench.tick();
    }
    assert_congestion_ports(&bench.sim.uut, &reset);
    let cycles = bench
        .sim
        .replay_in_verilator("bar_registers_congestion")
        .unwrap();
    assert!(cycles > 1000, "replayed {cycles} cycles");
}
