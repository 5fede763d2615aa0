//! CqeWriter in rust-hdl's simulator against a reference of the ring rules
//! written from the ABI (`rocenic_abi::cqe`): every DMA write lands at the
//! entry the producer index names, holds the CQE's fields where the ABI's
//! `Field`s put them and the owner bit `owner_for` gives; software polling
//! by owner bit reads every CQE once, in order; a full ring refuses (never
//! overwrites), reports the QP and raises one CQ_ERR; arming gives one
//! event; a doorbell beyond the ring is refused. Random valid/ready delays
//! on every port; then the recorded cycles on the Verilog under
//! Verilator, the lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_abi::codes::WC_STATUS;
use rocenic_abi::cqe;
use rocenic_abi::eqe::{EVENT_TYPE, QP_ERROR_CAUSE};
use rocenic_hdl::host::cqe_writer::CqeWriter;
use rocenic_hdl::primitives::wide::bits_to_bytes;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;
use std::collections::{BTreeMap, VecDeque};

const ENTRY: usize = 32;
type Entry = [u8; ENTRY];

fn event_code(name: &str) -> u64 {
    EVENT_TYPE.by_name(name).unwrap().value
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Completion {
    cqn: u64,
    qpn: u64,
    wr_id: u64,
    byte_len: u64,
    imm: u64,
    wqe_index: u64,
    syndrome: u64,
    opcode: u64,
    status: u64,
    flags: u64,
    solicited: bool,
}

impl Completion {
    fn random(rng: &mut ChaCha8Rng, cqn: u64) -> Completion {
        let error = rng.gen_ratio(1, 8);
        Completion {
            cqn,
            qpn: rng.gen_range(0..1 << 24),
            wr_id: rng.gen(),
            byte_len: rng.gen_range(0..1 << 32),
            imm: rng.gen_range(0..1 << 32),
            wqe_index: rng.gen_range(0..1 << 16),
            syndrome: if error { rng.gen_range(1..256) } else { 0 },
            opcode: rng.gen_range(0..256),
            status: if error { rng.gen_range(1..22) } else { 0 },
            flags: rng.gen_range(0..256),
            solicited: rng.gen_ratio(1, 4),
        }
    }

    /// The CQE as the ABI lays it out, owner bit included.
    fn entry(&self, owner: u64) -> Entry {
        let mut e = [0u8; ENTRY];
        for (field, value) in [
            (cqe::WR_ID, self.wr_id),
            (cqe::BYTE_LEN, self.byte_len),
            (cqe::IMM_OR_INVALIDATED, self.imm),
            (cqe::QPN, self.qpn),
            (cqe::WQE_INDEX, self.wqe_index),
            (cqe::VENDOR_SYNDROME, self.syndrome),
            (cqe::OPCODE, self.opcode),
            (cqe::STATUS, self.status),
            (cqe::FLAGS, self.flags),
            (cqe::OWNER, owner),
        ] {
            field.set(&mut e, value).unwrap();
        }
        e
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Create {
        cqn: u64,
        ring: u64,
        log_size: u32,
        eqn: u64,
    },
    Destroy {
        cqn: u64,
    },
    Doorbell {
        cqn: u64,
        consumer: u64,
        arm: bool,
        arm_solicited: bool,
    },
    Complete(Completion),
}

#[derive(Clone, Copy, Debug, Default)]
struct RefCq {
    ring: u64,
    log_size: u32,
    eqn: u64,
    producer: u64,
    consumer: u64,
    arm: bool,
    arm_solicited: bool,
    overflowed: bool,
}

const INDEX_MASK: u64 = (1 << 24) - 1;

/// The ring rules of the module doc, applied one taken operation at a time.
#[derive(Default)]
struct Reference {
    cqs: BTreeMap<u64, RefCq>,
    writes: VecDeque<(u64, Entry)>,
    events: VecDeque<(u64, u64, u64)>,
    qp_errors: VecDeque<(u64, u64)>,
    overflows: u64,
    doorbell_errors: u64,
    /// Every CQE written, per CQ, in order (since its creation).
    written: BTreeMap<u64, Vec<Entry>>,
}

impl Reference {
    fn apply(&mut self, op: Op) {
        match op {
            Op::Create {
                cqn,
                ring,
                log_size,
                eqn,
            } => {
                self.cqs.insert(
                    cqn,
                    RefCq {
                        ring,
                        log_size,
                        eqn,
                        ..Default::default()
                    },
                );
                self.written.insert(cqn, Vec::new());
            }
            Op::Destroy { cqn } => {
                self.cqs.remove(&cqn);
            }
            Op::Doorbell {
                cqn,
                consumer,
                arm,
                arm_solicited,
            } => match self.cqs.get_mut(&cqn) {
                Some(cq)
                    if (cq.producer.wrapping_sub(consumer) & INDEX_MASK) <= 1 << cq.log_size =>
                {
                    cq.consumer = consumer;
                    cq.arm |= arm;
                    cq.arm_solicited |= arm_solicited;
                }
                _ => self.doorbell_errors += 1,
            },
            Op::Complete(c) => {
                let cause = QP_ERROR_CAUSE.by_name("CQ_OVERFLOW").unwrap().value;
                let Some(cq) = self.cqs.get_mut(&c.cqn) else {
                    self.overflows += 1;
                    self.qp_errors.push_back((c.qpn, cause));
                    return;
                };
                let used = cq.producer.wrapping_sub(cq.consumer) & INDEX_MASK;
                if cq.overflowed || used >= 1 << cq.log_size {
                    self.overflows += 1;
                    self.qp_errors.push_back((c.qpn, cause));
                    if !cq.overflowed {
                        self.events.push_back((cq.eqn, event_code("CQ_ERR"), c.cqn));
                    }
                    cq.overflowed = true;
                    return;
                }
                let slot = cq.producer & ((1 << cq.log_size) - 1);
                let entry = c.entry(cqe::owner_for(cq.producer, cq.log_size));
                self.writes
                    .push_back((cq.ring + ENTRY as u64 * slot, entry));
                self.written.get_mut(&c.cqn).unwrap().push(entry);
                cq.producer = (cq.producer + 1) & INDEX_MASK;
                let solicited =
                    c.solicited || c.status != WC_STATUS.by_name("SUCCESS").unwrap().value;
                if cq.arm || (cq.arm_solicited && solicited) {
                    self.events
                        .push_back((cq.eqn, event_code("COMPLETION"), c.cqn));
                    cq.arm = false;
                    cq.arm_solicited = false;
                }
            }
        }
    }
}

/// Software's side of one CQ: what it has consumed, polling by owner bit.
#[derive(Clone, Copy, Debug)]
struct Software {
    ring: u64,
    log_size: u32,
    consumed: u64,
}

/// The block, its neighbours (an admin engine, doorbells, the transport's
/// completions, host memory, an EQ writer, the QP error path) and the
/// reference.
struct Bench {
    sim: CycleSim<CqeWriter>,
    rng: ChaCha8Rng,
    reference: Reference,
    memory: BTreeMap<u64, Entry>,
    commands: VecDeque<Op>,
    doorbells: VecDeque<Op>,
    completions: VecDeque<Op>,
    /// Out of 8: how often each input holds a new operation when it can,
    /// and each output is ready.
    busy: u32,
    ready: u32,
    overflow_pulses: u64,
    doorbell_error_pulses: u64,
    events: Vec<(u64, u64, u64)>,
    qp_errors: Vec<(u64, u64)>,
    dma_writes: u64,
    /// Which inputs hold an operation (valid is high).
    presenting: [bool; 3],
    /// Cycle of each take and each DMA write, for throughput checks.
    takes: Vec<u64>,
    write_cycles: Vec<u64>,
}

impl Bench {
    fn new(seed: u64) -> Bench {
        let mut sim = CycleSim::new(CqeWriter::default(), |b| &mut b.clock);
        sim.record();
        let mut bench = Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed),
            reference: Reference::default(),
            memory: BTreeMap::new(),
            commands: VecDeque::new(),
            doorbells: VecDeque::new(),
            completions: VecDeque::new(),
            busy: 8,
            ready: 8,
            overflow_pulses: 0,
            doorbell_error_pulses: 0,
            events: Vec::new(),
            qp_errors: Vec::new(),
            dma_writes: 0,
            takes: Vec::new(),
            write_cycles: Vec::new(),
            presenting: [false; 3],
        };
        bench.sim.uut.reset.next = true;
        bench.sim.tick();
        bench.sim.uut.reset.next = false;
        bench
    }

    fn present(&mut self) {
        let busy = self.busy;
        let u = &mut self.sim.uut;
        if !self.presenting[0] && self.rng.gen_ratio(busy, 8) {
            if let Some(op) = self.commands.front() {
                match *op {
                    Op::Create {
                        cqn,
                        ring,
                        log_size,
                        eqn,
                    } => {
                        u.command.destroy.next = false;
                        u.command.cqn.next = bits(cqn);
                        u.command.ring.next = bits(ring);
                        u.command.log_size.next = bits(u64::from(log_size));
                        u.command.eqn.next = bits(eqn);
                    }
                    Op::Destroy { cqn } => {
                        u.command.destroy.next = true;
                        u.command.cqn.next = bits(cqn);
                    }
                    _ => unreachable!(),
                }
                u.command.valid.next = true;
                self.presenting[0] = true;
            }
        }
        if !self.presenting[1] && self.rng.gen_ratio(busy, 8) {
            if let Some(&Op::Doorbell {
                cqn,
                consumer,
                arm,
                arm_solicited,
            }) = self.doorbells.front()
            {
                u.doorbell.cqn.next = bits(cqn);
                u.doorbell.consumer.next = bits(consumer);
                u.doorbell.arm.next = arm;
                u.doorbell.arm_solicited.next = arm_solicited;
                u.doorbell.valid.next = true;
                self.presenting[1] = true;
            }
        }
        if !self.presenting[2] && self.rng.gen_ratio(busy, 8) {
            if let Some(&Op::Complete(c)) = self.completions.front() {
                let p = &mut u.completion;
                p.cqn.next = bits(c.cqn);
                p.qpn.next = bits(c.qpn);
                p.wr_id.next = bits(c.wr_id);
                p.byte_len.next = bits(c.byte_len);
                p.imm_or_invalidated.next = bits(c.imm);
                p.wqe_index.next = bits(c.wqe_index);
                p.vendor_syndrome.next = bits(c.syndrome);
                p.opcode.next = bits(c.opcode);
                p.status.next = bits(c.status);
                p.flags.next = bits(c.flags);
                p.solicited.next = c.solicited;
                p.valid.next = true;
                self.presenting[2] = true;
            }
        }
    }

    /// One cycle: inputs presented, outputs checked as they are taken,
    /// the edge, and the taken operation applied to the reference.
    fn tick(&mut self) {
        self.present();
        let ready = self.ready;
        let (dma_ready, event_ready, error_ready) = (
            self.rng.gen_ratio(ready, 8),
            self.rng.gen_ratio(ready, 8),
            self.rng.gen_ratio(ready, 8),
        );
        let u = &mut self.sim.uut;
        u.dma.ready.next = dma_ready;
        u.event.ready.next = event_ready;
        u.qp_error.ready.next = error_ready;
        self.sim.settle();
        let cycle = self.sim.cycles();
        let u = &self.sim.uut;
        let mut taken = None;
        let mut takes = 0;
        if u.command.valid.val() && u.command.ready.val() {
            taken = self.commands.pop_front();
            takes += 1;
        }
        if u.doorbell.valid.val() && u.doorbell.ready.val() {
            taken = self.doorbells.pop_front();
            takes += 1;
        }
        if u.completion.valid.val() && u.completion.ready.val() {
            taken = self.completions.pop_front();
            takes += 1;
        }
        assert!(takes <= 1, "cycle {cycle}: one operation per cycle");
        if u.dma.valid.val() && u.dma.ready.val() {
            let (address, entry) = self
                .reference
                .writes
                .pop_front()
                .unwrap_or_else(|| panic!("cycle {cycle}: a DMA write nobody expects"));
            assert!(u.dma.first.val() && u.dma.last.val(), "one beat");
            assert_eq!(u.dma.req_addr.val().to_u64(), address, "cycle {cycle}");
            assert_eq!(u.dma.req_len.val().to_u64(), ENTRY as u64);
            assert_eq!(u.dma.addr.val().to_u64(), address & !63);
            let half = (address & 32) as usize;
            let keep = u.dma.keep.val().to_u64();
            assert_eq!(keep, 0xFFFF_FFFFu64 << half, "keep marks the entry");
            let beat = bits_to_bytes(u.dma.data.val());
            assert_eq!(
                beat[half..half + ENTRY],
                entry,
                "cycle {cycle}: the CQE at {address:#x}"
            );
            self.memory.insert(address, entry);
            self.dma_writes += 1;
            self.write_cycles.push(cycle);
        }
        if u.event.valid.val() && u.event.ready.val() {
            let got = (
                u.event.eqn.val().to_u64(),
                u.event.event.val().to_u64(),
                u.event.object.val().to_u64(),
            );
            assert_eq!(
                Some(got),
                self.reference.events.pop_front(),
                "cycle {cycle}: event"
            );
            self.events.push(got);
        }
        if u.qp_error.valid.val() && u.qp_error.ready.val() {
            let got = (
                u.qp_error.qpn.val().to_u64(),
                u.qp_error.cause.val().to_u64(),
            );
            assert_eq!(
                Some(got),
                self.reference.qp_errors.pop_front(),
                "cycle {cycle}: QP error"
            );
            self.qp_errors.push(got);
        }
        self.overflow_pulses += u64::from(u.overflow.val());
        self.doorbell_error_pulses += u64::from(u.doorbell_error.val());
        self.sim.tick();
        let u = &mut self.sim.uut;
        if let Some(op) = taken {
            let port = match op {
                Op::Create { .. } | Op::Destroy { .. } => &mut u.command.valid,
                Op::Doorbell { .. } => &mut u.doorbell.valid,
                Op::Complete(_) => &mut u.completion.valid,
            };
            port.next = false;
            self.presenting[match op {
                Op::Create { .. } | Op::Destroy { .. } => 0,
                Op::Doorbell { .. } => 1,
                Op::Complete(_) => 2,
            }] = false;
            self.reference.apply(op);
            self.takes.push(cycle);
        }
    }

    fn pending(&self) -> bool {
        !(self.commands.is_empty() && self.doorbells.is_empty() && self.completions.is_empty())
    }

    /// Runs until every queued operation is taken and every output drained.
    fn drain(&mut self) {
        for _ in 0..20_000 {
            if !self.pending()
                && self.reference.writes.is_empty()
                && self.reference.events.is_empty()
                && self.reference.qp_errors.is_empty()
            {
                for _ in 0..8 {
                    self.tick();
                }
                return;
            }
            self.tick();
        }
        panic!("the block stopped taking or giving");
    }

    fn create(&mut self, cqn: u64, log_size: u32, eqn: u64) -> Software {
        let ring = 0x0000_7F00_0000_0000 + (cqn << 21);
        for i in 0..1u64 << log_size {
            self.memory.insert(ring + ENTRY as u64 * i, [0; ENTRY]);
        }
        self.commands.push_back(Op::Create {
            cqn,
            ring,
            log_size,
            eqn,
        });
        Software {
            ring,
            log_size,
            consumed: 0,
        }
    }

    /// Software polls `cq` by owner bit: every entry it owns is the next
    /// CQE the reference wrote, whole.
    fn poll(&mut self, cqn: u64, sw: &mut Software) -> usize {
        let mut polled = 0;
        loop {
            let slot = sw.consumed & ((1 << sw.log_size) - 1);
            let entry = self.memory[&(sw.ring + ENTRY as u64 * slot)];
            let owner = cqe::OWNER.get(&entry).unwrap();
            if owner != cqe::owner_for(sw.consumed, sw.log_size) {
                return polled;
            }
            let expected = self.reference.written[&cqn][sw.consumed as usize];
            assert_eq!(entry, expected, "CQ {cqn}: CQE {} read whole", sw.consumed);
            sw.consumed += 1;
            polled += 1;
        }
    }
}

