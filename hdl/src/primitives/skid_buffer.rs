//! `SkidBuffer`: a two-entry register slice for any rust-hdl value type,
//! used on the RX parser's outputs (payload beats with their drop flag,
//! header records) so that a stalled consumer never reaches the parser's
//! pipeline through a combinational path.
//!
//! Ports: `clock`, `reset` (synchronous, high: empties the buffer);
//! upstream `up_valid`, `up_data` (in), `up_ready` (out, a register: high
//! when the skid entry is free); downstream `down_valid`, `down_data`
//! (out, registers) and `down_ready` (in). Transfers follow AXI-Stream
//! rules on both sides. Latency 1 cycle; one item per cycle while the
//! consumer keeps up; the item sent in the cycle a stall is first seen
//! lands in the skid entry, so nothing is lost or duplicated.
//!
//! Same scheme as [`crate::primitives::register_slice::AxisRegisterSlice`], for values
//! that are not AXI-Stream beats.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct SkidBuffer<T: Synth> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub up_valid: Signal<In, Bit>,
    pub up_data: Signal<In, T>,
    pub up_ready: Signal<Out, Bit>,
    pub down_valid: Signal<Out, Bit>,
    pub down_data: Signal<Out, T>,
    pub down_ready: Signal<In, Bit>,
    main_data: DFF<T>,
    main_valid: DFF<Bit>,
    skid_data: DFF<T>,
    skid_valid: DFF<Bit>,
}

impl<T: Synth> Logic for SkidBuffer<T> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, main_data, main_valid, skid_data, skid_valid);
        self.up_ready.next = !self.skid_valid.q.val();
        self.down_valid.next = self.main_valid.q.val();
        self.down_data.next = self.main_data.q.val();
        if self.down_ready.val() | !self.main_valid.q.val() {
            if self.skid_valid.q.val() {
                self.main_data.d.next = self.skid_data.q.val();
                self.main_valid.d.next = true;
                self.skid_valid.d.next = false;
            } else {
                self.main_data.d.next = self.up_data.val();
                self.main_valid.d.next = self.up_valid.val();
            }
        } else if self.up_valid.val() & !self.skid_valid.q.val() {
            self.skid_data.d.next = self.up_data.val();
            self.skid_valid.d.next = true;
        }
        if self.reset.val() {
            self.main_valid.d.next = false;
            self.skid_valid.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rocenic_hdl_testbench::CycleSim;

    /// Random valid/ready: every item comes out once, in order; a stalled
    /// output holds still; the Verilog agrees cycle by cycle.
    #[test]
    fn random_handshakes_keep_order_without_loss() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut sim = CycleSim::new(SkidBuffer::<Bits<16>>::default(), |b| &mut b.clock);
        sim.record();
        sim.uut.reset.next = false;
        let mut sent = 0u64;
        let mut got = Vec::new();
        let mut held: Option<u64> = None;
        while got.len() < 200 {
            let offer = sent < 200 && rng.gen_bool(0.7);
            sim.uut.up_valid.next = offer;
            sim.uut.up_data.next = bits(sent);
            let ready = rng.gen_bool(0.6);
            sim.uut.down_ready.next = ready;
            sim.settle();
            let taken = offer && sim.uut.up_ready.val();
            let valid = sim.uut.down_valid.val();
            let value = sim.uut.down_data.val().to_u64();
            if let Some(h) = held {
                assert!(valid && value == h, "a stalled item must hold still");
            }
            held = (valid && !ready).then_some(value);
            if valid && ready {
                got.push(value);
            }
            sim.tick();
            if taken {
                sent += 1;
            }
        }
        assert_eq!(got, (0..200).collect::<Vec<u64>>());
        sim.replay_in_verilator("skid_buffer")
            .expect("Verilog matches");
    }
}
