//! The backend-neutral rule model: one description of a policy, rendered to every
//! engine, so engines are compared on the *same* policy.
//!
//! Owns: the data types of a rule set (including an imported file's rewritten text),
//! the `Engine` key with its stable name (its serde name), aliases, kind and estimated
//! cost per rule, and the effective engine a trial records (engine + nft family).
//! Must not: know how any engine writes or installs rules (that is `firewall::engine`),
//! run programs, or import another module of this crate.

use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// Declares [`Engine`], [`Engine::ALL`] and each engine's name, aliases, kind and
/// estimated cost per rule from one list, so a new variant is in `ALL` and named by
/// construction (its serde name is its name); the compiler then names the one place
/// left to decide: the registry `firewall::engine::backend()` (an exhaustive match).
///
/// A line: `Variant = "name" ["alias", …] Kind, seconds per rule;`.
macro_rules! engines {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal [$($alias:literal),*] $kind:ident, $per_rule_s:literal;)+) => {
        /// A filtering engine.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum Engine {
            $($(#[doc = $doc])* #[serde(rename = $name)] $variant,)+
        }

        impl Engine {
            /// Every engine, in declaration order.
            pub const ALL: &'static [Engine] = &[$(Engine::$variant,)+];

            /// The engine's stable name (CLI, scenario files, trial keys, its serde name).
            pub fn name(self) -> &'static str {
                match self {
                    $(Engine::$variant => $name,)+
                }
            }

            /// Other names the CLI and scenario files accept for it.
            pub fn aliases(self) -> &'static [&'static str] {
                match self {
                    $(Engine::$variant => &[$($alias),*],)+
                }
            }

            /// What kind of kernel machinery the engine drives.
            pub fn kind(self) -> EngineKind {
                match self {
                    $(Engine::$variant => EngineKind::$kind,)+
                }
            }

            /// A trial's wall time per rule of its ruleset beyond its traffic (render,
            /// install, count, remove and count again), s: what a run's estimate counts.
            pub fn per_rule_s(self) -> f64 {
                match self {
                    $(Engine::$variant => $per_rule_s,)+
                }
            }
        }
    };
}

// The cost per rule was measured here on 2026-11-27 from seed 002's trials of 1–25 000
// rules (5 engines) and seed 001's ipset of 250 000 entries: 25 000 nft rules add ~4 s
// to a trial, as many legacy ones ~1 s; engines whose filler rules become set elements
// or map entries pay little per rule. The estimate once took 2 µs for every engine and
// said 875 s for a seed 002 run of 1 127 s.
engines! {
    /// Nothing installed (the baseline), whatever the model.
    None = "none" [] None, 0.0;
    /// nftables, one native rule per model rule.
    Nft = "nft" ["nftables"] Nft, 1.7e-4;
    /// nftables; filler rules collapse into one set and one rule matching it.
    NftSet = "nft-set" [] Nft, 8e-6;
    /// iptables rules through the legacy xtables kernel interface.
    IptablesLegacy = "iptables-legacy" [] Xtables, 4e-5;
    /// iptables rules through nf_tables (iptables-nft).
    IptablesNft = "iptables-nft" [] Xtables, 9e-5;
    /// iptables-legacy rules; filler rules collapse into one ipset and one rule.
    IpsetLegacy = "ipset-legacy" ["ipset"] Xtables, 8e-6;
    /// iptables-nft rules; filler rules collapse into one ipset and one rule.
    IpsetNft = "ipset-nft" [] Xtables, 8e-6;
    /// A BPF program in XDP native mode on the gateway's interfaces, walking the rules.
    Xdp = "xdp" [] Bpf, 2e-5;
    /// [`Engine::Xdp`]; filler rules collapse into one hash map lookup.
    XdpMap = "xdp-map" [] Bpf, 8e-6;
    /// The XDP program in generic (SKB) mode.
    XdpGeneric = "xdp-generic" [] Bpf, 2e-5;
    /// The same program at tc ingress (tcx link), walking the rules.
    TcBpf = "tc-bpf" [] Bpf, 2e-5;
}

impl Engine {
    /// Whether the engine installs into an nftables table whose family is chosen by
    /// [`EngineOptions::nft_family`] (the others refuse a family but the default).
    pub fn takes_nft_family(self) -> bool {
        self.kind() == EngineKind::Nft
    }

    /// Whether the engine installs through the legacy x_tables interface, whose table,
    /// once instantiated in a namespace, stays there after its rules are removed.
    pub fn legacy_xtables(self) -> bool {
        matches!(self, Engine::IptablesLegacy | Engine::IpsetLegacy)
    }
}

