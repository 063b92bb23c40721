//! Unit tests of `envelope.rs`: the verdict over planted updates, and the search over
//! a simulated update path whose commits take a known time (its limit is known).

use super::*;
use crate::outcome::search::SearchSummary;
use crate::params::workload::SearchKind;
use crate::workloads::events::{planted_summary, UpdateEffect, Violations};
use results::Status;

fn targets() -> Targets {
    Targets {
        latency_ms: 100.0,
        effect_ms: 1000.0,
        max_update_rate: 100.0,
    }
}

/// An update due at `due_ms`, started at `start_ms` (after the traffic began), its
/// commit `commit_ms` long; `None` start: never ran.
fn update(i: u32, due_ms: f64, start_ms: Option<f64>, commit_ms: f64) -> UpdateEffect {
    let mut u = planted_summary(1000).updates.remove(0);
    u.row.index = i;
    u.row.marker = i == 0;
    u.time_to_effect_ms = (i == 0).then_some(3.0);
    match start_ms {
        Some(s) => {
            u.row.start_unix_ns = 1_000_000_000 + (s * 1e6) as u64;
            u.row.wait_ns = ((s - due_ms).max(0.0) * 1e6) as u64;
            u.row.commit_ns = (commit_ms * 1e6) as u64;
            u.commit_ms = commit_ms;
        }
        None => {
            u.row.start_unix_ns = 0;
            u.row.error = Some("not run: the traffic phase ended first".into());
            u.commit_ms = 0.0;
            u.time_to_effect_ms = None;
        }
    }
    u
}

/// The updates of a trial at `rate` updates/s from 1 s on, over `span_s`, through an
/// update path whose every commit takes `commit_ms` (one at a time, late ones at once,
/// as the agent's schedule runs them).
fn simulated(rate: f64, span_s: f64, commit_ms: f64) -> EventsSummary {
    simulated_until(rate, span_s, commit_ms, span_s)
}

/// The same with the traffic ending `end_s` after the first update (updates not
/// started by then never run).
fn simulated_until(rate: f64, span_s: f64, commit_ms: f64, end_s: f64) -> EventsSummary {
    let mut s = planted_summary(1000);
    let n = (span_s * rate).floor() as u32 + 1;
    let mut free = 0.0_f64;
    s.updates = (0..n)
        .map(|i| {
            let due = 1000.0 + f64::from(i) * 1000.0 / rate;
            let start = due.max(free);
            if start > 1000.0 + end_s * 1000.0 {
                return update(i, due, None, commit_ms);
            }
            free = start + commit_ms;
            update(i, due, Some(start), commit_ms)
        })
        .collect();
    s
}

#[test]
fn latency_counts_the_wait_behind_earlier_updates_not_the_commit_alone() {
    // 20 updates/s through 60-ms commits: every commit is 60 ms, but each waits 10 ms
    // longer than the one before it: the 30th waits ~290 ms.
    let p = point(20.0, &simulated(20.0, 3.0, 60.0), &targets());
    assert_eq!(p.commit_ms.as_ref().unwrap().p99, 60.0);
    let l = p.latency_ms.as_ref().unwrap();
    assert!(l.p99 > 300.0, "{l:?}");
    assert!(!p.pass);
    assert!(
        p.why.as_deref().unwrap().contains("p99 latency"),
        "{:?}",
        p.why
    );
    // 10 updates/s through the same path: no wait, latency = commit.
    let p = point(10.0, &simulated(10.0, 3.0, 60.0), &targets());
    assert_eq!(p.latency_ms.as_ref().unwrap().p99, 60.0);
    assert!(p.pass, "{:?}", p.why);
    assert_eq!(p.committed, p.scheduled);
}

