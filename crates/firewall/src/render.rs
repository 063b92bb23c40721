//! Renderers: a [`RuleSet`] → the exact text each engine's batch tool applies.
//!
//! Every renderer emits one atomic batch per tool (`nft -f`, `iptables-restore
//! --noflush`, `ipset restore`), a matching removal batch, the number of rules and
//! set elements the installer must read back, and the chain layout (rule roles in
//! order) used to map counters back to roles.

use crate::model::*;
use serde::{Deserialize, Serialize};

/// nftables table of fwbench (family inet: IPv4 and IPv6).
pub const NFT_TABLE: &str = "fwbench";
/// iptables chain names, hooked from the built-in chains by one jump rule each.
pub fn ipt_chain(hook: Hook) -> &'static str {
    match hook {
        Hook::RawPrerouting => "FWBENCH-RAW",
        Hook::ManglePrerouting => "FWBENCH-MANGLE",
        Hook::FilterForward => "FWBENCH-FORWARD",
        Hook::FilterInput => "FWBENCH-INPUT",
    }
}
/// nft base chain names in `table inet fwbench`.
pub fn nft_chain(hook: Hook) -> &'static str {
    match hook {
        Hook::RawPrerouting => "raw_prerouting",
        Hook::ManglePrerouting => "mangle_prerouting",
        Hook::FilterForward => "forward",
        Hook::FilterInput => "input",
    }
}
/// Prefix of every ipset fwbench creates.
pub const IPSET_PREFIX: &str = "fwbench-";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    Legacy,
    Nft,
}

/// Which tool applies a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    /// `nft -f -`
    Nft,
    /// `iptables-restore --noflush` / `ip6tables-restore --noflush`, legacy or nft
    IptablesRestore { v6: bool, backend: Backend },
    /// `ipset restore`
    IpsetRestore,
}

impl Tool {
    /// argv of the batch command (stdin carries the batch text).
    pub fn argv(&self) -> Vec<&'static str> {
        match self {
            Tool::Nft => vec!["nft", "-f", "-"],
            Tool::IptablesRestore { v6, backend } => {
                let prog = match (v6, backend) {
                    (false, Backend::Legacy) => "iptables-legacy-restore",
                    (true, Backend::Legacy) => "ip6tables-legacy-restore",
                    (false, Backend::Nft) => "iptables-nft-restore",
                    (true, Backend::Nft) => "ip6tables-nft-restore",
                };
                vec![prog, "-w", "--noflush"]
            }
            Tool::IpsetRestore => vec!["ipset", "restore"],
        }
    }
    /// Debian package that provides the tool.
    pub fn package(&self) -> &'static str {
        match self {
            Tool::Nft => "nftables",
            Tool::IptablesRestore { .. } => "iptables",
            Tool::IpsetRestore => "ipset",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    pub tool: Tool,
    pub text: String,
}

/// Roles of the rules of one of fwbench's chains, in evaluation order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainLayout {
    pub hook: Hook,
    pub roles: Vec<Role>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rendered {
    pub engine: Engine,
    pub ip: Ip,
    /// Applied in order; each batch is atomic.
    pub install: Vec<Batch>,
    /// Applied in order at removal; removes exactly what `install` created.
    pub remove: Vec<Batch>,
    /// Rules in fwbench's own chains (hook jump rules not counted).
    pub expect_rules: usize,
    /// Elements over all of fwbench's sets.
    pub expect_elements: usize,
    pub layout: Vec<ChainLayout>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("engine {engine} cannot express {feature}{hint}")]
    Unsupported {
        engine: Engine,
        feature: String,
        hint: String,
    },
    #[error("{0}")]
    Invalid(String),
}

impl Rendered {
    /// Everything that would be applied, as the user would type it (dry run).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for b in &self.install {
            out += &format!("# {} <<'EOF'\n{}EOF\n", b.tool.argv().join(" "), b.text);
        }
        out += &format!(
            "# expect {} rules, {} set elements\n",
            self.expect_rules, self.expect_elements
        );
        out
    }
}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

use crate::import::{ImportFormat, Imported};
use std::collections::HashSet;
use std::fmt::Write as _;

/// Hooks in the order their chains are rendered and laid out.
const HOOKS: [Hook; 4] = [
    Hook::RawPrerouting,
    Hook::ManglePrerouting,
    Hook::FilterForward,
    Hook::FilterInput,
];

/// Longest set name: ipset names have at most 31 characters, with [`IPSET_PREFIX`].
const MAX_SET_NAME: usize = 31 - IPSET_PREFIX.len();

