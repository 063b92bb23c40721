//! The witness of a throughput search: whether its own trials agree with its answer.
//! A bisection or MLRsearch believes each trial; on a disturbed testbed (another job on
//! the machine, a policer whose rate changed) they contradict each other — a rate that
//! passed above one that failed, a sender behind its schedule below the rate found,
//! loss at a latency step below the "zero-loss" rate — and the answer is then noise.
//!
//! Owns: the pure judgements over a search's points ([`contradiction`],
//! [`sender_doubts`], [`sender_limit`], [`latency_doubts`], [`queue_doubts`],
//! [`degrade_doubts`], [`out_of_trials`], [`retest_bracket`], [`sweet_spot_doubts`],
//! [`flagged_step`]: a step that decides the answer whose own trial was flagged)
//! and the re-test rule (a contradiction is measured again once; only one that
//! persists makes the search not converged). A search that did not converge always
//! carries a doubt saying why, so its status is never `ok`.
//! Must not: run trials (the search does, through its `Runner`).

use crate::outcome::search::{pct, LatencyPoint, Point};
use crate::search::bisect::Width;
use results::{Doubt, DoubtKind};

/// A sweet-spot step counts as below the best when under this share of it (at or above
/// it: on the plateau).
pub(crate) const DROP: f64 = 0.97;

/// A pass above a fail: the rates and what each trial gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contradiction {
    /// The highest rate that passed.
    pub pass: f64,
    /// The lowest rate below it that failed.
    pub fail: f64,
    /// The failing trial's loss ratio.
    pub fail_loss: f64,
    /// The failing trial failed for a queue that filled through it (`--load`'s
    /// capacity), whatever it lost.
    pub fail_queue: bool,
}

impl Contradiction {
    /// The re-test at the rate that had passed lost `loss` (> the goal): loss is what a
    /// passing disturbance adds, a loss-free trial is not, so the gateway carried less
    /// than before — its capacity changed during the search (a policer's rate lowered,
    /// another load on it), and no rate found holds for the whole search.
    pub fn changed(&self, loss: f64) -> Doubt {
        Doubt::new(
            DoubtKind::Contradiction,
            format!(
                "{:.0} pps passed, then lost {} when measured again ({:.0} pps below it \
                 {}): the gateway's capacity changed during the search",
                self.pass,
                pct(loss),
                self.fail,
                self.fail_what()
            ),
        )
    }

    pub fn doubt(&self, retested: bool) -> Doubt {
        Doubt::new(
            DoubtKind::Contradiction,
            format!(
                "{:.0} pps passed above {:.0} pps, which {}{}",
                self.pass,
                self.fail,
                self.fail_what(),
                if retested {
                    " (both measured again: it persists)"
                } else {
                    ""
                }
            ),
        )
    }

    /// Why the lower rate failed: "lost 0.2 %", or, where a queue filled through it,
    /// "lost 0 % but a queue filled through it (not sustained)".
    fn fail_what(&self) -> String {
        let lost = format!("lost {}", pct(self.fail_loss));
        if self.fail_queue {
            format!("{lost} but a queue filled through it (not sustained)")
        } else {
            lost
        }
    }
}

/// The last verdict at each rate (a re-test replaces the earlier one), by rate.
fn latest(points: &[Point]) -> Vec<&Point> {
    let mut by: Vec<&Point> = vec![];
    for p in points {
        match by.iter_mut().find(|q| q.x == p.x) {
            Some(q) => *q = p,
            None => by.push(p),
        }
    }
    by.sort_by(|a, b| a.x.total_cmp(&b.x));
    by
}

/// The widest pass-above-fail among the points, each rate by every trial at it: the
/// highest pass and the lowest fail the gateway's below it, further apart than the search's
/// resolution `width` (nearer, the two are the edge, which goes either way: the
/// bisection's confirmation handles that). A rate that passed, failed its confirmation,
/// and one well below it that had passed failing after it is one. `None`: no trial
/// failed well below a rate that passed.
pub fn contradiction(points: &[Point], width: Width) -> Option<Contradiction> {
    widest(points.iter(), width)
}

/// The same after a re-test: each rate by its latest trial (a re-test replaces the
/// earlier verdict). `None`: the contradiction did not persist.
pub fn persisting(points: &[Point], width: Width) -> Option<Contradiction> {
    widest(latest(points).into_iter(), width)
}

/// A step the gateway failed: it lost, the sender on schedule (a step whose sender fell
/// behind failed for fwbench's sender, whatever it lost: a descheduled sender catches
/// up in a burst).
pub fn gateway_fail(p: &Point) -> bool {
    !p.pass && !p.sender_behind
}

fn widest<'a>(
    points: impl Iterator<Item = &'a Point> + Clone,
    width: Width,
) -> Option<Contradiction> {
    let apart = |pass: f64, fail: f64| match width {
        Width::Relative(r, _) => pass - fail > r * pass,
        Width::Absolute(a) => pass - fail > a,
    };
    // A fail whose sender fell behind its schedule says nothing of the gateway.
    let fails_below = |x: f64| {
        points
            .clone()
            .filter(move |p| gateway_fail(p) && p.x < x && apart(x, p.x))
    };
    let pass = points
        .clone()
        .filter(|p| p.pass)
        .map(|p| p.x)
        .filter(|x| fails_below(*x).next().is_some())
        .reduce(f64::max)?;
    let fail = fails_below(pass).min_by(|a, b| a.x.total_cmp(&b.x))?;
    Some(Contradiction {
        pass,
        fail: fail.x,
        fail_loss: fail.loss_ratio,
        fail_queue: fail.queue_grew,
    })
}

/// Trials at or below the rate found whose sender fell behind its schedule: the
/// search measured fwbench's sender there, not the gateway. And the lowest rate that
/// failed (`fail`, which bounds the answer from above), where every trial that failed
/// there failed for fwbench ([`fwbench_fail`]): the answer is then fwbench's limit — a
/// search that stops below the rate fwbench's sender or sink could not carry says
/// nothing of the gateway above it.
pub fn sender_doubts(points: &[Point], found: Option<f64>, fail: Option<f64>) -> Vec<Doubt> {
    let mut out = below_found(points, found);
    out.extend(fail_by_fwbench(points, found, fail));
    out
}

