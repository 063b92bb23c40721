//! Engines `xdp`, `xdp-map`, `xdp-generic` and `tc-bpf`: the rule set as the tables of
//! one BPF program (`bpf/fwbench.bpf.c`), loaded and attached by fwbench itself.
//!
//! Owns: how a rule set becomes the program's rule table and set map (the rendered
//! batch is that table, as text: `fwbench rules render` shows what runs), which rule
//! sets the program cannot express (the table and its text are [`super::bpf_table`]).
//! Must not: talk to the kernel (that is [`super::bpf_load`]).
//!
//! The program walks the rules in order with `bpf_loop` (one iteration per rule, at
//! most [`MAX_BPF_RULES`]); the first rule that matches counts the packet in a per-CPU
//! counter; drop ends the walk, accept continues at the first rule of the next hook
//! (netfilter's order: raw prerouting, then the filter chain). `xdp-map` collapses
//! runs of filler rules into one hash-map lookup (the `nft-set` of XDP).

use super::bpf_table::{set_id, Attach, Elem, MapWrite, Table, TableRule, MAX_BPF_RULES};
use super::ChangeSteps;
use super::{bpf_load, planned, unsupported_change, Backend};
use crate::change::{Change, Step, UpdateMethod};
use crate::model::{Action, Engine, EngineOptions, Hook, Match, Rule, RuleSet, SetElem, L4};
use crate::rendered::{RenderError, Rendered};
use crate::tool::{Batch, Tool, ToolError};

pub struct BpfEngine {
    engine: Engine,
    attach: Attach,
    collapse: bool,
}

pub static XDP: BpfEngine = BpfEngine {
    engine: Engine::Xdp,
    attach: Attach::XdpNative,
    collapse: false,
};
pub static XDP_MAP: BpfEngine = BpfEngine {
    engine: Engine::XdpMap,
    attach: Attach::XdpNative,
    collapse: true,
};
pub static XDP_GENERIC: BpfEngine = BpfEngine {
    engine: Engine::XdpGeneric,
    attach: Attach::XdpGeneric,
    collapse: false,
};
pub static TC_BPF: BpfEngine = BpfEngine {
    engine: Engine::TcBpf,
    attach: Attach::TcIngress,
    collapse: false,
};

impl BpfEngine {
    fn unsupported(&self, feature: &str, hint: &str) -> RenderError {
        RenderError::Unsupported {
            engine: self.engine,
            feature: feature.into(),
            hint: hint.into(),
        }
    }

