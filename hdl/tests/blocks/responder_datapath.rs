//! ResponderDatapath: the record-to-fields adapter agrees with rust-hdl's
//! own struct packing, and Yosys maps the whole block (parser, QP context,
//! message RAM, request checker, MR translation, receive queue, READ /
//! atomic resources, atomic unit, payload FIFO, realigner)
//! with its memories in block RAM. Its behaviour is verified under
//! Verilator against the model (sim/tests/blocks/responder_datapath.rs).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::primitives::wide::bits_from_words;
use rocenic_hdl::qp::qp_context_record::ContextRecordBits;
use rocenic_hdl::qp::qp_context_record::RECORD_BITS;
use rocenic_hdl::qp::record_fields::record_fields;
use rocenic_hdl::responder::responder_datapath::ResponderDatapath;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth};
use rust_hdl::prelude::*;

/// Random records: packing the fields and reading them back is the
/// identity both ways (the Verilog side is a plain assignment).
#[test]
fn record_fields_invert_the_struct_packing() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for case in 0..200 {
        let words: Vec<u64> = (0..5).map(|_| rng.gen()).collect();
        let raw: Bits<RECORD_BITS> = bits_from_words(&words);
        let fields = record_fields(raw);
        let packed: Bits<RECORD_BITS> = fields.into();
        assert_eq!(packed, raw, "case {case}");
        assert_eq!(record_fields(packed), fields, "case {case}");
    }
    let one = ContextRecordBits {
        rq_epsn: bits(0xAB_CDEF),
        nak_sent: true,
        in_progress: bits(2),
        ..Default::default()
    };
    let packed: Bits<RECORD_BITS> = one.into();
    assert_eq!(record_fields(packed), one);
}

#[test]
fn synthesizes_with_its_memories_in_block_ram() {
    let verilog = verilog_of::<ResponderDatapath>();
    let report = xilinx_synth("responder_datapath", &verilog).unwrap();
    let ramb36 = report.count("RAMB36E2");
    // The QP context (8 RAMB36), the message RAM (1K x 160), the MR
    // table and MTT, the receive queue's rings (16K x 192, about 86
    // RAMB36), the READ / atomic resources (16K x 177, about 78 RAMB36),
    // the parser's and this block's FIFOs: all block RAM, so the
    // flip-flops are the pipelines' registers only.
    assert!(ramb36 >= 8 + 4 + 8 + 86 + 78, "{}", report.log);
    assert!(report.flip_flops() < 30_000, "{}", report.log);
}
