//! "Hot rules": the cost of reaching each rule of the user's own (imported) ruleset.
//! A sweep aims trials at rule 1, 2, … K (`aim = "each:K"`); this figure plots the
//! time per packet (1 / received packets per second, so at the maximum rate the
//! gateway's cost per packet) against the aimed rule's position in the ruleset.
//!
//! Owns: choosing those trials and the figure. Must not: read the store (it gets the
//! run's trials) or draw.

use crate::figure::{Figure, Point, Series};
use crate::model::Trial;
use crate::stats::{median, Summary};
use std::collections::BTreeMap;

/// The aimed rule's position (1-based, as `fwbench rules render --import` numbers
/// the rules) of a trial: `N` directly, `CHAIN:N` looked up in the gateway's list of
/// imported rules.
fn position(t: &Trial) -> Option<usize> {
    let aim = t.p.packet.as_ref()?.aim.as_deref()?;
    if let Ok(n) = aim.parse::<usize>() {
        return Some(n);
    }
    let (chain, n) = aim.rsplit_once(':')?;
    let n: u64 = n.parse().ok()?;
    let gateway = t.stored.gateway.as_ref()?;
    let rules = &gateway.firewall.as_ref()?.verdicts.as_ref()?.rules;
    rules
        .iter()
        .position(|r| r.chain.as_deref() == Some(chain) && r.index == Some(n))
        .map(|i| i + 1)
}

/// Time per packet (ns) of each aimed trial that was measured, by series (engine
/// and file) and aimed rule position.
type ByPosition = BTreeMap<String, BTreeMap<usize, Vec<f64>>>;

/// The aimed trials of a run: the gateway's times per packet, how many were aimed, how
/// many not measured (dropped, failed), and per series those whose rate was not the
/// gateway's.
struct Measured {
    by: ByPosition,
    aimed: usize,
    unmeasured: usize,
    left: BTreeMap<String, LeftOut>,
}

/// A series' trials left out: fwbench's sender or sink set their rate (by which), or
/// they passed every packet offered (the sender's pace), of how many measured.
#[derive(Default)]
struct LeftOut {
    fwbench: usize,
    roles: std::collections::BTreeSet<&'static str>,
    paced: usize,
    of: usize,
    /// Per rule position: (left out, trials).
    at: BTreeMap<usize, (usize, usize)>,
}

impl LeftOut {
    fn n(&self) -> usize {
        self.fwbench + self.paced
    }

    /// At some position more than half were left out and some kept: those kept are
    /// the slower ones (fwbench's limit cut off a faster gateway), no fair sample.
    fn unfair(&self) -> bool {
        self.at
            .values()
            .any(|&(left, of)| 2 * left > of && left < of)
    }

    /// "113 of 120 trials: 113 limited by fwbench's sender (…)".
    fn text(&self) -> String {
        let mut why = vec![];
        if self.fwbench > 0 {
            let roles: Vec<&str> = self.roles.iter().copied().collect();
            let sender = self.roles.contains(results::LimitedBy::Sender.as_str());
            let sink = self.roles.contains(results::LimitedBy::Sink.as_str());
            let what = match (sender, sink) {
                (true, true) => {
                    "give the sender more threads on CPUs of their own, and the sink a CPU \
                     of its own"
                }
                (true, false) => "give the sender more threads on CPUs of their own",
                _ => "give the sink a CPU of its own or more threads",
            };
            why.push(format!(
                "{} limited by fwbench's {}, not by the gateway (their rates are fwbench's \
                 limit: {what} — see the run's warnings)",
                self.fwbench,
                roles.join(" and ")
            ));
        }
        if self.paced > 0 {
            why.push(format!(
                "{} passed every packet offered (their rates are the sender's pace, not a \
                 time per packet)",
                self.paced
            ));
        }
        format!("{} of {} trials: {}", self.n(), self.of, why.join("; "))
    }
}

fn measured(trials: &[Trial]) -> Measured {
    let mut m = Measured {
        by: BTreeMap::new(),
        aimed: 0,
        unmeasured: 0,
        left: BTreeMap::new(),
    };
    for t in trials {
        let Some(pos) = position(t) else { continue };
        m.aimed += 1;
        let pps = t.headline.received_pps.filter(|p| *p > 0.0);
        let Some(pps) = pps.filter(|_| t.status == results::Status::Ok) else {
            m.unmeasured += 1;
            continue;
        };
        let name = format!(
            "{} ({})",
            t.p.engine.as_deref().unwrap_or("?"),
            t.p.import.as_deref().unwrap_or("?")
        );
        // Only the gateway's rate is a time per packet of reaching the rule (the hot-rules
        // run stated "−10.9 ± 4.7 ns per rule passed" from 113 of 120 trials that
        // fwbench's sender had limited).
        let left = m.left.entry(name.clone()).or_default();
        left.of += 1;
        let here = left.at.entry(pos).or_default();
        here.1 += 1;
        if let Some(by) = t.fwbench_limited() {
            here.0 += 1;
            left.fwbench += 1;
            left.roles.insert(by.as_str());
            continue;
        }
        if t.paced_through() {
            here.0 += 1;
            left.paced += 1;
            continue;
        }
        m.by.entry(name)
            .or_default()
            .entry(pos)
            .or_default()
            .push(1e9 / pps);
    }
    m.left.retain(|_, l| l.n() > 0);
    m
}

