//! nft rulesets ↔ the analysis's model: what nft itself read back from a scratch
//! namespace (`nft -j list ruleset`, `nft -a list ruleset`) becomes [`Table`]s (one
//! per nft table, named `FAMILY NAME`; base chains carry their policy); the rewritten
//! model is written back as the listing itself with each rewritten chain's rules
//! replaced (sets and maps as anonymous sets), loadable with `nft -f`.
//!
//! Must not: run any program (the caller loads the file into a scratch namespace).

use super::model::{Chain, Cond, Field, Net, Rule, Table, Target, Values};
use super::nft::NftOutputError;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

fn value(v: &Value, port: bool) -> Option<Vec<Values>> {
    if let Some(a) = v.get("set").and_then(Value::as_array) {
        return a
            .iter()
            .map(|x| value(x, port))
            .collect::<Option<Vec<_>>>()
            .map(|vs| vs.into_iter().flatten().collect());
    }
    if port {
        if let Some(p) = v.as_u64() {
            let p = u16::try_from(p).ok()?;
            return Some(vec![Values::Ports(vec![(p, p)])]);
        }
        let r = v.get("range")?.as_array()?;
        let (a, b) = (r.first()?.as_u64()?, r.get(1)?.as_u64()?);
        return Some(vec![Values::Ports(vec![(
            u16::try_from(a).ok()?,
            u16::try_from(b).ok()?,
        )])]);
    }
    if let Some(s) = v.as_str() {
        return Some(vec![Values::Nets(vec![Net::parse(s)?])]);
    }
    let p = v.get("prefix")?;
    let n = Net::parse(&format!("{}/{}", p["addr"].as_str()?, p["len"].as_u64()?))?;
    Some(vec![Values::Nets(vec![n])])
}

/// Many values of one kind → one.
fn union(vs: Vec<Values>) -> Option<Values> {
    let mut nets = vec![];
    let mut ports = vec![];
    for v in vs {
        match v {
            Values::Nets(n) => nets.extend(n),
            Values::Ports(p) => ports.extend(p),
            Values::Proto(_) | Values::Iface(_) => return None,
        }
    }
    match (nets.is_empty(), ports.is_empty()) {
        (false, true) => Some(Values::Nets(nets)),
        (true, false) => Some(Values::Ports(ports)),
        _ => None,
    }
}

fn proto_number(s: &str) -> Option<u8> {
    match s {
        "tcp" => Some(6),
        "udp" => Some(17),
        "icmp" => Some(1),
        "ipv6-icmp" | "icmpv6" => Some(58),
        "sctp" => Some(132),
        _ => None,
    }
}

/// The named sets of a listing, by (family, table, name): whether they hold ports,
/// and their elements as the file gives them — or why the analysis cannot take them
/// as fixed (flags `dynamic` or `timeout`, rules that add or delete elements, an
/// empty set, a concatenated type, an element it cannot read).
type NamedSets = HashMap<(String, String, String), SetRead>;

/// A named set as read: (holds ports, its elements), or why it cannot be read.
type SetRead = Result<(bool, Values), String>;

fn named_sets(items: &[Value]) -> NamedSets {
    let key = |o: &Value, name: &str| {
        (
            o["family"].as_str().unwrap_or("").to_owned(),
            o["table"].as_str().unwrap_or("").to_owned(),
            name.to_owned(),
        )
    };
    // Sets a rule changes (`add @s { ip saddr }`, `update @s …`, `delete @s …`).
    let mut changed = std::collections::HashSet::new();
    for item in items {
        let Some(r) = item.get("rule") else { continue };
        for e in r["expr"].as_array().into_iter().flatten() {
            if let Some(name) = e["set"]["set"].as_str().and_then(|s| s.strip_prefix('@')) {
                changed.insert(key(r, name));
            }
        }
    }
    let mut out = NamedSets::new();
    for item in items {
        let Some(o) = item.get("set") else { continue };
        let name = o["name"].as_str().unwrap_or("");
        let k = key(o, name);
        let flags: Vec<&str> = o["flags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let port = match o["type"].as_str() {
            Some("ipv4_addr" | "ipv6_addr") => Ok(false),
            Some("inet_service") => Ok(true),
            _ => Err(format!("of type {}", o["type"])),
        };
        let read = port.and_then(|port| {
            if flags.contains(&"dynamic")
                || flags.contains(&"timeout")
                || o.get("timeout").is_some()
            {
                return Err("its elements change at runtime (flags dynamic or timeout)".into());
            }
            if changed.contains(&k) {
                return Err("rules add or delete its elements".into());
            }
            let elems = o["elem"]
                .as_array()
                .filter(|e| !e.is_empty())
                .ok_or("empty in the file (filled at runtime?)".to_owned())?;
            let mut vs = vec![];
            for e in elems {
                // An element with a counter or comment: `{"elem": {"val": …}}`.
                let e = e.get("elem").map_or(e, |x| &x["val"]);
                vs.extend(
                    value(e, port)
                        .ok_or_else(|| format!("an element the analysis cannot read ({e})"))?,
                );
            }
            let values = union(vs).ok_or("elements of mixed kinds".to_owned())?;
            Ok((port, values))
        });
        out.insert(k, read);
    }
    out
}

