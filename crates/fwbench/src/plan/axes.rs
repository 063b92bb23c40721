//! The axis registry: every parameter a scenario may set or sweep, defined once —
//! its name, which workloads read it, its default per workload, its check, and a line
//! of help. Scenario files are checked and turned into [`TrialParams`] through it; the
//! command line parses the same values with the same parsers (`params::values`), and
//! `cli` tests hold its defaults equal to the registry's and its flags to the axes.
//! The `workload` axis names an [`Asked`]: a kind of traffic, or a search over one.
//! What both front doors derive from the rest is [`settle`], written once.
//!
//! Adding an axis: a row in [`AXES`], the field it fills in [`trial_params`], its flag.

use crate::params::conn::{parse_parallel, parse_size, ConnParams};
use crate::params::packet::{ping_duration, PacketParams, SenderPath, SinkKind};
use crate::params::search::SearchParams;
use crate::params::search::{Asked, Search, SearchKind};
use crate::params::topology::{chain_of, Topology};
use crate::params::values::{
    engine, model, nft_family, parse_bool, parse_clients, parse_count, parse_count0,
    parse_duration, parse_duration0, parse_interval, parse_timeout_ms, position, ratio, rule_count,
};
use crate::params::workload::{ConnKind, PacketKind, TrialKind, Workload};
use crate::params::TrialParams;
use proto::{Family, FrameSize, Proto, ServerMode};
use std::collections::BTreeMap;

/// The families of workloads, by the axes they read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Seed 000's echo.
    Echo,
    /// flood, flow, ping.
    Packet,
    /// ndr, degrade: searches over flood/flow trials (they read the packet axes too).
    Search,
    /// sessions, bulk, http, connections.
    Conn,
}

impl Class {
    pub fn of(w: Asked) -> Class {
        match w {
            Asked::Search(_) => Class::Search,
            Asked::Traffic(Workload::Echo) => Class::Echo,
            Asked::Traffic(Workload::Flood | Workload::Flow | Workload::Ping) => Class::Packet,
            Asked::Traffic(
                Workload::Sessions | Workload::Bulk | Workload::Http | Workload::Connections,
            ) => Class::Conn,
        }
    }
}

/// One axis.
pub struct Axis {
    pub name: &'static str,
    pub help: &'static str,
    /// The classes of workloads that read it (empty: every workload).
    pub users: &'static [Class],
    default: fn(Asked) -> &'static str,
    check: fn(&str, Asked) -> Result<(), String>,
}

impl Axis {
    /// The value a trial of `w` gets when the scenario does not name the axis.
    pub fn default_for(&self, w: Asked) -> &'static str {
        (self.default)(w)
    }
    /// Check one value; `Err` is the message without location.
    pub fn check(&self, value: &str, w: Asked) -> Result<(), String> {
        (self.check)(value, w)
    }
    /// The axis means nothing to `w` (a scenario naming it for `w` is wrong).
    pub fn foreign_to(&self, w: Asked) -> bool {
        !self.users.is_empty() && !self.users.contains(&Class::of(w))
    }
}

const ECHO: &[Class] = &[Class::Echo];
const PACKET: &[Class] = &[Class::Packet, Class::Search];
const PACKET_CONN: &[Class] = &[Class::Packet, Class::Search, Class::Conn];
const SEARCH: &[Class] = &[Class::Search];
const CONN: &[Class] = &[Class::Conn];
const ALL: &[Class] = &[];

/// An optional address axis value (empty: none).
fn opt_addr(t: &str) -> Result<Option<std::net::IpAddr>, String> {
    (!t.is_empty())
        .then(|| t.parse().map_err(|_| format!("'{t}' is not an IP address")))
        .transpose()
}
/// An optional port range axis value (empty: none).
fn opt_ports(t: &str) -> Result<Option<(u16, u16)>, String> {
    (!t.is_empty())
        .then(|| crate::params::packet::parse_ports(t))
        .transpose()
}
fn ok<T>(r: Result<T, String>) -> Result<(), String> {
    r.map(|_| ())
}
fn spec<T>(r: Result<T, proto::ParseSpecError>) -> Result<(), String> {
    r.map(|_| ()).map_err(|e| e.0)
}
fn size32(t: &str) -> Result<u32, String> {
    u32::try_from(parse_size(t)?).map_err(|_| format!("size '{t}' is above 4G"))
}
fn is_conn(w: Asked) -> bool {
    Class::of(w) == Class::Conn
}

