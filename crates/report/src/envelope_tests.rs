use super::*;
use crate::testing::trial_row;

/// An envelope search stored as the runner stores it: `rate` at `installed` rules of
/// `engine`, converged or not.
fn search(id: i64, engine: &str, installed: f64, rate: Option<f64>, converged: bool) -> Trial {
    let mut row = trial_row(id, "envelope");
    row.params = serde_json::json!({ "engine": engine });
    row.results = serde_json::json!({ "search": {
        "search": "envelope", "converged": converged, "rate": rate,
        "fail_rate": rate.map(|r| r * 1.2), "update": "add:1 (batch)",
        "installed": installed,
    }});
    Trial::new(row)
}

/// Converged searches give their rate, as a metric and as points of a line per
/// engine and update over sizes (the mean of two searches with its CI); a search
/// that did not converge gives none and is counted in a note; one size draws nothing.
#[test]
fn safe_rates_over_sizes_are_one_line_per_engine_and_update() {
    let trials = vec![
        search(1, "nft", 1000.0, Some(11.0), true),
        search(2, "nft", 1000.0, Some(13.0), true),
        search(3, "nft", 20_000.0, Some(2.0), true),
        search(4, "nft", 20_000.0, Some(9.0), false),
        search(5, "ipset-nft", 1000.0, Some(40.0), true),
        search(6, "ipset-nft", 20_000.0, None, true),
    ];
    assert_eq!(safe_rate(&trials[0]), Some(11.0));
    assert_eq!(safe_rate(&trials[3]), None, "not converged");
    assert_eq!(safe_rate(&trials[5]), None, "no rate held");
    let f = figures(&trials);
    assert_eq!(f.len(), 1);
    let f = &f[0];
    assert_eq!(f.id, "envelope-vs-installed");
    let nft = f
        .series
        .iter()
        .find(|s| s.name == "nft add:1 (batch)")
        .unwrap();
    let xy: Vec<(f64, f64)> = nft.points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(xy, [(1000.0, 12.0), (20_000.0, 2.0)]);
    // Two searches: mean 12, sd √2, t(1) 12.706: ± 12.706.
    let ci = nft.points[0].ci95.unwrap();
    assert!((ci - 12.706).abs() < 0.01, "{ci}");
    assert_eq!(nft.points[1].ci95, None);
    let ipset = f
        .series
        .iter()
        .find(|s| s.name.starts_with("ipset-nft"))
        .unwrap();
    assert_eq!(ipset.points.len(), 1);
    assert!(
        f.notes
            .iter()
            .any(|n| n.starts_with("2 search(es) left out")),
        "{:?}",
        f.notes
    );
    assert!(figures(&trials[..2]).is_empty(), "one size: no line");
    // A table filled with conntrack entries (`--ct-fill`) is a line of its own.
    let mut filled = search(7, "nft", 20_000.0, Some(1.0), true);
    filled.p = results::stored::StoredParams::read(
        &serde_json::json!({ "engine": "nft", "packet": { "ct_fill": 200000 } }),
    );
    let mut with = trials.clone();
    with.push(filled);
    let names: Vec<String> = figures(&with)[0]
        .series
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert!(
        names.contains(&"nft add:1 (batch), 200000 conntrack entries".to_string()),
        "{names:?}"
    );
}

/// An envelope's background at a share of each size's capacity (`--load`) is a line of
/// its own, named by that share: envelopes at other backgrounds are not one line.
#[test]
fn a_background_load_is_a_line_of_its_own() {
    let loaded = |id: i64, installed: f64, pps: f64| {
        let mut t = search(id, "nft", installed, Some(5.0), true);
        t.p = results::stored::StoredParams::read(&serde_json::json!({ "engine": "nft",
            "packet": { "events": { "load": { "fraction": 0.5, "capacity": { "pps": pps,
                "background_pps": pps / 2.0, "search": { "loss": 0.0, "step_s": 1.0,
                "trials": 9, "converged": true, "limited_by_sender": false } } } } } }));
        t
    };
    let trials = vec![
        search(1, "nft", 1000.0, Some(11.0), true),
        search(2, "nft", 20_000.0, Some(2.0), true),
        loaded(3, 1000.0, 90_000.0),
        loaded(4, 20_000.0, 9_000.0),
    ];
    let f = figures(&trials);
    let names: Vec<&str> = f[0].series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "nft add:1 (batch)",
            "nft add:1 (batch), background at 50 % of each size's capacity (found by search)"
        ]
    );
    assert!(f[0].series.iter().all(|s| s.points.len() == 2), "{names:?}");
}
