//! Command line: what the user typed (clap, no syscalls) → calls into the parts.
//!
//! A trial command is named as the registry names what it asks for (`flood`, `ndr`:
//! `params::workload`), so its name says it (`Cli::try_parse_named`); its own flags
//! only set axis values (`Flags`). Must not: name a workload or decide for one
//! (defaults, checks: the axis registry and the kinds do).

#[cfg(test)]
#[path = "tests/key_fixture.rs"]
mod key_fixture;
mod live;

use crate::error::usage;
use crate::params::search::Asked;
use crate::params::topology::Topology;
use crate::params::values::*;
use crate::params::workload::Workload;
use crate::params::{Pinning, Placement, TrialParams};
use crate::plan::axes::{AxisValues, Size};
pub use crate::plan::flags::FirewallArgs;
use crate::run::compare::CompareArgs;
use crate::run::report::ReportArgs;
use crate::run::scenario::RunArgs;
use crate::run::trend::TrendArgs;
use crate::run::worklang::WorkloadArgs;
use crate::testbed::netns::NetnsTestbed;
use crate::testbed::Testbed;
use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use live::LiveArgs;
use proto::{Family, FrameSize, Proto, ServerMode};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "fwbench",
    version = crate::version::VERSION,
    about = "Firewall performance test bench: what a packet filter costs the traffic that crosses it",
    after_help = "Exit codes: 0 ok, 1 measurement/system failure, 2 bad input, 3 compare, trend: a \
                  change could not be tested or judged (too few repetitions, or fwbench \
                  limited them), 130 interrupted.\n\
                  Logs go to stderr (-v, -vv, or RUST_LOG); results go to stdout and results.db."
)]
struct Cli {
    /// More log output on stderr (-v: trial phases, -vv: debug)
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    cmd: Cmd,
    /// What a trial command asks for: a trial command is named as the registry names
    /// its workload or search (`flood`, `ndr`, …), so its name says it
    /// ([`Cli::try_parse_named`]); `None` for the other commands.
    #[arg(skip)]
    asked: Option<Asked>,
}

impl Cli {
    /// Parse the arguments as `try_parse_from` does, and take the command's name as
    /// what a trial command asks for.
    fn try_parse_named<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches};
        let mut matches = Cli::command().try_get_matches_from(args)?;
        // (Read before the typed parse, which takes the subcommand out.)
        let asked = matches.subcommand_name().and_then(|n| n.parse().ok());
        let mut cli =
            Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut Cli::command()))?;
        cli.asked = asked;
        Ok(cli)
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario file (or, with none, the default experiment, which writes report.html); resumes an unfinished run
    #[command(
        after_help = "Example:\n  fwbench run scenarios/seed002.toml --dry-run\n  fwbench run                  (the default experiment → report.html)"
    )]
    Run(RunArgs),
    /// One echo trial (seed 000's client/gateway/server echo cycle)
    #[command(after_help = "Example:\n  fwbench echo -n 5 -P udp -t 2 --engine nft --rules 1000")]
    Echo(Trial<EchoArgs>),
    /// UDP flood at the maximum (or a given) rate: offered vs received packets/s, loss
    #[command(after_help = "Example:\n  fwbench flood -s 64 -t 2 --engine nft --rules 1000 -J")]
    Flood(Trial<FloodArgs>),
    /// Paced UDP flow (open loop): rate, loss, one-way delay, jitter, reordering
    #[command(
        after_help = "Example:\n  fwbench flow -r 100M -s 1400 -t 3   (100 Mbit/s; -r 10MB/s = 80 Mbit/s, -r 50kpps)"
    )]
    Flow(Trial<FlowArgs>),
    /// UDP ping with nanosecond timing: round-trip min/avg/p50/p99/max
    #[command(after_help = "Example:\n  fwbench ping -c 1000 -i 1ms -6")]
    Ping(Trial<PingArgs, NoLive>),
    /// RFC 2544 throughput: the highest rate with no loss (or loss ≤ --loss), by binary search
    #[command(
        after_help = "Example:\n  fwbench ndr --frame 64 --loss 0.1% -t 2 --engine nft --rules 100"
    )]
    Ndr(Trial<NdrArgs, NoLive>),
    /// MLRsearch: the highest rate within each goal loss ratio (default 0 % and 0.5 %)
    /// in one search, short trials first and --duration trials only at the end
    #[command(
        after_help = "Example:\n  fwbench mlr --goals 0,0.5% -t 30 --engine nft --model hashlimit --rules 1"
    )]
    Mlr(Trial<MlrArgs, NoLive>),
    /// New flows through a stateful gateway: one UDP datagram per new 5-tuple; what the
    /// gateway's conntrack table admitted, dropped and evicted (its own counters)
    #[command(
        after_help = "Example:\n  fwbench newflows --flows 8000 -r 20kpps --ct-max 5000 --engine nft --model stateful"
    )]
    Newflows(Trial<NewflowsArgs>),
    /// The new-flow rate with no loss: ndr over new flows (one datagram per new
    /// 5-tuple) through a stateful gateway's connection tracking
    #[command(
        name = "ndr-newflows",
        after_help = "Example:\n  fwbench ndr-newflows --flows 20000 --engine nft --model stateful --rules 100"
    )]
    NdrNewflows(Trial<NdrNewflowsArgs, NoLive>),
    /// Degradation point: the rule count where a flow starts losing packets, by search
    #[command(after_help = "Example:\n  fwbench degrade -r 15M --engine nft --max-rules 20000")]
    Degrade(Trial<DegradeArgs, NoLive>),
    /// The safe envelope: the highest rate of gateway updates (--event, repeated) at
    /// which they keep up (p99 latency from due to committed), take effect in time and
    /// let no must-drop packet through, at the installed size, by search
    #[command(
        after_help = "Example:\n  fwbench envelope -r 2kpps --engine nft --rules 20000 --event add:1@1s -t 5 --latency-target 50ms\n\nExit codes: 0 converged, 1 not converged (flagged with why), 2 bad input. docs/events.md."
    )]
    Envelope(Trial<EnvelopeArgs, NoLive>),
    /// TCP sessions (connect, request, response, close): sequential = session latency,
    /// parallel = sessions/s; --parallel auto finds the sweet spot (seed 003)
    #[command(after_help = "Example:\n  fwbench sessions -p auto --response 4K -t 2")]
    Sessions(Trial<SessionsArgs>),
    /// Bulk transfers, one per session: goodput, with the per-session overhead split out (seed 003)
    #[command(after_help = "Example:\n  fwbench bulk -s 1.7M -p 3 -c 9")]
    Bulk(Trial<BulkArgs>),
    /// HTTP/1.1 downloads: time to first and last byte (seed 004: --size 8M); built-in
    /// server and client, or nginx and curl
    #[command(
        after_help = "Example:\n  fwbench http -s 8M --server-program nginx --client-program curl"
    )]
    Http(Trial<HttpArgs>),
    /// Concurrent connection capacity: open and hold connections up to --limit,
    /// report how many and what stopped it
    #[command(after_help = "Example:\n  fwbench connections --limit 20000 --engine nft")]
    Connections(Trial<ConnectionsArgs>),
    /// Run a workload file (seed 003's language: command, sequential, parallel, random)
    /// with every command inside the client's namespace; per-command timing
    #[command(
        after_help = "Example:\n  fwbench workload w.txt   (w.txt: parallel 6 { sequential 5 { command \"curl -s http://198.19.0.2/\" } })"
    )]
    Workload(WorkloadArgs),
    /// Write a report of a results database: self-contained HTML with figures, or
    /// Markdown, CSV or JSON (offline, any number of times)
    #[command(
        after_help = "Example:\n  fwbench report results.db -o report.html   (-f md|csv|json|samples)"
    )]
    Report(ReportArgs),
    /// Compare runs (benchstat-style): per configuration and metric the change with its
    /// 95 % CI and Welch's test; exit 1 on a significant regression beyond --threshold,
    /// 3 when a change could not be tested (too few repetitions)
    Compare(CompareArgs),
    /// Many runs over time: every run's configurations lined up by --by (time, commit,
    /// kernel, tag:NAME, fact:NAME), per configuration and metric the series split
    /// into constant segments (FD.io CSIT's MDL method); exit 1 when a regression
    /// beyond --threshold starts the newest segment
    #[command(
        after_help = "Exit codes: 0 no failing regression, 1 a regression beyond --threshold starts the newest segment of a series, 2 bad input, 3 the newest run gave no point of a series it measured (fwbench limited its repetitions: not judged). Method and false-alarm rate: docs/trend.md.\n\nExample:\n  fwbench trend history/ --by tag:run\n  fwbench trend a.db b.db --by kernel -f html -o trend.html"
    )]
    Trend(TrendArgs),
    /// Create, remove or list local namespace testbeds; check a testbed file of hosts
    #[command(
        after_help = "Example:\n  fwbench testbed up --name lab && fwbench echo --testbed lab && fwbench testbed down --name lab"
    )]
    Testbed {
        #[command(subcommand)]
        cmd: TestbedCmd,
    },
    /// Rule sets: print exactly what an engine would apply (dry run); advise safe rewrites
    /// of your ruleset, proven equivalent on probes
    #[command(
        after_help = "Example:\n  fwbench rules render --engine nft --rules 1000 --position middle | less"
    )]
    Rules {
        #[command(subcommand)]
        cmd: RulesCmd,
    },
    /// Event traces for churn replay (--event-trace): write one of a known shape
    /// (kube-proxy, fail2ban, blocklist), or check one
    #[command(
        after_help = "Example:\n  fwbench trace gen fail2ban --bans-per-s 5 --ban-time 2s --duration 10s --seed 1 > bans.trace\n  fwbench flow -r 20kpps --sources 2 -t 14 --engine nft --rules 1000 --event-trace bans.trace"
    )]
    Trace {
        #[command(subcommand)]
        cmd: crate::run::trace::TraceCmd,
    },
    /// Report what this host can do (kernel features, tools) and what to install
    #[command(after_help = "Example:\n  fwbench check -J | jq .tools")]
    Check {
        /// Print one JSON object instead of a table
        #[arg(long, short = 'J')]
        json: bool,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(
        after_help = "Example:\n  fwbench completions bash > /etc/bash_completion.d/fwbench\n  \
                            fwbench completions zsh > \"${fpath[1]}/_fwbench\"\n  \
                            fwbench completions fish > ~/.config/fish/completions/fwbench.fish"
    )]
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
    /// Print the JSON Schema of `--json` trial objects, or write every schema into --dir
    #[command(
        after_help = "Example:\n  fwbench schema --dir docs/schema   (trial.json, run-summary.json)"
    )]
    Schema {
        /// Write trial.json and run-summary.json into this directory
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Print the man page (roff) on stdout, or write one per command into --dir
    #[command(
        after_help = "Example:\n  fwbench man | man -l -\n  fwbench man --dir /usr/local/share/man/man1"
    )]
    Man {
        /// Write fwbench.1 and fwbench-<command>.1 into this directory
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Run one role of a trial, spoken to over stdin/stdout (started by the controller)
    #[command(hide = true)]
    Agent {
        /// Pin the agent to these CPUs, e.g. 0 or 0-1
        #[arg(long, value_parser = cpus)]
        cpus: Option<String>,
    },
}

