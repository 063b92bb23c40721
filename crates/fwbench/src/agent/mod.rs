//! `fwbench agent`: one role of a trial, driven over stdin/stdout by the controller.
//!
//! Frames in on stdin, frames out on stdout, logs on stderr. The phase machine from
//! `proto` decides what is allowed. When stdin closes (the controller is gone, even
//! by SIGKILL) the agent undoes its setup and exits.

use proto::{
    encode, AgentError, AgentInfo, AgentPhase, Decoder, ErrorKind, FromAgent, GatewayResults,
    GatewaySpec, RoleResults, RoleSpec, ToAgent, PROTOCOL_VERSION,
};
use std::io::{Read, Write};
use std::sync::mpsc;
use traffic::conn::{Proxy, SessionClient, TcpServer};
use traffic::echo::{EchoClients, EchoServer};
use traffic::external::{ExternalClient, ExternalServer};
use traffic::ping::{PingClient, Reflector};
use traffic::udp::{UdpSink, UdpSource};
use traffic::TrafficError;

/// What this agent has set up and must undo.
enum Role {
    Server(EchoServer),
    Client(EchoClients),
    Gateway(Gateway),
    Source(UdpSource),
    /// The sink and its namespace's interface counters at Start.
    Sink(UdpSink, Vec<proto::IfCounters>),
    Ping(PingClient),
    Reflector(Reflector),
    TcpServer(TcpServer),
    ExternalServer(ExternalServer),
    Sessions(SessionClient),
    ExternalClient(ExternalClient),
}

struct Gateway {
    /// sysctls to restore at teardown: (name, old value)
    restore: Vec<(String, String)>,
    in_force: Vec<(String, String)>,
    /// fwbench's rule set while it is installed.
    rules: Option<firewall::install::Installed>,
    /// Interface counters at Start.
    interfaces: Vec<proto::IfCounters>,
    /// RPS masks to restore at teardown: (sysfs file, old value).
    restore_rps: Vec<(std::path::PathBuf, String)>,
    /// Proxy mode: the TCP relay while it runs.
    proxy: Option<Proxy>,
}

enum Input {
    Msg(ToAgent),
    Bad(String),
    Eof,
}

