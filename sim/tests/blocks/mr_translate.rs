//! MR translation lockstep: the Verilated `MrTranslate` (1024 MRs, 16384
//! MTT entries) against `rocenic_model::mr::MrTable`. Random MRs over pages
//! of 4 KiB to 2 MiB scattered by `HostMemory` are registered in the model
//! and written into the RTL through its configuration port, entry for entry
//! (`MrTable::entry`, `MrTable::mtt`); then random accesses inside, at the
//! edges, overflowing, through wrong indexes / variants / PDs / rights,
//! invalidated, deregistered and re-registered keys, zero length, local and
//! remote, under random request gaps and response backpressure. The RTL's
//! status and segments must equal `translate_remote` / `translate_local`
//! for every request. Also: the single-page rate and latency, one segment
//! per cycle, and segments that land on the VA's bytes.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::codes::mr_status;
use rocenic_model::memory::HostMemory;
use rocenic_model::mr::{DmaSegment, MrError, MrTable, DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES};
use rocenic_model::verbs::{Access, PdId};
use rocenic_rtl::mr_config::load_mr_table;
use std::collections::VecDeque;
use verilator_sys::{MrTranslate as Dut, Sim};

const PAGE_SIZES: [u64; 5] = [4 << 10, 8 << 10, 64 << 10, 1 << 20, 2 << 20];

#[derive(Clone, Copy, Debug)]
struct Req {
    key: u32,
    va: u64,
    len: u32,
    pd: u32,
    need: Access,
    remote: bool,
}

/// What the block answered, in the model's terms.
type Answer = Result<Vec<DmaSegment>, MrError>;

fn model_answer(t: &MrTable, r: &Req) -> Answer {
    let (pd, len) = (PdId(r.pd), u64::from(r.len));
    if r.remote {
        t.translate_remote(r.key, pd, r.va, len, r.need)
    } else {
        t.translate_local(r.key, pd, r.va, len, r.need)
    }
}

/// The Verilated block, out of reset with its table swept free.
fn fresh() -> Sim<Dut> {
    let mut sim = Sim::<Dut>::new().expect("bridge");
    sim.set_bit(Dut::RESET, true);
    sim.set_bit(Dut::RESP_READY, true);
    sim.tick();
    sim.set_bit(Dut::RESET, false);
    let mut sweep = 0;
    loop {
        sim.eval();
        if sim.get_bit(Dut::CFG_READY) {
            break;
        }
        assert!(
            !sim.get_bit(Dut::REQ_READY),
            "requests refused while sweeping"
        );
        sim.tick();
        sweep += 1;
    }
    assert_eq!(sweep, DEFAULT_MAX_MRS, "one cycle per MR table entry");
    sim
}

/// Writes the model's MR table entries `0..count` and its whole MTT into
/// the block, one entry of each per cycle.
fn load(sim: &mut Sim<Dut>, t: &MrTable, count: usize) {
    assert_eq!(t.mtt().len(), DEFAULT_MAX_MTT_ENTRIES);
    load_mr_table(sim, t, count, DEFAULT_MAX_MTT_ENTRIES).expect("mr_translate has the port");
}

/// One response as it came out, with cycle stamps.
struct Run {
    answers: Vec<Answer>,
    accepted_at: Vec<u64>,
    first_at: Vec<u64>,
    beats: u64,
    cycles: u64,
}

