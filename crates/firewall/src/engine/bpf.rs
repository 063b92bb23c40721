//! Engines `xdp`, `xdp-map`, `xdp-generic` and `tc-bpf`: the rule set as the tables of
//! one BPF program (`bpf/fwbench.bpf.c`), loaded and attached by fwbench itself.
//!
//! Owns: how a rule set becomes the program's rule table and set map (the rendered
//! batch is that table, as text: `fwbench rules render` shows what runs), which rule
//! sets the program cannot express, and the text format the loader reads back.
//! Must not: talk to the kernel (that is [`super::bpf_load`]).
//!
//! The program walks the rules in order with `bpf_loop` (one iteration per rule, at
//! most [`MAX_BPF_RULES`]); the first rule that matches counts the packet in a per-CPU
//! counter; drop ends the walk, accept continues at the first rule of the next hook
//! (netfilter's order: raw prerouting, then the filter chain). `xdp-map` collapses
//! runs of filler rules into one hash-map lookup (the `nft-set` of XDP).

use super::{bpf_load, planned, Backend};
use crate::model::{Action, Engine, EngineOptions, Hook, Ip, Prefix, RuleSet, L4};
use crate::rendered::{RenderError, Rendered};
use crate::tool::{Batch, Tool, ToolError};
use std::net::IpAddr;

/// Most rules one program walks: the loop bound (`bpf_loop` allows 8 388 608
/// iterations; the rule models stop at 1 000 000, and so does this).
pub const MAX_BPF_RULES: usize = 1_000_000;

/// Where and how the program is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attach {
    /// XDP in the driver (native mode).
    XdpNative,
    /// XDP in the generic (SKB) path.
    XdpGeneric,
    /// tc ingress, as a tcx link.
    TcIngress,
}

impl Attach {
    fn describe(self) -> &'static str {
        match self {
            Attach::XdpNative => "xdp native (driver mode), bpf_link",
            Attach::XdpGeneric => "xdp generic (skb mode), bpf_link",
            Attach::TcIngress => "tc ingress (tcx link)",
        }
    }
}

pub struct BpfEngine {
    engine: Engine,
    name: &'static str,
    attach: Attach,
    collapse: bool,
}

pub static XDP: BpfEngine = BpfEngine {
    engine: Engine::Xdp,
    name: "xdp",
    attach: Attach::XdpNative,
    collapse: false,
};
pub static XDP_MAP: BpfEngine = BpfEngine {
    engine: Engine::XdpMap,
    name: "xdp-map",
    attach: Attach::XdpNative,
    collapse: true,
};
pub static XDP_GENERIC: BpfEngine = BpfEngine {
    engine: Engine::XdpGeneric,
    name: "xdp-generic",
    attach: Attach::XdpGeneric,
    collapse: false,
};
pub static TC_BPF: BpfEngine = BpfEngine {
    engine: Engine::TcBpf,
    name: "tc-bpf",
    attach: Attach::TcIngress,
    collapse: false,
};

/// Rule match flags (as in the C program).
pub(super) const F_SRC: u32 = 1;
pub(super) const F_DST: u32 = 2;
pub(super) const F_L4: u32 = 4;
pub(super) const F_DPORT: u32 = 8;
pub(super) const F_SET: u32 = 16;

/// One rule of the program's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TableRule {
    pub hook: Hook,
    pub src: Option<Prefix>,
    pub dst: Option<Prefix>,
    pub l4: Option<L4>,
    pub dport: Option<u16>,
    pub set: Option<u32>,
    pub drop: bool,
    /// Where an accept continues.
    pub next: u32,
}

/// The program's tables: what the loader writes into the maps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Table {
    pub ip: Ip,
    pub ingress: Vec<IpAddr>,
    pub rules: Vec<TableRule>,
    /// (set id, l4, source address, destination port).
    pub elements: Vec<(u32, L4, IpAddr, u16)>,
}

fn hook_name(h: Hook) -> &'static str {
    match h {
        Hook::RawPrerouting => "raw-prerouting",
        Hook::ManglePrerouting => "mangle-prerouting",
        Hook::FilterForward => "filter-forward",
        Hook::FilterInput => "filter-input",
    }
}

fn l4_of(s: &str) -> Option<L4> {
    [L4::Tcp, L4::Udp, L4::Sctp, L4::Icmpv6]
        .into_iter()
        .find(|l| l.name() == s)
}

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
                self.name
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

