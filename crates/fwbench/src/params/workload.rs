//! The kinds of traffic a trial can send (the `workload` axis).

use serde::Serialize;

/// The traffic of a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Seed 000's echo cycle.
    #[default]
    Echo,
    /// UDP at the maximum (or a given) rate.
    Flood,
    /// Paced UDP with per-packet timing.
    Flow,
    /// UDP echo, one probe at a time.
    Ping,
    /// RFC 2544 throughput search: flood trials at searched rates.
    Ndr,
    /// Degradation point search: flow trials at searched rule counts.
    Degrade,
    /// TCP sessions: connect, request, response, close (seed 003).
    Sessions,
    /// Bulk transfers, one per session (seed 003).
    Bulk,
    /// HTTP/1.1 downloads (seed 004).
    Http,
    /// Concurrent connection capacity: open and hold connections.
    Connections,
}

impl Workload {
    pub fn is_echo(&self) -> bool {
        *self == Workload::Echo
    }
    /// sessions, bulk, http, connections: TCP connections to the built-in server.
    pub fn is_conn(&self) -> bool {
        matches!(
            self,
            Workload::Sessions | Workload::Bulk | Workload::Http | Workload::Connections
        )
    }
}

crate::names::named!(Workload, "workload", {
    Echo => "echo",
    Flood => "flood",
    Flow => "flow",
    Ping => "ping",
    Ndr => "ndr",
    Degrade => "degrade",
    Sessions => "sessions",
    Bulk => "bulk",
    Http => "http",
    Connections => "connections",
});
