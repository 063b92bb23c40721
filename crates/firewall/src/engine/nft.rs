//! Engines `nft` and `nft-set`: nftables, everything in one table `fwbench` of the
//! family the request chose (`inet` by default; `ip`/`ip6` for `nft_family = ip`),
//! applied with one `nft -f` batch that replaces the table atomically. `nft-set`
//! collapses runs of filler rules into one set and one rule matching it.
//!
//! Owns: nft's syntax for the rule model, reading counts and counters back with
//! `nft -j list table <family> fwbench`.
//! Must not: create, read or delete any table but `inet|ip|ip6 fwbench`.

use super::ChangeSteps;
use super::{imported, planned, Backend};
use crate::change::{Change, Step, UpdateMethod};
use crate::model::*;
use crate::plan::Plan;
use crate::rendered::{RenderError, Rendered, Settings};
use crate::tool::{run, Batch, Tool, ToolError};
use std::fmt::Write as _;

/// nftables table of fwbench (family inet by default; ip or ip6 when asked).
pub const NFT_TABLE: &str = "fwbench";

/// Every table family fwbench may have created its table in.
pub const NFT_FAMILIES: [&str; 3] = ["inet", "ip", "ip6"];

/// nft base chain names in fwbench's table.
pub fn nft_chain(hook: Hook) -> &'static str {
    match hook {
        Hook::RawPrerouting => "raw_prerouting",
        Hook::ManglePrerouting => "mangle_prerouting",
        Hook::FilterForward => "forward",
        Hook::FilterInput => "input",
        Hook::NatPrerouting => "nat_prerouting",
        Hook::NatPostrouting => "nat_postrouting",
    }
}

/// The name of the flowtable of model `flowtable` in fwbench's table.
pub const NFT_FLOWTABLE: &str = "ft";

/// Start of the placeholder for the flowtable's devices in the rendered text
/// (`@devices-towards ADDR ADDR@`): the gateway's interfaces are known only where the
/// batch is applied, which replaces it with the interfaces that route to those
/// addresses.
pub const FLOWTABLE_DEVICES: &str = "@devices-towards";

/// An `nft -f` batch that creates (and deletes) a flowtable on `lo` in a table of its
/// own: whether this kernel has flowtables (`NF_FLOW_TABLE`), asked of the kernel.
pub const FLOWTABLE_PROBE: &str = "table inet fwbench_ftprobe {\n  flowtable ft {\n    \
     hook ingress priority 0; devices = { lo };\n  }\n}\n\
     delete table inet fwbench_ftprobe\n";

/// What fwbench says when the kernel has no flowtables, with nft's own words.
pub fn flowtable_unavailable(nft_said: &str) -> String {
    // nft's message line, without its `/dev/stdin:2:13-14: ` position.
    let said = nft_said
        .lines()
        .find_map(|l| l.find("Error:").map(|at| &l[at..]))
        .unwrap_or(nft_said)
        .trim();
    format!(
        "flowtable unavailable in this kernel (nft could not create one: {said}; \
         flowtables need a kernel built with NF_FLOW_TABLE and NFT_FLOW_OFFLOAD)"
    )
}

/// Ask this network namespace's kernel whether it has flowtables (a scratch table
/// `inet fwbench_ftprobe`, deleted in the same batch).
pub fn flowtable_probe() -> Result<(), ToolError> {
    match run(&["nft", "-f", "-"], Some(FLOWTABLE_PROBE)) {
        Ok(_) => Ok(()),
        Err(ToolError::Rejected { stderr, .. }) => {
            // A batch fails as a whole, but a half-made probe table must not stay.
            let _ = run(&["nft", "delete", "table", "inet", "fwbench_ftprobe"], None);
            Err(ToolError::Unavailable(flowtable_unavailable(&stderr)))
        }
        Err(e) => Err(e),
    }
}

