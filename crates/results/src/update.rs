//! Gateway updates by kind, method and place: what one update changes, how the
//! engine's tool applies it and where its rules go. The agent's schedule names them,
//! the store keeps their names ([`UpdateKind::name`]) and the report parses them back.
//!
//! Owns: the three enums, their stable names and what a kind does to the marker flow.
//! Must not: know an engine's syntax or a schedule's timing (`proto::event`).

use serde::{Deserialize, Serialize};

/// What one update changes in fwbench's installed rule set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpdateKind {
    /// Insert K drop rules at the head of fwbench's first chain (the first update's
    /// first rule drops the marker flow).
    Add,
    /// Delete K rules (added, untimed, before the traffic phase; the first update's
    /// first rule is the one dropping the marker flow).
    Delete,
    /// Replace the whole rule set at once with itself plus K drop rules at the head
    /// (the first dropping the marker flow), as kube-proxy rewrites its rules.
    Replace,
    /// Add K elements to fwbench's first drop set (the first: the marker flow).
    AddElements,
    /// Remove K elements from it (added, untimed, before the traffic phase).
    RemoveElements,
    /// Load the rule set in force again, unchanged: the installed rule set with K drop
    /// rules at the head (the first dropping the marker flow), put in place untimed
    /// before the traffic phase — as a firewall manager reloads its rules. No packet's
    /// fate changes: every marker packet that passes during one is a violation.
    Reload,
    /// Load fwbench's first drop set again, unchanged: its elements with K more (the
    /// first the marker flow's), put in place untimed before the traffic phase — as a
    /// blocklist job refreshes its list. `batch` replaces the contents atomically (one
    /// nft transaction flushing and filling the set; ipset: a new set filled, then
    /// `ipset swap`), `flush-load` empties it and fills it again in a second call,
    /// `per-rule` after the flush adds one element per call (fail2ban re-banning one
    /// address at a time on restart). Marker packets that pass are violations.
    ReloadSet,
    /// K elements of fwbench's first drop set (the first: the marker flow's) expiring
    /// together by the kernel's timer, as a ban feed's bans (fail2ban, CrowdSec) added
    /// in one burst run out together: added in one batch at the start of the traffic
    /// phase with a timeout ending when the update is due (the sets are made with
    /// timeout support). No call runs when it is due; its commit is the add's.
    ExpireElements,
}

impl UpdateKind {
    pub const ALL: [UpdateKind; 8] = [
        UpdateKind::Add,
        UpdateKind::Delete,
        UpdateKind::Replace,
        UpdateKind::AddElements,
        UpdateKind::RemoveElements,
        UpdateKind::Reload,
        UpdateKind::ReloadSet,
        UpdateKind::ExpireElements,
    ];

    /// Stable name (CLI, scenario files, store).
    pub fn name(self) -> &'static str {
        match self {
            UpdateKind::Add => "add",
            UpdateKind::Delete => "delete",
            UpdateKind::Replace => "replace",
            UpdateKind::AddElements => "add-elements",
            UpdateKind::RemoveElements => "remove-elements",
            UpdateKind::Reload => "reload",
            UpdateKind::ReloadSet => "reload-set",
            UpdateKind::ExpireElements => "expire-elements",
        }
    }

    /// What it changes, counted: a set's elements or rules.
    pub fn counts(self) -> &'static str {
        match self {
            UpdateKind::AddElements
            | UpdateKind::RemoveElements
            | UpdateKind::ReloadSet
            | UpdateKind::ExpireElements => "elements",
            UpdateKind::Add | UpdateKind::Delete | UpdateKind::Replace | UpdateKind::Reload => {
                "rules"
            }
        }
    }

    /// The update in words, for a heading: "adding 1 rule", "reloading the rule set".
    pub fn words(self, k: u32) -> String {
        let (rules, elements) = plural(k);
        match self {
            UpdateKind::Add => format!("adding {k} {rules}"),
            UpdateKind::Delete => format!("deleting {k} {rules}"),
            UpdateKind::Replace => format!("replacing the rule set (+{k})"),
            UpdateKind::Reload => "reloading the rule set".into(),
            UpdateKind::ReloadSet => "reloading a set".into(),
            UpdateKind::AddElements => format!("adding {k} set {elements}"),
            UpdateKind::RemoveElements => format!("removing {k} set {elements}"),
            UpdateKind::ExpireElements => format!("{k} set {elements} expiring together"),
        }
    }

    /// The update at its installed size, as the CLI's events line and the report's
    /// findings say it: "adding 1 rule to 20000"; and what one of them is called
    /// ("rule", "reload", …).
    pub fn doing(self, k: u32, installed: u64) -> (String, &'static str) {
        let (rules, elements) = plural(k);
        match self {
            UpdateKind::Add => (format!("adding {k} {rules} to {installed}"), "rule"),
            UpdateKind::Delete => (format!("deleting {k} {rules} of {installed}"), "deletion"),
            UpdateKind::Replace => (
                format!("replacing {installed} rules (+{k})"),
                "new rule set",
            ),
            UpdateKind::AddElements => (
                format!("adding {k} set {elements} to {installed}"),
                "element",
            ),
            UpdateKind::RemoveElements => (
                format!("removing {k} set {elements} of {installed}"),
                "removal",
            ),
            UpdateKind::Reload => (format!("reloading {installed} rules"), "reload"),
            UpdateKind::ReloadSet => (format!("reloading a set of {installed} elements"), "reload"),
            UpdateKind::ExpireElements => (
                format!("{k} set {elements} of {installed} expiring together"),
                "expiry",
            ),
        }
    }

    /// Repeated, it grows or shrinks the rule set (add, delete): a trial of them has no
    /// one installed size.
    pub fn changes_rule_count(self) -> bool {
        match self {
            UpdateKind::Add | UpdateKind::Delete => true,
            UpdateKind::Replace
            | UpdateKind::AddElements
            | UpdateKind::RemoveElements
            | UpdateKind::Reload
            | UpdateKind::ReloadSet
            | UpdateKind::ExpireElements => false,
        }
    }

    /// Nothing runs when it is due (the kernel's timer acts): its commit is the add of
    /// its elements at the start of the traffic.
    pub fn runs_nothing_when_due(self) -> bool {
        self == UpdateKind::ExpireElements
    }

    /// What the update does to the marker flow's fate.
    pub fn marker_fate(self) -> MarkerFate {
        match self {
            UpdateKind::Add | UpdateKind::Replace | UpdateKind::AddElements => MarkerFate::Drops,
            UpdateKind::Delete | UpdateKind::RemoveElements | UpdateKind::ExpireElements => {
                MarkerFate::Passes
            }
            UpdateKind::Reload | UpdateKind::ReloadSet => MarkerFate::Kept,
        }
    }
}