/// A trial command: its own flags, its live-output flags ([`NoLive`] for ping, whose
/// `-i` is the probe interval, and the searches), then where and how the trial runs.
#[derive(Args)]
struct Trial<T: Args, L: Args + Live = LiveArgs> {
    #[command(flatten)]
    own: T,
    #[command(flatten)]
    live: L,
    #[command(flatten)]
    trial: TrialArgs,
}

/// The live-output flags of a trial command, if it has them.
trait Live {
    fn args(&self) -> LiveArgs;
}

impl Live for LiveArgs {
    fn args(&self) -> LiveArgs {
        self.clone()
    }
}

/// No live output (ping, ndr, degrade).
#[derive(Args)]
struct NoLive {}

impl Live for NoLive {
    fn args(&self) -> LiveArgs {
        LiveArgs::default()
    }
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct EchoArgs {
    /// Number of client connections (n), each with its own source address
    #[arg(long, short = 'n', default_value = "5", value_parser = parse_clients, allow_negative_numbers = true)]
    clients: u32,
    /// Frame size (f) in bytes, header included: fixed (64) or ranged per cycle (64-1024)
    #[arg(long, short = 'f', default_value = "64", value_parser = frame, allow_negative_numbers = true)]
    frame_size: FrameSize,
    /// Transport protocol (P): tcp, udp or sctp
    #[arg(long, short = 'P', default_value = "tcp", value_parser = protocol)]
    proto: Proto,
    /// Server connection handling (T): threads (one per connection) or epoll (one thread)
    #[arg(long, short = 'T', default_value = "epoll", value_parser = server_mode)]
    server: ServerMode,
    /// A send not completed within this many ms counts as unsent (UDP: reply wait)
    #[arg(long, default_value = "500", value_parser = parse_timeout_ms, allow_negative_numbers = true)]
    timeout_ms: u32,
    /// Seed of the frame-size PRNG (recorded; random if not given)
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    events: crate::workloads::events::EventArgs,
}

/// Where and how a trial runs (shared by echo, flood, flow, ping, ndr, degrade).
#[derive(Args, Clone)]
pub struct TrialArgs {
    /// Address family (A): 4 or 6
    #[arg(long, short = 'A', default_value = "4", value_parser = family, help_heading = "Traffic")]
    family: Family,
    /// IPv4 (same as -A 4)
    #[arg(short = '4', long = "ipv4", conflicts_with_all = ["family", "ipv6"], help_heading = "Traffic")]
    ipv4: bool,
    /// IPv6 (same as -A 6)
    #[arg(
        short = '6',
        long = "ipv6",
        conflicts_with = "family",
        help_heading = "Traffic"
    )]
    ipv6: bool,
    /// Trial duration (t): 10, 2.5s, 500ms, 1m (with --until-ci: the minimum)
    #[arg(long, short = 't', default_value = "5", value_parser = parse_duration, allow_negative_numbers = true, help_heading = "Traffic")]
    duration: f64,
    /// Adaptive length: stop once the 95 % CI of the rate (200-ms windows) is within
    /// this, e.g. 1%, between --duration and --max-duration
    #[arg(long, value_name = "PCT", value_parser = positive_ratio, allow_negative_numbers = true, help_heading = "Traffic")]
    until_ci: Option<f64>,
    /// Longest adaptive trial
    #[arg(long, default_value = "60", value_parser = parse_duration, allow_negative_numbers = true, help_heading = "Traffic")]
    max_duration: f64,
    /// Topology: forward (default), direct (null firewall), input, proxy (TCP relay in the
    /// gateway; connection workloads). With --testbed, the testbed's
    #[arg(long, value_parser = topology, help_heading = "Placement")]
    topology: Option<Topology>,
    /// Run on this existing testbed instead of an ephemeral one
    #[arg(long, value_name = "NAME", help_heading = "Placement")]
    testbed: Option<String>,
    #[command(flatten)]
    pin: PinArgs,
    #[command(flatten)]
    fw: FirewallArgs,
    /// Results database
    #[arg(long, default_value = "results.db", help_heading = "Output")]
    db: PathBuf,
    /// Do not store the trial(s)
    #[arg(long, help_heading = "Output")]
    no_store: bool,
    #[command(flatten)]
    tags: crate::run::tags::TagArgs,
    /// Run N trials of this configuration, stored in one run (for `fwbench compare`:
    /// n ≥ 2 a side makes a change testable); not for searches
    #[arg(long, value_name = "N", default_value = "1",
          value_parser = clap::value_parser!(u32).range(1..=100_000), allow_negative_numbers = true, help_heading = "Traffic")]
    repeat: u32,
    /// Print one JSON object on stdout instead of text (shape: docs/schema/trial.json)
    #[arg(long, short = 'J', help_heading = "Output")]
    json: bool,
}

