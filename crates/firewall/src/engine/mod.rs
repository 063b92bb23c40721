//! The engine seam: one [`Backend`] trait, one file per backend, one registry.
//!
//! Owns: what every engine must decide — how a [`RuleSet`] becomes its
//! batches, the tools those need, how the batches are applied and removed, and how
//! rule and element counts and per-rule packet counters are read back, how a change
//! to an installed rule set is made (a gateway event) — and the
//! registry [`backend`] from the stable [`Engine`] key to its backend.
//! Must not: hold one engine's syntax here (that lives in the engine's file) or match
//! on engines anywhere but the registry: adding an engine is one file, one line in
//! the `engines!` list (`fwmodel::model`: its variant, name, aliases, kind and cost per
//! rule for the run estimate) and one registry line, and the compiler names every other
//! place.

mod bpf;
mod bpf_load;
mod bpf_table;
mod ipset;
mod nft;
mod none;
mod xtables;

pub use bpf_table::MAX_BPF_RULES;
pub use ipset::IPSET_PREFIX;
pub use nft::{
    flowtable_probe, flowtable_unavailable, nft_chain, FLOWTABLE_PROBE, NFT_FAMILIES, NFT_TABLE,
};
pub use xtables::{ipt_chain, parse_save_counters};

use crate::change::{Change, Step, UpdateMethod};
use crate::model::{Action, Engine, EngineOptions, Hook, Imported, Ip, RuleSet};
use crate::plan::{plan, validate, Plan};
use crate::rendered::{DropSet, RenderError, Rendered};
use crate::tool::{self, Batch, Tool, ToolError};
use std::net::{IpAddr, SocketAddr};

/// A firewall engine: renders, applies, reads back and removes fwbench's rules.
pub trait Backend: Sync {
    /// Render a rule set: install and removal batches, the counts to read back, the
    /// chain layout, the settings that change a rule's cost.
    fn render(&self, rs: &RuleSet, opts: &EngineOptions) -> Result<Rendered, RenderError>;

    /// The programs a rendered rule set needs (checked before anything is built).
    fn tools(&self, r: &Rendered) -> Vec<Tool> {
        let mut tools: Vec<Tool> = vec![];
        for b in r.install.iter().chain(&r.remove) {
            if !tools.contains(&b.tool) {
                tools.push(b.tool);
            }
        }
        tools
    }

    /// Apply the install batches in order; each batch is atomic.
    fn apply(&self, r: &Rendered) -> Result<(), ToolError> {
        r.install.iter().try_for_each(tool::apply)
    }

    /// Best effort: apply each removal batch (of an installed rule set or of a crash
    /// marker), ignoring "does not exist" failures; the first failure, if any.
    fn remove(&self, batches: &[Batch]) -> Option<ToolError> {
        let mut first = None;
        for b in batches {
            if let Err(e) = tool::apply(b) {
                first.get_or_insert(e);
            }
        }
        first
    }

    /// (rules, set elements) of fwbench's own objects, read back from the kernel.
    fn count(&self, r: &Rendered) -> Result<(usize, usize), ToolError>;

    /// Packet counters of fwbench's rules: for each hook whose chain exists, its
    /// rules' counts in order.
    fn counters(&self, r: &Rendered) -> Result<Vec<(Hook, Vec<u64>)>, ToolError>;

    /// Packet counters of every rule in fwbench's chains, per chain name, in order
    /// (for imported rulesets, whose chains are the user's).
    fn chain_counters(&self, _r: &Rendered) -> Result<Vec<(String, Vec<u64>)>, ToolError> {
        Ok(vec![])
    }

    /// The program calls that make `change` to the installed rule set `r` by `method`
    /// (a gateway event's update); refused, naming what, where the engine has no such
    /// mechanism. Per-rule calls come in reverse order, so the change's first rule or
    /// element (the marker flow's) is the last applied.
    fn change(&self, r: &Rendered, change: &Change, method: UpdateMethod) -> ChangeSteps {
        Err(unsupported_change(r.engine, change, method))
    }

