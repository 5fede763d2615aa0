//! ResponsePlacement: Yosys maps the block (parser, payload / header /
//! work FIFOs, local-write MR translation, realigner) with its memories in
//! block RAM. Its behaviour is verified under Verilator against the model
//! (sim/tests/blocks/response_placement.rs).

use rocenic_hdl::requester::response_placement::ResponsePlacement;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth};

#[test]
fn synthesizes_with_its_memories_in_block_ram() {
    let verilog = verilog_of::<ResponsePlacement>();
    // `xilinx_synth` prints the LUT / FF / RAMB36 / RAMB18 counts.
    let report = xilinx_synth("response_placement", &verilog).unwrap();
    let ramb36 = report.count("RAMB36E2");
    // The payload FIFO (256 x 513 bits, at least 4 RAMB36), the MR table
    // (1K x 211) and the MTT (16K x 64): block RAM, so the flip-flops are
    // the pipelines' registers only.
    assert!(ramb36 >= 4 + 6 + 28, "{}", report.log);
    assert!(report.flip_flops() < 12_000, "{}", report.log);
}
