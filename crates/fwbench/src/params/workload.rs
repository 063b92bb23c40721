//! The kinds of traffic a trial can send (the `workload` axis), as typed data: a
//! [`TrialKind`] is one family (echo, packet, conn) carrying that family's parameters.
//! [`Workload`] is the flat name of a kind (`flood`, `http`, …); searches (`ndr`,
//! `degrade`, the sweet spot) are not kinds but strategies over one
//! (`params::search::Search`). The names of the searches with a command of their own
//! ([`SearchKind`]) and the kind each steps with are here too: every name the
//! `workload` axis takes is declared in this file.
//!
//! Owns: what each kind declares about itself for the input side — its family and
//! axis class ([`Workload::class`]), its own axis defaults ([`Workload::axis_defaults`]),
//! its transport, how long it lasts, how it takes gateway events ([`EventFit`]), whether
//! it counts while it runs (adaptive length) — so that the axis table, the builder
//! and the checks ask the kind instead of naming it. Adding a kind: a variant here,
//! and each exhaustive match below says what the compiler asks.
//! Must not: parse values or know how a trial runs (`plan`, `workloads`).

use crate::params::conn::ConnParams;
use crate::params::packet::{ping_duration, PacketParams, SinkKind};
use serde::Serialize;

/// The traffic of a trial, by name.
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
    /// TCP sessions: connect, request, response, close (seed 003).
    Sessions,
    /// Bulk transfers, one per session (seed 003).
    Bulk,
    /// HTTP/1.1 downloads (seed 004).
    Http,
    /// Concurrent connection capacity: open and hold connections.
    Connections,
    /// New flows: UDP datagrams each of a new 5-tuple, through a stateful gateway
    /// (conntrack: new-flow rate, table full).
    #[serde(rename = "newflows")]
    NewFlows,
}

fwmodel::named!(Workload, "workload", {
    Echo => "echo",
    Flood => "flood",
    Flow => "flow",
    Ping => "ping",
    Sessions => "sessions",
    Bulk => "bulk",
    Http => "http",
    Connections => "connections",
    NewFlows => "newflows",
});

/// The searches with a command (and a `workload` axis value) of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SearchKind {
    Ndr,
    Degrade,
    /// ndr over new flows (conntrack): the highest new-flow rate with no loss.
    NdrNewflows,
    /// MLRsearch: the highest rate within each goal loss ratio.
    Mlr,
    /// The safe envelope (issue 39): the highest gateway update rate at which the
    /// updates keep up (p99 latency from due to committed under a target), take
    /// effect in time and let nothing through.
    Envelope,
}

fwmodel::named!(SearchKind, "search", {
    Ndr => "ndr",
    Degrade => "degrade",
    NdrNewflows => "ndr-newflows",
    Mlr => "mlr",
    Envelope => "envelope",
});

impl SearchKind {
    /// The kind of traffic its steps send.
    pub fn workload(self) -> Workload {
        match self {
            SearchKind::Ndr | SearchKind::Mlr => Workload::Flood,
            SearchKind::Degrade | SearchKind::Envelope => Workload::Flow,
            SearchKind::NdrNewflows => Workload::NewFlows,
        }
    }
}

/// The packet-rate family: UDP datagrams, counted at a sink or the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketKind {
    Flood,
    Flow,
    Ping,
    /// One datagram per flow, each flow a new conntrack entry.
    NewFlows,
}

/// The connection family: TCP to the built-in (or an external) server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnKind {
    Sessions,
    Bulk,
    Http,
    Connections,
}

/// One trial's traffic: its family and that family's parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum TrialKind {
    Echo,
    Packet(PacketKind, PacketParams),
    Conn(ConnKind, ConnParams),
}

/// The families of workloads by the axes they read (`plan::axes`: an axis lists the
/// classes that read it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Seed 000's echo.
    Echo,
    /// flood, flow, ping, newflows.
    Packet,
    /// ndr, degrade, mlr: searches over flood/flow trials (they read the packet axes too).
    Search,
    /// sessions, bulk, http, connections.
    Conn,
}

/// The defaults a workload gives the axes whose default is its own, as the axis
/// registry's text (`plan::axes` parses them as it parses a scenario's values; every
/// other axis has one default for all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisDefaults {
    /// `clients`: client connections (echo) or source addresses.
    pub clients: &'static str,
    /// `size`: a packet size, or a connection workload's bytes.
    pub size: &'static str,
    /// `rate`: the offered rate.
    pub rate: &'static str,
    /// `count`: pings or sessions in total (empty: for the duration).
    pub count: &'static str,
    /// `overhead_sessions`: zero-byte sessions measured first.
    pub overhead_sessions: &'static str,
}

/// What a workload leaves at the common default.
const COMMON: AxisDefaults = AxisDefaults {
    clients: "1",
    size: "18",
    rate: "max",
    count: "",
    overhead_sessions: "0",
};