/// "rule(s)" and "element(s)" for `k` of them.
fn plural(k: u32) -> (&'static str, &'static str) {
    if k == 1 {
        ("rule", "element")
    } else {
        ("rules", "elements")
    }
}

/// What an update does to the marker flow: starts dropping it, lets it through, or
/// keeps it dropped (a reload: its packets that pass are violations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerFate {
    Drops,
    Passes,
    Kept,
}

/// How the engine's tool applies an update, where an engine has several ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpdateMethod {
    /// One tool call per rule or element: `iptables -I`/`-D`, `nft insert rule` /
    /// `nft delete rule`, `nft add element`, `ipset add`/`del`.
    PerRule,
    /// One batch for the whole update: `iptables-restore --noflush`, one `nft -f`
    /// transaction, `ipset restore`.
    Batch,
    /// BPF map updates (one `bpf(BPF_MAP_UPDATE_ELEM)` per entry).
    Map,
    /// A reload in two steps, as a firewall service's restart does (Debian's
    /// `nftables.service`: `nft flush ruleset` on stop, then `nft -f
    /// /etc/nftables.conf` on start; its reload is that file alone, atomic, the file
    /// opening with `flush ruleset`): fwbench's rule set removed by its removal
    /// batches, then installed by its install batches.
    FlushLoad,
}

impl UpdateMethod {
    pub const ALL: [UpdateMethod; 4] = [
        UpdateMethod::PerRule,
        UpdateMethod::Batch,
        UpdateMethod::Map,
        UpdateMethod::FlushLoad,
    ];

    pub fn name(self) -> &'static str {
        match self {
            UpdateMethod::PerRule => "per-rule",
            UpdateMethod::Batch => "batch",
            UpdateMethod::Map => "map",
            UpdateMethod::FlushLoad => "flush-load",
        }
    }
}

macro_rules! parse_by_name {
    ($t:ty, $what:literal) => {
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                <$t>::ALL
                    .into_iter()
                    .find(|k| k.name() == s)
                    .ok_or_else(|| {
                        let names: Vec<&str> = <$t>::ALL.iter().map(|k| k.name()).collect();
                        format!(
                            concat!("unknown ", $what, " '{}' (expected one of: {})"),
                            s,
                            names.join(", ")
                        )
                    })
            }
        }
    };
}
/// Where an update puts its rules in fwbench's chain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventPlace {
    /// At the head: before every rule, so every packet meets them.
    #[default]
    Head,
    /// Behind the chain's leading rules that accept established flows (`ct state
    /// established,related accept`, the stateful model's first rule): where a new
    /// block meets only packets the conntrack table does not know yet.
    AfterEstablished,
    /// The same, then the marker source's conntrack entries deleted in the same timed
    /// update (`conntrack -D -s SRC -p PROTO`), as kube-proxy does for UDP flows to a
    /// removed endpoint: the flow's next packet is new and meets the block.
    AfterEstablishedCtDelete,
}

impl EventPlace {
    pub const ALL: [EventPlace; 3] = [
        EventPlace::Head,
        EventPlace::AfterEstablished,
        EventPlace::AfterEstablishedCtDelete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EventPlace::Head => "head",
            EventPlace::AfterEstablished => "after-established",
            EventPlace::AfterEstablishedCtDelete => "after-established-ct-delete",
        }
    }

    pub fn is_head(&self) -> bool {
        *self == EventPlace::Head
    }

    /// Behind the established-accept rules (with or without the conntrack deletion).
    pub fn behind_established(self) -> bool {
        match self {
            EventPlace::Head => false,
            EventPlace::AfterEstablished | EventPlace::AfterEstablishedCtDelete => true,
        }
    }
}

parse_by_name!(UpdateKind, "update kind");
parse_by_name!(UpdateMethod, "update method");
parse_by_name!(EventPlace, "event place");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_words_count_what_changes() {
        for k in UpdateKind::ALL {
            assert_eq!(k.name().parse::<UpdateKind>(), Ok(k));
        }
        assert!("adds"
            .parse::<UpdateKind>()
            .unwrap_err()
            .contains("expected one of: add,"));
        assert_eq!(UpdateKind::Add.doing(1, 20000).0, "adding 1 rule to 20000");
        assert_eq!(
            UpdateKind::ExpireElements.doing(1000, 2000).0,
            "1000 set elements of 2000 expiring together"
        );
        assert_eq!(UpdateKind::AddElements.words(1), "adding 1 set element");
        assert_eq!(UpdateKind::ReloadSet.counts(), "elements");
        assert_eq!(UpdateKind::Reload.counts(), "rules");
    }
}