/// A batch with its flowtable devices' placeholder replaced by the interfaces of this
/// namespace that route to the addresses it names; `None` when it has none.
fn with_flowtable_devices(text: &str) -> Result<Option<String>, ToolError> {
    let Some(at) = text.find(FLOWTABLE_DEVICES) else {
        return Ok(None);
    };
    let rest = &text[at + FLOWTABLE_DEVICES.len()..];
    let end = rest
        .find('@')
        .ok_or_else(|| ToolError::Io("unterminated flowtable devices placeholder".into()))?;
    let mut devs: Vec<String> = vec![];
    for a in rest[..end].split_whitespace() {
        let addr: std::net::IpAddr = a
            .parse()
            .map_err(|_| ToolError::Io(format!("flowtable devices: bad address {a}")))?;
        if let Some(d) = super::bpf_load::route_dev(addr).map_err(ToolError::from)? {
            if !devs.contains(&d) {
                devs.push(d);
            }
        }
    }
    if devs.is_empty() {
        return Err(ToolError::Io(format!(
            "no interface of this namespace routes to {}: no device for the flowtable",
            rest[..end].trim()
        )));
    }
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..at]);
    out.push_str(&devs.join(", "));
    out.push_str(&rest[end + 1..]);
    Ok(Some(out))
}

/// nftables, one native rule per model rule (`collapse` false) or with filler runs
/// collapsed into sets.
pub struct Nft {
    engine: Engine,
    collapse: bool,
}

pub static NFT: Nft = Nft {
    engine: Engine::Nft,
    collapse: false,
};

pub static NFT_SET: Nft = Nft {
    engine: Engine::NftSet,
    collapse: true,
};

impl Backend for Nft {
    fn render(&self, rs: &RuleSet, opts: &EngineOptions) -> Result<Rendered, RenderError> {
        let family = opts.nft_family.table_family(rs.ip);
        if let Some(imp) = &rs.raw {
            return match imp.format {
                ImportFormat::Nft if opts.nft_family != NftFamily::Inet => {
                    Err(RenderError::Invalid(format!(
                        "nft family {} does not apply to an imported ruleset (it is installed \
                         as `table inet {NFT_TABLE}`)",
                        opts.nft_family
                    )))
                }
                ImportFormat::Nft => {
                    let install = Batch {
                        tool: Tool::NftJson,
                        text: imp.text.clone(),
                    };
                    let mut out = imported(self.engine, rs.ip, imp, install, remove(family));
                    out.settings = Settings {
                        table: Some(format!("{family} {NFT_TABLE} (imported)")),
                        counters: Some("per rule (added where the imported rule had none)".into()),
                        policy: (imp.rule_list.iter().any(|r| r.policy)).then(|| {
                            "a drop policy is a base chain of fwbench's (policy drop) that \
                                 jumps to the chain's rules, then drops, counted"
                                .into()
                        }),
                        ..Settings::default()
                    };
                    Ok(out)
                }
                ImportFormat::IptablesSave => Err(RenderError::Invalid(
                    "an iptables-save file needs engine iptables-legacy or iptables-nft".into(),
                )),
            };
        }
        let (plan, mut out) = planned(self.engine, rs, self.collapse)?;
        out.install.push(Batch {
            tool: Tool::Nft,
            text: nft_text(rs, family, &plan, self.engine, opts)?,
        });
        out.remove.push(remove(family));
        out.nft_family = opts.nft_family;
        out.settings = nft_settings(rs, family, &plan, opts.set_timeouts);
        Ok(out)
    }

    fn apply(&self, r: &Rendered) -> Result<(), ToolError> {
        for b in &r.install {
            match with_flowtable_devices(&b.text)? {
                Some(text) => {
                    // Detected, not assumed: the kernel is asked first.
                    flowtable_probe()?;
                    crate::tool::apply(&Batch { tool: b.tool, text })?
                }
                None => crate::tool::apply(b)?,
            }
        }
        Ok(())
    }

    fn count(&self, r: &Rendered) -> Result<(usize, usize), ToolError> {
        let c = nft_counters(r.nft_family.table_family(r.ip))?;
        Ok((c.rules.iter().map(|(_, v)| v.len()).sum(), c.elements))
    }

    fn counters(&self, r: &Rendered) -> Result<Vec<(Hook, Vec<u64>)>, ToolError> {
        let c = nft_counters(r.nft_family.table_family(r.ip))?;
        Ok(super::by_hook(c.rules, nft_chain))
    }

    fn chain_counters(&self, r: &Rendered) -> Result<Vec<(String, Vec<u64>)>, ToolError> {
        Ok(nft_counters(r.nft_family.table_family(r.ip))?.rules)
    }

