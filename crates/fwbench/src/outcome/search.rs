//! What a search found, as stored (`results.search`) and printed: the result types of
//! ndr/pdr, the degradation point and the sweet spot, and their one-line headline.
//!
//! Must not: run anything (the drivers in the sibling modules do).

use serde::Serialize;

/// One step of a search, as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// Offered packets/s (ndr) or rule count (degrade).
    pub x: f64,
    pub sent: u64,
    pub received: u64,
    pub loss_ratio: f64,
    /// What the schedule asked for and what the sender got out, packets/s.
    pub offered_pps: f64,
    pub sent_pps: f64,
    pub received_pps: f64,
    pub pass: bool,
    /// The sender fell more than the loss threshold (at least 0.1 %) short of its
    /// schedule: the offered load was not offered, so the step fails.
    pub sender_behind: bool,
    /// The confirmation trial.
    pub confirmation: bool,
    /// Lossless, but a queue filled through the trial (`queue growing`), and the search
    /// counts that as a fail (`SearchParams::queue_fails`: `--load`'s capacity).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub queue_grew: bool,
    /// Which role the step's trial was judged limited by (`None`: not judged): a step
    /// that failed at fwbench's sink failed for fwbench, not the gateway (the search's
    /// `witness` reads it; the trial row stores it).
    #[serde(skip)]
    pub limited_by: Option<results::LimitedBy>,
    /// The step trial's own doubts (its status `flagged`): where the step decides the
    /// search's answer, the search carries those it does not judge itself (the
    /// `search` module's `witness::flagged_step`). Stored with the step's trial row.
    #[serde(skip)]
    pub doubts: Vec<results::Doubt>,
}

impl Point {
    /// " (confirmation)", " (sender behind schedule)", " (a queue filled through it)"
    /// or nothing.
    pub fn note(&self) -> &'static str {
        match (self.confirmation, self.sender_behind, self.queue_grew) {
            (true, _, false) => " (confirmation)",
            (true, _, true) => " (confirmation; a queue filled through it)",
            (false, true, _) => " (sender behind schedule)",
            (false, false, true) => " (a queue filled through it: not sustained)",
            (false, false, false) => "",
        }
    }
}

/// The outcome of a search (stored as the `results` of the search's own trial row).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "search", rename_all = "lowercase")]
pub enum SearchSummary {
    Ndr(NdrReport),
    Degrade(DegradeReport),
    Mlr(MlrReport),
    /// sessions with `--parallel auto`.
    SweetSpot(crate::outcome::search::SweetSpotReport),
    /// The safe envelope of gateway updates (issue 39).
    Envelope(EnvelopeReport),
}

impl SearchSummary {
    /// Why the search's answer may not be believed (none: it holds).
    pub fn doubts(&self) -> &[results::Doubt] {
        match self {
            SearchSummary::Ndr(r) => &r.doubts,
            SearchSummary::Mlr(r) => &r.doubts,
            SearchSummary::Degrade(r) => &r.doubts,
            SearchSummary::Envelope(r) => &r.doubts,
            SearchSummary::SweetSpot(r) => &r.doubts,
        }
    }

    /// Whether the search converged. One that did not carries a doubt saying why
    /// (contradicting trials, out of trials), so its status is `flagged`; `fwbench ndr
    /// | mlr | degrade` then exit 1.
    pub fn converged(&self) -> bool {
        match self {
            SearchSummary::Ndr(r) => r.converged,
            SearchSummary::Degrade(r) => r.converged,
            SearchSummary::Mlr(r) => r.converged,
            SearchSummary::Envelope(r) => r.converged,
            SearchSummary::SweetSpot(r) => r.converged,
        }
    }

