//! Cycles per second of the bridge on the 512-bit self-test block, to
//! compare with a plain C++ Verilator loop:
//! `cargo run --release -p verilator-sys --example speed [cycles] [case]`,
//! where `case` (default: all) is `tick`, `wide` or `narrow`.

use std::time::Instant;
use verilator_sys::{BridgeCheck, Sim};

fn main() {
    let mut args = std::env::args().skip(1);
    let cycles: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(4_000_000);
    let only = args.next();
    let mut sim = Sim::<BridgeCheck>::new().expect("bridge_check has a clock");
    sim.set(BridgeCheck::B, &[0x5555_5555_5555_5555; 8]);
    let mut a = [0u64; 8];
    let mut y = [0u64; 8];
    let mut checksum = 0u64;
    let cases: [(&str, &str); 3] = [
        ("tick", "tick only"),
        ("wide", "set 512 bits + tick + get 512 bits"),
        ("narrow", "set 64 bits + tick + get 64 bits"),
    ];
    for (case, label) in cases {
        if only.as_deref().is_some_and(|o| o != case) {
            continue;
        }
        let start = Instant::now();
        for i in 0..cycles {
            match case {
                "tick" => sim.tick(),
                "wide" => {
                    a[(i % 8) as usize] = i;
                    sim.set(BridgeCheck::A, &a);
                    sim.tick();
                    sim.get_into(BridgeCheck::Y, &mut y);
                    checksum ^= y[(i % 8) as usize];
                }
                _ => {
                    sim.set_u64(BridgeCheck::W64, i);
                    sim.tick();
                    checksum ^= sim.get_u64(BridgeCheck::N64);
                }
            }
        }
        let rate = cycles as f64 / start.elapsed().as_secs_f64();
        println!("{label}: {:.2} M cycles/s", rate / 1e6);
    }
    println!("(checksum {checksum:x})");
}
