//! Connection workloads (seeds 003 and 004: `sessions`, `bulk`, `http`, `connections`):
//! download time vs rules with CIs over every download, A/B comparisons with Welch's
//! test and, when the arms ran as pairs of trials, the paired t-test (the verdict's), a
//! drift figure of each A/B (trial mean vs start time), seed 003's table and bars per firewall type (null firewall, packet filter,
//! proxy), the parallelism sweet spot, and the held-connections table.
//!
//! Owns: those figures and tables, and the connection columns of the trial CSV
//! ([`CSV_COLUMNS`]). Reads `results.conn` (and `results.ping` for seed
//! 003's ping rows) of stored trials.
//! Must not: compute anything a figure does not show, touch the store, or import
//! `analysis` (the top module that calls it) or `throughput`.

use crate::figure::{
    at_place_of, mean_ci, num, zero_slope_words, Analysis, Claim, Figure, Kind, Marker, Point,
    Series, Table, DENSE_POINTS,
};
use crate::model::Trial;
use crate::model::{self, conn_of, is_sweet_spot, search_of, Config};
use crate::series::{
    group, line_figure, metric, rules_axis, series_name, varying, without_redundant,
};
use crate::stats::{self, Pooled, Summary};
use results::stored::{ConnStored, Phase, SearchStored};
use results::{Status, StoredWorkload};
use std::collections::{BTreeMap, BTreeSet};

/// Significance level of the A/B tests.
pub const ALPHA: f64 = 0.05;

/// Most firewall types (columns) seed 003's table and bars show; beyond that the
/// configurations are a sweep, not a comparison of firewall types.
const MAX_FIREWALL_TYPES: usize = 12;

/// The connection columns of the trial CSV (`export::csv_trials`: `conn.` + a path
/// under `results.conn`), present only when the report holds connection trials
/// (durations in ns, as stored).
pub const CSV_COLUMNS: [&str; 34] = [
    "mode",
    "parallel",
    "sessions",
    "failed",
    "corrupt",
    "elapsed_s",
    "sessions_per_s",
    "bytes",
    "goodput_bps",
    "session.count",
    "session.mean_ns",
    "session.sd_ns",
    "session.p50_ns",
    "session.p99_ns",
    "connect.mean_ns",
    "ttfb.mean_ns",
    "ttlb.count",
    "ttlb.mean_ns",
    "ttlb.sd_ns",
    "ttlb.p50_ns",
    "ttlb.p90_ns",
    "ttlb.p99_ns",
    "ttlb.max_ns",
    "overhead.per_session_s",
    "overhead.overhead_s",
    "overhead.transfer_s",
    "overhead.net_goodput_bps",
    "hold.reached",
    "hold.limit",
    "hold.alive_at_stop",
    "hold.limiter",
    "hold.errno",
    "hold.open_ms",
    "server.bad_requests",
];

/// Add the connection workloads' figures and tables to a run's analysis.
pub fn analyse(configs: &[Config], trials: &[Trial], a: &mut Analysis) {
    let searches: Vec<&Config> = configs.iter().filter(|c| is_search(c)).collect();
    // A search's steps are measured at parallelisms it chose: they are its curve, not
    // cases of their own (seed 003's rows, A/B pairs).
    let conn: Vec<&Config> = configs
        .iter()
        .filter(|c| c.workload.is_conn() && !is_search(c) && !is_step(c, &searches))
        .collect();
    let ok = |w: StoredWorkload| -> Vec<&Config> {
        conn.iter()
            .copied()
            .filter(|c| c.workload == w && !c.reps.is_empty())
            .collect()
    };
    download_vs_rules(&ok(StoredWorkload::Http), a);
    ab_tables(&conn, a);
    ab_drift(&conn, trials, a);
    seed003(configs, &searches, a);
    proxy_buffers(&ok(StoredWorkload::Bulk), a);
    sweet_spot(trials, a);
    held_connections(&conn, a);
}

/// The study's appendix: the proxy's bulk goodput against its relay buffer (block) size,
/// a series per case, when a case ran the proxy with two buffer sizes or more; the
/// finding sets the smallest and the 16 KiB buffer side by side with the study's
/// 160 → 200 KB/s (2 KiB → 16 KiB, +25 %).
fn proxy_buffers(bulk: &[&Config], a: &mut Analysis) {
    let proxied: Vec<&Config> = bulk
        .iter()
        .copied()
        .filter(|c| topology(c) == "proxy" && c.param_f64("conn.proxy_buffer").is_some())
        .collect();
    let mut by_case: BTreeMap<String, Vec<&Config>> = BTreeMap::new();
    for c in &proxied {
        let case = c.label.clone().unwrap_or_else(|| "bulk".into());
        by_case.entry(case).or_default().push(c);
    }
    let mut series = Vec::new();
    for (case, cs) in by_case {
        let mut at: Vec<(Point, &Config)> = cs
            .iter()
            .filter_map(|c| {
                let (y, ci95) = metric(c, "goodput_bps", 1e-6)?;
                let x = c.param_f64("conn.proxy_buffer")? / 1024.0;
                Some((Point { x, y, ci95 }, *c))
            })
            .collect();
        at.sort_by(|p, q| p.0.x.total_cmp(&q.0.x));
        if at.len() < 2 {
            continue;
        }
        let (first, at16) = (&at[0], at.iter().find(|p| p.0.x == 16.0));
        if let Some((p16, c16)) = at16.filter(|p| p.0.x > first.0.x && first.0.y > 0.0) {
            let (first, c1) = first;
            for p in [&first, &p16] {
                a.claims.push(Claim::at(
                    format!("proxy bulk goodput: {case}, {} KiB buffer", num(p.x)),
                    p,
                    "Mb/s",
                    "repetitions",
                ));
            }
            a.findings.push(format!(
                "Proxy bulk goodput ({case}): {} Mb/s with a {} KiB buffer, {} Mb/s with \
                 16 KiB ({}); the study: 160 → 200 KB/s from 2 KiB to 16 KiB (+25 %).",
                mean_ci(first.y, first.ci95),
                num(first.x),
                mean_ci(p16.y, p16.ci95),
                change_pct(c1, c16, "goodput_bps")
            ));
        }
        series.push(Series {
            name: case,
            points: at.into_iter().map(|p| p.0).collect(),
            fit: false,
        });
    }
    if series.is_empty() {
        return;
    }
    let mut f = Figure::line(
        "conn-proxy-buffer",
        "Proxy bulk goodput vs relay buffer (the study's appendix)",
        ("proxy buffer (KiB)", "goodput (Mb/s)"),
        series,
    );
    f.notes
        .push("Mean over repetitions; whiskers: 95 % CI.".to_string());
    a.figures.push(f);
}

/// A sweet-spot search's own configuration (its steps are ordinary sessions trials).
fn is_search(c: &Config) -> bool {
    c.param_f64("conn.parallel") == Some(0.0) || c.all_trials().any(|t| search_of(t).is_some())
}

/// Is this configuration a step of one of the searches: the search's parameters with
/// the step's parallelism?
fn is_step(c: &Config, searches: &[&Config]) -> bool {
    let rest = |x: &Config| {
        let mut f = x.flat.clone();
        f.remove("conn.parallel");
        f
    };
    c.workload == StoredWorkload::Sessions
        && !is_search(c)
        && searches
            .iter()
            .any(|s| s.workload == c.workload && rest(s) == rest(c))
}

/// The per-session durations of a configuration pooled over its repetitions (`which`:
/// `session`, `connect`, `ttfb` or `ttlb`), in ns.
pub fn pooled(c: &Config, which: Phase) -> Option<Pooled> {
    let parts: Vec<(u64, f64, f64)> = c
        .reps
        .iter()
        .filter_map(|t| model::durations(t, which))
        .collect();
    stats::pool(&parts)
}

/// Pooled durations in ms as a plotted (mean, 95 % CI half-width).
fn pooled_ms(c: &Config, which: Phase) -> Option<(f64, Option<f64>)> {
    let p = pooled_in_ms(c, which)?;
    Some((p.mean, p.ci95()))
}

/// [`pooled`] in ms.
fn pooled_in_ms(c: &Config, which: Phase) -> Option<Pooled> {
    let p = pooled(c, which)?;
    Some(Pooled {
        n: p.n,
        mean: p.mean / 1e6,
        sd: p.sd / 1e6,
    })
}

/// Every stored per-session duration (`results.conn.session_us`) of the
/// configuration's repetitions, in ms.
pub fn session_samples_ms(c: &Config) -> Vec<f64> {
    c.reps
        .iter()
        .filter_map(conn_of)
        .flat_map(|r| &r.session_us)
        .map(|us| us / 1e3)
        .collect()
}

/// A duration in seconds for reading, in s, ms or µs.
fn secs(v: f64) -> String {
    secs_ci(v, None)
}

/// "mean ± ci" of a duration in seconds, both in the unit the mean reads best in.
fn secs_ci(v: f64, ci: Option<f64>) -> String {
    let (scale, unit) = if v.abs() >= 1.0 {
        (1.0, "s")
    } else if v.abs() >= 1e-3 {
        (1e3, "ms")
    } else {
        (1e6, "µs")
    };
    format!("{} {unit}", mean_ci(v * scale, ci.map(|c| c * scale)))
}

/// The mean session (s) over the repetitions: each trial's mean session time one value,
/// the CI over those — what a rerun gives. (A CI over every session of every trial
/// treats thousands of sessions as independent draws and shrinks ~30-fold below the
/// spread between trials: seed 003's proxy read 410 ± 22 µs with trials of 763, 249 and
/// 221 µs.)
pub fn session_over_reps(c: &Config) -> Option<Summary> {
    over_reps(c, |t| {
        model::durations(t, Phase::Session)
            .filter(|d| d.0 > 0)
            .map(|d| d.1 / 1e9)
    })
}

/// Mean ± CI over repetitions of a per-trial value.
fn over_reps(c: &Config, f: impl Fn(&Trial) -> Option<f64>) -> Option<Summary> {
    let v: Vec<f64> = c.reps.iter().filter_map(f).collect();
    Summary::of(&v)
}

/// A number of `results.conn`.
fn conn_num(t: &Trial, f: impl Fn(&ConnStored) -> Option<f64>) -> Option<f64> {
    f(conn_of(t)?)
}

// ---------------------------------------------------------------------------------
// Seed 004: download time vs rules.

