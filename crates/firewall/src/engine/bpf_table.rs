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

/// Why a BPF table's text, or a map write, cannot be read back (the loader reads
/// what `rules render` wrote; a user may have edited it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BpfTableError {
    /// A line of the table.
    #[error("BPF table line {line:?}: {why}")]
    Line { line: String, why: &'static str },
    /// The first line of a map write.
    #[error("BPF map write {first:?}: {why}")]
    Write { first: String, why: String },
}

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
    pub elements: Vec<Elem>,
    /// Spare rule slots before the first rule (gateway events insert rules there).
    pub room: u32,
    /// Spare room in the set map (gateway events add elements).
    pub element_room: u32,
}

/// A set element: (set id, l4, source address, destination port).
pub(super) type Elem = (u32, L4, IpAddr, u16);

/// A gateway event's write to the loaded program's tables (`--event-method map`): as
/// text, the verb's line and then rule or element lines as in [`Table::to_text`] (rule
/// numbers and `next` relative to the first installed rule, as there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum MapWrite {
    /// Make these the first rules walked, in this order.
    Insert(Vec<TableRule>),
    /// Take these rules, inserted before, out again.
    Delete(Vec<TableRule>),
    AddElements(Vec<Elem>),
    RemoveElements(Vec<Elem>),
}

impl MapWrite {
    const VERBS: [&'static str; 4] = ["insert", "delete", "add-elements", "remove-elements"];

    pub fn to_text(&self) -> String {
        let (verb, rules, elements): (&str, &[TableRule], &[Elem]) = match self {
            MapWrite::Insert(r) => (Self::VERBS[0], r, &[]),
            MapWrite::Delete(r) => (Self::VERBS[1], r, &[]),
            MapWrite::AddElements(e) => (Self::VERBS[2], &[], e),
            MapWrite::RemoveElements(e) => (Self::VERBS[3], &[], e),
        };
        let mut t = format!("write {verb}\n");
        for (i, r) in rules.iter().enumerate() {
            t += &rule_line(i, r);
        }
        for e in elements {
            t += &element_line(e);
        }
        t
    }

    pub fn parse(text: &str) -> Result<MapWrite, BpfTableError> {
        let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
        let write = |why: String| BpfTableError::Write {
            first: first.to_owned(),
            why,
        };
        let verb = first
            .strip_prefix("write ")
            .ok_or_else(|| write("expected `write VERB`".into()))?;
        let t = Table::parse(rest)?;
        Ok(match verb {
            "insert" => MapWrite::Insert(t.rules),
            "delete" => MapWrite::Delete(t.rules),
            "add-elements" => MapWrite::AddElements(t.elements),
            "remove-elements" => MapWrite::RemoveElements(t.elements),
            _ => {
                return Err(write(format!(
                    "unknown verb (expected one of: {})",
                    Self::VERBS.join(", ")
                )))
            }
        })
    }
}

/// One rule as a line of the table's text.
fn rule_line(i: usize, r: &TableRule) -> String {
    let mut t = format!("rule {i} {}", hook_name(r.hook));
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
    t
}

fn element_line((s, l4, a, p): &Elem) -> String {
    format!("element {s} {} {a} {p}\n", l4.name())
}

/// The id of set `name` in a table's text (its `# set ID: NAME` comment line).
pub(super) fn set_id(text: &str, name: &str) -> Option<u32> {
    text.lines().find_map(|l| {
        let (id, rest) = l.strip_prefix("# set ")?.split_once(": ")?;
        rest.strip_prefix(name)?
            .starts_with(' ')
            .then(|| id.parse().ok())?
    })
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
        if self.room > 0 || self.element_room > 0 {
            t += &format!(
                "# room: {} spare rule slots before the first rule, {} spare set elements (gateway events)\nroom {} {}\n",
                self.room, self.element_room, self.room, self.element_room
            );
        }
        for (i, r) in self.rules.iter().enumerate() {
            t += &rule_line(i, r);
        }
        for (i, name) in set_names.iter().enumerate() {
            t += &format!("# set {i}: {name} (hash map of (set, l4, source address, port))\n");
        }
        for e in &self.elements {
            t += &element_line(e);
        }
        t
    }

    /// Read [`Table::to_text`] back.
    pub fn parse(text: &str) -> Result<Table, BpfTableError> {
        let mut t = Table {
            ip: Ip::V4,
            ingress: vec![],
            rules: vec![],
            elements: vec![],
            room: 0,
            element_room: 0,
        };
        let bad = |l: &str, why: &'static str| BpfTableError::Line {
            line: l.to_owned(),
            why,
        };
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
                        let prefix = || -> Result<Prefix, BpfTableError> {
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
                "room" if w.len() == 3 => {
                    t.room = w[1].parse().map_err(|_| bad(line, "room"))?;
                    t.element_room = w[2].parse().map_err(|_| bad(line, "room"))?;
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
