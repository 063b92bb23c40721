//! Parameters of the searches made of trials (ndr/pdr over the offered rate, the
//! degradation point over the rule count).

use crate::params::TrialParams;
use proto::Rate;
use serde::{Deserialize, Serialize};

/// What a search looks for and when it stops (a scenario's `loss`, `precision`,
/// `max_rate`, `max_trials`, `max_rules`, `resolution`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchParams {
    /// Loss ratio still counted as a pass: 0 = NDR.
    pub loss: f64,
    /// ndr: stop when (hi − lo) ≤ precision · hi.
    pub precision: f64,
    /// ndr: upper bound; `None` = measure it with an unpaced flood.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<Rate>,
    /// ndr: most search trials (the confirmation not counted).
    pub max_trials: u32,
    /// degrade: largest rule count searched.
    pub max_rules: u32,
    /// degrade: stop when the bracket is this many rules wide.
    pub resolution: u32,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            loss: 0.0,
            precision: 0.02,
            max_rate: None,
            max_trials: 20,
            max_rules: 20_000,
            resolution: 250,
        }
    }
}

/// Check a degradation search's parameters (bad input).
pub fn check_degrade(p: &TrialParams, sp: &SearchParams) -> Result<(), String> {
    if p.engine == firewall::Engine::None {
        return Err(
            "degrade adds rules: choose an engine (iptables-legacy, iptables-nft, nft, …)".into(),
        );
    }
    if sp.max_rules == 0 {
        return Err("max_rules must be at least 1".into());
    }
    Ok(())
}
