//! Which figures and tables a run gets, chosen from what varies among its
//! configurations, and the cost fits (ns per rule per packet, knee) behind them.

use crate::model::{main_metric, Config};
use crate::stats::{self, LineFit};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use store::TrialRow;

/// One plotted value: the mean over repetitions and its 95 % CI half-width.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub ci95: Option<f64>,
}

/// A named line of points; `fit` series are drawn as dashed lines without markers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    pub fit: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// x numeric, one polyline per series with CI whiskers.
    Line,
    /// x = index into `categories`, one bar per series and category.
    Bar,
}

/// A vertical mark on a line chart (e.g. the threads/epoll crossover).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Marker {
    pub x: f64,
    pub text: String,
}

/// A chart, independent of how it is drawn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// Stable identifier (e.g. `echo-per-client-vs-clients`).
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub kind: Kind,
    pub series: Vec<Series>,
    /// Bar charts: the category names (x = index).
    pub categories: Vec<String>,
    pub markers: Vec<Marker>,
    /// Sentences printed under the figure.
    pub notes: Vec<String>,
}

/// A table of text cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Cost model of one series: time per packet t = a + b·rules, b in ns per rule per packet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostFit {
    pub series: String,
    /// Distinct rule counts fitted.
    pub rule_counts: usize,
    /// The fit over every repetition (x = rules, y = 1e9 / received pps, ns).
    pub fit: LineFit,
    /// Two-segment knee of received pps vs rules (see [`stats::knee_piecewise`]).
    pub knee_rules: Option<f64>,
    /// Degradation point: (last rule count within 5 % of the plateau, first beyond).
    pub degradation: Option<(f64, f64)>,
}

/// Everything chosen for one run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Analysis {
    pub figures: Vec<Figure>,
    pub tables: Vec<Table>,
    pub fits: Vec<CostFit>,
}

/// Drop in received pps beyond which a rule count counts as degraded.
pub const DEGRADED_DROP: f64 = 0.05;

/// Choose a run's figures, tables and fits from its configurations and trials.
pub fn analyse(configs: &[Config], trials: &[TrialRow]) -> Analysis {
    let mut a = Analysis::default();
    a.tables.push(config_table(configs));
    let ok: Vec<&Config> = configs.iter().filter(|c| !c.reps.is_empty()).collect();
    let echo: Vec<&Config> = ok
        .iter()
        .copied()
        .filter(|c| c.workload == "echo")
        .collect();
    let packet: Vec<&Config> = ok
        .iter()
        .copied()
        .filter(|c| c.workload == "flood" || c.workload == "flow")
        .collect();
    let searched = trials
        .iter()
        .any(|t| search_of(t).is_some_and(|s| !is_sweet_spot(s)));
    echo_figures(&echo, &mut a);
    packet_figures(&packet, !searched, &mut a);
    // Connection workloads have tables of their own (seed 003's, A/B, held connections).
    let not_conn: Vec<&Config> = ok
        .iter()
        .copied()
        .filter(|c| !crate::model::is_conn(&c.workload))
        .collect();
    label_table(&not_conn, &mut a);
    search_outputs(trials, &mut a);
    crate::conn::analyse(configs, trials, &mut a);
    a
}

/// Parameter keys with ≥ 2 distinct values (absent counts as a value) among configs.
pub fn varying(configs: &[&Config]) -> Vec<String> {
    let keys: BTreeSet<&String> = configs.iter().flat_map(|c| c.flat.keys()).collect();
    keys.into_iter()
        .filter(|k| {
            let vals: BTreeSet<Option<&String>> = configs.iter().map(|c| c.flat.get(*k)).collect();
            vals.len() >= 2
        })
        .cloned()
        .collect()
}

