//! The local namespace testbed: client, gateway and server network namespaces
//! joined by veth pairs, addressed from 198.18.0.0/15 and 2001:2::/48 only.
//!
//! ```text
//! forward:  [fwb-N-cli] c0 ──── g0 [fwb-N-gw] g1 ──── s0 [fwb-N-srv]
//! direct:   [fwb-N-cli] c0 ─────────────────────────── s0 [fwb-N-srv]   (null firewall)
//! input:    [fwb-N-cli] c0 ──── g0 [fwb-N-gw: server role inside, rules in INPUT]
//! proxy:    the forward testbed with IP forwarding off: a TCP relay in the gateway
//!           (seed 003's application proxy) carries the connection workloads
//! ```
//!
//! Interfaces are created inside their namespaces, so their names never collide
//! between testbeds; namespace names carry the testbed name.

use crate::error::usage;
use crate::params::topology::Topology;
use crate::process::Cmd;
use crate::testbed::addr;
use crate::testbed::launcher::Launcher;
use crate::testbed::{Host, Testbed};
use anyhow::{bail, Context, Result};
use proto::Family;
use std::net::IpAddr;
use std::process::{Command, Stdio};

pub const NS_PREFIX: &str = "fwb-";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetnsTestbed {
    pub name: String,
    pub topology: Topology,
}

/// Run `ip` with arguments; an error carries argv, status and stderr.
pub fn ip(args: &[&str]) -> Result<String> {
    run_cmd("ip", args, None)
}

/// Run `prog args…` (with `stdin` as its input) to completion; its stdout on exit 0,
/// otherwise a [`ProcessError`](crate::process::ProcessError) with argv, status and stderr.
pub fn run_cmd(prog: &str, args: &[&str], stdin: Option<&str>) -> Result<String> {
    let cmd = Cmd::new(prog, args);
    let cmd = match stdin {
        Some(text) => cmd.input(text),
        None => cmd,
    };
    Ok(cmd.run()?.stdout)
}

/// Names must fit in namespace names and be safe in commands.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 24
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-');
    if !ok {
        return Err(usage(format!(
            "--name '{name}': testbed names are 1-24 characters of a-z, 0-9 and '-'"
        )));
    }
    Ok(())
}

fn existing_namespaces() -> Result<Vec<String>> {
    Ok(ip(&["netns", "list"])?
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect())
}

/// What the namespaces of a testbed make of it.
#[derive(Debug, PartialEq)]
enum Found {
    Absent,
    Whole(Topology),
    /// Why not whole, in words.
    Incomplete(String),
}

/// The testbed `name` from its namespaces. Client and gateway alone are an `input`
/// testbed only if the gateway holds the server's address (input's server lives
/// there); otherwise they are what is left of a forward testbed whose server namespace
/// was deleted.
fn survey(name: &str) -> Result<Found> {
    let have = existing_namespaces()?;
    let ns = |role: &str| format!("{NS_PREFIX}{name}-{role}");
    let has = |role: &str| have.contains(&ns(role));
    Ok(match (has("cli"), has("gw"), has("srv")) {
        (true, true, true) => Found::Whole(Topology::Forward),
        (true, false, true) => Found::Whole(Topology::Direct),
        (true, true, false) => {
            let lo = ip(&["-n", &ns("gw"), "-br", "addr", "show", "dev", "lo"])?;
            if serves_in_gateway(&lo) {
                Found::Whole(Topology::Input)
            } else {
                Found::Incomplete(format!(
                    "its server namespace {} is missing and its gateway {} does not hold \
                     the server's address 198.19.0.2 (a forward testbed whose server \
                     namespace was deleted, not an input one)",
                    ns("srv"),
                    ns("gw")
                ))
            }
        }
        (false, false, false) => Found::Absent,
        (cli, gw, srv) => {
            let missing: Vec<String> = [("cli", cli), ("gw", gw), ("srv", srv)]
                .iter()
                .filter(|(_, there)| !there)
                .map(|(role, _)| ns(role))
                .collect();
            Found::Incomplete(format!("namespace(s) {} missing", missing.join(", ")))
        }
    })
}

