//! Builders of synthetic runs shared by the report's integration tests (`report.rs`,
//! `seeds.rs`): a run's header, a trial record as the store holds it, deterministic
//! noise, and readers of "X ± Y" in findings.
//!
//! Each test binary uses a part of it.
#![allow(dead_code)]

use serde_json::{json, Value};
use store::{Headline, NewRun, TrialRecord};

/// A run of `scenario` on a synthetic host (`bench1`, 8 cores), optionally with the
/// scenario's baseline.
pub fn new_run(scenario: &str, baseline: Option<Value>) -> NewRun {
    NewRun {
        started_at: "2026-01-01T00:00:00Z".into(),
        scenario: scenario.into(),
        scenario_text: Some(format!("name = \"{scenario}\"\n")),
        seed: 42,
        command: format!("fwbench run scenarios/{scenario}.toml"),
        host: store::Host {
            hostname: "bench1".into(),
            kernel: "6.1.0-test".into(),
            cpu_model: "Test CPU @ 3 GHz".into(),
            cores: 8,
            fwbench_version: "0.1.0".into(),
            sysctls: vec![("net.ipv4.ip_forward".into(), "1".into())],
            tools: vec![("nft".into(), "v1.0.6".into())],
            mitigations: vec![],
        },
        baseline,
        tags: vec![],
    }
}

/// A successful trial of `workload` with `params` and its headline.
pub fn trial(
    run_id: i64,
    key: String,
    rep: u32,
    workload: &str,
    params: Value,
    headline: Headline,
) -> TrialRecord {
    TrialRecord {
        run_id,
        trial_key: key,
        rep,
        workload: workload.into(),
        status: "ok".into(),
        started_at: "2026-01-01T00:00:00Z".into(),
        finished_at: "2026-01-01T00:00:01Z".into(),
        params,
        placement: json!({}),
        headline,
        results: json!({}),
        ..Default::default()
    }
}

/// The rule set of `rules` rules on `engine` as the gateway reports it, its verdicts
/// checked and right.
pub fn firewall_row(engine: &str, rules: u64) -> Option<store::FirewallRow> {
    Some(store::FirewallRow {
        engine: engine.into(),
        rules_installed: rules,
        verdicts_ok: Some(true),
        ..Default::default()
    })
}

/// An empty results file in a temp dir (kept while the returned dir lives).
pub fn scratch(name: &str) -> (tempfile::TempDir, store::Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = store::Store::open(&dir.path().join(name)).unwrap();
    (dir, store)
}

/// A run of `scenario` begun in a scratch results file: the file's directory (the
/// file goes with it), the store and the run's id.
pub fn scratch_run(scenario: &str) -> (tempfile::TempDir, store::Store, i64) {
    let (dir, s) = scratch("r.db");
    let run = s.begin_run(&new_run(scenario, None)).unwrap();
    (dir, s, run)
}

/// The report of the run `build` writes into a scratch results file.
pub fn report_of(build: impl FnOnce(&mut store::Store) -> i64) -> report::Report {
    let (_dir, mut s) = scratch("r.db");
    let id = build(&mut s);
    report::load(&s, Some(id)).unwrap()
}

/// The figure `id` of a run.
pub fn figure<'a>(run: &'a report::RunReport, id: &str) -> &'a report::figure::Figure {
    run.analysis
        .figures
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no figure {id}"))
}

/// The `<figure>` element `id` of an HTML page, without its closing tag.
pub fn figure_in_page<'a>(html: &'a str, id: &str) -> &'a str {
    let fig = html
        .split(&format!("<figure id=\"{id}\">"))
        .nth(1)
        .unwrap_or_else(|| panic!("no figure {id} in the page"));
    &fig[..fig.find("</figure>").unwrap_or(fig.len())]
}

/// The index of a table's column by the start of its name.
pub fn column(t: &report::figure::Table, start: &str) -> usize {
    t.columns
        .iter()
        .position(|c| c.starts_with(start))
        .unwrap_or_else(|| panic!("no column {start}: {:?}", t.columns))
}

/// A table of a run by the start of its title.
pub fn table<'a>(run: &'a report::RunReport, title: &str) -> &'a report::figure::Table {
    run.analysis
        .tables
        .iter()
        .find(|t| t.title.starts_with(title))
        .unwrap_or_else(|| panic!("no table {title}"))
}

/// The first note of a figure that contains `part` (panics listing the notes when none
/// does).
pub fn note<'a>(fig: &'a report::figure::Figure, part: &str) -> &'a str {
    fig.notes
        .iter()
        .find(|n| n.contains(part))
        .unwrap_or_else(|| panic!("no note of {} with {part:?} in {:#?}", fig.id, fig.notes))
}