macro_rules! axis {
    ($name:literal, $users:expr, $help:literal, default $default:expr, check $check:expr) => {
        Axis {
            name: $name,
            help: $help,
            users: $users,
            default: $default,
            check: $check,
        }
    };
}

/// Every axis, in the order the cross product nests them (the first varies slowest).
pub const AXES: &[Axis] = &[
    axis!(
        "topology",
        ALL,
        "forward, direct (null firewall), input (rules in INPUT), proxy",
        default | _ | "forward",
        check | t,
        _ | ok(t.parse::<Topology>())
    ),
    axis!(
        "engine",
        ALL,
        "none, nft, nft-set, iptables-legacy, iptables-nft, ipset-legacy, ipset-nft, xdp, xdp-map, xdp-generic, tc-bpf",
        default | _ | "none",
        check | t,
        _ | ok(engine(t))
    ),
    axis!(
        "nft_family",
        ALL,
        "table family of the nft engines: inet (as distributions ship; an implicit protocol check per address match) or ip (table ip / ip6)",
        default | _ | "inet",
        check | t,
        _ | ok(nft_family(t))
    ),
    axis!(
        "model",
        ALL,
        "the rule-set model (linear, raw-filler, conntrack, seed000-f2, …; a wrong name lists them all)",
        default | _ | "linear",
        check | t,
        _ | ok(model(t))
    ),
    axis!(
        "rules",
        ALL,
        "filler rule count of the model",
        default | _ | "0",
        check | t,
        _ | ok(rule_count(t))
    ),
    axis!(
        "position",
        ALL,
        "where the matching rule sits among the fillers: first, middle, last, none",
        default | _ | "last",
        check | t,
        _ | ok(position(t))
    ),
    axis!(
        "family",
        ALL,
        "4 or 6",
        default | _ | "4",
        check | t,
        _ | spec(t.parse::<Family>())
    ),
    axis!(
        "clients",
        ALL,
        "client connections (echo), source addresses (packet workloads)",
        default | w | if w == Asked::Traffic(Workload::Echo) { "5" } else { "1" },
        check | t,
        _ | ok(parse_clients(t))
    ),
    axis!(
        "duration",
        ALL,
        "trial length: 10, 2.5s, 500ms, 1m",
        default | _ | "5",
        check | t,
        _ | ok(parse_duration(t))
    ),
    axis!(
        "timeout_ms",
        ALL,
        "unsent timeout (echo), reply wait (ping), connect/read timeout (connections)",
        default | w | if is_conn(w) { "5000" } else { "500" },
        check | t,
        _ | ok(parse_timeout_ms(t))
    ),
    axis!(
        "import",
        ALL,
        "a ruleset file (`nft list ruleset`, `iptables-save`), relative to the scenario",
        default | _ | "",
        check | _,
        _ | Ok(())
    ),
    axis!(
        "proto",
        ECHO,
        "tcp, udp or sctp",
        default | _ | "tcp",
        check | t,
        _ | spec(t.parse::<Proto>())
    ),
    axis!(
        "server",
        ECHO,
        "threads (one per connection) or epoll",
        default | _ | "epoll",
        check | t,
        _ | spec(t.parse::<ServerMode>())
    ),
    axis!(
        "frame_size",
        ECHO,
        "echo frame size in bytes, or a range 64-1024",
        default | _ | "64",
        check | t,
        _ | spec(t.parse::<FrameSize>())
    ),
    axis!(
        "size",
        PACKET_CONN,
        "UDP payload (128), frame:64 (Ethernet frame); connection workloads: bytes (8M)",
        default
            | w
            | match w.workload() {
                Workload::Bulk => "1700000",
                Workload::Http => "8M",
                Workload::Flow => "128",
                Workload::Ping => "8",
                Workload::Sessions | Workload::Connections => "512",
                Workload::Echo | Workload::Flood => "18",
            },
        check | t,
        w | if is_conn(w) {
            ok(parse_size(t))
        } else {
            spec(t.parse::<proto::PacketSize>())
        }
    ),
    axis!(
        "rate",
        PACKET,
        "max, bits/s (15M), bytes/s (10MB/s = 80M) or packets/s (100kpps)",
        default
            | w
            | if w.workload() == Workload::Flow {
                "15M"
            } else {
                "max"
            },
        check | t,
        _ | spec(t.parse::<proto::Rate>())
    ),
    axis!(
        "flows",
        PACKET,
        "UDP flows (source ports)",
        default | _ | "1",
        check | t,
        _ | ok(parse_count(t))
    ),
    axis!(
        "threads",
        PACKET,
        "sender threads",
        default | _ | "1",
        check | t,
        _ | ok(parse_count(t))
    ),
    axis!(
        "sink_threads",
        PACKET,
        "sink threads",
        default | _ | "1",
        check | t,
        _ | ok(parse_count(t))
    ),
    axis!(
        "batch",
        PACKET,
        "packets per sendmmsg(2) call",
        default | _ | "64",
        check | t,
        _ | ok(parse_count(t))
    ),
    axis!(
        "sender",
        PACKET,
        "udp (sockets) or raw (Ethernet frames through AF_PACKET)",
        default | _ | "udp",
        check | t,
        _ | ok(t.parse::<SenderPath>())
    ),
    axis!(
        "sink",
        PACKET,
        "socket (a UDP sink on the server) or gateway (count at the gateway's ingress)",
        default | _ | "socket",
        check | t,
        _ | ok(t.parse::<SinkKind>())
    ),
    axis!(
        "count",
        PACKET_CONN,
        "pings to send; sessions in total (empty: for the duration)",
        default
            | w
            | if matches!(w, Asked::Traffic(Workload::Bulk | Workload::Http)) {
                "10"
            } else {
                ""
            },
        check | t,
        _ | if t.is_empty() {
            Ok(())
        } else {
            ok(parse_count(t))
        }
    ),
    axis!(
        "interval",
        PACKET,
        "gap between pings: 0, 250us, 10ms, 1s",
        default | _ | "0",
        check | t,
        _ | ok(parse_interval(t))
    ),
    axis!(
        "dport",
        PACKET,
        "destination port or range (5000-6000; the sink listens on the first)",
        default | _ | "",
        check | t,
        _ | ok(opt_ports(t))
    ),
    axis!(
        "sport",
        PACKET,
        "source port or range (flow i uses the first + i)",
        default | _ | "",
        check | t,
        _ | ok(opt_ports(t))
    ),
    axis!(
        "src",
        PACKET,
        "source address (one of the testbed's clients)",
        default | _ | "",
        check | t,
        _ | ok(opt_addr(t))
    ),
    axis!(
        "dst",
        PACKET,
        "destination address (must be the testbed's server)",
        default | _ | "",
        check | t,
        _ | ok(opt_addr(t))
    ),
    axis!(
        "aim",
        PACKET,
        "aim at rule N (or CHAIN:N) of the imported ruleset",
        default | _ | "",
        check | t,
        _ | if t.is_empty() {
            Ok(())
        } else {
            ok(crate::params::packet::parse_aim(t))
        }
    ),
    axis!(
        "event",
        PACKET,
        "gateway event during the trial: KIND:K@TIME (add:1@1s; kinds add, delete, replace, add-elements, remove-elements)",
        default | _ | "",
        check | t,
        _ | ok(crate::params::events::event_params(t, "", "", ""))
    ),
    axis!(
        "event_rate",
        PACKET,
        "gateway updates per second after the first (empty: once)",
        default | _ | "",
        check | t,
        _ | ok(crate::params::events::event_params("add:1@0s", t, "", ""))
    ),
    axis!(
        "event_count",
        PACKET,
        "gateway updates in all (empty: once, or with a rate as many as fit)",
        default | _ | "",
        check | t,
        _ | ok(crate::params::events::event_params("add:1@0s", "1", t, ""))
    ),
    axis!(
        "event_method",
        PACKET,
        "how the engine applies an update: batch, per-rule, map",
        default | _ | "batch",
        check | t,
        _ | ok(crate::params::events::event_params("add:1@0s", "", "", t))
    ),
    axis!(
        "fragment",
        PACKET,
        "allow datagrams above the MTU (IP fragments)",
        default | _ | "false",
        check | t,
        _ | ok(parse_bool(t))
    ),
    axis!(
        "loss",
        SEARCH,
        "loss still counted as a pass: 0 (NDR), 0.1%",
        default | w | if w == Asked::Search(SearchKind::Degrade) { "0.1%" } else { "0" },
        check | t,
        _ | ok(ratio(t))
    ),
    axis!(
        "precision",
        SEARCH,
        "ndr, mlr: stop when the bracket is this narrow (ndr 2%, mlr 0.5%)",
        default | w | if w == Asked::Search(SearchKind::Mlr) { "0.5%" } else { "2%" },
        check | t,
        _ | ok(ratio(t))
    ),
    axis!(
        "max_rate",
        SEARCH,
        "ndr: upper bound (max: measure it with an unpaced flood)",
        default | _ | "max",
        check | t,
        _ | spec(t.parse::<proto::Rate>())
    ),
    axis!(
        "max_trials",
        SEARCH,
        "ndr, mlr: most search trials (ndr 20, mlr 60)",
        default | w | if w == Asked::Search(SearchKind::Mlr) { "60" } else { "20" },
        check | t,
        _ | ok(parse_count(t))
    ),
    axis!(
        "goals",
        SEARCH,
        "mlr: goal loss ratios, one rate each (0,0.5%)",
        default | _ | "0,0.5%",
        check | t,
        _ | ok(crate::params::search::parse_goals(t))
    ),
    axis!(
        "initial_duration",
        SEARCH,
        "mlr: length of the first, shortest trials (the trial's duration is the final trials')",
        default | _ | "1s",
        check | t,
        _ | ok(parse_duration(t))
    ),
    axis!(
        "latency_at",
        SEARCH,
        "ndr, mlr: one-way delay after the search at these fractions of the rate found (none: skip)",
        default | _ | "10%,50%,90%,100%",
        check | t,
        _ | ok(crate::params::search::parse_fractions(t))
    ),
    axis!(
        "max_rules",
        SEARCH,
        "degrade: largest rule count searched",
        default | _ | "20000",
        check | t,
        _ | ok(rule_count(t))
    ),
    axis!(
        "resolution",
        SEARCH,
        "degrade: stop when the bracket is this many rules wide",
        default | _ | "250",
        check | t,
        _ | ok(parse_count(t))
    ),
    axis!(
        "parallel",
        CONN,
        "sessions at once (1 = sequential), or auto (sweet-spot search)",
        default | _ | "1",
        check | t,
        _ | ok(parse_parallel(t))
    ),
    axis!(
        "request",
        CONN,
        "bytes the client sends per session",
        default | _ | "64",
        check | t,
        _ | ok(size32(t))
    ),
    axis!(
        "overhead_sessions",
        CONN,
        "bulk: zero-byte sessions measured first (the overhead split)",
        default | w | if w == Asked::Traffic(Workload::Bulk) { "10" } else { "0" },
        check | t,
        _ | ok(parse_count0(t))
    ),
    axis!(
        "limit",
        CONN,
        "connections: most connections to open",
        default | _ | "10000",
        check | t,
        _ | ok(parse_count(t))
    ),
    axis!(
        "hold",
        CONN,
        "connections: how long to hold them once opening stopped",
        default | _ | "1",
        check | t,
        _ | ok(parse_duration0(t))
    ),
    axis!(
        "gateway_cpus",
        ALL,
        "CPUs the gateway's packet processing may use (RPS/XPS masks, its agent): the last N",
        default | _ | "",
        check | t,
        _ | if t.is_empty() { Ok(()) } else { ok(parse_count(t)) }
    ),
    axis!(
        "proxy_buffer",
        CONN,
        "proxy topology: the relay's block size",
        default | _ | "16K",
        check | t,
        _ | ok(size32(t))
    ),
    axis!(
        "server_program",
        CONN,
        "an external HTTP server instead of the built-in one (nginx)",
        default | _ | "",
        check | _,
        _ | Ok(())
    ),
    axis!(
        "client_program",
        CONN,
        "an external HTTP client instead of the built-in one (curl)",
        default | _ | "",
        check | _,
        _ | Ok(())
    ),
    axis!(
        "verify",
        CONN,
        "check every received byte against the generated pattern",
        default | _ | "true",
        check | t,
        _ | ok(parse_bool(t))
    ),
];

