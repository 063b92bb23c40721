//! Unit tests of `conntrack`, beside `conntrack.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;
use serde_json::json;

fn trial(id: i64, rules: u64, offered: u64, admitted: u64, ct_drop: u64) -> Trial {
    Trial::new(store::TrialRow {
        engine: None,
        id,
        run_id: 1,
        trial_key: format!("k{id}"),
        rep: 0,
        error: None,
        headline: store::Headline::default(),
        started_at: String::new(),
        finished_at: String::new(),
        firewall: None,
        kind: None,
        status: "ok".into(),
        workload: "newflows".into(),
        params: json!({"engine": "nft", "rules": rules}),
        results: json!({"packet": {"conntrack": {
            "offered": offered, "admitted": admitted, "dropped": offered - admitted,
            "ct_drop": ct_drop, "insert_failed": 0, "early_drop": 0,
            "entries_after": admitted, "max": 5000,
            "new_flows_per_s": admitted as f64 / 0.5,
            "scope": [["nf_conntrack_max", "global"]],
            "agree": offered - admitted == ct_drop,
        }}}),
    })
}

/// A flood `id` received at `pps` through a conntrack table holding `entries` idle
/// entries at its start (`--ct-fill`).
fn fill(id: i64, entries: u64, pps: f64) -> Trial {
    let mut t = trial(id, 0, 1000, 1000, 0).row;
    t.workload = "flood".into();
    t.headline.received_pps = Some(pps);
    t.results["packet"]["conntrack"]["entries_before"] = json!(entries);
    t.results["packet"]["conntrack"]["buckets"] = json!(262_144);
    Trial::new(t)
}

#[test]
fn a_full_table_is_said_in_a_sentence_and_drawn_against_offered_flows() {
    let trials = vec![
        trial(1, 0, 8000, 5000, 3000),
        trial(2, 0, 8000, 5000, 3000),
        trial(3, 0, 4000, 4000, 0),
        trial(4, 100, 4000, 3990, 0),
    ];
    let f = findings(&trials);
    assert_eq!(f.len(), 3, "{f:#?}");
    let full = f.iter().find(|s| s.contains("8000 offered")).unwrap();
    assert!(
        full.contains(
            "engine=nft, 0 rules: means of 2 trials: with nf_conntrack_max = 5000 \
                 (host-wide: global on this kernel) and 8000 offered flows, the gateway \
                 admitted 5000 and dropped 3000 new flows (drop counter 3000, insert_failed 0"
        ),
        "{full}"
    );
    assert!(full.contains("equals the gateway's refusals"), "{full}");
    let lossy = f.iter().find(|s| s.contains("100 rules")).unwrap();
    assert!(
        lossy.contains("in 1 of 1 trials the traffic lost"),
        "{lossy}"
    );
    let figs = figures(&trials);
    let ids: Vec<&str> = figs.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        ["conntrack-drops-vs-offered", "conntrack-new-flows-vs-rules"]
    );
    let dropped = &figs[0].series[0];
    assert_eq!(dropped.name, "nft, nf_conntrack_max 5000: dropped");
    let at = |x: f64| dropped.points.iter().find(|p| p.x == x).map(|p| p.y);
    assert_eq!(at(8000.0), Some(3000.0));
    // 4000 offered: 0 and 10 dropped (two configurations), their mean.
    assert_eq!(at(4000.0), Some(5.0));
    // No conntrack trials: nothing.
    assert!(findings(&[]).is_empty() && figures(&[]).is_empty());
    // Table fill: floods at two occupancies, no new-flow sentences for them.
    let floods = [fill(5, 0, 100.0), fill(6, 100_000, 80.0)];
    assert!(findings(&floods).is_empty());
    let figs = figures(&floods);
    assert_eq!(figs.len(), 1);
    assert_eq!(figs[0].id, "conntrack-pps-vs-occupancy");
    let pts: Vec<(f64, f64)> = figs[0].series[0]
        .points
        .iter()
        .map(|p| (p.x, p.y))
        .collect();
    assert_eq!(pts, [(0.0, 100.0), (100_000.0, 80.0)]);
}

