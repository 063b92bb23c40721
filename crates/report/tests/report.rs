//! End-to-end: a fixture results store with four runs → HTML, Markdown, CSV, JSON.

use report::{load, ReportError};
use serde_json::{json, Value};
use store::{FirewallRow, Headline, NewRun, SampleRow, Store, TrialRecord};

/// A ±0.5 % ripple that depends on the repetition only (deterministic "noise").
fn ripple(rep: u32) -> f64 {
    [1.004, 0.996, 1.001][rep as usize % 3]
}

fn trial(
    run_id: i64,
    key: String,
    rep: u32,
    workload: &str,
    params: Value,
    headline: Headline,
) -> TrialRecord {
    TrialRecord {
        run_id,
        trial_key: key,
        rep,
        workload: workload.into(),
        status: "ok".into(),
        started_at: "2026-01-01T00:00:00Z".into(),
        finished_at: "2026-01-01T00:00:01Z".into(),
        params,
        placement: json!({}),
        headline,
        results: json!({}),
        ..Default::default()
    }
}

fn new_run(scenario: &str, baseline: Option<Value>) -> NewRun {
    NewRun {
        started_at: "2026-01-01T00:00:00Z".into(),
        scenario: scenario.into(),
        scenario_text: Some(format!("name = \"{scenario}\"\n")),
        seed: 42,
        command: format!("fwbench run scenarios/{scenario}.toml"),
        host: store::Host {
            hostname: "bench1".into(),
            kernel: "6.1.0-test".into(),
            cpu_model: "Test CPU @ 3 GHz".into(),
            cores: 8,
            fwbench_version: "0.1.0".into(),
            sysctls: vec![("net.ipv4.ip_forward".into(), "1".into())],
            tools: vec![("nft".into(), "v1.0.6".into())],
        },
        baseline,
    }
}

/// Echo total throughput (Mb/s): threads lead at small n, epoll at large n.
fn echo_mbps(n: u32, server: &str, model: &str) -> f64 {
    let n = n as f64;
    let base = if server == "threads" {
        100.0 * n / (1.0 + 0.1 * n)
    } else {
        80.0 * n / (1.0 + 0.02 * n)
    };
    let f = match model {
        "seed000-f0" => 1.0,
        "seed000-f2" => 0.9,
        _ => 0.8,
    };
    base * f
}

/// (a) echo: clients × server × seed 000 models, 2 reps, one failed and one with
/// validation errors.
fn echo_run(s: &mut Store) -> i64 {
    let run = s.begin_run(&new_run("seed000", None)).unwrap();
    for n in [1u32, 2, 4, 8] {
        for server in ["threads", "epoll"] {
            for model in ["seed000-f0", "seed000-f2", "seed000-f4"] {
                for rep in 1..=2u32 {
                    let params = json!({"topology": "forward", "clients": n, "duration_s": 1.0, "frame_size": "64",
                        "proto": "tcp", "family": "4", "server": server, "timeout_ms": 500, "seed": rep,
                        "engine": "nft", "model": model, "rules": 0, "position": "end", "chain": "forward"});
                    let bps = echo_mbps(n, server, model) * 1e6 * ripple(rep);
                    let h = Headline {
                        throughput_bps: Some(bps),
                        transactions_per_s: Some(bps / 1024.0),
                        rtt_p50_us: Some(50.0 * n as f64),
                        rtt_p99_us: Some(90.0 * n as f64),
                        validation_errors: Some(
                            if n == 2 && rep == 2 && model == "seed000-f2" && server == "epoll" {
                                3
                            } else {
                                0
                            },
                        ),
                        ..Default::default()
                    };
                    let key = format!("e-{n}-{server}-{model}-{rep}");
                    s.insert_trial(&trial(run, key, rep, "echo", params, h))
                        .unwrap();
                }
            }
        }
    }
    let mut failed = trial(
        run,
        "e-failed".into(),
        3,
        "echo",
        json!({"clients": 8, "server": "epoll", "model": "seed000-f4", "seed": 3, "frame_size": "64",
               "proto": "tcp", "family": "4", "topology": "forward", "duration_s": 1.0, "timeout_ms": 500,
               "engine": "nft", "rules": 0, "position": "end", "chain": "forward"}),
        Headline::default(),
    );
    failed.status = "failed".into();
    failed.error = Some("gateway agent: nft -f exited with status 1".into());
    s.insert_trial(&failed).unwrap();
    s.finish_run(run, "2026-01-01T01:00:00Z", "complete")
        .unwrap();
    run
}

