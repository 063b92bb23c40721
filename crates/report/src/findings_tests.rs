//! Unit tests of `findings.rs` (`#[cfg(test)] mod tests`, kept beside it).

use super::*;
use crate::figure::Estimator;

fn fit_of(f: fn(f64) -> f64) -> CostFit {
    let groups: Vec<(f64, Vec<f64>)> = [0.0, 1000.0, 2000.0, 5000.0, 10000.0]
        .iter()
        .map(|r: &f64| (*r, vec![f(*r) * 0.99, f(*r) * 1.01]))
        .collect();
    let e = crate::throughput::estimate_of(Estimator::TimePerPacket, &groups).unwrap();
    CostFit {
        // Already down at the second rule count.
        degradation: Some((0.0, 1000.0)),
        ..crate::testing::cost_fit("engine=x", e)
    }
}

#[test]
fn rates_fwbench_limited_are_warned_of() {
    let trial = |by: Option<&str>| {
        Trial::new(store::TrialRow {
            trial_key: "k".into(),
            results: match by {
                Some(b) => serde_json::json!({"packet": {"limited_by": {"by": b, "why": "w"}}}),
                None => serde_json::json!({"packet": {}}),
            },
            ..crate::testing::trial_row(1, "flood")
        })
    };
    let ts = [
        trial(Some("sender")),
        trial(Some("sender")),
        trial(Some("gateway")),
        trial(None),
    ];
    let w = fwbench_limit_warnings(&ts);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("2 of 3 packet trials were limited by fwbench's sender"),
        "{w:?}"
    );
    assert!(fwbench_limit_warnings(&[trial(Some("gateway")), trial(None)]).is_empty());
    // Each says once what the user can do.
    assert!(w[0].contains("more threads (threads)"), "{w:?}");
    let sink = fwbench_limit_warnings(&[trial(Some("sink"))]);
    assert_eq!(sink.len(), 1);
    assert!(
        sink[0].contains("give the sink a CPU of its own (pin_server"),
        "{sink:?}"
    );
    // A shared CPU is the run's placement: said once, what it measures, not as a
    // warning.
    assert!(fwbench_limit_warnings(&[trial(Some("shared-cpu"))]).is_empty());
    let p = placement(&[trial(Some("shared-cpu")), trial(Some("gateway"))]).unwrap();
    assert!(
        p.starts_with(
            "Placement: in 1 of 2 packet trials the sender and the gateway's packet \
             processing shared the sender's CPU, as this run placed them"
        ),
        "{p}"
    );
    assert!(p.contains("the cost of the whole path"), "{p}");
    assert!(
        p.ends_with("pin it apart (pin_gateway, --pin-gateway)."),
        "{p}"
    );
    assert_eq!(placement(&[trial(Some("gateway"))]), None);
    // Native XDP (its program in the sender's veth's receive poll): pinning does not
    // move it, so it is not advised for those trials.
    let xdp = || {
        Trial::new(store::TrialRow {
            trial_key: "k".into(),
            results: serde_json::json!({"packet": {"limited_by": {"by": "shared-cpu",
                "why": "w", "in_driver": true}}}),
            ..crate::testing::trial_row(1, "flood")
        })
    };
    let p = placement(&[xdp(), xdp()]).unwrap();
    assert!(p.contains("which pinning does not move"), "{p}");
    assert!(!p.contains("--pin-gateway"), "{p}");
    let p = placement(&[xdp(), trial(Some("shared-cpu"))]).unwrap();
    assert!(
        p.contains("pin it apart (pin_gateway, --pin-gateway); in 1 of them, native XDP"),
        "{p}"
    );
}

/// Flood trials of one engine at `rules`, `reps` repetitions each, received packets/s
/// from `ns(rules, rep)` (time per packet in ns) — the path stored trials take.
fn floods(engine: &str, rules: &[u32], reps: u32, ns: impl Fn(f64, u32) -> f64) -> Vec<Trial> {
    let mut out = vec![];
    for &r in rules {
        for rep in 1..=reps {
            let id = out.len() as i64 + 1;
            out.push(Trial::new(store::TrialRow {
                rep,
                trial_key: format!("{engine}-{r}-{rep}"),
                params: serde_json::json!({"topology": "forward", "workload": "flood",
                    "engine": engine, "rules": r, "seed": rep}),
                headline: store::Headline {
                    received_pps: Some(1e9 / ns(r as f64, rep)),
                    ..Default::default()
                },
                kind: crate::testing::kind_row("packet", "received_pps"),
                ..crate::testing::trial_row(id, "flood")
            }));
        }
    }
    out
}

fn findings_of(ts: &[Trial]) -> (Vec<String>, Analysis) {
    let cs = crate::model::configs(ts, &BTreeMap::new());
    let a = crate::analysis::analyse(&cs, ts, &crate::figure::Options::default());
    (findings(&cs, ts, &a), a)
}

/// The finding that starts with `all: `.
fn all_finding(f: &[String]) -> &str {
    f.iter()
        .find(|l| l.starts_with("all: "))
        .unwrap_or_else(|| panic!("no finding of all: {f:?}"))
}

