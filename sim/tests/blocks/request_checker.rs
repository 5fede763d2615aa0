//! Request checker lockstep: the Verilated `RequestChecker` against
//! `rocenic_model::responder::check_request`, the function the model's
//! responder itself decides with. Every outcome is compared field for
//! field: verdict (with the duplicate class and the placement), the ACK or
//! NAK, the whole 288-bit context record written back (the changed fields
//! and every other bit as read), the message in progress, and the
//! pass-through of the PSN, opcode, RETH and AtomicETH.
//!
//! Two sources of requests, one per cycle with random gaps:
//! - random: a few QPs whose state evolves by the outcomes (as the
//!   context RMW does) and is disturbed at random, every request opcode
//!   and a few others, PSNs in order, behind and ahead (up to the 2^23
//!   edge, across the 2^24 wrap), lengths at and around the MTU rules,
//!   RETH lengths that fit or not, every QP state, rights, receive WQE or
//!   not, NAK already sent or not;
//! - traces: every request check the model's responders made while two
//!   NICs ran workloads over a lossy, duplicating, reordering fabric
//!   (`rocenic_sim::scenario`), and while the model's own test harness
//!   (sim/model/tests/common) provoked RNR NAKs, a QP without the remote
//!   right and a misaligned atomic.

use crate::rtl_common::faults::lossy;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::codes::{duplicate_class, mtu, qp_state, request_verdict};
use rocenic_hdl::qp::qp_context_record::{QpContextRecord, RECORD_WORDS};
use rocenic_model::responder::{
    check_request, record_checks, CheckInput, CheckOutcome, DuplicateClass, Message, Response,
    Verdict,
};
use rocenic_model::verbs::{Access, QpState};
use rocenic_sim::scenario::{run, ScenarioConfig, Workload};
use rocenic_wire::{op, psn, AtomicEth, Reth};
use std::collections::BTreeMap;
use verilator_sys::{RequestChecker as Rtl, Sim};

use crate::harness;

fn in_progress_code(m: &Message) -> u32 {
    match m {
        Message::None => 0,
        Message::Send { .. } => 1,
        Message::Write { .. } => 2,
    }
}

/// The message RAM word: `va`, `rkey`, `len`, `offset` from bit 0.
fn message_words(m: &Message) -> [u64; 3] {
    match *m {
        Message::None => [0; 3],
        Message::Send { offset } => [0, 0, offset],
        Message::Write {
            va,
            rkey,
            len,
            offset,
        } => [
            va,
            u64::from(rkey) | u64::from(len) << 32,
            u64::from(offset),
        ],
    }
}

/// The context record the QP context RAM would hold for `i`; `rest` fills
/// the fields the checker does not read, which must come back unchanged.
fn record_of(i: &CheckInput, rest: &QpContextRecord) -> QpContextRecord {
    QpContextRecord {
        state: qp_state::encode(i.state),
        access: u32::from(i.access.0 & 0xF),
        path_mtu: mtu::iba_code(i.mtu).expect("a valid MTU"),
        rq_epsn: i.epsn,
        rq_msn: i.msn,
        nak_sent: u32::from(i.nak_sent),
        // The record holds 5 bits (the driver refuses more); only zero
        // or not matters here.
        max_dest_rd_atomic: u32::from(i.max_dest_rd_atomic).min(31),
        min_rnr_timer: u32::from(i.min_rnr_timer),
        in_progress: in_progress_code(&i.message),
        ..*rest
    }
}

/// The RTL's outcome in the model's terms, with what it was given back.
#[derive(Debug, PartialEq)]
struct Observed {
    tag: u64,
    outcome: CheckOutcome,
    record: QpContextRecord,
    message: [u64; 3],
}

struct Bench {
    sim: Sim<Rtl>,
    /// The request presented last cycle and what the RTL must say of it.
    pending: Option<(u64, CheckInput, Observed)>,
    cycle: u64,
    checked: u64,
    verdicts: BTreeMap<String, u64>,
}

