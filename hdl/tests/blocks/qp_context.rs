//! QpContext in rust-hdl's simulator against the array model of its
//! contract (`QpContextModel`): random lookups, read-modify-write updates
//! and configuration operations on a 16-QP instance, replayed on the
//! generated Verilog under Verilator; back-to-back lookups of one QP, with and
//! without forwarding (the lost-update pattern the forwarding removes);
//! the configuration port's masked writes, ordering and yielding to
//! lookups; reset; the QP count as a build parameter up to 16384 (Verilog,
//! Verilator lint); block RAM for the storage (Yosys synth_xilinx).

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::qp::qp_context::{
    CycleInputs, CycleOutputs, HostRequest, QpContext, QpContextModel, CONFIG_LATENCY,
    CONTEXT_LATENCY, UPDATE_OFFSET,
};
use rocenic_hdl::qp::qp_context_record::{
    field_mask, record_bits, record_words, QpContextRecord, RecordWords, FIELDS, RECORD_WORDS,
    RQ_EPSN, STATE,
};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;

const A: usize = 4;
type Small = QpContext<A>;

fn new_sim(uut: Small) -> CycleSim<Small> {
    CycleSim::new(uut, |b| &mut b.clock)
}

fn drive(sim: &mut CycleSim<Small>, i: &CycleInputs) {
    let u = &mut sim.uut;
    u.reset.next = i.reset;
    u.lookup.valid.next = i.lookup.is_some();
    let (qpn, tag) = i.lookup.unwrap_or((0, 0));
    u.lookup.qpn.next = bits(u64::from(qpn));
    u.lookup.tag.next = bits(u64::from(tag));
    u.update.valid.next = i.update.is_some();
    let (qpn, record) = i.update.unwrap_or((0, [0; RECORD_WORDS]));
    u.update.qpn.next = bits(u64::from(qpn));
    u.update.record.next = record_bits(&record);
    let h = i.host.unwrap_or_default();
    u.host.valid.next = i.host.is_some();
    u.host.qpn.next = bits(u64::from(h.qpn));
    u.host.mask.next = record_bits(&h.mask);
    u.host.data.next = record_bits(&h.data);
}

fn observe(sim: &CycleSim<Small>) -> CycleOutputs {
    let u = &sim.uut;
    CycleOutputs {
        context: u.context.valid.val().then(|| {
            (
                u.context.qpn.val().to_u64() as u32,
                u.context.tag.val().to_u64() as u32,
                record_words(u.context.record.val()),
            )
        }),
        host_done: u.host.done.val().then(|| record_words(u.host.old.val())),
        host_stalled: u.host.stalled.val(),
    }
}

/// Runs one cycle on both and returns the block's outputs after checking
/// them against the model's.
fn step(sim: &mut CycleSim<Small>, model: &mut QpContextModel, i: &CycleInputs) -> CycleOutputs {
    drive(sim, i);
    sim.settle();
    let got = observe(sim);
    let want = model.cycle(i);
    assert_eq!(got, want, "cycle {}: inputs {i:?}", sim.cycles());
    sim.tick();
    got
}

/// The client's read-modify-write: responder-like (one more expected PSN
/// and MSN) plus a change that depends on the packet.
fn modify(record: &RecordWords, tag: u32) -> RecordWords {
    let mut r = QpContextRecord::unpack(record);
    r.rq_epsn = (r.rq_epsn + 1) & 0xFF_FFFF;
    r.rq_msn = (r.rq_msn + 1) & 0xFF_FFFF;
    r.sq_send_psn = (r.sq_send_psn + (tag & 7) + 1) & 0xFF_FFFF;
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

/// Random traffic in the contract: lookups mostly of a few hot QPs (so
/// same-QP hazards at every distance are common), each updated three
/// cycles later from its context (or not, one time in eight), and
/// configuration operations of every kind held until done.
#[test]
fn random_traffic_matches_the_array_contract() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x9c0_7e47);
    let mut sim = new_sim(Small::default());
    sim.record();
    let mut model = QpContextModel::new(1 << A);
    // Computed from the context of one cycle, presented in the next.
    let mut next_update = None;
    let mut host: Option<HostRequest> = None;
    let (mut contexts, mut forwarded, mut host_ops) = (0, 0, 0);
    for cycle in 0..600u32 {
        if host.is_none() && rng.gen_bool(0.08) {
            let fields: Vec<_> = FIELDS.iter().copied().filter(|_| rng.gen()).collect();
            let mask = match rng.gen_range(0..3) {
                0 => [0; RECORD_WORDS],
                1 => [u64::MAX; RECORD_WORDS],
                _ => field_mask(&fields),
            };
            host = Some(HostRequest {
                qpn: rng.gen_range(0..4),
                mask,
                data: random_record(&mut rng),
            });
        }
        let busy_phase = (cycle / 50) % 2 == 0;
        let lookup = rng.gen_bool(if busy_phase { 0.95 } else { 0.6 }).then(|| {
            let qpn = if rng.gen_bool(0.8) {
                rng.gen_range(0..3)
            } else {
                rng.gen_range(0..16)
            };
            (qpn, rng.gen_range(0..1 << 16))
        });
        let inputs = CycleInputs {
            reset: false,
            lookup,
            update: next_update.take(),
            host,
        };
        let out = step(&mut sim, &mut model, &inputs);
        if let Some((qpn, tag, record)) = out.context {
            contexts += 1;
            if model.raw_of_last_context() != Some(record) {
                forwarded += 1;
            }
            // Context in cycle t + 2, update in t + 3.
            next_update = rng.gen_bool(0.875).then(|| (qpn, modify(&record, tag)));
        }
        if out.host_done.is_some() {
            host = None;
            host_ops += 1;
        }
    }
    assert!(contexts > 400, "{contexts} contexts");
    assert!(
        forwarded > 100,
        "only {forwarded} contexts needed forwarding"
    );
    assert!(host_ops > 10, "only {host_ops} configuration operations");
    let cycles = sim.replay_in_verilator("qp_context").unwrap();
    assert_eq!(cycles, 600);
}