/// Render a rule set for an engine: install and removal batches, expected counts and
/// the chain layout.
pub fn render(rs: &RuleSet, engine: Engine) -> Result<Rendered, RenderError> {
    let mut out = Rendered {
        engine,
        ip: rs.ip,
        install: vec![],
        remove: vec![],
        expect_rules: 0,
        expect_elements: 0,
        layout: vec![],
    };
    // The baseline installs nothing, whatever the rule set says.
    if engine == Engine::None {
        return Ok(out);
    }
    if let Some(imp) = &rs.raw {
        return render_imported(imp, out);
    }
    validate(rs)?;
    let collapse = matches!(
        engine,
        Engine::NftSet | Engine::IpsetLegacy | Engine::IpsetNft
    );
    let plan = plan(rs, collapse)?;
    out.expect_rules = plan.chains.iter().map(|c| c.rules.len()).sum();
    out.expect_elements = plan.sets.iter().map(|s| s.elements.len()).sum();
    out.layout = plan
        .chains
        .iter()
        .map(|c| ChainLayout {
            hook: c.hook,
            roles: c.rules.iter().map(|r| r.role).collect(),
        })
        .collect();
    match engine {
        Engine::None => {}
        Engine::Nft | Engine::NftSet => {
            out.install.push(Batch {
                tool: Tool::Nft,
                text: nft_text(rs.ip, &plan, engine)?,
            });
            out.remove.push(nft_remove());
        }
        Engine::IptablesLegacy | Engine::IptablesNft => {
            if !plan.sets.is_empty() || plan.rules().any(|r| r.m.set.is_some()) {
                return Err(RenderError::Unsupported {
                    engine,
                    feature: "sets".into(),
                    hint: " (use nft-set or ipset)".into(),
                });
            }
            let tool = ipt_tool(rs.ip, engine);
            out.install.push(Batch {
                tool,
                text: ipt_text(rs.ip, &plan, engine)?,
            });
            out.remove.push(Batch {
                tool,
                text: ipt_remove(&plan),
            });
        }
        Engine::IpsetLegacy | Engine::IpsetNft => {
            let tool = ipt_tool(rs.ip, engine);
            if !plan.sets.is_empty() {
                out.install.push(Batch {
                    tool: Tool::IpsetRestore,
                    text: ipset_text(rs.ip, &plan),
                });
            }
            out.install.push(Batch {
                tool,
                text: ipt_text(rs.ip, &plan, engine)?,
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
        }
    }
    Ok(out)
}

/// The iptables-restore flavour of an iptables or ipset engine.
fn ipt_tool(ip: Ip, engine: Engine) -> Tool {
    let backend = match engine {
        Engine::IptablesLegacy | Engine::IpsetLegacy => Backend::Legacy,
        _ => Backend::Nft,
    };
    Tool::IptablesRestore {
        v6: ip == Ip::V6,
        backend,
    }
}

fn nft_remove() -> Batch {
    Batch {
        tool: Tool::Nft,
        text: format!("delete table inet {NFT_TABLE}\n"),
    }
}

// ---------------------------------------------------------------------------
// Imported rule sets
// ---------------------------------------------------------------------------

/// An imported file is applied as is (it is already rewritten into fwbench's names).
fn render_imported(imp: &Imported, mut out: Rendered) -> Result<Rendered, RenderError> {
    let engine = out.engine;
    match (imp.format, engine) {
        (ImportFormat::Nft, Engine::Nft | Engine::NftSet) => {
            out.install.push(Batch {
                tool: Tool::Nft,
                text: imp.text.clone(),
            });
            out.remove.push(nft_remove());
        }
        (
            ImportFormat::IptablesSave,
            Engine::IptablesLegacy | Engine::IptablesNft | Engine::IpsetLegacy | Engine::IpsetNft,
        ) => {
            let tool = ipt_tool(out.ip, engine);
            out.install.push(Batch {
                tool,
                text: imp.text.clone(),
            });
            out.remove.push(Batch {
                tool,
                text: ipt_remove_imported(&imp.text),
            });
        }
        (ImportFormat::IptablesSave, _) => {
            return Err(RenderError::Invalid(
                "an iptables-save file needs engine iptables-legacy or iptables-nft".into(),
            ))
        }
        (ImportFormat::Nft, _) => {
            return Err(RenderError::Invalid(
                "an nft ruleset needs engine nft".into(),
            ))
        }
    }
    out.expect_rules = imp.rules;
    out.expect_elements = imp.elements;
    Ok(out)
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

// ---------------------------------------------------------------------------
// Validation and planning (shared by all engines)
// ---------------------------------------------------------------------------

/// Reject rule sets no engine can render faithfully, with the reason.
fn validate(rs: &RuleSet) -> Result<(), RenderError> {
    let bad = |why: String| Err(RenderError::Invalid(why));
    let v6 = rs.ip == Ip::V6;
    let family = if v6 { "IPv6" } else { "IPv4" };
    for s in &rs.sets {
        check_set_name(&s.name)?;
        if s.ip != rs.ip {
            return bad(format!("set {} is not {family} like its rule set", s.name));
        }
        if let Some(e) = s.elements.iter().find(|e| e.addr.is_ipv6() != v6) {
            return bad(format!(
                "set {}: element {} is not {family}",
                s.name, e.addr
            ));
        }
    }
    for r in &rs.rules {
        let m = &r.m;
        for p in [m.src, m.dst].into_iter().flatten() {
            let max = if v6 { 128 } else { 32 };
            if p.addr.is_ipv6() != v6 || p.len > max {
                return bad(format!("address {p} in a {family} rule set"));
            }
        }
        if m.l4 == Some(L4::Icmpv6) && !v6 {
            return bad("icmpv6 in an IPv4 rule set".into());
        }
        let ported = matches!(m.l4, Some(L4::Tcp | L4::Udp | L4::Sctp));
        if m.dport.is_some() && !ported {
            return bad("a destination port needs l4 tcp, udp or sctp".into());
        }
        if let Some(set) = &m.set {
            if !ported {
                return bad(format!("set match @{set} needs l4 tcp, udp or sctp"));
            }
            if !rs.sets.iter().any(|s| s.name == *set) {
                return bad(format!("set {set} is used but not defined"));
            }
        }
        if let Some((_, s)) = &m.string {
            if s.is_empty() || s.len() > 128 || s.contains(['"', '\\', '\n', '\r']) {
                return bad(format!(
                    "string match {s:?}: needs 1 to 128 bytes without quotes, backslashes or newlines"
                ));
            }
        }
        if let Some(h) = &m.hashlimit {
            let max = if v6 { 128 } else { 32 };
            let name_ok = !h.name.is_empty()
                && h.name.len() <= 15
                && h.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !name_ok || h.src_prefix_len > max || h.rate_pps == 0 || h.burst == 0 {
                return bad(format!("invalid hashlimit {h:?}"));
            }
        }
        match (r.action, r.hook) {
            (Action::Notrack, Hook::RawPrerouting) | (Action::Mark(_), Hook::ManglePrerouting) => {}
            (Action::Notrack, h) => return bad(format!("notrack needs raw prerouting, not {h:?}")),
            (Action::Mark(_), h) => return bad(format!("mark needs mangle prerouting, not {h:?}")),
            _ => {}
        }
    }
    Ok(())
}

fn check_set_name(name: &str) -> Result<(), RenderError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_SET_NAME
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(RenderError::Invalid(format!(
            "set name {name:?}: needs 1 to {MAX_SET_NAME} letters, digits, '-' or '_', starting with a letter"
        )))
    }
}

/// One of fwbench's chains as rendered: its rules in order, the policy-drop rule
/// (role Policy) last.
struct PlanChain {
    hook: Hook,
    rules: Vec<Rule>,
}

/// A set as rendered, with the protocol of its ports (ipset stores it per element).
struct PlanSet {
    name: String,
    elements: Vec<SetElem>,
    l4: L4,
}

/// What an engine renders: chains in [`HOOKS`] order and sets.
struct Plan {
    chains: Vec<PlanChain>,
    sets: Vec<PlanSet>,
}

impl Plan {
    fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.chains.iter().flat_map(|c| &c.rules)
    }
}