/// The first of a run's findings that contains `part` (panics listing the findings
/// when none does).
pub fn finding<'a>(findings: &'a [String], part: &str) -> &'a str {
    findings
        .iter()
        .find(|f| f.contains(part))
        .unwrap_or_else(|| panic!("no finding with {part:?} in {findings:#?}"))
}

/// The first of a run's findings that starts with `start` (panics listing the
/// findings when none does).
pub fn opening<'a>(findings: &'a [String], start: &str) -> &'a str {
    findings
        .iter()
        .find(|f| f.starts_with(start))
        .unwrap_or_else(|| panic!("no finding starting {start:?} in {findings:#?}"))
}

/// The columns of a CSV text's header, which holds every one of `want`.
pub fn header_with<'a>(csv: &'a str, want: &[&str]) -> Vec<&'a str> {
    let head: Vec<&str> = csv.lines().next().unwrap_or_default().split(',').collect();
    for col in want {
        assert!(head.contains(col), "missing column {col} in {head:?}");
    }
    head
}

/// Mark `run` complete (an hour after it began); its id.
pub fn finish(s: &mut store::Store, run: i64) -> i64 {
    s.finish_run(run, "2026-01-01T01:00:00Z", "complete")
        .unwrap();
    run
}

/// splitmix64 → uniform → normal: deterministic noise.
pub struct Noise(pub u64);

impl Noise {
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.next().max(1e-12), self.next());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Deterministic normal variates (an LCG and Box–Muller) for per-download durations.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    pub fn normal(&mut self, mean: f64, sd: f64) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        mean + sd * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// The first "X ± Y" after `marker` in the finding that contains `marker`.
pub fn pm_after(findings: &[String], marker: &str) -> (f64, f64) {
    let f = findings
        .iter()
        .find(|f| f.contains(marker))
        .unwrap_or_else(|| panic!("no finding with {marker:?} in {findings:#?}"));
    let rest = &f[f.find(marker).unwrap() + marker.len()..];
    let (x, after) = rest
        .split_once(" ± ")
        .unwrap_or_else(|| panic!("no ± in {f}"));
    let x: f64 = x.trim().rsplit(' ').next().unwrap().parse().unwrap();
    let y: f64 = after
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-'))
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (x, y)
}

/// `found` (value, 95 % CI half-width) holds `planted`.
pub fn within(found: (f64, f64), planted: f64, what: &str) {
    assert!(
        (found.0 - planted).abs() <= found.1 && found.1 > 0.0,
        "{what}: {} ± {} does not hold the planted {planted}",
        found.0,
        found.1
    );
}

/// Decimal places of a number as printed ("12.30" → 2, "120" → 0).
fn decimals(s: &str) -> usize {
    s.split_once('.').map_or(0, |(_, d)| d.len())
}

/// Every "A ± B" in `text` is rounded to its CI: B has at most two significant digits
/// and A as many decimals as B (issue 23: no "4.961 ± 0.2747", no "52.09 ± 1.00").
pub fn assert_rounded_to_cis(text: &str) {
    let is_num = |c: char| c.is_ascii_digit() || c == '.' || c == '-';
    for (i, _) in text.match_indices(" ± ") {
        let a: String = text[..i]
            .chars()
            .rev()
            .take_while(|c| is_num(*c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let b: String = text[i + " ± ".len()..]
            .chars()
            .take_while(|c| is_num(*c))
            .collect();
        // "± 0": repetitions that agree exactly; the value is shown as measured.
        if a.parse::<f64>().is_err() || b.parse::<f64>().is_err() || b == "0" {
            continue;
        }
        let at: String = text[..i]
            .chars()
            .rev()
            .take(60)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .chain(text[i..].chars().take(20))
            .collect();
        let sig = b.trim_start_matches(['0', '.']).replace('.', "");
        let sig = if b.contains('.') {
            sig.len()
        } else {
            sig.trim_end_matches('0').len()
        };
        assert!(sig <= 2, "CI {b} has {sig} significant digits: …{at}…");
        assert_eq!(decimals(&a), decimals(&b), "{a} ± {b}: …{at}…");
    }
}

/// The value `s` (a number) is printed to the decimal place of the CI `ci` ("12.3" with
/// "± 1.1"), not to more digits.
pub fn assert_same_place(value: &str, ci: &str, context: &str) {
    assert_eq!(
        decimals(value),
        decimals(ci),
        "{value} vs ± {ci}: {context}"
    );
}

/// The gateway's CPU samples of a trial: each `(metric, value)` (`cpu1.softirq`, …)
/// at 0, 1 and 2 s.
pub fn gateway_cpu(metrics: &[(&str, f64)]) -> Vec<store::SampleRow> {
    (0..3)
        .flat_map(|i| {
            metrics.iter().map(move |(m, v)| store::SampleRow {
                role: "gateway".into(),
                t_s: i as f64,
                metric: (*m).into(),
                value: *v,
            })
        })
        .collect()
}