    /// One line for progress output.
    pub fn line(&self) -> String {
        match self {
            SearchSummary::Ndr(r) => match r.rate_pps {
                Some(x) => format!(
                    "{}: {x:.0} pps ({:.2} Mb/s Ethernet) in {} trials{}{}",
                    r.mode,
                    r.rate_bps_l2.unwrap_or(0.0) / 1e6,
                    r.trials,
                    if r.limited_by_sender {
                        ", sender-limited"
                    } else {
                        ""
                    },
                    if r.converged { "" } else { ", NOT converged" }
                ),
                None => format!("{}: no rate passed", r.mode),
            },
            SearchSummary::Mlr(r) => format!(
                "mlr: {} in {} trials ({:.0} s of traffic){}{}",
                r.goals
                    .iter()
                    .map(|g| match g.rate_pps {
                        Some(x) => format!("{x:.0} pps at ≤ {} loss", pct(g.loss_ratio)),
                        None => format!("no rate at ≤ {} loss", pct(g.loss_ratio)),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                r.trials,
                r.trial_time_s,
                if r.limited_by_sender {
                    ", sender-limited"
                } else {
                    ""
                },
                if r.converged { "" } else { ", NOT converged" }
            ),
            SearchSummary::Degrade(r) => match (r.last_good_rules, r.first_degraded_rules) {
                (_, None) => format!("no degradation up to {} rules", r.max_rules),
                (None, Some(_)) => "degraded even without rules".into(),
                (Some(g), Some(d)) => format!(
                    "degradation point between {g} and {d} rules ({} trials)",
                    r.trials
                ),
            },
            SearchSummary::SweetSpot(r) => format!(
                "sweet spot: {} parallel, {:.0} sessions/s ({} trials){}",
                r.best_parallel,
                r.best_sessions_per_s,
                r.trials,
                if r.converged { "" } else { ", NOT converged" }
            ),
            SearchSummary::Envelope(r) => r.answer(),
        }
    }

    /// The headline number: the rate found (ndr) or the first degraded rule count.
    pub fn value(&self) -> Option<f64> {
        match self {
            SearchSummary::Ndr(r) => r.rate_pps,
            SearchSummary::Mlr(r) => r.rate_pps,
            SearchSummary::Degrade(r) => r.first_degraded_rules.map(f64::from),
            SearchSummary::SweetSpot(r) => Some(r.best_sessions_per_s),
            SearchSummary::Envelope(r) => r.rate,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdrReport {
    pub mode: &'static str,
    pub loss_threshold: f64,
    pub precision: f64,
    pub duration_s: f64,
    pub payload: u32,
    pub frame: u32,
    /// Highest rate that passed, packets/s (None: none did).
    pub rate_pps: Option<f64>,
    pub rate_bps_payload: Option<f64>,
    pub rate_bps_l2: Option<f64>,
    /// Lowest rate that failed (None: the ceiling passed — the sender is the limit).
    pub fail_pps: Option<f64>,
    pub ceiling_pps: f64,
    /// The ceiling came from `max_rate` (else from an unpaced flood).
    pub ceiling_given: bool,
    /// The gateway passed all the sender could offer: the sender is the limit.
    pub limited_by_sender: bool,
    pub confirmed: bool,
    pub converged: bool,
    pub trials: usize,
    /// Frame loss rate by offered rate (RFC 2544 §26.3), ascending.
    pub curve: Vec<Point>,
    /// One-way delay at fractions of the rate found (empty: not asked, or none found).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<LatencyPoint>,
    /// Why the answer may not be believed: its trials contradict each other or it ran
    /// out of trials (then `converged` is false: a search that did not converge always
    /// has a doubt, so its status is `flagged`, never `ok`), the sender fell behind below the rate found, a latency
    /// step lost packets, a step that decides the bracket was itself flagged (the
    /// `search` module's `witness`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<results::Doubt>,
}

/// A loss ratio as a percentage ("0 %", "0.5 %").
pub fn pct(r: f64) -> String {
    format!("{} %", (r * 1e6).round() / 1e4)
}

/// MLRsearch's result: one rate per goal loss ratio, from final-duration trials. The
/// NDR-like fields (`rate_pps`, `fail_pps`, …) are the strictest goal's, so the
/// report's search table and findings read it as they read an ndr.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MlrReport {
    /// "mlr".
    pub mode: &'static str,
    pub goals: Vec<MlrGoal>,
    /// The strictest goal's lower bound, packets/s (None: not even the minimum passed).
    pub rate_pps: Option<f64>,
    pub rate_bps_l2: Option<f64>,
    /// The strictest goal's upper bound (None: the ceiling passed).
    pub fail_pps: Option<f64>,
    /// Relative width of each goal's final bracket.
    pub precision: f64,
    pub final_duration_s: f64,
    pub initial_duration_s: f64,
    pub payload: u32,
    pub frame: u32,
    pub ceiling_pps: f64,
    pub ceiling_given: bool,
    /// A goal passed at everything the sender could offer: the sender is the limit.
    pub limited_by_sender: bool,
    pub converged: bool,
    pub trials: usize,
    /// Traffic time of all trials, s.
    pub trial_time_s: f64,
    /// Every trial in the order run (x = offered packets/s).
    pub curve: Vec<MlrPoint>,
    /// One-way delay at fractions of the NDR found (empty: not asked, or none found).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<LatencyPoint>,
    /// As [`NdrReport::doubts`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<results::Doubt>,
}

/// One-way delay under load: a flood trial at a fraction of the rate a search found
/// (RFC 2544 §26.2; TRex's latency streams).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyPoint {
    /// Of the rate found (0.5 = half of it).
    pub fraction: f64,
    pub offered_pps: f64,
    /// What the sender got out, packets/s (below `offered_pps`: it fell behind its
    /// schedule, and the delays, counted from when each packet was due, include that).
    pub sent_pps: f64,
    pub received_pps: f64,
    pub loss_ratio: f64,
    /// How long its traffic ran, s (the trial's measured time, not the one asked for):
    /// what a delay's growth is a share of.
    pub elapsed_s: f64,
    /// One-way delay percentiles, ns (count 0: not measured, e.g. clocks not known).
    pub owd: proto::RttSummary,
    /// Source and sink on hosts with clocks of their own: how the delays were related
    /// (`corrected`, or `rtt-only` when withheld: the clocks' offsets are not known
    /// well enough); absent when every role read one clock.
    pub owd_basis: Option<&'static str>,
}

impl LatencyPoint {
    /// Why a point has no delays (`owd.count` 0): withheld, or nothing arrived.
    pub fn no_delays(&self) -> &'static str {
        if self.owd_basis == Some("rtt-only") {
            "withheld: the hosts' clocks are not known well enough"
        } else {
            "nothing arrived"
        }
    }
}

/// One goal's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MlrGoal {
    pub loss_ratio: f64,
    /// Highest rate within the loss ratio in a final-duration trial, packets/s.
    pub rate_pps: Option<f64>,
    pub rate_bps_payload: Option<f64>,
    pub rate_bps_l2: Option<f64>,
    /// Lowest rate above it.
    pub fail_pps: Option<f64>,
}

/// One MLRsearch trial: the point and how long it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MlrPoint {
    #[serde(flatten)]
    pub point: Point,
    pub duration_s: f64,
    /// The loss ratio the search counted (the sender's shortfall counts as loss).
    pub counted_loss_ratio: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DegradeReport {
    pub loss_threshold: f64,
    pub resolution: u32,
    pub max_rules: u32,
    /// Highest rule count without degradation, and the lowest with it.
    pub last_good_rules: Option<u32>,
    pub first_degraded_rules: Option<u32>,
    pub trials: usize,
    pub converged: bool,
    pub points: Vec<Point>,
    /// Why the answer may not be believed: out of trials (then `converged` is false), a
    /// queue or fwbench behind a step that decides it, the last good or first degraded
    /// step itself flagged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<results::Doubt>,
}

/// One measured step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweetPoint {
    pub parallel: u32,
    pub sessions_per_s: f64,
    pub failed: u64,
}

