//! "Hot rules": the cost of reaching each rule of the user's own (imported) ruleset.
//! A sweep aims trials at rule 1, 2, … K (`aim = "each:K"`); this figure plots the
//! time per packet (1 / received packets per second, so at the maximum rate the
//! gateway's cost per packet) against the aimed rule's position in the ruleset.
//!
//! Owns: choosing those trials and the figure. Must not: read the store (it gets the
//! run's trials) or draw.

use crate::figure::{Figure, Kind, Point, Series};
use crate::stats::Summary;
use std::collections::BTreeMap;
use store::TrialRow;

/// The aimed rule's position (1-based, as `fwbench rules render --import` numbers
/// the rules) of a trial: `N` directly, `CHAIN:N` looked up in the gateway's list of
/// imported rules.
fn position(t: &TrialRow) -> Option<usize> {
    let aim = t.params["packet"]["aim"].as_str()?;
    if let Ok(n) = aim.parse::<usize>() {
        return Some(n);
    }
    let (chain, n) = aim.rsplit_once(':')?;
    let n: u64 = n.parse().ok()?;
    let rules = t.results["gateway"]["firewall"]["verdicts"]["rules"].as_array()?;
    rules
        .iter()
        .position(|r| r["chain"] == chain && r["index"].as_u64() == Some(n))
        .map(|i| i + 1)
}

/// The figure, when the run has trials aimed at imported rules (`None` otherwise).
/// One series per engine and imported file; trials whose traffic did not arrive
/// (a drop rule) have no time per packet at the sink and are counted in a note.
pub fn figure(trials: &[TrialRow]) -> Option<Figure> {
    let mut by: BTreeMap<String, BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    let mut unmeasured = 0;
    let mut aimed = 0;
    for t in trials {
        let Some(pos) = position(t) else { continue };
        aimed += 1;
        let pps = t.headline.received_pps.filter(|p| *p > 0.0);
        let Some(pps) = pps.filter(|_| t.status == "ok") else {
            unmeasured += 1;
            continue;
        };
        let name = format!(
            "{} ({})",
            t.params["engine"].as_str().unwrap_or("?"),
            t.params["import"].as_str().unwrap_or("?")
        );
        by.entry(name)
            .or_default()
            .entry(pos)
            .or_default()
            .push(1e9 / pps);
    }
    if aimed == 0 {
        return None;
    }
    let series = by
        .into_iter()
        .map(|(name, points)| Series {
            name,
            points: points
                .into_iter()
                .filter_map(|(x, ys)| {
                    let s = Summary::of(&ys)?;
                    Some(Point {
                        x: x as f64,
                        y: s.mean,
                        ci95: s.ci95,
                    })
                })
                .collect(),
            fit: false,
        })
        .collect();
    let mut notes = vec![
        "Each point is a trial aimed at one rule of the imported ruleset (--aim N): its \
         packets match that rule, so they pass every rule before it."
            .to_string(),
    ];
    if unmeasured > 0 {
        notes.push(format!(
            "{unmeasured} aimed trials are not plotted: their traffic did not arrive \
             (dropped by the ruleset, or the trial did not run)."
        ));
    }
    Some(Figure {
        id: "hot-rules".into(),
        title: "Hot rules: time per packet vs the aimed rule's position".into(),
        x_label: "aimed rule (position in the imported ruleset)".into(),
        y_label: "time per packet (ns, 1 / received pps)".into(),
        kind: Kind::Line,
        series,
        categories: vec![],
        markers: vec![],
        notes,
        group: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn trial(aim: &str, status: &str, pps: Option<f64>) -> TrialRow {
        TrialRow {
            engine: None,
            id: 1,
            run_id: 1,
            trial_key: "k".into(),
            rep: 1,
            workload: "flood".into(),
            status: status.into(),
            error: None,
            params: json!({"engine": "nft", "import": "ufw.nft", "packet": {"aim": aim}}),
            headline: store::Headline {
                received_pps: pps,
                ..Default::default()
            },
            started_at: String::new(),
            finished_at: String::new(),
            firewall: None,
            kind: None,
            results: json!({"gateway": {"firewall": {"verdicts": {"rules": [
                {"chain": "input", "index": 1}, {"chain": "input", "index": 2},
                {"chain": "sub", "index": 1}
            ]}}}}),
        }
    }

    #[test]
    fn plots_ns_per_packet_by_position() {
        let trials = [
            trial("1", "ok", Some(1e6)),
            trial("1", "ok", Some(0.5e6)),
            trial("sub:1", "ok", Some(0.25e6)),
            trial("2", "dropped", Some(0.0)),
        ];
        let f = figure(&trials).unwrap();
        assert_eq!(f.series.len(), 1);
        let p = &f.series[0].points;
        assert_eq!(p.len(), 2);
        // Rule 1: 1000 ns and 2000 ns → mean 1500; sub:1 is the third rule: 4000 ns.
        assert_eq!((p[0].x, p[0].y), (1.0, 1500.0));
        assert!(p[0].ci95.is_some());
        assert_eq!((p[1].x, p[1].y, p[1].ci95), (3.0, 4000.0, None));
        assert!(f.notes[1].starts_with("1 aimed trials are not plotted"));
        let mut plain = trial("1", "ok", Some(1.0));
        plain.params = json!({"engine": "nft"});
        assert!(figure(&[plain]).is_none());
    }
}
