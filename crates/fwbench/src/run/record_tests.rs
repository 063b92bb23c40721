//! Unit tests of `run/record.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::*;

/// Each kind's stored family and main metric agree with what a file from before
/// schema 5 gets for the same workload name (the store's frozen legacy table), so
/// old and new trials of one workload rank alike in one report.
#[test]
fn kinds_say_what_the_legacy_names_said() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store::Store::open(&dir.path().join("r.db")).unwrap();
    let run = s.begin_run(&store::NewRun::default()).unwrap();
    // Workloads newer than schema 5 always say their kind; the legacy table
    // never names them.
    const NEWER: &[&str] = &["newflows", "ndr-newflows", "mlr"];
    for name in crate::params::search::Asked::names() {
        if NEWER.contains(&name) {
            continue;
        }
        // An engine, since the front door checks that a degrade search has one.
        let v =
            crate::plan::axes::AxisValues::from_text(name.parse().unwrap(), &[("engine", "nft")]);
        let p = crate::plan::build::build(&v.unwrap(), 1, &Default::default()).unwrap();
        let legacy = store::TrialRecord {
            run_id: run,
            trial_key: name.into(),
            workload: p.name().into(),
            ..Default::default()
        };
        s.insert_trial(&legacy).unwrap();
        let stored = s.trials(Some(run)).unwrap().pop().unwrap();
        assert_eq!(stored.kind, Some(kind_row(&p)), "{name}");
    }
}
