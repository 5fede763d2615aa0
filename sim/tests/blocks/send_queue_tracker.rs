//! Send-queue tracker lockstep: the Verilated `SendQueueTracker` (1024 QPs
//! x 16 slots) against `rocenic_model::send_queue::Ring`, whose operations
//! are the ones the model's completer runs. Every command's result and
//! every CQE (in order, under random `cqe_ready` backpressure) must equal
//! the model's.
//!
//! Two sources of commands:
//! - random: 48 QPs at once, PSNs starting anywhere (many across the 2^24
//!   wrap), posts until full (and refused beyond), ACKs ending before,
//!   inside, at the boundaries of and beyond the outstanding WQEs (partial
//!   ACKs, lost READ/atomic), lookups, READ/atomic completions, fails,
//!   flushes, clears;
//! - traces: two model NICs exchanging SEND / WRITE / READ / atomics on
//!   16-deep send queues over a link with loss, duplication and
//!   reordering, with RNR NAKs and a remote access error that moves a QP to
//!   ERR; every send-queue operation the NICs ran was recorded
//!   (`Nic::record_ring_ops`) and is replayed. `Ring`'s results must equal
//!   the recorded ones, the RTL's `Ring`'s, and the CQEs the RTL emits
//!   (slot mapped back to wr_id as the host would) must be the model's
//!   send CQEs, per QP in order.

use crate::rtl_common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::FaultConfig;
use rocenic_hdl::codes::{wc_opcode, wc_status, wqe_kind};
use rocenic_hdl::requester::send_queue_tracker::*;
use rocenic_model::completer::WqeKind;
use rocenic_model::nic::Nic;
use rocenic_model::send_queue::{
    self, Ring, RingCommand, RingCqe, RingOp, RingOutcome, RingRecord, RingResult, SendCqe,
    WqeRecord,
};
use rocenic_model::verbs::{WcOpcode, WcStatus};
use rocenic_wire::psn;
use rtl_common::traffic::{MixedTraffic, TrafficRun};
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{SendQueueTracker as Dut, Sim};

const DEPTH: usize = 1 << DEFAULT_SLOT_BITS;

/// Any status but success.
fn random_error(rng: &mut impl Rng) -> WcStatus {
    WcStatus::from_repr(rng.gen_range(1..=WcStatus::RnrRetryExcErr as usize)).unwrap()
}

fn send_opcode_code(o: WcOpcode) -> u64 {
    let code = wc_opcode::encode(o);
    assert!(
        wc_opcode::decode_send(code).is_some(),
        "a send opcode: {o:?}"
    );
    code
}

/// A result as the block's ports show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Result {
    op: u64,
    qpn: u64,
    accepted: bool,
    lost: bool,
    una: u64,
    to_error: bool,
    /// (slot, record) of a lookup hit or the slot of an accepted post.
    slot: Option<u64>,
    record: Option<WqeRecord>,
}

fn op_code(c: &RingCommand) -> u64 {
    match c {
        RingCommand::Post(_) => OP_POST,
        RingCommand::Ack { .. } => OP_ACK,
        RingCommand::Lookup(_) => OP_LOOKUP,
        RingCommand::CompleteResponse { .. } => OP_COMPLETE_RESPONSE,
        RingCommand::Fail { .. } => OP_FAIL,
        RingCommand::Flush => OP_FLUSH,
        RingCommand::Clear => OP_CLEAR,
    }
}

/// The model's outcome as the block's result ports must show it.
fn expected(qpn: usize, c: &RingCommand, o: &RingOutcome) -> Result {
    let mut r = Result {
        op: op_code(c),
        qpn: qpn as u64,
        accepted: false,
        lost: false,
        una: 0,
        to_error: o.to_error,
        slot: None,
        record: None,
    };
    match (c, o.result) {
        (_, RingResult::Post(slot)) => {
            r.accepted = slot.is_some();
            r.slot = slot.map(|s| s as u64);
        }
        (RingCommand::Ack { .. }, RingResult::Ack { lost, una }) => {
            (r.lost, r.una) = (lost, una.into())
        }
        (_, RingResult::Lookup(hit)) => {
            r.slot = hit.map(|(s, _)| s as u64);
            r.record = hit.map(|(_, w)| w);
        }
        _ => {}
    }
    r
}

