//! Gateway events (issue 25) on the controller's side: the CLI flags, the schedule
//! the gateway agent runs (with the marker), and what the traffic felt — time to
//! effect, stall, what was lost around each update — from fine time bins.
//!
//! Each workload names its marker (`Roles::marker`) and gives its bins:
//! * flood, flow, new flows: the sink's per-flow bins. The marker is flow 0 — every
//!   flow from the first client address to the destination port; flows from the
//!   other addresses (`--sources 2` or more) are the background. Time to effect is
//!   dated by send stamps (the packet's intended send time, the clock of the commit's
//!   start stamp) plus the one-way delay of the neighbouring packet received: the
//!   first marker packet the change acted on is the one after the last received (a
//!   drop), or the first received (a deletion).
//! * echo, ping, sessions/bulk/http: the client's transactions by start time
//!   ([`proto::TxnBins`]). The marker is echo's client 1, or an extra stream
//!   (ping: paced probes; sessions: the smallest sessions) from a client address of
//!   its own; the background is the workload's other streams. Time to effect is
//!   the start of the first marker transaction that failed after the last one that
//!   completed (a drop), or of the first that completed after failures (a deletion),
//!   plus half its neighbour's latency (when its request reached the gateway).
//!
//! Each update's loss is credited beyond the trial's quiet window ([`Quiet`]: the
//! background before its first update), the 50 ms before each update its check.
//!
//! Owns: [`EventArgs`], [`gateway_events`], [`bin_ns`], [`stream_spec`],
//! [`summarise_flows`], [`summarise_txns`], [`text`], [`records`], the quiet window.
//! Must not: find the background's rate for `--load` (`search::load` does).
//! Nor run anything (the agent does), or store (that is `run::record` and `store`).

use crate::params::events::EventParams;
use crate::params::TrialParams;
use proto::{
    EventPlace, EventSpec, FlowBins, GatewayResults, Marker, MarkerFate, StreamEventsSpec, TxnBins,
    TxnStreams, UdpSinkResults, UdpSourceResults, UpdateKind, UpdateMethod, UpdateRow,
};
use results::{Doubt, DoubtKind};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// Width of the time bins when events are scheduled.
pub const BIN_NS: u64 = 1_000_000;
/// The window of each update's figures: from this long before its start …
pub const BEFORE_NS: u64 = 50_000_000;
/// … to this long after its commit returned.
pub const AFTER_NS: u64 = 250_000_000;
/// Background loss in the window before an update above which the gateway counts as
/// overloaded before it: what the update did cannot be told from what happened anyway.
pub const OVERLOAD_LOSS: f64 = 0.01;
/// … and the fewest packets (transactions) lost there that say so: one or two lost of
/// a slow background's 50 are chance, not a gateway at its limit.
pub const OVERLOAD_MIN_LOST: u64 = 3;
/// The trial's quiet window, the baseline of every update's loss: at most this long,
/// ending at the first update's start (the traffic before any update) …
pub const QUIET_NS: u64 = 500_000_000;
/// … and at least this long (as long as an update's own window before it), else each
/// update is judged against the 50 ms before it.
pub const QUIET_MIN_NS: u64 = BEFORE_NS;

/// Gateway-event flags of the trial commands (all but `connections`).
#[derive(clap::Args, Clone)]
#[command(next_help_heading = "Gateway events (rules that change under load)")]
#[command(group(clap::ArgGroup::new("schedule").args(["event", "event_trace"])))]
pub struct EventArgs {
    /// Change the gateway's rules during the trial: KIND:K@TIME, e.g. add:1@1s (insert 1
    /// drop rule at 1 s; the first drops the marker: flow 0, echo's client 1, or the
    /// marker stream of ping and sessions). Kinds: add, delete, replace, add-elements,
    /// remove-elements, reload (the rule set in force loaded again, the marker's drop
    /// rule in it: what passes is a violation), reload-set (the drop set loaded again,
    /// the marker's element in it: a blocklist refresh), expire-elements (K elements
    /// added at the start with a timeout ending at TIME, expiring together: a ban
    /// feed's bans running out; flood and flow)
    #[arg(long, value_parser = crate::params::events::parse_event)]
    event: Option<(UpdateKind, u32, f64)>,
    /// Churn replay: the updates of a trace file, one `TIME OP [K]` per line (e.g. 0.5s
    /// add 1, 1.2s delete 1, 3s replace 100; `fwbench trace gen` writes some); one
    /// update per operation, instead of --event/--event-rate/--event-count
    #[arg(long, value_name = "FILE", conflicts_with_all = ["event", "event_rate", "event_count"])]
    event_trace: Option<String>,
    /// Repeat the update this many times per second (until --event-count or the end)
    #[arg(long, requires = "event", value_parser = positive_rate)]
    event_rate: Option<f64>,
    /// Updates in all (needs --event-rate when above 1)
    #[arg(long, requires = "event_rate", value_parser = clap::value_parser!(u32).range(1..=proto::MAX_UPDATES as i64))]
    event_count: Option<u32>,
    /// How the engine applies it: batch (iptables-restore, nft -f, ipset restore),
    /// per-rule (iptables -I/-D, nft insert, ipset add, one call each; replace,
    /// reload: the chain made with its last rule, then one call per rule), flush-load
    /// (replace, reload: the rule set removed, then installed, in two steps;
    /// reload-set: the set flushed, then filled); a reload-set by batch is atomic
    /// (nft: one transaction; ipset: a filled set swapped in)
    #[arg(long, requires = "schedule", default_value = "batch", value_parser = method)]
    event_method: UpdateMethod,
    /// Where an add puts its rules: head (default), or after-established — behind the
    /// chain's rule accepting established flows (--model stateful), where a new block
    /// meets only flows the conntrack table does not know yet — or
    /// after-established-ct-delete: the same, then the marker source's conntrack
    /// entries deleted in the same timed update (conntrack -D)
    #[arg(long, requires = "schedule", default_value = "head", value_parser = place)]
    event_place: EventPlace,
    /// flood, flow, envelope: offer the background at a share of what the gateway
    /// forwards at the installed size, as CSIT's reconfiguration tests do: F (0.5: half
    /// the rate a short search finds first, a few 1-s floods; an envelope's once, before
    /// its steps) or F@RATE (0.5@40kpps: of a stated rate); instead of --rate
    #[arg(long, requires = "schedule", value_parser = crate::params::events::parse_load)]
    load: Option<crate::params::events::Load>,
}

/// An update rate flag: updates/s, 0 < R <= 10000 (`--event-rate`, `envelope
/// --max-update-rate`, `trace`'s generators' rates).
pub(crate) fn positive_rate(t: &str) -> Result<f64, String> {
    t.trim_end_matches("/s")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= 10_000.0)
        .ok_or_else(|| format!("'{t}' is not an update rate (0 < R <= 10000 per second)"))
}

fn method(t: &str) -> Result<UpdateMethod, String> {
    t.parse()
}

fn place(t: &str) -> Result<EventPlace, String> {
    t.parse()
}

impl EventArgs {
    pub fn params(&self) -> Option<EventParams> {
        if let Some(file) = &self.event_trace {
            // Read by the front door (`plan::build`), as a scenario's `event_trace`.
            return Some(EventParams {
                kind: UpdateKind::Add,
                k: 1,
                at_s: 0.0,
                rate: None,
                count: None,
                method: self.event_method,
                load: self.load.clone(),
                place: self.event_place,
                trace: Some(crate::params::trace::Trace::named(file)),
            });
        }
        let (kind, k, at_s) = self.event?;
        Some(EventParams {
            kind,
            k,
            at_s,
            rate: self.event_rate,
            count: self.event_count,
            method: self.event_method,
            load: self.load.clone(),
            place: self.event_place,
            trace: None,
        })
    }

    /// The trace file of `--event-trace`, if given.
    pub fn trace(&self) -> Option<&str> {
        self.event_trace.as_deref()
    }
}

/// The events the gateway runs in a trial of `p` whose marker is `marker`. A trace
/// (churn replay) is one event per operation, once, at its time; only the first
/// carries the marker (as only an event's first update does).
pub fn gateway_events(p: &TrialParams, marker: Option<Marker>) -> Vec<EventSpec> {
    let Some(e) = &p.events else {
        return vec![];
    };
    e.each()
        .iter()
        .enumerate()
        .map(|(i, one)| event_spec(p, one, marker.filter(|_| i == 0)))
        .collect()
}

/// The gateway's schedule of `e` in a trial of `p`, with the marker (if known).
pub fn event_spec(p: &TrialParams, e: &EventParams, marker: Option<Marker>) -> EventSpec {
    EventSpec {
        kind: e.kind,
        k: e.k,
        method: e.method,
        at_s: e.at_s,
        rate: e.rate,
        count: e.updates(p.duration_s),
        marker,
        place: e.place,
    }
}

/// The sink's bin width for a trial (0: no events, no bins).
pub fn bin_ns(p: &TrialParams) -> u64 {
    if p.events.is_some() {
        BIN_NS
    } else {
        0
    }
}

/// What a request–response client records for a trial's events (`None`: no events);
/// `marker_source`: the address of an extra marker stream (ping, sessions).
pub fn stream_spec(p: &TrialParams, marker_source: Option<IpAddr>) -> Option<StreamEventsSpec> {
    p.events.as_ref().map(|_| StreamEventsSpec {
        bin_ns: BIN_NS,
        marker_source,
    })
}

/// The source of an extra marker stream: client 1's address, or client 2's when the
/// workload's own stream sends from client 1's (`taken`); the trial gave clients 1
/// and 2 their addresses (`params::events::client_addresses`).
pub fn extra_marker_source(
    tb: &dyn crate::testbed::Testbed,
    p: &TrialParams,
    taken: Option<IpAddr>,
) -> IpAddr {
    let first = tb.client_addr(p.family, 1);
    if taken == Some(first) {
        tb.client_addr(p.family, 2)
    } else {
        first
    }
}

// What the background's streams are, and so what their bins count and delay.
pub use results::workload::Unit;

