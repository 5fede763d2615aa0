//! MrTranslate in rust-hdl's simulator at small sizes (8 MRs, 64 MTT
//! entries): the reset sweep frees every entry; random MR tables and
//! requests (inside, at the edges, overflowing, wrong index / variant / PD
//! / access, invalidated, free, zero length) under random request gaps and
//! response backpressure give exactly the statuses and segments of a
//! reference written from `rocenic_model::mr::MrTable`'s rules (the
//! Verilator test in sim/tests/blocks/mr_translate.rs runs the model itself);
//! one single-page request per cycle with the documented latency; the
//! generated Verilog replayed under Verilator agrees cycle by cycle.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::codes::mr_status;
use rocenic_hdl::dma::mr_translate::*;
use rocenic_hdl_testbench::CycleSim;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

const MR_BITS: usize = 3;
const MTT_BITS: usize = 6;
const MRS: usize = 1 << MR_BITS;
const MTTS: usize = 1 << MTT_BITS;
type Dut = MrTranslate<MR_BITS, MTT_BITS>;

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    state: u64,
    variant: u8,
    pd: u32,
    base_va: u64,
    len: u64,
    access: u8,
    page_shift: u8,
    mtt_base: u64,
}

#[derive(Clone, Copy, Debug)]
struct Req {
    key: u32,
    va: u64,
    len: u32,
    pd: u32,
    need: u8,
    remote: bool,
    tag: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Resp {
    tag: u16,
    status: u64,
    segs: Vec<(u64, u32)>,
}

/// The model's rules (sim/model/src/mr.rs `check` and `translate`), MTT
/// indexes wrapping at the MTT size as the RTL's do.
fn reference(table: &[Entry], mtt: &[u64], r: &Req) -> (u64, Vec<(u64, u32)>) {
    let index = (r.key >> 8) as usize;
    let Some(e) = table.get(index).filter(|e| e.state == 1 || e.state == 2) else {
        return (mr_status::INVALID_KEY, vec![]);
    };
    if e.variant != r.key as u8 {
        return (mr_status::STALE_KEY, vec![]);
    }
    if e.state == 2 {
        return (mr_status::INVALIDATED, vec![]);
    }
    if e.pd != r.pd {
        return (mr_status::PD_MISMATCH, vec![]);
    }
    if e.access & r.need != r.need || (r.remote && r.need & 0b1110 == 0) {
        return (mr_status::ACCESS_DENIED, vec![]);
    }
    if r.len == 0 {
        return (mr_status::OK, vec![]);
    }
    let Some(end) = r.va.checked_add(u64::from(r.len)) else {
        return (mr_status::OUT_OF_BOUNDS, vec![]);
    };
    if r.va < e.base_va || u128::from(end) > u128::from(e.base_va) + u128::from(e.len) {
        return (mr_status::OUT_OF_BOUNDS, vec![]);
    }
    let ps = 1u64 << e.page_shift;
    let first_page_va = e.base_va & !(ps - 1);
    let (mut off, end_off) = (r.va - first_page_va, end - first_page_va);
    let mut segs = vec![];
    while off < end_off {
        let in_page = off & (ps - 1);
        let n = (ps - in_page).min(end_off - off);
        let page = mtt[(e.mtt_base + (off >> e.page_shift)) as usize % mtt.len()];
        segs.push((page + in_page, n as u32));
        off += n;
    }
    (mr_status::OK, segs)
}

struct Bench {
    sim: CycleSim<Dut>,
    table: Vec<Entry>,
    mtt: Vec<u64>,
}

impl Bench {
    fn new() -> Bench {
        let mut sim = CycleSim::new(Dut::default(), |b| &mut b.clock);
        sim.record();
        let u = &mut sim.uut;
        u.reset.next = true;
        u.req_valid.next = false;
        u.resp_ready.next = true;
        u.cfg.mr_write.next = false;
        u.cfg.mtt_write.next = false;
        sim.tick();
        sim.uut.reset.next = false;
        Bench {
            sim,
            table: vec![Entry::default(); MRS],
            mtt: vec![0; MTTS],
        }
    }

