//! WqeFetch in rust-hdl's simulator against the ring rules of its module
//! doc and the ABI's ring layout (`rocenic_abi::wqe`): a host that answers
//! reads after a latency, tags out of order and their beats interleaved;
//! software that fills slots and rings doorbells; a transport that retires
//! the WQEs it was handed. Every read stays inside its ring at the slot the
//! fetch cursor names, never beyond what was rung or what the transport
//! has room for; every WQE comes out once, in its ring's order, with the
//! bytes software wrote. Then the recorded cycles on the Verilog under
//! Verilator, the lint and one Yosys synthesis.

use crate::common::assert_lint_clean;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_abi::eqe::QP_ERROR_CAUSE;
use rocenic_hdl::host::wqe_fetch::{WqeFetch, BATCHES, CORE_WQES};
use rocenic_hdl::primitives::wide::{bits_from_bytes, bits_to_bytes};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;
use std::collections::{BTreeMap, VecDeque};

const BEAT: usize = 64;
/// Cycles from reset until the ring table's sweep is over.
const SWEEP: usize = 2048 + 4;

/// A ring as software and the checks see it.
#[derive(Clone, Debug)]
struct Ring {
    base: u64,
    log_size: u32,
    log_stride: u32,
    /// Rung by software.
    producer: u16,
    /// The next index a read may start at (the fetch cursor the reads show).
    read_next: u16,
    /// The next index expected on the output, and its beats seen so far.
    out_next: u16,
    out_beat: usize,
    /// Handed on and not retired yet.
    handed: VecDeque<u16>,
    retired: u16,
    /// Each rung WQE's bytes, by index, until it is handed on.
    contents: BTreeMap<u16, Vec<u8>>,
}

impl Ring {
    fn slot_bytes(&self) -> usize {
        1 << self.log_stride
    }

    fn slot_address(&self, index: u16) -> u64 {
        self.base + ((u64::from(index) & ((1 << self.log_size) - 1)) << self.log_stride)
    }
}

/// A read the host has taken: its tag, where, how long, when it may
/// answer, and how many beats it has given.
struct HostRead {
    tag: u64,
    address: u64,
    beats: usize,
    sent: usize,
    due: u64,
}

struct Bench {
    sim: CycleSim<WqeFetch>,
    rng: ChaCha8Rng,
    /// Host memory, 64-byte lines.
    memory: BTreeMap<u64, [u8; BEAT]>,
    /// Rings by (qpn, queue).
    rings: BTreeMap<(u64, u64), Ring>,
    commands: VecDeque<(u64, u64, u64, u32, u32)>,
    doorbells: VecDeque<(u64, u64, u16)>,
    retires: VecDeque<(u64, u64)>,
    reads: Vec<HostRead>,
    tags_in_use: u64,
    /// Host read latency in cycles, and how often each port is ready.
    latency: u64,
    ready: u32,
    /// The transport retires what it is handed on its own.
    auto_retire: bool,
    presenting: [bool; 3],
    /// Doorbells and retires are presented at once, not after a random
    /// wait.
    eager: bool,
    wqes_out: u64,
    last_beat_cycle: u64,
    /// Cycles of the events a latency check needs: doorbells taken, read
    /// requests taken, last read beats given, WQE beats out.
    doorbell_cycles: Vec<u64>,
    request_cycles: Vec<u64>,
    last_data_cycles: Vec<u64>,
    out_cycles: Vec<u64>,
    qp_errors: Vec<(u64, u64)>,
    doorbell_errors: u64,
}

