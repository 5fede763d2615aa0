"""cocotb benches for the exported nic_core (the whole RC transport of one
NIC; hdl/src/nic/nic_core.rs) on tests/cocotb/tops/nic_core_top.sv.

What: one core with a host (nic_core_host.CoreHost: memory, DMA, driver
writes) and a peer that the bench plays frame by frame (rc_peer), checked
against the IBA responder rules (responder_rules) and the memory rules
(mr_rules), never against the project's Rust model.
- write_smoke: one RDMA WRITE Only lands in host memory and is ACKed.
- cnp_notification: CE-marked WRITEs get CNPs (DCQCN's notification
  point) to the sender's QP, at most one per interval per QP, each equal
  to the one scapy builds from the RoCEv2 annex's layout.
- cnp_reaction: DCQCN's reaction point and pacing: CNPs (built by scapy)
  to a QP streaming WRITEs cut its rate as the DCQCN paper's update says
  (alpha, the cut, its floor, one cut per monitor period), and its
  frames then leave at that rate, measured on the wire; at MTU 4096 a
  throttled QP's frames are spaced one by one.
- verbs_clean: every request verb (SEND with receive WQEs, WRITE with and
  without immediate, READ, both atomics) on 16 QPs, MTU 256, backpressure
  everywhere: host memory, the receive CQEs and every response frame as
  the rules say.
- system_lossy: two cores back to back (verilator_runner.pair_top)
  through a link that loses, duplicates and reorders frames: core A's
  requester runs WRITE, WRITE with immediate, SEND, READ and both atomics
  posted on its send queues against core B's responder; B's memory,
  receive CQEs and every response are checked with responder_rules on the
  frames B received, A's send CQEs (one per WQE, in order, successful)
  and A's memory (READ data and atomic original values, nothing else)
  against what the verbs asked.
- hostile_traffic: the same streams with one packet in eight mutated
  (rc_peer.MUTATIONS), in rounds: after each, host memory equals the
  rules' byte for byte (so no byte outside a registered MR with the right
  access was written; each DMA access is also checked when it happens),
  every receive CQE and response frame is the rules', the core drained
  (no hang); QPs the rules moved to ERR are created again, the others go
  back to the responder's expected PSN (Go-Back-N). $ROCENIC_HOSTILE_FRAMES
  sets the number of frames (default 100,000).
Run by tests/cocotb/test_benches.py.
"""

from __future__ import annotations

import os
import random
from collections import defaultdict

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

import mr_rules
import rc_peer
import request_frames as rf
import roce_frames
import responder_rules as rr
import roce_rules as rules
from mr_rules import Access
from nic_core_host import MTU_IBA_CODE, QP_STATE, QUEUE_OP_CONFIGURE, CoreHost, HostMemory, Prefixed

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


async def configure_qp(
    host: CoreHost, qpn: int, pd: int, access: Access, mtu: int, epsn: int, dest_qpn: int,
    send_psn: int = 0x100, timeout: int = 14,
):  # fmt: skip
    """modify_qp to RTS, as the driver would: both directions' contexts,
    the address record, the response queue's MTU. `timeout` is the local
    ACK timeout code (4.096 us x 2^timeout).

    The initiator depth (`max_rd_atomic`) is the peer's responder
    resources (`max_dest_rd_atomic`, 3), as connection set-up makes it: a
    requester with more READs and atomics outstanding than the responder
    keeps can resend a READ that the responder no longer holds (dropped:
    IBA 9.7.5.1.3, "responder resources") until RETRY_EXC_ERR."""
    common = {
        "state": QP_STATE["RTS"], "access": int(access), "path_mtu": MTU_IBA_CODE[mtu], "pkey": 0xFFFF, "pd": pd,
        "dest_qpn": dest_qpn, "timeout": timeout, "retry_cnt": 7, "rnr_retry": 7, "retry_left": 7, "rnr_left": 7,
        "max_rd_atomic": 3, "max_dest_rd_atomic": 3, "min_rnr_timer": 1, "rq_epsn": epsn,
    }  # fmt: skip
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


# ---- DCQCN's notification point

CNP_INTERVAL = 300  # cycles between two CNPs of a QP, at least
CNP_DSCP = 46


def expected_cnp(dest_qp: int, identification: int) -> bytes:
    """The CNP the RoCEv2 annex (A17.9.3) describes, as ConnectX sends it,
    built by scapy: BTH opcode 0x81, P_Key 0xFFFF, BECN, the flow's sender
    QP, PSN 0, 16 reserved zero bytes and the ICRC; Not-ECT IPv4 with DF,
    TTL 64, the NIC's CNP DSCP; the QP's UDP source port."""
    values = {
        "eth_dst": int.from_bytes(PEER.mac, "big"), "eth_src": int.from_bytes(NIC.mac, "big"),
        "ip_src": NIC.ip, "ip_dst": PEER.ip, "dscp": CNP_DSCP, "ecn": 0, "ttl": 64, "flow_label": 0,
        "identification": identification, "dont_fragment": 1, "udp_src_port": NIC.udp_src_port,
        "udp_checksum": 0, "solicited": 0, "mig_req": 0, "pkey": 0xFFFF, "fecn": 0, "becn": 1,
        "dest_qp": dest_qp, "ack_req": 0, "psn": 0,
    }  # fmt: skip
    return roce_frames.frame_bytes(roce_frames.FrameSpec(0x81, False, b"", values))


