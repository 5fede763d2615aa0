//! `DmaWriteArbiter`: two clients of posted DMA write bursts
//! (`responder_datapath`'s port shape: a request's beats framed by
//! `first` / `last`, every beat carrying the request's host address and
//! length) onto one host DMA write port, whole bursts at a time. Two
//! arbiters in a tree serve three or four clients.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops the burst owner (the
//!   clients must be reset with it) and the round-robin turn.
//! - Clients `a` and `b` ([`DmaWriteHost`]): the host side of each
//!   client's [`DmaWritePort`].
//! - `dma` ([`DmaWritePort`]): towards the host's DMA engine.
//!
//! # Order and fairness
//!
//! A client is chosen when no burst is in progress: the one not served
//! last if both offer a beat. The chosen client keeps the port from the
//! cycle its first beat is offered until its `last` beat moves, so a burst
//! is never split and an offered beat never changes while stalled (AXI).
//! Each client's beats keep their order.
//!
//! # Latency and throughput
//!
//! Combinational (0 cycles): one beat per cycle, also from one client's
//! `last` beat to the other's first. `a_ready` / `b_ready` depend
//! combinationally on `dma_ready`; the clients' write ports are registered
//! (`responder_datapath`, `atomic_unit`), so no loop forms.

use crate::dma::dma_port::{DmaWriteHost, DmaWritePort};
use rust_hdl::prelude::*;

const NONE: u64 = 0;
const CLIENT_A: u64 = 1;
const CLIENT_B: u64 = 2;

/// The DMA write arbiter (see the module doc).
#[derive(LogicBlock)]
pub struct DmaWriteArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub a: DmaWriteHost,
    pub b: DmaWriteHost,
    pub dma: DmaWritePort,
    /// The client holding the port ([`NONE`] between bursts).
    owner: DFF<Bits<2>>,
    /// `a` was served last, so `b` goes first when both offer.
    prefer_b: DFF<Bit>,
    chosen: Signal<Local, Bits<2>>,
    none: Constant<Bits<2>>,
    client_a: Constant<Bits<2>>,
    client_b: Constant<Bits<2>>,
}

impl Default for DmaWriteArbiter {
    fn default() -> Self {
        DmaWriteArbiter {
            clock: Default::default(),
            reset: Default::default(),
            a: Default::default(),
            b: Default::default(),
            dma: Default::default(),
            owner: Default::default(),
            prefer_b: Default::default(),
            chosen: Default::default(),
            none: Constant::new(bits(NONE)),
            client_a: Constant::new(bits(CLIENT_A)),
            client_b: Constant::new(bits(CLIENT_B)),
        }
    }
}

