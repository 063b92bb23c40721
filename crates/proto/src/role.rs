//! The role enums: which role an agent plays in a trial (`RoleSpec`) and what it
//! reports at the end (`RoleResults`), one variant per workload side.
//!
//! Owns: the two enums and their serde tag (`role`).
//! Must not: import the messages (`msg`) that carry them; the workload modules below
//! must not import this one.

use crate::conn::{SessionClientResults, SessionClientSpec, TcpServerResults, TcpServerSpec};
use crate::echo::{EchoClientResults, EchoClientSpec, EchoServerResults, EchoServerSpec};
use crate::gateway::{GatewayResults, GatewaySpec};
use crate::packet::{
    PingResults, PingSpec, ReflectorResults, ReflectorSpec, UdpSinkResults, UdpSinkSpec,
    UdpSourceResults, UdpSourceSpec,
};
use crate::param::Proto;
use serde::{Deserialize, Serialize};

/// The setup of one role for one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum RoleSpec {
    EchoServer(EchoServerSpec),
    EchoClient(EchoClientSpec),
    Gateway(GatewaySpec),
    UdpSource(UdpSourceSpec),
    UdpSink(UdpSinkSpec),
    Ping(PingSpec),
    Reflector(ReflectorSpec),
    TcpServer(TcpServerSpec),
    SessionClient(SessionClientSpec),
}

impl RoleSpec {
    pub fn name(&self) -> &'static str {
        match self {
            RoleSpec::EchoServer(_)
            | RoleSpec::UdpSink(_)
            | RoleSpec::Reflector(_)
            | RoleSpec::TcpServer(_) => "server",
            RoleSpec::EchoClient(_)
            | RoleSpec::UdpSource(_)
            | RoleSpec::Ping(_)
            | RoleSpec::SessionClient(_) => "client",
            RoleSpec::Gateway(_) => "gateway",
        }
    }

    /// The transport protocol of the role's sockets where a trial chooses it (echo's
    /// TCP, UDP or SCTP; sessions are TCP). `None`: the gateway, or a role whose frames
    /// are UDP datagrams, raw frames or ICMP whatever the trial. A kernel without the
    /// protocol makes the role's setup "unavailable".
    pub fn transport(&self) -> Option<Proto> {
        match self {
            RoleSpec::EchoServer(s) => Some(s.proto),
            RoleSpec::EchoClient(s) => Some(s.proto),
            RoleSpec::TcpServer(_) | RoleSpec::SessionClient(_) => Some(Proto::Tcp),
            RoleSpec::UdpSource(_)
            | RoleSpec::UdpSink(_)
            | RoleSpec::Ping(_)
            | RoleSpec::Reflector(_)
            | RoleSpec::Gateway(_) => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum RoleResults {
    EchoClient(EchoClientResults),
    EchoServer(EchoServerResults),
    Gateway(GatewayResults),
    UdpSource(UdpSourceResults),
    UdpSink(UdpSinkResults),
    Ping(PingResults),
    Reflector(ReflectorResults),
    TcpServer(TcpServerResults),
    SessionClient(Box<SessionClientResults>),
}
