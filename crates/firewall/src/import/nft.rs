//! What nft itself read back from a scratch namespace the user's file was loaded
//! into (`nft -j list ruleset` and `nft -a list ruleset`), rewritten into one JSON
//! batch that replaces fwbench's table: the user's tables become fwbench's one
//! table (family inet; several tables' objects named `FAMILY-TABLE-NAME`), handles
//! dropped, a counter on every rule just before its verdict (the user's own moved
//! there), a drop policy a base chain of fwbench's that jumps to the user's rules and
//! then drops, counted.
//!
//! Must not: run nft (the caller loads the file), install anything.

use super::names::fit_name;
use super::nft_aim::nft_aim;
use super::{file_error, ImportError, MAX_CHAINS, MAX_RULES};
use crate::model::{AimFields, ImportFormat, Imported, ImportedRule, Ip};
use serde_json::{json, Value};
use std::collections::HashMap;

/// nft's name of fwbench's table (family inet).
const TABLE: &str = "fwbench";

/// nft's longest chain name (`NFT_CHAIN_MAXNAMELEN` less its NUL).
const MAX_NFT_CHAIN_NAME: usize = 255;

/// The keys that make a chain a base chain (its hook); a regular chain has none.
const BASE_CHAIN_KEYS: [&str; 6] = ["type", "hook", "prio", "policy", "dev", "devices"];

/// The text of each rule in `nft -a list ruleset` output: (table family, table,
/// chain, handle) → the rule as nft prints it.
pub(crate) fn rule_texts(
    listing: &str,
) -> std::collections::HashMap<(String, String, String, u64), String> {
    let mut out = std::collections::HashMap::new();
    let (mut table, mut chain) = ((String::new(), String::new()), String::new());
    for line in listing.lines() {
        let t = line.trim();
        // nft writes the handle as the line's last comment; a rule's own comment
        // string comes before it.
        let Some((body, handle)) = t.rsplit_once(" # handle ") else {
            continue;
        };
        let Ok(handle) = handle.trim().parse::<u64>() else {
            continue;
        };
        let words: Vec<&str> = body.split_whitespace().collect();
        match words[..] {
            ["table", family, name, "{"] => {
                table = (family.to_owned(), name.to_owned());
                chain.clear();
            }
            ["chain", name, "{"] => chain = name.to_owned(),
            [_, _, "{"] if words[0] != "chain" => chain.clear(),
            _ if !chain.is_empty() => {
                out.insert(
                    (table.0.clone(), table.1.clone(), chain.clone(), handle),
                    body.to_owned(),
                );
            }
            _ => {}
        }
    }
    out
}

/// The object kinds a ruleset listing has besides tables, chains and rules; each is
/// re-created in fwbench's table.
const OBJECTS: [&str; 11] = [
    "set",
    "map",
    "element",
    "counter",
    "quota",
    "ct helper",
    "limit",
    "ct timeout",
    "ct expectation",
    "secmark",
    "synproxy",
];

/// Rewrite what nft read back from the scratch namespace (`json`: `nft -j list
/// ruleset`; `listing`: `nft -a list ruleset`) into one JSON batch that replaces
/// `table inet fwbench`: the user's table becomes fwbench's (family inet), handles
/// are dropped, every rule's counter (fwbench's, or the user's moved there and
/// started at 0) sits just before its verdict, and a base chain with a drop policy
/// becomes a regular chain that a base chain of fwbench's (same hook and priority,
/// policy drop) jumps to before a counted drop. Tables of the other IP version, and of families arp, bridge and netdev, are
/// left out (with a note).
pub fn import_nft_listing(
    source: &str,
    json: &str,
    listing: &str,
    ip: Ip,
) -> Result<Imported, ImportError> {
    let v: Value = serde_json::from_str(json).map_err(|e| ImportError::File {
        file: source.to_owned(),
        why: format!("reading nft's JSON listing: {e}"),
    })?;
    let items = v["nftables"].as_array().cloned().unwrap_or_default();
    let mut notes: Vec<String> = vec![];
    let tables = tables_to_import(&items, ip, &mut notes);
    if let Some((family, name)) = tables.iter().find(|t| dormant(&items, listing, t)) {
        return file_error(
            source,
            format!(
                "table {family} {name} is dormant (`flags dormant`): on the host it filters \
                 nothing, but imported it would filter every packet; refused (remove the \
                 table, or its flag, from the file)"
            ),
        );
    }
    if tables.is_empty() {
        return file_error(
            source,
            format!(
                "no table of family inet or {} to import",
                if ip == Ip::V4 { "ip" } else { "ip6" }
            ),
        );
    }
    let mut l = Listing {
        source,
        ip,
        many: tables.len() > 1,
        tables,
        texts: rule_texts(listing),
        chains: vec![],
        objects: vec![],
        flowtables: vec![],
        rules: vec![],
        rule_list: vec![],
        elements: 0,
        counters_added: 0,
        counters_moved: 0,
        maps: HashMap::new(),
        policies: vec![],
        per_chain: HashMap::new(),
        policy_chains: HashMap::new(),
    };
    l.verdict_maps(&items);
    for item in &items {
        l.item(item)?;
    }
    l.add_policy_rules();
    l.check_limits()?;
    l.notes(&mut notes);
    Ok(l.into_imported(notes))
}

