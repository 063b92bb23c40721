//! The named rule models as data: which model, how many rules, where the matching rule
//! sits, in which chain, and the testbed's addresses the rule set is built for.
//!
//! Owns: [`Model`], [`Position`], [`Chain`] with their names (`--model`, `--position`,
//! `--chain`, scenario files, trial keys), [`ModelSpec`] and [`Addressing`].
//! Must not: build rule sets (that is `firewall::models::generate`).

use crate::model::{Hook, Ip, Prefix, UnknownName, L4};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;

/// Chain the test traffic is filtered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Chain {
    Forward,
    Input,
}

/// Where the rule that matches the test traffic sits among the filler rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Position {
    First,
    Middle,
    Last,
    /// No matching rule: the chain's policy decides.
    None,
}

/// A model name as typed (`--model`), e.g. `seed000-f2`, `linear`, `string-bm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    None,
    Seed000F0,
    Seed000F2,
    Seed000F4,
    Linear,
    /// Seed 001's ipset rows: N rules of the filler shape (source host, port), DROP,
    /// one of them (at `position`) the client's own flow — a set engine holds it as
    /// one element among N, so the lookup hits and the flood is dropped.
    LinearDrop,
    /// Seed 004's rules: N DROP rules each for a whole other network (a /24 of the
    /// IPv4 documentation ranges, cycled; a /48 of 2001:db8::/32), any protocol, then
    /// the matching rule at `position` as `linear` has it.
    NetDrop,
    Notrack,
    Conntrack,
    /// A stateful gateway (issue 26): established/related accepted first, N filler
    /// rules, then new flows from the client network accepted.
    Stateful,
    RawDrop,
    FilterDrop,
    RawFiller,
    StringBm,
    StringKmp,
    /// Seed 001's string rows: N payload string rules, the last one matching every
    /// flood packet (the payload header's magic `FB`), DROP.
    StringBmDrop,
    StringKmpDrop,
    Hashlimit,
    /// Source NAT on the way out: N filler SNAT rules, then (at `position`) the client
    /// network's flows translated to the gateway's server-side address.
    Snat,
    /// [`Model::Snat`] with masquerade (the outgoing interface's address).
    Masquerade,
    /// Destination NAT (port forwarding): the client aims at the gateway's client-side
    /// address; N filler DNAT rules, then (at `position`) the rule that forwards it
    /// to the server.
    Dnat,
    /// The nft software fast path: N filler rules, then (at `position`) the client
    /// network's flows added to a flowtable on the gateway's interfaces. Needs a
    /// kernel with flowtables (detected; refused by name where it has none).
    Flowtable,
    Import,
}

pub const MODELS: &[&str] = &[
    "none",
    "seed000-f0",
    "seed000-f2",
    "seed000-f4",
    "linear",
    "linear-drop",
    "net-drop",
    "notrack",
    "conntrack",
    "stateful",
    "raw-drop",
    "filter-drop",
    "raw-filler",
    "string-bm",
    "string-kmp",
    "string-bm-drop",
    "string-kmp-drop",
    "hashlimit",
    "snat",
    "masquerade",
    "dnat",
    "flowtable",
    "import",
];

/// The addresses of the testbed the rule set is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Addressing {
    /// Source address of client i (index 0 = client 1).
    pub clients: Vec<IpAddr>,
    /// The whole client-side network (198.18.0.0/16 or 2001:2:0:1::/64).
    pub client_net: Prefix,
    pub server: IpAddr,
    /// The whole server-side network (198.19.0.0/16 or 2001:2:0:2::/64).
    pub server_net: Prefix,
    /// The gateway's address on the client side (198.18.0.1): where the NAT models'
    /// client aims (destination NAT). `None` from older controllers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_client: Option<IpAddr>,
    /// The gateway's address on the server side (198.19.0.1): the source NAT models
    /// translate to it. `None` from older controllers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_server: Option<IpAddr>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    pub model: Model,
    /// Number of filler rules (linear, raw-filler) or string rules; ignored elsewhere.
    pub count: u32,
    pub position: Position,
    pub chain: Chain,
    pub l4: L4,
    pub ip: Ip,
    /// The test traffic flows one way only (flood, flow): rules for replies are left
    /// out, so that every matching rule sees packets.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_way: bool,
    /// Destination port of the test traffic (model `linear-drop` matches the client's
    /// own (address, port) pair); `None` from older controllers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dport: Option<u16>,
    /// Model `snat`: translate to this address instead of the gateway's server-side one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_to: Option<IpAddr>,
}

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

