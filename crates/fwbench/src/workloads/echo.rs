//! Seed 000's echo workload on the controller side: the figures that combine the
//! client's and the server's counters at the four measurement points.

use crate::params::{TrialParams, ECHO_PORT};
use crate::testbed::{Host, Testbed};
use crate::workloads::rtt_columns;
use crate::workloads::{Ending, Figures, MainMetric, Profile, Returned, Roles, Traffic};
use anyhow::{bail, Result};
use proto::{EchoClientResults, EchoServerResults};
use proto::{EchoClientSpec, EchoServerSpec, GatewayResults, RoleResults, RoleSpec};
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
    #[serde(skip_serializing_if = "Option::is_none")]
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

impl EchoSummary {
    /// The store's headline columns: throughput, transactions, RTT percentiles, errors.
    pub fn headline(&self) -> Headline {
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
            live_unit: "echoes",
            ending: Ending::Timed {
                measuring: "client",
            },
            gateway_cpu: false,
        }
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

    fn collect(
        &self,
        _tb: &dyn Testbed,
        p: &TrialParams,
        results: Vec<Returned>,
        gateway: Option<&GatewayResults>,
    ) -> Result<Figures> {
        let (mut cr, mut sr) = (None, None);
        for r in results.into_iter().map(|r| r.results) {
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
            crate::workloads::events::Unit::Echo,
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

#[cfg(test)]
mod tests {
    use super::*;
    use proto::{Counter, EchoClientStats, EchoServerStats, RttSummary, Validation};

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
            events: None,
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
