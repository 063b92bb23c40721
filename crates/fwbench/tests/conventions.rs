//! The conventions of the field, as a user meets them: `--version` with the commit,
//! completions and man pages, the JSON Schema, short flags, help grouped by topic with
//! an example, and — as root — `run --json` lines valid against the schema files, with
//! the version recorded in the run's host row; and docs/adding-a-family.patch, the
//! guide's dummy family, still applying in at most 6 files.

mod util;

use std::process::Command;
use util::*;

#[test]
fn version_names_the_commit_and_the_build_date() {
    let o = fwbench(&["--version"]);
    assert!(o.status.success());
    let v = stdout(&o);
    // fwbench 0.1.0 (commit 1a2b3c4d5e6f[+dirty], built 2026-11-23)
    let rest = v
        .strip_prefix(concat!("fwbench ", env!("CARGO_PKG_VERSION"), " (commit "))
        .unwrap_or_else(|| panic!("{v}"));
    let (commit, date) = rest
        .trim()
        .trim_end_matches(')')
        .split_once(", built ")
        .unwrap();
    let hex = commit.trim_end_matches("+dirty");
    assert!(
        commit == "unknown" || (hex.len() == 12 && hex.chars().all(|c| c.is_ascii_hexdigit())),
        "{v}"
    );
    assert_eq!(date.len(), 10, "{v}");
    assert!(date.starts_with("20") && date.as_bytes()[4] == b'-', "{v}");
}

