//! Synthesizability of the receive-path blocks: rust-hdl's design checks and
//! Verilog generation always; Yosys (`read_verilog; hierarchy -check;
//! proc` as rust-hdl's `yosys_validate` runs it, then a generic `synth`)
//! when `yosys` is installed. The check is skipped, with a note, when it is
//! not (`apt-get install -y yosys`).

use rocenic_hdl::crc32_beat::Crc32Beat;
use rocenic_hdl::icrc_checker::IcrcChecker;
use rocenic_hdl::icrc_generator::IcrcGenerator;
use rocenic_hdl::rx_parser::RxParser;
use rocenic_hdl::testbench::yosys_synth;
use rust_hdl::prelude::*;

fn verilog_of<B: Block>(mut block: B) -> String {
    block.connect_all();
    generate_verilog(&block)
}

fn synthesizes(name: &str, verilog: &str) {
    assert!(verilog.contains("module top("), "{name}: no top module");
    match yosys_validate(name, verilog) {
        Ok(()) => {}
        // rust-hdl's check runs `yosys` from PATH; the synthesis below runs
        // the pinned one (`$YOSYS`) all the same.
        Err(e) if !rocenic_hdl::testbench::tool_available("yosys") => {
            eprintln!("note: no yosys on PATH for yosys_validate of {name} ({e:?})");
        }
        Err(e) => panic!("{name}: yosys_validate: {e:?}"),
    }
    if let Some(report) = yosys_synth(name, verilog, "synth -top top").expect("yosys synth") {
        assert!(
            report.cells.iter().any(|(_, n)| *n > 0),
            "{name}: empty netlist\n{}",
            report.log
        );
    }
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
