"""pytest entry for the cqe_writer cocotb bench
(tests/cocotb/cqe_writer_bench.py) on the exported Verilog
(build/verilog/cqe_writer.v): one pytest test per cocotb test. A failing
test's FST waveform is kept under build/cocotb/cqe_writer/waves/."""

import pytest

from verilator_runner import Bench

BENCH_MODULE = "cqe_writer_bench"
TESTS = [
    "random_traffic",
    "full_ring",
    "one_per_cycle",
]


@pytest.fixture(scope="module")
def cqe_writer():
    bench = Bench("cqe_writer", "cqe_writer_top")
    bench.build()
    return bench


@pytest.mark.parametrize("test", TESTS)
def test_cqe_writer(cqe_writer, test):
    cqe_writer.run(BENCH_MODULE, test)
