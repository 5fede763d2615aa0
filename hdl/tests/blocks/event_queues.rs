//! EventQueues in rust-hdl's simulator against a reference of the ring
//! and MSI-X rules written from the ABI (`rocenic_abi::eqe`): every EQE
//! write lands at the entry the producer index names, holds the event's
//! fields where the ABI's `Field`s put them and the owner bit `owner_for`
//! gives; software polling by owner bit reads every EQE once, in order; an
//! armed EQ sends exactly one MSI-X message, right after its EQE; a masked
//! vector sets its pending bit and sends on unmask; a full ring drops
//! (never overwrites) and pulses `eq_overflow`; a doorbell beyond the ring
//! is refused. Random valid/ready delays on every port; then the recorded
//! cycles on the Verilog under Verilator, the lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_abi::cqe;
use rocenic_abi::eqe;
use rocenic_hdl::host::event_queues::EventQueues;
use rocenic_hdl::primitives::wide::bits_to_bytes;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

const ENTRY: usize = 16;
type Entry = [u8; ENTRY];
const INDEX_MASK: u64 = (1 << 24) - 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    eqn: u64,
    event: u64,
    cause: u64,
    object: u64,
    detail: u64,
}

impl Event {
    fn random(rng: &mut ChaCha8Rng, eqn: u64) -> Event {
        let codes = eqe::EVENT_TYPE.codes;
        let causes = eqe::QP_ERROR_CAUSE.codes;
        Event {
            eqn,
            event: codes[rng.gen_range(0..codes.len())].value,
            cause: causes[rng.gen_range(0..causes.len())].value,
            object: rng.gen_range(0..1 << 24),
            detail: rng.gen_range(0..1 << 32),
        }
    }

    /// The EQE as the ABI lays it out, owner bit included.
    fn entry(&self, owner: u64) -> Entry {
        let mut e = [0u8; ENTRY];
        for (field, value) in [
            (eqe::EVENT, self.event),
            (eqe::CAUSE, self.cause),
            (eqe::OBJECT, self.object),
            (eqe::DETAIL, self.detail),
            (eqe::OWNER, owner),
        ] {
            field.set(&mut e, value).unwrap();
        }
        e
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Create {
        eqn: u64,
        ring: u64,
        log_size: u32,
        vector: u64,
    },
    Destroy {
        eqn: u64,
    },
    Doorbell {
        eqn: u64,
        consumer: u64,
        arm: bool,
    },
    Post(Event),
}

#[derive(Clone, Copy, Debug, Default)]
struct RefEq {
    ring: u64,
    log_size: u32,
    vector: u64,
    producer: u64,
    consumer: u64,
    armed: bool,
    overrun: bool,
}

/// A DMA write the reference expects: an EQE or a vector's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Write {
    Eqe(u64, Entry),
    Message(u64),
}

/// The rules of the module doc, applied one taken operation at a time,
/// with the mask as the bench holds it.
#[derive(Default)]
struct Reference {
    eqs: BTreeMap<u64, RefEq>,
    writes: VecDeque<Write>,
    mask: u32,
    pending: u32,
    /// Messages owed by unmasking, in any order.
    resends: BTreeSet<u64>,
    overflows: u64,
    fatals: u64,
    doorbell_errors: u64,
    messages: u64,
    /// Every EQE written, per EQ, in order (since its creation).
    written: BTreeMap<u64, Vec<Entry>>,
}

