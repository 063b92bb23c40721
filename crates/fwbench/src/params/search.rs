//! Parameters of the searches made of trials (ndr/pdr over the offered rate, the
//! degradation point over the rule count).

use crate::params::values::ValueError;
use crate::params::workload::Workload;
use crate::params::Conflict;
use crate::params::TrialParams;
use proto::Rate;
use serde::{Deserialize, Serialize};

/// A search of stored step trials over one kind: the trial's strategy, not its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Search {
    /// RFC 2544 throughput: flood steps at searched rates.
    Ndr(SearchParams),
    /// Degradation point: flow steps at searched rule counts.
    Degrade(SearchParams),
    /// MLRsearch: flood steps, short first, for several goal loss ratios at once.
    Mlr(SearchParams),
    /// The parallelism with the most sessions/s (sessions `--parallel auto`).
    SweetSpot,
    /// The safe envelope: flow steps with gateway updates at searched update rates
    /// (`sp.envelope` holds the targets).
    Envelope(SearchParams),
}

impl Search {
    /// What the search looks for, when it has parameters (ndr, degrade).
    pub fn params(&self) -> Option<&SearchParams> {
        match self {
            Search::Ndr(sp) | Search::Degrade(sp) | Search::Mlr(sp) | Search::Envelope(sp) => {
                Some(sp)
            }
            Search::SweetSpot => None,
        }
    }
    /// The named search (its command, its `workload` axis value) that is this
    /// strategy over `w`: ndr over new flows is `ndr-newflows`, over floods `ndr`;
    /// none for the sweet spot, which keeps its workload's name. (A strategy over a
    /// workload no named search steps with would carry its first search's name.)
    pub fn kind_over(&self, w: Workload) -> Option<SearchKind> {
        let strategy = std::mem::discriminant(self);
        let mut same = SearchKind::ALL
            .into_iter()
            .filter(|k| std::mem::discriminant(&k.with(SearchParams::default())) == strategy);
        let first = same.clone().next();
        same.find(|k| k.workload() == w).or(first)
    }
}

pub use crate::params::workload::SearchKind;

impl SearchKind {
    /// This search with its parameters.
    pub fn with(self, sp: SearchParams) -> Search {
        match self {
            SearchKind::Ndr | SearchKind::NdrNewflows => Search::Ndr(sp),
            SearchKind::Degrade => Search::Degrade(sp),
            SearchKind::Mlr => Search::Mlr(sp),
            SearchKind::Envelope => Search::Envelope(sp),
        }
    }
}

/// What the `workload` axis (and a trial command) names: traffic, or a search over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Asked {
    Traffic(Workload),
    Search(SearchKind),
}

impl Asked {
    /// Every name the `workload` axis takes.
    pub fn names() -> Vec<&'static str> {
        Workload::NAMES
            .iter()
            .chain(SearchKind::NAMES)
            .copied()
            .collect()
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Asked::Traffic(w) => w.name(),
            Asked::Search(s) => s.name(),
        }
    }
    /// The traffic a trial of this name sends.
    pub fn workload(self) -> Workload {
        match self {
            Asked::Traffic(w) => w,
            Asked::Search(s) => s.workload(),
        }
    }
    pub fn search(self) -> Option<SearchKind> {
        match self {
            Asked::Traffic(_) => None,
            Asked::Search(s) => Some(s),
        }
    }
}

impl std::str::FromStr for Asked {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Self, ValueError> {
        match (s.parse::<Workload>(), s.parse::<SearchKind>()) {
            (Ok(w), _) => Ok(Asked::Traffic(w)),
            (_, Ok(k)) => Ok(Asked::Search(k)),
            (Err(_), Err(_)) => Err(ValueError::Other(format!(
                "unknown workload '{s}' (expected one of: {})",
                Asked::names().join(", ")
            ))),
        }
    }
}

impl std::fmt::Display for Asked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a search looks for and when it stops (a scenario's `loss`, `precision`,
/// `max_rate`, `max_trials`, `max_rules`, `resolution`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchParams {
    /// Loss ratio still counted as a pass: 0 = NDR.
    pub loss: f64,
    /// ndr: stop when (hi − lo) ≤ precision · hi.
    pub precision: f64,
    /// ndr: upper bound; `None` = measure it with an unpaced flood.
    pub max_rate: Option<Rate>,
    /// ndr: most search trials (the confirmation not counted).
    pub max_trials: u32,
    /// degrade: largest rule count searched.
    pub max_rules: u32,
    /// degrade: stop when the bracket is this many rules wide.
    pub resolution: u32,
    /// mlr: the goal loss ratios (empty for the other searches).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub goals: Vec<f64>,
    /// mlr: duration of the first phase's trials, s (the trial's duration is the
    /// final trials').
    pub initial_duration_s: Option<f64>,
    /// ndr, mlr: after the search, one-way delay at these fractions of the rate found
    /// (RFC 2544 latency; empty: none).
    #[serde(
        default = "default_latency_at",
        skip_serializing_if = "is_default_latency_at"
    )]
    pub latency_at: Vec<f64>,
    /// envelope: what an update rate must keep to pass (absent for the other
    /// searches, so their trial keys stay what they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope: Option<Targets>,
    /// ndr: a lossless step whose queue filled through its trial (`queue growing`)
    /// fails — `--load`'s capacity search, whose answer a background must sustain, not
    /// carry only while a queue lasts (absent, false, for the other searches: their
    /// trial keys stay what they were).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub queue_fails: bool,
}