/// [`sender_doubts`]' second part: the lowest rate that failed (`fail`) failed for
/// fwbench ([`fwbench_fail`]) in every trial that failed there — the answer `found` is
/// then a lower bound of the gateway's, said with the latest of them. `None`: a trial
/// failed there for the gateway (the gateway fails at that rate, whatever else did),
/// or there is none. A trial that passed at that rate says nothing of why it fails (a
/// re-test that passed with its sender behind is no failure of fwbench's).
pub fn fail_by_fwbench(points: &[Point], found: Option<f64>, fail: Option<f64>) -> Option<Doubt> {
    let f = fail?;
    let failed: Vec<&Point> = points.iter().filter(|p| p.x == f && !p.pass).collect();
    let whys: Option<Vec<String>> = failed.iter().map(|p| fwbench_fail(p)).collect();
    let (lowest, why) = failed.last().zip(whys?.pop())?;
    let answer = match found {
        Some(x) => format!(
            "the rate found, {x:.0} pps, is fwbench's limit, and the gateway's may be higher"
        ),
        None => "that no rate passed is fwbench's limit, not the gateway's".to_string(),
    };
    Some(Doubt::new(
        DoubtKind::LimitedByFwbench,
        format!(
            "the lowest failing rate, {:.0} pps, failed by {why}, not the gateway: {answer}",
            lowest.x
        ),
    ))
}

/// Why a step failed for fwbench rather than the gateway, in words (`None`: the
/// gateway's): its trial judged limited by fwbench's sink, or by a CPU fwbench's sender
/// shared with the gateway's packet processing (the pair's rate, neither's); or its
/// sender behind its schedule — unless its trial judged that the gateway held the
/// sender back (nothing lost beyond the verdict's tolerance, and the gateway's
/// packet processing saturated while the sender had CPU to spare: `limited_by`'s
/// `gateway` without loss).
fn fwbench_fail(p: &Point) -> Option<String> {
    use results::LimitedBy;
    let sent = format!("sent {:.0} of {:.0} pps", p.sent_pps, p.offered_pps);
    match p.limited_by {
        Some(LimitedBy::Sink) => Some(format!(
            "fwbench's own sink (its trial judged limited by the sink: it received {:.0} \
             of the {:.0} pps sent)",
            p.received_pps, p.sent_pps
        )),
        Some(LimitedBy::SharedCpu) => Some(format!(
            "fwbench's own sender sharing a CPU with the gateway's packet processing \
             ({sent}: the pair's limit on one core)"
        )),
        Some(LimitedBy::Gateway) if p.loss_ratio <= crate::workloads::packet::LIMIT_TOLERANCE => {
            None
        }
        Some(LimitedBy::Sender | LimitedBy::Gateway | LimitedBy::Nothing) | None => p
            .sender_behind
            .then(|| format!("fwbench's own sender falling behind its schedule ({sent})")),
    }
}

/// The unpaced flood that set the search's ceiling passed: the gateway carried all
/// that fwbench's sender got out (`ceiling`, packets/s), so the rate found is the
/// sender's, a lower bound of the gateway's. `goal`: which of MLRsearch's goals ended
/// there (None: the search has one answer).
pub fn sender_limit(ceiling: f64, goal: Option<&str>) -> Doubt {
    Doubt::new(
        DoubtKind::LimitedByFwbench,
        format!(
            "the gateway passed everything fwbench's sender could offer ({ceiling:.0} pps, \
             an unpaced flood){}: the rate found is the sender's, a lower bound of the \
             gateway's (more --threads or --sender raw may find it)",
            goal.map(|g| format!(" within {g}")).unwrap_or_default()
        ),
    )
}

/// A search's bracket from each rate's latest trial (a re-test replaces the earlier
/// verdict): the lowest rate that still fails, and the highest rate below it that
/// passes (`None`: none does).
pub fn latest_bracket(points: &[Point]) -> (Option<f64>, Option<f64>) {
    let by = latest(points);
    let fail = by.iter().filter(|p| !p.pass).map(|p| p.x).reduce(f64::min);
    let pass = by
        .iter()
        .filter(|p| p.pass && fail.is_none_or(|f| p.x < f))
        .map(|p| p.x)
        .reduce(f64::max);
    (pass, fail)
}

/// Re-tests that overruled earlier fails moved the bracket ([`latest_bracket`]) off
/// the bisection's answer: where it is now wider than `asked`, the search stopped on
/// verdicts that no longer stand, and is not converged.
pub fn retest_bracket(pass: Option<f64>, fail: Option<f64>, asked: Width) -> Option<Doubt> {
    let (p, f) = (pass?, fail?);
    let (apart, wide) = match asked {
        Width::Relative(r, _) => {
            let d = if f > 0.0 { (f - p) / f } else { 1.0 };
            (
                format!("{} apart where {} was asked", pct(d), pct(r)),
                d > r,
            )
        }
        Width::Absolute(a) => (
            format!("{:.0} apart where {a:.0} was asked", f - p),
            f - p > a,
        ),
    };
    wide.then(|| {
        Doubt::new(
            DoubtKind::NotConverged,
            format!(
                "the re-tests passed rates that had failed: by each rate's latest trial the \
                 answer lies between {p:.0} pps (passed) and {f:.0} pps (failed), {apart} \
                 (the bisection had stopped on the earlier verdicts)"
            ),
        )
    })
}

/// [`sender_doubts`]' first part: trials at or below the rate found whose sender fell
/// behind.
pub fn below_found(points: &[Point], found: Option<f64>) -> Vec<Doubt> {
    let Some(found) = found else { return vec![] };
    let behind: Vec<f64> = latest(points)
        .iter()
        .filter(|p| p.sender_behind && p.x <= found)
        .map(|p| p.x)
        .collect();
    match behind.first() {
        None => vec![],
        Some(x) => vec![Doubt::new(
            DoubtKind::LimitedByFwbench,
            format!(
                "the sender fell behind its schedule at {x:.0} pps{}, at or below the rate \
                 found: there the search measured fwbench's sender",
                if behind.len() > 1 {
                    format!(" (and {} more rates)", behind.len() - 1)
                } else {
                    String::new()
                }
            ),
        )],
    }
}

/// The bracket a search's steps left, as (value, passed) pairs: the highest value that
/// passed and the lowest that failed (`None`: none did).
pub fn bracket(steps: impl Iterator<Item = (f64, bool)> + Clone) -> (Option<f64>, Option<f64>) {
    let side = |pass: bool| steps.clone().filter(move |s| s.1 == pass).map(|s| s.0);
    (side(true).reduce(f64::max), side(false).reduce(f64::min))
}

