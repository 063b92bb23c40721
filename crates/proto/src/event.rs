//! Gateway events (issue 25): rule-set changes the gateway agent applies during the
//! traffic phase on a schedule, and the row it reports for every update.
//!
//! Owns: the plain data of a schedule ([`EventSpec`]: kind, K, method, when, how
//! often, the marker flow) and of its result ([`UpdateRow`]), with the schedule's
//! pure arithmetic (when update `i` is due) and its checks.
//! Must not: know any engine's syntax or read clocks (times are passed in).

use crate::param::Proto;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

pub use results::update::{EventPlace, MarkerFate, UpdateKind, UpdateMethod};

/// The flow an update acts on: its packets are matched by source address, protocol
/// and destination port. Its sink sees when the change took effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    pub src: IpAddr,
    pub proto: Proto,
    pub dport: u16,
}

/// One scheduled gateway event: `count` updates of `kind` (K = `k` rules or
/// elements each), the first `at_s` seconds after the traffic phase starts, then
/// one every `1 / rate` seconds.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventSpec {
    pub kind: UpdateKind,
    pub k: u32,
    pub method: UpdateMethod,
    /// Seconds after the start of the traffic phase of the first update.
    pub at_s: f64,
    /// Updates per second after the first (`None`: once).
    pub rate: Option<f64>,
    /// Updates in all (1 when `rate` is `None`).
    pub count: u32,
    /// The flow the first update acts on (`None`: fillers only).
    pub marker: Option<Marker>,
    /// Where its rules go in the chain (absent: at the head).
    #[serde(default, skip_serializing_if = "EventPlace::is_head")]
    pub place: EventPlace,
}

/// Most rules or elements one update may change (each is a tool call per rule).
pub const MAX_UPDATE_K: u32 = 100_000;
/// Most updates one event may schedule.
pub const MAX_UPDATES: u32 = 10_000;

impl EventSpec {
    /// Refuse a schedule that cannot run, naming what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.k == 0 || self.k > MAX_UPDATE_K {
            return Err(format!(
                "event {}: K = {} (expected 1 to {MAX_UPDATE_K})",
                self.kind.name(),
                self.k
            ));
        }
        if !(self.at_s.is_finite() && self.at_s >= 0.0) {
            return Err(format!("event time {} s: expected >= 0", self.at_s));
        }
        if self.count == 0 || self.count > MAX_UPDATES {
            return Err(format!(
                "{} updates: expected 1 to {MAX_UPDATES}",
                self.count
            ));
        }
        match self.rate {
            Some(r) if !(r.is_finite() && r > 0.0 && r <= 10_000.0) => Err(format!(
                "event rate {r}/s: expected more than 0, at most 10000"
            )),
            None if self.count != 1 => Err(format!(
                "{} updates need a rate (updates per second)",
                self.count
            )),
            _ => Ok(()),
        }
    }

    /// When update `i` (0-based) is due, in ns after the start of the traffic phase.
    pub fn due_ns(&self, i: u32) -> u64 {
        let gap = self.rate.map(|r| 1.0 / r).unwrap_or(0.0);
        ((self.at_s + f64::from(i) * gap) * 1e9) as u64
    }

    /// Seconds from the start of the traffic phase to the last update's due time.
    pub fn last_s(&self) -> f64 {
        self.due_ns(self.count.saturating_sub(1)) as f64 / 1e9
    }
}

/// What the gateway measured for one update.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateRow {
    /// Index of the update in its event (0-based), and of the event in the schedule.
    pub event: u32,
    pub index: u32,
    pub kind: UpdateKind,
    pub method: UpdateMethod,
    pub k: u32,
    /// Rules (or elements) installed before the update.
    pub installed: u64,
    /// CLOCK_REALTIME at the start of the commit (the clock of the traffic's send
    /// stamps), ns since the epoch.
    pub start_unix_ns: u64,
    /// Start to the tool's (or the last syscall's) return, ns (CLOCK_MONOTONIC).
    pub commit_ns: u64,
    /// From when the update was due to the start of its commit, ns: the updates
    /// before it still committing held it (0: on time; absent in rows of agents
    /// before it was measured). Wait plus commit is the update's latency as its
    /// requester sees it.
    #[serde(default)]
    pub wait_ns: u64,
    /// Tool or syscall calls the commit made.
    pub calls: u32,
    /// Share of one CPU the gateway's namespace spent (all CPUs, non-idle) during
    /// the commit, from /proc/stat (0 when too short to sample).
    #[serde(default)]
    pub cpu_busy: f64,
    /// Whether this update carried the marker flow's rule or element.
    pub marker: bool,
    /// The commit failed: why (the row still counts as scheduled).
    pub error: Option<String>,
    /// Where its rules went in the chain (absent: at the head).
    #[serde(default, skip_serializing_if = "EventPlace::is_head")]
    pub place: EventPlace,
    /// How much later than `start_unix_ns` the update may really have begun, ns: an
    /// expiry's instant is its marker element's add plus the timeout, and the kernel
    /// started that timeout somewhere within the add's call (0: exact).
    #[serde(default)]
    pub start_slack_ns: u64,
}