pub fn run(cpus: Option<Vec<usize>>) -> anyhow::Result<()> {
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions. Ctrl-C in
    // the terminal reaches the whole process group; the controller decides how to stop.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    if let Some(c) = &cpus {
        traffic::sys::set_affinity(c)
            .map_err(|e| anyhow::anyhow!("pinning agent to CPUs {c:?}: {e}"))?;
    }
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || read_stdin(tx));
    let mut out = std::io::stdout().lock();
    let mut send = |m: FromAgent| -> bool {
        match encode(&m) {
            Ok(b) => out.write_all(&b).and_then(|_| out.flush()).is_ok(),
            Err(e) => {
                tracing::error!("cannot encode {}: {e}", m.name());
                false
            }
        }
    };
    let mut phase = AgentPhase::AwaitHello;
    let mut role: Option<Role> = None;
    let mut sampler: Option<crate::host::probe::Sampler> = None;
    loop {
        let msg = match rx.recv().unwrap_or(Input::Eof) {
            Input::Msg(m) => m,
            Input::Bad(why) => {
                send(FromAgent::Error(error(ErrorKind::Protocol, why)));
                continue;
            }
            Input::Eof => {
                if role.is_some() {
                    tracing::warn!("controller gone (stdin closed): undoing setup");
                }
                undo(role.take());
                return Ok(());
            }
        };
        tracing::info!(phase = phase.name(), "received {}", msg.name());
        let next = match phase.on_message(&msg) {
            Ok(p) => p,
            Err(e) => {
                send(FromAgent::Error(error(ErrorKind::Protocol, e.to_string())));
                continue;
            }
        };
        let reply = match msg {
            ToAgent::Hello { .. } => FromAgent::Hello {
                version: PROTOCOL_VERSION,
                agent: agent_info(),
            },
            ToAgent::Setup(spec) => match setup(&spec) {
                Ok(r) => {
                    role = Some(r);
                    FromAgent::Ready
                }
                Err(e) => {
                    phase = phase.setup_failed();
                    send(FromAgent::Error(e));
                    continue;
                }
            },
            ToAgent::Start => {
                sampler = Some(crate::host::probe::Sampler::start());
                match role.as_mut() {
                    Some(Role::Client(c)) => c.start(),
                    Some(Role::Source(c)) => c.start(),
                    Some(Role::Ping(c)) => c.start(),
                    Some(Role::Sessions(c)) => c.start(),
                    Some(Role::ExternalClient(c)) => c.start(),
                    Some(Role::Gateway(g)) => g.interfaces = crate::host::probe::interfaces(),
                    Some(Role::Sink(_, i)) => *i = crate::host::probe::interfaces(),
                    _ => {}
                }
                FromAgent::Started
            }
            ToAgent::Poll => {
                let (count, done) = match role.as_ref() {
                    Some(Role::Sink(s, _)) => (s.progress(), false),
                    Some(Role::Client(c)) => (c.progress(), false),
                    Some(Role::Sessions(c)) => c.progress(),
                    Some(Role::ExternalClient(c)) => c.progress(),
                    _ => (0, false),
                };
                FromAgent::Progress { count, done }
            }
            ToAgent::Stop => {
                let samples = sampler.take().map(|s| s.stop()).unwrap_or_default();
                let traffic = |e: TrafficError| error(ErrorKind::Io, e.to_string());
                let results = match role.take() {
                    Some(Role::Client(c)) => Ok(RoleResults::EchoClient(c.stop())),
                    Some(Role::Server(s)) => Ok(RoleResults::EchoServer(s.stop())),
                    Some(Role::Source(s)) => s.stop().map(RoleResults::UdpSource).map_err(traffic),
                    Some(Role::Sink(s, before)) => s
                        .stop()
                        .map(|mut r| {
                            r.interfaces = crate::host::probe::since(
                                &crate::host::probe::interfaces(),
                                &before,
                            );
                            RoleResults::UdpSink(r)
                        })
                        .map_err(traffic),
                    Some(Role::Ping(s)) => s.stop().map(RoleResults::Ping).map_err(traffic),
                    Some(Role::Reflector(s)) => Ok(RoleResults::Reflector(s.stop())),
                    Some(Role::TcpServer(s)) => Ok(RoleResults::TcpServer(s.stop())),
                    Some(Role::ExternalServer(s)) => Ok(RoleResults::TcpServer(s.stop())),
                    Some(Role::Sessions(c)) => c
                        .stop()
                        .map(|r| RoleResults::SessionClient(Box::new(r)))
                        .map_err(traffic),
                    Some(Role::ExternalClient(c)) => c
                        .stop()
                        .map(|r| RoleResults::SessionClient(Box::new(r)))
                        .map_err(traffic),
                    Some(Role::Gateway(mut g)) => {
                        let interfaces = crate::host::probe::since(
                            &crate::host::probe::interfaces(),
                            &g.interfaces,
                        );
                        let firewall = g.rules.take().map(stop_rules);
                        let proxy = g.proxy.take().map(Proxy::stop);
                        let r = RoleResults::Gateway(GatewayResults {
                            sysctls: g.in_force.clone(),
                            firewall,
                            interfaces,
                            proxy,
                        });
                        role = Some(Role::Gateway(g)); // sysctls restored at teardown
                        Ok(r)
                    }
                    None => Err(error(ErrorKind::Internal, "stop without a role".into())),
                };
                match results {
                    Ok(results) => FromAgent::Results { results, samples },
                    Err(e) => {
                        phase = next;
                        send(FromAgent::Error(e));
                        continue;
                    }
                }
            }
            ToAgent::Teardown => {
                undo(role.take());
                send(FromAgent::Done);
                return Ok(());
            }
        };
        phase = next;
        if !send(reply) {
            undo(role.take());
            return Ok(());
        }
    }
}

fn error(kind: ErrorKind, message: String) -> AgentError {
    AgentError { kind, message }
}

fn read_stdin(tx: mpsc::Sender<Input>) {
    let mut stdin = std::io::stdin().lock();
    let mut dec = Decoder::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        loop {
            match dec.next_frame::<ToAgent>() {
                Ok(Some(m)) => {
                    if tx.send(Input::Msg(m)).is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    // The stream cannot be resynchronised after a bad frame.
                    let _ = tx.send(Input::Bad(e.to_string()));
                    let _ = tx.send(Input::Eof);
                    return;
                }
            }
        }
        match stdin.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = tx.send(Input::Eof);
                return;
            }
            Ok(n) => dec.push(&buf[..n]),
        }
    }
}

