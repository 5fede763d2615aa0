//! `FrameArbiter`: joins the NIC's three frame sources into the one MAC
//! transmit stream, whole frames at a time, in the reference model's
//! transmit order: a waiting CNP first, then a response (ACK, NAK, READ
//! response, atomic ACK), then a request. Congestion notifications must
//! not queue behind data, and responses release the peer's window, so they
//! go before new requests (the model's `Nic::transmit`, rxe's order).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops the frame in progress
//!   (the sources must be reset with it) and the beat held at the output.
//! - `cnp`, `response`, `request` (AXI-Stream sinks, `D`/`K`): frames.
//! - `pause` (3 bits: bit 0 CNP, 1 response, 2 request): a source whose
//!   bit is set does not start a frame (priority flow control: its
//!   priority is paused); a frame already started goes on to its `tlast`.
//!   Read combinationally in the cycle a frame would start.
//! - `frame` (AXI-Stream source): the frames, each one whole (no beat of
//!   another source between its first beat and its `tlast`), every beat
//!   unchanged.
//!
//! # Arbitration
//!
//! A source is chosen when no frame is in progress, combinationally from
//! the `tvalid`s and `pause` of that cycle, highest priority first among
//! the sources not paused; it keeps the output until its `tlast` beat has
//! moved. A source's `tready` is high only
//! while it is the chosen one and the output register can take a beat.
//! Strict priority can starve requests while responses keep coming; the
//! model has the same property, and the responder's output is bounded by
//! the requests it answers.
//!
//! # Latency and throughput
//!
//! One cycle (the output is an [`AxisRegisterSlice`], so `frame.tready`
//! reaches no source combinationally). One beat per cycle, also across
//! frames and sources: the next frame's first beat moves in the cycle after
//! the previous frame's `tlast`.

use crate::primitives::register_slice::AxisRegisterSlice;
use crate::primitives::stream::{AxisSink, AxisSource};
use rust_hdl::prelude::*;

/// `owner` codes: who has the output.
const NONE: u64 = 0;
const CNP: u64 = 1;
const RESPONSE: u64 = 2;
const REQUEST: u64 = 3;

/// The arbiter (see the module doc).
#[derive(LogicBlock)]
pub struct FrameArbiter<const D: usize, const K: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub cnp: AxisSink<D, K>,
    pub response: AxisSink<D, K>,
    pub request: AxisSink<D, K>,
    pub pause: Signal<In, Bits<3>>,
    pub frame: AxisSource<D, K>,
    out_slice: AxisRegisterSlice<D, K>,
    /// The source in the middle of a frame, [`NONE`] between frames.
    owner: DFF<Bits<2>>,
    /// The source whose beat is offered this cycle.
    chosen: Signal<Local, Bits<2>>,
    beat_moves: Signal<Local, Bit>,
    beat_last: Signal<Local, Bit>,
    none: Constant<Bits<2>>,
    from_cnp: Constant<Bits<2>>,
    from_response: Constant<Bits<2>>,
    from_request: Constant<Bits<2>>,
}

impl<const D: usize, const K: usize> Default for FrameArbiter<D, K> {
    fn default() -> Self {
        FrameArbiter {
            clock: Default::default(),
            reset: Default::default(),
            cnp: Default::default(),
            response: Default::default(),
            request: Default::default(),
            pause: Default::default(),
            frame: Default::default(),
            out_slice: Default::default(),
            owner: Default::default(),
            chosen: Default::default(),
            beat_moves: Default::default(),
            beat_last: Default::default(),
            none: Constant::new(bits(NONE)),
            from_cnp: Constant::new(bits(CNP)),
            from_response: Constant::new(bits(RESPONSE)),
            from_request: Constant::new(bits(REQUEST)),
        }
    }
}

