"""RoCEv2 receive rules, written from the specifications as a second opinion.

What: a small decoder that takes one Ethernet frame (bytes, no FCS) and says
what a RoCEv2 receive parser must make of it: the verdict (accepted, or the
drop reason code), every header field of the parser's record, and the
payload with pad and ICRC removed.

Why: the cocotb bench checks the exported Verilog against these rules, not
against the project's Rust model, so a misreading shared by the RTL and the
model does not pass unnoticed. Nothing here imports the project's Rust.

Sources: InfiniBand Architecture Specification Vol. 1, chapter 9 (9.2 the
BTH, 9.3 the extension headers, the opcode table of 9.2), and Annex A17
(RoCEv2: UDP destination port 4791, the IPv4/IPv6 encapsulation and the
ICRC with its masked fields). IPv4 per RFC 791 (header checksum as in
RFC 1071), IPv6 per RFC 8200.

The drop reason codes and the order in which the checks are made are the
parser's documented interface (its record's `reason` field): the first
failing check wins. The rules differ from a full IBA receiver in two
documented ways that the parser shares: the UDP checksum is not verified
(RoCEv2 protects the datagram with the ICRC; IPv4 senders send zero), and
the pad count is only required to fit the bytes after the headers (the
sender's duty to pad the payload to a 4-byte multiple is not enforced).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from enum import IntEnum

ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_IPV6 = 0x86DD
IP_PROTO_UDP = 17
ROCEV2_UDP_PORT = 4791  # Annex A17: the IANA port for RoCEv2.
ETH_HEADER_LEN = 14
IPV4_HEADER_LEN = 20  # IHL 5: the parser takes no IPv4 options.
IPV6_HEADER_LEN = 40
UDP_HEADER_LEN = 8
BTH_LEN = 12
ICRC_LEN = 4
MAX_PAYLOAD = 4096  # The largest IBA MTU.


class Drop(IntEnum):
    """Verdict codes of the parser's record, in the order the checks run."""

    ACCEPTED = 0
    TRUNCATED = 1
    ETHERTYPE = 2
    IP_VERSION = 3
    IPV4_OPTIONS = 4
    IPV4_CHECKSUM = 5
    IPV4_FRAGMENT = 6
    IP_LENGTH = 7
    NOT_UDP = 8
    UDP_PORT = 9
    UDP_LENGTH = 10
    UDP_CHECKSUM = 11  # Not used: the UDP checksum is not verified.
    TVER = 12
    OPCODE = 13
    HEADER_OPCODE_MISMATCH = 14
    UNEXPECTED_PAYLOAD = 15
    PAYLOAD_TOO_LARGE = 16
    PAD = 17
    ICRC = 18


# Extension headers (IBA Vol. 1 9.3) and their wire lengths in bytes.
EXT_LEN = {
    "RETH": 16,  # VA 8, R_Key 4, DMA length 4
    "DETH": 8,  # Q_Key 4, reserved 1, source QP 3
    "ATOMIC_ETH": 28,  # VA 8, R_Key 4, swap/add 8, compare 8
    "AETH": 4,  # syndrome 1, MSN 3
    "ATOMIC_ACK_ETH": 8,  # original remote data 8
    "IMM": 4,  # immediate data
    "IETH": 4,  # R_Key to invalidate
    "CNP_RESERVED": 16,  # Annex A17: a CNP carries 16 reserved bytes.
}


@dataclass(frozen=True)
class Opcode:
    """One BTH opcode: its name, the extension headers that follow the BTH
    in wire order, and whether a payload may follow them."""

    code: int
    name: str
    headers: tuple[str, ...]
    payload: bool

    @property
    def headers_len(self) -> int:
        return sum(EXT_LEN[h] for h in self.headers)


def _table(prefix: int, transport: str, rows):
    return {
        prefix | low: Opcode(prefix | low, f"{transport} {name}", headers, payload)
        for low, name, headers, payload in rows
    }


