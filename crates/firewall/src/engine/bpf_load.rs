//! The BPF loader of the `bpf` engines: loads the embedded program with aya, fills
//! its maps from a [`Table`], attaches it to the gateway's interfaces and holds it
//! until removal.
//!
//! Owns: the one process-wide handle of the loaded program (per network namespace),
//! and the C structs' Rust twins (keep them in step with `bpf/fwbench.bpf.c`).
//! Must not: pin anything. Programs and links live as long as this process holds
//! their file descriptors, so a killed agent leaves nothing attached.

use super::bpf_table::{
    Attach, Elem, MapWrite, Table, TableRule, F_DPORT, F_DST, F_L4, F_SET, F_SRC,
};
use crate::model::{Prefix, L4};
use crate::tool::{self, ToolError};
use aya::maps::{Array, HashMap as BpfHashMap, MapData, PerCpuArray};
use aya::programs::{tc::TcAttachType, SchedClassifier, Xdp, XdpMode};
use aya::{Ebpf, EbpfLoader};
use std::net::IpAddr;
use std::sync::Mutex;

/// Why the BPF program could not be loaded, written or read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BpfError {
    /// An aya call failed: what it was for, and aya's message.
    #[error("BPF {what}: {why}")]
    Aya { what: String, why: String },
    /// The object lacks a map or a program (a build out of step with the C source).
    #[error("no {0}")]
    Missing(&'static str),
    /// `ip route get` failed.
    #[error("finding the interface towards {addr}: {why}")]
    Route { addr: IpAddr, why: String },
    /// What this namespace holds does not allow it (nothing loaded, already
    /// loaded, no room, no interface).
    #[error("{0}")]
    Refused(String),
}

impl From<BpfError> for ToolError {
    fn from(e: BpfError) -> Self {
        ToolError::Io(e.to_string())
    }
}

/// The program as built by build.rs (empty when clang was missing).
static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/fwbench.bpf.o"));

/// The message when the program was not built.
pub const UNAVAILABLE: &str =
    "unavailable: BPF programs were not built (install clang and rebuild)";

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Rule {
    flags: u32,
    next: u32,
    set_id: u32,
    l4: u8,
    drop: u8,
    dport: u16,
    src: [u32; 4],
    src_mask: [u32; 4],
    dst: [u32; 4],
    dst_mask: [u32; 4],
}
// SAFETY: plain #[repr(C)] data without padding holes the kernel could not accept.
unsafe impl aya::Pod for Rule {}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct SetKey {
    set_id: u32,
    l4: u8,
    pad: u8,
    port: u16,
    addr: [u32; 4],
}
// SAFETY: plain #[repr(C)] data; `pad` is always zero.
unsafe impl aya::Pod for SetKey {}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Config {
    /// End of the walk (a slot index).
    n_rules: u32,
    v6: u32,
    /// First slot walked (the slots before it are spare).
    start: u32,
}
// SAFETY: plain #[repr(C)] data.
unsafe impl aya::Pod for Config {}

struct Loaded {
    /// The network namespace (inode of /proc/self/ns/net) it is attached in.
    netns: u64,
    /// Owns the programs, their links and the maps; dropping it detaches everything.
    ebpf: Ebpf,
    /// Installed rules (in slots `room..room + rules`).
    rules: usize,
    /// Spare slots before the installed rules.
    room: u32,
    /// First slot walked: `room` less the rules events inserted.
    start: u32,
    /// The rules events inserted, in walk order (slots `start..room`).
    head: Vec<TableRule>,
    v6: bool,
    /// Interfaces it is attached to (for messages).
    _ifaces: Vec<String>,
}

static LOADED: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());

fn netns() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/net")
        .map(|m| m.ino())
        .unwrap_or(0)
}

/// Is the program built into this binary?
pub fn available() -> bool {
    !OBJECT.is_empty()
}

fn proto(l: L4) -> u8 {
    match l {
        L4::Tcp => 6,
        L4::Udp => 17,
        L4::Sctp => 132,
        L4::Icmpv6 => 58,
    }
}

