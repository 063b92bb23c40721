//! The axis registry: every parameter a scenario may set or sweep, defined once —
//! its name, its type, which classes of workloads read it, its default (where that
//! differs by workload, the workload's own: `Workload::axis_defaults`), its parser,
//! and a line of help. The table names no workload: what a kind decides (its class,
//! transport, duration, whether it asks for the sweet spot) it says itself in
//! `params::workload`. Each value is parsed once ([`Axis::parse`]) into its typed
//! [`Value`]; one trial's values are an [`AxisValues`] (the registry's defaults for
//! the workload, then what was given); [`trial_params`] builds [`TrialParams`] from
//! it, called only through the front door `plan::build::build` (which adds
//! the caller's context and the cross-field checks) by scenario files and the trial
//! commands (which set their typed flags on an `AxisValues`). `cli` tests hold its
//! flags to the axes. A value refused is a [`ValueError`], its message without location.
//! The `workload` axis names an [`Asked`]: a kind of traffic, or a search over one.
//!
//! Adding an axis: a row in `axes!` below (name, type, users, help, default, parser),
//! the field it fills in [`trial_params`], its flag.

use crate::params::conn::{parse_parallel, parse_size, ConnParams};
use crate::params::events::{
    parse_event_count, parse_event_method, parse_event_place, parse_event_rate, parse_opt_event,
    parse_opt_load, Event, Load,
};
use crate::params::packet::{PacketParams, SenderPath, SinkKind};
use crate::params::search::SearchParams;
use crate::params::search::{Asked, Search, SearchKind};
use crate::params::topology::{chain_of, Topology};
use crate::params::values::ValueError;
use crate::params::values::{
    engine, model, named, nft_family, parse_bool, parse_clients, parse_count, parse_count0,
    parse_duration, parse_duration0, parse_interval, parse_timeout_ms, position, ratio, rule_count,
};
use crate::params::workload::{ConnKind, PacketKind};
use crate::params::TrialParams;
use firewall::models::{Model, Position};
use proto::{EventPlace, Family, FrameSize, PacketSize, Proto, Rate, ServerMode, UpdateMethod};
use std::net::IpAddr;

pub use crate::params::workload::Class;

impl Class {
    /// The class of what the `workload` axis names: a search's, or its workload's own.
    pub fn of(w: Asked) -> Class {
        match w {
            Asked::Search(_) => Class::Search,
            Asked::Traffic(w) => w.class(),
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
    parse: fn(&str, Asked) -> Result<Value, ValueError>,
}

impl Axis {
    /// The value a trial of `w` gets when the scenario does not name the axis.
    pub fn default_for(&self, w: Asked) -> &'static str {
        (self.default)(w)
    }
    /// Parse one value for a trial of `w` into its typed form, once; `Err` is the
    /// message without location.
    pub fn parse(&self, value: &str, w: Asked) -> Result<Value, ValueError> {
        (self.parse)(value, w)
    }
    /// The axis means nothing to `w` (a scenario naming it for `w` is wrong).
    pub fn foreign_to(&self, w: Asked) -> bool {
        !self.users.is_empty() && !self.users.contains(&Class::of(w))
    }
}

/// The `size` axis: a packet size (packet workloads) or bytes (connection workloads).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    Packet(PacketSize),
    Bytes(u64),
}

