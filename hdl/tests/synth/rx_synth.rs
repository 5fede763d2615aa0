//! Synthesizability of the receive-path blocks: rust-hdl's design checks and
//! Verilog generation always; then Yosys (`$YOSYS`, else the pinned one in
//! `.venv`; missing, the tests fail): `hierarchy -check`, a generic `synth`
//! and `check -assert` (no undriven wires, multiple drivers or logic loops).

use rocenic_hdl::frame::crc::crc32_beat::Crc32Beat;
use rocenic_hdl::frame::crc::icrc_checker::IcrcChecker;
use rocenic_hdl::frame::crc::icrc_generator::IcrcGenerator;
use rocenic_hdl::frame::rx::rx_parser::RxParser;
use rocenic_hdl_testbench::yosys_synth;
use rust_hdl::prelude::*;

fn verilog_of<B: Block>(mut block: B) -> String {
    block.connect_all();
    generate_verilog(&block)
}

fn synthesizes(name: &str, verilog: &str) {
    assert!(verilog.contains("module top("), "{name}: no top module");
    // Not rust-hdl's `yosys_validate`: it runs `yosys` from PATH and panics
    // when there is none, as on a fresh machine.
    let script = "synth -top top; check -assert";
    let report = yosys_synth(name, verilog, script).expect("yosys synth");
    assert!(
        report.cells.iter().any(|(_, n)| *n > 0),
        "{name}: empty netlist\n{}",
        report.log
    );
}

#[test]
fn crc32_beat_synthesizes() {
    synthesizes("crc32_beat", &verilog_of(Crc32Beat::default()));
}

#[test]
fn icrc_checker_synthesizes() {
    synthesizes("icrc_checker", &verilog_of(IcrcChecker::default()));
}

#[test]
fn icrc_generator_synthesizes() {
    synthesizes("icrc_generator", &verilog_of(IcrcGenerator::default()));
}

#[test]
fn rx_parser_synthesizes() {
    synthesizes("rx_parser", &verilog_of(RxParser::default()));
}
