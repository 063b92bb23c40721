//! Unit tests of the crate root, beside `lib.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;

/// An echo trial of run `run_id` with two clients (the modules' tests share it).
pub(crate) fn trial(run_id: i64, key: &str) -> TrialRecord {
    TrialRecord {
        run_id,
        trial_key: key.into(),
        rep: 1,
        workload: "echo".into(),
        status: "ok".into(),
        started_at: "t0".into(),
        finished_at: "t1".into(),
        params: serde_json::json!({"clients": 2}),
        placement: serde_json::json!({}),
        headline: Headline {
            throughput_bps: Some(1e6),
            validation_errors: Some(0),
            received_pps: Some(12_345.5),
            ..Default::default()
        },
        results: serde_json::json!({}),
        echo_clients: vec![
            EchoClientRow {
                client: 1,
                ..Default::default()
            },
            EchoClientRow {
                client: 2,
                rtt_us: Some([1.0, 2.0, 3.0, 4.0, 5.0]),
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}

/// A new results file `name` in a scratch directory (removed when the directory is
/// dropped) with one run begun: the directory, the file, the store and the run (the
/// modules' tests share it).
pub(crate) fn scratch_run(name: &str) -> (tempfile::TempDir, std::path::PathBuf, Store, i64) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    let s = Store::open(&p).unwrap();
    let run = s.begin_run(&NewRun::default()).unwrap();
    (dir, p, s, run)
}

#[test]
fn create_write_reopen_read() {
    let (_dir, p, mut s, run) = scratch_run("r.db");
    let id = s.insert_trial(&trial(run, "abc")).unwrap();
    s.finish_run(run, "t2", "complete").unwrap();
    drop(s);
    let s = Store::open(&p).unwrap();
    let rows = s.trials(Some(run)).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].headline.throughput_bps, Some(1e6));
    assert_eq!(rows[0].params["clients"], 2);
    assert_eq!(s.echo_client_count(id).unwrap(), 2);
    assert_eq!(s.run_status(run).unwrap().as_deref(), Some("complete"));
}

/// The envelope preset ended "9 of 9 trials stored" above findings of "43 of 56
/// trials": its searches store each step. The count is the run's, of every status.
#[test]
fn a_runs_trials_are_counted_whatever_their_status() {
    let (_dir, _p, mut s, run) = scratch_run("c.db");
    let other = s.begin_run(&NewRun::default()).unwrap();
    assert_eq!(s.trial_count(run).unwrap(), 0);
    s.insert_trial(&trial(run, "a")).unwrap();
    s.insert_trial(&TrialRecord {
        status: "failed".into(),
        ..trial(run, "b")
    })
    .unwrap();
    s.insert_trial(&trial(other, "c")).unwrap();
    assert_eq!(s.trial_count(run).unwrap(), 2);
    assert_eq!(s.trial_count(other).unwrap(), 1);
}

#[test]
fn read_only_open_of_a_current_file_never_writes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.db");
    {
        let mut s = Store::open(&p).unwrap();
        let run = s.begin_run(&NewRun::default()).unwrap();
        s.insert_trial(&trial(run, "abc")).unwrap();
    }
    let before = std::fs::read(&p).unwrap();
    let s = Store::open_read_only(&p).unwrap();
    assert_eq!(s.trials(None).unwrap().len(), 1);
    assert!(s.begin_run(&NewRun::default()).is_err());
    drop(s);
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

/// Resume runs again what failed and nothing else: a flagged, dropped or unavailable
/// trial is finished for good (a flagged one ran again would hit its stored key).
#[test]
fn only_failed_trials_are_run_again_on_resume() {
    let (_dir, _p, mut s, run) = scratch_run("r.db");
    for status in ["ok", "flagged", "dropped", "unavailable", "failed"] {
        let mut t = trial(run, status);
        t.status = status.into();
        s.insert_trial(&t).unwrap();
    }
    let mut done: Vec<String> = s.done_keys(run).unwrap().into_iter().collect();
    done.sort();
    assert_eq!(done, ["dropped", "flagged", "ok", "unavailable"]);
    assert_eq!(s.drop_failed(run).unwrap(), 1);
    // The failed one's key is free again; the others' are not.
    s.insert_trial(&trial(run, "failed")).unwrap();
    assert!(s.insert_trial(&trial(run, "flagged")).is_err());
}
