//! Where a trial runs: the [`Testbed`] seam. A testbed has up to three hosts (client,
//! gateway, server), says how to start a program on each ([`Launcher`]: a command
//! prefix), which addresses and interfaces the traffic uses, and tears itself down.
//!
//! The local namespace testbed ([`netns`]) is the first implementation; a testbed of
//! hosts reached over SSH implements the same trait. Nothing outside this module knows
//! how a host is reached (`ip netns exec`, `ssh`). The client and server roles may each
//! have several hosts ([`Testbed::hosts_of`]; a testbed file's `[[client]]` tables):
//! [`spread`] says how a trial is shared out over them.

pub mod addr;
pub mod bounded;
pub mod check;
pub mod file;
pub mod launcher;
pub mod meta;
pub mod netns;
pub mod ports;
pub mod remote;
pub mod spread;

use crate::params::topology::Topology;
use crate::testbed::launcher::Launcher;
use anyhow::Result;
use proto::Family;
use std::net::IpAddr;

/// The placement of a gateway with no agent (`gateway = "external"` in a testbed
/// file): the report and verdicts say so instead of showing counters.
pub const EXTERNAL_GATEWAY: &str = "external gateway: no counters";

/// A host of the testbed: where an agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    Client,
    Gateway,
    Server,
}

/// One metric sample of a trial with the role and the role's host (0-based) it came
/// from (an agent samples its host while the traffic runs).
#[derive(Debug, Clone)]
pub struct Sampled {
    pub role: &'static str,
    pub host: u32,
    pub sample: proto::MetricSample,
}

/// A testbed that is up: its hosts, addresses and interfaces.
pub trait Testbed {
    /// The testbed's name (namespaces, markers, messages).
    fn name(&self) -> &str;
    /// Its shape; a trial of another topology cannot run on it.
    fn topology(&self) -> Topology;
    /// How to start a program on `host` (the first, when its role has several); `None`
    /// when the testbed has no such host (a `direct` testbed has no gateway). In
    /// `input`, the server is the gateway.
    fn launcher(&self, host: Host) -> Option<Launcher>;
    /// How many hosts take `role`: the client and the server role may have several
    /// (one trial spread over them, [`spread`]); the gateway has one.
    fn hosts_of(&self, _role: Host) -> u32 {
        1
    }
    /// How to start a program on the `index`-th host of `role` (0: [`Testbed::launcher`]).
    fn launcher_at(&self, role: Host, index: u32) -> Option<Launcher> {
        if index == 0 {
            self.launcher(role)
        } else {
            None
        }
    }
    /// The server's address (what clients send to); of the first server host.
    fn server_addr(&self, family: Family) -> IpAddr;
    /// The address of server host `host` (0-based).
    fn server_addr_at(&self, family: Family, _host: u32) -> IpAddr {
        self.server_addr(family)
    }
    /// Client `i`'s own source address (1-based; with several client hosts, on the host
    /// [`spread::client_host`] puts it).
    fn client_addr(&self, family: Family, i: u32) -> IpAddr;
    /// Source address `i` (1-based) of client host `host` (0-based).
    fn client_addr_at(&self, family: Family, _host: u32, i: u32) -> IpAddr {
        self.client_addr(family, i)
    }
    /// The gateway's address on the client side (the clients' next hop).
    fn gateway_addr(&self, family: Family) -> IpAddr;
    /// Whether a trial of `family` with `clients` clients fits this testbed; bad
    /// input otherwise. Topology is checked by the caller.
    fn check_trial(&self, _family: Family, _clients: u32) -> Result<()> {
        Ok(())
    }
    /// Give clients 1..=n their source addresses (idempotent).
    fn ensure_clients(&self, n: u32) -> Result<()>;
    /// Give the server destinations 1..n (`addr::destination`) besides its own address
    /// (idempotent; a spread flood, `--dsts`). Default: refused, the testbed cannot.
    fn ensure_destinations(&self, n: u32) -> Result<()> {
        if n <= 1 {
            return Ok(());
        }
        Err(crate::error::usage(format!(
            "--dsts {n}: this testbed cannot give its server more addresses (use a local testbed)"
        )))
    }
    /// Client host `host`'s interface toward its next hop (the raw sender writes there).
    fn client_interface(&self, host: u32) -> &str;
    /// The gateway's interface facing the (first host's) clients: its ingress for test
    /// traffic.
    fn gateway_ingress(&self) -> &str;
    /// Every gateway interface test traffic comes in on (client hosts may be cabled to
    /// different ones); each once.
    fn gateway_ingresses(&self) -> Vec<&str> {
        vec![self.gateway_ingress()]
    }
    /// Server host `host`'s interface test traffic arrives on (`--sink xdp` attaches
    /// there); `None` where the testbed does not know it.
    fn server_interface(&self, _host: u32) -> Option<&str> {
        None
    }
    /// MAC address of client host `host`'s next hop (for the raw-frame sender).
    fn next_hop_mac(&self, host: u32) -> Result<String>;
    /// Its hosts with their interfaces and addresses, for people.
    fn describe(&self) -> Result<String>;
    /// The gateway is an appliance with no agent: fwbench installs nothing there and
    /// reads no counters (`gateway = "external"` in a testbed file).
    fn gateway_is_external(&self) -> bool {
        false
    }
    /// Metadata of each role's host (kernel, CPU, NIC, offloads, sysctls), when the
    /// testbed knows its hosts (testbed files); recorded with the run.
    fn host_metadata(&self) -> Vec<store::RoleHost> {
        vec![]
    }
    /// Make what the testbed needs for trials, once, after the trials were checked
    /// (a testbed file moves its two-port interfaces here).
    fn bring_up(&mut self) -> Result<()> {
        Ok(())
    }
    /// Make the gateway new again after a trial left state that cannot be removed
    /// (a legacy x_tables table), keeping the testbed's name and addresses. `Ok(false)`:
    /// the testbed is not fwbench's to rebuild (a testbed file's hosts): later trials
    /// are marked instead.
    fn rebuild(&self) -> Result<bool> {
        Ok(false)
    }
}

/// Where the client of trial `p` aims its traffic: the server, or the gateway's
/// client-side address when the model's gateway forwards it there (destination NAT,
/// model `dnat`; engine none installs no rule, so its client aims at the server). The
/// server listens on its own address either way.
pub fn aim_addr(tb: &dyn Testbed, p: &crate::params::TrialParams) -> IpAddr {
    if p.model.aims_at_gateway() && p.engine != firewall::Engine::None {
        tb.gateway_addr(p.family)
    } else {
        tb.server_addr(p.family)
    }
}
