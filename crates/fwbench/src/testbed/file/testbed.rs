//! [`FileTestbed`] behind the [`Testbed`] seam: the launcher of each role's host,
//! the addresses a trial uses (client i round-robin over the client hosts), the
//! checks of a trial against the file, the gateway's ingress interfaces, metadata.
//!
//! Owns: answering the seam from what the file says. Must not: reach a host except
//! through [`FileTestbed::run_on`] / [`FileTestbed::run_with`].

use super::spec::{role_label, FileTestbed};
use crate::error::usage;
use crate::params::topology::Topology;
use crate::testbed::launcher::Launcher;
use crate::testbed::spread;
use crate::testbed::{Host, Testbed};
use anyhow::{anyhow, Context, Result};
use proto::Family;
use std::net::IpAddr;

fn of_family(a: &[IpAddr], family: Family) -> Option<IpAddr> {
    a.iter()
        .copied()
        .find(|x| x.is_ipv4() == (family == Family::V4))
}

fn family_name(f: Family) -> &'static str {
    match f {
        Family::V4 => "IPv4",
        Family::V6 => "IPv6",
    }
}

impl Testbed for FileTestbed {
    fn name(&self) -> &str {
        &self.name
    }

    fn gateway_is_external(&self) -> bool {
        self.external_gateway
    }

    fn bring_up(&mut self) -> Result<()> {
        self.hold_ports()
    }

    /// Each host as probed now (a host that does not answer is recorded with what is
    /// known: its role and place); several hosts of a role as `client#1`, `client#2` ….
    fn host_metadata(&self) -> Vec<store::RoleHost> {
        let script = crate::testbed::meta::probe_script();
        let mut out = vec![];
        for r in self.hosts() {
            let h = r.host;
            let dev = h.interface.as_deref();
            let text = self
                .run_on(
                    h,
                    &[
                        "sh",
                        "-c",
                        &script,
                        "sh",
                        dev.unwrap_or(""),
                        if h.move_interface { "moved" } else { "" },
                    ],
                    None,
                )
                .unwrap_or_else(|e| {
                    tracing::warn!("{} host: metadata: {e:#}", r.label);
                    String::new()
                });
            let mut m = crate::testbed::meta::parse(&r.label, &h.launcher.place, dev, &text);
            if let Some(p) = self.held.iter().find(|p| p.role == r.role) {
                m.port = Some(p.orig.describe());
            }
            out.push(m);
        }
        if self.external_gateway {
            out.insert(
                self.clients.len(),
                store::RoleHost {
                    role: "gateway".into(),
                    place: crate::testbed::EXTERNAL_GATEWAY.into(),
                    ..Default::default()
                },
            );
        }
        out
    }

    fn topology(&self) -> Topology {
        self.topology
    }

    fn launcher(&self, host: Host) -> Option<Launcher> {
        self.launcher_at(host, 0)
    }

    fn hosts_of(&self, role: Host) -> u32 {
        match role {
            Host::Client => self.clients.len() as u32,
            Host::Gateway => 1,
            Host::Server => self.servers.len() as u32,
        }
    }

    fn launcher_at(&self, host: Host, index: u32) -> Option<Launcher> {
        match host {
            Host::Client => {
                let c = self.clients.get(index as usize)?;
                Some(self.role_launcher("client", &c.host))
            }
            Host::Gateway => self
                .gateway
                .as_ref()
                .filter(|_| index == 0)
                .map(|g| g.launcher.clone()),
            Host::Server => match &self.servers.get(index as usize)?.host {
                Some(s) => Some(self.role_launcher("server", s)),
                None => self.gateway.as_ref().map(|g| g.launcher.clone()),
            },
        }
    }

    fn server_addr(&self, family: Family) -> IpAddr {
        self.server_addr_at(family, 0)
    }

    fn server_addr_at(&self, family: Family, host: u32) -> IpAddr {
        of_family(&self.server_at(host).addrs, family)
            .unwrap_or_else(|| crate::testbed::addr::server(family))
    }

    /// Client `i` of the trial: with several client hosts, round-robin over them
    /// ([`spread::client_host`]).
    fn client_addr(&self, family: Family, i: u32) -> IpAddr {
        let (host, local) = spread::client_host(i, self.clients.len() as u32);
        self.client_addr_at(family, host, local)
    }

    fn client_addr_at(&self, family: Family, host: u32, i: u32) -> IpAddr {
        self.client_at(host)
            .addrs
            .get(family, i)
            .unwrap_or_else(|| crate::testbed::addr::client(family, i))
    }

