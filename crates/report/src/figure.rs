//! The data a report shows, independent of how it is drawn: figures (line and bar
//! charts with their series, points and markers), tables, cost fits, and the
//! [`Analysis`] that collects them for one run; and how a number reads in a cell.
//!
//! Owns: these types (their JSON form is part of the JSON export) and `num`/`mean_ci`.
//! Must not: choose figures, read stored trials, or draw anything; it imports only
//! `stats` (for the fit type) and `segments` (for the segment type).

use crate::segments::{self, Segment};
use crate::stats::{LineFit, Summary, WeightedFit};
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

/// A shaded band across a line chart's plot, from `from` to `to` on the x axis (e.g. an
/// update's commit, from its start to its end), labelled with `text`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Span {
    pub from: f64,
    pub to: f64,
    pub text: String,
}

/// Most points per line series drawn with markers and CI whiskers; a denser series is
/// drawn as a thin line inside a band of its 95 % CI, so 2000 points stay readable.
pub const DENSE_POINTS: usize = 200;

/// A chart, independent of how it is drawn.
#[serde_with::skip_serializing_none]
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
    /// Shaded x ranges of a line chart (none: nothing shaded).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<Span>,
    /// Many like lines overlaid (one per repeated update of a trial): all drawn thin,
    /// in one colour and without a legend row, except the series named here (their
    /// median), drawn bold. `None`: each series in its own style.
    pub overlay: Option<String>,
    /// Sentences printed under the figure.
    pub notes: Vec<String>,
    /// Small multiples: consecutive figures with the same group are drawn side by side
    /// as panels of one view (`None`: a figure of its own).
    pub group: Option<String>,
}

impl Series {
    /// One search trial's curve (`None` without points).
    pub fn of_trial(t: &crate::model::Trial, case: &str, points: Vec<Point>) -> Option<Series> {
        (!points.is_empty()).then(|| Series {
            name: format!("trial {} {case} rep {}", t.id, t.rep),
            points,
            fit: false,
        })
    }

    /// One series per name, in name order, from its values grouped by x: each group
    /// one point, as `point` makes it from the group's x and values (`None`: no point).
    pub fn per_name<X>(
        by: std::collections::BTreeMap<String, std::collections::BTreeMap<X, Vec<f64>>>,
        point: impl Fn(X, Vec<f64>) -> Option<Point>,
    ) -> Vec<Series> {
        by.into_iter()
            .map(|(name, groups)| Series {
                name,
                points: groups
                    .into_iter()
                    .filter_map(|(x, v)| point(x, v))
                    .collect(),
                fit: false,
            })
            .collect()
    }
}

impl Figure {
    /// A line chart without markers, notes or group.
    pub fn line(id: &str, title: &str, labels: (&str, &str), series: Vec<Series>) -> Figure {
        Figure {
            id: id.into(),
            title: title.into(),
            x_label: labels.0.into(),
            y_label: labels.1.into(),
            kind: Kind::Line,
            series,
            categories: vec![],
            markers: vec![],
            spans: vec![],
            overlay: None,
            notes: vec![],
            group: None,
        }
    }

    /// Nothing to draw: no point, or every value (and CI) is zero (a metric that was
    /// not measured reads as 0, which is not a result).
    pub fn no_data(&self) -> bool {
        self.series
            .iter()
            .filter(|s| !s.fit)
            .flat_map(|s| s.points.iter())
            .all(|p| p.y == 0.0 && p.ci95.unwrap_or(0.0) == 0.0)
    }
}

/// A table of text cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(title: impl Into<String>, columns: &[&str], rows: Vec<Vec<String>>) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
        }
    }
}

/// What a cost fit measures per packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Estimator {
    /// 1e9 / received pps: the wall-clock time the whole path takes per packet.
    #[serde(rename = "time-per-packet")]
    TimePerPacket,
    /// Kernel CPU time (system + softirq + irq) on the data path's CPUs per received
    /// packet, from the 5-Hz samples (`model::cpu_ns_per_packet`).
    #[serde(rename = "cpu-time-per-packet")]
    CpuTimePerPacket,
}

