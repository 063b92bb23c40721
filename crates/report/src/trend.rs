//! `fwbench trend`: many runs over time. Every run's configurations are lined up (the
//! key [`crate::compare`] matches by: the parameters without the seed), ordered by a
//! key the user picks (run time, fwbench commit, kernel, a `--tag`, any recorded host
//! fact), and per configuration and metric the history is split into constant
//! segments by FD.io CSIT's MDL grouping ([`crate::jumpavg`]); each change between
//! segments is a regression or a progression by the metric's direction, with its size
//! and 95 % CI.
//!
//! Owns: the ordering key, the series, the change points and their witness, the exit
//! decision's input (regressions that start the newest segment) and the renderings
//! (text, Markdown, JSON, CSV, HTML with one figure per series).
//! Must not: read the store itself (the caller loads the runs with [`crate::load`]) or
//! decide exit codes (it counts what fails).

use crate::compare::{better, label_of, varying_keys, Better};
use crate::contents::RunReport;
use crate::figure::{mean_ci, Figure, Marker, Point, Series as Line};
use crate::jumpavg;
use crate::model::Config;
use crate::stats::{self, Summary};
use crate::svg::escape;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write;
use store::RunRow;

/// What orders the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum By {
    /// The run's start time (UTC).
    Time,
    /// The fwbench commit the run was made with (ordered by run time).
    Commit,
    /// The controller's kernel release (ordered as versions: 6.9 < 6.18).
    Kernel,
    /// A label given at run time (`--tag NAME=…`).
    Tag(String),
    /// Any recorded host fact (`hostname`, `cpu_model`, `cores`, `fwbench_version`,
    /// `sysctl.NAME`, `tool.NAME`, `mitigation.NAME`, … or a fact's last part alone: `nft`).
    Fact(String),
}

impl By {
    /// `time`, `commit`, `kernel`, `tag:NAME`, `fact:NAME`.
    pub fn parse(s: &str) -> Result<By, String> {
        let named = |what: &str, name: &str| {
            if name.is_empty() {
                Err(format!("--by {s}: {what}: needs a NAME ({what}:NAME)"))
            } else {
                Ok(name.to_string())
            }
        };
        match s.split_once(':') {
            None if s == "time" => Ok(By::Time),
            None if s == "commit" => Ok(By::Commit),
            None if s == "kernel" => Ok(By::Kernel),
            Some(("tag", n)) => named("tag", n).map(By::Tag),
            Some(("fact", n)) => named("fact", n).map(By::Fact),
            _ => Err(format!(
                "--by {s}: not one of time, commit, kernel, tag:NAME, fact:NAME"
            )),
        }
    }

    /// As given on the command line.
    pub fn name(&self) -> String {
        match self {
            By::Time => "time".into(),
            By::Commit => "commit".into(),
            By::Kernel => "kernel".into(),
            By::Tag(n) => format!("tag:{n}"),
            By::Fact(n) => format!("fact:{n}"),
        }
    }

    /// The run's value of this key (`None`: the run does not have it).
    pub fn value(&self, run: &RunRow) -> Option<String> {
        match self {
            By::Time => Some(run.started_at.clone()),
            By::Commit => Some(commit_of(&run.host.fwbench_version)),
            By::Kernel => Some(run.host.kernel.clone()),
            By::Tag(n) => run
                .tags
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone()),
            By::Fact(n) => {
                let facts = facts(run);
                facts
                    .iter()
                    .find(|(k, _)| k == n)
                    .or_else(|| {
                        let mut leaf = facts
                            .iter()
                            .filter(|(k, _)| k.split_once('.').is_some_and(|(_, l)| l == n));
                        let one = leaf.next();
                        // A last part shared by two facts names neither.
                        leaf.next().is_none().then_some(one).flatten()
                    })
                    .map(|(_, v)| v.clone())
            }
        }
    }

    /// Whether runs are ordered by their start time rather than by the value.
    fn by_time(&self) -> bool {
        matches!(self, By::Time | By::Commit)
    }
}

/// `abc123` from `0.1.0 (commit abc123, built …)`; the whole text otherwise.
fn commit_of(version: &str) -> String {
    version
        .split_once("(commit ")
        .and_then(|(_, r)| r.split([',', ')']).next())
        .unwrap_or(version)
        .trim()
        .to_string()
}

/// Every recorded fact of a run's host, by dotted name: the store's one map of them
/// (`store::Host::facts`: `kernel`, `cpu_model`, `tool.NAME`, `sysctl.NAME`,
/// `mitigation.NAME`, …), so a fact recorded by a later version is a key here too.
pub fn facts(run: &RunRow) -> Vec<(String, String)> {
    run.host.facts().into_iter().collect()
}

