//! RequesterDatapath's synthesis through the pinned Yosys: the payload
//! buffer and the MR tables land in block RAM, and the logic fits. No
//! rust-hdl simulation here: the block is 512 bits wide with the TX builder
//! and MR translation inside, far too slow for rust-hdl's simulator; its
//! behaviour is checked frame for frame against the model NIC under
//! Verilator (`sim/tests/blocks/requester_datapath.rs`).

use rocenic_hdl::requester::requester_datapath::RequesterDatapath;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth};

#[test]
fn synthesizes_with_its_buffers_in_block_ram() {
    let verilog = verilog_of::<RequesterDatapath>();
    let report = xilinx_synth("requester_datapath", &verilog).unwrap();
    // 1024 x 512 bits of payload buffer alone are 16 RAMB36.
    assert!(report.count("RAMB36E2") >= 16, "{}", report.log);
    assert!(
        report.block_rams() > 0 && report.luts() > 0,
        "{}",
        report.log
    );
    assert_eq!(report.count("DSP48E2"), 0, "{}", report.log);
}
