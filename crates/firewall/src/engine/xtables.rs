//! Engines `iptables-legacy` and `iptables-nft`: one backend parameterised by the
//! iptables flavour. fwbench's rules live in its own chains `FWBENCH-*`, hooked from
//! the built-in chains by one jump rule each, applied with one
//! `iptables-restore --noflush` batch per rule set. Also the iptables half of the
//! ipset engines (the `engine::ipset` module).
//!
//! Owns: iptables-save syntax for the rule model, removal of exactly fwbench's chains,
//! reading counts and counters back with `iptables-save -c`.
//! Must not: flush, create or delete any chain but `FWBENCH-*`, nor express a model's
//! sets (those are the ipset engines'); an import's own ipsets (`--import-ipset`,
//! renamed `fwbench-i-*`) are created before its rules and destroyed after them.

use super::ChangeSteps;
use super::{imported, planned, Backend};
use crate::change::{Change, Step, UpdateMethod};
use crate::model::*;
use crate::plan::{Plan, PlanChain};
use crate::rendered::{RenderError, Rendered, Settings};
use crate::tool::{run, Batch, Flavour, Tool, ToolError};
use std::fmt::Write as _;

/// iptables chain names, hooked from the built-in chains by one jump rule each.
pub fn ipt_chain(hook: Hook) -> &'static str {
    match hook {
        Hook::RawPrerouting => "FWBENCH-RAW",
        Hook::ManglePrerouting => "FWBENCH-MANGLE",
        Hook::FilterForward => "FWBENCH-FORWARD",
        Hook::FilterInput => "FWBENCH-INPUT",
        Hook::NatPrerouting => "FWBENCH-DNAT",
        Hook::NatPostrouting => "FWBENCH-SNAT",
    }
}

/// iptables rules in the legacy or nft flavour: the engines without sets, and the
/// iptables half of the ipset engines (`engine::ipset` holds one).
pub struct Xtables {
    engine: Engine,
    flavour: Flavour,
}

pub static LEGACY: Xtables = Xtables::new(Engine::IptablesLegacy, Flavour::Legacy);

pub static NFT: Xtables = Xtables::new(Engine::IptablesNft, Flavour::Nft);

impl Xtables {
    pub(super) const fn new(engine: Engine, flavour: Flavour) -> Xtables {
        Xtables { engine, flavour }
    }

    /// The iptables half of a rule set: an imported file as is (no plan), or the
    /// validated plan with its settings and its one install and one removal batch.
    /// With `set_prefix` (the ipset engines) filler runs collapse into sets, matched
    /// by that prefix and their name; without, a set is refused.
    pub(super) fn render_rules(
        &self,
        rs: &RuleSet,
        set_prefix: Option<&str>,
    ) -> Result<(Option<Plan>, Rendered), RenderError> {
        if let Some(imp) = &rs.raw {
            return Ok((
                None,
                render_imported(self.engine, rs.ip, self.flavour, imp)?,
            ));
        }
        let (plan, mut out) = planned(self.engine, rs, set_prefix.is_some())?;
        out.settings = ipt_settings(rs, &plan, self.flavour);
        if set_prefix.is_none()
            && (!plan.sets.is_empty() || plan.rules().any(|r| r.m.set.is_some()))
        {
            return Err(no_sets(self.engine));
        }
        let tool = restore_tool(rs.ip, self.flavour);
        out.install.push(Batch {
            tool,
            text: ipt_text(rs.ip, &plan, self.engine, set_prefix)?,
        });
        out.remove.push(Batch {
            tool,
            text: ipt_remove(&plan),
        });
        Ok((Some(plan), out))
    }

    /// Rules in fwbench's chains, read back.
    pub(super) fn rule_count(&self, ip: Ip) -> Result<usize, ToolError> {
        Ok(ipt_counters(ip, self.flavour)?
            .iter()
            .map(|(_, v)| v.len())
            .sum())
    }
}

impl Backend for Xtables {
    fn render(&self, rs: &RuleSet, _opts: &EngineOptions) -> Result<Rendered, RenderError> {
        Ok(self.render_rules(rs, None)?.1)
    }

    fn count(&self, r: &Rendered) -> Result<(usize, usize), ToolError> {
        let sets = r.install.iter().any(|b| b.tool == Tool::IpsetRestore);
        let elements = if sets { ipset_elements()? } else { 0 };
        Ok((self.rule_count(r.ip)?, elements))
    }

