//! Unit tests of `hotrules`, beside `hotrules.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;
use serde_json::json;

fn trial(aim: &str, status: &str, pps: Option<f64>) -> Trial {
    Trial::new(store::TrialRow {
        trial_key: "k".into(),
        status: status.into(),
        params: json!({"engine": "nft", "import": "ufw.nft", "packet": {"aim": aim}}),
        headline: store::Headline {
            received_pps: pps,
            ..Default::default()
        },
        results: json!({"gateway": {"firewall": {"verdicts": {"rules": [
            {"chain": "input", "index": 1}, {"chain": "input", "index": 2},
            {"chain": "sub", "index": 1}
        ]}}}}),
        ..crate::testing::trial_row(1, "flood")
    })
}

#[test]
fn plots_ns_per_packet_by_position() {
    let trials = [
        trial("1", "ok", Some(1e6)),
        trial("1", "ok", Some(0.5e6)),
        trial("sub:1", "ok", Some(0.25e6)),
        trial("2", "dropped", Some(0.0)),
    ];
    let f = figure(&trials).unwrap();
    assert_eq!(f.series.len(), 1);
    let p = &f.series[0].points;
    assert_eq!(p.len(), 2);
    // Rule 1: 1000 ns and 2000 ns → mean 1500; sub:1 is the third rule: 4000 ns.
    assert_eq!((p[0].x, p[0].y), (1.0, 1500.0));
    assert!(p[0].ci95.is_some());
    assert_eq!((p[1].x, p[1].y, p[1].ci95), (3.0, 4000.0, None));
    assert!(f.notes[1].starts_with("1 aimed trials are not plotted"));
    // Three positions: the sentence with the cost per rule passed and the worst.
    let mut trials = trials.to_vec();
    trials.push(trial("2", "ok", Some(1e9 / 2600.0)));
    trials.push(trial("2", "ok", Some(1e9 / 2400.0)));
    let said = findings(&trials);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with(
            "nft (ufw.nft): no measurable cost per rule passed (1300 ± 1800 ns per \
                 rule, the 95 % CI holds 0; least squares over the median of each of 3 rule \
                 positions, 5 trials, R² 0.99)"
        ) && said[0].ends_with(
            "the costliest to reach: rule 3 (4000 ns per packet), rule 2 (2500 ns \
                     per packet), rule 1 (1500 ns per packet)."
        ),
        "{}",
        said[0]
    );
    assert!(findings(&trials[..3]).is_empty(), "two positions: no line");
    // 410 ns per rule with ±130 ns of noise: measured, but the CI is wide.
    let noisy: Vec<Trial> = [(1, 600.0), (2, 1100.0), (3, 1300.0), (4, 1900.0)]
        .iter()
        .map(|&(n, ns)| trial(&n.to_string(), "ok", Some(1e9 / ns)))
        .collect();
    let said = findings(&noisy);
    assert!(said[0].contains("— not stable"), "{}", said[0]);
    // An exact line of 500 ns per rule: stable, said without a warning.
    let exact: Vec<Trial> = [1, 2, 3, 1, 2, 3]
        .iter()
        .map(|&n| trial(&n.to_string(), "ok", Some(1e9 / (500.0 * f64::from(n)))))
        .collect();
    let said = findings(&exact);
    assert!(
        said[0].starts_with("nft (ufw.nft): reaching a rule costs 500 ± 0 ns per packet")
            && !said[0].contains("not stable"),
        "{}",
        said[0]
    );
    let mut plain = trial("1", "ok", Some(1.0)).row;
    plain.params = json!({"engine": "nft"});
    assert!(figure(&[Trial::new(plain)]).is_none());
}
