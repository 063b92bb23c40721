//! One echo trial, end to end: agents up, setup, start, run for t, stop, results,
//! teardown — in the phase order of `proto`, gateway first and down last.

use crate::launcher::{Agent, AgentFailed, Launcher};
use crate::testbed::{addr, Testbed, Topology};
use anyhow::{bail, Result};
use proto::{
    EchoClientResults, EchoClientSpec, EchoServerResults, EchoServerSpec, ErrorKind, Family,
    FrameSize, FromAgent, GatewayResults, GatewaySpec, Proto, RoleResults, RoleSpec, ServerMode,
    ToAgent,
};

use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
    /// Ruleset file for model `import`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import: Option<String>,
    /// What traffic the trial sends (echo trials omit it, so their keys stay stable).
    #[serde(default, skip_serializing_if = "Workload::is_echo")]
    pub workload: Workload,
    /// Flood, flow and ping parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<crate::packet::PacketParams>,
    /// sessions, bulk, http and connections parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn: Option<crate::conn::ConnParams>,
    /// ndr and degrade: what the search looks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::SearchParams>,
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

/// Rate windows of an adaptive trial.
pub const ADAPTIVE_WINDOW: Duration = Duration::from_millis(200);

/// Relative half-width of the 95 % confidence interval of the mean of `x` (Student t),
/// from 5 values on; the first window is left out (ramp-up).
pub fn relative_ci(x: &[f64]) -> Option<f64> {
    let x = x.get(1..)?;
    if x.len() < 5 {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(t975(x.len() - 1) * (var / n).sqrt() / mean)
}

/// Two-sided 95 % Student t quantile for `df` degrees of freedom.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=60 => 2.000 + (2.042 - 2.000) * (60 - df) as f64 / 30.0,
        61..=120 => 1.980 + (2.000 - 1.980) * (120 - df) as f64 / 60.0,
        _ => 1.960,
    }
}

/// The traffic of a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Seed 000's echo cycle.
    #[default]
    Echo,
    /// UDP at the maximum (or a given) rate.
    Flood,
    /// Paced UDP with per-packet timing.
    Flow,
    /// UDP echo, one probe at a time.
    Ping,
    /// RFC 2544 throughput search: flood trials at searched rates.
    Ndr,
    /// Degradation point search: flow trials at searched rule counts.
    Degrade,
    /// TCP sessions: connect, request, response, close (seed 003).
    Sessions,
    /// Bulk transfers, one per session (seed 003).
    Bulk,
    /// HTTP/1.1 downloads (seed 004).
    Http,
    /// Concurrent connection capacity: open and hold connections.
    Connections,
}

impl Workload {
    pub fn is_echo(&self) -> bool {
        *self == Workload::Echo
    }
    /// sessions, bulk, http, connections: TCP connections to the built-in server.
    pub fn is_conn(&self) -> bool {
        matches!(
            self,
            Workload::Sessions | Workload::Bulk | Workload::Http | Workload::Connections
        )
    }
}

crate::names::named!(Workload, "workload", {
    Echo => "echo",
    Flood => "flood",
    Flow => "flow",
    Ping => "ping",
    Ndr => "ndr",
    Degrade => "degrade",
    Sessions => "sessions",
    Bulk => "bulk",
    Http => "http",
    Connections => "connections",
});

/// CPU placement of each role ("0", "0-1", …); `None` = wherever the kernel likes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Pinning {
    pub client: Option<String>,
    pub gateway: Option<String>,
    pub server: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Unavailable,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unavailable => "unavailable",
            Status::Failed => "failed",
        }
    }
}

/// The trial was interrupted (Ctrl-C); nothing of it is stored.
#[derive(Debug)]
pub struct Interrupted;
impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}
impl std::error::Error for Interrupted {}

