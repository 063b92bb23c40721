//! One echo trial, end to end: agents up, setup, start, run for t, stop, results,
//! teardown — in the phase order of `proto`, gateway first and down last.

use crate::error::Interrupted;
use crate::exec::adaptive::relative_ci;
use crate::exec::adaptive::ADAPTIVE_WINDOW;
use crate::outcome::Outcome;
use crate::outcome::Precision;
use crate::outcome::RoleInfo;
use crate::outcome::Status;
use crate::params::topology::Topology;
use crate::params::workload::Workload;
use crate::params::Pinning;
use crate::params::TrialParams;
use crate::params::ECHO_PORT;
use crate::testbed::launcher::{Agent, AgentFailed, Launcher};
use crate::testbed::{addr, Testbed};
use crate::workloads::echo::summarise;
use crate::workloads::echo::EchoSummary;
use anyhow::{bail, Result};
use proto::{
    EchoClientSpec, EchoServerSpec, ErrorKind, FromAgent, GatewayResults, GatewaySpec, RoleResults,
    RoleSpec, ToAgent,
};

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
    Packet(crate::workloads::packet::PacketSummary),
    Ping(crate::workloads::packet::PingSummary),
    Conn(Box<crate::workloads::conn::ConnSummary>),
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
        .map_err(crate::error::usage)?
        .map(|r| serde_json::to_value(&r))
        .transpose()?;
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
        Some(crate::workloads::conn::roles(tb, p)?)
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
            None => crate::workloads::packet::role_specs(tb, p)?,
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
        Workload::Ping => Collected::Ping(crate::workloads::packet::summarise_ping(results)?),
        Workload::Ndr | Workload::Degrade => bail!("a search is not a single trial"),
        Workload::Sessions | Workload::Bulk | Workload::Http | Workload::Connections => {
            Collected::Conn(Box::new(crate::workloads::conn::summarise(
                results,
                gr.as_ref().and_then(|g| g.proxy.clone()),
            )?))
        }
        Workload::Flood | Workload::Flow => Collected::Packet(
            crate::workloads::packet::summarise_packet(p, tb.topology, results, gr.as_ref())?,
        ),
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
