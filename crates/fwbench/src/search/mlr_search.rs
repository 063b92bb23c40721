//! MLRsearch as a search of trials (`fwbench mlr`, the `mlr` workload): flood steps at
//! the rates and durations the pure [`Mlr`] asks for, until every goal loss ratio
//! has its bracket from final-duration trials.

use crate::error::usage;
use crate::outcome::search::{pct, MlrGoal, MlrPoint, MlrReport};
use crate::outcome::Outcome;
use crate::params::search::{SearchParams, MLR_GOALS};
use crate::params::TrialParams;
use crate::search::mlr::{Mlr, MlrConfig, MlrStep};
use crate::search::ndr::point;
use crate::search::step_params;
use crate::search::Runner;
use anyhow::{anyhow, bail, Result};
use proto::Rate;

/// The loss ratio MLRsearch counts for a trial: the measured one, or, when the sender
/// fell short of its schedule (by more than 0.1 %), the share of the schedule that did
/// not arrive — a rate that was not offered cannot count as passed.
pub fn counted_loss(o: &Outcome) -> Option<f64> {
    let s = o.packet()?;
    let behind = s.offered_pps > 0.0 && s.sent_pps < s.offered_pps * 0.999;
    Some(if behind {
        s.loss_ratio.max(1.0 - s.received_pps / s.offered_pps)
    } else {
        s.loss_ratio
    })
}

