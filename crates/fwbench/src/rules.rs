//! From trial parameters to the rendered rule set the gateway installs: the testbed's
//! addresses, the model generator, the import file, the engine's renderer. Also the
//! pre-flight checks run before anything is built (bad input → exit 2, gateway unchanged).

use crate::params::topology::chain_of;
use crate::params::topology::Topology;
use crate::params::TrialParams;
use crate::testbed::addr;
use firewall::install;
use firewall::models::{Addressing, Model, ModelSpec};
use firewall::render::{Rendered, Tool};
use firewall::{Engine, Ip, Prefix, Request};
use proto::Family;

/// Why a trial's rule set cannot be built or installed as asked: bad input (the
/// callers exit 2, nothing applied), each with what the user must change.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("engine {0} needs a gateway, but topology direct has none (use forward or input)")]
    NoGateway(Engine),
    #[error("model import needs --import FILE (an `nft list ruleset` or `iptables-save` file)")]
    ImportNeedsFile,
    #[error("--aim needs --import FILE (it aims at a rule of your ruleset)")]
    AimNeedsImport,
    /// A file given by a flag could not be read (`--import`, `--import-ipset`).
    #[error("{flag} {source}")]
    Unreadable {
        flag: &'static str,
        source: crate::limits::UnreadableFile,
    },
    /// The user's ruleset (or ipset file) as fwbench reads it.
    #[error(transparent)]
    Import(#[from] firewall::import::ImportError),
    /// nft itself refused or could not load the user's nft file.
    #[error("{0}")]
    NftLoad(String),
    #[error(transparent)]
    Request(#[from] firewall::request::RequestError),
    #[error(transparent)]
    Install(#[from] install::InstallError),
    /// The engine's own check (`iptables-restore --test`) rejected the rewritten file.
    #[error("--import {path}: {tool} rejects it:\n{why}")]
    Rejected {
        path: String,
        tool: String,
        why: String,
    },
    #[error("--event: {0}")]
    Event(#[from] firewall::update::UpdateError),
    /// `--src`, `--dst` or `--sport` outside what the testbed sends from and to.
    #[error("{0}")]
    Address(String),
    /// An address or prefix of the aimed-at rule that fwbench cannot read.
    #[error("{0} not understood")]
    Prefix(String),
    /// `--aim` names no rule, or one the flood cannot be aimed at.
    #[error("--aim {target}: {why}")]
    Aim { target: String, why: String },
}

impl From<RulesError> for String {
    fn from(e: RulesError) -> String {
        e.to_string()
    }
}

/// The testbed's addresses for `n` clients.
pub fn addressing(family: Family, n: u32) -> Addressing {
    // INVARIANT: literal addresses.
    let p = |a: &str, len| Prefix {
        addr: a.parse().expect("literal address"),
        len,
    };
    let (client_net, server_net) = match family {
        Family::V4 => (p("198.18.0.0", 16), p("198.19.0.0", 16)),
        Family::V6 => (p("2001:2:0:1::", 64), p("2001:2:0:2::", 64)),
    };
    Addressing {
        clients: (1..=n).map(|i| addr::client(family, i)).collect(),
        client_net,
        server: addr::server(family),
        server_net,
        gateway_client: Some(addr::gateway_client_side(family)),
        gateway_server: Some(addr::gateway_server_side(family)),
    }
}

/// The rule request of a trial (`None` for engine none). Errors are bad input.
pub fn request(p: &TrialParams) -> Result<Option<Request>, RulesError> {
    if p.engine == Engine::None {
        return Ok(None);
    }
    if p.topology == Topology::Direct {
        return Err(RulesError::NoGateway(p.engine));
    }
    let ip = Ip::from(p.family);
    let mut req = Request {
        engine: p.engine,
        ip,
        spec: None,
        addressing: None,
        imported: None,
        nft_family: p.nft_family,
    };
    if p.model == Model::Import {
        let path = p.import.as_deref().ok_or(RulesError::ImportNeedsFile)?;
        req.imported = Some(import(path, p.import_ipset.as_deref(), ip)?);
    } else {
        req.spec = Some(ModelSpec {
            model: p.model,
            count: p.rules,
            position: p.position,
            chain: chain_of(p.topology),
            l4: p.proto.into(),
            ip,
            one_way: p.workload().one_way(),
            dport: flood_dport(p),
            nat_to: p.nat_to,
        });
        req.addressing = Some(addressing(p.family, p.clients));
    }
    Ok(Some(req))
}

/// The destination port of a flood's or flow's first flow (`--dport`'s first port,
/// else the sink's): model `linear-drop` puts the client's (address, port) among its
/// rules. `None` for the other workloads.
fn flood_dport(p: &TrialParams) -> Option<u16> {
    let k = p.packet()?;
    Some(
        k.dport
            .map_or(crate::params::packet::SINK_PORT, |(lo, _)| lo),
    )
}

/// Read and rewrite a user's ruleset file (with the ipsets its rules match, `ipset`:
/// an `ipset save` file). nft files are parsed by nft itself, in a scratch network
/// namespace ([`crate::nftload`]); only its read-back is installed.
pub fn import(path: &str, ipset: Option<&str>, ip: Ip) -> Result<firewall::Imported, RulesError> {
    use firewall::import;
    let read = |file: &str, what: &str, flag: &'static str| {
        crate::limits::read_user_file(std::path::Path::new(file), what)
            .map_err(|source| RulesError::Unreadable { flag, source })
    };
    let text = read(path, "rule import", "--import")?;
    if let Some(sets) = ipset {
        let set_text = read(sets, "ipset file", "--import-ipset")?;
        let sets = import::import_ipset(sets, &set_text, ip)?;
        return Ok(import::import_with_sets(path, &text, ip, &sets)?);
    }
    // Anything that is not iptables-save text is nft's to judge.
    Ok(match import::detect(&text) {
        Some(firewall::ImportFormat::IptablesSave) => import::import(path, &text, ip)?,
        _ => {
            import::check_nft_text(path, &text)?;
            let loaded = crate::nftload::load_nft(path, &text).map_err(RulesError::NftLoad)?;
            import::refused_messages(path, &loaded.messages)?;
            import::import_nft_listing(path, &loaded.json, &loaded.listing, ip)?
        }
    })
}

/// Build and render the rule set of a trial (`None` for engine none).
pub fn build(p: &TrialParams) -> Result<Option<Rendered>, RulesError> {
    Ok(request(p)?
        .map(|r| firewall::request::render(&r))
        .transpose()?)
}

/// `fwbench rules render`: the batches as the user would type them and, for an
/// imported file, what fwbench changed, the chain mapping (the user's name next to
/// fwbench's) and every rule with its position (`--aim CHAIN:N`).
pub fn render_text(p: &TrialParams) -> Result<Option<String>, RulesError> {
    let Some(req) = request(p)? else {
        return Ok(None);
    };
    let r = firewall::request::render(&req)?;
    let mut out = r.to_text_with_settings();
    if let Some(imp) = &req.imported {
        out += &import_table(imp);
    }
    Ok(Some(out))
}

/// The chain mapping, notes and rule list of an import, as `#` comment lines.
pub fn import_table(imp: &firewall::Imported) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for n in &imp.notes {
        let _ = writeln!(out, "# note: {n}");
    }
    if !imp.chains.is_empty() {
        let w = imp
            .chains
            .iter()
            .map(|(u, _)| u.len())
            .max()
            .unwrap_or(0)
            .max(10);
        let _ = writeln!(out, "# chains:\n#   {:<w$}  fwbench's chain", "your chain");
        for (user, ours) in &imp.chains {
            let _ = writeln!(out, "#   {user:<w$}  {ours}");
        }
    }
    let _ = writeln!(out, "# rules (aim at one with --aim N or --aim CHAIN:N):");
    for (i, r) in imp.rule_list.iter().enumerate() {
        let _ = writeln!(out, "#   {:>4}  {:<24} {}", i + 1, r.place(), r.text);
    }
    out
}

/// Before any testbed exists: the engine's tools are installed, and an imported
/// iptables-save file passes the engine's own check (`--test`), run in a scratch
/// network namespace on fwbench's rewritten text (an nft file was already loaded by
/// nft itself in one). The user's file is never run in the host's namespace.
///
/// With `strict_aim`, an `--aim` that cannot be met is bad input too; in a sweep over
/// `aim` (hot rules) such a rule is marked unavailable when its trial comes.
pub fn preflight(p: &TrialParams, r: &Rendered, strict_aim: bool) -> Result<(), RulesError> {
    install::check_tools(r)?;
    let a = addressing(p.family, p.clients.max(1));
    if let Some(k) = p.packet() {
        check_addrs(k, &a.clients, a.server)?;
    }
    if strict_aim {
        aim(p, &a.clients, a.server)?;
    }
    if let Some(e) = &p.events {
        check_events(p, r, e, &a)?;
    }
    let restore = r
        .install
        .iter()
        .find(|b| matches!(b.tool, Tool::IptablesRestore { .. }));
    if let (Some(path), Some(raw)) = (&p.import, restore) {
        let argv = raw.tool.argv();
        let mut check: Vec<&str> = argv.clone();
        check.push("--test");
        // The sets its rules match are made first, in the same scratch namespace.
        let sets = r.install.iter().find(|b| b.tool == Tool::IpsetRestore);
        crate::nftload::check_in_scratch(&check, &raw.text, sets.map(|b| b.text.as_str()))
            .map_err(|why| RulesError::Rejected {
                path: path.clone(),
                tool: argv[0].to_string(),
                why,
            })?;
    }
    Ok(())
}

/// The engine can make the updates of `--event` by its method (rendered on a scratch
/// copy, nothing applied): refused as bad input before any host is touched.
fn check_events(
    p: &TrialParams,
    r: &Rendered,
    e: &crate::params::events::EventParams,
    a: &Addressing,
) -> Result<(), RulesError> {
    let Some(req) = request(p)? else {
        // INVARIANT: `r` is the rendering of this request (engine none has none).
        return Ok(());
    };
    let rs = firewall::request::rule_set(&req)?;
    let events = firewall::update::Events::new(r, rs, firewall::EngineOptions::default());
    // A marker of the trial's protocol, so the engine renders its rule as it will.
    let marker = a.clients.first().map(|&src| proto::Marker {
        src,
        proto: p.proto,
        dport: crate::params::ECHO_PORT,
    });
    // One check per update as the agent runs it: a trace's operations each once, the
    // marker on the first; its later operations once per kind and K (up to the 2 a
    // check renders), so a long trace is not rendered 10 000 times.
    let mut seen: Vec<(proto::UpdateKind, u32)> = vec![];
    for (i, one) in e.each().iter().enumerate() {
        let spec = crate::workloads::events::event_spec(p, one, marker.filter(|_| i == 0));
        let shape = (spec.kind, spec.k.min(2));
        if i > 0 && seen.contains(&shape) {
            continue;
        }
        seen.push(shape);
        events.check(&spec)?;
    }
    Ok(())
}

/// `--src` must be one of the testbed's clients and `--dst` its server: traffic goes
/// nowhere else; the flows must fit a `--sport` range.
pub fn check_addrs(
    k: &crate::params::packet::PacketParams,
    clients: &[std::net::IpAddr],
    server: std::net::IpAddr,
) -> Result<(), RulesError> {
    if let Some(a) = k.src.filter(|a| !clients.contains(a)) {
        let shown: Vec<String> = clients.iter().take(4).map(|c| c.to_string()).collect();
        return Err(RulesError::Address(format!(
            "--src {a} is not one of the testbed's client addresses ({}{}); fwbench sends \
             only from those",
            shown.join(", "),
            if clients.len() > 4 { ", …" } else { "" }
        )));
    }
    if let Some((lo, hi)) = k.sport {
        if u32::from(hi) - u32::from(lo) + 1 < k.flows {
            return Err(RulesError::Address(format!(
                "{} flows need {} source ports, but --sport {lo}-{hi} has {}",
                k.flows,
                k.flows,
                u32::from(hi) - u32::from(lo) + 1
            )));
        }
    }
    if let Some(a) = k.dst.filter(|a| *a != server) {
        return Err(RulesError::Address(format!(
            "--dst {a} is not the testbed's server {server}; fwbench sends nowhere else"
        )));
    }
    Ok(())
}

/// A trial's packets aimed at one imported rule: what was derived from its match
/// fields, and the rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Aimed {
    /// `CHAIN:N (rule text)`.
    pub rule: String,
    pub src: Option<std::net::IpAddr>,
    pub sport: Option<u16>,
    pub dport: Option<u16>,
}