/// HTTP download time vs rules, one series per engine/chain/label (whatever else
/// varies), y = mean over every download of every repetition with its 95 % CI (pooled
/// from each trial's `ttlb` summary), plus a least-squares line per series in the notes.
fn download_vs_rules(http: &[&Config], a: &mut Analysis) {
    let Some(x) = rules_axis(http) else {
        return;
    };
    let g = group(http, &["rules"]);
    let y = |c: &Config| pooled_ms(c, Phase::Ttlb);
    let Some(mut fig) = line_figure(
        "http-download-vs-rules",
        "HTTP download time vs rules (mean and 95 % CI over every download)",
        ("rules", "download time (ms)"),
        &g,
        &x,
        &y,
    ) else {
        return;
    };
    // A series of one point is a case, not a sweep (as for packet figures).
    if fig.series.iter().all(|s| s.points.len() < 2) {
        return;
    }
    for s in &fig.series {
        let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.y)).collect();
        let name = if s.name == "all" {
            String::new()
        } else {
            format!("{}: ", s.name)
        };
        let downloads: u64 = g
            .get(&s.name)
            .into_iter()
            .flatten()
            .filter_map(|c| pooled(c, Phase::Ttlb))
            .map(|p| p.n)
            .sum();
        let mut note = format!(
            "{name}{} rule counts, {downloads} downloads",
            s.points.len()
        );
        // No firewall, or a model that installs the same rules whatever the count: its
        // rule counts are one gateway, no cost per rule (as the packet cost model).
        let one_gateway = g
            .get(&s.name)
            .is_some_and(|cs| cs.iter().all(|c| c.ignores_rule_count()));
        if one_gateway {
            note.push_str("; no cost per rule (the same rules whatever the count)");
        }
        if let Some(f) = stats::fit_line(&pts).filter(|_| pts.len() >= 3 && !one_gateway) {
            let sign = if f.b < 0.0 { '−' } else { '+' };
            note.push_str(&format!(
                "; least squares: {} ms {sign} {} µs per rule (R² {:.3})",
                num(f.a),
                mean_ci(f.b.abs() * 1e3, f.b_ci95.map(|c| c * 1e3)),
                f.r2
            ));
            a.findings.push(download_sentence(
                &s.name,
                &f,
                s.points.len(),
                pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
            ));
            a.claims.push(Claim::new(
                format!("HTTP download time per rule: {}", s.name),
                f.b * 1e3,
                f.b_ci95.map(|c| c * 1e3),
                "µs per rule",
                format!("the line's residuals over {} rule counts", s.points.len()),
            ));
        }
        let downloads_ms: Vec<(f64, Pooled)> = g
            .get(&s.name)
            .into_iter()
            .flatten()
            .filter_map(|c| Some((x(c)?, pooled_in_ms(c, Phase::Ttlb)?)))
            .collect();
        note.push_str(&least_note(&downloads_ms).unwrap_or_default());
        if s.points.len() > DENSE_POINTS {
            note.push_str("; the 95 % CI is drawn as a band");
        }
        fig.notes.push(note);
    }
    a.figures.push(fig);
}

/// "; least mean at 58 rules (1.641 ms), not measurably below 0 rules' (2.372 ms) …":
/// of a series' (rules, downloads in ms), the least mean, and where it is not the fewest
/// rules' whether it is measurably below theirs once chosen among the others (Welch's
/// test over the downloads, Bonferroni over the others, 5 %); `None` below two points.
/// seed 004 here read "fastest at 58 rules (1.641 ms)": the least of 2001 means of 5
/// downloads each, which the noise (CV about 20 %) spreads further apart than the rules
/// move them; and "fastest at 0 rules" of an A/B whose arms did not measurably differ.
fn least_note(points: &[(f64, Pooled)]) -> Option<String> {
    if points.len() < 2 {
        return None;
    }
    let (lx, least) = points.iter().min_by(|p, q| p.1.mean.total_cmp(&q.1.mean))?;
    let (fx, fewest) = points.iter().min_by(|p, q| p.0.total_cmp(&q.0))?;
    let mut text = format!(
        "; least mean at {} rules ({} ms)",
        num(*lx),
        num(least.mean)
    );
    if lx == fx {
        return Some(text);
    }
    let others = points.len() - 1;
    let w = stats::welch_from_summary(
        fewest.mean,
        fewest.sd,
        fewest.n,
        least.mean,
        least.sd,
        least.n,
    );
    let below = w.is_some_and(|w| w.t > 0.0 && w.p < 0.05 / others as f64);
    text.push_str(&format!(
        ", {} below {} rules' ({} ms) once chosen among {} means (Welch over the \
         downloads, Bonferroni over the {others} others, 5 %)",
        if below {
            "measurably"
        } else {
            "not measurably"
        },
        num(*fx),
        num(fewest.mean),
        points.len()
    ));
    Some(text)
}

/// `b`'s mean over `a`'s as a change in % with the 95 % Welch CI of the difference over
/// the repetitions, in % of `a`'s mean: "+303 ± 296 %"; where the CI includes 0, "+12 ±
/// 30 %: its 95 % CI includes 0"; without repetitions to test, "+12 %, too few
/// repetitions for a CI".
fn change_pct(a: &Config, b: &Config, metric: &str) -> String {
    let vals = |c: &Config| c.gateway_values.get(metric).cloned().unwrap_or_default();
    let (va, vb) = (vals(a), vals(b));
    let Some(d) = stats::difference(&va, &vb) else {
        return "no change measured".into();
    };
    let base = stats::mean(&va).unwrap_or(0.0);
    if base == 0.0 {
        return "no change in % (the first is 0)".into();
    }
    let pct = d.delta / base * 100.0;
    match d.ci95.filter(|c| c.is_finite()) {
        Some(c) => {
            let ci = c / base.abs() * 100.0;
            let zero = if pct.abs() <= ci {
                ": its 95 % CI includes 0"
            } else {
                ""
            };
            format!("{} %{zero}", signed(&mean_ci(pct, Some(ci))))
        }
        None if va.len() < 2 || vb.len() < 2 => {
            format!("{pct:+.0} %, too few repetitions for a CI")
        }
        None => format!("{pct:+.0} %, no spread over the repetitions to give a CI"),
    }
}

/// "+x" for a number text that has no sign.
fn signed(v: &str) -> String {
    if v.starts_with('-') || v.starts_with('−') {
        v.to_string()
    } else {
        format!("+{v}")
    }
}

/// Seed 004's answer for one download series: µs per rule with its CI (over the rule
/// counts' means: the line's residuals), with what a CI holding 0 still allows
/// ([`zero_slope_words`]).
fn download_sentence(name: &str, f: &stats::LineFit, counts: usize, x_max: f64) -> String {
    let who = if name == "all" {
        "HTTP download time".to_string()
    } else {
        format!("HTTP download time ({name})")
    };
    let per_rule = match f.b_ci95 {
        Some(c) => mean_ci(f.b * 1e3, Some(c * 1e3)),
        None => num(f.b * 1e3),
    };
    let flat = zero_slope_words(
        f,
        x_max,
        |v, c| format!("{} µs", at_place_of(v * 1e3, Some(c * 1e3))),
        "a download's time",
    )
    .unwrap_or_default();
    format!(
        "{who}: {per_rule} µs per rule{flat} (least squares over the means at {counts} rule \
         counts, 95 % CI from the line's residuals), {} ms at 0 rules.",
        mean_ci(f.a, f.a_ci95)
    )
}

// ---------------------------------------------------------------------------------
// A/B comparisons.

/// One A/B comparison: two configurations of a case that differ in one parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct AbTest {
    pub case: String,
    pub workload: String,
    pub parameter: String,
    pub a_value: String,
    pub b_value: String,
    /// What is compared ("download time", "session duration"), in ms.
    pub quantity: &'static str,
    pub a: Pooled,
    pub b: Pooled,
    /// Welch's test of B against A (t > 0: B's mean is the larger).
    pub welch: Option<stats::Welch>,
    /// Where the values come from.
    pub source: &'static str,
    /// The paired t-test over the pairs of trials (B − A of each pair's trial means),
    /// when the arms ran as pairs (see [`pairs`]).
    pub paired: Option<stats::Paired>,
    /// Welch's test over the repetitions — each trial's mean one value — when the arms
    /// did not run as pairs and each has two trials or more: what a rerun would give,
    /// which `welch` over the sessions of a few trials (autocorrelated, blind to each
    /// trial's placement and residue) overstates. The result then uses it.
    pub over_reps: Option<RepsWelch>,
    /// Trials in A and in B with a mean of the quantity.
    pub trials: (usize, usize),
    /// Both arms ran the same gateway, and why ("engine none installs no rules", "model
    /// conntrack installs the same rules whatever the count"): the parameter they differ
    /// in is one the gateway ignores. Their difference is the testbed's noise or drift
    /// (the order, the machine's other load), never a cost; a significant one says the
    /// testbed drifted during the run.
    pub same_gateway: Option<String>,
}

/// Welch's test over an A/B's repetitions (`stats::difference` of the arms' trial
/// means, as `compare` tests two runs): each arm's trial means pooled, the test, and
/// the half-width of the 95 % CI of B − A.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepsWelch {
    pub a: Pooled,
    pub b: Pooled,
    pub welch: stats::Welch,
    pub ci95: f64,
}

impl RepsWelch {
    /// B − A of the repetitions' means and the half-width of its 95 % CI.
    pub fn delta(&self) -> (f64, f64) {
        (self.b.mean - self.a.mean, self.ci95)
    }
}

impl AbTest {
    /// The test the verdict uses: the paired one when the trials ran as pairs, else
    /// Welch's over the repetitions where each arm has two, else over the values.
    pub fn verdict_test(&self) -> String {
        match (self.paired, self.over_reps) {
            (Some(_), _) => "paired t".into(),
            (None, Some(_)) => "Welch over repetitions".into(),
            (None, None) if self.welch.is_some() => {
                format!("Welch over {} (within trials)", self.values())
            }
            (None, None) => "no test".into(),
        }
    }

    /// What one value of `welch` is: a download or a session.
    pub fn values(&self) -> &'static str {
        if self.quantity == "download time" {
            "downloads"
        } else {
            "sessions"
        }
    }

    /// The arms the verdict compares: the repetitions' means where it tests over them,
    /// else every value pooled.
    pub fn arms(&self) -> (Pooled, Pooled) {
        match (self.paired, self.over_reps) {
            (None, Some(r)) => (r.a, r.b),
            _ => (self.a, self.b),
        }
    }

    /// The verdict in words: significant or not, or for two arms of the same gateway
    /// what that means (see [`AbTest::same_gateway`]).
    pub fn verdict(&self) -> String {
        match (self.p(), &self.same_gateway) {
            (Some(p), Some(why)) if p < ALPHA => format!(
                "significant at 5 % although both arms are the same gateway ({why}): the \
                 testbed drifted during the run, not a cost"
            ),
            (_, Some(why)) => {
                format!("no comparison: both arms are the same gateway ({why})")
            }
            (Some(p), None) if p < ALPHA => "significant at 5 %".to_string(),
            (Some(_), None) => "not significant".to_string(),
            (None, None) => "no test (fewer than 2 values or no spread)".to_string(),
        }
    }

    /// The verdict's p-value.
    pub fn p(&self) -> Option<f64> {
        match (self.paired, self.over_reps, self.welch) {
            (Some(p), _, _) => Some(p.p),
            (None, Some(r), _) => Some(r.welch.p),
            (None, None, Some(w)) => Some(w.p),
            _ => None,
        }
    }
}

/// A trial's mean of `which` (a download's last byte, a session) in ms: of its summary,
/// as the A/B's means; a session's, without one, of its stored sessions.
fn trial_mean_ms(t: &Trial, which: Phase) -> Option<f64> {
    let summary = model::durations(t, which)
        .filter(|d| d.0 > 0)
        .map(|d| d.1 / 1e6);
    if summary.is_some() || which != Phase::Session {
        return summary;
    }
    // No summary stored: the stored sessions (the first 10 000), for sessions only.
    let us: &[f64] = conn_of(t).map(|r| &r.session_us[..]).unwrap_or_default();
    stats::mean(us).map(|m| m / 1e3)
}

