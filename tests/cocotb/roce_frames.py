"""RoCEv2 test frames for the cocotb benches, built with scapy.

What: `FrameSpec` describes one frame (opcode, IPv4 or IPv6, payload and
random header values); `build` turns it into a scapy packet (Ethernet / IP
/ UDP / BTH from `scapy.contrib.roce`, extension headers and payload as
raw bytes) whose ICRC scapy computes; `CORRUPTIONS` holds one function per
class of bad frame, each with the drop reason it is meant to provoke.

Why: the stimulus comes from scapy, not from the project's code, and the
expectations from `roce_rules`, so a frame is judged by two independent
implementations of the wire format (scapy's ICRC against the rules' ICRC
is itself checked by tests/cocotb/test_roce_rules.py).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from typing import Callable

from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP, IPOption_NOP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

import roce_rules as rules
from roce_rules import Drop


@dataclass
class FrameSpec:
    """One RoCEv2 frame: the opcode, the IP version, the payload and the
    header values (`values`: every header field, drawn at random)."""

    opcode: int
    ipv6: bool
    payload: bytes
    values: dict[str, int] = field(default_factory=dict)
    # Bytes after the BTH in place of the opcode's extension headers, for
    # frames whose headers do not match their opcode.
    raw_extension: bytes | None = None
    pad_count: int | None = None


def random_spec(rng: random.Random, opcode: int, ipv6: bool, payload_len: int) -> FrameSpec:
    """A frame with random header values (each field over its full range)."""
    bits = rng.getrandbits
    values = {
        "eth_dst": bits(48) & ~(1 << 40),  # unicast
        "eth_src": bits(48) & ~(1 << 40),
        "ip_src": bits(128 if ipv6 else 32),
        "ip_dst": bits(128 if ipv6 else 32),
        "dscp": bits(6),
        "ecn": bits(2),
        "ttl": bits(8),
        "flow_label": bits(20),
        "identification": bits(16),
        "dont_fragment": bits(1),
        "udp_src_port": 0xC000 | bits(14),  # Annex A17: flow entropy
        "udp_checksum": rng.choice([False, True]),
        "solicited": bits(1),
        "mig_req": bits(1),
        "pkey": bits(16),
        "fecn": bits(1),
        "becn": bits(1),
        "dest_qp": bits(24),
        "ack_req": bits(1),
        "psn": bits(24),
        "va": bits(64),
        "rkey": bits(32),
        "dma_len": bits(32),
        "swap_add": bits(64),
        "compare": bits(64),
        "syndrome": bits(8),
        "msn": bits(24),
        "orig": bits(64),
        "imm": bits(32),
        "ieth_rkey": bits(32),
        "qkey": bits(32),
        "src_qp": bits(24),
    }
    return FrameSpec(opcode, ipv6, rng.randbytes(payload_len), values)


def extension_headers(opcode: int, v: dict[str, int]) -> bytes:
    """The opcode's extension headers (IBA Vol. 1 9.3) in wire order."""
    def be(value: int, length: int) -> bytes:
        return value.to_bytes(length, "big")

    encoders: dict[str, Callable[[], bytes]] = {
        "RETH": lambda: be(v["va"], 8) + be(v["rkey"], 4) + be(v["dma_len"], 4),
        "DETH": lambda: be(v["qkey"], 4) + b"\0" + be(v["src_qp"], 3),
        "ATOMIC_ETH": lambda: be(v["va"], 8) + be(v["rkey"], 4) + be(v["swap_add"], 8) + be(v["compare"], 8),
        "AETH": lambda: be(v["syndrome"], 1) + be(v["msn"], 3),
        "ATOMIC_ACK_ETH": lambda: be(v["orig"], 8),
        "IMM": lambda: be(v["imm"], 4),
        "IETH": lambda: be(v["ieth_rkey"], 4),
        "CNP_RESERVED": lambda: bytes(16),
    }
    op = rules.OPCODES.get(opcode)
    return b"".join(encoders[h]() for h in op.headers) if op else b""


def _mac(value: int) -> str:
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


def _ipv4(value: int) -> str:
    return ".".join(str(b) for b in value.to_bytes(4, "big"))


def _ipv6(value: int) -> str:
    raw = value.to_bytes(16, "big")
    return ":".join(raw[i : i + 2].hex() for i in range(0, 16, 2))


