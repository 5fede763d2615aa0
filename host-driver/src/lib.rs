//! rocenic host driver: the verbs library applications use to drive a
//! rocenic NIC.
//!
//! Its design: the usual RDMA objects and calls, protection domains,
//! memory regions (registration pins pages and programs the NIC's MR
//! translation table), completion queues and queue pairs, `post_send`,
//! `post_recv` and `poll_cq`. Work requests are written into host-memory
//! queues and rung through doorbell registers in the NIC's PCIe BAR;
//! completions come back as entries the NIC DMA-writes into the completion
//! queue.
//!
//! Everything sits on one `Device` abstraction (BAR register access, DMA
//! memory, time; interrupts come with the event queues) with backends for
//! the simulator, where the NIC is
//! the reference model or the Verilated RTL, and for a real board over
//! PCIe, so the same application code and tests run against both.
//!
//! The register map and the queue entry formats are the contract in
//! [`rocenic_abi`] (rendered as `docs/abi.md`).
//!
//! - [`device`]: the `Device` trait every backend implements.
//! - [`verbs`]: `Context` and the verbs on top of it.
//! - [`model`] (feature `model`, the default): hosts whose NIC is the
//!   reference model behind the ABI, on the simulated fabric.
//! - [`bar0`], [`discovery`]: BAR0's block walk and registers.
//!
//! `examples/rdma_write.rs` is the whole flow in one page.

pub use rocenic_abi as abi;

pub mod bar0;
pub mod device;
pub mod discovery;
#[cfg(feature = "model")]
pub mod model;
pub mod verbs;
