//! Validation and planning shared by every engine: a [`RuleSet`] → the chains and sets
//! an engine renders ([`Plan`]), with the drop policies as final counted rules and, on
//! request, runs of filler rules collapsed into one set and one rule.
//!
//! Owns: what no engine can render faithfully (with the reason) and the chain layout
//! that maps counters back to rule roles.
//! Must not: write any engine's syntax or run programs.

use crate::model::*;
use crate::rendered::{ChainLayout, RenderError};
use std::collections::HashSet;

/// Longest set name: ipset names have at most 31 characters, with the `fwbench-` prefix
/// (checked against the ipset engine's prefix there).
pub(crate) const MAX_SET_NAME: usize = 31 - "fwbench-".len();

/// Reject rule sets no engine can render faithfully, with the reason.
pub(crate) fn validate(rs: &RuleSet) -> Result<(), RenderError> {
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
            (Action::Notrack, Hook::RawPrerouting)
            | (Action::Mark(_), Hook::ManglePrerouting)
            | (Action::Snat(_) | Action::Masquerade, Hook::NatPostrouting)
            | (Action::Dnat(..), Hook::NatPrerouting)
            | (Action::Offload, Hook::FilterForward) => {}
            (Action::Notrack, h) => return bad(format!("notrack needs raw prerouting, not {h:?}")),
            (Action::Mark(_), h) => return bad(format!("mark needs mangle prerouting, not {h:?}")),
            (Action::Snat(_) | Action::Masquerade, h) => {
                return bad(format!(
                    "{} needs nat postrouting, not {h:?}",
                    r.action.name()
                ))
            }
            (Action::Dnat(..), h) => return bad(format!("dnat needs nat prerouting, not {h:?}")),
            (Action::Offload, h) => {
                return bad(format!("flow offload needs filter forward, not {h:?}"))
            }
            (Action::Accept, h) if h.is_nat() => {}
            (Action::Drop, h) if h.is_nat() => {
                return bad(format!(
                    "drop in a NAT chain ({h:?}): filter in a filter chain"
                ))
            }
            (Action::Accept | Action::Drop, _) => {}
        }
        if let Action::Snat(a) | Action::Dnat(a, _) = r.action {
            if a.is_ipv6() != v6 {
                return bad(format!("NAT address {a} in a {family} rule set"));
            }
        }
        if let Action::Dnat(_, Some(_)) = r.action {
            if !ported {
                return bad("dnat to a port needs l4 tcp, udp or sctp".into());
            }
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
pub(crate) struct PlanChain {
    pub hook: Hook,
    pub rules: Vec<Rule>,
}

/// A set as rendered, with the protocol of its ports (ipset stores it per element).
pub(crate) struct PlanSet {
    pub name: String,
    pub elements: Vec<SetElem>,
    pub l4: L4,
}

/// What an engine renders: chains in [`Hook::ALL`] order and sets.
pub(crate) struct Plan {
    pub chains: Vec<PlanChain>,
    pub sets: Vec<PlanSet>,
}

impl Plan {
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.chains.iter().flat_map(|c| &c.rules)
    }
}

/// A filler rule that a set can replace: it matches only (source host, l4, port). A
/// matching rule of that shape (model `linear-drop`: the client's own pair) joins its
/// fillers' set, which then is the matching rule.
fn collapsible(r: &Rule) -> bool {
    let m = &r.m;
    matches!(r.role, Role::Filler | Role::Match)
        && m.src.is_some_and(|p| p.is_host())
        && m.dport.is_some()
        && matches!(m.l4, Some(L4::Tcp | L4::Udp | L4::Sctp))
        && m.dst.is_none()
        && m.set.is_none()
        && m.string.is_none()
        && m.hashlimit.is_none()
        && !m.ct_new_established
        && !m.ct_established
}

/// Group the rules per hook, add policy-drop rules and, when `collapse`, replace each
/// run of collapsible filler rules (same hook, l4 and action) by one set and one rule.
pub(crate) fn plan(rs: &RuleSet, collapse: bool) -> Result<Plan, RenderError> {
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
    for hook in Hook::ALL {
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
            let mut role = Role::Filler;
            while i < rules.len()
                && collapsible(rules[i])
                && rules[i].m.l4 == r.m.l4
                && rules[i].action == r.action
            {
                let m = &rules[i].m;
                if rules[i].role == Role::Match {
                    role = Role::Match;
                }
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
                role,
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

impl Plan {
    /// Rules in fwbench's own chains.
    pub fn expect_rules(&self) -> usize {
        self.chains.iter().map(|c| c.rules.len()).sum()
    }
    /// Elements over all sets.
    pub fn expect_elements(&self) -> usize {
        self.sets.iter().map(|s| s.elements.len()).sum()
    }
    /// The roles of each chain's rules, in order.
    pub fn layout(&self) -> Vec<ChainLayout> {
        self.chains
            .iter()
            .map(|c| ChainLayout {
                hook: c.hook,
                roles: c.rules.iter().map(|r| r.role).collect(),
            })
            .collect()
    }
}
