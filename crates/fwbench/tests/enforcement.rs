//! Privileged: what the firewall lets through while it changes (issue 39). A reload
//! loads the rule set in force again — the marker flow is dropped before and after
//! it — so every marker packet that passes is a violation. Atomic (`batch`: one `nft
//! -f` transaction, one `iptables-restore`) lets none through; in two steps
//! (`flush-load`: the removal, then the install, as a firewall service's restart does)
//! the gap between them lets the marker through, and so does a load one rule at a
//! time (`per-rule`, the marker's drop rule last), counted at the sink and
//! cross-checked against a counter of the gateway's own, placed after fwbench's
//! chain (nft and iptables-nft: a trial with iptables-legacy leaves the legacy filter
//! table instantiated, so the testbed is rebuilt after it, and the counter with it).
//! Without root: ignored (skipped).

mod util;

use serde_json::Value;
use util::*;

/// The test's witness in the gateway: a forward chain at priority 100 (after
/// fwbench's rules, at 0) counting what passed from each of the client source
/// addresses 198.18.1.1 … 198.18.1.4.
fn passed_counter(tb: &TestbedGuard) -> NftTable {
    let rules: String = (1..=4)
        .map(|i| format!("ip saddr 198.18.1.{i} counter\n"))
        .collect();
    let text = format!(
        "table inet fwbt_passed {{\n chain c {{ type filter hook forward priority 100; policy accept;\n{rules} }}\n}}\n"
    );
    NftTable::load(&tb.gw(), "inet", "fwbt_passed", &text)
}

/// Reloads (`kind`: reload, reload-set) of `engine`'s 100 rules by `method` under a
/// flow of two sources at 40 kpps (the marker's packets 0.05 ms apart): five in a 3-s
/// flow, or three a second apart in a 6-s one where each takes a call per rule. The
/// traffic outlasts the last reload by seconds: a reload that outlived it would have
/// no violations counted (flagged unobserved; a CI run lost one in a 4-s flow, here
/// a per-rule reload of 102 calls takes 0.3–0.55 s).
fn reloads(tb: &TestbedGuard, engine: &str, kind: &str, method: &str) -> Value {
    let (t, rate, count) = reload_plan(method);
    let a = [
        &cmd!(
            "flow --testbed",
            &tb.name,
            "--no-store --json --engine",
            engine
        )[..],
        &argv("-r 40kpps --flows 2 --sources 2 --rules 100 -t")[..],
        &[t, "--event", &format!("{kind}:1@500ms")],
        &[
            "--event-rate",
            rate,
            "--event-count",
            count,
            "--event-method",
        ],
        &[method],
    ];
    json_of(&a.concat())
}

/// A trial's duration, its reloads' rate and count by `method`.
fn reload_plan(method: &str) -> (&'static str, &'static str, &'static str) {
    match method {
        "per-rule" => ("6", "1", "3"),
        _ => ("3", "5", "5"),
    }
}

/// The marker's source address's counter of the witness table.
fn marker_passed(v: &Value, counters: &[u64]) -> u64 {
    let src = v["result"]["events"]["marker_src"].as_str().unwrap();
    let i: usize = src.strip_prefix("198.18.1.").unwrap().parse().unwrap();
    counters[i - 1]
}

#[root_test(tb = "forward")]
fn a_reload_in_two_steps_lets_must_drop_packets_through_and_an_atomic_one_none() {
    reloads_counted(
        &tb,
        "reload",
        &["nft", "iptables-nft"],
        &["batch", "flush-load", "per-rule"],
        "reloading 102 rules",
    );
}

/// A blocklist refresh: the drop set loaded again. Atomically (nft-set: one
/// transaction flushing and filling the set; ipset: a new set filled, then `ipset
/// swap`) none of the marker's packets pass; emptied and filled again by a second call
/// (`flush-load`) some do, as many as the gateway's counter saw.
#[root_test(tb = "forward")]
fn a_set_emptied_and_filled_again_lets_must_drop_packets_through_a_swap_none() {
    reloads_counted(
        &tb,
        "reload-set",
        &["nft-set", "ipset-nft"],
        &["batch", "flush-load"],
        "reloading a set of 101 elements",
    );
}

