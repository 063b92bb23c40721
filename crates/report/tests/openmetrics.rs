//! `fwbench report -f openmetrics` read back by the format's reference parser
//! (the Prometheus Python client's `prometheus_client.openmetrics.parser`, Debian's
//! `python3-prometheus-client`, which scripts/setup.sh installs): known values planted
//! through the store, exported, parsed, and every value, label and timestamp compared
//! exactly — labels with quotes, backslashes and line feeds included. Skipped visibly
//! where the parser is not installed.

mod common;
#[path = "../../fwbench/tests/util/skip.rs"]
mod skip;

use serde_json::{json, Value};
use skip::skip;
use std::collections::BTreeMap;
use std::process::Command;
use store::{Headline, Host, NewRun, Store, TrialRecord};

/// The parser as a script: every family as JSON on stdout.
const PARSE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/openmetrics_parse.py");

/// A python3 that has the parser: the first on PATH may be another installation
/// (pyenv) than the system's, which `apt-get install python3-prometheus-client` serves.
fn python() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|py| {
        Command::new(py)
            .args(["-c", "import prometheus_client.openmetrics.parser"])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The parsed families of an export, by name.
fn parse(python: &str, text: &str) -> BTreeMap<String, Value> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.txt");
    std::fs::write(&file, text).unwrap();
    let o = Command::new(python).arg(PARSE).arg(&file).output().unwrap();
    assert!(
        o.status.success(),
        "the reference parser refused the export: {}\n{text}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    v.into_iter()
        .map(|f| (f["name"].as_str().unwrap().to_string(), f))
        .collect()
}

/// Hostile text for a label value: a quote, a backslash, a line feed, a `}`.
const LABEL: &str = "he said \"hi\\n\"\nthen } left";

/// A flood of run `run_id` that ended at `end` with `status`.
fn trial(
    run_id: i64,
    key: &str,
    status: &str,
    end: &str,
    params: Value,
    h: Headline,
) -> TrialRecord {
    TrialRecord {
        status: status.into(),
        started_at: "2026-11-28T10:00:00Z".into(),
        finished_at: end.into(),
        ..common::trial(run_id, key.into(), 1, "flood", params, h)
    }
}

fn headline(pps: f64, rtt_us: f64, loss: f64) -> Headline {
    Headline {
        received_pps: Some(pps),
        owd_p50_us: Some(rtt_us),
        loss_ratio: Some(loss),
        ..Default::default()
    }
}

/// Two runs of one configuration (the same series: one history) and a second
/// configuration whose label is hostile; a failed and a flagged trial give nothing;
/// two trials that ended in the same second keep a sample each.
fn planted(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("results.db");
    let mut s = Store::open(&path).unwrap();
    let host = Host {
        hostname: "bench1".into(),
        kernel: "6.12.0-test".into(),
        cpu_model: "Test \"CPU\" @ 3 GHz".into(),
        cores: 2,
        fwbench_version: "0.1.0".into(),
        sysctls: vec![("net.core.bpf_jit_enable".into(), "1".into())],
        tools: vec![("nft".into(), "nftables v1.1.1".into())],
        mitigations: vec![("spectre_v2".into(), "Mitigation: Retpolines".into())],
    };
    // Each run tagged with its commit (`--tag commit=…`): a label of the host's info
    // series only, so the metrics' series (expected below, exact) stay one per
    // configuration across the runs.
    let run = |s: &Store, at: &str, commit: &str| {
        s.begin_run(&NewRun {
            started_at: at.into(),
            host: host.clone(),
            tags: vec![("commit".into(), commit.into())],
            ..Default::default()
        })
        .unwrap()
    };
    let nft = json!({"engine": "nft", "rules": 1000, "packet": {"size": {"payload": 18}}});
    let hostile = json!({"engine": "nft", "rules": 0, "label": LABEL});
    let r1 = run(&s, "2026-11-28T10:00:00Z", "aaa");
    let t = |key, status, end, p: &Value, h| trial(r1, key, status, end, p.clone(), h);
    s.insert_trial(&t(
        "a",
        "ok",
        "2026-11-28T10:00:05Z",
        &nft,
        headline(1e6, 12.5, 0.0),
    ))
    .unwrap();
    s.insert_trial(&t(
        "c",
        "ok",
        "2026-11-28T10:00:09Z",
        &hostile,
        headline(333_333.3, 7.0, 0.5),
    ))
    .unwrap();
    s.insert_trial(&t(
        "d",
        "failed",
        "2026-11-28T10:00:10Z",
        &nft,
        headline(9e9, 9.0, 0.9),
    ))
    .unwrap();
    s.insert_trial(&t(
        "e",
        "flagged",
        "2026-11-28T10:00:11Z",
        &nft,
        headline(8e9, 8.0, 0.8),
    ))
    .unwrap();
    let r2 = run(&s, "2026-11-29T10:00:00Z", "bbb");
    s.insert_trial(&trial(
        r2,
        "a",
        "ok",
        "2026-11-29T10:00:05Z",
        nft.clone(),
        headline(987_654.321, 15.25, 0.01),
    ))
    .unwrap();
    // Ended in the same second as the one before: 1 ms after it. (Last in its series:
    // the Debian parser's timestamp bug, client_python #1037, would take a whole second
    // after a fraction for going backwards.)
    s.insert_trial(&trial(
        r2,
        "b",
        "ok",
        "2026-11-29T10:00:05Z",
        nft,
        headline(1.25e6, 0.1, 1e-7),
    ))
    .unwrap();
    path
}

/// Series labels.
type Labels = Vec<(&'static str, &'static str)>;
/// A sample read back: labels, timestamp (seconds, nanoseconds), value.
type Sample = (BTreeMap<String, String>, i64, i64, f64);

/// Planted (series labels, timestamp sec, ms, received pps, owd µs, loss).
fn expected() -> Vec<(Labels, i64, i64, f64, f64, f64)> {
    let nft = vec![
        ("engine", "nft"),
        ("host", "bench1"),
        ("packet_size_payload", "18"),
        ("rules", "1000"),
        ("workload", "flood"),
    ];
    let hostile = vec![
        ("engine", "nft"),
        ("host", "bench1"),
        ("label", LABEL),
        ("rules", "0"),
        ("workload", "flood"),
    ];
    let day1 = 1_795_860_005; // 2026-11-28T10:00:05Z (GNU date -d … +%s)
    vec![
        (nft.clone(), day1, 0, 1e6, 12.5, 0.0),
        (nft.clone(), day1 + 86_400, 0, 987_654.321, 15.25, 0.01),
        (nft.clone(), day1 + 86_400, 1, 1.25e6, 0.1, 1e-7),
        (hostile, day1 + 4, 0, 333_333.3, 7.0, 0.5),
    ]
}

#[test]
fn openmetrics_export_parses_with_the_reference_parser_and_round_trips_every_value() {
    let Some(python) = python() else {
        return skip("the OpenMetrics reference parser is not installed (apt-get install python3-prometheus-client)");
    };
    let dir = tempfile::tempdir().unwrap();
    let path = planted(dir.path());
    let store = Store::open_read_only(&path).unwrap();
    let report = report::load(&store, None).unwrap();
    let (text, left_out) = report.openmetrics();
    assert!(left_out.is_empty(), "{left_out:?}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    let families = parse(python, &text);

    // (family, its unit, the planted value → the exported one)
    type Conv = fn(f64, f64, f64) -> f64;
    let checks: [(&str, &str, Conv); 4] = [
        (
            "fwbench_received_packets_per_second",
            "per_second",
            |pps, _, _| pps,
        ),
        (
            "fwbench_one_way_delay_p50_seconds",
            "seconds",
            |_, us, _| us / 1e6,
        ),
        ("fwbench_loss_ratio", "ratio", |_, _, l| l),
        ("fwbench_time_per_packet_seconds", "seconds", |pps, _, _| {
            1e9 / pps / 1e9
        }),
    ];
    for (name, unit, conv) in checks {
        let f = families
            .get(name)
            .unwrap_or_else(|| panic!("no family {name} in {:?}", families.keys()));
        assert_eq!(f["type"], "gauge", "{name}");
        assert_eq!(f["unit"], unit, "{name}");
        let got: Vec<Sample> = f["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                assert_eq!(s["name"], name);
                let labels = serde_json::from_value(s["labels"].clone()).unwrap();
                let v: f64 = s["value"].as_str().unwrap().parse().unwrap();
                let (sec, ns) = (s["ts"][0].as_i64().unwrap(), s["ts"][1].as_i64().unwrap());
                (labels, sec, ns, v)
            })
            .collect();
        let mut want: Vec<Sample> = expected()
            .into_iter()
            .map(|(l, sec, ms, pps, us, loss)| {
                let labels = l
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                (labels, sec, ms * 1_000_000, conv(pps, us, loss))
            })
            .collect();
        let mut got_sorted = got.clone();
        let key = |a: &Sample| (a.0.clone(), a.1, a.2);
        got_sorted.sort_by_key(key);
        want.sort_by_key(key);
        assert_eq!(got_sorted.len(), want.len(), "{name}: {got:?}");
        for (g, w) in got_sorted.iter().zip(&want) {
            assert_eq!((&g.0, g.1, g.2), (&w.0, w.1, w.2), "{name}");
            assert_eq!(g.3.to_bits(), w.3.to_bits(), "{name}: {} vs {}", g.3, w.3);
        }
    }
    // Only the families measured: no rtt, sessions, … of a flood.
    assert!(!families.contains_key("fwbench_rtt_p50_seconds"));

    // The hosts' facts: one info series (both runs on one host), at each run's start.
    let info = &families["fwbench_host"];
    assert_eq!(info["type"], "info");
    let samples = info["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2, "{samples:?}");
    let l = &samples[0]["labels"];
    assert_eq!(l["cpu_model"], "Test \"CPU\" @ 3 GHz");
    assert_eq!(l["kernel"], "6.12.0-test");
    assert_eq!(l["tool_nft"], "nftables v1.1.1");
    assert_eq!(l["sysctl_net_core_bpf_jit_enable"], "1");
    assert_eq!(l["mitigation_spectre_v2"], "Mitigation: Retpolines");
    assert_eq!(samples[0]["ts"], json!([1_795_860_000, 0]));
    assert_eq!(l["tag_commit"], "aaa");
    assert_eq!(samples[1]["labels"]["tag_commit"], "bbb");

    // The same facts in the report's JSON (by group and flat) and its HTML metadata.
    let j = report.json();
    let run = &j["runs"][0]["run"];
    assert_eq!(
        run["host"]["mitigations"],
        json!([["spectre_v2", "Mitigation: Retpolines"]])
    );
    assert_eq!(
        run["host_facts"]["mitigation.spectre_v2"],
        "Mitigation: Retpolines"
    );
    assert_eq!(run["host_facts"]["tool.nft"], "nftables v1.1.1");
    assert!(report.html().contains("spectre_v2 Mitigation: Retpolines"));
    assert_eq!(samples[1]["ts"], json!([1_795_860_000 + 86_400, 0]));
}
