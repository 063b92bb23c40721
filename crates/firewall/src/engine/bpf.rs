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

use super::bpf_table::{Attach, Table, TableRule, MAX_BPF_RULES};
use super::{bpf_load, planned, Backend};
use crate::model::{Action, Engine, EngineOptions, Hook, RuleSet};
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
        };
        let set_names = plan.sets.into_iter().map(|s| s.name).collect();
        Ok((table, out, set_names))
    }
}

impl Backend for BpfEngine {
    fn render(&self, rs: &RuleSet, _opts: &EngineOptions) -> Result<Rendered, RenderError> {
        let (table, mut out, set_names) = self.table(rs)?;
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
        let text = r
            .install
            .iter()
            .find(|b| b.tool == Tool::Bpf)
            .map(|b| b.text.as_str())
            .unwrap_or("");
        let table = Table::parse(text).map_err(ToolError::Io)?;
        bpf_load::load(self.attach, &table)
    }

    fn remove(&self, _batches: &[Batch]) -> Option<ToolError> {
        // Dropping the program closes its links: nothing is pinned, so nothing stays.
        bpf_load::unload();
        None
    }

    fn count(&self, _r: &Rendered) -> Result<(usize, usize), ToolError> {
        bpf_load::counts().map_err(ToolError::Io)
    }

    fn counters(&self, r: &Rendered) -> Result<Vec<(Hook, Vec<u64>)>, ToolError> {
        let all = bpf_load::counters().map_err(ToolError::Io)?;
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
    use super::*;
    use crate::model::{Ip, Prefix, L4};
    use crate::models::{generate, Addressing, Chain, Model, ModelSpec, Position};

    fn rs(model: Model, count: u32, position: Position, ip: Ip) -> RuleSet {
        let p = |s: &str, len| Prefix {
            addr: s.parse().unwrap(),
            len,
        };
        let a = match ip {
            Ip::V4 => Addressing {
                clients: vec!["198.18.1.1".parse().unwrap()],
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
        };
        let spec = ModelSpec {
            model,
            count,
            position,
            chain: Chain::Forward,
            l4: L4::Udp,
            ip,
            one_way: false,
            dport: None,
        };
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
        assert!(e.contains("prefix"), "{e}");
        assert!(Table::parse("blah").unwrap_err().contains("unknown line"));
    }
}
