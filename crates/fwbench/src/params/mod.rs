//! The typed description of one trial — what the user asked for, checked, with no
//! syscalls: the workload and its parameters, the firewall, the testbed shape, CPU
//! placement. The CLI and scenario files both build a [`TrialParams`] (through the
//! parsers in [`values`]); everything below the plan reads only this.
//!
//! Must not: touch the host, the testbed or the store.

pub mod conn;
pub mod events;
pub mod packet;
pub mod search;
pub mod topology;
pub mod values;
pub mod workload;

use crate::params::topology::Topology;
use crate::params::workload::Workload;
use proto::{Family, FrameSize, Proto, ServerMode};
use serde::Serialize;

/// Most clients of one trial (the reason is in `limits`).
pub use crate::limits::MAX_CLIENTS;

/// First server port. UDP servers use `ECHO_PORT .. ECHO_PORT + n`.
pub const ECHO_PORT: u16 = 20000;

/// Parameters of one echo trial (seed 000: n, t, f, P, A, T plus the testbed).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialParams {
    pub topology: Topology,
    pub clients: u32,
    pub duration_s: f64,
    pub frame_size: String,
    #[serde(skip)]
    pub frame: FrameSize,
    pub proto: Proto,
    pub family: Family,
    pub server: ServerMode,
    pub timeout_ms: u32,
    pub seed: u64,
    /// Firewall engine on the gateway and the rule-set model it renders.
    pub engine: firewall::Engine,
    pub model: firewall::models::Model,
    /// Filler rule count of the model (linear, raw-filler, string-*).
    pub rules: u32,
    pub position: firewall::models::Position,
    /// Chain the test traffic is filtered in (follows the topology).
    pub chain: firewall::models::Chain,
    /// Table family of the nft engines: inet (the default, left out so the keys of
    /// trials from before this axis stay the same) or ip (`table ip`/`ip6`).
    #[serde(default, skip_serializing_if = "firewall::NftFamily::is_default")]
    pub nft_family: firewall::NftFamily,
    /// Ruleset file for model `import`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import: Option<String>,
    /// What traffic the trial sends (echo trials omit it, so their keys stay stable).
    #[serde(default, skip_serializing_if = "Workload::is_echo")]
    pub workload: Workload,
    /// Flood, flow and ping parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<crate::params::packet::PacketParams>,
    /// sessions, bulk, http and connections parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn: Option<crate::params::conn::ConnParams>,
    /// ndr and degrade: what the search looks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::params::search::SearchParams>,
    /// Adaptive length: run at least `duration_s`, stop once the 95 % CI of the rate is
    /// within `precision`, at most `max_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<Adaptive>,
    /// Name of the scenario case this trial belongs to (e.g. seed 001's table rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Adaptive trial length (beyond the peers): stop when precise enough.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Adaptive {
    /// Target relative half-width of the rate's 95 % CI, e.g. 0.01.
    pub precision: f64,
    pub max_s: f64,
}

/// CPU placement of each role ("0", "0-1", …); `None` = wherever the kernel likes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Pinning {
    pub client: Option<String>,
    pub gateway: Option<String>,
    pub server: Option<String>,
}
