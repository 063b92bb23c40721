//! `fwbench compare A.db[:RUNS] B.db[:RUNS] …`: runs side by side (the statistics are
//! `report::compare`'s); a side pools the repetitions of every run of its file (or of
//! the runs named). Exit 1 when a significant regression reaches `--threshold`, else 3
//! when some change could not be tested (too few repetitions), else 0. The results
//! files are opened read-only and never written (nor is `--output` allowed to be one).

use crate::error::usage;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use store::Store;

#[derive(Args)]
pub struct CompareArgs {
    /// Results files, each with optional runs (`results.db:3`, `results.db:1,3`,
    /// `results.db:all`; default: every run of the file, repetitions of the same
    /// configuration pooled). The first is the reference; each other is compared with it.
    #[arg(value_name = "DB[:RUNS]", num_args = 2.., required = true)]
    pub sides: Vec<String>,
    /// Least worsening, in %, of a significant change that fails (exit 1); 0: any
    /// significant regression fails
    #[arg(long, value_name = "PCT", default_value = "5")]
    pub threshold: String,
    /// text (for a terminal), md, html, json
    #[arg(long, short = 'f', default_value = "text", value_parser = ["text", "md", "html", "json"])]
    pub format: String,
    /// Output file [default: stdout]
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `FILE[:RUNS]` → (file, runs; `None`: every run). RUNS is `all` or run numbers
/// separated by commas; a suffix of anything else belongs to the file name.
fn split_side(s: &str) -> Result<(PathBuf, Option<Vec<i64>>)> {
    if let Some((file, runs)) = s.rsplit_once(':') {
        if runs == "all" {
            return Ok((file.into(), None));
        }
        if !runs.is_empty() && runs.bytes().all(|b| b.is_ascii_digit() || b == b',') {
            let mut ids = Vec::new();
            for r in runs.split(',') {
                let id: i64 = r
                    .parse()
                    .map_err(|_| usage(format!("{s}: run {r:?} is not a run number")))?;
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            return Ok((file.into(), Some(ids)));
        }
    }
    Ok((s.into(), None))
}

/// `--threshold`: a percentage, 0 or more (`compare` and `trend`).
pub(super) fn threshold(t: &str) -> Result<f64> {
    let v: f64 = t.trim().trim_end_matches('%').trim().parse().map_err(|_| {
        usage(format!(
            "--threshold {t}: not a percentage (e.g. 5 or 2.5%)"
        ))
    })?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(usage(format!("--threshold {t}: must be 0 or more")));
    }
    Ok(v)
}

/// Load every side (bad input → exit 2), compare, write, and give the exit code.
pub fn compare(a: &CompareArgs) -> Result<ExitCode> {
    let threshold = threshold(&a.threshold)?;
    let mut loaded: Vec<(String, String, Vec<report::RunReport>)> = Vec::new();
    for s in &a.sides {
        let (file, runs) = split_side(s)?;
        if !file.is_file() {
            return Err(usage(format!("{}: no such results file", file.display())));
        }
        // Read only: compare never writes to a results file (no upgrade in place, no
        // recovery import; a read-only file works).
        let store = Store::open_read_only(&file).map_err(crate::error::store_error)?;
        let ids: Vec<i64> = match runs {
            Some(r) => r,
            None => store.runs()?.iter().map(|r| r.id).collect(),
        };
        if ids.is_empty() {
            return Err(usage(format!("{}: no runs in this file", file.display())));
        }
        let mut reports = Vec::new();
        for id in ids {
            let report = match report::load(&store, Some(id)) {
                Ok(r) => r,
                Err(e @ report::ReportError::NoSuchRun { .. }) => return Err(usage(e.to_string())),
                Err(e) => return Err(e.into()),
            };
            reports.push(
                report
                    .runs
                    .into_iter()
                    .next()
                    .context("the run vanished while loading")?,
            );
        }
        let canon = std::fs::canonicalize(&file).unwrap_or(file.clone());
        loaded.push((s.clone(), canon.display().to_string(), reports));
    }
    let sides: Vec<report::compare::Input> = loaded
        .iter()
        .map(|(name, file, runs)| report::compare::Input {
            name: name.clone(),
            file: file.clone(),
            runs: runs.iter().collect(),
        })
        .collect();
    let cmp = report::compare::Comparison::new(&sides, threshold);
    if cmp.matched() == 0 {
        let mut why = String::new();
        for p in &cmp.pairs {
            why.push_str(&format!(
                "\n  {} has {} configuration(s), {} has {}; none with the same parameters",
                p.old.name,
                p.only_old.len(),
                p.new.name,
                p.only_new.len()
            ));
        }
        return Err(usage(format!("nothing to compare:{why}")));
    }
    let text = match a.format.as_str() {
        "md" => cmp.markdown(),
        "html" => cmp.html(),
        "json" => crate::output::json_text(cmp.json(), "compare")?,
        _ => cmp.text(),
    };
    if let Some(out) = a.output.as_deref().filter(|o| o.as_os_str() != "-") {
        let target = std::fs::canonicalize(out).ok();
        if let Some((name, _, _)) = loaded.iter().find(|(_, file, _)| {
            target
                .as_ref()
                .is_some_and(|t| t.display().to_string() == *file)
        }) {
            return Err(usage(format!(
                "--output {}: that is the results file {name} being compared; \
                 compare never writes to its inputs",
                out.display()
            )));
        }
    }
    crate::output::write_or_print(a.output.as_deref(), &text, "comparison")?;
    if cmp.itself() {
        eprintln!(
            "fwbench: compared a run with itself (both sides are the same runs of the same file)"
        );
    }
    let failing = cmp.failing();
    let code = cmp.exit_code();
    if failing > 0 {
        eprintln!(
            "fwbench: {failing} significant regression(s) of at least {threshold} % \
             (p < {}): exit 1",
            report::compare::ALPHA
        );
    } else if code == UNTESTED {
        let worse = cmp.untested_worse();
        eprintln!(
            "fwbench: {} change(s) untested (fewer than 2 repetitions a side, or no spread){}: \
             exit {UNTESTED} (nothing may pass that was not measured; pool runs, name several \
             runs or use --repeat N)",
            cmp.untested(),
            if worse.is_empty() {
                String::new()
            } else {
                format!(
                    "; worse beyond the threshold, untested: {}",
                    worse.join("; ")
                )
            }
        );
    }
    Ok(ExitCode::from(code))
}

/// The exit code of a comparison with an untested change and no failing regression.
pub const UNTESTED: u8 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_and_thresholds_parse() {
        assert_eq!(
            split_side("a.db:3").unwrap(),
            (PathBuf::from("a.db"), Some(vec![3]))
        );
        assert_eq!(
            split_side("a.db:1,3,1").unwrap(),
            (PathBuf::from("a.db"), Some(vec![1, 3]))
        );
        assert_eq!(
            split_side("a.db:all").unwrap(),
            (PathBuf::from("a.db"), None)
        );
        assert!(split_side("a.db:1,,3").is_err());
        assert_eq!(split_side("a.db").unwrap(), (PathBuf::from("a.db"), None));
        assert_eq!(
            split_side("dir:x/a.db").unwrap(),
            (PathBuf::from("dir:x/a.db"), None)
        );
        assert_eq!(threshold("2.5%").unwrap(), 2.5);
        assert!(threshold("-1").is_err() && threshold("lots").is_err());
    }
}
