//! CnpGenerator (with the CnpTransmitter inside) in rust-hdl's simulator
//! against a reference written here from its contract: every CE event
//! stamped with the cycle it is reported, decided in stamp order
//! (responder events before the requester's of the same cycle) by the
//! model's integer notification point (`dcqcn_integer::notify`), and each
//! CNP of a QP with a path framed as the RoCEv2 annex and ConnectX send it
//! (`tx_common::CnpPeer::cnp`, encoded by `rocenic_wire`: BTH opcode 0x81,
//! P_Key 0xFFFF, BECN, the peer's QPN, PSN 0, 16 zero bytes, ICRC; IPv4
//! identification counting CNPs). Random bursts of up to three events a
//! cycle on a few hot QPs, IPv4 and IPv6 peers, a QP without a path and
//! paths cleared (one given again), the
//! frame port stalling at random. Then the recorded run on the Verilog
//! under Verilator, the lint, and one Yosys synthesis.

use crate::common::assert_lint_clean;
use crate::tx_common::{frames_of, take_beat, Beat, CnpPeer};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::congestion::cnp_generator::CnpGenerator;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::dcqcn_integer::{notify, NpEvent, NpParams, NpRecord};
use rust_hdl::prelude::*;
use std::collections::HashMap;

/// The CNPs' DSCP (the QPs' own differ).
const CNP_DSCP: u8 = 46;

struct Bench {
    sim: CycleSim<CnpGenerator>,
    params: NpParams,
    rng: ChaCha8Rng,
    peers: HashMap<u32, CnpPeer>,
    records: HashMap<u32, NpRecord>,
    ip_id: u16,
    /// Expected CNPs: (QP, frame), in order.
    expected: Vec<(u32, Vec<u8>)>,
    fired: Vec<u32>,
    beats: Vec<Beat>,
    held: Option<Beat>,
    events: u64,
}

impl Bench {
    fn new(seed: u64, params: NpParams) -> Bench {
        let mut sim = CycleSim::new(CnpGenerator::default(), |b| &mut b.clock);
        sim.record();
        sim.uut.cfg.drive(&params);
        sim.uut.cnp_dscp.next = bits(CNP_DSCP.into());
        sim.uut.reset.next = true;
        sim.tick();
        sim.uut.reset.next = false;
        Bench {
            sim,
            params,
            rng: ChaCha8Rng::seed_from_u64(seed),
            peers: HashMap::new(),
            records: HashMap::new(),
            ip_id: 0,
            expected: Vec::new(),
            fired: Vec::new(),
            beats: Vec::new(),
            held: None,
            events: 0,
        }
    }

    /// One cycle: `rsp` (up to two) and `req` events reported, an address
    /// written; the reference decides them in the generator's order.
    fn cycle(&mut self, rsp: &[u32], req: Option<u32>, write: Option<(u32, CnpPeer)>) {
        let now = self.sim.cycles() as u32;
        let ready = self.rng.gen_bool(0.7);
        let u = &mut self.sim.uut;
        u.now.next = bits(now.into());
        u.rsp_ce_valid.next = !rsp.is_empty();
        u.rsp_ce_qpn.next = bits(rsp.first().copied().unwrap_or(0).into());
        u.rsp_ce2_valid.next = rsp.len() > 1;
        u.rsp_ce2_qpn.next = bits(rsp.get(1).copied().unwrap_or(0).into());
        u.req_ce_valid.next = req.is_some();
        u.req_ce_qpn.next = bits(req.unwrap_or(0).into());
        u.addr_write.next = write.is_some();
        if let Some((qpn, peer)) = write {
            u.addr_qpn.next = bits(qpn.into());
            u.addr_data.next = peer.address();
        }
        u.frame.tready.next = ready;
        self.sim.settle();
        let u = &self.sim.uut;
        if u.cnp_fire.val() {
            self.fired.push(u.cnp_qpn.val().to_u64() as u32);
        }
        if let Some(b) = take_beat(&u.frame, ready, &mut self.held) {
            self.beats.push(b);
        }
        assert_eq!(u.lost.val().to_u64(), 0, "cycle {now}: an event lost");
        self.sim.tick();
        if let Some((qpn, peer)) = write {
            self.peers.insert(qpn, peer);
            self.records.insert(qpn, NpRecord::default());
        }
        for &qpn in rsp.iter().chain(req.iter()) {
            self.events += 1;
            let record = self.records.get(&qpn).copied().unwrap_or_default();
            let outcome = notify(&self.params, &record, NpEvent::Ce { now });
            self.records.insert(qpn, outcome.record);
            if let (true, Some(peer)) = (outcome.cnp, self.peers.get(&qpn)) {
                if !peer.ipv6 {
                    self.ip_id = self.ip_id.wrapping_add(1);
                }
                self.expected.push((qpn, peer.cnp(CNP_DSCP, self.ip_id)));
            }
        }
    }

