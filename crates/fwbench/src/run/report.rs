//! `fwbench report DB`: read a results file (never writing to it) and write a report.

use crate::error::usage;
use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
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
    if let Some(out) = &a.output {
        refuse_same_file(&a.db, out, "-o")?;
    }
    // Read-only: a report never writes to its input (an old schema is upgraded in
    // memory). A corrupt file is bad input: exit 2, naming the file.
    let store = Store::open_read_only(&a.db).map_err(crate::error::store_error)?;
    let report = report::load_with(&store, a.run, &opts).map_err(|e| usage(e.to_string()))?;
    if a.text {
        print!("{}", report.text());
        if a.output.is_none() && a.figures.is_none() {
            return Ok(ExitCode::SUCCESS);
        }
    }
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
        "tables" => (report.markdown_tables(), "tables.md"),
        "csv" => (report.csv_trials(), "trials.csv"),
        "json" => (serde_json::to_string_pretty(&report.json())?, "report.json"),
        "samples" => (
            report
                .csv_samples(&store)
                .map_err(|e| usage(e.to_string()))?,
            "samples.csv",
        ),
        "openmetrics" => {
            let (text, left_out) = report.openmetrics();
            for why in left_out {
                eprintln!("fwbench: openmetrics: {why}");
            }
            (text, "metrics.om.txt")
        }
        _ => (report.html(), "report.html"),
    };
    let out = a.output.clone().unwrap_or_else(|| default.into());
    refuse_same_file(&a.db, &out, "the report")?;
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

/// Bad input (exit 2) if writing `out` would overwrite the results file `db`: the
/// same path, a symbolic link to it or a hard link of it (same device and inode).
pub fn refuse_same_file(db: &Path, out: &Path, what: &str) -> Result<()> {
    if out.as_os_str() == "-" {
        return Ok(());
    }
    if same_file(db, out) {
        return Err(usage(format!(
            "{what} {} is the results file {} itself: writing it would destroy the results; choose another output file",
            out.display(),
            db.display()
        )));
    }
    Ok(())
}

/// Whether two paths name one file: by device and inode when both exist, else by
/// their resolved paths (a dangling link to where the other will be created).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return ma.dev() == mb.dev() && ma.ino() == mb.ino();
    }
    match (resolve(a), resolve(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// An absolute path with symbolic links resolved, also for a path that does not
/// exist yet (its directory is resolved; a dangling link is followed).
fn resolve(p: &Path) -> Option<PathBuf> {
    let mut p = std::path::absolute(p).ok()?;
    for _ in 0..40 {
        if let Ok(c) = p.canonicalize() {
            return Some(c);
        }
        let dir = p.parent()?.canonicalize().ok()?;
        let name = p.file_name()?.to_owned();
        match std::fs::read_link(dir.join(&name)) {
            Ok(target) => p = dir.join(target),
            Err(_) => return Some(dir.join(name)),
        }
    }
    None
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
    /// report.json, samples.csv, metrics.om.txt by format]
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// html (figures as inline SVG), md, tables (each run's findings and tables as
    /// Markdown with run, date, commit and machine: docs/seeds.md's tables), csv (one
    /// row per trial), json (configurations with statistics and fits), samples (CSV of
    /// the metric samples), openmetrics (every ok trial's metrics in the OpenMetrics
    /// text format, for Prometheus/VictoriaMetrics and Grafana: docs/dashboards.md)
    #[arg(long, short = 'f', default_value = "html", value_parser = ["html", "md", "tables", "csv", "json", "samples", "openmetrics"])]
    pub format: String,
    /// Write each figure as a standalone SVG and the CSV of its points into DIR
    /// (`run<RUN>-<figure>.svg`/`.csv`, listed in `index.csv`); the report itself is
    /// then written only when -o is given
    #[arg(long, value_name = "DIR")]
    pub figures: Option<PathBuf>,
    /// Only this run (default: every run in the file)
    #[arg(long)]
    pub run: Option<i64>,
    /// Reference engine of the advantage ratio, ENGINE or ENGINE/FAMILY (nft/ip)
    /// [default: the study's, nft (inet first)]
    #[arg(long, value_name = "ENGINE[/FAMILY]")]
    pub reference: Option<String>,
    /// Print each run's findings (costs with their CIs, flags) and warnings as text on
    /// stdout — the answer; the report itself is then written only when -o is given
    #[arg(long)]
    pub text: bool,
}

/// What the gateway of an ephemeral testbed kept after a trial (a legacy table that
/// iptables-legacy cannot remove), said once per run with what fwbench does about it.
pub fn say_gateway_residue_once(left: &[String]) {
    eprintln!(
        "fwbench: after a trial the gateway kept {} (a legacy table cannot be removed); \
         fwbench replaces the testbed after each such trial, so the next one starts clean \
         (said once per run)",
        left.join(", ")
    );
}

/// After `fwbench run`: the run's findings and warnings on stdout, then (when no
/// report follows) where the details are. A report that cannot be made is said on
/// stderr; the results stay stored.
pub fn print_findings(store: &Store, run_id: i64, db: &Path, report_follows: bool) {
    match report::load(store, Some(run_id)) {
        Ok(r) => {
            println!("\n{}", r.text().trim_end());
            if !report_follows {
                println!("Details: fwbench report {}", db.display());
            }
        }
        Err(e) => eprintln!(
            "fwbench: no findings for run {run_id}: {e} (run `fwbench report {}`)",
            db.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_file_sees_through_links_and_spellings() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let db = d.join("base.db");
        std::fs::write(&db, b"x").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink(&db, d.join("link.db")).unwrap();
        std::fs::hard_link(&db, d.join("hard.db")).unwrap();
        assert!(same_file(&db, &db));
        assert!(same_file(&db, &d.join("sub/../base.db")));
        assert!(same_file(&db, &d.join("link.db")));
        assert!(same_file(&db, &d.join("hard.db")));
        assert!(!same_file(&db, &d.join("other.html")));
        // Neither exists yet (`run --db X --report X` before the run).
        let new = d.join("new.db");
        assert!(same_file(&new, &d.join("sub/../new.db")));
        std::os::unix::fs::symlink(&new, d.join("dangling")).unwrap();
        assert!(same_file(&new, &d.join("dangling")));
        assert!(!same_file(&new, &d.join("new.html")));
        let e = refuse_same_file(&db, &d.join("link.db"), "-o").unwrap_err();
        assert!(e.to_string().contains("base.db"), "{e}");
        assert!(refuse_same_file(&db, Path::new("-"), "-o").is_ok());
    }
}
