//! A run's analysis, assembled: the configurations table, the labelled-cases table,
//! search outputs (ndr / degrade), then the throughput and connection analyses.
//!
//! Owns: `analyse` (the order figures and tables appear in) and the run-wide tables.
//! Must not: be imported by the modules below it; workload-specific figures belong in
//! `throughput` or `conn`.

use crate::figure::{mean_ci, num, Analysis, Figure, Options, Point, Series, Table};
use crate::model::Trial;
use crate::model::{is_sweet_spot, main_metric, search_of, Config};
use crate::series::{bar_figure, metric_label, param_text, varying};
use results::stored::{DelayStored, SearchKind, SearchStored};
use std::collections::BTreeSet;

/// Choose a run's figures, tables and fits from its configurations and trials.
pub fn analyse(configs: &[Config], trials: &[Trial], opts: &Options) -> Analysis {
    let mut a = Analysis::default();
    a.tables.push(config_table(configs));
    let ok: Vec<&Config> = configs.iter().filter(|c| !c.reps.is_empty()).collect();
    // A trial with gateway events measures them, not a rule set's cost: its rates and
    // losses hold the experiment — the marker's packets (or echoes) the update's rule
    // drops on purpose (a third of rules-under-load's flows), a reload's stall — and
    // repeated adds or deletions (`--event-rate`, a trace, an envelope's steps) leave it
    // no one installed size. It is no point of a cost per rule, an engine comparison
    // or a rate figure: the events' own findings, figures and table read it
    // (`updates`), and a finding says so. Nor is it a labelled case's or a NAT block's
    // rate.
    let evented = |c: &&Config| {
        (c.workload.is_echo() || c.workload.is_stream())
            && c.flat
                .keys()
                .any(|k| k.starts_with("packet.events.") || k.starts_with("events."))
    };
    let events = ok.iter().filter(|c| evented(c)).count();
    // A search's steps (a bisection's guesses, a ceiling probe: rates at 1000 and
    // 20 000 rules of enforcement.toml's capacity searches read "2.316 ns per rule"
    // and a dozen series, one per guessed rate) probe the search; its own row states
    // its answer.
    // (Connection steps — a sweet spot's — are the connection tables' to read.)
    let step = |c: &&Config| !c.workload.is_conn() && c.step_of().is_some();
    // Counted once: an envelope's steps carry events, said as such above.
    let steps: Vec<results::StepOf> = ok
        .iter()
        .filter(|c| step(c) && !evented(c))
        .filter_map(|c| c.step_of())
        .collect();
    let ok: Vec<&Config> = ok
        .iter()
        .copied()
        .filter(|c| !evented(c) && !step(c))
        .collect();
    if !steps.is_empty() {
        let of = |k: results::StepOf| steps.iter().filter(|s| **s == k).count();
        let what: Vec<String> = [
            (
                results::StepOf::Capacity,
                "the capacity searches of --load / event_load",
            ),
            (results::StepOf::Search, "searches asked for"),
        ]
        .into_iter()
        .filter(|(k, _)| of(*k) > 0)
        .map(|(k, name)| format!("{name} ({} configurations)", of(k)))
        .collect();
        a.findings.push(format!(
            "Search steps: {} packet configuration(s) were steps of {} and are left out of \
             the cost per rule, the advantage ratios, the rate figures and the cases', NAT \
             and new-flow findings — their rates probe a search (its guesses, a ceiling, \
             confirmations, latency steps), they measure no configuration asked for; the \
             searches' own rows state their answers.",
            steps.len(),
            what.join(" and ")
        ));
    }
    let echo: Vec<&Config> = ok
        .iter()
        .copied()
        .filter(|c| c.workload.is_echo())
        .collect();
    let packet: Vec<&Config> = ok
        .iter()
        .copied()
        .filter(|c| c.workload.is_stream())
        .collect();
    if events > 0 {
        a.findings.push(format!(
            "Gateway events: {events} flood, flow or echo configuration(s) with updates are \
             left out of the cost per rule, the advantage ratios, the rate figures and the \
             cases' and NAT tables — their rates and losses hold the experiment (the \
             marker's packets the update's rule drops on purpose, the stalls); the updates' \
             findings, figures and table read them."
        ));
    }
    let searched = trials
        .iter()
        .any(|t| search_of(t).is_some_and(|s| !is_sweet_spot(s)));
    crate::echo::figures(&echo, &mut a);
    crate::throughput::packet_figures(&packet, !searched, opts, &mut a);
    // Connection workloads have tables of their own (seed 003's, A/B, held connections).
    let not_conn: Vec<&Config> = ok
        .iter()
        .copied()
        .filter(|c| !c.workload.is_conn())
        .collect();
    label_table(&not_conn, &mut a);
    search_outputs(trials, &mut a);
    crate::conn::analyse(configs, trials, &mut a);
    crate::nat::analyse(&ok, &mut a);
    crate::worklang::analyse(trials, &mut a);
    a
}

