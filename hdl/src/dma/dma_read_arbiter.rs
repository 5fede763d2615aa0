//! `DmaReadArbiter`: two clients of tagged DMA reads (`payload_fetch`'s
//! port shape) onto one host DMA read port. Requests are taken round
//! robin; the client's tag travels with its top bit replaced by the
//! client's number, and read data is routed back by that bit with the tag
//! the client gave. Two arbiters in a tree serve three or four clients.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): forgets a held choice and the
//!   round-robin turn (reads in flight still route by their tags).
//! - Clients `a` and `b` ([`DmaReadHost`]): the host side of each client's
//!   [`DmaReadPort`] (tags 0..127: bit 7 is ignored).
//! - `dma` ([`DmaReadPort`]): towards the host's DMA engine, with
//!   `dma.req_tag` bit 7 = the client (0: `a`, 1: `b`).
//!
//! # Order and fairness
//!
//! When both clients ask, the one not served last goes first. A request
//! offered to the host stays offered unchanged until taken (the choice is
//! held while `dma_req_ready` is low), as AXI requires. Read data beats
//! pass in the host's order; each client sees its own tags in the order
//! the host returns them, so per-tag beat order is kept.
//!
//! # Latency and throughput
//!
//! Combinational both ways (0 cycles): one request and one data beat per
//! cycle. `a_req_ready` / `b_req_ready` depend combinationally on
//! `dma_req_ready`, and `dma_rd_ready` on the clients' `rd_ready`; the
//! clients' request ports are registered (`payload_fetch`, `atomic_unit`),
//! so no loop forms.

use crate::dma::dma_port::{DmaReadHost, DmaReadPort};
use rust_hdl::prelude::*;

/// The DMA read arbiter (see the module doc).
#[derive(LogicBlock)]
pub struct DmaReadArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub a: DmaReadHost,
    pub b: DmaReadHost,
    pub dma: DmaReadPort,
    /// A request is offered and not yet taken: keep `held_b`'s choice.
    held: DFF<Bit>,
    held_b: DFF<Bit>,
    /// `a` was served last, so `b` goes first when both ask.
    prefer_b: DFF<Bit>,
    choose_b: Signal<Local, Bit>,
    data_to_b: Signal<Local, Bit>,
    low_tag: Constant<Bits<8>>,
    client_b: Constant<Bits<8>>,
}

impl Default for DmaReadArbiter {
    fn default() -> Self {
        DmaReadArbiter {
            clock: Default::default(),
            reset: Default::default(),
            a: Default::default(),
            b: Default::default(),
            dma: Default::default(),
            held: Default::default(),
            held_b: Default::default(),
            prefer_b: Default::default(),
            choose_b: Default::default(),
            data_to_b: Default::default(),
            low_tag: Constant::new(bits(0x7F)),
            client_b: Constant::new(bits(0x80)),
        }
    }
}

