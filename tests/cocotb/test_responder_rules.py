"""The responder bench's oracle (responder_rules) checked on its own, without
a simulator: each responder rule on hand-made QPs, MRs and scapy-built
request frames whose answers are worked out here. If these fail, the RTL
bench would be comparing the RTL with a wrong expectation."""

import random

import pytest

import roce_frames as frames
import responder_rules as rr
from mr_rules import Access, Mr, MrTable
from responder_rules import ACK, Outcome, QpConfig, RecvWqe, Responder

PD, QPN, PEER, MTU, EPSN = 3, 0x11, 0x22, 256, 100
ALL_LOCAL = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC
QP_REMOTE = Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC
BASE, PAGES = 0x10_0000, [0x7000_0000 + 0x5000 * i for i in range(4)]  # 4 pages, scattered
RECV_BASE = 0x20_0000


class Bench:
    def __init__(self, access=QP_REMOTE, **qp):
        self.mrs, self.mem = MrTable(), rr.ByteMemory()
        self.mr = self.mrs.register(Mr(5, 0x3C, PD, BASE, 0x4000, ALL_LOCAL, 12, PAGES))
        self.recv = self.mrs.register(Mr(6, 0x01, PD, RECV_BASE, 0x1000, Access.LOCAL_WRITE, 12, [0x9000_0000], mtt_base=8))
        self.resp = Responder(self.mrs, self.mem)
        self.resp.add_qp(QpConfig(QPN, PD, access, qp.pop("mtu", MTU), qp.pop("epsn", EPSN), dest_qpn=PEER, **qp))

    def send(self, opcode, psn, payload=b"", ack_req=1, qpn=QPN, **values):
        spec = frames.random_spec(random.Random(opcode * 1000 + psn), opcode, False, 0)
        spec.payload = payload
        spec.values.update(dest_qp=qpn, psn=psn & 0xFFFFFF, ack_req=ack_req, **values)
        return self.resp.receive(frames.frame_bytes(spec))

    def host(self, va, length):
        """Bytes of the big MR at VA, read through its page list."""
        return b"".join(self.mem.read(s.phys, s.length) for s in self.mrs.segments(self.mr, va, length))

    def post(self, wr_id, length=0x1000, lkey=None):
        self.resp.post_recv(QPN, RecvWqe(wr_id, self.recv.key if lkey is None else lkey, RECV_BASE, length))


def data(n, seed=1):
    return random.Random(seed).randbytes(n)


def acks(step):
    return [(r.opcode, r.psn, r.syndrome, r.msn) for r in step.responses]


def test_in_order_write_only_is_executed_across_a_page():
    b = Bench()
    va, payload = BASE + 0xFC0, data(100)
    step = b.send(0x0A, EPSN, payload, va=va, rkey=b.mr.key, dma_len=100)
    assert step.outcome == Outcome.EXECUTED and not step.qp_error
    assert [(w.phys, len(w.data)) for w in step.writes] == [(PAGES[0] + 0xFC0, 64), (PAGES[1], 36)]
    assert b.host(va, 100) == payload
    assert acks(step) == [(0x11, EPSN, ACK, 1)]
    assert b.send(0x0A, EPSN + 1, b"x", va=va, rkey=b.mr.key, dma_len=1).outcome == Outcome.EXECUTED


def test_no_ack_without_ackreq():
    b = Bench()
    step = b.send(0x0A, EPSN, data(8), ack_req=0, va=BASE, rkey=b.mr.key, dma_len=8)
    assert step.outcome == Outcome.EXECUTED and step.responses == []


@pytest.mark.parametrize("ack_req", [0, 1])
def test_duplicate_write_is_not_executed_again_and_is_acked(ack_req):
    b = Bench()
    b.send(0x0A, EPSN, data(16), va=BASE, rkey=b.mr.key, dma_len=16)
    b.send(0x0A, EPSN + 1, data(16, 2), va=BASE + 64, rkey=b.mr.key, dma_len=16)
    step = b.send(0x0A, EPSN, data(16, 9), ack_req=ack_req, va=BASE, rkey=b.mr.key, dma_len=16)
    assert step.outcome == Outcome.DUPLICATE and step.writes == []
    assert b.host(BASE, 16) == data(16)
    assert acks(step) == [(0x11, EPSN + 1, ACK, 2)]  # the newest PSN executed, current MSN


