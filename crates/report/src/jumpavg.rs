//! Change points by minimum description length: FD.io CSIT's `jumpavg`, the grouping
//! its performance trending uses (CSIT `resources/libraries/python/jumpavg/`:
//! `classify.py`, `bit_counting_stats.py`, `bit_counting_group_list.py`, as of 2023).
//!
//! A history (one value, or one indivisible sequence of values, per run) is split into
//! consecutive groups, each modelled as samples of its own normal distribution; the
//! split chosen is the one whose encoding — every group's length, average, standard
//! deviation and samples — takes the fewest bits. A new group costs bits (its length
//! and average), so a split is made only when the samples on either side are cheaper to
//! describe apart than together: no threshold or significance level to tune. The
//! resolution is `unit` (default: the largest sample is 12 significant bits, CSIT's
//! `sbps` = 12).
//!
//! Why not a crate: no Rust change-point crate implements this published MDL method
//! (the ones found offer PELT/BOCPD with a penalty or hazard to choose); CSIT's is the
//! method the issue names, and its 150 lines of arithmetic are short enough to follow
//! line by line (the tests plant known steps and measure the false-alarm rate).
//!
//! Owns: the bit counting and the grouping. Must not: know metrics or which direction
//! is better (the caller names a lower average a regression or not).

use crate::stats::ln_gamma;

/// Size, average and population standard deviation of samples (CSIT's `AvgStdevStats`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AvgStdev {
    pub size: usize,
    pub avg: f64,
    /// Population standard deviation (divided by `size`), as CSIT's.
    pub stdev: f64,
}

impl AvgStdev {
    /// The statistics of `values` (empty: size 0).
    pub fn of(values: &[f64]) -> AvgStdev {
        values.iter().fold(AvgStdev::EMPTY, |a, &v| {
            a.join(&AvgStdev {
                size: 1,
                avg: v,
                stdev: 0.0,
            })
        })
    }

    const EMPTY: AvgStdev = AvgStdev {
        size: 0,
        avg: 0.0,
        stdev: 0.0,
    };

    /// The statistics of both sample sets together.
    pub fn join(&self, o: &AvgStdev) -> AvgStdev {
        let size = self.size + o.size;
        if size == 0 {
            return AvgStdev::EMPTY;
        }
        let (a, b) = (self.size as f64, o.size as f64);
        let n = size as f64;
        let avg = (self.avg * a + o.avg * b) / n;
        // Second moments about the joint average (no cancellation of large squares).
        let m2 = a * (self.stdev.powi(2) + (self.avg - avg).powi(2))
            + b * (o.stdev.powi(2) + (o.avg - avg).powi(2));
        AvgStdev {
            size,
            avg,
            stdev: (m2 / n).max(0.0).sqrt(),
        }
    }
}

/// Information content, in bits, of a group with these statistics, given the largest
/// sample, the resolution and the previous group's average (CSIT `BitCountingStats`).
pub fn bits(s: &AvgStdev, max_value: f64, unit: f64, prev_avg: Option<f64>) -> f64 {
    if s.size < 1 {
        return 0.0;
    }
    let n = s.size as f64;
    let max = max_value / unit;
    let avg = s.avg / unit;
    // The length: P(k samples) = 1/k − 1/(k+1).
    let mut b = (n * (n + 1.0)).log2();
    b += match prev_avg {
        // The first average: uniform from 0 to max.
        None => (max + 1.0).log2(),
        // Later ones: an opposite triangle around the previous average, so a group
        // with nearly the previous group's average is expensive.
        Some(p) => {
            let p = p / unit;
            let norm = p * p - (p - 1.0) * max + max * max / 2.0;
            -((avg - p).abs() + 1.0).log2() + norm.log2()
        }
    };
    if s.size < 2 {
        return b;
    }
    let stdev = s.stdev / unit;
    // The standard deviation, anything from 0 to max: coded as the length is (jumpavg
    // 0.4.1, 2023: for size 2 the sphere below is 2 points whatever its radius, so a
    // large stdev must cost already here), normalised for the cut-off at max. (0.4.0
    // coded it uniform, log2(max + 1): a 2-sample group cost the same whatever its
    // spread.)
    b += ((stdev + 1.0) * (stdev + 2.0)).log2();
    b += (1.0 - 1.0 / (max + 2.0)).log2();
    // The samples lie on a (size − 2)-sphere of radius² = stdev² · size.
    let mut area_ln = std::f64::consts::LN_2;
    area_ln += std::f64::consts::PI.ln() * ((n - 1.0) / 2.0);
    area_ln -= ln_gamma((n - 1.0) / 2.0);
    area_ln += (stdev + 1.0).ln() * (n - 2.0);
    area_ln += n.ln() * ((n - 2.0) / 2.0);
    b + area_ln / std::f64::consts::LN_2
}