/// (b) flow: rules × engine (nft 2.5 ns/rule, iptables-legacy 1.0 ns/rule), 2 reps,
/// gateway softirq samples, one verdict mismatch.
fn flow_run(s: &mut Store) -> i64 {
    let run = s.begin_run(&new_run("seed002", None)).unwrap();
    for rules in [0u64, 1000, 2000, 4000, 8000] {
        for (engine, slope) in [("nft", 2.5), ("iptables-legacy", 1.0)] {
            for rep in 1..=2u32 {
                let params = json!({"topology": "forward", "clients": 1, "duration_s": 2.0, "frame_size": "64",
                    "proto": "udp", "family": "4", "server": "threads", "timeout_ms": 500, "seed": rep,
                    "engine": engine, "model": "linear", "rules": rules, "position": "end", "chain": "forward",
                    "workload": "flow",
                    "packet": {"size": {"payload": 18}, "rate": "max", "flows": 1, "threads": 1}});
                let ns = (500.0 + slope * rules as f64) * ripple(rep);
                let pps = 1e9 / ns;
                let mut t = trial(
                    run,
                    format!("f-{rules}-{engine}-{rep}"),
                    rep,
                    "flow",
                    params,
                    Headline {
                        offered_pps: Some(2e6),
                        sent_pps: Some(2e6),
                        received_pps: Some(pps),
                        loss_ratio: Some(1.0 - pps / 2e6),
                        ..Default::default()
                    },
                );
                let mismatch = rules == 4000 && engine == "nft" && rep == 1;
                t.firewall = Some(FirewallRow {
                    engine: engine.into(),
                    rules: rules + 1,
                    set_elements: 0,
                    install_ms: Some(12.0),
                    remove_ms: Some(3.0),
                    verdicts_ok: Some(!mismatch),
                    verdict_problems: mismatch
                        .then(|| "probe 198.19.0.1:9 expected drop, got accept".into()),
                });
                t.samples = (0..3)
                    .flat_map(|i| {
                        [0, 1].map(|cpu| SampleRow {
                            role: "gateway".into(),
                            t_s: i as f64,
                            metric: format!("cpu{cpu}.softirq"),
                            value: 10.0 + rules as f64 / 100.0 + cpu as f64,
                        })
                    })
                    .collect();
                s.insert_trial(&t).unwrap();
            }
        }
    }
    s.finish_run(run, "2026-01-01T02:00:00Z", "complete")
        .unwrap();
    run
}

/// (c) labelled flood cases (seed 001's table), one unstable; the run was interrupted.
fn labelled_run(s: &mut Store) -> i64 {
    let run = s
        .begin_run(&new_run("seed001", Some(json!({"model": "none"}))))
        .unwrap();
    let cases = [
        ("no rules", "none", 1.0e6, 0.0),
        ("notrack", "notrack", 0.95e6, 0.0),
        ("raw drop", "raw-drop", 0.8e6, 0.2),
        ("string bm", "string-bm", 0.5e6, 0.0),
    ];
    for (label, model, pps, spread) in cases {
        for rep in 1..=3u32 {
            let params = json!({"topology": "forward", "clients": 1, "workload": "flood", "engine": "iptables-legacy",
                "model": model, "rules": 0, "seed": rep, "label": label,
                "packet": {"size": {"frame": 64}, "rate": "max", "flows": 4, "threads": 2}});
            let wobble = if spread > 0.0 {
                1.0 + spread * (rep as f64 - 2.0)
            } else {
                ripple(rep)
            };
            let h = Headline {
                received_pps: Some(pps * wobble),
                sent_pps: Some(1.2e6),
                loss_ratio: Some(0.1),
                ..Default::default()
            };
            s.insert_trial(&trial(
                run,
                format!("c-{model}-{rep}"),
                rep,
                "flood",
                params,
                h,
            ))
            .unwrap();
        }
    }
    s.finish_run(run, "2026-01-01T03:00:00Z", "interrupted")
        .unwrap();
    run
}