def test_psn_ahead_one_nak_then_silence_until_in_order():
    b = Bench()
    w = dict(va=BASE, rkey=b.mr.key, dma_len=4)
    step = b.send(0x0A, EPSN + 2, b"abcd", **w)
    assert step.outcome == Outcome.NAK_PSN_SEQUENCE and acks(step) == [(0x11, EPSN, 0x60, 0)]
    assert step.writes == [] and b.resp.state(QPN) == "RTS"
    later = b.send(0x0A, EPSN + 3, b"abcd", **w)
    assert later.outcome == Outcome.DROPPED and later.responses == []
    assert b.send(0x0A, EPSN, b"abcd", **w).outcome == Outcome.EXECUTED
    assert b.send(0x0A, EPSN + 5, b"abcd", **w).outcome == Outcome.NAK_PSN_SEQUENCE  # a new episode


@pytest.mark.parametrize(
    "epsn, psn, outcome",
    [
        (EPSN, EPSN + (1 << 23) - 1, Outcome.NAK_PSN_SEQUENCE),  # the last PSN ahead
        (EPSN, EPSN - (1 << 23), Outcome.DUPLICATE),  # half the space behind is behind
        (0xFFFFFF, 0, Outcome.NAK_PSN_SEQUENCE),  # across the wrap
        (0, 0xFFFFFF, Outcome.DUPLICATE),
    ],
)
def test_psn_window_modulo_2_24(epsn, psn, outcome):
    b = Bench(epsn=epsn)
    assert b.send(0x0A, psn, b"", va=0, rkey=0, dma_len=0).outcome == outcome


@pytest.mark.parametrize(
    "fault", ["stale_key", "bounds", "pd", "mr_right", "middle_bounds_after_reregistration"]
)
def test_refused_write_naks_remote_access_writes_nothing_and_errors_the_qp(fault):
    b = Bench()
    b.post(7)
    b.post(8)
    key, va, n = b.mr.key, BASE, 16
    if fault == "stale_key":
        key ^= 1
    elif fault == "bounds":
        va = BASE + 0x4000 - 8
    elif fault == "pd":
        b.mr.pd = PD + 1
    elif fault == "mr_right":
        b.mr.access = Access.LOCAL_WRITE | Access.REMOTE_READ
    psn = EPSN
    if fault == "middle_bounds_after_reregistration":
        assert b.send(0x06, psn, data(MTU), va=va, rkey=key, dma_len=3 * MTU).outcome == Outcome.EXECUTED
        b.mr.length = MTU  # shrunk while the message is in progress
        psn += 1
        opcode, payload, extra = 0x07, data(MTU, 3), {}
    else:
        opcode, payload, extra = 0x0A, data(n, 3), dict(va=va, rkey=key, dma_len=n)
    before = b.mem.cells.copy()
    step = b.send(opcode, psn, payload, **extra)
    assert step.outcome == Outcome.NAK_REMOTE_ACCESS and step.qp_error
    assert step.writes == [] and b.mem.cells == before
    assert acks(step) == [(0x11, psn, 0x62, 0)]
    assert [(c.wr_id, c.status) for c in step.cqes] == [(7, "WR_FLUSH_ERR"), (8, "WR_FLUSH_ERR")]
    assert b.resp.state(QPN) == "ERR"
    assert b.send(0x0A, psn + 1, b"ok", va=BASE, rkey=b.mr.key, dma_len=2).outcome == Outcome.DROPPED


def test_whole_dma_length_checked_at_write_first():
    b = Bench()
    step = b.send(0x06, EPSN, data(MTU), va=BASE + 0x4000 - MTU, rkey=b.mr.key, dma_len=MTU + 1)
    assert step.outcome == Outcome.NAK_REMOTE_ACCESS and step.writes == []


