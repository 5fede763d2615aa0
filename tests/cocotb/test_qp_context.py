"""pytest entry for the qp_context cocotb bench
(tests/cocotb/qp_context_bench.py) on the exported Verilog
(build/verilog/qp_context.v): one pytest test per cocotb test. A failing
test's FST waveform is kept under build/cocotb/qp_context/waves/."""

import pytest

from verilator_runner import Bench

BENCH_MODULE = "qp_context_bench"
TESTS = [
    "back_to_back_same_qp",
    "random_traffic",
    "host_waits_for_a_free_cycle",
    "reset_keeps_the_records",
]


@pytest.fixture(scope="module")
def qp_context():
    bench = Bench("qp_context", "qp_context_top")
    bench.build()
    return bench


@pytest.mark.parametrize("test", TESTS)
def test_qp_context(qp_context, test):
    qp_context.run(BENCH_MODULE, test)
