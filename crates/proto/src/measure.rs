//! What a measurement point counts: frames and bytes, frame validation failures,
//! round-trip time summaries, interface counters.
//!
//! Owns: these value types and their merge arithmetic, shared by every workload's
//! results. The bottom layer of the crate, beside `param`.
//! Must not: import any other module of this crate, or know which workload or role
//! fills them in.

use serde::{Deserialize, Serialize};

/// `add_up!(into, from; a, b, …)`: the counters `a`, `b`, … of `from` added to those
/// of `into`, field by field — several threads, shards or hosts of a role as one.
#[macro_export]
macro_rules! add_up {
    ($into:expr, $from:expr; $($field:ident),+ $(,)?) => {
        $($into.$field += $from.$field;)+
    };
}

/// Packets/frames and bytes seen at one measurement point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counter {
    pub frames: u64,
    pub bytes: u64,
}

impl Counter {
    pub fn add(&mut self, bytes: usize) {
        self.frames += 1;
        self.bytes += bytes as u64;
    }
    pub fn merge(&mut self, o: &Counter) {
        self.frames += o.frames;
        self.bytes += o.bytes;
    }
}

/// Frame validation failures at a receiving measurement point (MP2 or MP4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Validation {
    /// Header unreadable (truncated, bad magic or version).
    pub malformed: u64,
    pub wrong_client: u64,
    pub wrong_size: u64,
    /// Sequence numbers skipped (missing frames), counted per missing frame.
    pub gaps: u64,
    pub duplicates: u64,
    /// Frames older than the newest seen, not seen before.
    pub reordered: u64,
}

impl Validation {
    pub fn total(&self) -> u64 {
        self.malformed
            + self.wrong_client
            + self.wrong_size
            + self.gaps
            + self.duplicates
            + self.reordered
    }
    pub fn merge(&mut self, o: &Validation) {
        crate::add_up!(self, o; malformed, wrong_client, wrong_size, gaps, duplicates, reordered);
    }
}

/// Round-trip time distribution, nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RttSummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// Packet counters of one interface over a trial (differences of /sys/class/net/*/statistics).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IfCounters {
    pub name: String,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub rx_dropped: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub tx_dropped: u64,
}

/// A role's cumulative counters while it runs, for live per-interval output: the
/// controller asks each traffic role at every interval boundary and prints differences.
/// What is counted depends on the role: a packet sink counts datagrams received, a
/// packet source datagrams sent, an echo client echoes received (with their RTTs), a
/// session client sessions finished (connections held, for `connections`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Tally {
    /// Nanoseconds since the role's `Start`, on the agent's monotonic clock.
    pub t_ns: u64,
    pub count: u64,
    /// Payload bytes of `count` (0 when the role does not count bytes).
    #[serde(default)]
    pub bytes: u64,
    /// Echo clients: the sum of the RTTs of `count` echoes, ns.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rtt_sum_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each counter of the other adds to its own (distinct values: a field added to
    /// another's, or left out, shows).
    #[test]
    fn validations_merge_counter_by_counter() {
        let mut b = Validation::default();
        (b.malformed, b.wrong_client, b.wrong_size) = (1, 10, 100);
        (b.gaps, b.duplicates, b.reordered) = (1_000, 10_000, 100_000);
        let mut a = b;
        a.merge(&b);
        a.merge(&b);
        let each = [
            a.malformed,
            a.wrong_client,
            a.wrong_size,
            a.gaps,
            a.duplicates,
            a.reordered,
        ];
        assert_eq!(each, [3, 30, 300, 3_000, 30_000, 300_000]);
        assert_eq!(a.total(), 333_333);
    }
}
