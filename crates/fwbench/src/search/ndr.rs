//! RFC 2544 throughput (NDR, or PDR with a loss threshold): flood trials at bisected
//! offered rates, with a confirmation trial.

use crate::error::usage;
use crate::outcome::search::NdrReport;
use crate::outcome::search::Point;
use crate::outcome::Outcome;
use crate::params::search::SearchParams;
use crate::params::TrialParams;
use crate::search::bisect::Bisect;
use crate::search::bisect::Found;
use crate::search::bisect::Step;
use crate::search::bisect::Width;
use crate::search::step_params;
use crate::search::Runner;
use anyhow::{bail, Result};
use proto::Rate;
use results::DoubtKind;

pub fn point(x: f64, o: &Outcome, threshold: f64, confirmation: bool) -> Result<Point> {
    if !o.status.measured() {
        bail!(
            "trial at {x} {}: {}",
            o.status.as_str(),
            o.error.as_deref().unwrap_or("no results")
        );
    }
    let Some(s) = o.packet() else {
        bail!("trial at {x} returned no packet figures");
    };
    let lossless = if threshold == 0.0 {
        s.lost == 0
    } else {
        s.loss_ratio <= threshold
    };
    let sender_behind = s.sent_pps < s.offered_pps * (1.0 - threshold.max(0.001));
    Ok(Point {
        x,
        sent: s.sent,
        received: s.received,
        loss_ratio: s.loss_ratio,
        offered_pps: s.offered_pps,
        sent_pps: s.sent_pps,
        received_pps: s.received_pps,
        pass: lossless && !sender_behind,
        sender_behind,
        confirmation,
        queue_grew: false,
        limited_by: s.limited_by.as_ref().map(|l| l.by),
        doubts: o.doubts.clone(),
    })
}

/// A step of `sp`'s search from its trial's outcome `o`: [`point`], and where the
/// search counts a queue that filled through a lossless trial as a fail
/// (`sp.queue_fails`), that too.
fn step(x: f64, o: &Outcome, sp: &SearchParams, confirmation: bool) -> Result<Point> {
    let mut pt = point(x, o, sp.loss, confirmation)?;
    if sp.queue_fails && pt.pass && o.doubts.iter().any(|d| d.kind == DoubtKind::QueueGrowing) {
        pt.pass = false;
        pt.queue_grew = true;
    }
    Ok(pt)
}

pub fn progress(i: usize, max: usize, what: &str, p: &Point) {
    eprintln!(
        "    [{i:>2}/{max}] {what}: sent {} received {} loss {:.4}% → {}{}",
        p.sent,
        p.received,
        p.loss_ratio * 100.0,
        if p.pass { "pass" } else { "fail" },
        p.note()
    );
}

/// Most contradicting pairs of rates a search measures again.
const RETESTS: usize = 3;

