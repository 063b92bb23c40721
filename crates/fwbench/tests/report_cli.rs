//! `fwbench report`: bad input exits 2 before writing anything (no root needed).

mod util;

use std::path::Path;
use std::process::Output;
use util::*;

/// `fwbench report INPUT -o OUT ARGS…`.
fn report(input: impl AsRef<Path>, out: impl AsRef<Path>, args: &[&str]) -> Output {
    let (input, out) = (input.as_ref(), out.as_ref());
    let a = [
        "report",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    fwbench(&[&a[..], args].concat())
}

#[test]
fn report_refuses_files_that_are_not_fwbench_results() {
    let (dir, out) = TempDir::with_file("r.html");
    let o = fwbench(&cmd!("report /nonexistent/results.db -o", &out));
    assert_refused(&o, "no such results file");
    // A SQLite file of another program.
    let other = dir.file("other.db");
    let s = std::process::Command::new("sqlite3")
        .arg(&other)
        .arg("CREATE TABLE t(a); INSERT INTO t VALUES (1);")
        .status()
        .expect("sqlite3 CLI (apt-get install sqlite3)");
    assert!(s.success());
    let o = report(&other, &out, &[]);
    assert_refused(&o, "not an fwbench results file");
    // Not SQLite at all.
    let junk = dir.write("junk.db", "hello, not a database\n".repeat(100));
    let o = report(&junk, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A run that does not exist; and a bad format.
    let empty = dir.file("empty.db");
    let o = fwbench(&["report", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "missing file: {}", stderr(&o));
    assert!(!out.exists(), "nothing written for bad input");
    let o = fwbench(&["report", other.to_str().unwrap(), "-f", "pdf"]);
    assert_eq!(o.status.code(), Some(2));
    // A reference that is not ENGINE[/FAMILY], whatever the file.
    let o = fwbench(&argv("report /nonexistent/results.db --reference nft//ip"));
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &o,
        "--reference \"nft//ip\": expected ENGINE or ENGINE/FAMILY",
    );
}

/// `report X -o X` (also through a symbolic or hard link) and `run --db X --report X`
/// are refused with exit 2, and the results file is left as it was.
#[test]
fn report_never_overwrites_its_input() {
    let (dir, db) = TempDir::with_file("base.db");
    drop(store::Store::open(&db).unwrap());
    let before = std::fs::read(&db).unwrap();
    let link = dir.file("link.db");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let hard = dir.file("hard.db");
    std::fs::hard_link(&db, &hard).unwrap();
    for out in [&db, &link, &hard] {
        for fmt in ["html", "md"] {
            let o = report(&db, out, &["-f", fmt]);
            assert_refused(&o, "base.db");
        }
    }
    let o = fwbench(&cmd!("run --dry-run --db", &db, "--report", &link));
    assert_refused(&o, "--report");
    assert_eq!(std::fs::read(&db).unwrap(), before, "results file changed");
    // A real output file still works, and reading did not change the input.
    let out = dir.file("r.md");
    let o = report(&db, &out, &["-f", "md"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&db).unwrap(), before, "results file changed");
}

/// A 0-byte file is not adopted by `report` (nor given a schema), exit 2.
#[test]
fn report_refuses_an_empty_file_without_touching_it() {
    let (dir, empty) = TempDir::with_text("empty.db", b"");
    let out = dir.file("r.html");
    let o = report(&empty, &out, &[]);
    assert_refused(&o, "empty.db");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    assert!(!out.exists());
}

/// A results file damaged inside (its pages overwritten) is bad input: exit 2 with a
/// message naming the file, never a panic or exit 1.
#[test]
fn a_corrupt_results_file_exits_2_naming_it() {
    let (dir, db) = TempDir::with_file("broken.db");
    {
        let mut s = store::Store::open(&db).unwrap();
        let run = s.begin_run(&store::NewRun::default()).unwrap();
        for i in 0..50 {
            s.insert_trial(&store::TrialRecord {
                run_id: run,
                trial_key: format!("k{i}"),
                rep: 1,
                workload: "echo".into(),
                status: "ok".into(),
                params: serde_json::json!({"clients": i}),
                placement: serde_json::json!({}),
                results: serde_json::json!({"pad": "x".repeat(2000)}),
                ..Default::default()
            })
            .unwrap();
        }
    }
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 8 * 4096);
    // Keep the header page (the file still looks like fwbench's), wreck the rest.
    for b in &mut bytes[4096..] {
        *b = 0xA5;
    }
    std::fs::write(&db, &bytes).unwrap();
    let out = dir.file("r.html");
    for fmt in ["html", "csv", "samples"] {
        let o = report(&db, &out, &["-f", fmt]);
        assert_eq!(o.status.code(), Some(2), "{fmt}: {}", stderr(&o));
        assert!(stderr(&o).contains("broken.db"), "{fmt}: {}", stderr(&o));
    }
}

/// A python3 with the OpenMetrics reference parser (Debian's python3-prometheus-client;
/// the first python3 on PATH may be another installation than the system's).
fn openmetrics_python() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|py| {
        std::process::Command::new(py)
            .args(["-c", "import prometheus_client.openmetrics.parser"])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// A real `fwbench flood` stored, exported with `report -f openmetrics` and read back by
/// the format's reference parser: the trial's received packet rate, exactly as stored,
/// under its configuration's labels, at its end; the host's facts as an info series
/// with this kernel and each of its CPU mitigations.
#[root_test]
fn a_real_flood_exports_as_openmetrics_the_reference_parser_reads() {
    let Some(python) = openmetrics_python() else {
        return skip("the OpenMetrics reference parser is not installed (apt-get install python3-prometheus-client)");
    };
    let dir = TempDir::new();
    let (db, om) = (dir.file("r.db"), dir.file("m.txt"));
    let o = fwbench(&cmd!(
        "flood -t 1 --rate 10kpps --engine nft --rules 10 --db",
        &db
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = report(&db, &om, &["-f", "openmetrics"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let parse = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../report/tests/openmetrics_parse.py"
    );
    let o = std::process::Command::new(python)
        .args([parse, om.to_str().unwrap()])
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&om).unwrap();
    assert!(o.status.success(), "{}\n{text}", stderr(&o));
    let families: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    let family = |name: &str| {
        (families.iter())
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };

    let store = store::Store::open_read_only(&db).unwrap();
    let trials = store.trials(None).unwrap();
    assert_eq!(trials.len(), 1);
    let t = &trials[0];
    assert_eq!(t.status, "ok", "{:?}", t.error);
    let stored = t.headline.received_pps.unwrap();
    let f = family("fwbench_received_packets_per_second");
    let samples = f["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 1, "{text}");
    let s = &samples[0];
    let got: f64 = s["value"].as_str().unwrap().parse().unwrap();
    assert_eq!(got.to_bits(), stored.to_bits(), "{got} vs {stored}");
    let l = &s["labels"];
    assert_eq!(
        (&l["engine"], &l["rules"], &l["workload"]),
        (&"nft".into(), &"10".into(), &"flood".into()),
        "{l}"
    );
    let end = std::process::Command::new("date")
        .args(["-d", &t.finished_at, "+%s"])
        .output()
        .unwrap();
    let end: i64 = stdout(&end).trim().parse().unwrap();
    assert_eq!(s["ts"], serde_json::json!([end, 0]));

    let info = &family("fwbench_host")["samples"][0]["labels"];
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(info["kernel"], kernel.trim());
    let vulns =
        std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities").map_or(0, |d| d.count());
    let mitigations = (info.as_object().unwrap().keys())
        .filter(|k| k.starts_with("mitigation_"))
        .count();
    assert_eq!(mitigations, vulns, "{info}");
}

/// The CI recipe's scenario (docs/ci.md, the block after `<!-- tested: ci-scenario`)
/// is a valid scenario of the size the page says: 20 trials.
#[test]
fn the_ci_recipes_scenario_dry_runs_as_documented() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/ci.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let at = doc
        .find("<!-- tested: ci-scenario")
        .expect("docs/ci.md has no '<!-- tested: ci-scenario' block");
    let rest = &doc[at..];
    let start = rest.find("```toml\n").unwrap() + 8;
    let end = start + rest[start..].find("```").unwrap();
    // The block is indented under its list item.
    let toml: String = rest[start..end]
        .lines()
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let (_dir, file) = TempDir::with_text("fwbench.toml", toml);
    let o = fwbench(&["run", file.to_str().unwrap(), "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("ci — 20 trials"), "{}", stdout(&o));
}