/// Seed 001-style table of labelled cases: mean ± CI of the main metric and the cost
/// against the baseline row (or the best row), plus a bar chart of it.
fn label_table(ok: &[&Config], a: &mut Analysis) {
    let labelled: Vec<&Config> = ok.iter().copied().filter(|c| c.label.is_some()).collect();
    let Some((m, higher)) = labelled.first().and_then(|c| main_metric(c)) else {
        return;
    };
    // A label other rows share names none of them alone: rows are named by what
    // differs within it, alike in the finding, the tables and the figure.
    let namer = crate::series::Namer::new(&labelled);
    // A case whose every trial fwbench limited has no mean: said, not dropped in
    // silence (its rate is fwbench's, not the gateway's).
    let unmeasured: Vec<String> = labelled
        .iter()
        .filter(|c| c.mean(m).is_none() && c.limited_throughout())
        .map(|c| namer.name(c))
        .collect();
    if !unmeasured.is_empty() {
        a.findings.push(format!(
            "No {} is stated for {}: fwbench's sender or sink limited every trial (their \
             rates are fwbench's limit, not the gateway's; see the run's warnings).",
            crate::series::metric_label(m),
            unmeasured.join(", ")
        ));
    }
    let labelled: Vec<&Config> = labelled
        .into_iter()
        .filter(|c| c.mean(m).is_some())
        .collect();
    let sectioned = crate::cases::sectioned(&labelled);
    if sectioned {
        crate::cases::sections(&labelled, &namer, (m, higher), a);
    }
    // The best among rows whose rate is a fair sample: one fwbench mostly limited (its
    // kept repetitions may be the slower ones) is no reference, nor best.
    let fair = |c: &&&Config| c.fair_sample();
    let candidates: Vec<&Config> = match labelled.iter().filter(fair).count() {
        0 => labelled.clone(),
        _ => labelled.iter().filter(fair).copied().collect(),
    };
    let best = candidates.iter().copied().reduce(|x, y| {
        let (p, q) = (x.mean(m).unwrap_or(f64::NAN), y.mean(m).unwrap_or(f64::NAN));
        if (p > q) == higher {
            x
        } else {
            y
        }
    });
    let base = labelled.iter().copied().find(|c| c.is_baseline);
    let Some(refc) = base.or(best) else {
        return;
    };
    let against = if base.is_some() { "baseline" } else { "best" };
    let mut rows = Vec::new();
    let mut pts = Vec::new();
    let mut cats = Vec::new();
    for (i, c) in labelled.iter().enumerate() {
        let s = c.metrics[m];
        // The cost with its CI from both rows' repetitions (as the sections' costs).
        // The reference row is named as such only where its rate is a fair sample (all
        // rows unfair: its own cell says why, as the others' do).
        let cost = if std::ptr::eq(*c, refc) && refc.fair_sample() {
            against.to_string()
        } else {
            crate::cases::cost_text(c, refc, against, (m, higher))
        };
        let label = namer.name(c);
        rows.push(vec![
            label.clone(),
            s.n.to_string(),
            mean_ci(s.mean, s.ci95),
            cost,
        ]);
        cats.push(label);
        pts.push(Point {
            x: i as f64,
            y: s.mean,
            ci95: s.ci95,
        });
    }
    if !sectioned {
        a.tables.push(Table {
            title: format!("Cases: {m} (cost % vs the {against} row)"),
            columns: vec![
                "label".into(),
                "n".into(),
                format!("{m} (mean ± 95 % CI)"),
                format!("cost vs {against} (% ± 95 % CI)"),
            ],
            rows,
        });
    }
    let title = format!("{} by case", metric_label(m));
    a.figures
        .push(bar_figure("cases", &title, metric_label(m), cats, pts));
}

