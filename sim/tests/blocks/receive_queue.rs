//! Receive-queue lockstep: the Verilated `ReceiveQueue` (1024 QPs x 16
//! WQEs) against the model's receive queue, a `VecDeque<RecvWr>` per QP
//! with the WQE of a SEND in progress held beside it, as the model's
//! responder keeps it (`Qp::rq`, `InProgress::Send`). Random posts (until
//! full and refused beyond), message starts (the RTL peeks the head; the
//! model pops it into the message in progress), peeks of a message's later
//! packets, completions (success, errors, RECV / RECV_RDMA_WITH_IMM, with
//! and without immediate), flushes (the model's own
//! `completer::flush_receive_queue`, in-progress WQE first) and clears, on
//! 40 QPs at once with random `cqe_ready` backpressure. Every result, every
//! CQE in order, and in every cycle the non-empty flag of a random QP with
//! no message in progress (what the request checker asks) must equal the
//! model's.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::codes::{wc_opcode, wc_status};
use rocenic_hdl::responder::receive_queue::*;
use rocenic_model::completer::flush_receive_queue;
use rocenic_model::verbs::{Cqe, RecvWr, Sge, WcOpcode, WcStatus};
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{ReceiveQueue as Dut, Sim};

const DEPTH: usize = 1 << DEFAULT_SLOT_BITS;

/// One command as the test gives it to both sides.
#[derive(Clone, Debug)]
enum Command {
    Post(RecvWr),
    /// The first packet of a SEND: the model takes the head WQE into the
    /// message in progress; the RTL reads the head and keeps it there.
    Start,
    /// A later packet of the SEND in progress: the RTL reads the head.
    Continue,
    /// The message ends (or fails): the receive CQE.
    Complete {
        status: WcStatus,
        opcode: WcOpcode,
        byte_len: u32,
        imm: Option<u32>,
    },
    Flush,
    Clear,
}

/// A result as the block's ports show it: (accepted, the head WQE found).
type Res = (bool, Option<(u64, u32, u64, u32)>);

#[derive(Default)]
struct ModelQp {
    rq: VecDeque<RecvWr>,
    in_progress: Option<RecvWr>,
}

fn sge_of(wr: &RecvWr) -> (u64, u32, u64, u32) {
    let s = wr.sgl[0];
    (wr.wr_id, s.lkey, s.addr, s.length)
}

impl ModelQp {
    /// The model's outcome: the result and the CQEs.
    fn apply(&mut self, qpn: u32, c: &Command) -> (Res, Vec<Cqe>) {
        match c {
            Command::Post(wr) => {
                if self.rq.len() + usize::from(self.in_progress.is_some()) >= DEPTH {
                    return ((false, None), vec![]);
                }
                self.rq.push_back(wr.clone());
                ((true, None), vec![])
            }
            Command::Start => {
                assert!(self.in_progress.is_none());
                self.in_progress = self.rq.pop_front();
                ((false, self.in_progress.as_ref().map(sge_of)), vec![])
            }
            Command::Continue => ((false, self.in_progress.as_ref().map(sge_of)), vec![]),
            Command::Complete {
                status,
                opcode,
                byte_len,
                imm,
            } => {
                let Some(wr) = self.in_progress.take().or_else(|| self.rq.pop_front()) else {
                    return ((false, None), vec![]);
                };
                let cqe = Cqe {
                    wr_id: wr.wr_id,
                    status: *status,
                    opcode: *opcode,
                    qpn,
                    byte_len: *byte_len,
                    imm: *imm,
                    invalidated_rkey: None,
                };
                ((false, Some(sge_of(&wr))), vec![cqe])
            }
            Command::Flush => (
                (false, None),
                flush_receive_queue(qpn, self.in_progress.take(), &mut self.rq),
            ),
            Command::Clear => {
                self.rq.clear();
                self.in_progress = None;
                ((false, None), vec![])
            }
        }
    }
}

