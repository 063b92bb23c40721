//! A flood's or flow's results from a role spread over several hosts
//! ([`crate::testbed::spread`]) merged into the one trial's: the sources' counts summed
//! with each host's flows at their numbers in the trial, the sinks' counts summed flow
//! by flow, and the one-way delays related across the hosts' clocks pair by pair.
//!
//! Owns: the merge and the clock relation of (client host, server host) pairs (one
//! pair is the case of one host per role). Must not: start agents or read clocks (the
//! offsets come with the results).

use crate::testbed::launcher::ClockOffset;
use crate::testbed::spread::{self, ClientShare};
use proto::{FlowRx, RttSummary, UdpSinkResults, UdpSourceResults};
use serde::Serialize;
use traffic::hist::RttHistogram;

/// One host's results, where it ran and its clock against the controller's.
#[derive(Debug, Clone)]
pub struct FromHost<T> {
    pub host: u32,
    pub place: String,
    pub clock: Option<ClockOffset>,
    pub results: T,
}

/// The sources' results as one: counts summed, each host's per-flow counts at its
/// flows' numbers in the trial, the longest sending time, the largest lag.
pub fn merge_sources(
    shares: &[ClientShare],
    flows: u32,
    sources: &[FromHost<UdpSourceResults>],
) -> UdpSourceResults {
    let mut r = UdpSourceResults {
        sent_per_flow: vec![0; flows as usize],
        ..Default::default()
    };
    for s in sources {
        let x = &s.results;
        let first = shares
            .iter()
            .find(|c| c.host == s.host)
            .map_or(0, |c| c.first_flow) as usize;
        r.sent.merge(&x.sent);
        r.scheduled += x.scheduled;
        r.elapsed_ns = r.elapsed_ns.max(x.elapsed_ns);
        r.max_lag_ns = r.max_lag_ns.max(x.max_lag_ns);
        r.send_errors += x.send_errors;
        for (i, n) in x.sent_per_flow.iter().enumerate() {
            if let Some(slot) = r.sent_per_flow.get_mut(first + i) {
                *slot += n;
            }
        }
        for c in &x.sent_sizes {
            proto::count_size(&mut r.sent_sizes, c.payload, c.packets);
        }
        r.xdp = r.xdp.take().or_else(|| x.xdp.clone());
    }
    r
}

/// The sinks' counts as one, flow by flow (a flow reaches one sink; were it counted by
/// two, its counts add and the delays of the larger share are kept). The merged delays
/// and each sink's delay groups are [`relate`]'s.
pub fn merge_sinks(sinks: &[FromHost<UdpSinkResults>]) -> UdpSinkResults {
    let mut r = UdpSinkResults::default();
    let mut flows: Vec<FlowRx> = vec![];
    for s in sinks {
        let x = &s.results;
        r.received.merge(&x.received);
        r.unstamped += x.unstamped;
        r.active_ns = r.active_ns.max(x.active_ns);
        r.kernel.in_datagrams += x.kernel.in_datagrams;
        r.kernel.no_ports += x.kernel.no_ports;
        r.kernel.in_errors += x.kernel.in_errors;
        r.kernel.rcvbuf_errors += x.kernel.rcvbuf_errors;
        r.interfaces.extend(x.interfaces.iter().cloned());
        for c in &x.sizes {
            proto::count_size(&mut r.sizes, c.payload, c.packets);
        }
        for a in &x.sources {
            proto::count_source(&mut r.sources, &mut r.other_sources, a.addr, a.packets);
        }
        r.other_sources += x.other_sources;
        r.xdp = r.xdp.take().or_else(|| x.xdp.clone());
        for f in &x.flows {
            match flows.iter_mut().find(|m| m.flow == f.flow) {
                None => flows.push(f.clone()),
                Some(m) => {
                    if f.received > m.received {
                        m.owd = f.owd;
                        m.jitter_ns = f.jitter_ns;
                        m.bins = f.bins.clone();
                    }
                    m.received += f.received;
                    m.bytes += f.bytes;
                    m.duplicates += f.duplicates;
                    m.reordered += f.reordered;
                }
            }
        }
    }
    flows.sort_by_key(|f| f.flow);
    r.flows = flows;
    r.sources.sort_by_key(|s| std::cmp::Reverse(s.packets));
    r
}

/// One-way delays between two hosts: receive time on the sink's clock − send time on the
/// source's, corrected by the clocks' offset (each host's offset to the controller,
/// estimated NTP-style over the control channel).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OwdClocks {
    /// Sink clock − source clock, subtracted from every one-way delay, ns (with
    /// several hosts in a role: the least certain pair's; each pair's in `pairs`).
    pub correction_ns: i64,
    /// Half-width of what the correction may be off by, ns.
    pub uncertainty_ns: i64,
    /// The delays are shown: `corrected`; or withheld: `rtt-only` (the clocks are not
    /// known well enough to tell a one-way delay — use ping's RTT).
    pub basis: &'static str,
    /// Several hosts in a role: each (client host, server host) pair that carried
    /// packets, its own correction (absent with one host per role).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<OwdPair>,
}

