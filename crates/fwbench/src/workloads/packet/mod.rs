//! Packet-rate workloads on the controller side: parameters, the role specs they
//! become, and the figures that combine both ends (and the gateway's counters).

use crate::params::packet::max_threads;
use crate::params::packet::PacketParams;
use crate::params::packet::SenderPath;
use crate::params::packet::SinkKind;
use crate::params::packet::MIN_ETHERNET_FRAME;
use crate::params::packet::SINK_PORT;
use crate::params::packet::SRC_PORT;
use crate::params::topology::Topology;
use crate::params::workload::Workload;
use crate::params::TrialParams;
use crate::testbed::{spread, Host, Testbed};
use crate::workloads::ctsummary::CtSummary;
use crate::workloads::hosts::{self, FromHost};
use crate::workloads::rtt_columns;
use crate::workloads::units::{mbps, pps, us};
use crate::workloads::{named_line, Summary, TextOf};
use crate::workloads::{
    Collected, Ending, Figures, Live, MainMetric, Profile, Returned, Roles, Traffic,
};
use anyhow::{bail, Result};
use proto::{
    Family, GatewayResults, PacketSize, Rate, RawPath, RoleResults, RoleSpec, RttSummary, SizeMix,
    UdpKernelCounters, UdpSinkSpec, UdpSourceSpec,
};
use serde::Serialize;
use store::Headline;

mod check;
pub mod ping;
mod roles;
mod summary;
mod text;
pub use check::check;
pub use ping::Ping;
pub use roles::role_specs;
pub use summary::summarise_packet;

/// A new-flow trial: one datagram per flow, each a new 5-tuple.
pub(super) fn new_flows(p: &TrialParams) -> bool {
    matches!(
        p.kind,
        crate::params::workload::TrialKind::Packet(
            crate::params::workload::PacketKind::NewFlows,
            _
        )
    )
}

/// One flow end to end.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct FlowSummary {
    pub flow: u32,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub owd: RttSummary,
    pub jitter_ns: f64,
}

/// A flood or flow trial, both ends combined.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PacketSummary {
    /// Where `received` was counted: `sink` (the server's UDP sink) or `gateway`
    /// (packets in on the gateway's client-facing interface).
    pub counted_at: String,
    pub elapsed_s: f64,
    /// UDP payload bytes per packet (of a size mix: its weighted mean, rounded).
    pub payload: u32,
    /// Ethernet frame bytes per packet, FCS included (RFC 2544 frame size); with
    /// `fragment`, the bytes of all its fragments; of a size mix, its weighted mean,
    /// rounded.
    pub frame: u32,
    /// A size mix: its sizes with what was sent and received of each (absent: one size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<Box<MixSummary>>,
    /// What the schedule asked for (packets/s); for an unpaced flood, what was sent.
    pub offered_pps: f64,
    pub sent: u64,
    pub sent_pps: f64,
    pub received: u64,
    pub received_pps: f64,
    /// sent − received (never negative; duplicates are not counted as received).
    pub lost: u64,
    pub loss_ratio: f64,
    /// UDP payload bits/s received.
    pub received_bps: f64,
    /// Ethernet frame bits/s received (FCS included, preamble and gap not).
    pub received_l2_bps: f64,
    pub duplicates: u64,
    pub reordered: u64,
    /// Packets the sink could not attribute (no fwbench header: payloads < 8 bytes).
    pub unstamped: u64,
    pub owd: RttSummary,
    /// Mean over flows of the RFC 3550 jitter estimate, ns.
    pub jitter_ns: f64,
    /// How the one-way delays relate the sender's clock to the receiver's when they are
    /// different hosts (absent: one host, one clock).
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub owd_clocks: Option<OwdClocks>,
    pub send_errors: u64,
    pub max_lag_ns: u64,
    /// The sink namespace's UDP MIB over the trial (socket-buffer overflows show here).
    pub kernel: UdpKernelCounters,
    /// The sink namespace's interface counters (backlog drops on delivery show here).
    pub sink_interfaces: Vec<proto::IfCounters>,
    pub flows: Vec<FlowSummary>,
    /// NAT models: what the server saw (absent for the other models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat: Option<Box<NatSeen>>,
    /// Gateway events and what the traffic felt (issue 25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Box<crate::workloads::events::EventsSummary>>,
    /// Which role set the rate: sender, gateway, sink or nothing (issue 28); absent in
    /// results stored before it was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<Box<crate::limited_by::Limit>>,
    /// New flows: what the gateway's conntrack table did with them (issue 26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conntrack: Option<Box<crate::workloads::ctsummary::CtSummary>>,
    /// AF_XDP sender/sink: the mode each socket ran in (zero-copy or copy), need_wakeup,
    /// queues (issue 28); absent for socket senders and sinks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xdp: Option<Box<XdpModes>>,
    /// A role spread over several hosts: what each host sent or received (absent with
    /// one host per role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Box<Vec<HostFigures>>>,
}

/// A size mix as sent and received: one row per frame size of the mix, then any other
/// size the sink received (weight 0).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct MixSummary {
    /// As given: `imix`, `csit-imix` or `64:7,576:4,1500:1` (Ethernet frames).
    pub mix: String,
    /// Weighted mean frame, bytes (FCS included).
    pub mean_frame: f64,
    pub sizes: Vec<MixRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct MixRow {
    /// Ethernet frame bytes, FCS included.
    pub frame: u32,
    /// UDP payload bytes of such a frame.
    pub payload: u32,
    pub weight: u32,
    /// Packets the source sent of this size.
    pub sent: u64,
    /// Packets the sink received of this size (every datagram it took; 0 when the
    /// gateway counted).
    pub received: u64,
}

impl MixSummary {
    /// The mix's rows from the source's sent and the sink's received size histograms.
    pub fn new(
        m: proto::SizeMix,
        family: Family,
        sent: &[proto::SizeCount],
        received: &[proto::SizeCount],
    ) -> MixSummary {
        let hdr = proto::ETH_OVERHEAD + proto::ip_header(family) + proto::UDP_HEADER;
        let count = |h: &[proto::SizeCount], payload: u32| {
            h.iter()
                .find(|c| c.payload == payload)
                .map_or(0, |c| c.packets)
        };
        let mut sizes: Vec<MixRow> = m
            .parts()
            .map(|(frame, weight)| {
                let payload = frame.saturating_sub(hdr);
                MixRow {
                    frame,
                    payload,
                    weight,
                    sent: count(sent, payload),
                    received: count(received, payload),
                }
            })
            .collect();
        for c in received {
            if !sizes.iter().any(|r| r.payload == c.payload) {
                sizes.push(MixRow {
                    frame: PacketSize::wire_bytes(c.payload, family),
                    payload: c.payload,
                    weight: 0,
                    sent: count(sent, c.payload),
                    received: c.packets,
                });
            }
        }
        MixSummary {
            mix: m.to_string(),
            mean_frame: m.mean(|f| f),
            sizes,
        }
    }