@cocotb.test()
async def cnp_notification(dut):
    """CE-marked WRITEs to QPs 3 and 4 (and ECT(0) ones to QP 5, and none
    marked before them) every 50 to 150 cycles: each CE-marked QP gets
    CNPs to its peer's QP at most one per CNP_INTERVAL cycles and again
    as soon as a marked frame comes after that, QP 5 and the unmarked
    phase none; every CNP is scapy's, byte for byte."""
    rng = random.Random(11)
    setup = Setup(rng)
    mr = setup.register(0, 1, 0x10000, 4 * PAGE, Access.LOCAL_WRITE | Access.REMOTE_WRITE)
    host = CoreHost(dut, rng, backpressure=False, memory=setup.memory)
    setup.allow(host)
    dut.np_enabled.value = 1
    dut.np_interval.value = CNP_INTERVAL
    dut.cnp_dscp.value = CNP_DSCP
    await host.start()
    await host.load_mrs(setup.table)
    psn = {}
    for qpn in (3, 4, 5):
        psn[qpn] = 0x1000 * qpn
        await configure_qp(host, qpn, 1, Access.REMOTE_WRITE, 1024, psn[qpn], qpn + PEER_QPN_OFFSET)
    marked: dict[int, list[int]] = defaultdict(list)  # QP -> cycles a marked frame was offered

    async def traffic(rounds: int, marks: dict[int, int]) -> None:
        for _ in range(rounds):
            for qpn, ecn in marks.items():
                va = 0x10000 + rng.randrange(0, 3 * PAGE)
                payload = rng.randbytes(64)
                host.send(
                    rf.frame(PEER, NIC, 0x0A, qpn, psn[qpn], rf.reth(va, mr.key, 64), payload, ack_req=True, ecn=ecn)
                )
                psn[qpn] += 1
                if ecn == 3:
                    marked[qpn].append(host.cycle)
            for _ in range(rng.randrange(50, 150)):
                await host.step()

    await traffic(20, {3: 0, 4: 2, 5: 2})
    unmarked_end = len(host.sent)
    await traffic(60, {3: 3, 4: 3, 5: 2})
    await host.run_until_quiet(400, 20_000)

    cnps = [(i, f) for i, f in enumerate(host.sent) if rules.decode(f).fields["opcode"] == 0x81]
    assert all(i >= unmarked_end for i, _ in cnps), "a CNP before any frame was CE-marked"
    by_qp: dict[int, list[int]] = defaultdict(list)
    for n, (i, frame) in enumerate(cnps):
        dest = rules.decode(frame).fields["dest_qp"]
        assert frame == expected_cnp(dest, n + 1), f"CNP {n}: {frame.hex()}\nwant {expected_cnp(dest, n + 1).hex()}"
        by_qp[dest - PEER_QPN_OFFSET].append(host.sent_cycles[i])
    assert set(by_qp) == {3, 4}, f"CNPs for QPs {sorted(by_qp)}"
    for qpn, cycles in by_qp.items():
        gaps = [b - a for a, b in zip(cycles, cycles[1:])]
        # Two CNPs of one QP: at least the interval apart (less the 2-cycle
        # turn of the other QP's CNP), and the next marked frame after the
        # interval earns one (it comes within 150 cycles, plus the pipe).
        assert min(gaps) >= CNP_INTERVAL - 2, f"QP {qpn}: CNP gaps {gaps}"
        assert max(gaps) <= CNP_INTERVAL + 150 + 64, f"QP {qpn}: CNP gaps {gaps}"
        assert len(cycles) >= 10, f"QP {qpn}: {len(cycles)} CNPs"
        assert cycles[0] - marked[qpn][0] <= 100, f"QP {qpn}: first CNP {cycles[0] - marked[qpn][0]} cycles late"
    assert int(dut.ce_events.value) == len(marked[3]) + len(marked[4])
    assert int(dut.cnp_lost.value) == 0


# ---- DCQCN's reaction point

LINE_KBPS = 100_000_000  # 100 Gb/s, the core's line rate in kb/s
BYTE_COST = 2_000_000  # pacing tokens per byte at 250 MHz (8 x cycles/s / 1000)
WIRE_OVERHEAD = 24  # preamble, FCS, inter-frame gap: bytes a frame holds the wire beyond its own
RP = {  # DCQCN's parameters (NVIDIA's names), rocenic's set, periods in cycles
    "enabled": 1, "line_rate": LINE_KBPS, "min_rate": 1_000, "ai_rate": 1_000_000, "hai_rate": 1_000_000,
    "g": 160, "gd": 1, "min_dec_fac": 1 << 15, "initial_alpha": (1 << 15) - 32, "alpha_period": 250,
    "rate_period": 13_750, "byte_reset": 0, "threshold": 5, "monitor_period": 600,
}  # fmt: skip


