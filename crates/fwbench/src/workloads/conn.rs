//! Connection workloads of seeds 003 and 004 on the controller side: their parameters
//! (`fwbench sessions|bulk|http|connections`, scenario axes), the role specs they
//! become, and the summary combined from the client's, server's and proxy's results.
//!
//! Must not: open sockets (the `traffic::conn` roles do) or store anything.

use crate::agent::traffic::role;
use crate::agent::{SetUp, SetUpResult};
use crate::params::conn::CONN_PORT;
use crate::params::conn::MAX_LIMIT;
use crate::params::conn::MAX_PARALLEL;
use crate::params::conn::MAX_PROXY_BUFFER;
use crate::params::conn::MAX_SIZE;
use crate::params::topology::Topology;
use crate::params::workload::{ConnKind, TrialKind, Workload};
use crate::params::TrialParams;
use crate::testbed::{Host, Testbed};
use crate::workloads::{
    named_line, Collected, Ending, Figures, Finish, Held, Live, MainMetric, Profile, Roles, Traffic,
};
use anyhow::{bail, Result};
use proto::GatewayResults;
use proto::{
    ConnMode, Durations, HoldResults, ProxyResults, ProxySpec, RoleResults, RoleSpec,
    SessionClientResults, SessionClientSpec, TcpServerResults, TcpServerSpec,
};
use serde::Serialize;

mod text;

/// Check a connection workload's parameters (bad input → the message; exit 2).
pub fn check(p: &TrialParams) -> Result<(), String> {
    let Some(k) = p.conn() else {
        return Err(format!("{} needs connection parameters", p.name()));
    };
    if p.proto != proto::Proto::Tcp {
        return Err(format!("{} runs over TCP only (not {})", p.name(), p.proto));
    }
    if k.parallel > MAX_PARALLEL {
        return Err(format!(
            "--parallel {} is above the maximum of {MAX_PARALLEL}",
            k.parallel
        ));
    }
    if k.parallel == 0 && p.workload() != Workload::Sessions {
        return Err("--parallel auto (the sweet-spot search) is for sessions only".into());
    }
    if k.count == Some(0) {
        return Err("--count must be at least 1".into());
    }
    if p.workload() == Workload::Sessions && k.request < proto::SESSION_HEADER {
        return Err(format!(
            "--request {} is below the {}-byte session header",
            k.request,
            proto::SESSION_HEADER
        ));
    }
    if k.size > MAX_SIZE {
        return Err(format!("--size {} is above the 1T maximum", k.size));
    }
    if p.workload() == Workload::Connections && !(1..=MAX_LIMIT).contains(&k.limit) {
        return Err(format!(
            "--limit {} must be 1..{MAX_LIMIT} connections",
            k.limit
        ));
    }
    if !(0.0..=3600.0).contains(&k.hold_s) {
        return Err(format!("--hold {} must be 0..3600 s", k.hold_s));
    }
    if k.timeout_ms == 0 {
        return Err("--timeout must be above 0 ms".into());
    }
    if p.topology == Topology::Proxy && !(1..=MAX_PROXY_BUFFER).contains(&k.proxy_buffer) {
        return Err(format!(
            "--proxy-buffer {} must be 1..{} bytes (the relay reads and writes blocks of it)",
            k.proxy_buffer, MAX_PROXY_BUFFER
        ));
    }
    // The one external program each side supports, and what it does.
    let programs = [
        ("--server-program", &k.server_program, "nginx", "serves"),
        ("--client-program", &k.client_program, "curl", "runs"),
    ];
    for (flag, given, supported, does) in programs {
        let Some(given) = given else { continue };
        if given != supported {
            return Err(format!(
                "{flag} '{given}' is not supported (supported: {supported})"
            ));
        }
        if p.workload() != Workload::Http {
            return Err(format!("{flag} {does} http downloads only"));
        }
    }
    for prog in [&k.server_program, &k.client_program].into_iter().flatten() {
        if !crate::process::program_exists(prog) {
            return Err(format!(
                "{prog} is not installed (scripts/setup.sh installs it: apt-get install {prog})"
            ));
        }
    }
    Ok(())
}

/// In topology `input` the side that receives the bulk of the bytes (the client) runs
/// in the gateway, behind the filtered INPUT chain — seed 004's downloading host held
/// the rules — and the server runs in the client namespace.
pub fn roles(tb: &dyn Testbed, p: &TrialParams) -> Result<Roles> {
    let TrialKind::Conn(kind, k) = &p.kind else {
        bail!("{} is not a connection workload", p.name())
    };
    let mode = kind.mode();
    let input = p.topology == Topology::Input;
    let (server_addr, server_host, client_addr, client_host) = if input {
        (
            tb.client_addr(p.family, 1),
            Host::Client,
            None,
            Host::Server,
        )
    } else {
        (
            tb.server_addr(p.family),
            Host::Server,
            Some(tb.client_addr(p.family, 1)),
            Host::Client,
        )
    };
    let proxy = (p.topology == Topology::Proxy).then(|| ProxySpec {
        listen: tb.gateway_addr(p.family),
        port: CONN_PORT,
        upstream: server_addr,
        upstream_port: CONN_PORT,
        buffer: k.proxy_buffer,
    });
    let (target, port) = match &proxy {
        Some(x) => (x.listen, x.port),
        None if input => (server_addr, CONN_PORT),
        None => (crate::testbed::aim_addr(tb, p), CONN_PORT),
    };
    let objects = if p.workload() == Workload::Http {
        vec![k.size]
    } else {
        vec![]
    };
    // Hold mode past one address's ports: client addresses 1..=n, round-robin.
    let n_sources = if p.workload() == Workload::Connections && !input {
        sources_for(k.limit)
    } else {
        1
    };
    let sources = if n_sources > 1 {
        tb.ensure_clients(n_sources)?;
        (1..=n_sources)
            .map(|i| tb.client_addr(p.family, i))
            .collect()
    } else {
        Vec::new()
    };
    let parallel = k.parallel.max(1);
    // Gateway events: the marker is a stream of the smallest sessions from a client
    // address of its own (the workload's sessions come from client 1's).
    let marker = p.events.as_ref().map(|_| proto::Marker {
        src: crate::workloads::events::extra_marker_source(tb, p, client_addr),
        proto: proto::Proto::Tcp,
        dport: port,
    });
    let client_spec = SessionClientSpec {
        mode,
        server: target,
        port,
        source: client_addr,
        sources,
        parallel,
        count: k.count,
        request: match kind {
            ConnKind::Sessions => k.request,
            ConnKind::Bulk | ConnKind::Http | ConnKind::Connections => proto::SESSION_HEADER,
        },
        response: match kind {
            ConnKind::Connections => 0,
            ConnKind::Sessions | ConnKind::Bulk | ConnKind::Http => k.size,
        },
        timeout_ms: k.timeout_ms,
        overhead_sessions: if p.workload() == Workload::Bulk {
            k.overhead_sessions
        } else {
            0
        },
        hold_limit: k.limit,
        // curl writes to /dev/null; checking its bytes would add disk I/O to each download.
        verify: k.verify && k.client_program.is_none(),
        external: k.client_program.clone(),
        events: crate::workloads::events::stream_spec(p, marker.map(|m| m.src)),
    };
    let server_spec = TcpServerSpec {
        listen: server_addr,
        port: CONN_PORT,
        backlog: 4096,
        external: k.server_program.clone(),
        objects,
    };
    // Held connections past one process's open-file limit: pairs of a client and a
    // server process, pair i on server port CONN_PORT + i, each holding its share.
    // (Not through the proxy: its relay is one process in the gateway.)
    let shards = if p.workload() == Workload::Connections && proxy.is_none() {
        shards_for(k.limit, agent_nofile())
    } else {
        1
    };
    let mut servers = Vec::new();
    let mut clients = Vec::new();
    for (i, share) in shares(k.limit, shards).into_iter().enumerate() {
        let port = CONN_PORT + i as u16;
        servers.push((
            server_host,
            RoleSpec::TcpServer(TcpServerSpec {
                port,
                ..server_spec.clone()
            }),
        ));
        clients.push((
            client_host,
            RoleSpec::SessionClient(SessionClientSpec {
                port: if i == 0 { client_spec.port } else { port },
                hold_limit: share,
                ..client_spec.clone()
            }),
        ));
    }
    let on_first = |v: Vec<(Host, RoleSpec)>| v.into_iter().map(|(h, s)| (h, 0, s)).collect();
    let more_servers = on_first(servers.split_off(1));
    let more_clients = on_first(clients.split_off(1));
    Ok(Roles {
        server: servers.pop(),
        client: clients.pop().expect("one shard at least"),
        proxy,
        more_servers,
        more_clients,
        marker,
    })
}