/// A search that ran out of trials before its bracket was as narrow as `asked`: its
/// answer is the bracket so far, `pass` (highest value that passed; None: none did) to
/// `fail` (lowest that failed; None: none did), and not converged. `spent` says what
/// ran out ("20 search steps (--max-trials)").
pub fn out_of_trials(
    spent: &str,
    unit: &str,
    pass: Option<f64>,
    fail: Option<f64>,
    asked: Width,
) -> Doubt {
    // Whole or large values as they are; small ones (updates/s) with their decimals.
    let v = |x: f64| match x.abs() {
        _ if x.fract() == 0.0 => format!("{x:.0}"),
        a if a >= 100.0 => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        _ => format!("{x:.2}"),
    };
    let bracket = match (pass, fail) {
        // Repeated trials at the edge disagree: no bracket, and no distance to state.
        (Some(p), Some(f)) if p >= f => format!(
            "left no bracket: {} {unit} passed and {} {unit} failed (repeated trials near \
             the answer disagree: this machine's noise there is wider than the {} asked)",
            v(p),
            v(f),
            match asked {
                Width::Relative(r, _) => pct(r),
                Width::Absolute(a) => format!("{a:.0} {unit}"),
            }
        ),
        (Some(p), Some(f)) => {
            let (apart, narrow) = match asked {
                Width::Relative(r, _) => {
                    let d = if f > 0.0 { (f - p) / f } else { 1.0 };
                    (
                        format!("{} apart where {} was asked", pct(d), pct(r)),
                        d <= r,
                    )
                }
                Width::Absolute(a) => (
                    format!("{:.0} {unit} apart where {a:.0} was asked", f - p),
                    f - p <= a,
                ),
            };
            // Narrow enough, yet not done: what was left is the answer's confirmation.
            let unconfirmed = if narrow {
                format!(
                    ": as narrow as asked, but the trial that would confirm {} did not run",
                    v(p)
                )
            } else {
                String::new()
            };
            format!(
                "left the answer between {} {unit} (passed) and {} {unit} (failed), \
                 {apart}{unconfirmed}",
                v(p),
                v(f)
            )
        }
        (Some(p), None) => format!("ended with {} {unit} passed and nothing failed", v(p)),
        (None, Some(f)) => format!("ended with nothing passed (lowest failing {} {unit})", v(f)),
        (None, None) => "ended with no verdict".to_string(),
    };
    Doubt::new(
        DoubtKind::NotConverged,
        format!("out of trials: {spent} {bracket}"),
    )
}

/// What a search's latency steps (at fractions of the rate found) say against the
/// rate found: a step that lost more than the search's loss `threshold`
/// ([`latency_doubts`]), a delay growing through a step ([`queue_doubts`]).
pub fn step_doubts(latency: &[LatencyPoint], threshold: f64, precision: f64) -> Vec<Doubt> {
    let mut out = latency_doubts(latency, threshold);
    out.extend(queue_doubts(latency, precision));
    out
}

/// Latency steps (at fractions of the rate found) that lost more than the search's
/// threshold: the rate found is not loss-free when measured again.
pub fn latency_doubts(latency: &[LatencyPoint], threshold: f64) -> Vec<Doubt> {
    latency
        .iter()
        .filter(|l| l.loss_ratio > threshold)
        .map(|l| {
            Doubt::new(
                DoubtKind::UnexpectedLoss,
                format!(
                    "the latency step at {:.0} % of the rate found ({:.0} pps) lost {} \
                     (the search allows {}): the rate found did not hold when measured again",
                    l.fraction * 100.0,
                    l.offered_pps,
                    pct(l.loss_ratio),
                    pct(threshold)
                ),
            )
        })
        .collect()
}

/// The sender counts as behind at a latency step below this share of its offered rate
/// (a search's step: `ndr::point`'s floor without a loss threshold).
const SENDER_KEPT_UP: f64 = 0.999;

/// Latency steps whose one-way delay grew through the trial
/// ([`crate::limited_by::queue_share`]): a rate above what the gateway forwards fills
/// its queues, and a trial of its `elapsed_s` ends before they overflow — zero loss, but
/// not a rate it sustains. What the step received less the share its queue held is
/// about what the gateway forwards. A step whose queue held more than
/// [`crate::limited_by::QUEUE_SHARE_FLOOR`] (a trial's own bound) flags the search when
/// the rate found falls short of that by more than the search's `precision`. Where
/// such a step's sender fell behind, its delays include the sender's lateness: said as
/// the sender's, not the gateway's.
pub fn queue_doubts(latency: &[LatencyPoint], precision: f64) -> Vec<Doubt> {
    let ms = |ns: u64| format!("{:.1} ms", ns as f64 / 1e6);
    let at = |l: &LatencyPoint| format!("{:.0} %", l.fraction * 100.0);
    // The rate a step's queue says the gateway sustains, and by how much the rate found
    // overstates it.
    let sustained = |l: &LatencyPoint, held: f64| l.received_pps * (1.0 - held);
    let short = |l: &LatencyPoint, held: f64| 1.0 - sustained(l, held) * l.fraction / l.offered_pps;
    // (step, the share its queue held), the lowest fraction first (the most telling:
    // even that much was too much).
    let mut queued: Vec<(&LatencyPoint, f64)> = latency
        .iter()
        .filter_map(|l| {
            let held = crate::limited_by::queue_share(&l.owd, l.elapsed_s)?;
            (held > crate::limited_by::QUEUE_SHARE_FLOOR && short(l, held) > precision)
                .then_some((l, held))
        })
        .collect();
    queued.sort_by(|a, b| a.0.fraction.total_cmp(&b.0.fraction));
    let (behind, kept_up): (Vec<_>, Vec<_>) = queued
        .into_iter()
        .partition(|(l, _)| l.sent_pps < l.offered_pps * SENDER_KEPT_UP);
    let mut out = vec![];
    if let Some((l, _)) = behind.first() {
        out.push(Doubt::new(
            DoubtKind::LimitedByFwbench,
            format!(
                "the sender fell behind at the latency step at {} of the rate found (sent \
                 {:.0} of {:.0} pps), and its delays grew through the trial: they include \
                 the sender's lateness, so what queued is not told",
                at(l),
                l.sent_pps,
                l.offered_pps
            ),
        ));
    }
    if let Some(&(l, held)) = kept_up.first() {
        let steps = kept_up.iter().map(|(l, _)| at(l)).collect::<Vec<_>>();
        out.push(Doubt::new(
            DoubtKind::QueueGrowing,
            format!(
                "at {} of the rate found ({:.0} pps) the one-way delay grew evenly through \
                 the {}-s trial, from {} to {} (99th percentile; median {}): a queue filled \
                 at that rate, and a trial there is loss-free only while the queue lasts; \
                 the gateway sustains about {:.0} pps, {:.1} % below the rate found (more \
                 than the search's {} precision): longer trials (-t) find it (steps with a \
                 growing delay: {})",
                at(l),
                l.offered_pps,
                (l.elapsed_s * 100.0).round() / 100.0,
                ms(l.owd.min_ns),
                ms(l.owd.p99_ns),
                ms(l.owd.p50_ns),
                sustained(l, held),
                short(l, held) * 100.0,
                pct(precision),
                steps.join(", ")
            ),
        ));
    }
    out
}

