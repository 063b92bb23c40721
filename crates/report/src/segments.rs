//! The cost per rule where one line does not fit: per segment between adjacent rule
//! counts, each with its 95 % CI over repetitions, and the segments whose CIs overlap
//! merged, so that where the slope changes is said ("5.0 ns/rule up to 2 000 rules,
//! 4.1 beyond").
//!
//! A segment's cost is the difference of the mean time per packet at its two ends
//! divided by the rules between them; its CI is that difference's Welch interval (the
//! repetitions' spread at each end, Welch–Satterthwaite degrees of freedom) divided the
//! same way. A merged segment is measured end to end the same way: its cost is the
//! mean slope over its span, its CI from the repetitions at its two ends.
//!
//! Owns: these numbers. Imports only `stats` (layer 1 beside it).
//! Must not: know about trials, configurations, figures or words; the findings say
//! them.

use crate::stats;
use serde::Serialize;

/// The cost per rule between two rule counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Segment {
    /// Rule counts at its ends (`from` < `to`).
    pub from: f64,
    pub to: f64,
    /// (mean at `to` − mean at `from`) / (`to` − `from`): per rule, in the unit of the
    /// values per rule (ns per rule per packet for time per packet).
    pub cost: f64,
    /// Half-width of its 95 % Welch CI; `None` when an end has fewer than two
    /// repetitions (or no spread): no interval, never merged.
    pub ci95: Option<f64>,
    /// Adjacent rule counts it spans (1: not merged).
    pub steps: usize,
}

impl Segment {
    /// Its CI holds 0: no measurable difference between its ends.
    pub fn flat(&self) -> bool {
        self.ci95.is_some_and(|c| self.cost.abs() <= c)
    }

    /// The CIs of two segments overlap (neither without a CI).
    fn overlaps(&self, other: &Segment) -> bool {
        match (self.ci95, other.ci95) {
            (Some(a), Some(b)) => (self.cost - other.cost).abs() <= a + b,
            _ => false,
        }
    }
}

/// The repetitions at each rule count, sorted by count, those at one count together
/// (non-finite values left out; counts without a value dropped).
fn by_count(groups: &[(f64, Vec<f64>)]) -> Vec<(f64, Vec<f64>)> {
    let mut out: Vec<(f64, Vec<f64>)> = Vec::new();
    let mut sorted: Vec<&(f64, Vec<f64>)> = groups.iter().filter(|g| g.0.is_finite()).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (x, ys) in sorted {
        let ys = ys.iter().copied().filter(|y| y.is_finite());
        match out.last_mut() {
            Some(last) if last.0 == *x => last.1.extend(ys),
            _ => out.push((*x, ys.collect())),
        }
    }
    out.retain(|g| !g.1.is_empty());
    out
}

/// The segment between two rule counts' repetitions.
fn between(a: &(f64, Vec<f64>), b: &(f64, Vec<f64>), steps: usize) -> Option<Segment> {
    let dx = b.0 - a.0;
    if dx <= 0.0 {
        return None;
    }
    let d = stats::difference(&a.1, &b.1)?;
    Some(Segment {
        from: a.0,
        to: b.0,
        cost: d.delta / dx,
        ci95: d.ci95.filter(|c| c.is_finite()).map(|c| c / dx),
        steps,
    })
}

/// The cost per rule between each pair of adjacent rule counts of `groups`
/// (`(rules, [value per repetition])`, in any order; one group per count or several).
pub fn adjacent(groups: &[(f64, Vec<f64>)]) -> Vec<Segment> {
    let g = by_count(groups);
    g.windows(2)
        .filter_map(|w| between(&w[0], &w[1], 1))
        .collect()
}

