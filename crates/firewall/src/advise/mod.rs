//! `rules advise`: semantics-preserving rewrites of a user's ruleset, each with its
//! reason, proven equivalent on probe packets before anything is written.
//!
//! Owns: reading the ruleset into the analysis's model ([`model`], [`iptables`]), the
//! rewrites ([`rewrite`]), the probes that hit every original rule and the policies
//! (plus boundary probes around every address and port range) and the check that
//! both rulesets give each probe the same fate, and the [`Advice`] returned.
//! Must not: do I/O or run programs (pure functions over text and the model); change
//! a rule it cannot read (unknown or stateful matches stay in place and are named).

pub mod addrmap;
pub mod iptables;
pub mod model;
pub mod nft;
pub mod nftjson;
mod rewrite;
pub mod testbed;

use crate::import::ImportError;
use crate::model::ImportFormat;
use model::{Chain, Field, Packet, Rule, Table, Values};

/// What a change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    Duplicate,
    Shadowed,
    Merged,
    /// Rules differing in one field with different verdicts → one nft `vmap` rule.
    VerdictMap,
    Moved,
}

/// One rewrite, with the lines of the file it concerns and why it is safe.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    pub kind: ChangeKind,
    /// `table chain`.
    pub chain: String,
    pub lines: Vec<usize>,
    pub reason: String,
}

/// Where the analysed rulesets came from (how the testbed copy is written back).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Origin {
    /// `iptables-save` text of one IP version (`true`: IPv6).
    Iptables { v6: bool },
    /// nft's listing (`nft -a list ruleset`) and each table's (family, name), in the
    /// order of [`Rulesets::before`].
    Nft {
        listing: String,
        tables: Vec<(String, String)>,
    },
    /// No ruleset (an advice built by hand).
    #[default]
    None,
}

/// The original and the optimised ruleset as the analysis sees them (for the proof
/// on a testbed, [`testbed::plan`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rulesets {
    pub origin: Origin,
    pub before: Vec<Table>,
    pub after: Vec<Table>,
}

/// The analysis's answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Advice {
    pub format: ImportFormat,
    pub changes: Vec<Change>,
    /// Rules left in place because the analysis cannot read them: (line, why).
    pub kept: Vec<(usize, String)>,
    /// Cost-changing choices the analysis cannot prove safe alone (not applied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub rules_before: usize,
    pub rules_after: usize,
    /// Probe packets whose fate both rulesets agree on (× each built-in chain).
    pub probes: usize,
    /// The optimised ruleset in the input's format (`iptables-restore` input).
    pub text: String,
    /// `ipset restore` input for the sets the rewritten rules use (load it first).
    pub ipset: String,
    /// Both rulesets as nft files (original, optimised), to measure them with one
    /// engine; `Err`: why they cannot be written as nft.
    #[serde(skip)]
    pub as_nft: Result<(String, String), nft::NftOutputError>,
    /// Both rulesets in the model, for the proof on a testbed.
    #[serde(skip)]
    pub rulesets: Rulesets,
}

impl Advice {
    /// The advice of a rewrite from `before` to `after`: its changes and probes, the
    /// rule counts and the rules kept; no notes, text or sets yet.
    fn of(
        format: ImportFormat,
        before: &[Table],
        after: &[Table],
        changes: Vec<Change>,
        probes: usize,
        as_nft: Result<(String, String), nft::NftOutputError>,
    ) -> Advice {
        Advice {
            format,
            changes,
            kept: kept(before),
            notes: vec![],
            rules_before: rule_count(before),
            rules_after: rule_count(after),
            probes,
            text: String::new(),
            ipset: String::new(),
            as_nft,
            rulesets: Rulesets {
                origin: Origin::None,
                before: before.to_vec(),
                after: after.to_vec(),
            },
        }
    }
}

/// A probe whose fate differs between the two rulesets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refused: the rewrite would change the fate of {packet} in chain {chain} \
     (probe of line {line}: `{rule}`): {before} before, {after} after"
)]
pub struct Disagreement {
    pub line: usize,
    pub rule: String,
    pub chain: String,
    pub packet: String,
    pub before: String,
    pub after: String,
}