#[test]
fn an_update_that_never_ran_a_slow_effect_or_a_violation_misses() {
    let t = targets();
    let mut s = simulated(5.0, 2.0, 10.0);
    s.updates.push(update(99, 2900.0, None, 0.0));
    let p = point(5.0, &s, &t);
    assert!(!p.pass);
    assert!(
        p.why
            .as_deref()
            .unwrap()
            .starts_with("1 of 12 updates did not commit (not run"),
        "{:?}",
        p.why
    );
    let mut s = simulated(5.0, 2.0, 10.0);
    s.updates[0].time_to_effect_ms = Some(1500.0);
    let p = point(5.0, &s, &t);
    assert_eq!(
        p.why.as_deref(),
        Some("time to effect 1500.0 ms above 1000 ms")
    );
    let mut s = simulated(5.0, 2.0, 10.0);
    s.updates[3].violations = Some(Violations {
        passed: 7,
        window_ms: Some(1.0),
        from_ms: Some(0.5),
        probe_gap_ms: 0.1,
    });
    let p = point(5.0, &s, &t);
    assert_eq!(p.why.as_deref(), Some("7 must-drop packets passed"));
    assert_eq!(p.violations, 7);
    let p = point(5.0, &simulated(5.0, 2.0, 10.0), &t);
    assert!(p.pass && p.why.is_none());
}

/// A flow step's outcome carrying `events`.
fn step_with(events: EventsSummary) -> Outcome {
    let mut o = crate::outcome::tests::packet_step(2000.0, 8000, 8000, 4.0, 0);
    if let Some(crate::workloads::Figures::Packet(s)) = o.figures.as_mut() {
        s.events = Some(Box::new(events));
    }
    o
}

fn envelope_params(max_trials: u32) -> (TrialParams, SearchParams) {
    let p = crate::plan::build::test_envelope();
    let mut sp = p.search_params().cloned().unwrap();
    sp.max_trials = max_trials;
    (p, sp)
}

/// The search over an update path whose commits take 80 ms: it keeps up to 12.5
/// updates/s and no further; the envelope found lies within the precision below it.
#[test]
fn the_envelope_of_an_update_path_of_known_speed_is_found() {
    let (p, sp) = envelope_params(12);
    assert_eq!(sp.precision, 0.1);
    let mut rates = vec![];
    let r = envelope_search(&p, &sp, &mut |q| {
        let rate = q.events.as_ref().unwrap().rate.unwrap();
        rates.push(rate);
        Ok(step_with(simulated(rate, 3.0, 80.0)))
    })
    .unwrap();
    assert!(r.converged, "{:?}", r.doubts);
    let found = r.rate.unwrap();
    // Within 2 % above the limit, a 3-s step's queue cannot be told from the edge.
    assert!(
        (12.5 * 0.85..=12.5 * 1.02).contains(&found),
        "{found} ({rates:?})"
    );
    assert!(r.fail_rate.unwrap() > 12.5);
    assert_eq!(r.trials, rates.len());
    let o = Outcome::started("t0".into()).with_search(SearchSummary::Envelope(r.clone()));
    assert_eq!(o.status, Status::Ok);
    // The first step is the highest rate searched, and it missed.
    assert_eq!(rates[0], 100.0);
    // Its 3-s steps commit fewer than 100 updates each (at most 1 000 / 80 a second):
    // their "p99" is their maximum, and the text says so.
    let few = r
        .points
        .iter()
        .filter(|q| q.latency_ms.as_ref().is_some_and(|l| l.n < 100))
        .count();
    assert_eq!(few, r.points.len(), "{:?}", r.points);
    let text = crate::output::search::search_text(&p, &SearchSummary::Envelope(r.clone()));
    assert!(
        text.contains(&format!(
            "  (p99 of fewer than 100 updates is their maximum, by nearest rank: all {few} \
             steps)\n"
        )),
        "{text}"
    );
}

#[test]
fn out_of_trials_or_contradicting_steps_are_not_converged_and_flagged() {
    let (p, sp) = envelope_params(3);
    let r = envelope_search(&p, &sp, &mut |q| {
        let rate = q.events.as_ref().unwrap().rate.unwrap();
        Ok(step_with(simulated(rate, 3.0, 80.0)))
    })
    .unwrap();
    assert!(!r.converged);
    let o = Outcome::started("t0".into()).with_search(SearchSummary::Envelope(r));
    assert_eq!(o.status, Status::Flagged);
    assert!(o.error.unwrap().contains("out of trials"));
    // The update path slows down during the search: a rate held, then a lower one
    // misses (its confirmation, and the trials after it).
    let (p, sp) = envelope_params(12);
    let mut n = 0;
    let r = envelope_search(&p, &sp, &mut |q| {
        let rate = q.events.as_ref().unwrap().rate.unwrap();
        n += 1;
        let commit = if n <= 4 { 20.0 } else { 400.0 };
        Ok(step_with(simulated(rate, 3.0, commit)))
    })
    .unwrap();
    assert!(!r.converged, "{}", r.answer());
    assert!(
        r.doubts
            .iter()
            .any(|d| d.kind == results::DoubtKind::Contradiction),
        "{:?}",
        r.doubts
    );
}