/// A trial whose sender fwbench limited: its new flows/s are the sender's, not the
/// gateway's — left out of the sentence's rate and the figures, and said; where every
/// trial of a configuration was, no rate is stated. One its sink limited: the flows it
/// "admitted" are those the sink counted — left out of the flows too; where most
/// trials were, the rest are no fair sample: nothing stated.
#[test]
fn rates_fwbench_limited_are_left_out_and_said() {
    let by = |role: &str, t: Trial| {
        let mut row = t.row.clone();
        row.results["packet"]["limited_by"] = json!({"by": role, "why": "planted"});
        Trial::new(row)
    };
    let limited = |t: Trial| by("sender", t);
    let trials = vec![
        trial(1, 0, 4000, 4000, 0),
        limited(trial(2, 0, 4000, 2000, 0)),
        limited(trial(3, 100, 4000, 3000, 0)),
        trial(8, 200, 4000, 4000, 0),
        by("sink", trial(9, 200, 4000, 1000, 0)),
        by("sink", trial(10, 200, 4000, 1000, 0)),
    ];
    let f = findings(&trials);
    let zero = f.iter().find(|s| s.contains("0 rules:")).unwrap();
    assert!(
        zero.contains(
            "the gateway admitted 3000 and dropped 1000 new flows (drop counter 0, \
             insert_failed 0, early_drop 0; 3000 entries at the end; 8000 admitted new \
             flows/s (over the 1 of 2 trials fwbench's sender did not limit));"
        ),
        "{zero}"
    );
    let hundred = f.iter().find(|s| s.contains("100 rules:")).unwrap();
    assert!(
        hundred.contains("no admitted new flows/s stated: fwbench's sender limited every trial"),
        "{hundred}"
    );
    let two = f.iter().find(|s| s.contains("200 rules:")).unwrap();
    assert!(
        two.contains(
            "4000 offered flows, no admitted or dropped flows stated (drop counter 0, \
             insert_failed 0, early_drop 0; 2000 entries at the end; no admitted new flows/s \
             either): fwbench's sink limited 2 of 3 trials: the rest are no fair sample; in"
        ),
        "{two}"
    );
    let figs = figures(&trials);
    let rate = figs
        .iter()
        .find(|f| f.id == "conntrack-new-flows-vs-rules")
        .unwrap();
    let pts: Vec<(f64, f64)> = rate.series[0].points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(pts, [(0.0, 8000.0)]);
    let note = "4 trial(s) limited by fwbench's sender and sink are not drawn: their rate \
                is fwbench's limit, not the gateway's.";
    assert!(rate.notes.contains(&note.to_string()), "{:?}", rate.notes);
    // Each rule count without a point says why (200: the one trial kept is no sample).
    let gone = [
        "nft at 100 rules: no point — fwbench's sender limited every trial.",
        "nft at 200 rules: no point — fwbench's sink limited 2 of 3 trials: the rest are no \
         fair sample.",
    ];
    assert!(
        gone.iter().all(|g| rate.notes.contains(&g.to_string())),
        "{:?}",
        rate.notes
    );
    // Table fill: a flood the sender limited is no point; where it limited most, the
    // one left is none either.
    let floods = [
        fill(5, 0, 100.0),
        fill(6, 100_000, 80.0),
        limited(fill(7, 200_000, 50.0)),
        fill(10, 300_000, 70.0),
        limited(fill(8, 300_000, 40.0)),
        limited(fill(9, 300_000, 40.0)),
    ];
    let fig = &figures(&floods)[0];
    let xs: Vec<f64> = fig.series[0].points.iter().map(|p| p.x).collect();
    assert_eq!(xs, [0.0, 100_000.0]);
    let notes = [
        "3 trial(s) limited by fwbench's sender are not drawn: their rate is fwbench's \
         limit, not the gateway's.",
        "nft, 262144 buckets at 200000 entries: no point — fwbench's sender limited every \
         trial.",
        "nft, 262144 buckets at 300000 entries: no point — fwbench's sender limited 2 of 3 \
         trials: the rest are no fair sample.",
    ];
    assert!(
        notes.iter().all(|n| fig.notes.contains(&n.to_string())),
        "{:?}",
        fig.notes
    );
}