/// ±0.4 % around `y`, a different deviation per repetition.
fn jitter(y: f64, rep: u32) -> f64 {
    y * (1.0 + 0.004 * [-1.0, 0.5, 1.0, -0.5][(rep as usize - 1) % 4])
}

#[test]
fn a_knee_is_answered_by_segments_with_the_lines_flag_kept() {
    // 5 ns per rule up to 2000 rules, 1 ns beyond: one line misses it.
    let ts = floods("nft", &[0, 1000, 2000, 5000, 10000], 4, |r, rep| {
        jitter(2000.0 + 5.0 * r.min(2000.0) + (r - 2000.0).max(0.0), rep)
    });
    let (f, a) = findings_of(&ts);
    let s = all_finding(&f);
    assert!(
        s.contains(" ns per rule from 0 to 2000 rules, ") && s.contains("from 2000 to 10000 rules"),
        "{s}"
    );
    assert!(s.contains("the cost per rule changes at 2000 rules"), "{s}");
    assert!(s.contains("1/pps estimator"), "{s}");
    assert!(s.contains("One line does not fit (FLAGGED"), "{s}");
    // The planted slopes, within the CIs stated.
    let m = &a.segments[0].merged;
    assert_eq!(m.len(), 2, "{m:?}");
    for (g, want) in m.iter().zip([5.0, 1.0]) {
        assert!((g.cost - want).abs() <= g.ci95.unwrap(), "{g:?} vs {want}");
    }
}

#[test]
fn two_rule_counts_give_a_cost_and_a_straight_line_its_slope() {
    // No line with two counts: the one segment answers.
    let ts = floods("nft", &[0, 2000], 2, |r, rep| jitter(2000.0 + 5.0 * r, rep));
    let (f, _) = findings_of(&ts);
    let s = all_finding(&f);
    assert!(s.contains("ns per rule from 0 to 2000 rules"), "{s}");
    assert!(!s.contains("changes at"), "{s}");
    // No difference beyond the repetitions' spread: its width, never a cost.
    let ts = floods("nft", &[0, 2000], 4, |_, rep| jitter(2000.0, rep));
    let (f, _) = findings_of(&ts);
    let s = all_finding(&f);
    assert!(
        s.starts_with("all: no measurable difference from 0 to 2000 rules (± 0."),
        "{s}"
    );
    assert!(!s.contains("ns per rule from"), "{s}");
    // A line that fits is the answer, the estimator named.
    let ts = floods("nft", &[0, 1000, 2000, 5000], 4, |r, rep| {
        jitter(2000.0 + 5.0 * r, rep)
    });
    let (f, _) = findings_of(&ts);
    let s = all_finding(&f);
    assert!(
        s.contains("ns per rule per packet (1/pps estimator;"),
        "{s}"
    );
    assert!(!s.contains("FLAGGED") && !s.contains("from 0 to"), "{s}");
}

/// A stored search of `workload` on nft whose `search` object is `search`.
fn search_trial(workload: &str, search: serde_json::Value) -> Trial {
    search_trial_as(workload, "ok", search)
}

/// An `ok` ndr search with `params` that converged on `rate` (its lowest failure 2 %
/// above), its sender no limit.
fn measured_ndr(params: serde_json::Value, rate: f64) -> Trial {
    search_trial_of(
        "ndr",
        "ok",
        params,
        serde_json::json!({"search": "ndr", "mode": "ndr", "converged": true,
            "limited_by_sender": false, "rate_pps": rate, "fail_pps": rate * 1.02,
            "ceiling_pps": 1e6}),
    )
}

/// The same with its trial's status word.
fn search_trial_as(workload: &str, status: &str, search: serde_json::Value) -> Trial {
    search_trial_of(
        workload,
        status,
        serde_json::json!({"engine": "nft"}),
        search,
    )
}

/// The same with its parameters.
fn search_trial_of(
    workload: &str,
    status: &str,
    params: serde_json::Value,
    search: serde_json::Value,
) -> Trial {
    Trial::new(store::TrialRow {
        engine: None,
        id: 1,
        run_id: 1,
        trial_key: "k".into(),
        rep: 1,
        workload: workload.into(),
        status: status.into(),
        error: None,
        params,
        headline: Default::default(),
        started_at: String::new(),
        finished_at: String::new(),
        firewall: None,
        kind: None,
        results: serde_json::json!({ "search": search }),
    })
}

#[test]
fn mlr_searches_give_one_finding_per_goal() {
    let t = search_trial(
        "mlr",
        serde_json::json!({"search": "mlr", "limited_by_sender": false, "converged": true,
            "rate_pps": 21000.0, "goals": [
            {"loss_ratio": 0.0, "rate_pps": 21000.0, "rate_bps_l2": 1e7},
            {"loss_ratio": 0.005, "rate_pps": 21100.0, "rate_bps_l2": null}]}),
    );
    let f = ndr(&[t]);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f.iter().any(|l| l.starts_with("MLR NDR of nft: 21")),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|l| l.starts_with("MLR PDR ≤ 0.5 % of nft: 21")),
        "{f:?}"
    );
}