impl Bench {
    fn new() -> Bench {
        let mut sim = Sim::<Rtl>::new().expect("request_checker is exported");
        sim.set_bit(Rtl::RESET, true);
        sim.tick();
        sim.set_bit(Rtl::RESET, false);
        Bench {
            sim,
            pending: None,
            cycle: 0,
            checked: 0,
            verdicts: BTreeMap::new(),
        }
    }

    fn drive(&mut self, i: &CheckInput, record: &QpContextRecord, tag: u64) {
        let s = &mut self.sim;
        s.set_bit(Rtl::REQ_VALID, true);
        s.set_u64(Rtl::REQ_TAG, tag);
        s.set_u64(Rtl::REQ_OPCODE, u64::from(i.opcode));
        s.set_u64(Rtl::REQ_PSN, u64::from(i.psn));
        s.set_bit(Rtl::REQ_ACK_REQ, i.ack_req);
        s.set_u64(Rtl::REQ_PAYLOAD_LEN, u64::from(i.payload_len));
        // Absent headers' fields carry garbage: the parser zeroes them,
        // but the checker must not look.
        let reth = i.reth.unwrap_or(Reth {
            va: 0x5555_AAAA_0000_1000,
            rkey: 0x1234,
            dma_len: i.payload_len,
        });
        s.set_bit(Rtl::REQ_HAS_RETH, i.reth.is_some());
        s.set_u64(Rtl::REQ_RETH_VA, reth.va);
        s.set_u64(Rtl::REQ_RETH_RKEY, u64::from(reth.rkey));
        s.set_u64(Rtl::REQ_RETH_DMA_LEN, u64::from(reth.dma_len));
        let a = i.atomic_eth.unwrap_or(AtomicEth {
            va: 0x1000,
            rkey: 0x4321,
            swap_add: 7,
            compare: 9,
        });
        s.set_bit(Rtl::REQ_HAS_ATOMIC_ETH, i.atomic_eth.is_some());
        s.set_u64(Rtl::REQ_ATOMIC_VA, a.va);
        s.set_u64(Rtl::REQ_ATOMIC_RKEY, u64::from(a.rkey));
        s.set_u64(Rtl::REQ_ATOMIC_SWAP_ADD, a.swap_add);
        s.set_u64(Rtl::REQ_ATOMIC_COMPARE, a.compare);
        s.set(
            Rtl::REQ_CONTEXT,
            &record.pack().expect("record fields in range"),
        );
        s.set(Rtl::REQ_MESSAGE, &message_words(&i.message));
        s.set_bit(Rtl::REQ_RQ_AVAILABLE, i.rq_available);
    }