/// Sends `reqs` (offered with probability `p_valid` per idle cycle, the
/// response side ready with probability `p_ready`), checking the stream
/// rules: a stalled beat holds still, tags come back in order, `first` /
/// `last` frame every response, beats without a segment end theirs.
fn run(sim: &mut Sim<Dut>, reqs: &[Req], p_valid: f64, p_ready: f64, seed: u64) -> Run {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut queue: VecDeque<(usize, Req)> = reqs.iter().copied().enumerate().collect();
    let mut offered = false;
    let mut out = Run {
        answers: vec![],
        accepted_at: vec![],
        first_at: vec![],
        beats: 0,
        cycles: 0,
    };
    let mut open: Option<(u64, u64, Vec<DmaSegment>)> = None;
    let mut held: Option<[u64; 7]> = None;
    let start = sim.cycle();
    while out.answers.len() < reqs.len() {
        let cycle = sim.cycle() - start;
        assert!(cycle < 100_000 + 50 * reqs.len() as u64, "stuck");
        offered = !queue.is_empty() && (offered || rng.gen_bool(p_valid));
        let ready = rng.gen_bool(p_ready);
        sim.set_bit(Dut::REQ_VALID, offered);
        if let Some(&(tag, r)) = queue.front() {
            sim.set_u64(Dut::REQ_KEY, r.key.into());
            sim.set_u64(Dut::REQ_VA, r.va);
            sim.set_u64(Dut::REQ_LEN, r.len.into());
            sim.set_u64(Dut::REQ_PD, r.pd.into());
            sim.set_u64(Dut::REQ_ACCESS, r.need.0.into());
            sim.set_bit(Dut::REQ_REMOTE, r.remote);
            sim.set_u64(Dut::REQ_TAG, tag as u64 & 0xFFFF);
        }
        sim.set_bit(Dut::RESP_READY, ready);
        sim.eval();
        if offered && sim.get_bit(Dut::REQ_READY) {
            queue.pop_front();
            offered = false;
            out.accepted_at.push(cycle);
        }
        if sim.get_bit(Dut::RESP_VALID) {
            let beat = [
                sim.get_u64(Dut::RESP_TAG),
                sim.get_u64(Dut::RESP_STATUS),
                u64::from(sim.get_bit(Dut::RESP_FIRST)),
                u64::from(sim.get_bit(Dut::RESP_LAST)),
                u64::from(sim.get_bit(Dut::RESP_HAS_SEG)),
                sim.get_u64(Dut::RESP_PHYS),
                sim.get_u64(Dut::RESP_LEN),
            ];
            if let Some(h) = held {
                assert_eq!(h, beat, "cycle {cycle}: a stalled beat changed");
            }
            held = (!ready).then_some(beat);
            if ready {
                out.beats += 1;
                let [tag, status, first, last, has_seg, phys, len] = beat;
                assert_eq!(first == 1, open.is_none(), "cycle {cycle}: first flag");
                if first == 1 {
                    out.first_at.push(cycle);
                    assert_eq!(tag, out.answers.len() as u64 & 0xFFFF, "responses in order");
                }
                let (t, s, segs) = open.get_or_insert((tag, status, vec![]));
                assert_eq!(
                    (*t, *s),
                    (tag, status),
                    "cycle {cycle}: beats of one response"
                );
                if has_seg == 1 {
                    segs.push(DmaSegment {
                        phys,
                        len: len as u32,
                    });
                } else {
                    assert_eq!((phys, len, last), (0, 0, 1), "cycle {cycle}: no segment");
                }
                if last == 1 {
                    let (_, status, segs) = open.take().unwrap();
                    out.answers.push(match mr_status::error(status) {
                        None => {
                            assert_eq!(status, mr_status::OK);
                            Ok(segs)
                        }
                        Some(e) => {
                            assert!(segs.is_empty());
                            Err(e)
                        }
                    });
                }
            }
        } else {
            assert!(held.is_none(), "cycle {cycle}: valid dropped while stalled");
        }
        sim.tick();
    }
    out.cycles = sim.cycle() - start;
    sim.set_bit(Dut::REQ_VALID, false);
    sim.set_bit(Dut::RESP_READY, true);
    for _ in 0..10 {
        sim.eval();
        assert!(!sim.get_bit(Dut::RESP_VALID), "a response with no request");
        sim.tick();
    }
    out
}

/// A region the model registered, with its keys across re-registrations.
#[derive(Clone, Debug)]
struct Region {
    key: u32,
    /// Keys of earlier registrations of this index (stale or invalid now).
    old_keys: Vec<u32>,
    base: u64,
    len: u64,
    page: u64,
    pd: u32,
    access: Access,
    live: bool,
}

fn random_access(rng: &mut ChaCha8Rng) -> Access {
    let a = Access(rng.gen_range(0..16));
    if a.0 & (Access::REMOTE_WRITE.0 | Access::REMOTE_ATOMIC.0) != 0 {
        a | Access::LOCAL_WRITE
    } else {
        a
    }
}