/// One update and what the traffic felt. Each figure carries its witness: a window
/// without background traffic has no stall or loss figure, a gateway that already lost
/// background before the update gets its figures flagged, a time to effect that would
/// be negative is withheld — each with its reason in `doubts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateEffect {
    #[serde(flatten)]
    pub row: UpdateRow,
    pub commit_ms: f64,
    /// From the commit's start to the first marker packet (or transaction) the change
    /// acted on, ms (the update that carries the marker's rule or element only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_effect_ms: Option<f64>,
    /// How finely the marker's stamps date the effect, ms: a batched sender puts a
    /// batch on the wire at once, up to its span ahead of the stamps' schedule, and the
    /// bins are 1 ms. A time to effect within it below zero is 0 (at once); further
    /// below, it cannot be and is withheld.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect_resolution_ms: Option<f64>,
    /// Why this update has no time to effect, where that is not a doubt about a
    /// figure but a fact of the schedule (an update that changes nothing the marker
    /// sees: only an event's first update carries the marker's rule), or of the
    /// marker (no packet of it changed fate). Not a doubt: the trial stays `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_time_to_effect: Option<String>,
    /// Flows: the longest run of background bins that lost packets and received none,
    /// in the update's window, ms. Request–response workloads: the longest latency
    /// (round trip, connection setup) of a background transaction started in it.
    /// `None`: no background traffic in the window (nothing was measured), or an
    /// update that failed or never ran (it has no window: never 0).
    pub stall_ms: Option<f64>,
    /// Background packets (transactions) lost (failed) in the window. `None`: nothing
    /// measured — an update that failed or never ran, a trial without background, a
    /// window without background traffic (never 0). Results stored before held 0.
    pub lost: Option<u64>,
    /// What of `lost` exceeds the loss rate of the window before the update (the
    /// baseline of the same trial): what the update is credited with. `None`: no
    /// background in the window, or none before the update to compare with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_beyond_baseline: Option<u64>,
    /// What of the loss beyond the same baseline lies in no earlier update's window:
    /// reckoned as `lost_beyond_baseline` is, over the background's bins of this
    /// window that no window of an update that ran before it holds (an earlier start;
    /// at the same start, the one reported first). Summed over a trial's updates, each
    /// lost packet counts once, in the earliest window holding it — what the updates
    /// together cost where their windows overlap (above 3–4 updates/s). Equal to
    /// `lost_beyond_baseline` where no earlier window overlaps this one. Against the 50
    /// ms before the update (no quiet window), that baseline's loss per bin times the
    /// window's bins that hold those background bins. Each share is floored at 0 on its
    /// own, so it can exceed `lost_beyond_baseline` where the bins an earlier window
    /// holds lost less than the baseline's rate. `None` where `lost_beyond_baseline`
    /// is, and in results stored before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_once: Option<u64>,
    /// Effective blocked time (FD.io CSIT): `lost_beyond_baseline` over the
    /// background's offered rate before the update, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_ms: Option<f64>,
    /// The loss ratio of the baseline `lost_beyond_baseline` is reckoned against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_loss: Option<f64>,
    /// Which baseline that is: the trial's quiet window, or (when the trial has none)
    /// the 50 ms before this update. Absent in results stored before it was said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineKind>,
    /// Highest delay of the background in the window (one-way delay, round trip or
    /// connection setup, by the unit), µs.
    pub owd_max_us: u64,
    /// Background per bin over the window: (ms from the commit's start, received
    /// (completed), lost (failed), mean delay µs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<(f64, u32, u32, f64)>,
    /// Why the background's delays in the window — `owd_max_us` and the series' —
    /// are no figures (0 then): a flow whose sender and sink are two hosts whose
    /// clocks cannot relate its one-way delays. Absent: they are figures (on two hosts
    /// whose clocks are related, corrected by them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_delays: Option<String>,
    /// Why some of these figures may not be believed (empty window, overloaded
    /// before the update, a time to effect withheld, a commit that outlived the
    /// traffic).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<Doubt>,
    /// A reload (issue 39): the marker's packets that passed it, though the rule set
    /// before and after it drops them. Absent for other updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violations: Option<Violations>,
}

/// Packets of a must-drop probe (the marker flow) that passed one reload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violations {
    /// Marker packets received, sent from the reload's start to the next update's.
    pub passed: u64,
    /// From the first to the last bin holding one of them, ms (`None`: none passed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ms: Option<f64>,
    /// Where that window starts, ms from the reload's start (the first bin's start;
    /// negative when the bin began before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_ms: Option<f64>,
    /// The marker's packets' spacing, ms: a gap in enforcement shorter than it can
    /// pass unseen. NaN, absent from the JSON: unknown (`marker_gap`; such a reload that
    /// let none through is flagged too coarse).
    #[serde(default = "unknown_gap", skip_serializing_if = "gap_unknown")]
    pub probe_gap_ms: f64,
}

/// [`Violations::probe_gap_ms`] not known (absent from the JSON).
fn unknown_gap() -> f64 {
    f64::NAN
}

/// Whether a [`Violations::probe_gap_ms`] is not known.
fn gap_unknown(gap_ms: &f64) -> bool {
    gap_ms.is_nan()
}

/// The events of a trial as the traffic felt them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventsSummary {
    pub bin_ns: u64,
    /// What the background's bins count (absent in results stored before echo, ping
    /// and sessions had events: packets).
    #[serde(default)]
    pub unit: Unit,
    pub marker_src: Option<std::net::IpAddr>,
    /// Streams in the background (flows, echo clients, the ping, session workers).
    #[serde(default)]
    pub background_streams: u32,
    pub updates: Vec<UpdateEffect>,
    /// What the trial counts as lost (flows: packets; echo: echoes lost or unsent;
    /// ping: probes lost; sessions: sessions failed), as counted in the bins (equals
    /// the trial's when every flow received something). An extra marker stream (ping,
    /// sessions) is not the trial's.
    pub bins_lost: u64,
    /// Packets lost by flows that received nothing (no bins).
    pub unbinned_lost: u64,
    /// Flows: the marker's packets the update's rule dropped, as intended — the
    /// experiment, not a loss of the gateway's ([`marker_dropped`]); absent without a
    /// dated effect on the marker, or in results stored before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker_dropped: Option<u64>,
    /// Background lost in the union of the updates' windows (overlapping windows
    /// counted once); absent in results stored before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_around: Option<u64>,
    /// The trial's quiet window (the traffic before its first update), each update's
    /// baseline; absent when the trial had none long enough, or before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet: Option<Quiet>,
    /// `--load`: the share of the gateway's capacity the background was offered at,
    /// and that capacity (stated, or found by the search before the trial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<crate::params::events::Load>,
    /// Two or more updates that ran (a trace's, an `--event-rate` trial's): the spread
    /// of their commit latencies and times to effect; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
}

/// The commit latencies and times to effect of a trial's updates that ran, as
/// p50 / p99 / max (nearest rank: the smallest value with at least that share of
/// the updates at or below it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Updates that ran (no error).
    pub updates: usize,
    pub commit_ms: Quantiles,
    /// From when each was due to its commit's end (its wait for the updates before it
    /// plus its commit): what the requester of an update waits. Absent in results
    /// stored before the wait was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Quantiles>,
    /// Updates that waited for earlier ones (more than 1 ms after they were due):
    /// the schedule outran the commits.
    #[serde(default)]
    pub late: usize,
    /// Over the updates with a time to effect (only a schedule's first update carries
    /// the marker's rule: at most one); absent when none has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_effect_ms: Option<Quantiles>,
}

/// p50, p99 and max of some values, with their number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub n: usize,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Quantiles {
    /// Of `v` (`None` when empty); nearest rank.
    pub fn of(v: &[f64]) -> Option<Quantiles> {
        let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Some(Quantiles {
            n: v.len(),
            p50: rank(0.5),
            p99: rank(0.99),
            max: v[v.len() - 1],
        })
    }
}

/// The spread of `updates` that ran (`None` below two).
pub fn spread(updates: &[UpdateEffect]) -> Option<Spread> {
    let ran: Vec<&UpdateEffect> = updates
        .iter()
        .filter(|u| u.row.error.is_none() && u.row.start_unix_ns > 0)
        .collect();
    if ran.len() < 2 {
        return None;
    }
    let commits: Vec<f64> = ran.iter().map(|u| u.commit_ms).collect();
    // Times to effect only where the update's figures hold (a flagged one's is printed
    // with its flag, never pooled into a figure).
    let effects: Vec<f64> = ran
        .iter()
        .filter(|u| u.holds())
        .filter_map(|u| u.time_to_effect_ms)
        .collect();
    let latencies: Vec<f64> = ran
        .iter()
        .map(|u| u.row.wait_ns as f64 / 1e6 + u.commit_ms)
        .collect();
    Some(Spread {
        updates: ran.len(),
        commit_ms: Quantiles::of(&commits)?,
        latency_ms: Quantiles::of(&latencies),
        late: ran.iter().filter(|u| u.row.wait_ns > 1_000_000).count(),
        time_to_effect_ms: Quantiles::of(&effects),
    })
}

/// Which baseline an update's loss beyond it is reckoned against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BaselineKind {
    /// The trial's quiet window ([`Quiet`]): no update's tail in it.
    Quiet,
    /// The 50 ms before the update (the trial had no quiet window long enough): at
    /// high event rates it can hold the previous update's tail.
    BeforeUpdate,
}

/// The trial's window without updates: the background before the first update, at
/// most [`QUIET_NS`] long. Its loss rate is what the background loses anyway; only loss
/// beyond it is an update's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quiet {
    /// Its start, ms from the first update's start (negative).
    pub from_ms: f64,
    /// Its length, ms.
    pub ms: f64,
    /// Background received (completed) and lost (failed) in it.
    pub received: u64,
    pub lost: u64,
    /// `lost` over all it offered.
    pub loss: f64,
    /// What the background offered in it, per second.
    pub offered_per_s: f64,
    /// Its longest run of bins in which the background lost and received nothing, ms
    /// (0 in results stored before it was measured): a stall no longer than it cannot
    /// be told from what the gateway did anyway, where `loss` says it was overloaded.
    #[serde(default)]
    pub dark_ms: f64,
}

/// A background stream's bins, read alike for flows and transactions.
struct Background<'a> {
    origin_ns: u64,
    width_ns: u64,
    received: &'a [u32],
    lost: &'a [u32],
    delay_sum_us: &'a [u64],
    delay_max_us: &'a [u32],
}

