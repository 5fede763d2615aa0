//! `SyncFifo`: a first-word-fall-through FIFO of `2^N` entries over one
//! synchronous-read RAM (block RAM on an FPGA), with a synchronous reset.
//!
//! Ports: `clock`; `reset` (synchronous, high: empties the FIFO); `write`
//! and `data_in` (an entry is stored at an edge where `write` is high and
//! `full` low); `full` (out); `read` (in: the head entry leaves at an edge
//! where `read` is high and `empty` low); `data_out` (out: the head entry,
//! all zero while `empty` is high); `empty` (out); `fill` (out, `N + 1`
//! bits: entries stored, counting one written too recently to read).
//!
//! Latency: an entry written at one edge can be read after the second
//! following edge (the RAM's registered read, plus one cycle so a read
//! never meets a write of the same address). Throughput: one write and one
//! read per cycle. Same structure as rust-hdl's `SynchronousFIFO`
//! (Cummings' extra pointer bit, look-ahead read address), plus the reset
//! that one lacks.

use rust_hdl::prelude::*;

/// `N`: address bits; `NP1` = `N + 1` (pointer bits; rust-hdl cannot
/// compute it in the type).
#[derive(LogicBlock)]
pub struct SyncFifo<D: Synth, const N: usize, const NP1: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub write: Signal<In, Bit>,
    pub data_in: Signal<In, D>,
    pub full: Signal<Out, Bit>,
    pub read: Signal<In, Bit>,
    pub data_out: Signal<Out, D>,
    pub empty: Signal<Out, Bit>,
    pub fill: Signal<Out, Bits<NP1>>,
    ram: RAM<D, N>,
    write_pointer: DFF<Bits<NP1>>,
    /// `write_pointer` one edge later: what the read side may see.
    readable_pointer: DFF<Bits<NP1>>,
    read_pointer: DFF<Bits<NP1>>,
    /// Pointers this far apart (only the lap bit differs) mean full.
    lap: Constant<Bits<NP1>>,
    nothing: Constant<D>,
    is_empty: Signal<Local, Bit>,
    is_full: Signal<Local, Bit>,
    popping: Signal<Local, Bit>,
}

impl<D: Synth, const N: usize, const NP1: usize> Default for SyncFifo<D, N, NP1> {
    fn default() -> Self {
        assert_eq!(N + 1, NP1, "NP1 = N + 1");
        SyncFifo {
            clock: Default::default(),
            reset: Default::default(),
            write: Default::default(),
            data_in: Default::default(),
            full: Default::default(),
            read: Default::default(),
            data_out: Default::default(),
            empty: Default::default(),
            fill: Default::default(),
            ram: Default::default(),
            write_pointer: Default::default(),
            readable_pointer: Default::default(),
            read_pointer: Default::default(),
            lap: Constant::new(bits(1 << N)),
            nothing: Constant::new(D::default()),
            is_empty: Default::default(),
            is_full: Default::default(),
            popping: Default::default(),
        }
    }
}

impl<D: Synth, const N: usize, const NP1: usize> Logic for SyncFifo<D, N, NP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, write_pointer, readable_pointer, read_pointer);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.readable_pointer.d.next = self.write_pointer.q.val();
        self.is_empty.next = self.read_pointer.q.val() == self.readable_pointer.q.val();
        // Same address, the other lap: the extra pointer bit differs.
        self.is_full.next =
            (self.write_pointer.q.val() ^ self.read_pointer.q.val()) == self.lap.val();
        self.full.next = self.is_full.val();
        self.empty.next = self.is_empty.val();
        self.fill.next = self.write_pointer.q.val() - self.read_pointer.q.val();
        // Zero while empty: the RAM holds unwritten (undefined) entries, and
        // a defined output keeps Verilog and rust-hdl comparable.
        self.data_out.next = self.ram.read_data.val();
        if self.is_empty.val() {
            self.data_out.next = self.nothing.val();
        }

        self.ram.write_enable.next = self.write.val() & !self.is_full.val();
        self.ram.write_address.next = bit_cast::<N, NP1>(self.write_pointer.q.val());
        self.ram.write_data.next = self.data_in.val();
        if self.write.val() & !self.is_full.val() {
            self.write_pointer.d.next = self.write_pointer.q.val() + 1;
        }
        // Read ahead: the RAM registers the entry after the head while the
        // head leaves, so the next head is there the cycle after.
        self.popping.next = self.read.val() & !self.is_empty.val();
        self.ram.read_address.next = bit_cast::<N, NP1>(self.read_pointer.q.val());
        if self.popping.val() {
            self.read_pointer.d.next = self.read_pointer.q.val() + 1;
            self.ram.read_address.next = bit_cast::<N, NP1>(self.read_pointer.q.val() + 1);
        }
        if self.reset.val() {
            self.write_pointer.d.next = bits::<NP1>(0);
            self.readable_pointer.d.next = bits::<NP1>(0);
            self.read_pointer.d.next = bits::<NP1>(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocenic_hdl_testbench::CycleSim;

    /// Random writes and reads against a queue model: order kept, nothing
    /// lost or repeated, `full` at 2^N entries, reset empties.
    #[test]
    fn behaves_like_a_queue() {
        let mut sim = CycleSim::new(SyncFifo::<Bits<8>, 3, 4>::default(), |b| &mut b.clock);
        sim.record();
        let mut model = std::collections::VecDeque::new();
        let mut seed = 0x1234_5678u32;
        let mut next_value = 0u64;
        let mut max_fill = 0;
        for cycle in 0..300 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let write = seed >> 16 & 3 != 0;
            let read = seed >> 20 & 3 == 0 || cycle > 200;
            sim.uut.reset.next = cycle == 150;
            sim.uut.write.next = write;
            sim.uut.data_in.next = bits(next_value & 0xFF);
            sim.uut.read.next = read;
            sim.settle();
            let u = &sim.uut;
            assert_eq!(u.full.val(), model.len() == 8, "cycle {cycle}");
            if !u.empty.val() {
                assert_eq!(
                    Some(&u.data_out.val().to_u64()),
                    model.front(),
                    "cycle {cycle}"
                );
            }
            let popped = read && !u.empty.val();
            let pushed = write && !u.full.val();
            if cycle == 150 {
                model.clear();
            } else {
                if popped {
                    model.pop_front();
                }
                if pushed {
                    model.push_back(next_value & 0xFF);
                    next_value += 1;
                }
            }
            max_fill = max_fill.max(model.len());
            sim.tick();
        }
        assert_eq!(max_fill, 8, "the test filled the FIFO");
        let cycles = sim.replay_in_verilator("sync_fifo").unwrap();
        assert_eq!(cycles, 300);
    }
}
