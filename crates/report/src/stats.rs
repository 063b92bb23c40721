//! Statistics over repetitions: mean, spread, Student-t confidence intervals,
//! least-squares lines, knees of monotone curves, Welch's t-test (from samples or from
//! their summaries) and the pooling of summaries.
//!
//! Owns: the numbers; imports nothing from this crate (the bottom layer).
//! Must not: do I/O or know about trials, figures or the store.
//!
//! Pure functions on slices; no I/O. Quantiles and p-values come from the regularised
//! incomplete beta function (continued fraction), so they hold for any degrees of freedom.

use serde::Serialize;

/// Mean, sample standard deviation and 95 % CI half-width of one metric over repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); `None` with fewer than 2 values.
    pub sd: Option<f64>,
    /// Half-width of the 95 % confidence interval of the mean (Student t, n − 1 df).
    pub ci95: Option<f64>,
}

impl Summary {
    /// Summarise values; `None` when there are none (non-finite values are skipped).
    pub fn of(values: &[f64]) -> Option<Summary> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let m = mean(&v)?;
        let sd = sample_sd(&v);
        Some(Summary {
            n: v.len(),
            mean: m,
            sd,
            ci95: ci95_half_width(&v),
        })
    }

    /// Coefficient of variation (sd / |mean|); `None` without sd or with a zero mean.
    pub fn cv(&self) -> Option<f64> {
        cv_of(self.sd?, self.mean)
    }
}

/// Median of the finite values (`None` without any).
pub fn median(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Arithmetic mean; `None` for no values.
pub fn mean(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        None
    } else {
        Some(v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// Sample standard deviation (divides by n − 1); `None` below 2 values.
pub fn sample_sd(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let m = mean(v)?;
    let ss: f64 = v.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (v.len() - 1) as f64).sqrt())
}

/// Half-width of the 95 % CI of the mean: t(0.975, n − 1) · sd / √n.
pub fn ci95_half_width(v: &[f64]) -> Option<f64> {
    let sd = sample_sd(v)?;
    let n = v.len() as f64;
    Some(t975(v.len() - 1) * sd / n.sqrt())
}

/// The Student t quantile of a two-sided 95 % confidence interval, t(0.975, df), for
/// `df` degrees of freedom (n − 1 for n values); infinite for `df` = 0, where one
/// value gives no spread. Computed, not looked up: exact for every `df` (a 3-digit
/// table gives 12.706 for 1, 2.042 for 30, 1.960 in the limit).
pub fn t975(df: usize) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    t_quantile(0.975, df as f64)
}

/// Coefficient of variation sd / |mean|; `None` for a zero mean.
pub fn cv_of(sd: f64, mean: f64) -> Option<f64> {
    if mean == 0.0 {
        None
    } else {
        Some(sd / mean.abs())
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; ~15 significant digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// Regularised incomplete beta function I_x(a, b), for a, b > 0 and 0 ≤ x ≤ 1.
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// Standard normal CDF Φ(z) (erfc by Chebyshev fit, relative error < 1.2e-7).
pub fn normal_cdf(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let poly = -x * x - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    let erfc = if x >= 0.0 { erfc } else { 2.0 - erfc };
    1.0 - 0.5 * erfc
}

/// Student t CDF P(T ≤ t) with `df` degrees of freedom (`df` = ∞ or > 1e7: normal).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if !(df.is_finite() && df <= 1e7) {
        return normal_cdf(t);
    }
    let x = df / (df + t * t);
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, x);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// Quantile of Student's t: the t with P(T ≤ t) = p, by bisection on [`t_cdf`]
/// (|error| < 1e-9, so far better than the 3 digits tables give); df ≥ 1 or ∞.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_cdf(hi, df) < p && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-10 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The ratio of two means a / b with the 95 % CI half-width propagated from both
/// relative CIs (r · √((ca/a)² + (cb/b)²); `None` without both CIs or with a = 0);
/// `None` when b's mean is 0.
pub fn ratio(a: &Summary, b: &Summary) -> Option<(f64, Option<f64>)> {
    if b.mean == 0.0 {
        return None;
    }
    let r = a.mean / b.mean;
    let ci = match (a.ci95, b.ci95) {
        (Some(ca), Some(cb)) if a.mean != 0.0 => {
            Some(r * ((ca / a.mean).powi(2) + (cb / b.mean).powi(2)).sqrt())
        }
        _ => None,
    };
    Some((r, ci))
}

/// The cost of x against a baseline b in % with its CI: the decrease of a
/// higher-is-better metric, the increase of a lower-is-better one.
pub fn cost_pct(x: &Summary, b: &Summary, higher: bool) -> Option<(f64, Option<f64>)> {
    let (r, ci) = ratio(x, b)?;
    let c = if higher {
        (1.0 - r) * 100.0
    } else {
        (r - 1.0) * 100.0
    };
    Some((c, ci.map(|c| c * 100.0)))
}

/// A least-squares line y = a + b·x with the uncertainty of its slope, its intercept
/// and its value at any x ([`LineFit::at`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LineFit {
    pub a: f64,
    pub b: f64,
    /// Half-width of the 95 % CI of b (t with n − 2 df); `None` with n < 3.
    pub b_ci95: Option<f64>,
    /// Half-width of the 95 % CI of a, the line at x = 0; `None` with n < 3.
    pub a_ci95: Option<f64>,
    /// Coefficient of determination (1 for an exact line, including a constant one).
    pub r2: f64,
    pub n: usize,
    #[serde(skip)]
    spread: Option<Spread>,
}

/// What the CI of a fitted line's value needs: the (weighted) number of points, the
/// (weighted) mean of x, Sxx and the residual variance s², with t on n − 2 df.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spread {
    sum_w: f64,
    mx: f64,
    sxx: f64,
    s2: f64,
    t: f64,
}

impl Spread {
    /// `None` with n < 3 (no residual degrees of freedom).
    fn of(sum_w: f64, mx: f64, sxx: f64, sse: f64, n: usize) -> Option<Spread> {
        (n > 2).then(|| {
            let df = n as f64 - 2.0;
            Spread {
                sum_w,
                mx,
                sxx,
                s2: sse / df,
                t: t_quantile(0.975, df),
            }
        })
    }

    /// Half-width of the 95 % CI of the line's value at x.
    fn ci_at(&self, x: f64) -> f64 {
        self.t * (self.s2 * (1.0 / self.sum_w + (x - self.mx).powi(2) / self.sxx)).sqrt()
    }
}

impl LineFit {
    fn new(a: f64, b: f64, r2: f64, n: usize, spread: Option<Spread>) -> LineFit {
        LineFit {
            a,
            b,
            b_ci95: spread.map(|s| s.t * (s.s2 / s.sxx).sqrt()),
            a_ci95: spread.map(|s| s.ci_at(0.0)),
            r2,
            n,
            spread,
        }
    }

    /// The line at x and the half-width of the 95 % CI of that value (`None` with n < 3).
    pub fn at(&self, x: f64) -> (f64, Option<f64>) {
        (self.a + self.b * x, self.spread.map(|s| s.ci_at(x)))
    }
}

