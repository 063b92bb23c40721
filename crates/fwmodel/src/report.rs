//! What the gateway reports about its rule set after a trial: engine, rules and set
//! elements installed, install and removal times, the verdict counters, and the
//! settings that change what a rule costs (table family, hooks, counters, …).
//!
//! Owns: [`Report`], [`Verdicts`] (with [`RuleHit`], [`Dropped`]) and [`Settings`], as
//! data. Their serde names are the wire's and the keys of stored and `--json` output.
//! Must not: decide anything about the trial (the controller does) or read counters
//! (`firewall::report::stop` builds the report on the gateway).

use crate::model::Engine;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub engine: Engine,
    /// Rules in fwbench's own chains, read back after installing.
    pub rules: usize,
    /// Elements over all of fwbench's sets, read back after installing.
    pub elements: usize,
    pub install_ms: f64,
    /// `None` when removal failed (see `remove_error`).
    pub remove_ms: Option<f64>,
    pub remove_error: Option<String>,
    /// `None` when the counters could not be read (see `verdicts_error`).
    pub verdicts: Option<Verdicts>,
    pub verdicts_error: Option<String>,
    /// The engine's hidden choices (reports of older builds have none).
    #[serde(default, skip_serializing_if = "Settings::is_empty")]
    pub settings: Settings,
}

impl Report {
    /// Whether the verdict check passed (`None`: no verdicts were read).
    pub fn verdicts_ok(&self) -> Option<bool> {
        self.verdicts.as_ref().map(|v| v.ok)
    }
}

/// What the counters say about the trial's traffic versus what the model expects.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdicts {
    /// Packets counted by rules that match the test traffic.
    pub matched_packets: u64,
    /// Match rules that saw no packet (expected: 0).
    pub idle_match_rules: usize,
    /// Packets counted by filler rules (expected: 0).
    pub filler_packets: u64,
    /// Packets dropped by a drop policy (expected: 0 for the study's models).
    pub policy_drops: u64,
    /// Packets counted by the rule whose set gateway events added elements to (the
    /// marker flow's, once its element is in: the events' doing, not a filler's).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub event_packets: u64,
    pub ok: bool,
    pub problems: Vec<String>,
    /// Imported rulesets: every rule with its packet counter, in chain order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleHit>,
    /// Imported rulesets: the rule with a final verdict (accept, drop, reject) that
    /// counted the most packets, e.g. `INPUT:3 (-A INPUT -p tcp … -j ACCEPT): 1000 packets`.
    pub took: Option<String>,
    /// Imported rulesets: packets dropped or rejected by the user's rules or policies.
    pub dropped: Option<Dropped>,
}

/// One imported rule after a trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleHit {
    /// The user's chain name.
    pub chain: String,
    /// 1-based position in the chain.
    pub index: usize,
    pub text: String,
    pub packets: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub policy: bool,
}

/// Packets the user's ruleset dropped, and by what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    pub packets: u64,
    /// e.g. `the policy of chain INPUT`, or `rule INPUT:7 (…)`, joined by `, `.
    pub by: String,
}

/// The hidden choices of a rendered rule set that change what a rule costs: which
/// table (an nft `inet` table checks the protocol family before every address match),
/// where the chains hook in and at what priority, whether rules count packets, the
/// base policy, what sets are made of. Text values, one line each, for people; empty
/// fields are left out (engine none has none).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    pub table: Option<String>,
    pub chain: Option<String>,
    pub hook: Option<String>,
    pub priority: Option<String>,
    pub counters: Option<String>,
    pub policy: Option<String>,
    pub sets: Option<String>,
}

impl Settings {
    /// Nothing recorded.
    pub fn is_empty(&self) -> bool {
        self.fields().is_empty()
    }

    /// (name, value) of every recorded choice, in a fixed order.
    pub fn fields(&self) -> Vec<(&'static str, &str)> {
        [
            ("table", &self.table),
            ("chain", &self.chain),
            ("hook", &self.hook),
            ("priority", &self.priority),
            ("counters", &self.counters),
            ("policy", &self.policy),
            ("sets", &self.sets),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.as_deref()?)))
        .collect()
    }

    /// One line: `table inet fwbench; hook forward; …` (empty when nothing is recorded).
    pub fn to_line(&self) -> String {
        self.fields()
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_keys_are_the_stored_keys() {
        let r = Report {
            engine: Engine::IpsetNft,
            rules: 3,
            elements: 2,
            install_ms: 1.5,
            remove_ms: None,
            remove_error: Some("gone".into()),
            verdicts: Some(Verdicts {
                ok: true,
                ..Verdicts::default()
            }),
            verdicts_error: None,
            settings: Settings {
                table: Some("filter (nft)".into()),
                counters: Some("per rule (xtables always counts)".into()),
                ..Settings::default()
            },
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "engine": "ipset-nft",
                "rules": 3,
                "elements": 2,
                "install_ms": 1.5,
                "remove_ms": null,
                "remove_error": "gone",
                "verdicts": {
                    "matched_packets": 0,
                    "idle_match_rules": 0,
                    "filler_packets": 0,
                    "policy_drops": 0,
                    "ok": true,
                    "problems": [],
                },
                "verdicts_error": null,
                "settings": {"table": "filter (nft)", "counters": "per rule (xtables always counts)"},
            })
        );
        assert_eq!(serde_json::from_value::<Report>(v.clone()).unwrap(), r);
        // A report of an older build (no settings) still reads.
        let mut old = v.clone();
        old.as_object_mut().unwrap().remove("settings");
        assert!(serde_json::from_value::<Report>(old)
            .unwrap()
            .settings
            .is_empty());
    }
}