impl Reference {
    fn signal(&mut self, vector: u64) {
        if self.mask >> vector & 1 == 1 {
            self.pending |= 1 << vector;
        } else {
            self.writes.push_back(Write::Message(vector));
            self.messages += 1;
        }
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Create {
                eqn,
                ring,
                log_size,
                vector,
            } => {
                self.eqs.insert(
                    eqn,
                    RefEq {
                        ring,
                        log_size,
                        vector,
                        ..Default::default()
                    },
                );
                self.written.insert(eqn, Vec::new());
            }
            Op::Destroy { eqn } => {
                self.eqs.remove(&eqn);
            }
            Op::Doorbell { eqn, consumer, arm } => match self.eqs.get_mut(&eqn) {
                Some(eq)
                    if (eq.producer.wrapping_sub(consumer) & INDEX_MASK) <= 1 << eq.log_size =>
                {
                    eq.consumer = consumer;
                    if arm && eq.producer != consumer {
                        eq.armed = false;
                        let vector = eq.vector;
                        self.signal(vector);
                    } else {
                        eq.armed |= arm;
                    }
                }
                _ => self.doorbell_errors += 1,
            },
            Op::Post(e) => {
                let Some(eq) = self.eqs.get_mut(&e.eqn) else {
                    self.overflows += 1;
                    return;
                };
                let used = eq.producer.wrapping_sub(eq.consumer) & INDEX_MASK;
                if eq.overrun || used >= 1 << eq.log_size {
                    self.overflows += 1;
                    if !eq.overrun {
                        self.fatals += 1;
                    }
                    eq.overrun = true;
                    return;
                }
                let slot = eq.producer & ((1 << eq.log_size) - 1);
                let entry = e.entry(cqe::owner_for(eq.producer, eq.log_size));
                self.writes
                    .push_back(Write::Eqe(eq.ring + ENTRY as u64 * slot, entry));
                self.written.get_mut(&e.eqn).unwrap().push(entry);
                eq.producer = (eq.producer + 1) & INDEX_MASK;
                if eq.armed {
                    eq.armed = false;
                    let vector = eq.vector;
                    self.signal(vector);
                }
            }
        }
    }

    /// The bench changes the mask (while the block is idle): every pending
    /// vector it unmasks owes one message.
    fn set_mask(&mut self, mask: u32) {
        self.mask = mask;
        for v in 0..32 {
            if self.pending >> v & 1 == 1 && mask >> v & 1 == 0 {
                self.resends.insert(v);
                self.pending &= !(1 << v);
            }
        }
    }
}

/// Software's side of one EQ: what it has consumed, polling by owner bit.
#[derive(Clone, Copy, Debug)]
struct Software {
    ring: u64,
    log_size: u32,
    consumed: u64,
}

/// The block, its neighbours (an admin engine, the doorbells, the event
/// sources, host memory, the MSI-X table) and the reference.
struct Bench {
    sim: CycleSim<EventQueues>,
    rng: ChaCha8Rng,
    reference: Reference,
    memory: BTreeMap<u64, Entry>,
    /// The MSI-X table: each vector's address and data.
    vectors: Vec<(u64, u32)>,
    commands: VecDeque<Op>,
    doorbells: VecDeque<Op>,
    events: VecDeque<Op>,
    /// Out of 8: how often each input holds a new operation when it can,
    /// and the DMA port is ready.
    busy: u32,
    ready: u32,
    overflow_pulses: u64,
    fatal_pulses: u64,
    doorbell_error_pulses: u64,
    /// Every DMA write taken, in order.
    log: Vec<Write>,
    presenting: [bool; 3],
    takes: Vec<u64>,
    write_cycles: Vec<u64>,
}

