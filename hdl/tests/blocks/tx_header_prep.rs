//! TxHeaderPrep and the opcode ROM against the codec: for every opcode on
//! IPv4 and IPv6 the job's header bytes are `RoceFrame::encode`'s (UDP
//! checksum bytes aside: a later stage fills those in), its counts follow
//! from the lengths, records the codec refuses become dropped jobs, and
//! random `job_ready` stalls neither lose nor repeat records.

use crate::tx_common;

use rand::Rng;
use rocenic_hdl::codes::opcode_headers::{rom_entry, OpcodeHeaders};
use rocenic_hdl::frame::tx::tx_header::TxHeader;
use rocenic_hdl::frame::tx::tx_header_prep::{TxHeaderPrep, TxJob};
use rocenic_hdl::primitives::byte_reverse::ByteReverse;
use rocenic_hdl::primitives::wide::bits_to_bytes;
use rocenic_hdl_testbench::{yosys_synth, CycleSim};
use rocenic_wire::opcode::ExtSet;
use rocenic_wire::{op, pad_for, RoceFrame};
use rust_hdl::prelude::*;
use tx_common::*;

#[test]
fn opcode_rom_matches_the_codec_for_all_256_codes() {
    for code in 0..=255u8 {
        let entry = rom_entry(code);
        match rocenic_wire::opcode::info(code) {
            None => assert_eq!(entry, 0, "{code:#x}"),
            Some(info) => {
                assert_eq!(entry >> 9 & 1, 1, "{code:#x} known");
                assert_eq!(
                    u8::try_from(entry & 0xFF).unwrap(),
                    info.headers.bits(),
                    "{code:#x}"
                );
                assert_eq!(entry >> 8 & 1 == 1, info.has_payload, "{code:#x}");
                assert_eq!(
                    usize::from(entry >> 10 & 0x1F),
                    info.headers.wire_len(),
                    "{code:#x}"
                );
            }
        }
    }
    // The ROM block reads the same entries.
    let mut t = OpcodeHeaders::default();
    t.connect_all();
    for code in [op::WRITE_ONLY_IMM, op::ATOMIC_ACKNOWLEDGE, op::CNP, 0x15] {
        t.opcode.next = bits(u64::from(code));
        assert!(simulate(&mut t, 10));
        let want = rocenic_wire::opcode::info(code);
        assert_eq!(t.known.val(), want.is_some());
        assert_eq!(
            t.headers_len.val().to_u64() as usize,
            want.map_or(0, |i| i.headers.wire_len())
        );
        assert_eq!(
            t.headers.val().to_u8(),
            want.map_or(ExtSet::NONE, |i| i.headers).bits()
        );
    }
}

/// Runs records through the block; the sink is ready with probability
/// `p_ready`. Returns the jobs in the order they came out.
fn run_prep(records: &[TxHeader], p_ready: f64, seed: u64) -> Vec<TxJob> {
    let mut r = rng(seed);
    let mut sim = CycleSim::new(TxHeaderPrep::default(), |b| &mut b.clock);
    sim.uut.reset.next = true;
    sim.tick();
    sim.uut.reset.next = false;
    let mut jobs = Vec::new();
    let mut next = 0;
    let mut cycles = 0;
    while jobs.len() < records.len() {
        cycles += 1;
        assert!(
            cycles < 20 * records.len() + 100,
            "prep stopped making progress"
        );
        let offer = next < records.len() && r.gen_bool(0.8);
        sim.uut.header.valid.next = offer;
        sim.uut.header.record.next = records[next.min(records.len() - 1)];
        let ready = r.gen_bool(p_ready);
        sim.uut.job_ready.next = ready;
        sim.settle();
        if offer && sim.uut.header.ready.val() {
            next += 1;
        }
        if ready && sim.uut.job_valid.val() {
            jobs.push(sim.uut.job.val());
        }
        sim.tick();
    }
    // Nothing more comes out.
    sim.uut.header.valid.next = false;
    sim.uut.job_ready.next = true;
    for _ in 0..5 {
        sim.settle();
        assert!(!sim.uut.job_valid.val());
        sim.tick();
    }
    jobs
}

fn check_job(frame: &RoceFrame, job: &TxJob) {
    let what = format!(
        "opcode {:#x} ipv6 {} len {}",
        frame.bth.opcode,
        matches!(frame.ip, rocenic_wire::IpHeader::V6(_)),
        frame.payload.len()
    );
    let wire = encode_without_udp_checksum(frame);
    let h = header_len(frame);
    let lanes = bits_to_bytes(job.header_lanes);
    assert_eq!(&lanes[..h], &wire[..h], "{what}: header bytes");
    assert!(
        lanes[h..].iter().all(|&b| b == 0),
        "{what}: zero past the header"
    );
    assert_eq!(job.header_len.to_u64() as usize, h, "{what}");
    let len = frame.payload.len();
    assert_eq!(
        job.payload_beats.to_u64() as usize,
        len.div_ceil(64),
        "{what}"
    );
    assert_eq!(job.payload_last_bytes.to_u64() as usize, len % 64, "{what}");
    let e = h + len + pad_for(len);
    assert_eq!(e + 4, wire.len(), "{what}");
    assert_eq!(job.frame_beats.to_u64() as usize, e.div_ceil(64), "{what}");
    assert_eq!(job.frame_last_bytes.to_u64() as usize, e % 64, "{what}");
    assert!(!job.drop, "{what}");
    let v6 = matches!(frame.ip, rocenic_wire::IpHeader::V6(_));
    assert_eq!(job.ipv6, v6, "{what}");
    assert_eq!(job.udp_checksum, v6 || frame.udp_checksum, "{what}");
}

