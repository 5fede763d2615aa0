"""pytest entry for the tx_builder cocotb bench
(tests/cocotb/tx_builder_bench.py) on the exported Verilog
(build/verilog/tx_builder.v): one pytest test per cocotb test function,
each running all its parameter points in one simulation. A failing point's
FST waveform is kept under build/cocotb/tx_builder/waves/. Also, without a
simulator: the bench's frame checks accept scapy's own frames and catch a
frame with one byte changed."""

import random
from types import SimpleNamespace

import pytest

import roce_rules as rules
import tx_builder_bench as bench_module
from verilator_runner import Bench

BENCH_MODULE = "tx_builder_bench"
TESTS = ["every_opcode", "payload_sizes", "refused_records"]


@pytest.fixture(scope="module")
def tx_builder():
    bench = Bench("tx_builder", "tx_builder_top")
    bench.build()
    return bench


@pytest.mark.parametrize("test", TESTS)
def test_tx_builder(tx_builder, test):
    tx_builder.run(BENCH_MODULE, test)


def _as_sink_frame(data: bytes):
    return SimpleNamespace(tdata=list(data), tkeep=[1] * len(data))


@pytest.mark.parametrize("ip", bench_module.IPS)
def test_checks_accept_scapy_frames_and_catch_changes(ip):
    rng = random.Random(f"checks-{ip}")
    for opcode, op in sorted(rules.OPCODES.items()):
        spec = bench_module.spec_for(rng, opcode, ip, rng.randrange(0, 200) if op.payload else 0)
        data = bench_module.frames.frame_bytes(spec)
        bench_module.check_frame(_as_sink_frame(data), spec, op.name)
        bench_module.check_with_scapy(data, spec, op.name)
        at = rng.randrange(len(data))
        changed = data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]
        with pytest.raises(AssertionError):
            bench_module.check_frame(_as_sink_frame(changed), spec, op.name)
        # The scapy pass alone catches a wrong ICRC (the rules' ICRC).
        with pytest.raises(AssertionError, match="ICRC"):
            bench_module.check_with_scapy(data[:-1] + bytes([data[-1] ^ 1]), spec, op.name)
