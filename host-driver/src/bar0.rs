//! BAR0 as the driver sees it: MMIO access ([`Mmio`], what every backend
//! provides), the register blocks found by the discovery walk, and the
//! device queries built on them (`ibv_query_device`'s attributes, the
//! `ethtool -S` counters).

use crate::discovery::{discover, BlockMap, DiscoveryError};
use rocenic_abi::registers::{self as abi, RegisterBlock};

/// 32- and 64-bit register access to one BAR, by byte offset. A 64-bit
/// access that the bus cannot do in one goes as two 32-bit ones, low half
/// first, as the ABI allows.
pub trait Mmio {
    fn read32(&mut self, offset: u32) -> u32;
    fn write32(&mut self, offset: u32, value: u32);

    fn read64(&mut self, offset: u32) -> u64 {
        let low = self.read32(offset);
        let high = self.read32(offset + 4);
        u64::from(high) << 32 | u64::from(low)
    }

    fn write64(&mut self, offset: u32, value: u64) {
        self.write32(offset, value as u32);
        self.write32(offset + 4, (value >> 32) as u32);
    }
}

/// Why BAR0 could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Bar0Error {
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    #[error("the device speaks host ABI {found:#x}; this driver knows major {known_major}")]
    AbiVersion { found: u32, known_major: u32 },
    #[error(
        "the scratch register read back {read:#x} after {wrote:#x}: MMIO does not reach the device"
    )]
    Scratch { wrote: u32, read: u32 },
}

/// Why a parameter was not set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParameterError {
    #[error("no congestion parameter is named {0:?}")]
    Unknown(String),
    #[error("{name} takes at most {max:#x} (bits it implements); {value:#x} given")]
    TooWide {
        name: &'static str,
        value: u32,
        max: u64,
    },
}

/// What the device can do (the capability registers; libibverbs
/// `ibv_device_attr` names where it has the same attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceAttr {
    pub device_id: u32,
    pub abi_version: u32,
    pub build_id: u32,
    pub max_qp: u32,
    pub max_mr: u32,
    pub max_cq: u32,
    pub max_pd: u32,
    pub max_eq: u32,
    pub msix_vectors: u32,
    /// An `mtu` code (5: 4096 bytes).
    pub max_mtu: u32,
    pub max_send_sge: u32,
    pub max_recv_sge: u32,
    pub max_inline_data: u32,
    pub max_qp_wr: u32,
    pub max_cqe: u32,
    pub mtt_entries: u32,
    pub max_qp_rd_atom: u32,
}

/// An opened BAR0: its blocks located, its ABI version checked.
pub struct Bar0<M: Mmio> {
    mmio: M,
    blocks: BlockMap,
}

impl<M: Mmio> Bar0<M> {
    /// Walks the block chain, checks the device's ABI major against this
    /// driver's and that MMIO writes reach the device (the scratch
    /// register).
    pub fn open(mut mmio: M) -> Result<Bar0<M>, Bar0Error> {
        let blocks = discover(|offset| mmio.read32(offset))?;
        let mut bar = Bar0 { mmio, blocks };
        let found = bar.read32(&abi::DEVICE, "abi_version");
        if found >> 16 != rocenic_abi::ABI_VERSION >> 16 {
            return Err(Bar0Error::AbiVersion {
                found,
                known_major: rocenic_abi::ABI_VERSION >> 16,
            });
        }
        for wrote in [0x5A5A_A5A5, 0xA5A5_5A5A] {
            bar.write32(&abi::CONTROL, "scratch", wrote);
            let read = bar.read32(&abi::CONTROL, "scratch");
            if read != wrote {
                return Err(Bar0Error::Scratch { wrote, read });
            }
        }
        Ok(bar)
    }

    fn offset(&self, block: &RegisterBlock, name: &str) -> u32 {
        self.register_offset(block, name, 0)
    }

    /// A 32-bit register of the contract, by block and name.
    pub fn read32(&mut self, block: &RegisterBlock, name: &str) -> u32 {
        let offset = self.offset(block, name);
        self.mmio.read32(offset)
    }

    pub fn write32(&mut self, block: &RegisterBlock, name: &str, value: u32) {
        let offset = self.offset(block, name);
        self.mmio.write32(offset, value);
    }

    /// The BAR0 offset of instance `n` of a register of the contract.
    pub fn register_offset(&self, block: &RegisterBlock, name: &str, n: u32) -> u32 {
        self.blocks
            .register(block, name, n)
            .unwrap_or_else(|| panic!("the ABI's {} block has a register {name}", block.name))
    }

    /// A 64-bit register of the contract, by block and name.
    pub fn write64(&mut self, block: &RegisterBlock, name: &str, value: u64) {
        let offset = self.offset(block, name);
        self.mmio.write64(offset, value);
    }

