//! A packet-rate trial's figures from its sources, sinks and gateway: one host per
//! role, or a role spread over several hosts merged, each pair's clocks related.
//!
//! Must not: judge the trial (its witness and limit are judged after, by the driver).

use super::*;

/// Combine the sources' and sinks' results (and the gateway's counters): one host per
/// role, or a role spread over several hosts, merged ([`hosts`]) with each
/// (client host, server host) pair's delays related across their clocks.
pub fn summarise_packet<R: Into<Returned>>(
    p: &TrialParams,
    tb: &dyn Testbed,
    results: impl IntoIterator<Item = R>,
    gateway: Option<&GatewayResults>,
) -> Result<PacketSummary> {
    let k = p.packet().cloned().unwrap_or_default();
    let (sources, mut sinks) = by_role(results);
    if sources.is_empty() {
        bail!("missing results from the UDP source");
    }
    let spread_out = sources.len() > 1 || sinks.len() > 1;
    let shares = spread::client_shares(k.flows, p.clients, k.threads, None, sources.len() as u32);
    let clocked: Vec<FromHost<()>> = sources
        .iter()
        .map(|s| FromHost {
            host: s.host,
            place: s.place.clone(),
            clock: s.clock,
            results: (),
        })
        .collect();
    // Each sink's share of the gateway path, counted at its busiest interface (and
    // what that interface sent back: its link's own frames).
    let sink_link: Option<SinkLink> = (!sinks.is_empty()).then(|| {
        sinks
            .iter()
            .filter_map(|s| busiest(&s.results.interfaces))
            .fold(SinkLink { rx: 0, tx: 0 }, |a, i| SinkLink {
                rx: a.rx + i.rx_packets,
                tx: a.tx + crate::limited_by::own_frames(i.tx_packets),
            })
    });
    let delays = spread_out.then(|| hosts::relate(&shares, &clocked, &mut sinks));
    let src = if sources.len() == 1 {
        sources[0].results.clone()
    } else {
        hosts::merge_sources(&shares, k.flows, &sources)
    };
    let sink = match sinks.len() {
        0 => None,
        1 if !spread_out => Some(sinks[0].results.clone()),
        _ => {
            let mut m = hosts::merge_sinks(&sinks);
            if let Some(d) = &delays {
                m.owd = d.owd;
            }
            Some(m)
        }
    };
    let (counted_at, received, sink) = counted(&k, tb, sink, gateway)?;
    let at_sink = counted_at == "sink";
    let flows = flow_figures(p, &k, at_sink, &src, &sink);
    let sent = src.sent.frames;
    // The gateway's ingress counts the link's own frames too (ARP, neighbour
    // discovery: xdp-drop received 1–3 more than were sent): more than were sent were
    // not the test's.
    let received = if at_sink {
        received
    } else {
        received.min(sent)
    };
    let mut counters = rate_counters(
        &k,
        p.family,
        tb,
        src.scheduled,
        sent,
        received,
        gateway,
        sink_link.filter(|_| at_sink),
        at_sink,
    );
    let per_host = spread_out.then(|| {
        Box::new(host_figures(
            &shares,
            &sources,
            &sinks,
            &flows,
            delays.as_ref(),
        ))
    });
    let mut summary = figures(
        p,
        tb,
        &k,
        Counted {
            at: counted_at,
            received,
            src: &src,
            sink: &sink,
            gateway,
        },
    );
    // The marker's packets the update's rule dropped are the experiment, not a limit.
    counters.marker_dropped = summary
        .events
        .as_ref()
        .and_then(|e| e.marker_dropped)
        .unwrap_or(0);
    summary.limited_by = Some(Box::new(crate::limited_by::limited_by(
        &counters,
        LIMIT_TOLERANCE,
    )));
    summary.jitter_ns = mean_jitter(&flows);
    summary.flows = flows;
    summary.hosts = per_host;
    match delays {
        Some(d) => {
            // The background's flows between several pairs of hosts, each pair's delays
            // on its own two clocks: no one correction for their delays together.
            if d.clocks.is_some() {
                summary.correct_delays(Err(
                    "the background's flows run between several pairs of hosts whose clocks \
                     differ: their one-way delays together are no figure"
                        .into(),
                ));
            }
            if let Some((c, delta, unknown)) =
                marker_clocks(&shares, &clocked, &sinks, d.clocks.as_ref())
            {
                summary.correct_effects(c, delta, unknown);
            }
            // A reload's must-drop window starts at the earliest of every marker flow's
            // receive times, and those flows may run between other pairs of hosts than
            // flow 0's, whose clocks date the time to effect: no one correction dates it.
            if d.clocks.is_some() {
                summary.withhold_violation_starts();
            }
            summary.owd_clocks = d.clocks;
        }
        None => {
            // One host each: relate the two clocks when they are two hosts'.
            if let (Some(c), Some(v)) = (sources.first(), sinks.first()) {
                let of = |k: &Option<crate::testbed::launcher::ClockOffset>| {
                    k.map(|k| (k.offset_ns, k.uncertainty_ns))
                };
                if hosts::pair_clocks(c, v).is_some() {
                    summary.apply_clocks(of(&c.clock), of(&v.clock));
                }
            }
        }
    }
    Ok(summary)
}