/// Whether `ip -br addr show dev lo` of a gateway lists input's server address (the
/// server lives in the gateway: `build` puts 198.19.0.2/32 on its `lo`).
fn serves_in_gateway(lo: &str) -> bool {
    lo.split_whitespace().any(|a| a == "198.19.0.2/32")
}

impl NetnsTestbed {
    pub fn client_ns(&self) -> String {
        format!("{NS_PREFIX}{}-cli", self.name)
    }
    pub fn gateway_ns(&self) -> Option<String> {
        match self.topology {
            Topology::Direct => None,
            _ => Some(format!("{NS_PREFIX}{}-gw", self.name)),
        }
    }
    /// Where the server role runs: its own namespace, or the gateway's (input).
    pub fn server_ns(&self) -> String {
        match self.topology {
            Topology::Input => format!("{NS_PREFIX}{}-gw", self.name),
            _ => format!("{NS_PREFIX}{}-srv", self.name),
        }
    }
    pub fn namespaces(&self) -> Vec<String> {
        let mut v = vec![self.client_ns()];
        v.extend(self.gateway_ns());
        if self.topology != Topology::Input {
            v.push(self.server_ns());
        }
        v
    }

    /// Find a testbed by name from the namespaces that exist; an incomplete one is an
    /// error that says what is missing.
    pub fn find(name: &str) -> Result<Option<NetnsTestbed>> {
        match survey(name)? {
            Found::Absent => Ok(None),
            Found::Whole(topology) => Ok(Some(NetnsTestbed {
                name: name.into(),
                topology,
            })),
            Found::Incomplete(why) => bail!(
                "testbed '{name}' is incomplete: {why}; remove it with `fwbench testbed \
                 down --name {name}`"
            ),
        }
    }

    /// Testbed `name` in a word for `testbed status`: its topology, or "incomplete"
    /// with what is missing.
    pub fn status(name: &str) -> String {
        match survey(name) {
            Ok(Found::Whole(topology)) => topology.to_string(),
            Ok(Found::Absent) => "gone".into(),
            Ok(Found::Incomplete(why)) => format!("incomplete: {why}"),
            Err(e) => format!("unknown: {e:#}"),
        }
    }

