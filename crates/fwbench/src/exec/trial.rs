//! One trial, end to end: agents up, setup, start, run, stop, results, teardown — in
//! the phase order of `proto`, gateway first and down last. The workload decides the
//! roles and the figures ([`crate::workloads::Traffic`]); the testbed decides where each
//! agent runs ([`Testbed::launcher`]).
//!
//! Must not: name a workload family. What a family needs around its agents it says
//! through the trait's hooks: [`Traffic::prepare`] (held until after teardown),
//! [`Traffic::conntrack`] (the gateway's table), [`Traffic::ending`] (the traffic
//! phase) and [`Traffic::finish`] (its figures completed from the samples).

use crate::error::{usage, Interrupted};
use crate::exec::adaptive::{StopRule, ADAPTIVE_WINDOW};
use crate::exec::live::{Live, Schedule, Tick};
use crate::outcome::{Outcome, Precision, RoleInfo, Status};
use crate::params::topology::Topology;
use crate::params::{Pinning, TrialParams};
use crate::testbed::launcher::{Agent, AgentFailed};
use crate::testbed::{Host, Testbed};
use crate::workloads::{Collected, Ending, Figures, Finish, Returned, Roles, Traffic};
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
    let traffic = crate::workloads::traffic(&p.kind);
    // What the workload keeps on this host for the trial, until after teardown.
    let held = traffic.prepare(tb, p)?;
    let mut run = Running::default();
    let mut res = drive(tb, p, pin, stop, traffic, &mut run, live);
    let teardown_err = teardown(&mut run.agents);
    if let (Ok((figures, _)), Some(h)) = (&mut res, &held) {
        h.note(figures);
    }
    drop(held);
    let outcome = Outcome {
        finished_at: crate::clock::now_utc(),
        placement: run.placement,
        samples: run.samples,
        precision: run.precision,
        ..Outcome::started(started_at)
    };
    conclude(outcome, res, teardown_err, tb, p)
}

/// Teardown in reverse order of setup: client, server, gateway. The first error, if
/// any (every agent is torn down regardless).
fn teardown(agents: &mut Vec<Agent>) -> Option<anyhow::Error> {
    let mut teardown_err = None;
    while let Some(a) = agents.pop() {
        if let Err(e) = a.teardown() {
            teardown_err.get_or_insert(e);
        }
    }
    teardown_err
}