impl<'a> Background<'a> {
    fn flow(b: &'a FlowBins) -> Background<'a> {
        Background {
            origin_ns: b.origin_ns,
            width_ns: b.width_ns,
            received: &b.received,
            lost: &b.lost,
            delay_sum_us: &b.owd_sum_us,
            delay_max_us: &b.owd_max_us,
        }
    }

    fn txns(b: &'a TxnBins) -> Background<'a> {
        Background {
            origin_ns: b.origin_ns,
            width_ns: b.width_ns,
            received: &b.done,
            lost: &b.failed,
            delay_sum_us: &b.latency_sum_us,
            delay_max_us: &b.latency_max_us,
        }
    }
}

/// Summarise the events of a flood, flow or new-flow trial of `p` (`None` when none
/// were scheduled); flow i sends from `sources[i % len]`.
pub fn summarise_flows(
    p: &TrialParams,
    sources: &[std::net::IpAddr],
    src: &UdpSourceResults,
    sink: &UdpSinkResults,
    gateway: Option<&GatewayResults>,
) -> Option<EventsSummary> {
    p.events.as_ref()?;
    let flows_n = p.packet().map_or(0, |k| k.flows);
    let batch = p.packet().map_or(1, |k| k.batch.max(1));
    let rows = gateway.map(|g| g.updates.clone()).unwrap_or_default();
    let marker_src = sources.first().copied();
    // Closed bins per flow (the tail loss placed), and whether it is a marker flow.
    let mut flows: Vec<(bool, FlowBins)> = vec![];
    let mut unbinned_lost = 0;
    let mut marker_sent: Vec<u64> = vec![];
    // Sent by background flows that received nothing (no bins): lost whole; and by
    // marker flows that received nothing.
    let mut unreceived = 0;
    let mut marker_unreceived = 0;
    for f in 0..flows_n {
        let sent = src.sent_per_flow.get(f as usize).copied().unwrap_or(0);
        let is_marker = sources.len() <= 1 || (f as usize).is_multiple_of(sources.len());
        match sink
            .flows
            .iter()
            .find(|x| x.flow == f)
            .and_then(|x| x.bins.as_deref())
        {
            Some(b) => {
                let mut b = b.clone();
                ::traffic::bins::close(&mut b, sent);
                if is_marker {
                    marker_sent.push(sent);
                }
                flows.push((is_marker, b));
            }
            None => {
                unbinned_lost += sent;
                if is_marker {
                    marker_unreceived += sent;
                } else {
                    unreceived += sent;
                }
            }
        }
    }
    let bins_lost = flows.iter().map(|(_, b)| ::traffic::bins::lost(b)).sum();
    let marker = flows.iter().find(|(m, _)| *m).map(|(_, b)| b);
    let background: Vec<Background> = flows
        .iter()
        .filter(|(m, _)| !m)
        .map(|(_, b)| Background::flow(b))
        .collect();
    let end = traffic_end(&background);
    let around = lost_around(&rows, &background);
    let paced = p.packet().is_some_and(|k| k.rate != proto::Rate::Max);
    let base = Base {
        unreceived,
        queue: queue_before(&rows, &background).filter(|q| paced && !q.senders(src.max_lag_ns)),
        ..Base::of(p, &rows, &background)
    };
    let mut updates = effects(rows, &background, Unit::Packets, &base, end, |row| {
        marker.and_then(|m| {
            let res = flow_resolution(m, batch, flows_n);
            flow_effect_stamp(row.kind, m).map(|t| (t, res))
        })
    });
    say_why_no_effect(&mut updates, Unit::Packets);
    // The marker's spacing (every marker flow's packets count in the violations).
    let gap = marker_gap(marker, src.sent_per_flow.first().copied(), p.duration_s);
    let markers: Vec<&FlowBins> = flows.iter().filter(|(m, _)| *m).map(|(_, b)| b).collect();
    count_violations(&mut updates, &markers, gap);
    // Each marker flow with bins: what it sent, its bins (both in flow order).
    let marker_flows: Vec<(u64, &FlowBins)> = marker_sent
        .iter()
        .copied()
        .zip(flows.iter().filter(|(m, _)| *m).map(|(_, b)| b))
        .collect();
    // A reload's marker flows that received nothing were dropped whole, as intended.
    let reloaded = updates.iter().any(|u| u.violations.is_some());
    let marker_dropped = marker_dropped(&updates, &marker_flows)
        .map(|d| d + if reloaded { marker_unreceived } else { 0 });
    let spread = spread(&updates);
    Some(EventsSummary {
        bin_ns: BIN_NS,
        unit: Unit::Packets,
        marker_src,
        background_streams: background.len() as u32,
        updates,
        bins_lost,
        unbinned_lost,
        marker_dropped,
        lost_around: Some(around),
        quiet: base.quiet,
        load: load_of(p),
        spread,
    })
}

/// Summarise the events of a request–response trial (echo, ping, sessions) from its
/// client's transactions (`None` when none were scheduled or recorded).
/// `marker_counted`: the marker is one of the workload's own streams (echo's client
/// 1), so its failures are the trial's too.
pub fn summarise_txns(
    p: &TrialParams,
    unit: Unit,
    marker_counted: bool,
    streams: Option<&TxnStreams>,
    gateway: Option<&GatewayResults>,
) -> Option<EventsSummary> {
    p.events.as_ref()?;
    let s = streams?;
    let rows = gateway.map(|g| g.updates.clone()).unwrap_or_default();
    let background = [Background::txns(&s.background)];
    let background = if s.background_streams > 0 {
        &background[..]
    } else {
        &[]
    };
    let end = traffic_end(background);
    let around = lost_around(&rows, background);
    let base = Base::of(p, &rows, background);
    let mut updates = effects(rows, background, unit, &base, end, |row| {
        // A transaction's stamp: its start plus half its neighbour's latency, to
        // within a bin.
        txn_effect_stamp(row.kind, &s.marker).map(|t| (t, BIN_NS))
    });
    say_why_no_effect(&mut updates, unit);
    let marker_lost = if marker_counted {
        ::traffic::bins::failed(&s.marker)
    } else {
        0
    };
    let spread = spread(&updates);
    Some(EventsSummary {
        bin_ns: BIN_NS,
        unit,
        marker_src: s.marker_source,
        background_streams: s.background_streams,
        updates,
        bins_lost: ::traffic::bins::failed(&s.background) + marker_lost,
        unbinned_lost: 0,
        marker_dropped: None,
        lost_around: Some(around),
        quiet: base.quiet,
        load: None,
        spread,
    })
}

/// The marker's packets the update's rule dropped, as intended (pure): for the first
/// update carrying the marker whose effect was dated, each marker flow's (`(sent,
/// bins)`) packets after its highest received (a drop: every one sent after it was
/// lost, the rule in place) or before its first received (a deletion: the rule dropped
/// them until it went); for a replacement whose rule the next replacement took out
/// again, each marker flow's losses sent between the two ([`replaced_marker_span`]).
/// `None` without such an update: nothing is excused.
pub fn marker_dropped(updates: &[UpdateEffect], marker_flows: &[(u64, &FlowBins)]) -> Option<u64> {
    // Reloads: the rule set drops every marker packet before and after each; what
    // did not pass was dropped as intended (what passed are the violations).
    if updates.iter().any(|u| u.violations.is_some()) {
        return Some(
            marker_flows
                .iter()
                .map(|(sent, b)| {
                    sent.saturating_sub(b.received.iter().map(|&n| u64::from(n)).sum())
                })
                .sum(),
        );
    }
    // A replacement whose marker rule a later one took out again (its time to effect
    // withheld: `say_why_no_effect`): the rule dropped the marker only between the two.
    if let Some((from, until)) = replaced_marker_span(updates) {
        return Some(
            marker_flows
                .iter()
                .map(|(_, b)| lost_sent_within(b, from, until))
                .sum(),
        );
    }
    let u = updates
        .iter()
        .find(|u| u.row.marker && u.time_to_effect_ms.is_some())?;
    Some(
        marker_flows
            .iter()
            .map(|(sent, b)| match u.row.kind.marker_fate() {
                MarkerFate::Drops => b
                    .highest
                    .map_or(0, |(h, _)| sent.saturating_sub(u64::from(h) + 1)),
                // An expiry: the run its element dropped (the add to the expiry).
                MarkerFate::Passes if u.row.kind == UpdateKind::ExpireElements => {
                    expiry_run(b).map_or(0, |r| r.0)
                }
                MarkerFate::Passes => b.first.map_or(0, |(f, _)| u64::from(f).min(*sent)),
                MarkerFate::Kept => 0,
            })
            .sum(),
    )
}

/// Where the marker's replacement held its rule: from its commit's start to the end of
/// the next replacement's commit, which put the rule set back without it (ns since the
/// epoch; `None` without a marker replacement followed by another that ran).
fn replaced_marker_span(updates: &[UpdateEffect]) -> Option<(u64, u64)> {
    let ran = |u: &&UpdateEffect| u.row.error.is_none() && u.row.start_unix_ns > 0;
    let replace = |u: &&UpdateEffect| u.row.kind == UpdateKind::Replace;
    let m = updates
        .iter()
        .filter(ran)
        .filter(replace)
        .find(|u| u.row.marker && u.row.index == 0)?;
    let next = updates
        .iter()
        .filter(ran)
        .filter(replace)
        .filter(|u| u.row.start_unix_ns > m.row.start_unix_ns)
        .min_by_key(|u| u.row.start_unix_ns)?;
    Some((
        m.row.start_unix_ns,
        next.row.start_unix_ns + next.row.commit_ns,
    ))
}

/// A flow's packets lost that were sent from `from` to `until` (ns since the epoch), by
/// its bins, a bin either side included (a bin's losses are placed by send time).
fn lost_sent_within(b: &FlowBins, from: u64, until: u64) -> u64 {
    if until < b.origin_ns {
        return 0;
    }
    let w = b.width_ns.max(1);
    let first = (from.saturating_sub(b.origin_ns) / w).saturating_sub(1) as usize;
    let last = (until.saturating_sub(b.origin_ns) / w + 1) as usize;
    b.lost
        .iter()
        .take(last + 1)
        .skip(first)
        .map(|&n| u64::from(n))
        .sum()
}

/// The marker's packets that passed each reload: those sent from its start to the
/// next update's start (or the end), which the rule set before and after it drops —
/// by when they arrived (see below).
/// `markers`: every marker flow's bins; `gap_ns`: the marker's spacing (the shortest
/// gap in enforcement it can see; `None`: unknown, [`marker_gap`]). A marker that sent
/// and had nothing received (no bins): none passed; one of unknown spacing with nothing
/// received: no figure. A reload that let none through is flagged too coarse where the
/// marker's spacing exceeds its commit, or is unknown (never read as 0).
fn count_violations(updates: &mut [UpdateEffect], markers: &[&FlowBins], gap_ns: Option<u64>) {
    let starts: Vec<u64> = updates
        .iter()
        .map(|u| u.row.start_unix_ns)
        .filter(|&t| t > 0)
        .collect();
    for u in updates.iter_mut() {
        let start = u.row.start_unix_ns;
        if u.row.kind.marker_fate() != MarkerFate::Kept || start == 0 || u.row.error.is_some() {
            continue;
        }
        if markers.is_empty() && gap_ns.is_none() {
            continue;
        }
        let next = starts
            .iter()
            .copied()
            .filter(|&t| t > start)
            .min()
            .unwrap_or(u64::MAX);
        let mut v = Violations {
            passed: 0,
            window_ms: None,
            from_ms: None,
            probe_gap_ms: gap_ns.map_or(f64::NAN, |g| g as f64 / 1e6),
        };
        let (mut first, mut last) = (None, 0u64);
        for m in markers {
            for (i, &n) in m.received.iter().enumerate() {
                // By when the bin's packets arrived (send time plus their mean one-way
                // delay), not when they were sent: a packet sent just before the next
                // reload that passed in that reload's gap, queued meanwhile, is the next
                // reload's violation (seen: a 1 001-element set's 30-ms reload credited
                // with a 997-ms window).
                let owd_ns = m.owd_sum_us.get(i).copied().unwrap_or(0) * 1000 / u64::from(n.max(1));
                let t = m.origin_ns + i as u64 * m.width_ns + owd_ns;
                if n == 0 || t + m.width_ns <= start || t >= next {
                    continue;
                }
                v.passed += u64::from(n);
                first = Some(first.map_or(t, |f: u64| f.min(t)));
                last = last.max(t + m.width_ns);
            }
        }
        v.window_ms = first.map(|f| (last - f) as f64 / 1e6);
        v.from_ms = first.map(|f| (f as i64 - start as i64) as f64 / 1e6);
        // A reload that outlived the traffic: what passed before its end is a lower
        // bound (flagged unobserved); that none passed is no finding.
        if v.passed == 0 && u.doubts.iter().any(|d| d.kind == DoubtKind::Unobserved) {
            continue;
        }
        match gap_ns.map(|g| g as f64 / 1e6) {
            Some(gap) if v.passed == 0 && gap > u.commit_ms => u.doubts.push(Doubt::new(
                DoubtKind::TooCoarse,
                format!(
                    "the marker's packets were {gap:.3} ms apart, more than the reload's {:.3} \
                     ms: a gap in enforcement shorter than that goes unseen (send faster: -r)",
                    u.commit_ms
                ),
            )),
            None if v.passed == 0 => u.doubts.push(Doubt::new(
                DoubtKind::TooCoarse,
                format!(
                    "the marker's spacing is unknown (fewer than two of its packets received, \
                     and its sender's count not known or below two): a gap in enforcement of \
                     the reload's {:.3} ms may have gone unseen",
                    u.commit_ms
                ),
            )),
            Some(_) | None => {}
        }
        u.violations = Some(v);
    }
}

/// The marker's packets' spacing, ns: from its first flow's bins where two or more of
/// its packets were received (their sequence numbers and send stamps), else from what
/// that flow sent (`sent`) over the trial. One packet received dates no spacing (it read
/// 0: the too-coarse check never fired and the text said "marker every 0.000 ms").
/// `None`: unknown — fewer than two received and fewer than two sent (or not counted).
fn marker_gap(marker: Option<&FlowBins>, sent: Option<u64>, duration_s: f64) -> Option<u64> {
    let from_bins = marker.and_then(|m| match (m.first, m.highest) {
        (Some((f, ftx)), Some((h, htx))) if h > f => {
            Some(htx.saturating_sub(ftx) / u64::from(h - f))
        }
        _ => None,
    });
    from_bins.or(match sent {
        Some(n) if n >= 2 => Some((duration_s * 1e9 / n as f64) as u64),
        _ => None,
    })
}

/// How finely a flow's stamps date a packet: a bin, plus the span of a send batch (a
/// batch of `batch` datagrams shared by `flows` flows leaves at once, up to its span
/// ahead of its stamps' schedule).
fn flow_resolution(m: &FlowBins, batch: u32, flows: u32) -> u64 {
    let interval = match (m.first, m.highest) {
        (Some((f, ftx)), Some((h, htx))) if h > f => (htx - ftx) / u64::from(h - f),
        _ => 0,
    };
    BIN_NS + u64::from(batch) * interval / u64::from(flows.max(1))
}

/// The run of marker packets an expiring element dropped: from its add at the start
/// of the traffic to its expiry, the marker's longest run lost — the one before its
/// first packet received (it sent nothing before the add was made), or the longest
/// between two received (it passed until the add). (packets, the send stamp of the
/// first packet after it when the run lies between two received; `None` when it opens
/// the flow: its end is then the first packet's, as for a deletion.)
fn expiry_run(m: &FlowBins) -> Option<(u64, Option<u64>)> {
    let opening = m.first.map_or(0, |(f, _)| u64::from(f));
    let between = m.longest_gap.map(|(before, _, after, atx)| {
        (
            u64::from(after.saturating_sub(before).saturating_sub(1)),
            atx,
        )
    });
    match between {
        Some((n, atx)) if n > opening => Some((n, Some(atx))),
        _ if opening > 0 => Some((opening, None)),
        _ => None,
    }
}

/// When the marker packet the change acted on reached the gateway: its send stamp
/// plus the one-way delay of its neighbour received (a backlog delays both alike).
fn flow_effect_stamp(kind: UpdateKind, m: &FlowBins) -> Option<u64> {
    let fate = kind.marker_fate();
    if fate == MarkerFate::Kept {
        return None;
    }
    if fate == MarkerFate::Drops {
        // The packet after the highest received, if it was lost.
        let (h, htx) = m.highest?;
        let (f, ftx) = m.first?;
        let interval = if h > f {
            (htx - ftx) / u64::from(h - f)
        } else {
            0
        };
        let lost_after = m
            .lost
            .iter()
            .skip(((htx.saturating_sub(m.origin_ns)) / m.width_ns) as usize)
            .any(|&n| n > 0);
        lost_after.then_some(htx + interval + m.highest_owd_us * 1_000)
    } else if let (UpdateKind::ExpireElements, Some(atx)) = (kind, expiry_run(m).and_then(|r| r.1))
    {
        // The first packet received after the run its element dropped, plus its bin's
        // mean one-way delay.
        let bin = (atx.saturating_sub(m.origin_ns) / m.width_ns.max(1)) as usize;
        let owd_us = match (m.owd_sum_us.get(bin), m.received.get(bin)) {
            (Some(&sum), Some(&n)) if n > 0 => sum / u64::from(n),
            _ => 0,
        };
        Some(atx + owd_us * 1_000)
    } else {
        // The first packet received, if packets before it were lost.
        let (f, ftx) = m.first?;
        (f > 0).then_some(ftx + m.first_owd_us * 1_000)
    }
}

/// When the marker transaction the change acted on reached the gateway: its start
/// plus half its neighbour's latency (the request's way there). A drop: the first
/// that failed after the last one completed; a deletion: the first completed, if
/// some failed before it.
fn txn_effect_stamp(kind: UpdateKind, m: &TxnBins) -> Option<u64> {
    match kind.marker_fate() {
        MarkerFate::Drops => {
            let (_, latency) = m.last_done?;
            Some(m.failed_after_last? + latency / 2)
        }
        MarkerFate::Passes => {
            let (start, latency) = m.first_done?;
            (m.failed_before_first > 0).then_some(start + latency / 2)
        }
        MarkerFate::Kept => None,
    }
}

/// What every update of a trial is judged against: the trial's quiet window (its
/// baseline), and whether an overloaded one may be told to use `--load`.
#[derive(Debug, Default)]
struct Base {
    quiet: Option<Quiet>,
    /// A paced background's queue that filled before the first update
    /// ([`queue_before`]): the load was not carried before it.
    queue: Option<QueueBefore>,
    /// A flood or flow without `--load`: the flag that sets its rate applies.
    suggest_load: bool,
    /// Background packets sent by flows that received nothing in the whole trial
    /// (they have no bins, so no window holds them).
    unreceived: u64,
}

impl Base {
    fn of(p: &TrialParams, rows: &[UpdateRow], background: &[Background]) -> Base {
        let loadable = p.kind.takes_load();
        Base {
            quiet: quiet_window(rows, background),
            queue: None,
            suggest_load: loadable && load_of(p).is_none(),
            unreceived: 0,
        }
    }
}

/// The trial's `--load` (its capacity recorded once it ran).
fn load_of(p: &TrialParams) -> Option<crate::params::events::Load> {
    p.events.as_ref().and_then(|e| e.load.clone())
}

/// When the first update that ran started (`None`: none did).
fn first_start(rows: &[UpdateRow]) -> Option<u64> {
    rows.iter()
        .filter(|r| r.start_unix_ns > 0)
        .map(|r| r.start_unix_ns)
        .min()
}

/// The trial's quiet window: the background from [`QUIET_NS`] before the first update
/// (or from its first traffic) to that update's start; `None` when shorter than
/// [`QUIET_MIN_NS`] or empty.
fn quiet_window(rows: &[UpdateRow], background: &[Background]) -> Option<Quiet> {
    let first = first_start(rows)?;
    let begin = background
        .iter()
        .filter_map(|b| {
            let i = (0..b.received.len()).find(|&i| b.received[i] + b.lost[i] > 0)?;
            Some(b.origin_ns + i as u64 * b.width_ns)
        })
        .min()?;
    let from = begin.max(first.saturating_sub(QUIET_NS));
    if first < from + QUIET_MIN_NS {
        return None;
    }
    // Every stream's bins by their start: the background as a whole, bin by bin.
    let mut bins: std::collections::BTreeMap<u64, (u64, u64, u64)> = Default::default();
    for b in background {
        for i in 0..b.received.len() {
            let t = b.origin_ns + i as u64 * b.width_ns;
            if (from..first).contains(&t) {
                let bin = bins.entry(t).or_insert((0, 0, b.width_ns));
                bin.0 += u64::from(b.received[i]);
                bin.1 += u64::from(b.lost[i]);
            }
        }
    }
    let (received, lost) = bins.values().fold((0, 0), |(r, l), b| (r + b.0, l + b.1));
    let offered = received + lost;
    let ns = first - from;
    (offered > 0).then(|| Quiet {
        from_ms: -(ns as f64) / 1e6,
        ms: ns as f64 / 1e6,
        received,
        lost,
        loss: lost as f64 / offered as f64,
        offered_per_s: offered as f64 / (ns as f64 / 1e9),
        dark_ms: longest_dark(&bins) as f64 / 1e6,
    })
}

/// The longest run of consecutive bins (`start → (received, lost, width)`) that lost
/// and received nothing, ns.
fn longest_dark(bins: &std::collections::BTreeMap<u64, (u64, u64, u64)>) -> u64 {
    let (mut run, mut longest, mut next) = (0u64, 0u64, None);
    for (&t, &(rx, lost, width)) in bins {
        if rx == 0 && lost > 0 {
            run = if next == Some(t) { run + width } else { width };
            longest = longest.max(run);
            next = Some(t + width);
        } else {
            next = None;
        }
    }
    longest
}

/// A queue that filled before the first update: the background's mean one-way delay
/// per bin, from its first traffic to the update's window ([`BEFORE_NS`] before its
/// start; at least [`QUEUE_SPAN_MIN_NS`]), rose evenly by `growth_ms`. Over a span
/// `S` the path then forwarded `g / (S + g)` less than it was offered, as a trial's
/// queue does (`limited_by::queue_share`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct QueueBefore {
    span_ms: f64,
    /// Mean delay of the span's first and last tenth, ms.
    from_ms: f64,
    to_ms: f64,
    /// Least-squares growth over the span, ms.
    growth_ms: f64,
}

impl QueueBefore {
    /// The share of what was offered that the queue held.
    fn share(&self) -> f64 {
        self.growth_ms / (self.span_ms + self.growth_ms)
    }