/// The tables of the listing a trial of IP version `ip` imports, (family, name); a
/// note for each left out.
fn tables_to_import(items: &[Value], ip: Ip, notes: &mut Vec<String>) -> Vec<(String, String)> {
    let mut tables = vec![];
    for t in items.iter().filter_map(|i| i.get("table")) {
        let family = t["family"].as_str().unwrap_or("").to_owned();
        let name = t["name"].as_str().unwrap_or("").to_owned();
        match (family.as_str(), ip) {
            ("inet", _) | ("ip", Ip::V4) | ("ip6", Ip::V6) => tables.push((family, name)),
            _ => notes.push(format!(
                "table {family} {name} left out (the trial is IPv{})",
                if ip == Ip::V4 { 4 } else { 6 }
            )),
        }
    }
    tables
}

/// Whether table `(family, name)` has the flag `dormant` (its chains see no packet):
/// in nft's JSON (`"flags": "dormant"` or a list of flags) or in its listing (nft
/// 1.0.6 writes another word than the flag's name in the JSON), where the table's
/// flags are the `flags …` line before its first set, chain or other object.
fn dormant(items: &[Value], listing: &str, (family, name): &(String, String)) -> bool {
    let json = items
        .iter()
        .filter_map(|i| i.get("table"))
        .filter(|t| t["family"] == family.as_str() && t["name"] == name.as_str())
        .any(|t| match &t["flags"] {
            Value::String(f) => f == "dormant",
            Value::Array(fs) => fs.iter().any(|f| f == "dormant"),
            _ => false,
        });
    let mut in_table = false;
    let mut text = false;
    for line in listing.lines() {
        let body = line
            .rsplit_once(" # handle ")
            .map_or(line, |(b, _)| b)
            .trim();
        let words: Vec<&str> = body.split_whitespace().collect();
        match words[..] {
            ["table", f, n, "{"] => in_table = f == family && n == name,
            _ if body.ends_with('{') || body == "}" => in_table = false,
            ["flags", ..] if in_table => {
                text |= body["flags".len()..]
                    .split(',')
                    .any(|f| f.trim() == "dormant");
            }
            _ => {}
        }
    }
    json || text
}

/// The listing being rewritten: the batch's parts so far and the imported rules.
struct Listing<'a> {
    source: &'a str,
    ip: Ip,
    /// The tables imported, (family, name).
    tables: Vec<(String, String)>,
    /// Several tables (firewalld, Docker, libvirt each keep their own) go into
    /// fwbench's one table, their chains, sets and objects named
    /// `<family>-<table>-<name>`; base chains keep their hooks and priorities, so a
    /// packet meets them in the host's order. One table keeps its names.
    many: bool,
    /// Each rule's text as nft prints it, by (family, table, chain, handle).
    texts: HashMap<(String, String, String, u64), String>,
    chains: Vec<Value>,
    objects: Vec<Value>,
    flowtables: Vec<Value>,
    rules: Vec<Value>,
    rule_list: Vec<ImportedRule>,
    elements: usize,
    counters_added: usize,
    /// Rules whose own counter sat elsewhere than just before the verdict (before a
    /// match, `limit`, `quota`, … that can still stop the rule): moved there.
    counters_moved: usize,
    /// The verdicts of each verdict map (fwbench's name), by element, each once.
    maps: HashMap<String, Vec<String>>,
    /// Each base chain with a drop policy, in the listing's order.
    policies: Vec<Policy>,
    /// Rules so far per chain: the next rule's position (counting the list per rule
    /// was quadratic).
    per_chain: HashMap<String, usize>,
    /// fwbench's base chain of each drop policy → the user's chain it jumps to.
    policy_chains: HashMap<String, String>,
}

/// A base chain with a drop policy. On the host a packet that leaves its rules
/// without a verdict — at their end, by `return`, or by a `goto` into a chain that
/// returns — meets the policy; a last drop rule in the chain would be skipped by all
/// but the first. So the user's rules become a regular chain, and a base chain of
/// fwbench's with the same hook and priority and `policy drop` jumps to it and then
/// drops, counted: every one of those paths comes back to it.
struct Policy {
    /// fwbench's name of the user's chain (now a regular chain).
    ours: String,
    /// The user's name of the chain.
    user: String,
    /// The base chain as the listing had it (hook, priority, type, device), renamed.
    base: Value,
}

/// An object of the listing: its table (family, name) and the prefix its names get.
struct Owner {
    family: String,
    name: String,
    prefix: String,
}

