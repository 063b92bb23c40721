//! The analysis's view of a ruleset: rules whose matches it understands (protocol,
//! addresses, ports, interfaces) as sets of values, the rest kept as opaque text.
//!
//! Owns: the match model, what a rule does to a packet, coverage, disjointness and
//! commutation of two rules, and evaluating a packet through a table's chains.
//! Must not: read files, run programs or know any engine's syntax.

use std::collections::{BTreeMap, HashMap, HashSet};

/// An address prefix of either family (IPv4 in the low 32 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Net {
    pub v6: bool,
    pub addr: u128,
    pub len: u8,
}

impl Net {
    fn bits(self) -> u8 {
        if self.v6 {
            128
        } else {
            32
        }
    }
    fn mask(self) -> u128 {
        let host = u32::from(self.bits() - self.len);
        let all = if self.v6 {
            u128::MAX
        } else {
            u128::from(u32::MAX)
        };
        if host >= 128 {
            0
        } else {
            all & !((1u128 << host) - 1)
        }
    }
    /// First and last address.
    pub fn range(self) -> (u128, u128) {
        let first = self.addr & self.mask();
        let all = if self.v6 {
            u128::MAX
        } else {
            u128::from(u32::MAX)
        };
        (first, first | (all & !self.mask()))
    }
    pub fn contains(self, v6: bool, a: u128) -> bool {
        let (lo, hi) = self.range();
        v6 == self.v6 && lo <= a && a <= hi
    }
    /// Parse `a.b.c.d[/len]` or `x::y[/len]` (a dotted mask too).
    pub fn parse(s: &str) -> Option<Net> {
        let (a, l) = s.split_once('/').map_or((s, None), |(a, l)| (a, Some(l)));
        let ip: std::net::IpAddr = a.parse().ok()?;
        let (v6, addr) = match ip {
            std::net::IpAddr::V4(v) => (false, u128::from(u32::from(v))),
            std::net::IpAddr::V6(v) => (true, u128::from(v)),
        };
        let bits = if v6 { 128 } else { 32 };
        let len = match l {
            None => bits,
            Some(l) => match l.parse::<u8>() {
                Ok(n) if n <= bits => n,
                Ok(_) => return None,
                Err(_) => {
                    let m: std::net::Ipv4Addr = l.parse().ok()?;
                    let m = u32::from(m);
                    if v6 || m.leading_ones() + m.trailing_zeros() != 32 {
                        return None;
                    }
                    m.leading_ones() as u8
                }
            },
        };
        Some(Net { v6, addr, len }.normal())
    }
    fn normal(self) -> Net {
        Net {
            addr: self.range().0,
            ..self
        }
    }
}

impl std::fmt::Display for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.v6 {
            write!(f, "{}/{}", std::net::Ipv6Addr::from(self.addr), self.len)
        } else {
            write!(
                f,
                "{}/{}",
                std::net::Ipv4Addr::from(self.addr as u32),
                self.len
            )
        }
    }
}

/// A match field the analysis understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    Proto,
    Src,
    Dst,
    Sport,
    Dport,
    In,
    Out,
}

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::Proto => "protocol",
            Field::Src => "source address",
            Field::Dst => "destination address",
            Field::Sport => "source port",
            Field::Dport => "destination port",
            Field::In => "input interface",
            Field::Out => "output interface",
        }
    }
}

/// Port ranges as text: `80`, or first and last joined by `sep` (`1024:2047` for
/// iptables, `1024-2047` for nft).
pub fn port_ranges(ranges: &[(u16, u16)], sep: char) -> Vec<String> {
    ranges
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}{sep}{b}")
            }
        })
        .collect()
}

/// The values one field matches (a set: any element matches).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Values {
    Proto(u8),
    Nets(Vec<Net>),
    Ports(Vec<(u16, u16)>),
    Iface(String),
}