/// Ordinary least squares over (x, y) pairs; `None` with < 2 points or all x equal.
pub fn fit_line(points: &[(f64, f64)]) -> Option<LineFit> {
    let n = points.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let b = sxy / sxx;
    let a = my - b * mx;
    let sse = sse_of(points, a, b);
    let r2 = if syy > 0.0 { 1.0 - sse / syy } else { 1.0 };
    Some(LineFit::new(a, b, r2, n, Spread::of(nf, mx, sxx, sse, n)))
}

/// Prior weight, in degrees of freedom, of the pooled relative spread in each rule
/// count's variance (see [`fit_line_weighted`]): a point's own variance from 3
/// repetitions (2 df) counts a third, from 9 (8 df) two thirds. With 2 (less pooling)
/// the 95 % CI covered the true slope in 92–93 % of simulated runs (3 % noise ∝ t, 2–3
/// repetitions); with 4, 94–95 %, still 12 % narrower than ordinary least squares'
/// (which covered 73–78 %).
pub const VARIANCE_PRIOR_DF: f64 = 4.0;

/// A cost line is flagged when its lack-of-fit p is below this and it misses some rule
/// count's mean by more than [`MATERIAL_MISS`]: far more than the spread, and by enough
/// to matter (precise data may show a 1 % curve that no one needs to hear about).
pub const LACK_OF_FIT_P: f64 = 0.001;

/// See [`LACK_OF_FIT_P`]: a relative miss of 5 %.
pub const MATERIAL_MISS: f64 = 0.05;

/// A weighted least-squares line over repeated measurements at a few x values, with
/// the repetitions (trials) as the unit of its confidence intervals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WeightedFit {
    /// a, b, the 95 % CI of b (t with N − 2 df, N trials), the weighted R², N.
    pub line: LineFit,
    /// Distinct x values (rule counts).
    pub points: usize,
    /// The largest x fitted: how far the line is read (a slope whose CI holds 0 is
    /// weighed by what it allows there).
    pub x_max: f64,
    /// Of those, how many have a single repetition (their variance is the pooled
    /// relative spread times their mean).
    pub single: usize,
    /// Relative standard deviation of one repetition, pooled over the x values with ≥ 2
    /// repetitions; `None` when none has two.
    pub pooled_cv: Option<f64>,
    /// Lack-of-fit test of the line against the rule counts' means (weighted): F, its
    /// degrees of freedom (K − 2, N − K) and p; `None` without repetitions to measure the
    /// pure error, or with fewer than 3 rule counts.
    pub lack_of_fit: Option<LackOfFit>,
}

impl WeightedFit {
    /// The line at x and the half-width of the 95 % CI of that value (`None` with N < 3).
    pub fn at(&self, x: f64) -> (f64, Option<f64>) {
        self.line.at(x)
    }
}

/// The F test of a line against group means: the weighted squared distance of the means
/// from the line per df, over the pure error (spread within groups) per df.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LackOfFit {
    pub f: f64,
    pub df_line: usize,
    pub df_error: usize,
    /// P(F ≥ f) under a true line.
    pub p: f64,
    /// The largest |mean − line| / |line| over the groups, and its x.
    pub worst_miss: (f64, f64),
}

/// Upper tail P(F ≥ f) of the F distribution with (d1, d2) degrees of freedom.
pub fn f_sf(f: f64, d1: f64, d2: f64) -> f64 {
    if f.is_nan() || f <= 0.0 {
        return 1.0;
    }
    inc_beta(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f))
}

