"""pytest entry for the nic_core cocotb benches (tests/cocotb/nic_core_bench.py)
on the exported Verilog (build/verilog/nic_core.v): one pytest test per
cocotb test. A failing test's FST waveform is kept under
build/cocotb/nic_core/waves/."""

import pytest

from verilator_runner import BUILD_DIR, Bench, pair_top

BENCH_MODULE = "nic_core_bench"
TESTS = ["write_smoke", "verbs_clean", "hostile_traffic"]


@pytest.fixture(scope="module")
def nic_core():
    bench = Bench("nic_core", "nic_core_top")
    bench.build()
    return bench


@pytest.mark.parametrize("test", TESTS)
def test_nic_core(nic_core, test):
    nic_core.run(BENCH_MODULE, test)


@pytest.fixture(scope="module")
def nic_pair():
    top = pair_top("nic_core_top", "nic_pair_top", ("a_", "b_"), BUILD_DIR / "nic_pair")
    bench = Bench("nic_core", "nic_pair_top", name="nic_pair", top_path=top, extra_tops=("nic_core_top",))
    bench.build()
    return bench


def test_nic_pair(nic_pair):
    nic_pair.run(BENCH_MODULE, "system_lossy")
