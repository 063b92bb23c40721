//! `fwbench report DB`: read a results file (never writing to it) and write a report.

use crate::error::usage;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use store::Store;

/// `fwbench report DB`: read the results file (never writing to it) and write one
/// report. A missing file or one that is not fwbench's is bad input (exit 2).
pub fn write_report(a: &crate::run::report::ReportArgs) -> Result<ExitCode> {
    let opts = report::figure::Options {
        reference: reference(a.reference.as_deref())?,
    };
    if !a.db.is_file() {
        return Err(usage(format!("{}: no such results file", a.db.display())));
    }
    let store = Store::open(&a.db).map_err(|e| usage(e.to_string()))?;
    let report = match report::load_with(&store, a.run, &opts) {
        Ok(r) => r,
        Err(e @ report::ReportError::NoSuchRun { .. }) => return Err(usage(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    let (text, default) = match a.format.as_str() {
        "md" => (report.markdown(), "report.md"),
        "csv" => (report.csv_trials(), "trials.csv"),
        "json" => (serde_json::to_string_pretty(&report.json())?, "report.json"),
        "samples" => (report.csv_samples(&store)?, "samples.csv"),
        _ => (report.html(), "report.html"),
    };
    let out = a.output.clone().unwrap_or_else(|| default.into());
    if out.as_os_str() == "-" {
        print!("{text}");
    } else {
        std::fs::write(&out, text).with_context(|| format!("writing {}", out.display()))?;
        let warnings = report.warnings().count();
        eprintln!(
            "fwbench: report of {} run(s) written to {}{}",
            report.runs.len(),
            out.display(),
            if warnings > 0 {
                format!(" ({warnings} warnings: see its Warnings section)")
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--reference ENGINE[/FAMILY]`, checked for shape (whether it ran is per run: the
/// report says so where it is missing).
fn reference(r: Option<&str>) -> Result<Option<String>> {
    let Some(r) = r else { return Ok(None) };
    let ok = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    match r.split_once('/') {
        Some((e, f)) if ok(e) && ok(f) => Ok(Some(r.into())),
        None if ok(r) => Ok(Some(r.into())),
        _ => Err(usage(format!(
            "--reference {r:?}: expected ENGINE or ENGINE/FAMILY (e.g. nft, nft/ip, iptables-legacy)"
        ))),
    }
}

#[derive(Args)]
pub struct ReportArgs {
    /// Results database (from `fwbench run`, `echo`, `flood`, …)
    pub db: PathBuf,
    /// Output file; `-` for stdout [default: report.html, report.md, trials.csv,
    /// report.json, samples.csv by format]
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// html (figures as inline SVG), md, csv (one row per trial), json (configurations
    /// with statistics and fits), samples (CSV of the metric samples)
    #[arg(long, short = 'f', default_value = "html", value_parser = ["html", "md", "csv", "json", "samples"])]
    pub format: String,
    /// Only this run (default: every run in the file)
    #[arg(long)]
    pub run: Option<i64>,
    /// Reference engine of the advantage ratio, ENGINE or ENGINE/FAMILY (nft/ip)
    /// [default: the study's, nft (inet first)]
    #[arg(long, value_name = "ENGINE[/FAMILY]")]
    pub reference: Option<String>,
}