#[derive(Debug, Clone, Serialize)]
pub struct RoleInfo {
    pub role: &'static str,
    pub place: String,
    pub requested_cpus: Option<String>,
    pub cpus: String,
    pub pid: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub status: Status,
    pub error: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub placement: Vec<RoleInfo>,
    pub summary: Option<EchoSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet: Option<crate::packet::PacketSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ping: Option<crate::packet::PingSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conn: Option<crate::conn::ConnSummary>,
    /// Adaptive trials: the precision asked for and reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// Metrics each role sampled during the trial (stored in `samples`, not in `results`).
    #[serde(skip)]
    pub samples: Vec<(&'static str, proto::MetricSample)>,
    /// ndr and degrade: the search's result (its steps are trials of their own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::SearchSummary>,
    pub gateway: Option<GatewayResults>,
}

impl Outcome {
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
        }
    }

    /// The gateway's rule-set report (engine, rules, install_ms, verdicts …), if any.
    pub fn firewall(&self) -> Option<firewall::Report> {
        let wire = self.gateway.as_ref()?.firewall.as_ref()?;
        firewall::Report::from_wire(wire).ok()
    }
}

/// Per-client figures that combine both ends.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientSummary {
    pub client: u32,
    pub source: String,
    /// frames, bytes at MP1 (client sent), MP2 (server received), MP3 (server echoed), MP4 (client received)
    pub mp: [proto::Counter; 4],
    pub unsent_client: u64,
    pub unsent_server: u64,
    pub lost: u64,
    pub validation_client: proto::Validation,
    pub validation_server: proto::Validation,
    pub throughput_bps: f64,
    pub transactions_per_s: f64,
    pub rtt: proto::RttSummary,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EchoSummary {
    pub elapsed_s: f64,
    /// Echoed payload received by the clients (MP4 bytes) × 8 / elapsed.
    pub throughput_bps: f64,
    /// Completed echo cycles per second, all clients.
    pub transactions_per_s: f64,
    pub per_client_throughput_bps: Vec<f64>,
    pub validation_errors: u64,
    pub unsent: u64,
    pub lost: u64,
    pub mp: [proto::Counter; 4],
    pub rtt: proto::RttSummary,
    pub clients: Vec<ClientSummary>,
}

/// Combine both ends' counters (pure; unit-tested).
pub fn summarise(c: &EchoClientResults, s: &EchoServerResults) -> EchoSummary {
    let elapsed_s = (c.elapsed_ns as f64 / 1e9).max(1e-9);
    let mut clients = Vec::new();
    let mut mp = [proto::Counter::default(); 4];
    let (mut verr, mut unsent, mut lost) = (0, 0, 0);
    for cs in &c.clients {
        let sv = s.clients.iter().find(|x| x.client == cs.client);
        let m = [
            cs.mp1,
            sv.map(|x| x.mp2).unwrap_or_default(),
            sv.map(|x| x.mp3).unwrap_or_default(),
            cs.mp4,
        ];
        for (t, v) in mp.iter_mut().zip(m.iter()) {
            t.merge(v);
        }
        let vs = sv.map(|x| x.validation).unwrap_or_default();
        verr += cs.validation.total() + vs.total();
        unsent += cs.unsent + sv.map(|x| x.unsent).unwrap_or(0);
        lost += cs.lost;
        clients.push(ClientSummary {
            client: cs.client,
            source: cs.source.clone(),
            mp: m,
            unsent_client: cs.unsent,
            unsent_server: sv.map(|x| x.unsent).unwrap_or(0),
            lost: cs.lost,
            validation_client: cs.validation,
            validation_server: vs,
            throughput_bps: cs.mp4.bytes as f64 * 8.0 / elapsed_s,
            transactions_per_s: cs.rtt.count as f64 / elapsed_s,
            rtt: cs.rtt,
            error: cs
                .error
                .clone()
                .or_else(|| sv.and_then(|x| x.error.clone())),
        });
    }
    // Server connections that no client claims (should not happen) still count.
    for sv in s
        .clients
        .iter()
        .filter(|x| !c.clients.iter().any(|cs| cs.client == x.client))
    {
        verr += sv.validation.total();
    }
    EchoSummary {
        elapsed_s,
        throughput_bps: mp[3].bytes as f64 * 8.0 / elapsed_s,
        transactions_per_s: c.rtt.count as f64 / elapsed_s,
        per_client_throughput_bps: clients.iter().map(|x| x.throughput_bps).collect(),
        validation_errors: verr,
        unsent,
        lost,
        mp,
        rtt: c.rtt,
        clients,
    }
}