fn doorbell(cqn: u64, consumer: u64, arm: bool, arm_solicited: bool) -> Op {
    Op::Doorbell {
        cqn,
        consumer: consumer & INDEX_MASK,
        arm,
        arm_solicited,
    }
}

#[test]
fn random_traffic_follows_the_ring_rules_and_software_reads_every_cqe_once() {
    let mut b = Bench::new(1);
    b.busy = 6;
    b.ready = 5;
    // Four CQs, three of them small enough to fill; CQ 7 never exists.
    let cqns = [0u64, 1, 5, 1023];
    let mut software: BTreeMap<u64, Software> = BTreeMap::new();
    for (i, &cqn) in cqns.iter().enumerate() {
        let sw = b.create(cqn, [1, 3, 4, 6][i], i as u64);
        software.insert(cqn, sw);
    }
    let mut polled = 0;
    for round in 0..4000 {
        let r = b.rng.gen_range(0..100);
        if r < 60 && b.completions.len() < 4 {
            let cqn = if b.rng.gen_ratio(1, 40) {
                7
            } else {
                cqns[b.rng.gen_range(0..cqns.len())]
            };
            let c = Completion::random(&mut b.rng, cqn);
            b.completions.push_back(Op::Complete(c));
        } else if r < 85 && b.doorbells.len() < 2 {
            let cqn = cqns[b.rng.gen_range(0..cqns.len())];
            let mut sw = software[&cqn];
            if b.commands.is_empty() {
                polled += b.poll(cqn, &mut sw);
            }
            software.insert(cqn, sw);
            let consumer = if b.rng.gen_ratio(1, 12) {
                // Beyond the ring: refused.
                sw.consumed + (1 << sw.log_size) + 1 + b.rng.gen_range(0..100)
            } else {
                sw.consumed
            };
            let op = doorbell(cqn, consumer, b.rng.gen_ratio(1, 3), b.rng.gen_ratio(1, 3));
            b.doorbells.push_back(op);
        } else if r < 87 && b.commands.is_empty() && round % 200 == 0 {
            // Destroy and create again: the CQ starts clean.
            let cqn = cqns[b.rng.gen_range(0..3)];
            b.drain();
            b.commands.push_back(Op::Destroy { cqn });
            let log_size = software[&cqn].log_size;
            let sw = b.create(cqn, log_size, 4);
            software.insert(cqn, sw);
        }
        b.tick();
    }
    b.drain();
    for (&cqn, sw) in software.iter_mut() {
        polled += b.poll(cqn, sw);
    }
    let r = &b.reference;
    assert!(b.dma_writes > 1000, "{} CQEs written", b.dma_writes);
    assert!(polled > 1000, "{polled} CQEs polled");
    assert!(r.overflows > 20, "{} overflows", r.overflows);
    assert!(
        r.doorbell_errors > 5,
        "{} doorbell errors",
        r.doorbell_errors
    );
    assert_eq!(b.overflow_pulses, r.overflows);
    assert_eq!(b.doorbell_error_pulses, r.doorbell_errors);
    assert_eq!(b.qp_errors.len() as u64, r.overflows);
    let completion_events = b
        .events
        .iter()
        .filter(|e| e.1 == event_code("COMPLETION"))
        .count();
    assert!(
        completion_events > 20,
        "{completion_events} completion events"
    );
    assert!(b.events.iter().any(|e| e.1 == event_code("CQ_ERR")));
    let cycles = b.sim.replay_in_verilator("cqe_writer").unwrap();
    assert!(cycles > 1000, "replayed {cycles} cycles");
}

