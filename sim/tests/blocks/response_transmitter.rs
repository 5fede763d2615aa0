//! The Verilated `ResponseTransmitter` against the model NIC's responder.
//!
//! Each trace runs a model NIC pair scenario (`rocenic_sim::scenario`,
//! IPv4 or IPv6, path MTU 256..4096, READs of 0 bytes..1 MiB, atomics,
//! SEND / WRITE traffic for ACKs, loss, duplication and reordering for
//! NAKs, coalesced ACKs and re-executed READs) and records every response
//! packet descriptor the responder NIC dequeued and the frame it sent for
//! it (`responder::record_sent_responses`). The RTL gets the same
//! descriptors, in order, with each QP's addressing and PD (from
//! `Nic::qp_tx_attrs`), the responder's MR table through its configuration
//! port and its host memory image behind a `HostDma` with random latency,
//! bandwidth, completion size and reordering, and random backpressure on
//! its frame output. Every RTL frame must be bit-identical to the model's,
//! in order. The scenarios' READ sources are never written, so the final
//! memory image holds the bytes each READ response carried.

use crate::rtl_common;

use crate::rtl_common::faults::lossy;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::qp::qp_address_ram::QpAddress;
use rocenic_model::memory::HostMemory;
use rocenic_model::mr::MrTable;
use rocenic_model::nic::{Nic, QpTxAttrs};
use rocenic_model::responder::{record_sent_responses, SentResponse};
use rocenic_model::verbs::Access;
use rocenic_rtl::host_dma::{HostDma, HostDmaConfig};
use rocenic_rtl::mr_config::load_mr_table;
use rocenic_rtl::qp_config::{qp_address, set_address};
use rocenic_rtl::stream::{bytes_to_words, AxisOutPorts, StreamSink};
use rocenic_sim::scenario::{run_inspect, ScenarioConfig, Workload};
use rocenic_wire::op;
use rtl_common::drain::assert_drained;
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{ResponseTransmitter as Dut, Sim};

const MIB: u64 = 1 << 20;

/// One descriptor as the RTL takes it.
#[derive(Clone, Debug)]
struct Desc {
    opcode: u8,
    psn: u32,
    syndrome: u8,
    msn: u32,
    orig: u64,
    read: bool,
    va: u64,
    rkey: u32,
    len: u32,
    /// The QP's PD and frame addressing.
    address: QpAddress,
}

/// The responder NIC of a finished scenario: what the RTL needs of it.
struct Responder {
    mac: [u8; 6],
    dscp: u8,
    ecn: bool,
    memory: HostMemory,
    mrs: MrTable,
    qps: BTreeMap<u32, QpTxAttrs>,
}

/// A recorded scenario: the responder and what it sent.
struct Trace {
    name: String,
    responder: Responder,
    sent: Vec<SentResponse>,
}

fn record(config: &ScenarioConfig) -> Trace {
    let mut responder = None;
    let (report, sent) = record_sent_responses(|| {
        run_inspect(config, None, |_, b: &Nic| {
            responder = Some(Responder {
                mac: b.config().mac,
                dscp: b.config().dscp,
                ecn: b.config().ecn,
                memory: b.memory().clone(),
                mrs: b.mr_table().clone(),
                qps: (0..1 << 12)
                    .filter_map(|q| b.qp_tx_attrs(q).map(|a| (q, a)))
                    .collect(),
            })
        })
        .expect("scenario runs")
    });
    assert!(report.data_verified, "{config:?}: {:?}", report.mismatches);
    let responder = responder.expect("inspected");
    // The requester NIC answers nothing: every response is the responder's.
    assert!(sent.iter().all(|s| s.nic_mac == responder.mac));
    let name = format!(
        "{:?} size {} mtu {} ipv6 {} loss {} seed {}",
        config.workload, config.size, config.mtu, config.ipv6, config.faults.loss, config.seed
    );
    Trace {
        name,
        responder,
        sent,
    }
}

fn descriptor(r: &Responder, s: &SentResponse) -> Desc {
    let a = r.qps[&s.qpn];
    let p = &s.packet;
    let (syndrome, msn) = p.aeth.unwrap_or((0, 0));
    let read = p.read.unwrap_or(rocenic_model::response_queue::ReadSlice {
        va: 0,
        rkey: 0,
        offset: 0,
        len: 0,
    });
    Desc {
        opcode: p.opcode,
        psn: p.psn,
        syndrome,
        msn,
        orig: p.atomic_orig.unwrap_or(0),
        read: p.read.is_some(),
        va: read.va,
        rkey: read.rkey,
        len: read.len,
        address: qp_address(s.qpn, &a, r.mac, r.dscp, r.ecn),
    }
}

