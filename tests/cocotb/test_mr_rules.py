"""The mr_translate bench's oracle (mr_rules) checked on its own, without a
simulator: each spec rule and each design choice it states, on hand-made
regions whose answers are worked out here. If these fail, the RTL bench
would be comparing the RTL with a wrong expectation."""

import pytest

import mr_rules as rules
from mr_rules import Access, Kind, Mr, MrTable, Status

PD = 7
ALL = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC


def table_with(**overrides) -> tuple[MrTable, Mr]:
    """One region of 3 pages of 4 KiB from 0x10_0800 (0x2800 bytes: the
    middle page whole, the first and last in part)."""
    fields = dict(index=5, variant=0x3C, pd=PD, base=0x10_0800, length=0x2800, access=ALL, page_shift=12)
    fields.update(overrides)
    n = rules.pages_spanned(fields["base"], fields["length"], fields["page_shift"])
    fields.setdefault("pages", [0x7000_0000 + 0x3000 * i for i in range(n)])
    table = MrTable()
    return table, table.register(Mr(**fields))


def ask(table, mr, va, length, kind=Kind.REMOTE_WRITE, key=None, pd=PD):
    return table.translate(mr.key if key is None else key, pd, va, length, kind.need, kind.remote)


def test_key_is_index_and_variant():
    assert rules.make_key(5, 0x3C) == 0x53C
    assert rules.make_key(1023, 0x1FF) == (1023 << 8) | 0xFF


def test_bounds_edges():
    table, mr = table_with()
    end = mr.base + mr.length
    assert ask(table, mr, mr.base, 1).status == Status.OK  # first byte
    assert ask(table, mr, end - 1, 1).status == Status.OK  # last byte
    assert ask(table, mr, mr.base, mr.length).status == Status.OK  # the whole region
    assert ask(table, mr, mr.base - 1, 1).status == Status.OUT_OF_BOUNDS  # one before
    assert ask(table, mr, end, 1).status == Status.OUT_OF_BOUNDS  # one after
    assert ask(table, mr, end - 4, 8).status == Status.OUT_OF_BOUNDS  # straddling the end
    assert ask(table, mr, mr.base - 4, 8).status == Status.OUT_OF_BOUNDS  # straddling the start
    assert ask(table, mr, mr.base, mr.length + 1).status == Status.OUT_OF_BOUNDS


def test_wrap_around_is_out_of_bounds():
    """An access whose end wraps past 2^64 to inside the region is refused."""
    table, mr = table_with()
    va = (1 << 64) - 0x100
    length = 0x100 + mr.base + 0x10
    assert (va + length) % (1 << 64) == mr.base + 0x10
    assert ask(table, mr, va, length).status == Status.OUT_OF_BOUNDS


def test_region_at_the_top_of_the_address_space():
    """The design choice: an access ending at 2^64 exactly is refused."""
    top = 1 << 64
    table, mr = table_with(base=top - 0x2000, length=0x2000)
    assert ask(table, mr, top - 0x2000, 0x1000).status == Status.OK
    assert ask(table, mr, top - 0x10, 0xF).status == Status.OK
    assert ask(table, mr, top - 0x10, 0x10).status == Status.OUT_OF_BOUNDS
    assert ask(table, mr, top - 1, 1).status == Status.OUT_OF_BOUNDS


def test_zero_length_skips_bounds_only():
    table, mr = table_with()
    assert ask(table, mr, 0, 0) == rules.Answer(Status.OK, [])
    assert ask(table, mr, (1 << 64) - 1, 0).status == Status.OK
    assert ask(table, mr, mr.base, 0, pd=PD + 1).status == Status.PD_MISMATCH
    assert ask(table, mr, mr.base, 0, key=mr.key ^ 1).status == Status.STALE_KEY


@pytest.mark.parametrize("kind", list(Kind), ids=lambda k: k.name.lower())
def test_rights_of_each_kind(kind):
    """Each kind passes exactly when the region grants its right; local read
    needs none."""
    for access in rules.LEGAL_ACCESS:
        table, mr = table_with(access=access)
        granted = (access & kind.need) == kind.need
        want = Status.OK if granted else Status.ACCESS_DENIED
        assert ask(table, mr, mr.base, 8, kind).status == want, (kind, access)


