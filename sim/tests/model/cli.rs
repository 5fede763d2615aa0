//! The command line as a shell pipeline uses it.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// `rocenic dcqcn ... | head -1`: the reader goes away after one line of
/// thousands; the CLI ends as Unix tools do (SIGPIPE), not with a panic.
#[test]
fn a_reader_that_stops_early_ends_the_cli_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocenic"))
        .args([
            "dcqcn",
            "--flows",
            "2",
            "--duration-ms",
            "4",
            "--window-us",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rocenic starts");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.contains("jain"), "{line}");
    drop(out);
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(done.status.signal(), Some(13), "{:?}", done.status);
}

/// `rocenic dcqcn --set NAME=VALUE`: a parameter of BAR0's congestion
/// block, NVIDIA's name and unit, changes the set the run uses (its fluid
/// fixed point is that of the changed set); a name that is not a DCQCN
/// parameter, or a value wider than its register, is refused by name.
#[test]
fn dcqcn_parameters_are_set_by_their_register_names() {
    use rocenic_model::dcqcn::DcqcnConfig;
    use rocenic_sim::incast::{FluidFixedPoint, IncastConfig};
    let dir = std::env::temp_dir().join(format!("rocenic-cli-set-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("set.json");
    let out = Command::new(env!("CARGO_BIN_EXE_rocenic"))
        .args(["dcqcn", "--flows", "4", "--duration-ms", "1"])
        .args(["--set", "rpg_ai_rate=40", "--set", "rpg_time_reset=55"])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    // Exit 1: a run this short and this slow to recover does not settle.
    assert!(
        out.status.code() == Some(1) && out.stderr.is_empty(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let p = report["fluid_fixed_point"]["marking_probability"]
        .as_f64()
        .unwrap();
    let want = |dcqcn| {
        let config = IncastConfig {
            flows: 4,
            dcqcn,
            ..IncastConfig::default()
        };
        FluidFixedPoint::of(&config).unwrap().marking_probability
    };
    let set = DcqcnConfig {
        ai_rate_bps: 40e6,
        rate_increase_ns: 55_000,
        ..DcqcnConfig::rocenic()
    };
    assert_eq!(p, want(set));
    assert_ne!(p, want(DcqcnConfig::rocenic()));
    for (bad, why) in [
        ("rpg_gdd=11", "no DCQCN parameter is named \"rpg_gdd\""),
        ("rpg_threshold=32", "rpg_threshold takes at most 0x1f"),
        ("pfc_watchdog=5", "pfc_watchdog is not a DCQCN parameter"),
        ("rpg_ai_rate", "NAME=VALUE"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rocenic"))
            .args(["dcqcn", "--duration-ms", "0.1", "--set", bad])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(why),
            "{bad}: {stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