def incoming_cnp(dest_qp: int) -> bytes:
    """A CNP from the peer to the core's QP `dest_qp`, built by scapy."""
    values = {
        "eth_dst": int.from_bytes(NIC.mac, "big"), "eth_src": int.from_bytes(PEER.mac, "big"),
        "ip_src": PEER.ip, "ip_dst": NIC.ip, "dscp": CNP_DSCP, "ecn": 0, "ttl": 64, "flow_label": 0,
        "identification": 7, "dont_fragment": 1, "udp_src_port": PEER.udp_src_port,
        "udp_checksum": 0, "solicited": 0, "mig_req": 0, "pkey": 0xFFFF, "fecn": 0, "becn": 1,
        "dest_qp": dest_qp, "ack_req": 0, "psn": 0,
    }  # fmt: skip
    return roce_frames.frame_bytes(roce_frames.FrameSpec(0x81, False, b"", values))


def cut(rate: float, alpha: float) -> float:
    """The DCQCN paper's cut, Rc (1 - alpha / 2), floored at min_dec_fac Rc."""
    return max(rate * (1 - alpha / 2), rate * RP["min_dec_fac"] / 65536)


@cocotb.test()
async def cnp_reaction(dut):
    """QP 3 streams 4 KiB WRITEs (4 frames, one grant each; the bench's
    peer ACKs them) as fast as one QP goes; a CNP cuts its rate to
    Rc (1 - alpha / 2) with alpha = alpha0 (1 - g) + g, and its grants then
    start one grant's wire time at that rate apart (the frames' bytes with
    their preamble, FCS and gap); a second CNP within the monitor period
    changes nothing; a third after it cuts again, alpha having decayed by
    (1 - g) per alpha period. Then QP 5 at MTU 4096, cut by a CNP of its
    own: a throttled QP's grant is one MTU-4096 frame, so its frames, not
    only its WQEs, leave one frame's wire time at Rc apart. The rates are
    the DCQCN paper's formulas here, the spacing measured at the MAC."""
    rng = random.Random(12)
    setup = Setup(rng)
    source = setup.register(1, 1, 0x100000, 32 * PAGE, Access.NONE)
    host = CoreHost(dut, rng, backpressure=False, memory=setup.memory)
    setup.allow(host)
    host.allow_reads.add(MEMORY_BASE, MEMORY_SIZE)
    for name, value in RP.items():
        getattr(dut, f"rp_{name}").value = value
    dut.pacing_line_rate.value = LINE_KBPS
    dut.pacing_byte_cost.value = BYTE_COST
    dut.pacing_burst.value = 2 * 4096 * BYTE_COST
    await host.start()
    await host.load_mrs(setup.table)
    qpn, mtu, frames_per_wqe = 3, 1024, 4
    await configure_qp(host, qpn, 1, Access.NONE, mtu, 0, qpn + PEER_QPN_OFFSET, send_psn=0)
    kind, op, cqe_opcode = VERBS["WRITE"]
    posted, wanted, acked, msn = 0, 0, 0, 0

    def post() -> None:
        """WRITEs of 4 frames each (one grant each) up to `wanted`, at most
        12 outstanding (the send ring holds 16)."""
        nonlocal posted
        length = frames_per_wqe * mtu
        while posted < wanted and posted - len(host.send_cqes) < 12:
            i = posted
            host.posts.append(
                {"qpn": qpn, "kind": kind, "opcode": cqe_opcode, "npsn": frames_per_wqe, "len": length,
                 "signaled": 1, "status": 0, "lkey": source.key, "va": source.base + (i % 8) * length,
                 "op": op, "remote_va": 0x9000_0000 + i * length, "rkey": 0x1234, "imm": 0, "compare": 0,
                 "swap_add": 0, "solicited": 0}
            )  # fmt: skip
            posted += 1

    async def run_to_frames(n: int) -> None:
        """Steps until `n` frames have left, the peer ACKing each frame
        that asks for it (so the send ring and window keep room)."""
        nonlocal acked, msn
        while len(host.sent) < n:
            post()
            await host.step()
            assert host.cycle < 40_000, f"{len(host.sent)} frames by cycle {host.cycle}: {host.sent_cycles}"
            for frame in host.sent[acked:]:
                f = rules.decode(frame).fields
                if f["ack_req"]:
                    msn += 1
                    host.send(rf.frame(PEER, NIC, 0x11, qpn, f["psn"], rf.aeth(0x1F, msn)))
            acked = len(host.sent)

    async def grant_spacing(wqes: int, skip: int) -> float:
        """Posts `wqes` WRITEs and returns the mean cycles between the
        first frames of consecutive ones from the `skip`th on: a grant
        starts once the QP has paid for the ones before at its rate. (The
        first grants are skipped: an idle QP banks up to 8 KiB of credit,
        and while the posts come in the QP is asked again before its last
        grant is charged.)"""
        nonlocal wanted
        first = len(host.sent)
        wanted += wqes
        await run_to_frames(first + wqes * frames_per_wqe)
        starts = host.sent_cycles[first :: frames_per_wqe][skip:]
        return (starts[-1] - starts[0]) / (len(starts) - 1)

    line = await grant_spacing(2, 0)
    # Bits a grant holds the line: the frames' bytes, each with its
    # preamble, FCS and gap.
    grant_bits = sum(len(f) + WIRE_OVERHEAD for f in host.sent[:frames_per_wqe]) * 8
    first_cnp = host.cycle
    for _ in range(2):  # the second within the monitor period: held
        host.send(incoming_cnp(qpn))
        for _ in range(40):
            await host.step()
    assert (int(dut.rate_cuts.value), int(dut.cnps_received.value)) == (1, 2)
    g = RP["g"] / 32768
    alpha = RP["initial_alpha"] / 32768 * (1 - g) + g
    rate1 = cut(LINE_KBPS, alpha)
    paced1 = await grant_spacing(20, 4)
    want1 = grant_bits / (rate1 * 1e3) / 4e-9  # cycles a grant at Rc
    # A grant may start a few cycles after its count turns non-negative
    # (the event loop's turn), which the next one makes up; over 15 grants
    # that is within 2.5 %.
    assert abs(paced1 - want1) / want1 < 0.025, f"{paced1:.2f} cycles a grant, {want1:.2f} at {rate1:.0f} kb/s"
    # Before the CNP the QP went as fast as one QP goes on this host (its
    # DMA reads take 40 cycles), faster than the cut rate.
    assert paced1 > 1.4 * line, f"{paced1:.2f} vs {line:.2f} cycles a grant before the CNP"

    # A CNP past the monitor period, half way through an alpha period:
    # alpha has decayed by (1 - g) once per period since the first cut
    # (about 14 times: a cut 6 % smaller than one at the first alpha),
    # then is raised by g.
    period = RP["alpha_period"]
    while host.cycle - first_cnp < RP["monitor_period"] or (host.cycle - first_cnp) % period != period // 2:
        await host.step()
    decays = (host.cycle - first_cnp) // period
    host.send(incoming_cnp(qpn))
    for _ in range(40):
        await host.step()
    assert int(dut.rate_cuts.value) == 2, f"{int(dut.rate_cuts.value)} cuts"
    assert decays >= 10, f"{decays} alpha periods"
    later = alpha * (1 - g) ** decays + g
    rate2 = cut(rate1, later)
    paced2 = await grant_spacing(16, 4)
    want2 = grant_bits / (rate2 * 1e3) / 4e-9
    assert abs(paced2 - want2) / want2 < 0.025, f"{paced2:.2f} cycles a grant, {want2:.2f} at {rate2:.0f} kb/s"
    assert int(dut.cnps_received.value) == 3

    # QP 5, MTU 4096: the same first cut; WRITEs of 4 frames of 4 KiB.
    qpn, mtu, msn = 5, 4096, 0
    await configure_qp(host, qpn, 1, Access.NONE, mtu, 0, qpn + PEER_QPN_OFFSET, send_psn=0)
    host.send(incoming_cnp(qpn))
    for _ in range(40):
        await host.step()
    assert int(dut.rate_cuts.value) == 3, f"{int(dut.rate_cuts.value)} cuts"
    first = len(host.sent)
    wanted += 6
    await run_to_frames(first + 6 * frames_per_wqe)
    frames = host.sent[first:]
    starts = host.sent_cycles[first:]
    # The first frames spend the credit the QP banked while idle (under
    # one frame's worth).
    skip = 4
    gaps = [b - a for a, b in zip(starts[skip:], starts[skip + 1 :])]
    at_rate = [(len(f) + WIRE_OVERHEAD) * 8 / (rate1 * 1e3) / 4e-9 for f in frames[skip:-1]]
    paced3 = sum(gaps) / len(gaps)
    want3 = sum(at_rate) / len(at_rate)
    assert abs(paced3 - want3) / want3 < 0.025, f"{paced3:.2f} cycles a frame, {want3:.2f} at {rate1:.0f} kb/s"
    # A grant of several frames would send them back to back (84 cycles
    # apart at the line rate) and then wait.
    assert min(gaps) > 0.8 * want3, f"frames {gaps} cycles apart, {want3:.2f} at Rc"

    assert int(dut.cnps_received.value) == 4
    assert int(dut.dcqcn_lost.value) == 0
    assert all(accepted for _, accepted in host.post_results), "the send ring refused a WQE"
    dut._log.info(
        "cnp_reaction: %.1f cycles a grant of 4 frames at the line rate, %.2f after the first cut (%.2f wanted), "
        "%.2f after the second (%.2f, alpha %.4f after %d decays); MTU 4096: %.2f cycles a frame (%.2f), "
        "gaps %d to %d",
        line, paced1, want1, paced2, want2, later, decays, paced3, want3, min(gaps), max(gaps),
    )  # fmt: skip


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
        # The host's ready and idle draws have a source of their own, so the
        # traffic of a seed does not change with the host's timing.
        self.host = CoreHost(dut, random.Random(seed + 1000), backpressure, self.setup.memory)
        self.mtu = mtu
        self.qpns = list(range(1, qps + 1))
        self.peers: dict[int, rc_peer.PeerQp] = {}
        self.wr_ids = 0
        self.responses: dict[int, list[rr.Response]] = defaultdict(list)
        self.cqes: list[dict] = []
        self.outcomes: dict[str, int] = defaultdict(int)
        self.voidable: set[int] = set()
        self.frames_sent = 0
        self.checked_frames = 0
        self.checked_cqes = 0
        self.revived = 0

    async def start(self) -> None:
        s, host = self.setup, self.host
        # Each right in regions of its own, so READ data never depends on
        # the order of a later WRITE; each QP's regions are MRs of their own,
        # starting and ending inside a page, so its messages meet MR ends
        # (and a mutated VA or length steps one byte past them); decoys:
        # another PD, no remote right.
        self.targets: dict[int, tuple[mr_rules.Mr, mr_rules.Mr, mr_rules.Mr]] = {}
        for q in self.qpns:
            va = 0x1000000 + q * 0x10000 + 0x200
            self.targets[q] = (
                s.register(16 + q, 1, va, 2048, Access.LOCAL_WRITE | Access.REMOTE_WRITE),
                s.register(32 + q, 1, va + 0x4000, 2048, Access.REMOTE_READ),
                s.register(48 + q, 1, va + 0x8000, 64, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC),
            )
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
        write, read, atomic = (rc_peer.Target(mr.key, mr.base, mr.length) for mr in self.targets[qpn])
        assert write.length >= 3 * self.mtu
        peer = self.peers.get(qpn)
        if peer is None:
            self.peers[qpn] = rc_peer.PeerQp(qpn, self.mtu, write, read, atomic, RECV_BYTES, epsn)
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
        if target in self.rules.qps:
            void_restarted_reads(self.rules.qps[target], self.responses[target], step, self.voidable)
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
            self.peers[qpn].credits = len(self.rules.qps[qpn].rq) - self.peers[qpn].holding_wqes()

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
            compare_responses(qpn, by_qp.get(qpn, []), self.responses.pop(qpn, []), self.voidable)
        self.voidable.clear()