/// What the safe envelope holds an update rate to (issue 39): every scheduled update
/// ran, their p99 latency from due to committed is at most `latency_ms`, a time to
/// effect at most `effect_ms`, and no must-drop packet passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    pub latency_ms: f64,
    pub effect_ms: f64,
    /// The highest update rate searched, updates/s.
    pub max_update_rate: f64,
}

/// The fractions of the found rate where latency is measured by default.
pub const LATENCY_AT: [f64; 4] = [0.1, 0.5, 0.9, 1.0];

fn default_latency_at() -> Vec<f64> {
    LATENCY_AT.to_vec()
}

fn is_default_latency_at(v: &[f64]) -> bool {
    v == LATENCY_AT
}

/// Fractions of the found rate: "10%,50%,90%,100%" (each in (0, 1]); "none": none.
pub fn parse_fractions(t: &str) -> Result<Vec<f64>, ValueError> {
    let t = t.trim();
    if t == "none" || t.is_empty() {
        return Ok(vec![]);
    }
    t.split(',')
        .map(|x| {
            let x = x.trim();
            let v = match x.strip_suffix('%') {
                Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
                None => x.parse::<f64>(),
            }
            .map_err(|_| {
                ValueError::Other(format!(
                    "'{x}' is not a fraction of the rate (like 50% or 0.5)"
                ))
            })?;
            if !(v > 0.0 && v <= 1.0) {
                return Err(ValueError::Other(format!(
                    "fraction '{x}' must be above 0 and at most 100% of the rate found"
                )));
            }
            Ok(v)
        })
        .collect()
}

/// mlr's goal loss ratios by default: NDR and a PDR at 0.5 %.
pub const MLR_GOALS: [f64; 2] = [0.0, 0.005];

/// Goal loss ratios: "0,0.5%" (each in [0, 1)).
pub fn parse_goals(t: &str) -> Result<Vec<f64>, ValueError> {
    let goals = t
        .split(',')
        .map(|g| crate::params::values::ratio(g.trim()))
        .collect::<Result<Vec<f64>, ValueError>>()?;
    if goals.is_empty() {
        return Err("goals: at least one loss ratio".into());
    }
    if let Some(g) = goals.iter().find(|g| !(0.0..1.0).contains(*g)) {
        return Err(ValueError::Other(format!(
            "goal loss ratio {g} is not in [0, 1)"
        )));
    }
    Ok(goals)
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            loss: 0.0,
            precision: 0.02,
            max_rate: None,
            max_trials: 20,
            max_rules: 20_000,
            resolution: 250,
            goals: vec![],
            initial_duration_s: None,
            latency_at: default_latency_at(),
            envelope: None,
            queue_fails: false,
        }
    }
}

/// Check a degradation search's parameters (bad input).
pub fn check_degrade(p: &TrialParams, sp: &SearchParams) -> Result<(), Conflict> {
    if p.engine == firewall::Engine::None {
        return Err(
            "degrade adds rules: choose an engine (iptables-legacy, iptables-nft, nft, …)".into(),
        );
    }
    if sp.max_rules == 0 {
        return Err("max_rules must be at least 1".into());
    }
    Ok(())
}

/// The lowest update rate an envelope searches, updates/s: below it a trial holds too
/// few updates for a p99.
pub const MIN_UPDATE_RATE: f64 = 0.5;

/// Check an envelope search's parameters (bad input): it varies the rate of the
/// trial's event, so it needs one event (`KIND:K@T`) with neither a rate, a count nor
/// a trace, an engine, and room for its updates.
pub fn check_envelope(p: &TrialParams, sp: &SearchParams) -> Result<(), Conflict> {
    let Some(t) = &sp.envelope else {
        return Err("envelope: no targets (latency_target, effect_target, max_update_rate)".into());
    };
    if p.engine == firewall::Engine::None {
        return Err(
            "envelope updates the rule set: choose an engine (nft, iptables-legacy, …)".into(),
        );
    }
    let Some(e) = &p.events else {
        return Err(
            "envelope searches the rate of an event: give one (e.g. event = \"add:1@1s\"; \
             --event add:1@1s)"
                .into(),
        );
    };
    if let Some(what) = [
        ("event_rate", e.rate.is_some()),
        ("event_count", e.count.is_some()),
        ("event_trace", e.trace.is_some()),
    ]
    .into_iter()
    .find_map(|(w, set)| set.then_some(w))
    {
        return Err(Conflict(format!(
            "envelope and {what}: the search sets the event's rate itself (up to \
             max_update_rate) and fills the trial with updates; leave {what} out"
        )));
    }
    if t.max_update_rate < MIN_UPDATE_RATE * 2.0 || t.max_update_rate.is_nan() {
        return Err(Conflict(format!(
            "max_update_rate {}: the search needs at least {} updates/s",
            t.max_update_rate,
            MIN_UPDATE_RATE * 2.0
        )));
    }
    let span = p.duration_s - e.at_s;
    if span < 2.0 {
        return Err(Conflict(format!(
            "envelope: the event at {} s leaves {span:.1} s of a {} s trial for updates; \
             an update rate needs at least 2 s (a longer duration, an earlier event)",
            e.at_s, p.duration_s
        )));
    }
    let most = span * t.max_update_rate;
    if most > f64::from(proto::MAX_UPDATES) {
        return Err(Conflict(format!(
            "envelope: {:.0} updates/s for {span:.1} s is {most:.0} updates, more than {} \
             a trial holds; lower max_update_rate or the duration",
            t.max_update_rate,
            proto::MAX_UPDATES
        )));
    }
    if !(t.latency_ms > 0.0 && t.effect_ms > 0.0) {
        return Err("envelope: latency_target and effect_target must be above 0".into());
    }
    Ok(())
}