impl Values {
    /// Whether the set holds every value of `o` (sound, not complete: a union of
    /// smaller prefixes covering a larger one is not seen).
    fn superset_of(&self, o: &Values) -> bool {
        match (self, o) {
            (Values::Proto(a), Values::Proto(b)) => a == b,
            (Values::Iface(a), Values::Iface(b)) => a == b,
            (Values::Nets(a), Values::Nets(b)) => b.iter().all(|n| {
                let (lo, hi) = n.range();
                a.iter()
                    .any(|m| m.contains(n.v6, lo) && m.contains(n.v6, hi))
            }),
            (Values::Ports(a), Values::Ports(b)) => b
                .iter()
                .all(|&(lo, hi)| a.iter().any(|&(l, h)| l <= lo && hi <= h)),
            _ => false,
        }
    }
    /// Whether no value is in both sets.
    fn disjoint(&self, o: &Values) -> bool {
        match (self, o) {
            (Values::Proto(a), Values::Proto(b)) => a != b,
            (Values::Iface(a), Values::Iface(b)) => a != b,
            (Values::Nets(a), Values::Nets(b)) => a.iter().all(|m| {
                let (l1, h1) = m.range();
                b.iter().all(|n| {
                    let (l2, h2) = n.range();
                    m.v6 != n.v6 || h1 < l2 || h2 < l1
                })
            }),
            (Values::Ports(a), Values::Ports(b)) => a
                .iter()
                .all(|&(l1, h1)| b.iter().all(|&(l2, h2)| h1 < l2 || h2 < l1)),
            _ => false,
        }
    }
    /// Whether a packet of this family (`true`: IPv6) can match the values at all,
    /// negated or not: an address match sees only packets of its own family (nft
    /// puts `meta nfproto` before `ip saddr …` in an inet table, so `ip saddr != X`
    /// never matches an IPv6 packet; iptables and ip6tables each see one family).
    fn family_fits(&self, v6: bool) -> bool {
        match self {
            Values::Nets(ns) => ns.iter().any(|n| n.v6 == v6),
            Values::Proto(_) | Values::Ports(_) | Values::Iface(_) => true,
        }
    }
    /// Whether every packet `self` may match by family is of a family `o` sees.
    fn family_within(&self, o: &Values) -> bool {
        match (self, o) {
            (Values::Nets(a), Values::Nets(_)) => a.iter().all(|n| o.family_fits(n.v6)),
            _ => true,
        }
    }
    /// Whether the packet's field `f` has one of the values (of the packet's family:
    /// an address of the other family is never held).
    pub fn holds(&self, p: &Packet, f: Field) -> bool {
        match self {
            Values::Proto(x) => p.proto == *x,
            Values::Nets(ns) => {
                let a = if f == Field::Src { p.src } else { p.dst };
                ns.iter().any(|n| n.contains(p.v6, a))
            }
            Values::Ports(rs) => {
                let x = if f == Field::Sport { p.sport } else { p.dport };
                rs.iter().any(|&(l, h)| l <= x && x <= h)
            }
            Values::Iface(i) => {
                let x = if f == Field::In { &p.iif } else { &p.oif };
                x == i
            }
        }
    }
}

/// One field's match: its values, maybe negated (`! -s …`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cond {
    pub neg: bool,
    pub values: Values,
    /// The nft named set the values are (`ip saddr @blocked`, with the elements the
    /// file gives it): written back by its name, never merged into another set.
    pub set: Option<String>,
}

impl Cond {
    pub fn new(neg: bool, values: Values) -> Cond {
        Cond {
            neg,
            values,
            set: None,
        }
    }
    /// Whether the packet's field `f` matches: of the values' family, and holding one
    /// of them (not holding any, negated).
    pub fn matches(&self, p: &Packet, f: Field) -> bool {
        self.values.family_fits(p.v6) && self.values.holds(p, f) != self.neg
    }
}

/// What a rule does when it matches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// Ends the packet's walk through the table: ACCEPT, DROP, REJECT … (the text).
    Verdict(String),
    /// Leaves this chain for the calling one.
    Return,
    /// Jumps into a user chain and comes back if it returns.
    Jump(String),
    /// Goes to a user chain and never comes back here.
    Goto(String),
    /// Does something and goes on (LOG, MARK, a counter-only rule: `None` text).
    Continue(Option<String>),
    /// An nft verdict map on one field: the entry holding the packet's value gives
    /// the target (never `Continue` or another map); no entry: the rule does not
    /// match and the walk goes on. Entries are pairwise disjoint.
    Map(Field, Vec<(Values, Target)>),
}

impl Target {
    /// The chains a packet may enter by this target (jump or goto).
    fn entered(&self) -> Vec<&str> {
        match self {
            Target::Jump(t) | Target::Goto(t) => vec![t.as_str()],
            Target::Map(_, entries) => entries.iter().flat_map(|(_, t)| t.entered()).collect(),
            Target::Verdict(_) | Target::Return | Target::Continue(_) => vec![],
        }
    }
    /// Whether the packet never reaches the next rule of the chain.
    pub fn terminal(&self) -> bool {
        match self {
            Target::Verdict(_) | Target::Return | Target::Goto(_) => true,
            Target::Jump(_) | Target::Continue(_) | Target::Map(..) => false,
        }
    }
}

