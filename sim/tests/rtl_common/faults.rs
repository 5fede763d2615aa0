//! The lossy link of the scenario and trace tests (model, block and NIC
//! tiers alike, so the model tier includes this file on its own).

use rocenic_fabric::FaultConfig;

/// Frames lost with probability `loss`, duplicated and reordered each
/// half as often, reordered frames held back 3 us; no corruption.
pub fn lossy(loss: f64) -> FaultConfig {
    FaultConfig {
        loss,
        duplicate: loss / 2.0,
        reorder: loss / 2.0,
        reorder_delay_ns: 3_000,
        ..FaultConfig::default()
    }
}