/// MLRsearch over the offered rate for `sp.goals` (default 0 % and 0.5 %), final
/// trials of the trial's duration.
pub fn mlr_search(p: &TrialParams, sp: &SearchParams, run: &mut Runner) -> Result<MlrReport> {
    let k = p.packet().cloned().unwrap_or_default();
    let bytes = k.rate_bytes(p.family).map_err(usage)?;
    // Per packet; for a size mix, the means of its sizes (and the reported sizes
    // rounded), as ndr's.
    let (mean_payload, mean_frame) = k.mean_bytes(p.family).map_err(usage)?;
    let (payload, frame) = (mean_payload.round() as u32, mean_frame.round() as u32);
    let goals = if sp.goals.is_empty() {
        MLR_GOALS.to_vec()
    } else {
        sp.goals.clone()
    };
    let final_s = p.duration_s;
    let initial_s = sp.initial_duration_s.unwrap_or(1.0).min(final_s);
    let strictest = goals.iter().copied().fold(f64::INFINITY, f64::min);
    let mut q = step_params(p);
    let set = |q: &mut TrialParams, r: Rate, d: f64| {
        if let Some(k) = q.kind.packet_mut() {
            k.rate = r;
        }
        q.duration_s = d;
    };
    let max = sp.max_trials as usize;
    let mut curve: Vec<MlrPoint> = Vec::new();
    let record = |x: f64, d: f64, o: &Outcome, curve: &mut Vec<MlrPoint>| -> Result<f64> {
        let pt = point(x, o, strictest, false)?;
        let counted = counted_loss(o).ok_or_else(|| anyhow!("trial at {x} pps: no figures"))?;
        eprintln!(
            "    [{:>2}/{max}] {x:.0} pps for {d:.2} s: sent {} received {} loss {:.4}%{}",
            curve.len() + 1,
            pt.sent,
            pt.received,
            pt.loss_ratio * 100.0,
            pt.note()
        );
        curve.push(MlrPoint {
            point: pt,
            duration_s: d,
            counted_loss_ratio: counted,
        });
        Ok(counted)
    };
    // The ceiling: given, or what an unpaced flood of a first-phase trial gets out.
    let (ceiling, mut probe) = match sp.max_rate.and_then(|r| r.pps(bytes)) {
        Some(c) => (c, None),
        None => {
            set(&mut q, Rate::Max, initial_s);
            let o = run(&q)?;
            let c = o.packet().map(|x| x.sent_pps).unwrap_or(0.0);
            let loss = record(c, initial_s, &o, &mut curve)?;
            (c, Some((c, loss)))
        }
    };
    if ceiling <= 0.0 {
        bail!("the sender got no packets out; nothing to search");
    }
    let mut cfg = MlrConfig::new(ceiling * 1e-3, ceiling, goals, final_s);
    cfg.initial_duration_s = initial_s;
    cfg.width = sp.precision;
    let mut mlr = Mlr::new(cfg).map_err(|e| usage(format!("mlr: {e}")))?;
    let (results, mut converged) = loop {
        match mlr.next_step() {
            MlrStep::Done(r) => break (r, true),
            MlrStep::Trial { pps, duration_s } => {
                // The probe was the first trial MLRsearch asks for (max rate, short).
                if let Some((c, loss)) = probe.take() {
                    if c == pps && duration_s == initial_s {
                        mlr.record(loss);
                        continue;
                    }
                }
                if curve.len() >= max {
                    break (mlr.results(), false);
                }
                set(&mut q, Rate::Pps(pps), duration_s);
                let o = run(&q)?;
                let loss = record(pps, duration_s, &o, &mut curve)?;
                mlr.record(loss);
            }
        }
    };
    let goals: Vec<MlrGoal> = results
        .iter()
        .map(|g| MlrGoal {
            loss_ratio: g.loss_ratio,
            rate_pps: g.lower_pps,
            rate_bps_payload: g.lower_pps.map(|x| x * mean_payload * 8.0),
            rate_bps_l2: g.lower_pps.map(|x| x * mean_frame * 8.0),
            fail_pps: g.upper_pps,
        })
        .collect();
    let first = goals.first();
    let latency = match first.and_then(|g| g.rate_pps).filter(|x| *x > 0.0) {
        Some(x) => crate::search::latency::latency_at(p, x, &sp.latency_at, run)?,
        None => vec![],
    };
    // The witness: for each goal, a trial within it above one that was not and ran no
    // longer (a short pass above a long fail is the duration's doing: a buffer absorbs
    // a short excess) — the trials contradict each other: not converged, named.
    let mut doubts = vec![];
    if !converged {
        doubts.extend(out_of_trials(&goals, curve.len(), sp.precision));
    }
    for g in &goals {
        if let Some(c) = contradiction(&curve, g.loss_ratio) {
            converged = false;
            doubts.push(c);
        }
    }
    let points: Vec<crate::outcome::search::Point> =
        curve.iter().map(|c| c.point.clone()).collect();
    doubts.extend(crate::search::witness::sender_doubts(
        &points,
        first.and_then(|g| g.rate_pps),
        first.and_then(|g| g.fail_pps),
    ));
    // The latency steps ran at fractions of the first (strictest) goal's rate: they
    // judge a queue at that rate only, not at another goal's.
    let judged = first
        .and_then(|g| g.rate_pps)
        .filter(|_| crate::search::witness::queues_judged(&latency, sp.queue_fails));
    doubts.extend(flagged_goals(&curve, &goals, final_s, judged));
    // A goal that passed at the unpaced flood's ceiling: the sender's rate there.
    let at_ceiling: Vec<String> = goals
        .iter()
        .filter(|g| sp.max_rate.is_none() && g.fail_pps.is_none() && g.rate_pps.is_some())
        .map(|g| format!("goal ≤ {} loss", pct(g.loss_ratio)))
        .collect();
    if !at_ceiling.is_empty() {
        doubts.push(crate::search::witness::sender_limit(
            ceiling,
            Some(&at_ceiling.join(", ")),
        ));
    }
    doubts.extend(crate::search::witness::step_doubts(
        &latency,
        strictest,
        sp.precision,
    ));
    Ok(MlrReport {
        mode: "mlr",
        rate_pps: first.and_then(|g| g.rate_pps),
        rate_bps_l2: first.and_then(|g| g.rate_bps_l2),
        fail_pps: first.and_then(|g| g.fail_pps),
        limited_by_sender: !at_ceiling.is_empty(),
        goals,
        precision: sp.precision,
        final_duration_s: final_s,
        initial_duration_s: initial_s,
        payload,
        frame,
        ceiling_pps: ceiling,
        ceiling_given: sp.max_rate.is_some(),
        converged,
        trials: curve.len(),
        trial_time_s: curve.iter().map(|c| c.duration_s).sum(),
        curve,
        latency,
        doubts,
    })
}

