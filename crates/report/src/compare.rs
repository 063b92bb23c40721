//! `fwbench compare`: two or more runs side by side, as benchstat does for Go
//! benchmarks. Configurations are matched across runs by their parameters (the trial
//! seed and the run left out: the same key [`crate::model::configs`] groups
//! repetitions by), and per metric the change of each later run against the first is
//! given with its 95 % confidence interval and Welch's t-test over the repetitions.
//!
//! Owns: the matching, the per-metric verdicts (which direction is better, what counts
//! as a regression) and the four renderings (text, Markdown, HTML, JSON).
//! Must not: read the store itself (the caller loads each side with [`crate::load`]) or
//! decide exit codes (it says how many regressions fail the threshold).

use crate::contents::RunReport;
use crate::figure::num;
use crate::model::Config;
use crate::stats::{self, Difference, Summary};
use crate::svg::escape;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Significance level of the tests (two-sided).
pub const ALPHA: f64 = 0.05;

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
}

/// The direction of a metric: rates and counts of work done are better higher;
/// latencies, loss, jitter, costs and CPU shares are better lower. `None` for metrics
/// with no direction (they are shown, never called regressions).
pub fn better(metric: &str) -> Option<Better> {
    const HIGHER: &[&str] = &[
        "throughput_bps",
        "throughput_per_client_bps",
        "transactions_per_s",
        "received_pps",
        "sent_pps",
        "sessions_per_s",
        "goodput_bps",
        "net_goodput_bps",
        "hold_reached",
        "new_flows_per_s",
        crate::envelope::METRIC,
    ];
    if HIGHER.contains(&metric) {
        return Some(Better::Higher);
    }
    let lower = metric.starts_with("rtt_")
        || metric.ends_with("_us")
        || metric.ends_with("_ms")
        || metric.ends_with(".softirq")
        || metric.ends_with(".violations")
        || matches!(
            metric,
            "loss_ratio" | "ns_per_packet" | "cpu_ns_per_packet" | "elapsed_s" | "ct_dropped_flows"
        );
    lower.then_some(Better::Lower)
}

/// What the caller loaded for one side: a name, the results file it came from
/// (canonical path, to notice a run compared with itself) and one or more runs whose
/// repetitions are pooled by configuration.
pub struct Input<'a> {
    /// `FILE`, `FILE:RUN`, `FILE:all` or `FILE:1,3` as given.
    pub name: String,
    /// The results file, canonical (two sides with the same file and runs are one data set).
    pub file: String,
    pub runs: Vec<&'a RunReport>,
}

/// One side of a comparison: where it came from and on what it ran.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// As given (`FILE`, `FILE:RUN`, `FILE:all`, `FILE:1,3`).
    pub name: String,
    /// The results file (canonical path).
    pub file: String,
    /// The runs pooled on this side (their repetitions of a configuration are one sample).
    pub runs: Vec<i64>,
    pub scenario: String,
    pub started_at: String,
    pub hostname: String,
    pub kernel: String,
    pub cpu: String,
    pub fwbench_version: String,
    /// Trials in the run (any status).
    pub trials: usize,
}

impl Side {
    /// The side of `input`: each field lists the distinct values of its runs.
    pub fn of(input: &Input) -> Side {
        let distinct = |f: &dyn Fn(&RunReport) -> String| {
            let mut v: Vec<String> = Vec::new();
            for r in &input.runs {
                let x = f(r);
                if !v.contains(&x) {
                    v.push(x);
                }
            }
            v.join(", ")
        };
        Side {
            name: input.name.clone(),
            file: input.file.clone(),
            runs: input.runs.iter().map(|r| r.run.id).collect(),
            scenario: distinct(&|r| r.run.scenario.clone()),
            started_at: distinct(&|r| r.run.started_at.clone()),
            hostname: distinct(&|r| r.run.host.hostname.clone()),
            kernel: distinct(&|r| r.run.host.kernel.clone()),
            cpu: distinct(&|r| format!("{} ({} cores)", r.run.host.cpu_model, r.run.host.cores)),
            fwbench_version: distinct(&|r| r.run.host.fwbench_version.clone()),
            trials: input.runs.iter().map(|r| r.trials.len()).sum(),
        }
    }