def build(spec: FrameSpec) -> Packet:
    """The scapy packet for `spec`; its bytes carry scapy's ICRC."""
    v = spec.values
    ether = Ether(dst=_mac(v["eth_dst"]), src=_mac(v["eth_src"]))
    tos = v["dscp"] << 2 | v["ecn"]
    if spec.ipv6:
        ip = IPv6(src=_ipv6(v["ip_src"]), dst=_ipv6(v["ip_dst"]), tc=tos, fl=v["flow_label"], hlim=v["ttl"])
    else:
        ip = IP(
            src=_ipv4(v["ip_src"]),
            dst=_ipv4(v["ip_dst"]),
            tos=tos,
            ttl=v["ttl"],
            id=v["identification"],
            flags="DF" if v["dont_fragment"] else 0,
        )
    udp = UDP(sport=v["udp_src_port"], dport=rules.ROCEV2_UDP_PORT, chksum=None if v["udp_checksum"] else 0)
    pad = (-len(spec.payload)) & 3
    bth = BTH(
        opcode=spec.opcode,
        solicited=v["solicited"],
        migreq=v["mig_req"],
        padcount=pad if spec.pad_count is None else spec.pad_count,
        pkey=v["pkey"],
        fecn=v["fecn"],
        becn=v["becn"],
        dqpn=v["dest_qp"],
        ackreq=v["ack_req"],
        psn=v["psn"],
    )
    ext = extension_headers(spec.opcode, v) if spec.raw_extension is None else spec.raw_extension
    return ether / ip / udp / bth / Raw(ext + spec.payload + bytes(pad))


def frame_bytes(spec: FrameSpec) -> bytes:
    return bytes(build(spec))


# ---- Corruption classes. Each takes a good frame's spec and a random
# source and returns the bytes of a bad frame; the reason it should be
# dropped for is given beside it. Changes made through scapy fields get a
# consistent ICRC and IP checksum, so only the check aimed at fails.


def _flip_bit(data: bytes, lo: int, hi: int, rng: random.Random) -> bytes:
    """Flip one random bit of data[lo:hi]."""
    out = bytearray(data)
    at = rng.randrange(lo, hi)
    out[at] ^= 1 << rng.randrange(8)
    return bytes(out)


def bth_offset(ipv6: bool) -> int:
    """Where the BTH starts in a frame: after Ethernet, IP and UDP."""
    return rules.ETH_HEADER_LEN + (rules.IPV6_HEADER_LEN if ipv6 else rules.IPV4_HEADER_LEN) + rules.UDP_HEADER_LEN


def payload_offset(opcode: int, ipv6: bool) -> int:
    """Where the payload starts in a frame of `opcode`: every header
    before it, the opcode's extension headers included."""
    return bth_offset(ipv6) + rules.BTH_LEN + rules.OPCODES[opcode].headers_len


def _layout(spec: FrameSpec) -> tuple[int, int]:
    """(offset of the BTH, offset of the payload) in the frame."""
    return bth_offset(spec.ipv6), payload_offset(spec.opcode, spec.ipv6)


def _changes_packet(change: Callable[[Packet, FrameSpec, random.Random], None]):
    """A corruption made by changing fields of the frame's scapy packet:
    `change(pkt, spec, rng)` edits the packet `build` made, and the
    corruption returns its bytes."""

    @functools.wraps(change)
    def corrupt(spec: FrameSpec, rng: random.Random) -> bytes:
        pkt = build(spec)
        change(pkt, spec, rng)
        return bytes(pkt)

    return corrupt


def icrc_wrong(spec, rng):
    frame = frame_bytes(spec)
    return _flip_bit(frame, len(frame) - 4, len(frame), rng)


def payload_bit_flip(spec, rng):
    if not rules.OPCODES[spec.opcode].payload:
        spec.opcode = rng.choice([op.code for op in rules.OPCODES.values() if op.payload])
    if not spec.payload:
        spec.payload = rng.randbytes(rng.randrange(1, 200))
    frame = frame_bytes(spec)
    _, start = _layout(spec)
    return _flip_bit(frame, start, start + len(spec.payload), rng)


