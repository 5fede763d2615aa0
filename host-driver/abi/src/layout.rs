//! The vocabulary the contract is written in: bit fields at byte offsets
//! of little-endian structures, byte areas, and named codes.
//!
//! Every structure the NIC and the host exchange (queue entries, command
//! blocks, register bit fields) is a [`Layout`]: a size and a list of
//! [`Field`]s and [`Area`]s. The driver, the model and the tests encode and
//! decode through the same `Field` values the RTL takes its offsets from,
//! so an offset lives in exactly one place.

use std::fmt;

/// A bit field of up to 64 bits: `width` bits starting at bit `bit` of
/// the little-endian value that starts at byte `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub bit: u32,
    pub width: u32,
    pub doc: &'static str,
}

/// A run of bytes carried as they are (addresses, inline data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Area {
    pub name: &'static str,
    pub offset: usize,
    pub len: usize,
    pub doc: &'static str,
}

/// One structure: its size in bytes, its fields and areas in offset order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub name: &'static str,
    pub size: usize,
    pub doc: &'static str,
    pub fields: &'static [Field],
    pub areas: &'static [Area],
}

/// A named value of a code field (an opcode, a status, a flag bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code {
    pub name: &'static str,
    pub value: u64,
    pub doc: &'static str,
}

/// A family of codes and the field(s) that carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeSet {
    pub name: &'static str,
    pub doc: &'static str,
    /// Whether the codes are bits to be or-ed together (flags) rather than
    /// values.
    pub flags: bool,
    pub codes: &'static [Code],
}

/// Why an encode or decode was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// The buffer is shorter than the field or area needs.
    BufferTooShort {
        field: &'static str,
        needed: usize,
        len: usize,
    },
    /// The value does not fit the field's width.
    ValueTooWide {
        field: &'static str,
        width: u32,
        value: u64,
    },
    /// The bytes given for an area are not its length.
    AreaLength {
        area: &'static str,
        len: usize,
        given: usize,
    },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::BufferTooShort { field, needed, len } => {
                write!(f, "{field} needs {needed} bytes, the buffer has {len}")
            }
            LayoutError::ValueTooWide {
                field,
                width,
                value,
            } => write!(f, "{value:#x} does not fit the {width}-bit field {field}"),
            LayoutError::AreaLength { area, len, given } => {
                write!(f, "{area} is {len} bytes, {given} were given")
            }
        }
    }
}

impl std::error::Error for LayoutError {}

impl Field {
    pub const fn new(
        name: &'static str,
        offset: usize,
        bit: u32,
        width: u32,
        doc: &'static str,
    ) -> Field {
        assert!(
            width >= 1 && bit + width <= 64,
            "a field spans at most 64 bits"
        );
        Field {
            name,
            offset,
            bit,
            width,
            doc,
        }
    }

    /// A whole little-endian integer of `bytes` bytes at `offset`.
    pub const fn bytes(name: &'static str, offset: usize, bytes: u32, doc: &'static str) -> Field {
        Field::new(name, offset, 0, bytes * 8, doc)
    }

    /// One flag bit.
    pub const fn flag(name: &'static str, offset: usize, bit: u32, doc: &'static str) -> Field {
        Field::new(name, offset, bit, 1, doc)
    }

    /// The bytes the field touches: `offset .. offset + span()`.
    pub const fn span(&self) -> usize {
        (self.bit + self.width).div_ceil(8) as usize
    }

    /// The field's position counted in bits from bit 0 of the structure
    /// (byte `offset`'s bit 0 is bit `8 * offset`): what an RTL slice of
    /// the little-endian structure uses.
    pub const fn first_bit(&self) -> usize {
        self.offset * 8 + self.bit as usize
    }

