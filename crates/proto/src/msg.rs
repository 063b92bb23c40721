//! Control messages, both directions: `ToAgent`, `FromAgent`, and the agent's identity,
//! metric samples and typed errors they carry.
//!
//! Owns: the message enums and their serde tag (`type`). The top layer of the
//! message types; only `codec` users and `phase` look at it.
//! Must not: define workload specs or results (they live in the modules below), or
//! be imported by them.

use crate::measure::Tally;
use crate::role::{RoleResults, RoleSpec};
use serde::{Deserialize, Serialize};

/// A frame controller → agent: a message and its request id. On the wire the id is
/// one more field beside the message's `type` (`{"id":3,"type":"setup",…}`); an
/// absent id reads as 0 (a peer of an older version: its `hello` is still read, so
/// the version mismatch is reported as such).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    #[serde(default)]
    pub id: u64,
    #[serde(flatten)]
    pub msg: ToAgent,
}

/// A frame agent → controller: a message and the id of the request it answers
/// (0: not an answer to a request, e.g. an error about a frame that could not be
/// read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    #[serde(default)]
    pub id: u64,
    #[serde(flatten)]
    pub msg: FromAgent,
}

/// What a reply is to the request the controller waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyTo {
    /// The answer to the request waited for.
    This,
    /// The answer to an earlier request that was given up (timed out): discard it.
    Earlier,
    /// Not an answer to any request (id 0): an agent-side error about the stream.
    Unsolicited,
    /// An id never sent: the peer is broken.
    Unknown,
}

/// Judge a reply's id against the id of the request waited for (ids count up from 1).
pub fn reply_to(waiting_for: u64, reply_id: u64) -> ReplyTo {
    match reply_id {
        0 => ReplyTo::Unsolicited,
        id if id == waiting_for => ReplyTo::This,
        id if id < waiting_for => ReplyTo::Earlier,
        _ => ReplyTo::Unknown,
    }
}

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
    /// The agent's wall clock, now (any phase after hello): the controller estimates
    /// the host's clock offset from a few of these, keeping the tightest round trip.
    Time,
    /// While running: the role's cumulative counters now (live `--interval` output).
    Tally,
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
    /// Answer to `Time`: CLOCK_REALTIME in ns since the epoch when it was read.
    Time {
        realtime_ns: i64,
    },
    /// Answer to `Tally`.
    Tally(Tally),
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
            ToAgent::Time => "time",
            ToAgent::Tally => "tally",
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
            FromAgent::Time { .. } => "time",
            FromAgent::Tally(_) => "tally",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_ride_beside_the_message_and_default_to_zero() {
        let r = Request {
            id: 7,
            msg: ToAgent::Start,
        };
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, r#"{"id":7,"type":"start"}"#);
        assert_eq!(serde_json::from_str::<Request>(&json).unwrap(), r);
        // An old peer's hello (no id) is still understood.
        let old: Request = serde_json::from_str(r#"{"type":"hello","version":4}"#).unwrap();
        assert_eq!(old.id, 0);
        assert_eq!(old.msg, ToAgent::Hello { version: 4 });
        // Old message types ignore the id (serde's default): an old agent reads a
        // new hello and reports the version mismatch.
        let json = serde_json::to_string(&Request {
            id: 1,
            msg: ToAgent::Hello { version: 5 },
        })
        .unwrap();
        assert_eq!(
            serde_json::from_str::<ToAgent>(&json).unwrap(),
            ToAgent::Hello { version: 5 }
        );
        let rep = Reply {
            id: 3,
            msg: FromAgent::Progress {
                count: 9,
                done: true,
            },
        };
        let json = serde_json::to_string(&rep).unwrap();
        assert_eq!(serde_json::from_str::<Reply>(&json).unwrap(), rep);
    }

    /// The defect of protocol 4: a Setup reply after its timeout was taken as the
    /// Teardown reply. Now the late Ready (id 2) is told apart from the Done (id 3).
    #[test]
    fn a_late_reply_is_not_the_answer_to_a_later_request() {
        // hello = 1, setup = 2 (times out), teardown = 3.
        assert_eq!(reply_to(3, 2), ReplyTo::Earlier);
        assert_eq!(reply_to(3, 3), ReplyTo::This);
        assert_eq!(reply_to(3, 0), ReplyTo::Unsolicited);
        assert_eq!(reply_to(3, 4), ReplyTo::Unknown);
        assert_eq!(reply_to(1, 1), ReplyTo::This);
    }
}
