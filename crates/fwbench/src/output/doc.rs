//! The one JSON shape of a trial, for every workload and search: `--json` of a trial
//! command, each line of `run --json`. The JSON Schema in `docs/schema/trial.json` is
//! generated from these types (`fwbench schema`, checked by a test).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

/// Version of the trial shape (`schema` = `fwbench/<workload>/<TRIAL_VERSION>`).
/// 2: echo's figures moved under `result` and its parameters under `params` (as every
/// other workload's); searches too; `rules` became `rules_installed`; `fwbench` added.
pub const TRIAL_VERSION: u32 = 2;

/// The binary that produced an output.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BuildInfo {
    /// Crate version, e.g. `0.1.0`.
    pub version: String,
    /// Git commit (`+dirty`: built with uncommitted changes; `unknown`: built without git).
    pub commit: String,
    /// Build date, UTC, `YYYY-MM-DD`.
    pub build_date: String,
}

impl BuildInfo {
    pub fn this() -> BuildInfo {
        BuildInfo {
            version: crate::version::PKG.into(),
            commit: crate::version::COMMIT.into(),
            build_date: crate::version::BUILD_DATE.into(),
        }
    }
}

/// One trial (or one search) and what it gave.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(title = "fwbench trial")]
pub struct TrialDoc {
    /// `fwbench/<workload>/<version>`: scripts check it before reading.
    #[schemars(regex(pattern = r"^fwbench/[a-z]+(-[a-z]+)*/[0-9]+$"))]
    pub schema: String,
    pub fwbench: BuildInfo,
    /// echo, flood, flow, ping, newflows, ndr, ndr-newflows, mlr, degrade, sessions, bulk,
    /// http or connections.
    pub workload: String,
    /// ok; flagged (it ran, but a figure's witness does not hold: `doubts` and `error`
    /// say why, and no finding is made from it); dropped (the imported ruleset dropped
    /// the traffic); unavailable (a tool or kernel feature is missing: `error` says
    /// which); failed (`error` says why).
    pub status: crate::outcome::Status,
    pub error: Option<String>,
    /// Why some figures may not be believed (empty when every witness holds).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[serde(default)]
    pub doubts: Vec<results::Doubt>,
    /// `run --json`: the trial's stable key and repetition (as in results.db).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trial_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rep: Option<u32>,
    /// Every parameter of the trial, canonical (e.g. a rate in bits/s or packets/s), as
    /// stored in results.db `trials.params`.
    pub params: Map<String, Value>,
    /// UTC, RFC 3339 (searches: of the whole search).
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Where each role ran: place (namespace or host), CPUs asked for and used, pid.
    pub placement: Vec<Map<String, Value>>,
    /// Adaptive trials (`--until-ci`): the precision asked for and reached.
    pub precision: Option<Value>,
    /// The workload's figures (null when the trial did not run): echo — throughput,
    /// transactions, RTT, per-client counters; flood/flow — offered/sent/received
    /// packets/s, loss, one-way delay; ping — RTT; sessions/bulk/http/connections —
    /// sessions/s, goodput, durations; ndr/mlr/degrade/auto parallelism — the search's
    /// answer and every step (`search` names which).
    pub result: Option<Map<String, Value>>,
    /// Rules the gateway actually installed (fillers + the matching rule + policy
    /// plumbing; 2 for an nft set of any size). The number asked for is `params.rules`.
    pub rules_installed: u64,
    /// Elements of the set (nft-set, ipset engines).
    pub set_elements: u64,
    pub install_ms: Option<f64>,
    pub remove_ms: Option<f64>,
    /// Whether the installed rules judged known packets as the model says.
    pub verdicts: Option<Value>,
    /// The engine's settings as applied (table family, chain, hook …).
    pub firewall_settings: Option<Value>,
    /// Whether the gateway started in the testbed's first state (only when it reported it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clean_start: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[serde(default)]
    pub start_differences: Vec<String>,
    /// The gateway's own report: interface and netfilter counters, conntrack, rule set.
    pub gateway: Option<Value>,
}