/// Versions and numbers in their order: digit runs compared as numbers (`6.9` <
/// `6.18`, `run 2` < `run 11`), a leading `-` and a number as a number below zero
/// (`-10` < `-3.5` < `-3.2` < `-3` < `2`; a leading `+` is the number's), the rest as
/// text; spaces around are not read. A total order (a sort never meets a cycle): a
/// number below zero sorts below every digit run, and beside text as its text does.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    /// A run of a text: a leading number below zero (`-3.5`: its value and text),
    /// digits, or text.
    enum Run<'a> {
        Below(f64, &'a str),
        Digits(&'a str),
        Text(&'a str),
    }
    fn runs(s: &str) -> Vec<Run<'_>> {
        let s = s.trim();
        let s = match s.strip_prefix('+') {
            Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => r,
            _ => s,
        };
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut start = 0;
        // A leading "-" before a number (digits, a point and digits) is one value.
        if b.len() > 1 && b[0] == b'-' && b[1].is_ascii_digit() {
            let digits = |from: usize| (from..b.len()).find(|&i| !b[i].is_ascii_digit());
            let mut end = digits(1).unwrap_or(b.len());
            if end + 1 < b.len() && b[end] == b'.' && b[end + 1].is_ascii_digit() {
                end = digits(end + 1).unwrap_or(b.len());
            }
            let v = s[..end].parse::<f64>().unwrap_or(f64::NEG_INFINITY);
            out.push(Run::Below(v, &s[..end]));
            start = end;
        }
        for i in start + 1..=b.len() {
            if i == b.len() || b[i].is_ascii_digit() != b[start].is_ascii_digit() {
                out.push(if b[start].is_ascii_digit() {
                    Run::Digits(&s[start..i])
                } else {
                    Run::Text(&s[start..i])
                });
                start = i;
            }
        }
        out
    }
    let magnitude = |m: &str, n: &str| {
        let (m, n) = (m.trim_start_matches('0'), n.trim_start_matches('0'));
        m.len().cmp(&n.len()).then_with(|| m.cmp(n))
    };
    let (x, y) = (runs(a), runs(b));
    for (p, q) in x.iter().zip(&y) {
        let o = match (p, q) {
            (Run::Digits(m), Run::Digits(n)) => magnitude(m, n),
            (Run::Below(v, _), Run::Below(w, _)) => v.total_cmp(w),
            (Run::Below(..), Run::Digits(_)) => Ordering::Less,
            (Run::Digits(_), Run::Below(..)) => Ordering::Greater,
            // Beside text, a number below zero compares as its text ("-3.5").
            (Run::Below(_, t), Run::Text(u)) => t.cmp(u),
            (Run::Text(t), Run::Below(_, u)) => t.cmp(u),
            (Run::Text(t) | Run::Digits(t), Run::Text(u) | Run::Digits(u)) => t.cmp(u),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    x.len().cmp(&y.len()).then_with(|| a.cmp(b))
}

/// Which metrics of each configuration are followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metrics {
    /// Each configuration's headline metric (its kind's main metric).
    Main,
    /// Every metric the configuration measured.
    All,
    /// These, where measured.
    Named(Vec<String>),
}

/// One run as the caller loaded it.
pub struct Input<'a> {
    /// The results file (as found).
    pub file: String,
    pub run: &'a RunReport,
}

/// A run in the trend, in order.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub key: String,
    pub file: String,
    pub run: i64,
    pub started_at: String,
    pub scenario: String,
    pub kernel: String,
    pub fwbench_version: String,
    pub tags: BTreeMap<String, String>,
}

