//! Adaptive trial length: stop once the rate's 95 % confidence interval over 200-ms
//! windows is narrow enough (within one trial; repetitions are the unit for CIs).

//! One echo trial, end to end: agents up, setup, start, run for t, stop, results,
//! teardown — in the phase order of `proto`, gateway first and down last.

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
    Some(t975(x.len() - 1) * (var / n).sqrt() / mean)
}

/// Two-sided 95 % Student t quantile for `df` degrees of freedom.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=60 => 2.000 + (2.042 - 2.000) * (60 - df) as f64 / 30.0,
        61..=120 => 1.980 + (2.000 - 1.980) * (120 - df) as f64 / 60.0,
        _ => 1.960,
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
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(1000), 1.96);
    }
}