/// Keys whose values pair one to one with an earlier-preferred key's values (a case's
/// size and rate go with its label; `chain` goes with `topology`) only repeat it in
/// series names: leave them out.
pub(crate) fn without_redundant(configs: &[&Config], keys: Vec<String>) -> Vec<String> {
    const PREFERRED: &[&str] = &["label", "engine", "topology", "model"];
    let rank = |k: &String| {
        PREFERRED
            .iter()
            .position(|p| p == k)
            .unwrap_or(PREFERRED.len())
    };
    let mut ordered = keys.clone();
    ordered.sort_by_key(rank);
    let one_to_one = |a: &String, b: &String| {
        let mut ab: BTreeMap<Option<&String>, Option<&String>> = BTreeMap::new();
        let mut ba: BTreeMap<Option<&String>, Option<&String>> = BTreeMap::new();
        configs.iter().all(|c| {
            let (x, y) = (c.flat.get(a), c.flat.get(b));
            *ab.entry(x).or_insert(y) == y && *ba.entry(y).or_insert(x) == x
        })
    };
    let mut kept: Vec<String> = Vec::new();
    for k in ordered {
        if !kept.iter().any(|j| one_to_one(j, &k)) {
            kept.push(k);
        }
    }
    keys.into_iter().filter(|k| kept.contains(k)).collect()
}

/// Series name of a configuration: its values of the given keys (`all` when none).
pub fn series_name(c: &Config, keys: &[String]) -> String {
    let parts: Vec<String> = keys
        .iter()
        .map(|k| format!("{k}={}", c.param(k).unwrap_or("-")))
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join(", ")
    }
}

/// Group configurations into series by every varying key not in `skip`.
pub(crate) fn group<'a>(
    configs: &[&'a Config],
    skip: &[&str],
) -> BTreeMap<String, Vec<&'a Config>> {
    let keys: Vec<String> = varying(configs)
        .into_iter()
        .filter(|k| !skip.contains(&k.as_str()))
        .collect();
    let keys = without_redundant(configs, keys);
    let mut out: BTreeMap<String, Vec<&Config>> = BTreeMap::new();
    for c in configs {
        out.entry(series_name(c, &keys)).or_default().push(c);
    }
    out
}

/// Mean and CI of a metric, scaled (e.g. bps → Mb/s with 1e-6).
pub(crate) fn metric(c: &Config, name: &str, scale: f64) -> Option<(f64, Option<f64>)> {
    let s = c.metrics.get(name)?;
    Some((s.mean * scale, s.ci95.map(|x| x * scale)))
}

/// The x of a configuration in a figure.
pub(crate) type XOf<'a> = dyn Fn(&Config) -> Option<f64> + 'a;
/// The y (mean, CI half-width) of a configuration in a figure.
pub(crate) type YOf<'a> = dyn Fn(&Config) -> Option<(f64, Option<f64>)> + 'a;

/// Points of one series: (x, y) per configuration, sorted by x.
fn points(configs: &[&Config], x: &XOf<'_>, y: &YOf) -> Vec<Point> {
    let mut p: Vec<Point> = configs
        .iter()
        .filter_map(|c| {
            let (v, ci) = y(c)?;
            Some(Point {
                x: x(c)?,
                y: v,
                ci95: ci,
            })
        })
        .collect();
    p.sort_by(|a, b| a.x.total_cmp(&b.x));
    p
}

/// A line figure from series groups; `None` unless some x values differ.
pub(crate) fn line_figure(
    id: &str,
    title: &str,
    labels: (&str, &str),
    groups: &BTreeMap<String, Vec<&Config>>,
    x: &XOf<'_>,
    y: &YOf<'_>,
) -> Option<Figure> {
    let series: Vec<Series> = groups
        .iter()
        .map(|(name, cs)| Series {
            name: name.clone(),
            points: points(cs, x, y),
            fit: false,
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let xs: BTreeSet<u64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x.to_bits()))
        .collect();
    (xs.len() >= 2).then(|| Figure {
        id: id.into(),
        title: title.into(),
        x_label: labels.0.into(),
        y_label: labels.1.into(),
        kind: Kind::Line,
        series,
        categories: vec![],
        markers: vec![],
        notes: vec![],
    })
}