    fn observe(&self) -> Option<Observed> {
        let s = &self.sim;
        if !s.get_bit(Rtl::OUT_VALID) {
            return None;
        }
        let u = |p| s.get_u64(p);
        let dup = duplicate_class::decode(u(Rtl::OUT_DUP_CLASS)).expect("a 2-bit class");
        let verdict = match u(Rtl::OUT_VERDICT) {
            request_verdict::QP_STATE => Verdict::QpState,
            request_verdict::OUT_OF_SEQUENCE => Verdict::OutOfSequence,
            request_verdict::DUPLICATE => Verdict::Duplicate(dup),
            request_verdict::RNR => Verdict::Rnr,
            request_verdict::INVALID_REQUEST => Verdict::InvalidRequest,
            request_verdict::REMOTE_ACCESS => Verdict::RemoteAccess,
            request_verdict::SEND => Verdict::Send {
                offset: u(Rtl::OUT_RECV_OFFSET),
                len: u(Rtl::OUT_PLACE_LEN) as u32,
                take_wqe: s.get_bit(Rtl::OUT_TAKE_WQE),
                last: s.get_bit(Rtl::OUT_LAST),
            },
            request_verdict::WRITE => Verdict::Write {
                va: u(Rtl::OUT_PLACE_VA),
                rkey: u(Rtl::OUT_PLACE_RKEY) as u32,
                len: u(Rtl::OUT_PLACE_LEN) as u32,
                whole_len: u(Rtl::OUT_WHOLE_LEN) as u32,
                take_wqe: s.get_bit(Rtl::OUT_TAKE_WQE),
                last: s.get_bit(Rtl::OUT_LAST),
            },
            request_verdict::READ => Verdict::Read {
                npsn: u(Rtl::OUT_READ_NPSN) as u32,
            },
            request_verdict::ATOMIC => Verdict::Atomic,
            v => panic!("verdict code {v}"),
        };
        let mut words = [0u64; RECORD_WORDS];
        s.get_into(Rtl::OUT_CONTEXT, &mut words);
        let record = QpContextRecord::unpack(&words);
        let mut message = [0u64; 3];
        s.get_into(Rtl::OUT_MESSAGE, &mut message);
        let m = message;
        let decoded = match record.in_progress {
            1 => Message::Send { offset: m[2] },
            2 => Message::Write {
                va: m[0],
                rkey: m[1] as u32,
                len: (m[1] >> 32) as u32,
                offset: m[2] as u32,
            },
            _ => Message::None,
        };
        let outcome = CheckOutcome {
            verdict,
            response: s.get_bit(Rtl::OUT_RESPONSE_VALID).then(|| Response {
                syndrome: u(Rtl::OUT_RESPONSE_SYNDROME) as u8,
                psn: u(Rtl::OUT_RESPONSE_PSN) as u32,
                msn: u(Rtl::OUT_RESPONSE_MSN) as u32,
            }),
            to_error: record.state == 4,
            epsn: record.rq_epsn,
            msn: record.rq_msn,
            nak_sent: record.nak_sent != 0,
            message: decoded,
        };
        Some(Observed {
            tag: u(Rtl::OUT_TAG),
            outcome,
            record,
            message,
        })
    }

    /// Checks the outcome presented this cycle (of last cycle's request).
    fn check(&mut self, context: &str) {
        self.sim.eval();
        let got = self.observe();
        let Some((tag, input, want)) = self.pending.take() else {
            assert!(got.is_none(), "{context}: an outcome without a request");
            return;
        };
        let got = got.unwrap_or_else(|| panic!("{context}: no outcome for request {tag}"));
        // `to_error` is read back from the record state: in ERR already.
        let mut want = want;
        want.outcome.to_error |= input.state == QpState::Err;
        assert_eq!(got, want, "{context}: request {tag}: {input:?}");
        let u = |p| self.sim.get_u64(p);
        assert_eq!(u(Rtl::OUT_PSN), u64::from(input.psn), "{context}");
        assert_eq!(u(Rtl::OUT_OPCODE), u64::from(input.opcode), "{context}");
        let v = want.outcome.verdict;
        if matches!(
            v,
            Verdict::Read { .. } | Verdict::Duplicate(DuplicateClass::Read)
        ) {
            // (A READ without a RETH is refused before it gets here.)
            let r = input.reth.unwrap_or(Reth {
                va: 0x5555_AAAA_0000_1000,
                rkey: 0x1234,
                dma_len: input.payload_len,
            });
            assert_eq!(
                (
                    u(Rtl::OUT_PLACE_VA),
                    u(Rtl::OUT_PLACE_RKEY),
                    u(Rtl::OUT_PLACE_LEN)
                ),
                (r.va, u64::from(r.rkey), u64::from(r.dma_len)),
                "{context}: RETH passed through"
            );
        }
        if matches!(
            v,
            Verdict::Atomic | Verdict::Duplicate(DuplicateClass::Atomic)
        ) {
            if let Some(a) = input.atomic_eth {
                assert_eq!(
                    (
                        u(Rtl::OUT_PLACE_VA),
                        u(Rtl::OUT_PLACE_RKEY),
                        u(Rtl::OUT_PLACE_LEN),
                        u(Rtl::OUT_SWAP_ADD),
                        u(Rtl::OUT_COMPARE)
                    ),
                    (a.va, u64::from(a.rkey), 8, a.swap_add, a.compare),
                    "{context}: AtomicETH passed through"
                );
            }
        }
        let name = format!("{v:?}");
        let key = name.split([' ', '{']).next().unwrap_or("").to_string();
        *self.verdicts.entry(key).or_default() += 1;
        self.checked += 1;
    }

