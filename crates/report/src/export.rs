//! Exports for other tools: Markdown (tables and fitted numbers), CSV (one row per
//! trial; one row per sample) and JSON (configurations, fits, figures).
//!
//! Owns: the text of those formats (their columns and keys are a stable interface; the
//! connection columns of the trial CSV are `conn`'s).
//! Must not: choose figures or compute statistics; it prints an analysed [`Report`].

use crate::contents::{Report, ReportError, RunReport, Warning};
use crate::figure::{mean_ci, num, CostFit, Estimator, Figure, Kind, LeftOut, Table};
use crate::model::flatten;
use crate::model::Trial;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use store::Store;

/// Headline columns of the trial CSV, in order (names as in the store).
pub const HEADLINE_COLUMNS: [&str; 17] = [
    "duration_s",
    "throughput_bps",
    "transactions_per_s",
    "rtt_p50_us",
    "rtt_p90_us",
    "rtt_p99_us",
    "rtt_p999_us",
    "rtt_max_us",
    "validation_errors",
    "unsent",
    "lost",
    "offered_pps",
    "sent_pps",
    "received_pps",
    "loss_ratio",
    "owd_p50_us",
    "jitter_us",
];

/// Firewall columns of the trial CSV (empty when the trial ran without rules).
pub const FIREWALL_COLUMNS: [&str; 7] = [
    "engine",
    "rules",
    "set_elements",
    "install_ms",
    "remove_ms",
    "verdicts_ok",
    "verdict_problems",
];

