//! Report: turns a results store into numbers people can read.
//!
//! Owns: statistics over repetitions (mean, CI, regression, knee, Welch), the choice of
//! figures from what a run varies (connection workloads in [`conn`]), SVG drawing, the
//! self-contained HTML page, and the Markdown, CSV and JSON exports.
//! Must not: measure anything, or write to the store; it only reads stored results,
//! so a report can be re-made offline at any time.
//!
//! Layers (a module imports only from layers below it):
//! 1. `stats`, `segments` (the cost per rule between adjacent rule counts): numbers.
//! 2. `figure`: what a report shows (types only, plus how a number reads; `Options`).
//! 3. `model`: stored trials → configurations; `svg`: draws a figure.
//! 4. `series`: configurations → figure parts; `views`: averaged views (the mean over
//!    the parameters not shown, with a CI over configurations).
//! 5. `throughput`, `conn`: the workload analyses, with `echo` (seed 000's figures),
//!    `cases` (seed 001's sections), `flows` (seed 002's panels), `service` (seed
//!    003's derived times), `nat` (NAT vs plain forwarding) and `worklang`
//!    (workload-language runs) beside them (`echo` uses `throughput`; `throughput` uses
//!    `flows`; `conn` uses `service`), `updates` (gateway events' per-update rows),
//!    `hotrules` (the cost of reaching each imported rule), `advise` (a
//!    `rules advise --measure` run: both rulesets and the saving) and `mix` (size
//!    mixes: sent and received per frame size).
//! 6. `analysis`: assembles them into a run's [`figure::Analysis`]; `findings`: the
//!    answer in sentences, first.
//! 7. `contents`: what a loaded report holds (runs, trials, warnings).
//! 8. `text` (the findings on a terminal; many warnings of a kind in one line),
//!    `export`, `html`, `files` (figures as SVG + CSV files), `compare` (runs side by
//!    side) and this root (loading, the output methods): the outputs.

pub mod advise;
pub mod analysis;
pub mod cases;
pub mod compare;
pub mod conn;
pub mod conntrack;
pub mod contents;
pub mod echo;
pub mod envelope;
pub mod export;
pub mod figure;
pub mod files;
pub mod findings;
pub mod flows;
pub mod hosts;
pub mod hotrules;
pub mod html;
pub mod jumpavg;
pub mod mix;
pub mod model;
pub mod nat;
pub mod noise;
pub mod openmetrics;
pub mod segments;
pub mod series;
pub mod service;
pub mod stats;
pub mod svg;
pub mod text;
pub mod throughput;
pub mod trend;
pub mod updates;
pub mod views;
pub mod worklang;

#[cfg(test)]
mod testing;

pub use contents::{Report, ReportError, RunReport, Warning};
use figure::Analysis;
use model::Config;
pub use model::Trial;
use results::Status;
use std::collections::BTreeMap;
use store::{RunRow, Store};

pub use noise::UNSTABLE_CV;

/// Read one run (or every run, `None`) from a store and analyse it.
pub fn load(store: &Store, run: Option<i64>) -> Result<Report, ReportError> {
    load_with(store, run, &figure::Options::default())
}

/// [`load`] with the reader's choices (the advantage ratio's reference).
pub fn load_with(
    store: &Store,
    run: Option<i64>,
    opts: &figure::Options,
) -> Result<Report, ReportError> {
    let all = store.runs()?;
    let chosen: Vec<RunRow> = match run {
        None => all,
        Some(id) => {
            let found: Vec<RunRow> = all.iter().filter(|r| r.id == id).cloned().collect();
            if found.is_empty() {
                let known: Vec<String> = all.iter().map(|r| r.id.to_string()).collect();
                return Err(ReportError::NoSuchRun {
                    path: store.path().into(),
                    run: id,
                    known: if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    },
                });
            }
            found
        }
    };
    let runs = chosen
        .into_iter()
        .map(|r| load_run(store, r, opts))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Report {
        source: store.path().display().to_string(),
        runs,
    })
}

