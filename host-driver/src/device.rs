//! The one abstraction every backend provides: MMIO to the NIC's BARs,
//! host memory the NIC reaches by DMA, interrupts and time.
//!
//! The verbs ([`crate::verbs`]) use nothing else, so the same application
//! code runs on the reference model, the Verilated RTL and a board. Host
//! memory is the backend's because in simulation it is simulated: the
//! application allocates its buffers through the device and reads and
//! writes them by virtual address, as it would its own memory.

use crate::bar0::Mmio;

/// Why the device's memory could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("{0:#x} .. + {1:#x} is not host memory this device mapped")]
    Unmapped(u64, u64),
    #[error("out of host memory for {0:#x} bytes")]
    OutOfMemory(u64),
    #[error("{0}")]
    Backend(String),
}

pub trait Device {
    /// A 32-bit read of `bar` at byte `offset`.
    fn read32(&mut self, bar: u8, offset: u32) -> u32;
    /// A 32-bit write of `bar` at byte `offset`.
    fn write32(&mut self, bar: u8, offset: u32, value: u32);
    /// `len` bytes of ordinary host memory (for buffers an MR covers):
    /// its virtual address.
    fn alloc(&mut self, len: u64) -> Result<u64, DeviceError>;
    /// `len` bytes that are contiguous and 4 KiB aligned on the bus (for
    /// rings and mailboxes): the virtual and the bus address.
    fn alloc_coherent(&mut self, len: u64) -> Result<(u64, u64), DeviceError>;
    /// Pins `[va, va + len)` for DMA: its page size and the bus address of
    /// each page, the first holding `va`.
    fn pin(&mut self, va: u64, len: u64) -> Result<(u64, Vec<u64>), DeviceError>;
    /// CPU access to host memory.
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), DeviceError>;
    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), DeviceError>;
    /// Routes MSI-X `vector` to this process and unmasks it (on a board
    /// VFIO programs the table; a simulated host programs it itself).
    fn enable_interrupt(&mut self, vector: u16) -> Result<(), DeviceError>;
    /// Waits up to `timeout_ns` of device time for a message on `vector`
    /// since the last wait returned; whether one came.
    fn wait_interrupt(&mut self, vector: u16, timeout_ns: u64) -> Result<bool, DeviceError>;
    /// The driver has nothing to do until the device acts: a simulated
    /// device runs to its next event; hardware runs on its own.
    fn service(&mut self);
    /// Nanoseconds on the device's clock (simulated time in simulation).
    fn now_ns(&self) -> u64;
}

/// BAR0 of a device, as [`crate::bar0::Bar0`] takes it.
pub struct Bar0Mmio<D: Device>(pub D);

impl<D: Device> Mmio for Bar0Mmio<D> {
    fn read32(&mut self, offset: u32) -> u32 {
        self.0.read32(0, offset)
    }

    fn write32(&mut self, offset: u32, value: u32) {
        self.0.write32(0, offset, value)
    }
}