/// How the clocks of one client host and one server host were related.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OwdPair {
    /// Client and server host (0-based, in the order of the testbed file's tables).
    pub client: u32,
    pub server: u32,
    /// Packets with a delay that went this way.
    pub packets: u64,
    pub correction_ns: i64,
    pub uncertainty_ns: i64,
    /// `corrected`, `same clock` (one host, or both on the controller's) or `rtt-only`.
    pub basis: &'static str,
}

/// (correction, uncertainty) of receive times on `sink`'s clock less send times on
/// `source`'s; `None` when both read one clock (one host, or both local).
pub fn pair_clocks<A, B>(source: &FromHost<A>, sink: &FromHost<B>) -> Option<(i64, i64)> {
    if source.place == sink.place || (source.clock.is_none() && sink.clock.is_none()) {
        return None;
    }
    let of = |c: &Option<ClockOffset>| c.map_or((0, 0), |k| (k.offset_ns, k.uncertainty_ns));
    let ((so, su), (ko, ku)) = (of(&source.clock), of(&sink.clock));
    Some((ko - so, su + ku))
}

/// Whether delays with median `p50` ns (as measured) are known after a correction of
/// `c` ± `u` ns: the uncertainty is below the corrected median. A median of 0 is none:
/// the sink floors a receive time before its send stamp to 0 (its clock behind the
/// sender's by more than the delay), and a delay of 0 shifted by the correction would
/// read as the clocks' offset.
pub fn known(count: u64, p50: u64, c: i64, u: i64) -> bool {
    count > 0 && p50 > 0 && u < p50 as i64 - c
}

/// A delay summary less `correction_ns` (never below 0).
pub fn shift(r: &mut RttSummary, correction_ns: i64) {
    let f = |v: u64| (v as i64 - correction_ns).max(0) as u64;
    r.min_ns = f(r.min_ns);
    r.p50_ns = f(r.p50_ns);
    r.p90_ns = f(r.p90_ns);
    r.p99_ns = f(r.p99_ns);
    r.p999_ns = f(r.p999_ns);
    r.max_ns = f(r.max_ns);
    r.mean_ns = (r.mean_ns - correction_ns as f64).max(0.0);
}

/// The delays of a spread trial, related across hosts.
#[derive(Debug, Clone, Default)]
pub struct Delays {
    /// All delays merged (count 0: withheld).
    pub owd: RttSummary,
    /// Per client host and per server host (index order).
    pub per_client: Vec<RttSummary>,
    pub per_server: Vec<RttSummary>,
    /// How the clocks were related (`None`: every pair read one clock).
    pub clocks: Option<OwdClocks>,
}

