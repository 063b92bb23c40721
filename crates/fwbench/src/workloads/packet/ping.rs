//! Ping: UDP echo, one probe at a time (seed 003's round trips) — the packet kind
//! with rules of its own, all here: its [`Traffic`], what it adds to the family's
//! checks ([`KindRules`]), its prober and reflector, and its figures.
//!
//! Must not: send or time probes (`traffic::ping` does), or hold what the packet
//! kinds share (the family's checks, aim and placement stay in `check` and `roles`).

use super::*;
use crate::agent::traffic::role;
use crate::agent::{SetUp, SetUpResult};
use crate::params::Conflict;
use proto::{PingSpec, ReflectorSpec};

/// UDP echo, one probe at a time (seed 003's round-trip times).
pub struct Ping;

impl Traffic for Ping {
    /// Ranked by the median round trip.
    fn profile(&self) -> Profile {
        Profile {
            main_metric: MainMetric {
                name: "rtt_p50_us",
                higher: false,
            },
            // A round trip's latency, not a rate: placement is the user's to choose.
            gateway_cpu: false,
            // Its probes, as the client counts them.
            live: Live {
                at_sink: false,
                ..PACKETS.live
            },
            ..PACKETS
        }
    }

    /// None: one probe at a time (at most one per interval).
    fn rate(&self, _p: &TrialParams) -> Option<Rate> {
        None
    }

    /// Probe size, count and interval.
    fn params_text(&self, p: &TrialParams) -> String {
        params_line(p, |k| {
            format!(
                "size={}{}{}",
                k.size,
                k.count.map(|c| format!(" count={c}")).unwrap_or_default(),
                if k.interval_ns > 0 {
                    format!(" interval={}µs", k.interval_ns / 1000)
                } else {
                    String::new()
                }
            )
        })
    }

    /// A prober on the client, a reflector on the server ([`ping_roles`]).
    fn roles(&self, tb: &dyn Testbed, p: &TrialParams) -> Result<Roles> {
        let a = roles::aim(tb, p)?;
        placed(p, ping_roles(tb, p, a.k, a.payload, a.aimed.as_ref())?)
    }

    fn collect(&self, c: Collected<'_>) -> Result<Figures> {
        let (p, gateway) = (c.p, c.gateway);
        summarise_ping(p, c.role_results(), gateway).map(Figures::Ping)
    }
}

/// What ping adds to the family's checks: a payload that holds its sequence number,
/// one reflector, one size.
impl KindRules for Ping {
    fn payload(&self, payload: u32) -> Result<(), Conflict> {
        if payload < traffic::ping::MIN_PING_PAYLOAD {
            return Err(Conflict(format!(
                "ping payload {payload} is below {} bytes (the sequence number)",
                traffic::ping::MIN_PING_PAYLOAD
            )));
        }
        Ok(())
    }

    fn one_destination(&self) -> bool {
        true
    }

    fn size_mix(&self, mix: SizeMix) -> Result<(), Conflict> {
        Err(Conflict(format!(
            "size mix {mix}: ping sends one size (give --size N)"
        )))
    }
}

