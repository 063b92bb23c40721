//! The named rule models as data: which model, how many rules, where the matching rule
//! sits, in which chain, and the testbed's addresses the rule set is built for.
//!
//! Owns: [`Model`], [`Position`], [`Chain`] with their names (`--model`, `--position`,
//! `--chain`, scenario files, trial keys), [`ModelSpec`] and [`Addressing`].
//! Must not: build rule sets (that is `firewall::models::generate`).

use crate::model::{Hook, Ip, Prefix, L4};
use serde::{Deserialize, Serialize};
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

/// The addresses of the testbed the rule set is for.
#[serde_with::skip_serializing_none]
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
    pub gateway_client: Option<IpAddr>,
    /// The gateway's address on the server side (198.19.0.1): the source NAT models
    /// translate to it. `None` from older controllers.
    pub gateway_server: Option<IpAddr>,
}

#[serde_with::skip_serializing_none]
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
    pub dport: Option<u16>,
    /// Model `snat`: translate to this address instead of the gateway's server-side one.
    pub nat_to: Option<IpAddr>,
}

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

crate::named!(Model, "model", {
    None => "none",
    Seed000F0 => "seed000-f0",
    Seed000F2 => "seed000-f2",
    Seed000F4 => "seed000-f4",
    Linear => "linear",
    LinearDrop => "linear-drop",
    NetDrop => "net-drop",
    Notrack => "notrack",
    Conntrack => "conntrack",
    Stateful => "stateful",
    RawDrop => "raw-drop",
    FilterDrop => "filter-drop",
    RawFiller => "raw-filler",
    StringBm => "string-bm",
    StringKmp => "string-kmp",
    StringBmDrop => "string-bm-drop",
    StringKmpDrop => "string-kmp-drop",
    Hashlimit => "hashlimit",
    Snat => "snat",
    Masquerade => "masquerade",
    Dnat => "dnat",
    Flowtable => "flowtable",
    Import => "import",
});
crate::named!(Position, "position", {
    First => "first",
    Middle => "middle",
    Last => "last",
    None => "none",
});
crate::named!(Chain, "chain", { Forward => "forward", Input => "input" });

/// Every model's name (`--model`), in the order of [`Model::ALL`].
pub const MODELS: &[&str] = Model::NAMES;
/// Every position's name (`--position`).
pub const POSITIONS: &[&str] = Position::NAMES;
/// Every chain's name (`--chain`).
pub const CHAINS: &[&str] = Chain::NAMES;

impl Model {
    /// A NAT model: the gateway translates addresses (the server sees the translated
    /// source, or the client aims at the gateway).
    pub fn is_nat(self) -> bool {
        matches!(self, Model::Snat | Model::Masquerade | Model::Dnat)
    }

    /// Its rule set grows with `rules` (filler or string rules); the others install
    /// the same rules whatever the count, so two of their configurations that differ
    /// only in it are one gateway measured twice (`firewall::models`' test holds the
    /// list to what each generates).
    pub fn uses_rule_count(self) -> bool {
        match self {
            Model::Linear
            | Model::LinearDrop
            | Model::NetDrop
            | Model::Stateful
            | Model::RawDrop
            | Model::FilterDrop
            | Model::RawFiller
            | Model::StringBm
            | Model::StringKmp
            | Model::StringBmDrop
            | Model::StringKmpDrop
            | Model::Snat
            | Model::Masquerade
            | Model::Dnat
            | Model::Flowtable => true,
            Model::None
            | Model::Seed000F0
            | Model::Seed000F2
            | Model::Seed000F4
            | Model::Notrack
            | Model::Conntrack
            | Model::Hashlimit
            | Model::Import => false,
        }
    }

    /// Its rule set depends on `position` (where the matching rule sits among the
    /// fillers, or none); the others install the same rules wherever it is asked to
    /// sit (`firewall::models`' test holds the list to what each generates).
    pub fn uses_position(self) -> bool {
        // The models whose matching rule sits among fillers; the others put theirs (if
        // any) at a place of their own whatever is asked.
        matches!(
            self,
            Model::Linear
                | Model::LinearDrop
                | Model::NetDrop
                | Model::Snat
                | Model::Masquerade
                | Model::Dnat
                | Model::Flowtable
        )
    }

    /// Where the client aims its traffic: at the gateway's client-side address
    /// (destination NAT forwards it), else at the server.
    pub fn aims_at_gateway(self) -> bool {
        self == Model::Dnat
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The names table of each enum (`named!`) is its serde form and parses back.
    #[test]
    fn names_are_serde_names_and_parse_back() {
        fn check<T>(all: &[T])
        where
            T: Copy + PartialEq + std::fmt::Debug + Serialize + std::fmt::Display,
            T: std::str::FromStr<Err = crate::model::UnknownName>,
        {
            for &v in all {
                let name = v.to_string();
                assert_eq!(serde_json::to_value(v).unwrap(), name, "{v:?}");
                assert_eq!(name.parse::<T>().unwrap(), v);
            }
        }
        check(&Model::ALL);
        check(&Position::ALL);
        check(&Chain::ALL);
        check(&crate::model::NftFamily::ALL);
        assert_eq!(MODELS.len(), Model::ALL.len());
        assert_eq!(
            "sideways".parse::<Position>().unwrap_err().to_string(),
            "unknown position 'sideways' (expected one of: first, middle, last, none)"
        );
    }
}