    fn table(&self, rs: &RuleSet) -> Result<(Table, Rendered, Vec<String>), RenderError> {
        if rs.raw.is_some() {
            return Err(self.unsupported(
                "an imported ruleset file",
                " (it holds nft or iptables text; use a rule model)",
            ));
        }
        for r in &rs.rules {
            let m = &r.m;
            if r.hook.is_nat() {
                return Err(self.unsupported(
                    "NAT chains",
                    " (use nft, nft-set, iptables-legacy, iptables-nft or an ipset engine)",
                ));
            }
            if m.ct_established {
                return Err(self.unsupported(
                    "connection-tracking state (model stateful)",
                    " (XDP and tc run before connection tracking)",
                ));
            }
            if m.ct_new_established {
                return Err(self.unsupported(
                    "connection-tracking state (model conntrack)",
                    " (XDP and tc run before connection tracking)",
                ));
            }
            if m.string.is_some() {
                return Err(
                    self.unsupported("payload string matches (model string-bm or string-kmp)", "")
                );
            }
            if m.hashlimit.is_some() {
                return Err(self.unsupported("hashlimit (model hashlimit)", ""));
            }
            match r.action {
                Action::Mark(_) => {
                    return Err(self.unsupported(
                        "the packet mark (model seed000-f4)",
                        " (the program has no mangle table)",
                    ))
                }
                Action::Notrack => {
                    return Err(self.unsupported(
                        "notrack (model notrack)",
                        " (XDP and tc run before connection tracking)",
                    ))
                }
                Action::Snat(_) | Action::Masquerade | Action::Dnat(..) => {
                    return Err(self.unsupported(
                        &format!("NAT ({})", r.action.name()),
                        " (use nft, nft-set, iptables-legacy, iptables-nft or an ipset engine)",
                    ))
                }
                Action::Offload => {
                    return Err(
                        self.unsupported("a flowtable (model flowtable)", " (use nft or nft-set)")
                    )
                }
                Action::Accept | Action::Drop => {}
            }
        }
        let (plan, out) = planned(self.engine, rs, self.collapse)?;
        let hooks: Vec<Hook> = plan.chains.iter().map(|c| c.hook).collect();
        if hooks.contains(&Hook::FilterForward) && hooks.contains(&Hook::FilterInput) {
            return Err(self.unsupported(
                "rules on both forward and input",
                " (the program sees every packet before routing decides)",
            ));
        }
        let n = plan.expect_rules();
        if n > MAX_BPF_RULES {
            return Err(RenderError::Invalid(format!(
                "{n} rules are more than engine {} walks (at most {MAX_BPF_RULES}, the bound of its loop)",
                self.engine
            )));
        }
        let mut rules = vec![];
        let mut end = 0;
        for c in &plan.chains {
            end += c.rules.len() as u32;
            for r in &c.rules {
                let m = &r.m;
                let set = match &m.set {
                    Some(name) => Some(plan.sets.iter().position(|s| s.name == *name).ok_or_else(
                        || RenderError::Invalid(format!("set {name} is used but not defined")),
                    )? as u32),
                    None => None,
                };
                rules.push(TableRule {
                    hook: c.hook,
                    src: m.src,
                    dst: m.dst,
                    l4: m.l4,
                    dport: m.dport,
                    set,
                    drop: r.action == Action::Drop,
                    next: end,
                });
            }
        }
        let elements = plan
            .sets
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                s.elements
                    .iter()
                    .map(move |e| (i as u32, s.l4, e.addr, e.port))
            })
            .collect();
        let table = Table {
            ip: rs.ip,
            ingress: rs.ingress.clone(),
            rules,
            elements,
            room: 0,
            element_room: 0,
        };
        let set_names = plan.sets.into_iter().map(|s| s.name).collect();
        Ok((table, out, set_names))
    }
}

/// The rendered BPF table's text.
fn table_text(r: &Rendered) -> &str {
    r.install
        .iter()
        .find(|b| b.tool == Tool::Bpf)
        .map(|b| b.text.as_str())
        .unwrap_or("")
}

impl BpfEngine {
    /// An event's rules as rows of the table, to go before its first rule: they must
    /// be plain address/protocol/port matches, and `hook` the first chain walked (an
    /// accept continues where the first rule's does).
    fn head_rules(
        &self,
        table: &Table,
        hook: Hook,
        rules: &[Rule],
    ) -> Result<Vec<TableRule>, RenderError> {
        let first = table
            .rules
            .first()
            .filter(|r| r.hook == hook)
            .ok_or_else(|| {
                self.unsupported(
                    "rules inserted into a chain that is not the first walked",
                    " (the spare slots are before the first rule)",
                )
            })?;
        rules
            .iter()
            .map(|r| {
                let beyond = || {
                    self.unsupported(
                        "an inserted rule beyond address, protocol and port matches",
                        "",
                    )
                };
                // Destructured: a new kind of match must be decided on here.
                let Match {
                    src,
                    dst,
                    l4,
                    dport,
                    set,
                    string,
                    hashlimit,
                    ct_new_established,
                    ct_established,
                } = &r.m;
                if set.is_some()
                    || string.is_some()
                    || hashlimit.is_some()
                    || *ct_new_established
                    || *ct_established
                {
                    return Err(beyond());
                }
                let drop = match r.action {
                    Action::Accept => false,
                    Action::Drop => true,
                    Action::Mark(_)
                    | Action::Notrack
                    | Action::Snat(_)
                    | Action::Masquerade
                    | Action::Dnat(..)
                    | Action::Offload => return Err(beyond()),
                };
                Ok(TableRule {
                    hook,
                    src: *src,
                    dst: *dst,
                    l4: *l4,
                    dport: *dport,
                    set: None,
                    drop,
                    next: first.next,
                })
            })
            .collect()
    }
}

