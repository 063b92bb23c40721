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
                    e.count = None;
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
        doubts.push(crate::search::witness::out_of_trials(
            &format!("{} trials", points.len()),
            "updates/s",
            points
                .iter()
                .filter(|q| q.pass)
                .map(|q| q.rate)
                .reduce(f64::max),
            points
                .iter()
                .filter(|q| !q.pass)
                .map(|q| q.rate)
                .reduce(f64::min),
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
    if !o.doubts.is_empty() {
        pt.flagged = Some(
            o.doubts
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        );
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
    if let Some(e) = effect.filter(|e| *e > t.effect_ms) {
        why.push(format!("time to effect {e:.1} ms above {} ms", t.effect_ms));
    }
    if violations > 0 {
        why.push(format!("{violations} must-drop packets passed"));
    }
    EnvelopePoint {
        rate,
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
