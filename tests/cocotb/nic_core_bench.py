"""cocotb benches for the exported nic_core (the whole RC transport of one
NIC; hdl/src/nic/nic_core.rs) on tests/cocotb/tops/nic_core_top.sv.

What: one core with a host (nic_core_host.CoreHost: memory, DMA, driver
writes) and a peer that the bench plays frame by frame (rc_peer), checked
against the IBA responder rules (responder_rules) and the memory rules
(mr_rules), never against the project's Rust model.
- write_smoke: one RDMA WRITE Only lands in host memory and is ACKed.
- verbs_clean: every request verb (SEND with receive WQEs, WRITE with and
  without immediate, READ, both atomics) on 16 QPs, MTU 256, backpressure
  everywhere: host memory, the receive CQEs and every response frame as
  the rules say.
- hostile_traffic: the same streams with one packet in eight mutated
  (rc_peer.MUTATIONS), in rounds: after each, host memory equals the
  rules' byte for byte (so no byte outside a registered MR with the right
  access was written; each DMA access is also checked when it happens),
  every receive CQE and response frame is the rules', the core drained
  (no hang); QPs the rules moved to ERR are created again, the others go
  back to the responder's expected PSN (Go-Back-N). $ROCENIC_HOSTILE_FRAMES
  sets the number of frames (default 100,000).
Run by tests/cocotb/test_nic_core.py.
"""

from __future__ import annotations

import os
import random
from collections import defaultdict

import cocotb

import mr_rules
import rc_peer
import request_frames as rf
import responder_rules as rr
import roce_rules as rules
from mr_rules import Access
from nic_core_host import MTU_IBA_CODE, QP_STATE, QUEUE_OP_CONFIGURE, CoreHost, HostMemory

NIC = rf.Endpoint(mac=bytes.fromhex("020000000001"), ip=0x0A000001, udp_src_port=0xC001)
PEER = rf.Endpoint(mac=bytes.fromhex("020000000002"), ip=0x0A000002, udp_src_port=0xC002)
MEMORY_BASE = 0x4000_0000
MEMORY_SIZE = 1 << 20
PAGE = 4096


class Setup:
    """The host's registrations: MRs over shuffled physical pages, and the
    QPs the peer talks to."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.memory = HostMemory(MEMORY_BASE, MEMORY_SIZE)
        self.memory.data[:] = rng.randbytes(MEMORY_SIZE)
        self.table = mr_rules.MrTable()
        self.free_pages = [MEMORY_BASE + i * PAGE for i in range(MEMORY_SIZE // PAGE)]
        rng.shuffle(self.free_pages)
        self.next_mtt = 0

    def register(self, index: int, pd: int, va: int, length: int, access: Access) -> mr_rules.Mr:
        pages = [self.free_pages.pop() for _ in range(mr_rules.pages_spanned(va, length, 12))]
        mr = mr_rules.Mr(index, self.rng.getrandbits(8), pd, va, length, access, 12, pages, self.next_mtt)
        self.next_mtt += len(pages)
        return self.table.register(mr)

    def allow(self, host: CoreHost) -> None:
        """Reads only where some remote read or atomic right is; writes
        only where some write right is."""
        for mr in self.table.entries.values():
            segments = self.table.segments(mr, mr.base, mr.length)
            if mr.access & (Access.REMOTE_READ | Access.REMOTE_ATOMIC):
                for s in segments:
                    host.allow_reads.add(s.phys, s.length)
            if mr.access & (Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC):
                for s in segments:
                    host.allow_writes.add(s.phys, s.length)


async def configure_qp(host: CoreHost, qpn: int, pd: int, access: Access, mtu: int, epsn: int, dest_qpn: int):
    """modify_qp to RTS, as the driver would: both directions' contexts,
    the address record, the response queue's MTU."""
    common = {
        "state": QP_STATE["RTS"], "access": int(access), "path_mtu": MTU_IBA_CODE[mtu], "pkey": 0xFFFF, "pd": pd,
        "dest_qpn": dest_qpn, "timeout": 14, "retry_cnt": 7, "rnr_retry": 7, "retry_left": 7, "rnr_left": 7,
        "max_rd_atomic": 4, "max_dest_rd_atomic": 3, "min_rnr_timer": 1, "rq_epsn": epsn,
    }  # fmt: skip
    send_psn = 0x100
    await host.write_context("rsp", qpn, common)
    await host.write_context(
        "req",
        qpn,
        {**common, "sq_next_psn": send_psn, "sq_send_psn": send_psn, "sq_una_psn": send_psn,
         "sq_max_sent_psn": send_psn, "sq_ackreq_end_psn": send_psn},
    )  # fmt: skip
    await host.write_address(
        qpn,
        {"pd": pd, "dest_qp": dest_qpn, "pkey": 0xFFFF, "eth_dst": int.from_bytes(PEER.mac, "big"),
         "eth_src": int.from_bytes(NIC.mac, "big"), "ip_src": NIC.ip, "ip_dst": PEER.ip,
         "udp_src_port": NIC.udp_src_port},
    )  # fmt: skip
    await host.queue_command(QUEUE_OP_CONFIGURE, qpn, mtu.bit_length() - 9)