impl Logic for DmaReadArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, held, held_b, prefer_b);

        self.choose_b.next =
            self.b.req_valid.val() & (!self.a.req_valid.val() | self.prefer_b.q.val());
        if self.held.q.val() {
            self.choose_b.next = self.held_b.q.val();
        }
        self.dma.req_valid.next = self.a.req_valid.val();
        self.dma.req_tag.next = self.a.req_tag.val() & self.low_tag.val();
        self.dma.req_addr.next = self.a.req_addr.val();
        self.dma.req_len.next = self.a.req_len.val();
        if self.choose_b.val() {
            self.dma.req_valid.next = self.b.req_valid.val();
            self.dma.req_tag.next =
                (self.b.req_tag.val() & self.low_tag.val()) | self.client_b.val();
            self.dma.req_addr.next = self.b.req_addr.val();
            self.dma.req_len.next = self.b.req_len.val();
        }
        self.a.req_ready.next = self.dma.req_ready.val() & !self.choose_b.val();
        self.b.req_ready.next = self.dma.req_ready.val() & self.choose_b.val();
        if self.dma.req_valid.val() {
            self.held.d.next = !self.dma.req_ready.val();
            self.held_b.d.next = self.choose_b.val();
            if self.dma.req_ready.val() {
                self.prefer_b.d.next = !self.choose_b.val();
            }
        }

        self.data_to_b.next = self.dma.rd_tag.val().get_bit(7);
        self.a.rd_valid.next = self.dma.rd_valid.val() & !self.data_to_b.val();
        self.b.rd_valid.next = self.dma.rd_valid.val() & self.data_to_b.val();
        self.a.rd_tag.next = self.dma.rd_tag.val() & self.low_tag.val();
        self.b.rd_tag.next = self.dma.rd_tag.val() & self.low_tag.val();
        self.a.rd_data.next = self.dma.rd_data.val();
        self.b.rd_data.next = self.dma.rd_data.val();
        self.a.rd_last.next = self.dma.rd_last.val();
        self.b.rd_last.next = self.dma.rd_last.val();
        self.dma.rd_ready.next = self.a.rd_ready.val();
        if self.data_to_b.val() {
            self.dma.rd_ready.next = self.b.rd_ready.val();
        }

        if self.reset.val() {
            self.held.d.next = false;
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
    use std::collections::{BTreeMap, VecDeque};

    /// A request: tag, address, length.
    type Request = (u64, u64, u64);

    /// Two clients issuing random requests (address = client << 40 |
    /// serial) against a host that takes them at random and answers each
    /// with 1..=3 beats in a random order of tags: every request reaches
    /// the host once, unchanged but for the client bit, in each client's
    /// order; a stalled request holds; both clients get served when both
    /// keep asking; every beat reaches the client that asked, with its tag,
    /// in the host's order. The Verilog agrees cycle by cycle (Verilator).
    #[test]
    fn requests_and_data_reach_their_client() {
        for (seed, p_valid, p_ready) in [(1u64, 0.6, 0.5), (2, 1.0, 1.0), (3, 0.9, 0.3)] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut sim = CycleSim::new(DmaReadArbiter::default(), |b| &mut b.clock);
            if seed == 1 {
                sim.record();
            }
            sim.uut.reset.next = false;
            let mut to_issue: [VecDeque<Request>; 2] = [0u64, 1].map(|c| {
                (0..60u64)
                    .map(|i| (i % 16 + 16 * c, c << 40 | i, 1 + i % 3))
                    .collect()
            });
            let mut offering = [false; 2];
            let mut at_host: Vec<(u64, Request)> = Vec::new();
            // Host side: requests taken and not fully answered, by out tag.
            let mut open: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
            let mut beat_offered: Option<(u64, u64, bool)> = None;
            let mut got: [Vec<(u64, u64)>; 2] = [Vec::new(), Vec::new()];
            let mut sent: [Vec<(u64, u64)>; 2] = [Vec::new(), Vec::new()];
            let mut held: Option<(u64, u64, u64)> = None;
            let mut both_asked_served = [0u64; 2];
            let mut cycles = 0;
            while to_issue.iter().any(|q| !q.is_empty()) || !open.is_empty() {
                cycles += 1;
                assert!(cycles < 20_000, "seed {seed}: reads never finished");
                for c in 0..2 {
                    // A client never reuses a tag still in flight.
                    let free = to_issue[c]
                        .front()
                        .is_some_and(|r| !open.contains_key(&(r.0 | (c as u64) << 7)));
                    if !offering[c] && free && rng.gen_bool(p_valid) {
                        offering[c] = true;
                    }
                }
                let req = |c: usize| to_issue[c].front().copied().filter(|_| offering[c]);
                let (ra, rb) = (req(0), req(1));
                sim.uut.a.req_valid.next = ra.is_some();
                let (t, a, l) = ra.unwrap_or((0, 0, 0));
                sim.uut.a.req_tag.next = bits(t);
                sim.uut.a.req_addr.next = bits(a);
                sim.uut.a.req_len.next = bits(l);
                sim.uut.b.req_valid.next = rb.is_some();
                let (t, a, l) = rb.unwrap_or((0, 0, 0));
                sim.uut.b.req_tag.next = bits(t);
                sim.uut.b.req_addr.next = bits(a);
                sim.uut.b.req_len.next = bits(l);
                let host_ready = rng.gen_bool(p_ready);
                sim.uut.dma.req_ready.next = host_ready;
                if beat_offered.is_none() && !open.is_empty() && rng.gen_bool(0.7) {
                    let k = rng.gen_range(0..open.len());
                    let (&tag, &(addr, left)) = open.iter().nth(k).unwrap();
                    beat_offered = Some((tag, addr, left == 1));
                }
                sim.uut.dma.rd_valid.next = beat_offered.is_some();
                let (bt, bd, bl) = beat_offered.unwrap_or((0, 0, false));
                sim.uut.dma.rd_tag.next = bits(bt);
                sim.uut.dma.rd_data.next = bits(bd & 0xFFFF_FFFF);
                sim.uut.dma.rd_last.next = bl;
                let client_ready = [rng.gen_bool(p_ready), rng.gen_bool(p_ready)];
                sim.uut.a.rd_ready.next = client_ready[0];
                sim.uut.b.rd_ready.next = client_ready[1];
                sim.settle();
                let out_valid = sim.uut.dma.req_valid.val();
                let out = (
                    sim.uut.dma.req_tag.val().to_u64(),
                    sim.uut.dma.req_addr.val().to_u64(),
                    sim.uut.dma.req_len.val().to_u64(),
                );
                assert_eq!(out_valid, ra.is_some() || rb.is_some(), "seed {seed}");
                if let Some(h) = held {
                    assert_eq!(out, h, "seed {seed}: a stalled request holds");
                }
                held = (out_valid && !host_ready).then_some(out);
                let readies = [sim.uut.a.req_ready.val(), sim.uut.b.req_ready.val()];
                assert!(
                    !(readies[0] && readies[1]),
                    "seed {seed}: one client at a time"
                );
                for c in 0..2 {
                    if offering[c] && readies[c] {
                        let r = to_issue[c].pop_front().unwrap();
                        offering[c] = false;
                        assert_eq!(out, (r.0 | (c as u64) << 7, r.1, r.2), "seed {seed}");
                        at_host.push((c as u64, r));
                        assert!(
                            open.insert(out.0, (r.1, r.2)).is_none(),
                            "seed {seed}: tag reused"
                        );
                        sent[c].push((r.0, r.1));
                        if ra.is_some() && rb.is_some() {
                            both_asked_served[c] += 1;
                        }
                    }
                }
                // Data routing.
                let (av, bv) = (sim.uut.a.rd_valid.val(), sim.uut.b.rd_valid.val());
                if let Some((tag, addr, last)) = beat_offered {
                    let c = (tag >> 7) as usize;
                    assert_eq!((av, bv), (c == 0, c == 1), "seed {seed}: routed by tag");
                    let port_tag = if c == 0 {
                        sim.uut.a.rd_tag.val().to_u64()
                    } else {
                        sim.uut.b.rd_tag.val().to_u64()
                    };
                    assert_eq!(port_tag, tag & 0x7F, "seed {seed}");
                    let data = if c == 0 {
                        sim.uut.a.rd_data.val().get_bits::<64>(0).to_u64()
                    } else {
                        sim.uut.b.rd_data.val().get_bits::<64>(0).to_u64()
                    };
                    assert_eq!(data, addr & 0xFFFF_FFFF, "seed {seed}");
                    assert_eq!(sim.uut.dma.rd_ready.val(), client_ready[c], "seed {seed}");
                    if client_ready[c] {
                        let e = open.get_mut(&tag).unwrap();
                        e.1 -= 1;
                        if last {
                            assert_eq!(e.1, 0);
                            open.remove(&tag);
                            got[c].push((tag & 0x7F, addr));
                        }
                        beat_offered = None;
                    }
                } else {
                    assert!(!av && !bv, "seed {seed}: no beat, no valid");
                }
                sim.tick();
            }
            assert_eq!(
                at_host.len(),
                120,
                "seed {seed}: every request reached the host"
            );
            for c in 0..2 {
                let mut g = got[c].clone();
                g.sort();
                let mut s = sent[c].clone();
                s.sort();
                assert_eq!(g, s, "seed {seed}: client {c} got its reads back");
            }
            if p_valid == 1.0 {
                assert!(
                    both_asked_served[0] > 10 && both_asked_served[1] > 10,
                    "seed {seed}: round robin: {both_asked_served:?}"
                );
            }
            if seed == 1 {
                sim.replay_in_verilator("dma_read_arbiter")
                    .expect("Verilog matches");
            }
        }
    }
}
