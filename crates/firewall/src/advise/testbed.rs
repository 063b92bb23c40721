//! The proof on the testbed, planned and judged without I/O: the model's probe packets
//! become probe *classes* that can be sent on the testbed, both rulesets are written
//! as nft files for the gateway with every address mapped into the benchmark ranges,
//! each followed by an observer table whose one counted rule per class sees what the
//! ruleset let through; the counters that come back are judged against each other and
//! against the model.
//!
//! The map ([`AddrMap`]) is built from every prefix the two rulesets match and every
//! probe address, per family and per field: sources into 198.18.128.0/17
//! (2001:2:0:1:8000::/65), destinations into 198.19.128.0/17 (2001:2:0:2:8000::/65).
//! It keeps each probe inside exactly the prefixes it was in, and the order of
//! addresses, so the mapped rulesets decide the mapped probes as the real ones decide
//! the real probes; it is applied alike to both rulesets and to the probes.
//!
//! Owns: which probes are sent (and why others are not), the classes, the mapped
//! files, the observer, the model's expectation per class, the judgement.
//! Must not: run anything, or send to an address outside the benchmark ranges.

use super::addrmap::AddrMap;
use super::model::{Field, Net, Packet, Rule, Table, Target, Values};
use super::nft::NftOutputError;
use super::{nft, nftjson, table_probes, Origin, Probe, Rulesets};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::IpAddr;

/// Why the proof cannot be planned on a testbed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The ruleset cannot be checked there: a rule names an interface the testbed's
    /// packets use, a table is named like the observer's, a chain would come after
    /// it, an address is in a match the analysis cannot read.
    #[error("{0}")]
    Untestable(String),
    /// The mapped ruleset cannot be written as nft for the gateway.
    #[error(transparent)]
    Nft(#[from] NftOutputError),
    /// Two probes of one class that the model decides differently: the map is wrong
    /// (a bug), so nothing is sent.
    #[error(
        "the address map put {first} and {second} in one class, but the model decides \
         them differently"
    )]
    SplitClass { first: String, second: String },
    /// No ruleset was read.
    #[error("no ruleset")]
    NoRuleset,
}

/// Where the testbed's traffic meets the rules: the gateway's input hook (topology
/// input) or its forward hook (topology forward); prerouting (and ingress) before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Path {
    Input,
    Forward,
}

impl Path {
    /// The hook the observer counts at.
    pub fn hook(self) -> &'static str {
        match self {
            Path::Input => "input",
            Path::Forward => "forward",
        }
    }
    fn hooks(self) -> [&'static str; 3] {
        ["ingress", "prerouting", self.hook()]
    }
}

/// The blocks the addresses are mapped into: (sources, destinations) per family.
pub const SOURCES_V4: &str = "198.18.128.0/17";
pub const DESTINATIONS_V4: &str = "198.19.128.0/17";
pub const SOURCES_V6: &str = "2001:2:0:1:8000::/65";
pub const DESTINATIONS_V6: &str = "2001:2:0:2:8000::/65";

/// The observer's table (its one chain is `probes`), and its priority: after every
/// chain of the ruleset at the same hook.
pub const OBSERVER_TABLE: &str = "advise-probes";
pub const OBSERVER_PRIORITY: i32 = 2_000_000_000;
/// The observer's chain as an imported ruleset names it (several tables:
/// `FAMILY/TABLE/CHAIN`).
pub const OBSERVER_CHAIN: &str = "inet/advise-probes/probes";

/// Most classes sent per family (the observer's chain is linear: each packet passes
/// up to this many rules on the gateway).
pub const MAX_CLASSES: usize = 20_000;

/// What the model says a class meets on the testbed's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    Delivered,
    Dropped,
    /// It depends on a rule the model cannot read (a stateful match …).
    Either,
}

/// One probe class: the packet as sent (mapped) and the probe it stands for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Class {
    pub v6: bool,
    pub proto: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
    /// The line (iptables) or handle (nft) of the rule the first probe was made for
    /// (0: the policies' default packet), and its text.
    pub line: usize,
    pub rule: String,
    /// The first probe as the model saw it (real addresses).
    pub packet: String,
    /// Probes of the model in this class.
    pub probes: usize,
    /// The model's answer for the original and the optimised ruleset.
    pub expect: [Expect; 2],
}