impl<const D: usize, const K: usize> Logic for FrameArbiter<D, K> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, owner);
        clock!(self, clock, out_slice);
        self.out_slice.reset.next = self.reset.val();
        AxisSource::<D, K>::link(&mut self.frame, &mut self.out_slice.down);

        self.chosen.next = self.owner.q.val();
        if self.owner.q.val() == self.none.val() {
            if self.cnp.tvalid.val() & !self.pause.val().get_bit(0) {
                self.chosen.next = self.from_cnp.val();
            } else if self.response.tvalid.val() & !self.pause.val().get_bit(1) {
                self.chosen.next = self.from_response.val();
            } else if self.request.tvalid.val() & !self.pause.val().get_bit(2) {
                self.chosen.next = self.from_request.val();
            }
        }

        self.out_slice.up.tvalid.next = false;
        self.out_slice.up.tdata.next = self.request.tdata.val();
        self.out_slice.up.tkeep.next = self.request.tkeep.val();
        self.out_slice.up.tlast.next = self.request.tlast.val();
        self.cnp.tready.next = false;
        self.response.tready.next = false;
        self.request.tready.next = false;
        if self.chosen.val() == self.from_cnp.val() {
            self.out_slice.up.tvalid.next = self.cnp.tvalid.val();
            self.out_slice.up.tdata.next = self.cnp.tdata.val();
            self.out_slice.up.tkeep.next = self.cnp.tkeep.val();
            self.out_slice.up.tlast.next = self.cnp.tlast.val();
            self.cnp.tready.next = self.out_slice.up.tready.val();
        }
        if self.chosen.val() == self.from_response.val() {
            self.out_slice.up.tvalid.next = self.response.tvalid.val();
            self.out_slice.up.tdata.next = self.response.tdata.val();
            self.out_slice.up.tkeep.next = self.response.tkeep.val();
            self.out_slice.up.tlast.next = self.response.tlast.val();
            self.response.tready.next = self.out_slice.up.tready.val();
        }
        if self.chosen.val() == self.from_request.val() {
            self.out_slice.up.tvalid.next = self.request.tvalid.val();
            self.request.tready.next = self.out_slice.up.tready.val();
        }

        self.beat_moves.next = self.out_slice.up.tvalid.val() & self.out_slice.up.tready.val();
        self.beat_last.next = self.out_slice.up.tlast.val();
        if self.beat_moves.val() {
            self.owner.d.next = self.chosen.val();
            if self.beat_last.val() {
                self.owner.d.next = self.none.val();
            }
        }
        if self.reset.val() {
            self.owner.d.next = self.none.val();
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

    /// A beat: data (source in the top byte, frame number, beat number),
    /// keep, last.
    type Beat = (u64, u64, bool);

    /// Frames of 1..=5 beats per source; word = source << 24 | frame << 8 | beat.
    fn frames(rng: &mut ChaCha8Rng, source: u64, count: u64) -> VecDeque<Vec<Beat>> {
        (0..count)
            .map(|f| {
                let n = rng.gen_range(1..=5u64);
                (0..n)
                    .map(|b| {
                        (
                            source << 24 | f << 8 | b,
                            if b + 1 == n { 0x3 } else { 0xF },
                            b + 1 == n,
                        )
                    })
                    .collect()
            })
            .collect()
    }

    /// Random sources and sink: every frame leaves whole, unchanged, in
    /// its source's order; a frame start always picks the highest-priority
    /// source with a frame waiting and not paused, and never a paused one,
    /// while a frame under way runs on through a pause; stalled outputs
    /// hold; and with all sources busy, none paused and the sink always
    /// ready, a beat leaves every cycle. The Verilog agrees cycle by cycle
    /// (under Verilator).
    #[test]
    fn whole_frames_in_priority_order() {
        for (seed, p_valid, p_ready, p_pause) in [
            (1u64, 0.5, 0.6, 0.3),
            (2, 0.9, 0.9, 0.5),
            (3, 1.0, 1.0, 0.0),
        ] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut sim = CycleSim::new(FrameArbiter::<32, 4>::default(), |b| &mut b.clock);
            if seed == 1 {
                sim.record();
            }
            let mut pending: Vec<VecDeque<Vec<Beat>>> =
                (0..3).map(|s| frames(&mut rng, s, 40)).collect();
            let mut next_beat = [0usize; 3];
            let mut offering = [false; 3];
            let mut got: Vec<Vec<Beat>> = vec![Vec::new(); 3];
            let mut current: Vec<Beat> = Vec::new();
            let mut held: Option<Beat> = None;
            // Cycles where a source offered a beat, the sink was ready and
            // no beat moved.
            let mut gaps = 0u64;
            // The sources with a frame waiting and not paused when each
            // output frame began.
            let mut waiting_at_start: VecDeque<[bool; 3]> = VecDeque::new();
            // Frames that ran on through a pause of their source.
            let mut through_pause = 0u64;
            let mut pause = 0u64;
            sim.uut.reset.next = false;
            for _cycle in 0..6000 {
                // Each source's pause bit flips now and then, for stretches.
                for s in 0..3 {
                    if rng.gen_bool(p_pause / 8.0) {
                        pause ^= 1 << s;
                    }
                }
                sim.uut.pause.next = bits(pause);
                for s in 0..3 {
                    // A source keeps tvalid once raised (AXI rule).
                    if !offering[s] && !pending[s].is_empty() && rng.gen_bool(p_valid) {
                        offering[s] = true;
                    }
                }
                let beat_of = |s: usize, pending: &Vec<VecDeque<Vec<Beat>>>| {
                    pending[s].front().map(|f| f[next_beat[s]])
                };
                let ports = [
                    &mut sim.uut.cnp,
                    &mut sim.uut.response,
                    &mut sim.uut.request,
                ];
                for (s, port) in ports.into_iter().enumerate() {
                    let beat = beat_of(s, &pending).filter(|_| offering[s]);
                    port.tvalid.next = beat.is_some();
                    let (data, keep, last) = beat.unwrap_or((0, 0, false));
                    port.tdata.next = bits(data);
                    port.tkeep.next = bits(keep);
                    port.tlast.next = last;
                }
                let ready = rng.gen_bool(p_ready);
                sim.uut.frame.tready.next = ready;
                sim.settle();
                let readies = [
                    sim.uut.cnp.tready.val(),
                    sim.uut.response.tready.val(),
                    sim.uut.request.tready.val(),
                ];
                let paused = [0, 1, 2].map(|s| pause >> s & 1 == 1);
                let waiting = [0, 1, 2].map(|s| offering[s] && next_beat[s] == 0 && !paused[s]);
                let out_valid = sim.uut.frame.tvalid.val();
                let out: Beat = (
                    sim.uut.frame.tdata.val().to_u64(),
                    sim.uut.frame.tkeep.val().to_u64(),
                    sim.uut.frame.tlast.val(),
                );
                if let Some(h) = held {
                    assert!(out_valid && out == h, "seed {seed}: a stalled beat holds");
                }
                held = (out_valid && !ready).then_some(out);
                if out_valid && ready {
                    current.push(out);
                    if out.2 {
                        let source = (current[0].0 >> 24) as usize;
                        assert!(
                            current.iter().all(|b| (b.0 >> 24) as usize == source),
                            "seed {seed}: frames interleaved"
                        );
                        got[source].push(current[0]);
                        let w = waiting_at_start.pop_front().expect("a start was seen");
                        assert!(
                            (0..source).all(|s| !w[s]),
                            "seed {seed}: source {source} went before a higher one: {w:?}"
                        );
                        current.clear();
                    }
                }
                if readies.iter().filter(|&&r| r).count() > 1 {
                    panic!("seed {seed}: two sources ready at once");
                }
                let offered = offering.iter().any(|&o| o);
                let mut moved = false;
                for s in 0..3 {
                    if offering[s] && readies[s] {
                        if next_beat[s] == 0 {
                            assert!(!paused[s], "seed {seed}: source {s} started while paused");
                            waiting_at_start.push_back(waiting);
                        } else if paused[s] {
                            through_pause += 1;
                        }
                        let frame = pending[s].front().unwrap().clone();
                        next_beat[s] += 1;
                        if next_beat[s] == frame.len() {
                            pending[s].pop_front();
                            next_beat[s] = 0;
                        }
                        offering[s] = false;
                        moved = true;
                    }
                }
                if offered && ready && !moved && pause == 0 {
                    gaps += 1;
                }
                sim.tick();
            }
            for (s, g) in got.iter().enumerate() {
                assert_eq!(g.len(), 40, "seed {seed}: frames of source {s}");
                for (f, b) in g.iter().enumerate() {
                    assert_eq!(
                        b.0,
                        (s as u64) << 24 | (f as u64) << 8,
                        "seed {seed}: order of source {s}"
                    );
                }
            }
            if p_pause > 0.0 {
                assert!(
                    through_pause > 0,
                    "seed {seed}: no frame ran through a pause"
                );
            }
            if p_ready == 1.0 {
                // The output register never fills: every offered beat moves,
                // also the first beat after another frame's last.
                assert_eq!(gaps, 0, "seed {seed}: idle cycles with a beat offered");
            }
            if seed == 1 {
                sim.replay_in_verilator("frame_arbiter")
                    .expect("Verilog matches");
            }
        }
    }
}