    /// "run 3" or "runs 1, 2, 3".
    pub fn runs_text(&self) -> String {
        let ids: Vec<String> = self.runs.iter().map(i64::to_string).collect();
        format!(
            "run{} {}",
            if ids.len() == 1 { "" } else { "s" },
            ids.join(", ")
        )
    }
}

/// One metric of one matched configuration: old (first run) against new.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub metric: String,
    pub better: Option<Better>,
    pub old: Summary,
    pub new: Summary,
    /// new − old with its 95 % CI and Welch's test (repetitions are the unit).
    pub diff: Difference,
    /// (new − old) / old in %, and the CI half-width in % of old (`None` when old is 0).
    pub pct: Option<f64>,
    pub pct_ci95: Option<f64>,
    /// Welch p < [`ALPHA`].
    pub significant: bool,
    /// `better`, `worse` (significant, in the metric's good/bad direction), `same` (tested
    /// and not significant, or identical values on both sides with n ≥ 2), `changed`
    /// (significant, metric without a direction) or `untested` (no test possible: fewer
    /// than 2 repetitions on a side, or no spread on either side with different means).
    /// An untested change is never `same`.
    pub verdict: &'static str,
    /// A significant worsening at least the threshold (or from 0, where no % exists).
    pub fails: bool,
    /// Untested, and in the metric's bad direction by at least the threshold: a
    /// regression that might be real (named in the summary line).
    pub untested_worse: bool,
}

impl Change {
    fn of(metric: &str, old: &[f64], new: &[f64], threshold_pct: f64) -> Option<Change> {
        let (so, sn) = (Summary::of(old)?, Summary::of(new)?);
        let diff = stats::difference(old, new)?;
        let pct = (so.mean != 0.0).then(|| diff.delta / so.mean.abs() * 100.0);
        let pct_ci95 = diff
            .ci95
            .and_then(|c| (so.mean != 0.0).then(|| c / so.mean.abs() * 100.0));
        let significant = diff.welch.is_some_and(|w| w.p < ALPHA);
        // Without a test only samples of 2 or more a side, every value the same, are
        // "same" (3 zeros against 5 zeros too).
        let alike = old.iter().chain(new).all(|x| *x == old[0]);
        let untested = diff.welch.is_none() && !(so.n >= 2 && sn.n >= 2 && alike);
        let dir = better(metric);
        let worsening = match dir {
            Some(Better::Higher) => diff.delta < 0.0,
            Some(Better::Lower) => diff.delta > 0.0,
            None => false,
        };
        let verdict = match (untested, significant, dir) {
            (true, _, _) => "untested",
            (false, false, _) => "same",
            (false, true, None) => "changed",
            (false, true, Some(_)) if !worsening => "better",
            (false, true, Some(_)) => "worse",
        };
        let beyond = pct.is_none_or(|p| p.abs() >= threshold_pct);
        let fails = verdict == "worse" && beyond;
        let untested_worse = untested && worsening && beyond;
        Some(Change {
            metric: metric.to_string(),
            better: dir,
            old: so,
            new: sn,
            diff,
            pct,
            pct_ci95,
            significant,
            verdict,
            fails,
            untested_worse,
        })
    }

    /// "+10.2 % ± 3.1 %" (or the absolute change when old is 0), rounded to the CI's
    /// two significant digits; without a CI to 2 decimals (a %) or 4 significant digits.
    pub fn change_text(&self) -> String {
        let (value, ci, unit) = match self.pct {
            Some(p) => (p, self.pct_ci95, " %"),
            None => (self.diff.delta, self.diff.ci95, ""),
        };
        let (v, c) = match ci.and_then(|c| crate::figure::round_ci(value, c)) {
            Some((v, c)) => (v, format!(" ± {c}{unit}")),
            None if self.pct.is_some() => (num(round_to(value, 2)), String::new()),
            None => (num(value), String::new()),
        };
        // "+" on a rise that still reads as one after rounding.
        let sign = if value > 0.0 && v.chars().any(|d| ('1'..='9').contains(&d)) {
            "+"
        } else {
            ""
        };
        format!("{sign}{v}{unit}{c}")
    }