/// One run's value of a series: the mean over the run's repetitions of the
/// configuration with its 95 % CI (none with one repetition).
#[derive(Debug, Clone, Serialize)]
pub struct TrendPoint {
    /// Index of the run in [`Trend::runs`].
    pub run_index: usize,
    pub key: String,
    pub n: usize,
    pub mean: f64,
    pub ci95: Option<f64>,
    /// The repetitions' values (the samples the segments are made of).
    pub values: Vec<f64>,
    /// Repetitions left out: fwbench's own sender or sink limited them, so their
    /// numbers are fwbench's, not the gateway's.
    #[serde(skip_serializing_if = "is_zero")]
    pub left_out: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A constant stretch of a series: points `first..=last`.
#[derive(Debug, Clone, Serialize)]
pub struct Segment {
    pub first: usize,
    pub last: usize,
    pub from_key: String,
    pub to_key: String,
    /// Mean over every sample of the segment's runs, with its 95 % CI (Student t over
    /// those samples; none with one sample).
    pub mean: f64,
    pub ci95: Option<f64>,
    pub samples: usize,
}

/// A change between two consecutive segments.
#[derive(Debug, Clone, Serialize)]
pub struct ChangePoint {
    /// The first point of the new segment.
    pub at: usize,
    /// The key value of the run where it happened.
    pub key: String,
    pub file: String,
    pub run: i64,
    /// `regression`, `progression` (by the metric's direction) or `change` (a metric
    /// without a direction).
    pub kind: &'static str,
    pub from_mean: f64,
    pub to_mean: f64,
    /// new − old with its 95 % CI (Welch over the two segments' samples).
    pub delta: f64,
    pub ci95: Option<f64>,
    /// Welch's two-sided p over the two segments' samples, where testable.
    pub p: Option<f64>,
    /// (new − old) / old in % and its CI in % of old (`None` when old is 0).
    pub pct: Option<f64>,
    pub pct_ci95: Option<f64>,
    /// |pct| ≥ the threshold (or old is 0).
    pub beyond_threshold: bool,
    /// It starts the newest segment.
    pub newest: bool,
    /// Why it may not be stated: no CI (a segment of one sample), a CI spanning 0.
    pub doubt: Vec<String>,
    /// A regression starting the newest segment, beyond the threshold, without doubt:
    /// what makes `fwbench trend` exit 1.
    pub fails: bool,
}

impl ChangePoint {
    /// "−35 % ± 3.1 %" (the absolute change when old is 0).
    pub fn change_text(&self) -> String {
        let (v, ci, unit) = match self.pct {
            Some(p) => (p, self.pct_ci95, " %"),
            None => (self.delta, self.ci95, ""),
        };
        match ci.and_then(|c| crate::figure::round_ci(v, c)) {
            Some((v, c)) => format!("{}{v}{unit} ± {c}{unit}", plus(&v)),
            None => {
                let t = crate::figure::num(v);
                format!("{}{t}{unit}", plus(&t))
            }
        }
    }
}

fn plus(v: &str) -> &'static str {
    if !v.starts_with('-') && v.chars().any(|d| ('1'..='9').contains(&d)) {
        "+"
    } else {
        ""
    }
}

/// One configuration's metric over the runs.
#[derive(Debug, Clone, Serialize)]
pub struct TrendSeries {
    pub config: String,
    pub label: String,
    pub metric: String,
    pub better: Option<Better>,
    pub points: Vec<TrendPoint>,
    pub segments: Vec<Segment>,
    pub changes: Vec<ChangePoint>,
    /// Why no change point could be looked for (fewer than 2 runs).
    pub note: Option<String>,
}

/// The whole trend.
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    pub by: String,
    pub threshold_pct: f64,
    pub method: &'static str,
    /// What each point's and segment's CI is over.
    pub unit: &'static str,
    pub runs: Vec<RunInfo>,
    /// Runs left out, with why (no value of the key).
    pub skipped: Vec<String>,
    pub series: Vec<TrendSeries>,
    /// Series the newest run measured but has no point of (fwbench limited most of
    /// its repetitions, or every one): the gate cannot judge them — exit 3, as
    /// `compare`'s untested (a gate never passes on nothing).
    pub unjudged: Vec<String>,
}

const METHOD: &str = "FD.io CSIT jumpavg: minimum description length grouping into \
                      constant segments (normal samples per segment; resolution: the \
                      largest sample as 12 significant bits)";
const UNIT: &str = "a point is one run: the mean over its repetitions of the configuration, \
                    95 % CI over those repetitions (none with one); a segment's mean and \
                    CI are over every sample of its runs; a change is new − old mean of the \
                    segments' run means, its 95 % CI over runs (Welch's over the run means, \
                    or one run against the other segment's run-to-run spread)";

