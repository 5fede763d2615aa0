//! `QpSlotRam`: the per-QP ring storage the queue blocks share, `2^D`
//! slots of a `T` for each of `2^A` QPs in one simple dual-port,
//! synchronous-read RAM addressed `{qpn, slot}`, written so that Yosys and
//! vendor tools map it to block RAM.
//!
//! # Ports
//!
//! - `clock`;
//! - `read_qpn`, `read_slot` (in) → `read_data` (out, `T`): the word at
//!   the address sampled by a rising edge, presented from that edge on
//!   (latency 1, one read per cycle);
//! - `write_enable`, `write_qpn`, `write_slot`, `write_data` (in): the word
//!   written at the rising edge when `write_enable` is high.
//!
//! The address is the concatenation `{qpn, slot}`, formed in the Verilog:
//! stable Rust cannot spell `Bits<{A + D}>`, which is why this is not a
//! [`crate::primitives::sync_ram::SyncRam`].
//!
//! No power-up value: every client reads only slots a post wrote (its
//! per-QP count or pointers, kept in a zeroed RAM, say which), and a
//! clearing loop over 16K words costs Yosys minutes per run. Simulation
//! reads unwritten words as zero. Reading the address written at the same
//! edge is don't-care (`no_rw_check`): no client uses such a read, so the
//! RAM needs no collision logic.

use rust_hdl::core::timing::TimingInfo;
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// The RAM (see the module doc).
#[derive(LogicBlock)]
pub struct QpSlotRam<T: Synth, const A: usize, const D: usize> {
    pub clock: Signal<In, Clock>,
    pub read_qpn: Signal<In, Bits<A>>,
    pub read_slot: Signal<In, Bits<D>>,
    pub read_data: Signal<Out, T>,
    pub write_enable: Signal<In, Bit>,
    pub write_qpn: Signal<In, Bits<A>>,
    pub write_slot: Signal<In, Bits<D>>,
    pub write_data: Signal<In, T>,
    /// Written words only; the rest read as zero.
    _contents: BTreeMap<(u64, u64), T>,
}

impl<T: Synth, const A: usize, const D: usize> Default for QpSlotRam<T, A, D> {
    fn default() -> Self {
        QpSlotRam {
            clock: Default::default(),
            read_qpn: Default::default(),
            read_slot: Default::default(),
            read_data: Default::default(),
            write_enable: Default::default(),
            write_qpn: Default::default(),
            write_slot: Default::default(),
            write_data: Default::default(),
            _contents: BTreeMap::new(),
        }
    }
}

impl<T: Synth, const A: usize, const D: usize> Logic for QpSlotRam<T, A, D> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let read = (self.read_qpn.val().to_u64(), self.read_slot.val().to_u64());
            self.read_data.next = self._contents.get(&read).copied().unwrap_or_default();
            if self.write_enable.val() {
                self._contents.insert(
                    (
                        self.write_qpn.val().to_u64(),
                        self.write_slot.val().to_u64(),
                    ),
                    self.write_data.val(),
                );
            }
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
(* no_rw_check *)
reg [{top}:0] mem [0:{last}];
initial read_data = {width}'d0;

always @(posedge clock) begin
    if (write_enable) begin
        mem[{{write_qpn, write_slot}}] <= write_data;
    end
    read_data <= mem[{{read_qpn, read_slot}}];
end
",
            top = T::BITS - 1,
            last = (1usize << (A + D)) - 1,
            width = T::BITS,
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "qp_slot_ram".into(),
            clock: "clock".into(),
            inputs: vec![
                "read_qpn".into(),
                "read_slot".into(),
                "write_enable".into(),
                "write_qpn".into(),
                "write_slot".into(),
                "write_data".into(),
            ],
            outputs: vec!["read_data".into()],
        }]
    }
}