    /// "p=0.003 (n=5+5)", or why there is no test.
    pub fn test_text(&self) -> String {
        match self.diff.welch {
            Some(w) => format!("p={} (n={}+{})", p_text(w.p), self.old.n, self.new.n),
            None if self.old.n < 2 || self.new.n < 2 => {
                format!("no test (n={}+{})", self.old.n, self.new.n)
            }
            None => format!("no spread (n={}+{})", self.old.n, self.new.n),
        }
    }
}

/// Round to `d` decimals (for percentages: 10.0012 → 10).
fn round_to(v: f64, d: i32) -> f64 {
    let f = 10f64.powi(d);
    (v * f).round() / f
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// A configuration present on both sides, with its per-metric changes.
#[derive(Debug, Clone, Serialize)]
pub struct Matched {
    pub key: String,
    /// The workload and the parameters that vary between the configurations compared.
    pub label: String,
    pub changes: Vec<Change>,
    /// Repetitions left out of the changes: those fwbench's own sender or sink limited
    /// ("left out: 2 of old's 4 repetitions, limited by fwbench's sink …"), whose
    /// numbers are fwbench's, not the gateway's. `None`: none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
    /// The two sides' data paths ran on different CPUs ("placed differently: …"): a
    /// change may be the placement's as much as the gateway's (said, as hosts or
    /// kernels that differ are; the gate is unchanged). `None`: placed alike.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placed: Option<String>,
    /// Metrics both sides measured but not compared: a side kept no repetition of them
    /// that fwbench did not limit, or fewer than half ([`Config::fair_metric`]). Counted
    /// as untested (exit 3): a gate never passes on nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<String>,
}

impl Matched {
    /// What the line under its label says, in order: what was left out, a placement
    /// that differs, what was not compared.
    fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self.left_out.iter().chain(&self.placed).cloned().collect();
        out.extend(self.not_compared_text());
        out
    }

    /// "not compared, untested (fwbench's sender or sink limited every repetition of a
    /// side, or most: …): …".
    fn not_compared_text(&self) -> Option<String> {
        (!self.not_compared.is_empty()).then(|| {
            format!(
                "not compared, untested (fwbench's sender or sink limited every \
                 repetition of a side that measured it, or most: what is left is no fair \
                 sample): {}",
                self.not_compared.join(", ")
            )
        })
    }
}

/// The first run against one later run.
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub old: Side,
    pub new: Side,
    /// Both sides are the same runs of the same file: the comparison says nothing.
    pub itself: bool,
    pub matched: Vec<Matched>,
    /// Configurations only in the old run / only in the new one (labels).
    pub only_old: Vec<String>,
    pub only_new: Vec<String>,
    /// Significant regressions at least the threshold.
    pub failing: usize,
    /// Changes that could not be tested (verdict `untested`).
    pub untested: usize,
    /// Untested worsenings of at least the threshold: "label: metric change (n=a+b)".
    pub untested_worse: Vec<String>,
}

/// A whole comparison: the first side against each of the others.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub alpha: f64,
    pub threshold_pct: f64,
    /// What the statistics are over (said in every rendering).
    pub unit: &'static str,
    pub pairs: Vec<Pair>,
}

const UNIT: &str = "the repetitions (trials) of a configuration: each trial's value is one \
                    observation; change = new − old with its 95 % CI (Welch–Satterthwaite \
                    df), p from Welch's two-sided t-test";

impl Comparison {
    /// Compare `sides[0]` with each later side. `threshold_pct`: the least relative
    /// worsening that fails (`--threshold`).
    pub fn new(sides: &[Input], threshold_pct: f64) -> Comparison {
        let mut pairs = Vec::new();
        if let Some((first, rest)) = sides.split_first() {
            for r in rest {
                pairs.push(pair(first, r, threshold_pct));
            }
        }
        Comparison {
            alpha: ALPHA,
            threshold_pct,
            unit: UNIT,
            pairs,
        }
    }

    /// Significant regressions at least the threshold, over every pair.
    pub fn failing(&self) -> usize {
        self.pairs.iter().map(|p| p.failing).sum()
    }

    /// Untested changes, over every pair.
    pub fn untested(&self) -> usize {
        self.pairs.iter().map(|p| p.untested).sum()
    }

    /// Untested worsenings of at least the threshold, over every pair.
    pub fn untested_worse(&self) -> Vec<String> {
        self.pairs
            .iter()
            .flat_map(|p| p.untested_worse.iter().cloned())
            .collect()
    }

