//! The MMIO port of the host interface: an AXI4-Lite target with a 64-bit
//! data bus (AMBA AXI4-Lite; the shape a PCIe hard IP's AXI bridge, or
//! corundum's, hands a register block). `A` byte-address bits.
//!
//! Write address and data are taken together (`awready` and `wready` rise
//! in the same cycle); `wstrb` marks the bytes written, and a 32-bit half
//! counts as written only with its four strobes set. `bresp` and `rresp`
//! are always OKAY: an access to no register completes normally (reads 0).

use rust_hdl::prelude::*;

/// The target side (the register block's port).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxiLiteInitiator"]
pub struct AxiLiteTarget<const A: usize> {
    pub awaddr: Signal<In, Bits<A>>,
    pub awvalid: Signal<In, Bit>,
    pub awready: Signal<Out, Bit>,
    pub wdata: Signal<In, Bits<64>>,
    pub wstrb: Signal<In, Bits<8>>,
    pub wvalid: Signal<In, Bit>,
    pub wready: Signal<Out, Bit>,
    pub bresp: Signal<Out, Bits<2>>,
    pub bvalid: Signal<Out, Bit>,
    pub bready: Signal<In, Bit>,
    pub araddr: Signal<In, Bits<A>>,
    pub arvalid: Signal<In, Bit>,
    pub arready: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<64>>,
    pub rresp: Signal<Out, Bits<2>>,
    pub rvalid: Signal<Out, Bit>,
    pub rready: Signal<In, Bit>,
}

/// The initiator side, joined to a target.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxiLiteTarget"]
pub struct AxiLiteInitiator<const A: usize> {
    pub awaddr: Signal<Out, Bits<A>>,
    pub awvalid: Signal<Out, Bit>,
    pub awready: Signal<In, Bit>,
    pub wdata: Signal<Out, Bits<64>>,
    pub wstrb: Signal<Out, Bits<8>>,
    pub wvalid: Signal<Out, Bit>,
    pub wready: Signal<In, Bit>,
    pub bresp: Signal<In, Bits<2>>,
    pub bvalid: Signal<In, Bit>,
    pub bready: Signal<Out, Bit>,
    pub araddr: Signal<Out, Bits<A>>,
    pub arvalid: Signal<Out, Bit>,
    pub arready: Signal<In, Bit>,
    pub rdata: Signal<In, Bits<64>>,
    pub rresp: Signal<In, Bits<2>>,
    pub rvalid: Signal<In, Bit>,
    pub rready: Signal<Out, Bit>,
}