/// An ndr whose given upper bound passed (`ndr --max-rate 20kpps`: nothing failed) is
/// a lower bound, said so; one that found a failing rate above is not.
#[test]
fn an_ndr_whose_upper_bound_passed_is_at_least_its_rate() {
    let ndr_trial = |fail: Option<f64>| {
        search_trial(
            "ndr",
            serde_json::json!({"search": "ndr", "mode": "ndr", "converged": true,
                "limited_by_sender": false, "rate_pps": 20000.0, "ceiling_pps": 20000.0,
                "fail_pps": fail, "rate_bps_l2": 1.024e7}),
        )
    };
    let f = ndr(&[ndr_trial(None)]);
    assert_eq!(
        f,
        [
            "NDR of nft: 20000 packets/s (10.24 Mb/s on the wire), one search (no CI); the \
          search's upper bound passed, so the firewall's rate is at least this (raise \
          max_rate)."
        ]
    );
    let f = ndr(&[ndr_trial(Some(20400.0))]);
    assert!(!f[0].contains("at least"), "{f:?}");
}

/// A search that did not converge, or whose trial is flagged, states no rate: it is
/// counted out, with where its doubts are (a disturbed ndr whose trials contradicted
/// each other once read "NDR of nft: 5234 packets/s, one search (no CI)").
#[test]
fn searches_that_did_not_converge_or_are_flagged_state_no_rate() {
    let search = |rate: f64, converged: bool, status: &str| {
        search_trial_as(
            "ndr",
            status,
            serde_json::json!({"search": "ndr", "mode": "ndr", "converged": converged,
                "limited_by_sender": false, "rate_pps": rate, "fail_pps": rate * 1.02,
                "ceiling_pps": 1e6}),
        )
    };
    assert_eq!(
        ndr(&[search(5234.0, false, "flagged")]),
        [
            "NDR of nft: no rate stated — 1 search that did not converge (the search's row \
          says why)."
        ]
    );
    assert_eq!(
        ndr(&[
            search(5234.0, true, "flagged"),
            search(5300.0, true, "flagged")
        ]),
        [
            "NDR of nft: no rate stated — 2 searches that are flagged (the searches' rows say \
          why)."
        ]
    );
    // Beside two that hold: their mean, the others counted out.
    let f = ndr(&[
        search(20_000.0, true, "ok"),
        search(20_400.0, true, "ok"),
        search(5234.0, false, "flagged"),
        search(9000.0, true, "flagged"),
    ]);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].starts_with("NDR of nft: 20200 ± "), "{f:?}");
    assert!(
        f[0].ends_with(
            ", 95 % CI over 2 searches. Left out: 2 searches that did not converge or are \
             flagged (the searches' rows say why)."
        ),
        "{f:?}"
    );
}

#[test]
fn a_line_that_does_not_describe_its_data_is_not_a_per_rule_cost() {
    // Flat, then steep: a negative intercept if taken as a line.
    let f = fit_of(|r| 2000.0 + 20.0 * (r - 2000.0).max(0.0));
    let s = cost_sentence(&f, None);
    assert!(s.starts_with("engine=x: FLAGGED"), "{s}");
    assert!(s.contains("it is not a per-rule cost"), "{s}");
}

#[test]
fn flat_lines_and_coarse_grids_are_said_so() {
    let f = fit_of(|r| 2000.0 + 5.0 * r);
    let s = cost_sentence(&f, None);
    assert!(
        s.contains(
            "ns per rule per packet (1/pps estimator; 95 % CI over 10 trials at 5 rule counts)"
        ),
        "{s}"
    );
    assert!(
        s.contains("this grid cannot place a degradation point"),
        "{s}"
    );
    assert!(!s.contains("0 → 1000") && !s.contains("flat"), "{s}");
    let flat = fit_of(|r| 2000.0 + 0.0 * r + if r == 5000.0 { 10.0 } else { -2.5 });
    let s = cost_sentence(&flat, None);
    assert!(s.contains("flat: the CI includes 0"), "{s}");
}

/// A slope whose CI includes 0 is flat only where the CI's upper end, at the largest
/// rule count, adds at most 5 % to the time at 0 rules; a CI that holds 0 because it is
/// wide is "not measurable", with what it allows. Known answer: y = 2000 ± d at 0, 1000,
/// 2000, 3000 rules (+d, −d, −d, +d) fits b = 0, a = 2000 with s² = 2d², Sxx = 5·10⁶ and
/// t(2 df) = 4.303, so the CI is ±2.721·10⁻³·d and its share at 3000 rules 0.4082 % · d.
#[test]
fn a_slope_whose_ci_holds_zero_is_flat_only_where_the_ci_is_narrow() {
    let fit = |d: f64| {
        let pts = [
            (0.0, 2000.0 + d),
            (1000.0, 2000.0 - d),
            (2000.0, 2000.0 - d),
            (3000.0, 2000.0 + d),
        ];
        stats::fit_line(&pts).unwrap()
    };
    let ns = |v: f64, c: f64| format!("{} ns", at_place_of(v, Some(c)));
    let narrow = zero_slope_words(&fit(10.0), 3000.0, ns, "a packet's time").unwrap();
    assert_eq!(
        narrow,
        " — flat: the CI includes 0 and allows at most 0.027 ns per rule, +4.1 % of a \
         packet's time at 3000 rules"
    );
    let wide = zero_slope_words(&fit(20.0), 3000.0, ns, "a packet's time").unwrap();
    assert!(
        wide.starts_with(
            " — not measurable: the CI includes 0 but allows up to 0.054 ns per rule, \
             +8.2 % of a packet's time at 3000 rules"
        ),
        "{wide}"
    );
    // A slope measurably above 0 gets no words; one without an intercept to compare
    // with is not measurable, whatever its CI.
    let rising = stats::fit_line(&[(0.0, 2000.0), (1000.0, 2101.0), (2000.0, 2199.0)]);
    assert_eq!(zero_slope_words(&rising.unwrap(), 2000.0, ns, "x"), None);
    let no_a = stats::fit_line(&[(0.0, -5.0), (1000.0, 5.0), (2000.0, -5.0)]).unwrap();
    assert!(zero_slope_words(&no_a, 2000.0, ns, "x")
        .unwrap()
        .starts_with(" — not measurable: the CI includes 0 and allows up to"));
}

