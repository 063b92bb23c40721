//! `--parallel auto`: the parallelism with the most sessions/s (seed 003 §8's "sweet
//! spot", found there by "a little tinkering"). Doubling from 1 until the rate has
//! fallen below the best for two steps (or the cap), then narrowing around the best by
//! trying midpoints. Every step is a stored sessions trial.
//!
//! Must not: run trials itself — the caller's runner does; the search is a pure value
//! (`next`/`record`) with table tests.

use crate::outcome::search::SweetPoint;
use crate::outcome::search::SweetSpotReport;
use crate::outcome::Outcome;
use crate::params::TrialParams;
// A step counts as below the best when under this share of it: the witness's rule.
use crate::search::witness::DROP;
use anyhow::{bail, Result};

/// Largest parallelism tried by default.
pub const MAX_AUTO_PARALLEL: u32 = 256;
/// Most trials a search runs.
const TRIALS: usize = 16;

/// The search state: points measured so far and what to try next.
#[derive(Debug, Clone)]
pub struct Search {
    max: u32,
    points: Vec<(u32, f64)>,
    /// Doubling (true) or narrowing around the best (false).
    doubling: bool,
    below: u32,
    max_trials: usize,
    /// It stopped on `max_trials` with a parallelism still to measure that could hide a
    /// higher rate ([`Search::gap_matters`]).
    out_of_trials: bool,
}

impl Search {
    pub fn new(max: u32, max_trials: usize) -> Search {
        Search {
            max: max.max(1),
            points: vec![],
            doubling: true,
            below: 0,
            max_trials,
            out_of_trials: false,
        }
    }

    pub fn best(&self) -> Option<(u32, f64)> {
        self.points
            .iter()
            .copied()
            .fold(None, |b: Option<(u32, f64)>, p| match b {
                Some(b) if b.1 >= p.1 => Some(b),
                _ => Some(p),
            })
    }

    fn tried(&self, p: u32) -> bool {
        self.points.iter().any(|q| q.0 == p)
    }

    /// The next parallelism to measure, or None when done (or out of trials:
    /// [`Search::out_of_trials`]).
    pub fn next_point(&mut self) -> Option<u32> {
        let next = self.untried();
        if next.is_some() && self.points.len() >= self.max_trials {
            self.out_of_trials = self.gap_matters();
            return None;
        }
        next
    }

    /// Whether the parallelisms left untried could hide a higher rate than the best:
    /// still doubling (those above were never measured), or an untried parallelism lies
    /// between the best and a measured neighbour of it below the plateau. Gaps only
    /// between the best and neighbours on the plateau do not count: the search does not
    /// tell the plateau's parallelisms apart anyway.
    fn gap_matters(&self) -> bool {
        let Some((b, rate)) = self.best() else {
            return false;
        };
        if self.doubling {
            return true;
        }
        let pts = self.points();
        let Some(i) = pts.iter().position(|p| p.0 == b) else {
            return false;
        };
        let lower = i.checked_sub(1).map(|j| pts[j]);
        let upper = pts.get(i + 1).copied();
        [lower, upper]
            .into_iter()
            .flatten()
            .any(|(n, r)| n.abs_diff(b) > 1 && r < rate * DROP)
    }

    /// Whether it stopped on its trial budget before it was done, with parallelisms left
    /// untried that could hide a higher rate ([`Search::gap_matters`]).
    pub fn out_of_trials(&self) -> bool {
        self.out_of_trials
    }

    /// The next parallelism the search would measure, its budget aside.
    fn untried(&mut self) -> Option<u32> {
        let last = self.points.last().map(|p| p.0);
        if self.doubling {
            match last {
                None => return Some(1),
                Some(l) if self.below < 2 && l < self.max => {
                    return Some((l * 2).min(self.max));
                }
                _ => self.doubling = false,
            }
        }
        // Narrow: the untried midpoints between the best and its measured neighbours.
        let (b, _) = self.best()?;
        let mut xs: Vec<u32> = self.points.iter().map(|p| p.0).collect();
        xs.sort_unstable();
        let i = xs.iter().position(|&x| x == b)?;
        let lower = i.checked_sub(1).map(|j| xs[j]);
        let upper = xs.get(i + 1).copied();
        [upper, lower]
            .into_iter()
            .flatten()
            .map(|n| (b + n) / 2)
            .find(|&m| m != b && !self.tried(m))
    }