def test_send_without_receive_wqe_gets_rnr_nak_and_is_retried():
    b = Bench(min_rnr_timer=0x0E)
    step = b.send(0x04, EPSN, b"hello")
    assert step.outcome == Outcome.NAK_RNR and acks(step) == [(0x11, EPSN, 0x2E, 0)]
    assert b.resp.state(QPN) == "RTS" and step.writes == [] and step.cqes == []
    assert b.send(0x04, EPSN + 1, b"next").outcome == Outcome.DROPPED  # design choice: silent after the RNR NAK
    b.post(42)
    step = b.send(0x05, EPSN, b"hello", imm=0xA1B2C3D4)
    assert step.outcome == Outcome.EXECUTED
    assert [(c.wr_id, c.status, c.opcode, c.byte_len, c.imm) for c in step.cqes] == [
        (42, "SUCCESS", "RECV", 5, 0xA1B2C3D4)
    ]
    assert b.mem.read(0x9000_0000, 5) == b"hello"


def test_write_with_immediate_needs_and_completes_a_wqe():
    b = Bench()
    w = dict(va=BASE, rkey=b.mr.key, dma_len=4, imm=0x1234)
    assert b.send(0x0B, EPSN, b"abcd", **w).outcome == Outcome.NAK_RNR
    b.post(9, length=0)  # its buffer is not used
    step = b.send(0x0B, EPSN, b"abcd", **w)
    assert step.outcome == Outcome.EXECUTED and b.host(BASE, 4) == b"abcd"
    assert [(c.wr_id, c.opcode, c.byte_len, c.imm) for c in step.cqes] == [(9, "RECV_RDMA_WITH_IMM", 4, 0x1234)]


@pytest.mark.parametrize(
    "first, second",
    [
        (None, 0x07),  # WRITE MIDDLE with no message in progress
        (None, 0x02),  # SEND LAST with none
        (0x00, 0x0A),  # a WRITE ONLY inside a SEND
        (0x00, 0x08),  # a WRITE LAST continuing a SEND
        (0x06, 0x0C),  # a READ inside a WRITE
        (0x06, 0x04),  # a SEND ONLY inside a WRITE
        (0x06, 0x06),  # a new WRITE FIRST inside a WRITE
    ],
)
def test_opcode_out_of_sequence_is_invalid_request(first, second):
    b = Bench()
    b.post(1)
    b.post(2)
    psn = EPSN
    if first is not None:
        assert b.send(first, psn, data(MTU), va=BASE, rkey=b.mr.key, dma_len=4 * MTU).outcome == Outcome.EXECUTED
        psn += 1
    payload = b"" if second == 0x0C else data(MTU)  # a READ request carries none
    step = b.send(second, psn, payload, va=BASE, rkey=b.mr.key, dma_len=MTU)
    assert step.outcome == Outcome.NAK_INVALID_REQUEST and step.qp_error and step.writes == []
    assert acks(step) == [(0x11, psn, 0x61, 0)]
    assert all(c.status == "WR_FLUSH_ERR" for c in step.cqes) and len(step.cqes) == 2


def test_multi_packet_write_first_middle_last():
    b = Bench()
    payload = data(2 * MTU + 88)
    w = dict(va=BASE + 0xF00, rkey=b.mr.key, dma_len=len(payload))
    first = b.send(0x06, EPSN, payload[:MTU], **w)
    assert first.outcome == Outcome.EXECUTED and acks(first) == [(0x11, EPSN, ACK, 0)]  # no message done yet
    assert b.send(0x07, EPSN + 1, payload[MTU : 2 * MTU], ack_req=0).outcome == Outcome.EXECUTED
    last = b.send(0x08, EPSN + 2, payload[2 * MTU :])
    assert last.outcome == Outcome.EXECUTED and acks(last) == [(0x11, EPSN + 2, ACK, 1)]
    assert b.host(BASE + 0xF00, len(payload)) == payload


