//! Live intervals as people and programs read them: one line per interval (as iperf3
//! prints them) or, with `--json-stream`, one JSON object per interval and one at the
//! end (JSON lines).
//!
//! An interval is the difference of two successive [`Tick`]s. Its time range and rates
//! come from the counting role's own clock (the agent's time since its start): the
//! sink for packet workloads (the source when there is none), the client otherwise.
//! The last interval ends when the traffic phase ends, before the roles are stopped;
//! what is counted after that (a sink drains packets still in flight for up to
//! 500 ms) is in the final total only, and the end object says how much that was
//! (`after_last_interval` = total − sum of the intervals).

use crate::exec::live::Tick;
use crate::outcome::Outcome;
use crate::params::workload::TrialKind;
use crate::workloads::Live;
use proto::Tally;
use serde::Serialize;
use serde_json::{json, Value};

/// One interval's numbers.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    pub start_s: f64,
    pub end_s: f64,
    /// The traffic phase's last interval (usually shorter).
    pub last: bool,
    /// packets (received; sent when nothing receives), echoes, sessions or connections.
    pub unit: &'static str,
    pub count: u64,
    pub bytes: u64,
    pub per_s: f64,
    pub bits_per_s: f64,
    /// Packet workloads: sent in the interval, and sent − received (packets in flight
    /// at a boundary move between neighbouring intervals, so it can be negative).
    pub sent: Option<u64>,
    pub lost: Option<i64>,
    pub loss_ratio: Option<f64>,
    /// Echo: mean round-trip time of the interval's echoes, µs.
    pub rtt_mean_us: Option<f64>,
}

/// Turns ticks into intervals.
pub struct Intervals {
    /// What the lines count, and where (the kind's [`crate::workloads::Profile::live`]).
    live: Live,
    prev: Option<Tick>,
    pub done: Vec<Interval>,
}

fn role<'a>(t: &'a Tick, name: &str) -> Option<&'a Tally> {
    t.roles.iter().find(|(r, _)| *r == name).map(|(_, t)| t)
}

impl Intervals {
    pub fn new(kind: &TrialKind) -> Intervals {
        Intervals {
            live: crate::workloads::traffic(kind).profile().live,
            prev: None,
            done: Vec::new(),
        }
    }

    fn unit(&self) -> &'static str {
        self.live.unit
    }

    fn packets(&self) -> bool {
        self.live.at_sink
    }

    /// The counting role of a tick: the sink for packet workloads (the source without
    /// one), the client otherwise.
    fn counting(&self, t: &Tick) -> Tally {
        let r = if self.packets() {
            role(t, "server").or_else(|| role(t, "client"))
        } else {
            role(t, "client")
        };
        r.copied().unwrap_or_default()
    }

    /// The interval that ends at this tick (none for a last tick right on a boundary).
    pub fn tick(&mut self, t: &Tick) -> Option<Interval> {
        let zero = Tick {
            t_s: 0.0,
            last: false,
            roles: vec![],
        };
        let prev = self.prev.replace(t.clone()).unwrap_or(zero);
        let (a, b) = (self.counting(&prev), self.counting(t));
        let dt_ns = b.t_ns.saturating_sub(a.t_ns);
        if t.last && (dt_ns < 1_000_000 && b.count == a.count) {
            return None;
        }
        let dt = dt_ns as f64 / 1e9;
        let count = b.count.saturating_sub(a.count);
        let bytes = b.bytes.saturating_sub(a.bytes);
        let rate = |x: f64| if dt > 0.0 { x / dt } else { 0.0 };
        let (mut sent, mut lost, mut loss_ratio) = (None, None, None);
        if self.packets() && role(t, "server").is_some() {
            let c = |x: &Tick| role(x, "client").map(|c| c.count).unwrap_or(0);
            let s = c(t).saturating_sub(c(&prev));
            let l = s as i64 - count as i64;
            sent = Some(s);
            lost = Some(l);
            loss_ratio = (s > 0).then(|| l.max(0) as f64 / s as f64);
        }
        let rtt_mean_us = (self.live.rtt && count > 0)
            .then(|| b.rtt_sum_ns.saturating_sub(a.rtt_sum_ns) as f64 / count as f64 / 1e3);
        let i = Interval {
            start_s: a.t_ns as f64 / 1e9,
            end_s: b.t_ns as f64 / 1e9,
            last: t.last,
            unit: self.unit(),
            count,
            bytes,
            per_s: rate(count as f64),
            bits_per_s: rate(bytes as f64 * 8.0),
            sent,
            lost,
            loss_ratio,
            rtt_mean_us,
        };
        self.done.push(i.clone());
        Some(i)
    }

    /// The trial's own total of what the intervals count (packets received — or sent
    /// without a sink —, echoes received, sessions finished, connections opened);
    /// `None` where the result has no such count.
    pub fn total(&self, o: &Outcome) -> Option<u64> {
        o.figures.as_ref()?.summary().live_total()
    }

    /// The end object of `--json-stream`: the trial (as `--json` has it) and how the
    /// intervals add up to its total.
    pub fn end_json(&self, trial: Value, o: &Outcome) -> Value {
        let sum: u64 = self.done.iter().map(|i| i.count).sum();
        let total = self.total(o);
        json!({
            "type": "end",
            "intervals": self.done.len(),
            "unit": self.unit(),
            "interval_sum": sum,
            "total": total,
            "after_last_interval": total.map(|t| t as i64 - sum as i64),
            "trial": trial,
        })
    }
}