/// Weighted least squares of y on x over groups of repetitions `(x, [y…])`, each
/// repetition weighted by 1 / the variance of one repetition at its x:
///
/// * that variance is the group's sample variance s² shrunk towards the pooled relative
///   spread, σ² = ((n − 1)·s² + ν₀·(cv·ȳ)²) / (n − 1 + ν₀) with ν₀ =
///   [`VARIANCE_PRIOR_DF`] and cv² the (n − 1)-weighted mean of s²/ȳ² over groups with
///   ≥ 2 repetitions — so 2 nearly equal repetitions cannot claim a near-infinite weight,
///   and a group with one repetition gets (cv·ȳ)² (the robust fallback); with no group of
///   two, σ ∝ ȳ (relative errors);
/// * the CIs take the scale from the weighted residuals, s² = Σw·r² / (N − 2), with
///   Student t on N − 2 degrees of freedom, N the number of repetitions: the trials are
///   the unit, and a line that misses the points widens its own CI.
///
/// Non-finite values are skipped; groups with equal x are merged. `None` with < 2
/// distinct x or < 2 values.
pub fn fit_line_weighted(groups: &[(f64, Vec<f64>)]) -> Option<WeightedFit> {
    let mut merged: Vec<(f64, Vec<f64>)> = Vec::new();
    for (x, ys) in groups {
        if !x.is_finite() {
            continue;
        }
        let ys: Vec<f64> = ys.iter().copied().filter(|y| y.is_finite()).collect();
        if ys.is_empty() {
            continue;
        }
        match merged.iter_mut().find(|g| g.0 == *x) {
            Some(g) => g.1.extend(ys),
            None => merged.push((*x, ys)),
        }
    }
    let n: usize = merged.iter().map(|g| g.1.len()).sum();
    if merged.len() < 2 || n < 2 {
        return None;
    }
    // Pooled relative variance of one repetition.
    let (mut rel, mut df) = (0.0, 0.0);
    for (_, ys) in &merged {
        if let (Some(m), Some(sd)) = (mean(ys), sample_sd(ys)) {
            if m != 0.0 {
                let k = (ys.len() - 1) as f64;
                rel += k * (sd / m).powi(2);
                df += k;
            }
        }
    }
    let pooled_cv = (df > 0.0).then(|| (rel / df).sqrt());
    // Without any spread to pool (one repetition each, or all repetitions equal) the
    // scale is arbitrary: it cancels in the weights and the CI comes from the residuals.
    let cv2 = pooled_cv.map(|c| c * c).filter(|c| *c > 0.0).unwrap_or(1.0);
    let var: Vec<f64> = merged
        .iter()
        .map(|(_, ys)| {
            let m = mean(ys).unwrap_or(0.0);
            let k = (ys.len() - 1) as f64;
            let s2 = sample_sd(ys).map(|s| s * s).unwrap_or(0.0);
            (k * s2 + VARIANCE_PRIOR_DF * cv2 * m * m) / (k + VARIANCE_PRIOR_DF)
        })
        .collect();
    // A zero or non-finite variance (a zero mean) would take every weight: then fall
    // back to equal weights.
    let equal = var.iter().any(|v| !(v.is_finite() && *v > 0.0));
    let pts: Vec<(f64, f64, f64)> = merged
        .iter()
        .zip(&var)
        .flat_map(|((x, ys), v)| {
            let w = if equal { 1.0 } else { 1.0 / v };
            ys.iter().map(move |y| (*x, *y, w))
        })
        .collect();
    let sum_w: f64 = pts.iter().map(|p| p.2).sum();
    let mx = pts.iter().map(|p| p.2 * p.0).sum::<f64>() / sum_w;
    let my = pts.iter().map(|p| p.2 * p.1).sum::<f64>() / sum_w;
    let sxx: f64 = pts.iter().map(|p| p.2 * (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| p.2 * (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = pts.iter().map(|p| p.2 * (p.1 - my).powi(2)).sum();
    if sxx.is_nan() || sxx <= 0.0 {
        return None;
    }
    let b = sxy / sxx;
    let a = my - b * mx;
    let sse: f64 = pts.iter().map(|p| p.2 * (p.1 - a - b * p.0).powi(2)).sum();
    let r2 = if syy > 0.0 { 1.0 - sse / syy } else { 1.0 };
    let k = merged.len();
    let lack_of_fit = (k >= 3 && n > k).then(|| {
        let (mut lof, mut pe, mut worst_miss) = (0.0, 0.0, (0.0f64, merged[0].0));
        for ((x, ys), v) in merged.iter().zip(&var) {
            let w = if equal { 1.0 } else { 1.0 / v };
            let m = mean(ys).unwrap_or(0.0);
            let line = a + b * x;
            let miss = ((m - line) / line).abs();
            if miss > worst_miss.0 || miss.is_nan() {
                worst_miss = (miss, *x);
            }
            lof += w * ys.len() as f64 * (m - a - b * x).powi(2);
            pe += w * ys.iter().map(|y| (y - m).powi(2)).sum::<f64>();
        }
        let (d1, d2) = (k - 2, n - k);
        let f = (lof / d1 as f64) / (pe / d2 as f64);
        let f = if f.is_nan() { f64::INFINITY } else { f };
        LackOfFit {
            f,
            df_line: d1,
            df_error: d2,
            p: if f.is_finite() {
                f_sf(f, d1 as f64, d2 as f64)
            } else {
                0.0
            },
            worst_miss,
        }
    });
    Some(WeightedFit {
        line: LineFit::new(a, b, r2, n, Spread::of(sum_w, mx, sxx, sse, n)),
        points: merged.len(),
        x_max: merged.iter().map(|g| g.0).fold(f64::NEG_INFINITY, f64::max),
        single: merged.iter().filter(|g| g.1.len() == 1).count(),
        pooled_cv,
        lack_of_fit,
    })
}

/// Sum of squared residuals of the points around y = a + b·x.
fn sse_of(points: &[(f64, f64)], a: f64, b: f64) -> f64 {
    points.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum()
}

/// Sum of squared residuals of the best line through the points (0 for < 3 points).
fn line_sse(points: &[(f64, f64)]) -> f64 {
    match fit_line(points) {
        Some(f) => sse_of(points, f.a, f.b),
        None => 0.0,
    }
}

/// Knee of a curve by a two-segment piecewise-linear fit: every split into a left and a
/// right run of ≥ 2 points (sorted by x) is fitted with one line each, the split with the
/// smallest total squared residual wins, and the knee is where its two lines meet
/// (clamped to the gap between the runs). `None` with < 4 points, or when the best split
/// does not cut the one-line residual at least fourfold (the curve is a line).
pub fn knee_piecewise(points: &[(f64, f64)]) -> Option<f64> {
    knee_split(points).map(|k| k.0)
}

/// [`knee_piecewise`] with the measured x on either side of it: (knee, x before, x
/// after).
fn knee_split(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let mut p: Vec<(f64, f64)> = points.to_vec();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    if p.len() < 4 {
        return None;
    }
    let one = line_sse(&p);
    let (k, two) = (2..=p.len() - 2)
        .map(|k| (k, line_sse(&p[..k]) + line_sse(&p[k..])))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    // NaN residuals (non-finite input) also mean: no knee.
    if one == 0.0 || two * 4.0 > one || two.is_nan() {
        return None;
    }
    let (l, r) = (fit_line(&p[..k]), fit_line(&p[k..]));
    let (lo, hi) = (p[k - 1].0, p[k].0);
    let meet = match (l, r) {
        (Some(l), Some(r)) if l.b != r.b => (r.a - l.a) / (l.b - r.b),
        _ => lo,
    };
    let knee = if meet.is_finite() {
        meet.clamp(lo, hi)
    } else {
        lo
    };
    Some((knee, lo, hi))
}

/// Resamples of the knee's bootstrap.
pub const KNEE_RESAMPLES: usize = 1000;

/// Where a knee's interval comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "basis")]
pub enum KneeBasis {
    /// The 2.5th–97.5th percentiles of the knee over `resamples` bootstrap resamples
    /// of the repetitions at each rule count (each count's repetitions drawn with
    /// replacement, their mean the point); a knee was found in `found` of them.
    Bootstrap { resamples: usize, found: usize },
    /// Some rule count has one repetition: the measured rule counts on either side of
    /// the knee (where the two segments split), the grid's resolution.
    Bracket,
}

/// A knee with its interval (rules).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Knee {
    pub rules: f64,
    pub lo: f64,
    pub hi: f64,
    #[serde(flatten)]
    pub basis: KneeBasis,
}

/// The knee of the means of `(x, [value per repetition])` groups ([`knee_piecewise`])
/// with an interval: a bootstrap over the repetitions when every group has ≥ 2 (seeded:
/// the same data give the same interval), else the bracket of measured x around it.
pub fn knee_with_interval(groups: &[(f64, Vec<f64>)]) -> Option<Knee> {
    let means: Vec<(f64, f64)> = groups
        .iter()
        .filter_map(|(x, ys)| Some((*x, mean(ys)?)))
        .collect();
    let (rules, lo, hi) = knee_split(&means)?;
    if groups.iter().any(|g| g.1.len() < 2) {
        return Some(Knee {
            rules,
            lo,
            hi,
            basis: KneeBasis::Bracket,
        });
    }
    let mut rng = SplitMix(0x6b6e_6565);
    let mut knees: Vec<f64> = (0..KNEE_RESAMPLES)
        .filter_map(|_| {
            let pts: Vec<(f64, f64)> = groups
                .iter()
                .map(|(x, ys)| {
                    let n = ys.len();
                    let sum: f64 = (0..n).map(|_| ys[rng.below(n)]).sum();
                    (*x, sum / n as f64)
                })
                .collect();
            knee_piecewise(&pts)
        })
        .collect();
    knees.sort_by(f64::total_cmp);
    let found = knees.len();
    let at = |q: f64| knees[((found - 1) as f64 * q).round() as usize];
    let (lo, hi) = if found == 0 {
        (lo, hi)
    } else {
        (at(0.025).min(rules), at(0.975).max(rules))
    };
    Some(Knee {
        rules,
        lo,
        hi,
        basis: KneeBasis::Bootstrap {
            resamples: KNEE_RESAMPLES,
            found,
        },
    })
}

/// splitmix64: a small deterministic generator for resampling (and the tests'
/// synthetic data).
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Degradation point of a falling curve: the first x (ascending) whose y is more than
/// `drop` (a fraction, e.g. 0.05) below the plateau, the y at the smallest x. Returns
/// (last x still within the band, first x beyond it); `None` when no point drops.
pub fn degradation_point(points: &[(f64, f64)], drop: f64) -> Option<(f64, f64)> {
    let mut p: Vec<(f64, f64)> = points.to_vec();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let plateau = p.first()?.1;
    let i = p.iter().position(|q| q.1 < plateau * (1.0 - drop))?;
    Some((p[i.saturating_sub(1)].0, p[i].0))
}

/// Drop in received pps beyond which a rule count counts as degraded (what the report
/// gives [`degradation_measured`]; a slope is flat only below it).
pub const DEGRADED_DROP: f64 = 0.05;

/// [`degradation_point`] where the drop is measured (issue 37): over `(x, [value per
/// repetition])` groups, the first x (ascending) whose mean is more than `drop` (a
/// fraction) below the mean at the smallest x *and* whose difference from it has a 95 %
/// Welch CI (see [`difference`]) that excludes 0. Returns (the x before it, it); `None`
/// when no drop is measured — a mean 5 % down whose CI holds 0 is noise, and without
/// repetitions (no CI) nothing is measured.
pub fn degradation_measured(groups: &[(f64, Vec<f64>)], drop: f64) -> Option<(f64, f64)> {
    let mut by_x: Vec<(f64, Vec<f64>)> = Vec::new();
    for (x, ys) in groups {
        match by_x.iter_mut().find(|g| g.0 == *x) {
            Some(g) => g.1.extend(ys.iter().copied()),
            None => by_x.push((*x, ys.clone())),
        }
    }
    by_x.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (first, rest) = by_x.split_first()?;
    let plateau = mean(&first.1)?;
    let i = rest.iter().position(|(_, ys)| {
        let Some(d) = difference(&first.1, ys) else {
            return false;
        };
        plateau + d.delta < plateau * (1.0 - drop) && d.ci95.is_some_and(|c| -d.delta > c)
    })?;
    Some((by_x[i].0, by_x[i + 1].0))
}

/// Result of Welch's unequal-variance t-test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Welch {
    pub t: f64,
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of equal means; `None` unless both samples have ≥ 2 values and the
/// pooled standard error is not zero.
pub fn welch(x: &[f64], y: &[f64]) -> Option<Welch> {
    welch_from_summary(
        mean(x)?,
        sample_sd(x)?,
        x.len() as u64,
        mean(y)?,
        sample_sd(y)?,
        y.len() as u64,
    )
}

/// Welch's t-test from two samples' summaries (mean, sample sd, count), for when only
/// the summaries were stored; `None` unless both counts are ≥ 2, the numbers are finite
/// and the pooled standard error is not zero.
pub fn welch_from_summary(
    mean_x: f64,
    sd_x: f64,
    n_x: u64,
    mean_y: f64,
    sd_y: f64,
    n_y: u64,
) -> Option<Welch> {
    if n_x < 2 || n_y < 2 {
        return None;
    }
    let (nx, ny) = (n_x as f64, n_y as f64);
    let (vx, vy) = (sd_x * sd_x / nx, sd_y * sd_y / ny);
    let se2 = vx + vy;
    if se2 == 0.0 || !(se2.is_finite() && mean_x.is_finite() && mean_y.is_finite()) {
        return None;
    }
    let t = (mean_x - mean_y) / se2.sqrt();
    let df = se2 * se2 / (vx * vx / (nx - 1.0) + vy * vy / (ny - 1.0));
    let p = inc_beta(df / 2.0, 0.5, df / (df + t * t));
    Some(Welch { t, df, p })
}

/// The difference of two means, y − x, with its 95 % confidence interval and Welch's
/// test: what `fwbench compare` reports per metric. The unit is the repetition (one
/// value per trial), so the interval says how far the means of the two runs' trials
/// differ, not how much single packets vary.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Difference {
    /// Mean of y − mean of x.
    pub delta: f64,
    /// Half-width of the 95 % CI of `delta`: t(0.975, ν) · √(s²ₓ/nₓ + s²ᵧ/nᵧ) with ν
    /// the Welch–Satterthwaite degrees of freedom; `None` when there is no test.
    pub ci95: Option<f64>,
    /// Welch's test of equal means (t > 0: y's mean is the larger); `None` unless both
    /// sides have ≥ 2 values and some spread.
    pub welch: Option<Welch>,
}

/// y − x with its Welch CI and test (see [`Difference`]); `None` when a side has no
/// finite value. Two sides without spread that are equal give `delta` 0 and no test.
pub fn difference(x: &[f64], y: &[f64]) -> Option<Difference> {
    let fx: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    let fy: Vec<f64> = y.iter().copied().filter(|v| v.is_finite()).collect();
    let delta = mean(&fy)? - mean(&fx)?;
    let welch = welch(&fy, &fx);
    let ci95 = welch.map(|w| {
        let se = if w.t != 0.0 {
            (delta / w.t).abs()
        } else {
            let (sx, sy) = (sample_sd(&fx).unwrap_or(0.0), sample_sd(&fy).unwrap_or(0.0));
            (sx * sx / fx.len() as f64 + sy * sy / fy.len() as f64).sqrt()
        };
        t_quantile(0.975, w.df) * se
    });
    Some(Difference { delta, ci95, welch })
}

/// y − x where each value is one run's mean (`fwbench trend`'s segments: the unit is
/// the run, since what a rerun gives differs by more than one run's repetitions say —
/// placement, residue, the machine's load). Two runs or more a side: Welch over the run
/// means ([`difference`]). One run against two or more: how far that run lies from the
/// others, the others' run-to-run spread standing for its own — se = s · √(1 + 1/n),
/// t with n − 1 degrees of freedom (the test of a new observation against a sample).
/// One run a side: the difference, with no test.
pub fn run_difference(x: &[f64], y: &[f64]) -> Option<Difference> {
    let (fx, fy): (Vec<f64>, Vec<f64>) = (
        x.iter().copied().filter(|v| v.is_finite()).collect(),
        y.iter().copied().filter(|v| v.is_finite()).collect(),
    );
    let delta = mean(&fy)? - mean(&fx)?;
    let lone = match (fx.len(), fy.len()) {
        (1, n) if n >= 2 => Some(&fy),
        (n, 1) if n >= 2 => Some(&fx),
        (1, 1) => {
            return Some(Difference {
                delta,
                ci95: None,
                welch: None,
            })
        }
        _ => None,
    };
    let Some(others) = lone else {
        return difference(&fx, &fy);
    };
    let n = others.len() as f64;
    let se = sample_sd(others)? * (1.0 + 1.0 / n).sqrt();
    if se == 0.0 || !se.is_finite() {
        return Some(Difference {
            delta,
            ci95: None,
            welch: None,
        });
    }
    let (t, df) = (delta / se, n - 1.0);
    let p = inc_beta(df / 2.0, 0.5, df / (df + t * t));
    Some(Difference {
        delta,
        ci95: Some(t_quantile(0.975, df) * se),
        welch: Some(Welch { t, df, p }),
    })
}

/// Count, mean and sample standard deviation of a set of values, known only through
/// the summaries of its parts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pooled {
    pub n: u64,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 below two values.
    pub sd: f64,
}

