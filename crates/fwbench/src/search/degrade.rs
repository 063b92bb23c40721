//! Seed 002's degradation point: flow trials at bisected rule counts.

use crate::error::usage;
use crate::outcome::search::DegradeReport;
use crate::outcome::search::Point;
use crate::params::search::check_degrade;
use crate::params::search::SearchParams;
use crate::params::TrialParams;
use crate::search::bisect::Bisect;
use crate::search::bisect::Step;
use crate::search::bisect::Width;
use crate::search::ndr::point;
use crate::search::ndr::progress;
use crate::search::step_params;
use crate::search::witness;
use crate::search::Runner;
use anyhow::Result;
use results::{DoubtKind, LimitedBy};

/// Seed 002's degradation point: the smallest rule count at which a paced flow loses
/// more than `sp.loss`, searched between 0 and `sp.max_rules`.
pub fn degrade_search(
    p: &TrialParams,
    sp: &SearchParams,
    run: &mut Runner,
) -> Result<DegradeReport> {
    check_degrade(p, sp).map_err(usage)?;
    let mut q = step_params(p);
    let mut b = Bisect::new(
        0.0,
        sp.max_rules as f64,
        false,
        Width::Absolute(sp.resolution as f64),
    )
    .integer();
    let mut points: Vec<Point> = Vec::new();
    // Passing steps whose trial saw a queue fill through it: (rules, why).
    let mut queued: Vec<(f64, String)> = Vec::new();
    // Steps whose trial was judged limited by fwbench's sender (its verdict, which
    // knows a CPU shared with the gateway's rules, or its lateness beyond its bound).
    let mut senders: Vec<f64> = Vec::new();
    let max = 2
        + (sp.max_rules as f64 / sp.resolution.max(1) as f64)
            .log2()
            .ceil()
            .max(0.0) as usize
        + 2;
    let found = loop {
        match b.next_step() {
            Step::Done(f) => break Some(f),
            Step::Try(x) => {
                if points.len() >= max + 4 {
                    break None;
                }
                q.rules = x as u32;
                let o = run(&q)?;
                let pt = point(x, &o, sp.loss, false)?;
                progress(points.len() + 1, max, &format!("{} rules", x as u32), &pt);
                let queue = o.doubts.iter().find(|d| d.kind == DoubtKind::QueueGrowing);
                if let Some(d) = queue.filter(|_| pt.pass) {
                    queued.push((x, d.why.clone()));
                }
                let verdict = o.packet().and_then(|s| s.limited_by.as_ref()).map(|l| l.by);
                if verdict == Some(LimitedBy::Sender)
                    || o.doubts
                        .iter()
                        .any(|d| d.kind == DoubtKind::LimitedByFwbench)
                {
                    senders.push(x);
                }
                b.record(pt.pass);
                points.push(pt);
            }
        }
    };
    let (pass, fail) = match found {
        Some(f) => (f.pass, f.fail),
        None => witness::bracket(points.iter().map(|q| (q.x, q.pass))),
    };
    // Out of trials: the bracket so far, flagged (never `ok`: not converged).
    let mut doubts: Vec<_> = found
        .is_none()
        .then(|| {
            witness::out_of_trials(
                &format!("{} trials", points.len()),
                "rules",
                pass,
                fail,
                Width::Absolute(sp.resolution as f64),
            )
        })
        .into_iter()
        .collect();
    doubts.extend(witness::degrade_doubts(
        &points, &queued, &senders, pass, fail,
    ));
    // The last good and first degraded steps decide the answer: flagged, they cannot.
    doubts.extend(witness::flagged_bracket(
        &points,
        pass,
        fail,
        "rules",
        [", the last good,", ", the first degraded,"],
        // `degrade_doubts` names a queue that filled through a step that passed.
        true,
    ));
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    Ok(DegradeReport {
        loss_threshold: sp.loss,
        resolution: sp.resolution,
        max_rules: sp.max_rules,
        last_good_rules: found.and_then(|f| f.pass).map(|x| x as u32),
        first_degraded_rules: found.and_then(|f| f.fail).map(|x| x as u32),
        trials: points.len(),
        converged: found.is_some(),
        points,
        doubts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::search::SearchSummary;
    use crate::outcome::Outcome;
    use crate::params::workload::Workload;
    use crate::workloads::Figures;
    use results::{Doubt, LimitedBy, Status};

    /// The searches' flow: 10 kpps through nft, rule counts up to 4 000 by 250.
    fn flow_search() -> (TrialParams, SearchParams) {
        let p = crate::plan::build::test_params(
            Workload::Flow,
            &[("engine", "nft"), ("rate", "10kpps")],
        );
        let sp = SearchParams {
            max_rules: 4_000,
            resolution: 250,
            ..SearchParams::default()
        };
        (p, sp)
    }

    /// A degrade search on a gateway whose flow loses 10 % above `loses_above` rules;
    /// steps above `queues_above` (but not losing) are flagged for a queue that filled
    /// through them, and the step at `judged`'s rules was judged limited by its role:
    /// the sender or a shared CPU (the rules took its CPU) with the sender behind (sent
    /// 80 %), or the sink.
    fn search_with(
        loses_above: u32,
        queues_above: u32,
        judged: Option<(u32, LimitedBy)>,
    ) -> (DegradeReport, Outcome) {
        let behind = judged
            .filter(|(_, by)| *by != LimitedBy::Sink)
            .map(|(x, _)| x);
        let (p, sp) = flow_search();
        let mut step = |q: &TrialParams| -> Result<Outcome> {
            let sent = if Some(q.rules) == behind {
                8_000
            } else {
                10_000
            };
            let received = if q.rules > loses_above {
                sent * 9 / 10
            } else {
                sent
            };
            let mut o = crate::outcome::tests::packet_step(10_000.0, sent, received, 1.0, 0);
            if q.rules > queues_above && q.rules <= loses_above {
                let why = format!("planted queue at {} rules", q.rules);
                o.doubts.push(Doubt::new(DoubtKind::QueueGrowing, why));
            }
            let by = judged.filter(|(x, _)| *x == q.rules).map(|(_, by)| by);
            if let (Some(by), Some(Figures::Packet(s))) = (by, o.figures.as_mut()) {
                s.limited_by = Some(Box::new(crate::limited_by::Limit::planted(by)));
            }
            Ok(o)
        };
        let r = degrade_search(&p, &sp, &mut step).unwrap();
        let o = Outcome::started("t0".into()).with_search(SearchSummary::Degrade(r.clone()));
        (r, o)
    }

    fn search(
        loses_above: u32,
        queues_above: u32,
        behind: Option<u32>,
    ) -> (DegradeReport, Outcome) {
        search_with(
            loses_above,
            queues_above,
            behind.map(|x| (x, LimitedBy::Sender)),
        )
    }

    /// A step that passed only because a queue filled through its trial bounds the
    /// degradation point from above: the search says so and is flagged, naming the
    /// lowest such step (the lowest above 1 000 the bisection tried).
    #[test]
    fn a_pass_a_queue_held_flags_the_degradation_point() {
        let (d, clean) = search(3_000, 4_000, None);
        assert_eq!(clean.status, Status::Ok, "{:?}", clean.error);
        assert_eq!(d.last_good_rules, Some(3_000));

        let (d, queued) = search(3_000, 1_000, None);
        assert_eq!(d.last_good_rules, Some(3_000));
        assert_eq!(queued.status, Status::Flagged, "{:?}", queued.error);
        let only = crate::search::only_doubt(&d.doubts);
        assert_eq!(only.kind, DoubtKind::QueueGrowing);
        let tried: Vec<u32> = d.points.iter().map(|p| p.x as u32).collect();
        let lowest = tried
            .iter()
            .copied()
            .filter(|x| (1_001..=3_000).contains(x))
            .min();
        let why = &only.why;
        assert!(
            why.starts_with(&format!(
                "the step at {} rules passed while a queue filled through its trial \
                 (planted queue at {0} rules): it is loss-free only while the queue lasts, \
                 so the flow degrades at or below {0} rules, not above the 3000 the search \
                 found good",
                lowest.unwrap()
            )),
            "{why} (steps {tried:?})"
        );
    }

    /// A queue at the last good step itself: that step is what is in doubt.
    #[test]
    fn a_queue_at_the_last_good_step_names_it() {
        let (d, o) = search(3_000, 2_999, None);
        assert_eq!(o.status, Status::Flagged, "{:?}", o.error);
        let only = crate::search::only_doubt(&d.doubts);
        assert!(
            only.why.ends_with(
                "so the flow degrades at or below 3000 rules, the rule count the search \
                 found good: longer trials (-t) find it"
            ),
            "{}",
            only.why
        );
    }

    /// The lowest failing step with its sender behind failed for fwbench: flagged as
    /// the sender's. A sender behind at a step that is not the lowest failing one says
    /// nothing of the answer.
    #[test]
    fn a_first_fail_with_the_sender_behind_is_the_senders() {
        let first_bad = search(3_000, 4_000, None).0.first_degraded_rules.unwrap();
        let (d, behind) = search(3_000, 4_000, Some(first_bad));
        assert_eq!(behind.status, Status::Flagged, "{:?}", behind.error);
        let only = crate::search::only_doubt(&d.doubts);
        assert_eq!(only.kind, DoubtKind::LimitedByFwbench);
        assert!(
            only.why.starts_with(&format!(
                "the step at {first_bad} rules, the lowest that failed, had its sender \
                 behind its schedule (sent 8000 of 10000 pps)"
            )),
            "{}",
            only.why
        );
        let above = d
            .points
            .iter()
            .map(|p| p.x as u32)
            .filter(|x| *x > first_bad)
            .max();
        // Behind because the rules took its CPU (shared-cpu): not the sender's.
        let (_, shared) = search_with(3_000, 4_000, Some((first_bad, LimitedBy::SharedCpu)));
        assert_eq!(shared.status, Status::Ok, "{:?}", shared.error);
        assert!(
            above.is_some(),
            "the bisection tried above {first_bad}: {:?}",
            d.points
        );
        let (_, elsewhere) = search(3_000, 4_000, above);
        assert_eq!(elsewhere.status, Status::Ok, "{:?}", elsewhere.error);
    }

    /// The last good and first degraded steps decide the answer: where either's trial
    /// was flagged (its traffic bypassed the rule set), the degradation point is, naming
    /// the step and its doubt; flagged elsewhere, it says nothing of the answer.
    #[test]
    fn a_flagged_last_good_or_first_degraded_step_flags_the_answer() {
        use crate::search::ndr::tests::{flagged, BYPASSED};
        let (clean, _) = search(3_000, 4_000, None);
        let (good, bad) = (
            clean.last_good_rules.unwrap(),
            clean.first_degraded_rules.unwrap(),
        );
        let (p, sp) = flow_search();
        let elsewhere = clean
            .points
            .iter()
            .map(|q| q.x as u32)
            .find(|x| *x != good && *x != bad);
        for (at, role) in [
            (Some(good), Some("last good")),
            (Some(bad), Some("first degraded")),
            (elsewhere, None),
        ] {
            let r = degrade_search(&p, &sp, &mut |q: &TrialParams| {
                let received = if q.rules > 3_000 { 9_000 } else { 10_000 };
                let o = crate::outcome::tests::packet_step(10_000.0, 10_000, received, 1.0, 0);
                Ok(if Some(q.rules) == at {
                    flagged(o, DoubtKind::VerdictMismatch, BYPASSED)
                } else {
                    o
                })
            })
            .unwrap();
            assert_eq!(
                (r.last_good_rules, r.first_degraded_rules),
                (Some(good), Some(bad))
            );
            let o = Outcome::started("t0".into()).with_search(SearchSummary::Degrade(r.clone()));
            let Some(role) = role else {
                assert_eq!(o.status, Status::Ok, "{at:?}: {:?}", r.doubts);
                continue;
            };
            assert_eq!(o.status, Status::Flagged, "{:?}", r.doubts);
            let only = crate::search::only_doubt(&r.doubts);
            assert_eq!(only.kind, DoubtKind::VerdictMismatch);
            assert_eq!(
                only.why,
                format!(
                    "the step at {} rules, the {role}, was flagged: verdict mismatch: {BYPASSED}",
                    at.unwrap()
                )
            );
        }
    }

    /// The lowest failing step lost its packets at fwbench's sink (its trial judged so):
    /// it measured the sink, not the rules — flagged as fwbench's.
    #[test]
    fn a_first_fail_at_the_sink_is_fwbenchs() {
        let first_bad = search(3_000, 4_000, None).0.first_degraded_rules.unwrap();
        let (d, sink) = search_with(3_000, 4_000, Some((first_bad, LimitedBy::Sink)));
        assert_eq!(sink.status, Status::Flagged, "{:?}", sink.error);
        let only = crate::search::only_doubt(&d.doubts);
        assert_eq!(only.kind, DoubtKind::LimitedByFwbench);
        assert_eq!(
            only.why,
            format!(
                "the step at {first_bad} rules, the lowest that failed, was judged limited by \
                 fwbench's sink (it received 9000 of the 10000 pps sent): it measured \
                 fwbench's sink, not the rules, and the flow may degrade only above it"
            )
        );
    }
}