@pytest.mark.parametrize(
    "packets, dma_len",
    [
        ([(0x06, MTU - 1)], 3 * MTU),  # FIRST short of an MTU
        ([(0x06, MTU), (0x07, MTU - 4)], 3 * MTU),  # MIDDLE short
        ([(0x06, MTU), (0x08, MTU)], MTU + 8),  # LAST past the DMA length
        ([(0x06, MTU), (0x08, 4)], MTU + 8),  # LAST short of it
        ([(0x06, MTU), (0x08, 0)], 2 * MTU),  # LAST empty
        ([(0x06, MTU)], MTU),  # FIRST with nothing left for a LAST
        ([(0x0A, 8)], 9),  # ONLY payload differs from the DMA length
        ([(0x0A, MTU + 4)], MTU + 4),  # ONLY over the MTU
        ([(0x06, MTU)], (1 << 31) + 1),  # C9-94
        ([(0x06, MTU), (0x07, MTU)], 2 * MTU),  # MIDDLE leaves nothing for the LAST
    ],
)
def test_write_length_rules(packets, dma_len):
    b = Bench()
    *good, (opcode, n) = packets
    for i, (op, size) in enumerate(good):
        assert b.send(op, EPSN + i, data(size), va=BASE, rkey=b.mr.key, dma_len=dma_len).outcome == Outcome.EXECUTED
    step = b.send(opcode, EPSN + len(good), data(n), va=BASE, rkey=b.mr.key, dma_len=dma_len)
    assert step.outcome == Outcome.NAK_INVALID_REQUEST and step.writes == [] and b.resp.state(QPN) == "ERR"


def test_send_multi_packet_and_larger_than_the_wqe():
    b = Bench()
    b.post(1, length=MTU + 10)
    b.post(2)
    assert b.send(0x00, EPSN, data(MTU)).outcome == Outcome.EXECUTED
    step = b.send(0x02, EPSN + 1, data(10, 2))
    assert [(c.wr_id, c.byte_len) for c in step.cqes] == [(1, MTU + 10)]
    assert b.mem.read(0x9000_0000, MTU + 10) == data(MTU) + data(10, 2)
    b.post(3)
    assert b.send(0x00, EPSN + 2, data(MTU)).outcome == Outcome.EXECUTED  # into WQE 2 (0x1000 bytes)
    b.resp.qps[QPN].rq[0].length = MTU + 3  # say WQE 2 was that small
    step = b.send(0x02, EPSN + 3, data(4))
    assert step.outcome == Outcome.NAK_INVALID_REQUEST and step.writes == [] and step.qp_error
    assert [(c.wr_id, c.status) for c in step.cqes] == [(2, "LOC_LEN_ERR"), (3, "WR_FLUSH_ERR")]


@pytest.mark.parametrize("first, last, n", [(0x00, 0x02, 0), (0x00, 0x02, MTU + 4), (0x00, 0x01, MTU - 4)])
def test_send_packet_length_rules(first, last, n):
    b = Bench()
    b.post(1)
    assert b.send(first, EPSN, data(MTU)).outcome == Outcome.EXECUTED
    step = b.send(last, EPSN + 1, data(n))
    assert step.outcome == Outcome.NAK_INVALID_REQUEST and step.writes == [] and step.cqes[0].status == "WR_FLUSH_ERR"


def test_send_through_a_bad_lkey_is_remote_operational_error():
    b = Bench()
    b.post(1, lkey=b.recv.key ^ 0x80)
    step = b.send(0x04, EPSN, b"data")
    assert step.outcome == Outcome.NAK_REMOTE_OPERATIONAL and step.writes == []
    assert acks(step) == [(0x11, EPSN, 0x63, 0)] and [c.status for c in step.cqes] == ["LOC_PROT_ERR"]


def test_qp_without_the_remote_right_is_invalid_request():
    b = Bench(access=Access.REMOTE_READ)
    step = b.send(0x0A, EPSN, b"abcd", va=BASE, rkey=b.mr.key, dma_len=4)
    assert step.outcome == Outcome.NAK_INVALID_REQUEST and step.writes == []


def test_send_needs_no_remote_right():
    b = Bench(access=Access.NONE)
    b.post(1)
    assert b.send(0x04, EPSN, b"hi").outcome == Outcome.EXECUTED
    assert b.send(0x0C, EPSN + 1, va=BASE, rkey=b.mr.key, dma_len=8).outcome == Outcome.NAK_INVALID_REQUEST


