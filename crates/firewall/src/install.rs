//! Installer: apply a rendered rule set in the current network namespace (the
//! gateway agent runs inside the gateway's), timed and verified; read the counters
//! of fwbench's rules back; remove exactly what was applied.
//!
//! Isolation: only `table inet fwbench`, chains `FWBENCH-*` and sets `fwbench-*` are
//! ever created, read or removed. Before installing, a marker file records the
//! removal batches; it is deleted after a successful removal, so a crashed run is
//! cleaned up by the next one in the same namespace ([`clean_leftovers`]).

use crate::model::{Engine, Hook, Ip, Role};
use crate::render::{ipt_chain, nft_chain, Backend, Batch, Rendered, IPSET_PREFIX, NFT_TABLE};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{tool} not found: install it with `apt-get install {package}`")]
    MissingTool { tool: String, package: String },
    #[error("`{argv}` rejected the rule set ({status}):\n{stderr}")]
    Rejected {
        argv: String,
        status: String,
        stderr: String,
    },
    #[error("rule set verification failed: expected {expect_rules} rules and {expect_elements} set elements, found {rules} rules and {elements} elements")]
    CountMismatch {
        expect_rules: usize,
        expect_elements: usize,
        rules: usize,
        elements: usize,
    },
    #[error("{0}")]
    Io(String),
}

/// Find a program in PATH (plus the sbin directories root usually has).
pub fn which(prog: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        .map(|d| PathBuf::from(d).join(prog))
        .find(|p| p.is_file());
    found
}

/// Check that every tool a rendered rule set needs is installed.
pub fn check_tools(r: &Rendered) -> Result<(), InstallError> {
    for b in r.install.iter().chain(&r.remove) {
        let prog = b.tool.argv()[0];
        if which(prog).is_none() {
            return Err(InstallError::MissingTool {
                tool: prog.into(),
                package: b.tool.package().into(),
            });
        }
    }
    Ok(())
}

