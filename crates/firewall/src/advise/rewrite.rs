//! The rewrites, chain by chain, each only where it provably keeps every packet's
//! fate: duplicates and shadowed rules removed, runs of rules differing in one field
//! merged into one rule with a set (moving a later member up only across rules it
//! commutes with), hot rules moved earlier across rules they commute with.
//!
//! Must not: touch a rule it cannot read (opaque rules stay where they are and
//! nothing crosses them), logging or counting rules (kept), or anything but the
//! chain at hand.

use super::model::{Cond, Field, Rule, Table, Target, Values};
use super::{Change, ChangeKind};

/// How far a run is looked for past its first rule, and how many rules it may cross
/// (bounds the work on chains of thousands of rules that merge nothing).
const WINDOW: usize = 100_000;
const MAX_CROSSED: usize = 64;

/// Most ports one `multiport` match takes (a range counts twice).
const MULTIPORT_MAX: usize = 15;

/// A rule that may be merged with others: understood, ends the walk.
fn mergeable(r: &Rule) -> bool {
    r.conds.is_some() && r.target.terminal()
}

/// The one field in which two rules differ, if it is one a set can hold.
fn one_difference(a: &Rule, b: &Rule) -> Option<Field> {
    let (ca, cb) = (a.conds.as_ref()?, b.conds.as_ref()?);
    let diff: std::collections::BTreeSet<Field> = ca
        .keys()
        .chain(cb.keys())
        .filter(|f| ca.get(f) != cb.get(f))
        .copied()
        .collect();
    let mut diff = diff.into_iter();
    let (Some(f), None) = (diff.next(), diff.next()) else {
        return None;
    };
    let (x, y) = (ca.get(&f)?, cb.get(&f)?);
    let settable = matches!(
        (&x.values, &y.values),
        (Values::Nets(_), Values::Nets(_)) | (Values::Ports(_), Values::Ports(_))
    );
    // A named set stays what it is: nothing is merged into it or out of it.
    let named = x.set.is_some() || y.set.is_some();
    (settable && !x.neg && !y.neg && !named).then_some(f)
}

fn port_weight(p: &[(u16, u16)]) -> usize {
    p.iter().map(|(a, b)| if a == b { 1 } else { 2 }).sum()
}

