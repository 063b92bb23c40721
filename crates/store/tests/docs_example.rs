//! The pandas one-liner of docs/results.md (and its sqlite3 twin) run on a results.db
//! written by the store, as a user would run them: the documentation is what is tested.
//! Needs python3; the pandas line is skipped visibly (counted by scripts/test.sh) where
//! pandas is not installed (`apt-get install python3-pandas`, which scripts/setup.sh
//! installs where the distribution has it).

#[path = "../../fwbench/tests/util/skip.rs"]
mod skip;

use skip::skip;
use std::process::Command;
use store::{FirewallRow, Headline, NewRun, Store, TrialRecord};

/// The shell block after `<!-- tested: NAME` in docs/results.md.
fn documented(name: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results.md");
    let text = std::fs::read_to_string(path).unwrap();
    let at = text
        .find(&format!("<!-- tested: {name}"))
        .unwrap_or_else(|| panic!("docs/results.md has no '<!-- tested: {name}' block"));
    let rest = &text[at..];
    let start = rest.find("```sh\n").unwrap() + 6;
    let end = start + rest[start..].find("```").unwrap();
    rest[start..end].trim().to_string()
}

fn flood(
    run_id: i64,
    key: &str,
    engine: &str,
    rules: u32,
    installed: u64,
    pps: f64,
) -> TrialRecord {
    TrialRecord {
        run_id,
        trial_key: key.into(),
        rep: 1,
        workload: "flood".into(),
        status: "ok".into(),
        started_at: "t0".into(),
        finished_at: "t1".into(),
        params: serde_json::json!({"engine": engine, "rules": rules,
            "packet": {"size": {"payload": 18}, "rate": "max"}}),
        placement: serde_json::json!([]),
        headline: Headline {
            received_pps: Some(pps),
            ..Default::default()
        },
        firewall: Some(FirewallRow {
            engine: engine.into(),
            rules_installed: installed,
            ..Default::default()
        }),
        results: serde_json::json!({}),
        ..Default::default()
    }
}

/// nft with 1000 rules asked (1001 installed) three times, nft-set with 1000 asked (2
/// installed) once, a failed trial that must not count.
fn results_db(dir: &std::path::Path) {
    let mut s = Store::open(&dir.join("results.db")).unwrap();
    let run = s.begin_run(&NewRun::default()).unwrap();
    for (i, pps) in [100_000.0, 300_000.0, 200_000.0].into_iter().enumerate() {
        s.insert_trial(&flood(run, &format!("n{i}"), "nft", 1000, 1001, pps))
            .unwrap();
    }
    s.insert_trial(&flood(run, "s", "nft-set", 1000, 2, 700_000.0))
        .unwrap();
    let mut failed = flood(run, "f", "nft", 1000, 1001, 9e9);
    failed.status = "failed".into();
    s.insert_trial(&failed).unwrap();
}

fn run(dir: &std::path::Path, line: &str) -> (bool, String, String) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .output()
        .expect("sh");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn documented_sqlite3_line_groups_by_rules_requested() {
    let dir = tempfile::tempdir().unwrap();
    results_db(dir.path());
    let (ok, out, err) = run(dir.path(), &documented("sqlite3"));
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        ["nft 1000 200000.0", "nft-set 1000 700000.0"],
        "{out}"
    );
}

#[test]
fn documented_pandas_line_gives_the_median_per_engine_and_rules() {
    // The first python3 on PATH may be another installation (pyenv) than the system's,
    // which is the one `apt-get install python3-pandas` gives pandas to.
    let Some(python) = ["python3", "/usr/bin/python3"].into_iter().find(|py| {
        Command::new(py)
            .args(["-c", "import pandas"])
            .status()
            .is_ok_and(|s| s.success())
    }) else {
        return skip("pandas not installed (apt-get install python3-pandas)");
    };
    let dir = tempfile::tempdir().unwrap();
    results_db(dir.path());
    let line = documented("pandas");
    let line = match line.strip_prefix("python3") {
        Some(rest) => format!("{python}{rest}"),
        None => line,
    };
    let (ok, out, err) = run(dir.path(), &line);
    assert!(ok, "{err}");
    // pandas prints a Series: one row per (engine, rules_requested), the median.
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .filter(|w: &Vec<&str>| w.len() == 3 && w[0].starts_with("nft"))
        .collect();
    assert_eq!(
        rows,
        [["nft", "1000", "200000.0"], ["nft-set", "1000", "700000.0"]],
        "{out}"
    );
}