    /// One cycle: presents `req` (or nothing), checks last cycle's.
    fn cycle(&mut self, req: Option<(&CheckInput, &QpContextRecord)>, context: &str) {
        match req {
            Some((i, rest)) => {
                let tag = self.cycle & 0xFFFF;
                let record = record_of(i, rest);
                self.drive(i, &record, tag);
                self.sim.eval();
                self.check(context);
                let outcome = check_request(i);
                let mut want_record = record;
                want_record.rq_epsn = outcome.epsn;
                want_record.rq_msn = outcome.msn;
                want_record.nak_sent = u32::from(outcome.nak_sent);
                want_record.in_progress = in_progress_code(&outcome.message);
                if outcome.to_error {
                    want_record.state = 4;
                }
                let want = Observed {
                    tag,
                    outcome,
                    record: want_record,
                    message: message_words(&outcome.message),
                };
                self.pending = Some((tag, *i, want));
            }
            None => {
                self.sim.set_bit(Rtl::REQ_VALID, false);
                self.sim.eval();
                self.check(context);
            }
        }
        self.sim.tick();
        self.cycle += 1;
    }

    fn flush(&mut self, context: &str) {
        self.cycle(None, context);
    }
}

const REQUEST_OPCODES: [u8; 17] = [
    op::SEND_FIRST,
    op::SEND_MIDDLE,
    op::SEND_LAST,
    op::SEND_LAST_IMM,
    op::SEND_ONLY,
    op::SEND_ONLY_IMM,
    op::WRITE_FIRST,
    op::WRITE_MIDDLE,
    op::WRITE_LAST,
    op::WRITE_LAST_IMM,
    op::WRITE_ONLY,
    op::WRITE_ONLY_IMM,
    op::READ_REQUEST,
    op::COMPARE_SWAP,
    op::FETCH_ADD,
    op::SEND_LAST_INV,
    op::SEND_ONLY_INV,
];
const MTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];
const STATES: [QpState; 5] = [
    QpState::Reset,
    QpState::Init,
    QpState::Rtr,
    QpState::Rts,
    QpState::Err,
];

/// A fresh live QP at a random place in PSN and MSN space.
fn random_qp(rng: &mut ChaCha8Rng) -> CheckInput {
    let edge = |rng: &mut ChaCha8Rng| {
        if rng.gen_bool(0.3) {
            0xFF_FFFF - rng.gen_range(0..4)
        } else {
            rng.gen_range(0..1 << 24)
        }
    };
    CheckInput {
        state: if rng.gen_bool(0.5) {
            QpState::Rts
        } else {
            QpState::Rtr
        },
        mtu: MTUS[rng.gen_range(0..MTUS.len())],
        access: Access(0xE),
        epsn: edge(rng),
        msn: edge(rng),
        nak_sent: false,
        max_dest_rd_atomic: rng.gen_range(1..=16),
        min_rnr_timer: rng.gen_range(0..32),
        message: Message::None,
        rq_available: true,
        opcode: 0,
        psn: 0,
        ack_req: false,
        payload_len: 0,
        reth: None,
        atomic_eth: None,
    }
}

