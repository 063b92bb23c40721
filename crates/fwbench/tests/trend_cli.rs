//! `fwbench trend` and `--tag` without root: synthetic histories of results files
//! (one run each, labelled `run=N`) — a planted step found at its run and exit 1, a
//! flat history exit 0, every format, the tags in `report`, and bad input exiting 2.

mod util;

use serde_json::{json, Value};
use std::path::Path;
use store::{Headline, KindRow, NewRun, Store, TrialRecord};
use util::*;

/// Deterministic ±1 % "noise" by run and repetition.
fn ripple(i: u32) -> f64 {
    [1.0, 1.01, 0.99, 1.005, 0.995, 1.008, 0.992][i as usize % 7]
}

/// One results file with one run tagged `run=N`: a flood at 100 rules, 3 repetitions
/// of `pps` (± ripple).
fn write_run(path: &Path, n: u32, pps: f64) {
    write_configs(path, n, &[(100, pps, json!({}))]);
}

/// The same with a flood per `(rules, pps, results)`, 3 repetitions each.
fn write_configs(path: &Path, n: u32, configs: &[(u32, f64, Value)]) {
    write_wobbling(path, n, configs, ripple)
}

/// The same, repetition `i`'s rate times `wobble(i)`.
fn write_wobbling(path: &Path, n: u32, configs: &[(u32, f64, Value)], wobble: fn(u32) -> f64) {
    let mut s = Store::open(path).unwrap();
    let run = s
        .begin_run(&NewRun {
            started_at: format!("2026-01-01T00:{:02}:00Z", 60 - n.min(59)),
            scenario: "flood".into(),
            seed: 7,
            command: "fwbench flood".into(),
            host: store::Host {
                hostname: "bench1".into(),
                kernel: "6.18.0".into(),
                cpu_model: "Test CPU".into(),
                cores: 2,
                fwbench_version: "0.1.0 (commit abc, built 2026-11-28)".into(),
                ..Default::default()
            },
            tags: vec![("run".into(), n.to_string())],
            ..Default::default()
        })
        .unwrap();
    for (rep, &(rules, pps, ref results)) in
        (0..3).flat_map(|r| configs.iter().map(move |c| (r, c)))
    {
        let v = pps * wobble(n * 3 + rep);
        s.insert_trial(&TrialRecord {
            run_id: run,
            trial_key: format!("k-{rules}-{rep}"),
            rep,
            workload: "flood".into(),
            status: "ok".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            finished_at: "2026-01-01T00:00:01Z".into(),
            params: json!({"workload": "flood", "engine": "nft", "rules": rules,
                           "duration_s": 1.0, "seed": rep}),
            placement: json!({}),
            headline: Headline {
                received_pps: Some(v),
                sent_pps: Some(1.2e6),
                ..Default::default()
            },
            kind: Some(KindRow {
                family: "packet".into(),
                main_metric: Some("received_pps".into()),
                main_higher: true,
            }),
            results: results.clone(),
            ..Default::default()
        })
        .unwrap();
    }
    s.finish_run(run, "2026-01-01T01:00:00Z", "complete")
        .unwrap();
}

/// 20 files, runs 1…20; from run `step` on, the rate times `factor`.
fn history(dir: &TempDir, step: u32, factor: f64) {
    for n in 1..=20 {
        let pps = if n >= step { 1e6 * factor } else { 1e6 };
        write_run(&dir.file(&format!("h{n:02}.db")), n, pps);
    }
}

