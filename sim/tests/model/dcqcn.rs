//! DCQCN end to end on the reference model: flows into one 100 GbE
//! bottleneck share it fairly and keep it busy.

use rocenic_fabric::{EcnConfig, PfcConfig};
use rocenic_sim::incast::{run_incast, IncastConfig, IncastReport};

/// The targets of a DCQCN incast with the default parameters, on the
/// model: after the first millisecond every 1 ms window keeps the
/// bottleneck at least 90 % busy, from 5 ms at the latest every window is
/// fair (Jain >= 0.98), nothing is dropped, up to 8 flows never make the
/// switch pause them, and the queue stays near the fluid model's fixed
/// point.
fn check(flows: usize, seed: u64) {
    let config = IncastConfig {
        flows,
        seed,
        duration_ns: 10_000_000,
        ..IncastConfig::default()
    };
    let report = run_incast(&config).unwrap();
    let ms = |s: &rocenic_sim::incast::Sample| s.start_ns as f64 / 1e6;
    for s in &report.samples[1..] {
        assert!(
            s.utilisation >= 0.90,
            "{flows} flows, seed {seed}: {:.1} % busy at {} ms",
            s.utilisation * 100.0,
            ms(s)
        );
    }
    for s in report.samples.iter().filter(|s| s.start_ns >= 5_000_000) {
        assert!(
            s.jain >= 0.98,
            "{flows} flows, seed {seed}: Jain {:.3} at {} ms: {:?}",
            s.jain,
            ms(s),
            s.flow_gbps
        );
    }
    assert_eq!(report.samples.iter().map(|s| s.drops).sum::<u64>(), 0);
    assert_eq!(report.retransmitted_frames, 0);
    if flows <= 8 {
        assert_eq!(report.pfc_pauses, 0, "{flows} flows paused");
    }
    // From 1 ms the mean queue is within a factor of two of the DCQCN
    // fluid model's fixed point (docs/dcqcn.md, "The fluid model's fixed
    // point").
    let fixed = report.fluid_fixed_point.expect("a fixed point");
    let ecn = &config.ecn;
    assert!((ecn.kmin_bytes as f64..ecn.kmax_bytes as f64).contains(&fixed.queue_bytes));
    let ratio = report.queue_bytes_mean_after_1ms / fixed.queue_bytes;
    assert!(
        (0.5..2.0).contains(&ratio),
        "{flows} flows, seed {seed}: mean queue {:.0} B, {ratio:.2} x the fixed point",
        report.queue_bytes_mean_after_1ms
    );
    // The congestion control loop really ran.
    assert!(report.ecn_marked > 0 && report.cnps_received > 0);
    // Every CNP arrives but those on the wire at the end (one per flow at
    // most: the wire is shorter than the CNP interval).
    assert!(report.cnps_received <= report.cnps_sent);
    assert!(report.cnps_sent - report.cnps_received <= flows as u64);
}

#[test]
fn two_and_four_flows_share_a_bottleneck_fairly_and_keep_it_busy() {
    for seed in [1, 3] {
        check(2, seed);
        check(4, seed);
    }
}

#[test]
fn eight_flows_share_a_bottleneck_fairly_and_keep_it_busy() {
    for seed in [1, 3] {
        check(8, seed);
    }
}

#[test]
fn sixteen_flows_share_a_bottleneck_fairly_and_keep_it_busy() {
    for seed in [1, 3] {
        check(16, seed);
    }
}

/// 16 senders each keep 64 WRITEs of 4 KiB posted towards one receiver
/// (4 MiB in flight) through a switch with a 2 MiB buffer: more than it
/// holds. With PFC each ingress port pauses its sender at 64 KiB, with
/// 32 KiB of headroom (16 x 96 KiB fit the buffer), and ECN's Kmax stays
/// below XOFF.
fn short_message_incast(pfc: bool) -> IncastReport {
    let config = IncastConfig {
        flows: 16,
        duration_ns: 20_000_000,
        message_size: 4096,
        outstanding: 64,
        messages_per_flow: Some(1000),
        buffer_bytes: 2 << 20,
        ecn: EcnConfig {
            kmin_bytes: 5_000,
            kmax_bytes: 50_000,
            pmax: 0.01,
            on_dequeue: false,
        },
        pfc: pfc.then(|| PfcConfig {
            xoff_bytes: 64 << 10,
            xon_bytes: 48 << 10,
            headroom_bytes: 32 << 10,
            ..PfcConfig::default()
        }),
        ..IncastConfig::default()
    };
    run_incast(&config).unwrap()
}

#[test]
fn a_short_message_incast_drops_without_pfc_and_is_lossless_with_it() {
    let lossy = short_message_incast(false);
    assert!(
        lossy.buffer_drops > 0 && lossy.retransmitted_frames > 0,
        "the burst must overflow the buffer without PFC: {} drops",
        lossy.buffer_drops
    );
    assert_eq!(lossy.pfc_pauses, 0);

    let lossless = short_message_incast(true);
    let drops: u64 = lossless.samples.iter().map(|s| s.drops).sum();
    assert_eq!(drops, 0, "a frame was dropped (headroom or buffer)");
    assert_eq!(lossless.retransmitted_frames, 0);
    assert_eq!(lossless.messages_completed, 16 * 1000);
    assert!(lossless.completion_ns.is_some());
    // The switch paused the senders and they took the pauses.
    assert!(lossless.pfc_pauses > 0 && lossless.rx_pause_frames >= lossless.pfc_pauses);
    let per_window: u64 = lossless.samples.iter().map(|s| s.pfc_pauses).sum();
    assert_eq!(per_window, lossless.pfc_pauses);
    assert!(lossless.queue_bytes_max <= 2 << 20);
    assert_eq!(lossless.pause_watchdog_trips, 0);
}

#[test]
fn an_incast_is_drawn_as_a_png() {
    let report = run_incast(&IncastConfig {
        flows: 2,
        duration_ns: 1_000_000,
        window_ns: 100_000,
        ..IncastConfig::default()
    })
    .unwrap();
    let path = std::env::temp_dir().join(format!("rocenic-plot-{}.png", std::process::id()));
    rocenic_sim::plot::plot_incast(&report, "2 flows", &path).unwrap();
    let png = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: width and height, big-endian, after the chunk's length and type.
    assert_eq!(&png[12..16], b"IHDR");
    let word = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((word(16), word(20)), (1200, 800));
    // Lines and labels, not a blank canvas (a white 1200 x 800 PNG
    // compresses to a few kilobytes).
    assert!(png.len() > 50_000, "{} bytes", png.len());
}