impl Trend {
    /// Line up `inputs` by `by`, follow `metrics` and find the change points.
    pub fn new(inputs: &[Input], by: &By, metrics: &Metrics, threshold_pct: f64) -> Trend {
        let mut runs: Vec<(String, &Input)> = Vec::new();
        let mut skipped = Vec::new();
        for i in inputs {
            match by.value(&i.run.run) {
                Some(k) => runs.push((k, i)),
                None => skipped.push(format!("{} run {}: no {}", i.file, i.run.run.id, by.name())),
            }
        }
        let time = |i: &Input| (i.run.run.started_at.clone(), i.file.clone(), i.run.run.id);
        runs.sort_by(|(ka, a), (kb, b)| {
            let first = if by.by_time() {
                Ordering::Equal
            } else {
                natural_cmp(ka, kb)
            };
            first.then_with(|| time(a).cmp(&time(b)))
        });
        let infos: Vec<RunInfo> = runs
            .iter()
            .map(|(k, i)| {
                let r = &i.run.run;
                RunInfo {
                    key: k.clone(),
                    file: i.file.clone(),
                    run: r.id,
                    started_at: r.started_at.clone(),
                    scenario: r.scenario.clone(),
                    kernel: r.host.kernel.clone(),
                    fwbench_version: r.host.fwbench_version.clone(),
                    tags: r.tags.iter().cloned().collect(),
                }
            })
            .collect();
        // Configurations in order of first appearance, with every run's. A search's
        // steps are its guesses (`results.step_of`), no configuration asked for: followed
        // from run to run they would read as regressions of nothing asked (as compare
        // leaves them out).
        let mut order: Vec<&Config> = Vec::new();
        let mut steps: Vec<&str> = Vec::new();
        for (_, i) in &runs {
            for c in i.run.configs.iter().filter(|c| !c.reps.is_empty()) {
                if c.step_of().is_some() {
                    if !steps.contains(&c.key.as_str()) {
                        steps.push(&c.key);
                    }
                } else if !order.iter().any(|o| o.key == c.key) {
                    order.push(c);
                }
            }
        }
        // A key some run asked for is followed there (its steps elsewhere are not).
        steps.retain(|k| !order.iter().any(|o| o.key == *k));
        if !steps.is_empty() {
            skipped.push(format!(
                "{} configuration{} whose every repetition was a search's step (its guesses, \
                 no configuration asked for): not followed",
                steps.len(),
                if steps.len() == 1 { "" } else { "s" }
            ));
        }
        let varying = varying_keys(&order);
        let mut series = Vec::new();
        let mut unjudged = Vec::new();
        for c in &order {
            let names: Vec<String> = match metrics {
                Metrics::Main => crate::model::main_metric(c)
                    .map(|(m, _)| vec![m.to_string()])
                    .unwrap_or_default(),
                Metrics::All => c.values.keys().cloned().collect(),
                Metrics::Named(n) => n.clone(),
            };
            let main_higher = crate::model::main_metric(c);
            for m in names {
                let dir = better(&m).or_else(|| {
                    main_higher.filter(|(mm, _)| *mm == m).map(|(_, h)| {
                        if h {
                            Better::Higher
                        } else {
                            Better::Lower
                        }
                    })
                });
                let mut points = Vec::new();
                // The newest run measured it, but gave no point: why.
                let mut newest_gone = None;
                for (idx, (k, i)) in runs.iter().enumerate() {
                    let Some(rc) = i
                        .run
                        .configs
                        .iter()
                        .find(|x| x.key == c.key && x.step_of().is_none())
                    else {
                        continue;
                    };
                    let before = skipped.len();
                    // Only the repetitions whose numbers are the gateway's.
                    let values: Vec<f64> = rc
                        .gateway_values
                        .get(&m)
                        .map(|v| v.iter().copied().filter(|x| x.is_finite()).collect())
                        .unwrap_or_default();
                    let left_out = rc.left_out(&m);
                    if !values.is_empty() && !rc.fair_metric(&m) {
                        // What fwbench's limit left is no fair sample: no point, said.
                        skipped.push(format!(
                            "{} run {}: {} {m}: fwbench limited most of its repetitions \
                             ({} of {} kept: no fair sample; no point)",
                            i.file,
                            i.run.run.id,
                            label_of(c, &varying),
                            rc.gateway_values.get(&m).map_or(0, Vec::len),
                            rc.values.get(&m).map_or(0, Vec::len)
                        ));
                    } else if let Some(s) = Summary::of(&values) {
                        points.push(TrendPoint {
                            run_index: idx,
                            key: k.clone(),
                            n: s.n,
                            mean: s.mean,
                            ci95: s.ci95,
                            values,
                            left_out,
                        });
                    } else if left_out > 0 && rc.values.contains_key(&m) {
                        // No point, said: not a run that measured nothing.
                        skipped.push(format!(
                            "{} run {}: {} {m}: no repetition fwbench did not limit measured \
                             it ({left_out} limited; no point)",
                            i.file,
                            i.run.run.id,
                            label_of(c, &varying)
                        ));
                    }
                    if newest_of_its_kind(&infos, idx) && skipped.len() > before {
                        newest_gone = skipped.last().cloned();
                    }
                }
                if let Some(why) = newest_gone {
                    unjudged.push(why);
                }
                if points.is_empty() {
                    continue;
                }
                series.push(segmented(
                    c,
                    label_of(c, &varying),
                    m,
                    dir,
                    points,
                    &infos,
                    threshold_pct,
                ));
            }
        }
        Trend {
            by: by.name(),
            threshold_pct,
            method: METHOD,
            unit: UNIT,
            runs: infos,
            skipped,
            series,
            unjudged,
        }
    }