/// Probes not sent, grouped by why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NotSent {
    pub reason: String,
    pub probes: usize,
    /// One of them, for people.
    pub example: String,
}

/// One install of each ruleset: the classes of one family, and the two files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    pub v6: bool,
    /// Indices into [`Plan::classes`]; the observer's rule `k + 1` counts class
    /// `classes[k]`.
    pub classes: Vec<usize>,
    /// The original and the optimised ruleset (mapped) with the observer: `nft -f`
    /// input for the nft engine's `--import`.
    pub files: [String; 2],
}

/// The whole plan of the proof on a testbed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub path: Path,
    pub classes: Vec<Class>,
    pub not_sent: Vec<NotSent>,
    pub rounds: Vec<Round>,
    /// The maps made, for people (`IPv4 sources → 198.18.128.0/17`).
    pub maps: Vec<String>,
    /// `line` or `handle`.
    pub unit: &'static str,
}

/// The maps of one ruleset pair: per (family, field).
#[derive(Default)]
struct Maps {
    maps: HashMap<(bool, Field), AddrMap>,
}

impl Maps {
    fn net(&self, f: Field, n: Net) -> Net {
        self.maps
            .get(&(n.v6, f))
            .and_then(|m| m.net(n))
            .unwrap_or(n)
    }
    fn point(&self, v6: bool, f: Field, a: u128) -> Option<u128> {
        self.maps.get(&(v6, f))?.point(a)
    }
}

fn target(v6: bool, f: Field) -> Net {
    let s = match (v6, f) {
        (false, Field::Src) => SOURCES_V4,
        (false, _) => DESTINATIONS_V4,
        (true, Field::Src) => SOURCES_V6,
        (true, _) => DESTINATIONS_V6,
    };
    // INVARIANT: the constants above are prefixes.
    Net::parse(s).expect("literal prefix")
}

/// Every address prefix a rule matches in field `f` (its conditions and a verdict
/// map's keys).
fn nets_of(r: &Rule, f: Field) -> Vec<Net> {
    let mut out = vec![];
    if let Some(Values::Nets(ns)) = r.conds.as_ref().and_then(|c| c.get(&f)).map(|c| &c.values) {
        out.extend(ns);
    }
    if let Target::Map(mf, entries) = &r.target {
        if *mf == f {
            for (v, _) in entries {
                if let Values::Nets(ns) = v {
                    out.extend(ns);
                }
            }
        }
    }
    out
}

fn rules(ts: &[Table]) -> impl Iterator<Item = &Rule> {
    ts.iter().flat_map(|t| &t.chains).flat_map(|c| &c.rules)
}

/// Whether table `t` sees packets of family `v6` (nft tables by their family; an
/// iptables file is of one version).
fn sees(t: &Table, origin: &Origin, v6: bool) -> bool {
    match origin {
        Origin::Iptables { v6: file } => *file == v6,
        Origin::Nft { .. } => match t.name.split_whitespace().next() {
            Some("inet") => true,
            Some("ip") => !v6,
            Some("ip6") => v6,
            // arp, bridge, netdev: not installed by the trial's import.
            _ => false,
        },
        Origin::None => false,
    }
}

/// Whether the packet passes every base chain on the path (`None`: a chain ends in
/// something the model cannot judge, and none drops it).
fn delivered(ts: &[Table], origin: &Origin, p: &Packet, path: Path, opaque: bool) -> Option<bool> {
    let mut known = true;
    for t in ts.iter().filter(|t| sees(t, origin, p.v6)) {
        for c in &t.chains {
            let Some((hook, _)) = &c.hook else { continue };
            if !path.hooks().contains(&hook.as_str()) {
                continue;
            }
            let f = t.fate(&c.name, p, opaque);
            match f.verdict.as_str() {
                "ACCEPT" | "policy ACCEPT" => {}
                "DROP" | "policy DROP" => return Some(false),
                v if v.starts_with("REJECT") => return Some(false),
                _ => known = false,
            }
        }
    }
    known.then_some(true)
}