    /// Some pair compares a data set with itself.
    pub fn itself(&self) -> bool {
        self.pairs.iter().any(|p| p.itself)
    }

    /// The exit code the comparison asks for: 1 a failing regression, else 3 an
    /// untested change (nothing was measured well enough to pass), else 0.
    pub fn exit_code(&self) -> u8 {
        if self.failing() > 0 {
            1
        } else if self.untested() > 0 {
            3
        } else {
            0
        }
    }

    /// Configurations matched, over every pair.
    pub fn matched(&self) -> usize {
        self.pairs.iter().map(|p| p.matched.len()).sum()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// Plain text for a terminal (the default).
    pub fn text(&self) -> String {
        let mut o = String::new();
        for p in &self.pairs {
            let _ = writeln!(o, "old  {}", side_line(&p.old));
            let _ = writeln!(o, "new  {}", side_line(&p.new));
            if p.itself {
                let _ = writeln!(o, "     {}", ITSELF);
            }
            if p.old.kernel != p.new.kernel || p.old.hostname != p.new.hostname {
                let _ = writeln!(
                    o,
                    "     (hosts or kernels differ: {} {} → {} {})",
                    p.old.hostname, p.old.kernel, p.new.hostname, p.new.kernel
                );
            }
            let failing: Vec<String> = p
                .matched
                .iter()
                .flat_map(|m| {
                    m.changes
                        .iter()
                        .filter(|c| c.fails)
                        .map(move |c| format!("{}: {} {}", m.label, c.metric, c.change_text()))
                })
                .collect();
            if !failing.is_empty() {
                let _ = writeln!(o, "\nREGRESSIONS ({}):", failing.len());
                for f in &failing {
                    let _ = writeln!(o, "  {f}");
                }
            }
            for m in &p.matched {
                let _ = writeln!(o, "\n{}", m.label);
                for l in m.notes() {
                    let _ = writeln!(o, "  ({l})");
                }
                let rows: Vec<[String; 6]> = m.changes.iter().map(row).collect();
                let mut w = [0usize; 6];
                for r in &rows {
                    for (i, c) in r.iter().enumerate() {
                        w[i] = w[i].max(c.chars().count());
                    }
                }
                for r in &rows {
                    let mut line = String::from("  ");
                    for (i, c) in r.iter().enumerate() {
                        let pad = w[i] - c.chars().count();
                        if i == 0 || i == 5 {
                            let _ = write!(line, "{c}{}  ", " ".repeat(pad));
                        } else {
                            let _ = write!(line, "{}{c}  ", " ".repeat(pad));
                        }
                    }
                    let _ = writeln!(o, "{}", line.trim_end());
                }
            }
            unmatched(&mut o, "only in old", &p.only_old);
            unmatched(&mut o, "only in new", &p.only_new);
            let _ = writeln!(o);
        }
        let _ = writeln!(o, "{}", self.footer());
        o
    }

    fn footer(&self) -> String {
        let mut s = format!(
            "Statistics over {}. Significant: p < {}. A regression fails (exit 1) when it \
             is significant and at least {} % worse; {} did.",
            self.unit,
            self.alpha,
            num(self.threshold_pct),
            self.failing()
        );
        s.push_str(&format!("\n{}", self.summary()));
        s
    }

    /// The summary line: failing, untested (with the untested worsenings beyond the
    /// threshold named), a run compared with itself, and the exit code.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "Summary: {} failing regression(s), {} untested change(s)",
            self.failing(),
            self.untested()
        );
        let worse = self.untested_worse();
        if !worse.is_empty() {
            let _ = write!(
                s,
                "; UNTESTED beyond the threshold (need ≥ 2 repetitions a side: pool runs or \
                 --repeat): {}",
                worse.join("; ")
            );
        }
        if self.itself() {
            let _ = write!(s, "; {ITSELF}");
        }
        let _ = write!(s, "; exit {}.", self.exit_code());
        s
    }

    /// Markdown.
    pub fn markdown(&self) -> String {
        let mut o = String::from("# fwbench compare\n\n");
        for p in &self.pairs {
            let _ = writeln!(o, "| | old | new |\n|---|---|---|");
            for (k, a, b) in side_rows(&p.old, &p.new) {
                let _ = writeln!(o, "| {k} | {} | {} |", md(&a), md(&b));
            }
            for m in &p.matched {
                let _ = writeln!(o, "\n## {}\n", md(&m.label));
                for l in m.notes() {
                    let _ = writeln!(o, "({})\n", md(&l));
                }
                let _ = writeln!(
                    o,
                    "| metric | old | new | change (95 % CI) | test | verdict |\n|---|---:|---:|---:|---|---|"
                );
                for c in &m.changes {
                    let r = row(c);
                    let _ = writeln!(
                        o,
                        "| {} | {} | {} | {} | {} | {} |",
                        md(&r[0]),
                        r[1],
                        r[2],
                        r[3],
                        md(&r[4]),
                        if c.fails {
                            "**REGRESSION**".to_string()
                        } else {
                            r[5].clone()
                        }
                    );
                }
            }
            for (what, list) in [("only in old", &p.only_old), ("only in new", &p.only_new)] {
                if !list.is_empty() {
                    let _ = writeln!(o, "\n{} ({}):\n", what, list.len());
                    for l in list {
                        let _ = writeln!(o, "* {}", md(l));
                    }
                }
            }
            o.push('\n');
        }
        let _ = writeln!(o, "{}", md(&self.footer()));
        o
    }

    /// A self-contained HTML page.
    pub fn html(&self) -> String {
        let mut o = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>fwbench compare</title><style>\
             body{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em}\
             table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em}\
             td.n{text-align:right;font-variant-numeric:tabular-nums}\
             tr.worse td{background:#fdecea}tr.fail td{background:#f8c9c4;font-weight:bold}\
             tr.better td{background:#e8f5e9}</style></head><body><h1>fwbench compare</h1>",
        );
        for p in &self.pairs {
            o.push_str("<table><tr><th></th><th>old</th><th>new</th></tr>");
            for (k, a, b) in side_rows(&p.old, &p.new) {
                let _ = write!(
                    o,
                    "<tr><th>{}</th><td>{}</td><td>{}</td></tr>",
                    escape(k),
                    escape(&a),
                    escape(&b)
                );
            }
            o.push_str("</table>");
            for m in &p.matched {
                let _ = write!(o, "<h2>{}</h2>", escape(&m.label));
                for l in m.notes() {
                    let _ = write!(o, "<p>({})</p>", escape(&l));
                }
                let _ = write!(o, "<table><tr><th>metric</th><th>old</th><th>new</th><th>change (95 % CI)</th><th>test</th><th>verdict</th></tr>");
                for c in &m.changes {
                    let r = row(c);
                    let class = if c.fails { "fail" } else { c.verdict };
                    let _ = write!(
                        o,
                        "<tr class=\"{class}\"><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
                        escape(&r[0]),
                        escape(&r[1]),
                        escape(&r[2]),
                        escape(&r[3]),
                        escape(&r[4]),
                        escape(&r[5])
                    );
                }
                o.push_str("</table>");
            }
            for (what, list) in [("Only in old", &p.only_old), ("Only in new", &p.only_new)] {
                if !list.is_empty() {
                    let _ = write!(o, "<h3>{what} ({})</h3><ul>", list.len());
                    for l in list {
                        let _ = write!(o, "<li>{}</li>", escape(l));
                    }
                    o.push_str("</ul>");
                }
            }
        }
        let _ = writeln!(o, "<p>{}</p></body></html>", escape(&self.footer()));
        o
    }
}