/// Echo figures: per-client throughput vs clients and vs frame size, decrease vs the
/// baseline, threads vs epoll.
fn echo_figures(echo: &[&Config], a: &mut Analysis) {
    let vary = varying(echo);
    let varies = |k: &str| vary.iter().any(|v| v == k);
    let per_client = |c: &Config| metric(c, "throughput_per_client_bps", 1e-6);
    if varies("clients") {
        let g = group(echo, &["clients"]);
        let x = |c: &Config| c.param_f64("clients");
        a.figures.extend(line_figure(
            "echo-per-client-vs-clients",
            "Echo throughput per client vs clients",
            ("clients (n)", "throughput per client (Mb/s)"),
            &g,
            &x,
            &per_client,
        ));
    }
    if varies("frame_size") {
        let fixed: Vec<&Config> = echo
            .iter()
            .copied()
            .filter(|c| c.param_f64("frame_size").is_some())
            .collect();
        let g = group(&fixed, &["frame_size"]);
        let x = |c: &Config| c.param_f64("frame_size");
        a.figures.extend(line_figure(
            "echo-per-client-vs-frame",
            "Echo throughput per client vs frame size",
            ("frame size (bytes)", "throughput per client (Mb/s)"),
            &g,
            &x,
            &per_client,
        ));
    }
    cost_figure(echo, "clients", "clients (n)", "echo", a);
    threads_vs_epoll(echo, a);
}

/// Decrease of the main metric vs the baseline by `x_key`, one series per other setting.
fn cost_figure(configs: &[&Config], x_key: &str, x_label: &str, what: &str, a: &mut Analysis) {
    let costed: Vec<&Config> = configs
        .iter()
        .copied()
        .filter(|c| c.cost_pct.is_some())
        .collect();
    if costed.is_empty() {
        return;
    }
    let g = group(&costed, &[x_key]);
    let x = |c: &Config| c.param_f64(x_key);
    let y = |c: &Config| c.cost_pct.map(|v| (v, None));
    let id = format!("{what}-decrease-vs-baseline");
    let title = format!("{} decrease vs baseline", capitalise(what));
    a.figures.extend(line_figure(
        &id,
        &title,
        (x_label, "decrease vs baseline (%)"),
        &g,
        &x,
        &y,
    ));
}

/// First letter upper-case.
fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// Threads vs epoll servers: total throughput by n, marking where their order flips.
fn threads_vs_epoll(echo: &[&Config], a: &mut Analysis) {
    let servers: BTreeSet<&str> = echo.iter().filter_map(|c| c.param("server")).collect();
    if !(servers.contains("threads") && servers.contains("epoll")) {
        return;
    }
    let g = group(echo, &["clients"]);
    let x = |c: &Config| c.param_f64("clients");
    let y = |c: &Config| metric(c, "throughput_bps", 1e-6);
    let Some(mut fig) = line_figure(
        "echo-threads-vs-epoll",
        "Echo throughput: threads vs epoll server",
        ("clients (n)", "throughput (Mb/s)"),
        &g,
        &x,
        &y,
    ) else {
        return;
    };
    for (rest, cs) in group(echo, &["clients", "server"]) {
        let pick = |mode: &str| {
            let v: Vec<&Config> = cs
                .iter()
                .copied()
                .filter(|c| c.param("server") == Some(mode))
                .collect();
            points(&v, &x, &y)
        };
        for (x0, x1, xc) in crossovers(&pick("threads"), &pick("epoll")) {
            let text = format!("n≈{xc:.1}");
            if !fig.markers.iter().any(|m| m.text == text) {
                fig.markers.push(Marker { x: xc, text });
            }
            fig.notes.push(format!(
                "{rest}: threads − epoll changes sign between n = {x0} and n = {x1} (crossover ≈ {xc:.1})"
            ));
        }
    }
    if fig.markers.is_empty() {
        fig.notes
            .push("No crossover: one server mode leads at every n.".into());
    }
    a.figures.push(fig);
}

