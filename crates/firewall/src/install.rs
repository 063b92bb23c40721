//! Installer: apply a rendered rule set in the current network namespace (the
//! gateway agent runs inside the gateway's), timed and verified; read the counters
//! of fwbench's rules back and judge them (the verdicts: of a model's layout, of an
//! imported ruleset's rules — a drop policy counted by the last rule of its chain —,
//! or of a replacement gateway events put in force, against the installed layout);
//! remove exactly what was applied. Each step asks the engine's backend (the `engine`
//! module); this module holds only the order of the steps.
//!
//! Isolation: only `table inet|ip|ip6 fwbench`, chains `FWBENCH-*` and sets `fwbench-*`
//! are ever created, read or removed. Before installing, a marker file records the
//! engine, the nft table (with its family) and the removal batches; it is deleted after a successful removal, so a crashed run
//! is cleaned up by the next one in the same namespace ([`clean_leftovers`]).
//! Must not: hold any engine's syntax or match on engines.

use crate::engine::{backend, NFT_TABLE};
use crate::model::{Engine, Hook, ImportedRule, Role};
use crate::rendered::{DropSet, Rendered};
use crate::tool::{self, Batch, ToolError};
pub use fwmodel::report::{Dropped, RuleHit, Verdicts};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

pub use crate::engine::parse_save_counters;
pub use crate::tool::which;

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A tool is missing, rejected a batch, or could not be run or read.
    #[error(transparent)]
    Tool(#[from] ToolError),
    #[error("rule set verification failed: expected {expect_rules} rules and {expect_elements} set elements, found {rules} rules and {elements} elements")]
    CountMismatch {
        expect_rules: usize,
        expect_elements: usize,
        rules: usize,
        elements: usize,
    },
    #[error("after removal {rules} fwbench rules and {elements} set elements remain")]
    Remains { rules: usize, elements: usize },
}

/// Check that every tool a rendered rule set needs is installed.
pub fn check_tools(r: &Rendered) -> Result<(), InstallError> {
    for t in backend(r.engine).tools(r) {
        tool::check(t)?;
    }
    Ok(())
}

/// What a crash marker records: whose batches, and the batches that remove them.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize)]
struct Marker {
    engine: Engine,
    remove: Vec<Batch>,
    /// The nft table installed (`ip fwbench`), for the nft engines; markers of older
    /// builds have none (their table was `inet fwbench`, deleted by `remove`).
    nft_table: Option<String>,
}

/// Where the rule-set markers live: `netns-INO.json`, one per network namespace.
pub const MARKER_DIR: &str = "/run/fwbench/markers";

/// The network namespace inode of a marker file named `file_name` (`None`: not a
/// marker's name).
pub fn marker_netns(file_name: &str) -> Option<u64> {
    file_name
        .strip_prefix("netns-")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

fn marker_path() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata("/proc/self/ns/net").ok()?.ino();
    Some(PathBuf::from(format!("{MARKER_DIR}/netns-{ino}.json")))
}

fn write_marker(r: &Rendered) {
    if let Some(p) = marker_path() {
        if let Some(dir) = p.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let marker = Marker {
            engine: r.engine,
            remove: r.remove.clone(),
            nft_table: r
                .engine
                .takes_nft_family()
                .then(|| format!("{} {NFT_TABLE}", r.nft_family.table_family(r.ip))),
        };
        if let Ok(json) = serde_json::to_string(&marker) {
            let _ = std::fs::write(p, json);
        }
    }
}

fn clear_marker() {
    if let Some(p) = marker_path() {
        let _ = std::fs::remove_file(p);
    }
}

/// A rule set that is installed; remove it with [`Installed::remove`].
#[derive(Debug)]
pub struct Installed {
    /// Boxed: a gateway holds an `Installed` for the whole trial, and the rendered text
    /// of a large rule set with its settings need not sit inline in it.
    pub rendered: Box<Rendered>,
    pub install_ms: f64,
    pub rules: usize,
    pub elements: usize,
}

/// Apply, time and verify. On any failure, whatever was applied is removed again.
pub fn install(r: &Rendered) -> Result<Installed, InstallError> {
    check_tools(r)?;
    let b = backend(r.engine);
    write_marker(r);
    let undo = || {
        b.remove(&r.remove);
        clear_marker();
    };
    let t0 = Instant::now();
    if let Err(e) = b.apply(r) {
        undo();
        return Err(e.into());
    }
    let install_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (rules, elements) = match b.count(r) {
        Ok(c) => c,
        Err(e) => {
            undo();
            return Err(e.into());
        }
    };
    if rules != r.expect_rules || elements != r.expect_elements {
        undo();
        return Err(InstallError::CountMismatch {
            expect_rules: r.expect_rules,
            expect_elements: r.expect_elements,
            rules,
            elements,
        });
    }
    Ok(Installed {
        rendered: Box::new(r.clone()),
        install_ms,
        rules,
        elements,
    })
}