    fn handles(
        &self,
        r: &Rendered,
        hook: Hook,
        at: usize,
        k: usize,
    ) -> Result<Vec<u64>, ToolError> {
        let fam = r.nft_family.table_family(r.ip);
        let argv = [
            "nft",
            "-j",
            "-a",
            "list",
            "chain",
            fam,
            NFT_TABLE,
            nft_chain(hook),
        ];
        let out = run(&argv, None)?;
        let v: serde_json::Value = serde_json::from_str(&out)
            .map_err(|e| ToolError::Io(format!("parsing `nft -j list chain`: {e}")))?;
        Ok(v["nftables"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i.get("rule")?.get("handle")?.as_u64())
            .skip(at)
            .take(k)
            .collect())
    }

    fn change(&self, r: &Rendered, change: &Change, method: UpdateMethod) -> ChangeSteps {
        let fam = r.nft_family.table_family(r.ip);
        let per_rule = match change {
            // A set's reload has methods of its own (flush-load: the set's, not the
            // rule set's).
            Change::ReloadSet { .. } => false,
            _ => super::per_rule(self.engine, change, method)?,
        };
        // `VERB element FAMILY TABLE SET { ADDR . PORT, … }` of `es`, each with its
        // timeout where the change gives one.
        let timeout = match change {
            Change::AddElements {
                timeout_ms: Some(ms),
                ..
            } => format!(" timeout {ms}ms"),
            Change::AddElements { .. }
            | Change::Insert { .. }
            | Change::Delete { .. }
            | Change::RemoveElements { .. }
            | Change::Replace(_)
            | Change::ReloadSet { .. } => String::new(),
        };
        let statement = |verb: &str, set: &str, es: &[SetElem]| {
            let all: Vec<String> = es
                .iter()
                .map(|e| format!("{} . {}{timeout}", e.addr, e.port))
                .collect();
            format!(
                "{verb} element {fam} {NFT_TABLE} {set} {{ {} }}",
                all.join(", ")
            )
        };
        let (lines, echo): (Vec<String>, bool) = match change {
            Change::Insert { hook, at, rules } => {
                let mut lines = Vec::with_capacity(rules.len());
                // `insert` prepends (`index N`: before the rule at N): the last rule
                // first keeps the change's order.
                let index = match at {
                    0 => String::new(),
                    n => format!("index {n} "),
                };
                for rule in rules.iter().rev() {
                    let mut t =
                        format!("insert rule {fam} {NFT_TABLE} {} {index}", nft_chain(*hook));
                    nft_rule(&mut t, r.ip, rule, self.engine)?;
                    lines.push(t);
                }
                // No `--echo --handle`: to echo, nft fetches the whole rule set first
                // (245 ms instead of 22 for one rule into 10 000 here), which the
                // commit's time would count. The handles are read back untimed, when
                // needed (`update::Events`).
                (lines, false)
            }
            Change::Delete {
                hook,
                rules,
                handles,
            } => {
                if handles.len() != rules.len() {
                    return Err(RenderError::Invalid(format!(
                        "deleting {} nft rules needs their handles ({} known)",
                        rules.len(),
                        handles.len()
                    )));
                }
                let lines = handles
                    .iter()
                    .rev()
                    .map(|h| {
                        format!(
                            "delete rule {fam} {NFT_TABLE} {} handle {h}",
                            nft_chain(*hook)
                        )
                    })
                    .collect();
                (lines, false)
            }
            Change::AddElements { set, elements, .. }
            | Change::RemoveElements { set, elements, .. } => {
                let verb = match change {
                    Change::AddElements { .. } => "add",
                    _ => "delete",
                };
                let lines = if per_rule {
                    elements
                        .iter()
                        .rev()
                        .map(|e| statement(verb, set, std::slice::from_ref(e)))
                        .collect()
                } else {
                    vec![statement(verb, set, elements)]
                };
                (lines, false)
            }
            Change::ReloadSet { set, elements, .. } => {
                let flush = format!("flush set {fam} {NFT_TABLE} {set}");
                let add = |es: &[SetElem]| statement("add", set, es);
                let batch = |text: String| Step::batch(&["nft", "-f", "-"], text);
                return super::reload_set_steps(
                    self.engine,
                    change,
                    method,
                    // One transaction: the set is never seen empty.
                    || vec![batch(format!("{flush}\n{}\n", add(elements)))],
                    Step::call(&["nft", flush.as_str()]),
                    || batch(format!("{}\n", add(elements))),
                    || {
                        elements
                            .iter()
                            .map(|e| Step::call(&["nft", add(std::slice::from_ref(e)).as_str()]))
                            .collect()
                    },
                );
            }
            Change::Replace(new) if !per_rule => return Ok(super::batch_steps(&new.install)),
            Change::Replace(_) => {
                return Err(super::unsupported_change(self.engine, change, method))
            }
        };
        let mut argv = vec!["nft"];
        if echo {
            argv.extend(["--echo", "--handle"]);
        }
        let steps = if per_rule {
            lines
                .into_iter()
                .map(|l| Step {
                    echoes_handles: echo,
                    ..Step::call(&[argv.clone(), vec![l.as_str()]].concat())
                })
                .collect()
        } else {
            argv.extend(["-f", "-"]);
            let mut text = lines.join("\n");
            text.push('\n');
            vec![Step {
                echoes_handles: echo,
                ..Step::batch(&argv, text)
            }]
        };
        Ok(steps)
    }
}

