//! CompleterDatapath: Yosys synth_xilinx at the default 1024 QPs x 16
//! outstanding WQEs. The send-queue tracker's ring and pointers, the WQEs'
//! local buffers and the completer's side RAM must map to block RAM, nothing to LUT RAM or
//! flip-flops. (Its behaviour is checked against the model under Verilator
//! by `sim/tests/rtl_completer_datapath.rs`, which replays recorded model
//! traces event by event; the inner blocks have their own unit tests.)

use rocenic_hdl::completer_datapath::CompleterDatapathDefault;
use rocenic_hdl::testbench::{tool_available, yosys_program, yosys_synth};
use rust_hdl::prelude::*;

fn verilog() -> String {
    let mut uut = CompleterDatapathDefault::default();
    uut.connect_all();
    generate_verilog(&uut)
}

#[test]
fn memories_map_to_block_ram() {
    if !tool_available(&yosys_program()) {
        eprintln!("note: yosys not installed; block RAM mapping not checked");
        return;
    }
    let script = "synth_xilinx -family xcup -top top -flatten -noiopad -noclkbuf";
    let report = yosys_synth("completer_datapath", &verilog(), script)
        .expect("yosys")
        .expect("yosys present");
    let bram36 = report.count("RAMB36E2");
    let bram18 = report.count("RAMB18E2");
    eprintln!(
        "completer_datapath 1024 x 16: {bram36} RAMB36E2, {bram18} RAMB18E2, {} LUTs, {} FFs",
        report.luts(),
        report.flip_flops()
    );
    // The tracker's 16384 x 115 ring (52 RAMB36) and 1024 x 16 pointers
    // (one RAMB18), the 16384 x 96 local buffers (44 RAMB36), the 1024 x
    // 27 side RAM (one RAMB36).
    assert!(bram36 + bram18 > 0, "{}", report.log);
    assert_eq!((bram36, bram18), (97, 1), "{}", report.log);
    assert!(
        report.cells.iter().all(|(c, _)| !c.starts_with("RAM64")
            && !c.starts_with("RAM32")
            && !c.starts_with("RAM128")
            && !c.starts_with("RAM256")),
        "{}",
        report.log
    );
    // Registers of the event, the checker's pipeline and the tracker's
    // walk; no memory in flip-flops.
    assert!(report.flip_flops() <= 2000, "{}", report.log);
}
