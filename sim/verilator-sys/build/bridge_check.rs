//! `BridgeCheck`: the Verilator bridge's self-test block, not part of the
//! NIC. The build script adds it to the blocks `rocenic_hdl::export` lists,
//! so the bridge is tested on a block made for it.

use rust_hdl::prelude::*;

/// A small configuration interface, so the bridge is exercised on rust-hdl's
/// `iface$field` port naming.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct CountPort {
    /// Count the cycles at whose rising edge this is high.
    pub enable: Signal<In, Bit>,
    /// Number of enabled rising edges since power-up, wrapping.
    pub count: Signal<Out, Bits<32>>,
}

/// Self-test block for the Verilator bridge, not part of the NIC.
///
/// It covers what every later block relies on: a 512-bit datapath register
/// (`y` is `a ^ b` as sampled at the previous rising edge), combinational
/// outputs of every storage class Verilator uses (1..=8, ..=16, ..=32, ..=64
/// and wide word arrays; `nN` is the bitwise NOT of `wN` within N bits),
/// OR-reductions `anyN` that Verilator computes over whole storage words, so
/// bits above a port's width left set by the bridge would show up, and a
/// counter behind an interface port.
#[derive(LogicBlock, Default)]
pub struct BridgeCheck {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bits<512>>,
    pub b: Signal<In, Bits<512>>,
    pub y: Signal<Out, Bits<512>>,
    pub w1: Signal<In, Bit>,
    pub n1: Signal<Out, Bit>,
    pub w12: Signal<In, Bits<12>>,
    pub n12: Signal<Out, Bits<12>>,
    pub any12: Signal<Out, Bit>,
    pub w33: Signal<In, Bits<33>>,
    pub n33: Signal<Out, Bits<33>>,
    pub w64: Signal<In, Bits<64>>,
    pub n64: Signal<Out, Bits<64>>,
    pub w100: Signal<In, Bits<100>>,
    pub n100: Signal<Out, Bits<100>>,
    pub any100: Signal<Out, Bit>,
    pub counter: CountPort,
    xor_q: DFF<Bits<512>>,
    count_q: DFF<Bits<32>>,
}

impl Logic for BridgeCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, xor_q, count_q);
        self.xor_q.d.next = self.a.val() ^ self.b.val();
        self.y.next = self.xor_q.q.val();
        self.n1.next = !self.w1.val();
        self.n12.next = !self.w12.val();
        self.n33.next = !self.w33.val();
        self.n64.next = !self.w64.val();
        self.n100.next = !self.w100.val();
        self.any12.next = self.w12.val().any();
        self.any100.next = self.w100.val().any();
        if self.counter.enable.val() {
            self.count_q.d.next = self.count_q.q.val() + 1;
        }
        self.counter.count.next = self.count_q.q.val();
    }
}