READ_RESPONSES = (rr.OP_READ_FIRST, rr.OP_READ_MIDDLE, rr.OP_READ_LAST, rr.OP_READ_ONLY)


def void_restarted_reads(rules_qp, expected: list[rr.Response], step: rr.Step, voidable: set[int]) -> None:
    """A duplicate READ the rules re-execute restarts the READ its resource
    records: the core (its response queue's OP_DROP_READS) then drops the
    packets of that READ's first answer still queued, which IBA allows (the
    requester takes the restarted answer from its PSN). So those earlier
    packets become optional (their `id`s go into `voidable`)."""
    if step.outcome != rr.Outcome.DUPLICATE or not any(r.opcode in READ_RESPONSES for r in step.responses):
        return
    psn = step.responses[0].psn
    res = next(r for r in reversed(rules_qp.resources) if r.holds(psn))
    for r in expected:
        if r.opcode in READ_RESPONSES and (r.psn - res.psn) & rc_peer.PSN_MASK < res.npsn:
            voidable.add(id(r))


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


def compare_responses(qpn: int, sent: list[dict], expected: list[rr.Response], voidable: set[int] = frozenset()) -> None:
    """The core's responses of one QP against the rules': NAKs, READ
    responses and atomic ACKs one for one and in order (those in
    `voidable` may be missing); each run of ACKs between them may be
    coalesced (IBA 9.7.4): the core sends some of the run's ACKs, in
    order, always its last."""
    got = [frame_key(f) for f in sent]
    want = [response_key(r) for r in expected]
    optional = [id(r) in voidable for r in expected]
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
            if optional[j] and not (i < len(got) and got[i] == want[j]):
                j += 1  # a READ packet voided by a restart
                continue
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