#[test]
fn completions_on_one_cq_take_one_cycle_each() {
    let mut b = Bench::new(2);
    let mut sw = b.create(3, 7, 0);
    b.drain();
    for _ in 0..100 {
        let c = Completion::random(&mut b.rng, 3);
        b.completions.push_back(Op::Complete(c));
    }
    let first = b.takes.len();
    b.drain();
    let takes = &b.takes[first..];
    assert_eq!(takes.len(), 100);
    assert_eq!(
        takes.last().unwrap() - takes[0],
        99,
        "one completion per cycle on one CQ"
    );
    let writes = &b.write_cycles[b.write_cycles.len() - 100..];
    assert_eq!(
        writes.last().unwrap() - writes[0],
        99,
        "one CQE write per cycle"
    );
    assert_eq!(writes[0] - takes[0], 3, "latency: the module doc's t + 3");
    assert_eq!(b.poll(3, &mut sw), 100);
    assert_eq!(b.reference.overflows, 0);
}

#[test]
fn a_full_ring_refuses_never_overwrites_and_raises_one_cq_error() {
    let mut b = Bench::new(3);
    let mut sw = b.create(9, 1, 2);
    let cs: Vec<Completion> = (0..5)
        .map(|_| {
            let mut c = Completion::random(&mut b.rng, 9);
            c.status = 0;
            c
        })
        .collect();
    for c in &cs {
        b.completions.push_back(Op::Complete(*c));
    }
    b.drain();
    assert_eq!(b.dma_writes, 2, "two entries, two CQEs");
    assert_eq!(b.overflow_pulses, 3);
    let qpns: Vec<u64> = b.qp_errors.iter().map(|e| e.0).collect();
    assert_eq!(
        qpns,
        [cs[2].qpn, cs[3].qpn, cs[4].qpn],
        "each refused CQE's QP"
    );
    assert_eq!(b.events, [(2, event_code("CQ_ERR"), 9)], "one CQ_ERR");
    assert_eq!(b.poll(9, &mut sw), 2);
    // Consuming does not revive an overflowed CQ...
    b.doorbells.push_back(doorbell(9, 2, true, false));
    b.completions.push_back(Op::Complete(cs[0]));
    b.drain();
    assert_eq!(b.dma_writes, 2);
    assert_eq!(b.overflow_pulses, 4);
    assert_eq!(b.events.len(), 1, "CQ_ERR once");
    // ... destroying and creating it again does.
    b.commands.push_back(Op::Destroy { cqn: 9 });
    let mut sw = b.create(9, 1, 2);
    b.drain();
    b.completions.push_back(Op::Complete(cs[1]));
    b.drain();
    assert_eq!(b.dma_writes, 3);
    assert_eq!(b.poll(9, &mut sw), 1);
}

