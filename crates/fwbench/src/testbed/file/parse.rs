//! A testbed file's text → [`FileTestbed`]: the settings of the whole file, then each
//! role's table(s) in the order people read them (client, gateway, server), one
//! function per table and per check across tables.
//!
//! Owns: which fields a role takes (others are refused, not ignored), what a role
//! needs, and the checks across hosts (each client host sends from addresses of its
//! own, each server host has its own address, one moved port per role). Every error
//! names `file:line:col` and the field. Must not: reach a host or read a file.

use super::error::{Source, TestbedFileError};
use super::raw::{RawFile, RawGateway, RawHost, RawRole};
use super::spec::{role_label, ClientAddrs, ClientHost, FileTestbed, HostSpec, ServerHost};
use super::values::{
    addrs, bench_addr, check_interface, check_name, launcher, one_per_family, strings,
};
use super::MAX_ROLE_HOSTS;
use crate::params::topology::Topology;
use crate::testbed::bounded::shown;
use crate::testbed::remote;
use proto::Family;
use std::net::IpAddr;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;
use toml::Spanned;

type Result<T> = std::result::Result<T, TestbedFileError>;

/// Parse a testbed file's text (`file` names it in messages and gives the default name).
pub fn parse(file: &str, text: &str) -> Result<FileTestbed> {
    let src = Source { file, text };
    let mut raw: RawFile = toml::from_str(text).map_err(|e| match e.span() {
        Some(s) => src.at(s, "testbed file", e.message()),
        None => TestbedFileError::Syntax {
            file: file.to_string(),
            why: e.message().to_string(),
        },
    })?;
    let p = Parser {
        src,
        topology: topology(&src, &raw)?,
        cache_dir: cache_dir(&src, &raw)?,
        timeout: timeout(&src, &raw)?,
    };
    let name = match &raw.name {
        None => Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "testbed".into()),
        Some(n) => check_name(&src, n)?,
    };
    let c = raw.client.take().ok_or_else(|| src.missing("client"))?;
    let (clients, ingress_spans) = p.clients(c)?;
    let (gateway, external_gateway) = p.gateway(raw.gateway.take())?;
    // A client host's gateway interface is one of the gateway's (fwbench counts there).
    if let (Some((role, span)), None) = (ingress_spans.first(), &gateway) {
        return Err(src.at(
            span.clone(),
            &format!("{role}.gateway_interface"),
            "names an interface of the [gateway], but this testbed has no gateway agent",
        ));
    }
    let s = raw.server.take().ok_or_else(|| src.missing("server"))?;
    let servers = p.servers(s)?;
    Ok(FileTestbed {
        name,
        path: file.to_string(),
        topology: p.topology,
        clients,
        gateway,
        servers: servers.hosts,
        external_gateway,
        server_gateway_addrs: servers.gateway_addrs,
        server_manage: servers.manage,
        held: vec![],
    })
}

/// `topology`: forward (default), direct or input.
fn topology(src: &Source, raw: &RawFile) -> Result<Topology> {
    let Some(t) = &raw.topology else {
        return Ok(Topology::Forward);
    };
    match t.get_ref().parse::<Topology>() {
        Ok(Topology::Proxy) | Err(_) => Err(src.at(
            t.span(),
            "topology",
            format!("'{}': forward, direct or input", shown(t.get_ref())),
        )),
        Ok(t) => Ok(t),
    }
}

/// `cache_dir`: where remote hosts keep the binary.
fn cache_dir(src: &Source, raw: &RawFile) -> Result<String> {
    match &raw.cache_dir {
        None => Ok(remote::DEFAULT_CACHE_DIR.to_string()),
        Some(d) => {
            remote::check_cache_dir(d.get_ref()).map_err(|e| src.at(d.span(), "cache_dir", e))?;
            Ok(d.get_ref().clone())
        }
    }
}

/// `timeout`: how long reaching a host may take, up to an hour.
fn timeout(src: &Source, raw: &RawFile) -> Result<Duration> {
    let Some(t) = &raw.timeout else {
        return Ok(crate::testbed::launcher::HOST_TIMEOUT);
    };
    crate::params::values::parse_duration(t.get_ref())
        .ok()
        .filter(|s| s.is_finite() && *s <= 3600.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            src.at(
                t.span(),
                "timeout",
                format!(
                    "'{}': a duration up to 1h, e.g. \"30s\"",
                    shown(t.get_ref())
                ),
            )
        })
}