    /// The regressions that fail (start the newest segment, beyond the threshold,
    /// without doubt): "label metric at KEY: change".
    pub fn failing(&self) -> Vec<String> {
        self.series
            .iter()
            .flat_map(|s| {
                s.changes.iter().filter(|c| c.fails).map(move |c| {
                    format!(
                        "{}: {} at {}={}: {}",
                        s.label,
                        s.metric,
                        self.by,
                        c.key,
                        c.change_text()
                    )
                })
            })
            .collect()
    }

    /// Regressions starting the newest segment beyond the threshold that are not
    /// stated for a doubt (printed, never passed silently).
    pub fn doubtful(&self) -> Vec<String> {
        self.series
            .iter()
            .flat_map(|s| {
                s.changes
                    .iter()
                    .filter(|c| {
                        c.newest && c.kind == "regression" && c.beyond_threshold && !c.fails
                    })
                    .map(move |c| {
                        format!(
                            "{}: {} at {}={}: {} ({})",
                            s.label,
                            s.metric,
                            self.by,
                            c.key,
                            c.change_text(),
                            c.doubt.join("; ")
                        )
                    })
            })
            .collect()
    }

    /// 1 when a regression fails, else 0.
    /// 1: a regression fails; else 3: some series the newest run measured could not be
    /// judged there ([`Trend::unjudged`]); else 0.
    pub fn exit_code(&self) -> u8 {
        if !self.failing().is_empty() {
            1
        } else if !self.unjudged.is_empty() {
            3
        } else {
            0
        }
    }

    fn changes(&self) -> usize {
        self.series.iter().map(|s| s.changes.len()).sum()
    }

    /// The last line of every rendering.
    pub fn summary(&self) -> String {
        let failing = self.failing();
        let mut s = format!(
            "Summary: {} run(s), {} series, {} change point(s); {} regression(s) starting \
             the newest segment beyond {} %",
            self.runs.len(),
            self.series.len(),
            self.changes(),
            failing.len(),
            crate::figure::num(self.threshold_pct)
        );
        if !failing.is_empty() {
            let _ = write!(s, ": {}", failing.join("; "));
        }
        let doubt = self.doubtful();
        if !doubt.is_empty() {
            let _ = write!(
                s,
                "; NOT STATED (doubt), regression beyond the threshold in the newest \
                 segment: {}",
                doubt.join("; ")
            );
        }
        if !self.unjudged.is_empty() {
            let _ = write!(
                s,
                "; NOT JUDGED in the newest run (no point: exit 3 unless a regression \
                 fails): {}",
                self.unjudged.join("; ")
            );
        }
        let _ = write!(s, "; exit {}.", self.exit_code());
        s
    }

