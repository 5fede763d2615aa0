"""Memory-region checks and translation as the InfiniBand spec states them:
the oracle of the mr_translate bench (tests/cocotb/mr_translate_bench.py).

What: a table of MRs (key, PD, state, access rights, bounds, page list) and
`MrTable.translate`, which judges one access the way IBA Vol. 1 ch. 10.6
("Memory management") asks and, when it is allowed, splits it into the
host-physical page segments its page list gives.

Why: a second opinion on the RTL that shares nothing with the project's
Rust model. The spec rules come first; where the block's behaviour is a
design choice of rocenic rather than the spec's, the rule below says so
(`DESIGN CHOICE`), with the place in hdl/src/dma/mr_translate.rs's module
doc that states it.

The spec rules (IBA Vol. 1):
- keys (10.6): an access names its MR by an L_Key (local) or R_Key
  (remote). A key that names no registered region is invalid. The key's
  low 8 bits are its 8-bit "key" portion, which changes when the region is
  registered again: a key whose 8-bit portion differs from the region's
  current one is not that region's key, so keys of an earlier
  registration stop working.
- 10.6.3.1 access rights: local read is always allowed; local write needs
  Local Write; RDMA READ needs Remote Read, RDMA WRITE needs Remote Write,
  atomics need Remote Atomic. (Registration refuses Remote Write or Remote
  Atomic without Local Write; that is the registering driver's check, not
  this block's: `legal_access`.)
- protection domains (10.6): the QP's PD must equal the region's.
- bounds: every byte of [va, va + len) must lie in
  [base, base + length): the first byte at or above base and the last at
  or below base + length - 1. Addresses are 64-bit; an access whose end
  passes 2^64 wraps, which is never inside a region.
- An invalidated region (local or remote invalidation) refuses every key
  until it is registered again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

MASK64 = (1 << 64) - 1

#: The block's table sizes (hdl/src/export: MrTranslateDefault): 2^10 MRs,
#: 2^14 MTT entries.
MR_BITS = 10
MTT_BITS = 14
MAX_MRS = 1 << MR_BITS
MTT_ENTRIES = 1 << MTT_BITS
#: DESIGN CHOICE: pages of 4 KiB .. 2 MiB (the block's page shift 12..=21).
PAGE_SHIFTS = range(12, 22)


class Access(enum.IntFlag):
    """Access rights, libibverbs' `ibv_access_flags` bit values (as in
    docs/abi.md's `access` table)."""

    NONE = 0
    LOCAL_WRITE = 0x1
    REMOTE_WRITE = 0x2
    REMOTE_READ = 0x4
    REMOTE_ATOMIC = 0x8


REMOTE_ANY = Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC


class Kind(enum.Enum):
    """The access kinds a NIC makes through an MR, with the right each needs
    (10.6.3.1) and the key they come with (L_Key local, R_Key remote)."""

    LOCAL_READ = (Access.NONE, False)  # send payload, READ/atomic request source
    LOCAL_WRITE = (Access.LOCAL_WRITE, False)  # receive buffer, READ response, atomic result
    REMOTE_READ = (Access.REMOTE_READ, True)
    REMOTE_WRITE = (Access.REMOTE_WRITE, True)
    REMOTE_ATOMIC = (Access.REMOTE_ATOMIC, True)

    @property
    def need(self) -> Access:
        return self.value[0]

    @property
    def remote(self) -> bool:
        return self.value[1]


class Status(enum.IntEnum):
    """The block's answer codes (mr_translate.rs `resp_status`).

    DESIGN CHOICE: the spec gives one outcome for every refusal of a
    remote access (a Remote Access Error NAK) and a local protection error
    for a local one; the block tells the reasons apart, and when
    several apply it reports the first in this order (the module doc's
    "Checks, in the model's order")."""

    OK = 0
    INVALID_KEY = 1
    STALE_KEY = 2
    INVALIDATED = 3
    PD_MISMATCH = 4
    ACCESS_DENIED = 5
    OUT_OF_BOUNDS = 6


class State(enum.IntEnum):
    """An MR table entry's state, as the configuration port writes it.
    DESIGN CHOICE: code 3 is not used and reads as free."""

    FREE = 0
    VALID = 1
    INVALIDATED = 2
    UNUSED = 3


def make_key(index: int, variant: int) -> int:
    """DESIGN CHOICE (as in rxe): key = table index << 8 | 8-bit variant;
    L_Key and R_Key are equal."""
    return (index << 8) | (variant & 0xFF)


def legal_access(access: Access) -> bool:
    """10.6.3.1: Remote Write and Remote Atomic need Local Write at
    registration (checked by whoever registers, not by the block)."""
    if access & (Access.REMOTE_WRITE | Access.REMOTE_ATOMIC):
        return bool(access & Access.LOCAL_WRITE)
    return True


#: Every access set a registration may ask for.
LEGAL_ACCESS = [Access(a) for a in range(16) if legal_access(Access(a))]