impl Table {
    /// The table as text: comments for people, one line per rule and set element.
    pub fn to_text(&self, attach: Attach, set_names: &[String]) -> String {
        let mut t = format!(
            "# BPF program fwbench (bpf/fwbench.bpf.c), {}, on the gateway's interfaces that route to the ingress addresses\n\
             # walk: bpf_loop over {} rules (bound {MAX_BPF_RULES}); the first match counts the packet; \
             drop ends, accept continues at `next`; other frames pass\n",
            attach.describe(),
            self.rules.len()
        );
        t += &format!(
            "ip {}\ningress {}\n",
            if self.ip == Ip::V4 { "v4" } else { "v6" },
            self.ingress
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
        for (i, r) in self.rules.iter().enumerate() {
            t += &format!("rule {i} {}", hook_name(r.hook));
            if let Some(p) = r.src {
                t += &format!(" src {p}");
            }
            if let Some(p) = r.dst {
                t += &format!(" dst {p}");
            }
            if let Some(l) = r.l4 {
                t += &format!(" l4 {}", l.name());
            }
            if let Some(p) = r.dport {
                t += &format!(" dport {p}");
            }
            if let Some(s) = r.set {
                t += &format!(" set {s}");
            }
            t += &format!(
                " {} next {}\n",
                if r.drop { "drop" } else { "accept" },
                r.next
            );
        }
        for (i, name) in set_names.iter().enumerate() {
            t += &format!("# set {i}: {name} (hash map of (set, l4, source address, port))\n");
        }
        for (s, l4, a, p) in &self.elements {
            t += &format!("element {s} {} {a} {p}\n", l4.name());
        }
        t
    }

    /// Read [`Table::to_text`] back.
    pub fn parse(text: &str) -> Result<Table, String> {
        let mut t = Table {
            ip: Ip::V4,
            ingress: vec![],
            rules: vec![],
            elements: vec![],
        };
        let bad = |l: &str, why: &str| format!("BPF table line {l:?}: {why}");
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            let w: Vec<&str> = line.split_whitespace().collect();
            match w[0] {
                "ip" => {
                    t.ip = if w.get(1) == Some(&"v6") {
                        Ip::V6
                    } else {
                        Ip::V4
                    }
                }
                "ingress" => {
                    for a in &w[1..] {
                        t.ingress.push(a.parse().map_err(|_| bad(line, "address"))?);
                    }
                }
                "rule" => {
                    let hook = Hook::ALL
                        .into_iter()
                        .find(|h| Some(&hook_name(*h)) == w.get(2))
                        .ok_or_else(|| bad(line, "hook"))?;
                    let mut r = TableRule {
                        hook,
                        src: None,
                        dst: None,
                        l4: None,
                        dport: None,
                        set: None,
                        drop: false,
                        next: 0,
                    };
                    let mut k = 3;
                    while k < w.len() {
                        let v = *w.get(k + 1).unwrap_or(&"");
                        let prefix = || -> Result<Prefix, String> {
                            let (a, l) = v.split_once('/').ok_or_else(|| bad(line, "prefix"))?;
                            Ok(Prefix {
                                addr: a.parse().map_err(|_| bad(line, "address"))?,
                                len: l.parse().map_err(|_| bad(line, "prefix length"))?,
                            })
                        };
                        match w[k] {
                            "src" => r.src = Some(prefix()?),
                            "dst" => r.dst = Some(prefix()?),
                            "l4" => r.l4 = Some(l4_of(v).ok_or_else(|| bad(line, "l4"))?),
                            "dport" => r.dport = Some(v.parse().map_err(|_| bad(line, "port"))?),
                            "set" => r.set = Some(v.parse().map_err(|_| bad(line, "set"))?),
                            "next" => r.next = v.parse().map_err(|_| bad(line, "next"))?,
                            "drop" | "accept" => {
                                r.drop = w[k] == "drop";
                                k += 1;
                                continue;
                            }
                            _ => return Err(bad(line, "unknown word")),
                        }
                        k += 2;
                    }
                    t.rules.push(r);
                }
                "element" if w.len() == 5 => t.elements.push((
                    w[1].parse().map_err(|_| bad(line, "set"))?,
                    l4_of(w[2]).ok_or_else(|| bad(line, "l4"))?,
                    w[3].parse().map_err(|_| bad(line, "address"))?,
                    w[4].parse().map_err(|_| bad(line, "port"))?,
                )),
                _ => return Err(bad(line, "unknown line")),
            }
        }
        Ok(t)
    }
}

impl Backend for BpfEngine {
    fn name(&self) -> &'static str {
        self.name
    }

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
                    assert_eq!(back, t, "{} {m} {ip:?}", e.name);
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