impl Bench {
    fn new(seed: u64) -> Bench {
        let mut sim = CycleSim::new(EventQueues::default(), |b| &mut b.clock);
        sim.record();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let vectors = (0..32u64)
            .map(|v| (0xFEE0_0000 + (v << 8) + 4 * rng.gen_range(0..16), rng.gen()))
            .collect();
        let mut bench = Bench {
            sim,
            rng,
            reference: Reference::default(),
            memory: BTreeMap::new(),
            vectors,
            commands: VecDeque::new(),
            doorbells: VecDeque::new(),
            events: VecDeque::new(),
            busy: 8,
            ready: 8,
            overflow_pulses: 0,
            fatal_pulses: 0,
            doorbell_error_pulses: 0,
            log: Vec::new(),
            presenting: [false; 3],
            takes: Vec::new(),
            write_cycles: Vec::new(),
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
                        eqn,
                        ring,
                        log_size,
                        vector,
                    } => {
                        u.command.destroy.next = false;
                        u.command.eqn.next = bits(eqn);
                        u.command.ring.next = bits(ring);
                        u.command.log_size.next = bits(u64::from(log_size));
                        u.command.vector.next = bits(vector);
                    }
                    Op::Destroy { eqn } => {
                        u.command.destroy.next = true;
                        u.command.eqn.next = bits(eqn);
                    }
                    _ => unreachable!(),
                }
                u.command.valid.next = true;
                self.presenting[0] = true;
            }
        }
        if !self.presenting[1] && self.rng.gen_ratio(busy, 8) {
            if let Some(&Op::Doorbell { eqn, consumer, arm }) = self.doorbells.front() {
                u.doorbell.eqn.next = bits(eqn);
                u.doorbell.consumer.next = bits(consumer);
                u.doorbell.arm.next = arm;
                u.doorbell.valid.next = true;
                self.presenting[1] = true;
            }
        }
        if !self.presenting[2] && self.rng.gen_ratio(busy, 8) {
            if let Some(&Op::Post(e)) = self.events.front() {
                let p = &mut u.event;
                p.eqn.next = bits(e.eqn);
                p.event.next = bits(e.event);
                p.cause.next = bits(e.cause);
                p.object.next = bits(e.object);
                p.detail.next = bits(e.detail);
                p.valid.next = true;
                self.presenting[2] = true;
            }
        }
    }

    /// One cycle: inputs presented, the DMA write checked as it is taken,
    /// the edge, and the taken operation applied to the reference.
    fn tick(&mut self) {
        self.present();
        let dma_ready = self.rng.gen_ratio(self.ready, 8);
        let mask = self.reference.mask;
        let u = &mut self.sim.uut;
        u.dma.ready.next = dma_ready;
        u.msix_mask.next = bits(u64::from(mask));
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
        if u.event.valid.val() && u.event.ready.val() {
            taken = self.events.pop_front();
            takes += 1;
        }
        assert!(takes <= 1, "cycle {cycle}: one operation per cycle");
        if u.dma.valid.val() && u.dma.ready.val() {
            assert!(u.dma.first.val() && u.dma.last.val(), "one beat");
            let address = u.dma.req_addr.val().to_u64();
            let len = u.dma.req_len.val().to_u64() as usize;
            assert_eq!(u.dma.addr.val().to_u64(), address & !63);
            let lane = (address & 63) as usize;
            let keep = u.dma.keep.val().to_u64();
            assert_eq!(keep, ((1u64 << len) - 1) << lane, "keep marks the bytes");
            let beat = bits_to_bytes(u.dma.data.val());
            let bytes = &beat[lane..lane + len];
            let got = if len == 4 {
                let vector = self
                    .vectors
                    .iter()
                    .position(|&(a, _)| a == address)
                    .unwrap_or_else(|| panic!("cycle {cycle}: a 4-byte write at {address:#x}"))
                    as u64;
                assert_eq!(
                    bytes,
                    self.vectors[vector as usize].1.to_le_bytes(),
                    "cycle {cycle}: vector {vector}'s data"
                );
                Write::Message(vector)
            } else {
                assert_eq!(len, ENTRY, "cycle {cycle}: an EQE");
                Write::Eqe(address, bytes.try_into().unwrap())
            };
            let r = &mut self.reference;
            match got {
                Write::Message(v) if r.resends.remove(&v) => {}
                _ => {
                    let expected = r
                        .writes
                        .pop_front()
                        .unwrap_or_else(|| panic!("cycle {cycle}: {got:?} nobody expects"));
                    assert_eq!(got, expected, "cycle {cycle}");
                }
            }
            if let Write::Eqe(address, entry) = got {
                self.memory.insert(address, entry);
            }
            self.log.push(got);
            self.write_cycles.push(cycle);
        }
        self.overflow_pulses += u64::from(u.eq_overflow.val());
        self.fatal_pulses += u64::from(u.eq_fatal.val());
        self.doorbell_error_pulses += u64::from(u.doorbell_error.val());
        let lookup = u
            .vector_lookup
            .val()
            .then(|| u.vector_lookup_index.val().index());
        self.sim.tick();
        let u = &mut self.sim.uut;
        // The MSI-X table answers a lookup in the next cycle.
        if let Some(v) = lookup {
            u.vector_address.next = bits(self.vectors[v].0);
            u.vector_data.next = bits(u64::from(self.vectors[v].1));
        } else {
            u.vector_address.next = bits(0);
            u.vector_data.next = bits(0);
        }
        if let Some(op) = taken {
            let i = match op {
                Op::Create { .. } | Op::Destroy { .. } => 0,
                Op::Doorbell { .. } => 1,
                Op::Post(_) => 2,
            };
            match i {
                0 => u.command.valid.next = false,
                1 => u.doorbell.valid.next = false,
                _ => u.event.valid.next = false,
            }
            self.presenting[i] = false;
            self.reference.apply(op);
            self.takes.push(cycle);
        }
    }

    fn pending(&self) -> bool {
        !(self.commands.is_empty() && self.doorbells.is_empty() && self.events.is_empty())
    }

    /// Runs until every queued operation is taken and every write out.
    fn drain(&mut self) {
        for _ in 0..20_000 {
            if !self.pending()
                && self.reference.writes.is_empty()
                && self.reference.resends.is_empty()
            {
                for _ in 0..8 {
                    self.tick();
                }
                assert!(self.reference.writes.is_empty(), "a write nobody expects");
                assert_eq!(
                    self.sim.uut.msix_pending.val().to_u64(),
                    u64::from(self.reference.pending),
                    "the pending bits"
                );
                return;
            }
            self.tick();
        }
        panic!("the block stopped taking or giving");
    }

    /// A new mask, with the block idle; the messages it owes go out
    /// before anything else is presented.
    fn set_mask(&mut self, mask: u32) {
        self.drain();
        self.reference.set_mask(mask);
        self.drain();
    }

    fn create(&mut self, eqn: u64, log_size: u32, vector: u64) -> Software {
        let ring = 0x0000_7F00_0000_0000 + (eqn << 21);
        for i in 0..1u64 << log_size {
            self.memory.insert(ring + ENTRY as u64 * i, [0; ENTRY]);
        }
        self.commands.push_back(Op::Create {
            eqn,
            ring,
            log_size,
            vector,
        });
        Software {
            ring,
            log_size,
            consumed: 0,
        }
    }

    /// Software polls `eqn` by owner bit: every entry it owns is the next
    /// EQE the reference wrote, whole.
    fn poll(&mut self, eqn: u64, sw: &mut Software) -> usize {
        let mut polled = 0;
        loop {
            let slot = sw.consumed & ((1 << sw.log_size) - 1);
            let entry = self.memory[&(sw.ring + ENTRY as u64 * slot)];
            let owner = eqe::OWNER.get(&entry).unwrap();
            if owner != cqe::owner_for(sw.consumed, sw.log_size) {
                return polled;
            }
            let expected = self.reference.written[&eqn][sw.consumed as usize];
            assert_eq!(entry, expected, "EQ {eqn}: EQE {} read whole", sw.consumed);
            sw.consumed += 1;
            polled += 1;
        }
    }

    fn messages(&self) -> Vec<u64> {
        self.log
            .iter()
            .filter_map(|w| match w {
                Write::Message(v) => Some(*v),
                _ => None,
            })
            .collect()
    }
}