impl Installed {
    /// Remove the rule set; returns the time it took in ms.
    pub fn remove(self) -> Result<f64, InstallError> {
        let b = backend(self.rendered.engine);
        let t0 = Instant::now();
        let err = b.remove(&self.rendered.remove);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let (rules, elements) = b.count(&self.rendered).unwrap_or((usize::MAX, 0));
        if rules == 0 && elements == 0 {
            clear_marker();
            return Ok(ms);
        }
        Err(err
            .map(InstallError::Tool)
            .unwrap_or(InstallError::Remains { rules, elements }))
    }
}

/// Remove what a crashed run left in this namespace (from its marker). Returns
/// whether anything was cleaned.
pub fn clean_leftovers() -> bool {
    let Some(p) = marker_path() else { return false };
    let Ok(text) = std::fs::read_to_string(&p) else {
        return false;
    };
    if let Ok(m) = serde_json::from_str::<Marker>(&text) {
        backend(m.engine).remove(&m.remove);
        if let Some(table) = m
            .nft_table
            .filter(|t| t.ends_with(&format!(" {NFT_TABLE}")))
        {
            // The removal batch names the same table; this catches a marker whose
            // batches were lost or rewritten. "No such table" is the expected outcome.
            let _ = tool::apply(&Batch {
                tool: tool::Tool::Nft,
                text: format!("delete table {table}\n"),
            });
        }
    } else if let Ok(batches) = serde_json::from_str::<Vec<Batch>>(&text) {
        // A marker of an older build: the removal batches alone.
        for b in &batches {
            let _ = tool::apply(b);
        }
    }
    let _ = std::fs::remove_file(p);
    true
}

/// Read counters and compare with the rendered layout. `events_set`: the drop set
/// gateway events added elements to (its rule's packets are the events' doing, not a
/// filler's).
pub fn verdicts(r: &Rendered, events_set: Option<&DropSet>) -> Result<Verdicts, InstallError> {
    if !r.imported_rules.is_empty() {
        let chains = backend(r.engine).chain_counters(r)?;
        return Ok(judge_imported(&r.imported_rules, &chains));
    }
    let chains = backend(r.engine).counters(r)?;
    Ok(judge(r, events_set, |h| {
        chains.iter().find(|(c, _)| *c == h).map(|(_, v)| v.clone())
    }))
}

/// The verdicts of a replacement that gateway events put in force (`UpdateKind::
/// Replace`: the installed rule set plus the events' K drop rules at the head of
/// fwbench's first chain), read before it is undone: a replacement starts its rules'
/// counters at 0, and its undo (the installed rule set again) does too, so these are
/// the counts of the last replacement's window — from its commit to the end of the
/// traffic — judged against the installed layout (see [`judge_replacement`]).
pub fn replacement_verdicts(installed: &Rendered) -> Result<Verdicts, InstallError> {
    let chains = backend(installed.engine).counters(installed)?;
    Ok(judge_replacement(installed, &chains))
}

/// Pure part of [`replacement_verdicts`]: each chain's counters (by hook) mapped onto
/// the installed layout. A chain holds the installed rules at its tail; the rules
/// before them are the events' (their packets — the marker's — are
/// `event_packets`). Where a set engine collapsed the events' rules into the set of
/// the first chain's head filler rule (no rule before the installed ones), that
/// rule's packets are the events' too.
pub fn judge_replacement(installed: &Rendered, counters: &[(Hook, Vec<u64>)]) -> Verdicts {
    let events_chain = installed.layout.first().map(|c| c.hook);
    let mut events = 0;
    let mut mapped: Vec<(Hook, Vec<u64>)> = vec![];
    for chain in &installed.layout {
        let Some((_, c)) = counters.iter().find(|(h, _)| *h == chain.hook) else {
            continue;
        };
        let extra = c.len().saturating_sub(chain.roles.len());
        events += c[..extra].iter().sum::<u64>();
        let mut ours = c[extra..].to_vec();
        if extra == 0
            && Some(chain.hook) == events_chain
            && chain.roles.first() == Some(&Role::Filler)
        {
            if let Some(head) = ours.first_mut() {
                events += std::mem::take(head);
            }
        }
        mapped.push((chain.hook, ours));
    }
    let mut v = judge(installed, None, |h| {
        mapped.iter().find(|(c, _)| *c == h).map(|(_, v)| v.clone())
    });
    v.event_packets += events;
    v
}