fn expect(ts: &[Table], origin: &Origin, p: &Packet, path: Path, opaque: bool) -> Expect {
    let a = delivered(ts, origin, p, path, false);
    let b = if opaque {
        delivered(ts, origin, p, path, true)
    } else {
        a
    };
    match (a, b) {
        (Some(true), Some(true)) => Expect::Delivered,
        (Some(false), Some(false)) => Expect::Dropped,
        _ => Expect::Either,
    }
}

/// Whether a rule's text names an address (a token that reads as one, a prefix or a
/// range of them).
fn names_address(text: &str) -> bool {
    text.split(|c: char| c.is_whitespace() || matches!(c, '{' | '}' | ',' | '"'))
        .any(|w| {
            Net::parse(w).is_some()
                || w.split_once('-').is_some_and(|(a, b)| {
                    a.parse::<IpAddr>().is_ok() && b.parse::<IpAddr>().is_ok()
                })
        })
}

/// The ruleset with every address mapped, written for the gateway: rules the model
/// reads rendered from it (log and other non-terminal targets, which decide nothing,
/// as plain counters; every REJECT as `reject`), the others (nft) by their text.
fn mapped_file(rs: &Rulesets, ts: &[Table], maps: &Maps) -> Result<String, PlanError> {
    let nft_origin = matches!(rs.origin, Origin::Nft { .. });
    let mut out: Vec<Table> = ts.to_vec();
    for t in &mut out {
        for c in &mut t.chains {
            for r in &mut c.rules {
                let Some(conds) = r.conds.as_mut() else {
                    if nft_origin && names_address(&r.text) {
                        return Err(PlanError::Untestable(format!(
                            "handle {} (`{}`) names an address in a match the analysis \
                             cannot read ({}): the testbed copy cannot map it",
                            r.line,
                            r.text,
                            r.opaque.as_deref().unwrap_or("")
                        )));
                    }
                    continue;
                };
                for (f, cond) in conds.iter_mut() {
                    // A named set's elements are written in place, mapped (its
                    // definition in the file keeps the real ones).
                    cond.set = None;
                    if let Values::Nets(ns) = &mut cond.values {
                        for n in ns.iter_mut() {
                            *n = maps.net(*f, *n);
                        }
                    }
                }
                match &mut r.target {
                    Target::Map(f, entries) => {
                        for (v, _) in entries.iter_mut() {
                            if let Values::Nets(ns) = v {
                                for n in ns.iter_mut() {
                                    *n = maps.net(*f, *n);
                                }
                            }
                        }
                    }
                    Target::Continue(t) => *t = None,
                    Target::Verdict(v) if v.starts_with("REJECT") => *v = "REJECT".into(),
                    Target::Verdict(_) | Target::Return | Target::Jump(_) | Target::Goto(_) => {}
                }
                r.comment = None;
                r.line = 0; // written from the model
            }
        }
    }
    match &rs.origin {
        Origin::Iptables { v6 } => Ok(nft::render(&out, *v6)?),
        Origin::Nft { listing, tables } => {
            let nts: Vec<nftjson::NftTable> = tables
                .iter()
                .zip(out)
                .map(|((family, name), table)| nftjson::NftTable {
                    family: family.clone(),
                    name: name.clone(),
                    table,
                })
                .collect();
            Ok(nftjson::render(listing, &nts)?)
        }
        Origin::None => Err(PlanError::NoRuleset),
    }
}

/// The observer: one counted rule per class, after every chain at the hook.
fn observer(classes: &[&Class], path: Path) -> String {
    let hook = path.hook();
    let mut s = format!("table inet {OBSERVER_TABLE} {{\n\tchain probes {{\n");
    let _ = writeln!(
        s,
        "\t\ttype filter hook {hook} priority {OBSERVER_PRIORITY}; policy accept;"
    );
    for c in classes {
        let l3 = if c.v6 { "ip6" } else { "ip" };
        let _ = write!(
            s,
            "\t\tmeta l4proto {} {l3} saddr {} {l3} daddr {}",
            c.proto, c.src, c.dst
        );
        if has_ports(c.proto) {
            let _ = write!(s, " th sport {} th dport {}", c.sport, c.dport);
        }
        s.push_str(" counter\n");
    }
    s.push_str("\t}\n}\n");
    s
}

/// Protocols whose header starts with the two ports.
fn has_ports(proto: u8) -> bool {
    matches!(proto, 6 | 17 | 33 | 132 | 136)
}

