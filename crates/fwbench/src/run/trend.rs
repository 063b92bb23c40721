//! `fwbench trend PATH...`: many runs over time (the analysis is `report::trend`'s).
//! Every results file given, or found in a directory given (`*.db`), is opened
//! read-only; every run of each is one point of each of its configurations' series.
//! Exit 1 when a regression beyond `--threshold` starts the newest segment of a
//! series, 0 otherwise, 2 on bad input.

use crate::error::usage;
use anyhow::{Context, Result};
use clap::Args;
use report::trend::{By, Input, Metrics, Trend};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use store::Store;

#[derive(Args)]
pub struct TrendArgs {
    /// Results files, or directories whose `*.db` files are read (not recursively);
    /// every run of every file is one point
    #[arg(value_name = "PATH", num_args = 1.., required = true)]
    pub paths: Vec<PathBuf>,
    /// What orders the runs: time (start time), commit (fwbench's, in time order),
    /// kernel (as versions), tag:NAME (a `--tag NAME=…` given at run time; numbers
    /// and versions in their order), fact:NAME (any recorded host fact: cpu_model,
    /// cores, tool.nft, sysctl.NAME, mitigation.NAME, …)
    #[arg(long, value_name = "KEY", default_value = "time")]
    pub by: String,
    /// Metrics followed per configuration: main (its headline metric), all, or names
    /// separated by commas (received_pps,loss_ratio)
    #[arg(long, value_name = "WHICH", default_value = "main")]
    pub metrics: String,
    /// Least worsening, in %, of a regression starting the newest segment that fails
    /// (exit 1); 0: any
    #[arg(long, value_name = "PCT", default_value = "5")]
    pub threshold: String,
    /// text (for a terminal), md, json, csv, html (one figure per series)
    #[arg(long, short = 'f', default_value = "text", value_parser = ["text", "md", "json", "csv", "html"])]
    pub format: String,
    /// Output file [default: stdout]
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The results files named by `paths`: files as given, directories' `*.db` files in
/// name order. Bad input: a path that does not exist, or nothing found.
fn results_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("reading the directory {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|e| e == "db"))
                .collect();
            found.sort();
            files.extend(found);
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            return Err(usage(format!("{}: no such file or directory", p.display())));
        }
    }
    // A file named twice (a directory and one of its files) is one history: its runs
    // twice would double their samples and narrow every CI.
    let mut seen = std::collections::BTreeSet::new();
    files.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    if files.is_empty() {
        let given: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(usage(format!(
            "no results databases found in {} (a directory's are its files named *.db)",
            given.join(", ")
        )));
    }
    Ok(files)
}

fn metrics(m: &str) -> Result<Metrics> {
    Ok(match m.trim() {
        "main" => Metrics::Main,
        "all" => Metrics::All,
        list => {
            let names: Vec<String> = list
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            if names.is_empty() {
                return Err(usage(format!(
                    "--metrics {m}: main, all, or metric names separated by commas"
                )));
            }
            Metrics::Named(names)
        }
    })
}

/// Load every run of every file (bad input → exit 2), make the trend, write it, and
/// give the exit code.
pub fn trend(a: &TrendArgs) -> Result<ExitCode> {
    let by = By::parse(&a.by).map_err(usage)?;
    let threshold = super::compare::threshold(&a.threshold)?;
    let metrics = metrics(&a.metrics)?;
    let files = results_files(&a.paths)?;
    let mut loaded: Vec<(String, report::RunReport)> = Vec::new();
    for file in &files {
        let store = Store::open_read_only(file)
            .map_err(crate::error::store_error)
            .with_context(|| format!("{}", file.display()))?;
        let r = report::load(&store, None).with_context(|| format!("{}", file.display()))?;
        for run in r.runs {
            loaded.push((file.display().to_string(), run));
        }
    }
    if loaded.is_empty() {
        return Err(usage(format!(
            "no runs in the {} results file(s) found",
            files.len()
        )));
    }
    let inputs: Vec<Input> = loaded
        .iter()
        .map(|(file, run)| Input {
            file: file.clone(),
            run,
        })
        .collect();
    let t = Trend::new(&inputs, &by, &metrics, threshold);
    if t.runs.is_empty() {
        return Err(usage(no_key_why(&by, &loaded)));
    }
    if t.series.is_empty() {
        return Err(usage(format!(
            "--metrics {}: no run measured it (in {} run(s))",
            a.metrics,
            t.runs.len()
        )));
    }
    let text = match a.format.as_str() {
        "md" => t.markdown(),
        "html" => t.html(),
        "csv" => t.csv(),
        "json" => crate::output::json_text(t.json(), "trend")?,
        _ => t.text(),
    };
    if let Some(out) = a.output.as_deref().filter(|o| o.as_os_str() != "-") {
        refuse_input(out, &files)?;
    }
    crate::output::write_or_print(a.output.as_deref(), &text, "trend")?;
    let failing = t.failing();
    if !failing.is_empty() {
        eprintln!(
            "fwbench: {} regression(s) of at least {threshold} % starting the newest segment: exit 1",
            failing.len()
        );
    }
    Ok(ExitCode::from(t.exit_code()))
}

/// `--output` may not be one of the results files read.
fn refuse_input(out: &Path, files: &[PathBuf]) -> Result<()> {
    let target = std::fs::canonicalize(out).ok();
    if let Some(f) = files
        .iter()
        .find(|f| target.is_some() && std::fs::canonicalize(f).ok() == target)
    {
        return Err(usage(format!(
            "--output {}: that is the results file {} being read; trend never writes to its inputs",
            out.display(),
            f.display()
        )));
    }
    Ok(())
}

/// Why no run has the key: the keys the runs do have.
fn no_key_why(by: &By, runs: &[(String, report::RunReport)]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for (_, r) in runs {
        let names: Vec<String> = match by {
            By::Tag(_) => r.run.tags.iter().map(|(k, _)| format!("tag:{k}")).collect(),
            _ => report::trend::facts(&r.run)
                .into_iter()
                .map(|(k, _)| format!("fact:{k}"))
                .collect(),
        };
        for n in names {
            if !seen.contains(&n) {
                seen.push(n);
            }
        }
    }
    format!(
        "--by {}: no run of the {} has it; {}",
        by.name(),
        if runs.len() == 1 {
            "1 run read".to_string()
        } else {
            format!("{} runs read", runs.len())
        },
        if seen.is_empty() {
            "they have no tags (`--tag KEY=VALUE` when running)".to_string()
        } else {
            format!("they have {}", seen.join(", "))
        }
    )
}
