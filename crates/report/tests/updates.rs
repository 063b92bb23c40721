//! Gateway events (issue 25): per-update rows planted through the store, as a real
//! trial stores them, read back by the report into findings, figures and a table.

use report::load;
use serde_json::json;
use std::collections::BTreeSet;
use store::{Headline, Store, TrialRecord, UpdateRecord};

mod common;
use common::{figure_in_page, finish, new_run, report_of, scratch, scratch_run, trial};

/// One committed update: `bins` are (ms from the commit, received, lost, owd µs).
fn update(
    installed: u64,
    method: &str,
    commit_ms: f64,
    stall_ms: f64,
    lost: u64,
    effect: Option<f64>,
    bins: &[(f64, u32, u32, f64)],
) -> UpdateRecord {
    UpdateRecord {
        kind: "add".into(),
        method: method.into(),
        k: 1,
        installed,
        commit_ms,
        marker: effect.is_some(),
        time_to_effect_ms: effect,
        stall_ms: Some(stall_ms),
        lost,
        series: Some(serde_json::to_string(bins).unwrap()),
        ..Default::default()
    }
}

/// A flow trial with `params` and no headline: its updates are what the tests plant.
fn flow_trial(run: i64, key: String, rep: u32, params: serde_json::Value) -> TrialRecord {
    trial(run, key, rep, "flow", params, Headline::default())
}

fn planted(s: &mut Store) -> i64 {
    let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
    let w = |rx0: u32, rx1: u32, owd: f64| {
        [
            (-1.0, 10, 0, 100.0),
            (0.0, rx0, 2, owd),
            (1.0, rx1, 0, 300.0),
        ]
    };
    // Three repetitions, one update each (a trial's repeated updates are overlaid in
    // a figure of their own); the first also has one that failed.
    // Each window's highest one-way delay as the agent stores it beside the bins.
    let delayed = |mut u: UpdateRecord, us: u64| {
        u.owd_max_us = us;
        u
    };
    for (rep, u) in [
        delayed(
            update(20000, "batch", 30.0, 0.0, 1, Some(20.0), &w(0, 10, 0.0)),
            300,
        ),
        delayed(
            update(20000, "batch", 40.0, 5.0, 2, Some(25.0), &w(4, 20, 600.0)),
            650,
        ),
        delayed(
            update(20000, "batch", 33.0, 2.0, 3, Some(19.0), &w(2, 30, 900.0)),
            950,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let key = format!("nft-20000-{rep}");
        let mut nft = flow_trial(run, key, rep as u32 + 1, json!({"engine": "nft"}));
        nft.updates = vec![u];
        if rep == 0 {
            nft.updates.push(UpdateRecord {
                index: 1,
                kind: "add".into(),
                method: "batch".into(),
                k: 1,
                installed: 20000,
                error: Some("the traffic phase ended first".into()),
                ..Default::default()
            });
        }
        s.insert_trial(&nft).unwrap();
    }
    let mut ipt = flow_trial(run, "ipt-0".into(), 1, json!({"engine": "iptables-legacy"}));
    ipt.updates = vec![update(
        0,
        "per-rule",
        2.5,
        0.0,
        0,
        Some(1.3),
        &[(0.0, 7, 0, 50.0)],
    )];
    s.insert_trial(&ipt).unwrap();
    finish(s, run)
}

/// One of the findings is `s` exactly.
/// The "Gateway updates" table.
fn updates_table(a: &report::figure::Analysis) -> &report::figure::Table {
    a.tables
        .iter()
        .find(|t| t.title.starts_with("Gateway updates"))
        .expect("updates table")
}

/// Each row's update and its loss cell, of the "Gateway updates" table.
fn lost_cells(a: &report::figure::Analysis) -> Vec<(&str, &str)> {
    updates_table(a)
        .rows
        .iter()
        .map(|r| (r[2].as_str(), r[8].as_str()))
        .collect()
}

/// The row of the "Gateway updates" table for `installed` rules.
fn updates_row(a: &report::figure::Analysis, installed: &str) -> Vec<String> {
    let t = updates_table(a);
    t.rows
        .iter()
        .find(|r| r[3] == installed)
        .unwrap_or_else(|| panic!("no row at {installed} rules: {:?}", t.rows))
        .clone()
}

fn said(a: &report::figure::Analysis, s: &str) {
    assert!(
        a.findings.iter().any(|f| f == s),
        "{s}\nnot in {:#?}",
        a.findings
    )
}

#[test]
fn stored_updates_read_as_findings_figures_and_table() {
    let r = report_of(planted);
    let a = &r.runs[0].analysis;
    let said = |s: &str| said(a, s);
    said(
        "adding 1 rule to 0 with iptables-legacy by per-rule took 2.5 ms (median of 1); \
         forwarding stalled 0 ms; 0 packets lost; the rule took effect after 1.3 ms.",
    );
    said(
        "adding 1 rule to 20000 with nft by batch took 33 ms (median of 3); forwarding \
         stalled 5 ms at most; 6 packets lost; the background's one-way delay in the \
         update's window reached 0.95 ms; the rule took effect after 20 ms.",
    );
    said(
        "1 of 5 gateway updates failed or did not run (first: add by batch with nft: the \
         traffic phase ended first).",
    );

    // Figures: a pair per installed size, side by side, centred on the commit.
    let fig = |id: &str| {
        a.figures
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("no {id}"))
    };
    let rx = fig("updates-add-1-20000-received");
    let owd = fig("updates-add-1-20000-delay");
    assert_eq!(rx.group, owd.group);
    assert_eq!(rx.series.len(), 1);
    assert_eq!(rx.series[0].name, "nft by batch");
    let p: Vec<(f64, f64)> = rx.series[0].points.iter().map(|p| (p.x, p.y)).collect();
    // The mean over the three updates, bin by bin.
    assert_eq!(p, vec![(-1.0, 10.0), (0.0, 2.0), (1.0, 20.0)]);
    // Delay in ms; the bin where one update received nothing averages the other two.
    let d: Vec<(f64, f64)> = owd.series[0]
        .points
        .iter()
        .map(|p| (p.x, (p.y * 1e6).round() / 1e6))
        .collect();
    assert_eq!(d, vec![(-1.0, 0.1), (0.0, 0.75), (1.0, 0.3)]);
    // The commit shaded to its median end, the median time to effect marked.
    let spans: Vec<(f64, f64, &str)> = rx
        .spans
        .iter()
        .map(|s| (s.from, s.to, s.text.as_str()))
        .collect();
    assert_eq!(spans, vec![(0.0, 33.0, "commit 33 ms (median)")]);
    let marks: Vec<(f64, &str)> = rx.markers.iter().map(|m| (m.x, m.text.as_str())).collect();
    assert_eq!(marks, vec![(20.0, "effect 20 ms")]);
    assert!(a.figures.iter().any(|f| f.id == "updates-add-1-0-delay"));

    // The table: commit latency and stall vs installed size.
    let t = updates_table(a);
    assert_eq!(
        t.rows,
        [
            [
                "iptables-legacy",
                "per-rule",
                "add 1",
                "0",
                "1",
                "2.5",
                "2.5",
                "0",
                "0",
                "1.3",
                "–",
                "–"
            ],
            ["nft", "batch", "add 1", "20000", "3", "33", "40", "5", "6", "20", "–", "0.95"],
        ]
        .iter()
        .map(|r| r.map(String::from).to_vec())
        .collect::<Vec<_>>()
    );

    // Every output carries them: the sentences in the text, the figures in the page.
    assert!(r
        .text()
        .contains("adding 1 rule to 20000 with nft by batch took 33 ms"));
    let html = r.html();
    assert!(html.contains("Background received per 1-ms bin around adding 1 rule to 20000"));
    assert!(html.contains(">commit 33 ms (median)</text>"));
    assert!(r
        .markdown()
        .contains("Gateway updates: commit latency and stall vs installed size"));
}

