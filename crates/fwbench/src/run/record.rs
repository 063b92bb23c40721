//! One finished trial as the store's row: parameters, placement, results, samples,
//! the firewall's report, the headline columns and seed 000's per-client rows.

use crate::outcome::Outcome;
use crate::params::workload::Workload;
use crate::plan::scenario::PlannedTrial;
use store::TrialRecord;

pub fn record(run_id: i64, t: &PlannedTrial, o: &Outcome) -> TrialRecord {
    let mut rec = TrialRecord {
        run_id,
        trial_key: t.key.clone(),
        rep: t.rep,
        workload: t.params.workload.as_str().into(),
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
            .map(|(role, s)| store::SampleRow {
                role: role.to_string(),
                t_s: s.t_s,
                metric: s.metric.clone(),
                value: s.value,
            })
            .collect(),
        ..Default::default()
    };
    rec.updates = o
        .packet
        .as_ref()
        .and_then(|p| p.events.as_ref())
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
    if let Some(s) = &o.packet {
        rec.headline = s.headline();
    }
    if let Some(s) = &o.search {
        rec.headline.received_pps = s.value().filter(|_| t.params.workload == Workload::Ndr);
        rec.headline.loss_ratio = t.params.search.as_ref().map(|sp| sp.loss);
    }
    if let Some(c) = &o.conn {
        rec.headline = c.headline();
    }
    if let Some(s) = &o.ping {
        rec.headline = s.headline();
    }
    if let Some(s) = &o.summary {
        rec.headline = s.headline();
        rec.echo_clients = s.client_rows();
    }
    rec
}