fn side_line(s: &Side) -> String {
    format!(
        "{}  {} ({}, {})  host {}  kernel {}  {}  fwbench {}",
        s.name,
        s.runs_text(),
        s.scenario,
        s.started_at,
        s.hostname,
        s.kernel,
        s.cpu,
        s.fwbench_version
    )
}

fn side_rows(a: &Side, b: &Side) -> Vec<(&'static str, String, String)> {
    vec![
        ("results", a.name.clone(), b.name.clone()),
        ("runs", a.runs_text(), b.runs_text()),
        ("scenario", a.scenario.clone(), b.scenario.clone()),
        ("started", a.started_at.clone(), b.started_at.clone()),
        ("host", a.hostname.clone(), b.hostname.clone()),
        ("kernel", a.kernel.clone(), b.kernel.clone()),
        ("CPU", a.cpu.clone(), b.cpu.clone()),
        ("file", a.file.clone(), b.file.clone()),
        (
            "fwbench",
            a.fwbench_version.clone(),
            b.fwbench_version.clone(),
        ),
        ("trials", a.trials.to_string(), b.trials.to_string()),
    ]
}

fn unmatched(o: &mut String, what: &str, list: &[String]) {
    if !list.is_empty() {
        let _ = writeln!(o, "\n{what} ({}), not compared:", list.len());
        for l in list {
            let _ = writeln!(o, "  {l}");
        }
    }
}

fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

/// metric, old, new, change, test, verdict.
fn row(c: &Change) -> [String; 6] {
    let dir = match c.better {
        Some(Better::Higher) => " (↑)",
        Some(Better::Lower) => " (↓)",
        None => "",
    };
    [
        format!("{}{dir}", c.metric),
        crate::figure::mean_ci(c.old.mean, c.old.ci95),
        crate::figure::mean_ci(c.new.mean, c.new.ci95),
        c.change_text(),
        c.test_text(),
        if c.fails {
            "REGRESSION".into()
        } else if c.untested_worse {
            "untested, worse beyond threshold".into()
        } else {
            c.verdict.into()
        },
    ]
}

const ITSELF: &str = "NOTE: both sides are the same runs of the same file: a run compared \
                      with itself (nothing was compared)";

/// The configurations of `runs` with their repetitions pooled by key, in the order
/// of first appearance.
fn pooled(runs: &[&RunReport]) -> Vec<Config> {
    let mut out: Vec<Config> = Vec::new();
    for r in runs {
        // A search's steps are its guesses: compared between runs they would read as
        // regressions of configurations nobody asked for.
        for c in r
            .configs
            .iter()
            .filter(|c| !c.reps.is_empty() && c.step_of().is_none())
        {
            match out.iter_mut().find(|o| o.key == c.key) {
                Some(o) => {
                    o.reps.extend(c.reps.iter().cloned());
                    for (m, v) in &c.values {
                        o.values.entry(m.clone()).or_default().extend(v);
                    }
                    for (m, v) in &c.gateway_values {
                        o.gateway_values.entry(m.clone()).or_default().extend(v);
                    }
                }
                None => out.push(c.clone()),
            }
        }
    }
    out
}

/// "left out: the rates of 2 of old's 4 repetitions (sink) and all 4 of new's
/// repetitions (sender), limited by fwbench, …"; `None` when none was.
fn left_out(old: &Config, new: &Config) -> Option<String> {
    let mut parts = vec![];
    for (side, c) in [("old", old), ("new", new)] {
        if let Some(l) = c.fwbench_limit() {
            let roles = l.roles();
            parts.push(if l.all() {
                format!("all {} of {side}'s repetitions ({roles})", l.of)
            } else {
                format!("{} of {side}'s {} repetitions ({roles})", l.limited, l.of)
            });
        }
    }
    (!parts.is_empty()).then(|| {
        format!(
            "left out: the rates of {}, limited by fwbench, not by the gateway (their \
             rates are fwbench's limit)",
            parts.join(" and ")
        )
    })
}

/// "placed differently: old's data path on CPUs [0], new's on CPUs [1] — …"; `None`
/// where both sides ran on the same CPUs (as `nat` sets a baseline only against a
/// configuration placed as it was).
fn placed(old: &Config, new: &Config) -> Option<String> {
    let (a, b) = (
        crate::model::placements([old]),
        crate::model::placements([new]),
    );
    let words = |p: &BTreeSet<String>| p.iter().cloned().collect::<Vec<_>>().join(" / ");
    (a != b).then(|| {
        format!(
            "placed differently: old's data path on {}, new's on {} — a change may be the \
             placement's as much as the gateway's",
            words(&a),
            words(&b)
        )
    })
}