/// Registers `n` random regions in `mem` / `t`.
fn register_regions(
    mem: &mut HostMemory,
    t: &mut MrTable,
    n: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<Region> {
    (0..n)
        .map(|_| {
            let page = PAGE_SIZES[rng.gen_range(0..PAGE_SIZES.len())];
            let pages = rng.gen_range(1..=6u64);
            let va = mem.alloc(pages * page, page);
            let start = match rng.gen_range(0..3) {
                0 => 0,
                1 => page - rng.gen_range(1..=64.min(page)),
                _ => rng.gen_range(0..page),
            };
            let len = match rng.gen_range(0..3) {
                0 => rng.gen_range(1..=64),
                _ => rng.gen_range(1..=pages * page - start),
            }
            .min(pages * page - start);
            let access = random_access(rng);
            let pd = rng.gen_range(1..4);
            let keys = t
                .register(PdId(pd), va + start, len, access, mem)
                .expect("register");
            Region {
                key: keys.lkey,
                old_keys: vec![],
                base: va + start,
                len,
                page,
                pd,
                access,
                live: true,
            }
        })
        .collect()
}

/// Invalidates, re-registers and deregisters some regions, registers a few
/// into freed indexes (new variants of old keys).
fn churn(mem: &mut HostMemory, t: &mut MrTable, regions: &mut Vec<Region>, rng: &mut ChaCha8Rng) {
    for r in regions.iter_mut().filter(|r| r.live) {
        match rng.gen_range(0..8) {
            0 => t.invalidate(r.key, PdId(r.pd)).unwrap(),
            1 => {
                let k = t.reregister(r.key).unwrap().lkey;
                r.old_keys.push(std::mem::replace(&mut r.key, k));
            }
            2 => {
                t.deregister(r.key).unwrap();
                r.live = false;
            }
            _ => {}
        }
    }
    let more = register_regions(mem, t, 6, rng);
    regions.extend(more);
}

fn random_request(regions: &[Region], rng: &mut ChaCha8Rng) -> Req {
    let r = &regions[rng.gen_range(0..regions.len())];
    let mut key = r.key;
    match rng.gen_range(0..20) {
        0 if !r.old_keys.is_empty() => key = r.old_keys[rng.gen_range(0..r.old_keys.len())],
        1 => key ^= rng.gen_range(1..=255),
        2 => key = (rng.gen_range(DEFAULT_MAX_MRS as u32..1 << 24) << 8) | (key & 0xFF),
        3 => key = rng.gen(),
        _ => {}
    }
    let end = r.base + r.len;
    let (va, len): (u64, u32) = match rng.gen_range(0..9) {
        0..=2 => {
            let off = rng.gen_range(0..r.len);
            (r.base + off, rng.gen_range(0..=r.len - off) as u32)
        }
        // The whole region, or one byte more.
        3 => (r.base, (r.len + rng.gen_range(0..2)) as u32),
        // Ending at the last byte or one past it.
        4 => {
            let n = rng.gen_range(1..=r.len.min(3 * r.page));
            (end - n, (n + rng.gen_range(0..2)) as u32)
        }
        // Starting one byte early.
        5 => (r.base - 1, rng.gen_range(1..=2 * r.page) as u32),
        // Wrapping the 64-bit address space.
        6 => (
            u64::MAX - rng.gen_range(0..8192),
            rng.gen_range(1..=u32::MAX),
        ),
        7 => (rng.gen(), 0),
        _ => (
            r.base + rng.gen_range(0..r.len),
            u32::MAX - rng.gen_range(0..4),
        ),
    };
    let remote = rng.gen_bool(0.5);
    let need = match rng.gen_range(0..10) {
        // What the region allows, narrowed to remote rights for a remote
        // access so most requests reach the bounds checks.
        0..=6 if remote => {
            let remote_rights = r.access.0 & 0b1110;
            Access(if remote_rights == 0 {
                0b0100
            } else {
                remote_rights & (1 << rng.gen_range(1..4)) | (remote_rights & rng.gen::<u8>())
            })
        }
        0..=6 => Access(r.access.0 & 1 & rng.gen::<u8>()),
        _ => Access(rng.gen_range(0..16)),
    };
    let pd = if rng.gen_bool(0.08) { r.pd ^ 1 } else { r.pd };
    Req {
        key,
        va,
        len,
        pd,
        need,
        remote,
    }
}

#[test]
fn random_regions_and_accesses_match_the_model_under_backpressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x4d5254);
    let mut mem = HostMemory::new(77);
    let mut t = MrTable::new(DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES);
    let mut sim = fresh();
    let mut regions = register_regions(&mut mem, &mut t, 40, &mut rng);
    let mut seen = [0usize; 7];
    let mut multi = 0;
    let drives = [(1.0, 1.0), (0.6, 0.5), (1.0, 0.25), (0.3, 0.9)];
    for (epoch, &(p_valid, p_ready)) in drives.iter().enumerate() {
        if epoch > 0 {
            churn(&mut mem, &mut t, &mut regions, &mut rng);
        }
        let used = (0..DEFAULT_MAX_MRS)
            .take_while(|&i| t.entry((i as u32) << 8).is_some())
            .count();
        load(&mut sim, &t, used);
        let reqs: Vec<Req> = (0..1500)
            .map(|_| random_request(&regions, &mut rng))
            .collect();
        let got = run(&mut sim, &reqs, p_valid, p_ready, epoch as u64);
        for (i, (g, r)) in got.answers.iter().zip(&reqs).enumerate() {
            let want = model_answer(&t, r);
            assert_eq!(g, &want, "epoch {epoch} request {i}: {r:x?}");
            match &want {
                Ok(segs) => {
                    seen[0] += 1;
                    multi += usize::from(segs.len() > 1);
                }
                Err(e) => seen[*e as usize + 1] += 1,
            }
        }
    }
    // Every outcome happened, and many multi-page translations.
    assert!(seen.iter().all(|&n| n >= 20), "{seen:?}");
    assert!(multi >= 200, "{multi}");
}