# IBA Vol. 1 9.2, the BTH opcode table. Reliable Connection (prefix 0x00).
RC_OPCODES = _table(
    0x00,
    "RC",
    [
        (0x00, "SEND First", (), True),
        (0x01, "SEND Middle", (), True),
        (0x02, "SEND Last", (), True),
        (0x03, "SEND Last with Immediate", ("IMM",), True),
        (0x04, "SEND Only", (), True),
        (0x05, "SEND Only with Immediate", ("IMM",), True),
        (0x06, "RDMA WRITE First", ("RETH",), True),
        (0x07, "RDMA WRITE Middle", (), True),
        (0x08, "RDMA WRITE Last", (), True),
        (0x09, "RDMA WRITE Last with Immediate", ("IMM",), True),
        (0x0A, "RDMA WRITE Only", ("RETH",), True),
        (0x0B, "RDMA WRITE Only with Immediate", ("RETH", "IMM"), True),
        (0x0C, "RDMA READ Request", ("RETH",), False),
        (0x0D, "RDMA READ Response First", ("AETH",), True),
        (0x0E, "RDMA READ Response Middle", (), True),
        (0x0F, "RDMA READ Response Last", ("AETH",), True),
        (0x10, "RDMA READ Response Only", ("AETH",), True),
        (0x11, "Acknowledge", ("AETH",), False),
        (0x12, "ATOMIC Acknowledge", ("AETH", "ATOMIC_ACK_ETH"), False),
        (0x13, "CmpSwap", ("ATOMIC_ETH",), False),
        (0x14, "FetchAdd", ("ATOMIC_ETH",), False),
        (0x16, "SEND Last with Invalidate", ("IETH",), True),
        (0x17, "SEND Only with Invalidate", ("IETH",), True),
    ],
)

# Unreliable Connection (0x20): the SEND and WRITE subset of RC.
UC_OPCODES = _table(
    0x20,
    "UC",
    [(op.code, op.name[3:], op.headers, op.payload) for op in RC_OPCODES.values() if op.code <= 0x0B],
)

# Unreliable Datagram (0x60): SEND Only with a DETH; and the RoCEv2 CNP
# (Annex A17, congestion notification), opcode 0x81.
OTHER_OPCODES = {
    0x64: Opcode(0x64, "UD SEND Only", ("DETH",), True),
    0x65: Opcode(0x65, "UD SEND Only with Immediate", ("DETH", "IMM"), True),
    0x81: Opcode(0x81, "CNP", ("CNP_RESERVED",), False),
}

OPCODES: dict[int, Opcode] = {**RC_OPCODES, **UC_OPCODES, **OTHER_OPCODES}
UNKNOWN_OPCODES = [code for code in range(256) if code not in OPCODES]


# The record's fields and widths (the parser's header record, which the
# wrapper top exposes one port per field), so expectations can be masked to
# the width the hardware carries.
RECORD_FIELDS: dict[str, int] = {
    "drop": 1,
    "reason": 5,
    "has_payload": 1,
    "eth_dst": 48,
    "eth_src": 48,
    "ipv6": 1,
    "ip_src": 128,
    "ip_dst": 128,
    "dscp": 6,
    "ecn": 2,
    "ipv4_identification": 16,
    "ipv4_dont_fragment": 1,
    "ttl": 8,
    "ipv6_flow_label": 20,
    "udp_src_port": 16,
    "udp_checksum": 1,
    "opcode": 8,
    "solicited": 1,
    "mig_req": 1,
    "pad_count": 2,
    "tver": 4,
    "pkey": 16,
    "fecn": 1,
    "becn": 1,
    "dest_qp": 24,
    "ack_req": 1,
    "psn": 24,
    "has_deth": 1,
    "has_reth": 1,
    "has_atomic_eth": 1,
    "has_aeth": 1,
    "has_atomic_ack_eth": 1,
    "has_imm": 1,
    "has_ieth": 1,
    "deth_qkey": 32,
    "deth_src_qp": 24,
    "reth_va": 64,
    "reth_rkey": 32,
    "reth_dma_len": 32,
    "atomic_va": 64,
    "atomic_rkey": 32,
    "atomic_swap_add": 64,
    "atomic_compare": 64,
    "aeth_syndrome": 8,
    "aeth_msn": 24,
    "atomic_ack_orig": 64,
    "imm": 32,
    "ieth_rkey": 32,
    "payload_len": 13,
}


