//! One trial, end to end: agents up, setup, start, run, stop, results, teardown — in
//! the phase order of `proto`, gateway first and down last. The workload decides the
//! roles and the figures ([`crate::workloads::Traffic`]); the testbed decides where each
//! agent runs ([`Testbed::launcher`]).

use crate::error::{usage, Interrupted};
use crate::exec::adaptive::{StopRule, ADAPTIVE_WINDOW};
use crate::exec::live::{Live, Schedule, Tick};
use crate::outcome::{Outcome, Precision, RoleInfo, Status};
use crate::params::topology::Topology;
use crate::params::workload::{ConnKind, TrialKind, Workload};
use crate::params::{Pinning, TrialParams};
use crate::testbed::launcher::{Agent, AgentFailed};
use crate::testbed::{Host, Testbed};
use crate::workloads::{Ending, Figures, Returned};
use anyhow::{anyhow, bail, Result};
use proto::{ErrorKind, FromAgent, GatewayResults, GatewaySpec, RoleSpec, ToAgent};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Clock exchanges with each remote agent (the tightest one is kept).
const CLOCK_EXCHANGES: u32 = 8;

/// Run one trial on `tb`. Returns `Interrupted` if `stop` was raised meanwhile.
/// `live`: per-interval counters of the traffic roles while the traffic runs.
pub fn run_trial(
    tb: &dyn Testbed,
    p: &TrialParams,
    pin: &Pinning,
    stop: &AtomicBool,
    live: Option<&mut Live>,
) -> Result<Outcome> {
    let started_at = crate::clock::now_utc();
    tb.ensure_clients(crate::params::events::client_addresses(p))?;
    if let Some(k) = p.packet() {
        tb.ensure_destinations(k.dsts)?;
    }
    // Held connections rely on the gateway's conntrack table: nobody changes it
    // meanwhile, and it is raised (and restored) if too small. Only a gateway in this
    // host's namespaces shares its global nf_conntrack_max.
    let conncap = match (&p.kind, tb.launcher(Host::Gateway)) {
        (TrialKind::Conn(ConnKind::Connections, k), Some(l)) if l.remote.is_none() => {
            crate::host::conncap::hold(k.limit)?
        }
        _ => None,
    };
    let mut run = Running::default();
    let res = drive(tb, p, pin, stop, &mut run, live);
    // Teardown in reverse order of setup: client, server, gateway.
    let mut teardown_err = None;
    while let Some(a) = run.agents.pop() {
        if let Err(e) = a.teardown() {
            teardown_err.get_or_insert(e);
        }
    }
    let raised = conncap.as_ref().and_then(|g| g.raised());
    drop(conncap);
    let finished_at = crate::clock::now_utc();
    let mut outcome = Outcome {
        finished_at,
        placement: run.placement,
        samples: run.samples,
        precision: run.precision,
        ..Outcome::started(started_at)
    };
    match res {
        Ok((mut summary, gateway)) => {
            if let (Figures::Conn(c), Some(r)) = (&mut summary, raised) {
                if let Some(x) = c.scale.as_mut() {
                    x.conntrack_max_raised = Some(r);
                }
            }
            outcome.figures = Some(summary);
            outcome.gateway = gateway;
            if let Some(k) = p.packet() {
                let steered =
                    p.gateway_cpu_list(crate::host::probe::cpus(), pin.gateway.as_deref());
                // Each host's threads, as the trial shared them out.
                let (clients, servers) = (tb.hosts_of(Host::Client), tb.hosts_of(Host::Server));
                let sender: Vec<u32> = crate::testbed::spread::client_shares(
                    k.flows, p.clients, k.threads, None, clients,
                )
                .iter()
                .map(|c| c.threads)
                .collect();
                let sink: Vec<u32> = (0..servers)
                    .map(|s| crate::testbed::spread::even(k.sink_threads, servers, s).max(1))
                    .collect();
                // One kernel for sender and gateway: both on this machine.
                let local = |h: Host| tb.launcher(h).is_some_and(|l| l.remote.is_none());
                let pinned = pin.client.as_deref().and_then(crate::limited_by::cpu_list);
                let place = if local(Host::Client) && local(Host::Gateway) {
                    crate::limited_by::SenderPlace::WithGateway {
                        pinned: pinned.as_deref(),
                    }
                } else {
                    crate::limited_by::SenderPlace::Elsewhere
                };
                outcome.judge_limit_with_cpus(&sender, &sink, steered.as_deref(), place);
            }
            outcome.judge_drops();
            if let Some(aim) = p.packet().and_then(|k| k.aim.as_deref()) {
                outcome.judge_aim(aim);
            }
            if let Some(expected) = nat_sources(tb, p) {
                outcome.judge_nat(p.model.name(), &expected);
            }
            outcome.judge_witness();
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

/// The source addresses the server may see in a NAT trial (`None`: no NAT check):
/// the gateway's server-side address after source NAT, the clients' own after
/// destination NAT. Only where a NAT rule matches (engine none installs nothing).
fn nat_sources(tb: &dyn Testbed, p: &TrialParams) -> Option<Vec<std::net::IpAddr>> {
    use firewall::models::Position;
    if !p.model.is_nat() || p.engine == firewall::Engine::None || p.position == Position::None {
        return None;
    }
    Some(if p.model.aims_at_gateway() {
        (1..=p.clients.max(1))
            .map(|i| tb.client_addr(p.family, i))
            .collect()
    } else {
        // Source NAT (snat, masquerade) to the gateway's address on the server side,
        // or the one chosen.
        vec![p
            .nat_to
            .unwrap_or_else(|| crate::testbed::addr::gateway_server_side(p.family))]
    })
}

/// A role on this machine whose protocol this kernel lacks (SCTP) makes the trial
/// unavailable before any agent starts — the same answer its agent would give, without a
/// gateway that set up its firewall first and whose state the next trial would have to
/// doubt (`run::session::residue_of` replaces such a testbed). Roles on other hosts
/// answer for their own kernels at setup.
fn refuse_missing_transport(tb: &dyn Testbed, roles: &crate::workloads::Roles) -> Result<()> {
    let here = |h: Host, i: u32| tb.launcher_at(h, i).is_some_and(|l| l.remote.is_none());
    let specs = (roles.server.iter())
        .chain([&roles.client])
        .map(|(h, s)| (*h, 0, s))
        .chain(roles.more_servers.iter().map(|(h, i, s)| (*h, *i, s)))
        .chain(roles.more_clients.iter().map(|(h, i, s)| (*h, *i, s)))
        .filter(|(h, i, _)| here(*h, *i))
        .map(|(_, _, s)| s);
    for spec in specs {
        let missing = spec
            .transport()
            .and_then(crate::host::check::transport_unavailable);
        if let Some(message) = missing {
            return Err(AgentFailed {
                role: spec.name(),
                kind: ErrorKind::Unavailable,
                message,
            }
            .into());
        }
    }
    Ok(())
}

/// What a trial accumulates while it runs, kept also when it fails part-way.
#[derive(Default)]
struct Running {
    agents: Vec<Agent>,
    placement: Vec<RoleInfo>,
    samples: Vec<crate::outcome::Sampled>,
    precision: Option<Precision>,
}

fn drive(
    tb: &dyn Testbed,
    p: &TrialParams,
    pin: &Pinning,
    stop: &AtomicBool,
    run: &mut Running,
    mut live: Option<&mut Live>,
) -> Result<(Figures, Option<GatewayResults>)> {
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
    let mut start = |role: &'static str,
                     host: Host,
                     index: u32,
                     cpus: &Option<String>,
                     spec: RoleSpec|
     -> Result<()> {
        check()?;
        let l = tb
            .launcher_at(host, index)
            .ok_or_else(|| anyhow!("testbed {} has no {host:?} host {}", tb.name(), index + 1))?;
        let mut a = Agent::spawn(&l, role, cpus.as_deref())?;
        // Another host's clock: how far it is from ours (one-way delays need it).
        let clock = match &l.remote {
            Some(_) => Some(a.clock_offset(CLOCK_EXCHANGES)?),
            None => None,
        };
        placement.push(RoleInfo {
            role,
            host: index,
            place: l.place.clone(),
            requested_cpus: cpus.clone(),
            cpus: a.info.cpus.clone(),
            pid: a.info.pid,
            clock,
        });
        let r = a.request(ToAgent::Setup(spec));
        agents.push(a);
        r.map(|_| ())
    };
    let traffic = crate::workloads::traffic(&p.kind);
    let firewall = crate::rules::request(p).map_err(usage)?.map(Box::new);
    if p.topology == Topology::Proxy && p.conn().is_none() {
        // Seed 003's table has N/A here: an application proxy relays connections only.
        return Err(AgentFailed {
            role: "gateway",
            kind: ErrorKind::Unavailable,
            message: format!(
                "N/A: the proxy relays TCP connections; {} traffic does not cross it \
                 (IP forwarding is off, as on the study's ftp-gw host)",
                p.workload()
            ),
        }
        .into());
    }
    let roles = traffic.roles(tb, p)?;
    refuse_missing_transport(tb, &roles)?;
    let has_gw = tb.launcher(Host::Gateway).is_some();
    if has_gw {
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
        // Pinning the gateway (or its `gateway_cpus`) pins its packet processing too.
        let gateway_cpus = p.gateway_cpu_list(crate::host::probe::cpus(), pin.gateway.as_deref());
        let spec = GatewaySpec {
            sysctls,
            firewall,
            steer_cpus: gateway_cpus.clone(),
            proxy: roles.proxy.clone(),
            events: crate::workloads::events::gateway_events(p, roles.marker),
            conntrack: crate::workloads::conntrack::gateway_spec(p),
        };
        start(
            "gateway",
            Host::Gateway,
            0,
            &gateway_cpus,
            RoleSpec::Gateway(spec),
        )?;
    }
    if let Some((host, spec)) = roles.server {
        start("server", host, 0, &pin.server, spec)?;
    }
    for (host, index, spec) in roles.more_servers {
        start("server", host, index, &pin.server, spec)?;
    }
    let (client_host, client_spec) = roles.client;
    start("client", client_host, 0, &pin.client, client_spec)?;
    for (host, index, spec) in roles.more_clients {
        start("client", host, index, &pin.client, spec)?;
    }
    if tb.gateway_is_external() {
        // Traffic crosses an appliance fwbench has no agent on: say so where the
        // gateway's counters and verdicts would be.
        placement.push(RoleInfo {
            role: "gateway",
            host: 0,
            place: crate::outcome::EXTERNAL_GATEWAY.into(),
            requested_cpus: None,
            cpus: "-".into(),
            pid: 0,
            clock: None,
        });
    }
    check()?;
    // Start: gateway, server, then clients (the traffic source) last.
    for a in agents.iter_mut() {
        a.request(ToAgent::Start)?;
    }
    let t0 = Instant::now();
    match traffic.ending() {
        Ending::Counted => {
            // Connection workloads wait for their sessions (adaptive length is refused),
            // of every client process when they were sharded.
            let clients: Vec<usize> = (0..agents.len())
                .filter(|&i| agents[i].role == "client")
                .collect();
            let hold = p.conn().map(|k| k.hold_s).unwrap_or(0.0);
            wait_for_conn(
                p,
                &mut agents[..],
                &clients,
                hold,
                stop,
                t0,
                live.as_deref_mut(),
            )?;
        }
        Ending::Timed { measuring } => {
            *precision = timed(p, &mut agents[..], measuring, t0, stop, live.as_deref_mut())?;
        }
    }
    if let Some(l) = live {
        tick(agents, t0, true, l)?;
    }
    // Stop the traffic source first, then the sink, then the gateway.
    let mut results = Vec::new();
    let mut gr = None;
    for (i, a) in agents.iter_mut().enumerate().rev() {
        // Agents and their placement rows were pushed together.
        let at = &placement[i];
        match a.request(ToAgent::Stop)? {
            FromAgent::Results {
                results: r,
                samples,
            } => {
                sampled.extend(samples.into_iter().map(|sample| crate::outcome::Sampled {
                    role: a.role,
                    host: at.host,
                    sample,
                }));
                match r {
                    proto::RoleResults::Gateway(r) => gr = Some(r),
                    r => results.push(Returned {
                        host: at.host,
                        place: at.place.clone(),
                        clock: at.clock,
                        results: r,
                    }),
                }
            }
            other => bail!("{} agent answered stop with {}", a.role, other.name()),
        }
    }
    if has_gw && gr.is_none() {
        bail!("missing results from the gateway agent");
    }
    // The gateway's updates are dated on its clock, the flows' bins on the client's:
    // the events are placed on the client's clock, then dated on the gateway's again.
    let shift = offset_of(placement, "client") - offset_of(placement, "gateway");
    let on_client_clock = gr.clone().map(|mut g| {
        for u in &mut g.updates {
            u.start_unix_ns = u.start_unix_ns.saturating_add_signed(shift);
        }
        g
    });
    let mut figures = traffic.collect(tb, p, results, on_client_clock.as_ref())?;
    if let (Some(e), Some(g)) = (figures.events_mut(), &gr) {
        for (u, row) in e.updates.iter_mut().zip(&g.updates) {
            u.row.start_unix_ns = row.start_unix_ns;
        }
    }
    match &mut figures {
        Figures::Conn(c) => {
            if let Some(scale) = c.scale.as_mut() {
                let controller = crate::host::probe::own_peak_rss_kib();
                scale.note(sampled, gr.as_ref(), controller);
            }
        }
        // A packet trial's delays were related across its hosts' clocks in `collect`.
        Figures::Packet(_) | Figures::Echo(_) | Figures::Ping(_) => {}
    }
    Ok((figures, gr))
}

/// A role's clock against the controller's, ns (0: local, or not measured).
fn offset_of(placement: &[RoleInfo], role: &str) -> i64 {
    placement
        .iter()
        .find(|r| r.role == role)
        .and_then(|r| r.clock.as_ref())
        .map_or(0, |k| k.offset_ns)
}

/// Ask every traffic role (not the gateway) for its counters and tell the observer.
fn tick(agents: &mut [Agent], t0: Instant, last: bool, live: &mut Live) -> Result<()> {
    let mut traffic: Vec<&mut Agent> = agents.iter_mut().filter(|a| a.role != "gateway").collect();
    let replies = Agent::request_each(&mut traffic, &ToAgent::Tally)?;
    let mut roles: Vec<(&'static str, proto::Tally)> = Vec::new();
    for (a, reply) in traffic.iter().zip(replies) {
        match reply {
            // Shards of one role (held connections over several processes) add up.
            FromAgent::Tally(t) => match roles.iter_mut().find(|(r, _)| *r == a.role) {
                Some((_, sum)) => {
                    sum.t_ns = sum.t_ns.max(t.t_ns);
                    sum.count += t.count;
                    sum.bytes += t.bytes;
                    sum.rtt_sum_ns += t.rtt_sum_ns;
                }
                None => roles.push((a.role, t)),
            },
            other => bail!("{} agent answered tally with {}", a.role, other.name()),
        }
    }
    (live.observe)(&Tick {
        t_s: t0.elapsed().as_secs_f64(),
        last,
        roles,
    });
    Ok(())
}

/// The timed traffic phase: `duration_s`, or — adaptive — until the [`StopRule`] is
/// satisfied by the `measuring` role's count, polled every window (at most `max_s`).
fn timed(
    p: &TrialParams,
    agents: &mut [Agent],
    measuring: &str,
    t0: Instant,
    stop: &AtomicBool,
    mut live: Option<&mut Live>,
) -> Result<Option<Precision>> {
    let mut ticks = live.as_ref().map(|l| Schedule::new(l.every));
    let min = Duration::from_secs_f64(p.duration_s);
    let max = p
        .adaptive
        .as_ref()
        .map(|a| Duration::from_secs_f64(a.max_s))
        .unwrap_or(min);
    // Every agent of the measuring role (a role spread over hosts counts on each).
    let mut rule = p.adaptive.as_ref().and_then(|a| {
        let which: Vec<usize> = (0..agents.len())
            .filter(|&i| agents[i].role == measuring)
            .collect();
        (!which.is_empty()).then(|| (which, StopRule::new(a.precision, min)))
    });
    let mut next_poll = t0 + ADAPTIVE_WINDOW;
    loop {
        let elapsed = t0.elapsed();
        if elapsed >= max {
            break;
        }
        if let (Some(s), Some(l)) = (ticks.as_mut(), live.as_deref_mut()) {
            if s.due(elapsed) && elapsed < max {
                tick(agents, t0, false, l)?;
            }
        }
        if let Some((which, rule)) = rule.as_mut() {
            if Instant::now() >= next_poll {
                next_poll += ADAPTIVE_WINDOW;
                let mut count = 0;
                for &i in which.iter() {
                    let FromAgent::Progress { count: n, .. } = agents[i].request(ToAgent::Poll)?
                    else {
                        bail!("{} agent did not answer poll with progress", agents[i].role);
                    };
                    count += n;
                }
                if rule.observe(t0.elapsed(), count) {
                    break;
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
        let until = if rule.is_some() {
            next_poll.saturating_duration_since(Instant::now())
        } else {
            min.saturating_sub(t0.elapsed())
        };
        let until = match &ticks {
            Some(s) => until.min(s.wait(t0.elapsed())),
            None => until,
        };
        std::thread::sleep(until.min(Duration::from_millis(50)));
    }
    Ok(rule.map(|(_, r)| r.precision(t0.elapsed())))
}

/// Wait until the session client is done: all its sessions (with a count) or the
/// trial's duration (without), or — connections — until it stopped opening, then hold
/// for `hold_s`. (Adaptive length is refused for connection workloads.)
fn wait_for_conn(
    p: &TrialParams,
    agents: &mut [Agent],
    clients: &[usize],
    hold_s: f64,
    stop: &AtomicBool,
    t0: Instant,
    mut live: Option<&mut Live>,
) -> Result<()> {
    let mut ticks = live.as_ref().map(|l| Schedule::new(l.every));
    let mut tick_due = |agents: &mut [Agent]| -> Result<()> {
        if let (Some(s), Some(l)) = (ticks.as_mut(), live.as_deref_mut()) {
            if s.due(t0.elapsed()) {
                tick(agents, t0, false, l)?;
            }
        }
        Ok(())
    };
    let counted =
        p.conn().is_some_and(|k| k.count.is_some()) || p.workload() == Workload::Connections;
    let limit = (!counted).then(|| Duration::from_secs_f64(p.duration_s));
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(Interrupted.into());
        }
        if limit.is_some_and(|l| t0.elapsed() >= l) {
            return Ok(());
        }
        tick_due(agents)?;
        for a in agents.iter_mut() {
            if let Some(status) = a.exited() {
                bail!("{} agent exited during the trial ({status})", a.role);
            }
        }
        if counted {
            let mut all_done = true;
            for &client in clients {
                let FromAgent::Progress { done, .. } = agents[client].request(ToAgent::Poll)?
                else {
                    bail!("client agent did not answer poll with progress");
                };
                all_done &= done;
            }
            if all_done {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(if counted { 20 } else { 50 }));
    }
    let held = Instant::now();
    while held.elapsed().as_secs_f64() < hold_s && p.workload() == Workload::Connections {
        if stop.load(Ordering::SeqCst) {
            return Err(Interrupted.into());
        }
        tick_due(agents)?;
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}
