//! The findings of every seed preset on synthetic results with a planted answer: the
//! sentences at the top of a run's section must state the planted slope, crossover,
//! cost or ratio within their own 95 % CI (seeds 003 and 004: in `report.rs`, beside
//! their connection fixtures).

mod recorded;
use recorded::Record;
use report::figure::Options;
use report::{load, load_with};
use serde_json::{json, Value};
use store::{Headline, SampleRow, Store};

mod common;
use common::{
    assert_rounded_to_cis, assert_same_place, figure, finish, firewall_row, gateway_cpu, new_run,
    note, opening, pm_after, report_of, scratch, scratch_run, table, trial, within, Noise,
};

/// Seed 000: P × A × T × n × f × F, 3 reps. Planted: the throughput falls by 0.05 % per
/// rule (IPv4) and 0.08 % per rule (IPv6) with F·n rules; with F = 0, threads are
/// 0.5·(30 − n) % faster than epoll (a turning point at n = 30). Noise 0.3 % per trial.
fn seed000(s: &mut Store) -> i64 {
    let run = s.begin_run(&new_run("seed000", None)).unwrap();
    let mut noise = Noise(2014);
    let slope = |fam: u32| if fam == 4 { 0.05 } else { 0.08 };
    for n in [5u32, 10, 20, 40, 80] {
        for proto in ["tcp", "udp"] {
            for fam in [4u32, 6] {
                for server in ["threads", "epoll"] {
                    for frame in [json!(64), json!(512), json!("64-1024")] {
                        for f in [0u32, 2, 4] {
                            for rep in 1..=3u32 {
                                let base = 900e6 / (1.0 + 0.01 * n as f64)
                                    * if proto == "udp" { 1.1 } else { 1.0 }
                                    * if fam == 6 { 0.9 } else { 1.0 };
                                let te = if server == "threads" {
                                    1.0 + 0.005 * (30.0 - n as f64)
                                } else {
                                    1.0
                                };
                                let rules = (f * n) as f64;
                                let bps = base
                                    * te
                                    * (1.0 - slope(fam) * rules / 100.0)
                                    * (1.0 + 0.003 * noise.normal());
                                let params = json!({"topology": "forward", "clients": n, "frame_size": frame,
                                    "proto": proto, "family": fam, "server": server, "seed": rep,
                                    "engine": "iptables-legacy", "model": format!("seed000-f{f}")});
                                let h = Headline {
                                    throughput_bps: Some(bps),
                                    ..Default::default()
                                };
                                let key = format!("{n}-{proto}-{fam}-{server}-{frame}-{f}-{rep}");
                                let mut t = trial(run, key, rep, "echo", params, h);
                                t.samples = (0..3)
                                    .flat_map(|i| {
                                        [
                                            ("cpu0.idle", 60.0 - f as f64),
                                            ("ctxt", 1000.0 * n as f64),
                                            ("mem.used_kib", 512000.0),
                                        ]
                                        .map(|(m, v)| {
                                            SampleRow {
                                                role: "gateway".into(),
                                                t_s: i as f64,
                                                metric: m.into(),
                                                value: v,
                                            }
                                        })
                                    })
                                    .collect();
                                // The server's own process: a thread per client
                                // switches 200 times/s each; epoll 3000/s in all.
                                let own = if server == "threads" {
                                    200.0 * n as f64
                                } else {
                                    3000.0
                                };
                                t.samples.extend((0..3).map(|i| SampleRow {
                                    role: "server".into(),
                                    t_s: i as f64,
                                    metric: "proc.ctxt".into(),
                                    value: own,
                                }));
                                s.record(&t).unwrap();
                            }
                        }
                    }
                }
            }
        }
    }
    finish(s, run)
}

/// The figure's data table has `n` fit columns, and every fitted value in them comes
/// with its confidence interval ("X ± Y").
fn fit_values_carry_their_ci(fig: &report::figure::Figure, n: usize) {
    let t = report::export::figure_table(fig);
    let fits: Vec<usize> = (0..t.columns.len())
        .filter(|i| t.columns[*i].starts_with("fit: "))
        .collect();
    assert_eq!(fits.len(), n, "{:?}", t.columns);
    for row in &t.rows {
        for i in &fits {
            assert!(row[*i].is_empty() || row[*i].contains(" ± "), "{row:?}");
        }
    }
}

