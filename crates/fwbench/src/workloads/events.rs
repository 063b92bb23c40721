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
//! Owns: [`EventArgs`], [`gateway_events`], [`bin_ns`], [`stream_spec`],
//! [`summarise_flows`], [`summarise_txns`], [`text`], [`records`].
//! Must not: run anything (the agent does), or store (that is `run::record` and
//! `store`).

use crate::params::events::EventParams;
use crate::params::TrialParams;
use proto::{
    EventSpec, FlowBins, GatewayResults, Marker, StreamEventsSpec, TxnBins, TxnStreams,
    UdpSinkResults, UdpSourceResults, UpdateKind, UpdateMethod, UpdateRow,
};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// Width of the time bins when events are scheduled.
pub const BIN_NS: u64 = 1_000_000;
/// The window of each update's figures: from this long before its start …
pub const BEFORE_NS: u64 = 50_000_000;
/// … to this long after its commit returned.
pub const AFTER_NS: u64 = 250_000_000;

/// Gateway-event flags of the trial commands (all but `connections`).
#[derive(clap::Args, Clone)]
#[command(next_help_heading = "Gateway events (rules that change under load)")]
pub struct EventArgs {
    /// Change the gateway's rules during the trial: KIND:K@TIME, e.g. add:1@1s (insert 1
    /// drop rule at 1 s; the first drops the marker: flow 0, echo's client 1, or the
    /// marker stream of ping and sessions). Kinds: add, delete, replace, add-elements,
    /// remove-elements
    #[arg(long, value_parser = crate::params::events::parse_event)]
    event: Option<(UpdateKind, u32, f64)>,
    /// Repeat the update this many times per second (until --event-count or the end)
    #[arg(long, requires = "event", value_parser = positive_rate)]
    event_rate: Option<f64>,
    /// Updates in all (needs --event-rate when above 1)
    #[arg(long, requires = "event_rate", value_parser = clap::value_parser!(u32).range(1..=proto::MAX_UPDATES as i64))]
    event_count: Option<u32>,
    /// How the engine applies it: batch (iptables-restore, nft -f, ipset restore) or
    /// per-rule (iptables -I/-D, nft insert, ipset add, one call each)
    #[arg(long, requires = "event", default_value = "batch", value_parser = method)]
    event_method: UpdateMethod,
}

fn positive_rate(t: &str) -> Result<f64, String> {
    t.trim_end_matches("/s")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= 10_000.0)
        .ok_or_else(|| format!("'{t}' is not an update rate (0 < R <= 10000 per second)"))
}

fn method(t: &str) -> Result<UpdateMethod, String> {
    t.parse()
}

impl EventArgs {
    pub fn params(&self) -> Option<EventParams> {
        let (kind, k, at_s) = self.event?;
        Some(EventParams {
            kind,
            k,
            at_s,
            rate: self.event_rate,
            count: self.event_count,
            method: self.event_method,
        })
    }
}

/// The events the gateway runs in a trial of `p` whose marker is `marker`.
pub fn gateway_events(p: &TrialParams, marker: Option<Marker>) -> Vec<EventSpec> {
    p.events.iter().map(|e| event_spec(p, e, marker)).collect()
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

/// What the background's streams are, and so what their bins count and delay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Packets of flows (flood, flow, new flows): one-way delay; a stall is a run of
    /// bins that lost packets and received none.
    #[default]
    Packet,
    /// Echo cycles: round-trip time; failed: lost or unsent.
    Echo,
    /// Ping probes: round-trip time; failed: lost.
    Probe,
    /// Sessions (sessions, bulk, http): connection setup time; failed sessions.
    Session,
}

impl Unit {
    /// "forwarding stalled 3 ms; 20 packets lost", in this unit's words.
    fn disturbance(self, stall_ms: f64, lost: u64) -> String {
        match self {
            Unit::Packet => format!("forwarding stalled {stall_ms:.0} ms; {lost} packets lost"),
            Unit::Echo => format!(
                "the longest background round trip {stall_ms:.2} ms; {lost} echoes lost or unsent"
            ),
            Unit::Probe => {
                format!("the longest background round trip {stall_ms:.2} ms; {lost} probes lost")
            }
            Unit::Session => format!(
                "the longest background connection setup {stall_ms:.2} ms; {lost} sessions failed"
            ),
        }
    }

    fn lost_noun(self) -> &'static str {
        match self {
            Unit::Packet => "background packets lost",
            Unit::Echo => "background echoes lost or unsent",
            Unit::Probe => "background probes lost",
            Unit::Session => "background sessions failed",
        }
    }
}