    fn gateway_addr(&self, family: Family) -> IpAddr {
        of_family(&self.client().gateway_addrs, family).unwrap_or_else(|| self.server_addr(family))
    }

    fn check_trial(&self, family: Family, clients: u32) -> Result<()> {
        let f = family_name(family);
        let (nc, ns) = (self.clients.len(), self.servers.len());
        for (i, s) in self.servers.iter().enumerate() {
            if of_family(&s.addrs, family).is_none() {
                return Err(usage(format!(
                    "{}: {}.address has no {f} address, but a trial uses {f}",
                    self.path,
                    role_label("server", i, ns)
                )));
            }
        }
        for (i, c) in self.clients.iter().enumerate() {
            let role = role_label("client", i, nc);
            if self.topology != Topology::Direct && of_family(&c.gateway_addrs, family).is_none() {
                return Err(usage(format!(
                    "{}: {role}.gateway_address has no {f} address, but a trial uses {f}",
                    self.path
                )));
            }
            let have = c.addrs.available(family);
            let wants = spread::even(clients, nc as u32, i as u32).max(1);
            if wants > have {
                let of = if nc > 1 {
                    format!(" ({wants} of them on {role})")
                } else {
                    String::new()
                };
                return Err(usage(format!(
                    "{}: a trial uses {clients} clients{of}, the file gives {have} {f} client address{}{}",
                    self.path,
                    if have == 1 { "" } else { "es" },
                    if nc > 1 { format!(" on {role}") } else { String::new() },
                )));
            }
        }
        Ok(())
    }

    /// With `manage_addresses = true`, add each client host's share of the client
    /// addresses on its interface (idempotent); otherwise change nothing on the host.
    fn ensure_clients(&self, n: u32) -> Result<()> {
        let hosts = self.clients.len() as u32;
        for (h, c) in self.clients.iter().enumerate() {
            if !c.manage_addresses {
                continue;
            }
            let dev = c.host.interface.as_deref().unwrap_or("");
            let share = spread::even(n, hosts, h as u32).max(1);
            let mut script = String::new();
            for family in [Family::V4, Family::V6] {
                let len = c.addrs.len(family);
                for i in 1..=share.min(c.addrs.available(family)) {
                    if let Some(a) = c.addrs.get(family, i) {
                        let nodad = if family == Family::V6 { " nodad" } else { "" };
                        script += &format!("addr replace {a}/{len} dev {dev}{nodad}\n");
                    }
                }
            }
            let l = self.role_launcher("client", &c.host);
            self.run_with(&l, &["ip", "-b", "-"], Some(&script))
                .with_context(|| format!("adding client addresses on {}", c.host.launcher.place))?;
        }
        Ok(())
    }

    fn client_interface(&self, host: u32) -> &str {
        self.client_at(host).host.interface.as_deref().unwrap_or("")
    }

    fn gateway_ingress(&self) -> &str {
        self.ingress_of(self.client())
    }

    /// Every gateway interface a client host's traffic comes in on, once each.
    fn gateway_ingresses(&self) -> Vec<&str> {
        let mut v: Vec<&str> = vec![];
        for c in &self.clients {
            let i = self.ingress_of(c);
            if !v.contains(&i) {
                v.push(i);
            }
        }
        v
    }

    /// The MAC of the gateway interface client host `host` is cabled to (or, direct,
    /// of the server's interface).
    fn next_hop_mac(&self, host: u32) -> Result<String> {
        if self.external_gateway {
            return Err(usage(format!(
                "{}: the raw sender needs the next hop's MAC address, which an external \
                 gateway does not tell (use the UDP sender)",
                self.path
            )));
        }
        let server = self.servers[0].host.as_ref();
        let (h, dev) = match (&self.gateway, server) {
            (Some(g), _) => (g, Some(self.ingress_of(self.client_at(host)).to_string())),
            (None, Some(_)) if self.servers.len() > 1 => {
                return Err(usage(format!(
                    "{}: a raw sender on a direct testbed writes to one next hop, but the \
                     server role has {} hosts (use the UDP sender)",
                    self.path,
                    self.servers.len()
                )))
            }
            (None, Some(s)) => (s, s.interface.clone()),
            (None, None) => return Err(anyhow!("{}: no next hop", self.path)),
        };
        let dev = dev.filter(|d| !d.is_empty()).ok_or_else(|| {
            usage(format!(
                "{}: the raw sender needs server.interface (the client's next hop)",
                self.path
            ))
        })?;
        let out = self.run_on(h, &["ip", "-br", "link", "show", "dev", &dev], None)?;
        out.split_whitespace()
            .nth(2)
            .filter(|m| m.len() == 17 && m.matches(':').count() == 5)
            .map(str::to_owned)
            .ok_or_else(|| {
                anyhow!(
                    "no MAC address in `ip -br link show {dev}` on {}: {out}",
                    h.launcher.place
                )
            })
    }