impl Estimator {
    /// Both, in the order they are reported.
    pub const ALL: [Estimator; 2] = [Estimator::TimePerPacket, Estimator::CpuTimePerPacket];

    /// The per-trial metric it fits.
    pub fn metric(self) -> &'static str {
        match self {
            Estimator::TimePerPacket => "ns_per_packet",
            // `model::CPU_NS_PER_PACKET` (a layer above: a test checks they agree).
            Estimator::CpuTimePerPacket => "cpu_ns_per_packet",
        }
    }

    /// Its name in tables and notes.
    pub fn label(self) -> &'static str {
        match self {
            Estimator::TimePerPacket => "1/pps",
            Estimator::CpuTimePerPacket => "CPU time",
        }
    }

    /// The estimator of every headline cost per rule: 1/pps, measured in every packet
    /// trial (CPU time needs the samples), what a rule costs the traffic's throughput.
    /// Fixed, so that two runs of one scenario state the same quantity (the headline
    /// was once the tighter of the two, and switched between runs); the other
    /// estimator is stated beside it. The one exception, named wherever it is stated: a
    /// series whose gateway set the rate at fewer than three rule counts (a paced stream
    /// passed whole at the others has no 1/pps of the gateway's) is headed by CPU time.
    pub const HEADLINE: Estimator = Estimator::TimePerPacket;

    /// The other one, stated beside the headline.
    pub fn other(self) -> Estimator {
        match self {
            Estimator::TimePerPacket => Estimator::CpuTimePerPacket,
            Estimator::CpuTimePerPacket => Estimator::TimePerPacket,
        }
    }
}

/// One estimator's cost line over a series' trials.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostEstimate {
    pub estimator: Estimator,
    /// Weighted least squares, the trials as the unit (see
    /// [`crate::stats::fit_line_weighted`]).
    pub fit: WeightedFit,
    /// Ordinary least squares over the same trials, for comparison.
    pub unweighted: Option<LineFit>,
    /// The measured point at the fewest rules: (rules, summary over its repetitions);
    /// the line is checked against it.
    pub first: Option<(f64, Summary)>,
    /// Why the line does not describe the data (a negative intercept, or one that
    /// disagrees with the measured first point); `None` when it checks out.
    pub problem: Option<String>,
}

impl CostEstimate {
    /// The headline among a series' estimates: [`Estimator::HEADLINE`]'s when it was
    /// fitted (whether its line checks out or not: a line that does not is answered by
    /// the segments), else the first.
    pub fn headline_of(estimates: &[CostEstimate]) -> Option<&CostEstimate> {
        estimates
            .iter()
            .find(|e| e.estimator == Estimator::HEADLINE)
            .or_else(|| estimates.first())
    }

    /// CI half-width of b relative to |b| (`None` without a CI or with b = 0).
    pub fn relative_ci(&self) -> Option<f64> {
        let l = &self.fit.line;
        l.b_ci95.filter(|_| l.b != 0.0).map(|c| c / l.b.abs())
    }

    /// "95 % CI over N trials at K rule counts", plus how single repetitions were
    /// weighted when there are any.
    pub fn basis(&self) -> String {
        let f = &self.fit;
        let mut s = format!(
            "95 % CI over {} trials at {} rule counts",
            f.line.n, f.points
        );
        if f.single == f.points {
            s.push_str(
                "; one repetition per rule count: weights ∝ 1/t², the CI from the residuals alone",
            );
        } else if f.single > 0 {
            s.push_str(&format!(
                "; {} rule count(s) with one repetition weighted by the pooled relative spread",
                f.single
            ));
        }
        s
    }
}

