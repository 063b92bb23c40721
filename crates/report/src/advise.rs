//! "Rules advise": a `rules advise --measure --db` run — floods through the original
//! and the optimised ruleset, told apart by the imported file (`original.nft` and
//! `optimised.nft`, or `original.rules` and `optimised.rules`, in one directory) — as
//! one figure: the time per packet (1 / received packets per second at the highest
//! rate) of each ruleset with its 95 % CI, and the saving per packet (original −
//! optimised) with its 95 % CI (Welch); and the answer in a sentence.
//!
//! Owns: choosing those trials, the figure and the sentence. Must not: read the store
//! (it gets the run's trials) or draw.

use crate::figure::{mean_ci, num, Figure, Kind, Point, Series};
use crate::model::Trial;
use crate::stats::{difference, Summary};
use std::collections::BTreeMap;

/// The two rulesets' floods of one measurement: time per packet (ns) of each
/// measured flood, and the floods that were not measured.
#[derive(Default)]
struct Pair {
    ns: [Vec<f64>; 2],
    unmeasured: usize,
}

/// Which ruleset a trial's imported file is (0: original, 1: optimised), and the
/// measurement it belongs to (engine, directory, destination port).
fn side(t: &Trial) -> Option<(usize, String)> {
    let import = std::path::Path::new(t.p.import.as_deref()?);
    let which = match import.file_name()?.to_str()? {
        "original.nft" | "original.rules" => 0,
        "optimised.nft" | "optimised.rules" => 1,
        _ => return None,
    };
    let dport =
        t.p.packet
            .as_ref()
            .and_then(|p| p.dport.first())
            .map_or(String::new(), |p| format!(", udp port {p}"));
    let key = format!(
        "engine {}{dport} ({})",
        t.p.engine.as_deref().unwrap_or("?"),
        import.parent()?.display()
    );
    Some((which, key))
}

fn pairs(trials: &[Trial]) -> BTreeMap<String, Pair> {
    let mut by: BTreeMap<String, Pair> = BTreeMap::new();
    for t in trials {
        let Some((which, key)) = side(t) else {
            continue;
        };
        let p = by.entry(key).or_default();
        match t
            .headline
            .received_pps
            .filter(|p| *p > 0.0 && t.status == results::Status::Ok)
        {
            Some(pps) => p.ns[which].push(1e9 / pps),
            None => p.unmeasured += 1,
        }
    }
    by.retain(|_, p| !p.ns[0].is_empty() && !p.ns[1].is_empty());
    by
}

/// The measurement's name without the scratch directory it ran in.
fn short(key: &str) -> &str {
    key.split(" (").next().unwrap_or(key)
}

/// The figure of each measurement in the run: bars for the original, the optimised
/// ruleset and the saving, each with its 95 % CI.
pub fn figures(trials: &[Trial]) -> Vec<Figure> {
    pairs(trials)
        .into_iter()
        .map(|(key, p)| {
            let (o, n) = (Summary::of(&p.ns[0]), Summary::of(&p.ns[1]));
            let d = difference(&p.ns[1], &p.ns[0]);
            let bar =
                |x: f64, s: Option<(f64, Option<f64>)>| s.map(|(y, ci95)| Point { x, y, ci95 });
            let points = [
                bar(0.0, o.map(|s| (s.mean, s.ci95))),
                bar(1.0, n.map(|s| (s.mean, s.ci95))),
                bar(2.0, d.map(|d| (d.delta, d.ci95))),
            ]
            .into_iter()
            .flatten()
            .collect();
            let mut notes = vec![format!(
                "{} floods through each ruleset at the highest rate, interleaved; a bar \
                 is the mean time per packet (1 / received packets per second), its \
                 whisker the 95 % CI; the saving's CI is Welch's.",
                p.ns[0].len().min(p.ns[1].len())
            )];
            if p.unmeasured > 0 {
                notes.push(format!(
                    "{} floods are not plotted: their traffic did not arrive.",
                    p.unmeasured
                ));
            }
            Figure {
                id: "advise".into(),
                title: format!(
                    "Rules advise: time per packet, original vs optimised ruleset ({})",
                    short(&key)
                ),
                x_label: "ruleset".into(),
                y_label: "time per packet (ns, 1 / received pps)".into(),
                kind: Kind::Bar,
                series: vec![Series {
                    name: short(&key).to_owned(),
                    points,
                    fit: false,
                }],
                categories: vec![
                    "original".into(),
                    "optimised".into(),
                    "saving (original − optimised)".into(),
                ],
                markers: vec![],
                spans: vec![],
                overlay: None,
                notes,
                group: None,
            }
        })
        .collect()
}

/// The answer per measurement: the saving per packet with its CI, the ratio, both
/// rulesets' times.
pub fn findings(trials: &[Trial]) -> Vec<String> {
    pairs(trials)
        .into_iter()
        .filter_map(|(key, p)| {
            let (o, n) = (Summary::of(&p.ns[0])?, Summary::of(&p.ns[1])?);
            let d = difference(&p.ns[1], &p.ns[0])?;
            let verdict = match d.ci95 {
                Some(c) if d.delta.abs() <= c => "no measurable saving".to_owned(),
                _ if d.delta > 0.0 => format!(
                    "{}× cheaper per packet",
                    num((o.mean / n.mean * 10.0).round() / 10.0)
                ),
                _ => format!(
                    "{}× dearer per packet",
                    num((n.mean / o.mean * 10.0).round() / 10.0)
                ),
            };
            Some(format!(
                "rules advise ({}): the optimised ruleset saves {} ns per packet (95 % CI, \
                 Welch; {} and {} floods): {verdict} — original {} ns, optimised {} ns per \
                 packet.",
                short(&key),
                mean_ci(d.delta, d.ci95),
                p.ns[0].len(),
                p.ns[1].len(),
                mean_ci(o.mean, o.ci95),
                mean_ci(n.mean, n.ci95)
            ))
        })
        .collect()
}

#[cfg(test)]
#[path = "advise_tests.rs"]
mod tests;