/// The names of a choice enum from one table — this crate's `Model`, `Position`,
/// `Chain`, `NftFamily`, the controller's workload, search, sender and sink:
/// `ALL` (every variant, in table order), `NAMES` (their names, in that order),
/// `name()`, `Display` (the name) and `FromStr` (another name is an [`UnknownName`]
/// of `$what`, listing `NAMES`).
///
/// `fwmodel::named!(Type, "what", { Variant => "name", … });`
#[macro_export]
macro_rules! named {
    ($t:ident, $what:literal, { $($v:ident => $name:literal),+ $(,)? }) => {
        impl $t {
            /// Every variant, in the order of `NAMES`.
            pub const ALL: [$t; [$($name),+].len()] = [$($t::$v),+];
            /// Every name, in the order of `ALL`.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The name as typed (flags, scenario files) and as serialized.
            pub fn name(self) -> &'static str {
                match self {
                    $($t::$v => $name),+
                }
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $t {
            type Err = $crate::model::UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok($t::$v),)+
                    _ => Err($crate::model::UnknownName {
                        what: $what,
                        name: s.into(),
                        expected: Self::NAMES.join(", "),
                    }),
                }
            }
        }
    };
}

/// `Display` as the name (`name()`).
macro_rules! display_by_name {
    ($($t:ty),+) => {
        $(impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        })+
    };
}
display_by_name!(Engine, EngineKind);

impl std::str::FromStr for Engine {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Engine::ALL
            .iter()
            .copied()
            .find(|e| e.name() == s || e.aliases().contains(&s))
            .ok_or_else(|| UnknownName {
                what: "engine",
                name: s.into(),
                expected: ENGINES.join(", "),
            })
    }
}

/// What kind of kernel machinery an engine drives: the report groups and compares
/// engines by it (stored with each trial), never by their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// No rules (engine `none`).
    None,
    /// nftables (the nft engines; their table family is a trial parameter).
    Nft,
    /// iptables and ipset through either xtables interface (legacy or nf_tables).
    Xtables,
    /// fwbench's BPF program (XDP or tc).
    Bpf,
}

impl EngineKind {
    /// none, nft, xtables, bpf.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::None => "none",
            EngineKind::Nft => "nft",
            EngineKind::Xtables => "xtables",
            EngineKind::Bpf => "bpf",
        }
    }
}

/// The engine a trial ran with, as the results name it: the engine and, for the engines
/// that take one, the nft table family. Its id is `ENGINE` or `ENGINE/FAMILY`
/// (`nft/inet`, `nft-set/ip`, `iptables-legacy`, `none`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EffectiveEngine {
    pub engine: Engine,
    /// `Some` exactly when the engine takes an nft family.
    pub nft_family: Option<NftFamily>,
}

impl EffectiveEngine {
    /// The effective engine of `engine` asked for with `nft_family` (ignored by the
    /// engines that take none).
    pub fn new(engine: Engine, nft_family: NftFamily) -> EffectiveEngine {
        EffectiveEngine {
            engine,
            nft_family: engine.takes_nft_family().then_some(nft_family),
        }
    }

    pub fn kind(self) -> EngineKind {
        self.engine.kind()
    }

    /// `ENGINE` or `ENGINE/FAMILY`.
    pub fn id(self) -> String {
        self.to_string()
    }
}

impl std::fmt::Display for EffectiveEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.nft_family {
            Some(fam) => write!(f, "{}/{fam}", self.engine),
            None => write!(f, "{}", self.engine),
        }
    }
}

/// Every name `--engine` accepts (the engines' names and their aliases), for messages
/// and docs; a test holds it equal to what the backends say.
pub const ENGINES: &[&str] = &[
    "none",
    "nft",
    "nft-set",
    "iptables-legacy",
    "iptables-nft",
    "ipset",
    "ipset-legacy",
    "ipset-nft",
    "xdp",
    "xdp-map",
    "xdp-generic",
    "tc-bpf",
];

/// The family of the nftables table the nft engines install into. `inet` (IPv4 and
/// IPv6 in one table, as distributions ship) puts an implicit `meta nfproto` check in
/// front of every `ip`/`ip6` match; `ip` means `table ip` for IPv4 rule sets and
/// `table ip6` for IPv6 ones, without that check. A cost, so a trial parameter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NftFamily {
    #[default]
    Inet,
    /// `table ip` (IPv4) or `table ip6` (IPv6).
    Ip,
}

