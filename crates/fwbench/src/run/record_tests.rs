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

/// A search's step is stored marked (`results.step_of`), and reads back typed as the
/// report reads it; a trial asked for is not marked.
#[test]
fn a_step_is_stored_marked_with_its_search() {
    let v = crate::plan::axes::AxisValues::from_text("flood".parse().unwrap(), &[]).unwrap();
    let p = crate::plan::build::build(&v, 1, &Default::default()).unwrap();
    let t = PlannedTrial {
        key: "k".into(),
        rep: 1,
        params: p,
    };
    let o = Outcome::started("t0".into());
    for (of, name) in [
        (results::StepOf::Capacity, "capacity"),
        (results::StepOf::Search, "search"),
    ] {
        let rec = record_step(1, &t, &o, of);
        assert_eq!(rec.results["step_of"], name);
        assert_eq!(results::StoredTrial::read(&rec.results).step_of, Some(of));
        // Everything else as the trial's own row.
        let mut plain = rec.results.clone();
        plain.as_object_mut().unwrap().remove("step_of");
        assert_eq!(plain, record(1, &t, &o).results);
    }
    assert_eq!(
        results::StoredTrial::read(&record(1, &t, &o).results).step_of,
        None
    );
}
