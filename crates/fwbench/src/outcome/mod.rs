//! What one trial gave: its status, where each role ran, the workload's combined
//! figures, the gateway's report, the samples, and — for a search — the search's
//! result. The controller's single result type, rendered by `output` and stored by
//! `run::record`.

pub mod search;

use crate::workloads::echo::EchoSummary;
use proto::{GatewayResults, NetState};
use serde::{Deserialize, Serialize};

/// What an adaptive trial achieved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Precision {
    pub target: f64,
    /// Relative 95 % CI half-width of the per-window rate at the end (None: < 5 windows).
    pub achieved: Option<f64>,
    pub windows: usize,
    pub duration_s: f64,
    /// Stopped because the target was reached (else at the maximum duration).
    pub reached: bool,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// The trial ran, but the user's imported ruleset dropped (some of) its traffic.
    Dropped,
    Unavailable,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Dropped => "dropped",
            Status::Unavailable => "unavailable",
            Status::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RoleInfo {
    pub role: &'static str,
    pub place: String,
    pub requested_cpus: Option<String>,
    pub cpus: String,
    pub pid: u32,
    /// Remote hosts: the host's clock against the controller's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<crate::testbed::launcher::ClockOffset>,
}

pub use crate::testbed::EXTERNAL_GATEWAY;

#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub status: Status,
    pub error: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub placement: Vec<RoleInfo>,
    pub summary: Option<EchoSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet: Option<crate::workloads::packet::PacketSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ping: Option<crate::workloads::packet::PingSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conn: Option<crate::workloads::conn::ConnSummary>,
    /// Adaptive trials: the precision asked for and reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// Metrics each role sampled during the trial (stored in `samples`, not in `results`).
    #[serde(skip)]
    pub samples: Vec<(&'static str, proto::MetricSample)>,
    /// ndr and degrade: the search's result (its steps are trials of their own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::outcome::search::SearchSummary>,
    pub gateway: Option<GatewayResults>,
    /// Whether the gateway started this trial in the state of the testbed's first
    /// snapshot (None: no gateway, or an agent that does not report its state).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clean_start: Option<bool>,
    /// How the gateway's state at the start differed from the first snapshot.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub start_differences: Vec<String>,
}

/// What a search reads of a step trial, as stored (`results` JSON): read back to
/// reuse the steps a resumed run already has instead of measuring them again.
#[derive(serde::Deserialize)]
struct StoredStep {
    status: Status,
    error: Option<String>,
    started_at: String,
    finished_at: String,
    #[serde(default)]
    packet: Option<crate::workloads::packet::PacketSummary>,
    #[serde(default)]
    conn: Option<crate::workloads::conn::ConnSummary>,
}

impl Outcome {
    /// A step trial of a search as stored: status, error, times and the packet or
    /// connection figures (what searches look at), nothing else.
    pub fn from_stored_step(results: &serde_json::Value) -> Result<Outcome, serde_json::Error> {
        let s = StoredStep::deserialize(results)?;
        Ok(Outcome {
            status: s.status,
            error: s.error,
            finished_at: s.finished_at,
            packet: s.packet,
            conn: s.conn,
            ..Outcome::started(s.started_at)
        })
    }

    /// An `ok` outcome without figures yet.
    pub fn started(started_at: String) -> Outcome {
        Outcome {
            status: Status::Ok,
            error: None,
            finished_at: started_at.clone(),
            started_at,
            placement: vec![],
            summary: None,
            packet: None,
            ping: None,
            conn: None,
            search: None,
            samples: vec![],
            precision: None,
            gateway: None,
            clean_start: None,
            start_differences: vec![],
        }
    }

    /// Compare the gateway's state at this trial's start with `first`, the testbed's
    /// first snapshot, and mark the trial (nothing to compare: left unmarked).
    pub fn judge_start(&mut self, first: &NetState) {
        let Some(before) = self.gateway_state_before() else {
            return;
        };
        self.start_differences = before.differences(first);
        self.clean_start = Some(self.start_differences.is_empty());
    }

    /// The gateway's netfilter state before its setup, if it reported one.
    pub fn gateway_state_before(&self) -> Option<&NetState> {
        Some(&self.gateway.as_ref()?.residue.as_ref()?.before)
    }

    /// What the gateway could not undo (legacy tables …): later trials pay for it.
    pub fn gateway_left(&self) -> &[String] {
        self.gateway
            .as_ref()
            .and_then(|g| g.residue.as_ref())
            .map_or(&[], |r| &r.left)
    }

    /// An imported ruleset that dropped the trial's traffic turns `ok` into `dropped`,
    /// with e.g. "1408960 of 1408960 packets dropped by the policy of chain INPUT".
    pub fn judge_drops(&mut self) {
        if self.status != Status::Ok {
            return;
        }
        let Some(d) = self
            .firewall()
            .and_then(|f| f.verdicts.as_ref())
            .and_then(|v| v.dropped.clone())
        else {
            return;
        };
        let sent = self
            .packet
            .as_ref()
            .map(|p| p.sent)
            .or_else(|| self.ping.as_ref().map(|p| p.sent));
        let of = sent.map(|n| format!(" of {n}")).unwrap_or_default();
        self.status = Status::Dropped;
        self.error = Some(format!(
            "{}{of} packets dropped by {} (the imported ruleset)",
            d.packets, d.by
        ));
    }

    /// A trial aimed at an imported rule (`N` or `CHAIN:N`) whose counter stayed 0
    /// missed it: `failed`, naming the rule that took the traffic instead.
    pub fn judge_aim(&mut self, aim: &str) {
        if !matches!(self.status, Status::Ok | Status::Dropped) {
            return;
        }
        let Some(v) = self.firewall().and_then(|f| f.verdicts.clone()) else {
            return;
        };
        let hit = match aim.rsplit_once(':') {
            Some((chain, n)) => v
                .rules
                .iter()
                .find(|r| r.chain == chain && n.parse() == Ok(r.index)),
            None => aim
                .parse::<usize>()
                .ok()
                .and_then(|n| v.rules.get(n.wrapping_sub(1))),
        };
        match hit {
            Some(r) if r.packets > 0 => {}
            Some(r) => {
                self.status = Status::Failed;
                self.error = Some(format!(
                    "aimed at rule {}:{} ({}), but its counter is 0; taken by {}",
                    r.chain,
                    r.index,
                    r.text,
                    v.took.as_deref().unwrap_or("no rule with a final verdict")
                ));
            }
            None => {
                self.status = Status::Failed;
                self.error = Some(format!(
                    "aimed at rule {aim}, which the gateway did not report"
                ));
            }
        }
    }

    /// The gateway's rule-set report (engine, rules, install_ms, verdicts …), if any.
    pub fn firewall(&self) -> Option<&firewall::Report> {
        self.gateway.as_ref()?.firewall.as_deref()
    }
}
