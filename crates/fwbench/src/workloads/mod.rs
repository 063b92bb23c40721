//! The workloads on the controller side, one module per family behind one trait,
//! [`Traffic`]: which agents a trial needs and with what specs ([`Roles`]), how its
//! end is decided, and the figures it combines from both ends and the gateway
//! ([`Figures`]) — with the headline columns they are stored under.
//!
//! Each family's figures say for themselves ([`Summary`], dispatched once by
//! [`Figures::summary`]) what `output` and `outcome` show and store of them: the trial
//! line and text, the run table's cells, the live total, the JSON `result`, the key of
//! the stored form and the store's headline columns; each kind its parameter line
//! ([`Traffic::params_text`]) and how live intervals count ([`Live`]).
//!
//! The trial driver (`exec::trial`) names no family: what a family needs around its
//! agents it says through the trait's hooks — [`Traffic::prepare`] (what the host must
//! keep for the trial, held until after teardown), [`Traffic::conntrack`] (the
//! gateway's table settings) and [`Traffic::finish`] (figures completed from the
//! trial's samples).
//!
//! [`traffic`] is the registry: an exhaustive match over the workload kinds, so a new
//! kind does not compile until it says what drives it.
//!
//! Must not: open sockets (the `traffic` crate's roles do), start agents (`exec`
//! does) or store anything.

pub mod conn;
pub mod conntrack;
pub mod ctsummary;
pub mod echo;
pub mod events;
pub mod hosts;
pub mod packet;
pub mod packet_hooks;
pub mod units;

use crate::params::workload::{PacketKind, TrialKind};
use crate::params::{Pinning, TrialParams};
use crate::testbed::{Host, Sampled, Testbed};
use anyhow::Result;
use proto::{CtSpec, GatewayResults, ProxySpec, RoleResults, RoleSpec};

/// The agents a trial starts besides the gateway, and the gateway's relay.
pub struct Roles {
    /// The receiving side (echo server, sink, reflector, TCP server) and its host;
    /// `None` for a sink-less flood (the gateway counts).
    pub server: Option<(Host, RoleSpec)>,
    /// The traffic source and its host.
    pub client: (Host, RoleSpec),
    /// The proxy topology's relay in the gateway.
    pub proxy: Option<ProxySpec>,
    /// Further server and client processes beside `server` and `client`, started after
    /// them under the same role names, each on the host of its role with that index
    /// (0: `server`'s or `client`'s own): held connections sharded past one process's
    /// open-file limit (`connections`, all on host 0), or a flood or flow spread over
    /// the hosts of a role (one process on each further host,
    /// [`crate::testbed::spread`]). Empty otherwise.
    pub more_servers: Vec<(Host, u32, RoleSpec)>,
    pub more_clients: Vec<(Host, u32, RoleSpec)>,
    /// Gateway events: what the update's first rule or element matches (flow 0,
    /// echo's client 1, the marker stream of ping and sessions); `None` without events.
    pub marker: Option<proto::Marker>,
}

/// One traffic agent's results, with the host they came from.
#[derive(Debug, Clone)]
pub struct Returned {
    /// Which host of its role (0-based; above 0 only when the role is spread).
    pub host: u32,
    /// Where the agent ran (the trial's placement), for per-host figures.
    pub place: String,
    /// That host's clock against the controller's (`None`: the controller's own).
    pub clock: Option<crate::testbed::launcher::ClockOffset>,
    pub results: RoleResults,
}

/// What a trial returned, for [`Traffic::collect`]: the traffic agents' results and
/// the gateway's, with the testbed and parameters they ran under.
pub struct Collected<'a> {
    pub tb: &'a dyn Testbed,
    pub p: &'a TrialParams,
    pub results: Vec<Returned>,
    pub gateway: Option<&'a GatewayResults>,
}

impl Collected<'_> {
    /// The traffic agents' results without their hosts (kinds whose roles are never
    /// spread over several hosts).
    pub fn role_results(self) -> Vec<RoleResults> {
        self.results.into_iter().map(|r| r.results).collect()
    }
}

impl From<RoleResults> for Returned {
    /// Results of the first host of its role, on the controller's clock.
    fn from(results: RoleResults) -> Returned {
        Returned {
            host: 0,
            place: String::new(),
            clock: None,
            results,
        }
    }
}

/// How a trial's traffic phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// After the trial's duration, or — adaptive — once the rate counted by this role
    /// (`"client"`, `"server"`) is precise enough.
    Timed { measuring: &'static str },
    /// When the client reports its sessions done (connection workloads; a duration
    /// without a count bounds them instead).
    Counted {
        /// The client opens connections and holds them: the phase waits until it
        /// stopped opening (whatever the duration), then holds them for the trial's
        /// `hold_s`.
        holds: bool,
    },
}

