//! The witness of a number: every figure fwbench states travels with why it may be
//! believed — over what its spread was measured ([`Basis`]), who limited it
//! ([`LimitedBy`]), what it was compared with, its confidence interval ([`Ci`]) — or
//! why not ([`Doubt`]). A [`Figure`] with a doubt is never a finding: it is printed with
//! its reasons (terminal, JSON, store, report) or left out, never as a plain number.
//!
//! Owns: the witness types and the generic rules every family shares (a difference
//! whose CI spans zero is not a difference; an impossible value is withheld).
//! Must not: decide a family's own doubts (its figures do, in their module).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A two-sided confidence interval, as a half-width around the figure's value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ci {
    /// Half-width, in the figure's unit.
    pub half: f64,
    /// Coverage, e.g. 0.95.
    pub level: f64,
}

impl Ci {
    /// A 95 % interval of half-width `half`.
    pub fn ci95(half: f64) -> Ci {
        Ci { half, level: 0.95 }
    }

    /// Whether `value ± half` includes 0 (a difference it cannot tell from none).
    pub fn spans_zero(&self, value: f64) -> bool {
        !(self.half.is_finite() && value.abs() > self.half)
    }
}

/// Over what a figure's spread (and so its CI) was measured. Only
/// [`Basis::Repetitions`] says what a rerun would give: windows inside one trial are
/// autocorrelated and miss placement and residue effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "over", rename_all = "snake_case")]
pub enum Basis {
    /// One count or rate over one trial's traffic phase: no spread of its own.
    Trial,
    /// Trials of one configuration, interleaved, each on a clean gateway.
    Repetitions { n: u32 },
    /// Windows of one trial's traffic phase.
    Windows { n: u32, width_ms: u32 },
    /// The steps of a search (each a trial of its own).
    Steps { n: u32 },
}

impl Basis {
    /// What a reader is told the CI is over, e.g. "over 3 repetitions".
    pub fn describe(&self) -> String {
        match self {
            Basis::Trial => "one trial".into(),
            Basis::Repetitions { n } => format!("over {n} repetitions"),
            Basis::Windows { n, width_ms } => {
                format!("over {n} windows of {width_ms} ms in one trial")
            }
            Basis::Steps { n } => format!("over {n} search steps"),
        }
    }
}

/// Which stage set a rate: what a packet-rate figure measured the capacity of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitedBy {
    /// fwbench's own sender: the number is not the gateway's.
    Sender,
    Gateway,
    /// fwbench's own sink: the number is not the gateway's.
    Sink,
    /// The offered rate got through: the gateway's limit is above it.
    Nothing,
    /// Sender and gateway shared a CPU: no clean verdict.
    SharedCpu,
}

impl LimitedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitedBy::Sender => "sender",
            LimitedBy::Gateway => "gateway",
            LimitedBy::Sink => "sink",
            LimitedBy::Nothing => "nothing",
            LimitedBy::SharedCpu => "shared-cpu",
        }
    }

    /// Limited by fwbench itself (its sender or sink): not the gateway's number.
    pub fn is_fwbench(self) -> bool {
        match self {
            LimitedBy::Sender | LimitedBy::Sink => true,
            LimitedBy::Gateway | LimitedBy::Nothing | LimitedBy::SharedCpu => false,
        }
    }
}

/// A kind of reason a figure may not be believed. Each names a condition that makes
/// the number meaningless or unproven; the [`Doubt`] carrying it says the particulars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DoubtKind {
    /// No traffic in the figure's window (nothing was measured).
    EmptyWindow,
    /// The gateway could not carry the load (before an event: what happens during
    /// it cannot be told from what happened anyway; a max-rate flood: its rate is no
    /// capacity).
    Overloaded,
    /// Trials of one answer contradict each other (a pass above a fail).
    Contradiction,
    /// A difference whose CI includes 0: no measurable difference.
    SpansZero,
    /// The rule counters do not account for the traffic (the firewall did not do
    /// what the trial assumed).
    VerdictMismatch,
    /// fwbench's own sender or sink set the rate, not the gateway.
    LimitedByFwbench,
    /// A search that did not converge.
    NotConverged,
    /// A value that cannot be (a negative time, a rate above the offered one).
    Impossible,
    /// Loss where the figure assumes none (a latency step at a "zero-loss" rate).
    UnexpectedLoss,
    /// A model that does not fit its data (lack of fit, a negative intercept).
    BadFit,
    /// The gateway did not start in the testbed's first state.
    DirtyStart,
    /// The event outlasted the traffic: its effect was not observed.
    Unobserved,
    /// Too few measurements for the figure's spread.
    TooFew,
    /// The machine's other load took much of the CPU the measured path ran on: the
    /// rate is the share the path got, neither fwbench's limit nor the gateway's.
    Disturbed,
    /// The probe was too sparse for the figure: a shorter event goes unseen.
    TooCoarse,
    /// A gateway update the trial was to measure failed or did not run: the traffic
    /// did not see the event asked for.
    UpdateFailed,
    /// The one-way delay grew through the trial: a queue filled at its rate, which
    /// passed without loss only while the queue lasted (a short trial's zero loss, not
    /// a rate the gateway sustains).
    QueueGrowing,
}