/// The next opcode a well-behaved requester would send.
fn sensible_opcode(rng: &mut ChaCha8Rng, m: &Message) -> u8 {
    let pick = |rng: &mut ChaCha8Rng, ops: &[u8]| ops[rng.gen_range(0..ops.len())];
    match m {
        Message::None => pick(
            rng,
            &[
                op::SEND_FIRST,
                op::SEND_ONLY,
                op::SEND_ONLY_IMM,
                op::SEND_ONLY_INV,
                op::WRITE_FIRST,
                op::WRITE_ONLY,
                op::WRITE_ONLY_IMM,
                op::READ_REQUEST,
                op::COMPARE_SWAP,
                op::FETCH_ADD,
            ],
        ),
        Message::Send { .. } => pick(
            rng,
            &[
                op::SEND_MIDDLE,
                op::SEND_MIDDLE,
                op::SEND_LAST,
                op::SEND_LAST_IMM,
                op::SEND_LAST_INV,
            ],
        ),
        Message::Write { len, offset, .. } => {
            let left = len - offset;
            if left > 4096 && rng.gen_bool(0.8) {
                op::WRITE_MIDDLE
            } else {
                pick(rng, &[op::WRITE_MIDDLE, op::WRITE_LAST, op::WRITE_LAST_IMM])
            }
        }
    }
}

/// A request for `qp` (its context fields filled in), mostly what a
/// requester would send, often not.
fn random_request(rng: &mut ChaCha8Rng, qp: &CheckInput) -> CheckInput {
    let mut i = *qp;
    i.opcode = match rng.gen_range(0..100) {
        0..=69 => sensible_opcode(rng, &qp.message),
        70..=96 => REQUEST_OPCODES[rng.gen_range(0..REQUEST_OPCODES.len())],
        _ => [0x0D, 0x11, 0x15, 0x18, 0x1F, 0x64][rng.gen_range(0..6)],
    };
    i.psn = match rng.gen_range(0..100) {
        0..=64 => qp.epsn,
        65..=76 => psn::sub(qp.epsn, rng.gen_range(1..=8)),
        77..=80 => psn::sub(qp.epsn, [1 << 23, (1 << 23) - 1][rng.gen_range(0..2)]),
        81..=90 => psn::add(qp.epsn, rng.gen_range(1..=8)),
        91..=94 => psn::add(qp.epsn, (1 << 23) - rng.gen_range(1..=2)),
        _ => rng.gen_range(0..1 << 24),
    };
    i.ack_req = rng.gen_bool(0.5);
    let mtu = qp.mtu;
    let (first, last) = match i.opcode {
        op::SEND_FIRST | op::WRITE_FIRST => (true, false),
        op::SEND_MIDDLE | op::WRITE_MIDDLE => (false, false),
        op::SEND_LAST
        | op::SEND_LAST_IMM
        | op::SEND_LAST_INV
        | op::WRITE_LAST
        | op::WRITE_LAST_IMM => (false, true),
        _ => (true, true),
    };
    let remaining = match qp.message {
        Message::Write { len, offset, .. } => len.saturating_sub(offset),
        _ => rng.gen_range(1..=mtu),
    };
    i.payload_len = if rng.gen_bool(0.85) {
        match (first, last) {
            (_, false) => mtu,
            (false, true) => remaining.clamp(1, mtu),
            (true, true) => rng.gen_range(0..=mtu),
        }
    } else {
        match rng.gen_range(0..6) {
            0 => 0,
            1 => mtu + 1,
            2 => mtu - 1,
            3 => remaining + 1,
            4 => remaining.saturating_sub(1),
            _ => rng.gen_range(0..=4096),
        }
    };
    if i.opcode == op::READ_REQUEST || (op::WRITE_FIRST..=op::WRITE_ONLY_IMM).contains(&i.opcode) {
        let dma_len = match (i.opcode, rng.gen_range(0..100)) {
            (op::WRITE_FIRST, 0..=39) => mtu * rng.gen_range(1..=6) + rng.gen_range(1..=mtu),
            // Whole MTUs: the MIDDLE before the end would fill it exactly.
            (op::WRITE_FIRST, 40..=79) => mtu * rng.gen_range(2..=4),
            (op::WRITE_ONLY | op::WRITE_ONLY_IMM, 0..=79) => i.payload_len,
            (op::READ_REQUEST, 0..=79) => rng.gen_range(0..=5 * mtu),
            (_, 80..=84) => 1 << 31,
            (_, 85..=89) => (1 << 31) + 1,
            (_, 90..=92) => mtu,
            (_, 93..=94) => 0,
            _ => rng.gen(),
        };
        let has = rng.gen_bool(0.97)
            && matches!(
                i.opcode,
                op::WRITE_FIRST | op::WRITE_ONLY | op::WRITE_ONLY_IMM | op::READ_REQUEST
            );
        i.reth = has.then(|| Reth {
            va: rng.gen(),
            rkey: rng.gen(),
            dma_len,
        });
    } else {
        i.reth = None;
    }
    i.atomic_eth = (matches!(i.opcode, op::COMPARE_SWAP | op::FETCH_ADD) && rng.gen_bool(0.97))
        .then(|| AtomicEth {
            va: rng.gen::<u64>() & if rng.gen_bool(0.8) { !7 } else { !0 },
            rkey: rng.gen(),
            swap_add: rng.gen(),
            compare: rng.gen(),
        });
    i
}

