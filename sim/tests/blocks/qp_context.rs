//! QP context RAM lockstep: the Verilated `qp_context` block (1024 QPs)
//! against the array model of its contract (`QpContextModel`), cycle by
//! cycle: every context and configuration result compared bit for bit.
//!
//! The traffic is a client doing real read-modify-writes (each update
//! computed from the context the block returned, three cycles after the
//! lookup), at one lookup per cycle in bursts, with runs of the same QP
//! back to back and same-QP hazards at every distance the pipeline must
//! forward; host configuration operations (reads, whole writes, selected
//! fields) in between, waiting while lookups fill every cycle; rare resets.
//! The model never forwards, so every forwarding bug shows as a mismatch;
//! the tests also count how many contexts differed from what the RAM alone
//! held (what a block without forwarding would have returned).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::codes::qp_state;
use rocenic_hdl::qp::qp_context::{
    CycleInputs, CycleOutputs, HostRequest, QpContextModel, CONFIG_LATENCY,
};
use rocenic_hdl::qp::qp_context_record::{
    field_mask, in_progress, Field, QpContextRecord, RecordWords, FIELDS, NAK_SENT, RECORD_WORDS,
    RQ_EPSN, RQ_MSN, STATE,
};
use verilator_sys::{QpContext as Rtl, Sim};

const QPS: u32 = 1024;

struct Bench {
    sim: Sim<Rtl>,
    model: QpContextModel,
    cycle: u64,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            sim: Sim::<Rtl>::new().expect("qp_context is exported"),
            model: QpContextModel::new(QPS as usize),
            cycle: 0,
        }
    }

    fn drive(&mut self, i: &CycleInputs) {
        let s = &mut self.sim;
        s.set_bit(Rtl::RESET, i.reset);
        // Idle fields carry garbage on purpose: only `valid` may matter.
        let (qpn, tag) = i.lookup.unwrap_or((0x2A5, 0xBEEF));
        s.set_bit(Rtl::LOOKUP_VALID, i.lookup.is_some());
        s.set_u64(Rtl::LOOKUP_QPN, u64::from(qpn));
        s.set_u64(Rtl::LOOKUP_TAG, u64::from(tag));
        let (qpn, record) = i
            .update
            .unwrap_or((0x15A, [0xA5A5_5A5A_DEAD_BEEF; RECORD_WORDS]));
        s.set_bit(Rtl::UPDATE_VALID, i.update.is_some());
        s.set_u64(Rtl::UPDATE_QPN, u64::from(qpn));
        s.set(Rtl::UPDATE_RECORD, &record);
        let h = i.host.unwrap_or(HostRequest {
            qpn: 0x3C3,
            mask: [u64::MAX; RECORD_WORDS],
            data: [0x0123_4567_89AB_CDEF; RECORD_WORDS],
        });
        s.set_bit(Rtl::HOST_VALID, i.host.is_some());
        s.set_u64(Rtl::HOST_QPN, u64::from(h.qpn));
        s.set(Rtl::HOST_MASK, &h.mask);
        s.set(Rtl::HOST_DATA, &h.data);
    }

    fn observe(&self) -> CycleOutputs {
        let s = &self.sim;
        let words = |port| -> RecordWords {
            let mut w = [0; RECORD_WORDS];
            s.get_into(port, &mut w);
            w
        };
        CycleOutputs {
            context: s.get_bit(Rtl::CONTEXT_VALID).then(|| {
                (
                    s.get_u64(Rtl::CONTEXT_QPN) as u32,
                    s.get_u64(Rtl::CONTEXT_TAG) as u32,
                    words(Rtl::CONTEXT_RECORD),
                )
            }),
            host_done: s.get_bit(Rtl::HOST_DONE).then(|| words(Rtl::HOST_OLD)),
            host_stalled: s.get_bit(Rtl::HOST_STALLED),
        }
    }

    /// One cycle in lockstep; the block's outputs, checked.
    fn step(&mut self, i: &CycleInputs) -> CycleOutputs {
        self.drive(i);
        self.sim.eval();
        let got = self.observe();
        let want = self.model.cycle(i);
        assert_eq!(got, want, "cycle {}: inputs {i:?}", self.cycle);
        self.sim.tick();
        self.cycle += 1;
        got
    }
}