    /// Plain text for a terminal.
    pub fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "fwbench trend: {} run(s) ordered by {}; change points by FD.io CSIT jumpavg (MDL)",
            self.runs.len(),
            self.by,
        );
        for s in &self.skipped {
            let _ = writeln!(o, "  left out: {s}");
        }
        let failing = self.failing();
        if !failing.is_empty() {
            let _ = writeln!(o, "\nREGRESSIONS ({}):", failing.len());
            for f in &failing {
                let _ = writeln!(o, "  {f}");
            }
        }
        for s in &self.series {
            let _ = writeln!(o, "\n{}  {}{}", s.label, s.metric, arrow(s.better));
            if let Some(n) = &s.note {
                let _ = writeln!(o, "  {n}");
            }
            for (i, g) in s.segments.iter().enumerate() {
                if let Some(c) = s.changes.iter().find(|c| c.at == g.first) {
                    let _ = writeln!(o, "  {}", change_line(c, &self.by));
                }
                let _ = writeln!(
                    o,
                    "  segment {}: {}={} … {} ({} run(s), {} sample(s)): {}",
                    i + 1,
                    self.by,
                    g.from_key,
                    g.to_key,
                    g.last - g.first + 1,
                    g.samples,
                    mean_ci(g.mean, g.ci95)
                );
            }
            let pts: Vec<String> = s
                .points
                .iter()
                .map(|p| {
                    let left = match p.left_out {
                        0 => String::new(),
                        k => format!(", {k} limited by fwbench left out"),
                    };
                    format!("{}: {} (n={}{left})", p.key, mean_ci(p.mean, p.ci95), p.n)
                })
                .collect();
            let _ = writeln!(o, "  points: {}", pts.join(", "));
        }
        let _ = writeln!(o, "\n{}", self.summary());
        o
    }

    /// Markdown.
    pub fn markdown(&self) -> String {
        let mut o = format!(
            "# fwbench trend\n\n{} run(s) ordered by `{}`. Method: {}. Statistics: {}.\n",
            self.runs.len(),
            self.by,
            METHOD,
            UNIT
        );
        for s in &self.skipped {
            let _ = writeln!(o, "* left out: {}", md(s));
        }
        for s in &self.series {
            let _ = writeln!(
                o,
                "\n## {} — {}{}\n",
                md(&s.label),
                s.metric,
                arrow(s.better)
            );
            if let Some(n) = &s.note {
                let _ = writeln!(o, "{n}\n");
            }
            o.push_str(
                "| segment | from | to | runs | mean (95 % CI) |\n|---:|---|---|---:|---:|\n",
            );
            for cells in segment_cells(s) {
                let cells: Vec<String> = cells.iter().map(|c| md(c)).collect();
                let _ = writeln!(o, "| {} |", cells.join(" | "));
            }
            if !s.changes.is_empty() {
                o.push_str(
                    "\n| at | change | size (95 % CI) | p | doubt |\n|---|---|---:|---|---|\n",
                );
                for c in &s.changes {
                    let _ = writeln!(
                        o,
                        "| {}={} | {} | {} | {} | {} |",
                        self.by,
                        md(&c.key),
                        if c.fails {
                            "**REGRESSION**".to_string()
                        } else {
                            c.kind.to_string()
                        },
                        c.change_text(),
                        c.p.map(p_text).unwrap_or_else(|| "-".into()),
                        md(&c.doubt.join("; "))
                    );
                }
            }
        }
        let _ = writeln!(o, "\n{}", md(&self.summary()));
        o
    }

    /// One row per point: its series, run, value and segment.
    pub fn csv(&self) -> String {
        use crate::export::csv_field as f;
        let mut o = String::from(
            "config,metric,point,key,file,run,n,left_out,mean,ci95,segment,segment_mean,change,\
             change_pct,change_pct_ci95,p,doubt,fails\n",
        );
        for s in &self.series {
            for (i, p) in s.points.iter().enumerate() {
                let seg = s
                    .segments
                    .iter()
                    .position(|g| (g.first..=g.last).contains(&i));
                let change = s.changes.iter().find(|c| c.at == i);
                let r = &self.runs[p.run_index];
                let cells = [
                    f(&s.label),
                    f(&s.metric),
                    i.to_string(),
                    f(&p.key),
                    f(&r.file),
                    r.run.to_string(),
                    p.n.to_string(),
                    p.left_out.to_string(),
                    p.mean.to_string(),
                    p.ci95.map(|c| c.to_string()).unwrap_or_default(),
                    seg.map(|g| (g + 1).to_string()).unwrap_or_default(),
                    seg.map(|g| s.segments[g].mean.to_string())
                        .unwrap_or_default(),
                    change.map(|c| c.kind.to_string()).unwrap_or_default(),
                    change
                        .and_then(|c| c.pct)
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                    change
                        .and_then(|c| c.pct_ci95)
                        .map(|c| c.to_string())
                        .unwrap_or_default(),
                    change
                        .and_then(|c| c.p)
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                    f(&change.map(|c| c.doubt.join("; ")).unwrap_or_default()),
                    change.map(|c| c.fails.to_string()).unwrap_or_default(),
                ];
                let _ = writeln!(o, "{}", cells.join(","));
            }
        }
        o
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The figure of one series: each run's mean with its CI, each segment's mean as
    /// a dashed horizontal line, each change point marked with its key.
    pub fn figure(&self, i: usize) -> Figure {
        let s = &self.series[i];
        let measured = Line {
            name: s.metric.clone(),
            points: s
                .points
                .iter()
                .enumerate()
                .map(|(x, p)| Point {
                    x: x as f64,
                    y: p.mean,
                    ci95: p.ci95,
                })
                .collect(),
            fit: false,
        };
        let mut lines = vec![measured];
        for (n, g) in s.segments.iter().enumerate() {
            lines.push(Line {
                name: format!("segment {}: {}", n + 1, crate::figure::num(g.mean)),
                points: vec![
                    Point {
                        x: g.first as f64 - 0.4,
                        y: g.mean,
                        ci95: None,
                    },
                    Point {
                        x: g.last as f64 + 0.4,
                        y: g.mean,
                        ci95: None,
                    },
                ],
                fit: true,
            });
        }
        let mut f = Figure::line(
            &format!("trend-{i}"),
            &format!("{} — {}", s.label, s.metric),
            (&format!("run (ordered by {})", self.by), &s.metric),
            lines,
        );
        f.markers = s
            .changes
            .iter()
            .map(|c| Marker {
                x: c.at as f64 - 0.5,
                text: format!("{} {}={}", c.kind, self.by, c.key),
            })
            .collect();
        let keys: Vec<String> = s
            .points
            .iter()
            .enumerate()
            .map(|(x, p)| format!("{x}: {}", p.key))
            .collect();
        f.notes = vec![format!("Runs: {}.", keys.join(", "))];
        f
    }

    /// A self-contained HTML page: one figure per series, then its segments and
    /// change points.
    pub fn html(&self) -> String {
        let mut o = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fwbench trend</title>",
        );
        let _ = write!(
            o,
            "<style>{}\ntr.fail td{{background:#f8c9c4;font-weight:bold}}tr.regression td{{background:#fdecea}}tr.progression td{{background:#e8f5e9}}</style></head><body><h1>fwbench trend</h1>",
            crate::html::CSS
        );
        let _ = write!(
            o,
            "<p>{} run(s) ordered by <code>{}</code>. Method: {}. Statistics: {}.</p>",
            self.runs.len(),
            escape(&self.by),
            escape(METHOD),
            escape(UNIT)
        );
        let failing = self.failing();
        if !failing.is_empty() {
            o.push_str("<div class=\"bad\"><b>Regressions starting the newest segment:</b><ul>");
            for f in &failing {
                let _ = write!(o, "<li>{}</li>", escape(f));
            }
            o.push_str("</ul></div>");
        }
        if !self.skipped.is_empty() {
            o.push_str("<p>Left out:</p><ul>");
            for s in &self.skipped {
                let _ = write!(o, "<li>{}</li>", escape(s));
            }
            o.push_str("</ul>");
        }
        for (i, s) in self.series.iter().enumerate() {
            let _ = write!(
                o,
                "<h2>{} — {}{}</h2>",
                escape(&s.label),
                escape(&s.metric),
                arrow(s.better)
            );
            let f = self.figure(i);
            let _ = write!(o, "<figure>{}", crate::svg::render(&f));
            for n in &f.notes {
                let _ = write!(o, "<figcaption>{}</figcaption>", escape(n));
            }
            o.push_str("</figure>");
            if let Some(n) = &s.note {
                let _ = write!(o, "<p>{}</p>", escape(n));
            }
            o.push_str("<table><tr><th>segment</th><th>from</th><th>to</th><th>runs</th><th>mean (95 % CI)</th></tr>");
            for [n, from, to, runs, mean] in segment_cells(s) {
                let _ = write!(
                    o,
                    "<tr><td>{n}</td><td>{}</td><td>{}</td><td class=\"n\">{runs}</td><td class=\"n\">{}</td></tr>",
                    escape(&from),
                    escape(&to),
                    escape(&mean)
                );
            }
            o.push_str("</table>");
            if !s.changes.is_empty() {
                o.push_str("<table><tr><th>at</th><th>change</th><th>size (95 % CI)</th><th>p</th><th>doubt</th></tr>");
                for c in &s.changes {
                    let class = if c.fails { "fail" } else { c.kind };
                    let _ = write!(
                        o,
                        "<tr class=\"{class}\"><td>{}={}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
                        escape(&self.by),
                        escape(&c.key),
                        if c.fails { "REGRESSION" } else { c.kind },
                        escape(&c.change_text()),
                        c.p.map(p_text).unwrap_or_else(|| "-".into()),
                        escape(&c.doubt.join("; "))
                    );
                }
                o.push_str("</table>");
            }
        }
        let _ = writeln!(o, "<p>{}</p></body></html>", escape(&self.summary()));
        o
    }
}