/// Cost model of one series: time per packet t = a + b·rules, b in ns per rule per packet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostFit {
    pub series: String,
    /// Distinct rule counts fitted.
    pub rule_counts: usize,
    /// The headline line: that of `estimator` (weighted; x = rules, y in ns).
    pub fit: LineFit,
    /// The estimator of the headline: [`Estimator::HEADLINE`] where it was fitted (see
    /// [`CostEstimate::headline_of`]), the same in every run; CPU time where 1/pps had
    /// too few rule counts at which the gateway set the rate (paced repetitions passed
    /// whole are no 1/pps of the gateway's).
    pub estimator: Estimator,
    /// Every estimator that could be fitted (1/pps where the gateway set the rate at
    /// three rule counts or more; CPU time with samples).
    pub estimates: Vec<CostEstimate>,
    /// Two-segment knee of received pps vs rules (see [`crate::stats::knee_piecewise`]).
    pub knee_rules: Option<f64>,
    /// The same knee with its interval and what the interval is over (see
    /// [`crate::stats::knee_with_interval`]).
    pub knee: Option<crate::stats::Knee>,
    /// Degradation point where the drop is measured (see
    /// [`crate::stats::degradation_measured`]): (the rule count before, the first whose
    /// mean is more than 5 % below the fewest-rules one with a Welch CI that excludes 0).
    pub degradation: Option<(f64, f64)>,
}

impl CostFit {
    /// The headline's estimate.
    pub fn headline(&self) -> Option<&CostEstimate> {
        self.estimates
            .iter()
            .find(|e| e.estimator == self.estimator)
    }

    /// The degradation point if the grid places it: `Ok((last good, first degraded))`,
    /// or `Err(first degraded)` when the rate is already down at the second rule count
    /// (a coarse grid only says "before it").
    pub fn degradation_placed(&self) -> Option<Result<(f64, f64), f64>> {
        let (good, bad) = self.degradation?;
        let x0 = self
            .estimates
            .iter()
            .filter_map(|e| e.first.map(|f| f.0))
            .reduce(f64::min);
        Some(if x0 == Some(good) {
            Err(bad)
        } else {
            Ok((good, bad))
        })
    }

    /// The estimate of an estimator, if fitted.
    pub fn estimate(&self, e: Estimator) -> Option<&CostEstimate> {
        self.estimates.iter().find(|x| x.estimator == e)
    }
}

/// The cost per rule of one series per segment between its rule counts (see
/// [`crate::segments`]), by one estimator: the answer where one line does not fit, and
/// the only one with two rule counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesSegments {
    pub series: String,
    pub estimator: Estimator,
    /// Between each pair of adjacent rule counts.
    pub adjacent: Vec<Segment>,
    /// The adjacent ones merged while their CIs overlap: more than one where the cost
    /// per rule changes.
    pub merged: Vec<Segment>,
}

impl SeriesSegments {
    /// The segments of `series` from `(rules, [value per repetition])` groups of
    /// `estimator`'s metric; `None` with fewer than two rule counts.
    pub fn of(
        series: &str,
        estimator: Estimator,
        groups: &[(f64, Vec<f64>)],
    ) -> Option<SeriesSegments> {
        let adjacent = segments::adjacent(groups);
        (!adjacent.is_empty()).then(|| SeriesSegments {
            series: series.into(),
            estimator,
            merged: segments::merged(groups),
            adjacent,
        })
    }
}

/// Choices a reader makes when asking for a report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// The reference of the advantage ratio: `ENGINE` or `ENGINE/FAMILY` (an nft table
    /// family: `nft/ip`); `None`: the study's (seed 002: nftables, so the ratio reads as
    /// "iptables' advantage over nftables").
    pub reference: Option<String>,
}

