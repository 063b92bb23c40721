//! A testbed described by a file: client, gateway and server on hosts reached through
//! any launcher (`ssh …`, `local`, `ip netns exec NS`), with the interfaces and
//! addresses the traffic uses there.
//!
//! ```toml
//! topology = "forward"                 # forward (default), direct, input
//! cache_dir = "~/.cache/fwbench"       # where remote hosts keep the fwbench binary
//! timeout = "30s"                      # how long reaching a host may take (default 30 s)
//!
//! [client]
//! launcher = ["ssh", "-i", "/root/.ssh/lab", "root@192.0.2.10"]
//! interface = "enp1s0"                 # egress toward the gateway
//! prefix = "198.18.1.0/16"             # client i sends from 198.18.1.i …
//! # addresses = ["198.18.1.1", "198.18.1.2"]   # … or exactly these
//! gateway_address = "198.18.0.1"       # the clients' next hop
//! manage_addresses = false             # true: fwbench adds the client addresses
//!
//! [gateway]
//! launcher = ["ssh", "root@192.0.2.11"]
//! interface = "enp1s0"                 # ingress for the test traffic
//!
//! [server]
//! launcher = "local"
//! address = "198.19.0.2"               # or ["198.19.0.2", "2001:2:0:2::2"]
//! ```
//!
//! Two-port tester mode: `move_interface = true` on [client] and [server] moves each
//! role's `interface` into a namespace of its own for the run ([`crate::testbed::ports`];
//! [server] then also takes `gateway_address` and `manage_addresses`). A gateway with
//! no agent is `gateway = "external"` instead of a [gateway] table (engine none only).
//!
//! Owns: parsing (every error names `file:line:col` and the field; unknown keys are
//! refused) and [`FileTestbed`], the [`Testbed`] of such a file. Must not: re-address
//! a host's interface unless `manage_addresses = true`, or build anything (the hosts
//! exist already).

use crate::error::usage;
use crate::params::topology::Topology;
use crate::testbed::launcher::Launcher;
use crate::testbed::remote::{self, Remote};
use crate::testbed::{Host, Testbed};
use crate::textpos::Ctx;
use anyhow::{anyhow, Context, Result};
use proto::Family;
use serde::Deserialize;
use std::net::IpAddr;
use std::path::Path;
use toml::Spanned;

/// Whether a `--testbed` value names a testbed file rather than a local testbed.
pub fn is_file(value: &str) -> bool {
    value.ends_with(".toml") || value.contains('/') || Path::new(value).is_file()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: Option<Spanned<String>>,
    topology: Option<Spanned<String>>,
    cache_dir: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    client: Option<Spanned<RawHost>>,
    /// A `[gateway]` table, or `gateway = "external"`.
    gateway: Option<Spanned<RawGateway>>,
    server: Option<Spanned<RawHost>>,
}

/// `gateway = "external"` (an appliance with no agent) or a `[gateway]` table.
enum RawGateway {
    External(String),
    Host(Box<RawHost>),
}