/// Rewrite one table; returns it, what changed, and the set name of each merged
/// address rule: (chain, index in the rewritten chain, set name).
pub fn rewrite(
    t: &Table,
    next_set: &mut usize,
    changes: &mut Vec<Change>,
    nft: bool,
) -> (Table, Vec<(String, usize, String)>) {
    let mut out = t.clone();
    let mut sets = vec![];
    let unit = if nft { "handle" } else { "line" };
    for c in &mut out.chains {
        let at = |what: &str| format!("{} {}", t.name, what);
        let chain_name = at(&c.name);
        // 1. Duplicates and shadowed rules.
        let mut kept: Vec<Rule> = Vec::with_capacity(c.rules.len());
        for r in std::mem::take(&mut c.rules) {
            if mergeable(&r) {
                if let Some(k) = kept
                    .iter()
                    .find(|k| mergeable(k) && r.covered_by(k))
                    .cloned()
                {
                    let dup = k.conds == r.conds && k.target == r.target;
                    // Coverage that rests on a named set's elements says so.
                    let sets: Vec<String> = k
                        .conds
                        .iter()
                        .flat_map(|c| c.values())
                        .filter_map(|c| c.set.as_ref().map(|s| format!("@{s}")))
                        .collect();
                    let sets = if sets.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (with the elements the file gives {}: a change to them at \
                             runtime is not covered)",
                            sets.join(", ")
                        )
                    };
                    changes.push(Change {
                        kind: if dup {
                            ChangeKind::Duplicate
                        } else {
                            ChangeKind::Shadowed
                        },
                        chain: chain_name.clone(),
                        lines: vec![r.line],
                        reason: if dup {
                            format!("duplicate of {unit} {} (`{}`): removed", k.line, k.text)
                        } else {
                            format!(
                                "never matches: {unit} {} (`{}`) takes every packet it would{sets}: removed",
                                k.line, k.text
                            )
                        },
                    });
                    continue;
                }
            }
            kept.push(r);
        }
        // 2. Runs of rules differing in one field → one rule with a set.
        let n = kept.len();
        let mut used = vec![false; n];
        let mut merged: Vec<Rule> = Vec::with_capacity(n);
        for i in 0..n {
            if used[i] {
                continue;
            }
            used[i] = true;
            let head = &kept[i];
            if !mergeable(head) {
                merged.push(head.clone());
                continue;
            }
            let mut members = vec![i];
            let mut field: Option<Field> = None;
            let mut between: Vec<usize> = vec![];
            for j in i + 1..n.min(i + WINDOW) {
                if used[j] {
                    continue;
                }
                let r = &kept[j];
                if r.conds.is_none() || between.len() > MAX_CROSSED {
                    break; // nothing crosses a rule the analysis cannot read
                }
                let f = (mergeable(r) && r.target == head.target && r.comment == head.comment)
                    .then(|| one_difference(head, r))
                    .flatten();
                let fits = f.is_some() && (field.is_none() || field == f);
                if fits && between.iter().all(|&b| r.commutes_with(&kept[b])) {
                    field = f;
                    members.push(j);
                } else {
                    between.push(j);
                }
            }
            let Some(f) = field else {
                merged.push(head.clone());
                continue;
            };
            let is_addr = matches!(f, Field::Src | Field::Dst);
            if is_addr && members.len() < 3 {
                merged.push(head.clone());
                continue;
            }
            for &m in &members {
                used[m] = true;
            }
            // The union of the members' values, in order, each once.
            let mut nets = vec![];
            let mut ports: Vec<(u16, u16)> = vec![];
            for &m in &members {
                match kept[m]
                    .conds
                    .as_ref()
                    .and_then(|c| c.get(&f))
                    .map(|c| &c.values)
                {
                    Some(Values::Nets(ns)) => nets.extend(ns.iter().copied()),
                    Some(Values::Ports(ps)) => ports.extend(ps.iter().copied()),
                    _ => {}
                }
            }
            let mut seen = std::collections::HashSet::new();
            nets.retain(|n| seen.insert(*n));
            let mut seen = std::collections::HashSet::new();
            ports.retain(|p| seen.insert(*p));
            let lines: Vec<usize> = members.iter().map(|&m| kept[m].line).collect();
            let crossed = members
                .last()
                .map_or(0, |&last| between.iter().filter(|&&b| b < last).count());
            let packets = members
                .iter()
                .filter_map(|&m| kept[m].packets)
                .reduce(|a, b| a + b);
            let with = |values: Values| {
                let mut r = head.clone();
                // INVARIANT: mergeable rules have conds.
                let conds = r.conds.as_mut().expect("understood");
                conds.insert(f, Cond::new(false, values));
                r.line = 0;
                r.text.clear();
                r.packets = packets;
                r
            };
            let how;
            if is_addr {
                let set = format!("fwbench-advise-{}", *next_set);
                *next_set += 1;
                how = if nft {
                    format!("one rule with an anonymous set ({} entries)", nets.len())
                } else {
                    format!("one rule matching the ipset {set} ({} entries)", nets.len())
                };
                sets.push((c.name.clone(), merged.len(), set));
                merged.push(with(Values::Nets(nets)));
            } else {
                let mut chunk: Vec<(u16, u16)> = vec![];
                let mut rules = 0;
                for p in ports {
                    if !nft && port_weight(&chunk) + port_weight(&[p]) > MULTIPORT_MAX {
                        merged.push(with(Values::Ports(std::mem::take(&mut chunk))));
                        rules += 1;
                    }
                    chunk.push(p);
                }
                merged.push(with(Values::Ports(chunk)));
                rules += 1;
                how = if nft {
                    "one rule with an anonymous set".into()
                } else {
                    format!(
                        "{rules} `multiport` rule{}",
                        if rules > 1 { "s" } else { "" }
                    )
                };
            }
            changes.push(Change {
                kind: ChangeKind::Merged,
                chain: chain_name.clone(),
                reason: format!(
                    "{} rules differing only in {} with the same verdict ({}) became {how}{}",
                    lines.len(),
                    f.name(),
                    verdict_text(&head.target),
                    if crossed > 0 {
                        format!(
                            "; later members moved up across {crossed} rule(s) they commute with"
                        )
                    } else {
                        String::new()
                    }
                ),
                lines,
            });
        }
        // 2b. (nft) Runs differing in one field with different verdicts → one vmap rule.
        if nft {
            merged = verdict_maps(merged, &chain_name, changes);
        }
        // 3. Hot rules earlier, across rules they commute with (counters known).
        if merged.iter().any(|r| r.packets.unwrap_or(0) > 0) {
            for k in 1..merged.len() {
                let mut j = k;
                // Only across a rule whose count is known and lower (an nft rule
                // without a counter may be the hotter one).
                while j > 0
                    && mergeable(&merged[j])
                    && merged[j - 1]
                        .packets
                        .is_some_and(|p| p < merged[j].packets.unwrap_or(0))
                    && merged[j].commutes_with(&merged[j - 1])
                {
                    merged.swap(j, j - 1);
                    for s in sets.iter_mut().filter(|s| s.0 == c.name) {
                        if s.1 == j {
                            s.1 = j - 1;
                        } else if s.1 == j - 1 {
                            s.1 = j;
                        }
                    }
                    j -= 1;
                }
                if j < k {
                    let r = &merged[j];
                    changes.push(Change {
                        kind: ChangeKind::Moved,
                        chain: chain_name.clone(),
                        lines: vec![r.line],
                        reason: format!(
                            "{} packets: moved {} place(s) earlier, across rules it \
                             commutes with (no common packet, or the same verdict)",
                            r.packets.unwrap_or(0),
                            k - j
                        ),
                    });
                }
            }
        }
        c.rules = merged;
    }
    (out, sets)
}