/// Everything chosen for one run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Analysis {
    /// The run's answer in sentences with numbers and CIs, shown before everything
    /// else (see `findings`).
    pub findings: Vec<String>,
    pub figures: Vec<Figure>,
    pub tables: Vec<Table>,
    pub fits: Vec<CostFit>,
    /// Each series' cost per rule per segment ([`Estimator::HEADLINE`]'s values), in
    /// the order of the series; beside `fits` (a series with two rule counts has no fit).
    pub segments: Vec<SeriesSegments>,
    /// Per series, the repetitions its cost model left out and why: fwbench's own
    /// sender or sink limited them (their rates are not the gateway's), or, from the
    /// time per packet (1/pps), they passed every packet offered (the sender's pace).
    pub left_out: std::collections::BTreeMap<String, LeftOut>,
    /// The numbers the findings state with their CIs, each under a key that names it
    /// the same way in every run of the design (see [`Claim`]).
    pub claims: Vec<Claim>,
}

/// What a series' cost model left out: the repetitions fwbench's own sender or sink
/// limited, and those the time per packet (1/pps) leaves out for passing every packet
/// offered, said in `text`; `flagged` when at some rule count fwbench limited more
/// than half (what is left there is no fair sample: the cost is then no finding),
/// `paced_flagged` when more than half passed every packet offered and some were kept
/// (those kept are the slower ones: the 1/pps cost is no finding; CPU time keeps them
/// all).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftOut {
    /// Which trials and why ("3 trials (at 0 rules) limited by fwbench's sink, …").
    pub what: String,
    /// `what`, with what it means for the trials kept (and the flags).
    pub text: String,
    pub flagged: bool,
    pub paced_flagged: bool,
}

impl LeftOut {
    /// Why `estimator`'s cost over the kept trials is no fair sample (`None`: it is).
    pub fn flag_of(&self, estimator: Estimator) -> Option<&'static str> {
        if self.flagged {
            Some("more than half the trials at a rule count limited by fwbench")
        } else if self.paced_flagged && estimator == Estimator::TimePerPacket {
            Some(
                "more than half the trials at a rule count passed every packet offered, the \
                 ones kept the slower",
            )
        } else {
            None
        }
    }
}

/// One number a finding states, with the CI it states: what a second run of the same
/// design is checked against (`scripts/seed-check.sh`: a fresh run *matches* when each
/// claim's difference is within both runs' stated noise).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    /// Names the number in every run of the same design: its kind and its series,
    /// case or row — never a measured value.
    pub key: String,
    pub value: f64,
    /// Half-width of the 95 % CI the finding states; `None` when it states none.
    pub ci95: Option<f64>,
    pub unit: String,
    /// What the CI is over ("repetitions", "a line's residuals", "pairs").
    pub over: String,
    /// Why the number is not stated as a finding (a ratio whose CI includes 1: "no
    /// measurable difference"); absent when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doubt: Option<String>,
}

impl Claim {
    pub fn new(key: String, value: f64, ci95: Option<f64>, unit: &str, over: String) -> Self {
        Claim {
            key,
            value,
            ci95: ci95.filter(|c| c.is_finite()),
            unit: unit.into(),
            over,
            doubt: None,
        }
    }

    /// The claim with the reason it is not a finding.
    pub fn doubted(self, why: Option<String>) -> Self {
        Claim { doubt: why, ..self }
    }

    /// A figure's point (its mean and CI) as a claim.
    pub fn at(key: String, p: &Point, unit: &str, over: &str) -> Self {
        Claim::new(key, p.y, p.ci95, unit, over.into())
    }
}

impl crate::stats::Knee {
    /// "4000 (95 % CI 3500–4600, bootstrap over repetitions, knee in 990 of 1000
    /// resamples)" or "4000 (between the measured 3000 and 5000 rules: one repetition,
    /// no bootstrap)".
    pub fn text(&self) -> String {
        match self.basis {
            crate::stats::KneeBasis::Bootstrap { resamples, found } => format!(
                "{} (95 % CI {}–{}, bootstrap over repetitions, a knee in {found} of \
                 {resamples} resamples)",
                num(self.rules),
                num(self.lo),
                num(self.hi)
            ),
            crate::stats::KneeBasis::Bracket => format!(
                "{} (between the measured {} and {} rules; one repetition: no bootstrap)",
                num(self.rules),
                num(self.lo),
                num(self.hi)
            ),
        }
    }
}