/// Lookups of QP 3 in consecutive cycles, the client adding one to the
/// expected PSN of each context; returns the PSNs the lookups saw.
fn epsn_ramp(uut: Small, count: u32) -> Vec<u32> {
    let mut sim = new_sim(uut);
    let mut seen = Vec::new();
    let mut next_update = None;
    let mut cycle = 0;
    while seen.len() < count as usize {
        drive(
            &mut sim,
            &CycleInputs {
                lookup: (cycle < count).then_some((3, cycle)),
                update: next_update.take(),
                ..Default::default()
            },
        );
        sim.settle();
        if let Some((qpn, _, record)) = observe(&sim).context {
            assert_eq!(qpn, 3);
            let mut r = QpContextRecord::unpack(&record);
            seen.push(r.rq_epsn);
            r.rq_epsn += 1;
            next_update = Some((3, r.pack().unwrap()));
        }
        sim.tick();
        cycle += 1;
    }
    seen
}

#[test]
fn back_to_back_lookups_of_one_qp_each_see_the_previous_update() {
    assert_eq!((CONTEXT_LATENCY, UPDATE_OFFSET), (2, 3));
    let with = epsn_ramp(Small::default(), 12);
    assert_eq!(with, (0..12).collect::<Vec<_>>());
    // Without forwarding each lookup reads the RAM before the three
    // updates ahead of it land: four packets in a row see the same PSN.
    let without = epsn_ramp(Small::without_forwarding(), 12);
    assert_eq!(without, vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
}

/// A host operation on `qpn`, held until done; returns the old record and
/// the cycles it took.
fn host_op(
    sim: &mut CycleSim<Small>,
    model: &mut QpContextModel,
    req: HostRequest,
    mut lookups: impl FnMut(u64) -> Option<(u32, u32)>,
) -> (RecordWords, u64) {
    let start = sim.cycles();
    loop {
        let i = CycleInputs {
            lookup: lookups(sim.cycles() - start),
            host: Some(req),
            ..Default::default()
        };
        if let Some(old) = step(sim, model, &i).host_done {
            return (old, sim.cycles() - start);
        }
        assert!(sim.cycles() - start < 100, "host operation never completed");
    }
}

fn idle(sim: &mut CycleSim<Small>, model: &mut QpContextModel, n: usize) {
    for _ in 0..n {
        step(sim, model, &CycleInputs::default());
    }
}

#[test]
fn host_port_writes_selected_fields_and_yields_to_lookups() {
    let mut sim = new_sim(Small::default());
    let mut model = QpContextModel::new(1 << A);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let full = random_record(&mut rng);
    // Whole write, then read back: done 3 cycles after the slot, old first.
    let write = HostRequest {
        qpn: 2,
        mask: [u64::MAX; RECORD_WORDS],
        data: full,
    };
    let (old, took) = host_op(&mut sim, &mut model, write, |_| None);
    assert_eq!((old, took), ([0; RECORD_WORDS], CONFIG_LATENCY + 1));
    let read = HostRequest {
        qpn: 2,
        ..Default::default()
    };
    // Back to back: the read is ordered after the write without a gap.
    let (now, _) = host_op(&mut sim, &mut model, read, |_| None);
    assert_eq!(now, full);

    // Only the state and expected PSN change.
    let change = QpContextRecord {
        state: 3,
        rq_epsn: 0x123456,
        ..Default::default()
    };
    let req = HostRequest {
        qpn: 2,
        mask: field_mask(&[STATE, RQ_EPSN]),
        data: change.pack().unwrap(),
    };
    host_op(&mut sim, &mut model, req, |_| None);
    let (after, _) = host_op(&mut sim, &mut model, read, |_| None);
    let mut expect = QpContextRecord::unpack(&full);
    expect.state = 3;
    expect.rq_epsn = 0x123456;
    assert_eq!(QpContextRecord::unpack(&after), expect);

    // Lookups in every cycle for 20 cycles: the operation waits (stalled
    // reported from the second cycle) and runs in the first gap.
    let mut stalled = 0;
    let start = sim.cycles();
    let req = HostRequest {
        qpn: 9,
        ..Default::default()
    };
    loop {
        let n = sim.cycles() - start;
        let i = CycleInputs {
            lookup: (n < 20).then_some((1, n as u32)),
            host: Some(req),
            ..Default::default()
        };
        let out = step(&mut sim, &mut model, &i);
        stalled += usize::from(out.host_stalled);
        if out.host_done.is_some() {
            assert_eq!(n, 20 + CONFIG_LATENCY, "ran in the first free cycle");
            break;
        }
    }
    assert_eq!(stalled, 20);
}

/// A configuration write to a QP between two lookups of it in consecutive
/// cycles is ordered between them: the first lookup's update (computed
/// before the write) lands first and is overwritten, the second lookup
/// sees the written record.
#[test]
fn host_write_is_ordered_like_a_lookup_in_its_slot() {
    let mut sim = new_sim(Small::default());
    let mut model = QpContextModel::new(1 << A);
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let data = random_record(&mut rng);
    let req = HostRequest {
        qpn: 5,
        mask: [u64::MAX; RECORD_WORDS],
        data,
    };
    // Cycle 0: lookup of 5 (host waits); cycle 1: host takes the slot;
    // cycle 2: lookup of 5. Updates of the lookups in cycles 3 and 5.
    let mut contexts = Vec::new();
    let mut next_update = None;
    for cycle in 0..8u32 {
        let i = CycleInputs {
            lookup: matches!(cycle, 0 | 2).then_some((5, cycle)),
            update: next_update.take(),
            host: (cycle < 5).then_some(req),
            ..Default::default()
        };
        let out = step(&mut sim, &mut model, &i);
        if let Some((_, tag, record)) = out.context {
            contexts.push((tag, record));
            next_update = Some((5, modify(&record, tag)));
        }
        if cycle == 4 {
            assert_eq!(out.host_done, Some(modify(&[0; RECORD_WORDS], 0)));
        }
    }
    assert_eq!(contexts.len(), 2);
    assert_eq!(contexts[0], (0, [0; RECORD_WORDS]));
    assert_eq!(contexts[1], (2, data));
    assert_eq!(model.record(5), modify(&data, 2));
}

#[test]
fn reset_drops_operations_in_flight_and_keeps_records() {
    let mut sim = new_sim(Small::default());
    let mut model = QpContextModel::new(1 << A);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let data = random_record(&mut rng);
    let write = HostRequest {
        qpn: 7,
        mask: [u64::MAX; RECORD_WORDS],
        data,
    };
    host_op(&mut sim, &mut model, write, |_| None);
    // A lookup and a host operation in flight when reset comes.
    step(
        &mut sim,
        &mut model,
        &CycleInputs {
            lookup: Some((7, 1)),
            ..Default::default()
        },
    );
    step(
        &mut sim,
        &mut model,
        &CycleInputs {
            host: Some(write),
            ..Default::default()
        },
    );
    let out = step(
        &mut sim,
        &mut model,
        &CycleInputs {
            reset: true,
            ..Default::default()
        },
    );
    assert!(out.context.is_some(), "the lookup was already out");
    for _ in 0..5 {
        let out = step(&mut sim, &mut model, &CycleInputs::default());
        assert_eq!(out, CycleOutputs::default());
    }
    let (now, _) = host_op(
        &mut sim,
        &mut model,
        HostRequest {
            qpn: 7,
            ..Default::default()
        },
        |_| None,
    );
    assert_eq!(now, data);
    idle(&mut sim, &mut model, 2);
}

#[test]
fn qp_count_is_a_build_parameter_up_to_16384() {
    for (verilog, qps) in [
        (verilog_of::<QpContext<10>>(), 1024u32),
        (verilog_of::<QpContext<14>>(), 16384),
    ] {
        let words = verilog.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(&format!("reg [287:0] mem [0:{}];", qps - 1)),
            "{qps}"
        );
        let qpn_msb = qps.trailing_zeros() - 1;
        for port in ["lookup$qpn", "update$qpn", "host$qpn"] {
            assert!(
                words.contains(&format!("input wire [{qpn_msb}:0] {port}")),
                "{qps} {port}"
            );
        }
        assert_lint_clean(&format!("qp_context_{qps}"), &verilog);
    }
}

#[test]
fn storage_maps_to_block_ram() {
    let report = xilinx_synth("qp_context_1024", &verilog_of::<QpContext<10>>()).unwrap();
    // 1024 x 288 bits = 8 RAMB36 of 1K x 36; no LUT RAM, and no
    // collision logic beside the RAM (flip-flops are the pipeline's).
    assert_eq!(report.count("RAMB36E2"), 8, "{}", report.log);
    assert_eq!(report.count("RAMB18E2"), 0, "{}", report.log);
    report.assert_memories_in_block_ram();
    assert!(report.flip_flops() <= 1240, "{}", report.log);
}
