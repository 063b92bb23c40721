//! Control messages, both directions, and the results they carry.

use crate::spec::RoleSpec;
use serde::{Deserialize, Serialize};

/// Controller → agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToAgent {
    Hello {
        version: u32,
    },
    Setup(RoleSpec),
    Start,
    /// While running: how far along is the measurement? (adaptive trial length)
    Poll,
    Stop,
    Teardown,
}

/// Agent → controller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromAgent {
    Hello {
        version: u32,
        agent: AgentInfo,
    },
    Ready,
    Started,
    /// Answer to `Poll`: what the role has counted so far (sink: datagrams received;
    /// echo client: echoes received; session client: sessions finished; others: 0).
    Progress {
        count: u64,
        /// The role has finished its work on its own (a session client with a count).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        done: bool,
    },
    Results {
        results: RoleResults,
        /// Metrics the agent sampled while traffic ran (≥ 5 Hz).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        samples: Vec<MetricSample>,
    },
    /// A failure, typed, with the full message; the agent stays in its phase.
    Error(AgentError),
    /// Teardown finished: everything the agent set up is undone.
    Done,
}

impl ToAgent {
    pub fn name(&self) -> &'static str {
        match self {
            ToAgent::Hello { .. } => "hello",
            ToAgent::Setup(_) => "setup",
            ToAgent::Start => "start",
            ToAgent::Poll => "poll",
            ToAgent::Stop => "stop",
            ToAgent::Teardown => "teardown",
        }
    }
}

impl FromAgent {
    pub fn name(&self) -> &'static str {
        match self {
            FromAgent::Hello { .. } => "hello",
            FromAgent::Ready => "ready",
            FromAgent::Started => "started",
            FromAgent::Progress { .. } => "progress",
            FromAgent::Results { .. } => "results",
            FromAgent::Error(_) => "error",
            FromAgent::Done => "done",
        }
    }
}

/// One sampled metric value, `t_s` seconds after the traffic started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSample {
    pub t_s: f64,
    /// e.g. `cpu1.softirq` (% of CPU 1), `ctxt` (context switches/s), `mem.used_kib`,
    /// `if.g0.rx_pps`, `if.g0.rx_dropped_ps`.
    pub metric: String,
    pub value: f64,
}

/// Who and where the agent is: recorded with every trial.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgentInfo {
    pub fwbench_version: String,
    pub pid: u32,
    pub hostname: String,
    pub kernel: String,
    /// CPUs this agent may run on (sched_getaffinity), e.g. "0" or "0-1".
    pub cpus: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The setup asks for something this host lacks (e.g. SCTP): the trial is
    /// recorded as unavailable, not failed.
    Unavailable,
    /// The setup is invalid.
    BadSetup,
    /// A message arrived that the current phase does not allow.
    Protocol,
    /// A system call or child process failed.
    Io,
    /// A bug in fwbench.
    Internal,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentError {
    pub kind: ErrorKind,
    pub message: String,
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
        self.malformed += o.malformed;
        self.wrong_client += o.wrong_client;
        self.wrong_size += o.wrong_size;
        self.gaps += o.gaps;
        self.duplicates += o.duplicates;
        self.reordered += o.reordered;
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

/// One client connection as the client sees it (MP1 and MP4).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EchoClientStats {
    /// 1-based client number.
    pub client: u32,
    pub source: String,
    pub mp1: Counter,
    pub mp4: Counter,
    pub unsent: u64,
    /// UDP only: echoes not received within the timeout.
    pub lost: u64,
    pub validation: Validation,
    pub rtt: RttSummary,
    /// Time this client spent cycling, ns.
    pub elapsed_ns: u64,
    /// Why this client stopped early, if it did (e.g. connection reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One client connection as the server sees it (MP2 and MP3).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EchoServerStats {
    /// Client number as learned from the frames (0 if none arrived).
    pub client: u32,
    pub mp2: Counter,
    pub mp3: Counter,
    pub unsent: u64,
    pub validation: Validation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EchoClientResults {
    pub clients: Vec<EchoClientStats>,
    /// Merged over all clients.
    pub rtt: RttSummary,
    /// Wall time between Start and Stop as the client agent measured it, ns.
    pub elapsed_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EchoServerResults {
    pub clients: Vec<EchoServerStats>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GatewayResults {
    /// sysctl values in force during the trial.
    pub sysctls: Vec<(String, String)>,
    /// Rule set figures: engine, rules, elements, install_ms, remove_ms, verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firewall: Option<serde_json::Value>,
    /// Interface counters of the gateway over the trial (Start to Stop).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<IfCounters>,
    /// Proxy mode: what the relay did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<crate::conn::ProxyResults>,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum RoleResults {
    EchoClient(EchoClientResults),
    EchoServer(EchoServerResults),
    Gateway(GatewayResults),
    UdpSource(crate::packet::UdpSourceResults),
    UdpSink(crate::packet::UdpSinkResults),
    Ping(crate::packet::PingResults),
    Reflector(crate::packet::ReflectorResults),
    TcpServer(crate::conn::TcpServerResults),
    SessionClient(Box<crate::conn::SessionClientResults>),
}
