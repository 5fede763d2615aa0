"""cocotb bench for the exported tx_builder (RoCEv2 transmit header builder).

What: drives one header record per frame (tests/cocotb/tops/tx_builder_top.sv,
one port per TxHeader field) and its payload through cocotbext-axi sources
and checks every frame that comes out:
- byte for byte equal to the frame scapy builds from the same fields
  (`roce_frames.build`: scapy's IPv4 header checksum, UDP length and
  checksum, BTH pad count, ICRC);
- taken apart again by scapy, whose header checksum and UDP checksum,
  recomputed, equal the frame's; the UDP length, IP lengths and pad count
  are the frame's own; the ICRC equals `roce_rules.icrc` (the bench's own
  ICRC code) over the frame;
- accepted by `roce_rules.decode` (the spec decoder), which reads back
  every header field of the record and the payload;
- full 64-byte beats then one contiguous last beat, nothing extra out.
Records the builder must refuse (an opcode RoCEv2 does not use, a payload
on a header-only opcode) send nothing, swallow their payload and count in
`dropped_frames`.

The matrix: every opcode x IPv4 / IPv4 with UDP checksum / IPv6 x
back-to-back or stalls (the sink drops ready, the sources idle at random),
payload sizes at the 64-byte beat edges; payloads 0..4096; refused records
between good ones. Run by tests/cocotb/test_benches.py.
"""

from __future__ import annotations

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource
from cocotbext.axi.stream import define_stream
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

import roce_frames as frames
import roce_rules as rules
from bench_harness import pause_at_random, pulse_reset, quiet
from roce_rules import Drop

BEAT_BYTES = 64
CLOCK_NS = 4

#: TxHeader's fields (hdl/src/frame/tx/tx_header.rs) and the FrameSpec value
#: each is drawn from (None: a field of its own, set below).
HEADER_FIELDS = {
    "eth_dst": "eth_dst",
    "eth_src": "eth_src",
    "ipv6": None,
    "ip_src": "ip_src",
    "ip_dst": "ip_dst",
    "dscp": "dscp",
    "ecn": "ecn",
    "ipv4_identification": "identification",
    "ipv4_dont_fragment": "dont_fragment",
    "ttl": "ttl",
    "ipv6_flow_label": "flow_label",
    "udp_src_port": "udp_src_port",
    "udp_checksum": "udp_checksum",
    "opcode": None,
    "solicited": "solicited",
    "mig_req": "mig_req",
    "tver": None,
    "pkey": "pkey",
    "fecn": "fecn",
    "becn": "becn",
    "dest_qp": "dest_qp",
    "ack_req": "ack_req",
    "psn": "psn",
    "deth_qkey": "qkey",
    "deth_src_qp": "src_qp",
    "reth_va": "va",
    "reth_rkey": "rkey",
    "reth_dma_len": "dma_len",
    "atomic_va": "va",
    "atomic_rkey": "rkey",
    "atomic_swap_add": "swap_add",
    "atomic_compare": "compare",
    "aeth_syndrome": "syndrome",
    "aeth_msn": "msn",
    "atomic_ack_orig": "orig",
    "imm": "imm",
    "ieth_rkey": "ieth_rkey",
    "payload_len": None,
}

HeaderBus, HeaderTransaction, HeaderSource, _, _ = define_stream(
    "TxHeader", signals=[*HEADER_FIELDS, "valid", "ready"], valid_signal="valid", ready_signal="ready"
)


def record_of(spec: frames.FrameSpec) -> HeaderTransaction:
    """The header record of a frame spec. The spec's IPv4 addresses are
    32-bit values (the record's low bits); fields of headers the opcode
    does not carry keep their random values (the builder ignores them)."""
    v = spec.values
    fields = {name: v[source] for name, source in HEADER_FIELDS.items() if source is not None}
    fields.update(ipv6=int(spec.ipv6), opcode=spec.opcode, tver=0, payload_len=len(spec.payload))
    fields["udp_checksum"] = int(bool(fields["udp_checksum"]))
    return HeaderTransaction(**fields)


def spec_for(rng, opcode: int, ip: str, size: int) -> frames.FrameSpec:
    spec = frames.random_spec(rng, opcode, ip == "ipv6", size)
    # IPv6 always carries a UDP checksum (RFC 8200 8.1); on IPv4 the record
    # asks for one or not.
    spec.values["udp_checksum"] = ip != "ipv4"
    return spec


