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
pub mod trace;
pub mod trace_gen;
pub mod value_error;
pub mod values;
pub mod workload;

use crate::params::search::{Search, SearchParams};
use crate::params::topology::Topology;
use crate::params::workload::{TrialKind, Workload};
use proto::{Family, FrameSize, Proto, ServerMode};
use serde::Serialize;

/// Most clients of one trial (the reason is in `limits`).
pub use crate::limits::MAX_CLIENTS;

/// Values that are each valid but cannot run together in one trial (bad input), with
/// why: e.g. a degrade search without an engine, an event on a workload that cannot
/// carry it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Conflict(pub String);

impl From<String> for Conflict {
    fn from(s: String) -> Conflict {
        Conflict(s)
    }
}

impl From<&str> for Conflict {
    fn from(s: &str) -> Conflict {
        Conflict(s.to_string())
    }
}

/// For callers that still carry messages as text.
impl From<Conflict> for String {
    fn from(e: Conflict) -> String {
        e.0
    }
}

/// First server port. UDP servers use `ECHO_PORT .. ECHO_PORT + n`.
pub const ECHO_PORT: u16 = 20000;

/// Parameters of one trial: the common part (testbed, firewall, length) and one
/// [`TrialKind`] carrying its family's parameters; a search over it is its strategy.
/// Serialized in the key form ([`KeyForm`]), the results format.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialParams {
    pub topology: Topology,
    pub clients: u32,
    pub duration_s: f64,
    pub frame_size: String,
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
    pub nft_family: firewall::NftFamily,
    /// Model `snat`: the address to translate to (default: the gateway's server-side).
    pub nat_to: Option<std::net::IpAddr>,
    /// Ruleset file for model `import`.
    pub import: Option<String>,
    /// The ipsets an imported `iptables-save` file matches (`ipset save` output).
    pub import_ipset: Option<String>,
    /// What traffic the trial sends, with its family's parameters.
    pub kind: TrialKind,
    /// A gateway event during the trial (`--event`; issue 25): rules that change
    /// while the traffic runs (every workload but `connections`).
    pub events: Option<crate::params::events::EventParams>,
    /// A search over the kind (ndr, degrade, sweet spot) instead of one trial.
    pub search: Option<Search>,
    /// Adaptive length: run at least `duration_s`, stop once the 95 % CI of the rate is
    /// within `precision`, at most `max_s`.
    pub adaptive: Option<Adaptive>,
    /// Name of the scenario case this trial belongs to (e.g. seed 001's table rows).
    pub label: Option<String>,
    /// CPUs the gateway's packet processing may use (seed 002's 1/2/4 vCPU): the last N
    /// CPUs of the machine get its interfaces' RPS/XPS masks and its agent; `None`: the
    /// run's `pin_gateway`, else no steering.
    pub gateway_cpus: Option<u32>,
}

#[cfg(test)]
mod gateway_cpus_tests {
    #[test]
    fn the_last_n_cpus() {
        assert_eq!(super::last_cpus(1, 2), "1");
        assert_eq!(super::last_cpus(2, 2), "0-1");
        assert_eq!(super::last_cpus(2, 4), "2-3");
        assert_eq!(super::last_cpus(8, 2), "0-1", "at most every CPU");
        assert_eq!(super::last_cpus(0, 2), "1", "at least one");
    }
}

/// The last `n` of `cpus` CPUs as a CPU list ("1", "2-3"); n is clamped to 1..=cpus.
fn last_cpus(n: u32, cpus: usize) -> String {
    let cpus = cpus.max(1);
    let n = (n as usize).clamp(1, cpus);
    let (first, last) = (cpus - n, cpus - 1);
    if first == last {
        last.to_string()
    } else {
        format!("{first}-{last}")
    }
}

impl TrialParams {
    /// The CPU list the gateway runs on: `gateway_cpus` as the last N of `cpus` CPUs
    /// (N = 1 of 2 → "1", 2 of 2 → "0-1"), else `pinned` (the run's `pin_gateway`).
    pub fn gateway_cpu_list(&self, cpus: usize, pinned: Option<&str>) -> Option<String> {
        match self.gateway_cpus {
            Some(n) => Some(last_cpus(n, cpus)),
            None => pinned.map(str::to_string),
        }
    }
}

impl TrialParams {
    /// The kind of traffic by name.
    pub fn workload(&self) -> Workload {
        self.kind.workload()
    }
    /// The trial's name in outputs and the store: the search's (`ndr`, `degrade`) or
    /// the workload's.
    pub fn name(&self) -> &'static str {
        match self
            .search
            .as_ref()
            .and_then(|s| s.kind_over(self.workload()))
        {
            Some(s) => s.name(),
            None => self.workload().name(),
        }
    }
    pub fn packet(&self) -> Option<&crate::params::packet::PacketParams> {
        self.kind.packet()
    }
    pub fn conn(&self) -> Option<&crate::params::conn::ConnParams> {
        self.kind.conn()
    }
    /// What an ndr or degrade search looks for.
    pub fn search_params(&self) -> Option<&SearchParams> {
        self.search.as_ref().and_then(Search::params)
    }
}