    /// (UDP payload, Ethernet) bytes of the packets received.
    pub fn received_bytes(&self) -> (u64, u64) {
        self.sizes.iter().fold((0, 0), |(p, l2), r| {
            (
                p + r.received * u64::from(r.payload),
                l2 + r.received * u64::from(r.frame),
            )
        })
    }
}

/// What the server of a NAT trial saw (issue 26).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct NatSeen {
    /// Packets per source address (the translated source after source NAT), most
    /// first, at most `proto::MAX_SOURCES` addresses.
    pub sources: Vec<proto::SourceRx>,
    /// Packets from further addresses.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub other_sources: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub use crate::workloads::hosts::OwdClocks;

impl PacketSummary {
    /// Relate the two hosts' clocks (`None`: the controller's own clock). The delays are
    /// corrected when the correction's uncertainty is below the corrected median delay;
    /// otherwise they are withheld (count 0) rather than reported wrong.
    pub fn apply_clocks(&mut self, source: Option<(i64, i64)>, sink: Option<(i64, i64)>) {
        let (so, su) = source.unwrap_or((0, 0));
        let (ko, ku) = sink.unwrap_or((0, 0));
        let correction_ns = ko - so;
        let uncertainty_ns = su + ku;
        let known = hosts::known(
            self.owd.count,
            self.owd.p50_ns,
            correction_ns,
            uncertainty_ns,
        );
        let unknown = (!known).then(|| unrelated(self.owd.count, uncertainty_ns));
        for r in std::iter::once(&mut self.owd).chain(self.flows.iter_mut().map(|f| &mut f.owd)) {
            if known {
                hosts::shift(r, correction_ns);
            } else {
                *r = RttSummary::default();
            }
        }
        self.correct_delays(match &unknown {
            None => Ok(correction_ns),
            Some(why) => Err(why.clone()),
        });
        self.correct_effects(correction_ns, ku - su, unknown);
        self.owd_clocks = Some(OwdClocks {
            correction_ns,
            uncertainty_ns,
            basis: if known { "corrected" } else { "rtt-only" },
            pairs: vec![],
        });
    }

    /// A time to effect is a send stamp on the client's clock plus a one-way delay on
    /// the sink's, less a commit's start placed on the client's clock (by the
    /// gateway's and client's offsets, whose uncertainty the driver adds to its
    /// resolution): corrected by the marker's (client, sink) pair's clocks
    /// (`correction_ns`, sink − client), the client's offset cancels — it is the sink's
    /// receive time less the commit's start — so its resolution takes the sink's
    /// uncertainty for the client's (`uncertainty_delta_ns`, sink's − client's; which
    /// decides what below 0 is 0 and what is withheld). Where the clocks cannot relate
    /// them (`unknown`, why), not stated, with why. Where a reload's must-drop packets
    /// passed, where their window starts (`violations.from_ms`) is such a receive time
    /// less the commit's start too: corrected alike, or, where the clocks cannot relate
    /// it, absent (its count and length, on the sink's clock alone, stay).
    pub fn correct_effects(
        &mut self,
        correction_ns: i64,
        uncertainty_delta_ns: i64,
        unknown: Option<String>,
    ) {
        let Some(e) = &mut self.events else {
            return;
        };
        for u in e.updates.iter_mut() {
            if let Some(v) = u.violations.as_mut() {
                v.from_ms = (v.from_ms)
                    .filter(|_| unknown.is_none())
                    .map(|f| f - correction_ns as f64 / 1e6);
            }
            let Some(t) = u.time_to_effect_ms else {
                continue;
            };
            match &unknown {
                None => {
                    u.time_to_effect_ms = Some(t - correction_ns as f64 / 1e6);
                    u.effect_resolution_ms = u
                        .effect_resolution_ms
                        .map(|r| r + uncertainty_delta_ns as f64 / 1e6);
                }
                Some(why) => {
                    u.time_to_effect_ms = None;
                    u.effect_resolution_ms = None;
                    u.no_time_to_effect = Some(format!("{why}: not dated"));
                }
            }
        }
    }

    /// Where each reload's must-drop packets began to pass (`violations.from_ms`): no
    /// figure, where the marker's flows run between several pairs of hosts whose clocks
    /// differ (their count and window length, each on its sink's clock, stay).
    pub fn withhold_violation_starts(&mut self) {
        let Some(e) = &mut self.events else {
            return;
        };
        for v in e.updates.iter_mut().filter_map(|u| u.violations.as_mut()) {
            v.from_ms = None;
        }
    }

    /// The background's one-way delays around each update (`owd_max_us`, the series'),
    /// receive times on the sink's clock less send stamps on the client's: corrected by
    /// the two hosts' clocks (`Ok(correction_ns)`, sink − client), or, where they cannot
    /// relate them (`Err(why)`), no figures — 0, and `no_delays` says why.
    pub fn correct_delays(&mut self, by: Result<i64, String>) {
        let Some(e) = &mut self.events else {
            return;
        };
        for u in e.updates.iter_mut() {
            match &by {
                Ok(c) => {
                    let c_us = *c as f64 / 1e3;
                    // None measured (0: the window received nothing) stays none.
                    if u.owd_max_us > 0 {
                        u.owd_max_us = (u.owd_max_us as f64 - c_us).max(0.0).round() as u64;
                    }
                    for b in u.series.iter_mut().filter(|b| b.1 > 0) {
                        b.3 = (b.3 - c_us).max(0.0);
                    }
                }
                Err(why) => {
                    u.owd_max_us = 0;
                    for b in u.series.iter_mut() {
                        b.3 = 0.0;
                    }
                    u.no_delays = Some(why.clone());
                }
            }
        }
    }
}

/// Why a flow's time to effect cannot be dated across the marker's sender's and sink's
/// clocks: no one-way delay measured between them (`delays` 0), or their offsets known
/// only to ± `uncertainty_ns`, too loose for the delays measured.
pub fn unrelated(delays: u64, uncertainty_ns: i64) -> String {
    if delays == 0 {
        "the marker's sender and sink are two hosts, and no one-way delay was measured \
         between them to relate their clocks by"
            .to_string()
    } else {
        format!(
            "the marker's sender and sink are two hosts whose clocks are related only to \
             ± {:.0} µs, too loose for its one-way delays",
            uncertainty_ns as f64 / 1e3
        )
    }
}

/// What each host of a spread role sent or received.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct HostFigures {
    /// `client` or `server`.
    pub role: String,
    /// Which host of its role (0-based, the order of the testbed file's tables).
    pub host: u32,
    /// Where its agent ran.
    pub place: String,
    /// A client host's block of the trial's flows: `first_flow .. first_flow + flows`
    /// (0 and 0 for a server host).
    pub first_flow: u32,
    pub flows: u32,
    /// A client host: packets it sent (0 for a server host).
    pub sent: u64,
    /// A client host: its flows' packets received at any sink; a server host: the
    /// packets it counted.
    pub received: u64,
    /// Its one-way delays: a client host's flows' at every sink, a server host's from
    /// every client host, each pair corrected by its clocks (count 0: withheld).
    pub owd: RttSummary,
}

