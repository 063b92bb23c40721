//! Gateway events of the packet workloads (issue 25): the CLI flags, the schedule
//! the gateway agent runs (with the marker flow), and what the traffic felt — time
//! to effect, forwarding stall, packets lost around each update — from the sink's
//! fine time bins.
//!
//! The marker flow is flow 0: its source address (the first client's) and the
//! destination port are what the update's first rule or element matches, so every
//! flow from that address is a marker flow; flows from the other addresses
//! (`--sources 2` or more) are the background whose disturbance is measured.
//! Time to effect is dated by send stamps (the packet's intended send time, the
//! clock of the commit's start stamp) plus the one-way delay of the neighbouring
//! packet received: the first marker packet the change acted on is the one after
//! the last received (a drop), or the first received (a deletion).
//!
//! Owns: [`EventArgs`], [`gateway_events`], [`bin_ns`], [`summarise`], [`text`].
//! Must not: run anything (the agent does), or store (that is `run::record` and
//! `store`).

use crate::params::events::EventParams;
use crate::params::packet::PacketParams;
use crate::params::TrialParams;
use proto::{
    EventSpec, FlowBins, GatewayResults, Marker, RoleSpec, UdpSinkResults, UdpSourceResults,
    UpdateKind, UpdateMethod, UpdateRow,
};
use serde::{Deserialize, Serialize};

/// Width of the sink's time bins when events are scheduled.
pub const BIN_NS: u64 = 1_000_000;
/// The window of each update's figures: from this long before its start …
pub const BEFORE_NS: u64 = 50_000_000;
/// … to this long after its commit returned.
pub const AFTER_NS: u64 = 250_000_000;

/// Gateway-event flags of the packet workloads.
#[derive(clap::Args, Clone)]
#[command(next_help_heading = "Gateway events (rules that change under load)")]
pub struct EventArgs {
    /// Change the gateway's rules during the trial: KIND:K@TIME, e.g. add:1@1s (insert 1
    /// drop rule at 1 s; the first drops flow 0, the marker). Kinds: add, delete,
    /// replace, add-elements, remove-elements
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

/// The events the gateway runs in a trial of `p` whose traffic source is `client`.
pub fn gateway_events(p: &TrialParams, client: &RoleSpec) -> Vec<EventSpec> {
    let Some(e) = p.packet().and_then(|k| k.events.as_ref()) else {
        return vec![];
    };
    let marker = match client {
        RoleSpec::UdpSource(s) => s.sources.first().map(|&src| Marker {
            src,
            proto: proto::Proto::Udp,
            dport: s.dst_port,
        }),
        _ => None,
    };
    vec![event_spec(p, e, marker)]
}

/// The gateway's schedule of `e` in a trial of `p`, with the marker flow (if known).
pub fn event_spec(
    p: &TrialParams,
    e: &crate::params::events::EventParams,
    marker: Option<Marker>,
) -> EventSpec {
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

/// The sink's bin width for a packet trial (0: no bins).
pub fn bin_ns(k: &PacketParams) -> u64 {
    if k.events.is_some() {
        BIN_NS
    } else {
        0
    }
}

/// One update and what the traffic felt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateEffect {
    #[serde(flatten)]
    pub row: UpdateRow,
    pub commit_ms: f64,
    /// From the commit's start to the first marker packet the change acted on, ms
    /// (the update that carries the marker's rule or element only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_effect_ms: Option<f64>,
    /// Longest run of background bins without a packet received while packets were
    /// sent (lost), in the update's window, ms.
    pub stall_ms: f64,
    /// Background packets lost in the window.
    pub lost: u64,
    /// Highest one-way delay of a background packet in the window, µs.
    pub owd_max_us: u64,
    /// Background per bin over the window: (ms from the commit's start, received,
    /// lost, mean one-way delay µs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<(f64, u32, u32, f64)>,
}

/// The events of a trial as the traffic felt them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventsSummary {
    pub bin_ns: u64,
    pub marker_src: Option<std::net::IpAddr>,
    pub updates: Vec<UpdateEffect>,
    /// Packets lost as counted in the flows' bins (equals the trial's loss when every
    /// flow received something).
    pub bins_lost: u64,
    /// Packets lost by flows that received nothing (no bins).
    pub unbinned_lost: u64,
}

