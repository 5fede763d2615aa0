"""The host around one exported nic_core in a cocotb bench: its memory, its
DMA engine, its driver's configuration writes and the MAC's two streams.

What: `CoreHost(dut, rng, backpressure)` on tests/cocotb/tops/nic_core_top.sv.
- `HostMemory`: a window of physical memory (bytes). The DMA ports serve
  it: read requests (`dma_req_*`) are answered after a random latency as
  512-bit beats of one tag in order (byte 0 in lane 0, `rd_last` on the
  last), the answers of different tags in any order; write bursts
  (`dmaw_*`) land byte by byte as `keep` says. Every DMA access is checked
  at once against the regions the bench allows (`allow_reads`,
  `allow_writes`).
- The driver's writes, through the ports the module doc of nic_core
  names: MR table and MTT (`cfg_*`), both directions' QP contexts
  (`ctx_*`), the QP's address record (`addr_*`), response-queue commands
  (`queue_*`) and receive WQEs (`rq_post_*`).
- `send(frame)` queues a frame for `s_axis`; frames the core sends on
  `m_axis` are collected whole in `sent`; receive CQEs in `cqes`.
- `step()` is one clock cycle of all of it: inputs driven after the
  falling edge, outputs sampled in the ReadOnly phase before the rising
  edge (so a handshake is the value pair seen there).

Why: the system and hostile-traffic benches (nic_core_bench.py) need a
host that owes nothing to the project's Rust model: the port contracts
come from the RTL's module docs, the expectations from the rules modules.

Backpressure: with `backpressure`, the frame and CQE sinks and the DMA
request and write ports drop ready at random, the frame source and the
read data insert idle cycles.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

CLOCK_NS = 4
BEAT_BYTES = 64
KEEP_ALL = (1 << BEAT_BYTES) - 1
RECORD_MASK = (1 << 288) - 1

#: The core's port codes (hdl/src/codes: qp_state, mtu; hdl/src/responder/
#: response_queue.rs: OP_CONFIGURE, whose mtu_code is log2(MTU) - 8).
QP_STATE = {"RESET": 0, "INIT": 1, "RTR": 2, "RTS": 3, "ERR": 4}
MTU_IBA_CODE = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
QUEUE_OP_CONFIGURE = 0
#: The receive CQE port's codes (hdl/src/codes: wc_status, wc_opcode).
WC_STATUS = [
    "SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_PROT_ERR", "WR_FLUSH_ERR", "BAD_RESP_ERR",
    "LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR",
]  # fmt: skip
WC_OPCODE = ["SEND", "RDMA_WRITE", "RDMA_READ", "COMP_SWAP", "FETCH_ADD", "RECV", "RECV_RDMA_WITH_IMM"]

CONTEXT_FIELDS = (
    "state", "access", "path_mtu", "pkey", "pd", "dest_qpn", "addr_index", "sq_next_psn", "sq_send_psn",
    "sq_una_psn", "sq_max_sent_psn", "sq_ackreq_end_psn", "timeout", "retry_cnt", "rnr_retry", "retry_left",
    "rnr_left", "max_rd_atomic", "rd_atomic_outstanding", "rq_epsn", "rq_msn", "nak_sent", "max_dest_rd_atomic",
    "min_rnr_timer", "in_progress",
)  # fmt: skip
ADDRESS_FIELDS = ("pd", "dest_qp", "pkey", "eth_dst", "eth_src", "ipv6", "ip_src", "ip_dst", "dscp", "ecn", "udp_src_port")


#: The ready inputs `step` drives (each low at random under backpressure).
READY_INPUTS = ("m_axis_tready", "rcqe_ready", "dma_req_ready", "dmaw_ready", "scqe_ready")
STEP_SIGNALS = (
    *READY_INPUTS, "rq_post_valid", "rq_post_ready", "rq_post_done", "rq_post_accepted", "post_valid", "post_ready", "post_result_valid", "post_result_qpn", "post_result_accepted",
    "scqe_valid", "scqe_qpn", "scqe_slot", "scqe_status", "scqe_opcode", "scqe_byte_len", "s_axis_tdata", "s_axis_tkeep", "s_axis_tlast", "s_axis_tvalid", "s_axis_tready",
    "m_axis_tvalid", "rcqe_valid", "dma_req_valid", "dma_rd_ready", "dmaw_valid", "dma_rd_valid", "dma_rd_tag",
    "dma_rd_last",
)  # fmt: skip


class HostMemory:
    """Physical memory [base, base + size); an access outside it is a bench
    error that names it."""

    def __init__(self, base: int, size: int, fill: int = 0xA5):
        self.base = base
        self.data = bytearray([fill]) * size

    def _at(self, phys: int, length: int) -> int:
        offset = phys - self.base
        assert 0 <= offset and offset + length <= len(self.data), f"access {phys:#x}+{length} outside host memory"
        return offset

    def read(self, phys: int, length: int) -> bytes:
        offset = self._at(phys, length)
        return bytes(self.data[offset : offset + length])

    def write(self, phys: int, data: bytes) -> None:
        offset = self._at(phys, len(data))
        self.data[offset : offset + len(data)] = data

    def copy(self) -> "HostMemory":
        other = HostMemory.__new__(HostMemory)
        other.base, other.data = self.base, bytearray(self.data)
        return other


class Regions:
    """Physical byte ranges [start, end)."""

    def __init__(self):
        self.ranges: list[tuple[int, int]] = []

    def add(self, start: int, length: int) -> None:
        self.ranges.append((start, start + length))

    def covers(self, start: int, length: int) -> bool:
        # Pieces may be split over adjacent ranges (an MR's pages).
        position, end = start, start + length
        while position < end:
            for lo, hi in self.ranges:
                if lo <= position < hi:
                    position = hi
                    break
            else:
                return False
        return True


@dataclass
class DmaRead:
    tag: int
    phys: int
    length: int
    ready_at: int
    sent: int = 0


def random_pause(rng: random.Random, probability: float) -> bool:
    return probability > 0 and rng.random() < probability


class Offer:
    """Items (dicts of `prefix` + field values) offered one at a time on a
    valid/ready port: an offered item stays offered, unchanged, until it
    is taken; between items the port idles at random when `may_pause`."""

    def __init__(self, host: "CoreHost", prefix: str, may_pause: bool):
        self.host, self.prefix, self.may_pause = host, prefix, may_pause
        self.items: deque[dict] = deque()
        self.presented: dict | None = None

    def drive(self) -> dict | None:
        host, items = self.host, self.items
        offered_before = bool(items) and self.presented is items[0]
        # (The idle draw only when it can matter, so a seed's draws stay put.)
        if not items or not (offered_before or not (self.may_pause and random_pause(host.rng, host.pause))):
            host._drive(f"{self.prefix}valid", 0)
            return None
        item = items[0]
        if self.presented is not item:
            self.presented = item
            for name, value in item.items():
                getattr(host.dut, self.prefix + name).value = value
        host._drive(f"{self.prefix}valid", 1)
        return item

    def taken(self) -> dict:
        self.presented = None
        return self.items.popleft()


class Prefixed:
    """One core's ports in a top with several: `name` is `prefix + name`
    (the clock and reset are shared)."""

    def __init__(self, dut, prefix: str):
        self._dut, self._prefix = dut, prefix

    def __getattr__(self, name: str):
        shared = name in ("clk", "rst") or name.startswith("_")
        return getattr(self._dut, name if shared else self._prefix + name)


class CoreHost:
    def __init__(self, dut, rng: random.Random, backpressure: bool, memory: HostMemory):
        self.dut = dut
        self.rng = rng
        self.memory = memory
        self.pause = 0.25 if backpressure else 0.0
        self.read_latency = (20, 120) if backpressure else (40, 40)
        self.allow_reads = Regions()
        self.allow_writes = Regions()
        self.cycle = 0
        self.rx: deque[bytes] = deque()
        self.rx_beats: deque[tuple[int, int, bool]] = deque()
        self.sent: list[bytes] = []
        # The cycle (of `step`'s count) each frame of `sent` ended in.
        self.sent_cycles: list[int] = []
        self._tx_frame = bytearray()
        self.cqes: list[dict] = []
        self.reads: deque[DmaRead] = deque()
        self._write_burst: list[int] | None = None
        self.last_activity = 0
        # Handles looked up once, and the inputs as last written.
        self._handles = {name: getattr(dut, name) for name in STEP_SIGNALS}
        self._driven: dict[str, int] = {}
        self._rx_presented = None
        # Send WQEs (`post_*`, idling at random) and receive WQEs posted
        # while traffic runs (`rq_post_*`; `post_recv` is the one-at-a-time
        # version), each queue's items as its port's fields.
        self.post_port = Offer(self, "post_", may_pause=True)
        self.recv_port = Offer(self, "rq_post_", may_pause=False)
        self.posts, self.recv_posts = self.post_port.items, self.recv_port.items
        self.post_results: list[tuple[int, int]] = []
        self._read_offered: DmaRead | None = None
        self.recv_answers_due = 0
        self.last_rx_take = 0
        self.send_cqes: list[dict] = []
        self._rising, self._falling = RisingEdge(dut.clk), FallingEdge(dut.clk)

    # ---- clock, reset, configuration

    async def start(self, clock_and_reset: bool = True) -> None:
        """Inputs idle, then (unless a bench with two cores does it once
        for both) the clock and a reset; then waits for the MR tables'
        reset sweep."""
        dut = self.dut
        if clock_and_reset:
            cocotb.start_soon(Clock(dut.clk, CLOCK_NS, unit="ns").start())
        for name in (
            "s_axis_tvalid", "m_axis_tready", "ctx_rsp_valid", "ctx_req_valid", "queue_valid", "addr_write",
            "cfg_mr_write", "cfg_mtt_write", "rq_post_valid", "rcqe_ready", "post_valid", "scqe_ready",
            "dma_req_ready", "dma_rd_valid", "dmaw_ready", "out_ready", "stat_select",
        ):  # fmt: skip
            getattr(dut, name).value = 0
        dut.ctx_mask.value = RECORD_MASK
        dut.cfg_window.value = 64
        dut.cfg_ack_req_interval.value = 0
        dut.out_ready.value = 1
        if clock_and_reset:
            dut.rst.value = 1
            await RisingEdge(dut.clk)
            await FallingEdge(dut.clk)
            dut.rst.value = 0
            await self.until(dut.cfg_ready, 4096, "cfg_ready after reset")

    async def until(self, signal, limit: int, what: str) -> None:
        """Waits for `signal` high before a rising edge (inputs as driven);
        returns after that edge, in the falling half of the next cycle."""
        for _ in range(limit):
            await ReadOnly()
            high = int(signal.value)
            await RisingEdge(self.dut.clk)
            await FallingEdge(self.dut.clk)
            if high:
                return
        raise AssertionError(f"{what} did not come within {limit} cycles")

    async def load_mrs(self, table) -> None:
        """Writes every MR of a `mr_rules.MrTable` and its MTT entries."""
        dut = self.dut
        for mr in table.entries.values():
            for name, value in (
                ("index", mr.index), ("state", int(mr.state)), ("variant", mr.variant), ("pd", mr.pd),
                ("base_va", mr.base), ("len", mr.length), ("access", int(mr.access)),
                ("page_shift", mr.page_shift), ("mtt_base", mr.mtt_base),
            ):  # fmt: skip
                getattr(dut, f"cfg_mr_{name}").value = value
            dut.cfg_mr_write.value = 1
            await self.tick()
        dut.cfg_mr_write.value = 0
        for index, page in table.mtt.items():
            dut.cfg_mtt_index.value = index
            dut.cfg_mtt_addr.value = page
            dut.cfg_mtt_write.value = 1
            await self.tick()
        dut.cfg_mtt_write.value = 0

    async def tick(self) -> None:
        await RisingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)

    async def write_context(self, side: str, qpn: int, fields: dict[str, int]) -> None:
        """One whole-record write of QP `qpn`'s context on `side` ("rsp"
        or "req"); fields not given are zero."""
        dut = self.dut
        unknown = set(fields) - set(CONTEXT_FIELDS)
        assert not unknown, f"no such context field: {unknown}"
        for name in CONTEXT_FIELDS:
            getattr(dut, f"ctx_{name}").value = fields.get(name, 0)
        dut.ctx_qpn.value = qpn
        valid = getattr(dut, f"ctx_{side}_valid")
        valid.value = 1
        await self.until(getattr(dut, f"ctx_{side}_done"), 64, f"ctx_{side}_done of QP {qpn}")
        valid.value = 0
        await self.tick()

    async def write_address(self, qpn: int, fields: dict[str, int]) -> None:
        dut = self.dut
        for name in ADDRESS_FIELDS:
            getattr(dut, f"addr_{name}").value = fields.get(name, 0)
        dut.addr_qpn.value = qpn
        dut.addr_write.value = 1
        await self.tick()
        dut.addr_write.value = 0

    async def queue_command(self, op: int, qpn: int, mtu_code: int) -> None:
        dut = self.dut
        for name in ("syndrome", "psn", "msn", "value", "rkey", "len"):
            getattr(dut, f"queue_{name}").value = 0
        dut.queue_op.value, dut.queue_qpn.value, dut.queue_mtu_code.value = op, qpn, mtu_code
        dut.queue_valid.value = 1
        await self.until(dut.queue_ready, 256, f"queue_ready for QP {qpn}")
        dut.queue_valid.value = 0

    async def post_recv(self, qpn: int, wr_id: int, lkey: int, va: int, length: int) -> bool:
        """Posts one receive WQE; whether its ring took it (False: full)."""
        dut = self.dut
        dut.rq_post_qpn.value, dut.rq_post_wr_id.value = qpn, wr_id
        dut.rq_post_lkey.value, dut.rq_post_va.value, dut.rq_post_len.value = lkey, va, length
        dut.rq_post_valid.value = 1
        await self.until(dut.rq_post_ready, 1024, f"rq_post_ready for QP {qpn}")
        dut.rq_post_valid.value = 0
        for _ in range(32):
            await ReadOnly()
            done, accepted = int(dut.rq_post_done.value), int(dut.rq_post_accepted.value)
            await self.tick()
            if done:
                return bool(accepted)
        raise AssertionError(f"rq_post_done for QP {qpn} did not come")

    # ---- traffic

    def send(self, frame: bytes) -> None:
        self.rx.append(frame)

    def busy(self) -> bool:
        return bool(
            self.rx or self.rx_beats or self.reads or self._tx_frame or self._write_burst is not None or self.posts
        )

    def _next_rx_beats(self) -> None:
        frame = self.rx.popleft()
        for at in range(0, len(frame), BEAT_BYTES):
            chunk = frame[at : at + BEAT_BYTES]
            last = at + BEAT_BYTES >= len(frame)
            self.rx_beats.append((int.from_bytes(chunk, "little"), (1 << len(chunk)) - 1, last))

    def _drive(self, name: str, value: int) -> None:
        """Writes an input only when it changes (a VPI write per cycle per
        port would cost more than the core's evaluation)."""
        if self._driven.get(name) != value:
            self._driven[name] = value
            self._handles[name].value = value

    async def step(self) -> None:
        """One cycle: drive, sample before the edge, take the edge."""
        offered = self.drive()
        await ReadOnly()
        self.sample(offered)
        await self._rising
        await self._falling
        self.cycle += 1

    def drive(self):
        """This cycle's inputs (after the falling edge); what was offered."""
        h, rng, pause = self._handles, self.rng, self.pause
        # Inputs.
        if not self.rx_beats and self.rx:
            self._next_rx_beats()
        # A source idles only between beats: an offered beat stays offered,
        # unchanged, until it is taken (AXI-Stream; the core's event
        # sources rely on it).
        offered_before = bool(self.rx_beats) and self._rx_presented is self.rx_beats[0]
        rx_offer = bool(self.rx_beats) and (offered_before or not random_pause(rng, pause))
        if rx_offer and self._rx_presented is not self.rx_beats[0]:
            self._rx_presented = beat_in = self.rx_beats[0]
            h["s_axis_tdata"].value, h["s_axis_tkeep"].value = beat_in[0], beat_in[1]
            self._drive("s_axis_tlast", int(beat_in[2]))
        self._drive("s_axis_tvalid", int(rx_offer))
        ready = {name: int(not random_pause(rng, pause)) for name in READY_INPUTS}
        for name, value in ready.items():
            self._drive(name, value)
        beat = self._offer_read_beat()
        post = self.post_port.drive()
        recv = self.recv_port.drive()
        return rx_offer, ready, beat, post, recv

    def sample(self, offered) -> None:
        """The outputs in the ReadOnly phase before the rising edge."""
        h = self._handles
        rx_offer, ready, beat, post, recv = offered
        if recv is not None and h["rq_post_ready"].value:
            self.recv_port.taken()
            self.recv_answers_due += 1
        if h["rq_post_done"].value:
            self.recv_answers_due -= 1
            assert h["rq_post_accepted"].value, f"cycle {self.cycle}: a receive ring refused a WQE"
        if rx_offer and h["s_axis_tready"].value:
            self.rx_beats.popleft()
            self.last_activity = self.last_rx_take = self.cycle
        if ready["m_axis_tready"] and h["m_axis_tvalid"].value:
            self._take_tx_beat()
        if ready["rcqe_ready"] and h["rcqe_valid"].value:
            self._take_cqe()
        if ready["dma_req_ready"] and h["dma_req_valid"].value:
            self._take_read_request()
        if beat is not None and h["dma_rd_ready"].value:
            self._read_beat_taken(beat)
        if ready["dmaw_ready"] and h["dmaw_valid"].value:
            self._take_write_beat()
        if post is not None and h["post_ready"].value:
            self.post_port.taken()
            self.last_activity = self.cycle
        if h["post_result_valid"].value:
            result = (int(h["post_result_qpn"].value), int(h["post_result_accepted"].value))
            self.post_results.append(result)
        if ready["scqe_ready"] and h["scqe_valid"].value:
            self.send_cqes.append(
                {
                    "qpn": int(h["scqe_qpn"].value),
                    "slot": int(h["scqe_slot"].value),
                    "status": WC_STATUS[int(h["scqe_status"].value)],
                    "opcode": WC_OPCODE[int(h["scqe_opcode"].value)],
                    "byte_len": int(h["scqe_byte_len"].value),
                }
            )
            self.last_activity = self.cycle

    def _take_tx_beat(self) -> None:
        dut = self.dut
        keep = int(dut.m_axis_tkeep.value)
        lanes = keep.bit_length()
        assert keep == (1 << lanes) - 1, f"cycle {self.cycle}: m_axis_tkeep {keep:#x} not contiguous from lane 0"
        last = int(dut.m_axis_tlast.value)
        assert last or lanes == BEAT_BYTES, f"cycle {self.cycle}: a partial beat that is not a frame's last"
        self._tx_frame += int(dut.m_axis_tdata.value).to_bytes(BEAT_BYTES, "little")[:lanes]
        if last:
            self.sent.append(bytes(self._tx_frame))
            self.sent_cycles.append(self.cycle)
            self._tx_frame = bytearray()
        self.last_activity = self.cycle

    def _take_cqe(self) -> None:
        dut = self.dut
        self.cqes.append(
            {
                "qpn": int(dut.rcqe_qpn.value),
                "wr_id": int(dut.rcqe_wr_id.value),
                "status": WC_STATUS[int(dut.rcqe_status.value)],
                "opcode": WC_OPCODE[int(dut.rcqe_opcode.value)],
                "byte_len": int(dut.rcqe_byte_len.value),
                "imm": int(dut.rcqe_imm.value) if int(dut.rcqe_imm_valid.value) else None,
            }
        )
        self.last_activity = self.cycle

    def _take_read_request(self) -> None:
        dut = self.dut
        tag, phys, length = int(dut.dma_req_tag.value), int(dut.dma_req_addr.value), int(dut.dma_req_len.value)
        assert length > 0, f"cycle {self.cycle}: a DMA read of 0 bytes (tag {tag})"
        assert self.allow_reads.covers(phys, length), (
            f"cycle {self.cycle}: DMA read {phys:#x}+{length} outside every readable region"
        )
        assert all(r.tag != tag for r in self.reads), f"cycle {self.cycle}: tag {tag:#x} reused while in flight"
        self.reads.append(DmaRead(tag, phys, length, self.cycle + self.rng.randint(*self.read_latency)))
        self.last_activity = self.cycle

    def _offer_read_beat(self) -> DmaRead | None:
        dut = self.dut
        # A request in progress keeps the port; another may start only at a
        # request boundary (beats of one tag in order, tags in any order).
        if self._read_offered is not None:
            choice = self._read_offered  # offered and not taken: offered again
        else:
            due = [r for r in self.reads if r.ready_at <= self.cycle]
            started = [r for r in due if r.sent]
            choice = started[0] if started else (self.rng.choice(due) if due else None)
            if choice is None or random_pause(self.rng, self.pause):
                self._drive("dma_rd_valid", 0)
                return None
        self._read_offered = choice
        at = choice.sent * BEAT_BYTES
        chunk = self.memory.read(choice.phys + at, min(BEAT_BYTES, choice.length - at))
        self._drive("dma_rd_valid", 1)
        self._drive("dma_rd_tag", choice.tag)
        dut.dma_rd_data.value = int.from_bytes(chunk, "little")
        self._drive("dma_rd_last", int(at + BEAT_BYTES >= choice.length))
        return choice

    def _read_beat_taken(self, read: DmaRead) -> None:
        self._read_offered = None
        read.sent += 1
        if read.sent * BEAT_BYTES >= read.length:
            self.reads.remove(read)
        self.last_activity = self.cycle

    def _take_write_beat(self) -> None:
        dut = self.dut
        first, last = int(dut.dmaw_first.value), int(dut.dmaw_last.value)
        req_addr, req_len = int(dut.dmaw_req_addr.value), int(dut.dmaw_req_len.value)
        addr, keep = int(dut.dmaw_addr.value), int(dut.dmaw_keep.value)
        where = f"cycle {self.cycle}: DMA write {req_addr:#x}+{req_len}"
        assert (self._write_burst is None) == bool(first), f"{where}: first {first} out of burst order"
        if first:
            assert 1 <= req_len <= 4096 and (req_addr & 4095) + req_len <= 4096, f"{where}: crosses a page"
            assert self.allow_writes.covers(req_addr, req_len), f"{where}: outside every writable region"
            self._write_burst = []
        assert addr & 63 == 0 and req_addr & ~63 <= addr < req_addr + req_len, f"{where}: beat address {addr:#x}"
        data = int(dut.dmaw_data.value).to_bytes(BEAT_BYTES, "little")
        for lane in range(BEAT_BYTES):
            if keep >> lane & 1:
                byte = addr + lane
                assert req_addr <= byte < req_addr + req_len, f"{where}: keep lane {lane} outside the request"
                self.memory.write(byte, data[lane : lane + 1])
                self._write_burst.append(byte)
        if last:
            expected = list(range(req_addr, req_addr + req_len))
            assert sorted(self._write_burst) == expected, f"{where}: the burst's keep bits do not cover it once"
            self._write_burst = None
        self.last_activity = self.cycle

    async def run_until_quiet(self, quiet_cycles: int, limit: int) -> None:
        """Steps until nothing is pending on the bench's side and the core
        has been silent on every port for `quiet_cycles`; an error after
        `limit` cycles (a hang)."""
        start = self.cycle
        while self.busy() or self.cycle - self.last_activity < quiet_cycles:
            await self.step()
            if self.cycle - start > limit:
                raise AssertionError(
                    f"no quiet after {limit} cycles: {len(self.rx)} frames and {len(self.rx_beats)} beats "
                    f"not taken, {len(self.reads)} reads open"
                )
