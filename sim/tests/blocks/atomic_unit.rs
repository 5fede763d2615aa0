//! Atomic unit lockstep: the Verilated `AtomicUnit` against host memory
//! (`HostDma`: read latency, bandwidth limits, completion reordering on)
//! and `rocenic_model::responder::atomic_result`, the arithmetic the
//! model's responder executes atomics with. Random CMP_SWAP (compare equal
//! to the current value or not) and FETCH_ADD (small, large and wrapping
//! addends) on a handful of 8-byte words, most in one 64-byte line and
//! many back to back on the same word, every handshake stalled at random:
//! every original value, every DMA read request and write beat, and the
//! final memory must equal the model's arithmetic applied in input order;
//! read data of other tags offered in between must be left alone.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::responder::atomic_unit::DMA_TAG;
use rocenic_model::memory::HostMemory;
use rocenic_model::responder::atomic_result;
use rocenic_rtl::host_dma::{HostDma, HostDmaConfig, BEAT_BYTES};
use rocenic_rtl::stream::{bytes_to_words, words_to_bytes, BEAT_WORDS};
use rocenic_wire::op;
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{AtomicUnit as Dut, Sim};

#[derive(Clone, Copy, Debug)]
struct Atomic {
    tag: u16,
    addr: u64,
    opcode: u8,
    compare: u64,
    swap_add: u64,
}

struct Run {
    atomics: usize,
    cycles: u64,
    same_word_back_to_back: usize,
    swapped: usize,
}

fn read_word(mem: &HostMemory, pa: u64) -> u64 {
    let mut b = [0u8; 8];
    mem.read_phys(pa, &mut b);
    u64::from_le_bytes(b)
}

