//! Accounting shared by the packet sources (UDP/AF_PACKET in `udp`, AF_XDP in
//! `xsk::source`) and the packet sinks (UDP sockets in `udp`, AF_XDP in `xsk::sink`):
//! what one thread counted, and how the threads' counts become one result.
//!
//! Owns: per-thread tallies ([`SourceTally`], [`SinkTally`]), the per-datagram sink
//! accounting (probe, flow, size histogram), joining worker threads, merging.
//! Must not: do I/O or read clocks (times are passed in).

use crate::hist::RttHistogram;
use crate::probe::Probe;
use crate::udp::FlowState;
use crate::TrafficError;
use proto::{count_size, Counter, SizeCount, UdpSinkResults, UdpSourceResults};
use std::thread::JoinHandle;

/// Join every worker: their results in order, and the first failure (a thread's
/// error, or `what` when one panicked).
pub(crate) fn join_all<T>(
    workers: Vec<JoinHandle<Result<T, TrafficError>>>,
    what: &str,
) -> (Vec<T>, Option<TrafficError>) {
    let mut out = Vec::new();
    let mut first_err = None;
    for w in workers {
        match w.join() {
            Ok(Ok(t)) => out.push(t),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(TrafficError::BadSpec(format!("{what} panicked")));
            }
        }
    }
    (out, first_err)
}

/// What one sender thread counted.
#[derive(Default)]
pub(crate) struct SourceTally {
    pub sent: Counter,
    pub per_flow: Vec<(u16, u64)>,
    pub scheduled: u64,
    pub max_lag_ns: u64,
    pub send_errors: u64,
    /// CLOCK_MONOTONIC when the thread's last send returned (0: it sent nothing).
    pub ended_ns: u64,
    /// Packets per payload size (a size mix only).
    pub sizes: Vec<SizeCount>,
}

/// The threads' tallies as one source result: `flows` flows, started at `t0`
/// (0: never started), stopped at `stopped_ns`. The sending time ends when the last
/// thread's last send returned: a send in progress at the stop (a batch takes
/// milliseconds through a slow gateway) is counted, so its time is too.
pub(crate) fn merge_sources<'a>(
    flows: u32,
    t0: u64,
    stopped_ns: u64,
    tallies: impl IntoIterator<Item = &'a SourceTally>,
) -> UdpSourceResults {
    let mut r = UdpSourceResults {
        sent_per_flow: vec![0; flows as usize],
        ..Default::default()
    };
    let mut ended_ns = stopped_ns;
    for t in tallies {
        r.sent.merge(&t.sent);
        r.scheduled += t.scheduled;
        r.max_lag_ns = r.max_lag_ns.max(t.max_lag_ns);
        r.send_errors += t.send_errors;
        ended_ns = ended_ns.max(t.ended_ns);
        for &(f, n) in &t.per_flow {
            r.sent_per_flow[f as usize] = n;
        }
        for c in &t.sizes {
            count_size(&mut r.sent_sizes, c.payload, c.packets);
        }
    }
    r.elapsed_ns = if t0 == 0 { 0 } else { ended_ns - t0 };
    r
}

/// What one sink thread counted.
pub(crate) struct SinkTally {
    pub flows: Vec<FlowState>,
    pub received: Counter,
    pub unstamped: u64,
    /// CLOCK_MONOTONIC of the first and last batch with packets (0: none yet).
    pub first_ns: u64,
    pub last_ns: u64,
    pub sizes: Vec<SizeCount>,
}

impl SinkTally {
    pub fn new(flows: u32, bin_ns: u64) -> SinkTally {
        SinkTally {
            flows: (0..flows).map(|f| FlowState::new(f, bin_ns)).collect(),
            received: Counter::default(),
            unstamped: 0,
            first_ns: 0,
            last_ns: 0,
            sizes: Vec::new(),
        }
    }

    /// One datagram's UDP payload, received at `rx_ns` (CLOCK_REALTIME).
    pub fn on_datagram(&mut self, payload: &[u8], rx_ns: u64) {
        self.received.add(payload.len());
        count_size(&mut self.sizes, payload.len() as u32, 1);
        match Probe::parse(payload) {
            Some(p) if (p.flow as usize) < self.flows.len() => {
                self.flows[p.flow as usize].on_packet(p.seq, p.tx_ns, rx_ns, payload.len())
            }
            _ => self.unstamped += 1,
        }
    }

