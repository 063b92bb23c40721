//! The gateway role (the device under test): what it sets up and what it reports.
//!
//! Owns: the gateway's role spec and results; the rule request and the firewall report
//! travel in them as the typed plain data of `fwmodel`, and so do the conversions
//! from this crate's family and protocol to the rule model's.
//! Must not: import the role enums or messages (`role`, `msg`) that carry these types.

use crate::conn::{ProxyResults, ProxySpec};
use crate::event::{EventSpec, UpdateRow};
use crate::measure::IfCounters;
use crate::param::{Family, Proto};
use serde::{Deserialize, Serialize};

impl From<Family> for fwmodel::Ip {
    fn from(f: Family) -> fwmodel::Ip {
        match f {
            Family::V4 => fwmodel::Ip::V4,
            Family::V6 => fwmodel::Ip::V6,
        }
    }
}

impl From<Proto> for fwmodel::L4 {
    fn from(p: Proto) -> fwmodel::L4 {
        match p {
            Proto::Tcp => fwmodel::L4::Tcp,
            Proto::Udp => fwmodel::L4::Udp,
            Proto::Sctp => fwmodel::L4::Sctp,
        }
    }
}

/// What the gateway role sets up. Firewall rules arrive with the firewall issue;
/// today the gateway records its forwarding state and serves as the DUT probe point.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GatewaySpec {
    /// sysctls the gateway must have (name → value); the agent restores old values at teardown.
    pub sysctls: Vec<(String, String)>,
    /// The rule set to install for the trial (a rule request: engine plus model spec
    /// and addresses, or an imported file), rendered by the gateway agent, verified,
    /// counted and removed at stop. `None`: no rules.
    pub firewall: Option<Box<fwmodel::Request>>,
    /// Steer the packet processing of the gateway's interfaces to these CPUs (RPS), e.g.
    /// "1": on veth, forwarding and filtering otherwise run on the *sender's* CPU.
    pub steer_cpus: Option<String>,
    /// Proxy mode: run a userspace TCP relay in the gateway.
    pub proxy: Option<ProxySpec>,
    /// Gateway events: rule-set updates applied during the traffic phase (issue 25).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventSpec>,
    /// Connection tracking: the table's settings for the trial and its statistics to
    /// report (conntrack workloads); absent: left as found, not reported.
    pub conntrack: Option<CtSpec>,
}

/// The conntrack table's settings a trial asks for (`None`: as found). Each is set in
/// the gateway's namespace where the kernel lets it, else — `nf_conntrack_max` and the
/// hash size are global on kernels that make them read-only in a namespace — on the
/// host, restored exactly after the trial.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CtSpec {
    /// `net.netfilter.nf_conntrack_max`.
    pub max: Option<u32>,
    /// Hash buckets (`nf_conntrack_buckets`, or the module's `hashsize`).
    pub buckets: Option<u32>,
    /// `net.netfilter.nf_conntrack_udp_timeout`, seconds (unreplied UDP flows).
    pub udp_timeout_s: Option<u32>,
    /// Empty the namespace's table at setup (new-flow trials: the previous trial's
    /// flows must not be found); never done in the host's own namespace.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flush: bool,
    /// Table fill: insert this many idle UDP entries before the trial (they stay for
    /// its length and are flushed at teardown); fwbench's gateway namespace only.
    pub fill: Option<u32>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Conntrack counters of the gateway's namespace: the table's entry count and the
/// per-CPU statistics of `/proc/net/stat/nf_conntrack`, summed over CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CtStats {
    /// Entries in the table (`nf_conntrack_count`).
    pub count: u64,
    pub found: u64,
    pub invalid: u64,
    pub insert: u64,
    pub insert_failed: u64,
    /// New flows refused: the table was full and no entry could be evicted.
    pub drop: u64,
    /// Unreplied entries evicted to make room for a new one.
    pub early_drop: u64,
    pub clash_resolve: u64,
    pub search_restart: u64,
}

impl CtStats {
    /// The counters from `before` to `self` (`count` is `self`'s: a level, not a counter).
    pub fn since(&self, before: &CtStats) -> CtStats {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        CtStats {
            count: self.count,
            found: d(self.found, before.found),
            invalid: d(self.invalid, before.invalid),
            insert: d(self.insert, before.insert),
            insert_failed: d(self.insert_failed, before.insert_failed),
            drop: d(self.drop, before.drop),
            early_drop: d(self.early_drop, before.early_drop),
            clash_resolve: d(self.clash_resolve, before.clash_resolve),
            search_restart: d(self.search_restart, before.search_restart),
        }
    }
}

/// What the gateway's conntrack table was set to and did over the trial.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CtReport {
    /// `nf_conntrack_max` in force during the trial.
    pub max: u64,
    /// Hash buckets in force.
    pub buckets: u64,
    /// `nf_conntrack_udp_timeout` in force, seconds (0: unreadable).
    pub udp_timeout_s: u64,
    /// Where each setting the trial asked for was set: (name, `netns` or `global`).
    /// `global`: the kernel keeps it for the whole host, so other namespaces saw it
    /// too while the trial ran (fwbench held `/run/fwbench/conntrack.lock`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scope: Vec<(String, String)>,
    /// Entries inserted by the table fill before the trial (0: none asked).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub filled: u64,
    /// At the trial's start (Start).
    pub before: CtStats,
    /// At its end (Stop).
    pub after: CtStats,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GatewayResults {
    /// sysctl values in force during the trial.
    pub sysctls: Vec<(String, String)>,
    /// Rule set figures: engine, rules, elements, install_ms, remove_ms, verdicts.
    pub firewall: Option<Box<fwmodel::Report>>,
    /// Interface counters of the gateway over the trial (Start to Stop).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<IfCounters>,
    /// Proxy mode: what the relay did.
    pub proxy: Option<ProxyResults>,
    /// The namespace's netfilter state before setup and after teardown (agents of
    /// older builds do not send it).
    pub residue: Option<Box<Residue>>,
    /// One row per scheduled update of `GatewaySpec::events`, in schedule order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updates: Vec<UpdateRow>,
    /// The conntrack table's settings and statistics (when the spec asked).
    pub conntrack: Option<Box<CtReport>>,
}