# Record fields that carry the verdict rather than header bytes: compared
# on their own (payload_len only where the headers give it).
VERDICT_FIELDS = ("drop", "reason", "has_payload", "payload_len")


def _be(data: bytes, at: int, length: int) -> int:
    return int.from_bytes(data[at : at + length], "big")


def ones_complement_sum(words: bytes) -> int:
    """The 16-bit one's complement sum of big-endian words (RFC 1071)."""
    total = sum(struct.unpack(f"!{len(words) // 2}H", words))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def ipv4_header_checksum(header: bytes) -> int:
    """The checksum field value RFC 791 prescribes for a 20-byte header:
    the complement of the one's complement sum of the other nine words."""
    return ~ones_complement_sum(header[:10] + header[12:20]) & 0xFFFF


def icrc(ip_packet: bytes, ipv6: bool) -> bytes:
    """The ICRC of a RoCEv2 packet as it goes on the wire (Annex A17).

    `ip_packet` runs from the IP header to just before the ICRC. The CRC-32
    (the Ethernet/zlib polynomial, reflected) covers 8 bytes of ones
    standing for the masked LRH, then the IP, UDP and IBA headers with the
    fields that routers may change set to ones (IPv4: type of service, TTL,
    header checksum; IPv6: traffic class, flow label, hop limit; UDP
    checksum; the BTH byte holding FECN, BECN and reserved bits), then the
    payload and pad. It is sent least significant byte first.
    """
    masked = bytearray(ip_packet)
    if ipv6:
        masked[0] |= 0x0F  # traffic class, high nibble
        masked[1:4] = b"\xff\xff\xff"  # traffic class low nibble, flow label
        masked[7] = 0xFF  # hop limit
        udp = IPV6_HEADER_LEN
    else:
        masked[1] = 0xFF  # type of service (DSCP, ECN)
        masked[8] = 0xFF  # TTL
        masked[10:12] = b"\xff\xff"  # header checksum
        udp = IPV4_HEADER_LEN
    masked[udp + 6 : udp + 8] = b"\xff\xff"  # UDP checksum
    masked[udp + UDP_HEADER_LEN + 4] = 0xFF  # BTH: FECN, BECN, reserved
    crc = zlib.crc32(b"\xff" * 8 + bytes(masked)) & 0xFFFFFFFF
    return crc.to_bytes(4, "little")


@dataclass
class Verdict:
    """What the parser must make of one frame.

    `reason` is the drop reason (ACCEPTED for a good frame). `fields` holds
    the record fields the header bytes give (valid to compare when
    `headers_complete`); `payload` the payload bytes of an accepted frame.
    `segment` says whether the parser emits a payload segment for the
    frame: its headers pass every check that needs no more than the header
    bytes (all but truncation at the end and the ICRC) and the payload is
    not empty. `segment` is None where the frame ends inside its headers
    and the parser sees bytes the frame does not have.
    """

    reason: Drop
    fields: dict[str, int] = field(default_factory=dict)
    payload: bytes = b""
    segment: bool | None = None
    headers_complete: bool = False

    @property
    def accepted(self) -> bool:
        return self.reason == Drop.ACCEPTED


def _ip_reason(frame: bytes, ipv6: bool) -> Drop:
    """The IP checks (RFC 791 / RFC 8200) in the parser's order."""
    ip = frame[ETH_HEADER_LEN:]
    version = ip[0] >> 4
    if ipv6:
        if version != 6:
            return Drop.IP_VERSION
        if ip[6] != IP_PROTO_UDP:
            return Drop.NOT_UDP
        return Drop.ACCEPTED
    if version != 4:
        return Drop.IP_VERSION
    if ip[0] & 0x0F != 5:
        return Drop.IPV4_OPTIONS
    if _be(ip, 10, 2) != ipv4_header_checksum(ip[:20]):
        return Drop.IPV4_CHECKSUM
    more_fragments_and_offset = _be(ip, 6, 2) & 0x3FFF
    if more_fragments_and_offset:
        return Drop.IPV4_FRAGMENT
    if ip[9] != IP_PROTO_UDP:
        return Drop.NOT_UDP
    if _be(ip, 2, 2) < IPV4_HEADER_LEN:
        return Drop.IP_LENGTH
    return Drop.ACCEPTED


