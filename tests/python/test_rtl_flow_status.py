"""The size table `make synth` writes into docs/status.md: hdl/synth/rtl_flow.py
rewrites only the section between the two marker comments, from the same
per-block results as build/synth/report.md. Runs on sample Yosys statistics;
no Yosys needed."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLOW_PATH = ROOT / "hdl" / "synth" / "rtl_flow.py"


def load_flow():
    spec = importlib.util.spec_from_file_location("rtl_flow", FLOW_PATH)
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs: its dataclasses look their module up.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


flow = load_flow()

HEAD = "# Status\n\nText above the table stays.\n\n## Sizes\n\n"
TAIL = "\nText below the table stays, `| `not_a_row` |` included.\n"


def page(section):
    return HEAD + flow.TABLE_BEGIN + section + flow.TABLE_END + "\n" + TAIL


def stat_json(path, cells):
    """A `stat -json` file as Yosys writes it after `tee`, log header first."""
    body = {"modules": {"\\top": {"num_submodules": 0, "num_cells_by_type": cells}}}
    path.write_text("-- Running command `stat -json' --\n" + json.dumps(body))
    return path


def result(tmp_path, name, cells):
    summary = flow.summarize(flow.parse_stat(stat_json(tmp_path / f"{name}.json", cells)))
    return {"name": name, "ok": True, "summary": summary, "seconds": 1.0}


@pytest.fixture
def results(tmp_path):
    return [
        result(tmp_path, "rx_parser", {"LUT6": 1200, "LUT3": 34, "FDRE": 2500, "RAMB36E2": 2, "RAM64M8": 3}),
        result(tmp_path, "qp_context", {"LUT2": 90, "FDRE": 700, "RAMB36E2": 8, "$scopeinfo": 4}),
    ]


def rows(text):
    return [l for l in text.splitlines() if l.startswith("| `")]


def test_full_run_rewrites_only_the_marked_section(tmp_path, results):
    status = tmp_path / "status.md"
    status.write_text(page("\n| `old_block` | 1 | 2 | 3 | 4 | 5 | 6 | abc (2026-01-01) | by hand |\n"))
    flow.update_status(status, "Yosys 0.70", results, "1234567 (2026-12-01)", partial=False)
    text = status.read_text()

    assert text.startswith(HEAD + flow.TABLE_BEGIN + "\n")
    assert text.endswith(flow.TABLE_END + "\n" + TAIL)
    section = flow.current_section(text)
    assert [r.split("|")[1].strip() for r in rows(section)] == ["`rx_parser`", "`qp_context`"]
    # LUT, FF, LUTRAM (3 RAM64M8 = 24 LUT sites), BRAM36, BRAM18, DSP.
    assert "| `rx_parser` | 1,234 | 2,500 | 24 | 2 | 0 | 0 | 1234567 (2026-12-01) | `make synth` |" in section
    assert "| `qp_context` | 90 | 700 | 0 | 8 | 0 | 0 |" in section
    assert "Yosys 0.70" in section
    assert "old_block" not in section


def test_rewrite_is_idempotent(tmp_path, results):
    status = tmp_path / "status.md"
    status.write_text(page("\n"))
    flow.update_status(status, "Yosys 0.70", results, "1234567 (2026-12-01)", partial=False)
    once = status.read_text()
    flow.update_status(status, "Yosys 0.70", results, "1234567 (2026-12-01)", partial=False)
    assert status.read_text() == once


def test_partial_run_keeps_the_other_rows(tmp_path, results):
    kept = "| `nic_core` | 75,878 | 56,090 | 1,640 | 599 | 189 | 0 | 59f5847 (2026-11-29) | `hdl/tests/nic_core.rs` |"
    old_rx = "| `rx_parser` | 1 | 1 | 0 | 0 | 0 | 0 | aaaaaaa (2026-11-01) | `make synth` |"
    status = tmp_path / "status.md"
    status.write_text(page(f"\n{kept}\n{old_rx}\n"))
    flow.update_status(status, "Yosys 0.70", results[:1], "1234567 (2026-12-01)", partial=True)
    section = flow.current_section(status.read_text())
    assert rows(section)[0] == kept
    assert rows(section)[1].startswith("| `rx_parser` | 1,234 | 2,500 |")
    assert old_rx not in section
    assert len(rows(section)) == 2


def test_failed_block_is_listed_as_failed(tmp_path):
    status = tmp_path / "status.md"
    status.write_text(page("\n"))
    failed = {"name": "tx_builder", "ok": False, "errors": ["ERROR: boom"], "seconds": 0.1}
    flow.update_status(status, "Yosys 0.70", [failed], "1234567 (2026-12-01)", partial=False)
    assert "| `tx_builder` | - | - | - | - | - | - | 1234567 (2026-12-01) | synthesis FAILED |" in status.read_text()


@pytest.mark.parametrize(
    "text",
    [
        "no markers at all\n",
        flow.TABLE_END + "\n" + flow.TABLE_BEGIN + "\n",
        page("\n") + flow.TABLE_BEGIN + "\n" + flow.TABLE_END + "\n",
    ],
)
def test_malformed_markers_are_refused(tmp_path, text):
    status = tmp_path / "status.md"
    status.write_text(text)
    with pytest.raises(flow.FlowError):
        flow.update_status(status, "Yosys 0.70", [], "x", partial=False)
    assert status.read_text() == text


def test_the_repository_status_page_has_one_section():
    text = (ROOT / "docs" / "status.md").read_text()
    assert text.count(flow.TABLE_BEGIN) == 1 and text.count(flow.TABLE_END) == 1
    assert text.index(flow.TABLE_BEGIN) < text.index(flow.TABLE_END)


FAKE_YOSYS = """#!{python}
import json, sys
from pathlib import Path
if "-V" in sys.argv:
    print("Yosys 0.0 (git sha1 0000000, fake)")
    sys.exit(0)