/// Open files a process keeps for itself beside its connections (listener, agent
/// pipes, logs, /proc reads), and what a shard leaves spare.
const NOFILE_MARGIN: u64 = 256;
/// Most connections one client (or server) process holds: a shard.
pub const MAX_PER_PROCESS: u32 = 50_000;
/// Most processes per side the connections are sharded over (ports CONN_PORT onward).
pub const MAX_SHARDS: u32 = 256;

/// The open-file limit an agent started from here gets: its RLIMIT_NOFILE raised as
/// far as allowed (agents inherit the controller's limits; a remote host's may differ,
/// and then its limiter names RLIMIT_NOFILE).
fn agent_nofile() -> u64 {
    traffic::sys::raise_nofile_limit()
        .or_else(|_| traffic::sys::nofile_limit())
        .unwrap_or(1024)
}

/// Processes per side for `limit` held connections when a process may open `nofile`
/// files: ⌈limit / min(nofile − margin, [`MAX_PER_PROCESS`])⌉, at most [`MAX_SHARDS`].
pub fn shards_for(limit: u32, nofile: u64) -> u32 {
    let per = nofile
        .saturating_sub(NOFILE_MARGIN)
        .clamp(1, u64::from(MAX_PER_PROCESS)) as u32;
    limit.div_ceil(per).clamp(1, MAX_SHARDS)
}

/// `limit` split over `n` shards as evenly as whole connections allow.
pub fn shares(limit: u32, n: u32) -> Vec<u32> {
    let n = n.max(1);
    (0..n)
        .map(|i| limit / n + u32::from(i < limit % n))
        .collect()
}

/// Connections one client source address carries in hold mode: the testbed's port
/// range (`ip_local_port_range` 1024-65535 in its namespaces) with a margin.
pub const CONNS_PER_SOURCE: u32 = 50_000;

/// Source addresses for `limit` held connections: ⌈limit / [`CONNS_PER_SOURCE`]⌉.
pub fn sources_for(limit: u32) -> u32 {
    limit.div_ceil(CONNS_PER_SOURCE).max(1)
}

/// Seed 003's split of a bulk run: each session costs the per-session overhead measured
/// with zero-byte sessions; with P workers, sessions/P of them are paid in sequence.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct OverheadSplit {
    /// Mean zero-byte session, s.
    pub per_session_s: f64,
    /// Sessions whose overhead the elapsed time contains: sessions / parallel.
    pub sessions_charged: f64,
    pub overhead_s: f64,
    /// Elapsed minus overhead: the time spent moving data.
    pub transfer_s: f64,
    /// Bytes × 8 / transfer time; none when the zero-byte sessions' overhead, charged
    /// as above, is the whole elapsed time or more (no time left to move data in: the
    /// split does not describe this run).
    pub net_goodput_bps: Option<f64>,
    /// The longest zero-byte session, s, when it was past what the duration histogram
    /// holds (`traffic::hist::HELD_NS`): the mean above then counts it as 100 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clamped_longest_s: Option<f64>,
}

/// The combined figures of a connection trial (stored as `results.conn`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ConnSummary {
    pub mode: ConnMode,
    pub parallel: u32,
    pub sessions: u64,
    pub failed: u64,
    pub corrupt: u64,
    pub errors: Vec<(String, u64)>,
    pub elapsed_s: f64,
    /// Completed sessions per second of elapsed time (the window from the start to the
    /// end of the last session that completed). None for held connections: they are
    /// opened and held, not sessions that complete.
    pub sessions_per_s: Option<f64>,
    /// Response bytes received.
    pub bytes: u64,
    /// bytes × 8 / elapsed. None for held connections (they carry no data).
    pub goodput_bps: Option<f64>,
    /// Per-session durations (ns): whole session, connect, first and last byte.
    pub session: Durations,
    pub connect: Durations,
    pub ttfb: Durations,
    pub ttlb: Durations,
    pub overhead: Option<OverheadSplit>,
    pub hold: Option<HoldResults>,
    /// Per-session durations in order, µs (at most 10 000).
    pub session_us: Vec<u32>,
    pub server: TcpServerResults,
    pub proxy: Option<ProxyResults>,
    pub client_program: Option<String>,
    /// connections: the shards, the gateway's conntrack peak and the processes' memory.
    pub scale: Option<HoldScale>,
    /// Gateway events and what the sessions felt (issue 25): the workload's sessions
    /// are the background, the marker an extra stream of the smallest sessions.
    pub events: Option<Box<crate::workloads::events::EventsSummary>>,
}