/// The last line of `run --json`: the run as a whole.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(title = "fwbench run summary")]
pub struct RunSummaryDoc {
    /// `fwbench/run/<version>`.
    pub schema: String,
    pub fwbench: BuildInfo,
    /// The scenario's name.
    pub run: String,
    /// Run id in the results database.
    pub run_id: i64,
    pub db: String,
    /// complete, interrupted or failed (10 failed trials in a row).
    pub status: String,
    /// Trials planned in this invocation (a resumed run: those still to do).
    pub planned: usize,
    pub ok: usize,
    /// Trials that ran but carry a doubt over a figure (see each trial's `doubts`).
    pub flagged: usize,
    pub unavailable: usize,
    pub failed: usize,
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The JSON Schema of every output shape, by file name (written to docs/schema/).
pub fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "trial.json",
            serde_json::to_value(schemars::schema_for!(TrialDoc)).unwrap(),
        ),
        (
            "run-summary.json",
            serde_json::to_value(schemars::schema_for!(RunSummaryDoc)).unwrap(),
        ),
    ]
}

impl TrialDoc {
    pub fn new(p: &crate::params::TrialParams, o: &crate::outcome::Outcome) -> TrialDoc {
        let s = |x: Option<Value>| x.map(object);
        let result = (o.figures.as_ref())
            .and_then(|f| f.summary().json())
            .or_else(|| o.search.as_ref().and_then(|x| serde_json::to_value(x).ok()));
        let f = o.firewall();
        let f = f.as_ref();
        TrialDoc {
            schema: format!("fwbench/{}/{TRIAL_VERSION}", p.name()),
            fwbench: BuildInfo::this(),
            workload: p.name().to_string(),
            status: o.status,
            doubts: o.doubts.clone(),
            error: o.error.clone(),
            trial_key: None,
            rep: None,
            params: object(serde_json::to_value(p).unwrap_or_default()),
            started_at: Some(o.started_at.clone()),
            finished_at: Some(o.finished_at.clone()),
            placement: o
                .placement
                .iter()
                .filter_map(|r| serde_json::to_value(r).ok())
                .map(object)
                .collect(),
            precision: o
                .precision
                .as_ref()
                .and_then(|x| serde_json::to_value(x).ok()),
            result: s(result),
            rules_installed: f.map_or(0, |f| f.rules as u64),
            set_elements: f.map_or(0, |f| f.elements as u64),
            install_ms: f.map(|f| f.install_ms),
            remove_ms: f.and_then(|f| f.remove_ms),
            verdicts: f.and_then(|f| serde_json::to_value(&f.verdicts).ok()),
            firewall_settings: f.and_then(|f| serde_json::to_value(&f.settings).ok()),
            clean_start: o.clean_start,
            start_differences: o.start_differences.clone(),
            gateway: o
                .gateway
                .as_ref()
                .and_then(|g| serde_json::to_value(g).ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/schema/*.json are what the types generate: a change of the shape shows up
    /// as a diff there. `FWBENCH_WRITE_SCHEMA=1 cargo test -p fwbench schema_files`
    /// rewrites them.
    #[test]
    fn schema_files_are_current() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema");
        let write = std::env::var_os("FWBENCH_WRITE_SCHEMA").is_some();
        for (name, schema) in schemas() {
            let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
            let path = dir.join(name);
            if write {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &text).unwrap();
            }
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                on_disk == text,
                "{} is out of date: FWBENCH_WRITE_SCHEMA=1 cargo test -p fwbench schema_files",
                path.display()
            );
        }
    }

    /// The schema describes the objects: required keys, the status enum, the version.
    #[test]
    fn trial_schema_names_every_key() {
        let s = schemas().remove(0).1;
        let props = s["properties"].as_object().unwrap();
        for k in [
            "schema",
            "fwbench",
            "params",
            "result",
            "verdicts",
            "gateway",
            "rules_installed",
        ] {
            assert!(props.contains_key(k), "{k} missing from {s}");
        }
        let required: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(required.contains(&"params") && required.contains(&"status"));
        assert!(!required.contains(&"trial_key"), "only run --json has it");
    }
}
