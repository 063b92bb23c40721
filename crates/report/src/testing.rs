//! Builders shared by this crate's unit tests (compiled for tests only): a stored trial
//! row and a cost fit, with what the tests do not look at left neutral.

use crate::figure::CostEstimate;
use crate::figure::CostFit;
use crate::model::Config;
use std::collections::BTreeMap;
use store::{KindRow, RunRow, TrialRow};

/// A complete run `id` with nothing else said about it.
pub(crate) fn run_row(id: i64) -> RunRow {
    RunRow {
        id,
        started_at: String::new(),
        finished_at: None,
        scenario: String::new(),
        scenario_text: None,
        seed: 0,
        command: String::new(),
        status: "complete".into(),
        ended_why: None,
        baseline: None,
        host: Default::default(),
        role_hosts: vec![],
        tags: vec![],
    }
}

/// An ok trial `id` of `workload` in run 1, with empty parameters, headline and results.
pub(crate) fn trial_row(id: i64, workload: &str) -> TrialRow {
    TrialRow {
        id,
        run_id: 1,
        trial_key: format!("k{id}"),
        rep: 1,
        workload: workload.into(),
        status: "ok".into(),
        error: None,
        params: serde_json::json!({}),
        headline: Default::default(),
        started_at: String::new(),
        finished_at: String::new(),
        engine: None,
        firewall: None,
        results: serde_json::Value::Null,
        kind: None,
    }
}

/// The kind of a trial of `family` whose main metric, `metric`, is better higher.
pub(crate) fn kind_row(family: &str, metric: &str) -> Option<KindRow> {
    Some(KindRow {
        family: family.into(),
        main_metric: Some(metric.into()),
        main_higher: true,
    })
}

/// An empty configuration (no trials) of `workload` on `engine` (kind `none` for the
/// engine none, else `nft`) whose flattened parameters are `flat`, with null
/// parameters and no label.
pub(crate) fn config(
    key: String,
    workload: &str,
    engine: &str,
    flat: BTreeMap<String, String>,
) -> Config {
    let engine = store::EngineRow {
        id: engine.into(),
        kind: if engine == "none" { "none" } else { "nft" }.into(),
    };
    Config {
        flat,
        label: None,
        ..Config::new(key, serde_json::Value::Null, workload.into(), Some(engine))
    }
}

/// The fit of `series` over five rule counts from one estimate, without knee or
/// degradation point.
pub(crate) fn cost_fit(series: &str, e: CostEstimate) -> CostFit {
    CostFit {
        series: series.into(),
        rule_counts: 5,
        fit: e.fit.line,
        estimator: e.estimator,
        estimates: vec![e],
        knee_rules: None,
        knee: None,
        degradation: None,
    }
}