struct Bench {
    sim: Sim<Dut>,
    rng: ChaCha8Rng,
    ready_rate: f64,
    rings: Vec<Ring>,
    /// CQEs the model emitted, not yet seen from the RTL: (qpn, cqe).
    pending: VecDeque<(usize, RingCqe)>,
    /// Every CQE the RTL emitted, per QP.
    emitted: BTreeMap<usize, Vec<RingCqe>>,
    commands: u64,
    cqes: u64,
    cycles: u64,
    max_cycles: u64,
}

impl Bench {
    fn new(seed: u64, ready_rate: f64) -> Bench {
        let mut sim = Sim::<Dut>::new().expect("send_queue_tracker is exported");
        sim.set_bit(Dut::RESET, true);
        sim.tick();
        sim.set_bit(Dut::RESET, false);
        Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5107),
            ready_rate,
            rings: (0..1 << DEFAULT_QPN_BITS)
                .map(|_| Ring::new(DEPTH))
                .collect(),
            pending: VecDeque::new(),
            emitted: BTreeMap::new(),
            commands: 0,
            cqes: 0,
            cycles: 0,
            max_cycles: 0,
        }
    }

    fn drive(&mut self, qpn: usize, c: Option<&RingCommand>) {
        let s = &mut self.sim;
        s.set_bit(Dut::CMD_VALID, c.is_some());
        // Fields a command does not use carry garbage.
        let g = self.rng.gen::<u64>();
        s.set_u64(Dut::CMD_OP, g & 7);
        s.set_u64(Dut::CMD_QPN, (g >> 3) & 0x3FF);
        s.set_u64(Dut::CMD_PSN, (g >> 13) & 0xFF_FFFF);
        s.set_u64(Dut::CMD_NEXT_PSN, (g >> 37) & 0xFF_FFFF);
        s.set_u64(Dut::CMD_SLOT, (g >> 61) & 0xF);
        s.set_bit(Dut::CMD_COMPLETES, g & 1 != 0);
        s.set_u64(Dut::CMD_STATUS, (g >> 4) & 0xF);
        s.set_u64(Dut::CMD_KIND, (g >> 8) & 3);
        s.set_u64(Dut::CMD_OPCODE, (g >> 10) & 7);
        s.set_u64(Dut::CMD_FIRST_PSN, (g >> 20) & 0xFF_FFFF);
        s.set_u64(Dut::CMD_NPSN, (g >> 30) & 0xFF_FFFF);
        s.set_u64(Dut::CMD_LEN, g >> 32);
        s.set_bit(Dut::CMD_SIGNALED, g & 2 != 0);
        let Some(c) = c else { return };
        s.set_u64(Dut::CMD_OP, op_code(c));
        s.set_u64(Dut::CMD_QPN, qpn as u64);
        match *c {
            RingCommand::Post(w) => {
                s.set_u64(Dut::CMD_KIND, wqe_kind::encode(w.kind));
                s.set_u64(Dut::CMD_OPCODE, send_opcode_code(w.opcode));
                s.set_u64(Dut::CMD_FIRST_PSN, w.first_psn.into());
                s.set_u64(Dut::CMD_NPSN, w.npsn.into());
                s.set_u64(Dut::CMD_LEN, w.len.into());
                s.set_bit(Dut::CMD_SIGNALED, w.signaled);
                s.set_u64(
                    Dut::CMD_STATUS,
                    w.error.map_or(wc_status::SUCCESS, wc_status::encode),
                );
                assert_eq!(w.done_psn, w.first_psn);
                assert!(!w.complete);
            }
            RingCommand::Ack { end, next_psn } => {
                s.set_u64(Dut::CMD_PSN, end.into());
                s.set_u64(Dut::CMD_NEXT_PSN, next_psn.into());
            }
            RingCommand::Lookup(p) => s.set_u64(Dut::CMD_PSN, p.into()),
            RingCommand::CompleteResponse {
                slot,
                new_done,
                completes,
            } => {
                s.set_u64(Dut::CMD_SLOT, slot as u64);
                s.set_u64(Dut::CMD_PSN, new_done.into());
                s.set_bit(Dut::CMD_COMPLETES, completes);
            }
            RingCommand::Fail { psn, status } => {
                s.set_u64(Dut::CMD_PSN, psn.into());
                s.set_u64(Dut::CMD_STATUS, wc_status::encode(status));
            }
            RingCommand::Flush | RingCommand::Clear => {}
        }
    }

    fn observe(&self) -> Result {
        let s = &self.sim;
        let op = s.get_u64(Dut::RES_OP);
        let accepted = s.get_bit(Dut::RES_ACCEPTED);
        let found = s.get_bit(Dut::RES_FOUND);
        let record = found.then(|| WqeRecord {
            kind: wqe_kind::decode(s.get_u64(Dut::RES_WQE_KIND)).expect("a WQE kind"),
            opcode: wc_opcode::decode(s.get_u64(Dut::RES_WQE_OPCODE)).expect("a WC opcode"),
            first_psn: s.get_u64(Dut::RES_WQE_FIRST_PSN) as u32,
            npsn: s.get_u64(Dut::RES_WQE_NPSN) as u32,
            done_psn: s.get_u64(Dut::RES_WQE_DONE_PSN) as u32,
            len: s.get_u64(Dut::RES_WQE_LEN) as u32,
            signaled: s.get_bit(Dut::RES_WQE_SIGNALED),
            complete: s.get_bit(Dut::RES_WQE_COMPLETE),
            error: match s.get_u64(Dut::RES_WQE_ERROR) {
                wc_status::SUCCESS => None,
                e => Some(wc_status::decode(e).expect("a WC status")),
            },
        });
        Result {
            op,
            qpn: s.get_u64(Dut::RES_QPN),
            accepted,
            lost: s.get_bit(Dut::RES_LOST),
            una: if op == OP_ACK {
                s.get_u64(Dut::RES_UNA)
            } else {
                0
            },
            to_error: s.get_bit(Dut::RES_TO_ERROR),
            slot: (accepted || found).then(|| s.get_u64(Dut::RES_SLOT)),
            record,
        }
    }

    /// One cycle: CQEs taken at random, compared in order.
    fn cycle(&mut self, what: &str) {
        let ready = self.rng.gen_bool(self.ready_rate);
        self.sim.set_bit(Dut::CQE_READY, ready);
        self.sim.eval();
        if self.sim.get_bit(Dut::CQE_VALID) && ready {
            let qpn = self.sim.get_u64(Dut::CQE_QPN) as usize;
            let got = RingCqe {
                slot: self.sim.get_u64(Dut::CQE_SLOT) as usize,
                status: wc_status::decode(self.sim.get_u64(Dut::CQE_STATUS)).expect("a WC status"),
                opcode: wc_opcode::decode(self.sim.get_u64(Dut::CQE_OPCODE)).expect("a WC opcode"),
                byte_len: self.sim.get_u64(Dut::CQE_BYTE_LEN) as u32,
            };
            let want = self.pending.pop_front();
            assert_eq!(
                Some((qpn, got)),
                want,
                "{what}: CQE {} at cycle {}",
                self.cqes,
                self.cycles
            );
            self.emitted.entry(qpn).or_default().push(got);
            self.cqes += 1;
        }
    }

    /// Runs `c` on QP `qpn` in the model and the RTL; panics (with `what`)
    /// when the result differs. Returns the model's outcome.
    fn command(&mut self, qpn: usize, c: RingCommand, what: &str) -> RingOutcome {
        // A lookup also counts the unanswered READ/atomic WQEs before its
        // hit (all of them on a miss): the requester's `max_rd_atomic`.
        let unanswered = match c {
            RingCommand::Lookup(p) => {
                let wqes = self.rings[qpn].wqes();
                let idx = send_queue::index_of(wqes, p).unwrap_or(wqes.len());
                Some(send_queue::unanswered_before(wqes, idx) as u64)
            }
            _ => None,
        };
        let outcome = self.rings[qpn].apply(c);
        let want = expected(qpn, &c, &outcome);
        self.pending
            .extend(outcome.cqes.iter().map(|&cqe| (qpn, cqe)));
        self.drive(qpn, Some(&c));
        let start = self.cycles;
        let mut offered = true;
        loop {
            self.cycle(what);
            if self.sim.get_bit(Dut::RES_VALID) {
                assert!(!offered, "{what}: result before the command was taken");
                let got = self.observe();
                assert_eq!(
                    got, want,
                    "{what}: command {} {c:?} on QP {qpn}",
                    self.commands
                );
                if let Some(n) = unanswered {
                    assert_eq!(
                        self.sim.get_u64(Dut::RES_RD_ATOMIC_BEFORE),
                        n,
                        "{what}: command {} {c:?} on QP {qpn}: unanswered READ/atomic before",
                        self.commands
                    );
                }
                self.sim.tick();
                self.cycles += 1;
                break;
            }
            let taken = offered && self.sim.get_bit(Dut::CMD_READY);
            self.sim.tick();
            self.cycles += 1;
            if taken {
                offered = false;
                self.drive(qpn, None);
            }
            assert!(self.cycles - start < 2000, "{what}: command {c:?} stuck");
        }
        self.max_cycles = self.max_cycles.max(self.cycles - start);
        self.commands += 1;
        outcome
    }

    /// Runs until every CQE the model emitted came out.
    fn finish(&mut self, what: &str) {
        let start = self.cycles;
        while !self.pending.is_empty() {
            self.cycle(what);
            self.sim.tick();
            self.cycles += 1;
            assert!(self.cycles - start < 1000, "{what}: CQEs missing");
        }
        for _ in 0..4 {
            self.sim.set_bit(Dut::CQE_READY, true);
            self.sim.eval();
            assert!(!self.sim.get_bit(Dut::CQE_VALID), "{what}: extra CQE");
            self.sim.tick();
        }
    }
}