def covered_header_bit_flip(spec, rng):
    """A bit of the BTH's P_Key, DestQP or PSN: covered by the ICRC."""
    frame = frame_bytes(spec)
    bth, _ = _layout(spec)
    offset = rng.choice([2, 3, 5, 6, 7, 9, 10, 11])
    return _flip_bit(frame, bth + offset, bth + offset + 1, rng)


@_changes_packet
def masked_fields_changed(pkt, spec, rng):
    """Fields a router may rewrite (DSCP/ECN, TTL or hop limit, flow label,
    UDP checksum, FECN/BECN) changed after the ICRC was computed: the ICRC
    masks them (Annex A17), so the frame stays good."""
    icrc_value = bytes(pkt)[-4:]
    ip = pkt[IPv6] if spec.ipv6 else pkt[IP]
    if spec.ipv6:
        ip.tc ^= 1 << rng.randrange(8)
        ip.fl ^= 1 << rng.randrange(20)
        ip.hlim = (ip.hlim - 1) & 0xFF
    else:
        ip.tos ^= 1 << rng.randrange(8)
        ip.ttl = (ip.ttl - 1) & 0xFF
        ip.chksum = None  # recomputed for the new TOS and TTL
    pkt[UDP].chksum = rng.getrandbits(16)
    pkt[BTH].fecn ^= 1
    pkt[BTH].becn ^= rng.getrandbits(1)
    pkt[BTH].icrc = int.from_bytes(icrc_value, "big")  # keep the old ICRC


@_changes_packet
def tver_nonzero(pkt, spec, rng):
    pkt[BTH].version = rng.randrange(1, 16)


def truncated_in_payload(spec, rng):
    """Cut somewhere after the headers: in the payload, pad or ICRC."""
    frame = frame_bytes(spec)
    _, start = _layout(spec)
    return frame[: rng.randrange(start, len(frame))]


def truncated_by_one_byte(spec, rng):
    """The frame's last byte (the ICRC's last) missing: the tightest cut."""
    return frame_bytes(spec)[:-1]


def truncated_in_headers(spec, rng):
    """Cut anywhere before the headers end (1 byte up)."""
    frame = frame_bytes(spec)
    _, start = _layout(spec)
    return frame[: rng.randrange(1, start)]


@_changes_packet
def ipv4_checksum_wrong(pkt, spec, rng):
    good = IP(bytes(pkt[IP])).chksum
    pkt[IP].chksum = good ^ (1 << rng.randrange(16))


@_changes_packet
def udp_port_wrong(pkt, spec, rng):
    pkt[UDP].dport = rng.choice([4790, 4792, 4791 ^ 0x100, rng.randrange(1024)])


@_changes_packet
def ethertype_wrong(pkt, spec, rng):
    pkt[Ether].type = rng.choice([0x8915, 0x8100, 0x0806, 0x88CC, 0x86DC, 0x0801])


@_changes_packet
def ip_version_wrong(pkt, spec, rng):
    ip = pkt[IPv6] if spec.ipv6 else pkt[IP]
    ip.version = rng.choice([v for v in range(16) if v != (6 if spec.ipv6 else 4)])


@_changes_packet
def ipv4_options(pkt, spec, rng):
    pkt[IP].options = [IPOption_NOP()] * (4 * rng.randrange(1, 4))


@_changes_packet
def ipv4_fragment(pkt, spec, rng):
    if rng.getrandbits(1):
        pkt[IP].flags = "MF"
    else:
        pkt[IP].frag = rng.randrange(1, 1 << 13)


@_changes_packet
def not_udp(pkt, spec, rng):
    proto = rng.choice([6, 1, 0x11 ^ 0x80, 132])
    if spec.ipv6:
        pkt[IPv6].nh = proto
    else:
        pkt[IP].proto = proto


@_changes_packet
def ipv4_length_below_header(pkt, spec, rng):
    pkt[IP].len = rng.randrange(0, 20)


@_changes_packet
def ip_length_beyond_frame(pkt, spec, rng):
    """The IP header announces more bytes than the frame holds."""
    extra = rng.randrange(1, 70)
    if spec.ipv6:
        pkt[IPv6].plen = len(pkt[UDP]) + extra
    else:
        pkt[IP].len = len(pkt[IP]) + extra


