//! How packet-rate figures read: the trial's text (packets, rates, loss, delays, the
//! hosts of a spread role, counters, conntrack, what limited it) and the parameters
//! that aim its packets at a rule.
//!
//! Must not: compute figures (`summary` does) or decide what a trial line holds
//! beyond its figures (`output` does).

use super::{size_text, HostFigures, MixSummary, PacketSummary};
use crate::params::packet::PacketParams;
use crate::params::TrialParams;
use crate::workloads::units::{mbps, pps, us};
use proto::GatewayResults;
use std::fmt::Write as _;

/// ` dport=… sport=… aim=…` of a flood or flow (empty when none is set).
pub(super) fn aim_text(k: &PacketParams) -> String {
    let range = |(lo, hi): (u16, u16)| {
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        }
    };
    let mut out = String::new();
    if let Some(r) = k.dport {
        let _ = write!(out, " dport={}", range(r));
    }
    if let Some(r) = k.sport {
        let _ = write!(out, " sport={}", range(r));
    }
    if let Some(a) = &k.aim {
        let _ = write!(out, " aim={a}");
    }
    out
}

/// A size mix's line: each frame size with its weight, packets sent and received and
/// the received share.
fn mix_text(m: &MixSummary) -> String {
    let total: u64 = m.sizes.iter().map(|r| r.received).sum();
    let rows: Vec<String> = m
        .sizes
        .iter()
        .map(|r| {
            format!(
                "{} B ×{}: sent {} received {} ({:.1} %)",
                r.frame,
                r.weight,
                r.sent,
                r.received,
                r.received as f64 * 100.0 / total.max(1) as f64
            )
        })
        .collect();
    format!("  sizes        {}; {}\n", m.mix, rows.join(", "))
}

/// A role spread over several hosts: a line per host (flows, counts, median delay).
fn hosts_text(hosts: &[HostFigures]) -> String {
    let count = |role: &str| hosts.iter().filter(|h| h.role == role).count();
    hosts
        .iter()
        .map(|h| {
            let label = crate::testbed::file::role_label(&h.role, h.host as usize, count(&h.role));
            let what = if h.role == "client" {
                format!(
                    "flows {}-{}, sent {}, received {}",
                    h.first_flow,
                    (h.first_flow + h.flows).saturating_sub(1),
                    h.sent,
                    h.received
                )
            } else {
                format!("received {}", h.received)
            };
            let owd = if h.owd.count > 0 {
                format!(", one-way p50 {} µs", us(h.owd.p50_ns))
            } else {
                String::new()
            };
            format!("  {label:<12} {} — {what}{owd}\n", h.place)
        })
        .collect()
}