/// Per random QP: the PSN the next post starts at.
struct RandomQp {
    index: usize,
    next_psn: u32,
    /// A failed WQE reached the head: the engine moves the QP to ERR.
    to_error: bool,
}

fn random_record(rng: &mut ChaCha8Rng, first_psn: u32) -> WqeRecord {
    // Mostly SEND/WRITE, so ACKs complete runs of WQEs before a READ or
    // atomic stops them.
    let kind = wqe_kind::ALL[[0, 0, 0, 1, 1, 1, 2, 3][rng.gen_range(0..8)]];
    let opcode = match kind {
        WqeKind::Send => WcOpcode::Send,
        WqeKind::Write => WcOpcode::RdmaWrite,
        WqeKind::Read => WcOpcode::RdmaRead,
        WqeKind::Atomic => [WcOpcode::CompSwap, WcOpcode::FetchAdd][rng.gen_range(0..2)],
    };
    let npsn = match kind {
        WqeKind::Atomic => 1,
        _ => match rng.gen_range(0..8) {
            0 => rng.gen_range(1..=1 << 20),
            _ => rng.gen_range(1..=6),
        },
    };
    WqeRecord {
        kind,
        opcode,
        first_psn,
        npsn,
        done_psn: first_psn,
        len: rng.gen(),
        signaled: rng.gen_bool(0.8),
        complete: false,
        error: rng.gen_bool(0.02).then(|| random_error(rng)),
    }
}

