//! Faults found by hostile use (issue 24 point 4 a, d): a trial's result survives a
//! full disk, a failed creation leaves no results file, two runs racing to create one
//! results file get the documented refusal; a run whose process died without a word
//! (issue 38: an abort under `prlimit --as`) does not stay `running`.

mod util;

use serde_json::Value;
use std::process::Command;
use util::*;

/// A shell script run in a private mount namespace with a 4 MiB tmpfs at `$T`: the
/// disk is filled to 16 KiB free for the second trial of `full.db`, and again for the
/// second run of a one-trial scenario (`$O/one.toml`) in `run.db`, emptied for a third
/// trial and the scenario's resumption, then filled completely for a command on a new
/// results file. Outputs land in `$O`.
const FULL_DISK: &str = r#"
set -u
mount -t tmpfs -o size=4m fwbench-full "$T" || exit 97
step() { n=$1; shift; "$FW" "$@" >"$O/$n.out" 2>"$O/$n.err"; echo $? >"$O/$n.rc"; }
step 1 flood -t 1 --rate 10kpps -J --db "$T/full.db"
step 1r run "$O/one.toml" --db "$T/run.db"
avail=$(df --output=avail -B1 "$T" | tail -1)
fallocate -l $((avail - 16384)) "$T/fill" || exit 98
step 2 flood -t 1 --rate 10kpps -J --db "$T/full.db"
rm -f "$T/fill"
avail=$(df --output=avail -B1 "$T" | tail -1)
fallocate -l $((avail - 16384)) "$T/fill" || exit 98
step 2r run "$O/one.toml" --db "$T/run.db"
rm -f "$T/fill"
step 3 flood -t 1 --rate 10kpps --db "$T/full.db"
step 3r run "$O/one.toml" --db "$T/run.db"
cp "$T/full.db" "$T/run.db" "$O/"
avail=$(df --output=avail -B1 "$T" | tail -1)
fallocate -l "$avail" "$T/fill" || exit 98
step 4 flood -t 1 --rate 10kpps --db "$T/new.db"
ls -a "$T" >"$O/4.ls"
"#;

fn read(dir: &TempDir, name: &str) -> String {
    std::fs::read_to_string(dir.file(name)).unwrap_or_default()
}

#[root_test(needs = "a tmpfs in a private mount namespace and network namespaces")]
fn a_trial_that_cannot_be_stored_is_printed_and_recovered_by_the_next_run() {
    let out = TempDir::new();
    let mnt = TempDir::new();
    let rec = out.file("recovery");
    out.write(
        "one.toml",
        "name = \"one\"\nworkload = \"flood\"\n[params]\nduration = \"1s\"\nrate = \"10kpps\"\n",
    );
    let o = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", FULL_DISK])
        .env("T", mnt.path())
        .env("O", out.path())
        .env("FW", bin())
        .env("FWBENCH_RECOVERY_DIR", &rec)
        .output()
        .expect("unshare(1)");
    assert!(o.status.success(), "script: {:?} {}", o.status, stderr(&o));
    for n in ["1", "1r", "2", "2r", "3", "3r", "4"] {
        eprintln!(
            "--- {n}: rc {}{}",
            read(&out, &format!("{n}.rc")),
            read(&out, &format!("{n}.err"))
        );
    }
    assert_eq!(read(&out, "1.rc").trim(), "0");
    assert_eq!(read(&out, "1r.rc").trim(), "0");
    // The disk full: the trial fails to store, exit 1, its figures on stdout (-J) and
    // the message says where they are kept.
    assert_eq!(read(&out, "2.rc").trim(), "1");
    let v: Value = serde_json::from_str(&read(&out, "2.out")).expect("the trial's JSON on stdout");
    let pps = v["result"]["received_pps"]
        .as_f64()
        .or_else(|| v["received_pps"].as_f64())
        .unwrap_or_else(|| panic!("received_pps in {v}"));
    let err2 = read(&out, "2.err");
    assert!(
        err2.contains("kept in") && err2.contains(rec.to_str().unwrap()),
        "{err2}"
    );
    // A scenario run likewise (issue 24 4a: it left its run `running` without saying
    // how to resume): the trial's line (on stderr, as every trial of a run), kept, and
    // the command that resumes the run.
    let err2r = read(&out, "2r.err");
    assert_eq!(read(&out, "2r.rc").trim(), "1", "{err2r}");
    assert!(err2r.contains("ok: offered 10.0 kpps"), "{err2r}");
    assert!(err2r.contains("kept in"), "{err2r}");
    assert!(
        err2r.contains("is left unfinished; `fwbench run ")
            && err2r.contains("one.toml --db ")
            && err2r.contains("resumes it"),
        "{err2r}"
    );
    // The next command imports it: the results file holds the second trial's figures.
    assert_eq!(read(&out, "3.rc").trim(), "0", "{}", read(&out, "3.err"));
    assert!(
        read(&out, "3.err").contains("recovered 1 trial(s)"),
        "{}",
        read(&out, "3.err")
    );
    // Resuming the scenario run imports its trial, finds it done and finishes the run.
    let err3r = read(&out, "3r.err");
    assert_eq!(read(&out, "3r.rc").trim(), "0", "{err3r}");
    assert!(err3r.contains("recovered 1 trial(s)"), "{err3r}");
    assert!(err3r.contains("resuming run 2"), "{err3r}");
    let runs = out.file("run.db");
    assert_eq!(sqlite_count(&runs, "SELECT count(*) FROM trials"), 2);
    assert_eq!(
        sqlite_count(&runs, "SELECT count(*) FROM runs WHERE status = 'complete'"),
        2
    );
    let db = out.file("full.db");
    assert_eq!(
        sqlite_count(
            &db,
            &format!(
                "SELECT count(*) FROM trials WHERE run_id = 2 AND abs(received_pps - {pps}) < 1e-6"
            )
        ),
        1
    );
    assert!(
        std::fs::read_dir(&rec).map(|d| d.count()).unwrap_or(0) == 0,
        "recovery file left"
    );
    // No space at all: a system failure (exit 1, not 2: nothing the user typed is
    // wrong), said as such, and no results file (and no temporary one) is left.
    let err4 = read(&out, "4.err");
    assert_eq!(read(&out, "4.rc").trim(), "1", "{err4}");
    assert!(err4.contains("disk is full"), "{err4}");
    let ls = read(&out, "4.ls");
    assert!(!ls.contains("new.db"), "{ls}");
}

