//! READ/atomic resources lockstep: the Verilated `RdAtomicResources` (1024
//! QPs x 16 entries) against `rocenic_model::responder`'s `push_resource`
//! and `duplicate_answer`, the functions the model's responder itself
//! keeps its resources and answers duplicates with. Every lookup's answer
//! (no resource, mismatch, re-execute READ, replay atomic), whether and
//! what resource held the PSN (kind, first PSN, PSNs, R_Key, VA / original
//! value) must equal the model's.
//!
//! Two sources of commands:
//! - random: QPs with limits 0..=16 (sometimes changed under way), PSNs
//!   starting anywhere (many across the 2^24 wrap), READs of 0 bytes to
//!   2^31 and atomics pushed past the limit, lookups at, inside, around
//!   and far from the recorded ranges with READ RETHs that fit or miss by
//!   one in every rule (R_Key, start, end, 64-bit wrap, PSNs left at
//!   every MTU), atomic and other opcodes, clears;
//! - traces: every resource operation the model's responders made while
//!   two NICs ran READ, atomic and mixed workloads over a lossy,
//!   duplicating, reordering fabric (`record_resource_ops`); the recorded
//!   answers must also be what `duplicate_answer` gives on the replayed
//!   resources.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::FaultConfig;
use rocenic_hdl::codes::mtu;
use rocenic_hdl::responder::rd_atomic_resources::*;
use rocenic_model::responder::{
    duplicate_answer, find_resource, push_resource, read_psns, record_resource_ops,
    DuplicateAnswer, RdResource, ResourceOp,
};
use rocenic_sim::scenario::{run, ScenarioConfig, Workload};
use rocenic_wire::{op, psn, Reth};
use std::collections::{BTreeMap, HashMap, VecDeque};
use verilator_sys::{RdAtomicResources as Dut, Sim};

const DEPTH: u8 = 1 << DEFAULT_SLOT_BITS;
const MTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// A command for one QP index, as the model sees it.
#[derive(Clone, Copy, Debug)]
enum Command {
    Clear,
    Push {
        limit: u8,
        resource: RdResource,
    },
    Lookup {
        opcode: u8,
        psn: u32,
        reth: Option<Reth>,
        mtu: u32,
    },
}

/// A lookup result as the block's ports show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Lookup {
    answer: u64,
    /// (kind, first_psn, npsn, rkey, va or orig) of the resource found.
    found: Option<(u64, u64, u64, u64, u64)>,
}

fn answer_code(a: &DuplicateAnswer) -> u64 {
    match a {
        DuplicateAnswer::NoResource => ANSWER_NO_RESOURCE,
        DuplicateAnswer::Mismatch => ANSWER_MISMATCH,
        DuplicateAnswer::Read { .. } => ANSWER_READ,
        DuplicateAnswer::Atomic { .. } => ANSWER_ATOMIC,
    }
}

fn answer_name(a: &DuplicateAnswer) -> &'static str {
    match a {
        DuplicateAnswer::NoResource => "no resource",
        DuplicateAnswer::Mismatch => "mismatch",
        DuplicateAnswer::Read { .. } => "read",
        DuplicateAnswer::Atomic { .. } => "atomic",
    }
}

fn expected(resources: &VecDeque<RdResource>, p: u32, answer: &DuplicateAnswer) -> Lookup {
    let found = find_resource(resources, p).map(|r| match r {
        RdResource::Read {
            first_psn,
            npsn,
            va,
            rkey,
            ..
        } => (KIND_READ, first_psn.into(), npsn.into(), rkey.into(), va),
        RdResource::Atomic { psn, orig } => (KIND_ATOMIC, psn.into(), 1, 0, orig),
    });
    // The answer's own fields are the resource's.
    match (answer, found) {
        (
            DuplicateAnswer::Read {
                first_psn,
                npsn,
                rkey,
            },
            Some(f),
        ) => {
            assert_eq!(
                (f.1, f.2, f.3),
                ((*first_psn).into(), (*npsn).into(), (*rkey).into())
            );
        }
        (DuplicateAnswer::Atomic { orig }, Some(f)) => assert_eq!(f.4, *orig),
        (DuplicateAnswer::Read { .. } | DuplicateAnswer::Atomic { .. }, None) => {
            panic!("an answer without a resource")
        }
        _ => {}
    }
    Lookup {
        answer: answer_code(answer),
        found,
    }
}