#[test]
fn every_opcode_on_ipv4_and_ipv6_matches_encode() {
    let mut r = rng(1);
    let mut frames = Vec::new();
    for code in all_opcodes() {
        for ipv6 in [false, true] {
            let len = if carries_payload(code) {
                [0, 1, 3, 4, 60, 64, 65, 200, 4096][r.gen_range(0..9)]
            } else {
                0
            };
            let mut f = random_frame(&mut r, code, ipv6, len);
            f.udp_checksum = r.gen();
            frames.push(f);
        }
    }
    let records: Vec<TxHeader> = frames.iter().map(tx_header_of).collect();
    let jobs = run_prep(&records, 0.6, 2);
    assert_eq!(jobs.len(), frames.len());
    for (f, j) in frames.iter().zip(&jobs) {
        check_job(f, j);
    }
}

#[test]
fn one_record_per_cycle_without_stalls() {
    let mut r = rng(3);
    let frames: Vec<RoceFrame> = (0..12)
        .map(|i| random_frame(&mut r, op::SEND_ONLY, i % 2 == 1, i * 7))
        .collect();
    let records: Vec<TxHeader> = frames.iter().map(tx_header_of).collect();
    let mut sim = CycleSim::new(TxHeaderPrep::default(), |b| &mut b.clock);
    sim.uut.job_ready.next = true;
    let mut out = Vec::new();
    for cycle in 0..records.len() + 3 {
        sim.uut.header.valid.next = cycle < records.len();
        sim.uut.header.record.next = records[cycle.min(records.len() - 1)];
        sim.settle();
        assert!(
            sim.uut.header.ready.val(),
            "never stalls when the sink is ready"
        );
        if sim.uut.job_valid.val() {
            out.push((cycle, sim.uut.job.val()));
        }
        sim.tick();
    }
    assert_eq!(out.len(), records.len());
    for (i, ((cycle, job), f)) in out.iter().zip(&frames).enumerate() {
        assert_eq!(*cycle, i + 3, "latency 3, one job per cycle");
        check_job(f, job);
    }
}

#[test]
fn records_the_codec_refuses_become_dropped_jobs() {
    let mut r = rng(4);
    let good = random_frame(&mut r, op::SEND_ONLY, false, 8);
    let mut unknown = tx_header_of(&good);
    unknown.opcode = bits(0x15);
    let mut ack_with_payload = tx_header_of(&random_frame(&mut r, op::ACKNOWLEDGE, false, 0));
    ack_with_payload.payload_len = bits(4);
    let mut too_long = tx_header_of(&good);
    too_long.payload_len = bits(4097);
    let mut at_limit = tx_header_of(&good);
    at_limit.payload_len = bits(4096);
    let jobs = run_prep(&[unknown, ack_with_payload, too_long, at_limit], 0.7, 5);
    assert!(jobs[0].drop && jobs[1].drop && jobs[2].drop);
    assert!(!jobs[3].drop);
    // The dropped job still says how many payload beats to swallow.
    assert_eq!(jobs[1].payload_beats.to_u64(), 1);
    assert_eq!(jobs[2].payload_beats.to_u64(), 65);
}

#[test]
fn prep_verilog_matches_simulation_and_synthesizes() {
    let mut r = rng(6);
    let frames: Vec<RoceFrame> = [
        (op::WRITE_ONLY_IMM, false, 5),
        (op::UD_SEND_ONLY_IMM, true, 0),
        (op::ATOMIC_ACKNOWLEDGE, false, 0),
        (op::COMPARE_SWAP, true, 0),
        (op::SEND_LAST_INV, false, 4096),
    ]
    .iter()
    .map(|&(code, v6, len)| random_frame(&mut r, code, v6, len))
    .collect();
    let mut sim = CycleSim::new(TxHeaderPrep::default(), |b| &mut b.clock);
    sim.record();
    for cycle in 0..16 {
        sim.uut.reset.next = cycle == 0;
        sim.uut.header.valid.next = (1..=frames.len()).contains(&cycle);
        sim.uut.header.record.next = tx_header_of(&frames[cycle.clamp(1, frames.len()) - 1]);
        sim.uut.job_ready.next = cycle % 3 != 2;
        sim.tick();
    }
    let cycles = sim.replay_in_verilator("tx_header_prep").unwrap();
    assert_eq!(cycles, 16);
    let v = generate_verilog(&sim.uut);
    let report = yosys_synth("tx_header_prep", &v, "synth -top top").unwrap();
    assert!(
        report.count("$_DFF_P_") + report.count("$_DFFE_PP_") > 0,
        "{}",
        report.log
    );
}

#[test]
fn opcode_rom_and_byte_reverse_synthesize() {
    let mut rom = OpcodeHeaders::default();
    rom.connect_all();
    let report = yosys_synth("opcode_headers", &generate_verilog(&rom), "synth -top top").unwrap();
    assert!(report.log.contains("top"), "{}", report.log);
    let mut rev = ByteReverse::<1024>::default();
    rev.connect_all();
    let report = yosys_synth("byte_reverse", &generate_verilog(&rev), "synth -top top").unwrap();
    // Pure wiring: no cells at all.
    assert_eq!(
        report.count("$_AND_") + report.count("$_OR_"),
        0,
        "{}",
        report.log
    );
}
