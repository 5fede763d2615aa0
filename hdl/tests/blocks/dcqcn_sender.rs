//! DcqcnSender in rust-hdl's simulator, with every outcome of its
//! reaction point and of its pacing gate (the watch ports) replayed on the
//! model's `dcqcn_integer::react` and `pacing::pace`, bit for bit. Two QPs
//! are reset; a QP at the line rate is routed to the ready set in the
//! cycle of its sendable pulse; CNPs cut QP 5's rate, after which its
//! pulses wait in the pacing scheduler and reach the ready set about one
//! frame's time at its rate apart (each grant sends one 1000-byte frame,
//! charged at its status), while QP 9 stays direct; timer increases raise the rate
//! again. Then the recorded cycles on the Verilog under Verilator, the
//! lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use rocenic_hdl::congestion::dcqcn_reaction_point::{KIND_CNP, KIND_RESET, KIND_SENT, KIND_TICK};
use rocenic_hdl::congestion::dcqcn_sender::DcqcnSenderDefault as Rtl;
use rocenic_hdl::congestion::pacing_scheduler::{OUT_CHARGE, OUT_QUESTION, OUT_RATE, OUT_RESET};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::dcqcn_integer::{react, Increase, RpEvent, RpParams, RpRecord};
use rocenic_model::pacing::{pace, PacingEvent, PacingParams, PacingRecord};
use rust_hdl::prelude::*;
use std::collections::HashMap;

/// rocenic's set on a 4 ns clock with its timers shortened so a short run
/// sees cuts, held CNPs and increases, and with fast recovery.
fn params() -> RpParams {
    RpParams {
        alpha_period: 50,
        rate_period: 300,
        monitor_period: 200,
        ai_rate: 5_000_000,
        threshold: 5,
        ..RpParams::rocenic()
    }
}

struct Bench {
    sim: CycleSim<Rtl>,
    rp: RpParams,
    pacing: PacingParams,
    rp_records: HashMap<u64, RpRecord>,
    pacing_records: HashMap<u64, PacingRecord>,
    /// (cycle, qpn) of every ready pulse.
    ready: Vec<(u64, u64)>,
    /// Sent frames owed: (cycle to send, qpn).
    frames: Vec<(u64, u64)>,
    /// Grants' charges owed: (cycle, qpn).
    charges_owed: Vec<(u64, u64)>,
    checked: u64,
    cuts: u64,
    increases: u64,
    held: u64,
    charges: u64,
}

impl Bench {
    fn new() -> Bench {
        let mut sim = CycleSim::new(Rtl::default(), |b| &mut b.clock);
        sim.record();
        let (rp, pacing) = (params(), PacingParams::line_100g());
        sim.uut.rp.drive(&rp);
        sim.uut.pacing.drive(&pacing);
        sim.uut.reset.next = true;
        sim.tick();
        Bench {
            sim,
            rp,
            pacing,
            rp_records: HashMap::new(),
            pacing_records: HashMap::new(),
            ready: Vec::new(),
            frames: Vec::new(),
            charges_owed: Vec::new(),
            checked: 0,
            cuts: 0,
            increases: 0,
            held: 0,
            charges: 0,
        }
    }

    /// One cycle: a QP reset, a CNP and a sendable pulse as given, the
    /// frames owed sent; the watch ports checked. A QP in `again` is
    /// granted by the ready set at once, its grant of one frame charged 3
    /// cycles later (its status) and the frame sent 5 cycles later, when
    /// it pulses sendable again.
    fn cycle(
        &mut self,
        reset: Option<u64>,
        cnp: Option<u64>,
        mut sendable: Option<u64>,
        again: &[u64],
    ) {
        let c = self.sim.cycles();
        // A frame whose QP pulses again after it waits for a cycle without
        // another pulse (one pulse a cycle).
        let frame = self
            .frames
            .iter()
            .position(|f| f.0 <= c && (sendable.is_none() || !again.contains(&f.1)));
        let sent = frame.map(|i| self.frames.remove(i).1);
        let charge = self
            .charges_owed
            .iter()
            .position(|f| f.0 <= c)
            .map(|i| self.charges_owed.remove(i).1);
        if sendable.is_none() {
            sendable = sent.filter(|q| again.contains(q));
        }
        let u = &mut self.sim.uut;
        u.reset.next = false;
        u.now.next = bits(c);
        u.qp_reset_valid.next = reset.is_some();
        u.qp_reset_qpn.next = bits(reset.unwrap_or(0));
        u.cnp_valid.next = cnp.is_some();
        u.cnp_qpn.next = bits(cnp.unwrap_or(0));
        u.sent_valid.next = sent.is_some();
        u.sent_qpn.next = bits(sent.unwrap_or(0));
        u.sent_bytes.next = bits(1000);
        u.charge_valid.next = charge.is_some();
        u.charge_qpn.next = bits(charge.unwrap_or(0));
        u.charge_bytes.next = bits(1000 + 24);
        u.sendable_valid.next = sendable.is_some();
        u.sendable_qpn.next = bits(sendable.unwrap_or(0));
        self.sim.settle();
        self.check(c);
        let u = &self.sim.uut;
        if u.ready_valid.val() {
            let q = u.ready_qpn.val().to_u64();
            self.ready.push((c, q));
            if again.contains(&q) {
                self.charges_owed.push((c + 3, q));
                self.frames.push((c + 5, q));
            }
        }
        self.sim.tick();
    }

