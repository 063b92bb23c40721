//! The safe envelope (issue 39): at the installed size, the highest rate of gateway
//! updates at which every scheduled update commits, their p99 latency from when each
//! was due to its commit's end stays under a target, a time to effect under another,
//! and no must-drop packet passes. Flow steps with the trial's event repeated at the
//! searched rate (as many updates as fit), bisected with a confirmation.
//!
//! Why latency from *due*, not the commit alone: an update path slower than the rate
//! keeps every commit short while the updates queue behind each other — a requester
//! (kube-proxy's sync, a ban feed) waits for the queue. The agent stamps each
//! update's wait (`UpdateRow::wait_ns`).
//!
//! Must not: know where trials run or how they are stored (the [`Runner`] does).

use crate::error::usage;
use crate::outcome::search::{EnvelopePoint, EnvelopeReport};
use crate::outcome::Outcome;
use crate::params::search::{check_envelope, SearchParams, Targets, MIN_UPDATE_RATE};
use crate::params::TrialParams;
use crate::search::bisect::{Bisect, Step, Width};
use crate::search::step_params;
use crate::search::Runner;
use crate::workloads::events::{EventsSummary, Quantiles};
use anyhow::{bail, Result};
use results::{Doubt, DoubtKind};

/// Search the envelope of `p`'s event at `p`'s installed size.
pub fn envelope_search(
    p: &TrialParams,
    sp: &SearchParams,
    run: &mut Runner,
) -> Result<EnvelopeReport> {
    check_envelope(p, sp).map_err(usage)?;
    let t = sp
        .envelope
        .clone()
        .expect("checked: an envelope has targets");
    let mut q = step_params(p);
    let width = Width::Relative(sp.precision, MIN_UPDATE_RATE);
    let mut b = Bisect::new(MIN_UPDATE_RATE, t.max_update_rate, false, width).with_confirmation();
    let mut points: Vec<EnvelopePoint> = Vec::new();
    let max = sp.max_trials as usize;
    let found = loop {
        match b.next_step() {
            Step::Done(f) => break Some(f),
            Step::Try(x) => {
                if points.len() >= max {
                    break None;
                }
                if let Some(e) = q.events.as_mut() {
                    e.rate = Some(x);
                    e.count = Some(updates_at(x, p.duration_s - e.at_s, t.latency_ms));
                }
                let o = run(&q)?;
                let pt = judge(x, &o, &t)?;
                eprintln!(
                    "    [{:>2}/{max}] {x:.2} updates/s: {}",
                    points.len() + 1,
                    pt.line()
                );
                b.record(pt.pass);
                points.push(pt);
            }
        }
    };
    let mut doubts = vec![];
    if found.is_none() {
        let (pass, fail) = crate::search::witness::bracket(points.iter().map(|q| (q.rate, q.pass)));
        doubts.push(crate::search::witness::out_of_trials(
            &format!("{} trials", points.len()),
            "updates/s",
            pass,
            fail,
            width,
        ));
    }
    doubts.extend(contradiction(&points, sp.precision));
    let rate = found.and_then(|f| f.pass);
    // The answer rests on the trials that passed at it: one flagged cannot carry it.
    if let Some(why) = rate.and_then(|r| {
        points
            .iter()
            .filter(|q| q.pass && q.rate == r)
            .find_map(|q| q.flagged.clone())
    }) {
        doubts.push(Doubt::new(
            DoubtKind::NotConverged,
            format!("the trial that passed at the rate found was flagged: {why}"),
        ));
    }
    // Nor one that missed where a miss decides the bracket: the lowest rate that missed,
    // or, none held, every step ("not even the lowest"). A flagged step may have missed
    // for its doubt ("no time to effect shown" of an empty window).
    let fail = match found {
        Some(f) => f.fail,
        None => crate::search::witness::bracket(points.iter().map(|q| (q.rate, q.pass))).1,
    };
    let none_held = !points.iter().any(|q| q.pass);
    let decides = |q: &&EnvelopePoint| !q.pass && (none_held || Some(q.rate) == fail);
    let mut missed = points
        .iter()
        .filter(decides)
        .filter_map(|q| Some((q.rate, q.flagged.as_ref()?)))
        .collect::<Vec<_>>();
    missed.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((at, why)) = missed.first() {
        let what = match (none_held, missed.len()) {
            (false, _) => format!(
                "the trial that missed at the lowest rate that missed ({at:.2} updates/s) was \
                 flagged"
            ),
            (true, 1) => format!(
                "no rate kept the targets, and the trial that missed at {at:.2} updates/s was \
                 flagged"
            ),
            (true, n) => format!(
                "no rate kept the targets, and {n} of the trials that missed were flagged, the \
                 lowest at {at:.2} updates/s"
            ),
        };
        doubts.push(Doubt::new(
            DoubtKind::NotConverged,
            format!("{what}: {why}"),
        ));
    }
    let e = p
        .events
        .as_ref()
        .expect("checked: an envelope has an event");
    points.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    Ok(EnvelopeReport {
        update: format!("{}:{} ({})", e.kind.name(), e.k, e.method.name()),
        installed: p.rules,
        targets: t.clone(),
        precision: sp.precision,
        rate,
        fail_rate: found.and_then(|f| f.fail),
        ceiling_held: found.is_some_and(|f| f.fail.is_none() && f.pass.is_some()),
        converged: found.is_some() && doubts.is_empty(),
        trials: points.len(),
        points,
        doubts,
    })
}