    /// The capability registers.
    pub fn query_device(&mut self) -> DeviceAttr {
        let mut cap = |name: &str| self.read32(&abi::DEVICE, name);
        DeviceAttr {
            device_id: cap("device_id"),
            abi_version: cap("abi_version"),
            build_id: cap("build_id"),
            max_qp: cap("cap_qps"),
            max_mr: cap("cap_mrs"),
            max_cq: cap("cap_cqs"),
            max_pd: cap("cap_pds"),
            max_eq: cap("cap_eqs"),
            msix_vectors: cap("cap_msix_vectors"),
            max_mtu: cap("cap_max_mtu"),
            max_send_sge: cap("cap_max_send_sge"),
            max_recv_sge: cap("cap_max_recv_sge"),
            max_inline_data: cap("cap_max_inline"),
            max_qp_wr: 1 << cap("cap_log_max_qp_wr"),
            max_cqe: 1 << cap("cap_log_max_cqe"),
            mtt_entries: cap("cap_mtt_entries"),
            max_qp_rd_atom: cap("cap_max_rd_atomic"),
        }
    }

    /// Every counter by name, in the ABI's order (what `ethtool -S`
    /// prints). Each is read low half first, so it is one value even over
    /// 32-bit accesses.
    pub fn counters(&mut self) -> Vec<(&'static str, u64)> {
        let count = self.read32(&abi::DEVICE, "cap_counters") as usize;
        abi::COUNTERS
            .iter()
            .take(count)
            .map(|counter| {
                let offset = self.offset(&abi::COUNTERS_BLOCK, counter.name);
                (counter.name, self.mmio.read64(offset))
            })
            .collect()
    }

    /// The congestion control parameters (`docs/abi.md`, block
    /// `congestion`: DCQCN by NVIDIA's `roce_np` / `roce_rp` names, and
    /// PFC), by name, as the device holds them.
    pub fn congestion(&mut self) -> Vec<(&'static str, u32)> {
        abi::CONGESTION
            .registers
            .iter()
            .map(|r| (r.name, self.read32(&abi::CONGESTION, r.name)))
            .collect()
    }

    /// Sets congestion parameter `name` to `value` (its unit is the ABI's:
    /// microseconds, Mb/s, percent, 1024ths); it applies at once to every
    /// QP.
    pub fn set_congestion(&mut self, name: &str, value: u32) -> Result<(), ParameterError> {
        let register = abi::CONGESTION
            .register(name)
            .ok_or_else(|| ParameterError::Unknown(name.to_string()))?;
        if !register.fits(value.into()) {
            return Err(ParameterError::TooWide {
                name: register.name,
                value,
                max: register.implemented(),
            });
        }
        self.write32(&abi::CONGESTION, register.name, value);
        Ok(())
    }

    /// The MMIO access underneath.
    pub fn mmio(&mut self) -> &mut M {
        &mut self.mmio
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocenic_abi::registers::bar0_reset_read32;
    use std::collections::BTreeMap;

    /// BAR0 after reset, with the scratch register writable: what a
    /// device that does nothing else looks like.
    #[derive(Default)]
    struct ResetImage {
        written: BTreeMap<u32, u32>,
        scratch_works: bool,
    }

    impl Mmio for ResetImage {
        fn read32(&mut self, offset: u32) -> u32 {
            match self.written.get(&offset) {
                Some(value) if self.scratch_works => *value,
                _ => bar0_reset_read32(offset),
            }
        }

        fn write32(&mut self, offset: u32, value: u32) {
            self.written.insert(offset, value);
        }
    }

    #[test]
    fn open_then_query_reads_the_capabilities() {
        let image = ResetImage {
            scratch_works: true,
            ..Default::default()
        };
        let mut bar = Bar0::open(image).unwrap();
        let attr = bar.query_device();
        assert_eq!(attr.max_qp, abi::limits::QPS);
        assert_eq!(attr.abi_version, rocenic_abi::ABI_VERSION);
        assert_eq!(attr.max_qp_wr, 1 << abi::limits::LOG_MAX_QP_WR);
        assert!(attr.max_send_sge >= 4 && attr.max_recv_sge >= 4);
        let counters = bar.counters();
        assert_eq!(counters.len(), abi::COUNTERS.len());
        assert!(counters.iter().all(|(_, v)| *v == 0));
    }

    #[test]
    fn a_device_whose_writes_do_not_land_is_refused() {
        let dead = ResetImage::default();
        assert!(matches!(
            Bar0::open(dead),
            Err(Bar0Error::Scratch {
                wrote: 0x5A5A_A5A5,
                read: 0
            })
        ));
    }
}