fn drive(sim: &mut Sim<Dut>, d: &Desc) {
    sim.set_u64(Dut::DESC_OPCODE, d.opcode.into());
    sim.set_u64(Dut::DESC_PSN, d.psn.into());
    sim.set_u64(Dut::DESC_SYNDROME, d.syndrome.into());
    sim.set_u64(Dut::DESC_MSN, d.msn.into());
    sim.set_u64(Dut::DESC_ORIG, d.orig);
    sim.set_bit(Dut::DESC_READ, d.read);
    sim.set_u64(Dut::DESC_VA, d.va);
    sim.set_u64(Dut::DESC_RKEY, d.rkey.into());
    sim.set_u64(Dut::DESC_LEN, d.len.into());
    set_address(sim, Dut::DESC_ADDRESS, &d.address);
}

struct RtlRun {
    frames: Vec<Vec<u8>>,
    /// Output beats and the cycles from the first to the last one.
    beats: u64,
    span: u64,
    cycles: u64,
    read_errors: u64,
}

/// Runs `descs` through a fresh block loaded with `r`'s MRs and memory;
/// `p_valid`: chance a descriptor is offered in a cycle.
fn run_rtl(
    r: &Responder,
    descs: &[Desc],
    expect_frames: usize,
    dma: HostDmaConfig,
    p_valid: f64,
    p_ready: f64,
    seed: u64,
) -> RtlRun {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xDE5C);
    let mut sim = Sim::<Dut>::new().expect("bridge");
    let out = AxisOutPorts::<Dut>::named("frame", &[]).expect("frame ports");
    let mut sink = StreamSink::new("frame", p_ready, seed ^ 0x5EED);
    let mut host = HostDma::new(dma, r.memory.clone());
    sim.set_bit(Dut::RESET, true);
    sim.tick();
    sim.set_bit(Dut::RESET, false);
    loop {
        sim.eval();
        if sim.get_bit(Dut::CFG_READY) {
            break;
        }
        sim.tick();
    }
    let mtt = r.mrs.mtt();
    let used = mtt.iter().rposition(|&a| a != 0).map_or(0, |i| i + 1);
    load_mr_table(&mut sim, &r.mrs, 16, used).expect("the MR port passes through");

    let mut queue: VecDeque<&Desc> = descs.iter().collect();
    let start = sim.cycle();
    let mut first_beat = None;
    let mut last_beat = 0;
    let budget: u64 = descs
        .iter()
        .map(|d| 40 + u64::from(d.len) / 16)
        .sum::<u64>()
        + 20 * dma.read_latency
        + 10_000;
    let limit = start + (budget as f64 / p_ready.min(p_valid).max(0.05)) as u64;
    let mut offered = false;
    while sink.frames().len() < expect_frames || !queue.is_empty() {
        assert!(
            sim.cycle() < limit,
            "stuck at cycle {}: {} of {} descriptors taken, {} frames out",
            sim.cycle() - start,
            descs.len() - queue.len(),
            descs.len(),
            sink.frames().len()
        );
        sink.begin_cycle();
        // Once offered, a descriptor stays valid until taken.
        offered = !queue.is_empty() && (offered || rng.gen_bool(p_valid));
        if let Some(d) = queue.front() {
            drive(&mut sim, d);
        }
        sim.set_bit(Dut::DESC_VALID, offered);
        let req_ready = host.read_request_ready();
        sim.set_bit(Dut::DMA_REQ_READY, req_ready);
        let beat = host.offered().cloned();
        sim.set_bit(Dut::DMA_RD_VALID, beat.is_some());
        if let Some(b) = &beat {
            sim.set_u64(Dut::DMA_RD_TAG, b.tag.into());
            sim.set(Dut::DMA_RD_DATA, &bytes_to_words(&b.data));
            sim.set_bit(Dut::DMA_RD_LAST, b.last);
        }
        out.set_ready(sim.dut_mut(), sink.ready());
        sim.eval();
        let cycle = sim.cycle() - start;
        if offered && sim.get_bit(Dut::DESC_READY) {
            queue.pop_front();
            offered = false;
        }
        if req_ready && sim.get_bit(Dut::DMA_REQ_VALID) {
            let tag = sim.get_u64(Dut::DMA_REQ_TAG) as u16;
            let addr = sim.get_u64(Dut::DMA_REQ_ADDR);
            let len = sim.get_u64(Dut::DMA_REQ_LEN);
            host.read_request(tag, addr, len)
                .unwrap_or_else(|e| panic!("cycle {cycle}: DMA read refused: {e}"));
        }
        let taken = beat.is_some() && sim.get_bit(Dut::DMA_RD_READY);
        if out
            .observe(sim.dut(), &mut sink, cycle)
            .unwrap_or_else(|v| panic!("{v}"))
        {
            first_beat.get_or_insert(cycle);
            last_beat = cycle;
        }
        host.clock(taken);
        sim.tick();
    }
    sim.set_bit(Dut::DESC_VALID, false);
    assert_drained(&mut sim, &out, &mut host);
    RtlRun {
        beats: sink.beats(),
        frames: sink.take_frames().into_iter().map(|f| f.bytes).collect(),
        span: first_beat.map_or(0, |f| last_beat + 1 - f),
        cycles: sim.cycle() - start,
        read_errors: sim.get_u64(Dut::READ_ERRORS),
    }
}