/// A rule as the analysis sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Line of the file it came from (0 for a rule the rewrite made).
    pub line: usize,
    /// Its text in the file (for messages and to write it back unchanged).
    pub text: String,
    /// Understood matches (`None`: the rule has a match the analysis cannot read, named).
    pub conds: Option<BTreeMap<Field, Cond>>,
    /// Why the rule is opaque (a match the model does not know).
    pub opaque: Option<String>,
    pub target: Target,
    /// Text kept with the rule that does not change what it matches (a comment).
    pub comment: Option<String>,
    /// Packets counted by the live box (`iptables-save -c`), if known.
    pub packets: Option<u64>,
    /// Whether the rule may change a packet's addresses or ports and let it go on
    /// down the chain (nft `ip daddr set …` or another statement the analysis does
    /// not model, an iptables target that neither ends the walk nor only logs or
    /// marks, a jump into a chain holding such a rule:
    /// [`Table::mark_rewriting_jumps`]). Nothing moves across it, and no rule after
    /// it is removed as shadowed by one before it.
    pub rewrites: bool,
}

impl Rule {
    /// Whether every packet this rule matches is matched by `o` too (`o` covers it).
    pub fn covered_by(&self, o: &Rule) -> bool {
        let (Some(a), Some(b)) = (&self.conds, &o.conds) else {
            return false;
        };
        b.iter().all(|(f, oc)| match a.get(f) {
            None => false,
            Some(c) => match (oc.neg, c.neg) {
                (false, false) => oc.values.superset_of(&c.values),
                (true, false) => {
                    oc.values.disjoint(&c.values) && c.values.family_within(&oc.values)
                }
                (true, true) => {
                    c.values.superset_of(&oc.values) && c.values.family_within(&oc.values)
                }
                (false, true) => false,
            },
        })
    }
    /// Whether no packet matches both rules.
    pub fn disjoint(&self, o: &Rule) -> bool {
        let (Some(a), Some(b)) = (&self.conds, &o.conds) else {
            return false;
        };
        a.iter().any(|(f, c)| match b.get(f) {
            None => false,
            Some(oc) => match (c.neg, oc.neg) {
                (false, false) => c.values.disjoint(&oc.values),
                (true, false) => c.values.superset_of(&oc.values),
                (false, true) => oc.values.superset_of(&c.values),
                (true, true) => false,
            },
        })
    }
    /// Whether the two rules may swap places without changing any packet's fate:
    /// both understood, neither may rewrite a packet, and either no packet matches
    /// both or both end the walk the same way.
    pub fn commutes_with(&self, o: &Rule) -> bool {
        self.conds.is_some()
            && o.conds.is_some()
            && !self.rewrites
            && !o.rewrites
            && (self.disjoint(o) || (self.target.terminal() && self.target == o.target))
    }
    /// Whether the rule matches the packet (`None`: the rule is opaque).
    pub fn matches(&self, p: &Packet) -> Option<bool> {
        let c = self.conds.as_ref()?;
        Some(c.iter().all(|(f, c)| c.matches(p, *f)))
    }
}

/// A chain: its rules, and its policy if it is a built-in chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub name: String,
    /// The declaration line as written (`:INPUT DROP [0:0]`).
    pub decl: String,
    pub policy: Option<String>,
    /// A base chain's hook (`input`, `prerouting` …) and priority.
    pub hook: Option<(String, i32)>,
    pub rules: Vec<Rule>,
}

/// One table (`*filter`): its chains in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub name: String,
    pub chains: Vec<Chain>,
}

/// A probe packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Packet {
    pub v6: bool,
    pub proto: u8,
    pub src: u128,
    pub dst: u128,
    pub sport: u16,
    pub dport: u16,
    pub iif: String,
    pub oif: String,
}

impl std::fmt::Display for Packet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = |x: u128| Net {
            v6: self.v6,
            addr: x,
            len: if self.v6 { 128 } else { 32 },
        };
        let host = |x: u128| {
            let s = a(x).to_string();
            let h = s.rsplit_once('/').map_or(s.clone(), |(h, _)| h.to_owned());
            if self.v6 {
                format!("[{h}]")
            } else {
                h
            }
        };
        write!(
            f,
            "proto {} {}:{} → {}:{} in {} out {}",
            self.proto,
            host(self.src),
            self.sport,
            host(self.dst),
            self.dport,
            self.iif,
            self.oif
        )
    }
}

/// What a table does to a packet entering a built-in chain: the final verdict and
/// every non-terminal rule (LOG, counter, MARK …) it passed, and every rule the
/// analysis cannot read that it was taken to match (nft `log … drop`), by text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fate {
    pub verdict: String,
    pub passed: Vec<String>,
}

