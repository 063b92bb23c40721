//! A trial as stored (`trials.results`, `trials.params`), read back typed: what the
//! report and other readers look at, field by field, instead of string keys.
//!
//! Owns: [`StoredTrial`] (the JSON fwbench's `outcome::StoredForm` writes) with each
//! family's stored figures as far as readers use them, and [`StoredParams`] (the
//! fields of `params::KeyForm` readers use). Every field is optional and read
//! leniently: a field an old database lacks, or holds in another shape, reads as
//! absent — exactly what a `.get(key).and_then(Value::as_…)` read gave — so every
//! database fwbench ever wrote still reads, and nothing here fails on input.
//! Must not: judge or compute figures (readers do), or need fields old results lack.

use crate::witness::LimitedBy;
use crate::Status;
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Read a field as `T`, or as absent when it has another shape.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

/// Read a list field as `T`, or as empty when it has another shape.
fn lenient_list<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(lenient(d)?.unwrap_or_default())
}

/// A trial's `results` as stored: status, times, placement and each family's figures
/// under its own key (`summary` echo, `packet`, `ping`, `conn`, `search`, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StoredTrial {
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Where each role ran (absent: not recorded).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub placement: Option<Vec<Placement>>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub packet: Option<PacketStored>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub ping: Option<PingStored>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub conn: Option<ConnStored>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchStored>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub worklang: Option<WorklangStored>,
    /// What the gateway said of the trial.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewayStored>,
    /// Whether the gateway started in the state of the testbed's first snapshot.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub clean_start: Option<bool>,
    #[serde(
        deserialize_with = "lenient_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub start_differences: Vec<String>,
    /// The search this trial was a step of (absent: a trial asked for, or stored before
    /// steps were marked).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub step_of: Option<StepOf>,
    /// The trial's doubts (`results.doubts`), each read alone: its kind as stored (a
    /// kind a later version added reads too) and why; one that does not read is kept
    /// as its text.
    #[serde(deserialize_with = "doubt_list", skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<DoubtStored>,
}

/// What a stored trial was a step of (`results.step_of`): its rate probes that search
/// — a bisection's guess, a ceiling probe — and measures no configuration asked for;
/// the search's own row states its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepOf {
    /// `event_load`'s (`--load`'s) capacity search: what the gateway forwards without
    /// loss, the background's rate a share of it.
    Capacity,
    /// A search asked for (ndr, mlr, degrade, ndr-newflows, envelope, sweet spot).
    Search,
}

impl StoredTrial {
    /// Read a stored `results` value; a value that is no object (an empty or foreign
    /// row) reads as a trial without figures.
    pub fn read(results: &Value) -> StoredTrial {
        StoredTrial::deserialize(results).unwrap_or_default()
    }
}

/// One role's place (`results.placement[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Placement {
    #[serde(deserialize_with = "lenient")]
    pub role: Option<String>,
    /// The CPUs asked for (a CPU list such as `2-3`).
    #[serde(deserialize_with = "lenient")]
    pub requested_cpus: Option<String>,
    /// The CPUs it ran on.
    #[serde(deserialize_with = "lenient")]
    pub cpus: Option<String>,
}

/// The gateway's side of a trial (`results.gateway`), as far as readers use it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GatewayStored {
    #[serde(deserialize_with = "lenient")]
    pub firewall: Option<FirewallStored>,
}

/// The firewall the gateway ran (`results.gateway.firewall`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FirewallStored {
    /// Its hidden choices (table family, hook, counters, …) by name, as the engine
    /// reported them (a value that is no text is not shown).
    #[serde(deserialize_with = "lenient")]
    pub settings: Option<serde_json::Map<String, Value>>,
    #[serde(deserialize_with = "lenient")]
    pub verdicts: Option<VerdictsStored>,
}

/// `firewall.verdicts`: the rules the gateway listed after the import.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerdictsStored {
    #[serde(deserialize_with = "lenient_list")]
    pub rules: Vec<RuleStored>,
}

