//! The Verilated `NicTop`: BAR0 and the counters around the core. Random
//! frames of every opcode go in (no QP configured, so the core answers
//! none); the driver's `Bar0` then opens BAR0 (discovery walk, ABI version,
//! scratch) and reads `rx_frames` and `rx_bytes` equal to the frames and
//! bytes given, nothing sent, an unmapped read and write counted in
//! `mmio_unmapped`; a soft reset (`control.soft_reset`) clears every
//! counter. The congestion registers' path to the core and the other
//! counters are checked on every run of the NIC harness
//! (`rocenic_rtl::core_nic`: the registers set through BAR0, the counters
//! read at the end against the core's ports).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_driver::abi::registers as abi;
use rocenic_driver::bar0::{Bar0, Mmio};
use rocenic_hdl::host::counter_bank::{CLEAR_CYCLES, STALENESS};
use rocenic_rtl::bar0::VerilatedBar;
use rocenic_rtl::gen::frame_with;
use rocenic_rtl::stream::{AxisInPorts, StreamSource};
use rocenic_wire::opcode::OPCODES;
use verilator_sys::{NicTop as Dut, Sim};

/// A BAR0 dword no register holds.
const UNMAPPED: u32 = 0x0FF0;

fn counter(bar: &mut Bar0<VerilatedBar<'_, Dut>>, name: &str) -> u64 {
    let counters = bar.counters();
    bar.mmio().stuck().expect("BAR0 answers");
    counters
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
        .1
}

#[test]
fn bar0_counts_the_core_s_frames_and_a_soft_reset_clears_the_counters() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut sim = Sim::<Dut>::new().expect("sim");
    sim.set_bit(Dut::RESET, true);
    sim.tick();
    sim.set_bit(Dut::RESET, false);
    for ready in [Dut::FRAME_TREADY, Dut::SCQE_READY, Dut::RCQE_READY] {
        sim.set_bit(ready, true);
    }
    sim.set_bit(Dut::OUT_READY, true);
    let rx = AxisInPorts::<Dut>::named("rx").expect("rx ports");
    let mut src = StreamSource::new(0.8, 7);
    let (mut frames, mut bytes) = (0u64, 0u64);
    for _ in 0..120 {
        let index = rng.gen_range(0..OPCODES.len());
        let mut frame = frame_with(index, rng.gen(), rng.gen_range(0..300), rng.gen());
        frame.bth.dest_qp = rng.gen_range(0..1024);
        let Ok(encoded) = frame.encode() else {
            continue;
        };
        if src.push_frame(&encoded) {
            frames += 1;
            bytes += encoded.len() as u64;
        }
    }
    while !src.is_idle() {
        src.begin_cycle();
        rx.drive(sim.dut_mut(), src.current());
        sim.eval();
        let ready = rx.ready(sim.dut());
        src.end_cycle(sim.cycle(), ready);
        sim.tick();
        assert!(sim.cycle() < 200_000, "rx stalled");
    }
    rx.drive(sim.dut_mut(), None);
    sim.ticks(STALENESS);

    let mut bar = Bar0::open(VerilatedBar::new(&mut sim).expect("mmio ports")).expect("BAR0");
    assert_eq!(counter(&mut bar, "rx_frames"), frames);
    assert_eq!(counter(&mut bar, "rx_bytes"), bytes);
    assert_eq!(counter(&mut bar, "tx_frames"), 0, "no QP, nothing sent");
    assert_eq!(counter(&mut bar, "mmio_unmapped"), 0);
    assert_eq!(bar.mmio().read32(UNMAPPED), 0, "unmapped reads 0");
    bar.mmio().write32(UNMAPPED, 0xDEAD_BEEF);
    bar.mmio().idle(STALENESS);
    assert_eq!(counter(&mut bar, "mmio_unmapped"), 2);

    let soft_reset = abi::control_bits::SOFT_RESET;
    let mut word = [0u8; 4];
    soft_reset.set(&mut word, 1).expect("a flag");
    bar.write32(&abi::CONTROL, "control", u32::from_le_bytes(word));
    bar.mmio().idle(CLEAR_CYCLES);
    let control = bar.read32(&abi::CONTROL, "control").to_le_bytes();
    assert_eq!(soft_reset.get(&control), Ok(0), "the reset is done");
    for (name, value) in bar.counters() {
        assert_eq!(value, 0, "{name} after a soft reset");
    }
    bar.mmio().stuck().expect("BAR0 answers");
}
