//! One finished trial as the store's row: parameters, placement, results, samples,
//! the firewall's report, the headline columns and seed 000's per-client rows.

//! The controller's run loop: plan → trials → store, with progress, ETA and a clean
//! stop on Ctrl-C (the running trial is abandoned, finished ones are kept).

use crate::outcome::Outcome;
use crate::params::workload::Workload;
use crate::plan::scenario::PlannedTrial;
use store::{EchoClientRow, Headline, TrialRecord};

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
    rec.firewall = o.firewall().map(|f| store::FirewallRow {
        engine: f.engine.to_string(),
        rules: f.rules as u64,
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
    let us = |ns: u64| Some(ns as f64 / 1e3);
    if let Some(s) = &o.packet {
        rec.headline = Headline {
            duration_s: Some(s.elapsed_s),
            throughput_bps: Some(s.received_bps),
            lost: Some(s.lost),
            offered_pps: Some(s.offered_pps),
            sent_pps: Some(s.sent_pps),
            received_pps: Some(s.received_pps),
            loss_ratio: Some(s.loss_ratio),
            owd_p50_us: (s.owd.count > 0).then(|| s.owd.p50_ns as f64 / 1e3),
            jitter_us: (s.owd.count > 0).then_some(s.jitter_ns / 1e3),
            validation_errors: Some(s.duplicates),
            ..Default::default()
        };
    }
    if let Some(s) = &o.search {
        rec.headline.received_pps = s.value().filter(|_| t.params.workload == Workload::Ndr);
        rec.headline.loss_ratio = t.params.search.as_ref().map(|sp| sp.loss);
    }
    if let Some(c) = &o.conn {
        // Connection workloads: sessions are the transactions, their durations the "RTT".
        rec.headline = Headline {
            duration_s: Some(c.elapsed_s),
            throughput_bps: Some(c.goodput_bps),
            transactions_per_s: Some(c.sessions_per_s),
            rtt_p50_us: us(c.session.p50_ns),
            rtt_p90_us: us(c.session.p90_ns),
            rtt_p99_us: us(c.session.p99_ns),
            rtt_max_us: us(c.session.max_ns),
            validation_errors: Some(c.corrupt),
            lost: Some(c.failed),
            ..Default::default()
        };
    }
    if let Some(s) = &o.ping {
        rec.headline = Headline {
            duration_s: Some(s.elapsed_s),
            transactions_per_s: Some(s.received as f64 / s.elapsed_s.max(1e-9)),
            rtt_p50_us: us(s.rtt.p50_ns),
            rtt_p90_us: us(s.rtt.p90_ns),
            rtt_p99_us: us(s.rtt.p99_ns),
            rtt_p999_us: us(s.rtt.p999_ns),
            rtt_max_us: us(s.rtt.max_ns),
            validation_errors: Some(s.invalid),
            lost: Some(s.lost),
            loss_ratio: Some(if s.sent == 0 {
                0.0
            } else {
                s.lost as f64 / s.sent as f64
            }),
            ..Default::default()
        };
    }
    if let Some(s) = &o.summary {
        rec.headline = Headline {
            duration_s: Some(s.elapsed_s),
            throughput_bps: Some(s.throughput_bps),
            transactions_per_s: Some(s.transactions_per_s),
            rtt_p50_us: us(s.rtt.p50_ns),
            rtt_p90_us: us(s.rtt.p90_ns),
            rtt_p99_us: us(s.rtt.p99_ns),
            rtt_p999_us: us(s.rtt.p999_ns),
            rtt_max_us: us(s.rtt.max_ns),
            validation_errors: Some(s.validation_errors),
            unsent: Some(s.unsent),
            lost: Some(s.lost),
            ..Default::default()
        };
        rec.echo_clients = s
            .clients
            .iter()
            .map(|c| {
                let mut v = c.validation_client;
                v.merge(&c.validation_server);
                let r = c.rtt;
                let f = |ns: u64| ns as f64 / 1e3;
                EchoClientRow {
                    client: c.client,
                    source: c.source.clone(),
                    mp: c.mp.map(|m| (m.frames, m.bytes)),
                    unsent_client: c.unsent_client,
                    unsent_server: c.unsent_server,
                    lost: c.lost,
                    validation: [
                        v.malformed,
                        v.wrong_client,
                        v.wrong_size,
                        v.gaps,
                        v.duplicates,
                        v.reordered,
                    ],
                    throughput_bps: c.throughput_bps,
                    transactions_per_s: c.transactions_per_s,
                    rtt_us: (r.count > 0).then(|| {
                        [
                            f(r.p50_ns),
                            f(r.p90_ns),
                            f(r.p99_ns),
                            f(r.p999_ns),
                            f(r.max_ns),
                        ]
                    }),
                    error: c.error.clone(),
                }
            })
            .collect();
    }
    rec
}
