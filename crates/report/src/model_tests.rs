//! Unit tests of `model`, beside `model.rs`: they plant trials of named
//! workloads, which the module itself never names.

use super::*;
use serde_json::json;

fn trial(id: i64, params: Value, status: &str, bps: f64) -> Trial {
    Trial::new(store::TrialRow {
        rep: id as u32,
        status: status.into(),
        params,
        headline: store::Headline {
            throughput_bps: Some(bps),
            ..Default::default()
        },
        kind: crate::testing::kind_row("echo", "throughput_bps"),
        ..crate::testing::trial_row(id, "echo")
    })
}

#[test]
fn repetitions_group_without_seed_and_metrics_aggregate() {
    let ts = vec![
        trial(
            1,
            json!({"clients": 2, "model": "seed000-f0", "seed": 1}),
            "ok",
            10.0,
        ),
        trial(
            2,
            json!({"model": "seed000-f0", "clients": 2, "seed": 2}),
            "ok",
            14.0,
        ),
        trial(
            3,
            json!({"clients": 2, "model": "seed000-f2", "seed": 3}),
            "ok",
            9.0,
        ),
        trial(
            4,
            json!({"clients": 2, "model": "seed000-f2", "seed": 4}),
            "failed",
            0.0,
        ),
    ];
    let mut cs = configs(&ts, &BTreeMap::new());
    assert_eq!(cs.len(), 2);
    assert_eq!(cs[0].reps.len(), 2);
    let s = cs[0].metrics["throughput_bps"];
    assert_eq!((s.n, s.mean), (2, 12.0));
    assert_eq!(cs[0].metrics["throughput_per_client_bps"].mean, 6.0);
    assert_eq!((cs[1].reps.len(), cs[1].failed.len()), (1, 1));
    let run = crate::testing::run_row(1);
    let b = baseline_of(&run, &cs).unwrap();
    pair_with_baseline(&mut cs, &b);
    assert!(cs[0].is_baseline && !cs[1].is_baseline);
    assert!((cs[1].cost_pct.unwrap() - 25.0).abs() < 1e-9);
}

#[test]
fn a_flagged_trial_is_listed_but_not_aggregated() {
    let p = json!({"clients": 2});
    let ts = vec![
        trial(1, p.clone(), "ok", 10.0),
        trial(2, p.clone(), "flagged", 1000.0),
        trial(3, p.clone(), "unavailable", 0.0),
        trial(4, p, "no-such-status", 0.0),
    ];
    assert_eq!(ts[1].status, Status::Flagged);
    // A word fwbench does not know reads as failed, its text kept.
    assert_eq!(
        (ts[3].status, ts[3].row.status.as_str()),
        (Status::Failed, "no-such-status")
    );
    let cs = configs(&ts, &BTreeMap::new());
    assert_eq!(cs.len(), 1);
    let ids = |v: &[Trial]| v.iter().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(ids(&cs[0].reps), vec![1]);
    assert_eq!(ids(&cs[0].failed), vec![2, 4]);
    assert_eq!(ids(&cs[0].unavailable), vec![3]);
    // The flagged trial's figure is not in the mean.
    assert_eq!(cs[0].mean("throughput_bps"), Some(10.0));
}

#[test]
fn connection_metrics_read_the_typed_results() {
    let mut r = trial(1, json!({}), "ok", 0.0).row;
    r.results = json!({"conn": {"sessions_per_s": 50.0, "elapsed_s": 2.0,
            "session": {"count": 4, "mean_ns": 2e6, "sd_ns": 1e5},
            "hold": {"reached": 7},
            "overhead": {"transfer_s": 1.0, "net_goodput_bps": 8e6}}});
    let t = Trial::new(r);
    let m = |name: &str| METRICS.iter().find(|(n, _)| *n == name).unwrap().1(&t);
    assert_eq!(m("sessions_per_s"), Some(50.0));
    assert_eq!(m("session_mean_ms"), Some(2.0));
    assert_eq!(m("hold_reached"), Some(7.0));
    assert_eq!(m("net_goodput_bps"), Some(8e6));
    assert_eq!(m("connect_mean_ms"), None);
    assert_eq!(durations(&t, Phase::Session), Some((4, 2e6, 1e5)));
}