/// Relate each sink's delays to each client host's clock: every delay group of a
/// sink (one per client host, [`proto::UdpSinkSpec::owd_groups`]) is corrected by that
/// pair's clocks and merged; its flows' summaries are shifted alike. A pair whose
/// clocks are not known well enough ([`known`]) withholds its flows' delays, and then
/// the merged ones too (`rtt-only`), rather than report them wrong.
pub fn relate(
    shares: &[ClientShare],
    sources: &[FromHost<()>],
    sinks: &mut [FromHost<UdpSinkResults>],
) -> Delays {
    let mut pairs: Vec<OwdPair> = vec![];
    let mut all = RttHistogram::new();
    // Each host's delays, and whether one of its pairs was withheld (then its own are).
    let mut per_client = vec![(RttHistogram::new(), false); shares.len()];
    let mut per_server = vec![];
    let mut withheld = false;
    let mut remote = false;
    for sink in sinks.iter_mut() {
        let mut mine = (RttHistogram::new(), false);
        // (client host, correction, known) of this sink's groups.
        let mut by_client: Vec<(u32, i64, bool)> = vec![];
        for g in &sink.results.owd_groups {
            let client = spread::host_of_flow(shares, g.first_flow);
            let Some(src) = sources.iter().find(|s| s.host == client) else {
                continue;
            };
            let mut h = RttHistogram::new();
            for &(v, n) in &g.buckets {
                h.record_n(v, n);
            }
            let raw = h.summary();
            let (c, u, ok, basis) = match pair_clocks(src, sink) {
                None => (0, 0, true, "same clock"),
                Some((c, u)) => {
                    remote = true;
                    let ok = raw.count == 0 || known(raw.count, raw.p50_ns, c, u);
                    (c, u, ok, if ok { "corrected" } else { "rtt-only" })
                }
            };
            by_client.push((client, c, ok));
            if raw.count > 0 {
                pairs.push(OwdPair {
                    client,
                    server: sink.host,
                    packets: raw.count,
                    correction_ns: c,
                    uncertainty_ns: u,
                    basis,
                });
            }
            withheld |= !ok;
            let mut shifted = RttHistogram::new();
            for &(v, n) in &g.buckets {
                shifted.record_n((v as i64 - c).max(1) as u64, n);
            }
            for (h, out) in std::iter::once(&mut mine).chain(per_client.get_mut(client as usize)) {
                h.merge(&shifted);
                *out |= !ok;
            }
            all.merge(&shifted);
        }
        for f in &mut sink.results.flows {
            let client = spread::host_of_flow(shares, f.flow);
            match by_client.iter().find(|(c, _, _)| *c == client) {
                Some((_, c, true)) => shift(&mut f.owd, *c),
                Some((_, _, false)) => f.owd = RttSummary::default(),
                None => {}
            }
        }
        per_server.push(mine);
    }
    let summary = |(h, out): &(RttHistogram, bool)| {
        if *out {
            RttSummary::default()
        } else {
            h.summary()
        }
    };
    let worst = pairs.iter().max_by_key(|p| p.uncertainty_ns);
    let clocks = remote.then(|| OwdClocks {
        correction_ns: worst.map_or(0, |p| p.correction_ns),
        uncertainty_ns: worst.map_or(0, |p| p.uncertainty_ns),
        basis: if withheld { "rtt-only" } else { "corrected" },
        pairs: pairs.clone(),
    });
    Delays {
        owd: if withheld {
            RttSummary::default()
        } else {
            all.summary()
        },
        per_client: per_client.iter().map(summary).collect(),
        per_server: per_server.iter().map(summary).collect(),
        clocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proto::{Counter, OwdGroup};

    /// Delays floored at the sink (its clock behind by more than they took) are no
    /// delays to correct: 200 µs behind, ± 5 µs, would read 200 µs for a 30-µs path.
    #[test]
    fn floored_delays_are_not_known() {
        assert!(known(100, 80_000, 50_000, 5_000));
        assert!(known(100, 10, -200_000, 5_000));
        assert!(!known(100, 0, -200_000, 5_000));
        assert!(!known(0, 80_000, 0, 5_000));
    }

    fn at(host: u32, place: &str, clock: Option<(i64, i64)>) -> FromHost<()> {
        FromHost {
            host,
            place: place.into(),
            clock: clock.map(|(o, u)| ClockOffset {
                offset_ns: o,
                uncertainty_ns: u,
                exchanges: 8,
            }),
            results: (),
        }
    }

    /// `n` delays of `ns` each as a group's buckets.
    fn group(first_flow: u32, ns: u64, n: u64) -> OwdGroup {
        let mut h = RttHistogram::new();
        h.record_n(ns, n);
        OwdGroup {
            first_flow,
            buckets: h.buckets(),
        }
    }

    fn flow(flow: u32, received: u64, p50: u64) -> FlowRx {
        FlowRx {
            flow,
            received,
            owd: RttSummary {
                count: received,
                min_ns: p50,
                mean_ns: p50 as f64,
                p50_ns: p50,
                p90_ns: p50,
                p99_ns: p50,
                p999_ns: p50,
                max_ns: p50,
            },
            ..Default::default()
        }
    }

    #[test]
    fn sources_merge_at_their_flow_numbers() {
        let shares = spread::client_shares(5, 2, 2, Some(500.0), 2);
        let src = |host, per_flow: Vec<u64>, elapsed| FromHost {
            host,
            place: format!("h{host}"),
            clock: None,
            results: UdpSourceResults {
                sent: Counter {
                    frames: per_flow.iter().sum(),
                    bytes: 18 * per_flow.iter().sum::<u64>(),
                },
                sent_per_flow: per_flow,
                scheduled: 100,
                elapsed_ns: elapsed,
                send_errors: 1,
                ..Default::default()
            },
        };
        let r = merge_sources(
            &shares,
            5,
            &[src(1, vec![7, 8], 900), src(0, vec![1, 2, 3], 1000)],
        );
        assert_eq!(r.sent_per_flow, [1, 2, 3, 7, 8]);
        assert_eq!((r.sent.frames, r.sent.bytes), (21, 21 * 18));
        assert_eq!((r.scheduled, r.elapsed_ns, r.send_errors), (200, 1000, 2));
    }

    #[test]
    fn sinks_merge_flow_by_flow() {
        let sink = |host, flows: Vec<FlowRx>| FromHost {
            host,
            place: String::new(),
            clock: None,
            results: UdpSinkResults {
                received: Counter {
                    frames: flows.iter().map(|f| f.received).sum(),
                    bytes: 0,
                },
                flows,
                unstamped: 1,
                ..Default::default()
            },
        };
        let r = merge_sinks(&[
            sink(0, vec![flow(0, 10, 5), flow(2, 3, 5)]),
            sink(1, vec![flow(1, 4, 7), flow(2, 5, 9)]),
        ]);
        let got: Vec<(u32, u64, u64)> = r
            .flows
            .iter()
            .map(|f| (f.flow, f.received, f.owd.p50_ns))
            .collect();
        assert_eq!(got, [(0, 10, 5), (1, 4, 7), (2, 8, 9)]);
        assert_eq!((r.received.frames, r.unstamped), (22, 2));
    }

    #[test]
    fn delays_across_two_generator_hosts_are_corrected_pair_by_pair() {
        // Flows 0-1 from client host 0 (its clock 30 µs behind the controller's),
        // flows 2-3 from client host 1 (on the controller's clock); one sink whose
        // clock is 50 µs ahead. True delays: 100 µs and 200 µs.
        let shares = spread::client_shares(4, 2, 2, None, 2);
        let sources = [at(0, "gen1", Some((-30_000, 1_000))), at(1, "gen2", None)];
        let sink = |clock| FromHost {
            host: 0,
            place: "sink".into(),
            clock,
            results: UdpSinkResults {
                flows: vec![flow(0, 10, 180_000), flow(3, 20, 250_000)],
                owd_groups: vec![group(0, 180_000, 10), group(2, 250_000, 20)],
                ..Default::default()
            },
        };
        let k = |o, u| {
            Some(ClockOffset {
                offset_ns: o,
                uncertainty_ns: u,
                exchanges: 8,
            })
        };
        let mut sinks = [sink(k(50_000, 2_000))];
        let d = relate(&shares, &sources, &mut sinks);
        let near = |a: u64, b: u64| a.abs_diff(b) * 1000 <= b;
        assert_eq!(d.owd.count, 30);
        assert!(
            near(d.owd.min_ns, 100_000) && near(d.owd.max_ns, 200_000),
            "{d:?}"
        );
        assert!(near(d.per_client[0].p50_ns, 100_000), "{d:?}");
        assert!(near(d.per_client[1].p50_ns, 200_000), "{d:?}");
        assert_eq!(d.per_server[0].count, 30);
        let f = &sinks[0].results.flows;
        assert_eq!((f[0].owd.p50_ns, f[1].owd.p50_ns), (100_000, 200_000));
        let c = d.clocks.unwrap();
        assert_eq!(c.basis, "corrected");
        let pairs: Vec<(u32, i64, i64)> = c
            .pairs
            .iter()
            .map(|p| (p.client, p.correction_ns, p.uncertainty_ns))
            .collect();
        assert_eq!(pairs, [(0, 80_000, 3_000), (1, 50_000, 2_000)]);
        assert_eq!((c.correction_ns, c.uncertainty_ns), (80_000, 3_000));
        // Client host 0's clock known to ± 150 µs only: more than its flows' 100 µs
        // (withheld, with the sink's and the merged delays), less than host 1's 200 µs
        // (shown).
        let sources2 = [at(0, "gen1", Some((-30_000, 150_000))), at(1, "gen2", None)];
        let mut sinks = [sink(k(50_000, 2_000))];
        let d = relate(&shares, &sources2, &mut sinks);
        assert_eq!((d.owd.count, d.per_server[0].count), (0, 0));
        assert_eq!((d.per_client[0].count, d.per_client[1].count), (0, 20));
        let f = &sinks[0].results.flows;
        assert_eq!((f[0].owd.count, f[1].owd.p50_ns), (0, 200_000));
        let c = d.clocks.unwrap();
        assert_eq!(c.basis, "rtt-only");
        assert_eq!(
            (c.pairs[0].basis, c.pairs[1].basis),
            ("rtt-only", "corrected")
        );
        // The sink's clock known to ± 500 µs only, more than either pair's delay:
        // every delay withheld, the merged ones too.
        let mut sinks = [sink(k(50_000, 500_000))];
        let d = relate(&shares, &sources, &mut sinks);
        assert_eq!(d.owd.count, 0);
        assert_eq!(d.clocks.as_ref().unwrap().basis, "rtt-only");
        assert!(sinks[0].results.flows.iter().all(|f| f.owd.count == 0));
        // Every host on the controller's clock: nothing to relate, merged as measured.
        let local = [at(0, "a", None), at(1, "b", None)];
        let mut sinks = [sink(None)];
        let d = relate(&shares, &local, &mut sinks);
        assert!(d.clocks.is_none());
        assert!(near(d.owd.min_ns, 180_000) && near(d.owd.max_ns, 250_000));
    }
}
