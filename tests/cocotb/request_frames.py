"""RoCEv2 RC frames built fast, with struct and the rules' ICRC, for the
benches that send hundreds of thousands of them.

What: `Endpoint` (a MAC, an IPv4 address and a UDP source port) and
`frame(src, dst, opcode, dest_qp, psn, ...)`: one IPv4 RoCEv2 frame (no
FCS) with the BTH, the extension headers the caller gives as bytes (in
wire order), the payload, its pad and the ICRC. Every length field follows
from the bytes given, so a frame whose extension headers do not match its
opcode (a hostile frame) is still well formed below the BTH.

Why: scapy takes about a millisecond a frame; the hostile-traffic bench
sends 10^5 to 10^6. `test_request_frames.py` checks this builder against
scapy's RoCE layer and ICRC byte for byte, so the speed costs no second
opinion.

Sources: IBA Vol. 1 9.2 (BTH), 9.3 (RETH, AtomicETH, ImmDt, IETH, AETH),
Annex A17 (RoCEv2 over UDP port 4791, the ICRC); RFC 791 (IPv4 header).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import roce_rules as rules

ETHERTYPE_IPV4 = struct.pack("!H", rules.ETHERTYPE_IPV4)
TTL = 64


@dataclass(frozen=True)
class Endpoint:
    """One side of a connection as its frames name it."""

    mac: bytes
    ip: int
    udp_src_port: int = 0xC000


def reth(va: int, rkey: int, dma_len: int) -> bytes:
    """IBA 9.3.3: virtual address, R_Key, DMA length."""
    return struct.pack("!QII", va & (2**64 - 1), rkey & 0xFFFFFFFF, dma_len & 0xFFFFFFFF)


def atomic_eth(va: int, rkey: int, swap_add: int, compare: int) -> bytes:
    """IBA 9.3.4: virtual address, R_Key, swap (or add) data, compare data."""
    mask = 2**64 - 1
    return struct.pack("!QIQQ", va & mask, rkey & 0xFFFFFFFF, swap_add & mask, compare & mask)


def aeth(syndrome: int, msn: int) -> bytes:
    """IBA 9.3.5: syndrome and the 24-bit MSN."""
    return struct.pack("!I", (syndrome & 0xFF) << 24 | (msn & 0xFFFFFF))


def immediate(value: int) -> bytes:
    """IBA 9.3.6 (ImmDt) and 9.3.7 (IETH) share this shape."""
    return struct.pack("!I", value & 0xFFFFFFFF)


def frame(
    src: Endpoint,
    dst: Endpoint,
    opcode: int,
    dest_qp: int,
    psn: int,
    extension: bytes = b"",
    payload: bytes = b"",
    *,
    ack_req: bool = False,
    solicited: bool = False,
    pad_count: int | None = None,
    pkey: int = 0xFFFF,
    ecn: int = 0,
) -> bytes:
    """The frame's bytes. `pad_count` overrides the BTH's pad field (the
    pad bytes sent are always the ones that round the payload up to four)."""
    pad = -len(payload) & 3
    bth = struct.pack(
        "!BBHII",
        opcode & 0xFF,
        (solicited << 7) | (((pad if pad_count is None else pad_count) & 3) << 4),
        pkey & 0xFFFF,
        dest_qp & 0xFFFFFF,
        (ack_req << 31) | (psn & 0xFFFFFF),
    )
    transport = bth + extension + payload + bytes(pad)
    udp_len = rules.UDP_HEADER_LEN + len(transport) + 4
    udp = struct.pack("!HHHH", src.udp_src_port, rules.ROCEV2_UDP_PORT, udp_len, 0)
    total = rules.IPV4_HEADER_LEN + udp_len
    header = bytearray(
        struct.pack("!BBHHHBBHII", 0x45, ecn & 3, total, 0, 0x4000, TTL, rules.IP_PROTO_UDP, 0, src.ip, dst.ip)
    )
    header[10:12] = struct.pack("!H", rules.ipv4_header_checksum(bytes(header)))
    ip_packet = bytes(header) + udp + transport
    return dst.mac + src.mac + ETHERTYPE_IPV4 + ip_packet + rules.icrc(ip_packet, ipv6=False)