/// One constant segment: runs `start..end` of the history.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub start: usize,
    pub end: usize,
    pub stats: AvgStdev,
    pub bits: f64,
}

/// The default resolution: the largest sample is `sbps` significant bits (CSIT: 12).
pub fn default_unit(max_value: f64, sbps: f64) -> f64 {
    max_value / (2f64.powf(sbps + 1.0) - 1.0)
}

/// CSIT's significant bits per sample, the default resolution.
pub const SBPS: f64 = 12.0;

/// Split `runs` (each run's samples, an indivisible sequence; non-finite values are
/// left out) into the groups of fewest bits, in order. `unit`: the values' resolution
/// (`None`: [`default_unit`] with [`SBPS`]). Runs without a finite value are not
/// allowed (the caller leaves them out of the history). With no positive sample there
/// is nothing to resolve: one group.
pub fn classify(runs: &[Vec<f64>], unit: Option<f64>) -> Vec<Group> {
    let stats: Vec<AvgStdev> = runs
        .iter()
        .map(|r| {
            let v: Vec<f64> = r.iter().copied().filter(|x| x.is_finite()).collect();
            AvgStdev::of(&v)
        })
        .collect();
    if stats.is_empty() {
        return vec![];
    }
    let max_value = runs
        .iter()
        .flatten()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0f64, f64::max);
    let unit = unit
        .filter(|u| *u > 0.0 && u.is_finite())
        .unwrap_or_else(|| default_unit(max_value, SBPS));
    if max_value <= 0.0 || unit <= 0.0 || !unit.is_finite() {
        let all = stats.iter().fold(AvgStdev::EMPTY, |a, s| a.join(s));
        return vec![Group {
            start: 0,
            end: stats.len(),
            stats: all,
            bits: 0.0,
        }];
    }
    // best[i]: the partition of runs 0..i of fewest bits, and its bits.
    let mut best: Vec<(Vec<Group>, f64)> = vec![(vec![], 0.0)];
    // open[i]: a last group starting at run i (stats over i..=j so far).
    let mut open: Vec<AvgStdev> = Vec::new();
    for (j, s) in stats.iter().enumerate() {
        for o in open.iter_mut() {
            *o = o.join(s);
        }
        open.push(*s);
        // The last group i..=j after the best partition of 0..i; CSIT keeps the new
        // group (i = j) on a tie and otherwise the first strictly better one.
        let cost = |i: usize| -> f64 {
            let (prefix, prefix_bits) = &best[i];
            let prev = prefix.last().map(|g| g.stats.avg);
            prefix_bits + bits(&open[i], max_value, unit, prev)
        };
        let mut pick = j;
        let mut pick_bits = cost(j);
        for i in 0..j {
            let b = cost(i);
            if b < pick_bits {
                pick = i;
                pick_bits = b;
            }
        }
        let (prefix, _) = &best[pick];
        let prev = prefix.last().map(|g| g.stats.avg);
        let mut groups = prefix.clone();
        groups.push(Group {
            start: pick,
            end: j + 1,
            stats: open[pick],
            bits: bits(&open[pick], max_value, unit, prev),
        });
        best.push((groups, pick_bits));
    }
    best.pop().map(|(g, _)| g).unwrap_or_default()
}

#[cfg(test)]
#[path = "jumpavg_tests.rs"]
mod tests;