/// Label/value pairs describing a run and its host.
pub fn run_meta(run: &RunReport) -> Vec<(String, String)> {
    let r = &run.run;
    let h = &r.host;
    let pairs = |v: &[(String, String)]| {
        v.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let ok = run.ok_trials();
    let mut meta = vec![
        ("scenario".into(), r.scenario.clone()),
        ("seed".into(), r.seed.to_string()),
        ("command".into(), r.command.clone()),
        ("status".into(), r.status.clone()),
        ("started".into(), r.started_at.clone()),
        (
            "finished".into(),
            r.finished_at.clone().unwrap_or_else(|| "-".into()),
        ),
        ("trials".into(), format!("{} ({ok} ok)", run.trials.len())),
        (
            "baseline".into(),
            run.baseline
                .as_ref()
                .map(crate::model::canonical)
                .unwrap_or_else(|| "none".into()),
        ),
        ("host".into(), h.hostname.clone()),
        ("kernel".into(), h.kernel.clone()),
        ("CPU".into(), format!("{} ({} cores)", h.cpu_model, h.cores)),
        ("fwbench".into(), h.fwbench_version.clone()),
        ("tools".into(), pairs(&h.tools)),
        ("sysctls".into(), pairs(&h.sysctls)),
        (
            "mitigations".into(),
            if h.mitigations.is_empty() {
                "not recorded".into()
            } else {
                pairs(&h.mitigations)
            },
        ),
    ];
    if !r.tags.is_empty() {
        // The labels given at run time (`--tag`), after the scenario's name.
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        meta.insert(1, ("tags".into(), tags.join(" ")));
    }
    meta
}

/// The cost fits of a run as a table: the headline line first (columns as before),
/// then each estimator's slope with its CI half-width in %, and the line's check —
/// FLAGGED where the line is off or what `left_out` left of a series is no fair sample
/// for the estimator (as the findings say: never "ok" beside a flagged finding).
pub fn fits_table(fits: &[CostFit], left_out: &BTreeMap<String, LeftOut>) -> Table {
    let estimator = |f: &CostFit, e: Estimator| {
        f.estimate(e)
            .map(|x| {
                let l = &x.fit.line;
                let rel = x
                    .relative_ci()
                    .map(|r| format!(" ({:.1} %)", r * 100.0))
                    .unwrap_or_default();
                format!("{}{rel}", mean_ci(l.b, l.b_ci95))
            })
            .unwrap_or_else(|| "-".into())
    };
    let rows = fits
        .iter()
        .map(|f| {
            let head = f.headline();
            let problems: Vec<String> = f
                .estimates
                .iter()
                .filter_map(|e| {
                    let unfair = || left_out.get(&f.series)?.flag_of(e.estimator);
                    let why = e.problem.as_deref().or_else(unfair)?;
                    Some(format!("FLAGGED ({}): {why}", e.estimator.label()))
                })
                .collect();
            vec![
                f.series.clone(),
                mean_ci(f.fit.b, f.fit.b_ci95),
                mean_ci(f.fit.a, f.fit.a_ci95),
                format!("{:.4}", f.fit.r2),
                f.fit.n.to_string(),
                f.rule_counts.to_string(),
                f.knee.map(|k| k.text()).unwrap_or_else(|| "-".into()),
                match f.degradation_placed() {
                    Some(Ok((a, b))) => format!("{} → {}", num(a), num(b)),
                    // Already down at the second rule count: the grid cannot place it.
                    Some(Err(b)) => format!("before {} (grid too coarse)", num(b)),
                    None => "none".into(),
                },
                match (head, f.estimates.len()) {
                    (Some(h), 1) => format!("{} ({})", f.estimator.label(), h.basis()),
                    (Some(h), _) => {
                        format!("{}, the headline ({})", f.estimator.label(), h.basis())
                    }
                    (None, _) => f.estimator.label().into(),
                },
                estimator(f, Estimator::TimePerPacket),
                estimator(f, Estimator::CpuTimePerPacket),
                if problems.is_empty() {
                    "ok".into()
                } else {
                    problems.join("; ")
                },
            ]
        })
        .collect();
    let title = "Cost model: time per packet = a + b · rules (weighted least squares, the \
                 trials as the unit)";
    Table::new(
        title,
        &[
            "series",
            "b: ns per rule per packet (± 95 % CI)",
            "a: ns per packet at 0 rules (± 95 % CI)",
            "R²",
            "trials",
            "rule counts",
            "knee (2-segment fit), rules (its interval: bootstrap over repetitions, or the measured counts around it)",
            "degradation (> 5 % below plateau, the drop's 95 % CI excluding 0): rule count before → first degraded",
            "headline estimator",
            "1/pps: b ± CI (half-width)",
            "CPU time: b ± CI (half-width)",
            "line check",
        ],
        rows,
    )
}

/// Most series a figure's table gives a column each; a figure with more (a trial's
/// overlaid updates: one series per update) is given long, a row per point.
const WIDE_SERIES: usize = 8;

/// A figure's data as a table: one row per x (or category), one column per series;
/// beyond [`WIDE_SERIES`] series, one row per point (series, x, value).
pub fn figure_table(f: &Figure) -> Table {
    if f.series.len() > WIDE_SERIES {
        return long_figure_table(f);
    }
    let xs: BTreeSet<u64> = f
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x.to_bits()))
        .collect();
    let mut xs: Vec<f64> = xs.into_iter().map(f64::from_bits).collect();
    xs.sort_by(f64::total_cmp);
    let mut columns = vec![if f.x_label.is_empty() {
        "case".to_string()
    } else {
        f.x_label.clone()
    }];
    columns.extend(f.series.iter().map(|s| s.name.clone()));
    let rows = xs
        .iter()
        .map(|x| {
            let head = match f.kind {
                Kind::Bar => f.categories.get(*x as usize).cloned().unwrap_or_default(),
                Kind::Line => num(*x),
            };
            let mut row = vec![head];
            row.extend(f.series.iter().map(|s| {
                s.points
                    .iter()
                    .find(|p| p.x == *x)
                    .map(|p| mean_ci(p.y, p.ci95))
                    .unwrap_or_default()
            }));
            row
        })
        .collect();
    Table {
        title: format!("{} ({})", f.title, f.y_label),
        columns,
        rows,
    }
}

