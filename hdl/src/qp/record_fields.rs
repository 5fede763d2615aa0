//! `RecordFields`: the QP context RAM's 288-bit record word seen as its
//! fields ([`ContextRecordBits`]), the same bits renamed: rust-hdl converts
//! a struct to bits but not back.
//!
//! Ports: `record` (in, [`RECORD_BITS`]), `fields` (out). Combinational
//! (latency 0), wires only.

use crate::qp::qp_context_record::{ContextRecordBits, RECORD_BITS};
use rust_hdl::prelude::*;

/// The QP context RAM's record word seen as its fields (the same bits;
/// rust-hdl converts a struct to bits but not back).
#[derive(LogicBlock, Default)]
pub struct RecordFields {
    pub record: Signal<In, Bits<RECORD_BITS>>,
    pub fields: Signal<Out, ContextRecordBits>,
}

/// Unpacks a record word into its fields (the simulation side of
/// [`RecordFields`]).
pub fn record_fields(b: Bits<RECORD_BITS>) -> ContextRecordBits {
    ContextRecordBits::from_word(b)
}

impl Logic for RecordFields {
    fn update(&mut self) {
        self.fields.next = record_fields(self.record.val());
    }

    fn connect(&mut self) {
        self.fields.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(*) fields = record;\n".into())
    }
}