@cocotb.test()
async def write_smoke(dut):
    rng = random.Random(1)
    setup = Setup(rng)
    mr = setup.register(0, 1, 0x10000, 3 * PAGE, Access.LOCAL_WRITE | Access.REMOTE_WRITE)
    host = CoreHost(dut, rng, backpressure=False, memory=setup.memory)
    setup.allow(host)
    await host.start()
    await host.load_mrs(setup.table)
    await configure_qp(host, 5, 1, Access.REMOTE_WRITE, 1024, 0x1234, 0x77)
    payload = rng.randbytes(100)
    va = 0x10000 + PAGE - 40  # crosses a page
    host.send(rf.frame(PEER, NIC, 0x0A, 5, 0x1234, rf.reth(va, mr.key, 100), payload, ack_req=True))
    await host.run_until_quiet(200, 5000)
    got = b"".join(setup.memory.read(s.phys, s.length) for s in setup.table.segments(mr, va, 100))
    assert got == payload
    assert len(host.sent) == 1, host.sent
    ack = rules.decode(host.sent[0])
    assert ack.accepted and ack.fields["opcode"] == 0x11, ack
    assert (ack.fields["psn"], ack.fields["dest_qp"], ack.fields["aeth_syndrome"]) == (0x1234, 0x77, rr.ACK)


# ---- the verbs and hostile-traffic benches

PEER_QPN_OFFSET = 0x100  # the peer's QPN of core QP q is q + this
RECV_DEPTH = 8  # receive WQEs kept posted per QP (the core's rings hold 16)
RECV_BYTES = 1024
RIGHTS = Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC


class Bench:
    """A core, its host and registrations, the rules and the peer."""

    def __init__(self, dut, seed: int, qps: int, mtu: int, backpressure: bool):
        self.rng = random.Random(seed)
        self.setup = Setup(self.rng)
        self.host = CoreHost(dut, self.rng, backpressure, self.setup.memory)
        self.mtu = mtu
        self.qpns = list(range(1, qps + 1))
        self.peers: dict[int, rc_peer.PeerQp] = {}
        self.wr_ids = 0
        self.responses: dict[int, list[rr.Response]] = defaultdict(list)
        self.cqes: list[dict] = []
        self.outcomes: dict[str, int] = defaultdict(int)
        self.frames_sent = 0
        self.checked_frames = 0
        self.checked_cqes = 0
        self.revived = 0

    async def start(self) -> None:
        s, host = self.setup, self.host
        # Each right in regions of its own, so READ data never depends on
        # the order of a later WRITE; decoys: another PD, no remote right.
        self.write_mr = s.register(1, 1, 0x100000, 8 * PAGE, Access.LOCAL_WRITE | Access.REMOTE_WRITE)
        self.read_mr = s.register(2, 1, 0x200000, 8 * PAGE, Access.REMOTE_READ)
        self.atomic_mr = s.register(3, 1, 0x300000, PAGE, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC)
        self.recv_mr = s.register(4, 1, 0x400000, 32 * PAGE, Access.LOCAL_WRITE)
        self.other_pd_mr = s.register(5, 2, 0x500000, 2 * PAGE, Access.LOCAL_WRITE | RIGHTS)
        self.local_only_mr = s.register(6, 1, 0x600000, 2 * PAGE, Access.NONE)
        s.allow(host)
        self.rules_memory = s.memory.copy()
        self.rules = rr.Responder(s.table, self.rules_memory)
        await host.start()
        await host.load_mrs(s.table)
        for qpn in self.qpns:
            await self.create_qp(qpn, self.rng.getrandbits(24))

    def keys(self) -> list[int]:
        return [mr.key for mr in self.setup.table.entries.values()]

    async def create_qp(self, qpn: int, epsn: int) -> None:
        await configure_qp(self.host, qpn, 1, RIGHTS, self.mtu, epsn, qpn + PEER_QPN_OFFSET)
        self.rules.add_qp(rr.QpConfig(qpn, 1, RIGHTS, self.mtu, epsn, 0, 3, qpn + PEER_QPN_OFFSET, 1))
        span = self.write_mr.length // len(self.qpns)
        target = lambda mr: rc_peer.Target(mr.key, mr.base + (qpn - 1) * (mr.length // len(self.qpns)),  # noqa: E731
                                          mr.length // len(self.qpns))  # fmt: skip
        atomic = rc_peer.Target(self.atomic_mr.key, self.atomic_mr.base + (qpn - 1) * 64, 64)
        assert span >= 3 * self.mtu
        peer = self.peers.get(qpn)
        if peer is None:
            self.peers[qpn] = rc_peer.PeerQp(
                qpn, self.mtu, target(self.write_mr), target(self.read_mr), atomic, RECV_BYTES, epsn
            )
        else:
            peer.restart(epsn)
        await self.replenish(qpn)
        self.peers[qpn].credits = RECV_DEPTH

    async def replenish(self, qpn: int) -> None:
        """Keeps RECV_DEPTH receive WQEs posted on QP `qpn`, each buffer
        the QP's own slot of the receive MR."""
        while len(self.rules.qps[qpn].rq) < RECV_DEPTH:
            self.wr_ids += 1
            slot = (qpn - 1) * RECV_DEPTH + self.wr_ids % RECV_DEPTH
            va = self.recv_mr.base + slot * (self.recv_mr.length // (RECV_DEPTH * len(self.qpns)))
            taken = await self.host.post_recv(qpn, self.wr_ids, self.recv_mr.key, va, RECV_BYTES)
            assert taken, f"QP {qpn}'s receive ring refused WQE {self.wr_ids} with {len(self.rules.qps[qpn].rq)} posted"
            self.rules.post_recv(qpn, rr.RecvWqe(self.wr_ids, self.recv_mr.key, va, RECV_BYTES))

    def offer(self, mutate_one_in: int) -> None:
        """The next packet of a random QP's stream, maybe mutated, to the
        core and to the rules."""
        qpn = self.rng.choice([q for q in self.qpns if self.rules.state(q) == "RTS"])
        peer = self.peers[qpn]
        packet = peer.next_packet(self.rng)
        if mutate_one_in and self.rng.randrange(mutate_one_in) == 0:
            packet = rc_peer.mutate(packet, self.rng, peer, self.qpns, self.keys())
        frame = packet.frame(PEER, NIC)
        step = self.rules.receive(frame)
        self.outcomes[step.outcome.name] += 1
        target = self.qpn_of(frame)
        self.responses[target] += step.responses
        # The requester's answer to a NAK, or to silence (its ACK timeout,
        # brought forward): back to the expected PSN.
        silent = step.outcome == rr.Outcome.DROPPED and packet.mutation is None
        if step.outcome in (rr.Outcome.NAK_PSN_SEQUENCE, rr.Outcome.NAK_RNR) or silent:
            if target in self.peers and self.rules.state(target) == "RTS":
                self.peers[target].resync(self.rules.qps[target].epsn)
        self.cqes += [c.__dict__ for c in step.cqes]
        self.host.send(frame)
        self.frames_sent += 1

    @staticmethod
    def qpn_of(frame: bytes) -> int:
        return rules.decode(frame).fields["dest_qp"]

    async def round(self, frames: int, mutate_one_in: int) -> None:
        """Up to `frames` frames, fewer once three QPs in four are in ERR;
        then the checks, and the QPs created again or resynchronised."""
        for _ in range(frames):
            if sum(self.rules.state(q) == "RTS" for q in self.qpns) * 4 < len(self.qpns):
                break
            self.offer(mutate_one_in)
        await self.host.run_until_quiet(300, 200 * frames + 20_000)
        self.check()
        for qpn in self.qpns:
            qp = self.rules.qps[qpn]
            if qp.state == "ERR":
                self.revived += 1
                await self.create_qp(qpn, (qp.epsn + (1 << 22)) & rc_peer.PSN_MASK)
            else:
                self.peers[qpn].resync(qp.epsn)
                await self.replenish(qpn)
            self.peers[qpn].credits = len(self.rules.qps[qpn].rq)

    def check(self) -> None:
        host = self.host
        if host.memory.data != self.rules_memory.data:
            at = next(i for i, (a, b) in enumerate(zip(host.memory.data, self.rules_memory.data)) if a != b)
            raise AssertionError(
                f"host memory differs from the rules' first at {host.memory.base + at:#x}: "
                f"core wrote {host.memory.data[at]:#04x}, rules {self.rules_memory.data[at]:#04x}"
            )
        got = host.cqes[self.checked_cqes :]
        want = self.cqes[self.checked_cqes :]
        for qpn in self.qpns:
            mine = [c for c in got if c["qpn"] == qpn]
            theirs = [c for c in want if c["qpn"] == qpn]
            assert mine == theirs, f"QP {qpn}: receive CQEs\n  core  {mine}\n  rules {theirs}"
        assert len(got) == len(want), f"{len(got)} receive CQEs, the rules {len(want)}"
        self.checked_cqes = len(self.cqes)
        frames = host.sent[self.checked_frames :]
        self.checked_frames = len(host.sent)
        by_qp: dict[int, list[dict]] = defaultdict(list)
        for frame in frames:
            v = rules.decode(frame)
            assert v.accepted, f"the core sent a frame the rules drop ({v.reason.name}): {frame.hex()}"
            f = v.fields
            assert (f["eth_dst"], f["ip_dst"], f["udp_src_port"]) == (
                int.from_bytes(PEER.mac, "big"), PEER.ip, NIC.udp_src_port), f"addressing of {f}"  # fmt: skip
            by_qp[f["dest_qp"] - PEER_QPN_OFFSET].append({**f, "payload": v.payload})
        for qpn in set(by_qp) | set(self.responses):
            compare_responses(qpn, by_qp.get(qpn, []), self.responses.pop(qpn, []))


def response_key(r: rr.Response) -> tuple:
    return (r.opcode, r.psn, r.syndrome, r.msn, r.payload, r.orig)


def frame_key(f: dict) -> tuple:
    aeth = f["opcode"] != rr.OP_READ_MIDDLE
    orig = f["atomic_ack_orig"] if f["opcode"] == rr.OP_ATOMIC_ACKNOWLEDGE else None
    return (
        f["opcode"], f["psn"], f["aeth_syndrome"] if aeth else None, f["aeth_msn"] if aeth else None, f["payload"], orig,
    )  # fmt: skip


FATAL_NAKS = (rr.NAK_INVALID_REQUEST, rr.NAK_REMOTE_ACCESS, rr.NAK_REMOTE_OPERATIONAL)


def is_ack(key: tuple) -> bool:
    return key[0] == rr.OP_ACKNOWLEDGE and key[2] >> 5 == 0


def compare_responses(qpn: int, sent: list[dict], expected: list[rr.Response]) -> None:
    """The core's responses of one QP against the rules': NAKs, READ
    responses and atomic ACKs one for one and in order; each run of ACKs
    between them may be coalesced (IBA 9.7.4): the core sends some of the
    run's ACKs, in order, always its last."""
    got = [frame_key(f) for f in sent]
    want = [response_key(r) for r in expected]
    where = f"QP {qpn} responses\n  core  {[k[:4] for k in got]}\n  rules {[k[:4] for k in want]}"
    fatal = next((k for k, key in enumerate(want) if key[0] == rr.OP_ACKNOWLEDGE and key[2] in FATAL_NAKS), None)
    if fatal is not None:
        # The core's reading (and its model's; docs/status.md): a QP that
        # goes to ERR drops the responses still queued before its NAK, a
        # READ response under way included. The rules send them all. So
        # before a fatal NAK the core's responses need only be some of the
        # rules', in order; the NAK itself must come, and nothing after it.
        assert want[fatal] in got, f"{where}\n  no fatal NAK {want[fatal][:4]}"
        cut = got.index(want[fatal])
        rest = iter(want[:fatal])
        assert all(any(g == w for w in rest) for g in got[:cut]), f"{where}\n  not in the rules' order before the NAK"
        assert got[cut + 1 :] == want[fatal + 1 :], f"{where}\n  after the NAK"
        return
    i = j = 0
    while j < len(want):
        if not is_ack(want[j]):
            assert i < len(got) and got[i] == want[j], f"{where}\n  at rules item {j}: {want[j][:4]}"
            i, j = i + 1, j + 1
            continue
        run_end = j
        while run_end < len(want) and is_ack(want[run_end]):
            run_end += 1
        sent_end = i
        while sent_end < len(got) and is_ack(got[sent_end]):
            sent_end += 1
        run, acks = want[j:run_end], got[i:sent_end]
        rest = iter(run)
        in_order = all(any(a == r for r in rest) for a in acks)
        assert acks and acks[-1] == run[-1] and in_order, f"{where}\n  ACKs {[a[:4] for a in acks]} for {[r[:4] for r in run]}"
        i, j = sent_end, run_end
    assert i == len(got), f"{where}\n  the core sent more: {[k[:4] for k in got[i:]]}"


async def run_bench(dut, seed: int, frames: int, mutate_one_in: int, backpressure: bool = True) -> Bench:
    bench = Bench(dut, seed, qps=16, mtu=256, backpressure=backpressure)
    await bench.start()
    per_round = 400
    while bench.frames_sent < frames:
        await bench.round(min(per_round, frames - bench.frames_sent), mutate_one_in)
    dut._log.info(
        "%d frames in %d cycles, outcomes %s, %d QPs created again, %d receive CQEs, %d frames sent",
        bench.frames_sent, bench.host.cycle, dict(bench.outcomes), bench.revived, len(bench.cqes),
        len(bench.host.sent),
    )  # fmt: skip
    return bench


@cocotb.test()
async def verbs_clean(dut):
    bench = await run_bench(dut, seed=2, frames=3000, mutate_one_in=0)
    assert bench.outcomes.keys() == {"EXECUTED"}, bench.outcomes
    assert bench.revived == 0


@cocotb.test()
async def hostile_traffic(dut):
    frames = int(os.environ.get("ROCENIC_HOSTILE_FRAMES", "100000"))
    bench = await run_bench(dut, seed=3, frames=frames, mutate_one_in=8)
    for outcome in ("EXECUTED", "DUPLICATE", "NAK_PSN_SEQUENCE", "NAK_INVALID_REQUEST", "NAK_REMOTE_ACCESS", "DROPPED"):
        assert bench.outcomes[outcome] > 0, f"no {outcome} among {dict(bench.outcomes)}: the mutations miss a class"
