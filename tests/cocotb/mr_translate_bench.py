"""cocotb bench for the exported mr_translate (the MR protection checks and
MTT translation; hdl/src/dma/mr_translate.rs).

What: configures MRs through tests/cocotb/tops/mr_translate_top.sv's
configuration port, drives lookups through a cocotbext-axi stream source
and checks every response beat (tag, status, first/last, has_seg, host
address and length of each page segment) against `mr_rules`, a model
written from the IBA Vol. 1 ch. 10.6 memory-region rules:
- protection_matrix: every access kind x key (right, free index, index
  beyond the table aliasing onto the right one, wrong 8-bit variant,
  invalidated MR, deregistered MR) x PD (same, other) x bounds (inside,
  first byte, last byte, whole region, one byte before, one after,
  straddling either end, one byte too long, zero length inside and
  outside, wrap past 2^64 to inside) x rights (granted or not),
  back-to-back or with stalls;
- page_translation: MRs of several pages at page shifts 12, 13, 16 and
  21, unaligned bases, shuffled page lists, an MTT base wrapping at the end
  of the MTT; random in-bounds accesses crossing pages;
- address_top: an MR ending at 2^64 (the block refuses an access ending
  there: a design choice in mr_rules);
- rights_combinations: every legal rights set x every need set x L_Key or
  R_Key (an R_Key access needing no remote right is refused; a request
  needing several rights needs all); 8-byte atomics at every alignment
  (the block does not check it);
- reregistration: an MR used, deregistered (its key invalid), registered
  again with a new variant, PD, bounds and pages (the old key stale, the
  new key translated through the new pages), invalidated and registered
  again; a lookup presented the cycle after a write sees it;
- random_traffic: many MRs, random keys, PDs, rights, bounds and lengths;
- latency_throughput: the first beat 5 cycles after acceptance, one
  single-beat lookup per cycle, a lookup of n pages holding the request
  stream for n - 1 cycles;
- reset_sweep: after reset the configuration port and the request stream
  wait 2^10 cycles, every entry is free, and a reset with lookups in flight
  leaves nothing behind.
Stalls: the source idles at random and the response sink drops resp_ready
at random (the only output with a ready). Run by
tests/cocotb/test_benches.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge, with_timeout
from cocotbext.axi.stream import define_stream

import mr_rules as rules
from bench_harness import pause_at_random, pulse_reset, quiet
from mr_rules import Access, Kind, Mr, MrTable, State, Status

CLOCK_NS = 4
#: The first response beat comes this many cycles after the lookup was
#: accepted (the module doc's five register stages).
LATENCY = 5
SWEEP_CYCLES = rules.MAX_MRS
ALL = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC

REQ_FIELDS = ["key", "va", "len", "pd", "access", "remote", "tag"]
RESP_FIELDS = ["tag", "status", "first", "last", "has_seg", "phys", "len"]
ReqBus, ReqTransaction, ReqSource, _, _ = define_stream(
    "MrReq", signals=[*REQ_FIELDS, "valid", "ready"], valid_signal="valid", ready_signal="ready"
)
RespBus, _, _, RespSink, _ = define_stream(
    "MrResp", signals=[*RESP_FIELDS, "valid", "ready"], valid_signal="valid", ready_signal="ready"
)


@dataclass
class Lookup:
    """One request with a label for messages."""

    label: str
    key: int
    pd: int
    va: int
    length: int
    need: Access
    remote: bool

    @classmethod
    def of(cls, label, kind: Kind, key, pd, va, length):
        return cls(label, key, pd, va, length, kind.need, kind.remote)


class MrBench:
    """The DUT with its request source, response sink and the model."""

    def __init__(self, dut, rng: random.Random, stalls: bool):
        self.dut = dut
        self.rng = rng
        self.model = MrTable()
        cocotb.start_soon(Clock(dut.clk, CLOCK_NS, unit="ns").start())
        self.source = ReqSource(ReqBus.from_prefix(dut, "req"), dut.clk, dut.rst)
        self.sink = RespSink(RespBus.from_prefix(dut, "resp"), dut.clk, dut.rst)
        quiet(self.source, self.sink)
        if stalls:
            pause_at_random(rng, [(self.source, 0.3), (self.sink, 0.4)])
        dut.cfg_mr_write.value = 0
        dut.cfg_mtt_write.value = 0
        self.tag = 0
        self.expected = []

    async def reset(self):
        """Pulse reset and wait out the sweep that frees every entry."""
        await pulse_reset(self.dut, settle_cycles=1)
        await with_timeout(self.wait_cfg_ready(), (SWEEP_CYCLES + 20) * CLOCK_NS, "ns")
        self.model = MrTable()

    async def wait_cfg_ready(self):
        while True:
            await FallingEdge(self.dut.clk)
            if int(self.dut.cfg_ready.value):
                return

    # --- configuration port -------------------------------------------

    async def write_entry(self, mr: Mr, state: State, pages: bool = True, lookups=()):
        """Write MR table entry `mr.index` with `state` and, when `pages`,
        its page list to the MTT (the first page in the same cycle).
        `lookups` are handed to the idle source as the write is presented,
        so the first is presented in the cycle after the writing edge."""
        dut = self.dut
        await FallingEdge(dut.clk)
        assert int(dut.cfg_ready.value), "configuration port not ready"
        if lookups:
            assert self.source.idle()
            self.submit(lookups)
        dut.cfg_mr_write.value = 1
        dut.cfg_mr_index.value = mr.index
        dut.cfg_mr_state.value = int(state)
        dut.cfg_mr_variant.value = mr.variant
        dut.cfg_mr_pd.value = mr.pd
        dut.cfg_mr_base_va.value = mr.base
        dut.cfg_mr_len.value = mr.length
        dut.cfg_mr_access.value = int(mr.access)
        dut.cfg_mr_page_shift.value = mr.page_shift
        dut.cfg_mr_mtt_base.value = mr.mtt_base
        for i, page in enumerate(mr.pages if pages else [None]):
            dut.cfg_mtt_write.value = page is not None
            if page is not None:
                dut.cfg_mtt_index.value = (mr.mtt_base + i) % rules.MTT_ENTRIES
                dut.cfg_mtt_addr.value = page
            await FallingEdge(dut.clk)
            if i == 0 and lookups:
                # The edge just passed wrote the entry; the next one takes
                # the first lookup.
                handshake = int(dut.req_valid.value) and int(dut.req_ready.value)
                assert handshake, "the lookup is not accepted in the cycle after the write"
            dut.cfg_mr_write.value = 0
        dut.cfg_mtt_write.value = 0

    async def register(self, mr: Mr, lookups=()) -> Mr:
        mr.state = State.VALID
        self.model.register(mr)
        await self.write_entry(mr, State.VALID, lookups=lookups)
        return mr

    async def set_state(self, mr: Mr, state: State, lookups=()):
        """Rewrite an entry with every field kept but its state (so the
        block must look at the state, not at a cleared entry); the model's
        entry is `mr` itself."""
        assert self.model.entries[mr.index] is mr
        mr.state = state
        await self.write_entry(mr, state, pages=False, lookups=lookups)

    # --- lookups --------------------------------------------------------

    def request(self, lookup: Lookup):
        self.tag = (self.tag + 1) & 0xFFFF
        return self.tag, ReqTransaction(
            key=lookup.key,
            va=lookup.va,
            len=lookup.length,
            pd=lookup.pd,
            access=int(lookup.need),
            remote=int(lookup.remote),
            tag=self.tag,
        )

    def submit(self, lookups: list[Lookup]):
        """Queue lookups on the source with the model's answers as it
        stands now, for `check`."""
        for lookup in lookups:
            answer = self.model.translate(lookup.key, lookup.pd, lookup.va, lookup.length, lookup.need, lookup.remote)
            tag, txn = self.request(lookup)
            self.expected.append((lookup, tag, answer))
            self.source.send_nowait(txn)

    async def run(self, lookups: list[Lookup]):
        """Send every lookup and check its response beats, in order, against
        the model as it stands now; then that nothing else came out."""
        self.submit(lookups)
        return await self.check()

    async def check(self):
        """Check the response beats of every submitted lookup."""
        expected, self.expected = self.expected, []
        beats = sum(max(1, len(a.segments)) for _, _, a in expected)
        checker = cocotb.start_soon(self._check_all(expected))
        await with_timeout(checker, (8 * beats + 100) * CLOCK_NS, "ns")
        await ClockCycles(self.dut.clk, 20)
        assert self.sink.empty(), f"a response beat beyond the {len(expected)} lookups: {self.sink.recv_nowait()}"
        self.dut._log.info("%d lookups checked (%d beats)", len(expected), beats)
        return [a for _, _, a in expected]

    async def _check_all(self, expected):
        for index, (lookup, tag, answer) in enumerate(expected):
            where = f"lookup {index} ({lookup.label}: key {lookup.key:#x} va {lookup.va:#x} len {lookup.length:#x})"
            want = [(s.phys, s.length) for s in answer.segments] or [None]
            for n, seg in enumerate(want):
                beat = await self.sink.recv()
                at = f"{where} beat {n}"
                assert int(beat.tag) == tag, f"{at}: tag {int(beat.tag)}, expected {tag}"
                status = int(beat.status)
                assert status == answer.status, f"{at}: status {status_name(status)}, expected {answer.status.name}"
                assert int(beat.first) == (n == 0), f"{at}: first {int(beat.first)}"
                assert int(beat.last) == (n == len(want) - 1), f"{at}: last {int(beat.last)} of {len(want)} beats"
                got = (int(beat.phys), int(beat.len))
                if seg is None:
                    assert int(beat.has_seg) == 0 and got == (0, 0), f"{at}: has_seg {int(beat.has_seg)} {got}"
                else:
                    assert int(beat.has_seg) == 1, f"{at}: has_seg 0"
                    assert got == seg, f"{at}: segment ({got[0]:#x}, {got[1]:#x}), expected ({seg[0]:#x}, {seg[1]:#x})"


def status_name(code: int) -> str:
    return Status(code).name if code in Status._value2member_map_ else f"?{code}"


def random_pages(rng: random.Random, count: int, page_shift: int) -> list[int]:
    """Distinct page-aligned host addresses below 2^62, in no order."""
    pages = set()
    while len(pages) < count:
        pages.add(rng.getrandbits(62 - page_shift) << page_shift)
    return list(pages)


def make_mr(rng, index, pd, base, length, access, page_shift=12, mtt_base=None, variant=None) -> Mr:
    count = rules.pages_spanned(base, length, page_shift)
    return Mr(
        index=index,
        variant=rng.randrange(256) if variant is None else variant,
        pd=pd,
        base=base,
        length=length,
        access=Access(access),
        page_shift=page_shift,
        pages=random_pages(rng, count, page_shift),
        mtt_base=rng.randrange(rules.MTT_ENTRIES) if mtt_base is None else mtt_base,
    )


# ---- protection_matrix ---------------------------------------------------

PD = 0x0000_1234
OTHER_PD = 0x0001_1234
#: Rights of the "granted" and "denied" MRs of each kind: the largest legal
#: set with the kind's right and the largest without it (local read needs
#: no right, so its second MR has none at all and still allows it).
RIGHTS = {
    Kind.LOCAL_READ: {"granted": ALL, "denied": Access.NONE},
    Kind.LOCAL_WRITE: {"granted": Access.LOCAL_WRITE, "denied": Access.REMOTE_READ},
    Kind.REMOTE_READ: {"granted": Access.REMOTE_READ, "denied": ALL & ~Access.REMOTE_READ},
    Kind.REMOTE_WRITE: {"granted": Access.LOCAL_WRITE | Access.REMOTE_WRITE, "denied": ALL & ~Access.REMOTE_WRITE},
    Kind.REMOTE_ATOMIC: {"granted": Access.LOCAL_WRITE | Access.REMOTE_ATOMIC, "denied": ALL & ~Access.REMOTE_ATOMIC},
}
KEY_CASES = ["right", "free_index", "beyond_table", "wrong_variant", "invalidated", "deregistered"]


def bound_cases(mr: Mr) -> dict[str, tuple[int, int]]:
    """(va, length) of every bounds case of the matrix."""
    end = mr.base + mr.length
    wrap_va = (1 << 64) - 0x100
    return {
        "inside": (mr.base + 0x123, 0x1800),
        "first_byte": (mr.base, 1),
        "last_byte": (end - 1, 1),
        "whole": (mr.base, mr.length),
        "one_before": (mr.base - 1, 1),
        "one_after": (end, 1),
        "straddle_end": (end - 4, 8),
        "straddle_start": (mr.base - 4, 8),
        "one_too_long": (mr.base, mr.length + 1),
        "zero_inside": (mr.base + 0x10, 0),
        "zero_outside": (end + 0x1000, 0),
        # va + len wraps past 2^64 to 16 bytes into the region.
        "wrap": (wrap_va, (1 << 64) - wrap_va + mr.base + 0x10),
    }


#: Short names (cocotb names a test point by a value of at most 10 characters).
KINDS = {
    "lread": Kind.LOCAL_READ,
    "lwrite": Kind.LOCAL_WRITE,
    "rread": Kind.REMOTE_READ,
    "rwrite": Kind.REMOTE_WRITE,
    "ratomic": Kind.REMOTE_ATOMIC,
}


@cocotb.test()
@cocotb.parametrize(kind=list(KINDS), traffic=["burst", "stalls"])
async def protection_matrix(dut, kind: str, traffic: str):
    """Every key x PD x bounds x rights case of one access kind, shuffled."""
    access_kind = KINDS[kind]
    rng = random.Random(f"protection_matrix-{kind}-{traffic}")
    bench = MrBench(dut, rng, stalls=traffic == "stalls")
    await bench.reset()
    lookups = []
    for r, (rights_name, rights) in enumerate(RIGHTS[access_kind].items()):
        # Three MRs of one shape (3.6 pages of 4 KiB from an unaligned base):
        # one valid, one invalidated, one registered then deregistered.
        base = 0x0123_4567 + r * 0x10_0000
        valid, invalidated, deregistered = (
            make_mr(rng, 100 + 10 * r + i, PD, base, 0x3A5C, rights, mtt_base=1000 * (3 * r + i)) for i in range(3)
        )
        for mr in (valid, invalidated, deregistered):
            await bench.register(mr)
        await bench.set_state(invalidated, State.INVALIDATED)
        await bench.set_state(deregistered, State.FREE)
        keys = {
            "right": valid.key,
            "free_index": rules.make_key(valid.index + 5, valid.variant),
            "beyond_table": valid.key | (rng.choice([1, 2, 0x20, 0x3FFF]) << (8 + rules.MR_BITS)),
            "wrong_variant": rules.make_key(valid.index, valid.variant ^ (1 << rng.randrange(8))),
            "invalidated": invalidated.key,
            "deregistered": deregistered.key,
        }
        assert list(keys) == KEY_CASES
        for key_name, key in keys.items():
            for pd_name, pd in (("same_pd", PD), ("other_pd", OTHER_PD)):
                for bound_name, (va, length) in bound_cases(valid).items():
                    label = f"{kind} {rights_name} {key_name} {pd_name} {bound_name}"
                    lookups.append(Lookup.of(label, access_kind, key, pd, va, length))
    rng.shuffle(lookups)
    answers = await bench.run(lookups)
    # The matrix reaches every outcome this kind can have.
    reachable = set(Status) - ({Status.ACCESS_DENIED} if access_kind == Kind.LOCAL_READ else set())
    assert {a.status for a in answers} == reachable


# ---- page_translation ----------------------------------------------------


@cocotb.test()
@cocotb.parametrize(page_shift=[12, 13, 16, 21])
async def page_translation(dut, page_shift: int):
    """MRs of 1..7 pages from unaligned bases, each page at a random host
    address; one MR's page list wraps at the end of the MTT. Random
    in-bounds accesses (single bytes, page-crossing, whole MRs)."""
    rng = random.Random(f"page_translation-{page_shift}")
    bench = MrBench(dut, rng, stalls=True)
    await bench.reset()
    page = 1 << page_shift
    mrs = []
    for i in range(8):
        base = (rng.getrandbits(40) << page_shift) | rng.randrange(page)
        length = rng.randrange(3 * page, 6 * page) if i == 0 else rng.randrange(1, 6 * page)
        mtt_base = rules.MTT_ENTRIES - 2 if i == 0 else 64 * i
        mrs.append(await bench.register(make_mr(rng, 3 + 7 * i, PD, base, length, ALL, page_shift, mtt_base)))
    assert mrs[0].mtt_base + len(mrs[0].pages) > rules.MTT_ENTRIES  # its page list wraps
    lookups = []
    for n in range(240):
        mr = rng.choice(mrs)
        end = mr.base + mr.length
        shape = rng.choice(["byte", "cross", "random", "whole", "tail"])
        if shape == "byte":
            va = rng.randrange(mr.base, end)
            length = 1
        elif shape == "cross" and len(mr.pages) > 1:
            edge = ((mr.base >> page_shift) + rng.randrange(1, len(mr.pages))) << page_shift
            va = max(mr.base, edge - rng.randrange(1, 64))
            length = min(end, edge + rng.randrange(1, 64)) - va
        elif shape == "whole":
            va, length = mr.base, mr.length
        elif shape == "tail":
            va = rng.randrange(mr.base, end)
            length = end - va
        else:
            va = rng.randrange(mr.base, end)
            length = rng.randrange(1, end - va + 1)
        kind = rng.choice(list(Kind))
        lookups.append(Lookup.of(f"{shape} in MR {mr.index}", kind, mr.key, PD, va, length))
    answers = await bench.run(lookups)
    assert all(a.status == Status.OK for a in answers)
    assert max(len(a.segments) for a in answers) >= 4


# ---- address_top, rights combinations -------------------------------------


@cocotb.test()
async def address_top(dut):
    """An MR whose last byte is 2^64 - 1: accesses inside pass, an access
    ending at 2^64 is refused (the block's overflow rule), wrapping ones
    too."""
    rng = random.Random("address_top")
    bench = MrBench(dut, rng, stalls=True)
    await bench.reset()
    top = 1 << 64
    mr = await bench.register(make_mr(rng, 9, PD, top - 0x3000 + 0x10, 0x3000 - 0x10, ALL, 12, rules.MTT_ENTRIES - 1))
    lookups = [
        Lookup.of(label, Kind.REMOTE_WRITE, mr.key, PD, va, length)
        for label, va, length in [
            ("first byte", mr.base, 1),
            ("to one before the top", mr.base, mr.length - 1),
            ("last two bytes but one", top - 3, 2),
            ("to the top", top - 0x100, 0x100),
            ("last byte", top - 1, 1),
            ("through the top", top - 8, 16),
            ("zero at the top", top - 1, 0),
            ("one before", mr.base - 1, 1),
        ]
    ]
    answers = await bench.run(lookups)
    ok, out = Status.OK, Status.OUT_OF_BOUNDS
    assert [a.status for a in answers] == [ok, ok, ok, out, out, out, ok, out]


@cocotb.test()
async def rights_combinations(dut):
    """Every legal rights set x every need set (0..15) x L_Key or R_Key: a
    request needing several rights needs all of them, an R_Key access
    needing no remote right is refused."""
    rng = random.Random("rights_combinations")
    bench = MrBench(dut, rng, stalls=True)
    await bench.reset()
    lookups = []
    for i, access in enumerate(rules.LEGAL_ACCESS):
        mr = await bench.register(make_mr(rng, 200 + i, PD, 0x8000_0000 + i * 0x10000, 0x2000, access, 12, 100 + 4 * i))
        for need in range(16):
            for remote in (False, True):
                label = f"rights {int(access):#x} need {need:#x} remote {remote}"
                lookups.append(Lookup(label, mr.key, PD, mr.base + 0xFF0, 0x20, Access(need), remote))
    # The block does not check atomic alignment (mr_rules: the responder
    # refuses a misaligned atomic before it asks): 8-byte atomics at every
    # offset translate, one crossing a page in two segments.
    for offset in [0xFF8 + k for k in range(8)] + [0x3, 0x10]:
        lookups.append(Lookup.of(f"atomic at +{offset:#x}", Kind.REMOTE_ATOMIC, mr.key, PD, mr.base + offset, 8))
    rng.shuffle(lookups)
    answers = await bench.run(lookups)
    assert sum(a.status == Status.OK for a in answers) > 50
    assert sum(a.status == Status.ACCESS_DENIED for a in answers) > 50
    atomics = [a for lookup, a in zip(lookups, answers) if lookup.label.startswith("atomic at")]
    assert [a.status for a in atomics] == [Status.OK] * 10 and sum(len(a.segments) == 2 for a in atomics) == 7


# ---- reregistration ------------------------------------------------------


@cocotb.test()
async def reregistration(dut):
    """Register, use, deregister, register again with a new variant (and a
    new PD, bounds and page list), invalidate, register once more; after
    each step the old and new keys get the answer the model gives. Then a
    lookup presented in the cycle right after a write sees the write."""
    rng = random.Random("reregistration")
    bench = MrBench(dut, rng, stalls=True)
    await bench.reset()
    index = 0x2A5
    first = await bench.register(make_mr(rng, index, PD, 0x5000_0100, 0x2000, ALL, 12, 500, variant=0x11))
    neighbour = await bench.register(make_mr(rng, index + 1, PD, 0x5000_0100, 0x2000, ALL, 12, 600, variant=0x11))
    kinds = list(Kind)

    def probe(label, key, mr, pd=PD):
        return [
            Lookup.of(f"{label} {k.name.lower()}", k, key, pd, mr.base + rng.randrange(0, mr.length - 0x1800), 0x1800)
            for k in kinds
        ] + [Lookup.of(f"{label} neighbour", Kind.REMOTE_READ, neighbour.key, PD, neighbour.base, 16)]

    answers = await bench.run(probe("registered", first.key, first))
    assert {a.status for a in answers} == {Status.OK}

    await bench.set_state(first, State.FREE)
    answers = await bench.run(probe("deregistered", first.key, first))
    assert [a.status for a in answers[:-1]] == [Status.INVALID_KEY] * len(kinds)

    second = make_mr(rng, index, OTHER_PD, 0x7700_0F00, 0x3100, ALL, 13, 2000, variant=0x12)
    await bench.register(second)
    answers = await bench.run(probe("old key after re-registration", first.key, first, OTHER_PD))
    assert [a.status for a in answers[:-1]] == [Status.STALE_KEY] * len(kinds)
    lookups = probe("new key", second.key, second, OTHER_PD) + probe("new key, old PD", second.key, second)
    answers = await bench.run(lookups)
    assert [a.status for a in answers[: len(kinds)]] == [Status.OK] * len(kinds)
    assert answers[len(kinds) + 1].status == Status.PD_MISMATCH
    assert all(a.segments[0].phys >> 13 in {p >> 13 for p in second.pages} for a in answers[: len(kinds)])

    await bench.set_state(second, State.INVALIDATED)
    answers = await bench.run(probe("invalidated", second.key, second, OTHER_PD))
    assert [a.status for a in answers[:-1]] == [Status.INVALIDATED] * len(kinds)
    third = await bench.register(make_mr(rng, index, PD, 0x1_0000_0000, 0x800, ALL, 12, 3000, variant=0x13))
    lookups = [Lookup.of("third, key of the second", Kind.REMOTE_READ, second.key, PD, third.base, 8)]
    lookups += [Lookup.of("third, key of the first", Kind.REMOTE_READ, first.key, PD, third.base, 8)]
    lookups += [Lookup.of("third", Kind.REMOTE_READ, third.key, PD, third.base + 0x7F8, 8)]
    answers = await bench.run(lookups)
    assert [a.status for a in answers] == [Status.STALE_KEY, Status.STALE_KEY, Status.OK]

    # A lookup accepted in the cycle after a write sees the write: each
    # step writes the entry and presents a lookup with the key it changes
    # in the next cycle, back to back with two more.
    for stream in (bench.source, bench.sink):
        stream.clear_pause_generator()
        stream.pause = False
    mr = third
    for step in range(8):
        probes = [Lookup.of(f"right after write {step} ({n})", Kind.REMOTE_WRITE, None, PD, None, 4) for n in range(3)]
        if step % 2:
            for probe_ in probes:
                probe_.key, probe_.va = mr.key, mr.base
            await bench.set_state(mr, State.FREE, lookups=probes)
        else:
            mr = make_mr(rng, index, PD, 0x2_0000_0000 + step * 0x1000, 0x1000, ALL, 12, 3000, variant=0x20 + step)
            for probe_ in probes:
                probe_.key, probe_.va = mr.key, mr.base
            await bench.register(mr, lookups=probes)
        answers = await bench.check()
        assert [a.status for a in answers] == [Status.INVALID_KEY if step % 2 else Status.OK] * 3


# ---- random_traffic --------------------------------------------------------


@cocotb.test()
@cocotb.parametrize(traffic=["burst", "stalls"])
async def random_traffic(dut, traffic: str):
    """32 MRs of random rights, PDs, states, bases, lengths and page sizes;
    1500 lookups with keys, PDs, needs and ranges near the MRs, back to
    back or with random idle cycles and backpressure."""
    rng = random.Random(f"random_traffic-{traffic}")
    bench = MrBench(dut, rng, stalls=traffic == "stalls")
    await bench.reset()
    pds = [1, 2, 0xFFFF_FFFF]
    mrs = []
    for i in range(32):
        shift = rng.choice([12, 12, 13, 14, 16])
        base = rng.getrandbits(rng.choice([20, 40, 63]))
        length = rng.randrange(1, 5 << shift)
        access = ALL if rng.random() < 0.5 else rng.choice(rules.LEGAL_ACCESS)
        mr = make_mr(rng, rng.randrange(rules.MAX_MRS), rng.choice(pds), base, length, access, shift, 16 * i)
        if mr.index in bench.model.entries:
            continue
        await bench.register(mr)
        state = rng.choices([State.VALID, State.INVALIDATED, State.FREE, State.UNUSED], [14, 1, 1, 1])[0]
        if state != State.VALID:
            await bench.set_state(mr, state)
        mrs.append(mr)
    lookups = []
    for n in range(1500):
        mr = rng.choice(mrs)
        key = rng.choices(
            [mr.key, mr.key ^ (1 << rng.randrange(8)), mr.key ^ (1 << rng.randrange(8, 32)), rng.getrandbits(32)],
            [12, 1, 1, 1],
        )[0]
        pd = mr.pd if rng.random() < 0.9 else rng.choice(pds)
        end = mr.base + mr.length
        va = rng.choice([mr.base, rng.randrange(mr.base, end), end - 1, mr.base - rng.randrange(1, 64), end])
        length = rng.choice([0, 1, rng.randrange(1, 64), rng.randrange(1, mr.length + 64), max(end - va, 0)])
        if rng.random() < 0.8:
            kind = rng.choice(list(Kind))
            need, remote = kind.need, kind.remote
        else:
            need, remote = Access(rng.randrange(16)), rng.random() < 0.5
        lookups.append(Lookup(f"random {n}", key, pd, va & rules.MASK64, length & 0xFFFF_FFFF, need, remote))
    answers = await bench.run(lookups)
    counts = {s: sum(a.status == s for a in answers) for s in Status}
    dut._log.info("outcomes: %s", {s.name: c for s, c in counts.items()})
    assert counts[Status.OK] > 350 and all(counts[s] > 20 for s in Status), counts
    assert sum(len(a.segments) > 1 for a in answers) > 40


# ---- latency_throughput ----------------------------------------------------


class CycleDriver:
    """Lookups driven by hand, one handshake per cycle when accepted, with
    resp_ready held high; every accept and every beat recorded with its
    cycle (sampled at the falling edge, between the drive and the edge)."""

    def __init__(self, dut):
        self.dut = dut
        self.cycle = 0
        self.accepted: list[tuple[int, int]] = []  # (cycle, tag)
        self.beats: list[tuple[int, int, int]] = []  # (cycle, tag, last)
        self.ready_low = 0

    async def run(self, requests: list[tuple[int, ReqTransaction]]):
        dut = self.dut
        dut.resp_ready.value = 1
        pending = list(requests)
        await RisingEdge(dut.clk)
        self._drive(pending[0][1])
        dut.req_valid.value = 1
        while len(self.beats) == 0 or pending or self.cycle - self.beats[-1][0] < 20:
            await FallingEdge(dut.clk)
            self.cycle += 1
            if int(dut.resp_valid.value):
                self.beats.append((self.cycle, int(dut.resp_tag.value), int(dut.resp_last.value)))
            if pending:
                if int(dut.req_ready.value):
                    self.accepted.append((self.cycle, pending.pop(0)[0]))
                else:
                    self.ready_low += 1
            await RisingEdge(dut.clk)
            if pending:
                self._drive(pending[0][1])
            else:
                dut.req_valid.value = 0
            assert self.cycle < 10_000

    def _drive(self, txn):
        for name in REQ_FIELDS:
            getattr(self.dut, f"req_{name}").value = int(getattr(txn, name))


@cocotb.test()
async def latency_throughput(dut):
    """Single-beat lookups back to back: accepted one per cycle, answered one
    beat per cycle from 5 cycles after the first acceptance. Then lookups of
    1..5 pages: each of n pages holds the request stream n - 1 cycles and
    the beats still come one per cycle."""
    rng = random.Random("latency_throughput")
    bench = MrBench(dut, rng, stalls=False)
    bench.sink.pause = False
    await bench.reset()
    mr = await bench.register(make_mr(rng, 77, PD, 0x3000_0000, 0x8000, ALL, 12, 4000))

    def lookup(offset, length):
        return bench.request(Lookup.of("", Kind.REMOTE_READ, mr.key, PD, mr.base + offset, length))

    singles = [lookup(rng.randrange(0, 0x7000) & ~0xFFF | rng.randrange(0, 0xF00), 0x40) for _ in range(40)]
    singles[5] = lookup(0, 0)  # zero length and refused ones are single beats too
    singles[9] = bench.request(Lookup.of("", Kind.REMOTE_READ, mr.key ^ 1, PD, mr.base, 8))
    driver = CycleDriver(dut)
    await driver.run(singles)
    assert driver.ready_low == 0, f"req_ready low {driver.ready_low} cycles under single-beat lookups"
    cycles = [c for c, _ in driver.accepted]
    assert cycles == list(range(cycles[0], cycles[0] + len(singles))), cycles
    latency = driver.beats[0][0] - cycles[0]
    assert latency == LATENCY, f"first beat {latency} cycles after acceptance"
    assert [c for c, _, _ in driver.beats] == [cycles[0] + LATENCY + i for i in range(len(singles))]
    assert [t for _, t, _ in driver.beats] == [t for t, _ in singles]

    multi, pages = [], []
    for _ in range(12):
        n = rng.randrange(1, 6)
        multi.append(lookup(0x800, (n - 1) * 0x1000))  # from mid-page: n pages (n = 1: a zero-length lookup)
        pages.append(max(n, 1))
    # Three single-beat lookups behind, so that every hold happens while a
    # lookup waits (a request holds the stream from its third cycle in).
    multi += [lookup(0, 0) for _ in range(3)]
    pages += [1, 1, 1]
    driver = CycleDriver(dut)
    await driver.run(multi)
    assert driver.ready_low == sum(p - 1 for p in pages), (driver.ready_low, pages)
    beat_cycles = [c for c, _, _ in driver.beats]
    assert beat_cycles == list(range(beat_cycles[0], beat_cycles[0] + sum(pages))), beat_cycles
    assert beat_cycles[0] - driver.accepted[0][0] == LATENCY


# ---- reset_sweep -----------------------------------------------------------


@cocotb.test()
async def reset_sweep(dut):
    """After reset the configuration port and the request stream wait out
    the 2^10-cycle sweep; then every entry is free, including ones
    registered before a second reset, and a reset with lookups in flight
    leaves no response beat behind."""
    rng = random.Random("reset_sweep")
    bench = MrBench(dut, rng, stalls=True)
    dut.rst.value = 1
    dut.req_valid.value = 0
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    busy = 0
    while True:
        await FallingEdge(dut.clk)
        if int(dut.cfg_ready.value):
            break
        assert not int(dut.req_ready.value), "req_ready high during the reset sweep"
        busy += 1
        assert busy < SWEEP_CYCLES + 10
    assert SWEEP_CYCLES <= busy <= SWEEP_CYCLES + 2, f"sweep of {busy} cycles"
    bench.model = MrTable()
    mrs = [make_mr(rng, i * 97 % rules.MAX_MRS, PD, 0x1000 * i, 0x1000, ALL, 12, 4 * i) for i in range(1, 12)]
    mrs = [await bench.register(m) for m in mrs]
    answers = await bench.run([Lookup.of("before reset", Kind.REMOTE_READ, m.key, PD, m.base, 64) for m in mrs])
    assert {a.status for a in answers} == {Status.OK}
    for round_ in range(3):
        # Lookups in flight, then reset: nothing of them may come out after.
        for m in mrs * 3:
            _, txn = bench.request(Lookup.of("in flight", Kind.REMOTE_READ, m.key, PD, m.base, 0x1000))
            await bench.source.send(txn)
        await ClockCycles(dut.clk, rng.randrange(5, 40))
        bench.source.clear()
        await bench.reset()
        bench.sink.clear()
        probes = [Lookup.of(f"after reset {round_}", Kind.REMOTE_READ, m.key, PD, m.base, 64) for m in mrs]
        probes += [Lookup.of(f"random key {round_}", Kind.LOCAL_READ, rng.getrandbits(18), PD, 0, 0) for _ in range(20)]
        answers = await bench.run(probes)
        assert {a.status for a in answers} == {Status.INVALID_KEY}
        mrs = [await bench.register(m) for m in mrs]