/// [`reloads`] by each of `methods` for each of `engines`, the violations checked
/// against the gateway's counter (none by `batch`, some by the others); a short
/// trial's text says `doing`.
fn reloads_counted(tb: &TestbedGuard, kind: &str, engines: &[&str], methods: &[&str], doing: &str) {
    for &engine in engines {
        for &method in methods {
            let witness = passed_counter(tb);
            let v = reloads(tb, engine, kind, method);
            let counted = marker_passed(&v, &witness.counters());
            drop(witness);
            let ctx = format!("{engine} {method}");
            let e = &v["result"]["events"];
            let ups = e["updates"].as_array().unwrap();
            assert_eq!(ups.len().to_string(), reload_plan(method).2, "{ctx}: {e}");
            let mut passed = 0;
            for up in ups {
                assert!(up["error"].is_null(), "{ctx}: {up}");
                assert_eq!(up["method"], method, "{ctx}");
                let vi = &up["violations"];
                assert!(vi.is_object(), "{ctx}: no violations counted: {up}");
                assert!(f(&vi["probe_gap_ms"]) < 0.2, "{ctx}: {vi}");
                passed += u(&vi["passed"]);
            }
            // The sink's count is the gateway's own.
            assert_eq!(passed, counted, "{ctx}: sink vs the gateway's counter: {e}");
            // The marker's rule or element counted it: the events', not a filler's.
            let verdicts = &v["verdicts"];
            assert_eq!(u(&verdicts["filler_packets"]), 0, "{ctx}: {verdicts}");
            assert!(u(&verdicts["event_packets"]) > 0, "{ctx}: {verdicts}");
            match method {
                "batch" => assert_eq!(passed, 0, "{ctx}: an atomic reload let some through"),
                _ => assert!(passed > 0, "{ctx}: no violation in non-atomic reloads: {e}"),
            }
            // Every other marker packet (flow 0's) was dropped as intended: not the
            // gateway's loss. Its own count: a sender behind its schedule leaves the two
            // flows unequal (a CI run: 39 201 and 40 928), so half of all is no measure.
            let r = &v["result"];
            assert_eq!(r["flows"][0]["flow"], 0, "{ctx}: {r}");
            assert_eq!(
                u(&e["marker_dropped"]) + passed,
                u(&r["flows"][0]["sent"]),
                "{ctx}: {r}"
            );
            let text = stdout(&fwbench(
                &[
                    &cmd!("flow --testbed", &tb.name, "--no-store --engine", engine)[..],
                    &argv("-r 40kpps --flows 2 --sources 2 -t 2 --rules 100")[..],
                    &argv("--event")[..],
                    &[&format!("{kind}:1@300ms"), "--event-method", method],
                ]
                .concat(),
            ));
            assert!(text.contains(doing), "{ctx}: {text}");
            assert!(text.contains("must-drop packets through"), "{ctx}: {text}");
        }
    }
}