impl Bench {
    fn new(seed: u64, latency: u64, ready: u32) -> Bench {
        let mut sim = CycleSim::new(WqeFetch::default(), |b| &mut b.clock);
        sim.record();
        sim.uut.reset.next = true;
        sim.tick();
        sim.uut.reset.next = false;
        let mut b = Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed),
            memory: BTreeMap::new(),
            rings: BTreeMap::new(),
            commands: VecDeque::new(),
            doorbells: VecDeque::new(),
            retires: VecDeque::new(),
            reads: Vec::new(),
            tags_in_use: 0,
            latency,
            ready,
            auto_retire: true,
            presenting: [false; 3],
            eager: false,
            wqes_out: 0,
            last_beat_cycle: 0,
            doorbell_cycles: Vec::new(),
            request_cycles: Vec::new(),
            last_data_cycles: Vec::new(),
            out_cycles: Vec::new(),
            qp_errors: Vec::new(),
            doorbell_errors: 0,
        };
        for _ in 0..SWEEP {
            b.tick();
        }
        b
    }

    fn create(&mut self, qpn: u64, queue: u64, log_size: u32, log_stride: u32) {
        let base = 0x0000_5A00_0000_0000 + (qpn << 22) + (queue << 21);
        self.rings.insert(
            (qpn, queue),
            Ring {
                base,
                log_size,
                log_stride,
                producer: 0,
                read_next: 0,
                out_next: 0,
                out_beat: 0,
                handed: VecDeque::new(),
                retired: 0,
                contents: BTreeMap::new(),
            },
        );
        self.commands
            .push_back((qpn, queue, base, log_size, log_stride));
    }

    /// Software writes `n` WQEs (as many as the ring has room for) and
    /// rings the doorbell.
    fn post(&mut self, qpn: u64, queue: u64, n: usize) -> usize {
        let ring = self.rings.get_mut(&(qpn, queue)).unwrap();
        let room =
            (1usize << ring.log_size) - usize::from(ring.producer.wrapping_sub(ring.retired));
        let n = n.min(room);
        for _ in 0..n {
            let index = ring.producer;
            let mut bytes = vec![0u8; ring.slot_bytes()];
            self.rng.fill(&mut bytes[..]);
            let at = ring.slot_address(index);
            for (i, line) in bytes.chunks(BEAT).enumerate() {
                self.memory
                    .insert(at + (i * BEAT) as u64, line.try_into().unwrap());
            }
            ring.contents.insert(index, bytes);
            ring.producer = index.wrapping_add(1);
        }
        if n > 0 {
            self.doorbells.push_back((qpn, queue, ring.producer));
        }
        n
    }

    fn present(&mut self) {
        let u = &mut self.sim.uut;
        if !self.presenting[0] {
            if let Some(&(qpn, queue, base, log_size, log_stride)) = self.commands.front() {
                u.command.destroy.next = false;
                u.command.qpn.next = bits(qpn);
                u.command.queue.next = queue == 1;
                u.command.ring.next = bits(base);
                u.command.log_size.next = bits(u64::from(log_size));
                u.command.log_stride.next = log_stride == 7;
                u.command.valid.next = true;
                self.presenting[0] = true;
            }
        }
        let eager = self.eager;
        if !self.presenting[1] && (eager || self.rng.gen_ratio(1, 2)) {
            if let Some(&(qpn, queue, producer)) = self.doorbells.front() {
                u.doorbell.qpn.next = bits(qpn);
                u.doorbell.queue.next = queue == 1;
                u.doorbell.producer.next = bits(u64::from(producer));
                u.doorbell.valid.next = true;
                self.presenting[1] = true;
            }
        }
        if !self.presenting[2] && (eager || self.rng.gen_ratio(1, 2)) {
            if let Some(&(qpn, queue)) = self.retires.front() {
                u.retire.qpn.next = bits(qpn);
                u.retire.queue.next = queue == 1;
                u.retire.valid.next = true;
                self.presenting[2] = true;
            }
        }
    }

    /// The host's read data for this cycle: a due read, picked at random
    /// (so tags answer out of order and interleave).
    fn host_data(&mut self) -> Option<usize> {
        let now = self.sim.cycles();
        let due: Vec<usize> = (0..self.reads.len())
            .filter(|&i| self.reads[i].due <= now)
            .collect();
        if due.is_empty() || !self.rng.gen_ratio(self.ready, 8) {
            return None;
        }
        Some(due[self.rng.gen_range(0..due.len())])
    }

    fn tick(&mut self) {
        self.present();
        let ready = self.ready;
        let req_ready = self.rng.gen_ratio(ready, 8);
        let out_ready = self.rng.gen_ratio(ready, 8);
        let error_ready = self.rng.gen_ratio(ready, 8);
        let answer = self.host_data();
        let u = &mut self.sim.uut;
        u.dma.req_ready.next = req_ready;
        u.wqe.ready.next = out_ready;
        u.qp_error.ready.next = error_ready;
        u.dma.rd_valid.next = answer.is_some();
        if let Some(i) = answer {
            let r = &self.reads[i];
            let line = self.memory[&(r.address + (r.sent * BEAT) as u64)];
            u.dma.rd_tag.next = bits(r.tag);
            u.dma.rd_data.next = bits_from_bytes(&line);
            u.dma.rd_last.next = r.sent + 1 == r.beats;
        }
        self.sim.settle();
        let cycle = self.sim.cycles();
        let u = &self.sim.uut;
        if let Some(i) = answer {
            assert!(u.dma.rd_ready.val(), "the fetch always takes read data");
            self.reads[i].sent += 1;
            if self.reads[i].sent == self.reads[i].beats {
                self.last_data_cycles.push(cycle);
                let r = self.reads.swap_remove(i);
                self.tags_in_use &= !(1 << r.tag);
            }
        }
        if u.dma.req_valid.val() && u.dma.req_ready.val() {
            let (tag, address, len) = (
                u.dma.req_tag.val().to_u64(),
                u.dma.req_addr.val().to_u64(),
                u.dma.req_len.val().to_u64() as usize,
            );
            assert!(tag < BATCHES, "cycle {cycle}: tag {tag}");
            assert_eq!(
                self.tags_in_use & (1 << tag),
                0,
                "cycle {cycle}: tag {tag} reused"
            );
            let (key, ring) = self
                .rings
                .iter_mut()
                .find(|(_, r)| {
                    address >= r.base && address < r.base + (1u64 << (r.log_size + r.log_stride))
                })
                .unwrap_or_else(|| panic!("cycle {cycle}: a read at {address:#x} of no ring"));
            let slot = ring.slot_bytes();
            assert!(
                len > 0 && len % slot == 0 && len <= 4 * BEAT,
                "cycle {cycle}: {len} bytes"
            );
            let count = (len / slot) as u16;
            assert_eq!(
                address,
                ring.slot_address(ring.read_next),
                "cycle {cycle}: ring {key:?} read at its fetch cursor"
            );
            assert!(
                address + len as u64 <= ring.base + (1u64 << (ring.log_size + ring.log_stride)),
                "cycle {cycle}: ring {key:?}: a read past the ring's end"
            );
            let end = ring.read_next.wrapping_add(count);
            assert!(
                ring.producer.wrapping_sub(ring.read_next) >= count,
                "cycle {cycle}: ring {key:?}: a read beyond the producer"
            );
            assert!(
                u64::from(end.wrapping_sub(ring.retired)) <= CORE_WQES,
                "cycle {cycle}: ring {key:?}: more than the transport has room for"
            );
            ring.read_next = end;
            self.request_cycles.push(cycle);
            self.tags_in_use |= 1 << tag;
            self.reads.push(HostRead {
                tag,
                address,
                beats: len / BEAT,
                sent: 0,
                due: cycle + self.latency,
            });
        }
        if u.wqe.valid.val() && u.wqe.ready.val() {
            let key = (u.wqe.qpn.val().to_u64(), u64::from(u.wqe.queue.val()));
            let ring = self
                .rings
                .get_mut(&key)
                .unwrap_or_else(|| panic!("cycle {cycle}: a WQE of no ring {key:?}"));
            let index = u.wqe.index.val().to_u64() as u16;
            assert_eq!(index, ring.out_next, "cycle {cycle}: ring {key:?} in order");
            let bytes = &ring.contents[&index];
            let at = ring.out_beat * BEAT;
            assert_eq!(
                bits_to_bytes(u.wqe.data.val())[..],
                bytes[at..at + BEAT],
                "cycle {cycle}: ring {key:?} WQE {index} beat {}",
                ring.out_beat
            );
            let last = at + BEAT == bytes.len();
            assert_eq!(u.wqe.last.val(), last, "cycle {cycle}: last");
            ring.out_beat += 1;
            if last {
                ring.contents.remove(&index);
                ring.handed.push_back(index);
                ring.out_next = index.wrapping_add(1);
                ring.out_beat = 0;
                self.wqes_out += 1;
                if self.auto_retire {
                    self.retires.push_back(key);
                }
            }
            self.last_beat_cycle = cycle;
            self.out_cycles.push(cycle);
        }
        if u.qp_error.valid.val() && u.qp_error.ready.val() {
            self.qp_errors.push((
                u.qp_error.qpn.val().to_u64(),
                u.qp_error.cause.val().to_u64(),
            ));
        }
        self.doorbell_errors += u64::from(u.doorbell_error.val());
        let taken = [
            u.command.valid.val() && u.command.ready.val(),
            u.doorbell.valid.val() && u.doorbell.ready.val(),
            u.retire.valid.val() && u.retire.ready.val(),
        ];
        assert!(
            taken.iter().filter(|&&t| t).count() <= 1,
            "one operation a cycle"
        );
        self.sim.tick();
        let u = &mut self.sim.uut;
        if taken[0] {
            self.commands.pop_front();
            u.command.valid.next = false;
            self.presenting[0] = false;
        }
        if taken[1] {
            self.doorbell_cycles.push(cycle);
            self.doorbells.pop_front();
            u.doorbell.valid.next = false;
            self.presenting[1] = false;
        }
        if taken[2] {
            let key = self.retires.pop_front().unwrap();
            let ring = self.rings.get_mut(&key).unwrap();
            ring.handed
                .pop_front()
                .expect("a retire of a WQE handed on");
            ring.retired = ring.retired.wrapping_add(1);
            u.retire.valid.next = false;
            self.presenting[2] = false;
        }
    }

    /// Everything rung has come out and, with `auto_retire`, been retired.
    fn idle(&self) -> bool {
        self.commands.is_empty()
            && self.doorbells.is_empty()
            && self.retires.is_empty()
            && self.reads.is_empty()
            && self.rings.values().all(|r| {
                r.out_next == r.producer || !self.auto_retire && r.handed.len() as u64 == CORE_WQES
            })
    }

    fn drain(&mut self) {
        for _ in 0..50_000 {
            if self.idle() {
                for _ in 0..16 {
                    self.tick();
                }
                return;
            }
            self.tick();
        }
        panic!("the fetch stopped");
    }
}