@dataclass
class Mr:
    """One registration: its table index and key variant, PD, bounds,
    rights and page list (host physical page addresses, one per page of
    2^page_shift bytes from the page holding `base`)."""

    index: int
    variant: int
    pd: int
    base: int
    length: int
    access: Access
    page_shift: int
    pages: list[int]
    mtt_base: int = 0
    state: State = State.VALID

    @property
    def key(self) -> int:
        return make_key(self.index, self.variant)

    @property
    def page_size(self) -> int:
        return 1 << self.page_shift


def pages_spanned(base: int, length: int, page_shift: int) -> int:
    """Pages of 2^page_shift bytes that [base, base + length) touches (at
    least one: a zero-length region still has its first page)."""
    if length == 0:
        return 1
    first = base >> page_shift
    last = (base + length - 1) >> page_shift
    return last - first + 1


@dataclass
class Segment:
    phys: int
    length: int


@dataclass
class Answer:
    status: Status
    segments: list[Segment] = field(default_factory=list)


class MrTable:
    """The MRs by table index plus the MTT that holds their page lists.

    DESIGN CHOICE: an MR's page list sits at consecutive MTT entries from
    its MTT base, wrapping at the MTT's end (2^14 entries); `register`
    writes it there, so two MRs can share entries only if the test places
    them so."""

    def __init__(self):
        self.entries: dict[int, Mr] = {}
        self.mtt: dict[int, int] = {}

    def register(self, mr: Mr) -> Mr:
        assert 0 <= mr.index < MAX_MRS and mr.page_shift in PAGE_SHIFTS
        assert len(mr.pages) == pages_spanned(mr.base, mr.length, mr.page_shift)
        self.entries[mr.index] = mr
        for i, page in enumerate(mr.pages):
            self.mtt[(mr.mtt_base + i) % MTT_ENTRIES] = page
        return mr

    def deregister(self, index: int) -> None:
        """The entry is freed: every key through it is invalid."""
        self.entries[index].state = State.FREE

    def invalidate(self, index: int) -> None:
        self.entries[index].state = State.INVALIDATED

    def translate(self, key: int, pd: int, va: int, length: int, need: Access, remote: bool) -> Answer:
        """Judge one access of `length` bytes from `va` needing `need`
        through `key` (an R_Key when `remote`), for a QP of PD `pd`."""
        index = key >> 8
        mr = self.entries.get(index)
        # DESIGN CHOICE: the index is the key's bits 8.. up; an index beyond
        # the table is invalid (it does not alias onto a smaller index).
        if index >= MAX_MRS or mr is None or mr.state in (State.FREE, State.UNUSED):
            return Answer(Status.INVALID_KEY)
        if mr.variant != key & 0xFF:
            return Answer(Status.STALE_KEY)
        if mr.state == State.INVALIDATED:
            return Answer(Status.INVALIDATED)
        if mr.pd != pd:
            return Answer(Status.PD_MISMATCH)
        if (mr.access & need) != need:
            return Answer(Status.ACCESS_DENIED)
        # DESIGN CHOICE: an R_Key access that needs no remote right (a
        # remote "local read") is refused; the spec has no such access.
        if remote and not (need & REMOTE_ANY):
            return Answer(Status.ACCESS_DENIED)
        if length == 0:
            # DESIGN CHOICE (as rxe): a zero-length access touches nothing,
            # so its address is not checked; C9-88 lets the responder skip
            # the R_Key check of a zero-length RDMA operation altogether,
            # which is the responder's decision, not this block's.
            return Answer(Status.OK)
        if not in_bounds(va, length, mr.base, mr.length):
            return Answer(Status.OUT_OF_BOUNDS)
        # 8-byte alignment of atomics (a misaligned atomic's NAK) is not
        # checked here: DESIGN CHOICE, the responder's request checker
        # refuses a misaligned atomic before it asks the MR table.
        return Answer(Status.OK, self.segments(mr, va, length))

    def segments(self, mr: Mr, va: int, length: int) -> list[Segment]:
        """[va, va + length) split at the MR's page boundaries, each piece
        at its page's host address plus the offset in the page."""
        out = []
        first_page = mr.base >> mr.page_shift
        while length:
            page = (va >> mr.page_shift) - first_page
            offset = va & (mr.page_size - 1)
            take = min(length, mr.page_size - offset)
            phys = (self.mtt[(mr.mtt_base + page) % MTT_ENTRIES] + offset) & MASK64
            out.append(Segment(phys, take))
            va += take
            length -= take
        return out


def in_bounds(va: int, length: int, base: int, mr_length: int) -> bool:
    """Every byte of [va, va + length) in [base, base + mr_length), with no
    wrap past the top of the 64-bit address space (length > 0)."""
    end = va + length  # exact: Python integers do not wrap
    # DESIGN CHOICE (stricter than the spec): an access whose end is 2^64
    # exactly, i.e. whose last byte is the address space's last, is refused
    # as an overflow ("va + len overflowing 64 bits" in the module doc),
    # even in a region that reaches that byte.
    if end >= 1 << 64:
        return False
    return base <= va and end <= base + mr_length