/// The outcome of a trial that ran (`res`): its figures judged (drops, aim, NAT) and a
/// failed teardown counted; a failure's status and error. `Interrupted` passes.
fn conclude(
    mut outcome: Outcome,
    res: Result<(Figures, Option<GatewayResults>)>,
    teardown_err: Option<anyhow::Error>,
    tb: &dyn Testbed,
    p: &TrialParams,
) -> Result<Outcome> {
    match res {
        Ok((figures, gateway)) => {
            outcome.figures = Some(figures);
            outcome.gateway = gateway;
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

/// The phases between the agents' start and their teardown, in `proto`'s order: agents
/// up and set up, start, the traffic phase, stop, the figures.
fn drive(
    tb: &dyn Testbed,
    p: &TrialParams,
    pin: &Pinning,
    stop: &AtomicBool,
    traffic: &dyn Traffic,
    run: &mut Running,
    mut live: Option<&mut Live>,
) -> Result<(Figures, Option<GatewayResults>)> {
    let has_gw = agents_up(tb, p, pin, stop, run, traffic)?;
    check(stop)?;
    // Start: gateway, server, then clients (the traffic source) last.
    for a in run.agents.iter_mut() {
        a.request(ToAgent::Start)?;
    }
    let t0 = Instant::now();
    run.precision = traffic_phase(p, traffic.ending(), &mut run.agents, stop, t0, &mut live)?;
    if let Some(l) = live {
        tick(&mut run.agents, t0, true, l)?;
    }
    let (results, gr) = stop_agents(run)?;
    if has_gw && gr.is_none() {
        bail!("missing results from the gateway agent");
    }
    let mut figures = collect(tb, p, traffic, &run.placement, results, gr.as_ref())?;
    let finish = Finish {
        tb,
        p,
        pin,
        samples: &run.samples,
        gateway: gr.as_ref(),
    };
    traffic.finish(&mut figures, &finish);
    Ok((figures, gr))
}

/// `Interrupted` once `stop` is raised.
fn check(stop: &AtomicBool) -> Result<()> {
    if stop.load(Ordering::SeqCst) {
        Err(Interrupted.into())
    } else {
        Ok(())
    }
}

/// Start every agent of the trial and set it up — gateway, servers, clients — and note
/// an external gateway in the placement. Whether the trial has a gateway agent.
fn agents_up(
    tb: &dyn Testbed,
    p: &TrialParams,
    pin: &Pinning,
    stop: &AtomicBool,
    run: &mut Running,
    traffic: &dyn Traffic,
) -> Result<bool> {
    let firewall = crate::rules::request(p).map_err(usage)?.map(Box::new);
    refuse_proxy(p)?;
    let roles = traffic.roles(tb, p)?;
    refuse_missing_transport(tb, &roles)?;
    let has_gw = tb.launcher(Host::Gateway).is_some();
    if has_gw {
        let spec = gateway_spec(p, pin, traffic, &roles, firewall);
        let cpus = spec.steer_cpus.clone();
        let spec = RoleSpec::Gateway(spec);
        start(tb, stop, run, "gateway", (Host::Gateway, 0), &cpus, spec)?;
    }
    if let Some((host, spec)) = roles.server {
        start(tb, stop, run, "server", (host, 0), &pin.server, spec)?;
    }
    for (host, index, spec) in roles.more_servers {
        start(tb, stop, run, "server", (host, index), &pin.server, spec)?;
    }
    let (client_host, client_spec) = roles.client;
    start(
        tb,
        stop,
        run,
        "client",
        (client_host, 0),
        &pin.client,
        client_spec,
    )?;
    for (host, index, spec) in roles.more_clients {
        start(tb, stop, run, "client", (host, index), &pin.client, spec)?;
    }
    if tb.gateway_is_external() {
        // Traffic crosses an appliance fwbench has no agent on: say so where the
        // gateway's counters and verdicts would be.
        run.placement.push(RoleInfo {
            role: "gateway",
            host: 0,
            place: crate::outcome::EXTERNAL_GATEWAY.into(),
            requested_cpus: None,
            cpus: "-".into(),
            pid: 0,
            clock: None,
        });
    }
    Ok(has_gw)
}

/// Seed 003's table has N/A here: an application proxy relays connections only.
fn refuse_proxy(p: &TrialParams) -> Result<()> {
    if p.topology == Topology::Proxy && p.conn().is_none() {
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
    Ok(())
}

/// The gateway agent's setup: forwarding, the rules, the CPUs its packet processing
/// is steered to, the proxy's relay, events and the workload's conntrack settings.
fn gateway_spec(
    p: &TrialParams,
    pin: &Pinning,
    traffic: &dyn Traffic,
    roles: &Roles,
    firewall: Option<Box<firewall::Request>>,
) -> GatewaySpec {
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
    GatewaySpec {
        sysctls,
        firewall,
        // Pinning the gateway (or its `gateway_cpus`) pins its packet processing too.
        steer_cpus: p.gateway_cpu_list(crate::host::probe::cpus(), pin.gateway.as_deref()),
        proxy: roles.proxy.clone(),
        events: crate::workloads::events::gateway_events(p, roles.marker),
        conntrack: traffic.conntrack(p),
    }
}

/// Start one agent (`role` on the testbed's `at` = host and index) on `cpus` and set
/// it up with `spec`; its placement row is noted, and the agent kept for teardown even
/// when its setup fails.
fn start(
    tb: &dyn Testbed,
    stop: &AtomicBool,
    run: &mut Running,
    role: &'static str,
    (host, index): (Host, u32),
    cpus: &Option<String>,
    spec: RoleSpec,
) -> Result<()> {
    check(stop)?;
    let l = tb
        .launcher_at(host, index)
        .ok_or_else(|| anyhow!("testbed {} has no {host:?} host {}", tb.name(), index + 1))?;
    let mut a = Agent::spawn(&l, role, cpus.as_deref())?;
    // Another host's clock: how far it is from ours (one-way delays need it).
    let clock = match &l.remote {
        Some(_) => Some(a.clock_offset(CLOCK_EXCHANGES)?),
        None => None,
    };
    run.placement.push(RoleInfo {
        role,
        host: index,
        place: l.place.clone(),
        requested_cpus: cpus.clone(),
        cpus: a.info.cpus.clone(),
        pid: a.info.pid,
        clock,
    });
    let r = a.request(ToAgent::Setup(spec));
    run.agents.push(a);
    r.map(|_| ())
}

/// The traffic phase, ended as the workload says: counted sessions (held connections
/// held after them) or timed (adaptive: until precise enough). The adaptive precision.
fn traffic_phase(
    p: &TrialParams,
    ending: Ending,
    agents: &mut [Agent],
    stop: &AtomicBool,
    t0: Instant,
    live: &mut Option<&mut Live>,
) -> Result<Option<Precision>> {
    match ending {
        Ending::Counted { holds } => {
            // Connection workloads wait for their sessions (adaptive length is refused),
            // of every client process when they were sharded.
            let clients: Vec<usize> = (0..agents.len())
                .filter(|&i| agents[i].role == "client")
                .collect();
            let counted = !ending.at_duration(p);
            let hold = match p.conn() {
                Some(k) if holds => k.hold_s,
                _ => 0.0,
            };
            let wait = Counted {
                clients: &clients,
                counted,
                hold_s: hold,
            };
            wait_for_conn(p, agents, &wait, stop, t0, live.as_deref_mut())?;
            Ok(None)
        }
        Ending::Timed { measuring } => timed(p, agents, measuring, t0, stop, live.as_deref_mut()),
    }
}

/// Stop the traffic source first, then the sink, then the gateway: the traffic roles'
/// results (with their hosts) and the gateway's; every agent's samples are kept.
fn stop_agents(run: &mut Running) -> Result<(Vec<Returned>, Option<GatewayResults>)> {
    let mut results = Vec::new();
    let mut gr = None;
    for (i, a) in run.agents.iter_mut().enumerate().rev() {
        // Agents and their placement rows were pushed together.
        let at = &run.placement[i];
        match a.request(ToAgent::Stop)? {
            FromAgent::Results {
                results: r,
                samples,
            } => {
                let role = a.role;
                run.samples
                    .extend(samples.into_iter().map(|sample| crate::outcome::Sampled {
                        role,
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
    Ok((results, gr))
}

/// The workload's figures from the roles' results and the gateway's. The gateway's
/// updates are dated on its clock, the flows' bins on the client's: the events are
/// placed on the client's clock, then dated on the gateway's again.
fn collect(
    tb: &dyn Testbed,
    p: &TrialParams,
    traffic: &dyn Traffic,
    placement: &[RoleInfo],
    results: Vec<Returned>,
    gr: Option<&GatewayResults>,
) -> Result<Figures> {
    let (client, gateway) = (
        clock_of(placement, "client"),
        clock_of(placement, "gateway"),
    );
    let shift = client.0 - gateway.0;
    let on_client_clock = gr.cloned().map(|mut g| {
        for u in &mut g.updates {
            u.start_unix_ns = u.start_unix_ns.saturating_add_signed(shift);
        }
        g
    });
    let mut figures = traffic.collect(Collected {
        tb,
        p,
        results,
        gateway: on_client_clock.as_ref(),
    })?;
    if let (Some(e), Some(g)) = (figures.events_mut(), gr) {
        redate(e, g, client.1 + gateway.1);
    }
    Ok(figures)
}

/// The updates dated on the gateway's clock again (`g`'s starts), and each time to
/// effect — the client's stamps against a commit's start placed on the client's clock
/// — dated to within that placing's uncertainty too (`uncertainty_ns`, the two clocks'
/// against the controller's, added to its resolution: what below 0 is 0 and what is
/// withheld is judged after, on it). A flow's, read on the sink's clock, has had the
/// client's part exchanged for the sink's (`PacketSummary::correct_effects`).
fn redate(
    e: &mut crate::workloads::events::EventsSummary,
    g: &GatewayResults,
    uncertainty_ns: i64,
) {
    for (u, row) in e.updates.iter_mut().zip(&g.updates) {
        u.row.start_unix_ns = row.start_unix_ns;
        u.effect_resolution_ms = u
            .effect_resolution_ms
            .map(|r| r + uncertainty_ns as f64 / 1e6);
    }
}

/// A role's clock against the controller's and its uncertainty, ns ((0, 0): local, or
/// not measured).
fn clock_of(placement: &[RoleInfo], role: &str) -> (i64, i64) {
    placement
        .iter()
        .find(|r| r.role == role)
        .and_then(|r| r.clock.as_ref())
        .map_or((0, 0), |k| (k.offset_ns, k.uncertainty_ns))
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
        check(stop)?;
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

/// How a counted traffic phase ends ([`Ending::Counted`]).
struct Counted<'a> {
    /// The client agents (indices), one per process of a sharded client.
    clients: &'a [usize],
    /// Every client reports its sessions done (with a count, or held connections);
    /// otherwise the trial's duration ends the phase.
    counted: bool,
    /// Then the connections are held this long, s.
    hold_s: f64,
}

/// Wait until the session client is done: all its sessions (with a count) or the
/// trial's duration (without), or — connections — until it stopped opening, then hold
/// for `hold_s`. (Adaptive length is refused for connection workloads.)
fn wait_for_conn(
    p: &TrialParams,
    agents: &mut [Agent],
    wait: &Counted,
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
    let counted = wait.counted;
    let limit = (!counted).then(|| Duration::from_secs_f64(p.duration_s));
    loop {
        check(stop)?;
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
            for &client in wait.clients {
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
    while held.elapsed().as_secs_f64() < wait.hold_s {
        check(stop)?;
        tick_due(agents)?;
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A time to effect across two hosts' clocks is dated to within their
    /// uncertainty: its resolution grows by it; the starts are the gateway's again.
    #[test]
    fn a_time_to_effect_on_two_clocks_carries_their_uncertainty() {
        let mut e = crate::workloads::events::planted_summary(0);
        e.updates[0].effect_resolution_ms = Some(1.0);
        e.updates[0].row.start_unix_ns = 5_000;
        let mut g = GatewayResults::default();
        let mut row = e.updates[0].row.clone();
        row.start_unix_ns = 1_000;
        g.updates.push(row);
        redate(&mut e, &g, 300_000);
        assert_eq!(e.updates[0].row.start_unix_ns, 1_000);
        let r = e.updates[0].effect_resolution_ms.unwrap();
        assert!((r - 1.3).abs() < 1e-9, "{r}");
        // Without a resolution (no time to effect) none is made up.
        e.updates[0].effect_resolution_ms = None;
        redate(&mut e, &g, 300_000);
        assert_eq!(e.updates[0].effect_resolution_ms, None);
    }
}