    fn check(&mut self, c: u64) {
        let u = &self.sim.uut;
        let w = &u.rp_watch;
        if w.valid.val() {
            let qpn = w.qpn.val().to_u64();
            let now = w.now.val().to_u64() as u32;
            let event = match w.kind.val().to_u64() {
                KIND_RESET => RpEvent::Reset,
                KIND_CNP => RpEvent::Cnp { now },
                KIND_SENT => RpEvent::Sent {
                    bytes: w.bytes.val().to_u64() as u16,
                },
                k => {
                    assert_eq!(k, KIND_TICK);
                    RpEvent::Tick { now }
                }
            };
            let record = self.rp_records.get(&qpn).copied().unwrap_or_default();
            let want = react(&self.rp, &record, event);
            assert_eq!(
                (
                    w.record.val().to_model(),
                    w.rate.val().to_u64() as u32,
                    w.cut.val(),
                    w.held.val(),
                    Increase::from_code(w.increase.val().to_u64()),
                ),
                (want.record, want.rate, want.cut, want.held, want.increase),
                "cycle {c}, QP {qpn}, {event:?}"
            );
            self.rp_records.insert(qpn, want.record);
            self.cuts += u64::from(want.cut);
            self.increases += u64::from(want.increase != Increase::None);
            self.checked += 1;
        }
        let w = &u.pacing_watch;
        if w.valid.val() {
            let qpn = w.qpn.val().to_u64();
            let value = w.value.val().to_u64() as u32;
            let event = match w.kind.val().to_u64() {
                OUT_QUESTION => PacingEvent::Send(value as u16),
                OUT_RATE => PacingEvent::Rate(value),
                OUT_CHARGE => PacingEvent::Charge(value as u16),
                k => {
                    assert_eq!(k, OUT_RESET);
                    PacingEvent::Reset
                }
            };
            let record = self.pacing_records.get(&qpn).copied().unwrap_or_default();
            let want = pace(&self.pacing, &record, event, w.now.val().to_u64() as u32);
            assert_eq!(
                (w.record.val().to_model(), w.allowed.val()),
                (want.record, want.allowed),
                "cycle {c}, QP {qpn}, {event:?}"
            );
            self.pacing_records.insert(qpn, want.record);
            if let PacingEvent::Charge(bytes) = event {
                assert_eq!(bytes, 1000 + 24, "a frame's wire bytes");
                self.charges += 1;
            }
            self.held += u64::from(matches!(event, PacingEvent::Send(_)) && !want.allowed);
            self.checked += 1;
        }
        assert_eq!(u.lost.val().to_u64(), 0, "cycle {c}");
    }

    /// Whether the grant path is told that `qpn` is throttled (a
    /// combinational answer: no clock edge).
    fn grant_throttled(&mut self, qpn: u64) -> bool {
        self.sim.uut.grant_qpn.next = bits(qpn);
        self.sim.settle();
        self.sim.uut.grant_throttled.val()
    }

    fn ready_of(&self, qpn: u64, from: u64) -> Vec<u64> {
        self.ready
            .iter()
            .filter(|r| r.1 == qpn && r.0 >= from)
            .map(|r| r.0)
            .collect()
    }
}

