//! The rewrites, chain by chain, each only where it provably keeps every packet's
//! fate: duplicates and shadowed rules removed, runs of rules differing in one field
//! merged into one rule with a set (moving a later member up only across rules it
//! commutes with), hot rules moved earlier across rules they commute with.
//!
//! Must not: touch a rule it cannot read (opaque rules stay where they are and
//! nothing crosses them), logging or counting rules (kept), move a rule across one
//! that may rewrite a packet or remove one as shadowed across it, or anything but
//! the chain at hand.

use super::model::{Cond, Field, Rule, Table, Target, Values};
use super::{Change, ChangeKind};

/// How far a run is looked for past its first rule, and how many rules it may cross
/// (bounds the work on chains of thousands of rules that merge nothing).
const WINDOW: usize = 100_000;
const MAX_CROSSED: usize = 64;

/// Most ports one `multiport` match takes (a range counts twice).
const MULTIPORT_MAX: usize = 15;

/// A rule that may be merged with others: understood, ends the walk, changes no
/// packet.
fn mergeable(r: &Rule) -> bool {
    r.conds.is_some() && r.target.terminal() && !r.rewrites
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
    let settable = match (&x.values, &y.values) {
        // A set holds addresses of one family (nft refuses `{ 192.0.2.1, 2001:db8::1 }`).
        (Values::Nets(a), Values::Nets(b)) => {
            let v6 = a.first().map(|n| n.v6);
            a.iter().chain(b).all(|n| Some(n.v6) == v6)
        }
        (Values::Ports(_), Values::Ports(_)) => true,
        _ => false,
    };
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
    for c in &mut out.chains {
        let mut cx = ChainRewrite {
            chain: c.name.clone(),
            chain_name: format!("{} {}", t.name, c.name),
            unit: if nft { "handle" } else { "line" },
            nft,
            next_set: &mut *next_set,
            changes: &mut *changes,
            sets: &mut sets,
        };
        // 1. Duplicates and shadowed rules.
        let kept = cx.remove_covered(std::mem::take(&mut c.rules));
        // 2. Runs of rules differing in one field → one rule with a set.
        let mut merged = cx.merge_runs(&kept);
        // 2b. (nft) Runs differing in one field with different verdicts → one vmap rule.
        if nft {
            merged = verdict_maps(merged, &cx.chain_name, cx.changes);
        }
        // 3. Hot rules earlier, across rules they commute with (counters known).
        cx.move_hot(&mut merged);
        c.rules = merged;
    }
    (out, sets)
}

/// One chain being rewritten: its names, and where changes and merged sets go.
struct ChainRewrite<'a> {
    /// The chain's name, and `TABLE CHAIN` for the changes.
    chain: String,
    chain_name: String,
    /// `handle` (nft) or `line` (iptables), for the reasons.
    unit: &'static str,
    nft: bool,
    next_set: &'a mut usize,
    changes: &'a mut Vec<Change>,
    sets: &'a mut Vec<(String, usize, String)>,
}

/// A run of rules of a chain that differ from its head in one field only.
struct Run {
    /// Indices of the head and the members, in order.
    members: Vec<usize>,
    field: Field,
    /// Rules between the members that stay where they are.
    between: Vec<usize>,
}

/// A rule of a chain left alone, or the run it heads.
enum Piece {
    Alone(usize),
    Run(Run),
}

/// The `n` rules of a chain in order as `find` groups them: each rule not in an earlier
/// run either alone or heading a run (`find(used, i)`: the run headed by rule `i`, the
/// rules already taken marked in `used`); a run's members are in no later one.
fn pieces(n: usize, mut find: impl FnMut(&[bool], usize) -> Option<Run>) -> Vec<Piece> {
    let mut used = vec![false; n];
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if used[i] {
            continue;
        }
        used[i] = true;
        match find(&used, i) {
            Some(run) => {
                for &m in &run.members {
                    used[m] = true;
                }
                out.push(Piece::Run(run));
            }
            None => out.push(Piece::Alone(i)),
        }
    }
    out
}