impl Pooled {
    /// Half-width of the 95 % CI of the mean: t(0.975, n − 1) · sd / √n (`None` below
    /// two values).
    pub fn ci95(&self) -> Option<f64> {
        (self.n >= 2).then(|| {
            let n = self.n as f64;
            t_quantile(0.975, n - 1.0) * self.sd / n.sqrt()
        })
    }
}

/// Pool parts given as (count, mean, sample sd) into the summary of all their values:
/// the count-weighted mean, and the variance from the within-part sums of squares
/// (n_i − 1)·sd_i² plus the between-part ones n_i·(mean_i − mean)². Exact for the union
/// of the parts. Parts with no values are skipped; `None` when nothing is left or a
/// number is not finite.
pub fn pool(parts: &[(u64, f64, f64)]) -> Option<Pooled> {
    let parts: Vec<&(u64, f64, f64)> = parts.iter().filter(|p| p.0 > 0).collect();
    let n: u64 = parts.iter().map(|p| p.0).sum();
    if n == 0 {
        return None;
    }
    let mean = parts.iter().map(|p| p.0 as f64 * p.1).sum::<f64>() / n as f64;
    let ss: f64 = parts
        .iter()
        .map(|p| (p.0 as f64 - 1.0) * p.2 * p.2 + p.0 as f64 * (p.1 - mean).powi(2))
        .sum();
    let sd = if n >= 2 {
        (ss / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    (mean.is_finite() && sd.is_finite()).then_some(Pooled { n, mean, sd })
}

/// A paired comparison: the differences y_i − x_i over pairs (one pair = the two arms
/// of one repetition, run back to back), so what both arms share — drift over the run,
/// a slow period — cancels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Paired {
    /// Pairs.
    pub n: usize,
    /// Mean of the per-pair differences y − x.
    pub mean: f64,
    /// Sample standard deviation of the differences.
    pub sd: f64,
    /// Half-width of the 95 % CI of `mean`: t(0.975, n − 1) · sd / √n.
    pub ci95: f64,
    /// Paired t = mean / (sd / √n), with n − 1 degrees of freedom.
    pub t: f64,
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// The paired t-test of y against x (`x[i]` and `y[i]` are one pair); `None` unless
/// there are ≥ 2 pairs of finite values whose differences are not all equal.
pub fn paired(x: &[f64], y: &[f64]) -> Option<Paired> {
    if x.len() != y.len() {
        return None;
    }
    let d: Vec<f64> = x.iter().zip(y).map(|(a, b)| b - a).collect();
    let m = mean(&d)?;
    let sd = sample_sd(&d)?;
    if sd == 0.0 || !(m.is_finite() && sd.is_finite()) {
        return None;
    }
    let n = d.len();
    let se = sd / (n as f64).sqrt();
    let t = m / se;
    let df = (n - 1) as f64;
    let p = inc_beta(df / 2.0, 0.5, df / (df + t * t));
    Some(Paired {
        n,
        mean: m,
        sd,
        ci95: t975(n - 1) * se,
        t,
        df,
        p,
    })
}

/// A least-squares parabola y = a + b·x + c·x² (issue 39: commit latency vs installed
/// size, linear or superlinear), with the 95 % CI of the curvature c.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QuadFit {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    /// Half-width of the 95 % CI of c (t with n − 3 df); `None` with n < 4.
    pub c_ci95: Option<f64>,
    pub n: usize,
}

impl QuadFit {
    /// The curvature's CI lies above 0: the growth is superlinear (`false` without a
    /// CI, or one that includes 0 or lies below it).
    pub fn superlinear(&self) -> bool {
        self.c_ci95.is_some_and(|h| self.c - h > 0.0)
    }
}

/// Ordinary least squares of a parabola over (x, y) pairs; `None` with fewer than 3
/// distinct x (a parabola needs three). Hand-written (a 3×3 normal-equation solve):
/// the crate's statistics are all small closed forms, no linear-algebra dependency.
/// x is scaled by its largest magnitude inside (x² of 100 000 rules is 10¹⁰).
pub fn fit_quadratic(points: &[(f64, f64)]) -> Option<QuadFit> {
    let mut xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 3 {
        return None;
    }
    let scale = xs.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    // Normal equations (X'X) β = X'y over rows (1, u, u²), u = x / scale.
    let mut m = [[0.0_f64; 4]; 3];
    for &(x, y) in points {
        let u = x / scale;
        let row = [1.0, u, u * u];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += row[i] * row[j];
            }
            m[i][3] += row[i] * y;
        }
    }
    let xtx = [
        [m[0][0], m[0][1], m[0][2]],
        [m[1][0], m[1][1], m[1][2]],
        [m[2][0], m[2][1], m[2][2]],
    ];
    let beta = solve3(xtx, [m[0][3], m[1][3], m[2][3]])?;
    let n = points.len();
    // The variance of c: s² · (X'X)⁻¹[2][2], the last column of the inverse.
    let c_ci95 = (n > 3)
        .then(|| {
            let sse: f64 = points
                .iter()
                .map(|&(x, y)| {
                    let u = x / scale;
                    (y - beta[0] - beta[1] * u - beta[2] * u * u).powi(2)
                })
                .sum();
            let df = n as f64 - 3.0;
            let inv22 = solve3(xtx, [0.0, 0.0, 1.0])?[2];
            Some(t_quantile(0.975, df) * (sse / df * inv22).sqrt())
        })
        .flatten();
    Some(QuadFit {
        a: beta[0],
        b: beta[1] / scale,
        c: beta[2] / (scale * scale),
        c_ci95: c_ci95.map(|h| h / (scale * scale)),
        n,
    })
}

