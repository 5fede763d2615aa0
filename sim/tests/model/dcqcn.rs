//! DCQCN end to end on the reference model: flows into one 100 GbE
//! bottleneck share it fairly and keep it busy.

use rocenic_sim::incast::{run_incast, IncastConfig};

fn check(flows: usize, seed: u64) {
    let config = IncastConfig {
        flows,
        seed,
        ..IncastConfig::default()
    };
    let duration_ns = config.duration_ns;
    let report = run_incast(&config).unwrap();
    let converged = report
        .convergence_ns
        .unwrap_or_else(|| panic!("{flows} flows never converged: {report:#?}"));
    // Enough windows after convergence to make the averages meaningful.
    assert!(
        converged <= duration_ns / 2,
        "{flows} flows converged late, at {converged} ns"
    );
    assert!(
        report.jain_after_convergence >= 0.98,
        "{flows} flows: Jain {} {:?}",
        report.jain_after_convergence,
        report.flow_gbps_after_convergence
    );
    assert!(
        report.utilisation_after_convergence >= 0.95,
        "{flows} flows: utilisation {}",
        report.utilisation_after_convergence
    );
    // The congestion control loop really ran.
    assert!(report.ecn_marked > 0 && report.cnps_sent > 0 && report.cnps_received > 0);
    assert_eq!(report.cnps_sent, report.cnps_received);
}

// With the paper's parameters (R_AI = 40 Mb/s) recovery from the first
// cuts is slow at 100 Gb/s: convergence takes 15 to 76 ms depending on the
// seed (`rocenic dcqcn --seed N` shows the timeline).
#[test]
fn two_flows_share_a_bottleneck_fairly() {
    for seed in [1, 3] {
        check(2, seed);
    }
}

#[test]
fn eight_flows_share_a_bottleneck_fairly() {
    for seed in [1, 3] {
        check(8, seed);
    }
}
