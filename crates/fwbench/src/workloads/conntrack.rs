//! Conntrack workloads (issue 26): new flows through a stateful gateway — each UDP
//! datagram a new 5-tuple — and what the gateway's connection-tracking table did with
//! them: admitted, dropped because the table was full, evicted early, insertions that
//! failed, from the kernel's per-CPU statistics read at Start and Stop, checked
//! against the loss the traffic saw.
//!
//! The traffic is the packet family's (a UDP source and sink, counted at the sink);
//! what this module adds is the gateway's conntrack settings for the trial
//! ([`gateway_spec`]) and the figures (`ctsummary::CtSummary`). The new-flow rate with no loss
//! is the ndr search over this kind (its rate is new flows/s).
//!
//! Must not: touch the table's settings (the gateway agent does, `host::conntrack`).

use crate::params::workload::{PacketKind, TrialKind};
use crate::params::TrialParams;
use crate::testbed::Testbed;
use crate::workloads::ctsummary::CtSummary;
use crate::workloads::packet::{params_line, summarise_packet, udp_roles, PACKETS};
use crate::workloads::{Collected, Figures, Live, Profile, Roles, Traffic};
use anyhow::Result;
use proto::CtSpec;

/// The gateway's conntrack settings and report for a trial: asked for by the new-flow
/// workload always (its figures need the counters), by other packet workloads when
/// they set a table setting.
pub fn gateway_spec(p: &TrialParams) -> Option<CtSpec> {
    let k = p.packet()?;
    let new_flows = matches!(p.kind, TrialKind::Packet(PacketKind::NewFlows, _));
    let spec = CtSpec {
        max: k.ct_max,
        buckets: k.ct_buckets,
        udp_timeout_s: k.ct_udp_timeout,
        // A fill starts from an empty table too.
        flush: new_flows || k.ct_fill.is_some(),
        fill: k.ct_fill,
    };
    (spec != CtSpec::default()).then_some(spec)
}

/// New flows: the packet family's UDP traffic, one datagram per 5-tuple, with the
/// gateway's conntrack figures.
pub struct NewFlows;

impl Traffic for NewFlows {
    /// The packet family's, counting flows: admitted new flows/s rank (one datagram
    /// each: the sink's packets/s).
    fn profile(&self) -> Profile {
        Profile {
            live: Live {
                unit: "flows",
                ..PACKETS.live
            },
            ..PACKETS
        }
    }

    /// Flows, rate, threads and the table's settings.
    fn params_text(&self, p: &TrialParams) -> String {
        params_line(p, |k| {
            format!(
                "flows={} rate={} threads={}{}",
                k.flows,
                k.rate,
                k.threads,
                crate::workloads::ctsummary::settings_text(k)
            )
        })
    }

    fn roles(&self, tb: &dyn Testbed, p: &TrialParams) -> Result<Roles> {
        udp_roles(tb, p)
    }

    fn collect(&self, c: Collected<'_>) -> Result<Figures> {
        let gateway = c.gateway;
        let mut s = summarise_packet(c.p, c.tb, c.results, gateway)?;
        s.conntrack = CtSummary::of_gateway(gateway, s.sent, s.received, s.elapsed_s);
        Ok(Figures::Packet(s))
    }
}