fn doorbell(eqn: u64, consumer: u64, arm: bool) -> Op {
    Op::Doorbell {
        eqn,
        consumer: consumer & INDEX_MASK,
        arm,
    }
}

#[test]
fn random_traffic_follows_the_rules_and_software_reads_every_eqe_once() {
    let mut b = Bench::new(1);
    b.busy = 6;
    b.ready = 5;
    // Five EQs, four small enough to fill; EQ 6 never exists. Vectors 3
    // and 9 start masked.
    let eqns = [0u64, 1, 2, 5, 7];
    let vectors = [3u64, 4, 9, 4, 20];
    let mut software: BTreeMap<u64, Software> = BTreeMap::new();
    for (i, &eqn) in eqns.iter().enumerate() {
        let sw = b.create(eqn, [1, 2, 3, 2, 6][i], vectors[i]);
        software.insert(eqn, sw);
    }
    b.set_mask(1 << 3 | 1 << 9);
    let mut polled = 0;
    for round in 0..6000 {
        let r = b.rng.gen_range(0..100);
        if r < 55 {
            if b.events.len() < 4 {
                let eqn = if b.rng.gen_ratio(1, 50) {
                    6
                } else {
                    eqns[b.rng.gen_range(0..eqns.len())]
                };
                let e = Event::random(&mut b.rng, eqn);
                b.events.push_back(Op::Post(e));
            }
        } else if r < 70 && b.doorbells.len() < 2 {
            let eqn = eqns[b.rng.gen_range(0..eqns.len())];
            let mut sw = software[&eqn];
            if b.commands.is_empty() {
                polled += b.poll(eqn, &mut sw);
            }
            software.insert(eqn, sw);
            let consumer = if b.rng.gen_ratio(1, 12) {
                // Beyond the ring: refused.
                sw.consumed + (1 << sw.log_size) + 1 + b.rng.gen_range(0..100)
            } else {
                sw.consumed
            };
            let op = doorbell(eqn, consumer, b.rng.gen_ratio(1, 3));
            b.doorbells.push_back(op);
        } else if b.commands.is_empty()
            && (round % 250 == 0 || b.reference.eqs.values().any(|eq| eq.overrun))
        {
            // Destroy and create again (an overrun one if there is one):
            // the EQ starts clean.
            let i = (0..4)
                .find(|&i| b.reference.eqs[&eqns[i]].overrun)
                .unwrap_or_else(|| b.rng.gen_range(0..4));
            let eqn = eqns[i];
            b.drain();
            b.commands.push_back(Op::Destroy { eqn });
            let sw = b.create(eqn, software[&eqn].log_size, vectors[i]);
            software.insert(eqn, sw);
        } else if round % 700 == 0 {
            // A new mask: the pending vectors it unmasks send.
            let mask = (b.rng.gen::<u32>() & (1 << 3 | 1 << 4 | 1 << 9 | 1 << 20)) | 1 << 3;
            b.set_mask(mask);
        }
        b.tick();
    }
    b.drain();
    for (&eqn, sw) in software.iter_mut() {
        polled += b.poll(eqn, sw);
    }
    let r = &b.reference;
    let eqes = b.log.iter().filter(|w| matches!(w, Write::Eqe(..))).count();
    assert!(eqes > 800, "{eqes} EQEs written");
    assert!(polled > 800, "{polled} EQEs polled");
    assert!(r.overflows > 20, "{} overflows", r.overflows);
    assert!(r.fatals > 3, "{} overruns", r.fatals);
    assert!(
        r.doorbell_errors > 5,
        "{} doorbell errors",
        r.doorbell_errors
    );
    assert!(r.messages > 100, "{} messages", r.messages);
    assert_eq!(b.overflow_pulses, r.overflows);
    assert_eq!(b.fatal_pulses, r.fatals);
    assert_eq!(b.doorbell_error_pulses, r.doorbell_errors);
    assert!(b.messages().contains(&9), "a message sent on unmask");
    let cycles = b.sim.replay_in_verilator("event_queues").unwrap();
    assert!(cycles > 1000, "replayed {cycles} cycles");
}