impl Backend for BpfEngine {
    fn in_driver(&self) -> bool {
        self.attach == Attach::XdpNative
    }

    fn render(&self, rs: &RuleSet, opts: &EngineOptions) -> Result<Rendered, RenderError> {
        let (mut table, mut out, set_names) = self.table(rs)?;
        table.room = opts.rule_room;
        if !table.elements.is_empty() {
            table.element_room = opts.set_room;
        }
        out.install.push(Batch {
            tool: Tool::Bpf,
            text: table.to_text(self.attach, &set_names),
        });
        out.settings.hook = Some(self.attach.describe().into());
        out.settings.chain = Some(format!(
            "one BPF program, bpf_loop over the rules (bound {MAX_BPF_RULES})"
        ));
        out.settings.counters = Some("per-CPU array, one counter per rule".into());
        if !table.elements.is_empty() {
            out.settings.sets = Some("hash map keyed by (set, l4, source address, port)".into());
        }
        Ok(out)
    }

    fn tools(&self, _r: &Rendered) -> Vec<Tool> {
        vec![]
    }

    fn apply(&self, r: &Rendered) -> Result<(), ToolError> {
        let table = Table::parse(table_text(r)).map_err(|e| ToolError::Io(e.to_string()))?;
        bpf_load::load(self.attach, &table)
    }

    /// Gateway events by map writes (`--event-method map`): rules go into the spare
    /// slots before the first rule, then the first slot walked moves (one word); set
    /// elements are hash-map updates. One step: the write, done in the agent's process.
    fn change(&self, r: &Rendered, change: &Change, method: UpdateMethod) -> ChangeSteps {
        let refuse = || unsupported_change(self.engine, change, method);
        match method {
            UpdateMethod::Map => {}
            UpdateMethod::PerRule | UpdateMethod::Batch | UpdateMethod::FlushLoad => {
                return Err(refuse())
            }
        }
        let text = table_text(r);
        let table = Table::parse(text).map_err(|e| RenderError::Invalid(e.to_string()))?;
        let elems = |set: &str, l4: L4, elements: &[SetElem]| -> Result<Vec<Elem>, RenderError> {
            let id = set_id(text, set).ok_or_else(|| {
                RenderError::Invalid(format!("set {set} is not in the BPF table"))
            })?;
            Ok(elements.iter().map(|e| (id, l4, e.addr, e.port)).collect())
        };
        let write = match change {
            Change::Insert { hook, at: 0, rules } => {
                MapWrite::Insert(self.head_rules(&table, *hook, rules)?)
            }
            // The BPF table is matched first to last from its head.
            Change::Insert { .. } => return Err(refuse()),
            Change::Delete { hook, rules, .. } => {
                MapWrite::Delete(self.head_rules(&table, *hook, rules)?)
            }
            Change::AddElements {
                set,
                l4,
                elements,
                timeout_ms: None,
            } => MapWrite::AddElements(elems(set, *l4, elements)?),
            // Its maps' entries do not expire.
            Change::AddElements {
                timeout_ms: Some(_),
                ..
            } => return Err(refuse()),
            Change::RemoveElements { set, l4, elements } => {
                MapWrite::RemoveElements(elems(set, *l4, elements)?)
            }
            // A set's reload would be a new map, not writes to the loaded one.
            Change::Replace(_) | Change::ReloadSet { .. } => return Err(refuse()),
        };
        Ok(vec![Step::batch(&Tool::Bpf.argv(), write.to_text())])
    }