/// How a kind's trials take a gateway event (`params::events::check_for` says why
/// one is refused): what the event's marker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventFit {
    /// The traffic itself (flow 0) or a probe stream of the kind's own: any event.
    Any,
    /// A client whose connection opens before the traffic phase (echo's client 1):
    /// over TCP or SCTP only an event that does not start by dropping it.
    ClientConnectsFirst,
    /// A stream of sessions timed one by one by the built-in client and server.
    TimedSessions,
    /// None: the kind has no stream whose fate a rule change turns (the text says so).
    Refused(&'static str),
}

impl Workload {
    /// The class of axes it reads.
    pub fn class(self) -> Class {
        match self {
            Workload::Echo => Class::Echo,
            Workload::Flood | Workload::Flow | Workload::Ping | Workload::NewFlows => Class::Packet,
            Workload::Sessions | Workload::Bulk | Workload::Http | Workload::Connections => {
                Class::Conn
            }
        }
    }
    /// Its own axis defaults: seed 000's five echo clients, seed 002's 128-byte
    /// 15 Mbit/s flow, seed 003's 8-byte pings and 1.7 MB × 10 bulk transfers (the
    /// overhead split out with 10 sessions), seed 004's 8 MB × 10 downloads; a flood
    /// sends 64-byte IPv4 frames (18-byte payloads) at the maximum rate.
    pub fn axis_defaults(self) -> AxisDefaults {
        match self {
            Workload::Echo => AxisDefaults {
                clients: "5",
                ..COMMON
            },
            Workload::Flood | Workload::NewFlows => COMMON,
            Workload::Flow => AxisDefaults {
                size: "128",
                rate: "15M",
                ..COMMON
            },
            Workload::Ping => AxisDefaults {
                size: "8",
                ..COMMON
            },
            Workload::Sessions | Workload::Connections => AxisDefaults {
                size: "512",
                ..COMMON
            },
            Workload::Bulk => AxisDefaults {
                size: "1700000",
                count: "10",
                overhead_sessions: "10",
                ..COMMON
            },
            Workload::Http => AxisDefaults {
                size: "8M",
                count: "10",
                ..COMMON
            },
        }
    }
    /// A model's rules for it pass one direction only (client to server: flood and
    /// flow send no replies).
    pub fn one_way(self) -> bool {
        match self {
            Workload::Flood | Workload::Flow => true,
            Workload::Echo
            | Workload::Ping
            | Workload::NewFlows
            | Workload::Sessions
            | Workload::Bulk
            | Workload::Http
            | Workload::Connections => false,
        }
    }
    /// The kind of this name, its family's parameters built by `packet` or `conn`
    /// (only the one of its family is called).
    pub fn kind<E>(
        self,
        packet: impl FnOnce(PacketKind) -> Result<PacketParams, E>,
        conn: impl FnOnce(ConnKind) -> Result<ConnParams, E>,
    ) -> Result<TrialKind, E> {
        let p = |k: PacketKind| Ok(TrialKind::Packet(k, packet(k)?));
        let c = |k: ConnKind| Ok(TrialKind::Conn(k, conn(k)?));
        match self {
            Workload::Echo => Ok(TrialKind::Echo),
            Workload::Flood => p(PacketKind::Flood),
            Workload::Flow => p(PacketKind::Flow),
            Workload::Ping => p(PacketKind::Ping),
            Workload::NewFlows => p(PacketKind::NewFlows),
            Workload::Sessions => c(ConnKind::Sessions),
            Workload::Bulk => c(ConnKind::Bulk),
            Workload::Http => c(ConnKind::Http),
            Workload::Connections => c(ConnKind::Connections),
        }
    }
}

impl PacketKind {
    pub fn workload(self) -> Workload {
        match self {
            PacketKind::Flood => Workload::Flood,
            PacketKind::Flow => Workload::Flow,
            PacketKind::Ping => Workload::Ping,
            PacketKind::NewFlows => Workload::NewFlows,
        }
    }
}

impl ConnKind {
    pub fn workload(self) -> Workload {
        match self {
            ConnKind::Sessions => Workload::Sessions,
            ConnKind::Bulk => Workload::Bulk,
            ConnKind::Http => Workload::Http,
            ConnKind::Connections => Workload::Connections,
        }
    }
    /// What the client agent runs.
    pub fn mode(self) -> proto::ConnMode {
        match self {
            ConnKind::Sessions => proto::ConnMode::Sessions,
            ConnKind::Bulk => proto::ConnMode::Bulk,
            ConnKind::Http => proto::ConnMode::Http,
            ConnKind::Connections => proto::ConnMode::Hold,
        }
    }
}