impl ConnSummary {
    /// Why its figures may not be believed (`Outcome::judge_witness` makes the trial
    /// `flagged` with them, so no aggregate counts it): sessions that failed or came
    /// back corrupt — the rates and times count only those that completed —, none
    /// completed at all, durations past what the histograms hold (their mean counts
    /// such a value as 100 s). With gateway events the sessions are the background, and
    /// those an update blocked are the measurement (the events' windows count them):
    /// only corrupt ones are doubted there. Held connections have none of these: what
    /// stopped the opening is their figure. Every mode: the server got requests that
    /// were not what fwbench's client sends ([`ConnSummary::bad_requests_doubt`]).
    pub fn doubts(&self) -> Vec<results::Doubt> {
        use results::{Doubt, DoubtKind};
        let mut out = vec![];
        if self.mode == ConnMode::Hold {
            out.extend(self.never_reached_the_server());
            out.extend(self.closed_while_held());
            out.extend(self.bad_requests_doubt());
            return out;
        }
        let attempted = self.sessions + self.failed;
        let corrupt = match self.corrupt {
            0 => String::new(),
            n => format!(", {n} of them with a corrupt body"),
        };
        let errors = errors_text(&self.errors);
        if self.sessions == 0 {
            out.push(Doubt::new(
                DoubtKind::EmptyWindow,
                match attempted {
                    0 => "no session was attempted: no rate or time was measured".to_string(),
                    n => format!(
                        "none of {n} sessions completed{corrupt} ({errors}): no rate or time \
                         was measured"
                    ),
                },
            ));
        } else if self.failed > 0 && (self.events.is_none() || self.corrupt > 0) {
            out.push(Doubt::new(
                DoubtKind::UnexpectedLoss,
                format!(
                    "{} of {attempted} sessions failed{corrupt} ({errors}): sessions/s, \
                     goodput and the session times count only the {} that completed, and a \
                     failed one's wait (up to its timeout) may be in the window they divide by",
                    self.failed, self.sessions
                ),
            ));
        }
        let held_s = traffic::hist::HELD_NS as f64 / 1e9;
        let mut clamped: Vec<String> = [
            ("session", &self.session),
            ("connect", &self.connect),
            ("first byte", &self.ttfb),
            ("last byte", &self.ttlb),
        ]
        .into_iter()
        .filter(|(_, d)| d.max_ns > traffic::hist::HELD_NS)
        .map(|(what, d)| format!("{what} {:.1} s", d.max_ns as f64 / 1e9))
        .collect();
        if let Some(s) = self.overhead.as_ref().and_then(|o| o.clamped_longest_s) {
            clamped.push(format!("zero-byte session {s:.1} s"));
        }
        if !clamped.is_empty() {
            out.push(Doubt::new(
                DoubtKind::LimitedByFwbench,
                format!(
                    "durations past the {held_s:.1} s fwbench's histograms hold (the longest: \
                     {}) were counted as 100 s: their mean, sd and top percentiles understate \
                     them",
                    clamped.join(", ")
                ),
            ));
        }
        out.extend(self.bad_requests_doubt());
        out
    }

    /// Held connections that did not stay: fewer still open at stop than opened
    /// (fwbench's client closes none, its server never sends — a FIN or reset came
    /// from the server's host, a proxy that took them and could not pass them on, or
    /// the path), so the count of connections held counts some that were not. Not
    /// doubted with gateway events (an update cutting connections off is the
    /// measurement).
    fn closed_while_held(&self) -> Option<results::Doubt> {
        let h = self.hold.as_ref().filter(|_| self.events.is_none())?;
        let gone = h.reached.checked_sub(h.alive_at_stop).filter(|n| *n > 0)?;
        Some(results::Doubt::new(
            results::DoubtKind::UnexpectedLoss,
            format!(
                "{gone} of the {} connections opened were closed or reset before the hold \
                 ended ({} still open at stop; fwbench's client and server close none: the \
                 server's host, a proxy or the path did): the count held includes them",
                h.reached, h.alive_at_stop
            ),
        ))
    }

    /// Held connections that did not reach the server: it accepted fewer
    /// (`server.accepted`, shards summed; what it accepted stays counted when they
    /// close) than the client opened. A connection the client's connect completed can
    /// wait unaccepted in a listen backlog — of the gateway's relay (`--topology proxy`)
    /// out of file descriptors, or of the server — and stays open there: the client's
    /// count is not the path's (measured: 14 000 "held" through a relay that passed
    /// 10 254). With no hold (`--hold 0`) a slow relay may not have passed them on yet
    /// when the trial stops: not established end to end either.
    fn never_reached_the_server(&self) -> Option<results::Doubt> {
        let h = self.hold.as_ref()?;
        let short = h
            .reached
            .checked_sub(self.server.accepted)
            .filter(|n| *n > 0)?;
        Some(results::Doubt::new(
            results::DoubtKind::UnexpectedLoss,
            format!(
                "the server accepted {} of the {} connections the client opened: {short} \
                 did not reach it by the end of the hold (left in a listen backlog — of the \
                 gateway's relay or of the server — they count as open to the client): the \
                 count held is the client's, not the path's",
                self.server.accepted, h.reached
            ),
        ))
    }

    /// The server counted requests whose bytes did not match the pattern or the
    /// protocol (`server.bad_requests`; an external server's 4xx answers): fwbench's
    /// client never sends such a request, so data was corrupted on the way, or
    /// something other than the client talked to the server, or a session the client
    /// gave up on was cut off in the middle of its request — the trial's sessions are
    /// not what they seem (how many of how many said). With gateway events the
    /// sessions (and the marker's, which the client's counts do not hold) an update
    /// blocked are the measurement, and cut off mid-request they are bad requests too:
    /// not doubted there, as their failures are not.
    pub fn bad_requests_doubt(&self) -> Option<results::Doubt> {
        let bad = self.server.bad_requests;
        if bad == 0 || self.events.is_some() {
            return None;
        }
        let held = self.mode == ConnMode::Hold;
        let unit = if held { "connections" } else { "sessions" };
        let attempted = self.sessions + self.failed;
        let cut_off = match self.failed {
            n if n > 0 && !held => {
                format!(
                    ", or some of the {n} sessions the client gave up on, cut off in their request"
                )
            }
            _ => String::new(),
        };
        Some(results::Doubt::new(
            results::DoubtKind::Impossible,
            format!(
                "the server got {bad} requests that were not what fwbench's client sends \
                 (bytes that did not match the pattern or the protocol), over the {} \
                 connections it accepted, for {attempted} {unit} the client attempted: data \
                 corrupted on the way, or something other than the client talking to the \
                 server{cut_off} — the trial's {unit} are not what they seem",
                self.server.accepted
            ),
        ))
    }
}

/// The first three of a trial's error messages with their counts ("2 × connect:
/// timed out; 1 × …"), or that none was recorded.
fn errors_text(errors: &[(String, u64)]) -> String {
    if errors.is_empty() {
        return "no error recorded".into();
    }
    let mut s: Vec<String> = errors
        .iter()
        .take(3)
        .map(|(text, n)| format!("{n} × {text}"))
        .collect();
    if errors.len() > 3 {
        s.push("…".into());
    }
    s.join("; ")
}

