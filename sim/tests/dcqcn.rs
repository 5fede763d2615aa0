//! DCQCN end to end on the reference model: flows into one 100 GbE
//! bottleneck share it fairly and keep it busy.

use rocenic_sim::incast::{run_incast, IncastConfig};

fn check(flows: usize, duration_ns: u64) {
    let config = IncastConfig {
        flows,
        duration_ns,
        ..IncastConfig::default()
    };
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

#[test]
fn two_flows_share_a_bottleneck_fairly() {
    check(2, 20_000_000);
}

#[test]
fn eight_flows_share_a_bottleneck_fairly() {
    check(8, 20_000_000);
}
