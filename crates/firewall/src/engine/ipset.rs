//! Engines `ipset-legacy` and `ipset-nft`: iptables rules (legacy or nft flavour, via
//! the `engine::xtables` module) where runs of filler rules collapse into one ipset
//! `fwbench-*` and one rule matching it. The sets are applied with `ipset restore`
//! before the rules and destroyed after them.
//!
//! Owns: the `ipset restore` batch, the removal order (rules, then sets), counting the
//! elements of fwbench's sets.
//! Must not: create, flush or destroy any set not named `fwbench-*`.

use super::xtables::{
    counters, ipset_elements, ipt_change, ipt_remove, ipt_settings, ipt_text, render_imported,
    restore_tool, rule_count,
};
use super::{planned, Backend};
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

/// iptables rules with ipsets, in the legacy or nft flavour.
pub struct Ipset {
    engine: Engine,
    flavour: Flavour,
}

pub static LEGACY: Ipset = Ipset {
    engine: Engine::IpsetLegacy,
    flavour: Flavour::Legacy,
};

pub static NFT: Ipset = Ipset {
    engine: Engine::IpsetNft,
    flavour: Flavour::Nft,
};

impl Backend for Ipset {
    fn render(&self, rs: &RuleSet, opts: &EngineOptions) -> Result<Rendered, RenderError> {
        if let Some(imp) = &rs.raw {
            return render_imported(self.engine, rs.ip, self.flavour, imp);
        }
        let (plan, mut out) = planned(self.engine, rs, true)?;
        out.settings = ipt_settings(rs, &plan, self.flavour);
        if !plan.sets.is_empty() {
            let sets: Vec<String> = plan
                .sets
                .iter()
                .map(|s| {
                    let (hashsize, maxelem) = sizes(s.elements.len() + opts.set_room as usize);
                    format!(
                        "{IPSET_PREFIX}{} hash:ip,port family {} hashsize {hashsize} maxelem {maxelem}",
                        s.name,
                        ipset_family(rs.ip)
                    )
                })
                .collect();
            out.settings.sets = Some(sets.join(", "));
        }
        let tool = restore_tool(rs.ip, self.flavour);
        if !plan.sets.is_empty() {
            out.install.push(Batch {
                tool: Tool::IpsetRestore,
                text: ipset_text(rs.ip, &plan, opts.set_room),
            });
        }
        out.install.push(Batch {
            tool,
            text: ipt_text(rs.ip, &plan, self.engine, Some(IPSET_PREFIX))?,
        });
        // Rules referencing the sets go first, then the sets can be destroyed.
        out.remove.push(Batch {
            tool,
            text: ipt_remove(&plan),
        });
        if !plan.sets.is_empty() {
            let mut text = String::new();
            for s in &plan.sets {
                let _ = writeln!(text, "destroy {IPSET_PREFIX}{}", s.name);
            }
            out.remove.push(Batch {
                tool: Tool::IpsetRestore,
                text,
            });
        }
        Ok(out)
    }

    fn count(&self, r: &Rendered) -> Result<(usize, usize), ToolError> {
        Ok((rule_count(r.ip, self.flavour)?, ipset_elements()?))
    }

    fn counters(&self, r: &Rendered) -> Result<Vec<(Hook, Vec<u64>)>, ToolError> {
        counters(r.ip, self.flavour)
    }

    fn chain_counters(&self, r: &Rendered) -> Result<Vec<(String, Vec<u64>)>, ToolError> {
        super::xtables::ipt_counters(r.ip, self.flavour)
    }

    /// Rules as the iptables engines change them; elements with `ipset add`/`del`
    /// one call each, or one `ipset restore` batch.
    fn change(
        &self,
        r: &Rendered,
        change: &Change,
        method: UpdateMethod,
    ) -> Result<Vec<Step>, RenderError> {
        let (verb, set, l4, elements) = match change {
            Change::AddElements { set, l4, elements } => ("add", set, l4, elements),
            Change::RemoveElements { set, l4, elements } => ("del", set, l4, elements),
            Change::Insert { .. } | Change::Delete { .. } | Change::Replace(_) => {
                return ipt_change(self.engine, r.ip, self.flavour, change, method)
            }
        };
        let name = format!("{IPSET_PREFIX}{set}");
        let entry = |e: &SetElem| format!("{},{}:{}", e.addr, l4.name(), e.port);
        match method {
            UpdateMethod::PerRule => Ok(elements
                .iter()
                .rev()
                .map(|e| Step::call(&["ipset", verb, name.as_str(), entry(e).as_str()]))
                .collect()),
            UpdateMethod::Batch => {
                let mut text = String::with_capacity(48 * elements.len());
                for e in elements {
                    let _ = writeln!(text, "{verb} {name} {}", entry(e));
                }
                Ok(vec![Step::batch(&Tool::IpsetRestore.argv(), text)])
            }
            UpdateMethod::Map => Err(super::unsupported_change(self.engine, change, method)),
        }
    }
}

/// The `ipset restore` batch that creates (or empties) and fills every set.
fn ipset_text(ip: Ip, plan: &Plan, room: u32) -> String {
    let elements: usize = plan.sets.iter().map(|s| s.elements.len()).sum();
    let mut t = String::with_capacity(128 + 40 * elements);
    let family = ipset_family(ip);
    for s in &plan.sets {
        let name = format!("{IPSET_PREFIX}{}", s.name);
        let (hashsize, maxelem) = sizes(s.elements.len() + room as usize);
        let _ = writeln!(
            t,
            "create {name} hash:ip,port family {family} hashsize {hashsize} maxelem {maxelem} -exist"
        );
        let _ = writeln!(t, "flush {name}");
        let proto = s.l4.name();
        for e in &s.elements {
            let _ = writeln!(t, "add {name} {},{proto}:{}", e.addr, e.port);
        }
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