impl DoubtKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DoubtKind::EmptyWindow => "empty window",
            DoubtKind::Overloaded => "overloaded",
            DoubtKind::Contradiction => "contradicting trials",
            DoubtKind::SpansZero => "CI spans zero",
            DoubtKind::VerdictMismatch => "verdict mismatch",
            DoubtKind::LimitedByFwbench => "limited by fwbench",
            DoubtKind::NotConverged => "not converged",
            DoubtKind::Impossible => "impossible value",
            DoubtKind::UnexpectedLoss => "unexpected loss",
            DoubtKind::BadFit => "bad fit",
            DoubtKind::DirtyStart => "dirty start",
            DoubtKind::Unobserved => "unobserved",
            DoubtKind::TooFew => "too few measurements",
            DoubtKind::Disturbed => "disturbed",
            DoubtKind::TooCoarse => "probe too coarse",
            DoubtKind::UpdateFailed => "update failed",
            DoubtKind::QueueGrowing => "queue growing",
        }
    }
}

/// Why a figure may not be believed: its kind and the particulars a user needs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Doubt {
    pub kind: DoubtKind,
    /// E.g. "the gateway lost 95 % of the background before the update".
    pub why: String,
}

impl Doubt {
    pub fn new(kind: DoubtKind, why: impl Into<String>) -> Doubt {
        Doubt {
            kind,
            why: why.into(),
        }
    }
}

impl fmt::Display for Doubt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.why)
    }
}

/// A number and its witness. `value` is absent when nothing meaningful could be
/// measured (then `doubts` says why); present with doubts, it is shown flagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure<T> {
    #[serde(default = "Option::default", skip_serializing_if = "Option::is_none")]
    pub value: Option<T>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<Ci>,
    pub basis: Basis,
    /// Which stage set it (rates), where judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<LimitedBy>,
    /// What it was compared with (a baseline configuration, a window before the event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<Doubt>,
}

impl<T> Figure<T> {
    /// A measured value over `basis`, no doubt yet.
    pub fn measured(value: T, basis: Basis) -> Figure<T> {
        Figure {
            value: Some(value),
            ci: None,
            basis,
            limited_by: None,
            baseline: None,
            doubts: vec![],
        }
    }

    /// No value: nothing meaningful was measured, for this reason.
    pub fn absent(basis: Basis, doubt: Doubt) -> Figure<T> {
        Figure {
            value: None,
            ci: None,
            basis,
            limited_by: None,
            baseline: None,
            doubts: vec![doubt],
        }
    }

    pub fn with_ci(mut self, ci: Option<Ci>) -> Figure<T> {
        self.ci = ci;
        self
    }

    pub fn with_baseline(mut self, baseline: impl Into<String>) -> Figure<T> {
        self.baseline = Some(baseline.into());
        self
    }

    /// Record who set the figure; fwbench's own sender or sink adds a doubt (the
    /// number is not the gateway's).
    pub fn limited(mut self, by: LimitedBy) -> Figure<T> {
        self.limited_by = Some(by);
        if by.is_fwbench() {
            self.doubts.push(Doubt::new(
                DoubtKind::LimitedByFwbench,
                format!("the rate was set by fwbench's {}", by.as_str()),
            ));
        }
        self
    }

    /// Add a doubt (kept once per kind and text).
    pub fn doubt(mut self, kind: DoubtKind, why: impl Into<String>) -> Figure<T> {
        let d = Doubt::new(kind, why);
        if !self.doubts.contains(&d) {
            self.doubts.push(d);
        }
        self
    }