/// Combine the client's and server's results (and the proxy's); several of each when
/// held connections were sharded over processes.
pub fn summarise(results: Vec<RoleResults>, proxy: Option<ProxyResults>) -> Result<ConnSummary> {
    let (mut cs, mut ss) = (Vec::new(), Vec::new());
    for r in results {
        match r {
            RoleResults::SessionClient(r) => cs.push(*r),
            RoleResults::TcpServer(r) => ss.push(r),
            _ => {}
        }
    }
    if cs.is_empty() || ss.is_empty() {
        bail!("missing results from the session client or the server");
    }
    // Stopped in reverse order of start: put shard 0 first again.
    cs.reverse();
    ss.reverse();
    let scale = (cs[0].mode == ConnMode::Hold).then(|| HoldScale::of(&cs));
    let (c, s) = (merge_clients(cs), merge_servers(ss));
    Ok(ConnSummary {
        scale,
        ..combine(c, s, proxy)
    })
}

/// Several client shards as one client: counts add up, the elapsed time is the
/// longest, the hold limiter is the first shard's that did not reach its share.
pub fn merge_clients(mut cs: Vec<SessionClientResults>) -> SessionClientResults {
    let mut m = cs.remove(0);
    for c in cs {
        proto::add_up!(m, c; sessions, failed, bytes, corrupt);
        m.elapsed_ns = m.elapsed_ns.max(c.elapsed_ns);
        for (text, n) in c.errors {
            match m.errors.iter_mut().find(|(t, _)| *t == text) {
                Some(e) => e.1 += n,
                None => m.errors.push((text, n)),
            }
        }
        m.hold = match (m.hold.take(), c.hold) {
            (Some(a), Some(b)) => Some(merge_hold(a, b)),
            (a, b) => a.or(b),
        };
    }
    m
}

fn merge_hold(a: HoldResults, b: HoldResults) -> HoldResults {
    let reached_all = |h: &HoldResults| h.reached >= u64::from(h.limit);
    let (limiter, errno) = match (reached_all(&a), reached_all(&b)) {
        (false, _) => (a.limiter, a.errno),
        (true, false) => (b.limiter, b.errno),
        (true, true) => (format!("limit ({} connections)", a.limit + b.limit), None),
    };
    HoldResults {
        reached: a.reached + b.reached,
        limit: a.limit + b.limit,
        alive_at_stop: a.alive_at_stop + b.alive_at_stop,
        limiter,
        errno,
        open_ms: a.open_ms.max(b.open_ms),
        nofile_before: a.nofile_before.or(b.nofile_before),
        nofile: a.nofile.min(b.nofile).or(a.nofile).or(b.nofile),
    }
}

/// Several server shards as one server: counts add up (`max_open` too: the shards
/// held theirs at the same time).
pub fn merge_servers(mut ss: Vec<TcpServerResults>) -> TcpServerResults {
    let mut m = ss.remove(0);
    for s in ss {
        proto::add_up!(m, s; accepted, sessions, http_requests, bytes_sent, bytes_received);
        proto::add_up!(m, s; bad_requests, errors, max_open, accept_errors);
        m.first_error = m.first_error.or(s.first_error);
    }
    m
}

/// How held connections were spread over processes, and what the run cost: the
/// gateway's conntrack entries at the peak and the peak memory of each process
/// (stored under `results.conn.scale`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct HoldScale {
    /// Client processes (each with its server process on port 21000 + i).
    pub processes: u32,
    /// Connections held per client process, in shard order.
    pub per_process: Vec<u64>,
    /// The client processes' soft RLIMIT_NOFILE before they raised it and in force.
    pub nofile_before: Option<u64>,
    pub nofile: Option<u64>,
    /// Most entries in the gateway's conntrack table (`nf_conntrack_count` in its
    /// namespace, sampled at 5 Hz); `None`: no gateway agent or no conntrack there.
    pub gateway_conntrack: Option<u64>,
    /// The gateway's `nf_conntrack_max` during the trial.
    pub conntrack_max: Option<u64>,
    /// (before, during): the trial raised the host's `nf_conntrack_max` for its
    /// connections and restored it after.
    pub conntrack_max_raised: Option<(u64, u64)>,
    /// Peak resident memory (VmHWM), KiB: the controller, and the largest of any
    /// client, server and the gateway agent.
    pub controller_hwm_kib: Option<u64>,
    pub client_hwm_kib: Option<u64>,
    pub server_hwm_kib: Option<u64>,
    pub gateway_hwm_kib: Option<u64>,
}

impl HoldScale {
    fn of(cs: &[SessionClientResults]) -> HoldScale {
        let holds = || cs.iter().filter_map(|c| c.hold.as_ref());
        HoldScale {
            processes: cs.len() as u32,
            per_process: holds().map(|h| h.reached).collect(),
            nofile_before: holds().find_map(|h| h.nofile_before),
            nofile: holds().filter_map(|h| h.nofile).min(),
            gateway_conntrack: None,
            conntrack_max: None,
            conntrack_max_raised: None,
            controller_hwm_kib: None,
            client_hwm_kib: None,
            server_hwm_kib: None,
            gateway_hwm_kib: None,
        }
    }

    /// Fill in the peaks from the agents' 5-Hz samples (role, sample), the gateway's
    /// sysctls and the controller's own peak memory.
    pub fn note(
        &mut self,
        samples: &[crate::testbed::Sampled],
        gateway: Option<&GatewayResults>,
        controller_hwm_kib: Option<u64>,
    ) {
        let peak = |role: &str, metric: &str| {
            samples
                .iter()
                .filter(|s| s.role == role && s.sample.metric == metric)
                .map(|s| s.sample.value as u64)
                .max()
        };
        self.gateway_conntrack = peak("gateway", "ct.count");
        self.client_hwm_kib = peak("client", "proc.hwm_kib");
        self.server_hwm_kib = peak("server", "proc.hwm_kib");
        self.gateway_hwm_kib = peak("gateway", "proc.hwm_kib");
        self.controller_hwm_kib = controller_hwm_kib;
        self.conntrack_max = gateway.and_then(|g| {
            g.sysctls
                .iter()
                .find(|(k, _)| k == "net.netfilter.nf_conntrack_max")
                .and_then(|(_, v)| v.trim().parse().ok())
        });
    }

    /// "raised the open-file limit from 20000 to 1048576", or why it stayed.
    pub fn nofile_text(&self) -> String {
        match (self.nofile_before, self.nofile) {
            (Some(a), Some(b)) if b > a => format!("raised the open-file limit from {a} to {b}"),
            (_, Some(b)) => format!(
                "open-file limit {b} per process (its hard limit; raising it needs CAP_SYS_RESOURCE)"
            ),
            _ => "open-file limit unknown".into(),
        }
    }
}