    fn describe(&self) -> Result<String> {
        let mut out = format!(
            "testbed {} ({}, from {})\n",
            self.name, self.topology, self.path
        );
        for r in self.hosts() {
            let h = r.host;
            let ingress = match (r.role, self.clients.get(r.index)) {
                ("client", Some(c)) if c.gateway_interface.is_some() => {
                    format!(", into the gateway on {}", self.ingress_of(c))
                }
                _ => String::new(),
            };
            out += &format!(
                "  {}: {}{}{ingress}{}\n",
                r.label,
                h.launcher.place,
                h.interface
                    .as_deref()
                    .map(|i| format!(", interface {i}"))
                    .unwrap_or_default(),
                if h.move_interface {
                    " (moved into a namespace of its own for the run)"
                } else {
                    ""
                }
            );
        }
        if self.external_gateway {
            out += "  gateway: external (no agent, no counters)\n";
        }
        for p in &self.held {
            out += &format!(
                "  {} port {}: found with {}; given back so after the run\n",
                p.role,
                p.interface,
                p.orig.describe()
            );
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{err, parsed, GOOD, SPREAD};
    use super::*;

    #[test]
    fn a_three_host_file() {
        let t = parsed("lab.toml", GOOD);
        assert_eq!(t.name, "lab");
        assert_eq!(t.topology, Topology::Forward);
        let c = t.launcher(Host::Client).unwrap();
        assert!(c.remote.is_some());
        assert_eq!(c.host, "root@198.19.254.2");
        assert!(c.prefix.iter().any(|a| a == "ControlMaster=auto"));
        let g = t.launcher(Host::Gateway).unwrap();
        assert!(g.remote.is_none());
        assert_eq!(g.place, "netns gw");
        assert_eq!(t.launcher(Host::Server).unwrap().prefix, ["env"]);
        assert_eq!(t.client_addr(Family::V4, 3).to_string(), "198.18.1.3");
        assert_eq!(t.client_addr(Family::V6, 2).to_string(), "2001:2:0:1::c:2");
        assert_eq!(t.gateway_addr(Family::V6).to_string(), "2001:2:0:1::1");
        assert_eq!(t.server_addr(Family::V4).to_string(), "198.19.0.2");
        assert!(!t.clients[0].manage_addresses);
        let e = t.check_trial(Family::V6, 1).unwrap_err().to_string();
        assert!(e.contains("no IPv6"), "{e}");
    }

    #[test]
    fn direct_and_input() {
        let direct = GOOD.replace("forward", "direct").replace(
            "[gateway]\nlauncher = [\"ip\", \"netns\", \"exec\", \"gw\"]\ninterface = \"g0\"\n",
            "",
        );
        let t = parsed("d.toml", &direct);
        assert!(t.launcher(Host::Gateway).is_none());
        let e = err(&GOOD.replace("forward", "direct"));
        assert!(e.contains("a direct testbed has no gateway"), "{e}");
        let input = GOOD
            .replace("forward", "input")
            .replace("launcher = \"local\"\n", "");
        let t = parsed("i.toml", &input);
        assert_eq!(t.launcher(Host::Server).unwrap().place, "netns gw");
    }

    #[test]
    fn listed_client_addresses_limit_the_clients() {
        let t = parsed(
            "l.toml",
            &GOOD.replace(
                "prefix = [\"198.18.1.0/16\", \"2001:2:0:1::c:0/64\"]",
                "addresses = [\"198.18.0.2\", \"198.18.0.3\"]",
            ),
        );
        assert_eq!(t.client_addr(Family::V4, 2).to_string(), "198.18.0.3");
        let e = t.check_trial(Family::V4, 3).unwrap_err().to_string();
        assert!(e.contains("gives 2"), "{e}");
        t.check_trial(Family::V4, 2).unwrap();
    }

    #[test]
    fn external_gateway_and_moved_ports() {
        let two = GOOD
            .replace(
                "[gateway]\nlauncher = [\"ip\", \"netns\", \"exec\", \"gw\"]\ninterface = \"g0\"\n",
                "",
            )
            .replace(
                "topology = \"forward\"",
                "topology = \"forward\"\ngateway = \"external\"",
            )
            .replace(
                "interface = \"c0\"",
                "interface = \"c0\"\nmove_interface = true",
            )
            .replace(
                "launcher = \"local\"\n",
                "launcher = \"local\"\ninterface = \"s0\"\nmove_interface = true\n\
                 gateway_address = \"198.19.0.1\"\nmanage_addresses = true\n",
            );
        let t = parsed("two.toml", &two);
        assert!(t.external_gateway && t.gateway_is_external());
        assert!(t.launcher(Host::Gateway).is_none());
        assert!(t.clients[0].host.move_interface);
        assert!(t.servers[0].host.as_ref().unwrap().move_interface);
        assert!(t.server_manage);
        assert_eq!(t.server_gateway_addrs[0].to_string(), "198.19.0.1");
        let spec = t.hold_spec("server", "s0".into());
        assert_eq!(spec.addrs, Some(vec!["198.19.0.2/32".to_string()]));
        assert_eq!(spec.gateways, ["198.19.0.1"]);
        // The client's addresses come from ensure_clients; unmanaged: none given.
        assert_eq!(t.hold_spec("client", "c0".into()).addrs, None);
        let e = err(&two.replace("\"external\"", "\"appliance\""));
        assert!(e.starts_with("tb.toml:3:11: gateway:"), "{e}");
        let e = err(&two.replace("forward", "input"));
        assert!(e.contains("topology \"forward\" only"), "{e}");
        // gateway_address on [server] only with a moved port.
        let e = err(&two.replace("interface = \"s0\"\nmove_interface = true\n", ""));
        assert!(e.contains("server.gateway_address: not a field"), "{e}");
        let e = err(&GOOD.replace(
            "launcher = \"local\"\n",
            "launcher = \"local\"\nmove_interface = true\n",
        ));
        assert!(
            e.contains("server.move_interface: needs the interface"),
            "{e}"
        );
    }

    #[test]
    fn several_hosts_in_the_client_and_server_roles() {
        let t = parsed("lab.toml", SPREAD);
        assert_eq!((t.hosts_of(Host::Client), t.hosts_of(Host::Server)), (2, 2));
        assert_eq!(t.hosts_of(Host::Gateway), 1);
        let c2 = t.launcher_at(Host::Client, 1).unwrap();
        assert_eq!(c2.host, "root@198.19.254.18");
        assert_eq!(t.launcher(Host::Client).unwrap().host, "root@198.19.254.2");
        assert_eq!(
            t.launcher_at(Host::Server, 1).unwrap().host,
            "root@198.19.254.22"
        );
        assert!(t.launcher_at(Host::Client, 2).is_none());
        assert!(t.launcher_at(Host::Gateway, 1).is_none());
        // Each host's own addresses; the trial's clients round-robin over the hosts.
        assert_eq!(
            t.client_addr_at(Family::V4, 1, 2).to_string(),
            "198.18.200.12"
        );
        let trial: Vec<String> = (1..=4)
            .map(|i| t.client_addr(Family::V4, i).to_string())
            .collect();
        assert_eq!(
            trial,
            ["198.18.1.1", "198.18.200.11", "198.18.1.2", "198.18.200.12"]
        );
        assert_eq!(t.server_addr_at(Family::V4, 1).to_string(), "198.19.0.3");
        assert_eq!(t.gateway_ingresses(), ["g0", "g2"]);
        assert_eq!(t.gateway_ingress(), "g0");
        let labels: Vec<String> = t.hosts().iter().map(|r| r.label.clone()).collect();
        assert_eq!(
            labels,
            ["client#1", "client#2", "gateway", "server#1", "server#2"]
        );
        let d = t.describe().unwrap();
        assert!(
            d.contains("client#2: ssh") && d.contains("into the gateway on g2"),
            "{d}"
        );
        // Checked per host: IPv6 is missing on both; too many clients for one host.
        let e = t.check_trial(Family::V6, 1).unwrap_err().to_string();
        assert!(e.contains("server#1.address has no IPv6"), "{e}");
        t.check_trial(Family::V4, 500).unwrap();
        let e = t.check_trial(Family::V4, 600).unwrap_err().to_string();
        assert!(e.contains("(300 of them on client#1)"), "{e}");
        // A one-host file is the same as before: no labels with numbers.
        let one = parsed("lab.toml", GOOD);
        assert_eq!(one.hosts_of(Host::Client), 1);
        assert_eq!(one.hosts()[0].label, "client");
    }
}