/// Where the difference a − b changes sign over common x: (x before, x after, linear
/// interpolation of the zero).
pub fn crossovers(a: &[Point], b: &[Point]) -> Vec<(f64, f64, f64)> {
    let d: Vec<(f64, f64)> = a
        .iter()
        .filter_map(|p| {
            let q = b.iter().find(|q| q.x == p.x)?;
            Some((p.x, p.y - q.y))
        })
        .collect();
    d.windows(2)
        .filter(|w| w[0].1 * w[1].1 < 0.0)
        .map(|w| {
            let ((x0, d0), (x1, d1)) = (w[0], w[1]);
            (x0, x1, x0 + (x1 - x0) * d0 / (d0 - d1))
        })
        .collect()
}

/// The x of packet figures: requested filler rules when that axis varies, otherwise the
/// installed count when it varies.
pub(crate) fn rules_axis(packet: &[&Config]) -> Option<fn(&Config) -> Option<f64>> {
    if varying(packet).iter().any(|k| k == "rules") {
        return Some(|c| c.param_f64("rules"));
    }
    let installed: BTreeSet<u64> = packet
        .iter()
        .filter_map(|c| c.rules)
        .map(f64::to_bits)
        .collect();
    (installed.len() >= 2).then_some((|c| c.rules) as fn(&Config) -> Option<f64>)
}

/// Flood/flow figures: pps, loss, time per packet (with fits), advantage ratio and
/// softirq vs rules; a bar chart of configurations when there is no rules axis.
fn packet_figures(packet: &[&Config], fallback: bool, a: &mut Analysis) {
    if packet.is_empty() {
        return;
    }
    let Some(x) = rules_axis(packet) else {
        if fallback && packet.iter().all(|c| c.label.is_none()) {
            a.figures.extend(bar_of_configs(packet));
        }
        return;
    };
    let g = group(packet, &["rules"]);
    // Curves need a series with two rule counts or more: cases that each have their
    // own rule count (seed 001's table) are not a sweep over rules.
    let swept = g.values().any(|s| {
        let mut xs: Vec<f64> = s.iter().filter_map(|c| x(c)).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs.len() >= 2
    });
    if !swept {
        if fallback && packet.iter().all(|c| c.label.is_none()) {
            a.figures.extend(bar_of_configs(packet));
        }
        return;
    }
    let rules = "rules";
    let pps = |c: &Config| metric(c, "received_pps", 1.0);
    a.figures.extend(line_figure(
        "packet-pps-vs-rules",
        "Received packets/s vs rules",
        (rules, "received (packets/s)"),
        &g,
        &x,
        &pps,
    ));
    advantage_figure(packet, x, a);
    let loss = |c: &Config| metric(c, "loss_ratio", 100.0);
    a.figures.extend(line_figure(
        "packet-loss-vs-rules",
        "Loss vs rules",
        (rules, "loss (%)"),
        &g,
        &x,
        &loss,
    ));
    cost_model(&g, x, a);
    cost_figure(packet, "rules", rules, "packet", a);
    softirq_figure(packet, x, a);
}

/// Bar chart of the main metric of each configuration (named by what varies).
fn bar_of_configs(configs: &[&Config]) -> Option<Figure> {
    if configs.len() < 2 {
        return None;
    }
    let keys = varying(configs);
    let (m, _) = main_metric(&configs[0].workload)?;
    let cats: Vec<String> = configs.iter().map(|c| series_name(c, &keys)).collect();
    let pts = configs
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let (y, ci95) = metric(c, m, 1.0)?;
            Some(Point {
                x: i as f64,
                y,
                ci95,
            })
        })
        .collect();
    Some(bar_figure(
        "packet-configs",
        "Received packets/s by configuration",
        metric_label(m),
        cats,
        pts,
    ))
}