impl Size {
    fn parse(t: &str, w: Asked) -> Result<Size, ValueError> {
        if is_conn(w) {
            parse_size(t).map(Size::Bytes)
        } else {
            named(t).map(Size::Packet)
        }
    }
    /// As a packet workload's size (a byte count given in `[params]` for a connection
    /// workload's row is a UDP payload).
    fn packet(self) -> Result<PacketSize, ValueError> {
        match self {
            Size::Packet(s) => Ok(s),
            Size::Bytes(n) => u32::try_from(n)
                .ok()
                .filter(|&n| n <= 65_535)
                .map(PacketSize::Payload)
                .ok_or_else(|| {
                    ValueError::Other(format!("size {n} is above 65535 bytes (a packet size)"))
                }),
        }
    }
    /// As a connection workload's byte count.
    fn bytes(self) -> Result<u64, ValueError> {
        match self {
            Size::Bytes(n) => Ok(n),
            Size::Packet(PacketSize::Payload(n)) => Ok(u64::from(n)),
            Size::Packet(s @ (PacketSize::Frame(_) | PacketSize::Mix(_))) => {
                Err(ValueError::Other(format!(
                    "size {s} is a packet size; connection workloads take bytes (8M)"
                )))
            }
        }
    }
}

const ECHO: &[Class] = &[Class::Echo];
const PACKET: &[Class] = &[Class::Packet, Class::Search];
const PACKET_CONN: &[Class] = &[Class::Packet, Class::Search, Class::Conn];
const SEARCH: &[Class] = &[Class::Search];
const CONN: &[Class] = &[Class::Conn];
const ALL: &[Class] = &[];

/// An optional address axis value (empty: none).
fn opt_addr(t: &str) -> Result<Option<IpAddr>, ValueError> {
    (!t.is_empty())
        .then(|| {
            t.parse()
                .map_err(|_| ValueError::Other(format!("'{t}' is not an IP address")))
        })
        .transpose()
}
/// An optional port range axis value (empty: none).
fn opt_ports(t: &str) -> Result<Option<(u16, u16)>, ValueError> {
    (!t.is_empty())
        .then(|| crate::params::packet::parse_ports(t))
        .transpose()
}
/// An optional count (empty: none).
/// A table fill (empty or 0: none, so that a sweep can start at an empty table).
fn opt_fill(t: &str) -> Result<Option<u32>, ValueError> {
    Ok((!t.is_empty())
        .then(|| parse_count0(t))
        .transpose()?
        .filter(|n| *n > 0))
}
fn opt_count(t: &str) -> Result<Option<u32>, ValueError> {
    (!t.is_empty()).then(|| parse_count(t)).transpose()
}
/// Conntrack hash buckets (empty: none), within [`crate::limits::MAX_CT_BUCKETS`].
fn opt_buckets(t: &str) -> Result<Option<u32>, ValueError> {
    let n = opt_count(t)?;
    let most = crate::limits::MAX_CT_BUCKETS;
    match n {
        Some(b) if b > most => Err(ValueError::refused(
            "conntrack hash buckets",
            t,
            format!("are more than {most} (the host's table is allocated whole: 8 bytes a bucket)"),
        )),
        _ => Ok(n),
    }
}
/// An optional text (empty: none).
fn opt_text(t: &str) -> Result<Option<String>, ValueError> {
    Ok(Some(t.to_string()).filter(|s| !s.is_empty()))
}
fn size32(t: &str) -> Result<u32, ValueError> {
    u32::try_from(parse_size(t)?).map_err(|_| ValueError::Other(format!("size '{t}' is above 4G")))
}
fn is_conn(w: Asked) -> bool {
    Class::of(w) == Class::Conn
}