/// The pairs of an A/B, (A's trial mean, B's trial mean) in ms per repetition, when its
/// trials ran as pairs: each repetition has one trial in each arm, and in run order
/// (stored trial id) those two are next to each other among the two arms' trials — as
/// the `paired`, `abba` and `sequential` orders run them (not `random`, nor one block
/// per arm). `None` otherwise or below 2 pairs.
pub fn pairs(ca: &Config, cb: &Config, which: Phase) -> Option<Vec<(f64, f64)>> {
    let mut run: Vec<(i64, usize, u32)> = [ca, cb]
        .iter()
        .enumerate()
        .flat_map(|(arm, c)| c.reps.iter().map(move |t| (t.id, arm, t.rep)))
        .collect();
    run.sort();
    if run.len() < 4 || !run.len().is_multiple_of(2) {
        return None;
    }
    let mut out = Vec::new();
    for two in run.chunks(2) {
        let ((_, arm0, rep0), (_, arm1, rep1)) = (two[0], two[1]);
        if rep0 != rep1 || arm0 == arm1 {
            return None;
        }
        let mean = |arm: usize| {
            let c = [ca, cb][arm];
            let t = c.reps.iter().find(|t| t.rep == rep0)?;
            trial_mean_ms(t, which)
        };
        out.push((mean(0)?, mean(1)?));
    }
    // Each repetition once per arm.
    let reps: BTreeSet<u32> = run.iter().map(|r| r.2).collect();
    (reps.len() * 2 == run.len()).then_some(out)
}

/// An A/B case: workload, label, configurations A and B, the parameter they differ in.
type AbCase<'a> = (
    StoredWorkload,
    Option<String>,
    &'a Config,
    &'a Config,
    String,
);

/// Among connection configurations with the same workload and label, exactly two that
/// differ in exactly one parameter (label aside).
fn ab_cases<'a>(conn: &[&'a Config]) -> Vec<AbCase<'a>> {
    let mut cases: BTreeMap<(StoredWorkload, Option<String>), Vec<&Config>> = BTreeMap::new();
    for c in conn.iter().filter(|c| !c.reps.is_empty()) {
        cases
            .entry((c.workload.clone(), c.label.clone()))
            .or_default()
            .push(c);
    }
    let mut out = Vec::new();
    for ((workload, label), cs) in cases {
        let [ca, cb] = cs[..] else {
            continue;
        };
        if workload == StoredWorkload::Connections {
            continue;
        }
        let keys: BTreeSet<&String> = ca.flat.keys().chain(cb.flat.keys()).collect();
        let differ: Vec<&String> = keys
            .into_iter()
            .filter(|k| *k != "label" && ca.flat.get(*k) != cb.flat.get(*k))
            .collect();
        let [parameter] = differ[..] else {
            continue;
        };
        out.push((workload, label, ca, cb, parameter.clone()));
    }
    out
}

/// Parameters of the rule set, which a gateway without a firewall (engine none)
/// ignores: two such configurations that differ in one of them are one gateway.
const RULE_SETTINGS: [&str; 5] = ["rules", "model", "position", "nft_family", "nat_to"];

/// Two configurations without a firewall (engine none) that differ only in a rule
/// setting, or of a model whose rule set does not grow with the count (conntrack
/// alone) that differ only in `rules`, or of one that places no rule by `position`
/// (raw-drop, the string models) that differ only in it: one gateway, measured
/// twice — why, or `None`.
pub fn one_gateway(ca: &Config, cb: &Config, parameter: &str) -> Option<String> {
    if ca.no_firewall() && cb.no_firewall() && RULE_SETTINGS.contains(&parameter) {
        return Some("engine none installs no rules".into());
    }
    let model = ca.param("model").unwrap_or("-");
    match parameter {
        "rules" if ca.ignores_rule_count() && cb.ignores_rule_count() => Some(format!(
            "model {model} installs the same rules whatever the count"
        )),
        "position" if ca.ignores_position() && cb.ignores_position() => Some(format!(
            "model {model} installs the same rules whatever the position"
        )),
        _ => None,
    }
}

/// The A/B comparisons of a run (see [`ab_cases`]).
pub fn ab_tests(conn: &[&Config]) -> Vec<AbTest> {
    let mut out = Vec::new();
    for (workload, label, ca, cb, parameter) in ab_cases(conn) {
        let parameter = &parameter;
        let (quantity, which) = if workload == StoredWorkload::Http {
            ("download time", Phase::Ttlb)
        } else {
            ("session duration", Phase::Session)
        };
        // Each trial's summary of the quantity, pooled: all its sessions, as the figure,
        // the configurations table and the pairs read them; Welch's test needs no more
        // than the pooled mean, sd and n. The stored samples (`session_us`) are whole
        // sessions, to the close, and the first 10 000 of a trial only: the test reads
        // them only where no summary was stored, and for sessions only — seed 004 here
        // read "2.633 vs 2.716 ms" of sessions as download times beside a paired
        // difference of downloads (the table's 2.59 and 2.665 ms).
        let (a, b, welch, source) = match (pooled_in_ms(ca, which), pooled_in_ms(cb, which)) {
            (Some(pa), Some(pb)) => {
                // B first: t has the sign of B − A, as the table's difference.
                let w = stats::welch_from_summary(pb.mean, pb.sd, pb.n, pa.mean, pa.sd, pa.n);
                (pa, pb, w, "pooled summaries of each trial")
            }
            _ if which == Phase::Session => {
                let (sa, sb) = (session_samples_ms(ca), session_samples_ms(cb));
                if sa.len() < 2 || sb.len() < 2 {
                    continue;
                }
                (
                    pooled_of(&sa),
                    pooled_of(&sb),
                    stats::welch(&sb, &sa),
                    "per-session durations (session_us)",
                )
            }
            _ => continue,
        };
        let value = |c: &Config| c.param(parameter).unwrap_or("-").to_string();
        let ran_as_pairs = pairs(ca, cb, which);
        let as_pairs = ran_as_pairs.is_some();
        let paired = ran_as_pairs.and_then(|p| {
            let (xa, xb): (Vec<f64>, Vec<f64>) = p.into_iter().unzip();
            stats::paired(&xa, &xb)
        });
        let means = |c: &Config| -> Vec<f64> {
            c.reps
                .iter()
                .filter_map(|t| trial_mean_ms(t, which))
                .collect()
        };
        let (ma, mb) = (means(ca), means(cb));
        // Arms that ran as pairs are judged as pairs (the drift figure says so), never
        // over their repetitions unpaired.
        let over_reps = match (as_pairs, stats::difference(&ma, &mb)) {
            (
                false,
                Some(stats::Difference {
                    ci95: Some(ci95),
                    welch: Some(welch),
                    ..
                }),
            ) => Some(RepsWelch {
                a: pooled_of(&ma),
                b: pooled_of(&mb),
                welch,
                ci95,
            }),
            _ => None,
        };
        out.push(AbTest {
            case: label.unwrap_or_else(|| "-".into()),
            workload: workload.to_string(),
            parameter: parameter.clone(),
            a_value: value(ca),
            b_value: value(cb),
            quantity,
            a,
            b,
            welch,
            source,
            paired,
            over_reps,
            trials: (ma.len(), mb.len()),
            same_gateway: one_gateway(ca, cb, parameter),
        });
    }
    out
}

/// `v` as a pooled sample (its mean NaN when empty, its sd 0 below two values).
fn pooled_of(v: &[f64]) -> Pooled {
    Pooled {
        n: v.len() as u64,
        mean: stats::mean(v).unwrap_or(f64::NAN),
        sd: stats::sample_sd(v).unwrap_or(0.0),
    }
}

/// A p-value for reading: 4 significant digits, scientific below 0.0001 (below what a
/// double holds: "< 1e-300").
fn p_text(p: f64) -> String {
    if p < 1e-300 {
        "< 1e-300".into()
    } else if p < 1e-4 {
        format!("{p:.2e}")
    } else {
        num(p)
    }
}