crate::named!(NftFamily, "nft family", { Inet => "inet", Ip => "ip" });

impl NftFamily {
    /// The table family nft names for a rule set of IP version `ip`: inet, ip or ip6.
    pub fn table_family(self, ip: Ip) -> &'static str {
        match (self, ip) {
            (NftFamily::Inet, _) => "inet",
            (NftFamily::Ip, Ip::V4) => "ip",
            (NftFamily::Ip, Ip::V6) => "ip6",
        }
    }

    /// Is this the default (`inet`)? For `skip_serializing_if`.
    pub fn is_default(&self) -> bool {
        *self == NftFamily::Inet
    }
}

/// How an engine is asked to render beyond the rule set itself: choices that change a
/// rule's cost without changing the policy (the default is what fwbench always did).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EngineOptions {
    /// Table family of the nft engines (others refuse anything but the default).
    #[serde(default, skip_serializing_if = "NftFamily::is_default")]
    pub nft_family: NftFamily,
    /// Room for this many more elements in every set fwbench creates (gateway events
    /// that add elements; nft sets and BPF maps have a fixed size).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub set_room: u32,
    /// Room for this many more rules at the head of the first chain (gateway events
    /// that insert rules into a BPF program's fixed-size rule table; other engines'
    /// chains grow as needed and ignore it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rule_room: u32,
    /// Make fwbench's sets so that their elements may expire, each after its own
    /// timeout (gateway events `expire-elements`; nft `flags timeout`, ipset
    /// `timeout 0`): recorded in the settings, as it changes a lookup's cost.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub set_timeouts: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A name that is not one of a list (engine, model, position, chain), with the list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{name}' (expected one of: {expected})")]
pub struct UnknownName {
    /// What kind of name: "engine", "model", …
    pub what: &'static str,
    pub name: String,
    /// The accepted names, comma-separated.
    pub expected: String,
}

/// The kind of a user's ruleset file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImportFormat {
    /// `nft list ruleset` output.
    Nft,
    /// `iptables-save` / `ip6tables-save` output.
    IptablesSave,
}

/// An imported ruleset, already rewritten into fwbench's namespace of names
/// (made by the `import` module).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Imported {
    pub format: ImportFormat,
    /// File it came from (for messages).
    pub source: String,
    /// Rewritten text, ready for `nft -f` or `iptables-restore --noflush`.
    pub text: String,
    pub rules: usize,
    pub elements: usize,
    /// Every rule fwbench installs for it, in chain order (its counters are read back
    /// after a trial). Imports of older builds have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rule_list: Vec<ImportedRule>,
    /// (user's chain, fwbench's chain), in file order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<(String, String)>,
    /// What fwbench changed and why (counters added, policies turned into rules,
    /// tables skipped): shown by `rules render`, recorded as a setting.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The ipsets an `iptables-save` import matches (`--import-ipset`), renamed into
    /// fwbench's own; created before the rules, destroyed after them.
    pub sets: Option<ImportedSets>,
}

/// An ipset file (`ipset save` output) imported with an `iptables-save` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedSets {
    /// File it came from (for messages).
    pub source: String,
    /// Rewritten `ipset restore` input: every set created (`-exist`), flushed and
    /// filled under fwbench's name.
    pub text: String,
    /// (the file's name, fwbench's name) of every set, in file order.
    pub names: Vec<(String, String)>,
}

/// One rule of an imported ruleset as fwbench installs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedRule {
    /// fwbench's name of the chain (where its counter is read).
    pub chain: String,
    /// The user's name of the chain.
    pub user_chain: String,
    /// 1-based position in the chain.
    pub index: usize,
    /// The rule as the user's tool writes it.
    pub text: String,
    /// `accept`, `drop`, `reject`, `jump X`, … or empty (no verdict).
    pub verdict: String,
    /// Added by fwbench: the chain's drop policy, installed as fwbench's own base
    /// chain with a real drop policy that jumps to the user's chain, then counts and
    /// drops (so a RETURN or goto out of the user's chain still meets the policy).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub policy: bool,
    /// What a packet needs to match it (for `--aim`).
    #[serde(default)]
    pub aim: AimFields,
}

impl ImportedRule {
    /// Whether the rule's verdict drops the packet (drop, reject, or a drop policy).
    pub fn drops(&self) -> bool {
        self.policy || matches!(self.verdict.as_str(), "drop" | "reject")
    }