impl Listing<'_> {
    /// The user's name of a chain: `FAMILY/TABLE/CHAIN` with several tables.
    fn user_of(&self, family: &str, table: &str, chain: &str) -> String {
        if self.many {
            format!("{family}/{table}/{chain}")
        } else {
            chain.to_owned()
        }
    }

    /// The imported table `o` belongs to (`None`: a table left out).
    fn owner(&self, o: &Value) -> Option<Owner> {
        let (family, name) = self
            .tables
            .iter()
            .find(|(f, n)| o["family"] == f.as_str() && o["table"] == n.as_str())?;
        let prefix = if self.many {
            format!("{family}-{name}-")
        } else {
            String::new()
        };
        Some(Owner {
            family: family.clone(),
            name: name.clone(),
            prefix,
        })
    }

    /// The verdict maps of the imported tables: fwbench's name → the verdicts their
    /// elements give (for the verdict of a rule `… vmap @name`).
    fn verdict_maps(&mut self, items: &[Value]) {
        for o in items.iter().filter_map(|i| i.get("map")) {
            let Some(owner) = self.owner(o) else { continue };
            if o["map"] != "verdict" {
                continue;
            }
            let m = fix(o, &owner.prefix);
            let name = m["name"].as_str().unwrap_or("").to_owned();
            let verdicts = elements_verdicts(&m["elem"], &self.maps);
            self.maps.insert(name, verdicts);
        }
    }

    /// One item of the listing.
    fn item(&mut self, item: &Value) -> Result<(), ImportError> {
        let Some((kind, o)) = item.as_object().and_then(|m| m.iter().next()) else {
            return Ok(());
        };
        if kind == "metainfo" || kind == "table" {
            return Ok(());
        }
        let Some(owner) = self.owner(o) else {
            return Ok(());
        };
        match kind.as_str() {
            "chain" => self.chain(o, &owner),
            "rule" => return self.rule(o, &owner),
            "flowtable" => self
                .flowtables
                .push(json!({ "add": { "flowtable": fix(o, &owner.prefix) } })),
            k if OBJECTS.contains(&k) => {
                if k == "set" {
                    self.elements += o["elem"].as_array().map_or(0, Vec::len);
                }
                self.objects
                    .push(json!({ "add": { k: fix(o, &owner.prefix) } }));
            }
            other => {
                return file_error(
                    self.source,
                    format!("nft listed a `{other}` object, which fwbench cannot re-create"),
                )
            }
        }
        Ok(())
    }

    /// A chain; a base chain with a drop policy becomes a regular chain (and, later,
    /// gets a base chain of fwbench's in front: see [`Policy`]).
    fn chain(&mut self, o: &Value, owner: &Owner) {
        let mut c = fix(o, &owner.prefix);
        if o["policy"] == "drop" && o.get("hook").is_some() {
            let base = c.clone();
            if let Some(m) = c.as_object_mut() {
                for k in BASE_CHAIN_KEYS {
                    m.remove(k);
                }
            }
            let user = o["name"].as_str().unwrap_or("");
            let ours = format!("{}{user}", owner.prefix);
            let user = self.user_of(&owner.family, &owner.name, user);
            self.policies.push(Policy { ours, user, base });
        }
        self.chains.push(json!({ "add": { "chain": c } }));
    }

    /// A rule: renamed, counted, listed with its text, verdict and match fields.
    fn rule(&mut self, o: &Value, owner: &Owner) -> Result<(), ImportError> {
        let mut r = fix(o, &owner.prefix);
        let chain = o["chain"].as_str().unwrap_or("").to_owned();
        let ours = format!("{}{chain}", owner.prefix);
        let expr = r["expr"].as_array_mut().ok_or_else(|| ImportError::File {
            file: self.source.to_owned(),
            why: format!("a rule of chain {chain} has no expressions"),
        })?;
        if let Some(x) = expr.iter().find(|e| e.get("xt").is_some()) {
            return file_error(
                self.source,
                format!(
                    "chain {chain} has a rule with an iptables extension ({}), which \
                     nft cannot re-create; import the iptables-save output instead",
                    x["xt"]["name"].as_str().unwrap_or("xt")
                ),
            );
        }
        match place_counter(expr) {
            CounterPlaced::Added => self.counters_added += 1,
            CounterPlaced::Moved => self.counters_moved += 1,
            CounterPlaced::Kept => {}
        }
        let handle = o["handle"].as_u64().unwrap_or(0);
        let key = (
            owner.family.clone(),
            owner.name.clone(),
            chain.clone(),
            handle,
        );
        let text = self
            .texts
            .get(&key)
            .cloned()
            .unwrap_or_else(|| format!("(rule with handle {handle})"));
        let user_chain = self.user_of(&owner.family, &owner.name, &chain);
        let index = self.per_chain.entry(ours.clone()).or_insert(0);
        *index += 1;
        let rule = ImportedRule {
            chain: ours,
            user_chain,
            index: *index,
            text,
            verdict: nft_verdict(expr, &self.maps),
            policy: false,
            aim: nft_aim(expr, self.ip),
        };
        self.rule_list.push(rule);
        self.rules.push(json!({ "add": { "rule": r } }));
        Ok(())
    }

    /// Each drop policy as a base chain of fwbench's (`fwbench-policy-CHAIN`, with
    /// the user's hook and priority and `policy drop`) whose rules jump to the user's
    /// chain and then drop, counted (see [`Policy`]).
    fn add_policy_rules(&mut self) {
        let mut taken: std::collections::HashSet<String> = self
            .chains
            .iter()
            .filter_map(|c| c["add"]["chain"]["name"].as_str().map(str::to_owned))
            .collect();
        for p in &self.policies {
            let name = fit_name(
                format!("fwbench-policy-{}", p.ours),
                &p.ours,
                MAX_NFT_CHAIN_NAME,
                |n| taken.contains(n),
            );
            taken.insert(name.clone());
            let mut base = p.base.clone();
            base["name"] = json!(name);
            base["policy"] = json!("drop");
            self.chains.push(json!({ "add": { "chain": base } }));
            let counter = json!({ "counter": { "packets": 0, "bytes": 0 } });
            self.rules.push(json!({ "add": { "rule": {
                "family": "inet", "table": TABLE, "chain": name,
                "expr": [counter, { "jump": { "target": p.ours } }],
            } } }));
            self.rules.push(json!({ "add": { "rule": {
                "family": "inet", "table": TABLE, "chain": name,
                "comment": format!("fwbench: policy drop of chain {}", p.user),
                "expr": [counter, { "drop": null }],
            } } }));
            self.rule_list.push(ImportedRule {
                chain: name.clone(),
                user_chain: p.user.clone(),
                index: self.per_chain.get(&p.ours).copied().unwrap_or(0) + 1,
                text: format!("policy drop (of chain {})", p.user),
                verdict: "drop".into(),
                policy: true,
                aim: AimFields::default(),
            });
            self.policy_chains.insert(name, p.ours.clone());
        }
    }

    fn check_limits(&self) -> Result<(), ImportError> {
        for (n, max, what) in [
            (self.chains.len(), MAX_CHAINS, "chains"),
            (self.rule_list.len(), MAX_RULES, "rules"),
        ] {
            if n > max {
                return file_error(
                    self.source,
                    format!("{n} {what}; fwbench imports at most {max}"),
                );
            }
        }
        Ok(())
    }

    /// What the user should know of the rewriting.
    fn notes(&self, notes: &mut Vec<String>) {
        for (family, name) in self.tables.iter().filter(|(f, _)| f != "inet") {
            notes.push(format!(
                "table {family} {name} is installed as table inet {TABLE} (an inet table \
                 checks the protocol family before each address match)"
            ));
        }
        if self.many {
            let names: Vec<String> = self
                .tables
                .iter()
                .map(|(f, n)| format!("{f} {n}"))
                .collect();
            notes.push(format!(
                "{} tables ({}) are installed in table inet {TABLE}: their chains, sets and \
                 objects are named FAMILY-TABLE-NAME, base chains keep their hooks and \
                 priorities (packets meet them in the host's order); `--aim FAMILY/TABLE/CHAIN:N`",
                self.tables.len(),
                names.join(", ")
            ));
        }
        if self.counters_added > 0 {
            notes.push(format!(
                "a counter was added to {} rules that had none (counting costs a little per \
                 matched packet)",
                self.counters_added
            ));
        }
        if self.counters_moved > 0 {
            notes.push(format!(
                "the counter of {} rules was moved to just before the rule's verdict (and \
                 starts at 0), so it counts the packets the verdict took: a match, limit, \
                 quota or other expression after a counter can still stop the rule",
                self.counters_moved
            ));
        }
        for p in &self.policies {
            notes.push(format!(
                "chain {}: policy drop is a base chain of fwbench's (same hook and priority, \
                 policy drop) that jumps to the chain's rules and then drops, counted: every \
                 path out of them without a verdict (the end, a return, a goto into a chain \
                 that returns) is dropped",
                p.user
            ));
        }
    }

    /// The batch (one command a line, so `rules render` can be read and diffed) and
    /// the list of rules.
    fn into_imported(self, notes: Vec<String>) -> Imported {
        let table = json!({ "family": "inet", "name": TABLE });
        let mut batch = vec![
            json!({ "add": { "table": table } }),
            json!({ "delete": { "table": table } }),
            json!({ "add": { "table": table } }),
        ];
        batch.extend(self.chains);
        batch.extend(self.objects);
        batch.extend(self.flowtables);
        let n_rules = self.rules.len();
        batch.extend(self.rules);
        let lines: Vec<String> = batch.iter().map(Value::to_string).collect();
        let text = format!("{{\"nftables\": [\n{}\n]}}", lines.join(",\n"));
        // The user's chains (a policy's rule is listed with the chain it is the
        // policy of).
        let mut seen = std::collections::HashSet::new();
        let chain_names: Vec<(String, String)> = self
            .rule_list
            .iter()
            .map(|r| {
                let ours = self.policy_chains.get(&r.chain).unwrap_or(&r.chain);
                (r.user_chain.clone(), ours.clone())
            })
            .filter(|(_, ours)| seen.insert(ours.clone()))
            .collect();
        Imported {
            format: ImportFormat::Nft,
            source: self.source.to_owned(),
            text: text + "\n",
            rules: n_rules,
            elements: self.elements,
            rule_list: self.rule_list,
            chains: chain_names,
            notes,
            sets: None,
        }
    }
}