/// What a trial can leave in the gateway's namespace that changes later trials: its
/// netfilter tables and sets, and the sysctls the gateway sets. Lists are sorted.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NetState {
    /// nftables tables as "family name", e.g. "ip filter".
    #[serde(default)]
    pub nft_tables: Vec<String>,
    /// Legacy x_tables tables instantiated in the namespace, e.g. "ip filter"
    /// (`/proc/net/ip_tables_names`, `/proc/net/ip6_tables_names`).
    #[serde(default)]
    pub legacy_tables: Vec<String>,
    /// ipset sets by name.
    #[serde(default)]
    pub ipsets: Vec<String>,
    /// The sysctls the gateway sets: (name, value).
    #[serde(default)]
    pub sysctls: Vec<(String, String)>,
}

impl NetState {
    /// How `self` differs from `base`, one phrase per difference (empty: the same).
    /// sysctls are compared only where both name them.
    pub fn differences(&self, base: &NetState) -> Vec<String> {
        let mut out = Vec::new();
        let mut lists = |what: &str, now: &[String], then: &[String], added: &str| {
            for t in now.iter().filter(|t| !then.contains(t)) {
                out.push(format!("{what} {} {added}", describe(what, t)));
            }
            for t in then.iter().filter(|t| !now.contains(t)) {
                out.push(format!("{what} {} gone", describe(what, t)));
            }
        };
        lists("nft table", &self.nft_tables, &base.nft_tables, "present");
        lists(
            "legacy table",
            &self.legacy_tables,
            &base.legacy_tables,
            "instantiated",
        );
        lists("ipset", &self.ipsets, &base.ipsets, "present");
        for (k, v) in &self.sysctls {
            if let Some((_, b)) = base.sysctls.iter().find(|(bk, _)| bk == k) {
                if b != v {
                    out.push(format!("sysctl {k}={v} (was {b})"));
                }
            }
        }
        out
    }
}

/// A legacy table "ip filter" reads "filter" (IPv4, as iptables names it).
fn describe<'a>(what: &str, t: &'a str) -> &'a str {
    match what {
        "legacy table" => t.strip_prefix("ip ").unwrap_or(t),
        _ => t,
    }
}

/// The gateway's netfilter state before its setup and after its teardown, and what
/// the teardown removed beyond fwbench's own rules (tables the engines' tools made).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Residue {
    pub before: NetState,
    /// After teardown, including the removals below.
    pub after: NetState,
    /// What the teardown removed that fwbench's rule removal leaves (e.g. the empty
    /// `table ip filter` iptables-nft creates).
    #[serde(default)]
    pub removed: Vec<String>,
    /// What stays and differs from `before` (e.g. a legacy table, which cannot be
    /// unloaded from a namespace): later trials on this namespace pay for it.
    #[serde(default)]
    pub left: Vec<String>,
    /// What a gateway agent that died (an earlier trial's, killed) had left in the
    /// namespace, undone before `before` was read: the trial did not start on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_before: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_in_words() {
        let base = NetState {
            nft_tables: vec!["inet mine".into()],
            sysctls: vec![("net.ipv4.ip_forward".into(), "1".into())],
            ..Default::default()
        };
        let now = NetState {
            nft_tables: vec!["inet mine".into(), "ip filter".into()],
            legacy_tables: vec!["ip filter".into(), "ip6 filter".into()],
            sysctls: vec![("net.ipv4.ip_forward".into(), "0".into())],
            ..Default::default()
        };
        assert_eq!(
            now.differences(&base),
            [
                "nft table ip filter present",
                "legacy table filter instantiated",
                "legacy table ip6 filter instantiated",
                "sysctl net.ipv4.ip_forward=0 (was 1)",
            ]
        );
        assert!(base.differences(&base).is_empty());
        assert_eq!(base.differences(&now)[0], "nft table ip filter gone");
    }

    #[test]
    fn results_without_residue_keep_their_json() {
        let r = GatewayResults::default();
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains("residue"), "{json}");
        let back: GatewayResults = serde_json::from_str(r#"{"sysctls":[]}"#).unwrap();
        assert_eq!(back.residue, None);
        let with = GatewayResults {
            residue: Some(Box::new(Residue {
                left: vec!["legacy table filter instantiated".into()],
                ..Default::default()
            })),
            ..Default::default()
        };
        let json = serde_json::to_string(&with).unwrap();
        assert_eq!(serde_json::from_str::<GatewayResults>(&json).unwrap(), with);
    }

    #[test]
    fn conntrack_counters_over_a_trial() {
        // Early drops and failed inserts the same before and after.
        let ct = |count, drop| CtStats {
            count,
            drop,
            early_drop: 1,
            insert_failed: 2,
            ..Default::default()
        };
        let (before, after) = (ct(10, 5), ct(5010, 3005));
        let d = after.since(&before);
        assert_eq!(
            (d.count, d.drop, d.early_drop, d.insert_failed),
            (5010, 3000, 0, 0)
        );
        // A counter that went backwards (a CPU went offline) is no negative count.
        assert_eq!(before.since(&after).drop, 0);
        let r = GatewayResults::default();
        assert!(!serde_json::to_string(&r).unwrap().contains("conntrack"));
    }
}