/// Summarise the events of a packet trial (`None` when none were scheduled).
pub fn summarise(
    k: &PacketParams,
    sources: &[std::net::IpAddr],
    src: &UdpSourceResults,
    sink: &UdpSinkResults,
    gateway: Option<&GatewayResults>,
) -> Option<EventsSummary> {
    k.events.as_ref()?;
    let rows = gateway.map(|g| g.updates.clone()).unwrap_or_default();
    let marker_src = sources.first().copied();
    // Closed bins per flow (the tail loss placed), and whether it is a marker flow.
    let mut flows: Vec<(bool, FlowBins)> = vec![];
    let mut unbinned_lost = 0;
    for f in 0..k.flows {
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
    let background: Vec<&FlowBins> = flows.iter().filter(|(m, _)| !m).map(|(_, b)| b).collect();
    let updates = rows
        .into_iter()
        .map(|row| effect(row, marker, &background))
        .collect();
    Some(EventsSummary {
        bin_ns: BIN_NS,
        marker_src,
        updates,
        bins_lost,
        unbinned_lost,
    })
}

/// When the marker packet the change acted on reached the gateway: its send stamp
/// plus the one-way delay of its neighbour received (a backlog delays both alike).
fn effect_stamp(kind: UpdateKind, m: &FlowBins) -> Option<u64> {
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

fn effect(row: UpdateRow, marker: Option<&FlowBins>, background: &[&FlowBins]) -> UpdateEffect {
    let start = row.start_unix_ns;
    let end = start + row.commit_ns;
    let time_to_effect_ms = match (row.marker, marker, row.error.is_none() && start > 0) {
        (true, Some(m), true) => effect_stamp(row.kind, m).map(|t| (t as f64 - start as f64) / 1e6),
        _ => None,
    };
    // Background merged per bin over the window.
    let (from, to) = (start.saturating_sub(BEFORE_NS), end + AFTER_NS);
    let n = ((to - from) / BIN_NS) as usize + 1;
    let mut rx = vec![0u32; n];
    let mut lost = vec![0u32; n];
    let mut owd_sum = vec![0u64; n];
    let mut owd_max = 0u64;
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
                owd_sum[j] += b.owd_sum_us[i];
                owd_max = owd_max.max(u64::from(b.owd_max_us[i]));
            }
        }
    }
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
    let series = if start > 0 && !background.is_empty() {
        (0..n)
            .map(|j| {
                let t_ms = ((from + j as u64 * BIN_NS) as f64 - start as f64) / 1e6;
                let mean = if rx[j] > 0 {
                    owd_sum[j] as f64 / f64::from(rx[j])
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
        stall_ms: (longest * BIN_NS) as f64 / 1e6,
        lost: lost.iter().map(|&x| u64::from(x)).sum(),
        owd_max_us: owd_max,
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
            "\n  {} with {engine} by {} took {:.2} ms{}; forwarding stalled {:.0} ms; {} packets lost",
            doing(r.kind, r.k, r.installed),
            r.method.name(),
            u.commit_ms,
            match u.time_to_effect_ms {
                Some(t) => format!(", took effect after {t:.1} ms"),
                None => String::new(),
            },
            u.stall_ms,
            u.lost
        );
    }
    let ok: Vec<&UpdateEffect> = s.updates.iter().filter(|u| u.row.error.is_none()).collect();
    if s.updates.len() > 3 && !ok.is_empty() {
        let mean = ok.iter().map(|u| u.commit_ms).sum::<f64>() / ok.len() as f64;
        let max = ok.iter().map(|u| u.commit_ms).fold(0.0, f64::max);
        out += &format!(
            "\n  {} updates: commit mean {mean:.2} ms, max {max:.2} ms; {} background packets lost around them",
            s.updates.len(),
            ok.iter().map(|u| u.lost).sum::<u64>()
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
            event: 0,
            index: 0,
            kind: UpdateKind::Add,
            method: UpdateMethod::Batch,
            k: 1,
            installed: 1000,
            start_unix_ns: t0 + 4_000_000,
            commit_ns: 1_500_000,
            calls: 1,
            cpu_busy: 0.0,
            marker: true,
            error: None,
        };
        let u = effect(row, Some(&marker), &[&bg]);
        // First lost marker packet: seq 50 at 5.0 ms; the commit started at 4.0 ms.
        assert!((u.time_to_effect_ms.unwrap() - 1.0).abs() < 1e-9, "{u:?}");
        assert_eq!(u.stall_ms, 2.0);
        assert_eq!(u.lost, 20);
        assert_eq!(u.owd_max_us, 40);
        let s = EventsSummary {
            bin_ns: BIN_NS,
            marker_src: None,
            updates: vec![u],
            bins_lost: 0,
            unbinned_lost: 0,
        };
        assert_eq!(
            text(&s, "nft"),
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
        assert_eq!(effect_stamp(UpdateKind::Delete, &m), Some(t0 + 2_000_000));
        // Nothing lost after the highest: no drop took effect.
        assert_eq!(effect_stamp(UpdateKind::Add, &m), None);
    }
}