# ---- two cores through a lossy link

class Link:
    """Frames from one core to the other `latency` cycles later; each lost,
    sent twice, or held back (delivered after later ones) at random."""

    def __init__(self, rng: random.Random, loss: float, duplicate: float, reorder: float, latency: int = 25):
        self.rng, self.loss, self.duplicate, self.reorder, self.latency = rng, loss, duplicate, reorder, latency
        self.flight: list[tuple[int, int, bytes]] = []
        self.order = 0
        self.lost = self.duplicated = self.reordered = 0

    def push(self, frame: bytes, cycle: int) -> None:
        rng = self.rng
        if rng.random() < self.loss:
            self.lost += 1
            return
        copies = 1 + (rng.random() < self.duplicate)
        self.duplicated += copies - 1
        for _ in range(copies):
            delay = self.latency
            if rng.random() < self.reorder:
                delay += rng.randrange(50, 400)
                self.reordered += 1
            self.order += 1
            self.flight.append((cycle + delay, self.order, frame))

    def due(self, cycle: int) -> list[bytes]:
        ready = sorted(f for f in self.flight if f[0] <= cycle)
        if ready:
            self.flight = [f for f in self.flight if f[0] > cycle]
        return [frame for _, _, frame in ready]


#: post_* field codes (hdl/src/codes: wqe_kind, send_op_kind, wc_opcode).
VERBS = {
    # verb: (wqe kind, request op, CQE opcode)
    "WRITE": (1, 3, 1), "WRITE_IMM": (1, 4, 1), "SEND": (0, 0, 0), "SEND_IMM": (0, 1, 0), "READ": (2, 5, 2),
    "CMP_SWAP": (3, 6, 3), "FETCH_ADD": (3, 7, 4),
}  # fmt: skip