def _transport_reason(udp_region: int, udp_len: int, dst_port: int, bth: bytes) -> Drop:
    """The UDP and BTH checks, given the UDP datagram length the IP header
    implies (`udp_region`): UDP port and length, then the BTH (IBA 9.2:
    TVer 0, a known opcode, its extension headers present, a payload only
    where the opcode carries one, the pad inside the datagram, at most the
    largest MTU of payload)."""
    if udp_region < UDP_HEADER_LEN:
        return Drop.TRUNCATED
    if dst_port != ROCEV2_UDP_PORT:
        return Drop.UDP_PORT
    if udp_len != udp_region:
        return Drop.UDP_LENGTH
    if udp_region < UDP_HEADER_LEN + BTH_LEN:
        return Drop.TRUNCATED
    if bth[1] & 0x0F != 0:
        return Drop.TVER
    op = OPCODES.get(bth[0])
    if op is None:
        return Drop.OPCODE
    fixed = UDP_HEADER_LEN + BTH_LEN + op.headers_len + ICRC_LEN
    pad = (bth[1] >> 4) & 0x3
    if udp_region < fixed:
        return Drop.HEADER_OPCODE_MISMATCH
    if not op.payload and udp_region != fixed:
        return Drop.UNEXPECTED_PAYLOAD
    if udp_region < fixed + pad:
        return Drop.PAD
    if udp_region - fixed - pad > MAX_PAYLOAD:
        return Drop.PAYLOAD_TOO_LARGE
    return Drop.ACCEPTED


def _record_fields(frame: bytes, ipv6: bool) -> dict[str, int]:
    """The record's header fields, read from the frame's header bytes."""
    f = {name: 0 for name in RECORD_FIELDS if name not in VERDICT_FIELDS}
    f["eth_dst"] = _be(frame, 0, 6)
    f["eth_src"] = _be(frame, 6, 6)
    ip = frame[ETH_HEADER_LEN:]
    f["ipv6"] = int(ipv6)
    if ipv6:
        traffic_class = (_be(ip, 0, 2) >> 4) & 0xFF
        f["dscp"], f["ecn"] = traffic_class >> 2, traffic_class & 0x3
        f["ipv6_flow_label"] = _be(ip, 0, 4) & 0xFFFFF
        f["ttl"] = ip[7]
        f["ip_src"], f["ip_dst"] = _be(ip, 8, 16), _be(ip, 24, 16)
        udp = ip[IPV6_HEADER_LEN:]
    else:
        f["dscp"], f["ecn"] = ip[1] >> 2, ip[1] & 0x3
        f["ipv4_identification"] = _be(ip, 4, 2)
        f["ipv4_dont_fragment"] = (ip[6] >> 6) & 1
        f["ttl"] = ip[8]
        f["ip_src"], f["ip_dst"] = _be(ip, 12, 4), _be(ip, 16, 4)
        udp = ip[IPV4_HEADER_LEN:]
    f["udp_src_port"] = _be(udp, 0, 2)
    f["udp_checksum"] = int(_be(udp, 6, 2) != 0)
    bth = udp[UDP_HEADER_LEN:]
    f["opcode"] = bth[0]
    f["solicited"], f["mig_req"] = bth[1] >> 7, (bth[1] >> 6) & 1
    f["pad_count"], f["tver"] = (bth[1] >> 4) & 3, bth[1] & 0xF
    f["pkey"] = _be(bth, 2, 2)
    f["fecn"], f["becn"] = bth[4] >> 7, (bth[4] >> 6) & 1
    f["dest_qp"] = _be(bth, 5, 3)
    f["ack_req"] = bth[8] >> 7
    f["psn"] = _be(bth, 9, 3)
    op = OPCODES.get(bth[0])
    at = BTH_LEN
    for header in op.headers if op else ():
        ext = bth[at:]
        f[f"has_{header.lower()}"] = 1
        if header == "RETH":
            f["reth_va"], f["reth_rkey"], f["reth_dma_len"] = _be(ext, 0, 8), _be(ext, 8, 4), _be(ext, 12, 4)
        elif header == "DETH":
            f["deth_qkey"], f["deth_src_qp"] = _be(ext, 0, 4), _be(ext, 5, 3)
        elif header == "ATOMIC_ETH":
            f["atomic_va"], f["atomic_rkey"] = _be(ext, 0, 8), _be(ext, 8, 4)
            f["atomic_swap_add"], f["atomic_compare"] = _be(ext, 12, 8), _be(ext, 20, 8)
        elif header == "AETH":
            f["aeth_syndrome"], f["aeth_msn"] = ext[0], _be(ext, 1, 3)
        elif header == "ATOMIC_ACK_ETH":
            f["atomic_ack_orig"] = _be(ext, 0, 8)
        elif header == "IMM":
            f["imm"] = _be(ext, 0, 4)
        elif header == "IETH":
            f["ieth_rkey"] = _be(ext, 0, 4)
        at += EXT_LEN[header]
    f.pop("has_cnp_reserved", None)  # the record has no bit for it
    return f


