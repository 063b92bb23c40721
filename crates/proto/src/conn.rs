//! Connection workloads (seeds 003 and 004): TCP sessions, bulk transfers, HTTP
//! downloads, held connections, and the gateway's userspace relay (proxy mode).
//!
//! Wire protocol of the built-in server (one port serves all of it; the first four
//! bytes of a connection decide):
//! * `FWBS` session: the client sends a 16-byte header — `b"FWBS"`, request length
//!   (u32 BE, header included, ≥ 16), response length (u64 BE) — then `request − 16`
//!   pattern bytes. The server answers with `response` pattern bytes and closes first
//!   (FIN); the client reads to end of stream, then closes (FIN, never RST).
//! * `FWBH` hold: same header; the server sends nothing and waits for the client's FIN.
//! * `GET ` HTTP/1.1: `GET /bytes/<N>` returns N pattern bytes (Content-Length); other
//!   paths 404. Keep-alive unless `Connection: close`. The same URL works against the
//!   external nginx (which serves files named `bytes/<N>` with the same pattern).
//!
//! Pattern bytes: byte `i` of any stream (counted from the first body byte) is
//! [`pattern_byte`]`(i)`, so any lost, duplicated or reordered byte is detected.
//!
//! Owns: that wire protocol's constants and pattern, and the specs and results of the
//! TCP server, session client and proxy.
//! Must not: import any other module of this crate (the role enums and messages that
//! carry these types sit above it).

use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// Magic of a request/response session.
pub const SESSION_MAGIC: &[u8; 4] = b"FWBS";
/// Magic of a held connection.
pub const HOLD_MAGIC: &[u8; 4] = b"FWBH";
/// Length of the session header.
pub const SESSION_HEADER: u32 = 16;
/// Pattern period: a prime, so a shifted stream never lines up with itself.
pub const PATTERN_PERIOD: usize = 251;

/// Byte `i` of every generated body.
pub fn pattern_byte(i: u64) -> u8 {
    let k = (i % PATTERN_PERIOD as u64) as u32;
    (k.wrapping_mul(97).wrapping_add(13) & 0xff) as u8
}

/// What each session of the client does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnMode {
    /// connect, request, response, close (session setup + teardown rate/latency).
    Sessions,
    /// connect, small request, `response` bytes down, close (goodput).
    Bulk,
    /// `GET /bytes/<response>` over HTTP/1.1, a new connection per download.
    Http,
    /// Open connections and hold them: concurrent connection capacity.
    Hold,
}

/// The built-in TCP server (FWBS/FWBH/HTTP on one port), or an external HTTP server.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcpServerSpec {
    pub listen: IpAddr,
    pub port: u16,
    /// listen(2) backlog.
    pub backlog: u32,
    /// `Some("nginx")`: run that program instead of the built-in server, serving
    /// `bytes/<N>` files for every size in `objects`.
    pub external: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<u64>,
}

/// The connection client.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionClientSpec {
    pub mode: ConnMode,
    pub server: IpAddr,
    pub port: u16,
    /// Source address to bind (None: the kernel picks).
    pub source: Option<IpAddr>,
    /// Several source addresses, used round-robin (connection by connection in hold
    /// mode, worker by worker otherwise); each gives its own ~64 000 source ports.
    /// Empty: `source` alone. Absent from older specs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<IpAddr>,
    /// Workers running sessions back to back (1 = sequential).
    pub parallel: u32,
    /// Sessions in total over all workers (None: until Stop).
    pub count: Option<u64>,
    /// Bytes the client sends per session (sessions: ≥ 16, header included).
    pub request: u32,
    /// Bytes the server returns per session (bulk/http: the object size).
    pub response: u64,
    /// Connect and per-read timeout, ms.
    pub timeout_ms: u32,
    /// Bulk: zero-byte sessions run sequentially before the transfers, to split the
    /// per-session overhead out of the transfer time (seed 003 §9).
    #[serde(default)]
    pub overhead_sessions: u32,
    /// Hold: connections to open at most.
    #[serde(default)]
    pub hold_limit: u32,
    /// Check every body byte against the pattern.
    pub verify: bool,
    /// `Some("curl")`: run that program per download (http mode) instead of the
    /// built-in client.
    pub external: Option<String>,
    /// Gateway events: record the transactions in fine time bins (absent: none).
    pub events: Option<crate::event::StreamEventsSpec>,
}

