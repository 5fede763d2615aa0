"""The far end of a core's QPs, played by a bench: an RC requester that
makes up messages, numbers their packets, goes back to the responder's
expected PSN when asked (Go-Back-N), and a mutator that turns a good packet
into a hostile one whose ICRC is still right.

What:
- `Target`s: the MRs a QP's messages aim at (WRITE, READ, atomics) and its
  receive buffers; `PeerQp.next_packet(rng)` gives the next packet of the
  QP's stream (a new message when the last one is out), `resync(epsn)`
  goes back to `epsn` and sends the originals from there again.
- `mutate(packet, rng, ...)`: one of the mutation classes (opcode, PSN,
  QPN, R_Key, VA, DMA length, pad, atomic alignment, payload cut short or
  grown past the MTU, extension headers cut, a replay of an older packet,
  a response opcode with a random AETH aimed at the requester side).
- `Packet.frame(qpn)`: the bytes (request_frames).

Why: the hostile-traffic and system benches need traffic a real requester
would send, and the same traffic broken in every field the responder
checks; the expectations come from responder_rules, not from here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import request_frames as rf
from responder_rules import read_packets

PSN_MASK = (1 << 24) - 1

SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY, SEND_ONLY_IMM = range(0x00, 0x06)
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM, WRITE_ONLY, WRITE_ONLY_IMM = range(0x06, 0x0C)
READ_REQUEST, CMP_SWAP, FETCH_ADD = 0x0C, 0x13, 0x14
CONSUMING_LAST = (SEND_LAST, SEND_LAST_IMM, SEND_ONLY, SEND_ONLY_IMM, WRITE_LAST_IMM, WRITE_ONLY_IMM)
RESPONSE_OPCODES = (0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12)
REQUEST_OPCODES = (*range(0x00, 0x0D), CMP_SWAP, FETCH_ADD, 0x16, 0x17)


@dataclass
class Packet:
    opcode: int
    dest_qp: int
    psn: int
    extension: bytes = b""
    payload: bytes = b""
    ack_req: bool = False
    npsn: int = 1
    pad_count: int | None = None
    mutation: str | None = None

    def frame(self, src: rf.Endpoint, dst: rf.Endpoint) -> bytes:
        return rf.frame(
            src, dst, self.opcode, self.dest_qp, self.psn, self.extension, self.payload,
            ack_req=self.ack_req, pad_count=self.pad_count,
        )  # fmt: skip


@dataclass
class Target:
    """A registered region a QP's messages use: its R_Key (or L_Key), VA
    range."""

    key: int
    va: int
    length: int


@dataclass
class PeerQp:
    qpn: int
    mtu: int
    write: Target
    read: Target
    atomic: Target
    recv_capacity: int  # bytes of each receive buffer the bench posts
    psn: int = 0  # the PSN of the next new packet
    #: the packets generated and not known executed, in PSN order, and the
    #: index of the next one to send
    stream: list[Packet] = field(default_factory=list)
    cursor: int = 0
    #: weights of WRITE, WRITE with immediate, SEND, READ, atomic messages
    mix: tuple[int, ...] = (4, 1, 3, 2, 1)
    #: receive WQEs the responder has for new messages (IBA's end-to-end
    #: credits, kept by the bench): a SEND or WRITE with immediate only
    #: while there is one.
    credits: int = 0

    @property
    def history(self) -> list[Packet]:
        """The packets sent since the last resync."""
        return self.stream[: self.cursor]

    def next_packet(self, rng: random.Random) -> Packet:
        if self.cursor == len(self.stream):
            self.stream += self._message(rng)
        self.cursor += 1
        return self.stream[self.cursor - 1]

    def resync(self, epsn: int) -> None:
        """Go back (or forward) to the responder's expected PSN: the
        packets from there are sent again, then new messages. A PSN the
        stream does not hold (the responder took a hostile READ's longer
        range) starts a new stream there."""
        at = next((i for i, p in enumerate(self.stream) if p.psn == epsn), None)
        if at is None:
            self.restart(epsn)
        else:
            del self.stream[:at]
            self.cursor = 0

    def holding_wqes(self) -> int:
        """Messages in the stream that will take a receive WQE when their
        last packet executes (SEND, WRITE with immediate)."""
        return sum(p.opcode in CONSUMING_LAST for p in self.stream)

    def restart(self, epsn: int) -> None:
        """A new stream from `epsn` (also a new QP behind the number)."""
        self.psn, self.stream, self.cursor = epsn, [], 0

    def _packets(self, first, middle, last, only, length: int, head: bytes, tail: bytes, rng) -> list[Packet]:
        payload = rng.randbytes(length)
        chunks = [payload[i : i + self.mtu] for i in range(0, length, self.mtu)] or [b""]
        out = []
        for i, chunk in enumerate(chunks):
            if len(chunks) == 1:
                opcode, ext = only, head + tail
            elif i == 0:
                opcode, ext = first, head
            elif i == len(chunks) - 1:
                opcode, ext = last, tail
            else:
                opcode, ext = middle, b""
            is_last = i == len(chunks) - 1
            out.append(Packet(opcode, self.qpn, self._take(1), ext, chunk, ack_req=is_last or rng.random() < 0.1))
        return out

    def _take(self, n: int) -> int:
        psn, self.psn = self.psn, (self.psn + n) & PSN_MASK
        return psn

    def _message(self, rng: random.Random) -> list[Packet]:
        mix = self.mix if self.credits else (self.mix[0], 0, 0, *self.mix[3:])
        kind = rng.choices(("write", "write_imm", "send", "read", "atomic"), mix)[0]
        self.credits -= kind in ("write_imm", "send")
        if kind in ("write", "write_imm"):
            t = self.write
            length = rng.choice([0, 1, rng.randrange(1, self.mtu + 1), rng.randrange(1, 3 * self.mtu + 1)])
            va = t.va + placement(rng, t.length, length)
            imm = kind == "write_imm"
            tail = rf.immediate(rng.getrandbits(32)) if imm else b""
            last, only = (WRITE_LAST_IMM, WRITE_ONLY_IMM) if imm else (WRITE_LAST, WRITE_ONLY)
            head = rf.reth(va, t.key, length)
            return self._packets(WRITE_FIRST, WRITE_MIDDLE, last, only, length, head, tail, rng)
        if kind == "send":
            length = rng.choice([0, rng.randrange(1, self.mtu + 1), rng.randrange(1, self.recv_capacity + 1)])
            imm = rng.random() < 0.3
            tail = rf.immediate(rng.getrandbits(32)) if imm else b""
            last, only = (SEND_LAST_IMM, SEND_ONLY_IMM) if imm else (SEND_LAST, SEND_ONLY)
            return self._packets(SEND_FIRST, SEND_MIDDLE, last, only, length, b"", tail, rng)
        if kind == "read":
            t = self.read
            length = rng.choice([0, rng.randrange(1, self.mtu + 1), rng.randrange(1, 4 * self.mtu + 1)])
            va = t.va + placement(rng, t.length, length)
            npsn = read_packets(length, self.mtu)
            return [Packet(READ_REQUEST, self.qpn, self._take(npsn), rf.reth(va, t.key, length), ack_req=True, npsn=npsn)]
        t = self.atomic
        va = t.va + 8 * rng.randrange(0, t.length // 8)
        opcode = rng.choice((CMP_SWAP, FETCH_ADD))
        compare = rng.getrandbits(64) if rng.random() < 0.5 else 0
        ext = rf.atomic_eth(va, t.key, rng.getrandbits(64), compare)
        return [Packet(opcode, self.qpn, self._take(1), ext, ack_req=True)]


def placement(rng: random.Random, room: int, length: int) -> int:
    """Where a message of `length` bytes starts in a region of `room`: at
    random, or one time in four flush with its end."""
    return room - length if rng.random() < 0.25 else rng.randrange(0, room - length + 1)


MUTATIONS = (
    "opcode", "psn", "qpn", "rkey", "va", "dma_len", "pad", "atomic_align",
    "payload_short", "payload_long", "extension_cut", "replay", "response",
)  # fmt: skip


def mutate(packet: Packet, rng: random.Random, peer: PeerQp, qpns: list[int], keys: list[int]) -> Packet:
    """One hostile version of `packet` (its PSN and QP as sent)."""
    kind = rng.choice(MUTATIONS)
    ext = bytearray(packet.extension)
    reth_at = 0 if packet.opcode in (WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_IMM, READ_REQUEST) else None
    atomic = packet.opcode in (CMP_SWAP, FETCH_ADD)
    m = replace(packet, mutation=kind)
    if kind == "opcode":
        m.opcode = rng.choice((*REQUEST_OPCODES, rng.getrandbits(8)))
    elif kind == "psn":
        # Near the expected PSN, and at the edges of the 2^23 PSNs that
        # count as duplicates behind it (IBA 9.7.1).
        half = 1 << 23
        offsets = (-3, -2, -1, 1, 2, 3, half - 1, half, half + 1, rng.getrandbits(24))
        m.psn = (packet.psn + rng.choice(offsets)) & PSN_MASK
    elif kind == "qpn":
        m.dest_qp = rng.choice((*qpns, rng.getrandbits(24), rng.getrandbits(10)))
    elif kind in ("rkey", "va", "dma_len", "atomic_align") and (reth_at is not None or atomic):
        if kind == "rkey":
            key = rng.choice((*keys, rng.getrandbits(32), int.from_bytes(ext[8:12], "big") ^ 1 << rng.randrange(32)))
            ext[8:12] = key.to_bytes(4, "big")
        elif kind in ("va", "atomic_align"):
            va = int.from_bytes(ext[0:8], "big")
            delta = rng.randrange(1, 8) if kind == "atomic_align" else rng.choice((-1, 1, -peer.mtu, 4096, 1 << 20, 1 << 63))
            ext[0:8] = ((va + delta) % (1 << 64)).to_bytes(8, "big")
        elif not atomic:
            dma_len = int.from_bytes(ext[12:16], "big")
            delta = rng.choice((-1, 1, peer.mtu, -peer.mtu, rng.getrandbits(32)))
            ext[12:16] = ((dma_len + delta) % (1 << 32)).to_bytes(4, "big")
        m.extension = bytes(ext)
    elif kind == "pad":
        m.pad_count = rng.choice([p for p in range(4) if p != (-len(packet.payload) & 3)])
    elif kind == "payload_short" and packet.payload:
        m.payload = packet.payload[: rng.randrange(0, len(packet.payload))]
    elif kind == "payload_long":
        m.payload = packet.payload + rng.randbytes(rng.choice((1, 4, peer.mtu - len(packet.payload) + 1)))
    elif kind == "extension_cut" and packet.extension:
        m.extension = packet.extension[: rng.randrange(0, len(packet.extension))]
    elif kind == "replay" and peer.history:
        old = rng.choice(peer.history)
        m = replace(old, mutation=kind)
    elif kind == "response":
        m.opcode = rng.choice(RESPONSE_OPCODES)
        m.extension = rf.aeth(rng.getrandbits(8), rng.getrandbits(24)) + (
            rng.randbytes(8) if m.opcode == 0x12 else b""
        )
        m.payload = rng.randbytes(rng.randrange(0, peer.mtu + 1)) if m.opcode in (0x0D, 0x0E, 0x0F, 0x10) else b""
    else:
        m.ack_req = not packet.ack_req
        m.mutation = "ack_req"
    return m
