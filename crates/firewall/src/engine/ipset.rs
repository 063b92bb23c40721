//! Engines `ipset-legacy` and `ipset-nft`: iptables rules (legacy or nft flavour, via
//! the `engine::xtables` module) where runs of filler rules collapse into one ipset
//! `fwbench-*` and one rule matching it. The sets are applied with `ipset restore`
//! before the rules and destroyed after them.
//!
//! Owns: the `ipset restore` batch, the removal order (rules, then sets), counting the
//! elements of fwbench's sets.
//! Must not: create, flush or destroy any set not named `fwbench-*`.

use super::xtables::{ipset_elements, Xtables};
use super::Backend;
use super::ChangeSteps;
use crate::change::{Change, Step, UpdateMethod};
use crate::model::*;
use crate::plan::{Plan, MAX_SET_NAME};
use crate::rendered::{RenderError, Rendered};
use crate::tool::{Batch, Flavour, Tool, ToolError};
use std::fmt::Write as _;

/// Prefix of every ipset fwbench creates.
pub const IPSET_PREFIX: &str = "fwbench-";

// Set names are checked for every engine against ipset's limit of 31 characters.
const _: () = assert!(MAX_SET_NAME + IPSET_PREFIX.len() == 31);

/// iptables rules with ipsets, in the legacy or nft flavour: the iptables engine of
/// that flavour, plus the sets.
pub struct Ipset(Xtables);

pub static LEGACY: Ipset = Ipset(Xtables::new(Engine::IpsetLegacy, Flavour::Legacy));

pub static NFT: Ipset = Ipset(Xtables::new(Engine::IpsetNft, Flavour::Nft));

impl Backend for Ipset {
    fn render(&self, rs: &RuleSet, opts: &EngineOptions) -> Result<Rendered, RenderError> {
        let (plan, mut out) = self.0.render_rules(rs, Some(IPSET_PREFIX))?;
        let Some(plan) = plan.filter(|p| !p.sets.is_empty()) else {
            return Ok(out);
        };
        let sets: Vec<String> = plan
            .sets
            .iter()
            .map(|s| {
                let (hashsize, maxelem) = sizes(s.elements.len() + opts.set_room as usize);
                format!(
                    "{IPSET_PREFIX}{} hash:ip,port family {} hashsize {hashsize} maxelem {maxelem}{}",
                    s.name,
                    ipset_family(rs.ip),
                    timeouts(opts.set_timeouts)
                )
            })
            .collect();
        out.settings.sets = Some(sets.join(", "));
        // The sets go in before the rules referencing them, and are destroyed after.
        out.install.insert(
            0,
            Batch {
                tool: Tool::IpsetRestore,
                text: ipset_text(rs.ip, &plan, opts),
            },
        );
        let mut text = String::new();
        for s in &plan.sets {
            let _ = writeln!(text, "destroy {IPSET_PREFIX}{}", s.name);
        }
        out.remove.push(Batch {
            tool: Tool::IpsetRestore,
            text,
        });
        Ok(out)
    }

    fn count(&self, r: &Rendered) -> Result<(usize, usize), ToolError> {
        Ok((self.0.rule_count(r.ip)?, ipset_elements()?))
    }

    fn counters(&self, r: &Rendered) -> Result<Vec<(Hook, Vec<u64>)>, ToolError> {
        self.0.counters(r)
    }

    fn chain_counters(&self, r: &Rendered) -> Result<Vec<(String, Vec<u64>)>, ToolError> {
        self.0.chain_counters(r)
    }

    /// Rules as the iptables engines change them; elements with `ipset add`/`del`
    /// one call each, or one `ipset restore` batch.
    fn change(&self, r: &Rendered, change: &Change, method: UpdateMethod) -> ChangeSteps {
        let (verb, set, l4, elements, timeout) = match change {
            Change::AddElements {
                set,
                l4,
                elements,
                timeout_ms,
            } => ("add", set, l4, elements, *timeout_ms),
            Change::RemoveElements { set, l4, elements } => ("del", set, l4, elements, None),
            Change::Insert { .. } | Change::Delete { .. } | Change::Replace(_) => {
                return self.0.change(r, change, method)
            }
            Change::ReloadSet { set, l4, elements } => {
                return reload_set(r.engine, r.ip, change, method, set, *l4, elements)
            }
        };
        let name = format!("{IPSET_PREFIX}{set}");
        if super::per_rule(r.engine, change, method)? {
            return Ok(calls(verb, &name, *l4, elements.iter().rev(), timeout));
        }
        Ok(vec![Step::batch(
            &Tool::IpsetRestore.argv(),
            lines(verb, &name, *l4, elements, timeout),
        )])
    }

    fn timeout_step_ms(&self) -> u64 {
        1000
    }

    fn after_failed(&self, change: &Change) -> Vec<Step> {
        match change {
            Change::ReloadSet { .. } => vec![Step {
                none_found_ok: true,
                ..Step::call(&["ipset", "destroy", SWAP_SET])
            }],
            Change::Insert { .. }
            | Change::Delete { .. }
            | Change::Replace(_)
            | Change::AddElements { .. }
            | Change::RemoveElements { .. } => vec![],
        }
    }
}