impl Ending {
    /// The traffic ends at the trial's duration: timed (adaptive: at least then, then
    /// until its rate is precise enough or its maximum), or counted with no count to
    /// wait for (sessions without `--count`, which the duration bounds; held
    /// connections wait for the client whatever the duration). An update due before
    /// then runs while the traffic flows, one due later is not sure to.
    pub fn at_duration(self, p: &TrialParams) -> bool {
        match self {
            Ending::Timed { .. } => true,
            Ending::Counted { holds } => !holds && p.conn().is_none_or(|k| k.count.is_none()),
        }
    }
}

/// What a family keeps on the host for a trial ([`Traffic::prepare`]): taken before
/// any agent starts, dropped after their teardown, whatever happened — dropping it
/// undoes what it changed.
pub trait Held {
    /// The trial ran: say in its figures what holding did (before it is dropped).
    fn note(&self, _figures: &mut Figures) {}
}

/// What the driver hands [`Traffic::finish`] once the figures are combined.
pub struct Finish<'a> {
    pub tb: &'a dyn Testbed,
    pub p: &'a TrialParams,
    pub pin: &'a Pinning,
    /// Every agent's 5-Hz samples, by role and host.
    pub samples: &'a [Sampled],
    /// The gateway agent's results, on its own clock.
    pub gateway: Option<&'a GatewayResults>,
}

/// A workload's combined figures.
#[derive(Debug, Clone)]
pub enum Figures {
    Echo(echo::EchoSummary),
    Packet(packet::PacketSummary),
    Ping(packet::ping::PingSummary),
    Conn(Box<conn::ConnSummary>),
}

/// What a family's figures say for themselves, the way [`Traffic`] holds what a kind
/// decides: the trial's line and text, its row in `fwbench run`'s table, the live
/// total, the JSON `result`, the stored form and the store's headline columns.
/// [`Figures::summary`] dispatches to it, once: `output` and `outcome` name no family.
pub trait Summary: ToJson {
    /// The trial line's figures, after its status (`ok: …`).
    fn line(&self) -> String;
    /// The trial's text: one aspect per indented line, `t.adaptive` where the family
    /// puts it (the rule set's and placement lines follow).
    fn text(&self, t: &TextOf) -> String;
    /// The figure cells of its row in the run's summary table (the columns after the
    /// parameters': the family's table in `output`).
    fn cells(&self) -> Vec<String>;
    /// The trial's own total of what live intervals count ([`Live::unit`]); `None`
    /// where the figures have no such count.
    fn live_total(&self) -> Option<u64>;
    /// The `result` object of the trial's JSON (`docs/schema/trial.json`). By
    /// default the figures as they serialise.
    fn json(&self) -> Option<serde_json::Value> {
        self.to_json()
    }
    /// The key its figures are stored under in `trials.results`
    /// ([`STORED_LEGACY_KEY`] is always written, null for any other).
    fn stored_key(&self) -> &'static str;
    /// Packets the source sent, which an imported ruleset's drops are counted against
    /// (`None`: not a packet count).
    fn packets_sent(&self) -> Option<u64> {
        None
    }
    /// What limited the rate the figures state (`None`: not judged, or no rate).
    fn limited_by(&self) -> Option<results::LimitedBy> {
        None
    }
    /// What the figures mean in the store's headline columns.
    fn headline(&self) -> store::Headline;
}

/// Figures as a JSON value, whatever their type ([`Summary::json`]'s default).
pub trait ToJson {
    fn to_json(&self) -> Option<serde_json::Value>;
}

impl<T: serde::Serialize> ToJson for T {
    fn to_json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}

/// The stored form's key that every trial's results carry (seed 000's echo figures;
/// null for the other families, stored under their own keys beside it).
pub const STORED_LEGACY_KEY: &str = "summary";

/// What a family's [`Summary::text`] is given besides its figures.
pub struct TextOf<'a> {
    pub p: &'a TrialParams,
    /// The gateway agent's report (interface counters).
    pub gateway: Option<&'a GatewayResults>,
    /// An adaptive trial's precision line ("" for a fixed duration).
    pub adaptive: String,
}

impl Figures {
    /// The family's figures behind the one trait: the registry of what they say.
    pub fn summary(&self) -> &dyn Summary {
        match self {
            Figures::Echo(s) => s,
            Figures::Packet(s) => s,
            Figures::Ping(s) => s,
            Figures::Conn(s) => s.as_ref(),
        }
    }

    /// Gateway events and what the traffic felt (absent without events).
    pub fn events(&self) -> Option<&events::EventsSummary> {
        match self {
            Figures::Echo(s) => s.events.as_deref(),
            Figures::Packet(s) => s.events.as_deref(),
            Figures::Ping(s) => s.events.as_deref(),
            Figures::Conn(s) => s.events.as_deref(),
        }
    }