#[test]
fn seed000_findings_state_the_planted_loss_per_rule_and_turning_point() {
    let r = report_of(seed000);
    let run = &r.runs[0];
    let f = &run.analysis.findings;
    let v4 = pm_after(f, "Throughput loss per rule (IPv4): ");
    within(v4, 0.05, "IPv4 loss per rule");
    let v6 = pm_after(f, "Throughput loss per rule (IPv6): ");
    within(v6, 0.08, "IPv6 loss per rule");
    let say = |k: &str| f.iter().find(|x| x.contains(k)).unwrap().clone();
    assert!(
        say("(IPv4)").contains("within this run's 95 % CI"),
        "{}",
        say("(IPv4)")
    );
    assert!(
        say("(IPv6)").contains("this machine differs"),
        "{}",
        say("(IPv6)")
    );
    // Turning point: the planted 30 lies between the measured 20 and 40.
    let turn = say("turning point");
    let at: f64 = turn
        .split("n ≈ ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((at - 30.0).abs() < 1.5, "{turn}");
    assert!(
        turn.contains("between the measured n = 20 and n = 40"),
        "{turn}"
    );
    assert!(turn.contains("threads lead below it"), "{turn}");
    // Figures as the study drew them: averaged (4 protocol/family series, not 60),
    // the ranged group last in figure 4, one decrease figure per family, % difference.
    let fig = |id: &str| {
        run.analysis
            .figures
            .iter()
            .find(|x| x.id == id)
            .unwrap_or_else(|| panic!("no figure {id}"))
    };
    let per_n = fig("echo-per-client-vs-clients");
    assert_eq!(per_n.series.len(), 4);
    assert!(per_n
        .series
        .iter()
        .all(|s| s.points.iter().all(|p| p.ci95.is_some())));
    let frames = fig("echo-per-client-vs-frame");
    assert_eq!(frames.categories, ["64", "512", "ranged (64-1024)"]);
    for fam in ["ipv4", "ipv6"] {
        let d = fig(&format!("echo-decrease-vs-baseline-{fam}"));
        assert_eq!(
            d.series.len(),
            4,
            "{:?}",
            d.series.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
    }
    let te = fig("echo-threads-vs-epoll");
    assert!(te.y_label.contains('%'));
    // UDP is left out of the threads/epoll comparison, as in the study.
    assert!(te.series.iter().all(|s| !s.name.starts_with("UDP")));
    // Host load from the samples: CPU busy grows with F (60 − F idle).
    let load = run
        .analysis
        .tables
        .iter()
        .find(|t| t.title.starts_with("Host load"))
        .unwrap();
    let row = load
        .rows
        .iter()
        .find(|r| r[0] == "test series seed000-f4")
        .unwrap();
    let col = load
        .columns
        .iter()
        .position(|c| c == "gateway: CPU busy (% per CPU)")
        .unwrap();
    assert_eq!(row[col], "44 ± 0");
    let load = say("gateway CPU busy");
    assert!(
        load.contains("test series seed000-f4: 44 ± 0 (n = 120)"),
        "{load}"
    );
    // Context switches of the server's own process against the clients, per server
    // mode: the planted 200·n (threads) and 3000 (epoll).
    let ctxt = fig("host-ctxt-vs-clients");
    let series = |name: &str| {
        ctxt.series
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no series {name}"))
    };
    let threads: Vec<(f64, f64)> = series("server, threads")
        .points
        .iter()
        .map(|p| (p.x, p.y))
        .collect();
    assert_eq!(
        threads,
        [5.0, 10.0, 20.0, 40.0, 80.0].map(|n| (n, 200.0 * n))
    );
    assert!(series("server, epoll").points.iter().all(|p| p.y == 3000.0));
    assert!(fig("host-cpu-vs-clients")
        .series
        .iter()
        .any(|s| s.name == "gateway, epoll"));
    assert!(say("server process context switches/s").contains("server threads: "));
    // The protocol and family gaps beside the study's: UDP is planted 1.1 × TCP, so
    // TCP is 9.09 % slower; no SCTP here, so no SCTP sentence.
    within(pm_after(f, "TCP is "), 100.0 / 11.0, "TCP slower than UDP");
    assert!(say("TCP is ").contains("the study: 8.42 % (min 5.18, max 10.64)"));
    assert!(say("IPv4 is ").contains("faster than IPv6"));
    assert!(!f.iter().any(|x| x.contains("SCTP is")));
    // The JSON carries the same sentences.
    let json = r.json();
    assert_eq!(
        json["runs"][0]["findings"].as_array().unwrap().len(),
        f.len()
    );
    // The answer comes before the figures in the page.
    let html = r.html();
    let findings_at = html.find("class=\"findings\"").unwrap();
    assert!(findings_at < html.find("<svg").unwrap());
    assert!(html.find("class=\"toc\"").unwrap() < html.find("<svg").unwrap());
}

/// Parameters of a seed 001 flood trial as the store holds them (`TrialParams`
/// serialized: the sink under `packet`, the engine's canonical name).
fn flood_params(label: &str, engine: &str, model: &str, rules: u32, sink: &str, rep: u32) -> Value {
    json!({"topology": "forward", "clients": 1, "duration_s": 5.0, "frame_size": "64",
        "proto": "udp", "family": 4, "server": "threads", "timeout_ms": 500, "seed": rep,
        "engine": engine, "model": model, "rules": rules, "position": "last",
        "chain": "forward", "workload": "flood", "label": label,
        "packet": {"size": {"payload": 128}, "rate": "max", "flows": 1, "threads": 1,
            "sink_threads": 1, "batch": 64, "sender": "udp", "sink": sink, "interval_ns": 0}})
}

/// Seed 001's preset rows (labels, engines, models, sinks as `scenarios/seed001.toml`
/// has them, no scenario baseline), 4 reps, noise 1 %. Planted, against each section's
/// own baseline: conntrack 20 % (vs notrack 106k); on the drop path (vs the raw drop at
/// 280k) after 5 rules and filter 12 %, ipset (matched and dropped, 1–250k entries)
/// and string bm 10 %, kmp 17 %, hashlimit 20 %. The rows beyond the study are
/// faster than the raw drop (nftables' raw drop as fast as it: no measurable cost),
/// and the ipset/string rows that miss and accept are slower
/// than any drop: a section taken from labels, or a baseline taken from the fastest
/// row, gets every cost wrong.
fn seed001(s: &mut Store) -> i64 {
    seed001_with(s, None)
}

/// seed001, the row `paced` (a label) having passed every packet offered.
fn seed001_with(s: &mut Store, paced: Option<&str>) -> i64 {
    let run = s.begin_run(&new_run("seed001", None)).unwrap();
    let mut noise = Noise(2017);
    let (acc, drop) = (106e3, 280e3);
    let less = |base: f64, pct: f64| base * (1.0 - pct / 100.0);
    let legacy = "iptables-legacy";
    let cases: Vec<(&str, &str, &str, u32, &str, f64)> = vec![
        ("no firewall (baseline)", "none", "none", 0, "socket", 100e3),
        (
            "accept: connection tracking disabled",
            legacy,
            "notrack",
            0,
            "socket",
            acc,
        ),
        (
            "accept: connection tracking enabled",
            legacy,
            "conntrack",
            0,
            "socket",
            less(acc, 20.0),
        ),
        (
            "drop: very start of raw table",
            legacy,
            "raw-drop",
            0,
            "gateway",
            drop,
        ),
        (
            "drop: after 5 rules",
            legacy,
            "raw-drop",
            5,
            "gateway",
            less(drop, 12.0),
        ),
        (
            "drop: normal (filter) table",
            legacy,
            "filter-drop",
            0,
            "gateway",
            less(drop, 12.0),
        ),
        (
            "ipset: 1 entry",
            "ipset-legacy",
            "linear-drop",
            1,
            "gateway",
            less(drop, 10.0),
        ),
        (
            "ipset: 65 000 entries",
            "ipset-legacy",
            "linear-drop",
            65000,
            "gateway",
            less(drop, 10.0),
        ),
        (
            "ipset: 250 000 entries",
            "ipset-legacy",
            "linear-drop",
            250000,
            "gateway",
            less(drop, 10.0),
        ),
        (
            "string matching: bm",
            legacy,
            "string-bm-drop",
            1,
            "gateway",
            less(drop, 10.0),
        ),
        (
            "string matching: kmp",
            legacy,
            "string-kmp-drop",
            1,
            "gateway",
            less(drop, 17.0),
        ),
        (
            "hashlimit (1k pps accepted)",
            legacy,
            "hashlimit",
            0,
            "gateway",
            less(drop, 20.0),
        ),
        (
            "ipset: 250 000 entries, lookup misses, then accept (beyond the study)",
            "ipset-legacy",
            "linear",
            250000,
            "socket",
            less(acc, 5.0),
        ),
        (
            "string matching: bm, never matches, then accept (beyond the study)",
            legacy,
            "string-bm",
            1,
            "socket",
            less(acc, 8.0),
        ),
        (
            "drop in raw, nftables (beyond the study)",
            "nft",
            "raw-drop",
            0,
            "gateway",
            drop,
        ),
        (
            "drop: XDP native (beyond the study)",
            "xdp",
            "raw-drop",
            0,
            "gateway",
            900e3,
        ),
        (
            "drop: XDP native after 5 rules (beyond the study)",
            "xdp",
            "raw-drop",
            5,
            "gateway",
            less(900e3, 12.0),
        ),
        (
            "drop: XDP generic (beyond the study)",
            "xdp-generic",
            "raw-drop",
            0,
            "gateway",
            400e3,
        ),
        (
            "drop: tc ingress BPF (beyond the study)",
            "tc-bpf",
            "raw-drop",
            0,
            "gateway",
            600e3,
        ),
    ];
    for (label, engine, model, rules, sink, pps) in cases {
        for rep in 1..=4u32 {
            let params = flood_params(label, engine, model, rules, sink, rep);
            let got = pps * (1.0 + 0.01 * noise.normal());
            let h = Headline {
                sent_pps: Some(got.max(400e3)),
                received_pps: Some(got),
                loss_ratio: Some(0.0),
                ..Default::default()
            };
            let mut t = trial(run, format!("{label}-{rep}"), rep, "flood", params, h);
            if paced == Some(label) {
                t.results = json!({"packet": {"limited_by": {"by": "nothing", "why": "planted"}}});
            }
            s.record(&t).unwrap();
        }
    }
    finish(s, run)
}

/// A section's row that passed every packet offered has the sender's pace for its
/// rate: no cost against its section's baseline, said and its claim doubted (the
/// seed check then knows why), its cells marked.
#[test]
fn seed001_states_no_cost_of_a_row_that_passed_whole() {
    let label = "string matching: bm, never matches, then accept (beyond the study)";
    let r = report_of(|s| seed001_with(s, Some(label)));
    let a = &r.runs[0].analysis;
    let why = "this row passed every packet offered, its rate the sender's pace";
    assert!(
        a.findings.iter().any(|x| x
            == &format!(
                "Accepting all packets — {label}: no cost is stated against “accept: \
                 connection tracking disabled”: {why}."
            )),
        "{:#?}",
        a.findings
    );
    let claim = a
        .claims
        .iter()
        .find(|c| c.key.contains(label))
        .unwrap_or_else(|| panic!("{:#?}", a.claims));
    assert_eq!(claim.doubt.as_deref(), Some(why), "{claim:?}");
    let t = table(&r.runs[0], "Cases by section");
    let row = t.rows.iter().find(|r| r[1] == label).unwrap();
    assert_eq!(row[4], format!("- (not measurable: {why})"), "{row:?}");
    assert_eq!(row[6], format!("- (not measurable: {why})"), "{row:?}");
}

#[test]
fn seed001_costs_are_against_each_paths_own_baseline_of_the_study() {
    let r = report_of(seed001);
    let id = r.runs[0].run.id;
    let a = &r.runs[0].analysis;
    let f = &a.findings;
    let finding = |part: &str| -> &String {
        f.iter()
            .find(|x| x.contains(part))
            .unwrap_or_else(|| panic!("no finding of {part}: {f:#?}"))
    };
    for (marker, planted) in [
        ("accept: connection tracking enabled: ", 20.0),
        ("drop: after 5 rules: ", 12.0),
        ("drop: normal (filter) table: ", 12.0),
        ("ipset: 1 entry: ", 10.0),
        ("ipset: 65 000 entries: ", 10.0),
        ("ipset: 250 000 entries: ", 10.0),
        ("string matching: bm: ", 10.0),
        ("string matching: kmp: ", 17.0),
        ("hashlimit (1k pps accepted): ", 20.0),
        ("lookup misses, then accept (beyond the study): ", 5.0),
    ] {
        within(pm_after(f, marker), planted, marker);
    }
    for row in [
        "ipset: 1 entry: ",
        "string matching: kmp: ",
        "XDP native (beyond",
    ] {
        let x = finding(row);
        assert!(
            x.starts_with("Rejecting all packets")
                && x.contains("against “drop: very start of raw table”"),
            "{x}"
        );
    }
    // Measurably faster than its baseline (planted 600 vs 500 kpps): a negative cost
    // says so.
    let tc = finding("tc ingress BPF");
    assert!(
        tc.contains("% cost (negative: this row is the faster) against"),
        "{tc}"
    );
    let miss = finding("lookup misses");
    assert!(
        miss.contains("against “accept: connection tracking disabled”"),
        "{miss}"
    );
    // A cost whose CI holds 0 is no cost (seed 001 here said "tc ingress BPF: -6.1 ±
    // 8.6 % cost"): nftables' raw drop, planted as fast as the section's baseline.
    let same = finding("drop in raw, nftables");
    assert!(
        same.contains(": no measurable cost (") && same.contains("%: its 95 % CI includes 0)"),
        "{same}"
    );
    assert!(!same.contains("% cost against"), "{same}");
    let doubted = a
        .claims
        .iter()
        .find(|c| c.key.contains("drop in raw, nftables"))
        .unwrap();
    assert_eq!(doubted.doubt.as_deref(), Some("its 95 % CI includes 0"));
    // Beyond-study rows carry no study value, even where a label resembles one.
    let xdp5 = finding("XDP native after 5");
    assert!(!xdp5.contains("the study:"), "{xdp5}");
    assert!(f
        .iter()
        .any(|x| x.contains("drop: after 5 rules: ") && x.contains("the study: 12 %")));
    let t = a
        .tables
        .iter()
        .find(|t| t.title.starts_with("Cases by section"))
        .unwrap();
    let row = |label: &str| {
        t.rows
            .iter()
            .find(|r| r[1] == label)
            .unwrap_or_else(|| panic!("no row {label}: {:#?}", t.rows))
    };
    assert_eq!(
        row("accept: connection tracking disabled")[4],
        "section baseline"
    );
    assert_eq!(row("drop: very start of raw table")[4], "section baseline");
    assert_eq!(row("no firewall (baseline)")[6], "run baseline");
    assert_eq!(row("ipset: 1 entry")[0], "rejecting all packets");
    assert_eq!(row("ipset: 1 entry")[5], "10");
    assert_eq!(
        row("drop: XDP native after 5 rules (beyond the study)")[5],
        "-"
    );
    let cell = &row("drop in raw, nftables (beyond the study)")[4];
    assert!(
        cell.ends_with(" (not measurable: its 95 % CI includes 0)"),
        "{cell}"
    );
    // The cost against the run's own no-firewall row (100k): notrack is 6 % faster,
    // conntrack 15.2 % slower; every accept-path row has that column filled. The
    // drop path's rows are counted at the gateway (280k planted against 100k crossing):
    // no cost against a row counted at the sink, said so (a "-180 %" there misled).
    let vs_none =
        |label: &str| -> f64 { row(label)[6].split(" ± ").next().unwrap().parse().unwrap() };
    assert!((vs_none("accept: connection tracking disabled") + 6.0).abs() < 2.0);
    assert!((vs_none("accept: connection tracking enabled") - 15.2).abs() < 2.0);
    for r in t.rows.iter().skip(1) {
        if r[0] == "accepting all packets" {
            assert!(
                !r[6].is_empty() && r[6] != "-" && !r[6].starts_with("n/a"),
                "{r:?}"
            );
        } else {
            assert_eq!(r[0], "rejecting all packets", "{r:?}");
            assert!(
                r[6].starts_with("n/a: counted where the gateway drops"),
                "{r:?}"
            );
        }
    } // docs/seeds.md's table: the same rows, with where they come from.
    let md = r.markdown_tables();
    assert!(
        md.starts_with(&format!(
            "Generated by `fwbench report {} -f tables` from run {id} of `seed001`",
            r.source
        )),
        "{md}"
    );
    assert!(md.contains("fwbench 0.1.0; bench1 (Test CPU @ 3 GHz, 8 CPUs, kernel 6.1.0-test)"));
    assert!(
        md.contains("### Cases by section")
            && md.contains("| rejecting all packets | ipset: 1 entry |")
    );
    assert!(!md.contains("### Configurations"), "{md}");
}

/// Seed 002 (one case, FORWARD): time per packet 400 ns + b · rules with b = 6 ns
/// (iptables-legacy) and 30 ns (nft, inet), 3 reps, noise 1 %; gateway CPU1 softirq =
/// the share of the time per packet spent on rules (93.75 % at 1 000 rules for
/// iptables-legacy, 98.7 % for nft).
fn seed002(s: &mut Store) -> i64 {
    seed002_limited(s, |_, _| None)
}

/// [`seed002`] with each trial's `packet.limited_by.by` as `by(engine, rep)` says (none:
/// not judged).
fn seed002_limited(s: &mut Store, by: fn(&str, u32) -> Option<&'static str>) -> i64 {
    let run = s.begin_run(&new_run("seed002", None)).unwrap();
    let mut noise = Noise(2021);
    for rules in [0u64, 1000, 2000, 5000, 6000, 10000] {
        for (engine, b) in [
            ("iptables-legacy", 6.0),
            ("iptables-nft", 15.0),
            ("nft", 30.0),
        ] {
            for rep in 1..=3u32 {
                let ns = (400.0 + b * rules as f64) * (1.0 + 0.01 * noise.normal());
                let pps = 1e9 / ns;
                let params = json!({"topology": "forward", "workload": "flow", "engine": engine,
                    "model": "linear", "rules": rules, "position": "last", "seed": rep,
                    "label": "128 B @ 15 Mb/s",
                    "packet": {"size": {"payload": 128}, "rate": "15M", "flows": 1, "threads": 1}});
                let mut t = trial(
                    run,
                    format!("{rules}-{engine}-{rep}"),
                    rep,
                    "flow",
                    params,
                    Headline {
                        sent_pps: Some(3e6),
                        received_pps: Some(pps),
                        loss_ratio: Some(1.0 - pps / 3e6),
                        owd_p50_us: Some(20.0 + b * rules as f64 / 1000.0),
                        jitter_us: Some(2.0 + b / 10.0),
                        ..Default::default()
                    },
                );
                t.firewall = firewall_row(engine, rules);
                if let Some(by) = by(engine, rep) {
                    t.results = json!({"packet": {"limited_by": {"by": by, "why": "planted"}}});
                }
                // CPU time per packet = b · rules: a line through 0.
                let soft = 100.0 * b * rules as f64 / (400.0 + b * rules as f64);
                t.samples = gateway_cpu(&[
                    ("cpu1.user", 0.5),
                    ("cpu1.softirq", soft),
                    ("cpu1.idle", (99.5 - soft).max(0.0)),
                    ("cpu0.user", 3.0),
                    ("cpu0.softirq", 0.0),
                    ("cpu0.idle", 97.0),
                ]);
                s.record(&t).unwrap();
            }
        }
    }
    finish(s, run)
}

/// A ratio of two engines that both passed every packet offered (`limited_by`
/// "nothing", as seed 002's 512 B and 1280 B flows do here) is the offered rate over
/// itself: the finding says so; a pair where one engine was the limit is not flagged.
/// A repetition fwbench's sender limited is left out of the ratio, and does not make
/// the ones kept (all "nothing") a measure of the gateway.
#[test]
fn an_advantage_ratio_of_two_offered_rates_is_flagged() {
    let everywhere = |engine: &str, _| match engine {
        "nft" => Some("gateway"),
        _ => Some("nothing"),
    };
    let one_sender_limited = |engine: &str, rep| match (engine, rep) {
        ("nft", _) => Some("gateway"),
        ("iptables-legacy", 1) => Some("sender"),
        _ => Some("nothing"),
    };
    for by in [everywhere as fn(&str, u32) -> _, one_sender_limited] {
        let r = report_of(|s| seed002_limited(s, by));
        let f = &r.runs[0].analysis.findings;
        let sentence = |start: &str| {
            f.iter()
                .find(|x| x.starts_with(start))
                .unwrap_or_else(|| panic!("{start}: {f:#?}"))
                .clone()
        };
        let flag = "Both passed every packet offered there (limited by nothing)";
        let both = sentence("Advantage ratio iptables-legacy / iptables-nft at 6000 rules: ");
        assert!(both.contains(flag), "{both}");
        // The other engine was the gateway's limit: iptables-legacy's rate is the
        // sender's pace, so the ratio is a floor — said, not held against the study's,
        // its claim doubted.
        let one = sentence("Advantage ratio iptables-legacy / nft/inet at 6000 rules: ");
        assert!(!one.contains(flag), "{one}");
        assert!(
            one.contains("the study: 5.2 at 6 000 rules — not compared: this ratio is a floor")
                && one.contains(
                    "A floor: iptables-legacy passed every packet offered there (limited by \
                     nothing), so its rate is the sender's pace, not its limit, and the ratio is \
                     at least this"
                ),
            "{one}"
        );
        let claim = r.runs[0]
            .analysis
            .claims
            .iter()
            .find(|c| {
                c.key
                    .starts_with("advantage ratio: iptables-legacy / nft/inet")
            })
            .unwrap();
        assert!(
            claim.doubt.as_deref().is_some_and(
                |d| d == "the ratio is a floor (the engine passed every packet offered)"
            ),
            "{claim:?}"
        );
        let both = r.runs[0]
            .analysis
            .claims
            .iter()
            .find(|c| {
                c.key
                    .starts_with("advantage ratio: iptables-legacy / iptables-nft")
            })
            .unwrap();
        assert_eq!(
            both.doubt.as_deref(),
            Some("the ratio is of two offered rates (both engines passed every packet offered)"),
            "{both:?}"
        );
        // On the figure too, series by series.
        let fig = r.runs[0]
            .analysis
            .figures
            .iter()
            .find(|f| f.id == "packet-advantage")
            .unwrap();
        let noted = |start: &str| fig.notes.iter().find(|n| n.starts_with(start)).cloned();
        let floor = noted("iptables-legacy / nft/inet: ").unwrap_or_else(|| panic!("{fig:#?}"));
        assert!(
            floor.contains("a floor at ") && floor.contains("6000"),
            "{floor}"
        );
    }
}

#[test]
fn seed002_findings_state_the_planted_costs_and_advantage_at_6000_rules() {
    let (_dir, mut store) = scratch("s2.db");
    let id = seed002(&mut store);
    let r = load(&store, Some(id)).unwrap();
    let run = &r.runs[0];
    let f = &run.analysis.findings;
    within(
        pm_after(f, "engine=iptables-legacy: "),
        6.0,
        "iptables cost per rule",
    );
    within(
        pm_after(f, "engine=nft (inet): "),
        30.0,
        "nft cost per rule",
    );
    // The study's reference (nftables): iptables' advantage at 6 000 rules is
    // (400 + 30·6000) / (400 + 6·6000) = 4.956.
    let planted = (400.0 + 30.0 * 6000.0) / (400.0 + 6.0 * 6000.0);
    within(
        pm_after(
            f,
            "Advantage ratio iptables-legacy / nft/inet at 6000 rules: ",
        ),
        planted,
        "advantage",
    );
    let adv = opening(f, "Advantage ratio");
    assert!(adv.contains("the study: 5.2"), "{adv}");
    // Against iptables-nft too (the study's nftables rules came from it): planted
    // (400 + 15·6000) / (400 + 6·6000) = 2.48, with the study's value beside.
    let vs_nft = "Advantage ratio iptables-legacy / iptables-nft at 6000 rules: ";
    within(
        pm_after(f, vs_nft),
        (400.0 + 15.0 * 6000.0) / (400.0 + 6.0 * 6000.0),
        "advantage over iptables-nft",
    );
    assert!(f
        .iter()
        .any(|x| x.starts_with(vs_nft) && x.contains("the study: 5.2")));
    let fig2 = figure(run, "packet-advantage-iptables-nft");
    note(fig2, "5.2 (128 B), 2.9 (512 B), 1.7 (1280 B)");
    for engine in ["iptables-legacy", "nft (inet)"] {
        let want = format!("from 1000 rules on ({engine})");
        assert!(
            f.iter()
                .any(|x| x.starts_with("Gateway CPU1 softirq") && x.contains(&want)),
            "{want}: {f:#?}"
        );
    }
    assert!(!f.iter().any(|x| x.contains("CPU0")));
    // The cost sentences come first and say what the CI is over.
    assert!(
        f[0].contains("95 % CI over 18 trials at 6 rule counts"),
        "{}",
        f[0]
    );
    // Delay vs rules and CPU per core are drawn (panels: one per engine and CPU).
    let ids: Vec<&str> = run.analysis.figures.iter().map(|x| x.id.as_str()).collect();
    for id in [
        "packet-owd_p50_us-vs-rules",
        "packet-cpu1-iptables-legacy",
        "packet-cpu0-nft-inet",
    ] {
        assert!(ids.contains(&id), "{id} not in {ids:?}");
    }
    // Jitter is a constant 2 µs: drawn; a figure of zeros would say "no data".
    let cpu1 = figure(run, "packet-cpu1-nft-inet");
    let names: Vec<&str> = cpu1.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["user", "softirq", "idle"]);
    // Another reference: the ratio inverts.
    let opts = Options {
        reference: Some("iptables-legacy".into()),
    };
    let r2 = load_with(&store, Some(id), &opts).unwrap();
    within(
        pm_after(
            &r2.runs[0].analysis.findings,
            "Advantage ratio nft/inet / iptables-legacy at 6000 rules: ",
        ),
        1.0 / planted,
        "inverse advantage",
    );
    let opts = Options {
        reference: Some("xdp".into()),
    };
    let r3 = load_with(&store, Some(id), &opts).unwrap();
    assert!(r3.runs[0]
        .analysis
        .findings
        .iter()
        .any(|x| x.contains("the reference xdp was not run")));
}

/// Writes the synthetic seed 000 and seed 002 results to `$FWBENCH_SYNTHETIC_DIR`
/// (`seed000.db`, `seed002.db`), for the documentation's screenshots:
/// `FWBENCH_SYNTHETIC_DIR=/tmp/s cargo test -p report --test seeds write_synthetic`.
/// Without the variable it writes them into a scratch directory; either way each file
/// is opened again read-only, as the screenshot script does, and must hold its run
/// whole (no early return: CI runs this test too).
#[test]
fn write_synthetic_results_for_screenshots() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = std::env::var_os("FWBENCH_SYNTHETIC_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| scratch.path().to_path_buf());
    std::fs::create_dir_all(&dir).unwrap();
    for (name, make, trials) in [
        ("seed000.db", seed000 as fn(&mut Store) -> i64, 1080),
        ("seed002.db", seed002, 54),
    ] {
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        let id = make(&mut Store::open(&path).unwrap());
        let s = Store::open_read_only(&path).unwrap();
        let r = report::load(&s, Some(id)).unwrap();
        assert_eq!(r.runs.len(), 1, "{name}");
        assert_eq!(r.runs[0].trials.len(), trials, "{name}");
        assert_eq!(r.runs[0].run.status, "complete", "{name}");
    }
}

#[test]
fn one_configuration_shows_its_parameters_and_zero_figures_say_no_data() {
    let (_dir, mut s, run) = scratch_run("one");
    let params = json!({"topology": "forward", "workload": "flood", "engine": "nft", "rules": 10,
        "packet": {"size": {"payload": 18}, "rate": "max"}, "seed": 1});
    let h = Headline {
        sent_pps: Some(1e5),
        received_pps: Some(1e5),
        loss_ratio: Some(0.0),
        ..Default::default()
    };
    s.record(&trial(run, "one".into(), 1, "flood", params, h))
        .unwrap();
    // A sweep whose loss is 0 everywhere: its loss figure says "no data".
    let sweep = s.begin_run(&new_run("sweep", None)).unwrap();
    for rules in [0u64, 100, 200] {
        let params = json!({"topology": "forward", "workload": "flood", "engine": "nft", "rules": rules, "seed": 1});
        let h = Headline {
            sent_pps: Some(1e5),
            received_pps: Some(1e5 - rules as f64),
            loss_ratio: Some(0.0),
            ..Default::default()
        };
        s.record(&trial(sweep, format!("s{rules}"), 1, "flood", params, h))
            .unwrap();
    }
    let html = load(&s, Some(run)).unwrap().html();
    assert!(
        html.contains("Parameters (the run's one configuration)"),
        "{html}"
    );
    assert!(
        html.contains("<dt>packet.size.payload</dt><dd>18</dd>"),
        "{html}"
    );
    let html = load(&s, Some(sweep)).unwrap().html();
    assert!(html.contains("<b>Loss vs rules</b>: no data"), "{html}");
    assert!(!html.contains("<figure id=\"packet-loss-vs-rules\""));
    assert!(html.contains("<figure id=\"packet-pps-vs-rules\""));
}

/// Seed 002 with two packet sizes (the preset's labels) and two engines: a pps panel per
/// engine (the study's figures 3/4) and CPU panels per packet size (figures 6/7).
/// Planted: CPU1 softirq saturates from 5 000 rules with 128 B packets and from 20 000
/// with 1280 B, for both engines.
#[test]
fn seed002_panels_per_engine_and_per_packet_size() {
    let (_dir, mut s, run) = scratch_run("seed002");
    // 512 B: at 20 000 rules one repetition at 99 %, the other at 85 %: a mean of 92 %
    // whose CI reaches far below 90 %.
    for (label, knee) in [
        ("128 B @ 15 Mb/s", 5000u64),
        ("1280 B @ 45 Mb/s", 20000),
        ("512 B @ 30 Mb/s", 20000),
    ] {
        for engine in ["iptables-legacy", "nft"] {
            for rules in [0u64, 5000, 20000] {
                for rep in 1..=2u32 {
                    let params = json!({"topology": "forward", "workload": "flow", "engine": engine,
                        "model": "linear", "rules": rules, "seed": rep, "label": label});
                    let h = Headline {
                        received_pps: Some(1e4 / (1.0 + rules as f64 / 1e4)),
                        ..Default::default()
                    };
                    let mut t = trial(
                        run,
                        format!("{label}-{engine}-{rules}-{rep}"),
                        rep,
                        "flow",
                        params,
                        h,
                    );
                    let soft = match (rules >= knee, label.starts_with("512")) {
                        (false, _) => 10.0,
                        (true, false) => 99.0,
                        (true, true) => [99.0, 85.0][rep as usize - 1],
                    };
                    t.samples = [("cpu1.softirq", soft), ("cpu1.idle", 100.0 - soft)]
                        .map(|(m, v)| SampleRow {
                            role: "gateway".into(),
                            t_s: 0.0,
                            metric: m.into(),
                            value: v,
                        })
                        .to_vec();
                    s.record(&t).unwrap();
                }
            }
        }
    }
    finish(&mut s, run);
    let r = load(&s, Some(run)).unwrap();
    let a = &r.runs[0].analysis;
    let ids: Vec<&str> = a.figures.iter().map(|f| f.id.as_str()).collect();
    for id in [
        "packet-pps-vs-rules-iptables-legacy",
        "packet-pps-vs-rules-nft-inet",
        "packet-cpu1-iptables-legacy-128-b-15-mb-s",
        "packet-cpu1-nft-inet-1280-b-45-mb-s",
    ] {
        assert!(ids.contains(&id), "{id} not in {ids:?}");
    }
    assert!(!ids.contains(&"packet-pps-vs-rules"), "{ids:?}");
    let pps = a
        .figures
        .iter()
        .find(|f| f.id == "packet-pps-vs-rules-nft-inet")
        .unwrap();
    assert_eq!(pps.series.len(), 3, "a series per packet size");
    for (engine, label, from) in [
        ("iptables-legacy", "128 B @ 15 Mb/s", 5000),
        ("nft (inet)", "1280 B @ 45 Mb/s", 20000),
    ] {
        let want = format!("from {from} rules on ({engine}, {label}): that core saturates");
        assert!(
            a.findings.iter().any(|x| x.contains(&want)),
            "{want}: {:#?}",
            a.findings
        );
    }
    let doubtful = a
        .findings
        .iter()
        .find(|x| x.contains("(nft (inet), 512 B @ 30 Mb/s)"))
        .unwrap_or_else(|| panic!("{:#?}", a.findings));
    assert!(
        doubtful.contains("not measurably saturated: its 95 % CI reaches down to ")
            && !doubtful.contains("that core saturates"),
        "{doubtful}"
    );
}

/// Issue 23: every number of seed 002's report to its CI's digits — the cost lines'
/// intercepts carry their CI (findings and cost table), the fitted lines in the time
/// per packet table carry the CI of the line there, the advantage sentence repeats its
/// ratio as rounded, and every "A ± B" of the Markdown report is rounded to B.
#[test]
fn seed002_fits_and_ratios_are_shown_to_their_cis() {
    let r = report_of(seed002);
    let run = &r.runs[0];
    let f = &run.analysis.findings;
    let cost = opening(f, "engine=iptables-legacy:");
    let a = cost
        .split("), ")
        .last()
        .and_then(|x| x.split(" ns per packet at 0 rules").next())
        .unwrap();
    assert!(a.contains(" ± "), "the intercept's CI: {cost}");
    let t = report::export::fits_table(&run.analysis.fits, &run.analysis.left_out);
    for row in &t.rows {
        assert!(row[2].contains(" ± "), "a with its CI: {row:?}");
    }
    fit_values_carry_their_ci(figure(run, "packet-ns-per-packet"), 3);
    let adv = opening(f, "Advantage ratio iptables-legacy / nft/inet");
    let (ratio, _) = adv
        .split(" rules: ")
        .nth(1)
        .and_then(|x| x.split_once(" ± "))
        .unwrap();
    assert!(
        adv.contains(&format!("passes {ratio} times")),
        "the ratio as rounded: {adv}"
    );
    let soft = opening(f, "Gateway CPU1 softirq reaches ");
    assert!(
        soft.split(" from ").next().unwrap().contains(" ± "),
        "the softirq share with its CI: {soft}"
    );
    assert_rounded_to_cis(&r.markdown());
}

/// Issue 23: seed 000's report — the protocol and family gaps' min and max to the
/// mean's digits, the loss-per-rule line's intercept and fitted values with their CIs,
/// every "A ± B" rounded to B.
#[test]
fn seed000_gaps_and_loss_lines_are_shown_to_their_cis() {
    let r = report_of(seed000);
    let run = &r.runs[0];
    for gap in ["TCP is ", "IPv4 is "] {
        let x = opening(&run.analysis.findings, gap);
        let (mean, rest) = x[gap.len()..].split_once(" ± ").unwrap();
        let ci = rest.split(' ').next().unwrap();
        let min = x.split("; min ").nth(1).unwrap().split(' ').next().unwrap();
        let max = x.split(", max ").nth(1).unwrap().split(' ').next().unwrap();
        assert_same_place(mean, ci, x);
        assert_same_place(min, ci, x);
        assert_same_place(max, ci, x);
    }
    let t = table(run, "Throughput loss per rule");
    for row in &t.rows {
        assert!(row[2].contains(" ± "), "the intercept's CI: {row:?}");
    }
    fit_values_carry_their_ci(figure(run, "echo-decrease-vs-rules"), 2);
    assert_rounded_to_cis(&r.markdown());
}

/// The claims (what `scripts/seed-check.sh` compares between two runs) are the numbers
/// the report states: each one's value ± CI stands verbatim in it, its key holds
/// no measured value, keys are unique within a run, and the planted answers are there
/// under the keys a second run of the design would use.
#[test]
fn claims_are_the_findings_numbers_under_value_free_keys() {
    use report::figure::{mean_ci, Claim};
    let claim = |claims: &[Claim], key: &str| -> (f64, f64) {
        let c = claims
            .iter()
            .find(|c| c.key == key)
            .unwrap_or_else(|| panic!("no claim {key:?} in {claims:#?}"));
        (c.value, c.ci95.expect("a CI"))
    };
    for (build, r) in [
        ("seed000", report_of(seed000)),
        ("seed001", report_of(seed001)),
        ("seed002", report_of(seed002)),
    ] {
        let a = &r.runs[0].analysis;
        let md = r.markdown();
        assert!(!a.claims.is_empty(), "{build}: no claims");
        let mut keys: Vec<&str> = a.claims.iter().map(|c| c.key.as_str()).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "{build}: a key twice: {keys:?}");
        for c in &a.claims {
            let stated = mean_ci(c.value, c.ci95);
            assert!(
                md.contains(&stated),
                "{build}: claim {:?} = {stated} is not in the report: {md}",
                c.key
            );
            let bare = stated.split(" ± ").next().unwrap();
            assert!(
                !c.key.contains(bare),
                "{build}: the key {:?} holds its value",
                c.key
            );
        }
        match build {
            "seed000" => {
                within(
                    claim(&a.claims, "throughput loss per rule: IPv4"),
                    0.05,
                    "IPv4 loss per rule",
                );
                within(
                    claim(&a.claims, "throughput loss per rule: IPv6"),
                    0.08,
                    "IPv6 loss per rule",
                );
                assert!(keys.contains(&"throughput gap: UDP vs TCP"), "{keys:?}");
                assert!(keys.contains(&"throughput gap: IPv4 vs IPv6"), "{keys:?}");
            }
            "seed001" => {
                let raw = "against “drop: very start of raw table”";
                for (row, planted) in [("ipset: 1 entry", 10.0), ("string matching: kmp", 17.0)] {
                    let key = format!("section cost: rejecting all packets — {row}, {raw}");
                    within(claim(&a.claims, &key), planted, &key);
                }
            }
            _ => {
                within(
                    claim(
                        &a.claims,
                        "cost per rule (1/pps estimator): engine=iptables-legacy",
                    ),
                    6.0,
                    "iptables cost per rule",
                );
                within(
                    claim(
                        &a.claims,
                        "cost per rule (1/pps estimator): engine=nft (inet)",
                    ),
                    30.0,
                    "nft cost per rule",
                );
                within(
                    claim(
                        &a.claims,
                        "advantage ratio: iptables-legacy / nft/inet at 6000 rules",
                    ),
                    (400.0 + 30.0 * 6000.0) / (400.0 + 6.0 * 6000.0),
                    "advantage",
                );
            }
        }
    }
}

