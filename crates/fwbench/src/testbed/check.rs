//! `fwbench testbed check FILE`: reach every host of a testbed file through its
//! launcher and say what is there and what is missing — kernel, the tools fwbench
//! needs on that role, the interfaces and addresses the file names, whether this
//! binary is cached, and the host's clock offset against the controller.
//!
//! Owns: the report and the verdict (problems → a usage error, exit 2). Must not:
//! change anything on a host except putting this binary into its cache (needed to
//! run the agent that reads the clock) and undoing what a crashed run left there
//! (its crash markers, see [`crate::host::marker`]).

use crate::error::usage;
use crate::testbed::file::{FileTestbed, RoleHostRef};
use crate::testbed::launcher::Agent;
use crate::testbed::remote::{self, Cached};
use crate::testbed::Testbed;
use anyhow::Result;
use std::net::IpAddr;

/// What one host answered.
#[derive(Debug, Default, PartialEq)]
struct Facts {
    kernel: String,
    tools: Vec<(String, Option<String>)>,
    /// Interface name → its addresses (without prefix length).
    interfaces: Vec<(String, Vec<String>)>,
}

const PROBE: &str = "uname -r; for t in ip nft iptables ipset; do \
                     p=$(command -v $t 2>/dev/null) && echo \"tool $t $p\" || echo \"tool $t -\"; done; \
                     ip -br addr show";

fn parse_facts(text: &str) -> Facts {
    let mut f = Facts::default();
    for (i, line) in text.lines().enumerate() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if i == 0 {
            f.kernel = line.trim().to_string();
        } else if w.first() == Some(&"tool") && w.len() == 3 {
            f.tools
                .push((w[1].to_string(), (w[2] != "-").then(|| w[2].to_string())));
        } else if w.len() >= 2 {
            let name = w[0].split('@').next().unwrap_or(w[0]).to_string();
            let addrs = w[2..]
                .iter()
                .map(|a| a.split('/').next().unwrap_or(a).to_string())
                .collect();
            f.interfaces.push((name, addrs));
        }
    }
    f
}

/// Check every host; print the report; problems are a usage error (exit 2).
pub fn check(tb: &FileTestbed) -> Result<()> {
    let mut problems: Vec<String> = Vec::new();
    println!("testbed {} ({}, from {})", tb.name, tb.topology, tb.path);
    for r in tb.hosts() {
        println!("{}: {}", r.label, r.host.launcher.place);
        if let Err(e) = check_host(tb, &r, &mut problems) {
            println!("  unreachable: {e:#}");
            problems.push(format!(
                "{} host {}: unreachable: {e:#}",
                r.label, r.host.launcher.host
            ));
        }
    }
    if tb.external_gateway {
        println!("gateway: external (no agent: traffic is measured through it, no counters; engine none only)");
    }
    if problems.is_empty() {
        println!("ok: every host reachable, nothing missing");
        Ok(())
    } else {
        Err(usage(format!(
            "{}: {} problem{}:\n  {}",
            tb.path,
            problems.len(),
            if problems.len() == 1 { "" } else { "s" },
            problems.join("\n  ")
        )))
    }
}