/// A ban feed's bans running out together (`expire-elements`): 1 000 elements, the
/// marker's among them, added at the start of the traffic with a timeout ending at
/// 1.5 s (ipset: whole seconds, so 2 s) expire by the kernel's timer. The marker's
/// packets pass again from then on, dated within a few ms of the expiry, the
/// resolution counting the marker's add call; what the element dropped before is the
/// marker's, as intended. The sets are made with timeout support, and the settings
/// say so.
#[root_test(tb = "forward")]
fn elements_expiring_together_let_the_marker_through_when_they_run_out() {
    for (engine, expires_s) in [("nft-set", 1.5), ("ipset-nft", 2.0)] {
        let v = json_of(
            &[
                &cmd!(
                    "flow --testbed",
                    &tb.name,
                    "--no-store --json --engine",
                    engine
                )[..],
                &argv("-r 40kpps --flows 2 --sources 2 -t 3 --rules 100")[..],
                &argv("--event expire-elements:1000@1500ms")[..],
            ]
            .concat(),
        );
        let ctx = engine;
        let e = &v["result"]["events"];
        let up = &e["updates"][0];
        assert_eq!(v["status"], "ok", "{ctx}: {}", v["error"]);
        assert!(up["error"].is_null(), "{ctx}: {up}");
        assert_eq!(up["kind"], "expire-elements", "{ctx}");
        assert_eq!(u(&up["installed"]), 1100, "{ctx}: {up}");
        // The marker's element alone, then the other 999.
        assert_eq!(u(&up["calls"]), 2, "{ctx}: {up}");
        let tte = f(&up["time_to_effect_ms"]);
        assert!(
            (0.0..100.0).contains(&tte),
            "{ctx}: time to effect {tte}: {up}"
        );
        let slack = u(&up["start_slack_ns"]) as f64 / 1e6;
        assert!(slack > 0.0, "{ctx}: {up}");
        assert!(f(&up["effect_resolution_ms"]) >= slack, "{ctx}: {up}");
        // Its element dropped the marker (20 kpps) from the add to the expiry: about
        // 1.5 s or 2 s of it (a sender catching up on its schedule sends more in a
        // while: a CI run dropped 34 145 in 1.5 s).
        let dropped = u(&e["marker_dropped"]) as f64;
        let want = expires_s * 20_000.0;
        assert!(
            (0.85 * want..1.2 * want).contains(&dropped),
            "{ctx}: {dropped} dropped, want about {want}: {e}"
        );
        let sets = v["firewall_settings"]["sets"].as_str().unwrap_or("");
        assert!(sets.contains("timeout"), "{ctx}: {sets}");
    }
}

/// A per-rule reload longer than the traffic (5 000 calls, a few ms each, in a 2-s
/// trial) stops between two calls when the traffic ends, instead of holding the
/// gateway agent past its stop: the update says how far it got, the rule set is put
/// back as installed (nothing of it left after the trial), and the trial is flagged —
/// its counters account for nothing.
#[root_test(tb = "forward")]
fn a_reload_longer_than_the_traffic_stops_between_two_calls() {
    let v = json_of(
        &[
            &cmd!("flow --testbed", &tb.name, "--no-store --json --engine nft")[..],
            &argv("-r 2kpps --flows 2 --sources 2 -t 2 --rules 5000")[..],
            &argv("--event reload:1@1s --event-method per-rule")[..],
        ]
        .concat(),
    );
    let up = &v["result"]["events"]["updates"][0];
    let why = up["error"].as_str().unwrap_or("");
    assert!(
        why.starts_with("not finished: the traffic phase ended after ")
            && why.contains(" of its 5003 calls"),
        "{up}"
    );
    assert_eq!(v["status"], "flagged", "{}", v["error"]);
    assert!(
        v["error"].as_str().unwrap_or("").contains("cut short"),
        "{}",
        v["error"]
    );
    let residue = &v["gateway"]["residue"];
    assert_eq!(residue["left"], serde_json::json!([]), "{residue}");
    assert_eq!(
        residue["after"]["nft_tables"], residue["before"]["nft_tables"],
        "{residue}"
    );
}

/// A reload is counted on a flow's packets; elsewhere it is refused before any host
/// is touched, as is a two-step update that is not a whole rule set's.
#[test]
fn a_reload_is_refused_where_it_cannot_be_counted() {
    refused([
        (
            "echo --engine nft-set --event expire-elements:10@1s",
            "its time to effect is dated on a flow's packets",
        ),
        (
            "echo --engine nft --event reload:1@1s",
            "its violations are counted on a flow's packets",
        ),
        (
            "flow -r 10kpps --engine nft --rules 10 --event add:1@1s --event-method flush-load",
            "makes a replace, a reload or a reload-set (not add)",
        ),
        (
            "flow --engine nft --event reload:1@1s --event-method nope",
            "flush-load",
        ),
    ]);
}

