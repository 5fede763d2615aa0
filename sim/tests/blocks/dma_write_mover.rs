//! The Verilated `DmaWriteMover` alone against the model of its contract:
//! random jobs (a payload of 1..=4096 bytes at any byte offset of a page
//! of 4 KiB or 64 KiB, split at the page boundary into one or two
//! segments on unrelated physical pages, as the MR translation gives
//! them), the payload beats offered with random gaps and garbage past the
//! payload's end, jobs offered at random, random back-pressure on the DMA
//! write port, and between jobs single-beat bursts of the `other` writer.
//!
//! Checked: the DMA port's framing (`rtl_common::dma_write`); the
//! requests, in order, are exactly the model's `mr::segment_spans` of each
//! job's payload (host address and bytes) and the other writer's beats;
//! every beat's address, keep and first / last are the contract's
//! `request_beats` (no spare partial beat); the block takes exactly the
//! payload's beats; `idle` at the end. At full rate (no gaps, no
//! back-pressure) the beats of back-to-back jobs leave one per cycle.

use crate::rtl_common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::dma::dma_write_mover::{request_beats, BeatModel};
use rocenic_model::memory::HostMemory;
use rocenic_model::mr::{segment_spans, DmaSegment};
use rocenic_rtl::host_dma::{HostDma, HostDmaConfig};
use rocenic_rtl::stream::{bytes_to_words, BEAT_BYTES};
use rtl_common::dma_write::{expect_write, DmaWriteCheck};
use std::collections::VecDeque;
use verilator_sys::{DmaWriteMover as Dut, Sim};

/// One job: its payload and the segments it goes to.
struct Job {
    payload: Vec<u8>,
    segs: Vec<DmaSegment>,
}

fn random_job(rng: &mut ChaCha8Rng) -> Job {
    let page: u64 = if rng.gen_bool(0.5) { 4096 } else { 65536 };
    let len: usize = match rng.gen_range(0..4) {
        0 => rng.gen_range(1..=8),
        1 => rng.gen_range(56..=136),
        2 => rng.gen_range(4090..=4096),
        _ => rng.gen_range(1..=4096),
    };
    // Offsets near the page's end make the page split likely.
    let off = if rng.gen_bool(0.5) {
        page - rng.gen_range(1..=len.min(4096) as u64)
    } else {
        rng.gen_range(0..page)
    };
    let frame = |rng: &mut ChaCha8Rng| rng.gen_range(1u64..1 << 20) * page;
    let seg0_len = (page - off).min(len as u64);
    let mut segs = vec![DmaSegment {
        phys: frame(rng) + off,
        len: seg0_len as u32,
    }];
    if seg0_len < len as u64 {
        segs.push(DmaSegment {
            phys: frame(rng),
            len: (len as u64 - seg0_len) as u32,
        });
    }
    let payload = (0..len).map(|_| rng.gen()).collect();
    Job { payload, segs }
}

/// The payload's beats, lane 0 first, garbage past its end.
fn payload_beats(rng: &mut ChaCha8Rng, payload: &[u8]) -> Vec<[u8; BEAT_BYTES]> {
    payload
        .chunks(BEAT_BYTES)
        .map(|c| {
            let mut beat = [0u8; BEAT_BYTES];
            rng.fill(&mut beat[..]);
            beat[..c.len()].copy_from_slice(c);
            beat
        })
        .collect()
}

fn drive_job(sim: &mut Sim<Dut>, job: &Job) {
    let s0 = job.segs[0];
    let s1 = job
        .segs
        .get(1)
        .copied()
        .unwrap_or(DmaSegment { phys: 0, len: 0 });
    sim.set_u64(Dut::JOB_LEN, job.payload.len() as u64);
    sim.set_u64(Dut::JOB_SEG0_ADDR, s0.phys);
    sim.set_u64(Dut::JOB_SEG0_LEN, u64::from(s0.len));
    sim.set_bit(Dut::JOB_TWO_SEGMENTS, job.segs.len() == 2);
    sim.set_u64(Dut::JOB_SEG1_ADDR, s1.phys);
    sim.set_u64(Dut::JOB_SEG1_LEN, u64::from(s1.len));
}