    /// Ticks until the reset sweep is over; returns the cycles it took.
    fn wait_cleared(&mut self) -> u64 {
        let mut n = 0;
        loop {
            self.sim.settle();
            if self.sim.uut.cfg.ready.val() {
                assert!(self.sim.uut.req_ready.val());
                return n;
            }
            assert!(!self.sim.uut.req_ready.val());
            self.sim.tick();
            n += 1;
            assert!(n < 10 * MRS as u64, "sweep never ends");
        }
    }

    /// One cycle writing an MR entry and an MTT entry.
    fn configure(&mut self, index: usize, e: Entry, mtt_at: Option<(usize, u64)>) {
        let u = &mut self.sim.uut;
        u.cfg.mr_write.next = true;
        u.cfg.mr_index.next = bits(index as u64);
        u.cfg.mr_state.next = bits(e.state);
        u.cfg.mr_variant.next = bits(e.variant.into());
        u.cfg.mr_pd.next = bits(e.pd.into());
        u.cfg.mr_base_va.next = bits(e.base_va);
        u.cfg.mr_len.next = bits(e.len);
        u.cfg.mr_access.next = bits(e.access.into());
        u.cfg.mr_page_shift.next = bits(e.page_shift.into());
        u.cfg.mr_mtt_base.next = bits(e.mtt_base);
        u.cfg.mtt_write.next = mtt_at.is_some();
        if let Some((i, a)) = mtt_at {
            u.cfg.mtt_index.next = bits(i as u64);
            u.cfg.mtt_addr.next = bits(a);
            self.mtt[i] = a;
        }
        self.table[index] = e;
        self.sim.tick();
        self.sim.uut.cfg.mr_write.next = false;
        self.sim.uut.cfg.mtt_write.next = false;
    }

    fn write_mtt(&mut self, i: usize, a: u64) {
        let u = &mut self.sim.uut;
        u.cfg.mtt_write.next = true;
        u.cfg.mtt_index.next = bits(i as u64);
        u.cfg.mtt_addr.next = bits(a);
        self.mtt[i] = a;
        self.sim.tick();
        self.sim.uut.cfg.mtt_write.next = false;
    }