impl ChainRewrite<'_> {
    /// Step 1: remove every understood rule an earlier rule takes every packet of,
    /// when no rule between them may rewrite a packet (one that did could make a
    /// packet the earlier rule let pass match the later one).
    fn remove_covered(&mut self, rules: Vec<Rule>) -> Vec<Rule> {
        let mut kept: Vec<Rule> = Vec::with_capacity(rules.len());
        // Only the kept rules from here on may cover the next one: none after the
        // last rule that may rewrite a packet.
        let mut from = 0;
        for r in rules {
            if mergeable(&r) {
                if let Some(k) = kept[from..]
                    .iter()
                    .find(|k| mergeable(k) && r.covered_by(k))
                {
                    let change = self.covered(&r, k);
                    self.changes.push(change);
                    continue;
                }
            }
            if r.rewrites {
                from = kept.len() + 1;
            }
            kept.push(r);
        }
        kept
    }

    /// The change removing `r`, which `k` covers (a duplicate, or shadowed).
    fn covered(&self, r: &Rule, k: &Rule) -> Change {
        let unit = self.unit;
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
        Change {
            kind: if dup {
                ChangeKind::Duplicate
            } else {
                ChangeKind::Shadowed
            },
            chain: self.chain_name.clone(),
            lines: vec![r.line],
            reason: if dup {
                format!("duplicate of {unit} {} (`{}`): removed", k.line, k.text)
            } else {
                format!(
                    "never matches: {unit} {} (`{}`) takes every packet it would{sets}: removed",
                    k.line, k.text
                )
            },
        }
    }

    /// Step 2: each run of rules differing in one field becomes one rule with a set
    /// (addresses: runs of three or more) or a few `multiport` rules.
    fn merge_runs(&mut self, kept: &[Rule]) -> Vec<Rule> {
        let mut merged: Vec<Rule> = Vec::with_capacity(kept.len());
        let runs = pieces(kept.len(), |used, i| {
            let head = &kept[i];
            find_run(kept, used, i, mergeable, |r, _, _| r.target == head.target)
                .filter(|r| !(matches!(r.field, Field::Src | Field::Dst) && r.members.len() < 3))
        });
        for piece in runs {
            match piece {
                Piece::Alone(i) => merged.push(kept[i].clone()),
                Piece::Run(run) => self.merge(kept, &run, &mut merged),
            }
        }
        merged
    }

    /// Write the merged rule(s) of one run to `merged`, and the change.
    fn merge(&mut self, kept: &[Rule], run: &Run, merged: &mut Vec<Rule>) {
        let (f, members) = (run.field, &run.members);
        let head = &kept[members[0]];
        let (nets, ports) = union_of(kept, members, f);
        let lines: Vec<usize> = members.iter().map(|&m| kept[m].line).collect();
        let crossed = members
            .last()
            .map_or(0, |&last| run.between.iter().filter(|&&b| b < last).count());
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
        let nft = self.nft;
        let how;
        if matches!(f, Field::Src | Field::Dst) {
            let set = format!("fwbench-advise-{}", *self.next_set);
            *self.next_set += 1;
            how = if nft {
                format!("one rule with an anonymous set ({} entries)", nets.len())
            } else {
                format!("one rule matching the ipset {set} ({} entries)", nets.len())
            };
            self.sets.push((self.chain.clone(), merged.len(), set));
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
        self.changes.push(Change {
            kind: ChangeKind::Merged,
            chain: self.chain_name.clone(),
            reason: format!(
                "{} rules differing only in {} with the same verdict ({}) became {how}{}",
                lines.len(),
                f.name(),
                verdict_text(&head.target),
                if crossed > 0 {
                    format!("; later members moved up across {crossed} rule(s) they commute with")
                } else {
                    String::new()
                }
            ),
            lines,
        });
    }

    /// Step 3: hot rules earlier, across rules they commute with, when counters are
    /// known.
    fn move_hot(&mut self, merged: &mut [Rule]) {
        if !merged.iter().any(|r| r.packets.unwrap_or(0) > 0) {
            return;
        }
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
                for s in self.sets.iter_mut().filter(|s| s.0 == self.chain) {
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
                self.changes.push(Change {
                    kind: ChangeKind::Moved,
                    chain: self.chain_name.clone(),
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
}

/// The run headed by rule `i`, itself `eligible`: later unused rules, eligible, with its
/// comment, that differ from it in the same one field, `join` the run (`join(rule, field,
/// members so far)`) and commute with the rules they move up across; the search stops
/// at a rule the analysis cannot read (nothing crosses it).
fn find_run(
    rules: &[Rule],
    used: &[bool],
    i: usize,
    eligible: fn(&Rule) -> bool,
    join: impl Fn(&Rule, Field, &[usize]) -> bool,
) -> Option<Run> {
    let head = &rules[i];
    if !eligible(head) {
        return None;
    }
    let mut members = vec![i];
    let mut field: Option<Field> = None;
    let mut between: Vec<usize> = vec![];
    for j in i + 1..rules.len().min(i + WINDOW) {
        if used[j] {
            continue; // already in an earlier run
        }
        let r = &rules[j];
        if r.conds.is_none() || between.len() > MAX_CROSSED {
            break; // nothing crosses a rule the analysis cannot read
        }
        let f = (eligible(r) && r.comment == head.comment)
            .then(|| one_difference(head, r))
            .flatten();
        let fits = f.is_some_and(|f| field.is_none_or(|g| g == f) && join(r, f, &members));
        if fits && between.iter().all(|&b| r.commutes_with(&rules[b])) {
            field = f;
            members.push(j);
        } else {
            between.push(j);
        }
    }
    Some(Run {
        members,
        field: field?,
        between,
    })
}

/// The union of the members' values of field `f`, in order, each once: (networks,
/// ports).
fn union_of(
    kept: &[Rule],
    members: &[usize],
    f: Field,
) -> (Vec<super::model::Net>, Vec<(u16, u16)>) {
    let mut nets = vec![];
    let mut ports: Vec<(u16, u16)> = vec![];
    for &m in members {
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
    (nets, ports)
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

/// A rule whose verdict a vmap entry can hold: understood, changes no packet (a jump
/// into a chain that may rewrite one must stay before the rules after it),
/// accept/drop/return/jump/goto.
fn mappable(r: &Rule) -> bool {
    r.conds.is_some()
        && !r.rewrites
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
        rewrites: false,
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
    let mut out: Vec<Rule> = Vec::with_capacity(rules.len());
    let runs = pieces(rules.len(), |used, i| {
        let head = &rules[i];
        let join = |r: &Rule, f: Field, members: &[usize]| {
            field_values(r, f).is_some_and(|v| {
                let same_family = match (v, field_values(head, f)) {
                    (Values::Nets(a), Some(Values::Nets(b))) => a
                        .iter()
                        .chain(b)
                        .all(|n| Some(n.v6) == b.first().map(|m| m.v6)),
                    _ => true,
                };
                same_family
                    && members
                        .iter()
                        .all(|&m| field_values(&rules[m], f).is_some_and(|w| values_disjoint(v, w)))
            })
        };
        find_run(&rules, used, i, mappable, join).filter(|run| {
            let first = &rules[run.members[0]].target;
            run.members.iter().any(|&m| rules[m].target != *first)
        })
    });
    for piece in runs {
        let Run {
            members,
            field: f,
            between,
        } = match piece {
            Piece::Alone(i) => {
                out.push(rules[i].clone());
                continue;
            }
            Piece::Run(run) => run,
        };
        let head = &rules[members[0]];
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
