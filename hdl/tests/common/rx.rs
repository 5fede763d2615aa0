//! Drives frames through the RX parser in rust-hdl's simulator and judges
//! its records and payload against the reference codec.

#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::frame::rx::header_record::{DropReason, HeaderRecord};
use rocenic_hdl::frame::rx::rx_parser::{RxParser, STAT_COUNTERS};
use rocenic_hdl::primitives::wide::{
    bits_from_bytes, bits_from_words, bits_to_bytes, bits_to_words,
};
use rocenic_hdl_testbench::CycleSim;
use rocenic_wire::{IpHeader, RoceFrame};
use rust_hdl::prelude::*;

/// The record the parser must produce for a frame the codec accepts
/// (verdict fields left at zero).
pub fn expected_record(f: &RoceFrame) -> HeaderRecord {
    let mut r = HeaderRecord::default();
    let mac = |m: [u8; 6]| {
        let mut b = [0u8; 8];
        b[2..].copy_from_slice(&m);
        u64::from_be_bytes(b)
    };
    r.eth_dst = bits(mac(f.eth.dst));
    r.eth_src = bits(mac(f.eth.src));
    match &f.ip {
        IpHeader::V4(h) => {
            r.ip_src = bits_from_words(&[u64::from(u32::from(h.src))]);
            r.ip_dst = bits_from_words(&[u64::from(u32::from(h.dst))]);
            r.dscp = bits(h.dscp.into());
            r.ecn = bits(h.ecn.into());
            r.ipv4_identification = bits(h.identification.into());
            r.ipv4_dont_fragment = h.dont_fragment;
            r.ttl = bits(h.ttl.into());
        }
        IpHeader::V6(h) => {
            r.ipv6 = true;
            let words = |a: std::net::Ipv6Addr| {
                let v = u128::from(a);
                [v as u64, (v >> 64) as u64]
            };
            r.ip_src = bits_from_words(&words(h.src));
            r.ip_dst = bits_from_words(&words(h.dst));
            r.dscp = bits(h.dscp.into());
            r.ecn = bits(h.ecn.into());
            r.ipv6_flow_label = bits(h.flow_label.into());
            r.ttl = bits(h.hop_limit.into());
        }
    }
    r.udp_src_port = bits(f.udp_src_port.into());
    r.udp_checksum = f.udp_checksum;
    let b = &f.bth;
    r.opcode = bits(b.opcode.into());
    r.solicited = b.solicited;
    r.mig_req = b.mig_req;
    r.pad_count = bits(b.pad_count.into());
    r.tver = bits(b.tver.into());
    r.pkey = bits(b.pkey.into());
    r.fecn = b.fecn;
    r.becn = b.becn;
    r.dest_qp = bits(b.dest_qp.into());
    r.ack_req = b.ack_req;
    r.psn = bits(b.psn.into());
    let e = &f.ext;
    if let Some(d) = e.deth {
        r.has_deth = true;
        r.deth_qkey = bits(d.qkey.into());
        r.deth_src_qp = bits(d.src_qp.into());
    }
    if let Some(x) = e.reth {
        r.has_reth = true;
        r.reth_va = bits(x.va);
        r.reth_rkey = bits(x.rkey.into());
        r.reth_dma_len = bits(x.dma_len.into());
    }
    if let Some(a) = e.atomic_eth {
        r.has_atomic_eth = true;
        r.atomic_va = bits(a.va);
        r.atomic_rkey = bits(a.rkey.into());
        r.atomic_swap_add = bits(a.swap_add);
        r.atomic_compare = bits(a.compare);
    }
    if let Some(a) = e.aeth {
        r.has_aeth = true;
        r.aeth_syndrome = bits(a.syndrome.into());
        r.aeth_msn = bits(a.msn.into());
    }
    if let Some(a) = e.atomic_ack_eth {
        r.has_atomic_ack_eth = true;
        r.atomic_ack_orig = bits(a.orig);
    }
    if let Some(i) = e.imm {
        r.has_imm = true;
        r.imm = bits(i.into());
    }
    if let Some(i) = e.ieth {
        r.has_ieth = true;
        r.ieth_rkey = bits(i.into());
    }
    r.payload_len = bits(f.payload.len() as u64);
    r.has_payload = !f.payload.is_empty();
    r
}