/// One update and what the traffic felt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateEffect {
    #[serde(flatten)]
    pub row: UpdateRow,
    pub commit_ms: f64,
    /// From the commit's start to the first marker packet (or transaction) the change
    /// acted on, ms (the update that carries the marker's rule or element only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_effect_ms: Option<f64>,
    /// Flows: the longest run of background bins that lost packets and received none,
    /// in the update's window, ms. Request–response workloads: the longest latency
    /// (round trip, connection setup) of a background transaction started in it.
    pub stall_ms: f64,
    /// Background packets (transactions) lost (failed) in the window.
    pub lost: u64,
    /// Highest delay of the background in the window (one-way delay, round trip or
    /// connection setup, by the unit), µs.
    pub owd_max_us: u64,
    /// Background per bin over the window: (ms from the commit's start, received
    /// (completed), lost (failed), mean delay µs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<(f64, u32, u32, f64)>,
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
    let rows = gateway.map(|g| g.updates.clone()).unwrap_or_default();
    let marker_src = sources.first().copied();
    // Closed bins per flow (the tail loss placed), and whether it is a marker flow.
    let mut flows: Vec<(bool, FlowBins)> = vec![];
    let mut unbinned_lost = 0;
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
                flows.push((is_marker, b));
            }
            None => unbinned_lost += sent,
        }
    }
    let bins_lost = flows.iter().map(|(_, b)| ::traffic::bins::lost(b)).sum();
    let marker = flows.iter().find(|(m, _)| *m).map(|(_, b)| b);
    let background: Vec<Background> = flows
        .iter()
        .filter(|(m, _)| !m)
        .map(|(_, b)| Background::flow(b))
        .collect();
    let updates = rows
        .into_iter()
        .map(|row| {
            let at = marker.and_then(|m| flow_effect_stamp(row.kind, m));
            effect(row, at, &background, Unit::Packet)
        })
        .collect();
    Some(EventsSummary {
        bin_ns: BIN_NS,
        unit: Unit::Packet,
        marker_src,
        background_streams: background.len() as u32,
        updates,
        bins_lost,
        unbinned_lost,
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
    let updates = rows
        .into_iter()
        .map(|row| {
            let at = txn_effect_stamp(row.kind, &s.marker);
            effect(row, at, background, unit)
        })
        .collect();
    let marker_lost = if marker_counted {
        ::traffic::bins::failed(&s.marker)
    } else {
        0
    };
    Some(EventsSummary {
        bin_ns: BIN_NS,
        unit,
        marker_src: s.marker_source,
        background_streams: s.background_streams,
        updates,
        bins_lost: ::traffic::bins::failed(&s.background) + marker_lost,
        unbinned_lost: 0,
    })
}

/// When the marker packet the change acted on reached the gateway: its send stamp
/// plus the one-way delay of its neighbour received (a backlog delays both alike).
fn flow_effect_stamp(kind: UpdateKind, m: &FlowBins) -> Option<u64> {
    if kind.starts_dropping() {
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
    if kind.starts_dropping() {
        let (_, latency) = m.last_done?;
        Some(m.failed_after_last? + latency / 2)
    } else {
        let (start, latency) = m.first_done?;
        (m.failed_before_first > 0).then_some(start + latency / 2)
    }
}

/// One update's effect: the time to effect (from `effect_at`, for the update that
/// carries the marker) and the background's window around it.
fn effect(
    row: UpdateRow,
    effect_at: Option<u64>,
    background: &[Background],
    unit: Unit,
) -> UpdateEffect {
    let start = row.start_unix_ns;
    let end = start + row.commit_ns;
    let time_to_effect_ms = match (row.marker, effect_at, row.error.is_none() && start > 0) {
        (true, Some(t), true) => Some((t as i128 - start as i128) as f64 / 1e6),
        _ => None,
    };
    // Background merged per bin over the window.
    let (from, to) = (start.saturating_sub(BEFORE_NS), end + AFTER_NS);
    let n = ((to - from) / BIN_NS) as usize + 1;
    let mut rx = vec![0u32; n];
    let mut lost = vec![0u32; n];
    let mut delay_sum = vec![0u64; n];
    let mut delay_max = 0u64;
    if start > 0 {
        for b in background {
            for i in 0..b.received.len() {
                let t = b.origin_ns + i as u64 * b.width_ns;
                if t < from || t >= to {
                    continue;
                }
                let j = ((t - from) / BIN_NS) as usize;
                rx[j] += b.received[i];
                lost[j] += b.lost[i];
                delay_sum[j] += b.delay_sum_us[i];
                delay_max = delay_max.max(u64::from(b.delay_max_us[i]));
            }
        }
    }
    let stall_ms = match unit {
        Unit::Packet => {
            // Longest run of bins with losses and nothing received.
            let (mut run, mut longest) = (0u64, 0u64);
            for j in 0..n {
                if rx[j] == 0 && lost[j] > 0 {
                    run += 1;
                    longest = longest.max(run);
                } else {
                    run = 0;
                }
            }
            (longest * BIN_NS) as f64 / 1e6
        }
        // What a background transaction waited at most.
        Unit::Echo | Unit::Probe | Unit::Session => delay_max as f64 / 1e3,
    };
    let series = if start > 0 && !background.is_empty() {
        (0..n)
            .map(|j| {
                let t_ms = ((from + j as u64 * BIN_NS) as i128 - start as i128) as f64 / 1e6;
                let mean = if rx[j] > 0 {
                    delay_sum[j] as f64 / f64::from(rx[j])
                } else {
                    0.0
                };
                (t_ms, rx[j], lost[j], mean)
            })
            .collect()
    } else {
        vec![]
    };
    UpdateEffect {
        commit_ms: row.commit_ns as f64 / 1e6,
        time_to_effect_ms,
        stall_ms,
        lost: lost.iter().map(|&x| u64::from(x)).sum(),
        owd_max_us: delay_max,
        series,
        row,
    }
}

/// Findings in sentences, one per update with the marker or an error, and a count
/// of the rest: "adding 1 rule to 1 000 with nft by batch took 2.1 ms; …".
pub fn text(s: &EventsSummary, engine: &str) -> String {
    let mut out = String::new();
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
            "\n  {} with {engine} by {} took {:.2} ms{}; {}",
            doing(r.kind, r.k, r.installed),
            r.method.name(),
            u.commit_ms,
            match u.time_to_effect_ms {
                Some(t) => format!(", took effect after {t:.1} ms"),
                None => String::new(),
            },
            if s.background_streams > 0 || s.unit == Unit::Packet {
                s.unit.disturbance(u.stall_ms, u.lost)
            } else {
                "no background stream to disturb".into()
            }
        );
    }
    let ok: Vec<&UpdateEffect> = s.updates.iter().filter(|u| u.row.error.is_none()).collect();
    if s.updates.len() > 3 && !ok.is_empty() {
        let mean = ok.iter().map(|u| u.commit_ms).sum::<f64>() / ok.len() as f64;
        let max = ok.iter().map(|u| u.commit_ms).fold(0.0, f64::max);
        out += &format!(
            "\n  {} updates: commit mean {mean:.2} ms, max {max:.2} ms; {} {} around them",
            s.updates.len(),
            ok.iter().map(|u| u.lost).sum::<u64>(),
            s.unit.lost_noun()
        );
    }
    out
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
                calls: r.calls,
                cpu_busy: r.cpu_busy,
                marker: r.marker,
                time_to_effect_ms: u.time_to_effect_ms,
                stall_ms: u.stall_ms,
                lost: u.lost,
                owd_max_us: u.owd_max_us,
                error: r.error.clone(),
                series: (!u.series.is_empty())
                    .then(|| serde_json::to_string(&u.series).unwrap_or_default()),
            }
        })
        .collect()
}