/// Pure part of [`verdicts`]: `counters(hook)` gives that chain's packet counts.
pub fn judge(
    r: &Rendered,
    events_set: Option<&DropSet>,
    counters: impl Fn(Hook) -> Option<Vec<u64>>,
) -> Verdicts {
    let mut v = Verdicts::default();
    for chain in &r.layout {
        let Some(c) = counters(chain.hook) else {
            v.problems
                .push(format!("chain for {:?} not found", chain.hook));
            continue;
        };
        if c.len() != chain.roles.len() {
            v.problems.push(format!(
                "{:?}: {} rules installed, {} expected",
                chain.hook,
                c.len(),
                chain.roles.len()
            ));
            continue;
        }
        for (i, (role, p)) in chain.roles.iter().zip(c).enumerate() {
            if events_set.is_some_and(|s| s.hook == chain.hook && s.at == i) {
                v.event_packets += p;
                continue;
            }
            match role {
                Role::Match => {
                    v.matched_packets += p;
                    if p == 0 {
                        v.idle_match_rules += 1;
                    }
                }
                Role::Filler => v.filler_packets += p,
                Role::Policy => v.policy_drops += p,
                Role::Guard => {}
            }
        }
    }
    if v.filler_packets > 0 {
        v.problems
            .push(format!("filler rules matched {} packets", v.filler_packets));
    }
    if v.idle_match_rules > 0 {
        v.problems.push(format!(
            "{} matching rules saw no packet",
            v.idle_match_rules
        ));
    }
    if v.policy_drops > 0 {
        v.problems.push(format!(
            "the drop policy dropped {} packets",
            v.policy_drops
        ));
    }
    v.ok = v.problems.is_empty();
    v
}

/// Pure part of [`verdicts`] for an imported ruleset: each rule's counter (from
/// `chains`: chain name → counters in order; a drop policy's is the last rule of
/// its chain), the rule that took the traffic, the drops. No filler/match
/// expectation: the user's rules are what they are.
///
/// A rule whose verdict is a verdict map ([`crate::import::map_verdicts`]) counts
/// every packet it looked up, whatever verdict its element gave or none (on to the
/// next rule): its packets are never stated as dropped or accepted. It may be named
/// as having taken the traffic, said so ("looked up in its verdict map"), where its
/// map gives a final verdict and no rule with a final verdict counted as many packets
/// (a packet that found no element counts again at a later rule).
pub fn judge_imported(rules: &[ImportedRule], chains: &[(String, Vec<u64>)]) -> Verdicts {
    let mut v = Verdicts::default();
    // The candidate that took the traffic: rule, packets, its verdict map's verdicts.
    let mut best: Option<(&ImportedRule, u64, Option<Vec<&str>>)> = None;
    let mut drops: Vec<String> = vec![];
    let mut dropped = 0;
    for r in rules {
        // A policy's counted drop is the last rule of its chain (the chain of
        // fwbench's that holds it); its `index` is its place after the user's rules.
        let at = |v: &Vec<u64>| match r.policy {
            true => v.last().copied(),
            false => r.index.checked_sub(1).and_then(|i| v.get(i).copied()),
        };
        let Some(packets) = chains
            .iter()
            .find(|(c, _)| *c == r.chain)
            .and_then(|(_, v)| at(v))
        else {
            v.problems
                .push(format!("rule {} not found in chain {}", r.index, r.chain));
            continue;
        };
        v.rules.push(RuleHit {
            chain: r.user_chain.clone(),
            index: r.index,
            text: r.text.clone(),
            packets,
            policy: r.policy,
        });
        if packets == 0 {
            continue;
        }
        if r.policy {
            v.policy_drops += packets;
        }
        if r.drops() {
            dropped += packets;
            drops.push(if r.policy {
                format!("the policy of chain {}", r.user_chain)
            } else {
                format!("rule {} ({})", r.place(), r.text)
            });
        } else if matches!(r.verdict.as_str(), "accept") {
            v.matched_packets += packets;
        }
        let map = crate::import::map_verdicts(&r.verdict).filter(|m| {
            m.iter()
                .any(|v| matches!(*v, "accept" | "drop" | "reject" | "?"))
        });
        let terminal = r.drops() || r.verdict == "accept";
        // A tie goes to a rule with a final verdict over a verdict map.
        let beats = |(_, p, m): &(&ImportedRule, u64, Option<Vec<&str>>)| {
            packets > *p || (packets == *p && m.is_some() && map.is_none())
        };
        if (terminal || map.is_some()) && best.as_ref().is_none_or(beats) {
            best = Some((r, packets, map));
        }
    }
    v.took = best.map(|(r, p, map)| match map {
        None => format!("{} ({}): {p} packets", r.place(), r.text),
        Some(m) => format!(
            "{} ({}): {p} packets looked up in its verdict map (by element {}; without \
             one on to the next rule)",
            r.place(),
            r.text,
            either(&m)
        ),
    });
    if dropped > 0 {
        v.dropped = Some(Dropped {
            packets: dropped,
            by: drops.join(", "),
        });
    }
    v.ok = v.problems.is_empty();
    v
}