/// What came out of one run.
pub struct RxRun {
    pub records: Vec<HeaderRecord>,
    /// Cycle at which each record moved.
    pub record_cycles: Vec<u64>,
    /// Payload segments: bytes kept, drop flag.
    pub segments: Vec<(Vec<u8>, bool)>,
    /// Cycle at which each frame's last beat was accepted.
    pub last_beat_cycles: Vec<u64>,
    /// Cycles in which the source offered a beat and `rx.tready` was low.
    pub refused: u64,
    pub cycles: u64,
    /// Counter values at the end (index 0: accepted).
    pub stats: Vec<u64>,
}

/// Traffic shape: probabilities that the source offers a beat, and that
/// each consumer is ready, per cycle.
#[derive(Clone, Copy)]
pub struct Traffic {
    pub p_valid: f64,
    pub p_ready: f64,
    pub seed: u64,
}

pub const FULL_SPEED: Traffic = Traffic {
    p_valid: 1.0,
    p_ready: 1.0,
    seed: 0,
};

/// Feeds `frames` to a fresh parser and collects everything it emits.
/// Checks AXI-Stream stability of both outputs on the way. With
/// `replay`, the run is also replayed on the Verilog (Verilator).
pub fn run_parser(frames: &[Vec<u8>], traffic: Traffic, replay: Option<&str>) -> RxRun {
    let mut rng = ChaCha8Rng::seed_from_u64(traffic.seed);
    let mut sim = CycleSim::new(RxParser::default(), |p| &mut p.clock);
    if replay.is_some() {
        sim.record();
    }
    let beats: Vec<(Vec<u8>, bool, usize)> = frames
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            let n = f.len().div_ceil(64);
            f.chunks(64)
                .enumerate()
                .map(move |(k, c)| (c.to_vec(), k + 1 == n, i))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut next = 0;
    let mut out = RxRun {
        records: Vec::new(),
        record_cycles: Vec::new(),
        segments: Vec::new(),
        last_beat_cycles: Vec::new(),
        refused: 0,
        cycles: 0,
        stats: Vec::new(),
    };
    let mut segment: Vec<u8> = Vec::new();
    let mut held_beat: Option<(Vec<u64>, u64, bool, bool)> = None;
    let mut held_record: Option<HeaderRecord> = None;
    let mut idle = 0;
    sim.uut.reset.next = false;
    sim.uut.stat_select.next = bits(0);
    while idle < 12 {
        let offer = next < beats.len() && rng.gen_bool(traffic.p_valid);
        sim.uut.rx.tvalid.next = offer;
        if let Some((data, last, _)) = beats.get(next) {
            let mut padded = data.clone();
            padded.resize(64, 0x5A);
            sim.uut.rx.tdata.next = bits_from_bytes(&padded);
            let keep = if data.len() == 64 {
                u64::MAX
            } else {
                (1u64 << data.len()) - 1
            };
            sim.uut.rx.tkeep.next = bits_from_words(&[keep]);
            sim.uut.rx.tlast.next = *last;
        }
        let pay_ready = rng.gen_bool(traffic.p_ready);
        let rec_ready = rng.gen_bool(traffic.p_ready);
        sim.uut.payload.tready.next = pay_ready;
        sim.uut.record.ready.next = rec_ready;
        sim.settle();
        let cycle = sim.cycles();
        if offer && !sim.uut.rx.tready.val() {
            out.refused += 1;
        }
        if offer && sim.uut.rx.tready.val() {
            if beats[next].1 {
                out.last_beat_cycles.push(cycle);
            }
            next += 1;
        }
        // Output beats must hold still while stalled.
        let pv = sim.uut.payload.tvalid.val();
        let beat = (
            bits_to_words(sim.uut.payload.tdata.val()),
            sim.uut.payload.tkeep.val().to_u64(),
            sim.uut.payload.tlast.val(),
            sim.uut.payload_drop.val(),
        );
        if let Some(h) = &held_beat {
            assert!(pv && &beat == h, "payload beat changed while stalled");
        }
        held_beat = (pv && !pay_ready).then(|| beat.clone());
        if pv && pay_ready {
            let bytes = bits_to_bytes(sim.uut.payload.tdata.val());
            let kept = beat.1.count_ones() as usize;
            assert_eq!(
                beat.1,
                if kept == 64 {
                    u64::MAX
                } else {
                    (1 << kept) - 1
                }
            );
            segment.extend_from_slice(&bytes[..kept]);
            if beat.2 {
                out.segments.push((std::mem::take(&mut segment), beat.3));
            } else {
                assert!(!beat.3, "drop is only set on a last beat");
            }
        }
        let rv = sim.uut.record.valid.val();
        let rec = sim.uut.record.record.val();
        if let Some(h) = &held_record {
            assert!(rv && &rec == h, "record changed while stalled");
        }
        held_record = (rv && !rec_ready).then_some(rec);
        if rv && rec_ready {
            out.records.push(rec);
            out.record_cycles.push(cycle);
        }
        sim.tick();
        let busy = next < beats.len() || out.records.len() < frames.len();
        idle = if busy { 0 } else { idle + 1 };
        assert!(
            sim.cycles() < 100_000,
            "parser stuck: {} of {} beats in, {} of {} records out",
            next,
            beats.len(),
            out.records.len(),
            frames.len()
        );
    }
    assert!(segment.is_empty(), "a payload segment was left open");
    out.cycles = sim.cycles();
    for r in 0..STAT_COUNTERS {
        sim.uut.stat_select.next = bits(r as u64);
        sim.settle();
        out.stats.push(sim.uut.stat_count.val().to_u64());
    }
    if let Some(name) = replay {
        sim.replay_in_verilator(name)
            .unwrap_or_else(|e| panic!("Verilog differs from rust-hdl: {e}"));
    }
    out
}