/// The registry, one line per axis: its name (also its field in [`AxisValues`] and its
/// variant in [`Value`]), type, users, help, default text per workload and parser.
macro_rules! axes {
    ($($name:ident: $ty:ty, $users:expr, $help:literal,
       default($dw:pat_param) $default:expr,
       parse($pt:ident, $pw:pat_param) $parse:expr;)*) => {
        /// One axis value, parsed once into its typed form (the variant is the axis).
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum Value {
            $($name($ty),)*
            /// The workload (not a registry row: it chooses the defaults).
            workload(Asked),
            /// A trial's label (not a registry row: no default, no parser).
            label(String),
        }

        /// One trial's value of every axis, typed: the registry's defaults for
        /// `workload`, then what a scenario or a command gave ([`AxisValues::set`]).
        #[derive(Debug, Clone, PartialEq)]
        pub struct AxisValues {
            pub workload: Asked,
            /// `model` was given (else an `import` implies the import model).
            pub model_given: bool,
            pub label: Option<String>,
            $(pub $name: $ty,)*
        }

        impl AxisValues {
            /// The registry's defaults for a trial of `w`.
            pub fn defaults(w: Asked) -> AxisValues {
                AxisValues {
                    workload: w,
                    model_given: false,
                    label: None,
                    $($name: {
                        fn default($dw: Asked) -> &'static str { $default }
                        fn parse($pt: &str, $pw: Asked) -> Result<$ty, ValueError> {
                            let typed: Result<$ty, _> = $parse;
                            typed.map_err(ValueError::from)
                        }
                        // INVARIANT: every default passes its own parser for every
                        // workload (tested below).
                        parse(default(w), w).expect("the registry's default parses")
                    },)*
                }
            }
            /// Take one given value.
            pub fn set(&mut self, v: Value) {
                self.model_given |= matches!(v, Value::model(_));
                match v {
                    $(Value::$name(x) => self.$name = x,)*
                    Value::workload(w) => self.workload = w,
                    Value::label(l) => self.label = Some(l).filter(|l| !l.is_empty()),
                }
            }
        }

        /// Every axis, in the order the cross product nests them (the first varies slowest).
        pub const AXES: &[Axis] = &[$(Axis {
            name: stringify!($name),
            help: $help,
            users: $users,
            default: {
                fn default($dw: Asked) -> &'static str { $default }
                default
            },
            parse: {
                fn parse($pt: &str, $pw: Asked) -> Result<Value, ValueError> {
                    let typed: Result<$ty, _> = $parse;
                    typed.map(Value::$name).map_err(ValueError::from)
                }
                parse
            },
        },)*];
    };
}