/// The cost sentence of the xdp-cost preset's XDP line (one repetition at 0, 1000 and
/// 3000 rules: 8.38, 16.2, 45.0 µs per packet, a cost per rule plain to see but a CI of
/// 1 degree of freedom) does not call it flat.
#[test]
fn a_wide_ci_holding_zero_is_not_called_flat() {
    let groups: Vec<(f64, Vec<f64>)> = vec![
        (0.0, vec![8380.0]),
        (1000.0, vec![16200.0]),
        (3000.0, vec![44970.0]),
    ];
    let e = crate::throughput::estimate_of(Estimator::TimePerPacket, &groups).unwrap();
    let s = cost_sentence(&crate::testing::cost_fit("engine=xdp", e), None);
    assert!(
        s.contains("ns per rule per packet — not measurable: the CI includes 0 but allows up to"),
        "{s}"
    );
    assert!(s.contains("% of a packet's time at 3000 rules"), "{s}");
    assert!(!s.contains("flat"), "{s}");
}

/// An A/B of session durations in ms: A 0.14 ± 0.01, B `b` (10 values each), Welch.
fn ab(b: f64, same_gateway: bool) -> AbTest {
    let a = crate::stats::Pooled {
        n: 10,
        mean: 0.14,
        sd: 0.01,
    };
    let bb = crate::stats::Pooled { mean: b, ..a };
    AbTest {
        case: "plain forwarding: per new flow".into(),
        workload: "sessions".into(),
        parameter: "rules".into(),
        a_value: "0".into(),
        b_value: "1000".into(),
        quantity: "session duration",
        a,
        b: bb,
        welch: stats::welch_from_summary(bb.mean, bb.sd, bb.n, a.mean, a.sd, a.n),
        source: "per-session durations (session_us)",
        paired: None,
        over_reps: None,
        trials: (1, 1),
        same_gateway: same_gateway.then(|| "engine none installs no rules".to_string()),
    }
}

#[test]
fn rule_counts_of_a_gateway_without_a_firewall_are_never_a_cost() {
    // The nat.toml run: engine none, rules 0 → 1000, +80 %, "significant".
    let drift = ab_sentence(&ab(0.252, true));
    assert!(
        drift.starts_with(
            "A/B (plain forwarding: per new flow): no comparison — engine none installs no \
             rules, so rules 0 → 1000 ran the same gateway twice"
        ) && drift.contains("is significant although nothing differs: the testbed drifted")
            && drift.ends_with("not a cost."),
        "{drift}"
    );
    assert!(!drift.contains("changes the mean"), "{drift}");
    let noise = ab_sentence(&ab(0.141, true));
    assert!(
        noise.contains("is the testbed's noise, not a cost."),
        "{noise}"
    );
    // With a firewall the same numbers are a finding.
    let real = ab_sentence(&ab(0.252, false));
    assert!(
        real.contains("changes the mean session duration") && real.contains("significant at 5 %"),
        "{real}"
    );
    // Not significant: no change stated (seed 004 here said "changes the mean download
    // time … by -0.04 ± 0.69 ms … not significant").
    let none = ab_sentence(&ab(0.141, false));
    assert!(
        none.contains(
            "rules 0 → 1000: no measurable change of the mean session duration (0.14 vs 0.141 ms"
        ) && none.contains("not significant")
            && !none.contains("changes the mean"),
        "{none}"
    );
    // Untested: the means, no CI and no change claimed; the table's "result by" names
    // no test either. With the values' test only, it says where that test lies.
    let untested_ab = AbTest {
        welch: None,
        ..ab(0.2, false)
    };
    assert_eq!(untested_ab.verdict_test(), "no test");
    assert_eq!(
        ab(0.2, false).verdict_test(),
        "Welch over sessions (within trials)"
    );
    let untested = ab_sentence(&untested_ab);
    assert_eq!(
        untested,
        "A/B (plain forwarding: per new flow): rules 0 → 1000: not tested (fewer than 2 \
         values or no spread) — the mean session duration was 0.14 vs 0.2 ms."
    );
    // Which pairs are one gateway: engine none on both sides, a rule setting between them.
    let c = |engine: &str, rules: &str| {
        crate::testing::config(
            format!("{engine}{rules}"),
            "sessions",
            engine,
            [("rules".to_string(), rules.to_string())].into(),
        )
    };
    assert_eq!(
        crate::conn::one_gateway(&c("none", "0"), &c("none", "1000"), "rules").as_deref(),
        Some("engine none installs no rules")
    );
    assert!(crate::conn::one_gateway(&c("nft", "0"), &c("nft", "1000"), "rules").is_none());
    assert!(crate::conn::one_gateway(&c("none", "0"), &c("none", "0"), "parallel").is_none());
    // Conntrack alone installs one rule whatever the count (nat.toml's "conntrack, no
    // NAT" at 0 and 1000 rules): one gateway; a NAT model's fillers are not.
    // A model with `key` set to `value`.
    let m = |model: &str, key: &str, value: &str| {
        crate::testing::config(
            format!("{model}{value}"),
            "sessions",
            "nft",
            [
                (key.to_string(), value.to_string()),
                ("model".to_string(), model.to_string()),
            ]
            .into(),
        )
    };
    let between =
        |model, key, a, b| crate::conn::one_gateway(&m(model, key, a), &m(model, key, b), key);
    let same = between("conntrack", "rules", "0", "1000");
    assert_eq!(
        same.as_deref(),
        Some("model conntrack installs the same rules whatever the count")
    );
    assert!(between("snat", "rules", "0", "1000").is_none());
    // A model that places no rule by `position` (raw-drop drops everything at the
    // raw table's head) is one gateway wherever it is asked to put the match; linear's
    // matching rule moves.
    assert_eq!(
        between("raw-drop", "position", "first", "last").as_deref(),
        Some("model raw-drop installs the same rules whatever the position")
    );
    assert!(between("linear", "position", "first", "last").is_none());
    // Its sentence says why, not "engine none".
    let t = AbTest {
        same_gateway: same,
        ..ab(0.252, false)
    };
    let s = ab_sentence(&t);
    assert!(
        s.contains(
            "no comparison — model conntrack installs the same rules whatever the count, so \
             rules 0 → 1000 ran the same gateway twice"
        ),
        "{s}"
    );
}