/// The rules-under-load run at 20 000 rules: every update's window held no background
/// packet (the sender was seconds behind), one more update ran on a gateway that lost
/// 95 % before it. Stored as a real trial stores them (no stall, doubts as JSON), the
/// report never states "stalled 0 ms; 0 packets lost" for them.
#[test]
fn updates_whose_figures_do_not_hold_are_never_findings() {
    let doubt = |kind: &str, why: &str| Some(format!(r#"[{{"kind":"{kind}","why":"{why}"}}]"#));
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
        let mut t = flow_trial(run, "nft-50000".into(), 1, json!({"engine": "nft"}));
        let empty = UpdateRecord {
            stall_ms: None,
            doubts: doubt(
                "empty_window",
                "no background packets in the update's window",
            ),
            ..update(50000, "batch", 400.0, 0.0, 0, None, &[])
        };
        t.updates = vec![empty.clone(), UpdateRecord { index: 1, ..empty }];
        s.insert_trial(&t).unwrap();
        let mut o = flow_trial(run, "nft-20000".into(), 1, json!({"engine": "nft"}));
        let overloaded = UpdateRecord {
            doubts: doubt(
                "overloaded",
                "the gateway lost 95.0 % of the background before",
            ),
            ..update(20000, "batch", 30.0, 254.0, 8006, Some(-50.0), &[])
        };
        let fine = UpdateRecord {
            index: 1,
            lost_beyond_baseline: Some(4),
            ..update(20000, "batch", 32.0, 3.0, 9, Some(12.0), &[])
        };
        o.updates = vec![overloaded, fine];
        s.insert_trial(&o).unwrap();
        finish(s, run)
    });
    let a = &r.runs[0].analysis;
    said(
        a,
        "adding 1 rule to 50000 with nft by batch took 400 ms (median of 2); no stall or loss \
         figure (empty window: no background packets in the update's window).",
    );
    // Only the update that holds makes the figure: its stall, the loss beyond the
    // window before it, its time to effect.
    said(
        a,
        "adding 1 rule to 20000 with nft by batch took 31 ms (median of 2); forwarding \
         stalled 3 ms; 4 packets lost (1 of 2 updates left out: overloaded: the gateway \
         lost 95.0 % of the background before); the rule took effect after 12 ms.",
    );
    assert!(
        !a.findings
            .iter()
            .any(|f| f.contains("stalled 0 ms") || f.contains("254")),
        "{:#?}",
        a.findings
    );
    let row = updates_row(a, "50000");
    assert_eq!(row[7], "– (flagged)");
    assert_eq!(row[8], "–");
}

/// A flow from one client address has no background: its update's time to effect
/// holds, and it has no stall or loss figure — stored as none (`stall_ms` NULL), or,
/// before fwbench said so, as a stall of 0 without a series. Neither reads "stalled 0
/// ms", and neither drops the time to effect (the report once required a stall for
/// any figure of an update to hold).
#[test]
fn an_update_without_background_keeps_its_time_to_effect_and_states_no_stall() {
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
        for (rep, stall) in [(1, None), (2, Some(0.0))] {
            let mut t = flow_trial(run, format!("nft-{rep}"), rep, json!({"engine": "nft"}));
            t.updates = vec![UpdateRecord {
                stall_ms: stall,
                series: None,
                ..update(1000, "batch", 3.0, 0.0, 0, Some(2.5 * rep as f64), &[])
            }];
            s.insert_trial(&t).unwrap();
        }
        finish(s, run)
    });
    let a = &r.runs[0].analysis;
    said(
        a,
        "adding 1 rule to 1000 with nft by batch took 3 ms (median of 2); no background \
         traffic to disturb: no stall or loss figure; the rule took effect after 3.75 ms.",
    );
    assert!(
        !a.findings.iter().any(|f| f.contains("stalled")),
        "{:#?}",
        a.findings
    );
    let row = updates_row(a, "1000");
    assert_eq!(
        (row[7].as_str(), row[8].as_str()),
        ("– (no background)", "–")
    );
    assert_eq!(row[9], "3.75");
}