def test_remote_access_needs_a_remote_right():
    table, mr = table_with()
    assert table.translate(mr.key, PD, mr.base, 8, Access.NONE, True).status == Status.ACCESS_DENIED
    assert table.translate(mr.key, PD, mr.base, 8, Access.LOCAL_WRITE, True).status == Status.ACCESS_DENIED


def test_legal_access_sets():
    assert not rules.legal_access(Access.REMOTE_WRITE)
    assert not rules.legal_access(Access.REMOTE_ATOMIC | Access.REMOTE_READ)
    assert rules.legal_access(Access.REMOTE_READ)
    assert rules.legal_access(Access.REMOTE_WRITE | Access.LOCAL_WRITE)
    assert len(rules.LEGAL_ACCESS) == 10


def test_check_order():
    """Several faults at once: the first in the block's order is reported."""
    table, mr = table_with(access=Access.REMOTE_READ)
    out = mr.base + mr.length
    assert ask(table, mr, out, 8, key=mr.key ^ 0x80, pd=PD + 1).status == Status.STALE_KEY
    assert ask(table, mr, out, 8, pd=PD + 1).status == Status.PD_MISMATCH
    assert ask(table, mr, out, 8).status == Status.ACCESS_DENIED
    table.invalidate(mr.index)
    assert ask(table, mr, out, 8, pd=PD + 1).status == Status.INVALIDATED
    assert ask(table, mr, out, 8, key=mr.key ^ 1).status == Status.STALE_KEY


def test_keys_that_name_no_region():
    table, mr = table_with()
    assert ask(table, mr, mr.base, 8, key=rules.make_key(6, mr.variant)).status == Status.INVALID_KEY
    # An index beyond the table does not alias onto the region's index.
    beyond = mr.key | (rules.MAX_MRS << 8)
    assert ask(table, mr, mr.base, 8, key=beyond).status == Status.INVALID_KEY
    mr.state = rules.State.UNUSED
    assert ask(table, mr, mr.base, 8).status == Status.INVALID_KEY


def test_deregistration_and_reregistration():
    table, mr = table_with()
    old = mr.key
    table.deregister(mr.index)
    assert ask(table, mr, mr.base, 8, key=old).status == Status.INVALID_KEY
    new = table.register(Mr(mr.index, mr.variant + 1, PD, 0x40_0000, 0x1000, ALL, 12, [0x9000_0000]))
    assert ask(table, new, new.base, 8, key=old).status == Status.STALE_KEY
    assert ask(table, new, 0x40_0010, 8).segments == [rules.Segment(0x9000_0010, 8)]


def test_segments_follow_the_page_list():
    pages = [0xA000, 0x5000, 0xF000]
    table, mr = table_with(pages=pages)
    whole = ask(table, mr, mr.base, mr.length).segments
    assert whole == [rules.Segment(0xA800, 0x800), rules.Segment(0x5000, 0x1000), rules.Segment(0xF000, 0x1000)]
    assert ask(table, mr, 0x10_1FFF, 2).segments == [rules.Segment(0x5FFF, 1), rules.Segment(0xF000, 1)]
    assert sum(s.length for s in whole) == mr.length


def test_mtt_base_wraps_at_the_end_of_the_mtt():
    table, mr = table_with(mtt_base=rules.MTT_ENTRIES - 1)
    assert table.mtt[rules.MTT_ENTRIES - 1] == mr.pages[0]
    assert table.mtt[0] == mr.pages[1] and table.mtt[1] == mr.pages[2]
    assert ask(table, mr, 0x10_2000, 4).segments == [rules.Segment(mr.pages[2], 4)]


def test_large_pages():
    table, mr = table_with(base=0x1234_5678, length=0x40_0000, page_shift=21)
    assert len(mr.pages) == 3
    segs = ask(table, mr, 0x1234_5678, 0x40_0000).segments
    assert [s.length for s in segs] == [0x20_0000 - 0x14_5678, 0x20_0000, 0x14_5678]
    assert segs[0].phys == mr.pages[0] + 0x14_5678
