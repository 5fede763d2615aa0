//! CnpTransmitter in rust-hdl's simulator: CNP requests for random IPv4
//! and IPv6 peers, offered and taken at random, each frame byte for byte
//! the CNP `rocenic_wire::RoceFrame` encodes (the RoCEv2 annex's layout
//! as ConnectX sends it), and decoded back: opcode 0x81, BECN, P_Key
//! 0xFFFF, PSN 0, Not-ECT. Then the lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use crate::tx_common::{frames_of, take_beat, Beat, CnpPeer};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::congestion::cnp_transmitter::CnpTransmitter;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_wire::{ecn, DecodeOptions, RoceFrame};
use rust_hdl::prelude::*;

#[test]
fn cnps_are_the_annex_frames_under_random_stalls() {
    let mut r = ChaCha8Rng::seed_from_u64(3);
    let mut sim = CycleSim::new(CnpTransmitter::default(), |b| &mut b.clock);
    sim.uut.reset.next = true;
    sim.tick();
    sim.uut.reset.next = false;
    // The CNPs' DSCP is the NIC's, whatever the QP's data frames carry.
    let cnp_dscp = 48;
    sim.uut.cnp_dscp.next = bits(cnp_dscp.into());
    let mut id = 0u16;
    let requests: Vec<_> = (0..40)
        .map(|i| {
            let ipv6 = i % 3 == 2;
            if !ipv6 {
                id += 1;
            }
            let peer = CnpPeer::random(&mut r, ipv6);
            (peer.address(), peer.cnp(cnp_dscp, id))
        })
        .collect();
    let (mut next, mut beats, mut held): (usize, Vec<Beat>, Option<Beat>) = (0, vec![], None);
    for _ in 0..2_000 {
        let offer = next < requests.len() && r.gen_bool(0.6);
        let ready = r.gen_bool(0.6);
        sim.uut.req_valid.next = offer;
        if let Some((a, _)) = requests.get(next) {
            sim.uut.req_address.next = *a;
        }
        sim.uut.frame.tready.next = ready;
        sim.settle();
        if offer && sim.uut.req_ready.val() {
            next += 1;
        }
        if let Some(b) = take_beat(&sim.uut.frame, ready, &mut held) {
            beats.push(b);
        }
        sim.tick();
    }
    let frames = frames_of(&beats);
    assert_eq!(next, requests.len(), "requests taken");
    assert_eq!(frames.len(), requests.len());
    for (i, (f, (_, want))) in frames.iter().zip(&requests).enumerate() {
        assert_eq!(f, want, "CNP {i}");
        let d = RoceFrame::decode_with(f, DecodeOptions::NIC).expect("a CNP decodes");
        assert_eq!(
            (d.bth.opcode, d.bth.becn, d.bth.pkey, d.bth.psn, d.ip.ecn()),
            (0x81, true, 0xFFFF, 0, ecn::NOT_ECT),
            "CNP {i}"
        );
    }
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("cnp_transmitter", &verilog_of::<CnpTransmitter>());
}

#[test]
fn synthesizes_with_only_the_tx_builders_block_ram() {
    let report = xilinx_synth("cnp_transmitter", &verilog_of::<CnpTransmitter>()).unwrap();
    // The TX builder's delay lines; the header register is the block's own.
    assert_eq!(report.count("RAMB36E2"), 0, "{}", report.log);
    assert!(report.count("RAMB18E2") <= 17, "{}", report.log);
    assert!(
        report.luts() < 5_000,
        "{} LUTs\n{}",
        report.luts(),
        report.log
    );
}
