//! What a [`FileTestbed`] does with its hosts beyond the [`Testbed`](crate::testbed::Testbed)
//! seam: lists them with their roles, runs commands there through their launchers,
//! reaches each once before a run (the binary cached, a crashed run's leftovers
//! undone) and holds the two-port tester mode's ports.
//!
//! Owns: these operations and giving hosts back on drop (ports first, then the shared
//! SSH connections). Must not: re-address a host's interface unless the file says
//! `manage_addresses = true` (that is `ensure_clients`, in the `testbed` module).

use super::spec::{role_label, ClientHost, FileTestbed, HostSpec, RoleHostRef, ServerHost};
use crate::error::usage;
use crate::testbed::bounded::shown;
use crate::testbed::launcher::{Agent, Launcher};
use crate::testbed::remote;
use anyhow::Result;
use proto::Family;
use std::net::IpAddr;

impl FileTestbed {
    /// Its hosts with their roles: the client hosts, the gateway, the server hosts.
    pub fn hosts(&self) -> Vec<RoleHostRef<'_>> {
        let n = self.clients.len();
        let mut v: Vec<RoleHostRef> = self
            .clients
            .iter()
            .enumerate()
            .map(|(i, c)| RoleHostRef {
                role: "client",
                index: i,
                label: role_label("client", i, n),
                host: &c.host,
            })
            .collect();
        v.extend(self.gateway.as_ref().map(|g| RoleHostRef {
            role: "gateway",
            index: 0,
            label: "gateway".into(),
            host: g,
        }));
        let n = self.servers.len();
        v.extend(self.servers.iter().enumerate().filter_map(|(i, s)| {
            Some(RoleHostRef {
                role: "server",
                index: i,
                label: role_label("server", i, n),
                host: s.host.as_ref()?,
            })
        }));
        v
    }

    /// The first client host (a file has at least one).
    pub(super) fn client(&self) -> &ClientHost {
        &self.clients[0]
    }

    /// Client host `index` (the first when out of range).
    pub(super) fn client_at(&self, index: u32) -> &ClientHost {
        self.clients
            .get(index as usize)
            .unwrap_or_else(|| self.client())
    }

    /// Server host `index` (the first when out of range; a file has at least one).
    pub(super) fn server_at(&self, index: u32) -> &ServerHost {
        self.servers.get(index as usize).unwrap_or(&self.servers[0])
    }

    /// Whether the file addresses clients in `family` (on its first client host).
    pub fn has_clients(&self, family: Family) -> bool {
        self.client().addrs.available(family) > 0
    }

    /// The gateway interface client host `c`'s traffic comes in on.
    pub fn ingress_of<'a>(&'a self, c: &'a ClientHost) -> &'a str {
        c.gateway_interface
            .as_deref()
            .or(self.gateway.as_ref().and_then(|g| g.interface.as_deref()))
            .unwrap_or("")
    }

    /// The launcher of `role`: inside its port's namespace once the port is held.
    pub fn role_launcher(&self, role: &str, host: &HostSpec) -> Launcher {
        match self.held.iter().find(|h| h.role == role) {
            Some(h) => crate::testbed::ports::inside(&host.launcher, h.holder),
            None => host.launcher.clone(),
        }
    }

    /// Run `args` on a host through its launcher; its stdout.
    pub fn run_on(&self, host: &HostSpec, args: &[&str], input: Option<&str>) -> Result<String> {
        self.run_with(&host.launcher, args, input)
    }

    /// Run `args` through `launcher`; its stdout.
    pub fn run_with(&self, l: &Launcher, args: &[&str], input: Option<&str>) -> Result<String> {
        l.run(args, input, l.timeout)
    }

    /// Reach every host and make sure it has this binary: a host that cannot be
    /// reached, refuses the key or cannot take the binary is bad input (exit 2).
    /// Then clean up after a crashed run on each host (its crash markers), and start
    /// an agent through each launcher of the user's (not a namespace's, not this
    /// machine's): one that is not an fwbench agent is bad input too.
    pub fn prepare(&self) -> Result<()> {
        let mut seen = vec![];
        for r in self.hosts() {
            let (role, h) = (&r.label, r.host);
            let exe = h.launcher.fwbench_exe().map_err(|e| {
                usage(format!(
                    "{}: {role} host {}: {e:#}",
                    self.path, h.launcher.host
                ))
            })?;
            if seen.contains(&h.launcher.prefix) {
                continue;
            }
            seen.push(h.launcher.prefix.clone());
            // Only where a marker is (the common case costs one shell, not a fwbench).
            let script = format!(
                "if ls {}/*.json >/dev/null 2>&1; then exec \"$0\" testbed cleanup-host; fi",
                crate::host::marker::DIR
            );
            let out = self
                .run_on(h, &["sh", "-c", &script, &exe], None)
                .map_err(|e| usage(format!("{}: {role} host: {e:#}", self.path)))?;
            for line in out.lines() {
                eprintln!("fwbench: {role} host: {}", shown(line));
            }
            // A launcher of the user's that runs commands but gives no agent's stdio (a
            // wrapper printing on stdout, a forced command) is found now, before any
            // trial: an agent says hello and goes.
            if h.launcher.remote.is_some() {
                Agent::spawn(&h.launcher, r.role, None)
                    .and_then(Agent::teardown)
                    .map_err(|e| usage(format!("{}: {role} host: {e:#}", self.path)))?;
            }
        }
        Ok(())
    }

    /// Move the two-port roles' interfaces into their namespaces (once; a role with
    /// a moved port has one host).
    pub fn hold_ports(&mut self) -> Result<()> {
        if !self.held.is_empty() {
            return Ok(());
        }
        // Every port is there before any moves: a typo changes nothing.
        for r in self.hosts() {
            let h = r.host;
            if let Some(dev) = h.interface.as_deref().filter(|_| h.move_interface) {
                self.run_on(h, &["ip", "link", "show", "dev", dev], None)
                    .map_err(|e| {
                        usage(format!(
                            "{}: {} interface {dev} on {}: {e:#}",
                            self.path, r.role, h.launcher.place
                        ))
                    })?;
            }
        }
        let mut held = vec![];
        for r in self.hosts() {
            let h = r.host;
            let Some(dev) = h.interface.clone().filter(|_| h.move_interface) else {
                continue;
            };
            let spec = self.hold_spec(r.role, dev);
            held.push(
                crate::testbed::ports::start(&h.launcher, &spec)
                    .map_err(|e| usage(format!("{}: {e:#}", self.path)))?,
            );
        }
        self.held = held;
        Ok(())
    }

    /// What the keeper of `role`'s port does.
    pub(super) fn hold_spec(
        &self,
        role: &str,
        interface: String,
    ) -> crate::testbed::ports::HoldSpec {
        let (manage, gateways, addrs) = if role == "client" {
            // Client addresses are added by `ensure_clients` (inside the namespace).
            let c = self.client();
            (c.manage_addresses, &c.gateway_addrs, vec![])
        } else {
            let host = |a: &IpAddr| format!("{a}/{}", if a.is_ipv4() { 32 } else { 128 });
            (
                self.server_manage,
                &self.server_gateway_addrs,
                self.servers[0].addrs.iter().map(host).collect(),
            )
        };
        crate::testbed::ports::HoldSpec {
            role: role.to_string(),
            interface,
            addrs: manage.then_some(addrs),
            gateways: gateways.iter().map(|g| g.to_string()).collect(),
        }
    }
}

impl Drop for FileTestbed {
    fn drop(&mut self) {
        // Ports go back first (their keepers may use the shared SSH connections).
        self.held.clear();
        for r in self.hosts() {
            remote::close_shared(&r.host.launcher.prefix);
        }
        remote::remove_control_dir();
    }
}
