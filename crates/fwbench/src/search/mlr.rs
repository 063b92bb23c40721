//! MLRsearch (FD.io CSIT; IETF draft "Multiple Loss Ratio Search"): the highest
//! offered rates whose loss stays within each of several goal loss ratios (e.g. 0 %,
//! the no-drop rate NDR, and 0.5 %, a partial-drop rate PDR), found in one search.
//!
//! A pure state machine like [`super::bisect::Bisect`]: it says which rate to try for
//! how long ([`MlrStep::Trial`]), the caller runs the trial and reports its loss ratio
//! ([`Mlr::record`]); no clock, no traffic. Table-tested against a simulated gateway.
//!
//! How it saves trial time (after CSIT's MLRsearch):
//! * **Phases.** Trials start short (`initial_duration_s`) and wide (the goal width
//!   doubled once per phase left); each phase doubles the precision and lengthens the
//!   trials geometrically, and only the last phase runs trials of `final_duration_s`.
//! * **Bounds carry over.** Every trial informs every goal: a loss ratio above a goal
//!   makes the rate an upper bound for it (a longer trial would not lose less); at or
//!   below, a lower bound — valid only for trials at least as long, so a phase
//!   re-measures a shorter phase's lower bound first, which usually passes again and
//!   leaves one or two bisection steps per goal.
//! * **First guess from the forwarding rate.** The first trial is at the maximum rate;
//!   when it loses, the next is just under the rate it *forwarded* (what a policer or a
//!   saturated gateway let through), which lands next to the answer at once.
//! * **External search.** Without a lower (upper) bound at the current duration, the
//!   rate steps down (up) from the known bound by the phase's width, the step growing
//!   by `expansion` each time, until the bound is found.
//!
//! The RFC 2544 bisection (`bisect`) stays for comparison: `tests::mlr_vs_bisection`
//! prints the trial time each needs for the same precision.

use serde::Serialize;

/// What the search looks for.
#[derive(Debug, Clone, PartialEq)]
pub struct MlrConfig {
    /// Lowest rate worth trying, packets/s (a goal failing here has no lower bound).
    pub min_pps: f64,
    /// Highest rate the sender offers, packets/s.
    pub max_pps: f64,
    /// Goal loss ratios, each in [0, 1): 0.0 is NDR, 0.005 a PDR at 0.5 %.
    pub loss_ratios: Vec<f64>,
    /// Duration of the trials that decide the result, seconds (RFC 2544: 60).
    pub final_duration_s: f64,
    /// Duration of the first phase's trials, seconds.
    pub initial_duration_s: f64,
    /// Relative width of the final bracket: (upper − lower) ≤ width · upper.
    pub width: f64,
    /// Phases before the final one (each halves the width and lengthens trials).
    pub intermediate_phases: u32,
    /// Growth of the external search's step.
    pub expansion: f64,
}

impl MlrConfig {
    /// CSIT-like defaults for `loss_ratios` between `min_pps` and `max_pps`: 1-s
    /// trials first, two intermediate phases, final trials of `final_duration_s`,
    /// 0.5 % precision.
    pub fn new(min_pps: f64, max_pps: f64, loss_ratios: Vec<f64>, final_duration_s: f64) -> Self {
        MlrConfig {
            min_pps,
            max_pps,
            loss_ratios,
            final_duration_s,
            initial_duration_s: 1.0_f64.min(final_duration_s),
            width: 0.005,
            intermediate_phases: 2,
            expansion: 2.0,
        }
    }