#[test]
fn arming_gives_one_event_at_the_next_cqe_it_asks_for() {
    let mut b = Bench::new(4);
    let mut sw = b.create(4, 4, 6);
    let mut c = Completion::random(&mut b.rng, 4);
    c.status = 0;
    c.solicited = false;
    let unsolicited = c;
    let solicited = Completion {
        solicited: true,
        ..c
    };
    let error = Completion { status: 5, ..c };
    let completion = (6, event_code("COMPLETION"), 4);

    b.completions.push_back(Op::Complete(unsolicited));
    b.drain();
    assert!(b.events.is_empty(), "unarmed: no event");

    b.doorbells.push_back(doorbell(4, 0, true, false));
    b.completions.push_back(Op::Complete(unsolicited));
    b.completions.push_back(Op::Complete(unsolicited));
    b.drain();
    assert_eq!(b.events, [completion], "arm: the next CQE, once");

    b.doorbells.push_back(doorbell(4, 0, false, true));
    b.completions.push_back(Op::Complete(unsolicited));
    b.drain();
    assert_eq!(
        b.events.len(),
        1,
        "solicited-only: not for an unsolicited CQE"
    );
    b.completions.push_back(Op::Complete(solicited));
    b.drain();
    assert_eq!(b.events.len(), 2, "solicited-only: a solicited CQE");

    b.doorbells.push_back(doorbell(4, 0, false, true));
    b.completions.push_back(Op::Complete(error));
    b.completions.push_back(Op::Complete(error));
    b.drain();
    assert_eq!(
        b.events, [completion; 3],
        "solicited-only: an error CQE, once"
    );
    assert_eq!(b.poll(4, &mut sw), 7);
}