/// Solve a 3×3 system by Gaussian elimination with partial pivoting (`None`: singular).
fn solve3(a: [[f64; 3]; 3], b: [f64; 3]) -> Option<[f64; 3]> {
    let mut m = [
        [a[0][0], a[0][1], a[0][2], b[0]],
        [a[1][0], a[1][1], a[1][2], b[1]],
        [a[2][0], a[2][1], a[2][2], b[2]],
    ];
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        let top = m[col];
        for r in m.iter_mut().skip(col + 1) {
            let f = r[col] / top[col];
            for (v, t) in r.iter_mut().zip(top).skip(col) {
                *v -= f * t;
            }
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let rest: f64 = (row + 1..3).map(|k| m[row][k] * x[k]).sum();
        x[row] = (m[row][3] - rest) / m[row][row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// Runs as the unit: one run against five (10, 12, 11, 13, 9: s = 1.5811) is a new
    /// observation's test — se = s·√(1 + 1/5) = 1.7321, t = 4 / se = 2.3094 with 4
    /// degrees of freedom, p = 0.0821, CI = t(0.975, 4)·se = 2.7764 · 1.7321 = 4.8089;
    /// two or more runs a side are Welch's over the run means; one a side, no test.
    #[test]
    fn run_difference_of_known_samples() {
        let old = [10.0, 12.0, 11.0, 13.0, 9.0];
        let d = run_difference(&old, &[15.0]).unwrap();
        assert!(close(d.delta, 4.0, 1e-12));
        assert!(close(d.ci95.unwrap(), 4.80894, 1e-4), "{d:?}");
        let w = d.welch.unwrap();
        assert!(close(w.t, 2.30940, 1e-4) && close(w.df, 4.0, 0.0), "{w:?}");
        assert!(close(w.p, 0.082086, 1e-4), "{w:?}");
        // The lone run first: the same, the other way round.
        let r = run_difference(&[15.0], &old).unwrap();
        assert!(close(r.delta, -4.0, 1e-12) && close(r.ci95.unwrap(), 4.80894, 1e-4));
        assert_eq!(
            run_difference(&old, &[14.0, 16.0]),
            difference(&old, &[14.0, 16.0])
        );
        let one = run_difference(&[1.0], &[2.0]).unwrap();
        assert_eq!((one.delta, one.ci95, one.welch), (1.0, None, None));
        // Runs without spread: no test.
        assert_eq!(run_difference(&[5.0, 5.0], &[6.0]).unwrap().ci95, None);
    }

    #[test]
    fn difference_of_two_known_samples() {
        // x = 1..5, y = 3..7: Δ = 2, s² = 2.5 on each side, se = √(0.5 + 0.5) = 1,
        // t = 2, Welch df = 1 / (2 · 0.5² / 4) = 8; t(0.975, 8) = 2.306004,
        // two-sided p(|T| ≥ 2, 8 df) = 0.080516.
        let d = difference(&[1.0, 2.0, 3.0, 4.0, 5.0], &[3.0, 4.0, 5.0, 6.0, 7.0]).unwrap();
        assert!(close(d.delta, 2.0, 1e-12));
        let w = d.welch.unwrap();
        assert!(close(w.t, 2.0, 1e-12) && close(w.df, 8.0, 1e-9), "{w:?}");
        assert!(close(w.p, 0.080_516, 1e-5), "{w:?}");
        assert!(close(d.ci95.unwrap(), 2.306_004, 1e-5), "{d:?}");
        // Reversed: the sign flips, the interval and p do not.
        let r = difference(&[3.0, 4.0, 5.0, 6.0, 7.0], &[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!(close(r.delta, -2.0, 1e-12) && close(r.ci95.unwrap(), 2.306_004, 1e-5));
        // Identical samples: Δ 0, t 0, p 1, the CI still as wide as the spread says.
        let v = [9.0, 10.0, 11.0];
        let same = difference(&v, &v).unwrap();
        assert_eq!(same.delta, 0.0);
        assert!(close(same.welch.unwrap().p, 1.0, 1e-12));
        // se = √(2 · 1/3); df = 4; t(0.975, 4) = 2.776445.
        assert!(close(
            same.ci95.unwrap(),
            2.776_445 * (2.0f64 / 3.0).sqrt(),
            1e-5
        ));
        // One value a side: a difference, no test.
        let one = difference(&[1.0], &[2.0]).unwrap();
        assert_eq!((one.delta, one.ci95, one.welch), (1.0, None, None));
        assert!(difference(&[], &[1.0]).is_none());
    }

    #[test]
    fn mean_sd_ci_of_a_known_sample() {
        let v = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let s = Summary::of(&v).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        // Σ(x − 5)² = 32, / 7 → sd = √(32/7) = 2.13809
        assert!(close(s.sd.unwrap(), (32.0f64 / 7.0).sqrt(), 1e-12));
        // 2.365 · 2.13809 / √8 = 1.7875
        assert!(close(s.ci95.unwrap(), 1.7875, 1e-3), "{:?}", s.ci95);
        assert!(close(s.cv().unwrap(), 2.13809 / 5.0, 1e-5));
        assert!(Summary::of(&[]).is_none());
        let one = Summary::of(&[3.0]).unwrap();
        assert_eq!((one.sd, one.ci95), (None, None));
    }

    #[test]
    fn t_quantiles_match_tables_to_three_digits() {
        let table = [
            (1.0, 12.706),
            (2.0, 4.303),
            (3.0, 3.182),
            (4.0, 2.776),
            (5.0, 2.571),
            (7.0, 2.365),
            (10.0, 2.228),
            (20.0, 2.086),
            (30.0, 2.042),
            (60.0, 2.000),
            (120.0, 1.980),
            (1e6, 1.960),
            (f64::INFINITY, 1.960),
        ];
        for (df, t) in table {
            let q = t_quantile(0.975, df);
            assert!(close(q, t, 6e-4), "df {df}: {q} vs {t}");
        }
        assert!(close(t_quantile(0.95, 10.0), 1.812, 6e-4));
        assert!(close(t_quantile(0.995, 5.0), 4.032, 6e-4));
        assert!(close(t_quantile(0.025, 7.0), -2.365, 6e-4));
    }

    #[test]
    fn t975_is_the_table_value_for_every_df() {
        assert_eq!(t975(0), f64::INFINITY);
        for (df, t) in [
            (1, 12.706),
            (4, 2.776),
            (9, 2.262),
            (30, 2.042),
            (120, 1.980),
        ] {
            assert!(close(t975(df), t, 6e-4), "df {df}: {}", t975(df));
        }
        assert!(close(t975(1_000_000), 1.960, 6e-4));
        assert_eq!(t975(7), t_quantile(0.975, 7.0));
    }

    #[test]
    fn t_cdf_symmetry_and_known_points() {
        assert!(close(t_cdf(0.0, 5.0), 0.5, 1e-12));
        // t with 1 df is Cauchy: P(T ≤ 1) = 0.75
        assert!(close(t_cdf(1.0, 1.0), 0.75, 1e-9));
        assert!(close(t_cdf(-1.0, 1.0), 0.25, 1e-9));
        assert!(close(normal_cdf(1.959964), 0.975, 1e-6));
    }

    #[test]
    fn exact_line_has_r2_one() {
        let pts: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 3.0 + 2.0 * i as f64)).collect();
        let f = fit_line(&pts).unwrap();
        assert!(close(f.a, 3.0, 1e-12) && close(f.b, 2.0, 1e-12));
        assert!(close(f.r2, 1.0, 1e-12));
        assert!(close(f.b_ci95.unwrap(), 0.0, 1e-9));
        assert!(fit_line(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    }

    #[test]
    fn fit_with_known_noise_matches_hand_computation() {
        // y = 3 + 2x with residuals +1, −1, −1, +1 at x = 0..3:
        // b = 2 (residual pattern is symmetric), a = 3, SSE = 4, Sxx = 5,
        // se_b = √(4/2/5) = 0.63246, t(0.975, 2) = 4.303 → CI 2.7214.
        let pts = [(0.0, 4.0), (1.0, 4.0), (2.0, 6.0), (3.0, 10.0)];
        let f = fit_line(&pts).unwrap();
        assert!(close(f.b, 2.0, 1e-12) && close(f.a, 3.0, 1e-12));
        assert!(close(f.b_ci95.unwrap(), 2.7214, 1e-3), "{:?}", f.b_ci95);
        // SST = Σ(y − 6)² = 4 + 4 + 0 + 16 = 24 → R² = 1 − 4/24
        assert!(close(f.r2, 1.0 - 4.0 / 24.0, 1e-12));
        // The line's value: se = s·√(1/n + (x − x̄)²/Sxx), s² = 2, x̄ = 1.5:
        // at 0 (the intercept) and at 3 √(2·(1/4 + 2.25/5)) = 1.18322 → 4.303 × that.
        assert!(close(f.a_ci95.unwrap(), 5.0910, 1e-3), "{:?}", f.a_ci95);
        let (y3, ci3) = f.at(3.0);
        assert!(close(y3, 9.0, 1e-12) && close(ci3.unwrap(), 5.0910, 1e-3));
        // At x̄ only 1/n is left: 4.303 · √(2/4) = 3.0425.
        assert!(close(f.at(1.5).1.unwrap(), 3.0425, 1e-3));
        // No residual degrees of freedom: no CI.
        let two = fit_line(&[(0.0, 1.0), (1.0, 3.0)]).unwrap();
        assert_eq!((two.a_ci95, two.at(5.0).1), (None, None));
    }

    #[test]
    fn cost_slope_recovered_within_its_ci() {
        // t = 500 + 2.5·rules ns with a deterministic ±1 % ripple.
        let pts: Vec<(f64, f64)> = (0..=20)
            .map(|i| {
                let r = i as f64 * 500.0;
                let t = 500.0 + 2.5 * r;
                let ripple = [0.01, -0.007, 0.004, -0.01, 0.0][i % 5];
                (r, t * (1.0 + ripple))
            })
            .collect();
        let f = fit_line(&pts).unwrap();
        let ci = f.b_ci95.unwrap();
        assert!((f.b - 2.5).abs() <= ci, "b {} ± {ci}", f.b);
        assert!(ci < 0.1 && f.r2 > 0.99, "{f:?}");
    }

    #[test]
    fn knee_of_plateau_then_drop() {
        // 1 Mpps up to 4000 rules, then falling 200 pps per rule.
        let pts: Vec<(f64, f64)> = (0..=10)
            .map(|i| {
                let x = i as f64 * 1000.0;
                let y = if x <= 4000.0 {
                    1e6
                } else {
                    1e6 - 200.0 * (x - 4000.0)
                };
                (x, y)
            })
            .collect();
        let k = knee_piecewise(&pts).unwrap();
        assert!((k - 4000.0).abs() <= 500.0, "{k}");
        assert_eq!(degradation_point(&pts, 0.05), Some((4000.0, 5000.0)));
        let line: Vec<(f64, f64)> = (0..8).map(|i| (i as f64, 10.0 - i as f64)).collect();
        assert_eq!(knee_piecewise(&line), None);
        assert_eq!(degradation_point(&[(0.0, 1.0), (1.0, 0.99)], 0.05), None);
    }

    #[test]
    fn a_degradation_is_only_where_the_drop_is_measured() {
        // 1 Mpps ± 0.5 %, 10 % down at 2000 rules: measured there.
        let r = |m: f64| vec![m * 0.995, m, m * 1.005];
        let g = vec![
            (0.0, r(1e6)),
            (1000.0, r(0.98e6)),
            (2000.0, r(0.9e6)),
            (5000.0, r(0.8e6)),
        ];
        assert_eq!(degradation_measured(&g, 0.05), Some((1000.0, 2000.0)));
        // Already down at the second count, given in any order: (first, second).
        let mut h = vec![(1000.0, r(0.9e6)), (0.0, r(1e6)), (2000.0, r(0.8e6))];
        assert_eq!(degradation_measured(&h, 0.05), Some((0.0, 1000.0)));
        // A flat cost with ± 30 % noise whose mean is 10 % down at 1000 rules: the
        // mean-only point says "down", the measured one does not (Welch CI of the
        // difference: −0.1e6 ± ~0.8e6 holds 0).
        let noisy = vec![
            (0.0, vec![1.0e6, 1.3e6, 0.7e6]),
            (1000.0, vec![0.8e6, 1.2e6, 0.7e6]),
            (2000.0, vec![1.3e6, 0.7e6, 1.0e6]),
        ];
        let means: Vec<(f64, f64)> = noisy.iter().map(|(x, y)| (*x, mean(y).unwrap())).collect();
        assert_eq!(degradation_point(&means, 0.05), Some((0.0, 1000.0)));
        assert_eq!(degradation_measured(&noisy, 0.05), None);
        // Measured but within the threshold (2 % down, tight): no degradation.
        h = vec![(0.0, r(1e6)), (1000.0, r(0.98e6))];
        assert_eq!(degradation_measured(&h, 0.05), None);
        // One repetition each: no CI, nothing measured.
        let one = vec![(0.0, vec![1e6]), (1000.0, vec![0.5e6])];
        assert_eq!(degradation_measured(&one, 0.05), None);
    }

    /// 1 Mpps up to `knee` rules, then falling 200 pps per rule, at 0, 1000 … 10 000
    /// rules; `reps` repetitions each with a deterministic ripple of ± `noise` (fraction).
    fn knee_groups(knee: f64, reps: usize, noise: f64) -> Vec<(f64, Vec<f64>)> {
        (0..=10)
            .map(|i| {
                let x = i as f64 * 1000.0;
                let y = 1e6 - 200.0 * (x - knee).max(0.0);
                let ys = (0..reps)
                    .map(|r| y * (1.0 + noise * [1.0, -1.0, 0.5, -0.5][(r + i) % 4]))
                    .collect();
                (x, ys)
            })
            .collect()
    }

    #[test]
    fn a_knees_interval_holds_the_planted_knee() {
        // One repetition: the bracket of measured counts, exactly around 4500.
        let k = knee_with_interval(&knee_groups(4500.0, 1, 0.0)).unwrap();
        assert_eq!(k.basis, KneeBasis::Bracket);
        assert!((k.rules - 4500.0).abs() < 1e-6, "{k:?}");
        assert_eq!((k.lo, k.hi), (4000.0, 5000.0));
        assert!(
            k.text()
                .contains("between the measured 4000 and 5000 rules"),
            "{}",
            k.text()
        );
        // Three repetitions with 0.5 % noise: a bootstrap interval holding 4500,
        // narrower than the whole sweep, found in (nearly) every resample.
        let k = knee_with_interval(&knee_groups(4500.0, 3, 0.005)).unwrap();
        let KneeBasis::Bootstrap { resamples, found } = k.basis else {
            panic!("{k:?}");
        };
        assert_eq!(resamples, KNEE_RESAMPLES);
        assert!(found * 100 >= resamples * 95, "{k:?}");
        assert!(k.lo <= 4500.0 && 4500.0 <= k.hi, "{k:?}");
        assert!(k.lo <= k.rules && k.rules <= k.hi, "{k:?}");
        assert!(k.hi - k.lo < 3000.0, "{k:?}");
        assert!(k.text().contains("95 % CI") && k.text().contains("bootstrap over repetitions"));
        // More noise, a wider interval; the same data, the same interval (seeded).
        let wide = knee_with_interval(&knee_groups(4500.0, 3, 0.05)).unwrap();
        assert!(wide.hi - wide.lo > k.hi - k.lo, "{wide:?} vs {k:?}");
        assert_eq!(
            knee_with_interval(&knee_groups(4500.0, 3, 0.05)),
            Some(wide)
        );
        // A straight line has no knee, hence no interval.
        let line: Vec<(f64, Vec<f64>)> = (0..8)
            .map(|i| (i as f64, vec![10.0 - i as f64; 2]))
            .collect();
        assert_eq!(knee_with_interval(&line), None);
    }

    #[test]
    fn welch_against_a_hand_computed_case() {
        // x: mean 3, var 2.5 (n 5); y: mean 6, var 2.5 (n 5) → t = −3/√1 = −3, df = 8,
        // two-sided p = 0.01707 (t tables).
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [4.0, 5.0, 6.0, 7.0, 8.0];
        let w = welch(&x, &y).unwrap();
        assert!(close(w.t, -3.0, 1e-12) && close(w.df, 8.0, 1e-9));
        assert!(close(w.p, 0.01707, 2e-4), "{w:?}");
        assert!(welch(&[1.0], &y).is_none());
        let same = welch(&x, &x).unwrap();
        assert!(close(same.p, 1.0, 1e-9));
    }

    #[test]
    fn welch_from_summaries_matches_the_samples() {
        // Unequal sizes and variances (the example of Welch's test on Wikipedia).
        // By hand: means 19.37 and 21.59, sd 1.20374 and 4.12348, so
        // t = −2.22 / √(1.44900/10 + 17.00305/20) = −2.2255 and
        // df = 0.99505² / (0.144900²/9 + 0.850153²/19) = 24.52; the two-sided p of
        // t = −2.2255 with 24.52 df is 0.0355 (numerical integration of the t density).
        let x = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0];
        let y = [
            28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7, 23.2, 17.5, 20.6, 18.0,
            23.9, 21.6, 24.3, 20.4, 23.9, 13.3,
        ];
        let w = welch(&x, &y).unwrap();
        assert!(close(w.t, -2.2255, 1e-4), "{w:?}");
        assert!(close(w.df, 24.52, 0.01), "{w:?}");
        assert!(close(w.p, 0.0355, 5e-4), "{w:?}");
        let (mx, sx) = (mean(&x).unwrap(), sample_sd(&x).unwrap());
        let (my, sy) = (mean(&y).unwrap(), sample_sd(&y).unwrap());
        let s = welch_from_summary(mx, sx, 10, my, sy, 20).unwrap();
        assert!(close(s.t, w.t, 1e-12) && close(s.df, w.df, 1e-9) && close(s.p, w.p, 1e-12));
        assert!(welch_from_summary(1.0, 1.0, 1, 2.0, 1.0, 5).is_none());
        assert!(welch_from_summary(1.0, 0.0, 5, 1.0, 0.0, 5).is_none());
    }

    #[test]
    fn pooling_summaries_equals_summarising_the_union() {
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [10.0, 12.0];
        let c = [5.0];
        let all: Vec<f64> = a.iter().chain(&b).chain(&c).copied().collect();
        let part = |v: &[f64]| {
            (
                v.len() as u64,
                mean(v).unwrap(),
                sample_sd(v).unwrap_or(0.0),
            )
        };
        let p = pool(&[part(&a), part(&b), part(&c), (0, f64::NAN, 0.0)]).unwrap();
        assert_eq!(p.n, 7);
        assert!(close(p.mean, mean(&all).unwrap(), 1e-12));
        assert!(close(p.sd, sample_sd(&all).unwrap(), 1e-12));
        assert!(close(
            p.ci95().unwrap(),
            ci95_half_width(&all).unwrap(),
            1e-12
        ));
        assert!(pool(&[]).is_none());
        let one = pool(&[(1, 3.0, 0.0)]).unwrap();
        assert_eq!((one.sd, one.ci95()), (0.0, None));
    }

    #[test]
    fn paired_t_matches_a_hand_computed_case() {
        // d = [1, 2, 1, 2]: mean 1.5, sd √(1/3), t = 1.5 / (sd / 2) = 5.196, df 3;
        // p = 0.013847 (t₃ CDF in closed form), CI ± 3.18245 · sd / 2 = 0.91869.
        let p = paired(&[1.0, 2.0, 3.0, 4.0], &[2.0, 4.0, 4.0, 6.0]).unwrap();
        assert_eq!((p.n, p.df), (4, 3.0));
        assert!(close(p.mean, 1.5, 1e-12) && close(p.sd, (1.0f64 / 3.0).sqrt(), 1e-12));
        assert!(close(p.t, 5.196152, 1e-5), "{p:?}");
        assert!(close(p.p, 0.0138468, 1e-6), "{p:?}");
        assert!(close(p.ci95, 0.918693, 1e-5), "{p:?}");
        assert!(paired(&[1.0], &[2.0]).is_none());
        assert!(paired(&[1.0, 2.0], &[2.0, 3.0]).is_none(), "no spread");
        assert!(paired(&[1.0, 2.0], &[2.0]).is_none());
    }

    /// Deterministic normal variates: xorshift64* (seeded through splitmix64) and
    /// Box–Muller.
    struct Gauss(u64);

    impl Gauss {
        fn new(seed: u64) -> Gauss {
            let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            Gauss((z ^ (z >> 31)) | 1)
        }

        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let r = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
            ((r >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    #[test]
    fn paired_test_finds_a_shift_that_drift_hides_from_welch() {
        // 200 pairs run back to back while the machine drifts from 10 to 15 ms over the
        // run; B is 0.1 ms slower than A in every pair (noise sd 0.1 ms). Welch sees
        // the drift as spread (sd ≈ 1.44 ms) and misses the shift; the paired test
        // sees only the noise of the differences (sd ≈ 0.14 ms) and finds it.
        let mut g = Gauss::new(20_060_901);
        let n = 200;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..n {
            let drift = 10.0 + 5.0 * i as f64 / n as f64;
            a.push(drift + 0.1 * g.normal());
            b.push(drift + 0.1 + 0.1 * g.normal());
        }
        let w = welch(&b, &a).unwrap();
        assert!(w.p > 0.05, "Welch should miss it: {w:?}");
        let p = paired(&a, &b).unwrap();
        assert!(p.p < 1e-6, "{p:?}");
        assert!(
            (p.mean - 0.1).abs() < p.ci95,
            "the CI covers the planted shift: {p:?}"
        );
        assert!(p.ci95 < 0.03, "{p:?}");
        // No shift: the paired test does not cry wolf on the same drift.
        let mut g = Gauss::new(7);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..n {
            let drift = 10.0 + 5.0 * i as f64 / n as f64;
            a.push(drift + 0.1 * g.normal());
            b.push(drift + 0.1 * g.normal());
        }
        let p = paired(&a, &b).unwrap();
        assert!(p.p > 0.05 && p.mean.abs() < p.ci95, "{p:?}");
    }

    /// A known parabola is recovered exactly; a line with noise has a curvature whose
    /// CI includes 0 (not superlinear); a line's worth of points at two sizes is no
    /// parabola.
    #[test]
    fn a_parabola_is_recovered_and_a_noisy_line_is_not_superlinear() {
        let sizes = [1000.0, 20_000.0, 50_000.0, 100_000.0];
        let exact: Vec<(f64, f64)> = sizes
            .iter()
            .flat_map(|&n| [(n, 5.0 + 2e-4 * n + 3e-9 * n * n); 2])
            .collect();
        let q = fit_quadratic(&exact).unwrap();
        assert!((q.a - 5.0).abs() < 1e-6, "{q:?}");
        assert!((q.b - 2e-4).abs() < 1e-9, "{q:?}");
        assert!((q.c - 3e-9).abs() < 1e-13, "{q:?}");
        assert!(q.superlinear(), "{q:?}");
        // A line, ±0.5 ms of alternating noise: no curvature stated.
        let noisy: Vec<(f64, f64)> = sizes
            .iter()
            .enumerate()
            .flat_map(|(i, &n)| {
                let e = if i % 2 == 0 { 0.5 } else { -0.5 };
                [(n, 5.0 + 2e-4 * n + e), (n, 5.0 + 2e-4 * n - e)]
            })
            .collect();
        let q = fit_quadratic(&noisy).unwrap();
        let h = q.c_ci95.unwrap();
        assert!(q.c - h < 0.0 && q.c + h > 0.0, "{q:?}");
        assert!(!q.superlinear());
        assert!(fit_quadratic(&[(1.0, 1.0), (2.0, 2.0), (2.0, 2.1)]).is_none());
        // Three sizes, one point each: the parabola, no CI.
        let q = fit_quadratic(&exact[..6].iter().step_by(2).copied().collect::<Vec<_>>()).unwrap();
        assert!(q.c_ci95.is_none() && !q.superlinear());
    }
}