    fn remove(&self, _batches: &[Batch]) -> Option<ToolError> {
        // Dropping the program closes its links: nothing is pinned, so nothing stays.
        bpf_load::unload();
        None
    }

    fn count(&self, _r: &Rendered) -> Result<(usize, usize), ToolError> {
        bpf_load::counts().map_err(ToolError::from)
    }

    fn counters(&self, r: &Rendered) -> Result<Vec<(Hook, Vec<u64>)>, ToolError> {
        let all = bpf_load::counters().map_err(ToolError::from)?;
        let mut out = vec![];
        let mut at = 0;
        for c in &r.layout {
            let n = c.roles.len();
            out.push((c.hook, all.get(at..at + n).unwrap_or(&[]).to_vec()));
            at += n;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::bpf_table::BpfTableError;
    use super::*;
    use crate::model::{Ip, L4};
    use crate::models::{generate, Model, Position};

    fn rs(model: Model, count: u32, position: Position, ip: Ip) -> RuleSet {
        let a = crate::models::test_addressing(ip, 1);
        let spec = crate::models::test_spec(model, count, position, ip, None);
        generate(&spec, &a).unwrap()
    }

    fn table_of(e: &BpfEngine, rs: &RuleSet) -> Table {
        let r = e.render(rs, &EngineOptions::default()).unwrap();
        assert_eq!(r.install.len(), 1);
        Table::parse(&r.install[0].text).unwrap()
    }

    #[test]
    fn the_text_is_the_table_and_reads_back() {
        for ip in [Ip::V4, Ip::V6] {
            for e in [&XDP, &XDP_MAP, &TC_BPF] {
                for m in [Model::Linear, Model::RawDrop, Model::Seed000F2] {
                    let rs = rs(m, 5, Position::Middle, ip);
                    let (t, _, names) = e.table(&rs).unwrap();
                    let back = Table::parse(&t.to_text(e.attach, &names)).unwrap();
                    assert_eq!(back, t, "{} {m} {ip:?}", e.engine);
                }
            }
        }
    }

    #[test]
    fn events_are_map_writes_before_the_first_rule_and_read_back() {
        use crate::model::{Match, Prefix, Role, SetElem};
        let rs = rs(Model::Linear, 6, Position::Last, Ip::V4);
        let opts = EngineOptions {
            rule_room: 3,
            set_room: 2,
            ..EngineOptions::default()
        };
        let r = XDP.render(&rs, &opts).unwrap();
        let t = Table::parse(&r.install[0].text).unwrap();
        assert_eq!((t.room, t.element_room), (3, 0), "no set: no element room");
        let hook = t.rules[0].hook;
        let rule = Rule {
            hook,
            m: Match {
                src: Some(Prefix::host("198.18.1.1".parse().unwrap())),
                l4: Some(L4::Udp),
                dport: Some(5001),
                ..Match::default()
            },
            action: Action::Drop,
            role: Role::Filler,
        };
        let insert = Change::Insert {
            hook,
            at: 0,
            rules: vec![rule.clone()],
        };
        let steps = XDP.change(&r, &insert, UpdateMethod::Map).unwrap();
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].argv, Tool::Bpf.argv());
        let w = MapWrite::parse(steps[0].stdin.as_deref().unwrap()).unwrap();
        let MapWrite::Insert(rows) = &w else {
            panic!("{w:?}")
        };
        // An accept would continue where the first rule's does; it drops.
        assert_eq!((rows.len(), rows[0].drop, rows[0].next), (1, true, 7));
        assert_eq!(rows[0].dport, Some(5001));
        // Tool calls are not how a program's maps change: refused by name.
        for m in [UpdateMethod::Batch, UpdateMethod::PerRule] {
            let e = XDP.change(&r, &insert, m).unwrap_err().to_string();
            assert!(e.contains("by method"), "{e}");
        }
        // Anything beyond address, protocol and port: refused.
        let mut hashed = rule.clone();
        hashed.m.ct_new_established = true;
        let e = XDP
            .change(
                &r,
                &Change::Insert {
                    hook,
                    at: 0,
                    rules: vec![hashed],
                },
                UpdateMethod::Map,
            )
            .unwrap_err();
        assert!(e.to_string().contains("beyond address"), "{e}");
        // Elements: the set's id from the table's text.
        let r = XDP_MAP.render(&rs, &opts).unwrap();
        assert!(r.install[0].text.contains("room 3 2\n"));
        let set = r.drop_sets[0].name.clone();
        let add = Change::AddElements {
            set,
            l4: L4::Udp,
            elements: vec![SetElem {
                addr: "198.18.1.1".parse().unwrap(),
                port: 5001,
            }],
            timeout_ms: None,
        };
        let steps = XDP_MAP.change(&r, &add, UpdateMethod::Map).unwrap();
        let w = MapWrite::parse(steps[0].stdin.as_deref().unwrap()).unwrap();
        assert_eq!(
            w,
            MapWrite::AddElements(vec![(0, L4::Udp, "198.18.1.1".parse().unwrap(), 5001)])
        );
        assert!(MapWrite::parse("write shuffle\n").is_err());
    }