/// Run one echo trial on `tb`. Returns `Interrupted` if `stop` was raised meanwhile.
pub fn run_trial(
    tb: &Testbed,
    p: &TrialParams,
    pin: &Pinning,
    stop: &AtomicBool,
) -> Result<Outcome> {
    let started_at = crate::clock::now_utc();
    tb.ensure_clients(p.clients)?;
    let mut run = Running::default();
    let res = drive(tb, p, pin, stop, &mut run);
    // Teardown in reverse order of setup: client, server, gateway.
    let mut teardown_err = None;
    while let Some(a) = run.agents.pop() {
        if let Err(e) = a.teardown() {
            teardown_err.get_or_insert(e);
        }
    }
    let finished_at = crate::clock::now_utc();
    let mut outcome = Outcome {
        finished_at,
        placement: run.placement,
        samples: run.samples,
        precision: run.precision,
        ..Outcome::started(started_at)
    };
    match res {
        Ok((summary, gateway)) => {
            match summary {
                Collected::Echo(s) => outcome.summary = Some(s),
                Collected::Packet(s) => outcome.packet = Some(s),
                Collected::Ping(s) => outcome.ping = Some(s),
                Collected::Conn(s) => outcome.conn = Some(*s),
            }
            outcome.gateway = gateway;
            if let Some(e) = teardown_err {
                outcome.status = Status::Failed;
                outcome.error = Some(format!("teardown: {e:#}"));
            }
        }
        Err(e) if e.is::<Interrupted>() => return Err(e),
        Err(e) => {
            outcome.status = match e.downcast_ref::<AgentFailed>() {
                Some(f) if f.kind == ErrorKind::Unavailable => Status::Unavailable,
                _ => Status::Failed,
            };
            outcome.error = Some(format!("{e:#}"));
        }
    }
    Ok(outcome)
}

/// A workload's combined figures.
enum Collected {
    Echo(EchoSummary),
    Packet(crate::packet::PacketSummary),
    Ping(crate::packet::PingSummary),
    Conn(Box<crate::conn::ConnSummary>),
}

