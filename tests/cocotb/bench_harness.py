"""What the stream benches' cocotb harnesses share.

What: `random_pauses`, the pause generator a cocotbext-axi source, sink or
AXI channel takes; `quiet` and `pause_at_random`, which set up a bench's
stream models; `pulse_reset`, the benches' reset sequence.

Why: the rx_parser, tx_builder, mr_translate and bar_registers benches
each carried their own copy of these lines; one copy keeps their stalls
and resets the same.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from cocotb.triggers import ClockCycles

#: Clock cycles rst is held high by `pulse_reset`.
RESET_CYCLES = 4


def random_pauses(rng: random.Random, probability: float):
    """A pause generator for cocotbext-axi: True (pause) with `probability`."""
    while True:
        yield rng.random() < probability


def quiet(*streams) -> None:
    """Keep cocotbext-axi models from logging every transfer: a bench
    sends thousands of frames."""
    for stream in streams:
        stream.log.setLevel("WARNING")


def pause_at_random(rng: random.Random, pauses: Iterable[tuple[object, float]]) -> None:
    """Give each (stream or channel, probability) its own random pause
    generator, all drawing from `rng` so a seed replays the same stalls."""
    for stream, probability in pauses:
        stream.set_pause_generator(random_pauses(rng, probability))


async def pulse_reset(dut, settle_cycles: int = 2) -> None:
    """rst high for RESET_CYCLES clock cycles, then low for `settle_cycles`
    rising edges before the caller drives traffic."""
    dut.rst.value = 1
    await ClockCycles(dut.clk, RESET_CYCLES)
    dut.rst.value = 0
    await ClockCycles(dut.clk, settle_cycles)