    /// Runs `reqs` through with request gaps (`p_valid`) and response
    /// backpressure (`p_ready`); checks the stream rules and returns the
    /// responses with the cycles each request was accepted and each
    /// response's first beat moved.
    fn run(
        &mut self,
        reqs: &[Req],
        p_valid: f64,
        p_ready: f64,
        rng: &mut ChaCha8Rng,
    ) -> (Vec<Resp>, Vec<u64>, Vec<u64>) {
        let mut queue: VecDeque<Req> = reqs.iter().copied().collect();
        let mut offered = false;
        let mut accepted_at = vec![];
        let mut first_at = vec![];
        let mut resps: Vec<Resp> = vec![];
        let mut open: Option<Resp> = None;
        let mut stalled: Option<(bool, u64, u64, bool, bool, u64, u64)> = None;
        let mut cycle = 0u64;
        while resps.len() < reqs.len() {
            assert!(cycle < 200 * reqs.len() as u64 + 1000, "stuck");
            offered = !queue.is_empty() && (offered || rng.gen_bool(p_valid));
            let ready = rng.gen_bool(p_ready);
            let u = &mut self.sim.uut;
            u.req_valid.next = offered;
            if let Some(r) = queue.front() {
                u.req_key.next = bits(r.key.into());
                u.req_va.next = bits(r.va);
                u.req_len.next = bits(r.len.into());
                u.req_pd.next = bits(r.pd.into());
                u.req_access.next = bits(r.need.into());
                u.req_remote.next = r.remote;
                u.req_tag.next = bits(r.tag.into());
            }
            u.resp_ready.next = ready;
            self.sim.settle();
            let u = &self.sim.uut;
            if offered && u.req_ready.val() {
                queue.pop_front();
                offered = false;
                accepted_at.push(cycle);
            }
            if u.resp_valid.val() {
                let beat = (
                    u.resp_has_seg.val(),
                    u.resp_phys.val().to_u64(),
                    u.resp_len.val().to_u64(),
                    u.resp_first.val(),
                    u.resp_last.val(),
                    u.resp_status.val().to_u64(),
                    u.resp_tag.val().to_u64(),
                );
                if let Some(held) = stalled {
                    assert_eq!(held, beat, "a stalled beat changed at cycle {cycle}");
                }
                stalled = (!ready).then_some(beat);
                if ready {
                    let (has_seg, phys, len, first, last, status, tag) = beat;
                    assert_eq!(first, open.is_none(), "first flag at cycle {cycle}");
                    if first {
                        first_at.push(cycle);
                    }
                    let resp = open.get_or_insert(Resp {
                        tag: tag as u16,
                        status,
                        segs: vec![],
                    });
                    assert_eq!((resp.tag, resp.status), (tag as u16, status));
                    if has_seg {
                        resp.segs.push((phys, len as u32));
                    } else {
                        assert_eq!((phys, len), (0, 0));
                        assert!(last, "a beat without segment ends its response");
                    }
                    if last {
                        resps.push(open.take().unwrap());
                    }
                }
            } else {
                assert!(stalled.is_none(), "valid dropped while stalled");
            }
            self.sim.tick();
            cycle += 1;
        }
        self.sim.uut.req_valid.next = false;
        for _ in 0..8 {
            self.sim.settle();
            assert!(!self.sim.uut.resp_valid.val(), "a response with no request");
            self.sim.tick();
        }
        (resps, accepted_at, first_at)
    }

