//! Seed 000's echo workload on the controller side: the figures that combine the
//! client's and the server's counters at the four measurement points.

use crate::agent::traffic::{role, EchoClients, EchoServer};
use crate::agent::{SetUp, SetUpResult};
use crate::params::{TrialParams, ECHO_PORT};
use crate::testbed::{Host, Testbed};
use crate::workloads::rtt_columns;
use crate::workloads::units::{mbps, us};
use crate::workloads::{Collected, Ending, Figures, Live, MainMetric, Profile, Roles, Traffic};
use crate::workloads::{Summary, TextOf, STORED_LEGACY_KEY};
use anyhow::{bail, Result};
use proto::{EchoClientResults, EchoServerResults};
use proto::{EchoClientSpec, EchoServerSpec, RoleResults, RoleSpec};
use serde::Serialize;
use store::{EchoClientRow, Headline};

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

#[serde_with::skip_serializing_none]
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
    /// Gateway events and what the echoes felt (issue 25): client 1 is the marker,
    /// the other clients the background.
    pub events: Option<Box<crate::workloads::events::EventsSummary>>,
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
        events: None,
    }
}

impl Summary for EchoSummary {
    fn line(&self) -> String {
        format!(
            "{} Mb/s, {:.0} transactions/s, RTT p50 {} µs p99 {} µs, {} validation errors, {} unsent, {} lost",
            mbps(self.throughput_bps),
            self.transactions_per_s,
            us(self.rtt.p50_ns),
            us(self.rtt.p99_ns),
            self.validation_errors,
            self.unsent,
            self.lost
        )
    }

    /// Throughput, RTT, the four measurement points, problems, then a row per client.
    fn text(&self, t: &TextOf) -> String {
        let (p, s) = (t.p, self);
        let mut out = format!(
            "  throughput   {} Mb/s ({:.0} transactions/s) over {:.2} s{}\n",
            mbps(s.throughput_bps),
            s.transactions_per_s,
            s.elapsed_s,
            longer_than_asked(p.duration_s, s.elapsed_s, p.clients)
        );
        out += &format!(
            "  RTT µs       min {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n",
            us(s.rtt.min_ns),
            us(s.rtt.p50_ns),
            us(s.rtt.p90_ns),
            us(s.rtt.p99_ns),
            us(s.rtt.p999_ns),
            us(s.rtt.max_ns)
        );
        out += &format!(
            "  frames       MP1 {}  MP2 {}  MP3 {}  MP4 {}\n",
            s.mp[0].frames, s.mp[1].frames, s.mp[2].frames, s.mp[3].frames
        );
        out += &format!(
            "  problems     {} validation errors, {} unsent, {} lost\n",
            s.validation_errors, s.unsent, s.lost
        );
        out += &t.adaptive;
        out += "  client  source             Mb/s   trans/s   p50 µs   p99 µs  errors\n";
        for c in &s.clients {
            out += &format!(
                "  {:>6}  {:<16} {:>7} {:>9.0} {:>8} {:>8} {:>7}{}\n",
                c.client,
                c.source,
                mbps(c.throughput_bps),
                c.transactions_per_s,
                us(c.rtt.p50_ns),
                us(c.rtt.p99_ns),
                c.validation_client.total() + c.validation_server.total(),
                c.error
                    .as_ref()
                    .map(|e| format!("  ({e})"))
                    .unwrap_or_default()
            );
        }
        out
    }

    /// Mb/s, trans/s, p50 µs, p99 µs, errors, unsent, lost.
    fn cells(&self) -> Vec<String> {
        vec![
            mbps(self.throughput_bps),
            format!("{:.0}", self.transactions_per_s),
            us(self.rtt.p50_ns),
            us(self.rtt.p99_ns),
            self.validation_errors.to_string(),
            self.unsent.to_string(),
            self.lost.to_string(),
        ]
    }

    /// Echoes the clients received (MP4).
    fn live_total(&self) -> Option<u64> {
        Some(self.mp[3].frames)
    }

    /// RTT in microseconds, the four measurement points by name, a row per client.
    fn json(&self) -> Option<serde_json::Value> {
        let (s, r) = (self, self.rtt);
        let f = |ns: u64| ns as f64 / 1e3;
        let mut v = serde_json::json!({
            "elapsed_s": s.elapsed_s,
            "throughput_bps": s.throughput_bps,
            "transactions_per_s": s.transactions_per_s,
            "per_client_throughput_bps": s.per_client_throughput_bps,
            "validation_errors": s.validation_errors,
            "unsent": s.unsent,
            "lost": s.lost,
            "rtt_us": {
                "count": r.count, "min": f(r.min_ns), "mean": r.mean_ns / 1e3,
                "p50": f(r.p50_ns), "p90": f(r.p90_ns), "p99": f(r.p99_ns),
                "p999": f(r.p999_ns), "max": f(r.max_ns),
            },
            "mp": { "mp1": s.mp[0], "mp2": s.mp[1], "mp3": s.mp[2], "mp4": s.mp[3] },
            "per_client": s.clients,
        });
        // Gateway events (issue 25): where every workload has them, `result.events`.
        if let (Some(e), Some(o)) = (&s.events, v.as_object_mut()) {
            o.insert("events".into(), serde_json::to_value(e).unwrap_or_default());
        }
        Some(v)
    }