fn verdict_text(t: &Target) -> String {
    match t {
        Target::Verdict(v) => v.clone(),
        Target::Return => "RETURN".into(),
        Target::Goto(c) => format!("goto {c}"),
        Target::Jump(c) => format!("jump {c}"),
        Target::Continue(t) => t.clone().unwrap_or_default(),
        Target::Map(f, _) => format!("vmap on {}", f.name()),
    }
}

/// A rule whose verdict a vmap entry can hold: understood, accept/drop/return/jump/goto.
fn mappable(r: &Rule) -> bool {
    r.conds.is_some()
        && match &r.target {
            Target::Verdict(v) => v == "ACCEPT" || v == "DROP",
            Target::Return | Target::Jump(_) | Target::Goto(_) => true,
            Target::Continue(_) | Target::Map(..) => false,
        }
}

fn values_disjoint(a: &Values, b: &Values) -> bool {
    let c = |v: &Values| Cond::new(false, v.clone());
    let rule = |v: &Values| Rule {
        line: 0,
        text: String::new(),
        conds: Some([(Field::Src, c(v))].into_iter().collect()),
        opaque: None,
        target: Target::Continue(None),
        comment: None,
        packets: None,
    };
    rule(a).disjoint(&rule(b))
}

fn field_values(r: &Rule, f: Field) -> Option<&Values> {
    r.conds.as_ref()?.get(&f).map(|c| &c.values)
}

/// Runs of rules that differ only in one address or port field, with pairwise
/// disjoint values there and at least two different verdicts, become one rule with
/// a verdict map; a later member moves up only across rules it commutes with.
/// Built for nft output only (iptables has no verdict map).
fn verdict_maps(rules: Vec<Rule>, chain_name: &str, changes: &mut Vec<Change>) -> Vec<Rule> {
    let n = rules.len();
    let mut used = vec![false; n];
    let mut out: Vec<Rule> = Vec::with_capacity(n);
    for i in 0..n {
        if used[i] {
            continue;
        }
        used[i] = true;
        let head = &rules[i];
        let mut members = vec![i];
        let mut field: Option<Field> = None;
        let mut between: Vec<usize> = vec![];
        if mappable(head) {
            for j in i + 1..n.min(i + WINDOW) {
                if used[j] {
                    continue; // already in an earlier map
                }
                let r = &rules[j];
                if r.conds.is_none() || between.len() > MAX_CROSSED {
                    break; // nothing crosses a rule the analysis cannot read
                }
                let f = (mappable(r) && r.comment == head.comment)
                    .then(|| one_difference(head, r))
                    .flatten();
                let fits = f.is_some()
                    && (field.is_none() || field == f)
                    && f.and_then(|f| field_values(r, f)).is_some_and(|v| {
                        let same_family = match (v, f.and_then(|f| field_values(head, f))) {
                            (Values::Nets(a), Some(Values::Nets(b))) => a
                                .iter()
                                .chain(b)
                                .all(|n| Some(n.v6) == b.first().map(|m| m.v6)),
                            _ => true,
                        };
                        same_family
                            && members.iter().all(|&m| {
                                f.and_then(|f| field_values(&rules[m], f))
                                    .is_some_and(|w| values_disjoint(v, w))
                            })
                    });
                if fits && between.iter().all(|&b| r.commutes_with(&rules[b])) {
                    field = f;
                    members.push(j);
                } else {
                    between.push(j);
                }
            }
        }
        let distinct = members
            .iter()
            .map(|&m| &rules[m].target)
            .collect::<Vec<_>>();
        let differ = distinct.iter().any(|t| *t != distinct[0]);
        let (Some(f), true) = (field, differ) else {
            out.push(head.clone());
            continue;
        };
        for &m in &members {
            used[m] = true;
        }
        let entries: Vec<(Values, Target)> = members
            .iter()
            .filter_map(|&m| Some((field_values(&rules[m], f)?.clone(), rules[m].target.clone())))
            .collect();
        let mut r = head.clone();
        if let Some(c) = r.conds.as_mut() {
            c.remove(&f);
        }
        r.line = 0;
        r.text.clear();
        r.packets = members
            .iter()
            .filter_map(|&m| rules[m].packets)
            .reduce(|a, b| a + b);
        r.target = Target::Map(f, entries);
        let lines: Vec<usize> = members.iter().map(|&m| rules[m].line).collect();
        let crossed = members
            .last()
            .map_or(0, |&last| between.iter().filter(|&&b| b < last).count());
        changes.push(Change {
            kind: ChangeKind::VerdictMap,
            chain: chain_name.to_owned(),
            reason: format!(
                "{} rules differing only in {} with different verdicts became one rule \
                 with a verdict map (vmap){}",
                lines.len(),
                f.name(),
                if crossed > 0 {
                    format!("; later members moved up across {crossed} rule(s) they commute with")
                } else {
                    String::new()
                }
            ),
            lines,
        });
        out.push(r);
    }
    out
}