impl Aimed {
    /// One line saying what was derived, for the user.
    pub fn said(&self) -> String {
        let mut parts = vec!["udp".to_string()];
        if let Some(a) = self.src {
            parts.push(format!("from {a}"));
        }
        if let Some(p) = self.sport {
            parts.push(format!("sport {p}"));
        }
        if let Some(p) = self.dport {
            parts.push(format!("dport {p}"));
        }
        format!("aimed at {}: {}", self.rule, parts.join(", "))
    }
}

/// Whether `a` is inside the prefix `p` (`addr/len` or a bare address).
fn in_prefix(p: &str, a: std::net::IpAddr) -> Result<bool, RulesError> {
    use std::net::IpAddr;
    let (addr, len) = match p.split_once('/') {
        Some((x, l)) => (x, Some(l)),
        None => (p, None),
    };
    let base: IpAddr = addr
        .parse()
        .map_err(|_| RulesError::Prefix(format!("address {p}")))?;
    let max = if base.is_ipv4() { 32 } else { 128 };
    let len: u32 = match len {
        // A dotted mask (iptables writes /255.255.0.0 never; nft never) is refused.
        Some(l) => l
            .parse()
            .map_err(|_| RulesError::Prefix(format!("prefix {p}")))?,
        None => max,
    };
    Ok(match (base, a) {
        (IpAddr::V4(b), IpAddr::V4(x)) => {
            let m = u32::MAX.checked_shl(32 - len).unwrap_or(0);
            u32::from(b) & m == u32::from(x) & m
        }
        (IpAddr::V6(b), IpAddr::V6(x)) => {
            let m = u128::MAX.checked_shl(128 - len).unwrap_or(0);
            u128::from(b) & m == u128::from(x) & m
        }
        _ => false,
    })
}

