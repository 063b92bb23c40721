//! scripts/history.sh (docs/ci.md): results files written by the store are copied into
//! a history directory under sortable names (newest run's start, commit, kernel), pruned
//! to the newest N without touching other files, and bad input exits 2 leaving the
//! directory as it was. Needs bash and sqlite3 (scripts/setup.sh installs both).

#[path = "../../fwbench/tests/util/skip.rs"]
mod skip;

use skip::skip;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use store::{Headline, Host, NewRun, Store, TrialRecord};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/history.sh");

fn history(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(SCRIPT)
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A results file of one run started at `at` on `kernel` with one trial; finished
/// unless `running`.
fn results(dir: &Path, file: &str, at: &str, kernel: &str, running: bool) -> PathBuf {
    let path = dir.join(file);
    let mut s = Store::open(&path).unwrap();
    let run = s
        .begin_run(&NewRun {
            started_at: at.into(),
            host: Host {
                kernel: kernel.into(),
                fwbench_version: "0.1.0 (commit 5377bbe1a2b3+dirty, built 2026-11-28)".into(),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
    s.insert_trial(&TrialRecord {
        run_id: run,
        trial_key: "k".into(),
        rep: 1,
        workload: "flood".into(),
        status: "ok".into(),
        headline: Headline {
            received_pps: Some(1e6),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    if !running {
        s.finish_run(run, at, "complete").unwrap();
    }
    path
}

/// The directory's file names, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn tools_missing() -> Option<&'static str> {
    ["bash", "sqlite3"].into_iter().find(|t| {
        Command::new(t)
            .arg("--version")
            .output()
            .map_or(true, |o| !o.status.success())
    })
}

/// A temp dir and the history directory to be made in it; `None` (the test skipped,
/// with why) without bash or sqlite3.
fn scratch() -> Option<(tempfile::TempDir, PathBuf)> {
    if let Some(t) = tools_missing() {
        skip(&format!("{t} not installed (scripts/setup.sh installs it)"));
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let hist = dir.path().join("history");
    Some((dir, hist))
}

#[test]
fn history_keeps_sortable_copies_and_prunes_only_its_own_files() {
    let Some((dir, hist)) = scratch() else {
        return;
    };
    let h = hist.to_str().unwrap();
    // Added out of time order: names sort by the run's start, not by when added.
    let times = [
        "2026-11-28T10:00:02Z",
        "2026-11-28T10:00:00Z",
        "2026-11-28T10:00:03Z",
        "2026-11-28T10:00:01Z",
    ];
    for (i, at) in times.iter().enumerate() {
        let db = results(dir.path(), &format!("r{i}.db"), at, "6.12.0-test/x", false);
        let o = history(&[db.to_str().unwrap(), h]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        if i == 0 {
            std::fs::write(hist.join("notes.txt"), "not ours").unwrap();
            std::fs::write(hist.join("other.db"), "not ours either").unwrap();
        }
        let printed = text(&o.stdout);
        assert!(printed.trim().ends_with(".db"), "{printed}");
    }
    assert_eq!(
        listing(&hist),
        [
            "20261128T100000Z-5377bbe1a2b3+dirty-6.12.0-test_x.db",
            "20261128T100001Z-5377bbe1a2b3+dirty-6.12.0-test_x.db",
            "20261128T100002Z-5377bbe1a2b3+dirty-6.12.0-test_x.db",
            "20261128T100003Z-5377bbe1a2b3+dirty-6.12.0-test_x.db",
            "notes.txt",
            "other.db",
        ]
    );
    // The copy is a whole results file: its trial reads back.
    let copy = Store::open_read_only(&hist.join(&listing(&hist)[0])).unwrap();
    assert_eq!(copy.trials(None).unwrap().len(), 1);

    // A fifth with --commit and --keep 2: the two newest of ours stay, the others too.
    let db = results(dir.path(), "r9.db", "2026-11-29T00:00:00Z", "6.13", false);
    let o = history(&[db.to_str().unwrap(), h, "--keep", "2", "--commit", "abc123"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        listing(&hist),
        [
            "20261128T100003Z-5377bbe1a2b3+dirty-6.12.0-test_x.db",
            "20261129T000000Z-abc123-6.13.db",
            "notes.txt",
            "other.db",
        ]
    );
    assert!(text(&o.stderr).contains("pruned"), "{}", text(&o.stderr));
}

#[test]
fn history_refuses_bad_input_with_exit_2_and_changes_nothing() {
    let Some((dir, hist)) = scratch() else {
        return;
    };
    let h = hist.to_str().unwrap();
    let good = results(dir.path(), "good.db", "2026-11-28T10:00:00Z", "6.12", false);
    let g = good.to_str().unwrap();
    let o = history(&[g, h]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let before = listing(&hist);

    let running = results(
        dir.path(),
        "running.db",
        "2026-11-28T11:00:00Z",
        "6.12",
        true,
    );
    let foreign = dir.path().join("foreign.db");
    Command::new("sqlite3")
        .arg(&foreign)
        .arg("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .status()
        .unwrap();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, "").unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, "this is not a database at all, not even close").unwrap();
    let a_file = dir.path().join("a-file");
    std::fs::write(&a_file, "x").unwrap();
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![s(&dir.path().join("absent.db")), h.into()],
            "no such results file",
        ),
        (vec![s(&foreign), h.into()], "not a fwbench results file"),
        (vec![s(&empty), h.into()], "not a fwbench results file"),
        (vec![s(&junk), h.into()], "not a SQLite file"),
        (vec![s(&running), h.into()], "still running"),
        (vec![g.into(), h.into()], "already exists"),
        (vec![g.into(), s(&a_file)], "not a directory"),
        (
            vec![g.into(), h.into(), "--keep".into(), "0".into()],
            "--keep 0",
        ),
        (
            vec![g.into(), h.into(), "--keep".into(), "x".into()],
            "--keep x",
        ),
        (vec![g.into(), h.into(), "--keep".into()], "--keep needs"),
        (
            vec![g.into(), h.into(), "--commit".into(), "a/b".into()],
            "--commit a/b",
        ),
        (vec![g.into()], "usage"),
        (vec![g.into(), h.into(), "extra".into()], "one results file"),
        (vec![g.into(), h.into(), "--bogus".into()], "unknown option"),
    ];
    for (args, why) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = history(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        assert_eq!(listing(&hist), before, "{args:?} changed the history");
    }
}