    /// Add a doubt when `cond` holds.
    pub fn doubt_if(self, cond: bool, kind: DoubtKind, why: impl FnOnce() -> String) -> Self {
        if cond {
            self.doubt(kind, why())
        } else {
            self
        }
    }

    /// The value and its witness hold: it may be stated as a finding.
    pub fn holds(&self) -> bool {
        self.value.is_some() && self.doubts.is_empty()
    }

    /// The value, only when it may be stated as a finding.
    pub fn finding(&self) -> Option<&T> {
        self.value.as_ref().filter(|_| self.doubts.is_empty())
    }

    /// The doubts in one line ("" when none).
    pub fn reasons(&self) -> String {
        self.doubts
            .iter()
            .map(Doubt::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The figure for a reader: the value as `show` writes it and its CI, flagged
    /// with its doubts; or "—" with why there is none.
    pub fn text(&self, show: impl Fn(&T) -> String) -> String {
        match (&self.value, self.doubts.is_empty()) {
            (Some(v), true) => show(v),
            (Some(v), false) => format!("{} (flagged: {})", show(v), self.reasons()),
            (None, _) => format!("— ({})", self.reasons()),
        }
    }
}

impl Figure<f64> {
    /// A difference (a cost, a saving, a change): one whose CI spans 0 is "no
    /// measurable difference", a doubt; a value that is not finite is withheld.
    pub fn difference(value: f64, ci: Option<Ci>, basis: Basis) -> Figure<f64> {
        if !value.is_finite() {
            return Figure::absent(
                basis,
                Doubt::new(DoubtKind::Impossible, format!("not a number ({value})")),
            );
        }
        let f = Figure::measured(value, basis).with_ci(ci);
        match ci {
            Some(c) if c.spans_zero(value) => f.doubt(
                DoubtKind::SpansZero,
                format!("no measurable difference (± {})", round_sig(c.half, 2)),
            ),
            Some(_) => f,
            None => f.doubt(
                DoubtKind::TooFew,
                "no CI: too few repetitions to tell it from none",
            ),
        }
    }

    /// What adding work (a firewall, a translation, rules) costs over the same path
    /// without it: a [`Figure::difference`] that, measured below 0 (its CI clear of 0),
    /// is flagged — more work cannot make a packet cheaper, so a "saving" is the
    /// testbed's drift between the trials (their order, the machine's other load), not
    /// a cost (the NAT study's filler rules "added −280 ± 240 ns per packet").
    pub fn added_cost(value: f64, ci: Option<Ci>, basis: Basis) -> Figure<f64> {
        let f = Figure::difference(value, ci, basis);
        let below = f.doubts.is_empty() && value < 0.0;
        f.doubt_if(below, DoubtKind::Impossible, || {
            "below the path without it, though it adds work: the testbed drifted between \
             the trials (their order, the machine's other load) — noise, not a saving"
                .to_string()
        })
    }

    /// A quantity that cannot be negative (a time, a count, a rate): a negative value
    /// is withheld with why.
    pub fn non_negative(value: f64, basis: Basis, what: &str) -> Figure<f64> {
        if value.is_finite() && value >= 0.0 {
            Figure::measured(value, basis)
        } else {
            Figure::absent(
                basis,
                Doubt::new(
                    DoubtKind::Impossible,
                    format!("{what} of {value} cannot be (withheld)"),
                ),
            )
        }
    }

    /// `value ± half` (the CI) by `show`, or the value alone.
    pub fn with_ci_text(&self, show: impl Fn(f64) -> String) -> String {
        self.text(|v| match self.ci {
            Some(c) => format!("{} ± {}", show(*v), show(c.half)),
            None => show(*v),
        })
    }
}

/// `x` to `digits` significant digits (for messages).
fn round_sig(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let p = digits - 1 - x.abs().log10().floor() as i32;
    let m = 10f64.powi(p);
    (x * m).round() / m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_whose_ci_spans_zero_is_not_a_finding() {
        // rules advise's "saving 10657 ± 13459 ns": no measurable saving.
        let f = Figure::difference(
            10657.0,
            Some(Ci::ci95(13459.0)),
            Basis::Repetitions { n: 3 },
        );
        assert_eq!(f.finding(), None);
        assert!(!f.holds());
        assert_eq!(f.doubts[0].kind, DoubtKind::SpansZero);
        assert!(
            f.reasons().contains("no measurable difference (± 13000)"),
            "{}",
            f.reasons()
        );
        // −9000 ± 47000 ns (the NAT cost): likewise.
        let g = Figure::difference(
            -9000.0,
            Some(Ci::ci95(47000.0)),
            Basis::Repetitions { n: 3 },
        );
        assert!(g.finding().is_none());
        // 5.0 ± 0.4: a difference.
        let h = Figure::difference(5.0, Some(Ci::ci95(0.4)), Basis::Repetitions { n: 3 });
        assert_eq!(h.finding(), Some(&5.0));
        // No CI at all (one repetition): not shown as a difference either.
        let i = Figure::difference(5.0, None, Basis::Trial);
        assert_eq!(i.doubts[0].kind, DoubtKind::TooFew);
        // A CI exactly as wide as the value includes 0.
        assert!(Ci::ci95(5.0).spans_zero(-5.0));
        assert!(!Ci::ci95(4.9).spans_zero(-5.0));
        assert!(Ci::ci95(f64::NAN).spans_zero(1.0));
    }

    #[test]
    fn impossible_values_are_withheld_with_why() {
        let f = Figure::non_negative(-50.04, Basis::Trial, "a time to effect");
        assert_eq!(f.value, None);
        assert_eq!(f.doubts[0].kind, DoubtKind::Impossible);
        assert_eq!(
            f.text(|v| format!("{v} ms")),
            "— (impossible value: a time to effect of -50.04 cannot be (withheld))"
        );
        assert_eq!(
            Figure::non_negative(0.0, Basis::Trial, "t").finding(),
            Some(&0.0)
        );
        // Added work measured below the path without it: flagged, not a saving.
        let saving = Figure::added_cost(-280.0, Some(Ci::ci95(240.0)), Basis::Trial);
        assert!(!saving.holds(), "{saving:?}");
        assert_eq!(saving.doubts[0].kind, DoubtKind::Impossible);
        assert!(Figure::added_cost(280.0, Some(Ci::ci95(240.0)), Basis::Trial).holds());
        let noise = Figure::added_cost(-80.0, Some(Ci::ci95(240.0)), Basis::Trial);
        assert_eq!(noise.doubts.len(), 1, "{noise:?}");
        assert_eq!(noise.doubts[0].kind, DoubtKind::SpansZero);
        let n = Figure::difference(f64::INFINITY, None, Basis::Trial);
        assert_eq!(n.value, None);
    }

    #[test]
    fn limited_by_fwbench_is_a_doubt_and_the_text_flags_it() {
        let f = Figure::measured(1200.0, Basis::Trial).limited(LimitedBy::Sender);
        assert!(f.finding().is_none());
        assert_eq!(
            f.text(|v| format!("{v} pps")),
            "1200 pps (flagged: limited by fwbench: the rate was set by fwbench's sender)"
        );
        let g = Figure::measured(1200.0, Basis::Trial).limited(LimitedBy::Gateway);
        assert_eq!(g.finding(), Some(&1200.0));
        assert_eq!(g.text(|v| format!("{v} pps")), "1200 pps");
        // A doubt is kept once.
        let h = g
            .clone()
            .doubt(DoubtKind::EmptyWindow, "x")
            .doubt(DoubtKind::EmptyWindow, "x");
        assert_eq!(h.doubts.len(), 1);
        assert!(g
            .doubt_if(false, DoubtKind::BadFit, || unreachable!())
            .holds());
    }

    #[test]
    fn the_stored_form_round_trips_and_reads_old_minimal_json() {
        let f = Figure::difference(
            -3.0,
            Some(Ci::ci95(1.0)),
            Basis::Windows {
                n: 5,
                width_ms: 200,
            },
        )
        .with_baseline("the window before the update")
        .limited(LimitedBy::Gateway);
        let j = serde_json::to_string(&f).unwrap();
        assert_eq!(
            j,
            r#"{"value":-3.0,"ci":{"half":1.0,"level":0.95},"basis":{"over":"windows","n":5,"width_ms":200},"limited_by":"gateway","baseline":"the window before the update"}"#
        );
        let back: Figure<f64> = serde_json::from_str(&j).unwrap();
        assert_eq!(back, f);
        let bare: Figure<f64> = serde_json::from_str(r#"{"basis":{"over":"trial"}}"#).unwrap();
        assert_eq!(bare.value, None);
        assert!(!bare.holds());
        assert_eq!(
            Basis::Windows {
                n: 5,
                width_ms: 200
            }
            .describe(),
            "over 5 windows of 200 ms in one trial"
        );
    }
}
