//! `fwbench compare`: two synthetic results files (no root needed) — a planted 10 %
//! regression exits 1 and is named, identical data exits 0, bad input exits 2.

mod util;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use store::{Headline, NewRun, Store, TrialRecord};
use util::*;

/// Deterministic ±1 % "noise" by repetition.
fn ripple(rep: u32) -> f64 {
    [1.0, 1.01, 0.99, 1.005, 0.995][rep as usize % 5]
}

/// A flood run: rules 0 and 100 (and, when `extra`, 1000), 5 repetitions each;
/// the received rate at 100 rules times `factor`; kernel as given.
fn write_run(path: &Path, kernel: &str, factor: f64, extra: bool) {
    write_reps(path, kernel, factor, extra, 0..5, 1.0);
}

/// Two results files, `a.db` and `b.db` in `dir`, written by [`write_run`]: each side's
/// kernel and factor, rule count 1000 in `a.db` too when `a_extra`.
fn two_runs(
    dir: &TempDir,
    (ka, fa, a_extra): (&str, f64, bool),
    (kb, fb): (&str, f64),
) -> (PathBuf, PathBuf) {
    let (a, b) = (dir.file("a.db"), dir.file("b.db"));
    write_run(&a, ka, fa, a_extra);
    write_run(&b, kb, fb, false);
    (a, b)
}

/// [`write_run`] with the repetitions `reps` only (a run of one trial: `r..r + 1`) and
/// the ripple times `spread` (10: ±10 %).
fn write_reps(
    path: &Path,
    kernel: &str,
    factor: f64,
    extra: bool,
    reps: std::ops::Range<u32>,
    spread: f64,
) {
    write_reps_at(path, kernel, (100, factor), extra, reps, spread, &[]);
}