def test_read_responses_and_duplicate_reexecuted_from_memory():
    b = Bench(max_dest_rd_atomic=1)
    va, n = BASE + 0xF80, 600
    b.mem.write(PAGES[0] + 0xF80, data(0x80))
    b.mem.write(PAGES[1], data(600 - 0x80, 2))
    step = b.send(0x0C, EPSN, va=va, rkey=b.mr.key, dma_len=n)
    assert step.outcome == Outcome.EXECUTED
    assert [(r.opcode, r.psn, r.syndrome, r.msn, len(r.payload)) for r in step.responses] == [
        (0x0D, EPSN, ACK, 1, 256),
        (0x0E, EPSN + 1, None, None, 256),
        (0x0F, EPSN + 2, ACK, 1, 88),
    ]
    assert b"".join(r.payload for r in step.responses) == b.host(va, n)
    assert sum(r.length for r in step.reads) == n
    assert b.send(0x0A, EPSN + 3, b"w", va=BASE, rkey=b.mr.key, dma_len=1).outcome == Outcome.EXECUTED  # 3 PSNs
    b.mem.write(PAGES[1], b"NEW!")
    dup = b.send(0x0C, EPSN, va=va, rkey=b.mr.key, dma_len=n)
    assert dup.outcome == Outcome.DUPLICATE and dup.writes == []
    assert b"".join(r.payload for r in dup.responses) == b.host(va, n)  # re-read, not cached
    assert [r.msn for r in dup.responses if r.msn is not None] == [2, 2]  # the current MSN
    tail = b.send(0x0C, EPSN + 1, va=va + MTU, rkey=b.mr.key, dma_len=n - MTU)
    assert [(r.opcode, r.psn) for r in tail.responses] == [(0x0D, EPSN + 1), (0x0F, EPSN + 2)]
    last = b.send(0x0C, EPSN + 2, va=va + 2 * MTU, rkey=b.mr.key, dma_len=n - 2 * MTU)
    assert [(r.opcode, r.psn, r.payload) for r in last.responses] == [(0x10, EPSN + 2, b.host(va + 2 * MTU, 88))]
    too_many = b.send(0x0C, EPSN + 2, va=va, rkey=b.mr.key, dma_len=2 * MTU)  # 2 packets from the last PSN
    assert too_many.outcome == Outcome.DROPPED
    assert b.send(0x0C, EPSN, va=va, rkey=b.mr.key ^ 1, dma_len=n).outcome == Outcome.DROPPED  # other R_Key
    assert b.send(0x0C, EPSN, va=va - 8, rkey=b.mr.key, dma_len=n).outcome == Outcome.DROPPED  # outside it
    assert b.send(0x0C, EPSN + 4, va=va, rkey=b.mr.key, dma_len=8).outcome == Outcome.EXECUTED
    gone = b.send(0x0C, EPSN, va=va, rkey=b.mr.key, dma_len=n)  # its resource evicted (1 kept)
    assert gone.outcome == Outcome.DROPPED and gone.responses == []
    assert b.resp.qps[QPN].epsn == EPSN + 5


def test_zero_length_read_and_write_check_no_rkey():
    b = Bench()
    step = b.send(0x0C, EPSN, va=0xDEAD, rkey=0xBAD, dma_len=0)
    assert [(r.opcode, r.psn, r.payload) for r in step.responses] == [(0x10, EPSN, b"")]
    assert b.send(0x0A, EPSN + 1, b"", va=0xDEAD, rkey=0xBAD, dma_len=0).outcome == Outcome.EXECUTED


def test_zero_length_duplicate_read_must_name_the_recorded_one():
    """DESIGN CHOICE: a retried READ names the recorded R_Key and range even
    when it asks for nothing; another key or VA is not its retry."""
    b = Bench()
    va = BASE + 0x100
    assert b.send(0x0C, EPSN, va=va, rkey=b.mr.key, dma_len=0).outcome == Outcome.EXECUTED
    assert b.send(0x0C, EPSN, va=va, rkey=b.mr.key, dma_len=0).outcome == Outcome.DUPLICATE
    assert b.send(0x0C, EPSN, va=va + 8, rkey=b.mr.key, dma_len=0).outcome == Outcome.DROPPED
    assert b.send(0x0C, EPSN, va=va, rkey=b.mr.key ^ 1, dma_len=0).outcome == Outcome.DROPPED