#[test]
fn a_flagged_step_cannot_carry_the_answer() {
    let (p, sp) = envelope_params(12);
    let r = envelope_search(&p, &sp, &mut |q| {
        let rate = q.events.as_ref().unwrap().rate.unwrap();
        let mut o = step_with(simulated(rate, 3.0, 80.0));
        o.doubts.push(results::Doubt::new(
            results::DoubtKind::Overloaded,
            "the background lost 40 % before the update",
        ));
        Ok(o)
    })
    .unwrap();
    assert!(!r.converged);
    assert!(
        r.doubts[0]
            .why
            .starts_with("the trial that passed at the rate found was flagged: "),
        "{:?}",
        r.doubts
    );
}

/// A miss that decides the bracket cannot carry it flagged either. The background
/// empty before the marker update at every step: no time to effect is shown, every
/// step misses, and "not even the lowest rate kept the targets" rests on trials that
/// measured nothing — flagged, not `ok`. Steps above the path's limit overloaded: the
/// lowest of them bounds the envelope, flagged.
#[test]
fn a_flagged_miss_that_decides_the_bracket_flags_the_envelope() {
    let empty = results::Doubt::new(
        results::DoubtKind::EmptyWindow,
        "no background packet in the 50 ms before update 0",
    );
    let (p, sp) = envelope_params(12);
    let r = envelope_search(&p, &sp, &mut |q| {
        let rate = q.events.as_ref().unwrap().rate.unwrap();
        let mut s = simulated(rate, 3.0, 10.0);
        s.updates[0].time_to_effect_ms = None;
        s.updates[0].no_time_to_effect = None;
        s.updates[0].doubts.push(empty.clone());
        let mut o = step_with(s);
        o.doubts.push(empty.clone());
        Ok(o)
    })
    .unwrap();
    assert_eq!(
        (r.rate, r.fail_rate),
        (None, Some(MIN_UPDATE_RATE)),
        "{r:?}"
    );
    assert!(
        r.points[0]
            .why
            .as_deref()
            .unwrap()
            .starts_with("no time to effect shown (empty window: "),
        "{:?}",
        r.points[0]
    );
    assert!(!r.converged);
    let only = crate::search::only_doubt(&r.doubts);
    assert_eq!(
        only.why,
        format!(
            "no rate kept the targets, and {} of the trials that missed were flagged, the \
             lowest at 0.50 updates/s: empty window: no background packet in the 50 ms \
             before update 0",
            r.trials
        )
    );
    let o = Outcome::started("t0".into()).with_search(SearchSummary::Envelope(r));
    assert_eq!(o.status, Status::Flagged);

    let r = envelope_search(&p, &sp, &mut |q| {
        let rate = q.events.as_ref().unwrap().rate.unwrap();
        let o = step_with(simulated(rate, 3.0, 80.0));
        let missed = judge(rate, &o, &targets()).is_ok_and(|pt| !pt.pass);
        Ok(if missed {
            crate::search::ndr::tests::flagged(
                o,
                results::DoubtKind::Overloaded,
                "the background lost 40 % before the update",
            )
        } else {
            o
        })
    })
    .unwrap();
    assert!(r.rate.is_some() && !r.converged, "{r:?}");
    let only = crate::search::only_doubt(&r.doubts);
    assert_eq!(
        only.why,
        format!(
            "the trial that missed at the lowest rate that missed ({:.2} updates/s) was \
             flagged: overloaded: the background lost 40 % before the update",
            r.fail_rate.unwrap()
        )
    );
}