/// Why no advice can be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdviseError {
    #[error(transparent)]
    Import(#[from] ImportError),
    /// The rewrite changed a packet's fate: nothing is proposed (a bug of the
    /// rewrite, never a silent change).
    #[error("{0}")]
    Disagree(Box<Disagreement>),
    #[error("{0}")]
    Unsupported(String),
}

/// Packets one rule counted in a measured run of the same ruleset (`verdicts.rules`
/// of its trials): the user's chain name as the import names it (`INPUT`,
/// `nat/PREROUTING`; nft: `input`, or `inet/host/input` with several tables), the
/// rule's 1-based position and text, packets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    pub chain: String,
    pub index: usize,
    pub text: String,
    pub packets: u64,
}

/// The names an import gives chain `c` of table `t` (`Counted::chain`).
fn import_names(t: &Table, c: &Chain, nft: bool) -> Vec<String> {
    if nft {
        vec![
            c.name.clone(),
            format!("{}/{}", t.name.replace(' ', "/"), c.name),
        ]
    } else if t.name == "filter" {
        vec![c.name.clone()]
    } else {
        vec![format!("{}/{}", t.name, c.name)]
    }
}

/// The nft tables whose chains an import names plainly (`input`, not
/// `inet/filter/input`): a trial imports the tables of family inet and of its own IP
/// version (ip, ip6) and names chains plainly only when that is one table, so a
/// plain name is of the table a trial of IPv4 imported alone or of the one a trial of
/// IPv6 did (`inet filter` beside `ip6 six`: an IPv4 trial's `input` is inet
/// filter's, never ip6 six's). Indexes into `tables`, with the IP versions.
fn plain_named(tables: &[Table]) -> Vec<(usize, &'static str)> {
    // nft's tables are named `FAMILY NAME` here.
    let family = |i: usize| tables[i].name.split(' ').next().unwrap_or("");
    let mut out: Vec<(usize, &'static str)> = vec![];
    for (version, own) in [("IPv4", "ip"), ("IPv6", "ip6")] {
        let imported: Vec<usize> = (0..tables.len())
            .filter(|&i| family(i) == "inet" || family(i) == own)
            .collect();
        if let [only] = imported[..] {
            match out.iter_mut().find(|(i, _)| *i == only) {
                Some(seen) => seen.1 = "IPv4 or IPv6",
                None => out.push((only, version)),
            }
        }
    }
    out
}

/// A rule's text without the counter `iptables-save -c` writes before it.
fn without_counter(text: &str) -> &str {
    match text.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or(text, |(_, r)| r.trim_start()),
        None => text,
    }
}

