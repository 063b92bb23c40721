//! What the gateway reports about its rule set after a trial: engine, rules and set
//! elements installed, install and removal times, the verdict counters, and the
//! settings that change what a rule costs (table family, hooks, counters, …).
//!
//! Owns: [`Report`], built once on the gateway ([`Report::stop`]) and converted to and
//! from the wire in one place each (`proto` carries it as JSON, since `proto` cannot
//! depend on this crate). Its serde names are the keys of stored and `--json` output.
//! Must not: decide anything about the trial (the controller does).

use crate::install::{verdicts, Installed, Verdicts};
use crate::model::Engine;
use crate::rendered::Settings;
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
    /// Read the verdict counters, then remove the rules (timed).
    pub fn stop(inst: Installed) -> Report {
        let verdicts = verdicts(&inst.rendered);
        let settings = inst.rendered.settings.clone();
        let (engine, rules, elements, install_ms) = (
            inst.rendered.engine,
            inst.rules,
            inst.elements,
            inst.install_ms,
        );
        let removed = inst.remove();
        Report {
            engine,
            rules,
            elements,
            install_ms,
            remove_ms: removed.as_ref().ok().copied(),
            remove_error: removed.as_ref().err().map(|e| e.to_string()),
            verdicts: verdicts.as_ref().ok().cloned(),
            verdicts_error: verdicts.as_ref().err().map(|e| e.to_string()),
            settings,
        }
    }

    /// Whether the verdict check passed (`None`: no verdicts were read).
    pub fn verdicts_ok(&self) -> Option<bool> {
        self.verdicts.as_ref().map(|v| v.ok)
    }

    /// The report as `proto::GatewayResults::firewall` carries it.
    pub fn to_wire(&self) -> serde_json::Value {
        // INVARIANT: plain data with string keys; serializing it cannot fail.
        serde_json::to_value(self).expect("a firewall report serializes")
    }

    /// The report from `proto::GatewayResults::firewall`.
    pub fn from_wire(v: &serde_json::Value) -> Result<Report, serde_json::Error> {
        Report::deserialize(v)
    }
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
        let v = r.to_wire();
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
        assert_eq!(Report::from_wire(&v).unwrap(), r);
        // A report of an older build (no settings) still reads.
        let mut old = v.clone();
        old.as_object_mut().unwrap().remove("settings");
        assert!(Report::from_wire(&old).unwrap().settings.is_empty());
    }
}