fn setup(spec: &RoleSpec) -> Result<Role, AgentError> {
    let traffic_err = |e: TrafficError| {
        let kind = match e {
            TrafficError::SctpUnavailable(_) => ErrorKind::Unavailable,
            TrafficError::BadSpec(_) => ErrorKind::BadSetup,
            TrafficError::Io { .. } => ErrorKind::Io,
        };
        error(kind, e.to_string())
    };
    match spec {
        RoleSpec::EchoServer(s) => EchoServer::start(s).map(Role::Server).map_err(traffic_err),
        RoleSpec::EchoClient(c) => EchoClients::connect(c)
            .map(Role::Client)
            .map_err(traffic_err),
        RoleSpec::Gateway(g) => setup_gateway(g).map(Role::Gateway),
        RoleSpec::UdpSource(s) => UdpSource::setup(s).map(Role::Source).map_err(traffic_err),
        RoleSpec::UdpSink(s) => UdpSink::start(s)
            .map(|s| Role::Sink(s, vec![]))
            .map_err(traffic_err),
        RoleSpec::Ping(s) => PingClient::setup(s).map(Role::Ping).map_err(traffic_err),
        RoleSpec::Reflector(s) => Reflector::start(s)
            .map(Role::Reflector)
            .map_err(traffic_err),
        RoleSpec::TcpServer(s) if s.external.is_some() => ExternalServer::start(s)
            .map(Role::ExternalServer)
            .map_err(traffic_err),
        RoleSpec::TcpServer(s) => TcpServer::start(s)
            .map(Role::TcpServer)
            .map_err(traffic_err),
        RoleSpec::SessionClient(c) if c.external.is_some() => ExternalClient::setup(c)
            .map(Role::ExternalClient)
            .map_err(traffic_err),
        RoleSpec::SessionClient(c) => SessionClient::setup(c)
            .map(Role::Sessions)
            .map_err(traffic_err),
    }
}

/// sysctls recorded with every trial (read in the gateway's namespace).
const GATEWAY_SYSCTLS: &[&str] = &[
    "net.ipv4.ip_forward",
    "net.ipv6.conf.all.forwarding",
    "net.core.netdev_max_backlog",
    "net.netfilter.nf_conntrack_max",
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.neigh.default.gc_thresh3",
];

fn sysctl_path(name: &str) -> String {
    format!("/proc/sys/{}", name.replace('.', "/"))
}

/// Read the verdict counters, then remove the rules (timed).
fn stop_rules(inst: firewall::install::Installed) -> serde_json::Value {
    firewall::Report::stop(inst).to_wire()
}

fn install_rules(value: &serde_json::Value) -> Result<firewall::install::Installed, AgentError> {
    use firewall::{install::InstallError, tool::ToolError};
    let request = firewall::Request::from_wire(value).map_err(|e| {
        error(
            ErrorKind::BadSetup,
            format!("bad rule request in setup: {e}"),
        )
    })?;
    let rendered = request
        .render()
        .map_err(|e| error(ErrorKind::BadSetup, e.to_string()))?;
    if firewall::install::clean_leftovers() {
        tracing::warn!("removed rules a crashed run left in this namespace");
    }
    firewall::install::install(&rendered).map_err(|e| {
        let kind = match e {
            InstallError::Tool(ToolError::MissingTool { .. } | ToolError::Rejected { .. }) => {
                ErrorKind::BadSetup
            }
            _ => ErrorKind::Io,
        };
        error(kind, e.to_string())
    })
}

fn setup_gateway(spec: &GatewaySpec) -> Result<Gateway, AgentError> {
    let mut restore = Vec::new();
    for (k, v) in &spec.sysctls {
        if k.contains("..") || k.contains('/') {
            return Err(error(ErrorKind::BadSetup, format!("bad sysctl name '{k}'")));
        }
        let path = sysctl_path(k);
        let old = std::fs::read_to_string(&path)
            .map_err(|e| error(ErrorKind::Io, format!("reading {k}: {e}")))?;
        if let Err(e) = std::fs::write(&path, v) {
            let g = Gateway {
                restore,
                in_force: vec![],
                rules: None,
                interfaces: vec![],
                restore_rps: vec![],
                proxy: None,
            };
            undo(Some(Role::Gateway(g)));
            return Err(error(ErrorKind::Io, format!("setting {k}={v}: {e}")));
        }
        restore.push((k.clone(), old.trim().to_owned()));
    }
    let in_force = GATEWAY_SYSCTLS
        .iter()
        .filter_map(|k| {
            let v = std::fs::read_to_string(sysctl_path(k)).ok()?;
            Some((k.to_string(), v.trim().to_owned()))
        })
        .collect();
    let mut g = Gateway {
        restore,
        in_force,
        rules: None,
        interfaces: vec![],
        restore_rps: vec![],
        proxy: None,
    };
    // Always set: a pinned gateway's CPUs, else none (the testbed's default), so a mask
    // left by a killed agent on a named testbed never outlives the next trial.
    if let Err(e) = steer(spec.steer_cpus.as_deref(), &mut g.restore_rps) {
        undo(Some(Role::Gateway(g)));
        return Err(e);
    }
    if let Some(fw) = &spec.firewall {
        match install_rules(fw) {
            Ok(i) => g.rules = Some(i),
            Err(e) => {
                undo(Some(Role::Gateway(g)));
                return Err(e);
            }
        }
    }
    if let Some(p) = &spec.proxy {
        match Proxy::start(p) {
            Ok(p) => g.proxy = Some(p),
            Err(e) => {
                let kind = match e {
                    TrafficError::BadSpec(_) => ErrorKind::BadSetup,
                    _ => ErrorKind::Io,
                };
                undo(Some(Role::Gateway(g)));
                return Err(error(kind, format!("proxy: {e}")));
            }
        }
    }
    Ok(g)
}