/// Address words as the program reads them from the packet (network byte order).
fn words(a: IpAddr) -> [u32; 4] {
    let mut w = [0u32; 4];
    match a {
        IpAddr::V4(v4) => w[0] = u32::from_ne_bytes(v4.octets()),
        IpAddr::V6(v6) => {
            for (i, c) in v6.octets().chunks(4).enumerate() {
                w[i] = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
    }
    w
}

/// (masked address, mask) words of a prefix.
fn prefix_words(p: Prefix) -> ([u32; 4], [u32; 4]) {
    let bits = if p.addr.is_ipv4() { 32 } else { 128 };
    let len = u32::from(p.len).min(bits);
    let mut mask_bytes = [0u8; 16];
    for (i, b) in mask_bytes.iter_mut().enumerate().take((bits / 8) as usize) {
        let have = len.saturating_sub(i as u32 * 8).min(8);
        *b = if have == 0 { 0 } else { 0xffu8 << (8 - have) };
    }
    let mut mask = [0u32; 4];
    for (i, c) in mask_bytes.chunks(4).enumerate() {
        mask[i] = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
    }
    let mut a = words(p.addr);
    for i in 0..4 {
        a[i] &= mask[i];
    }
    (a, mask)
}

/// The interface `ip route get ADDR` names, unless it is `lo`.
pub(super) fn route_dev(a: IpAddr) -> Result<Option<String>, BpfError> {
    let out = tool::run(&["ip", "-o", "route", "get", &a.to_string()], None).map_err(|e| {
        BpfError::Route {
            addr: a,
            why: e.to_string(),
        }
    })?;
    let mut w = out.split_whitespace();
    while let Some(x) = w.next() {
        if x == "dev" {
            return Ok(w.next().filter(|d| *d != "lo").map(str::to_owned));
        }
    }
    Ok(None)
}

fn err(what: &str, e: impl std::fmt::Display) -> BpfError {
    BpfError::Aya {
        what: what.to_owned(),
        why: e.to_string(),
    }
}

/// A table row as the program reads it; `next` moved by the `room` spare slots.
fn record(r: &TableRule, room: u32) -> Rule {
    let mut rec = Rule {
        next: r.next + room,
        drop: u8::from(r.drop),
        ..Rule::default()
    };
    if let Some(p) = r.src {
        rec.flags |= F_SRC;
        (rec.src, rec.src_mask) = prefix_words(p);
    }
    if let Some(p) = r.dst {
        rec.flags |= F_DST;
        (rec.dst, rec.dst_mask) = prefix_words(p);
    }
    if let Some(l) = r.l4 {
        rec.flags |= F_L4;
        rec.l4 = proto(l);
    }
    if let Some(p) = r.dport {
        rec.flags |= F_DPORT;
        rec.dport = p;
    }
    if let Some(s) = r.set {
        rec.flags |= F_SET;
        rec.set_id = s;
    }
    rec
}

fn set_key(&(s, l4, a, p): &Elem) -> SetKey {
    SetKey {
        set_id: s,
        l4: proto(l4),
        pad: 0,
        port: p,
        addr: words(a),
    }
}

fn write_rules(ebpf: &mut Ebpf, at: u32, rules: &[TableRule], room: u32) -> Result<(), BpfError> {
    let mut map: Array<&mut MapData, Rule> = Array::try_from(
        ebpf.map_mut("RULES")
            .ok_or(BpfError::Missing("RULES map"))?,
    )
    .map_err(|e| err("map RULES", e))?;
    for (i, r) in rules.iter().enumerate() {
        map.set(at + i as u32, record(r, room), 0)
            .map_err(|e| err("rule table", e))?;
    }
    Ok(())
}

fn write_config(ebpf: &mut Ebpf, c: Config) -> Result<(), BpfError> {
    let mut cfg: Array<&mut MapData, Config> = Array::try_from(
        ebpf.map_mut("CONFIG")
            .ok_or(BpfError::Missing("CONFIG map"))?,
    )
    .map_err(|e| err("map CONFIG", e))?;
    cfg.set(0, c, 0).map_err(|e| err("config", e))
}

/// Load, fill and attach the program for `table` in this network namespace.
pub fn load(attach: Attach, table: &Table) -> Result<(), ToolError> {
    if !available() {
        return Err(ToolError::Unavailable(UNAVAILABLE.into()));
    }
    load_available(attach, table).map_err(ToolError::from)
}

fn load_available(attach: Attach, table: &Table) -> Result<(), BpfError> {
    let ns = netns();
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if loaded.iter().any(|l| l.netns == ns) {
        return Err(BpfError::Refused(
            "a BPF rule set is already loaded in this network namespace".into(),
        ));
    }
    let mut ifaces: Vec<String> = vec![];
    for a in &table.ingress {
        if let Some(d) = route_dev(*a)? {
            if !ifaces.contains(&d) {
                ifaces.push(d);
            }
        }
    }
    if ifaces.is_empty() {
        return Err(BpfError::Refused(format!(
            "no interface of this namespace routes to {:?}: nothing to attach the BPF program to",
            table.ingress
        )));
    }
    let n = table.rules.len();
    let room = table.room;
    let cap = |k: usize| (k.max(1)) as u32;
    let mut ebpf = EbpfLoader::new()
        .map_max_entries("RULES", cap(n + room as usize))
        .map_max_entries("COUNTERS", cap(n + room as usize))
        .map_max_entries(
            "SET",
            cap(table.elements.len() + table.element_room as usize),
        )
        .load(OBJECT)
        .map_err(|e| err("load", e))?;
    write_rules(&mut ebpf, room, &table.rules, room)?;
    {
        let mut set: BpfHashMap<&mut MapData, SetKey, u8> =
            BpfHashMap::try_from(ebpf.map_mut("SET").ok_or(BpfError::Missing("SET map"))?)
                .map_err(|e| err("map SET", e))?;
        for e in &table.elements {
            set.insert(set_key(e), 1, 0)
                .map_err(|e| err("set element", e))?;
        }
    }
    let v6 = table.ip == crate::model::Ip::V6;
    write_config(
        &mut ebpf,
        Config {
            n_rules: room + n as u32,
            v6: u32::from(v6),
            start: room,
        },
    )?;
    match attach {
        Attach::XdpNative | Attach::XdpGeneric => {
            let mode = if attach == Attach::XdpNative {
                XdpMode::Driver
            } else {
                XdpMode::Skb
            };
            let prog: &mut Xdp = ebpf
                .program_mut("fwbench_xdp")
                .ok_or(BpfError::Missing("program fwbench_xdp"))?
                .try_into()
                .map_err(|e| err("program", e))?;
            prog.load().map_err(|e| err("verifier", e))?;
            for i in &ifaces {
                prog.attach(i, mode)
                    .map_err(|e| err(&format!("attach to {i}"), e))?;
            }
        }
        Attach::TcIngress => {
            let prog: &mut SchedClassifier = ebpf
                .program_mut("fwbench_tc")
                .ok_or(BpfError::Missing("program fwbench_tc"))?
                .try_into()
                .map_err(|e| err("program", e))?;
            prog.load().map_err(|e| err("verifier", e))?;
            for i in &ifaces {
                prog.attach(i, TcAttachType::Ingress)
                    .map_err(|e| err(&format!("attach to {i} (tc ingress)"), e))?;
            }
        }
    }
    loaded.push(Loaded {
        netns: ns,
        ebpf,
        rules: n,
        room,
        start: room,
        head: vec![],
        v6,
        _ifaces: ifaces,
    });
    Ok(())
}

/// A gateway event's write to this namespace's loaded program; the map operations it
/// took. Rules go into the spare slots before the first rule walked and then the
/// first slot moves (one word: the program walks the old head or the new, never a
/// mix); deleting the head is moving it back. Deleting rules that are not the head
/// rewrites the spare slots before the move (not atomic: said in docs/events.md).
pub fn write(w: &MapWrite) -> Result<u32, ToolError> {
    if !available() {
        return Err(ToolError::Unavailable(UNAVAILABLE.into()));
    }
    write_available(w).map_err(ToolError::from)
}

fn write_available(w: &MapWrite) -> Result<u32, BpfError> {
    let ns = netns();
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let l = loaded.iter_mut().find(|l| l.netns == ns).ok_or_else(|| {
        BpfError::Refused("no BPF rule set is loaded in this network namespace".into())
    })?;
    let config = |l: &Loaded, start: u32| Config {
        n_rules: l.room + l.rules as u32,
        v6: u32::from(l.v6),
        start,
    };
    match w {
        MapWrite::Insert(rules) => {
            let k = rules.len() as u32;
            if k > l.start {
                return Err(BpfError::Refused(format!(
                    "no room for {k} more rules before the first: {} spare slots left                      (the room is sized from the trial's events)",
                    l.start
                )));
            }
            let start = l.start - k;
            write_rules(&mut l.ebpf, start, rules, l.room)?;
            let c = config(l, start);
            write_config(&mut l.ebpf, c)?;
            l.start = start;
            l.head.splice(0..0, rules.iter().cloned());
            Ok(k + 1)
        }
        MapWrite::Delete(rules) => {
            let k = rules.len();
            if l.head.get(..k) == Some(rules.as_slice()) {
                let start = l.start + k as u32;
                let c = config(l, start);
                write_config(&mut l.ebpf, c)?;
                l.start = start;
                l.head.drain(..k);
                return Ok(1);
            }
            let mut rest = l.head.clone();
            for r in rules {
                let at = rest.iter().position(|x| x == r).ok_or_else(|| {
                    BpfError::Refused("deleting a rule that no event inserted".into())
                })?;
                rest.remove(at);
            }
            let start = l.room - rest.len() as u32;
            write_rules(&mut l.ebpf, start, &rest, l.room)?;
            let c = config(l, start);
            write_config(&mut l.ebpf, c)?;
            l.start = start;
            let ops = rest.len() as u32 + 1;
            l.head = rest;
            Ok(ops)
        }
        MapWrite::AddElements(elements) | MapWrite::RemoveElements(elements) => {
            let add = matches!(w, MapWrite::AddElements(_));
            let mut set: BpfHashMap<&mut MapData, SetKey, u8> =
                BpfHashMap::try_from(l.ebpf.map_mut("SET").ok_or(BpfError::Missing("SET map"))?)
                    .map_err(|e| err("map SET", e))?;
            for e in elements {
                let k = set_key(e);
                let res = if add {
                    set.insert(k, 1, 0)
                } else {
                    set.remove(&k)
                };
                res.map_err(|x| {
                    err(
                        if add {
                            "set element add"
                        } else {
                            "set element removal"
                        },
                        x,
                    )
                })?;
            }
            Ok(elements.len() as u32)
        }
    }
}

/// Detach and unload this namespace's program (closing its links); whether one was
/// loaded.
pub fn unload() -> bool {
    let ns = netns();
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let before = loaded.len();
    loaded.retain(|l| l.netns != ns);
    before != loaded.len()
}

/// (rules, set elements) of this namespace's loaded program; (0, 0) when none is.
pub fn counts() -> Result<(usize, usize), BpfError> {
    let ns = netns();
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let Some(l) = loaded.iter().find(|l| l.netns == ns) else {
        return Ok((0, 0));
    };
    let set: BpfHashMap<&MapData, SetKey, u8> =
        BpfHashMap::try_from(l.ebpf.map("SET").ok_or(BpfError::Missing("SET map"))?)
            .map_err(|e| err("map SET", e))?;
    let elements = set.keys().filter(|k| k.is_ok()).count();
    Ok((l.rules + l.head.len(), elements))
}

/// Packet counters of every rule (summed over CPUs), in table order.
pub fn counters() -> Result<Vec<u64>, BpfError> {
    let ns = netns();
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let Some(l) = loaded.iter().find(|l| l.netns == ns) else {
        return Ok(vec![]);
    };
    let c: PerCpuArray<&MapData, u64> = PerCpuArray::try_from(
        l.ebpf
            .map("COUNTERS")
            .ok_or(BpfError::Missing("COUNTERS map"))?,
    )
    .map_err(|e| err("map COUNTERS", e))?;
    (l.room..l.room + l.rules as u32)
        .map(|i| {
            c.get(&i, 0)
                .map(|v| v.iter().sum())
                .map_err(|e| err("counter", e))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_become_masked_network_order_words() {
        let p = |s: &str, len| Prefix {
            addr: s.parse().unwrap(),
            len,
        };
        let (a, m) = prefix_words(p("198.18.7.9", 16));
        assert_eq!(a[0].to_ne_bytes(), [198, 18, 0, 0]);
        assert_eq!(m[0].to_ne_bytes(), [255, 255, 0, 0]);
        assert_eq!(&a[1..], &[0, 0, 0]);
        let (a, m) = prefix_words(p("2001:2:0:1::5", 68));
        assert_eq!(m[2].to_ne_bytes(), [0xf0, 0, 0, 0]);
        assert_eq!(m[1], u32::MAX);
        assert_eq!(a[2], 0);
        assert_eq!(a[3], 0);
        assert_eq!(a[0].to_ne_bytes(), [0x20, 0x01, 0, 2]);
        let (_, m) = prefix_words(p("192.0.2.1", 32));
        assert_eq!(m[0], u32::MAX);
    }
}