/// Per-host figures of a spread trial.
fn host_figures(
    shares: &[spread::ClientShare],
    sources: &[FromHost<proto::UdpSourceResults>],
    sinks: &[FromHost<proto::UdpSinkResults>],
    flows: &[FlowSummary],
    delays: Option<&hosts::Delays>,
) -> Vec<HostFigures> {
    let mut out = vec![];
    for s in sources {
        let (first_flow, n) = shares
            .iter()
            .find(|c| c.host == s.host)
            .map_or((0, 0), |c| (c.first_flow, c.flows));
        out.push(HostFigures {
            role: "client".into(),
            host: s.host,
            place: s.place.clone(),
            first_flow,
            flows: n,
            sent: s.results.sent.frames,
            received: flows
                .iter()
                .filter(|f| (first_flow..first_flow + n).contains(&f.flow))
                .map(|f| f.received)
                .sum(),
            owd: delays
                .and_then(|d| d.per_client.get(s.host as usize).copied())
                .unwrap_or_default(),
        });
    }
    for (i, s) in sinks.iter().enumerate() {
        out.push(HostFigures {
            role: "server".into(),
            host: s.host,
            place: s.place.clone(),
            first_flow: 0,
            flows: 0,
            sent: 0,
            received: s.results.flows.iter().map(|f| f.received).sum::<u64>() + s.results.unstamped,
            owd: delays
                .and_then(|d| d.per_server.get(i).copied())
                .unwrap_or_default(),
        });
    }
    out
}

/// The AF_XDP sockets of a trial's sender and sink, as each read them back after bind
/// (absent when neither used AF_XDP).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct XdpModes {
    pub sender: Option<proto::XdpSockets>,
    pub sink: Option<proto::XdpSockets>,
}

impl XdpModes {
    fn of(src: &proto::UdpSourceResults, sink: &proto::UdpSinkResults) -> Option<XdpModes> {
        (src.xdp.is_some() || sink.xdp.is_some()).then(|| XdpModes {
            sender: src.xdp.as_deref().cloned(),
            sink: sink.xdp.as_deref().cloned(),
        })
    }
}

/// Losses up to this fraction of the packets sent count as none when judging the limit.
pub const LIMIT_TOLERANCE: f64 = 0.001;

/// One trial's counters along the path, for [`crate::limited_by::limited_by`]: the
/// gateway's ingress rx (every interface client hosts come in on) and its other
/// interfaces' tx (when it reported counters), `sink_in` (each sink host's busiest
/// interface rx, summed, when the sinks counted), the sinks' count. With
/// `--fragment`, the interfaces count IP fragments where the roles count datagrams:
/// the counters say how many fragments a datagram has, so that the judge compares
/// fragments with fragments.
#[allow(clippy::too_many_arguments)]
pub fn rate_counters(
    k: &PacketParams,
    family: Family,
    tb: &dyn Testbed,
    scheduled: u64,
    sent: u64,
    received: u64,
    gateway: Option<&GatewayResults>,
    sink: Option<SinkLink>,
    at_sink: bool,
) -> crate::limited_by::RateCounters {
    // Forward: the gateway's ingress and egress are on the path; input: its ingress
    // only (the sink runs there); direct: no gateway.
    let (has_in, has_out) = match tb.topology() {
        Topology::Forward => (true, true),
        Topology::Input | Topology::Proxy => (true, false),
        Topology::Direct => (false, false),
    };
    let gw = gateway.filter(|g| !g.interfaces.is_empty() && has_in);
    let ingresses = tb.gateway_ingresses();
    let (gateway_in, gateway_in_dropped) = match gw.map(|g| gateway_ingress(g, &ingresses)) {
        Some(Some((rx, dropped))) => (Some(rx), Some(dropped)),
        Some(None) => (None, Some(0)),
        None => (None, None),
    };
    // What the client's link carried back: the gateway's ingresses' transmits, each
    // as far as it is neighbour discovery.
    let client_link = gw.map_or(0, |g| {
        g.interfaces
            .iter()
            .filter(|i| ingresses.contains(&i.name.as_str()))
            .map(|i| crate::limited_by::own_frames(i.tx_packets))
            .sum()
    });
    let egress: Vec<&proto::IfCounters> = gw
        .map(|g| {
            g.interfaces
                .iter()
                .filter(|i| !ingresses.contains(&i.name.as_str()) && i.name != "lo")
                .collect()
        })
        .unwrap_or_default();
    let gateway_out = (has_out && gateway_in.is_some() && !egress.is_empty())
        .then(|| egress.iter().map(|i| i.tx_packets).sum());
    let paced = k.rate != proto::Rate::Max;
    let frames_per_datagram = match k.payload(family) {
        Ok(payload) if k.fragment => u64::from(PacketSize::frames(payload, family)),
        _ => 1,
    };
    crate::limited_by::RateCounters {
        paced,
        frames_per_datagram,
        scheduled: if paced { scheduled.max(sent) } else { sent },
        sent,
        // Counted at the gateway: its ingress is the count, nothing after it.
        gateway_in: if at_sink { gateway_in } else { Some(received) },
        gateway_in_dropped: if at_sink { gateway_in_dropped } else { None },
        gateway_out: if at_sink { gateway_out } else { None },
        sink_in: sink.map(|l| l.rx),
        received,
        // Counted at the gateway: no interface count is judged, nothing taken out.
        back: crate::limited_by::Back {
            client_link: if at_sink { client_link } else { 0 },
            sink_link: sink.map_or(0, |l| l.tx),
        },
        ..Default::default()
    }
}

/// The sink's interfaces on the gateway path: what they received, and what they sent
/// back as far as it is neighbour discovery (`limited_by::own_frames`), summed over the
/// sinks, each at its busiest interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkLink {
    pub rx: u64,
    pub tx: u64,
}

/// Packets into the gateway on `ingresses` (summed; `None` when it reported none of
/// them).
pub fn gateway_rx(g: &GatewayResults, ingresses: &[&str]) -> Option<u64> {
    gateway_ingress(g, ingresses).map(|(rx, _)| rx)
}

/// Packets into the gateway on `ingresses` and those its ingresses dropped on receipt
/// (each summed, in one pass over the interfaces; `None` when it reported none of them).
fn gateway_ingress(g: &GatewayResults, ingresses: &[&str]) -> Option<(u64, u64)> {
    g.interfaces
        .iter()
        .filter(|i| ingresses.contains(&i.name.as_str()))
        .map(|i| (i.rx_packets, i.rx_dropped))
        .reduce(|(a, b), (c, d)| (a + c, b + d))
}