/// `a`, `a or b`, `a, b or c` (`?`: a verdict not known).
fn either(verdicts: &[&str]) -> String {
    let words: Vec<&str> = verdicts
        .iter()
        .map(|v| if *v == "?" { "a verdict not known" } else { v })
        .collect();
    match words.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Ip;
    use crate::rendered::ChainLayout;

    fn rendered(roles: Vec<Role>) -> Rendered {
        Rendered {
            engine: Engine::Nft,
            ip: Ip::V4,
            install: vec![],
            remove: vec![],
            expect_rules: roles.len(),
            expect_elements: 0,
            layout: vec![ChainLayout {
                hook: Hook::FilterForward,
                roles,
            }],
            nft_family: Default::default(),
            settings: Default::default(),
            imported_rules: vec![],
            drop_sets: vec![],
        }
    }

    #[test]
    fn imported_verdicts_name_the_rule_and_the_policy_drops() {
        use crate::model::{AimFields, ImportedRule};
        let rule = |chain: &str, index, verdict: &str, policy| ImportedRule {
            chain: format!("FWBENCH-{chain}"),
            user_chain: chain.into(),
            index,
            text: format!("rule {index}"),
            verdict: verdict.into(),
            policy,
            aim: AimFields::default(),
        };
        let rules = [
            rule("INPUT", 1, "accept", false),
            rule("INPUT", 2, "jump X", false),
            rule("X", 1, "accept", false),
            // The policy: placed after INPUT's rules, counted by the last rule of
            // the chain of fwbench's that holds it.
            ImportedRule {
                chain: "FWBENCH-P-INPUT".into(),
                ..rule("INPUT", 3, "drop", true)
            },
        ];
        let chains = vec![
            ("FWBENCH-INPUT".to_string(), vec![5, 900]),
            ("FWBENCH-X".to_string(), vec![100]),
        ];
        let v = judge_imported(&rules, &chains);
        assert_eq!(v.problems, ["rule 3 not found in chain FWBENCH-P-INPUT"]);
        let chains = vec![
            ("FWBENCH-INPUT".to_string(), vec![5, 900]),
            ("FWBENCH-X".to_string(), vec![100]),
            ("FWBENCH-P-INPUT".to_string(), vec![1705, 800]),
        ];
        let v = judge_imported(&rules, &chains);
        assert!(v.ok);
        assert_eq!(
            v.rules.iter().map(|r| r.packets).collect::<Vec<_>>(),
            [5, 900, 100, 800]
        );
        assert_eq!(v.took.as_deref(), Some("INPUT:3 (rule 3): 800 packets"));
        assert_eq!((v.policy_drops, v.matched_packets), (800, 105));
        let d = v.dropped.unwrap();
        assert_eq!(
            (d.packets, d.by.as_str()),
            (800, "the policy of chain INPUT")
        );
        let quiet = judge_imported(
            &rules,
            &[
                ("FWBENCH-INPUT".to_string(), vec![7, 0]),
                ("FWBENCH-X".to_string(), vec![0]),
                ("FWBENCH-P-INPUT".to_string(), vec![7, 0]),
            ],
        );
        assert_eq!(quiet.took.as_deref(), Some("INPUT:1 (rule 1): 7 packets"));
        assert!(quiet.dropped.is_none());
    }

    #[test]
    fn a_verdict_maps_packets_are_never_stated_as_its_verdicts_nor_anothers() {
        use crate::model::{AimFields, ImportedRule};
        let rule = |index, verdict: &str| ImportedRule {
            chain: "input".into(),
            user_chain: "input".into(),
            index,
            text: format!("rule {index}"),
            verdict: verdict.into(),
            policy: false,
            aim: AimFields::default(),
        };
        let rules = [
            rule(1, "accept"),
            rule(2, "vmap {drop, accept, jump svc}"),
            rule(3, "drop"),
        ];
        let judge = |c: Vec<u64>| judge_imported(&rules, &[("input".to_string(), c)]);
        // The map looked 900 packets up: they are its, by some element or none — not
        // the 5 the accept rule took, and not stated as dropped.
        let v = judge(vec![5, 900, 0]);
        assert_eq!(
            v.took.as_deref(),
            Some(
                "input:2 (rule 2): 900 packets looked up in its verdict map (by element \
                 drop, accept or jump svc; without one on to the next rule)"
            )
        );
        assert!(v.dropped.is_none(), "{v:?}");
        assert_eq!(v.matched_packets, 5);
        // As many at a later drop rule: they found no element and were dropped there.
        let v = judge(vec![5, 900, 900]);
        assert_eq!(v.took.as_deref(), Some("input:3 (rule 3): 900 packets"));
        assert_eq!(v.dropped.map(|d| d.packets), Some(900));
        // A map that only jumps gives no final verdict: like a jump, never named.
        let jumps = [rule(1, "accept"), rule(2, "vmap {jump a, goto b}")];
        let v = judge_imported(&jumps, &[("input".to_string(), vec![5, 900])]);
        assert_eq!(v.took.as_deref(), Some("input:1 (rule 1): 5 packets"));
    }

    #[test]
    fn judge_flags_each_mismatch() {
        let r = rendered(vec![Role::Filler, Role::Match, Role::Match, Role::Policy]);
        let ok = judge(&r, None, |_| Some(vec![0, 10, 5, 0]));
        assert!(ok.ok, "{ok:?}");
        assert_eq!(ok.matched_packets, 15);
        let bad = judge(&r, None, |_| Some(vec![2, 10, 0, 4]));
        assert!(!bad.ok);
        assert_eq!(bad.problems.len(), 3, "{:?}", bad.problems);
        // A set gateway events added elements to: its filler rule's packets are theirs.
        let set = DropSet {
            name: "s".into(),
            hook: r.layout[0].hook,
            l4: crate::model::L4::Udp,
            at: 0,
        };
        let events = judge(&r, Some(&set), |_| Some(vec![7, 10, 5, 0]));
        assert!(events.ok, "{events:?}");
        assert_eq!((events.event_packets, events.filler_packets), (7, 0));
        let elsewhere = DropSet { at: 3, ..set };
        assert!(!judge(&r, Some(&elsewhere), |_| Some(vec![7, 10, 5, 0])).ok);
        let missing = judge(&r, None, |_| None);
        assert!(!missing.ok);
        let short = judge(&r, None, |_| Some(vec![0]));
        assert!(short.problems[0].contains("1 rules installed, 4 expected"));
    }

    #[test]
    fn a_replacement_is_judged_against_the_installed_layout() {
        use Role::{Filler as F, Match as M, Policy as P};
        let r = rendered(vec![F, M, F, P]);
        let hook = r.layout[0].hook;
        // Two events' rules at the head (the marker's counted 40), then the
        // installed rules: the match rule took the traffic.
        let v = judge_replacement(&r, &[(hook, vec![40, 0, 0, 900, 0, 0])]);
        assert!(v.ok, "{v:?}");
        assert_eq!(
            (v.event_packets, v.matched_packets, v.filler_packets),
            (40, 900, 0)
        );
        // A filler of the installed rules that counted is still a mismatch.
        let bad = judge_replacement(&r, &[(hook, vec![40, 0, 0, 900, 3, 0])]);
        assert!(
            !bad.ok && bad.problems[0].contains("filler rules matched 3"),
            "{bad:?}"
        );
        // A set engine collapsed the events' rules into the head filler's set.
        let v = judge_replacement(&r, &[(hook, vec![40, 900, 0, 0])]);
        assert!(v.ok, "{v:?}");
        assert_eq!((v.event_packets, v.matched_packets), (40, 900));
        // An idle match rule, a policy drop: mismatches, as for the installed set.
        let idle = judge_replacement(&r, &[(hook, vec![40, 0, 0, 0, 0, 7])]);
        assert_eq!(idle.problems.len(), 2, "{:?}", idle.problems);
        // Fewer rules than installed: said so.
        assert!(!judge_replacement(&r, &[(hook, vec![1])]).ok);
        assert!(!judge_replacement(&r, &[]).ok);
    }
}