    /// `CHAIN:N` with the user's chain name.
    pub fn place(&self) -> String {
        format!("{}:{}", self.user_chain, self.index)
    }
}

/// The match fields of an imported rule that a test packet can be given. Ranges are
/// inclusive; addresses are prefixes (`198.18.0.0/15`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AimFields {
    pub l4: Option<String>,
    pub src: Option<String>,
    pub dst: Option<String>,
    pub sport: Option<(u16, u16)>,
    pub dport: Option<(u16, u16)>,
    /// Why no packet can be aimed at the rule (a match fwbench cannot produce).
    pub unaimable: Option<String>,
}

/// Where a rule sits: netfilter hook and table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hook {
    RawPrerouting,
    ManglePrerouting,
    /// Destination NAT (nat table, prerouting): sees the first packet of each flow.
    NatPrerouting,
    FilterForward,
    FilterInput,
    /// Source NAT (nat table, postrouting): sees the first packet of each flow.
    NatPostrouting,
}

impl Hook {
    /// Every hook, in the order fwbench's chains are rendered and laid out.
    pub const ALL: [Hook; 6] = [
        Hook::RawPrerouting,
        Hook::ManglePrerouting,
        Hook::NatPrerouting,
        Hook::FilterForward,
        Hook::FilterInput,
        Hook::NatPostrouting,
    ];

    /// A NAT hook (its rules translate addresses and see a flow's first packet only).
    pub fn is_nat(self) -> bool {
        matches!(self, Hook::NatPrerouting | Hook::NatPostrouting)
    }
}

/// IP version of a rule set (one family per trial).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ip {
    V4,
    V6,
}

/// An address prefix, e.g. 198.18.1.1/32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Prefix {
    pub addr: IpAddr,
    pub len: u8,
}

impl Prefix {
    pub fn host(addr: IpAddr) -> Prefix {
        Prefix {
            addr,
            len: if addr.is_ipv4() { 32 } else { 128 },
        }
    }
    pub fn is_host(&self) -> bool {
        self.len == if self.addr.is_ipv4() { 32 } else { 128 }
    }
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum L4 {
    Tcp,
    Udp,
    Sctp,
    Icmpv6,
}

impl L4 {
    /// Lower-case name: tcp, udp, sctp, icmpv6.
    pub fn name(self) -> &'static str {
        match self {
            L4::Tcp => "tcp",
            L4::Udp => "udp",
            L4::Sctp => "sctp",
            L4::Icmpv6 => "icmpv6",
        }
    }
}

impl L4 {
    /// The protocol's name in `/etc/protocols`, as nft and iptables take it
    /// (`ipv6-icmp` for ICMPv6).
    pub fn protocol(self) -> &'static str {
        match self {
            L4::Icmpv6 => "ipv6-icmp",
            other => other.name(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StringAlgo {
    Bm,
    Kmp,
}

/// Per-source-prefix rate limit (seed 001: per /16, 1000 packets/s).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hashlimit {
    pub name: String,
    pub rate_pps: u32,
    pub burst: u32,
    pub src_prefix_len: u8,
}

/// What a rule matches. All present fields must match (AND).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Match {
    pub src: Option<Prefix>,
    pub dst: Option<Prefix>,
    pub l4: Option<L4>,
    pub dport: Option<u16>,
    /// (source address, destination port) is in the named set (`l4` must be set).
    pub set: Option<String>,
    pub string: Option<(StringAlgo, String)>,
    pub hashlimit: Option<Hashlimit>,
    /// Connection-tracking state is new or established (turns conntrack on).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ct_new_established: bool,
    /// Connection-tracking state is established or related (model `stateful`'s first
    /// rule: packets of known flows skip the rest).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ct_established: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Accept,
    Drop,
    /// Set the packet mark (QoS mark, seed 000 F = 4). Does not end evaluation.
    Mark(u32),
    /// Skip connection tracking (raw table only).
    Notrack,
    /// Source NAT to this address (nat postrouting only).
    Snat(IpAddr),
    /// Source NAT to the outgoing interface's address (nat postrouting only).
    Masquerade,
    /// Destination NAT to this address and port (the packet's own port when `None`;
    /// nat prerouting only).
    Dnat(IpAddr, Option<u16>),
    /// Put the flow into the nft flowtable `ft` (the software fast path; forward only).
    Offload,
}

impl Action {
    /// A NAT verdict (snat, masquerade, dnat).
    pub fn is_nat(self) -> bool {
        matches!(
            self,
            Action::Snat(_) | Action::Masquerade | Action::Dnat(..)
        )
    }