/// The rule `--aim` names (`N` over the listing of `rules render`, or `CHAIN:N`).
pub fn find_rule<'a>(
    imp: &'a firewall::Imported,
    aim: &str,
) -> Result<&'a firewall::ImportedRule, RulesError> {
    let refuse = |why: String| RulesError::Aim {
        target: aim.to_string(),
        why,
    };
    let found = match aim.rsplit_once(':') {
        Some((chain, n)) => {
            let n: usize = n.parse().map_err(|_| refuse("bad number".into()))?;
            imp.rule_list
                .iter()
                .find(|r| r.user_chain == chain && r.index == n)
        }
        None => aim
            .parse::<usize>()
            .ok()
            .and_then(|n| imp.rule_list.get(n.wrapping_sub(1))),
    };
    found.ok_or_else(|| {
        refuse(format!(
            "{} has no such rule ({} rules; `fwbench rules render --import {}` lists them)",
            imp.source,
            imp.rule_list.len(),
            imp.source
        ))
    })
}

/// Derive UDP packets that match the aimed-at rule from its own match fields:
/// a testbed client inside its source prefix, ports inside its ranges. Refused (bad
/// input) when the rule matches something the flood cannot send (TCP, a named set,
/// a negation), or addresses outside the testbed — nothing is ever sent there.
pub fn aim(
    p: &TrialParams,
    clients: &[std::net::IpAddr],
    server: std::net::IpAddr,
) -> Result<Option<Aimed>, RulesError> {
    let Some(target) = p.packet().and_then(|k| k.aim.as_deref()) else {
        return Ok(None);
    };
    let path = p.import.as_deref().ok_or(RulesError::AimNeedsImport)?;
    let imp = import(path, p.import_ipset.as_deref(), Ip::from(p.family))?;
    let r = find_rule(&imp, target)?;
    let name = format!("{} ({})", r.place(), r.text);
    let refuse = |why: String| {
        Err(RulesError::Aim {
            target: target.to_string(),
            why: format!("rule {name} cannot be aimed at: {why}"),
        })
    };
    let a = &r.aim;
    if let Some(why) = &a.unaimable {
        return refuse(why.clone());
    }
    if let Some(l4) = a.l4.as_deref().filter(|l| *l != "udp" && *l != "17") {
        return refuse(format!(
            "it matches protocol {l4}, and {} sends UDP",
            p.name()
        ));
    }
    let testbed = addr::benchmark;
    let mut src = None;
    let user_src = p.packet().and_then(|k| k.src);
    if let Some(prefix) = &a.src {
        let inside = clients
            .iter()
            .copied()
            .filter(|c| testbed(*c) && user_src.is_none_or(|u| u == *c))
            .find(|c| in_prefix(prefix, *c).unwrap_or(false));
        match inside {
            Some(c) => src = Some(c),
            None => {
                return refuse(format!(
                    "it matches source {prefix}, which holds none of the testbed's clients \
                     (fwbench sends from 198.18.0.0/15 or 2001:2::/48 only, never elsewhere)"
                ))
            }
        }
    }
    if let Some(prefix) = &a.dst {
        if !(testbed(server) && in_prefix(prefix, server)?) {
            return refuse(format!(
                "it matches destination {prefix}, which is not the testbed's server {server} \
                 (fwbench never sends anywhere else)"
            ));
        }
    }
    let k = p.packet();
    let pick = |rule: Option<(u16, u16)>, user: Option<(u16, u16)>, what: &str| match (rule, user) {
        (Some((lo, hi)), Some((ulo, uhi))) => {
            let (l, h) = (lo.max(ulo), hi.min(uhi));
            if l > h {
                Err(RulesError::Aim {
                    target: target.to_string(),
                    why: format!(
                        "the rule's {what} {lo}-{hi} and --{what} {ulo}-{uhi} do not overlap"
                    ),
                })
            } else {
                Ok(Some(l))
            }
        }
        (Some((lo, _)), None) => Ok(Some(lo)),
        (None, u) => Ok(u.map(|(lo, _)| lo)),
    };
    Ok(Some(Aimed {
        rule: name.clone(),
        src,
        sport: pick(a.sport, k.and_then(|k| k.sport), "sport")?,
        dport: pick(a.dport, k.and_then(|k| k.dport), "dport")?,
    }))
}

