//! AtomicUnit through Yosys synth_xilinx: it synthesizes, with no memory
//! (its state is one atomic's registers). The comparison with the model's
//! arithmetic against host memory is `sim/tests/blocks/atomic_unit.rs` under
//! Verilator.

use rocenic_hdl::responder::atomic_unit::AtomicUnit;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth};

#[test]
fn synthesizes_to_registers_and_logic() {
    let report = xilinx_synth("atomic_unit", &verilog_of::<AtomicUnit>()).unwrap();
    assert!(report.count("RAMB36E2") + report.count("RAMB18E2") == 0);
    // tag, address, operands, original and new value, state: about 400.
    assert!((300..=600).contains(&report.flip_flops()), "{}", report.log);
    // The 64-bit adder and comparator and the operand muxes: the write
    // beat repeats the word in every lane rather than shifting it into
    // place (a 512-bit shifter was about 900 LUTs more).
    assert!(report.luts() <= 400, "{}", report.log);
}
