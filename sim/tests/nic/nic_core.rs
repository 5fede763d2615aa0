//! The Verilated `NicCore`, run inside `nic_top`: what the core adds to its
//! two halves (each runs in about a second of release time; the rx copy and
//! the responder-to-requester ERR event; transmit and DMA arbitration are not
//! covered yet). The halves themselves are checked against shadow model NICs
//! in their own tests (`rtl_responder_path.rs`, the requester's harness).
//!
//! The rx copy: random valid frames of every opcode (IPv4 and IPv6, QPNs
//! inside the 1024-QP table, payloads up to 300 bytes), offered with random
//! gaps while the outcome port back-pressures at random. Every frame must
//! reach both halves whole (each half's parser counts it), the responder
//! must handle exactly the frames the model's `nic::frame_kind` calls
//! requests (the others it counts as not handled) and the requester take a
//! response header for exactly the frames it calls responses (the others
//! counted as not responses), with no parser drop on either side and one
//! responder outcome per frame. No QP is configured, so no QP moves to
//! ERR and nothing is sent: both hand-over counters stay 0, no frame and
//! no DMA request comes out.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::codes::qp_state;
use rocenic_hdl::qp::qp_context_record::QpContextRecord;
use rocenic_hdl::requester::response_placement::{
    STAT_FRAMES as REQ_FRAMES, STAT_HEADERS, STAT_NOT_RESPONSES, STAT_PARSER_DROPS,
};
use rocenic_hdl::responder::responder_datapath::{STAT_FRAMES as RSP_FRAMES, STAT_NOT_HANDLED};
use rocenic_model::nic::{frame_kind, FrameKind};
use rocenic_rtl::gen::frame_with;
use rocenic_rtl::stream::{AxisInPorts, StreamSource};
use rocenic_wire::opcode::OPCODES;
use verilator_sys::{Block, Input, NicTop as Dut, Sim};

fn stat(sim: &mut Sim<Dut>, select: u64) -> (u64, u64) {
    sim.set_u64(Dut::STAT_SELECT, select);
    sim.eval();
    (
        sim.get_u64(Dut::RSP_STAT_COUNT),
        sim.get_u64(Dut::REQ_STAT_COUNT),
    )
}

#[test]
fn every_frame_reaches_both_halves_and_each_takes_its_own() {
    for seed in [1u64, 2] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut sim = Sim::<Dut>::new().expect("sim");
        sim.set_bit(Dut::RESET, true);
        sim.tick();
        sim.set_bit(Dut::RESET, false);
        sim.set_bit(Dut::FRAME_TREADY, true);
        sim.set_bit(Dut::SCQE_READY, true);
        sim.set_bit(Dut::RCQE_READY, true);
        sim.set_bit(Dut::DMAW_READY, true);
        sim.set_bit(Dut::DMA_REQ_READY, true);
        let mut waited = 0;
        loop {
            sim.eval();
            if sim.get_bit(Dut::CFG_READY) {
                break;
            }
            sim.tick();
            waited += 1;
            assert!(waited < 5000, "seed {seed}: MR tables never swept");
        }

        let rx = AxisInPorts::<Dut>::named("rx").expect("rx ports");
        let mut src = StreamSource::new(0.7, seed);
        let (mut requests, mut responses, mut frames) = (0u64, 0u64, 0u64);
        for _ in 0..400 {
            let index = rng.gen_range(0..OPCODES.len());
            let mut frame = frame_with(index, rng.gen(), rng.gen_range(0..300), rng.gen());
            frame.bth.dest_qp = rng.gen_range(0..1024);
            let Ok(bytes) = frame.encode() else { continue };
            if !src.push_frame(&bytes) {
                continue;
            }
            frames += 1;
            match frame_kind(frame.bth.opcode) {
                FrameKind::Request => requests += 1,
                FrameKind::Response => responses += 1,
                _ => {}
            }
        }
        assert!(
            requests > 50 && responses > 20,
            "seed {seed}: {requests} {responses}"
        );

        let (mut outcomes, mut rsp_fires, mut quiet) = (0u64, 0u64, 0u64);
        while quiet < 400 {
            quiet += 1;
            src.begin_cycle();
            rx.drive(sim.dut_mut(), src.current());
            let out_ready = rng.gen_bool(0.6);
            sim.set_bit(Dut::OUT_READY, out_ready);
            sim.eval();
            assert!(
                !sim.get_bit(Dut::FRAME_TVALID),
                "seed {seed}: no frame to send"
            );
            assert!(!sim.get_bit(Dut::DMA_REQ_VALID), "seed {seed}: no DMA read");
            assert!(!sim.get_bit(Dut::DMAW_VALID), "seed {seed}: no DMA write");
            if sim.get_bit(Dut::OUT_VALID) && out_ready {
                outcomes += 1;
                quiet = 0;
            }
            if sim.get_bit(Dut::RSP_FIRE) {
                rsp_fires += 1;
                quiet = 0;
            }
            let ready = rx.ready(sim.dut());
            if src.current().is_some() {
                quiet = 0;
            }
            src.end_cycle(sim.cycle(), ready);
            sim.tick();
            assert!(sim.cycle() < 2_000_000, "seed {seed}: stuck");
        }
        assert!(src.is_idle(), "seed {seed}: rx stalled");
        assert_eq!(
            stat(&mut sim, RSP_FRAMES).0,
            frames,
            "seed {seed}: responder frames"
        );
        assert_eq!(
            stat(&mut sim, STAT_NOT_HANDLED).0,
            frames - requests,
            "seed {seed}: responder takes only requests"
        );
        assert_eq!(outcomes, frames, "seed {seed}: one outcome per frame");
        assert_eq!(
            stat(&mut sim, REQ_FRAMES).1,
            frames,
            "seed {seed}: requester frames"
        );
        assert_eq!(stat(&mut sim, STAT_PARSER_DROPS).1, 0, "seed {seed}");
        assert_eq!(
            stat(&mut sim, STAT_NOT_RESPONSES).1,
            frames - responses,
            "seed {seed}: requester takes only responses"
        );
        assert_eq!(stat(&mut sim, STAT_HEADERS).1, responses, "seed {seed}");
        assert_eq!(
            rsp_fires, responses,
            "seed {seed}: every header to the event loop"
        );
        assert_eq!(sim.get_u64(Dut::TO_ERR_FROM_RESPONDER), 0, "seed {seed}");
        assert_eq!(sim.get_u64(Dut::TO_ERR_FROM_REQUESTER), 0, "seed {seed}");
        eprintln!(
            "seed {seed}: {frames} frames ({requests} requests, {responses} responses) through both halves in {} cycles",
            sim.cycle()
        );
    }
}