/// Axis label of a main metric, with its unit.
pub fn metric_label(m: &str) -> &str {
    match m {
        "received_pps" => "received (packets/s)",
        "throughput_bps" => "throughput (bit/s)",
        "rtt_p50_us" => "RTT p50 (µs)",
        "sessions_per_s" => "sessions/s",
        "goodput_bps" => "goodput (Mb/s)",
        "ttlb_mean_ms" => "download time, mean (ms)",
        "session_mean_ms" => "session latency, mean (ms)",
        "hold_reached" => "connections held",
        other => other,
    }
}

/// A one-series bar chart.
pub(crate) fn bar_figure(
    id: &str,
    title: &str,
    y_label: &str,
    cats: Vec<String>,
    pts: Vec<Point>,
) -> Figure {
    Figure {
        id: id.into(),
        title: title.into(),
        x_label: String::new(),
        y_label: y_label.into(),
        kind: Kind::Bar,
        series: vec![Series {
            name: y_label.into(),
            points: pts,
            fit: false,
        }],
        categories: cats,
        markers: vec![],
        notes: vec![],
    }
}

/// Advantage ratio pps(A) / pps(B) vs rules for every engine A against a reference B
/// (`nft` when present, else the first engine by name; `none` excluded).
fn advantage_figure(packet: &[&Config], x: fn(&Config) -> Option<f64>, a: &mut Analysis) {
    let engines: BTreeSet<&str> = packet
        .iter()
        .filter_map(|c| c.param("engine"))
        .filter(|e| *e != "none")
        .collect();
    if engines.len() < 2 {
        return;
    }
    let reference = if engines.contains("nft") {
        "nft"
    } else {
        engines.iter().next().copied().unwrap_or("nft")
    };
    let rest = |c: &Config| {
        let mut f = c.flat.clone();
        f.remove("engine");
        f
    };
    let others = group(packet, &["rules", "engine"]);
    let mut series = Vec::new();
    for engine in engines.iter().filter(|e| **e != reference) {
        for (name, cs) in &others {
            let mut pts = Vec::new();
            for c in cs.iter().filter(|c| c.param("engine") == Some(engine)) {
                let Some(b) = cs
                    .iter()
                    .find(|b| b.param("engine") == Some(reference) && rest(b) == rest(c))
                else {
                    continue;
                };
                if let (Some(xv), Some(p)) = (x(c), ratio(c, b)) {
                    pts.push(Point {
                        x: xv,
                        y: p.0,
                        ci95: p.1,
                    });
                }
            }
            pts.sort_by(|p, q| p.x.total_cmp(&q.x));
            if !pts.is_empty() {
                let suffix = if name == "all" {
                    String::new()
                } else {
                    format!(" ({name})")
                };
                series.push(Series {
                    name: format!("{engine} / {reference}{suffix}"),
                    points: pts,
                    fit: false,
                });
            }
        }
    }
    if series.is_empty() {
        return;
    }
    a.figures.push(Figure {
        id: "packet-advantage".into(),
        title: format!("Advantage ratio: received pps of each engine over {reference}"),
        x_label: "rules".into(),
        y_label: format!("pps ratio (engine / {reference})"),
        kind: Kind::Line,
        series,
        categories: vec![],
        markers: vec![],
        notes: vec![],
    });
}

/// received pps of a over b, with the CI propagated from both relative CIs.
fn ratio(a: &Config, b: &Config) -> Option<(f64, Option<f64>)> {
    let (sa, sb) = (
        a.metrics.get("received_pps")?,
        b.metrics.get("received_pps")?,
    );
    if sb.mean == 0.0 || sa.mean == 0.0 {
        return None;
    }
    let r = sa.mean / sb.mean;
    let ci = match (sa.ci95, sb.ci95) {
        (Some(ca), Some(cb)) => Some(r * ((ca / sa.mean).powi(2) + (cb / sb.mean).powi(2)).sqrt()),
        _ => None,
    };
    Some((r, ci))
}

