//! CompleterDatapath: Yosys synth_xilinx at the default 1024 QPs x 16
//! outstanding WQEs. The send-queue tracker's ring and pointers, the WQEs'
//! local buffers and the completer's side RAM must map to block RAM, nothing to LUT RAM or
//! flip-flops. (Its behaviour is checked against the model under Verilator
//! by `sim/tests/blocks/completer_datapath.rs`, which replays recorded model
//! traces event by event; the inner blocks have their own unit tests.)

use rocenic_hdl::requester::completer_datapath::CompleterDatapathDefault;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth};

#[test]
fn memories_map_to_block_ram() {
    let report = xilinx_synth(
        "completer_datapath",
        &verilog_of::<CompleterDatapathDefault>(),
    )
    .unwrap();
    let bram36 = report.count("RAMB36E2");
    let bram18 = report.count("RAMB18E2");
    // The tracker's 16384 x 115 ring (52 RAMB36) and 1024 x 16 pointers
    // (one RAMB18), the 16384 x 96 local buffers (44 RAMB36), the 1024 x
    // 27 side RAM (one RAMB36).
    assert!(bram36 + bram18 > 0, "{}", report.log);
    assert_eq!((bram36, bram18), (97, 1), "{}", report.log);
    report.assert_memories_in_block_ram();
    // Registers of the event, the checker's pipeline and the tracker's
    // walk; no memory in flip-flops.
    assert!(report.flip_flops() <= 2000, "{}", report.log);
}