    /// Every testbed present on this host (by namespace name).
    pub fn list() -> Result<Vec<String>> {
        let mut names: Vec<String> = existing_namespaces()?
            .into_iter()
            .filter_map(|n| {
                let rest = n.strip_prefix(NS_PREFIX)?;
                let (name, _) = rest.rsplit_once('-')?;
                Some(name.to_owned())
            })
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Build the testbed. On failure, whatever was created is removed again.
    pub fn up(name: &str, topology: Topology) -> Result<NetnsTestbed> {
        check_name(name)?;
        if !NetnsTestbed::list()?.iter().all(|n| n != name) {
            return Err(usage(format!(
                "testbed '{name}' already exists (see `fwbench testbed status`)"
            )));
        }
        let tb = NetnsTestbed {
            name: name.into(),
            topology: topology.testbed(),
        };
        if let Err(e) = tb.build() {
            let _ = tb.down();
            return Err(e.context(format!("building testbed '{name}'")));
        }
        Ok(tb)
    }

    fn build(&self) -> Result<()> {
        for ns in self.namespaces() {
            ip(&["netns", "add", &ns])?;
            // No duplicate address detection: addresses are ours and usable at once.
            sysctl(
                &ns,
                &[
                    ("net.ipv6.conf.all.accept_dad", "0"),
                    ("net.ipv6.conf.default.accept_dad", "0"),
                ],
            )?;
            raise_limits(&ns)?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        let c = self.client_ns();
        let s = self.server_ns();
        let mut script_c = String::new();
        let mut script_s = String::new();
        match self.topology {
            Topology::Direct => {
                veth(&c, "c0", &s, "s0")?;
                script_c += "link set c0 up\n\
                             addr add 198.18.0.2/16 dev c0\n\
                             addr add 2001:2:0:1::2/64 dev c0 nodad\n\
                             route add 198.19.0.0/16 dev c0\n\
                             route add 2001:2:0:2::/64 dev c0\n";
                script_s += "link set s0 up\n\
                             addr add 198.19.0.2/16 dev s0\n\
                             addr add 2001:2:0:2::2/64 dev s0 nodad\n\
                             route add 198.18.0.2/32 dev s0\n\
                             route add 198.18.0.0/16 via 198.18.0.2 dev s0\n\
                             route add 2001:2:0:1::2/128 dev s0\n\
                             route add 2001:2:0:1::/64 via 2001:2:0:1::2 dev s0\n";
            }
            Topology::Forward | Topology::Input | Topology::Proxy => {
                let g = self.gateway_ns().expect("forward/input have a gateway");
                veth(&c, "c0", &g, "g0")?;
                script_c += "link set c0 up\n\
                             addr add 198.18.0.2/16 dev c0\n\
                             addr add 2001:2:0:1::2/64 dev c0 nodad\n\
                             route add 198.19.0.0/16 via 198.18.0.1\n\
                             route add 2001:2:0:2::/64 via 2001:2:0:1::1\n";
                // Client source addresses are routed via c0's own address, so the
                // gateway holds one neighbour entry for any number of clients (the
                // neighbour tables are shared with the host: see `raise_limits`).
                let mut script_g = format!(
                    "link set g0 up\n\
                     addr add 198.18.0.1/16 dev g0\n\
                     addr add 2001:2:0:1::1/64 dev g0 nodad\n\
                     {}",
                    client_routes("198.18.0.2", "2001:2:0:1::2")
                );
                if self.topology == Topology::Forward {
                    veth(&g, "g1", &s, "s0")?;
                    script_g += "link set g1 up\n\
                                 addr add 198.19.0.1/16 dev g1\n\
                                 addr add 2001:2:0:2::1/64 dev g1 nodad\n";
                    script_s += "link set s0 up\n\
                                 addr add 198.19.0.2/16 dev s0\n\
                                 addr add 2001:2:0:2::2/64 dev s0 nodad\n\
                                 route add 198.18.0.0/16 via 198.19.0.1\n\
                                 route add 2001:2:0:1::/64 via 2001:2:0:2::1\n";
                    sysctl(
                        &g,
                        &[
                            ("net.ipv4.ip_forward", "1"),
                            ("net.ipv6.conf.all.forwarding", "1"),
                        ],
                    )?;
                } else {
                    // The server lives in the gateway: its addresses are local there.
                    script_g += "addr add 198.19.0.2/32 dev lo\n\
                                 addr add 2001:2:0:2::2/128 dev lo\n";
                }
                run_cmd("ip", &["-n", &g, "-b", "-"], Some(&script_g))?;
            }
        }
        run_cmd("ip", &["-n", &c, "-b", "-"], Some(&script_c))?;
        if !script_s.is_empty() {
            run_cmd("ip", &["-n", &s, "-b", "-"], Some(&script_s))?;
        }
        Ok(())
    }

    /// Remove every namespace of the testbed (veths go with them). Idempotent.
    pub fn down(&self) -> Result<()> {
        let have = existing_namespaces()?;
        let mut first_err = None;
        for ns in [
            format!("{NS_PREFIX}{}-cli", self.name),
            format!("{NS_PREFIX}{}-gw", self.name),
            format!("{NS_PREFIX}{}-srv", self.name),
        ] {
            if have.contains(&ns) {
                if let Err(e) = ip(&["netns", "del", &ns]) {
                    first_err.get_or_insert(e);
                }
            }
        }
        // Their markers with them, before a new namespace takes a freed inode (a
        // rebuilt testbed's gateway would undo a killed agent's rule set in itself).
        for line in crate::host::marker::forget_gone_namespaces() {
            tracing::info!("{line}");
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// The client's interface toward the next hop.
pub const CLIENT_IF: &str = "c0";
/// The gateway's interface facing the clients (its ingress for test traffic).
pub const GATEWAY_IN_IF: &str = "g0";
/// The gateway's interface facing the server (topology forward).
pub const GATEWAY_OUT_IF: &str = "g1";

impl Testbed for NetnsTestbed {
    fn name(&self) -> &str {
        &self.name
    }

    fn topology(&self) -> Topology {
        self.topology
    }

    fn launcher(&self, host: Host) -> Option<Launcher> {
        let ns = match host {
            Host::Client => self.client_ns(),
            Host::Gateway => self.gateway_ns()?,
            Host::Server => self.server_ns(),
        };
        Some(Launcher::netns(&ns))
    }

    fn server_addr(&self, family: Family) -> IpAddr {
        addr::server(family)
    }

    fn client_addr(&self, family: Family, i: u32) -> IpAddr {
        addr::client(family, i)
    }

    fn gateway_addr(&self, family: Family) -> IpAddr {
        addr::gateway_client_side(family)
    }

    /// Give clients 1..=n their own source addresses (idempotent).
    fn ensure_clients(&self, n: u32) -> Result<()> {
        if n > addr::MAX_CLIENTS {
            return Err(usage(format!(
                "--clients {n}: a testbed addresses at most {} clients",
                addr::MAX_CLIENTS
            )));
        }
        // Host addresses (/32, /128): the peers route the client block via c0's own
        // address, so no per-client neighbour entry exists anywhere.
        let mut script = String::new();
        for i in 1..=n {
            script += &format!("addr replace {}/32 dev c0\n", addr::client(Family::V4, i));
            script += &format!(
                "addr replace {}/128 dev c0 nodad\n",
                addr::client(Family::V6, i)
            );
        }
        run_cmd("ip", &["-n", &self.client_ns(), "-b", "-"], Some(&script))
            .context("adding client source addresses")?;
        Ok(())
    }

    /// Host addresses (/32, /128) on the server's interface (`s0`; in `input`, the
    /// gateway's `lo`, where the server address is): the next hop resolves them as it
    /// resolves the server's own, within the server block.
    fn ensure_destinations(&self, n: u32) -> Result<()> {
        if n <= 1 {
            return Ok(());
        }
        if n > addr::MAX_DSTS {
            return Err(usage(format!(
                "--dsts {n}: a testbed addresses at most {} destinations",
                addr::MAX_DSTS
            )));
        }
        let (ns, dev) = match self.topology {
            Topology::Forward | Topology::Direct => (self.server_ns(), "s0"),
            // The server runs in the gateway's namespace.
            Topology::Input => (self.server_ns(), "lo"),
            Topology::Proxy => {
                return Err(usage(
                    "--dsts: topology proxy relays to one server address".to_string(),
                ))
            }
        };
        let mut script = String::new();
        for i in 1..n {
            script += &format!(
                "addr replace {}/32 dev {dev}\n",
                addr::destination(Family::V4, i)
            );
            script += &format!(
                "addr replace {}/128 dev {dev} nodad\n",
                addr::destination(Family::V6, i)
            );
        }
        run_cmd("ip", &["-n", &ns, "-b", "-"], Some(&script))
            .context("adding the server's destination addresses")?;
        Ok(())
    }

    fn client_interface(&self, _host: u32) -> &str {
        CLIENT_IF
    }

    fn gateway_ingress(&self) -> &str {
        GATEWAY_IN_IF
    }

    fn server_interface(&self, _host: u32) -> Option<&str> {
        match self.topology {
            Topology::Input => Some(GATEWAY_IN_IF),
            Topology::Forward | Topology::Direct | Topology::Proxy => Some("s0"),
        }
    }

    /// MAC address of the client's next hop: the gateway's `g0`, or the server's `s0`
    /// on a direct testbed (for the raw-frame sender).
    fn next_hop_mac(&self, _host: u32) -> Result<String> {
        let (ns, dev) = match self.gateway_ns() {
            Some(g) => (g, GATEWAY_IN_IF),
            None => (self.server_ns(), "s0"),
        };
        let out = ip(&["-n", &ns, "-br", "link", "show", "dev", dev])?;
        out.split_whitespace()
            .nth(2)
            .filter(|m| m.len() == 17 && m.matches(':').count() == 5)
            .map(str::to_owned)
            .ok_or_else(|| {
                anyhow::anyhow!("no MAC address in `ip -br link show {dev}` in {ns}: {out}")
            })
    }

    /// One line per namespace with its interfaces and addresses (at most 8 client
    /// addresses listed), and the limits `build` raised there.
    /// The testbed is fwbench's (`testbed up --name`): every namespace is removed and
    /// built again with the same name, topology and addresses (the client addresses
    /// of more clients are added again by the next trial's `ensure_clients`).
    fn rebuild(&self) -> Result<bool> {
        self.down()
            .and_then(|_| self.build())
            .with_context(|| format!("rebuilding testbed '{}'", self.name))?;
        Ok(true)
    }

    fn describe(&self) -> Result<String> {
        let mut out = format!("testbed {} ({})\n", self.name, self.topology);
        for ns in self.namespaces() {
            out += &format!("  {ns}\n");
            for line in ip(&["-n", &ns, "-br", "addr", "show"])?.lines() {
                out += &format!("    {}\n", shorten_addr_line(line, 8));
            }
            let limits: Vec<String> = read_sysctls(&ns, NS_LIMIT_NAMES)
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            out += &format!("    limits: {}\n", limits.join(" "));
        }
        Ok(out)
    }
}

/// A veth pair with one end in each namespace, created there (names never collide).
fn veth(ns_a: &str, a: &str, ns_b: &str, b: &str) -> Result<()> {
    ip(&[
        "-n", ns_a, "link", "add", a, "type", "veth", "peer", "name", b, "netns", ns_b,
    ])
    .map(|_| ())
}

/// Per-namespace limits every testbed namespace gets (name, value). The listen and
/// SYN backlogs take 10 000 simultaneous connects; the wide port range gives each
/// client source address ~64 000 connections. Within it, X11's ports 6000–6010 are
/// never picked as a source port — as the BSD range of the classic rule sets' era
/// (1024–4999) never picked them: rule sets that drop "unsafe" client source ports
/// (seed 003's Appendix C: `tcp sport { 0-1023, 6000-6010 } drop`) would otherwise drop
/// one connection in ~5 900, at random, as a failed session. TCP timestamps stay on
/// without their per-destination random offset (`tcp_timestamps = 2`): a testbed's
/// trials reuse client ports, and a session whose server-side addresses and ports are
/// those of an earlier trial's connection still in TIME_WAIT on the server must be
/// accepted as new (its timestamp newer, RFC 6191). With the offset a client aiming at
/// the gateway (dnat) stamps older than one that aimed at the server (plain
/// forwarding): the server answered the SYN with the old connection's ACK, the client
/// reset it, and its retried SYN was a second new connection on the gateway — the NAT
/// rule counted 4 of 24 dnat session trials high (537 for 500 sessions) and the
/// sessions waited for the retry. Written inside fwbench's namespaces only, never in
/// the host's.
pub const NS_LIMITS: &[(&str, &str)] = &[
    ("net.core.somaxconn", "65535"),
    ("net.ipv4.tcp_max_syn_backlog", "65535"),
    ("net.ipv4.ip_local_port_range", "1024 65535"),
    ("net.ipv4.ip_local_reserved_ports", "6000-6010"),
    ("net.ipv4.tcp_timestamps", "2"),
];

/// Neighbour-table thresholds wanted for 10 000+ client addresses. Linux keeps one
/// neighbour table for all namespaces and shows these only in the host's, so on most
/// kernels they cannot be set here: the testbed then routes the client block via one
/// next hop instead (one neighbour entry for any number of clients).
pub const NEIGH_LIMITS: &[(&str, &str)] = &[
    ("net.ipv4.neigh.default.gc_thresh1", "8192"),
    ("net.ipv4.neigh.default.gc_thresh2", "32768"),
    ("net.ipv4.neigh.default.gc_thresh3", "65536"),
    ("net.ipv6.neigh.default.gc_thresh1", "8192"),
    ("net.ipv6.neigh.default.gc_thresh2", "32768"),
    ("net.ipv6.neigh.default.gc_thresh3", "65536"),
];

/// What `describe` reports per namespace.
const NS_LIMIT_NAMES: &[&str] = &[
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.neigh.default.gc_thresh3",
    "net.netfilter.nf_conntrack_max",
];

/// Raise [`NS_LIMITS`] in `ns`, and [`NEIGH_LIMITS`] where the kernel has them per
/// namespace (a missing one is skipped: the routing makes it unnecessary).
fn raise_limits(ns: &str) -> Result<()> {
    sysctl(ns, NS_LIMITS)?;
    let present: Vec<(&str, &str)> = NEIGH_LIMITS
        .iter()
        .copied()
        .filter(|(k, _)| {
            let path = format!("/proc/sys/{}", k.replace('.', "/"));
            run_cmd("ip", &["netns", "exec", ns, "test", "-w", &path], None).is_ok()
        })
        .collect();
    sysctl(ns, &present)
}

/// Read sysctls inside a namespace; unreadable ones are reported as "-" (not here).
pub fn read_sysctls(ns: &str, names: &[&str]) -> Vec<(String, String)> {
    let paths: Vec<String> = names
        .iter()
        .map(|k| format!("/proc/sys/{}", k.replace('.', "/")))
        .collect();
    // One process for all: `cat` each file, "-" when it is missing.
    let script: String = paths
        .iter()
        .map(|p| format!("(tr -s '\\t' ' ' < {p} 2>/dev/null || echo -); "))
        .collect();
    let out = run_cmd("ip", &["netns", "exec", ns, "sh", "-c", &script], None).unwrap_or_default();
    let mut lines = out.lines();
    names
        .iter()
        .map(|k| {
            let v = lines.next().unwrap_or("-").trim();
            (
                (*k).to_owned(),
                if v.is_empty() { "-".into() } else { v.into() },
            )
        })
        .collect()
}

/// Routes for the client address block (198.18.1.0 … 198.18.255.255, 2001:2:0:1::c:0/112)
/// via the client's own address, as `ip -b` lines.
fn client_routes(via4: &str, via6: &str) -> String {
    // 198.18.1.0/24 + /23 + … + /17 cover 198.18.1.0 – 198.18.255.255 exactly.
    let mut s = String::new();
    for bits in (17..=24).rev() {
        let start = 1u32 << (24 - bits);
        s += &format!("route add 198.18.{start}.0/{bits} via {via4}\n");
    }
    s += &format!("route add 2001:2:0:1::c:0/112 via {via6}\n");
    s
}

/// `ip -br addr` line with at most `keep` addresses, then "… (+N more)".
fn shorten_addr_line(line: &str, keep: usize) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    // name, state, then addresses
    if words.len() <= 2 + keep {
        return line.to_owned();
    }
    format!(
        "{} … (+{} more)",
        words[..2 + keep].join(" "),
        words.len() - 2 - keep
    )
}

/// Write sysctls inside a namespace.
pub fn sysctl(ns: &str, kv: &[(&str, &str)]) -> Result<()> {
    for (k, v) in kv {
        let path = format!("/proc/sys/{}", k.replace('.', "/"));
        run_cmd(
            "ip",
            &[
                "netns",
                "exec",
                ns,
                "sh",
                "-c",
                &format!("echo {v} > {path}"),
            ],
            None,
        )
        .with_context(|| format!("setting {k}={v} in {ns}"))?;
    }
    Ok(())
}

/// Deletes an ephemeral testbed when dropped, and — through a detached reaper
/// process — also when this process dies without unwinding (SIGKILL).
pub struct EphemeralTestbed {
    pub tb: NetnsTestbed,
    reaper: Option<std::process::Child>,
}

impl EphemeralTestbed {
    pub fn create(topology: Topology) -> Result<Self> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "e{}x{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst)
        );
        // Start the reaper first, so there is no window without one.
        let reaper = spawn_reaper(&name)?;
        let tb = match NetnsTestbed::up(&name, topology) {
            Ok(tb) => tb,
            Err(e) => {
                drop(reaper);
                return Err(e);
            }
        };
        Ok(EphemeralTestbed {
            tb,
            reaper: Some(reaper),
        })
    }
}

impl Drop for EphemeralTestbed {
    fn drop(&mut self) {
        if let Err(e) = self.tb.down() {
            tracing::warn!("removing testbed {}: {e:#}", self.tb.name);
        }
        if let Some(mut r) = self.reaper.take() {
            drop(r.stdin.take()); // EOF: the reaper finds nothing left and exits
            let _ = r.wait();
        }
    }
}

fn spawn_reaper(name: &str) -> Result<std::process::Child> {
    let mut cmd = Command::new(crate::testbed::launcher::self_exe());
    cmd.args(["testbed", "reap", "--name", name])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // Detached from the terminal's process group: a Ctrl-C aimed at the controller
    // does not reach the reaper.
    crate::sys::new_session_on_spawn(&mut cmd);
    cmd.spawn().context("starting the testbed reaper")
}

/// Body of the hidden `fwbench testbed reap`: wait for stdin EOF, then remove.
pub fn reap(name: &str) -> Result<()> {
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    // Agents see the same EOF and exit; give them a moment to leave the namespaces.
    std::thread::sleep(std::time::Duration::from_millis(300));
    if let Some(tb) = NetnsTestbed::find(name).ok().flatten() {
        tb.down()?;
    } else {
        // Possibly incomplete: remove whatever exists.
        NetnsTestbed {
            name: name.into(),
            topology: Topology::Forward,
        }
        .down()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An input gateway's `lo` (the server's address on it) against a forward
    /// gateway's, whose server namespace may have been deleted.
    #[test]
    fn only_a_gateway_holding_the_servers_address_is_input() {
        let input = "lo               UNKNOWN        127.0.0.1/8 198.19.0.2/32 ::1/128 2001:2:0:2::2/128 \n";
        let forward = "lo               UNKNOWN        127.0.0.1/8 ::1/128 \n";
        assert!(serves_in_gateway(input));
        assert!(!serves_in_gateway(forward));
        assert!(!serves_in_gateway("lo UNKNOWN 198.19.0.2/16"));
    }

    #[test]
    fn client_addresses_stay_in_benchmark_ranges() {
        assert_eq!(addr::client(Family::V4, 1).to_string(), "198.18.1.1");
        assert_eq!(addr::client(Family::V4, 320).to_string(), "198.18.2.64");
        assert_eq!(addr::client(Family::V6, 1).to_string(), "2001:2:0:1::c:1");
        let last = addr::client(Family::V4, addr::MAX_CLIENTS).to_string();
        assert!(last.starts_with("198.18."), "{last}");
    }

    #[test]
    fn client_routes_cover_the_client_block() {
        let r = client_routes("198.18.0.2", "2001:2:0:1::2");
        assert!(
            r.contains("route add 198.18.1.0/24 via 198.18.0.2\n"),
            "{r}"
        );
        assert!(
            r.contains("route add 198.18.128.0/17 via 198.18.0.2\n"),
            "{r}"
        );
        assert!(r.contains("route add 198.18.64.0/18 via"), "{r}");
        assert!(r.contains("2001:2:0:1::c:0/112 via 2001:2:0:1::2"), "{r}");
        let last = addr::client(Family::V4, addr::MAX_CLIENTS).to_string();
        assert!(last.starts_with("198.18.") && !last.starts_with("198.18.0."));
    }

    #[test]
    fn long_address_lists_shortened() {
        let l = "c0 UP a b c d e f";
        assert_eq!(shorten_addr_line(l, 8), l);
        assert_eq!(shorten_addr_line(l, 2), "c0 UP a b … (+4 more)");
    }

    #[test]
    fn names_checked() {
        assert!(check_name("a-1").is_ok());
        for bad in ["", "A", "a b", "-a", "x;rm", &"a".repeat(25)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn namespaces_per_topology() {
        let t = |topology| NetnsTestbed {
            name: "x".into(),
            topology,
        };
        assert_eq!(
            t(Topology::Forward).namespaces(),
            ["fwb-x-cli", "fwb-x-gw", "fwb-x-srv"]
        );
        assert_eq!(t(Topology::Direct).namespaces(), ["fwb-x-cli", "fwb-x-srv"]);
        assert_eq!(t(Topology::Input).namespaces(), ["fwb-x-cli", "fwb-x-gw"]);
        assert_eq!(t(Topology::Input).server_ns(), "fwb-x-gw");
    }
}