/// Updates a step schedules at `rate` over the `span_s` after its first: the last due
/// a latency target (at least 0.2 s, at most half the span) before the traffic ends,
/// so an update path that keeps up commits it while the traffic still shows its
/// effect (a commit outliving the traffic is unobserved, and flags its trial).
pub fn updates_at(rate: f64, span_s: f64, latency_ms: f64) -> u32 {
    let tail = (latency_ms / 1e3).max(0.2).min(span_s / 2.0);
    (((span_s - tail) * rate).floor() as u32 + 1).clamp(2, proto::MAX_UPDATES)
}

/// One step's verdict: what of the targets its updates kept.
pub fn judge(rate: f64, o: &Outcome, t: &Targets) -> Result<EnvelopePoint> {
    if !o.status.measured() {
        bail!(
            "trial at {rate} updates/s {}: {}",
            o.status.as_str(),
            o.error.as_deref().unwrap_or("no results")
        );
    }
    let Some(ev) = o.figures.as_ref().and_then(|f| f.events()) else {
        bail!("trial at {rate} updates/s returned no figures of its updates");
    };
    let mut pt = point(rate, ev, t);
    // Updates that did not run are what a step above the path's limit shows: its verdict
    // says so (a step that held ran them all), not a doubt beside it.
    let doubts: Vec<String> = o
        .doubts
        .iter()
        .filter(|d| d.kind != results::DoubtKind::UpdateFailed)
        .map(|d| d.to_string())
        .collect();
    if !doubts.is_empty() {
        pt.flagged = Some(doubts.join("; "));
    }
    Ok(pt)
}

