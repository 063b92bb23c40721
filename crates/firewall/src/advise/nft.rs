//! The model written as an nft ruleset (`nft -f` input): one table per iptables
//! table (`table ip advise-filter`), each built-in chain a base chain at its table's
//! hook and priority, address and port sets as anonymous sets. Used to measure the
//! original and the optimised ruleset with the same engine (`rules advise --as nft`).
//!
//! Must not: write a rule it cannot translate exactly (a rule the model cannot read,
//! a target nft has no equal for): that is an error naming the line.

use super::model::{port_ranges, Chain, Cond, Field, Rule, Table, Target, Values};
use std::fmt::Write as _;

/// Hook priority of each iptables table's chains in nft's names.
fn priority(table: &str) -> Option<&'static str> {
    match table {
        "raw" => Some("raw"),
        "mangle" => Some("mangle"),
        "filter" => Some("filter"),
        "security" => Some("security"),
        _ => None,
    }
}

fn values(v: &Values) -> String {
    let list: Vec<String> = match v {
        Values::Nets(ns) => ns
            .iter()
            .map(|n| {
                let full = if n.v6 { 128 } else { 32 };
                let s = n.to_string();
                if n.len == full {
                    s.rsplit_once('/').map_or(s.clone(), |(h, _)| h.to_owned())
                } else {
                    s
                }
            })
            .collect(),
        Values::Ports(ps) => port_ranges(ps, '-'),
        Values::Proto(p) => vec![p.to_string()],
        Values::Iface(i) => vec![format!("\"{i}\"")],
    };
    if list.len() == 1 {
        list[0].clone()
    } else {
        format!("{{ {} }}", list.join(", "))
    }
}

/// Why a ruleset cannot be written as nft exactly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NftOutputError {
    /// A rule nft cannot be given exactly.
    #[error("line {line} (`{text}`): {why}")]
    Rule {
        line: usize,
        text: String,
        why: String,
    },
    /// A table with rules whose chains nft's filter chains cannot stand for.
    #[error("table {0} has rules; nft output covers raw, mangle, filter and security")]
    Table(String),
}

