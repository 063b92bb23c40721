//! The role enums: which role an agent plays in a trial (`RoleSpec`) and what it
//! reports at the end (`RoleResults`), one variant per workload side.
//!
//! Owns: the two enums, their serde tag (`role`), and which variant each results type
//! is (`From`: a role's results type is its own, so an agent's traffic reports
//! without naming its role).
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

/// `match` over a [`RoleSpec`] binding each variant's spec to `$s` and evaluating
/// `$body` with it: the one match over roles a user of the enum needs, so that it can
/// call a trait its spec types implement without naming a role (the agent's setup).
#[macro_export]
macro_rules! with_role_spec {
    ($spec:expr, $s:ident => $body:expr) => {
        match $spec {
            $crate::RoleSpec::EchoServer($s) => $body,
            $crate::RoleSpec::EchoClient($s) => $body,
            $crate::RoleSpec::Gateway($s) => $body,
            $crate::RoleSpec::UdpSource($s) => $body,
            $crate::RoleSpec::UdpSink($s) => $body,
            $crate::RoleSpec::Ping($s) => $body,
            $crate::RoleSpec::Reflector($s) => $body,
            $crate::RoleSpec::TcpServer($s) => $body,
            $crate::RoleSpec::SessionClient($s) => $body,
        }
    };
}

/// The results enum and, for each results type, `From` it to its variant: one list.
macro_rules! role_results {
    ($($variant:ident($t:ty)),* $(,)?) => {
        /// What a role reports at its stop: the variant of its results type ([`From`]).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "role", rename_all = "snake_case")]
        pub enum RoleResults {
            $($variant($t)),*
        }

        $(impl From<$t> for RoleResults {
            fn from(r: $t) -> RoleResults {
                RoleResults::$variant(r)
            }
        })*
    };
}
role_results!(
    EchoClient(EchoClientResults),
    EchoServer(EchoServerResults),
    Gateway(GatewayResults),
    UdpSource(UdpSourceResults),
    UdpSink(UdpSinkResults),
    Ping(PingResults),
    Reflector(ReflectorResults),
    TcpServer(TcpServerResults),
    SessionClient(Box<SessionClientResults>),
);

#[cfg(test)]
mod tests {
    use super::*;

    /// A results type becomes its role's variant, under the wire name the controller
    /// and stored results know.
    #[test]
    fn results_are_their_types_role_on_the_wire() {
        let tag = |r: RoleResults| serde_json::to_value(r).unwrap()["role"].clone();
        assert_eq!(tag(PingResults::default().into()), "ping");
        assert_eq!(tag(ReflectorResults::default().into()), "reflector");
        assert_eq!(tag(UdpSinkResults::default().into()), "udp_sink");
    }
}