/// One rule of `verdicts.rules`: its chain and index there.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RuleStored {
    #[serde(deserialize_with = "lenient")]
    pub chain: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub index: Option<u64>,
}

/// A packet trial's figures (`results.packet`), as far as readers use them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PacketStored {
    /// Which role set the rate (absent in results stored before it was judged).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<LimitStored>,
    /// New flows: what the gateway's conntrack table did with them.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub conntrack: Option<CtStored>,
    /// AF_XDP sender and sink: the mode each socket ran in.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub xdp: Option<XdpStored>,
    /// A size mix (`--size imix`, `csit-imix`, `64:7,576:4,1500:1`): what was sent and
    /// received of each frame size (absent: one size).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub mix: Option<MixStored>,
}

/// `packet.mix`: a size mix as sent and received (fwbench's `MixSummary`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MixStored {
    /// As given: `imix`, `csit-imix` or `64:7,576:4,1500:1`.
    #[serde(deserialize_with = "lenient")]
    pub mix: Option<String>,
    /// One row per frame size of the mix, then any other size the sink received.
    #[serde(deserialize_with = "lenient_list")]
    pub sizes: Vec<MixRowStored>,
}

/// One frame size of a mix (`packet.mix.sizes[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MixRowStored {
    /// Ethernet frame bytes, FCS included.
    #[serde(deserialize_with = "lenient")]
    pub frame: Option<u32>,
    #[serde(deserialize_with = "lenient")]
    pub weight: Option<u32>,
    /// Packets the source sent of this size.
    #[serde(deserialize_with = "lenient")]
    pub sent: Option<u64>,
    /// Packets the sink received of this size (0 when the gateway counted).
    #[serde(deserialize_with = "lenient")]
    pub received: Option<u64>,
}

/// `packet.limited_by`: who limited the rate (a word fwbench does not know: absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LimitStored {
    #[serde(deserialize_with = "lenient")]
    pub by: Option<LimitedBy>,
    #[serde(deserialize_with = "lenient")]
    pub why: Option<String>,
    /// The gateway's rules ran in its ingress driver (native XDP): pinning does not
    /// move them (absent: not, or stored before it was said).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub in_driver: Option<bool>,
}

/// `packet.conntrack`: the gateway's conntrack table under new flows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CtStored {
    #[serde(deserialize_with = "lenient")]
    pub offered: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub admitted: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub dropped: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub new_flows_per_s: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub ct_drop: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub early_drop: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub insert_failed: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub entries_after: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub entries_before: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub max: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub buckets: Option<u64>,
    /// (namespace, scope) of each conntrack table counted.
    #[serde(deserialize_with = "lenient_list")]
    pub scope: Vec<(String, String)>,
    /// The counters agreed with the traffic.
    #[serde(deserialize_with = "lenient")]
    pub agree: Option<bool>,
}

/// `packet.xdp`: the AF_XDP sockets of the sender and the sink.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct XdpStored {
    #[serde(deserialize_with = "lenient")]
    pub sender: Option<XdpSocketsStored>,
    #[serde(deserialize_with = "lenient")]
    pub sink: Option<XdpSocketsStored>,
}

/// One role's AF_XDP sockets (`proto::XdpSockets` as stored).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct XdpSocketsStored {
    #[serde(deserialize_with = "lenient")]
    pub queues: Option<u64>,
    /// `zero-copy` or `copy`.
    #[serde(deserialize_with = "lenient")]
    pub mode: Option<String>,
    /// `native` or `generic` XDP.
    #[serde(deserialize_with = "lenient")]
    pub attach: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub need_wakeup: Option<bool>,
}

/// A delay distribution (`proto::RttSummary` as stored), in ns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DelayStored {
    #[serde(deserialize_with = "lenient")]
    pub count: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub mean_ns: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub p50_ns: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub p99_ns: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub max_ns: Option<f64>,
}