/// (d) an ndr search with its loss curve.
fn ndr_run(s: &mut Store) -> i64 {
    let run = s.begin_run(&new_run("rfc2544", None)).unwrap();
    let mut t = trial(
        run,
        "ndr-1".into(),
        1,
        "ndr",
        json!({"workload": "ndr", "engine": "nft", "seed": 1, "search": {"loss": 0.0, "precision": 0.02}}),
        Headline::default(),
    );
    t.results = json!({"search": {"search": "ndr", "mode": "ndr", "rate_pps": 812500.0, "fail_pps": 825000.0,
        "rate_bps_l2": 416e6, "ceiling_pps": 1.6e6, "limited_by_sender": false, "converged": true, "trials": 7,
        "curve": [
            {"x": 400000.0, "loss_ratio": 0.0}, {"x": 800000.0, "loss_ratio": 0.0},
            {"x": 812500.0, "loss_ratio": 0.0}, {"x": 825000.0, "loss_ratio": 0.002},
            {"x": 1600000.0, "loss_ratio": 0.45}]}});
    s.insert_trial(&t).unwrap();
    s.finish_run(run, "2026-01-01T04:00:00Z", "complete")
        .unwrap();
    run
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    runs: [i64; 4],
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("results.db")).unwrap();
    let runs = [
        echo_run(&mut store),
        flow_run(&mut store),
        labelled_run(&mut store),
        ndr_run(&mut store),
    ];
    Fixture {
        _dir: dir,
        store,
        runs,
    }
}

#[test]
fn html_has_every_expected_figure_and_warning_and_no_urls() {
    let f = fixture();
    let r = load(&f.store, None).unwrap();
    let html = r.html();
    let figures = [
        (
            "echo-per-client-vs-clients",
            "Echo throughput per client vs clients",
        ),
        ("echo-decrease-vs-baseline", "Echo decrease vs baseline"),
        (
            "echo-threads-vs-epoll",
            "Echo throughput: threads vs epoll server",
        ),
        ("packet-pps-vs-rules", "Received packets/s vs rules"),
        (
            "packet-advantage",
            "Advantage ratio: received pps of each engine over nft",
        ),
        ("packet-loss-vs-rules", "Loss vs rules"),
        (
            "packet-ns-per-packet",
            "Time per packet vs rules (cost model)",
        ),
        (
            "packet-softirq-vs-rules",
            "Gateway softirq per CPU vs rules",
        ),
        ("cases", "received (packets/s) by case"),
        ("search-loss-curve", "Frame loss rate by offered load"),
    ];
    for (id, title) in figures {
        assert!(
            html.contains(&format!("<figure id=\"{id}\"><svg")),
            "missing figure {id}"
        );
        assert!(html.contains(title), "missing title {title}");
    }
    assert_eq!(html.matches("<svg").count(), figures.len());
    assert_eq!(html.matches("</svg>").count(), figures.len());
    assert_eq!(
        html.matches("<figure").count(),
        html.matches("</figure>").count()
    );
    assert_eq!(
        html.matches("<table").count(),
        html.matches("</table>").count()
    );
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("<script"));
    for needle in [
        "nft -f exited with status 1",
        "3 validation errors",
        "expected drop, got accept",
        "unstable configuration raw drop",
        "is interrupted",
        "Kernel".to_lowercase().as_str(),
        "6.1.0-test",
        "Test CPU @ 3 GHz",
        "nft v1.0.6",
        "crossover",
        "ns per rule per packet",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
}

#[test]
fn cost_fits_recover_the_slopes() {
    let f = fixture();
    let r = load(&f.store, Some(f.runs[1])).unwrap();
    let fits = &r.runs[0].analysis.fits;
    assert_eq!(fits.len(), 2, "{fits:?}");
    for (engine, slope) in [("nft", 2.5), ("iptables-legacy", 1.0)] {
        let fit = fits
            .iter()
            .find(|x| x.series == format!("engine={engine}"))
            .unwrap();
        let ci = fit.fit.b_ci95.unwrap();
        assert!(
            (fit.fit.b - slope).abs() <= ci,
            "{engine}: {} ± {ci}",
            fit.fit.b
        );
        assert!(fit.fit.r2 > 0.99);
        assert_eq!(fit.rule_counts, 5);
    }
}

#[test]
fn echo_costs_vs_f0_and_threads_epoll_crossover() {
    let f = fixture();
    let r = load(&f.store, Some(f.runs[0])).unwrap();
    let run = &r.runs[0];
    assert_eq!(run.baseline, Some(json!({"model": "seed000-f0"})));
    for c in &run.configs {
        match c.param("model") {
            Some("seed000-f0") => assert!(c.is_baseline && c.cost_pct.is_none()),
            Some("seed000-f2") => assert!(
                (c.cost_pct.unwrap() - 10.0).abs() < 0.01,
                "{:?}",
                c.cost_pct
            ),
            Some("seed000-f4") if !c.reps.is_empty() => {
                assert!((c.cost_pct.unwrap() - 20.0).abs() < 0.01)
            }
            _ => {}
        }
    }
    let fig = run
        .analysis
        .figures
        .iter()
        .find(|f| f.id == "echo-threads-vs-epoll")
        .unwrap();
    assert!(!fig.markers.is_empty());
    // threads − epoll: n=2: 166.7 vs 153.8 (+), n=4: 285.7 vs 296.3 (−)
    assert!(
        fig.notes
            .iter()
            .any(|n| n.contains("between n = 2 and n = 4")),
        "{:?}",
        fig.notes
    );
}