/// Writes `record` to QP `qpn`'s context through `<prefix>_qp_host_*`
/// (all fields) and returns the record it replaced.
fn write_context(sim: &mut Sim<Dut>, prefix: &str, qpn: u64, record: &QpContextRecord) -> Vec<u64> {
    let port = |n: &str| Dut::input(&format!("{prefix}_qp_host_{n}")).expect("context port");
    let done = Dut::output(&format!("{prefix}_qp_host_done")).expect("done");
    let old = Dut::output(&format!("{prefix}_qp_host_old")).expect("old");
    let mut mask = [u64::MAX; 5];
    mask[4] = u64::from(u32::MAX);
    sim.set_bit(port("valid"), true);
    sim.set_u64(port("qpn"), qpn);
    sim.set(port("mask"), &mask);
    sim.set(port("data"), &record.pack().expect("record fits"));
    for _ in 0..100 {
        sim.eval();
        if sim.get_bit(done) {
            let was = sim.get(old);
            sim.tick();
            sim.set_bit(port("valid"), false);
            sim.tick();
            return was;
        }
        sim.tick();
    }
    panic!("{prefix} context write never done");
}

/// A responder refusal moving QP q to ERR reaches the requester side: a
/// RDMA WRITE ONLY in sequence to a QP without the remote-write right is
/// refused (NAK remote access, QP to ERR: the model's `check_request`
/// outcome `to_error`, then `move_to_error`), and the requester's event
/// loop then takes `EV_TO_ERROR` for q, writing its own context's state to
/// ERR; the requester contexts of the other QPs are untouched.
#[test]
fn a_responder_refusal_moves_the_requester_side_to_err() {
    use rocenic_hdl::codes::request_verdict;
    use rocenic_hdl::requester::completer_datapath::EV_TO_ERROR;
    use rocenic_wire::op;
    for seed in [3u64, 4, 5] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut sim = Sim::<Dut>::new().expect("sim");
        sim.set_bit(Dut::RESET, true);
        sim.tick();
        sim.set_bit(Dut::RESET, false);
        sim.set_bit(Dut::FRAME_TREADY, true);
        sim.set_bit(Dut::SCQE_READY, true);
        sim.set_bit(Dut::RCQE_READY, true);
        sim.set_bit(Dut::DMAW_READY, true);
        sim.set_bit(Dut::DMA_REQ_READY, true);
        sim.set_bit(Dut::OUT_READY, true);
        for _ in 0..5000 {
            sim.eval();
            if sim.get_bit(Dut::CFG_READY) {
                break;
            }
            sim.tick();
        }
        let q: u64 = rng.gen_range(0..1024);
        let other = (q + 1) % 1024;
        let epsn: u32 = rng.gen_range(0..1 << 24);
        let responder = QpContextRecord {
            state: qp_state::RTR,
            access: 0,
            path_mtu: 5,
            rq_epsn: epsn,
            ..QpContextRecord::default()
        };
        write_context(&mut sim, "rsp", q, &responder);
        let requester = QpContextRecord {
            state: qp_state::RTS,
            path_mtu: 5,
            sq_next_psn: 7,
            sq_send_psn: 7,
            sq_una_psn: 7,
            ..QpContextRecord::default()
        };
        write_context(&mut sim, "req", q, &requester);
        write_context(&mut sim, "req", other, &requester);

        let index = OPCODES
            .iter()
            .position(|o| o.code == op::WRITE_ONLY)
            .unwrap();
        let mut frame = frame_with(index, rng.gen(), 64, rng.gen());
        frame.bth.dest_qp = q as u32;
        frame.bth.psn = epsn;
        if let Some(reth) = frame.ext.reth.as_mut() {
            reth.dma_len = 64;
        }
        let rx = AxisInPorts::<Dut>::named("rx").expect("rx ports");
        let mut src = StreamSource::new(1.0, seed);
        assert!(src.push_frame(&frame.encode().expect("frame")));
        let mut verdict = None;
        let mut to_error_done = Vec::new();
        for _ in 0..3000 {
            src.begin_cycle();
            rx.drive(sim.dut_mut(), src.current());
            sim.eval();
            if sim.get_bit(Dut::OUT_VALID) {
                verdict = Some(sim.get_u64(Dut::OUT_VERDICT));
            }
            if sim.get_bit(Dut::DONE_VALID) {
                to_error_done.push((
                    sim.get_u64(Dut::DONE_KIND),
                    sim.get_u64(Dut::DONE_QPN),
                    sim.get_u64(Dut::DONE_STATE),
                ));
            }
            let ready = rx.ready(sim.dut());
            src.end_cycle(sim.cycle(), ready);
            sim.tick();
        }
        assert_eq!(
            verdict,
            Some(request_verdict::REMOTE_ACCESS),
            "seed {seed}: refused"
        );
        assert_eq!(sim.get_u64(Dut::TO_ERR_FROM_RESPONDER), 1, "seed {seed}");
        assert_eq!(
            to_error_done,
            vec![(EV_TO_ERROR, q, u64::from(qp_state::ERR))],
            "seed {seed}: one EV_TO_ERROR for q"
        );
        // Nothing came back the other way: the requester's ERR move was
        // the responder's own.
        assert_eq!(sim.get_u64(Dut::TO_ERR_FROM_REQUESTER), 0, "seed {seed}");
        let in_err = QpContextRecord {
            state: qp_state::ERR,
            ..QpContextRecord::default()
        };
        let was = write_context(&mut sim, "req", q, &in_err);
        assert_eq!(
            QpContextRecord::unpack(&was).state,
            qp_state::ERR,
            "seed {seed}: q in ERR"
        );
        let was = write_context(&mut sim, "req", other, &requester);
        assert_eq!(
            QpContextRecord::unpack(&was).state,
            qp_state::RTS,
            "seed {seed}: other untouched"
        );
        eprintln!(
            "seed {seed}: QP {q} refused at the responder, EV_TO_ERROR taken by the requester"
        );
    }
}

// ---------------------------------------------------------------------------
// The requester-to-responder ERR hand-over, against a model `Nic`.

use rocenic_fabric::{Endpoint, Time};
use rocenic_hdl::codes::{mtu, request_verdict, wc_opcode, wc_status, wqe_kind};
use rocenic_hdl::requester::completer_datapath::{EV_RESPONSE, EV_TIMER};
use rocenic_hdl::responder::response_queue::OP_CONFIGURE;
use rocenic_model::completer::{self, WqeKind};
use rocenic_model::memory::HostMemory;
use rocenic_model::mr::MrKeys;
use rocenic_model::nic::Nic;
use rocenic_model::requester::{message_psns, send_window};
use rocenic_model::responder::{check_request, CheckInput, Verdict};
use rocenic_model::verbs::{Access, Sge};
use rocenic_model::verbs::{Cqe, QpCaps, QpState, Qpn, RecvWr, SendOp, SendWr};
use rocenic_rtl::dma_ports::{DmaReadPorts, DmaWritePorts};
use rocenic_rtl::host_dma::{HostDma, HostDmaConfig};
use rocenic_rtl::host_ports;
use rocenic_rtl::mr_config::start_core;
use rocenic_rtl::qp_config::context_record;
use rocenic_rtl::requester_nic::op_fields;
use rocenic_rtl::stream::{AxisOutPorts, StreamSink};
use rocenic_sim::scenario::{connect, nic_config, ScenarioConfig};
use rocenic_wire::RoceFrame;
use std::collections::BTreeMap;

