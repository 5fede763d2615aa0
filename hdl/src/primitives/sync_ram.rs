//! `SyncRam`: a simple dual-port, synchronous-read RAM of `2^A` words of
//! type `T`, written so that Yosys and vendor tools map it to block RAM.
//!
//! # Ports
//!
//! - `clock`;
//! - `read_address` (in, `A` bits) → `read_data` (out, `T`): the word at
//!   the address sampled by a rising edge, presented from that edge on
//!   (latency 1, one read per cycle);
//! - `write_enable`, `write_address`, `write_data` (in): the word written
//!   at the rising edge when `write_enable` is high (one write per cycle).
//!
//! Zero at power-up, as FPGA block RAM is after configuration. Reading the
//! address written at the same edge gives the old word in simulation and is
//! declared don't-care to Yosys (`no_rw_check`): block RAM's cross-port
//! collision behaviour varies by write mode and family, so every client
//! either never does it or forwards the new word itself, and the RAM needs
//! no collision logic.
//!
//! The simulation model keeps only written words (a 16K-entry table costs
//! nothing until used). The power-up value is an `initial` loop in the
//! Verilog; a large RAM whose client never reads a word it has not written
//! should leave it out ([`SyncRam::uninitialised`]): Yosys unrolls the loop
//! word by word, which takes minutes at 16K entries.
//!
//! Which memory a RAM becomes is the synthesis tool's choice by size (a
//! small one goes to LUT RAM); [`SyncRam::block_ram`] asks for block RAM
//! (`ram_style = "block"`).

use rust_hdl::core::timing::TimingInfo;
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// The RAM (see the module doc).
#[derive(LogicBlock)]
pub struct SyncRam<T: Synth, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, T>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, T>,
    /// Written words only; the rest read as zero.
    _contents: BTreeMap<u64, T>,
    /// Emit the power-up clearing loop.
    _zero_at_power_up: bool,
    /// Mark the memory for block RAM.
    _block_ram: bool,
}

impl<T: Synth, const A: usize> Default for SyncRam<T, A> {
    /// Zero at power-up.
    fn default() -> Self {
        SyncRam {
            clock: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            _contents: BTreeMap::new(),
            _zero_at_power_up: true,
            _block_ram: false,
        }
    }
}

impl<T: Synth, const A: usize> SyncRam<T, A> {
    /// Without the power-up clearing loop in the Verilog (simulation still
    /// reads unwritten words as zero): for clients that only read words
    /// they wrote.
    pub fn uninitialised() -> Self {
        SyncRam {
            _zero_at_power_up: false,
            ..Default::default()
        }
    }

    /// Zero at power-up, in block RAM whatever its size.
    pub fn block_ram() -> Self {
        SyncRam {
            _block_ram: true,
            ..Default::default()
        }
    }
}

impl<T: Synth, const A: usize> Logic for SyncRam<T, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let read = self.read_address.val().to_u64();
            self.read_data.next = self._contents.get(&read).copied().unwrap_or_default();
            if self.write_enable.val() {
                self._contents
                    .insert(self.write_address.val().to_u64(), self.write_data.val());
            }
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let width = T::BITS;
        let last = (1usize << A) - 1;
        let clear = if self._zero_at_power_up {
            format!(
                "\
integer i;
initial begin
    for (i = 0; i <= {last}; i = i + 1) begin
        mem[i] = {width}'d0;
    end
end
"
            )
        } else {
            String::new()
        };
        let style = if self._block_ram {
            ", ram_style = \"block\""
        } else {
            ""
        };
        Verilog::Custom(format!(
            "\
(* no_rw_check{style} *)
reg [{top}:0] mem [0:{last}];
{clear}initial read_data = {width}'d0;

always @(posedge clock) begin
    if (write_enable) begin
        mem[write_address] <= write_data;
    end
    read_data <= mem[read_address];
end
",
            top = width - 1,
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "sync_ram".into(),
            clock: "clock".into(),
            inputs: vec![
                "read_address".into(),
                "write_enable".into(),
                "write_address".into(),
                "write_data".into(),
            ],
            outputs: vec!["read_data".into()],
        }]
    }
}
