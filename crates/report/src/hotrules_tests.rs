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
    // Three positions: the sentence with the cost per rule passed; its CI holds 0, so
    // no rule is named the costliest (their order is the noise's).
    let mut trials = trials.to_vec();
    trials.push(trial("2", "ok", Some(1e9 / 2600.0)));
    trials.push(trial("2", "ok", Some(1e9 / 2400.0)));
    let said = findings(&trials);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with(
            "nft (ufw.nft): no measurable cost per rule passed (1300 ± 1800 ns per \
                 rule, the 95 % CI holds 0; least squares over the median of each of 3 rule \
                 positions, 5 trials, R² 0.99)."
        ) && !said[0].contains("costliest"),
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
            && !said[0].contains("not stable")
            && said[0].ends_with(
                "the costliest to reach: rule 3 (1500 ns per packet), rule 2 (1000 ns per \
                 packet), rule 1 (500 ns per packet)."
            ),
        "{}",
        said[0]
    );
    let mut plain = trial("1", "ok", Some(1.0)).row;
    plain.params = json!({"engine": "nft"});
    assert!(figure(&[Trial::new(plain)]).is_none());
}

/// A trial aimed at rule `n` taking `ns` per packet, its rate set by `by`.
fn limited(n: usize, ns: f64, by: &str) -> Trial {
    let mut t = trial(&n.to_string(), "ok", Some(1e9 / ns)).row;
    t.results["packet"] = json!({"limited_by": {"by": by, "why": "planted"}});
    Trial::new(t)
}

/// The hot-rules scenario here: 113 of 120 trials limited by fwbench's sender (the
/// sender, not the gateway, set their rates), and the sentence said "reaching a rule
/// costs −10.9 ± 4.7 ns per packet for each rule passed". Only the gateway's trials
/// are a time per packet of reaching a rule; the others are said as left out, and a
/// cost measured below 0 is flagged, never a finding.
#[test]
fn only_the_gateways_rates_cost_a_rule_and_a_negative_cost_is_flagged() {
    // Sender-limited trials falling with the position (−50 ns per rule), the gateway's
    // rising (+100 ns per rule): the cost is the gateway's alone.
    let mut ts: Vec<Trial> = (1..=6)
        .flat_map(|n| {
            [
                limited(n, 4000.0 - 50.0 * n as f64, "sender"),
                limited(n, 4010.0 - 50.0 * n as f64, "sender"),
            ]
        })
        .collect();
    ts.extend((1..=3).map(|n| limited(n, 1000.0 + 100.0 * n as f64, "gateway")));
    let said = findings(&ts);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("nft (ufw.nft): FLAGGED — reaching a rule costs 100 ± 0 ns per packet")
            && said[0].contains(
                "Left out: 12 of 15 trials: 12 limited by fwbench's sender, not by the gateway"
            )
            && said[0].contains("— FLAGGED: at some rule position more than half")
            && !said[0].contains("costliest"),
        "{}",
        said[0]
    );
    let f = figure(&ts).unwrap();
    assert_eq!(f.series[0].points.len(), 3, "{:?}", f.series);
    assert!(
        f.notes
            .iter()
            .any(|n| n.starts_with("nft (ufw.nft): not plotted: 12 of 15 trials")),
        "{:?}",
        f.notes
    );
    // Both of fwbench's roles: both told what to do.
    let mut both = ts[..12].to_vec();
    both.push(limited(1, 900.0, "sink"));
    let said = findings(&both);
    assert!(
        said[0].contains("limited by fwbench's sender and sink")
            && said[0].contains("give the sender more threads on CPUs of their own, and the sink"),
        "{said:?}"
    );
    // Every trial the sender's: no cost stated, and why.
    let said = findings(&ts[..12]);
    assert_eq!(
        said,
        [
            "nft (ufw.nft): no cost per rule passed is stated — left out: 12 of 12 trials: 12 \
          limited by fwbench's sender, not by the gateway (their rates are fwbench's limit: \
          give the sender more threads on CPUs of their own — see the run's warnings)."
        ]
    );
    // The gateway's own times falling with the position: flagged, not a saving.
    let falling: Vec<Trial> = [(1, 3000.0), (2, 2900.0), (3, 2790.0), (4, 2700.0)]
        .iter()
        .map(|&(n, ns)| limited(n, ns, "gateway"))
        .collect();
    let said = findings(&falling);
    assert!(
        said[0].starts_with("nft (ufw.nft): FLAGGED — reaching a later rule measured -")
            && said[0].contains("a rule passed adds work"),
        "{}",
        said[0]
    );
}
