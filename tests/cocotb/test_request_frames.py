"""The fast frame builder (request_frames.py) against scapy, without a
simulator: for every RC opcode, random header values and payload sizes
(pad 0..3), the builder's bytes equal scapy's, ICRC included, and the
rules' decoder accepts them with the values they were built with."""

import random

import pytest
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import request_frames as rf
import roce_frames as frames
import roce_rules as rules
from roce_rules import Drop

RC_OPCODES = sorted(op for op in rules.OPCODES if op < 0x20)


def scapy_frame(src: rf.Endpoint, dst: rf.Endpoint, opcode, dest_qp, psn, ext, payload, ack_req) -> bytes:
    ip = lambda v: ".".join(str(b) for b in v.to_bytes(4, "big"))  # noqa: E731
    mac = lambda m: ":".join(f"{b:02x}" for b in m)  # noqa: E731
    pad = -len(payload) & 3
    packet = (
        Ether(dst=mac(dst.mac), src=mac(src.mac))
        / IP(src=ip(src.ip), dst=ip(dst.ip), ttl=rf.TTL, flags="DF", id=0, tos=0)
        / UDP(sport=src.udp_src_port, dport=rules.ROCEV2_UDP_PORT, chksum=0)
        / BTH(opcode=opcode, padcount=pad, pkey=0xFFFF, dqpn=dest_qp, ackreq=ack_req, psn=psn)
        / Raw(ext + payload + bytes(pad))
    )
    return bytes(packet)


@pytest.mark.parametrize("opcode", RC_OPCODES, ids=lambda op: f"op{op:02x}")
def test_builder_matches_scapy(opcode):
    rng = random.Random(opcode)
    for _ in range(8):
        src = rf.Endpoint(rng.randbytes(6), rng.getrandbits(32), 0xC000 | rng.getrandbits(14))
        dst = rf.Endpoint(rng.randbytes(6), rng.getrandbits(32))
        spec = frames.random_spec(rng, opcode, False, 0)
        ext = frames.extension_headers(opcode, spec.values)
        payload = rng.randbytes(rng.randrange(0, 70)) if rules.OPCODES[opcode].payload else b""
        dest_qp, psn, ack_req = rng.getrandbits(24), rng.getrandbits(24), rng.getrandbits(1)
        built = rf.frame(src, dst, opcode, dest_qp, psn, ext, payload, ack_req=bool(ack_req))
        assert built == scapy_frame(src, dst, opcode, dest_qp, psn, ext, payload, ack_req)
        verdict = rules.decode(built)
        assert verdict.reason == Drop.ACCEPTED
        assert (verdict.fields["dest_qp"], verdict.fields["psn"], verdict.payload) == (dest_qp, psn, payload)


def test_extension_helpers_follow_the_header_layouts():
    v = {"va": 0x1122334455667788, "rkey": 0xAABBCCDD, "dma_len": 0x1000, "swap_add": 5, "compare": 9}
    assert rf.reth(v["va"], v["rkey"], v["dma_len"]) == frames.extension_headers(0x0A, v)
    assert rf.atomic_eth(v["va"], v["rkey"], 5, 9) == frames.extension_headers(0x13, v)
    assert rf.aeth(0x60, 0x123456) == bytes([0x60, 0x12, 0x34, 0x56])
