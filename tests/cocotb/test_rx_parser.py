"""pytest entry for the rx_parser cocotb bench (tests/cocotb/rx_parser_bench.py)
on the exported Verilog: one pytest test per cocotb test function, each
running all its parameter points in one simulation. A failing point's FST
waveform is kept under build/cocotb/rx_parser/waves/."""

import pytest

from verilator_runner import Bench

BENCH_MODULE = "rx_parser_bench"
TESTS = ["known_opcodes", "payload_sizes", "corruption_", "unknown_opcodes", "reset_mid_traffic"]


@pytest.fixture(scope="module")
def rx_parser():
    bench = Bench("rx_parser", "rx_parser_top")
    bench.build()
    return bench


@pytest.mark.parametrize("test", TESTS)
def test_rx_parser(rx_parser, test):
    rx_parser.run(BENCH_MODULE, test)