/// A ping trial's figures (`results.ping`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PingStored {
    #[serde(deserialize_with = "lenient")]
    pub rtt: Option<DelayStored>,
}

/// A connection trial's figures (`results.conn`, fwbench's `ConnSummary`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnStored {
    #[serde(deserialize_with = "lenient")]
    pub sessions: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub failed: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub corrupt: Option<f64>,
    /// (error text, count) of failed sessions.
    #[serde(deserialize_with = "lenient_list")]
    pub errors: Vec<(String, u64)>,
    #[serde(deserialize_with = "lenient")]
    pub elapsed_s: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub sessions_per_s: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub goodput_bps: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub session: Option<DurationsStored>,
    #[serde(deserialize_with = "lenient")]
    pub connect: Option<DurationsStored>,
    #[serde(deserialize_with = "lenient")]
    pub ttfb: Option<DurationsStored>,
    #[serde(deserialize_with = "lenient")]
    pub ttlb: Option<DurationsStored>,
    #[serde(deserialize_with = "lenient")]
    pub overhead: Option<OverheadStored>,
    #[serde(deserialize_with = "lenient")]
    pub hold: Option<HoldStored>,
    /// Each session's duration, µs.
    #[serde(deserialize_with = "lenient_list")]
    pub session_us: Vec<f64>,
    #[serde(deserialize_with = "lenient")]
    pub server: Option<ServerStored>,
}

/// Which duration distribution of a connection trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Session,
    Connect,
    Ttfb,
    Ttlb,
}

impl ConnStored {
    pub fn durations(&self, which: Phase) -> Option<&DurationsStored> {
        match which {
            Phase::Session => self.session.as_ref(),
            Phase::Connect => self.connect.as_ref(),
            Phase::Ttfb => self.ttfb.as_ref(),
            Phase::Ttlb => self.ttlb.as_ref(),
        }
    }
}

/// A duration distribution of a connection trial (fwbench's `Durations`), ns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DurationsStored {
    #[serde(deserialize_with = "lenient")]
    pub count: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub mean_ns: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub sd_ns: Option<f64>,
}

/// A bulk trial's time split into session overhead and transfer (`OverheadSplit`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OverheadStored {
    #[serde(deserialize_with = "lenient")]
    pub overhead_s: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub transfer_s: Option<f64>,
    /// None when the overhead filled the run (stored as null).
    #[serde(deserialize_with = "lenient")]
    pub net_goodput_bps: Option<f64>,
}

/// Held connections (`HoldResults`): how many were reached and what stopped them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HoldStored {
    #[serde(deserialize_with = "lenient")]
    pub reached: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub limit: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub alive_at_stop: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub limiter: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub errno: Option<i64>,
    #[serde(deserialize_with = "lenient")]
    pub open_ms: Option<f64>,
}

/// The connection server's counters, as far as readers use them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerStored {
    #[serde(deserialize_with = "lenient")]
    pub bad_requests: Option<u64>,
}

/// Which search a trial ran (`results.search.search`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    Ndr,
    Mlr,
    Degrade,
    Sweetspot,
    Envelope,
}