#[cfg(test)]
mod aim_tests {
    use super::*;

    #[test]
    fn prefixes_contain_what_they_should() {
        let a = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert!(in_prefix("198.18.0.0/15", a("198.19.255.1")).unwrap());
        assert!(!in_prefix("198.18.0.0/16", a("198.19.0.1")).unwrap());
        assert!(in_prefix("198.18.1.1", a("198.18.1.1")).unwrap());
        assert!(!in_prefix("203.0.113.0/24", a("198.18.1.1")).unwrap());
        assert!(in_prefix("2001:2::/48", a("2001:2:0:1::5")).unwrap());
        assert!(!in_prefix("2001:2::/48", a("198.18.1.1")).unwrap());
        assert!(in_prefix("0.0.0.0/0", a("198.18.1.1")).unwrap());
        assert!(in_prefix("x/1", a("198.18.1.1")).is_err());
    }

    #[test]
    fn rules_are_found_by_number_or_chain_and_position() {
        let text = "*filter\n:INPUT DROP [0:0]\n:mine - [0:0]\n-A INPUT -j mine\n\
                    -A mine -p udp --dport 53 -j ACCEPT\nCOMMIT\n";
        let imp = firewall::import::import("f", text, Ip::V4).unwrap();
        assert_eq!(find_rule(&imp, "2").unwrap().place(), "mine:1");
        assert_eq!(find_rule(&imp, "mine:1").unwrap().aim.dport, Some((53, 53)));
        assert_eq!(
            find_rule(&imp, "INPUT:2").unwrap().text,
            ":INPUT DROP (the chain's policy)"
        );
        assert!(find_rule(&imp, "4")
            .unwrap_err()
            .to_string()
            .contains("f has no such rule (3 rules"));
        assert!(find_rule(&imp, "0").is_err());
    }
}