/// Statements the analysis does not model that change no address or port of a
/// packet (every other one may: `ip daddr set …`, `tcp dport set …`, `dnat` …).
const KEEPS_PACKET: [&str; 5] = ["reject", "limit", "quota", "set", "notrack"];

/// Whether a statement the analysis does not model may change a packet's addresses
/// or ports: every one but those of [`KEEPS_PACKET`] and a `mangle` of a meta or ct
/// key (`meta mark set 1`, `ct mark set …`).
fn may_rewrite(statement: &str, x: &Value) -> bool {
    match statement {
        "mangle" => !(x["key"].get("meta").is_some() || x["key"].get("ct").is_some()),
        other => !KEEPS_PACKET.contains(&other),
    }
}

/// One rule read: its conds or why not, its target, and whether it may change a
/// packet and let it go on ([`Rule::rewrites`]).
struct RuleRead {
    conds: Result<BTreeMap<Field, Cond>, String>,
    target: Target,
    rewrites: bool,
}

/// One rule's expressions → [`RuleRead`]; `sets` gives a named set of the rule's
/// table by name.
fn rule_of(expr: &[Value], sets: &dyn Fn(&str) -> Option<SetRead>) -> RuleRead {
    let mut m = Matches {
        conds: BTreeMap::new(),
        why: None,
        sets,
    };
    let mut target = Target::Continue(None);
    let mut rewrites = false;
    // A statement whose effect the model's target cannot carry beside a verdict (a
    // log, a named counter): a merge or move rebuilding the rule would lose it.
    let mut effect: Option<String> = None;
    for e in expr {
        let Some((k, x)) = e.as_object().and_then(|m| m.iter().next()) else {
            continue;
        };
        match k.as_str() {
            "counter" if x.is_string() => {
                effect.get_or_insert(format!("named counter {x}"));
            }
            "counter" => {}
            "accept" => target = Target::Verdict("ACCEPT".into()),
            "drop" => target = Target::Verdict("DROP".into()),
            "return" => target = Target::Return,
            "jump" => target = Target::Jump(x["target"].as_str().unwrap_or("").into()),
            "goto" => target = Target::Goto(x["target"].as_str().unwrap_or("").into()),
            "log" => {
                effect.get_or_insert("`log`".into());
                target = Target::Continue(Some(format!("log {x}")));
            }
            "match" => m.one(x),
            other => {
                rewrites |= may_rewrite(other, x);
                m.opaque(format!("statement `{other}` the analysis does not model"))
            }
        }
    }
    if let Some(effect) = effect.filter(|_| !matches!(target, Target::Continue(_))) {
        m.opaque(format!(
            "{effect} with a verdict: kept as it is (a merge or move would lose it)"
        ));
    }
    RuleRead {
        conds: m.why.map_or(Ok(m.conds), Err),
        target,
        rewrites,
    }
}

/// A rule's matches being read: the conditions so far, or why the rule is opaque.
struct Matches<'a> {
    conds: BTreeMap<Field, Cond>,
    why: Option<String>,
    sets: &'a dyn Fn(&str) -> Option<SetRead>,
}