@_changes_packet
def udp_length_wrong(pkt, spec, rng):
    length = len(pkt[UDP])
    pkt[UDP].len = rng.choice([length - 1, length + 1, length + 4, 0, 8])


def extension_headers_cut(spec, rng):
    """An opcode whose extension headers do not fit in the datagram."""
    spec.opcode = rng.choice([op.code for op in rules.OPCODES.values() if op.headers])
    spec.payload = b""
    need = rules.OPCODES[spec.opcode].headers_len
    spec.raw_extension = rng.randbytes(rng.randrange(0, need))
    return bytes(build(spec))


def payload_on_header_only_opcode(spec, rng):
    """READ request, ACK, atomics, CNP with bytes after their headers."""
    spec.opcode = rng.choice([op.code for op in rules.OPCODES.values() if not op.payload])
    spec.payload = rng.randbytes(rng.randrange(1, 300))
    return frame_bytes(spec)


def pad_beyond_datagram(spec, rng):
    """A pad count larger than the bytes after the headers."""
    spec.opcode = rng.choice([op.code for op in rules.OPCODES.values() if op.payload])
    spec.payload = b""
    spec.pad_count = rng.randrange(1, 4)
    return frame_bytes(spec)


def payload_above_mtu(spec, rng):
    spec.opcode = rng.choice([op.code for op in rules.OPCODES.values() if op.payload])
    spec.payload = rng.randbytes(rules.MAX_PAYLOAD + rng.randrange(1, 9))
    return frame_bytes(spec)


def unknown_opcode(spec, rng):
    spec.opcode = rng.choice(rules.UNKNOWN_OPCODES)
    return frame_bytes(spec)


def ethernet_padding(spec, rng):
    """Bytes past the IP length (Ethernet pad, up to a beat) are ignored."""
    return frame_bytes(spec) + rng.randbytes(rng.randrange(1, 80))


CORRUPTIONS: dict[str, tuple[Drop, Callable[[FrameSpec, random.Random], bytes], bool]] = {
    # name: (expected verdict, corruption, applies to IPv6 too)
    "icrc_wrong": (Drop.ICRC, icrc_wrong, True),
    "payload_bit_flip": (Drop.ICRC, payload_bit_flip, True),
    "covered_header_bit_flip": (Drop.ICRC, covered_header_bit_flip, True),
    "masked_fields_changed": (Drop.ACCEPTED, masked_fields_changed, True),
    "tver_nonzero": (Drop.TVER, tver_nonzero, True),
    "truncated_in_payload": (Drop.TRUNCATED, truncated_in_payload, True),
    "truncated_by_one_byte": (Drop.TRUNCATED, truncated_by_one_byte, True),
    "truncated_in_headers": (Drop.TRUNCATED, truncated_in_headers, True),
    "ipv4_checksum_wrong": (Drop.IPV4_CHECKSUM, ipv4_checksum_wrong, False),
    "udp_port_wrong": (Drop.UDP_PORT, udp_port_wrong, True),
    "ethertype_wrong": (Drop.ETHERTYPE, ethertype_wrong, True),
    "ip_version_wrong": (Drop.IP_VERSION, ip_version_wrong, True),
    "ipv4_options": (Drop.IPV4_OPTIONS, ipv4_options, False),
    "ipv4_fragment": (Drop.IPV4_FRAGMENT, ipv4_fragment, False),
    "not_udp": (Drop.NOT_UDP, not_udp, True),
    "ipv4_length_below_header": (Drop.IP_LENGTH, ipv4_length_below_header, False),
    "ip_length_beyond_frame": (Drop.TRUNCATED, ip_length_beyond_frame, True),
    "udp_length_wrong": (Drop.UDP_LENGTH, udp_length_wrong, True),
    "extension_headers_cut": (Drop.HEADER_OPCODE_MISMATCH, extension_headers_cut, True),
    "payload_on_header_only_opcode": (Drop.UNEXPECTED_PAYLOAD, payload_on_header_only_opcode, True),
    "pad_beyond_datagram": (Drop.PAD, pad_beyond_datagram, True),
    "payload_above_mtu": (Drop.PAYLOAD_TOO_LARGE, payload_above_mtu, True),
    "unknown_opcode": (Drop.OPCODE, unknown_opcode, True),
    "ethernet_padding": (Drop.ACCEPTED, ethernet_padding, True),
}