#[test]
fn random_rings_are_fetched_in_order_within_their_rules() {
    let mut b = Bench::new(1, 40, 6);
    let mut keys = Vec::new();
    for qpn in [0u64, 1, 5, 77, 512, 1023] {
        for queue in [0u64, 1] {
            let log_size = b.rng.gen_range(1..=6);
            let log_stride = if b.rng.gen_ratio(1, 3) { 7 } else { 6 };
            b.create(qpn, queue, log_size, log_stride);
            keys.push((qpn, queue));
        }
    }
    let mut posted = 0;
    while posted < 2000 {
        let (qpn, queue) = keys[b.rng.gen_range(0..keys.len())];
        let n = b.rng.gen_range(1..=9);
        posted += b.post(qpn, queue, n);
        let pause = b.rng.gen_range(0..30);
        for _ in 0..pause {
            b.tick();
        }
    }
    b.drain();
    assert_eq!(b.wqes_out, posted as u64);
    assert!(b.qp_errors.is_empty() && b.doorbell_errors == 0);
    let cycles = b.sim.replay_in_verilator("wqe_fetch").unwrap();
    assert!(cycles > 8000, "replayed {cycles} cycles");
}

#[test]
fn a_ring_holds_no_more_than_the_transport_has_room_for() {
    let mut b = Bench::new(2, 20, 8);
    b.auto_retire = false;
    b.create(3, 0, 7, 6);
    assert_eq!(b.post(3, 0, 100), 100);
    b.drain();
    assert_eq!(b.wqes_out, CORE_WQES, "the transport's room, no more");
    for _ in 0..5 {
        b.retires.push_back((3, 0));
    }
    b.drain();
    assert_eq!(b.wqes_out, CORE_WQES + 5, "one more for each retired");
    b.auto_retire = true;
    let handed = b.rings[&(3, 0)].handed.len();
    for _ in 0..handed {
        b.retires.push_back((3, 0));
    }
    b.drain();
    assert_eq!(b.wqes_out, 100);
}