/// Bad input names what is wrong, before any trial runs.
#[test]
fn an_envelope_without_an_event_or_with_a_rate_of_its_own_is_refused() {
    let built = |pairs: &[(&str, &str)]| {
        let mut all = vec![("engine", "nft"), ("rate", "2kpps"), ("duration", "4s")];
        all.extend_from_slice(pairs);
        crate::plan::build::try_test_search(SearchKind::Envelope, &all)
    };
    let e = built(&[]).unwrap_err();
    assert!(e.contains("envelope searches the rate of an event"), "{e}");
    let e = built(&[("event", "add:1@1s"), ("event_rate", "5")]).unwrap_err();
    assert!(e.contains("envelope and event_rate"), "{e}");
    let e = built(&[("event", "add:1@3s")]).unwrap_err();
    assert!(e.contains("leaves 1.0 s of a 4 s trial"), "{e}");
    let e = built(&[("event", "add:1@1s"), ("max_update_rate", "5000")]).unwrap_err();
    assert!(e.contains("more than 10000"), "{e}");
    assert!(built(&[("event", "add:1@1s")]).is_ok());
}

/// A step's updates end a latency target before the traffic: 4-s trial, event at 1 s,
/// 100-ms target (at least 0.2 s), 10 updates/s: 29 due at 1.0 … 3.8 s, the traffic
/// ends at 4 s.
#[test]
fn a_steps_last_update_is_due_a_target_before_the_traffic_ends() {
    assert_eq!(updates_at(10.0, 3.0, 100.0), 29);
    // A long target is capped at half the span; a slow rate still gives two.
    assert_eq!(updates_at(10.0, 3.0, 5000.0), 16);
    assert_eq!(updates_at(0.5, 3.0, 100.0), 2);
}

/// 13 updates/s through 80-ms commits (the path commits 12.5/s): with a latency target
/// of 10 s and the traffic long enough for all, only the growing wait tells; at 12/s
/// it does not grow.
#[test]
fn a_path_falling_behind_misses_though_its_latency_stays_under_target() {
    let lax = Targets {
        latency_ms: 10_000.0,
        ..targets()
    };
    let p = point(13.0, &simulated_until(13.0, 3.0, 80.0, 10.0), &lax);
    assert_eq!(p.committed, p.scheduled);
    let g = p.wait_growth_ms.unwrap();
    assert!((100.0..130.0).contains(&g), "{g}");
    assert!(
        p.why
            .as_deref()
            .unwrap()
            .starts_with("the updates fell behind: their wait grew by"),
        "{:?}",
        p.why
    );
    let p = point(12.0, &simulated_until(12.0, 3.0, 80.0, 10.0), &lax);
    assert!(p.pass, "{:?}", p.why);
    assert_eq!(p.wait_growth_ms, Some(0.0));
}

/// The update carrying the marker ran but showed no time to effect: the effect target
/// has no evidence, and the step misses, saying why.
#[test]
fn a_marker_update_without_a_time_to_effect_misses() {
    let mut s = simulated(5.0, 2.0, 10.0);
    s.updates[0].time_to_effect_ms = None;
    s.updates[0].no_time_to_effect = Some("no packet of the marker changed fate".into());
    let p = point(5.0, &s, &targets());
    assert_eq!(
        p.why.as_deref(),
        Some("no time to effect shown (no packet of the marker changed fate)")
    );
}

/// A step above the path's limit leaves updates not run: its verdict says so, and the
/// trial's `update_failed` doubt is not repeated beside it as a flag; any other doubt
/// is.
#[test]
fn a_missed_steps_updates_not_run_are_its_verdict_not_a_flag() {
    let mut o = step_with(simulated_until(20.0, 3.0, 80.0, 1.0));
    o.judge_witness();
    assert!(o
        .doubts
        .iter()
        .any(|d| d.kind == results::DoubtKind::UpdateFailed));
    let pt = judge(20.0, &o, &targets()).unwrap();
    assert!(!pt.pass);
    assert!(
        pt.why.as_deref().unwrap().contains("did not commit"),
        "{:?}",
        pt.why
    );
    assert_eq!(pt.flagged, None);
    o.doubts.push(results::Doubt::new(
        results::DoubtKind::Overloaded,
        "the background lost 40 % before the update",
    ));
    assert!(judge(20.0, &o, &targets())
        .unwrap()
        .flagged
        .unwrap()
        .starts_with("overloaded: "));
}