/// [`write_reps`] with the factor at the rule count `at.0` (100 there), and the
/// repetitions `limited` ((rule count, rep)) limited by fwbench's sender.
fn write_reps_at(
    path: &Path,
    kernel: &str,
    (at, factor): (u32, f64),
    extra: bool,
    reps: std::ops::Range<u32>,
    spread: f64,
    limited: &[(u32, u32)],
) {
    let mut s = Store::open(path).unwrap();
    let run = s
        .begin_run(&NewRun {
            started_at: "2026-01-01T00:00:00Z".into(),
            scenario: "cmp".into(),
            seed: 7,
            command: "fwbench run cmp.toml".into(),
            host: store::Host {
                hostname: "bench1".into(),
                kernel: kernel.into(),
                cpu_model: "Test CPU".into(),
                cores: 4,
                fwbench_version: "0.1.0".into(),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
    let mut rules = vec![0u32, 100];
    if extra {
        rules.push(1000);
    }
    for n in rules {
        for rep in reps.clone() {
            let base = 1e6 / (1.0 + n as f64 / 1000.0);
            let wobble = 1.0 + (ripple(rep) - 1.0) * spread;
            let pps = base * wobble * if n == at { factor } else { 1.0 };
            let params = json!({"workload": "flood", "engine": "nft", "rules": n,
                                "duration_s": 1.0, "seed": rep});
            s.insert_trial(&TrialRecord {
                run_id: run,
                trial_key: format!("k{n}-{rep}"),
                rep,
                workload: "flood".into(),
                status: "ok".into(),
                started_at: "2026-01-01T00:00:00Z".into(),
                finished_at: "2026-01-01T00:00:01Z".into(),
                params,
                placement: json!({}),
                headline: Headline {
                    received_pps: Some(pps),
                    sent_pps: Some(base * ripple(rep + 1)),
                    rtt_p50_us: Some(50.0 * ripple(rep + 2)),
                    ..Default::default()
                },
                results: if limited.contains(&(n, rep)) {
                    json!({"packet": {"limited_by": {"by": "sender", "why": "planted"}}})
                } else {
                    json!({})
                },
                ..Default::default()
            })
            .unwrap();
        }
    }
    s.finish_run(run, "2026-01-01T00:01:00Z", "finished")
        .unwrap();
}

#[test]
fn a_planted_regression_exits_1_and_is_named() {
    let dir = TempDir::new();
    let (a, b) = two_runs(&dir, ("6.1.0-old", 1.0, true), ("6.12.0-new", 0.9));
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = fwbench(&["compare", sa, sb]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    // Both kernels shown, the regression named on its configuration's metric.
    assert!(
        out.contains("6.1.0-old") && out.contains("6.12.0-new"),
        "{out}"
    );
    let section = out
        .split("\nflood rules=100\n")
        .nth(1)
        .expect("a section for rules=100")
        .split("\n\n")
        .next()
        .unwrap();
    let line = section
        .lines()
        .find(|l| l.contains("received_pps"))
        .unwrap();
    assert!(
        line.contains("-10.0 % ± 1.1 %") && line.contains("REGRESSION"),
        "{line}"
    );
    // rules=0 is unchanged; 1000 is only in the old run, listed.
    let zero = out.split("\nflood rules=0\n").nth(1).unwrap();
    let zline = zero.lines().find(|l| l.contains("received_pps")).unwrap();
    assert!(zline.trim_end().ends_with("same"), "{zline}");
    assert!(
        out.contains("only in old (1), not compared:\n  flood rules=1000"),
        "{out}"
    );
    // Listed on top, too.
    assert!(
        out.contains("REGRESSIONS (2):\n  flood rules=100: ns_per_packet +11.1 % ± 1.2 %"),
        "{out}"
    );
    // received_pps and the per-packet time derived from it (1e9 / received_pps).
    let ns = section
        .lines()
        .find(|l| l.contains("ns_per_packet"))
        .unwrap();
    assert!(ns.contains("REGRESSION"), "{ns}");
    assert_says(&o, "2 significant regression");

    // JSON says the same, and a 15 % threshold lets a 10 % drop pass.
    let o = fwbench(&["compare", sa, sb, "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &v["pairs"][0];
    assert_eq!(p["failing"], 2);
    assert_eq!(p["new"]["kernel"], "6.12.0-new");
    let m = item(&p["matched"], "label", "flood rules=100");
    let c = item(&m["changes"], "metric", "received_pps");
    assert!((c["pct"].as_f64().unwrap() + 10.0).abs() < 1e-6, "{c}");
    assert!(c["diff"]["welch"]["p"].as_f64().unwrap() < 0.001, "{c}");
    let o = fwbench(&["compare", sa, sb, "--threshold", "15"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    // Markdown and HTML to files.
    for (fmt, name, mark) in [
        ("md", "c.md", "**REGRESSION**"),
        ("html", "c.html", "class=\"fail\""),
    ] {
        let f = dir.file(name);
        let o = fwbench(&["compare", sa, sb, "-f", fmt, "-o", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(text.contains(mark) && text.contains("6.12.0-new"), "{text}");
    }
}

#[test]
fn identical_data_exits_0_and_bad_input_exits_2() {
    let dir = TempDir::new();
    let (a, b) = two_runs(&dir, ("6.1.0", 1.0, false), ("6.1.0", 1.0));
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = fwbench(&["compare", sa, &format!("{sb}:1"), "--threshold", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(!stdout(&o).contains("REGRESSION"));
    assert_prints(&o, "p=1.000 (n=5+5)");
    // Three sides: the first against each other one.
    let o = fwbench(&["compare", sa, sb, sa, "-f", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["pairs"].as_array().unwrap().len(), 2);
    assert_eq!(v["schema"], "fwbench/compare/1");
    // Bad input: a missing file, a missing run, a bad threshold, one side only.
    for args in [
        vec!["compare", sa, "/nonexistent/b.db"],
        vec!["compare", sa, &format!("{sb}:9")],
        vec!["compare", sa, sb, "--threshold", "x"],
        vec!["compare", sa],
    ] {
        let o = fwbench(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    assert!(stderr(&fwbench(&["compare", sa, &format!("{sb}:9")])).contains("run 9 does not exist"));
}

#[root_test]
fn a_real_run_compared_with_itself_has_no_regression() {
    let (_dir, db) = TempDir::with_file("r.db");
    let o = fwbench(&cmd!("flood -t 1 --rate 10kpps --db", &db));
    assert!(o.status.success(), "{}", stderr(&o));
    let d = db.to_str().unwrap();
    let o = fwbench(&["compare", d, &format!("{d}:1"), "--threshold", "0"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = stdout(&o);
    // One repetition a side: changes shown, no test, untested (never "same"), and
    // the run compared with itself is said so.
    let line = out.lines().find(|l| l.contains("received_pps")).unwrap();
    assert!(
        line.contains("no test (n=1+1)") && line.ends_with("untested"),
        "{out}"
    );
    assert!(out.contains("a run compared with itself"), "{out}");
}

/// Issue 24 point 1: three single-trial runs per file. The newest run alone (n=1+1) is
/// untested — exit 3, never "same" — and a worsening beyond the threshold is named in
/// the summary line; the default pools every run (n=3+3) and finds the regression.
#[test]
fn single_trial_runs_are_pooled_and_untested_changes_exit_3() {
    let dir = TempDir::new();
    let (a, b) = (dir.file("a.db"), dir.file("b.db"));
    for rep in 0..3 {
        write_reps(&a, "6.1.0", 1.0, false, rep..rep + 1, 1.0);
        write_reps(&b, "6.1.0", 0.3, false, rep..rep + 1, 1.0);
    }
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    // One run a side: untested, exit 3, the −70 % named in the summary line.
    let o = fwbench(&[
        "compare",
        &format!("{sa}:3"),
        &format!("{sb}:3"),
        "--threshold",
        "25",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}\n{}", stderr(&o));
    let line = out
        .lines()
        .find(|l| l.contains("received_pps") && l.contains("n=1+1"))
        .expect("a received_pps row");
    assert!(
        !line.ends_with("same") && line.contains("untested"),
        "{line}"
    );
    let summary = out.lines().find(|l| l.starts_with("Summary:")).unwrap();
    assert!(
        summary.contains("UNTESTED beyond the threshold")
            && summary.contains("flood rules=100: received_pps -70 %")
            && summary.ends_with("exit 3."),
        "{summary}"
    );
    assert!(!summary.contains("flood rules=0:"), "{summary}");
    // Every run pooled (the default, and `:all`, and a list): n=3+3, a regression.
    for (x, y) in [
        (sa.to_string(), sb.to_string()),
        (format!("{sa}:all"), format!("{sb}:1,2,3")),
    ] {
        let o = fwbench(&["compare", &x, &y, "--threshold", "25"]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
        assert!(out.contains("runs 1, 2, 3"), "{out}");
        let line = out
            .lines()
            .find(|l| l.contains("received_pps") && l.contains("REGRESSION"))
            .expect("the regression");
        assert!(line.contains("(n=3+3)"), "{line}");
    }
    // The JSON says the same.
    let o = fwbench(&[
        "compare",
        &format!("{sa}:1"),
        &format!("{sb}:1"),
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["pairs"][0]["untested"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["pairs"][0]["failing"], 0);
    assert_eq!(v["pairs"][0]["new"]["runs"], json!([1]));
}

/// `compare a.db a.db` says it compared a run with itself.
#[test]
fn a_file_compared_with_itself_is_said_so() {
    let (dir, a) = TempDir::with_file("a.db");
    write_run(&a, "6.1.0", 1.0, false);
    let sa = a.to_str().unwrap();
    let o = fwbench(&["compare", sa, sa]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_prints(&o, "a run compared with itself");
    assert_says(&o, "compared a run with itself");
    // Another file with the same data is not "itself".
    let b = dir.file("b.db");
    write_run(&b, "6.1.0", 1.0, false);
    let o = fwbench(&["compare", sa, b.to_str().unwrap()]);
    assert!(!stdout(&o).contains("itself"), "{}", stdout(&o));
}

/// `--repeat N`: N trials of one configuration in one run, so a comparison of two such
/// runs is tested (n=2+2), never `untested` (exit 3).
#[root_test]
fn repeated_trials_make_a_comparison_testable() {
    let dir = TempDir::new();
    let (a, b) = (dir.file("a.db"), dir.file("b.db"));
    for db in [&a, &b] {
        let o = fwbench(&cmd!("flood -t 1 --rate 10kpps --repeat 2 -J --db", &db));
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v.as_array().map(Vec::len), Some(2), "{v}");
        let s = Store::open(db).unwrap();
        assert_eq!(s.runs().unwrap().len(), 1);
    }
    let o = fwbench(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let out = stdout(&o);
    assert_ne!(o.status.code(), Some(3), "{out}");
    let line = out.lines().find(|l| l.contains("received_pps")).unwrap();
    assert!(
        line.contains("(n=2+2)") && !line.contains("untested"),
        "{line}"
    );
    // A search does not repeat.
    let o = fwbench(&["ndr", "--repeat", "2", "--no-store"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(&o, "--repeat");
}

/// `scripts/seed-check.sh --verdict A B`: each number the findings state (the claims:
/// the cost per rule here) of run B against run A, within both runs' stated CIs (Holm):
/// identical runs match (exit 0); a planted 10 % drop at the most rules moves the cost
/// per rule beyond both CIs: it differs and is named (exit 1), and the configuration
/// that moved is listed beside it; runs that state no number (two rule counts: no
/// line), or not the same ones, are untested, never a match (exit 1); a missing file is
/// bad input (exit 2).
#[test]
fn seed_check_says_whether_a_second_run_matches_the_first() {
    let dir = TempDir::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/seed-check.sh");
    let verdict = |a: &Path, b: &Path| {
        let o = std::process::Command::new("bash")
            .arg(&script)
            .args(["--verdict", a.to_str().unwrap(), b.to_str().unwrap()])
            .env("FWBENCH", bin())
            .output()
            .unwrap();
        (o.status.code(), stdout(&o), stderr(&o))
    };
    // Three rule counts (0, 100, 1000): a cost line per run.
    let (a, same, worse) = (dir.file("a.db"), dir.file("same.db"), dir.file("worse.db"));
    write_reps(&a, "6.1.0", 1.0, true, 0..5, 1.0);
    write_reps(&same, "6.1.0", 1.0, true, 0..5, 1.0);
    write_reps_at(&worse, "6.1.0", (1000, 0.9), true, 0..5, 1.0, &[]);
    let (rc, out, err) = verdict(&a, &same);
    assert_eq!(rc, Some(0), "{out}{err}");
    assert!(out.contains("**1 match, 0 differ, 0 untested**"), "{out}");
    assert!(
        out.contains("* matches: cost per rule (1/pps estimator): "),
        "{out}"
    );
    assert!(out.contains("The 3 configurations"), "{out}");
    assert!(out.trim_end().ends_with("verdict: matches"), "{out}");
    let (rc, out, err) = verdict(&a, &worse);
    assert_eq!(rc, Some(1), "{out}{err}");
    assert!(out.contains("**0 match, 1 differ, 0 untested**"), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("* differs: cost per rule (1/pps estimator): "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("ns per rule per packet"), "{line}");
    let moved = out
        .lines()
        .find(|l| l.starts_with("* configuration differs: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        moved.contains("rules=1000") && moved.contains("received_pps") && moved.contains("-10 %"),
        "{moved}"
    );
    assert!(out.trim_end().ends_with("verdict: differs"), "{out}");
    // Two rule counts: no line, no claim — untested, never a match; and a run whose
    // claim the other does not state is not a match either.
    let two = dir.file("two.db");
    write_reps(&two, "6.1.0", 1.0, false, 0..5, 1.0);
    let (rc, out, err) = verdict(&two, &two);
    assert_eq!(rc, Some(1), "{out}{err}");
    assert!(out.contains("**0 match, 0 differ, 0 untested**"), "{out}");
    assert!(out.trim_end().ends_with("verdict: untested"), "{out}");
    let (rc, out, err) = verdict(&a, &two);
    assert_eq!(rc, Some(1), "{out}{err}");
    assert!(
        out.contains("1 number(s) stated in one run only: cost per rule (1/pps estimator): "),
        "{out}"
    );
    assert!(out.trim_end().ends_with("verdict: untested"), "{out}");
    // A claim a run doubts (here the cost per rule, most repetitions at 1000 rules
    // limited by fwbench's sender) is no finding to match: untested, and why.
    let doubted = dir.file("doubted.db");
    let most = [(1000, 0), (1000, 1), (1000, 2)];
    write_reps_at(&doubted, "6.1.0", (100, 1.0), true, 0..5, 1.0, &most);
    let (rc, out, err) = verdict(&doubted, &doubted);
    assert_eq!(rc, Some(1), "{out}{err}");
    assert!(
        out.contains("**0 match, 0 differ, 1 untested**") && out.contains("(run A doubts it: "),
        "{out}"
    );
    let (rc, _, err) = verdict(&a, &dir.file("missing.db"));
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("missing.db: no such results file"), "{err}");
}

/// `compare` opens its results files read-only: a file made read-only (0444) is
/// compared, and neither it nor its modification time changes — even with a recovery
/// file beside it, which only a writer imports — and `--output` cannot be an input.
#[test]
fn compare_never_writes_to_the_results_files_it_reads() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new();
    let (a, b) = two_runs(&dir, ("6.1.0", 1.0, false), ("6.1.0", 1.0));
    // A trial left in a recovery file of a.db (as a run that could not store it leaves).
    let rec = store::write_recovery(
        &a,
        &store::TrialRecord {
            run_id: 1,
            trial_key: "recovered".into(),
            rep: 9,
            workload: "flood".into(),
            status: "ok".into(),
            params: json!({"workload": "flood", "engine": "nft", "rules": 0, "seed": 9}),
            ..Default::default()
        },
    )
    .unwrap();
    for f in [&a, &b] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    let before = |f: &Path| {
        (
            std::fs::read(f).unwrap(),
            std::fs::metadata(f).unwrap().modified().unwrap(),
        )
    };
    let (was_a, was_b) = (before(&a), before(&b));
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = fwbench(&["compare", sa, sb]);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    assert!(before(&a) == was_a, "a.db changed");
    assert!(before(&b) == was_b, "b.db changed");
    assert!(rec.is_file(), "the recovery file was taken in");
    // The output cannot be one of the files compared.
    let o = fwbench(&["compare", sa, sb, "-o", sb]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(&o, "compare never writes to its inputs");
    assert!(before(&b) == was_b, "b.db changed");
}