/// A receive CQE as the core gives it: `(qpn, wr_id, status, opcode,
/// byte_len)`, codes as the model's declaration indices.
type RecvCqe = (u64, u64, u64, u64, u64);

fn model_cqe(c: &Cqe) -> RecvCqe {
    (
        u64::from(c.qpn),
        c.wr_id,
        wc_status::encode(c.status),
        wc_opcode::encode(c.opcode),
        u64::from(c.byte_len),
    )
}

/// The post port's fields, in the order `post` gives them.
const POST_FIELDS: [&str; 16] = [
    "post_qpn",
    "post_kind",
    "post_opcode",
    "post_npsn",
    "post_len",
    "post_signaled",
    "post_status",
    "post_lkey",
    "post_va",
    "post_op",
    "post_remote_va",
    "post_rkey",
    "post_imm",
    "post_compare",
    "post_swap_add",
    "post_solicited",
];

/// The Verilated core with every port of these tests driven each cycle:
/// frames in (`src`) and out (`sink`), the outcome port always ready, the
/// receive CQE port ready with probability `rcqe_p`, one send post at a
/// time, and optionally the host holding the responder context port busy
/// with back-to-back reads of one QP.
struct Bench {
    sim: Sim<Dut>,
    rng: ChaCha8Rng,
    rx: AxisInPorts<Dut>,
    src: StreamSource,
    tx: AxisOutPorts<Dut>,
    sink: StreamSink,
    rcqe_p: f64,
    host_busy: Option<u64>,
    host_ops: u64,
    posts: Vec<[u64; 16]>,
    post_ports: Vec<Input<Dut>>,
    post_results: Vec<bool>,
    /// `(qpn, psn, opcode, verdict, response_valid)` per outcome.
    outcomes: Vec<(u64, u64, u64, u64, bool)>,
    /// `(kind, qpn, state)` per requester event.
    dones: Vec<(u64, u64, u64)>,
    rcqes: Vec<RecvCqe>,
    /// `(qpn, status)` per send CQE.
    scqes: Vec<(u64, u64)>,
    /// The host DMA model on both DMA ports (without it they are always
    /// ready and nothing is asked of them).
    dma: Option<DmaSide>,
}

struct DmaSide {
    host: HostDma,
    read: DmaReadPorts<Dut>,
    write: DmaWritePorts<Dut>,
    /// Read request tags in the order they were accepted.
    read_tags: Vec<u64>,
    /// Write bursts `(request address, first beat's cycle, last beat's
    /// cycle)` in order.
    bursts: Vec<(u64, u64, u64)>,
}

impl DmaSide {
    fn new(memory: HostMemory, seed: u64) -> DmaSide {
        DmaSide {
            host: HostDma::new(
                HostDmaConfig {
                    seed,
                    ..HostDmaConfig::default()
                },
                memory,
            ),
            read: DmaReadPorts::named("dma").expect("dma ports"),
            write: DmaWritePorts::named("dmaw").expect("dmaw ports"),
            read_tags: Vec::new(),
            bursts: Vec::new(),
        }
    }
}

impl Bench {
    fn step(&mut self) {
        let post_ports = &self.post_ports;
        let sim = &mut self.sim;
        self.src.begin_cycle();
        self.rx.drive(sim.dut_mut(), self.src.current());
        self.sink.begin_cycle();
        self.tx.set_ready(sim.dut_mut(), self.sink.ready());
        let rcqe_ready = self.rcqe_p >= 1.0 || self.rng.gen_bool(self.rcqe_p);
        sim.set_bit(Dut::RCQE_READY, rcqe_ready);
        sim.set_bit(Dut::RSP_QP_HOST_VALID, self.host_busy.is_some());
        if let Some(q) = self.host_busy {
            sim.set_u64(Dut::RSP_QP_HOST_QPN, q);
            sim.set(Dut::RSP_QP_HOST_MASK, &[0u64; 5]);
        }
        let mut write_ready = false;
        if let Some(d) = &self.dma {
            d.read.drive(sim, &d.host);
            write_ready = d.write.drive(sim, &d.host, true);
        }
        sim.set_bit(Dut::POST_VALID, !self.posts.is_empty());
        if let Some(post) = self.posts.first() {
            for (port, v) in post_ports.iter().zip(post) {
                sim.set_u64(*port, *v);
            }
        }
        sim.eval();
        if sim.get_bit(Dut::OUT_VALID) {
            self.outcomes.push((
                sim.get_u64(Dut::OUT_QPN),
                sim.get_u64(Dut::OUT_PSN),
                sim.get_u64(Dut::OUT_OPCODE),
                sim.get_u64(Dut::OUT_VERDICT),
                sim.get_bit(Dut::OUT_RESPONSE_VALID),
            ));
        }
        if sim.get_bit(Dut::DONE_VALID) {
            self.dones.push((
                sim.get_u64(Dut::DONE_KIND),
                sim.get_u64(Dut::DONE_QPN),
                sim.get_u64(Dut::DONE_STATE),
            ));
        }
        if sim.get_bit(Dut::RCQE_VALID) && rcqe_ready {
            self.rcqes.push((
                sim.get_u64(Dut::RCQE_QPN),
                sim.get_u64(Dut::RCQE_WR_ID),
                sim.get_u64(Dut::RCQE_STATUS),
                sim.get_u64(Dut::RCQE_OPCODE),
                sim.get_u64(Dut::RCQE_BYTE_LEN),
            ));
        }
        if sim.get_bit(Dut::SCQE_VALID) {
            self.scqes
                .push((sim.get_u64(Dut::SCQE_QPN), sim.get_u64(Dut::SCQE_STATUS)));
        }
        if self.host_busy.is_some() && sim.get_bit(Dut::RSP_QP_HOST_DONE) {
            self.host_ops += 1;
        }
        if !self.posts.is_empty() && sim.get_bit(Dut::POST_READY) {
            self.posts.remove(0);
        }
        if sim.get_bit(Dut::POST_RESULT_VALID) {
            self.post_results
                .push(sim.get_bit(Dut::POST_RESULT_ACCEPTED));
        }
        let cycle = sim.cycle();
        let mut read_taken = false;
        if let Some(d) = self.dma.as_mut() {
            if sim.get_bit(Dut::DMA_REQ_VALID) && sim.get_bit(Dut::DMA_REQ_READY) {
                d.read_tags.push(sim.get_u64(Dut::DMA_REQ_TAG));
            }
            read_taken = d.read.observe(sim, &mut d.host).expect("DMA read port");
            let first = sim.get_bit(Dut::DMAW_FIRST);
            let last = sim.get_bit(Dut::DMAW_LAST);
            let req_addr = sim.get_u64(Dut::DMAW_REQ_ADDR);
            if d.write
                .observe(sim, &mut d.host, write_ready)
                .expect("DMA write port: bursts whole and as requested")
                .is_some()
            {
                if first {
                    d.bursts.push((req_addr, cycle, u64::MAX));
                }
                if last {
                    d.bursts.last_mut().expect("a burst").2 = cycle;
                }
            }
        }
        self.tx
            .observe(sim.dut(), &mut self.sink, cycle)
            .expect("frame port keeps the AXI-Stream rules");
        let ready = self.rx.ready(sim.dut());
        self.src.end_cycle(cycle, ready);
        sim.tick();
        if let Some(d) = self.dma.as_mut() {
            d.host.clock(read_taken);
        }
    }