/// Trials with gateway events measure the events, not a rule set's cost: repeated adds
/// (`--event-rate`, an envelope's steps) leave no one installed size (an envelope's
/// scenario stated "−2.656 ns per rule from 10000 to 20000 rules" from its steps), a
/// single add's rule drops the marker's packets on purpose (rules-under-load stated
/// "−0.057 ± 0.023 ns per rule per packet, 74983 ns per packet at 0 rules": a third of
/// its flows dropped by design), reloads stall. The same planted floods give a cost
/// per rule without events and none with any.
#[test]
fn trials_with_gateway_events_give_no_cost_per_rule() {
    let with = |events: Option<serde_json::Value>| -> Vec<Trial> {
        floods("nft", &[0, 2000], 2, |r, rep| jitter(2000.0 + 5.0 * r, rep))
            .into_iter()
            .map(|t| {
                let mut row = t.row.clone();
                if let Some(e) = &events {
                    row.params["packet"] = serde_json::json!({ "events": e });
                }
                // A labelled case: its table reads steady rates only.
                row.params["label"] = serde_json::json!("nft");
                Trial::new(row)
            })
            .collect()
    };
    let cases = |a: &Analysis| a.tables.iter().any(|t| t.title.starts_with("Cases: "));
    let (f, a) = findings_of(&with(None));
    assert!(cases(&a), "{:?}", a.tables);
    assert!(
        f.iter()
            .any(|l| l.contains("ns per rule from 0 to 2000 rules")),
        "{f:?}"
    );
    let at_rate = |kind: &str| {
        serde_json::json!({"kind": kind, "k": 1, "at_s": 1.0, "rate": 10.0, "count": 20,
                           "method": "batch"})
    };
    let once = serde_json::json!({"kind": "add", "k": 1, "at_s": 1.0, "method": "batch"});
    assert!(!f.iter().any(|l| l.starts_with("Gateway events")), "{f:?}");
    for events in [at_rate("add"), at_rate("reload"), once] {
        let (f, a) = findings_of(&with(Some(events.clone())));
        assert!(
            !f.iter().any(|l| l.contains("ns per rule")),
            "{events}: {f:?}"
        );
        assert!(!cases(&a), "{events}: {:?}", a.tables);
        assert!(
            f.iter().any(|l| l.starts_with(
                "Gateway events: 2 flood, flow or echo configuration(s) with updates are left \
                 out of the cost per rule"
            )),
            "{events}: {f:?}"
        );
    }
}

