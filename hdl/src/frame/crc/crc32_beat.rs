//! `Crc32Beat`: the reusable core of the CRC-32 engines, 64 bytes per
//! cycle.
//!
//! Ports:
//! - `clock`; `reset` (synchronous, high: drops the beats in flight);
//! - `advance` (in): clock enable. Registers move only when it is high, so
//!   a stalled enclosing pipeline keeps the engine in step with it;
//! - `in_valid`, `in_first`, `in_data` (512), `in_offset` (32), `in_tag`
//!   (8): one beat. Bytes the CRC does not cover must already be zero
//!   (zeros at the end of a message are taken out later by the caller: see
//!   `crc32_math`). `in_offset` is XORed into the data term: callers fold
//!   constants into it (the initial register's contribution on a first
//!   beat, fields a protocol masks to ones). `in_tag` travels alongside;
//! - `out_valid`, `out_state` (32), `out_tag`: the raw register (no final
//!   complement) after each beat, 2 advances after the beat went in.
//!
//! Throughput: one beat per cycle. The data term `M·d` (512 inputs, up to
//! about 300 per output bit, four LUT6 levels) is registered before the
//! loop `s' = A⁶⁴·s ⊕ term`, whose feedback path is one 32-input XOR
//! (two LUT levels) plus the first-beat mux: the loop, not the wide tree,
//! sets the clock ceiling.

use crate::frame::crc::crc32_math::BeatCrc;
use crate::frame::crc::gf2_matrix::Gf2Matrix;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct Crc32Beat {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub advance: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_first: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<512>>,
    pub in_offset: Signal<In, Bits<32>>,
    pub in_tag: Signal<In, Bits<8>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_state: Signal<Out, Bits<32>>,
    pub out_tag: Signal<Out, Bits<8>>,
    data_term: Gf2Matrix<512, 32>,
    state_step: Gf2Matrix<32, 32>,
    term: DFF<Bits<32>>,
    term_valid: DFF<Bit>,
    term_first: DFF<Bit>,
    term_tag: DFF<Bits<8>>,
    state: DFF<Bits<32>>,
    state_valid: DFF<Bit>,
    state_tag: DFF<Bits<8>>,
}

impl Default for Crc32Beat {
    fn default() -> Self {
        let maps = BeatCrc::default();
        Crc32Beat {
            clock: Default::default(),
            reset: Default::default(),
            advance: Default::default(),
            in_valid: Default::default(),
            in_first: Default::default(),
            in_data: Default::default(),
            in_offset: Default::default(),
            in_tag: Default::default(),
            out_valid: Default::default(),
            out_state: Default::default(),
            out_tag: Default::default(),
            data_term: Gf2Matrix::new(maps.data),
            state_step: Gf2Matrix::new(maps.state),
            term: Default::default(),
            term_valid: Default::default(),
            term_first: Default::default(),
            term_tag: Default::default(),
            state: Default::default(),
            state_valid: Default::default(),
            state_tag: Default::default(),
        }
    }
}

impl Logic for Crc32Beat {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            term,
            term_valid,
            term_first,
            term_tag,
            state,
            state_valid,
            state_tag
        );
        self.data_term.operand.next = self.in_data.val();
        self.state_step.operand.next = self.state.q.val();
        if self.advance.val() {
            self.term.d.next = self.data_term.product.val() ^ self.in_offset.val();
            self.term_valid.d.next = self.in_valid.val();
            self.term_first.d.next = self.in_first.val();
            self.term_tag.d.next = self.in_tag.val();
            self.state_valid.d.next = self.term_valid.q.val();
            self.state_tag.d.next = self.term_tag.q.val();
            if self.term_valid.q.val() {
                if self.term_first.q.val() {
                    self.state.d.next = self.term.q.val();
                } else {
                    self.state.d.next = self.state_step.product.val() ^ self.term.q.val();
                }
            }
        }
        if self.reset.val() {
            self.term_valid.d.next = false;
            self.state_valid.d.next = false;
        }
        self.out_valid.next = self.state_valid.q.val();
        self.out_state.next = self.state.q.val();
        self.out_tag.next = self.state_tag.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::crc::crc32_math::{beat_words, register_after, zero_bytes_map, INIT};
    use crate::primitives::wide::bits_from_words;
    use rocenic_hdl_testbench::CycleSim;

    /// A 150-byte message as three beats, the last zero-filled, with the
    /// initial register folded into the first beat's offset. The engine's
    /// register after the last beat must be the zero-filled message's
    /// register; stalls (advance low) in between must change nothing.
    #[test]
    fn three_beats_with_stalls_match_the_bytewise_register() {
        let msg: Vec<u8> = (0..150u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut padded = msg.clone();
        padded.resize(192, 0);
        let expect = register_after(INIT, &padded);
        let init_term = zero_bytes_map(64).apply_u64(u64::from(INIT));

        let mut sim = CycleSim::new(Crc32Beat::default(), |b| &mut b.clock);
        sim.record();
        sim.uut.reset.next = false;
        let mut seen = Vec::new();
        let mut beat = 0;
        for cycle in 0..12 {
            let stall = cycle % 3 == 1;
            sim.uut.advance.next = !stall;
            sim.uut.in_valid.next = beat < 3;
            sim.uut.in_first.next = beat == 0;
            let chunk = &padded[64 * beat.min(2)..64 * beat.min(2) + 64];
            sim.uut.in_data.next = bits_from_words(&beat_words(chunk));
            sim.uut.in_offset.next = bits::<32>(if beat == 0 { init_term } else { 0 });
            sim.uut.in_tag.next = bits::<8>(beat as u64);
            sim.settle();
            if !stall && sim.uut.out_valid.val() {
                seen.push((
                    sim.uut.out_tag.val().to_u64(),
                    sim.uut.out_state.val().to_u64(),
                ));
            }
            sim.tick();
            if !stall && beat < 3 {
                beat += 1;
            }
        }
        assert_eq!(seen.len(), 3, "one state per beat, none repeated by stalls");
        assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(seen[2].1 as u32, expect);
        assert_eq!(seen[0].1 as u32, register_after(INIT, &padded[..64]));
        // The generated Verilog (custom XOR trees included) does the same.
        let cycles = sim.replay_in_verilator("crc32_beat").unwrap();
        assert_eq!(cycles, 12);
    }
}