/// The A/B comparisons as a table.
fn ab_tables(conn: &[&Config], a: &mut Analysis) {
    let tests = ab_tests(conn);
    if tests.is_empty() {
        return;
    }
    let rows = tests
        .iter()
        .map(|t| {
            let d = t.b.mean - t.a.mean;
            let rel = if t.a.mean != 0.0 {
                format!("{:+.2}", d / t.a.mean * 100.0)
            } else {
                String::new()
            };
            let (tv, df, p) = match t.welch {
                Some(w) => (format!("{:.3}", w.t), format!("{:.1}", w.df), p_text(w.p)),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let verdict = t.verdict();
            let paired = match t.paired {
                Some(p) => vec![
                    p.n.to_string(),
                    format!(
                        "{}{}",
                        if p.mean > 0.0 { "+" } else { "" },
                        mean_ci(p.mean, Some(p.ci95))
                    ),
                    format!("{:.3}", p.t),
                    p_text(p.p),
                ],
                None => vec!["-".into(); 4],
            };
            let reps = match t.over_reps {
                Some(r) => {
                    let (d, ci) = r.delta();
                    vec![
                        format!("{} + {}", r.a.n, r.b.n),
                        format!("{}{}", if d > 0.0 { "+" } else { "" }, mean_ci(d, Some(ci))),
                        format!("{:.3}", r.welch.t),
                        p_text(r.welch.p),
                    ]
                }
                None => vec!["-".into(); 4],
            };
            vec![
                t.case.clone(),
                t.workload.clone(),
                t.quantity.into(),
                format!("{}: {} → {}", t.parameter, t.a_value, t.b_value),
                num(t.a.mean),
                num(t.a.sd),
                t.a.n.to_string(),
                num(t.b.mean),
                num(t.b.sd),
                t.b.n.to_string(),
                if d > 0.0 {
                    format!("+{}", num(d))
                } else {
                    num(d)
                },
                rel,
                tv,
                df,
                p,
                verdict,
                t.source.into(),
            ]
            .into_iter()
            .chain(paired)
            .chain(reps)
            .chain([t.verdict_test()])
            .collect()
        })
        .collect();
    a.tables.push(Table {
        title: "A/B comparisons (Welch's t-test over the values; the paired t-test over \
                pairs of trials when the arms ran as pairs, else Welch's over the \
                repetitions' means where each arm has two, which the result then uses — \
                the last column; two-sided, 5 % level)"
            .into(),
        columns: [
            "case",
            "workload",
            "quantity (ms)",
            "A → B",
            "A mean",
            "A sd",
            "A n",
            "B mean",
            "B sd",
            "B n",
            "B − A",
            "B − A (%)",
            "Welch t",
            "df",
            "p",
            "result",
            "values",
            "pairs",
            "paired B − A (95 % CI)",
            "paired t",
            "paired p",
            "repetitions",
            "repetitions B − A (95 % CI)",
            "repetitions Welch t",
            "repetitions p",
            "result by",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
}

/// Seconds since the epoch of a stored UTC time, `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
pub fn epoch_s(s: &str) -> Option<f64> {
    let s = s.strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.splitn(3, ':');
    let (hh, mm) = (
        t.next()?.parse::<f64>().ok()?,
        t.next()?.parse::<f64>().ok()?,
    );
    let ss = t.next()?.parse::<f64>().ok()?;
    let days = days_from_civil(y, m, day);
    Some(days as f64 * 86_400.0 + hh * 3600.0 + mm * 60.0 + ss)
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's `days_from_civil`).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Fewest trials per arm for a drift figure.
const DRIFT_MIN_TRIALS: usize = 3;

/// Drift of each A/B: every trial's mean download (session) time against its start,
/// in seconds since the run's first trial, one series per arm. Blocks (all A, then all
/// B) show drift as a step between the arms; pairs spread both arms over the run.
fn ab_drift(conn: &[&Config], trials: &[Trial], a: &mut Analysis) {
    let Some(t0) = trials
        .iter()
        .filter_map(|t| epoch_s(&t.started_at))
        .min_by(f64::total_cmp)
    else {
        return;
    };
    let cases: Vec<AbCase> = ab_cases(conn)
        .into_iter()
        .filter(|(_, _, ca, cb, _)| {
            ca.reps.len() >= DRIFT_MIN_TRIALS && cb.reps.len() >= DRIFT_MIN_TRIALS
        })
        .collect();
    for (i, (workload, label, ca, cb, parameter)) in cases.iter().enumerate() {
        let (quantity, which) = if *workload == StoredWorkload::Http {
            ("download time", Phase::Ttlb)
        } else {
            ("session duration", Phase::Session)
        };
        let mut notes = Vec::new();
        let series: Vec<Series> = [ca, cb]
            .iter()
            .map(|c| {
                let mut points: Vec<Point> = c
                    .reps
                    .iter()
                    .filter_map(|t| {
                        Some(Point {
                            x: epoch_s(&t.started_at)? - t0,
                            y: trial_mean_ms(t, which)?,
                            ci95: None,
                        })
                    })
                    .collect();
                points.sort_by(|p, q| p.x.total_cmp(&q.x));
                let name = format!("{parameter}={}", c.param(parameter).unwrap_or("-"));
                let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.x, p.y)).collect();
                if let Some(f) = stats::fit_line(&xy).filter(|_| xy.len() >= 3) {
                    notes.push(format!(
                        "{name}: {} trials; drift {}{} ms per minute",
                        points.len(),
                        if f.b > 0.0 { "+" } else { "" },
                        mean_ci(f.b * 60.0, f.b_ci95.map(|c| c * 60.0))
                    ));
                }
                Series {
                    name,
                    points,
                    fit: false,
                }
            })
            .collect();
        let paired = pairs(ca, cb, which).is_some();
        notes.push(format!(
            "Each point is one trial's mean {quantity}; start times have 1 s resolution. {}",
            if paired {
                "The arms ran as pairs of trials back to back: drift hits both alike and \
                 cancels in the paired test's per-pair differences."
            } else {
                "The arms did not run as pairs: drift over the run is part of the \
                 difference Welch's test sees (order = \"paired\" or \"abba\" fixes it)."
            }
        ));
        let case = label.clone().unwrap_or_else(|| "-".into());
        let id = if i == 0 {
            "ab-drift".to_string()
        } else {
            format!("ab-drift-{}", i + 1)
        };
        a.figures.push(Figure {
            notes,
            ..Figure::line(
                &id,
                &format!("A/B drift ({case}): {quantity} per trial vs start time"),
                (
                    "trial start (s since the run's first trial)",
                    &format!("{quantity} (ms)"),
                ),
                series,
            )
        });
    }
}

// ---------------------------------------------------------------------------------
// Seed 003: firewall types.

/// Names configurations by firewall type: topology direct = "null firewall", proxy =
/// "proxy (buffer N)", forward/input with an engine = "packet filter (engine…)", with
/// the model and rule count added only where they vary.
struct FirewallNames {
    models: bool,
    rules: bool,
    /// The proxy buffer when every proxy configuration that names one names the same.
    buffer: Option<String>,
}

/// A configuration without rules: its engine's kind is none (or it records no engine).
fn rules_free(c: &Config) -> bool {
    c.engine.as_ref().is_none_or(|e| e.is_none())
}

impl FirewallNames {
    fn new(configs: &[&Config]) -> FirewallNames {
        let filters: Vec<&&Config> = configs
            .iter()
            .filter(|c| matches!(topology(c), "forward" | "input"))
            .filter(|c| !rules_free(c))
            .collect();
        let distinct = |k: &str| {
            filters
                .iter()
                .map(|c| c.param(k))
                .collect::<BTreeSet<_>>()
                .len()
                > 1
        };
        let buffers: BTreeSet<&str> = configs
            .iter()
            .filter(|c| topology(c) == "proxy")
            .filter_map(|c| c.param("conn.proxy_buffer"))
            .collect();
        FirewallNames {
            models: distinct("model"),
            rules: distinct("rules"),
            buffer: match buffers.len() {
                1 => buffers.into_iter().next().map(String::from),
                _ => None,
            },
        }
    }

    /// (order, name): null firewall first, then gateways, then proxies.
    fn name(&self, c: &Config) -> (u8, String) {
        match topology(c) {
            "direct" => (0, "null firewall".into()),
            "proxy" => {
                let buffer = c
                    .param("conn.proxy_buffer")
                    .map(String::from)
                    .or_else(|| self.buffer.clone());
                match buffer.and_then(|b| b.parse::<u64>().ok()) {
                    Some(b) => (3, format!("proxy (buffer {})", bytes(b))),
                    None => (3, "proxy".into()),
                }
            }
            t => {
                let input = if t == "input" { ", input chain" } else { "" };
                let Some(engine) = c.engine.as_ref().filter(|_| !rules_free(c)) else {
                    return (1, format!("gateway without rules{input}"));
                };
                let mut parts = vec![engine.name().to_string()];
                if self.models {
                    parts.push(c.param("model").unwrap_or("-").into());
                }
                if self.rules {
                    parts.push(format!("{} rules", c.param("rules").unwrap_or("0")));
                }
                (2, format!("packet filter ({}{input})", parts.join(", ")))
            }
        }
    }
}

/// A configuration's topology (`forward` when not given).
fn topology(c: &Config) -> &str {
    c.param("topology").unwrap_or("forward")
}

/// A byte count for reading: exact KiB/MiB when it divides, else bytes.
fn bytes(b: u64) -> String {
    for (unit, m) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if b >= m && b.is_multiple_of(m) {
            return format!("{} {unit}", b / m);
        }
    }
    format!("{b} B")
}

/// Rows of seed 003's table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Row {
    /// Ping with this payload (or frame) size: (frame?, bytes).
    Ping(bool, u64),
    SequentialSessions,
    ParallelSessions,
    /// A sweet-spot search (`parallel` auto).
    SweetSpot,
    SequentialBulk,
    ParallelBulk,
}

impl Row {
    fn of(c: &Config) -> Option<Row> {
        if is_search(c) {
            return (c.workload == StoredWorkload::Sessions).then_some(Row::SweetSpot);
        }
        let parallel = c.param_f64("conn.parallel").unwrap_or(1.0);
        let seq = parallel <= 1.0;
        match &c.workload {
            StoredWorkload::Ping => {
                let (frame, n) = match (
                    c.param_f64("packet.size.payload"),
                    c.param_f64("packet.size.frame"),
                ) {
                    (Some(p), _) => (false, p),
                    (None, Some(f)) => (true, f),
                    (None, None) => return None,
                };
                Some(Row::Ping(frame, n as u64))
            }
            StoredWorkload::Sessions if seq => Some(Row::SequentialSessions),
            StoredWorkload::Sessions => Some(Row::ParallelSessions),
            StoredWorkload::Bulk if seq => Some(Row::SequentialBulk),
            StoredWorkload::Bulk => Some(Row::ParallelBulk),
            // Seed 003's table has no row for other workloads.
            _ => None,
        }
    }

    fn name(&self) -> String {
        match self {
            Row::Ping(false, n) => format!("Ping {n} B"),
            Row::Ping(true, n) => format!("Ping {n} B frame"),
            Row::SequentialSessions => "Sequential sessions".into(),
            Row::ParallelSessions => "Parallel sessions".into(),
            Row::SweetSpot => "Sweet spot (parallel auto)".into(),
            Row::SequentialBulk => "Sequential bulk".into(),
            Row::ParallelBulk => "Parallel bulk".into(),
        }
    }

    /// Parallel rows show the configuration with the best throughput (the sweet spot),
    /// among those whose figure holds ([`chosen`]).
    fn best_of(&self) -> Option<&'static str> {
        match self {
            Row::ParallelSessions => Some("sessions_per_s"),
            Row::ParallelBulk => Some("goodput_bps"),
            _ => None,
        }
    }
}

/// Mean round-trip time of a ping trial, s.
fn ping_mean_s(t: &Trial) -> Option<f64> {
    let rtt = t.stored.ping.as_ref()?.rtt.as_ref()?;
    (rtt.count? > 0).then_some(rtt.mean_ns? / 1e9)
}

/// The study's quantities of one configuration in one row.
fn quantities(row: &Row, c: &Config) -> String {
    let s = |f: &dyn Fn(&Trial) -> Option<f64>| over_reps(c, f);
    let t_ci = |x: Option<Summary>| x.map(|x| secs_ci(x.mean, x.ci95));
    let mut parts: Vec<String> = Vec::new();
    match row {
        Row::Ping(..) => {
            let rtt = s(&ping_mean_s)
                .map(|x| secs_ci(x.mean, x.ci95))
                .or_else(|| {
                    c.mean("rtt_p50_us")
                        .map(|p| format!("{} (p50)", secs(p / 1e6)))
                });
            parts.push(format!("{} mean RTT", rtt.unwrap_or_else(|| "-".into())));
        }
        Row::SequentialSessions | Row::ParallelSessions => {
            let total = t_ci(s(&|t| conn_num(t, |c| c.elapsed_s)));
            let n = s(&|t| conn_num(t, |c| c.sessions)).map(|x| num(x.mean));
            parts.push(format!(
                "{} total ({} sessions)",
                total.unwrap_or_else(|| "-".into()),
                n.unwrap_or_else(|| "-".into())
            ));
            if let Some(p) = session_over_reps(c) {
                parts.push(format!("{} per session", secs_ci(p.mean, p.ci95)));
            }
            if let Some(r) = c.metrics.get(model::SESSIONS_PER_S) {
                parts.push(format!("{} sessions/s", mean_ci(r.mean, r.ci95)));
            }
            if *row == Row::ParallelSessions {
                parts.push(format!(
                    "{} parallel",
                    c.param("conn.parallel").unwrap_or("-")
                ));
            }
        }
        Row::SweetSpot => {
            let found: Vec<&SearchStored> = c.reps.iter().filter_map(search_of).collect();
            let best: Vec<String> = found
                .iter()
                .filter_map(|s| s.best_parallel)
                .map(num)
                .collect();
            let rate = Summary::of(
                &found
                    .iter()
                    .filter_map(|s| s.best_sessions_per_s)
                    .collect::<Vec<_>>(),
            );
            let latency = Summary::of(
                &found
                    .iter()
                    .filter_map(|s| s.latency_at_best_s)
                    .filter(|v| *v > 0.0)
                    .collect::<Vec<_>>(),
            );
            parts.push(format!(
                "{} parallel",
                if best.is_empty() {
                    "-".into()
                } else {
                    best.join(", ")
                }
            ));
            // Each search's best is its best single trial (biased up, as a maximum is).
            if let Some(r) = rate {
                parts.push(format!(
                    "{} sessions/s (each search's best single trial)",
                    mean_ci(r.mean, r.ci95)
                ));
            }
            if let Some(l) = latency {
                parts.push(format!("{} per session", secs_ci(l.mean, l.ci95)));
            }
        }
        Row::SequentialBulk | Row::ParallelBulk => {
            let total = t_ci(s(&|t| conn_num(t, |c| c.elapsed_s))).unwrap_or_else(|| "-".into());
            parts.push(split_text(c, &total));
            let mbps = |m: &str| {
                c.metrics
                    .get(m)
                    .map(|g| mean_ci(g.mean / 1e6, g.ci95.map(|x| x / 1e6)))
            };
            if let Some(g) = mbps(model::GOODPUT_BPS) {
                let split = c
                    .reps
                    .iter()
                    .filter(|t| conn_num(t, |c| c.overhead.as_ref()?.overhead_s).is_some());
                let netless = split
                    .clone()
                    .filter(|t| model::net_goodput_bps(t).is_none());
                let (split, netless) = (split.count(), netless.count());
                let without = (netless > 0).then(|| {
                    format!(
                        "none in {netless} of {split} repetitions: the measured session \
                         overhead filled the whole run"
                    )
                });
                let net = match (mbps("net_goodput_bps"), without) {
                    (Some(n), None) => format!(" ({n} Mb/s net of overhead)"),
                    (Some(n), Some(w)) => format!(" ({n} Mb/s net of overhead; {w})"),
                    (None, Some(w)) => format!(" (net of overhead: {w})"),
                    (None, None) => String::new(),
                };
                parts.push(format!("goodput {g} Mb/s{net}"));
            }
            if *row == Row::ParallelBulk {
                parts.push(format!(
                    "{} parallel",
                    c.param("conn.parallel").unwrap_or("-")
                ));
            }
        }
    }
    // Failed and corrupt sessions of every repetition that ran: one flagged for them is
    // left out of the figures above, its failures still said here.
    let flagged: Vec<&Trial> = c
        .failed
        .iter()
        .filter(|t| t.status == Status::Flagged)
        .collect();
    let sum = |k: fn(&ConnStored) -> Option<f64>| -> f64 {
        c.reps
            .iter()
            .chain(flagged.iter().copied())
            .filter_map(|t| conn_num(t, k))
            .sum()
    };
    let (failed, corrupt) = (sum(|c| c.failed), sum(|c| c.corrupt));
    if corrupt > 0.0 {
        parts.push(format!("DATA CORRUPTION in {} sessions", num(corrupt)));
    }
    // Requests the server got that fwbench's client never sends: fwbench flags the
    // trial for them (as for corrupt sessions); said here beside its flag.
    let bad = sum(|c| c.server.as_ref()?.bad_requests.map(|n| n as f64));
    if bad > 0.0 {
        parts.push(format!(
            "the server got {} requests fwbench's client never sends",
            num(bad)
        ));
    }
    if failed > 0.0 {
        parts.push(format!("{} sessions failed", num(failed)));
    }
    let all = c.reps.len() + c.failed.len() + c.unavailable.len();
    if !flagged.is_empty() {
        parts.push(format!(
            "{} of {all} reps flagged (left out)",
            flagged.len()
        ));
    }
    let missing = c.failed.len() - flagged.len() + c.unavailable.len();
    if missing > 0 {
        parts.push(format!("{missing} of {all} reps not measured"));
    }
    parts.join("; ")
}