fn run(seed: u64, count: usize, config: HostDmaConfig, p_ready: f64) -> Run {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut mem = HostMemory::new(seed);
    let va = mem.alloc(8192, 4096);
    let init: Vec<u8> = (0..8192).map(|_| rng.gen()).collect();
    mem.write_va(va, &init).unwrap();
    let (_, pages) = mem.pages(va, 8192).unwrap();
    // Six words in one line of the first page, two at the ends of the
    // second page.
    let line = pages[0] + 64 * rng.gen_range(0..64);
    let mut words: Vec<u64> = (0..6).map(|i| line + 8 * ((i * 3) % 8)).collect();
    words.extend([pages[1], pages[1] + 4088]);
    words.sort();
    words.dedup();
    let mut model: BTreeMap<u64, u64> = words.iter().map(|&a| (a, read_word(&mem, a))).collect();

    // The atomics and, applied in order, what each must return.
    let mut atomics = Vec::new();
    let mut expected = VecDeque::new();
    let mut same_word_back_to_back = 0;
    let mut swapped = 0;
    let mut last_addr = None;
    for i in 0..count {
        let addr = if rng.gen_bool(0.4) {
            last_addr.unwrap_or(words[0])
        } else {
            words[rng.gen_range(0..words.len())]
        };
        if last_addr == Some(addr) {
            same_word_back_to_back += 1;
        }
        last_addr = Some(addr);
        let current = model[&addr];
        let (opcode, compare, swap_add) = if rng.gen_bool(0.5) {
            let compare = match rng.gen_range(0..5) {
                0..=2 => current,
                // Equal but for one bit, anywhere in the 64.
                3 => current ^ 1 << rng.gen_range(0..64),
                _ => rng.gen(),
            };
            (op::COMPARE_SWAP, compare, rng.gen())
        } else {
            let add = match rng.gen_range(0..3) {
                0 => rng.gen_range(1..16),
                1 => u64::MAX - rng.gen_range(0..4),
                _ => rng.gen(),
            };
            (op::FETCH_ADD, rng.gen(), add)
        };
        let new = atomic_result(opcode, current, compare, swap_add);
        if opcode == op::COMPARE_SWAP && new != current {
            swapped += 1;
        }
        model.insert(addr, new);
        let a = Atomic {
            tag: i as u16,
            addr,
            opcode,
            compare,
            swap_add,
        };
        atomics.push(a);
        expected.push_back((a, current, new));
    }

    let mut host = HostDma::new(config, mem);
    let mut sim = Sim::<Dut>::new().expect("atomic_unit is exported");
    sim.set_bit(Dut::RESET, true);
    sim.tick();
    sim.set_bit(Dut::RESET, false);
    let mut next = 0;
    // The atomic whose read was requested and whose write is due.
    let mut in_flight: Option<Atomic> = None;
    let mut written = 0;
    let start = sim.cycle();
    let what = format!("seed {seed:#x}, {config:?}");
    while !expected.is_empty() {
        let cycle = sim.cycle() - start;
        assert!(
            cycle < 1000 * (count as u64 + 10),
            "{what}: stuck at cycle {cycle}"
        );
        let offer = next < atomics.len() && rng.gen_bool(0.7);
        sim.set_bit(Dut::IN_VALID, offer);
        if offer {
            let a = &atomics[next];
            sim.set_u64(Dut::IN_TAG, a.tag.into());
            sim.set_u64(Dut::IN_ADDR, a.addr);
            sim.set_u64(Dut::IN_OPCODE, a.opcode.into());
            sim.set_u64(Dut::IN_COMPARE, a.compare);
            sim.set_u64(Dut::IN_SWAP_ADD, a.swap_add);
        } else {
            // Garbage while not valid.
            sim.set_u64(Dut::IN_ADDR, rng.gen());
            sim.set_u64(Dut::IN_SWAP_ADD, rng.gen());
        }
        let req_ready = host.read_request_ready() && rng.gen_bool(p_ready);
        sim.set_bit(Dut::DMA_REQ_READY, req_ready);
        let offered = host.offered().cloned();
        sim.set_bit(Dut::DMA_RD_VALID, offered.is_some());
        if let Some(b) = &offered {
            sim.set_u64(Dut::DMA_RD_TAG, b.tag.into());
            sim.set(Dut::DMA_RD_DATA, &bytes_to_words(&b.data));
            sim.set_bit(Dut::DMA_RD_LAST, b.last);
        }
        // Read data of another block's tag, which must be left alone.
        let foreign = offered.is_none() && rng.gen_bool(0.3);
        if foreign {
            sim.set_bit(Dut::DMA_RD_VALID, true);
            sim.set_u64(Dut::DMA_RD_TAG, DMA_TAG + 1 + rng.gen_range(0..200));
            sim.set(Dut::DMA_RD_DATA, &rng.gen::<[u64; BEAT_WORDS]>());
            sim.set_bit(Dut::DMA_RD_LAST, true);
        }
        let wr_ready = host.write_ready() && rng.gen_bool(p_ready);
        sim.set_bit(Dut::DMA_WR_READY, wr_ready);
        let out_ready = rng.gen_bool(p_ready);
        sim.set_bit(Dut::OUT_READY, out_ready);
        sim.eval();

        if offer && sim.get_bit(Dut::IN_READY) {
            next += 1;
        }
        if req_ready && sim.get_bit(Dut::DMA_REQ_VALID) {
            let (a, _, _) = expected.front().expect("a read for an atomic");
            assert!(in_flight.is_none(), "{what}: a second read in flight");
            assert_eq!(sim.get_u64(Dut::DMA_REQ_TAG), DMA_TAG, "{what}");
            assert_eq!(
                sim.get_u64(Dut::DMA_REQ_ADDR),
                a.addr,
                "{what}: read address"
            );
            assert_eq!(sim.get_u64(Dut::DMA_REQ_LEN), 8, "{what}: read length");
            host.read_request(DMA_TAG as u16, a.addr, 8)
                .unwrap_or_else(|e| panic!("{what}: DMA read refused: {e}"));
            in_flight = Some(*a);
        }
        let taken = offered.is_some() && sim.get_bit(Dut::DMA_RD_READY);
        assert!(
            !(foreign && sim.get_bit(Dut::DMA_RD_READY)),
            "{what}: took a beat of another tag"
        );
        if wr_ready && sim.get_bit(Dut::DMA_WR_VALID) {
            let (a, _, new) = *expected.front().expect("a write for an atomic");
            assert_eq!(
                in_flight.map(|f| f.tag),
                Some(a.tag),
                "{what}: write before its read"
            );
            assert_eq!(
                host.reads_in_flight(),
                0,
                "{what}: write before the read data"
            );
            let mut w = [0u64; BEAT_WORDS];
            sim.get_into(Dut::DMA_WR_DATA, &mut w);
            let bytes = words_to_bytes(&w);
            let keep = sim.get_u64(Dut::DMA_WR_KEEP);
            let beat = sim.get_u64(Dut::DMA_WR_ADDR);
            let lane = (a.addr % BEAT_BYTES as u64) as usize;
            assert_eq!(beat, a.addr - lane as u64, "{what}: beat address");
            assert_eq!(keep, 0xFF << lane, "{what}: keep");
            assert!(sim.get_bit(Dut::DMA_WR_FIRST) && sim.get_bit(Dut::DMA_WR_LAST));
            assert_eq!(sim.get_u64(Dut::DMA_WR_REQ_ADDR), a.addr, "{what}");
            assert_eq!(sim.get_u64(Dut::DMA_WR_REQ_LEN), 8, "{what}");
            assert_eq!(
                u64::from_le_bytes(bytes[lane..lane + 8].try_into().unwrap()),
                new,
                "{what}: atomic {} writes",
                a.tag
            );
            host.write(a.addr, &bytes[lane..lane + 8]).unwrap();
            written += 1;
        }
        if out_ready && sim.get_bit(Dut::OUT_VALID) {
            let (a, orig, _) = expected.pop_front().expect("an expected result");
            assert_eq!(
                written,
                a.tag as usize + 1,
                "{what}: result before the write"
            );
            assert_eq!(sim.get_u64(Dut::OUT_TAG), u64::from(a.tag), "{what}");
            assert_eq!(
                sim.get_u64(Dut::OUT_ORIG),
                orig,
                "{what}: atomic {} original",
                a.tag
            );
            in_flight = None;
        }
        sim.tick();
        host.clock(taken);
    }
    for _ in 0..config.read_latency + 10 {
        sim.set_bit(Dut::IN_VALID, false);
        sim.set_bit(Dut::OUT_READY, true);
        sim.set_bit(Dut::DMA_WR_READY, true);
        sim.set_bit(Dut::DMA_REQ_READY, true);
        sim.eval();
        assert!(
            !sim.get_bit(Dut::OUT_VALID) && !sim.get_bit(Dut::DMA_REQ_VALID),
            "{what}: extra activity"
        );
        sim.tick();
    }
    for (&addr, &value) in &model {
        assert_eq!(
            read_word(host.memory(), addr),
            value,
            "{what}: memory at {addr:#x}"
        );
    }
    assert_eq!(host.writes().len(), count, "{what}: one write per atomic");
    assert_eq!(host.memory().stray_writes(), 0);
    Run {
        atomics: count,
        cycles: sim.cycle() - start,
        same_word_back_to_back,
        swapped,
    }
}