    pub fn events_mut(&mut self) -> Option<&mut events::EventsSummary> {
        match self {
            Figures::Echo(s) => s.events.as_deref_mut(),
            Figures::Packet(s) => s.events.as_deref_mut(),
            Figures::Ping(s) => s.events.as_deref_mut(),
            Figures::Conn(s) => s.events.as_deref_mut(),
        }
    }

    /// What the figures mean in the store's headline columns.
    pub fn headline(&self) -> store::Headline {
        self.summary().headline()
    }

    /// Echo figures (their per-client rows are stored beside the headline).
    pub fn echo(&self) -> Option<&echo::EchoSummary> {
        match self {
            Figures::Echo(s) => Some(s),
            Figures::Packet(_) | Figures::Ping(_) | Figures::Conn(_) => None,
        }
    }

    /// Flood, flow and new-flow figures (what rate searches read).
    pub fn packet(&self) -> Option<&packet::PacketSummary> {
        match self {
            Figures::Packet(s) => Some(s),
            Figures::Echo(_) | Figures::Ping(_) | Figures::Conn(_) => None,
        }
    }

    /// Connection figures (what the parallelism search reads).
    pub fn conn(&self) -> Option<&conn::ConnSummary> {
        match self {
            Figures::Conn(s) => Some(s),
            Figures::Echo(_) | Figures::Packet(_) | Figures::Ping(_) => None,
        }
    }
}

/// The figures serialise as their family's summary (the stored form's value under
/// [`Summary::stored_key`]).
impl serde::Serialize for Figures {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Figures::Echo(x) => x.serialize(s),
            Figures::Packet(x) => x.serialize(s),
            Figures::Ping(x) => x.serialize(s),
            Figures::Conn(x) => x.serialize(s),
        }
    }
}

/// The metric that ranks a kind's trials (a report metric name) and its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MainMetric {
    pub name: &'static str,
    /// Higher is better (throughput), else lower (latency).
    pub higher: bool,
}

/// What a kind declares as plain data (kinds of one family share most of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// The family in the store (`trials.family`: `echo_results`, `packet_results` or
    /// `conn_results` shows the trial).
    pub family: &'static str,
    /// What ranks its trials in reports (stored with each trial).
    pub main_metric: MainMetric,
    /// What live interval lines count (`-i`), and where.
    pub live: Live,
    /// How the traffic phase ends.
    pub ending: Ending,
    /// Packet-rate work: unless the user places the roles, a trial through a gateway
    /// on the local testbed gives the gateway's packet processing a CPU of its own
    /// (`run::session::Placement`); otherwise a veth packet's forwarding and
    /// filtering run on the sender's CPU.
    pub gateway_cpu: bool,
}

/// What a kind's live interval lines (`-i`, `--json-stream`) count, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live {
    /// What one count is: `packets`, `echoes`, `sessions` …
    pub unit: &'static str,
    /// Counted at the sink (at the source without one), with the source's count for
    /// each interval's loss; otherwise counted by the client.
    pub at_sink: bool,
    /// With each interval's mean round-trip time (the client's echoes).
    pub rtt: bool,
}