/// Random disturbances of a QP between requests: state, rights, receive
/// queue, NAK flag, resources, a message in progress out of nowhere.
fn disturb(rng: &mut ChaCha8Rng, qp: &mut CheckInput) {
    match rng.gen_range(0..100) {
        0..=2 => qp.state = STATES[rng.gen_range(0..STATES.len())],
        3..=5 => qp.access = Access(rng.gen_range(0..16)),
        6..=15 => qp.rq_available = !qp.rq_available,
        16..=19 => qp.nak_sent = !qp.nak_sent,
        20..=21 => qp.max_dest_rd_atomic = rng.gen_range(0..2),
        22..=23 => {
            qp.message = Message::Write {
                va: rng.gen(),
                rkey: rng.gen(),
                len: rng.gen(),
                offset: rng.gen(),
            }
        }
        24..=25 => {
            qp.message = Message::Send {
                offset: rng.gen_range(0..1 << 31),
            }
        }
        26 => *qp = random_qp(rng),
        _ => {}
    }
}

fn random_rest(rng: &mut ChaCha8Rng) -> QpContextRecord {
    let mut r = QpContextRecord::default();
    for f in rocenic_hdl::qp::qp_context_record::FIELDS {
        r.set_field(*f, rng.gen_range(0..=f.max()) as u32);
    }
    r
}

#[test]
fn random_requests_match_the_model() {
    let mut total: BTreeMap<String, u64> = BTreeMap::new();
    let mut checked = 0;
    for seed in 0..8u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut bench = Bench::new();
        let mut qps: Vec<CheckInput> = (0..4).map(|_| random_qp(&mut rng)).collect();
        let rests: Vec<QpContextRecord> = (0..4).map(|_| random_rest(&mut rng)).collect();
        for n in 0..25_000 {
            let context = format!("seed {seed} cycle {n}");
            if rng.gen_bool(0.1) {
                bench.cycle(None, &context);
                continue;
            }
            let q = rng.gen_range(0..qps.len());
            disturb(&mut rng, &mut qps[q]);
            let req = random_request(&mut rng, &qps[q]);
            bench.cycle(Some((&req, &rests[q])), &context);
            // The context RMW: the QP continues from the outcome; a QP in
            // ERR (or RESET, INIT) comes back live now and then.
            let out = check_request(&req);
            let qp = &mut qps[q];
            qp.epsn = out.epsn;
            qp.msn = out.msn;
            qp.nak_sent = out.nak_sent;
            qp.message = out.message;
            if out.to_error {
                qp.state = QpState::Err;
            }
            if !matches!(qp.state, QpState::Rtr | QpState::Rts) && rng.gen_bool(0.5) {
                *qp = random_qp(&mut rng);
            }
        }
        bench.flush(&format!("seed {seed} end"));
        checked += bench.checked;
        for (k, v) in bench.verdicts {
            *total.entry(k).or_default() += v;
        }
    }
    eprintln!("random: {checked} requests checked, verdicts {total:?}");
    for v in [
        "QpState",
        "OutOfSequence",
        "Duplicate(SendWrite)",
        "Duplicate(Read)",
        "Duplicate(Atomic)",
        "Duplicate(Other)",
        "Rnr",
        "InvalidRequest",
        "RemoteAccess",
        "Send",
        "Write",
        "Read",
        "Atomic",
    ] {
        assert!(total.get(v).copied().unwrap_or(0) >= 100, "{v}: {total:?}");
    }
}