/// Time per packet (ns) vs rules per series, with a least-squares cost line where a
/// series has ≥ 3 rule counts; the fits (and knees of pps vs rules) go to `a.fits`.
fn cost_model(g: &BTreeMap<String, Vec<&Config>>, x: fn(&Config) -> Option<f64>, a: &mut Analysis) {
    let ns = |c: &Config| metric(c, "ns_per_packet", 1.0);
    let Some(mut fig) = line_figure(
        "packet-ns-per-packet",
        "Time per packet vs rules (cost model)",
        ("rules", "time per packet (ns)"),
        g,
        &x,
        &ns,
    ) else {
        return;
    };
    for (name, cs) in g {
        let Some(cf) = fit_series(name, cs, x) else {
            continue;
        };
        let xs: Vec<f64> = cs.iter().filter_map(|c| x(c)).collect();
        let (lo, hi) = xs
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
        let line = |v: f64| Point {
            x: v,
            y: cf.fit.a + cf.fit.b * v,
            ci95: None,
        };
        fig.series.push(Series {
            name: format!("fit: {name}"),
            points: vec![line(lo), line(hi)],
            fit: true,
        });
        fig.notes.push(format!(
            "{name}: {} ns per rule per packet{} (R² {:.3}, {} rule counts)",
            num(cf.fit.b),
            cf.fit
                .b_ci95
                .map(|c| format!(" ± {}", num(c)))
                .unwrap_or_default(),
            cf.fit.r2,
            cf.rule_counts
        ));
        a.fits.push(cf);
    }
    a.figures.push(fig);
}

/// Fit t = 1e9 / pps over every repetition of a series with ≥ 3 rule counts.
fn fit_series(name: &str, cs: &[&Config], x: fn(&Config) -> Option<f64>) -> Option<CostFit> {
    let counts: BTreeSet<u64> = cs.iter().filter_map(|c| x(c)).map(f64::to_bits).collect();
    if counts.len() < 3 {
        return None;
    }
    let pts: Vec<(f64, f64)> = cs
        .iter()
        .filter_map(|c| Some((x(c)?, c.values.get("ns_per_packet")?)))
        .flat_map(|(xv, ys)| ys.iter().map(move |y| (xv, *y)))
        .collect();
    let fit = stats::fit_line(&pts)?;
    let pps: Vec<(f64, f64)> = cs
        .iter()
        .filter_map(|c| Some((x(c)?, c.mean("received_pps")?)))
        .collect();
    Some(CostFit {
        series: name.into(),
        rule_counts: counts.len(),
        fit,
        knee_rules: stats::knee_piecewise(&pps),
        degradation: stats::degradation_point(&pps, DEGRADED_DROP),
    })
}