    fn expected(&self, reqs: &[Req]) -> Vec<Resp> {
        reqs.iter()
            .map(|r| {
                let (status, segs) = reference(&self.table, &self.mtt, r);
                Resp {
                    tag: r.tag,
                    status,
                    segs,
                }
            })
            .collect()
    }
}

/// A random table: valid, invalidated and free entries over pages of 4 KiB
/// to 2 MiB, MTT runs that may wrap, page addresses above 4 GiB.
fn random_table(b: &mut Bench, rng: &mut ChaCha8Rng) {
    for i in 0..MTTS {
        let page = rng.gen_range(1u64 << 20..1 << 40) << 12;
        b.write_mtt(i, page);
    }
    for index in 0..MRS {
        let page_shift = rng.gen_range(12u8..=21);
        let ps = 1u64 << page_shift;
        let base_va = match rng.gen_range(0..4) {
            0 => rng.gen_range(0..16) * ps,
            1 => u64::MAX - rng.gen_range(1..8 * ps),
            _ => rng.gen::<u64>() >> rng.gen_range(1..20),
        };
        let room = u64::MAX - base_va;
        let len = match rng.gen_range(0..3) {
            0 => rng.gen_range(1..=64),
            1 => rng.gen_range(1..=6 * ps),
            _ => rng.gen_range(1..=20 * ps),
        }
        .min(room)
        .max(1);
        let e = Entry {
            state: [0, 1, 1, 1, 1, 2, 3][rng.gen_range(0..7)],
            variant: rng.gen(),
            pd: rng.gen_range(0..3),
            base_va,
            len,
            access: rng.gen_range(0..16),
            page_shift,
            mtt_base: rng.gen_range(0..MTTS as u64),
        };
        b.configure(index, e, None);
    }
}

fn random_request(table: &[Entry], rng: &mut ChaCha8Rng, tag: u16) -> Req {
    let index = rng.gen_range(0..MRS + 2);
    let e = table.get(index).copied().unwrap_or_default();
    let mut variant = e.variant;
    if rng.gen_bool(0.1) {
        variant = variant.wrapping_add(rng.gen_range(1..=255));
    }
    let ps = 1u64 << e.page_shift.max(12);
    let end = e.base_va.wrapping_add(e.len);
    let (va, len): (u64, u32) = match rng.gen_range(0..8) {
        // Inside.
        0..=2 => {
            let off = rng.gen_range(0..e.len.max(1));
            let max = (e.len - off.min(e.len)).min(u32::MAX as u64);
            (e.base_va.wrapping_add(off), rng.gen_range(0..=max) as u32)
        }
        // Up to the last byte, or one past it.
        3 => {
            let n = rng.gen_range(1..=(3 * ps).min(e.len.max(1)));
            (end.wrapping_sub(n), (n + rng.gen_range(0..2)) as u32)
        }
        // One byte before the start.
        4 => (e.base_va.wrapping_sub(1), rng.gen_range(1..=2 * ps) as u32),
        // Wrapping the address space.
        5 => (
            u64::MAX - rng.gen_range(0..4096),
            rng.gen_range(1..=u32::MAX),
        ),
        6 => (e.base_va, 0),
        _ => (rng.gen(), rng.gen_range(0..=3 * ps) as u32),
    };
    let mut pd = e.pd;
    if rng.gen_bool(0.1) {
        pd ^= 1;
    }
    let remote = rng.gen_bool(0.5);
    let need = if rng.gen_bool(0.8) {
        // Mostly rights the entry has, so the bounds checks get exercised.
        e.access & rng.gen::<u8>()
    } else {
        rng.gen_range(0..16)
    };
    Req {
        key: ((index as u32) << 8) | u32::from(variant),
        va,
        len,
        pd,
        need: if remote && rng.gen_bool(0.8) {
            need | (e.access & 0b1110)
        } else {
            need
        },
        remote,
        tag,
    }
}

#[test]
fn reset_sweep_frees_every_entry() {
    let mut b = Bench::new();
    let sweep = b.wait_cleared();
    assert_eq!(sweep, MRS as u64);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let reqs: Vec<Req> = (0..MRS as u32 + 1)
        .map(|i| Req {
            key: i << 8 | rng.gen::<u8>() as u32,
            va: 0,
            len: 1,
            pd: 0,
            need: 0,
            remote: false,
            tag: i as u16,
        })
        .collect();
    let (got, _, _) = b.run(&reqs, 1.0, 1.0, &mut rng);
    assert!(got.iter().all(|r| r.status == mr_status::INVALID_KEY));
    assert_eq!(
        got.iter().map(|r| r.tag).collect::<Vec<_>>(),
        (0..=8).collect::<Vec<_>>()
    );
}

#[test]
fn random_tables_and_requests_match_the_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x4d52);
    let mut b = Bench::new();
    b.wait_cleared();
    let mut statuses = [0usize; 7];
    let mut multi = 0;
    for round in 0..4 {
        random_table(&mut b, &mut rng);
        let reqs: Vec<Req> = (0..150)
            .map(|i| random_request(&b.table, &mut rng, (round * 1000 + i) as u16))
            .collect();
        let want = b.expected(&reqs);
        let (p_valid, p_ready) = [(1.0, 1.0), (0.7, 0.5), (1.0, 0.3), (0.4, 0.9)][round];
        let (got, _, _) = b.run(&reqs, p_valid, p_ready, &mut rng);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "round {round} request {i}: {:x?}", reqs[i]);
            statuses[w.status as usize] += 1;
            multi += usize::from(w.segs.len() > 1);
        }
    }
    // Every outcome was exercised, and multi-page translations too.
    assert!(statuses.iter().all(|&n| n > 0), "{statuses:?}");
    assert!(multi > 10, "{multi}");
    // The Verilog agrees with the simulation, cycle by cycle.
    let cycles = b.sim.replay_in_verilator("mr_translate").unwrap();
    assert!(cycles > 1000);
}