/// [`adjacent`] segments merged from the fewest rules up while the next one's CI
/// overlaps the merged one's: where the result has more than one segment, the cost per
/// rule changes at their common ends. A segment without a CI stands alone.
pub fn merged(groups: &[(f64, Vec<f64>)]) -> Vec<Segment> {
    let g = by_count(groups);
    let mut out: Vec<Segment> = Vec::new();
    // Index into `g` where the current merged segment starts.
    let mut start = 0;
    for i in 1..g.len() {
        let Some(next) = between(&g[i - 1], &g[i], 1) else {
            continue;
        };
        let widened = match out.last() {
            Some(cur) if cur.to == g[i - 1].0 && cur.overlaps(&next) => {
                between(&g[start], &g[i], cur.steps + 1)
            }
            _ => None,
        };
        match widened {
            Some(w) => {
                if let Some(cur) = out.last_mut() {
                    *cur = w;
                }
            }
            None => {
                start = i - 1;
                out.push(next);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise: a SplitMix64 stream turned into normal deviates.
    struct Noise(u64);

    impl Noise {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform().max(1e-12), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// `reps` repetitions of `f` at the default experiment's rule counts, each with a
    /// relative noise of `cv`.
    fn planted(f: impl Fn(f64) -> f64, reps: usize, cv: f64, seed: u64) -> Vec<(f64, Vec<f64>)> {
        let mut n = Noise(seed);
        [0.0, 1000.0, 2000.0, 5000.0, 10000.0]
            .iter()
            .map(|&r| {
                let ys = (0..reps).map(|_| f(r) * (1.0 + cv * n.normal())).collect();
                (r, ys)
            })
            .collect()
    }

    /// 5 ns per rule up to 2 000 rules, 1 ns beyond.
    fn knee(r: f64) -> f64 {
        2000.0 + 5.0 * r.min(2000.0) + 1.0 * (r - 2000.0).max(0.0)
    }

    #[test]
    fn a_knee_at_a_known_count_is_found_with_both_slopes_in_their_cis() {
        // 95 % CIs: over 20 noisy runs × 2 slopes, about 38 of 40 hold the planted
        // slope; fewer than 34 would be a CI far too narrow (or a biased cost).
        let mut covered = 0;
        for seed in 1..=20 {
            let g = planted(knee, 4, 0.005, seed);
            let m = merged(&g);
            assert_eq!(m.len(), 2, "seed {seed}: {m:?}");
            assert_eq!((m[0].from, m[0].to, m[0].steps), (0.0, 2000.0, 2), "{m:?}");
            assert_eq!(
                (m[1].from, m[1].to, m[1].steps),
                (2000.0, 10000.0, 2),
                "{m:?}"
            );
            for (s, want) in m.iter().zip([5.0, 1.0]) {
                let ci = s.ci95.expect("4 repetitions: a CI");
                assert!(
                    (s.cost - want).abs() <= 3.0 * ci,
                    "seed {seed}: {s:?} vs {want}"
                );
                covered += usize::from((s.cost - want).abs() <= ci);
            }
        }
        assert!(covered >= 34, "{covered} of 40 CIs hold the planted slope");
    }

    #[test]
    fn a_straight_line_is_one_segment_with_its_slope() {
        let g = planted(|r| 400.0 + 3.0 * r, 4, 0.005, 7);
        let m = merged(&g);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!((m[0].from, m[0].to, m[0].steps), (0.0, 10000.0, 4));
        assert!((m[0].cost - 3.0).abs() <= m[0].ci95.unwrap(), "{m:?}");
        // The adjacent segments are each a fair estimate too.
        let a = adjacent(&g);
        assert_eq!(a.len(), 4);
        assert!(
            a.iter().all(|s| (s.cost - 3.0).abs() <= s.ci95.unwrap()),
            "{a:?}"
        );
    }

    #[test]
    fn the_cost_and_ci_are_the_welch_difference_per_rule() {
        // Means 100 and 300 over 1000 rules: 0.2 per rule; sd 1 and 2, 3 values each.
        let g = vec![
            (0.0, vec![99.0, 100.0, 101.0]),
            (1000.0, vec![298.0, 300.0, 302.0]),
        ];
        let s = adjacent(&g);
        assert_eq!(s.len(), 1);
        assert!((s[0].cost - 0.2).abs() < 1e-12, "{s:?}");
        let d = stats::difference(&g[0].1, &g[1].1).unwrap();
        assert!((s[0].ci95.unwrap() - d.ci95.unwrap() / 1000.0).abs() < 1e-15);
        assert!(!s[0].flat());
    }

    #[test]
    fn no_difference_is_flat_and_one_repetition_has_no_ci() {
        let same = vec![
            (0.0, vec![100.0, 102.0, 98.0]),
            (1000.0, vec![101.0, 99.0, 100.0]),
        ];
        let s = adjacent(&same);
        assert!(s[0].flat(), "{s:?}");
        let single = vec![
            (0.0, vec![100.0]),
            (1000.0, vec![200.0]),
            (2000.0, vec![300.0]),
        ];
        let m = merged(&single);
        // Without CIs nothing is merged: each step is said as measured.
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m
            .iter()
            .all(|s| s.ci95.is_none() && (s.cost - 0.1).abs() < 1e-12));
    }

    #[test]
    fn groups_in_any_order_and_split_counts_are_gathered() {
        let g = vec![
            (2000.0, vec![300.0, 301.0]),
            (0.0, vec![100.0, 101.0]),
            (2000.0, vec![299.0]),
            (0.0, vec![99.0, f64::NAN]),
        ];
        let s = adjacent(&g);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].from, s[0].to), (0.0, 2000.0));
        assert!((s[0].cost - 0.1).abs() < 1e-9, "{s:?}");
        assert!(adjacent(&[(0.0, vec![1.0, 2.0])]).is_empty());
    }
}