/// An `--event-rate` trial: its updates, each at one more rule installed, are one
/// figure in the page (not two per installed size), one thin line per update under
/// their bold median, the commit shaded.
#[test]
fn a_trials_repeated_updates_are_one_figure_in_the_page() {
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
        let mut t = flow_trial(run, "nft-rate".into(), 1, json!({"engine": "nft"}));
        t.updates = (0..5)
            .map(|i| UpdateRecord {
                index: i,
                ..update(
                    20000 + u64::from(i),
                    "batch",
                    10.0 + f64::from(i),
                    0.0,
                    0,
                    Some(4.0),
                    &[(-1.0, 10, 0, 100.0), (0.0, 8 + i, 0, 150.0)],
                )
            })
            .collect();
        s.insert_trial(&t).unwrap();
        finish(s, run)
    });
    let run = &r.runs[0];
    let ids: Vec<&str> = run
        .analysis
        .figures
        .iter()
        .map(|f| f.id.as_str())
        .filter(|id| id.starts_with("updates-"))
        .collect();
    let id = format!("updates-trial-{}-add-1", run.trials[0].id);
    assert_eq!(ids, [id.as_str()]);
    let f = &run.analysis.figures[0];
    assert_eq!(f.series.len(), 6);
    assert_eq!(f.series[5].name, "median of 5 updates");
    let p: Vec<(f64, f64)> = f.series[5].points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(p, [(-1.0, 10.0), (0.0, 10.0)]);
    let html = r.html();
    let fig = figure_in_page(&html, &id);
    assert_eq!(fig.matches(r#"stroke-width="0.75" points="#).count(), 5);
    assert_eq!(fig.matches(r#"stroke-width="2.5" points="#).count(), 1);
    assert_eq!(fig.matches(r#"<rect class="span""#).count(), 1);
    assert!(fig.contains(">commit 12 ms (median)</text>"));
    assert!(fig.contains(">effect 4 ms (median)</text>"));
    assert_eq!(html.matches("<figure id=\"updates-").count(), 1);
}

#[test]
fn a_run_without_updates_has_no_update_views() {
    let (_dir, mut s, run) = scratch_run("plain");
    let t = flow_trial(run, "k".into(), 1, json!({"engine": "nft"}));
    s.insert_trial(&t).unwrap();
    finish(&mut s, run);
    let r = load(&s, Some(run)).unwrap();
    let a = &r.runs[0].analysis;
    assert!(!a
        .findings
        .iter()
        .any(|f| f.contains("gateway updates") || f.contains(" took ")));
    assert!(!a.figures.iter().any(|f| f.id.starts_with("updates-")));
    assert!(!a
        .tables
        .iter()
        .any(|t| t.title.starts_with("Gateway updates")));
}

/// Run `old` of the store against run `new`, at a 5 % threshold.
fn compared(s: &Store, old: i64, new: i64) -> report::compare::Comparison {
    use report::compare::{Comparison, Input};
    let (a, b) = (load(s, Some(old)).unwrap(), load(s, Some(new)).unwrap());
    fn input<'a>(name: &str, r: &'a report::Report) -> Input<'a> {
        Input {
            name: name.into(),
            file: "cmp.db".into(),
            runs: vec![&r.runs[0]],
        }
    }
    Comparison::new(&[input("old", &a), input("new", &b)], 5.0)
}

/// Three repetitions of adding 1 rule to 20000 with nft by batch, each one update.
fn repeated(s: &mut Store, commits: [f64; 3], stalls: [f64; 3]) -> i64 {
    let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
    for rep in 0..3 {
        let mut t = flow_trial(
            run,
            format!("nft-20000-{rep}"),
            rep as u32 + 1,
            json!({"engine": "nft", "event": "add:1@1s", "event_method": "batch", "rules": 20000}),
        );
        t.updates = vec![update(
            20000,
            "batch",
            commits[rep],
            stalls[rep],
            0,
            Some(1.0),
            &[],
        )];
        s.insert_trial(&t).unwrap();
    }
    finish(s, run)
}

#[test]
fn compare_covers_commit_and_stall_per_engine_method_kind_and_size() {
    let (_dir, mut s) = scratch("cmp.db");
    let old = repeated(&mut s, [30.0, 31.0, 32.0], [0.0, 1.0, 0.0]);
    let new = repeated(&mut s, [60.0, 61.0, 62.0], [0.0, 1.0, 0.0]);
    let c = compared(&s, old, new);
    let p = &c.pairs[0];
    assert_eq!(p.matched.len(), 1, "{:?}", p.only_old);
    let ch = |m: &str| {
        p.matched[0]
            .changes
            .iter()
            .find(|c| c.metric == m)
            .unwrap_or_else(|| panic!("no {m} in {:?}", p.matched[0].changes))
    };
    let commit = ch("update.add:1@20000.batch.commit_ms");
    assert_eq!((commit.old.mean, commit.new.mean), (31.0, 61.0));
    assert_eq!(commit.verdict, "worse");
    assert!(commit.fails);
    let stall = ch("update.add:1@20000.batch.stall_ms");
    assert_eq!(stall.verdict, "same");
    assert_eq!(p.failing, 1);
}

/// Three repetitions of a replayed trace of three updates, commits `scale` × 1, 2 and
/// 10 ms, plus 0.1 ms a repetition (kinds and sizes vary within a trace).
fn traced(s: &mut Store, scale: f64) -> i64 {
    let run = s.begin_run(&new_run("churn", None)).unwrap();
    for rep in 0..3 {
        let mut t = flow_trial(
            run,
            format!("nft-trace-{rep}"),
            rep as u32 + 1,
            json!({"engine": "nft", "event_trace": {"operations": 3}, "rules": 1000}),
        );
        t.updates = [(1000, 1.0), (1001, 2.0), (1001, 10.0)]
            .into_iter()
            .enumerate()
            .map(|(i, (installed, c))| UpdateRecord {
                event: i as u32,
                ..update(
                    installed,
                    "batch",
                    c * scale + rep as f64 * 0.1,
                    0.0,
                    0,
                    None,
                    &[],
                )
            })
            .collect();
        s.insert_trial(&t).unwrap();
    }
    finish(s, run)
}

/// A trace's figure for `compare`: each trial's p50 and p99 of all its commits
/// (nearest rank: of three, the middle and the largest), lower is better.
#[test]
fn compare_covers_a_traces_commit_spread() {
    let (_dir, mut s) = scratch("trace.db");
    let old = traced(&mut s, 1.0);
    let new = traced(&mut s, 2.0);
    let c = compared(&s, old, new);
    let m = &c.pairs[0].matched[0];
    let ch = |name: &str| {
        m.changes
            .iter()
            .find(|c| c.metric == name)
            .unwrap_or_else(|| panic!("no {name} in {:?}", m.changes))
    };
    let p99 = ch("updates.p99.commit_ms");
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(
        near(p99.old.mean, 10.1) && near(p99.new.mean, 20.1),
        "{p99:?}"
    );
    assert_eq!(p99.verdict, "worse");
    assert!(near(ch("updates.p50.commit_ms").old.mean, 2.1));
}

/// Echo, ping and sessions trials of one run, each with an update whose background
/// was its own workload's, beside a flow's with the same update.
fn planted_request_response(s: &mut Store) -> i64 {
    let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
    let bins = [(-1.0, 9, 0, 40.0), (0.0, 5, 1, 2500.0), (1.0, 9, 0, 45.0)];
    for (workload, stall, lost, effect) in [
        ("echo", 2.5, 1, 3.25),
        ("ping", 0.75, 0, 2.5),
        ("sessions", 1.5, 2, 4.0),
        ("flow", 0.0, 0, 2.0),
    ] {
        let mut t = trial(
            run,
            format!("{workload}-nft"),
            1,
            workload,
            json!({"engine": "nft"}),
            Headline::default(),
        );
        t.updates = vec![update(100, "batch", 2.0, stall, lost, Some(effect), &bins)];
        s.insert_trial(&t).unwrap();
    }
    finish(s, run)
}

#[test]
fn request_response_updates_read_in_their_own_words_and_never_mix_with_flows() {
    let r = report_of(planted_request_response);
    let a = &r.runs[0].analysis;
    let said = |s: &str| said(a, s);
    said(
        "adding 1 rule to 100 with nft by batch during echo took 2 ms (median of 1); the \
         longest background round trip was 2.5 ms; 1 echoes lost or unsent; the rule took \
         effect after 3.25 ms.",
    );
    said(
        "adding 1 rule to 100 with nft by batch during ping took 2 ms (median of 1); the \
         longest background round trip was 0.75 ms; 0 probes lost; the rule took effect \
         after 2.5 ms.",
    );
    said(
        "adding 1 rule to 100 with nft by batch during sessions took 2 ms (median of 1); the \
         longest background connection setup was 1.5 ms; 2 sessions failed; the rule took \
         effect after 4 ms.",
    );
    said(
        "adding 1 rule to 100 with nft by batch took 2 ms (median of 1); forwarding stalled \
         0 ms; 0 packets lost; the rule took effect after 2 ms.",
    );
    // A pair of figures per unit, each with its own delay; the flow's ids as before.
    for (id, title) in [
        (
            "updates-echo-add-1-100-delay",
            "Background round trip per 1-ms bin around adding 1 rule to 100",
        ),
        (
            "updates-ping-add-1-100-received",
            "Background probes answered per 1-ms bin around adding 1 rule to 100",
        ),
        (
            "updates-sessions-add-1-100-delay",
            "Background connection setup per 1-ms bin around adding 1 rule to 100",
        ),
        (
            "updates-add-1-100-delay",
            "Background one-way delay per 1-ms bin around adding 1 rule to 100",
        ),
    ] {
        let f = a
            .figures
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("no {id}"));
        assert_eq!(f.title, title);
        assert_eq!(f.series.len(), 1, "{id}: one engine and method, not mixed");
    }
    let d = a
        .figures
        .iter()
        .find(|f| f.id == "updates-echo-add-1-100-delay")
        .unwrap();
    let p: Vec<(f64, f64)> = d.series[0].points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(p, vec![(-1.0, 0.04), (0.0, 2.5), (1.0, 0.045)]);
    let t = updates_table(a);
    let updates: Vec<&str> = t.rows.iter().map(|r| r[2].as_str()).collect();
    assert_eq!(
        updates,
        [
            "add 1",
            "add 1 during echo",
            "add 1 during ping",
            "add 1 during sessions"
        ]
    );
}

/// A label with ESC and NUL, as a file from before labels were checked may hold: no
/// output passes them on raw (issue 38: a scenario file could send escape sequences to
/// the user's terminal).
#[test]
fn stored_control_characters_never_reach_an_output_raw() {
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("hostile", None)).unwrap();
        for rep in 1..=2 {
            let t = flow_trial(
                run,
                format!("k{rep}"),
                rep,
                json!({"engine": "nft", "label": "red\u{1b}[31m\u{0}case"}),
            );
            s.insert_trial(&t).unwrap();
        }
        finish(s, run)
    });
    for (what, out) in [
        ("text", r.text()),
        ("markdown", r.markdown()),
        ("html", r.html()),
        ("csv", r.csv_trials()),
    ] {
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{0}'),
            "{what}: raw control character"
        );
        // Where the label is shown, it is shown escaped.
        if out.contains("case") {
            assert!(out.contains("red\\u{1b}[31m\\u{0}case"), "{what}: {out}");
        }
    }
    assert!(r.markdown().contains("case") || r.csv_trials().contains("case"));
}