/// A filler rule that a set can replace: it matches only (source host, l4, port).
fn collapsible(r: &Rule) -> bool {
    let m = &r.m;
    r.role == Role::Filler
        && m.src.is_some_and(|p| p.is_host())
        && m.dport.is_some()
        && matches!(m.l4, Some(L4::Tcp | L4::Udp | L4::Sctp))
        && m.dst.is_none()
        && m.set.is_none()
        && m.string.is_none()
        && m.hashlimit.is_none()
        && !m.ct_new_established
}

/// Group the rules per hook, add policy-drop rules and, when `collapse`, replace each
/// run of collapsible filler rules (same hook, l4 and action) by one set and one rule.
fn plan(rs: &RuleSet, collapse: bool) -> Result<Plan, RenderError> {
    let mut sets: Vec<PlanSet> = vec![];
    // The rule set's own sets; the protocol of their ports comes from their rules.
    for s in &rs.sets {
        let mut l4s = rs
            .rules
            .iter()
            .filter(|r| r.m.set.as_ref() == Some(&s.name))
            .filter_map(|r| r.m.l4);
        let l4 = l4s.next().unwrap_or(L4::Tcp);
        if l4s.any(|other| other != l4) {
            return Err(RenderError::Invalid(format!(
                "set {} is matched with several protocols; ipset stores one per element",
                s.name
            )));
        }
        if sets.iter().any(|p| p.name == s.name) {
            return Err(RenderError::Invalid(format!(
                "set {} is defined twice",
                s.name
            )));
        }
        sets.push(PlanSet {
            name: s.name.clone(),
            elements: s.elements.clone(),
            l4,
        });
    }
    let mut chains = vec![];
    let mut next_fill = 0;
    for hook in HOOKS {
        let rules: Vec<&Rule> = rs.rules.iter().filter(|r| r.hook == hook).collect();
        let mut out: Vec<Rule> = Vec::with_capacity(rules.len() + 1);
        let mut i = 0;
        while i < rules.len() {
            let r = rules[i];
            if !(collapse && collapsible(r)) {
                out.push(r.clone());
                i += 1;
                continue;
            }
            // A run of fillers with the same l4 and action becomes one set. Duplicate
            // (address, port) pairs are merged: a set holds each element once.
            let mut elements = vec![];
            let mut seen = HashSet::new();
            while i < rules.len()
                && collapsible(rules[i])
                && rules[i].m.l4 == r.m.l4
                && rules[i].action == r.action
            {
                let m = &rules[i].m;
                if let (Some(src), Some(port)) = (m.src, m.dport) {
                    let e = SetElem {
                        addr: src.addr,
                        port,
                    };
                    if seen.insert(e) {
                        elements.push(e);
                    }
                }
                i += 1;
            }
            let name = format!("fill{next_fill}");
            next_fill += 1;
            if sets.iter().any(|s| s.name == name) {
                return Err(RenderError::Invalid(format!(
                    "set name {name} is reserved for collapsed filler rules"
                )));
            }
            let l4 = r.m.l4.unwrap_or(L4::Tcp);
            sets.push(PlanSet {
                name: name.clone(),
                elements,
                l4,
            });
            out.push(Rule {
                hook,
                m: Match {
                    l4: Some(l4),
                    set: Some(name),
                    ..Match::default()
                },
                action: r.action,
                role: Role::Filler,
            });
        }
        if rs.policy(hook) == Policy::Drop {
            out.push(Rule {
                hook,
                m: Match::default(),
                action: Action::Drop,
                role: Role::Policy,
            });
        }
        if !out.is_empty() {
            chains.push(PlanChain { hook, rules: out });
        }
    }
    Ok(Plan { chains, sets })
}