/// The words after a slope whose 95 % CI includes 0 (`None` where it excludes 0). The
/// CI's upper end (b + half-width) is what the data still allows; over the largest rule
/// count fitted it adds `share` to the time at 0 rules (a). Flat only where that share is
/// at most what a degradation would be (a [`crate::stats::DEGRADED_DROP`] drop in
/// packets/s: +5.26 % time per packet), else not measurable, with how much the CI
/// allows: a CI that includes 0 because it is wide is no finding. `upper` formats the
/// upper end per rule (and the half-width, to round it to) in the sentence's unit.
pub(crate) fn zero_slope_words(
    l: &LineFit,
    x_max: f64,
    upper: impl Fn(f64, f64) -> String,
    time_of: &str,
) -> Option<String> {
    let c = l.b_ci95.filter(|c| l.b.abs() <= *c)?;
    let up = l.b + c;
    let allowed = format!("{} per rule", upper(up, c));
    if !(l.a > 0.0 && x_max > 0.0) {
        return Some(format!(
            " — not measurable: the CI includes 0 and allows up to {allowed}"
        ));
    }
    let share = up * x_max / l.a;
    let pct = share * 100.0;
    let pct = if pct >= 10.0 {
        format!("{pct:.0}")
    } else {
        format!("{pct:.1}")
    };
    let at = format!("+{pct} % of {time_of} at {} rules", num(x_max));
    // A drop of DEGRADED_DROP in packets/s is this much more time per packet.
    let degraded = 1.0 / (1.0 - crate::stats::DEGRADED_DROP) - 1.0;
    Some(if share <= degraded {
        format!(" — flat: the CI includes 0 and allows at most {allowed}, {at}")
    } else {
        format!(
            " — not measurable: the CI includes 0 but allows up to {allowed}, {at}; more \
             repetitions or rule counts would narrow it"
        )
    })
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

/// "mean ± ci" rounded to the CI's significant digits (just the mean without a CI).
/// The one way fwbench prints a value with its CI: see [`round_ci`].
pub fn mean_ci(mean: f64, ci: Option<f64>) -> String {
    match ci.and_then(|c| round_ci(mean, c)) {
        Some((m, c)) => format!("{m} ± {c}"),
        None => match ci {
            Some(c) if c.is_finite() => format!("{} ± {}", num(mean), num(c)),
            _ => num(mean),
        },
    }
}

/// A number printed to the decimal place of a CI (a sample's minimum beside its mean ±
/// CI, a ratio repeated in words); as [`num`] without a CI.
pub fn at_place_of(v: f64, ci: Option<f64>) -> String {
    match ci.and_then(|c| round_ci(v, c)) {
        Some((v, _)) => v,
        None => num(v),
    }
}

/// A value and its CI half-width as text, the CI to two significant digits and the
/// value to the same decimal place: (4.961, 0.2747) → ("4.96", "0.27"), (0.01327,
/// 0.02608) → ("0.013", "0.026"), (123456, 2747) → ("123500", "2700"). `None` when the
/// CI is not a positive finite number or the value not finite.
pub fn round_ci(value: f64, ci: f64) -> Option<(String, String)> {
    if !(ci.is_finite() && ci > 0.0 && value.is_finite()) {
        return None;
    }
    // The decimal place of the CI's second significant digit.
    // (Nine decimals at most: a CI that small next to its value reads as 0.)
    let mut place = (ci.log10().floor() as i32 - 1).max(-9);
    // A CI that rounds up to the next power of ten (0.0999 → 0.100) has its two
    // significant digits one place further left (0.10).
    if (ci / 10f64.powi(place)).round() >= 100.0 {
        place += 1;
    }
    let scale = 10f64.powi(place);
    let round = |x: f64| (x / scale).round() * scale;
    let decimals = (-place).max(0) as usize;
    let text = |x: f64| {
        let t = format!("{x:.decimals$}");
        // "-0.00" reads as a sign that is not there.
        if t.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            t.trim_start_matches('-').to_string()
        } else {
            t
        }
    };
    Some((text(round(value)), text(round(ci))))
}