/// enforcement.toml's capacity searches (`event_load`) store their floods as trials of
/// the run: their ceiling probes at 1000 and 20 000 rules read "engine=iptables-legacy,
/// packet.rate=max: 2.316 ns per rule from 1000 to 20000 rules", and each guessed rate
/// made a series of its own ("no cost per rule is stated — 1 trial (at 20000 rules)
/// passed every packet offered", a dozen of them). A search's steps probe the search:
/// left out, said once; the same floods asked for give a cost.
#[test]
fn a_searchs_steps_give_no_cost_per_rule() {
    let with = |step: Option<&str>| -> Vec<Trial> {
        floods("nft", &[0, 2000, 5000], 2, |r, rep| {
            jitter(2000.0 + 5.0 * r, rep)
        })
        .into_iter()
        .map(|t| {
            let mut row = t.row.clone();
            if let Some(s) = step {
                row.results = serde_json::json!({ "step_of": s });
            }
            Trial::new(row)
        })
        .collect()
    };
    // The configurations table lists steps marked; a step is neither a baseline nor
    // costed against one.
    let listed = |a: &Analysis| -> Vec<String> {
        let t = a
            .tables
            .iter()
            .find(|t| t.title == "Configurations")
            .unwrap();
        t.rows.iter().map(|r| r[0].clone()).collect()
    };
    let paired = |ts: &[Trial]| {
        let mut cs = crate::model::configs(ts, &BTreeMap::new());
        crate::model::pair_with_baseline(&mut cs, &serde_json::json!({"rules": 0}));
        let based = cs.iter().filter(|c| c.is_baseline).count();
        (based, cs.iter().filter(|c| c.cost_pct.is_some()).count())
    };
    let (f, a) = findings_of(&with(None));
    assert!(f.iter().any(|l| l.contains("ns per rule")), "{f:?}");
    assert!(!f.iter().any(|l| l.starts_with("Search steps")), "{f:?}");
    assert!(listed(&a).iter().all(|w| w == "flood"), "{:?}", listed(&a));
    assert_eq!(paired(&with(None)), (1, 2));
    for (step, mark) in [
        ("capacity", "flood (step of a capacity search)"),
        ("search", "flood (step of a search)"),
    ] {
        let (_, a) = findings_of(&with(Some(step)));
        assert!(listed(&a).iter().all(|w| w == mark), "{:?}", listed(&a));
        assert_eq!(paired(&with(Some(step))), (0, 0), "{step}");
    }
    // A step at the sender's limit (a search's ceiling probe) is the search's answer,
    // no warning of the run's; a trial asked for is warned of.
    // A step the sink limited pulled the search down: warned of.
    let probe = |step: Option<&str>, by: &str| {
        let mut row = with(None)[0].row.clone();
        row.results = serde_json::json!({"packet": {"limited_by": {"by": by}}});
        if let Some(s) = step {
            row.results["step_of"] = serde_json::json!(s);
        }
        fwbench_limit_warnings(&[Trial::new(row)])
    };
    assert_eq!(probe(None, "sender").len(), 1);
    assert!(probe(Some("search"), "sender").is_empty());
    assert_eq!(probe(Some("search"), "sink").len(), 1);
    for (step, what) in [
        (
            "capacity",
            "the capacity searches of --load / event_load (3 configurations)",
        ),
        ("search", "searches asked for (3 configurations)"),
    ] {
        let (f, a) = findings_of(&with(Some(step)));
        assert!(
            !f.iter().any(|l| l.contains("ns per rule")),
            "{step}: {f:?}"
        );
        assert!(a.figures.is_empty(), "{step}: {:?}", a.figures);
        assert!(
            f.iter().any(|l| l.starts_with(&format!(
                "Search steps: 3 packet configuration(s) were steps of {what} and are left \
                 out"
            ))),
            "{step}: {f:?}"
        );
    }
}

/// A series at one rule count has no cost per rule to miss: what its 1/pps left out is
/// not said as "no cost per rule is stated" (enforcement's guessed rates, one series
/// each, said it a dozen times).
#[test]
fn a_series_at_one_rule_count_says_no_missing_cost() {
    // Beside a series swept over rules (a run's cost model runs).
    let mut ts = floods("iptables-legacy", &[0, 2000, 5000], 2, |r, rep| {
        jitter(2000.0 + 2.0 * r, rep)
    });
    ts.extend(
        floods("nft", &[1000], 2, |_, rep| jitter(5000.0, rep))
            .into_iter()
            .map(|t| {
                let mut row = t.row.clone();
                row.id += 100;
                row.results = serde_json::json!({"packet": {"limited_by": {"by": "nothing"}}});
                Trial::new(row)
            }),
    );
    let (f, _) = findings_of(&ts);
    assert!(f.iter().any(|l| l.contains("ns per rule")), "{f:?}");
    assert!(
        !f.iter().any(|l| l.contains("no cost per rule is stated")),
        "{f:?}"
    );
}

/// seed 004's A/B arms share their label: "unstable configuration A/B: 0 vs 500 rules:
/// CV … 23.6 %" and, next, the same name at 20.4 % — which arm was which, unsaid. A
/// shared label is followed by what differs within it.
#[test]
fn an_unstable_arm_of_a_shared_label_is_named_apart() {
    let ts: Vec<Trial> = floods("nft", &[0, 500], 4, |r, rep| {
        (2000.0 + r) * (1.0 + 0.2 * [-1.0, 0.5, 1.0, -0.5][(rep as usize - 1) % 4])
    })
    .into_iter()
    .map(|t| {
        let mut row = t.row.clone();
        row.params["label"] = serde_json::json!("A/B: 0 vs 500 rules");
        Trial::new(row)
    })
    .collect();
    let cs = crate::model::configs(&ts, &BTreeMap::new());
    let spread = crate::noise::Spread::of(&cs);
    let names: Vec<&str> = spread.standouts().map(|x| x.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "A/B: 0 vs 500 rules (rules=0)",
            "A/B: 0 vs 500 rules (rules=500)"
        ]
    );
}