/// A PSN around the QP's outstanding range: before it, in it (often at a
/// WQE boundary or its done PSN), at its end or beyond.
fn random_psn(rng: &mut ChaCha8Rng, ring: &Ring, next_psn: u32) -> u32 {
    let wqes = ring.wqes();
    let start = wqes.front().map_or(next_psn, |w| w.first_psn);
    match rng.gen_range(0..8) {
        0 => psn::add(start, rng.gen_range(0..4u32).wrapping_neg()),
        1 => psn::add(next_psn, rng.gen_range(0..4)),
        2 | 3 if !wqes.is_empty() => {
            let w = wqes[rng.gen_range(0..wqes.len())];
            [w.first_psn, w.done_psn, psn::add(w.first_psn, w.npsn)][rng.gen_range(0..3)]
        }
        _ => {
            let span = psn::diff(next_psn, start).max(0) as u32;
            psn::add(start, rng.gen_range(0..=span))
        }
    }
}

fn random_command(rng: &mut ChaCha8Rng, ring: &Ring, qp: &mut RandomQp) -> RingCommand {
    let n = ring.len();
    if qp.to_error && rng.gen_bool(0.9) {
        return RingCommand::Flush;
    }
    let roll = rng.gen_range(0..100);
    if roll < 35 || n == 0 && roll < 60 {
        return RingCommand::Post(random_record(rng, qp.next_psn));
    }
    match roll {
        35..=64 => RingCommand::Ack {
            end: random_psn(rng, ring, qp.next_psn),
            next_psn: qp.next_psn,
        },
        65..=74 => RingCommand::Lookup(random_psn(rng, ring, qp.next_psn)),
        75..=88 if n > 0 => {
            let i = rng.gen_range(0..n);
            let w = ring.wqes()[i];
            let slot = ring.slot_of(w.first_psn).expect("posted WQE");
            let (new_done, completes) = match w.kind {
                WqeKind::Atomic => (psn::add(w.first_psn, 1), true),
                _ => {
                    let d = psn::add(w.done_psn, 1);
                    (d, d == psn::add(w.first_psn, w.npsn) || rng.gen_bool(0.1))
                }
            };
            RingCommand::CompleteResponse {
                slot,
                new_done,
                completes,
            }
        }
        75..=88 => RingCommand::Lookup(random_psn(rng, ring, qp.next_psn)),
        89..=91 => RingCommand::Fail {
            psn: random_psn(rng, ring, qp.next_psn),
            status: random_error(rng),
        },
        92..=97 => RingCommand::Flush,
        _ => RingCommand::Clear,
    }
}