/// Packet size of a family, for display: "18 B payload (64 B frame)"; a mix:
/// "imix: 64 B ×7, 576 B ×4, 1500 B ×1 frames (mean 354.3 B)".
pub fn size_text(k: &PacketParams, family: Family) -> String {
    if let PacketSize::Mix(m) = k.size {
        let parts: Vec<String> = m.parts().map(|(f, w)| format!("{f} B ×{w}")).collect();
        return format!(
            "{m}: {} frames (mean {:.1} B)",
            parts.join(", "),
            m.mean(|f| f)
        );
    }
    match (
        k.payload(family),
        k.size.frame(family),
        k.wire_bytes(family),
    ) {
        (Ok(p), Ok(f), _) => format!("{p} B payload ({f} B frame)"),
        (Ok(p), Err(_), Ok(w)) => format!("{p} B payload (IP fragments: {w} B on the wire)"),
        _ => k.size.to_string(),
    }
}

impl Summary for PacketSummary {
    fn line(&self) -> String {
        let s = self;
        format!(
            "offered {}, sent {}, received {} ({} Mb/s payload, {} Mb/s L2), loss {:.4}%{}{}{}{}",
            pps(s.offered_pps),
            pps(s.sent_pps),
            pps(s.received_pps),
            mbps(s.received_bps),
            mbps(s.received_l2_bps),
            s.loss_ratio * 100.0,
            s.events
                .as_deref()
                .map(crate::workloads::events::intended_loss)
                .unwrap_or_default(),
            if s.owd.count > 0 {
                format!(
                    ", one-way delay p50 {} µs, jitter {:.1} µs",
                    us(s.owd.p50_ns),
                    s.jitter_ns / 1e3
                )
            } else {
                String::new()
            },
            match &s.limited_by {
                Some(l) => format!(", limited by {}", l.short()),
                None => String::new(),
            },
            s.events
                .as_deref()
                .map(crate::workloads::events::violations_line)
                .unwrap_or_default()
        )
    }

    /// Packets, rates, loss, delays, hosts, the interfaces' counters, conntrack, what
    /// limited it, the sender's lag; then the adaptive line.
    fn text(&self, t: &TextOf) -> String {
        text::packet_text(t.p, t.gateway, self) + &t.adaptive
    }

    /// sent pps, recv pps, loss %, p50 µs (one-way; `-` without a shared clock).
    fn cells(&self) -> Vec<String> {
        let s = self;
        vec![
            format!("{:.0}", s.sent_pps),
            format!("{:.0}", s.received_pps),
            format!("{:.4}", s.loss_ratio * 100.0),
            if s.owd.count > 0 {
                us(s.owd.p50_ns)
            } else {
                "-".into()
            },
        ]
    }

    /// Packets received at the sink (sent, without one).
    fn live_total(&self) -> Option<u64> {
        Some(if self.counted_at == "sink" {
            self.received
        } else {
            self.sent
        })
    }

    fn stored_key(&self) -> &'static str {
        "packet"
    }

    fn packets_sent(&self) -> Option<u64> {
        Some(self.sent)
    }

    fn limited_by(&self) -> Option<results::LimitedBy> {
        self.limited_by.as_ref().map(|l| l.by)
    }

    /// The store's headline columns: received packets/s, loss, one-way delay, jitter.
    fn headline(&self) -> Headline {
        Headline {
            duration_s: Some(self.elapsed_s),
            throughput_bps: Some(self.received_bps),
            lost: Some(self.lost),
            offered_pps: Some(self.offered_pps),
            sent_pps: Some(self.sent_pps),
            received_pps: Some(self.received_pps),
            loss_ratio: Some(self.loss_ratio),
            owd_p50_us: (self.owd.count > 0).then(|| self.owd.p50_ns as f64 / 1e3),
            jitter_us: (self.owd.count > 0).then_some(self.jitter_ns / 1e3),
            validation_errors: Some(self.duplicates),
            ..Default::default()
        }
    }
}

/// The roles of a UDP packet trial: the source on the client, the sink (if any) on the
/// server (flood, flow and new flows alike).
pub fn udp_roles(tb: &dyn Testbed, p: &TrialParams) -> Result<Roles> {
    placed(p, role_specs(tb, p)?)
}

/// A packet trial's role specs on their hosts: the first server and client, then each
/// further one on the next host of its role.
fn placed(p: &TrialParams, (sinks, sources, marker): roles::RoleSpecs) -> Result<Roles> {
    let mut sinks = sinks.into_iter();
    let mut sources = sources.into_iter();
    let Some(source) = sources.next() else {
        bail!("a {} trial without a source", p.name());
    };
    Ok(Roles {
        server: sinks.next().map(|s| (Host::Server, s)),
        client: (Host::Client, source),
        proxy: None,
        more_servers: (1..)
            .zip(sinks)
            .map(|(i, s)| (Host::Server, i, s))
            .collect(),
        more_clients: (1..)
            .zip(sources)
            .map(|(i, s)| (Host::Client, i, s))
            .collect(),
        marker,
    })
}

/// A packet kind's parameter line ([`named_line`]): `what` of its packet parameters,
/// then the duration.
pub fn params_line(p: &TrialParams, what: impl FnOnce(&PacketParams) -> String) -> String {
    let k = p.packet().cloned().unwrap_or_default();
    named_line(p, &format!("{} t={}s", what(&k), p.duration_s))
}

/// The packet family's profile (flood and flow; ping and new flows differ in one
/// field): packets/s received ranks, timed by the sink's count.
pub const PACKETS: Profile = Profile {
    family: "packet",
    main_metric: MainMetric {
        name: "received_pps",
        higher: true,
    },
    live: Live {
        unit: "packets",
        at_sink: true,
        rtt: false,
    },
    ending: Ending::Timed {
        measuring: "server",
    },
    gateway_cpu: true,
};

/// What a packet kind adds to the family's checks, each asked where it applies (the
/// family's checks name no kind). By default nothing: flood, flow and new flows take
/// the family's checks as they are ([`PacketRate`]); ping has its own ([`Ping`]).
pub trait KindRules: Sync {
    /// A payload the kind cannot carry, refused with why.
    fn payload(&self, _payload: u32) -> Result<(), crate::params::Conflict> {
        Ok(())
    }
    /// Whether the kind sends to one destination only (`--dsts` refused).
    fn one_destination(&self) -> bool {
        false
    }
    /// A size mix of valid frames, refused with why where the kind sends one size.
    fn size_mix(&self, _mix: SizeMix) -> Result<(), crate::params::Conflict> {
        Ok(())
    }
}

/// Flood and flow: UDP from the client, counted at the sink (or the gateway).
pub struct PacketRate;

/// Flood, flow and new flows: the family's checks as they are.
impl KindRules for PacketRate {}

impl Traffic for PacketRate {
    fn profile(&self) -> Profile {
        PACKETS
    }

