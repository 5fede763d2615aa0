//! `IcrcGenerator`: computes the ICRC of a RoCEv2 frame for transmission,
//! 64 bytes per cycle; the TX builder appends it after the pad.
//!
//! Same front as the checker (masking stage, beat core); the zero bytes
//! that filled the last beat are then taken back out of the register by
//! six conditional stages `A⁻³²`, `A⁻¹⁶`, … `A⁻¹` (one per bit of the fill
//! count), two per pipeline stage, and the register is complemented. The
//! ICRC goes on the wire least significant byte first, which in this
//! datapath's lane order is simply `icrc` placed in four consecutive byte
//! lanes, bits 7:0 first.
//!
//! Ports:
//! - `clock`, `reset` (synchronous), `advance` (clock enable);
//! - the beat inputs of [`crate::frame::crc::icrc_mask::IcrcMask`], with `beat_end`
//!   marking the beat that holds the last pad (or payload, or header)
//!   byte, i.e. the byte before the ICRC;
//! - `icrc_valid` (high for the advance that carries a frame's ICRC) and
//!   `icrc` (32 bits).
//!
//! Latency: 6 advances from the end beat (mask, data term, register, three
//! undo stages). Throughput: one beat per cycle.

use crate::frame::crc::crc32_beat::Crc32Beat;
use crate::frame::crc::crc32_math::{UndoStages, UNDO_STAGE_BYTES};
use crate::frame::crc::gf2_matrix::Gf2Matrix;
use crate::frame::crc::icrc_mask::IcrcMask;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct IcrcGenerator {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub advance: Signal<In, Bit>,
    pub beat_valid: Signal<In, Bit>,
    pub beat_first: Signal<In, Bit>,
    pub beat_ipv6: Signal<In, Bit>,
    pub beat_end: Signal<In, Bit>,
    pub beat_end_bytes: Signal<In, Bits<6>>,
    pub beat_data: Signal<In, Bits<512>>,
    pub icrc_valid: Signal<Out, Bit>,
    pub icrc: Signal<Out, Bits<32>>,
    mask: IcrcMask,
    core: Crc32Beat,
    /// `undo[k]` takes `UNDO_STAGE_BYTES[k]` zero bytes out.
    undo: [Gf2Matrix<32, 32>; 6],
    after: [Signal<Local, Bits<32>>; 6],
    stage_state: [DFF<Bits<32>>; 3],
    stage_fill: [DFF<Bits<6>>; 3],
    stage_valid: [DFF<Bit>; 3],
}

impl Default for IcrcGenerator {
    fn default() -> Self {
        assert_eq!(UNDO_STAGE_BYTES, [32, 16, 8, 4, 2, 1]);
        let stages = UndoStages::default().stages;
        IcrcGenerator {
            clock: Default::default(),
            reset: Default::default(),
            advance: Default::default(),
            beat_valid: Default::default(),
            beat_first: Default::default(),
            beat_ipv6: Default::default(),
            beat_end: Default::default(),
            beat_end_bytes: Default::default(),
            beat_data: Default::default(),
            icrc_valid: Default::default(),
            icrc: Default::default(),
            mask: Default::default(),
            core: Default::default(),
            undo: std::array::from_fn(|k| Gf2Matrix::new(stages[k].clone())),
            after: Default::default(),
            stage_state: Default::default(),
            stage_fill: Default::default(),
            stage_valid: Default::default(),
        }
    }
}

impl Logic for IcrcGenerator {
    #[hdl_gen]
    fn update(&mut self) {
        for k in 0..3 {
            self.stage_state[k].clock.next = self.clock.val();
            self.stage_fill[k].clock.next = self.clock.val();
            self.stage_valid[k].clock.next = self.clock.val();
            self.stage_state[k].d.next = self.stage_state[k].q.val();
            self.stage_fill[k].d.next = self.stage_fill[k].q.val();
            self.stage_valid[k].d.next = self.stage_valid[k].q.val();
        }
        self.mask.clock.next = self.clock.val();
        self.mask.reset.next = self.reset.val();
        self.mask.advance.next = self.advance.val();
        self.mask.beat_valid.next = self.beat_valid.val();
        self.mask.beat_first.next = self.beat_first.val();
        self.mask.beat_ipv6.next = self.beat_ipv6.val();
        self.mask.beat_end.next = self.beat_end.val();
        self.mask.beat_end_bytes.next = self.beat_end_bytes.val();
        self.mask.beat_data.next = self.beat_data.val();
        self.core.clock.next = self.clock.val();
        self.core.reset.next = self.reset.val();
        self.core.advance.next = self.advance.val();
        self.core.in_valid.next = self.mask.masked_valid.val();
        self.core.in_first.next = self.mask.masked_first.val();
        self.core.in_data.next = self.mask.masked_data.val();
        self.core.in_offset.next = self.mask.masked_offset.val();
        self.core.in_tag.next = self.mask.masked_tag.val();
        // Undo stages 0,1 read the core, 2,3 the first register, 4,5 the
        // second; stage k applies when fill bit 5-k is set.
        self.undo[0].operand.next = self.core.out_state.val();
        self.undo[1].operand.next = self.after[0].val();
        self.undo[2].operand.next = self.stage_state[0].q.val();
        self.undo[3].operand.next = self.after[2].val();
        self.undo[4].operand.next = self.stage_state[1].q.val();
        self.undo[5].operand.next = self.after[4].val();
        self.after[0].next = self.core.out_state.val();
        if self.core.out_tag.val().get_bit(5) {
            self.after[0].next = self.undo[0].product.val();
        }
        self.after[1].next = self.after[0].val();
        if self.core.out_tag.val().get_bit(4) {
            self.after[1].next = self.undo[1].product.val();
        }
        self.after[2].next = self.stage_state[0].q.val();
        if self.stage_fill[0].q.val().get_bit(3) {
            self.after[2].next = self.undo[2].product.val();
        }
        self.after[3].next = self.after[2].val();
        if self.stage_fill[0].q.val().get_bit(2) {
            self.after[3].next = self.undo[3].product.val();
        }
        self.after[4].next = self.stage_state[1].q.val();
        if self.stage_fill[1].q.val().get_bit(1) {
            self.after[4].next = self.undo[4].product.val();
        }
        self.after[5].next = self.after[4].val();
        if self.stage_fill[1].q.val().get_bit(0) {
            self.after[5].next = self.undo[5].product.val();
        }
        if self.advance.val() {
            self.stage_state[0].d.next = self.after[1].val();
            self.stage_fill[0].d.next = self.core.out_tag.val().get_bits::<6>(0);
            self.stage_valid[0].d.next =
                self.core.out_valid.val() & self.core.out_tag.val().get_bit(6);
            self.stage_state[1].d.next = self.after[3].val();
            self.stage_fill[1].d.next = self.stage_fill[0].q.val();
            self.stage_valid[1].d.next = self.stage_valid[0].q.val();
            self.stage_state[2].d.next = !self.after[5].val();
            self.stage_fill[2].d.next = self.stage_fill[1].q.val();
            self.stage_valid[2].d.next = self.stage_valid[1].q.val();
        }
        if self.reset.val() {
            for k in 0..3 {
                self.stage_valid[k].d.next = false;
            }
        }
        self.icrc_valid.next = self.stage_valid[2].q.val();
        self.icrc.next = self.stage_state[2].q.val();
    }
}