/// A search's result (`results.search`, fwbench's `outcome::search` summaries: ndr,
/// mlr, degrade and the sessions sweet spot share the one stored shape).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchStored {
    #[serde(deserialize_with = "lenient")]
    pub search: Option<SearchKind>,
    /// `ndr`, `pdr` (ndr), `mlr`.
    #[serde(deserialize_with = "lenient")]
    pub mode: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub rate_pps: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub fail_pps: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub rate_bps_l2: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub ceiling_pps: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub limited_by_sender: Option<bool>,
    #[serde(deserialize_with = "lenient")]
    pub last_good_rules: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub first_degraded_rules: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub converged: Option<bool>,
    #[serde(deserialize_with = "lenient")]
    pub trials: Option<f64>,
    /// mlr: the rate per goal loss ratio.
    #[serde(deserialize_with = "lenient_list")]
    pub goals: Vec<GoalStored>,
    /// ndr, mlr: loss by offered load (degrade: `points`).
    #[serde(deserialize_with = "lenient")]
    pub curve: Option<Vec<SearchPoint>>,
    /// degrade (loss by rules) and sweet spot (sessions/s by parallelism).
    #[serde(deserialize_with = "lenient")]
    pub points: Option<Vec<SearchPoint>>,
    /// ndr, mlr: one-way delay by fraction of the rate found.
    #[serde(deserialize_with = "lenient")]
    pub latency: Option<Vec<LatencyStored>>,
    /// Sweet spot: the parallelisms within the plateau.
    #[serde(deserialize_with = "lenient_list")]
    pub plateau: Vec<f64>,
    #[serde(deserialize_with = "lenient")]
    pub best_parallel: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub best_sessions_per_s: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub latency_at_best_s: Option<f64>,
    /// envelope: the highest update rate that kept the targets, updates/s, and the
    /// lowest that did not.
    #[serde(deserialize_with = "lenient")]
    pub rate: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub fail_rate: Option<f64>,
    /// envelope: the update repeated ("add:1 (batch)") and the rules installed.
    #[serde(deserialize_with = "lenient")]
    pub update: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub installed: Option<f64>,
    /// Why its answer may not be believed (the search's witness); empty: none.
    #[serde(
        deserialize_with = "lenient_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub doubts: Vec<crate::witness::Doubt>,
}

impl SearchKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchKind::Ndr => "ndr",
            SearchKind::Mlr => "mlr",
            SearchKind::Degrade => "degrade",
            SearchKind::Sweetspot => "sweetspot",
            SearchKind::Envelope => "envelope",
        }
    }
}

impl SearchStored {
    pub fn is(&self, kind: SearchKind) -> bool {
        self.search == Some(kind)
    }
}

/// An mlr goal: the rate found for one loss ratio.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GoalStored {
    #[serde(deserialize_with = "lenient")]
    pub loss_ratio: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub rate_pps: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub rate_bps_l2: Option<f64>,
    /// Lowest rate above it that failed (`None`: none did).
    #[serde(deserialize_with = "lenient")]
    pub fail_pps: Option<f64>,
}

/// A point of a search's curve: loss by load or rules (`x`, `loss_ratio`), or a sweet
/// spot's sessions/s by parallelism.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchPoint {
    #[serde(deserialize_with = "lenient")]
    pub x: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub loss_ratio: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub parallel: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub sessions_per_s: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub failed: Option<u64>,
}

/// One-way delay at a fraction of the rate a search found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencyStored {
    #[serde(deserialize_with = "lenient")]
    pub fraction: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub owd: Option<DelayStored>,
}

/// A workload-language trial's commands (`results.worklang`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorklangStored {
    #[serde(deserialize_with = "lenient_list")]
    pub ran: Vec<CommandStored>,
    #[serde(deserialize_with = "lenient")]
    pub total_s: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub failed: Option<u64>,
}

/// One command a workload file ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandStored {
    #[serde(deserialize_with = "lenient_list")]
    pub argv: Vec<String>,
    #[serde(deserialize_with = "lenient")]
    pub duration_s: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub exit: Option<i64>,
}

/// A command's words as one line a shell would split back into them (`sh -c 'exit
/// 3'`), for its row in tables; words joined by spaces where a word cannot be quoted.
pub fn command_line(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}

/// A trial's parameters as stored (`trials.params`, fwbench's `params::KeyForm`), the
/// fields readers use by name; the grouping flattens the JSON generically instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StoredParams {
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub topology: Option<String>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub clients: Option<f64>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub rules: Option<u64>,
    /// A workload-language trial's file.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The ruleset file the gateway imported (`--import`).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub import: Option<String>,
    /// A packet trial's parameters, the fields readers use.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub packet: Option<PacketParamsStored>,
    /// The gateway event's parameters (`--event`), the fields readers use — of a
    /// workload other than the packet ones (theirs are in `packet.events`, where they
    /// were before other workloads had events: [`StoredParams::event_rate`]).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub events: Option<EventParamsStored>,
}

