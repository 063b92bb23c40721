//! From configurations to figure parts: which parameters vary, series names and
//! groups, points with CIs, line and bar figures, the rules axis, metric labels.
//!
//! Owns: the building blocks every analysis (`throughput`, `conn`, `analysis`) uses to
//! make figures the same way.
//! Must not: decide which figures a run gets, or import the analyses above it.

use crate::figure::{num, Figure, Kind, Point, Series};
use crate::model::Config;
use std::collections::{BTreeMap, BTreeSet};

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

/// The nft table family of a configuration: its effective engine's (the store's row),
/// else its `nft_family`, else `inet` (the default, never in the parameters).
pub fn nft_family(c: &Config) -> &str {
    c.engine
        .as_ref()
        .and_then(|e| e.family())
        .or_else(|| c.param("nft_family"))
        .unwrap_or("inet")
}

/// A parameter as series names and tables show it: an engine with its table family
/// where it takes one (`nft (inet)`, `nft-set (ip)`, from the stored effective engine),
/// `nft_family` with its default; else as stored.
pub fn param_text(c: &Config, key: &str) -> Option<String> {
    match key {
        "engine" => Some(match &c.engine {
            Some(e) => match e.family() {
                Some(f) => format!("{} ({f})", e.name()),
                None => e.name().to_string(),
            },
            None => c.param("engine")?.to_string(),
        }),
        "nft_family" => Some(nft_family(c).to_string()),
        // Stored as 0: a sweet-spot search, as its scenario said it.
        "conn.parallel" if c.param(key) == Some("0") => Some("auto".into()),
        k => c.param(k).map(str::to_string),
    }
}

/// Series name of a configuration: its values of the given keys (`all` when none).
/// `nft_family` is left out beside `engine`, which names it already.
pub fn series_name(c: &Config, keys: &[String]) -> String {
    let with_engine = keys.iter().any(|k| k == "engine");
    let parts: Vec<String> = keys
        .iter()
        .filter(|k| !(with_engine && *k == "nft_family"))
        .map(|k| format!("{k}={}", param_text(c, k).as_deref().unwrap_or("-")))
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join(", ")
    }
}

/// Configurations' names among `all`, what differs worked out once: a configuration's
/// label where no other has it, the label with what differs within it where several
/// share it ("128 B (engine=nft, rules=5000)"), else what differs among `all` — a key
/// that only repeats another (`chain` beside `topology`) left out.
pub struct Namer {
    /// What differs among all configurations.
    keys: Vec<String>,
    /// Per label several configurations share: what differs within it.
    shared: BTreeMap<String, Vec<String>>,
}

impl Namer {
    pub fn new(all: &[&Config]) -> Namer {
        let mut by_label: BTreeMap<&str, Vec<&Config>> = BTreeMap::new();
        for c in all {
            if let Some(l) = &c.label {
                by_label.entry(l).or_default().push(c);
            }
        }
        let shared = by_label
            .into_iter()
            .filter(|(_, cs)| cs.len() > 1)
            .map(|(l, cs)| (l.to_string(), without_redundant(&cs, varying(&cs))))
            .collect();
        Namer {
            keys: without_redundant(all, varying(all)),
            shared,
        }
    }

    pub fn name(&self, c: &Config) -> String {
        match &c.label {
            Some(l) => match self.shared.get(l) {
                Some(keys) => format!("{l} ({})", series_name(c, keys)),
                None => l.clone(),
            },
            None => series_name(c, &self.keys),
        }
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
pub(crate) fn points(configs: &[&Config], x: &XOf<'_>, y: &YOf) -> Vec<Point> {
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

/// A line figure from series groups; `None` unless some x values differ. A point a
/// series lacks because fwbench's own sender or sink limited every repetition there
/// (its `y` is what that limit set: a rate, or a sink's loss) is said in the figure's
/// notes, never missing in silence.
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
    if xs.len() < 2 {
        return None;
    }
    let mut f = Figure::line(id, title, labels, series);
    for (name, cs) in groups {
        let drawn = |v: f64| {
            f.series
                .iter()
                .any(|s| &s.name == name && s.points.iter().any(|p| p.x == v))
        };
        let (mut gone, mut by) = (vec![], BTreeSet::new());
        for c in cs.iter().filter(|c| y(c).is_none()) {
            let Some(l) = c.fwbench_limit().filter(|l| l.all()) else {
                continue;
            };
            if let Some(v) = x(c).filter(|v| !drawn(*v)) {
                gone.push(v);
                by.extend(l.by);
            }
        }
        gone.sort_by(f64::total_cmp);
        gone.dedup();
        if !gone.is_empty() {
            let at: Vec<String> = gone.into_iter().map(num).collect();
            let by: Vec<&str> = by.into_iter().collect();
            f.notes.push(format!(
                "{name}: no point at {} {} — fwbench's {} limited every repetition there: \
                 what it measured there is fwbench's limit, not the gateway's (see the \
                 run's warnings)",
                and_list(&at),
                labels.0,
                by.join(" and ")
            ));
        }
    }
    Some(f)
}

/// "a", "a and b", "a, b and c".
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
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
        spans: vec![],
        overlay: None,
        notes: vec![],
        group: None,
    }
}

#[cfg(test)]
#[path = "series_tests.rs"]
mod tests;