/// A single-beat burst of the other writer: host address and bytes.
fn other_beat(rng: &mut ChaCha8Rng) -> (u64, Vec<u8>) {
    let addr = rng.gen_range(1u64..1 << 30) * 8;
    (addr, (0..8).map(|_| rng.gen()).collect())
}

fn drive_other(sim: &mut Sim<Dut>, beat: Option<&(u64, Vec<u8>)>) {
    sim.set_bit(Dut::OTHER_VALID, beat.is_some());
    let (addr, bytes) = beat.cloned().unwrap_or((0, vec![0; 8]));
    let lane = (addr % 64) as usize;
    let mut lanes = [0u8; BEAT_BYTES];
    lanes[lane..lane + 8].copy_from_slice(&bytes);
    sim.set_u64(Dut::OTHER_ADDR, addr - lane as u64);
    sim.set(Dut::OTHER_DATA, &bytes_to_words(&lanes));
    sim.set_u64(Dut::OTHER_KEEP, 0xff << lane);
    sim.set_bit(Dut::OTHER_FIRST, true);
    sim.set_bit(Dut::OTHER_LAST, true);
    sim.set_u64(Dut::OTHER_REQ_ADDR, addr);
    sim.set_u64(Dut::OTHER_REQ_LEN, 8);
}

struct Run {
    beats: u64,
    requests: usize,
    cycles: u64,
    /// Cycles from the first DMA beat to the last.
    beat_span: u64,
}