/// A role spread over hosts: the clocks of the marker's (flow 0's) client host and
/// sink host, where they are two — (sink − client, the sink's uncertainty less the
/// client's, and why they cannot relate its time to effect where they cannot: that
/// pair's delays withheld by [`hosts::relate`], or none measured). `None`: one clock.
fn marker_clocks(
    shares: &[crate::testbed::spread::ClientShare],
    sources: &[FromHost<()>],
    sinks: &[FromHost<proto::UdpSinkResults>],
    clocks: Option<&hosts::OwdClocks>,
) -> Option<(i64, i64, Option<String>)> {
    let client = crate::testbed::spread::host_of_flow(shares, 0);
    let src = sources.iter().find(|s| s.host == client)?;
    let sink = sinks
        .iter()
        .find(|v| v.results.flows.iter().any(|f| f.flow == 0))?;
    let (c, u) = hosts::pair_clocks(src, sink)?;
    let of = |k: &Option<crate::testbed::launcher::ClockOffset>| k.map_or(0, |k| k.uncertainty_ns);
    let pair = clocks.and_then(|k| {
        k.pairs
            .iter()
            .find(|q| (q.client, q.server) == (client, sink.host))
    });
    let unknown = match pair {
        Some(q) if q.basis == "corrected" => None,
        Some(q) => Some(super::unrelated(q.packets, u)),
        None => Some(super::unrelated(0, u)),
    };
    Some((c, of(&sink.clock) - of(&src.clock), unknown))
}

type Sources = Vec<FromHost<proto::UdpSourceResults>>;
type Sinks = Vec<FromHost<proto::UdpSinkResults>>;

/// The sources' and the sinks' results, each by host.
fn by_role<R: Into<Returned>>(results: impl IntoIterator<Item = R>) -> (Sources, Sinks) {
    let (mut sources, mut sinks) = (vec![], vec![]);
    for r in results.into_iter().map(Into::<Returned>::into) {
        let (host, place, clock) = (r.host, r.place, r.clock);
        match r.results {
            RoleResults::UdpSource(results) => sources.push(FromHost {
                host,
                place,
                clock,
                results,
            }),
            RoleResults::UdpSink(results) => sinks.push(FromHost {
                host,
                place,
                clock,
                results,
            }),
            _ => {}
        }
    }
    sources.sort_by_key(|s| s.host);
    sinks.sort_by_key(|s| s.host);
    (sources, sinks)
}

/// Where the packets received were counted (`sink` or `gateway`), how many, and the
/// sink's results (empty when the gateway counted).
fn counted(
    k: &PacketParams,
    tb: &dyn Testbed,
    sink: Option<proto::UdpSinkResults>,
    gateway: Option<&GatewayResults>,
) -> Result<(&'static str, u64, proto::UdpSinkResults)> {
    Ok(match (k.sink, sink) {
        (SinkKind::Socket | SinkKind::Xdp, Some(s)) => {
            let distinct: u64 = s.flows.iter().map(|f| f.received).sum::<u64>() + s.unstamped;
            ("sink", distinct, s)
        }
        (SinkKind::Socket | SinkKind::Xdp, None) => bail!("missing results from the UDP sink"),
        (SinkKind::Gateway, _) => {
            let Some(g) = gateway.filter(|_| tb.topology() != Topology::Direct) else {
                bail!("sink gateway: no gateway counters");
            };
            let ingresses = tb.gateway_ingresses();
            let Some(rx) = gateway_rx(g, &ingresses) else {
                bail!(
                    "sink gateway: the gateway reported no {} counters",
                    ingresses.join(", ")
                );
            };
            ("gateway", rx, proto::UdpSinkResults::default())
        }
    })
}

