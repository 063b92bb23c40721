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
            "rules advise (engine nft, udp port 5000): the optimised ruleset saves 14000 ± "
        ) && said[0].contains("no measurable saving"),
        "{}",
        said[0]
    );
    // A run without its other half has no figure.
    assert!(figures(&trials[..1]).is_empty());
}