#[test]
fn a_doorbell_beyond_the_ring_is_refused_and_its_qp_reported() {
    let mut b = Bench::new(3, 10, 8);
    b.create(9, 1, 2, 6);
    assert_eq!(b.post(9, 1, 3), 3);
    b.drain();
    // Producer 3 with 3 retired: 8 would put 5 WQEs in a ring of 4.
    b.doorbells.push_back((9, 1, 8));
    // A ring that was never created.
    b.doorbells.push_back((10, 0, 1));
    b.drain();
    let cause = QP_ERROR_CAUSE
        .by_name("DOORBELL_BEYOND_RING")
        .unwrap()
        .value;
    assert_eq!(b.qp_errors, vec![(9, cause)]);
    assert_eq!(b.doorbell_errors, 2);
    // The refused doorbell moved nothing: the ring goes on from 3.
    assert_eq!(b.post(9, 1, 4), 4);
    b.drain();
    assert_eq!(b.wqes_out, 7);
}

#[test]
fn a_doorbell_is_read_and_handed_on_within_a_few_cycles() {
    let latency = 20;
    let mut b = Bench::new(5, latency, 8);
    b.eager = true;
    b.create(6, 0, 4, 6);
    b.drain();
    assert_eq!(b.post(6, 0, 1), 1);
    b.drain();
    let (doorbell, request) = (b.doorbell_cycles[0], b.request_cycles[0]);
    let (data, out) = (b.last_data_cycles[0], b.out_cycles[0]);
    println!("doorbell {doorbell}, read request {request}, last data {data}, WQE out {out}");
    assert_eq!(request - doorbell, 6, "doorbell to read request");
    assert_eq!(out - data, 4, "read data to WQE");
}

