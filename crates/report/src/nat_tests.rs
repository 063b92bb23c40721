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
        metrics,
        ..crate::testing::config(
            format!("{workload}{engine}{model}{rules}"),
            workload,
            engine,
            flat,
        )
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
    let a = analysed(&cs);
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
        f[2].contains("1000 filler rules in the NAT chain add +10")
            && f[2].contains("the translation with its 1000 filler rules adds +60"),
        "{f:#?}"
    );
    // 1e6/8000 = 125 µs vs 100 µs; 1000 rules: 200 − 125 = 75 µs, 0.075 per rule.
    assert!(
        f[4].starts_with("sessions: nft dnat (1000 NAT filler rules) costs +100")
            && f[4].contains("add +75")
            && f[4].contains("(+0.075000 ± 0.000086 µs per rule per new flow)"),
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
    let b = analysed(&cs[..2]);
    assert!(b.tables.is_empty() && b.findings.is_empty());
}

/// A configuration with per-repetition values of one metric (its summary from them).
fn with_values(mut c: Config, metric: &str, values: &[f64]) -> Config {
    c.metrics
        .insert(metric.to_string(), Summary::of(values).expect("values"));
    c.values.insert(metric.to_string(), values.to_vec());
    c.gateway_values.insert(metric.to_string(), values.to_vec());
    c
}

/// The NAT analysis of `cs`.
fn analysed(cs: &[Config]) -> Analysis {
    let refs: Vec<&Config> = cs.iter().collect();
    let mut a = Analysis::default();
    analyse(&refs, &mut a);
    a
}

/// A flood configuration whose repetitions' CPU time per packet were `values`.
fn flood(engine: &str, model: &str, rules: u64, values: &[f64]) -> Config {
    let m = "cpu_ns_per_packet";
    with_values(config("flood", engine, model, rules, (m, 0.0)), m, values)
}

/// A workload run with two traffics (64- and 1500-byte floods): each NAT
/// configuration is set against plain forwarding and conntrack alone of its own
/// traffic, never a pool of both sizes, and each block is named by its size.
#[test]
fn each_traffic_has_its_own_baseline() {
    let sized = |c: Config, frame: &str| {
        let mut c = c;
        c.flat.insert("packet.size.frame".into(), frame.into());
        c.key = format!("{}{frame}", c.key);
        c
    };
    let cs = [
        sized(flood("none", "none", 0, &[1_000.0, 1_010.0, 990.0]), "64"),
        sized(
            flood("nft", "conntrack", 0, &[1_100.0, 1_110.0, 1_090.0]),
            "64",
        ),
        sized(flood("nft", "snat", 0, &[1_200.0, 1_210.0, 1_190.0]), "64"),
        sized(
            flood("none", "none", 0, &[3_000.0, 3_010.0, 2_990.0]),
            "1500",
        ),
        sized(
            flood("nft", "conntrack", 0, &[3_500.0, 3_510.0, 3_490.0]),
            "1500",
        ),
        sized(
            flood("nft", "snat", 0, &[3_700.0, 3_710.0, 3_690.0]),
            "1500",
        ),
    ];
    let a = analysed(&cs);
    let f = &a.findings;
    let snat = |size: &str| {
        let head = format!("flood (packet.size.frame={size}): nft snat (0 NAT filler rules)");
        f.iter()
            .find(|s| s.starts_with(&head))
            .unwrap_or_else(|| panic!("no {head:?} in {f:#?}"))
            .clone()
    };
    // 1200 vs 1000 and 3700 vs 3000 — pooled over both sizes it would be 2000.
    let small = snat("64");
    assert!(
        small.contains("costs +200 ") && small.contains("(1200 vs 1000;"),
        "{small}"
    );
    assert!(small.contains("the translation adds +100 "), "{small}");
    let large = snat("1500");
    assert!(
        large.contains("costs +700 ") && large.contains("(3700 vs 3000;"),
        "{large}"
    );
    assert!(large.contains("the translation adds +200 "), "{large}");
    let ids: Vec<&str> = a.figures.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["nat-flood-1", "nat-flood-2"]);
    // One traffic: named by its workload alone, as before.
    let one = analysed(&cs[..3]);
    let f = &one.findings;
    assert!(f.iter().any(|s| s.starts_with("flood: nft snat")), "{f:#?}");
    assert_eq!(one.figures[0].id, "nat-flood");
}