/// A planted step (−40 % from run 11) in a directory of 20 files: exactly one change
/// point, a regression at run=11 (the runs ordered as numbers: 2 before 11), exit 1;
/// every format says so.
#[test]
fn a_planted_step_is_one_regression_at_its_run_and_exits_1() {
    let dir = TempDir::new();
    history(&dir, 11, 0.6);
    let d = dir.path().to_str().unwrap();
    let o = fwbench(&["trend", d, "--by", "tag:run"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(out.contains("REGRESSION at tag:run=11"), "{out}");
    assert!(out.contains("exit 1."), "{out}");
    let o = fwbench(&["trend", d, "--by", "tag:run", "-f", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["schema"].as_str().unwrap(), "fwbench/trend/1");
    let keys: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    let want: Vec<String> = (1..=20).map(|n| n.to_string()).collect();
    assert_eq!(keys, want);
    let series = v["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{v}");
    let changes = series[0]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let c = &changes[0];
    assert_eq!(
        (c["kind"].as_str(), c["key"].as_str(), c["fails"].as_bool()),
        (Some("regression"), Some("11"), Some(true))
    );
    assert!((c["pct"].as_f64().unwrap() + 40.0).abs() < 1.0, "{c}");
    let segs = series[0]["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 2);
    assert!((segs[1]["mean"].as_f64().unwrap() / 6e5 - 1.0).abs() < 0.01);
    // Above the threshold only: a 50 % threshold lets it pass (exit 0), still shown.
    let o = fwbench(&["trend", d, "--by", "tag:run", "--threshold", "50"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("regression at tag:run=11"));
    // CSV: a row per point, the change on run 11's.
    let o = fwbench(&["trend", d, "--by", "tag:run", "-f", "csv"]);
    let csv = stdout(&o);
    assert_eq!(csv.lines().count(), 21, "{csv}");
    let row11 = csv.lines().find(|l| l.contains(",11,")).unwrap();
    assert!(row11.contains(",regression,"), "{row11}");
    // Markdown and the page: one figure, the change marked with its key, no URL.
    let md = stdout(&fwbench(&["trend", d, "--by", "tag:run", "-f", "md"]));
    assert!(md.contains("**REGRESSION**"), "{md}");
    let page = dir.file("trend.html");
    let o = fwbench(&[
        "trend",
        d,
        "--by",
        "tag:run",
        "-f",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg").count(), 1);
    assert!(html.contains("regression tag:run=11"), "marker label");
    assert!(!html.contains("http://") && !html.contains("https://"));
}

/// A search's steps (`--load`'s capacity probes: `results.step_of`) are its guesses,
/// no configuration asked for: trend follows none of them, as compare does, and says
/// so — a −40 % step among them is no regression (exit 0) beside a flat flood.
#[test]
fn a_searchs_steps_are_not_followed() {
    let dir = TempDir::new();
    for n in 1..=20 {
        let probe = if n >= 11 { 6e5 } else { 1e6 };
        let configs = [
            (100, 1e6, json!({})),
            (200, probe, json!({"step_of": "capacity"})),
        ];
        write_configs(&dir.file(&format!("h{n:02}.db")), n, &configs);
    }
    let d = dir.path().to_str().unwrap();
    let o = fwbench(&["trend", d, "--by", "tag:run", "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let series = v["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{v}");
    assert!(series[0]["changes"].as_array().unwrap().is_empty(), "{v}");
    let skipped = v["skipped"].to_string();
    assert!(
        skipped.contains("1 configuration whose every repetition was a search's step"),
        "{skipped}"
    );
}

/// The same history without a step: no change point, exit 0; ordered by time instead
/// (the default) the runs come in their start order.
#[test]
fn a_flat_history_has_no_change_point_and_exits_0() {
    let dir = TempDir::new();
    history(&dir, 99, 1.0);
    let d = dir.path().to_str().unwrap();
    let o = fwbench(&["trend", d, "--by", "tag:run", "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["series"][0]["changes"].as_array().unwrap().is_empty());
    let o = fwbench(&["trend", d, "-f", "json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // Started later for a smaller run number (write_run): time order is 20 … 1.
    assert_eq!(
        v["runs"][0]["key"].as_str().unwrap(),
        v["runs"][0]["started_at"].as_str().unwrap()
    );
    assert_eq!(v["runs"][0]["tags"]["run"], "20");
}

/// `--tag` is kept with the run: `report` shows it in the run header and its JSON.
#[test]
fn tags_are_shown_by_report() {
    let (_dir, db) = TempDir::with_file("t.db");
    write_run(&db, 7, 1e6);
    let o = fwbench(&["report", db.to_str().unwrap(), "-f", "json", "-o", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["runs"][0]["run"]["tags"]["run"], "7", "{v}");
    let md = stdout(&fwbench(&[
        "report",
        db.to_str().unwrap(),
        "-f",
        "md",
        "-o",
        "-",
    ]));
    assert!(md.contains("run=7"), "{md}");
}

/// Bad input exits 2 with a message naming what: no databases, a bad --by, a key no
/// run has, a bad --tag on a storing command.
#[test]
fn bad_input_exits_2() {
    let (dir, empty) = TempDir::with_file("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = empty.to_str().unwrap();
    let o = fwbench(&["trend", e]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no results databases found"),
        "{}",
        stderr(&o)
    );
    let o = fwbench(&["trend", dir.file("nothing-here").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no such file or directory"));
    write_run(&dir.file("a.db"), 1, 1e6);
    let d = dir.path().to_str().unwrap();
    let o = fwbench(&["trend", d, "--by", "kernal"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--by kernal: not one of"),
        "{}",
        stderr(&o)
    );
    let o = fwbench(&["trend", d, "--by", "tag:commit"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--by tag:commit: no run") && stderr(&o).contains("tag:run"),
        "{}",
        stderr(&o)
    );
    let o = fwbench(&["trend", d, "--threshold", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    // -o onto an input.
    let o = fwbench(&["trend", d, "-o", dir.file("a.db").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    for bad in ["Run=1", "run", "run=", "r un=1"] {
        let o = fwbench(&["flood", "--tag", bad, "--no-store"]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains("--tag"), "{bad}: {}", stderr(&o));
    }
    let o = fwbench(&["flood", "--tag", "a=1", "--tag", "a=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--tag a: given twice"),
        "{}",
        stderr(&o)
    );
    let o = fwbench(&["run", "--tag", "A=1", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A results file named twice (its directory and itself) is one history, not its runs
/// twice (their samples doubled would narrow every CI).
#[test]
fn a_file_named_twice_counts_once() {
    let dir = TempDir::new();
    history(&dir, 11, 0.6);
    let d = dir.path().to_str().unwrap();
    let one = dir.file("h05.db");
    let o = fwbench(&[
        "trend",
        d,
        one.to_str().unwrap(),
        "--by",
        "tag:run",
        "-f",
        "json",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 20, "{v}");
}

/// Segments without spread (every run the same value) that differ have no CI and no
/// test: said so (not "a segment of 6 samples"), no regression fails; the CSV
/// carries the change's witness (its doubt, CI and p columns).
#[test]
fn segments_without_spread_are_no_test_and_the_csv_says_so() {
    let dir = TempDir::new();
    for n in 1..=12 {
        let pps = if n >= 11 { 9000.0 } else { 10000.0 };
        write_wobbling(
            &dir.file(&format!("h{n:02}.db")),
            n,
            &[(100, pps, json!({}))],
            |_| 1.0,
        );
    }
    let d = dir.path().to_str().unwrap();
    let o = fwbench(&["trend", d, "--by", "tag:run"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    assert!(
        out.contains("[doubt: no CI: no spread between the runs (n=10+2 runs): no test]"),
        "{out}"
    );
    let csv = stdout(&fwbench(&["trend", d, "--by", "tag:run", "-f", "csv"]));
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).expect(name);
    let row = csv
        .lines()
        .find(|l| l.contains(",regression,"))
        .expect("a change row");
    let cells: Vec<&str> = row.split(',').collect();
    assert_eq!(
        cells[col("doubt")],
        "no CI: no spread between the runs (n=10+2 runs): no test",
        "{csv}"
    );
    assert_eq!(
        (cells[col("p")], cells[col("fails")]),
        ("", "false"),
        "{csv}"
    );
}

/// A configuration taken out of the scenario after its regression (runs 1–10 measured
/// 100 and 200 rules, the 100-rule rate 40 % lower from run 7; runs 11–12 only 200
/// rules): its regression starts no segment of the newest run, so it fails no later
/// gate (it once did, forever), and is still shown.
#[test]
fn a_regression_of_a_configuration_no_longer_measured_fails_no_later_gate() {
    let dir = TempDir::new();
    for n in 1..=12 {
        let a = if n >= 7 { 6e5 } else { 1e6 };
        let configs: Vec<(u32, f64, Value)> = if n <= 10 {
            vec![(100, a, json!({})), (200, 9e5, json!({}))]
        } else {
            vec![(200, 9e5, json!({}))]
        };
        write_configs(&dir.file(&format!("h{n:02}.db")), n, &configs);
    }
    let d = dir.path().to_str().unwrap();
    let o = fwbench(&["trend", d, "--by", "tag:run"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    assert!(out.contains("regression at tag:run=7"), "{out}");
    // Up to run 10 it is the newest run: the same history fails there.
    for n in 11..=12 {
        std::fs::remove_file(dir.file(&format!("h{n:02}.db"))).unwrap();
    }
    let o = fwbench(&["trend", d, "--by", "tag:run"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

/// The unit of a change is the run: runs that differ by 4 % from one to the next, each
/// of 3 tight repetitions, then a 20 % drop over two alike runs — the change's CI is Welch's over the run
/// means (what a rerun gives), not over the 36 samples as if each were a run (it was
/// about half as wide: a false precision).
#[test]
fn a_changes_ci_is_over_runs_not_repetitions() {
    let dir = TempDir::new();
    // Repetition i of run n is i = 3n + rep: the run's level, ± 0.1 % by repetition.
    fn level(i: u32) -> f64 {
        // Runs 1–10 alternate by 4 %; the two after the drop are alike.
        let run = if i / 3 > 10 || (i / 3).is_multiple_of(2) {
            1.0
        } else {
            1.04
        };
        run * (1.0 + 0.001 * f64::from(i % 3))
    }
    for n in 1..=12 {
        let pps = if n >= 11 { 8e5 } else { 1e6 };
        write_wobbling(
            &dir.file(&format!("h{n:02}.db")),
            n,
            &[(100, pps, json!({}))],
            level,
        );
    }
    let d = dir.path().to_str().unwrap();
    let o = fwbench(&["trend", d, "--by", "tag:run", "-f", "json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let s = &v["series"][0];
    let c = &s["changes"][0];
    assert_eq!(c["key"].as_str(), Some("11"), "{c}");
    let points = s["points"].as_array().unwrap();
    let means: Vec<f64> = points.iter().map(|p| p["mean"].as_f64().unwrap()).collect();
    let samples = |r: std::ops::Range<usize>| -> Vec<f64> {
        points[r]
            .iter()
            .flat_map(|p| {
                p["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
            })
            .collect()
    };
    // The two segments the change lies between, as the history split them.
    let segs = s["segments"].as_array().unwrap();
    let span =
        |g: &Value| g["first"].as_u64().unwrap() as usize..g["last"].as_u64().unwrap() as usize + 1;
    let (old, new) = (span(&segs[segs.len() - 2]), span(&segs[segs.len() - 1]));
    assert_eq!(new, 10..12, "{s}");
    let runs = report::stats::run_difference(&means[old.clone()], &means[new.clone()]).unwrap();
    let reps = report::stats::difference(&samples(old), &samples(new)).unwrap();
    let ci = c["ci95"].as_f64().unwrap();
    assert!(
        (ci / runs.ci95.unwrap() - 1.0).abs() < 1e-9,
        "{ci} vs {runs:?}"
    );
    assert!(ci > 1.5 * reps.ci95.unwrap(), "{ci} vs {reps:?}");
}

/// "Newest" is per kind of run: a history of per-commit floods (scenario `flood`) with
/// a run of another scenario sorted last still gates the floods — a −40 % flood
/// regression once passed (exit 0) because the last run was not a flood.
#[test]
fn a_regression_gates_beside_a_later_run_of_another_scenario() {
    let dir = TempDir::new();
    history(&dir, 11, 0.6);
    let nightly = dir.file("h21.db");
    write_configs(&nightly, 21, &[(200, 5e5, json!({}))]);
    let o = std::process::Command::new("sqlite3")
        .arg(&nightly)
        .arg("UPDATE runs SET scenario = 'nightly'")
        .output()
        .expect("sqlite3 (scripts/setup.sh installs it)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = dir.path().to_str().unwrap();
    let o = fwbench(&["trend", d, "--by", "tag:run"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(out.contains("REGRESSION at tag:run=11"), "{out}");
}