struct Bench {
    sim: Sim<Dut>,
    rng: ChaCha8Rng,
    ready_rate: f64,
    qps: BTreeMap<u32, ModelQp>,
    pending: VecDeque<Cqe>,
    /// The QP of the command in flight: its flag changes when the command
    /// finishes, the model's at once.
    busy: Option<u32>,
    commands: u64,
    cqes: u64,
    queries: u64,
    cycles: u64,
    max_cycles: u64,
}

impl Bench {
    fn new(seed: u64, ready_rate: f64, qpns: &[u32]) -> Bench {
        let mut sim = Sim::<Dut>::new().expect("receive_queue is exported");
        sim.set_bit(Dut::RESET, true);
        sim.tick();
        sim.set_bit(Dut::RESET, false);
        Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x7e5),
            ready_rate,
            qps: qpns.iter().map(|&q| (q, ModelQp::default())).collect(),
            pending: VecDeque::new(),
            busy: None,
            commands: 0,
            cqes: 0,
            queries: 0,
            cycles: 0,
            max_cycles: 0,
        }
    }

    fn drive(&mut self, qpn: u32, c: Option<&Command>) {
        let s = &mut self.sim;
        s.set_bit(Dut::CMD_VALID, c.is_some());
        // Fields a command does not use carry garbage.
        let g: [u64; 3] = self.rng.gen();
        s.set_u64(Dut::CMD_OP, g[0] % 5);
        s.set_u64(Dut::CMD_QPN, (g[0] >> 3) & 0x3FF);
        s.set_u64(Dut::CMD_WR_ID, g[1]);
        s.set_u64(Dut::CMD_LKEY, g[0] >> 32);
        s.set_u64(Dut::CMD_VA, g[2]);
        s.set_u64(Dut::CMD_LEN, g[1] >> 32);
        s.set_u64(Dut::CMD_STATUS, (g[0] >> 13) & 0xF);
        s.set_u64(Dut::CMD_OPCODE, (g[0] >> 17) & 7);
        s.set_u64(Dut::CMD_BYTE_LEN, g[2] >> 32);
        s.set_bit(Dut::CMD_IMM_VALID, g[0] & 1 != 0);
        s.set_u64(Dut::CMD_IMM, g[2] & 0xFFFF_FFFF);
        let Some(c) = c else { return };
        s.set_u64(Dut::CMD_QPN, qpn.into());
        match c {
            Command::Post(wr) => {
                s.set_u64(Dut::CMD_OP, OP_POST);
                let (id, lkey, va, len) = sge_of(wr);
                s.set_u64(Dut::CMD_WR_ID, id);
                s.set_u64(Dut::CMD_LKEY, lkey.into());
                s.set_u64(Dut::CMD_VA, va);
                s.set_u64(Dut::CMD_LEN, len.into());
            }
            Command::Start | Command::Continue => s.set_u64(Dut::CMD_OP, OP_PEEK),
            Command::Complete {
                status,
                opcode,
                byte_len,
                imm,
            } => {
                s.set_u64(Dut::CMD_OP, OP_COMPLETE);
                s.set_u64(Dut::CMD_STATUS, wc_status::encode(*status));
                s.set_u64(Dut::CMD_OPCODE, wc_opcode::encode(*opcode));
                s.set_u64(Dut::CMD_BYTE_LEN, (*byte_len).into());
                s.set_bit(Dut::CMD_IMM_VALID, imm.is_some());
                if let Some(i) = imm {
                    s.set_u64(Dut::CMD_IMM, (*i).into());
                }
            }
            Command::Flush => s.set_u64(Dut::CMD_OP, OP_FLUSH),
            Command::Clear => s.set_u64(Dut::CMD_OP, OP_CLEAR),
        }
    }

    /// One cycle: CQEs taken at random and compared in order; the flag of
    /// a random QP with no message in progress compared.
    fn cycle(&mut self, what: &str) {
        let ready = self.rng.gen_bool(self.ready_rate);
        self.sim.set_bit(Dut::CQE_READY, ready);
        let keys: Vec<u32> = self.qps.keys().copied().collect();
        let q = keys[self.rng.gen_range(0..keys.len())];
        self.sim.set_u64(Dut::QUERY_QPN, q.into());
        self.sim.eval();
        let m = &self.qps[&q];
        if m.in_progress.is_none() && self.busy != Some(q) {
            assert_eq!(
                self.sim.get_bit(Dut::QUERY_AVAILABLE),
                !m.rq.is_empty(),
                "{what}: availability of QP {q} at cycle {}",
                self.cycles
            );
            self.queries += 1;
        }
        if self.sim.get_bit(Dut::CQE_VALID) && ready {
            let s = &self.sim;
            let got = Cqe {
                wr_id: s.get_u64(Dut::CQE_WR_ID),
                status: wc_status::decode(s.get_u64(Dut::CQE_STATUS)).expect("a WC status"),
                opcode: {
                    let o = s.get_u64(Dut::CQE_OPCODE);
                    wc_opcode::decode_recv(o).unwrap_or_else(|| panic!("{what}: CQE opcode {o}"))
                },
                qpn: s.get_u64(Dut::CQE_QPN) as u32,
                byte_len: s.get_u64(Dut::CQE_BYTE_LEN) as u32,
                imm: s
                    .get_bit(Dut::CQE_IMM_VALID)
                    .then(|| s.get_u64(Dut::CQE_IMM) as u32),
                invalidated_rkey: None,
            };
            let want = self.pending.pop_front();
            assert_eq!(
                Some(got),
                want,
                "{what}: CQE {} at cycle {}",
                self.cqes,
                self.cycles
            );
            self.cqes += 1;
        }
    }

    fn command(&mut self, qpn: u32, c: &Command, what: &str) -> (Res, Vec<Cqe>) {
        let (want, cqes) = self.qps.get_mut(&qpn).unwrap().apply(qpn, c);
        self.pending.extend(cqes.iter().cloned());
        let op = match c {
            Command::Post(_) => OP_POST,
            Command::Start | Command::Continue => OP_PEEK,
            Command::Complete { .. } => OP_COMPLETE,
            Command::Flush => OP_FLUSH,
            Command::Clear => OP_CLEAR,
        };
        self.drive(qpn, Some(c));
        self.busy = Some(qpn);
        let start = self.cycles;
        let mut offered = true;
        loop {
            self.cycle(what);
            if self.sim.get_bit(Dut::RES_VALID) {
                assert!(!offered, "{what}: result before the command was taken");
                let s = &self.sim;
                assert_eq!(s.get_u64(Dut::RES_OP), op, "{what}");
                assert_eq!(s.get_u64(Dut::RES_QPN), u64::from(qpn), "{what}");
                let got: Res = (
                    s.get_bit(Dut::RES_ACCEPTED),
                    s.get_bit(Dut::RES_FOUND).then(|| {
                        (
                            s.get_u64(Dut::RES_WR_ID),
                            s.get_u64(Dut::RES_LKEY) as u32,
                            s.get_u64(Dut::RES_VA),
                            s.get_u64(Dut::RES_LEN) as u32,
                        )
                    }),
                );
                assert_eq!(
                    got, want,
                    "{what}: command {} {c:?} on QP {qpn}",
                    self.commands
                );
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
            assert!(self.cycles - start < 1000, "{what}: command {c:?} stuck");
        }
        self.busy = None;
        self.max_cycles = self.max_cycles.max(self.cycles - start);
        self.commands += 1;
        (want, cqes)
    }

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

/// In `fill` phases posts dominate, so rings fill and posts are refused;
/// otherwise messages, flushes and clears empty them.
fn random_command(rng: &mut ChaCha8Rng, m: &ModelQp, next_id: &mut u64, fill: bool) -> Command {
    // Cumulative percentages: post, start/continue, complete, flush; the
    // rest clear.
    let [post, message, complete, flush] = if fill {
        [70, 80, 95, 98]
    } else {
        [35, 50, 85, 95]
    };
    let roll = rng.gen_range(0..100);
    if roll < post {
        *next_id += 1;
        Command::Post(RecvWr {
            wr_id: (*next_id << 20) ^ rng.gen_range(0..1 << 20),
            sgl: vec![Sge {
                addr: rng.gen(),
                length: rng.gen(),
                lkey: rng.gen(),
            }],
        })
    } else if roll < message {
        if m.in_progress.is_none() {
            Command::Start
        } else {
            Command::Continue
        }
    } else if roll < complete {
        let opcode = if rng.gen_bool(0.3) {
            WcOpcode::RecvRdmaWithImm
        } else {
            WcOpcode::Recv
        };
        Command::Complete {
            status: [
                WcStatus::Success,
                WcStatus::Success,
                WcStatus::Success,
                WcStatus::Success,
                WcStatus::LocLenErr,
                WcStatus::LocProtErr,
            ][rng.gen_range(0..6)],
            opcode,
            byte_len: rng.gen_range(0..=1 << 20),
            imm: (opcode == WcOpcode::RecvRdmaWithImm || rng.gen_bool(0.3)).then(|| rng.gen()),
        }
    } else if roll < flush {
        Command::Flush
    } else {
        Command::Clear
    }
}

fn run_random(seed: u64, commands: usize, ready_rate: f64) -> (Bench, BTreeMap<&'static str, u64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let qpns: Vec<u32> = (0..40).map(|i| i * 25 + 7).collect();
    let mut bench = Bench::new(seed, ready_rate, &qpns);
    let mut seen = BTreeMap::new();
    let mut next_id = 0;
    let what = format!("random seed {seed:#x}, ready {ready_rate}");
    for _ in 0..commands {
        // A few QPs get most commands, so rings fill, refuse and wrap.
        let q = if rng.gen_bool(0.7) {
            qpns[rng.gen_range(0..3)]
        } else {
            qpns[rng.gen_range(0..qpns.len())]
        };
        let fill = (bench.commands / 400).is_multiple_of(2);
        let c = random_command(&mut rng, &bench.qps[&q], &mut next_id, fill);
        let held = bench.qps[&q].in_progress.is_some();
        let ((accepted, found), cqes) = bench.command(q, &c, &what);
        let class = match &c {
            Command::Post(_) if accepted => "post",
            Command::Post(_) => "post refused (full)",
            Command::Start if found.is_some() => "start",
            Command::Start => "start on empty",
            Command::Continue => "continue",
            Command::Complete { .. } if cqes.is_empty() => "complete on empty",
            Command::Complete { .. } => "complete",
            Command::Flush if cqes.len() >= 8 => "flush >= 8",
            Command::Flush if cqes.is_empty() => "flush empty",
            Command::Flush => "flush 1..7",
            Command::Clear => "clear",
        };
        *seen.entry(class).or_insert(0u64) += 1;
        if matches!(c, Command::Flush) && held {
            *seen.entry("flush with a message in progress").or_insert(0) += 1;
        }
    }
    bench.finish(&what);
    let refused = seen.get("post refused (full)").copied().unwrap_or(0);
    assert_eq!(
        bench.sim.get_u64(Dut::REFUSED_POSTS),
        refused,
        "{what}: refused posts counted"
    );
    (bench, seen)
}

#[test]
fn random_commands_match_the_model() {
    for (seed, ready) in [(0x7E_0001u64, 1.0), (0x7E_0002, 0.3)] {
        let (bench, seen) = run_random(seed, 20_000, ready);
        eprintln!(
            "seed {seed:#x} ready {ready}: {} commands, {} CQEs, {} availability checks, {} cycles (longest command {}); {seen:?}",
            bench.commands, bench.cqes, bench.queries, bench.cycles, bench.max_cycles
        );
        for class in [
            "post",
            "post refused (full)",
            "start",
            "start on empty",
            "continue",
            "complete",
            "complete on empty",
            "flush >= 8",
            "flush 1..7",
            "flush empty",
            "clear",
            "flush with a message in progress",
        ] {
            assert!(
                seen.get(class).copied().unwrap_or(0) >= 20,
                "seed {seed:#x}: {class} reached too rarely: {seen:?}"
            );
        }
    }
}