/// Compare one pair of sides.
fn pair(old_in: &Input, new_in: &Input, threshold_pct: f64) -> Pair {
    let (old_cfgs, new_cfgs) = (pooled(&old_in.runs), pooled(&new_in.runs));
    let by_key = |cs: &[Config]| -> BTreeMap<String, Config> {
        cs.iter().map(|c| (c.key.clone(), c.clone())).collect()
    };
    let (a, b) = (by_key(&old_cfgs), by_key(&new_cfgs));
    let all: Vec<&Config> = a.values().chain(b.values()).collect();
    let varying = varying_keys(&all);
    let label = |c: &Config| label_of(c, &varying);
    let mut matched = Vec::new();
    // Keep the old run's table order.
    for c in old_cfgs.iter().filter(|c| b.contains_key(&c.key)) {
        if !a.contains_key(&c.key) {
            continue;
        }
        let n = &b[&c.key];
        // Only the repetitions whose numbers are the gateway's: one that fwbench's
        // sender or sink limited would be a change of fwbench's.
        let changes: Vec<Change> = c
            .gateway_values
            .iter()
            .filter(|(m, _)| c.fair_metric(m) && n.fair_metric(m))
            .filter_map(|(m, v)| Change::of(m, v, n.gateway_values.get(m)?, threshold_pct))
            .collect();
        let not_compared = c
            .values
            .keys()
            .filter(|m| n.values.contains_key(*m))
            .filter(|m| !c.fair_metric(m) || !n.fair_metric(m))
            .cloned()
            .collect();
        matched.push(Matched {
            key: c.key.clone(),
            label: label(c),
            changes,
            left_out: left_out(c, n),
            placed: placed(c, n),
            not_compared,
        });
    }
    let only = |x: &BTreeMap<String, Config>, y: &BTreeMap<String, Config>| {
        x.values()
            .filter(|c| !y.contains_key(&c.key))
            .map(label)
            .collect::<Vec<_>>()
    };
    let failing = matched
        .iter()
        .flat_map(|m| &m.changes)
        .filter(|c| c.fails)
        .count();
    let untested = matched
        .iter()
        .flat_map(|m| &m.changes)
        .filter(|c| c.verdict == "untested")
        .count()
        + matched.iter().map(|m| m.not_compared.len()).sum::<usize>();
    let untested_worse = matched
        .iter()
        .flat_map(|m| {
            m.changes.iter().filter(|c| c.untested_worse).map(move |c| {
                format!(
                    "{}: {} {} ({})",
                    m.label,
                    c.metric,
                    c.change_text(),
                    c.test_text()
                )
            })
        })
        .collect();
    let (old, new) = (Side::of(old_in), Side::of(new_in));
    let itself = old.file == new.file && {
        let (mut x, mut y) = (old.runs.clone(), new.runs.clone());
        x.sort_unstable();
        y.sort_unstable();
        x == y
    };
    Pair {
        old,
        new,
        itself,
        untested,
        untested_worse,
        only_old: only(&a, &b),
        only_new: only(&b, &a),
        matched,
        failing,
    }
}

/// Parameters whose values differ between the configurations (or that some lack).
pub(crate) fn varying_keys(configs: &[&Config]) -> Vec<String> {
    let keys: BTreeSet<&String> = configs.iter().flat_map(|c| c.flat.keys()).collect();
    keys.into_iter()
        .filter(|k| {
            let vals: BTreeSet<Option<&String>> = configs.iter().map(|c| c.flat.get(*k)).collect();
            vals.len() > 1
        })
        .cloned()
        .collect()
}