fn run(argv: &[&str], stdin: Option<&str>) -> Result<String, InstallError> {
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => InstallError::MissingTool {
                tool: argv[0].into(),
                package: package_of(argv[0]).into(),
            },
            _ => InstallError::Io(format!("running {}: {e}", argv[0])),
        })?;
    if let (Some(text), Some(mut w)) = (stdin, child.stdin.take()) {
        // A tool that dies early closes its stdin; its stderr then says why.
        let _ = w.write_all(text.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| InstallError::Io(format!("waiting for {}: {e}", argv[0])))?;
    if !out.status.success() {
        return Err(InstallError::Rejected {
            argv: argv.join(" "),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn package_of(prog: &str) -> &'static str {
    if prog.starts_with("nft") {
        "nftables"
    } else if prog.starts_with("ipset") {
        "ipset"
    } else {
        "iptables"
    }
}

fn apply(b: &Batch) -> Result<(), InstallError> {
    run(&b.tool.argv(), Some(&b.text)).map(|_| ())
}

fn marker_path() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata("/proc/self/ns/net").ok()?.ino();
    Some(PathBuf::from(format!(
        "/run/fwbench/markers/netns-{ino}.json"
    )))
}

fn write_marker(r: &Rendered) {
    if let Some(p) = marker_path() {
        if let Some(dir) = p.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(json) = serde_json::to_string(&r.remove) {
            let _ = std::fs::write(p, json);
        }
    }
}

fn clear_marker() {
    if let Some(p) = marker_path() {
        let _ = std::fs::remove_file(p);
    }
}

/// A rule set that is installed; remove it with [`Installed::remove`].
#[derive(Debug)]
pub struct Installed {
    pub rendered: Rendered,
    pub install_ms: f64,
    pub rules: usize,
    pub elements: usize,
}

/// Apply, time and verify. On any failure, whatever was applied is removed again.
pub fn install(r: &Rendered) -> Result<Installed, InstallError> {
    check_tools(r)?;
    write_marker(r);
    let t0 = Instant::now();
    for b in &r.install {
        if let Err(e) = apply(b) {
            remove_batches(&r.remove);
            clear_marker();
            return Err(e);
        }
    }
    let install_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (rules, elements) = match count(r.engine, r.ip) {
        Ok(c) => c,
        Err(e) => {
            remove_batches(&r.remove);
            clear_marker();
            return Err(e);
        }
    };
    if rules != r.expect_rules || elements != r.expect_elements {
        remove_batches(&r.remove);
        clear_marker();
        return Err(InstallError::CountMismatch {
            expect_rules: r.expect_rules,
            expect_elements: r.expect_elements,
            rules,
            elements,
        });
    }
    Ok(Installed {
        rendered: r.clone(),
        install_ms,
        rules,
        elements,
    })
}

/// Best effort: apply each removal batch, ignoring "does not exist" failures.
fn remove_batches(batches: &[Batch]) -> Option<InstallError> {
    let mut first = None;
    for b in batches {
        if let Err(e) = apply(b) {
            first.get_or_insert(e);
        }
    }
    first
}

impl Installed {
    /// Remove the rule set; returns the time it took in ms.
    pub fn remove(self) -> Result<f64, InstallError> {
        let t0 = Instant::now();
        let err = remove_batches(&self.rendered.remove);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let (rules, elements) =
            count(self.rendered.engine, self.rendered.ip).unwrap_or((usize::MAX, 0));
        if rules == 0 && elements == 0 {
            clear_marker();
            return Ok(ms);
        }
        Err(err.unwrap_or(InstallError::Io(format!(
            "after removal {rules} fwbench rules and {elements} set elements remain"
        ))))
    }
}

/// Remove what a crashed run left in this namespace (from its marker). Returns
/// whether anything was cleaned.
pub fn clean_leftovers() -> bool {
    let Some(p) = marker_path() else { return false };
    let Ok(text) = std::fs::read_to_string(&p) else {
        return false;
    };
    if let Ok(batches) = serde_json::from_str::<Vec<Batch>>(&text) {
        remove_batches(&batches);
    }
    let _ = std::fs::remove_file(p);
    true
}

/// (rules, set elements) of fwbench's own objects for an engine, read back from the kernel.
pub fn count(engine: Engine, ip: Ip) -> Result<(usize, usize), InstallError> {
    match engine {
        Engine::None => Ok((0, 0)),
        Engine::Nft | Engine::NftSet => {
            let c = nft_counters()?;
            Ok((c.rules.iter().map(|(_, v)| v.len()).sum(), c.elements))
        }
        Engine::IptablesLegacy | Engine::IptablesNft | Engine::IpsetLegacy | Engine::IpsetNft => {
            let backend = backend_of(engine);
            let rules = ipt_counters(ip, backend)?
                .iter()
                .map(|(_, v)| v.len())
                .sum();
            let elements = if matches!(engine, Engine::IpsetLegacy | Engine::IpsetNft) {
                ipset_elements()?
            } else {
                0
            };
            Ok((rules, elements))
        }
    }
}

fn backend_of(engine: Engine) -> Backend {
    match engine {
        Engine::IptablesLegacy | Engine::IpsetLegacy => Backend::Legacy,
        _ => Backend::Nft,
    }
}

/// Packet counters of fwbench's rules, per chain in rule order.
struct Counters {
    rules: Vec<(String, Vec<u64>)>,
    elements: usize,
}

fn nft_counters() -> Result<Counters, InstallError> {
    let out = match run(&["nft", "-j", "list", "table", "inet", NFT_TABLE], None) {
        Ok(o) => o,
        // No table: nothing of ours is installed.
        Err(InstallError::Rejected { stderr, .. }) if stderr.contains("No such file") => {
            return Ok(Counters {
                rules: vec![],
                elements: 0,
            })
        }
        Err(e) => return Err(e),
    };
    let v: serde_json::Value = serde_json::from_str(&out)
        .map_err(|e| InstallError::Io(format!("parsing `nft -j list table`: {e}")))?;
    let mut rules: Vec<(String, Vec<u64>)> = Vec::new();
    let mut elements = 0;
    for item in v["nftables"].as_array().into_iter().flatten() {
        if let Some(r) = item.get("rule") {
            let chain = r["chain"].as_str().unwrap_or("").to_owned();
            let packets = r["expr"]
                .as_array()
                .into_iter()
                .flatten()
                .find_map(|e| e.get("counter").and_then(|c| c["packets"].as_u64()))
                .unwrap_or(0);
            match rules.iter_mut().find(|(c, _)| *c == chain) {
                Some((_, v)) => v.push(packets),
                None => rules.push((chain, vec![packets])),
            }
        } else if let Some(s) = item.get("set") {
            elements += s["elem"].as_array().map(|a| a.len()).unwrap_or(0);
        }
    }
    Ok(Counters { rules, elements })
}

fn save_argv(ip: Ip, backend: Backend) -> &'static str {
    match (ip, backend) {
        (Ip::V4, Backend::Legacy) => "iptables-legacy-save",
        (Ip::V6, Backend::Legacy) => "ip6tables-legacy-save",
        (Ip::V4, Backend::Nft) => "iptables-nft-save",
        (Ip::V6, Backend::Nft) => "ip6tables-nft-save",
    }
}

/// `-A FWBENCH-*` rules with their packet counters, from `*-save -c`.
fn ipt_counters(ip: Ip, backend: Backend) -> Result<Vec<(String, Vec<u64>)>, InstallError> {
    let out = run(&[save_argv(ip, backend), "-c"], None)?;
    Ok(parse_save_counters(&out))
}

/// Parse `iptables-save -c` output: `[pkts:bytes] -A CHAIN …` for fwbench's chains.
pub fn parse_save_counters(out: &str) -> Vec<(String, Vec<u64>)> {
    let mut rules: Vec<(String, Vec<u64>)> = Vec::new();
    for line in out.lines() {
        let (counter, rest) = match line.strip_prefix('[').and_then(|l| l.split_once("] ")) {
            Some((c, rest)) => (c, rest),
            None => ("0:0", line),
        };
        let Some(rest) = rest.strip_prefix("-A ") else {
            continue;
        };
        let chain = rest.split_whitespace().next().unwrap_or("");
        if !chain.starts_with("FWBENCH-") {
            continue;
        }
        let packets = counter
            .split(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        match rules.iter_mut().find(|(c, _)| c == chain) {
            Some((_, v)) => v.push(packets),
            None => rules.push((chain.to_owned(), vec![packets])),
        }
    }
    rules
}

fn ipset_elements() -> Result<usize, InstallError> {
    let names = match run(&["ipset", "list", "-n"], None) {
        Ok(o) => o,
        Err(InstallError::MissingTool { .. }) => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut total = 0;
    for name in names.lines().filter(|n| n.starts_with(IPSET_PREFIX)) {
        let out = run(&["ipset", "list", "-t", name], None)?;
        total += out
            .lines()
            .find_map(|l| l.strip_prefix("Number of entries:"))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(0);
    }
    Ok(total)
}

/// What the counters say about the trial's traffic versus what the model expects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Verdicts {
    /// Packets counted by rules that match the test traffic.
    pub matched_packets: u64,
    /// Match rules that saw no packet (expected: 0).
    pub idle_match_rules: usize,
    /// Packets counted by filler rules (expected: 0).
    pub filler_packets: u64,
    /// Packets dropped by a drop policy (expected: 0 for the study's models).
    pub policy_drops: u64,
    pub ok: bool,
    pub problems: Vec<String>,
}

/// Read counters and compare with the rendered layout.
pub fn verdicts(r: &Rendered) -> Result<Verdicts, InstallError> {
    let chains: Vec<(String, Vec<u64>)> = match r.engine {
        Engine::None => {
            return Ok(Verdicts {
                ok: true,
                ..Default::default()
            })
        }
        Engine::Nft | Engine::NftSet => nft_counters()?.rules,
        e => ipt_counters(r.ip, backend_of(e))?,
    };
    let name = |h: Hook| -> &'static str {
        match r.engine {
            Engine::Nft | Engine::NftSet => nft_chain(h),
            _ => ipt_chain(h),
        }
    };
    Ok(judge(r, |h| {
        chains
            .iter()
            .find(|(c, _)| c == name(h))
            .map(|(_, v)| v.clone())
    }))
}

/// Pure part of [`verdicts`]: `counters(hook)` gives that chain's packet counts.
pub fn judge(r: &Rendered, counters: impl Fn(Hook) -> Option<Vec<u64>>) -> Verdicts {
    let mut v = Verdicts::default();
    for chain in &r.layout {
        let Some(c) = counters(chain.hook) else {
            v.problems
                .push(format!("chain for {:?} not found", chain.hook));
            continue;
        };
        if c.len() != chain.roles.len() {
            v.problems.push(format!(
                "{:?}: {} rules installed, {} expected",
                chain.hook,
                c.len(),
                chain.roles.len()
            ));
            continue;
        }
        for (role, p) in chain.roles.iter().zip(c) {
            match role {
                Role::Match => {
                    v.matched_packets += p;
                    if p == 0 {
                        v.idle_match_rules += 1;
                    }
                }
                Role::Filler => v.filler_packets += p,
                Role::Policy => v.policy_drops += p,
                Role::Guard => {}
            }
        }
    }
    if v.filler_packets > 0 {
        v.problems
            .push(format!("filler rules matched {} packets", v.filler_packets));
    }
    if v.idle_match_rules > 0 {
        v.problems.push(format!(
            "{} matching rules saw no packet",
            v.idle_match_rules
        ));
    }
    if v.policy_drops > 0 {
        v.problems.push(format!(
            "the drop policy dropped {} packets",
            v.policy_drops
        ));
    }
    v.ok = v.problems.is_empty();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::ChainLayout;

    #[test]
    fn save_counters_parsed_for_own_chains_only() {
        let out = "*filter\n:FORWARD ACCEPT [0:0]\n:FWBENCH-FORWARD - [0:0]\n\
                   [7:420] -A FORWARD -j FWBENCH-FORWARD\n\
                   [0:0] -A FWBENCH-FORWARD -s 192.0.2.1/32 -p udp -m udp --dport 1 -j DROP\n\
                   [7:420] -A FWBENCH-FORWARD -s 198.18.0.0/16 -p udp -j ACCEPT\n\
                   [3:1] -A OTHER -j ACCEPT\nCOMMIT\n";
        assert_eq!(
            parse_save_counters(out),
            vec![("FWBENCH-FORWARD".to_string(), vec![0, 7])]
        );
    }

    fn rendered(roles: Vec<Role>) -> Rendered {
        Rendered {
            engine: Engine::Nft,
            ip: Ip::V4,
            install: vec![],
            remove: vec![],
            expect_rules: roles.len(),
            expect_elements: 0,
            layout: vec![ChainLayout {
                hook: Hook::FilterForward,
                roles,
            }],
        }
    }

    #[test]
    fn judge_flags_each_mismatch() {
        let r = rendered(vec![Role::Filler, Role::Match, Role::Match, Role::Policy]);
        let ok = judge(&r, |_| Some(vec![0, 10, 5, 0]));
        assert!(ok.ok, "{ok:?}");
        assert_eq!(ok.matched_packets, 15);
        let bad = judge(&r, |_| Some(vec![2, 10, 0, 4]));
        assert!(!bad.ok);
        assert_eq!(bad.problems.len(), 3, "{:?}", bad.problems);
        let missing = judge(&r, |_| None);
        assert!(!missing.ok);
        let short = judge(&r, |_| Some(vec![0]));
        assert!(short.problems[0].contains("1 rules installed, 4 expected"));
    }
}