    /// Seed 000 stored its figures under `summary`, the key every trial still has.
    fn stored_key(&self) -> &'static str {
        STORED_LEGACY_KEY
    }

    /// The store's headline columns: throughput, transactions, RTT percentiles, errors.
    fn headline(&self) -> Headline {
        Headline {
            duration_s: Some(self.elapsed_s),
            throughput_bps: Some(self.throughput_bps),
            transactions_per_s: Some(self.transactions_per_s),
            validation_errors: Some(self.validation_errors),
            unsent: Some(self.unsent),
            lost: Some(self.lost),
            ..rtt_columns(&self.rtt)
        }
    }
}

/// Why the traffic ran longer than asked, when it did by more than 10 % and 0.5 s (an
/// echo of 3 000 threaded clients on two CPUs: the rates are over the time it ran,
/// from the clients' start to the agent's stop).
fn longer_than_asked(asked_s: f64, ran_s: f64, clients: u32) -> String {
    if ran_s <= asked_s * 1.1 || ran_s - asked_s < 0.5 {
        return String::new();
    }
    format!(
        " (asked {asked_s:.2} s: the traffic ran {:.2} s longer, from the clients' start \
         to the stop, which came late with {clients} clients on {} CPUs; the rates are \
         over the {ran_s:.2} s it ran)",
        ran_s - asked_s,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    )
}

impl EchoSummary {
    /// Seed 000's per-client rows.
    pub fn client_rows(&self) -> Vec<EchoClientRow> {
        self.clients
            .iter()
            .map(|c| {
                let mut v = c.validation_client;
                v.merge(&c.validation_server);
                let r = c.rtt;
                let f = |ns: u64| ns as f64 / 1e3;
                EchoClientRow {
                    client: c.client,
                    source: c.source.clone(),
                    mp: c.mp.map(|m| (m.frames, m.bytes)),
                    unsent_client: c.unsent_client,
                    unsent_server: c.unsent_server,
                    lost: c.lost,
                    validation: [
                        v.malformed,
                        v.wrong_client,
                        v.wrong_size,
                        v.gaps,
                        v.duplicates,
                        v.reordered,
                    ],
                    throughput_bps: c.throughput_bps,
                    transactions_per_s: c.transactions_per_s,
                    rtt_us: (r.count > 0).then(|| {
                        [
                            f(r.p50_ns),
                            f(r.p90_ns),
                            f(r.p99_ns),
                            f(r.p999_ns),
                            f(r.max_ns),
                        ]
                    }),
                    error: c.error.clone(),
                }
            })
            .collect()
    }
}

/// Most clients `-T threads` takes: its server runs one thread per client, beside the
/// client's one thread per client, and both share the host's `kernel.pid_max`
/// (32 768 by default) with everything else.
pub const MAX_THREADS_MODE_CLIENTS: u32 = 4096;

/// Check an echo trial's parameters before anything starts (bad input → the message):
/// its transport's limits, then its server's.
pub fn check(p: &TrialParams) -> Result<(), String> {
    if p.proto == proto::Proto::Udp && p.frame.max() > proto::MAX_UDP_PAYLOAD {
        return Err(format!(
            "frame size {} exceeds the largest UDP payload ({} bytes)",
            p.frame.max(),
            proto::MAX_UDP_PAYLOAD
        ));
    }
    if p.proto == proto::Proto::Udp && p.clients as u64 + ECHO_PORT as u64 > 65_535 {
        return Err(format!(
            "{} UDP clients need more ports than exist",
            p.clients
        ));
    }
    if p.server == proto::ServerMode::Threads && p.clients > MAX_THREADS_MODE_CLIENTS {
        return Err(format!(
            "-T threads runs one server thread per client and takes at most \
             {MAX_THREADS_MODE_CLIENTS} clients, not {} (threads for client and server \
             would approach kernel.pid_max); use -T epoll for more",
            p.clients
        ));
    }
    Ok(())
}

/// Seed 000's echo cycle: `n` clients, each from its own source address.
pub struct Echo;

impl Traffic for Echo {
    /// Ranked by throughput; the client's echoes time it.
    fn profile(&self) -> Profile {
        Profile {
            family: "echo",
            main_metric: MainMetric {
                name: "throughput_bps",
                higher: true,
            },
            live: Live {
                unit: "echoes",
                at_sink: false,
                rtt: true,
            },
            ending: Ending::Timed {
                measuring: "client",
            },
            gateway_cpu: false,
        }
    }

    /// Its topology, protocol and address family, server mode, clients, frame size
    /// and duration (no name: seed 000's line).
    fn params_text(&self, p: &TrialParams) -> String {
        format!(
            "{} {}/IPv{} server={} n={} f={} t={}s",
            p.topology, p.proto, p.family, p.server, p.clients, p.frame_size, p.duration_s
        )
    }