#[test]
fn an_armed_eq_sends_exactly_one_message_right_after_its_eqe() {
    let mut b = Bench::new(2);
    let mut sw = b.create(3, 4, 17);
    b.drain();
    let e = Event::random(&mut b.rng, 3);
    b.events.push_back(Op::Post(e));
    b.drain();
    assert!(b.messages().is_empty(), "unarmed: no message");
    assert_eq!(b.poll(3, &mut sw), 1);
    // Armed with every entry consumed: the message waits for the next EQE.
    b.doorbells.push_back(doorbell(3, 1, true));
    b.drain();
    assert!(
        b.messages().is_empty(),
        "armed, nothing unconsumed: no message yet"
    );
    for _ in 0..3 {
        b.events.push_back(Op::Post(e));
    }
    b.drain();
    assert_eq!(b.log.len(), 5, "three EQEs and one message");
    assert_eq!(
        b.log[2],
        Write::Message(17),
        "the message right after its EQE"
    );
    assert!(matches!(b.log[1], Write::Eqe(..)));
    // Armed with entries unconsumed: the message at once.
    b.doorbells.push_back(doorbell(3, 2, true));
    b.drain();
    assert_eq!(b.log.len(), 6);
    assert_eq!(b.log[5], Write::Message(17), "arm with entries pending");
    b.events.push_back(Op::Post(e));
    b.drain();
    assert_eq!(b.messages().len(), 2, "that arm was used");
    assert_eq!(b.poll(3, &mut sw), 4);
}