#[test]
fn completions_for_each_shell_and_man_pages() {
    for (shell, marker) in [
        ("bash", "complete -F _fwbench"),
        ("zsh", "#compdef fwbench"),
        ("fish", "complete -c fwbench"),
    ] {
        let o = fwbench(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains(marker), "{shell}: no '{marker}'");
        // Every trial command is completed, and its options (here: --rate of flood).
        for c in trial_kinds() {
            assert!(out.contains(c), "{shell}: {c} missing");
        }
        let rate = if shell == "fish" { "-l rate" } else { "--rate" };
        assert!(out.contains(rate), "{shell}");
    }
    let bad = fwbench(&["completions", "cmd.exe"]);
    assert_eq!(bad.status.code(), Some(2));

    let o = fwbench(&["man"]);
    assert!(o.status.success());
    let page = stdout(&o);
    assert!(page.contains(".TH fwbench 1"), "{page}");
    assert!(page.contains("completions"), "subcommands listed");
    let dir = TempDir::new();
    let o = fwbench(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for c in trial_kinds().into_iter().chain(["run", "report"]) {
        let f = dir.file(&format!("fwbench-{c}.1"));
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        assert!(text.contains(".SH OPTIONS"), "{c}");
    }
    assert!(
        !dir.file("fwbench-agent.1").exists(),
        "hidden commands have no page"
    );
}

#[test]
fn schema_command_prints_the_schema_file() {
    let o = fwbench(&["schema"]);
    assert!(o.status.success());
    let printed: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/schema/trial.json");
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(printed, on_disk);
    // A wrong shape is rejected by it: the validation in these tests can fail.
    let mut fake = serde_json::json!({"schema": "fwbench/echo/2", "status": "fine"});
    let validator = jsonschema::validator_for(&on_disk).unwrap();
    assert!(!validator.is_valid(&fake));
    fake["status"] = "ok".into();
    assert!(!validator.is_valid(&fake), "params, result … are required");
}

#[test]
fn help_is_grouped_by_topic_and_ends_with_an_example() {
    for c in trial_kinds() {
        let o = fwbench(&[c, "--help"]);
        assert!(o.status.success(), "{c}");
        let h = stdout(&o);
        for heading in ["Traffic:", "Firewall:", "Placement:", "Output:"] {
            assert!(
                h.contains(&format!("\n{heading}\n")),
                "{c}: no {heading}\n{h}"
            );
        }
        let example = h.trim_end().rsplit_once("Example:").map(|x| x.1);
        let example = example.unwrap_or_else(|| panic!("{c}: no example at the end\n{h}"));
        assert!(
            example.trim_start().starts_with(&format!("fwbench {c}")),
            "{c}: {example}"
        );
        assert!(h.contains("-J, --json"), "{c}");
        assert!(h.contains("-4, --ipv4") && h.contains("-6, --ipv6"), "{c}");
    }
    for c in [
        "run", "report", "check", "testbed", "rules", "workload", "trend", "trace",
    ] {
        let h = stdout(&fwbench(&[c, "--help"]));
        assert!(h.contains("Example:\n  fwbench "), "{c}\n{h}");
    }
}

/// Bad combinations of the short flags are usage errors (exit 2), before anything runs.
#[test]
fn short_flags_conflict_cleanly() {
    for args in [
        &["flood", "-4", "-6"][..],
        &["flood", "-6", "-A", "4"],
        &["flow", "-r", "10XB/s"],
        &["flow", "-r", "MB/s"],
    ] {
        let o = fwbench(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    let e = stderr(&fwbench(&["flow", "-r", "10XB/s"]));
    assert!(e.contains("bytes/s like 10MB/s"), "{e}");
}

/// `run --json`: one line per trial, each a valid trial object with its key, then the
/// run summary; the version (with commit) is in the run's host row.
#[root_test]
fn run_json_lines_are_valid_and_the_version_is_recorded() {
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write(
        "s.toml",
        "[params]\nproto = [\"tcp\", \"udp\"]\nclients = 2\nduration = 1\n",
    );
    let o = fwbench(&cmd!("run", &sc, "--db", &db, "-J"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    for t in &lines[..2] {
        assert_valid("trial.json", t);
        assert_eq!(t["schema"], "fwbench/echo/2");
        assert_eq!(t["status"], "ok", "{t}");
        assert_eq!(t["trial_key"].as_str().unwrap().len(), 16);
        assert!(f(&t["result"]["transactions_per_s"]) > 0.0, "{t}");
    }
    let protos: Vec<&str> = lines[..2]
        .iter()
        .map(|t| t["params"]["proto"].as_str().unwrap())
        .collect();
    assert_eq!(protos, ["tcp", "udp"]);
    let s = &lines[2];
    assert_valid("run-summary.json", s);
    assert_eq!(s["schema"], "fwbench/run/1");
    assert_eq!((u(&s["planned"]), u(&s["ok"]), u(&s["failed"])), (2, 2, 0));
    assert_eq!(s["status"], "complete");
    // The binary's version, commit included, is the run's host record.
    let v = stdout(&fwbench(&["--version"]));
    let recorded = sqlite_count(
        &db,
        &format!(
            "SELECT count(*) FROM hosts WHERE 'fwbench ' || fwbench_version = '{}'",
            v.trim()
        ),
    );
    assert_eq!(recorded, 1, "{v}");
    // The view names echo's figures for what they are.
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(*) FROM echo_results WHERE echo_transactions_per_s > 0 AND clients = 2"
        ),
        2
    );
}

/// `scripts/test.sh` counts what did not run as skipped, never as passed, and in CI
/// (`FWBENCH_TEST_AS_ROOT=1`) fails on any skip (issue 24, 5a). A fake cargo
/// (`FWBENCH_TEST_CARGO`) prints a runner's lines: two tests ok — one of them called
/// the skip helper, so its line is in `$FWBENCH_SKIP_LOG` — and one ignored.
#[test]
fn test_script_counts_skips_and_fails_ci_on_any() {
    let dir = TempDir::new();
    let runner = |skips: bool| {
        let body = if skips {
            "echo 'test a::one ... ok'\necho 'test a::two ... ok'\n\
             echo 'test a::three ... ignored, needs root: namespaces'\n\
             printf 'fwbench::a::two\\tpandas not installed\\n' >> \"$FWBENCH_SKIP_LOG\"\n\
             echo 'test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out'\n"
        } else {
            "echo 'test a::one ... ok'\necho 'test a::two ... ok'\n\
             echo 'test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out'\n"
        };
        let path = dir.write(
            if skips { "skips.sh" } else { "clean.sh" },
            format!("#!/bin/sh\n{body}"),
        );
        format!("sh {}", path.display())
    };
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/test.sh");
    let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let run = |cargo: &str, ci: bool| {
        let mut c = Command::new("bash");
        c.arg(&script)
            .env("FWBENCH_TEST_CARGO", cargo)
            .env_remove("FWBENCH_TEST_AS_ROOT");
        if ci {
            c.env("FWBENCH_TEST_AS_ROOT", "1");
        }
        c.output().unwrap()
    };
    // With a skip and an ignored test: 1 passed, 2 skipped, both listed with their reason.
    let skipping = runner(true);
    for ci in [false, true] {
        let o = run(&skipping, ci);
        let out = stdout(&o);
        assert!(
            out.contains("tests: 1 passed, 0 failed, 2 skipped"),
            "ci {ci}: {out}"
        );
        assert!(
            out.contains("  fwbench::a::two: pandas not installed"),
            "{out}"
        );
        assert!(out.contains("  a::three: needs root: namespaces"), "{out}");
        let want = if ci { 1 } else { 0 };
        assert_eq!(o.status.code(), Some(want), "ci {ci}: {out}{}", stderr(&o));
    }
    // Nothing skipped: CI passes as root (and fails when not root: the privileged
    // tests did not run).
    let o = run(&runner(false), true);
    let out = stdout(&o);
    assert!(
        out.contains("tests: 2 passed, 0 failed, 0 skipped"),
        "{out}"
    );
    assert!(!out.contains("skipped:"), "{out}");
    assert_eq!(o.status.code(), Some(if root { 0 } else { 1 }), "{out}");
}

/// Every exit code fwbench gives is named in `fwbench --help` and docs/limits.md — also
/// compare's 3 (a change that could not be tested), which CI scripts must tell apart
/// from 0 (issue 24 point 1).
#[test]
fn every_exit_code_is_documented_in_the_help_and_the_docs() {
    let help = stdout(&fwbench(&["--help"]));
    let line = help
        .lines()
        .find(|l| l.starts_with("Exit codes:"))
        .unwrap_or_else(|| panic!("{help}"));
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/limits.md"),
    )
    .unwrap();
    let codes = docs.split("## Exit codes").nth(1).unwrap();
    let codes = codes.split("\n## ").next().unwrap();
    for code in ["0 ", "1 ", "2 ", "3 ", "130 "] {
        assert!(line.contains(&format!(" {code}")), "{code}in: {line}");
        assert!(codes.contains(code), "{code}in docs/limits.md: {codes}");
    }
    assert!(line.contains("3 compare"), "{line}");
    let compare = stdout(&fwbench(&["compare", "--help"]));
    assert!(
        compare.contains("3 when a change could not be tested"),
        "{compare}"
    );
}

/// docs/adding-a-family.md walks through docs/adding-a-family.patch, a dummy family
/// (`null`): the patch still applies to this tree (`git apply --check`: to the files on
/// disk, in a clone or not), touches at most 6 files (issue 36: what a new family
/// costs) and the page names each of them, so neither the guide nor its count rots
/// silently. (That the patched tree still compiles is the guide's "Keeping the patch
/// current", run by hand: a build of a patched copy is too long for CI.)
#[test]
fn the_dummy_family_patch_applies_and_touches_at_most_six_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let patch = root.join("docs/adding-a-family.patch");
    let text = std::fs::read_to_string(&patch).unwrap_or_else(|e| panic!("{patch:?}: {e}"));
    let files: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .map(|l| l.split_once(" b/").map_or(l, |(a, _)| a))
        .collect();
    assert!(
        (1..=6).contains(&files.len()),
        "the dummy family touches {} files: {files:?}",
        files.len()
    );
    let guide = std::fs::read_to_string(root.join("docs/adding-a-family.md")).unwrap();
    for f in &files {
        assert!(
            guide.contains(f),
            "docs/adding-a-family.md does not name {f}"
        );
    }
    let o = match Command::new("git")
        .args(["apply", "--check", "-v"])
        .arg(&patch)
        .current_dir(&root)
        .output()
    {
        Ok(o) => o,
        Err(e) => return skip(&format!("git apply cannot run here: {e}")),
    };
    assert!(
        o.status.success(),
        "docs/adding-a-family.patch no longer applies (docs/adding-a-family.md says how \
         to redo it):\n{}",
        stderr(&o)
    );
}