/// What a trial accumulates while it runs, kept also when it fails part-way.
#[derive(Default)]
struct Running {
    agents: Vec<Agent>,
    placement: Vec<RoleInfo>,
    samples: Vec<(&'static str, proto::MetricSample)>,
    precision: Option<Precision>,
}

fn drive(
    tb: &Testbed,
    p: &TrialParams,
    pin: &Pinning,
    stop: &AtomicBool,
    run: &mut Running,
) -> Result<(Collected, Option<GatewayResults>)> {
    let Running {
        agents,
        placement,
        samples: sampled,
        precision,
    } = run;
    let check = || -> Result<()> {
        if stop.load(Ordering::SeqCst) {
            Err(Interrupted.into())
        } else {
            Ok(())
        }
    };
    let mut start =
        |role: &'static str, ns: String, cpus: &Option<String>, spec: RoleSpec| -> Result<()> {
            check()?;
            let l = Launcher::netns(&ns);
            let mut a = Agent::spawn(&l, role, cpus.as_deref())?;
            placement.push(RoleInfo {
                role,
                place: l.place.clone(),
                requested_cpus: cpus.clone(),
                cpus: a.info.cpus.clone(),
                pid: a.info.pid,
            });
            let r = a.request(ToAgent::Setup(spec));
            agents.push(a);
            r.map(|_| ())
        };
    let firewall = crate::rules::request(p)
        .map_err(crate::usage)?
        .map(|r| r.to_wire());
    if p.topology == Topology::Proxy && !p.workload.is_conn() {
        // Seed 003's table has N/A here: an application proxy relays connections only.
        return Err(AgentFailed {
            role: "gateway",
            kind: ErrorKind::Unavailable,
            message: format!(
                "N/A: the proxy relays TCP connections; {} traffic does not cross it \
                 (IP forwarding is off, as on the study's ftp-gw host)",
                p.workload
            ),
        }
        .into());
    }
    let conn_roles = if p.workload.is_conn() {
        Some(crate::conn::roles(tb, p)?)
    } else {
        None
    };
    let gw_index = tb.gateway_ns().map(|ns| {
        let mut sysctls = vec![];
        // Forward routes; the proxy's host does not (only its relay carries traffic).
        let forwarding = match p.topology {
            Topology::Forward => Some("1"),
            Topology::Proxy => Some("0"),
            _ => None,
        };
        if let Some(v) = forwarding {
            sysctls.push(("net.ipv4.ip_forward".to_string(), v.to_string()));
            sysctls.push(("net.ipv6.conf.all.forwarding".to_string(), v.to_string()));
        }
        (
            ns,
            GatewaySpec {
                sysctls,
                firewall,
                // Pinning the gateway pins its packet processing too.
                steer_cpus: pin.gateway.clone(),
                proxy: conn_roles.as_ref().and_then(|r| r.proxy.clone()),
            },
        )
    });
    let has_gw = gw_index.is_some();
    if let Some((ns, spec)) = gw_index {
        start("gateway", ns, &pin.gateway, RoleSpec::Gateway(spec))?;
    }
    let server = tb.server_addr(p.family);
    let (mut server_ns, mut client_ns) = (tb.server_ns(), tb.client_ns());
    let (server_spec, client_spec) = match p.workload {
        Workload::Echo => (
            Some(RoleSpec::EchoServer(EchoServerSpec {
                proto: p.proto,
                mode: p.server,
                listen: server,
                port: ECHO_PORT,
                clients: p.clients,
                max_frame: p.frame.max(),
                timeout_ms: p.timeout_ms,
            })),
            RoleSpec::EchoClient(EchoClientSpec {
                proto: p.proto,
                sources: (1..=p.clients).map(|i| addr::client(p.family, i)).collect(),
                server,
                port: ECHO_PORT,
                frame: p.frame,
                seed: p.seed,
                timeout_ms: p.timeout_ms,
            }),
        ),
        _ => match conn_roles {
            Some(r) => {
                (server_ns, client_ns) = (r.server_ns, r.client_ns);
                (Some(r.server), r.client)
            }
            None => crate::packet::role_specs(tb, p)?,
        },
    };
    if let Some(spec) = server_spec {
        start("server", server_ns, &pin.server, spec)?;
    }
    start("client", client_ns, &pin.client, client_spec)?;
    check()?;
    // Start: gateway, server, then clients (the traffic source) last.
    for a in agents.iter_mut() {
        a.request(ToAgent::Start)?;
    }
    let t0 = Instant::now();
    // Connection workloads wait for their sessions here; the timed loop below then ends at once.
    let min = if p.workload.is_conn() {
        let client = agents.len() - 1;
        let hold = p.conn.as_ref().map(|k| k.hold_s).unwrap_or(0.0);
        wait_for_conn(p, &mut agents[..], client, hold, stop)?;
        Duration::ZERO
    } else {
        Duration::from_secs_f64(p.duration_s)
    };
    let max = p
        .adaptive
        .as_ref()
        .map(|a| Duration::from_secs_f64(a.max_s))
        .unwrap_or(min);
    // Adaptive: poll the measuring role (the sink, or the echo client) every window.
    let measuring = p.adaptive.as_ref().and_then(|_| {
        let role = if p.workload == Workload::Echo {
            "client"
        } else {
            "server"
        };
        agents.iter().position(|a| a.role == role)
    });
    let mut windows: Vec<f64> = Vec::new();
    let mut last = (t0, 0u64);
    let mut next_poll = t0 + ADAPTIVE_WINDOW;
    loop {
        let elapsed = t0.elapsed();
        if elapsed >= max {
            break;
        }
        if let (Some(a), Some(i)) = (&p.adaptive, measuring) {
            if Instant::now() >= next_poll {
                next_poll += ADAPTIVE_WINDOW;
                let FromAgent::Progress { count, .. } = agents[i].request(ToAgent::Poll)? else {
                    bail!("{} agent did not answer poll with progress", agents[i].role);
                };
                let now = Instant::now();
                let dt = (now - last.0).as_secs_f64();
                windows.push(count.saturating_sub(last.1) as f64 / dt);
                tracing::debug!("adaptive window {:.0}/s", windows[windows.len() - 1]);
                last = (now, count);
                if elapsed >= min {
                    if let Some(rel) = relative_ci(&windows) {
                        if rel <= a.precision {
                            break;
                        }
                    }
                }
            }
        } else if elapsed >= min {
            break;
        }
        if stop.load(Ordering::SeqCst) {
            return Err(Interrupted.into());
        }
        for a in agents.iter_mut() {
            if let Some(status) = a.exited() {
                bail!("{} agent exited during the trial ({status})", a.role);
            }
        }
        let until = if measuring.is_some() {
            next_poll.saturating_duration_since(Instant::now())
        } else {
            min.saturating_sub(t0.elapsed())
        };
        std::thread::sleep(until.min(Duration::from_millis(50)));
    }
    if let Some(a) = &p.adaptive {
        *precision = Some(Precision {
            target: a.precision,
            achieved: relative_ci(&windows),
            windows: windows.len(),
            duration_s: t0.elapsed().as_secs_f64(),
            reached: relative_ci(&windows).is_some_and(|r| r <= a.precision),
        });
    }
    // Stop the traffic source first, then the sink, then the gateway.
    let mut results = Vec::new();
    let mut gr = None;
    for a in agents.iter_mut().rev() {
        match a.request(ToAgent::Stop)? {
            FromAgent::Results {
                results: r,
                samples,
            } => {
                sampled.extend(samples.into_iter().map(|s| (a.role, s)));
                match r {
                    RoleResults::Gateway(r) => gr = Some(r),
                    r => results.push(r),
                }
            }
            other => bail!("{} agent answered stop with {}", a.role, other.name()),
        }
    }
    if has_gw && gr.is_none() {
        bail!("missing results from the gateway agent");
    }
    let collected = match p.workload {
        Workload::Echo => {
            let (mut cr, mut sr) = (None, None);
            for r in results {
                match r {
                    RoleResults::EchoClient(r) => cr = Some(r),
                    RoleResults::EchoServer(r) => sr = Some(r),
                    _ => {}
                }
            }
            let (Some(cr), Some(sr)) = (cr, sr) else {
                bail!("missing results from the client or server agent");
            };
            Collected::Echo(summarise(&cr, &sr))
        }
        Workload::Ping => Collected::Ping(crate::packet::summarise_ping(results)?),
        Workload::Ndr | Workload::Degrade => bail!("a search is not a single trial"),
        Workload::Sessions | Workload::Bulk | Workload::Http | Workload::Connections => {
            Collected::Conn(Box::new(crate::conn::summarise(
                results,
                gr.as_ref().and_then(|g| g.proxy.clone()),
            )?))
        }
        Workload::Flood | Workload::Flow => Collected::Packet(crate::packet::summarise_packet(
            p,
            tb.topology,
            results,
            gr.as_ref(),
        )?),
    };
    Ok((collected, gr))
}

