"""cocotb bench for the exported qp_context (the QP context RAM's pipelined
read-modify-write; hdl/src/qp/qp_context.rs).

What: a client that looks up QPs and writes each record back three cycles
later, the way the packet pipelines do, and a host that runs masked
read-modify-writes on the configuration port, checked cycle by cycle
against a plain array: a lookup presented in cycle t shows its record in
cycle t + 2, holding every write presented up to and including that cycle
(so back-to-back packets of one QP each see the previous one's change);
a configuration operation waits for a cycle without a lookup, answers
three cycles later with the record as it was, and its write lands like
an update in that cycle. The expectations are the array's, written here
from the module doc's contract, not from the Rust model.
- back_to_back_same_qp: one QP looked up every cycle, each record written
  back incremented: every lookup sees the one before it;
- random_traffic: hot and cold QPs, random lookup and update gaps, host
  operations with random masks interleaved;
- host_waits_for_a_free_cycle: lookups in every cycle hold a host
  operation off (host_stalled high, no done); the first free cycle takes
  it and done comes three cycles later;
- reset_keeps_the_records: a reset drops what is in flight and keeps
  every record.
Run by tests/cocotb/test_benches.py.
"""

from __future__ import annotations

import random
from collections import defaultdict

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly, RisingEdge

CLOCK_NS = 4
QPS = 1 << 10
RECORD_BITS = 288
RECORD_MASK = (1 << RECORD_BITS) - 1
#: Module doc: the record of a lookup in cycle t is presented in t + 2 and
#: its write-back goes in cycle t + 3; a host operation's done comes three
#: cycles after the cycle it was taken in.
CONTEXT_LATENCY = 2
UPDATE_OFFSET = 3
HOST_LATENCY = 3


class Bench:
    """The block, a client, a host and the array they are checked against."""

    def __init__(self, dut, seed: int):
        self.dut = dut
        self.rng = random.Random(seed)
        self.memory: dict[int, int] = defaultdict(int)
        self.cycle = 0
        #: cycle -> (qpn, tag) of the lookup presented then.
        self.lookups: dict[int, tuple[int, int]] = {}
        #: cycle -> record presented for the lookup of cycle - 2.
        self.seen: dict[int, int] = {}
        self.host_op: tuple[int, int, int] | None = None
        self.host_results: list[tuple[int, int, int, int]] = []
        self.contexts_checked = 0
        self.updates = 0

    async def start(self):
        cocotb.start_soon(Clock(self.dut.clk, CLOCK_NS, unit="ns").start())
        for name in ("lookup_valid", "update_valid", "host_valid", "rst"):
            getattr(self.dut, name).value = 0
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 2)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0

    async def step(self, lookup: int | None, update, host: tuple[int, int, int] | None = None):
        """Cycle `self.cycle`: drive a lookup of QP `lookup` (or none), the
        write-back `update(record_seen) -> record | None` for the lookup of
        three cycles before, and a host operation to hold if none is
        pending; check every output against the array; then the edge."""
        dut = self.dut
        self.dut.lookup_valid.value = int(lookup is not None)
        if lookup is not None:
            tag = self.rng.getrandbits(16)
            dut.lookup_qpn.value = lookup
            dut.lookup_tag.value = tag
            self.lookups[self.cycle] = (lookup, tag)
        dut.update_valid.value = 0
        earlier = self.lookups.get(self.cycle - UPDATE_OFFSET)
        if earlier is not None:
            record = update(self.seen[self.cycle - 1])
            if record is not None:
                dut.update_valid.value = 1
                dut.update_qpn.value = earlier[0]
                dut.update_record.value = record
                # Takes effect at the start of this cycle.
                self.memory[earlier[0]] = record
                self.updates += 1
        if host is not None and self.host_op is None:
            self.host_op = host
        dut.host_valid.value = int(self.host_op is not None)
        if self.host_op is not None:
            qpn, mask, data = self.host_op
            dut.host_qpn.value = qpn
            dut.host_mask.value = mask
            dut.host_data.value = data
        await ReadOnly()
        if int(dut.host_done.value):
            assert self.host_op is not None, f"cycle {self.cycle}: done without an operation"
            qpn, mask, data = self.host_op
            old = int(dut.host_old.value)
            assert old == self.memory[qpn], f"cycle {self.cycle}: host old of QP {qpn}"
            assert self.lookups.get(self.cycle - HOST_LATENCY) is None, (
                f"cycle {self.cycle}: the host operation was taken in a cycle with a lookup"
            )
            self.memory[qpn] = (old & ~mask & RECORD_MASK) | (data & mask)
            self.host_results.append((self.cycle, qpn, mask, old))
            self.host_op = None
        looked = self.lookups.get(self.cycle - CONTEXT_LATENCY)
        assert int(dut.ctx_valid.value) == int(looked is not None), f"cycle {self.cycle}: ctx_valid"
        if looked is not None:
            qpn, tag = looked
            assert int(dut.ctx_qpn.value) == qpn, f"cycle {self.cycle}: ctx_qpn"
            assert int(dut.ctx_tag.value) == tag, f"cycle {self.cycle}: ctx_tag"
            record = int(dut.ctx_record.value)
            assert record == self.memory[qpn], (
                f"cycle {self.cycle}: the record of QP {qpn} looked up in cycle "
                f"{self.cycle - CONTEXT_LATENCY} misses a write (got {record:#x}, want {self.memory[qpn]:#x})"
            )
            self.seen[self.cycle] = record
            self.contexts_checked += 1
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        self.cycle += 1

    async def idle(self, cycles: int):
        for _ in range(cycles):
            await self.step(None, lambda _: None)

    async def host(self, qpn: int, mask: int, data: int) -> int:
        """Run one host operation with no lookups; return the old record."""
        done = len(self.host_results)
        await self.step(None, lambda _: None, (qpn, mask, data))
        while len(self.host_results) == done:
            await self.step(None, lambda _: None)
        return self.host_results[-1][3]