#[test]
fn plain_forwardings_rule_counts_are_one_baseline_for_every_comparison() {
    // Engine none at 0 and 1000 rules: one gateway measured in two groups of trials
    // (the nat.toml run: 17 935 ns in one group, 8 248 in the other).
    let cs = [
        flood("none", "none", 0, &[17_000.0, 18_000.0, 18_800.0]),
        flood("none", "none", 1000, &[8_000.0, 8_300.0, 8_450.0]),
        flood("nft", "snat", 0, &[13_000.0, 13_100.0, 13_200.0]),
        flood("nft", "snat", 1000, &[13_100.0, 13_200.0, 13_300.0]),
    ];
    let a = analysed(&cs);
    let f = &a.findings;
    assert_eq!(f.len(), 2, "{f:#?}");
    // The pooled mean of the six plain trials: 13 091.67 (13092).
    for s in f {
        assert!(
            s.contains("vs 13092;")
                && s.contains("plain forwarding over 6 trials, its rule counts 0, 1000 pooled"),
            "{s}"
        );
        assert!(!s.contains(" costs "), "{s}");
    }
    // Each rule count against its own group would have been −5 000 and +5 000 ns.
    assert!(
        !f.iter().any(|s| s.contains("8250") || s.contains("17930")),
        "{f:#?}"
    );
}

#[test]
fn a_comparison_uses_one_measure_for_the_baseline_and_the_configuration() {
    // Plain forwarding without CPU samples: every configuration is compared by wall
    // time per packet, never its CPU time against plain forwarding's wall time.
    let mut snat = config("flood", "nft", "snat", 0, ("ns_per_packet", 1200.0));
    snat.metrics.insert(
        "cpu_ns_per_packet".into(),
        Summary {
            n: 3,
            mean: 300.0,
            sd: Some(1.0),
            ci95: Some(2.0),
        },
    );
    let cs = [
        config("flood", "none", "none", 0, ("ns_per_packet", 1000.0)),
        snat,
    ];
    let a = analysed(&cs);
    let f = &a.findings;
    assert!(
        f[0].contains("costs +200.0 ± 2.8 ns per packet")
            && f[0].contains("(1200 vs 1000; ns per received packet;"),
        "{f:#?}"
    );
}

#[test]
fn a_block_whose_plain_forwarding_fwbench_limited_throughout_says_so() {
    // Plain forwarding's two trials both limited by the sink: no measure, no baseline.
    let mut plain = config("flood", "none", "none", 0, ("ns_per_packet", 0.0));
    plain.metrics.clear();
    for id in 1..=2 {
        let mut row = crate::testing::trial_row(id, "flood");
        row.results = serde_json::json!({"packet": {"limited_by": {"by": "sink"}}});
        plain.reps.push(crate::model::Trial::new(row));
    }
    let cs = [
        plain,
        config("flood", "nft", "snat", 0, ("ns_per_packet", 1150.0)),
    ];
    let a = analysed(&cs);
    assert_eq!(
        a.findings,
        [
            "flood: no NAT cost is stated — fwbench's sender or sink limited every trial of 1 \
          of its configurations (their packets/s are fwbench's, not the gateway's; see the \
          run's warnings)."
        ],
        "{:#?}",
        a.findings
    );
}