fn check_host(tb: &FileTestbed, r: &RoleHostRef, problems: &mut Vec<String>) -> Result<()> {
    let (role, h) = (r.role, r.host);
    let label = r.label.as_str();
    let facts = parse_facts(&tb.run_on(h, &["sh", "-c", PROBE], None)?);
    println!("  kernel      {}", facts.kernel);
    let needed: &[&str] = if role == "gateway" {
        &["ip", "nft", "iptables", "ipset"]
    } else {
        &["ip"]
    };
    for (t, path) in &facts.tools {
        match path {
            Some(p) => println!("  tool        {t}: {p}"),
            None if needed.contains(&t.as_str()) => {
                println!("  tool        {t}: MISSING");
                problems.push(format!("{label} host: {t} is not installed"));
            }
            None => println!("  tool        {t}: not installed (not needed here)"),
        }
    }
    // Interfaces and addresses the file names for this host.
    let mut want_ifs: Vec<String> = h.interface.iter().cloned().collect();
    let input_server = role == "gateway" && tb.topology == crate::params::topology::Topology::Input;
    let mut want_addrs: Vec<(IpAddr, &str, bool)> = vec![];
    match role {
        "client" if h.move_interface => {}
        "client" => {
            let c = &tb.clients[r.index];
            for fam in [proto::Family::V4, proto::Family::V6] {
                if c.addrs.available(fam) > 0 {
                    let a = tb.client_addr_at(fam, r.index as u32, 1);
                    want_addrs.push((a, "client address", !c.manage_addresses));
                }
            }
        }
        "gateway" => {
            for c in &tb.clients {
                for a in &c.gateway_addrs {
                    if !want_addrs.iter().any(|(x, _, _)| x == a) {
                        want_addrs.push((*a, "gateway_address", true));
                    }
                }
                // The interface each client host is cabled to.
                let i = tb.ingress_of(c).to_string();
                if !i.is_empty() && !want_ifs.contains(&i) {
                    want_ifs.push(i);
                }
            }
            if input_server {
                want_addrs.extend(
                    tb.servers[0]
                        .addrs
                        .iter()
                        .map(|a| (*a, "server address", true)),
                );
            }
        }
        _ if h.move_interface => {}
        _ => {
            want_addrs.extend(
                tb.servers[r.index]
                    .addrs
                    .iter()
                    .map(|a| (*a, "server address", true)),
            );
        }
    }
    for i in want_ifs {
        let moved = if h.move_interface {
            ", moved into a namespace of its own for each run"
        } else {
            ""
        };
        match facts.interfaces.iter().find(|(n, _)| *n == i) {
            Some((_, a)) => println!("  interface   {i}: present ({}){moved}", a.join(" ")),
            None => {
                println!("  interface   {i}: MISSING");
                problems.push(format!("{label} host: no interface {i}"));
            }
        }
    }
    for (a, what, required) in want_addrs {
        let s = a.to_string();
        let on = facts
            .interfaces
            .iter()
            .find(|(_, addrs)| addrs.contains(&s))
            .map(|(n, _)| n.clone());
        match (on, required) {
            (Some(n), _) => println!("  address     {s} ({what}): on {n}"),
            (None, false) => {
                println!(
                    "  address     {s} ({what}): absent (manage_addresses = true: fwbench adds it)"
                )
            }
            (None, true) => {
                println!("  address     {s} ({what}): MISSING");
                problems.push(format!("{label} host: {what} {s} is not configured"));
            }
        }
    }
    // The binary: cached already, or put there now (the clock needs an agent).
    if let Some(rem) = &h.launcher.remote {
        match remote::probe_cache(&h.launcher.prefix, rem)? {
            Cached::Have(p) => println!("  agent       cached: {p}"),
            Cached::Missing(p) => println!("  agent       not cached; copying to {p}"),
        }
    } else {
        println!("  agent       this machine's binary");
    }
    // What a crashed run left on the host (its crash markers) is undone now.
    let exe = h.launcher.fwbench_exe()?;
    let cleaned = tb.run_on(h, &[&exe, "testbed", "cleanup-host"], None)?;
    if cleaned.trim().is_empty() {
        println!("  leftovers   none");
    }
    for line in cleaned.lines() {
        println!("  leftovers   {line}");
    }
    let mut agent = Agent::spawn(&h.launcher, role, None)?;
    println!(
        "  agent       fwbench {} (pid {})",
        agent.info.fwbench_version, agent.info.pid
    );
    let clock = agent.clock_offset(16);
    let _ = agent.teardown();
    let c = clock?;
    println!(
        "  clock       {} (offset ± half the tightest round trip of {} exchanges)",
        c.describe(),
        c.exchanges
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_from_probe_output() {
        let f = parse_facts(
            "6.1.0-18-amd64\ntool ip /usr/sbin/ip\ntool nft -\n\
             lo UNKNOWN 127.0.0.1/8 ::1/128\nc0@if5 UP 198.18.0.2/16 2001:2:0:1::2/64 fe80::1/64\n",
        );
        assert_eq!(f.kernel, "6.1.0-18-amd64");
        assert_eq!(f.tools[0], ("ip".into(), Some("/usr/sbin/ip".into())));
        assert_eq!(f.tools[1], ("nft".into(), None));
        assert_eq!(f.interfaces[1].0, "c0");
        assert!(f.interfaces[1].1.contains(&"198.18.0.2".to_string()));
    }
}