/// Why a ratio with its 95 % CI half-width is no measured difference: its CI includes 1
/// ("the 95 % CI includes 1"), or it has no CI (one repetition); `None` when the CI
/// excludes 1.
pub fn ratio_doubt(r: f64, ci: Option<f64>) -> Option<String> {
    match ci {
        Some(c) if (r - 1.0).abs() > c => None,
        Some(_) => Some("its 95 % CI includes 1: no measurable difference".into()),
        None => Some("one repetition: no CI, not a measured difference".into()),
    }
}

/// Why a cost (in %) against a baseline is no measurable cost (a difference between
/// two rows, either way: a row beyond the study may be cheaper), or `None` when it is
/// one ([`results::Figure::difference`]).
pub(crate) fn unmeasured(v: f64, ci: Option<f64>) -> Option<&'static str> {
    unmeasured_kind(v, ci).map(|k| match k {
        results::DoubtKind::SpansZero => "its 95 % CI includes 0",
        results::DoubtKind::TooFew => "no CI, too few repetitions",
        _ => "not a number",
    })
}

/// The doubt that makes a difference `v ± ci` no measurable one, by kind (each caller
/// words [`results::DoubtKind::TooFew`] for what its CI is over).
pub(crate) fn unmeasured_kind(v: f64, ci: Option<f64>) -> Option<results::DoubtKind> {
    let f = results::Figure::difference(v, ci.map(results::Ci::ci95), results::Basis::Trial);
    f.doubts.first().map(|d| d.kind)
}

/// A cost in the table: its value and CI, marked where it is no measurable cost.
pub(crate) fn cost_cell((v, ci): (f64, Option<f64>)) -> String {
    match unmeasured(v, ci) {
        None => mean_ci(v, ci),
        Some(why) => format!("{} (not measurable: {why})", mean_ci(v, ci)),
    }
}

/// A table cell where no cost is stated at all, and why (a paced row, a withheld
/// comparison).
pub(crate) fn withheld_cell(why: &str) -> String {
    format!("- (not measurable: {why})")
}

/// ", outside its 95 % CI: this machine differs" / ", within the CI" / "" without a CI.
pub fn differs(v: f64, ci: Option<f64>, study: f64) -> String {
    match ci {
        Some(c) if (v - study).abs() > c => {
            " — outside this run's 95 % CI: this machine differs from the study".into()
        }
        Some(_) => " — within this run's 95 % CI".into(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_rounded_to_their_cis_significant_digits() {
        assert_eq!(mean_ci(4.961, Some(0.2747)), "4.96 ± 0.27");
        assert_eq!(mean_ci(0.01327, Some(0.02608)), "0.013 ± 0.026");
        assert_eq!(mean_ci(123456.0, Some(2747.0)), "123500 ± 2700");
        assert_eq!(mean_ci(-0.0004, Some(0.013)), "0.000 ± 0.013");
        // A CI that rounds up to the next power of ten keeps two significant digits.
        assert_eq!(mean_ci(-3.24159, Some(0.0999)), "-3.24 ± 0.10");
        assert_eq!(mean_ci(52.09, Some(0.998)), "52.1 ± 1.0");
        assert_eq!(mean_ci(123456.0, Some(99.7)), "123460 ± 100");
        assert_eq!(mean_ci(980.4, Some(15.0)), "980 ± 15");
        assert_eq!(mean_ci(2.5, None), "2.5");
        assert_eq!(mean_ci(2.5, Some(0.0)), "2.5 ± 0");
        assert_eq!(round_ci(1.0, f64::NAN), None);
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(12345.0), "12345");
        assert_eq!(num(2.51234), "2.512");
        assert_eq!(num(0.012345), "0.01235");
        assert_eq!(mean_ci(10.0, Some(0.5)), "10.00 ± 0.50");
    }
}