/// Removal: the whole of fwbench's own table of that family.
fn remove(family: &str) -> Batch {
    Batch {
        tool: Tool::Nft,
        text: format!("delete table {family} {NFT_TABLE}\n"),
    }
}

/// Hook and priority (name and number) of a base chain.
fn hook_priority(hook: Hook) -> (&'static str, &'static str, i32) {
    match hook {
        Hook::RawPrerouting => ("prerouting", "raw", -300),
        Hook::ManglePrerouting => ("prerouting", "mangle", -150),
        Hook::FilterForward => ("forward", "filter", 0),
        Hook::FilterInput => ("input", "filter", 0),
        Hook::NatPrerouting => ("prerouting", "dstnat", -100),
        Hook::NatPostrouting => ("postrouting", "srcnat", 100),
    }
}

/// The type of a base chain: nat for the NAT hooks, else filter.
fn chain_type(hook: Hook) -> &'static str {
    if hook.is_nat() {
        "nat"
    } else {
        "filter"
    }
}

/// The choices that change a rule's cost: the table's family, the base chains' hooks
/// and priorities, counters on every rule, the base policy, the sets' kind.
fn nft_settings(rs: &RuleSet, family: &str, plan: &Plan, timeouts: bool) -> Settings {
    let hooks: Vec<&str> = plan
        .chains
        .iter()
        .map(|c| hook_priority(c.hook).0)
        .collect();
    let prios: Vec<String> = plan
        .chains
        .iter()
        .map(|c| {
            let (_, name, n) = hook_priority(c.hook);
            format!("{name} ({n})")
        })
        .collect();
    let addr = match rs.ip {
        Ip::V4 => "ipv4_addr",
        Ip::V6 => "ipv6_addr",
    };
    Settings {
        table: Some(format!("{family} {NFT_TABLE}")),
        hook: (!hooks.is_empty()).then(|| hooks.join(", ")),
        priority: (!prios.is_empty()).then(|| prios.join(", ")),
        counters: Some("per rule".into()),
        policy: Some(super::xtables::policy_text(rs, "accept")),
        sets: (!plan.sets.is_empty()).then(|| {
            let flags = if timeouts {
                "flags timeout (elements may expire)"
            } else {
                "no flags (hash)"
            };
            format!("{addr} . inet_service, {flags}, size = elements")
        }),
        ..Settings::default()
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

/// The whole `nft -f` batch: replace `table <family> fwbench` atomically.
fn nft_text(
    rs: &RuleSet,
    family: &str,
    plan: &Plan,
    engine: Engine,
    opts: &EngineOptions,
) -> Result<String, RenderError> {
    let ip = rs.ip;
    let room = opts.set_room;
    let elements: usize = plan.sets.iter().map(|s| s.elements.len()).sum();
    let rules = plan.chains.iter().map(|c| c.rules.len()).sum::<usize>();
    let mut t = String::with_capacity(256 + 48 * elements + 96 * rules);
    // add + delete first: the batch works whether or not the table exists.
    let _ = writeln!(t, "add table {family} {NFT_TABLE}");
    let _ = writeln!(t, "delete table {family} {NFT_TABLE}");
    let _ = writeln!(t, "table {family} {NFT_TABLE} {{");
    let addr_type = match ip {
        Ip::V4 => "ipv4_addr",
        Ip::V6 => "ipv6_addr",
    };
    for s in &plan.sets {
        let _ = writeln!(t, "  set {} {{", s.name);
        let _ = writeln!(t, "    type {addr_type} . inet_service");
        let _ = writeln!(t, "    size {}", (s.elements.len() + room as usize).max(1));
        if opts.set_timeouts {
            t.push_str("    flags timeout\n");
        }
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
    if plan.rules().any(|r| r.action == Action::Offload) {
        // The fast path of the forward hook; its devices are the gateway's interfaces.
        let towards: Vec<String> = rs.ingress.iter().map(|a| a.to_string()).collect();
        let _ = writeln!(
            t,
            "  flowtable {NFT_FLOWTABLE} {{\n    hook ingress priority 0; \
             devices = {{ {FLOWTABLE_DEVICES} {}@ }};\n  }}",
            towards.join(" ")
        );
    }
    for c in &plan.chains {
        let (hook, priority, _) = hook_priority(c.hook);
        let _ = writeln!(t, "  chain {} {{", nft_chain(c.hook));
        let _ = writeln!(
            t,
            "    type {} hook {hook} priority {priority}; policy accept;",
            chain_type(c.hook)
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
            let _ = write!(t, "{fam} saddr . {} dport @{set} ", l4.protocol());
            if let Some(port) = m.dport {
                let _ = write!(t, "{} dport {port} ", l4.protocol());
            }
        }
        (Some(l4), None) => match m.dport {
            Some(port) => {
                let _ = write!(t, "{} dport {port} ", l4.protocol());
            }
            None => {
                let _ = write!(t, "meta l4proto {} ", l4.protocol());
            }
        },
        // Checked by validate(): sets and ports come with an l4.
        (None, _) => {}
    }
    if m.ct_new_established {
        t.push_str("ct state new,established ");
    }
    if m.ct_established {
        t.push_str("ct state established,related ");
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
        // `snat ip to` names the address family, which an inet table needs.
        Action::Snat(a) => {
            let _ = write!(t, "snat {fam} to {a}");
        }
        Action::Masquerade => t.push_str("masquerade"),
        // The address is of the rule set's family (checked by validate()).
        Action::Dnat(a, port) => {
            let _ = write!(t, "dnat {fam} to {}", super::nat_to(a, port));
        }
        Action::Offload => {
            let _ = write!(t, "flow add @{NFT_FLOWTABLE}");
        }
    }
    Ok(())
}

/// Packet counters of fwbench's rules, per chain in rule order.
struct Counters {
    rules: Vec<(String, Vec<u64>)>,
    elements: usize,
}

/// Read back `table <family> fwbench`.
fn nft_counters(family: &str) -> Result<Counters, ToolError> {
    let out = match run(&["nft", "-j", "list", "table", family, NFT_TABLE], None) {
        Ok(o) => o,
        // No table: nothing of ours is installed.
        Err(ToolError::Rejected { stderr, .. }) if stderr.contains("No such file") => {
            return Ok(Counters {
                rules: vec![],
                elements: 0,
            })
        }
        Err(e) => return Err(e),
    };
    let v: serde_json::Value = serde_json::from_str(&out)
        .map_err(|e| ToolError::Io(format!("parsing `nft -j list table`: {e}")))?;
    let mut rules: Vec<(String, Vec<u64>)> = Vec::new();
    let mut elements = 0;
    for item in v["nftables"].as_array().into_iter().flatten() {
        if let Some(r) = item.get("rule") {
            let chain = r["chain"].as_str().unwrap_or("").to_owned();
            let packets = r["expr"]
                .as_array()
                .into_iter()
                .flatten()
                .find_map(|e| e.get("counter").and_then(|c| c["packets"].as_u64()))
                .unwrap_or(0);
            match rules.iter_mut().find(|(c, _)| *c == chain) {
                Some((_, v)) => v.push(packets),
                None => rules.push((chain, vec![packets])),
            }
        } else if let Some(s) = item.get("set") {
            elements += s["elem"].as_array().map(|a| a.len()).unwrap_or(0);
        }
    }
    Ok(Counters { rules, elements })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(mask(Ip::V4, 16), "255.255.0.0");
        assert_eq!(mask(Ip::V4, 0), "0.0.0.0");
        assert_eq!(mask(Ip::V6, 48), "ffff:ffff:ffff::");
    }
}