/// Out of trials (`trials` run): each goal whose bracket is still wider than
/// `precision` asks (at least one), flagged with it (never `ok`: not converged).
fn out_of_trials(goals: &[MlrGoal], trials: usize, precision: f64) -> Vec<results::Doubt> {
    let open = |g: &&MlrGoal| match (g.rate_pps, g.fail_pps) {
        (Some(p), Some(f)) => f - p > precision * f,
        _ => true,
    };
    let wide: Vec<&MlrGoal> = match goals.iter().filter(open).collect::<Vec<_>>() {
        v if v.is_empty() => goals.iter().take(1).collect(),
        v => v,
    };
    wide.into_iter()
        .map(|g| {
            crate::search::witness::out_of_trials(
                &format!(
                    "{trials} trials (--max-trials), goal ≤ {} loss,",
                    pct(g.loss_ratio)
                ),
                "pps",
                g.rate_pps,
                g.fail_pps,
                crate::search::bisect::Width::Relative(precision, 0.0),
            )
        })
        .collect()
}

/// The steps that decide each goal's bracket, where their trials were flagged
/// ([`crate::search::witness::flagged_step`]): the final-duration trials within the
/// goal at its rate, and the trials beyond it at the rate above (any duration, as
/// MLRsearch's upper bound). A step that decides several goals is said once, naming
/// them. Each step is judged by its goals' verdict, not the strictest goal's its point
/// holds: a step that lost 0.3 % carries the 0.5 % goal's rate, and a queue that filled
/// through it is that goal's doubt (a queue says nothing against a fail). `judged`:
/// the rate whose queue the search judged itself (its latency steps, at fractions of
/// the first goal's rate: [`crate::search::witness::queues_judged`]); a queue at any
/// other goal's rate is carried.
fn flagged_goals(
    curve: &[MlrPoint],
    goals: &[MlrGoal],
    final_s: f64,
    judged: Option<f64>,
) -> Vec<results::Doubt> {
    // (rate, passed, the goals it decides, the trials at it that decide them)
    let mut decided: Vec<(f64, bool, Vec<String>, Vec<&crate::outcome::search::Point>)> = vec![];
    for g in goals {
        let goal = format!("goal ≤ {} loss", pct(g.loss_ratio));
        for (x, passed) in [(g.rate_pps, true), (g.fail_pps, false)] {
            let Some(x) = x else { continue };
            let steps = curve
                .iter()
                .filter(|c| c.point.x == x && (c.counted_loss_ratio <= g.loss_ratio) == passed)
                .filter(|c| !passed || c.duration_s >= final_s * 0.999)
                .map(|c| &c.point);
            match decided.iter_mut().find(|d| d.0 == x && d.1 == passed) {
                Some(d) => {
                    d.2.push(goal.clone());
                    d.3.extend(steps);
                }
                None => decided.push((x, passed, vec![goal.clone()], steps.collect())),
            }
        }
    }
    decided
        .into_iter()
        .filter_map(|(x, passed, goals, steps)| {
            let role = if passed {
                format!(" that carries the rate of {}", goals.join(", "))
            } else {
                format!(
                    " that bounds the rate of {} (the lowest that failed)",
                    goals.join(", ")
                )
            };
            let steps: Vec<crate::outcome::search::Point> = steps
                .into_iter()
                .map(|p| crate::outcome::search::Point {
                    pass: passed,
                    ..p.clone()
                })
                .collect();
            let queues = passed && judged == Some(x);
            crate::search::witness::flagged_step(&format!("{x:.0} pps"), &role, &steps, queues)
        })
        .collect()
}