/// The file with its settings, for parsing its roles.
struct Parser<'a> {
    src: Source<'a>,
    topology: Topology,
    cache_dir: String,
    timeout: Duration,
}

/// The server role as parsed.
struct Servers {
    hosts: Vec<ServerHost>,
    /// A moved server port: its next hops.
    gateway_addrs: Vec<IpAddr>,
    /// A moved server port: `manage_addresses = true`.
    manage: bool,
}

/// A client host naming its `gateway_interface`: its label and the value's span.
type IngressSpan = (String, Range<usize>);

/// The fields a client host takes.
const CLIENT_FIELDS: &[&str] = &[
    "interface",
    "addresses",
    "prefix",
    "gateway_address",
    "gateway_interface",
    "manage_addresses",
    "move_interface",
];

impl Parser<'_> {
    /// `role.field: missing`, at the host's table.
    fn need(&self, h: &Spanned<RawHost>, role: &str, field: &str) -> TestbedFileError {
        self.src.at(h.span(), &format!("{role}.{field}"), "missing")
    }

    /// Fields a role does not use are refused, not ignored.
    fn refuse(&self, h: &Spanned<RawHost>, role: &str, allowed: &[&str]) -> Result<()> {
        let r = h.get_ref();
        let present: [(&str, Option<Range<usize>>); 8] = [
            ("interface", r.interface.as_ref().map(|x| x.span())),
            ("address", r.address.as_ref().map(|x| x.span())),
            ("addresses", r.addresses.as_ref().map(|x| x.span())),
            ("prefix", r.prefix.as_ref().map(|x| x.span())),
            (
                "gateway_address",
                r.gateway_address.as_ref().map(|x| x.span()),
            ),
            (
                "gateway_interface",
                r.gateway_interface.as_ref().map(|x| x.span()),
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
                let table = role.split('#').next().unwrap_or(role);
                return Err(self.src.at(
                    span,
                    &format!("{role}.{f}"),
                    format!("not a field of [{table}] (it takes {})", allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// A host's launcher, interface (needed when `need_if`) and `move_interface`.
    fn host(&self, h: &Spanned<RawHost>, role: &str, need_if: bool) -> Result<HostSpec> {
        let r = h.get_ref();
        let l = r
            .launcher
            .as_ref()
            .ok_or_else(|| self.need(h, role, "launcher"))?;
        let launcher = launcher(&self.src, role, l, &self.cache_dir, self.timeout)?;
        let interface = match &r.interface {
            Some(i) => Some(check_interface(&self.src, i, &format!("{role}.interface"))?),
            None if need_if => return Err(self.need(h, role, "interface")),
            None => None,
        };
        let move_interface = r.move_interface.as_ref().is_some_and(|m| *m.get_ref());
        if let (Some(m), None) = (&r.move_interface, &interface) {
            return Err(self.src.at(
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
    }

    /// Two-port tester mode moves one port per role.
    fn one_port(&self, h: &Spanned<RawHost>, role: &str, many: bool) -> Result<()> {
        match &h.get_ref().move_interface {
            Some(m) if many && *m.get_ref() => Err(self.src.at(
                m.span(),
                &format!("{role}.move_interface"),
                "two-port tester mode moves one port per role: not with several hosts in it",
            )),
            _ => Ok(()),
        }
    }

    /// A role has 1 to [`MAX_ROLE_HOSTS`] hosts.
    fn several(&self, span: Range<usize>, role: &str, n: usize) -> Result<()> {
        if n == 0 {
            return Err(self
                .src
                .at(span, role, format!("no host: give a [[{role}]] table")));
        }
        if n > MAX_ROLE_HOSTS {
            return Err(self.src.at(
                span,
                role,
                format!("{n} hosts: at most {MAX_ROLE_HOSTS} per role"),
            ));
        }
        Ok(())
    }

    /// `[client]`, or `[[client]]` tables: the hosts, and (label, span of
    /// `gateway_interface`) of each host naming one.
    fn clients(&self, c: Spanned<RawRole>) -> Result<(Vec<ClientHost>, Vec<IngressSpan>)> {
        let client_span = c.span();
        let (raw_clients, many) = RawRole::hosts(c);
        self.several(client_span, "client", raw_clients.len())?;
        let mut clients: Vec<ClientHost> = vec![];
        let mut ingress_spans = vec![];
        for (i, c) in raw_clients.iter().enumerate() {
            let role = role_label("client", i, raw_clients.len());
            let role = role.as_str();
            self.refuse(c, role, CLIENT_FIELDS)?;
            self.one_port(c, role, many)?;
            let host = self.host(c, role, true)?;
            let addrs_of = self.client_addrs(c, role)?;
            self.own_addresses(c, role, &addrs_of, &clients, raw_clients.len())?;
            let cr = c.get_ref();
            let field = |f: &str| format!("{role}.{f}");
            let gateway_addrs = match &cr.gateway_address {
                Some(g) => {
                    let a = addrs(&self.src, g, &field("gateway_address"), true)?;
                    one_per_family(&self.src, g, &field("gateway_address"), &a)?;
                    a
                }
                None if self.topology != Topology::Direct => {
                    return Err(self.need(c, role, "gateway_address"))
                }
                None => vec![],
            };
            let gateway_interface = match &cr.gateway_interface {
                Some(g) => {
                    ingress_spans.push((role.to_string(), g.span()));
                    Some(check_interface(&self.src, g, &field("gateway_interface"))?)
                }
                None => None,
            };
            clients.push(ClientHost {
                host,
                addrs: addrs_of,
                gateway_addrs,
                manage_addresses: cr.manage_addresses.as_ref().is_some_and(|m| *m.get_ref()),
                gateway_interface,
            });
        }
        Ok((clients, ingress_spans))
    }

    /// A client host's `addresses`, or its `prefix` (one per family).
    fn client_addrs(&self, c: &Spanned<RawHost>, role: &str) -> Result<ClientAddrs> {
        let cr = c.get_ref();
        let field = |f: &str| format!("{role}.{f}");
        let mut addrs_of = ClientAddrs::default();
        match (&cr.addresses, &cr.prefix) {
            (Some(_), Some(p)) => {
                return Err(self.src.at(
                    p.span(),
                    &field("prefix"),
                    "give addresses or a prefix, not both",
                ))
            }
            (None, None) => return Err(self.need(c, role, "addresses (or prefix)")),
            (Some(a), None) => {
                addrs_of.list = addrs(&self.src, a, &field("addresses"), false)?;
                if addrs_of.list.is_empty() {
                    return Err(self.src.at(a.span(), &field("addresses"), "an empty list"));
                }
            }
            (None, Some(p)) => addrs_of.prefix = self.prefixes(p, &field("prefix"))?,
        }
        Ok(addrs_of)
    }

    /// `prefix = "ADDRESS/LENGTH"` or a list of them, one per family.
    fn prefixes(&self, p: &Spanned<toml::Value>, field: &str) -> Result<Vec<(IpAddr, u8)>> {
        let mut out: Vec<(IpAddr, u8)> = vec![];
        for s in strings(&self.src, p, field, true)? {
            let (a, len) = s.split_once('/').ok_or_else(|| {
                self.src.at(
                    p.span(),
                    field,
                    format!("'{}': expected ADDRESS/LENGTH", shown(&s)),
                )
            })?;
            let base = bench_addr(&self.src, p, field, a)?;
            let max = if base.is_ipv4() { 32 } else { 128 };
            let len: u8 = len.parse().ok().filter(|l| *l <= max).ok_or_else(|| {
                self.src.at(
                    p.span(),
                    field,
                    format!("'{}': bad prefix length", shown(&s)),
                )
            })?;
            if out.iter().any(|(b, _)| b.is_ipv4() == base.is_ipv4()) {
                return Err(self.src.at(p.span(), field, "one prefix per family"));
            }
            out.push((base, len));
        }
        Ok(out)
    }

    /// Each client host sends from addresses of its own: none of `mine` is an address
    /// of the hosts before it (`others`, of `n` in all).
    fn own_addresses(
        &self,
        c: &Spanned<RawHost>,
        role: &str,
        mine: &ClientAddrs,
        others: &[ClientHost],
        n: usize,
    ) -> Result<()> {
        let cr = c.get_ref();
        let span = cr
            .addresses
            .as_ref()
            .or(cr.prefix.as_ref())
            .map(|x| x.span())
            .unwrap_or(c.span());
        // Two ranges overlap when one's first address is in the other.
        let within = |a: &ClientAddrs, b: &ClientAddrs, fam: Family| {
            a.get(fam, 1)
                .filter(|x| (1..=b.available(fam)).any(|k| b.get(fam, k) == Some(*x)))
        };
        for (j, other) in others.iter().enumerate() {
            for fam in [Family::V4, Family::V6] {
                if let Some(a) =
                    within(mine, &other.addrs, fam).or_else(|| within(&other.addrs, mine, fam))
                {
                    return Err(self.src.at(
                        span,
                        role,
                        format!(
                            "{a} is a client address of {} too: each client host needs addresses of its own",
                            role_label("client", j, n)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `[gateway]`, or `gateway = "external"` (then `true`): its host, if it has an agent.
    fn gateway(&self, g: Option<Spanned<RawGateway>>) -> Result<(Option<HostSpec>, bool)> {
        let g = match (g, self.topology) {
            (Some(g), Topology::Direct) => {
                return Err(self
                    .src
                    .at(g.span(), "gateway", "a direct testbed has no gateway"))
            }
            (None, Topology::Direct) => return Ok((None, false)),
            (None, _) => return Err(self.src.missing("gateway")),
            (Some(g), _) => g,
        };
        let t = self.topology;
        let span = g.span();
        match g.into_inner() {
            RawGateway::External(s) if s == "external" && t == Topology::Forward => {
                Ok((None, true))
            }
            RawGateway::External(s) if s == "external" => Err(self.src.at(
                span,
                "gateway",
                format!("an external gateway forwards: topology \"forward\" only, not {t}"),
            )),
            RawGateway::External(s) => Err(self.src.at(
                span,
                "gateway",
                format!("'{}': \"external\" or a [gateway] table", shown(&s)),
            )),
            RawGateway::Host(h) => {
                let g = Spanned::new(span, *h);
                self.refuse(&g, "gateway", &["interface"])?;
                Ok((Some(self.host(&g, "gateway", true)?), false))
            }
        }
    }

    /// `[server]`, or `[[server]]` tables.
    fn servers(&self, s: Spanned<RawRole>) -> Result<Servers> {
        let server_span = s.span();
        let (raw_servers, many) = RawRole::hosts(s);
        self.several(server_span.clone(), "server", raw_servers.len())?;
        let mut out = Servers {
            hosts: vec![],
            gateway_addrs: vec![],
            manage: false,
        };
        for (i, s) in raw_servers.iter().enumerate() {
            let role = role_label("server", i, raw_servers.len());
            let role = role.as_str();
            let sr = s.get_ref();
            let field = |f: &str| format!("{role}.{f}");
            let host = self.server_host(s, role, many, &server_span)?;
            if let Some(g) = &sr.gateway_address {
                let a = addrs(&self.src, g, &field("gateway_address"), true)?;
                one_per_family(&self.src, g, &field("gateway_address"), &a)?;
                out.gateway_addrs = a;
            }
            out.manage |= sr.manage_addresses.as_ref().is_some_and(|m| *m.get_ref());
            let a = sr
                .address
                .as_ref()
                .ok_or_else(|| self.need(s, role, "address"))?;
            let addrs = addrs(&self.src, a, &field("address"), true)?;
            one_per_family(&self.src, a, &field("address"), &addrs)?;
            if let Some((j, x)) = out
                .hosts
                .iter()
                .enumerate()
                .find_map(|(j, o)| o.addrs.iter().find(|x| addrs.contains(x)).map(|x| (j, *x)))
            {
                return Err(self.src.at(
                    a.span(),
                    &field("address"),
                    format!(
                        "{x} is {}'s address too: each server host needs its own",
                        role_label("server", j, raw_servers.len())
                    ),
                ));
            }
            out.hosts.push(ServerHost { host, addrs });
        }
        Ok(out)
    }

    /// A server host's host: none on an input testbed (the gateway's host serves).
    fn server_host(
        &self,
        s: &Spanned<RawHost>,
        role: &str,
        many: bool,
        server_span: &Range<usize>,
    ) -> Result<Option<HostSpec>> {
        let sr = s.get_ref();
        if self.topology == Topology::Input {
            if many {
                return Err(self.src.at(
                    server_span.clone(),
                    "server",
                    "on an input testbed the server role runs on the gateway: one [server]",
                ));
            }
            self.refuse(s, role, &["address"])?;
            if let Some(l) = &sr.launcher {
                return Err(self.src.at(
                    l.span(),
                    &format!("{role}.launcher"),
                    "on an input testbed the server role runs on the gateway",
                ));
            }
            return Ok(None);
        }
        self.one_port(s, role, many)?;
        let moved = sr.move_interface.as_ref().is_some_and(|m| *m.get_ref());
        if moved {
            self.refuse(
                s,
                role,
                &[
                    "interface",
                    "address",
                    "move_interface",
                    "gateway_address",
                    "manage_addresses",
                ],
            )?;
        } else {
            self.refuse(s, role, &["interface", "address", "move_interface"])?;
        }
        Ok(Some(self.host(s, role, false)?))
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{err, GOOD, SPREAD};

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
    fn bad_multi_host_files_name_line_column_and_field() {
        for (from, to, at, says) in [
            // A field of the second client table, with its number.
            (
                "prefix = \"198.18.200.10/24\"",
                "prefix = \"192.0.2.10/24\"",
                "tb.toml:14:10: client#2.prefix:",
                "198.18.0.0/15",
            ),
            (
                "gateway_interface = \"g2\"",
                "gateway_interface = \"g 2\"",
                "tb.toml:16:21: client#2.gateway_interface:",
                "not an interface name",
            ),
            // Addresses of their own.
            (
                "prefix = \"198.18.200.10/24\"",
                "prefix = \"198.18.1.0/24\"",
                "tb.toml:14:10: client#2:",
                "198.18.1.1 is a client address of client#1 too",
            ),
            // … also when the second host's block holds the first's.
            (
                "prefix = \"198.18.200.10/24\"",
                "prefix = \"198.18.0.0/16\"",
                "tb.toml:14:10: client#2:",
                "198.18.1.1 is a client address of client#1 too",
            ),
            (
                "address = \"198.19.0.3\"",
                "address = \"198.19.0.2\"",
                "tb.toml:28:11: server#2.address:",
                "is server#1's address too",
            ),
            (
                "launcher = [\"ssh\", \"root@198.19.254.18\"]\n",
                "",
                "tb.toml:11:1: client#2.launcher:",
                "missing",
            ),
            // Two-port mode moves one port per role.
            (
                "gateway_interface = \"g2\"",
                "move_interface = true",
                "tb.toml:16:18: client#2.move_interface:",
                "one port per role",
            ),
            // One role given both ways.
            (
                "[[server]]\nlauncher = [\"ssh\", \"root@198.19.254.22\"]",
                "[server]\nlauncher = [\"ssh\", \"root@198.19.254.22\"]",
                "tb.toml:",
                "testbed file",
            ),
        ] {
            let text = SPREAD.replace(from, to);
            assert_ne!(text, SPREAD, "{from}");
            let e = err(&text);
            assert!(e.starts_with(at) && e.contains(says), "{from}: {e}");
        }
        // gateway_interface names a port of a gateway agent's host.
        let external = SPREAD
            .replace(
                "[gateway]\nlauncher = [\"ssh\", \"root@198.19.254.6\"]\ninterface = \"g0\"\n",
                "",
            )
            .replace("cache_dir", "gateway = \"external\"\ncache_dir");
        let e = err(&external);
        assert!(
            e.starts_with("tb.toml:17:21: client#2.gateway_interface:")
                && e.contains("no gateway agent"),
            "{e}"
        );
        // An input testbed's server role is the gateway's: one [server].
        let input = SPREAD.replace("cache_dir", "topology = \"input\"\ncache_dir");
        let e = err(&input);
        assert!(e.contains("one [server]"), "{e}");
        // An empty array of tables.
        let e = err("client = []\n[gateway]\nlauncher = \"local\"\ninterface = \"g0\"\n");
        assert!(e.starts_with("tb.toml:1:10: client: no host"), "{e}");
    }

    #[test]
    fn lengths_of_names_and_launcher_words_are_bounded() {
        let e = err(&format!("name = \"{}\"\n{GOOD}", "n".repeat(65)));
        assert!(
            e.starts_with("tb.toml:1:8: name:") && e.contains("1 to 64 bytes"),
            "{e}"
        );
        let many = vec!["\"w\""; 65].join(", ");
        let e = err(&GOOD.replace("\"local\"", &format!("[{many}]")));
        assert!(e.contains("server.launcher: 65 words: at most 64"), "{e}");
        let long = "h".repeat(5000);
        let e = err(&GOOD.replace("root@198.19.254.2", &long));
        assert!(
            e.contains("client.launcher: word 4 (")
                && e.contains("… (5000 bytes)'): 5000 bytes: at most 4096 per word")
                && e.len() < 400,
            "{e}"
        );
        let e = err(&GOOD.replace("\"local\"", "[\"sh\", \"a\\u0000b\"]"));
        assert!(e.contains("word 2 ('a\\0b'): a NUL character"), "{e}");
        // A long bad value is quoted cut, not whole.
        let e = err(&GOOD.replace("\"forward\"", &format!("\"{}\"", "x".repeat(1 << 20))));
        assert!(
            e.starts_with("tb.toml:2:12: topology:") && e.len() < 400,
            "{}",
            e.len()
        );
    }
}