/// A flood's, flow's or new-flow trial's lines: packets, rates, loss, delays, hosts,
/// the interfaces' counters, conntrack, what limited it, the sender's lag.
pub(super) fn packet_text(
    p: &TrialParams,
    gateway: Option<&GatewayResults>,
    s: &PacketSummary,
) -> String {
    let family = p.family;
    let mut out = String::new();
    let k = p.packet().cloned().unwrap_or_default();
    out += &format!(
        "  packets      {} ({}), counted at the {}\n",
        size_text(&k, family),
        k.rate,
        s.counted_at
    );
    out += &format!(
        "  rate         offered {}  sent {}  received {} over {:.2} s\n",
        pps(s.offered_pps),
        pps(s.sent_pps),
        pps(s.received_pps),
        s.elapsed_s
    );
    out += &format!(
        "  throughput   {} Mb/s UDP payload, {} Mb/s Ethernet (FCS incl.)\n",
        mbps(s.received_bps),
        mbps(s.received_l2_bps)
    );
    let intended = s
        .events
        .as_deref()
        .map(crate::workloads::events::intended_loss)
        .unwrap_or_default();
    out += &format!(
        "  loss         {} of {} packets ({:.4} %){intended}, {} duplicates, {} reordered\n",
        s.lost,
        s.sent,
        s.loss_ratio * 100.0,
        s.duplicates,
        s.reordered
    );
    if let Some(m) = &s.mix {
        out += &mix_text(m);
    }
    let clocks = match &s.owd_clocks {
        None if s.hosts.is_none() => "shared clock of one host".to_string(),
        None => "the hosts share one clock".to_string(),
        Some(c) if !c.pairs.is_empty() => format!(
            "{} pairs of hosts' clocks, each corrected, the least certain by {:.1} ± {:.1} µs",
            c.pairs.len(),
            c.correction_ns as f64 / 1e3,
            c.uncertainty_ns as f64 / 1e3
        ),
        Some(c) => format!(
            "two hosts' clocks, corrected by {:.1} ± {:.1} µs",
            c.correction_ns as f64 / 1e3,
            c.uncertainty_ns as f64 / 1e3
        ),
    };
    // In the gateway's namespace the kernel stamps arrivals before the rules run: the
    // sink times them when it reads them instead (`UdpSinkSpec::in_gateway`).
    let read = if p.topology == crate::params::topology::Topology::Input {
        "; timed when the sink read them, past the gateway's rules"
    } else {
        ""
    };
    if s.owd.count > 0 {
        out += &format!(
            "  one-way µs   min {}  p50 {}  p99 {}  max {}  jitter {:.2} (RFC 3550; {clocks}{read})\n",
            us(s.owd.min_ns),
            us(s.owd.p50_ns),
            us(s.owd.p99_ns),
            us(s.owd.max_ns),
            s.jitter_ns / 1e3
        );
    } else if let Some(c) = s.owd_clocks.as_ref().filter(|c| c.basis == "rtt-only") {
        let which = if c.pairs.is_empty() {
            "the two hosts' clocks are"
        } else {
            "a pair of hosts' clocks is"
        };
        out += &format!(
            "  one-way      not shown: {which} known to ± {:.1} µs only, more than the delay (use `fwbench ping` for round trips); jitter {:.2} µs\n",
            c.uncertainty_ns as f64 / 1e3,
            s.jitter_ns / 1e3
        );
    }
    out += &hosts_text(s.hosts.as_deref().map_or(&[], |h| h.as_slice()));
    let k2 = &s.kernel;
    if k2.rcvbuf_errors + k2.in_errors > 0 {
        out += &format!(
            "  sink kernel  {} receive-buffer overflows, {} UDP input errors\n",
            k2.rcvbuf_errors, k2.in_errors
        );
    }
    let gw = gateway.iter().flat_map(|g| g.interfaces.iter());
    for (role, i) in gw
        .map(|i| ("gateway", i))
        .chain(s.sink_interfaces.iter().map(|i| ("server", i)))
    {
        out += &format!(
            "  {role} {:<4} rx {} (dropped {})  tx {} (dropped {})\n",
            i.name, i.rx_packets, i.rx_dropped, i.tx_packets, i.tx_dropped
        );
    }
    match &s.conntrack {
        Some(c) if super::new_flows(p) => {
            out += &format!(
                "  conntrack    {:.0} new flows/s admitted; {}\n",
                c.new_flows_per_s,
                c.sentence()
            );
        }
        Some(c) => out += &format!("  conntrack    {}\n", c.table_text()),
        None => {}
    }
    if let Some(l) = &s.limited_by {
        out += &format!("  limited by   {}: {}\n", l.by.as_str(), l.why);
        if let Some(w) = l.warning() {
            out += &format!("  warning      {w}\n");
        }
    }
    if s.send_errors > 0 || s.max_lag_ns > 10_000_000 {
        out += &format!(
            "  sender       {} refused sends (retried), fell behind its schedule by up to {:.1} ms\n",
            s.send_errors,
            s.max_lag_ns as f64 / 1e6
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aim_names_ports_and_rule() {
        let k = PacketParams {
            dport: Some((5000, 6000)),
            sport: Some((7, 7)),
            aim: Some("INPUT:3".into()),
            ..PacketParams::default()
        };
        assert_eq!(aim_text(&k), " dport=5000-6000 sport=7 aim=INPUT:3");
        assert_eq!(aim_text(&PacketParams::default()), "");
    }
}