/// Issue 39: reloads stored as a real trial stores them (violations and their window
/// per row, schema 10) read as one finding per engine and method — how many
/// must-drop packets passed, in how many reloads, the widest window — and as the
/// table's column; an atomic reload that let none through says so, never as a loss.
#[test]
fn reloads_read_as_the_must_drop_packets_that_passed() {
    let r = report_of(|s: &mut Store| {
        let run = s.begin_run(&new_run("enforcement", None)).unwrap();
        for (method, passed) in [("flush-load", [40u64, 0, 17]), ("batch", [0, 0, 0])] {
            let mut t = flow_trial(run, format!("nft-{method}"), 1, json!({"engine": "nft"}));
            t.updates = passed
                .iter()
                .enumerate()
                .map(|(i, &n)| UpdateRecord {
                    index: i as u32,
                    // One a second: their windows apart.
                    start_unix_ns: 1_000_000_000 * (i as u64 + 1),
                    kind: "reload".into(),
                    violations: Some(n),
                    violation_window_ms: (n > 0).then_some(n as f64 / 10.0),
                    violation_from_ms: (n > 0).then_some(i as f64),
                    ..update(102, method, 3.0, 0.0, 0, None, &[(0.0, 10, 0, 50.0)])
                })
                .collect();
            s.insert_trial(&t).unwrap();
        }
        // A reload flagged (its commit outlived the traffic): its violations are not
        // summed in, they are counted as left out.
        let mut t = flow_trial(run, "nft-late".into(), 1, json!({"engine": "nft"}));
        t.updates = vec![UpdateRecord {
            kind: "reload".into(),
            violations: Some(900),
            doubts: Some(
                r#"[{"kind":"unobserved","why":"the commit ended 90 ms after the traffic"}]"#
                    .into(),
            ),
            ..update(102, "per-rule", 3.0, 0.0, 0, None, &[(0.0, 10, 0, 50.0)])
        }];
        s.insert_trial(&t).unwrap();
        // An add behind the established-accept rule: the marker never changed fate.
        let mut t = flow_trial(run, "nft-behind".into(), 1, json!({"engine": "nft"}));
        t.updates = vec![UpdateRecord {
            marker: true,
            place: Some("after-established".into()),
            ..update(102, "batch", 2.0, 0.0, 0, None, &[(0.0, 10, 0, 50.0)])
        }];
        s.insert_trial(&t).unwrap();
        finish(s, run)
    });
    let a = &r.runs[0].analysis;
    said(
        a,
        "adding 1 rule to 102 with nft by batch took 2 ms (median of 1); forwarding stalled \
         0 ms; 0 packets lost; the rule never reached the marker's established flow: it sits \
         behind the rule accepting established flows, so an existing connection keeps \
         passing until its conntrack entry goes.",
    );
    said(
        a,
        "reloading 102 rules with nft by flush-load took 3 ms (median of 3); forwarding \
         stalled 0 ms at most; 0 packets lost; 57 must-drop packets passed (2 of 3 reloads, the \
         widest window 4 ms).",
    );
    said(
        a,
        "reloading 102 rules with nft by batch took 3 ms (median of 3); forwarding \
         stalled 0 ms at most; 0 packets lost; no must-drop packet passed (3 reloads).",
    );
    let t = updates_table(a);
    let col: Vec<&str> = t.rows.iter().map(|r| r[10].as_str()).collect();
    assert_eq!(col, ["–", "0", "57", "– (flagged)"], "{:?}", t.rows);
    // The timeline: each trial's reloads overlaid, where must-drop packets passed
    // shaded — from the median start of the leaky reloads' windows (0 and 2 ms: 1 ms)
    // for their median length (4 and 1.7 ms: 2.85 ms); the atomic ones shade nothing.
    let spans = |method: &str| -> Vec<report::figure::Span> {
        a.figures
            .iter()
            .filter(|f| f.id.starts_with("updates-trial-"))
            .find(|f| {
                f.notes
                    .iter()
                    .any(|n| n.starts_with(&format!("nft by {method}:")))
            })
            .map(|f| f.spans.clone())
            .unwrap_or_else(|| panic!("no figure of nft by {method}"))
    };
    let all = spans("flush-load");
    let leak: Vec<&report::figure::Span> = all
        .iter()
        .filter(|s| s.text.starts_with("must-drop passed"))
        .collect();
    assert_eq!(leak.len(), 1, "{leak:?}");
    assert_eq!(leak[0].text, "must-drop passed: 57 in 2 of 3 reloads");
    assert!((leak[0].from - 1.0).abs() < 1e-9, "{leak:?}");
    assert!((leak[0].to - (1.0 + 2.85)).abs() < 1e-9, "{leak:?}");
    assert!(
        spans("batch")
            .iter()
            .all(|s| !s.text.starts_with("must-drop")),
        "an atomic reload lets none through"
    );
    // Per trial, for compare: the sum, fewer is better.
    let m = &r.runs[0].configs;
    let v: Vec<f64> = m
        .iter()
        .filter_map(|c| c.values.get("update.reload:1@102.flush-load.violations"))
        .flatten()
        .copied()
        .collect();
    assert_eq!(v, [57.0]);
    assert_eq!(
        report::compare::better("update.reload:1@102.flush-load.violations"),
        Some(report::compare::Better::Lower)
    );
}