    fn counters(&self, r: &Rendered) -> Result<Vec<(Hook, Vec<u64>)>, ToolError> {
        Ok(super::by_hook(ipt_counters(r.ip, self.flavour)?, ipt_chain))
    }

    fn chain_counters(&self, r: &Rendered) -> Result<Vec<(String, Vec<u64>)>, ToolError> {
        ipt_counters(r.ip, self.flavour)
    }

    fn change(&self, r: &Rendered, change: &Change, method: UpdateMethod) -> ChangeSteps {
        ipt_change(self.engine, r.ip, self.flavour, change, method)
    }
}

/// The iptables program of a flavour and IP version (one call per rule).
fn ipt_argv0(ip: Ip, flavour: Flavour) -> &'static str {
    match (ip, flavour) {
        (Ip::V4, Flavour::Legacy) => "iptables-legacy",
        (Ip::V6, Flavour::Legacy) => "ip6tables-legacy",
        (Ip::V4, Flavour::Nft) => "iptables-nft",
        (Ip::V6, Flavour::Nft) => "ip6tables-nft",
    }
}

/// The rule changes of the iptables engines: `iptables -I CHAIN 1` / `-D CHAIN` one
/// call per rule, or one `iptables-restore --noflush` batch; a replacement is the
/// new rule set's batches without their jump rules (a chain declared in a
/// `--noflush` batch is flushed, the jumps stay).
fn ipt_change(
    engine: Engine,
    ip: Ip,
    flavour: Flavour,
    change: &Change,
    method: UpdateMethod,
) -> ChangeSteps {
    let refuse = || super::unsupported_change(engine, change, method);
    let per_rule = super::per_rule(engine, change, method)?;
    let (hook, rules, op, at) = match change {
        Change::Insert { hook, at, rules } => (*hook, rules, "-I", *at),
        Change::Delete { hook, rules, .. } => (*hook, rules, "-D", 0),
        Change::Replace(new) if !per_rule => {
            let mut steps = super::batch_steps(&new.install);
            for s in &mut steps {
                if let Some(text) = &mut s.stdin {
                    *text = without_jumps(text);
                }
            }
            return Ok(steps);
        }
        Change::Replace(_)
        | Change::AddElements { .. }
        | Change::RemoveElements { .. }
        | Change::ReloadSet { .. } => return Err(refuse()),
    };
    let chain = ipt_chain(hook);
    // `-I CHAIN 1` prepends: the last rule first keeps the change's order.
    let mut specs = Vec::with_capacity(rules.len());
    for r in rules.iter().rev() {
        let mut t = String::new();
        ipt_rule(&mut t, ip, r, engine, None)?;
        if r.m.string.is_some() {
            return Err(RenderError::Invalid(
                "a string match cannot be a gateway event's rule".into(),
            ));
        }
        specs.push(t);
    }
    // `-I CHAIN N`: before rule N (1-based), so behind the first `at`.
    let position = (at + 1).to_string();
    let at = if op == "-I" {
        format!(" {position}")
    } else {
        String::new()
    };
    if per_rule {
        let prog = ipt_argv0(ip, flavour);
        return Ok(specs
            .iter()
            .map(|spec| {
                let mut argv = vec![prog, "-w", op, chain];
                if op == "-I" {
                    argv.push(&position);
                }
                argv.extend(spec.split_whitespace());
                Step::call(&argv)
            })
            .collect());
    }
    let (table, _) = ipt_table(hook);
    let mut text = format!("*{table}\n");
    for spec in &specs {
        let _ = writeln!(text, "{op} {chain}{at}{spec}");
    }
    text.push_str("COMMIT\n");
    Ok(vec![Step::batch(&restore_tool(ip, flavour).argv(), text)])
}