/// An object of the user's table as one of fwbench's: family inet, table
/// `fwbench`, no handle, its name and what it names prefixed.
fn fix(o: &Value, prefix: &str) -> Value {
    let mut o = o.clone();
    if let Some(m) = o.as_object_mut() {
        m.insert("family".into(), json!("inet"));
        m.insert("table".into(), json!(TABLE));
        m.remove("handle");
        if !prefix.is_empty() {
            for k in ["name", "chain"] {
                if let Some(Value::String(n)) = m.get_mut(k) {
                    *n = format!("{prefix}{n}");
                }
            }
            for k in ["expr", "elem"] {
                if let Some(v) = m.get_mut(k) {
                    rename_refs(v, prefix);
                }
            }
        }
    }
    o
}

/// Where [`place_counter`] left a rule's counter.
#[derive(Debug, PartialEq, Eq)]
enum CounterPlaced {
    /// The rule had none: fwbench's was added.
    Added,
    /// The user's sat elsewhere than just before the verdict: moved there.
    Moved,
    /// The user's was already just before the verdict.
    Kept,
}

/// Give a rule the counter fwbench reads (its first anonymous counter) just before
/// the verdict: after every match and every statement that can stop the rule
/// (`limit`, `quota`, a set lookup, `ct count`, …), so it counts the packets the
/// verdict applies to. A user's own anonymous counters are taken out and one,
/// started at 0, goes there: a counter before a further match counts packets the
/// verdict did not take (`counter limit rate over 10/second drop` counts every
/// packet, drops some), and one carrying the host's counts would add them to the
/// trial's. A named counter (`counter name "x"`) is left as it is (fwbench reads no
/// named counter) and the rule gets its own.
fn place_counter(expr: &mut Vec<Value>) -> CounterPlaced {
    let anonymous = |e: &Value| e.get("counter").is_some_and(Value::is_object);
    let at = match expr.last() {
        Some(v) if is_verdict(v) => expr.len() - 1,
        _ => expr.len(),
    };
    let own: Vec<usize> = (0..expr.len()).filter(|&i| anonymous(&expr[i])).collect();
    let placed = match own.first() {
        None => CounterPlaced::Added,
        // Nothing but counters between the user's and the verdict.
        Some(&first) if own.len() == at - first => CounterPlaced::Kept,
        Some(_) => CounterPlaced::Moved,
    };
    expr.retain(|e| !anonymous(e));
    expr.insert(
        at - own.len(),
        json!({ "counter": { "packets": 0, "bytes": 0 } }),
    );
    placed
}