/// The client's read-modify-write, responder- and requester-like: the
/// expected PSN and MSN advance, the send PSN by a packet-dependent amount,
/// the NAK flag and message-in-progress follow the tag. Every field read
/// feeds a field written, so one stale context poisons the rest.
fn modify(record: &RecordWords, tag: u32) -> RecordWords {
    let mut r = QpContextRecord::unpack(record);
    r.rq_epsn = (r.rq_epsn + 1) & 0xFF_FFFF;
    r.rq_msn = (r.rq_msn + (tag & 1)) & 0xFF_FFFF;
    r.sq_send_psn = (r.sq_send_psn + (tag >> 1 & 7) + 1) & 0xFF_FFFF;
    r.sq_una_psn = (r.sq_una_psn ^ r.rq_epsn) & 0xFF_FFFF;
    r.nak_sent = (tag >> 4) & 1;
    r.in_progress = (r.in_progress + 1) % 3;
    r.pkey ^= tag & 0xFFFF;
    r.pack().expect("fields stay in range")
}

fn random_record(rng: &mut ChaCha8Rng) -> RecordWords {
    let mut r = QpContextRecord::default();
    for f in FIELDS {
        r.set_field(*f, rng.gen_range(0..=f.max()) as u32);
    }
    r.pack().unwrap()
}

fn random_host(rng: &mut ChaCha8Rng, qpn: u32) -> HostRequest {
    let mask = match rng.gen_range(0..4) {
        0 => [0; RECORD_WORDS],
        1 => [u64::MAX; RECORD_WORDS],
        // modify_qp-like: the state and a few attributes.
        2 => field_mask(&[STATE, RQ_EPSN, RQ_MSN, NAK_SENT]),
        _ => {
            let fields: Vec<Field> = FIELDS.iter().copied().filter(|_| rng.gen()).collect();
            field_mask(&fields)
        }
    };
    HostRequest {
        qpn,
        mask,
        data: random_record(rng),
    }
}

#[derive(Debug, Default)]
struct Stats {
    contexts: u64,
    /// Contexts whose record differs from what the RAM held at the read.
    forwarded: u64,
    /// Lookups of the QP looked up 1, 2 and 3 cycles before.
    hazards: [u64; 3],
    host_ops: u64,
    stalled_cycles: u64,
    resets: u64,
}

/// `cycles` cycles of random traffic from `seed` (see the module doc).
fn run(seed: u64, cycles: u64) -> Stats {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Bench::new();
    let mut stats = Stats::default();
    let hot: Vec<u32> = vec![
        0,
        QPS - 1,
        rng.gen_range(1..QPS - 1),
        rng.gen_range(1..QPS - 1),
    ];
    let mut next_update = None;
    let mut host: Option<HostRequest> = None;
    let mut recent: [Option<u32>; 3] = [None; 3];
    // A burst: lookups in every cycle, runs of one QP back to back.
    let mut burst_left = 0u32;
    let mut run_qpn = 0u32;
    let mut run_left = 0u32;
    let mut gap_when_stalled = false;
    while b.cycle < cycles {
        if host.is_none() && rng.gen_bool(0.02) {
            let qpn = if rng.gen_bool(0.7) {
                hot[rng.gen_range(0..hot.len())]
            } else {
                rng.gen_range(0..QPS)
            };
            host = Some(random_host(&mut rng, qpn));
            gap_when_stalled = rng.gen_bool(0.5);
        }
        if burst_left == 0 && rng.gen_bool(0.05) {
            burst_left = rng.gen_range(4..200);
        }
        let want_lookup = if burst_left > 0 {
            burst_left -= 1;
            true
        } else {
            rng.gen_bool(0.5)
        };
        let lookup = want_lookup.then(|| {
            if run_left == 0 {
                run_left = rng.gen_range(1..10);
                run_qpn = if rng.gen_bool(0.8) {
                    hot[rng.gen_range(0..hot.len())]
                } else {
                    rng.gen_range(0..QPS)
                };
            }
            run_left -= 1;
            // Runs interleave with single lookups of other QPs.
            let qpn = if rng.gen_bool(0.85) {
                run_qpn
            } else {
                hot[rng.gen_range(0..hot.len())]
            };
            (qpn, rng.gen_range(0..1 << 16))
        });
        // A client that sees the host operation starve leaves a gap.
        let lookup = if gap_when_stalled && b.sim.get_bit(Rtl::HOST_STALLED) {
            None
        } else {
            lookup
        };
        let reset = rng.gen_bool(0.0005);
        let inputs = CycleInputs {
            reset,
            lookup,
            update: next_update.take(),
            host,
        };
        if let Some((qpn, _)) = lookup {
            for (d, r) in recent.iter().enumerate() {
                if *r == Some(qpn) {
                    stats.hazards[d] += 1;
                }
            }
        }
        recent = [lookup.map(|l| l.0), recent[0], recent[1]];
        let out = b.step(&inputs);
        stats.stalled_cycles += u64::from(out.host_stalled);
        if let Some((qpn, tag, record)) = out.context {
            stats.contexts += 1;
            if b.model.raw_of_last_context() != Some(record) {
                stats.forwarded += 1;
            }
            if !reset && rng.gen_bool(0.9) {
                next_update = Some((qpn, modify(&record, tag)));
            }
        }
        if out.host_done.is_some() {
            stats.host_ops += 1;
            host = None;
        }
        if reset {
            stats.resets += 1;
            // A reset drops the operation in flight: ask again.
            host = None;
            next_update = None;
            recent = [None; 3];
        }
    }
    stats
}