#[test]
fn random_atomics_match_the_model_in_order() {
    let mut total = 0;
    let mut back_to_back = 0;
    let mut swapped = 0;
    for (seed, latency, p_ready) in [(1u64, 1u64, 1.0), (2, 7, 0.6), (3, 40, 0.8), (4, 200, 1.0)] {
        let config = HostDmaConfig {
            read_latency: latency,
            read_bytes_per_cycle: if seed == 2 { 16 } else { 104 },
            write_bytes_per_cycle: if seed == 3 { 20 } else { 104 },
            reorder: true,
            seed,
            ..HostDmaConfig::default()
        };
        let count = if latency >= 200 { 300 } else { 2000 };
        let r = run(seed, count, config, p_ready);
        eprintln!(
            "latency {latency}, ready {p_ready}: {} atomics in {} cycles ({:.1} per atomic)",
            r.atomics,
            r.cycles,
            r.cycles as f64 / r.atomics as f64
        );
        if p_ready == 1.0 {
            // The documented rate: L + 5 cycles an atomic (the input is
            // offered 70 % of the cycles, so a little more).
            assert!(
                r.cycles as f64 / r.atomics as f64 <= (latency + 5) as f64 + 1.0,
                "{} cycles for {}",
                r.cycles,
                r.atomics
            );
        }
        total += r.atomics;
        back_to_back += r.same_word_back_to_back;
        swapped += r.swapped;
    }
    eprintln!("{total} atomics, {back_to_back} back to back on one word, {swapped} swaps");
    assert!(back_to_back > 1000 && swapped > 500);
}