impl Matches<'_> {
    /// The first reason the rule cannot be read counts.
    fn opaque(&mut self, why: String) {
        self.why.get_or_insert(why);
    }

    fn put(&mut self, f: Field, c: Cond) {
        if let Some(old) = self.conds.get(&f) {
            if *old != c {
                self.opaque(format!("{} matched twice", f.name()));
            }
        } else {
            self.conds.insert(f, c);
        }
    }

    /// One `match` expression.
    fn one(&mut self, x: &Value) {
        let neg = match x["op"].as_str() {
            Some("==" | "in") => false,
            Some("!=") => true,
            other => return self.opaque(format!("match operator {}", other.unwrap_or("?"))),
        };
        let (l, r) = (&x["left"], &x["right"]);
        if let Some(p) = l.get("payload") {
            self.payload(p, r, neg);
        } else if let Some(m) = l.get("meta") {
            self.meta(m["key"].as_str().unwrap_or(""), r, neg);
        } else if l.get("ct").is_some() {
            self.opaque("stateful match `ct`".into());
        } else {
            self.opaque(format!("match {l}"));
        }
    }

    /// A match on a header field (`ip saddr`, `tcp dport` …) against `r`.
    fn payload(&mut self, p: &Value, r: &Value, neg: bool) {
        let proto = p["protocol"].as_str().unwrap_or("");
        let field = p["field"].as_str().unwrap_or("");
        let f = match (proto, field) {
            ("ip" | "ip6", "saddr") => Field::Src,
            ("ip" | "ip6", "daddr") => Field::Dst,
            (_, "sport") => Field::Sport,
            (_, "dport") => Field::Dport,
            _ => return self.opaque(format!("match on {proto} {field}")),
        };
        let port = matches!(f, Field::Sport | Field::Dport);
        if port {
            match proto_number(proto) {
                Some(n) => self.put(Field::Proto, Cond::new(false, Values::Proto(n))),
                None if proto == "th" => {}
                None => return self.opaque(format!("match on {proto} {field}")),
            }
        }
        if let Some(name) = r.as_str().and_then(|s| s.strip_prefix('@')) {
            return self.named_set(f, port, name, neg);
        }
        match value(r, port).and_then(union) {
            Some(values) => self.put(f, Cond::new(neg, values)),
            None => self.opaque(format!(
                "{proto} {field} matched against a value the analysis cannot read"
            )),
        }
    }

    /// A match of field `f` against the named set `@name` of the rule's table.
    fn named_set(&mut self, f: Field, port: bool, name: &str, neg: bool) {
        match (self.sets)(name) {
            Some(Ok((p, values))) if p == port => self.put(
                f,
                Cond {
                    neg,
                    values,
                    set: Some(name.to_owned()),
                },
            ),
            Some(Ok(_)) => self.opaque(format!("named set @{name} of another type")),
            Some(Err(e)) => self.opaque(format!("named set @{name}: {e}")),
            None => self.opaque(format!("named set @{name} not in the file")),
        }
    }

    /// A match on meta `key` (the protocol, the interfaces) against `r`.
    fn meta(&mut self, key: &str, r: &Value, neg: bool) {
        match (key, r) {
            ("l4proto", Value::String(s)) if proto_number(s).is_some() => self.put(
                Field::Proto,
                Cond::new(neg, Values::Proto(proto_number(s).unwrap_or(0))),
            ),
            ("iifname" | "oifname", Value::String(s)) if !s.contains('*') => self.put(
                if key == "iifname" {
                    Field::In
                } else {
                    Field::Out
                },
                Cond::new(neg, Values::Iface(s.clone())),
            ),
            _ => self.opaque(format!("match on meta {key}")),
        }
    }
}

/// One table of the listing, with each rule's handle (to write it back).
#[derive(Clone)]
pub struct NftTable {
    pub family: String,
    pub name: String,
    pub table: Table,
}

/// The table `family name` read so far.
fn table_mut<'a>(out: &'a mut [NftTable], family: &str, name: &str) -> Option<&'a mut NftTable> {
    out.iter_mut()
        .find(|t| t.family == family && t.name == name)
}

