//! Unit tests of `analysis`, beside `analysis.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;
use crate::model::configs;
use std::collections::BTreeMap;

#[test]
fn the_firewall_settings_column_says_the_gateways_text_settings() {
    let t = Trial::new(store::TrialRow {
        results: serde_json::json!({"gateway": {"firewall": {"settings":
            {"table": "inet fwbench", "hook": "forward", "counters": true}}}}),
        ..crate::testing::trial_row(1, "flood")
    });
    let cs = configs(&[t], &BTreeMap::new());
    assert_eq!(
        firewall_settings(&cs[0]).as_deref(),
        Some("hook forward; table inet fwbench")
    );
    // Without settings: none.
    let cs = configs(
        &[Trial::new(crate::testing::trial_row(2, "flood"))],
        &BTreeMap::new(),
    );
    assert_eq!(firewall_settings(&cs[0]), None);
}