/// RFC 2544 throughput search (NDR, or PDR with `sp.loss` > 0).
pub fn ndr_search(p: &TrialParams, sp: &SearchParams, run: &mut Runner) -> Result<NdrReport> {
    let k = p.packet().cloned().unwrap_or_default();
    let bytes = k.mean_rate_bytes(p.family).map_err(usage)?;
    // Per packet; for a size mix, the means of its sizes (and the reported sizes rounded).
    let (mean_payload, mean_frame) = k.mean_bytes(p.family).map_err(usage)?;
    let (payload, frame) = (mean_payload.round() as u32, mean_frame.round() as u32);
    let mode = if sp.loss == 0.0 { "ndr" } else { "pdr" };
    let mut q = step_params(p);
    let mut points: Vec<Point> = Vec::new();
    // Search steps; the ceiling probe and the confirmation trials come on top.
    let max = sp.max_trials as usize;
    let mut steps = 0usize;
    let set_rate = |q: &mut TrialParams, r: Rate| {
        if let Some(k) = q.kind.packet_mut() {
            k.rate = r;
        }
    };
    let width = Width::Relative(sp.precision, 1.0);
    // The ceiling: given, or what an unpaced flood gets out of the sender.
    let mut bisect;
    let ceiling = match sp.max_rate.and_then(|r| r.pps_mean(bytes)) {
        Some(c) => {
            bisect = Bisect::new(0.0, c, true, width);
            c
        }
        None => {
            set_rate(&mut q, Rate::Max);
            let o = run(&q)?;
            let mut pt = step(0.0, &o, sp, false)?;
            let c = o.packet().map(|x| x.sent_pps).unwrap_or(0.0);
            pt.x = c;
            progress(0, max, &format!("max rate {}", fmt_pps(c)), &pt);
            bisect = Bisect::new(0.0, c, true, width).ceiling_known(pt.pass);
            points.push(pt);
            c
        }
    };
    if ceiling <= 0.0 {
        bail!("the sender got no packets out; nothing to search");
    }
    bisect = bisect.with_confirmation();
    let found = loop {
        match bisect.next_step() {
            Step::Done(f) => break Some(f),
            Step::Try(x) => {
                let confirmation = points.iter().any(|q| q.x == x && !q.confirmation);
                if !confirmation {
                    if steps == max {
                        break None;
                    }
                    steps += 1;
                }
                set_rate(&mut q, Rate::Pps(x));
                let o = run(&q)?;
                let pt = step(x, &o, sp, confirmation)?;
                progress(steps, max, &fmt_pps(x), &pt);
                bisect.record(pt.pass);
                points.push(pt);
            }
        }
    };
    let out_of_trials = found.is_none();
    let mut converged = !out_of_trials;
    let mut doubts = vec![];
    let measured = points.len();
    let retested = retest(&mut points, width, |x| {
        set_rate(&mut q, Rate::Pps(x));
        let o = run(&q)?;
        let pt = step(x, &o, sp, true)?;
        progress(steps, max, &format!("re-test {}", fmt_pps(x)), &pt);
        Ok(pt)
    })?;
    // A contradiction the re-tests left (or a gateway that changed): its doubt says why
    // the search did not converge; the bracket it leaves is not said again.
    let retest_doubted = retested.is_some();
    if let Some(d) = retested {
        converged = false;
        doubts.push(d);
    }
    // Out of trials: report the bracket so far, flagged (never `ok`: not converged).
    let found = found.unwrap_or_else(|| Found {
        pass: points
            .iter()
            .filter(|q| q.pass)
            .map(|q| q.x)
            .reduce(f64::max),
        fail: points
            .iter()
            .filter(|q| !q.pass)
            .map(|q| q.x)
            .reduce(f64::min),
    });
    // Re-tests replace the verdicts they repeat: the bracket is each rate's latest, so
    // a failing rate stated is one that still fails (a hiccup cleared by its re-test
    // bounds nothing), and the rate found one that still passes below it.
    let bisected = found;
    let found = if points.len() > measured {
        let (pass, fail) = crate::search::witness::latest_bracket(&points);
        Found { pass, fail }
    } else {
        found
    };
    // Moved by the re-tests: confirmed only where the latest two trials at the rate
    // found both passed (not a pass, a failed confirmation and a passing re-test).
    let confirmed = match found.pass {
        Some(x) if found.pass != bisected.pass => {
            let mut at = points.iter().rev().filter(|q| q.x == x);
            at.next().is_some_and(|q| q.pass) && at.next().is_some_and(|q| q.pass)
        }
        _ => bisect.confirmed(),
    };
    if found != bisected && !out_of_trials && !retest_doubted {
        if let Some(d) = crate::search::witness::retest_bracket(found.pass, found.fail, width) {
            converged = false;
            doubts.push(d);
        }
    }
    if out_of_trials {
        doubts.push(crate::search::witness::out_of_trials(
            &format!("{steps} search steps (--max-trials)"),
            "pps",
            found.pass,
            found.fail,
            width,
        ));
    }
    let mut curve = points;
    curve.sort_by(|a, b| a.x.total_cmp(&b.x));
    let latency = match found.pass.filter(|x| *x > 0.0) {
        Some(x) => crate::search::latency::latency_at(p, x, &sp.latency_at, run)?,
        None => vec![],
    };
    doubts.extend(crate::search::witness::sender_doubts(
        &curve, found.pass, found.fail,
    ));
    // The steps that decide the bracket were measured as designed only if their own
    // trials were not flagged (traffic that bypassed the rule set passes any rate).
    doubts.extend(crate::search::witness::flagged_bracket(
        &curve,
        found.pass,
        found.fail,
        "pps",
        [
            " that carries the answer",
            " that bounds the answer (the lowest that failed)",
        ],
        crate::search::witness::queues_judged(&latency, sp.queue_fails),
    ));
    // The unpaced flood that set the ceiling passed: the sender's rate, not the gateway's.
    let limited_by_sender = found.fail.is_none() && found.pass.is_some() && sp.max_rate.is_none();
    if limited_by_sender {
        doubts.push(crate::search::witness::sender_limit(ceiling, None));
    }
    doubts.extend(crate::search::witness::step_doubts(
        &latency,
        sp.loss,
        sp.precision,
    ));
    Ok(NdrReport {
        mode,
        loss_threshold: sp.loss,
        precision: sp.precision,
        duration_s: p.duration_s,
        payload,
        frame,
        rate_pps: found.pass,
        rate_bps_payload: found.pass.map(|x| x * mean_payload * 8.0),
        rate_bps_l2: found.pass.map(|x| x * mean_frame * 8.0),
        fail_pps: found.fail,
        ceiling_pps: ceiling,
        ceiling_given: sp.max_rate.is_some(),
        limited_by_sender,
        confirmed,
        converged,
        trials: curve.len(),
        curve,
        latency,
        doubts,
    })
}

/// The witness: a fail well below a pass is measured again (`measure`), at both rates
/// (the passing rate last). One that persists means the bracket is noise (a disturbed
/// testbed), and one cleared because the passing rate now fails means the gateway
/// changed (a policer whose rate was lowered): either is the doubt returned (the search
/// is not converged). One cleared because the failing rate now passes was a hiccup
/// there; another pair then left is measured again in turn (at most `RETESTS` pairs).
fn retest(
    points: &mut Vec<Point>,
    width: Width,
    mut measure: impl FnMut(f64) -> Result<Point>,
) -> Result<Option<results::Doubt>> {
    let mut next = crate::search::witness::contradiction(points, width);
    let mut rounds = 0;
    while let Some(c) = next {
        if rounds == RETESTS {
            return Ok(Some(c.doubt(true)));
        }
        rounds += 1;
        for x in [c.fail, c.pass] {
            points.push(measure(x)?);
        }
        match points.last() {
            // Not a hiccup at the failing rate: a gateway that carries less than it did.
            Some(p) if crate::search::witness::gateway_fail(p) => {
                return Ok(Some(c.changed(p.loss_ratio)));
            }
            // fwbench's sender could not offer the rate again: no verdict on the
            // gateway either way (`sender_doubts` says it where it matters).
            Some(p) if !p.pass => return Ok(None),
            _ => {}
        }
        next = crate::search::witness::persisting(points, width);
        if next.is_some_and(|n| (n.pass, n.fail) == (c.pass, c.fail)) {
            return Ok(Some(c.doubt(true)));
        }
    }
    Ok(None)
}

fn fmt_pps(x: f64) -> String {
    format!("{:.0} pps", x)
}

#[cfg(test)]
#[path = "ndr_tests.rs"]
pub(crate) mod tests;