/// The search's result (stored as `results.search` with `"search": "sweetspot"`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweetSpotReport {
    pub best_parallel: u32,
    pub best_sessions_per_s: f64,
    /// Mean session latency at the best parallelism, s.
    pub latency_at_best_s: f64,
    /// Parallelisms within 3 % of the best (the plateau).
    pub plateau: Vec<u32>,
    pub points: Vec<SweetPoint>,
    pub trials: usize,
    /// False: it stopped on its trial budget with an untried parallelism that could hide
    /// a higher rate (then a doubt says so).
    pub converged: bool,
    /// Why the best may not be the sweet spot: it is at the largest parallelism
    /// searched (no peak found: a lower bound; still converged), or the search ran out
    /// of trials (the `search` module's `witness`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<results::Doubt>,
}

/// The safe envelope at one installed size: the highest update rate that kept the
/// targets ([`crate::params::search::Targets`]), with every step's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvelopeReport {
    /// The update repeated: "add:1 (batch)".
    pub update: String,
    /// Rules installed before the updates.
    pub installed: u32,
    pub targets: crate::params::search::Targets,
    pub precision: f64,
    /// Highest rate that kept the targets, updates/s (None: not even the lowest did).
    pub rate: Option<f64>,
    /// Lowest rate that did not (None: the highest searched held).
    pub fail_rate: Option<f64>,
    /// The highest rate searched held: the envelope is at least that.
    pub ceiling_held: bool,
    pub converged: bool,
    pub trials: usize,
    /// By rate, ascending.
    pub points: Vec<EnvelopePoint>,
    /// Why the answer may not be believed (out of trials, contradicting steps, a
    /// flagged step carrying it); `converged` is then false.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<results::Doubt>,
}