/// Pure part of [`summarise`] (unit-tested).
pub fn combine(
    c: SessionClientResults,
    s: TcpServerResults,
    proxy: Option<ProxyResults>,
) -> ConnSummary {
    let elapsed_s = (c.elapsed_ns as f64 / 1e9).max(1e-9);
    let held = c.mode == ConnMode::Hold;
    let overhead = c.overhead.filter(|o| o.count > 0).map(|o| {
        let per_session_s = o.mean_ns / 1e9;
        let sessions_charged = c.sessions as f64 / f64::from(c.parallel.max(1));
        let charged_s = per_session_s * sessions_charged;
        let overhead_s = charged_s.min(elapsed_s);
        let transfer_s = (elapsed_s - overhead_s).max(1e-9);
        OverheadSplit {
            per_session_s,
            sessions_charged,
            overhead_s,
            transfer_s,
            net_goodput_bps: (charged_s < elapsed_s).then(|| c.bytes as f64 * 8.0 / transfer_s),
            clamped_longest_s: (o.max_ns > traffic::hist::HELD_NS).then(|| o.max_ns as f64 / 1e9),
        }
    });
    ConnSummary {
        mode: c.mode,
        parallel: c.parallel,
        sessions: c.sessions,
        failed: c.failed,
        corrupt: c.corrupt,
        errors: c.errors,
        elapsed_s,
        sessions_per_s: (!held).then(|| c.sessions as f64 / elapsed_s),
        bytes: c.bytes,
        goodput_bps: (!held).then(|| c.bytes as f64 * 8.0 / elapsed_s),
        session: c.session,
        connect: c.connect,
        ttfb: c.ttfb,
        ttlb: c.ttlb,
        overhead,
        hold: c.hold,
        session_us: c.session_us,
        server: s,
        proxy,
        client_program: c.external,
        scale: None,
        events: None,
    }
}

/// Sessions, bulk transfers, HTTP downloads and held connections over TCP.
pub struct Conn(pub ConnKind);

/// The connection workloads' entries in the registry.
pub fn of(k: ConnKind) -> &'static Conn {
    static SESSIONS: Conn = Conn(ConnKind::Sessions);
    static BULK: Conn = Conn(ConnKind::Bulk);
    static HTTP: Conn = Conn(ConnKind::Http);
    static CONNECTIONS: Conn = Conn(ConnKind::Connections);
    match k {
        ConnKind::Sessions => &SESSIONS,
        ConnKind::Bulk => &BULK,
        ConnKind::Http => &HTTP,
        ConnKind::Connections => &CONNECTIONS,
    }
}

impl Traffic for Conn {
    /// Sessions rank by sessions/s (for sequential sessions that is 1 / latency);
    /// http by the mean download time. The client's count of sessions ends the phase.
    fn profile(&self) -> Profile {
        let (name, higher) = match self.0 {
            ConnKind::Sessions => ("sessions_per_s", true),
            ConnKind::Bulk => ("goodput_bps", true),
            ConnKind::Http => ("ttlb_mean_ms", false),
            ConnKind::Connections => ("hold_reached", true),
        };
        Profile {
            family: "conn",
            main_metric: MainMetric { name, higher },
            live: Live {
                unit: match self.0 {
                    ConnKind::Connections => "connections",
                    ConnKind::Sessions | ConnKind::Bulk | ConnKind::Http => "sessions",
                },
                at_sink: false,
                rtt: false,
            },
            ending: Ending::Counted {
                holds: self.0 == ConnKind::Connections,
            },
            gateway_cpu: false,
        }
    }

    /// Parallel sessions, sizes, count or duration; held connections' limit and hold;
    /// external programs.
    fn params_text(&self, p: &TrialParams) -> String {
        use crate::params::conn::format_size;
        let Some(k) = p.conn() else {
            return named_line(p, "");
        };
        let duration_s = p.duration_s;
        let parallel = match k.parallel {
            0 => "auto".to_string(),
            n => n.to_string(),
        };
        let amount = match k.count {
            Some(c) => format!("count={c}"),
            None => format!("t={duration_s}s"),
        };
        let mut s = match self.0 {
            ConnKind::Sessions => format!(
                "parallel={parallel} request={} response={} {amount}",
                format_size(u64::from(k.request)),
                format_size(k.size)
            ),
            ConnKind::Connections => format!("limit={} hold={}s", k.limit, k.hold_s),
            ConnKind::Bulk | ConnKind::Http => {
                format!("size={} parallel={parallel} {amount}", format_size(k.size))
            }
        };
        for (what, prog) in [("server", &k.server_program), ("client", &k.client_program)] {
            if let Some(prog) = prog {
                s += &format!(" {what}={prog}");
            }
        }
        named_line(p, &s)
    }

    fn roles(&self, tb: &dyn Testbed, p: &TrialParams) -> Result<Roles> {
        roles(tb, p)
    }

    /// Held connections rely on the gateway's conntrack table: nobody changes it
    /// meanwhile, and it is raised (and restored) if too small. Only a gateway in this
    /// host's namespaces shares its global `nf_conntrack_max`.
    fn prepare(&self, tb: &dyn Testbed, p: &TrialParams) -> Result<Option<Box<dyn Held>>> {
        let local_gateway = tb
            .launcher(Host::Gateway)
            .is_some_and(|l| l.remote.is_none());
        match (&p.kind, local_gateway) {
            (TrialKind::Conn(ConnKind::Connections, k), true) => {
                let guard = crate::host::conncap::hold(k.limit)?;
                Ok(guard.map(|g| Box::new(g) as Box<dyn Held>))
            }
            _ => Ok(None),
        }
    }

    /// Its sessions rather than its duration: a session of this machine takes ~0.2 ms
    /// plus its bytes at ~1 GB/s, spread over workers; held connections ~0.1 ms each to
    /// open, then their hold; the agents' setup ~0.3 s.
    fn wall_s(&self, p: &TrialParams) -> Option<f64> {
        let k = p.conn()?;
        let per = 2e-4 + k.size as f64 / 1e9;
        let work = match (self.0 == ConnKind::Connections, k.count) {
            (true, _) => k.limit as f64 * 1e-4 + k.hold_s,
            (false, Some(c)) => c as f64 * per / f64::from(k.parallel.clamp(1, 4)),
            (false, None) => p.duration_s,
        };
        let overhead = f64::from(k.overhead_sessions) * 2e-4;
        Some(work + overhead + 0.3)
    }