fn run_random(seed: u64, commands: usize, ready_rate: f64) -> (Bench, BTreeMap<&'static str, u64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut bench = Bench::new(seed, ready_rate);
    let mut qps: Vec<RandomQp> = (0..48)
        .map(|i| RandomQp {
            // Spread over the index range; half start just before the wrap.
            index: i * 21 + 3,
            next_psn: if i % 2 == 0 {
                0xFF_FFFF - rng.gen_range(0..40)
            } else {
                rng.gen_range(0..=0xFF_FFFF)
            },
            to_error: false,
        })
        .collect();
    let mut seen = BTreeMap::new();
    let what = format!("random seed {seed:#x}, ready {ready_rate}");
    for _ in 0..commands {
        // A few QPs get most commands, so rings fill and wrap.
        let q = if rng.gen_bool(0.7) {
            rng.gen_range(0..4)
        } else {
            rng.gen_range(0..qps.len())
        };
        let qp = &mut qps[q];
        let c = random_command(&mut rng, &bench.rings[qp.index], qp);
        let index = qp.index;
        let o = bench.command(index, c, &what);
        let qp = &mut qps[q];
        qp.to_error = o.to_error;
        if let (RingCommand::Post(w), RingResult::Post(Some(_))) = (c, o.result) {
            qp.next_psn = psn::add(w.first_psn, w.npsn);
        }
        let class = match (c, o.result) {
            (RingCommand::Post(_), RingResult::Post(None)) => "post refused (full)",
            (RingCommand::Post(_), _) => "post",
            (RingCommand::Ack { .. }, RingResult::Ack { lost: true, .. }) => "ack lost",
            (RingCommand::Ack { .. }, _) if o.cqes.is_empty() => "ack nothing completed",
            (RingCommand::Ack { .. }, _) if o.cqes.len() >= 4 => "ack completing >= 4",
            (RingCommand::Ack { .. }, _) => "ack completing 1..3",
            (RingCommand::Lookup(_), RingResult::Lookup(Some(_))) => "lookup hit",
            (RingCommand::Lookup(_), _) => "lookup miss",
            (RingCommand::CompleteResponse { .. }, _) => "complete_response",
            (RingCommand::Fail { .. }, _) => "fail",
            (RingCommand::Flush, _) if o.cqes.is_empty() => "flush empty",
            (RingCommand::Flush, _) => "flush",
            (RingCommand::Clear, _) => "clear",
        };
        *seen.entry(class).or_insert(0u64) += 1;
        if o.to_error {
            *seen.entry("to_error").or_insert(0) += 1;
        }
    }
    bench.finish(&what);
    (bench, seen)
}