    /// The action's name in messages: accept, drop, mark, notrack, snat, masquerade,
    /// dnat, flow offload.
    pub fn name(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Drop => "drop",
            Action::Mark(_) => "mark",
            Action::Notrack => "notrack",
            Action::Snat(_) => "snat",
            Action::Masquerade => "masquerade",
            Action::Dnat(..) => "dnat",
            Action::Offload => "flow offload",
        }
    }
}

/// What the rule is for — drives the verdict check after a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Never matches test traffic; its counter must stay 0.
    Filler,
    /// Matches test traffic; its counter must be > 0.
    Match,
    /// The chain's policy when it is drop (fwbench's policy chain: a jump to the
    /// user's chain, then a counted drop, on a real drop policy).
    Policy,
    /// Infrastructure (e.g. neighbour discovery); not checked.
    Guard,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rule {
    pub hook: Hook,
    pub m: Match,
    pub action: Action,
    pub role: Role,
}

/// One element of a set: (source address, destination port).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SetElem {
    pub addr: IpAddr,
    pub port: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetDef {
    pub name: String,
    pub ip: Ip,
    pub elements: Vec<SetElem>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Accept,
    Drop,
}

/// A whole rule set for one trial. Rules are evaluated per hook in vector order.
/// A `Policy::Drop` for a hook is rendered as a final counted drop rule in
/// fwbench's own chain (built-in chain policies are never changed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleSet {
    pub ip: Ip,
    pub rules: Vec<Rule>,
    pub sets: Vec<SetDef>,
    pub policies: Vec<(Hook, Policy)>,
    /// One line saying what this is, e.g. "linear: 1000 filler rules, match last".
    pub description: String,
    /// For imported rule sets: the engine-specific text, rendered as is.
    pub raw: Option<Imported>,
    /// Addresses of the testbed's client and server sides: the engines that attach to
    /// interfaces (XDP, tc) attach to the gateway's interfaces that route to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ingress: Vec<IpAddr>,
}

impl RuleSet {
    pub fn empty(ip: Ip) -> RuleSet {
        RuleSet {
            ip,
            rules: vec![],
            sets: vec![],
            policies: vec![],
            description: "no rules".into(),
            raw: None,
            ingress: vec![],
        }
    }
    pub fn policy(&self, hook: Hook) -> Policy {
        self.policies
            .iter()
            .find(|(h, _)| *h == hook)
            .map(|(_, p)| *p)
            .unwrap_or(Policy::Accept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_serde_names_and_parse_back() {
        for &e in Engine::ALL {
            let serde_name = serde_json::to_value(e).unwrap();
            assert_eq!(serde_name, e.to_string(), "{e:?}");
            assert_eq!(e.to_string().parse::<Engine>().unwrap(), e);
            assert!(ENGINES.contains(&e.name()), "{e} is not in ENGINES");
        }
        // Every name advertised parses (the loop above: every engine is advertised).
        for n in ENGINES {
            assert!(n.parse::<Engine>().is_ok(), "{n}");
        }
        assert_eq!("nftables".parse::<Engine>().unwrap(), Engine::Nft);
        assert_eq!("ipset".parse::<Engine>().unwrap(), Engine::IpsetLegacy);
        assert_eq!(
            "pf".parse::<Engine>().unwrap_err().to_string(),
            format!(
                "unknown engine 'pf' (expected one of: {})",
                ENGINES.join(", ")
            )
        );
    }

    #[test]
    fn effective_engines_name_the_family_where_it_applies() {
        let id = |e, f| EffectiveEngine::new(e, f).id();
        assert_eq!(id(Engine::Nft, NftFamily::Inet), "nft/inet");
        assert_eq!(id(Engine::NftSet, NftFamily::Ip), "nft-set/ip");
        assert_eq!(id(Engine::IptablesLegacy, NftFamily::Ip), "iptables-legacy");
        assert_eq!(id(Engine::None, NftFamily::Inet), "none");
        let kinds: Vec<&str> = Engine::ALL.iter().map(|e| e.kind().name()).collect();
        assert_eq!(
            kinds,
            [
                "none", "nft", "nft", "xtables", "xtables", "xtables", "xtables", "bpf", "bpf",
                "bpf", "bpf"
            ]
        );
        assert_eq!(
            serde_json::to_value(EngineKind::Xtables).unwrap(),
            EngineKind::Xtables.name()
        );
    }
}