#[test]
fn segments_land_on_the_bytes_the_cpu_sees() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut mem = HostMemory::new(5);
    let mut t = MrTable::new(DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES);
    let mut sim = fresh();
    let mut reqs = vec![];
    for &page in &PAGE_SIZES {
        let va = mem.alloc(4 * page, page);
        let base = va + page / 2 + 3;
        let len = 3 * page - 7;
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
        mem.write_va(base, &data).unwrap();
        let k = t
            .register(PdId(1), base, len, Access::ALL, &mem)
            .unwrap()
            .rkey;
        for _ in 0..20 {
            let off = rng.gen_range(0..len);
            reqs.push(Req {
                key: k,
                va: base + off,
                len: rng.gen_range(1..=len - off) as u32,
                pd: 1,
                need: Access::REMOTE_READ,
                remote: true,
            });
        }
    }
    load(&mut sim, &t, PAGE_SIZES.len());
    let got = run(&mut sim, &reqs, 0.8, 0.7, 1);
    for (g, r) in got.answers.iter().zip(&reqs) {
        let segs = g.as_ref().expect("inside the region");
        let mut bytes = vec![];
        for s in segs {
            let mut b = vec![0u8; s.len as usize];
            mem.read_phys(s.phys, &mut b);
            bytes.extend(b);
        }
        let mut want = vec![0u8; r.len as usize];
        mem.read_va(r.va, &mut want).unwrap();
        assert_eq!(bytes, want);
    }
}

#[test]
fn one_single_page_request_per_cycle_one_segment_per_cycle_latency_five() {
    let mut mem = HostMemory::new(3);
    let mut t = MrTable::new(DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES);
    let mut sim = fresh();
    let va = mem.alloc(64 * 4096, 4096);
    let k = t
        .register(PdId(2), va, 64 * 4096, Access::ALL, &mem)
        .unwrap()
        .lkey;
    load(&mut sim, &t, 1);
    let req = |va: u64, len: u32| Req {
        key: k,
        va,
        len,
        pd: 2,
        need: Access::LOCAL_WRITE,
        remote: false,
    };
    // Single-page requests, and refused ones, back to back.
    let mut reqs: Vec<Req> = (0..200)
        .map(|i| req(va + (i % 64) * 4096 + 8, 256))
        .collect();
    reqs.extend((1..=50).map(|i| req(va + i, 64 * 4096)));
    let got = run(&mut sim, &reqs, 1.0, 1.0, 2);
    for (g, r) in got.answers.iter().zip(&reqs) {
        assert_eq!(g, &model_answer(&t, r));
    }
    assert!(got.answers[200..]
        .iter()
        .all(|a| a == &Err(MrError::OutOfBounds)));
    assert_eq!(got.accepted_at, (0..reqs.len() as u64).collect::<Vec<_>>());
    assert!(got
        .accepted_at
        .iter()
        .zip(&got.first_at)
        .all(|(a, f)| f - a == 5));
    assert_eq!(got.cycles, reqs.len() as u64 + 5);
    // 17-page requests: one beat per cycle, nothing in between.
    let long: Vec<Req> = (0..20).map(|i| req(va + i * 4096 + 5, 16 * 4096)).collect();
    let got = run(&mut sim, &long, 1.0, 1.0, 3);
    for (g, r) in got.answers.iter().zip(&long) {
        assert_eq!(g.as_ref().unwrap().len(), 17);
        assert_eq!(g, &model_answer(&t, r));
    }
    assert_eq!(got.beats, 20 * 17);
    assert_eq!(got.cycles, 20 * 17 + 5);
}
