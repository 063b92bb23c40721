//! `fwbench compare A.db[:RUN] B.db[:RUN] …`: runs side by side (the statistics are
//! `report::compare`'s); exit 1 when a significant regression reaches `--threshold`.

use crate::error::usage;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use store::Store;

#[derive(Args)]
pub struct CompareArgs {
    /// Results files, each with an optional run (`results.db:3`; default: the file's
    /// newest run). The first is the reference; each other is compared with it.
    #[arg(value_name = "DB[:RUN]", num_args = 2.., required = true)]
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

/// `FILE[:RUN]` → (file, run); a suffix that is not a number belongs to the file name.
fn split_side(s: &str) -> Result<(PathBuf, Option<i64>)> {
    if let Some((file, run)) = s.rsplit_once(':') {
        if !run.is_empty() && run.bytes().all(|b| b.is_ascii_digit()) {
            let id = run
                .parse()
                .map_err(|_| usage(format!("{s}: run {run} is not a run number")))?;
            return Ok((file.into(), Some(id)));
        }
    }
    Ok((s.into(), None))
}

fn threshold(t: &str) -> Result<f64> {
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
    let mut loaded = Vec::new();
    for s in &a.sides {
        let (file, run) = split_side(s)?;
        if !file.is_file() {
            return Err(usage(format!("{}: no such results file", file.display())));
        }
        let store = Store::open(&file).map_err(|e| usage(e.to_string()))?;
        let run = match run {
            Some(r) => r,
            None => store
                .runs()?
                .iter()
                .map(|r| r.id)
                .max()
                .ok_or_else(|| usage(format!("{}: no runs in this file", file.display())))?,
        };
        let report = match report::load(&store, Some(run)) {
            Ok(r) => r,
            Err(e @ report::ReportError::NoSuchRun { .. }) => return Err(usage(e.to_string())),
            Err(e) => return Err(e.into()),
        };
        let rr = report
            .runs
            .into_iter()
            .next()
            .context("the run vanished while loading")?;
        loaded.push((format!("{}:{run}", file.display()), rr));
    }
    let sides: Vec<(String, &report::RunReport)> =
        loaded.iter().map(|(n, r)| (n.clone(), r)).collect();
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
        "json" => {
            let mut v = cmp.json();
            v["schema"] = crate::output::schema("compare").into();
            serde_json::to_string_pretty(&v)? + "\n"
        }
        _ => cmp.text(),
    };
    match &a.output {
        Some(out) if out.as_os_str() != "-" => {
            std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
            eprintln!("fwbench: comparison written to {}", out.display());
        }
        _ => print!("{text}"),
    }
    let failing = cmp.failing();
    if failing > 0 {
        eprintln!(
            "fwbench: {failing} significant regression(s) of at least {threshold} % \
             (p < {}): exit 1",
            report::compare::ALPHA
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_and_thresholds_parse() {
        assert_eq!(
            split_side("a.db:3").unwrap(),
            (PathBuf::from("a.db"), Some(3))
        );
        assert_eq!(split_side("a.db").unwrap(), (PathBuf::from("a.db"), None));
        assert_eq!(
            split_side("dir:x/a.db").unwrap(),
            (PathBuf::from("dir:x/a.db"), None)
        );
        assert_eq!(threshold("2.5%").unwrap(), 2.5);
        assert!(threshold("-1").is_err() && threshold("lots").is_err());
    }
}
