//! `iptables-save` text ↔ the analysis's model: reading every table of the file
//! into [`Table`]s (matches the model knows become [`Cond`]s, every other match makes
//! the rule opaque and is named), and writing a rewritten model back as
//! `iptables-restore` input plus the `ipset restore` input of its sets.
//!
//! Must not: run any program.

use super::model::{port_ranges, Chain, Cond, Field, Net, Rule, Table, Target, Values};
use crate::import::{builtins, ImportError};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

fn proto_number(p: &str) -> Option<u8> {
    match p.to_ascii_lowercase().as_str() {
        "tcp" => Some(6),
        "udp" => Some(17),
        "icmp" => Some(1),
        "icmpv6" | "ipv6-icmp" => Some(58),
        "sctp" => Some(132),
        "udplite" => Some(136),
        "gre" => Some(47),
        "esp" => Some(50),
        "ah" => Some(51),
        other => other.parse().ok(),
    }
}

fn proto_name(p: u8) -> String {
    match p {
        6 => "tcp".into(),
        17 => "udp".into(),
        1 => "icmp".into(),
        58 => "ipv6-icmp".into(),
        132 => "sctp".into(),
        n => n.to_string(),
    }
}

/// The netfilter priority of an iptables table's built-in chain (`NF_IP_PRI_*`).
fn priority(table: &str, chain: &str) -> i32 {
    match (table, chain) {
        ("raw", _) => -300,
        ("mangle", _) => -150,
        ("nat", "PREROUTING" | "OUTPUT") => -100,
        ("nat", _) => 100,
        ("security", _) => 50,
        _ => 0,
    }
}

/// `a`, `a:b`, `:b`, `a:` as an inclusive range.
fn port_range(s: &str) -> Option<(u16, u16)> {
    match s.split_once(':') {
        Some((a, b)) => {
            let lo = if a.is_empty() { 0 } else { a.parse().ok()? };
            let hi = if b.is_empty() { 65535 } else { b.parse().ok()? };
            (lo <= hi).then_some((lo, hi))
        }
        None => s.parse().ok().map(|p| (p, p)),
    }
}

/// The file's tables, each with its chains and rules, and the file's IP version
/// (`true`: IPv6, from the first address seen; IPv4 without any).
pub fn parse(source: &str, text: &str) -> Result<(Vec<Table>, bool), ImportError> {
    // The importer's checks first: control bytes, limits, declarations, families.
    // A file is of one IP version: the error of the reading that got further counts.
    if let Err(e4) = crate::import::import(source, text, crate::Ip::V4) {
        if let Err(e6) = crate::import::import(source, text, crate::Ip::V6) {
            let line = |e: &ImportError| match e {
                ImportError::Line { line, .. } => *line,
                ImportError::File { .. } => usize::MAX,
            };
            return Err(if line(&e6) > line(&e4) { e6 } else { e4 });
        }
    }
    let mut tables: Vec<Table> = vec![];
    // Each table's chains by name (a search of the chains per rule made 200 000
    // chains quadratic).
    let mut indices: Vec<HashMap<String, usize>> = vec![];
    let mut v6 = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let err = |why: String| ImportError::Line {
            file: source.to_owned(),
            line: n + 1,
            why,
        };
        if line.is_empty() || line.starts_with('#') || line == "COMMIT" {
            continue;
        }
        if let Some(t) = line.strip_prefix('*') {
            tables.push(Table {
                name: t.to_owned(),
                chains: vec![],
            });
            indices.push(HashMap::new());
            continue;
        }
        // INVARIANT: the importer accepted the file, so a `*table` came first.
        let t = tables.last_mut().expect("a table section");
        if let Some(decl) = line.strip_prefix(':') {
            let mut w = decl.split_whitespace();
            let name = w.next().unwrap_or_default().to_owned();
            let policy = w.next().filter(|p| *p != "-").map(str::to_owned);
            let hook = builtins(&t.name)
                .contains(&name.as_str())
                .then(|| (name.to_ascii_lowercase(), priority(&t.name, &name)));
            if let Some(index) = indices.last_mut() {
                index.insert(name.clone(), t.chains.len());
            }
            t.chains.push(Chain {
                name: name.clone(),
                decl: format!(":{name} {} [0:0]", policy.as_deref().unwrap_or("-")),
                policy,
                hook,
                rules: vec![],
            });
            continue;
        }
        let (packets, rule) = match line.strip_prefix('[') {
            Some(rest) => {
                let (c, r) = rest
                    .split_once(']')
                    .ok_or_else(|| err("bad counter".into()))?;
                (
                    c.split_once(':').and_then(|(p, _)| p.parse().ok()),
                    r.trim_start(),
                )
            }
            None => (None, line),
        };
        // INVARIANT: a `*table` line came first, so there is a last index.
        let index = indices.last().expect("a table section");
        let (chain, r) = parse_rule(n + 1, rule, packets, &|c| index.contains_key(c), &mut v6);
        // INVARIANT: the importer checked every `-A` names a declared chain.
        let at = *index.get(&chain).expect("declared");
        t.chains[at].rules.push(r);
    }
    for t in &mut tables {
        t.mark_rewriting_jumps();
    }
    for t in &tables {
        for c in &t.chains {
            if c.policy.is_some() && !builtins(&t.name).contains(&c.name.as_str()) {
                return Err(ImportError::File {
                    file: source.to_owned(),
                    why: format!("chain {} has a policy but is not built in", c.name),
                });
            }
        }
    }
    Ok((tables, v6.unwrap_or(false)))
}

