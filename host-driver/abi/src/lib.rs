//! rocenic's hardware/software contract, as data: the one place that says
//! where every register sits and how every queue entry is laid out.
//!
//! The RTL takes its offsets and widths from these tables, the driver
//! encodes and decodes through the same [`layout::Field`] values, and
//! `docs/abi.md` is rendered from them ([`markdown::render`]; a test fails
//! when the committed page differs). Nothing here does I/O.
//!
//! - [`registers`]: BAR0's discoverable register blocks (device and
//!   capabilities, control, admin queue, EQ doorbells, congestion control,
//!   counters, MSI-X)
//!   and the per-QP (BAR2) and per-CQ (BAR4) doorbell pages.
//! - [`wqe`], [`cqe`], [`eqe`]: the send and receive WQEs, the CQE and the
//!   event queue entry, with the owner-bit rule that keeps software from
//!   reading a torn entry.
//! - [`admin`]: the admin command set and its completions.
//! - [`codes`]: opcodes, statuses, flags and states, numbered as
//!   libibverbs numbers them wherever it has the same family.

pub mod admin;
pub mod codes;
pub mod cqe;
pub mod eqe;
pub mod layout;
pub mod markdown;
pub mod registers;
pub mod wqe;

/// This contract's version: major in bits 31:16, minor in 15:0 (the
/// device block's `abi_version`). A change that moves or redefines a field
/// bumps the major; one that only adds bumps the minor.
pub const ABI_VERSION: u32 = 0x0001_0001;

/// Every structure of the contract, in the order `docs/abi.md` lists them.
pub const LAYOUTS: &[&layout::Layout] = &[
    &wqe::send::LAYOUT,
    &wqe::send::atomic::LAYOUT,
    &wqe::recv::LAYOUT,
    &wqe::sge::LAYOUT,
    &cqe::LAYOUT,
    &eqe::LAYOUT,
    &admin::COMMAND,
    &admin::completion::LAYOUT,
    &admin::qp_attributes::LAYOUT,
];