/// An overlay's bold line alone (its thin ones are for the eye: as table rows, a trial
/// of 561 updates gave 170 000); any other figure as it is.
pub(crate) fn bold_only(f: &Figure) -> std::borrow::Cow<'_, Figure> {
    match &f.overlay {
        Some(bold) => std::borrow::Cow::Owned(Figure {
            series: f
                .series
                .iter()
                .filter(|s| &s.name == bold)
                .cloned()
                .collect(),
            ..f.clone()
        }),
        None => std::borrow::Cow::Borrowed(f),
    }
}

/// Most rows a figure's table gives in Markdown: a trial's background per 1-ms bin
/// around a 7-s commit was 7 500 rows (churn's report: 566 kB).
const MD_ROWS: usize = 200;

/// [`figure_table`] for Markdown: a line figure of a few series with more x values than
/// [`MD_ROWS`] is condensed — each row a run of consecutive x values and, per series,
/// the least and the most of its points there (a stall's 0 stays in sight), with a
/// note saying so; any other figure as [`figure_table`] gives it.
fn md_figure_table(f: &Figure) -> (Table, Option<String>) {
    let mut xs: Vec<f64> = f
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if f.kind != Kind::Line || f.series.len() > WIDE_SERIES || xs.len() <= MD_ROWS {
        return (figure_table(f), None);
    }
    let per = xs.len().div_ceil(MD_ROWS);
    let mut t = figure_table(f);
    t.rows = xs
        .chunks(per)
        .map(|run| {
            let (lo, hi) = (run[0], run[run.len() - 1]);
            let mut row = vec![format!("{} … {}", num(lo), num(hi))];
            row.extend(f.series.iter().map(|s| {
                let ys: Vec<f64> = s
                    .points
                    .iter()
                    .filter(|p| (lo..=hi).contains(&p.x))
                    .map(|p| p.y)
                    .collect();
                let min = ys.iter().copied().fold(f64::INFINITY, f64::min);
                let max = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                match ys.len() {
                    0 => String::new(),
                    _ if min == max => num(min),
                    _ => format!("{}–{}", num(min), num(max)),
                }
            }));
            row
        })
        .collect();
    let note = format!(
        "{} x values condensed to {} rows of {per} each: the least and the most of each \
         series there, without their CIs (every point: the HTML report's figure, or `-f \
         json`).",
        xs.len(),
        t.rows.len()
    );
    (t, Some(note))
}

/// [`figure_table`] for many series: a row per point, in series order.
fn long_figure_table(f: &Figure) -> Table {
    let x_label = if f.x_label.is_empty() {
        "case".to_string()
    } else {
        f.x_label.clone()
    };
    let rows = f
        .series
        .iter()
        .flat_map(|s| {
            s.points.iter().map(|p| {
                let x = match f.kind {
                    Kind::Bar => f.categories.get(p.x as usize).cloned().unwrap_or_default(),
                    Kind::Line => num(p.x),
                };
                vec![s.name.clone(), x, mean_ci(p.y, p.ci95)]
            })
        })
        .collect();
    Table {
        title: format!("{} ({})", f.title, f.y_label),
        columns: vec!["series".to_string(), x_label, f.y_label.clone()],
        rows,
    }
}

/// Text from the database in Markdown: `&`, `<` and `>` as entities, so no raw
/// HTML (`<script>`, `<img onerror>`) reaches a renderer that passes HTML through;
/// newlines flattened (a value cannot start a new block).
fn md_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace(['\n', '\r'], " ")
}

/// A Markdown table cell: HTML escaped ([`md_text`]), pipes escaped.
fn md_cell(s: &str) -> String {
    md_text(s).replace('|', "\\|")
}

