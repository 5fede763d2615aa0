//! Simulation speed through the bridge, so per-port overhead cannot creep
//! in unnoticed: a 512-bit register with fresh inputs every cycle, and the
//! register slice streaming at full rate. Prints cycles per second and
//! asserts a floor far below the expected figure (a shared CI machine is
//! noisy), plus that the work really happened.

use std::time::Instant;
use verilator_sys::{AxisRegisterSlice as Slice, BridgeCheck, Sim};

/// Floor in cycles per second; the bridge runs these designs at several
/// million on one core of the development machine.
const FLOOR: f64 = 500_000.0;

#[test]
fn xor_register_cycles_per_second() {
    let mut sim = Sim::<BridgeCheck>::new().unwrap();
    let cycles = 2_000_000u64;
    let mut a = [0u64; 8];
    let b = [0x5555_5555_5555_5555u64; 8];
    sim.set(BridgeCheck::B, &b);
    let mut y = [0u64; 8];
    let mut folded = 0u64;
    let start = Instant::now();
    for i in 0..cycles {
        a[(i % 8) as usize] = i;
        sim.set(BridgeCheck::A, &a);
        sim.tick();
        sim.get_into(BridgeCheck::Y, &mut y);
        folded ^= y[(i % 8) as usize];
    }
    let rate = cycles as f64 / start.elapsed().as_secs_f64();
    eprintln!(
        "bridge_check, 512-bit in/out every cycle: {:.2} M cycles/s",
        rate / 1e6
    );
    // y[k] = a[k] ^ b[k]; fold reproduces the same computation in Rust.
    let mut ra = [0u64; 8];
    let mut expect = 0u64;
    for i in 0..cycles {
        ra[(i % 8) as usize] = i;
        expect ^= ra[(i % 8) as usize] ^ b[0];
    }
    assert_eq!(folded, expect);
    assert!(rate > FLOOR, "{rate:.0} cycles/s");
}

#[test]
fn register_slice_streaming_cycles_per_second() {
    let mut sim = Sim::<Slice>::new().unwrap();
    sim.set_bit(Slice::DOWN_TREADY, true);
    sim.set_bit(Slice::UP_TVALID, true);
    sim.set_u64(Slice::UP_TKEEP, u64::MAX);
    let cycles = 1_000_000u64;
    let mut data = [0u64; 8];
    let mut out = [0u64; 8];
    let mut moved = 0u64;
    let mut checksum = 0u64;
    let start = Instant::now();
    for i in 0..cycles {
        data[0] = i;
        sim.set(Slice::UP_TDATA, &data);
        sim.set_bit(Slice::UP_TLAST, i % 4 == 3);
        sim.tick();
        if sim.get_bit(Slice::DOWN_TVALID) {
            sim.get_into(Slice::DOWN_TDATA, &mut out);
            checksum = checksum.wrapping_add(out[0]);
            moved += 1;
        }
    }
    let rate = cycles as f64 / start.elapsed().as_secs_f64();
    eprintln!(
        "axis_register_slice, one 512-bit beat per cycle: {:.2} M cycles/s",
        rate / 1e6
    );
    // Every beat sent moved, in order: beat i shows after edge i.
    assert_eq!(moved, cycles);
    assert_eq!(checksum, (0..cycles).sum::<u64>());
    assert!(rate > FLOOR, "{rate:.0} cycles/s");
}
