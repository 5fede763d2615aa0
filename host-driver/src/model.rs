//! The model backend: hosts whose NIC is the reference model behind the
//! host ABI (`rocenic_model::host_interface`), on the simulated fabric.
//!
//! A [`ModelCluster`] is one fabric (one switch, one 100 GbE link per
//! host); each [`ModelDevice`] is one host's handle to its NIC and its
//! memory. MMIO and DMA take no simulated time here; time moves when the
//! driver waits ([`Device::service`]): the fabric runs its next event, or
//! a microsecond passes when none is due.

use crate::device::{Device, DeviceError};
use crate::verbs::AddressVector;
use rocenic_fabric::{Fabric, LinkConfig, NodeId, SwitchConfig};
use rocenic_model::host_interface::HostInterface;
use rocenic_model::memory::MIN_PAGE_SIZE;
use rocenic_model::nic::NicConfig;
use std::cell::RefCell;
use std::net::IpAddr;
use std::rc::Rc;

type SharedFabric = Rc<RefCell<Fabric<HostInterface>>>;

/// Simulated time that passes in one [`Device::service`] when the fabric
/// has nothing to do.
const IDLE_STEP_NS: u64 = 1_000;

/// Hosts with model NICs on one fabric.
pub struct ModelCluster {
    fabric: SharedFabric,
}

/// One host: its NIC's BARs and its memory.
pub struct ModelDevice {
    fabric: SharedFabric,
    node: NodeId,
    /// Where the MSI-X messages land: one word per vector.
    interrupt_page: Option<u64>,
    /// Messages per vector that a wait has already returned for.
    interrupts_seen: std::collections::BTreeMap<u16, u64>,
}

/// Host `n`'s MAC address.
pub fn host_mac(n: u8) -> [u8; 6] {
    [0x02, 0x52, 0x43, 0x00, 0x00, n]
}

/// Host `n`'s IPv4 address.
pub fn host_ip(n: u8) -> IpAddr {
    IpAddr::from([10, 0, 0, n])
}

/// The address of host `n` as a connection's peer: its MAC and IP, DSCP
/// 26 and UDP source port 0xC000.
pub fn host_address(n: u8) -> AddressVector {
    AddressVector {
        dmac: host_mac(n),
        dgid: host_ip(n),
        dscp: 26,
        udp_src_port: 0xC000,
    }
}

impl ModelCluster {
    /// `hosts` hosts (numbered from 1, see [`host_mac`] / [`host_ip`]) on
    /// links of `link`.
    pub fn new(hosts: u8, seed: u64, link: LinkConfig) -> ModelCluster {
        let mut fabric = Fabric::new(seed, SwitchConfig::default());
        for n in 1..=hosts {
            let nic = HostInterface::new(NicConfig::new(host_mac(n), host_ip(n)));
            fabric.add_node(nic, link.clone());
        }
        ModelCluster {
            fabric: Rc::new(RefCell::new(fabric)),
        }
    }

    /// Host `n`'s device (1-based).
    pub fn device(&self, n: u8) -> ModelDevice {
        assert!(
            (1..=self.fabric.borrow().node_count()).contains(&usize::from(n)),
            "no host {n}"
        );
        ModelDevice {
            fabric: Rc::clone(&self.fabric),
            node: NodeId(usize::from(n) - 1),
            interrupt_page: None,
            interrupts_seen: Default::default(),
        }
    }

    /// The fabric, for captures and statistics.
    pub fn fabric(&self) -> std::cell::RefMut<'_, Fabric<HostInterface>> {
        self.fabric.borrow_mut()
    }
}

impl ModelDevice {
    fn with<T>(&self, f: impl FnOnce(&mut HostInterface) -> T) -> T {
        f(self.fabric.borrow_mut().node_mut(self.node))
    }

    /// The NIC, for checks beside the driver's view.
    pub fn host_interface<T>(&self, f: impl FnOnce(&HostInterface) -> T) -> T {
        f(self.fabric.borrow().node(self.node))
    }
}

fn unmapped(va: u64, len: u64) -> DeviceError {
    DeviceError::Unmapped(va, len)
}

impl Device for ModelDevice {
    fn read32(&mut self, bar: u8, offset: u32) -> u32 {
        self.with(|h| h.read32(bar, offset))
    }

    fn write32(&mut self, bar: u8, offset: u32, value: u32) {
        self.with(|h| h.write32(bar, offset, value))
    }

    fn alloc(&mut self, len: u64) -> Result<u64, DeviceError> {
        Ok(self.with(|h| h.memory_mut().alloc(len, MIN_PAGE_SIZE)))
    }

    fn alloc_coherent(&mut self, len: u64) -> Result<(u64, u64), DeviceError> {
        Ok(self.with(|h| h.memory_mut().alloc_contiguous(len)))
    }

    fn pin(&mut self, va: u64, len: u64) -> Result<(u64, Vec<u64>), DeviceError> {
        self.host_interface(|h| h.nic().memory().pages(va, len))
            .map_err(|_| unmapped(va, len))
    }

    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let len = buf.len() as u64;
        self.host_interface(|h| h.nic().memory().read_va(va, buf))
            .map_err(|_| unmapped(va, len))
    }

    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), DeviceError> {
        self.with(|h| h.memory_mut().write_va(va, data))
            .map_err(|_| unmapped(va, data.len() as u64))
    }

    fn enable_interrupt(&mut self, vector: u16) -> Result<(), DeviceError> {
        use rocenic_abi::registers as regs;
        let page = match self.interrupt_page {
            Some(page) => page,
            None => {
                let (_, bus) = self.alloc_coherent(4096)?;
                self.interrupt_page = Some(bus);
                bus
            }
        };
        let block = regs::bar0_offset(&regs::MSIX);
        let at = |name: &str| {
            let r = regs::MSIX
                .register(name)
                .expect("the MSI-X table's registers");
            block + r.offset_of(u32::from(vector))
        };
        let address = page + 4 * u64::from(vector);
        self.write32(0, at("vector_address"), address as u32);
        self.write32(0, at("vector_address") + 4, (address >> 32) as u32);
        self.write32(0, at("vector_data"), 0x100 | u32::from(vector));
        self.write32(0, at("vector_control"), 0);
        Ok(())
    }

    fn wait_interrupt(&mut self, vector: u16, timeout_ns: u64) -> Result<bool, DeviceError> {
        let deadline = self.now_ns().saturating_add(timeout_ns);
        let seen = self.interrupts_seen.get(&vector).copied().unwrap_or(0);
        loop {
            let sent = self.host_interface(|h| h.msix_messages(vector));
            if sent > seen {
                self.interrupts_seen.insert(vector, sent);
                return Ok(true);
            }
            if self.now_ns() > deadline {
                return Ok(false);
            }
            self.service();
        }
    }

    fn service(&mut self) {
        let mut fabric = self.fabric.borrow_mut();
        if !fabric.step() {
            let later = fabric.now() + IDLE_STEP_NS;
            fabric.run_until(later);
        }
    }

    fn now_ns(&self) -> u64 {
        self.fabric.borrow().now()
    }
}
