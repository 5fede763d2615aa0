//! `rocenic perf`: perftest's tests through the verbs library on two model
//! hosts, in simulated time.

use rocenic_sim::perf::{all_sizes, run, PerfConfig, PerfRow, PerfTest};
use std::process::Command;

fn config(test: PerfTest, size: u64, iterations: u64, qps: u32) -> PerfConfig {
    PerfConfig {
        test,
        sizes: vec![size],
        iterations,
        qps,
        tx_depth: 128,
        mtu: 4096,
        seed: 1,
    }
}

fn bw(test: PerfTest, size: u64, iterations: u64, qps: u32) -> rocenic_sim::perf::BwRow {
    match run(&config(test, size, iterations, qps))
        .unwrap()
        .rows
        .remove(0)
    {
        PerfRow::Bw(row) => row,
        PerfRow::Lat(row) => panic!("a latency row {row:?}"),
    }
}

fn lat(test: PerfTest, size: u64) -> rocenic_sim::perf::LatRow {
    match run(&config(test, size, 50, 1)).unwrap().rows.remove(0) {
        PerfRow::Lat(row) => row,
        PerfRow::Bw(row) => panic!("a bandwidth row {row:?}"),
    }
}

/// The figure on the model backend: 64 KiB WRITEs on 4 QPs at
/// 99 % of the framing bound or more; SENDs and READs as close.
#[test]
fn bandwidth_reaches_the_framing_bound() {
    for test in [PerfTest::WriteBw, PerfTest::SendBw, PerfTest::ReadBw] {
        let row = bw(test, 65536, 200, 4);
        let bound = row.bound_gbps.unwrap();
        assert!(row.bw_avg_gbps >= 0.99 * bound, "{row:?}");
        assert!(
            row.bw_peak_gbps >= row.bw_avg_gbps && row.bw_peak_gbps <= bound * 1.001,
            "{row:?}"
        );
        let mpps = row.msg_rate_mpps;
        assert!((mpps - row.bw_avg_gbps * 1e3 / (8.0 * 65536.0)).abs() < 1e-9 * mpps.max(1.0));
    }
    // An atomic needs its response: max_rd_atomic (16) per round trip.
    let atomic = bw(PerfTest::AtomicBw, 8, 500, 1);
    assert!(atomic.bound_gbps.is_none());
    assert!((6.0..=8.5).contains(&atomic.msg_rate_mpps), "{atomic:?}");
}

/// Two 500 ns links and a 64-byte frame's serialisation each way: a
/// one-way trip just over 1 us; a READ is a round trip.
#[test]
fn latency_is_half_a_ping_pong_and_a_read_is_a_round_trip() {
    for test in [PerfTest::WriteLat, PerfTest::SendLat] {
        let row = lat(test, 64);
        assert!((1.0..1.1).contains(&row.t_min_us), "{row:?}");
        assert!(row.t_max_us < 1.1 && row.t_stdev_us < 0.01, "{row:?}");
        assert_eq!(row.iterations, 50);
    }
    let read = lat(PerfTest::ReadLat, 64);
    assert!((2.0..2.2).contains(&read.t_typical_us), "{read:?}");
    let big = lat(PerfTest::WriteLat, 65536);
    assert!(big.t_min_us > 1.0 + 65536.0 * 8.0 / 100e3, "{big:?}");
}

#[test]
fn the_sweep_covers_perftests_sizes() {
    let sizes = all_sizes();
    assert_eq!(
        (sizes[0], *sizes.last().unwrap(), sizes.len()),
        (2, 8 << 20, 23)
    );
    let rows = run(&PerfConfig {
        sizes: sizes[..6].to_vec(),
        ..config(PerfTest::WriteBw, 0, 20, 1)
    })
    .unwrap()
    .rows;
    assert_eq!(rows.len(), 6);
    let mut last = 0.0;
    for row in rows {
        let PerfRow::Bw(row) = row else { panic!() };
        assert!(row.bw_avg_gbps > last, "bandwidth grows with size: {row:?}");
        last = row.bw_avg_gbps;
    }
}

#[test]
fn the_cli_prints_perftests_table_and_json_and_refuses_what_it_cannot_do() {
    let json = std::env::temp_dir().join(format!("rocenic-perf-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_rocenic"))
        .args([
            "perf",
            "write_bw",
            "-s",
            "4096",
            "-n",
            "50",
            "-q",
            "2",
            "--report_gbits",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains(
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
        ),
        "{table}"
    );
    assert!(
        table.lines().any(|l| l.trim_start().starts_with("4096 ")),
        "{table}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    let row = &rows[0];
    assert_eq!(row["test"], "write_bw");
    assert_eq!(row["bytes"], 4096);
    for key in [
        "bw_avg_gbps",
        "bw_peak_gbps",
        "msg_rate_mpps",
        "bound_gbps",
        "bound_mpps",
    ] {
        assert!(row[key].as_f64().unwrap() > 0.0, "{key}: {row}");
    }

    let stats = Command::new(env!("CARGO_BIN_EXE_rocenic"))
        .args(["perf", "send_bw", "-s", "100", "-n", "30", "--stats"])
        .output()
        .unwrap();
    let text = String::from_utf8(stats.stdout).unwrap();
    let counter = |host: usize, name: &str| -> u64 {
        let block = text.split("NIC statistics:").nth(host).unwrap();
        let line = block
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name}:")))
            .unwrap();
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(counter(1, "tx_frames"), 30, "{text}");
    assert_eq!(counter(2, "rx_frames"), 30, "{text}");
    assert_eq!(counter(2, "tx_frames"), 30, "one ACK each: {text}");
    assert_eq!(counter(1, "mmio_unmapped"), 0, "{text}");

    let lat = Command::new(env!("CARGO_BIN_EXE_rocenic"))
        .args(["perf", "read_lat", "-n", "10"])
        .output()
        .unwrap();
    let table = String::from_utf8(lat.stdout).unwrap();
    assert!(
        table.contains("t_typical[usec]") && table.contains("99.9% percentile[usec]"),
        "{table}"
    );

    for (args, says) in [
        (
            vec!["perf", "write_bw", "--backend", "rtl"],
            "not built yet",
        ),
        (vec!["perf", "atomic_bw", "-s", "64"], "8 bytes"),
        (vec!["perf", "write_bw", "-m", "1500"], "path MTU"),
        (vec!["perf", "write_bw", "-a", "-s", "64"], "leave out -s"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rocenic"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
