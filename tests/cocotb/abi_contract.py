"""BAR0's documented contract, read from docs/abi.md's tables.

What: `load()` parses the "BAR0: register blocks" part of docs/abi.md into
`Block`s (offset, type, version, size) holding `Register`s (offset, name,
width, access, reset, the `+ stride n, n < count` arrays) and their bit
fields (the "`name` bits:" tables). From those it derives what a bench
needs: the mask of bits a register implements, every dword a register
occupies, and the reset image of BAR0, dword by dword.

Why: the cocotb bench must be a second opinion on the RTL, so its
expectations come from the published contract text, never from the Rust
tables the RTL itself is generated from. Nothing here imports the
project's Rust or runs its binaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ABI_MD = Path(__file__).resolve().parents[2] / "docs" / "abi.md"

#: Bytes of BAR0, from the section's first sentence ("BAR0 is N bytes").
_BAR_SIZE = re.compile(r"BAR0 is (\d+) bytes")
_BLOCK_HEADING = re.compile(r"^### Block `(\w+)`")
_FIELDS_HEADING = re.compile(r"^`(\w+)` bits:$")
# "0x100 + 16 n, n < 32": base, stride, count.
_ARRAY_OFFSET = re.compile(r"^(0x[0-9A-Fa-f]+) \+ (\d+) n, n < (\d+)$")
# A register that is one value in its low bits ends its description so.
_LOW_BITS = re.compile(r"Bits (\d+):0\.$")


@dataclass(frozen=True)
class Field:
    """A bit field of a register: `width` bits from bit `lo`."""

    name: str
    lo: int
    width: int

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lo


@dataclass
class Register:
    """One row of a block's register table (an array row is one Register
    with `count` instances `stride` bytes apart)."""

    name: str
    offset: int  # within the block, of instance 0
    width: int  # bits: 32 or 64
    access: str  # RO, RW, WO, W1C
    reset: int
    description: str
    count: int = 1
    stride: int = 0
    fields: list[Field] = field(default_factory=list)

    @property
    def mask(self) -> int:
        """The bits the register implements: its fields' bits where the
        document lists fields, else all `width` bits (registers.rs: "bits
        outside its fields read 0 and ignore writes")."""
        if not self.fields:
            return (1 << self.width) - 1
        mask = 0
        for f in self.fields:
            mask |= f.mask
        return mask

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def offsets(self) -> list[int]:
        """Each instance's offset within the block."""
        return [self.offset + n * self.stride for n in range(self.count)]


@dataclass
class Block:
    """A BAR0 register block: its row in the block list and its table."""

    name: str
    offset: int  # in BAR0
    type: int
    version: int  # major << 16 | minor, as the `version` register reads
    size: int
    registers: list[Register] = field(default_factory=list)

    def register(self, name: str) -> Register:
        return next(r for r in self.registers if r.name == name)

    def address(self, name: str, n: int = 0) -> int:
        """BAR0 byte address of instance `n` of register `name`."""
        return self.offset + self.register(name).offsets()[n]


@dataclass(frozen=True)
class Dword:
    """A 32-bit slot of BAR0 that a register (or half of one) occupies."""

    block: Block
    register: Register
    instance: int
    half: int  # 0: the register's low dword (or a 32-bit register), 1: high

    @property
    def mask(self) -> int:
        return (self.register.mask >> (32 * self.half)) & 0xFFFF_FFFF

    @property
    def reset(self) -> int:
        return (self.register.reset >> (32 * self.half)) & 0xFFFF_FFFF


@dataclass
class Contract:
    """BAR0 as docs/abi.md states it."""

    bar_size: int
    blocks: list[Block]

    def block(self, name: str) -> Block:
        return next(b for b in self.blocks if b.name == name)

    def dwords(self) -> dict[int, Dword]:
        """Every mapped dword, by BAR0 byte address."""
        out: dict[int, Dword] = {}
        for block in self.blocks:
            for reg in block.registers:
                for n, off in enumerate(reg.offsets()):
                    for half in range(reg.width // 32):
                        address = block.offset + off + 4 * half
                        assert address not in out, f"two registers at 0x{address:X}"
                        out[address] = Dword(block, reg, n, half)
        return out

    def reset_image(self) -> dict[int, int]:
        """The value every mapped dword reads after reset (WO reads 0)."""
        return {a: (0 if d.register.access == "WO" else d.reset) for a, d in self.dwords().items()}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _tables(lines: list[str], start: int):
    """The markdown table starting at or after `start`: (header, rows, end)."""
    i = start
    while not lines[i].startswith("|"):
        i += 1
    header = _cells(lines[i])
    rows = []
    i += 2  # header and |---| rule
    while i < len(lines) and lines[i].startswith("|"):
        rows.append(_cells(lines[i]))
        i += 1
    return header, rows, i


def _name(cell: str) -> str:
    """`name` or [name](#anchor) -> name."""
    m = re.search(r"\[(\w+)\]|`(\w+)`", cell)
    assert m, cell
    return m.group(1) or m.group(2)


def _bits(cell: str) -> tuple[int, int]:
    """"3:0" -> (0, 4); "31" -> (31, 1)."""
    if ":" in cell:
        hi, lo = (int(x) for x in cell.split(":"))
        return lo, hi - lo + 1
    return int(cell), 1


def _version(cell: str) -> int:
    major, minor = (int(x) for x in cell.split("."))
    return major << 16 | minor


def parse(text: str) -> Contract:
    """The BAR0 part of an abi.md text."""
    section = _section(text.splitlines(), "## BAR0: register blocks")
    bar_size = int(_BAR_SIZE.search("\n".join(section)).group(1))

    header, rows, i = _tables(section, 0)
    assert header[:5] == ["offset", "block", "type", "version", "size"], header
    blocks = [
        Block(name=_name(r[1]), offset=int(r[0], 16), type=int(r[2], 16), version=_version(r[3]), size=int(r[4], 16))
        for r in rows
    ]
    by_name = {b.name: b for b in blocks}

    block = None
    while i < len(section):
        line = section[i]
        heading = _BLOCK_HEADING.match(line)
        fields = _FIELDS_HEADING.match(line)
        if heading:
            block = by_name[heading.group(1)]
            header, rows, i = _tables(section, i + 1)
            assert header == ["offset", "register", "width", "access", "reset", "description"], header
            for r in rows:
                array = _ARRAY_OFFSET.match(r[0])
                if array:
                    offset, stride, count = int(array.group(1), 16), int(array.group(2)), int(array.group(3))
                else:
                    offset, stride, count = int(r[0], 16), 0, 1
                low_bits = _LOW_BITS.search(r[5])
                block.registers.append(
                    Register(
                        name=_name(r[1]),
                        offset=offset,
                        width=int(r[2]),
                        access=r[3],
                        reset=int(r[4], 16),
                        description=r[5],
                        count=count,
                        stride=stride,
                        fields=[Field("value", 0, int(low_bits.group(1)) + 1)] if low_bits else [],
                    )
                )
        elif fields:
            assert block is not None
            reg = block.register(fields.group(1))
            header, rows, i = _tables(section, i + 1)
            assert header == ["bits", "field", "description"], header
            for r in rows:
                lo, width = _bits(r[0])
                reg.fields.append(Field(_name(r[1]), lo, width))
        else:
            i += 1
    return Contract(bar_size, blocks)


def load(path: Path = ABI_MD) -> Contract:
    """docs/abi.md's BAR0 contract."""
    return parse(path.read_text())


@dataclass(frozen=True)
class EntryField:
    """A field of a queue entry: `width` bits from bit `lo` of the
    little-endian value at byte `offset`."""

    name: str
    offset: int
    lo: int
    width: int

    def put(self, entry: bytearray, value: int) -> None:
        assert 0 <= value < 1 << self.width, (self.name, value)
        span = (self.lo + self.width + 7) // 8
        word = int.from_bytes(entry[self.offset : self.offset + span], "little")
        mask = ((1 << self.width) - 1) << self.lo
        word = (word & ~mask) | (value << self.lo)
        entry[self.offset : self.offset + span] = word.to_bytes(span, "little")

    def get(self, entry: bytes) -> int:
        span = (self.lo + self.width + 7) // 8
        word = int.from_bytes(entry[self.offset : self.offset + span], "little")
        return (word >> self.lo) & ((1 << self.width) - 1)


@dataclass(frozen=True)
class Entry:
    """A queue entry layout ("### `name` (N bytes)" with its field table)."""

    name: str
    size: int
    fields: dict[str, EntryField]

    def encode(self, **values: int) -> bytes:
        entry = bytearray(self.size)
        for name, value in values.items():
            self.fields[name].put(entry, value)
        return bytes(entry)


_ENTRY_HEADING = re.compile(r"^### `(\w+)` \((\d+) bytes\)$")
_CODES_HEADING = re.compile(r"^### `(\w+)`$")


def _section(lines: list[str], title: str) -> list[str]:
    start = lines.index(title)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def _headed_tables(path: Path, title: str, heading: re.Pattern):
    """In section `title` of `path`, each heading line `heading` matches
    with the table under it: (match, header, rows)."""
    section = _section(path.read_text().splitlines(), title)
    for i, line in enumerate(section):
        m = heading.match(line)
        if m:
            header, rows, _ = _tables(section, i + 1)
            yield m, header, rows


def entries(path: Path = ABI_MD) -> dict[str, Entry]:
    """docs/abi.md's queue entry layouts, by name."""
    found = {}
    for m, header, rows in _headed_tables(path, "## Queue entries and commands", _ENTRY_HEADING):
        assert header == ["offset", "bits", "field", "description"], header
        fields = {}
        for r in rows:
            if r[1].endswith("bytes"):
                continue  # a byte area (inline data, addresses), not a field
            lo, width = _bits(r[1])
            fields[_name(r[2])] = EntryField(_name(r[2]), int(r[0], 16), lo, width)
        found[m.group(1)] = Entry(m.group(1), int(m.group(2)), fields)
    return found


def codes(path: Path = ABI_MD) -> dict[str, dict[str, int]]:
    """docs/abi.md's code families: family -> name -> value."""
    found = {}
    for m, header, rows in _headed_tables(path, "## Codes", _CODES_HEADING):
        assert header[:2] == ["value", "name"], header
        found[m.group(1)] = {_name(r[1]): int(r[0], 16) for r in rows}
    return found
