//! AXI-Stream register slice (skid buffer): registers every signal in both
//! directions, so a 512-bit stream can cross a block boundary or a long
//! route at 250 MHz without a combinational path from `down.tready` back to
//! `up.tready`, yet still moves one beat per cycle.
//!
//! Ports: `clock`, `reset` (synchronous, high: drops any beat held), `up`
//! (AXI-Stream sink, `D` data bits, `K` keep bits) and `down` (AXI-Stream
//! source).
//!
//! Two beat registers: `main` drives the downstream side; `skid` catches
//! the one beat that upstream may send in the cycle after downstream
//! stalls, because upstream only sees the stall through the registered
//! `up.tready` one cycle late. Latency is one cycle.

use crate::primitives::stream::{AxisSink, AxisSource};
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct AxisRegisterSlice<const D: usize, const K: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: drops any beat held in the slice.
    pub reset: Signal<In, Bit>,
    pub up: AxisSink<D, K>,
    pub down: AxisSource<D, K>,
    main_data: DFF<Bits<D>>,
    main_keep: DFF<Bits<K>>,
    main_last: DFF<Bit>,
    main_valid: DFF<Bit>,
    skid_data: DFF<Bits<D>>,
    skid_keep: DFF<Bits<K>>,
    skid_last: DFF<Bit>,
    skid_valid: DFF<Bit>,
}

impl<const D: usize, const K: usize> Logic for AxisRegisterSlice<D, K> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, main_data, main_keep, main_last, main_valid, skid_data, skid_keep,
            skid_last, skid_valid
        );
        // Upstream may send whenever the skid register is free: at most one
        // beat can arrive before it sees a stall, and that beat fits there.
        self.up.tready.next = !self.skid_valid.q.val();
        self.down.tvalid.next = self.main_valid.q.val();
        self.down.tdata.next = self.main_data.q.val();
        self.down.tkeep.next = self.main_keep.q.val();
        self.down.tlast.next = self.main_last.q.val();
        if self.down.tready.val() | !self.main_valid.q.val() {
            // `main` is free this edge: refill it, oldest beat first.
            if self.skid_valid.q.val() {
                self.main_data.d.next = self.skid_data.q.val();
                self.main_keep.d.next = self.skid_keep.q.val();
                self.main_last.d.next = self.skid_last.q.val();
                self.main_valid.d.next = true;
                self.skid_valid.d.next = false;
            } else {
                self.main_data.d.next = self.up.tdata.val();
                self.main_keep.d.next = self.up.tkeep.val();
                self.main_last.d.next = self.up.tlast.val();
                self.main_valid.d.next = self.up.tvalid.val();
            }
        } else if self.up.tvalid.val() & !self.skid_valid.q.val() {
            // Downstream stalled while upstream still had ready high.
            self.skid_data.d.next = self.up.tdata.val();
            self.skid_keep.d.next = self.up.tkeep.val();
            self.skid_last.d.next = self.up.tlast.val();
            self.skid_valid.d.next = true;
        }
        if self.reset.val() {
            self.main_valid.d.next = false;
            self.skid_valid.d.next = false;
        }
    }
}