/// Each flow end to end. Per-flow figures need the sink; the gateway's interface
/// counts only totals. New flows are one sequence at the sink (flow 0), not flows of
/// their own.
fn flow_figures(
    p: &TrialParams,
    k: &PacketParams,
    at_sink: bool,
    src: &proto::UdpSourceResults,
    sink: &proto::UdpSinkResults,
) -> Vec<FlowSummary> {
    let per_flow = if at_sink && !new_flows(p) { k.flows } else { 0 };
    (0..per_flow)
        .map(|f| {
            let rx = sink
                .flows
                .iter()
                .find(|x| x.flow == f)
                .cloned()
                .unwrap_or_default();
            let sent = src.sent_per_flow.get(f as usize).copied().unwrap_or(0);
            FlowSummary {
                flow: f,
                sent,
                received: rx.received,
                lost: sent.saturating_sub(rx.received),
                duplicates: rx.duplicates,
                reordered: rx.reordered,
                owd: rx.owd,
                jitter_ns: rx.jitter_ns,
            }
        })
        .collect()
}

/// Mean over the flows that have a jitter estimate (two timed packets or more).
fn mean_jitter(flows: &[FlowSummary]) -> f64 {
    let timed: Vec<f64> = flows
        .iter()
        .filter(|f| f.owd.count > 1)
        .map(|f| f.jitter_ns)
        .collect();
    if timed.is_empty() {
        0.0
    } else {
        timed.iter().sum::<f64>() / timed.len() as f64
    }
}

/// What was counted, where, from which ends.
struct Counted<'a> {
    at: &'static str,
    received: u64,
    src: &'a proto::UdpSourceResults,
    sink: &'a proto::UdpSinkResults,
    gateway: Option<&'a GatewayResults>,
}

/// The trial's figures from what was counted (flows, limit, hosts and clocks are the
/// caller's to add).
fn figures(p: &TrialParams, tb: &dyn Testbed, k: &PacketParams, c: Counted) -> PacketSummary {
    let (src, sink, received) = (c.src, c.sink, c.received);
    let elapsed_s = (src.elapsed_ns as f64 / 1e9).max(1e-9);
    let sent = src.sent.frames;
    let lost = sent.saturating_sub(received);
    let offered = if k.rate == proto::Rate::Max {
        sent
    } else {
        src.scheduled.max(sent)
    };
    let b = bytes(p, k, c.at == "sink", received, elapsed_s, src, sink);
    PacketSummary {
        limited_by: None,
        counted_at: c.at.into(),
        elapsed_s,
        payload: b.payload,
        frame: b.frame,
        mix: b.mix,
        offered_pps: offered as f64 / elapsed_s,
        sent,
        sent_pps: sent as f64 / elapsed_s,
        received,
        received_pps: received as f64 / elapsed_s,
        lost,
        loss_ratio: if sent == 0 {
            0.0
        } else {
            lost as f64 / sent as f64
        },
        received_bps: b.received_bps,
        received_l2_bps: b.received_l2_bps,
        duplicates: sink.flows.iter().map(|f| f.duplicates).sum(),
        reordered: sink.flows.iter().map(|f| f.reordered).sum(),
        unstamped: sink.unstamped,
        owd: sink.owd,
        jitter_ns: 0.0,
        owd_clocks: None,
        send_errors: src.send_errors,
        max_lag_ns: src.max_lag_ns,
        kernel: sink.kernel,
        sink_interfaces: sink.interfaces.clone(),
        flows: vec![],
        nat: (!sink.sources.is_empty()).then(|| {
            Box::new(NatSeen {
                sources: sink.sources.clone(),
                other_sources: sink.other_sources,
            })
        }),
        events: {
            // Flow i sends from sources[i % len] (as `role_specs` builds them).
            let sources: Vec<std::net::IpAddr> = match k.src {
                Some(a) => vec![a],
                None => (1..=p.clients.min(k.flows).max(1))
                    .map(|i| tb.client_addr(p.family, i))
                    .collect(),
            };
            crate::workloads::events::summarise_flows(p, &sources, src, sink, c.gateway)
                .map(Box::new)
        },
        conntrack: None,
        xdp: XdpModes::of(src, sink).map(Box::new),
        hosts: None,
    }
}

/// Bytes per packet and bits/s received.
struct Bytes {
    payload: u32,
    frame: u32,
    mix: Option<Box<MixSummary>>,
    received_bps: f64,
    received_l2_bps: f64,
}