impl SessionClientSpec {
    /// The source addresses to bind, round-robin: `sources`, or `[source]`.
    pub fn source_list(&self) -> Vec<Option<IpAddr>> {
        if self.sources.is_empty() {
            vec![self.source]
        } else {
            self.sources.iter().copied().map(Some).collect()
        }
    }
}

/// Distribution of durations, ns (HdrHistogram, 3 significant digits).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Durations {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    /// Sample standard deviation (0 below two values).
    pub sd_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// Why the hold mode stopped opening connections.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldResults {
    /// Connections established and still open when opening stopped.
    pub reached: u64,
    pub limit: u32,
    /// Connections still open (not reset) at Stop.
    pub alive_at_stop: u64,
    /// What stopped it: "limit", or a description of the failing resource.
    pub limiter: String,
    /// errno of the failure, if one stopped it.
    pub errno: Option<i32>,
    /// Time to open them all, ms.
    pub open_ms: f64,
    /// The client process's soft RLIMIT_NOFILE before it raised it, and in force after
    /// (agents of older builds do not send them).
    pub nofile_before: Option<u64>,
    pub nofile: Option<u64>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionClientResults {
    pub mode: ConnMode,
    pub parallel: u32,
    /// Sessions completed without error.
    pub sessions: u64,
    pub failed: u64,
    /// Error messages with their counts (at most 8 distinct).
    pub errors: Vec<(String, u64)>,
    /// From the first connect to the end of the last session, ns.
    pub elapsed_ns: u64,
    /// Response body bytes received (verified when `verify`).
    pub bytes: u64,
    /// Sessions whose body did not match the pattern (or had the wrong length).
    pub corrupt: u64,
    /// Whole session: connect start to the close after end of stream.
    pub session: Durations,
    /// connect(2) completion.
    pub connect: Durations,
    /// Time to first response byte, from connect start.
    pub ttfb: Durations,
    /// Time to last response byte, from connect start.
    pub ttlb: Durations,
    /// Bulk: the zero-byte sessions measured first.
    pub overhead: Option<Durations>,
    /// Durations of the first sessions in order, µs (at most 10 000): the distribution
    /// and the A/B test use them.
    pub session_us: Vec<u32>,
    pub hold: Option<HoldResults>,
    /// The external client used, if any (e.g. "curl 7.88.1").
    pub external: Option<String>,
    /// Gateway events: the transactions in fine time bins (when asked for).
    pub events: Option<Box<crate::event::TxnStreams>>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TcpServerResults {
    pub accepted: u64,
    /// Sessions answered in full (FWBS) and HTTP responses sent.
    pub sessions: u64,
    pub http_requests: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Requests whose bytes did not match the pattern or protocol.
    pub bad_requests: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    /// Most connections open at once.
    pub max_open: u64,
    /// accept(2) failures (e.g. EMFILE), which cap concurrent connections.
    pub accept_errors: u64,
    pub external: Option<String>,
}

/// The gateway's userspace TCP relay (seed 003's application proxy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxySpec {
    pub listen: IpAddr,
    pub port: u16,
    pub upstream: IpAddr,
    pub upstream_port: u16,
    /// Bytes per read/write (the study's `shovel`), ≥ 1.
    pub buffer: u32,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProxyResults {
    pub connections: u64,
    pub upstream_failures: u64,
    /// Client → server and server → client bytes relayed.
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub max_open: u64,
    pub errors: u64,
    pub first_error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_has_the_prime_period_and_no_shorter_one() {
        for i in 0..1000u64 {
            assert_eq!(pattern_byte(i), pattern_byte(i + PATTERN_PERIOD as u64));
        }
        for shift in 1..PATTERN_PERIOD as u64 {
            assert!(
                (0..PATTERN_PERIOD as u64).any(|i| pattern_byte(i) != pattern_byte(i + shift)),
                "shift {shift} lines up"
            );
        }
    }
}
