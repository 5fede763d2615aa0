//! ResponseWriteGate in rust-hdl's simulator against its contract
//! ([`covered`]): descriptors stamped with the write count at their push
//! leave in order, each only once the writes up to its stamp are done
//! (wrap-safe over many laps of the 8-bit counters), none is lost or
//! duplicated, and the queue side is never refused while there is room.
//! Then one Yosys synthesis: the 8-entry FIFO in LUT RAM, LUT/FF figures.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::responder::response_write_gate::{covered, GatedPacket, ResponseWriteGate};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;
use std::collections::VecDeque;

fn packet(tag: u64, wseq: u8) -> GatedPacket {
    GatedPacket {
        qpn: bits(tag & 0x3FF),
        psn: bits(tag & 0xFF_FFFF),
        orig: bits(tag.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        wseq: bits(wseq.into()),
        ..Default::default()
    }
}

/// Random pushes, write issues and completions (at most 35 outstanding,
/// the datapath's bound) and random `out_ready`, for `cycles` cycles.
/// Returns (descriptors out, cycles a covered-by-contract head waited
/// for writes).
fn run(seed: u64, cycles: u64) -> (u64, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sim = CycleSim::new(ResponseWriteGate::default(), |g| &mut g.clock);
    let (mut issued, mut done) = (0u8, 0u8);
    let mut inside: VecDeque<GatedPacket> = VecDeque::new();
    // Written at the last edge, readable after the next one.
    let mut fresh: Option<GatedPacket> = None;
    let (mut tag, mut out, mut waits) = (0u64, 0u64, 0u64);
    sim.uut.reset.next = true;
    sim.settle();
    sim.tick();
    sim.uut.reset.next = false;
    for _ in 0..cycles {
        let push = rng.gen_bool(0.4);
        let ready = rng.gen_bool(0.7);
        let offered = packet(tag, issued);
        let u = &mut sim.uut;
        u.in_valid.next = push;
        u.in_packet.next = offered;
        u.out_ready.next = ready;
        u.writes_issued.next = bits(issued.into());
        u.writes_done.next = bits(done.into());
        sim.settle();
        let u = &sim.uut;
        let c = sim.cycles();
        assert_eq!(
            u.in_ready.val(),
            inside.len() + usize::from(fresh.is_some()) < 8,
            "seed {seed}, cycle {c}: room for 8"
        );
        if let Some(head) = inside.front() {
            let want = covered(issued, done, head.wseq.to_u64() as u8);
            assert_eq!(
                u.out_valid.val(),
                want,
                "seed {seed}, cycle {c}: head {head:?}"
            );
            assert!(u.head_valid.val());
            if !want {
                waits += 1;
            }
        } else {
            assert!(!u.out_valid.val(), "seed {seed}, cycle {c}");
        }
        if u.out_valid.val() && ready {
            let want = inside.pop_front().expect("a head");
            assert_eq!(u.out_packet.val(), want, "seed {seed}, cycle {c}: order");
            out += 1;
        }
        // The FIFO shows an entry from the second edge after its write.
        let taken = push && u.in_ready.val();
        sim.tick();
        inside.extend(fresh.take());
        if taken {
            fresh = Some(offered);
            tag += 1;
        }
        // Writes: issue up to 2 (a two-segment job), complete one.
        let outstanding = issued.wrapping_sub(done);
        if rng.gen_bool(0.3) && outstanding <= 33 {
            issued = issued.wrapping_add(rng.gen_range(1..=2));
        }
        if issued != done && rng.gen_bool(0.35) {
            done = done.wrapping_add(1);
        }
    }
    (out, waits)
}

#[test]
fn descriptors_leave_in_order_once_their_writes_are_done() {
    let mut total = (0, 0);
    for seed in 1..=4 {
        let (out, waits) = run(seed, 2_500);
        total.0 += out;
        total.1 += waits;
    }
    eprintln!(
        "{} descriptors out, {} head cycles held for writes",
        total.0, total.1
    );
    // Many laps of the 8-bit counters, and the gate did hold.
    assert!(total.0 > 1_000 && total.1 > 500, "{total:?}");
}

#[test]
fn contract_is_wrap_safe() {
    // Stamp in the outstanding window: pending; at or before `done`:
    // covered, across the wrap.
    assert!(!covered(3, 250, 2));
    assert!(covered(3, 250, 250));
    assert!(covered(3, 250, 200));
    assert!(!covered(3, 250, 251));
    assert!(covered(7, 7, 7));
    assert!(!covered(8, 7, 8));
}

#[test]
fn synthesizes_with_the_fifo_in_lut_ram() {
    let report = xilinx_synth("response_write_gate", &verilog_of::<ResponseWriteGate>()).unwrap();
    eprintln!(
        "response_write_gate: {} LUTs, {} FFs, {} block RAMs, {} LUT RAMs",
        report.luts(),
        report.flip_flops(),
        report.block_rams(),
        report.lut_rams()
    );
    // 8 x 259 bits: LUT RAM, not block RAM; the flip-flops are the
    // registered read of one entry (259) and the pointers, not storage.
    assert_eq!(report.block_rams(), 0, "{}", report.log);
    assert!(report.lut_rams() > 0, "{}", report.log);
    assert!(report.flip_flops() < 300, "{}", report.log);
}
