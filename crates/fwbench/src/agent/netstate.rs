//! The gateway namespace's netfilter state: a snapshot ([`NetState`]) before the
//! gateway's setup, and after its teardown the removal of what the engines' tools made
//! on their own and left empty (iptables-nft's built-in `table ip filter` and its base
//! chains), then what is left ([`Residue`]).
//!
//! Owns: reading `nft list tables`, `/proc/net/ip*_tables_names`, `ipset list -n`;
//! deleting an nft table that did not exist at the snapshot and holds nothing but
//! empty built-in base chains; where a sysctl lives ([`sysctl_path`]).
//! Must not: touch any other table, chain or set.

use proto::{NetState, Residue};

/// Tables iptables-nft/ip6tables-nft create for their built-in chains.
const XTABLES: &[&str] = &["filter", "nat", "mangle", "raw", "security"];
/// Their built-in chains.
const BUILTIN_CHAINS: &[&str] = &["INPUT", "FORWARD", "OUTPUT", "PREROUTING", "POSTROUTING"];

/// The file of a sysctl: `net.ipv4.ip_forward` → `/proc/sys/net/ipv4/ip_forward`.
pub fn sysctl_path(name: &str) -> String {
    format!("/proc/sys/{}", name.replace('.', "/"))
}

/// The values of the sysctls that can be read, by name.
pub fn read_sysctls<S: AsRef<str>>(names: &[S]) -> Vec<(String, String)> {
    names
        .iter()
        .filter_map(|k| {
            let k = k.as_ref();
            let v = std::fs::read_to_string(sysctl_path(k)).ok()?;
            Some((k.to_string(), v.trim().to_owned()))
        })
        .collect()
}

/// The namespace's state now; `sysctls` are the names to read. What cannot be read
/// (a tool not installed, a module not loaded) reads as empty.
pub fn snapshot(sysctls: &[String]) -> NetState {
    let mut nft_tables: Vec<String> = firewall::tool::run(&["nft", "list", "tables"], None)
        .map(|out| {
            out.lines()
                .filter_map(|l| l.trim().strip_prefix("table "))
                .map(|t| t.trim().to_owned())
                .collect()
        })
        .unwrap_or_default();
    nft_tables.sort();
    let mut legacy_tables = Vec::new();
    for (family, file) in [
        ("ip", "/proc/net/ip_tables_names"),
        ("ip6", "/proc/net/ip6_tables_names"),
    ] {
        if let Ok(names) = std::fs::read_to_string(file) {
            legacy_tables.extend(names.split_whitespace().map(|n| format!("{family} {n}")));
        }
    }
    legacy_tables.sort();
    let mut ipsets: Vec<String> = match firewall::tool::which("ipset") {
        Some(_) => firewall::tool::run(&["ipset", "list", "-n"], None)
            .map(|out| out.lines().map(|l| l.trim().to_owned()).collect())
            .unwrap_or_default(),
        None => vec![],
    };
    ipsets.retain(|s| !s.is_empty());
    ipsets.sort();
    let sysctls = read_sysctls(sysctls);
    NetState {
        nft_tables,
        legacy_tables,
        ipsets,
        sysctls,
    }
}

/// After fwbench's rules are removed: delete the nft tables that are new since
/// `before` and only hold what iptables-nft creates by itself, then report.
pub fn settle(before: NetState, sysctls: &[String]) -> Residue {
    let mut removed = Vec::new();
    let now = snapshot(sysctls);
    for t in now
        .nft_tables
        .iter()
        .filter(|t| !before.nft_tables.contains(t))
    {
        let Some((family, name)) = t.split_once(' ') else {
            continue;
        };
        if !matches!(family, "ip" | "ip6") || !XTABLES.contains(&name) {
            continue;
        }
        let listed = firewall::tool::run(&["nft", "-j", "list", "table", family, name], None);
        match listed.map(|json| only_empty_builtin_chains(&json)) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                tracing::warn!("reading nft table {t}: {e}");
                continue;
            }
        }
        match firewall::tool::run(&["nft", "delete", "table", family, name], None) {
            Ok(_) => removed.push(format!("nft table {t}")),
            Err(e) => tracing::warn!("removing the empty nft table {t}: {e}"),
        }
    }
    let after = if removed.is_empty() {
        now
    } else {
        snapshot(sysctls)
    };
    let left = after.differences(&before);
    Residue {
        before,
        after,
        removed,
        left,
        removed_before: vec![],
    }
}

/// `nft -j list table …` output of a table that holds only empty built-in base chains
/// with policy accept (what iptables-nft leaves once its rules are gone).
fn only_empty_builtin_chains(json: &str) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
        return false;
    };
    let Some(items) = v.get("nftables").and_then(|i| i.as_array()) else {
        return false;
    };
    items.iter().all(|item| {
        let Some(obj) = item.as_object() else {
            return false;
        };
        if obj.contains_key("metainfo") || obj.contains_key("table") {
            return true;
        }
        let Some(chain) = obj.get("chain") else {
            return false; // a rule, set, map, flowtable …
        };
        let name = chain.get("name").and_then(|n| n.as_str()).unwrap_or("");
        BUILTIN_CHAINS.contains(&name)
            && chain.get("hook").is_some()
            && chain.get("policy").and_then(|p| p.as_str()) == Some("accept")
    })
}

#[cfg(test)]
mod tests {
    use super::only_empty_builtin_chains;

    #[test]
    fn only_what_iptables_nft_leaves_is_removable() {
        let empty = r#"{"nftables": [{"metainfo": {"version": "1.0.6"}},
            {"table": {"family": "ip", "name": "filter", "handle": 1}},
            {"chain": {"family": "ip", "table": "filter", "name": "FORWARD", "handle": 1,
              "type": "filter", "hook": "forward", "prio": 0, "policy": "accept"}}]}"#;
        assert!(only_empty_builtin_chains(empty));
        let with_rule = empty.replace(
            "]}",
            r#", {"rule": {"family": "ip", "table": "filter", "chain": "FORWARD"}}]}"#,
        );
        assert!(!only_empty_builtin_chains(&with_rule));
        assert!(!only_empty_builtin_chains(
            &empty.replace("\"accept\"", "\"drop\"")
        ));
        assert!(!only_empty_builtin_chains(
            &empty.replace("\"FORWARD\"", "\"mine\"")
        ));
        assert!(!only_empty_builtin_chains("not json"));
    }
}