/// A contradiction among MLRsearch's trials for one goal `loss`: a rate counted within
/// it above a rate counted beyond it by a trial no longer than the passing one (the
/// widest such pair). A short trial passing above a longer one's failure is not one.
pub fn contradiction(curve: &[MlrPoint], loss: f64) -> Option<results::Doubt> {
    let (pass, fail) = curve
        .iter()
        .filter(|p| p.counted_loss_ratio <= loss)
        .flat_map(|p| {
            curve
                .iter()
                .filter(move |f| {
                    f.counted_loss_ratio > loss
                        && f.point.x < p.point.x
                        && f.duration_s <= p.duration_s
                })
                .map(move |f| (p, f))
        })
        .max_by(|a, b| (a.0.point.x - a.1.point.x).total_cmp(&(b.0.point.x - b.1.point.x)))?;
    Some(results::Doubt::new(
        results::DoubtKind::Contradiction,
        format!(
            "goal {}: {:.0} pps passed in a {:.1}-s trial above {:.0} pps, which lost {} in a \
             {:.1}-s trial",
            crate::outcome::search::pct(loss),
            pass.point.x,
            pass.duration_s,
            fail.point.x,
            crate::outcome::search::pct(fail.counted_loss_ratio),
            fail.duration_s
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::search::Point;

    /// Issue 37, as for ndr: MLRsearch out of trials (`--max-trials`) is flagged with
    /// the goal whose bracket is still open, never `ok`.
    #[test]
    fn an_mlr_out_of_trials_is_flagged_never_ok() {
        use crate::outcome::search::SearchSummary;
        let p = crate::search::ndr::tests::flood(&[("duration", "2")]);
        let sp = SearchParams {
            precision: 0.02,
            max_rate: Some(Rate::Pps(895_463.0)),
            max_trials: 4,
            goals: vec![0.0],
            latency_at: vec![],
            ..SearchParams::default()
        };
        let mut run = |q: &TrialParams| crate::search::ndr::tests::step(q, 400_000.0);
        let r = mlr_search(&p, &sp, &mut run).unwrap();
        assert!(!r.converged);
        let only = crate::search::only_doubt(&r.doubts);
        assert_eq!(only.kind, results::DoubtKind::NotConverged);
        assert!(
            only.why
                .starts_with("out of trials: 4 trials (--max-trials), goal ≤ 0 % loss,"),
            "{}",
            only
        );
        let o = Outcome::started("t0".into()).with_search(SearchSummary::Mlr(r));
        assert_eq!(o.status, results::Status::Flagged);
    }

    /// A goal's rate that fwbench's sender set is not the gateway's: with no
    /// `--max-rate`, every goal passed at the unpaced flood's ceiling (the sender's);
    /// with one above what the sender gets out, the lowest failing rate is where it fell
    /// behind. Both flagged, never `ok`.
    #[test]
    fn an_mlr_rate_the_sender_set_is_flagged() {
        use crate::outcome::search::SearchSummary;
        let p = crate::search::ndr::tests::flood(&[("duration", "2")]);
        let mut run = |q: &TrialParams| crate::search::ndr::tests::capped(q, 5_000.0);
        let unpaced = SearchParams {
            latency_at: vec![],
            ..SearchParams::default()
        };
        let r = mlr_search(&p, &unpaced, &mut run).unwrap();
        assert!(r.limited_by_sender, "{r:?}");
        let only = crate::search::only_doubt(&r.doubts);
        assert_eq!(
            only.why,
            "the gateway passed everything fwbench's sender could offer (5000 pps, an \
             unpaced flood) within goal ≤ 0 % loss, goal ≤ 0.5 % loss: the rate found is \
             the sender's, a lower bound of the gateway's (more --threads or --sender raw \
             may find it)"
        );
        let o = Outcome::started("t0".into()).with_search(SearchSummary::Mlr(r));
        assert_eq!(o.status, results::Status::Flagged);

        let given = SearchParams {
            max_rate: Some(Rate::Pps(20_000.0)),
            goals: vec![0.0],
            ..unpaced
        };
        let r = mlr_search(&p, &given, &mut run).unwrap();
        let fail = r.fail_pps.unwrap();
        assert!((5_000.0..5_200.0).contains(&fail), "{r:?}");
        assert!(
            r.doubts.iter().any(|d| d.why.starts_with(&format!(
                "the lowest failing rate, {fail:.0} pps, failed by fwbench's own sender \
                 falling behind its schedule (sent 5000 of {fail:.0} pps)"
            ))),
            "{:?}",
            r.doubts
        );
        let o = Outcome::started("t0".into()).with_search(SearchSummary::Mlr(r));
        assert_eq!(o.status, results::Status::Flagged);
    }

    /// The trials at the rate a goal found carry it: where their traffic bypassed the
    /// rule set, the search is flagged naming the step and the goals it carries (said
    /// once for both default goals, which found the same rate).
    #[test]
    fn a_flagged_step_carrying_a_goals_rate_flags_the_search() {
        use crate::outcome::search::SearchSummary;
        use crate::search::ndr::tests::{flagged, BYPASSED};
        let p = crate::search::ndr::tests::flood(&[("duration", "2")]);
        let sp = SearchParams {
            max_rate: Some(Rate::Pps(20_000.0)),
            latency_at: vec![],
            ..SearchParams::default()
        };
        let mut run = |q: &TrialParams| {
            let o = crate::search::ndr::tests::step(q, 10_000.0)?;
            let lost = o.packet().is_some_and(|s| s.lost > 0);
            Ok(if lost {
                o
            } else {
                flagged(o, results::DoubtKind::VerdictMismatch, BYPASSED)
            })
        };
        let r = mlr_search(&p, &sp, &mut run).unwrap();
        assert_eq!(r.goals[0].rate_pps, r.goals[1].rate_pps, "{:?}", r.goals);
        let only = crate::search::only_doubt(&r.doubts);
        assert_eq!(only.kind, results::DoubtKind::VerdictMismatch);
        assert_eq!(
            only.why,
            format!(
                "the step at {:.0} pps that carries the rate of goal ≤ 0 % loss, goal ≤ 0.5 % \
                 loss was flagged: verdict mismatch: {BYPASSED}",
                r.rate_pps.unwrap()
            )
        );
        let o = Outcome::started("t0".into()).with_search(SearchSummary::Mlr(r));
        assert_eq!(o.status, results::Status::Flagged);
    }

    /// A gateway that forwards 10 000 pps without loss and loses 0.3 % up to 11 000
    /// (10 % above): its queue fills through the trials between 9 000 and 11 000 pps.
    fn queueing(q: &TrialParams) -> Result<Outcome> {
        let Some(Rate::Pps(x)) = q.packet().map(|k| k.rate) else {
            bail!("the search asked for an unpaced step")
        };
        let sent = x.round() as u64;
        let received = match x {
            x if x <= 10_000.0 => sent,
            x if x <= 11_000.0 => sent - sent * 3 / 1000,
            _ => sent * 9 / 10,
        };
        let o = crate::outcome::tests::packet_step(x, sent, received, 1.0, 0);
        Ok(if (9_000.0..=11_000.0).contains(&x) && q.duration_s > 1.5 {
            crate::search::ndr::tests::flagged(o, results::DoubtKind::QueueGrowing, QUEUED)
        } else {
            o
        })
    }

    const QUEUED: &str = "the one-way delay rose evenly through the trial";

    /// Each goal whose deciding step showed a queue filling through its trial carries
    /// it: the 0.5 % goal's rate came from a step that lost 0.3 % (a fail for the
    /// strictest goal, a pass for its own) while its queue filled — not a rate the
    /// gateway sustains. The latency steps, at fractions of the strictest goal's rate,
    /// judge that goal's queue only: with one at 100 % the 0 % goal's step is not
    /// said again, the 0.5 % goal's still is.
    #[test]
    fn every_goal_whose_step_showed_a_queue_carries_it() {
        let p = crate::search::ndr::tests::flood(&[("duration", "2")]);
        let sp = SearchParams {
            max_rate: Some(Rate::Pps(20_000.0)),
            latency_at: vec![],
            ..SearchParams::default()
        };
        let r = mlr_search(&p, &sp, &mut queueing).unwrap();
        let (ndr, pdr) = (r.goals[0].rate_pps.unwrap(), r.goals[1].rate_pps.unwrap());
        assert!((9_000.0..=10_000.0).contains(&ndr), "{:?}", r.goals);
        assert!((10_000.0..=11_000.0).contains(&pdr), "{:?}", r.goals);
        let queued = |r: &MlrReport, goal: &str| {
            r.doubts.iter().any(|d| {
                d.kind == results::DoubtKind::QueueGrowing
                    && d.why
                        .contains(&format!("that carries the rate of {goal} was flagged"))
                    && d.why.ends_with(QUEUED)
            })
        };
        assert!(queued(&r, "goal ≤ 0 % loss"), "{:?}", r.doubts);
        assert!(queued(&r, "goal ≤ 0.5 % loss"), "{:?}", r.doubts);
        // A failing step's queue says nothing against the fail.
        assert!(
            !r.doubts.iter().any(|d| d.why.contains("bounds the rate")),
            "{:?}",
            r.doubts
        );
        let o = Outcome::started("t0".into())
            .with_search(crate::outcome::search::SearchSummary::Mlr(r));
        assert_eq!(o.status, results::Status::Flagged);

        // A latency step at 100 % of the 0 % goal's rate (its delay flat) judged that
        // goal's queue; nothing judged the 0.5 % goal's.
        let judged = SearchParams {
            latency_at: vec![1.0],
            ..sp
        };
        let r = mlr_search(&p, &judged, &mut queueing).unwrap();
        assert!(!queued(&r, "goal ≤ 0 % loss"), "{:?}", r.doubts);
        assert!(queued(&r, "goal ≤ 0.5 % loss"), "{:?}", r.doubts);
    }

    /// A size mix's bit rates count its mean packet, as ndr's do — not its largest
    /// (imix: 354.3-B frames on average, 1500 B at most).
    #[test]
    fn an_mlr_of_a_size_mix_counts_its_mean_packet() {
        let p = crate::search::ndr::tests::flood(&[("duration", "2"), ("size", "imix")]);
        let sp = SearchParams {
            max_rate: Some(Rate::Pps(20_000.0)),
            goals: vec![0.0],
            latency_at: vec![],
            ..SearchParams::default()
        };
        let mut run = |q: &TrialParams| crate::search::ndr::tests::step(q, 10_000.0);
        let r = mlr_search(&p, &sp, &mut run).unwrap();
        let (payload, frame) = p.packet().unwrap().mean_bytes(p.family).unwrap();
        assert!((frame - 354.33).abs() < 0.01, "{frame}");
        assert_eq!((r.payload, r.frame), (payload.round() as u32, 354));
        let g = &r.goals[0];
        let x = g.rate_pps.unwrap();
        assert_eq!(g.rate_bps_l2, Some(x * frame * 8.0));
        assert_eq!(g.rate_bps_payload, Some(x * payload * 8.0));
        assert_eq!(r.rate_bps_l2, g.rate_bps_l2);
    }

    fn trial(x: f64, d: f64, loss: f64) -> MlrPoint {
        MlrPoint {
            point: Point {
                x,
                sent: 1,
                received: 1,
                loss_ratio: loss,
                offered_pps: x,
                sent_pps: x,
                received_pps: x,
                pass: loss == 0.0,
                sender_behind: false,
                confirmation: false,
                queue_grew: false,
                limited_by: None,
                doubts: vec![],
            },
            duration_s: d,
            counted_loss_ratio: loss,
        }
    }

    /// A policer whose rate fell mid-search: 5-s trials passed at 5 000 pps, then
    /// lost 2.7 % at 200 pps. A 1-s pass above a 5-s failure is the duration's doing.
    #[test]
    fn final_trials_that_contradict_each_other_are_named() {
        let curve = [
            trial(7190.0, 1.0, 0.0),
            trial(5000.0, 5.0, 0.0),
            trial(200.0, 5.0, 0.027),
        ];
        let d = contradiction(&curve, 0.0).unwrap();
        assert_eq!(
            d.why,
            "goal 0 %: 5000 pps passed in a 5.0-s trial above 200 pps, which lost 2.7 % in a \
             5.0-s trial"
        );
        // Within the 0.5 % goal? 200 pps lost 2.7 %: still beyond it.
        assert!(contradiction(&curve, 0.005).is_some());
        // Only the short pass above the long failure: no contradiction.
        assert!(contradiction(&[trial(7190.0, 1.0, 0.0), trial(200.0, 5.0, 0.027)], 0.0).is_none());
        // Monotone: none.
        assert!(contradiction(&[trial(100.0, 5.0, 0.0), trial(200.0, 5.0, 0.01)], 0.0).is_none());
    }
}