#[test]
fn one_single_page_request_per_cycle_and_one_segment_per_cycle() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut b = Bench::new();
    b.wait_cleared();
    for i in 0..MTTS {
        b.write_mtt(i, (0x1_0000 + i as u64) << 12);
    }
    let e = Entry {
        state: 1,
        variant: 0x5a,
        pd: 9,
        base_va: 0x7000_0000,
        len: 32 << 12,
        access: 0b1111,
        page_shift: 12,
        mtt_base: 60,
    };
    b.configure(2, e, None);
    let key = 2 << 8 | 0x5a;
    let one_page: Vec<Req> = (0..40)
        .map(|i| Req {
            key,
            va: 0x7000_0000 + i * 4096 + 16,
            len: 64,
            pd: 9,
            need: 0b0100,
            remote: true,
            tag: i as u16,
        })
        .collect();
    let (got, accepted, first) = b.run(&one_page, 1.0, 1.0, &mut rng);
    assert_eq!(got, b.expected(&one_page));
    // Back to back, and a fixed latency.
    assert!(
        accepted.windows(2).all(|w| w[1] == w[0] + 1),
        "{accepted:?}"
    );
    for (a, f) in accepted.iter().zip(&first) {
        assert_eq!(f - a, 5);
    }
    // Requests of 5 pages: one beat per cycle, 5 cycles per request; the
    // MTT run wraps from entry 63 to 0.
    let five: Vec<Req> = (0..8)
        .map(|i| Req {
            key,
            va: 0x7000_0000 + i * 4096 + 100,
            len: 4 * 4096 + 1,
            pd: 9,
            need: 0,
            remote: false,
            tag: i as u16,
        })
        .collect();
    let (got, accepted, first) = b.run(&five, 1.0, 1.0, &mut rng);
    assert_eq!(got, b.expected(&five));
    assert!(got.iter().all(|r| r.segs.len() == 5));
    assert!(first.windows(2).all(|w| w[1] == w[0] + 5), "{first:?}");
    // The first three fill stages A, B and S; then each request waits for
    // the one ahead to finish its beats.
    assert_eq!(accepted[..3], [0, 1, 2]);
    assert!(
        accepted[2..].windows(2).all(|w| w[1] == w[0] + 5),
        "{accepted:?}"
    );
    // Request 4 starts at page 4 of the MR: MTT entry (60 + 4) mod 64 = 0.
    assert_eq!(got[4].segs[0].0, (0x1_0000 << 12) + 100);
}

#[test]
fn reset_empties_the_pipeline_and_the_table() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut b = Bench::new();
    b.wait_cleared();
    random_table(&mut b, &mut rng);
    let live = (0..MRS).find(|&i| b.table[i].state == 1).unwrap();
    let e = b.table[live];
    // Requests in flight when reset comes are dropped.
    let u = &mut b.sim.uut;
    u.req_valid.next = true;
    u.req_key.next = bits(((live as u64) << 8) | u64::from(e.variant));
    u.req_va.next = bits(e.base_va);
    u.req_len.next = bits(0);
    u.req_pd.next = bits(e.pd.into());
    u.req_access.next = bits(0);
    u.req_remote.next = false;
    u.resp_ready.next = false;
    for _ in 0..3 {
        b.sim.tick();
    }
    b.sim.uut.req_valid.next = false;
    b.sim.uut.reset.next = true;
    b.sim.tick();
    b.sim.uut.reset.next = false;
    b.sim.settle();
    assert!(!b.sim.uut.resp_valid.val());
    assert_eq!(b.wait_cleared(), MRS as u64);
    b.table = vec![Entry::default(); MRS];
    let req = Req {
        key: ((live as u32) << 8) | u32::from(e.variant),
        va: e.base_va,
        len: 1,
        pd: e.pd,
        need: 0,
        remote: false,
        tag: 7,
    };
    let (got, _, _) = b.run(&[req], 1.0, 1.0, &mut rng);
    assert_eq!(got[0].status, mr_status::INVALID_KEY);
}