    pub fn record(&mut self, parallel: u32, rate: f64) {
        let best = self.best().map(|b| b.1).unwrap_or(0.0);
        if self.doubling {
            if rate < best * DROP {
                self.below += 1;
            } else {
                self.below = 0;
            }
        }
        self.points.push((parallel, rate));
    }

    /// The points measured, in the order measured.
    pub fn measured(&self) -> &[(u32, f64)] {
        &self.points
    }

    pub fn points(&self) -> Vec<(u32, f64)> {
        let mut v = self.points.clone();
        v.sort_by_key(|p| p.0);
        v
    }
}

/// Run the search with `run` measuring one sessions trial at a given parallelism.
pub fn search(
    p: &TrialParams,
    run: &mut dyn FnMut(&TrialParams) -> Result<Outcome>,
) -> Result<SweetSpotReport> {
    let mut s = Search::new(MAX_AUTO_PARALLEL, TRIALS);
    let mut measured: Vec<SweetPoint> = vec![];
    let mut latency = vec![];
    // Each step's own doubts (failed sessions …), for the step that carries the answer.
    let mut flagged: Vec<(u32, Vec<results::Doubt>)> = vec![];
    while let Some(n) = s.next_point() {
        let mut q = crate::search::step_params(p);
        if let Some(k) = q.kind.conn_mut() {
            k.parallel = n;
        }
        let o = run(&q)?;
        let Some(c) = o.conn().filter(|_| o.status.measured()) else {
            bail!(
                "sessions at parallelism {n} failed: {}",
                o.error.as_deref().unwrap_or("no results")
            );
        };
        let Some(rate) = c.sessions_per_s else {
            bail!("sessions at parallelism {n} stated no sessions/s");
        };
        eprintln!(
            "    parallel {n:>4}: {rate:.0} sessions/s, latency {:.3} ms{}",
            c.session.mean_ns / 1e6,
            if c.failed > 0 {
                format!(", {} failed", c.failed)
            } else {
                String::new()
            }
        );
        s.record(n, rate);
        latency.push((n, c.session.mean_ns / 1e9));
        measured.push(SweetPoint {
            parallel: n,
            sessions_per_s: rate,
            failed: c.failed,
        });
        flagged.push((n, o.doubts.clone()));
    }
    let Some((best, rate)) = s.best() else {
        bail!("the sweet-spot search measured nothing");
    };
    measured.sort_by_key(|m| m.parallel);
    let budget = s.out_of_trials().then_some(TRIALS);
    let mut doubts = crate::search::witness::sweet_spot_doubts(s.measured(), (best, rate), budget);
    // The best step's own trial flagged (sessions that failed: its rate counts only those
    // that completed): the answer is no better than it.
    if let Some((_, ds)) = flagged.iter().find(|(n, ds)| *n == best && !ds.is_empty()) {
        let why: Vec<String> = ds.iter().map(results::Doubt::to_string).collect();
        doubts.push(results::Doubt::new(
            ds[0].kind,
            format!(
                "the step at {best} parallel that carries the answer was flagged: {}",
                why.join("; ")
            ),
        ));
    }
    Ok(SweetSpotReport {
        best_parallel: best,
        best_sessions_per_s: rate,
        latency_at_best_s: latency
            .iter()
            .find(|l| l.0 == best)
            .map(|l| l.1)
            .unwrap_or(0.0),
        plateau: s
            .points()
            .iter()
            .filter(|q| q.1 >= rate * DROP)
            .map(|q| q.0)
            .collect(),
        trials: measured.len(),
        points: measured,
        converged: budget.is_none(),
        doubts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(rate: impl Fn(u32) -> f64, max: u32) -> (Search, Vec<u32>) {
        let mut s = Search::new(max, 16);
        let mut tried = vec![];
        while let Some(n) = s.next_point() {
            tried.push(n);
            s.record(n, rate(n));
            assert!(tried.len() <= 16);
        }
        (s, tried)
    }

    #[test]
    fn finds_a_peak_between_powers_of_two() {
        // Peak at 6 (the study's null-firewall sweet spot), falling off on both sides.
        let (s, tried) = drive(|n| 1000.0 - (n as f64 - 6.0).powi(2) * 10.0, 256);
        assert_eq!(&tried[..5], &[1, 2, 4, 8, 16]);
        assert_eq!(s.best().unwrap().0, 6, "{tried:?}");
        assert!(tried.contains(&6) && tried.contains(&5) || tried.contains(&7));
    }

    #[test]
    fn rising_rate_stops_at_the_cap() {
        let (s, tried) = drive(|n| n as f64, 64);
        assert_eq!(&tried[..7], &[1, 2, 4, 8, 16, 32, 64]);
        assert!(tried[7..].iter().all(|&n| n > 32 && n < 64), "{tried:?}");
        assert_eq!(s.best().unwrap().0, 64);
    }

    #[test]
    fn a_plateau_stops_doubling_only_after_two_drops() {
        // Flat up to 16, then falling: 32 and 64 are below, the search stops doubling.
        let (s, tried) = drive(|n| if n <= 16 { 100.0 } else { 50.0 }, 1024);
        assert!(!tried.contains(&128), "{tried:?}");
        assert!(tried.contains(&64));
        assert_eq!(s.best().unwrap().1, 100.0);
    }

    #[test]
    fn sequential_is_best_when_parallelism_only_hurts() {
        let (s, tried) = drive(|n| 100.0 / n as f64, 256);
        assert_eq!(&tried[..3], &[1, 2, 4]);
        assert_eq!(s.best().unwrap().0, 1);
        assert!(tried.len() <= 5, "{tried:?}");
    }

    #[test]
    fn a_search_out_of_trials_says_so() {
        let mut s = Search::new(256, 3);
        let mut tried = vec![];
        while let Some(n) = s.next_point() {
            tried.push(n);
            s.record(n, n as f64);
        }
        assert_eq!(tried, [1, 2, 4]);
        assert!(s.out_of_trials());
        // Done within its budget: not out of trials.
        let (s, tried) = drive(|n| 100.0 / n as f64, 256);
        assert!(!s.out_of_trials(), "{tried:?}");
        // Its doubt: not converged, the best so far named.
        let d = crate::search::witness::sweet_spot_doubts(
            &[(1, 10.0), (2, 20.0), (4, 15.0)],
            (2, 20.0),
            Some(3),
        );
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, results::DoubtKind::NotConverged);
        assert_eq!(
            d[0].why,
            "out of trials: the search stopped after its 3 trials before it was done (best \
             so far: 2 parallel, 20 sessions/s): the sweet spot may lie at a parallelism it \
             did not measure"
        );
    }

    /// Seed 003: a plateau from 16 to 256 peaking at 40, within 3 % throughout. The
    /// doubling to 256 and the narrowing to ±1 around 40 take more than 16 trials, but
    /// what is left untried lies between the best and neighbours on the plateau: the
    /// answer stands (converged, no doubt). A best whose neighbour below the plateau
    /// leaves a gap untried is still out of trials.
    #[test]
    fn untried_parallelisms_on_the_plateau_are_not_out_of_trials() {
        let plateau = |n: u32| {
            if n < 16 {
                n as f64 * 5.0
            } else {
                100.0 - (n as f64 - 40.0).abs() * 0.01
            }
        };
        let (s, tried) = drive(plateau, 256);
        assert_eq!(tried.len(), 16, "{tried:?}");
        assert_eq!(s.best().unwrap().0, 40, "{tried:?}");
        assert!(!tried.contains(&39), "{tried:?}");
        assert!(!s.out_of_trials(), "{tried:?}");
        // 16 trials where 13 would do, the gap below 28's neighbour (24, off the
        // plateau) untried: out of trials.
        let peak = |n: u32| 1000.0 - (n as f64 - 30.0).powi(2) * 10.0;
        let mut s = Search::new(256, 9);
        while let Some(n) = s.next_point() {
            s.record(n, peak(n));
        }
        assert!(s.out_of_trials(), "{:?}", s.points());
    }

    /// A plateau that runs to the largest parallelism searched (the rate there within
    /// 3 % of the step measured before it) is no rate still rising: no doubt. A rate
    /// that still rose there is flagged.
    #[test]
    fn a_plateau_that_runs_to_the_largest_is_no_lower_bound() {
        let flat = |n: u32| {
            if n < 16 {
                n as f64 * 5.0
            } else {
                100.0 + n as f64 * 0.001
            }
        };
        let (s, tried) = drive(flat, 256);
        let best = s.best().unwrap();
        assert_eq!(best.0, 256, "{tried:?}");
        let d = crate::search::witness::sweet_spot_doubts(s.measured(), best, None);
        assert!(d.is_empty(), "{d:?}");
        let (s, _) = drive(|n| n as f64, 256);
        let d = crate::search::witness::sweet_spot_doubts(s.measured(), s.best().unwrap(), None);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, results::DoubtKind::LimitedByFwbench);
    }

    /// A sessions step at parallelism `n` with `rate(n)` sessions/s.
    fn sessions(q: &TrialParams, rate: &dyn Fn(u32) -> f64) -> Result<Outcome> {
        sessions_failing(q, rate, 0)
    }

    /// [`sessions`] whose step at parallelism 6 had `failed` sessions fail (judged as
    /// the trial driver judges it: flagged with its doubt).
    fn sessions_failing(
        q: &TrialParams,
        rate: &dyn Fn(u32) -> f64,
        failed: u64,
    ) -> Result<Outcome> {
        let n = q.conn().map(|k| k.parallel).unwrap_or(0);
        let failed = if n == 6 { failed } else { 0 };
        let d = serde_json::to_value(proto::Durations::default())?;
        let j = serde_json::json!({
            "status": "ok", "error": null, "started_at": "t0", "finished_at": "t1",
            "conn": {
                "mode": "sessions", "parallel": n, "sessions": rate(n) as u64,
                "failed": failed, "corrupt": 0,
                "errors": if failed > 0 { vec![("read: timed out".to_string(), failed)] } else { vec![] },
                "elapsed_s": 1.0, "sessions_per_s": rate(n),
                "bytes": 0, "goodput_bps": 0.0, "session": d, "connect": d, "ttfb": d,
                "ttlb": d, "session_us": [],
                "server": proto::TcpServerResults::default()
            }
        });
        let mut o = Outcome::from_stored_step(&j)?;
        o.judge_witness();
        Ok(o)
    }

    /// The sweet spot of a rate still rising at the largest parallelism searched is no
    /// peak: flagged as a lower bound, never `ok`. A peak inside the range is `ok`.
    #[test]
    fn a_best_at_the_largest_parallelism_is_no_peak() {
        use crate::outcome::search::SearchSummary;
        let p = crate::plan::build::test_params(crate::params::workload::Workload::Sessions, &[]);
        let judged = |rate: &dyn Fn(u32) -> f64| {
            let r = search(&p, &mut |q| sessions(q, rate)).unwrap();
            let s = SearchSummary::SweetSpot(r.clone());
            (r, Outcome::started("t0".into()).with_search(s))
        };
        let (r, o) = judged(&|n| n as f64);
        assert_eq!(r.best_parallel, MAX_AUTO_PARALLEL);
        assert_eq!(o.status, results::Status::Flagged, "{:?}", r.doubts);
        let only = crate::search::only_doubt(&r.doubts);
        assert_eq!(only.kind, results::DoubtKind::LimitedByFwbench);
        assert_eq!(
            only.why,
            "the most sessions/s (256) came at the largest parallelism searched, 256: the \
             rate had not fallen after it, so no peak was found — the sweet spot may lie \
             above it, and its rate is a lower bound"
        );
        let (r, o) = judged(&|n| 1000.0 - (n as f64 - 6.0).powi(2) * 10.0);
        assert_eq!(r.best_parallel, 6);
        assert!(r.converged && r.doubts.is_empty(), "{:?}", r.doubts);
        assert_eq!(o.status, results::Status::Ok);
    }

    /// Steps whose sessions failed keep their figures (the search reads them, and the
    /// report lists "N failed at P parallel"), but a best whose own step failed sessions
    /// is no better than that step: flagged with its doubt, never `ok`.
    #[test]
    fn a_best_step_with_failed_sessions_flags_the_answer() {
        use crate::outcome::search::SearchSummary;
        let p = crate::plan::build::test_params(crate::params::workload::Workload::Sessions, &[]);
        let peak = |n: u32| 1000.0 - (n as f64 - 6.0).powi(2) * 10.0;
        let r = search(&p, &mut |q| sessions_failing(q, &peak, 2)).unwrap();
        assert_eq!(r.best_parallel, 6);
        let failing = r.points.iter().find(|x| x.parallel == 6).unwrap();
        assert_eq!((failing.failed, failing.sessions_per_s), (2, 1000.0));
        let only = crate::search::only_doubt(&r.doubts);
        assert_eq!(only.kind, results::DoubtKind::UnexpectedLoss);
        assert!(
            only.why.starts_with(
                "the step at 6 parallel that carries the answer was flagged: unexpected \
                 loss: 2 of 1002 sessions failed (2 × read: timed out)"
            ),
            "{}",
            only.why
        );
        let o = Outcome::started("t0".into()).with_search(SearchSummary::SweetSpot(r));
        assert_eq!(o.status, results::Status::Flagged);
    }
}