    /// Why the configuration cannot be searched, naming the field.
    pub fn check(&self) -> Result<(), String> {
        if !(self.min_pps > 0.0 && self.min_pps < self.max_pps && self.max_pps.is_finite()) {
            return Err(format!(
                "rates: need 0 < min ({}) < max ({}) packets/s",
                self.min_pps, self.max_pps
            ));
        }
        if self.loss_ratios.is_empty() {
            return Err("loss ratios: at least one goal loss ratio is needed".into());
        }
        if let Some(r) = self.loss_ratios.iter().find(|r| !(0.0..1.0).contains(*r)) {
            return Err(format!("loss ratio {r} is not in [0, 1)"));
        }
        if !(self.initial_duration_s > 0.0 && self.initial_duration_s <= self.final_duration_s) {
            return Err(format!(
                "durations: need 0 < initial ({} s) ≤ final ({} s)",
                self.initial_duration_s, self.final_duration_s
            ));
        }
        if !(self.width > 0.0 && self.width < 1.0) {
            return Err(format!("width {} is not in (0, 1)", self.width));
        }
        if self.expansion.is_nan() || self.expansion < 1.0 {
            return Err(format!("expansion {} is below 1", self.expansion));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum MlrStep {
    /// Offer `pps` for `duration_s` seconds, then call [`Mlr::record`].
    Trial {
        pps: f64,
        duration_s: f64,
    },
    Done(Vec<MlrGoalResult>),
}

/// One goal's answer, from final-duration trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MlrGoalResult {
    pub loss_ratio: f64,
    /// Highest rate that kept within the loss ratio in a final-duration trial (`None`:
    /// not even `min_pps` did).
    pub lower_pps: Option<f64>,
    /// Lowest rate that exceeded it (`None`: `max_pps` did not).
    pub upper_pps: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Measured {
    pps: f64,
    duration_s: f64,
    loss_ratio: f64,
}

/// The search: call [`Mlr::next_step`], run the trial, [`Mlr::record`] its loss ratio,
/// until `Done`.
#[derive(Debug, Clone)]
pub struct Mlr {
    cfg: MlrConfig,
    trials: Vec<Measured>,
    phase: u32,
    pending: Option<(f64, f64)>,
    /// Consecutive external-search steps of the current goal (the step grows with it).
    expand: i32,
}

impl Mlr {
    /// A search for `cfg`; the goals are searched from the strictest loss ratio up.
    pub fn new(mut cfg: MlrConfig) -> Result<Mlr, String> {
        cfg.check()?;
        cfg.loss_ratios.sort_by(f64::total_cmp);
        cfg.loss_ratios.dedup();
        Ok(Mlr {
            cfg,
            trials: vec![],
            phase: 0,
            pending: None,
            expand: 0,
        })
    }

    fn phases(&self) -> u32 {
        self.cfg.intermediate_phases + 1
    }

    /// Trial duration of phase `p` (geometric from initial to final).
    fn duration(&self, p: u32) -> f64 {
        let last = self.phases() - 1;
        if p >= last {
            return self.cfg.final_duration_s;
        }
        let f = p as f64 / last as f64;
        self.cfg.initial_duration_s
            * (self.cfg.final_duration_s / self.cfg.initial_duration_s).powf(f)
    }

    /// Width of phase `p`: the goal width, doubled per phase left.
    fn width(&self, p: u32) -> f64 {
        let left = self.phases() - 1 - p.min(self.phases() - 1);
        (self.cfg.width * 2f64.powi(left as i32)).min(0.5)
    }

    /// Trial time asked for so far, seconds.
    pub fn trial_time_s(&self) -> f64 {
        self.trials.iter().map(|t| t.duration_s).sum()
    }

    /// Trials recorded so far.
    pub fn trials(&self) -> usize {
        self.trials.len()
    }

    /// (lower, upper) of goal `ratio` for trials of at least `duration` seconds: the
    /// lowest rate that lost more (any duration: a longer trial would not lose less)
    /// and the highest below it that kept within the ratio at that duration.
    fn bounds(&self, ratio: f64, duration: f64) -> (Option<f64>, Option<f64>) {
        let long = |t: &&Measured| t.duration_s >= duration * 0.999;
        let passes_at_or_above = |x: f64| {
            self.trials
                .iter()
                .filter(long)
                .any(|p| p.loss_ratio <= ratio && p.pps >= x)
        };
        // A trial as long that lost is an upper bound; a shorter one too (a longer
        // trial would not lose less), unless a trial as long passed at or above it.
        let upper = self
            .trials
            .iter()
            .filter(|t| t.loss_ratio > ratio)
            .filter(|t| long(t) || !passes_at_or_above(t.pps))
            .map(|t| t.pps)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))));
        let lower = self
            .trials
            .iter()
            .filter(long)
            .filter(|t| t.loss_ratio <= ratio)
            .map(|t| t.pps)
            .filter(|x| upper.is_none_or(|u| *x < u))
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        (lower, upper)
    }

    /// Lower bound of `ratio` from any shorter trial below `upper` (a candidate to
    /// re-measure at the current duration).
    fn stale_lower(&self, ratio: f64, upper: Option<f64>) -> Option<f64> {
        self.trials
            .iter()
            .filter(|t| t.loss_ratio <= ratio)
            .map(|t| t.pps)
            .filter(|x| upper.is_none_or(|u| *x < u))
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    }

    /// Whether a trial at `pps` of at least `duration` exists.
    fn tried(&self, pps: f64, duration: f64) -> bool {
        self.trials
            .iter()
            .any(|t| (t.pps - pps).abs() <= 1e-9 * pps && t.duration_s >= duration * 0.999)
    }

    pub fn next_step(&mut self) -> MlrStep {
        let s = self.step();
        if let MlrStep::Trial { pps, duration_s } = s {
            self.pending = Some((pps, duration_s));
        }
        s
    }

    fn step(&mut self) -> MlrStep {
        loop {
            let d = self.duration(self.phase);
            let w = self.width(self.phase);
            let ratios = self.cfg.loss_ratios.clone();
            for ratio in ratios {
                if let Some(pps) = self.goal_step(ratio, d, w) {
                    return MlrStep::Trial { pps, duration_s: d };
                }
            }
            if self.phase + 1 >= self.phases() {
                return MlrStep::Done(self.results());
            }
            self.phase += 1;
            self.expand = 0;
        }
    }

    /// The next rate goal `ratio` needs at duration `d` and width `w`, or `None` when it
    /// is narrow enough there.
    fn goal_step(&mut self, ratio: f64, d: f64, w: f64) -> Option<f64> {
        let (min, max) = (self.cfg.min_pps, self.cfg.max_pps);
        let (lower, upper) = self.bounds(ratio, d);
        let pick = |x: f64| x.clamp(min, max);
        match (lower, upper) {
            (Some(l), Some(u)) => {
                // (with a margin for rounding: u·(1 − w) must count as narrow)
                if u - l <= w * u * (1.0 + 1e-9) {
                    return None;
                }
                self.expand = 0;
                // Bisect; within twice the width, try just under the upper bound:
                // whether it passes or fails, the bracket is then narrow enough.
                let x = if u - l <= 2.0 * w * u {
                    u * (1.0 - w)
                } else {
                    (l + u) / 2.0
                };
                Some(pick(x))
            }
            (Some(l), None) => {
                if l >= max {
                    return None; // passes at the maximum rate
                }
                let step = w * self.cfg.expansion.powi(self.expand);
                self.expand += 1;
                Some(pick(l * (1.0 + step)).max(l.next_up()))
            }
            (None, Some(u)) => {
                if u <= min {
                    return None; // fails even at the minimum rate
                }
                // Re-measure a shorter trial's lower bound first.
                if let Some(s) = self.stale_lower(ratio, Some(u)) {
                    if !self.tried(s, d) {
                        return Some(s);
                    }
                }
                let step = w * self.cfg.expansion.powi(self.expand);
                self.expand += 1;
                // First step down from a losing trial: just under what it forwarded.
                let forwarded = self
                    .trials
                    .iter()
                    .filter(|t| t.pps == u)
                    .map(|t| t.pps * (1.0 - t.loss_ratio))
                    .fold(u, f64::min);
                let guess = if self.expand == 1 && forwarded < u * (1.0 - step) {
                    forwarded * (1.0 - w / 2.0)
                } else {
                    u * (1.0 - step)
                };
                let x = pick(guess);
                if self.tried(x, d) {
                    // Already measured here (it failed): the floor is the answer.
                    return if x <= min {
                        None
                    } else {
                        Some(pick(min.max(x * (1.0 - step))))
                    };
                }
                Some(x)
            }
            (None, None) => Some(max),
        }
    }

    /// Record the loss ratio of the trial last returned by `next_step`.
    pub fn record(&mut self, loss_ratio: f64) {
        let Some((pps, duration_s)) = self.pending.take() else {
            return;
        };
        let loss_ratio = if loss_ratio.is_finite() {
            loss_ratio.clamp(0.0, 1.0)
        } else {
            1.0
        };
        self.trials.push(Measured {
            pps,
            duration_s,
            loss_ratio,
        });
    }

    /// Each goal's bounds from final-duration trials so far (the answer once `Done`).
    pub fn results(&self) -> Vec<MlrGoalResult> {
        let d = self.cfg.final_duration_s;
        self.cfg
            .loss_ratios
            .iter()
            .map(|&ratio| {
                let (lower, upper) = self.bounds(ratio, d);
                MlrGoalResult {
                    loss_ratio: ratio,
                    lower_pps: lower,
                    upper_pps: upper,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::bisect::{Bisect, Step, Width};

    /// A gateway policing at `rate` pps with a bucket of `burst` packets: a trial of
    /// `d` seconds at `x` pps loses what exceeds rate·d + burst. Short trials thus lose
    /// less than long ones (the burst hides the excess), as real buffers do.
    fn policer(rate: f64, burst: f64) -> impl Fn(f64, f64) -> f64 {
        move |x, d| {
            let sent = x * d;
            let passed = (rate * d + burst).min(sent);
            (sent - passed) / sent
        }
    }

    fn run(cfg: MlrConfig, gw: impl Fn(f64, f64) -> f64) -> (Vec<MlrGoalResult>, Mlr) {
        let mut m = Mlr::new(cfg).unwrap();
        for _ in 0..200 {
            match m.next_step() {
                MlrStep::Done(r) => return (r, m),
                MlrStep::Trial { pps, duration_s } => {
                    assert!(pps > 0.0 && duration_s > 0.0);
                    m.record(gw(pps, duration_s));
                }
            }
        }
        panic!("no convergence in 200 trials: {:?}", m.trials);
    }

    /// The rate at which a final-duration trial just keeps within `ratio`.
    fn truth(rate: f64, burst: f64, d: f64, ratio: f64) -> f64 {
        // (x·d − rate·d − burst) / (x·d) = ratio  ⇔  x = (rate·d + burst) / (d·(1 − ratio))
        (rate * d + burst) / (d * (1.0 - ratio))
    }

    #[test]
    fn converges_on_a_policer_within_its_precision() {
        for (rate, burst) in [(100_000.0, 0.0), (123_456.0, 5_000.0), (9_000.0, 200.0)] {
            let cfg = MlrConfig::new(1_000.0, 1_000_000.0, vec![0.0, 0.005], 60.0);
            let w = cfg.width;
            let (res, m) = run(cfg, policer(rate, burst));
            for g in &res {
                let t = truth(rate, burst, 60.0, g.loss_ratio);
                let (l, u) = (g.lower_pps.unwrap(), g.upper_pps.unwrap());
                assert!(l <= t && t < u, "{g:?} around {t}");
                assert!(u - l <= w * u + 1e-6, "{g:?} wider than {w}");
            }
            // Results come from final-duration trials only.
            assert!(m.trials.iter().any(|t| t.duration_s == 60.0));
        }
    }

    #[test]
    fn short_trials_first_long_ones_only_at_the_end() {
        let (_, m) = run(
            MlrConfig::new(1_000.0, 1_000_000.0, vec![0.0, 0.005], 60.0),
            policer(250_000.0, 1_000.0),
        );
        let d: Vec<f64> = m.trials.iter().map(|t| t.duration_s).collect();
        assert_eq!(d[0], 1.0, "{d:?}");
        assert!(
            d.windows(2).all(|w| w[0] <= w[1]),
            "durations never shrink: {d:?}"
        );
        let long = d.iter().filter(|x| **x == 60.0).count();
        assert!(long <= 6, "few final-duration trials: {d:?}");
    }

    #[test]
    fn ends_at_the_edges() {
        // Nothing loses: both goals pass at the maximum.
        let (res, _) = run(
            MlrConfig::new(1_000.0, 50_000.0, vec![0.0, 0.01], 10.0),
            |_, _| 0.0,
        );
        for g in res {
            assert_eq!(g.lower_pps, Some(50_000.0));
            assert_eq!(g.upper_pps, None);
        }
        // Everything loses 50 %: no goal passes, even at the minimum.
        let (res, m) = run(
            MlrConfig::new(1_000.0, 50_000.0, vec![0.0, 0.01], 10.0),
            |_, _| 0.5,
        );
        for g in res {
            assert_eq!(g.lower_pps, None, "{g:?}");
            assert_eq!(g.upper_pps, Some(1_000.0));
        }
        assert!(m.trials() < 40, "{}", m.trials());
    }

    #[test]
    fn bad_configurations_are_named() {
        let ok = MlrConfig::new(1.0, 10.0, vec![0.0], 10.0);
        assert!(Mlr::new(ok.clone()).is_ok());
        let e = Mlr::new(MlrConfig {
            min_pps: 20.0,
            ..ok.clone()
        })
        .unwrap_err();
        assert!(e.contains("rates"), "{e}");
        let e = Mlr::new(MlrConfig {
            loss_ratios: vec![1.5],
            ..ok.clone()
        })
        .unwrap_err();
        assert!(e.contains("loss ratio 1.5"), "{e}");
        let e = Mlr::new(MlrConfig {
            initial_duration_s: 30.0,
            ..ok.clone()
        })
        .unwrap_err();
        assert!(e.contains("durations"), "{e}");
        let e = Mlr::new(MlrConfig { width: 0.0, ..ok }).unwrap_err();
        assert!(e.contains("width"), "{e}");
    }

    /// RFC 2544: one bisection per loss ratio, every trial at the final duration.
    fn bisection_time(
        gw: &impl Fn(f64, f64) -> f64,
        ratios: &[f64],
        min: f64,
        max: f64,
        width: f64,
        d: f64,
    ) -> (f64, Vec<(f64, f64)>) {
        let mut time = 0.0;
        let mut found = vec![];
        for &ratio in ratios {
            let mut b = Bisect::new(min, max, false, Width::Relative(width, min));
            loop {
                match b.next_step() {
                    Step::Try(x) => {
                        time += d;
                        b.record(gw(x, d) <= ratio);
                    }
                    Step::Done(f) => {
                        found.push((f.pass.unwrap_or(0.0), f.fail.unwrap_or(f64::INFINITY)));
                        break;
                    }
                }
            }
        }
        (time, found)
    }

    #[test]
    fn mlr_vs_bisection() {
        // Same goals, same precision, same final trial duration.
        let (min, max, width, d) = (1_000.0, 10_000_000.0, 0.005, 60.0);
        let ratios = [0.0, 0.005];
        println!("gateway (policer pps, burst)   MLRsearch trials/time   RFC 2544 bisection trials/time   ratio");
        for (rate, burst) in [
            (500_000.0, 0.0),
            (1_234_567.0, 20_000.0),
            (80_000.0, 2_000.0),
        ] {
            let gw = policer(rate, burst);
            let mut cfg = MlrConfig::new(min, max, ratios.to_vec(), d);
            cfg.width = width;
            let (res, m) = run(cfg, &gw);
            let (bis_time, bis) = bisection_time(&gw, &ratios, min, max, width, d);
            for (g, (l, u)) in res.iter().zip(&bis) {
                let t = truth(rate, burst, d, g.loss_ratio);
                assert!(*l <= t && t < *u, "bisection {l}..{u} around {t}");
                assert!(g.lower_pps.unwrap() <= t && t < g.upper_pps.unwrap());
            }
            println!(
                "({rate:>9}, {burst:>6})   {:>3} trials {:>6.0} s   {:>3} trials {:>6.0} s   {:.2}×",
                m.trials(),
                m.trial_time_s(),
                (bis_time / d) as usize,
                bis_time,
                bis_time / m.trial_time_s()
            );
            assert!(
                m.trial_time_s() < bis_time,
                "MLRsearch needs less trial time: {} vs {bis_time}",
                m.trial_time_s()
            );
        }
    }
}