    /// Named before its parameter line, which names no workload.
    fn heading(&self, params_line: String) -> String {
        format!("echo {params_line}")
    }

    fn roles(&self, tb: &dyn Testbed, p: &TrialParams) -> Result<Roles> {
        let server = tb.server_addr(p.family);
        let sources: Vec<std::net::IpAddr> = (1..=p.clients)
            .map(|i| tb.client_addr(p.family, i))
            .collect();
        // Gateway events: client 1 — its connection (TCP, SCTP) or its own server
        // port (UDP: client i talks to ECHO_PORT + i − 1) — is the marker.
        let marker = match (&p.events, sources.first()) {
            (Some(_), Some(&src)) => Some(proto::Marker {
                src,
                proto: p.proto,
                dport: ECHO_PORT,
            }),
            (Some(_) | None, _) => None,
        };
        Ok(Roles {
            server: Some((
                Host::Server,
                RoleSpec::EchoServer(EchoServerSpec {
                    proto: p.proto,
                    mode: p.server,
                    listen: server,
                    port: ECHO_PORT,
                    clients: p.clients,
                    max_frame: p.frame.max(),
                    timeout_ms: p.timeout_ms,
                }),
            )),
            client: (
                Host::Client,
                RoleSpec::EchoClient(EchoClientSpec {
                    proto: p.proto,
                    sources,
                    server: crate::testbed::aim_addr(tb, p),
                    port: ECHO_PORT,
                    frame: p.frame,
                    seed: p.seed,
                    timeout_ms: p.timeout_ms,
                    events: crate::workloads::events::stream_spec(p, None),
                }),
            ),
            proxy: None,
            more_servers: Vec::new(),
            more_clients: Vec::new(),
            marker,
        })
    }

    fn collect(&self, c: Collected<'_>) -> Result<Figures> {
        let (p, gateway) = (c.p, c.gateway);
        let (mut cr, mut sr) = (None, None);
        for r in c.role_results() {
            match r {
                RoleResults::EchoClient(r) => cr = Some(r),
                RoleResults::EchoServer(r) => sr = Some(r),
                _ => {}
            }
        }
        let (Some(cr), Some(sr)) = (cr, sr) else {
            bail!("missing results from the client or server agent");
        };
        let events = crate::workloads::events::summarise_txns(
            p,
            crate::workloads::events::Unit::Echoes,
            true,
            cr.events.as_deref(),
            gateway,
        );
        Ok(Figures::Echo(EchoSummary {
            events: events.map(Box::new),
            ..summarise(&cr, &sr)
        }))
    }
}

/// The agent's side of echo: which traffic object plays each role.
impl SetUp for EchoServerSpec {
    fn set_up(&self) -> SetUpResult {
        role(EchoServer::start(self))
    }
}

impl SetUp for EchoClientSpec {
    fn set_up(&self) -> SetUpResult {
        role(EchoClients::connect(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::{Counter, EchoClientStats, EchoServerStats, RttSummary, Validation};

    #[test]
    fn summary_adds_up_both_ends() {
        // 64-byte frames; round trips only counted.
        let frames = |n: u64| Counter {
            frames: n,
            bytes: 64 * n,
        };
        let rtt = |count: u64| RttSummary {
            count,
            ..Default::default()
        };
        let c = EchoClientResults {
            clients: vec![
                EchoClientStats {
                    client: 1,
                    mp1: frames(10),
                    mp4: frames(10),
                    rtt: rtt(10),
                    ..Default::default()
                },
                EchoClientStats {
                    client: 2,
                    mp1: frames(5),
                    mp4: frames(4),
                    lost: 1,
                    unsent: 2,
                    validation: Validation {
                        gaps: 1,
                        ..Default::default()
                    },
                    rtt: rtt(4),
                    ..Default::default()
                },
            ],
            rtt: rtt(14),
            elapsed_ns: 2_000_000_000,
            events: None,
        };
        let s = EchoServerResults {
            clients: vec![
                EchoServerStats {
                    client: 2,
                    mp2: frames(4),
                    mp3: frames(4),
                    unsent: 1,
                    validation: Validation {
                        wrong_size: 3,
                        ..Default::default()
                    },
                    ..Default::default()
                },
                EchoServerStats {
                    client: 1,
                    mp2: frames(10),
                    mp3: frames(10),
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

    #[test]
    fn a_trial_longer_than_asked_says_why() {
        assert_eq!(longer_than_asked(2.0, 2.05, 10), "");
        assert_eq!(longer_than_asked(0.5, 0.9, 10), "");
        let n = longer_than_asked(2.0, 10.23, 3000);
        assert!(
            n.starts_with(" (asked 2.00 s: the traffic ran 8.23 s longer")
                && n.contains("3000 clients")
                && n.ends_with("over the 10.23 s it ran)"),
            "{n}"
        );
    }
}