/// Ping: a prober on the client and a reflector on the server, at the aimed-at or
/// given port and source; with gateway events, the marker is a paced stream of its own.
fn ping_roles(
    tb: &dyn Testbed,
    p: &TrialParams,
    k: &PacketParams,
    payload: u32,
    aimed: Option<&crate::rules::Aimed>,
) -> Result<roles::RoleSpecs> {
    if k.sport.is_some() || aimed.is_some_and(|a| a.sport.is_some()) {
        return Err(crate::error::usage(
            "ping takes no source port (its socket's port is the kernel's choice); \
             aim a flood at a rule that matches one",
        ));
    }
    let server = tb.server_addr(p.family);
    let port = roles::dst_port(k, aimed);
    let source = aimed
        .and_then(|a| a.src)
        .or(k.src)
        .unwrap_or_else(|| tb.client_addr(p.family, 1));
    let marker = p.events.as_ref().map(|_| proto::Marker {
        src: crate::workloads::events::extra_marker_source(tb, p, Some(source)),
        proto: proto::Proto::Udp,
        dport: port,
    });
    Ok((
        vec![RoleSpec::Reflector(ReflectorSpec {
            listen: server,
            port,
        })],
        vec![RoleSpec::Ping(PingSpec {
            source,
            server: crate::testbed::aim_addr(tb, p),
            port,
            payload,
            count: k.count,
            interval_ns: k.interval_ns,
            timeout_ms: p.timeout_ms,
            events: crate::workloads::events::stream_spec(p, marker.map(|m| m.src)),
        })],
        marker,
    ))
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PingSummary {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub invalid: u64,
    pub rtt: RttSummary,
    pub elapsed_s: f64,
    pub finished: bool,
    /// Gateway events and what the ping felt (issue 25).
    pub events: Option<Box<crate::workloads::events::EventsSummary>>,
}

/// The ping's figures (and, with gateway events, what it felt of each update: the
/// ping is the background, the marker an extra stream of probes).
pub fn summarise_ping(
    p: &TrialParams,
    results: Vec<RoleResults>,
    gateway: Option<&GatewayResults>,
) -> Result<PingSummary> {
    for r in results {
        if let RoleResults::Ping(r) = r {
            return Ok(PingSummary {
                sent: r.sent,
                received: r.received,
                lost: r.lost,
                invalid: r.invalid,
                rtt: r.rtt,
                elapsed_s: r.elapsed_ns as f64 / 1e9,
                finished: r.finished,
                events: crate::workloads::events::summarise_txns(
                    p,
                    crate::workloads::events::Unit::Probes,
                    false,
                    r.events.as_deref(),
                    gateway,
                )
                .map(Box::new),
            });
        }
    }
    bail!("missing results from the ping client")
}

impl Summary for PingSummary {
    fn line(&self) -> String {
        let s = self;
        format!(
            "{}/{} replies, RTT min {} avg {:.1} p50 {} p99 {} max {} µs, {} lost",
            s.received,
            s.sent,
            us(s.rtt.min_ns),
            s.rtt.mean_ns / 1e3,
            us(s.rtt.p50_ns),
            us(s.rtt.p99_ns),
            us(s.rtt.max_ns),
            s.lost
        )
    }

    /// Probes and replies, the round trips; then the adaptive line.
    fn text(&self, t: &TextOf) -> String {
        let s = self;
        let mut out = format!(
            "  probes       {} sent, {} replies, {} lost, {} invalid over {:.2} s\n",
            s.sent, s.received, s.lost, s.invalid, s.elapsed_s
        );
        out += &format!(
            "  RTT µs       min {}  avg {:.2}  p50 {}  p90 {}  p99 {}  max {}\n",
            us(s.rtt.min_ns),
            s.rtt.mean_ns / 1e3,
            us(s.rtt.p50_ns),
            us(s.rtt.p90_ns),
            us(s.rtt.p99_ns),
            us(s.rtt.max_ns)
        );
        out + &t.adaptive
    }

    /// The packet table's columns: probes and replies per second, loss, the RTT's p50.
    fn cells(&self) -> Vec<String> {
        let s = self;
        vec![
            format!("{:.0}", s.sent as f64 / s.elapsed_s.max(1e-9)),
            format!("{:.0}", s.received as f64 / s.elapsed_s.max(1e-9)),
            format!("{:.4}", s.lost as f64 * 100.0 / (s.sent.max(1)) as f64),
            us(s.rtt.p50_ns),
        ]
    }

    /// Round trips have no interval count to add up to.
    fn live_total(&self) -> Option<u64> {
        None
    }

    fn stored_key(&self) -> &'static str {
        "ping"
    }

    /// Its probes.
    fn packets_sent(&self) -> Option<u64> {
        Some(self.sent)
    }

    /// The store's headline columns: replies/s as transactions, RTT percentiles, loss.
    fn headline(&self) -> Headline {
        Headline {
            duration_s: Some(self.elapsed_s),
            transactions_per_s: Some(self.received as f64 / self.elapsed_s.max(1e-9)),
            validation_errors: Some(self.invalid),
            lost: Some(self.lost),
            loss_ratio: Some(if self.sent == 0 {
                0.0
            } else {
                self.lost as f64 / self.sent as f64
            }),
            ..rtt_columns(&self.rtt)
        }
    }
}

/// The agent's side of ping: which traffic object plays each role.
impl SetUp for PingSpec {
    fn set_up(&self) -> SetUpResult {
        role(crate::agent::traffic::PingClient::setup(self))
    }
}

impl SetUp for ReflectorSpec {
    fn set_up(&self) -> SetUpResult {
        role(crate::agent::traffic::Reflector::start(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ping trial from a scenario line (`workload = "ping"` plus `more`).
    fn ping(more: &str) -> TrialParams {
        let toml = format!("workload = \"ping\"\n{more}");
        crate::plan::scenario::parse("t.toml", &toml, 1)
            .unwrap()
            .trials[0]
            .params
            .clone()
    }

    /// Each of ping's rules refuses through the family's checks; a flood with the same
    /// parameters passes them.
    #[test]
    fn the_family_checks_ask_pings_rules() {
        let refused = |p: &TrialParams| check(p, &Ping).unwrap_err().0;
        let mut p = ping("");
        p.kind.packet_mut().unwrap().size = PacketSize::Payload(4);
        assert!(refused(&p).contains("ping payload 4 is below 8 bytes"));
        assert!(check(&p, &PacketRate).is_ok());
        let mut p = ping("");
        let k = p.kind.packet_mut().unwrap();
        (k.dsts, k.flows) = (2, 2);
        assert!(refused(&p).contains("not with ping, --dst or --aim"));
        assert!(check(&p, &PacketRate).is_ok());
        let mut p = ping("");
        p.kind.packet_mut().unwrap().size = PacketSize::Mix(SizeMix::imix());
        assert!(refused(&p).contains("ping sends one size"));
        assert!(check(&p, &PacketRate).is_ok());
        assert!(check(&ping(""), &Ping).is_ok());
    }

    /// A prober aimed at the server and a reflector on it, the probes' size and count.
    #[test]
    fn a_ping_is_a_prober_and_a_reflector() {
        let tb = crate::testbed::netns::NetnsTestbed {
            name: "t".into(),
            topology: Topology::Forward,
        };
        let mut p = ping("");
        p.kind.packet_mut().unwrap().count = Some(5);
        let r = Ping.roles(&tb, &p).unwrap();
        let (Host::Server, RoleSpec::Reflector(s)) = r.server.unwrap() else {
            panic!("no reflector on the server")
        };
        let (Host::Client, RoleSpec::Ping(c)) = r.client else {
            panic!("no prober on the client")
        };
        assert_eq!((c.server, c.port, c.count), (s.listen, s.port, Some(5)));
        assert!(r.more_servers.is_empty() && r.more_clients.is_empty());
    }
}