/// Give each rule the packets `counts` say it counted (summed over the trials); the
/// counts replace those of the file. A count whose rule has another text here is an
/// error naming both: the run measured another ruleset. A plain nft chain name
/// (`input`) goes to the table a trial imported alone ([`plain_named`]), never to
/// another table's chain of that name; where that can be either of two tables (one
/// an IPv4 trial imports alone, one an IPv6 trial does) and the rule reads the same
/// in both, the counts are refused: they do not say which trial counted them.
fn apply_counts(
    source: &str,
    tables: &mut [Table],
    nft: bool,
    counts: &[Counted],
) -> Result<(), AdviseError> {
    // Where each count goes, all checked before anything changes: (table, chain,
    // rule, packets).
    let mut hits: Vec<(usize, usize, usize, u64)> = vec![];
    let plain = if nft { plain_named(tables) } else { vec![] };
    for n in counts {
        // The chains the count's name can be of: with nft, a plain name only of a
        // table a trial imported alone (see [`plain_named`]).
        let places: Vec<(usize, usize)> = tables
            .iter()
            .enumerate()
            .filter_map(|(ti, t)| {
                let ci = t
                    .chains
                    .iter()
                    .position(|c| import_names(t, c, nft).contains(&n.chain))?;
                let plainly = nft && t.chains[ci].name == n.chain;
                (!plainly || plain.iter().any(|(i, _)| *i == ti)).then_some((ti, ci))
            })
            .collect();
        // The rule each place has at the count's position (past the user's rules:
        // fwbench's own policy rule, not counted here).
        let rule_at = |&(ti, ci): &(usize, usize)| {
            let rules = &tables[ti].chains[ci].rules;
            let ri = n.index.checked_sub(1).filter(|&i| i < rules.len())?;
            Some((ti, ci, ri))
        };
        let at: Vec<(usize, usize, usize)> = places.iter().filter_map(rule_at).collect();
        let same = |&(ti, ci, ri): &(usize, usize, usize)| {
            without_counter(&tables[ti].chains[ci].rules[ri].text) == without_counter(&n.text)
        };
        let matching: Vec<(usize, usize, usize)> = at.iter().copied().filter(same).collect();
        let (ti, ci, ri) = match (&matching[..], &at[..]) {
            ([one], _) => *one,
            (_, []) => continue,
            ([], [(ti, ci, ri), ..]) => {
                let r = &tables[*ti].chains[*ci].rules[*ri];
                return Err(AdviseError::Unsupported(format!(
                    "{source}: the counted run's rule {}:{} is `{}`, here it is `{}`: the run \
                     measured another ruleset",
                    n.chain, n.index, n.text, r.text
                )));
            }
            (several, _) => {
                let whose: Vec<String> = several
                    .iter()
                    .map(|(ti, _, _)| {
                        let trial = plain.iter().find(|(i, _)| i == ti).map_or("", |p| p.1);
                        format!(
                            "table {} (an {trial} trial's, which imports it alone)",
                            tables[*ti].name
                        )
                    })
                    .collect();
                return Err(AdviseError::Unsupported(format!(
                    "{source}: the counted run's rule {}:{} (`{}`) can be of {}: the stored \
                     counts do not say which IP version's trial counted it; advise without \
                     --counters-from",
                    n.chain,
                    n.index,
                    n.text,
                    whose.join(" or ")
                )));
            }
        };
        hits.push((ti, ci, ri, n.packets));
    }
    match (hits.is_empty(), counts.is_empty()) {
        (_, true) => return Ok(()),
        (true, false) => {
            return Err(AdviseError::Unsupported(format!(
                "{source}: none of the counted run's rules is a rule of this file"
            )))
        }
        (false, false) => {}
    }
    // The run's counts replace the file's.
    for r in tables
        .iter_mut()
        .flat_map(|t| &mut t.chains)
        .flat_map(|c| &mut c.rules)
    {
        r.packets = None;
    }
    for (ti, ci, ri, p) in hits {
        *tables[ti].chains[ci].rules[ri].packets.get_or_insert(0) += p;
    }
    Ok(())
}

/// Analyse a ruleset file's text (`source` names it in messages).
pub fn advise(source: &str, text: &str) -> Result<Advice, AdviseError> {
    advise_counted(source, text, &[])
}

/// [`advise`] with the packets each rule counted in a measured run (for the hot-rule
/// moves; they replace the file's own counters).
pub fn advise_counted(source: &str, text: &str, counts: &[Counted]) -> Result<Advice, AdviseError> {
    match crate::import::detect(text) {
        Some(ImportFormat::IptablesSave) => {}
        Some(ImportFormat::Nft) | None => {
            return Err(AdviseError::Unsupported(format!(
                "{source}: not iptables-save output (an nft ruleset is analysed from \
                 nft's own read-back: `advise_nft`)"
            )))
        }
    }
    let (mut tables, v6) = iptables::parse(source, text)?;
    apply_counts(source, &mut tables, false, counts)?;
    let mut changes = vec![];
    let mut next_set = 1;
    let mut new_tables = vec![];
    let mut sets = vec![];
    for t in &tables {
        let (nt, s) = rewrite::rewrite(t, &mut next_set, &mut changes, false);
        sets.extend(s.into_iter().map(|(c, i, n)| (t.name.clone(), c, i, n)));
        new_tables.push(nt);
    }
    let probes = check(&tables, &new_tables, v6)?;
    let (text, ipset) = if changes.is_empty() {
        (String::new(), String::new())
    } else {
        iptables::render(&new_tables, v6, &sets)
    };
    let as_nft = nft::render(&tables, v6).and_then(|a| Ok((a, nft::render(&new_tables, v6)?)));
    let format = ImportFormat::IptablesSave;
    let mut a = Advice::of(format, &tables, &new_tables, changes, probes, as_nft);
    a.rulesets.origin = Origin::Iptables { v6 };
    Ok(Advice { text, ipset, ..a })
}