/// The verdict over a trial's updates (pure: table-tested).
pub fn point(rate: f64, ev: &EventsSummary, t: &Targets) -> EnvelopePoint {
    let ran: Vec<_> = ev
        .updates
        .iter()
        .filter(|u| u.row.error.is_none() && u.row.start_unix_ns > 0)
        .collect();
    let q = |v: Vec<f64>| Quantiles::of(&v);
    let latency = q(ran
        .iter()
        .map(|u| u.row.wait_ns as f64 / 1e6 + u.commit_ms)
        .collect());
    let commit = q(ran.iter().map(|u| u.commit_ms).collect());
    let effect = ran
        .iter()
        .filter_map(|u| u.time_to_effect_ms)
        .reduce(f64::max);
    let violations: u64 = ev
        .updates
        .iter()
        .filter_map(|u| u.violations.as_ref())
        .map(|v| v.passed)
        .sum();
    let scheduled = ev.updates.len();
    let mut why = vec![];
    if ran.len() < scheduled {
        why.push(format!(
            "{} of {scheduled} updates did not commit ({})",
            scheduled - ran.len(),
            ev.updates
                .iter()
                .find_map(|u| u.row.error.as_deref())
                .unwrap_or("no reason given")
        ));
    }
    match &latency {
        Some(l) if l.p99 > t.latency_ms => why.push(format!(
            "p99 latency {:.1} ms above {} ms",
            l.p99, t.latency_ms
        )),
        Some(_) => {}
        None => why.push("no update committed".into()),
    }
    // A rate above what the path commits fills a queue that a finite step ends before
    // its latency shows it all: a wait that grows over the step by half a commit or
    // more is a path falling behind, whatever the latency reached.
    let growth = wait_growth(&ran);
    if let (Some(g), Some(c)) = (growth, &commit) {
        if g > (c.p50 / 2.0).max(1.0) && why.is_empty() {
            why.push(format!(
                "the updates fell behind: their wait grew by {g:.1} ms over the step (the \
                 path commits fewer than {rate:.2} updates/s)"
            ));
        }
    }
    if let Some(e) = effect.filter(|e| *e > t.effect_ms) {
        why.push(format!("time to effect {e:.1} ms above {} ms", t.effect_ms));
    }
    // The effect target needs its evidence: the update carrying the marker ran and no
    // time to effect came of it (no marker packet changed fate, or it was withheld).
    if let Some(m) = ran
        .iter()
        .find(|u| u.row.marker && u.time_to_effect_ms.is_none())
    {
        let reason = m
            .no_time_to_effect
            .clone()
            .or_else(|| m.doubts.first().map(|d| d.to_string()))
            .unwrap_or_else(|| "no reason given".into());
        why.push(format!("no time to effect shown ({reason})"));
    }
    if violations > 0 {
        why.push(format!("{violations} must-drop packets passed"));
    }
    EnvelopePoint {
        rate,
        wait_growth_ms: growth,
        scheduled,
        committed: ran.len(),
        latency_ms: latency,
        commit_ms: commit,
        effect_ms: effect,
        violations,
        pass: why.is_empty(),
        why: (!why.is_empty()).then(|| why.join("; ")),
        flagged: None,
    }
}

/// Updates a step needs before its wait's growth is judged.
const MIN_FOR_GROWTH: usize = 8;

/// How much the updates' wait grew from the first due to the last, ms: the least-squares
/// slope of wait over due time, times the span (`None` below [`MIN_FOR_GROWTH`]).
fn wait_growth(ran: &[&crate::workloads::events::UpdateEffect]) -> Option<f64> {
    // Below eight, one late update near the end weighs too much to call a trend.
    if ran.len() < MIN_FOR_GROWTH {
        return None;
    }
    let pts: Vec<(f64, f64)> = ran
        .iter()
        .map(|u| {
            let due = u.row.start_unix_ns.saturating_sub(u.row.wait_ns) as f64 / 1e6;
            (due, u.row.wait_ns as f64 / 1e6)
        })
        .collect();
    let slope = report::stats::fit_line(&pts)?.b;
    let (lo, hi) = pts
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    Some(slope * (hi - lo))
}

/// A rate that failed well below one that passed (further apart than `precision`):
/// the update path changed during the search, or its trials are noise.
fn contradiction(points: &[EnvelopePoint], precision: f64) -> Option<Doubt> {
    let pass = points
        .iter()
        .filter(|p| p.pass)
        .map(|p| p.rate)
        .reduce(f64::max)?;
    let fail = points
        .iter()
        .filter(|p| !p.pass && p.rate < pass * (1.0 - precision))
        .map(|p| p.rate)
        .reduce(f64::min)?;
    Some(Doubt::new(
        DoubtKind::Contradiction,
        format!(
            "{pass:.2} updates/s held, {fail:.2} updates/s did not: the trials contradict \
             each other (the update path changed during the search, or this machine's \
             noise is larger than the precision asked)"
        ),
    ))
}

#[cfg(test)]
#[path = "envelope_tests.rs"]
mod tests;
