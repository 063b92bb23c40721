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
    // The workloads of schema 5's time, which its frozen legacy table names
    // (`store::schema::LEGACY_KINDS`): frozen too. Newer workloads always say their
    // kind, so a new one is added to neither list.
    const LEGACY: &[&str] = &[
        "echo",
        "flood",
        "flow",
        "ping",
        "ndr",
        "degrade",
        "sessions",
        "bulk",
        "http",
        "connections",
    ];
    for &name in LEGACY {
        assert!(
            crate::params::search::Asked::names().contains(&name),
            "{name}: no longer a workload or search"
        );
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