/// One `-A CHAIN …` line (without its counter) → (chain, rule). `is_chain`: whether
/// a name is a chain of the rule's table (a jump to it, not a target).
fn parse_rule(
    line: usize,
    text: &str,
    packets: Option<u64>,
    is_chain: &dyn Fn(&str) -> bool,
    v6: &mut Option<bool>,
) -> (String, Rule) {
    let rest = text.strip_prefix("-A ").unwrap_or(text);
    // INVARIANT: the importer split this line into words already.
    let ws: Vec<&str> = crate::import::words(rest)
        .unwrap_or_default()
        .into_iter()
        .map(|(a, b)| &rest[a..b])
        .collect();
    let chain = ws.first().copied().unwrap_or_default().to_owned();
    let mut r = RuleReader {
        conds: BTreeMap::new(),
        opaque: None,
        comment: None,
        target: Target::Continue(None),
        neg: false,
        v6,
    };
    let mut i = 1;
    while i < ws.len() {
        if ws[i] == "!" {
            r.neg = true;
            i += 1;
            continue;
        }
        match r.option(&ws, i, is_chain) {
            Some(words) => i += words,
            None => break,
        }
        r.neg = false;
    }
    // A target that goes on (not a verdict, a return or a chain) may change the
    // packet's addresses or ports (DNPT, SNPT …), except those that only log, mark
    // or trace it.
    let rewrites = match &r.target {
        Target::Continue(Some(t)) => !matches!(
            t.split_whitespace().next(),
            Some("LOG" | "NFLOG" | "MARK" | "CONNMARK" | "CLASSIFY" | "TRACE" | "NOTRACK")
        ),
        _ => false,
    };
    let rule = Rule {
        line,
        text: format!("-A {rest}"),
        conds: if r.opaque.is_some() {
            None
        } else {
            Some(r.conds)
        },
        opaque: r.opaque,
        target: r.target,
        comment: r.comment,
        packets,
        rewrites,
    };
    (chain, rule)
}

/// A rule's options being read into the model.
struct RuleReader<'a> {
    conds: BTreeMap<Field, Cond>,
    /// Why the rule is opaque: the first option the analysis does not model.
    opaque: Option<String>,
    comment: Option<String>,
    target: Target,
    /// After a `!`.
    neg: bool,
    /// The file's IP version, from the first address seen.
    v6: &'a mut Option<bool>,
}