/// A planted firewall: engine, nft family, ns per packet the rules add at N rules.
type Planted = (&'static str, Option<&'static str>, fn(f64) -> f64);

/// The default experiment (`scenarios/default.toml`) as a busy, noisy machine stores
/// it: 6 firewalls × 5 rule counts × 4 repetitions of a flood, every trial's rate
/// varying 7 % from trial to trial (another job on the machine), every trial
/// `shared-cpu` (the preset's placement) but three limited by the sink (their rates 40 % low), iptables-legacy's
/// cost bending at 2 000
/// rules. Planted ns per rule per packet: iptables-legacy 7 then 2, nft inet 20, nft ip
/// 10, xdp 8; nft-set and xdp-map none. The answer is one finding per firewall, the
/// noise said once (and carried by the CIs), and at most two warnings a user must act
/// on — here one: three trials whose sink lost its CPU to the other job, left out of the costs.
fn default_on_a_noisy_machine(s: &mut Store) -> i64 {
    let run = s.begin_run(&new_run("default", None)).unwrap();
    let mut noise = Noise(20261128);
    let firewalls: [Planted; 6] = [
        ("iptables-legacy", None, |r| {
            7.0 * r.min(2000.0) + 2.0 * (r - 2000.0).max(0.0)
        }),
        ("nft", None, |r| 20.0 * r),
        ("nft", Some("ip"), |r| 10.0 * r),
        ("nft-set", None, |_| 0.0),
        ("xdp", None, |r| 8.0 * r),
        ("xdp-map", None, |_| 0.0),
    ];
    for (engine, family, cost) in firewalls {
        for rules in [0u64, 1000, 2000, 5000, 10000] {
            for rep in 1..=4u32 {
                let ns = (4000.0 + cost(rules as f64)) * (1.0 + 0.07 * noise.normal());
                // Three trials whose sink lost its CPU to the other job (as in the busy
                // machine's run of 2026-11-28): the sink counted 40 % less than the
                // gateway passed — fwbench's limit, not the gateway's, and the one
                // thing to act on.
                let sink = (engine == "nft" && family.is_none() && rules == 0 && rep <= 2)
                    || (engine == "xdp-map" && rules == 5000 && rep == 1);
                let pps = 1e9 / ns * if sink { 0.6 } else { 1.0 };
                let mut params = json!({"topology": "forward", "workload": "flood",
                    "engine": engine, "model": "linear", "rules": rules, "position": "last",
                    "seed": rep, "family": 4,
                    "packet": {"size": "frame:64", "rate": "max", "flows": 1, "threads": 1}});
                if let Some(f) = family {
                    params["nft_family"] = json!(f);
                }
                // The effective engine as the controller records it: `nft/inet`.
                let id = match (engine.starts_with("nft"), family) {
                    (true, f) => format!("{engine}/{}", f.unwrap_or("inet")),
                    (false, _) => engine.to_string(),
                };
                let mut t = trial(
                    run,
                    format!("{id}-{rules}-{rep}"),
                    rep,
                    "flood",
                    params,
                    Headline {
                        sent_pps: Some(pps * 1.02),
                        received_pps: Some(pps),
                        loss_ratio: Some(0.02 / 1.02),
                        ..Default::default()
                    },
                );
                t.firewall = firewall_row(engine, rules);
                t.engine = Some(store::EngineRow {
                    id: id.clone(),
                    kind: "nft".into(),
                });
                let by = if sink { "sink" } else { "shared-cpu" };
                t.results = json!({"packet": {"limited_by": {"by": by,
                    "why": "planted"}}});
                s.record(&t).unwrap();
            }
        }
    }
    finish(s, run)
}

