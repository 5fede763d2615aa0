//! Finding the register blocks: the walk of BAR0's block chain that a
//! driver does at probe time instead of trusting fixed offsets.

use rocenic_abi::registers::{RegisterBlock, BAR0_BLOCKS, BAR0_SIZE};
use std::collections::BTreeMap;

/// Why the chain could not be walked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    #[error("the block at {offset:#x} has type {type_id:#010x}, which this driver does not know")]
    UnknownType { offset: u32, type_id: u32 },
    #[error(
        "block {name} at {offset:#x} is version {found:#x}; this driver knows major {known_major}"
    )]
    UnsupportedVersion {
        name: &'static str,
        offset: u32,
        found: u32,
        known_major: u32,
    },
    #[error("block {name} appears twice (at {first:#x} and {again:#x})")]
    Duplicate {
        name: &'static str,
        first: u32,
        again: u32,
    },
    #[error("the next pointer {next:#x} after {offset:#x} does not move forward inside BAR0")]
    BadNext { offset: u32, next: u32 },
    #[error("BAR0 has no {0} block")]
    Missing(&'static str),
}

/// Where each known block sits in this device's BAR0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockMap {
    offsets: BTreeMap<&'static str, u32>,
}

impl BlockMap {
    /// The BAR0 offset of `block`, which the walk found (every block of
    /// the contract is required, so this cannot fail after [`discover`]).
    pub fn offset(&self, block: &RegisterBlock) -> u32 {
        self.offsets[block.name]
    }

    /// The BAR0 offset of register `name` of `block` (instance `n` of a
    /// repeated one), or `None` if the block has no such register.
    pub fn register(&self, block: &RegisterBlock, name: &str, n: u32) -> Option<u32> {
        let register = block.register(name)?;
        (n < register.count.max(1)).then(|| self.offset(block) + register.offset_of(n))
    }
}

/// Walks the chain from offset 0 with `read32` (a 32-bit MMIO read of
/// BAR0). Every block must have a known type and a version whose major
/// this driver knows; every block of the contract must be found.
pub fn discover(mut read32: impl FnMut(u32) -> u32) -> Result<BlockMap, DiscoveryError> {
    let mut offsets = BTreeMap::new();
    let mut offset = 0u32;
    loop {
        let type_id = read32(offset);
        let Some((_, known)) = BAR0_BLOCKS.iter().find(|(_, b)| b.type_id == type_id) else {
            return Err(DiscoveryError::UnknownType { offset, type_id });
        };
        let version = read32(offset + 4);
        if version >> 16 != known.version >> 16 {
            return Err(DiscoveryError::UnsupportedVersion {
                name: known.name,
                offset,
                found: version,
                known_major: known.version >> 16,
            });
        }
        if let Some(first) = offsets.insert(known.name, offset) {
            return Err(DiscoveryError::Duplicate {
                name: known.name,
                first,
                again: offset,
            });
        }
        let next = read32(offset + 8);
        if next == 0 {
            break;
        }
        if next <= offset || next >= BAR0_SIZE {
            return Err(DiscoveryError::BadNext { offset, next });
        }
        offset = next;
    }
    for (_, block) in BAR0_BLOCKS {
        if !offsets.contains_key(block.name) {
            return Err(DiscoveryError::Missing(block.name));
        }
    }
    Ok(BlockMap { offsets })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocenic_abi::registers::{bar0_reset_read32, ADMIN, COUNTERS_BLOCK, DEVICE};

    #[test]
    fn the_walk_finds_every_block_where_the_contract_puts_it() {
        let map = discover(bar0_reset_read32).unwrap();
        for (offset, block) in BAR0_BLOCKS {
            assert_eq!(map.offset(block), *offset, "{}", block.name);
        }
        assert_eq!(map.register(&ADMIN, "asq_tail", 0), Some(0x21C));
        assert_eq!(map.register(&COUNTERS_BLOCK, "rx_frames", 0), Some(0x1010));
        assert_eq!(map.register(&DEVICE, "no_such_register", 0), None);
    }

    #[test]
    fn a_moved_block_is_found_at_its_new_offset() {
        // The counters block moved from 0x1000 to 0x3000, after the MSI-X
        // block: a driver that walks the chain follows it.
        let moved = |offset: u32| match offset {
            0x408 => 0x2000,
            0x2008 => 0x3000,
            0x3008 => 0,
            0x1000..=0x1FFF => 0,
            0x3000..=0x3FFF => bar0_reset_read32(offset - 0x2000),
            _ => bar0_reset_read32(offset),
        };
        let map = discover(moved).unwrap();
        assert_eq!(map.offset(&COUNTERS_BLOCK), 0x3000);
        assert_eq!(map.register(&COUNTERS_BLOCK, "rx_frames", 0), Some(0x3010));
        assert_eq!(map.offset(&DEVICE), 0);
    }

    /// BAR0 as after reset, but for the word at `offset`, which reads
    /// `value`.
    fn reset_bar0_but(offset: u32, value: u32) -> impl Fn(u32) -> u32 {
        move |at| {
            if at == offset {
                value
            } else {
                bar0_reset_read32(at)
            }
        }
    }

    #[test]
    fn a_device_the_driver_does_not_understand_is_refused_by_name() {
        let new_major = reset_bar0_but(0x104, 0x0002_0000);
        assert!(matches!(
            discover(new_major),
            Err(DiscoveryError::UnsupportedVersion {
                name: "control",
                found: 0x0002_0000,
                ..
            })
        ));
        let newer_minor = reset_bar0_but(0x104, 0x0001_0003);
        assert!(discover(newer_minor).is_ok(), "a newer minor only adds");
        let foreign = reset_bar0_but(0x200, 0xDEAD_BEEF);
        assert_eq!(
            discover(foreign),
            Err(DiscoveryError::UnknownType {
                offset: 0x200,
                type_id: 0xDEAD_BEEF
            })
        );
        let short_chain = reset_bar0_but(0x408, 0);
        assert_eq!(
            discover(short_chain),
            Err(DiscoveryError::Missing("counters"))
        );
        let looped = reset_bar0_but(0x308, 0x100);
        assert_eq!(
            discover(looped),
            Err(DiscoveryError::BadNext {
                offset: 0x300,
                next: 0x100
            })
        );
    }
}