impl RuleReader<'_> {
    fn unknown(&mut self, why: String) {
        self.opaque.get_or_insert(why);
    }

    /// Field `f` matched with values `v` (`None`: the option `w val` not understood).
    fn put(&mut self, f: Field, v: Option<Values>, w: &str, val: Option<&str>) {
        match v {
            Some(values) => {
                if self.conds.insert(f, Cond::new(self.neg, values)).is_some() {
                    self.unknown(format!("{} matched twice", f.name()));
                }
            }
            None => self.unknown(format!("`{w} {}` not understood", val.unwrap_or(""))),
        }
    }

    /// The option at `ws[i]`: how many words it took (`None`: the target, which ends
    /// the rule).
    fn option(&mut self, ws: &[&str], i: usize, is_chain: &dyn Fn(&str) -> bool) -> Option<usize> {
        let w = ws[i];
        let val = ws.get(i + 1).copied();
        match w {
            "-p" | "--protocol" => {
                let v = val.and_then(proto_number).map(Values::Proto);
                if val != Some("all") {
                    self.put(Field::Proto, v, w, val)
                }
            }
            "-s" | "--source" | "-d" | "--destination" => {
                let f = if w.starts_with("-s") || w == "--source" {
                    Field::Src
                } else {
                    Field::Dst
                };
                let nets: Option<Vec<Net>> =
                    val.and_then(|v| v.split(',').map(Net::parse).collect());
                if let Some(n) = nets.as_ref().and_then(|n| n.first()) {
                    self.v6.get_or_insert(n.v6);
                }
                self.put(f, nets.map(Values::Nets), w, val)
            }
            "-i" | "--in-interface" | "-o" | "--out-interface" => {
                let f = if w.starts_with("-i") || w == "--in-interface" {
                    Field::In
                } else {
                    Field::Out
                };
                let v = val
                    .filter(|v| !v.ends_with('+'))
                    .map(|v| Values::Iface(v.to_owned()));
                self.put(f, v, w, val)
            }
            "-m" | "--match" => self.match_module(val),
            "--dport"
            | "--destination-port"
            | "--sport"
            | "--source-port"
            | "--dports"
            | "--destination-ports"
            | "--sports"
            | "--source-ports" => {
                let f = if w.starts_with("--d") {
                    Field::Dport
                } else {
                    Field::Sport
                };
                let rs: Option<Vec<(u16, u16)>> =
                    val.and_then(|v| v.split(',').map(port_range).collect());
                self.put(f, rs.map(Values::Ports), w, val)
            }
            "--comment" => self.comment = val.map(str::to_owned),
            "-j" | "--jump" | "-g" | "--goto" => {
                let goto = w == "-g" || w == "--goto";
                let opts = ws.get(i + 2..).unwrap_or_default().join(" ");
                self.target = target(goto, val.unwrap_or_default(), &opts, is_chain);
                return None;
            }
            other => {
                self.unknown(format!("option `{other}` the analysis does not model"));
                // An option without a value (`--syn`, `-f`): the next word is the
                // next option, `-j` included.
                if val.is_some_and(|v| v.starts_with('-') || v == "!") {
                    return Some(1);
                }
            }
        }
        Some(2)
    }

    /// `-m NAME`: the matches whose options are read here, or why the rule is opaque.
    fn match_module(&mut self, val: Option<&str>) {
        match val {
            Some("tcp" | "udp" | "sctp" | "multiport" | "comment") => {}
            Some("conntrack" | "state" | "recent" | "limit" | "hashlimit" | "connlimit") => {
                self.unknown(format!("stateful match `-m {}`", val.unwrap_or("")))
            }
            other => self.unknown(format!(
                "match `-m {}` the analysis does not model",
                other.unwrap_or("")
            )),
        }
    }
}

/// The target of `-j t opts` (`goto`: `-g`): a chain of the table, a verdict, a
/// return, or a non-terminal target such as `LOG`.
fn target(goto: bool, t: &str, opts: &str, is_chain: &dyn Fn(&str) -> bool) -> Target {
    if goto {
        Target::Goto(t.to_owned())
    } else if is_chain(t) {
        Target::Jump(t.to_owned())
    } else {
        match t {
            "ACCEPT" | "DROP" | "REJECT" => {
                Target::Verdict(format!("{t} {opts}").trim_end().to_owned())
            }
            "RETURN" => Target::Return,
            _ => Target::Continue(Some(format!("{t} {opts}").trim_end().to_owned())),
        }
    }
}