/// Rename, in a rule's expressions or a set's elements, what names an object of the
/// same table: `@set` references, jump and goto targets, named stateful objects.
fn rename_refs(v: &mut serde_json::Value, prefix: &str) {
    use serde_json::Value;
    match v {
        Value::String(s) if s.starts_with('@') => *s = format!("@{prefix}{}", &s[1..]),
        Value::Array(a) => a.iter_mut().for_each(|x| rename_refs(x, prefix)),
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    // A set reference first: `{"set": {"op": "update", "set": "@s"}}`
                    // names the set `s` under the key of an object kind.
                    Value::String(s) if s.starts_with('@') => rename_refs(x, prefix),
                    Value::Object(t) if k == "jump" || k == "goto" => {
                        if let Some(Value::String(c)) = t.get_mut("target") {
                            *c = format!("{prefix}{c}");
                        }
                    }
                    Value::String(n) if OBJECTS.contains(&k.as_str()) => {
                        *n = format!("{prefix}{n}");
                    }
                    _ => rename_refs(x, prefix),
                }
            }
        }
        _ => {}
    }
}

/// The keys of nft's verdict statements (a rule's last expression).
const VERDICTS: [&str; 6] = ["accept", "drop", "reject", "return", "queue", "continue"];

/// The statements that end a rule like a verdict: network address translation sets
/// the packet's verdict (accept, or drop when no mapping can be made), so nothing
/// after it in the rule is evaluated — a counter after `dnat to …` never counts.
const NAT_VERDICTS: [&str; 4] = ["snat", "dnat", "masquerade", "redirect"];

/// Whether expression `e` is a rule's verdict: a verdict statement, a jump or goto, a
/// verdict map (`vmap`), or a translation ([`NAT_VERDICTS`]).
fn is_verdict(e: &Value) -> bool {
    VERDICTS
        .iter()
        .chain(&NAT_VERDICTS)
        .chain(&["jump", "goto", "vmap"])
        .any(|k| e.get(k).is_some())
}

/// The verdict of an nft rule's expressions: accept, drop, reject, jump X, goto X,
/// return, a translation (`dnat`, …), a verdict map's verdicts (`vmap {drop,
/// accept}`, see [`super::map_verdict`]; `maps`: each named verdict map's), or empty.
fn nft_verdict(expr: &[Value], maps: &HashMap<String, Vec<String>>) -> String {
    for e in expr.iter().rev() {
        for k in VERDICTS.iter().chain(&NAT_VERDICTS) {
            if e.get(k).is_some() {
                return (*k).into();
            }
        }
        for k in ["jump", "goto"] {
            if let Some(t) = e.get(k) {
                return format!("{k} {}", t["target"].as_str().unwrap_or("?"));
            }
        }
        if let Some(m) = e.get("vmap") {
            let verdicts = match &m["data"] {
                Value::String(name) => name
                    .strip_prefix('@')
                    .and_then(|n| maps.get(n))
                    .cloned()
                    .unwrap_or_else(|| vec!["?".into()]),
                Value::Object(d) => match d.get("set") {
                    Some(elems) => elements_verdicts(elems, maps),
                    None => vec!["?".into()],
                },
                _ => vec!["?".into()],
            };
            return super::map_verdict(&verdicts);
        }
    }
    String::new()
}