    #[test]
    fn linear_walks_every_rule_and_the_map_engine_collapses_them() {
        let rs = rs(Model::Linear, 6, Position::Last, Ip::V4);
        let t = table_of(&XDP, &rs);
        assert_eq!(t.rules.len(), 7);
        assert!(t.rules[..6].iter().all(|r| r.drop && r.dport.is_some()));
        assert!(!t.rules[6].drop);
        assert!(t.rules.iter().all(|r| r.next == 7));
        assert_eq!(t.ingress.len(), 2);
        let t = table_of(&XDP_MAP, &rs);
        assert_eq!(t.rules.len(), 2);
        assert_eq!(t.rules[0].set, Some(0));
        assert_eq!(t.elements.len(), 6);
        assert!(t.elements.iter().all(|e| e.0 == 0 && e.1 == L4::Udp));
    }

    #[test]
    fn an_accept_continues_at_the_next_hook() {
        // raw-drop after 2 fillers: raw prerouting only; seed000-f2: filter + policy.
        let t = table_of(&XDP, &rs(Model::RawDrop, 2, Position::Last, Ip::V4));
        assert_eq!(t.rules.len(), 3);
        assert!(t
            .rules
            .iter()
            .all(|r| r.hook == Hook::RawPrerouting && r.drop));
        let t = table_of(&XDP, &rs(Model::Seed000F2, 0, Position::Last, Ip::V6));
        let last = t.rules.last().unwrap();
        assert!(
            last.drop && last.src.is_none() && last.l4.is_none(),
            "policy drop last"
        );
        assert!(t.rules.iter().all(|r| r.next as usize == t.rules.len()));
    }

    #[test]
    fn models_the_program_cannot_express_are_refused_by_name() {
        for (m, name) in [
            (Model::Conntrack, "conntrack"),
            (Model::Stateful, "stateful"),
            (Model::Seed000F4, "seed000-f4"),
            (Model::Notrack, "notrack"),
            (Model::StringBm, "string-bm"),
            (Model::Hashlimit, "hashlimit"),
        ] {
            let e = XDP
                .render(&rs(m, 2, Position::Last, Ip::V4), &EngineOptions::default())
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("engine xdp cannot express"), "{e}");
            assert!(e.contains(&format!("model {name}")), "{e}");
        }
    }

    #[test]
    fn bad_table_lines_are_named() {
        let e = Table::parse("rule 0 filter-forward src 1.2.3.4 drop next 1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "BPF table line \"rule 0 filter-forward src 1.2.3.4 drop next 1\": prefix"
        );
        assert!(matches!(
            Table::parse("blah"),
            Err(BpfTableError::Line {
                why: "unknown line",
                ..
            })
        ));
    }
}