/// The answer in sentences, per series: the cost of each rule passed (the slope of
/// median time per packet over the aimed rule's position, with its 95 % CI) and the
/// costliest rules to reach (by median). Needs three positions.
pub fn findings(trials: &[Trial]) -> Vec<String> {
    use crate::figure::{mean_ci, num};
    let Measured { by, left, .. } = measured(trials);
    let mut out = vec![];
    // A series none of whose trials was the gateway's: said, not dropped in silence.
    for (name, l) in left.iter().filter(|(name, _)| !by.contains_key(*name)) {
        out.push(format!(
            "{name}: no cost per rule passed is stated — left out: {}.",
            l.text()
        ));
    }
    for (name, points) in by {
        let left = left.get(&name);
        // The median of each position's trials: one trial slowed down by something
        // else on the machine (seen here: 2 kpps among 150 kpps) does not move it.
        let medians: Vec<(usize, f64)> = points
            .iter()
            .filter_map(|(x, ys)| Some((*x, median(ys.iter().copied())?)))
            .collect();
        if medians.len() < 3 {
            if let Some(l) = left {
                out.push(format!(
                    "{name}: no cost per rule passed is stated — {} rule positions kept, \
                     three needed; left out: {}.",
                    medians.len(),
                    l.text()
                ));
            }
            continue;
        }
        let line: Vec<(f64, f64)> = medians.iter().map(|&(x, y)| (x as f64, y)).collect();
        let Some(l) = crate::stats::fit_line(&line) else {
            continue;
        };
        let trials: usize = points.values().map(Vec::len).sum();
        let mut worst = medians;
        worst.sort_by(|a, b| b.1.total_cmp(&a.1));
        let worst: Vec<String> = worst
            .iter()
            .take(3)
            .map(|(x, y)| format!("rule {x} ({} ns per packet)", num(y.round())))
            .collect();
        let how = format!(
            "least squares over the median of each of {} rule positions, {trials} trials, \
             R² {:.2}",
            l.n, l.r2
        );
        // Passing a rule adds work: measured below 0 it is the machine's noise.
        let below = results::Figure::added_cost(
            l.b,
            l.b_ci95.map(results::Ci::ci95),
            results::Basis::Trial,
        )
        .doubts
        .iter()
        .any(|d| d.kind == results::DoubtKind::Impossible);
        // The costliest rules are named only beside a cost measured: where the CI holds 0
        // or the cost is impossible, their order is the noise's.
        let (cost, measured) = match (l.b_ci95, below) {
            (Some(c), _) if l.b.abs() <= c => (
                format!(
                    "no measurable cost per rule passed ({} ns per rule, the 95 % CI holds 0; \
                     {how})",
                    mean_ci(l.b, Some(c))
                ),
                false,
            ),
            (ci, true) => (
                format!(
                    "FLAGGED — reaching a later rule measured {} ns per packet per rule passed \
                     (95 % CI; {how}): a rule passed adds work, so a time that falls with the \
                     position is the machine's noise or drift between the trials, not a saving",
                    mean_ci(l.b, ci),
                ),
                false,
            ),
            (ci, false) => (
                format!(
                    "reaching a rule costs {} ns per packet for each rule passed (95 % CI; \
                     {how}){}",
                    mean_ci(l.b, ci),
                    if ci.is_some_and(|c| c <= 0.25 * l.b.abs()) {
                        ""
                    } else {
                        " — not stable: the CI is wider than a quarter of the cost, run more \
                         repetitions"
                    }
                ),
                ci.is_some(),
            ),
        };
        // More than half left out at a position: what is left is no fair sample.
        let unfair = left.is_some_and(LeftOut::unfair);
        let left = left.map(|l| {
            format!(
                " Left out: {}{}.",
                l.text(),
                if unfair {
                    " — FLAGGED: at some rule position more than half, and what is left \
                     there is no fair sample of the gateway's time per packet"
                } else {
                    ""
                }
            )
        });
        let cost = if unfair && !cost.starts_with("FLAGGED") {
            format!("FLAGGED — {cost}")
        } else {
            cost
        };
        // The costliest to reach only from a fair sample of the gateway's times, beside a
        // cost measured.
        let worst = if unfair || !measured {
            String::new()
        } else {
            format!("; the costliest to reach: {}", worst.join(", "))
        };
        out.push(format!(
            "{name}: {cost}{worst}.{}",
            left.unwrap_or_default()
        ));
    }
    out
}

/// The figure, when the run has trials aimed at imported rules (`None` otherwise).
/// One series per engine and imported file; trials whose traffic did not arrive
/// (a drop rule) have no time per packet at the sink and are counted in a note.
pub fn figure(trials: &[Trial]) -> Option<Figure> {
    let Measured {
        by,
        aimed,
        unmeasured,
        left,
    } = measured(trials);
    if aimed == 0 {
        return None;
    }
    let series = Series::per_name(by, |x, ys| {
        let s = Summary::of(&ys)?;
        Some(Point {
            x: x as f64,
            y: s.mean,
            ci95: s.ci95,
        })
    });
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
    for (name, l) in &left {
        notes.push(format!("{name}: not plotted: {}.", l.text()));
    }
    Some(Figure {
        notes,
        ..Figure::line(
            "hot-rules",
            "Hot rules: time per packet vs the aimed rule's position",
            (
                "aimed rule (position in the imported ruleset)",
                "time per packet (ns, 1 / received pps)",
            ),
            series,
        )
    })
}

#[cfg(test)]
#[path = "hotrules_tests.rs"]
mod tests;