/// The axis named `name`.
pub fn find(name: &str) -> Option<&'static Axis> {
    AXES.iter().find(|a| a.name == name)
}

/// The names of every axis, for messages.
pub fn names() -> Vec<&'static str> {
    AXES.iter().map(|a| a.name).collect()
}

/// Build one trial's parameters from one value per axis (all already checked); axes
/// not named take the workload's defaults from the registry.
pub fn trial_params(v: &BTreeMap<&str, String>, seed: u64) -> Result<TrialParams, String> {
    let asked: Asked = v
        .get("workload")
        .map(String::as_str)
        .unwrap_or("")
        .parse()?;
    let workload = asked.workload();
    let get = |a: &str| -> &str {
        match v.get(a) {
            Some(s) => s.as_str(),
            // INVARIANT: every name asked for below is a row of AXES (tested).
            None => find(a).map(|x| x.default_for(asked)).unwrap_or(""),
        }
    };
    let spec = |e: proto::ParseSpecError| e.0;
    let topology: Topology = get("topology").parse()?;
    let frame: FrameSize = get("frame_size").parse().map_err(spec)?;
    let import = Some(get("import").to_string()).filter(|s| !s.is_empty());
    let mut model = model(get("model"))?;
    if import.is_some() && !v.contains_key("model_given") {
        model = firewall::models::Model::Import;
    }
    let opt = |a: &str| Some(get(a).to_string()).filter(|s| !s.is_empty());
    let conn = |_: ConnKind| -> Result<ConnParams, String> {
        Ok(ConnParams {
            parallel: parse_parallel(get("parallel"))?,
            count: opt("count")
                .map(|c| parse_count(&c).map(u64::from))
                .transpose()?,
            request: size32(get("request"))?,
            size: parse_size(get("size"))?,
            overhead_sessions: parse_count0(get("overhead_sessions"))?,
            limit: parse_count(get("limit"))?,
            hold_s: parse_duration0(get("hold"))?,
            proxy_buffer: size32(get("proxy_buffer"))?,
            server_program: opt("server_program"),
            client_program: opt("client_program"),
            verify: parse_bool(get("verify"))?,
            timeout_ms: parse_timeout_ms(get("timeout_ms"))?,
        })
    };
    let packet = |_: PacketKind| -> Result<PacketParams, String> {
        Ok(PacketParams {
            size: get("size").parse().map_err(spec)?,
            rate: get("rate").parse().map_err(spec)?,
            flows: parse_count(get("flows"))?,
            threads: parse_count(get("threads"))?,
            sink_threads: parse_count(get("sink_threads"))?,
            batch: parse_count(get("batch"))?,
            sender: get("sender").parse()?,
            sink: get("sink").parse()?,
            count: Some(get("count"))
                .filter(|c| !c.is_empty())
                .map(|c| parse_count(c).map(u64::from))
                .transpose()?,
            interval_ns: parse_interval(get("interval"))?,
            fragment: parse_bool(get("fragment"))?,
            dport: opt_ports(get("dport"))?,
            sport: opt_ports(get("sport"))?,
            src: opt_addr(get("src"))?,
            dst: opt_addr(get("dst"))?,
            aim: Some(get("aim"))
                .filter(|a| !a.is_empty())
                .map(crate::params::packet::parse_aim)
                .transpose()?,
            events: crate::params::events::event_params(
                get("event"),
                get("event_rate"),
                get("event_count"),
                get("event_method"),
            )?,
        })
    };
    let kind = workload.kind(packet, conn)?;
    let search = asked
        .search()
        .map(|s| -> Result<Search, String> {
            Ok(s.with(SearchParams {
                loss: ratio(get("loss"))?,
                precision: ratio(get("precision"))?,
                max_rate: Some(get("max_rate").parse::<proto::Rate>().map_err(spec)?)
                    .filter(|r| *r != proto::Rate::Max),
                max_trials: parse_count(get("max_trials"))?,
                max_rules: rule_count(get("max_rules"))?,
                resolution: parse_count(get("resolution"))?,
                goals: match s {
                    SearchKind::Mlr => crate::params::search::parse_goals(get("goals"))?,
                    SearchKind::Ndr | SearchKind::Degrade => vec![],
                },
                latency_at: crate::params::search::parse_fractions(get("latency_at"))?,
                initial_duration_s: match s {
                    SearchKind::Mlr => Some(parse_duration(get("initial_duration"))?),
                    SearchKind::Ndr | SearchKind::Degrade => None,
                },
            }))
        })
        .transpose()?
        .or_else(|| sweet_spot(&kind));
    let duration_s = parse_duration(get("duration"))?;
    let timeout_ms = parse_timeout_ms(get("timeout_ms"))?;
    let proto = match &kind {
        TrialKind::Echo => get("proto").parse().map_err(spec)?,
        TrialKind::Conn(..) => Proto::Tcp,
        TrialKind::Packet(..) => Proto::Udp,
    };
    let mut p = TrialParams {
        topology,
        clients: parse_clients(get("clients"))?,
        duration_s,
        frame_size: frame.to_string(),
        frame,
        proto,
        family: get("family").parse().map_err(spec)?,
        server: get("server").parse().map_err(spec)?,
        timeout_ms,
        seed,
        engine: engine(get("engine"))?,
        model,
        rules: rule_count(get("rules"))?,
        position: position(get("position"))?,
        chain: chain_of(topology),
        nft_family: nft_family(get("nft_family"))?,
        import,
        kind,
        search,
        adaptive: None,
        label: v.get("label").filter(|l| !l.is_empty()).cloned(),
        gateway_cpus: opt("gateway_cpus").map(|n| parse_count(&n)).transpose()?,
    };
    settle(&mut p);
    Ok(p)
}

