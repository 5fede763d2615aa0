//! `rocenic dcqcn --backend rtl`: DCQCN end to end on Verilated cores.
//! Every NIC is `nic_core` behind its shadow model (a difference fails the
//! run): the receiver's notification point answers the switch's CE marks
//! with CNPs, each sender's reaction point cuts its QP's rate and the
//! pacing gate holds it there, and the senders' pause taps take the
//! switch's PFC frames. The model runs the same incast beside it.

use rocenic_fabric::{EcnConfig, PfcConfig};
use rocenic_model::dcqcn::DcqcnConfig;
use rocenic_sim::incast::{run_incast_backend, IncastBackend, IncastConfig, IncastReport, Sample};

fn run(backend: IncastBackend, config: &IncastConfig) -> IncastReport {
    run_incast_backend(backend, config).unwrap()
}

/// Two flows into one 100 GbE bottleneck for 3 ms with the default
/// parameters: the RTL cores keep the link busy from the second
/// millisecond on, lose nothing, and cut about as often as the model.
#[test]
fn two_rtl_senders_share_a_bottleneck_as_the_model_does() {
    let config = IncastConfig {
        flows: 2,
        duration_ns: 3_000_000,
        ..IncastConfig::default()
    };
    let rtl = run(IncastBackend::Rtl, &config);
    // The model runs longer: its rates from 1 ms are averaged over 9
    // windows, not 2 (its own 2 ms sums of cuts range from 50 to 68).
    let model = run(
        IncastBackend::Model,
        &IncastConfig {
            duration_ns: 10_000_000,
            ..config.clone()
        },
    );
    assert_eq!(rtl.backend, "rtl");
    // The RTL run reports its length in core cycles and its speed; the
    // model's run has no cycles.
    assert_eq!(rtl.cycles, Some(config.duration_ns / 4));
    assert!(rtl.cycles_per_second.is_some_and(|c| c > 0.0));
    assert_eq!((model.cycles, model.cycles_per_second), (None, None));
    for (r, m) in rtl.samples.iter().zip(&model.samples).skip(1) {
        assert!(
            r.utilisation >= 0.90,
            "{:.1} % busy at {} ms (model {:.1} %)",
            r.utilisation * 100.0,
            r.start_ns / 1_000_000,
            m.utilisation * 100.0
        );
    }
    assert_eq!(rtl.samples.iter().map(|s| s.drops).sum::<u64>(), 0);
    assert_eq!((rtl.retransmitted_frames, rtl.pfc_pauses), (0, 0));
    // The loop ran on the cores: the switch marked, the receiver's core
    // sent CNPs, the senders' cores took them and cut.
    assert!(rtl.ecn_marked > 0 && rtl.cnps_sent > 0 && rtl.rate_cuts > 0);
    assert!(rtl.cnps_sent - rtl.cnps_received <= config.flows as u64);
    // Past the start-up (whose first cuts go deeper on the model, which
    // then sees no mark for about a millisecond), the cores take CNPs and
    // cut about as often per millisecond as the model does, and the
    // per-window counts add up.
    let within_a_quarter = |a: f64, b: f64| 4.0 * (a - b).abs() <= b;
    type Count = fn(&Sample) -> u64;
    let after_1ms = |r: &IncastReport, count: Count| -> f64 {
        let windows = &r.samples[1..];
        windows.iter().map(count).sum::<u64>() as f64 / windows.len() as f64
    };
    let (cnps, cuts): (Count, Count) = (|s| s.cnps_received, |s| s.rate_cuts);
    assert_eq!(rtl.samples.iter().map(cuts).sum::<u64>(), rtl.rate_cuts);
    assert_eq!(rtl.samples.iter().map(cnps).sum::<u64>(), rtl.cnps_received);
    for (what, count) in [("CNPs", cnps), ("rate cuts", cuts)] {
        let (r, m) = (after_1ms(&rtl, count), after_1ms(&model, count));
        assert!(
            within_a_quarter(r, m),
            "{what} per ms from 1 ms: RTL {r:.1}, model {m:.1}"
        );
    }
}

/// 16 senders each send 24 WRITEs of 4 KiB, 16 posted at a time (1 MiB
/// in flight), through a switch with a 640 KiB buffer. With PFC (XOFF 8 KiB per
/// ingress port, 32 KiB of headroom: 16 x 40 KiB fit) the cores take the
/// pauses and nothing is lost; without it the buffer overflows and the
/// cores recover by Go-Back-N, every WRITE completing either way.
const SHORT_MESSAGE_SENDERS: usize = 16;
const SHORT_MESSAGES: u64 = 24;

fn short_message_incast(pfc: bool) -> IncastReport {
    let config = IncastConfig {
        flows: SHORT_MESSAGE_SENDERS,
        duration_ns: 5_000_000,
        message_size: 4096,
        outstanding: 16,
        messages_per_flow: Some(SHORT_MESSAGES),
        buffer_bytes: 640 << 10,
        ecn: EcnConfig {
            kmin_bytes: 2_000,
            kmax_bytes: 6_000,
            pmax: 0.01,
            on_dequeue: false,
        },
        pfc: pfc.then(|| PfcConfig {
            xoff_bytes: 8 << 10,
            xon_bytes: 4 << 10,
            headroom_bytes: 32 << 10,
            ..PfcConfig::default()
        }),
        ..IncastConfig::default()
    };
    run(IncastBackend::Rtl, &config)
}

#[test]
fn a_short_message_incast_on_rtl_is_lossless_with_pfc_and_recovers_without() {
    let lossless = short_message_incast(true);
    assert_eq!(lossless.samples.iter().map(|s| s.drops).sum::<u64>(), 0);
    assert_eq!(lossless.retransmitted_frames, 0);
    assert_eq!(
        lossless.messages_completed,
        SHORT_MESSAGE_SENDERS as u64 * SHORT_MESSAGES
    );
    assert!(lossless.completion_ns.is_some());
    // The switch paused the senders and their cores took the pauses.
    assert!(lossless.pfc_pauses > 0 && lossless.rx_pause_frames > 0);
    assert_eq!(lossless.pause_watchdog_trips, 0);

    let lossy = short_message_incast(false);
    assert!(
        lossy.buffer_drops > 0 && lossy.retransmitted_frames > 0,
        "the burst must overflow the buffer without PFC: {} drops",
        lossy.buffer_drops
    );
    assert_eq!((lossy.pfc_pauses, lossy.rx_pause_frames), (0, 0));
    assert_eq!(
        lossy.messages_completed,
        SHORT_MESSAGE_SENDERS as u64 * SHORT_MESSAGES
    );
    assert!(lossy.completion_ns.is_some());
}

/// NVIDIA's set keeps Rt on a cut, which the core's reaction point does
/// not: the run is refused before it starts, with the reason.
#[test]
fn the_rtl_incast_refuses_parameters_its_reaction_point_lacks() {
    let config = IncastConfig {
        dcqcn: DcqcnConfig::nvidia(),
        ..IncastConfig::default()
    };
    let error = run_incast_backend(IncastBackend::Rtl, &config)
        .unwrap_err()
        .to_string();
    assert!(error.contains("clamp_target"), "{error}");
}