/// The nat.toml run (conntrack alone at 0 and 1000 rules) said "flood: nft conntrack
/// (stateful accept, no NAT) costs +700 ± 350 …" and, next line, "… costs +850 ± 320
/// …": one gateway (the model installs one rule whatever the count) stated twice under
/// one name. Pooled now, as plain forwarding is. The same run's filler rules "added
/// −280 ± 240 ns per packet (−0.2796 ns per rule per packet)": added work measured
/// below the path without it is flagged, not stated as a saving.
#[test]
fn conntrack_alone_is_one_gateway_and_a_saving_from_added_rules_is_flagged() {
    let cs = [
        flood("none", "none", 0, &[6_300.0, 6_400.0, 6_380.0]),
        flood("nft", "conntrack", 0, &[7_000.0, 7_100.0, 7_050.0]),
        flood("nft", "conntrack", 1000, &[7_200.0, 7_250.0, 7_230.0]),
        flood("nft-set", "snat", 0, &[7_500.0, 7_520.0, 7_530.0]),
        flood("nft-set", "snat", 1000, &[7_230.0, 7_240.0, 7_250.0]),
    ];
    let a = analysed(&cs);
    let f = &a.findings;
    let tracked: Vec<&String> = f.iter().filter(|s| s.contains("conntrack (")).collect();
    assert_eq!(tracked.len(), 1, "{f:#?}");
    assert!(
        tracked[0].contains(
            "(stateful accept, no NAT; its rule counts 0, 1000 pooled: the model installs one \
             rule whatever the count) costs +"
        ),
        "{f:#?}"
    );
    // Six trials pooled: (7000 + 7100 + 7050 + 7200 + 7250 + 7230) / 6 = 7138.
    assert!(tracked[0].contains("(7138 vs 6360;"), "{f:#?}");
    assert_eq!(a.tables[0].rows.len(), 3, "{:#?}", a.tables);
    let fillers = f
        .iter()
        .find(|s| s.starts_with("flood: nft-set snat (1000 NAT filler rules)"))
        .unwrap();
    assert!(
        fillers.contains(
            "Its 1000 filler rules in the NAT chain add -277 ± 45 ns per packet — FLAGGED: \
             below the path without it, though it adds work"
        ) && !fillers.contains("per rule per packet"),
        "{fillers}"
    );
}

/// Without the gateway's CPU time a flood's cost is its time per received packet: of
/// one that passed every packet offered, the sender's pace. A NAT configuration that
/// did (or a plain forwarding that did) is not compared, and says why.
#[test]
fn a_flood_that_passed_whole_is_no_nat_cost_without_cpu_time() {
    let paced = |mut c: Config| {
        c.reps = vec![crate::model::Trial::new(store::TrialRow {
            results: serde_json::json!({"packet": {"limited_by": {"by": "nothing", "why": "planted"}}}),
            ..crate::testing::trial_row(1, "flood")
        })];
        c
    };
    let cs = [
        paced(config(
            "flood",
            "none",
            "none",
            0,
            ("ns_per_packet", 1000.0),
        )),
        config("flood", "nft", "snat", 0, ("ns_per_packet", 1150.0)),
        paced(config(
            "flood",
            "nft",
            "snat",
            1000,
            ("ns_per_packet", 1000.0),
        )),
    ];
    let a = analysed(&cs);
    let f = &a.findings;
    assert!(
        f.iter().any(|x| x
            == "flood: nft snat (1000 NAT filler rules) is not compared with plain forwarding: \
                nft snat passed every packet offered, its rate the sender's pace; the gateway's \
                CPU time was not sampled (offer more to measure the gateway)."),
        "{f:#?}"
    );
    assert!(
        f.iter().any(|x| x.starts_with(
            "flood: nft snat (0 NAT filler rules) is not compared with plain forwarding: plain \
             forwarding passed every packet offered"
        )),
        "{f:#?}"
    );
    let rows = &a.tables[0].rows;
    assert!(
        rows.iter().all(|r| r[5] == "– (the sender's pace)"),
        "{rows:?}"
    );
    // Plain forwarding measured: the NAT without filler rules passed whole, so what the
    // filler rules add (against it) is not stated; the other is compared.
    let cs = [
        config("flood", "none", "none", 0, ("ns_per_packet", 1000.0)),
        paced(config("flood", "nft", "snat", 0, ("ns_per_packet", 1000.0))),
        config("flood", "nft", "snat", 1000, ("ns_per_packet", 1300.0)),
    ];
    let f = analysed(&cs).findings;
    let thousand = f
        .iter()
        .find(|x| x.starts_with("flood: nft snat (1000 NAT filler rules) costs +300"))
        .unwrap_or_else(|| panic!("{f:#?}"));
    assert!(
        thousand.ends_with(
            "What its 1000 filler rules add is not stated: the same NAT with no filler rule \
             passed every packet offered, its rate the sender's pace."
        ),
        "{thousand}"
    );
}