    /// Steps until `done` holds, at most `limit` cycles.
    fn run_until(&mut self, limit: u64, what: &str, done: impl Fn(&Bench) -> bool) {
        for _ in 0..limit {
            if done(self) {
                return;
            }
            self.step();
        }
        panic!("cycle {}: {what} never happened", self.sim.cycle());
    }
}

/// A model NIC `a` (the core's oracle) with `n` QPs connected to a model
/// peer `b` (the remote side's frames come from it), and the core
/// configured from `a`: both context halves, addresses, response queues.
/// Returns the bench, `a`, `b`, the QP pairs `(a's, b's)` and one MR on
/// each NIC.
fn setup(seed: u64, n: usize) -> (Bench, Nic, Nic, Vec<(Qpn, Qpn)>, Regions) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let config = ScenarioConfig::default();
    let mut a = Nic::new(nic_config(1, &config));
    let mut b = Nic::new(nic_config(2, &config));
    let caps = QpCaps {
        max_send_wr: 64,
        max_recv_wr: 16,
        max_sge: 1,
    };
    let (a_pd, b_pd) = (a.alloc_pd(), b.alloc_pd());
    let (a_cq, b_cq) = (a.create_cq(4096), b.create_cq(4096));
    let mut pairs = Vec::new();
    for _ in 0..n {
        let qa = a.create_qp(a_pd, a_cq, a_cq, caps).unwrap();
        let qb = b.create_qp(b_pd, b_cq, b_cq, caps).unwrap();
        connect(&mut a, qa, &mut b, qb, &config, &mut rng).unwrap();
        pairs.push((qa, qb));
    }
    let all = Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ;
    let va_a = a.memory_mut().alloc(REGION, 4096);
    let bytes: Vec<u8> = (0..REGION).map(|_| rng.gen()).collect();
    a.memory_mut().write_va(va_a, &bytes).unwrap();
    let keys_a = a.reg_mr(a_pd, va_a, REGION, all).unwrap();
    let va_b = b.memory_mut().alloc(REGION, 4096);
    let bytes: Vec<u8> = (0..REGION).map(|_| rng.gen()).collect();
    b.memory_mut().write_va(va_b, &bytes).unwrap();
    let keys_b = b.reg_mr(b_pd, va_b, REGION, all).unwrap();
    let regions = Regions {
        va_a,
        keys_a,
        va_b,
        keys_b,
    };
    let mut sim = start_core::<Dut>(a.mr_table()).expect("core out of reset");
    sim.set_u64(
        Dut::CFG_WINDOW,
        send_window(a.config().max_outstanding_psns).into(),
    );
    sim.set_u64(
        Dut::CFG_ACK_REQ_INTERVAL,
        a.config().ack_req_interval.into(),
    );
    sim.set_bit(Dut::OUT_READY, true);
    sim.set_bit(Dut::SCQE_READY, true);
    sim.set_bit(Dut::DMAW_READY, true);
    sim.set_bit(Dut::DMA_REQ_READY, true);
    let cfg = a.config().clone();
    for &(q, _) in &pairs {
        let view = a.qp_context(q).expect("QP");
        let mut record = context_record(&view);
        record.sq_next_psn = view.sq_send_psn;
        write_context(&mut sim, "rsp", u64::from(q), &record);
        write_context(&mut sim, "req", u64::from(q), &record);
        let attrs = a.qp_tx_attrs(q).expect("connected");
        host_ports::write_address(&mut sim, q, &attrs, cfg.mac, cfg.dscp, cfg.ecn)
            .expect("address");
        host_ports::queue_command(
            &mut sim,
            OP_CONFIGURE,
            q,
            u64::from(mtu::shift_code(attrs.mtu).expect("an RTL path MTU")),
        )
        .expect("queue configured");
    }
    let bench = Bench {
        sim,
        rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed),
        rx: AxisInPorts::<Dut>::named("rx").expect("rx ports"),
        src: StreamSource::new(1.0, seed),
        tx: AxisOutPorts::<Dut>::named("frame", &[]).expect("frame ports"),
        sink: StreamSink::new("frame", 1.0, seed),
        rcqe_p: 1.0,
        host_busy: None,
        host_ops: 0,
        posts: Vec::new(),
        post_ports: POST_FIELDS
            .iter()
            .map(|f| Dut::input(f).expect("post port"))
            .collect(),
        post_results: Vec::new(),
        outcomes: Vec::new(),
        dones: Vec::new(),
        rcqes: Vec::new(),
        scqes: Vec::new(),
        dma: None,
    };
    (bench, a, b, pairs, regions)
}

/// Bytes of the one MR each NIC has (all rights).
const REGION: u64 = 64 * 1024;

struct Regions {
    va_a: u64,
    keys_a: MrKeys,
    va_b: u64,
    keys_b: MrKeys,
}

/// Every frame `b` has to send now (its pacing stepped through).
fn peer_frames(b: &mut Nic, now: &mut Time) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for _ in 0..10_000 {
        *now += 1_000;
        match b.transmit(*now) {
            Some(f) => frames.push(f),
            None if b.next_deadline().is_none_or(|d| d > *now + 1_000_000) => break,
            None => {}
        }
    }
    frames
}

/// The BTH opcode of an IPv4 or IPv6 RoCEv2 frame.
fn bth_opcode(frame: &[u8]) -> u8 {
    if frame[12..14] == [0x86, 0xDD] {
        frame[14 + 40 + 8]
    } else {
        frame[14 + 20 + 8]
    }
}

/// The post port's values for a zero-length signaled SEND on `q`.
fn zero_send(q: Qpn, mtu: u32) -> [u64; 16] {
    let op = SendOp::Send;
    let (kind_op, remote_va, rkey, imm, compare, swap_add) = op_fields(&op);
    [
        u64::from(q),
        wqe_kind::encode(WqeKind::of(&op)),
        wc_opcode::encode(completer::wc_opcode(&op)),
        u64::from(message_psns(&op, 0, mtu)),
        0,
        1,
        0,
        0,
        0,
        kind_op,
        remote_va,
        u64::from(rkey),
        u64::from(imm),
        compare,
        swap_add,
        0,
    ]
}

/// A NAK invalid request for PSN `psn` of QP `q`: the requester's oldest
/// WQE fails (RemInvReqErr) and the QP goes to ERR (the model's
/// `completer::on_nak`).
fn nak_invalid_request(q: Qpn, psn: u32, seed: u64) -> Vec<u8> {
    let index = OPCODES
        .iter()
        .position(|o| o.code == rocenic_wire::op::ACKNOWLEDGE)
        .unwrap();
    let mut frame = frame_with(index, false, 0, seed);
    frame.bth.dest_qp = q;
    frame.bth.psn = psn;
    frame.ext.aeth = Some(rocenic_wire::Aeth {
        syndrome: 0x61,
        msn: 0,
    });
    frame.encode().expect("NAK frame")
}