#[cfg(test)]
mod tests {
    /// The string models' matching rule looks for the bytes the senders write first.
    #[test]
    fn string_drop_matches_the_probe_magic() {
        let [a, b] = traffic::probe::MAGIC;
        assert_eq!(format!("|{a:02x}{b:02x}|"), firewall::models::PAYLOAD_MAGIC);
    }
}

#[cfg(test)]
mod event_tests {
    use super::*;

    /// A trace's operations are checked one by one, as the agent runs them (each
    /// once): the whole trace is not one event of N updates without a rate.
    #[test]
    fn a_traces_operations_are_checked_each_as_one_update() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.trace");
        std::fs::write(&f, "0.5s add 1\n1s add 2\n1.5s delete 1\n2s replace 3\n").unwrap();
        let p = crate::plan::build::test_params(
            crate::params::workload::Workload::Flow,
            &[
                ("rate", "1kpps"),
                ("engine", "nft"),
                ("rules", "10"),
                ("event_trace", f.to_str().unwrap()),
            ],
        );
        let r = build(&p).unwrap().unwrap();
        let a = addressing(p.family, p.clients.max(1));
        let e = p.events.as_ref().unwrap();
        check_events(&p, &r, e, &a).unwrap();
        // What one operation cannot do is still refused: a map write for nft.
        let mut bad = e.clone();
        bad.method = proto::UpdateMethod::Map;
        let why = check_events(&p, &r, &bad, &a).unwrap_err().to_string();
        assert!(why.contains("map"), "{why}");
    }
}
