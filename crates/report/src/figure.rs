//! The data a report shows, independent of how it is drawn: figures (line and bar
//! charts with their series, points and markers), tables, cost fits, and the
//! [`Analysis`] that collects them for one run; and how a number reads in a cell.
//!
//! Owns: these types (their JSON form is part of the JSON export) and `num`/`mean_ci`.
//! Must not: choose figures, read stored trials, or draw anything; it imports only
//! `stats` (for the fit type).

use crate::stats::LineFit;
use serde::Serialize;

/// One plotted value: the mean over repetitions and its 95 % CI half-width.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub ci95: Option<f64>,
}

/// A named line of points; `fit` series are drawn as dashed lines without markers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    pub fit: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// x numeric, one polyline per series with CI whiskers.
    Line,
    /// x = index into `categories`, one bar per series and category.
    Bar,
}

/// A vertical mark on a line chart (e.g. the threads/epoll crossover).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Marker {
    pub x: f64,
    pub text: String,
}

/// Most points per line series drawn with markers and CI whiskers; a denser series is
/// drawn as a thin line inside a band of its 95 % CI, so 2000 points stay readable.
pub const DENSE_POINTS: usize = 200;

/// A chart, independent of how it is drawn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// Stable identifier (e.g. `echo-per-client-vs-clients`).
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub kind: Kind,
    pub series: Vec<Series>,
    /// Bar charts: the category names (x = index).
    pub categories: Vec<String>,
    pub markers: Vec<Marker>,
    /// Sentences printed under the figure.
    pub notes: Vec<String>,
}

/// A table of text cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Cost model of one series: time per packet t = a + b·rules, b in ns per rule per packet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostFit {
    pub series: String,
    /// Distinct rule counts fitted.
    pub rule_counts: usize,
    /// The fit over every repetition (x = rules, y = 1e9 / received pps, ns).
    pub fit: LineFit,
    /// Two-segment knee of received pps vs rules (see [`crate::stats::knee_piecewise`]).
    pub knee_rules: Option<f64>,
    /// Degradation point: (last rule count within 5 % of the plateau, first beyond).
    pub degradation: Option<(f64, f64)>,
}

/// Everything chosen for one run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Analysis {
    pub figures: Vec<Figure>,
    pub tables: Vec<Table>,
    pub fits: Vec<CostFit>,
}

/// A number for reading: integers plain, else 4 significant digits at most.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (3 - mag).clamp(0, 6) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// "mean ± ci" (just the mean without a CI).
pub fn mean_ci(mean: f64, ci: Option<f64>) -> String {
    match ci {
        Some(c) => format!("{} ± {}", num(mean), num(c)),
        None => num(mean),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(12345.0), "12345");
        assert_eq!(num(2.51234), "2.512");
        assert_eq!(num(0.012345), "0.01235");
        assert_eq!(mean_ci(10.0, Some(0.5)), "10 ± 0.5");
    }
}
