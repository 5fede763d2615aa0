"""pytest entry for the BAR0 register block's cocotb bench
(tests/cocotb/bar_registers_bench.py) on the exported Verilog
(build/verilog/bar_registers.v): one pytest test per cocotb test, each in
its own simulation. A failing test's FST waveform is kept under
build/cocotb/bar_registers/waves/."""

import pytest

import abi_contract
from verilator_runner import Bench

BENCH_MODULE = "bar_registers_bench"
TESTS = [
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
    "soft_reset",
    "status_control",
    "fatal_cause",
]


@pytest.fixture(scope="module")
def bar_registers():
    bench = Bench("bar_registers", "bar_registers_top")
    bench.build()
    return bench


@pytest.mark.parametrize("test", TESTS)
def test_bar_registers(bar_registers, test):
    bar_registers.run(BENCH_MODULE, test)


def test_contract_parsed():
    """docs/abi.md's BAR0 tables parse into what the bench relies on: six
    blocks chained in offset order, each opening with type/version/next,
    and the register kinds the bench treats specially present."""
    contract = abi_contract.load()
    assert contract.bar_size == 16384
    names = [b.name for b in contract.blocks]
    assert names == ["device", "control", "admin", "event_queues", "counters", "msix"], names
    for block in contract.blocks:
        assert [r.name for r in block.registers[:3]] == ["type", "version", "next"]
        assert block.register("type").reset == block.type
    assert contract.block("event_queues").register("eq_doorbell").count == 8
    assert contract.block("msix").register("vector_control").mask == 1
    assert contract.block("control").register("fatal_cause").access == "W1C"
    assert len(contract.dwords()) == len(set(contract.dwords()))