impl Logic for DmaWriteArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, owner, prefer_b);

        self.chosen.next = self.owner.q.val();
        if self.owner.q.val() == self.none.val() {
            if self.a.valid.val() & !(self.b.valid.val() & self.prefer_b.q.val()) {
                self.chosen.next = self.client_a.val();
            } else if self.b.valid.val() {
                self.chosen.next = self.client_b.val();
            }
        }
        self.dma.valid.next = false;
        self.dma.addr.next = self.a.addr.val();
        self.dma.data.next = self.a.data.val();
        self.dma.keep.next = self.a.keep.val();
        self.dma.first.next = self.a.first.val();
        self.dma.last.next = self.a.last.val();
        self.dma.req_addr.next = self.a.req_addr.val();
        self.dma.req_len.next = self.a.req_len.val();
        if self.chosen.val() == self.client_a.val() {
            self.dma.valid.next = self.a.valid.val();
        }
        if self.chosen.val() == self.client_b.val() {
            self.dma.valid.next = self.b.valid.val();
            self.dma.addr.next = self.b.addr.val();
            self.dma.data.next = self.b.data.val();
            self.dma.keep.next = self.b.keep.val();
            self.dma.first.next = self.b.first.val();
            self.dma.last.next = self.b.last.val();
            self.dma.req_addr.next = self.b.req_addr.val();
            self.dma.req_len.next = self.b.req_len.val();
        }
        self.a.ready.next = self.dma.ready.val() & (self.chosen.val() == self.client_a.val());
        self.b.ready.next = self.dma.ready.val() & (self.chosen.val() == self.client_b.val());
        if self.dma.valid.val() {
            self.owner.d.next = self.chosen.val();
            if self.dma.ready.val() & self.dma.last.val() {
                self.owner.d.next = self.none.val();
                self.prefer_b.d.next = self.chosen.val() == self.client_a.val();
            }
        }
        if self.reset.val() {
            self.owner.d.next = self.none.val();
            self.prefer_b.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rocenic_hdl_testbench::CycleSim;
    use std::collections::VecDeque;

    /// A beat: data (client << 24 | burst << 8 | beat), last.
    type Beat = (u64, bool);

    /// Two clients offering bursts of 1..=4 beats at random against a host
    /// that takes beats at random: bursts arrive whole and unchanged, each
    /// client's in order; a stalled beat holds; with both clients always
    /// offering, both are served and a beat moves every cycle. The Verilog
    /// agrees cycle by cycle (Verilator).
    #[test]
    fn whole_bursts_from_both_clients() {
        for (seed, p_valid, p_ready) in [(1u64, 0.6, 0.5), (2, 1.0, 1.0), (3, 0.9, 0.3)] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut sim = CycleSim::new(DmaWriteArbiter::default(), |b| &mut b.clock);
            if seed == 1 {
                sim.record();
            }
            sim.uut.reset.next = false;
            let mut bursts: [VecDeque<Vec<Beat>>; 2] = [0u64, 1].map(|c| {
                (0..50u64)
                    .map(|i| {
                        let n = 1 + (i * 7 + c) % 4;
                        (0..n).map(|b| (c << 24 | i << 8 | b, b + 1 == n)).collect()
                    })
                    .collect()
            });
            let mut next = [0usize; 2];
            let mut offering = [false; 2];
            let mut got: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
            let mut current: Vec<u64> = Vec::new();
            let mut held: Option<(u64, bool)> = None;
            let mut gaps = 0;
            let mut cycles = 0;
            while bursts.iter().any(|b| !b.is_empty()) {
                cycles += 1;
                assert!(cycles < 10_000, "seed {seed}: bursts never finished");
                for c in 0..2 {
                    if !offering[c] && !bursts[c].is_empty() && rng.gen_bool(p_valid) {
                        offering[c] = true;
                    }
                }
                let beat = |c: usize| {
                    bursts[c]
                        .front()
                        .map(|b| b[next[c]])
                        .filter(|_| offering[c])
                };
                let (ba, bb) = (beat(0), beat(1));
                sim.uut.a.valid.next = ba.is_some();
                sim.uut.a.data.next = bits(ba.map_or(0, |b| b.0));
                sim.uut.a.first.next = next[0] == 0;
                sim.uut.a.last.next = ba.is_some_and(|b| b.1);
                sim.uut.b.valid.next = bb.is_some();
                sim.uut.b.data.next = bits(bb.map_or(0, |b| b.0));
                sim.uut.b.first.next = next[1] == 0;
                sim.uut.b.last.next = bb.is_some_and(|b| b.1);
                let ready = rng.gen_bool(p_ready);
                sim.uut.dma.ready.next = ready;
                sim.settle();
                let out_valid = sim.uut.dma.valid.val();
                let out = (
                    sim.uut.dma.data.val().get_bits::<64>(0).to_u64(),
                    sim.uut.dma.last.val(),
                );
                if let Some(h) = held {
                    assert!(out_valid && out == h, "seed {seed}: a stalled beat holds");
                }
                held = (out_valid && !ready).then_some(out);
                let readies = [sim.uut.a.ready.val(), sim.uut.b.ready.val()];
                assert!(
                    !(readies[0] && readies[1]),
                    "seed {seed}: one client at a time"
                );
                let mut moved = false;
                for c in 0..2 {
                    if offering[c] && readies[c] {
                        let b = [ba, bb][c].unwrap();
                        assert_eq!(out, b, "seed {seed}: the chosen client's beat");
                        if next[c] == 0 {
                            assert!(current.is_empty(), "seed {seed}: bursts interleaved");
                        }
                        current.push(b.0);
                        next[c] += 1;
                        offering[c] = false;
                        moved = true;
                        if b.1 {
                            assert!(current.iter().all(|d| d >> 24 == c as u64));
                            got[c].push(current[0] >> 8 & 0xFFFF);
                            current.clear();
                            bursts[c].pop_front();
                            next[c] = 0;
                        }
                    }
                }
                if (ba.is_some() || bb.is_some()) && ready && !moved {
                    gaps += 1;
                }
                sim.tick();
            }
            for (c, g) in got.iter().enumerate() {
                assert_eq!(
                    *g,
                    (0..50).collect::<Vec<u64>>(),
                    "seed {seed}: client {c} in order"
                );
            }
            if p_ready == 1.0 {
                assert_eq!(gaps, 0, "seed {seed}: a beat every cycle");
            }
            if seed == 1 {
                sim.replay_in_verilator("dma_write_arbiter")
                    .expect("Verilog matches");
            }
        }
    }
}
