//! The kinds of traffic a trial can send (the `workload` axis), as typed data: a
//! [`TrialKind`] is one family (echo, packet, conn) carrying that family's parameters.
//! [`Workload`] is the flat name of a kind (`flood`, `http`, …); searches (`ndr`,
//! `degrade`, the sweet spot) are not kinds but strategies over one
//! (`params::search::Search`).

use crate::params::conn::ConnParams;
use crate::params::packet::PacketParams;
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

impl Workload {
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
    /// The defaults of each workload (seed 003's bulk: 1.7 MB × 10; seed 004: 8 MB).
    pub fn defaults(self) -> ConnParams {
        let base = ConnParams::base();
        match self {
            ConnKind::Bulk => ConnParams {
                size: 1_700_000,
                count: Some(10),
                overhead_sessions: 10,
                ..base
            },
            ConnKind::Http => ConnParams {
                size: 8 << 20,
                count: Some(10),
                ..base
            },
            ConnKind::Sessions | ConnKind::Connections => base,
        }
    }
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