#[test]
fn psn_classes_at_the_wrap_and_the_half_space_edge() {
    let mut bench = Bench::new();
    let rest = QpContextRecord::default();
    for epsn in [0, 1, 0x7F_FFFF, 0x80_0000, 0xFF_FFFE, 0xFF_FFFF] {
        for delta in [0i64, 1, -1, 2, -2, (1 << 23) - 1, -(1 << 23) + 1, 1 << 23] {
            for nak_sent in [false, true] {
                let mut i = CheckInput {
                    epsn,
                    nak_sent,
                    state: QpState::Rts,
                    mtu: 1024,
                    ..random_qp(&mut ChaCha8Rng::seed_from_u64(1))
                };
                i.opcode = op::SEND_ONLY;
                i.psn = (i64::from(epsn) + delta).rem_euclid(1 << 24) as u32;
                i.payload_len = 100;
                i.ack_req = true;
                let want = match psn::diff(i.psn, epsn) {
                    0 => "Send",
                    d if d > 0 => "OutOfSequence",
                    _ => "Duplicate",
                };
                let got = format!("{:?}", check_request(&i).verdict);
                assert!(got.starts_with(want), "{epsn:#x} {delta}: {got}");
                bench.cycle(Some((&i, &rest)), &format!("epsn {epsn:#x} delta {delta}"));
            }
        }
    }
    bench.flush("end");
    assert_eq!(bench.checked, 6 * 8 * 2);
}

/// Every request check of both NICs' responders in a scenario.
fn scenario_trace(config: &ScenarioConfig) -> Vec<(CheckInput, CheckOutcome)> {
    let (report, trace) = record_checks(|| run(config, None).expect("scenario runs"));
    assert!(
        report.data_verified,
        "{config:?}: the model itself failed: {:?}",
        report.mismatches
    );
    trace
}

#[test]
fn model_traces_under_loss_match() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut total: BTreeMap<String, u64> = BTreeMap::new();
    let mut requests = 0;
    for (k, workload) in [
        Workload::Write,
        Workload::Read,
        Workload::Send,
        Workload::Atomic,
        Workload::Mix,
    ]
    .into_iter()
    .enumerate()
    {
        for (loss, size, mtu) in [
            (0.02, 20_000, 1024),
            (0.05, 70_000, 4096),
            (0.05, 3000, 256),
        ] {
            let config = ScenarioConfig {
                workload,
                size,
                count: 12,
                qps: 2,
                mtu,
                faults: lossy(loss),
                seed: 500 + k as u64 * 10 + (loss * 100.0) as u64,
                ..ScenarioConfig::default()
            };
            let trace = scenario_trace(&config);
            assert!(!trace.is_empty(), "{config:?}");
            let rest = random_rest(&mut rng);
            let mut bench = Bench::new();
            for (n, (input, outcome)) in trace.iter().enumerate() {
                // The trace is the model's: check_request is what it ran.
                assert_eq!(&check_request(input), outcome);
                let context = format!("{workload:?} loss {loss} size {size}: request {n}");
                bench.cycle(Some((input, &rest)), &context);
                if rng.gen_bool(0.05) {
                    bench.cycle(None, &context);
                }
            }
            requests += trace.len();
            bench.flush("trace end");
            assert_eq!(bench.checked, trace.len() as u64);
            for (k, v) in bench.verdicts {
                *total.entry(k).or_default() += v;
            }
        }
    }
    eprintln!("traces: {requests} requests checked, verdicts {total:?}");
    for v in [
        "OutOfSequence",
        "Duplicate(SendWrite)",
        "Send",
        "Write",
        "Read",
    ] {
        assert!(total.get(v).copied().unwrap_or(0) > 0, "{v}: {total:?}");
    }
}