/// A table in Markdown, with a heading.
fn md_table(o: &mut String, t: &Table) {
    let _ = writeln!(o, "\n### {}\n", md_text(&t.title));
    let row = |cells: &[String]| {
        format!(
            "| {} |",
            cells
                .iter()
                .map(|c| md_cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    let _ = writeln!(o, "{}", row(&t.columns));
    let _ = writeln!(o, "|{}", "---|".repeat(t.columns.len()));
    for r in &t.rows {
        let _ = writeln!(o, "{}", row(r));
    }
}

/// Each run's findings and tables (all but the configurations table) as Markdown, under
/// a line saying where they come from: run, scenario, status, date, fwbench version
/// (with its commit) and machine — the per-study tables of `docs/seeds.md` are this
/// output, pasted by `scripts/seed-tables.sh`, never typed.
pub fn markdown_tables(r: &Report) -> String {
    let mut o = String::new();
    for run in &r.runs {
        let x = &run.run;
        let h = &x.host;
        let _ = writeln!(
            o,
            "Generated by `fwbench report {} -f tables` from run {} of `{}` ({}, {}), \
             started {}; fwbench {}; {} ({}, {} CPUs, kernel {}).",
            md_text(&r.source),
            x.id,
            md_text(&x.scenario),
            md_text(&x.status),
            run.trials_summary(),
            md_text(&x.started_at),
            md_text(&h.fwbench_version),
            md_text(&h.hostname),
            md_text(&h.cpu_model),
            h.cores,
            md_text(&h.kernel)
        );
        if !run.analysis.findings.is_empty() {
            o.push_str("\n**Findings**\n\n");
            for f in &run.analysis.findings {
                let _ = writeln!(o, "* {}", md_text(f));
            }
        }
        if !run.analysis.fits.is_empty() {
            md_table(
                &mut o,
                &fits_table(&run.analysis.fits, &run.analysis.left_out),
            );
        }
        for t in run
            .analysis
            .tables
            .iter()
            .filter(|t| t.title != "Configurations")
        {
            md_table(&mut o, t);
        }
        let w: Vec<&Warning> = run.warnings.iter().collect();
        for g in crate::text::collapse(&w) {
            if g.collapsed() {
                let _ = writeln!(o, "\n* warning: {} ({})", md_text(&g.line()), g.kind);
            } else {
                for x in g.items {
                    let _ = writeln!(o, "\n* warning: {}: {}", x.kind, md_text(&x.message));
                }
            }
        }
        o.push('\n');
    }
    o
}

/// The report as Markdown: warnings, run metadata, fits, tables and figure data.
pub fn markdown(r: &Report) -> String {
    let mut o = format!(
        "# fwbench report\n\nResults file: {}, {} run(s).\n\n## Warnings\n\n",
        md_text(&r.source),
        r.runs.len()
    );
    let w: Vec<_> = r.warnings().collect();
    if w.is_empty() {
        o.push_str("None.\n");
    }
    // Data-integrity failures first, in bold.
    for x in w.iter().filter(|x| x.kind == "corrupt") {
        let (kind, msg) = (md_text(&x.kind), md_text(&x.message));
        let _ = writeln!(o, "* **run {} · {kind}: {msg}**", x.run_id);
    }
    let rest: Vec<&Warning> = w.iter().copied().filter(|x| x.kind != "corrupt").collect();
    let groups = crate::text::collapse(&rest);
    for g in &groups {
        if g.collapsed() {
            let _ = writeln!(
                o,
                "* run {} · {}: {} (listed under “Warnings in full” at the end)",
                g.run_id,
                md_text(g.kind),
                md_text(&g.line())
            );
            continue;
        }
        for x in &g.items {
            let (kind, msg) = (md_text(&x.kind), md_text(&x.message));
            let _ = writeln!(o, "* run {} · {kind}: {msg}", x.run_id);
        }
    }
    for run in &r.runs {
        let _ = writeln!(
            o,
            "\n## Run {}: {}\n",
            run.run.id,
            md_text(&run.run.scenario)
        );
        if !run.analysis.findings.is_empty() {
            o.push_str("**Findings**\n\n");
            for f in &run.analysis.findings {
                // Findings hold labels and import paths from the results file.
                let _ = writeln!(o, "* {}", md_text(f));
            }
            o.push('\n');
        }
        for (k, v) in run_meta(run) {
            let _ = writeln!(o, "* {}: {}", md_text(&k), md_text(&v));
        }
        if let Some(t) = crate::hosts::role_hosts_table(&run.run) {
            md_table(&mut o, &t);
        }
        if !run.analysis.fits.is_empty() {
            md_table(
                &mut o,
                &fits_table(&run.analysis.fits, &run.analysis.left_out),
            );
        }
        for t in &run.analysis.tables {
            md_table(&mut o, t);
        }
        for f in &run.analysis.figures {
            let (t, condensed) = md_figure_table(&bold_only(f));
            md_table(&mut o, &t);
            if let Some(n) = condensed {
                let _ = writeln!(o, "\n* {n}");
            }
            if f.overlay.is_some() {
                o.push_str(
                    "\n* The thin lines (one update each) are drawn in the HTML report; this \
                     table is their median.\n",
                );
            }
            for n in &f.notes {
                let _ = writeln!(o, "\n* {}", md_text(n));
            }
        }
    }
    let full: Vec<_> = groups.iter().filter(|g| g.collapsed()).collect();
    if !full.is_empty() {
        o.push_str("\n## Warnings in full\n");
        for g in full {
            let _ = writeln!(o, "\n### run {} · {}\n", g.run_id, md_text(g.kind));
            for x in &g.items {
                let _ = writeln!(o, "* {}", md_text(&x.message));
            }
        }
    }
    o
}

/// One CSV field, quoted when it holds a comma, quote or line break (RFC 4180), and
/// neutralised against CSV injection (OWASP): text starting with `=`, `+`, `-`, `@`,
/// a tab or a carriage return is prefixed with `'` so a spreadsheet shows it as
/// text instead of running it as a formula. Numbers (`-1.5`, `+3e-4`) stay numbers.
pub(crate) fn csv_field(s: &str) -> String {
    let risky = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number(s);
    let s = if risky {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// A plain decimal number (what a spreadsheet reads as a number, not a formula).
fn is_number(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && s.parse::<f64>().is_ok()
}

/// A JSON scalar as CSV text (null → empty).
fn csv_value(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(v) => crate::model::text(v),
    }
}

/// One row per trial. Columns: `run_id, trial_id, trial_key, rep, workload, status,
/// error, started_at, finished_at`, then every parameter flattened with dots and
/// prefixed `params.` (e.g. `params.packet.size.payload`; union over the trials,
/// sorted), then the headline columns ([`HEADLINE_COLUMNS`]), then the firewall
/// columns prefixed `firewall.` ([`FIREWALL_COLUMNS`]), then — only when some trial is a
/// connection trial — the connection columns prefixed `conn.` ([`crate::conn::CSV_COLUMNS`]).
/// Empty cell = not applicable.
pub fn csv_trials(r: &Report) -> String {
    let trials: Vec<&Trial> = r.runs.iter().flat_map(|x| x.trials.iter()).collect();
    let flat: Vec<BTreeMap<String, String>> = trials.iter().map(|t| flatten(&t.params)).collect();
    let keys: BTreeSet<&String> = flat.iter().flat_map(|f| f.keys()).collect();
    let mut head: Vec<String> = [
        "run_id",
        "trial_id",
        "trial_key",
        "rep",
        "workload",
        "status",
        "error",
        "started_at",
        "finished_at",
    ]
    .map(String::from)
    .to_vec();
    head.extend(keys.iter().map(|k| format!("params.{k}")));
    head.extend(HEADLINE_COLUMNS.iter().map(|c| c.to_string()));
    head.extend(FIREWALL_COLUMNS.iter().map(|c| format!("firewall.{c}")));
    let conn = trials.iter().any(|t| crate::model::conn_of(t).is_some());
    if conn {
        head.extend(crate::conn::CSV_COLUMNS.iter().map(|c| format!("conn.{c}")));
    }
    let mut o = head
        .iter()
        .map(|h| csv_field(h))
        .collect::<Vec<_>>()
        .join(",");
    o.push('\n');
    for (t, f) in trials.iter().zip(&flat) {
        let mut row = vec![
            t.run_id.to_string(),
            t.id.to_string(),
            t.trial_key.clone(),
            t.rep.to_string(),
            t.row.workload.clone(),
            t.row.status.clone(),
            t.error.clone().unwrap_or_default(),
            t.started_at.clone(),
            t.finished_at.clone(),
        ];
        row.extend(keys.iter().map(|k| f.get(*k).cloned().unwrap_or_default()));
        let h = serde_json::to_value(&t.headline).unwrap_or(Value::Null);
        row.extend(HEADLINE_COLUMNS.iter().map(|c| csv_value(h.get(c))));
        let fw = t
            .firewall
            .as_ref()
            .and_then(|x| serde_json::to_value(x).ok())
            .unwrap_or(Value::Null);
        row.extend(FIREWALL_COLUMNS.iter().map(|c| csv_value(fw.get(c))));
        if conn {
            // The stored JSON, column by column (`CSV_COLUMNS` are its dotted paths).
            let r = crate::model::conn_of(t).and(crate::model::lookup(&t.results, "conn"));
            row.extend(
                crate::conn::CSV_COLUMNS
                    .iter()
                    .map(|c| csv_value(r.and_then(|r| crate::model::lookup(r, c)))),
            );
        }
        o.push_str(
            &row.iter()
                .map(|c| csv_field(c))
                .collect::<Vec<_>>()
                .join(","),
        );
        o.push('\n');
    }
    o
}

/// Samples of every trial of the report: `run_id,trial_id,role,t_s,metric,value`.
pub fn csv_samples(r: &Report, store: &Store) -> Result<String, ReportError> {
    let mut o = String::from("run_id,trial_id,role,t_s,metric,value\n");
    for t in r.runs.iter().flat_map(|x| x.trials.iter()) {
        for s in store.samples(t.id)? {
            let _ = writeln!(
                o,
                "{},{},{},{},{},{}",
                t.run_id,
                t.id,
                csv_field(&s.role),
                s.t_s,
                csv_field(&s.metric),
                s.value
            );
        }
    }
    Ok(o)
}

/// `{runs: [{run, configs: [{params, n, fwbench_limited, metrics: {name: {mean, sd, ci95, n}}}], fits, figures, tables, warnings}]}`.
pub fn json(r: &Report) -> Value {
    let runs: Vec<Value> = r.runs.iter().map(run_json).collect();
    json!({ "source": r.source, "runs": runs })
}

/// One run as JSON.
fn run_json(run: &RunReport) -> Value {
    let r = &run.run;
    let configs: Vec<Value> = run
        .configs
        .iter()
        .map(|c| {
            let main = crate::model::main_metric(c);
            json!({
                "workload": c.workload.as_str(),
                "main_metric": main.map(|m| m.0),
                "main_higher": main.map(|m| m.1),
                "label": c.label,
                "params": c.params,
                "n": c.reps.len(),
                // Of `n`, those fwbench's sender or sink limited: left out of `metrics`.
                "fwbench_limited": c.fwbench_limited(),
                "failed": c.failed.len(),
                "unavailable": c.unavailable.len(),
                "rules": c.rules,
                "is_baseline": c.is_baseline,
                "cost_pct": c.cost_pct,
                "cost_ci95": c.cost_ci95,
                // Why the cost is no measurable one (its CI includes 0, or it has
                // none), as its table cell says; absent when it is one.
                "cost_doubt": c.cost_withheld.as_ref().map(|d| d.why.clone()).or_else(|| {
                    c.cost_pct
                        .and_then(|v| crate::figure::unmeasured(v, c.cost_ci95))
                        .map(String::from)
                }),
                "metrics": c.metrics,
            })
        })
        .collect();
    json!({
        "run": {
            "id": r.id,
            "scenario": r.scenario,
            "seed": r.seed,
            "command": r.command,
            "status": r.status,
            "started_at": r.started_at,
            "finished_at": r.finished_at,
            "baseline": run.baseline,
            "host": r.host,
            "host_facts": r.host.facts(),
            "role_hosts": r.role_hosts,
            "tags": r.tags.iter().cloned().collect::<std::collections::BTreeMap<String, String>>(),
        },
        "configs": configs,
        "findings": run.analysis.findings,
        "claims": run.analysis.claims,
        "fits": run.analysis.fits,
        // Per series, what its cost model left out and whether what is left is a fair
        // sample (`flagged`, `paced_flagged`), as the findings and the fits table say.
        "left_out": run.analysis.left_out,
        "segments": run.analysis.segments,
        "figures": run.analysis.figures,
        "tables": run.analysis.tables,
        "warnings": run.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Point, Series};

    #[test]
    fn csv_cells_cannot_be_formulas() {
        assert_eq!(csv_field("=1+2"), "'=1+2");
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("+cmd"), "'+cmd");
        assert_eq!(
            csv_field("-2+3+cmd|' /C calc'!A0"),
            "'-2+3+cmd|' /C calc'!A0"
        );
        assert_eq!(csv_field("\tx"), "'\tx");
        assert_eq!(
            csv_field("=HYPERLINK(\"http://x\",\"y\")"),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""
        );
        // Numbers stay numbers; text without a leading trigger is untouched.
        assert_eq!(csv_field("-1.5"), "-1.5");
        assert_eq!(csv_field("+3e-4"), "+3e-4");
        assert_eq!(csv_field("-"), "'-");
        assert_eq!(csv_field("a=b"), "a=b");
    }

    #[test]
    fn markdown_text_carries_no_html() {
        assert_eq!(
            md_text("<script>alert(1)</script> & co"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"
        );
        assert_eq!(md_cell("a|<b>\nc"), "a\\|&lt;b&gt; c");
    }

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("abc"), "abc");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(md_cell("a|b"), "a\\|b");
    }

    fn line_figure(series: usize, points: usize) -> Figure {
        let series = (0..series)
            .map(|i| Series {
                name: format!("update {i}"),
                points: (0..points)
                    .map(|x| Point {
                        x: x as f64,
                        y: (10 * i + x) as f64,
                        ci95: None,
                    })
                    .collect(),
                fit: false,
            })
            .collect();
        Figure::line("f", "t", ("ms", "pps"), series)
    }

    #[test]
    fn a_figure_of_many_series_is_a_long_table_with_every_point() {
        // A few series: a column each, a row per x.
        let wide = figure_table(&line_figure(WIDE_SERIES, 3));
        assert_eq!(wide.columns.len(), 1 + WIDE_SERIES);
        assert_eq!(wide.rows.len(), 3);
        // Forty-six overlaid updates: three columns, a row per point, values kept.
        let long = figure_table(&line_figure(46, 3));
        assert_eq!(long.columns, ["series", "ms", "pps"]);
        assert_eq!(long.rows.len(), 46 * 3);
        assert_eq!(long.rows[3 * 45 + 2], ["update 45", "2", "452"]);
    }

    /// A per-bin series of 7 500 points is at most 200 rows in Markdown, each the least and the
    /// most of its run of bins — a dip to 0 (a stall) stays in sight; a short one is
    /// given whole.
    #[test]
    fn a_long_series_is_condensed_in_markdown_and_a_dip_stays() {
        let mut f = line_figure(2, 7_500);
        f.series[1].points[4_321].y = 0.0;
        let (t, note) = md_figure_table(&f);
        assert_eq!(t.rows.len(), 198);
        assert_eq!(t.rows[0], ["0 … 37", "0–37", "10–47"]);
        let dip = &t.rows[4_321 / 38];
        assert!(dip[2].starts_with("0–"), "{dip:?}");
        assert_eq!(
            note.as_deref(),
            Some(
                "7500 x values condensed to 198 rows of 38 each: the least and the most of \
                 each series there, without their CIs (every point: the HTML report's figure, \
                 or `-f json`)."
            )
        );
        let (short, none) = md_figure_table(&line_figure(2, MD_ROWS));
        assert_eq!((short.rows.len(), none), (MD_ROWS, None));
    }
}