impl TrialKind {
    /// The transport of its traffic: echo's as asked (`echo`), TCP for connections,
    /// UDP for packets.
    pub fn transport(&self, echo: proto::Proto) -> proto::Proto {
        match self {
            TrialKind::Echo => echo,
            TrialKind::Conn(..) => proto::Proto::Tcp,
            TrialKind::Packet(..) => proto::Proto::Udp,
        }
    }
    /// How long a trial asked to last `duration_s` runs: a ping long enough for its
    /// probes and the last reply's timeout, the others as asked.
    pub fn lasts(&self, duration_s: f64, timeout_ms: u32) -> f64 {
        match self {
            TrialKind::Packet(PacketKind::Ping, k) => {
                ping_duration(duration_s, k.count, k.interval_ns, timeout_ms)
            }
            TrialKind::Packet(PacketKind::Flood | PacketKind::Flow | PacketKind::NewFlows, _)
            | TrialKind::Echo
            | TrialKind::Conn(..) => duration_s,
        }
    }
    /// It asks for the sweet-spot search: sessions with `parallel` auto (0).
    pub fn asks_sweet_spot(&self) -> bool {
        match self {
            TrialKind::Conn(ConnKind::Sessions, k) => k.parallel == 0,
            TrialKind::Conn(ConnKind::Bulk | ConnKind::Http | ConnKind::Connections, _)
            | TrialKind::Echo
            | TrialKind::Packet(..) => false,
        }
    }
    /// A role counts its rate while the trial runs, so that adaptive length can stop
    /// it once precise: echo, and flood or flow with a socket sink (new flows end when
    /// every flow has sent: nothing to make precise).
    pub fn counts_while_running(&self) -> bool {
        match self {
            TrialKind::Echo => true,
            TrialKind::Packet(PacketKind::Flood | PacketKind::Flow, k) => {
                k.sink != SinkKind::Gateway
            }
            TrialKind::Packet(PacketKind::Ping | PacketKind::NewFlows, _) | TrialKind::Conn(..) => {
                false
            }
        }
    }
    /// How it takes a gateway event.
    pub fn event_fit(&self) -> EventFit {
        match self {
            TrialKind::Packet(
                PacketKind::Flood | PacketKind::Flow | PacketKind::Ping | PacketKind::NewFlows,
                _,
            ) => EventFit::Any,
            TrialKind::Echo => EventFit::ClientConnectsFirst,
            TrialKind::Conn(ConnKind::Sessions | ConnKind::Bulk | ConnKind::Http, _) => {
                EventFit::TimedSessions
            }
            TrialKind::Conn(ConnKind::Connections, _) => EventFit::Refused(
                "connections opens connections and holds them; it has no stream of \
                 sessions whose fate a rule change turns (use sessions, bulk or http)",
            ),
        }
    }
    /// Its background's packet rate may be set as a share of what the gateway
    /// forwards (`--load`, `search::load`): a flood's or a flow's, one rate of UDP.
    pub fn takes_load(&self) -> bool {
        match self {
            TrialKind::Packet(PacketKind::Flood | PacketKind::Flow, _) => true,
            TrialKind::Echo
            | TrialKind::Packet(PacketKind::Ping | PacketKind::NewFlows, _)
            | TrialKind::Conn(..) => false,
        }
    }
    /// With a gateway event, its marker is a stream of its own from a second client
    /// address (ping, the connection workloads; `workloads::events`).
    pub fn marker_stream(&self) -> bool {
        match self {
            TrialKind::Packet(PacketKind::Ping, _) | TrialKind::Conn(..) => true,
            TrialKind::Echo
            | TrialKind::Packet(PacketKind::Flood | PacketKind::Flow | PacketKind::NewFlows, _) => {
                false
            }
        }
    }
    pub fn workload(&self) -> Workload {
        match self {
            TrialKind::Echo => Workload::Echo,
            TrialKind::Packet(k, _) => k.workload(),
            TrialKind::Conn(k, _) => k.workload(),
        }
    }
    pub fn packet(&self) -> Option<&PacketParams> {
        match self {
            TrialKind::Packet(_, k) => Some(k),
            TrialKind::Echo | TrialKind::Conn(..) => None,
        }
    }
    pub fn packet_mut(&mut self) -> Option<&mut PacketParams> {
        match self {
            TrialKind::Packet(_, k) => Some(k),
            TrialKind::Echo | TrialKind::Conn(..) => None,
        }
    }
    pub fn conn(&self) -> Option<&ConnParams> {
        match self {
            TrialKind::Conn(_, k) => Some(k),
            TrialKind::Echo | TrialKind::Packet(..) => None,
        }
    }
    pub fn conn_mut(&mut self) -> Option<&mut ConnParams> {
        match self {
            TrialKind::Conn(_, k) => Some(k),
            TrialKind::Echo | TrialKind::Packet(..) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload's class of axes is its family's: the kind it builds carries packet
    /// parameters exactly when it reads the packet axes, connection parameters exactly
    /// when it reads the connection axes.
    #[test]
    fn the_class_of_axes_is_the_family_of_the_kind() {
        for w in Workload::ALL {
            let family = match w.kind(|_| Err(Class::Packet), |_| Err(Class::Conn)) {
                Ok(_) => Class::Echo,
                Err(c) => c,
            };
            assert_eq!(w.class(), family, "{w}");
        }
    }
}
