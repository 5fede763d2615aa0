"""cocotb bench for the exported rx_parser (RoCEv2 receive parser + ICRC).

What: drives scapy-built frames into tests/cocotb/tops/rx_parser_top.sv
through a cocotbext-axi AxiStreamSource and checks, frame by frame, the
header record (verdict, reason code, every header field) and the payload
segment (bytes, contiguous tkeep, drop flag on the last beat) against
`roce_rules`, then the accept/drop counters through stat_select/stat_count.

Why: a second opinion on the RTL that shares nothing with the project's Rust
model: stimulus from scapy, expectations from the spec rules.

The parameter matrix (verilog-ethernet style, one cocotb test per point):
- known_opcodes: every opcode the parser knows x IPv4/IPv6 x back-to-back
  or backpressure, payload sizes around the input and output beat edges;
- payload_sizes: SEND Only and WRITE Only x IPv4/IPv6, sizes 0..4096;
- corruption: every corruption class x IPv4/IPv6, corrupt frames mixed
  with good ones (a bad frame must not disturb its neighbours);
- unknown_opcodes: every opcode the parser does not know x IPv4/IPv6;
- reset_mid_traffic: reset with frames in flight, then a clean restart.
Backpressure: the sinks drop ready at random, the source inserts idle
cycles. Run by tests/cocotb/test_benches.py.
"""

from __future__ import annotations

import random
from collections import Counter

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamSink, AxiStreamSource
from cocotbext.axi.stream import define_stream

import roce_frames as frames
import roce_rules as rules
from bench_harness import pause_at_random, pulse_reset, quiet
from roce_rules import Drop

BEAT_BYTES = 64
CLOCK_NS = 4
STAT_COUNTERS = len(Drop)  # counter 0: accepted; counter r: dropped for reason r

RecordBus, _, _, RecordSink, _ = define_stream(
    "Record", signals=[*rules.RECORD_FIELDS, "valid", "ready"], valid_signal="valid", ready_signal="ready"
)