/// Load, group, pair with the baseline, analyse and check one run.
fn load_run(store: &Store, run: RunRow, opts: &figure::Options) -> Result<RunReport, ReportError> {
    // Each trial's results and parameters are read typed here, once.
    let trials: Vec<Trial> = store
        .trials(Some(run.id))?
        .into_iter()
        .map(Trial::new)
        .collect();
    // Gateway events: the per-update rows (issue 25).
    let gw = updates::gather(&trials, |id| store.updates(id))?;
    let mut update_metrics = updates::trial_metrics(&gw);
    let mut samples = BTreeMap::new();
    for t in trials.iter().filter(|t| t.status == Status::Ok) {
        let rows = store.samples(t.id)?;
        let mut means = model::host_means(&rows);
        let cpus = model::data_path_cpus(t);
        if let Some(v) = t
            .headline
            .received_pps
            .and_then(|pps| model::cpu_ns_per_packet(&rows, pps, cpus.as_deref()))
        {
            means.insert(model::CPU_NS_PER_PACKET.into(), v);
        }
        means.extend(update_metrics.remove(&t.id).unwrap_or_default());
        if let Some(r) = envelope::safe_rate(t) {
            means.insert(envelope::METRIC.into(), r);
        }
        // New-flow trials (issue 26): admitted new flows/s and refused ones, per trial,
        // so that configurations and `compare` have them.
        let ct = t.stored.packet.as_ref().and_then(|p| p.conntrack.as_ref());
        for (name, v) in [
            (model::NEW_FLOWS_PER_S, ct.and_then(|c| c.new_flows_per_s)),
            (model::CT_DROPPED_FLOWS, ct.and_then(|c| c.dropped)),
        ] {
            if let Some(v) = v.filter(|_| t.workload.new_flows()) {
                means.insert(name.into(), v);
            }
        }
        if !means.is_empty() {
            samples.insert(t.id, means);
        }
    }
    let mut configs = model::configs(&trials, &samples);
    let baseline = model::baseline_of(&run, &configs);
    if let Some(b) = &baseline {
        model::pair_with_baseline(&mut configs, b);
    }
    let mut analysis = analysis::analyse(&configs, &trials, opts);
    // Trials aimed at the rules of an imported ruleset: cost vs rule position.
    analysis.figures.extend(hotrules::figure(&trials));
    analysis.findings.extend(hotrules::findings(&trials));
    // `rules advise --measure --db`: both rulesets side by side, the saving.
    analysis.figures.extend(advise::figures(&trials));
    analysis.findings.extend(advise::findings(&trials));
    analysis.findings.extend(updates::findings(&gw));
    analysis.findings.extend(updates::growth(&gw));
    // Conntrack workloads: what the table did with new flows (issue 26).
    analysis.findings.extend(conntrack::findings(&trials));
    analysis.figures.extend(conntrack::figures(&trials));
    analysis.figures.extend(updates::figures(&gw));
    analysis.figures.extend(envelope::figures(&trials));
    analysis.tables.extend(updates::table(&gw));
    analysis.tables.extend(updates::spread_table(&gw));
    // Size mixes: sent and received per frame size (issue 37).
    analysis.figures.extend(mix::figures(&trials));
    analysis.tables.extend(mix::tables(&trials));
    analysis.findings = findings::findings(&configs, &trials, &analysis);
    let general = findings::claims(&configs, &analysis);
    analysis.claims.splice(0..0, general);
    let mut warnings = warnings(&run, &trials, &configs);
    warnings.extend(fit_warnings(run.id, &analysis));
    Ok(RunReport {
        run,
        trials,
        configs,
        baseline,
        analysis,
        warnings,
    })
}

