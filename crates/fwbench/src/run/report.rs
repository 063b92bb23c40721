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
    if !a.db.is_file() {
        return Err(usage(format!("{}: no such results file", a.db.display())));
    }
    let store = Store::open(&a.db).map_err(|e| usage(e.to_string()))?;
    let report = match report::load(&store, a.run) {
        Ok(r) => r,
        Err(e @ report::ReportError::NoSuchRun { .. }) => return Err(usage(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    if let Some(dir) = &a.figures {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let files = report::files::figure_files(&report);
        for f in &files {
            let path = dir.join(&f.name);
            std::fs::write(&path, &f.text)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        eprintln!(
            "fwbench: {} figure(s) as SVG + CSV written to {} (see its index.csv)",
            (files.len() - 1) / 2,
            dir.display()
        );
        if a.output.is_none() {
            return Ok(ExitCode::SUCCESS);
        }
    }
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
    /// Write each figure as a standalone SVG and the CSV of its points into DIR
    /// (`run<RUN>-<figure>.svg`/`.csv`, listed in `index.csv`); the report itself is
    /// then written only when -o is given
    #[arg(long, value_name = "DIR")]
    pub figures: Option<PathBuf>,
    /// Only this run (default: every run in the file)
    #[arg(long)]
    pub run: Option<i64>,
}