/// A degradation search's answer against its own steps. `queued` names the passing
/// steps (rule count, the trial's reason) whose trial was flagged for a queue that
/// filled through it: such a step is loss-free only while the queue lasts, so the
/// flow degrades at or below that many rules, and the lowest of them bounds the
/// answer. The lowest step that failed (`first_bad`), its sender behind its schedule
/// and its trial judged limited by that sender (`senders`: the rule counts of such
/// steps; not a sender slowed by the rules on a CPU they shared), failed for
/// fwbench's sender, not for the rules; one whose trial was judged limited by the
/// sink, for fwbench's sink.
pub fn degrade_doubts(
    points: &[Point],
    queued: &[(f64, String)],
    senders: &[f64],
    last_good: Option<f64>,
    first_bad: Option<f64>,
) -> Vec<Doubt> {
    let mut out = vec![];
    let lowest = queued
        .iter()
        .filter(|(x, _)| last_good.is_some_and(|g| *x <= g))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    if let (Some((x, why)), Some(good)) = (lowest, last_good) {
        let found = if *x < good {
            format!("not above the {good:.0} the search found good")
        } else {
            "the rule count the search found good".to_string()
        };
        out.push(Doubt::new(
            DoubtKind::QueueGrowing,
            format!(
                "the step at {x:.0} rules passed while a queue filled through its trial \
                 ({why}): it is loss-free only while the queue lasts, so the flow degrades \
                 at or below {x:.0} rules, {found}: longer trials (-t) find it"
            ),
        ));
    }
    let lowest = first_bad.and_then(|f| latest(points).into_iter().find(|p| p.x == f));
    if let Some(p) = lowest.filter(|p| p.sender_behind && senders.contains(&p.x)) {
        out.push(Doubt::new(
            DoubtKind::LimitedByFwbench,
            format!(
                "the step at {:.0} rules, the lowest that failed, had its sender behind its \
                 schedule (sent {:.0} of {:.0} pps): it measured fwbench's sender, not the \
                 rules, and the flow may degrade only above it",
                p.x, p.sent_pps, p.offered_pps
            ),
        ));
    } else if let Some(p) = lowest.filter(|p| p.limited_by == Some(results::LimitedBy::Sink)) {
        out.push(Doubt::new(
            DoubtKind::LimitedByFwbench,
            format!(
                "the step at {:.0} rules, the lowest that failed, was judged limited by \
                 fwbench's sink (it received {:.0} of the {:.0} pps sent): it measured \
                 fwbench's sink, not the rules, and the flow may degrade only above it",
                p.x, p.received_pps, p.sent_pps
            ),
        ));
    }
    out
}

/// Whether the search judges a step trial's doubt `d` itself, so that carrying it
/// again would say it twice: a queue that filled through the trial where the search
/// judges queues (`queues`: [`queues_judged`]; `--load`'s capacity fails such a step,
/// [`degrade_doubts`] names it, ndr's and mlr's [`queue_doubts`] judge it at their
/// latency steps against their precision) or the step failed (a queue says nothing
/// against a fail), and fwbench's sender where the step's own figures show it behind
/// its schedule ([`sender_doubts`], [`degrade_doubts`]).
fn judged_by_search(p: &Point, d: &Doubt, queues: bool) -> bool {
    (d.kind == DoubtKind::QueueGrowing && (queues || !p.pass))
        || (d.kind == DoubtKind::LimitedByFwbench && p.sender_behind)
}

/// Fractions of the rate found at or above which a latency step judges the answer's
/// queue ([`queue_doubts`]).
const QUEUE_JUDGED_AT: f64 = 0.9;

/// Whether an ndr's or mlr's search judges a queue that filled through the step that
/// carries its answer: it counts such a step as a fail (`queue_fails`), or one of its
/// `latency` steps ran at [`QUEUE_JUDGED_AT`] of the rate found or above
/// ([`queue_doubts`]). Otherwise nothing else does, and the step's doubt is carried.
pub fn queues_judged(latency: &[LatencyPoint], queue_fails: bool) -> bool {
    queue_fails || latency.iter().any(|l| l.fraction >= QUEUE_JUDGED_AT)
}

/// A step that decides a search's answer, its trial flagged: the doubt saying so,
/// naming the step (`at`: "14451 pps"; `role`: what it decides, with its leading
/// separator: " that carries the answer", ", the last good,") and the trial's doubts
/// the search does not judge itself ([`judged_by_search`]), of the first one's kind
/// that is not `LimitedByFwbench` (else that). `steps`: the trials at that step
/// with the verdict that decides (a confirmation, a re-test). `None`: none of them
/// carries such a doubt. `queues`: whether the search judges a queue that filled
/// ([`queues_judged`]).
pub fn flagged_step<'a>(
    at: &str,
    role: &str,
    steps: impl IntoIterator<Item = &'a Point>,
    queues: bool,
) -> Option<Doubt> {
    let mut carried: Vec<&Doubt> = vec![];
    for p in steps {
        for d in p.doubts.iter().filter(|d| !judged_by_search(p, d, queues)) {
            if !carried.contains(&d) {
                carried.push(d);
            }
        }
    }
    // Of the first kind that is more than fwbench's limit, where there is one: a verdict
    // mismatch beside a late sender is the mismatch (a reader judging by the kind must
    // not read it as fwbench's limit only).
    let kind = (carried.iter())
        .find(|d| d.kind != DoubtKind::LimitedByFwbench)
        .or(carried.first())?
        .kind;
    let why: Vec<String> = carried.iter().map(|d| d.to_string()).collect();
    Some(Doubt::new(
        kind,
        format!("the step at {at}{role} was flagged: {}", why.join("; ")),
    ))
}

