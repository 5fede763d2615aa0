"""cocotb bench for the exported cqe_writer (the completion queues;
hdl/src/host/cqe_writer.rs).

What: an admin engine creating and destroying CQs, software ringing CQ
doorbells and polling its rings by owner bit, the transport presenting
completions, and host memory taking the DMA writes, all through
tests/cocotb/tops/cqe_writer_top.sv. Expectations come from docs/abi.md,
read by `abi_contract` (the `cqe` layout, the `event_type`,
`qp_error_cause` and `wc_status` codes, the `cq_doorbell` fields) and the
ring rules the page states: entry `p mod 2^log_size` takes the p-th CQE
with owner bit `((p >> log_size) & 1) ^ 1`; a ring holding 2^log_size
unconsumed entries is full and a CQE that finds it full is not written
(its QP goes to ERR, the CQ reports CQ_ERR once); an armed CQ raises one
COMPLETION event at its next CQE (solicited-only arming: the next
solicited or error CQE); a consumer index ahead of the producer is
refused and counted.
- random_traffic: four CQs of 2 to 64 entries, random completions,
  doorbells (some beyond the ring), arming, a CQ that does not exist, and
  destroy / create again; every input idles and every output drops ready
  at random; software reads every CQE once, whole, in order;
- full_ring: a 2-entry ring takes two CQEs, refuses the rest, reports
  each refused CQE's QP and raises CQ_ERR once;
- one_per_cycle: 64 completions to one CQ are taken in 64 consecutive
  cycles and written in 64 consecutive cycles.
Run by tests/cocotb/test_benches.py.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly, RisingEdge

import abi_contract

CLOCK_NS = 4
CQE = abi_contract.entries()["cqe"]
CODES = abi_contract.codes()
EVENT = CODES["event_type"]
CAUSE = CODES["qp_error_cause"]
SUCCESS = CODES["wc_status"]["SUCCESS"]
INDEX_MASK = (1 << 24) - 1


def owner_for(index: int, log_size: int) -> int:
    return ((index >> log_size) & 1) ^ 1


@dataclass
class Cq:
    ring: int
    log_size: int
    eqn: int
    producer: int = 0
    consumer: int = 0
    arm: bool = False
    arm_solicited: bool = False
    overflowed: bool = False
    #: every CQE written since creation, in order
    written: list[bytes] = field(default_factory=list)


@dataclass
class Software:
    ring: int
    log_size: int
    consumed: int = 0


class Bench:
    def __init__(self, dut, seed: int, busy: float = 1.0, ready: float = 1.0):
        self.dut = dut
        self.rng = random.Random(seed)
        self.busy = busy
        self.ready = ready
        self.cqs: dict[int, Cq] = {}
        self.memory: dict[int, bytes] = {}
        self.queues = {"command": deque(), "doorbell": deque(), "completion": deque()}
        self.presenting: dict[str, dict | None] = {name: None for name in self.queues}
        self.writes: deque[tuple[int, bytes]] = deque()
        self.events: deque[tuple[int, int, int]] = deque()
        self.qp_errors: deque[tuple[int, int]] = deque()
        self.seen_events: list[tuple[int, int, int]] = []
        self.seen_qp_errors: list[tuple[int, int]] = []
        self.overflows = 0
        self.doorbell_errors = 0
        self.pulses = {"overflow": 0, "doorbell_error": 0}
        self.cycle = 0
        self.take_cycles: list[int] = []
        self.write_cycles: list[int] = []

    async def start(self):
        cocotb.start_soon(Clock(self.dut.clk, CLOCK_NS, unit="ns").start())
        for name in self.queues:
            getattr(self.dut, f"{name}_valid").value = 0
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 2)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0

    # The rules, applied to a taken operation.
    def apply(self, kind: str, op: dict):
        if kind == "command":
            if op["destroy"]:
                self.cqs.pop(op["cqn"], None)
            else:
                self.cqs[op["cqn"]] = Cq(op["ring"], op["log_size"], op["eqn"])
        elif kind == "doorbell":
            cq = self.cqs.get(op["cqn"])
            if cq is None or ((cq.producer - op["consumer"]) & INDEX_MASK) > 1 << cq.log_size:
                self.doorbell_errors += 1
                return
            cq.consumer = op["consumer"]
            cq.arm |= bool(op["arm"])
            cq.arm_solicited |= bool(op["arm_solicited"])
        else:
            cq = self.cqs.get(op["cqn"])
            full = cq is not None and ((cq.producer - cq.consumer) & INDEX_MASK) >= 1 << cq.log_size
            if cq is None or cq.overflowed or full:
                self.overflows += 1
                self.qp_errors.append((op["qpn"], CAUSE["CQ_OVERFLOW"]))
                if cq is not None and not cq.overflowed:
                    self.events.append((cq.eqn, EVENT["CQ_ERR"], op["cqn"]))
                    cq.overflowed = True
                return
            entry = CQE.encode(
                wr_id=op["wr_id"],
                byte_len=op["byte_len"],
                imm_or_invalidated=op["imm_or_invalidated"],
                qpn=op["qpn"],
                wqe_index=op["wqe_index"],
                vendor_syndrome=op["vendor_syndrome"],
                opcode=op["opcode"],
                status=op["status"],
                flags=op["flags"],
                owner=owner_for(cq.producer, cq.log_size),
            )
            slot = cq.producer & ((1 << cq.log_size) - 1)
            self.writes.append((cq.ring + CQE.size * slot, entry))
            cq.written.append(entry)
            cq.producer = (cq.producer + 1) & INDEX_MASK
            solicited = op["solicited"] or op["status"] != SUCCESS
            if cq.arm or (cq.arm_solicited and solicited):
                self.events.append((cq.eqn, EVENT["COMPLETION"], op["cqn"]))
                cq.arm = cq.arm_solicited = False

    async def step(self):
        dut = self.dut
        for name, queue in self.queues.items():
            if self.presenting[name] is None and queue and self.rng.random() < self.busy:
                op = queue.popleft()
                self.presenting[name] = op
                for key, value in op.items():
                    getattr(dut, f"{name}_{key}").value = int(value)
                getattr(dut, f"{name}_valid").value = 1
        for name in ("dma", "event", "qp_error"):
            getattr(dut, f"{name}_ready").value = int(self.rng.random() < self.ready)
        await ReadOnly()
        taken = [n for n in self.queues if self.presenting[n] is not None and int(getattr(dut, f"{n}_ready").value)]
        assert len(taken) <= 1, f"cycle {self.cycle}: one operation per cycle, took {taken}"
        if int(dut.dma_valid.value) and int(dut.dma_ready.value):
            assert self.writes, f"cycle {self.cycle}: a DMA write nobody expects"
            address, entry = self.writes.popleft()
            assert int(dut.dma_first.value) and int(dut.dma_last.value), "one beat per CQE"
            assert int(dut.dma_req_addr.value) == address, f"cycle {self.cycle}: CQE address"
            assert int(dut.dma_req_len.value) == CQE.size
            assert int(dut.dma_addr.value) == address & ~63
            lane = address & 63
            assert int(dut.dma_keep.value) == ((1 << CQE.size) - 1) << lane, "keep marks the CQE's bytes"
            beat = int(dut.dma_data.value).to_bytes(64, "little")
            assert beat[lane : lane + CQE.size] == entry, f"cycle {self.cycle}: the CQE at {address:#x}"
            self.memory[address] = entry
            self.write_cycles.append(self.cycle)
        if int(dut.event_valid.value) and int(dut.event_ready.value):
            got = (int(dut.event_eqn.value), int(dut.event_event.value), int(dut.event_object.value))
            assert self.events and got == self.events.popleft(), f"cycle {self.cycle}: event {got}"
            self.seen_events.append(got)
        if int(dut.qp_error_valid.value) and int(dut.qp_error_ready.value):
            got = (int(dut.qp_error_qpn.value), int(dut.qp_error_cause.value))
            assert self.qp_errors and got == self.qp_errors.popleft(), f"cycle {self.cycle}: QP error {got}"
            self.seen_qp_errors.append(got)
        for pulse in self.pulses:
            self.pulses[pulse] += int(getattr(dut, pulse).value)
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        for name in taken:
            self.apply(name, self.presenting[name])
            self.presenting[name] = None
            getattr(dut, f"{name}_valid").value = 0
            self.take_cycles.append(self.cycle)
        self.cycle += 1

    def busy_inputs(self) -> bool:
        return any(self.queues.values()) or any(op is not None for op in self.presenting.values())

    async def drain(self):
        for _ in range(5000):
            if not self.busy_inputs() and not self.writes and not self.events and not self.qp_errors:
                for _ in range(8):
                    await self.step()
                return
            await self.step()
        raise AssertionError("the block stopped taking or giving")

    def create(self, cqn: int, log_size: int, eqn: int) -> Software:
        ring = 0x0000_3C00_0000_0000 | (cqn << 21)
        for i in range(1 << log_size):
            self.memory[ring + CQE.size * i] = bytes(CQE.size)
        self.queues["command"].append(dict(destroy=0, cqn=cqn, ring=ring, log_size=log_size, eqn=eqn))
        return Software(ring, log_size)

    def completion(self, cqn: int, **overrides) -> dict:
        rng = self.rng
        error = rng.random() < 0.1
        op = dict(
            cqn=cqn,
            qpn=rng.getrandbits(24),
            wr_id=rng.getrandbits(64),
            byte_len=rng.getrandbits(32),
            imm_or_invalidated=rng.getrandbits(32),
            wqe_index=rng.getrandbits(16),
            vendor_syndrome=rng.randrange(1, 256) if error else 0,
            opcode=rng.choice(list(CODES["wc_opcode"].values())),
            status=rng.choice(list(CODES["wc_status"].values())) if error else SUCCESS,
            flags=rng.getrandbits(8),
            solicited=int(rng.random() < 0.25),
        )
        op.update(overrides)
        return op

    def poll(self, cqn: int, sw: Software) -> int:
        """Software takes every entry whose owner bit says it is new."""
        polled = 0
        while True:
            slot = sw.consumed & ((1 << sw.log_size) - 1)
            entry = self.memory[sw.ring + CQE.size * slot]
            if CQE.fields["owner"].get(entry) != owner_for(sw.consumed, sw.log_size):
                return polled
            assert entry == self.cqs[cqn].written[sw.consumed], f"CQ {cqn}: CQE {sw.consumed} read whole"
            sw.consumed += 1
            polled += 1


@cocotb.test()
async def random_traffic(dut):
    bench = Bench(dut, 11, busy=0.7, ready=0.6)
    await bench.start()
    rng = bench.rng
    cqns = [0, 2, 77, 1023]
    software = {cqn: bench.create(cqn, size, i) for i, (cqn, size) in enumerate(zip(cqns, [1, 3, 4, 6]))}
    await bench.drain()
    polled = 0
    for round_ in range(3000):
        r = rng.random()
        if r < 0.55 and len(bench.queues["completion"]) < 3:
            cqn = 5 if rng.random() < 0.02 else rng.choice(cqns)
            bench.queues["completion"].append(bench.completion(cqn))
        elif r < 0.8 and len(bench.queues["doorbell"]) < 2:
            cqn = rng.choice(cqns)
            sw = software[cqn]
            polled += bench.poll(cqn, sw)
            consumer = sw.consumed
            if rng.random() < 0.08:
                consumer += (1 << sw.log_size) + 1 + rng.randrange(50)
            bench.queues["doorbell"].append(
                dict(
                    cqn=cqn,
                    consumer=consumer & INDEX_MASK,
                    arm=int(rng.random() < 0.3),
                    arm_solicited=int(rng.random() < 0.3),
                )
            )
        elif round_ % 250 == 0:
            cqn = rng.choice(cqns[:3])
            await bench.drain()
            bench.queues["command"].append(dict(destroy=1, cqn=cqn, ring=0, log_size=0, eqn=0))
            software[cqn] = bench.create(cqn, software[cqn].log_size, 5)
            await bench.drain()
        await bench.step()
    await bench.drain()
    for cqn in cqns:
        polled += bench.poll(cqn, software[cqn])
    assert polled > 500, f"{polled} CQEs polled"
    assert bench.overflows > 10 and bench.doorbell_errors > 5, (bench.overflows, bench.doorbell_errors)
    assert bench.pulses == {"overflow": bench.overflows, "doorbell_error": bench.doorbell_errors}
    assert len(bench.seen_qp_errors) == bench.overflows
    assert any(e[1] == EVENT["COMPLETION"] for e in bench.seen_events)
    assert any(e[1] == EVENT["CQ_ERR"] for e in bench.seen_events)
    assert len(bench.write_cycles) >= polled, "software read only what was written"


@cocotb.test()
async def full_ring(dut):
    bench = Bench(dut, 12)
    await bench.start()
    sw = bench.create(40, 1, 3)
    ops = [bench.completion(40, status=SUCCESS) for _ in range(5)]
    bench.queues["completion"].extend(ops)
    await bench.drain()
    assert len(bench.write_cycles) == 2, "a 2-entry ring takes two CQEs"
    assert [q for q, _ in bench.seen_qp_errors] == [op["qpn"] for op in ops[2:]]
    assert bench.seen_events == [(3, EVENT["CQ_ERR"], 40)]
    assert bench.poll(40, sw) == 2


@cocotb.test()
async def one_per_cycle(dut):
    bench = Bench(dut, 13)
    await bench.start()
    sw = bench.create(600, 7, 0)
    await bench.drain()
    first = len(bench.take_cycles)
    bench.queues["completion"].extend(bench.completion(600) for _ in range(64))
    await bench.drain()
    takes = bench.take_cycles[first:]
    assert len(takes) == 64 and takes[-1] - takes[0] == 63, "one completion taken per cycle"
    assert bench.write_cycles[-1] - bench.write_cycles[-64] == 63, "one CQE written per cycle"
    assert bench.poll(600, sw) == 64
