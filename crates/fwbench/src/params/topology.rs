//! The testbed shape a trial asks for, and the chain its traffic is filtered in.

use crate::params::value_error::ValueError;
use firewall::models::Chain;

/// Which roles exist and how traffic crosses the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    Forward,
    Direct,
    Input,
    /// Forward's namespaces, forwarding off, a userspace TCP relay in the gateway.
    Proxy,
}

impl Topology {
    /// The namespaces a trial of this topology runs in (proxy uses forward's).
    pub fn testbed(self) -> Topology {
        match self {
            Topology::Proxy => Topology::Forward,
            t => t,
        }
    }
    /// Whether its traffic crosses a gateway (every topology but `direct`).
    pub fn has_gateway(self) -> bool {
        match self {
            Topology::Forward | Topology::Input | Topology::Proxy => true,
            Topology::Direct => false,
        }
    }
}

impl std::str::FromStr for Topology {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Self, ValueError> {
        match s {
            "forward" => Ok(Topology::Forward),
            "direct" => Ok(Topology::Direct),
            "input" => Ok(Topology::Input),
            "proxy" => Ok(Topology::Proxy),
            _ => Err(ValueError::Other(format!(
                "unknown topology '{s}' (expected forward, direct, input or proxy)"
            ))),
        }
    }
}

impl std::fmt::Display for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Topology::Forward => "forward",
            Topology::Direct => "direct",
            Topology::Input => "input",
            Topology::Proxy => "proxy",
        })
    }
}

/// The chain the test traffic is filtered in on a testbed of topology `t`.
pub fn chain_of(t: Topology) -> Chain {
    match t {
        // The proxy's connections end in the gateway (INPUT) and start anew from it.
        Topology::Input | Topology::Proxy => Chain::Input,
        _ => Chain::Forward,
    }
}
