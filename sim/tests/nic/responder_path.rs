//! The Verilated `ResponderPath` against a shadow model NIC.
//!
//! Two model NICs exchange one-way SEND / WRITE traffic (with and without
//! immediate; loss, duplication and reordering; receive WQEs posted late,
//! so RNR NAKs happen; IPv4 and IPv6; MTU 256..4096): NIC 1 only
//! responds. Every frame NIC 1 received is recorded in order. The RTL is
//! configured as NIC 1 was (QP contexts through `qp_host`, `OP_CONFIGURE`
//! through `queue_host`, the address RAM from `Nic::qp_tx_attrs`, the MR
//! table, the early receive WQEs) and a shadow NIC is built with the same
//! verbs. The RTL gets the frames (random gaps) with random backpressure
//! on its frame output, outcome, CQE and DMA write ports and DMA reads
//! served with latency; the shadow gets each frame (`Endpoint::receive`) in
//! the cycle the RTL's outcome for it is accepted, the late receive WQEs
//! at the same point of the frame stream as the recorded NIC got them, and
//! is asked `transmit_from(now, Response, q)` whenever the RTL's
//! transmitter accepts a descriptor of QP q (`desc_fire`). Checked: the
//! RTL's response frames equal the shadow's answers byte for byte, in
//! order (IPv4 identification included); the host memory the RTL's DMA
//! writes leave equals the shadow's, with no stray write; the receive CQEs
//! equal the shadow's, per QP in order; no push waits for a full response
//! queue (SEND / WRITE traffic), no
//! READ or TX builder error.

use crate::rtl_common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{Endpoint, Fabric, FaultConfig, LinkConfig, SwitchConfig, Time};
use rocenic_hdl::codes::mtu;
use rocenic_hdl::qp::qp_context_record::QpContextRecord;
use rocenic_hdl::responder::response_queue::OP_CONFIGURE;
use rocenic_model::mr::DEFAULT_MAX_MRS;
use rocenic_model::nic::{Nic, TxClass};
use rocenic_model::verbs::{Access, Cqe, QpState, Qpn, WcOpcode, WcStatus};
use rocenic_rtl::host_dma::{HostDma, HostDmaConfig};
use rocenic_rtl::mr_config::load_mr_table;
use rocenic_rtl::stream::{
    bytes_to_words, words_to_bytes, AxisInPorts, AxisOutPorts, StreamSink, StreamSource, BEAT_WORDS,
};
use rocenic_wire::{op, RoceFrame};
use rtl_common::responder::{
    model_cqe, post_recvs, queue_command, read_cqe, write_address, write_context, RtlCqe,
};
use rtl_common::traffic::{ResponderPair, LATE_RECVS_AT};
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{ResponderPath as Dut, Sim};

/// NIC 1 on the fabric, every frame it receives logged.
struct Recorded {
    nic: Nic,
    received: Vec<Vec<u8>>,
}

impl Endpoint for Recorded {
    fn mac(&self) -> [u8; 6] {
        self.nic.mac()
    }
    fn receive(&mut self, now: Time, frame: Vec<u8>) {
        self.received.push(frame.clone());
        self.nic.receive(now, frame);
    }
    fn transmit(&mut self, now: Time) -> Option<Vec<u8>> {
        self.nic.transmit(now)
    }
    fn next_deadline(&self) -> Option<Time> {
        self.nic.next_deadline()
    }
    fn advance(&mut self, now: Time) {
        self.nic.advance(now);
    }
}

/// What the responder NIC received: the frames in order, and how many
/// came before the late receive WQEs were posted.
struct Recording {
    frames: Vec<Vec<u8>>,
    before_late: usize,
    /// NIC 1's response frames on the wire (for the counts).
    sent_by_responder: u64,
}

