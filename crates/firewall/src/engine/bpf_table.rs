//! The BPF program's tables as fwbench writes them: the rule table, the set
//! elements, where the program attaches, and the text form of all of it (what
//! `fwbench rules render` shows and what the loader reads back).
//!
//! Owns: [`Table`], [`TableRule`], [`Attach`], the match flags shared with the C
//! program, and the table's text format ([`Table::to_text`], [`Table::parse`]).
//! Must not: render rule sets (that is the `bpf` module) or talk to the kernel (that is
//! `bpf_load`); both build on this module.

use crate::model::{Hook, Ip, Prefix, L4};
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
    /// How the attachment is described in settings and rendered text.
    pub(super) fn describe(self) -> &'static str {
        match self {
            Attach::XdpNative => "xdp native (driver mode), bpf_link",
            Attach::XdpGeneric => "xdp generic (skb mode), bpf_link",
            Attach::TcIngress => "tc ingress (tcx link)",
        }
    }
}

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
        // Refused before a table is written (the program does no NAT).
        Hook::NatPrerouting => "nat-prerouting",
        Hook::NatPostrouting => "nat-postrouting",
    }
}

fn l4_of(s: &str) -> Option<L4> {
    [L4::Tcp, L4::Udp, L4::Sctp, L4::Icmpv6]
        .into_iter()
        .find(|l| l.name() == s)
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