/// The serialized form of [`TrialParams`]: the canonical JSON trial keys hash
/// (`plan::scenario::trial_key`), stored as `trials.params`. Its fields and their
/// order are the results format: what the typed shape changes, this keeps (a test
/// pins the keys of every shipped scenario). New fields come with
/// `skip_serializing_if` defaults so existing keys stay.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
struct KeyForm<'a> {
    topology: Topology,
    clients: u32,
    duration_s: f64,
    frame_size: &'a str,
    proto: Proto,
    family: Family,
    server: ServerMode,
    timeout_ms: u32,
    seed: u64,
    engine: firewall::Engine,
    model: firewall::models::Model,
    rules: u32,
    position: firewall::models::Position,
    chain: firewall::models::Chain,
    #[serde(skip_serializing_if = "firewall::NftFamily::is_default")]
    nft_family: firewall::NftFamily,
    nat_to: Option<std::net::IpAddr>,
    import: Option<&'a str>,
    import_ipset: Option<&'a str>,
    /// The trial's name (trials of the default workload, echo, omit it).
    workload: Option<&'static str>,
    /// A packet trial's parameters, its gateway event among them.
    packet: Option<PacketKey<'a>>,
    conn: Option<&'a crate::params::conn::ConnParams>,
    search: Option<&'a SearchParams>,
    adaptive: Option<&'a Adaptive>,
    label: Option<&'a str>,
    gateway_cpus: Option<u32>,
    /// The gateway event of an echo or connection trial (a packet trial's is in
    /// `packet`, where it was before these workloads had events).
    events: Option<&'a crate::params::events::EventParams>,
}

impl Serialize for TrialParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        KeyForm {
            topology: self.topology,
            clients: self.clients,
            duration_s: self.duration_s,
            frame_size: &self.frame_size,
            proto: self.proto,
            family: self.family,
            server: self.server,
            timeout_ms: self.timeout_ms,
            seed: self.seed,
            engine: self.engine,
            model: self.model,
            rules: self.rules,
            position: self.position,
            chain: self.chain,
            nft_family: self.nft_family,
            nat_to: self.nat_to,
            import: self.import.as_deref(),
            import_ipset: self.import_ipset.as_deref(),
            workload: Some(self.name()).filter(|n| *n != Workload::default().name()),
            packet: self
                .packet()
                .map(|k| PacketKey::of(k, self.events.as_ref())),
            conn: self.conn(),
            search: self.search_params(),
            adaptive: self.adaptive.as_ref(),
            label: self.label.as_deref(),
            gateway_cpus: self.gateway_cpus,
            events: self.events.as_ref().filter(|_| self.packet().is_none()),
        }
        .serialize(s)
    }
}

/// A packet trial's parameters in the key form (`params::KeyForm`): its own, then
/// the trial's gateway event, then the conntrack settings — the order of the time
/// when the event was one of the packet parameters, so trial keys stay.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
struct PacketKey<'a> {
    #[serde(flatten)]
    params: &'a crate::params::packet::PacketParams,
    events: Option<&'a crate::params::events::EventParams>,
    ct_max: Option<u32>,
    ct_buckets: Option<u32>,
    ct_udp_timeout: Option<u32>,
    ct_fill: Option<u32>,
}

impl<'a> PacketKey<'a> {
    fn of(
        params: &'a crate::params::packet::PacketParams,
        events: Option<&'a crate::params::events::EventParams>,
    ) -> PacketKey<'a> {
        PacketKey {
            params,
            events,
            ct_max: params.ct_max,
            ct_buckets: params.ct_buckets,
            ct_udp_timeout: params.ct_udp_timeout,
            ct_fill: params.ct_fill,
        }
    }
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

/// What a trial command's user said about placement.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// These CPUs (`--pin-client/--pin-gateway/--pin-server`), or none at all
    /// (`--no-pin`): used as given.
    Given(Pinning),
    /// No `--pin-*` flag: the trial's default ([`Placement::resolve`]).
    Default,
}

impl Placement {
    /// The pinning a trial runs with. `Given` is used as it is. `Default`, when
    /// `own_gateway_cpu` (packet-rate traffic through a gateway on the local
    /// testbed) and this machine has at least 2 of `cpus`: the client and the
    /// server on CPU 0, the gateway (and, steered there, its interfaces' packet
    /// processing) on the last CPU — the presets' placement; else nothing pinned.
    pub fn resolve(&self, own_gateway_cpu: bool, cpus: usize) -> Pinning {
        match self {
            Placement::Given(p) => p.clone(),
            Placement::Default if own_gateway_cpu && cpus >= 2 => Pinning {
                client: Some("0".into()),
                gateway: Some((cpus - 1).to_string()),
                server: Some("0".into()),
            },
            Placement::Default => Pinning::default(),
        }
    }
}

#[cfg(test)]
mod placement_tests {
    use super::{Pinning, Placement};

    fn pins(c: Option<&str>, g: Option<&str>, s: Option<&str>) -> Pinning {
        let own = |v: Option<&str>| v.map(str::to_string);
        Pinning {
            client: own(c),
            gateway: own(g),
            server: own(s),
        }
    }

    #[test]
    fn the_default_gives_the_gateway_the_last_cpu() {
        let d = Placement::Default;
        assert_eq!(d.resolve(true, 2), pins(Some("0"), Some("1"), Some("0")));
        assert_eq!(d.resolve(true, 8), pins(Some("0"), Some("7"), Some("0")));
        // One CPU: nothing to give; not packet-rate or not local: the kernel places.
        assert_eq!(d.resolve(true, 1), Pinning::default());
        assert_eq!(d.resolve(false, 2), Pinning::default());
    }

    #[test]
    fn a_users_placement_is_kept() {
        let given = pins(Some("1"), None, None);
        assert_eq!(Placement::Given(given.clone()).resolve(true, 2), given);
        // `--no-pin`: given as nothing pinned.
        let none = Placement::Given(Pinning::default());
        assert_eq!(none.resolve(true, 2), Pinning::default());
    }
}