#[test]
fn eight_rings_fetch_a_wqe_every_few_cycles() {
    // 300 ns of host read round trip, the default of the host model.
    let latency = 75;
    let mut b = Bench::new(4, latency, 8);
    for qpn in 0..8 {
        b.create(qpn, 0, 8, 6);
    }
    b.drain();
    let start = b.sim.cycles();
    for qpn in 0..8 {
        assert_eq!(b.post(qpn, 0, 128), 128);
    }
    b.drain();
    let cycles = b.last_beat_cycle - start;
    let rate = 1024.0 / cycles as f64;
    // 8 batches of 4 in flight over the read's round trip.
    let bound = (BATCHES * 4) as f64 / (latency + 10) as f64;
    println!("1024 WQEs in {cycles} cycles: {rate:.3} a cycle (bound {bound:.3})");
    assert!(rate >= 0.85 * bound, "{rate:.3} WQEs a cycle");
}

#[test]
fn verilator_lint_is_clean() {
    assert_lint_clean("wqe_fetch", &verilog_of::<WqeFetch>());
}

#[test]
fn synthesizes_with_the_ring_table_in_block_ram() {
    let report = xilinx_synth("wqe_fetch", &verilog_of::<WqeFetch>()).unwrap();
    assert!(report.block_rams() >= 2, "2048 ring records in block RAM");
    assert!(report.luts() < 3000, "{} LUTs", report.luts());
}
