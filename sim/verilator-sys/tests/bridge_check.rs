//! The bridge on its self-test block (`bridge_check` in rocenic-hdl's export
//! list): port table and lookup, bit-exact 512-bit values through a
//! register, every Verilator storage class with width masking, the clocking
//! convention, and errors for bad port names and clocks.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use verilator_sys::{Block, BridgeCheck, Dir, Sim, SimError, Storage};

fn random_words(rng: &mut ChaCha8Rng, n: usize) -> Vec<u64> {
    (0..n).map(|_| rng.gen()).collect()
}

fn mask(width: u32) -> Vec<u64> {
    (0..width.div_ceil(64))
        .map(|i| {
            let bits = (width - 64 * i).min(64);
            if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            }
        })
        .collect()
}

#[test]
fn port_table_follows_the_verilog() {
    let ports = BridgeCheck::ports();
    let names: Vec<&str> = ports.iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "clock",
            "a",
            "b",
            "y",
            "w1",
            "n1",
            "w12",
            "n12",
            "any12",
            "w33",
            "n33",
            "w64",
            "n64",
            "w100",
            "n100",
            "any100",
            "counter_enable",
            "counter_count"
        ]
    );
    let y = BridgeCheck::Y.port().info();
    assert_eq!(
        (y.width, y.dir, y.storage),
        (512, Dir::Out, Storage::Wide { words32: 16 })
    );
    assert_eq!(y.words(), 8);
    let storages: Vec<Storage> = ["w1", "w12", "w33", "w64", "w100"]
        .iter()
        .map(|n| BridgeCheck::port(n).unwrap().info().storage)
        .collect();
    assert_eq!(
        storages,
        [
            Storage::U8,
            Storage::U16,
            Storage::U64,
            Storage::U64,
            Storage::Wide { words32: 4 }
        ]
    );
    assert_eq!(BridgeCheck::ports()[17].hdl_name, "counter$count");
    assert_eq!(BridgeCheck::NAME, "bridge_check");
}

#[test]
fn ports_are_found_by_rust_and_verilog_names() {
    let by_rust = BridgeCheck::port("counter_enable").unwrap();
    let by_hdl = BridgeCheck::port("counter$enable").unwrap();
    assert_eq!(by_rust, by_hdl);
    assert_eq!(by_rust, BridgeCheck::COUNTER_ENABLE.port());
    assert_eq!(
        BridgeCheck::output("counter$count").unwrap().port(),
        BridgeCheck::COUNTER_COUNT.port()
    );
    assert!(matches!(
        BridgeCheck::port("nope"),
        Err(SimError::NoSuchPort {
            block: "bridge_check",
            ..
        })
    ));
    assert!(matches!(
        BridgeCheck::input("y"),
        Err(SimError::NotAnInput { .. })
    ));
    assert!(matches!(
        BridgeCheck::output("a"),
        Err(SimError::NotAnOutput { .. })
    ));
}

#[test]
fn bad_clocks_are_errors() {
    assert!(matches!(
        Sim::<BridgeCheck>::with_clock("missing"),
        Err(SimError::NoSuchPort { .. })
    ));
    assert!(matches!(
        Sim::<BridgeCheck>::with_clock("w12"),
        Err(SimError::BadClock { .. })
    ));
    assert!(matches!(
        Sim::<BridgeCheck>::with_clock("n1"),
        Err(SimError::NotAnInput { .. })
    ));
}

#[test]
fn wide_values_pass_bit_exact_through_a_register() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_0512);
    let mut sim = Sim::<BridgeCheck>::new().unwrap();
    // Power-up value of the register.
    assert_eq!(sim.get(BridgeCheck::Y), vec![0; 8]);
    let mut expected_y = vec![0u64; 8];
    for cycle in 0..2000 {
        let mut a = random_words(&mut rng, 8);
        let b = random_words(&mut rng, 8);
        // Walking ones and edge patterns reach every bit position, including
        // the 32-bit halves of each word.
        if cycle < 512 {
            a = vec![0; 8];
            a[cycle / 64] = 1 << (cycle % 64);
        }
        sim.set(BridgeCheck::A, &a);
        sim.set(BridgeCheck::B, &b);
        sim.eval();
        // Before the edge the register still shows the previous value.
        assert_eq!(
            sim.get(BridgeCheck::Y),
            expected_y,
            "cycle {cycle} pre-edge"
        );
        sim.tick();
        expected_y = a.iter().zip(&b).map(|(x, y)| x ^ y).collect();
        assert_eq!(sim.get(BridgeCheck::Y), expected_y, "cycle {cycle}");
        // Inputs read back exactly as written.
        assert_eq!(sim.get(BridgeCheck::A), a);
    }
    assert_eq!(sim.cycle(), 2000);
}