def decode(frame: bytes) -> Verdict:
    """Judge one Ethernet frame (no FCS) by the RoCEv2 receive rules."""
    if len(frame) < ETH_HEADER_LEN:
        return Verdict(Drop.TRUNCATED)
    ethertype = _be(frame, 12, 2)
    if ethertype not in (ETHERTYPE_IPV4, ETHERTYPE_IPV6):
        return Verdict(Drop.ETHERTYPE, segment=False)
    ipv6 = ethertype == ETHERTYPE_IPV6
    ip_header_len = IPV6_HEADER_LEN if ipv6 else IPV4_HEADER_LEN
    if len(frame) < ETH_HEADER_LEN + ip_header_len:
        return Verdict(Drop.TRUNCATED)

    # The header fields sit at fixed offsets (no IPv4 options); bytes past
    # the frame's end read as zero here and only matter for a truncated
    # frame, whose fields are then not compared.
    view = frame.ljust(ETH_HEADER_LEN + ip_header_len + UDP_HEADER_LEN + BTH_LEN + 64, b"\0")
    ip = view[ETH_HEADER_LEN:]
    udp = ip[ip_header_len:]
    bth = udp[UDP_HEADER_LEN:]
    op = OPCODES.get(bth[0])
    header_len = ETH_HEADER_LEN + ip_header_len + UDP_HEADER_LEN + BTH_LEN + (op.headers_len if op else 0)
    ip_len = IPV6_HEADER_LEN + _be(ip, 4, 2) if ipv6 else _be(ip, 2, 2)
    frame_end = ETH_HEADER_LEN + ip_len
    verdict = Verdict(Drop.ACCEPTED, fields=_record_fields(view, ipv6))
    # The fields are defined where the headers lie within the frame and
    # within the IP packet (bytes past the IP length are not read).
    verdict.headers_complete = min(len(frame), frame_end) >= header_len
    known_segment = None if not verdict.headers_complete else False

    ip_reason = _ip_reason(frame, ipv6)
    if ip_reason != Drop.ACCEPTED:
        verdict.reason, verdict.segment = ip_reason, False
        return verdict

    udp_region = ip_len - ip_header_len
    transport = _transport_reason(udp_region, _be(udp, 4, 2), _be(udp, 2, 2), bth)
    verdict.reason, verdict.segment = transport, known_segment
    if transport == Drop.ACCEPTED:
        fixed = UDP_HEADER_LEN + BTH_LEN + op.headers_len + ICRC_LEN
        payload_len = udp_region - fixed - verdict.fields["pad_count"]
        verdict.fields["payload_len"] = payload_len
        if verdict.headers_complete:
            verdict.segment = payload_len > 0

    # Truncation outranks the transport checks: the frame must hold the
    # whole IP packet its header announces (bytes past it are Ethernet pad).
    if len(frame) < frame_end:
        verdict.reason = Drop.TRUNCATED
        return verdict
    if transport != Drop.ACCEPTED:
        return verdict

    packet = frame[ETH_HEADER_LEN:frame_end]
    if packet[-ICRC_LEN:] != icrc(packet[:-ICRC_LEN], ipv6):
        verdict.reason = Drop.ICRC
        return verdict
    verdict.payload = frame[header_len : header_len + verdict.fields["payload_len"]]
    return verdict
