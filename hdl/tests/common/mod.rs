//! Helpers shared by the RTL integration tests.

pub mod axi_lite;
pub mod frames;
pub mod rx;

use rocenic_hdl_testbench::verilator_lint_failures;

/// Verilator `-Wall` as the lint flow runs it: anything but the lines it
/// passes by rule fails.
pub fn assert_lint_clean(name: &str, verilog: &str) {
    let real = verilator_lint_failures(name, verilog).unwrap();
    assert!(real.is_empty(), "{name}: {real:#?}");
}
