"""Cross-checks of the rocenic wire codec against scapy, an independent
RoCEv2 implementation: scapy builds frames that `rocenic decode` must accept
field for field, and scapy must agree with the ICRC of every frame the codec
encodes (`rocenic frames`)."""

import json
import os
import random
import struct
import subprocess
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, IPv6, Raw, rdpcap, wrpcap
from scapy.contrib.roce import BTH

ROOT = Path(__file__).resolve().parents[2]
ROCENIC = os.environ.get("ROCENIC_BIN", str(ROOT / "target" / "release" / "rocenic"))

# Opcode -> bytes of extension headers, as scapy carries them in Raw.
EXT_LEN = {
    0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4,
    0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4, 0x0A: 16, 0x0B: 20,
    0x0C: 16, 0x0D: 4, 0x0E: 0, 0x0F: 4, 0x10: 4, 0x11: 4, 0x12: 12,
    0x13: 28, 0x14: 28, 0x16: 4, 0x17: 4,
    0x64: 8, 0x65: 12,
}
NO_PAYLOAD = {0x0C, 0x11, 0x12, 0x13, 0x14}


def rocenic(*args):
    return subprocess.run([ROCENIC, *args], check=True, capture_output=True, text=True).stdout


def decode(pcap):
    out = rocenic("decode", str(pcap), "--json")
    return [json.loads(line) for line in out.splitlines()]


def scapy_frame(rng):
    opcode = rng.choice(sorted(EXT_LEN))
    payload_len = 0 if opcode in NO_PAYLOAD else rng.choice([0, 1, 3, 4, 255, rng.randrange(4097)])
    ext = bytes(rng.randrange(256) for _ in range(EXT_LEN[opcode]))
    payload = bytes(rng.randrange(256) for _ in range(payload_len))
    pad = -payload_len & 3
    bth = BTH(
        opcode=opcode,
        solicited=rng.randrange(2),
        migreq=rng.randrange(2),
        padcount=pad,
        pkey=rng.randrange(1 << 16),
        fecn=rng.randrange(2),
        becn=rng.randrange(2),
        dqpn=rng.randrange(1 << 24),
        ackreq=rng.randrange(2),
        psn=rng.randrange(1 << 24),
    )
    if rng.randrange(2):
        ip = IP(src="10.0.0.1", dst="10.0.0.2", tos=rng.randrange(256), ttl=rng.randrange(1, 256), flags="DF")
        udp = UDP(sport=rng.randrange(0xC000, 0x10000), dport=4791, chksum=0)
    else:
        ip = IPv6(src="fd00::1", dst="fd00::2", tc=rng.randrange(256), fl=rng.randrange(1 << 20), hlim=64)
        udp = UDP(sport=rng.randrange(0xC000, 0x10000), dport=4791)
    frame = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / ip / udp / bth
    frame = frame / Raw(ext + payload + b"\x00" * pad)
    return frame, dict(opcode=opcode, dest_qp=bth.dqpn, psn=bth.psn, payload_len=payload_len)


def test_rocenic_accepts_scapy_frames_field_for_field(tmp_path):
    rng = random.Random(4791)
    frames, expected = zip(*(scapy_frame(rng) for _ in range(300)))
    pcap = tmp_path / "scapy.pcap"
    wrpcap(str(pcap), list(frames))
    reports = decode(pcap)
    assert len(reports) == len(frames)
    for i, (report, want) in enumerate(zip(reports, expected)):
        assert report["frame"] == i + 1
        assert report["ok"], report
        assert report["error"] is None
        for key, value in want.items():
            assert report[key] == value, (i, key, report)


def test_rocenic_rejects_scapy_frames_with_a_broken_icrc(tmp_path):
    rng = random.Random(17)
    frames = []
    for _ in range(50):
        frame, _ = scapy_frame(rng)
        raw = bytearray(bytes(frame))
        raw[-1 - rng.randrange(4)] ^= 1 << rng.randrange(8)
        broken = Ether(bytes(raw))
        if IPv6 in broken:
            # The UDP checksum covers the ICRC bytes too: refresh it so the
            # ICRC is the only thing wrong.
            del broken[UDP].chksum
        frames.append(Ether(bytes(broken)))
    pcap = tmp_path / "bad.pcap"
    wrpcap(str(pcap), frames)
    reports = decode(pcap)
    assert [r["error"] for r in reports] == ["icrc"] * len(frames)
    assert not any(r["ok"] for r in reports)


def test_scapy_agrees_with_the_icrc_of_encoded_frames(tmp_path):
    pcap = tmp_path / "rocenic.pcap"
    rocenic("frames", "--seed", "3", "--count", "400", "--pcap", str(pcap))
    packets = rdpcap(str(pcap))
    reports = decode(pcap)
    assert len(packets) == len(reports) == 400
    seen_v4 = seen_v6 = 0
    for packet, report in zip(packets, reports):
        assert report["ok"], report
        raw = bytes(packet)
        bth = packet[BTH]
        # scapy recomputes the ICRC over its own parse of the frame.
        assert bth.compute_icrc(None) == raw[-4:], report
        assert (bth.opcode, bth.dqpn, bth.psn) == (report["opcode"], report["dest_qp"], report["psn"])
        seen_v4 += IP in packet
        seen_v6 += IPv6 in packet
    assert seen_v4 > 100 and seen_v6 > 100


def test_decode_of_a_missing_file_fails_cleanly(tmp_path):
    result = subprocess.run([ROCENIC, "decode", str(tmp_path / "nope.pcap")], capture_output=True, text=True)
    assert result.returncode != 0
    assert "cannot open" in result.stderr