/// "flood engine=nft rules=100": the workload and the parameters that vary.
pub(crate) fn label_of(c: &Config, varying: &[String]) -> String {
    let mut s = c.workload.to_string();
    for k in varying {
        if k == "workload" {
            continue;
        }
        if let Some(v) = c.flat.get(k) {
            let _ = write!(s, " {k}={v}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions() {
        assert_eq!(better("received_pps"), Some(Better::Higher));
        // Conntrack (issue 26): more admitted new flows is better, more refused worse.
        assert_eq!(better("new_flows_per_s"), Some(Better::Higher));
        assert_eq!(better("ct_dropped_flows"), Some(Better::Lower));
        assert_eq!(better("rtt_p99_us"), Some(Better::Lower));
        assert_eq!(better("loss_ratio"), Some(Better::Lower));
        assert_eq!(better("gateway.cpu1.softirq"), Some(Better::Lower));
        assert_eq!(better("ttlb_mean_ms"), Some(Better::Lower));
        assert_eq!(better("something_else"), None);
    }

    #[test]
    fn a_planted_ten_percent_drop_is_a_failing_regression() {
        let old = [100.0, 101.0, 99.0, 100.5, 99.5];
        let new: Vec<f64> = old.iter().map(|v| v * 0.9).collect();
        let c = Change::of("received_pps", &old, &new, 5.0).unwrap();
        assert!((c.pct.unwrap() + 10.0).abs() < 1e-9, "{c:?}");
        assert_eq!(c.verdict, "worse");
        assert!(c.significant && c.fails);
        // The same drop with a 15 % threshold: significant, but it does not fail.
        assert!(!Change::of("received_pps", &old, &new, 15.0).unwrap().fails);
        // For a latency a drop is an improvement.
        let l = Change::of("rtt_p50_us", &old, &new, 5.0).unwrap();
        assert_eq!((l.verdict, l.fails), ("better", false));
        // Identical: same, p = 1.
        let s = Change::of("received_pps", &old, &old, 0.0).unwrap();
        assert_eq!((s.verdict, s.fails), ("same", false));
        assert_eq!(s.test_text(), "p=1.000 (n=5+5)");
        // One repetition a side: no test, never a regression, never "same": untested,
        // and a worsening beyond the threshold is flagged as such.
        let one = Change::of("received_pps", &[100.0], &[50.0], 5.0).unwrap();
        assert_eq!(
            (one.verdict, one.fails, one.untested_worse),
            ("untested", false, true)
        );
        assert_eq!(one.test_text(), "no test (n=1+1)");
        let up = Change::of("received_pps", &[100.0], &[150.0], 5.0).unwrap();
        assert_eq!((up.verdict, up.untested_worse), ("untested", false));
        // Identical single values are untested as well (nothing says they are alike).
        let eq1 = Change::of("received_pps", &[100.0], &[100.0], 5.0).unwrap();
        assert_eq!(eq1.verdict, "untested");
        // n ≥ 2 without spread: identical → same, different → untested.
        let eq = Change::of("hold_reached", &[1.0, 1.0], &[1.0, 1.0], 5.0).unwrap();
        assert_eq!(eq.verdict, "same");
        // Of other repetition counts too (once "untested": the slices differed in length).
        let eq = Change::of("loss_ratio", &[0.0; 3], &[0.0; 5], 5.0).unwrap();
        assert_eq!(eq.verdict, "same");
        let ne = Change::of("hold_reached", &[1.0, 1.0], &[0.0, 0.0], 5.0).unwrap();
        assert_eq!((ne.verdict, ne.untested_worse), ("untested", true));
        // Loss from 0: no %, the absolute change; significant and worse → fails.
        let z = Change::of("loss_ratio", &[0.0, 0.0, 0.0], &[0.1, 0.12, 0.11], 50.0).unwrap();
        assert!(z.pct.is_none() && z.fails, "{z:?}");
        assert!(z.change_text() == "+0.110 ± 0.025", "{}", z.change_text());
    }

    /// The change is printed to its CI's two significant digits, as every value with a
    /// CI (issue 23: no "−10.02 % ± 2.345 %").
    #[test]
    fn a_change_is_rounded_to_its_ci() {
        let old = [100.0, 101.0, 99.0, 100.5, 99.5];
        let new = [88.0, 92.0, 89.0, 91.3, 90.0];
        let c = Change::of("received_pps", &old, &new, 5.0).unwrap();
        let (p, ci) = (c.pct.unwrap(), c.pct_ci95.unwrap());
        let (pt, ct) = crate::figure::round_ci(p, ci).unwrap();
        assert_eq!(c.change_text(), format!("{pt} % ± {ct} %"), "{p} ± {ci}");
        assert_eq!(c.change_text(), "-9.9 % ± 2.0 %", "{p} ± {ci}");
        // The absolute change (old = 0) likewise.
        let z = Change::of("loss_ratio", &[0.0, 0.0, 0.0], &[0.1, 0.12, 0.11], 50.0).unwrap();
        let (dt, ct) = crate::figure::round_ci(z.diff.delta, z.diff.ci95.unwrap()).unwrap();
        assert_eq!(z.change_text(), format!("+{dt} ± {ct}"));
    }
}