/// An element as ipset writes it: `ADDR,PROTO:PORT`, and `timeout S` after it where
/// it expires (ipset's timeouts are whole seconds, rounded up: see
/// `Backend::timeout_step_ms`).
fn entry(e: &SetElem, l4: L4, timeout_ms: Option<u64>) -> Vec<String> {
    let mut out = vec![format!("{},{}:{}", e.addr, l4.name(), e.port)];
    if let Some(ms) = timeout_ms {
        out.extend(["timeout".to_string(), ms.div_ceil(1000).to_string()]);
    }
    out
}

/// `ipset restore` lines `VERB NAME ENTRY`, one per element.
fn lines(verb: &str, name: &str, l4: L4, elements: &[SetElem], timeout: Option<u64>) -> String {
    let mut t = String::with_capacity(48 * elements.len());
    for e in elements {
        let _ = writeln!(t, "{verb} {name} {}", entry(e, l4, timeout).join(" "));
    }
    t
}

/// One `ipset VERB NAME ENTRY` call per element, in the order given.
fn calls<'a>(
    verb: &str,
    name: &str,
    l4: L4,
    elements: impl Iterator<Item = &'a SetElem>,
    timeout: Option<u64>,
) -> Vec<Step> {
    elements
        .map(|e| {
            let head = ["ipset", verb, name].map(String::from);
            Step::call(&[&head[..], &entry(e, l4, timeout)].concat())
        })
        .collect()
}

/// Where a set's atomic reload fills the new contents before `ipset swap` makes them
/// the set's (named `fwbench-*`, as every set fwbench touches).
const SWAP_SET: &str = "fwbench-swap";

/// A set's reload: atomically (`batch`) as blocklist jobs do it — a new set filled,
/// then `ipset swap`ped with the old (the rules matching the set by name then match
/// the new contents; ipset's documented way to replace a set in use) and the old one
/// destroyed — or emptied by `ipset flush` and filled again (`flush-load`: one
/// `ipset restore`; `per-rule`: one `ipset add` each).
fn reload_set(
    engine: Engine,
    ip: Ip,
    change: &Change,
    method: UpdateMethod,
    set: &str,
    l4: L4,
    elements: &[SetElem],
) -> ChangeSteps {
    let name = format!("{IPSET_PREFIX}{set}");
    if name == SWAP_SET {
        return Err(RenderError::Invalid(format!(
            "set {name} is the name a set's reload fills before its swap"
        )));
    }
    let restore = |text: String| Step::batch(&Tool::IpsetRestore.argv(), text);
    super::reload_set_steps(
        engine,
        change,
        method,
        || {
            let (hashsize, maxelem) = sizes(elements.len());
            let mut t = format!(
                "create {SWAP_SET} hash:ip,port family {} hashsize {hashsize} maxelem {maxelem}\n",
                ipset_family(ip)
            );
            t.push_str(&lines("add", SWAP_SET, l4, elements, None));
            let _ = writeln!(t, "swap {SWAP_SET} {name}\ndestroy {SWAP_SET}");
            vec![restore(t)]
        },
        Step::call(&["ipset", "flush", name.as_str()]),
        || restore(lines("add", &name, l4, elements, None)),
        || calls("add", &name, l4, elements.iter(), None),
    )
}

/// ` timeout 0` where the sets are made so that their elements may expire (each
/// given its own timeout; 0: none by default).
fn timeouts(on: bool) -> &'static str {
    if on {
        " timeout 0"
    } else {
        ""
    }
}

/// The `ipset restore` batch that creates (or empties) and fills every set.
fn ipset_text(ip: Ip, plan: &Plan, opts: &EngineOptions) -> String {
    let room = opts.set_room;
    let elements: usize = plan.sets.iter().map(|s| s.elements.len()).sum();
    let mut t = String::with_capacity(128 + 40 * elements);
    let family = ipset_family(ip);
    for s in &plan.sets {
        let name = format!("{IPSET_PREFIX}{}", s.name);
        let (hashsize, maxelem) = sizes(s.elements.len() + room as usize);
        let _ = writeln!(
            t,
            "create {name} hash:ip,port family {family} hashsize {hashsize} maxelem {maxelem}{} -exist",
            timeouts(opts.set_timeouts)
        );
        let _ = writeln!(t, "flush {name}");
        t.push_str(&lines("add", &name, s.l4, &s.elements, None));
    }
    t
}

/// ipset's name of an IP version.
fn ipset_family(ip: Ip) -> &'static str {
    match ip {
        Ip::V4 => "inet",
        Ip::V6 => "inet6",
    }
}

/// (hashsize, maxelem) of a set of `n` elements.
fn sizes(n: usize) -> (usize, usize) {
    (n.max(1024).next_power_of_two(), n.max(65536))
}
