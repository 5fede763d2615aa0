//! RequesterEvents: Yosys synth_xilinx at 1024 QPs (every per-QP memory in
//! block RAM, resources printed; measured 222 RAMB36 + 1 RAMB18, 4,004
//! LUTs, 4,254 FFs), and rust-hdl unit tests of its two small
//! blocks, `ReadySet` (random pulses and handshakes) and `WqeBodyRam`
//! (random writes read back). Its behaviour against the model is
//! `sim/tests/blocks/requester_events.rs` (Verilator).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::requester::ready_set::ReadySet;
use rocenic_hdl::requester::requester_events::RequesterEventsDefault;
use rocenic_hdl::requester::wqe_body_ram::{WqeBody, WqeBodyRam};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use std::collections::BTreeMap;

#[test]
fn memories_map_to_block_ram() {
    let report = xilinx_synth("requester_events", &verilog_of::<RequesterEventsDefault>()).unwrap();
    let (bram36, bram18) = (report.count("RAMB36E2"), report.count("RAMB18E2"));
    eprintln!(
        "requester_events: {} LUTs, {} FFs, {bram36} RAMB36 + {bram18} RAMB18",
        report.luts(),
        report.flip_flops()
    );
    assert!(bram36 + bram18 > 0, "{}", report.log);
    // Only the two small memories may sit in LUT RAM, where Yosys puts
    // them (measured): the 16-entry sent-status FIFO (16 x 65 bits, 5
    // RAM32M16) and the granted bits (1024 x 1, 16 RAM64M8); a block RAM
    // each would be almost empty. The context, rings, local buffers,
    // side, timer and body RAMs (222 RAMB36 + 1 RAMB18) are block RAM.
    assert!(bram36 >= 200, "{}", report.log);
    assert!(report.lut_rams() <= 21, "{}", report.log);
}

/// 16 QPs: pulses and takes at random. Every take answers a pulse of its
/// QP since the QP's previous take (no spurious or duplicate request; a
/// pulse counts from the cycle after it, when it is decided), and every
/// pulse is answered by a later take (none lost).
#[test]
fn ready_set_queues_each_sendable_qp_once() {
    for seed in 0..4u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut sim = CycleSim::new(ReadySet::<4, 5>::default(), |u| &mut u.clock);
        sim.uut.reset.next = true;
        sim.tick();
        sim.uut.reset.next = false;
        let pulse_rate = [0.1, 0.5, 0.9, 0.3][seed as usize];
        let ready_rate = [0.5, 0.3, 0.9, 0.05][seed as usize];
        let mut pulses: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        let mut takes: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        let mut count = 0;
        for t in 0..3000u64 {
            let pulse = t < 2500 && rng.gen_bool(pulse_rate);
            let q = rng.gen_range(0..16u64);
            let ready = t >= 2500 || rng.gen_bool(ready_rate);
            sim.uut.sendable_valid.next = pulse;
            sim.uut.sendable_qpn.next = q.into();
            sim.uut.request_ready.next = ready;
            sim.settle();
            if pulse {
                pulses.entry(q).or_default().push(t);
            }
            if sim.uut.request_valid.val() && ready {
                let taken = sim.uut.request_qpn.val().to_u64();
                takes.entry(taken).or_default().push(t);
                count += 1;
            }
            sim.tick();
        }
        for (q, ts) in &takes {
            let ps = pulses.get(q).map_or(&[][..], |v| &v[..]);
            let mut prev = 0;
            for &t in ts {
                assert!(
                    ps.iter().any(|&p| p + 1 >= prev && p < t),
                    "seed {seed}: QP {q} taken at {t} without a pulse since {prev}"
                );
                prev = t;
            }
        }
        for (q, ps) in &pulses {
            let last = *ps.last().unwrap();
            assert!(
                takes.get(q).is_some_and(|ts| ts.iter().any(|&t| t > last)),
                "seed {seed}: QP {q} pulsed at {last}, never taken after"
            );
        }
        assert!(count > 50, "seed {seed}: {count} takes");
    }
}

#[test]
fn wqe_body_ram_reads_back_what_was_written() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut sim = CycleSim::new(WqeBodyRam::<3, 2>::default(), |u| &mut u.clock);
    let mut model: BTreeMap<(u64, u64), WqeBody> = BTreeMap::new();
    let mut checked = 0;
    for _ in 0..400 {
        let (wq, ws) = (rng.gen_range(0..8u64), rng.gen_range(0..4u64));
        let body = WqeBody {
            op: rng.gen_range(0..8u64).into(),
            remote_va: rng.gen::<u64>().into(),
            rkey: u64::from(rng.gen::<u32>()).into(),
            imm: u64::from(rng.gen::<u32>()).into(),
            compare: rng.gen::<u64>().into(),
            swap_add: rng.gen::<u64>().into(),
            solicited: rng.gen(),
        };
        let write = rng.gen_bool(0.5);
        let (rq, rs) = (rng.gen_range(0..8u64), rng.gen_range(0..4u64));
        // Reads of the word written at the same edge are don't-care.
        let read = model.contains_key(&(rq, rs)) && !(write && (wq, ws) == (rq, rs));
        sim.uut.write_enable.next = write;
        sim.uut.write_qpn.next = wq.into();
        sim.uut.write_slot.next = ws.into();
        sim.uut.write_data.next = body;
        sim.uut.read_qpn.next = rq.into();
        sim.uut.read_slot.next = rs.into();
        let expect = read.then(|| model[&(rq, rs)]);
        sim.tick();
        if let Some(want) = expect {
            assert_eq!(sim.uut.read_data.val(), want);
            checked += 1;
        }
        if write {
            model.insert((wq, ws), body);
        }
    }
    assert!(checked > 100, "{checked}");
}
