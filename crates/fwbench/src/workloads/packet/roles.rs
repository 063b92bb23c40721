//! The agents of a packet-rate trial: the sources and sinks on each host of their
//! roles (a spread trial shares its flows out), and the gateway events' marker; what
//! every packet kind's roles start from ([`aim`]).
//!
//! Must not: combine results (`summary` does).

use super::*;
use crate::agent::traffic::role;
use crate::agent::{SetUp, SetUpResult};

/// The role specs of a packet trial: (servers, clients, the events' marker).
pub type RoleSpecs = (Vec<RoleSpec>, Vec<RoleSpec>, Option<proto::Marker>);

/// What every packet kind's roles start from: its packet parameters, the payload and
/// the rule it is aimed at (its addresses checked).
pub struct Aim<'a> {
    pub k: &'a PacketParams,
    pub payload: u32,
    pub aimed: Option<crate::rules::Aimed>,
}

/// A packet trial's [`Aim`]: its payload, the rule it is aimed at (said on stderr) and
/// its addresses checked.
pub fn aim<'a>(tb: &dyn Testbed, p: &'a TrialParams) -> Result<Aim<'a>> {
    let Some(k) = p.packet() else {
        bail!("a {} trial without packet parameters", p.name());
    };
    let payload = k.payload(p.family).map_err(crate::error::usage)?;
    let server = tb.server_addr(p.family);
    let clients: Vec<_> = (1..=p.clients.max(1))
        .map(|i| tb.client_addr(p.family, i))
        .collect();
    // Checked before the run for a single aim; in a sweep over rules, N/A.
    let aimed = crate::rules::aim(p, &clients, server).map_err(|e| {
        crate::testbed::launcher::AgentFailed {
            role: "client",
            kind: proto::ErrorKind::Unavailable,
            message: format!("N/A: {e}"),
        }
    })?;
    if let Some(a) = &aimed {
        eprintln!("fwbench: {}", a.said());
    }
    crate::rules::check_addrs(k, &clients, server).map_err(crate::error::usage)?;
    Ok(Aim { k, payload, aimed })
}

/// Role specs of a packet-rate trial: (servers, clients), one per host of each role
/// (several when the testbed spreads a role over hosts, [`spread`]), and the events'
/// marker. No server for a sink-less flood.
pub fn role_specs(tb: &dyn Testbed, p: &TrialParams) -> Result<RoleSpecs> {
    let a = aim(tb, p)?;
    let plan = Flows::of(tb, p, a.k, a.aimed.as_ref())?;
    let sources = sources(tb, p, &a, &plan)?;
    // Gateway events (one client host, `Traffic::spread`): flow 0 — every flow from
    // the first source — is the marker.
    let marker = match (&p.events, &sources.first()) {
        (Some(_), Some(RoleSpec::UdpSource(s))) => s.sources.first().map(|&src| proto::Marker {
            src,
            proto: proto::Proto::Udp,
            dport: plan.dst_port,
        }),
        (Some(_) | None, _) => None,
    };
    let sinks = sinks(tb, p, &a, &plan)?;
    Ok((sinks, sources, marker))
}

/// How a flood's or flow's flows are laid out: shared over the client hosts, their
/// ports, a fixed source, the destinations by flow number.
struct Flows {
    shares: Vec<spread::ClientShare>,
    client_hosts: u32,
    server_hosts: u32,
    src_port: u16,
    dst_port: u16,
    fixed_src: Option<std::net::IpAddr>,
    dsts: Vec<std::net::IpAddr>,
}

impl Flows {
    fn of(
        tb: &dyn Testbed,
        p: &TrialParams,
        k: &PacketParams,
        aimed: Option<&crate::rules::Aimed>,
    ) -> Result<Flows> {
        let client_hosts = tb.hosts_of(Host::Client);
        let server_hosts = tb.hosts_of(Host::Server);
        let pps = k
            .rate
            .pps_mean(k.mean_rate_bytes(p.family).map_err(crate::error::usage)?);
        let shares = spread::client_shares(k.flows, p.clients, k.threads, pps, client_hosts);
        // New flows spread over the sources' ports (flow i: source i mod n, port i / n).
        let span = if new_flows(p) {
            k.flows.div_ceil(shares[0].sources)
        } else {
            k.flows
        };
        let (src_port, dst_port) = ports(k, aimed, span).map_err(crate::error::usage)?;
        // Destination by flow number: the server's extra addresses (`--dsts`, the trial
        // added them, `Testbed::ensure_destinations`), or flow n to server host n mod S.
        let dsts: Vec<std::net::IpAddr> = if k.dsts > 1 {
            (0..k.dsts)
                .map(|i| crate::testbed::addr::destination(p.family, i))
                .collect()
        } else if server_hosts > 1 {
            (0..server_hosts)
                .map(|s| tb.server_addr_at(p.family, s))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Flows {
            shares,
            client_hosts,
            server_hosts,
            src_port,
            dst_port,
            fixed_src: aimed.and_then(|a| a.src).or(k.src),
            dsts,
        })
    }

    /// Each sink's delays per client host, when a role has several hosts (the hosts'
    /// clocks are related per pair afterwards).
    fn owd_groups(&self) -> Vec<u32> {
        if self.client_hosts > 1 || self.server_hosts > 1 {
            self.shares.iter().map(|c| c.first_flow).collect()
        } else {
            Vec::new()
        }
    }
}