/// Plan the proof: the classes to send on `path`, the mapped files, the probes not
/// sent. `ifaces`: the testbed's interfaces the packets arrive on and leave by (a
/// ruleset naming them cannot be checked there: the refusal says so).
pub fn plan(rs: &Rulesets, path: Path, ifaces: &[&str]) -> Result<Plan, PlanError> {
    let unit = match rs.origin {
        Origin::Nft { .. } => "handle",
        Origin::Iptables { .. } | Origin::None => "line",
    };
    check_testable(rs, path, ifaces, unit)?;
    let opaque = rules(&rs.before)
        .chain(rules(&rs.after))
        .any(|r| r.conds.is_none());
    let mut maps = Maps::default();
    let mut map_notes = vec![];
    let mut probes_of: Vec<(bool, Vec<Probe>)> = vec![];
    for v6 in families(rs) {
        let probes = family_probes(rs, v6);
        map_family(rs, v6, &probes, &mut maps, &mut map_notes);
        probes_of.push((v6, probes));
    }
    let mut c = Classifier {
        rs,
        path,
        opaque,
        maps: &maps,
        classes: vec![],
        not_sent: vec![],
    };
    let mut rounds: Vec<Round> = vec![];
    for (v6, probes) in probes_of {
        let round = c.round(v6, probes)?;
        if round.is_empty() {
            continue;
        }
        let obs: Vec<&Class> = round.iter().map(|&k| &c.classes[k]).collect();
        let observer = observer(&obs, path);
        let files = [
            mapped_file(rs, &rs.before, &maps)? + &observer,
            mapped_file(rs, &rs.after, &maps)? + &observer,
        ];
        rounds.push(Round {
            v6,
            classes: round,
            files,
        });
    }
    Ok(Plan {
        path,
        classes: c.classes,
        not_sent: c.not_sent,
        rounds,
        maps: map_notes,
        unit,
    })
}