#[test]
fn a_masked_vector_sets_its_pending_bit_and_sends_on_unmask() {
    let mut b = Bench::new(3);
    let _sw = b.create(1, 3, 5);
    b.set_mask(1 << 5);
    for consumer in 0..3 {
        b.doorbells.push_back(doorbell(1, consumer, true));
        let e = Event::random(&mut b.rng, 1);
        b.events.push_back(Op::Post(e));
        b.drain();
    }
    assert!(b.messages().is_empty(), "masked: no message");
    assert_eq!(
        b.sim.uut.msix_pending.val().to_u64(),
        1 << 5,
        "pending bit set"
    );
    b.set_mask(0);
    b.drain();
    assert_eq!(b.messages(), [5], "one message on unmask");
    assert_eq!(
        b.sim.uut.msix_pending.val().to_u64(),
        0,
        "pending bit cleared"
    );
}

#[test]
fn a_full_eq_drops_never_overwrites_and_pulses_overflow() {
    let mut b = Bench::new(4);
    let mut sw = b.create(2, 1, 0);
    let es: Vec<Event> = (0..5).map(|_| Event::random(&mut b.rng, 2)).collect();
    for e in &es {
        b.events.push_back(Op::Post(*e));
    }
    b.drain();
    assert_eq!(b.log.len(), 2, "two entries, two EQEs");
    assert_eq!(b.overflow_pulses, 3);
    assert_eq!(b.fatal_pulses, 1, "one overrun");
    assert_eq!(b.poll(2, &mut sw), 2);
    // Consuming does not revive an overrun EQ...
    b.doorbells.push_back(doorbell(2, 2, false));
    b.events.push_back(Op::Post(es[0]));
    b.drain();
    assert_eq!(b.log.len(), 2);
    assert_eq!(b.overflow_pulses, 4);
    assert_eq!(b.fatal_pulses, 1);
    // ... destroying and creating it again does.
    b.commands.push_back(Op::Destroy { eqn: 2 });
    let mut sw = b.create(2, 1, 0);
    b.events.push_back(Op::Post(es[1]));
    b.drain();
    assert_eq!(b.log.len(), 3);
    assert_eq!(b.poll(2, &mut sw), 1);
}

#[test]
fn a_doorbell_beyond_the_ring_or_of_no_eq_changes_nothing() {
    let mut b = Bench::new(5);
    let mut sw = b.create(4, 2, 8);
    for _ in 0..4 {
        let e = Event::random(&mut b.rng, 4);
        b.events.push_back(Op::Post(e));
    }
    b.drain();
    assert_eq!(b.poll(4, &mut sw), 4);
    // Consumer 5 with producer 4 would put 2^24 - 1 entries in the ring.
    b.doorbells.push_back(doorbell(4, 5, true));
    b.doorbells.push_back(doorbell(6, 0, true));
    b.drain();
    assert_eq!(b.doorbell_error_pulses, 2);
    assert!(b.messages().is_empty(), "the arm was refused too");
    let e = Event::random(&mut b.rng, 4);
    b.events.push_back(Op::Post(e));
    b.drain();
    assert_eq!(
        b.log.len(),
        4,
        "still full: the refused doorbell freed nothing"
    );
    assert_eq!(b.overflow_pulses, 1);
}

#[test]
fn an_event_takes_two_cycles_and_its_eqe_is_out_at_t_plus_3() {
    let mut b = Bench::new(6);
    let mut sw = b.create(0, 7, 1);
    b.drain();
    for _ in 0..50 {
        let e = Event::random(&mut b.rng, 0);
        b.events.push_back(Op::Post(e));
    }
    let first = b.takes.len();
    let first_write = b.write_cycles.len();
    b.drain();
    let takes = &b.takes[first..];
    assert_eq!(takes.len(), 50);
    assert_eq!(
        takes.last().unwrap() - takes[0],
        98,
        "an event per 2 cycles"
    );
    assert_eq!(
        b.write_cycles[first_write] - takes[0],
        3,
        "the module doc's t + 3"
    );
    assert_eq!(b.poll(0, &mut sw), 50);
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("event_queues", &verilog_of::<EventQueues>());
}

#[test]
fn synthesizes_small_without_a_lane_shifter() {
    let report = xilinx_synth("event_queues", &verilog_of::<EventQueues>()).unwrap();
    assert!(report.luts() < 1200, "{} LUTs", report.luts());
}