    /// The sender's own lateness (`max_lag_ns`, the whole trial's: its lateness
    /// before the update alone is not known; delays count from when each packet was
    /// due) reached half the growth: it may be the sender's.
    fn senders(&self, max_lag_ns: u64) -> bool {
        max_lag_ns as f64 / 1e6 * 2.0 >= self.growth_ms
    }
}

/// Shortest span before the first update that a queue is read from.
const QUEUE_SPAN_MIN_NS: u64 = 200_000_000;

/// Least growth that counts as a queue, ms: below it, a noisy machine's delays.
const QUEUE_GROWTH_MIN_MS: f64 = 5.0;

/// The queue the background's delays show before the first update (`None`: no span
/// long enough, or no growth past [`QUEUE_GROWTH_MIN_MS`] and
/// `limited_by::QUEUE_SHARE_FLOOR` of the span rising evenly from its first tenth to
/// its last). Pure.
fn queue_before(rows: &[UpdateRow], background: &[Background]) -> Option<QueueBefore> {
    // Up to the update's own window (packets in flight at its commit carry its stall).
    let end = first_start(rows)?.saturating_sub(BEFORE_NS);
    // (ns, received, delay sum µs) per bin of every background stream before it.
    let mut bins: std::collections::BTreeMap<u64, (u64, u64)> = Default::default();
    for b in background {
        for i in 0..b.received.len() {
            let t = b.origin_ns + i as u64 * b.width_ns;
            if t + b.width_ns > end || b.received[i] == 0 {
                continue;
            }
            let e = bins.entry(t).or_default();
            e.0 += u64::from(b.received[i]);
            e.1 += b.delay_sum_us.get(i).copied().unwrap_or(0);
        }
    }
    let begin = *bins.keys().next()?;
    if end < begin + QUEUE_SPAN_MIN_NS {
        return None;
    }
    // (ms from the span's start, mean delay ms)
    let pts: Vec<(f64, f64)> = bins
        .iter()
        .map(|(t, (n, sum))| ((t - begin) as f64 / 1e6, *sum as f64 / *n as f64 / 1e3))
        .collect();
    let span_ms = (end - begin) as f64 / 1e6;
    let growth_ms = report::stats::fit_line(&pts)?.b * span_ms;
    let tenth = |lo: f64, hi: f64| {
        let v: Vec<f64> = pts
            .iter()
            .filter(|p| p.0 >= lo * span_ms && p.0 < hi * span_ms)
            .map(|p| p.1)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let (from_ms, mid_ms, to_ms) = (tenth(0.0, 0.1)?, tenth(0.45, 0.55)?, tenth(0.9, 1.01)?);
    let q = QueueBefore {
        span_ms,
        from_ms,
        to_ms,
        growth_ms,
    };
    // Rising from the first tenth to the last by at least half the fitted growth (not
    // a hump a stall left), the middle tenth between a quarter and three quarters of
    // the way (evenly: not a step to a queue that then stood still).
    let way = (mid_ms - from_ms) / (to_ms - from_ms);
    (growth_ms >= QUEUE_GROWTH_MIN_MS
        && q.share() > crate::limited_by::QUEUE_SHARE_FLOOR
        && to_ms - from_ms >= growth_ms / 2.0
        && (0.25..=0.75).contains(&way))
    .then_some(q)
}

/// Every update's effect ([`effect`]), each marker stamp from `effect_at`, each window's
/// loss counted once where an earlier one holds it too ([`claimed_until`]).
fn effects(
    rows: Vec<UpdateRow>,
    background: &[Background],
    unit: Unit,
    base: &Base,
    traffic_end: Option<u64>,
    effect_at: impl Fn(&UpdateRow) -> Option<(u64, u64)>,
) -> Vec<UpdateEffect> {
    let claimed = claimed_until(&rows);
    rows.into_iter()
        .zip(claimed)
        .map(|(row, claimed)| {
            let at = effect_at(&row);
            effect(row, at, background, unit, base, traffic_end, claimed)
        })
        .collect()
}

/// Where the windows of the updates that ran before each one (an earlier start; at the
/// same start, the one reported first) end, ns since the epoch: the background's bins
/// before it are theirs ([`UpdateEffect::lost_once`]). 0: none ran before it, or it did
/// not run itself (no error and a start: only those have windows). An earlier window
/// starts no later than this one, so what of this one it holds is this one's start up
/// to that end.
fn claimed_until(rows: &[UpdateRow]) -> Vec<u64> {
    let ran = |r: &UpdateRow| r.error.is_none() && r.start_unix_ns > 0;
    let mut order: Vec<usize> = (0..rows.len()).filter(|&i| ran(&rows[i])).collect();
    order.sort_by_key(|&i| (rows[i].start_unix_ns, i));
    let mut claimed = vec![0; rows.len()];
    let mut end = 0;
    for i in order {
        claimed[i] = end;
        end = end.max(rows[i].start_unix_ns + rows[i].commit_ns + AFTER_NS);
    }
    claimed
}

/// One update's effect: the time to effect (from `effect_at`, for the update that
/// carries the marker) and the background's window around it, with the witness of
/// each figure (see [`UpdateEffect`]) against `base`. `traffic_end` is when the last
/// background bin with traffic closed (`None`: no background); the background's bins
/// before `claimed` are earlier updates' windows' ([`claimed_until`]; 0: none).
fn effect(
    row: UpdateRow,
    effect_at: Option<(u64, u64)>,
    background: &[Background],
    unit: Unit,
    base: &Base,
    traffic_end: Option<u64>,
    claimed: u64,
) -> UpdateEffect {
    let start = row.start_unix_ns;
    let end = start + row.commit_ns;
    let (time_to_effect_ms, effect_resolution_ms) =
        match (row.marker, effect_at, row.error.is_none() && start > 0) {
            // An expiry's start is known to within its marker's add (its slack).
            (true, Some((t, res)), true) => (
                Some((t as i128 - start as i128) as f64 / 1e6),
                Some((res + row.start_slack_ns) as f64 / 1e6),
            ),
            _ => (None, None),
        };
    let w = Window::merge(start, end, background, claimed);
    let stall_ms = match unit {
        // Longest run of bins with losses and nothing received.
        Unit::Packets => (w.longest_dark() * BIN_NS) as f64 / 1e6,
        // What a background transaction waited at most.
        Unit::Echoes | Unit::Probes | Unit::Sessions => w.delay_max as f64 / 1e3,
    };
    let series = if start > 0 && !background.is_empty() {
        w.series(start)
    } else {
        vec![]
    };
    // An update that failed or never ran has no window: no stall or loss figure (they
    // read "0" in the JSON and the store, an empty window's sums).
    let ran = row.error.is_none() && start > 0;
    let mut u = UpdateEffect {
        commit_ms: row.commit_ns as f64 / 1e6,
        time_to_effect_ms,
        effect_resolution_ms,
        no_time_to_effect: None,
        stall_ms: ran.then_some(stall_ms),
        lost: ran.then(|| w.lost.iter().map(|&x| u64::from(x)).sum()),
        lost_beyond_baseline: None,
        lost_once: None,
        blocked_ms: None,
        baseline_loss: None,
        baseline: None,
        owd_max_us: w.delay_max,
        series,
        no_delays: None,
        row,
        doubts: vec![],
        violations: None,
    };
    if ran {
        if base.unreceived > 0 {
            u.nothing_forwarded(unit, base);
        }
        if background.is_empty() {
            // No stream of the background has bins (none received anything, or the
            // trial has none: every flow the marker's): nothing measured in the window,
            // no stall or loss figure (never 0).
            u.stall_ms = None;
            u.lost = None;
        } else {
            u.witness(&w, unit, base);
        }
        u.outlived(traffic_end);
    }
    u
}

/// Say why each update that ran has no time to effect (`UpdateEffect::
/// no_time_to_effect`; not a doubt: nothing is wrong with the figures). Only an
/// event's first update carries the marker's rule or element (`row.marker`), and a
/// time to effect is dated for a change the marker meets from then to the end of
/// the traffic (a drop: lost after its last packet received; a deletion: received
/// after losses). A replacement is the installed rule set plus fresh rules, so update
/// 1 of a `replace` event takes the marker's rule of update 0 out again: the marker
/// is dropped only between them, and the replacements after it change nothing the
/// marker meets. Repeated additions, deletions and element updates change fillers
/// that match nothing of the trial.
fn say_why_no_effect(updates: &mut [UpdateEffect], unit: Unit) {
    let noun = unit.noun();
    let ran = |u: &UpdateEffect| u.row.error.is_none() && u.row.start_unix_ns > 0;
    let repeated: Vec<u32> = updates
        .iter()
        .filter(|u| u.row.index > 0 && ran(u))
        .map(|u| u.row.event)
        .collect();
    // A trace (churn replay): events after the first, once each; a replacement among
    // them takes the first one's rule for the marker out again.
    let replaced_later = updates
        .iter()
        .any(|u| u.row.event > 0 && u.row.kind == UpdateKind::Replace && ran(u));
    // The marker's replacement whose rule a later replacement took out again: the
    // marker passed again after that, so whatever its stamps dated (loss near the end
    // of an overloaded trial looked like a drop 9.1 s after the commit) is no effect
    // of this one — withheld, said below.
    for u in updates.iter_mut().filter(|u| {
        u.row.kind == UpdateKind::Replace
            && u.row.marker
            && u.row.index == 0
            && ((u.row.event == 0 && replaced_later) || repeated.contains(&u.row.event))
    }) {
        u.time_to_effect_ms = None;
        u.effect_resolution_ms = None;
    }
    // A commit that outlived the traffic: its doubt says why (withheld, not absent).
    let unobserved = |u: &UpdateEffect| u.doubts.iter().any(|d| d.kind == DoubtKind::Unobserved);
    for u in updates
        .iter_mut()
        .filter(|u| ran(u) && u.time_to_effect_ms.is_none() && !unobserved(u))
    {
        let r = &u.row;
        let again = repeated.contains(&r.event);
        let why = match (r.kind, r.index, r.marker) {
            (UpdateKind::Reload, _, _) => format!(
                "a reload loads the rule set in force again, so none of the marker's {noun} \
                 should pass; its figure is those that did (violations)"
            ),
            (UpdateKind::ReloadSet, _, _) => format!(
                "a set's reload loads the set in force again, so none of the marker's {noun} \
                 should pass; its figure is those that did (violations)"
            ),
            (UpdateKind::Replace, 0, true) if r.event == 0 && replaced_later => format!(
                "a later replacement put the installed rule set back with fresh rules, \
                 without the marker's (only the schedule's first update carries it): the \
                 marker's {noun} were dropped only between the two, and a drop is dated only \
                 when it lasts to the end of the traffic"
            ),
            (UpdateKind::Replace, 0, false) if r.event > 0 => format!(
                "only the schedule's first update carries the marker's rule; this replacement \
                 is the installed rule set plus fresh rules, none of which the marker's {noun} \
                 meet"
            ),
            (_, 0, false) if r.event > 0 => format!(
                "only the schedule's first update (a trace's first operation) carries the \
                 marker's rule or element; this one's match no {noun} of the trial"
            ),
            (_, 0, false) => "this trial has no marker stream for the update to act on".into(),
            (UpdateKind::Replace, 0, true) if again => format!(
                "update 1 of this event replaced the rule set again without the marker's rule \
                 (each replacement is the installed rule set plus fresh rules; only this one's \
                 hold the marker's): the marker's {noun} were dropped only between the two, \
                 and a drop is dated only when it lasts to the end of the traffic"
            ),
            (UpdateKind::Replace, 1, _) => format!(
                "this replacement took update 0's rule for the marker out again: the marker's \
                 {noun} pass from here on (a time to effect is dated for a rule that drops, \
                 or a deletion)"
            ),
            (UpdateKind::Replace, _, false) => format!(
                "the marker's rule went with update 1 of this event: this replacement changes \
                 nothing the marker's {noun} meet"
            ),
            (UpdateKind::Add, 0, true) if r.place == EventPlace::AfterEstablished => format!(
                "the marker's flow was established before the rule came, and the rule sits \
                 behind the one accepting established flows: none of its {noun} met it — a \
                 new block leaves an existing connection passing until its conntrack entry \
                 goes"
            ),
            (UpdateKind::Add, 0, true) if r.place == EventPlace::AfterEstablishedCtDelete => {
                format!(
                    "the update deleted the marker's conntrack entries, yet its {noun} kept \
                     passing: the flow's first packet from the other side (a reply in flight, \
                     new to the chain, which accepts it) made a new entry, and the marker's \
                     own packets are its replies — established again; deleting the entries \
                     closes the hole only where the chain drops new packets from that side"
                )
            }
            (_, _, true) => format!("no marker {noun} changed fate after the commit"),
            (
                UpdateKind::Add
                | UpdateKind::Delete
                | UpdateKind::AddElements
                | UpdateKind::RemoveElements
                | UpdateKind::ExpireElements,
                _,
                false,
            ) => format!(
                "only update 0 of its event carries the marker's rule or element; this one's \
                 match no {noun} of the trial"
            ),
        };
        u.no_time_to_effect = Some(why);
    }
}

/// The background merged per bin over one update's window: from [`BEFORE_NS`] before
/// the commit's start to [`AFTER_NS`] after it returned; the bins before the start
/// are the same trial's baseline.
struct Window {
    rx: Vec<u32>,
    lost: Vec<u32>,
    delay_sum: Vec<u64>,
    delay_max: u64,
    /// Bins before the commit's start.
    before: usize,
    from: u64,
    /// (received, lost) of the background's bins in the window that no earlier
    /// update's window holds (from `claimed` on) …
    unclaimed: (u64, u64),
    /// … and how many of the window's bins hold them: from the one holding `claimed`
    /// to the last (all of them where no earlier window reaches into it).
    unclaimed_bins: usize,
}

impl Window {
    /// The window of an update started at `start` whose commit returned at `end`; the
    /// background's bins before `claimed` are earlier updates' windows'.
    fn merge(start: u64, end: u64, background: &[Background], claimed: u64) -> Window {
        let (from, to) = (start.saturating_sub(BEFORE_NS), end + AFTER_NS);
        let n = ((to - from) / BIN_NS) as usize + 1;
        let own = claimed.clamp(from, to);
        let mut w = Window {
            rx: vec![0; n],
            lost: vec![0; n],
            delay_sum: vec![0; n],
            delay_max: 0,
            before: ((start - from) / BIN_NS) as usize,
            from,
            unclaimed: (0, 0),
            unclaimed_bins: n - ((own - from) / BIN_NS) as usize,
        };
        if start == 0 {
            return w;
        }
        for b in background {
            for i in 0..b.received.len() {
                let t = b.origin_ns + i as u64 * b.width_ns;
                if t < from || t >= to {
                    continue;
                }
                let j = ((t - from) / BIN_NS) as usize;
                w.rx[j] += b.received[i];
                w.lost[j] += b.lost[i];
                w.delay_sum[j] += b.delay_sum_us[i];
                w.delay_max = w.delay_max.max(u64::from(b.delay_max_us[i]));
                if t >= own {
                    w.unclaimed.0 += u64::from(b.received[i]);
                    w.unclaimed.1 += u64::from(b.lost[i]);
                }
            }
        }
        w
    }

    /// Bins in the longest run that lost packets and received none.
    fn longest_dark(&self) -> u64 {
        self.longest_dark_in(0..self.rx.len())
    }

    /// [`Window::longest_dark`] over some of the bins.
    fn longest_dark_in(&self, bins: std::ops::Range<usize>) -> u64 {
        let (mut run, mut longest) = (0u64, 0u64);
        for (rx, lost) in self.rx[bins.clone()].iter().zip(&self.lost[bins]) {
            if *rx == 0 && *lost > 0 {
                run += 1;
                longest = longest.max(run);
            } else {
                run = 0;
            }
        }
        longest
    }

    fn series(&self, start: u64) -> Vec<(f64, u32, u32, f64)> {
        (0..self.rx.len())
            .map(|j| {
                let t_ms = ((self.from + j as u64 * BIN_NS) as i128 - start as i128) as f64 / 1e6;
                let mean = if self.rx[j] > 0 {
                    self.delay_sum[j] as f64 / f64::from(self.rx[j])
                } else {
                    0.0
                };
                (t_ms, self.rx[j], self.lost[j], mean)
            })
            .collect()
    }

    /// (received, lost) summed over bins `range`.
    fn sums(&self, range: std::ops::Range<usize>) -> (u64, u64) {
        let rx = self.rx[range.clone()].iter().map(|&x| u64::from(x)).sum();
        let lost = self.lost[range].iter().map(|&x| u64::from(x)).sum();
        (rx, lost)
    }
}

impl UpdateEffect {
    /// Judge this update's figures against its window: no background in it → no
    /// stall or loss figure; the bins before the commit that already lost more than
    /// [`OVERLOAD_LOSS`], or a quiet window that did → flagged (with `--load` suggested
    /// where the trial could take it); the loss beyond the baseline's rate (the trial's quiet window, else the
    /// bins before the commit) and the effective blocked time; a commit that outlived
    /// the traffic.
    fn witness(&mut self, w: &Window, unit: Unit, base: &Base) {
        let noun = unit.noun();
        let (rx, lost) = w.sums(0..w.rx.len());
        if rx + lost == 0 {
            self.stall_ms = None;
            self.lost = None;
            self.doubts.push(Doubt::new(
                DoubtKind::EmptyWindow,
                format!(
                    "no background {noun} in the update's window ({} ms before the commit to {} ms after it): no stall or loss figure",
                    BEFORE_NS / 1_000_000,
                    AFTER_NS / 1_000_000
                ),
            ));
            return;
        }
        if let Some(q) = &base.quiet {
            self.baseline = Some(BaselineKind::Quiet);
            self.baseline_loss = Some(q.loss);
            let beyond =
                |rx: u64, lost: u64| (lost as f64 - q.loss * (rx + lost) as f64).max(0.0).round();
            self.lost_once = Some(beyond(w.unclaimed.0, w.unclaimed.1) as u64);
            let beyond = beyond(rx, lost) as u64;
            self.lost_beyond_baseline = Some(beyond);
            self.blocked_ms = Some(beyond as f64 / q.offered_per_s * 1e3);
        }
        if let Some(q) = base.queue.filter(|_| unit == Unit::Packets) {
            self.doubts.push(Doubt::new(
                DoubtKind::Overloaded,
                // By how much, not from and to: a sender and a sink on two hosts read
                // their delays across two clocks, whose offset a growth cancels.
                format!(
                    "the background's one-way delay grew evenly by {:.1} ms over the {:.0} \
                     ms before the first update: a queue filled, holding about {:.1} % of \
                     what was offered — the gateway could not carry the load before it{}",
                    q.to_ms - q.from_ms,
                    q.span_ms,
                    q.share() * 100.0,
                    suggestion(base)
                ),
            ));
        }
        let (brx, blost) = w.sums(0..w.before);
        if brx + blost == 0 {
            self.doubts.push(Doubt::new(
                DoubtKind::EmptyWindow,
                format!(
                    "no background {noun} in the {} ms before the update: nothing to compare its loss with",
                    BEFORE_NS / 1_000_000
                ),
            ));
        } else {
            let ratio = blost as f64 / (brx + blost) as f64;
            if base.quiet.is_none() {
                self.baseline = Some(BaselineKind::BeforeUpdate);
                self.baseline_loss = Some(ratio);
                let per_bin = blost as f64 / w.before.max(1) as f64;
                let beyond = |lost: u64, bins: f64| (lost as f64 - per_bin * bins).max(0.0).round();
                self.lost_once = Some(beyond(w.unclaimed.1, w.unclaimed_bins as f64) as u64);
                let beyond = beyond(lost, w.rx.len() as f64) as u64;
                self.lost_beyond_baseline = Some(beyond);
                // Offered over the bins before the start since the background began.
                let active = (0..w.before)
                    .position(|j| w.rx[j] + w.lost[j] > 0)
                    .map_or(w.before, |first| w.before - first);
                let offered_per_ms = (brx + blost) as f64 / (active as u64 * BIN_NS) as f64 * 1e6;
                self.blocked_ms = Some(beyond as f64 / offered_per_ms);
            }
            if ratio > OVERLOAD_LOSS && blost >= OVERLOAD_MIN_LOST {
                // A gap no longer than those the overload made before the update cannot
                // be told from them: no stall figure (withheld from the terminal, JSON,
                // store and report); the loss beyond the baseline stays, with its baseline.
                self.withhold_stall_within(
                    unit,
                    (w.longest_dark_in(0..w.before) * BIN_NS) as f64 / 1e6,
                );
                self.doubts.push(Doubt::new(
                    DoubtKind::Overloaded,
                    format!(
                        "the gateway lost {:.1} % of the background {noun} in the {} ms before the update: it could not carry the load before it{}",
                        ratio * 100.0,
                        BEFORE_NS / 1_000_000,
                        suggestion(base)
                    ),
                ));
            }
        }
        // The baseline itself lost past the overload's share (rules-under-load,
        // iptables-legacy at 20 001 rules: 32 % of its quiet 500 ms lost, the 50 ms
        // before the update clean, and the update's 2 748 lost and 42-ms stall read
        // "0 packets lost" beyond it, `ok`): the gateway could not carry the load
        // before the update, whatever its last 50 ms did. A stall no longer than its
        // gaps is withheld whichever check said so first; its doubt is said once.
        let flagged = self.doubts.iter().any(|d| d.kind == DoubtKind::Overloaded);
        if let Some(q) = base
            .quiet
            .as_ref()
            .filter(|q| q.loss > OVERLOAD_LOSS && q.lost >= OVERLOAD_MIN_LOST)
        {
            self.withhold_stall_within(unit, q.dark_ms);
            if flagged {
                return;
            }
            self.doubts.push(Doubt::new(
                DoubtKind::Overloaded,
                format!(
                    "the gateway lost {:.1} % of the background {noun} in the trial's quiet \
                     window (the {:.0} ms before the first update, the baseline of every \
                     update's loss): it could not carry the load before it{}",
                    q.loss * 100.0,
                    q.ms,
                    suggestion(base)
                ),
            ));
        }
    }

    /// A commit that ended after the traffic (whatever its window held): its effect
    /// was not observed.
    fn outlived(&mut self, traffic_end: Option<u64>) {
        if let Some(last) = traffic_end {
            let end = self.row.start_unix_ns + self.row.commit_ns;
            if end > last {
                // Whatever the marker's stamps dated (its packets in flight when the
                // traffic stopped look lost after its last one received) is no effect
                // of this commit: withheld, absent from the terminal, JSON and store.
                self.time_to_effect_ms = None;
                self.effect_resolution_ms = None;
                self.doubts.push(Doubt::new(
                    DoubtKind::Unobserved,
                    format!(
                        "the commit ended {:.1} ms after the traffic: its effect was not observed \
                         (time to effect withheld)",
                        (end - last) as f64 / 1e6
                    ),
                ));
            }
        }
    }

    /// Background flows that received nothing in the whole trial: the gateway could
    /// not carry the load at all (seen with an unpaced flood through 5 000 nft rules,
    /// which once read "stalled 0 ms; 0 packets lost").
    fn nothing_forwarded(&mut self, unit: Unit, base: &Base) {
        self.doubts.push(Doubt::new(
            DoubtKind::Overloaded,
            format!(
                "the gateway forwarded none of {} background {} of flows that received \
                 nothing in the whole trial: it could not carry the load{}",
                base.unreceived,
                unit.noun(),
                suggestion(base)
            ),
        ));
    }

    /// A packet stream's stall no longer than `dark_ms`, the longest dark run an
    /// overload made before the update, cannot be told from its gaps: no stall figure
    /// (withheld from the terminal, JSON, store and report; the overload's doubt says
    /// why). A stream of rounds (echo) keeps its longest round trip: its disturbance.
    fn withhold_stall_within(&mut self, unit: Unit, dark_ms: f64) {
        if unit == Unit::Packets && self.stall_ms.is_some_and(|s| s <= dark_ms) {
            self.stall_ms = None;
        }
    }

    /// A time to effect below zero cannot be: within the stamps' resolution it is 0
    /// (the change acted at once); further below (the marker's sender behind its
    /// schedule, or clocks that differ) it is withheld, with why.
    fn withhold_impossible(&mut self) {
        let res = self.effect_resolution_ms.unwrap_or(0.0);
        if let Some(t) = self.time_to_effect_ms.filter(|t| *t < 0.0 && *t >= -res) {
            let _ = t;
            self.time_to_effect_ms = Some(0.0);
        }
        if let Some(t) = self.time_to_effect_ms.filter(|t| t.is_nan() || *t < 0.0) {
            self.time_to_effect_ms = None;
            self.doubts.push(Doubt::new(
                DoubtKind::Impossible,
                format!(
                    "the time to effect came out as {t:.2} ms, beyond the stamps' resolution of \
                     {res:.1} ms (the marker was dated before the commit began: its sender ran \
                     behind its schedule or the clocks differ): withheld"
                ),
            ));
        }
    }

    /// Its figures hold: no doubt.
    pub fn holds(&self) -> bool {
        self.doubts.is_empty()
    }
}

/// What an overloaded flood or flow without `--load` is told to do.
fn suggestion(base: &Base) -> &'static str {
    if base.suggest_load {
        " (offer the background at a share of what it forwards at this size: --load 0.5)"
    } else {
        ""
    }
}

/// Where the last bin with background traffic closed (`None`: no background).
fn traffic_end(background: &[Background]) -> Option<u64> {
    background
        .iter()
        .filter_map(|b| {
            let last = (0..b.received.len())
                .rev()
                .find(|&i| b.received[i] > 0 || b.lost[i] > 0)?;
            Some(b.origin_ns + (last as u64 + 1) * b.width_ns)
        })
        .max()
}

/// Background lost in the union of the updates' windows: each bin counted once
/// however many windows hold it.
fn lost_around(rows: &[UpdateRow], background: &[Background]) -> u64 {
    let mut windows: Vec<(u64, u64)> = rows
        .iter()
        .filter(|r| r.start_unix_ns > 0)
        .map(|r| {
            let start = r.start_unix_ns;
            (
                start.saturating_sub(BEFORE_NS),
                start + r.commit_ns + AFTER_NS,
            )
        })
        .collect();
    windows.sort_unstable();
    let mut merged: Vec<(u64, u64)> = vec![];
    for (a, b) in windows {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    let inside = |t: u64| {
        let i = merged.partition_point(|w| w.1 <= t);
        merged.get(i).is_some_and(|w| w.0 <= t)
    };
    background
        .iter()
        .map(|b| {
            b.lost
                .iter()
                .enumerate()
                .filter(|(i, _)| inside(b.origin_ns + *i as u64 * b.width_ns))
                .map(|(_, &n)| u64::from(n))
                .sum::<u64>()
        })
        .sum()
}

impl EventsSummary {
    /// Withhold what cannot be (a negative time to effect), once every correction
    /// (clocks) is applied; then [`EventsSummary::doubts`] says what is flagged.
    pub fn judge(&mut self) {
        for u in &mut self.updates {
            u.withhold_impossible();
        }
        self.spread = spread(&self.updates);
    }

    /// The trial's doubts from its updates: one per kind, counting the updates.
    pub fn doubts(&self) -> Vec<Doubt> {
        let mut by_kind: Vec<(DoubtKind, usize, String)> = vec![];
        for d in self.updates.iter().flat_map(|u| &u.doubts) {
            match by_kind.iter_mut().find(|(k, _, _)| *k == d.kind) {
                Some(e) => e.1 += 1,
                None => by_kind.push((d.kind, 1, d.why.clone())),
            }
        }
        // An update that failed or did not run: the traffic did not see the event the
        // trial was to measure.
        let mut failed = self.updates.iter().filter_map(|u| {
            let r = &u.row;
            let e = r.error.as_ref()?;
            Some(format!(
                "update {} of event {} ({} {}): {e}",
                r.index,
                r.event,
                r.kind.name(),
                r.k
            ))
        });
        if let Some(first) = failed.next() {
            by_kind.push((DoubtKind::UpdateFailed, 1 + failed.count(), first));
        }
        let n = self.updates.len();
        let mut out: Vec<Doubt> = by_kind
            .into_iter()
            .map(|(kind, count, first)| {
                let why = if n == 1 {
                    first
                } else {
                    format!("{count} of {n} updates, e.g. {first}")
                };
                Doubt::new(kind, why)
            })
            .collect();
        // `--load`: a share of a capacity its search did not establish is no share of
        // the gateway's capacity.
        out.extend(self.load.as_ref().and_then(load_doubt));
        out
    }
}

/// Findings in sentences, one per update with the marker or an error, and a count
/// of the rest: "adding 1 rule to 1 000 with nft by batch took 2.1 ms; …". A figure
/// without its witness is not stated as a finding: the line says why.
pub fn text(s: &EventsSummary, engine: &str) -> String {
    let mut out = String::new();
    if let Some(line) = s.load.as_ref().and_then(load_text) {
        out += &format!("\n  {line}");
    }
    if let Some(q) = &s.quiet {
        out += &format!(
            "\n  baseline: the {:.0} ms before the first update lost {:.2} % of the background \
             {} ({} of {}); each update is credited only with loss beyond it",
            q.ms,
            q.loss * 100.0,
            s.unit.noun(),
            q.lost,
            q.received + q.lost
        );
    }
    for u in &s.updates {
        let r = &u.row;
        if let Some(e) = &r.error {
            out += &format!(
                "\n  update {} of event {} ({} {}): {e}",
                r.index,
                r.event,
                r.kind.name(),
                r.k
            );
            continue;
        }
        if !(u.row.marker || s.updates.len() <= 3) {
            continue;
        }
        out += &format!(
            "\n  {}{}; {}{}",
            doing(r, engine, u.commit_ms),
            match (u.time_to_effect_ms, &u.no_time_to_effect, &u.violations) {
                (_, _, Some(v)) => violations_text(v, s.unit),
                (Some(t), _, None) => format!(", took effect after {t:.1} ms"),
                (None, Some(why), None) => format!(" (no time to effect: {why})"),
                (None, None, None) if u.row.marker && !u.doubts.is_empty() => {
                    " (time to effect withheld: see flagged)".into()
                }
                (None, None, None) => String::new(),
            },
            disturbance(s, u),
            if u.doubts.is_empty() {
                String::new()
            } else {
                let why: Vec<String> = u.doubts.iter().map(Doubt::to_string).collect();
                format!(" [flagged: {}]", why.join("; "))
            }
        );
    }
    if let Some(sp) = &s.spread {
        out += &format!("\n  {}", spread_text(sp));
    }
    let ok: Vec<&UpdateEffect> = s.updates.iter().filter(|u| u.row.error.is_none()).collect();
    if s.updates.len() > 3 && !ok.is_empty() {
        let mean = ok.iter().map(|u| u.commit_ms).sum::<f64>() / ok.len() as f64;
        let max = ok.iter().map(|u| u.commit_ms).fold(0.0, f64::max);
        let flagged = ok.iter().filter(|u| !u.holds()).count();
        let reloads: Vec<&Violations> = ok.iter().filter_map(|u| u.violations.as_ref()).collect();
        if !reloads.is_empty() {
            let leaky = reloads.iter().filter(|v| v.passed > 0).count();
            let passed: u64 = reloads.iter().map(|v| v.passed).sum();
            let widest = reloads
                .iter()
                .filter_map(|v| v.window_ms)
                .fold(0.0, f64::max);
            out += &if passed == 0 {
                format!(
                    "\n  violations: none of {} reloads let a must-drop {} through",
                    reloads.len(),
                    s.unit.noun().trim_end_matches('s')
                )
            } else {
                format!(
                    "\n  violations: {leaky} of {} reloads let must-drop {} through: {passed} in \
                     all, the widest window {widest:.1} ms",
                    reloads.len(),
                    s.unit.noun()
                )
            };
        }
        // What the updates together lost beyond the baseline, each packet once (where
        // every update with a loss figure has its share).
        let measured: Vec<&&UpdateEffect> = ok.iter().filter(|u| u.lost.is_some()).collect();
        let once = measured
            .iter()
            .map(|u| u.lost_once)
            .sum::<Option<u64>>()
            .filter(|_| !measured.is_empty());
        out += &format!(
            "\n  {} updates: commit mean {mean:.2} ms, max {max:.2} ms; {} {} around them{}{}",
            s.updates.len(),
            s.lost_around
                .unwrap_or_else(|| ok.iter().filter_map(|u| u.lost).sum::<u64>()),
            s.unit.lost_noun(),
            once.map(|n| format!(" ({n} beyond the baseline, each counted once)"))
                .unwrap_or_default(),
            if flagged > 0 {
                format!(" ({flagged} of them flagged)")
            } else {
                String::new()
            }
        );
    }
    out
}

/// "commit latency of 4 updates: p50 2.10 ms, p99 3.00 ms, max 3.00 ms; time to
/// effect (1 update with the marker): p50 …".
pub fn spread_text(sp: &Spread) -> String {
    let q = |x: &Quantiles| {
        format!(
            "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            x.p50, x.p99, x.max
        )
    };
    let mut t = format!(
        "commit latency of {} updates: {}",
        sp.updates,
        q(&sp.commit_ms)
    );
    if let Some(l) = sp.latency_ms.as_ref().filter(|_| sp.late > 0) {
        t += &format!(
            "; {} of them waited for earlier ones (the schedule outran the commits): \
             latency from due to committed {}",
            sp.late,
            q(l)
        );
    }
    if let Some(e) = &sp.time_to_effect_ms {
        t += &format!(
            "; time to effect ({} {} with the marker): {}",
            e.n,
            if e.n == 1 { "update" } else { "updates" },
            q(e)
        );
    }
    t
}

/// What a loss figure holds of the experiment: " (1214 of them the marker's, dropped
/// by the update's rule as intended)" — said beside the loss, never read as the
/// gateway's; empty where the rule dropped none.
pub fn intended_loss(s: &EventsSummary) -> String {
    match s.marker_dropped {
        Some(n) if n > 0 => {
            format!(" ({n} of them the marker's, dropped by the update's rule as intended)")
        }
        _ => String::new(),
    }
}

/// A trial's one-line summary's end: ", 5 reloads let 2275 must-drop packets through"
/// (empty without reloads).
pub fn violations_line(s: &EventsSummary) -> String {
    let v: Vec<&Violations> = s
        .updates
        .iter()
        .filter_map(|u| u.violations.as_ref())
        .collect();
    if v.is_empty() {
        return String::new();
    }
    format!(
        ", {} reloads let {} must-drop {} through",
        v.len(),
        v.iter().map(|x| x.passed).sum::<u64>(),
        s.unit.noun()
    )
}

/// ", let 27 must-drop packets through in 2.9 ms (marker every 0.05 ms)".
fn violations_text(v: &Violations, unit: Unit) -> String {
    let every = if v.probe_gap_ms.is_nan() {
        "the marker's spacing unknown".to_string()
    } else {
        format!("marker every {:.3} ms", v.probe_gap_ms)
    };
    match v.window_ms {
        Some(w) if v.passed > 0 => format!(
            ", let {} must-drop {} through in {w:.1} ms ({every})",
            v.passed,
            unit.noun()
        ),
        _ => format!(", let no must-drop {} through ({every})", unit.noun()),
    }
}

/// Why the background's load `l` is not the share of the gateway's capacity it says:
/// the capacity is what its search found, and that search did not converge
/// (`NotConverged`: the share is of a rate nobody settled, perhaps above what the
/// gateway carries) or carries doubts of the capacity (the first one's kind beyond
/// fwbench's limit, else its: a step that decides it flagged — traffic that bypassed the rule set —, a sender behind its
/// schedule at or below it). `None`: a stated capacity, or a search without doubt —
/// one whose capacity is fwbench's limit (its sender got no more out, or its lowest
/// failing rate failed by fwbench) is a lower bound, the background at most the share
/// asked of the gateway's, which the gateway carried (each update's own witness says
/// where it did not): [`load_text`] says "at least".
fn load_doubt(l: &crate::params::events::Load) -> Option<Doubt> {
    let c = l.capacity.as_ref()?;
    let f = c.search.as_ref()?;
    let head = format!(
        "the background's load: {:.0} % of {:.0} pps",
        l.fraction * 100.0,
        c.pps
    );
    // How many of its doubts are left unsaid beside the one said.
    let others = |said: Option<&Doubt>| {
        let rest: Vec<&str> = (f.doubts.iter())
            .filter(|d| !said.is_some_and(|s| std::ptr::eq(s, *d)))
            .map(|d| d.kind.as_str())
            .collect();
        if rest.is_empty() {
            String::new()
        } else {
            format!(
                " (and {} more of its search's doubts: {})",
                rest.len(),
                rest.join(", ")
            )
        }
    };
    if !f.converged {
        let said = (f.doubts.iter())
            .find(|d| matches!(d.kind, DoubtKind::NotConverged | DoubtKind::Contradiction))
            .or(f.doubts.first());
        return Some(Doubt::new(
            DoubtKind::NotConverged,
            format!(
                "{head}, a capacity its search did not settle (not converged): {}{}",
                said.map_or("its bracket did not close", |d| d.why.as_str()),
                others(said)
            ),
        ));
    }
    // The first beyond fwbench's limit where there is one (as `flagged_step` does): a
    // mismatch beside a late sender is the mismatch.
    let first = (f.doubts.iter())
        .find(|d| d.kind != DoubtKind::LimitedByFwbench)
        .or(f.doubts.first())?;
    Some(Doubt::new(
        first.kind,
        format!(
            "{head}, a capacity from a search whose answer is flagged ({}): {}{}",
            first.kind.as_str(),
            first.why,
            others(Some(first))
        ),
    ))
}

/// "background at 50 % of 41000 pps …": the share `--load` asked for and what it
/// was taken of (`None` before the trial ran), and its search's doubts.
pub(crate) fn load_text(l: &crate::params::events::Load) -> Option<String> {
    let c = l.capacity.as_ref()?;
    let of = match &c.search {
        None => "as stated".to_string(),
        Some(f) => {
            // What the capacity is not: fwbench's limit (a lower bound), unsettled.
            let mut not = vec![];
            if f.limited_by_sender {
                not.push(
                    "even an unpaced flood passed: the sender's limit, not the gateway's; \
                     the gateway's capacity is at least this"
                        .to_string(),
                );
            } else if let Some(why) = &f.fail_by_fwbench {
                not.push(format!(
                    "fwbench's limit, not the gateway's: the gateway's capacity is at least \
                     this ({why})"
                ));
            }
            if !f.converged {
                not.push("the search did not converge".into());
            }
            format!(
                "what the gateway forwarded {}, found by {} floods of {} s{}",
                if f.loss == 0.0 {
                    "without loss".to_string()
                } else {
                    format!("with at most {} % loss", f.loss * 100.0)
                },
                f.trials,
                f.step_s,
                if !not.is_empty() {
                    format!(" ({})", not.join("; "))
                } else {
                    String::new()
                }
            )
        }
    };
    let flagged = match c.search.as_ref().map(|f| &f.doubts) {
        Some(d) if !d.is_empty() => {
            let why: Vec<String> = d.iter().map(Doubt::to_string).collect();
            format!(" [its search flagged: {}]", why.join("; "))
        }
        _ => String::new(),
    };
    Some(format!(
        "background at {:.0} % of {:.0} pps ({of}): {:.0} pps{flagged}",
        l.fraction * 100.0,
        c.pps,
        c.background_pps
    ))
}

/// What the background felt around one update, in the unit's words; the loss beyond
/// the window before the update and the effective blocked time where known.
fn disturbance(s: &EventsSummary, u: &UpdateEffect) -> String {
    let overloaded = u.doubts.iter().any(|d| d.kind == DoubtKind::Overloaded);
    if s.background_streams == 0 && !overloaded {
        return match s.unit {
            Unit::Packets => "no background flows to disturb (every flow is from the \
                             marker's client address; --sources 2 --flows 2 adds one): no \
                             stall or loss figure"
                .into(),
            Unit::Echoes | Unit::Probes | Unit::Sessions => {
                "no background stream to disturb".into()
            }
        };
    }
    let (Some(stall), Some(lost)) = (u.stall_ms, u.lost) else {
        if let (true, Some(lost)) = (overloaded, u.lost.filter(|&n| n > 0)) {
            return format!(
                "the gateway could not carry the background before the update: no stall \
                 figure ({lost} {} lost in its window{})",
                s.unit.noun(),
                u.lost_beyond_baseline
                    .map(|b| format!(", {b} beyond the baseline"))
                    .unwrap_or_default()
            );
        }
        if overloaded {
            return format!(
                "the background received no {} at all: no stall figure",
                s.unit.noun()
            );
        }
        return format!(
            "no background {} in its window: no stall figure",
            s.unit.noun()
        );
    };
    let shown = match s.unit {
        Unit::Packets => format!("{stall:.0}"),
        Unit::Echoes | Unit::Probes | Unit::Sessions => format!("{stall:.2}"),
    };
    let mut t = s.unit.disturbance(&shown, false, lost);
    if let (Some(beyond), Some(blocked)) = (u.lost_beyond_baseline, u.blocked_ms) {
        if beyond < lost {
            t += &match u.baseline {
                Some(BaselineKind::Quiet) => format!(" ({beyond} beyond the baseline)"),
                Some(BaselineKind::BeforeUpdate) | None => {
                    format!(" ({beyond} beyond the loss before it)")
                }
            };
        }
        if beyond > 0 {
            t += &format!(", effectively blocked {blocked:.1} ms");
        }
    }
    // A commit that held the packets back and then let them through stalls nothing
    // by the bins: its delay says so.
    if s.unit == Unit::Packets && u.owd_max_us > 0 {
        t += &format!(
            "; one-way delay up to {:.2} ms in its window",
            u.owd_max_us as f64 / 1e3
        );
    }
    t
}

/// The store's rows of a trial's updates (one per scheduled update).
pub fn records(s: &EventsSummary) -> Vec<store::UpdateRecord> {
    s.updates
        .iter()
        .map(|u| {
            let r = &u.row;
            store::UpdateRecord {
                event: r.event,
                index: r.index,
                kind: r.kind.name().into(),
                method: r.method.name().into(),
                k: r.k,
                installed: r.installed,
                start_unix_ns: r.start_unix_ns,
                commit_ms: u.commit_ms,
                wait_ms: Some(r.wait_ns as f64 / 1e6),
                calls: r.calls,
                cpu_busy: r.cpu_busy,
                marker: r.marker,
                time_to_effect_ms: u.time_to_effect_ms,
                stall_ms: u.stall_ms,
                // The column is NOT NULL (schema 5): an update without a loss figure
                // stores 0 beside its NULL stall (every such update has none), which
                // readers take as no figure (the report states a loss only beside a
                // stall).
                lost: u.lost.unwrap_or(0),
                lost_beyond_baseline: u.lost_beyond_baseline,
                lost_once: u.lost_once,
                blocked_ms: u.blocked_ms,
                doubts: (!u.doubts.is_empty())
                    .then(|| serde_json::to_string(&u.doubts).unwrap_or_default()),
                owd_max_us: u.owd_max_us,
                no_delays: u.no_delays.clone(),
                error: r.error.clone(),
                series: (!u.series.is_empty())
                    .then(|| serde_json::to_string(&u.series).unwrap_or_default()),
                violations: u.violations.as_ref().map(|v| v.passed),
                violation_window_ms: u.violations.as_ref().and_then(|v| v.window_ms),
                violation_from_ms: u.violations.as_ref().and_then(|v| v.from_ms),
                place: (!r.place.is_head()).then(|| r.place.name().into()),
            }
        })
        .collect()
}

/// "adding 1 rule to 1001 with nft by batch took 2.10 ms": what update `r` did, how
/// and in how long.
fn doing(r: &UpdateRow, engine: &str, commit_ms: f64) -> String {
    let (what, _) = r.kind.doing(r.k, r.installed);
    let method = r.method.name();
    if r.kind.runs_nothing_when_due() {
        format!(
            "{what} (added with {engine} by {method} at the start of the traffic in \
             {commit_ms:.2} ms)"
        )
    } else {
        format!("{what} with {engine} by {method} took {commit_ms:.2} ms")
    }
}

/// A trial's events as tests plant them: one marker update (add 1 rule to
/// `installed`, batch) committed at 1 ns, its effect 3 ms later, no loss.
#[cfg(test)]
pub(crate) fn planted_summary(installed: u64) -> EventsSummary {
    let row = UpdateRow {
        event: 0,
        index: 0,
        kind: UpdateKind::Add,
        method: UpdateMethod::Batch,
        k: 1,
        installed,
        start_unix_ns: 1,
        commit_ns: 1,
        wait_ns: 0,
        start_slack_ns: 0,
        calls: 1,
        cpu_busy: 0.0,
        marker: true,
        error: None,
        place: EventPlace::Head,
    };
    EventsSummary {
        bin_ns: BIN_NS,
        unit: Unit::Packets,
        marker_src: None,
        background_streams: 1,
        updates: vec![UpdateEffect {
            row,
            commit_ms: 0.0,
            time_to_effect_ms: Some(3.0),
            effect_resolution_ms: None,
            no_time_to_effect: None,
            stall_ms: Some(0.0),
            lost: Some(0),
            lost_beyond_baseline: None,
            lost_once: None,
            blocked_ms: None,
            baseline_loss: None,
            baseline: None,
            owd_max_us: 0,
            series: vec![],
            no_delays: None,
            doubts: vec![],
            violations: None,
        }],
        bins_lost: 0,
        unbinned_lost: 0,
        marker_dropped: None,
        lost_around: None,
        quiet: None,
        load: None,
        spread: None,
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
