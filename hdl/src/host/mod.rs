//! The host interface: what stands between the PCIe side (MMIO, DMA,
//! MSI-X) and the transport core. Its register map and entry formats are
//! the contract in `rocenic-abi` (`docs/abi.md`); the blocks take their
//! offsets from it.

pub mod axi_lite;
pub mod bar_registers;
pub mod congestion_registers;
pub mod counter_bank;
pub mod cqe_writer;
pub mod event_queues;
pub mod wqe_decoder;
pub mod wqe_fetch;