axes! {
    topology: Topology, ALL, "forward, direct (null firewall), input (rules in INPUT), proxy", default(_) "forward", parse(t, _) t.parse();
    engine: firewall::Engine, ALL, "none, nft, nft-set, iptables-legacy, iptables-nft, ipset-legacy, ipset-nft, xdp, xdp-map, xdp-generic, tc-bpf", default(_) "none", parse(t, _) engine(t);
    nft_family: firewall::NftFamily, ALL, "table family of the nft engines: inet (as distributions ship; an implicit protocol check per address match) or ip (table ip / ip6)", default(_) "inet", parse(t, _) nft_family(t);
    nat_to: Option<IpAddr>, ALL, "model snat: translate to this address of the client network (198.18.0.3 …) instead of the gateway's server-side address", default(_) "", parse(t, _) opt_addr(t);
    model: Model, ALL, "the rule-set model (linear, raw-filler, conntrack, seed000-f2, …; a wrong name lists them all)", default(_) "linear", parse(t, _) model(t);
    rules: u32, ALL, "filler rule count of the model", default(_) "0", parse(t, _) rule_count(t);
    position: Position, ALL, "where the matching rule sits among the fillers: first, middle, last, none", default(_) "last", parse(t, _) position(t);
    family: Family, ALL, "4 or 6", default(_) "4", parse(t, _) named(t);
    clients: u32, ALL, "client connections (echo), source addresses (packet workloads)", default(w) w.workload().axis_defaults().clients, parse(t, _) parse_clients(t);
    duration: f64, ALL, "trial length: 10, 2.5s, 500ms, 1m", default(_) "5", parse(t, _) parse_duration(t);
    timeout_ms: u32, ALL, "unsent timeout (echo), reply wait (ping), connect/read timeout (connections)", default(w) if is_conn(w) { "5000" } else { "500" }, parse(t, _) parse_timeout_ms(t);
    import: Option<String>, ALL, "a ruleset file (`nft list ruleset`, `iptables-save`), relative to the scenario", default(_) "", parse(t, _) opt_text(t);
    import_ipset: Option<String>, ALL, "the ipsets an imported iptables-save file matches (`ipset save` output), relative to the scenario", default(_) "", parse(t, _) opt_text(t);
    proto: Proto, ECHO, "tcp, udp or sctp", default(_) "tcp", parse(t, _) named(t);
    server: ServerMode, ECHO, "threads (one per connection) or epoll", default(_) "epoll", parse(t, _) named(t);
    frame_size: FrameSize, ECHO, "echo frame size in bytes, or a range 64-1024", default(_) "64", parse(t, _) named(t);
    size: Size, PACKET_CONN, "UDP payload (128), frame:64 (Ethernet frame), a frame-size mix (imix, csit-imix, 64:7,576:4,1500:1); connection workloads: bytes (8M)", default(w) w.workload().axis_defaults().size, parse(t, w) Size::parse(t, w);
    rate: Rate, PACKET, "max, bits/s (15M), bytes/s (10MB/s = 80M) or packets/s (100kpps)", default(w) w.workload().axis_defaults().rate, parse(t, _) named(t);
    flows: u32, PACKET, "UDP flows (source ports)", default(_) "1", parse(t, _) parse_count(t);
    dsts: u32, PACKET, "destination addresses the flows are spread over (flow i to i mod N)", default(_) "1", parse(t, _) parse_count(t);
    threads: u32, PACKET, "sender threads", default(_) "1", parse(t, _) parse_count(t);
    sink_threads: u32, PACKET, "sink threads", default(_) "1", parse(t, _) parse_count(t);
    batch: u32, PACKET, "packets per sendmmsg(2) call", default(_) "64", parse(t, _) parse_count(t);
    sender: SenderPath, PACKET, "udp (sockets) or raw (Ethernet frames through AF_PACKET)", default(_) "udp", parse(t, _) named(t);
    sink: SinkKind, PACKET, "socket (a UDP sink on the server) or gateway (count at the gateway's ingress)", default(_) "socket", parse(t, _) named(t);
    count: Option<u64>, PACKET_CONN, "pings to send; sessions in total (empty: for the duration)", default(w) w.workload().axis_defaults().count, parse(t, _) opt_count(t).map(|c| c.map(u64::from));
    interval: u64, PACKET, "gap between pings: 0, 250us, 10ms, 1s", default(_) "0", parse(t, _) parse_interval(t);
    dport: Option<(u16, u16)>, PACKET, "destination port or range (5000-6000; the sink listens on the first)", default(_) "", parse(t, _) opt_ports(t);
    sport: Option<(u16, u16)>, PACKET, "source port or range (flow i uses the first + i)", default(_) "", parse(t, _) opt_ports(t);
    src: Option<IpAddr>, PACKET, "source address (one of the testbed's clients)", default(_) "", parse(t, _) opt_addr(t);
    dst: Option<IpAddr>, PACKET, "destination address (must be the testbed's server)", default(_) "", parse(t, _) opt_addr(t);
    aim: Option<String>, PACKET, "aim at rule N (or CHAIN:N) of the imported ruleset", default(_) "", parse(t, _) (!t.is_empty()).then(|| crate::params::packet::parse_aim(t)).transpose();
    event: Option<Event>, ALL, "gateway event during the trial: KIND:K@TIME (add:1@1s; kinds add, delete, replace, add-elements, remove-elements, reload)", default(_) "", parse(t, _) parse_opt_event(t);
    event_rate: Option<f64>, ALL, "gateway updates per second after the first (empty: once)", default(_) "", parse(t, _) parse_event_rate(t);
    event_count: Option<u32>, ALL, "gateway updates in all (empty: once, or with a rate as many as fit)", default(_) "", parse(t, _) parse_event_count(t);
    event_method: UpdateMethod, ALL, "how the engine applies an update: batch, per-rule, map, flush-load (replace, reload: removed, then installed)", default(_) "batch", parse(t, _) parse_event_method(t);
    event_place: EventPlace, ALL, "where an add puts its rules: head, after-established (behind the chain's established-accept rule: --model stateful), or after-established-ct-delete (the same, then the marker source's conntrack entries deleted)", default(_) "head", parse(t, _) parse_event_place(t);
    event_load: Option<Load>, ALL, "with an event, a flood's, flow's or envelope's background at a share of what the gateway forwards at the installed size: F (found by a short search first) or F@RATE (of a stated rate); empty: the rate as given", default(_) "", parse(t, _) parse_opt_load(t);
    event_trace: Option<String>, ALL, "churn replay: a trace file of gateway updates, one `TIME OP [K]` per line (0.5s add 1; docs/events.md), relative to the scenario; instead of event, event_rate and event_count", default(_) "", parse(t, _) opt_text(t);
    fragment: bool, PACKET, "allow datagrams above the MTU (IP fragments)", default(_) "false", parse(t, _) parse_bool(t);
    ct_max: Option<u32>, PACKET, "nf_conntrack_max during the trial (empty: as found; global on kernels where a namespace cannot set it: set under a lock, restored exactly)", default(_) "", parse(t, _) opt_count(t);
    ct_buckets: Option<u32>, PACKET, "conntrack hash buckets during the trial (empty: as found; global like ct_max; at most 16777216)", default(_) "", parse(t, _) opt_buckets(t);
    ct_udp_timeout: Option<u32>, PACKET, "unreplied-UDP conntrack timeout, seconds (empty: as found; per namespace)", default(_) "", parse(t, _) opt_count(t);
    ct_fill: Option<u32>, PACKET, "idle UDP entries put in the gateway's conntrack table before the trial (empty or 0: none; up to 1000000)", default(_) "", parse(t, _) opt_fill(t);
    loss: f64, SEARCH, "loss still counted as a pass: 0 (NDR), 0.1%", default(w) if w == Asked::Search(SearchKind::Degrade) { "0.1%" } else { "0" }, parse(t, _) ratio(t);
    precision: f64, SEARCH, "ndr, mlr, envelope: stop when the bracket is this narrow (ndr 2%, mlr 0.5%, envelope 10%)", default(w) if w == Asked::Search(SearchKind::Mlr) { "0.5%" } else if w == Asked::Search(SearchKind::Envelope) { "10%" } else { "2%" }, parse(t, _) ratio(t);
    max_rate: Rate, SEARCH, "ndr: upper bound (max: measure it with an unpaced flood)", default(_) "max", parse(t, _) named(t);
    max_trials: u32, SEARCH, "ndr, mlr, envelope: most search trials (ndr 20, mlr 60, envelope 12)", default(w) if w == Asked::Search(SearchKind::Mlr) { "60" } else if w == Asked::Search(SearchKind::Envelope) { "12" } else { "20" }, parse(t, _) parse_count(t);
    latency_target: f64, SEARCH, "envelope: the p99 latency of updates, from due to committed, a rate must stay under", default(_) "100ms", parse(t, _) parse_duration(t);
    effect_target: f64, SEARCH, "envelope: the longest time to effect a rate may show", default(_) "1s", parse(t, _) parse_duration(t);
    max_update_rate: f64, SEARCH, "envelope: the highest update rate searched, updates/s", default(_) "100", parse(t, _) parse_event_rate(t).and_then(|r| r.ok_or_else(|| "max_update_rate: give updates/s".into()));
    goals: Vec<f64>, SEARCH, "mlr: goal loss ratios, one rate each (0,0.5%)", default(_) "0,0.5%", parse(t, _) crate::params::search::parse_goals(t);
    initial_duration: f64, SEARCH, "mlr: length of the first, shortest trials (the trial's duration is the final trials')", default(_) "1s", parse(t, _) parse_duration(t);
    latency_at: Vec<f64>, SEARCH, "ndr, mlr: one-way delay after the search at these fractions of the rate found (none: skip)", default(_) "10%,50%,90%,100%", parse(t, _) crate::params::search::parse_fractions(t);
    max_rules: u32, SEARCH, "degrade: largest rule count searched", default(_) "20000", parse(t, _) rule_count(t);
    resolution: u32, SEARCH, "degrade: stop when the bracket is this many rules wide", default(_) "250", parse(t, _) parse_count(t);
    parallel: u32, CONN, "sessions at once (1 = sequential), or auto (sweet-spot search)", default(_) "1", parse(t, _) parse_parallel(t);
    request: u32, CONN, "bytes the client sends per session", default(_) "64", parse(t, _) size32(t);
    overhead_sessions: u32, CONN, "bulk: zero-byte sessions measured first (the overhead split)", default(w) w.workload().axis_defaults().overhead_sessions, parse(t, _) parse_count0(t);
    limit: u32, CONN, "connections: most connections to open", default(_) "10000", parse(t, _) parse_count(t);
    hold: f64, CONN, "connections: how long to hold them once opening stopped", default(_) "1", parse(t, _) parse_duration0(t);
    gateway_cpus: Option<u32>, ALL, "CPUs the gateway's packet processing may use (RPS/XPS masks, its agent): the last N", default(_) "", parse(t, _) opt_count(t);
    proxy_buffer: u32, CONN, "proxy topology: the relay's block size", default(_) "16K", parse(t, _) size32(t);
    server_program: Option<String>, CONN, "an external HTTP server instead of the built-in one (nginx)", default(_) "", parse(t, _) opt_text(t);
    client_program: Option<String>, CONN, "an external HTTP client instead of the built-in one (curl)", default(_) "", parse(t, _) opt_text(t);
    verify: bool, CONN, "check every received byte against the generated pattern", default(_) "true", parse(t, _) parse_bool(t);
}