/// A stored doubt: its kind as stored ("limited_by_fwbench") and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DoubtStored {
    pub kind: String,
    pub why: String,
}

/// A list of doubts, each read alone: one that is no `{kind, why}` is kept with kind
/// "unreadable" and its text as why (never dropped, nor hiding the others).
fn doubt_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<DoubtStored>, D::Error> {
    let v = Value::deserialize(d)?;
    // Not a list (nor null): one that does not read, never none.
    let items = match &v {
        Value::Null => vec![],
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    Ok(items
        .into_iter()
        .map(|x| {
            serde_json::from_value::<DoubtStored>(x.clone())
                .ok()
                .filter(|d| !d.kind.is_empty())
                .unwrap_or_else(|| DoubtStored {
                    kind: "unreadable".into(),
                    why: x.to_string(),
                })
        })
        .collect())
}

/// Read an object field that is there (not `null`) as `T`, or as `T`'s default —
/// nothing read — when it has another shape (an array too, which serde would read
/// field by field in order): an unreadable value is never taken for an absent one.
fn present<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok((!v.is_null()).then(|| {
        v.is_object()
            .then(|| serde_json::from_value(v).ok())
            .flatten()
            .unwrap_or_default()
    }))
}

/// `params.events.load` (`--load`): the background's rate as a share of what the
/// gateway forwards (`of` absent: found by a search before the trial) or of a stated
/// rate, and what that was once the trial ran (`capacity`). A load that is there but
/// no object (`"load": "0.5"`) reads as one with nothing read (`fraction` absent:
/// unreadable), never as no load; `null` reads as none.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LoadStored {
    pub fraction: Option<f64>,
    /// The stated rate, as `proto::Rate` stores it: `{"pps": …}` or `{"bps": …}` (one of
    /// another shape: neither read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of: Option<RateStored>,
    /// What the share was taken of (fwbench's `params::events::Capacity`, recorded when
    /// the trial ran; absent in trials stored before it was; one of another shape:
    /// nothing read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityStored>,
}

impl<'de> Deserialize<'de> for LoadStored {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LoadStored, D::Error> {
        let v = Value::deserialize(d)?;
        if v.is_null() {
            return Err(serde::de::Error::custom("no load"));
        }
        // An object only (serde would read an array field by field in order).
        let o: LoadObject = (v.is_object())
            .then(|| serde_json::from_value(v).ok())
            .flatten()
            .unwrap_or_default();
        Ok(LoadStored {
            fraction: o.fraction,
            of: o.of,
            capacity: o.capacity,
        })
    }
}

/// [`LoadStored`]'s fields, each read leniently from an object.
#[derive(Default, Deserialize)]
#[serde(default)]
struct LoadObject {
    #[serde(deserialize_with = "lenient")]
    fraction: Option<f64>,
    #[serde(deserialize_with = "present")]
    of: Option<RateStored>,
    #[serde(deserialize_with = "present")]
    capacity: Option<CapacityStored>,
}

/// `params.events.load.capacity`: the gateway's capacity the share was taken of, and
/// how it was found (`search` absent: stated).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapacityStored {
    /// Packets/s: stated, or the rate the search found.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub pps: Option<f64>,
    /// The background's offered rate, the share of `pps`, packets/s.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub background_pps: Option<f64>,
    /// The short search that found `pps` (absent: stated; one of another shape:
    /// nothing read).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub search: Option<CapacitySearchStored>,
}