    /// Held connections: the peaks of the roles' memory and of the gateway's table.
    fn finish(&self, figures: &mut Figures, f: &Finish) {
        if let Figures::Conn(c) = figures {
            if let Some(scale) = c.scale.as_mut() {
                let controller = crate::host::probe::own_peak_rss_kib();
                scale.note(f.samples, f.gateway, controller);
            }
        }
    }

    fn collect(&self, c: Collected<'_>) -> Result<Figures> {
        let (p, gateway) = (c.p, c.gateway);
        let results = c.role_results();
        let streams = results.iter().find_map(|r| match r {
            RoleResults::SessionClient(c) => c.events.clone(),
            _ => None,
        });
        let mut s = summarise(results, gateway.and_then(|g| g.proxy.clone()))?;
        s.events = crate::workloads::events::summarise_txns(
            p,
            crate::workloads::events::Unit::Sessions,
            false,
            streams.as_deref(),
            gateway,
        )
        .map(Box::new);
        Ok(Figures::Conn(Box::new(s)))
    }
}

/// The conntrack lock (and raise) a `connections` trial holds ([`Conn::prepare`]).
impl Held for crate::host::conncap::Guard {
    /// `nf_conntrack_max` before and during the trial, when the trial raised it.
    fn note(&self, figures: &mut Figures) {
        if let (Figures::Conn(c), Some(r)) = (figures, self.raised()) {
            if let Some(x) = c.scale.as_mut() {
                x.conntrack_max_raised = Some(r);
            }
        }
    }
}

/// The agent's side of the connection families: which traffic object plays each role
/// (an external program's wrapper where the spec names one).
impl SetUp for TcpServerSpec {
    fn set_up(&self) -> SetUpResult {
        use crate::agent::traffic::{ExternalServer, TcpServer};
        if self.external.is_some() {
            role(ExternalServer::start(self))
        } else {
            role(TcpServer::start(self))
        }
    }
}