impl EnvelopeReport {
    /// "envelope of add:1 (batch) at 1000 rules: 9.3 updates/s (10.2 did not) in 7 trials".
    pub fn answer(&self) -> String {
        let at = format!("envelope of {} at {} rules", self.update, self.installed);
        let tail = format!(
            " in {} trials{}",
            self.trials,
            if self.converged {
                ""
            } else {
                ", NOT converged"
            }
        );
        match (self.rate, self.fail_rate) {
            (Some(r), Some(f)) => format!("{at}: {r:.2} updates/s ({f:.2} did not){tail}"),
            (Some(r), None) => format!(
                "{at}: at least {r:.2} updates/s, the highest searched (raise max_update_rate){tail}"
            ),
            (None, Some(f)) => format!("{at}: not even {f:.2} updates/s kept the targets{tail}"),
            (None, None) => format!("{at}: no verdict{tail}"),
        }
    }
}

/// One step of the envelope: a trial with updates at `rate`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvelopePoint {
    /// Updates/s asked for.
    pub rate: f64,
    /// Updates scheduled, and committed (the rest never ran: the traffic ended
    /// first, or they failed).
    pub scheduled: usize,
    pub committed: usize,
    /// From due to committed, over the committed updates.
    pub latency_ms: Option<crate::workloads::events::Quantiles>,
    /// The commits alone.
    pub commit_ms: Option<crate::workloads::events::Quantiles>,
    /// How much their wait grew from the first to the last, ms (least squares over
    /// due time): a path falling behind grows it whatever the latency reached.
    pub wait_growth_ms: Option<f64>,
    /// The longest time to effect among them (only an event's first update carries
    /// the marker's rule).
    pub effect_ms: Option<f64>,
    /// Must-drop packets that passed (reloads).
    pub violations: u64,
    pub pass: bool,
    /// What it missed of the targets (None: kept them all).
    pub why: Option<String>,
    /// The trial's own doubts, when flagged: a pass it carries cannot be believed.
    pub flagged: Option<String>,
}

impl EnvelopePoint {
    /// "12/12 committed, p99 latency 103.2 ms (commit p99 101.0 ms) → held".
    pub fn line(&self) -> String {
        let ms = |q: &Option<crate::workloads::events::Quantiles>| {
            q.as_ref()
                .map_or("-".into(), |q| format!("{:.1} ms", q.p99))
        };
        format!(
            "{}/{} committed, p99 latency {} (commit p99 {}){}{} → {}{}",
            self.committed,
            self.scheduled,
            ms(&self.latency_ms),
            ms(&self.commit_ms),
            self.effect_ms
                .map_or(String::new(), |e| format!(", time to effect {e:.1} ms")),
            if self.violations > 0 {
                format!(", {} violations", self.violations)
            } else {
                String::new()
            },
            if self.pass { "held" } else { "missed" },
            self.why
                .as_ref()
                .map_or(String::new(), |w| format!(" ({w})"))
        )
    }
}