/// An iptables-restore text without its `-I BUILTIN 1 -j FWBENCH-*` jump rules.
fn without_jumps(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let jump = line.starts_with("-I ")
            && line
                .split_whitespace()
                .last()
                .is_some_and(|t| t.starts_with("FWBENCH-"))
            && line.contains(" -j FWBENCH-");
        if !jump {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn no_sets(engine: Engine) -> RenderError {
    RenderError::Unsupported {
        engine,
        feature: "sets".into(),
        hint: " (use nft-set or ipset)".into(),
    }
}

/// The choices that change a rule's cost: tables (and flavour), fwbench's chains and
/// where they are jumped to, counters, the built-in policy.
fn ipt_settings(rs: &RuleSet, plan: &Plan, flavour: Flavour) -> Settings {
    let flavour = match flavour {
        Flavour::Legacy => "legacy",
        Flavour::Nft => "nft",
    };
    let tables: Vec<&str> = ipt_tables(plan).iter().map(|(t, _)| *t).collect();
    let chains: Vec<String> = plan
        .chains
        .iter()
        .map(|c| {
            let (table, builtin) = ipt_table(c.hook);
            format!(
                "{} (jump at rule 1 of {table} {builtin})",
                ipt_chain(c.hook)
            )
        })
        .collect();
    Settings {
        table: (!tables.is_empty()).then(|| format!("{} ({flavour})", tables.join(", "))),
        chain: (!chains.is_empty()).then(|| chains.join(", ")),
        counters: Some("per rule (xtables always counts)".into()),
        policy: Some(policy_text(rs, "built-in chain's, unchanged (accept)")),
        ..Settings::default()
    }
}

/// The base policy, and how a model's drop policy is rendered.
pub(super) fn policy_text(rs: &RuleSet, base: &str) -> String {
    if rs.policies.iter().any(|(_, p)| *p == Policy::Drop) {
        format!("{base}; the model's drop policy is a last counted drop rule")
    } else {
        base.to_string()
    }
}

/// The `iptables-restore` of a flavour and IP version.
fn restore_tool(ip: Ip, flavour: Flavour) -> Tool {
    Tool::IptablesRestore {
        v6: ip == Ip::V6,
        flavour,
    }
}

/// An imported iptables-save file, applied as is; an nft ruleset is refused.
fn render_imported(
    engine: Engine,
    ip: Ip,
    flavour: Flavour,
    imp: &Imported,
) -> Result<Rendered, RenderError> {
    match imp.format {
        ImportFormat::IptablesSave => {
            let tool = restore_tool(ip, flavour);
            let install = Batch {
                tool,
                text: imp.text.clone(),
            };
            let remove = Batch {
                tool,
                text: ipt_remove_imported(&imp.text),
            };
            let mut out = imported(engine, ip, imp, install, remove);
            let flavour = match flavour {
                Flavour::Legacy => "legacy",
                Flavour::Nft => "nft",
            };
            out.settings = Settings {
                table: Some(format!("as in the imported file ({flavour})")),
                counters: Some("per rule (xtables always counts)".into()),
                ..Settings::default()
            };
            if let Some(s) = &imp.sets {
                // The sets exist before the rules that match them, and go after them.
                out.install.insert(
                    0,
                    Batch {
                        tool: Tool::IpsetRestore,
                        text: s.text.clone(),
                    },
                );
                let mut text = String::new();
                for (_, ours) in &s.names {
                    let _ = writeln!(text, "destroy {ours}");
                }
                out.remove.push(Batch {
                    tool: Tool::IpsetRestore,
                    text,
                });
                out.settings.sets = Some(format!(
                    "{} ipsets of {}, as fwbench's own ({} elements)",
                    s.names.len(),
                    s.source,
                    imp.elements
                ));
            }
            Ok(out)
        }
        ImportFormat::Nft => Err(RenderError::Invalid(
            "an nft ruleset needs engine nft".into(),
        )),
    }
}

/// Table and built-in chain of fwbench's chain for a hook.
fn ipt_table(hook: Hook) -> (&'static str, &'static str) {
    match hook {
        Hook::RawPrerouting => ("raw", "PREROUTING"),
        Hook::ManglePrerouting => ("mangle", "PREROUTING"),
        Hook::FilterForward => ("filter", "FORWARD"),
        Hook::FilterInput => ("filter", "INPUT"),
        Hook::NatPrerouting => ("nat", "PREROUTING"),
        Hook::NatPostrouting => ("nat", "POSTROUTING"),
    }
}

/// Tables used by a plan, each with its chains, in `*raw`, `*mangle`, `*nat`, `*filter`
/// order (the order of [`Hook::ALL`], a table's chains together).
fn ipt_tables(plan: &Plan) -> Vec<(&'static str, Vec<&PlanChain>)> {
    let mut tables: Vec<(&'static str, Vec<&PlanChain>)> = vec![];
    for c in &plan.chains {
        let (table, _) = ipt_table(c.hook);
        match tables.iter_mut().find(|(t, _)| *t == table) {
            Some((_, v)) => v.push(c),
            None => tables.push((table, vec![c])),
        }
    }
    tables
}

/// The iptables-save text that creates fwbench's chains, their rules and the jumps.
/// Set matches name the ipsets with `set_prefix`; without one, sets are refused.
fn ipt_text(
    ip: Ip,
    plan: &Plan,
    engine: Engine,
    set_prefix: Option<&str>,
) -> Result<String, RenderError> {
    let rules = plan.chains.iter().map(|c| c.rules.len()).sum::<usize>();
    let mut t = String::with_capacity(128 + 96 * rules);
    for (table, chains) in ipt_tables(plan) {
        let _ = writeln!(t, "*{table}");
        for c in &chains {
            let _ = writeln!(t, ":{} - [0:0]", ipt_chain(c.hook));
        }
        for c in &chains {
            for r in &c.rules {
                let _ = write!(t, "-A {}", ipt_chain(c.hook));
                ipt_rule(&mut t, ip, r, engine, set_prefix)?;
                t.push('\n');
            }
        }
        for c in &chains {
            let (_, builtin) = ipt_table(c.hook);
            let _ = writeln!(t, "-I {builtin} 1 -j {}", ipt_chain(c.hook));
        }
        t.push_str("COMMIT\n");
    }
    Ok(t)
}

/// One rule's matches and target, each with a leading space.
fn ipt_rule(
    t: &mut String,
    ip: Ip,
    r: &Rule,
    engine: Engine,
    set_prefix: Option<&str>,
) -> Result<(), RenderError> {
    let m = &r.m;
    if let Some(p) = m.src {
        let _ = write!(t, " -s {p}");
    }
    if let Some(p) = m.dst {
        let _ = write!(t, " -d {p}");
    }
    if let Some(l4) = m.l4 {
        if l4 == L4::Icmpv6 && ip == Ip::V4 {
            return Err(RenderError::Invalid("icmpv6 in an IPv4 rule set".into()));
        }
        let _ = write!(t, " -p {}", l4.protocol());
        if let Some(port) = m.dport {
            // The explicit `-m udp` is what iptables-save writes too.
            let _ = write!(t, " -m {} --dport {port}", l4.name());
        }
    }
    if let Some(set) = &m.set {
        let Some(prefix) = set_prefix else {
            return Err(no_sets(engine));
        };
        let _ = write!(t, " -m set --match-set {prefix}{set} src,dst");
    }
    if m.ct_new_established {
        t.push_str(" -m conntrack --ctstate NEW,ESTABLISHED");
    }
    if m.ct_established {
        t.push_str(" -m conntrack --ctstate ESTABLISHED,RELATED");
    }
    if let Some((algo, s)) = &m.string {
        let algo = match algo {
            StringAlgo::Bm => "bm",
            StringAlgo::Kmp => "kmp",
        };
        // iptables' notation for bytes: `|fb50|` is a --hex-string.
        let kind = if s.starts_with('|') && s.ends_with('|') {
            "hex-string"
        } else {
            "string"
        };
        let _ = write!(t, " -m string --algo {algo} --{kind} \"{s}\"");
    }
    if let Some(h) = &m.hashlimit {
        let _ = write!(
            t,
            " -m hashlimit --hashlimit-upto {}/sec --hashlimit-burst {} --hashlimit-mode srcip \
             --hashlimit-srcmask {} --hashlimit-name {}",
            h.rate_pps, h.burst, h.src_prefix_len, h.name
        );
    }
    match r.action {
        Action::Accept => t.push_str(" -j ACCEPT"),
        Action::Drop => t.push_str(" -j DROP"),
        Action::Mark(n) => {
            let _ = write!(t, " -j MARK --set-mark {n}");
        }
        Action::Notrack => t.push_str(" -j CT --notrack"),
        Action::Snat(a) => {
            let _ = write!(t, " -j SNAT --to-source {a}");
        }
        Action::Masquerade => t.push_str(" -j MASQUERADE"),
        Action::Dnat(a, port) => {
            let _ = write!(t, " -j DNAT --to-destination {}", super::nat_to(a, port));
        }
        Action::Offload => {
            return Err(RenderError::Unsupported {
                engine,
                feature: "a flowtable (model flowtable)".into(),
                hint: " (use nft or nft-set)".into(),
            })
        }
    }
    Ok(())
}

/// Removal: per table, the jump rules, then flush and delete fwbench's chains.
fn ipt_remove(plan: &Plan) -> String {
    let mut t = String::new();
    for (table, chains) in ipt_tables(plan) {
        let _ = writeln!(t, "*{table}");
        for c in &chains {
            let (_, builtin) = ipt_table(c.hook);
            let _ = writeln!(t, "-D {builtin} -j {}", ipt_chain(c.hook));
            let _ = writeln!(t, "-F {}", ipt_chain(c.hook));
            let _ = writeln!(t, "-X {}", ipt_chain(c.hook));
        }
        t.push_str("COMMIT\n");
    }
    t
}

/// Removal of an imported iptables-save text: per table, delete the jump rules from
/// the built-in chains, then flush every `FWBENCH-*` chain (dropping references
/// between them), then delete them.
fn ipt_remove_imported(text: &str) -> String {
    let mut out = String::new();
    let mut table: Option<&str> = None;
    let mut jumps: Vec<String> = vec![];
    let mut chains: Vec<&str> = vec![];
    for line in text.lines().map(str::trim) {
        if let Some(t) = line.strip_prefix('*') {
            table = Some(t);
            jumps.clear();
            chains.clear();
        } else if let Some(decl) = line.strip_prefix(':') {
            let name = decl.split_whitespace().next().unwrap_or("");
            if name.starts_with("FWBENCH-") {
                chains.push(name);
            }
        } else if let Some(rest) = line.strip_prefix("-I ") {
            // `-I BUILTIN 1 -j FWBENCH-X` → `-D BUILTIN -j FWBENCH-X`
            let words: Vec<&str> = rest.split_whitespace().collect();
            if let [builtin, _, "-j", target] = words[..] {
                if target.starts_with("FWBENCH-") {
                    jumps.push(format!("-D {builtin} -j {target}"));
                }
            }
        } else if line == "COMMIT" {
            if let (Some(t), false) = (table, chains.is_empty()) {
                let _ = writeln!(out, "*{t}");
                for j in &jumps {
                    let _ = writeln!(out, "{j}");
                }
                for c in &chains {
                    let _ = writeln!(out, "-F {c}");
                }
                for c in &chains {
                    let _ = writeln!(out, "-X {c}");
                }
                out.push_str("COMMIT\n");
            }
            table = None;
        }
    }
    out
}

/// `-A FWBENCH-*` rules with their packet counters, from `*-save -c`.
fn ipt_counters(ip: Ip, flavour: Flavour) -> Result<Vec<(String, Vec<u64>)>, ToolError> {
    // iptables-legacy-save, ip6tables-nft-save …
    let save = format!("{}-save", ipt_argv0(ip, flavour));
    let out = run(&[&save, "-c"], None)?;
    Ok(parse_save_counters(&out))
}

/// Parse `iptables-save -c` output: `[pkts:bytes] -A CHAIN …` for fwbench's chains.
pub fn parse_save_counters(out: &str) -> Vec<(String, Vec<u64>)> {
    let mut rules: Vec<(String, Vec<u64>)> = Vec::new();
    for line in out.lines() {
        let (counter, rest) = match line.strip_prefix('[').and_then(|l| l.split_once("] ")) {
            Some((c, rest)) => (c, rest),
            None => ("0:0", line),
        };
        let Some(rest) = rest.strip_prefix("-A ") else {
            continue;
        };
        let chain = rest.split_whitespace().next().unwrap_or("");
        if !chain.starts_with("FWBENCH-") {
            continue;
        }
        let packets = counter
            .split(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        match rules.iter_mut().find(|(c, _)| c == chain) {
            Some((_, v)) => v.push(packets),
            None => rules.push((chain.to_owned(), vec![packets])),
        }
    }
    rules
}

/// Elements over all of fwbench's ipsets (none when ipset is not installed).
pub(super) fn ipset_elements() -> Result<usize, ToolError> {
    let names = match run(&["ipset", "list", "-n"], None) {
        Ok(o) => o,
        Err(ToolError::MissingTool { .. }) => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut total = 0;
    for name in names.lines().filter(|n| n.starts_with(super::IPSET_PREFIX)) {
        let out = run(&["ipset", "list", "-t", name], None)?;
        total += out
            .lines()
            .find_map(|l| l.strip_prefix("Number of entries:"))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(0);
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_counters_parsed_for_own_chains_only() {
        let out = "*filter\n:FORWARD ACCEPT [0:0]\n:FWBENCH-FORWARD - [0:0]\n\
                   [7:420] -A FORWARD -j FWBENCH-FORWARD\n\
                   [0:0] -A FWBENCH-FORWARD -s 192.0.2.1/32 -p udp -m udp --dport 1 -j DROP\n\
                   [7:420] -A FWBENCH-FORWARD -s 198.18.0.0/16 -p udp -j ACCEPT\n\
                   [3:1] -A OTHER -j ACCEPT\nCOMMIT\n";
        assert_eq!(
            parse_save_counters(out),
            vec![("FWBENCH-FORWARD".to_string(), vec![0, 7])]
        );
    }
}