/// The axis named `name`.
pub fn find(name: &str) -> Option<&'static Axis> {
    AXES.iter().find(|a| a.name == name)
}

/// The names of every axis, for messages.
pub fn names() -> Vec<&'static str> {
    AXES.iter().map(|a| a.name).collect()
}

impl AxisValues {
    /// The defaults of `w` with values given as text (`name`, value), each parsed once;
    /// `Err` names the axis.
    pub fn from_text(w: Asked, given: &[(&str, &str)]) -> Result<AxisValues, ValueError> {
        let mut v = AxisValues::defaults(w);
        for (name, text) in given {
            let axis = find(name).ok_or_else(|| ValueError::Other(format!("no axis {name}")))?;
            v.set(axis.parse(text, w).map_err(|e| format!("{name}: {e}"))?);
        }
        Ok(v)
    }
}

/// The builder of [`TrialParams`]: one trial's typed axis values → its parameters,
/// with what follows from them ([`settle`]). Called only by the front door,
/// `plan::build::build`, which then runs the cross-field checks.
pub(in crate::plan) fn trial_params(v: &AxisValues, seed: u64) -> Result<TrialParams, ValueError> {
    let model = match (&v.import, v.model_given) {
        (Some(_), false) => Model::Import,
        (Some(_) | None, _) => v.model,
    };
    let conn = |_: ConnKind| -> Result<ConnParams, ValueError> {
        Ok(ConnParams {
            parallel: v.parallel,
            count: v.count,
            request: v.request,
            size: v.size.bytes()?,
            overhead_sessions: v.overhead_sessions,
            limit: v.limit,
            hold_s: v.hold,
            proxy_buffer: v.proxy_buffer,
            server_program: v.server_program.clone(),
            client_program: v.client_program.clone(),
            verify: v.verify,
            timeout_ms: v.timeout_ms,
        })
    };
    let packet = |_: PacketKind| -> Result<PacketParams, ValueError> {
        Ok(PacketParams {
            size: v.size.packet()?,
            rate: v.rate,
            flows: v.flows,
            dsts: v.dsts,
            threads: v.threads,
            sink_threads: v.sink_threads,
            batch: v.batch,
            sender: v.sender,
            sink: v.sink,
            count: v.count,
            interval_ns: v.interval,
            fragment: v.fragment,
            dport: v.dport,
            sport: v.sport,
            src: v.src,
            dst: v.dst,
            aim: v.aim.clone(),
            ct_max: v.ct_max,
            ct_buckets: v.ct_buckets,
            ct_udp_timeout: v.ct_udp_timeout,
            ct_fill: v.ct_fill,
        })
    };
    let kind = v.workload.workload().kind(packet, conn)?;
    let events = crate::params::events::combine(
        v.event,
        v.event_rate,
        v.event_count,
        v.event_method,
        v.event_load.clone(),
        v.event_place,
        v.event_trace.clone(),
    )?;
    let search = v
        .workload
        .search()
        .map(|s| {
            s.with(SearchParams {
                loss: v.loss,
                precision: v.precision,
                max_rate: Some(v.max_rate).filter(|r| *r != Rate::Max),
                max_trials: v.max_trials,
                max_rules: v.max_rules,
                resolution: v.resolution,
                goals: match s {
                    SearchKind::Mlr => v.goals.clone(),
                    SearchKind::Ndr
                    | SearchKind::NdrNewflows
                    | SearchKind::Degrade
                    | SearchKind::Envelope => vec![],
                },
                latency_at: v.latency_at.clone(),
                initial_duration_s: match s {
                    SearchKind::Mlr => Some(v.initial_duration),
                    SearchKind::Ndr
                    | SearchKind::NdrNewflows
                    | SearchKind::Degrade
                    | SearchKind::Envelope => None,
                },
                envelope: match s {
                    SearchKind::Envelope => Some(crate::params::search::Targets {
                        latency_ms: v.latency_target * 1e3,
                        effect_ms: v.effect_target * 1e3,
                        max_update_rate: v.max_update_rate,
                    }),
                    SearchKind::Mlr
                    | SearchKind::Ndr
                    | SearchKind::NdrNewflows
                    | SearchKind::Degrade => None,
                },
                // Only `--load`'s own capacity search (search::load) asks it.
                queue_fails: false,
            })
        })
        .or_else(|| kind.asks_sweet_spot().then_some(Search::SweetSpot));
    let proto = kind.transport(v.proto);
    let mut p = TrialParams {
        topology: v.topology,
        clients: v.clients,
        duration_s: v.duration,
        frame_size: v.frame_size.to_string(),
        frame: v.frame_size,
        proto,
        family: v.family,
        server: v.server,
        timeout_ms: v.timeout_ms,
        seed,
        engine: v.engine,
        model,
        rules: v.rules,
        position: v.position,
        chain: chain_of(v.topology),
        nft_family: v.nft_family,
        nat_to: v.nat_to,
        import: v.import.clone(),
        import_ipset: v.import_ipset.clone(),
        kind,
        events,
        search,
        adaptive: None,
        label: v.label.clone(),
        gateway_cpus: v.gateway_cpus,
    };
    settle(&mut p);
    Ok(p)
}

/// What follows from the rest, written once: a degrade search's pre-flight renders
/// its largest rule set; a trial lasts as long as its kind says (a ping long
/// enough for its probes).
fn settle(p: &mut TrialParams) {
    if let Some(Search::Degrade(sp)) = &p.search {
        // The search varies the rule count; pre-flight renders the largest.
        p.rules = sp.max_rules;
    }
    p.duration_s = p.kind.lasts(p.duration_s, p.timeout_ms);
}

#[cfg(test)]
#[path = "axes_tests.rs"]
mod tests;