/// Issue 39: envelope searches stored as a run stores them read as one line per
/// engine and update over the installed sizes, and as each configuration's metric
/// `envelope.update_rate`, which `compare` calls better higher.
#[test]
fn envelope_searches_read_as_a_figure_over_sizes_and_a_metric() {
    let r = report_of(|s: &mut Store| {
        let run = s.begin_run(&new_run("envelope", None)).unwrap();
        for (rep, installed, rate) in [(1, 1000, 11.0), (2, 1000, 13.0), (1, 20000, 2.0)] {
            let params = json!({"engine": "nft", "rules": installed});
            let key = format!("nft-{installed}-{rep}");
            let mut t = trial(run, key, rep, "envelope", params, Headline::default());
            t.results = json!({"search": {
                "search": "envelope", "converged": true, "rate": rate,
                "fail_rate": rate * 1.2, "update": "add:1 (batch)", "installed": installed,
            }});
            s.insert_trial(&t).unwrap();
        }
        finish(s, run)
    });
    let a = &r.runs[0].analysis;
    let f = a
        .figures
        .iter()
        .find(|f| f.id == "envelope-vs-installed")
        .expect("the envelope figure");
    let xy: Vec<(f64, f64)> = f.series[0].points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(xy, [(1000.0, 12.0), (20000.0, 2.0)]);
    assert_eq!(f.series[0].name, "nft add:1 (batch)");
    let mut v: Vec<f64> = r.runs[0]
        .configs
        .iter()
        .filter_map(|c| c.values.get(report::envelope::METRIC))
        .flatten()
        .copied()
        .collect();
    v.sort_by(f64::total_cmp);
    assert_eq!(v, [2.0, 11.0, 13.0]);
    assert_eq!(
        report::compare::better(report::envelope::METRIC),
        Some(report::compare::Better::Higher)
    );
}