/// A bulk cell's time: "{total} total = X overhead + Y transfer", the split (seed 003's:
/// the per-session overhead measured with zero-byte sessions, charged per session) over
/// the repetitions it describes. One whose charged overhead filled its whole run (no net
/// goodput: [`model::net_goodput_bps`]) has its overhead clamped to its elapsed time and
/// a transfer of ~0 — the split does not describe the run, and averaged in it moved both
/// means; it is left out, counted ("split over 2 of 3 repetitions"; the net goodput's
/// text says why), and with none left there is no split.
fn split_text(c: &Config, total: &str) -> String {
    let overhead_s = |t: &Trial| conn_num(t, |c| c.overhead.as_ref()?.overhead_s);
    let split: Vec<&Trial> = c.reps.iter().filter(|t| overhead_s(t).is_some()).collect();
    let kept: Vec<&Trial> = split
        .iter()
        .copied()
        .filter(|t| model::net_goodput_bps(t).is_some())
        .collect();
    let over_kept = |f: fn(&ConnStored) -> Option<f64>| {
        let v: Vec<f64> = kept.iter().filter_map(|t| conn_num(t, f)).collect();
        Summary::of(&v)
    };
    let over = over_kept(|c| c.overhead.as_ref()?.overhead_s);
    let xfer = over_kept(|c| c.overhead.as_ref()?.transfer_s);
    let left = split.len() - kept.len();
    match (over, xfer) {
        (Some(o), Some(x)) => {
            let (o, x) = (secs_ci(o.mean, o.ci95), secs_ci(x.mean, x.ci95));
            if left == 0 {
                format!("{total} total = {o} overhead + {x} transfer")
            } else {
                format!(
                    "{total} total; split over the {} of {} repetitions it describes: {o} \
                     overhead + {x} transfer",
                    kept.len(),
                    split.len()
                )
            }
        }
        _ if left > 0 => {
            format!("{total} total; no overhead split: it describes none of the {left} repetitions")
        }
        _ => format!("{total} total"),
    }
}

/// The first error of a configuration's trials of a status, without what repeats the
/// cell's own "N/A" (fwbench records "gateway agent: N/A: the proxy relays …").
fn first_error<'a>(trials: impl Iterator<Item = &'a Trial>) -> Option<String> {
    let mut it = trials.peekable();
    it.peek()?;
    let e = it
        .find_map(|t| t.error.clone())
        .unwrap_or_else(|| "no reason recorded".into());
    Some(match e.split_once("N/A: ") {
        Some((_, why)) if !why.is_empty() => why.to_string(),
        _ => e,
    })
}

/// The cell of one row and firewall type: the quantities of its configuration(s), or
/// "N/A (reason)" when the trials could not run.
fn cell_text(row: &Row, cs: &[&Config]) -> String {
    let ok: Vec<&Config> = cs.iter().copied().filter(|c| !c.reps.is_empty()).collect();
    if ok.is_empty() {
        if let Some(e) = first_error(cs.iter().flat_map(|c| c.unavailable.iter())) {
            return format!("N/A ({e})");
        }
        if let Some(e) = first_error(cs.iter().flat_map(|c| c.failed.iter())) {
            return format!("failed ({e})");
        }
        return "-".into();
    }
    let Chosen { configs, note } = chosen(row, &ok);
    let text = match configs[..] {
        [] => return note.unwrap_or_default(),
        [one] => quantities(row, one),
        _ => {
            let keys = without_redundant(&configs, varying(&configs));
            configs
                .iter()
                .map(|c| format!("{}: {}", series_name(c, &keys), quantities(row, c)))
                .collect::<Vec<_>>()
                .join(" | ")
        }
    };
    match note {
        Some(n) => format!("{text}; {n}"),
        None => text,
    }
}

/// The configurations a cell shows, and what it says of the one it passed over.
struct Chosen<'a> {
    configs: Vec<&'a Config>,
    /// Where the highest mean of a parallel row is a configuration whose figure does
    /// not hold ([`doubted`]): that it was left out, its mean and why; or that no best
    /// is named, none holding.
    note: Option<String>,
}

/// The configurations a cell shows: all of them, or for parallel rows ([`Row::best_of`])
/// the best among those whose figure holds — every repetition that ran `ok`, none
/// whose rate fwbench itself limited ([`doubted`]); where the highest mean is one that
/// does not hold, the note says so (it is not silently replaced), and where none holds
/// no best is named. Seed 003's parallel-sessions cell named as best a parallelism
/// with 2 of its 3 repetitions flagged: the mean of the one left, the luckiest.
fn chosen<'a>(row: &Row, ok: &[&'a Config]) -> Chosen<'a> {
    match row.best_of() {
        Some(m) => best_holding(ok, m),
        None => Chosen {
            configs: ok.to_vec(),
            note: None,
        },
    }
}

/// Of `cs`, the one with the highest mean of `m` among those whose figure holds
/// ([`doubted`]), with the note of [`Chosen`] where the highest of all does not hold.
fn best_holding<'a>(cs: &[&'a Config], m: &str) -> Chosen<'a> {
    let mean = |c: &Config| c.mean(m).unwrap_or(f64::NEG_INFINITY);
    let measured: Vec<&Config> = cs.iter().copied().filter(|c| c.mean(m).is_some()).collect();
    let highest = measured
        .iter()
        .copied()
        .max_by(|a, b| mean(a).total_cmp(&mean(b)));
    let best = measured
        .iter()
        .copied()
        .filter(|c| doubted(c).is_none())
        .max_by(|a, b| mean(a).total_cmp(&mean(b)));
    let note = match (highest, best) {
        (Some(h), Some(b)) if mean(h) > mean(b) => Some(format!(
            "best of those whose repetitions all hold; the highest mean, {}, is left out: {}",
            best_value(m, h),
            doubted(h).unwrap_or_default()
        )),
        (Some(h), None) => Some(format!(
            "no best: {} in every repetition; the highest mean, {}: {}",
            match measured.len() {
                1 => "its 1 configuration does not hold".to_string(),
                n => format!("none of its {n} configurations holds"),
            },
            best_value(m, h),
            doubted(h).unwrap_or_default()
        )),
        _ => None,
    };
    Chosen {
        configs: best.into_iter().collect(),
        note,
    }
}