    /// What a failed `change` may have left behind that its steps made outside
    /// fwbench's rule set (an ipset reload's filled set before its swap), taken out
    /// again; none found is not a failure.
    fn after_failed(&self, _change: &Change) -> Vec<Step> {
        vec![]
    }

    /// Whether the rules run in the ingress interface's driver (native XDP): before
    /// the kernel steers a packet to the gateway's CPUs, wherever the interface's NAPI
    /// polls — on a veth, the CPU that sent the packet, or wherever its poll last
    /// stayed — and a packet the program cannot take in time is dropped in front of
    /// it, on the sending side (a veth counts it as its peer's transmit drop).
    fn in_driver(&self) -> bool {
        false
    }

    /// The unit of an element's timeout, ms: a timeout is rounded up to it (nft: 1;
    /// ipset: whole seconds).
    fn timeout_step_ms(&self) -> u64 {
        1
    }

    /// Handles of the `k` rules of fwbench's chain of `hook` behind its first `at`, in
    /// chain order (read after an insert, untimed, where deleting a rule needs its
    /// handle).
    fn handles(
        &self,
        _r: &Rendered,
        _hook: Hook,
        _at: usize,
        _k: usize,
    ) -> Result<Vec<u64>, ToolError> {
        Ok(vec![])
    }
}

/// What [`Backend::change`] gives: the program calls that make a change, or why the
/// engine cannot make it.
pub type ChangeSteps = Result<Vec<Step>, RenderError>;

/// The choice of the engines whose changes are program calls (nft, iptables, ipset):
/// one call per rule or element (`true`) or one batch (`false`); they have no map to
/// write, so `map` is refused.
fn per_rule(engine: Engine, change: &Change, method: UpdateMethod) -> Result<bool, RenderError> {
    match method {
        UpdateMethod::PerRule => Ok(true),
        UpdateMethod::Batch => Ok(false),
        // A two-step reload is the whole rule set's removal and install batches, made
        // by `update` for every engine that has them, not a change of one engine's.
        UpdateMethod::Map | UpdateMethod::FlushLoad => {
            Err(unsupported_change(engine, change, method))
        }
    }
}

/// A set's reload by an engine whose changes are program calls (nft-set, the ipset
/// engines), by `method`: `batch` is `atomic` (one step: the set's contents replaced
/// at once), `flush-load` is `flush` (one call emptying the set) and then `fill` (one
/// batch adding every element), `per-rule` is `flush` and then `each` (one call per
/// element). Between `flush` and the last add, the set lacks elements.
fn reload_set_steps(
    engine: Engine,
    change: &Change,
    method: UpdateMethod,
    atomic: impl FnOnce() -> Vec<Step>,
    flush: Step,
    fill: impl FnOnce() -> Step,
    each: impl FnOnce() -> Vec<Step>,
) -> ChangeSteps {
    match method {
        UpdateMethod::Batch => Ok(atomic()),
        UpdateMethod::FlushLoad => Ok(vec![flush, fill()]),
        UpdateMethod::PerRule => Ok(std::iter::once(flush).chain(each()).collect()),
        UpdateMethod::Map => Err(unsupported_change(engine, change, method)),
    }
}

/// Run a BPF engine's map write (the text of its one step, see `bpf_table::MapWrite`)
/// in this process; the map operations it took.
pub fn write_bpf_maps(text: &str) -> Result<u32, ToolError> {
    let w = bpf_table::MapWrite::parse(text).map_err(|e| ToolError::Io(e.to_string()))?;
    bpf_load::write(&w)
}

/// The refusal of an update an engine has no mechanism for.
fn unsupported_change(engine: Engine, change: &Change, method: UpdateMethod) -> RenderError {
    RenderError::Unsupported {
        engine,
        feature: format!(
            "the update '{}' by method {}",
            change.describe(),
            method.name()
        ),
        hint: String::new(),
    }
}

/// Batches as the steps of a change.
pub(crate) fn batch_steps(batches: &[Batch]) -> Vec<Step> {
    batches
        .iter()
        .map(|b| Step::batch(&b.tool.argv(), b.text.clone()))
        .collect()
}