    /// One quiet cycle clearing `qpn`'s path (the host put the QP back to
    /// RESET): no CNP for it until its address is written again.
    fn clear_path(&mut self, qpn: u32) {
        self.sim.uut.path_clear.next = true;
        self.sim.uut.path_clear_qpn.next = bits(qpn.into());
        self.cycle(&[], None, None);
        self.sim.uut.path_clear.next = false;
        self.peers.remove(&qpn);
    }

    /// Idle cycles until everything queued has left.
    fn drain(&mut self) {
        for _ in 0..200 {
            self.cycle(&[], None, None);
        }
    }

    fn check(&self) {
        let frames = frames_of(&self.beats);
        let want: Vec<u32> = self.expected.iter().map(|(q, _)| *q).collect();
        assert_eq!(self.fired, want, "CNPs fired");
        assert_eq!(frames.len(), self.expected.len(), "CNP frames");
        for (i, (f, (q, e))) in frames.iter().zip(&self.expected).enumerate() {
            assert_eq!(f, e, "CNP {i} (QP {q})");
        }
        let u = &self.sim.uut;
        assert_eq!(u.ce_events.val().to_u64(), self.events);
    }
}

#[test]
fn cnps_follow_the_integer_notification_point_in_stamp_order() {
    let params = NpParams {
        enabled: true,
        interval: 24,
    };
    let mut b = Bench::new(5, params);
    // QPs 1..=5 get peers (IPv4 and IPv6), QP 6 never does.
    for qpn in 1..=5u32 {
        let peer = CnpPeer::random(&mut b.rng, qpn % 2 == 0);
        b.cycle(&[], None, Some((qpn, peer)));
    }
    for round in 0..6 {
        for _ in 0..250 {
            let r = &mut b.rng;
            let hot = |r: &mut ChaCha8Rng| r.gen_range(1..=6u32);
            // About 0.65 events a cycle, in bursts of up to three.
            let rsp: Vec<u32> = match r.gen_range(0..10) {
                0..=5 => vec![],
                6..=8 => vec![hot(r)],
                _ => vec![hot(r), hot(r)],
            };
            let req = r.gen_bool(0.15).then(|| hot(r));
            b.cycle(&rsp, req, None);
        }
        // A QP brought up again starts with no CNP sent.
        b.drain();
        let peer = CnpPeer::random(&mut b.rng, round % 2 == 1);
        b.cycle(&[], None, Some((1 + round % 5, peer)));
        if round == 2 {
            // QP 2 stays without a path; QP 4 gets one again next round.
            b.clear_path(2);
            b.clear_path(4);
        }
    }
    b.drain();
    b.check();
    assert!(
        b.expected.len() > 150 && b.events > 900,
        "{} CNPs for {} events",
        b.expected.len(),
        b.events
    );
    let cycles = b.sim.replay_in_verilator("cnp_generator").unwrap();
    assert!(cycles > 2500, "replayed {cycles} cycles");
}

/// With the notification point disabled nothing is sent, whatever comes.
#[test]
fn a_disabled_point_sends_nothing() {
    let params = NpParams {
        enabled: false,
        interval: 0,
    };
    let mut b = Bench::new(6, params);
    let peer = CnpPeer::random(&mut b.rng, false);
    b.cycle(&[], None, Some((3, peer)));
    for _ in 0..100 {
        b.cycle(&[3, 3], Some(3), None);
        b.cycle(&[], None, None);
        b.cycle(&[], None, None);
    }
    b.drain();
    b.check();
    assert!(b.expected.is_empty() && b.events == 300);
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("cnp_generator", &verilog_of::<CnpGenerator>());
}

#[test]
fn synthesizes_with_its_tables_in_block_ram() {
    let report = xilinx_synth("cnp_generator", &verilog_of::<CnpGenerator>()).unwrap();
    // The address RAM (449 x 1024 bits: 13 RAMB36 worth), the
    // notification point's records and the TX builder's buffers.
    let rams = 2 * report.count("RAMB36E2") + report.count("RAMB18E2");
    assert!(rams >= 26 + 17, "{}", report.log);
    assert_eq!(report.count("DSP48E2"), 0, "{}", report.log);
    assert!(
        report.luts() < 6_000,
        "{} LUTs\n{}",
        report.luts(),
        report.log
    );
}