/// Refuse a ruleset the testbed cannot check: a rule naming an interface the
/// testbed's packets use, a table named like the observer's, a chain at the
/// observer's hook that would come after it.
fn check_testable(rs: &Rulesets, path: Path, ifaces: &[&str], unit: &str) -> Result<(), PlanError> {
    for r in rules(&rs.before).chain(rules(&rs.after)) {
        let named = r
            .conds
            .iter()
            .flat_map(|c| c.values())
            .find_map(|c| match &c.values {
                Values::Iface(i) if ifaces.contains(&i.as_str()) => Some(i),
                _ => None,
            });
        if let Some(i) = named {
            return Err(PlanError::Untestable(format!(
                "{unit} {} (`{}`) names interface {i}, which the testbed's packets use",
                r.line, r.text
            )));
        }
    }
    for t in &rs.before {
        if t.name == format!("inet {OBSERVER_TABLE}") {
            return Err(PlanError::Untestable(format!(
                "the ruleset has a table named {OBSERVER_TABLE}, the observer's"
            )));
        }
        for c in &t.chains {
            if let Some((h, prio)) = &c.hook {
                if path.hooks().contains(&h.as_str()) && *prio >= OBSERVER_PRIORITY {
                    return Err(PlanError::Untestable(format!(
                        "chain {} {} hooks {h} at priority {prio}: the observer counts at \
                         {OBSERVER_PRIORITY}, after every chain",
                        t.name, c.name
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The families probed (`true`: IPv6): an iptables file's own; IPv4 and, if a table
/// sees it, IPv6 for nft.
fn families(rs: &Rulesets) -> Vec<bool> {
    match &rs.origin {
        Origin::Iptables { v6 } => vec![*v6],
        Origin::Nft { .. } => {
            let mut f = vec![false];
            if rs.before.iter().any(|t| sees(t, &rs.origin, true)) {
                f.push(true);
            }
            f
        }
        Origin::None => vec![],
    }
}

/// The model's probes of one family, each packet once.
fn family_probes(rs: &Rulesets, v6: bool) -> Vec<Probe> {
    let mut probes = vec![];
    let mut seen = std::collections::HashSet::new();
    for t in rs.before.iter().filter(|t| sees(t, &rs.origin, v6)) {
        for p in table_probes(t, v6) {
            if seen.insert(p.2.clone()) {
                probes.push(p);
            }
        }
    }
    probes
}

/// The address maps of one family (sources, destinations) from every prefix the two
/// rulesets match and every probe address; a note for people on each.
fn map_family(rs: &Rulesets, v6: bool, probes: &[Probe], maps: &mut Maps, notes: &mut Vec<String>) {
    for f in [Field::Src, Field::Dst] {
        let nets: Vec<Net> = rules(&rs.before)
            .chain(rules(&rs.after))
            .flat_map(|r| nets_of(r, f))
            .filter(|n| n.v6 == v6)
            .collect();
        let points: Vec<u128> = probes
            .iter()
            .map(|(_, _, p)| if f == Field::Src { p.src } else { p.dst })
            .collect();
        let t = target(v6, f);
        match AddrMap::build(v6, &nets, &points, t) {
            Ok(m) => {
                maps.maps.insert((v6, f), m);
                notes.push(format!(
                    "IPv{} {} → {t}",
                    if v6 { 6 } else { 4 },
                    if f == Field::Src {
                        "sources"
                    } else {
                        "destinations"
                    }
                ));
            }
            Err(e) => notes.push(format!("not mapped: {e}")),
        }
    }
}

/// Probes grouped into classes (one mapped packet each), and the probes not sent.
struct Classifier<'a> {
    rs: &'a Rulesets,
    path: Path,
    /// A rule the model cannot read is in either ruleset.
    opaque: bool,
    maps: &'a Maps,
    classes: Vec<Class>,
    not_sent: Vec<NotSent>,
}

impl Classifier<'_> {
    /// A probe not sent, counted under its reason.
    fn skip(&mut self, reason: String, p: &Packet) {
        match self.not_sent.iter_mut().find(|n| n.reason == reason) {
            Some(n) => n.probes += 1,
            None => self.not_sent.push(NotSent {
                reason,
                probes: 1,
                example: p.to_string(),
            }),
        }
    }

    /// The classes of one family's probes (indices into `classes`), at most
    /// [`MAX_CLASSES`].
    fn round(&mut self, v6: bool, probes: Vec<Probe>) -> Result<Vec<usize>, PlanError> {
        let mut index: HashMap<(u8, u128, u128, u16, u16), usize> = HashMap::new();
        let mut round = vec![];
        for (line, rule, p) in probes {
            if p.iif != "fwb-in" || p.oif != "fwb-out" {
                let why = format!(
                    "they match an interface (in {} out {}) the testbed's packets do not pass",
                    p.iif, p.oif
                );
                self.skip(why, &p);
                continue;
            }
            let (Some(src), Some(dst)) = (
                self.maps.point(v6, Field::Src, p.src),
                self.maps.point(v6, Field::Dst, p.dst),
            ) else {
                let why = format!(
                    "their IPv{} addresses could not be mapped into the benchmark ranges",
                    if v6 { 6 } else { 4 }
                );
                self.skip(why, &p);
                continue;
            };
            let ports = if has_ports(p.proto) {
                (p.sport, p.dport)
            } else {
                (0, 0)
            };
            let (rs, path, opaque) = (self.rs, self.path, self.opaque);
            let e = [
                expect(&rs.before, &rs.origin, &p, path, opaque),
                expect(&rs.after, &rs.origin, &p, path, opaque),
            ];
            let key = (p.proto, src, dst, ports.0, ports.1);
            if let Some(&k) = index.get(&key) {
                let c: &mut Class = &mut self.classes[k];
                if c.expect != e {
                    // INVARIANT: the map keeps every prefix's members; two probes of
                    // one class meet the same rules. A difference is a bug: refuse.
                    return Err(PlanError::SplitClass {
                        first: c.packet.clone(),
                        second: p.to_string(),
                    });
                }
                c.probes += 1;
                continue;
            }
            if round.len() >= MAX_CLASSES {
                self.skip(format!("more than {MAX_CLASSES} classes of one family"), &p);
                continue;
            }
            let addr = |a: u128| -> IpAddr {
                if v6 {
                    IpAddr::V6(a.into())
                } else {
                    IpAddr::V4((a as u32).into())
                }
            };
            index.insert(key, self.classes.len());
            round.push(self.classes.len());
            self.classes.push(Class {
                v6,
                proto: p.proto,
                src: addr(src),
                dst: addr(dst),
                sport: ports.0,
                dport: ports.1,
                line,
                rule,
                packet: p.to_string(),
                probes: 1,
                expect: e,
            });
        }
        Ok(round)
    }
}

/// What the testbed showed: every class sent met the same fate in both rulesets, and
/// the fate the model expects.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Proven {
    pub path: Path,
    pub classes: usize,
    /// Packets sent per class and ruleset.
    pub packets: u32,
    pub delivered: usize,
    pub dropped: usize,
    /// Classes the model cannot decide (a rule it cannot read), compared between the
    /// two rulesets only.
    pub either: usize,
    pub not_sent: Vec<NotSent>,
    pub maps: Vec<String>,
}

/// A class whose packets fared differently: between the rulesets, or against the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refused on the testbed: {probe}, {packet} (sent as proto {proto} {sent}): {seen}; \
     the model says {model}"
)]
pub struct TestbedDisagreement {
    /// `the probe of line 6 (`-A …`)`, or of the policies.
    pub probe: String,
    pub line: usize,
    pub rule: String,
    pub packet: String,
    pub proto: u8,
    pub sent: String,
    /// What each ruleset let through.
    pub seen: String,
    pub model: String,
}

fn fate(e: Expect) -> &'static str {
    match e {
        Expect::Delivered => "delivered",
        Expect::Dropped => "dropped",
        Expect::Either => "either (it depends on a rule it cannot read)",
    }
}

/// Judge the counters: `counts[r][w][k]` is what the observer's rule `k + 1` counted
/// in round `r` with ruleset `w` (0: original, 1: optimised); `packets` were sent per
/// class. A class counts as delivered when any of its packets arrived.
pub fn judge(
    plan: &Plan,
    counts: &[[Vec<u64>; 2]],
    packets: u32,
) -> Result<Proven, Box<TestbedDisagreement>> {
    let mut proven = Proven {
        path: plan.path,
        classes: 0,
        packets,
        delivered: 0,
        dropped: 0,
        either: 0,
        not_sent: plan.not_sent.clone(),
        maps: plan.maps.clone(),
    };
    for (round, c) in plan.rounds.iter().zip(counts) {
        for (k, &ci) in round.classes.iter().enumerate() {
            let class = &plan.classes[ci];
            let got = [
                c[0].get(k).copied().unwrap_or(0),
                c[1].get(k).copied().unwrap_or(0),
            ];
            let seen = got.map(|n| n > 0);
            let model_ok = class.expect.iter().zip(seen).all(|(e, s)| match e {
                Expect::Delivered => s,
                Expect::Dropped => !s,
                Expect::Either => true,
            });
            if seen[0] != seen[1] || !model_ok {
                let word = |s: bool| if s { "delivered" } else { "dropped" };
                let model = if class.expect[0] == class.expect[1] {
                    format!("{} for both", fate(class.expect[0]))
                } else {
                    format!(
                        "{} (original), {} (optimised)",
                        fate(class.expect[0]),
                        fate(class.expect[1])
                    )
                };
                return Err(Box::new(TestbedDisagreement {
                    probe: if class.line == 0 {
                        "the probe of the chains' policies (the default packet)".into()
                    } else {
                        format!(
                            "the probe of {} {} (`{}`)",
                            plan.unit, class.line, class.rule
                        )
                    },
                    line: class.line,
                    rule: class.rule.clone(),
                    packet: class.packet.clone(),
                    proto: class.proto,
                    sent: format!(
                        "{} → {}",
                        std::net::SocketAddr::new(class.src, class.sport),
                        std::net::SocketAddr::new(class.dst, class.dport)
                    ),
                    seen: format!(
                        "the original ruleset {} it ({} of {packets} packets arrived), the \
                         optimised {} it ({} of {packets})",
                        word(seen[0]),
                        got[0],
                        word(seen[1]),
                        got[1]
                    ),
                    model,
                }));
            }
            proven.classes += 1;
            match (class.expect[0], seen[0]) {
                (Expect::Either, _) => proven.either += 1,
                (_, true) => proven.delivered += 1,
                (_, false) => proven.dropped += 1,
            }
        }
    }
    Ok(proven)
}

#[cfg(test)]
mod tests;