impl<'de> Deserialize<'de> for RawGateway {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawGateway;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"external\" or a [gateway] table")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<RawGateway, E> {
                Ok(RawGateway::External(s.to_owned()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<RawGateway, A::Error> {
                RawHost::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(|h| RawGateway::Host(Box::new(h)))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHost {
    launcher: Option<Spanned<toml::Value>>,
    interface: Option<Spanned<String>>,
    address: Option<Spanned<toml::Value>>,
    addresses: Option<Spanned<toml::Value>>,
    prefix: Option<Spanned<toml::Value>>,
    gateway_address: Option<Spanned<toml::Value>>,
    manage_addresses: Option<Spanned<bool>>,
    move_interface: Option<Spanned<bool>>,
}

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

#[derive(Debug)]
pub struct FileTestbed {
    pub name: String,
    /// The file it came from, for messages.
    pub path: String,
    pub topology: Topology,
    pub client: HostSpec,
    pub gateway: Option<HostSpec>,
    /// `None` on an input testbed: the server role runs on the gateway.
    pub server: Option<HostSpec>,
    pub server_addrs: Vec<IpAddr>,
    pub client_addrs: ClientAddrs,
    pub gateway_addrs: Vec<IpAddr>,
    pub manage_addresses: bool,
    /// `gateway = "external"`: an appliance with no agent (engine none only).
    pub external_gateway: bool,
    /// A moved server port: its next hops (the DUT's address on the server's link).
    pub server_gateway_addrs: Vec<IpAddr>,
    /// A moved server port: `manage_addresses = true` on [server].
    pub server_manage: bool,
    /// Ports moved for the run (after [`FileTestbed::prepare`]).
    pub held: Vec<crate::testbed::ports::Held>,
}

/// Read and parse a testbed file (bad input → a usage error, exit 2).
pub fn load(path: &Path) -> Result<FileTestbed> {
    let file = path.display().to_string();
    let text = crate::limits::read_user_file(path, "testbed file").map_err(usage)?;
    parse(&file, &text).map_err(usage)
}

/// A string or a list of strings.
fn strings(
    cx: &Ctx,
    v: &Spanned<toml::Value>,
    field: &str,
    one_ok: bool,
) -> Result<Vec<String>, String> {
    let bad = || {
        cx.at(
            v.span(),
            field,
            if one_ok {
                "expected a string or a list of strings"
            } else {
                "expected a list of strings"
            },
        )
    };
    match v.get_ref() {
        toml::Value::String(s) if one_ok => Ok(vec![s.clone()]),
        toml::Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(str::to_owned).ok_or_else(bad))
            .collect(),
        _ => Err(bad()),
    }
}

/// Addresses in the benchmarking ranges only (198.18.0.0/15, 2001:2::/48).
fn bench_addr(cx: &Ctx, v: &Spanned<toml::Value>, field: &str, s: &str) -> Result<IpAddr, String> {
    let a: IpAddr = s
        .parse()
        .map_err(|_| cx.at(v.span(), field, format!("'{s}' is not an IP address")))?;
    let ok = match a {
        IpAddr::V4(v4) => {
            (u32::from(v4) >> 17) == (u32::from(std::net::Ipv4Addr::new(198, 18, 0, 0)) >> 17)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            s[0] == 0x2001 && s[1] == 2 && s[2] == 0
        }
    };
    if !ok {
        return Err(cx.at(
            v.span(),
            field,
            format!("{a}: test traffic uses 198.18.0.0/15 or 2001:2::/48 only"),
        ));
    }
    Ok(a)
}

fn addrs(
    cx: &Ctx,
    v: &Spanned<toml::Value>,
    field: &str,
    one_ok: bool,
) -> Result<Vec<IpAddr>, String> {
    strings(cx, v, field, one_ok)?
        .iter()
        .map(|s| bench_addr(cx, v, field, s))
        .collect()
}

fn one_per_family(
    cx: &Ctx,
    v: &Spanned<toml::Value>,
    field: &str,
    a: &[IpAddr],
) -> Result<(), String> {
    let v4 = a.iter().filter(|x| x.is_ipv4()).count();
    if v4 > 1 || a.len() - v4 > 1 || a.is_empty() {
        return Err(cx.at(v.span(), field, "one address per family (IPv4, IPv6)"));
    }
    Ok(())
}

fn launcher(
    cx: &Ctx,
    role: &str,
    v: &Spanned<toml::Value>,
    cache: &str,
    timeout: std::time::Duration,
) -> Result<Launcher, String> {
    let field = format!("{role}.launcher");
    let argv = match v.get_ref() {
        toml::Value::String(s) if s == "local" => vec!["env".to_string()],
        toml::Value::String(s) => {
            return Err(cx.at(
                v.span(),
                &field,
                format!("'{s}': \"local\" or an argv list, e.g. [\"ssh\", \"root@host\"]"),
            ))
        }
        _ => strings(cx, v, &field, false)?,
    };
    if argv.is_empty() || argv[0].is_empty() {
        return Err(cx.at(v.span(), &field, "an empty command prefix"));
    }
    let local = argv == ["env"];
    let netns = argv.len() == 4 && argv[..3] == ["ip", "netns", "exec"];
    let (host, place) = if local {
        ("localhost".to_string(), "local".to_string())
    } else if netns {
        (argv[3].clone(), format!("netns {}", argv[3]))
    } else {
        // ssh's destination is its last word; for other prefixes, the whole line.
        let host = if remote::is_ssh(&argv) {
            argv.last().cloned().unwrap_or_default()
        } else {
            argv.join(" ")
        };
        (host, argv.join(" "))
    };
    let remote = (!local && !netns).then(|| Remote {
        cache_dir: cache.to_string(),
        timeout,
    });
    let prefix = remote::with_ssh_options(argv).map_err(|e| format!("{e:#}"))?;
    Ok(Launcher {
        prefix,
        host,
        place,
        remote,
        timeout,
    })
}

fn check_interface(cx: &Ctx, s: &Spanned<String>, field: &str) -> Result<String, String> {
    let n = s.get_ref();
    let ok = !n.is_empty()
        && n.len() < 16
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
    if !ok {
        return Err(cx.at(s.span(), field, format!("'{n}' is not an interface name")));
    }
    Ok(n.clone())
}

pub fn parse(file: &str, text: &str) -> Result<FileTestbed, String> {
    let cx = Ctx { file, text };
    let mut raw: RawFile = toml::from_str(text).map_err(|e| match e.span() {
        Some(s) => cx.at(s, "testbed file", e.message()),
        None => format!("{file}: {}", e.message()),
    })?;
    let topology = match &raw.topology {
        None => Topology::Forward,
        Some(t) => match t.get_ref().parse::<Topology>() {
            Ok(Topology::Proxy) | Err(_) => {
                return Err(cx.at(
                    t.span(),
                    "topology",
                    format!("'{}': forward, direct or input", t.get_ref()),
                ))
            }
            Ok(t) => t,
        },
    };
    let cache_dir = match &raw.cache_dir {
        None => remote::DEFAULT_CACHE_DIR.to_string(),
        Some(d) => {
            remote::check_cache_dir(d.get_ref()).map_err(|e| cx.at(d.span(), "cache_dir", e))?;
            d.get_ref().clone()
        }
    };
    let timeout = match &raw.timeout {
        None => crate::testbed::launcher::HOST_TIMEOUT,
        Some(t) => crate::params::values::parse_duration(t.get_ref())
            .ok()
            .filter(|s| s.is_finite() && *s <= 3600.0)
            .map(std::time::Duration::from_secs_f64)
            .ok_or_else(|| {
                cx.at(
                    t.span(),
                    "timeout",
                    format!("'{}': a duration up to 1h, e.g. \"30s\"", t.get_ref()),
                )
            })?,
    };
    let name = match &raw.name {
        None => Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "testbed".into()),
        Some(n) => n.get_ref().clone(),
    };
    let missing = |what: &str| format!("{file}: [{what}] is missing");
    let need = |h: &Spanned<RawHost>, role: &str, field: &str| {
        cx.at(h.span(), &format!("{role}.{field}"), "missing")
    };
    // Fields a role does not use are refused, not ignored.
    let refuse = |h: &Spanned<RawHost>, role: &str, allowed: &[&str]| -> Result<(), String> {
        let r = h.get_ref();
        let present: [(&str, Option<std::ops::Range<usize>>); 7] = [
            ("interface", r.interface.as_ref().map(|x| x.span())),
            ("address", r.address.as_ref().map(|x| x.span())),
            ("addresses", r.addresses.as_ref().map(|x| x.span())),
            ("prefix", r.prefix.as_ref().map(|x| x.span())),
            (
                "gateway_address",
                r.gateway_address.as_ref().map(|x| x.span()),
            ),
            (
                "manage_addresses",
                r.manage_addresses.as_ref().map(|x| x.span()),
            ),
            (
                "move_interface",
                r.move_interface.as_ref().map(|x| x.span()),
            ),
        ];
        for (f, span) in present {
            if let (Some(span), false) = (span, allowed.contains(&f)) {
                return Err(cx.at(
                    span,
                    &format!("{role}.{f}"),
                    format!("not a field of [{role}] (it takes {})", allowed.join(", ")),
                ));
            }
        }
        Ok(())
    };
    let host = |h: &Spanned<RawHost>, role: &str, need_if: bool| -> Result<HostSpec, String> {
        let r = h.get_ref();
        let l = r
            .launcher
            .as_ref()
            .ok_or_else(|| need(h, role, "launcher"))?;
        let launcher = launcher(&cx, role, l, &cache_dir, timeout)?;
        let interface = match &r.interface {
            Some(i) => Some(check_interface(&cx, i, &format!("{role}.interface"))?),
            None if need_if => return Err(need(h, role, "interface")),
            None => None,
        };
        let move_interface = r.move_interface.as_ref().is_some_and(|m| *m.get_ref());
        if let (Some(m), None) = (&r.move_interface, &interface) {
            return Err(cx.at(
                m.span(),
                &format!("{role}.move_interface"),
                "needs the interface to move (interface = \"IFNAME\")",
            ));
        }
        Ok(HostSpec {
            launcher,
            interface,
            move_interface,
        })
    };

    // [client]
    let c = raw.client.as_ref().ok_or_else(|| missing("client"))?;
    refuse(
        c,
        "client",
        &[
            "interface",
            "addresses",
            "prefix",
            "gateway_address",
            "manage_addresses",
            "move_interface",
        ],
    )?;
    let client = host(c, "client", true)?;
    let cr = c.get_ref();
    let mut client_addrs = ClientAddrs::default();
    match (&cr.addresses, &cr.prefix) {
        (Some(_), Some(p)) => {
            return Err(cx.at(
                p.span(),
                "client.prefix",
                "give addresses or a prefix, not both",
            ))
        }
        (None, None) => return Err(need(c, "client", "addresses (or prefix)")),
        (Some(a), None) => {
            client_addrs.list = addrs(&cx, a, "client.addresses", false)?;
            if client_addrs.list.is_empty() {
                return Err(cx.at(a.span(), "client.addresses", "an empty list"));
            }
        }
        (None, Some(p)) => {
            for s in strings(&cx, p, "client.prefix", true)? {
                let (a, len) = s.split_once('/').ok_or_else(|| {
                    cx.at(
                        p.span(),
                        "client.prefix",
                        format!("'{s}': expected ADDRESS/LENGTH"),
                    )
                })?;
                let base = bench_addr(&cx, p, "client.prefix", a)?;
                let max = if base.is_ipv4() { 32 } else { 128 };
                let len: u8 = len.parse().ok().filter(|l| *l <= max).ok_or_else(|| {
                    cx.at(
                        p.span(),
                        "client.prefix",
                        format!("'{s}': bad prefix length"),
                    )
                })?;
                if client_addrs
                    .prefix
                    .iter()
                    .any(|(b, _)| b.is_ipv4() == base.is_ipv4())
                {
                    return Err(cx.at(p.span(), "client.prefix", "one prefix per family"));
                }
                client_addrs.prefix.push((base, len));
            }
        }
    }
    let manage_addresses = cr.manage_addresses.as_ref().is_some_and(|m| *m.get_ref());
    let gateway_addrs = match &cr.gateway_address {
        Some(g) => {
            let a = addrs(&cx, g, "client.gateway_address", true)?;
            one_per_family(&cx, g, "client.gateway_address", &a)?;
            a
        }
        None if topology != Topology::Direct => return Err(need(c, "client", "gateway_address")),
        None => vec![],
    };

    // [gateway], or gateway = "external"
    let mut external_gateway = false;
    let gateway = match (raw.gateway.take(), topology) {
        (Some(g), Topology::Direct) => {
            return Err(cx.at(g.span(), "gateway", "a direct testbed has no gateway"))
        }
        (None, Topology::Direct) => None,
        (None, _) => return Err(missing("gateway")),
        (Some(g), t) => {
            let span = g.span();
            match g.into_inner() {
                RawGateway::External(s) if s == "external" && t == Topology::Forward => {
                    external_gateway = true;
                    None
                }
                RawGateway::External(s) if s == "external" => {
                    return Err(cx.at(
                        span,
                        "gateway",
                        format!("an external gateway forwards: topology \"forward\" only, not {t}"),
                    ))
                }
                RawGateway::External(s) => {
                    return Err(cx.at(
                        span,
                        "gateway",
                        format!("'{s}': \"external\" or a [gateway] table"),
                    ))
                }
                RawGateway::Host(h) => {
                    let g = Spanned::new(span, *h);
                    refuse(&g, "gateway", &["interface"])?;
                    Some(host(&g, "gateway", true)?)
                }
            }
        }
    };

    // [server]
    let s = raw.server.as_ref().ok_or_else(|| missing("server"))?;
    let sr = s.get_ref();
    let server = if topology == Topology::Input {
        refuse(s, "server", &["address"])?;
        if let Some(l) = &sr.launcher {
            return Err(cx.at(
                l.span(),
                "server.launcher",
                "on an input testbed the server role runs on the gateway",
            ));
        }
        None
    } else {
        let moved = sr.move_interface.as_ref().is_some_and(|m| *m.get_ref());
        if moved {
            refuse(
                s,
                "server",
                &[
                    "interface",
                    "address",
                    "move_interface",
                    "gateway_address",
                    "manage_addresses",
                ],
            )?;
        } else {
            refuse(s, "server", &["interface", "address", "move_interface"])?;
        }
        Some(host(s, "server", false)?)
    };
    let server_gateway_addrs = match &sr.gateway_address {
        Some(g) => {
            let a = addrs(&cx, g, "server.gateway_address", true)?;
            one_per_family(&cx, g, "server.gateway_address", &a)?;
            a
        }
        None => vec![],
    };
    let server_manage = sr.manage_addresses.as_ref().is_some_and(|m| *m.get_ref());
    let a = sr
        .address
        .as_ref()
        .ok_or_else(|| need(s, "server", "address"))?;
    let server_addrs = addrs(&cx, a, "server.address", true)?;
    one_per_family(&cx, a, "server.address", &server_addrs)?;

    Ok(FileTestbed {
        name,
        path: file.to_string(),
        topology,
        client,
        gateway,
        server,
        server_addrs,
        client_addrs,
        gateway_addrs,
        manage_addresses,
        external_gateway,
        server_gateway_addrs,
        server_manage,
        held: vec![],
    })
}

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

impl FileTestbed {
    /// The launchers of its distinct hosts, with their roles.
    pub fn hosts(&self) -> Vec<(&'static str, &HostSpec)> {
        let mut v = vec![("client", &self.client)];
        v.extend(self.gateway.as_ref().map(|g| ("gateway", g)));
        v.extend(self.server.as_ref().map(|s| ("server", s)));
        v
    }

    /// Client `i`'s address, if the file gives one for `family`.
    fn client_addr_of(&self, family: Family, i: u32) -> Option<IpAddr> {
        let v4 = family == Family::V4;
        let listed: Vec<IpAddr> = self
            .client_addrs
            .list
            .iter()
            .copied()
            .filter(|a| a.is_ipv4() == v4)
            .collect();
        if !listed.is_empty() {
            return listed.get(i.checked_sub(1)? as usize).copied();
        }
        let (base, _) = self
            .client_addrs
            .prefix
            .iter()
            .find(|(b, _)| b.is_ipv4() == v4)?;
        Some(match base {
            IpAddr::V4(b) => IpAddr::V4(u32::from(*b).checked_add(i)?.into()),
            IpAddr::V6(b) => IpAddr::V6(u128::from(*b).checked_add(i as u128)?.into()),
        })
    }

    /// Whether the file addresses clients in `family`.
    pub fn has_clients(&self, family: Family) -> bool {
        self.clients_available(family) > 0
    }

    /// How many clients the file addresses in `family`.
    fn clients_available(&self, family: Family) -> u32 {
        let v4 = family == Family::V4;
        let listed = self
            .client_addrs
            .list
            .iter()
            .filter(|a| a.is_ipv4() == v4)
            .count();
        if listed > 0 {
            return listed as u32;
        }
        match self
            .client_addrs
            .prefix
            .iter()
            .find(|(b, _)| b.is_ipv4() == v4)
        {
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
    /// Then clean up after a crashed run on each host (its crash markers).
    pub fn prepare(&self) -> Result<()> {
        let mut seen = vec![];
        for (role, h) in self.hosts() {
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
                eprintln!("fwbench: {role} host: {line}");
            }
        }
        Ok(())
    }

    /// Move the two-port roles' interfaces into their namespaces (once).
    pub fn hold_ports(&mut self) -> Result<()> {
        if !self.held.is_empty() {
            return Ok(());
        }
        // Every port is there before any moves: a typo changes nothing.
        for (role, h) in self.hosts() {
            if let Some(dev) = h.interface.as_deref().filter(|_| h.move_interface) {
                self.run_on(h, &["ip", "link", "show", "dev", dev], None)
                    .map_err(|e| {
                        usage(format!(
                            "{}: {role} interface {dev} on {}: {e:#}",
                            self.path, h.launcher.place
                        ))
                    })?;
            }
        }
        let mut held = vec![];
        for (role, h) in self.hosts() {
            let Some(dev) = h.interface.clone().filter(|_| h.move_interface) else {
                continue;
            };
            let spec = self.hold_spec(role, dev);
            held.push(
                crate::testbed::ports::start(&h.launcher, &spec)
                    .map_err(|e| usage(format!("{}: {e:#}", self.path)))?,
            );
        }
        self.held = held;
        Ok(())
    }

    /// What the keeper of `role`'s port does.
    fn hold_spec(&self, role: &str, interface: String) -> crate::testbed::ports::HoldSpec {
        let (manage, gateways, addrs) = if role == "client" {
            // Client addresses are added by `ensure_clients` (inside the namespace).
            (self.manage_addresses, &self.gateway_addrs, vec![])
        } else {
            let host = |a: &IpAddr| format!("{a}/{}", if a.is_ipv4() { 32 } else { 128 });
            (
                self.server_manage,
                &self.server_gateway_addrs,
                self.server_addrs.iter().map(host).collect(),
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
        for (_, h) in self.hosts() {
            remote::close_shared(&h.launcher.prefix);
        }
        remote::remove_control_dir();
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

    /// Each role's host as probed now (a host that does not answer is recorded with
    /// what is known: its role and place).
    fn host_metadata(&self) -> Vec<store::RoleHost> {
        let script = crate::testbed::meta::probe_script();
        let mut out = vec![];
        for (role, h) in self.hosts() {
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
                    tracing::warn!("{role} host: metadata: {e:#}");
                    String::new()
                });
            let mut m = crate::testbed::meta::parse(role, &h.launcher.place, dev, &text);
            if let Some(p) = self.held.iter().find(|p| p.role == role) {
                m.port = Some(p.orig.describe());
            }
            out.push(m);
        }
        if self.external_gateway {
            out.insert(
                1,
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
        match host {
            Host::Client => Some(self.role_launcher("client", &self.client)),
            Host::Gateway => self.gateway.as_ref().map(|g| g.launcher.clone()),
            Host::Server => match &self.server {
                Some(s) => Some(self.role_launcher("server", s)),
                None => self.gateway.as_ref().map(|g| g.launcher.clone()),
            },
        }
    }

    fn server_addr(&self, family: Family) -> IpAddr {
        of_family(&self.server_addrs, family)
            .unwrap_or_else(|| crate::testbed::addr::server(family))
    }

    fn client_addr(&self, family: Family, i: u32) -> IpAddr {
        self.client_addr_of(family, i)
            .unwrap_or_else(|| crate::testbed::addr::client(family, i))
    }

    fn gateway_addr(&self, family: Family) -> IpAddr {
        of_family(&self.gateway_addrs, family).unwrap_or_else(|| self.server_addr(family))
    }

    fn check_trial(&self, family: Family, clients: u32) -> Result<()> {
        let f = family_name(family);
        if of_family(&self.server_addrs, family).is_none() {
            return Err(usage(format!(
                "{}: server.address has no {f} address, but a trial uses {f}",
                self.path
            )));
        }
        if self.topology != Topology::Direct && of_family(&self.gateway_addrs, family).is_none() {
            return Err(usage(format!(
                "{}: client.gateway_address has no {f} address, but a trial uses {f}",
                self.path
            )));
        }
        let have = self.clients_available(family);
        if clients > have {
            return Err(usage(format!(
                "{}: a trial uses {} clients, the file gives {have} {f} client address{}",
                self.path,
                clients,
                if have == 1 { "" } else { "es" }
            )));
        }
        Ok(())
    }

    /// With `manage_addresses = true`, add the client addresses on the client's
    /// interface (idempotent); otherwise change nothing on the host.
    fn ensure_clients(&self, n: u32) -> Result<()> {
        if !self.manage_addresses {
            return Ok(());
        }
        let dev = self.client_interface();
        let mut script = String::new();
        for family in [Family::V4, Family::V6] {
            let len = match self
                .client_addrs
                .prefix
                .iter()
                .find(|(b, _)| b.is_ipv4() == (family == Family::V4))
            {
                Some((_, l)) => *l,
                None if family == Family::V4 => 32,
                None => 128,
            };
            for i in 1..=n.min(self.clients_available(family)) {
                if let Some(a) = self.client_addr_of(family, i) {
                    let nodad = if family == Family::V6 { " nodad" } else { "" };
                    script += &format!("addr replace {a}/{len} dev {dev}{nodad}\n");
                }
            }
        }
        let l = self.role_launcher("client", &self.client);
        self.run_with(&l, &["ip", "-b", "-"], Some(&script))
            .with_context(|| {
                format!("adding client addresses on {}", self.client.launcher.place)
            })?;
        Ok(())
    }

    fn client_interface(&self) -> &str {
        self.client.interface.as_deref().unwrap_or("")
    }

    fn gateway_ingress(&self) -> &str {
        self.gateway
            .as_ref()
            .and_then(|g| g.interface.as_deref())
            .unwrap_or("")
    }

    /// The MAC of the gateway's ingress (or, direct, of the server's interface).
    fn next_hop_mac(&self) -> Result<String> {
        if self.external_gateway {
            return Err(usage(format!(
                "{}: the raw sender needs the next hop's MAC address, which an external \
                 gateway does not tell (use the UDP sender)",
                self.path
            )));
        }
        let (h, dev) = match (&self.gateway, &self.server) {
            (Some(g), _) => (g, g.interface.clone()),
            (None, Some(s)) => (s, s.interface.clone()),
            (None, None) => return Err(anyhow!("{}: no next hop", self.path)),
        };
        let dev = dev.ok_or_else(|| {
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
        for (role, h) in self.hosts() {
            out += &format!(
                "  {role}: {}{}{}\n",
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
    use super::*;

    const GOOD: &str = r#"
topology = "forward"
cache_dir = "/tmp/fwb-cache"

[client]
launcher = ["ssh", "-i", "/k", "root@198.19.254.2"]
interface = "c0"
prefix = ["198.18.1.0/16", "2001:2:0:1::c:0/64"]
gateway_address = ["198.18.0.1", "2001:2:0:1::1"]

[gateway]
launcher = ["ip", "netns", "exec", "gw"]
interface = "g0"

[server]
launcher = "local"
address = "198.19.0.2"
"#;

    fn err(text: &str) -> String {
        parse("tb.toml", text).expect_err("an error")
    }

    #[test]
    fn a_three_host_file() {
        let t = parse("lab.toml", GOOD).unwrap();
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
        assert!(!t.manage_addresses);
        let e = t.check_trial(Family::V6, 1).unwrap_err().to_string();
        assert!(e.contains("no IPv6"), "{e}");
    }

    #[test]
    fn errors_name_line_column_and_field() {
        // (what is replaced, by what, where the message starts, what it says)
        for (from, to, at, says) in [
            (
                "interface = \"g0\"",
                "interfce = \"g0\"",
                "tb.toml:13:1:",
                "interfce",
            ),
            (
                "198.19.0.2\"\n",
                "192.0.2.2\"\n",
                "tb.toml:17:11: server.address:",
                "198.18.0.0/15",
            ),
            ("\"local\"", "\"lokal\"", "", "server.launcher"),
            (
                "topology = \"forward\"",
                "topology = \"sideways\"",
                "tb.toml:2:12: topology:",
                "",
            ),
            (
                "cache_dir = \"/tmp/fwb-cache\"",
                "cache_dir = \"/tmp/$(x)\"",
                "",
                "cache_dir",
            ),
            ("[gateway]", "[gatway]", "", "gatway"),
            (
                "address = \"198.19.0.2\"",
                "addresses = [\"198.19.0.2\"]",
                "",
                "server.addresses: not a field of [server]",
            ),
        ] {
            let e = err(&GOOD.replace(from, to));
            assert!(e.starts_with(at) && e.contains(says), "{e}");
        }
    }

    #[test]
    fn direct_and_input() {
        let direct = GOOD.replace("forward", "direct").replace(
            "[gateway]\nlauncher = [\"ip\", \"netns\", \"exec\", \"gw\"]\ninterface = \"g0\"\n",
            "",
        );
        let t = parse("d.toml", &direct).unwrap();
        assert!(t.launcher(Host::Gateway).is_none());
        let e = err(&GOOD.replace("forward", "direct"));
        assert!(e.contains("a direct testbed has no gateway"), "{e}");
        let input = GOOD
            .replace("forward", "input")
            .replace("launcher = \"local\"\n", "");
        let t = parse("i.toml", &input).unwrap();
        assert_eq!(t.launcher(Host::Server).unwrap().place, "netns gw");
    }

    #[test]
    fn listed_client_addresses_limit_the_clients() {
        let t = parse(
            "l.toml",
            &GOOD.replace(
                "prefix = [\"198.18.1.0/16\", \"2001:2:0:1::c:0/64\"]",
                "addresses = [\"198.18.0.2\", \"198.18.0.3\"]",
            ),
        )
        .unwrap();
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
        let t = parse("two.toml", &two).unwrap();
        assert!(t.external_gateway && t.gateway_is_external());
        assert!(t.launcher(Host::Gateway).is_none());
        assert!(t.client.move_interface);
        assert!(t.server.as_ref().unwrap().move_interface);
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
    fn file_or_name() {
        assert!(is_file("lab.toml"));
        assert!(is_file("./lab"));
        assert!(!is_file("fwbench"));
    }
}
