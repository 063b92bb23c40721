//! One finished trial as the store's row: parameters, placement, results, samples,
//! the firewall's report, the headline columns and seed 000's per-client rows.

use crate::outcome::Outcome;
use crate::params::search::Search;
use crate::params::TrialParams;
use crate::plan::scenario::PlannedTrial;
use store::TrialRecord;

pub fn record(run_id: i64, t: &PlannedTrial, o: &Outcome) -> TrialRecord {
    let mut rec = TrialRecord {
        run_id,
        trial_key: t.key.clone(),
        rep: t.rep,
        workload: t.params.name().into(),
        status: o.status.as_str().into(),
        error: o.error.clone(),
        started_at: o.started_at.clone(),
        finished_at: o.finished_at.clone(),
        params: serde_json::to_value(&t.params).unwrap_or_default(),
        placement: serde_json::to_value(&o.placement).unwrap_or_default(),
        results: serde_json::to_value(o).unwrap_or_default(),
        samples: o
            .samples
            .iter()
            .map(|s| store::SampleRow {
                role: s.role.to_string(),
                t_s: s.sample.t_s,
                metric: s.sample.metric.clone(),
                value: s.sample.value,
            })
            .collect(),
        ..Default::default()
    };
    rec.engine = Some(store::EngineRow::of(firewall::EffectiveEngine::new(
        t.params.engine,
        t.params.nft_family,
    )));
    rec.updates = o
        .figures
        .as_ref()
        .and_then(|f| f.events())
        .map(crate::workloads::events::records)
        .unwrap_or_default();
    rec.firewall = o.firewall().map(|f| store::FirewallRow {
        engine: f.engine.to_string(),
        rules_installed: f.rules as u64,
        set_elements: f.elements as u64,
        install_ms: Some(f.install_ms),
        remove_ms: f.remove_ms,
        verdicts_ok: f.verdicts_ok(),
        verdict_problems: f
            .verdicts
            .as_ref()
            .filter(|v| !v.problems.is_empty())
            .map(|v| v.problems.join("; ")),
    });
    // The headline columns: each workload says what its figures mean there.
    if let Some(f) = &o.figures {
        rec.headline = f.headline();
        if let Some(s) = f.echo() {
            rec.echo_clients = s.client_rows();
        }
    }
    rec.kind = Some(kind_row(&t.params));
    if let Some(s) = &o.search {
        rec.headline.received_pps = s
            .value()
            .filter(|_| matches!(t.params.search, Some(Search::Ndr(_) | Search::Mlr(_))));
        rec.headline.loss_ratio = t.params.search_params().map(|sp| sp.loss);
    }
    rec
}

/// A search's step as the store's row: [`record`], marked with what it was a step of
/// (`results.step_of`), so that readers take its rate for a probe of that search, not a
/// measure of a configuration asked for.
pub fn record_step(run_id: i64, t: &PlannedTrial, o: &Outcome, of: results::StepOf) -> TrialRecord {
    let mut rec = record(run_id, t, o);
    if let (Some(m), Ok(v)) = (rec.results.as_object_mut(), serde_json::to_value(of)) {
        m.insert("step_of".into(), v);
    }
    rec
}

/// What the trial's kind says about its row: family and main metric (none for an ndr
/// or degrade search, whose result is the search's).
pub fn kind_row(p: &TrialParams) -> store::KindRow {
    let traffic = crate::workloads::traffic(&p.kind);
    let main = traffic.main_metric();
    let ranked = match &p.search {
        None | Some(Search::SweetSpot) => true,
        Some(Search::Ndr(_) | Search::Degrade(_) | Search::Mlr(_) | Search::Envelope(_)) => false,
    };
    store::KindRow {
        family: traffic.family().into(),
        main_metric: ranked.then(|| main.name.into()),
        main_higher: main.higher,
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