#[test]
fn a_doorbell_beyond_the_ring_or_of_no_cq_changes_nothing() {
    let mut b = Bench::new(5);
    let mut sw = b.create(2, 2, 0);
    for _ in 0..4 {
        let c = Completion::random(&mut b.rng, 2);
        b.completions.push_back(Op::Complete(c));
    }
    b.drain();
    assert_eq!(b.poll(2, &mut sw), 4);
    // Consumer 5 with producer 4 would put 2^24 - 1 entries in the ring.
    b.doorbells.push_back(doorbell(2, 5, true, false));
    b.doorbells.push_back(doorbell(8, 0, true, false));
    b.drain();
    assert_eq!(b.doorbell_error_pulses, 2);
    let c = Completion::random(&mut b.rng, 2);
    b.completions.push_back(Op::Complete(c));
    b.drain();
    assert_eq!(
        b.dma_writes, 4,
        "still full: the refused doorbell freed nothing"
    );
    assert_eq!(b.overflow_pulses, 1);
    assert!(
        b.events.iter().all(|e| e.1 != event_code("COMPLETION")),
        "the arm was refused too"
    );
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("cqe_writer", &verilog_of::<CqeWriter>());
}

#[test]
fn synthesizes_with_the_cq_table_in_block_ram() {
    let report = xilinx_synth("cqe_writer", &verilog_of::<CqeWriter>()).unwrap();
    assert!(report.block_rams() >= 1, "1024 CQ contexts in block RAM");
    assert!(report.luts() < 3000, "{} LUTs", report.luts());
}
