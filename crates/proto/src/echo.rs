//! Echo workload (seed 000): the server and client specs and what each side measured.
//!
//! Owns: the echo role specs and results.
//! Must not: import the role enums or messages (`role`, `msg`) that carry these types.

use crate::measure::{Counter, RttSummary, Validation};
use crate::param::{FrameSize, Proto, ServerMode};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// Server side of the echo workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EchoServerSpec {
    pub proto: Proto,
    pub mode: ServerMode,
    pub listen: IpAddr,
    /// TCP/SCTP: the listening port. UDP: client `i` (1-based) talks to `port + i - 1`.
    pub port: u16,
    pub clients: u32,
    pub max_frame: u32,
    /// An echo not sent within this many ms counts as unsent (MP3).
    pub timeout_ms: u32,
}

/// Client side of the echo workload: `sources.len()` clients, one thread each.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EchoClientSpec {
    pub proto: Proto,
    /// Source address of client `i` is `sources[i - 1]`.
    pub sources: Vec<IpAddr>,
    pub server: IpAddr,
    pub port: u16,
    pub frame: FrameSize,
    /// Seed of the frame-size PRNG; client `i` derives its own stream from it.
    pub seed: u64,
    /// A send not completed within this many ms counts as unsent; a UDP reply not
    /// received within it counts as lost.
    pub timeout_ms: u32,
    /// Gateway events: record the transactions in fine time bins (absent: none).
    pub events: Option<crate::event::StreamEventsSpec>,
}

/// One client connection as the client sees it (MP1 and MP4).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EchoClientStats {
    /// 1-based client number.
    pub client: u32,
    pub source: String,
    pub mp1: Counter,
    pub mp4: Counter,
    pub unsent: u64,
    /// UDP: echoes not received within the timeout; TCP/SCTP: an echo still missing,
    /// overdue, when the trial ended (a stalled connection).
    pub lost: u64,
    pub validation: Validation,
    pub rtt: RttSummary,
    /// Time this client spent cycling, ns.
    pub elapsed_ns: u64,
    /// Why this client stopped early, if it did (e.g. connection reset).
    pub error: Option<String>,
}

/// One client connection as the server sees it (MP2 and MP3).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EchoServerStats {
    /// Client number as learned from the frames (0 if none arrived).
    pub client: u32,
    pub mp2: Counter,
    pub mp3: Counter,
    pub unsent: u64,
    pub validation: Validation,
    pub error: Option<String>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EchoClientResults {
    pub clients: Vec<EchoClientStats>,
    /// Merged over all clients.
    pub rtt: RttSummary,
    /// Wall time between Start and Stop as the client agent measured it, ns.
    pub elapsed_ns: u64,
    /// Gateway events: the transactions in fine time bins (when asked for).
    pub events: Option<Box<crate::event::TxnStreams>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EchoServerResults {
    pub clients: Vec<EchoServerStats>,
}