/// Gateway softirq % per CPU vs rules (only when samples exist).
fn softirq_figure(packet: &[&Config], x: fn(&Config) -> Option<f64>, a: &mut Analysis) {
    let cpus: BTreeSet<&String> = packet
        .iter()
        .flat_map(|c| c.metrics.keys())
        .filter(|k| k.starts_with("gateway.cpu") && k.ends_with(".softirq"))
        .collect();
    if cpus.is_empty() {
        return;
    }
    let mut g: BTreeMap<String, Vec<&Config>> = BTreeMap::new();
    let mut metric_of: BTreeMap<String, String> = BTreeMap::new();
    for (name, cs) in group(packet, &["rules"]) {
        for cpu in &cpus {
            let short = cpu
                .trim_start_matches("gateway.")
                .trim_end_matches(".softirq");
            let key = if name == "all" {
                short.to_string()
            } else {
                format!("{short}, {name}")
            };
            g.insert(key.clone(), cs.clone());
            metric_of.insert(key, (*cpu).clone());
        }
    }
    let series: Vec<Series> = g
        .iter()
        .map(|(name, cs)| Series {
            name: name.clone(),
            points: points(cs, &x, &|c: &Config| metric(c, &metric_of[name], 1.0)),
            fit: false,
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    a.figures.push(Figure {
        id: "packet-softirq-vs-rules".into(),
        title: "Gateway softirq per CPU vs rules".into(),
        x_label: "rules".into(),
        y_label: "softirq (% of CPU)".into(),
        kind: Kind::Line,
        series,
        categories: vec![],
        markers: vec![],
        notes: vec![],
    });
}

/// Seed 001-style table of labelled cases: mean ± CI of the main metric and the cost
/// against the baseline row (or the best row), plus a bar chart of it.
fn label_table(ok: &[&Config], a: &mut Analysis) {
    let labelled: Vec<&Config> = ok.iter().copied().filter(|c| c.label.is_some()).collect();
    let Some((m, higher)) = labelled.first().and_then(|c| main_metric(&c.workload)) else {
        return;
    };
    let labelled: Vec<&Config> = labelled
        .into_iter()
        .filter(|c| c.mean(m).is_some())
        .collect();
    let best =
        labelled
            .iter()
            .filter_map(|c| c.mean(m))
            .reduce(|x, y| if (x > y) == higher { x } else { y });
    let base = labelled
        .iter()
        .find(|c| c.is_baseline)
        .and_then(|c| c.mean(m));
    let Some(refv) = base.or(best) else {
        return;
    };
    let against = if base.is_some() { "baseline" } else { "best" };
    let mut rows = Vec::new();
    let mut pts = Vec::new();
    let mut cats = Vec::new();
    for (i, c) in labelled.iter().enumerate() {
        let s = c.metrics[m];
        let cost = if refv == 0.0 {
            0.0
        } else if higher {
            (refv - s.mean) / refv * 100.0
        } else {
            (s.mean - refv) / refv * 100.0
        };
        let label = c.label.clone().unwrap_or_default();
        rows.push(vec![
            label.clone(),
            s.n.to_string(),
            mean_ci(s.mean, s.ci95),
            format!("{cost:.1}"),
        ]);
        cats.push(label);
        pts.push(Point {
            x: i as f64,
            y: s.mean,
            ci95: s.ci95,
        });
    }
    a.tables.push(Table {
        title: format!("Cases: {m} (cost % vs the {against} row)"),
        columns: vec![
            "label".into(),
            "n".into(),
            format!("{m} (mean ± 95 % CI)"),
            format!("cost vs {against} (%)"),
        ],
        rows,
    });
    let title = format!("{} by case", metric_label(m));
    a.figures
        .push(bar_figure("cases", &title, metric_label(m), cats, pts));
}

/// The search summary (`results.search`) of an ndr/degrade/sweetspot trial.
pub fn search_of(t: &TrialRow) -> Option<&Value> {
    t.results.get("search").filter(|s| s.is_object())
}

/// Is a search summary that of a sessions sweet-spot search (`parallel` auto)?
pub fn is_sweet_spot(s: &Value) -> bool {
    s.get("search").and_then(Value::as_str) == Some("sweetspot")
}

/// ndr/degrade: a table of search results and the loss curve(s) as a figure.
fn search_outputs(trials: &[TrialRow], a: &mut Analysis) {
    let found: Vec<(&TrialRow, &Value)> = trials
        .iter()
        .filter_map(|t| Some((t, search_of(t)?)))
        .filter(|(_, s)| !is_sweet_spot(s))
        .collect();
    if found.is_empty() {
        return;
    }
    let fields = [
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
    let mut columns = vec!["trial".to_string(), "case".to_string()];
    columns.extend(fields.iter().map(|f| f.to_string()));
    let mut rows = Vec::new();
    let mut series = Vec::new();
    let mut degrade = false;
    for (t, s) in &found {
        let case = t
            .params
            .get("label")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| {
                t.params
                    .get("engine")
                    .map(crate::model::text)
                    .unwrap_or_default()
            });
        let mut row = vec![t.id.to_string(), case.clone()];
        row.extend(
            fields
                .iter()
                .map(|f| s.get(*f).map(cell).unwrap_or_default()),
        );
        rows.push(row);
        degrade |= s.get("search").and_then(Value::as_str) == Some("degrade");
        let curve = s
            .get("curve")
            .or_else(|| s.get("points"))
            .and_then(Value::as_array);
        let mut pts: Vec<Point> = curve
            .into_iter()
            .flatten()
            .filter_map(|p| {
                Some(Point {
                    x: p.get("x")?.as_f64()?,
                    y: p.get("loss_ratio")?.as_f64()? * 100.0,
                    ci95: None,
                })
            })
            .collect();
        pts.sort_by(|p, q| p.x.total_cmp(&q.x));
        if !pts.is_empty() {
            series.push(Series {
                name: format!("trial {} {case} rep {}", t.id, t.rep),
                points: pts,
                fit: false,
            });
        }
    }
    a.tables.push(Table {
        title: "Searches (ndr / degrade)".into(),
        columns,
        rows,
    });
    if !series.is_empty() {
        let xl = if degrade {
            "rules (degrade) / offered packets/s (ndr)"
        } else {
            "offered load (packets/s)"
        };
        a.figures.push(Figure {
            id: "search-loss-curve".into(),
            title: "Frame loss rate by offered load (RFC 2544 §26.3)".into(),
            x_label: xl.into(),
            y_label: "frame loss (%)".into(),
            kind: Kind::Line,
            series,
            categories: vec![],
            markers: vec![],
            notes: vec![],
        });
    }
}

/// A JSON scalar as a table cell (numbers rounded for reading).
fn cell(v: &Value) -> String {
    match v {
        Value::Number(n) => n.as_f64().map(num).unwrap_or_else(|| n.to_string()),
        Value::Null => String::new(),
        other => crate::model::text(other),
    }
}

/// A number for reading: integers plain, else 4 significant digits at most.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (3 - mag).clamp(0, 6) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// "mean ± ci" (just the mean without a CI).
pub fn mean_ci(mean: f64, ci: Option<f64>) -> String {
    match ci {
        Some(c) => format!("{} ± {}", num(mean), num(c)),
        None => num(mean),
    }
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

/// Every configuration: what varies, repetitions, the main metric, CV and cost.
fn config_table(configs: &[Config]) -> Table {
    let refs: Vec<&Config> = configs.iter().collect();
    let mut keys = varying(&refs);
    if refs.iter().any(|c| crate::model::is_conn(&c.workload)) {
        keys = without_workload_only(&refs, keys);
    }
    let mut columns = vec!["workload".to_string()];
    columns.extend(keys.iter().cloned());
    columns.extend(
        [
            "ok",
            "failed",
            "unavailable",
            "main metric",
            "mean ± 95 % CI",
            "CV (%)",
            "baseline",
            "cost vs baseline (%)",
        ]
        .map(String::from),
    );
    let rows = configs
        .iter()
        .map(|c| {
            let mut r = vec![c.workload.clone()];
            r.extend(keys.iter().map(|k| c.param(k).unwrap_or("-").to_string()));
            r.extend([c.reps.len(), c.failed.len(), c.unavailable.len()].map(|n| n.to_string()));
            let m = main_metric(&c.workload).map(|m| m.0);
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
            r.push(
                s.map(|s| mean_ci(s.mean * scale, s.ci95.map(|c| c * scale)))
                    .unwrap_or_default(),
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
            r.push(c.cost_pct.map(|v| format!("{v:.1}")).unwrap_or_default());
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
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Point {
        Point { x, y, ci95: None }
    }

    #[test]
    fn crossover_interpolates_the_sign_change() {
        let a = [p(1.0, 10.0), p(2.0, 8.0), p(4.0, 4.0)];
        let b = [p(1.0, 6.0), p(2.0, 6.0), p(4.0, 6.0)];
        let c = crossovers(&a, &b);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].0, c[0].1), (2.0, 4.0));
        assert!((c[0].2 - 3.0).abs() < 1e-12);
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(12345.0), "12345");
        assert_eq!(num(2.51234), "2.512");
        assert_eq!(num(0.012345), "0.01235");
        assert_eq!(mean_ci(10.0, Some(0.5)), "10 ± 0.5");
    }
}