/// A drop rule added behind the stateful model's `ct state established,related accept`
/// never reaches a flow the conntrack table already knows: echo's client 1 (the
/// marker, replying UDP: established from its first answer) keeps being answered, the
/// update says why it has no time to effect, and the report's finding says the hole
/// is open. At the head, the same rule takes effect; behind the accept with the flow's
/// conntrack entries deleted in the same update too, and the finding says how.
#[root_test(tb = "forward")]
fn a_block_behind_the_established_accept_leaves_an_existing_flow_passing() {
    let (_dir, db) = TempDir::with_file("r.db");
    let echo = |place: &str, db: Option<&std::path::Path>| {
        let store: Vec<&str> = match db {
            Some(d) => vec!["--db", d.to_str().unwrap()],
            None => vec!["--no-store"],
        };
        let a = [
            &cmd!(
                "echo --testbed",
                &tb.name,
                "--json --engine nft --model stateful"
            )[..],
            &argv("--rules 100 -n 2 -P udp -t 3 --event add:1@1s --event-place")[..],
            &[place],
            &store[..],
        ];
        json_of(&a.concat())
    };
    let v = echo("after-established", Some(&db));
    assert_eq!(v["status"], "ok", "{v}");
    let up = &v["result"]["events"]["updates"][0];
    assert_eq!(up["place"], "after-established", "{up}");
    assert!(up["time_to_effect_ms"].is_null(), "{up}");
    let why = up["no_time_to_effect"].as_str().unwrap_or("");
    assert!(
        why.contains("leaves an existing connection passing"),
        "{up}"
    );
    // The marker was answered throughout: nothing of it lost.
    assert_eq!(u(&v["result"]["lost"]), 0, "{}", v["result"]);
    let o = fwbench(&cmd!("report", &db, "-f md -o -"));
    let md = stdout(&o);
    assert!(
        md.contains("the rule never reached the marker's established flow"),
        "{md}"
    );
    let head = echo("head", None);
    let up = &head["result"]["events"]["updates"][0];
    assert!(f(&up["time_to_effect_ms"]) >= 0.0, "{up}");
    // Behind the accept with the marker's conntrack entries deleted in the same update
    // (`conntrack -D`, one more call): the flow's next packet is new and meets the
    // block — unless a reply in flight came first, made a new entry the other way and
    // the marker's packets are its replies (seen here in about half the trials: one
    // request dropped, then established again). Either is said, in the update and in
    // the report's finding.
    let ct_db = _dir.file("ct.db");
    let v = echo("after-established-ct-delete", Some(&ct_db));
    let up = &v["result"]["events"]["updates"][0];
    assert_eq!(up["place"], "after-established-ct-delete", "{up}");
    let calls = |v: &Value| u(&v["result"]["events"]["updates"][0]["calls"]);
    assert_eq!(calls(&v), calls(&head) + 1, "{up}");
    let md = stdout(&fwbench(&cmd!("report", &ct_db, "-f md -o -")));
    if up["time_to_effect_ms"].is_null() {
        let why = up["no_time_to_effect"].as_str().unwrap_or("");
        assert!(
            why.contains("deleted the marker's conntrack entries, yet"),
            "{up}"
        );
        assert!(
            md.contains("yet in 1 of 1 updates its packets kept passing"),
            "{md}"
        );
    } else {
        assert!(f(&up["time_to_effect_ms"]) >= 0.0, "{up}");
        assert!(u(&v["result"]["lost"]) > 0, "{}", v["result"]);
        assert!(
            md.contains("only because the update deleted the flow's conntrack entries"),
            "{md}"
        );
    }
}

/// `--event-place` is checked before any host is touched: only an add places rules,
/// and a place needs an event.
#[test]
fn an_event_place_is_refused_where_it_means_nothing() {
    refused([
        (
            "echo --engine nft --event delete:1@1s --event-place after-established",
            "only an add puts new rules in the chain",
        ),
        (
            "echo --engine nft --event-place after-established",
            "--event",
        ),
        (
            "echo --engine nft --event add:1@1s --event-place tail",
            "unknown event place 'tail'",
        ),
    ]);
}