#[test]
fn cnps_cut_a_qps_rate_and_its_grants_wait_for_it() {
    let mut b = Bench::new();
    b.cycle(Some(5), None, None, &[]);
    b.cycle(Some(9), None, None, &[]);
    for _ in 0..4 {
        b.cycle(None, None, None, &[]);
    }
    // At the line rate: straight on, in the pulse's cycle.
    let c = b.sim.cycles();
    b.cycle(None, None, Some(5), &[]);
    b.cycle(None, None, Some(9), &[]);
    assert_eq!(b.ready, vec![(c, 5), (c + 1, 9)]);
    assert!(!b.grant_throttled(5) && !b.grant_throttled(9));

    // Two CNPs for QP 5 within the monitor period: one cut (to half the
    // line rate, alpha being near 1), one held.
    b.cycle(None, Some(5), None, &[]);
    b.cycle(None, Some(5), None, &[]);
    for _ in 0..6 {
        b.cycle(None, None, None, &[]);
    }
    assert_eq!(b.cuts, 1);
    let rate = b.rp_records[&5].rate;
    assert!(
        (50_000_000..50_100_000).contains(&rate),
        "{rate} kb/s after the cut"
    );
    // The grant path sees the cut QP throttled, the other not.
    assert!(b.grant_throttled(5) && !b.grant_throttled(9));

    // QP 5 now streams 1000-byte frames one grant at a time, QP 9 beside
    // it at the line rate.
    let start = b.sim.cycles();
    b.cycle(None, None, Some(5), &[5]);
    for k in 0..900 {
        let pulse9 = (k % 50 == 0).then_some(9);
        b.cycle(None, None, pulse9, &[5]);
    }
    let paced = b.ready_of(5, start);
    // 1024 wire bytes at 50 Gb/s (200 bits a cycle): 41 cycles a frame
    // until the rate timer's first increase (300 cycles after the cut,
    // to 75 Gb/s: 27 cycles, then 87.5: 23); never faster than the line
    // (20.5 cycles). The first pulse waits for the scheduler only.
    assert!(paced.len() >= 25, "{paced:?}");
    assert!(paced[0] - start <= 10, "{paced:?}");
    let gaps: Vec<u64> = paced.windows(2).map(|p| p[1] - p[0]).collect();
    let early: Vec<u64> = paced
        .windows(2)
        .filter(|p| p[1] < start + 250)
        .map(|p| p[1] - p[0])
        .collect();
    assert!(early.len() >= 4, "{paced:?}");
    assert!(early.iter().all(|g| (33..=48).contains(g)), "{paced:?}");
    assert!(gaps.iter().all(|&g| g >= 20), "{paced:?}");
    let late = &gaps[gaps.len() - 6..];
    assert!(late.iter().all(|&g| g <= 30), "{paced:?}");
    assert!(b.held > 50, "{} questions held", b.held);
    assert!(b.charges >= 15, "{} charges", b.charges);
    // QP 9's pulses went straight on, each in its own cycle.
    let direct = b.ready_of(9, start);
    assert_eq!(direct.len(), 18, "{direct:?}");
    assert!(
        direct.iter().all(|&c| (c - start - 1).is_multiple_of(50)),
        "{direct:?}"
    );
    // The rate timer raised QP 5 back up (fast recovery towards Rt).
    assert!(b.increases >= 2, "{} increases", b.increases);
    assert!(b.rp_records[&5].rate > rate);
    assert!(b.checked > 300, "{} outcomes checked", b.checked);
    let cycles = b.sim.replay_in_verilator("dcqcn_sender").unwrap();
    assert!(cycles > 900, "replayed {cycles} cycles");
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("dcqcn_sender", &verilog_of::<Rtl>());
}

#[test]
fn synthesizes_with_its_records_in_block_ram() {
    let report = xilinx_synth("dcqcn_sender", &verilog_of::<Rtl>()).unwrap();
    // The reaction point's records (13 RAMB18), the gate's, the scan's
    // and the scheduler's queues and marks in block RAM; the throttled
    // marks (16 sites a copy, two copies: one read port each) and the
    // four 16-entry queues in LUT RAM.
    assert!(
        report.block_rams() >= 18,
        "{} block RAMs",
        report.block_rams()
    );
    assert!(
        report.lut_rams() <= 64,
        "{} LUT RAM sites",
        report.lut_rams()
    );
    assert!(report.luts() < 4000, "{} LUTs", report.luts());
}
