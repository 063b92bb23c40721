//! Tests of a stored `--load` read back typed ([`LoadStored`]): its capacity and the
//! search that found it, and a load or part of it of another shape read as unreadable,
//! never as absent.

use super::*;
use serde_json::json;

fn load(l: Value) -> Option<LoadStored> {
    StoredParams::read(&json!({"packet": {"events": {"load": l}}}))
        .event_load()
        .cloned()
}

/// As fwbench stores it once the trial ran: the capacity, and how the search found it
/// with its doubts (each read alone; absent in searches stored before they had them).
#[test]
fn a_loads_capacity_and_its_search_read_typed() {
    let l = load(json!({"fraction": 0.5, "capacity": {"pps": 41000.0,
        "background_pps": 20500.0, "search": {"loss": 0.0, "step_s": 1.0, "trials": 7,
        "converged": false, "fail_pps": 45000.0, "limited_by_sender": true,
        "doubts": [{"kind": "contradicting", "why": "passed, then failed"}, 3]}}}))
    .unwrap();
    let c = l.capacity.unwrap();
    assert_eq!((c.pps, c.background_pps), (Some(41000.0), Some(20500.0)));
    let s = c.search.unwrap();
    assert_eq!(
        (s.converged, s.limited_by_sender, s.trials, s.fail_pps),
        (Some(false), Some(true), Some(7), Some(45000.0))
    );
    let kinds: Vec<&str> = s.doubts.iter().map(|d| d.kind.as_str()).collect();
    assert_eq!(kinds, ["contradicting", "unreadable"]);
    // Stated: no search.
    let l = load(json!({"fraction": 0.25, "of": {"pps": 40000.0},
        "capacity": {"pps": 40000.0, "background_pps": 10000.0}}))
    .unwrap();
    assert_eq!(l.capacity.unwrap().search, None);
    // Stored before the capacity was recorded.
    assert_eq!(load(json!({"fraction": 0.5})).unwrap().capacity, None);
}

/// A load, a stated rate or a capacity of another shape reads as one with nothing
/// read — never as none (a load of no stated rate reads as found by a search); `null`
/// reads as none.
#[test]
fn a_load_of_another_shape_is_unreadable_never_absent() {
    assert_eq!(load(json!("half")), Some(LoadStored::default()));
    assert_eq!(load(json!([0.5])), Some(LoadStored::default()));
    let l = load(json!({"fraction": 0.5, "of": "40kpps", "capacity": [1]})).unwrap();
    assert_eq!(l.of, Some(RateStored::default()));
    assert_eq!(l.capacity, Some(CapacityStored::default()));
    let l = load(json!({"fraction": 0.5, "capacity": {"pps": 1.0, "search": "ndr"}})).unwrap();
    assert_eq!(
        l.capacity.unwrap().search,
        Some(CapacitySearchStored::default())
    );
    assert_eq!(load(Value::Null), None);
    let l = load(json!({"fraction": 0.5, "of": null, "capacity": null})).unwrap();
    assert_eq!((l.of, l.capacity), (None, None));
}

/// A capacity search's doubts that are not a list read as one unreadable doubt, never
/// as none (the search would read clean); `null` is none; a list's items each alone.
#[test]
fn doubts_that_are_no_list_are_one_unreadable_never_none() {
    let search = |doubts: Value| {
        load(json!({"fraction": 0.5, "capacity": {"pps": 1.0,
            "search": {"converged": true, "doubts": doubts, "fail_by_fwbench": "sink"}}}))
        .unwrap()
        .capacity
        .unwrap()
        .search
        .unwrap()
    };
    let s = search(json!("out of trials"));
    assert_eq!(s.doubts.len(), 1, "{s:?}");
    assert_eq!(s.doubts[0].kind, "unreadable");
    assert_eq!(s.doubts[0].why, "\"out of trials\"");
    assert_eq!(s.fail_by_fwbench.as_deref(), Some("sink"));
    assert_eq!(search(Value::Null).doubts, vec![]);
    let s = search(json!([{"kind": "contradiction", "why": "w"}, 3]));
    assert_eq!(
        s.doubts.iter().map(|d| d.kind.as_str()).collect::<Vec<_>>(),
        ["contradiction", "unreadable"]
    );
}