/// One rule as nft text (`v6`: the family of addresses when the rule has none).
pub(super) fn rule(r: &Rule, v6: bool) -> Result<String, NftOutputError> {
    let why = |why: String| {
        Err(NftOutputError::Rule {
            line: r.line,
            text: r.text.clone(),
            why,
        })
    };
    let Some(conds) = &r.conds else {
        return why(format!(
            "{}; nft output needs every rule understood",
            r.opaque.clone().unwrap_or_default()
        ));
    };
    let mut s = String::new();
    let map_values = match &r.target {
        Target::Map(_, entries) => entries.iter().map(|(v, _)| v).collect(),
        _ => vec![],
    };
    let v6 = conds
        .values()
        .map(|c| &c.values)
        .chain(map_values)
        .find_map(|v| match v {
            Values::Nets(n) => n.first().map(|n| n.v6),
            _ => None,
        })
        .unwrap_or(v6);
    let l3 = if v6 { "ip6" } else { "ip" };
    let op = |c: &Cond| if c.neg { "!= " } else { "" };
    let proto = match conds.get(&Field::Proto) {
        Some(Cond {
            neg: false,
            values: Values::Proto(p @ (6 | 17 | 132)),
            ..
        }) => match p {
            6 => "tcp",
            17 => "udp",
            _ => "sctp",
        },
        _ => "th",
    };
    let key = |f: &Field| match f {
        Field::Proto => "meta l4proto".to_owned(),
        Field::Src => format!("{l3} saddr"),
        Field::Dst => format!("{l3} daddr"),
        Field::Sport => format!("{proto} sport"),
        Field::Dport => format!("{proto} dport"),
        Field::In => "iifname".to_owned(),
        Field::Out => "oifname".to_owned(),
    };
    for (f, c) in conds {
        let v = match &c.set {
            Some(name) => format!("@{name}"),
            None => values(&c.values),
        };
        let _ = write!(s, "{} {}{v} ", key(f), op(c));
    }
    s.push_str("counter");
    if let Some(cm) = &r.comment {
        let _ = write!(s, " comment {cm}");
    }
    if let Target::Map(f, entries) = &r.target {
        let mut items = vec![];
        for (v, t) in entries {
            let verdict = match t {
                Target::Verdict(v) if v == "ACCEPT" => "accept".to_owned(),
                Target::Verdict(v) if v == "DROP" => "drop".to_owned(),
                Target::Return => "return".to_owned(),
                Target::Jump(c) => format!("jump {c}"),
                Target::Goto(c) => format!("goto {c}"),
                Target::Verdict(_) | Target::Continue(_) | Target::Map(..) => {
                    return why("a verdict map holds accept, drop, return, jump, goto".into())
                }
            };
            // Each value of the entry is its own key (a set `{ a, b }` is two keys).
            let vs = values(v);
            let vs = vs.trim_start_matches("{ ").trim_end_matches(" }");
            items.extend(vs.split(", ").map(|k| format!("{k} : {verdict}")));
        }
        let _ = write!(s, " {} vmap {{ {} }}", key(f), items.join(", "));
        return Ok(s);
    }
    match &r.target {
        Target::Verdict(v) => match v.as_str() {
            "ACCEPT" => s.push_str(" accept"),
            "DROP" => s.push_str(" drop"),
            "REJECT" | "REJECT --reject-with icmp-port-unreachable" => s.push_str(" reject"),
            "REJECT --reject-with tcp-reset" => s.push_str(" reject with tcp reset"),
            other => return why(format!("target {other} has no exact nft equal here")),
        },
        Target::Return => s.push_str(" return"),
        Target::Jump(c) => {
            let _ = write!(s, " jump {c}");
        }
        Target::Goto(c) => {
            let _ = write!(s, " goto {c}");
        }
        Target::Continue(None) => {}
        Target::Continue(Some(t)) => match t.strip_prefix("LOG") {
            Some("") => s.push_str(" log"),
            Some(rest) => match rest.trim().strip_prefix("--log-prefix ") {
                Some(p) if p.starts_with('"') && p.ends_with('"') && !p[1..].contains(" --") => {
                    let _ = write!(s, " log prefix {p}");
                }
                _ => return why(format!("target {t} has no exact nft equal here")),
            },
            None => return why(format!("target {t} has no exact nft equal here")),
        },
        // Written above.
        Target::Map(..) => {}
    }
    Ok(s)
}

fn chain(out: &mut String, table: &str, c: &Chain, v6: bool) -> Result<(), NftOutputError> {
    let _ = writeln!(out, "\tchain {} {{", c.name);
    if let Some(p) = &c.policy {
        // INVARIANT: only tables with a priority get here.
        let prio = priority(table).unwrap_or("filter");
        let _ = writeln!(
            out,
            "\t\ttype filter hook {} priority {prio}; policy {};",
            c.name.to_ascii_lowercase(),
            p.to_ascii_lowercase()
        );
    }
    for r in &c.rules {
        let _ = writeln!(out, "\t\t{}", rule(r, v6)?);
    }
    out.push_str("\t}\n");
    Ok(())
}

/// The tables as an `nft -f` file; an error names the first rule nft cannot be
/// given exactly. Tables without rules are left out; `nat` (and any table nft's
/// filter chains cannot stand for) with rules is refused.
pub fn render(tables: &[Table], v6: bool) -> Result<String, NftOutputError> {
    let mut out = String::new();
    let family = if v6 { "ip6" } else { "ip" };
    for t in tables {
        if t.chains.iter().all(|c| c.rules.is_empty()) {
            continue;
        }
        if priority(&t.name).is_none() {
            return Err(NftOutputError::Table(t.name.clone()));
        }
        let _ = writeln!(out, "table {family} advise-{} {{", t.name);
        for c in &t.chains {
            chain(&mut out, &t.name, c, v6)?;
        }
        out.push_str("}\n");
    }
    Ok(out)
}
