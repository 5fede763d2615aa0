//! The AXI-Stream interface between rocenic blocks (AMBA AXI4-Stream,
//! IHI 0051: TDATA, TKEEP, TLAST, TVALID, TREADY).
//!
//! A beat moves on a rising clock edge where `tvalid` and `tready` are both
//! high. A source that raised `tvalid` keeps it and the beat unchanged until
//! the beat moves, and never waits for `tready` before raising `tvalid`.
//! `tkeep` has one bit per data byte, bit `i` for `tdata[8i+7:8i]`; inside a
//! packet every beat but the last has all bytes kept. The signals `TSTRB`,
//! `TID`, `TDEST` and `TUSER` are not used.
//!
//! Widths are generic so tests can simulate narrow instances quickly; the
//! NIC uses [`DATA_BITS`] and [`KEEP_BITS`].

use rust_hdl::prelude::*;

/// Datapath width: 512 bits at 250 MHz carry 128 Gb/s, above 100 GbE.
pub const DATA_BITS: usize = 512;
/// One keep bit per data byte.
pub const KEEP_BITS: usize = DATA_BITS / 8;

/// The driving side of a stream. `K` must be `D / 8`; rust-hdl cannot
/// compute it in the type, so both are spelled out.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxisSink"]
pub struct AxisSource<const D: usize, const K: usize> {
    pub tdata: Signal<Out, Bits<D>>,
    pub tkeep: Signal<Out, Bits<K>>,
    pub tlast: Signal<Out, Bit>,
    pub tvalid: Signal<Out, Bit>,
    pub tready: Signal<In, Bit>,
}

/// The receiving side of a stream.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxisSource"]
pub struct AxisSink<const D: usize, const K: usize> {
    pub tdata: Signal<In, Bits<D>>,
    pub tkeep: Signal<In, Bits<K>>,
    pub tlast: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    pub tready: Signal<Out, Bit>,
}

/// The NIC's stream source, 512 bits wide.
pub type Axis512Source = AxisSource<DATA_BITS, KEEP_BITS>;
/// The NIC's stream sink, 512 bits wide.
pub type Axis512Sink = AxisSink<DATA_BITS, KEEP_BITS>;

/// One payload beat held in a receive path's FIFO, lane 0 = the packet's
/// next byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PayloadWord {
    pub data: Bits<512>,
    pub last: Bit,
}