/// Why a configuration's figure does not hold, as its cell counts it: repetitions
/// flagged or failed (left out of its figures: those kept may be the lucky ones — a
/// client out of file descriptors at 64 parallel in 2 of 3), or whose rate fwbench's
/// own sender or sink limited ([`Config::fwbench_limit`]); `None`: it holds.
fn doubted(c: &Config) -> Option<String> {
    let all = c.reps.len() + c.failed.len() + c.unavailable.len();
    let count = |status: Status| c.failed.iter().filter(|t| t.status == status).count();
    let mut why = Vec::new();
    for (status, said) in [
        (Status::Flagged, "flagged"),
        (Status::Failed, "failed"),
        (Status::Dropped, "dropped"),
    ] {
        let n = count(status);
        if n > 0 {
            why.push(format!("{n} of {all} reps {said}"));
        }
    }
    if let Some(l) = c.fwbench_limit() {
        why.push(format!(
            "fwbench's {} limited {} of {} reps",
            l.roles(),
            l.limited,
            l.of
        ));
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// A parallel row's figure of a configuration, with its parallelism: "5200 ± 300
/// sessions/s at 64 parallel", "28100 ± 6100 Mb/s at 3 parallel".
fn best_value(m: &str, c: &Config) -> String {
    let s = c.metrics.get(m);
    let v = match s {
        Some(s) if m == model::GOODPUT_BPS => {
            format!("{} Mb/s", mean_ci(s.mean / 1e6, s.ci95.map(|x| x / 1e6)))
        }
        Some(s) => format!("{} sessions/s", mean_ci(s.mean, s.ci95)),
        None => "-".into(),
    };
    format!(
        "{v} at {} parallel",
        c.param("conn.parallel").unwrap_or("-")
    )
}

/// Seed 003's table (rows: pings, sequential/parallel sessions and bulk; columns:
/// firewall types) and its bar charts, for runs with sessions or bulk trials.
fn seed003(configs: &[Config], searches: &[&Config], a: &mut Analysis) {
    let cands: Vec<&Config> = configs
        .iter()
        .filter(|c| {
            matches!(
                c.workload,
                StoredWorkload::Ping | StoredWorkload::Sessions | StoredWorkload::Bulk
            )
        })
        .filter(|c| !is_step(c, searches))
        .collect();
    if !cands.iter().any(|c| c.workload != StoredWorkload::Ping) {
        return;
    }
    let names = FirewallNames::new(&cands);
    let mut cols: BTreeSet<(u8, String)> = BTreeSet::new();
    let mut cells: BTreeMap<Row, BTreeMap<(u8, String), Vec<&Config>>> = BTreeMap::new();
    for c in &cands {
        let Some(row) = Row::of(c) else {
            continue;
        };
        let col = names.name(c);
        cols.insert(col.clone());
        cells
            .entry(row)
            .or_default()
            .entry(col)
            .or_default()
            .push(c);
    }
    if cols.len() > MAX_FIREWALL_TYPES {
        return;
    }
    let cols: Vec<(u8, String)> = cols.into_iter().collect();
    let mut columns = vec!["workload".to_string()];
    columns.extend(cols.iter().map(|c| c.1.clone()));
    let rows = cells
        .iter()
        .map(|(row, by_col)| {
            let mut r = vec![row.name()];
            r.extend(cols.iter().map(|col| match by_col.get(col) {
                Some(cs) => cell_text(row, cs),
                None => "-".into(),
            }));
            r
        })
        .collect();
    a.tables.push(Table {
        title: "Firewall types (seed 003): mean RTT, sessions and bulk transfers".into(),
        columns,
        rows,
    });
    type_bars(&cells, &cols, a);
    let mut refused = Vec::new();
    let measured: Vec<crate::service::Measured> = cols
        .iter()
        .map(|col| measured(&cells, col, &mut refused))
        .collect();
    crate::service::derive(&measured, a);
    a.findings.extend(refused);
}

/// Whether `c` is the case `row` names: its label is the row's name ("sequential
/// bulk"), alone or after its firewall type's ("null firewall: sequential bulk"), in
/// any letter case.
fn names_case(row: &Row, c: &Config) -> bool {
    let (Some(label), name) = (c.label.as_deref(), row.name().to_lowercase()) else {
        return false;
    };
    let label = label.to_lowercase();
    label == name || label.ends_with(&format!(": {name}"))
}

/// The configuration of one cell the derivations read: the best one for parallel rows
/// (as the table shows it: among those whose figure holds); else the only one, or the
/// only one of the case the row names — seed 003's sequential-bulk cell also holds the
/// appendix's five buffer sizes, sequential bulk too, and the first of them in
/// parameter order (2 KiB) stood for "sequential bulk". `Err`: why none is chosen
/// (none or several of the case named, or a parallel row none of whose
/// configurations holds).
fn derived_from<'a>(row: &Row, ok: &[&'a Config]) -> Result<Option<&'a Config>, String> {
    if row.best_of().is_some() {
        let Chosen { configs, note } = chosen(row, ok);
        return match (configs.first(), note) {
            (None, Some(why)) => Err(format!(
                "its {} cell names {why}",
                row.name().to_lowercase()
            )),
            (c, _) => Ok(c.copied()),
        };
    }
    if ok.len() <= 1 {
        return Ok(ok.first().copied());
    }
    let named: Vec<&Config> = ok.iter().copied().filter(|c| names_case(row, c)).collect();
    if let [one] = named[..] {
        return Ok(Some(one));
    }
    let keys = without_redundant(ok, varying(ok));
    let names: Vec<String> = ok.iter().map(|c| series_name(c, &keys)).collect();
    let row = row.name().to_lowercase();
    let (which, remedy) = match named.len() {
        0 => (
            "none of them is".to_string(),
            "label the one to derive from so",
        ),
        n => (format!("{n} of them are"), "give each a label of its own"),
    };
    Err(format!(
        "its {row} cell holds {} configurations ({}), and {which} the case \"{row}\" by \
         its label ({remedy})",
        ok.len(),
        names.join("; "),
    ))
}

/// What seed 003's derivations need of one firewall type (see [`crate::service`]),
/// each from the configuration of the case its row names ([`derived_from`]); where it
/// cannot tell which, the quantity is left out and `refused` says why.
fn measured(
    cells: &BTreeMap<Row, BTreeMap<(u8, String), Vec<&Config>>>,
    col: &(u8, String),
    refused: &mut Vec<String>,
) -> crate::service::Measured {
    let ok = |row: &Row| -> Vec<&Config> {
        cells
            .get(row)
            .and_then(|m| m.get(col))
            .map(|cs| cs.iter().copied().filter(|c| !c.reps.is_empty()).collect())
            .unwrap_or_default()
    };
    let est = |s: Summary| (s.mean, s.ci95);
    let mut refuse = |what: &str, why: String| {
        refused.push(format!("{}: no {what} is derived: {why}.", col.1));
    };
    let mut pick = |row: &Row, what: &str| match derived_from(row, &ok(row)) {
        Ok(c) => Ok(c),
        Err(why) => {
            refuse(what, why);
            Err(())
        }
    };
    let mut ping = Vec::new();
    for r in cells.keys() {
        if let Row::Ping(false, n) = r {
            let what = format!("ping cost from its {n}-byte pings");
            if let Ok(Some(c)) = pick(r, &what) {
                if let Some(rtt) = over_reps(c, ping_mean_s) {
                    ping.push((*n as f64, est(rtt)));
                }
            }
        }
    }
    let latency_s = pick(&Row::SequentialSessions, "session latency (sequential)")
        .ok()
        .flatten()
        .and_then(session_over_reps)
        .map(est);
    // Where a best was named although the highest mean does not hold: which one the
    // derivations read, and why (the cell says so too).
    let mut passed_over = Vec::new();
    let mut from_best = |what: &str, m: &str, c: &Config, note: Option<String>| {
        if let Some(n) = note {
            passed_over.push(format!(
                "{}: {what} derived from {}, the {n}.",
                col.1,
                best_value(m, c)
            ));
        }
    };
    let sessions_per_s = pick(&Row::ParallelSessions, "service time")
        .ok()
        .flatten()
        .and_then(|c| {
            let note = best_holding(&ok(&Row::ParallelSessions), model::SESSIONS_PER_S).note;
            from_best("the service time is", model::SESSIONS_PER_S, c, note);
            c.metrics.get(model::SESSIONS_PER_S).copied()
        })
        .map(est);
    // The best of sequential and parallel bulk among those whose figure holds (every
    // parallel one, the sequential one its row names): none when the sequential cell
    // cannot be told, or none holds.
    let bulk = match pick(&Row::SequentialBulk, "bulk goodput or packets/s") {
        Ok(seq) => {
            let mut cs = ok(&Row::ParallelBulk);
            cs.extend(seq);
            let Chosen { configs, note } = best_holding(&cs, model::GOODPUT_BPS);
            match configs.first().copied() {
                Some(c) => {
                    from_best(
                        "bulk goodput and packets/s are",
                        model::GOODPUT_BPS,
                        c,
                        note,
                    );
                    c.metrics.get(model::GOODPUT_BPS).map(|s| (c, est(*s)))
                }
                None => {
                    if let Some(why) = note {
                        refuse(
                            "bulk goodput or packets/s",
                            format!("its bulk cells name {why}"),
                        );
                    }
                    None
                }
            }
        }
        Err(()) => None,
    };
    refused.extend(passed_over);
    let bulk_bps = bulk.map(|b| b.1);
    // Packets through the gateway during that bulk row, from its interface counters.
    let bulk_pps = bulk
        .and_then(|(c, _)| c.metrics.get(crate::model::GATEWAY_PPS).copied())
        .map(est);
    crate::service::Measured {
        name: col.1.clone(),
        null: col.0 == 0,
        ping,
        latency_s,
        sessions_per_s,
        bulk_bps,
        bulk_pps,
    }
}

/// The y of one bar series, from a configuration.
type BarY = fn(&Config) -> Option<(f64, Option<f64>)>;

/// One series of a bar chart per firewall type: the row it comes from, its name and y.
type BarPart = (Row, &'static str, BarY);

/// Bar charts per firewall type: sequential session latency, parallel sessions/s, and
/// bulk goodput (sequential, parallel, and net of the per-session overhead).
fn type_bars(
    cells: &BTreeMap<Row, BTreeMap<(u8, String), Vec<&Config>>>,
    cols: &[(u8, String)],
    a: &mut Analysis,
) {
    let latency: BarY = |c| session_over_reps(c).map(|s| (s.mean * 1e3, s.ci95.map(|x| x * 1e3)));
    let rate: BarY = |c| metric(c, "sessions_per_s", 1.0);
    let goodput: BarY = |c| metric(c, "goodput_bps", 1e-6);
    let net: BarY = |c| metric(c, "net_goodput_bps", 1e-6);
    let charts: [(&str, &str, &str, Vec<BarPart>); 3] = [
        (
            "conn-session-latency",
            "Sequential session latency by firewall type (mean, 95 % CI over repetitions)",
            "session latency (ms)",
            vec![(Row::SequentialSessions, "sequential sessions", latency)],
        ),
        (
            "conn-sessions-per-s",
            "Parallel sessions/s by firewall type (best parallelism)",
            "sessions/s",
            vec![(Row::ParallelSessions, "parallel sessions", rate)],
        ),
        (
            "conn-bulk-goodput",
            "Bulk goodput by firewall type",
            "goodput (Mb/s)",
            vec![
                (Row::SequentialBulk, "sequential", goodput),
                (Row::ParallelBulk, "parallel", goodput),
                (Row::SequentialBulk, "sequential, net of overhead", net),
                (Row::ParallelBulk, "parallel, net of overhead", net),
            ],
        ),
    ];
    for (id, title, y_label, parts) in charts {
        let mut series: Vec<Series> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        for (row, what, y) in parts {
            let Some(by_col) = cells.get(&row) else {
                continue;
            };
            // One series per setting that varies besides the firewall type.
            let mut named: BTreeMap<String, Vec<Point>> = BTreeMap::new();
            let all: Vec<&Config> = by_col
                .values()
                .flatten()
                .copied()
                .filter(|c| !c.reps.is_empty())
                .collect();
            let skip = [
                "topology",
                "chain",
                "engine",
                "model",
                "rules",
                "position",
                "import",
                "conn.proxy_buffer",
                "conn.parallel",
                "label",
            ];
            let keys: Vec<String> = varying(&all)
                .into_iter()
                .filter(|k| !skip.contains(&k.as_str()))
                .collect();
            let keys = without_redundant(&all, keys);
            for (i, col) in cols.iter().enumerate() {
                let ok: Vec<&Config> = by_col
                    .get(col)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|c| !c.reps.is_empty())
                    .collect();
                let Chosen { configs, note } = chosen(&row, &ok);
                // The highest mean left out, or no best: said beside the bars.
                if let Some(n) = note {
                    let n = format!("{}: {}: {n}", col.1, row.name().to_lowercase());
                    if !notes.contains(&n) {
                        notes.push(n);
                    }
                }
                for c in configs {
                    let Some((v, ci)) = y(c) else {
                        continue;
                    };
                    let rest = series_name(c, &keys);
                    let name = if rest == "all" {
                        what.to_string()
                    } else {
                        format!("{what}, {rest}")
                    };
                    named.entry(name).or_default().push(Point {
                        x: i as f64,
                        y: v,
                        ci95: ci,
                    });
                    let note = format!(
                        "{}: {} at {} parallel",
                        col.1,
                        row.name().to_lowercase(),
                        c.param("conn.parallel").unwrap_or("-")
                    );
                    if row.best_of().is_some() && !notes.contains(&note) {
                        notes.push(note);
                    }
                }
            }
            series.extend(named.into_iter().map(|(name, points)| Series {
                name,
                points,
                fit: false,
            }));
        }
        let used: BTreeSet<u64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.x.to_bits()))
            .collect();
        if used.len() < 2 {
            continue;
        }
        a.figures.push(Figure {
            id: id.into(),
            title: title.into(),
            x_label: String::new(),
            y_label: y_label.into(),
            kind: Kind::Bar,
            series,
            categories: cols.iter().map(|c| c.1.clone()).collect(),
            markers: vec![],
            spans: vec![],
            overlay: None,
            notes,
            group: None,
        });
    }
}

