//! Unit tests of the crate root, beside `lib.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;
use figure::Estimator;

#[test]
fn a_flagged_cost_line_is_a_warning() {
    // Flat, then steep: the line does not describe it.
    let groups: Vec<(f64, Vec<f64>)> = [0.0, 1000.0, 2000.0, 5000.0, 10000.0]
        .iter()
        .map(|r: &f64| {
            let t = 2000.0 + 20.0 * (r - 2000.0).max(0.0);
            (*r, vec![t * 0.99, t * 1.01])
        })
        .collect();
    let e = throughput::estimate_of(Estimator::TimePerPacket, &groups).unwrap();
    assert!(e.problem.is_some());
    let mut a = Analysis::default();
    a.fits.push(crate::testing::cost_fit("engine=nft", e));
    let w = fit_warnings(7, &a);
    assert_eq!(w.len(), 1);
    assert_eq!((w[0].run_id, w[0].kind.as_str()), (7, "cost-fit"));
    assert!(
        w[0].message
            .starts_with("cost model of engine=nft (1/pps): "),
        "{}",
        w[0].message
    );
}

#[test]
fn a_trial_on_a_dirty_gateway_is_a_warning() {
    let run = RunRow {
        started_at: "t0".into(),
        scenario: "s".into(),
        seed: 1,
        command: "fwbench run".into(),
        ..crate::testing::run_row(3)
    };
    let trial = |id, results: serde_json::Value| {
        Trial::new(store::TrialRow {
            run_id: 3,
            started_at: "t0".into(),
            finished_at: "t1".into(),
            results,
            ..crate::testing::trial_row(id, "flood")
        })
    };
    let trials = vec![
        trial(1, serde_json::json!({"clean_start": true})),
        trial(
            2,
            serde_json::json!({"clean_start": false,
                    "start_differences": ["legacy table filter instantiated"]}),
        ),
        trial(3, serde_json::json!({})),
    ];
    let w = warnings(&run, &trials, &[]);
    let dirty: Vec<&Warning> = w.iter().filter(|w| w.kind == "dirty-gateway").collect();
    assert_eq!(dirty.len(), 1, "{w:?}");
    assert_eq!(dirty[0].trial_id, Some(2));
    assert!(
        dirty[0]
            .message
            .ends_with("ran on a gateway not clean at start: legacy table filter instantiated"),
        "{}",
        dirty[0].message
    );
}

/// A server's requests that did not match the pattern: corruption, the red box —
/// but with gateway events an update cuts sessions off mid-request, which the trial
/// measures: a warning that says so, no corruption claimed.
#[test]
fn bad_requests_are_corruption_except_where_updates_cut_sessions_off() {
    let with = |params: serde_json::Value, failed: u64| {
        Trial::new(store::TrialRow {
            params,
            results: serde_json::json!({"conn": {"sessions": 100, "failed": failed,
                "server": {"bad_requests": 3}}}),
            ..crate::testing::trial_row(1, "sessions")
        })
    };
    let trial = |params| with(params, 0);
    let plain = conn_warnings(&trial(serde_json::json!({})), "t1");
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert_eq!(plain[0].0, "corrupt");
    assert!(plain[0]
        .1
        .starts_with("DATA CORRUPTION: t1: the server received 3"));
    // Sessions the client gave up on: they may be the requests cut off — said so, no
    // red box.
    let gave_up = conn_warnings(&with(serde_json::json!({}), 3), "t1");
    assert_eq!(
        gave_up.iter().map(|w| w.0).collect::<Vec<_>>(),
        ["bad-requests", "sessions-failed"]
    );
    assert!(
        gave_up[0]
            .1
            .ends_with("or some of the 3 sessions the client gave up on, cut off in their request"),
        "{gave_up:?}"
    );
    // More bad requests than sessions given up (each cuts off one at most): corruption.
    let more = conn_warnings(&with(serde_json::json!({}), 2), "t1");
    assert_eq!(more[0].0, "corrupt", "{more:?}");
    let events = conn_warnings(
        &trial(serde_json::json!({"events": {"kind": "add", "k": 1, "at_s": 1.0}})),
        "t1",
    );
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, "bad-requests");
    assert!(!events[0].1.contains("DATA CORRUPTION"), "{events:?}");
    assert!(events[0].1.contains("an update cut off"), "{events:?}");
}

#[test]
fn a_flagged_trial_is_warned_of_with_its_reason_not_as_failed() {
    let run = RunRow {
        started_at: "t0".into(),
        ..crate::testing::run_row(3)
    };
    let trial = |id, status: &str| {
        Trial::new(store::TrialRow {
            status: status.into(),
            error: Some("verdict mismatch: the rule counted 0 of 5000 packets".into()),
            ..crate::testing::trial_row(id, "flood")
        })
    };
    let w = warnings(&run, &[trial(1, "flagged"), trial(2, "failed")], &[]);
    let kinds: Vec<&str> = w.iter().map(|w| w.kind.as_str()).collect();
    assert!(
        kinds.contains(&"flagged") && kinds.contains(&"failed"),
        "{w:?}"
    );
    let f = w.iter().find(|w| w.kind == "flagged").unwrap();
    assert_eq!(f.trial_id, Some(1));
    assert!(
        f.message
            .ends_with("flagged: verdict mismatch: the rule counted 0 of 5000 packets"),
        "{}",
        f.message
    );
    assert_eq!(w.iter().filter(|w| w.kind == "failed").count(), 1, "{w:?}");
}