/// What the sink saw of one flow in fine time bins by *send* time (the packet's
/// intended send stamp, CLOCK_REALTIME): packets received, lost, one-way delay —
/// and the sequence numbers and stamps that date a change in the flow's fate.
/// Lost packets are placed at their interpolated send time between the received
/// packets around the gap; a late arrival takes its loss back.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowBins {
    pub width_ns: u64,
    /// Send time of the start of bin 0, ns since the epoch.
    pub origin_ns: u64,
    pub received: Vec<u32>,
    pub lost: Vec<u32>,
    /// Sum of the bin's one-way delays, µs (mean: divide by `received`).
    pub owd_sum_us: Vec<u64>,
    pub owd_max_us: Vec<u32>,
    /// First packet received: (sequence number, send stamp ns).
    pub first: Option<(u32, u64)>,
    /// Highest sequence number received, with its send stamp.
    pub highest: Option<(u32, u64)>,
    /// One-way delays of the first and the highest packet, µs (when the packet sent
    /// at a stamp reached the gateway: a queue delays it by that much).
    #[serde(default)]
    pub first_owd_us: u64,
    #[serde(default)]
    pub highest_owd_us: u64,
    /// The longest run of packets lost between two received ones (ignoring late
    /// arrivals): (last received seq before, its stamp, first received after, its
    /// stamp).
    pub longest_gap: Option<(u32, u64, u32, u64)>,
}

/// What a request–response client (echo, ping, sessions) records for gateway events:
/// its transactions in fine time bins, and where the marker stream comes from.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamEventsSpec {
    /// Width of the time bins, ns.
    pub bin_ns: u64,
    /// An extra marker stream from this address (ping: paced probes; sessions: one
    /// sequential stream of the smallest sessions); `None`: the client's first stream
    /// is the marker (echo's client 1).
    pub marker_source: Option<IpAddr>,
}

/// A request–response stream's transactions (echo cycles, pings, sessions) as its
/// client saw them, in bins of their *start* time (CLOCK_REALTIME): completed and
/// failed (lost, unsent, refused, timed out), their latency (round trip, or a
/// session's connection setup) — and the start stamps that date a change in the
/// stream's fate (the time to effect).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TxnBins {
    pub width_ns: u64,
    /// Start time of bin 0, ns since the epoch.
    pub origin_ns: u64,
    pub done: Vec<u32>,
    pub failed: Vec<u32>,
    /// Sum of the bin's latencies, µs (mean: divide by `done`).
    pub latency_sum_us: Vec<u64>,
    pub latency_max_us: Vec<u32>,
    /// The first completed transaction: (start ns, latency ns).
    pub first_done: Option<(u64, u64)>,
    /// The completed transaction that started last: (start ns, latency ns).
    pub last_done: Option<(u64, u64)>,
    /// Start of the first transaction that failed and started after `last_done` did
    /// (what a change that starts dropping the stream dropped first).
    pub failed_after_last: Option<u64>,
    /// Transactions that failed and started before `first_done` (a change that lets
    /// the stream through ended them).
    #[serde(default)]
    pub failed_before_first: u64,
}

/// A request–response client's transactions for gateway events: the marker stream's
/// and the background's (every other stream of the workload, merged).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TxnStreams {
    /// The marker stream's source address.
    pub marker_source: Option<IpAddr>,
    pub marker: TxnBins,
    pub background: TxnBins,
    /// Streams merged into `background` (echo clients, ping 1, session workers).
    pub background_streams: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> EventSpec {
        EventSpec {
            kind: UpdateKind::Add,
            k: 1,
            method: UpdateMethod::Batch,
            at_s: 1.0,
            rate: Some(4.0),
            count: 3,
            marker: None,
            place: EventPlace::Head,
        }
    }

    #[test]
    fn due_times_follow_the_rate() {
        let s = spec();
        assert_eq!(s.due_ns(0), 1_000_000_000);
        assert_eq!(s.due_ns(2), 1_500_000_000);
        assert_eq!(s.last_s(), 1.5);
        assert!(s.check().is_ok());
    }

    #[test]
    fn bad_schedules_are_named() {
        let mut s = spec();
        s.k = 0;
        assert!(s.check().unwrap_err().contains("K = 0"));
        let mut s = spec();
        s.rate = None;
        assert!(s.check().unwrap_err().contains("need a rate"));
        let mut s = spec();
        s.rate = Some(-1.0);
        assert!(s.check().unwrap_err().contains("rate -1"));
    }

    #[test]
    fn a_gateway_spec_with_events_round_trips() {
        let spec = crate::GatewaySpec {
            events: vec![EventSpec {
                marker: Some(Marker {
                    src: "198.18.0.2".parse().unwrap(),
                    proto: Proto::Udp,
                    dport: 5001,
                }),
                ..spec()
            }],
            ..Default::default()
        };
        let json = serde_json::to_string(&spec).unwrap();
        assert!(json.contains(r#""kind":"add""#), "{json}");
        assert_eq!(
            serde_json::from_str::<crate::GatewaySpec>(&json).unwrap(),
            spec
        );
        let none = serde_json::to_string(&crate::GatewaySpec::default()).unwrap();
        assert!(!none.contains("events"), "{none}");
    }

    #[test]
    fn names_parse_back() {
        for k in UpdateKind::ALL {
            assert_eq!(k.name().parse::<UpdateKind>().unwrap(), k);
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
        for m in UpdateMethod::ALL {
            assert_eq!(m.name().parse::<UpdateMethod>().unwrap(), m);
            assert_eq!(serde_json::to_value(m).unwrap(), m.name());
        }
        assert!("move"
            .parse::<UpdateKind>()
            .unwrap_err()
            .contains("expected one of: add, delete"));
    }
}