/// Judges a run frame by frame against `RoceFrame::decode`: verdict and
/// reason, every record field of accepted frames, the payload bytes, the
/// pairing of segments with records, and the counters. Returns the reason
/// names seen, in frame order.
pub fn judge(frames: &[Vec<u8>], run: &RxRun) -> Vec<&'static str> {
    assert_eq!(run.records.len(), frames.len(), "one record per frame");
    let mut segments = run.segments.iter();
    let mut names = Vec::new();
    let mut counts = vec![0u64; STAT_COUNTERS];
    for (i, (bytes, rec)) in frames.iter().zip(&run.records).enumerate() {
        let code = rec.reason.to_u64() as u8;
        counts[usize::from(code)] += 1;
        assert_eq!(rec.drop, code != 0, "frame {i}: drop flag and reason agree");
        let segment = rec.has_payload.then(|| {
            segments
                .next()
                .unwrap_or_else(|| panic!("frame {i}: record promises a segment"))
        });
        if let Some((_, drop)) = segment {
            assert_eq!(*drop, rec.drop, "frame {i}: segment verdict");
        }
        // The parser does not verify UDP checksums: judge it against the
        // codec's verdict on the same frame with the checksum zeroed
        // (meaning "not computed"), which the ICRC does not cover.
        let (verdict, unverified) = match RoceFrame::decode(bytes) {
            Err(e) if e.reason() == "udp_checksum" => {
                let mut zeroed = bytes.clone();
                let at = if bytes[12] == 0x86 {
                    14 + 40 + 6
                } else {
                    14 + 20 + 6
                };
                zeroed[at] = 0;
                zeroed[at + 1] = 0;
                (RoceFrame::decode(&zeroed), true)
            }
            other => (other, false),
        };
        match verdict {
            Ok(f) => {
                assert_eq!(
                    code,
                    0,
                    "frame {i}: accepted by the codec, dropped as {:?}",
                    DropReason::from_code(code)
                );
                let mut got = *rec;
                got.reason = bits(0);
                got.drop = false;
                let mut want = expected_record(&f);
                want.udp_checksum |= unverified;
                assert_eq!(got, want, "frame {i}: record fields");
                assert_eq!(
                    segment.map(|s| s.0.clone()).unwrap_or_default(),
                    f.payload,
                    "frame {i}: payload"
                );
                names.push(if unverified {
                    "udp_checksum"
                } else {
                    "accepted"
                });
            }
            Err(e) => {
                let got = DropReason::from_code(code).map(DropReason::name);
                assert_eq!(got, Some(e.reason()), "frame {i}: {e}");
                names.push(e.reason());
            }
        }
    }
    assert!(segments.next().is_none(), "segments without records");
    assert_eq!(run.stats, counts, "counters");
    names
}
