"""RC responder rules, written from the InfiniBand specification as a second
opinion: the oracle of the responder bench.

What: `Responder`, a model of the responder side of InfiniBand Reliable
Connection QPs. `receive(frame)` decodes one Ethernet frame with
`roce_rules.decode` and says what the responder must do with it (`Step`:
the `Outcome`, the DMA writes into host memory at physical addresses after
`mr_rules` translation, which it applies to the memory it was given, the
DMA reads, the response packets, the receive CQEs, whether the QP moved to
ERR), keeping what the next frame is judged with: expected PSN, MSN, the
message in progress, the receive WQEs, the READ/atomic resources.

Why: the cocotb bench feeds hostile RoCEv2 requests (good ICRC, mutated
headers) into the RTL core and checks it against these rules, which share
nothing with the project's Rust model, so a misreading common to both does
not pass unnoticed.

Sources: InfiniBand Architecture Specification Vol. 1: 9.4 (operations and
their packet sequences), 9.6 (a packet of another transport is silently
dropped), 9.7.1 (24-bit PSNs, the half-space duplicate window), 9.7.4
(acknowledgements, coalescing), 9.7.5 (responder: PSN, opcode sequence and
length checks, duplicates, the READ/atomic resources of 9.7.5.1.3, MSN,
NAK codes), 9.9.3 (responder error classes), 10.3 (a QP in Error flushes
its WQEs), 10.6 (memory protection, via `mr_rules`); compliance statements
by their Release 1.2.1 numbers: C9-88 (a zero-length RDMA names no valid
R_Key), C9-92 (payload length per packet), C9-94 (RDMA length at most
2^31), C9-105 (a duplicate SEND/WRITE is acknowledged again), C9-148 (the
MSN counts a READ when executed). CQE status names are libibverbs'.

What a bench may accept besides the model's exact responses: coalesced
ACKs (9.7.4: each ACK the model lists covered by an ACK of that PSN or a
later one, sent no earlier; extra ACKs of executed PSNs allowed); any AETH
credit field (ACK syndrome bits 4:0); DMA split differently (compare bytes
per address, not records); READ data read at transmit time. Each DESIGN
CHOICE marks a reading where the spec leaves room: avoid the case or accept
the alternative it names. Not modelled: NIC-level checks (addresses,
P_Key), RTR, SRQ, multi-SGE WQEs, memory windows, CQ overflow.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

import mr_rules
import roce_rules
from mr_rules import Access, Status

PSN_MASK = (1 << 24) - 1
MASK64 = (1 << 64) - 1
MAX_MESSAGE = 1 << 31  # C9-94

# AETH syndromes (9.3, AETH; 9.7.5 for the NAK codes). DESIGN CHOICE: an ACK's credit field is
# 0b11111 ("invalid": no end-to-end credits, as rxe); a bench may compare
# only bits 7:5 of an ACK syndrome.
ACK = 0x1F
RNR_NAK = 0x20  # | the QP's 5-bit minimum RNR timer code
NAK_PSN_SEQUENCE = 0x60
NAK_INVALID_REQUEST = 0x61
NAK_REMOTE_ACCESS = 0x62
NAK_REMOTE_OPERATIONAL = 0x63

OP_ACKNOWLEDGE, OP_ATOMIC_ACKNOWLEDGE = 0x11, 0x12
OP_READ_FIRST, OP_READ_MIDDLE, OP_READ_LAST, OP_READ_ONLY = 0x0D, 0x0E, 0x0F, 0x10
OP_CMP_SWAP = 0x13


class Outcome(enum.Enum):
    """What the responder did with one request packet."""

    EXECUTED = "executed"
    DUPLICATE = "duplicate"
    NAK_PSN_SEQUENCE = "nak psn sequence"
    NAK_INVALID_REQUEST = "nak invalid request"
    NAK_REMOTE_ACCESS = "nak remote access"
    NAK_RNR = "nak rnr"
    DROPPED = "dropped"
    # Beyond the bench's seven: a receive WQE whose L_Key refuses a SEND's
    # bytes (9.9.3 class A, local protection / malformed WQE): NAK remote
    # operational error, QP to ERR, the WQE completes with LOC_PROT_ERR.
    NAK_REMOTE_OPERATIONAL = "nak remote operational"


@dataclass
class RecvWqe:
    wr_id: int
    lkey: int
    va: int
    length: int  # one SGE


@dataclass
class Write:  # a DMA write into host memory (physical address)
    phys: int
    data: bytes


@dataclass
class Read:  # a DMA read the responder makes (READ data, atomic operand)
    phys: int
    length: int


@dataclass
class ReceiveCqe:
    qpn: int
    wr_id: int
    status: str  # SUCCESS, LOC_LEN_ERR, LOC_PROT_ERR, WR_FLUSH_ERR
    opcode: str  # RECV, RECV_RDMA_WITH_IMM
    byte_len: int
    imm: int | None


@dataclass
class Response:  # ACK/NAK (0x11), READ response (0x0D..0x10), atomic ACK (0x12)
    opcode: int
    psn: int
    syndrome: int | None
    msn: int | None
    payload: bytes = b""
    orig: int | None = None


@dataclass
class Step:
    outcome: Outcome
    writes: list[Write] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    cqes: list[ReceiveCqe] = field(default_factory=list)
    qp_error: bool = False  # this packet moved the QP to ERR


@dataclass
class QpConfig:
    qpn: int
    pd: int
    access: Access  # the QP's remote access enables
    mtu: int
    epsn: int
    msn: int = 0
    max_dest_rd_atomic: int = 3
    dest_qpn: int = 0
    min_rnr_timer: int = 0  # the RNR NAK's 5-bit timer code (beyond the bench's fields)


class Memory(Protocol):
    def read(self, phys: int, length: int) -> bytes: ...
    def write(self, phys: int, data: bytes) -> None: ...


class ByteMemory:
    """Sparse host memory for tests: bytes never written read as zero."""

    def __init__(self) -> None:
        self.cells: dict[int, int] = {}

    def read(self, phys: int, length: int) -> bytes:
        return bytes(self.cells.get(phys + i, 0) for i in range(length))

    def write(self, phys: int, data: bytes) -> None:
        self.cells.update((phys + i, byte) for i, byte in enumerate(data))


@dataclass(frozen=True)
class _Op:
    kind: str  # SEND, WRITE, READ, ATOMIC
    first: bool
    last: bool
    imm: bool = False
    invalidate: bool = False


_FIRST, _MIDDLE, _LAST, _ONLY = (True, False), (False, False), (False, True), (True, True)
#: The RC request opcodes (9.2 table, 9.4 sequences). Whatever else the
#: parser accepts (RC responses, UC, UD, CNP) is not the responder's (9.6).
REQUEST_OPS: dict[int, _Op] = {
    0x00: _Op("SEND", *_FIRST), 0x01: _Op("SEND", *_MIDDLE), 0x02: _Op("SEND", *_LAST),
    0x03: _Op("SEND", *_LAST, imm=True), 0x04: _Op("SEND", *_ONLY), 0x05: _Op("SEND", *_ONLY, imm=True),
    0x16: _Op("SEND", *_LAST, invalidate=True), 0x17: _Op("SEND", *_ONLY, invalidate=True),
    0x06: _Op("WRITE", *_FIRST), 0x07: _Op("WRITE", *_MIDDLE), 0x08: _Op("WRITE", *_LAST),
    0x09: _Op("WRITE", *_LAST, imm=True), 0x0A: _Op("WRITE", *_ONLY), 0x0B: _Op("WRITE", *_ONLY, imm=True),
    0x0C: _Op("READ", *_ONLY), 0x13: _Op("ATOMIC", *_ONLY), 0x14: _Op("ATOMIC", *_ONLY),
}  # fmt: skip
#: The QP's remote access enable each operation needs.
_QP_RIGHT = {"WRITE": Access.REMOTE_WRITE, "READ": Access.REMOTE_READ, "ATOMIC": Access.REMOTE_ATOMIC}


def read_packets(length: int, mtu: int) -> int:
    """PSNs a READ of `length` bytes takes: one per response packet (9.7.1)."""
    return max(1, -(-length // mtu))


@dataclass
class _Message:  # the SEND or WRITE in progress (FIRST .. LAST)
    kind: str
    offset: int = 0
    va: int = 0
    rkey: int = 0
    dma_len: int = 0


@dataclass
class _Resource:  # a READ/atomic resource (9.7.5.1.3): answers its duplicates
    kind: str
    psn: int
    npsn: int
    va: int = 0
    rkey: int = 0
    length: int = 0
    orig: int = 0

    def holds(self, psn: int) -> bool:
        return (psn - self.psn) & PSN_MASK < self.npsn


@dataclass
class _Qp:
    cfg: QpConfig
    epsn: int
    msn: int
    state: str = "RTS"
    nak_sent: bool = False
    message: _Message | None = None
    rq: deque[RecvWqe] = field(default_factory=deque)
    resources: deque[_Resource] = field(default_factory=deque)


class Responder:
    """The responder of every QP added, over one MR table and host memory."""

    #: DESIGN CHOICE (9.4 SEND with Invalidate): at the message's end the
    #: IETH's R_Key is invalidated when it names a valid MR of the QP's PD;
    #: a key naming none is ignored (the spec's error for it is not modelled:
    #: do not send one). The RTL documents a plain SEND: False models that.
    INVALIDATE_ON_SEND = True

    def __init__(self, mrs: mr_rules.MrTable, memory: Memory) -> None:
        self.mrs, self.memory = mrs, memory
        self.qps: dict[int, _Qp] = {}

    def add_qp(self, cfg: QpConfig) -> None:
        self.qps[cfg.qpn] = _Qp(cfg, cfg.epsn & PSN_MASK, cfg.msn & PSN_MASK)

    def post_recv(self, qpn: int, wqe: RecvWqe) -> None:
        # DESIGN CHOICE: a post to a QP in ERR is left out (its WR_FLUSH_ERR
        # completion is the host interface's business, not the responder's).
        if self.qps[qpn].state == "RTS":
            self.qps[qpn].rq.append(wqe)

    def state(self, qpn: int) -> str:
        return self.qps[qpn].state

    def receive(self, frame: bytes) -> Step:
        step = Step(Outcome.DROPPED)
        verdict = roce_rules.decode(frame)
        f = verdict.fields
        op = REQUEST_OPS.get(f["opcode"]) if verdict.accepted else None
        qp = self.qps.get(f["dest_qp"]) if op else None
        if qp is None or qp.state != "RTS":  # parser drop, not an RC request, no such QP, QP in ERR
            return step
        distance = (f["psn"] - qp.epsn) & PSN_MASK
        if distance == 0:
            qp.nak_sent = False
            self._in_order(qp, op, f, verdict.payload, step)
        elif distance < 1 << 23:
            # 9.7.5: ahead (a packet was lost): one NAK PSN sequence error
            # with the expected PSN, then silence until that PSN arrives.
            if not qp.nak_sent:
                qp.nak_sent = True
                self._respond(step, OP_ACKNOWLEDGE, qp.epsn, NAK_PSN_SEQUENCE, qp.msn)
                step.outcome = Outcome.NAK_PSN_SEQUENCE
        else:  # 9.7.1: the 2^23 PSNs behind the expected one are duplicates
            self._duplicate(qp, op, f, step)
        return step

    # ---- in-order requests: the checks, then execution (9.7.5)

    def _in_order(self, qp: _Qp, op: _Op, f: dict[str, int], payload: bytes, step: Step) -> None:
        cfg, msg, right = qp.cfg, qp.message, _QP_RIGHT.get(op.kind)
        # DESIGN CHOICE (the order of the checks when several fail; IBA gives
        # none): sequence, lengths, QP rights, alignment, resources, RNR, then
        # the memory checks of execution. All but RNR are invalid requests:
        invalid = (
            # 9.4: FIRST/ONLY (READ, atomics) between messages, MIDDLE/LAST
            # continuing a message of their kind;
            not (msg is None if op.first else msg is not None and msg.kind == op.kind)
            or not _lengths_ok(op, len(payload), cfg.mtu, f, msg)
            # an operation the QP's access enables refuse (libibverbs'
            # REM_INV_REQ_ERR: "not supported by this receive queue"; not
            # an R_Key violation);
            or (right is not None and not cfg.access & right)
            # a misaligned atomic (9.4: 8-byte aligned VA);
            or (op.kind == "ATOMIC" and f["atomic_va"] % 8 != 0)
            # a READ/atomic with no resource for it (libibverbs:
            # "insufficient buffering to receive a new RDMA or Atomic").
            or (op.kind in ("READ", "ATOMIC") and cfg.max_dest_rd_atomic == 0)
        )
        if invalid:
            return self._fatal(qp, step, f["psn"], NAK_INVALID_REQUEST, Outcome.NAK_INVALID_REQUEST)
        if ((op.kind == "SEND" and op.first) or (op.kind == "WRITE" and op.imm)) and not qp.rq:
            # 9.7.5: receiver not ready. DESIGN CHOICE: the RNR NAK counts as
            # the one NAK, so the packets behind it (now ahead) drop silently
            # until the retry, as after a PSN sequence NAK.
            qp.nak_sent = True
            self._respond(step, OP_ACKNOWLEDGE, f["psn"], RNR_NAK | (cfg.min_rnr_timer & 0x1F), qp.msn)
            step.outcome = Outcome.NAK_RNR
            return
        execute = {"SEND": self._send, "WRITE": self._write, "READ": self._read, "ATOMIC": self._atomic}
        execute[op.kind](qp, op, f, payload, step)

    def _send(self, qp: _Qp, op: _Op, f: dict[str, int], payload: bytes, step: Step) -> None:
        """9.4 SEND: the bytes go into the head receive WQE at the message's
        offset through its L_Key (local write); the WQE stays at the head
        until LAST/ONLY completes it."""
        wqe, n = qp.rq[0], len(payload)
        offset = 0 if op.first else qp.message.offset
        # DESIGN CHOICE: the length before the L_Key (the RTL documents the
        # L_Key of the part that fits first).
        if offset + n > wqe.length:  # larger than the buffer: 9.9.3 class C
            return self._fatal(qp, step, f["psn"], NAK_INVALID_REQUEST, Outcome.NAK_INVALID_REQUEST, "LOC_LEN_ERR")
        segments = self._translate(qp, wqe.lkey, wqe.va + offset, n, Access.LOCAL_WRITE, remote=False)
        if segments is None:  # the WQE's L_Key refuses: 9.9.3 class A
            outcome = Outcome.NAK_REMOTE_OPERATIONAL
            return self._fatal(qp, step, f["psn"], NAK_REMOTE_OPERATIONAL, outcome, "LOC_PROT_ERR")
        self._place(segments, payload, step)
        qp.message = _Message("SEND", offset + n)
        if op.last:
            qp.rq.popleft()
            qp.message = None
            if op.invalidate and self.INVALIDATE_ON_SEND:
                self._invalidate(qp, f["ieth_rkey"])
            imm = f["imm"] if op.imm else None
            step.cqes.append(ReceiveCqe(qp.cfg.qpn, wqe.wr_id, "SUCCESS", "RECV", offset + n, imm))
        self._packet_done(qp, op, f, step)

    def _write(self, qp: _Qp, op: _Op, f: dict[str, int], payload: bytes, step: Step) -> None:
        """9.4 RDMA WRITE: the RETH of FIRST/ONLY names the whole message;
        each packet's bytes land at VA + offset through the R_Key."""
        msg = _Message("WRITE", 0, f["reth_va"], f["reth_rkey"], f["reth_dma_len"]) if op.first else qp.message
        # DESIGN CHOICE: the whole DMA length is checked at FIRST/ONLY (as rxe
        # and the RTL), so a message that does not fit writes nothing; each
        # packet is translated again. C9-88: zero length checks no R_Key.
        if op.first and self._translate(qp, msg.rkey, msg.va, msg.dma_len, Access.REMOTE_WRITE) is None:
            return self._fatal(qp, step, f["psn"], NAK_REMOTE_ACCESS, Outcome.NAK_REMOTE_ACCESS)
        segments = self._translate(qp, msg.rkey, msg.va + msg.offset, len(payload), Access.REMOTE_WRITE)
        if segments is None:
            return self._fatal(qp, step, f["psn"], NAK_REMOTE_ACCESS, Outcome.NAK_REMOTE_ACCESS)
        self._place(segments, payload, step)
        msg.offset += len(payload)
        qp.message = None if op.last else msg
        if op.last and op.imm:
            wqe = qp.rq.popleft()
            step.cqes.append(ReceiveCqe(qp.cfg.qpn, wqe.wr_id, "SUCCESS", "RECV_RDMA_WITH_IMM", msg.dma_len, f["imm"]))
        self._packet_done(qp, op, f, step)

    def _read(self, qp: _Qp, op: _Op, f: dict[str, int], payload: bytes, step: Step) -> None:
        """9.4 RDMA READ: the RETH range through the R_Key (remote read; none
        when zero-length, C9-88), answered at once."""
        va, rkey, length = f["reth_va"], f["reth_rkey"], f["reth_dma_len"]
        if self._translate(qp, rkey, va, length, Access.REMOTE_READ) is None:
            return self._fatal(qp, step, f["psn"], NAK_REMOTE_ACCESS, Outcome.NAK_REMOTE_ACCESS)
        qp.msn = (qp.msn + 1) & PSN_MASK  # C9-148: counted when executed
        npsn = read_packets(length, qp.cfg.mtu)
        # DESIGN CHOICE: every READ is answered at once, so the model never
        # holds more than the resources allow; the oldest resource leaves.
        self._push(qp, _Resource("READ", f["psn"], npsn, va, rkey, length))
        self._read_responses(qp, f["psn"], va, rkey, length, step)
        qp.epsn = (qp.epsn + npsn) & PSN_MASK
        step.outcome = Outcome.EXECUTED

    def _atomic(self, qp: _Qp, op: _Op, f: dict[str, int], payload: bytes, step: Step) -> None:
        """9.4 atomics: the aligned 8 bytes through the R_Key (remote atomic),
        the original value back in the atomic ACK."""
        segments = self._translate(qp, f["atomic_rkey"], f["atomic_va"], 8, Access.REMOTE_ATOMIC)
        if segments is None:
            return self._fatal(qp, step, f["psn"], NAK_REMOTE_ACCESS, Outcome.NAK_REMOTE_ACCESS)
        (word,) = segments  # an aligned 8-byte word never crosses a page
        step.reads.append(Read(word.phys, 8))
        # DESIGN CHOICE: the word in host memory is little-endian (IBA leaves
        # host byte order to the host; the RTL's atomic unit documents
        # little-endian); on the wire operands and result are big-endian.
        orig = int.from_bytes(self.memory.read(word.phys, 8), "little")
        if f["opcode"] == OP_CMP_SWAP:
            new = f["atomic_swap_add"] if orig == f["atomic_compare"] else orig
        else:
            new = (orig + f["atomic_swap_add"]) & MASK64
        # DESIGN CHOICE: the result is always written back (a failed compare
        # writes the original: memory unchanged, as IBA asks, but written, as
        # a read-modify-write engine does); a bench may accept no write then.
        self._place([word], new.to_bytes(8, "little"), step)
        qp.msn = (qp.msn + 1) & PSN_MASK
        self._push(qp, _Resource("ATOMIC", f["psn"], 1, orig=orig))
        self._respond(step, OP_ATOMIC_ACKNOWLEDGE, f["psn"], ACK, qp.msn, orig=orig)
        qp.epsn = (qp.epsn + 1) & PSN_MASK
        step.outcome = Outcome.EXECUTED

    # ---- duplicates (9.7.5; the resources of 9.7.5.1.3)

    def _duplicate(self, qp: _Qp, op: _Op, f: dict[str, int], step: Step) -> None:
        psn = f["psn"]
        if op.kind in ("SEND", "WRITE"):
            # C9-105: not executed again, acknowledged again. DESIGN CHOICE:
            # always (AckReq or not), with the newest PSN (expected - 1) and
            # the current MSN; a bench may accept any PSN from the
            # duplicate's to expected - 1.
            self._respond(step, OP_ACKNOWLEDGE, qp.epsn - 1, ACK, qp.msn)
            step.outcome = Outcome.DUPLICATE
            return
        # The newest resource holding the PSN; none (evicted, never executed)
        # or one of the other kind: dropped (9.9.3 class D).
        res = next((r for r in reversed(qp.resources) if r.holds(psn)), None)
        if res is None or res.kind != op.kind:
            return
        if op.kind == "ATOMIC":
            # Never executed twice: the saved original value. DESIGN CHOICE:
            # with the current MSN, not the one first sent.
            self._respond(step, OP_ATOMIC_ACKNOWLEDGE, psn, ACK, qp.msn, orig=res.orig)
            step.outcome = Outcome.DUPLICATE
            return
        va, rkey, length = f["reth_va"], f["reth_rkey"], f["reth_dma_len"]
        # The retried READ is the recorded one or a subset (same R_Key, inside
        # its range). DESIGN CHOICE: also when it asks for zero bytes (C9-88
        # spares a zero-length access the R_Key check, but here key and VA
        # only say which request is retried, and a retry carries the
        # recorded ones; the RTL reads it so, which this bench found), and
        # its packets fit in the recorded PSNs from its own on.
        inside = rkey == res.rkey and va >= res.va and va + length <= res.va + res.length
        if not inside or read_packets(length, qp.cfg.mtu) > res.npsn - ((psn - res.psn) & PSN_MASK):
            return
        # Re-executed from memory, the R_Key checked again (the MR may have
        # changed; a refusal as a new READ's). DESIGN CHOICE: current MSN.
        if self._translate(qp, rkey, va, length, Access.REMOTE_READ) is None:
            return self._fatal(qp, step, psn, NAK_REMOTE_ACCESS, Outcome.NAK_REMOTE_ACCESS)
        self._read_responses(qp, psn, va, rkey, length, step)
        step.outcome = Outcome.DUPLICATE

    # ---- helpers

    def _read_responses(self, qp: _Qp, psn: int, va: int, rkey: int, length: int, step: Step) -> None:
        """READ response packets of an MTU each (the last one the rest) from
        the request's PSN; an AETH on FIRST, LAST and ONLY (9.2 table)."""
        mtu, npsn = qp.cfg.mtu, read_packets(length, qp.cfg.mtu)
        for i in range(npsn):
            segments = self._translate(qp, rkey, va + i * mtu, min(mtu, length - i * mtu), Access.REMOTE_READ)
            step.reads += [Read(s.phys, s.length) for s in segments]
            data = b"".join(self.memory.read(s.phys, s.length) for s in segments)
            if npsn == 1:
                opcode = OP_READ_ONLY
            else:
                opcode = OP_READ_FIRST if i == 0 else OP_READ_LAST if i == npsn - 1 else OP_READ_MIDDLE
            aeth = opcode != OP_READ_MIDDLE
            syndrome, msn = (ACK, qp.msn) if aeth else (None, None)
            step.responses.append(Response(opcode, (psn + i) & PSN_MASK, syndrome, msn, data))

    def _packet_done(self, qp: _Qp, op: _Op, f: dict[str, int], step: Step) -> None:
        """An executed SEND/WRITE packet: the expected PSN moves on, the MSN
        counts a completed message (9.7.5), and AckReq asks for an ACK of
        this PSN with the MSN after it (9.7.4). Without AckReq the model
        sends nothing (the RTL may ACK anyway, or coalesce)."""
        qp.epsn = (qp.epsn + 1) & PSN_MASK
        if op.last:
            qp.msn = (qp.msn + 1) & PSN_MASK
        if f["ack_req"]:
            self._respond(step, OP_ACKNOWLEDGE, f["psn"], ACK, qp.msn)
        step.outcome = Outcome.EXECUTED

    def _fatal(self, qp: _Qp, step: Step, psn: int, syndrome: int, outcome: Outcome, head: str | None = None) -> None:
        """An error that NAKs and moves the QP to ERR (9.9.3 classes A, C):
        the NAK with the MSN before the packet, nothing of the packet
        written, every receive WQE flushed (10.3); `head` is the status of
        the head WQE the failing SEND used. DESIGN CHOICE: otherwise a WQE of
        a SEND in progress is flushed like the others (WR_FLUSH_ERR)."""
        self._respond(step, OP_ACKNOWLEDGE, psn, syndrome, qp.msn)
        step.outcome, step.qp_error = outcome, True
        qp.state, qp.message = "ERR", None
        for i, wqe in enumerate(qp.rq):
            step.cqes.append(ReceiveCqe(qp.cfg.qpn, wqe.wr_id, (i == 0 and head) or "WR_FLUSH_ERR", "RECV", 0, None))
        qp.rq.clear()

    def _translate(
        self, qp: _Qp, key: int, va: int, length: int, need: Access, remote: bool = True
    ) -> list[mr_rules.Segment] | None:
        """The segments of an allowed access, None for a refused one; zero
        bytes touch nothing and check nothing (C9-88)."""
        if length == 0:
            return []
        answer = self.mrs.translate(key, qp.cfg.pd, va, length, need, remote)
        return answer.segments if answer.status == Status.OK else None

    def _place(self, segments: list[mr_rules.Segment], data: bytes, step: Step) -> None:
        for seg in segments:
            chunk, data = data[: seg.length], data[seg.length :]
            self.memory.write(seg.phys, chunk)
            step.writes.append(Write(seg.phys, chunk))

    def _push(self, qp: _Qp, res: _Resource) -> None:
        qp.resources.append(res)
        while len(qp.resources) > max(1, qp.cfg.max_dest_rd_atomic):
            qp.resources.popleft()

    def _invalidate(self, qp: _Qp, rkey: int) -> None:
        mr = self.mrs.entries.get(rkey >> 8)
        if mr is not None and mr.state == mr_rules.State.VALID and mr.key == rkey and mr.pd == qp.cfg.pd:
            mr.state = mr_rules.State.INVALIDATED

    @staticmethod
    def _respond(step: Step, opcode: int, psn: int, syndrome: int, msn: int, orig: int | None = None) -> None:
        step.responses.append(Response(opcode, psn & PSN_MASK, syndrome, msn, b"", orig))


def _lengths_ok(op: _Op, n: int, mtu: int, f: dict[str, int], msg: _Message | None) -> bool:
    """C9-92: FIRST/MIDDLE carry one MTU exactly, LAST 1..MTU, ONLY 0..MTU;
    C9-94: a RETH asks for at most 2^31 bytes; a WRITE's packets add up to
    its DMA length (LAST/ONLY carry what is left, FIRST/MIDDLE leave some).
    DESIGN CHOICE: the pad count is not checked (as the parser)."""
    if op.kind in ("SEND", "WRITE"):
        if not (n <= mtu if op.first and op.last else 1 <= n <= mtu if op.last else n == mtu):
            return False
    if op.kind in ("WRITE", "READ") and op.first and f["reth_dma_len"] > MAX_MESSAGE:
        return False
    if op.kind == "WRITE":
        remaining = f["reth_dma_len"] if op.first else msg.dma_len - msg.offset
        return n == remaining if op.last else remaining > mtu
    return True