/// Collect a run's warnings: run status, failed/unavailable trials, validation errors,
/// verdict mismatches, failed or corrupt connection sessions and configurations that
/// varied far more than the run's others (the run's noise is a note: [`noise`]).
fn warnings(run: &RunRow, trials: &[Trial], configs: &[Config]) -> Vec<Warning> {
    let mut w = Vec::new();
    let mut push = |trial_id: Option<i64>, kind: &str, message: String| {
        w.push(Warning {
            run_id: run.id,
            trial_id,
            kind: kind.into(),
            message,
        })
    };
    if run.status != "complete" {
        let why = run
            .ended_why
            .as_ref()
            .map_or_else(String::new, |w| format!(" ({w})"));
        push(
            None,
            "run-status",
            format!(
                "run {} is {}{why} (not complete): results may be partial",
                run.id, run.status
            ),
        );
    }
    for t in trials {
        let who = format!("trial {} ({}, rep {})", t.id, t.trial_key, t.rep);
        let err = t.error.as_deref().unwrap_or("no error recorded");
        match t.status {
            Status::Ok => {}
            Status::Unavailable => push(
                Some(t.id),
                "unavailable",
                format!("{who} unavailable: {err}"),
            ),
            // The imported ruleset dropped the traffic: measured, and said so.
            Status::Dropped => push(Some(t.id), "dropped", format!("{who}: {err}")),
            // A figure's witness did not hold: measured, shown with its reason, and
            // no finding made from it.
            Status::Flagged => push(Some(t.id), "flagged", format!("{who} flagged: {err}")),
            Status::Failed => push(
                Some(t.id),
                "failed",
                format!("{who} {}: {err}", t.row.status),
            ),
        }
        // Connection trials store corrupt sessions as validation errors: their
        // warning (`corrupt`) says more.
        let conn = model::conn_of(t).is_some();
        if let Some(n) = t.headline.validation_errors.filter(|n| *n > 0 && !conn) {
            push(
                Some(t.id),
                "validation",
                format!("{who}: {n} validation errors"),
            );
        }
        if let Some(f) = t.firewall.as_ref().filter(|f| f.verdicts_ok == Some(false)) {
            let why = f.verdict_problems.as_deref().unwrap_or("no details");
            push(
                Some(t.id),
                "verdict",
                format!("{who}: {} rule set gave wrong verdicts: {why}", f.engine),
            );
        }
        for (kind, message) in conn_warnings(t, &who) {
            push(Some(t.id), kind, message);
        }
        // A gateway that did not start in the state of the testbed's first trial (a
        // testbed fwbench does not rebuild, after a trial left a legacy table).
        if t.stored.clean_start == Some(false) {
            let diffs: Vec<&str> = t
                .stored
                .start_differences
                .iter()
                .map(String::as_str)
                .collect();
            push(
                Some(t.id),
                "dirty-gateway",
                format!(
                    "{who} ran on a gateway not clean at start: {}",
                    if diffs.is_empty() {
                        "differences not recorded".to_string()
                    } else {
                        diffs.join("; ")
                    }
                ),
            );
        }
    }
    // Rates set by fwbench's own sender or sink: once per role, with what to do.
    for message in findings::fwbench_limit_warnings(trials) {
        push(None, "fwbench-limit", message);
    }
    // The machine's noise is said once beside the findings (`noise`); a configuration
    // that varied far more than the run's others is warned of.
    let spread = noise::Spread::of(configs);
    for x in spread.standouts() {
        push(None, "unstable", spread.standout_message(x));
    }
    w
}

/// A `cost-fit` warning for every cost line that does not describe its data (see
/// [`throughput::line_problem`]): never shown as ok. Not where the series' segments
/// answer instead (their finding keeps the line's flag and reason).
fn fit_warnings(run_id: i64, analysis: &Analysis) -> Vec<Warning> {
    let answered = |series: &str| {
        analysis
            .segments
            .iter()
            .any(|s| s.series == series && s.merged.iter().any(|x| x.ci95.is_some()))
    };
    analysis
        .fits
        .iter()
        .filter(|f| !answered(&f.series))
        .flat_map(|f| {
            f.estimates.iter().filter_map(move |e| {
                Some(Warning {
                    run_id,
                    trial_id: None,
                    kind: "cost-fit".into(),
                    message: format!(
                        "cost model of {} ({}): {}",
                        f.series,
                        e.estimator.label(),
                        e.problem.as_ref()?
                    ),
                })
            })
        })
        .collect()
}

