//! Host memory: the DMA read and write port records, memory-region
//! translation with every protection check, the transmit paths' payload
//! fetch (tagged reads reassembled out of order), the receive paths' write
//! mover, and the arbiters that share one host read and one write port.

pub mod dma_port;
pub mod dma_read_arbiter;
pub mod dma_write_arbiter;
pub mod dma_write_mover;
pub mod mr_translate;
pub mod payload_fetch;