fn record(
    seed: u64,
    mtu: u32,
    ipv6: bool,
    faults: FaultConfig,
    qps: usize,
    msgs: usize,
) -> Recording {
    let pair = ResponderPair::new(seed, mtu, ipv6, qps, msgs);
    let link = LinkConfig {
        faults,
        ..LinkConfig::default()
    };
    let mut fabric = Fabric::new(seed, SwitchConfig::default());
    let [a, b] = pair.nics;
    let ids = [
        fabric.add_node(
            Recorded {
                nic: a,
                received: Vec::new(),
            },
            link.clone(),
        ),
        fabric.add_node(
            Recorded {
                nic: b,
                received: Vec::new(),
            },
            link,
        ),
    ];
    fabric.run_until(LATE_RECVS_AT);
    let before_late = fabric.node(ids[1]).received.len();
    for (qpn, wr) in pair.late_recvs {
        fabric.node_mut(ids[1]).nic.post_recv(qpn, wr).unwrap();
    }
    // Until every send completed (all are signaled), then 1 ms more.
    let want = pair.sends;
    let mut done = 0;
    let limit = 2_000_000_000;
    while done < want && fabric.now() < limit {
        let (id, cq) = (ids[0], pair.cqs[0]);
        fabric.run_while(limit, |f| f.node(id).nic.cq_len(cq) == 0);
        done += fabric
            .node_mut(ids[0])
            .nic
            .poll_cq(pair.cqs[0], usize::MAX)
            .iter()
            .filter(|c| c.opcode != WcOpcode::Recv)
            .count();
    }
    assert_eq!(done, want, "seed {seed}: every send completed");
    fabric.run_until(fabric.now() + 1_000_000);
    let b = fabric.node_mut(ids[1]);
    Recording {
        frames: std::mem::take(&mut b.received),
        before_late,
        sent_by_responder: b.nic.counters().tx_frames,
    }
}

/// The block out of reset, both MR tables swept.
fn fresh() -> Sim<Dut> {
    let mut sim = Sim::<Dut>::new().expect("responder_path is exported");
    sim.set_bit(Dut::RESET, true);
    sim.tick();
    sim.set_bit(Dut::RESET, false);
    for _ in 0..=DEFAULT_MAX_MRS + 20 {
        sim.eval();
        if sim.get_bit(Dut::CFG_READY) {
            return sim;
        }
        sim.tick();
    }
    panic!("MR table sweeps did not finish");
}

/// The RTL configured as `shadow` (built by the same verbs as the
/// recorded NIC): MRs, QP contexts, response queues, addresses, early
/// receive WQEs.
fn configure(sim: &mut Sim<Dut>, shadow: &Nic, pair: &ResponderPair) {
    let mrs = shadow.mr_table();
    let used = mrs.mtt().iter().rposition(|&a| a != 0).map_or(0, |i| i + 1);
    load_mr_table(sim, mrs, 64, used).expect("the MR port fans out");
    let access = Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC;
    for q in &pair.qps {
        let record = QpContextRecord {
            state: 3,
            access: u32::from(access.0 & 0xF),
            path_mtu: mtu::iba_code(q.mtu).expect("MTU"),
            pkey: 0xFFFF,
            pd: q.pd.0,
            rq_epsn: q.epsn,
            max_dest_rd_atomic: 16,
            min_rnr_timer: 1,
            ..QpContextRecord::default()
        };
        write_context(sim, q.qpn, &record);
        let code = u64::from(mtu::shift_code(q.mtu).expect("MTU"));
        queue_command(sim, OP_CONFIGURE, q.qpn, code);
        let attrs = shadow.qp_tx_attrs(q.qpn).expect("a connected QP");
        let c = shadow.config();
        write_address(sim, q.qpn, &attrs, c.mac, c.dscp, c.ecn);
    }
    post_recvs(sim, &pair.early_recvs);
}

/// The run's totals.
#[derive(Debug, Default)]
struct Totals {
    frames_in: usize,
    frames_out: usize,
    /// Response frames by kind: ACK, sequence NAK, RNR NAK, other NAK.
    kinds: [usize; 4],
    dma_bytes: u64,
    cqes: usize,
    cycles: u64,
}