/// A series' segments as table cells: number, from, to, runs, mean (95 % CI) — the
/// same in Markdown and HTML, each escaping its own way.
fn segment_cells(s: &TrendSeries) -> Vec<[String; 5]> {
    s.segments
        .iter()
        .enumerate()
        .map(|(i, g)| {
            [
                (i + 1).to_string(),
                g.from_key.clone(),
                g.to_key.clone(),
                (g.last - g.first + 1).to_string(),
                mean_ci(g.mean, g.ci95),
            ]
        })
        .collect()
}

fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

fn arrow(b: Option<Better>) -> &'static str {
    match b {
        Some(Better::Higher) => " (↑)",
        Some(Better::Lower) => " (↓)",
        None => "",
    }
}

fn change_line(c: &ChangePoint, by: &str) -> String {
    let what = if c.fails {
        "REGRESSION".to_string()
    } else {
        c.kind.to_string()
    };
    let p =
        c.p.map(|p| format!(", p={}", p_text(p)))
            .unwrap_or_default();
    let doubt = if c.doubt.is_empty() {
        String::new()
    } else {
        format!(" [doubt: {}]", c.doubt.join("; "))
    };
    format!(
        "{what} at {by}={} ({} run {}): {} → {}, {}{p}{doubt}",
        c.key,
        c.file,
        c.run,
        crate::figure::num(c.from_mean),
        crate::figure::num(c.to_mean),
        c.change_text()
    )
}