impl Intervals {
    /// The text summary line under the intervals.
    pub fn end_text(&self, o: &Outcome) -> String {
        let sum: u64 = self.done.iter().map(|i| i.count).sum();
        let end = self.done.last().map(|i| i.end_s).unwrap_or(0.0);
        let mut s = format!(
            "[{:6.2}-{:6.2} s]  {sum:>9} {} in {} interval(s)",
            0.0,
            end,
            self.unit(),
            self.done.len()
        );
        if let Some(t) = self.total(o) {
            s.push_str(&format!(
                "; trial total {t} ({} counted after the last interval)",
                t as i64 - sum as i64
            ));
        }
        s
    }
}

impl Interval {
    /// `{"type": "interval", …}`.
    pub fn json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["type"] = "interval".into();
        v
    }

    /// One line, iperf3-like: `[ 0.00- 1.00 s]  19998 packets  360 kB  20.0 k/s  2.88 Mb/s  sent 20000  lost 2 (0.01 %)`.
    pub fn text(&self) -> String {
        let mut s = format!(
            "[{:6.2}-{:6.2} s]  {:>9} {}",
            self.start_s, self.end_s, self.count, self.unit
        );
        if self.bytes > 0 {
            s.push_str(&format!("  {:>9}", bytes(self.bytes)));
        }
        s.push_str(&format!("  {:>9}/s", si(self.per_s)));
        if self.bytes > 0 {
            s.push_str(&format!("  {:>9}b/s", si(self.bits_per_s)));
        }
        if let (Some(sent), Some(lost)) = (self.sent, self.lost) {
            s.push_str(&format!("  sent {sent}  lost {lost}"));
            if let Some(r) = self.loss_ratio {
                s.push_str(&format!(" ({:.2} %)", r * 100.0));
            }
        }
        if let Some(r) = self.rtt_mean_us {
            s.push_str(&format!("  RTT mean {r:.1} µs"));
        }
        if self.last {
            s.push_str("  (end)");
        }
        s
    }
}

fn si(v: f64) -> String {
    let (d, p) = if v >= 1e9 {
        (1e9, " G")
    } else if v >= 1e6 {
        (1e6, " M")
    } else if v >= 1e3 {
        (1e3, " k")
    } else {
        (1.0, " ")
    };
    format!("{:.2}{p}", v / d)
}

fn bytes(b: u64) -> String {
    format!("{}B", si(b as f64))
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