/// Packet stream options (flood, flow, ndr, degrade).
#[derive(Args, Clone)]
#[command(next_help_heading = "Traffic")]
pub struct StreamArgs {
    /// Packet size as UDP payload bytes (iperf3 -l; the seeds' "128-byte packets"), or
    /// frame:N for an Ethernet frame of N bytes incl. FCS (RFC 2544), or a mix of frame
    /// sizes: imix (64/576/1500, 7:4:1), csit-imix (64/570/1518, 7:4:1) or
    /// FRAME:WEIGHT,… (64:7,576:4,1500:1) [flood: 18 = 64-byte IPv4 frame; flow: 128]
    #[arg(long, short = 's', value_parser = packet_size, allow_negative_numbers = true)]
    size: Option<proto::PacketSize>,
    /// Ethernet frame size incl. FCS (RFC 2544: 64, 128, 256, 512, 1024, 1280, 1518); same as --size frame:N
    #[arg(long, conflicts_with = "size", value_parser = clap::value_parser!(u32).range(1..=65535), allow_negative_numbers = true)]
    frame: Option<u32>,
    /// Number of flows (distinct source ports; source addresses up to --sources)
    #[arg(long, default_value = "1", value_parser = count, allow_negative_numbers = true)]
    flows: u32,
    /// Distinct source addresses the flows are spread over
    #[arg(long, default_value = "1", value_parser = parse_clients, allow_negative_numbers = true)]
    sources: u32,
    /// Distinct destination addresses the flows are spread over (the server's, then
    /// 198.19.1.1 … / 2001:2:0:2::d:1 … added to the server): flow i to destination i mod N
    #[arg(long, default_value = "1", value_parser = count, allow_negative_numbers = true)]
    dsts: u32,
    /// Sender threads (flow i belongs to thread i mod K)
    #[arg(long, short = 'k', default_value = "1", value_parser = count, allow_negative_numbers = true)]
    threads: u32,
    /// Receiver threads (sockets sharing the port with SO_REUSEPORT)
    #[arg(long, default_value = "1", value_parser = count, allow_negative_numbers = true)]
    sink_threads: u32,
    /// Packets per sendmmsg(2) call
    #[arg(long, default_value = "64", value_parser = count, allow_negative_numbers = true)]
    batch: u32,
    /// udp (sockets, sendmmsg), raw (Ethernet frames via AF_PACKET, as trafgen) or xdp
    /// (Ethernet frames via AF_XDP, zero-copy where the driver has it)
    #[arg(long, default_value = "udp", value_parser = sender)]
    sender: crate::params::packet::SenderPath,
    /// socket (UDP sink on the server), gateway (no receiver: count what the gateway took
    /// in) or xdp (AF_XDP sink on the server's interface)
    #[arg(long, default_value = "socket", value_parser = sink)]
    sink: crate::params::packet::SinkKind,
    /// Allow sizes above the MTU: the kernel sends IP fragments (UDP sender only)
    #[arg(long)]
    fragment: bool,
    /// Destination port or range (5000-6000): the sink listens on the first port
    #[arg(long, value_parser = crate::params::packet::parse_ports)]
    dport: Option<(u16, u16)>,
    /// Source port or range: flow i uses the first port + i (flows must fit the range)
    #[arg(long, value_parser = crate::params::packet::parse_ports)]
    sport: Option<(u16, u16)>,
    /// Source address: one of the testbed's client addresses (198.18.x.y / 2001:2:0:1::x)
    #[arg(long)]
    src: Option<std::net::IpAddr>,
    /// Destination address: must be the testbed's server (fwbench sends nowhere else)
    #[arg(long)]
    dst: Option<std::net::IpAddr>,
    /// Aim at rule N (or CHAIN:N) of the imported ruleset (`fwbench rules render
    /// --import FILE` numbers them): the packets get that rule's protocol, ports and
    /// testbed addresses; its counter is checked after the trial
    #[arg(long, value_parser = crate::params::packet::parse_aim)]
    aim: Option<String>,
    #[command(flatten)]
    events: crate::workloads::events::EventArgs,
    #[command(flatten)]
    ct: CtArgs,
}

/// The gateway's conntrack table for the trial (issue 26; absent: as found).
#[derive(Args, Clone)]
#[command(next_help_heading = "Conntrack")]
pub struct CtArgs {
    /// nf_conntrack_max during the trial (global on kernels where a namespace cannot set
    /// it: set host-wide under a lock and restored exactly)
    #[arg(long, value_parser = count, allow_negative_numbers = true)]
    ct_max: Option<u32>,
    /// Conntrack hash buckets during the trial (global, as --ct-max)
    #[arg(long, value_parser = count, allow_negative_numbers = true)]
    ct_buckets: Option<u32>,
    /// Unreplied-UDP conntrack timeout in seconds (nf_conntrack_udp_timeout, per namespace)
    #[arg(long, value_parser = count, allow_negative_numbers = true)]
    ct_udp_timeout: Option<u32>,
    /// Table fill: N idle UDP entries in the gateway's conntrack table during the trial
    /// (its traffic's flows are looked up among them; up to 1000000)
    #[arg(long, value_parser = count, allow_negative_numbers = true)]
    ct_fill: Option<u32>,
}