/// Why nft's listing cannot be read into the model.
#[derive(Debug, thiserror::Error)]
pub enum ListingError {
    #[error("reading nft's JSON listing: {0}")]
    Json(#[from] serde_json::Error),
    /// The JSON has a rule the text listing (`nft -a list ruleset`) lacks.
    #[error("no text for rule {handle} of chain {chain}")]
    NoText { handle: u64, chain: String },
}

/// The listing's tables as the model; each rule's `line` is its nft handle.
pub fn parse(json: &str, listing: &str) -> Result<Vec<NftTable>, ListingError> {
    let v: Value = serde_json::from_str(json)?;
    let items = v["nftables"].as_array().cloned().unwrap_or_default();
    let texts = crate::import::rule_texts(listing);
    let sets = named_sets(&items);
    let mut out: Vec<NftTable> = vec![];
    for item in &items {
        let Some((kind, o)) = item.as_object().and_then(|m| m.iter().next()) else {
            continue;
        };
        let family = o["family"].as_str().unwrap_or("").to_owned();
        let tname = o
            .get("table")
            .or_else(|| o.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        match kind.as_str() {
            "table" => out.push(NftTable {
                family: family.clone(),
                name: tname.clone(),
                table: Table {
                    name: format!("{family} {tname}"),
                    chains: vec![],
                },
            }),
            "chain" => {
                let Some(t) = table_mut(&mut out, &family, &tname) else {
                    continue;
                };
                let name = o["name"].as_str().unwrap_or("").to_owned();
                t.table.chains.push(Chain {
                    name,
                    decl: String::new(),
                    policy: o.get("hook").map(|_| {
                        o["policy"]
                            .as_str()
                            .unwrap_or("accept")
                            .to_ascii_uppercase()
                    }),
                    hook: o["hook"].as_str().map(|h| {
                        let prio = o["prio"].as_i64().unwrap_or(0);
                        (
                            h.to_owned(),
                            prio.clamp(i32::MIN.into(), i32::MAX.into()) as i32,
                        )
                    }),
                    rules: vec![],
                });
            }
            "rule" => {
                let Some(t) = table_mut(&mut out, &family, &tname) else {
                    continue;
                };
                let chain = o["chain"].as_str().unwrap_or("").to_owned();
                let handle = o["handle"].as_u64().unwrap_or(0);
                let expr = o["expr"].as_array().cloned().unwrap_or_default();
                let lookup = |name: &str| {
                    sets.get(&(family.clone(), tname.clone(), name.to_owned()))
                        .cloned()
                };
                let RuleRead {
                    conds,
                    target,
                    rewrites,
                } = rule_of(&expr, &lookup);
                let text = texts
                    .get(&(family.clone(), tname.clone(), chain.clone(), handle))
                    .cloned()
                    .ok_or_else(|| ListingError::NoText {
                        handle,
                        chain: chain.clone(),
                    })?;
                let Some(c) = t.table.chains.iter_mut().find(|c| c.name == chain) else {
                    continue;
                };
                let (conds, opaque) = match conds {
                    Ok(c) => (Some(c), None),
                    Err(w) => (None, Some(w)),
                };
                // The packets its counter holds, when the file carries them.
                let packets = expr
                    .iter()
                    .find_map(|e| e.get("counter")?.get("packets")?.as_u64());
                c.rules.push(Rule {
                    line: handle as usize,
                    text,
                    conds,
                    opaque,
                    target,
                    comment: o.get("comment").map(|c| c.to_string()),
                    packets,
                    rewrites,
                });
            }
            _ => {}
        }
    }
    for t in &mut out {
        t.table.mark_rewriting_jumps();
    }
    Ok(out)
}

/// The listing with each chain's rules replaced by the rewritten ones (kept rules by
/// their own text, new ones rendered), handles dropped: `nft -f` input.
pub fn render(listing: &str, tables: &[NftTable]) -> Result<String, NftOutputError> {
    let mut out = String::new();
    let mut table: Option<&NftTable> = None;
    let mut chain: Option<&Chain> = None;
    let mut skipping = false;
    for line in listing.lines() {
        let body = line.rsplit_once(" # handle ").map_or(line, |(b, _)| b);
        let t = body.trim();
        let words: Vec<&str> = t.split_whitespace().collect();
        match words[..] {
            ["table", family, name, "{"] => {
                table = tables.iter().find(|x| x.family == family && x.name == name);
                out.push_str(body);
                out.push('\n');
                continue;
            }
            ["chain", name, "{"] => {
                chain = table.and_then(|x| x.table.chains.iter().find(|c| c.name == name));
                skipping = false;
                out.push_str(body);
                out.push('\n');
                continue;
            }
            _ => {}
        }
        if let Some(c) = chain {
            let is_rule = line.contains(" # handle ");
            if t == "}" {
                if !skipping {
                    write_rules(&mut out, c, table.map_or("", |x| x.family.as_str()))?;
                }
                chain = None;
                out.push_str(body);
                out.push('\n');
                continue;
            }
            if is_rule {
                if !skipping {
                    write_rules(&mut out, c, table.map_or("", |x| x.family.as_str()))?;
                    skipping = true;
                }
                continue;
            }
        }
        out.push_str(body);
        out.push('\n');
    }
    Ok(out)
}

fn write_rules(out: &mut String, c: &Chain, family: &str) -> Result<(), NftOutputError> {
    for r in &c.rules {
        out.push_str("\t\t");
        if r.line != 0 {
            out.push_str(&r.text);
        } else {
            out.push_str(&super::nft::rule(r, family == "ip6")?);
        }
        out.push('\n');
    }
    Ok(())
}