/// Whether no later run of the history is of the same scenario (or command) as run
/// `i`: what a later run of its kind does not measure was taken out of it, while runs
/// of other kinds in the same history (a nightly scenario beside per-commit floods)
/// never measured it — so "newest" is per kind, not the one last run.
fn newest_of_its_kind(runs: &[RunInfo], i: usize) -> bool {
    !runs[i + 1..].iter().any(|r| r.scenario == runs[i].scenario)
}

/// Segment one series and classify its change points.
fn segmented(
    c: &Config,
    label: String,
    metric: String,
    dir: Option<Better>,
    points: Vec<TrendPoint>,
    runs: &[RunInfo],
    threshold_pct: f64,
) -> TrendSeries {
    let samples: Vec<Vec<f64>> = points.iter().map(|p| p.values.clone()).collect();
    let (groups, note) = if points.len() < 2 {
        (
            vec![(0, points.len())],
            Some("one run: no change point can be looked for".to_string()),
        )
    } else {
        (
            jumpavg::classify(&samples, None)
                .into_iter()
                .map(|g| (g.start, g.end))
                .collect(),
            None,
        )
    };
    let pooled = |a: usize, b: usize| -> Vec<f64> { samples[a..b].concat() };
    let segments: Vec<Segment> = groups
        .iter()
        .map(|&(a, b)| {
            let v = pooled(a, b);
            let s = Summary::of(&v);
            Segment {
                first: a,
                last: b - 1,
                from_key: points[a].key.clone(),
                to_key: points[b - 1].key.clone(),
                mean: s.map(|s| s.mean).unwrap_or(f64::NAN),
                ci95: s.and_then(|s| s.ci95),
                samples: v.len(),
            }
        })
        .collect();
    let mut changes = Vec::new();
    for (w, g) in groups.windows(2).enumerate() {
        // The unit of a change is the run (its mean over its repetitions): how far a
        // rerun moves is more than one run's repetitions say (placement, residue, the
        // machine's load between runs).
        let run_means =
            |(a, b): (usize, usize)| -> Vec<f64> { points[a..b].iter().map(|p| p.mean).collect() };
        let (old, new) = (run_means(g[0]), run_means(g[1]));
        let Some(diff) = stats::run_difference(&old, &new) else {
            continue;
        };
        let (Some(from), Some(to)) = (stats::mean(&old), stats::mean(&new)) else {
            continue;
        };
        let kind = match dir {
            None => "change",
            Some(Better::Higher) if to < from => "regression",
            Some(Better::Lower) if to > from => "regression",
            Some(_) => "progression",
        };
        let pct = (from != 0.0).then(|| diff.delta / from.abs() * 100.0);
        let pct_ci95 = diff
            .ci95
            .and_then(|c| (from != 0.0).then(|| c / from.abs() * 100.0));
        let mut doubt = Vec::new();
        match diff.ci95 {
            None if old.len() == 1 && new.len() == 1 => {
                doubt.push("no CI: one run a side (the unit is the run)".to_string())
            }
            None => doubt.push(format!(
                "no CI: no spread between the runs (n={}+{} runs): no test",
                old.len(),
                new.len()
            )),
            Some(ci) if diff.delta.abs() <= ci => doubt.push("its 95 % CI spans 0".to_string()),
            Some(_) => {}
        }
        let beyond = pct.is_none_or(|p| p.abs() >= threshold_pct);
        // The newest segment of the history, not only of the series: a series the newest
        // runs no longer measure (a configuration taken out) fails no later gate.
        let newest =
            w + 2 == groups.len() && newest_of_its_kind(runs, points[g[1].1 - 1].run_index);
        let at = g[1].0;
        let r = &runs[points[at].run_index];
        changes.push(ChangePoint {
            at,
            key: points[at].key.clone(),
            file: r.file.clone(),
            run: r.run,
            kind,
            from_mean: from,
            to_mean: to,
            delta: diff.delta,
            ci95: diff.ci95,
            p: diff.welch.map(|w| w.p),
            pct,
            pct_ci95,
            beyond_threshold: beyond,
            newest,
            fails: newest && kind == "regression" && beyond && doubt.is_empty(),
            doubt,
        });
    }
    TrendSeries {
        config: c.key.clone(),
        label,
        metric,
        better: dir,
        points,
        segments,
        changes,
        note,
    }
}

#[cfg(test)]
#[path = "trend_tests.rs"]
mod tests;