    /// A batch of packets arrived at `now` (CLOCK_MONOTONIC).
    pub fn saw_batch(&mut self, now: u64) {
        if self.first_ns == 0 {
            self.first_ns = now;
        }
        self.last_ns = now;
    }
}

/// The sink threads' tallies as one result (the `kernel` and `interfaces` fields are
/// the caller's). A flow arrives on one socket (SO_REUSEPORT and RSS hash its addresses
/// and ports), so its time bins are that thread's.
pub(crate) fn merge_sinks(tallies: Vec<SinkTally>) -> UdpSinkResults {
    let mut r = UdpSinkResults::default();
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut merged: Vec<FlowState> = Vec::new();
    for t in tallies {
        r.received.merge(&t.received);
        r.unstamped += t.unstamped;
        for c in &t.sizes {
            count_size(&mut r.sizes, c.payload, c.packets);
        }
        if t.received.frames > 0 {
            first = first.min(t.first_ns);
            last = last.max(t.last_ns);
        }
        if merged.is_empty() {
            merged = t.flows;
        } else {
            for (m, f) in merged.iter_mut().zip(t.flows) {
                merge_flow(m, f);
            }
        }
    }
    let mut owd = RttHistogram::new();
    for f in &merged {
        owd.merge(&f.owd);
    }
    r.owd = owd.summary();
    r.flows = merged
        .into_iter()
        .filter(|f| f.rx.received > 0 || f.rx.duplicates > 0)
        .map(FlowState::finish)
        .collect();
    r.active_ns = last.saturating_sub(first.min(last));
    r
}

fn merge_flow(m: &mut FlowState, f: FlowState) {
    if m.rx.received == 0 && f.rx.received > 0 {
        m.bins = f.bins;
    }
    m.rx.received += f.rx.received;
    m.rx.bytes += f.rx.bytes;
    m.rx.duplicates += f.rx.duplicates;
    m.rx.reordered += f.rx.reordered;
    m.rx.jitter_ns = m.rx.jitter_ns.max(f.rx.jitter_ns);
    m.owd.merge(&f.owd);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_tallies_merge_counts_sizes_and_flows() {
        let mut a = SinkTally::new(2, 0);
        let mut b = SinkTally::new(2, 0);
        let mut buf = [0u8; 64];
        for (to_a, flow, seq, len) in [
            (true, 0u16, 0u32, 18usize),
            (true, 0, 1, 64),
            (false, 1, 0, 18),
            (false, 1, 0, 18),
        ] {
            let t = if to_a { &mut a } else { &mut b };
            Probe {
                flow,
                seq,
                tx_ns: Some(1),
            }
            .emit(&mut buf[..len]);
            t.on_datagram(&buf[..len], 10);
            t.saw_batch(5);
        }
        a.on_datagram(&buf[..4], 10);
        let r = merge_sinks(vec![a, b]);
        assert_eq!(r.received.frames, 5);
        assert_eq!(r.unstamped, 1);
        assert_eq!(
            r.sizes,
            [
                SizeCount {
                    payload: 4,
                    packets: 1
                },
                SizeCount {
                    payload: 18,
                    packets: 3
                },
                SizeCount {
                    payload: 64,
                    packets: 1
                },
            ]
        );
        let f: Vec<(u32, u64, u64)> = r
            .flows
            .iter()
            .map(|f| (f.flow, f.received, f.duplicates))
            .collect();
        assert_eq!(f, [(0, 2, 0), (1, 1, 1)]);
    }

    #[test]
    fn source_tallies_merge() {
        let mut a = SourceTally {
            per_flow: vec![(0, 3)],
            ended_ns: 150,
            ..Default::default()
        };
        a.sent.add(18);
        count_size(&mut a.sizes, 18, 1);
        let mut b = SourceTally {
            per_flow: vec![(1, 4)],
            ended_ns: 90,
            ..Default::default()
        };
        b.sent.add(1454);
        count_size(&mut b.sizes, 18, 2);
        let r = merge_sources(2, 100, 120, [&a, &b]);
        assert_eq!(r.sent_per_flow, [3, 4]);
        assert_eq!(r.elapsed_ns, 50);
        assert_eq!(r.sent.bytes, 1472);
        assert_eq!(
            r.sent_sizes,
            [SizeCount {
                payload: 18,
                packets: 3
            }]
        );
    }
}