/// Deepest chain nesting followed (iptables' own limit is lower in practice).
const MAX_DEPTH: usize = 64;

impl Table {
    pub fn chain(&self, name: &str) -> Option<&Chain> {
        self.chains.iter().find(|c| c.name == name)
    }

    /// Mark each jump into a chain that may rewrite a packet as rewriting: a chain
    /// may when one of its rules does, or jumps or goes to a chain that may (at any
    /// depth). A goto itself is not marked: no packet it takes comes back.
    pub fn mark_rewriting_jumps(&mut self) {
        let index: HashMap<&str, usize> = self
            .chains
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.as_str(), i))
            .collect();
        // The chains entering each chain (by jump or goto).
        let mut callers: Vec<Vec<usize>> = vec![vec![]; self.chains.len()];
        for (i, c) in self.chains.iter().enumerate() {
            for t in c.rules.iter().flat_map(|r| r.target.entered()) {
                if let Some(&j) = index.get(t) {
                    callers[j].push(i);
                }
            }
        }
        let mut rewriting: Vec<bool> = self
            .chains
            .iter()
            .map(|c| c.rules.iter().any(|r| r.rewrites))
            .collect();
        let mut todo: Vec<usize> = (0..self.chains.len()).filter(|&i| rewriting[i]).collect();
        while let Some(i) = todo.pop() {
            for &c in &callers[i] {
                if !rewriting[c] {
                    rewriting[c] = true;
                    todo.push(c);
                }
            }
        }
        let names: HashSet<String> = self
            .chains
            .iter()
            .zip(&rewriting)
            .filter(|(_, &w)| w)
            .map(|(c, _)| c.name.clone())
            .collect();
        for r in self.chains.iter_mut().flat_map(|c| &mut c.rules) {
            let jumps = match &r.target {
                Target::Jump(t) => vec![t],
                Target::Map(_, entries) => entries
                    .iter()
                    .filter_map(|(_, t)| match t {
                        Target::Jump(t) => Some(t),
                        _ => None,
                    })
                    .collect(),
                _ => vec![],
            };
            if jumps.iter().any(|t| names.contains(*t)) {
                r.rewrites = true;
            }
        }
    }

    /// The packet's fate from built-in chain `start`; opaque rules match when `opaque`
    /// is true (both answers are checked by the caller).
    pub fn fate(&self, start: &str, p: &Packet, opaque: bool) -> Fate {
        let mut passed = vec![];
        let verdict = match self.walk(start, p, opaque, 0, &mut passed) {
            Walk::Verdict(v) => v,
            Walk::Return => match self.chain(start).and_then(|c| c.policy.clone()) {
                Some(p) => format!("policy {p}"),
                None => "return".into(),
            },
        };
        Fate { verdict, passed }
    }

    fn walk(
        &self,
        chain: &str,
        p: &Packet,
        opaque: bool,
        depth: usize,
        passed: &mut Vec<String>,
    ) -> Walk {
        let Some(c) = self.chain(chain) else {
            return Walk::Verdict(format!("unknown chain {chain}"));
        };
        if depth > MAX_DEPTH {
            return Walk::Verdict("chains nested too deep".into());
        }
        for r in &c.rules {
            if !r.matches(p).unwrap_or(opaque) {
                continue;
            }
            // An opaque rule taken as matching counts as met, whatever it does (a log
            // before its verdict): a rewrite must keep every packet's meeting with it.
            if r.conds.is_none() && !matches!(r.target, Target::Continue(_)) {
                passed.push(r.text.clone());
            }
            let target = match &r.target {
                Target::Map(f, entries) => match entries.iter().find(|(v, _)| v.holds(p, *f)) {
                    Some((_, t)) => t,
                    None => continue,
                },
                t => t,
            };
            match target {
                Target::Verdict(v) => return Walk::Verdict(v.clone()),
                Target::Return => return Walk::Return,
                Target::Goto(t) => return self.walk(t, p, opaque, depth + 1, passed),
                Target::Jump(t) => match self.walk(t, p, opaque, depth + 1, passed) {
                    Walk::Return => {}
                    v => return v,
                },
                Target::Continue(_) => passed.push(r.text.clone()),
                // INVARIANT: a map's entries are never maps (the rewrite builds them).
                Target::Map(..) => return Walk::Verdict("nested verdict map".into()),
            }
        }
        Walk::Return
    }
}

enum Walk {
    Verdict(String),
    Return,
}
