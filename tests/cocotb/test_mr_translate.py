"""pytest entry for the mr_translate cocotb bench
(tests/cocotb/mr_translate_bench.py) on the exported Verilog
(build/verilog/mr_translate.v): one pytest test per cocotb test function,
each running all its parameter points in one simulation. A failing point's
FST waveform is kept under build/cocotb/mr_translate/waves/."""

import pytest

from verilator_runner import Bench

BENCH_MODULE = "mr_translate_bench"
TESTS = [
    "protection_matrix",
    "page_translation",
    "address_top",
    "rights_combinations",
    "reregistration",
    "random_traffic",
    "latency_throughput",
    "reset_sweep",
]


@pytest.fixture(scope="module")
def mr_translate():
    bench = Bench("mr_translate", "mr_translate_top")
    bench.build()
    return bench


@pytest.mark.parametrize("test", TESTS)
def test_mr_translate(mr_translate, test):
    mr_translate.run(BENCH_MODULE, test)