/// nft-set's rule adds beside sets of 1 000 and 20 000 elements, the gateway's two
/// rules either way: rules-under-load stated one "adding 1 rule to 2 with nft-set by
/// batch took 10.52 ms (median of 3)" over three set sizes whose adds took 7.6, 10.9
/// and 10.5 ms. Kept apart, each said with its set, in the findings and the table.
#[test]
fn rule_updates_beside_sets_of_other_sizes_are_not_pooled() {
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
        for (elements, commit) in [(1000u64, 7.6), (20000, 10.9)] {
            let params = json!({"engine": "nft-set", "rules": elements});
            let mut t = flow_trial(run, format!("set-{elements}"), 1, params);
            t.firewall = Some(store::FirewallRow {
                engine: "nft-set".into(),
                rules_installed: 2,
                set_elements: elements,
                ..Default::default()
            });
            let bins = [(0.0, 7, 0, 50.0)];
            t.updates = vec![update(2, "batch", commit, 0.0, 0, Some(3.0), &bins)];
            s.insert_trial(&t).unwrap();
        }
        finish(s, run)
    });
    let a = &r.runs[0].analysis;
    for (elements, commit) in [("1000", "7.6"), ("20000", "10.9")] {
        let head = format!(
            "adding 1 rule to 2 (beside a set of {elements} elements) with nft-set by batch \
             took {commit} ms (median of 1)"
        );
        assert!(
            a.findings.iter().any(|f| f.starts_with(&head)),
            "{head}\n{:#?}",
            a.findings
        );
        let row = updates_row(a, &format!("2 (beside a set of {elements} elements)"));
        assert_eq!(row[4], "1", "{row:?}");
    }
}

/// A trial flagged for what is not its updates' own — fwbench's paced sender ran late,
/// "the updates' stall and loss may be the sender's" — states none of its updates'
/// stall, loss or time to effect (findings, table, figure: it once shaded "stall 254
/// ms"), and says why. A trial flagged only by its updates' own doubts (one of two
/// overloaded, counted into the trial's reason) keeps the update that holds.
#[test]
fn updates_of_a_trial_flagged_for_more_than_its_updates_state_no_figure() {
    let late = "the paced sender ran 80 ms behind its schedule: the updates' stall and loss \
                may be the sender's";
    let over = "the gateway lost 95.0 % of the background before the update";
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
        let mut t = flow_trial(run, "nft-late".into(), 1, json!({"engine": "nft"}));
        t.status = "flagged".into();
        t.error = Some(format!("limited by fwbench: {late}"));
        t.results = json!({
            "status": "flagged",
            "doubts": [{"kind": "limited_by_fwbench", "why": late}],
        });
        let dark: Vec<(f64, u32, u32, f64)> = (0..300)
            .map(|ms| (f64::from(ms), u32::from(ms >= 254), 20, 50.0))
            .collect();
        t.updates = vec![update(20000, "batch", 30.0, 254.0, 8006, Some(12.0), &dark)];
        s.insert_trial(&t).unwrap();
        let mut o = flow_trial(run, "nft-over".into(), 1, json!({"engine": "nft"}));
        o.status = "flagged".into();
        o.error = Some(format!("overloaded: 1 of 2 updates, e.g. {over}"));
        o.results = json!({
            "status": "flagged",
            "doubts": [{"kind": "overloaded", "why": format!("1 of 2 updates, e.g. {over}")}],
        });
        o.updates = vec![
            UpdateRecord {
                doubts: Some(format!(r#"[{{"kind":"overloaded","why":"{over}"}}]"#)),
                ..update(1000, "batch", 30.0, 254.0, 8006, Some(-50.0), &[])
            },
            UpdateRecord {
                index: 1,
                lost_beyond_baseline: Some(4),
                ..update(1000, "batch", 32.0, 3.0, 9, Some(12.0), &[])
            },
        ];
        s.insert_trial(&o).unwrap();
        finish(s, run)
    });
    let a = &r.runs[0].analysis;
    said(
        a,
        &format!(
            "adding 1 rule to 20000 with nft by batch took 30 ms (median of 1); no stall or \
             loss figure (1 update of flagged trials left out: limited by fwbench: {late})."
        ),
    );
    said(
        a,
        &format!(
            "adding 1 rule to 1000 with nft by batch took 31 ms (median of 2); forwarding \
             stalled 3 ms; 4 packets lost (1 of 2 updates left out: overloaded: {over}); the \
             rule took effect after 12 ms."
        ),
    );
    assert!(
        !a.findings
            .iter()
            .any(|f| f.contains("254") || f.contains("8006")),
        "{:#?}",
        a.findings
    );
    let row = updates_row(a, "20000");
    assert_eq!(
        (&row[7][..], &row[8][..], &row[9][..]),
        ("– (flagged)", "–", "–")
    );
    let f = a
        .figures
        .iter()
        .find(|f| f.id == "updates-add-1-20000-received")
        .expect("the figure of the flagged trial's update");
    assert!(f.series.iter().all(|s| s.points.is_empty()), "{f:?}");
    assert!(
        !f.spans.iter().any(|s| s.text.starts_with("stall")),
        "{f:?}"
    );
    assert!(
        f.notes[0].contains("(their trials flagged: limited by fwbench: the paced sender"),
        "{:?}",
        f.notes
    );
}

/// `event_load`: a background at half the gateway's capacity and one at the rate given
/// are two sentences and two rows, each naming its load.
#[test]
fn updates_beside_another_load_are_not_pooled() {
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
        for (rep, load) in [(1u32, None), (2, Some(searched(0.5, 41000.0, search())))] {
            let mut events = json!({"kind": "add", "k": 1, "at_s": 1.0, "method": "batch"});
            if let Some(l) = load {
                events["load"] = l;
            }
            let params = json!({"engine": "nft", "packet": {"events": events}});
            let mut t = flow_trial(run, format!("nft-{rep}"), 1, params);
            t.updates = vec![update(
                20000,
                "batch",
                10.0 * f64::from(rep),
                1.0,
                2,
                Some(5.0),
                &[(0.0, 10, 2, 50.0)],
            )];
            s.insert_trial(&t).unwrap();
        }
        finish(s, run)
    });
    let a = &r.runs[0].analysis;
    said(
        a,
        "adding 1 rule to 20000 (the background at the rate given) with nft by batch took 10 \
         ms (median of 1); forwarding stalled 1 ms; 2 packets lost; the rule took effect \
         after 5 ms.",
    );
    said(
        a,
        "adding 1 rule to 20000 (the background at 50 % of 41000 pps (its capacity, found by \
         search)) with nft by batch took 20 ms (median of 1); forwarding stalled 1 ms; 2 \
         packets lost; the rule took effect after 5 ms.",
    );
    let t = updates_table(a);
    let cells: Vec<&str> = t.rows.iter().map(|r| r[2].as_str()).collect();
    assert_eq!(
        cells,
        [
            "add 1 (the background at the rate given)",
            "add 1 (the background at 50 % of 41000 pps (its capacity, found by search))"
        ]
    );
}