/// Analyse an nft ruleset as nft itself read it back from a scratch namespace
/// (`json`: `nft -j list ruleset`, `listing`: `nft -a list ruleset`); the rules'
/// "lines" are their nft handles. The optimised ruleset is nft text (`nft -f`).
pub fn advise_nft(source: &str, json: &str, listing: &str) -> Result<Advice, AdviseError> {
    advise_nft_counted(source, json, listing, &[])
}

/// [`advise_nft`] with the packets each rule counted in a measured run.
pub fn advise_nft_counted(
    source: &str,
    json: &str,
    listing: &str,
    counts: &[Counted],
) -> Result<Advice, AdviseError> {
    let mut tables = nftjson::parse(json, listing)
        .map_err(|e| AdviseError::Unsupported(format!("{source}: {e}")))?;
    let mut plain: Vec<Table> = tables.iter().map(|t| t.table.clone()).collect();
    apply_counts(source, &mut plain, true, counts)?;
    for (t, p) in tables.iter_mut().zip(plain) {
        t.table = p;
    }
    let original = tables.clone();
    let before: Vec<Table> = tables.iter().map(|t| t.table.clone()).collect();
    let mut changes = vec![];
    let mut next_set = 1;
    for t in &mut tables {
        t.table = rewrite::rewrite(&t.table, &mut next_set, &mut changes, true).0;
    }
    let after: Vec<Table> = tables.iter().map(|t| t.table.clone()).collect();
    let mut probes = check(&before, &after, false)?;
    if tables
        .iter()
        .any(|t| t.family == "inet" || t.family == "ip6")
    {
        probes += check(&before, &after, true)?;
    }
    let unsupported = |e: nft::NftOutputError| AdviseError::Unsupported(format!("{source}: {e}"));
    let text = if changes.is_empty() {
        String::new()
    } else {
        nftjson::render(listing, &tables).map_err(unsupported)?
    };
    let as_nft = nftjson::render(listing, &original).map(|o| (o, text.clone()));
    // `inet` → `ip`: an inet table pays a family check before each address match
    // (docs/engines.md); when none of its rules names an IPv6 address, an `ip` table
    // does the same for IPv4 — but would no longer see IPv6 packets at all.
    let mut notes: Vec<String> = original
        .iter()
        .filter(|t| t.family == "inet")
        .filter(|t| {
            let rules = || t.table.chains.iter().flat_map(|c| &c.rules);
            rules().all(|r| {
                r.conds.as_ref().is_some_and(|c| {
                    c.values()
                        .all(|c| !matches!(&c.values, Values::Nets(n) if n.iter().any(|n| n.v6)))
                })
            }) && rules().any(|r| {
                r.conds
                    .as_ref()
                    .is_some_and(|c| c.contains_key(&Field::Src) || c.contains_key(&Field::Dst))
            })
        })
        .map(|t| {
            format!(
                "table inet {}: no rule names an IPv6 address; if this host has no IPv6 \
                 traffic to filter, `table ip {}` saves the family check before each \
                 address match (not applied: an ip table does not see IPv6 packets)",
                t.name, t.name
            )
        })
        .collect();
    let mut a = Advice::of(ImportFormat::Nft, &before, &after, changes, probes, as_nft);
    a.rulesets.origin = Origin::Nft {
        listing: listing.to_owned(),
        tables: original
            .iter()
            .map(|t| (t.family.clone(), t.name.clone()))
            .collect(),
    };
    let mut named: Vec<String> = before
        .iter()
        .flat_map(|t| &t.chains)
        .flat_map(|c| &c.rules)
        .flat_map(|r| r.conds.iter().flat_map(|c| c.values()))
        .filter_map(|c| c.set.as_ref().map(|s| format!("@{s}")))
        .collect();
    named.sort();
    named.dedup();
    if !named.is_empty() {
        notes.push(format!(
            "named sets {} are taken with the elements the file gives them (they stay \
             named sets; nothing is merged into them); if a tool changes them at runtime, \
             check the changes that involve their rules",
            named.join(", ")
        ));
    }
    Ok(Advice { notes, text, ..a })
}