/// Runs `trace` through the RTL one request per cycle; the verdict counts.
fn replay(name: &str, trace: &[(CheckInput, CheckOutcome)]) -> BTreeMap<String, u64> {
    let mut bench = Bench::new();
    let rest = random_rest(&mut ChaCha8Rng::seed_from_u64(trace.len() as u64));
    for (n, (input, outcome)) in trace.iter().enumerate() {
        assert_eq!(&check_request(input), outcome);
        bench.cycle(Some((input, &rest)), &format!("{name}: request {n}"));
    }
    bench.flush(name);
    assert_eq!(bench.checked, trace.len() as u64);
    bench.verdicts
}

#[test]
fn model_error_traces_match() {
    use harness::*;
    use rocenic_model::verbs::{RecvWr, SendOp};

    // SEND and WRITE-with-immediate without a receive WQE: RNR NAKs until
    // one is posted.
    let ((), trace) = record_checks(|| {
        for verb in [Verb::Send, Verb::WriteImm] {
            let mut pair = Pair::new(2);
            let (a, b) = connect(&mut pair, &ConnOpts::default());
            let src = buffer(&mut pair.nics[0], a.pd, 5000, Access::ALL);
            let dst = buffer(&mut pair.nics[1], b.pd, 5000, Access::ALL);
            let op = verb.op(&src, &dst, 0, 0x1234);
            let wr = send_wr(1, op, vec![src.sge(0, 5000)]);
            pair.nics[0].post_send(a.qpn, wr).unwrap();
            assert!(!pair.run(200_000));
            let recv = RecvWr {
                wr_id: 2,
                sgl: vec![dst.sge(0, 5000)],
            };
            pair.nics[1].post_recv(b.qpn, recv).unwrap();
            assert!(pair.run(1_000_000_000));
        }
    });
    let rnr = replay("rnr", &trace);
    assert!(rnr.get("Rnr").copied().unwrap_or(0) >= 5, "{rnr:?}");
    assert!(
        rnr.contains_key("Send") && rnr.contains_key("Write"),
        "{rnr:?}"
    );

    // A WRITE to a QP that grants only remote READ: NAK, QP to ERR.
    let ((), trace) = record_checks(|| {
        let mut pair = Pair::new(4);
        let opts = ConnOpts {
            access: Access::REMOTE_READ,
            ..ConnOpts::default()
        };
        let (a, b) = connect(&mut pair, &opts);
        let src = buffer(&mut pair.nics[0], a.pd, 3000, Access::ALL);
        let dst = buffer(&mut pair.nics[1], b.pd, 3000, Access::ALL);
        let op = Verb::Write.op(&src, &dst, 0, 0);
        let wr = send_wr(1, op, vec![src.sge(0, 3000)]);
        pair.nics[0].post_send(a.qpn, wr).unwrap();
        pair.run(1_000_000_000);
    });
    let denied = replay("no remote write", &trace);
    assert_eq!(denied.get("RemoteAccess"), Some(&1), "{denied:?}");

    // A misaligned atomic: invalid request.
    let ((), trace) = record_checks(|| {
        let mut pair = Pair::new(9);
        let (a, b) = connect(&mut pair, &ConnOpts::default());
        let target = buffer(&mut pair.nics[1], b.pd, 64, Access::ALL);
        let res = buffer(&mut pair.nics[0], a.pd, 8, Access::ALL);
        let op = SendOp::FetchAdd {
            remote_addr: target.va + 4,
            rkey: target.rkey,
            add: 1,
        };
        let wr = send_wr(1, op, vec![res.sge(0, 8)]);
        pair.nics[0].post_send(a.qpn, wr).unwrap();
        pair.run(1_000_000_000);
    });
    let invalid = replay("misaligned atomic", &trace);
    assert_eq!(invalid.get("InvalidRequest"), Some(&1), "{invalid:?}");
    eprintln!("error traces: {rnr:?} {denied:?} {invalid:?}");
}