#[test]
fn cpu_time_per_packet_counts_kernel_time_on_the_data_path() {
    let row = |t_s: f64, metric: &str, value: f64| store::SampleRow {
        role: "gateway".into(),
        t_s,
        metric: metric.into(),
        value,
    };
    let mut s = Vec::new();
    for t in [0.2, 0.4] {
        s.push(row(t, "cpu0.user", 10.0));
        s.push(row(t, "cpu0.system", 50.0));
        s.push(row(t, "cpu0.softirq", 40.0));
        s.push(row(t, "cpu0.irq", 0.0));
        s.push(row(t, "cpu1.user", 95.0));
        s.push(row(t, "cpu1.system", 5.0));
    }
    // 90 % of CPU 0 in the kernel at 100 000 packets/s: 9 µs per packet.
    let v = cpu_ns_per_packet(&s, 1e5, Some(&[0])).unwrap();
    assert!((v - 9000.0).abs() < 1e-6, "{v}");
    // Every CPU: CPU 1's system time counts too.
    let v = cpu_ns_per_packet(&s, 1e5, None).unwrap();
    assert!((v - 9500.0).abs() < 1e-6, "{v}");
    assert_eq!(cpu_ns_per_packet(&s, 0.0, None), None);
    assert_eq!(cpu_ns_per_packet(&[], 1e5, None), None);
    let mut t = trial(1, json!({}), "ok", 0.0).row;
    t.results = json!({"placement": [
            {"role": "gateway", "cpus": "0-1", "requested_cpus": null},
            {"role": "server", "cpus": "0", "requested_cpus": "0"},
            {"role": "client", "cpus": "0", "requested_cpus": "0"}]});
    assert_eq!(data_path_cpus(&Trial::new(t.clone())), Some(vec![0]));
    t.results["placement"][0]["requested_cpus"] = json!("1,3-4");
    assert_eq!(data_path_cpus(&Trial::new(t)), Some(vec![0, 1, 3, 4]));
    assert_eq!(data_path_cpus(&trial(2, json!({}), "ok", 0.0)), None);
}

#[test]
fn baseline_values_compare_as_numbers_or_text() {
    assert!(same_value(&json!(64), &json!("64")));
    assert!(same_value(&json!(1.0), &json!(1)));
    assert!(!same_value(&json!("nft"), &json!("none")));
    let p = json!({"packet": {"flows": 4}});
    assert_eq!(lookup(&p, "packet.flows"), Some(&json!(4)));
    assert_eq!(flatten(&p)["packet.flows"], "4");
    assert_eq!(
        canonical(&json!({"b": 1, "a": [2, {"d": 1, "c": 0}]})),
        r#"{"a":[2,{"c":0,"d":1}],"b":1}"#
    );
}

/// Pacing counted per repetition: "" and "its rate the sender's pace" where every one
/// passed whole, the share and "partly" where some did, nothing where none did; a row
/// is named before the row it is compared with.
#[test]
fn a_paced_share_says_how_many_and_partly() {
    let p = |paced, of| Paced { paced, of };
    assert_eq!(p(0, 3).doubt("it"), None);
    assert!(!p(0, 0).throughout() && !p(0, 0).any());
    assert_eq!(
        p(3, 3).doubt("it").unwrap(),
        "it passed every packet offered, its rate the sender's pace"
    );
    assert_eq!(
        p(1, 3).doubt("it").unwrap(),
        "it passed every packet offered in 1 of 3 repetitions, its rate partly the sender's pace"
    );
    assert_eq!(
        paced_doubt(("this row", p(1, 2)), ("the baseline row", p(2, 2))).unwrap(),
        "this row passed every packet offered in 1 of 2 repetitions, its rate partly the \
         sender's pace"
    );
    assert_eq!(
        paced_doubt(("this row", p(0, 2)), ("the baseline row", p(2, 2))).unwrap(),
        "the baseline row passed every packet offered, its rate the sender's pace"
    );
    assert_eq!(paced_doubt(("a", p(0, 2)), ("b", p(0, 2))), None);
}

/// A background at a share of the capacity (`--load`): its capacity and the rate set
/// from it are found anew each run, so they are no part of the configuration — two
/// runs' trials at half of two capacities are one configuration; two shares, or a
/// stated rate without a load, are others.
#[test]
fn a_loads_capacity_is_no_part_of_the_configuration() {
    let loaded = |id: i64, fraction: f64, pps: f64| {
        trial(
            id,
            json!({"engine": "nft", "seed": id, "packet": {"rate": {"pps": fraction * pps},
                "events": {"event": "add:1@1s", "load": {"fraction": fraction,
                "capacity": {"pps": pps, "background_pps": fraction * pps}}}}}),
            "ok",
            10.0 + id as f64,
        )
    };
    let ts = vec![
        loaded(1, 0.5, 63_018.0),
        loaded(2, 0.5, 63_341.0),
        loaded(3, 0.9, 63_018.0),
        trial(
            4,
            json!({"engine": "nft", "packet": {"rate": {"pps": 31_509.0},
                "events": {"event": "add:1@1s"}}}),
            "ok",
            9.0,
        ),
    ];
    let cs = configs(&ts, &BTreeMap::new());
    let reps: Vec<Vec<i64>> = cs
        .iter()
        .map(|c| c.reps.iter().map(|t| t.id).collect())
        .collect();
    assert_eq!(cs.len(), 3, "{reps:?}");
    assert!(reps.contains(&vec![1, 2]), "{reps:?}");
    // What the configuration says of it: the share, not a capacity or a rate.
    let half = cs.iter().find(|c| c.reps.len() == 2).unwrap();
    assert_eq!(
        half.flat
            .get("packet.events.load.fraction")
            .map(String::as_str),
        Some("0.5")
    );
    assert!(
        !half
            .flat
            .keys()
            .any(|k| k.contains("capacity") || k.starts_with("packet.rate")),
        "{:?}",
        half.flat
    );
    // The stated rate without a load keeps its rate.
    let stated = cs.iter().find(|c| c.reps[0].id == 4).unwrap();
    assert!(
        stated.flat.contains_key("packet.rate.pps"),
        "{:?}",
        stated.flat
    );
}