/// What a workload must decide for a trial to run.
pub trait Traffic: Sync {
    /// Its family, main metric, live unit and ending.
    fn profile(&self) -> Profile;
    /// The trial's parameters in one line (plan listings, progress lines, the head of
    /// its text), before the rule set's: usually [`named_line`].
    fn params_text(&self, p: &TrialParams) -> String;
    /// The first line of a trial's text, made of its parameter line. By default that
    /// line itself (which starts with the kind's name).
    fn heading(&self, params_line: String) -> String {
        params_line
    }
    /// The specs of the server and client agents and where each runs.
    fn roles(&self, tb: &dyn Testbed, p: &TrialParams) -> Result<Roles>;
    /// Combine the roles' results (and the gateway's) into the workload's figures.
    fn collect(&self, c: Collected<'_>) -> Result<Figures>;

    /// The rate a trial sends at, as asked (the run's table shows it; `None`: the kind
    /// has none). By default its packet parameters' rate.
    fn rate(&self, p: &TrialParams) -> Option<proto::Rate> {
        p.packet().map(|k| k.rate)
    }

    /// [`Profile::family`].
    fn family(&self) -> &'static str {
        self.profile().family
    }
    /// [`Profile::main_metric`].
    fn main_metric(&self) -> MainMetric {
        self.profile().main_metric
    }
    /// [`Profile::live`]'s unit.
    fn live_unit(&self) -> &'static str {
        self.profile().live.unit
    }
    /// [`Profile::ending`].
    fn ending(&self) -> Ending {
        self.profile().ending
    }

    /// Before any agent starts: what the trial relies on this host for, held until
    /// after the agents' teardown (`None`: nothing). By default nothing.
    fn prepare(&self, _tb: &dyn Testbed, _p: &TrialParams) -> Result<Option<Box<dyn Held>>> {
        Ok(None)
    }
    /// The gateway's conntrack settings and report for a trial (`None`: untouched, no
    /// report). By default the packet parameters' table settings, when set
    /// ([`conntrack::gateway_spec`]; none for workloads without packet parameters).
    fn conntrack(&self, p: &TrialParams) -> Option<CtSpec> {
        conntrack::gateway_spec(p)
    }
    /// Complete the figures from what the trial sampled, after [`Traffic::collect`].
    /// By default a rate's `limited_by` verdict is judged again with the roles' CPU
    /// figures ([`packet_hooks::judge_limit`]: figures without one are left as they
    /// are).
    fn finish(&self, figures: &mut Figures, f: &Finish) {
        packet_hooks::judge_limit(figures, f)
    }

    /// A run's estimate of a trial's wall time beyond its rules, s, where the workload
    /// knows better than its duration plus the agents' setup (`None`: it does not).
    fn wall_s(&self, _p: &TrialParams) -> Option<f64> {
        None
    }

    /// Whether a trial of `p` may run with its client role on `clients` hosts and its
    /// server role on `servers` (a testbed file's `[[client]]`, `[[server]]` tables);
    /// why not, otherwise (bad input). By default a workload takes one host per role.
    fn spread(&self, p: &TrialParams, clients: u32, servers: u32) -> Result<(), String> {
        one_host_per_role(p, clients, servers)
    }
}

/// A kind's parameter line: its label, name, topology and address family, then `what`
/// (the kind's own parameters, as typed).
pub fn named_line(p: &TrialParams, what: &str) -> String {
    let label = p
        .label
        .as_ref()
        .map(|l| format!("[{l}] "))
        .unwrap_or_default();
    format!("{label}{} {} IPv{} {what}", p.name(), p.topology, p.family)
}

/// A workload that runs on one host per role refuses a testbed with more.
pub fn one_host_per_role(p: &TrialParams, clients: u32, servers: u32) -> Result<(), String> {
    for (role, n) in [("client", clients), ("server", servers)] {
        if n > 1 {
            return Err(format!(
                "{} runs on one {role} host; this testbed's {role} role has {n} \
                 (only flood and flow, and the ndr/mlr searches over them, spread over \
                 several hosts)",
                p.name()
            ));
        }
    }
    Ok(())
}

/// The registry: what drives each kind of trial. Searches (ndr, degrade, sweet spot)
/// are strategies over these kinds (the `search` module), not traffic of their own.
pub fn traffic(k: &TrialKind) -> &'static dyn Traffic {
    match k {
        TrialKind::Echo => &echo::Echo,
        TrialKind::Packet(PacketKind::Flood | PacketKind::Flow, _) => &packet::PacketRate,
        TrialKind::Packet(PacketKind::Ping, _) => &packet::Ping,
        TrialKind::Packet(PacketKind::NewFlows, _) => &conntrack::NewFlows,
        TrialKind::Conn(k, _) => conn::of(*k),
    }
}

/// Each family's own checks of a trial's parameters before anything starts (bad
/// input), by kind: the last of the front door's (`plan::build`) cross-field checks.
pub fn check(p: &TrialParams) -> Result<(), crate::params::Conflict> {
    match &p.kind {
        TrialKind::Echo => echo::check(p).map_err(crate::params::Conflict),
        TrialKind::Packet(PacketKind::Ping, _) => packet::check(p, &packet::Ping),
        TrialKind::Packet(PacketKind::Flood | PacketKind::Flow | PacketKind::NewFlows, _) => {
            packet::check(p, &packet::PacketRate)
        }
        TrialKind::Conn(..) => conn::check(p).map_err(crate::params::Conflict),
    }
}

/// Nanoseconds as microseconds, for the store's `*_us` columns.
pub(crate) fn us(ns: u64) -> Option<f64> {
    Some(ns as f64 / 1e3)
}

/// The store's round-trip columns (p50, p90, p99, p99.9, max) of a summary, the other
/// columns empty: the base of a kind's headline that measures round trips.
pub(crate) fn rtt_columns(r: &proto::RttSummary) -> store::Headline {
    store::Headline {
        rtt_p50_us: us(r.p50_ns),
        rtt_p90_us: us(r.p90_ns),
        rtt_p99_us: us(r.p99_ns),
        rtt_p999_us: us(r.p999_ns),
        rtt_max_us: us(r.max_ns),
        ..Default::default()
    }
}