class Pair:
    """Core A (requester) and core B (responder) of nic_pair_top."""

    def __init__(self, dut, seed: int, qps: int, wqes_per_qp: int, loss: float):
        self.dut, self.rng = dut, random.Random(seed)
        self.mtu, self.qpns, self.wqes_per_qp = 256, list(range(1, qps + 1)), wqes_per_qp
        self.sa, self.sb = Setup(self.rng), Setup(self.rng)
        self.a = CoreHost(Prefixed(dut, "a_"), self.rng, True, self.sa.memory)
        self.b = CoreHost(Prefixed(dut, "b_"), self.rng, True, self.sb.memory)
        self.ab = Link(self.rng, loss, loss, loss)
        self.ba = Link(self.rng, loss, loss, loss)
        self.cycle = 0
        self.sent_seen = {"a": 0, "b": 0}
        self.responses: dict[int, list[rr.Response]] = defaultdict(list)
        self.rules_cqes: list[dict] = []
        self.atomic_orig: dict[tuple[int, int], int] = {}
        self.wqes: dict[int, list[dict]] = defaultdict(list)
        self.rnr_naks = 0
        self.voidable: set[int] = set()
        self.late_receives: list[dict] = []

    async def start(self) -> None:
        sa, sb, a, b = self.sa, self.sb, self.a, self.b
        self.a_source = sa.register(1, 1, 0x100000, 8 * PAGE, Access.NONE)  # local read needs no right
        self.a_sink = sa.register(2, 1, 0x200000, 32 * PAGE, Access.LOCAL_WRITE)
        self.b_write = sb.register(1, 1, 0x100000, 8 * PAGE, Access.LOCAL_WRITE | Access.REMOTE_WRITE)
        self.b_read = sb.register(2, 1, 0x200000, 8 * PAGE, Access.REMOTE_READ)
        self.b_atomic = sb.register(3, 1, 0x300000, PAGE, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC)
        self.b_recv = sb.register(4, 1, 0x400000, 32 * PAGE, Access.LOCAL_WRITE)
        sa.allow(a)
        a.allow_reads.add(MEMORY_BASE, MEMORY_SIZE)  # the requester reads its payloads under L_Keys
        sb.allow(b)
        self.a_initial = sa.memory.copy()
        self.rules_memory = sb.memory.copy()
        self.rules = rr.Responder(sb.table, self.rules_memory)
        cocotb.start_soon(Clock(self.dut.clk, 4, unit="ns").start())
        self.dut.rst.value = 1
        await a.start(clock_and_reset=False)
        await b.start(clock_and_reset=False)
        await a.tick()
        self.dut.rst.value = 0
        await a.until(self.dut.a_cfg_ready, 4096, "a: cfg_ready")
        await b.until(self.dut.b_cfg_ready, 4096, "b: cfg_ready")
        await a.load_mrs(sa.table)
        await b.load_mrs(sb.table)
        for qpn in self.qpns:
            psn = self.rng.getrandbits(24)
            await configure_qp(a, qpn, 1, RIGHTS, self.mtu, 0, qpn, send_psn=psn, timeout=1)
            await configure_qp(b, qpn, 1, RIGHTS, self.mtu, psn, qpn, timeout=1)
            self.rules.add_qp(rr.QpConfig(qpn, 1, RIGHTS, self.mtu, psn, 0, 3, qpn, 1))
            self.post_verbs(qpn, psn)

    def post_verbs(self, qpn: int, psn: int) -> None:
        """The QP's send WQEs, each with its PSN, and the receive WQEs its
        SENDs need (posted on B before the run)."""
        rng, share = self.rng, lambda mr: mr.length // len(self.qpns)  # noqa: E731
        base = lambda mr: mr.base + (qpn - 1) * share(mr)  # noqa: E731
        for i in range(self.wqes_per_qp):
            verb = rng.choice(list(VERBS))
            length = 8 if verb in ("CMP_SWAP", "FETCH_ADD") else rng.choice([0, rng.randrange(1, 1025)])
            kind, op, cqe_opcode = VERBS[verb]
            # Each READ and atomic result has a place of its own in A's sink.
            local = base(self.a_sink if verb in ("READ", "CMP_SWAP", "FETCH_ADD") else self.a_source)
            local += {"READ": 1024 * i, "CMP_SWAP": 12288 + 8 * i, "FETCH_ADD": 12288 + 8 * i}.get(verb, 0)
            remote = {"READ": base(self.b_read) + rng.randrange(0, share(self.b_read) - length + 1),
                      "CMP_SWAP": base(self.b_atomic) // 8 * 8, "FETCH_ADD": base(self.b_atomic) // 8 * 8}.get(
                verb, base(self.b_write) + rng.randrange(0, share(self.b_write) - length + 1))  # fmt: skip
            rkey = {"READ": self.b_read, "CMP_SWAP": self.b_atomic, "FETCH_ADD": self.b_atomic}.get(verb, self.b_write)
            lkey = self.a_sink if verb in ("READ", "CMP_SWAP", "FETCH_ADD") else self.a_source
            npsn = rc_peer.read_packets(length, self.mtu) if verb not in ("CMP_SWAP", "FETCH_ADD") else 1
            post = {
                "qpn": qpn, "kind": kind, "opcode": cqe_opcode, "npsn": npsn, "len": length, "signaled": 1,
                "status": 0, "lkey": lkey.key, "va": local, "op": op, "remote_va": remote, "rkey": rkey.key,
                "imm": rng.getrandbits(32), "compare": rng.choice([0, rng.getrandbits(64)]),
                "swap_add": rng.getrandbits(64), "solicited": 0,
            }  # fmt: skip
            self.a.posts.append(post)
            self.wqes[qpn].append({**post, "verb": verb, "psn": psn})
            psn = (psn + npsn) & rc_peer.PSN_MASK

    async def post_receives(self, share: float) -> None:
        """Posts `share` of the receive WQEs B's QPs need before the run;
        the rest wait in `late_receives` (so SENDs meet RNR NAKs first)."""
        self.late_receives = []
        for qpn in self.qpns:
            needed = sum(w["verb"].startswith("SEND") or w["verb"] == "WRITE_IMM" for w in self.wqes[qpn])
            for n in range(needed):
                va = self.b_recv.base + ((qpn - 1) * 16 + n) * 1024
                wqe = {"qpn": qpn, "wr_id": qpn << 16 | n, "lkey": self.b_recv.key, "va": va, "len": 1024}
                if n < needed * share:
                    assert await self.b.post_recv(**{k if k != "len" else "length": v for k, v in wqe.items()})
                    self.rules.post_recv(qpn, rr.RecvWqe(wqe["wr_id"], wqe["lkey"], va, 1024))
                else:
                    self.late_receives.append(wqe)

    async def step(self) -> None:
        a, b = self.a, self.b
        offered = a.drive(), b.drive()
        await ReadOnly()
        a.sample(offered[0])
        b.sample(offered[1])
        await RisingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)
        a.cycle += 1
        b.cycle += 1
        self.cycle += 1
        for name, host, link in (("a", a, self.ab), ("b", b, self.ba)):
            for frame in host.sent[self.sent_seen[name] :]:
                link.push(frame, self.cycle)
            self.sent_seen[name] = len(host.sent)
        if self.late_receives and self.rnr_naks and self.b_quiet():
            # Posted while nothing is on its way into B, so the rules and the
            # core see the WQEs at the same point of B's request stream; the
            # link holds frames for B until the core has taken them all.
            for wqe in self.late_receives:
                b.recv_posts.append(wqe)
                self.rules.post_recv(wqe["qpn"], rr.RecvWqe(wqe["wr_id"], wqe["lkey"], wqe["va"], wqe["len"]))
            self.late_receives = []
        if b.recv_posts or b.recv_answers_due:
            return
        for frame in self.ab.due(self.cycle):
            b.send(frame)
            step = self.rules.receive(frame)
            f = rules.decode(frame).fields
            target = f["dest_qp"]
            if target in self.rules.qps:
                void_restarted_reads(self.rules.qps[target], self.responses[target], step, self.voidable)
            self.responses[target] += step.responses
            self.rules_cqes += [c.__dict__ for c in step.cqes]
            self.rnr_naks += step.outcome == rr.Outcome.NAK_RNR
            if step.outcome == rr.Outcome.EXECUTED and f["opcode"] in (rc_peer.CMP_SWAP, rc_peer.FETCH_ADD):
                self.atomic_orig[(target, f["psn"])] = step.responses[0].orig
        for frame in self.ba.due(self.cycle):
            a.send(frame)

    def b_quiet(self) -> bool:
        """Nothing for B in the link's next cycles, B's receive stream
        empty for a while (its pipeline drained)."""
        b = self.b
        soon = any(due <= self.cycle + 2 for due, _, _ in self.ab.flight)
        return not (soon or b.rx or b.rx_beats) and self.cycle - b.last_rx_take > 200

    def idle(self) -> bool:
        return not (self.a.busy() or self.b.busy() or self.ab.flight or self.ba.flight or self.late_receives)

    async def run(self, limit: int) -> None:
        want = sum(len(w) for w in self.wqes.values())
        quiet = 0
        while len(self.a.send_cqes) < want or quiet < 2000:
            await self.step()
            quiet = quiet + 1 if self.idle() and len(self.a.send_cqes) >= want else 0
            if self.cycle >= limit:
                missing = []
                for qpn, wqes in self.wqes.items():
                    done = sum(c["qpn"] == qpn for c in self.a.send_cqes)
                    missing += [(qpn, i, w["verb"], w["len"], w["psn"]) for i, w in enumerate(wqes[done:], done)]
                raise AssertionError(
                    f"{len(self.a.send_cqes)} of {want} send CQEs after {limit} cycles "
                    f"(lost {self.ab.lost + self.ba.lost}, duplicated {self.ab.duplicated + self.ba.duplicated}); "
                    f"waiting (qpn, index, verb, length, psn): {missing}"
                )

    def check(self) -> None:
        a, b = self.a, self.b
        assert all(accepted for _, accepted in a.post_results), "a send ring refused a WQE"
        # B: memory, receive CQEs, responses, as the rules say of what it received.
        assert b.memory.data == self.rules_memory.data, "B's memory differs from the rules'"
        for qpn in self.qpns:
            mine = [c for c in b.cqes if c["qpn"] == qpn]
            assert mine == [c for c in self.rules_cqes if c["qpn"] == qpn], f"QP {qpn}: B's receive CQEs"
        by_qp: dict[int, list[dict]] = defaultdict(list)
        for frame in b.sent:
            v = rules.decode(frame)
            assert v.accepted, f"B sent a frame the rules drop ({v.reason.name})"
            by_qp[v.fields["dest_qp"]].append({**v.fields, "payload": v.payload})
        for qpn in self.qpns:
            compare_responses(qpn, by_qp.get(qpn, []), self.responses.get(qpn, []), self.voidable)
        # A: one successful CQE per WQE, in posting order; its memory.
        expected = self.a_initial.copy()
        for qpn in self.qpns:
            cqes = [c for c in a.send_cqes if c["qpn"] == qpn]
            wqes = self.wqes[qpn]
            got = [(c["status"], c["opcode"], c["byte_len"]) for c in cqes]
            want = [("SUCCESS", WC_OPCODE_NAMES[w["opcode"]], w["len"]) for w in wqes]
            assert got == want, f"QP {qpn}: A's send CQEs\n  core  {got}\n  verbs {want}"
            for w in wqes:
                if w["verb"] == "READ":
                    mr = self.b_read
                    data = b"".join(self.rules_memory.read(s.phys, s.length)
                                    for s in self.sb.table.segments(mr, w["remote_va"], w["len"]))  # fmt: skip
                elif w["verb"] in ("CMP_SWAP", "FETCH_ADD"):
                    data = self.atomic_orig[(qpn, w["psn"])].to_bytes(8, "little")
                else:
                    continue
                for s in self.sa.table.segments(self.a_sink, w["va"], len(data)):
                    expected.write(s.phys, data[: s.length])
                    data = data[s.length :]
        if a.memory.data != expected.data:
            at = next(i for i, (x, y) in enumerate(zip(a.memory.data, expected.data)) if x != y)
            raise AssertionError(f"A's memory differs from the verbs' results first at {MEMORY_BASE + at:#x}")