#[test]
fn every_storage_class_converts_and_masks_to_width() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut sim = Sim::<BridgeCheck>::new().unwrap();
    let cases = [
        (BridgeCheck::W1, BridgeCheck::N1, 1),
        (BridgeCheck::W12, BridgeCheck::N12, 12),
        (BridgeCheck::W33, BridgeCheck::N33, 33),
        (BridgeCheck::W64, BridgeCheck::N64, 64),
        (BridgeCheck::W100, BridgeCheck::N100, 100),
    ];
    for _ in 0..500 {
        for &(input, output, width) in &cases {
            // Garbage above the width must be dropped on write.
            let raw = random_words(&mut rng, 3);
            let m = mask(width);
            let kept: Vec<u64> = m.iter().zip(&raw).map(|(m, r)| m & r).collect();
            sim.set(input, &raw);
            sim.eval();
            assert_eq!(sim.get(input), kept, "w{width} readback");
            let inverted: Vec<u64> = m.iter().zip(&kept).map(|(m, k)| m & !k).collect();
            assert_eq!(sim.get(output), inverted, "n{width}");
            assert_eq!(sim.get_u64(output), inverted[0]);
        }
    }
    // Verilator ORs whole storage words, so any bit above the width that a
    // write let through would turn these on.
    for (input, any, width) in [
        (BridgeCheck::W12, BridgeCheck::ANY12, 12),
        (BridgeCheck::W100, BridgeCheck::ANY100, 100),
    ] {
        let above: Vec<u64> = mask(width).iter().map(|m| !m).chain([u64::MAX]).collect();
        sim.set(input, &above);
        sim.eval();
        assert!(!sim.get_bit(any), "any{width} saw bits above the width");
        for bit in [0, width - 1] {
            let mut one = vec![0u64; 2];
            one[(bit / 64) as usize] = 1 << (bit % 64);
            sim.set(input, &one);
            sim.eval();
            assert!(sim.get_bit(any), "any{width} missed bit {bit}");
        }
    }
    // Short writes zero the rest; set_u64/set_bit/get_bit agree.
    sim.set(BridgeCheck::W100, &[]);
    sim.eval();
    assert_eq!(sim.get(BridgeCheck::N100), mask(100));
    sim.set_u64(BridgeCheck::W100, u64::MAX);
    sim.eval();
    assert_eq!(sim.get(BridgeCheck::N100), vec![0, (1 << 36) - 1]);
    sim.set_bit(BridgeCheck::W1, true);
    sim.eval();
    assert!(!sim.get_bit(BridgeCheck::N1));
    sim.set_bit(BridgeCheck::W1, false);
    sim.eval();
    assert!(sim.get_bit(BridgeCheck::N1));
}

#[test]
fn get_into_fills_short_and_long_buffers() {
    let mut sim = Sim::<BridgeCheck>::new().unwrap();
    let a: Vec<u64> = (1..=8).map(|i| i * 0x0101_0101_0101_0101).collect();
    sim.set(BridgeCheck::A, &a);
    sim.tick();
    let mut short = [0u64; 3];
    sim.get_into(BridgeCheck::Y, &mut short);
    assert_eq!(short, a[..3]);
    let mut long = [u64::MAX; 10];
    sim.get_into(BridgeCheck::Y, &mut long);
    assert_eq!(long[..8], a[..]);
    assert_eq!(long[8..], [0, 0]);
    let mut empty: [u64; 0] = [];
    sim.get_into(BridgeCheck::Y, &mut empty);
}

#[test]
fn inputs_are_sampled_at_the_rising_edge_of_tick() {
    let mut sim = Sim::<BridgeCheck>::new().unwrap();
    let count = BridgeCheck::COUNTER_COUNT;
    assert_eq!(sim.get_u64(count), 0);
    // Enable set for exactly three ticks: counted exactly three times.
    sim.set_bit(BridgeCheck::COUNTER_ENABLE, true);
    sim.tick();
    assert_eq!(sim.get_u64(count), 1);
    sim.ticks(2);
    assert_eq!(sim.get_u64(count), 3);
    sim.set_bit(BridgeCheck::COUNTER_ENABLE, false);
    // Evaluating without a clock edge changes no register.
    sim.eval();
    sim.eval();
    assert_eq!(sim.get_u64(count), 3);
    sim.ticks(5);
    assert_eq!(sim.get_u64(count), 3);
    assert_eq!(sim.cycle(), 8);
}

#[test]
fn blocks_are_independent() {
    let mut one = Sim::<BridgeCheck>::new().unwrap();
    let mut two = Sim::<BridgeCheck>::new().unwrap();
    one.set_bit(BridgeCheck::COUNTER_ENABLE, true);
    one.ticks(10);
    two.ticks(3);
    assert_eq!(one.get_u64(BridgeCheck::COUNTER_COUNT), 10);
    assert_eq!(two.get_u64(BridgeCheck::COUNTER_COUNT), 0);
    // A bare block works without Sim, driving the clock by hand.
    let mut bare = BridgeCheck::new();
    bare.set_bit(BridgeCheck::COUNTER_ENABLE, true);
    // The first eval runs `initial` blocks and records the clock level, so
    // it must see the clock low for the first rising edge to count.
    bare.eval();
    for _ in 0..4 {
        bare.set_bit(BridgeCheck::CLOCK, true);
        bare.eval();
        bare.set_bit(BridgeCheck::CLOCK, false);
        bare.eval();
    }
    assert_eq!(bare.get_u64(BridgeCheck::COUNTER_COUNT), 4);
}