/// `params.packet.events.load` as fwbench stores it once the trial ran: the share of
/// `pps`, found by `search` (`search()`: settled, by the gateway).
fn searched(fraction: f64, pps: f64, search: serde_json::Value) -> serde_json::Value {
    json!({
        "fraction": fraction,
        "capacity": {"pps": pps, "background_pps": fraction * pps, "search": search}
    })
}

/// A capacity search as stored: settled, the gateway's.
fn search() -> serde_json::Value {
    json!({
        "loss": 0.0, "step_s": 1.0, "trials": 7, "converged": true,
        "fail_pps": 45000.0, "limited_by_sender": false
    })
}

/// One flow trial per load, each with one add at 20 000 rules (commit `ms`), stored
/// with its parameters as fwbench stores them.
fn loaded(s: &mut Store, loads: &[(f64, Option<serde_json::Value>)]) -> i64 {
    let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
    for (i, (ms, load)) in loads.iter().enumerate() {
        let mut events = json!({"kind": "add", "k": 1, "at_s": 1.0, "method": "batch"});
        if let Some(l) = load {
            events["load"] = l.clone();
        }
        let params = json!({"engine": "nft", "packet": {"events": events}});
        let mut t = flow_trial(run, format!("nft-{i}"), 1, params);
        t.updates = vec![update(
            20000,
            "batch",
            *ms,
            1.0,
            2,
            None,
            &[(0.0, 10, 2, 50.0)],
        )];
        s.insert_trial(&t).unwrap();
    }
    finish(s, run)
}

/// `event_load` (issue 37): the label says the capacity's figure and how sound it is —
/// found by a search that settled, the sender's limit (a lower bound of the gateway's),
/// a search that did not settle or carries doubts, a stated rate — and a load that does
/// not read says so, never "of its capacity". Updates of different labels are never
/// pooled: two trials at one capacity are one sentence, one at another its own.
#[test]
fn a_load_reads_as_its_capacity_and_how_sound_that_is() {
    let with = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut s = search();
        f(&mut s);
        searched(0.5, 41000.0, s)
    };
    let cases: Vec<(f64, serde_json::Value, &str)> = vec![
        (
            1.0,
            searched(0.5, 41000.0, search()),
            "50 % of 41000 pps (its capacity, found by search)",
        ),
        (
            3.0,
            searched(0.5, 42000.0, search()),
            "50 % of 42000 pps (its capacity, found by search)",
        ),
        (
            4.0,
            with(&|s| s["limited_by_sender"] = json!(true)),
            "50 % of at least 41000 pps (the sender's limit, not the gateway's)",
        ),
        (
            5.0,
            with(&|s| s["converged"] = json!(false)),
            "50 % of 41000 pps (a capacity its search did not settle)",
        ),
        (
            6.0,
            with(&|s| {
                s["doubts"] = json!([
                    {"kind": "contradiction", "why": "45000 pps passed, then failed"},
                    {"kind": "from_a_later_version", "why": "…"},
                    {"kind": "contradiction", "why": "44000 pps passed, then failed"}
                ])
            }),
            "50 % of 41000 pps (its search doubted: contradicting trials, from a later version)",
        ),
        (
            12.0,
            with(&|s| {
                s["fail_by_fwbench"] =
                    json!("the lowest failing rate, 45000 pps, failed by fwbench's own sink")
            }),
            "50 % of at least 41000 pps (fwbench's limit, not the gateway's)",
        ),
        (
            7.0,
            json!({"fraction": 0.25, "of": {"pps": 40000.0},
                   "capacity": {"pps": 40000.0, "background_pps": 10000.0}}),
            "25 % of 40000 pps",
        ),
        (
            8.0,
            json!("half"),
            "an unreadable load (its share not read)",
        ),
        (
            9.0,
            json!({"fraction": 0.5, "of": "40kpps"}),
            "50 % of a stated rate not read",
        ),
        (
            10.0,
            json!({"fraction": 0.5, "capacity": "41k"}),
            "50 % of a capacity not read",
        ),
        (
            11.0,
            json!({"fraction": 0.5}),
            "50 % of a capacity found by search, its figure not stored",
        ),
    ];
    let mut loads: Vec<(f64, Option<serde_json::Value>)> = cases
        .iter()
        .map(|(ms, l, _)| (*ms, Some(l.clone())))
        .collect();
    // A second trial at the first capacity: pooled with it (median of 2).
    loads.push((2.0, Some(searched(0.5, 41000.0, search()))));
    let r = report_of(|s| loaded(s, &loads));
    let a = &r.runs[0].analysis;
    for (ms, _, label) in &cases {
        // The first is pooled with the second trial at its capacity: two trials' losses.
        let (commit, n, felt) = if *ms == 1.0 {
            (1.5, 2, "stalled 1 ms at most; 4 packets lost")
        } else {
            (*ms, 1, "stalled 1 ms; 2 packets lost")
        };
        let head = format!(
            "adding 1 rule to 20000 (the background at {label}) with nft by batch took {commit} \
             ms (median of {n}); forwarding {felt}."
        );
        assert!(
            a.findings.iter().any(|f| f.starts_with(&head)),
            "{head}\nnot in {:#?}",
            a.findings
        );
    }
    assert!(
        !a.findings.iter().any(|f| f.contains("of its capacity")),
        "{:#?}",
        a.findings
    );
    let t = updates_table(a);
    let cells: BTreeSet<&str> = t.rows.iter().map(|r| r[2].as_str()).collect();
    let labels: BTreeSet<String> = cases
        .iter()
        .map(|(_, _, l)| format!("add 1 (the background at {l})"))
        .collect();
    assert_eq!(cells, labels.iter().map(String::as_str).collect());

    // Alone in its run: a capacity found by a settled search is not named (nothing
    // differs); one that is the sender's limit always is, where the figures are read.
    let r = report_of(|s| loaded(s, &[(1.0, Some(searched(0.5, 41000.0, search())))]));
    let update = |a: &report::figure::Analysis| {
        let f = a.findings.iter().find(|f| f.starts_with("adding"));
        f.cloned().unwrap_or_default()
    };
    let f = update(&r.runs[0].analysis);
    assert!(
        f.starts_with("adding 1 rule to 20000 with nft by batch"),
        "{f}"
    );
    let r = report_of(|s| loaded(s, &[(1.0, Some(cases[2].1.clone()))]));
    let a = &r.runs[0].analysis;
    assert!(
        update(a).starts_with(
            "adding 1 rule to 20000 (the background at 50 % of at least 41000 pps (the \
             sender's limit, not the gateway's)) with nft by batch"
        ),
        "{:?}",
        a.findings
    );
    assert_eq!(
        updates_row(a, "20000")[2],
        "add 1 (the background at 50 % of at least 41000 pps (the sender's limit, not the \
         gateway's))"
    );
}