impl StreamArgs {
    /// Set these flags on `v` (a size not given keeps the workload's default).
    fn set(&self, v: &mut AxisValues) {
        if let Some(s) = self.size.or(self.frame.map(proto::PacketSize::Frame)) {
            v.size = Size::Packet(s);
        }
        v.clients = self.sources;
        v.flows = self.flows;
        v.dsts = self.dsts;
        v.threads = self.threads;
        v.sink_threads = self.sink_threads;
        v.batch = self.batch;
        v.sender = self.sender;
        v.sink = self.sink;
        v.fragment = self.fragment;
        v.dport = self.dport;
        v.sport = self.sport;
        v.src = self.src;
        v.dst = self.dst;
        v.aim = self.aim.clone();
        v.ct_max = self.ct.ct_max;
        v.ct_buckets = self.ct.ct_buckets;
        v.ct_udp_timeout = self.ct.ct_udp_timeout;
        v.ct_fill = self.ct.ct_fill;
        set_events(&self.events, v);
    }
}

/// Set the gateway-event flags on `v` (nothing when no `--event` was given).
fn set_events(e: &crate::workloads::events::EventArgs, v: &mut AxisValues) {
    if let Some(file) = e.trace() {
        v.event_trace = Some(file.to_string());
    }
    if let Some(e) = e.params() {
        if e.trace.is_none() {
            v.event = Some((e.kind, e.k, e.at_s));
        }
        v.event_rate = e.rate;
        v.event_count = e.count;
        v.event_method = e.method;
        v.event_load = e.load;
        v.event_place = e.place;
    }
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct FloodArgs {
    /// Offered rate: max (default), bits/s (15M, 1.5G — of the size as given), bytes/s with a capital B (10MB/s = 80 Mbit/s), or packets/s (100kpps)
    #[arg(long, short = 'r', default_value = "max", value_parser = rate, allow_hyphen_values = true, conflicts_with = "load")]
    rate: proto::Rate,
    #[command(flatten)]
    stream: StreamArgs,
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct FlowArgs {
    /// Paced rate: bits/s (15M = 15 Mbit/s of the size as given), bytes/s with a capital B (10MB/s = 80 Mbit/s), or packets/s (100kpps), or --load instead
    #[arg(long, short = 'r', value_parser = rate, allow_hyphen_values = true, required_unless_present = "load", conflicts_with = "load")]
    rate: Option<proto::Rate>,
    #[command(flatten)]
    stream: StreamArgs,
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct PingArgs {
    /// UDP payload bytes (at least 8: the sequence number); seed 003 uses 8 and 1000
    #[arg(long, short = 's', default_value = "8", value_parser = packet_size, allow_negative_numbers = true)]
    size: proto::PacketSize,
    /// Stop after this many probes (the trial still ends at --duration at the latest)
    #[arg(long, short = 'c', value_parser = count, allow_negative_numbers = true)]
    count: Option<u32>,
    /// Gap between probes: 0 (back to back, default), 250us, 10ms, 1s
    #[arg(long, short = 'i', default_value = "0", value_parser = crate::params::values::parse_interval, allow_negative_numbers = true)]
    interval: u64,
    /// A reply not received within this many ms counts as lost
    #[arg(long, default_value = "500", value_parser = parse_timeout_ms, allow_negative_numbers = true)]
    timeout_ms: u32,
    /// Destination port of the probes (the reflector listens there; a range: its first)
    #[arg(long, value_parser = crate::params::packet::parse_ports)]
    dport: Option<(u16, u16)>,
    /// Source address: one of the testbed's client addresses
    #[arg(long)]
    src: Option<std::net::IpAddr>,
    /// Aim at rule N (or CHAIN:N) of the imported ruleset (see flood --aim)
    #[arg(long, value_parser = crate::params::packet::parse_aim)]
    aim: Option<String>,
    #[command(flatten)]
    events: crate::workloads::events::EventArgs,
}

/// Options shared by the connection workloads (sessions, bulk, http, connections).
#[derive(Args, Clone)]
#[command(next_help_heading = "Traffic")]
pub struct ConnArgs {
    /// Sessions in total; without it, sessions run back to back for --duration
    #[arg(long, short = 'c', value_parser = session_count, allow_negative_numbers = true)]
    count: Option<u64>,
    /// Connect and read timeout
    #[arg(long, default_value = "5000", value_parser = parse_timeout_ms, allow_negative_numbers = true)]
    timeout_ms: u32,
    /// Proxy topology: bytes per read/write of the gateway's relay (the study's `shovel`)
    #[arg(long, default_value = "16K", value_parser = size_u32, allow_negative_numbers = true)]
    proxy_buffer: u32,
    /// Do not check received bytes against the generated pattern
    #[arg(long)]
    no_verify: bool,
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct SessionsArgs {
    /// Sessions at once: 1 = sequential (latency), N = parallel (sessions/s), auto = search
    /// the parallelism with the most sessions/s (the study's "sweet spot")
    #[arg(long, short = 'p', default_value = "1", value_parser = parallelism, allow_negative_numbers = true)]
    parallel: u32,
    /// Bytes the client sends per session, the 16-byte header included
    #[arg(long, default_value = "64", value_parser = size_u32, allow_negative_numbers = true)]
    request: u32,
    /// Bytes the server answers per session (e.g. 512, 4K)
    #[arg(long, default_value = "512", value_parser = size_u64, allow_negative_numbers = true)]
    response: u64,
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    events: crate::workloads::events::EventArgs,
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct BulkArgs {
    /// Bytes per transfer (seed 003: 1.7M)
    #[arg(long, short = 's', default_value = "1700000", value_parser = size_u64, allow_negative_numbers = true)]
    size: u64,
    /// Transfers at once (seed 003: 1, and 3 with --count 9)
    #[arg(long, short = 'p', default_value = "1", value_parser = count, allow_negative_numbers = true)]
    parallel: u32,
    /// Zero-byte sessions measured first, to split the per-session overhead out of the
    /// transfer time (0: no split)
    #[arg(long, default_value = "10", value_parser = crate::params::values::parse_count0, allow_negative_numbers = true)]
    overhead_sessions: u32,
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    events: crate::workloads::events::EventArgs,
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct HttpArgs {
    /// Object size (seed 004: 8M)
    #[arg(long, short = 's', default_value = "8M", value_parser = size_u64, allow_negative_numbers = true)]
    size: u64,
    /// Downloads at once
    #[arg(long, short = 'p', default_value = "1", value_parser = count, allow_negative_numbers = true)]
    parallel: u32,
    /// Serve with this program instead of the built-in server: nginx
    #[arg(long, value_name = "PROGRAM")]
    server_program: Option<String>,
    /// Download with this program instead of the built-in client: curl
    #[arg(long, value_name = "PROGRAM")]
    client_program: Option<String>,
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    events: crate::workloads::events::EventArgs,
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct ConnectionsArgs {
    /// Most connections to open
    #[arg(long, default_value = "10000", value_parser = count, allow_negative_numbers = true)]
    limit: u32,
    /// Hold them this long once opening stopped, then check how many are still open
    #[arg(long, default_value = "1", value_parser = crate::params::values::parse_duration0, allow_negative_numbers = true)]
    hold: f64,
    #[command(flatten)]
    conn: ConnArgs,
}

#[derive(Args)]
struct NdrArgs {
    #[command(flatten)]
    stream: StreamArgs,
    #[command(flatten)]
    search: SearchArgs,
}

#[derive(Args)]
struct MlrArgs {
    #[command(flatten)]
    stream: StreamArgs,
    /// Goal loss ratios, one rate found for each: 0 = NDR, e.g. 0,0.5%
    #[arg(long, default_value = "0,0.5%", value_parser = crate::params::search::parse_goals, help_heading = "Search")]
    goals: ::std::vec::Vec<f64>, // (the whole list is one value)
    /// Length of the first phase's trials (the last phase's are --duration long)
    #[arg(long, default_value = "1", value_parser = parse_duration, allow_negative_numbers = true, help_heading = "Search")]
    initial_duration: f64,
    /// Width of each goal's final bracket, relative to its upper bound
    #[arg(long, default_value = "0.5%", value_parser = ratio, allow_negative_numbers = true, help_heading = "Search")]
    precision: f64,
    /// Upper bound of the search in packets/s (or bits/s); default: what a max-rate flood gets through
    #[arg(long, value_parser = rate, allow_hyphen_values = true, help_heading = "Search")]
    max_rate: Option<proto::Rate>,
    /// Most trials (the ceiling probe counted)
    #[arg(long, default_value = "60", value_parser = count, allow_negative_numbers = true, help_heading = "Search")]
    max_trials: u32,
    /// After the search: one-way delay at these fractions of the NDR found (none: skip)
    #[arg(long, default_value = "10%,50%,90%,100%", value_parser = crate::params::search::parse_fractions, help_heading = "Search")]
    latency_at: ::std::vec::Vec<f64>, // (the whole list is one value)
}

#[derive(Args, Clone)]
#[command(next_help_heading = "Search")]
pub struct SearchArgs {
    /// Loss ratio allowed: 0 = NDR (RFC 2544 throughput); e.g. 0.1% or 0.001 for a PDR
    #[arg(long, default_value = "0", value_parser = ratio, allow_negative_numbers = true)]
    pub loss: f64,
    /// Stop when the bounds are this close, relative to the upper bound (e.g. 1%)
    #[arg(long, default_value = "2%", value_parser = ratio, allow_negative_numbers = true)]
    pub precision: f64,
    /// Upper bound of the search in packets/s (or bits/s); default: what a max-rate flood gets through
    #[arg(long, value_parser = rate, allow_hyphen_values = true)]
    pub max_rate: Option<proto::Rate>,
    /// Most search steps (the ceiling probe and confirmation trials not counted)
    #[arg(long, default_value = "20", value_parser = count, allow_negative_numbers = true)]
    pub max_trials: u32,
    /// After the search: one-way delay at these fractions of the rate found (none: skip)
    #[arg(long, default_value = "10%,50%,90%,100%", value_parser = crate::params::search::parse_fractions)]
    pub latency_at: ::std::vec::Vec<f64>, // (the whole list is one value)
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct DegradeArgs {
    /// Paced rate of the flow (seed 002: 15M with 128-byte, 30M with 512, 45M with 1280)
    #[arg(long, short = 'r', value_parser = rate, allow_hyphen_values = true)]
    rate: proto::Rate,
    /// Largest rule count searched
    #[arg(long, default_value = "20000", value_parser = rule_count)]
    max_rules: u32,
    /// Stop when the bracket of rule counts is this narrow
    #[arg(long, default_value = "250", value_parser = count, allow_negative_numbers = true)]
    resolution: u32,
    /// Loss ratio that counts as degraded (e.g. 0.1%)
    #[arg(long, default_value = "0.1%", value_parser = ratio, allow_negative_numbers = true)]
    loss: f64,
    #[command(flatten)]
    stream: StreamArgs,
}

#[derive(Args)]
#[command(next_help_heading = "Traffic")]
struct EnvelopeArgs {
    /// The background flow's paced rate (as for flow), or --load instead
    #[arg(long, short = 'r', value_parser = rate, allow_hyphen_values = true, required_unless_present = "load", conflicts_with = "load")]
    rate: Option<proto::Rate>,
    #[command(flatten)]
    stream: StreamArgs,
    /// The p99 latency of updates, from when each was due to its commit's end, a rate must stay under
    #[arg(long, default_value = "100ms", value_parser = parse_duration, help_heading = "Search")]
    latency_target: f64,
    /// The longest time to effect a rate may show
    #[arg(long, default_value = "1s", value_parser = parse_duration, help_heading = "Search")]
    effect_target: f64,
    /// The highest update rate searched, updates/s
    #[arg(long, default_value = "100", value_parser = crate::workloads::events::positive_rate, help_heading = "Search")]
    max_update_rate: f64,
    /// Stop when the bracket of rates is this narrow, relative to its upper bound
    #[arg(long, default_value = "10%", value_parser = ratio, allow_negative_numbers = true, help_heading = "Search")]
    precision: f64,
    /// Most trials (the confirmation counted)
    #[arg(long, default_value = "12", value_parser = count, allow_negative_numbers = true, help_heading = "Search")]
    max_trials: u32,
}

#[derive(Args, Clone)]
#[command(next_help_heading = "Placement")]
pub struct PinArgs {
    /// Pin the client role to these CPUs (e.g. 0 or 0-1)
    #[arg(long, value_parser = cpus)]
    pub pin_client: Option<String>,
    /// Pin the gateway agent to these CPUs and steer its interfaces' packet processing there (RPS)
    #[arg(long, value_parser = cpus)]
    pub pin_gateway: Option<String>,
    /// Pin the server role to these CPUs
    #[arg(long, value_parser = cpus)]
    pub pin_server: Option<String>,
    /// Pin nothing: without any --pin-*, packet-rate trials through a local gateway give it the last CPU (client and server on CPU 0)
    #[arg(long, conflicts_with_all = ["pin_client", "pin_gateway", "pin_server"])]
    pub no_pin: bool,
}

impl PinArgs {
    /// The flags as given; none at all: the trial's default placement.
    fn placement(&self) -> Placement {
        let pinning = Pinning {
            client: self.pin_client.clone(),
            gateway: self.pin_gateway.clone(),
            server: self.pin_server.clone(),
        };
        if self.no_pin || pinning != Pinning::default() {
            Placement::Given(pinning)
        } else {
            Placement::Default
        }
    }
}

#[derive(Subcommand)]
enum RulesCmd {
    /// Print the batches an engine would apply for a model, without applying them
    Render {
        #[command(flatten)]
        fw: FirewallArgs,
        /// Alias of --rules
        #[arg(long, value_parser = rule_count, allow_hyphen_values = true)]
        count: Option<u32>,
        /// Clients the rule set is for (seed000 models: rules per client)
        #[arg(long, default_value = "5", value_parser = parse_clients, allow_negative_numbers = true)]
        clients: u32,
        #[arg(long, short = 'P', default_value = "tcp", value_parser = protocol)]
        proto: Proto,
        #[arg(long, short = 'A', default_value = "4", value_parser = family)]
        family: Family,
    },
    /// Propose safe rewrites of a ruleset file (sets, shadowed rules, hot rules first), proven on probes
    Advise(crate::run::advise::AdviseArgs),
}

#[derive(Subcommand)]
enum TestbedCmd {
    /// Build a testbed (namespaces, veth pairs, addresses, forwarding)
    Up {
        #[arg(long, default_value = "fwbench")]
        name: String,
        /// forward (client→gateway→server), direct (no gateway), input (server in the gateway)
        #[arg(long, default_value = "forward", value_parser = topology)]
        topology: Topology,
    },
    /// Remove a testbed (refused, exit 2, while a run holds it: the holder's PID is
    /// named; a lock file a killed run left behind is removed)
    Down {
        #[arg(long, default_value = "fwbench")]
        name: String,
    },
    /// Show one testbed, or list all
    Status {
        #[arg(long)]
        name: Option<String>,
    },
    /// Reach every host of a testbed file: kernel, tools, interfaces, addresses,
    /// cached agent binary, clock offset (exit 2 if anything is missing)
    Check { file: PathBuf },
    /// Undo what crashed runs left on every host of a testbed file (crash markers:
    /// rules, sysctls, moved interfaces), then remove the markers
    Cleanup { file: PathBuf },
    /// Undo what killed or crashed runs left on this host: its conntrack settings
    /// (nf_conntrack_max, the hash size) from the journal, the crash markers' rules,
    /// sysctls and moved interfaces (also run on each host by `testbed cleanup`)
    #[command(name = "cleanup-host")]
    CleanupHost,
    /// Hold a two-port role's interface in a namespace until stdin closes (internal)
    #[command(hide = true)]
    Hold { spec: String },
    /// Remove testbed NAME once stdin closes (internal: guards ephemeral testbeds)
    #[command(hide = true)]
    Reap {
        #[arg(long)]
        name: String,
    },
    /// Send probe packets (JSON on stdin) as raw frames (internal: `rules advise`'s
    /// proof on a testbed, run on the client host)
    #[command(hide = true, name = "send-probes")]
    SendProbes {
        #[arg(long)]
        ifname: String,
        #[arg(long)]
        dst_mac: String,
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
        packets: u32,
        #[arg(long)]
        rate: f64,
    },
}

fn init_logging(verbose: u8, agent: bool) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(false)
        .without_time()
        .with_thread_names(false)
        .with_level(true)
        .event_format(
            tracing_subscriber::fmt::format()
                .with_target(agent)
                .without_time()
                .compact(),
        )
        .try_init();
}

pub fn run() -> Result<ExitCode> {
    let cli = match Cli::try_parse_named(std::env::args_os()) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return Ok(ExitCode::from(code));
        }
    };
    // Commands that only print (no agents, no pipes to children whose loss must be
    // survived) end quietly when their reader goes away (`fwbench rules … | head`).
    let print_only = match &cli.cmd {
        Cmd::Rules { .. }
        | Cmd::Trace { .. }
        | Cmd::Check { .. }
        | Cmd::Report(_)
        | Cmd::Compare(_)
        | Cmd::Trend(_)
        | Cmd::Completions { .. }
        | Cmd::Man { .. }
        | Cmd::Schema { .. } => true,
        Cmd::Run(a) => a.dry_run,
        _ => false,
    };
    if print_only {
        traffic::sys::default_sigpipe();
    }
    let is_agent = matches!(cli.cmd, Cmd::Agent { .. });
    init_logging(cli.verbose, is_agent);
    if is_agent {
        // Agents log their phases only when asked; their stderr is the controller's.
        if std::env::var_os("RUST_LOG").is_none() && cli.verbose == 0 {
            // already at warn
        }
    }
    if touches_host(&cli.cmd) {
        // Host settings a killed fwbench process left changed come back first.
        for line in crate::host::at_start() {
            eprintln!("fwbench: cleaned up after a killed run: {line}");
        }
    }
    let asked = cli.asked;
    match cli.cmd {
        Cmd::Agent { cpus } => {
            let list = cpus
                .map(|c| traffic::sys::parse_cpus(&c).map_err(usage))
                .transpose()?;
            crate::agent::run(list)?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Check { json } => {
            let mut r = crate::host::check::probe();
            if crate::sys::euid() == 0 {
                crate::host::check::restore_host_state(&mut r);
            }
            if json {
                let mut v = r.to_json();
                v["schema"] = crate::output::schema("check").into();
                v["fwbench"] = crate::output::build_json();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print!("{}", r.render_text());
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Testbed { cmd } => testbed_cmd(cmd),
        Cmd::Trace { cmd } => crate::run::trace::run_trace(&cmd),
        Cmd::Completions { shell } => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "fwbench", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Schema { dir } => {
            let all = crate::output::doc::schemas();
            match dir {
                Some(d) => {
                    for (name, schema) in &all {
                        let text = serde_json::to_string_pretty(schema)? + "\n";
                        std::fs::create_dir_all(&d)
                            .and_then(|_| std::fs::write(d.join(name), text))
                            .map_err(|e| usage(format!("--dir {}: {e}", d.display())))?;
                    }
                    println!("schemas written to {}", d.display());
                }
                None => println!("{}", serde_json::to_string_pretty(&all[0].1)?),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Man { dir } => {
            use clap::CommandFactory;
            let cmd = Cli::command();
            match dir {
                Some(d) => {
                    std::fs::create_dir_all(&d)
                        .and_then(|_| clap_mangen::generate_to(cmd, &d))
                        .map_err(|e| usage(format!("--dir {}: {e}", d.display())))?;
                    println!("man pages written to {}", d.display());
                }
                None => clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Run(args) => crate::run::scenario::run_scenario(&args),
        Cmd::Report(args) => crate::run::report::write_report(&args),
        Cmd::Compare(args) => crate::run::compare::compare(&args),
        Cmd::Trend(args) => crate::run::trend::trend(&args),
        Cmd::Workload(args) => crate::run::worklang::run_workload(&args),
        Cmd::Rules {
            cmd: RulesCmd::Advise(a),
        } => crate::run::advise::advise(&a),
        Cmd::Rules {
            cmd:
                RulesCmd::Render {
                    fw,
                    count,
                    clients,
                    proto,
                    family,
                },
        } => {
            // The default workload's (echo's) clients and protocol: what the seed000
            // models write rules for.
            let mut v = AxisValues::defaults(Asked::Traffic(Workload::default()));
            fw.set(&mut v, None)?;
            v.rules = count.unwrap_or(fw.rules);
            v.clients = clients;
            v.proto = proto;
            v.family = family;
            let p = crate::plan::build::build(&v, 0, &Default::default()).map_err(usage)?;
            match crate::rules::render_text(&p).map_err(usage)? {
                Some(text) => print!("{text}"),
                None => println!("# engine none: nothing is installed (the baseline)"),
            }
            Ok(ExitCode::SUCCESS)
        }
        cmd => {
            let (p, t, live) = trial_of(&cmd, asked)?.expect("every other command is a trial");
            launch(p, t, live)
        }
    }
}

/// Commands that touch the host (testbeds, trials) restore first what a killed run
/// left changed on it ([`crate::host::at_start`]); `check` and
/// `testbed cleanup-host` do it themselves and say so; agents and the internal
/// helpers never (they run beside a live controller).
fn touches_host(cmd: &Cmd) -> bool {
    match cmd {
        Cmd::Run(a) => !a.dry_run,
        Cmd::Workload(_)
        | Cmd::Rules {
            cmd: RulesCmd::Advise(_),
        } => true,
        Cmd::Testbed { cmd } => !matches!(
            cmd,
            TestbedCmd::CleanupHost
                | TestbedCmd::Hold { .. }
                | TestbedCmd::Reap { .. }
                | TestbedCmd::SendProbes { .. }
        ),
        Cmd::Agent { .. }
        | Cmd::Check { .. }
        | Cmd::Report(_)
        | Cmd::Compare(_)
        | Cmd::Trend(_)
        | Cmd::Rules { .. }
        | Cmd::Trace { .. }
        | Cmd::Completions { .. }
        | Cmd::Man { .. }
        | Cmd::Schema { .. } => false,
        // The trial commands.
        _ => true,
    }
}

/// The second stage of a trial command: typed arguments → the axis values they set
/// (the rest keep the registry's defaults) → the one builder → checked trial
/// parameters (bad input → exit 2), without touching the host; with the trial flags
/// and the live ones. `asked`: what the command's name asks for ([`Cli::asked`]).
/// `None` for the other commands.
fn trial_of(
    cmd: &Cmd,
    asked: Option<Asked>,
) -> Result<Option<(TrialParams, &TrialArgs, LiveArgs)>> {
    match cmd {
        Cmd::Echo(c) => c.params(asked),
        Cmd::Flood(c) => c.params(asked),
        Cmd::Flow(c) => c.params(asked),
        Cmd::Ping(c) => c.params(asked),
        Cmd::Ndr(c) => c.params(asked),
        Cmd::Mlr(c) => c.params(asked),
        Cmd::Newflows(c) => c.params(asked),
        Cmd::NdrNewflows(c) => c.params(asked),
        Cmd::Degrade(c) => c.params(asked),
        Cmd::Envelope(c) => c.params(asked),
        Cmd::Sessions(c) => c.params(asked),
        Cmd::Bulk(c) => c.params(asked),
        Cmd::Http(c) => c.params(asked),
        Cmd::Connections(c) => c.params(asked),
        Cmd::Run(_)
        | Cmd::Workload(_)
        | Cmd::Report(_)
        | Cmd::Compare(_)
        | Cmd::Trend(_)
        | Cmd::Testbed { .. }
        | Cmd::Rules { .. }
        | Cmd::Trace { .. }
        | Cmd::Check { .. }
        | Cmd::Completions { .. }
        | Cmd::Schema { .. }
        | Cmd::Man { .. }
        | Cmd::Agent { .. } => return Ok(None),
    }
    .map(Some)
}

/// A trial command's own flags on the axis registry: the values they set (what the
/// command asks for is its name, [`Cli::asked`]).
trait Flags {
    fn set(&self, v: &mut AxisValues);
    /// The trial's seed (echo's frame-size PRNG; 0 for the others).
    fn seed(&self) -> u64 {
        0
    }
}

impl<T: Args + Flags, L: Args + Live> Trial<T, L> {
    /// The registry's defaults for the workload, the command's flags, the common ones
    /// → `plan::axes::trial_params` → the cross-field checks.
    fn params(&self, asked: Option<Asked>) -> Result<(TrialParams, &TrialArgs, LiveArgs)> {
        let asked = asked.ok_or_else(|| {
            anyhow::anyhow!(
                "this trial command's name is no workload or search of the registry \
                 (expected one of: {})",
                Asked::names().join(", ")
            )
        })?;
        let mut v = AxisValues::defaults(asked);
        self.own.set(&mut v);
        self.trial.set(&mut v)?;
        let cx = crate::plan::build::Context {
            adaptive: self
                .trial
                .until_ci
                .map(|precision| crate::params::Adaptive {
                    precision,
                    max_s: self.trial.max_duration,
                }),
            ..Default::default()
        };
        let p = crate::plan::build::build(&v, self.own.seed(), &cx).map_err(usage)?;
        Ok((p, &self.trial, self.live.args()))
    }
}

impl Flags for EchoArgs {
    fn set(&self, v: &mut AxisValues) {
        v.clients = self.clients;
        v.frame_size = self.frame_size;
        v.proto = self.proto;
        v.server = self.server;
        v.timeout_ms = self.timeout_ms;
        set_events(&self.events, v);
    }
    fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(crate::run::session::fresh_seed)
    }
}

impl Flags for FloodArgs {
    fn set(&self, v: &mut AxisValues) {
        v.rate = self.rate;
        self.stream.set(v);
    }
}

/// `newflows`: a flood's flags, each flow one datagram of a new 5-tuple.
#[derive(Args)]
struct NewflowsArgs {
    #[command(flatten)]
    flood: FloodArgs,
}

impl Flags for NewflowsArgs {
    fn set(&self, v: &mut AxisValues) {
        self.flood.set(v);
    }
}

/// `ndr-newflows`: ndr's flags, over new flows.
#[derive(Args)]
struct NdrNewflowsArgs {
    #[command(flatten)]
    ndr: NdrArgs,
}

impl Flags for NdrNewflowsArgs {
    fn set(&self, v: &mut AxisValues) {
        self.ndr.set(v);
    }
}

impl Flags for FlowArgs {
    fn set(&self, v: &mut AxisValues) {
        // Without --rate, --load gives the rate when the trial runs (`search::load`).
        v.rate = self.rate.unwrap_or(proto::Rate::Max);
        self.stream.set(v);
    }
}

impl Flags for PingArgs {
    fn set(&self, v: &mut AxisValues) {
        v.size = Size::Packet(self.size);
        v.count = self.count.map(u64::from);
        v.interval = self.interval;
        v.timeout_ms = self.timeout_ms;
        v.dport = self.dport;
        v.src = self.src;
        v.aim = self.aim.clone();
        set_events(&self.events, v);
    }
}

impl Flags for NdrArgs {
    fn set(&self, v: &mut AxisValues) {
        self.stream.set(v);
        v.loss = self.search.loss;
        v.precision = self.search.precision;
        v.max_rate = self.search.max_rate.unwrap_or(proto::Rate::Max);
        v.max_trials = self.search.max_trials;
        v.latency_at = self.search.latency_at.clone();
    }
}

impl Flags for MlrArgs {
    fn set(&self, v: &mut AxisValues) {
        self.stream.set(v);
        v.goals = self.goals.clone();
        v.initial_duration = self.initial_duration;
        v.precision = self.precision;
        v.max_rate = self.max_rate.unwrap_or(proto::Rate::Max);
        v.max_trials = self.max_trials;
        v.latency_at = self.latency_at.clone();
    }
}

impl Flags for EnvelopeArgs {
    fn set(&self, v: &mut AxisValues) {
        v.rate = self.rate.unwrap_or(proto::Rate::Max);
        self.stream.set(v);
        v.latency_target = self.latency_target;
        v.effect_target = self.effect_target;
        v.max_update_rate = self.max_update_rate;
        v.precision = self.precision;
        v.max_trials = self.max_trials;
    }
}

impl Flags for DegradeArgs {
    fn set(&self, v: &mut AxisValues) {
        self.stream.set(v);
        v.rate = self.rate;
        v.loss = self.loss;
        v.max_rules = self.max_rules;
        v.resolution = self.resolution;
    }
}

impl Flags for SessionsArgs {
    fn set(&self, v: &mut AxisValues) {
        v.parallel = self.parallel;
        v.request = self.request;
        v.size = Size::Bytes(self.response);
        self.conn.set(v);
        set_events(&self.events, v);
    }
}

impl Flags for BulkArgs {
    fn set(&self, v: &mut AxisValues) {
        v.parallel = self.parallel;
        v.size = Size::Bytes(self.size);
        v.overhead_sessions = self.overhead_sessions;
        self.conn.set(v);
        set_events(&self.events, v);
    }
}

impl Flags for HttpArgs {
    fn set(&self, v: &mut AxisValues) {
        v.parallel = self.parallel;
        v.size = Size::Bytes(self.size);
        v.server_program = self.server_program.clone();
        v.client_program = self.client_program.clone();
        self.conn.set(v);
        set_events(&self.events, v);
    }
}

impl Flags for ConnectionsArgs {
    fn set(&self, v: &mut AxisValues) {
        v.limit = self.limit;
        v.hold = self.hold;
        self.conn.set(v);
    }
}

/// Run a trial command: a search of stored trials, or one trial.
fn launch(p: TrialParams, a: &TrialArgs, live: LiveArgs) -> Result<ExitCode> {
    use crate::params::search::Search;
    if a.repeat != 1 && p.search.is_some() {
        return Err(usage(
            "--repeat: a search runs its own trials; only single-trial commands repeat",
        ));
    }
    match &p.search {
        Some(Search::Ndr(_)) => crate::run::search::run_ndr(p, &search_env(a)?),
        Some(Search::Degrade(_)) => crate::run::search::run_degrade(p, &search_env(a)?),
        Some(Search::Mlr(_)) => crate::run::search::run_mlr(p, &search_env(a)?),
        Some(Search::Envelope(_)) => crate::run::search::run_envelope(p, &search_env(a)?),
        Some(Search::SweetSpot) => crate::run::search::run_sweet_spot(p, &search_env(a)?),
        None => single(p, a, &live),
    }
}

impl TrialArgs {
    /// The run's labels; `--tag` with `--no-store` is bad input (nothing to label).
    fn stored_tags(&self) -> Result<Vec<(String, String)>> {
        let tags = self.tags.tags()?;
        if self.no_store && !tags.is_empty() {
            return Err(usage("--tag: with --no-store nothing is stored to label"));
        }
        Ok(tags)
    }

    /// Set the flags every trial command has: firewall, topology, family, duration.
    fn set(&self, v: &mut AxisValues) -> Result<()> {
        self.fw.set(v, self.topology)?;
        v.family = if self.ipv6 {
            Family::V6
        } else if self.ipv4 {
            Family::V4
        } else {
            self.family
        };
        v.duration = self.duration;
        Ok(())
    }
}

impl ConnArgs {
    /// Set these flags on `v` (a count not given keeps the workload's default).
    fn set(&self, v: &mut AxisValues) {
        if let Some(c) = self.count {
            v.count = Some(c);
        }
        v.timeout_ms = self.timeout_ms;
        v.proxy_buffer = self.proxy_buffer;
        v.verify = !self.no_verify;
    }
}

fn single(p: TrialParams, a: &TrialArgs, live: &LiveArgs) -> Result<ExitCode> {
    let tags = a.stored_tags()?;
    let (_, topo) = a.fw.resolve(a.topology)?;
    let output = match (live.every()?, live.json_stream) {
        (Some(every), json_stream) => crate::run::session::Output::Live {
            every,
            json_stream,
            json: a.json,
        },
        (None, _) => crate::run::session::Output::Final { json: a.json },
    };
    crate::run::session::run_single(
        p,
        topo.is_some(),
        a.pin.placement(),
        a.testbed.as_deref(),
        (!a.no_store).then_some(crate::run::session::StoreAt {
            db: a.db.as_path(),
            tags: &tags,
        }),
        output,
        a.repeat,
    )
}

fn search_env(a: &TrialArgs) -> Result<crate::run::search::Env> {
    let topo = a.fw.resolve(a.topology).ok().and_then(|r| r.1);
    Ok(crate::run::search::Env {
        topology_given: topo.is_some(),
        pin: a.pin.placement(),
        testbed: a.testbed.clone(),
        db: (!a.no_store).then(|| a.db.clone()),
        tags: a.stored_tags()?,
        json: a.json,
    })
}

fn testbed_cmd(cmd: TestbedCmd) -> Result<ExitCode> {
    if let TestbedCmd::Check { file } = &cmd {
        let tb = crate::testbed::file::load(file)?;
        crate::testbed::check::check(&tb)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let TestbedCmd::Cleanup { file } = &cmd {
        let tb = crate::testbed::file::load(file)?;
        tb.prepare()?;
        println!("testbed {}: every host clean", tb.name);
        return Ok(ExitCode::SUCCESS);
    }
    crate::run::session::require_root()?;
    match cmd {
        TestbedCmd::Up { name, topology } => {
            let tb = NetnsTestbed::up(&name, topology)?;
            print!("{}", Testbed::describe(&tb)?);
        }
        TestbedCmd::Down { name } => {
            crate::testbed::netns::check_name(&name)?;
            // Not under a run that uses it; and taking the lock removes a lock file a
            // killed holder left behind.
            let _lock = crate::lock::testbed(&name)?;
            // Gone with it: a killed trial's mark (a new testbed of the name is new).
            crate::host::marker::TrialMark::forget(&name);
            match NetnsTestbed::find(&name) {
                Ok(Some(tb)) => tb.down()?,
                Ok(None) => return Err(usage(format!("no testbed named '{name}'"))),
                Err(_) => NetnsTestbed {
                    name: name.clone(),
                    topology: Topology::Forward,
                }
                .down()?,
            }
            println!("testbed {name} removed");
        }
        TestbedCmd::Status { name: Some(name) } => {
            crate::testbed::netns::check_name(&name)?;
            match NetnsTestbed::find(&name)? {
                Some(tb) => print!("{}", Testbed::describe(&tb)?),
                None => return Err(usage(format!("no testbed named '{name}'"))),
            }
        }
        TestbedCmd::Status { name: None } => {
            let all = NetnsTestbed::list()?;
            if all.is_empty() {
                println!("no testbeds (create one with `fwbench testbed up --name NAME`)");
            }
            for n in all {
                println!("{n}\t{}", NetnsTestbed::status(&n));
            }
        }
        TestbedCmd::Reap { name } => crate::testbed::netns::reap(&name)?,
        TestbedCmd::CleanupHost => {
            // The host's conntrack settings a killed process left changed are global,
            // so no namespace's marker lists them: the journal does.
            for line in crate::host::marker::cleanup_here()
                .into_iter()
                .chain(crate::host::at_start())
            {
                println!("cleaned up after a crashed run: {line}");
            }
        }
        TestbedCmd::Hold { spec } => crate::testbed::ports::hold(&spec)?,
        TestbedCmd::SendProbes {
            ifname,
            dst_mac,
            packets,
            rate,
        } => crate::run::proof::send_probes(&ifname, &dst_mac, packets, rate)?,
        TestbedCmd::Check { .. } | TestbedCmd::Cleanup { .. } => unreachable!("handled above"),
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests;