/// What the model's `check_request` says of a SEND ONLY at the expected
/// PSN of `q` as `a` holds it: `(verdict code, response)`.
fn model_verdict(a: &Nic, q: Qpn) -> (u64, bool) {
    let v = a.qp_context(q).expect("QP");
    let o = check_request(&CheckInput {
        state: v.state,
        mtu: v.mtu,
        access: Access(v.access),
        epsn: v.rq_epsn,
        msn: v.rq_msn,
        nak_sent: false,
        max_dest_rd_atomic: v.max_dest_rd_atomic,
        min_rnr_timer: v.min_rnr_timer,
        message: Default::default(),
        rq_available: true,
        opcode: rocenic_wire::op::SEND_ONLY,
        psn: v.rq_epsn,
        ack_req: true,
        payload_len: 0,
        reth: None,
        atomic_eth: None,
    });
    let code = match o.verdict {
        Verdict::QpState => request_verdict::encode(&o.verdict),
        _ => u64::MAX,
    };
    (code, o.response.is_some())
}

struct ErrCase {
    seed: u64,
    qps: usize,
    /// QPs the requester moves to ERR (the first `fail` ones).
    fail: usize,
    /// Receive WQEs posted per QP.
    wqes: std::ops::RangeInclusive<usize>,
    /// The peer's SENDs per QP before the failure (fewer than its WQEs).
    sends: bool,
    rcqe_p: f64,
    host_busy: bool,
    /// The failures are retry exhaustion (no ACK; `retry_cnt` 0, the
    /// shortest local ACK timeout) instead of NAKs, and the receive CQE
    /// port is stalled until every failure's event has been seen.
    timeouts: bool,
}

/// Returns the most QPs that were waiting for their hand-over at once
/// (their ERR event seen, their receive flush not yet begun).
fn run_err_case(c: &ErrCase) -> usize {
    let seed = c.seed;
    let (mut bench, mut a, mut b, pairs, _) = setup(seed, c.qps);
    let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_mul(31));
    let mut now: Time = 0;

    // Receive WQEs, to the model and the core.
    let mut posted: BTreeMap<Qpn, usize> = BTreeMap::new();
    for &(q, _) in &pairs {
        let k = rng.gen_range(c.wqes.clone());
        for i in 0..k {
            let wr = RecvWr {
                wr_id: (u64::from(q) << 32) | i as u64,
                sgl: Vec::new(),
            };
            a.post_recv(q, wr.clone()).expect("model post");
            assert!(
                host_ports::post_recv(&mut bench.sim, q, &wr).expect("core post"),
                "seed {seed}: QP {q} ring full"
            );
        }
        posted.insert(q, k);
    }

    // Traffic: the peer's zero-length SENDs consume some WQEs of every QP.
    let mut peer_sends = 0;
    let mut consumed: BTreeMap<Qpn, usize> = BTreeMap::new();
    if c.sends {
        for &(q, qb) in &pairs {
            let m = rng.gen_range(0..posted[&q]);
            consumed.insert(q, m);
            for i in 0..m {
                b.post_send(
                    qb,
                    SendWr {
                        wr_id: i as u64,
                        op: SendOp::Send,
                        sgl: Vec::new(),
                        signaled: true,
                        solicited: false,
                        fence: false,
                        inline_data: None,
                    },
                )
                .expect("peer post");
            }
            peer_sends += m;
        }
        for f in peer_frames(&mut b, &mut now) {
            a.receive(now, f.clone());
            assert!(bench.src.push_frame(&f));
        }
    }

    // The requester's failures: a SEND on each failing QP, answered by a
    // NAK invalid request once it is out. The model's equivalent is its
    // completer's `move_to_error` (`modify_qp` to ERR).
    bench.rcqe_p = c.rcqe_p;
    let failing: Vec<Qpn> = pairs.iter().take(c.fail).map(|p| p.0).collect();
    if c.timeouts {
        for &q in &failing {
            let view = a.qp_context(q).expect("QP");
            let mut record = context_record(&view);
            record.sq_next_psn = view.sq_send_psn;
            record.timeout = 1;
            record.retry_cnt = 0;
            record.retry_left = 0;
            write_context(&mut bench.sim, "req", u64::from(q), &record);
        }
        bench.rcqe_p = 0.0;
    }
    for &q in &failing {
        let mtu = a.qp_tx_attrs(q).expect("attrs").mtu;
        bench.posts.push(zero_send(q, mtu));
    }
    let requests_out = |b: &Bench| {
        b.sink
            .frames()
            .iter()
            .filter(|f| frame_kind(bth_opcode(&f.bytes)) == FrameKind::Request)
            .count()
    };
    bench.run_until(
        200_000,
        "the peer's SENDs decided, the core's SENDs out",
        |b| {
            b.posts.is_empty()
                && b.src.is_idle()
                && b.outcomes.len() == peer_sends
                && requests_out(b) == failing.len()
        },
    );
    assert!(
        bench.post_results.iter().all(|&ok| ok),
        "seed {seed}: a post refused"
    );
    if c.host_busy {
        bench.host_busy = Some(u64::from(pairs[c.qps - 1].0));
    }
    for (i, &q) in failing.iter().enumerate() {
        if !c.timeouts {
            let psn = a.qp_context(q).expect("QP").sq_send_psn;
            assert!(bench
                .src
                .push_frame(&nak_invalid_request(q, psn, seed + i as u64)));
        }
        a.modify_qp(q, rocenic_model::verbs::ModifyQp::ToErr)
            .expect("model to ERR");
    }
    let mut flush_begun: std::collections::BTreeSet<u64> = Default::default();
    let mut peak = 0;
    let fail_set: std::collections::BTreeSet<u64> = failing.iter().map(|&q| u64::from(q)).collect();
    let flush_status = wc_status::WR_FLUSH_ERR;
    for _ in 0..400_000 {
        bench.step();
        for r in &bench.rcqes {
            if r.2 == flush_status {
                flush_begun.insert(r.0);
            }
        }
        let erred: std::collections::BTreeSet<u64> = bench
            .dones
            .iter()
            .filter(|d| (d.0 == EV_RESPONSE || d.0 == EV_TIMER) && d.2 == u64::from(qp_state::ERR))
            .map(|d| d.1)
            .collect();
        peak = peak.max(erred.difference(&flush_begun).count());
        if erred.len() == failing.len() {
            bench.rcqe_p = c.rcqe_p;
        }
        if bench.sim.get_u64(Dut::TO_ERR_FROM_REQUESTER) as usize == failing.len()
            && erred.len() == failing.len()
            && bench.rcqes.len()
                == pairs
                    .iter()
                    .map(|&(q, _)| {
                        if fail_set.contains(&u64::from(q)) {
                            posted[&q]
                        } else {
                            consumed.get(&q).copied().unwrap_or(0)
                        }
                    })
                    .sum::<usize>()
            && bench.src.is_idle()
        {
            break;
        }
    }
    bench.host_busy = None;
    for _ in 0..200 {
        bench.step();
    }
    assert_eq!(
        bench.sim.get_u64(Dut::TO_ERR_FROM_REQUESTER) as usize,
        failing.len(),
        "seed {seed}: one hand-over per failed QP"
    );
    assert_eq!(
        bench.sim.get_u64(Dut::TO_ERR_FROM_RESPONDER),
        0,
        "seed {seed}"
    );
    let failed_sends: Vec<u64> = bench.scqes.iter().map(|s| s.0).collect();
    let mut want: Vec<u64> = fail_set.iter().copied().collect();
    let mut got = failed_sends.clone();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "seed {seed}: one failed send CQE per failed QP");
    assert!(
        bench.scqes.iter().all(|s| s.1 != 0),
        "seed {seed}: the sends failed"
    );

    // Later requests of a failed QP are refused as the model refuses them.
    let mut after = Vec::new();
    for &(q, qb) in &pairs {
        b.post_send(
            qb,
            SendWr {
                wr_id: 999,
                op: SendOp::Send,
                sgl: Vec::new(),
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            },
        )
        .expect("peer post");
        after.push((q, model_verdict(&a, q)));
    }
    let before = bench.outcomes.len();
    let frames = peer_frames(&mut b, &mut now);
    assert_eq!(frames.len(), pairs.len(), "seed {seed}: one SEND per QP");
    for f in frames {
        a.receive(now, f.clone());
        assert!(bench.src.push_frame(&f));
    }
    bench.run_until(100_000, "the later SENDs decided", |b| {
        b.outcomes.len() == before + pairs.len() && b.src.is_idle()
    });
    for _ in 0..200 {
        bench.step();
    }
    for &(q, (verdict, response)) in &after {
        let o = bench.outcomes[before..]
            .iter()
            .find(|o| o.0 == u64::from(q))
            .expect("an outcome per QP");
        if fail_set.contains(&u64::from(q)) {
            assert_eq!(
                (o.3, o.4),
                (verdict, response),
                "seed {seed}: QP {q} in ERR refuses as the model's check_request"
            );
            assert_eq!(verdict, request_verdict::QP_STATE, "seed {seed}");
        } else {
            assert_ne!(
                o.3,
                request_verdict::QP_STATE,
                "seed {seed}: QP {q} still up"
            );
        }
    }

    // The receive CQEs, per QP in order, are the model's.
    let cq = a.qp_cqs(pairs[0].0).expect("cq").1;
    let mut model: BTreeMap<u64, Vec<RecvCqe>> = BTreeMap::new();
    for cqe in a.poll_cq(cq, 1 << 20) {
        if !matches!(cqe.opcode, rocenic_model::verbs::WcOpcode::Recv) {
            continue;
        }
        model
            .entry(u64::from(cqe.qpn))
            .or_default()
            .push(model_cqe(&cqe));
    }
    let mut core: BTreeMap<u64, Vec<RecvCqe>> = BTreeMap::new();
    for r in &bench.rcqes {
        core.entry(r.0).or_default().push(*r);
    }
    assert_eq!(core, model, "seed {seed}: receive CQEs per QP");
    for &q in &failing {
        assert_eq!(a.qp_state(q).unwrap(), QpState::Err);
        let flushed = core[&u64::from(q)]
            .iter()
            .filter(|r| r.2 == flush_status)
            .count();
        assert!(
            flushed > 0 || posted[&q] == 0,
            "seed {seed}: QP {q} flushed"
        );
    }
    // The responder context of a failed QP is in ERR.
    for &(q, _) in &pairs {
        let in_err = QpContextRecord {
            state: qp_state::ERR,
            ..QpContextRecord::default()
        };
        let was =
            QpContextRecord::unpack(&write_context(&mut bench.sim, "rsp", u64::from(q), &in_err));
        assert_eq!(
            was.state == qp_state::ERR,
            fail_set.contains(&u64::from(q)),
            "seed {seed}: QP {q}'s responder state"
        );
    }
    eprintln!(
        "seed {seed}: {} QPs, {} failed by the requester, {} receive CQEs ({} peer SENDs) as the model's, peak {peak} hand-overs waiting, host context ops {}, {} cycles",
        c.qps,
        failing.len(),
        bench.rcqes.len(),
        peer_sends,
        bench.host_ops,
        bench.sim.cycle()
    );
    peak
}