/// A rewritten rule's `iptables` options (the set names for merged address sets are
/// given by `set_of`).
fn rule_text(chain: &str, r: &Rule, set_name: Option<&str>) -> String {
    let Some(conds) = &r.conds else {
        return r.text.clone();
    };
    let mut s = format!("-A {chain}");
    let neg = |c: &Cond| if c.neg { "! " } else { "" };
    for (f, c) in conds {
        match (&c.values, f) {
            (Values::Nets(ns), Field::Src | Field::Dst) => {
                let dir = if *f == Field::Src { "src" } else { "dst" };
                match (ns.len(), set_name) {
                    (1, _) | (_, None) => {
                        let list: Vec<String> = ns.iter().map(Net::to_string).collect();
                        let o = if *f == Field::Src { "-s" } else { "-d" };
                        let _ = write!(s, " {}{o} {}", neg(c), list.join(","));
                    }
                    (_, Some(set)) => {
                        let _ = write!(s, " -m set {}--match-set {set} {dir}", neg(c));
                    }
                }
            }
            (Values::Iface(i), _) => {
                let o = if *f == Field::In { "-i" } else { "-o" };
                let _ = write!(s, " {}{o} {i}", neg(c));
            }
            (Values::Proto(p), _) => {
                let _ = write!(s, " {}-p {}", neg(c), proto_name(*p));
            }
            (Values::Ports(_), _) | (Values::Nets(_), _) => {}
        }
    }
    let proto = match conds.get(&Field::Proto) {
        Some(Cond {
            neg: false,
            values: Values::Proto(p),
            ..
        }) => proto_name(*p),
        _ => String::new(),
    };
    // Single ports or ranges in one `-m tcp` (or udp …) match; a list in a
    // `-m multiport` match of its own per direction (one multiport match takes one
    // of --sports and --dports: iptables-restore refuses both in one).
    let (lists, single): (Vec<_>, Vec<_>) = conds
        .iter()
        .filter_map(|(f, c)| match &c.values {
            Values::Ports(rs) => Some((f, c, rs)),
            _ => None,
        })
        .partition(|(_, _, rs)| rs.len() > 1);
    if !single.is_empty() {
        let _ = write!(s, " -m {proto}");
        for (f, c, rs) in single {
            let o = if *f == Field::Sport {
                "--sport"
            } else {
                "--dport"
            };
            let _ = write!(s, " {}{o} {}", neg(c), port_ranges(rs, ':').join(","));
        }
    }
    for (f, c, rs) in lists {
        let o = if *f == Field::Sport {
            "--sports"
        } else {
            "--dports"
        };
        let _ = write!(
            s,
            " -m multiport {}{o} {}",
            neg(c),
            port_ranges(rs, ':').join(",")
        );
    }
    if let Some(cm) = &r.comment {
        let _ = write!(s, " -m comment --comment {cm}");
    }
    match &r.target {
        Target::Verdict(v) => {
            let _ = write!(s, " -j {v}");
        }
        Target::Return => s.push_str(" -j RETURN"),
        Target::Jump(t) => {
            let _ = write!(s, " -j {t}");
        }
        Target::Goto(t) => {
            let _ = write!(s, " -g {t}");
        }
        Target::Continue(Some(t)) => {
            let _ = write!(s, " -j {t}");
        }
        Target::Continue(None) => {}
        // INVARIANT: verdict maps are built for nft output only (rewrite's `nft`).
        Target::Map(..) => {}
    }
    s
}

/// `iptables-restore` input for the tables, and `ipset restore` input for the address
/// sets of rules the rewrite merged (`sets`: (table, chain, rule index) → set name).
pub fn render(
    tables: &[Table],
    v6: bool,
    sets: &[(String, String, usize, String)],
) -> (String, String) {
    let mut out = String::new();
    let mut ipset = String::new();
    for t in tables {
        let _ = writeln!(out, "*{}", t.name);
        for c in &t.chains {
            let _ = writeln!(out, "{}", c.decl);
        }
        for c in &t.chains {
            for (k, r) in c.rules.iter().enumerate() {
                let set = sets
                    .iter()
                    .find(|(tt, cc, i, _)| *tt == t.name && *cc == c.name && *i == k)
                    .map(|s| s.3.as_str());
                if r.line != 0 {
                    let _ = writeln!(out, "{}", r.text);
                    continue;
                }
                let _ = writeln!(out, "{}", rule_text(&c.name, r, set));
                if let (Some(set), Some(conds)) = (set, &r.conds) {
                    let nets = conds.values().find_map(|c| match &c.values {
                        Values::Nets(n) if n.len() > 1 => Some(n),
                        _ => None,
                    });
                    if let Some(nets) = nets {
                        let _ = writeln!(
                            ipset,
                            "create {set} hash:net family {} maxelem {}",
                            if v6 { "inet6" } else { "inet" },
                            nets.len().max(65536)
                        );
                        for n in nets {
                            let _ = writeln!(ipset, "add {set} {n}");
                        }
                    }
                }
            }
        }
        out.push_str("COMMIT\n");
    }
    (out, ipset)
}