/// The backend of an engine: the one place that maps engines to backends.
pub fn backend(e: Engine) -> &'static dyn Backend {
    match e {
        Engine::None => &none::NONE,
        Engine::Nft => &nft::NFT,
        Engine::NftSet => &nft::NFT_SET,
        Engine::IptablesLegacy => &xtables::LEGACY,
        Engine::IptablesNft => &xtables::NFT,
        Engine::IpsetLegacy => &ipset::LEGACY,
        Engine::IpsetNft => &ipset::NFT,
        Engine::Xdp => &bpf::XDP,
        Engine::XdpMap => &bpf::XDP_MAP,
        Engine::XdpGeneric => &bpf::XDP_GENERIC,
        Engine::TcBpf => &bpf::TC_BPF,
    }
}

/// Validate and plan a model rule set (collapsing filler runs into sets when
/// `collapse`); the rendering so far, with its counts and layout.
fn planned(engine: Engine, rs: &RuleSet, collapse: bool) -> Result<(Plan, Rendered), RenderError> {
    validate(rs)?;
    let plan = plan(rs, collapse)?;
    let mut out = Rendered::empty(engine, rs.ip);
    out.expect_rules = plan.expect_rules();
    out.expect_elements = plan.expect_elements();
    out.layout = plan.layout();
    out.drop_sets = plan
        .chains
        .iter()
        .flat_map(|c| c.rules.iter().enumerate())
        .filter(|(_, r)| r.action == Action::Drop)
        .filter_map(|(at, r)| {
            let s = plan
                .sets
                .iter()
                .find(|s| Some(&s.name) == r.m.set.as_ref())?;
            Some(DropSet {
                name: s.name.clone(),
                hook: r.hook,
                l4: s.l4,
                at,
            })
        })
        .collect();
    Ok((plan, out))
}

/// An imported file is applied as is (it is already rewritten into fwbench's names);
/// the counts come from the import.
fn imported(engine: Engine, ip: Ip, imp: &Imported, install: Batch, remove: Batch) -> Rendered {
    let mut out = Rendered::empty(engine, ip);
    out.install.push(install);
    out.remove.push(remove);
    out.expect_rules = imp.rules;
    out.expect_elements = imp.elements;
    out.imported_rules = imp.rule_list.clone();
    out
}

/// A destination NAT target as nft and iptables both write it: the address, with the
/// port after a colon (an IPv6 address then in brackets).
fn nat_to(a: IpAddr, port: Option<u16>) -> String {
    match port {
        Some(p) => SocketAddr::new(a, p).to_string(),
        None => a.to_string(),
    }
}

/// The counters of the chains named `chain(hook)`, per hook.
fn by_hook(
    chains: Vec<(String, Vec<u64>)>,
    chain: fn(Hook) -> &'static str,
) -> Vec<(Hook, Vec<u64>)> {
    Hook::ALL
        .into_iter()
        .filter_map(|h| {
            let (_, v) = chains.iter().find(|(c, _)| c == chain(h))?;
            Some((h, v.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_has_a_backend_that_renders_nothing_for_no_rules() {
        for &e in Engine::ALL {
            let r = backend(e).render(&RuleSet::empty(Ip::V4), &EngineOptions::default());
            assert!(r.is_ok(), "{e}: {r:?}");
        }
    }

    /// Only native XDP runs in the ingress driver, before the kernel steers packets:
    /// generic XDP and tc run after it, as netfilter does.
    #[test]
    fn only_native_xdp_runs_in_the_driver() {
        let in_driver: Vec<Engine> = (Engine::ALL.iter().copied())
            .filter(|&e| backend(e).in_driver())
            .collect();
        assert_eq!(in_driver, [Engine::Xdp, Engine::XdpMap]);
    }

    #[test]
    fn nat_targets_bracket_an_ipv6_address_before_its_port() {
        let v4: IpAddr = "198.19.0.2".parse().unwrap();
        let v6: IpAddr = "2001:2::2".parse().unwrap();
        assert_eq!(nat_to(v4, Some(9000)), "198.19.0.2:9000");
        assert_eq!(nat_to(v4, None), "198.19.0.2");
        assert_eq!(nat_to(v6, Some(9000)), "[2001:2::2]:9000");
        assert_eq!(nat_to(v6, None), "2001:2::2");
    }
}