/// An mlr search's rate per goal loss ratio: "≤ 0 %: 21000 pps; ≤ 0.5 %: 21100 pps".
fn mlr_goals(s: &SearchStored) -> String {
    s.goals
        .iter()
        .map(|g| {
            let r = g.loss_ratio.unwrap_or(0.0);
            let rate = g
                .rate_pps
                .map_or("none".to_string(), |x| format!("{x:.0} pps"));
            format!("≤ {} %: {rate}", crate::figure::num(r * 100.0))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// ndr/degrade: a table of search results and the loss curve(s) as a figure.
fn search_outputs(trials: &[Trial], a: &mut Analysis) {
    let found: Vec<(&Trial, &SearchStored)> = trials
        .iter()
        .filter_map(|t| Some((t, search_of(t)?)))
        // The envelope states its answer as a finding; its steps are no loss curve.
        .filter(|(_, s)| !is_sweet_spot(s) && !s.is(SearchKind::Envelope))
        .collect();
    if found.is_empty() {
        return;
    }
    let mut columns = vec![
        "trial".to_string(),
        "case".to_string(),
        "status".to_string(),
    ];
    columns.extend(SEARCH_FIELDS.iter().map(|f| f.to_string()));
    columns.push("goal rates (mlr)".into());
    let mut rows = Vec::new();
    let mut series = Vec::new();
    let mut degrade = false;
    // The findings' names: a case with what tells its configuration apart.
    let cases = crate::findings::search_case_names(trials);
    for (t, s) in &found {
        let case = cases
            .get(&t.id)
            .cloned()
            .or_else(|| t.label_or_engine())
            .unwrap_or_default();
        let mut row = vec![t.id.to_string(), case.clone(), search_status(t, s)];
        row.extend(search_cells(s));
        row.push(mlr_goals(s));
        rows.push(row);
        degrade |= s.is(SearchKind::Degrade);
        let curve = s.curve.as_ref().or(s.points.as_ref());
        let mut pts: Vec<Point> = curve
            .into_iter()
            .flatten()
            .filter_map(|p| {
                Some(Point {
                    x: p.x?,
                    y: p.loss_ratio? * 100.0,
                    ci95: None,
                })
            })
            .collect();
        pts.sort_by(|p, q| p.x.total_cmp(&q.x));
        series.extend(Series::of_trial(t, &case, pts));
    }
    a.tables.push(Table {
        title: "Searches (ndr / mlr / degrade)".into(),
        columns,
        rows,
    });
    if !series.is_empty() {
        let xl = if degrade {
            "rules (degrade) / offered packets/s (ndr)"
        } else {
            "offered load (packets/s)"
        };
        a.figures.push(Figure::line(
            "search-loss-curve",
            "Frame loss rate by offered load (RFC 2544 §26.3)",
            (xl, "frame loss (%)"),
            series,
        ));
    }
    latency_figure(&found, a);
}

/// ndr/mlr `latency`: one-way delay percentiles (p50, p99, max) by the fraction of the
/// rate found, one series per search and percentile (RFC 2544 §26.2).
fn latency_figure(found: &[(&Trial, &SearchStored)], a: &mut Analysis) {
    type Pick = fn(&DelayStored) -> Option<f64>;
    let mut series = Vec::new();
    for (t, s) in found {
        let Some(l) = s.latency.as_ref() else {
            continue;
        };
        let percentiles: [(&str, Pick); 3] = [
            ("p50", |d| d.p50_ns),
            ("p99", |d| d.p99_ns),
            ("max", |d| d.max_ns),
        ];
        for (name, pick) in percentiles {
            let points: Vec<Point> = l
                .iter()
                .filter(|p| p.owd.as_ref().and_then(|o| o.count).unwrap_or(0) > 0)
                .filter_map(|p| {
                    Some(Point {
                        x: p.fraction? * 100.0,
                        y: pick(p.owd.as_ref()?)? / 1e3,
                        ci95: None,
                    })
                })
                .collect();
            if !points.is_empty() {
                series.push(Series {
                    name: format!("trial {} rep {} {name}", t.id, t.rep),
                    points,
                    fit: false,
                });
            }
        }
    }
    if series.is_empty() {
        return;
    }
    a.figures.push(Figure::line(
        "search-latency",
        "One-way delay under load, by fraction of the rate found (RFC 2544 §26.2)",
        ("offered load (% of the rate found)", "one-way delay (µs)"),
        series,
    ));
}

/// A search's status, with why where it is not ok ("flagged: the lowest failing rate
/// …"): the table states every search's numbers, and a flagged one must not read as a
/// clean one.
fn search_status(t: &Trial, s: &SearchStored) -> String {
    let mut whys: Vec<&str> = s.doubts.iter().map(|d| d.why.as_str()).collect();
    if whys.is_empty() {
        whys.extend(t.error.as_deref());
    }
    if t.status == results::Status::Ok || whys.is_empty() {
        t.status.to_string()
    } else {
        format!("{}: {}", t.status, whys.join("; "))
    }
}

/// The search table's columns of a search's result.
const SEARCH_FIELDS: [&str; 11] = [
    "search",
    "mode",
    "rate_pps",
    "fail_pps",
    "rate_bps_l2",
    "ceiling_pps",
    "limited_by_sender",
    "last_good_rules",
    "first_degraded_rules",
    "converged",
    "trials",
];

/// A search's result as the cells of [`SEARCH_FIELDS`] (numbers rounded for reading,
/// absent ones empty).
fn search_cells(s: &SearchStored) -> [String; 11] {
    let n = |x: Option<f64>| x.map(num).unwrap_or_default();
    let b = |x: Option<bool>| x.map(|b| b.to_string()).unwrap_or_default();
    [
        s.search.map(|k| k.as_str().to_string()).unwrap_or_default(),
        s.mode.clone().unwrap_or_default(),
        n(s.rate_pps),
        n(s.fail_pps),
        n(s.rate_bps_l2),
        n(s.ceiling_pps),
        b(s.limited_by_sender),
        n(s.last_good_rules),
        n(s.first_degraded_rules),
        b(s.converged),
        n(s.trials),
    ]
}

/// Runs mixing workloads (seed 003: ping, sessions, bulk) have many parameters that
/// vary only because one workload has them and another has not (`conn.timeout_ms`,
/// `packet.rate`): leave out keys with a single value wherever present, and the
/// `workload` key (the table's first column already).
fn without_workload_only(configs: &[&Config], keys: Vec<String>) -> Vec<String> {
    keys.into_iter()
        .filter(|k| k != "workload")
        .filter(|k| {
            let present: BTreeSet<&String> = configs.iter().filter_map(|c| c.flat.get(k)).collect();
            present.len() >= 2
        })
        .collect()
}

/// The firewall settings a configuration's trials recorded (`gateway.firewall.settings`,
/// the first trial that has them), as `table inet fwbench; hook forward; …`.
fn firewall_settings(c: &Config) -> Option<String> {
    c.all_trials().find_map(|t| {
        let gateway = t.stored.gateway.as_ref()?;
        let s = gateway.firewall.as_ref()?.settings.as_ref()?;
        let parts: Vec<String> = s
            .iter()
            .filter_map(|(k, v)| Some(format!("{k} {}", v.as_str()?)))
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    })
}

/// The AF_XDP sockets a configuration's trials used (`packet.xdp`, the first trial
/// that has them), as `sender copy, need_wakeup, 1 queue; sink copy (native), 1 queue`.
fn xdp_settings(c: &Config) -> Option<String> {
    c.all_trials().find_map(|t| {
        let x = t.stored.packet.as_ref()?.xdp.as_ref()?;
        let parts: Vec<String> = ["sender", "sink"]
            .iter()
            .filter_map(|role| {
                let s = if *role == "sender" {
                    &x.sender
                } else {
                    &x.sink
                };
                let s = s.as_ref()?;
                let queues = s.queues.unwrap_or(0);
                Some(format!(
                    "{role} {}{}{}, {queues} queue{}",
                    s.mode.as_deref().unwrap_or("?"),
                    s.attach
                        .as_deref()
                        .map(|a| format!(" ({a} XDP)"))
                        .unwrap_or_default(),
                    if s.need_wakeup == Some(true) {
                        ", need_wakeup"
                    } else {
                        ""
                    },
                    if queues == 1 { "" } else { "s" }
                ))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    })
}

/// Every configuration: what varies, repetitions, the main metric, CV and cost.
fn config_table(configs: &[Config]) -> Table {
    let refs: Vec<&Config> = configs.iter().collect();
    let mut keys = varying(&refs);
    if refs.iter().any(|c| c.workload.is_conn()) {
        keys = without_workload_only(&refs, keys);
    }
    let mut columns = vec!["workload".to_string()];
    columns.extend(keys.iter().cloned());
    // The firewall's hidden choices (table family, hooks, counters, …), when recorded.
    let settings: Vec<Option<String>> = configs.iter().map(firewall_settings).collect();
    let with_settings = settings.iter().any(Option::is_some);
    if with_settings {
        columns.push("firewall settings".into());
    }
    // AF_XDP senders and sinks: the mode the kernel gave their sockets.
    let xdp: Vec<Option<String>> = configs.iter().map(xdp_settings).collect();
    let with_xdp = xdp.iter().any(Option::is_some);
    if with_xdp {
        columns.push("AF_XDP".into());
    }
    columns.extend(
        [
            "ok",
            "failed",
            "unavailable",
            "main metric",
            "mean ± 95 % CI",
            "CV (%)",
            "baseline",
            "cost vs baseline (% ± 95 % CI)",
        ]
        .map(String::from),
    );
    let rows = configs
        .iter()
        .zip(settings)
        .zip(xdp)
        .map(|((c, settings), xdp)| {
            // A search's steps are listed, marked: their rates probe the search.
            let step = match c.step_of() {
                Some(results::StepOf::Capacity) => " (step of a capacity search)",
                Some(results::StepOf::Search) => " (step of a search)",
                None => "",
            };
            let mut r = vec![format!("{}{step}", c.workload)];
            r.extend(
                keys.iter()
                    .map(|k| param_text(c, k).unwrap_or_else(|| "-".into())),
            );
            if with_settings {
                r.push(settings.unwrap_or_else(|| "-".into()));
            }
            if with_xdp {
                r.push(xdp.unwrap_or_else(|| "-".into()));
            }
            r.extend([c.reps.len(), c.failed.len(), c.unavailable.len()].map(|n| n.to_string()));
            let m = main_metric(c).map(|m| m.0);
            let s = m.and_then(|m| c.metrics.get(m));
            let scale = if matches!(m, Some("throughput_bps" | "goodput_bps")) {
                1e-6
            } else {
                1.0
            };
            let label = match m {
                Some("throughput_bps") => "throughput (Mb/s)",
                Some(m) => metric_label(m),
                None => "-",
            };
            r.push(label.into());
            // Repetitions fwbench limited are left out of the mean: said in its cell.
            // Counted for the metric (a sender's limit leaves a loss in).
            let measured = m.and_then(|m| c.values.get(m)).map_or(0, Vec::len);
            let left = match (m.map_or(0, |m| c.left_out(m)), measured) {
                (0, _) => String::new(),
                (1, 1) => "– (its one trial limited by fwbench)".into(),
                (n, all) if n == all => format!("– (all {n} limited by fwbench)"),
                (n, _) if s.is_none() => format!("– ({n} limited by fwbench left out)"),
                (n, all) if 2 * n > all => format!(
                    " ({n} of {all} limited by fwbench left out: the rest are no fair sample)"
                ),
                (n, _) => format!(" ({n} limited by fwbench left out)"),
            };
            r.push(
                s.map(|s| mean_ci(s.mean * scale, s.ci95.map(|c| c * scale)))
                    .unwrap_or_default()
                    + &left,
            );
            r.push(
                s.and_then(|s| s.cv())
                    .map(|v| format!("{:.1}", v * 100.0))
                    .unwrap_or_default(),
            );
            r.push(if c.is_baseline {
                "yes".into()
            } else {
                String::new()
            });
            r.push(match (&c.cost_withheld, c.cost_pct) {
                (Some(d), _) => crate::figure::withheld_cell(&d.why),
                (None, v) => v
                    .map(|v| crate::figure::cost_cell((v, c.cost_ci95)))
                    .unwrap_or_default(),
            });
            r
        })
        .collect();
    Table {
        title: "Configurations".into(),
        columns,
        rows,
    }
}

#[cfg(test)]
#[path = "analysis_tests.rs"]
mod tests;
