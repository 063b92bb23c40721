//! Averaged views: a figure whose axes and series use a few parameters shows, at each
//! point, the mean over every configuration that differs only in the other parameters,
//! with a 95 % CI over those configurations' means (as the studies drew them), instead
//! of one unaveraged series per combination.
//!
//! Owns: the averaging of configurations into series and the sentence that says what a
//! point is the mean of.
//! Must not: choose figures (the analyses above it do); imports `figure`, `model`,
//! `series`, `stats` only.

use crate::figure::{Point, Series};
use crate::model::Config;
use crate::series::{varying, XOf, YOf};
use crate::stats::Summary;
use std::collections::BTreeMap;

/// The mean of `y` over configurations: (mean, 95 % CI half-width, configurations).
/// With one configuration its own CI (over repetitions); with several, the CI of the
/// mean of their means (the spread over the averaged parameters and the noise).
pub fn average(configs: &[&Config], y: &YOf<'_>) -> Option<(f64, Option<f64>, usize)> {
    let v: Vec<(f64, Option<f64>)> = configs.iter().filter_map(|c| y(c)).collect();
    match v.as_slice() {
        [] => None,
        [one] => Some((one.0, one.1, 1)),
        many => {
            let means: Vec<f64> = many.iter().map(|p| p.0).collect();
            let s = Summary::of(&means)?;
            Some((s.mean, s.ci95, many.len()))
        }
    }
}

/// The name of a configuration's series in an averaged view (`None`: left out).
pub(crate) type NameOf<'a> = dyn Fn(&Config) -> Option<String> + 'a;

/// Series named by `name`, one point per x: the average of `y` over the configurations
/// with that name and x (see [`average`]); points sorted by x, series by name.
pub(crate) fn averaged_series(
    configs: &[&Config],
    name: &NameOf<'_>,
    x: &XOf<'_>,
    y: &YOf<'_>,
) -> Vec<Series> {
    let mut cells: BTreeMap<String, BTreeMap<u64, Vec<&Config>>> = BTreeMap::new();
    for c in configs {
        let (Some(n), Some(xv)) = (name(c), x(c)) else {
            continue;
        };
        cells
            .entry(n)
            .or_default()
            .entry(xv.to_bits())
            .or_default()
            .push(c);
    }
    cells
        .into_iter()
        .map(|(n, by_x)| {
            let mut points: Vec<Point> = by_x
                .into_iter()
                .filter_map(|(xb, cs)| {
                    let (m, ci, _) = average(&cs, y)?;
                    Some(Point {
                        x: f64::from_bits(xb),
                        y: m,
                        ci95: ci,
                    })
                })
                .collect();
            points.sort_by(|p, q| p.x.total_cmp(&q.x));
            Series {
                name: n,
                points,
                fit: false,
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// "Each point: the mean over A, B (N configurations; 95 % CI over their means)" — the
/// parameters that vary among `configs` but are not on the figure's axes or series.
pub fn averaged_note(configs: &[&Config], shown: &[&str]) -> String {
    let over: Vec<String> = varying(configs)
        .into_iter()
        .filter(|k| !shown.contains(&k.as_str()) && k != "label")
        .collect();
    if over.is_empty() {
        "Each point: one configuration, the mean over its repetitions with the 95 % CI \
         over those repetitions."
            .into()
    } else {
        format!(
            "Each point: the mean over {} ({} configurations in all); whiskers: 95 % CI \
             over the averaged configurations' means (one configuration alone: over its \
             repetitions).",
            over.join(", "),
            configs.len()
        )
    }
}

/// seed 000's series name: protocol and address family (`TCP/IPv4`), `all` without them.
pub fn proto_family(c: &Config) -> String {
    let p = c.param("proto").map(str::to_uppercase);
    let f = c.param("family").map(|f| format!("IPv{f}"));
    match (p, f) {
        (Some(p), Some(f)) => format!("{p}/{f}"),
        (Some(p), None) => p,
        (None, Some(f)) => f,
        (None, None) => "all".into(),
    }
}

#[cfg(test)]
#[path = "views_tests.rs"]
mod tests;