@pytest.mark.parametrize("opcode", [0x13, 0x14])
def test_atomic_executes_once_and_duplicate_replays_the_original(opcode):
    b = Bench()
    va = BASE + 0x1008
    phys = PAGES[1] + 8
    b.mem.write(phys, (1000).to_bytes(8, "little"))
    step = b.send(opcode, EPSN, va=va, rkey=b.mr.key, swap_add=7, compare=1000)
    assert step.outcome == Outcome.EXECUTED
    assert [(r.opcode, r.psn, r.msn, r.orig) for r in step.responses] == [(0x12, EPSN, 1, 1000)]
    assert int.from_bytes(b.mem.read(phys, 8), "little") == (7 if opcode == 0x13 else 1007)
    dup = b.send(opcode, EPSN, va=va, rkey=b.mr.key, swap_add=7, compare=1000)
    assert dup.outcome == Outcome.DUPLICATE and dup.writes == [] and dup.reads == []
    assert [(r.opcode, r.orig) for r in dup.responses] == [(0x12, 1000)]
    assert int.from_bytes(b.mem.read(phys, 8), "little") == (7 if opcode == 0x13 else 1007)


def test_compare_swap_that_fails_leaves_memory():
    b = Bench()
    b.mem.write(PAGES[0], (5).to_bytes(8, "little"))
    step = b.send(0x13, EPSN, va=BASE, rkey=b.mr.key, swap_add=9, compare=6)
    assert step.responses[0].orig == 5 and b.mem.read(PAGES[0], 8) == (5).to_bytes(8, "little")


@pytest.mark.parametrize("offset", [1, 4, 7])
def test_misaligned_atomic_is_invalid_request(offset):
    b = Bench()
    step = b.send(0x14, EPSN, va=BASE + offset, rkey=b.mr.key, swap_add=1, compare=0)
    assert step.outcome == Outcome.NAK_INVALID_REQUEST and step.writes == [] and step.reads == []


def test_no_rd_atomic_resources_is_invalid_request():
    b = Bench(max_dest_rd_atomic=0)
    assert b.send(0x0C, EPSN, va=BASE, rkey=b.mr.key, dma_len=8).outcome == Outcome.NAK_INVALID_REQUEST


def test_send_with_invalidate_invalidates_the_rkey():
    b = Bench()
    b.post(1)
    assert b.send(0x17, EPSN, b"inv!", ieth_rkey=b.mr.key).outcome == Outcome.EXECUTED
    assert b.send(0x0A, EPSN + 1, b"x", va=BASE, rkey=b.mr.key, dma_len=1).outcome == Outcome.NAK_REMOTE_ACCESS


@pytest.mark.parametrize("case", ["unknown_qp", "ack_opcode", "uc_opcode", "ud_opcode", "bad_icrc"])
def test_frames_not_for_the_responder_are_dropped(case):
    b = Bench()
    if case == "bad_icrc":
        spec = frames.random_spec(random.Random(1), 0x0A, False, 4)
        spec.values.update(dest_qp=QPN, psn=EPSN, va=BASE, rkey=b.mr.key, dma_len=4)
        step = b.resp.receive(frames.icrc_wrong(spec, random.Random(2)))
    else:
        opcode = {"unknown_qp": 0x0A, "ack_opcode": 0x11, "uc_opcode": 0x2A, "ud_opcode": 0x64}[case]
        qpn = QPN + 1 if case == "unknown_qp" else QPN
        step = b.send(opcode, EPSN, b"abcd" if opcode != 0x11 else b"", qpn=qpn, va=BASE, rkey=b.mr.key, dma_len=4)
    assert step == rr.Step(Outcome.DROPPED)
    assert b.send(0x0A, EPSN, b"abcd", va=BASE, rkey=b.mr.key, dma_len=4).outcome == Outcome.EXECUTED  # nothing moved