#[test]
fn random_commands_match_the_model() {
    for (seed, ready) in [(0x51_0001u64, 1.0), (0x51_0002, 0.3)] {
        let (bench, seen) = run_random(seed, 60_000, ready);
        eprintln!(
            "seed {seed:#x} ready {ready}: {} commands, {} CQEs, {} cycles (longest command {}); {seen:?}",
            bench.commands, bench.cqes, bench.cycles, bench.max_cycles
        );
        for class in [
            "post refused (full)",
            "ack lost",
            "ack nothing completed",
            "ack completing >= 4",
            "lookup hit",
            "lookup miss",
            "complete_response",
            "fail",
            "flush",
            "clear",
            "to_error",
        ] {
            assert!(
                seen.get(class).copied().unwrap_or(0) > 10,
                "{class}: {seen:?}"
            );
        }
        assert!(bench.cqes > 10_000, "{}", bench.cqes);
        if ready == 1.0 {
            // An ack completing a full ring and draining it: 2 x 16 + 4.
            assert!(
                bench.max_cycles <= 2 * DEPTH as u64 + 5,
                "{}",
                bench.max_cycles
            );
        }
    }
}

/// Every send-queue operation two model NICs ran, per NIC, exchanging
/// traffic both ways on `qps` QP pairs with 16-deep send queues.
fn model_trace(seed: u64, mtu: u32, faults: FaultConfig) -> [Vec<RingRecord>; 2] {
    let shape = MixedTraffic {
        qps: 3,
        msgs: DEPTH,
        max_send_wr: DEPTH as u32,
        // Some unsignaled: they complete without a CQE.
        signaled: 0.8,
        fill: None,
    };
    let mut run = TrafficRun::start(seed, mtu, faults, shape, Nic::record_ring_ops);
    run.fabric.run_until(2_000_000_000);
    [0, 1].map(|s| run.fabric.node_mut(run.ids[s]).take_ring_log())
}