/// Two `fwbench run` on the same new results file: one runs, the other gets the
/// documented refusal naming the holder's PID (never "table hosts already exists" or
/// "an empty file").
#[root_test]
fn two_runs_creating_one_results_file_one_is_refused_by_pid() {
    let (dir, scen) = TempDir::with_text(
        "s.toml",
        "name = \"race\"\nworkload = \"flood\"\n[params]\nduration = \"2s\"\nrate = \"10kpps\"\n",
    );
    for round in 0..3 {
        let db = dir.file(&format!("race{round}.db"));
        let spawn = || spawn_piped(&cmd!("run", &scen, "--db", &db));
        let (a, b) = (spawn(), spawn());
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let codes = [a.status.code(), b.status.code()];
        assert!(
            codes.contains(&Some(0)),
            "{codes:?}\n{}\n{}",
            stderr(&a),
            stderr(&b)
        );
        let loser = if a.status.code() == Some(0) { &b } else { &a };
        let e = stderr(loser);
        assert_eq!(loser.status.code(), Some(2), "{e}");
        assert!(e.contains("is in use by fwbench PID"), "{e}");
        assert!(
            !e.contains("already exists") && !e.contains("empty file"),
            "{e}"
        );
    }
}

/// A testbed whose client launcher never answers: a clear error naming the host
/// within the testbed file's `timeout`, not a hang (issue 24 point 4e).
#[root_test(needs = "trial commands refuse to start without it")]
fn a_launcher_that_never_answers_is_named_within_the_timeout() {
    let (_dir, tb) = TempDir::with_text(
        "hang.toml",
        r#"
timeout = "2s"

[client]
launcher = ["sh", "-c", "sleep 100", "hanging-client"]
interface = "lo"
prefix = "198.18.1.0/16"
gateway_address = "198.18.0.1"

[gateway]
launcher = "local"
interface = "lo"

[server]
launcher = "local"
address = "198.19.0.2"
"#,
    );
    let t0 = std::time::Instant::now();
    let o = fwbench(&cmd!("flood -t 1 --no-store --testbed", &tb));
    let took = t0.elapsed().as_secs_f64();
    let e = stderr(&o);
    assert!(took < 20.0, "took {took:.1} s: {e}");
    assert_ne!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("client host")
            && e.contains("did not answer within 2 s")
            && e.contains("sleep 100"),
        "{e}"
    );
    // A bad timeout is refused with its place.
    std::fs::write(&tb, "timeout = \"forever\"\n").unwrap();
    let o = fwbench(&["flood", "--no-store", "--testbed", tb.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(&o, "hang.toml:1:11: timeout");
}

/// Issue 38: `prlimit --as 50M fwbench …` aborted on an allocation failure and left
/// its run `running` for good. A process that dies without a word (SIGKILL here, by
/// the PID this test started: the same end as an abort) is seen as gone: `report`
/// shows the run interrupted with why (the file read-only, unchanged), and the next
/// command that opens the file for writing stores that.
#[root_test]
fn a_run_whose_process_died_is_interrupted_not_running() {
    let (_dir, db) = TempDir::with_file("r.db");
    let running = "SELECT count(*) FROM runs WHERE status = 'running'";
    let mut child = spawn_quiet(&cmd!("flood -t 30 -r 1kpps --db", &db));
    let pid = child.id();
    let started = wait_for(30.0, || db.exists() && sqlite_count(&db, running) == 1);
    child.kill().expect("SIGKILL our fwbench");
    let _ = child.wait();
    assert!(started, "the run never began");
    assert_eq!(sqlite_count(&db, running), 1, "stored as it was left");
    let o = fwbench(&cmd!("report --text", &db));
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        said.contains(&format!(
            "run 1 is interrupted (its process (pid {pid}) ended without finishing it"
        )),
        "{said}"
    );
    assert_eq!(sqlite_count(&db, running), 1, "report never writes");
    let o = fwbench(&cmd!("flood -t 1 -r 1kpps --db", &db));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sqlite_count(&db, running), 0);
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(*) FROM runs WHERE id = 1 AND status = 'interrupted' \
             AND ended_why LIKE 'its process (pid %'"
        ),
        1
    );
}