/// Requester-side failures (NAK invalid request) of some QPs while the
/// peer's SENDs consume receive WQEs: the responder side of each failed
/// QP goes to ERR (a later SEND is refused as the model's `check_request`
/// refuses it) and its remaining receive WQEs complete with WR_FLUSH_ERR
/// in posting order; the receive CQE stream equals the model's (whose QP
/// went through `move_to_error`), the other QPs keep working.
#[test]
fn a_requester_failure_moves_the_responder_to_err_and_flushes_its_receive_queue() {
    for seed in [11u64, 12] {
        run_err_case(&ErrCase {
            seed,
            qps: 6,
            fail: 3,
            wqes: 1..=8,
            sends: true,
            rcqe_p: 0.7,
            host_busy: false,
            timeouts: false,
        });
    }
}

/// 40 QPs fail at once (their retries exhausted: a dead peer) while the
/// receive CQE port is stalled (the first hand-over's flush cannot
/// finish) and the host keeps the responder context port busy: more than
/// 16 QPs wait for their hand-over at once (the old FIFO's depth), and
/// none is lost (each QP's responder side in ERR, its WQEs flushed in
/// order, the CQEs the model's).
#[test]
fn many_requester_failures_at_once_lose_none() {
    for seed in [21u64, 22] {
        let peak = run_err_case(&ErrCase {
            seed,
            qps: 40,
            fail: 40,
            wqes: 12..=16,
            sends: false,
            rcqe_p: 0.5,
            host_busy: true,
            timeouts: true,
        });
        assert!(peak > 16, "seed {seed}: only {peak} waited at once");
    }
}

/// The post port's values for `wr` on `q` (one SGE at most), as the
/// requester harness drives them.
fn post_fields(q: Qpn, wr: &SendWr, mtu: u32) -> [u64; 16] {
    let len: u64 = wr.sgl.iter().map(|s| u64::from(s.length)).sum();
    let sge = wr.sgl.first().copied().unwrap_or(Sge {
        addr: 0,
        length: 0,
        lkey: 0,
    });
    let (op, remote_va, rkey, imm, compare, swap_add) = op_fields(&wr.op);
    [
        u64::from(q),
        wqe_kind::encode(WqeKind::of(&wr.op)),
        wc_opcode::encode(completer::wc_opcode(&wr.op)),
        u64::from(message_psns(&wr.op, len, mtu)),
        len,
        u64::from(wr.signaled),
        0,
        u64::from(sge.lkey),
        sge.addr,
        op,
        remote_va,
        u64::from(rkey),
        u64::from(imm),
        compare,
        swap_add,
        u64::from(wr.solicited),
    ]
}