/// Plain forwarding whose sink fwbench limited in 3 of its 4 repetitions: the one kept
/// may be the slowest, no fair sample — no NAT is compared with it, and each says why;
/// the same NAT with no filler rule so limited is no base for what the filler adds.
#[test]
fn a_baseline_fwbench_mostly_limited_compares_nothing() {
    let limited = |n: usize, mut c: Config| {
        c.reps = (0..4)
            .map(|i| {
                let by = if i < n { "sink" } else { "gateway" };
                crate::model::Trial::new(store::TrialRow {
                    results: serde_json::json!({"packet": {"limited_by": {"by": by, "why": "planted"}}}),
                    ..crate::testing::trial_row(1, "flood")
                })
            })
            .collect();
        c
    };
    let cs = [
        limited(
            3,
            config("flood", "none", "none", 0, ("ns_per_packet", 1000.0)),
        ),
        config("flood", "nft", "snat", 0, ("ns_per_packet", 1150.0)),
    ];
    let a = analysed(&cs);
    assert!(
        a.findings.iter().any(|x| x
            == "flood: nft snat (0 NAT filler rules) is not compared with plain forwarding: \
                fwbench's sink limited 3 of plain forwarding's 4 repetitions: the rest are no \
                fair sample of the gateway's time per packet (fwbench's limit may have cut \
                off the faster ones) (see the run's warnings)."),
        "{:#?}",
        a.findings
    );
    assert_eq!(
        a.tables[0].rows[0][5], "– (no fair sample)",
        "{:?}",
        a.tables
    );
    // Half limited: a fair sample, compared.
    let cs = [
        limited(
            2,
            config("flood", "none", "none", 0, ("ns_per_packet", 1000.0)),
        ),
        config("flood", "nft", "snat", 0, ("ns_per_packet", 1150.0)),
        limited(
            3,
            config("flood", "nft", "snat", 1000, ("ns_per_packet", 1300.0)),
        ),
    ];
    let f = analysed(&cs).findings;
    let zero = f
        .iter()
        .find(|x| x.starts_with("flood: nft snat (0 NAT filler rules) costs +150"));
    assert!(zero.is_some(), "{f:#?}");
    assert!(
        f.iter().any(|x| x.starts_with(
            "flood: nft snat (1000 NAT filler rules) is not compared with plain forwarding: \
             fwbench's sink limited 3 of nft snat's 4 repetitions"
        )),
        "{f:#?}"
    );
    // The same NAT with no filler rule mostly limited: no base for what the filler adds.
    let cs = [
        config("flood", "none", "none", 0, ("ns_per_packet", 1000.0)),
        limited(
            3,
            config("flood", "nft", "snat", 0, ("ns_per_packet", 1150.0)),
        ),
        config("flood", "nft", "snat", 1000, ("ns_per_packet", 1300.0)),
    ];
    let f = analysed(&cs).findings;
    assert!(
        f.iter().any(
            |x| x.starts_with("flood: nft snat (1000 NAT filler rules) costs +300")
                && x.contains(
                    "What its 1000 filler rules add is not stated: fwbench's sink limited 3 of \
                 the same NAT with no filler rule's 4 repetitions"
                )
        ),
        "{f:#?}"
    );
}