impl Model {
    /// The name as typed (`--model`), one of [`MODELS`].
    pub fn name(self) -> &'static str {
        match self {
            Model::None => "none",
            Model::Seed000F0 => "seed000-f0",
            Model::Seed000F2 => "seed000-f2",
            Model::Seed000F4 => "seed000-f4",
            Model::Linear => "linear",
            Model::LinearDrop => "linear-drop",
            Model::NetDrop => "net-drop",
            Model::Notrack => "notrack",
            Model::Conntrack => "conntrack",
            Model::Stateful => "stateful",
            Model::RawDrop => "raw-drop",
            Model::FilterDrop => "filter-drop",
            Model::RawFiller => "raw-filler",
            Model::StringBm => "string-bm",
            Model::StringKmp => "string-kmp",
            Model::StringBmDrop => "string-bm-drop",
            Model::StringKmpDrop => "string-kmp-drop",
            Model::Hashlimit => "hashlimit",
            Model::Snat => "snat",
            Model::Masquerade => "masquerade",
            Model::Dnat => "dnat",
            Model::Flowtable => "flowtable",
            Model::Import => "import",
        }
    }

    /// Every model, in the order of [`MODELS`].
    pub const ALL: [Model; 23] = [
        Model::None,
        Model::Seed000F0,
        Model::Seed000F2,
        Model::Seed000F4,
        Model::Linear,
        Model::LinearDrop,
        Model::NetDrop,
        Model::Notrack,
        Model::Conntrack,
        Model::Stateful,
        Model::RawDrop,
        Model::FilterDrop,
        Model::RawFiller,
        Model::StringBm,
        Model::StringKmp,
        Model::StringBmDrop,
        Model::StringKmpDrop,
        Model::Hashlimit,
        Model::Snat,
        Model::Masquerade,
        Model::Dnat,
        Model::Flowtable,
        Model::Import,
    ];

    /// A NAT model: the gateway translates addresses (the server sees the translated
    /// source, or the client aims at the gateway).
    pub fn is_nat(self) -> bool {
        matches!(self, Model::Snat | Model::Masquerade | Model::Dnat)
    }

    /// Where the client aims its traffic: at the gateway's client-side address
    /// (destination NAT forwards it), else at the server.
    pub fn aims_at_gateway(self) -> bool {
        self == Model::Dnat
    }
}

impl std::str::FromStr for Model {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        Model::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownName {
                what: "model",
                name: s.into(),
                expected: MODELS.join(", "),
            })
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub const POSITIONS: &[&str] = &["first", "middle", "last", "none"];

impl std::str::FromStr for Position {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        Ok(match s {
            "first" => Position::First,
            "middle" => Position::Middle,
            "last" => Position::Last,
            "none" => Position::None,
            _ => {
                return Err(UnknownName {
                    what: "position",
                    name: s.into(),
                    expected: POSITIONS.join(", "),
                })
            }
        })
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Position::First => "first",
            Position::Middle => "middle",
            Position::Last => "last",
            Position::None => "none",
        })
    }
}

pub const CHAINS: &[&str] = &["forward", "input"];

impl std::str::FromStr for Chain {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        Ok(match s {
            "forward" => Chain::Forward,
            "input" => Chain::Input,
            _ => {
                return Err(UnknownName {
                    what: "chain",
                    name: s.into(),
                    expected: CHAINS.join(", "),
                })
            }
        })
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Chain::Forward => "forward",
            Chain::Input => "input",
        })
    }
}

impl Chain {
    /// The netfilter hook the test traffic is filtered at.
    pub fn hook(self) -> Hook {
        match self {
            Chain::Forward => Hook::FilterForward,
            Chain::Input => Hook::FilterInput,
        }
    }
}