/// Replays one NIC's recorded operations; returns the model's send CQEs
/// per tracker QP index, the RTL's mapped back to wr_ids, and counts.
fn replay(
    bench: &mut Bench,
    log: &[RingRecord],
    base: usize,
    what: &str,
    seen: &mut BTreeMap<&'static str, u64>,
) -> (BTreeMap<usize, Vec<SendCqe>>, BTreeMap<usize, Vec<SendCqe>>) {
    let index = |qpn: u32| base + (qpn as usize - 0x11);
    let mut model_cqes: BTreeMap<usize, Vec<SendCqe>> = BTreeMap::new();
    let mut wr_ids: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let mut rtl: BTreeMap<usize, Vec<SendCqe>> = BTreeMap::new();
    let mut take = |bench: &mut Bench, wr_ids: &BTreeMap<(usize, usize), u64>| {
        for (q, cqes) in std::mem::take(&mut bench.emitted) {
            for c in cqes {
                rtl.entry(q).or_default().push(SendCqe {
                    wr_id: wr_ids[&(q, c.slot)],
                    status: c.status,
                    opcode: c.opcode,
                    byte_len: c.byte_len,
                });
            }
        }
    };
    for (i, rec) in log.iter().enumerate() {
        let q = index(rec.qpn);
        let at = format!("{what}: record {i} {rec:?}");
        let count = |seen: &mut BTreeMap<&'static str, u64>, k| *seen.entry(k).or_insert(0) += 1;
        match &rec.op {
            RingOp::Post { record, wr_id } => {
                // The slot may be the one of a WQE whose CQE is still in
                // the output register: let it out under its old wr_id.
                bench.finish(&at);
                take(bench, &wr_ids);
                let o = bench.command(q, RingCommand::Post(*record), &at);
                let RingResult::Post(Some(slot)) = o.result else {
                    panic!("{at}: ring full")
                };
                wr_ids.insert((q, slot), *wr_id);
                count(seen, "post");
            }
            &RingOp::Ack {
                end,
                next_psn,
                lost,
                una,
            } => {
                let o = bench.command(q, RingCommand::Ack { end, next_psn }, &at);
                assert_eq!(o.result, RingResult::Ack { lost, una }, "{at}");
                count(seen, if lost { "ack lost" } else { "ack" });
            }
            &RingOp::Lookup { psn, found } => {
                let o = bench.command(q, RingCommand::Lookup(psn), &at);
                let RingResult::Lookup(hit) = o.result else {
                    unreachable!()
                };
                assert_eq!(hit.map(|(_, w)| w), found, "{at}");
                count(seen, "lookup");
            }
            &RingOp::CompleteResponse {
                psn,
                new_done,
                completes,
            } => {
                let slot = bench.rings[q].slot_of(psn).expect("WQE holding the PSN");
                bench.command(
                    q,
                    RingCommand::CompleteResponse {
                        slot,
                        new_done,
                        completes,
                    },
                    &at,
                );
                count(seen, "complete_response");
            }
            &RingOp::Fail { psn, status } => {
                bench.command(q, RingCommand::Fail { psn, status }, &at);
                count(seen, "fail");
            }
            RingOp::Drain { cqes, failed } => {
                model_cqes.entry(q).or_default().extend(cqes);
                if *failed {
                    count(seen, "drain found failed head");
                }
            }
            RingOp::Flush { cqes } => {
                bench.command(q, RingCommand::Flush, &at);
                model_cqes.entry(q).or_default().extend(cqes);
                count(seen, "flush");
            }
            RingOp::Clear => {
                bench.command(q, RingCommand::Clear, &at);
                count(seen, "clear");
            }
        }
    }
    bench.finish(what);
    take(bench, &wr_ids);
    (model_cqes, rtl)
}

#[test]
fn model_traces_with_loss_duplication_and_reordering_match() {
    let mut seen = BTreeMap::new();
    let mut records = 0;
    let mut cqes = 0;
    for (n, mtu) in [256u32, 1024, 4096].into_iter().enumerate() {
        for loss in [0.0, 0.02, 0.08] {
            let seed = 0x5_7ACE ^ (n as u64) << 8 ^ (loss * 100.0) as u64;
            let faults = FaultConfig::lossy(loss, 4_000);
            let logs = model_trace(seed, mtu, faults);
            let mut bench = Bench::new(seed, 0.7);
            for (side, log) in logs.iter().enumerate() {
                let what = format!("trace seed {seed:#x}, MTU {mtu}, loss {loss}, NIC {side}");
                let (model, rtl) = replay(&mut bench, log, side * 16, &what, &mut seen);
                assert_eq!(rtl, model, "{what}: send CQEs per QP");
                records += log.len();
                cqes += model.values().map(Vec::len).sum::<usize>();
            }
        }
    }
    eprintln!("{records} recorded operations, {cqes} send CQEs; {seen:?}");
    for k in [
        "post",
        "ack",
        "ack lost",
        "lookup",
        "complete_response",
        "fail",
        "flush",
    ] {
        assert!(seen.get(k).copied().unwrap_or(0) > 0, "{k}: {seen:?}");
    }
    assert!(records > 5_000, "{records}");
}