/// nat.toml's conntrack alone at 0 and 1000 rules stated "model=conntrack: no
/// measurable difference from 0 to 1000 rules": a cost per rule of a model that
/// installs the same rules whatever the count is none to state (a noisy run would
/// have stated one); a model with fillers is costed.
#[test]
fn a_model_that_ignores_the_rule_count_has_no_cost_per_rule() {
    let of = |model: &str| {
        let ts: Vec<Trial> = floods("nft", &[0, 2000, 5000], 2, |r, rep| {
            jitter(2000.0 + 5.0 * r, rep)
        })
        .into_iter()
        .map(|t| {
            let mut row = t.row.clone();
            row.params["model"] = serde_json::json!(model);
            Trial::new(row)
        })
        .collect();
        findings_of(&ts)
    };
    let (f, _) = of("linear");
    assert!(f.iter().any(|l| l.contains("ns per rule")), "{f:?}");
    let (f, a) = of("conntrack");
    assert!(!f.iter().any(|l| l.contains("per rule")), "{f:?}");
    let fig = a
        .figures
        .iter()
        .find(|f| f.id == "packet-ns-per-packet")
        .unwrap();
    assert!(
        fig.notes
            .iter()
            .any(|n| n
                .ends_with("no cost model (its model installs the same rules whatever the count)")),
        "{:?}",
        fig.notes
    );
}

/// Searches of other parameters are other cases, never one mean: a scenario's
/// `rules = [0, 10000]` with two searches each once read "NDR of nft: 15000 ± … packets/s,
/// 95 % CI over 4 searches" (a CI over two rule counts).
#[test]
fn ndr_searches_of_other_parameters_are_other_cases() {
    let t = |rules: u32, seed: u32, rate: f64| {
        measured_ndr(
            serde_json::json!({"engine": "nft", "rules": rules, "seed": seed}),
            rate,
        )
    };
    let f = ndr(&[
        t(0, 1, 20000.0),
        t(0, 2, 20400.0),
        t(10000, 1, 10000.0),
        t(10000, 2, 10200.0),
    ]);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f.iter()
            .any(|l| l.starts_with("NDR of nft (rules=0): 20200 ± ")
                && l.contains("95 % CI over 2 searches")),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|l| l.starts_with("NDR of nft (rules=10000): 10100 ± ")),
        "{f:?}"
    );
}

/// A search whose sender was the limit (or whose upper bound passed) is a lower bound:
/// beside measured rates it is left out of their mean, said; an MLR goal whose upper
/// bound passed is at least its rate, as an ndr's.
#[test]
fn lower_bounds_are_not_averaged_with_measured_rates() {
    let t = |seed: u32, rate: f64, sender: bool| {
        search_trial_of(
            "ndr",
            "ok",
            serde_json::json!({"engine": "nft", "seed": seed}),
            serde_json::json!({"search": "ndr", "mode": "ndr", "converged": true,
                "limited_by_sender": sender, "rate_pps": rate,
                "fail_pps": if sender { None } else { Some(rate * 1.02) },
                "ceiling_pps": if sender { rate } else { 1e6 }}),
        )
    };
    let f = ndr(&[
        t(1, 1.2e6, true),
        t(2, 800_000.0, false),
        t(3, 820_000.0, false),
    ]);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].starts_with("NDR of nft: 810000 ± "), "{f:?}");
    assert!(
        f[0].ends_with(
            "95 % CI over 2 searches. Left out: 1 search whose rate is a lower bound only \
             (its sender was the limit or its upper bound passed): not averaged with measured \
             rates."
        ),
        "{f:?}"
    );
    let mlr = search_trial(
        "mlr",
        serde_json::json!({"search": "mlr", "limited_by_sender": false, "converged": true,
            "rate_pps": 1e6, "ceiling_pps": 1e6, "goals": [
            {"loss_ratio": 0.0, "rate_pps": 900000.0, "fail_pps": 910000.0},
            {"loss_ratio": 0.005, "rate_pps": 1e6, "fail_pps": null}]}),
    );
    let f = ndr(&[mlr]);
    assert!(
        f.iter().any(
            |l| l.starts_with("MLR PDR ≤ 0.5 % of nft: 1000000 packets/s")
                && l.contains("upper bound passed")
        ),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|l| l.starts_with("MLR NDR of nft: 900000") && !l.contains("at least")),
        "{f:?}"
    );
}

/// Configurations that differ only in what the case name leaves out (the nft family
/// of one engine) are still two cases, each named by it — never one mean over both.
#[test]
fn ndr_cases_that_read_alike_are_named_by_what_differs() {
    let t = |family: Option<&str>, seed: u32, rate: f64| {
        let mut params = serde_json::json!({"engine": "nft", "seed": seed});
        if let Some(f) = family {
            params["nft_family"] = f.into();
        }
        measured_ndr(params, rate)
    };
    let f = ndr(&[
        t(None, 1, 20000.0),
        t(None, 2, 20400.0),
        t(Some("ip"), 1, 30000.0),
        t(Some("ip"), 2, 30600.0),
    ]);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f.iter()
            .any(|l| l.starts_with("NDR of nft (nft_family=ip): 30300 ± ")),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|l| l.starts_with("NDR of nft (nft_family=inet): 20200 ± ")),
        "{f:?}"
    );
}