/// Probabilities: a job offered, a payload beat offered, DMA ready, an
/// other-writer burst between jobs.
fn run_case(seed: u64, jobs: usize, (p_job, p_in, p_dma, p_other): (f64, f64, f64, f64)) -> Run {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sim = Sim::<Dut>::new().expect("dma_write_mover is exported");
    sim.set_bit(Dut::RESET, true);
    sim.tick();
    sim.set_bit(Dut::RESET, false);
    let mut host = HostDma::new(HostDmaConfig::default(), HostMemory::new(seed));
    let mut dma = DmaWriteCheck::<Dut>::named("dma", seed);

    let mut todo: VecDeque<Job> = (0..jobs).map(|_| random_job(&mut rng)).collect();
    // The payload beats of the jobs taken, in order.
    let mut input: VecDeque<[u8; BEAT_BYTES]> = VecDeque::new();
    // The requests the model makes, in order, and their beats to come.
    let mut want: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    let mut want_beats: VecDeque<BeatModel> = VecDeque::new();
    let mut other: Option<(u64, Vec<u8>)> = None;
    let (mut busy, mut cycles, mut beats, mut requests) = (false, 0u64, 0u64, 0usize);
    let (mut first_beat, mut last_beat) = (None, 0u64);
    let limit = 2000 + jobs as u64 * 600;
    while !todo.is_empty() || busy || !want.is_empty() || other.is_some() {
        assert!(cycles < limit, "seed {seed}: no progress at cycle {cycles}");
        // The other writer's burst only while no job is in progress, and
        // no job is offered while it waits.
        if other.is_none() && !busy && rng.gen_bool(p_other) {
            let o = other_beat(&mut rng);
            want_beats.extend(request_beats(o.0, &o.1));
            want.push_back(o.clone());
            other = Some(o);
        }
        drive_other(&mut sim, other.as_ref());
        let offer = other.is_none() && !todo.is_empty() && rng.gen_bool(p_job);
        sim.set_bit(Dut::JOB_VALID, offer);
        if let Some(job) = todo.front() {
            drive_job(&mut sim, job);
        }
        let in_valid = !input.is_empty() && rng.gen_bool(p_in);
        sim.set_bit(Dut::IN_VALID, in_valid);
        if let Some(b) = input.front() {
            sim.set(Dut::IN_DATA, &bytes_to_words(b));
        }
        let allow = rng.gen_bool(p_dma);
        let ready = dma.drive(&mut sim, &host, allow);
        sim.eval();

        let (addr, keep) = (sim.get_u64(Dut::DMA_ADDR), sim.get_u64(Dut::DMA_KEEP));
        let (first, last) = (sim.get_bit(Dut::DMA_FIRST), sim.get_bit(Dut::DMA_LAST));
        if let Some(moved) = dma.observe(&sim, &mut host, ready) {
            beats += 1;
            first_beat.get_or_insert(cycles);
            last_beat = cycles;
            let expect = want_beats
                .pop_front()
                .unwrap_or_else(|| panic!("seed {seed}: a beat the model does not send"));
            assert_eq!(
                (addr, keep, first, last),
                (expect.addr, expect.keep, expect.first, expect.last),
                "seed {seed}: beat of request {requests}"
            );
            if let Some(request) = moved.request {
                expect_write(&request, want.pop_front(), seed);
                requests += 1;
            }
        }
        if other.is_some() && sim.get_bit(Dut::OTHER_READY) {
            other = None;
        }
        let in_ready = sim.get_bit(Dut::IN_READY);
        assert!(
            in_valid || !in_ready,
            "seed {seed}: in_ready without in_valid"
        );
        if in_ready {
            input.pop_front();
        }
        if sim.get_bit(Dut::JOB_DONE) {
            assert!(busy, "seed {seed}: job_done without a job");
            busy = false;
        }
        if offer && sim.get_bit(Dut::JOB_READY) {
            assert!(!busy, "seed {seed}: a job taken while one is in progress");
            let job = todo.pop_front().expect("offered");
            input.extend(payload_beats(&mut rng, &job.payload));
            for (phys, range) in segment_spans(&job.segs, job.payload.len()) {
                let bytes = job.payload[range].to_vec();
                want_beats.extend(request_beats(phys, &bytes));
                want.push_back((phys, bytes));
            }
            busy = true;
        }
        sim.tick();
        host.clock(false);
        cycles += 1;
    }
    assert!(
        input.is_empty() && want_beats.is_empty(),
        "seed {seed}: the payload taken exactly"
    );
    assert!(dma.idle(), "seed {seed}: a write request left open");
    sim.eval();
    assert!(sim.get_bit(Dut::IDLE), "seed {seed}: idle at the end");
    Run {
        beats,
        requests,
        cycles,
        beat_span: last_beat - first_beat.unwrap_or(0),
    }
}

#[test]
fn random_jobs_with_back_pressure_write_the_models_segments() {
    let (mut beats, mut requests, mut cycles) = (0, 0, 0);
    for seed in 0..64u64 {
        let p = match seed % 3 {
            0 => (0.5, 0.6, 0.5, 0.1),
            1 => (0.9, 0.9, 0.3, 0.05),
            _ => (0.3, 0.4, 0.9, 0.3),
        };
        let r = run_case(seed, 40, p);
        assert!(r.requests >= 40, "seed {seed}: every job wrote");
        beats += r.beats;
        requests += r.requests;
        cycles += r.cycles;
    }
    println!(
        "dma_write_mover: 64 seeds, 2560 jobs, {requests} requests, {beats} beats, {cycles} cycles"
    );
}

#[test]
fn back_to_back_jobs_leave_one_beat_per_cycle() {
    for seed in 100..104u64 {
        let r = run_case(seed, 60, (1.0, 1.0, 1.0, 0.0));
        assert_eq!(
            r.beat_span + 1,
            r.beats,
            "seed {seed}: a gap between beats at full rate"
        );
        println!(
            "seed {seed}: {} jobs' {} beats in {} cycles ({} requests)",
            60, r.beats, r.cycles, r.requests
        );
    }
}