fn undo(role: Option<Role>) {
    match role {
        Some(Role::Client(c)) => drop(c.stop()),
        Some(Role::Server(s)) => drop(s.stop()),
        Some(Role::Source(s)) => drop(s.stop()),
        Some(Role::Sink(s, _)) => drop(s.stop()),
        Some(Role::Ping(s)) => drop(s.stop()),
        Some(Role::Reflector(s)) => drop(s.stop()),
        Some(Role::TcpServer(s)) => drop(s.stop()),
        Some(Role::ExternalServer(s)) => drop(s.stop()),
        Some(Role::Sessions(s)) => drop(s.stop()),
        Some(Role::ExternalClient(s)) => drop(s.stop()),
        Some(Role::Gateway(g)) => {
            if let Some(p) = g.proxy {
                drop(p.stop());
            }
            if let Some(rules) = g.rules {
                if let Err(e) = rules.remove() {
                    tracing::error!("removing fwbench's rules: {e}");
                }
            }
            for (path, old) in g.restore_rps.iter().rev() {
                if let Err(e) = std::fs::write(path, old) {
                    tracing::error!("restoring {}: {e}", path.display());
                }
            }
            for (k, old) in g.restore.iter().rev() {
                if let Err(e) = std::fs::write(sysctl_path(k), old) {
                    tracing::error!("restoring {k}={old}: {e}");
                }
            }
        }
        None => {}
    }
}

/// Steer receive processing of every interface (but `lo`) of the gateway's namespace
/// to `cpus` with RPS (`None`: no steering), noting each file so that teardown sets
/// it back to no steering — the interfaces are the testbed's own, and that is their
/// default.
fn steer(
    cpus: Option<&str>,
    restore: &mut Vec<(std::path::PathBuf, String)>,
) -> Result<(), AgentError> {
    let mask = match cpus {
        None => "0".to_string(),
        Some(cpus) => rps_mask(
            &traffic::sys::parse_cpus(cpus)
                .map_err(|e| error(ErrorKind::BadSetup, format!("gateway CPUs '{cpus}': {e}")))?,
        ),
    };
    let cpus = cpus.unwrap_or("none");
    let dir = std::fs::read_dir("/sys/class/net")
        .map_err(|e| error(ErrorKind::Io, format!("/sys/class/net: {e}")))?;
    for e in dir.flatten() {
        if e.file_name() == "lo" {
            continue;
        }
        let Ok(queues) = std::fs::read_dir(e.path().join("queues")) else {
            continue;
        };
        for q in queues.flatten() {
            let f = q.path().join("rps_cpus");
            if !q.file_name().to_string_lossy().starts_with("rx-") || !f.exists() {
                continue;
            }
            let old = std::fs::read_to_string(&f)
                .map_err(|e| error(ErrorKind::Io, format!("{}: {e}", f.display())))?;
            std::fs::write(&f, &mask).map_err(|e| {
                error(
                    ErrorKind::Io,
                    format!("steering to CPUs {cpus} ({}): {e}", f.display()),
                )
            })?;
            restore.push((f, old.trim().to_owned()));
        }
    }
    Ok(())
}

/// CPU list → the hex mask sysfs takes (comma every 32 bits), e.g. [1] → "2".
fn rps_mask(cpus: &[usize]) -> String {
    let words = cpus.iter().max().map(|m| m / 32 + 1).unwrap_or(1);
    let mut w = vec![0u32; words];
    for &c in cpus {
        w[c / 32] |= 1 << (c % 32);
    }
    let mut parts: Vec<String> = w.iter().rev().map(|x| format!("{x:08x}")).collect();
    parts[0] = format!("{:x}", w[words - 1]);
    parts.join(",")
}

pub fn agent_info() -> AgentInfo {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    AgentInfo {
        fwbench_version: env!("CARGO_PKG_VERSION").into(),
        pid: std::process::id(),
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpus: traffic::sys::get_affinity()
            .map(|c| traffic::sys::format_cpus(&c))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::rps_mask;

    #[test]
    fn rps_masks() {
        assert_eq!(rps_mask(&[1]), "2");
        assert_eq!(rps_mask(&[0, 1]), "3");
        assert_eq!(rps_mask(&[0, 33]), "2,00000001");
    }
}