class TxBuilderBench:
    """The DUT with its record and payload sources and the frame sink."""

    def __init__(self, dut, rng: random.Random, stalls: bool):
        self.dut = dut
        self.rng = rng
        cocotb.start_soon(Clock(dut.clk, CLOCK_NS, unit="ns").start())
        self.header = HeaderSource(HeaderBus.from_prefix(dut, "s_header"), dut.clk, dut.rst)
        self.payload = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis_payload"), dut.clk, dut.rst)
        self.frame = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis_frame"), dut.clk, dut.rst)
        quiet(self.header, self.payload, self.frame)
        if stalls:
            pause_at_random(rng, [(self.header, 0.3), (self.payload, 0.2), (self.frame, 0.3)])
        self.dropped = 0

    async def reset(self):
        await pulse_reset(self.dut)

    async def run(self, cases: list[tuple[str, frames.FrameSpec, bool]]):
        """Send every (label, spec, good) record with its payload; check
        the frame of each good one in order, then that nothing else came
        out and `dropped_frames` counted the refused ones."""
        before = int(self.dut.dropped_frames.value)
        for _, spec, _ in cases:
            await self.header.send(record_of(spec))
            if spec.payload:
                await self.payload.send(AxiStreamFrame(spec.payload))
        good = [(label, spec) for label, spec, ok in cases if ok]
        beats = sum(-(-(len(spec.payload) + 110) // BEAT_BYTES) for _, spec, _ in cases)
        checker = cocotb.start_soon(self._check_all(good))
        await with_timeout(checker, 20 * beats * CLOCK_NS + 20_000, "ns")
        await ClockCycles(self.dut.clk, 200)
        assert self.frame.empty(), f"a frame beyond the {len(good)} good records: {self.frame.recv_nowait()}"
        refused = len(cases) - len(good)
        dropped = (int(self.dut.dropped_frames.value) - before) & 0xFFFF
        assert dropped == refused, f"dropped_frames counted {dropped}, expected {refused}"
        assert int(self.dut.payload_last_errors.value) == 0, "payload_last_errors counted"
        self.dut._log.info("%d frames checked, %d refused (%d beats)", len(good), refused, beats)

    async def _check_all(self, good):
        for index, (label, spec) in enumerate(good):
            where = f"frame {index} ({label}, {len(spec.payload)} B payload)"
            out = await self.frame.recv(compact=False)
            check_frame(out, spec, where)


def check_frame(out, spec: frames.FrameSpec, where: str):
    keep = out.tkeep
    beats = [keep[i : i + BEAT_BYTES] for i in range(0, len(keep), BEAT_BYTES)]
    for n, lanes in enumerate(beats):
        kept = sum(lanes)
        contiguous = lanes == [1] * kept + [0] * (len(lanes) - kept)
        full = kept == BEAT_BYTES or n == len(beats) - 1
        assert contiguous and full and kept > 0, f"{where}: beat {n} tkeep {lanes}"
    data = bytes(b for b, k in zip(out.tdata, keep) if k)
    want = frames.frame_bytes(spec)
    if data != want:
        first = next((i for i, (a, b) in enumerate(zip(data, want)) if a != b), min(len(data), len(want)))
        raise AssertionError(f"{where}: {len(data)} bytes, scapy's frame {len(want)}; first difference at byte {first}")
    check_with_scapy(data, spec, where)
    verdict = rules.decode(data)
    assert verdict.reason == Drop.ACCEPTED, f"{where}: the rules drop it ({verdict.reason.name})"
    assert verdict.payload == spec.payload, f"{where}: payload read back differs"
    record = record_of(spec)
    for name, width in rules.RECORD_FIELDS.items():
        if name in HEADER_FIELDS and name in verdict.fields and not name.startswith("has_"):
            carried = verdict.fields[name]
            if name in ("ipv6_flow_label",) and not spec.ipv6:
                continue
            if name in ("ipv4_identification", "ipv4_dont_fragment") and spec.ipv6:
                continue
            if not _header_carried(name, spec.opcode):
                continue
            want_value = int(getattr(record, name)) & ((1 << width) - 1)
            if name == "udp_checksum":
                want_value = int(bool(spec.values["udp_checksum"]))
            assert carried == want_value, f"{where}: {name} read back {carried:#x}, record {want_value:#x}"


_FIELD_HEADER = {
    "deth_": "DETH",
    "reth_": "RETH",
    "atomic_va": "ATOMIC_ETH",
    "atomic_rkey": "ATOMIC_ETH",
    "atomic_swap": "ATOMIC_ETH",
    "atomic_compare": "ATOMIC_ETH",
    "aeth_": "AETH",
    "atomic_ack": "ATOMIC_ACK_ETH",
    "imm": "IMM",
    "ieth_": "IETH",
}


def _header_carried(name: str, opcode: int) -> bool:
    """Whether the opcode's extension headers carry record field `name`
    (fields of the fixed headers always are)."""
    for prefix, header in _FIELD_HEADER.items():
        if name.startswith(prefix):
            return header in rules.OPCODES[opcode].headers
    return True


def check_with_scapy(data: bytes, spec: frames.FrameSpec, where: str):
    """The frame taken apart by scapy: checksums recomputed by scapy, the
    lengths and pad count consistent, the ICRC equal to the rules' ICRC."""
    pkt = Ether(data)
    ip = pkt[IPv6] if spec.ipv6 else pkt[IP]
    udp = pkt[UDP]
    ip_bytes = bytes(ip)
    if spec.ipv6:
        assert ip.plen == len(ip_bytes) - 40, f"{where}: IPv6 payload length {ip.plen}"
    else:
        assert ip.len == len(ip_bytes), f"{where}: IPv4 total length {ip.len}"
        fresh = IP(bytes(ip)[:20])
        sent = fresh.chksum
        del fresh.chksum
        assert IP(bytes(fresh)).chksum == sent, f"{where}: IPv4 header checksum {sent:#06x}"
    assert udp.len == len(ip_bytes) - (40 if spec.ipv6 else 20), f"{where}: UDP length {udp.len}"
    assert udp.dport == rules.ROCEV2_UDP_PORT
    assert ip_bytes[-4:] == rules.icrc(ip_bytes[:-4], spec.ipv6), f"{where}: ICRC differs from the rules' ICRC"
    if spec.values["udp_checksum"]:
        sent = udp.chksum
        assert sent != 0, f"{where}: UDP checksum missing"
        again = pkt.copy()
        del again[UDP].chksum
        assert Ether(bytes(again))[UDP].chksum == sent, f"{where}: UDP checksum {sent:#06x}"
    else:
        assert udp.chksum == 0, f"{where}: UDP checksum {udp.chksum:#06x} not asked for"
    bth = bytes(udp.payload)
    pad = (bth[1] >> 4) & 3
    assert pad == (-len(spec.payload)) & 3, f"{where}: pad count {pad}"
    ext = rules.OPCODES[spec.opcode].headers_len
    assert bth[12 + ext + len(spec.payload) : -4] == bytes(pad), f"{where}: pad bytes not zero"


def edge_sizes(opcode: int, ipv6: bool) -> list[int]:
    """Payload sizes around the payload beat edges and where the frame's
    ICRC falls just before, at and after an output beat edge."""
    sizes = {0, 1, 2, 3, 4, 5, 63, 64, 65, 127, 128, 129}
    header = frames.payload_offset(opcode, ipv6)
    for beats in (1, 2, 3):
        aligned = BEAT_BYTES * beats - header - rules.ICRC_LEN
        for delta in (-4, -1, 0, 1, 4):
            if aligned + delta >= 0:
                sizes.add(aligned + delta)
    return sorted(sizes)


IPS = ["ipv4", "ipv4csum", "ipv6"]


@cocotb.test()
@cocotb.parametrize(ip=IPS, traffic=["burst", "stalls"])
async def every_opcode(dut, ip: str, traffic: str):
    """Every opcode RoCEv2 uses, payload sizes around the beat edges
    (header-only opcodes: several records with random fields)."""
    rng = random.Random(f"every_opcode-{ip}-{traffic}")
    bench = TxBuilderBench(dut, rng, stalls=traffic == "stalls")
    await bench.reset()
    cases = []
    for opcode, op in sorted(rules.OPCODES.items()):
        sizes = edge_sizes(opcode, ip == "ipv6") if op.payload else [0, 0, 0]
        for size in sizes:
            cases.append((f"{op.name} {size} B", spec_for(rng, opcode, ip, size), True))
    rng.shuffle(cases)
    await bench.run(cases)


@cocotb.test()
@cocotb.parametrize(ip=IPS)
async def payload_sizes(dut, ip: str):
    """SEND Only and RDMA WRITE Only with Immediate, payloads 0..4096: every
    size up to 130, a stride above, every size near 4096."""
    rng = random.Random(f"payload_sizes-{ip}")
    bench = TxBuilderBench(dut, rng, stalls=True)
    await bench.reset()
    sizes = list(range(0, 131)) + list(range(131, 4085, 157)) + list(range(4085, rules.MAX_PAYLOAD + 1))
    cases = []
    for opcode in (0x04, 0x0B):
        for size in sizes:
            cases.append((f"{rules.OPCODES[opcode].name} {size} B", spec_for(rng, opcode, ip, size), True))
    await bench.run(cases)


@cocotb.test()
@cocotb.parametrize(ip=IPS)
async def refused_records(dut, ip: str):
    """Records `encode` refuses between good ones: an unknown opcode (with
    or without a payload), a payload on a header-only opcode. Their payload
    is swallowed, nothing is sent, dropped_frames counts each; the good
    frames around them come out whole."""
    rng = random.Random(f"refused_records-{ip}")
    bench = TxBuilderBench(dut, rng, stalls=True)
    await bench.reset()
    header_only = [code for code, op in rules.OPCODES.items() if not op.payload]
    cases = []
    for n in range(40):
        opcode = rng.choice(sorted(rules.OPCODES))
        size = rng.randrange(0, 300) if rules.OPCODES[opcode].payload else 0
        cases.append(("good neighbour", spec_for(rng, opcode, ip, size), True))
        if n % 2:
            bad = spec_for(rng, rng.choice(rules.UNKNOWN_OPCODES), ip, rng.choice([0, 1, 64, rng.randrange(0, 300)]))
            cases.append(("unknown opcode", bad, False))
        else:
            bad = spec_for(rng, rng.choice(header_only), ip, rng.randrange(1, 200))
            cases.append(("payload on a header-only opcode", bad, False))
    await bench.run(cases)