/// The sweet-spot search a sessions trial with `parallel` auto (0) asks for.
pub fn sweet_spot(kind: &TrialKind) -> Option<Search> {
    match kind {
        TrialKind::Conn(ConnKind::Sessions, k) if k.parallel == 0 => Some(Search::SweetSpot),
        TrialKind::Conn(..) | TrialKind::Echo | TrialKind::Packet(..) => None,
    }
}

/// What follows from the rest, written once for every way a trial is built: a degrade
/// search's pre-flight renders its largest rule set; a ping trial lasts long enough
/// for its probes.
pub fn settle(p: &mut TrialParams) {
    if let Some(Search::Degrade(sp)) = &p.search {
        // The search varies the rule count; pre-flight renders the largest.
        p.rules = sp.max_rules;
    }
    if let TrialKind::Packet(PacketKind::Ping, k) = &p.kind {
        p.duration_s = ping_duration(p.duration_s, k.count, k.interval_ns, p.timeout_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_defaults_pass_their_own_check() {
        let mut seen = std::collections::HashSet::new();
        for a in AXES {
            assert!(seen.insert(a.name), "axis {} twice", a.name);
            for w in Asked::names().iter().map(|n| n.parse::<Asked>().unwrap()) {
                if a.foreign_to(w) {
                    continue;
                }
                let d = a.default_for(w);
                assert!(a.check(d, w).is_ok(), "{} default {d:?} for {w}", a.name);
            }
        }
    }

    #[test]
    fn every_workload_builds_from_defaults_alone() {
        for name in Asked::names() {
            let v = BTreeMap::from([("workload", name.to_string())]);
            let p = trial_params(&v, 7).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(p.name(), name);
        }
    }

    #[test]
    fn foreign_axes_follow_the_classes() {
        let size = find("size").unwrap();
        assert!(
            !size.foreign_to(Asked::Traffic(Workload::Http))
                && !size.foreign_to(Asked::Traffic(Workload::Flood))
        );
        assert!(size.foreign_to(Asked::Traffic(Workload::Echo)));
        assert!(find("proto")
            .unwrap()
            .foreign_to(Asked::Traffic(Workload::Flood)));
        assert!(find("loss")
            .unwrap()
            .foreign_to(Asked::Traffic(Workload::Flood)));
        assert!(!find("loss")
            .unwrap()
            .foreign_to(Asked::Search(SearchKind::Ndr)));
        assert!(!find("rate")
            .unwrap()
            .foreign_to(Asked::Search(SearchKind::Degrade)));
        assert!(find("parallel")
            .unwrap()
            .foreign_to(Asked::Traffic(Workload::Ping)));
        assert!(!find("engine")
            .unwrap()
            .foreign_to(Asked::Traffic(Workload::Connections)));
    }
}