#[test]
fn labelled_cases_cost_against_the_baseline_row() {
    let f = fixture();
    let r = load(&f.store, Some(f.runs[2])).unwrap();
    let cost = |label: &str| {
        let c = r.runs[0]
            .configs
            .iter()
            .find(|c| c.label.as_deref() == Some(label))
            .unwrap();
        c.cost_pct
    };
    assert_eq!(cost("no rules"), None);
    assert!(
        (cost("string bm").unwrap() - 50.0).abs() < 0.1,
        "{:?}",
        cost("string bm")
    );
}

#[test]
fn markdown_and_csv_have_the_expected_rows() {
    let f = fixture();
    let r = load(&f.store, None).unwrap();
    let md = r.markdown();
    assert!(!md.contains("<svg"));
    assert!(md.contains("| engine=nft | "));
    for label in [
        "| no rules |",
        "| notrack |",
        "| raw drop |",
        "| string bm |",
    ] {
        assert!(md.contains(label), "missing {label}");
    }
    assert!(md.contains("ns per rule per packet"));
    let csv = r.csv_trials();
    let lines: Vec<&str> = csv.lines().collect();
    let trials = 4 * 2 * 3 * 2 + 1 + 5 * 2 * 2 + 4 * 3 + 1;
    assert_eq!(lines.len(), 1 + trials);
    let head: Vec<&str> = lines[0].split(',').collect();
    for col in [
        "run_id",
        "trial_id",
        "rep",
        "workload",
        "status",
        "params.clients",
        "params.packet.size.payload",
        "params.packet.rate",
        "received_pps",
        "throughput_bps",
        "firewall.engine",
        "firewall.verdicts_ok",
    ] {
        assert!(head.contains(&col), "missing column {col}");
    }
    // Every row has as many fields as the header (no field holds a comma here but the error).
    assert!(lines
        .iter()
        .any(|l| l.contains("nft -f exited with status 1")));
    let samples = r.csv_samples(&f.store).unwrap();
    assert_eq!(samples.lines().count(), 1 + 5 * 2 * 2 * 6);
    assert!(samples.contains(",gateway,") && samples.contains("cpu1.softirq"));
}

#[test]
fn json_holds_configs_metrics_fits_and_figures() {
    let f = fixture();
    let r = load(&f.store, None).unwrap();
    let j = r.json();
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    let flow = &runs[1];
    let c = &flow["configs"][0];
    assert_eq!(c["n"], 2);
    assert!(c["params"].get("seed").is_none());
    assert!(c["metrics"]["received_pps"]["mean"].as_f64().unwrap() > 0.0);
    assert!(c["metrics"]["gateway.cpu0.softirq"]["ci95"].is_number());
    assert_eq!(flow["fits"].as_array().unwrap().len(), 2);
    assert!(flow["figures"].as_array().unwrap().len() >= 5);
    // valid JSON text (no NaN)
    let text = serde_json::to_string(&j).unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_ok());
}

#[test]
fn output_is_deterministic() {
    let f = fixture();
    let a = load(&f.store, None).unwrap();
    let b = load(&f.store, None).unwrap();
    assert_eq!(a.html(), b.html());
    assert_eq!(a.markdown(), b.markdown());
}

#[test]
fn missing_run_is_an_error_naming_it() {
    let f = fixture();
    let e = load(&f.store, Some(99)).err().unwrap();
    assert!(matches!(e, ReportError::NoSuchRun { run: 99, .. }));
    let text = e.to_string();
    assert!(
        text.contains("run 99 does not exist") && text.contains("1, 2, 3, 4"),
        "{text}"
    );
}

#[test]
fn empty_store_gives_an_empty_but_valid_page() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("r.db")).unwrap();
    let r = load(&s, None).unwrap();
    assert!(r.html().contains("No warnings"));
    assert_eq!(r.csv_trials().lines().count(), 1);
}