    /// Size, rate (or, before it is settled, the share of the capacity `event_load`
    /// asks for), flows (and destinations), threads, sender and sink, what aims it.
    fn params_text(&self, p: &TrialParams) -> String {
        let load = p
            .events
            .as_ref()
            .and_then(|e| e.load.as_ref())
            .filter(|l| l.capacity.is_none());
        params_line(p, |k| {
            format!(
                "size={} {} flows={}{} threads={} sender={} sink={}{}",
                k.size,
                match load {
                    Some(l) => format!("load={}", l.fraction),
                    None => format!("rate={}", k.rate),
                },
                k.flows,
                if k.dsts > 1 {
                    format!(" dsts={}", k.dsts)
                } else {
                    String::new()
                },
                k.threads,
                k.sender.name(),
                k.sink.name(),
                text::aim_text(k)
            )
        })
    }

    fn roles(&self, tb: &dyn Testbed, p: &TrialParams) -> Result<Roles> {
        udp_roles(tb, p)
    }

    /// A flood or flow spreads its flows over the client hosts and its sinks over the
    /// server hosts ([`spread`]); what needs one host, one source address or one
    /// destination does not spread.
    fn spread(&self, p: &TrialParams, clients: u32, servers: u32) -> Result<(), String> {
        let Some(k) = p.packet().filter(|_| clients > 1 || servers > 1) else {
            return Ok(());
        };
        let hosts = format!("{clients} client and {servers} server host(s)");
        let refuse = |what: &str| Err(format!("{what}: not with {hosts} (one host per role)"));
        if p.events.is_some() {
            return refuse("--event times the traffic of one client host");
        }
        if k.src.is_some() || k.aim.is_some() {
            return refuse("--src and --aim give every flow one source address");
        }
        if servers > 1 && (k.dsts > 1 || k.dst.is_some()) {
            return refuse("--dsts and --dst choose the destinations (the server hosts do)");
        }
        if servers > 1 && p.model.aims_at_gateway() && p.engine != firewall::Engine::None {
            return refuse(&format!(
                "model {} sends to the gateway, which forwards to one server",
                p.model.name()
            ));
        }
        let most = clients.max(servers);
        if k.flows < most {
            return Err(format!(
                "--flows {}: a trial spread over {hosts} needs a flow for each, at least {most}",
                k.flows
            ));
        }
        Ok(())
    }

