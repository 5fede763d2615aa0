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
//! memory, interrupts) with two backends: the simulator, where the NIC is
//! the reference model or the Verilated RTL, and a real board over PCIe. The
//! same application code and tests then run against both.
//!
//! The crate holds no code: the driver is not written (`docs/status.md`).
//! The verbs vocabulary it is to expose is `rocenic_model::verbs`, which
//! the reference model implements; the doorbell register map and the queue
//! entry formats are to be defined with the host interface.
