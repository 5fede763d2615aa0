"""The bench's two oracles checked against each other, without a simulator:
scapy's frames and ICRC against the rules module's decoder, and every
corruption class against the reason it is meant to provoke. If these fail,
the RTL bench would be comparing the RTL with a wrong expectation."""

import random

import pytest

import roce_frames as frames
import roce_rules as rules
from roce_rules import Drop

SEED = 0x16


def spec_for(rng, opcode, ipv6):
    payload_len = rng.randrange(0, 300) if rules.OPCODES[opcode].payload else 0
    return frames.random_spec(rng, opcode, ipv6, payload_len)


@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
@pytest.mark.parametrize("opcode", sorted(rules.OPCODES), ids=lambda op: f"op{op:02x}")
def test_scapy_frames_are_accepted_with_their_fields(opcode, ipv6):
    """A frame scapy builds (with scapy's ICRC) passes the rules, and the
    rules read back every header value it was built with."""
    rng = random.Random(SEED * 1000 + opcode * 2 + ipv6)
    spec = spec_for(rng, opcode, ipv6)
    verdict = rules.decode(frames.frame_bytes(spec))
    assert verdict.reason == Drop.ACCEPTED
    v, f = spec.values, verdict.fields
    assert f["opcode"] == opcode and f["ipv6"] == ipv6
    assert (f["eth_dst"], f["eth_src"]) == (v["eth_dst"], v["eth_src"])
    assert (f["ip_src"], f["ip_dst"], f["ttl"]) == (v["ip_src"], v["ip_dst"], v["ttl"])
    assert (f["dscp"], f["ecn"]) == (v["dscp"], v["ecn"])
    assert (f["dest_qp"], f["psn"], f["pkey"]) == (v["dest_qp"], v["psn"], v["pkey"])
    assert (f["solicited"], f["mig_req"], f["ack_req"]) == (v["solicited"], v["mig_req"], v["ack_req"])
    assert (f["fecn"], f["becn"], f["udp_src_port"]) == (v["fecn"], v["becn"], v["udp_src_port"])
    assert f["ipv6_flow_label"] == (v["flow_label"] if ipv6 else 0)
    assert f["ipv4_identification"] == (0 if ipv6 else v["identification"])
    headers = rules.OPCODES[opcode].headers
    assert f["reth_va"] == (v["va"] if "RETH" in headers else 0)
    assert f["atomic_compare"] == (v["compare"] if "ATOMIC_ETH" in headers else 0)
    assert f["aeth_msn"] == (v["msn"] if "AETH" in headers else 0)
    assert f["imm"] == (v["imm"] if "IMM" in headers else 0)
    assert f["deth_src_qp"] == (v["src_qp"] if "DETH" in headers else 0)
    assert verdict.payload == spec.payload
    assert f["payload_len"] == len(spec.payload)
    assert f["pad_count"] == (-len(spec.payload)) & 3


@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
def test_rules_icrc_matches_scapy(ipv6):
    """The rules' ICRC (written from Annex A17) equals scapy's on frames of
    every opcode, with random values in the masked fields."""
    rng = random.Random(SEED + ipv6)
    for _ in range(200):
        spec = spec_for(rng, rng.choice(sorted(rules.OPCODES)), ipv6)
        frame = frames.frame_bytes(spec)
        packet = frame[rules.ETH_HEADER_LEN :]
        assert packet[-4:] == rules.icrc(packet[:-4], ipv6)


@pytest.mark.parametrize("name", sorted(frames.CORRUPTIONS))
def test_corruption_provokes_its_reason(name):
    """Each corruption class yields the verdict it is declared with, on
    frames of random opcodes over IPv4 and (where it applies) IPv6."""
    expected, corrupt, applies_to_ipv6 = frames.CORRUPTIONS[name]
    rng = random.Random(f"{SEED}-{name}")
    for ipv6 in [False, True] if applies_to_ipv6 else [False]:
        for _ in range(100):
            spec = spec_for(rng, rng.choice(sorted(rules.OPCODES)), ipv6)
            assert rules.decode(corrupt(spec, rng)).reason == expected


def test_decoder_rejects_a_flipped_icrc_bit_anywhere():
    """Every single-bit flip of a frame's ICRC-covered, unmasked bytes is an
    ICRC drop or a header check's drop, never an accept."""
    rng = random.Random(SEED)
    spec = frames.random_spec(rng, 0x0A, False, 24)
    frame = frames.frame_bytes(spec)
    masked_ipv4 = {15, 22, 24, 25, 40, 41, 46}  # TOS, TTL, checksum, UDP checksum, BTH byte 4
    for at in range(rules.ETH_HEADER_LEN, len(frame)):
        if at in masked_ipv4:
            continue
        flipped = bytearray(frame)
        flipped[at] ^= 0x01
        assert rules.decode(bytes(flipped)).reason != Drop.ACCEPTED, at
