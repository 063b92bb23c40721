//! Unit tests of `nat`, beside `nat.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;
use crate::stats::Summary;
use std::collections::BTreeMap;

fn config(workload: &str, engine: &str, model: &str, rules: u64, metric: (&str, f64)) -> Config {
    let mut flat = BTreeMap::new();
    flat.insert("engine".to_string(), engine.to_string());
    flat.insert("model".to_string(), model.to_string());
    flat.insert("rules".to_string(), rules.to_string());
    let mut metrics = BTreeMap::new();
    metrics.insert(
        metric.0.to_string(),
        Summary {
            n: 3,
            mean: metric.1,
            sd: Some(1.0),
            ci95: Some(2.0),
        },
    );
    Config {
        key: format!("{workload}{engine}{model}{rules}"),
        params: serde_json::Value::Null,
        flat,
        workload: workload.into(),
        label: None,
        engine: Some(store::EngineRow {
            id: engine.into(),
            kind: if engine == "none" { "none" } else { "nft" }.into(),
        }),
        reps: vec![],
        failed: vec![],
        unavailable: vec![],
        metrics,
        values: BTreeMap::new(),
        rules: None,
        is_baseline: false,
        cost_pct: None,
        cost_ci95: None,
    }
}

#[test]
fn nat_costs_against_plain_forwarding_and_conntrack_alone() {
    let cs = [
        config("flood", "none", "none", 0, ("ns_per_packet", 1000.0)),
        config("flood", "nft", "conntrack", 0, ("ns_per_packet", 1100.0)),
        config("flood", "nft", "snat", 0, ("ns_per_packet", 1150.0)),
        config("flood", "nft", "snat", 1000, ("ns_per_packet", 1160.0)),
        config("sessions", "none", "none", 0, ("sessions_per_s", 10_000.0)),
        config("sessions", "nft", "dnat", 0, ("sessions_per_s", 8_000.0)),
        config("sessions", "nft", "dnat", 1000, ("sessions_per_s", 5_000.0)),
    ];
    let refs: Vec<&Config> = cs.iter().collect();
    let mut a = Analysis::default();
    analyse(&refs, &mut a);
    assert_eq!(a.tables.len(), 1);
    assert_eq!(a.tables[0].rows.len(), 5);
    assert_eq!(a.figures.len(), 2);
    let f = &a.findings;
    assert!(
        f[1].starts_with("flood: nft snat (0 NAT filler rules) costs +150")
            && f[1].contains("the translation adds +50"),
        "{f:#?}"
    );
    assert!(
        f[2].contains("1000 filler rules in the NAT chain add +10"),
        "{f:#?}"
    );
    // 1e6/8000 = 125 µs vs 100 µs; 1000 rules: 200 − 125 = 75 µs, 0.075 per rule.
    assert!(
        f[4].starts_with("sessions: nft dnat (1000 NAT filler rules) costs +100")
            && f[4].contains("add +75")
            && f[4].contains("(0.075 µs per rule per new flow)"),
        "{f:#?}"
    );
    // A difference whose CI includes 0 (the noisy run: −9000 ± 47000 ns) is no cost.
    let mut noisy = cs.clone();
    for c in &mut noisy {
        for m in c.metrics.values_mut() {
            m.ci95 = Some(40_000.0);
        }
    }
    let refs2: Vec<&Config> = noisy.iter().collect();
    let mut n = Analysis::default();
    analyse(&refs2, &mut n);
    let f2 = &n.findings;
    assert!(
        f2[1].starts_with(
            "flood: nft snat (0 NAT filler rules) has no measurable cost (+0 ± 57000 ns \
                 per packet: its 95 % CI includes 0)"
        ) && f2[1].contains("the translation adds no measurable cost"),
        "{f2:#?}"
    );
    assert!(!f2.iter().any(|x| x.contains(" costs ")), "{f2:#?}");
    // Nothing without a NAT model.
    let mut b = Analysis::default();
    analyse(&refs[..2], &mut b);
    assert!(b.tables.is_empty() && b.findings.is_empty());
}