// ---------------------------------------------------------------------------
// nftables
// ---------------------------------------------------------------------------

/// nft's name of an l4 protocol (`meta l4proto …`).
fn nft_l4(l4: L4) -> &'static str {
    match l4 {
        L4::Icmpv6 => "ipv6-icmp",
        other => other.name(),
    }
}

/// A prefix as nft writes it: bare address for a host, else `addr/len`.
fn nft_prefix(p: Prefix) -> String {
    if p.is_host() {
        p.addr.to_string()
    } else {
        p.to_string()
    }
}

/// The network mask of a prefix length, e.g. 16 → 255.255.0.0, 48 → ffff:ffff:ffff::.
fn mask(ip: Ip, len: u8) -> String {
    match ip {
        Ip::V4 => {
            let bits = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            std::net::Ipv4Addr::from(bits).to_string()
        }
        Ip::V6 => {
            let bits = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            std::net::Ipv6Addr::from(bits).to_string()
        }
    }
}

/// The whole `nft -f` batch: replace `table inet fwbench` atomically.
fn nft_text(ip: Ip, plan: &Plan, engine: Engine) -> Result<String, RenderError> {
    let elements: usize = plan.sets.iter().map(|s| s.elements.len()).sum();
    let rules = plan.chains.iter().map(|c| c.rules.len()).sum::<usize>();
    let mut t = String::with_capacity(256 + 48 * elements + 96 * rules);
    // add + delete first: the batch works whether or not the table exists.
    let _ = writeln!(t, "add table inet {NFT_TABLE}");
    let _ = writeln!(t, "delete table inet {NFT_TABLE}");
    let _ = writeln!(t, "table inet {NFT_TABLE} {{");
    let addr_type = match ip {
        Ip::V4 => "ipv4_addr",
        Ip::V6 => "ipv6_addr",
    };
    for s in &plan.sets {
        let _ = writeln!(t, "  set {} {{", s.name);
        let _ = writeln!(t, "    type {addr_type} . inet_service");
        let _ = writeln!(t, "    size {}", s.elements.len().max(1));
        if !s.elements.is_empty() {
            t.push_str("    elements = {");
            for (i, e) in s.elements.iter().enumerate() {
                // Eight elements per line.
                t.push_str(if i == 0 {
                    "\n      "
                } else if i % 8 == 0 {
                    ",\n      "
                } else {
                    ", "
                });
                let _ = write!(t, "{} . {}", e.addr, e.port);
            }
            t.push_str("\n    }\n");
        }
        t.push_str("  }\n");
    }
    for c in &plan.chains {
        let (hook, priority) = match c.hook {
            Hook::RawPrerouting => ("prerouting", "raw"),
            Hook::ManglePrerouting => ("prerouting", "mangle"),
            Hook::FilterForward => ("forward", "filter"),
            Hook::FilterInput => ("input", "filter"),
        };
        let _ = writeln!(t, "  chain {} {{", nft_chain(c.hook));
        let _ = writeln!(
            t,
            "    type filter hook {hook} priority {priority}; policy accept;"
        );
        for r in &c.rules {
            t.push_str("    ");
            nft_rule(&mut t, ip, r, engine)?;
            t.push('\n');
        }
        t.push_str("  }\n");
    }
    t.push_str("}\n");
    Ok(t)
}