// ---------------------------------------------------------------------------------
// Sweet spot and held connections.

/// A trial's case name: its label, else its engine and topology.
fn case_of(t: &Trial) -> String {
    t.p.label.clone().unwrap_or_else(|| {
        let p = |k: &Option<String>| k.clone().unwrap_or_default();
        format!("{} {}", p(&t.p.topology), p(&t.p.engine))
            .trim()
            .to_string()
    })
}

/// Sessions sweet-spot searches: sessions/s vs parallelism with the best point marked,
/// a line "sweet spot: P parallel, X sessions/s" per search, and a table.
fn sweet_spot(trials: &[Trial], a: &mut Analysis) {
    let found: Vec<(&Trial, &SearchStored)> = trials
        .iter()
        .filter_map(|t| Some((t, search_of(t)?)))
        .filter(|(_, s)| is_sweet_spot(s))
        .collect();
    if found.is_empty() {
        return;
    }
    let several = found.len() > 1;
    let mut series = Vec::new();
    let mut markers: Vec<Marker> = Vec::new();
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    for (t, s) in &found {
        let case = case_of(t);
        let plateau: Vec<String> = s.plateau.iter().copied().map(num).collect();
        let mut pts: Vec<Point> = Vec::new();
        let mut failing = Vec::new();
        for p in s.points.iter().flatten() {
            let (Some(x), Some(y)) = (p.parallel, p.sessions_per_s) else {
                continue;
            };
            pts.push(Point { x, y, ci95: None });
            if let Some(n) = p.failed.filter(|n| *n > 0) {
                failing.push(format!("{n} failed at {} parallel", num(x)));
            }
        }
        pts.sort_by(|p, q| p.x.total_cmp(&q.x));
        let prefix = if several {
            format!("{case} (trial {}): ", t.id)
        } else {
            String::new()
        };
        match (s.best_parallel, s.best_sessions_per_s) {
            (Some(bp), Some(bs)) => {
                notes.push(format!(
                    "{prefix}sweet spot: {} parallel, {} sessions/s",
                    num(bp),
                    num(bs)
                ));
                let text = format!("sweet spot {}", num(bp));
                if !markers.iter().any(|m| m.text == text) {
                    markers.push(Marker { x: bp, text });
                }
            }
            _ => notes.push(format!("{prefix}no sweet spot found")),
        }
        if !failing.is_empty() {
            notes.push(format!("{prefix}{}", failing.join(", ")));
        }
        rows.push(vec![
            t.id.to_string(),
            case.clone(),
            s.best_parallel.map(num).unwrap_or_default(),
            s.best_sessions_per_s.map(num).unwrap_or_default(),
            s.latency_at_best_s
                .filter(|v| *v > 0.0)
                .map(secs)
                .unwrap_or_default(),
            plateau.join(", "),
            pts.len().to_string(),
            s.trials.map(num).unwrap_or_default(),
        ]);
        series.extend(Series::of_trial(t, &case, pts));
    }
    a.tables.push(Table::new(
        "Sweet-spot searches (sessions, parallel auto)",
        &[
            "trial",
            "case",
            "best parallel",
            "best sessions/s",
            "session latency at best",
            "within 3 % of best (parallel)",
            "points",
            "trials",
        ],
        rows,
    ));
    if !series.is_empty() {
        // What a point is, and so what the best of them is not.
        notes.push(
            "Each point: one trial (no repetition, no CI). The sweet spot is the best \
             single trial; the parallelisms within 3 % of it (the plateau) are not told \
             apart by this search."
                .into(),
        );
        a.figures.push(Figure {
            markers,
            notes,
            ..Figure::line(
                "sessions-sweet-spot",
                "Sessions/s vs parallelism (sweet-spot search)",
                ("parallel sessions (workers)", "sessions/s"),
                series,
            )
        });
    }
}

