//! `fwbench rules advise --import FILE`: the rewrites `firewall::advise` proposes for
//! a user's ruleset, each with its reason, proven on probe packets; the optimised
//! ruleset written in the input's own format (plus its ipsets) with `--out`.
//!
//! Owns: the command's arguments, reading the file (through `limits`), the summary
//! (text or `-J`) and writing the output files. Must not: analyse anything itself or
//! touch firewall state (the file is never loaded on this host).

use crate::error::usage;
use anyhow::{Context, Result};
use clap::Args;
use firewall::advise::{Advice, AdviseError};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct AdviseArgs {
    /// The ruleset: `iptables-save` output (`iptables-save -c` adds the live box's
    /// counters, which move hot rules earlier where that is safe)
    #[arg(long, value_name = "FILE")]
    pub import: PathBuf,
    /// Write the optimised ruleset to FILE (for `iptables-restore`) and the sets it
    /// uses to FILE.ipset (for `ipset restore`, first); nothing is written when no
    /// safe rewrite exists
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Format of the files --out writes: `iptables` (the input's own, with its
    /// ipsets) or `nft` (FILE: the optimised ruleset, FILE.orig.nft: the original,
    /// both as nft with anonymous sets, to measure them with one engine:
    /// `fwbench flood --engine nft --import FILE`)
    #[arg(long = "as", value_name = "FORMAT", default_value = "iptables", value_parser = ["iptables", "nft"])]
    pub format: String,
    /// Print the summary as JSON
    #[arg(long, short = 'J')]
    pub json: bool,
}

/// `5-9, 12` for a list of lines.
fn lines(ls: &[usize]) -> String {
    let mut out: Vec<String> = vec![];
    let mut i = 0;
    while i < ls.len() {
        let mut j = i;
        while j + 1 < ls.len() && ls[j + 1] == ls[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", ls[i], ls[j])
        } else {
            ls[i].to_string()
        });
        i = j + 1;
    }
    if out.len() > 8 {
        let n = out.len() - 6;
        out.truncate(6);
        out.push(format!("… ({n} more)"));
    }
    out.join(", ")
}

/// The summary people read.
pub fn summary(file: &str, a: &Advice, out: Option<&str>, nft: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{file}: {} rules → {} rules; both rulesets give the same verdict (and pass the \
         same log and counter rules) for each of {} probe packets from every built-in chain",
        a.rules_before, a.rules_after, a.probes
    );
    if a.changes.is_empty() {
        let _ = writeln!(s, "no safe rewrite found: nothing changed, nothing written");
    }
    for c in &a.changes {
        let kind = serde_json::to_value(c.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  {kind:<10} {} line {}: {}",
            c.chain,
            lines(&c.lines),
            c.reason
        );
    }
    if !a.kept.is_empty() {
        let _ = writeln!(
            s,
            "left in place (the analysis cannot read them; nothing crosses them):"
        );
        for (line, why) in &a.kept {
            let _ = writeln!(s, "  line {line}: {why}");
        }
    }
    if let Some(o) = out.filter(|_| !a.changes.is_empty()) {
        if nft {
            let _ = writeln!(
                s,
                "written: {o} (optimised), {o}.orig.nft (the original), both for `nft -f`"
            );
        } else if a.ipset.is_empty() {
            let _ = writeln!(s, "written: {o} (load: iptables-restore < {o})");
        } else {
            let _ = writeln!(
                s,
                "written: {o}, {o}.ipset (load: ipset restore < {o}.ipset && iptables-restore < {o})"
            );
        }
    }
    s
}

pub fn advise(a: &AdviseArgs) -> Result<ExitCode> {
    let path = a.import.display().to_string();
    let text = crate::limits::read_user_file(&a.import, "rule import")
        .map_err(|e| usage(format!("--import {e}")))?;
    let advice = match firewall::advise::advise(&path, &text) {
        Ok(a) => a,
        Err(e @ (AdviseError::Import(_) | AdviseError::Unsupported(_))) => {
            return Err(usage(e.to_string()))
        }
        Err(e @ AdviseError::Disagree(_)) => return Err(anyhow::Error::new(e)),
    };
    let out = a.out.as_ref().map(|o| o.display().to_string());
    let write = |p: &std::ffi::OsStr, text: &str| {
        std::fs::write(p, text).with_context(|| format!("writing {}", PathBuf::from(p).display()))
    };
    if let (Some(o), false, "nft") = (&a.out, advice.changes.is_empty(), a.format.as_str()) {
        let (before, after) = advice
            .as_nft
            .as_ref()
            .map_err(|e| usage(format!("{path}: cannot be written as nft: {e}")))?;
        write(o.as_os_str(), after)?;
        let mut p = o.as_os_str().to_owned();
        p.push(".orig.nft");
        write(&p, before)?;
    } else if let (Some(o), false) = (&a.out, advice.changes.is_empty()) {
        std::fs::write(o, &advice.text).with_context(|| format!("writing {}", o.display()))?;
        if !advice.ipset.is_empty() {
            let mut p = o.as_os_str().to_owned();
            p.push(".ipset");
            std::fs::write(&p, &advice.ipset)
                .with_context(|| format!("writing {}", PathBuf::from(&p).display()))?;
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&advice)?);
    } else {
        print!(
            "{}",
            summary(&path, &advice, out.as_deref(), a.format == "nft")
        );
        if out.is_none() && !advice.changes.is_empty() {
            println!("(--out FILE writes the optimised ruleset)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn line_lists_are_ranges() {
        assert_eq!(super::lines(&[5, 6, 7, 9, 11, 12]), "5-7, 9, 11-12");
        assert_eq!(super::lines(&[]), "");
    }
}