/// A probe's defaults: the testbed's own addresses and a high port.
fn base_packet(v6: bool) -> Packet {
    let (src, dst) = if v6 {
        (
            u128::from(std::net::Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 1)),
            u128::from(std::net::Ipv6Addr::new(0x2001, 2, 0, 1, 0, 0, 0, 1)),
        )
    } else {
        (
            u128::from(u32::from(std::net::Ipv4Addr::new(198, 18, 0, 1))),
            u128::from(u32::from(std::net::Ipv4Addr::new(198, 19, 0, 1))),
        )
    };
    Packet {
        v6,
        proto: 17,
        src,
        dst,
        sport: 1024,
        dport: 5000,
        iif: "fwb-in".into(),
        oif: "fwb-out".into(),
    }
}

fn set_field(p: &mut Packet, f: Field, v: u128, iface: &str) {
    match f {
        Field::Proto => p.proto = v as u8,
        Field::Src => p.src = v,
        Field::Dst => p.dst = v,
        Field::Sport => p.sport = v as u16,
        Field::Dport => p.dport = v as u16,
        Field::In => p.iif = iface.to_owned(),
        Field::Out => p.oif = iface.to_owned(),
    }
}

/// Probes for one rule: one packet inside its match (a value of each field outside
/// a negated one), and the same packet just outside each end of every address and
/// port range it matches.
fn rule_probes(r: &model::Rule, v6: bool) -> Vec<Packet> {
    let Some(conds) = &r.conds else {
        return vec![];
    };
    let top: u128 = if v6 { u128::MAX } else { u128::from(u32::MAX) };
    let mut hit = base_packet(v6);
    if conds.contains_key(&Field::Sport) || conds.contains_key(&Field::Dport) {
        hit.proto = 6; // a port match comes with -p; the protocol is set below
    }
    let ranges = |values: &Values| -> Vec<(u128, u128)> {
        match values {
            Values::Nets(ns) => ns.iter().map(|n| n.range()).collect(),
            Values::Ports(ps) => ps
                .iter()
                .map(|&(a, b)| (u128::from(a), u128::from(b)))
                .collect(),
            Values::Proto(p) => vec![(u128::from(*p), u128::from(*p))],
            Values::Iface(_) => vec![],
        }
    };
    for (f, c) in conds {
        let rs = ranges(&c.values);
        let limit = match f {
            Field::Sport | Field::Dport => 65535,
            Field::Proto => 255,
            _ => top,
        };
        if let Values::Iface(i) = &c.values {
            let name = if c.neg { "fwb-other" } else { i.as_str() };
            set_field(&mut hit, *f, 0, name);
            continue;
        }
        if !c.neg {
            // The middle of the first range: inside it, away from its ends.
            if let Some(&(a, b)) = rs.first() {
                set_field(&mut hit, *f, a + (b - a) / 2, "");
            }
        } else {
            // A value outside every range: the default, else just past one.
            let mut p = hit.clone();
            let inside = |p: &Packet| c.values.holds(p, *f);
            let candidates = rs
                .iter()
                .flat_map(|&(a, b)| [a.checked_sub(1), (b < limit).then_some(b + 1)])
                .flatten();
            if inside(&p) {
                for v in candidates {
                    set_field(&mut p, *f, v, "");
                    if !inside(&p) {
                        break;
                    }
                }
            }
            hit = p;
        }
    }
    let mut out = vec![hit.clone()];
    for (f, c) in conds {
        for (a, b) in ranges(&c.values) {
            for v in [
                a.checked_sub(1),
                (b < top).then_some(b + 1),
                Some(a),
                Some(b),
            ]
            .into_iter()
            .flatten()
            {
                let mut p = hit.clone();
                set_field(&mut p, *f, v, "");
                out.push(p);
            }
        }
    }
    out
}

