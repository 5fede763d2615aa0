"""pytest entry for the cocotb benches on the exported Verilog
(build/verilog/<block>.v, from `make verilog`).

What: `BENCHES` names each bench build: the block, its wrapper top
(tests/cocotb/tops/<top>.sv), the cocotb module (tests/cocotb/<module>.py)
and the cocotb tests to run. Each (bench, test) pair is one pytest test,
`test_bench[<bench>-<test>]`, run in its own simulation; it runs every
cocotb test whose name starts with <test>, so a cocotb test function with
parameter points (rx_parser, tx_builder, mr_translate) runs all its points
in that one simulation. A failing test's (or point's) FST waveform is kept
under build/cocotb/<bench>/waves/ (the nic_pair bench's under
build/cocotb/nic_pair/waves/).

Each bench is built once per session: `built_bench` is a session fixture
parametrized by bench name, so pytest keeps one build per name and runs
that bench's tests together; `-k rx_parser` builds only the rx_parser.

Also, without a simulator: docs/abi.md's BAR0 tables parse into what the
bar_registers bench relies on, and the tx_builder bench's frame checks
accept scapy's own frames and catch a frame with one byte changed.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

import abi_contract
import roce_rules as rules
import tx_builder_bench
from verilator_runner import BUILD_DIR, Bench, pair_top


@dataclass(frozen=True)
class BenchSpec:
    """One bench build and the cocotb tests run on it."""

    block: str  # the exported Verilog: build/verilog/<block>.v
    top: str  # the wrapper top's module name (tops/<top>.sv unless pair_of)
    module: str  # the cocotb test module
    tests: tuple[str, ...]  # cocotb test names, or name prefixes
    # A wrapper top of which `top` holds two instances, written into the
    # build folder by verilator_runner.pair_top (ports prefixed a_ / b_).
    pair_of: str | None = None


BENCHES = {
    "bar_registers": BenchSpec(
        "bar_registers",
        "bar_registers_top",
        "bar_registers_bench",
        (
            "reset_values",
            "unmapped",
            "discovery",
            "rw_readback",
            "partial_strobes",
            "ro_ignore_writes",
            "random_accesses",
            "doorbells",
            "counters",
            "msix",
            "congestion",
            "soft_reset",
            "status_control",
            "fatal_cause",
        ),
    ),
    "cqe_writer": BenchSpec(
        "cqe_writer", "cqe_writer_top", "cqe_writer_bench", ("random_traffic", "full_ring", "one_per_cycle")
    ),
    "mr_translate": BenchSpec(
        "mr_translate",
        "mr_translate_top",
        "mr_translate_bench",
        (
            "protection_matrix",
            "page_translation",
            "address_top",
            "rights_combinations",
            "reregistration",
            "random_traffic",
            "latency_throughput",
            "reset_sweep",
        ),
    ),
    "nic_core": BenchSpec(
        "nic_core",
        "nic_core_top",
        "nic_core_bench",
        ("write_smoke", "cnp_notification", "cnp_reaction", "verbs_clean", "hostile_traffic"),
    ),
    "nic_pair": BenchSpec("nic_core", "nic_pair_top", "nic_core_bench", ("system_lossy",), pair_of="nic_core_top"),
    "qp_context": BenchSpec(
        "qp_context",
        "qp_context_top",
        "qp_context_bench",
        ("back_to_back_same_qp", "random_traffic", "host_waits_for_a_free_cycle", "reset_keeps_the_records"),
    ),
    "rx_parser": BenchSpec(
        "rx_parser",
        "rx_parser_top",
        "rx_parser_bench",
        # `corruption_` is a prefix: one cocotb test per corruption class
        # and IP version (corruption_<class>_<ip>), all in one simulation.
        ("known_opcodes", "payload_sizes", "corruption_", "unknown_opcodes", "reset_mid_traffic"),
    ),
    "tx_builder": BenchSpec(
        "tx_builder", "tx_builder_top", "tx_builder_bench", ("every_opcode", "payload_sizes", "refused_records")
    ),
}

BENCH_TESTS = [
    pytest.param(name, test, id=f"{name}-{test}") for name, spec in BENCHES.items() for test in spec.tests
]


def build(name: str) -> Bench:
    """Compile bench `name` (build/cocotb/<name>/)."""
    spec = BENCHES[name]
    if spec.pair_of is None:
        bench = Bench(spec.block, spec.top, name=name)
    else:
        top_path = pair_top(spec.pair_of, spec.top, ("a_", "b_"), BUILD_DIR / name)
        bench = Bench(spec.block, spec.top, name=name, top_path=top_path, extra_tops=(spec.pair_of,))
    bench.build()
    return bench


@pytest.fixture(scope="session")
def built_bench(request) -> tuple[BenchSpec, Bench]:
    """The bench named by the test's parameter, built on first use and
    kept for the session (a failed build fails that bench's tests only)."""
    return BENCHES[request.param], build(request.param)


@pytest.mark.parametrize(("built_bench", "test"), BENCH_TESTS, indirect=["built_bench"])
def test_bench(built_bench, test):
    spec, bench = built_bench
    bench.run(spec.module, test)


# ---- The benches' own expectations, checked without a simulator.


def test_abi_contract_parsed():
    """docs/abi.md's BAR0 tables parse into what the bar_registers bench
    relies on: seven blocks chained in offset order, each opening with
    type/version/next, and the register kinds the bench treats specially
    present (a parameter that is one value in its low bits among them)."""
    contract = abi_contract.load()
    assert contract.bar_size == 16384
    names = [b.name for b in contract.blocks]
    assert names == ["device", "control", "admin", "event_queues", "congestion", "counters", "msix"], names
    for block in contract.blocks:
        assert [r.name for r in block.registers[:3]] == ["type", "version", "next"]
        assert block.register("type").reset == block.type
    assert contract.block("event_queues").register("eq_doorbell").count == 8
    assert contract.block("msix").register("vector_control").mask == 1
    assert contract.block("congestion").register("rpg_ai_rate").mask == (1 << 20) - 1
    assert contract.block("control").register("fatal_cause").access == "W1C"
    assert len(contract.dwords()) == len(set(contract.dwords()))


def _as_sink_frame(data: bytes):
    """`data` as the cocotbext-axi sink frame the tx_builder checks take."""
    return SimpleNamespace(tdata=list(data), tkeep=[1] * len(data))


@pytest.mark.parametrize("ip", tx_builder_bench.IPS)
def test_tx_builder_checks_accept_scapy_frames_and_catch_changes(ip):
    rng = random.Random(f"checks-{ip}")
    for opcode, op in sorted(rules.OPCODES.items()):
        spec = tx_builder_bench.spec_for(rng, opcode, ip, rng.randrange(0, 200) if op.payload else 0)
        data = tx_builder_bench.frames.frame_bytes(spec)
        tx_builder_bench.check_frame(_as_sink_frame(data), spec, op.name)
        tx_builder_bench.check_with_scapy(data, spec, op.name)
        at = rng.randrange(len(data))
        changed = data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]
        with pytest.raises(AssertionError):
            tx_builder_bench.check_frame(_as_sink_frame(changed), spec, op.name)
        # The scapy pass alone catches a wrong ICRC (the rules' ICRC).
        with pytest.raises(AssertionError, match="ICRC"):
            tx_builder_bench.check_with_scapy(data[:-1] + bytes([data[-1] ^ 1]), spec, op.name)


def test_a_failing_test_runs_again_on_a_traced_build_and_keeps_its_waveform():
    """Passing runs use a build without tracing (cheaper to build and to
    run); a failure builds the traced twin and leaves an FST per failing
    test, named in the error."""
    bench = Bench("qp_context", "qp_context_top", name="failing_on_purpose")
    for folder in (bench.build_dir, bench.traced_dir):
        shutil.rmtree(folder, ignore_errors=True)
    bench.build()
    assert not list(bench.build_dir.glob("*__Trace*.cpp")), "the tests' build has tracing compiled in"
    with pytest.raises(AssertionError) as failure:
        bench.run("failing_bench", "fails_on_purpose")
    message = str(failure.value)
    assert "fails_on_purpose: " in message, message
    fst = Path(message.split("fails_on_purpose: ", 1)[1].splitlines()[0])
    assert fst.parent == bench.build_dir / "waves" and fst.suffix == ".fst", fst
    assert fst.stat().st_size > 0
    assert list(bench.traced_dir.glob("*__Trace*.cpp")), "the rerun's build has no tracing"