    fn collect(&self, c: Collected<'_>) -> Result<Figures> {
        let gateway = c.gateway;
        let mut s = summarise_packet(c.p, c.tb, c.results, gateway)?;
        // A conntrack setting or table fill (issue 26): the table's figures beside.
        // A flood's or flow's flows are few and long: each is one new entry, admitted
        // when any of its packets reached the server.
        let offered = s.flows.iter().filter(|f| f.sent > 0).count() as u64;
        let admitted = s.flows.iter().filter(|f| f.received > 0).count() as u64;
        s.conntrack = CtSummary::of_gateway(gateway, offered, admitted, s.elapsed_s);
        Ok(Figures::Packet(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_summary_rows_the_mix_then_other_sizes_and_sums_bytes() {
        let c = |payload, packets| proto::SizeCount { payload, packets };
        let m = proto::SizeMix::imix();
        let sent = [c(18, 70), c(530, 40), c(1454, 10)];
        let received = [c(18, 69), c(99, 1), c(530, 40), c(1454, 10)];
        let s = MixSummary::new(m, Family::V4, &sent, &received);
        let rows: Vec<(u32, u32, u32, u64, u64)> = s
            .sizes
            .iter()
            .map(|r| (r.frame, r.payload, r.weight, r.sent, r.received))
            .collect();
        assert_eq!(
            rows,
            [
                (64, 18, 7, 70, 69),
                (576, 530, 4, 40, 40),
                (1500, 1454, 1, 10, 10),
                (145, 99, 0, 0, 1),
            ]
        );
        assert_eq!(s.mix, "imix");
        assert_eq!(
            s.received_bytes(),
            (
                69 * 18 + 99 + 40 * 530 + 10 * 1454,
                69 * 64 + 145 + 40 * 576 + 10 * 1500
            )
        );
        // IPv6: the same frames carry 20 bytes less payload.
        let m: proto::SizeMix = "78:1".parse().unwrap();
        let s = MixSummary::new(m, Family::V6, &[c(12, 5)], &[c(12, 5)]);
        assert_eq!((s.sizes[0].payload, s.sizes[0].received), (12, 5));
    }
    use proto::{Counter, FlowRx, UdpSinkResults, UdpSourceResults};

    fn testbed() -> crate::testbed::netns::NetnsTestbed {
        crate::testbed::netns::NetnsTestbed {
            name: "t".into(),
            topology: Topology::Forward,
        }
    }

    /// A sender of 18-byte payloads that sent `per_flow` packets, all it was scheduled
    /// to, in `secs` seconds.
    fn sent(per_flow: &[u64], secs: u64) -> UdpSourceResults {
        let frames = per_flow.iter().sum();
        UdpSourceResults {
            sent: Counter {
                frames,
                bytes: 18 * frames,
            },
            sent_per_flow: per_flow.to_vec(),
            scheduled: frames,
            elapsed_ns: secs * 1_000_000_000,
            ..Default::default()
        }
    }

    fn params(sink: SinkKind) -> TrialParams {
        let mut p = crate::plan::scenario::parse("t.toml", "workload = \"flood\"\n", 1)
            .unwrap()
            .trials[0]
            .params
            .clone();
        p.kind.packet_mut().unwrap().sink = sink;
        p.kind.packet_mut().unwrap().flows = 2;
        p.kind.packet_mut().unwrap().threads = 1;
        p
    }

    /// The summary of one source's results and a sink's (`None`: the gateway counts)
    /// on the one-host testbed.
    fn summary(
        sink: SinkKind,
        src: UdpSourceResults,
        rx: Option<UdpSinkResults>,
        gw: Option<&GatewayResults>,
    ) -> PacketSummary {
        let results =
            std::iter::once(RoleResults::UdpSource(src)).chain(rx.map(RoleResults::UdpSink));
        summarise_packet(&params(sink), &testbed(), results, gw).unwrap()
    }

    #[test]
    fn loss_per_flow_and_in_total() {
        let src = sent(&[600, 400], 2);
        let sink = UdpSinkResults {
            flows: vec![
                FlowRx {
                    flow: 0,
                    received: 590,
                    duplicates: 3,
                    ..Default::default()
                },
                FlowRx {
                    flow: 1,
                    received: 400,
                    reordered: 2,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let s = summary(SinkKind::Socket, src.clone(), Some(sink), None);
        assert_eq!((s.sent, s.received, s.lost), (1000, 990, 10));
        assert!((s.loss_ratio - 0.01).abs() < 1e-12);
        assert_eq!((s.sent_pps, s.received_pps), (500.0, 495.0));
        assert_eq!((s.duplicates, s.reordered), (3, 2));
        assert_eq!(s.flows[0].lost, 10);
        assert_eq!(s.flows[1].lost, 0);
        assert_eq!(s.frame, 64);
        assert_eq!(s.received_l2_bps, 495.0 * 64.0 * 8.0);
        // A search step stored and read back (resume) steers the search the same way —
        // its doubts too (a queue that filled fails `--load`'s capacity step); one of a
        // kind this fwbench does not know is left out, not the step.
        let o = crate::outcome::Outcome {
            figures: Some(crate::workloads::Figures::Packet(s.clone())),
            doubts: vec![results::Doubt::new(
                results::DoubtKind::QueueGrowing,
                "the one-way delay rose evenly through the trial",
            )],
            ..crate::outcome::Outcome::started("t0".into())
        };
        let mut stored_json = serde_json::to_value(&o).unwrap();
        stored_json["doubts"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"kind": "from_a_newer_fwbench", "why": "?"}));
        let resumed = crate::outcome::Outcome::from_stored_step(&stored_json).unwrap();
        assert_eq!(resumed.doubts, o.doubts);
        let back =
            crate::outcome::Outcome::from_stored_step(&serde_json::to_value(&o).unwrap()).unwrap();
        // (all but the counters `limited_by` was judged from, which are not stored)
        let mut stored = s.clone();
        if let Some(l) = stored.limited_by.as_mut() {
            l.counters = None;
        }
        assert_eq!(back.packet(), Some(&stored));
        assert_eq!(back.status, o.status);
        let pt = |o| crate::search::ndr::point(1000.0, o, 0.0, false).unwrap();
        assert_eq!(pt(&back), pt(&o));
        // Counted at the gateway: its ingress interface's packets.
        let gw = GatewayResults {
            interfaces: vec![proto::IfCounters {
                name: "g0".into(),
                rx_packets: 800,
                ..Default::default()
            }],
            ..Default::default()
        };
        let s = summary(SinkKind::Gateway, src.clone(), None, Some(&gw));
        assert_eq!(
            (s.counted_at.as_str(), s.received, s.lost),
            ("gateway", 800, 200)
        );
        // The ingress counted the link's own frames too (ARP, neighbour discovery):
        // never more received than were sent (xdp-drop read 1 003 of 1 000).
        let mut gw = gw;
        gw.interfaces[0].rx_packets = 1003;
        let s = summary(SinkKind::Gateway, src, None, Some(&gw));
        assert_eq!((s.received, s.lost), (1000, 0));
    }

    /// Two generator hosts (the second on the gateway's port g2) and two sink hosts,
    /// each reached through a namespace launcher (nothing is run by these tests).
    fn spread_testbed() -> crate::testbed::file::FileTestbed {
        crate::testbed::file::parse(
            "lab.toml",
            "[[client]]\nlauncher = [\"ip\", \"netns\", \"exec\", \"gen1\"]\ninterface = \"c0\"\n\
             prefix = \"198.18.1.0/24\"\ngateway_address = \"198.18.0.1\"\n\
             [[client]]\nlauncher = [\"ip\", \"netns\", \"exec\", \"gen2\"]\ninterface = \"c0\"\n\
             prefix = \"198.18.200.10/24\"\ngateway_address = \"198.18.200.1\"\ngateway_interface = \"g2\"\n\
             [gateway]\nlauncher = [\"ip\", \"netns\", \"exec\", \"gw\"]\ninterface = \"g0\"\n\
             [[server]]\nlauncher = [\"ip\", \"netns\", \"exec\", \"sink1\"]\naddress = \"198.19.0.2\"\n\
             [[server]]\nlauncher = [\"ip\", \"netns\", \"exec\", \"sink2\"]\naddress = \"198.19.0.3\"\n",
        )
        .unwrap()
    }

    #[test]
    fn a_trial_spread_over_two_generator_and_two_sink_hosts() {
        let tb = spread_testbed();
        let mut p = params(SinkKind::Socket);
        p.kind.packet_mut().unwrap().flows = 4;
        p.kind.packet_mut().unwrap().threads = 2;
        p.kind.packet_mut().unwrap().rate = Rate::Pps(3000.0);
        p.clients = 2;
        // What each host is told: a block of the flows, its own addresses and next hop,
        // the rate by its flows; flow n to sink n mod 2; each sink's delays per client host.
        let (sinks, sources, _) = role_specs(&tb, &p).unwrap();
        let src: Vec<&UdpSourceSpec> = sources
            .iter()
            .map(|r| match r {
                RoleSpec::UdpSource(s) => s,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            src.iter()
                .map(|s| (s.first_flow, s.flows, s.threads, s.pps))
                .collect::<Vec<_>>(),
            [(0, 2, 1, Some(1500.0)), (2, 2, 1, Some(1500.0))]
        );
        assert_eq!(src[0].sources[0].to_string(), "198.18.1.1");
        assert_eq!(src[1].sources[0].to_string(), "198.18.200.11");
        assert_eq!(src[1].dsts, src[0].dsts);
        assert_eq!(
            src[0]
                .dsts
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>(),
            ["198.19.0.2", "198.19.0.3"]
        );
        let listen: Vec<String> = sinks
            .iter()
            .map(|r| match r {
                RoleSpec::UdpSink(s) => {
                    assert_eq!((s.flows, s.owd_groups.as_slice()), (4, &[0u32, 2][..]));
                    s.listen.to_string()
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(listen, ["198.19.0.2", "198.19.0.3"]);
        let roles = udp_roles(&tb, &p).unwrap();
        assert_eq!(
            roles
                .more_clients
                .iter()
                .map(|(h, i, _)| (*h, *i))
                .collect::<Vec<_>>(),
            [(Host::Client, 1)]
        );
        assert_eq!(roles.more_servers.len(), 1);

        // Their results: 10 packets of flow 1 lost in the gateway; delays 40 µs.
        let source = |host, per_flow: Vec<u64>| Returned {
            host,
            place: format!("netns gen{}", host + 1),
            clock: None,
            results: RoleResults::UdpSource(UdpSourceResults {
                sent: Counter {
                    frames: per_flow.iter().sum(),
                    bytes: 18 * per_flow.iter().sum::<u64>(),
                },
                sent_per_flow: per_flow,
                scheduled: 150,
                elapsed_ns: 1_000_000_000,
                ..Default::default()
            }),
        };
        let group = |first_flow, n| {
            let mut h = traffic::hist::RttHistogram::new();
            h.record_n(40_000, n);
            proto::OwdGroup {
                first_flow,
                buckets: h.buckets(),
            }
        };
        let sink = |host, flows: Vec<(u32, u64)>, rx_if: u64| Returned {
            host,
            place: format!("netns sink{}", host + 1),
            clock: None,
            results: RoleResults::UdpSink(UdpSinkResults {
                flows: flows
                    .iter()
                    .map(|&(flow, received)| FlowRx {
                        flow,
                        received,
                        owd: owd(40_000),
                        ..Default::default()
                    })
                    .collect(),
                owd_groups: vec![group(0, flows[0].1), group(2, flows[1].1)],
                interfaces: vec![proto::IfCounters {
                    name: "s0".into(),
                    rx_packets: rx_if,
                    ..Default::default()
                }],
                ..Default::default()
            }),
        };
        let iface = |name: &str, rx, tx| proto::IfCounters {
            name: name.into(),
            rx_packets: rx,
            tx_packets: tx,
            ..Default::default()
        };
        let gw = GatewayResults {
            interfaces: vec![
                iface("g0", 200, 0),
                iface("g2", 100, 0),
                iface("g1", 0, 290),
            ],
            ..Default::default()
        };
        let s = summarise_packet(
            &p,
            &tb,
            vec![
                sink(1, vec![(1, 90), (3, 50)], 140),
                source(1, vec![50, 50]),
                source(0, vec![100, 100]),
                sink(0, vec![(0, 100), (2, 50)], 150),
            ],
            Some(&gw),
        )
        .unwrap();
        assert_eq!((s.sent, s.received, s.lost), (300, 290, 10));
        let per_flow: Vec<(u64, u64)> = s.flows.iter().map(|f| (f.sent, f.lost)).collect();
        assert_eq!(per_flow, [(100, 0), (100, 10), (50, 0), (50, 0)]);
        assert!((s.offered_pps - 300.0).abs() < 1e-9, "{}", s.offered_pps);
        let hosts: Vec<(&str, u32, u64, u64)> = s
            .hosts
            .iter()
            .flat_map(|h| h.iter())
            .map(|h| (h.role.as_str(), h.host, h.sent, h.received))
            .collect();
        assert_eq!(
            hosts,
            [
                ("client", 0, 200, 190),
                ("client", 1, 100, 100),
                ("server", 0, 0, 150),
                ("server", 1, 0, 140)
            ]
        );
        let per_host = s.hosts.as_deref().unwrap();
        assert_eq!(per_host[1].first_flow, 2);
        // Delays: every received packet's, merged; one clock (no correction).
        assert_eq!(s.owd.count, 290);
        assert_eq!(per_host[0].owd.count, 190);
        assert!(s.owd_clocks.is_none());
        // The gateway path: both ingresses in, its egress out, both sinks' interfaces.
        let c = s.limited_by.as_ref().unwrap().counters.unwrap();
        assert_eq!(
            (c.gateway_in, c.gateway_out, c.sink_in),
            (Some(300), Some(290), Some(290))
        );
        assert_eq!(
            s.limited_by.as_ref().unwrap().by,
            crate::limited_by::LimitedBy::Gateway
        );
        // In the JSON: one result with the hosts beside it.
        let j = serde_json::to_value(&s).unwrap();
        assert_eq!(j["hosts"][3]["place"], "netns sink2");
        assert_eq!(j["sent"], 300);
    }

    #[test]
    fn what_cannot_spread_over_several_hosts_says_so() {
        let p = params(SinkKind::Socket);
        let spread = |p: &TrialParams, c, s| crate::workloads::traffic(&p.kind).spread(p, c, s);
        spread(&p, 2, 2).unwrap();
        spread(&p, 1, 1).unwrap();
        let with = |f: &dyn Fn(&mut PacketParams)| {
            let mut q = p.clone();
            f(q.kind.packet_mut().unwrap());
            spread(&q, 2, 1).unwrap_err()
        };
        assert!(with(&|k| k.src = Some("198.18.1.1".parse().unwrap())).contains("--src"));
        assert!(with(&|k| k.flows = 1).contains("--flows 1"));
        let e = spread(&p, 1, 3).unwrap_err();
        assert!(e.contains("at least 3"), "{e}");
        // Other workloads run on one host per role, and say which role has more.
        let echo = crate::plan::scenario::parse("t.toml", "workload = \"echo\"\n", 1)
            .unwrap()
            .trials[0]
            .params
            .clone();
        let e = spread(&echo, 2, 1).unwrap_err();
        assert!(
            e.starts_with("echo runs on one client host; this testbed's client role has 2"),
            "{e}"
        );
        spread(&echo, 1, 1).unwrap();
        let ping = crate::plan::scenario::parse("t.toml", "workload = \"ping\"\n", 1)
            .unwrap()
            .trials[0]
            .params
            .clone();
        assert!(spread(&ping, 1, 2).unwrap_err().contains("one server host"));
    }

    #[test]
    fn each_trial_says_which_role_limited_its_rate() {
        use crate::limited_by::LimitedBy;
        let src = sent(&[500, 500], 1);
        let sink = |rx: u64| UdpSinkResults {
            flows: (0..2)
                .map(|flow| FlowRx {
                    flow,
                    received: rx / 2,
                    ..Default::default()
                })
                .collect(),
            interfaces: vec![proto::IfCounters {
                name: "s0".into(),
                rx_packets: rx,
                ..Default::default()
            }],
            ..Default::default()
        };
        let gw = |rx: u64, tx: u64| GatewayResults {
            interfaces: vec![
                proto::IfCounters {
                    name: "g0".into(),
                    rx_packets: rx,
                    ..Default::default()
                },
                proto::IfCounters {
                    name: "g1".into(),
                    tx_packets: tx,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let by = |g: GatewayResults, rx: u64| {
            let s = summary(SinkKind::Socket, src.clone(), Some(sink(rx)), Some(&g));
            let l = s.limited_by.clone().unwrap();
            // In the JSON, and read back the same.
            let j = serde_json::to_value(&s).unwrap();
            assert_eq!(j["limited_by"]["by"], l.by.as_str());
            (l.by, l.why)
        };
        // A lossless flood: as fast as the sender could.
        assert_eq!(by(gw(1000, 1000), 1000).0, LimitedBy::Sender);
        // The gateway forwarded 700 of 1000.
        let (b, why) = by(gw(1000, 700), 700);
        assert_eq!(b, LimitedBy::Gateway);
        assert!(why.contains("forwarded 700 of 1000"), "{why}");
        // Forwarded all, the sink's interface got 600.
        assert_eq!(by(gw(1000, 1000), 600).0, LimitedBy::Sink);
        // Old results without the field still read.
        let mut j = serde_json::to_value(summary(
            SinkKind::Socket,
            src.clone(),
            Some(sink(1000)),
            None,
        ))
        .unwrap();
        j.as_object_mut().unwrap().remove("limited_by");
        let old: PacketSummary = serde_json::from_value(j).unwrap();
        assert!(old.limited_by.is_none());
    }

    /// A delay distribution around `p50` ns (measured on two clocks).
    fn owd(p50: u64) -> RttSummary {
        RttSummary {
            count: 50,
            min_ns: p50 - 10_000,
            mean_ns: p50 as f64,
            p50_ns: p50,
            p90_ns: p50 + 5_000,
            p99_ns: p50 + 9_000,
            p999_ns: p50 + 9_900,
            max_ns: p50 + 10_000,
        }
    }

    #[test]
    fn one_way_delays_across_hosts_are_corrected_or_withheld() {
        let mut s = summary(
            SinkKind::Socket,
            sent(&[50, 50], 1),
            Some(UdpSinkResults {
                flows: (0..2)
                    .map(|flow| FlowRx {
                        flow,
                        received: 50,
                        owd: owd(80_000),
                        ..Default::default()
                    })
                    .collect(),
                owd: owd(80_000),
                ..Default::default()
            }),
            None,
        );
        let base = s.clone();
        assert!(base.owd.count > 0 && base.owd_clocks.is_none());
        // The sink's clock runs 20 µs ahead of the source's, known to ± 2 µs.
        s.apply_clocks(Some((-5_000, 1_000)), Some((15_000, 1_000)));
        let c = s.owd_clocks.clone().unwrap();
        assert_eq!(
            (c.correction_ns, c.uncertainty_ns, c.basis),
            (20_000, 2_000, "corrected")
        );
        assert_eq!(s.owd.p50_ns, base.owd.p50_ns - 20_000);
        assert_eq!(s.flows[0].owd.max_ns, base.flows[0].owd.max_ns - 20_000);
        // Known only to ± 1 s: no one-way delay is reported, the reason is.
        let mut w = base.clone();
        w.apply_clocks(None, Some((0, 1_000_000_000)));
        assert_eq!(w.owd_clocks.as_ref().unwrap().basis, "rtt-only");
        assert_eq!((w.owd.count, w.flows[0].owd.count), (0, 0));
        assert_eq!(w.headline().owd_p50_us, None);
    }

    #[test]
    fn a_time_to_effect_across_hosts_is_corrected_like_the_delays_or_withheld() {
        let mut s = summary(
            SinkKind::Socket,
            UdpSourceResults {
                sent_per_flow: vec![50],
                ..Default::default()
            },
            Some(UdpSinkResults {
                flows: vec![FlowRx {
                    flow: 0,
                    received: 50,
                    owd: owd(80_000),
                    ..Default::default()
                }],
                owd: owd(80_000),
                ..Default::default()
            }),
            None,
        );
        let mut e = crate::workloads::events::planted_summary(0);
        e.updates[0].effect_resolution_ms = Some(1.0);
        // The background around it: its largest delay 200 µs, a bin's mean 120 µs.
        e.updates[0].owd_max_us = 200;
        e.updates[0].series = vec![(0.0, 5, 0, 120.0), (1.0, 0, 3, 0.0)];
        // A reload's must-drop packets: 4 passed, from 1 ms after its start (raw).
        e.updates[0].violations = Some(crate::workloads::events::Violations {
            passed: 4,
            window_ms: Some(2.0),
            from_ms: Some(1.0),
            probe_gap_ms: 0.05,
        });
        s.events = Some(Box::new(e));
        let base = s.clone();
        // The sink's clock runs 50 µs ahead of the source's: the effect came 50 µs
        // earlier than the raw stamps say.
        s.apply_clocks(Some((0, 1_000)), Some((50_000, 3_000)));
        let tte = |s: &PacketSummary| s.events.as_ref().unwrap().updates[0].time_to_effect_ms;
        assert!((tte(&s).unwrap() - 2.95).abs() < 1e-9, "{:?}", tte(&s));
        // The client's offset cancels (a receive time on the sink's clock less a start
        // on the gateway's): its uncertainty, which the driver adds, gives way to the
        // sink's (± 3 µs for ± 1 µs).
        let res = |s: &PacketSummary| s.events.as_ref().unwrap().updates[0].effect_resolution_ms;
        assert!((res(&s).unwrap() - 1.002).abs() < 1e-9, "{:?}", res(&s));
        // So is where a reload's must-drop window starts (50 µs earlier), its count and
        // length as they were.
        let v = |s: &PacketSummary| s.events.as_ref().unwrap().updates[0].violations.clone();
        assert_eq!(
            v(&s).map(|v| (v.passed, v.window_ms, v.from_ms)),
            Some((4, Some(2.0), Some(0.95)))
        );
        // The background's delays around it are corrected alike (50 µs less); a bin
        // that received nothing has none.
        let up = |s: &PacketSummary| s.events.as_ref().unwrap().updates[0].clone();
        assert_eq!(up(&s).owd_max_us, 150);
        assert_eq!(up(&s).series, vec![(0.0, 5, 0, 70.0), (1.0, 0, 3, 0.0)]);
        assert_eq!(up(&s).no_delays, None);
        // The sink's clock behind the client's: the delays grow by it; a window that
        // received nothing still has no delay.
        let mut behind = base.clone();
        behind.apply_clocks(Some((0, 1_000)), Some((-30_000, 3_000)));
        assert_eq!(up(&behind).owd_max_us, 230);
        assert_eq!(
            up(&behind).series,
            vec![(0.0, 5, 0, 150.0), (1.0, 0, 3, 0.0)]
        );
        let mut dark = base.clone();
        if let Some(e) = dark.events.as_mut() {
            e.updates[0].owd_max_us = 0;
        }
        dark.apply_clocks(Some((0, 1_000)), Some((-30_000, 3_000)));
        assert_eq!(up(&dark).owd_max_us, 0);
        let why = |s: &PacketSummary| {
            s.events.as_ref().unwrap().updates[0]
                .no_time_to_effect
                .clone()
        };
        // Clocks known only to ± 1 s: no time to effect either, and why.
        let mut w = base.clone();
        w.apply_clocks(None, Some((0, 1_000_000_000)));
        assert_eq!(tte(&w), None);
        // Nor where must-drop packets began to pass: their count and length stay.
        assert_eq!(
            v(&w).map(|v| (v.passed, v.window_ms, v.from_ms)),
            Some((4, Some(2.0), None))
        );
        // Marker flows between several pairs of hosts: no one correction dates it.
        let mut spread = base.clone();
        spread.withhold_violation_starts();
        assert_eq!(
            v(&spread).map(|v| (v.passed, v.window_ms, v.from_ms)),
            Some((4, Some(2.0), None))
        );
        // Nor delays around it: no figures (0), and why.
        assert_eq!(up(&w).owd_max_us, 0);
        assert!(
            up(&w).series.iter().all(|b| b.3 == 0.0),
            "{:?}",
            up(&w).series
        );
        assert!(
            up(&w)
                .no_delays
                .is_some_and(|y| y.contains("related only to ± 1000000 µs")),
            "{:?}",
            up(&w).no_delays
        );
        assert!(
            why(&w).is_some_and(|y| y.contains("related only to ± 1000000 µs")),
            "{:?}",
            why(&w)
        );
        // No delay measured between them: nothing to relate the clocks by, said so.
        let mut none = base;
        none.owd = RttSummary::default();
        none.apply_clocks(None, Some((0, 1_000)));
        assert_eq!(tte(&none), None);
        assert!(
            why(&none).is_some_and(|y| y.contains("no one-way delay was measured")),
            "{:?}",
            why(&none)
        );
    }
}