/// A flow trial of three adds repeated at `rate` updates/s (one every 1000/`rate` ms),
/// each credited with its `credited` loss beyond the baseline and counted once with its
/// `once` (absent: stored before it was counted), the first one's figures doubted
/// (overloaded) where `doubted`.
fn repeated_adds(
    s: &mut store::Store,
    run: i64,
    key: &str,
    rate: f64,
    credited: [u64; 3],
    once: Option<[u64; 3]>,
    doubted: bool,
) {
    // Bins from 50 ms before the commit's start to 250 ms after its end (2 ms).
    let window: Vec<(f64, u32, u32, f64)> =
        (-50..=252).map(|ms| (f64::from(ms), 10, 0, 50.0)).collect();
    let events = json!({"kind": "add", "k": 1, "at_s": 1.0, "method": "batch", "rate": rate});
    let params = json!({"engine": "nft", "packet": {"events": events}});
    let mut t = flow_trial(run, key.into(), 1, params);
    let gap_ms = (1000.0 / rate) as u64;
    t.updates = credited
        .iter()
        .enumerate()
        .map(|(i, &n)| UpdateRecord {
            index: i as u32,
            start_unix_ns: 1_000_000_000 + i as u64 * gap_ms * 1_000_000,
            lost_beyond_baseline: Some(n),
            lost_once: once.map(|o| o[i]),
            doubts: (doubted && i == 0).then(|| {
                r#"[{"kind":"overloaded","why":"the gateway lost 6.1 % before it"}]"#.into()
            }),
            ..update(20000 + i as u64, "batch", 2.0, 1.0, n + 3, None, &window)
        })
        .collect();
    s.insert_trial(&t).unwrap();
}

/// Above 3–4 updates/s a trial's 300-ms windows (50 ms before each commit to 250 ms
/// after it) overlap: the same lost packets are in two or more of them. Their loss is
/// then not summed — the stored rows cannot give the union's loss beyond the baseline —
/// but said per update, the largest; a trial whose windows lie apart sums as before.
#[test]
fn the_loss_of_overlapping_windows_is_not_summed() {
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
        repeated_adds(s, run, "fast", 10.0, [5, 7, 6], None, false);
        repeated_adds(s, run, "slow", 1.0, [2, 3, 4], None, false);
        finish(s, run)
    });
    let a = &r.runs[0].analysis;
    said(
        a,
        "adding 1 rule to 20000 (repeated at 10 updates/s) with nft by batch took 2 ms \
         (median of 3); forwarding stalled 1 ms at most; 7 packets lost in one update's \
         window at most (windows overlap: per-update loss, not summed).",
    );
    said(
        a,
        "adding 1 rule to 20000 (repeated at 1 updates/s) with nft by batch took 2 ms \
         (median of 3); forwarding stalled 1 ms at most; 9 packets lost.",
    );
    let lost = lost_cells(a);
    assert_eq!(
        lost,
        [
            ("add 1 (repeated at 1 updates/s)", "9"),
            (
                "add 1 (repeated at 10 updates/s)",
                "7 in one window at most (windows overlap: per-update loss, not summed)"
            )
        ]
    );
}

/// Where fwbench counted each update's loss once (`lost_once`: beyond the baseline, over
/// the background's bins no earlier update's window held), a trial's overlapping
/// windows sum, each lost packet once, said so; where an update of the trial left out
/// of the figure (its own doubts) held some of those windows first, the sum is a lower
/// bound, said "at least"; rows stored before it was counted keep the per-update
/// wording (`the_loss_of_overlapping_windows_is_not_summed`).
#[test]
fn the_loss_of_overlapping_windows_counted_once_is_summed() {
    let r = report_of(|s| {
        let run = s.begin_run(&new_run("rules-under-load", None)).unwrap();
        repeated_adds(s, run, "fast", 10.0, [5, 7, 6], Some([5, 2, 1]), false);
        repeated_adds(s, run, "faster", 20.0, [4, 9, 8], Some([4, 3, 2]), true);
        finish(s, run)
    });
    let a = &r.runs[0].analysis;
    said(
        a,
        "adding 1 rule to 20000 (repeated at 10 updates/s) with nft by batch took 2 ms \
         (median of 3); forwarding stalled 1 ms at most; 8 packets lost beyond the baseline \
         (windows overlap: each lost packet counted once, in the earliest window holding \
         it).",
    );
    said(
        a,
        "adding 1 rule to 20000 (repeated at 20 updates/s) with nft by batch took 2 ms \
         (median of 3); forwarding stalled 1 ms at most; at least 5 packets lost beyond \
         the baseline (windows overlap: each lost packet counted once, in the earliest \
         window holding it; an update of the same trial left out of this figure held some \
         of these windows first) (1 of 3 updates left out: overloaded: the gateway lost \
         6.1 % before it).",
    );
    let lost = lost_cells(a);
    assert_eq!(
        lost,
        [
            (
                "add 1 (repeated at 10 updates/s)",
                "8 (windows overlap: each lost packet counted once)"
            ),
            (
                "add 1 (repeated at 20 updates/s)",
                "at least 5 (windows overlap: each lost packet counted once; an update left \
                 out held some windows first)"
            )
        ]
    );
}