/// Checks one recorded run through the RTL against a shadow.
#[allow(clippy::too_many_arguments)]
fn check(
    seed: u64,
    mtu: u32,
    ipv6: bool,
    loss: f64,
    qps: usize,
    msgs: usize,
    p: (f64, f64, f64),
    totals: &mut Totals,
) {
    let what = format!("seed {seed}, MTU {mtu}, IPv6 {ipv6}, loss {loss}");
    let faults = FaultConfig::lossy(loss, 4_000);
    let rec = record(seed, mtu, ipv6, faults, qps, msgs);
    let pair = ResponderPair::new(seed, mtu, ipv6, qps, msgs);
    let mut shadow = ResponderPair::new(seed, mtu, ipv6, qps, msgs)
        .nics
        .into_iter()
        .nth(1)
        .unwrap();
    let cq = pair.cqs[1];
    let image = shadow.memory().clone();

    let mut sim = fresh();
    configure(&mut sim, &shadow, &pair);
    let (p_in, p_out, p_host) = p;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9a7);
    let dma = HostDmaConfig {
        read_latency: rng.gen_range(1..=200),
        seed: rng.gen(),
        ..HostDmaConfig::default()
    };
    let mut host = HostDma::new(dma, image);
    let rx = AxisInPorts::<Dut>::named("rx").expect("rx ports");
    let out = AxisOutPorts::<Dut>::named("frame", &[]).expect("frame ports");
    let mut src = StreamSource::new(p_in, seed);
    let mut sink = StreamSink::new("frame", p_out, seed ^ 0x5EED);

    // Phase 0 feeds the frames before the late receive WQEs; once their
    // outcomes are in, the WQEs go to both, then phase 1.
    let mut fed = 0;
    let mut phase_end = rec.before_late;
    let mut late_posted = false;
    let mut accepted = 0usize;
    // Frames handed to the shadow (the one after `accepted` may be early).
    let mut with_shadow = 0usize;
    let mut expected: VecDeque<Vec<u8>> = VecDeque::new();
    let mut compared = 0usize;
    let mut cqes: Vec<RtlCqe> = Vec::new();
    let mut request: Option<(u64, u64, u64)> = None;
    let mut quiet = 0u64;
    let start = sim.cycle();
    let limit = 400_000
        + 300
            * rec
                .frames
                .iter()
                .map(|f| f.len() as u64 / 64 + 1)
                .sum::<u64>();
    loop {
        let cycle = sim.cycle() - start;
        assert!(
            cycle < limit,
            "{what}: stuck at cycle {cycle}: {accepted} of {} outcomes, {compared} frames out",
            rec.frames.len()
        );
        if accepted == rec.frames.len() && src.is_idle() && expected.is_empty() && quiet > 400 {
            break;
        }
        if fed < phase_end {
            for f in &rec.frames[fed..phase_end] {
                assert!(src.push_frame(f), "{what}: frame fits the stream");
            }
            fed = phase_end;
        }
        if !late_posted
            && accepted == rec.before_late
            && src.is_idle()
            && expected.is_empty()
            && quiet > 100
        {
            // Nothing moves while the posts take the receive queue.
            for port in [
                Dut::OUT_READY,
                Dut::CQE_READY,
                Dut::DMAW_READY,
                Dut::DMA_REQ_READY,
                Dut::DMA_RD_VALID,
            ] {
                sim.set_bit(port, false);
            }
            out.set_ready(sim.dut_mut(), false);
            // A WQE posted to a QP in ERR is the driver's to complete
            // (WR_FLUSH_ERR, as the model does at once); the rest go to
            // the RTL's receive queue.
            let mut to_rtl = Vec::new();
            for (qpn, wr) in &pair.late_recvs {
                if matches!(shadow.qp_state(*qpn), Ok(QpState::Err)) {
                    cqes.push(model_cqe(&Cqe {
                        wr_id: wr.wr_id,
                        status: WcStatus::WrFlushErr,
                        opcode: WcOpcode::Recv,
                        qpn: *qpn,
                        byte_len: 0,
                        imm: None,
                        invalidated_rkey: None,
                    }));
                } else {
                    to_rtl.push((*qpn, wr.clone()));
                }
                shadow.post_recv(*qpn, wr.clone()).unwrap();
            }
            post_recvs(&mut sim, &to_rtl);
            late_posted = true;
            phase_end = rec.frames.len();
            continue;
        }
        let now = (sim.cycle() - start) * 4;
        src.begin_cycle();
        sink.begin_cycle();
        rx.drive(sim.dut_mut(), src.current());
        out.set_ready(sim.dut_mut(), sink.ready());
        // Outcomes are taken as they come: that is the scoreboard's commit
        // point (see the block's doc).
        let out_ready = true;
        sim.set_bit(Dut::OUT_READY, out_ready);
        let cqe_ready = rng.gen_bool(p_host);
        sim.set_bit(Dut::CQE_READY, cqe_ready);
        let dmaw_ready = host.write_ready() && rng.gen_bool(p_host);
        sim.set_bit(Dut::DMAW_READY, dmaw_ready);
        let req_ready = host.read_request_ready();
        sim.set_bit(Dut::DMA_REQ_READY, req_ready);
        let beat = host.offered().cloned();
        sim.set_bit(Dut::DMA_RD_VALID, beat.is_some());
        if let Some(b) = &beat {
            sim.set_u64(Dut::DMA_RD_TAG, b.tag.into());
            sim.set(Dut::DMA_RD_DATA, &bytes_to_words(&b.data));
            sim.set_bit(Dut::DMA_RD_LAST, b.last);
        }
        sim.eval();
        let rx_ready = rx.ready(sim.dut());
        quiet += 1;

        if sim.get_bit(Dut::OUT_VALID) && out_ready {
            quiet = 0;
            let f = &rec.frames[accepted];
            let d = RoceFrame::decode(f).expect("a valid frame");
            assert_eq!(
                (sim.get_u64(Dut::OUT_QPN), sim.get_u64(Dut::OUT_PSN)),
                (u64::from(d.bth.dest_qp), u64::from(d.bth.psn)),
                "{what}: outcome {accepted} is of its frame"
            );
            if with_shadow == accepted {
                shadow.receive(now, f.clone());
                with_shadow += 1;
            }
            accepted += 1;
        }
        // The queue starts to hold a frame's effects with its first
        // command: the shadow gets the frame then (the block's doc, "The
        // commit point").
        if sim.get_bit(Dut::QUEUE_FIRE) && with_shadow == accepted {
            shadow.receive(now, rec.frames[accepted].clone());
            with_shadow += 1;
        }
        if sim.get_bit(Dut::DESC_FIRE) {
            quiet = 0;
            let qpn = sim.get_u64(Dut::DESC_QPN) as Qpn;
            let frame = shadow
                .transmit_from(now, TxClass::Response, qpn)
                .unwrap_or_else(|| panic!("{what}: cycle {cycle}: QP {qpn} owes no response"));
            expected.push_back(frame);
        }
        if sim.get_bit(Dut::CQE_VALID) && cqe_ready {
            quiet = 0;
            cqes.push(read_cqe(&sim));
        }
        if sim.get_bit(Dut::DMAW_VALID) && dmaw_ready {
            quiet = 0;
            let mut words = [0u64; BEAT_WORDS];
            sim.get_into(Dut::DMAW_DATA, &mut words);
            let bytes = words_to_bytes(&words);
            let keep = sim.get_u64(Dut::DMAW_KEEP);
            let addr = sim.get_u64(Dut::DMAW_ADDR);
            assert!(
                keep != 0 && addr.is_multiple_of(64),
                "{what}: DMA beat framing"
            );
            let lo = keep.trailing_zeros() as u64;
            let hi = 64 - u64::from(keep.leading_zeros());
            if sim.get_bit(Dut::DMAW_FIRST) {
                assert!(request.is_none(), "{what}: first inside a request");
                request = Some((
                    sim.get_u64(Dut::DMAW_REQ_ADDR),
                    sim.get_u64(Dut::DMAW_REQ_LEN),
                    0,
                ));
            }
            let (at, len, seen) = request.expect("a beat inside a request");
            assert_eq!(addr + lo, at + seen, "{what}: bytes in address order");
            let seen = seen + hi - lo;
            request = Some((at, len, seen));
            if sim.get_bit(Dut::DMAW_LAST) {
                assert_eq!(seen, len, "{what}: request length delivered");
                request = None;
            }
            host.write(addr + lo, &bytes[lo as usize..hi as usize])
                .expect("host write");
            totals.dma_bytes += hi - lo;
        }
        if req_ready && sim.get_bit(Dut::DMA_REQ_VALID) {
            host.read_request(
                sim.get_u64(Dut::DMA_REQ_TAG) as u16,
                sim.get_u64(Dut::DMA_REQ_ADDR),
                sim.get_u64(Dut::DMA_REQ_LEN),
            )
            .unwrap_or_else(|e| panic!("{what}: DMA read refused: {e}"));
        }
        let taken = beat.is_some() && sim.get_bit(Dut::DMA_RD_READY);
        out.observe(sim.dut(), &mut sink, cycle)
            .unwrap_or_else(|v| panic!("{what}: {v}"));
        for got in sink.take_frames() {
            quiet = 0;
            let want = expected
                .pop_front()
                .unwrap_or_else(|| panic!("{what}: a frame without a descriptor"));
            if got.bytes != want {
                let at = got.bytes.iter().zip(&want).position(|(a, b)| a != b);
                panic!(
                    "{what}: response frame {compared} differs from the shadow's (lengths {} / {}, first difference at byte {at:?})",
                    got.bytes.len(),
                    want.len()
                );
            }
            let d = RoceFrame::decode(&want).expect("a response frame");
            let kind = match d.ext.aeth.map(|a| a.syndrome) {
                Some(s) if s >> 5 == 0 => 0,
                Some(0x60) => 1,
                Some(s) if s >> 5 == 1 => 2,
                _ => 3,
            };
            assert_eq!(
                d.bth.opcode,
                op::ACKNOWLEDGE,
                "{what}: SEND / WRITE responses only"
            );
            totals.kinds[kind] += 1;
            compared += 1;
        }
        host.clock(taken);
        sim.tick();
        src.end_cycle(cycle, rx_ready);
    }
    assert!(request.is_none(), "{what}: a DMA write left open");
    // The shadow owes nothing more.
    for q in &pair.qps {
        assert_eq!(
            shadow.transmit_from(u64::MAX / 2, TxClass::Response, q.qpn),
            None,
            "{what}: QP {} has responses the RTL did not send",
            q.qpn
        );
    }
    // SEND / WRITE: ACKs merge and one NAK is outstanding, no push waits.
    assert_eq!(sim.get_u64(Dut::QUEUE_FULL_WAITS), 0, "{what}");
    assert_eq!(sim.get_u64(Dut::READ_ERRORS), 0, "{what}");
    assert_eq!(sim.get_u64(Dut::PAYLOAD_LAST_ERRORS), 0, "{what}");
    assert!(
        host.memory() == shadow.memory(),
        "{what}: host memory differs from the shadow's"
    );
    assert_eq!(host.memory().stray_writes(), 0, "{what}: stray DMA");
    let model: Vec<RtlCqe> = shadow
        .poll_cq(cq, usize::MAX)
        .iter()
        .map(model_cqe)
        .collect();
    let mut per_qp: BTreeMap<u64, (Vec<RtlCqe>, Vec<RtlCqe>)> = BTreeMap::new();
    for c in &model {
        per_qp.entry(c.0).or_default().0.push(*c);
    }
    for c in &cqes {
        per_qp.entry(c.0).or_default().1.push(*c);
    }
    for (qpn, (want, got)) in &per_qp {
        assert_eq!(got, want, "{what}: receive CQEs of QP {qpn}");
    }
    assert_eq!(cqes.len(), model.len(), "{what}: CQE count");
    eprintln!(
        "{what}: {} frames in, {compared} response frames equal (recorded NIC sent {}), {} CQEs, {} cycles",
        rec.frames.len(),
        rec.sent_by_responder,
        cqes.len(),
        sim.cycle() - start
    );
    totals.frames_in += rec.frames.len();
    totals.frames_out += compared;
    totals.cqes += cqes.len();
    totals.cycles += sim.cycle() - start;
}

