//! Waveform dumps: a VCD is written on request with the design's signals and
//! the documented timing (10 units per cycle, rising edge at +5), values in
//! it match the simulation, and misuse is reported as errors. A block built
//! without waveform support says so instead of writing an empty file.

use std::path::PathBuf;
use verilator_sys::{AxisRegisterSlice as Slice, Block, BridgeCheck, Sim, SimError, FST_SUPPORTED};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verilator-sys-trace");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// The VCD identifier code of the variable called `name` (any scope).
fn vcd_code(vcd: &str, name: &str) -> String {
    vcd.lines()
        .find_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            (f.len() >= 5 && f[0] == "$var" && f[4] == name).then(|| f[3].to_string())
        })
        .unwrap_or_else(|| panic!("no $var {name} in the VCD"))
}

/// Every `(time, value)` change of the variable with identifier `code`.
fn vcd_changes(vcd: &str, code: &str) -> Vec<(u64, String)> {
    let mut time = 0;
    let mut changes = Vec::new();
    let body = &vcd[vcd.find("$enddefinitions").unwrap()..];
    for line in body.lines() {
        if let Some(t) = line.strip_prefix('#') {
            time = t.parse().unwrap();
        } else if let Some((value, id)) = line.split_once(' ') {
            if id == code {
                changes.push((time, value.trim_start_matches('b').to_string()));
            }
        } else if line.len() > code.len() && line.ends_with(code) {
            let value = &line[..line.len() - code.len()];
            if value == "0" || value == "1" {
                changes.push((time, value.to_string()));
            }
        }
    }
    changes
}

#[test]
fn vcd_is_written_with_signals_and_cycle_timing() {
    let path = scratch("bridge_check.vcd");
    let mut sim = Sim::<BridgeCheck>::new().unwrap();
    sim.ticks(2);
    sim.trace(&path).unwrap();
    assert!(sim.tracing());
    sim.set_bit(BridgeCheck::COUNTER_ENABLE, true);
    sim.ticks(3);
    let wide: Vec<u64> = (0..8).map(|i| 0x1111_1111_1111_1111 * (i + 1)).collect();
    sim.set(BridgeCheck::A, &wide);
    sim.ticks(2);
    sim.stop_trace();
    assert!(!sim.tracing());
    // Ticks after stopping do not touch the file.
    let len = std::fs::metadata(&path).unwrap().len();
    sim.ticks(3);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);

    let vcd = std::fs::read_to_string(&path).unwrap();
    assert!(vcd.starts_with("$version"), "not a VCD");
    assert!(vcd.contains("$timescale 1ns $end"));
    // Clock: rising at 10n + 5 and falling at 10n for the traced cycles 2..7.
    let clock = vcd_changes(&vcd, &vcd_code(&vcd, "clock"));
    let expected: Vec<(u64, String)> = (2..7)
        .flat_map(|n| [(10 * n, "0".to_string()), (10 * n + 5, "1".to_string())])
        .chain([(70, "0".to_string())])
        .collect();
    assert_eq!(clock, expected);
    // The counter, enabled from cycle 2, counts at each rising edge.
    let count = vcd_changes(&vcd, &vcd_code(&vcd, "counter$count"));
    let values: Vec<(u64, u64)> = count
        .iter()
        .map(|(t, v)| (*t, u64::from_str_radix(v, 2).unwrap()))
        .collect();
    assert_eq!(
        values,
        vec![(20, 0), (25, 1), (35, 2), (45, 3), (55, 4), (65, 5)]
    );
    // The 512-bit register shows the wide value from the edge that took it.
    let y = vcd_changes(&vcd, &vcd_code(&vcd, "y"));
    let expected_y: String = wide.iter().rev().map(|w| format!("{w:064b}")).collect();
    let last = y.last().unwrap();
    assert_eq!(last.0, 55);
    assert_eq!(
        last.1.trim_start_matches('0'),
        expected_y.trim_start_matches('0')
    );
}

#[test]
fn a_second_trace_starts_after_the_first_stops() {
    let first = scratch("first.vcd");
    let second = scratch("second.vcd");
    let mut sim = Sim::<BridgeCheck>::new().unwrap();
    sim.trace(&first).unwrap();
    assert!(matches!(sim.trace(&second), Err(SimError::TraceActive)));
    sim.ticks(4);
    sim.stop_trace();
    sim.trace(&second).unwrap();
    sim.ticks(4);
    drop(sim);
    let first = std::fs::read_to_string(&first).unwrap();
    let second = std::fs::read_to_string(&second).unwrap();
    for vcd in [&first, &second] {
        assert!(vcd.contains("counter$count"));
    }
    // Each file covers its own cycles: 0..4 then 4..8, each closed with a
    // final sample at the cycle boundary.
    assert!(first.contains("\n#0\n") && first.contains("\n#35\n") && first.contains("\n#40\n"));
    assert!(!first.contains("\n#45\n"));
    assert!(second.contains("\n#40\n") && second.contains("\n#75\n") && second.contains("\n#80\n"));
    assert!(!second.contains("\n#35\n"));
}

#[test]
fn trace_misuse_is_an_error() {
    let mut sim = Sim::<BridgeCheck>::new().unwrap();
    assert!(matches!(
        sim.trace(scratch("wave.txt")),
        Err(SimError::TraceFormat(_))
    ));
    assert!(matches!(
        sim.trace(scratch("no-extension")),
        Err(SimError::TraceFormat(_))
    ));
    let missing_dir = scratch("does-not-exist").join("x.vcd");
    assert!(matches!(
        sim.trace(&missing_dir),
        Err(SimError::TraceOpen { .. })
    ));
    assert!(!sim.tracing());
    let fst = scratch("wave.fst");
    if FST_SUPPORTED {
        sim.trace(&fst).unwrap();
        sim.ticks(10);
        sim.stop_trace();
        assert!(std::fs::metadata(&fst).unwrap().len() > 0);
    } else {
        assert!(matches!(sim.trace(&fst), Err(SimError::FstUnavailable(_))));
    }
    // The failed attempts left the simulation usable and untraced.
    sim.ticks(2);
    assert_eq!(sim.cycle(), if FST_SUPPORTED { 12 } else { 2 });
}

#[test]
fn a_block_without_waves_refuses_a_trace_unless_the_feature_builds_them() {
    let path = scratch("slice.vcd");
    let mut sim = Sim::<Slice>::new().unwrap();
    // The self-test block always has waveform support; a product block
    // only with the feature.
    assert_eq!(
        [BridgeCheck::WAVES, Slice::WAVES],
        [true, cfg!(feature = "waves")]
    );
    if cfg!(feature = "waves") {
        sim.trace(&path).unwrap();
        sim.ticks(2);
        sim.stop_trace();
        assert!(std::fs::read_to_string(&path).unwrap().contains("up$tdata"));
    } else {
        let refused = sim.trace(&path).unwrap_err();
        assert!(matches!(
            refused,
            SimError::WavesNotBuilt("axis_register_slice")
        ));
        assert!(refused
            .to_string()
            .contains("--features verilator-sys/waves"));
        assert!(!sim.tracing());
        assert!(!path.exists(), "a refused trace creates no file");
        // The refusal leaves the model running as before.
        sim.ticks(2);
        assert_eq!(sim.cycle(), 2);
    }
}
