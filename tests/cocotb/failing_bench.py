"""A cocotb test that fails on purpose, for test_benches' check that a
failing test is run again on a traced build and leaves its waveform.

It clocks the qp_context bench's top (any top with a `clk` would do) so
the waveform has something in it, then fails.
"""

from __future__ import annotations

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles

#: Cycles clocked before the failure; the waveform must cover them.
CYCLES = 8
CLOCK_NS = 4


@cocotb.test()
async def fails_on_purpose(dut):
    cocotb.start_soon(Clock(dut.clk, CLOCK_NS, unit="ns").start())
    await ClockCycles(dut.clk, CYCLES)
    assert False, "this test fails on purpose"