impl SetUp for SessionClientSpec {
    fn set_up(&self) -> SetUpResult {
        use crate::agent::traffic::{ExternalClient, SessionClient};
        if self.external.is_some() {
            role(ExternalClient::setup(self))
        } else {
            role(SessionClient::setup(self))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection trial lasts its sessions, not its duration (a run's estimate):
    /// held connections ~0.1 ms each to open, then their hold, and the agents' 0.3 s;
    /// counted sessions ~0.2 ms each plus their bytes, over up to 4 workers.
    #[test]
    fn a_connection_trial_is_estimated_by_its_sessions() {
        use crate::params::workload::Workload;
        use crate::plan::build::test_params;
        let held = test_params(Workload::Connections, &[("limit", "10000"), ("hold", "2")]);
        let s = of(ConnKind::Connections).wall_s(&held).unwrap();
        assert!((s - 3.3).abs() < 1e-9, "{s}");
        let sessions = test_params(Workload::Sessions, &[("count", "1000"), ("parallel", "1")]);
        let k = sessions.conn().unwrap();
        let want = 1000.0 * (2e-4 + k.size as f64 / 1e9) + f64::from(k.overhead_sessions) * 2e-4;
        let s = of(ConnKind::Sessions).wall_s(&sessions).unwrap();
        assert!((s - (want + 0.3)).abs() < 1e-9, "{s}");
    }

    /// Only held connections wait for the client to stop opening and then hold them;
    /// sessions, bulk and http end on their count (or the duration).
    #[test]
    fn only_held_connections_hold_after_the_client_stopped_opening() {
        for k in [ConnKind::Sessions, ConnKind::Bulk, ConnKind::Http] {
            assert_eq!(of(k).ending(), Ending::Counted { holds: false }, "{k:?}");
        }
        let held = of(ConnKind::Connections).ending();
        assert_eq!(held, Ending::Counted { holds: true });
    }

    /// Each side's external program: another than the one supported is refused by
    /// name, and the supported one off http downloads, each in its flag's words.
    #[test]
    fn an_external_program_is_refused_unless_supported_and_for_http() {
        use crate::params::workload::Workload;
        use crate::plan::build::test_params;
        let refused = |w, axis, prog: &str| {
            let mut p = test_params(w, &[]);
            let k = p.kind.conn_mut().unwrap();
            let side = match axis {
                "server_program" => &mut k.server_program,
                _ => &mut k.client_program,
            };
            *side = Some(prog.to_string());
            check(&p).unwrap_err()
        };
        for (w, axis, prog, want) in [
            (
                Workload::Http,
                "server_program",
                "apache2",
                "--server-program 'apache2' is not supported (supported: nginx)",
            ),
            (
                Workload::Http,
                "client_program",
                "wget",
                "--client-program 'wget' is not supported (supported: curl)",
            ),
            (
                Workload::Bulk,
                "server_program",
                "nginx",
                "--server-program serves http downloads only",
            ),
            (
                Workload::Bulk,
                "client_program",
                "curl",
                "--client-program runs http downloads only",
            ),
        ] {
            assert_eq!(refused(w, axis, prog), want);
        }
    }

    #[test]
    fn one_source_per_fifty_thousand_connections() {
        assert_eq!(sources_for(1), 1);
        assert_eq!(sources_for(50_000), 1);
        assert_eq!(sources_for(50_001), 2);
        assert_eq!(sources_for(120_000), 3);
        assert!(sources_for(MAX_LIMIT) <= crate::params::MAX_CLIENTS);
    }

    #[test]
    fn shards_keep_each_process_within_its_open_file_limit() {
        // Here: hard limit 20 000, not raisable → 19 744 per process.
        assert_eq!(shards_for(10_000, 20_000), 1);
        assert_eq!(shards_for(19_744, 20_000), 1);
        assert_eq!(shards_for(19_745, 20_000), 2);
        assert_eq!(shards_for(30_000, 20_000), 2);
        assert_eq!(shards_for(250_000, 20_000), 13);
        // Raised to fs.nr_open: at most 50 000 a process still.
        assert_eq!(shards_for(250_000, 1 << 20), 5);
        assert_eq!(shards_for(MAX_LIMIT, 1024), MAX_SHARDS);
        assert_eq!(shards_for(5, 0), 5);
        assert_eq!(shares(30_000, 2), vec![15_000, 15_000]);
        assert_eq!(shares(10, 3), vec![4, 3, 3]);
        assert_eq!(shares(250_000, 13).iter().sum::<u32>(), 250_000);
        assert!(shares(250_000, 13).iter().all(|&n| n <= 19_744));
    }

    fn hold(reached: u64, limit: u32, limiter: &str) -> HoldResults {
        HoldResults {
            reached,
            limit,
            alive_at_stop: reached,
            limiter: limiter.into(),
            errno: None,
            open_ms: reached as f64,
            nofile_before: Some(1024),
            nofile: Some(20_000),
        }
    }

    #[test]
    fn shards_add_up_and_the_first_short_one_names_the_limiter() {
        let mut a = client(0, 1, 0, 1.0);
        a.mode = ConnMode::Hold;
        let (mut b, mut c) = (a.clone(), a.clone());
        a.hold = Some(hold(100, 100, "limit (100 connections)"));
        b.hold = Some(hold(100, 100, "limit (100 connections)"));
        let m = merge_clients(vec![a.clone(), b.clone()]).hold.unwrap();
        assert_eq!((m.reached, m.limit, m.alive_at_stop), (200, 200, 200));
        assert_eq!(m.limiter, "limit (200 connections)");
        assert_eq!(m.open_ms, 100.0);
        c.hold = Some(hold(40, 100, "open-file limit of the client"));
        let m = merge_clients(vec![a.clone(), c.clone(), b.clone()])
            .hold
            .unwrap();
        assert_eq!((m.reached, m.limit), (240, 300));
        assert_eq!(m.limiter, "open-file limit of the client");
        let scale = HoldScale::of(&[a, c]);
        assert_eq!(scale.processes, 2);
        assert_eq!(scale.per_process, vec![100, 40]);
        assert_eq!(
            scale.nofile_text(),
            "raised the open-file limit from 1024 to 20000"
        );
        let s = merge_servers(vec![
            TcpServerResults {
                accepted: 3,
                max_open: 3,
                ..Default::default()
            },
            TcpServerResults {
                accepted: 4,
                max_open: 4,
                ..Default::default()
            },
        ]);
        assert_eq!((s.accepted, s.max_open), (7, 7));
    }

    /// Server shards as one: every counter adds up, the first shard's error stands;
    /// client shards likewise (distinct values: a counter added to another's shows).
    #[test]
    fn server_and_client_shards_add_every_counter() {
        let shard = |n: u64, error: Option<&str>| TcpServerResults {
            accepted: n,
            sessions: 2 * n,
            http_requests: 3 * n,
            bytes_sent: 4 * n,
            bytes_received: 5 * n,
            bad_requests: 6 * n,
            errors: 7 * n,
            first_error: error.map(String::from),
            max_open: 8 * n,
            accept_errors: 9 * n,
            external: None,
        };
        let s = merge_servers(vec![
            shard(1, None),
            shard(10, Some("a")),
            shard(100, Some("b")),
        ]);
        assert_eq!(s, shard(111, Some("a")));
        let mut a = client(0, 1, 0, 1.0);
        (a.sessions, a.failed, a.bytes, a.corrupt) = (1, 2, 3, 4);
        let mut b = a.clone();
        (b.sessions, b.failed, b.bytes, b.corrupt) = (10, 200, 3000, 40_000);
        let m = merge_clients(vec![a, b]);
        assert_eq!(
            (m.sessions, m.failed, m.bytes, m.corrupt),
            (11, 202, 3003, 40_004)
        );
    }

    #[test]
    fn peaks_come_from_the_samples_of_each_role() {
        let mut x = HoldScale::of(&[]);
        let s = |metric: &str, value: f64| proto::MetricSample {
            t_s: 0.0,
            metric: metric.into(),
            value,
        };
        let samples = [
            ("gateway", s("ct.count", 10.0)),
            ("gateway", s("ct.count", 30_002.0)),
            ("gateway", s("ct.count", 7.0)),
            ("client", s("ct.count", 99_999.0)),
            ("client", s("proc.hwm_kib", 100.0)),
            ("client", s("proc.hwm_kib", 300.0)),
            ("server", s("proc.hwm_kib", 200.0)),
        ];
        let samples: Vec<crate::testbed::Sampled> = samples
            .into_iter()
            .map(|(role, sample)| crate::testbed::Sampled {
                role,
                host: 0,
                sample,
            })
            .collect();
        x.note(&samples, None, Some(5));
        assert_eq!(x.gateway_conntrack, Some(30_002));
        assert_eq!(x.client_hwm_kib, Some(300));
        assert_eq!(x.server_hwm_kib, Some(200));
        assert_eq!(x.gateway_hwm_kib, None);
        assert_eq!(x.controller_hwm_kib, Some(5));
    }

    fn client(sessions: u64, parallel: u32, bytes: u64, elapsed_s: f64) -> SessionClientResults {
        SessionClientResults {
            mode: ConnMode::Bulk,
            parallel,
            sessions,
            failed: 0,
            errors: vec![],
            elapsed_ns: (elapsed_s * 1e9) as u64,
            bytes,
            corrupt: 0,
            session: Durations::default(),
            connect: Durations::default(),
            ttfb: Durations::default(),
            ttlb: Durations::default(),
            overhead: None,
            session_us: vec![],
            hold: None,
            external: None,
            events: None,
        }
    }

    #[test]
    fn bulk_overhead_is_split_out_as_the_study_does() {
        // Seed 003, null firewall: 10 sequential 1.7 MB transfers in 29.8 s with a
        // session latency of 1.38 s → 13.8 s of overhead, 16 s of transfer.
        let mut c = client(10, 1, 17_000_000, 29.8);
        c.overhead = Some(Durations {
            count: 30,
            mean_ns: 1.38e9,
            ..Default::default()
        });
        let s = combine(c.clone(), TcpServerResults::default(), None);
        let o = s.overhead.unwrap();
        assert!((o.overhead_s - 13.8).abs() < 1e-9);
        assert!((o.transfer_s - 16.0).abs() < 1e-9);
        assert!((o.net_goodput_bps.unwrap() - 17e6 * 8.0 / 16.0).abs() < 1e-3);
        assert!((s.goodput_bps.unwrap() - 17e6 * 8.0 / 29.8).abs() < 1e-3);
        // 3 × 3 in parallel: 9 sessions, 3 overheads in sequence.
        c.sessions = 9;
        c.parallel = 3;
        let o = combine(c, TcpServerResults::default(), None)
            .overhead
            .unwrap();
        assert!((o.sessions_charged - 3.0).abs() < 1e-9);
        // Overhead charged beyond the elapsed time (seed 003's check, 2026-11-27: 1.38 s
        // sessions charged 3 × in 3.5 s): no time left for data, no net goodput — it
        // was stored as bytes / 1 ns, 4·10¹⁷ b/s.
        let mut short = client(9, 3, 17_000_000, 3.5);
        short.overhead = Some(Durations {
            count: 30,
            mean_ns: 1.38e9,
            ..Default::default()
        });
        let o = combine(short, TcpServerResults::default(), None)
            .overhead
            .unwrap();
        assert_eq!((o.overhead_s, o.net_goodput_bps), (3.5, None), "{o:?}");
        // Without zero-byte sessions there is no split.
        let s = combine(client(5, 1, 5, 1.0), TcpServerResults::default(), None);
        assert!(s.overhead.is_none());
        assert_eq!(s.sessions_per_s, Some(5.0));
    }

    /// Held connections are opened and held, not sessions that complete: no
    /// sessions/s (it was reached / (open + hold)) and no goodput (0) — absent in the
    /// figures, the stored form, the store's headline and the table, not stated.
    #[test]
    fn held_connections_state_no_rate_and_no_goodput() {
        use crate::workloads::Summary;
        let mut c = client(40_000, 1, 0, 3.0);
        c.mode = ConnMode::Hold;
        c.hold = Some(hold(40_000, 40_000, "limit (40000 connections)"));
        let s = combine(c, TcpServerResults::default(), None);
        assert_eq!((s.sessions_per_s, s.goodput_bps), (None, None));
        let j = serde_json::to_value(&s).unwrap();
        assert!(
            j.get("sessions_per_s").is_none() && j.get("goodput_bps").is_none(),
            "{j}"
        );
        let h = s.headline();
        assert_eq!((h.throughput_bps, h.transactions_per_s), (None, None));
        assert_eq!((h.rtt_p50_us, h.rtt_max_us), (None, None));
        assert_eq!(h.duration_s, Some(3.0));
        assert_eq!(s.cells(), ["40000", "-", "-", "-", "0"]);
        // Sessions state both; a corrupt session counts once among the failed.
        let mut c = client(8, 2, 4096, 2.0);
        (c.failed, c.corrupt) = (3, 1);
        let s = combine(c, TcpServerResults::default(), None);
        assert_eq!(
            (s.sessions_per_s, s.goodput_bps),
            (Some(4.0), Some(16384.0))
        );
        assert_eq!(s.headline().transactions_per_s, Some(4.0));
        assert_eq!(s.cells()[4], "3");
    }

    /// The server got requests fwbench's client never sends (a corrupted request, or
    /// another talker): it was only a report warning, the trial stayed `ok` and its
    /// sessions were averaged. A doubt of the trial now, with how many of how many —
    /// in every mode but with gateway events (an update cuts sessions off mid-request
    /// there: the measurement, as their failures are).
    #[test]
    fn requests_the_client_never_sent_flag_the_trial() {
        use results::DoubtKind;
        let server = |bad: u64| TcpServerResults {
            accepted: 100,
            sessions: 100 - bad,
            bad_requests: bad,
            ..Default::default()
        };
        let clean = combine(client(100, 1, 4096, 1.0), server(0), None);
        assert_eq!(clean.doubts(), vec![]);
        let s = combine(client(100, 1, 4096, 1.0), server(3), None);
        let d = s.doubts();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, DoubtKind::Impossible);
        assert_eq!(
            d[0].why,
            "the server got 3 requests that were not what fwbench's client sends (bytes \
             that did not match the pattern or the protocol), over the 100 connections it \
             accepted, for 100 sessions the client attempted: data corrupted on the way, or \
             something other than the client talking to the server — the trial's sessions \
             are not what they seem"
        );
        // The trial driver makes it `flagged`, never `ok`.
        let mut o = crate::outcome::Outcome {
            figures: Some(crate::workloads::Figures::Conn(Box::new(s))),
            ..crate::outcome::Outcome::started("t0".into())
        };
        o.judge_witness();
        assert_eq!(o.status, results::Status::Flagged, "{:?}", o.doubts);
        // Failed sessions: their own doubt first, and they may be the cut-off requests.
        let mut c = client(97, 1, 4096, 1.0);
        c.failed = 3;
        let d = combine(c, server(2), None).doubts();
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].kind, DoubtKind::UnexpectedLoss);
        assert!(
            d[1].why.contains(
                "for 100 sessions the client attempted: data corrupted on the way, or \
                 something other than the client talking to the server, or some of the 3 \
                 sessions the client gave up on, cut off in their request"
            ),
            "{}",
            d[1].why
        );
        // Held connections: what stopped the opening is no doubt, a bad request is.
        // The server accepted them all.
        let held = |bad: u64| TcpServerResults {
            accepted: 40,
            ..server(bad)
        };
        let mut h = client(40, 1, 0, 1.0);
        h.mode = ConnMode::Hold;
        h.hold = Some(hold(40, 40, "limit (40 connections)"));
        assert_eq!(combine(h.clone(), held(0), None).doubts(), vec![]);
        // Fewer still open at stop than opened: the count held is not what it seems.
        let mut gone = h.clone();
        gone.hold.as_mut().unwrap().alive_at_stop = 30;
        let d = combine(gone.clone(), held(0), None).doubts();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, DoubtKind::UnexpectedLoss);
        assert!(
            d[0].why.starts_with(
                "10 of the 40 connections opened were closed or reset before the hold ended \
                 (30 still open at stop"
            ),
            "{}",
            d[0].why
        );
        // With gateway events an update closing them is the measurement.
        let mut cut = combine(gone, held(0), None);
        cut.events = Some(Box::new(crate::workloads::events::planted_summary(0)));
        assert_eq!(cut.doubts(), vec![]);
        // Fewer accepted at the server than the client opened: some waited in a
        // backlog (a relay out of descriptors), open to the client, never passed on.
        let short = TcpServerResults {
            accepted: 28,
            max_open: 28,
            ..server(0)
        };
        let d = combine(h.clone(), short, None).doubts();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kind, DoubtKind::UnexpectedLoss);
        assert!(
            d[0].why.starts_with(
                "the server accepted 28 of the 40 connections the client opened: 12 did not \
                 reach it by the end of the hold"
            ),
            "{}",
            d[0].why
        );
        let d = combine(h, held(1), None).doubts();
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].why.contains("for 40 connections the client attempted"),
            "{}",
            d[0].why
        );
        // With gateway events: not doubted.
        let mut e = combine(client(100, 1, 4096, 1.0), server(3), None);
        e.events = Some(Box::new(
            serde_json::from_value(serde_json::json!({"bin_ns": 1_000_000,
                "marker_src": null, "updates": [], "bins_lost": 0, "unbinned_lost": 0}))
            .unwrap(),
        ));
        assert_eq!(e.doubts(), vec![]);
    }

    /// A sweet-spot step stored and read back (resume) gives the search the same
    /// figures.
    #[test]
    fn a_stored_sessions_step_reads_back_for_the_search() {
        let s = combine(client(8, 2, 4096, 2.0), TcpServerResults::default(), None);
        let o = crate::outcome::Outcome {
            figures: Some(crate::workloads::Figures::Conn(Box::new(s.clone()))),
            ..crate::outcome::Outcome::started("t0".into())
        };
        let back =
            crate::outcome::Outcome::from_stored_step(&serde_json::to_value(&o).unwrap()).unwrap();
        let c = back.conn().unwrap();
        assert_eq!(c.sessions_per_s, s.sessions_per_s);
        assert_eq!(c.session.mean_ns, s.session.mean_ns);
        assert_eq!(c.failed, s.failed);
    }
}