/// [`flagged_step`] for the two steps that decide a bisection's answer: the trials
/// that passed at `pass` and those that failed at `fail` (its bracket; `None`: no
/// such step), each with its `roles` ([what the passing one decides, what the
/// failing one does]). `unit`: "pps", "rules". `queues`: as [`flagged_step`]'s.
pub fn flagged_bracket(
    points: &[Point],
    pass: Option<f64>,
    fail: Option<f64>,
    unit: &str,
    roles: [&str; 2],
    queues: bool,
) -> Vec<Doubt> {
    let side = |x: Option<f64>, passed: bool, role: &str| {
        let x = x?;
        let steps = points.iter().filter(|p| p.x == x && p.pass == passed);
        flagged_step(&format!("{x:.0} {unit}"), role, steps, queues)
    };
    side(pass, true, roles[0])
        .into_iter()
        .chain(side(fail, false, roles[1]))
        .collect()
}

/// A sweet-spot search's answer against its own steps (`points`: parallelism and
/// sessions/s in the order measured, `best` among them): a best at the largest
/// parallelism searched whose rate still rose there (above the step measured before it
/// by more than the plateau's tolerance) is no peak (the sweet spot may lie above, and
/// the best is a lower bound of it — fwbench's range, not the gateway's peak); a plateau
/// that runs to the largest is not flagged (the search does not tell the plateau's
/// parallelisms apart). A search that stopped on its trial budget (`budget`: the trials
/// it had) before it was done, with a parallelism left untried that could hide a higher
/// rate, is not converged.
pub fn sweet_spot_doubts(
    points: &[(u32, f64)],
    best: (u32, f64),
    budget: Option<usize>,
) -> Vec<Doubt> {
    let mut out = vec![];
    let largest = points.iter().map(|p| p.0).max();
    let at = points.iter().position(|p| Some(p.0) == largest);
    let before = at.and_then(|i| i.checked_sub(1)).map(|i| points[i].1);
    let rising = before.is_none_or(|r| r < best.1 * DROP);
    if largest == Some(best.0) && rising {
        out.push(Doubt::new(
            DoubtKind::LimitedByFwbench,
            format!(
                "the most sessions/s ({:.0}) came at the largest parallelism searched, {}: \
                 the rate had not fallen after it, so no peak was found — the sweet spot may \
                 lie above it, and its rate is a lower bound",
                best.1, best.0
            ),
        ));
    }
    if let Some(n) = budget {
        out.push(Doubt::new(
            DoubtKind::NotConverged,
            format!(
                "out of trials: the search stopped after its {n} trials before it was done \
                 (best so far: {} parallel, {:.0} sessions/s): the sweet spot may lie at a \
                 parallelism it did not measure",
                best.0, best.1
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::LimitedBy;

    /// The search's resolution: ndr's default precision.
    const W: Width = Width::Relative(0.02, 1.0);

    fn pt(x: f64, pass: bool, loss: f64, behind: bool) -> Point {
        Point {
            x,
            sent: 1000,
            received: 1000,
            loss_ratio: loss,
            offered_pps: x,
            sent_pps: x,
            received_pps: x,
            pass,
            sender_behind: behind,
            confirmation: false,
            queue_grew: false,
            limited_by: None,
            doubts: vec![],
        }
    }

    /// The lowest failing rate is fwbench's limit only where every trial that failed
    /// there failed for fwbench: a re-test there that passed with its sender behind
    /// (the `--load` capacity takes the lowest rate any trial failed at) names no
    /// sender for the gateway's loss, nor does a gateway's failure beside a sender's.
    #[test]
    fn a_lowest_fail_is_fwbenchs_only_where_every_failure_there_was() {
        let gateway_lost = pt(12_000.0, false, 0.05, false);
        let sender_late = pt(12_000.0, false, 0.0, true);
        let retest_passed_late = pt(12_000.0, true, 0.0, true);
        let below = pt(11_000.0, true, 0.0, false);
        let by = |pts: Vec<Point>| fail_by_fwbench(&pts, Some(11_000.0), Some(12_000.0));
        assert_eq!(
            by(vec![
                below.clone(),
                gateway_lost.clone(),
                retest_passed_late
            ]),
            None
        );
        assert_eq!(
            by(vec![
                below.clone(),
                sender_late.clone(),
                gateway_lost.clone()
            ]),
            None
        );
        assert_eq!(
            by(vec![below.clone(), gateway_lost, sender_late.clone()]),
            None
        );
        let d = by(vec![below, sender_late.clone(), sender_late]).unwrap();
        assert_eq!(d.kind, DoubtKind::LimitedByFwbench);
        assert!(
            d.why.starts_with(
                "the lowest failing rate, 12000 pps, failed by fwbench's own sender falling \
                 behind its schedule"
            ),
            "{}",
            d.why
        );
    }

    /// The disturbed ndr: 2 500 pps lost 0.2 %, 5 234 passed, 312 lost 43.7 %.
    #[test]
    fn a_pass_above_a_fail_is_a_contradiction_and_a_retest_can_clear_it() {
        let points = vec![
            pt(10_000.0, false, 0.5, false),
            pt(5_234.0, true, 0.0, false),
            pt(2_500.0, false, 0.002, false),
            pt(312.0, false, 0.437, false),
        ];
        let c = contradiction(&points, W).unwrap();
        assert_eq!((c.pass, c.fail), (5_234.0, 312.0));
        assert_eq!(
            c.doubt(true).to_string(),
            "contradicting trials: 5234 pps passed above 312 pps, which lost 43.7 % \
             (both measured again: it persists)"
        );
        // A `--load` capacity step that failed for its queue alone is not said to have
        // failed for a loss of 0 % (enforcement preset, 2026-11-30).
        let mut queued = points.clone();
        queued[3] = Point {
            loss_ratio: 0.0,
            queue_grew: true,
            ..queued[3].clone()
        };
        let c = contradiction(&queued, W).unwrap();
        assert_eq!(
            c.doubt(false).why,
            "5234 pps passed above 312 pps, which lost 0 % but a queue filled through it \
             (not sustained)"
        );
        assert!(c.changed(0.01).why.ends_with(
            "(312 pps below it lost 0 % but a queue filled through it (not sustained)): the \
             gateway's capacity changed during the search"
        ));
        // Monotone verdicts: none.
        let fine = vec![pt(100.0, true, 0.0, false), pt(200.0, false, 0.1, false)];
        assert_eq!(contradiction(&fine, W), None);
        // Re-tests at 312 and 2 500 passed: the latest verdict at each rate counts.
        let mut retested = points.clone();
        retested.push(pt(312.0, true, 0.0, false));
        retested.push(pt(2_500.0, true, 0.0, false));
        assert_eq!(persisting(&retested, W), None);
        // Every trial counts before a re-test: a rate that passed, failed its
        // confirmation, and one below it that had passed failing its own (a policer that
        // went down mid-search) …
        let flapped = vec![
            pt(3_000.0, true, 0.0, false),
            pt(3_750.0, true, 0.0, false),
            pt(3_750.0, false, 0.1, false),
            pt(3_000.0, false, 0.1, false),
            pt(1_500.0, true, 0.0, false),
        ];
        let c = contradiction(&flapped, W).unwrap();
        assert_eq!((c.pass, c.fail), (3_750.0, 3_000.0));
        // … but no longer once both rates are measured again and fail (it changed once).
        assert_eq!(persisting(&flapped, W), None);
        // A rate at the edge that passed once and failed once is not a contradiction.
        let edge = vec![
            pt(3_984.0, true, 0.0, false),
            pt(3_984.0, false, 0.1, false),
        ];
        assert_eq!(contradiction(&edge, W), None);
        // Nor two within the search's precision: a rate that passed and failed its
        // confirmation, and the next one 1.2 % below it failing its own.
        let edge = vec![
            pt(2_344.0, true, 0.0, false),
            pt(2_391.0, true, 0.0, false),
            pt(2_391.0, false, 0.1, false),
            pt(2_344.0, false, 0.1, false),
        ];
        assert_eq!(contradiction(&edge, W), None);
        assert!(contradiction(&edge, Width::Relative(0.01, 1.0)).is_some());
        // A fail whose sender fell behind (it lost nothing, or caught up in a burst)
        // is fwbench's, not the gateway's: no contradiction (the unpaced ndr at 300 ms:
        // "175781 pps … lost 0 %" below 234 375 that passed).
        let short = vec![
            pt(234_375.0, true, 0.0, false),
            pt(175_781.0, false, 0.0, true),
            pt(160_000.0, false, 0.01, true),
        ];
        assert_eq!(contradiction(&short, W), None);
    }

    #[test]
    fn a_sender_behind_at_or_below_the_rate_found_is_said() {
        let behind = |x: f64| Point {
            sent_pps: x * 0.9,
            ..pt(x, false, 0.0, true)
        };
        let points = vec![behind(1000.0), pt(500.0, true, 0.0, false), behind(400.0)];
        let d = sender_doubts(&points, Some(500.0), None);
        assert_eq!(d.len(), 1);
        assert!(d[0]
            .why
            .starts_with("the sender fell behind its schedule at 400 pps"));
        assert!(sender_doubts(&points, None, None).is_empty());
        // The lowest failing rate, which decides the bracket, failed by fwbench's own
        // sender: the answer below it is fwbench's limit (an unpaced ndr stopped at
        // 1 109 375 pps with its sender behind there).
        let d = sender_doubts(&points, Some(300.0), Some(400.0));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, DoubtKind::LimitedByFwbench);
        assert_eq!(
            d[0].why,
            "the lowest failing rate, 400 pps, failed by fwbench's own sender falling behind \
             its schedule (sent 360 of 400 pps), not the gateway: the rate found, 300 pps, \
             is fwbench's limit, and the gateway's may be higher"
        );
        assert_eq!(sender_doubts(&points, Some(500.0), Some(1000.0)).len(), 2);
        assert!(sender_doubts(&points, None, Some(400.0))[0]
            .why
            .ends_with("that no rate passed is fwbench's limit, not the gateway's"));
        // Judged by its trial: lost at fwbench's sink, or on a CPU its sender shared
        // with the gateway's packet processing, it is fwbench's too …
        let judged = |by: LimitedBy, loss: f64, behind: bool| Point {
            limited_by: Some(by),
            received_pps: 400.0 * (1.0 - loss),
            ..pt(400.0, false, loss, behind)
        };
        let sink = sender_doubts(
            &[judged(LimitedBy::Sink, 0.1, false)],
            Some(300.0),
            Some(400.0),
        );
        assert!(
            sink[0].why.starts_with(
                "the lowest failing rate, 400 pps, failed by fwbench's own sink (its trial \
                 judged limited by the sink: it received 360 of the 400 pps sent), not the \
                 gateway"
            ),
            "{sink:?}"
        );
        let shared = judged(LimitedBy::SharedCpu, 0.0, true);
        assert!(sender_doubts(&[shared], Some(300.0), Some(400.0))[0]
            .why
            .contains("failed by fwbench's own sender sharing a CPU with the gateway's"));
        // … but not where the gateway lost the packets, nor where it held the sender
        // back (nothing lost, its packet processing saturated).
        for gateway in [
            judged(LimitedBy::Gateway, 0.1, false),
            judged(LimitedBy::Gateway, 0.0, true),
            pt(400.0, false, 0.1, false),
        ] {
            let d = sender_doubts(std::slice::from_ref(&gateway), Some(300.0), Some(400.0));
            assert!(d.is_empty(), "{gateway:?}: {d:?}");
        }
    }

    /// The steps that decide a bracket carry their trials' doubts, each said once,
    /// except those the search judges itself: a queue that filled, and fwbench's sender
    /// where the step's figures show it behind (a sender late by its lag, on schedule
    /// by its rate, is carried).
    #[test]
    fn a_flagged_step_that_decides_the_bracket_is_said_once() {
        let d = |kind: DoubtKind, why: &str| Doubt::new(kind, why);
        let late = d(
            DoubtKind::LimitedByFwbench,
            "the sender fell behind by 300 ms",
        );
        let with = |p: Point, doubts: Vec<Doubt>| Point { doubts, ..p };
        let queue = d(DoubtKind::QueueGrowing, "the delay grew");
        let mismatch = d(DoubtKind::VerdictMismatch, "counted 0 of 1000");
        let points = vec![
            with(pt(100.0, true, 0.0, false), vec![mismatch]),
            with(
                pt(500.0, true, 0.0, false),
                vec![queue.clone(), late.clone()],
            ),
            with(pt(500.0, true, 0.0, false), vec![late.clone()]),
            with(pt(600.0, false, 0.1, true), vec![late, queue]),
        ];
        let roles = [" that carries the answer", " that bounds it"];
        let out = flagged_bracket(&points, Some(500.0), Some(600.0), "pps", roles, true);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].kind, DoubtKind::LimitedByFwbench);
        assert_eq!(
            out[0].why,
            "the step at 500 pps that carries the answer was flagged: limited by fwbench: \
             the sender fell behind by 300 ms"
        );
        // Only the steps that decide: a flagged step below the answer says nothing.
        assert!(flagged_bracket(&points, None, Some(600.0), "pps", roles, true).is_empty());
        let out = flagged_bracket(&points, Some(100.0), None, "pps", roles, true);
        assert_eq!(out[0].kind, DoubtKind::VerdictMismatch);
        // Where nothing else judges a queue (no latency step near the rate found, queues
        // not counted as fails), the step's queue is carried.
        let out = flagged_bracket(&points, Some(500.0), None, "pps", roles, false);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].kind, DoubtKind::QueueGrowing);
        assert_eq!(
            out[0].why,
            "the step at 500 pps that carries the answer was flagged: queue growing: the \
             delay grew; limited by fwbench: the sender fell behind by 300 ms"
        );
    }

    /// The noisy unpoliced ndr: 20 steps, the bracket still 5.3 % wide at 2 % asked.
    #[test]
    fn out_of_trials_names_the_bracket_left() {
        let d = out_of_trials(
            "20 search steps (--max-trials)",
            "pps",
            Some(424_000.0),
            Some(447_700.0),
            Width::Relative(0.02, 1.0),
        );
        assert_eq!(d.kind, DoubtKind::NotConverged);
        assert_eq!(
            d.to_string(),
            "not converged: out of trials: 20 search steps (--max-trials) left the answer \
             between 424000 pps (passed) and 447700 pps (failed), 5.2937 % apart where 2 % \
             was asked"
        );
        let (updates, rules) = (Width::Relative(0.1, 0.5), Width::Absolute(5.0));
        // (unit, pass, fail, asked, how its text ends)
        type Case<'a> = (&'a str, Option<f64>, Option<f64>, Width, &'a str);
        let cases: [Case; 5] = [
            (
                "rules",
                None,
                Some(10.0),
                rules,
                "nothing passed (lowest failing 10 rules)",
            ),
            (
                "rules",
                Some(100.0),
                Some(200.0),
                rules,
                "100 rules apart where 5 was asked",
            ),
            // The envelope preset at 20 000 rules: 7.12 updates/s held once and missed
            // once, 7.51 missed once and held once — "between 7.51 (passed) and 7.12
            // (failed), 5.4695 % apart" was a distance the trials never gave.
            (
                "updates/s",
                Some(7.51),
                Some(7.12),
                updates,
                "left no bracket: 7.51 updates/s passed and 7.12 updates/s failed (repeated \
                 trials near the answer disagree: this machine's noise there is wider than \
                 the 10 % asked)",
            ),
            (
                "rules",
                Some(50.0),
                Some(50.0),
                rules,
                "wider than the 5 rules asked)",
            ),
            // Its next run: 3.03 held and 3.23 missed (6 % apart, 10 % asked), and the
            // 12th trial was spent before 3.03's confirmation.
            (
                "updates/s",
                Some(3.03),
                Some(3.23),
                updates,
                "6.192 % apart where 10 % was asked: as narrow as asked, but the trial that \
                 would confirm 3.03 did not run",
            ),
        ];
        for (unit, pass, fail, asked, end) in cases {
            let d = out_of_trials("12 trials", unit, pass, fail, asked);
            assert!(d.why.ends_with(end), "{d}");
        }
    }

    /// `ndr --frame 64`: 0.98 % lost at 10 % of the rate found; flagged.
    #[test]
    fn loss_at_a_latency_step_is_flagged() {
        let l = |fraction: f64, loss: f64| LatencyPoint {
            fraction,
            offered_pps: 1000.0 * fraction,
            sent_pps: 1000.0 * fraction,
            received_pps: 0.0,
            loss_ratio: loss,
            elapsed_s: 1.0,
            owd: proto::RttSummary::default(),
            owd_basis: None,
        };
        let d = latency_doubts(&[l(0.1, 0.0098), l(0.5, 0.0)], 0.0);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind, DoubtKind::UnexpectedLoss);
        assert!(
            d[0].why
                .contains("at 10 % of the rate found (100 pps) lost 0.98 %"),
            "{}",
            d[0].why
        );
        assert!(latency_doubts(&[l(0.1, 0.004)], 0.005).is_empty());
    }

    /// A latency step of a search that found `found` pps: its fraction, the delay's
    /// min, median, 90th and 99th percentiles and max in µs (as `ndr` printed them),
    /// the sender's share kept.
    fn step(found: f64, fraction: f64, owd_us: [f64; 5], kept: f64) -> LatencyPoint {
        LatencyPoint {
            fraction,
            offered_pps: found * fraction,
            sent_pps: found * fraction * kept,
            received_pps: found * fraction * kept,
            loss_ratio: 0.0,
            elapsed_s: 1.0,
            owd: crate::limited_by::owd_us(1000, owd_us),
            owd_basis: None,
        }
    }

    /// The steps, each run for `t` s.
    fn lasting(steps: &[LatencyPoint], t: f64) -> Vec<LatencyPoint> {
        let at = |l: &LatencyPoint| LatencyPoint {
            elapsed_s: t,
            ..l.clone()
        };
        steps.iter().map(at).collect()
    }

    /// Measured here (`ndr -t 1`, nft): 20 000 rules found 4 125 pps with the delay
    /// growing evenly at 90 % and 100 % of it (a queue filling: the gateway forwards
    /// about 3 070 pps, 0.21 s of queue behind 3 712.5 pps sent for 1 s); 2 000 rules
    /// found 31 349 pps with 31.4 ms of growth at 100 % (3 % short: flagged at the 2 %
    /// precision, not at 5 %); no rules, 205 067 pps, a low median (no queue). Planted
    /// around them: a stall, standing queues, a queue full from the start, a sender
    /// behind (said as the sender's only where its delays grew).
    #[test]
    fn a_delay_growing_through_a_latency_step_is_a_queue_and_flagged() {
        let big = [
            step(4125.0, 0.1, [289.8, 313.3, 347.1, 709.6, 1196.0], 1.0),
            step(4125.0, 0.5, [294.7, 341.0, 462.3, 2437.1, 5316.6], 1.0),
            step(
                4125.0,
                0.9,
                [857.1, 108331.0, 192675.8, 210239.5, 212205.6],
                1.0,
            ),
            step(
                4125.0,
                1.0,
                [743.9, 180092.9, 318767.1, 349962.2, 353632.3],
                1.0,
            ),
        ];
        let d = queue_doubts(&big, 0.02);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, DoubtKind::QueueGrowing);
        let want = "at 90 % of the rate found (3712 pps) the one-way delay grew evenly \
                    through the 1-s trial, from 0.9 ms to 210.2 ms (99th percentile; median \
                    108.3 ms): a queue filled at that rate, and a trial there is loss-free \
                    only while the queue lasts; the gateway sustains about 3070 pps, 25.6 % \
                    below the rate found (more than the search's 2 % precision): longer \
                    trials (-t) find it (steps with a growing delay: 90 %, 100 %)";
        assert_eq!(d[0].why, want);
        // The lowest step first, whatever the order asked.
        let mut reversed = big.clone();
        reversed.reverse();
        assert_eq!(queue_doubts(&reversed, 0.02), d);
        // The same growth over a trial ten times as long is a smaller share of it
        // (2.05 % at the 90 % step, 3.37 % at 100 %), still a queue (above a trial's 2 %)
        // that puts the rate found 11.8 % above what the gateway sustains: flagged at
        // a precision of 5 % too, not at 15 %.
        let long = queue_doubts(&lasting(&big, 10.0), 0.02);
        assert!(
            long[0].why.contains("about 3636 pps, 11.8 % below"),
            "{long:?}"
        );
        assert_eq!(queue_doubts(&lasting(&big, 10.0), 0.05).len(), 1);
        assert!(queue_doubts(&lasting(&big, 10.0), 0.15).is_empty());
        let small = [
            step(31349.0, 0.9, [34.0, 50.5, 113.3, 2535.4, 3305.5], 1.0),
            step(
                31349.0,
                1.0,
                [422.1, 17317.9, 30081.0, 31866.9, 31916.0],
                1.0,
            ),
        ];
        let d = queue_doubts(&small, 0.02);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].why
                .starts_with("at 100 % of the rate found (31349 pps)")
                && d[0].why.contains("about 30393 pps, 3.0 % below"),
            "{}",
            d[0].why
        );
        assert!(queue_doubts(&small, 0.05).is_empty());
        // No queue: [found pps, the step's delays in µs as in `step`, trial s].
        let no_queue: [[f64; 7]; 6] = [
            // No rules: a low median.
            [205067.0, 2.8, 36.5, 210.9, 774.7, 2596.9, 1.0],
            // Jitter within a millisecond: evenly spread, no queue worth the name.
            [4125.0, 289.8, 700.0, 1100.0, 1180.0, 1196.0, 1.0],
            // A queue that stands but does not grow (a flood through 10 000 rules, 2 s:
            // its 90th percentile at three-quarters of the range), and a planted one
            // whose median sits 42 % up, its 90th at 63 %: judged where their ranges
            // alone, 3 % of a 0.5-s trial, would flag them.
            [5239.0, 171.3, 6144.0, 10985.5, 14377.0, 18317.3, 0.5],
            [5239.0, 100.0, 8100.0, 12100.0, 19000.0, 20100.0, 0.5],
            // A queue full from the start (a shaper's: median near the top).
            [1180.0, 100.0, 67500.0, 68500.0, 69000.0, 70000.0, 2.0],
            // A 50-ms stall of the machine that delayed over a tenth of the packets (the
            // 90th percentile near the top): the median where it was.
            [205067.0, 2.8, 36.5, 45_000.0, 49_000.0, 50_000.0, 1.0],
        ];
        for [found, owd_us @ .., t] in no_queue {
            let d = queue_doubts(&lasting(&[step(found, 1.0, owd_us, 1.0)], t), 0.0);
            assert!(d.is_empty(), "{owd_us:?} over {t} s: {d:?}");
        }
        // Not measured (clocks not known): nothing to say.
        let mut withheld = big[3].clone();
        withheld.owd.count = 0;
        assert!(queue_doubts(&[withheld], 0.02).is_empty());
        // A sender behind where the delays grew: the sender's; where they did not:
        // nothing.
        let behind = [step(
            4125.0,
            1.0,
            [743.9, 180092.9, 318767.1, 349962.2, 353632.3],
            0.9,
        )];
        let d = queue_doubts(&behind, 0.02);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, DoubtKind::LimitedByFwbench);
        assert!(d[0].why.contains("(sent 3712 of 4125 pps)"), "{}", d[0].why);
        let calm = [step(4125.0, 0.1, [289.8, 313.3, 347.1, 709.6, 1196.0], 0.9)];
        assert!(queue_doubts(&calm, 0.02).is_empty());
    }

    /// A deciding step whose trials carry fwbench's limit (a sink that lagged) and a
    /// verdict mismatch is flagged as the mismatch, whatever the order: a reader that
    /// judges by the kind (`--load` takes fwbench's limit for a lower bound) must not
    /// read traffic that bypassed the rule set as fwbench's limit.
    #[test]
    fn a_flagged_step_is_of_the_kind_more_than_fwbenchs_limit() {
        let mut sink = pt(41_000.0, true, 0.0, false);
        sink.doubts = vec![Doubt::new(DoubtKind::LimitedByFwbench, "sink lagged")];
        let mut mismatch = pt(41_000.0, true, 0.0, false);
        mismatch.confirmation = true;
        mismatch.doubts = vec![Doubt::new(DoubtKind::VerdictMismatch, "bypassed")];
        let d = flagged_step(
            "41000 pps",
            " that carries the answer",
            [&sink, &mismatch],
            true,
        )
        .unwrap();
        assert_eq!(d.kind, DoubtKind::VerdictMismatch);
        assert_eq!(
            d.why,
            "the step at 41000 pps that carries the answer was flagged: limited by fwbench: \
             sink lagged; verdict mismatch: bypassed"
        );
        // fwbench's limit alone stays what it is.
        let d = flagged_step("41000 pps", "", [&sink], true).unwrap();
        assert_eq!(d.kind, DoubtKind::LimitedByFwbench);
    }
}