/// Replays `trace` through the RTL; every frame must be the model's.
fn check(trace: &Trace, dma: HostDmaConfig, p_valid: f64, p_ready: f64, seed: u64) -> RtlRun {
    let descs: Vec<Desc> = trace
        .sent
        .iter()
        .map(|s| descriptor(&trace.responder, s))
        .collect();
    let run = run_rtl(
        &trace.responder,
        &descs,
        descs.len(),
        dma,
        p_valid,
        p_ready,
        seed,
    );
    let ctx = format!("{} (replay seed {seed:#x}, {dma:?})", trace.name);
    for (i, (got, s)) in run.frames.iter().zip(&trace.sent).enumerate() {
        if *got != s.frame {
            let at = got.iter().zip(s.frame.iter()).position(|(a, b)| a != b);
            panic!(
                "{ctx}: frame {i} ({:?}) differs (lengths {} / {}, first difference at byte {at:?})",
                s.packet,
                got.len(),
                s.frame.len()
            );
        }
    }
    assert_eq!(run.frames.len(), trace.sent.len(), "{ctx}: frame count");
    assert_eq!(run.read_errors, 0, "{ctx}");
    run
}

fn random_dma(rng: &mut ChaCha8Rng) -> HostDmaConfig {
    HostDmaConfig {
        read_latency: rng.gen_range(1..=300),
        read_bytes_per_cycle: [16, 64, 104][rng.gen_range(0..3)],
        write_bytes_per_cycle: 104,
        completion_bytes: [64, 128, 256][rng.gen_range(0..3)],
        max_outstanding_reads: [4, 16, 64][rng.gen_range(0..3)],
        reorder: rng.gen_bool(0.7),
        seed: rng.gen(),
    }
}

/// Counts of the response kinds in a trace: (ACKs, NAKs incl. RNR,
/// atomic ACKs, READ response packets).
fn kinds(sent: &[SentResponse]) -> [usize; 4] {
    let mut k = [0; 4];
    for s in sent {
        let i = match s.packet.opcode {
            op::ACKNOWLEDGE if s.packet.aeth.is_some_and(|a| a.0 >> 5 == 0) => 0,
            op::ACKNOWLEDGE => 1,
            op::ATOMIC_ACKNOWLEDGE => 2,
            _ => 3,
        };
        k[i] += 1;
    }
    k
}

#[test]
fn frames_match_the_model_responder_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7e5_0001);
    let mut total = [0; 4];
    let mut frames = 0;
    let cases: [(Workload, u64, u32, bool, f64, u64); 8] = [
        (Workload::Mix, 3000, 256, false, 0.04, 4096),
        (Workload::Mix, 20_000, 1024, true, 0.03, 8192),
        (Workload::Read, 70_000, 4096, false, 0.03, 65536),
        (Workload::Read, MIB, 2048, true, 0.005, 2 << 20),
        (Workload::Read, 0, 512, false, 0.05, 4096),
        (Workload::Atomic, 8, 1024, true, 0.05, 4096),
        (Workload::Write, 9000, 512, false, 0.04, 4096),
        (Workload::Send, 600, 256, true, 0.04, 4096),
    ];
    for (k, (workload, size, mtu, ipv6, loss, page_size)) in cases.into_iter().enumerate() {
        let config = ScenarioConfig {
            workload,
            size,
            count: if size >= MIB { 2 } else { 8 },
            qps: if size >= MIB { 1 } else { 3 },
            mtu,
            ipv6,
            page_size,
            faults: lossy(loss),
            seed: 0x7e5 + k as u64,
            ..ScenarioConfig::default()
        };
        let trace = record(&config);
        let n = kinds(&trace.sent);
        let dma = random_dma(&mut rng);
        let (p_valid, p_ready) = ([1.0, 0.6][k % 2], [1.0, 0.8, 0.4][k % 3]);
        let run = check(&trace, dma, p_valid, p_ready, rng.gen());
        eprintln!(
            "{}: {} frames equal ({} ACKs, {} NAKs, {} atomic ACKs, {} READ responses) in {} cycles",
            trace.name,
            run.frames.len(),
            n[0],
            n[1],
            n[2],
            n[3],
            run.cycles
        );
        frames += run.frames.len();
        for i in 0..4 {
            total[i] += n[i];
        }
    }
    eprintln!("{frames} frames equal; kinds {total:?}");
    assert!(total.iter().all(|&n| n > 0), "{total:?}");
}