/// A probe packet with the line and text of the rule it was made for (0: the
/// policies').
type Probe = (usize, String, Packet);

/// The probes of one table: the default packet (UDP and TCP) for the policies, then
/// each rule's ([`rule_probes`]), each packet once.
fn table_probes(t: &Table, v6: bool) -> Vec<Probe> {
    let mut probes: Vec<Probe> = vec![];
    let mut seen = std::collections::HashSet::new();
    let mut base = base_packet(v6);
    for proto in [17, 6] {
        base.proto = proto;
        if seen.insert(base.clone()) {
            probes.push((0, "the policy".into(), base.clone()));
        }
    }
    // Each rule's hit first, then the boundary probes: a packet that hits a rule is
    // named after that rule, not after a neighbour it lies just outside of.
    let all: Vec<(&Rule, Vec<Packet>)> = t
        .chains
        .iter()
        .flat_map(|c| &c.rules)
        .map(|r| (r, rule_probes(r, v6)))
        .collect();
    for pass in [0..1, 1..usize::MAX] {
        for (r, ps) in &all {
            for p in ps.iter().skip(pass.start).take(pass.end - pass.start) {
                if seen.insert(p.clone()) {
                    probes.push((r.line, r.text.clone(), p.clone()));
                }
            }
        }
    }
    probes
}

/// Check that every probe meets the same fate in both rulesets, from every built-in
/// chain, with opaque rules taken as matching and as not matching; returns the
/// number of probe packets.
fn check(before: &[Table], after: &[Table], v6: bool) -> Result<usize, AdviseError> {
    let mut total = 0;
    for (t, n) in before.iter().zip(after) {
        let probes = table_probes(t, v6);
        let opaque = t
            .chains
            .iter()
            .flat_map(|c| &c.rules)
            .any(|r| r.conds.is_none());
        let starts: Vec<&str> = t
            .chains
            .iter()
            .filter(|c| c.policy.is_some())
            .map(|c| c.name.as_str())
            .collect();
        for (line, rule, p) in &probes {
            for start in &starts {
                for assume in [false, true].into_iter().take(if opaque { 2 } else { 1 }) {
                    let (x, y) = (t.fate(start, p, assume), n.fate(start, p, assume));
                    if x != y {
                        let show = |f: &model::Fate| {
                            if f.passed.is_empty() {
                                f.verdict.clone()
                            } else {
                                format!("{} after {}", f.verdict, f.passed.join("; "))
                            }
                        };
                        return Err(AdviseError::Disagree(Box::new(Disagreement {
                            line: *line,
                            rule: rule.clone(),
                            chain: format!("{} {start}", t.name),
                            packet: p.to_string(),
                            before: show(&x),
                            after: show(&y),
                        })));
                    }
                }
            }
        }
        total += probes.len();
    }
    Ok(total)
}

/// The rules of all chains of `ts`.
fn rule_count(ts: &[Table]) -> usize {
    ts.iter()
        .flat_map(|t| &t.chains)
        .map(|c| c.rules.len())
        .sum()
}

/// The rules left in place because the analysis cannot read them: (line, why).
fn kept(ts: &[Table]) -> Vec<(usize, String)> {
    ts.iter()
        .flat_map(|t| &t.chains)
        .flat_map(|c| &c.rules)
        .filter_map(|r| r.opaque.clone().map(|why| (r.line, why)))
        .collect()
}

#[cfg(test)]
mod tests;