    pub const fn max(&self) -> u64 {
        if self.width == 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    fn check_len(&self, len: usize) -> Result<(), LayoutError> {
        let needed = self.offset + self.span();
        if len < needed {
            return Err(LayoutError::BufferTooShort {
                field: self.name,
                needed,
                len,
            });
        }
        Ok(())
    }

    /// [`Field::set`] of a value the caller knows fits in a buffer it knows
    /// is long enough (an entry of the field's own layout): anything else
    /// is a programming error, and panics.
    pub fn put(&self, buf: &mut [u8], value: u64) {
        if let Err(e) = self.set(buf, value) {
            panic!("{e}");
        }
    }

    /// The field's value in `buf`.
    pub fn get(&self, buf: &[u8]) -> Result<u64, LayoutError> {
        self.check_len(buf.len())?;
        let mut word = [0u8; 8];
        word[..self.span()].copy_from_slice(&buf[self.offset..self.offset + self.span()]);
        Ok((u64::from_le_bytes(word) >> self.bit) & self.max())
    }

    /// Writes `value` into the field, leaving every other bit of `buf` as
    /// it was. A value wider than the field is refused, not truncated.
    pub fn set(&self, buf: &mut [u8], value: u64) -> Result<(), LayoutError> {
        self.check_len(buf.len())?;
        if value > self.max() {
            return Err(LayoutError::ValueTooWide {
                field: self.name,
                width: self.width,
                value,
            });
        }
        let span = self.offset..self.offset + self.span();
        let mut word = [0u8; 8];
        word[..self.span()].copy_from_slice(&buf[span.clone()]);
        let mut current = u64::from_le_bytes(word);
        current &= !(self.max() << self.bit);
        current |= value << self.bit;
        buf[span].copy_from_slice(&current.to_le_bytes()[..self.span()]);
        Ok(())
    }
}

impl Area {
    pub const fn new(name: &'static str, offset: usize, len: usize, doc: &'static str) -> Area {
        Area {
            name,
            offset,
            len,
            doc,
        }
    }

    pub fn get<'a>(&self, buf: &'a [u8]) -> Result<&'a [u8], LayoutError> {
        buf.get(self.offset..self.offset + self.len)
            .ok_or(LayoutError::BufferTooShort {
                field: self.name,
                needed: self.offset + self.len,
                len: buf.len(),
            })
    }

    pub fn set(&self, buf: &mut [u8], bytes: &[u8]) -> Result<(), LayoutError> {
        if bytes.len() != self.len {
            return Err(LayoutError::AreaLength {
                area: self.name,
                len: self.len,
                given: bytes.len(),
            });
        }
        let len = buf.len();
        buf.get_mut(self.offset..self.offset + self.len)
            .ok_or(LayoutError::BufferTooShort {
                field: self.name,
                needed: self.offset + self.len,
                len,
            })?
            .copy_from_slice(bytes);
        Ok(())
    }
}

impl Layout {
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Every inconsistency of the layout: a field or area past its end, two
    /// that share a bit, fields out of offset order.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut bits: Vec<(usize, usize, &str)> = Vec::new();
        for f in self.fields {
            if f.offset + f.span() > self.size {
                problems.push(format!(
                    "{}.{} ends past byte {}",
                    self.name, f.name, self.size
                ));
            }
            bits.push((f.first_bit(), f.first_bit() + f.width as usize, f.name));
        }
        for a in self.areas {
            if a.offset + a.len > self.size {
                problems.push(format!(
                    "{}.{} ends past byte {}",
                    self.name, a.name, self.size
                ));
            }
            bits.push((a.offset * 8, (a.offset + a.len) * 8, a.name));
        }
        bits.sort();
        for pair in bits.windows(2) {
            if pair[1].0 < pair[0].1 {
                problems.push(format!(
                    "{}: {} overlaps {}",
                    self.name, pair[0].2, pair[1].2
                ));
            }
        }
        let offsets: Vec<usize> = self.fields.iter().map(|f| f.first_bit()).collect();
        if offsets.windows(2).any(|w| w[0] > w[1]) {
            problems.push(format!("{}: fields are not in offset order", self.name));
        }
        problems
    }
}

impl Code {
    pub const fn new(name: &'static str, value: u64, doc: &'static str) -> Code {
        Code { name, value, doc }
    }
}

impl CodeSet {
    pub fn by_value(&self, value: u64) -> Option<&'static Code> {
        self.codes.iter().find(|c| c.value == value)
    }

    pub fn by_name(&self, name: &str) -> Option<&'static Code> {
        self.codes.iter().find(|c| c.name == name)
    }

    /// The value of the code named `name`, a name the set defines (any
    /// other is a programming error, and panics).
    pub fn value_of(&self, name: &str) -> u64 {
        self.by_name(name)
            .unwrap_or_else(|| panic!("{} has no code {name}", self.name))
            .value
    }

    /// Two codes with one value (or, for flags, one bit), or a flag that is
    /// not a single bit.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (i, a) in self.codes.iter().enumerate() {
            if self.flags && !a.value.is_power_of_two() {
                problems.push(format!("{}.{} is not one bit", self.name, a.name));
            }
            for b in &self.codes[i + 1..] {
                if a.value == b.value || a.name == b.name {
                    problems.push(format!("{}: {} and {} collide", self.name, a.name, b.name));
                }
            }
        }
        problems
    }
}