/// Bits/s: of one size, packets × its bytes; of a mix, the bytes of each size the
/// sink counted (or, counted at the gateway, packets × the mix's means).
fn bytes(
    p: &TrialParams,
    k: &PacketParams,
    at_sink: bool,
    received: u64,
    elapsed_s: f64,
    src: &proto::UdpSourceResults,
    sink: &proto::UdpSinkResults,
) -> Bytes {
    let payload = k.payload(p.family).unwrap_or(0);
    let frame = PacketSize::wire_bytes(payload, p.family);
    let bps = |bytes: f64| received as f64 * bytes * 8.0 / elapsed_s;
    match k.size {
        PacketSize::Mix(m) => {
            let ms = MixSummary::new(m, p.family, &src.sent_sizes, &sink.sizes);
            let (mean_payload, mean_frame) = k.mean_bytes(p.family).unwrap_or_default();
            let (received_bps, received_l2_bps) = if at_sink {
                let (pb, l2b) = ms.received_bytes();
                (pb as f64 * 8.0 / elapsed_s, l2b as f64 * 8.0 / elapsed_s)
            } else {
                (bps(mean_payload), bps(mean_frame))
            };
            Bytes {
                payload: mean_payload.round() as u32,
                frame: mean_frame.round() as u32,
                mix: Some(Box::new(ms)),
                received_bps,
                received_l2_bps,
            }
        }
        PacketSize::Payload(_) | PacketSize::Frame(_) => Bytes {
            payload,
            frame,
            mix: None,
            received_bps: bps(f64::from(payload)),
            received_l2_bps: bps(f64::from(frame)),
        },
    }
}

/// The interface of a sink's host that received the most (its link from the gateway).
fn busiest(interfaces: &[proto::IfCounters]) -> Option<&proto::IfCounters> {
    interfaces
        .iter()
        .filter(|i| i.name != "lo")
        .max_by_key(|i| i.rx_packets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbed::launcher::ClockOffset;
    use hosts::{OwdClocks, OwdPair};

    fn at(host: u32, place: &str, offset_ns: i64, uncertainty_ns: i64) -> FromHost<()> {
        FromHost {
            host,
            place: place.into(),
            clock: Some(ClockOffset {
                offset_ns,
                uncertainty_ns,
                exchanges: 5,
            }),
            results: (),
        }
    }

    /// Spread over two client and two server hosts, the marker's time to effect is
    /// corrected by the clocks of flow 0's own pair — its client host and the sink host
    /// that received it — known only where that pair's delays were corrected.
    #[test]
    fn the_markers_clocks_are_its_own_pairs() {
        let shares = crate::testbed::spread::client_shares(4, 2, 2, None, 2);
        let sources = [at(0, "ssh a", 1_000, 1_000), at(1, "ssh b", 9_000, 9_000)];
        let sink = |host, place: &str, flow, offset| {
            let h = at(host, place, offset, 2_000);
            FromHost {
                host: h.host,
                place: h.place,
                clock: h.clock,
                results: proto::UdpSinkResults {
                    flows: vec![proto::FlowRx {
                        flow,
                        received: 10,
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            }
        };
        // Flow 0 went to server host 1.
        let sinks = [sink(0, "ssh c", 2, 7_000), sink(1, "ssh d", 0, 51_000)];
        let pair = |client, server, basis| OwdPair {
            client,
            server,
            packets: 10,
            correction_ns: 0,
            uncertainty_ns: 0,
            basis,
        };
        let clocks = |pairs| OwdClocks {
            correction_ns: 0,
            uncertainty_ns: 0,
            basis: "corrected",
            pairs,
        };
        let known = clocks(vec![pair(0, 0, "rtt-only"), pair(0, 1, "corrected")]);
        // The sink's uncertainty (2 µs) for the client's (1 µs).
        assert_eq!(
            marker_clocks(&shares, &sources, &sinks, Some(&known)),
            Some((50_000, 1_000, None))
        );
        let loose = clocks(vec![pair(0, 0, "corrected"), pair(0, 1, "rtt-only")]);
        let (_, _, why) = marker_clocks(&shares, &sources, &sinks, Some(&loose)).unwrap();
        assert!(
            why.as_deref()
                .is_some_and(|y| y.contains("related only to ± 3 µs")),
            "{why:?}"
        );
        // That pair carried no delay: nothing related them.
        let unmeasured = clocks(vec![pair(0, 0, "corrected")]);
        let (_, _, why) = marker_clocks(&shares, &sources, &sinks, Some(&unmeasured)).unwrap();
        assert!(
            why.as_deref()
                .is_some_and(|y| y.contains("no one-way delay was measured")),
            "{why:?}"
        );
        // One clock: nothing to correct.
        let same = [sink(0, "ssh c", 2, 7_000), sink(1, "ssh a", 0, 1_000)];
        assert_eq!(marker_clocks(&shares, &sources, &same, Some(&known)), None);
    }
}
