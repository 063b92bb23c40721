//! Unit tests of `advise`, beside `advise.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;
use serde_json::json;

fn flood(file: &str, pps: f64) -> Trial {
    Trial::new(store::TrialRow {
        params: json!({"engine": "nft", "import": format!("/tmp/fwbench-advise-7/{file}"),
                           "packet": {"dport": [5000, 5000]}}),
        headline: store::Headline {
            received_pps: Some(pps),
            ..Default::default()
        },
        ..crate::testing::trial_row(1, "flood")
    })
}

#[test]
fn both_rulesets_and_the_saving_in_one_figure() {
    // Original: 100 000 and 50 000 pps (10 000 and 20 000 ns); optimised: 1 000 000
    // twice (1 000 ns).
    let trials = [
        flood("original.nft", 1e5),
        flood("optimised.nft", 1e6),
        flood("optimised.nft", 1e6),
        flood("original.nft", 5e4),
        flood("unrelated.nft", 1e3),
    ];
    let f = figures(&trials);
    assert_eq!(f.len(), 1);
    let p = &f[0].series[0].points;
    assert_eq!(f[0].categories.len(), 3);
    assert_eq!((p[0].x, p[0].y), (0.0, 15000.0));
    assert_eq!((p[1].x, p[1].y, p[1].ci95), (1.0, 1000.0, Some(0.0)));
    assert_eq!((p[2].x, p[2].y), (2.0, 14000.0));
    // Welch with one side constant: the original's CI, t(0.975, 1) · sd / √2 with
    // sd = 7071 (10 000 and 20 000 ns): 12.706 · 5000.
    let ci = p[2].ci95.unwrap();
    assert!((ci - 12.706 * 5000.0).abs() < 5.0, "{ci}");
    assert_eq!(f[0].series[0].name, "engine nft, udp port 5000");
    let said = findings(&trials);
    assert_eq!(said.len(), 1);
    assert!(
        said[0].starts_with(
            "rules advise (engine nft, udp port 5000): no measurable saving: 14000 ± "
        ),
        "{}",
        said[0]
    );
    // A run without its other half has no figure.
    assert!(figures(&trials[..1]).is_empty());
}

/// A run here: all three floods through the optimised ruleset were limited by fwbench's
/// sender (the gateway passed all it was offered), and the finding read "2.1× cheaper"
/// as the gateway's. A side with a limited flood is an upper bound, all its floods
/// counted (the others alone would keep the slow draws): the optimised's makes the
/// saving "at least"; the original's states none.
#[test]
fn a_saving_is_a_bound_where_fwbench_limited_the_floods() {
    let limited = |file: &str, pps: f64| {
        let mut row = flood(file, pps).row.clone();
        row.results = json!({"packet": {"limited_by": {"by": "sender"}}});
        Trial::new(row)
    };
    // The one finding of `trials` holds every one of `has` and none of `not`.
    let says = |trials: &[Trial], has: &[&str], not: &str| {
        let said = findings(trials);
        assert!(
            has.iter().all(|h| said[0].contains(h)) && !said[0].contains(not),
            "{}",
            said[0]
        );
    };
    let bounded = [
        flood("original.nft", 1e5),
        flood("original.nft", 1.01e5),
        flood("optimised.nft", 2.02e5),
        limited("optimised.nft", 2e5),
    ];
    says(
        &bounded,
        &[
            "the optimised ruleset saves at least ",
            ": at least 2× cheaper per packet",
            "limited 1 of the 2 floods through the optimised ruleset",
        ],
        "no saving",
    );
    let f = figures(&bounded);
    assert!(
        f[0].notes
            .iter()
            .any(|n| n.starts_with("Saving: the optimised ruleset saves at least")),
        "{:?}",
        f[0].notes
    );
    // One flood a side: no CI, no saving stated as one (a run here read "saves 3628 ns
    // per packet (…; 3 and 1 floods): 2× cheaper").
    says(
        &[flood("original.nft", 1e5), flood("optimised.nft", 2e5)],
        &[
            "): no saving is measured: 5000 ns per packet has no CI (1 and 1 floods, no \
           spread to test)",
        ],
        "cheaper",
    );
    // An upper bound above the original's time bounds nothing.
    let above = [
        flood("original.nft", 2e5),
        flood("original.nft", 2.02e5),
        limited("optimised.nft", 1e5),
        limited("optimised.nft", 1.01e5),
    ];
    says(
        &above,
        &[
            "no measurable saving: ",
            "limited 2 of the 2 floods through the optimised ruleset",
        ],
        "dearer",
    );
    // One limited flood through the original: its time is fwbench's, nothing stated.
    let unstated = [
        flood("original.nft", 1e5),
        limited("original.nft", 1.01e5),
        flood("optimised.nft", 2e5),
        flood("optimised.nft", 2.02e5),
    ];
    says(
        &unstated,
        &[
            "no saving is stated: fwbench's sender or sink limited 1 of the 2 floods \
           through the original ruleset",
        ],
        "cheaper",
    );
}

/// A flood that did not end ok (flagged: its time may not be stated) leaves no saving
/// of the rest, as the command itself states none: the finding and the figure say why,
/// the figure has no saving bar (its note once said "their traffic did not arrive").
#[test]
fn no_saving_is_stated_where_a_flood_did_not_end_ok() {
    let mut flagged = flood("optimised.nft", 1e6);
    flagged.row.status = "flagged".into();
    flagged.status = results::Status::Flagged;
    let trials = [
        flood("original.nft", 1e5),
        flood("optimised.nft", 1e6),
        flood("original.nft", 1.1e5),
        flood("optimised.nft", 1.05e6),
        flood("original.nft", 0.9e5),
        flagged,
    ];
    let said = findings(&trials);
    assert_eq!(
        said,
        [
            "rules advise (engine nft, udp port 5000): no saving stated — 1 flood did not end \
          ok (flagged, dropped or failed: the trials table says why), and a saving of the \
          rest would rest on the floods that happened to pass."
        ]
    );
    let f = figures(&trials);
    assert_eq!(f[0].categories, ["original", "optimised"]);
    assert!(
        f[0].notes
            .iter()
            .any(|n| n.starts_with("Saving: no saving stated — 1 flood")),
        "{:?}",
        f[0].notes
    );
    // A side whose one flood did not end ok: said all the same (it once left no
    // finding and no figure).
    let lone = [flood("original.nft", 1e5), trials[5].clone()];
    assert_eq!(
        findings(&lone),
        [
            "rules advise (engine nft, udp port 5000): no saving stated — 1 flood did not end \
          ok (flagged, dropped or failed: the trials table says why), and a saving of the \
          rest would rest on the floods that happened to pass."
        ]
    );
    assert!(
        !f[0].notes.iter().any(|n| n.contains("did not arrive")),
        "{:?}",
        f[0].notes
    );
}