/// Warnings of a connection trial: corrupt data (client or server side) and failed
/// sessions with their error messages.
fn conn_warnings(t: &Trial, who: &str) -> Vec<(&'static str, String)> {
    let Some(c) = model::conn_of(t) else {
        return vec![];
    };
    let n = |x: Option<f64>| x.filter(|x| *x >= 0.0 && x.fract() == 0.0).unwrap_or(0.0) as u64;
    let mut w = Vec::new();
    let (sessions, failed, corrupt) = (n(c.sessions), n(c.failed), n(c.corrupt));
    if corrupt > 0 {
        w.push((
            "corrupt",
            format!(
                "DATA CORRUPTION: {who}: {corrupt} of {} sessions received bytes that differ \
                 from the generated pattern (lost, duplicated, reordered or truncated data)",
                sessions + failed
            ),
        ));
    }
    let bad = c.server.as_ref().and_then(|s| s.bad_requests).unwrap_or(0);
    // With gateway events an update cuts sessions off mid-request (the measurement:
    // the trial is not flagged for them, as for its failures): no corruption claimed.
    if bad > 0 && t.p.events.is_some() {
        w.push((
            "bad-requests",
            format!(
                "{who}: the server received {bad} requests whose bytes did not match the \
                 pattern or the protocol — with gateway events, sessions an update cut off \
                 in their request (counted in the events' loss), or data corrupted on the way"
            ),
        ));
    } else if bad > 0 && bad <= failed && c.hold.is_none() {
        // Sessions the client gave up on may be cut off in their request (one each, at
        // most; held connections send none): as fwbench's doubt of the trial says,
        // corruption is one cause of several.
        w.push((
            "bad-requests",
            format!(
                "{who}: the server received {bad} requests whose bytes did not match the \
                 pattern or the protocol — data corrupted on the way, something other than \
                 fwbench's client talking to the server, or some of the {failed} sessions \
                 the client gave up on, cut off in their request"
            ),
        ));
    } else if bad > 0 {
        w.push((
            "corrupt",
            format!(
                "DATA CORRUPTION: {who}: the server received {bad} requests whose bytes did \
                 not match the pattern or the protocol (or something other than fwbench's \
                 client talked to the server)"
            ),
        ));
    }
    if failed > 0 {
        let errors: Vec<String> = c
            .errors
            .iter()
            .map(|(text, n)| format!("{text} ×{n}"))
            .collect();
        let errors = if errors.is_empty() {
            String::new()
        } else {
            format!(": {}", errors.join("; "))
        };
        w.push((
            "sessions-failed",
            format!(
                "{who}: {failed} of {} sessions failed{errors}",
                sessions + failed
            ),
        ));
    }
    w
}

impl Report {
    /// One self-contained HTML page (inline CSS and SVG, no scripts, no URLs).
    pub fn html(&self) -> String {
        html::page(self)
    }

    /// The tables, fits and warnings as Markdown (no figures, their data as tables).
    pub fn markdown(&self) -> String {
        export::markdown(self)
    }

    /// One CSV row per trial; columns documented in [`export::csv_trials`].
    pub fn csv_trials(&self) -> String {
        export::csv_trials(self)
    }

    /// One CSV row per metric sample of every trial of the report's runs.
    pub fn csv_samples(&self, store: &Store) -> Result<String, ReportError> {
        export::csv_samples(self, store)
    }

    /// Runs, configurations with metric aggregates, fits and figures as JSON.
    pub fn json(&self) -> serde_json::Value {
        export::json(self)
    }

    /// Every ok trial's metrics in the OpenMetrics text format, and what had to be left
    /// out (one line each); see [`openmetrics`].
    pub fn openmetrics(&self) -> (String, Vec<String>) {
        openmetrics::openmetrics(self)
    }

    /// Each run's findings and tables as Markdown with their provenance (run, date,
    /// fwbench commit, machine): what `docs/seeds.md` pastes.
    pub fn markdown_tables(&self) -> String {
        export::markdown_tables(self)
    }

    /// Each run's findings and warnings (many of a kind in one line) as plain text: the
    /// answer, for a terminal.
    pub fn text(&self) -> String {
        text::findings_text(self)
    }

    /// Every warning of every run.
    pub fn warnings(&self) -> impl Iterator<Item = &Warning> {
        self.runs.iter().flat_map(|r| r.warnings.iter())
    }
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