/// One UDP source per client host, each with its share of the flows.
fn sources(tb: &dyn Testbed, p: &TrialParams, a: &Aim, plan: &Flows) -> Result<Vec<RoleSpec>> {
    let (k, payload) = (a.k, a.payload);
    let mix = k
        .size
        .mix_parts(p.family)
        .map_err(|e| crate::error::usage(e.0))?;
    let aim_at = crate::testbed::aim_addr(tb, p);
    let mut sources = Vec::new();
    for c in &plan.shares {
        let raw = match k.sender {
            SenderPath::Udp => None,
            SenderPath::Raw | SenderPath::Xdp => Some(RawPath {
                ifname: tb.client_interface(c.host).into(),
                dst_mac: tb.next_hop_mac(c.host)?,
                xdp: k.sender == SenderPath::Xdp,
            }),
        };
        sources.push(RoleSpec::UdpSource(UdpSourceSpec {
            sources: match plan.fixed_src {
                Some(a) => vec![a],
                None => (1..=c.sources)
                    .map(|i| tb.client_addr_at(p.family, c.host, i))
                    .collect(),
            },
            src_port: plan.src_port,
            dst: aim_at,
            dsts: plan.dsts.clone(),
            dst_port: plan.dst_port,
            flows: c.flows,
            first_flow: c.first_flow,
            payload,
            mix: mix.clone(),
            mix_seed: match k.size {
                PacketSize::Mix(_) => proto::MIX_SEED,
                PacketSize::Payload(_) | PacketSize::Frame(_) => 0,
            },
            pps: c.pps,
            threads: c.threads,
            batch: k.batch,
            raw,
            new_flows: new_flows(p),
        }));
    }
    Ok(sources)
}

/// One UDP sink per server host (none when the gateway counts).
fn sinks(tb: &dyn Testbed, p: &TrialParams, a: &Aim, plan: &Flows) -> Result<Vec<RoleSpec>> {
    let (k, payload) = (a.k, a.payload);
    let owd_groups = plan.owd_groups();
    let mut sinks = Vec::new();
    for s in (0..plan.server_hosts).filter(|_| k.sink != SinkKind::Gateway) {
        let xdp = match k.sink {
            SinkKind::Xdp => Some(tb.server_interface(s).map(String::from).ok_or_else(|| {
                crate::error::usage(
                    "--sink xdp: this testbed does not name the server's interface (use a local testbed)"
                        .to_string(),
                )
            })?),
            SinkKind::Socket | SinkKind::Gateway => None,
        };
        // A sink for several destinations listens on all the server's addresses.
        let listen = match (k.dsts > 1, p.family) {
            (false, _) => tb.server_addr_at(p.family, s),
            (true, Family::V4) => std::net::Ipv4Addr::UNSPECIFIED.into(),
            (true, Family::V6) => std::net::Ipv6Addr::UNSPECIFIED.into(),
        };
        sinks.push(RoleSpec::UdpSink(UdpSinkSpec {
            xdp,
            listen,
            port: plan.dst_port,
            threads: spread::even(k.sink_threads, plan.server_hosts, s).max(1),
            flows: if new_flows(p) { 1 } else { k.flows },
            payload,
            bin_ns: crate::workloads::events::bin_ns(p),
            // The NAT models' check: which source addresses the server saw.
            sources: p.model.is_nat() && k.sink == SinkKind::Socket,
            owd_groups: owd_groups.clone(),
            // Topology input: the sink is in the gateway's namespace (its steering
            // and its arrival times are the gateway's; see the field).
            in_gateway: p.topology == Topology::Input,
        }));
    }
    Ok(sinks)
}

/// The destination port: an aimed-at rule's, else `--dport`'s first, else the sink's.
pub(super) fn dst_port(k: &PacketParams, aimed: Option<&crate::rules::Aimed>) -> u16 {
    aimed
        .and_then(|a| a.dport)
        .or(k.dport.map(|(lo, _)| lo))
        .unwrap_or(SINK_PORT)
}

/// (first source port, destination port) of a flood or flow: `--sport`/`--dport` or
/// an aimed-at rule's, else fwbench's own; the flows must fit a source port range.
fn ports(
    k: &PacketParams,
    aimed: Option<&crate::rules::Aimed>,
    span: u32,
) -> Result<(u16, u16), crate::params::Conflict> {
    let src = aimed
        .and_then(|a| a.sport)
        .or(k.sport.map(|(lo, _)| lo))
        .unwrap_or(SRC_PORT);
    let dst = dst_port(k, aimed);
    let last = u32::from(src) + span - 1;
    let hi = match k.sport {
        Some((_, hi)) if aimed.and_then(|a| a.sport).is_none() => u32::from(hi),
        _ if aimed.and_then(|a| a.sport).is_some() && span > 1 => u32::from(src),
        _ => 65535,
    };
    if last > hi {
        return Err(crate::params::Conflict(format!(
            "{} flows need source ports {src}-{last}, beyond {}",
            k.flows,
            if hi == 65535 {
                "65535".into()
            } else {
                format!("the source port range (ends at {hi})")
            }
        )));
    }
    Ok((src, dst))
}

/// The agent's side of the packet families: which traffic object plays each role (an
/// AF_XDP socket where the spec asks for one).
impl SetUp for UdpSourceSpec {
    fn set_up(&self) -> SetUpResult {
        use crate::agent::traffic::{UdpSource, XskModeRequest, XskSource};
        if self.raw.as_ref().is_some_and(|r| r.xdp) {
            role(XskSource::setup(self, XskModeRequest::Auto))
        } else {
            role(UdpSource::setup(self))
        }
    }
}

impl SetUp for UdpSinkSpec {
    fn set_up(&self) -> SetUpResult {
        use crate::agent::traffic::{Sink, XdpSink};
        if self.xdp.is_some() {
            role(XdpSink::start(self))
        } else {
            role(Sink::start(self))
        }
    }
}