/// 1 MiB READs at MTU 4096 over IPv4 from 2 MiB pages, no loss, the
/// default host (200-cycle reads), descriptors and output always ready:
/// READ response frame beats per cycle from the first beat to the last.
#[test]
fn read_responses_stream_near_one_beat_per_cycle() {
    let config = ScenarioConfig {
        workload: Workload::Read,
        size: MIB,
        count: 2,
        qps: 1,
        mtu: 4096,
        page_size: 2 << 20,
        seed: 0x7e5_0100,
        ..ScenarioConfig::default()
    };
    let trace = record(&config);
    assert_eq!(kinds(&trace.sent)[3], 512);
    let run = check(&trace, HostDmaConfig::default(), 1.0, 1.0, 1);
    let rate = run.beats as f64 / run.span as f64;
    eprintln!(
        "READ responses, MTU 4096, read latency 200: {} beats in {} cycles = {rate:.3} beats/cycle",
        run.beats, run.span
    );
    assert!(rate >= 0.9, "{rate}");
}

/// Small WRITEs over 4 QPs: a trace of ACKs only; ACK frames per cycle
/// with descriptors and output always ready, over IPv4 (one beat a frame)
/// and IPv6 (two beats, held in the TX builder until its UDP checksum is
/// summed).
#[test]
fn ack_frames_per_cycle() {
    for (ipv6, floor) in [(false, 0.9), (true, 0.1)] {
        let config = ScenarioConfig {
            workload: Workload::Write,
            size: 64,
            count: 64,
            qps: 4,
            mtu: 1024,
            ipv6,
            seed: 0x7e5_0200,
            ..ScenarioConfig::default()
        };
        let trace = record(&config);
        let n = kinds(&trace.sent);
        assert_eq!(n[0], trace.sent.len());
        let run = check(&trace, HostDmaConfig::default(), 1.0, 1.0, 2);
        let rate = run.frames.len() as f64 / run.span as f64;
        eprintln!(
            "ipv6 {ipv6}: {} ACK frames ({} beats) in {} cycles = {rate:.3} frames/cycle",
            run.frames.len(),
            run.beats,
            run.span
        );
        assert!(run.frames.len() > 50 && rate >= floor, "{rate}");
    }
}

/// The READ source MR invalidated after the READs executed (the model
/// sent their data; the RTL reads at transmit time): every READ response
/// packet with payload is dropped and counted, all else goes as the model
/// sent it. IPv6, so the dropped frames take no IPv4 identification.
#[test]
fn read_responses_whose_mr_went_away_are_not_sent() {
    let config = ScenarioConfig {
        workload: Workload::Mix,
        size: 5000,
        count: 12,
        qps: 3,
        mtu: 1024,
        ipv6: true,
        faults: lossy(0.02),
        seed: 0x7e5_0300,
        ..ScenarioConfig::default()
    };
    let mut trace = record(&config);
    let r = &mut trace.responder;
    let pd = r.qps.values().next().expect("a QP").pd;
    let mut rkeys: Vec<u32> = trace
        .sent
        .iter()
        .filter_map(|s| s.packet.read.filter(|p| p.len > 0).map(|p| p.rkey))
        .collect();
    rkeys.dedup();
    assert!(!rkeys.is_empty());
    for &rkey in &rkeys {
        if r.mrs.entry(rkey).is_some() {
            let _ = r.mrs.invalidate(rkey, pd);
        }
    }
    // The model's check at transmit time decides which packets go.
    let fails = |s: &SentResponse| {
        s.packet.read.is_some_and(|p| {
            p.len > 0
                && r.mrs
                    .translate_remote(p.rkey, pd, p.va, p.len.into(), Access::REMOTE_READ)
                    .is_err()
        })
    };
    let dropped = trace.sent.iter().filter(|s| fails(s)).count();
    let want: Vec<&Vec<u8>> = trace
        .sent
        .iter()
        .filter(|s| !fails(s))
        .map(|s| &s.frame)
        .collect();
    let descs: Vec<Desc> = trace.sent.iter().map(|s| descriptor(r, s)).collect();
    let run = run_rtl(r, &descs, want.len(), HostDmaConfig::default(), 1.0, 0.7, 3);
    assert!(dropped > 0);
    assert_eq!(run.frames.len(), want.len());
    assert!(run.frames.iter().zip(&want).all(|(a, b)| a == *b));
    assert_eq!(run.read_errors, dropped as u64);
    eprintln!(
        "{dropped} READ response packets dropped and counted, {} other frames equal",
        want.len()
    );
}
