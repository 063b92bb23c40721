//! The safe envelope across searches (issue 39): each converged `envelope` search's
//! answer — the highest update rate at which every update committed, its p99 latency
//! and time to effect kept their targets and no must-drop packet passed — as a metric
//! of its trial (`envelope.update_rate`, which the configurations and `compare` read)
//! and, over installed sizes, as a figure per case and update.
//!
//! Owns: which searches give a rate (converged, with a rate), the figure.
//! Must not: restate a search that did not converge as a rate (its row says why).

use crate::figure::{Figure, Point, Series};
use crate::model::{search_of, Trial};
use crate::stats::{ci95_half_width, mean};
use results::stored::SearchKind;
use std::collections::BTreeMap;

/// The metric of a trial's envelope answer, updates/s (higher is better).
pub const METRIC: &str = "envelope.update_rate";

/// The safe update rate an envelope search found; `None` for other trials, for a
/// search that did not converge and for one where no rate searched held.
pub fn safe_rate(t: &Trial) -> Option<f64> {
    let s = search_of(t).filter(|s| s.is(SearchKind::Envelope))?;
    if s.converged != Some(true) {
        return None;
    }
    s.rate
}

/// Safe update rate vs rules installed, one line per case (label or engine), update,
/// conntrack occupancy (`--ct-fill`) and background load (`--load`),
/// each point the mean over its searches with their 95 % CI (across searches); drawn
/// where a line has two sizes or more. Searches without a rate are counted in a note.
pub fn figures(trials: &[Trial]) -> Vec<Figure> {
    let mut by: BTreeMap<String, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    let mut left_out = 0;
    for t in trials {
        let Some(s) = search_of(t).filter(|s| s.is(SearchKind::Envelope)) else {
            continue;
        };
        let (Some(rate), Some(installed)) = (safe_rate(t), s.installed) else {
            left_out += 1;
            continue;
        };
        // The conntrack table's occupancy is its own line (where the update's cost
        // depends on it: a `conntrack -D` in the commit).
        let fill = match t.p.packet.as_ref().and_then(|p| p.ct_fill) {
            Some(n) if n > 0 => format!(", {n} conntrack entries"),
            _ => String::new(),
        };
        // So is the background's load (`--load`): a share of each size's capacity.
        let load = crate::updates::load_of(&t.p).map_or(String::new(), |l| {
            format!(", background at {}", l.over_sizes)
        });
        let name = format!(
            "{} {}{fill}{load}",
            t.label_or_engine().unwrap_or_else(|| "-".into()),
            s.update.as_deref().unwrap_or("?")
        );
        by.entry(name)
            .or_default()
            .entry(installed as u64)
            .or_default()
            .push(rate);
    }
    if !by.values().any(|m| m.len() > 1) {
        return vec![];
    }
    let series = Series::per_name(by, |x, v| {
        Some(Point {
            x: x as f64,
            y: mean(&v)?,
            ci95: ci95_half_width(&v),
        })
    });
    let mut f = Figure::line(
        "envelope-vs-installed",
        "Safe update rate vs rules installed (the envelope)",
        ("rules installed", "updates/s"),
        series,
    );
    f.notes.push(
        "Each point: the highest update rate at which every update committed, their p99 \
         latency (due → committed; of fewer than 100 updates, by nearest rank, their \
         maximum) and time to effect kept the search's targets, no \
         must-drop packet passed and their wait did not grow; the mean over the searches \
         at that size, the bar their 95 % CI."
            .into(),
    );
    if left_out > 0 {
        f.notes.push(format!(
            "{left_out} search(es) left out: not converged or no rate searched held (see \
             their rows)."
        ));
    }
    vec![f]
}

#[cfg(test)]
#[path = "envelope_tests.rs"]
mod tests;