/// `connections` trials: how many connections were reached and held, and what stopped
/// the opening (one row per trial; trials that could not run say why).
fn held_connections(conn: &[&Config], a: &mut Analysis) {
    let held: Vec<&Config> = conn
        .iter()
        .copied()
        .filter(|c| c.workload == StoredWorkload::Connections)
        .collect();
    if held.is_empty() {
        return;
    }
    let names = FirewallNames::new(&held);
    let keys = without_redundant(&held, varying(&held));
    let mut rows = Vec::new();
    for c in &held {
        let case = c.label.clone().unwrap_or_else(|| {
            let rest: Vec<String> = keys
                .iter()
                .filter(|k| !matches!(k.as_str(), "topology" | "engine" | "chain"))
                .cloned()
                .collect();
            let rest = series_name(c, &rest);
            let fw = names.name(c).1;
            if rest == "all" {
                fw
            } else {
                format!("{fw}, {rest}")
            }
        });
        let mut trials: Vec<&Trial> = c.all_trials().collect();
        trials.sort_by_key(|t| (t.rep, t.id));
        for t in trials {
            let mut r = vec![case.clone(), t.rep.to_string(), t.id.to_string()];
            let hold = conn_of(t).and_then(|x| x.hold.as_ref());
            match (t.status, hold) {
                (Status::Ok, Some(h)) => {
                    let g = |k: Option<u64>| k.map(|k| k.to_string()).unwrap_or_default();
                    r.extend([
                        g(h.reached),
                        g(h.limit),
                        g(h.alive_at_stop),
                        h.limiter.clone().unwrap_or_default(),
                        h.errno.map(|e| e.to_string()).unwrap_or_default(),
                        h.open_ms.map(num).unwrap_or_default(),
                    ]);
                }
                (status, _) => {
                    let why =
                        first_error(std::iter::once(t)).unwrap_or_else(|| "no results".into());
                    let text = if status == Status::Unavailable {
                        format!("N/A ({why})")
                    } else {
                        format!("{} ({why})", t.row.status)
                    };
                    r.push(text);
                    r.extend(vec![String::new(); 5]);
                }
            }
            rows.push(r);
        }
    }
    a.tables.push(Table::new(
        "Held connections (connections workload)",
        &[
            "case",
            "rep",
            "trial",
            "reached",
            "limit",
            "alive at stop",
            "limiter",
            "errno",
            "open (ms)",
        ],
        rows,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The least of many noisy means is no fastest rule count: said to be below the
    /// fewest rules' only where it is measurably, once chosen among all (Welch over the
    /// downloads, 5 a point, Bonferroni over the others).
    #[test]
    fn the_least_of_many_noisy_means_is_no_fastest_rule_count() {
        let pts = |dip: f64| -> Vec<(f64, Pooled)> {
            (0..100)
                .map(|i| {
                    let mean = if i == 58 { 2.0 - dip } else { 2.0 };
                    (
                        i as f64,
                        Pooled {
                            n: 5,
                            mean,
                            sd: 0.1,
                        },
                    )
                })
                .collect()
        };
        // 0.15 ms below, sd 0.1 over 5: t = 2.4 (p ≈ 0.05), far from the 0.05 / 99 asked.
        let noise = least_note(&pts(0.15)).unwrap();
        assert!(
            noise.starts_with("; least mean at 58 rules (1.85 ms), not measurably below 0"),
            "{noise}"
        );
        let real = least_note(&pts(0.5)).unwrap();
        assert!(
            real.starts_with("; least mean at 58 rules (1.5 ms), measurably below 0 rules'")
                && real.contains("Bonferroni over the 99 others"),
            "{real}"
        );
        let mut flat = pts(0.0);
        flat[0].1.mean = 1.9;
        assert_eq!(
            least_note(&flat).unwrap(),
            "; least mean at 0 rules (1.9 ms)"
        );
        // One download a point: no test, nothing measurable; one point: no note.
        let mut bare = pts(0.5);
        bare.iter_mut().for_each(|p| p.1.n = 1);
        assert!(least_note(&bare).unwrap().contains("not measurably below"));
        assert_eq!(least_note(&pts(0.5)[..1]), None);
    }

    /// Seed 003's sequential-bulk cell of the null firewall also holds the appendix's
    /// five buffer sizes (sequential bulk too): the service table's bulk figures came
    /// from the first of them in parameter order (2 KiB) instead of the "sequential
    /// bulk" case. They come from the case the row names; where none or several are,
    /// nothing is derived and a finding says why.
    #[test]
    fn the_derivations_read_the_case_their_row_names() {
        use serde_json::json;
        let trial = |id: i64, topology: &str, label: Option<&str>, size: u64, mbps: f64| {
            let buffer = if topology == "direct" {
                2048 * id
            } else {
                16384
            };
            let mut params = json!({"topology": topology,
                                    "conn": {"parallel": 1, "proxy_buffer": buffer, "size": size}});
            if let Some(l) = label {
                params["label"] = json!(l);
            }
            Trial::new(store::TrialRow {
                params,
                results: json!({"conn": {"mode": "bulk", "goodput_bps": mbps * 1e6}}),
                ..crate::testing::trial_row(id, "bulk")
            })
        };
        let appendix = "null firewall: bulk by proxy buffer (appendix)";
        let trials = vec![
            trial(1, "direct", Some(appendix), 1_700_000, 25_500.0),
            trial(2, "direct", Some(appendix), 1_700_000, 24_000.0),
            trial(
                8,
                "direct",
                Some("null firewall: sequential bulk"),
                1_700_000,
                24_200.0,
            ),
            // A gateway whose cell holds two sequential bulk cases, neither named so.
            trial(3, "forward", None, 1_000_000, 20_000.0),
            trial(4, "forward", None, 2_000_000, 21_000.0),
        ];
        let configs = model::configs(&trials, &BTreeMap::new());
        let mut a = Analysis::default();
        seed003(&configs, &[], &mut a);
        let service = a
            .tables
            .iter()
            .find(|t| t.title.starts_with("Service and queuing time"))
            .expect("the service table");
        let pps = |name: &str| {
            let row = service.rows.iter().find(|r| r[0] == name).unwrap();
            row[4].clone()
        };
        let k = crate::service::PACKETS_PER_SEGMENT / (8.0 * crate::service::MSS);
        assert_eq!(
            pps("null firewall"),
            format!("{} (est. from goodput)", mean_ci(24_200e6 * k, None))
        );
        assert_eq!(pps("gateway without rules"), "-");
        let refused: Vec<&String> = a
            .findings
            .iter()
            .filter(|f| f.contains("is derived"))
            .collect();
        assert_eq!(refused.len(), 1, "{:?}", a.findings);
        assert!(
            refused[0].starts_with(
                "gateway without rules: no bulk goodput or packets/s is derived: its \
                 sequential bulk cell holds 2 configurations (conn.size=1000000; \
                 conn.size=2000000), and none of them is the case \"sequential bulk\" by \
                 its label (label the one to derive from so)."
            ),
            "{}",
            refused[0]
        );
    }

    /// A repetition flagged for its failed sessions is left out of the cell's figures,
    /// and the cell says so, with its failures (it read "1 of 2 reps not measured").
    #[test]
    fn a_cell_names_its_flagged_repetitions_and_their_failures() {
        use serde_json::json;
        let trial = |id: i64, status: &str, sessions: u64, failed: u64| {
            Trial::new(store::TrialRow {
                status: status.into(),
                params: json!({"conn": {"parallel": 1, "count": 3000}}),
                results: json!({"conn": {"mode": "sessions", "sessions": sessions,
                                         "failed": failed, "corrupt": 0, "elapsed_s": 0.3,
                                         "sessions_per_s": sessions as f64 / 0.3}}),
                ..crate::testing::trial_row(id, "sessions")
            })
        };
        let trials = [trial(1, "ok", 3000, 0), trial(2, "flagged", 2988, 12)];
        let configs = model::configs(&trials, &BTreeMap::new());
        let cell = quantities(&Row::SequentialSessions, &configs[0]);
        assert!(
            cell.ends_with("; 12 sessions failed; 1 of 2 reps flagged (left out)"),
            "{cell}"
        );
        assert!(cell.contains("(3000 sessions)"), "{cell}");
    }

    /// A seed 003 run of one or two firewall types: `(id, topology, workload,
    /// parallel, status, rate)`, the rate sessions/s (sessions) or Mb/s (bulk).
    fn seed003_of(trials: &[(i64, &str, &str, u32, &str, f64)]) -> Analysis {
        use serde_json::json;
        let trials: Vec<Trial> = trials
            .iter()
            .map(|&(id, topology, workload, parallel, status, rate)| {
                let conn = match workload {
                    "bulk" => json!({"mode": "bulk", "sessions": 9, "failed": 0,
                                     "corrupt": 0, "goodput_bps": rate * 1e6}),
                    _ => json!({"mode": "sessions", "sessions": 3000, "failed": 0,
                                "corrupt": 0, "elapsed_s": 3000.0 / rate,
                                "sessions_per_s": rate}),
                };
                Trial::new(store::TrialRow {
                    status: status.into(),
                    rep: id as u32,
                    params: json!({"topology": topology, "conn": {"parallel": parallel}}),
                    results: json!({ "conn": conn }),
                    ..crate::testing::trial_row(id, workload)
                })
            })
            .collect();
        let configs = model::configs(&trials, &BTreeMap::new());
        let mut a = Analysis::default();
        seed003(&configs, &[], &mut a);
        a
    }

    /// The cell of `row` and the first firewall type (the null firewall).
    fn null_cell(a: &Analysis, row: &str) -> String {
        let t = a
            .tables
            .iter()
            .find(|t| t.title.starts_with("Firewall types"))
            .expect("seed 003's table");
        t.rows.iter().find(|r| r[0] == row).expect(row)[1].clone()
    }

    /// Parallel rows named as best the configuration with the highest mean, whatever
    /// its repetitions: 8 parallel, with 2 of its 3 repetitions flagged, read 30000
    /// sessions/s (the one left, the luckiest) and was the cell, the bar and the
    /// service time. The best is now among those whose repetitions all hold, and the
    /// cell, the bars and the findings say which higher mean was left out and why;
    /// likewise the best of sequential and parallel bulk.
    #[test]
    fn a_best_is_named_only_among_configurations_whose_repetitions_hold() {
        let a = seed003_of(&[
            (1, "direct", "sessions", 4, "ok", 19_900.0),
            (2, "direct", "sessions", 4, "ok", 20_000.0),
            (3, "direct", "sessions", 4, "ok", 20_100.0),
            (4, "direct", "sessions", 8, "ok", 30_000.0),
            (5, "direct", "sessions", 8, "flagged", 12_000.0),
            (6, "direct", "sessions", 8, "flagged", 11_000.0),
            (7, "forward", "sessions", 4, "ok", 15_000.0),
            (8, "forward", "sessions", 4, "ok", 15_100.0),
            // Bulk: sequential holds, the higher parallel one does not.
            (11, "direct", "bulk", 1, "ok", 19_900.0),
            (12, "direct", "bulk", 1, "ok", 20_100.0),
            (13, "direct", "bulk", 3, "ok", 30_000.0),
            (14, "direct", "bulk", 3, "flagged", 10_000.0),
        ]);
        let left_out = "the highest mean, 30000 sessions/s at 8 parallel, is left out: 2 of 3 \
                        reps flagged";
        let cell = null_cell(&a, "Parallel sessions");
        assert!(
            cell.contains("; 4 parallel; best of those whose repetitions all hold; ")
                && cell.ends_with(left_out),
            "{cell}"
        );
        assert!(
            cell.starts_with("150.0 ± 1.9 ms total (3000 sessions); 20000 ± 250 sessions/s"),
            "the 4-parallel figures: {cell}"
        );
        let rate = mean_ci(
            20_000.0,
            Summary::of(&[19_900.0, 20_000.0, 20_100.0]).unwrap().ci95,
        );
        assert!(
            a.findings.contains(&format!(
                "null firewall: the service time is derived from {rate} sessions/s at 4 \
                 parallel, the best of those whose repetitions all hold; {left_out}."
            )),
            "{:#?}",
            a.findings
        );
        let bars = a
            .figures
            .iter()
            .find(|f| f.id == "conn-sessions-per-s")
            .expect("the sessions/s bars");
        assert_eq!(bars.series[0].points[0].y, 20_000.0);
        assert!(
            bars.notes.contains(&format!(
                "null firewall: parallel sessions: best of those whose repetitions all hold; \
                 {left_out}"
            )),
            "{:?}",
            bars.notes
        );
        // Bulk: derived from sequential bulk; the parallel cell names no best.
        assert!(
            a.findings.contains(&format!(
                "null firewall: bulk goodput and packets/s are derived from {} Mb/s at 1 \
                 parallel, the best of those whose repetitions all hold; the highest mean, \
                 30000 Mb/s at 3 parallel, is left out: 1 of 2 reps flagged.",
                mean_ci(20_000.0, Summary::of(&[19_900.0, 20_100.0]).unwrap().ci95)
            )),
            "{:#?}",
            a.findings
        );
        assert_eq!(
            null_cell(&a, "Parallel bulk"),
            "no best: its 1 configuration does not hold in every repetition; the highest \
             mean, 30000 Mb/s at 3 parallel: 1 of 2 reps flagged"
        );
        // None holds: no best, no service time, each said why.
        let a = seed003_of(&[
            (4, "direct", "sessions", 8, "ok", 30_000.0),
            (5, "direct", "sessions", 8, "flagged", 12_000.0),
            (6, "direct", "sessions", 16, "ok", 25_000.0),
            (7, "direct", "sessions", 16, "flagged", 12_000.0),
        ]);
        let none = "no best: none of its 2 configurations holds in every repetition; the \
                    highest mean, 30000 sessions/s at 8 parallel: 1 of 2 reps flagged";
        assert_eq!(null_cell(&a, "Parallel sessions"), none);
        assert!(
            a.findings.contains(&format!(
                "null firewall: no service time is derived: its parallel sessions cell names \
                 {none}."
            )),
            "{:#?}",
            a.findings
        );
        // Repetitions that failed (a client out of file descriptors at 64 parallel in 2
        // of 3): the one left may be the luckiest, no best either.
        let a = seed003_of(&[
            (1, "direct", "sessions", 4, "ok", 20_000.0),
            (2, "direct", "sessions", 4, "ok", 20_100.0),
            (3, "direct", "sessions", 64, "ok", 30_000.0),
            (4, "direct", "sessions", 64, "failed", 0.0),
            (5, "direct", "sessions", 64, "failed", 0.0),
        ]);
        let cell = null_cell(&a, "Parallel sessions");
        assert!(
            cell.contains("; 4 parallel; best of those whose repetitions all hold; ")
                && cell.ends_with(
                    "the highest mean, 30000 sessions/s at 64 parallel, is left out: 2 of 3 \
                     reps failed"
                ),
            "{cell}"
        );
    }

    /// A bulk repetition whose charged session overhead filled its whole run has a
    /// split that does not describe it (its overhead clamped to the elapsed time, its
    /// transfer ~0): averaged in, the cell read "12.5 s overhead + 10.7 s transfer" of
    /// runs that split 13.8 + 16. It is left out of the split, counted; none left, no
    /// split.
    #[test]
    fn a_split_that_does_not_describe_its_run_is_left_out_of_the_means() {
        use serde_json::json;
        let trial = |id: i64, overhead: f64, transfer: f64| {
            let net = if transfer > 1e-6 {
                json!(17e6 * 8.0 / transfer)
            } else {
                json!(null)
            };
            Trial::new(store::TrialRow {
                rep: id as u32,
                params: json!({"conn": {"parallel": 1}}),
                results: json!({"conn": {"mode": "bulk", "sessions": 10, "failed": 0,
                    "corrupt": 0, "elapsed_s": overhead + transfer,
                    "goodput_bps": 17e6 * 8.0 / (overhead + transfer),
                    "overhead": {"overhead_s": overhead, "transfer_s": transfer,
                                 "net_goodput_bps": net}}}),
                ..crate::testing::trial_row(id, "bulk")
            })
        };
        let trials = [
            trial(1, 13.6, 15.8),
            trial(2, 14.0, 16.2),
            trial(3, 10.0, 1e-9),
        ];
        let configs = model::configs(&trials, &BTreeMap::new());
        let cell = quantities(&Row::SequentialBulk, &configs[0]);
        let of = |v: &[f64]| {
            let s = Summary::of(v).unwrap();
            secs_ci(s.mean, s.ci95)
        };
        let split = format!(
            "; split over the 2 of 3 repetitions it describes: {} overhead + {} transfer; \
             goodput ",
            of(&[13.6, 14.0]),
            of(&[15.8, 16.2])
        );
        assert!(cell.contains(&split), "{split} in {cell}");
        assert!(
            cell.contains("none in 1 of 3 repetitions: the measured session overhead filled"),
            "{cell}"
        );
        // None describes its run: no split, and no net goodput, each said.
        let trials = [trial(1, 10.0, 1e-9), trial(2, 10.0, 1e-9)];
        let configs = model::configs(&trials, &BTreeMap::new());
        let cell = quantities(&Row::SequentialBulk, &configs[0]);
        assert!(
            cell.contains(" total; no overhead split: it describes none of the 2 repetitions; ")
                && cell.contains("(net of overhead: none in 2 of 2 repetitions"),
            "{cell}"
        );
    }

    /// Requests the server got that fwbench's client never sends flag the trial
    /// (fwbench's doubt); the cell says how many beside the flag.
    #[test]
    fn a_cell_names_the_servers_bad_requests() {
        use serde_json::json;
        let trial = |id: i64, status: &str, bad: u64| {
            Trial::new(store::TrialRow {
                status: status.into(),
                params: json!({"conn": {"parallel": 1}}),
                results: json!({"conn": {"mode": "sessions", "sessions": 100, "failed": 0,
                    "corrupt": 0, "elapsed_s": 0.1, "sessions_per_s": 1000.0,
                    "server": {"accepted": 100, "bad_requests": bad}}}),
                ..crate::testing::trial_row(id, "sessions")
            })
        };
        let trials = [trial(1, "ok", 0), trial(2, "flagged", 3)];
        let configs = model::configs(&trials, &BTreeMap::new());
        let cell = quantities(&Row::SequentialSessions, &configs[0]);
        assert!(
            cell.ends_with(
                "; the server got 3 requests fwbench's client never sends; 1 of 2 reps \
                 flagged (left out)"
            ),
            "{cell}"
        );
    }

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(secs(41.3), "41.3 s");
        assert_eq!(secs(0.00138), "1.38 ms");
        assert_eq!(secs_ci(0.000052, Some(0.000002)), "52.0 ± 2.0 µs");
        assert_eq!(bytes(16384), "16 KiB");
        assert_eq!(bytes(1000), "1000 B");
        assert_eq!(p_text(0.0355), "0.0355");
        assert_eq!(p_text(1.5e-9), "1.50e-9");
        assert_eq!(p_text(0.0), "< 1e-300");
    }
}
