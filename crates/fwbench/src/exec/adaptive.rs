//! Adaptive trial length: stop once the rate's 95 % confidence interval over 200-ms
//! windows is narrow enough (within one trial; repetitions are the unit for CIs).

use crate::outcome::Precision;
use std::time::Duration;

/// Rate windows of an adaptive trial.
pub const ADAPTIVE_WINDOW: Duration = Duration::from_millis(200);

/// Relative half-width of the 95 % confidence interval of the mean of `x` (Student t),
/// from 5 values on; the first window is left out (ramp-up).
pub fn relative_ci(x: &[f64]) -> Option<f64> {
    let x = x.get(1..)?;
    if x.len() < 5 {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(report::stats::t975(x.len() - 1) * (var / n).sqrt() / mean)
}

/// The adaptive stop rule, fed with the measuring role's running count at each poll;
/// time is passed in (`elapsed` since the traffic started), so it is tested without
/// sleeping. Stops at `min` at the earliest, once the relative 95 % CI half-width of
/// the per-window rates is at most `target`; the caller stops at `max` regardless.
#[derive(Debug, Clone)]
pub struct StopRule {
    target: f64,
    min: Duration,
    windows: Vec<f64>,
    last: (Duration, u64),
}

impl StopRule {
    pub fn new(target: f64, min: Duration) -> StopRule {
        StopRule {
            target,
            min,
            windows: Vec::new(),
            last: (Duration::ZERO, 0),
        }
    }

    /// One poll: the role had counted `count` at `elapsed`. True: stop now.
    pub fn observe(&mut self, elapsed: Duration, count: u64) -> bool {
        let dt = elapsed.saturating_sub(self.last.0).as_secs_f64();
        if dt > 0.0 {
            self.windows
                .push(count.saturating_sub(self.last.1) as f64 / dt);
            tracing::debug!(
                "adaptive window {:.0}/s",
                self.windows[self.windows.len() - 1]
            );
        }
        self.last = (elapsed, count);
        elapsed >= self.min && self.reached()
    }

    fn reached(&self) -> bool {
        relative_ci(&self.windows).is_some_and(|r| r <= self.target)
    }

    /// What the trial achieved, ended at `elapsed`.
    pub fn precision(&self, elapsed: Duration) -> Precision {
        Precision {
            target: self.target,
            achieved: relative_ci(&self.windows),
            windows: self.windows.len(),
            duration_s: elapsed.as_secs_f64(),
            reached: self.reached(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_confidence_interval() {
        // First window left out; then 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sd 2.138,
        // t(7) = 2.365 → half-width 1.788, relative 0.3576.
        let r = relative_ci(&[100.0, 2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((r - 0.3576).abs() < 1e-3, "{r}");
        assert_eq!(relative_ci(&[1.0, 2.0, 3.0]), None, "too few windows");
        assert_eq!(relative_ci(&[5.0; 7]), Some(0.0));
        let t = report::stats::t975;
        assert!((t(1) - 12.706).abs() < 1e-3 && (t(1000) - 1.962).abs() < 1e-3);
    }

    /// A steady 1000/s with ±10 % alternating noise: the CI narrows as windows
    /// accumulate; the rule never stops before `min`, and stops once precise enough.
    #[test]
    fn stop_rule_waits_for_min_then_for_precision() {
        let w = ADAPTIVE_WINDOW;
        let mut rule = StopRule::new(0.02, Duration::from_secs(1));
        let mut count = 0u64;
        let mut stopped_at = None;
        for i in 1..=200u32 {
            let rate = if i % 2 == 0 { 1100.0 } else { 900.0 };
            count += (rate * w.as_secs_f64()) as u64;
            let t = w * i;
            if rule.observe(t, count) {
                stopped_at = Some(t);
                break;
            }
        }
        let t = stopped_at.expect("a steady rate reaches 2 %");
        assert!(t >= Duration::from_secs(1), "stopped before min: {t:?}");
        let p = rule.precision(t);
        assert!(p.reached && p.achieved.unwrap() <= 0.02, "{p:?}");
        // With ±10 % noise, 2 % needs about (2.0 × 0.1 / 0.02)² ≈ 100 windows / 4 …
        assert!(p.windows >= 10, "{p:?}");
    }

    #[test]
    fn stop_rule_does_not_stop_on_a_noisy_rate() {
        let w = ADAPTIVE_WINDOW;
        let mut rule = StopRule::new(0.001, Duration::ZERO);
        let mut count = 0u64;
        for i in 1..=50u32 {
            count += if i % 2 == 0 { 300 } else { 100 };
            assert!(!rule.observe(w * i, count), "stopped at window {i}");
        }
        let p = rule.precision(w * 50);
        assert!(!p.reached && p.achieved.unwrap() > 0.001 && p.windows == 50);
    }
}