/// Wait until the session client is done: all its sessions (with a count) or the
/// trial's duration (without), or — connections — until it stopped opening, then hold
/// for `hold_s`. (Adaptive length is refused for connection workloads.)
fn wait_for_conn(
    p: &TrialParams,
    agents: &mut [Agent],
    client: usize,
    hold_s: f64,
    stop: &AtomicBool,
) -> Result<()> {
    let t0 = Instant::now();
    let counted =
        p.conn.as_ref().is_some_and(|k| k.count.is_some()) || p.workload == Workload::Connections;
    let limit = (!counted).then(|| Duration::from_secs_f64(p.duration_s));
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(Interrupted.into());
        }
        if limit.is_some_and(|l| t0.elapsed() >= l) {
            return Ok(());
        }
        for a in agents.iter_mut() {
            if let Some(status) = a.exited() {
                bail!("{} agent exited during the trial ({status})", a.role);
            }
        }
        if counted {
            let FromAgent::Progress { done, .. } = agents[client].request(ToAgent::Poll)? else {
                bail!("client agent did not answer poll with progress");
            };
            if done {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(if counted { 20 } else { 50 }));
    }
    let held = Instant::now();
    while held.elapsed().as_secs_f64() < hold_s && p.workload == Workload::Connections {
        if stop.load(Ordering::SeqCst) {
            return Err(Interrupted.into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::{Counter, EchoClientStats, EchoServerStats, RttSummary, Validation};

    #[test]
    fn relative_confidence_interval() {
        // First window left out; then 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sd 2.138,
        // t(7) = 2.365 → half-width 1.788, relative 0.3576.
        let r = relative_ci(&[100.0, 2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((r - 0.3576).abs() < 1e-3, "{r}");
        assert_eq!(relative_ci(&[1.0, 2.0, 3.0]), None, "too few windows");
        assert_eq!(relative_ci(&[5.0; 7]), Some(0.0));
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(1000), 1.96);
    }

    #[test]
    fn summary_adds_up_both_ends() {
        let c = EchoClientResults {
            clients: vec![
                EchoClientStats {
                    client: 1,
                    mp1: Counter {
                        frames: 10,
                        bytes: 640,
                    },
                    mp4: Counter {
                        frames: 10,
                        bytes: 640,
                    },
                    rtt: RttSummary {
                        count: 10,
                        ..Default::default()
                    },
                    ..Default::default()
                },
                EchoClientStats {
                    client: 2,
                    mp1: Counter {
                        frames: 5,
                        bytes: 320,
                    },
                    mp4: Counter {
                        frames: 4,
                        bytes: 256,
                    },
                    lost: 1,
                    unsent: 2,
                    validation: Validation {
                        gaps: 1,
                        ..Default::default()
                    },
                    rtt: RttSummary {
                        count: 4,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ],
            rtt: RttSummary {
                count: 14,
                ..Default::default()
            },
            elapsed_ns: 2_000_000_000,
        };
        let s = EchoServerResults {
            clients: vec![
                EchoServerStats {
                    client: 2,
                    mp2: Counter {
                        frames: 4,
                        bytes: 256,
                    },
                    mp3: Counter {
                        frames: 4,
                        bytes: 256,
                    },
                    unsent: 1,
                    validation: Validation {
                        wrong_size: 3,
                        ..Default::default()
                    },
                    ..Default::default()
                },
                EchoServerStats {
                    client: 1,
                    mp2: Counter {
                        frames: 10,
                        bytes: 640,
                    },
                    mp3: Counter {
                        frames: 10,
                        bytes: 640,
                    },
                    ..Default::default()
                },
            ],
        };
        let sum = summarise(&c, &s);
        assert_eq!(sum.throughput_bps, (640.0 + 256.0) * 8.0 / 2.0);
        assert_eq!(sum.transactions_per_s, 7.0);
        assert_eq!(sum.per_client_throughput_bps, vec![2560.0, 1024.0]);
        assert_eq!(sum.validation_errors, 4);
        assert_eq!(sum.unsent, 3);
        assert_eq!(sum.lost, 1);
        assert_eq!(
            sum.mp[1],
            Counter {
                frames: 14,
                bytes: 896
            }
        );
        assert_eq!(sum.clients[1].mp[2].frames, 4);
    }
}