fn send_wr(wr_id: u64, op: SendOp, sge: Option<Sge>) -> SendWr {
    SendWr {
        wr_id,
        op,
        sgl: sge.into_iter().collect(),
        signaled: true,
        solicited: false,
        fence: false,
        inline_data: None,
    }
}

fn read_va(memory: &HostMemory, va: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0; len];
    memory.read_va(va, &mut buf).expect("mapped");
    buf
}

/// Both halves sending and using DMA at once. First the frame arbiter's
/// priority: with the MAC stalled, the core's own SENDs wait (one already
/// in the arbiter's output register slice), then the peer's zero-length
/// READs make the responder wait too; released, the first frame chosen
/// is a response although more requests wait. Then with the MAC ready at
/// random and a host of 800 ns read latency: the core's SENDs (payload
/// read by the requester, tags below 0x80) and READs (their responses
/// injected, placed by the requester's DMA writes) while the peer's READs
/// (data read by the responder, tags 0x80 and up) and WRITEs (written by
/// the responder) arrive. Every frame is whole (decodes with a good
/// ICRC); per QP the core's requests carry consecutive PSNs in posting
/// order and the SENDs the bytes of their buffers, the READ responses
/// come in the peer's order with the bytes of the range read; the read
/// requests of the two clients interleave and every write burst is whole
/// (the write port's checker) and interleaved between the clients; host
/// memory ends holding the peer's WRITE data and the injected READ data.
#[test]
fn transmit_and_dma_arbitration_between_the_halves() {
    for seed in [31u64, 32] {
        let (mut bench, a, mut b, pairs, r) = setup(seed, 4);
        let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_mul(17));
        let mut now: Time = 0;
        bench.dma = Some(DmaSide::new(a.memory().clone(), seed));
        let mtu = a.qp_tx_attrs(pairs[0].0).expect("attrs").mtu;

        // ---- priority: requests wait first, then responses
        let stall = |b: &mut Bench, cycles: u64| {
            b.sink = StreamSink::new("frame", 0.0, seed);
            for _ in 0..cycles {
                b.step();
            }
            b.sink = StreamSink::new("frame", 1.0, seed);
        };
        for &(q, _) in &pairs {
            for i in 0..2 {
                bench
                    .posts
                    .push(post_fields(q, &send_wr(i, SendOp::Send, None), mtu));
            }
        }
        stall(&mut bench, 600);
        assert!(bench.posts.is_empty(), "seed {seed}: posts taken");
        for &(_, qb) in &pairs {
            let op = SendOp::Read {
                remote_addr: r.va_a,
                rkey: r.keys_a.rkey,
            };
            let sge = Sge {
                addr: r.va_b,
                length: 0,
                lkey: r.keys_b.lkey,
            };
            b.post_send(qb, send_wr(100, op, Some(sge)))
                .expect("peer READ");
        }
        for f in peer_frames(&mut b, &mut now) {
            assert!(bench.src.push_frame(&f));
        }
        stall(&mut bench, 1500);
        bench.run_until(20_000, "the priority phase's frames", |b| {
            b.sink.frames().len() == 3 * pairs.len()
        });
        let kinds: Vec<FrameKind> = bench
            .sink
            .frames()
            .iter()
            .map(|f| frame_kind(bth_opcode(&f.bytes)))
            .collect();
        // The arbiter's output register slice holds two one-beat frames:
        // requests, chosen while only they waited.
        assert_eq!(
            &kinds[..3],
            &[FrameKind::Request, FrameKind::Request, FrameKind::Response],
            "seed {seed}: two requests in the output register, then a response ahead of the waiting requests: {kinds:?}"
        );
        assert!(
            kinds[3..].contains(&FrameKind::Request),
            "seed {seed}: requests were still waiting: {kinds:?}"
        );
        bench.sink.take_frames();

        // ---- both halves' DMA at once
        bench.sink = StreamSink::new("frame", 0.6, seed);
        let slot = 512u64;
        let mut core_ops = Vec::new(); // (q, is_read, offset into a's region, len)
        let mut peer_ops = Vec::new(); // (q, is_read, offset into a's region, len, b's offset)
        for (n, &(q, qb)) in pairs.iter().enumerate() {
            for i in 0..6u64 {
                let len = rng.gen_range(1..=256u32);
                let k = (n as u64 * 6 + i) * slot;
                if i % 2 == 0 {
                    let sge = Sge {
                        addr: r.va_a + k,
                        length: len,
                        lkey: r.keys_a.lkey,
                    };
                    bench
                        .posts
                        .push(post_fields(q, &send_wr(i, SendOp::Send, Some(sge)), mtu));
                    core_ops.push((q, false, k, len));
                } else {
                    let sge = Sge {
                        addr: r.va_a + 16 * 1024 + k,
                        length: len,
                        lkey: r.keys_a.lkey,
                    };
                    let op = SendOp::Read {
                        remote_addr: r.va_b,
                        rkey: r.keys_b.rkey,
                    };
                    bench
                        .posts
                        .push(post_fields(q, &send_wr(i, op, Some(sge)), mtu));
                    core_ops.push((q, true, 16 * 1024 + k, len));
                }
                let len = rng.gen_range(1..=256u32);
                if i % 2 == 0 {
                    let op = SendOp::Read {
                        remote_addr: r.va_a + k + 7,
                        rkey: r.keys_a.rkey,
                    };
                    let sge = Sge {
                        addr: r.va_b + k,
                        length: len,
                        lkey: r.keys_b.lkey,
                    };
                    b.post_send(qb, send_wr(i, op, Some(sge)))
                        .expect("peer READ");
                    peer_ops.push((q, true, k + 7, len, k));
                } else {
                    let op = SendOp::Write {
                        remote_addr: r.va_a + 32 * 1024 + k,
                        rkey: r.keys_a.rkey,
                    };
                    let sge = Sge {
                        addr: r.va_b + k,
                        length: len,
                        lkey: r.keys_b.lkey,
                    };
                    b.post_send(qb, send_wr(i, op, Some(sge)))
                        .expect("peer WRITE");
                    peer_ops.push((q, false, 32 * 1024 + k, len, k));
                }
            }
        }
        // The peer's frames go in a few at a time, between the answers to
        // the core's READs, so both halves write at once.
        let mut peer_pending: std::collections::VecDeque<Vec<u8>> =
            peer_frames(&mut b, &mut now).into();
        for f in peer_pending.drain(..2) {
            assert!(bench.src.push_frame(&f));
        }
        // The core's READs are answered as their requests come out.
        let mut answered = 0;
        let mut injected: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let core_reads = core_ops.iter().filter(|o| o.1).count();
        let peer_reads = peer_ops.iter().filter(|o| o.1).count();
        let core_sends = core_ops.len() - core_reads;
        let peer_writes = peer_ops.len() - peer_reads;
        let mut seen = 0;
        let mut frames: Vec<Vec<u8>> = Vec::new();
        for _ in 0..400_000 {
            bench.step();
            for f in bench.sink.take_frames() {
                frames.push(f.bytes);
            }
            while seen < frames.len() {
                let f = RoceFrame::decode(&frames[seen]).expect("a whole frame with its ICRC");
                seen += 1;
                if f.bth.opcode != rocenic_wire::op::READ_REQUEST {
                    continue;
                }
                let q = pairs.iter().find(|p| p.1 == f.bth.dest_qp).expect("a QP").0;
                let op = core_ops
                    .iter()
                    .filter(|o| o.0 == q && o.1)
                    .nth(
                        injected
                            .keys()
                            .filter(|&&k| k >> 32 == u64::from(q))
                            .count(),
                    )
                    .expect("a core READ");
                let len = op.3 as usize;
                let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                let index = OPCODES
                    .iter()
                    .position(|o| o.code == rocenic_wire::op::READ_RESPONSE_ONLY)
                    .unwrap();
                let mut rsp = frame_with(index, false, len, seed + seen as u64);
                rsp.bth.dest_qp = q;
                rsp.bth.psn = f.bth.psn;
                rsp.ext.aeth = Some(rocenic_wire::Aeth {
                    syndrome: 0x1F,
                    msn: 0,
                });
                rsp.payload = data.clone();
                assert!(bench.src.push_frame(&rsp.encode().expect("READ response")));
                injected.insert((u64::from(q) << 32) | op.2, data);
                answered += 1;
                for f in peer_pending.drain(..2.min(peer_pending.len())) {
                    assert!(bench.src.push_frame(&f));
                }
            }
            if answered == core_reads {
                for f in peer_pending.drain(..) {
                    assert!(bench.src.push_frame(&f));
                }
            }
            let d = bench.dma.as_ref().expect("dma");
            let responses = frames
                .iter()
                .filter(|f| frame_kind(bth_opcode(f)) == FrameKind::Response)
                .count();
            if answered == core_reads
                && responses >= peer_reads
                && d.bursts.len() >= core_reads + peer_writes
                && d.bursts.iter().all(|b| b.2 != u64::MAX)
                && bench.src.is_idle()
                && frames.len() >= core_sends + core_reads + peer_reads
            {
                break;
            }
        }
        for _ in 0..500 {
            bench.step();
        }
        frames.extend(bench.sink.take_frames().into_iter().map(|f| f.bytes));
        let decoded: Vec<RoceFrame> = frames
            .iter()
            .map(|f| RoceFrame::decode(f).expect("a whole frame with its ICRC"))
            .collect();
        let d = bench.dma.as_ref().expect("dma");
        let memory = d.host.memory();

        // Requests: consecutive PSNs per QP in posting order, SEND bytes.
        for &(q, qb) in &pairs {
            let ours: Vec<&RoceFrame> = decoded
                .iter()
                .filter(|f| f.bth.dest_qp == qb && frame_kind(f.bth.opcode) == FrameKind::Request)
                .collect();
            let want: Vec<_> = core_ops.iter().filter(|o| o.0 == q).collect();
            assert_eq!(ours.len(), want.len(), "seed {seed}: QP {q}'s requests");
            for (i, (f, op)) in ours.iter().zip(&want).enumerate() {
                assert_eq!(
                    f.bth.psn,
                    (ours[0].bth.psn + i as u32) & 0xFF_FFFF,
                    "seed {seed}: QP {q} request {i} in order"
                );
                if op.1 {
                    assert_eq!(f.bth.opcode, rocenic_wire::op::READ_REQUEST);
                } else {
                    assert_eq!(f.bth.opcode, rocenic_wire::op::SEND_ONLY);
                    assert_eq!(
                        f.payload,
                        read_va(memory, r.va_a + op.2, op.3 as usize),
                        "seed {seed}: QP {q} SEND {i}'s bytes (the requester's reads)"
                    );
                }
            }
            // READ responses in the peer's order with the bytes read.
            let rsps: Vec<&RoceFrame> = decoded
                .iter()
                .filter(|f| {
                    f.bth.dest_qp == qb && f.bth.opcode == rocenic_wire::op::READ_RESPONSE_ONLY
                })
                .collect();
            let want: Vec<_> = peer_ops.iter().filter(|o| o.0 == q && o.1).collect();
            assert_eq!(
                rsps.len(),
                want.len(),
                "seed {seed}: QP {q}'s READ responses"
            );
            for (i, (f, op)) in rsps.iter().zip(&want).enumerate() {
                assert_eq!(
                    f.payload,
                    read_va(memory, r.va_a + op.2, op.3 as usize),
                    "seed {seed}: QP {q} READ response {i}'s bytes (the responder's reads)"
                );
            }
            // The peer's WRITEs landed; the injected READ data landed.
            for op in peer_ops.iter().filter(|o| o.0 == q && !o.1) {
                assert_eq!(
                    read_va(memory, r.va_a + op.2, op.3 as usize),
                    read_va(b.memory(), r.va_b + op.4, op.3 as usize),
                    "seed {seed}: QP {q}'s WRITE at {:#x}",
                    op.2
                );
            }
            for op in core_ops.iter().filter(|o| o.0 == q && o.1) {
                assert_eq!(
                    read_va(memory, r.va_a + op.2, op.3 as usize),
                    injected[&((u64::from(q) << 32) | op.2)],
                    "seed {seed}: QP {q}'s READ placed at {:#x}",
                    op.2
                );
            }
        }
        // Both clients' reads interleave: a responder read between two of
        // the requester's and the other way round.
        let classes: Vec<bool> = d.read_tags.iter().map(|t| t & 0x80 != 0).collect();
        let switches = classes.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(
            classes.iter().any(|&c| c) && classes.iter().any(|&c| !c) && switches >= 2,
            "seed {seed}: read requests of both clients interleaved: {classes:?}"
        );
        // Both clients' write bursts: the requester's placements land in
        // the READ targets (16..32 KiB), the responder's in 32..48 KiB.
        let phys = |off: u64| memory.va_to_pa(r.va_a + off).expect("mapped");
        let placement = |addr: u64| {
            (0..16 * 1024u64)
                .step_by(4096)
                .any(|o| addr / 4096 == phys(16 * 1024 + o) / 4096)
        };
        let by_client: Vec<bool> = d.bursts.iter().map(|b| placement(b.0)).collect();
        let switches = by_client.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(
            by_client.iter().any(|&c| c) && by_client.iter().any(|&c| !c) && switches >= 2,
            "seed {seed}: write bursts of both clients interleaved: {by_client:?}"
        );
        eprintln!(
            "seed {seed}: {} frames whole ({} requests, {} responses), {} DMA reads ({} switches between clients), {} write bursts, in {} cycles",
            decoded.len(),
            decoded.iter().filter(|f| frame_kind(f.bth.opcode) == FrameKind::Request).count(),
            decoded.iter().filter(|f| frame_kind(f.bth.opcode) == FrameKind::Response).count(),
            d.read_tags.len(),
            classes.windows(2).filter(|w| w[0] != w[1]).count(),
            d.bursts.len(),
            bench.sim.cycle()
        );
    }
}