log = Path(sys.argv[sys.argv.index("-l") + 1])
log.write_text("")
script = Path(sys.argv[sys.argv.index("-s") + 1]).read_text()
if "stat -json" in script:
    cells = {{"LUT6": 10, "FDRE": 20, "RAMB18E2": 1}}
    Path("stat.json").write_text(json.dumps({{"modules": {{"\\\\top": {{"num_cells_by_type": cells}}}}}}))
"""


def test_synth_command_writes_report_and_status_table(tmp_path):
    """`rtl_flow.py synth` end to end, with a stand-in for Yosys."""
    import stat as st

    verilog = tmp_path / "verilog"
    verilog.mkdir()
    (verilog / "blocks.txt").write_text("alpha\nbeta\n")
    for name in ("alpha", "beta"):
        (verilog / f"{name}.v").write_text(f"module top(); // {name}\nendmodule\n")
    yosys = tmp_path / "yosys"
    yosys.write_text(FAKE_YOSYS.format(python=sys.executable))
    yosys.chmod(yosys.stat().st_mode | st.S_IEXEC)
    status = tmp_path / "status.md"
    status.write_text(page("\n| `gone` | 1 | 1 | 0 | 0 | 0 | 0 | x | by hand |\n"))

    args = ["synth", "--verilog-dir", str(verilog), "--out", str(tmp_path / "out"), "--tool", str(yosys)]
    assert flow.main(args + ["--status", str(status)]) == 0
    assert (tmp_path / "out" / "report.md").exists()
    section = flow.current_section(status.read_text())
    assert [r.split("|")[1].strip() for r in rows(section)] == ["`alpha`", "`beta`"]
    assert "| `alpha` | 10 | 20 | 0 | 0 | 1 | 0 |" in section
    assert status.read_text().endswith(TAIL)

    # --no-status leaves the page alone.
    status.write_text(page("\n"))
    assert flow.main(args + ["--status", str(status), "--no-status"]) == 0
    assert status.read_text() == page("\n")