/// One rule: matches, `counter`, action.
fn nft_rule(t: &mut String, ip: Ip, r: &Rule, engine: Engine) -> Result<(), RenderError> {
    let fam = match ip {
        Ip::V4 => "ip",
        Ip::V6 => "ip6",
    };
    let m = &r.m;
    if let Some(p) = m.src {
        let _ = write!(t, "{fam} saddr {} ", nft_prefix(p));
    }
    if let Some(p) = m.dst {
        let _ = write!(t, "{fam} daddr {} ", nft_prefix(p));
    }
    match (m.l4, &m.set) {
        (Some(l4), Some(set)) => {
            let _ = write!(t, "{fam} saddr . {} dport @{set} ", nft_l4(l4));
            if let Some(port) = m.dport {
                let _ = write!(t, "{} dport {port} ", nft_l4(l4));
            }
        }
        (Some(l4), None) => match m.dport {
            Some(port) => {
                let _ = write!(t, "{} dport {port} ", nft_l4(l4));
            }
            None => {
                let _ = write!(t, "meta l4proto {} ", nft_l4(l4));
            }
        },
        // Checked by validate(): sets and ports come with an l4.
        (None, _) => {}
    }
    if m.ct_new_established {
        t.push_str("ct state new,established ");
    }
    if m.string.is_some() {
        return Err(RenderError::Unsupported {
            engine,
            feature: "string match".into(),
            hint: " (use iptables-legacy or iptables-nft)".into(),
        });
    }
    if let Some(h) = &m.hashlimit {
        let full = if ip == Ip::V4 { 32 } else { 128 };
        let key = if h.src_prefix_len == full {
            format!("{fam} saddr")
        } else {
            format!("{fam} saddr and {}", mask(ip, h.src_prefix_len))
        };
        let _ = write!(
            t,
            "meter {} {{ {key} limit rate {}/second burst {} packets }} ",
            h.name, h.rate_pps, h.burst
        );
    }
    t.push_str("counter ");
    match r.action {
        Action::Accept => t.push_str("accept"),
        Action::Drop => t.push_str("drop"),
        Action::Mark(n) => {
            let _ = write!(t, "meta mark set {n}");
        }
        Action::Notrack => t.push_str("notrack"),
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// iptables and ipset
// ---------------------------------------------------------------------------

/// Table and built-in chain of fwbench's chain for a hook.
fn ipt_table(hook: Hook) -> (&'static str, &'static str) {
    match hook {
        Hook::RawPrerouting => ("raw", "PREROUTING"),
        Hook::ManglePrerouting => ("mangle", "PREROUTING"),
        Hook::FilterForward => ("filter", "FORWARD"),
        Hook::FilterInput => ("filter", "INPUT"),
    }
}

/// Tables used by a plan, each with its chains, in `*raw`, `*mangle`, `*filter` order.
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
fn ipt_text(ip: Ip, plan: &Plan, engine: Engine) -> Result<String, RenderError> {
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
                ipt_rule(&mut t, ip, r, engine)?;
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
fn ipt_rule(t: &mut String, ip: Ip, r: &Rule, engine: Engine) -> Result<(), RenderError> {
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
        let _ = write!(t, " -p {}", nft_l4(l4));
        if let Some(port) = m.dport {
            // The explicit `-m udp` is what iptables-save writes too.
            let _ = write!(t, " -m {} --dport {port}", l4.name());
        }
    }
    if let Some(set) = &m.set {
        if matches!(engine, Engine::IptablesLegacy | Engine::IptablesNft) {
            return Err(RenderError::Unsupported {
                engine,
                feature: "sets".into(),
                hint: " (use nft-set or ipset)".into(),
            });
        }
        let _ = write!(t, " -m set --match-set {IPSET_PREFIX}{set} src,dst");
    }
    if m.ct_new_established {
        t.push_str(" -m conntrack --ctstate NEW,ESTABLISHED");
    }
    if let Some((algo, s)) = &m.string {
        let algo = match algo {
            StringAlgo::Bm => "bm",
            StringAlgo::Kmp => "kmp",
        };
        let _ = write!(t, " -m string --algo {algo} --string \"{s}\"");
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

/// The `ipset restore` batch that creates (or empties) and fills every set.
fn ipset_text(ip: Ip, plan: &Plan) -> String {
    let elements: usize = plan.sets.iter().map(|s| s.elements.len()).sum();
    let mut t = String::with_capacity(128 + 40 * elements);
    let family = match ip {
        Ip::V4 => "inet",
        Ip::V6 => "inet6",
    };
    for s in &plan.sets {
        let n = s.elements.len();
        let name = format!("{IPSET_PREFIX}{}", s.name);
        let hashsize = n.max(1024).next_power_of_two();
        let maxelem = n.max(65536);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{filler_addr, generate, Addressing, Chain, Model, ModelSpec, Position};

    fn addressing(ip: Ip) -> Addressing {
        let p = |s: &str, len| Prefix {
            addr: s.parse().unwrap(),
            len,
        };
        match ip {
            Ip::V4 => Addressing {
                clients: vec!["198.18.1.1".parse().unwrap(), "198.18.1.2".parse().unwrap()],
                client_net: p("198.18.0.0", 16),
                server: "198.19.0.2".parse().unwrap(),
                server_net: p("198.19.0.0", 16),
            },
            Ip::V6 => Addressing {
                clients: vec!["2001:2:0:1::c:1".parse().unwrap()],
                client_net: p("2001:2:0:1::", 64),
                server: "2001:2:0:2::2".parse().unwrap(),
                server_net: p("2001:2:0:2::", 64),
            },
        }
    }

    fn model(model: Model, count: u32, position: Position) -> RuleSet {
        let spec = ModelSpec {
            model,
            count,
            position,
            chain: Chain::Forward,
            l4: L4::Udp,
            ip: Ip::V4,
            one_way: false,
        };
        generate(&spec, &addressing(Ip::V4)).unwrap()
    }

    const ALL: [Engine; 7] = Engine::ALL;

    #[test]
    fn collapsed_set_has_exactly_count_elements() {
        let rs = model(Model::Linear, 1000, Position::Last);
        for engine in [Engine::NftSet, Engine::IpsetLegacy, Engine::IpsetNft] {
            let r = render(&rs, engine).unwrap();
            assert_eq!((r.expect_rules, r.expect_elements), (2, 1000), "{engine}");
            assert_eq!(r.layout[0].roles, [Role::Filler, Role::Match]);
        }
        let r = render(&rs, Engine::IpsetLegacy).unwrap();
        assert_eq!(r.install[0].tool, Tool::IpsetRestore);
        let adds = r.install[0]
            .text
            .lines()
            .filter(|l| l.starts_with("add "))
            .count();
        assert_eq!(adds, 1000);
        assert!(r.install[0].text.contains("hashsize 1024 maxelem 65536"));
        let r = render(&rs, Engine::NftSet).unwrap();
        let text = &r.install[0].text;
        let list = &text[text.find("elements = {").unwrap()..];
        let elements = list[..list.find('}').unwrap()].matches(" . ").count();
        assert_eq!(elements, 1000);
        assert!(r.install[0].text.contains("size 1000\n"));
    }

    #[test]
    fn layout_roles_and_expect_counts() {
        let rs = model(Model::Linear, 4, Position::Middle);
        use Role::{Filler as F, Match as M, Policy as P};
        for engine in [Engine::Nft, Engine::IptablesLegacy, Engine::IptablesNft] {
            let r = render(&rs, engine).unwrap();
            assert_eq!(r.layout.len(), 1);
            assert_eq!(r.layout[0].hook, Hook::FilterForward);
            assert_eq!(r.layout[0].roles, [F, F, M, F, F], "{engine}");
            assert_eq!((r.expect_rules, r.expect_elements), (5, 0));
        }
        for engine in [Engine::NftSet, Engine::IpsetLegacy, Engine::IpsetNft] {
            let r = render(&rs, engine).unwrap();
            assert_eq!(r.layout[0].roles, [F, M, F], "{engine}");
            assert_eq!((r.expect_rules, r.expect_elements), (3, 4));
        }
        // Seed 000 F=4: mangle before filter, the policy drop last, counted.
        let rs = model(Model::Seed000F4, 0, Position::Last);
        for engine in ALL.into_iter().skip(1) {
            let r = render(&rs, engine).unwrap();
            let hooks: Vec<Hook> = r.layout.iter().map(|c| c.hook).collect();
            assert_eq!(hooks, [Hook::ManglePrerouting, Hook::FilterForward]);
            assert_eq!(r.layout[1].roles, [M, M, M, M, P]);
            assert_eq!((r.expect_rules, r.expect_elements), (9, 0), "{engine}");
        }
    }

    #[test]
    fn engine_none_renders_nothing() {
        let rs = model(Model::Seed000F4, 0, Position::Last);
        let r = render(&rs, Engine::None).unwrap();
        assert!(r.install.is_empty() && r.remove.is_empty() && r.layout.is_empty());
        assert_eq!((r.expect_rules, r.expect_elements), (0, 0));
        assert_eq!(r.to_text(), "# expect 0 rules, 0 set elements\n");
    }

    #[test]
    fn empty_rule_set_installs_an_empty_table() {
        for engine in ALL {
            let r = render(&RuleSet::empty(Ip::V4), engine).unwrap();
            assert_eq!((r.expect_rules, r.expect_elements), (0, 0), "{engine}");
            assert!(r.layout.is_empty());
        }
    }

    #[test]
    fn unsupported_combinations_say_what_to_use() {
        let rs = model(Model::StringBm, 2, Position::Last);
        for engine in [Engine::Nft, Engine::NftSet] {
            assert_eq!(
                render(&rs, engine).unwrap_err().to_string(),
                format!("engine {engine} cannot express string match (use iptables-legacy or iptables-nft)")
            );
        }
        let mut rs = RuleSet::empty(Ip::V4);
        rs.sets.push(SetDef {
            name: "blocked".into(),
            ip: Ip::V4,
            elements: vec![SetElem {
                addr: filler_addr(Ip::V4, 1),
                port: 53,
            }],
        });
        rs.rules.push(Rule {
            hook: Hook::FilterInput,
            m: Match {
                l4: Some(L4::Udp),
                set: Some("blocked".into()),
                ..Match::default()
            },
            action: Action::Drop,
            role: Role::Filler,
        });
        assert_eq!(
            render(&rs, Engine::IptablesNft).unwrap_err().to_string(),
            "engine iptables-nft cannot express sets (use nft-set or ipset)"
        );
        // Defined sets render for the engines that have sets, with the rule's protocol.
        let r = render(&rs, Engine::Nft).unwrap();
        assert!(r.install[0]
            .text
            .contains("ip saddr . udp dport @blocked counter drop"));
        assert_eq!((r.expect_rules, r.expect_elements), (1, 1));
        let r = render(&rs, Engine::IpsetNft).unwrap();
        assert!(r.install[0]
            .text
            .contains("add fwbench-blocked 192.0.2.1,udp:53\n"));
        assert_eq!(r.remove[1].text, "destroy fwbench-blocked\n");
    }

    #[test]
    fn invalid_rule_sets_are_refused() {
        let mut rs = RuleSet::empty(Ip::V4);
        rs.rules.push(Rule {
            hook: Hook::FilterForward,
            m: Match {
                l4: Some(L4::Icmpv6),
                ..Match::default()
            },
            action: Action::Accept,
            role: Role::Guard,
        });
        for engine in ALL.into_iter().skip(1) {
            assert!(
                matches!(render(&rs, engine), Err(RenderError::Invalid(_))),
                "{engine}"
            );
        }
        rs.rules[0].m.l4 = Some(L4::Udp);
        rs.rules[0].action = Action::Notrack;
        assert!(render(&rs, Engine::Nft)
            .unwrap_err()
            .to_string()
            .contains("notrack needs raw"));
        rs.rules[0].action = Action::Accept;
        rs.rules[0].m.src = Some(Prefix::host(filler_addr(Ip::V6, 0)));
        assert!(render(&rs, Engine::Nft)
            .unwrap_err()
            .to_string()
            .contains("IPv4 rule set"));
    }

    #[test]
    fn nft_and_iptables_syntax() {
        let rs = model(Model::Linear, 1, Position::First);
        let r = render(&rs, Engine::Nft).unwrap();
        assert_eq!(
            r.install[0].text,
            "add table inet fwbench\ndelete table inet fwbench\ntable inet fwbench {\n  \
             chain forward {\n    type filter hook forward priority filter; policy accept;\n    \
             ip saddr 198.18.0.0/16 meta l4proto udp counter accept\n    \
             ip saddr 192.0.2.0 udp dport 1 counter drop\n  }\n}\n"
        );
        assert_eq!(r.remove[0].text, "delete table inet fwbench\n");
        let r = render(&rs, Engine::IptablesLegacy).unwrap();
        assert_eq!(
            r.install[0].tool,
            Tool::IptablesRestore {
                v6: false,
                backend: Backend::Legacy
            }
        );
        assert_eq!(
            r.install[0].text,
            "*filter\n:FWBENCH-FORWARD - [0:0]\n\
             -A FWBENCH-FORWARD -s 198.18.0.0/16 -p udp -j ACCEPT\n\
             -A FWBENCH-FORWARD -s 192.0.2.0/32 -p udp -m udp --dport 1 -j DROP\n\
             -I FORWARD 1 -j FWBENCH-FORWARD\nCOMMIT\n"
        );
        assert_eq!(
            r.remove[0].text,
            "*filter\n-D FORWARD -j FWBENCH-FORWARD\n-F FWBENCH-FORWARD\n-X FWBENCH-FORWARD\nCOMMIT\n"
        );
        assert_eq!(mask(Ip::V4, 16), "255.255.0.0");
        assert_eq!(mask(Ip::V4, 0), "0.0.0.0");
        assert_eq!(mask(Ip::V6, 48), "ffff:ffff:ffff::");
    }

    #[test]
    fn quarter_million_element_set() {
        let rs = model(Model::RawFiller, 250_000, Position::None);
        for engine in [Engine::NftSet, Engine::IpsetLegacy] {
            let r = render(&rs, engine).unwrap();
            assert_eq!(
                (r.expect_rules, r.expect_elements),
                (1, 250_000),
                "{engine}"
            );
        }
        let r = render(&rs, Engine::IpsetNft).unwrap();
        assert!(r.install[0]
            .text
            .contains("hashsize 262144 maxelem 250000 -exist"));
    }

    #[test]
    fn imported_rule_sets_render_as_is() {
        use crate::import::{ImportFormat, Imported};
        let imported = |format, text: &str| RuleSet {
            raw: Some(Imported {
                format,
                source: "f".into(),
                text: text.into(),
                rules: 3,
                elements: 2,
            }),
            ..RuleSet::empty(Ip::V6)
        };
        let nft = imported(ImportFormat::Nft, "add table inet fwbench\n");
        let r = render(&nft, Engine::NftSet).unwrap();
        assert_eq!(r.install[0].text, "add table inet fwbench\n");
        assert_eq!((r.expect_rules, r.expect_elements), (3, 2));
        assert!(r.layout.is_empty());
        assert_eq!(
            render(&nft, Engine::IptablesNft).unwrap_err().to_string(),
            "an nft ruleset needs engine nft"
        );
        let ipt = "*filter\n:FWBENCH-FORWARD - [0:0]\n:FWBENCH-U-X - [0:0]\n\
                   -A FWBENCH-FORWARD -j FWBENCH-U-X\n-I FORWARD 1 -j FWBENCH-FORWARD\nCOMMIT\n";
        let ipt = imported(ImportFormat::IptablesSave, ipt);
        let r = render(&ipt, Engine::IpsetNft).unwrap();
        assert_eq!(
            r.install[0].tool,
            Tool::IptablesRestore {
                v6: true,
                backend: Backend::Nft
            }
        );
        assert_eq!(
            r.remove[0].text,
            "*filter\n-D FORWARD -j FWBENCH-FORWARD\n-F FWBENCH-FORWARD\n-F FWBENCH-U-X\n\
             -X FWBENCH-FORWARD\n-X FWBENCH-U-X\nCOMMIT\n"
        );
        assert_eq!(
            render(&ipt, Engine::Nft).unwrap_err().to_string(),
            "an iptables-save file needs engine iptables-legacy or iptables-nft"
        );
        assert!(render(&ipt, Engine::None).unwrap().install.is_empty());
    }
}