def random_record(rng: random.Random) -> int:
    return rng.getrandbits(RECORD_BITS)


def random_mask(rng: random.Random) -> int:
    kind = rng.randrange(4)
    if kind == 0:
        return 0
    if kind == 1:
        return RECORD_MASK
    low = rng.randrange(RECORD_BITS)
    width = rng.randrange(1, RECORD_BITS - low + 1)
    return ((1 << width) - 1) << low


@cocotb.test()
async def back_to_back_same_qp(dut):
    bench = Bench(dut, 1)
    await bench.start()
    qpn = 513
    start = await bench.host(qpn, RECORD_MASK, 1000)
    assert start == 0, "zero at power-up"
    for _ in range(400):
        await bench.step(qpn, lambda r: (r + 1) & RECORD_MASK)
    # The last lookups' write-backs, three cycles on.
    for _ in range(UPDATE_OFFSET):
        await bench.step(None, lambda r: (r + 1) & RECORD_MASK)
    await bench.idle(6)
    assert bench.contexts_checked == 400
    # Every write-back built on the record the one before it wrote.
    assert await bench.host(qpn, 0, 0) == 1000 + 400


@cocotb.test()
async def random_traffic(dut):
    bench = Bench(dut, 2)
    await bench.start()
    rng = bench.rng
    hot = [0, 1, 2, QPS - 1]
    for qpn in hot:
        await bench.host(qpn, RECORD_MASK, random_record(rng))
    salts = [random_record(rng) for _ in range(16)]
    for cycle in range(6000):
        lookup = None
        if rng.random() < 0.75:
            lookup = rng.choice(hot) if rng.random() < 0.8 else rng.randrange(QPS)

        def update(seen, salt=salts[cycle % 16], write=rng.random() < 0.8):
            return ((seen ^ salt) + 1) & RECORD_MASK if write else None

        host = None
        if rng.random() < 0.02:
            host = (rng.choice(hot), random_mask(rng), random_record(rng))
        await bench.step(lookup, update, host)
    while bench.host_op is not None:
        await bench.step(None, lambda _: None)
    await bench.idle(6)
    assert bench.contexts_checked > 4000, bench.contexts_checked
    assert bench.updates > 3000, bench.updates
    assert len(bench.host_results) > 60, len(bench.host_results)
    for qpn in hot:
        assert await bench.host(qpn, 0, 0) == bench.memory[qpn]


@cocotb.test()
async def host_waits_for_a_free_cycle(dut):
    bench = Bench(dut, 3)
    await bench.start()
    qpn = 7
    await bench.step(5, lambda _: None, (qpn, RECORD_MASK, 0xABCDEF))
    stalled = 0
    for _ in range(50):
        await bench.step(5, lambda _: None)
        stalled += int(dut.host_stalled.value)
    assert not bench.host_results, "no done while lookups fill every cycle"
    assert stalled >= 49, f"host_stalled high in {stalled} of 50 cycles"
    gap = bench.cycle
    await bench.idle(HOST_LATENCY + 1)
    assert [r[0] for r in bench.host_results] == [gap + HOST_LATENCY], "done three cycles after the free cycle"
    assert bench.memory[qpn] == 0xABCDEF


@cocotb.test()
async def reset_keeps_the_records(dut):
    bench = Bench(dut, 4)
    await bench.start()
    records = {qpn: random_record(bench.rng) for qpn in (3, 4, 900)}
    for qpn, record in records.items():
        await bench.host(qpn, RECORD_MASK, record)
    # Lookups in flight, then a reset drops them.
    for qpn in (3, 4, 900):
        await bench.step(qpn, lambda _: None)
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    dut.lookup_valid.value = 0
    await ReadOnly()
    assert int(dut.ctx_valid.value) == 0, "a reset drops the lookups in flight"
    await FallingEdge(dut.clk)
    bench.lookups.clear()
    for qpn, record in records.items():
        assert await bench.host(qpn, 0, 0) == record, f"QP {qpn} kept"