/// `capacity.search`: the short NDR search that found a capacity, and its witness.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapacitySearchStored {
    /// Loss ratio still counted as forwarded (0: an NDR).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// Length of each of its trials, s.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub step_s: Option<f64>,
    /// Its trials.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub trials: Option<u64>,
    /// Its bracket closed and no contradiction persisted.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub converged: Option<bool>,
    /// The lowest rate it saw fail, packets/s.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub fail_pps: Option<f64>,
    /// Even an unpaced flood passed: the capacity is what the sender got out, a lower
    /// bound of the gateway's.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub limited_by_sender: Option<bool>,
    /// Why its capacity may not be believed, each read alone (absent in searches
    /// stored before they carried doubts; one that does not read is kept as its text).
    #[serde(deserialize_with = "doubt_list", skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<DoubtStored>,
    /// Why its lowest failing rate failed by fwbench (its sender, its sink): the
    /// capacity is a lower bound of the gateway's, as with `limited_by_sender`.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub fail_by_fwbench: Option<String>,
}

#[cfg(test)]
#[path = "stored_load_tests.rs"]
mod load_tests;

/// A stated rate as stored: packets or bits per second.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RateStored {
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub pps: Option<f64>,
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub bps: Option<f64>,
}

/// `params.events`, the fields readers use by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EventParamsStored {
    /// Updates per second after the first (`None`: once); an envelope's step sets it.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// The background's load (`--load`): `None`, the rate as given.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadStored>,
}

/// `params.packet`, the fields readers use by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PacketParamsStored {
    /// The destination port range, `[first, last]`.
    #[serde(
        deserialize_with = "lenient_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub dport: Vec<u64>,
    /// The rule the packets aim at: `N` or `CHAIN:N` (`--aim`).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub aim: Option<String>,
    /// Idle entries put in the gateway's conntrack table before the trial (`--ct-fill`).
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub ct_fill: Option<u64>,
    /// The gateway event's parameters (`--event`) of a packet trial.
    #[serde(deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub events: Option<EventParamsStored>,
}

/// What identifies a configuration in stored parameters: the parameters as asked,
/// without the seed and without what a trial measured before it ran — a `--load`'s
/// capacity (`packet.events.load.capacity`) and the rate set from it (`packet.rate`).
/// A background at half the capacity is one configuration from run to run, its
/// capacity found again each time (as its planned trial key leaves it out), so
/// `compare` and `trend` follow it.
pub fn configuration(params: &Value) -> Value {
    let mut p = params.clone();
    let Some(m) = p.as_object_mut() else {
        return p;
    };
    m.remove("seed");
    if let Some(packet) = m.get_mut("packet").and_then(Value::as_object_mut) {
        let load = (packet.get_mut("events"))
            .and_then(|e| e.get_mut("load"))
            .and_then(Value::as_object_mut)
            .map(|load| load.remove("capacity"));
        if load.is_some() {
            packet.remove("rate");
        }
    }
    p
}

impl StoredParams {
    /// The rate its gateway event repeated at, updates/s, wherever its workload keeps
    /// it; `None`: once, or no event.
    pub fn event_rate(&self) -> Option<f64> {
        self.event()?.rate
    }

    /// Its gateway event's background load (`--load`), where it has one.
    pub fn event_load(&self) -> Option<&LoadStored> {
        self.event()?.load.as_ref()
    }

    /// Its gateway event's parameters: a packet trial's under `packet`, else its own.
    fn event(&self) -> Option<&EventParamsStored> {
        let packet = self.packet.as_ref().and_then(|p| p.events.as_ref());
        packet.or(self.events.as_ref())
    }

    /// Read stored parameters; a value that is no object reads as no parameters.
    pub fn read(params: &Value) -> StoredParams {
        let mut p = StoredParams::deserialize(params).unwrap_or_default();
        // Files written before labels were checked may hold control characters: never
        // passed on raw to a terminal, a page or a table.
        for t in [
            &mut p.label,
            &mut p.engine,
            &mut p.topology,
            &mut p.file,
            &mut p.import,
        ]
        .into_iter()
        .flatten()
        {
            *t = crate::shown(t);
        }
        p
    }
}

#[cfg(test)]
#[path = "stored_tests.rs"]
mod tests;