WC_OPCODE_NAMES = ["SEND", "RDMA_WRITE", "RDMA_READ", "COMP_SWAP", "FETCH_ADD", "RECV", "RECV_RDMA_WITH_IMM"]


@cocotb.test()
async def system_lossy(dut):
    # Lossless with every receive WQE posted; then 3 % loss, duplication and
    # reordering each way with half the receive WQEs posted late (RNR NAKs,
    # retries after the RNR timer).
    for seed, loss, posted in ((4, 0.0, 1.0), (5, 0.03, 0.5)):
        pair = Pair(dut, seed, qps=8, wqes_per_qp=12, loss=loss)
        await pair.start()
        await pair.post_receives(posted)
        await pair.run(limit=60_000 if loss == 0 else 400_000)
        pair.check()
        assert (pair.rnr_naks > 0) == (posted < 1), f"{pair.rnr_naks} RNR NAKs"
        dut._log.info(
            "loss %.2f: %d WQEs in %d cycles, A sent %d frames, B %d; lost %d, duplicated %d, reordered %d; "
            "%d RNR NAKs",
            loss, len(pair.a.send_cqes), pair.cycle, len(pair.a.sent), len(pair.b.sent),
            pair.ab.lost + pair.ba.lost, pair.ab.duplicated + pair.ba.duplicated,
            pair.ab.reordered + pair.ba.reordered, pair.rnr_naks,
        )  # fmt: skip