class RxParserBench:
    """The DUT with its AXI-Stream source and sinks attached."""

    def __init__(self, dut, rng: random.Random, backpressure: bool):
        self.dut = dut
        self.rng = rng
        cocotb.start_soon(Clock(dut.clk, CLOCK_NS, unit="ns").start())
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.payload = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis_payload"), dut.clk, dut.rst)
        self.record = RecordSink(RecordBus.from_prefix(dut, "m_record"), dut.clk, dut.rst)
        quiet(self.source, self.payload, self.record)
        if backpressure:
            pause_at_random(rng, [(self.source, 0.2), (self.payload, 0.3), (self.record, 0.3)])
        dut.stat_select.value = 0

    async def reset(self):
        await pulse_reset(self.dut)

    async def run(self, cases: list[tuple[str, bytes]]):
        """Send every (label, frame) and check each frame's record and
        payload in order, then that nothing else came out and the counters
        count every verdict."""
        verdicts = [rules.decode(frame) for _, frame in cases]
        for _, frame in cases:
            await self.source.send(frame)
        beats = sum(-(-max(len(frame), 1) // BEAT_BYTES) for _, frame in cases)
        checker = cocotb.start_soon(self._check_all(cases, verdicts))
        await with_timeout(checker, 20 * beats * CLOCK_NS + 10_000, "ns")
        await ClockCycles(self.dut.clk, 50)
        assert self.record.empty(), f"a record beyond the {len(cases)} frames: {self.record.recv_nowait()}"
        assert self.payload.empty(), "a payload segment no record announced"
        await self.check_counters(Counter(v.reason for v in verdicts))
        self.dut._log.info("%d frames checked (%d beats)", len(cases), beats)

    async def _check_all(self, cases, verdicts):
        for index, ((label, frame), verdict) in enumerate(zip(cases, verdicts)):
            where = f"frame {index} ({label}, {len(frame)} bytes)"
            record = await self.record.recv()
            has_payload = check_record(record, verdict, where)
            if has_payload:
                check_segment(await self.payload.recv(compact=False), verdict, where)

    async def check_counters(self, expected: Counter):
        for code in range(STAT_COUNTERS):
            self.dut.stat_select.value = code
            await RisingEdge(self.dut.clk)
            await RisingEdge(self.dut.clk)
            count = int(self.dut.stat_count.value)
            assert count == expected[Drop(code)], f"counter {Drop(code).name}: {count}, expected {expected[Drop(code)]}"


def check_record(record, verdict: rules.Verdict, where: str) -> bool:
    """Compare one record with the verdict; returns its has_payload bit."""
    reason = int(record.reason)
    assert reason == verdict.reason, f"{where}: reason {reason} ({reason_name(reason)}), expected {verdict.reason.name}"
    assert int(record.drop) == (verdict.reason != Drop.ACCEPTED), f"{where}: drop {int(record.drop)}"
    has_payload = bool(int(record.has_payload))
    if verdict.segment is not None:
        assert has_payload == verdict.segment, f"{where}: has_payload {has_payload}, expected {verdict.segment}"
    if verdict.headers_complete:
        for name, value in verdict.fields.items():
            got = int(getattr(record, name))
            want = value & ((1 << rules.RECORD_FIELDS[name]) - 1)
            assert got == want, f"{where}: {name} {got:#x}, expected {want:#x}"
    return has_payload


def check_segment(segment, verdict: rules.Verdict, where: str):
    """A payload segment: the drop flag on its last beat equal to the
    verdict; unless the frame was cut short (then the parser only promises
    a last beat), full beats then a contiguous last beat; for an accepted
    frame, its payload bytes."""
    keep = segment.tkeep
    dropped = bool(segment.tuser[-1])
    assert dropped == (verdict.reason != Drop.ACCEPTED), f"{where}: payload_drop {dropped}"
    if verdict.reason == Drop.TRUNCATED:
        return  # the segment of a frame cut short: contents undefined
    beats = [keep[i : i + BEAT_BYTES] for i in range(0, len(keep), BEAT_BYTES)]
    for n, lanes in enumerate(beats):
        kept = sum(lanes)
        contiguous = lanes == [1] * kept + [0] * (len(lanes) - kept)
        full = kept == BEAT_BYTES or n == len(beats) - 1
        assert contiguous and full and kept > 0, f"{where}: payload beat {n} tkeep {lanes}"
    if verdict.accepted:
        data = bytes(b for b, k in zip(segment.tdata, keep) if k)
        assert len(data) == len(verdict.payload), f"{where}: {len(data)} payload bytes, expected {len(verdict.payload)}"
        if data != verdict.payload:
            first = next(i for i, (a, b) in enumerate(zip(data, verdict.payload)) if a != b)
            raise AssertionError(f"{where}: payload differs from byte {first}")


def reason_name(code: int) -> str:
    return Drop(code).name if code in Drop._value2member_map_ else "?"


def edge_sizes(opcode: int, ipv6: bool) -> list[int]:
    """Payload sizes at the beat edges: the payload filling whole output
    beats (63, 64, 65, ...) and the frame's ICRC ending just before, at and
    after an input beat edge."""
    sizes = {0, 1, 2, 3, 4, 5, 63, 64, 65, 127, 128, 129}
    tail = frames.payload_offset(opcode, ipv6) + rules.ICRC_LEN
    for beats in (1, 2, 3):
        for delta in (-1, 0, 1):
            aligned = BEAT_BYTES * beats - tail  # payload + pad that ends the frame on the edge
            sizes.update(s for s in (aligned + delta - 3, aligned + delta) if s >= 0)
    return sorted(sizes)


def _mix_with_good_frames(rng, corrupt_cases, ipv6):
    """Interleave bad frames with good ones of random opcodes and sizes."""
    cases = []
    for case in corrupt_cases:
        opcode = rng.choice(sorted(rules.OPCODES))
        size = rng.randrange(0, 600) if rules.OPCODES[opcode].payload else 0
        cases.append(("good neighbour", frames.frame_bytes(frames.random_spec(rng, opcode, ipv6, size))))
        cases.append(case)
    return cases


IP_VERSIONS = {"ipv4": False, "ipv6": True}


@cocotb.test()
@cocotb.parametrize(ip=list(IP_VERSIONS), traffic=["burst", "stalls"])
async def known_opcodes(dut, ip: str, traffic: str):
    """Every opcode the parser knows, payload sizes around the beat edges
    (header-only opcodes: several frames with random fields)."""
    ipv6 = IP_VERSIONS[ip]
    rng = random.Random(f"known_opcodes-{ip}-{traffic}")
    bench = RxParserBench(dut, rng, backpressure=traffic == "stalls")
    await bench.reset()
    cases = []
    for opcode, op in sorted(rules.OPCODES.items()):
        sizes = edge_sizes(opcode, ipv6) + [rng.randrange(130, 1500)] if op.payload else [0, 0, 0]
        for size in sizes:
            spec = frames.random_spec(rng, opcode, ipv6, size)
            cases.append((f"{op.name} {size} B", frames.frame_bytes(spec)))
    rng.shuffle(cases)
    await bench.run(cases)


@cocotb.test()
@cocotb.parametrize(ip=list(IP_VERSIONS))
async def payload_sizes(dut, ip: str):
    """SEND Only (no extension header) and RDMA WRITE Only (a RETH) with
    payloads from 0 to 4096 bytes: every size up to 192, a stride above,
    every size near the 4096-byte maximum."""
    ipv6 = IP_VERSIONS[ip]
    rng = random.Random(f"payload_sizes-{ip}")
    bench = RxParserBench(dut, rng, backpressure=True)
    await bench.reset()
    sizes = list(range(0, 193)) + list(range(193, 4070, 97)) + list(range(4070, rules.MAX_PAYLOAD + 1))
    cases = []
    for opcode in (0x04, 0x0A):
        for size in sizes:
            spec = frames.random_spec(rng, opcode, ipv6, size)
            cases.append((f"{rules.OPCODES[opcode].name} {size} B", frames.frame_bytes(spec)))
    await bench.run(cases)


def _corruptions_for(ipv6: bool) -> list[str]:
    return [name for name, (_, _, v6) in frames.CORRUPTIONS.items() if v6 or not ipv6]


FRAMES_PER_CORRUPTION = 40


def _corruption_test(name: str, ip: str):
    """The cocotb test `corruption_<class>_<ip>`: corrupt frames of one
    class, random opcodes and sizes, each after a good frame, under
    backpressure."""
    ipv6 = IP_VERSIONS[ip]
    expected, corrupt, _ = frames.CORRUPTIONS[name]

    async def run(dut):
        rng = random.Random(f"corruption-{name}-{ip}")
        bench = RxParserBench(dut, rng, backpressure=True)
        await bench.reset()
        bad = []
        for _ in range(FRAMES_PER_CORRUPTION):
            opcode = rng.choice(sorted(rules.OPCODES))
            size = rng.choice([0, 1, 3, 64, rng.randrange(0, 1100)]) if rules.OPCODES[opcode].payload else 0
            frame = corrupt(frames.random_spec(rng, opcode, ipv6, size), rng)
            assert rules.decode(frame).reason == expected, f"{name} did not make a {expected.name} frame"
            bad.append((name, frame))
        await bench.run(_mix_with_good_frames(rng, bad, ipv6))

    run.__doc__ = f"Corruption class {name} on {ip}: {corrupt.__doc__ or expected.name}"
    return cocotb.test(name=f"corruption_{name}_{ip}")(run)


def _register_corruption_tests():
    """One module-level cocotb test per corruption class and IP version."""
    for ip in IP_VERSIONS:
        for name in _corruptions_for(IP_VERSIONS[ip]):
            globals()[f"corruption_{name}_{ip}"] = _corruption_test(name, ip)


_register_corruption_tests()


@cocotb.test()
@cocotb.parametrize(ip=list(IP_VERSIONS))
async def unknown_opcodes(dut, ip: str):
    """Every opcode the parser does not know is dropped (reason opcode)."""
    ipv6 = IP_VERSIONS[ip]
    rng = random.Random(f"unknown_opcodes-{ip}")
    bench = RxParserBench(dut, rng, backpressure=True)
    await bench.reset()
    bad = []
    for opcode in rules.UNKNOWN_OPCODES:
        spec = frames.random_spec(rng, opcode, ipv6, rng.randrange(0, 80))
        bad.append((f"opcode {opcode:#04x}", frames.frame_bytes(spec)))
    await bench.run(_mix_with_good_frames(rng, bad, ipv6))


@cocotb.test()
@cocotb.parametrize(ip=list(IP_VERSIONS))
async def reset_mid_traffic(dut, ip: str):
    """Reset while frames are in flight (the block doc: reset drops frames
    in flight and clears the counters): after it, the frames sent next come
    out exactly as a fresh block would give them, with nothing left over
    from before and counters that count only them."""
    ipv6 = IP_VERSIONS[ip]
    rng = random.Random(f"reset_mid_traffic-{ip}")
    bench = RxParserBench(dut, rng, backpressure=True)
    await bench.reset()
    for round_ in range(4):
        for _ in range(40):
            opcode = rng.choice(sorted(rules.OPCODES))
            size = rng.randrange(0, 900) if rules.OPCODES[opcode].payload else 0
            await bench.source.send(frames.frame_bytes(frames.random_spec(rng, opcode, ipv6, size)))
        await ClockCycles(dut.clk, rng.randrange(20, 200))
        bench.source.clear()  # frames not yet started are not sent
        await bench.reset()
        bench.record.clear()
        bench.payload.clear()
        cases = []
        for _ in range(30):
            opcode = rng.choice(sorted(rules.OPCODES))
            size = rng.randrange(0, 900) if rules.OPCODES[opcode].payload else 0
            spec = frames.random_spec(rng, opcode, ipv6, size)
            cases.append((f"after reset {round_}", frames.frame_bytes(spec)))
        await bench.run(cases)