fn doing(kind: UpdateKind, k: u32, installed: u64) -> String {
    let rules = if k == 1 { "rule" } else { "rules" };
    match kind {
        UpdateKind::Add => format!("adding {k} {rules} to {installed}"),
        UpdateKind::Delete => format!("deleting {k} {rules} of {installed}"),
        UpdateKind::Replace => format!("replacing {installed} rules (+{k})"),
        UpdateKind::AddElements => format!("adding {k} set elements to {installed}"),
        UpdateKind::RemoveElements => format!("removing {k} set elements of {installed}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bins(received: &[u32], lost: &[u32], first: (u32, u64), highest: (u32, u64)) -> FlowBins {
        FlowBins {
            width_ns: BIN_NS,
            origin_ns: 1_000_000_000_000,
            received: received.to_vec(),
            lost: lost.to_vec(),
            owd_sum_us: received.iter().map(|&n| u64::from(n) * 40).collect(),
            owd_max_us: received.iter().map(|_| 40).collect(),
            first: Some(first),
            highest: Some(highest),
            first_owd_us: 0,
            highest_owd_us: 0,
            longest_gap: None,
        }
    }

    #[test]
    fn time_to_effect_stall_and_loss_from_the_bins() {
        let t0 = 1_000_000_000_000u64;
        // Marker: 10 packets per ms, received up to seq 49 (tx t0 + 4.9 ms), then lost.
        let marker = bins(
            &[10, 10, 10, 10, 10, 0, 0, 0],
            &[0, 0, 0, 0, 0, 10, 10, 10],
            (0, t0),
            (49, t0 + 4_900_000),
        );
        // Background: 2 ms without a packet at 5..7 ms.
        let bg = bins(
            &[10, 10, 10, 10, 10, 0, 0, 10],
            &[0, 0, 0, 0, 0, 10, 10, 0],
            (0, t0),
            (79, t0 + 7_900_000),
        );
        let row = UpdateRow {
            method: UpdateMethod::Batch,
            installed: 1000,
            commit_ns: 1_500_000,
            ..row(UpdateKind::Add, t0 + 4_000_000)
        };
        let at = flow_effect_stamp(row.kind, &marker);
        let u = effect(row, at, &[Background::flow(&bg)], Unit::Packet);
        // First lost marker packet: seq 50 at 5.0 ms; the commit started at 4.0 ms.
        assert!((u.time_to_effect_ms.unwrap() - 1.0).abs() < 1e-9, "{u:?}");
        assert_eq!(u.stall_ms, 2.0);
        assert_eq!(u.lost, 20);
        assert_eq!(u.owd_max_us, 40);
        assert_eq!(
            text(&one(Unit::Packet, u), "nft"),
            "\n  adding 1 rule to 1000 with nft by batch took 1.50 ms, took effect after 1.0 ms; \
             forwarding stalled 2 ms; 20 packets lost"
        );
    }

    #[test]
    fn a_deletion_takes_effect_at_the_first_packet_through() {
        let t0 = 1_000_000_000_000u64;
        let m = bins(
            &[0, 0, 10],
            &[10, 10, 0],
            (20, t0 + 2_000_000),
            (29, t0 + 2_900_000),
        );
        assert_eq!(
            flow_effect_stamp(UpdateKind::Delete, &m),
            Some(t0 + 2_000_000)
        );
        // Nothing lost after the highest: no drop took effect.
        assert_eq!(flow_effect_stamp(UpdateKind::Add, &m), None);
    }

    /// The summary of one update `u` with a background in `unit`s.
    fn one(unit: Unit, u: UpdateEffect) -> EventsSummary {
        EventsSummary {
            bin_ns: BIN_NS,
            unit,
            marker_src: None,
            background_streams: 1,
            updates: vec![u],
            bins_lost: 0,
            unbinned_lost: 0,
        }
    }

    fn row(kind: UpdateKind, start: u64) -> UpdateRow {
        UpdateRow {
            event: 0,
            index: 0,
            kind,
            method: UpdateMethod::PerRule,
            k: 1,
            installed: 100,
            start_unix_ns: start,
            commit_ns: 2_000_000,
            calls: 1,
            cpu_busy: 0.0,
            marker: true,
            error: None,
        }
    }

    /// Transactions: the marker's first failure after its last completed one dates a
    /// drop (plus half the round trip); the background's longest latency in the
    /// window is the stall; its failures there are the loss.
    #[test]
    fn a_request_response_marker_and_background_from_their_transactions() {
        let t0 = 1_700_000_000_000_000_000u64;
        let ms = 1_000_000;
        let mut marker = ::traffic::bins::Txns::new(BIN_NS, t0);
        let mut bg = ::traffic::bins::Txns::new(BIN_NS, t0);
        // Marker: a cycle every 0.1 ms (round trip 80 µs) until 12.3 ms, then lost.
        for i in 0..200u64 {
            let at = t0 + i * ms / 10;
            if at < t0 + 12 * ms + 300_000 {
                marker.done(at, 80_000);
            } else {
                marker.failed(at);
            }
        }
        // Background: one every 0.5 ms (round trip 60 µs), one of 4.5 ms at 11 ms and
        // two lost at 13 ms.
        for i in 0..40u64 {
            bg.done(t0 + i * ms / 2, 60_000);
        }
        bg.done(t0 + 11 * ms + 100_000, 4_500_000);
        bg.failed(t0 + 13 * ms);
        bg.failed(t0 + 13 * ms + 100_000);
        let streams = TxnStreams {
            marker_source: None,
            marker: marker.finish(),
            background: bg.finish(),
            background_streams: 3,
        };
        let start = t0 + 10 * ms;
        let at = txn_effect_stamp(UpdateKind::Add, &streams.marker);
        // The first lost cycle started at 12.3 ms; half of 80 µs later it was there.
        assert_eq!(at, Some(t0 + 12 * ms + 300_000 + 40_000));
        let background = [Background::txns(&streams.background)];
        let u = effect(row(UpdateKind::Add, start), at, &background, Unit::Echo);
        assert!((u.time_to_effect_ms.unwrap() - 2.34).abs() < 1e-9, "{u:?}");
        assert_eq!(u.stall_ms, 4.5);
        assert_eq!(u.owd_max_us, 4_500);
        assert_eq!(u.lost, 2);
        // A deletion: nothing of the marker got through before, so no effect is dated.
        assert_eq!(txn_effect_stamp(UpdateKind::Delete, &streams.marker), None);
        assert_eq!(
            text(&one(Unit::Echo, u), "nft"),
            "\n  adding 1 rule to 100 with nft by per-rule took 2.00 ms, took effect after 2.3 ms; \
             the longest background round trip 4.50 ms; 2 echoes lost or unsent"
        );
    }
}