#[test]
fn random_traffic_matches_the_array_contract() {
    for seed in [1, 2, 3] {
        let s = run(seed, 40_000);
        eprintln!("seed {seed}: {s:?}");
        assert!(s.contexts > 25_000, "seed {seed}: {s:?}");
        // Same-QP hazards at every forwarding distance, and contexts that
        // were right only because of forwarding.
        assert!(s.hazards.iter().all(|&h| h > 10_000), "seed {seed}: {s:?}");
        assert!(s.forwarded > 20_000, "seed {seed}: {s:?}");
        assert!(s.host_ops > 300, "seed {seed}: {s:?}");
        assert!(s.stalled_cycles > 5_000, "seed {seed}: {s:?}");
    }
}

/// 256 lookups of one QP in 256 consecutive cycles, each incrementing the
/// expected PSN: contexts at a fixed latency, one per cycle, each one more
/// than the last. The RAM alone lags three updates behind (the model's raw
/// value): that is what a block without forwarding would have returned.
#[test]
fn back_to_back_packets_of_one_qp_at_full_rate() {
    let mut b = Bench::new();
    for qpn in [0, 517, QPS - 1] {
        let first = b.cycle;
        let mut next_update = None;
        let mut seen = Vec::new();
        for n in 0..260u64 {
            let out = b.step(&CycleInputs {
                lookup: (n < 256).then_some((qpn, n as u32)),
                update: next_update.take(),
                ..Default::default()
            });
            if let Some((q, tag, record)) = out.context {
                assert_eq!((q, u64::from(tag)), (qpn, b.cycle - 1 - first - 2));
                let mut r = QpContextRecord::unpack(&record);
                let raw = QpContextRecord::unpack(&b.model.raw_of_last_context().unwrap());
                if seen.len() >= 4 {
                    assert_eq!(raw.rq_epsn + 3, r.rq_epsn, "stale by three updates");
                }
                seen.push(r.rq_epsn);
                r.rq_epsn += 1;
                next_update = Some((qpn, r.pack().unwrap()));
            }
        }
        assert_eq!(seen, (0..256).collect::<Vec<u32>>(), "QP {qpn}");
    }
}

/// modify_qp through the host port while the pipeline runs flat out on the
/// same QP: the state change waits for a free cycle, is ordered among the
/// packets like one of them, and the packets after it see it.
#[test]
fn modify_qp_under_full_load() {
    let mut b = Bench::new();
    let qpn = 77;
    let to_rts = QpContextRecord {
        state: qp_state::RTS,
        rq_epsn: 1000,
        in_progress: in_progress::NONE,
        ..Default::default()
    };
    let req = HostRequest {
        qpn,
        mask: field_mask(&[STATE, RQ_EPSN]),
        data: to_rts.pack().unwrap(),
    };
    let mut next_update = None;
    let mut host = Some(req);
    let mut done_at = None;
    let mut stalled = 0;
    let mut states = Vec::new();
    for n in 0..125u64 {
        // 120 cycles at full rate, except one gap the client leaves after
        // 60 stalls.
        let lookup = (n < 120 && n != 60).then_some((qpn, n as u32));
        let out = b.step(&CycleInputs {
            lookup,
            update: next_update.take(),
            host,
            ..Default::default()
        });
        stalled += u64::from(out.host_stalled);
        if let Some((_, tag, record)) = out.context {
            states.push((tag, QpContextRecord::unpack(&record).state));
            next_update = Some((qpn, modify(&record, tag)));
        }
        if out.host_done.is_some() {
            done_at = Some(n);
            host = None;
        }
    }
    assert_eq!(done_at, Some(60 + CONFIG_LATENCY));
    assert_eq!(stalled, 60, "stalled in every cycle after one it lost");
    // Packets up to the gap saw RESET, all after it RTS.
    assert_eq!(states.len(), 119);
    for (tag, st) in states {
        let want = if tag < 60 {
            qp_state::RESET
        } else {
            qp_state::RTS
        };
        assert_eq!(st, want, "packet {tag}");
    }
    let r = QpContextRecord::unpack(&b.model.record(qpn));
    assert_eq!(r.state, qp_state::RTS);
    // The expected PSN was set to 1000 and advanced once per later packet.
    assert_eq!(r.rq_epsn, 1000 + (119 - 60));
}