#[test]
fn a_noisy_default_run_answers_per_engine_with_at_most_two_warnings() {
    let r = report_of(default_on_a_noisy_machine);
    let run = &r.runs[0];
    let f = &run.analysis.findings;
    for series in [
        "engine=iptables-legacy: ",
        "engine=nft (inet): ",
        "engine=nft (ip): ",
        "engine=nft-set (inet): ",
        "engine=xdp: ",
        "engine=xdp-map: ",
    ] {
        let answer = f
            .iter()
            .find(|x| x.starts_with(series))
            .unwrap_or_else(|| panic!("{series}: {f:#?}"));
        assert!(answer.contains("ns per rule"), "{answer}");
        assert!(!answer.contains("FLAGGED —"), "no answer: {answer}");
    }
    // The noise is in the CIs: nft inet's 20 ns per rule within two of its CIs (these
    // draws put the estimate at 19.26 ± 0.57: a 95 % CI misses 1 time in 20), and the
    // CI no narrower than the noise allows (7 % of 4 000–204 000 ns over 20 trials).
    let (b, ci) = pm_after(f, "engine=nft (inet): ");
    assert!((b - 20.0).abs() <= 2.0 * ci, "{b} ± {ci}");
    assert!(ci > 0.3, "{b} ± {ci}");
    // The two trials the sink limited are left out, and said so: the 4 000 ns planted at
    // 0 rules is found (with them, the mean there is a third higher).
    let nft = opening(f, "engine=nft (inet): ");
    assert!(
        nft.contains(
            "Left out: 2 trials (at 0 rules) limited by fwbench's sink, not by the gateway"
        ),
        "{nft}"
    );
    assert!(
        nft.contains("95 % CI over 18 trials at 5 rule counts"),
        "{nft}"
    );
    let (a, a_ci) = pm_after(&[nft.to_string()], "rule counts), ");
    assert!((a - 4000.0).abs() <= 2.0 * a_ci, "{a} ± {a_ci}: {nft}");
    assert!(
        a_ci < 600.0,
        "the noise's CI (7 % a trial), not the cap's: {nft}"
    );
    // The advantage ratio at 5 000 rules leaves out xdp-map's limited repetition: the
    // planted 26 (4 000 ns against 104 000) is found, not a tenth less.
    let ratio = f
        .iter()
        .find(|x| x.starts_with("Advantage ratio xdp-map / nft/inet at 5000 rules"))
        .unwrap_or_else(|| panic!("{f:#?}"));
    assert!(
        ratio.contains("Left out there, as fwbench's limit rather than the gateway's (see the run's warnings): 1 of xdp-map's 4 repetitions, limited by fwbench's sink"),
        "{ratio}"
    );
    assert!(ratio.contains("3+ repetitions of each"), "{ratio}");
    let (q, q_ci) = pm_after(std::slice::from_ref(ratio), "rules: ");
    assert!((q - 26.0).abs() <= 2.0 * q_ci, "{q} ± {q_ci}: {ratio}");
    assert!(q_ci < 0.2 * 26.0, "the noise's CI, not the cap's: {ratio}");
    // The configurations table says what its means left out.
    let configs = table(run, "Configurations");
    let left: Vec<&Vec<String>> = configs
        .rows
        .iter()
        .filter(|r| {
            r.iter()
                .any(|c| c.ends_with("limited by fwbench left out)"))
        })
        .collect();
    assert_eq!(left.len(), 2, "{configs:#?}");
    assert!(left[0]
        .iter()
        .any(|c| c.ends_with(" (2 limited by fwbench left out)")));
    // xdp-map's line keeps a CI that includes 0 without it — in this noisy run too
    // wide to call flat (+14 % allowed at 10 000 rules).
    let map = opening(f, "engine=xdp-map: ");
    assert!(
        map.contains("— not measurable: the CI includes 0 but allows up to"),
        "{map}"
    );
    assert!(map.contains("Left out: 1 trial (at 5000 rules)"), "{map}");
    // Said once, with how noisy.
    let noise: Vec<&String> = f.iter().filter(|x| x.starts_with("Noise: ")).collect();
    assert_eq!(noise.len(), 1, "{f:#?}");
    assert!(noise[0].contains("of 4 repetitions"), "{}", noise[0]);
    // The preset's placement said once, not as a warning.
    assert_eq!(f.iter().filter(|x| x.starts_with("Placement: ")).count(), 1);
    let warnings: Vec<&report::Warning> = r.warnings().collect();
    assert!(warnings.len() <= 2, "{warnings:#?}");
    assert!(
        !warnings.iter().any(|w| w.kind == "unstable"),
        "{warnings:#?}"
    );
    // The sink's limit: one warning, with what to do; in the warnings, not the findings.
    let sink: Vec<_> = warnings
        .iter()
        .filter(|w| w.kind == "fwbench-limit")
        .collect();
    assert_eq!(sink.len(), 1, "{warnings:#?}");
    assert!(sink[0]
        .message
        .starts_with("3 of 120 packet trials were limited by fwbench's sink"));
    assert!(
        sink[0].message.contains("pin_server"),
        "{}",
        sink[0].message
    );
    assert!(!f.iter().any(|x| x.starts_with("Warning")), "{f:#?}");
    let text = r.text();
    let bangs = text.lines().filter(|l| l.starts_with("  ! ")).count();
    assert!((1..=2).contains(&bangs), "{text}");
    assert!(text.contains("Warnings (1):"), "{text}");
    let html = r.html();
    assert!(
        !html.contains("No warnings"),
        "the sink's limit is in the warnings section"
    );
}