/// Searches that are all lower bounds give the largest as "at least", with no mean or
/// CI of bounds (which describes nothing of the gateway).
#[test]
fn lower_bounds_alone_state_the_largest_with_no_ci() {
    let t = |seed: u32, rate: f64| {
        search_trial_of(
            "ndr",
            "ok",
            serde_json::json!({"engine": "nft", "seed": seed}),
            serde_json::json!({"search": "ndr", "mode": "ndr", "converged": true,
                "limited_by_sender": true, "rate_pps": rate, "ceiling_pps": rate}),
        )
    };
    let f = ndr(&[t(1, 1.1e6), t(2, 1.2e6), t(3, 1.15e6)]);
    assert_eq!(
        f,
        [
            "NDR of nft: at least 1200000 packets/s — the largest of 3 searches, each a lower \
          bound only (the sender was the limit): no mean or CI is stated of bounds."
        ]
    );
}

/// One label over two engines: the label alone would pool them; the engine names them.
#[test]
fn one_label_over_two_engines_is_two_cases() {
    let t = |engine: &str, seed: u32, rate: f64| {
        measured_ndr(
            serde_json::json!({"engine": engine, "label": "edge", "seed": seed}),
            rate,
        )
    };
    let f = ndr(&[t("nft", 1, 20000.0), t("iptables-legacy", 1, 30000.0)]);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f.iter()
            .any(|l| l.starts_with("NDR of edge (engine=nft): 20000 packets/s")),
        "{f:?}"
    );
}

/// Names that stay alike even by every parameter that differs (the nft family does not
/// show beside the engine) are numbered: three configurations, three findings.
#[test]
fn configurations_that_still_read_alike_are_numbered() {
    let t = |engine: &str, family: Option<&str>, rate: f64| {
        let mut params = serde_json::json!({"engine": engine, "label": "edge", "seed": 1});
        if let Some(f) = family {
            params["nft_family"] = f.into();
        }
        measured_ndr(params, rate)
    };
    let f = ndr(&[
        t("nft", None, 20000.0),
        t("nft", Some("ip"), 30000.0),
        t("iptables-legacy", None, 10000.0),
    ]);
    assert_eq!(f.len(), 3, "{f:?}");
    assert!(f.iter().any(|l| l.contains("[configuration ")), "{f:?}");
}

/// Bounds of both kinds give both reasons.
#[test]
fn lower_bounds_of_both_kinds_say_both() {
    let t = |seed: u32, rate: f64, sender: bool| {
        search_trial_of(
            "ndr",
            "ok",
            serde_json::json!({"engine": "nft", "seed": seed}),
            serde_json::json!({"search": "ndr", "mode": "ndr", "converged": true,
                "limited_by_sender": sender, "rate_pps": rate, "ceiling_pps": rate}),
        )
    };
    let f = ndr(&[t(1, 1.1e6, true), t(2, 1.2e6, false)]);
    assert!(
        f[0].contains("(the sender was the limit, or the search's upper bound passed"),
        "{f:?}"
    );
}

/// An envelope's finding names its background's load (`--load`): the share, what of,
/// and how that capacity was found — or why it may not be believed.
#[test]
fn an_envelope_finding_names_its_background_load() {
    let envelope = |load: serde_json::Value| {
        search_trial_of(
            "envelope",
            "ok",
            serde_json::json!({"engine": "nft", "packet": {"events": {"load": load}},
                "search": {"envelope": {"latency_ms": 100.0, "effect_ms": 1000.0}}}),
            serde_json::json!({"search": "envelope", "converged": true, "rate": 11.3,
                "fail_rate": 12.1, "update": "add:1 (batch)", "installed": 5000.0}),
        )
    };
    let found = envelope(
        serde_json::json!({"fraction": 0.5, "capacity": {"pps": 13591.0,
        "background_pps": 6795.5, "search": {"loss": 0.0, "step_s": 1.0, "trials": 10,
        "converged": true, "limited_by_sender": false}}}),
    );
    assert_eq!(
        envelopes(&[found]),
        [
            "Safe envelope of add:1 (batch) updates at 5000 rules (nft, background at 50 % of \
          13591 pps (its capacity, found by search), held to p99 latency (due → committed) \
          ≤ 100 ms and time to effect ≤ 1000 ms): 11.3 updates/s kept the targets, 12.1 \
          did not."
        ]
    );
    let unsettled = envelope(
        serde_json::json!({"fraction": 0.5, "capacity": {"pps": 13591.0,
        "background_pps": 6795.5, "search": {"loss": 0.0, "step_s": 1.0, "trials": 10,
        "converged": false, "limited_by_sender": false}}}),
    );
    let said = envelopes(&[unsettled]).join("");
    assert!(
        said.contains("background at 50 % of 13591 pps (a capacity its search did not settle)"),
        "{said}"
    );
    // Without a load, nothing is said of it.
    let plain = envelope(serde_json::Value::Null);
    assert!(!envelopes(&[plain]).join("").contains("background"));
}
