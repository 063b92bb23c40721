//! What a testbed file describes, once parsed: each role's hosts ([`HostSpec`], with
//! the client hosts' addresses and next hops and the server hosts' addresses) and the
//! whole [`FileTestbed`].
//!
//! Owns: these plain types and the client address arithmetic ([`ClientAddrs`]). Must
//! not: parse (see the `parse` module) or reach a host (see the `hosts` module).

use crate::params::topology::Topology;
use crate::testbed::launcher::Launcher;
use proto::Family;
use std::net::IpAddr;

/// One role's host as the file describes it.
#[derive(Debug, Clone)]
pub struct HostSpec {
    pub launcher: Launcher,
    pub interface: Option<String>,
    /// Two-port tester mode: `interface` is moved into a namespace of the role's own
    /// for the run (see [`crate::testbed::ports`]).
    pub move_interface: bool,
}

/// Client source addresses: an explicit list, or a prefix (client i = base + i).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientAddrs {
    pub list: Vec<IpAddr>,
    /// (base, prefix length) per family.
    pub prefix: Vec<(IpAddr, u8)>,
}

impl ClientAddrs {
    /// Client `i`'s address (1-based), if there is one in `family`.
    pub fn get(&self, family: Family, i: u32) -> Option<IpAddr> {
        let v4 = family == Family::V4;
        let listed: Vec<IpAddr> = self
            .list
            .iter()
            .copied()
            .filter(|a| a.is_ipv4() == v4)
            .collect();
        if !listed.is_empty() {
            return listed.get(i.checked_sub(1)? as usize).copied();
        }
        let (base, _) = self.prefix.iter().find(|(b, _)| b.is_ipv4() == v4)?;
        Some(match base {
            IpAddr::V4(b) => IpAddr::V4(u32::from(*b).checked_add(i)?.into()),
            IpAddr::V6(b) => IpAddr::V6(u128::from(*b).checked_add(i as u128)?.into()),
        })
    }

    /// How many clients it addresses in `family`.
    pub fn available(&self, family: Family) -> u32 {
        let v4 = family == Family::V4;
        let listed = self.list.iter().filter(|a| a.is_ipv4() == v4).count();
        if listed > 0 {
            return listed as u32;
        }
        match self.prefix.iter().find(|(b, _)| b.is_ipv4() == v4) {
            Some((_, len)) => {
                let bits = if v4 {
                    32 - *len as u32
                } else {
                    (128 - *len as u32).min(31)
                };
                ((1u64 << bits).saturating_sub(2)).min(crate::testbed::addr::MAX_CLIENTS as u64)
                    as u32
            }
            None => 0,
        }
    }

    /// The prefix length of `family`'s addresses (host routes for listed ones).
    pub(super) fn len(&self, family: Family) -> u8 {
        match self
            .prefix
            .iter()
            .find(|(b, _)| b.is_ipv4() == (family == Family::V4))
        {
            Some((_, l)) => *l,
            None if family == Family::V4 => 32,
            None => 128,
        }
    }
}

/// One host of the client role: how it is reached, its source addresses, its next hop
/// and the gateway interface its traffic comes in on.
#[derive(Debug, Clone)]
pub struct ClientHost {
    pub host: HostSpec,
    pub addrs: ClientAddrs,
    /// Its next hop (the gateway's address on its link), one per family.
    pub gateway_addrs: Vec<IpAddr>,
    /// `manage_addresses = true`: fwbench adds the client addresses.
    pub manage_addresses: bool,
    /// The gateway's interface this host is cabled to (`gateway_interface`; absent: the
    /// [gateway]'s `interface`).
    pub gateway_interface: Option<String>,
}

/// One host of the server role: how it is reached (`None` on an input testbed: the
/// gateway's host) and its address per family.
#[derive(Debug, Clone)]
pub struct ServerHost {
    pub host: Option<HostSpec>,
    pub addrs: Vec<IpAddr>,
}

#[derive(Debug)]
pub struct FileTestbed {
    pub name: String,
    /// The file it came from, for messages.
    pub path: String,
    pub topology: Topology,
    /// The client role's hosts: one (`[client]`) or several (`[[client]]` tables).
    pub clients: Vec<ClientHost>,
    pub gateway: Option<HostSpec>,
    /// The server role's hosts: one (`[server]`) or several (`[[server]]`).
    pub servers: Vec<ServerHost>,
    /// `gateway = "external"`: an appliance with no agent (engine none only).
    pub external_gateway: bool,
    /// A moved server port: its next hops (the DUT's address on the server's link).
    pub server_gateway_addrs: Vec<IpAddr>,
    /// A moved server port: `manage_addresses = true` on [server].
    pub server_manage: bool,
    /// Ports moved for the run (after [`FileTestbed::prepare`]).
    pub held: Vec<crate::testbed::ports::Held>,
}

/// One host of a testbed file with its role, for listings and messages.
pub struct RoleHostRef<'a> {
    pub role: &'static str,
    /// Which host of the role (0-based).
    pub index: usize,
    /// `client`, or `client#2` for the second of several `[[client]]` hosts.
    pub label: String,
    pub host: &'a HostSpec,
}

/// How a role's host is named in messages: `client`, or `client#N` (1-based) when the
/// role has several hosts.
pub fn role_label(role: &str, index: usize, of: usize) -> String {
    if of > 1 {
        format!("{role}#{}", index + 1)
    } else {
        role.to_string()
    }
}