/// The verdicts a verdict map's elements (`[[key, verdict], …]`) give, each once, in
/// the elements' order.
fn elements_verdicts(elems: &Value, maps: &HashMap<String, Vec<String>>) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for pair in elems.as_array().into_iter().flatten() {
        let v = pair
            .get(1)
            .map(|v| nft_verdict(std::slice::from_ref(v), maps))
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "?".into());
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixture;
    use super::*;

    #[test]
    fn nft_listing_is_rewritten_into_fwbench_table() {
        let json = fixture("nft-listing.json");
        let text = fixture("nft-listing.txt");
        let imp = import_nft_listing("ruleset.nft", &json, &text, Ip::V4).unwrap();
        assert_eq!(imp.format, ImportFormat::Nft);
        // 10 rules and two for the input chain's drop policy; 6 elements in sets.
        assert_eq!((imp.rules, imp.elements), (12, 6));
        let v: serde_json::Value = serde_json::from_str(&imp.text).unwrap();
        let batch = v["nftables"].as_array().unwrap();
        // Replace fwbench's table and nothing else: every object is in it.
        assert_eq!(
            batch[1],
            serde_json::json!({"delete": {"table": {"family": "inet", "name": "fwbench"}}})
        );
        for cmd in batch {
            let (verb, obj) = cmd.as_object().unwrap().iter().next().unwrap();
            assert!(
                verb == "add" || (verb == "delete" && obj.get("table").is_some()),
                "{cmd}"
            );
            let (_, o) = obj.as_object().unwrap().iter().next().unwrap();
            let table = o.get("table").unwrap_or(&o["name"]);
            assert_eq!(table, "fwbench", "{cmd}");
            assert_eq!(o["family"], "inet", "{cmd}");
            assert!(o.get("handle").is_none(), "{cmd}");
        }
        // Policy drop → the user's rules a regular chain; a base chain of fwbench's
        // at its hook and priority, policy drop, jumps to it and then drops, counted.
        let chain = |name: &str| {
            batch
                .iter()
                .find(|c| c["add"]["chain"]["name"] == name)
                .map(|c| &c["add"]["chain"])
                .unwrap_or_else(|| panic!("no chain {name}"))
        };
        let input = chain("input");
        for k in BASE_CHAIN_KEYS {
            assert!(input.get(k).is_none(), "{input}");
        }
        let base = chain("fwbench-policy-input");
        assert_eq!(
            (&base["hook"], &base["policy"], &base["type"]),
            (&json!("input"), &json!("drop"), &json!("filter"))
        );
        let rules: Vec<&Value> = batch
            .iter()
            .filter(|c| c["add"]["rule"]["chain"] == "fwbench-policy-input")
            .map(|c| &c["add"]["rule"]["expr"])
            .collect();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0][1], json!({ "jump": { "target": "input" } }));
        assert_eq!(rules[1][1], json!({ "drop": null }));
        let last = &imp.rule_list[imp.rule_list.len() - 1];
        assert!(
            last.policy && last.chain == "fwbench-policy-input" && last.index == 6,
            "{last:?}"
        );
        assert!(imp.chains.contains(&("input".into(), "input".into())));
        assert!(!imp
            .chains
            .iter()
            .any(|(_, c)| c.starts_with("fwbench-policy")));
        // Every rule counts, the counter just before its verdict.
        for cmd in batch.iter().filter(|c| c["add"].get("rule").is_some()) {
            let expr = cmd["add"]["rule"]["expr"].as_array().unwrap();
            let counter = expr
                .iter()
                .position(|e| e.get("counter").is_some())
                .unwrap();
            let verdict = nft_verdict(&expr[counter + 1..], &HashMap::new());
            assert!(counter + 2 >= expr.len() && !verdict.is_empty(), "{cmd}");
            assert!(
                expr[..counter].iter().all(|e| e.get("match").is_some()),
                "{cmd}"
            );
        }
        assert!(
            imp.notes
                .iter()
                .any(|n| n.contains("counter was added to 7 rules")),
            "{:?}",
            imp.notes
        );
        // Texts come from nft's own listing, with chain and position.
        let r = &imp.rule_list[6];
        assert_eq!((r.chain.as_str(), r.index), ("forward", 2));
        assert_eq!(r.text, "tcp dport @web_ports accept");
        assert_eq!(r.verdict, "accept");
        assert!(r.aim.unaimable.as_deref().unwrap().contains("named set"));
        let f1 = &imp.rule_list[5].aim;
        assert_eq!(
            (f1.src.as_deref(), f1.dst.as_deref()),
            (Some("198.18.0.0/15"), Some("198.19.0.0/16"))
        );
        assert_eq!(f1.l4.as_deref(), Some("udp"));
        let udp = &imp.rule_list[7];
        assert_eq!(
            (udp.aim.dport, udp.verdict.as_str()),
            (Some((5060, 5060)), "drop")
        );
        assert_eq!(imp.rule_list[3].verdict, "jump ssh_in");
        // The inet table is one for IPv6 trials too.
        assert!(import_nft_listing("f", &json, &text, Ip::V6).is_ok());
    }

    #[test]
    fn several_nft_tables_are_imported_with_their_hooks_and_priorities() {
        // Read back by nft from nft-two-tables.nft: `ip filter` (input, priority 10,
        // a named set, a jump), `inet raw` (input, priority -10), `ip6 six`.
        let json = fixture("nft-two-tables.json");
        let text = fixture("nft-two-tables.txt");
        let imp = import_nft_listing("two.nft", &json, &text, Ip::V4).unwrap();
        let v: serde_json::Value = serde_json::from_str(&imp.text).unwrap();
        let batch = v["nftables"].as_array().unwrap();
        let chain = |n: &str| {
            batch
                .iter()
                .find(|c| c["add"]["chain"]["name"] == n)
                .unwrap_or_else(|| panic!("no chain {n}: {}", imp.text))["add"]["chain"]
                .clone()
        };
        assert_eq!(
            (
                chain("ip-filter-input")["hook"].as_str(),
                chain("ip-filter-input")["prio"].as_i64()
            ),
            (Some("input"), Some(10))
        );
        assert_eq!(chain("inet-raw-input")["prio"], -10);
        assert!(chain("ip-filter-svc").get("hook").is_none());
        // References follow the names: the set, the jump target.
        assert!(
            imp.text.contains(r#""right":"@ip-filter-blocked""#),
            "{}",
            imp.text
        );
        assert!(
            imp.text.contains(r#""target":"ip-filter-svc""#),
            "{}",
            imp.text
        );
        assert!(batch
            .iter()
            .any(|c| c["add"]["set"]["name"] == "ip-filter-blocked"));
        // The IPv6 table is left out of an IPv4 trial; both others are listed.
        assert!(imp
            .notes
            .iter()
            .any(|n| n.contains("table ip6 six left out")));
        assert!(imp
            .notes
            .iter()
            .any(|n| n.starts_with("2 tables (ip filter, inet raw)")));
        let users: Vec<(&str, usize)> = imp
            .rule_list
            .iter()
            .map(|r| (r.user_chain.as_str(), r.index))
            .collect();
        assert_eq!(
            users,
            [
                ("ip/filter/input", 1),
                ("ip/filter/input", 2),
                ("ip/filter/input", 3),
                ("ip/filter/svc", 1),
                ("inet/raw/input", 1),
                ("inet/raw/input", 2),
            ]
        );
        assert_eq!(imp.rule_list[1].verdict, "jump ip-filter-svc");
        assert_eq!(
            imp.rule_list[4].text,
            "udp dport 5000 counter packets 0 bytes 0"
        );
        assert_eq!(
            imp.chains[0],
            ("ip/filter/input".to_owned(), "ip-filter-input".to_owned())
        );
        // An IPv6 trial: inet raw and ip6 six, the latter's drop policy counted.
        let imp = import_nft_listing("two.nft", &json, &text, Ip::V6).unwrap();
        let last = imp.rule_list.last().unwrap();
        assert!(
            last.policy && last.user_chain == "ip6/six/input",
            "{last:?}"
        );
        assert_eq!(last.chain, "fwbench-policy-ip6-six-input");
    }

    /// The expressions of fwbench's copy of the rule of `chain` listed `n`-th.
    fn installed_expr(imp: &Imported, chain: &str, n: usize) -> Vec<Value> {
        let v: Value = serde_json::from_str(&imp.text).unwrap();
        v["nftables"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["add"]["rule"]["chain"] == chain)
            .nth(n)
            .unwrap_or_else(|| panic!("no rule {n} of {chain}: {}", imp.text))["add"]["rule"]
            ["expr"]
            .as_array()
            .unwrap()
            .clone()
    }

    #[test]
    fn a_users_counter_is_moved_to_count_the_verdict_from_0() {
        // Read back by nft from nft-counters-vmap.nft.
        let json = fixture("nft-counters-vmap.json");
        let text = fixture("nft-counters-vmap.txt");
        let imp = import_nft_listing("cv.nft", &json, &text, Ip::V4).unwrap();
        let keys = |expr: &[Value]| -> Vec<String> {
            expr.iter()
                .map(|e| e.as_object().unwrap().keys().next().unwrap().clone())
                .collect()
        };
        let zero = json!({ "counter": { "packets": 0, "bytes": 0 } });
        // `tcp dport 22 counter packets 1234 … limit rate over 10/second drop`: the
        // counter saw every SSH packet, the limit let most of them on; fwbench's copy
        // counts after the limit, from 0 (not the host's 1234).
        let limited = installed_expr(&imp, "input", 0);
        assert_eq!(keys(&limited), ["match", "limit", "counter", "drop"]);
        assert_eq!(limited[2], zero);
        // Already just before its verdict: kept there, from 0.
        let kept = installed_expr(&imp, "input", 1);
        assert_eq!(keys(&kept), ["match", "counter", "drop"]);
        assert_eq!(kept[1], zero);
        // A named counter is the user's object: the rule gets a counter of its own.
        let named = installed_expr(&imp, "input", 4);
        assert_eq!(named[1], json!({ "counter": "cn" }));
        assert_eq!((&named[2], &named[3]), (&zero, &json!({ "accept": null })));
        // A counter after `dnat to …` is never reached: fwbench's goes before it.
        assert_eq!(
            keys(&installed_expr(&imp, "pre", 0)),
            ["match", "counter", "dnat"]
        );
        assert_eq!(imp.rule_list.last().unwrap().verdict, "dnat");
        assert!(
            imp.notes
                .iter()
                .any(|n| n.starts_with("the counter of 1 rules was moved")),
            "{:?}",
            imp.notes
        );
        assert!(
            imp.notes
                .iter()
                .any(|n| n.contains("counter was added to 4 rules")),
            "{:?}",
            imp.notes
        );
    }

    #[test]
    fn a_verdict_map_is_the_rules_verdict_counted_before_it() {
        let json = fixture("nft-counters-vmap.json");
        let text = fixture("nft-counters-vmap.txt");
        let imp = import_nft_listing("cv.nft", &json, &text, Ip::V4).unwrap();
        let rule = |n: usize| &imp.rule_list[n];
        // An anonymous map: its verdicts, each once, in the listing's order.
        assert_eq!(
            (rule(3).place().as_str(), rule(3).verdict.as_str()),
            ("input:3", "vmap {jump svc, drop, accept}")
        );
        assert_eq!(
            super::super::map_verdicts(&rule(3).verdict),
            Some(vec!["jump svc", "drop", "accept"])
        );
        // A named map: its elements' verdicts.
        assert_eq!(rule(4).verdict, "vmap {drop, accept}");
        assert!(!rule(4).drops());
        // The counter goes before the lookup (after it, it would count only the
        // packets no element took).
        let expr = installed_expr(&imp, "input", 3);
        assert_eq!(
            (expr.len(), expr[0].get("counter").is_some()),
            (2, true),
            "{expr:?}"
        );
        assert!(expr[1].get("vmap").is_some());
        // With several tables the map and its reference are renamed alike.
        let two = json.replacen(
            r#"{"table": {"family": "inet", "name": "t", "handle": 1}}"#,
            r#"{"table": {"family": "inet", "name": "t", "handle": 1}}, {"table": {"family": "ip", "name": "u", "handle": 2}}"#,
            1,
        );
        assert_ne!(two, json);
        let imp = import_nft_listing("cv.nft", &two, &text, Ip::V4).unwrap();
        assert_eq!(imp.rule_list[4].verdict, "vmap {drop, accept}");
        assert!(imp.text.contains(r#""data":"@inet-t-m""#), "{}", imp.text);
    }

    #[test]
    fn a_policy_chain_never_takes_a_user_chain_name() {
        let json = r#"{"nftables": [
            {"table": {"family": "inet", "name": "t", "handle": 1}},
            {"chain": {"family": "inet", "table": "t", "name": "input", "handle": 1,
              "type": "filter", "hook": "input", "prio": 0, "policy": "drop"}},
            {"chain": {"family": "inet", "table": "t", "name": "fwbench-policy-input",
              "handle": 2}}
        ]}"#;
        let imp = import_nft_listing("f.nft", json, "", Ip::V4).unwrap();
        let p = imp.rule_list.last().unwrap();
        assert!(
            p.policy && p.chain.starts_with("fwbench-policy-input~"),
            "{p:?}"
        );
        assert_eq!((p.user_chain.as_str(), p.index), ("input", 1));
        assert_eq!(imp.rules, 2);
    }

    #[test]
    fn a_dormant_table_is_refused() {
        // nft 1.0.6's read-back of `table ip t { flags dormant; chain input { type
        // filter hook input priority 0; policy drop; } }`: its JSON names the flag
        // wrongly ("ip"), its listing rightly.
        let json = r#"{"nftables": [
            {"table": {"family": "ip", "name": "t", "handle": 2, "flags": "ip"}},
            {"chain": {"family": "ip", "table": "t", "name": "input", "handle": 1,
              "type": "filter", "hook": "input", "prio": 0, "policy": "drop"}}
        ]}"#;
        let listing = "table ip t { # handle 2\n\tflags dormant\n\n\tchain input { # handle 1\n\
                       \t\ttype filter hook input priority filter; policy drop;\n\t}\n}\n";
        let e = import_nft_listing("f.nft", json, listing, Ip::V4)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "f.nft: table ip t is dormant (`flags dormant`): on the host it filters \
             nothing, but imported it would filter every packet; refused (remove the \
             table, or its flag, from the file)"
        );
        // Newer nft names the flag in the JSON (alone, or in a list).
        for flags in [r#""dormant""#, r#"["dormant", "persist"]"#] {
            let json = json.replace(r#""flags": "ip""#, &format!(r#""flags": {flags}"#));
            let e = import_nft_listing("f.nft", &json, "", Ip::V4).unwrap_err();
            assert!(e.to_string().contains("is dormant"), "{flags}: {e}");
        }
        // Without the flag (and the set's own flags line is not the table's).
        let awake = json.replace(r#", "flags": "ip""#, "");
        let listing = "table ip t { # handle 2\n\tset s { # handle 3\n\t\ttype ipv4_addr\n\
                       \t\tflags dynamic\n\t}\n}\n";
        assert!(import_nft_listing("f.nft", &awake, listing, Ip::V4).is_ok());
        // A dormant table of the other IP version is left out, not refused.
        let six = awake.replace(r#""ip""#, r#""ip6""#).replace(
            r#""name": "t", "handle": 2"#,
            r#""name": "t", "handle": 2, "flags": "dormant""#,
        );
        let both = format!(
            "{{\"nftables\": [{}, {}]}}",
            serde_json::from_str::<Value>(&awake).unwrap()["nftables"][0],
            serde_json::from_str::<Value>(&six).unwrap()["nftables"][0]
        );
        assert!(import_nft_listing("f.nft", &both, "", Ip::V4).is_ok());
    }

    #[test]
    fn a_set_a_rule_updates_is_renamed_as_a_set_with_several_tables() {
        // `update @s { ip saddr }` in table ip filter, beside table inet raw.
        let json = r#"{"nftables": [
            {"table": {"family": "ip", "name": "filter", "handle": 1}},
            {"table": {"family": "inet", "name": "raw", "handle": 2}},
            {"set": {"family": "ip", "name": "s", "table": "filter", "type": "ipv4_addr",
              "handle": 2, "size": 65535, "flags": ["dynamic"]}},
            {"chain": {"family": "ip", "table": "filter", "name": "input", "handle": 1,
              "type": "filter", "hook": "input", "prio": 0, "policy": "accept"}},
            {"rule": {"family": "ip", "table": "filter", "chain": "input", "handle": 3,
              "expr": [{"set": {"op": "update", "elem": {"payload": {"protocol": "ip",
              "field": "saddr"}}, "set": "@s"}}]}}
        ]}"#;
        let imp = import_nft_listing("f.nft", json, "", Ip::V4).unwrap();
        assert!(imp.text.contains(r#""set":"@ip-filter-s""#), "{}", imp.text);
        assert!(!imp.text.contains("ip-filter-@s"), "{}", imp.text);
        assert!(imp.text.contains(r#""name":"ip-filter-s""#), "{}", imp.text);
    }
}