/// Seed, MTU, IPv6, loss, and the probabilities of a frame beat offered,
/// the frame output ready and the host ports ready.
type Case = (u64, u32, bool, f64, (f64, f64, f64));

#[test]
fn response_frames_memory_and_cqes_match_a_shadow_model() {
    let mut totals = Totals::default();
    let cases: [Case; 6] = [
        (1, 256, false, 0.0, (1.0, 1.0, 1.0)),
        (2, 1024, true, 0.05, (0.8, 0.7, 0.6)),
        (3, 4096, false, 0.1, (0.9, 0.5, 0.8)),
        (4, 512, false, 0.2, (0.7, 0.8, 0.5)),
        (5, 2048, true, 0.15, (1.0, 0.6, 0.7)),
        // A slow host: CQEs and DMA writes held for long.
        (6, 1024, false, 0.1, (0.9, 0.3, 0.2)),
    ];
    for (seed, mtu, ipv6, loss, p) in cases {
        check(seed, mtu, ipv6, loss, 3, 8, p, &mut totals);
    }
    eprintln!("{totals:?}");
    // Frames flowed both ways; ACKs, sequence NAKs, RNR NAKs and the bad
    // R_Key's remote access NAKs left.
    assert!(totals.frames_in > 500, "{totals:?}");
    assert!(totals.frames_out > 200, "{totals:?}");
    assert!(totals.kinds.iter().all(|&n| n > 0), "{totals:?}");
    assert!(totals.cqes > 0 && totals.dma_bytes > 0, "{totals:?}");
}