struct Bench {
    sim: Sim<Dut>,
    rng: ChaCha8Rng,
    /// The model's resources per QP index.
    qps: Vec<VecDeque<RdResource>>,
    commands: u64,
    cycles: u64,
    max_cycles: u64,
    seen: BTreeMap<&'static str, u64>,
}

impl Bench {
    fn new(seed: u64) -> Bench {
        let mut sim = Sim::<Dut>::new().expect("rd_atomic_resources is exported");
        sim.set_bit(Dut::RESET, true);
        sim.tick();
        sim.set_bit(Dut::RESET, false);
        Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0xA70),
            qps: vec![VecDeque::new(); 1 << DEFAULT_QPN_BITS],
            commands: 0,
            cycles: 0,
            max_cycles: 0,
            seen: BTreeMap::new(),
        }
    }

    fn drive(&mut self, qpn: usize, c: Option<&Command>) {
        let s = &mut self.sim;
        s.set_bit(Dut::CMD_VALID, c.is_some());
        // Fields a command does not use carry garbage.
        let g: [u64; 4] = self.rng.gen();
        s.set_u64(Dut::CMD_OP, g[0] & 3);
        s.set_u64(Dut::CMD_QPN, (g[0] >> 2) & 0x3FF);
        s.set_u64(Dut::CMD_LIMIT, (g[0] >> 12) & 0xFF);
        s.set_bit(Dut::CMD_KIND, g[0] >> 20 & 1 != 0);
        s.set_u64(Dut::CMD_OPCODE, (g[0] >> 21) & 0xFF);
        s.set_u64(Dut::CMD_PSN, (g[0] >> 29) & 0xFF_FFFF);
        s.set_u64(Dut::CMD_NPSN, g[1] & 0xFF_FFFF);
        s.set_u64(Dut::CMD_VA, g[2]);
        s.set_u64(Dut::CMD_RKEY, g[1] >> 32);
        s.set_u64(Dut::CMD_LEN, g[3] & 0xFFFF_FFFF);
        s.set_u64(Dut::CMD_ORIG, g[3]);
        s.set_u64(Dut::CMD_PATH_MTU, (g[1] >> 24) & 7);
        let Some(c) = c else { return };
        s.set_u64(Dut::CMD_QPN, qpn as u64);
        match *c {
            Command::Clear => s.set_u64(Dut::CMD_OP, OP_CLEAR),
            Command::Push { limit, resource } => {
                s.set_u64(Dut::CMD_OP, OP_PUSH);
                s.set_u64(Dut::CMD_LIMIT, limit.into());
                match resource {
                    RdResource::Read {
                        first_psn,
                        npsn,
                        va,
                        rkey,
                        len,
                    } => {
                        s.set_bit(Dut::CMD_KIND, false);
                        s.set_u64(Dut::CMD_PSN, first_psn.into());
                        s.set_u64(Dut::CMD_NPSN, npsn.into());
                        s.set_u64(Dut::CMD_VA, va);
                        s.set_u64(Dut::CMD_RKEY, rkey.into());
                        s.set_u64(Dut::CMD_LEN, len.into());
                    }
                    RdResource::Atomic { psn, orig } => {
                        s.set_bit(Dut::CMD_KIND, true);
                        s.set_u64(Dut::CMD_PSN, psn.into());
                        s.set_u64(Dut::CMD_ORIG, orig);
                    }
                }
            }
            Command::Lookup {
                opcode,
                psn,
                reth,
                mtu,
            } => {
                s.set_u64(Dut::CMD_OP, OP_LOOKUP);
                s.set_u64(Dut::CMD_OPCODE, opcode.into());
                s.set_u64(Dut::CMD_PSN, psn.into());
                s.set_u64(
                    Dut::CMD_PATH_MTU,
                    mtu::iba_code(mtu).expect("a valid MTU").into(),
                );
                if let Some(r) = reth {
                    s.set_u64(Dut::CMD_VA, r.va);
                    s.set_u64(Dut::CMD_RKEY, r.rkey.into());
                    s.set_u64(Dut::CMD_LEN, r.dma_len.into());
                }
            }
        }
    }

    fn observe(&self) -> Lookup {
        let s = &self.sim;
        Lookup {
            answer: s.get_u64(Dut::RES_ANSWER),
            found: s.get_bit(Dut::RES_FOUND).then(|| {
                (
                    u64::from(s.get_bit(Dut::RES_KIND)),
                    s.get_u64(Dut::RES_FIRST_PSN),
                    s.get_u64(Dut::RES_NPSN),
                    s.get_u64(Dut::RES_RKEY),
                    s.get_u64(Dut::RES_ORIG),
                )
            }),
        }
    }

    /// Runs `c` on QP `qpn` in the model and the RTL; panics (with `what`)
    /// when a lookup's result differs. Returns the model's answer.
    fn command(&mut self, qpn: usize, c: Command, what: &str) -> Option<DuplicateAnswer> {
        let (op_code, want, answer) = match c {
            Command::Clear => {
                self.qps[qpn].clear();
                *self.seen.entry("clear").or_default() += 1;
                (OP_CLEAR, None, None)
            }
            Command::Push { limit, resource } => {
                push_resource(&mut self.qps[qpn], limit, resource);
                *self.seen.entry("push").or_default() += 1;
                (OP_PUSH, None, None)
            }
            Command::Lookup {
                opcode,
                psn,
                reth,
                mtu,
            } => {
                let a = duplicate_answer(&self.qps[qpn], opcode, psn, reth.as_ref(), mtu);
                *self.seen.entry(answer_name(&a)).or_default() += 1;
                (OP_LOOKUP, Some(expected(&self.qps[qpn], psn, &a)), Some(a))
            }
        };
        self.drive(qpn, Some(&c));
        let start = self.cycles;
        let mut offered = true;
        loop {
            self.sim.eval();
            if self.sim.get_bit(Dut::RES_VALID) {
                assert!(!offered, "{what}: result before the command was taken");
                assert_eq!(self.sim.get_u64(Dut::RES_OP), op_code, "{what}");
                assert_eq!(self.sim.get_u64(Dut::RES_QPN), qpn as u64, "{what}");
                if let Some(want) = want {
                    let got = self.observe();
                    assert_eq!(
                        got, want,
                        "{what}: command {} {c:?} on QP {qpn}, resources {:?}",
                        self.commands, self.qps[qpn]
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
            assert!(self.cycles - start < 100, "{what}: command {c:?} stuck");
        }
        let took = self.cycles - start;
        self.max_cycles = self.max_cycles.max(took);
        // The documented latency: 3 cycles, a lookup 4 + the entries walked.
        let bound = if want.is_some() {
            4 + u64::from(DEPTH)
        } else {
            3
        };
        assert!(took <= bound, "{what}: {c:?} took {took} cycles");
        self.commands += 1;
        answer
    }
}

/// Per random QP: its index, limit, the PSN the next request starts at.
struct RandomQp {
    index: usize,
    limit: u8,
    next_psn: u32,
    mtu: u32,
}

fn random_len(rng: &mut ChaCha8Rng, mtu: u32) -> u32 {
    match rng.gen_range(0..6) {
        0 => 0,
        1 => rng.gen_range(1..=64),
        2 => mtu * rng.gen_range(1..=8),
        3 => mtu * rng.gen_range(1..=8) + rng.gen_range(0..3) - 1,
        4 => rng.gen_range(1..=1 << 31),
        _ => rng.gen_range(1..=16 * mtu),
    }
}

/// A READ RETH for a duplicate at `p` of the recorded READ `r`: one that
/// fits, or one that misses by one in one rule.
fn retry_reth(rng: &mut ChaCha8Rng, r: &RdResource, p: u32, mtu: u32) -> Reth {
    let RdResource::Read {
        first_psn,
        npsn,
        va,
        rkey,
        len,
    } = *r
    else {
        unreachable!()
    };
    // The requester resumes at `p`: the bytes from that packet on.
    let into = psn::diff(p, first_psn) as u64 * u64::from(mtu);
    let start = va + into.min(u64::from(len));
    let rest = (va + u64::from(len) - start) as u32;
    let mut reth = Reth {
        va: start,
        rkey,
        dma_len: rest,
    };
    match rng.gen_range(0..10) {
        0 => reth.rkey ^= 1 << rng.gen_range(0..32),
        1 => reth.va = reth.va.wrapping_sub(1),
        2 => reth.dma_len = reth.dma_len.wrapping_add(1),
        3 => {
            // The end wraps the 64-bit space.
            reth.va = u64::MAX - rng.gen_range(0..8);
            reth.dma_len = rng.gen_range(9..=1 << 20);
        }
        4 => reth.dma_len = rng.gen_range(0..=reth.dma_len),
        5 => {
            let k = rng.gen_range(0..=reth.dma_len);
            reth.va += u64::from(k);
            reth.dma_len -= k;
        }
        6 => reth.dma_len = rng.gen(),
        7 => {
            // Exactly the PSNs left, and one byte more.
            let left = npsn - psn::diff(p, first_psn) as u32;
            reth.dma_len = (left * mtu).wrapping_add(rng.gen_range(0..2));
            reth.va = va;
            reth.rkey = rkey;
        }
        _ => {}
    }
    reth
}

fn random_command(
    rng: &mut ChaCha8Rng,
    qp: &mut RandomQp,
    resources: &VecDeque<RdResource>,
) -> Command {
    match rng.gen_range(0..100) {
        0 => Command::Clear,
        1 => {
            qp.limit = rng.gen_range(0..=DEPTH);
            Command::Clear
        }
        2..=40 => {
            let p = qp.next_psn;
            let resource = if rng.gen_bool(0.6) {
                let len = random_len(rng, qp.mtu);
                let npsn = read_psns(len, qp.mtu);
                qp.next_psn = psn::add(p, npsn);
                RdResource::Read {
                    first_psn: p,
                    npsn,
                    va: rng.gen_range(0..1 << 48),
                    rkey: rng.gen(),
                    len,
                }
            } else {
                qp.next_psn = psn::add(p, 1);
                RdResource::Atomic {
                    psn: p,
                    orig: rng.gen(),
                }
            };
            // Sometimes the requester skipped PSNs (SEND/WRITE between).
            if rng.gen_bool(0.2) {
                qp.next_psn = psn::add(qp.next_psn, rng.gen_range(1..5));
            }
            Command::Push {
                limit: qp.limit,
                resource,
            }
        }
        _ => {
            let mtu = if rng.gen_bool(0.9) {
                qp.mtu
            } else {
                MTUS[rng.gen_range(0..MTUS.len())]
            };
            let target = (!resources.is_empty() && rng.gen_bool(0.85))
                .then(|| resources[rng.gen_range(0..resources.len())]);
            let p = match target {
                Some(RdResource::Read {
                    first_psn, npsn, ..
                }) => match rng.gen_range(0..5) {
                    0 => first_psn,
                    1 => psn::add(first_psn, npsn - 1),
                    2 => psn::add(first_psn, npsn),
                    3 => psn::sub(first_psn, 1),
                    _ => psn::add(first_psn, rng.gen_range(0..npsn)),
                },
                Some(RdResource::Atomic { psn: p, .. }) => match rng.gen_range(0..4) {
                    0 => psn::add(p, 1),
                    1 => psn::sub(p, 1),
                    _ => p,
                },
                None => match rng.gen_range(0..3) {
                    0 => rng.gen_range(0..1 << 24),
                    1 => psn::add(qp.next_psn, rng.gen_range(0..3)),
                    _ => psn::sub(qp.next_psn, rng.gen_range(1..40)),
                },
            };
            let opcode = match (target, rng.gen_range(0..10)) {
                (_, 0) => [op::SEND_ONLY, op::WRITE_ONLY, 0x1F][rng.gen_range(0..3)],
                (_, 1) => op::READ_REQUEST,
                (_, 2) => op::COMPARE_SWAP,
                (Some(RdResource::Read { .. }), _) => op::READ_REQUEST,
                (_, k) if k < 6 => op::FETCH_ADD,
                _ => op::COMPARE_SWAP,
            };
            let reth = (opcode == op::READ_REQUEST).then(|| match (target, rng.gen_bool(0.9)) {
                (
                    Some(
                        r @ RdResource::Read {
                            first_psn, npsn, ..
                        },
                    ),
                    true,
                ) if psn::diff(p, first_psn) >= 0 && (psn::diff(p, first_psn) as u32) < npsn => {
                    retry_reth(rng, &r, p, mtu)
                }
                _ => Reth {
                    va: rng.gen(),
                    rkey: rng.gen(),
                    dma_len: random_len(rng, mtu),
                },
            });
            Command::Lookup {
                opcode,
                psn: p,
                reth,
                mtu,
            }
        }
    }
}

fn run_random(seed: u64, commands: usize) -> Bench {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut bench = Bench::new(seed);
    let mut qps: Vec<RandomQp> = (0..24)
        .map(|i| RandomQp {
            index: i * 41 + rng.gen_range(0..41),
            limit: if i == 0 {
                DEPTH
            } else {
                rng.gen_range(0..=DEPTH)
            },
            next_psn: if rng.gen_bool(0.5) {
                0xFF_FFFF - rng.gen_range(0..200)
            } else {
                rng.gen_range(0..1 << 24)
            },
            mtu: MTUS[rng.gen_range(0..MTUS.len())],
        })
        .collect();
    for n in 0..commands {
        let qp = &mut qps[rng.gen_range(0..24)];
        let c = random_command(&mut rng, qp, &bench.qps[qp.index]);
        let what = format!("seed {seed:#x}, command {n}");
        bench.command(qp.index, c, &what);
    }
    bench
}

#[test]
fn random_commands_match_the_model() {
    let mut seen = BTreeMap::new();
    let mut commands = 0;
    let mut cycles = 0;
    let mut max_cycles = 0;
    for seed in [1u64, 0xBEEF, 0x5EED_0003] {
        let bench = run_random(seed, 6_000);
        for (k, v) in &bench.seen {
            *seen.entry(*k).or_insert(0) += v;
        }
        commands += bench.commands;
        cycles += bench.cycles;
        max_cycles = max_cycles.max(bench.max_cycles);
    }
    eprintln!("{commands} commands in {cycles} cycles (longest {max_cycles}); {seen:?}");
    for k in ["clear", "push", "no resource", "mismatch", "read", "atomic"] {
        assert!(seen.get(k).copied().unwrap_or(0) > 200, "{k}: {seen:?}");
    }
    // A lookup walking all 16 entries of a full FIFO was reached.
    assert_eq!(max_cycles, 4 + u64::from(DEPTH));
}

#[test]
fn model_traces_under_loss_match() {
    let mut seen = BTreeMap::new();
    let mut records = 0;
    for (k, workload) in [Workload::Read, Workload::Atomic, Workload::Mix]
        .into_iter()
        .enumerate()
    {
        for (loss, size, mtu) in [
            (0.03, 20_000, 1024),
            (0.06, 3000, 256),
            (0.05, 70_000, 4096),
        ] {
            let config = ScenarioConfig {
                workload,
                size,
                count: 16,
                qps: 2,
                mtu,
                faults: FaultConfig::lossy(loss, 3_000),
                seed: 900 + k as u64 * 10 + (loss * 100.0) as u64,
                ..ScenarioConfig::default()
            };
            let (report, trace) =
                record_resource_ops(|| run(&config, None).expect("scenario runs"));
            assert!(
                report.data_verified,
                "{config:?}: the model itself failed: {:?}",
                report.mismatches
            );
            let mut bench = Bench::new(config.seed);
            let mut index: HashMap<(Option<std::net::IpAddr>, u32), usize> = HashMap::new();
            for (n, r) in trace.iter().enumerate() {
                let next = index.len();
                let qpn = *index.entry((r.local_ip, r.qpn)).or_insert(next);
                let what = format!("{workload:?} loss {loss} MTU {mtu}: record {n}");
                let c = match r.op {
                    ResourceOp::Clear => Command::Clear,
                    ResourceOp::Push {
                        max_dest_rd_atomic,
                        resource,
                    } => Command::Push {
                        limit: max_dest_rd_atomic,
                        resource,
                    },
                    ResourceOp::Lookup {
                        opcode,
                        psn,
                        reth,
                        mtu,
                        ..
                    } => Command::Lookup {
                        opcode,
                        psn,
                        reth,
                        mtu,
                    },
                };
                let got = bench.command(qpn, c, &what);
                if let ResourceOp::Lookup { answer, .. } = r.op {
                    assert_eq!(got, Some(answer), "{what}: the model's recorded answer");
                }
            }
            records += trace.len();
            for (k, v) in bench.seen {
                *seen.entry(k).or_insert(0) += v;
            }
        }
    }
    eprintln!("{records} recorded operations; {seen:?}");
    for k in ["clear", "push", "read", "atomic"] {
        assert!(seen.get(k).copied().unwrap_or(0) > 0, "{k}: {seen:?}");
    }
    assert!(records > 1_000, "{records}");
}
