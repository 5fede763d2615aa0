//! CnpTransmitter in rust-hdl's simulator: CNP requests for random IPv4
//! and IPv6 peers, offered and taken at random, each frame byte for byte
//! the CNP `rocenic_wire::RoceFrame` encodes (the RoCEv2 annex's layout
//! as ConnectX sends it), and decoded back: opcode 0x81, BECN, P_Key
//! 0xFFFF, PSN 0, Not-ECT. Then the lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use crate::tx_common::{frames_of, take_beat, Beat};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::congestion::cnp_transmitter::CnpTransmitter;
use rocenic_hdl::primitives::wide::bits_from_words;
use rocenic_hdl::qp::qp_address_ram::QpAddress;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_wire::{ecn, op, Bth, EthHeader, ExtHeaders, IpHeader, Ipv4Header, Ipv6Header};
use rocenic_wire::{DecodeOptions, RoceFrame};
use rust_hdl::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};

/// A random address entry and the CNP it asks for (`id`: the IPv4
/// identification it must carry).
fn request(r: &mut ChaCha8Rng, ipv6: bool, id: u16, cnp_dscp: u8) -> (QpAddress, Vec<u8>) {
    let (src, dst): (u128, u128) = if ipv6 {
        (r.gen(), r.gen())
    } else {
        (r.gen::<u32>().into(), r.gen::<u32>().into())
    };
    let (mac_dst, mac_src) = (r.gen::<u64>() >> 16, r.gen::<u64>() >> 16);
    let (dest_qp, dscp, port) = (r.gen_range(0..1 << 24), r.gen_range(0..64u64), r.gen());
    let words = |v: u128| bits_from_words(&[v as u64, (v >> 64) as u64]);
    let address = QpAddress {
        pd: bits(r.gen::<u32>().into()),
        dest_qp: bits(u64::from(dest_qp)),
        pkey: bits(r.gen::<u16>().into()),
        eth_dst: bits(mac_dst),
        eth_src: bits(mac_src),
        ipv6,
        ip_src: words(src),
        ip_dst: words(dst),
        dscp: bits(dscp),
        ecn: bits(r.gen_range(0..4)),
        udp_src_port: bits(u64::from(port)),
    };
    let mac = |m: u64| {
        let b = m.to_be_bytes();
        [b[2], b[3], b[4], b[5], b[6], b[7]]
    };
    let ip = if ipv6 {
        IpHeader::V6(Ipv6Header {
            src: Ipv6Addr::from(src),
            dst: Ipv6Addr::from(dst),
            dscp: cnp_dscp,
            ecn: ecn::NOT_ECT,
            flow_label: 0,
            hop_limit: 64,
        })
    } else {
        IpHeader::V4(Ipv4Header {
            src: Ipv4Addr::from(src as u32),
            dst: Ipv4Addr::from(dst as u32),
            dscp: cnp_dscp,
            ecn: ecn::NOT_ECT,
            identification: id,
            dont_fragment: true,
            ttl: 64,
        })
    };
    let mut bth = Bth::new(op::CNP, dest_qp, 0);
    bth.becn = true;
    let frame = RoceFrame {
        eth: EthHeader {
            dst: mac(mac_dst),
            src: mac(mac_src),
        },
        ip,
        udp_src_port: port,
        udp_checksum: false,
        bth,
        ext: ExtHeaders::default(),
        payload: Vec::new(),
    };
    (address, frame.encode().expect("a CNP encodes"))
}

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
            request(&mut r, ipv6, id, cnp_dscp)
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
