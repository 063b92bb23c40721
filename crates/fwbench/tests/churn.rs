//! Churn replay (issue 39): `fwbench trace gen` writes traces of known shapes, `trace
//! check` reads one; `--event-trace FILE` replays one as one gateway update per
//! operation. Bad input is refused with exit 2 before any host is touched (no root
//! needed); the replay itself is privileged (ignored without root).

mod util;

use util::*;

/// What `trace gen` writes is deterministic for a seed, and `trace check` reads it back.
#[test]
fn generated_traces_are_deterministic_and_read_back() {
    let gen = |args: &str| {
        let o = fwbench(&argv(args));
        assert!(o.status.success(), "{args}: {}", stderr(&o));
        stdout(&o)
    };
    let a = gen("trace gen fail2ban --bans-per-s 5 --ban-time 2s --duration 2s --seed 1");
    assert_eq!(
        a,
        gen("trace gen fail2ban --bans-per-s 5 --ban-time 2s --duration 2s --seed 1")
    );
    assert_ne!(
        a,
        gen("trace gen fail2ban --bans-per-s 5 --ban-time 2s --duration 2s --seed 2")
    );
    assert!(a.contains("\nformat 1\n1.198091s add 1\n"), "{a}");
    let d = TempDir::new();
    let f = d.write("bans.trace", &a);
    let o = fwbench(&["trace", "check", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_prints(
        &o,
        "18 operations from 1.198091s to 4.898232s (add 9, delete 9)",
    );
    for args in [
        "trace gen kube-proxy --services 5 --rate 4 --duration 3s --seed 3",
        "trace gen blocklist --entries 100000 --every 2s --duration 5s",
    ] {
        let text = gen(args);
        let f = d.write("g.trace", &text);
        let o = fwbench(&["trace", "check", f.to_str().unwrap()]);
        assert!(o.status.success(), "{args}: {}", stderr(&o));
    }
    assert!(gen("trace gen blocklist --every 2s --duration 5s").contains("\n1s replace 100000\n"));
}

/// Bad traces and bad combinations: exit 2, the message naming the file, line and
/// column (or the flags) and what was expected; no trial is run.
#[test]
fn bad_traces_and_combinations_are_refused_with_exit_2() {
    let d = TempDir::new();
    let bad = d.write("bad.trace", "0.5s add 1\n1.2s drop 1\n");
    let good = d.write("good.trace", "0.5s add 1\n1s add 1\n");
    let reload = d.write("reload.trace", "0.5s add 1\n1s delete 1\n2s reload\n");
    let (bad, good, reload) = (
        bad.to_str().unwrap(),
        good.to_str().unwrap(),
        reload.to_str().unwrap(),
    );
    let flow = |extra: &[&str]| {
        let mut a = argv("flow -r 1kpps -t 1 --no-store --engine nft");
        a.extend_from_slice(extra);
        fwbench(&a)
    };
    assert_refused(
        &flow(&["--event-trace", bad]),
        &format!(
            "{bad}:2:6: unknown operation 'drop': expected add, delete, replace, reload, \
             reload-set, add-elements or remove-elements"
        ),
    );
    assert_refused(
        &flow(&["--event-trace", reload]),
        &format!("{reload}:3:4: reload (line 3) and delete (line 2) in one trace"),
    );
    assert_refused(
        &flow(&["--event-trace", good, "--event-method", "flush-load"]),
        &format!("{good}:1: add 1: event method flush-load empties and loads again"),
    );
    for (flag, value) in [
        ("--event", "add:1@1s"),
        ("--event-rate", "2"),
        ("--event-count", "1"),
    ] {
        let o = flow(&["--event-trace", good, flag, value]);
        assert_refused(&o, "cannot be used with");
        assert_says(&o, "--event-trace <FILE>");
    }
    assert_refused(
        &flow(&["--event-trace", "/nonexistent/churn.trace"]),
        "/nonexistent/churn.trace: cannot read the event trace",
    );
    assert_refused(
        &fwbench(&argv(&format!(
            "echo -t 1 --no-store --engine nft --event-trace {good} --load 0.5"
        ))),
        "--load sets the packet rate of a flood or flow's background",
    );
    // `trace check`: the same message; `trace gen`: its own limits.
    assert_refused(
        &fwbench(&["trace", "check", bad]),
        &format!("{bad}:2:6: unknown operation 'drop'"),
    );
    assert_refused(
        &fwbench(&argv(
            "trace gen fail2ban --bans-per-s 100 --duration 200s --ban-time 1s",
        )),
        "a trace holds at most 10000",
    );
    // A scenario's trace, relative to it, in a dry run.
    let sc = d.write(
        "s.toml",
        "workload = \"flow\"\n[params]\nrate = \"1kpps\"\nengine = \"nft\"\n\
         event_trace = \"bad.trace\"\n",
    );
    assert_refused(
        &fwbench(&["run", sc.to_str().unwrap(), "--dry-run"]),
        &format!(
            "{}:2:6: unknown operation 'drop'",
            d.path().join("bad.trace").display()
        ),
    );
}

/// A replayed trace of four operations on a flow through nft stores one
/// `gateway_updates` row per operation, each with its commit latency; the first (the
/// marker's drop rule, in force to the end) with its time to effect; the JSON gives
/// the spread of the four commits.
#[root_test(tb = "forward")]
fn a_replayed_trace_stores_one_row_per_operation_with_its_commit_latency() {
    let d = TempDir::new();
    let trace = d.write(
        "churn.trace",
        "# four operations\nformat 1\n0.5s add 1\n0.9s add 2\n1.2s delete 1\n1.5s delete 2\n",
    );
    let db = d.file("r.db");
    let o = fwbench(&cmd!(
        "flow --testbed",
        &tb.name,
        "--db",
        &db,
        "--json -r 20kpps --flows 2 --sources 2 -t 2 --engine nft --rules 100 --event-trace",
        &trace
    ));
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    updates_stored(&db, &o, 4);
    let count = |sql: &str| sqlite_count(&db, sql);
    let seen = || format!("{}\n{}", stdout(&o), stderr(&o));
    // One row per operation, in the trace's order: event i is operation i.
    for (i, kind, k) in [
        (0, "add", 1),
        (1, "add", 2),
        (2, "delete", 1),
        (3, "delete", 2),
    ] {
        assert_eq!(
            count(&format!(
                "SELECT count(*) FROM gateway_updates WHERE event = {i} AND kind = '{kind}' \
                 AND k = {k}"
            )),
            1,
            "operation {i}: {}",
            seen()
        );
    }
    assert_eq!(
        count(
            "SELECT count(*) FROM gateway_updates WHERE time_to_effect_ms IS NOT NULL \
             AND event = 0"
        ),
        1,
        "{}",
        seen()
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let spread = &v["result"]["events"]["spread"];
    assert_eq!(u(&spread["updates"]), 4, "{v}");
    assert!(f(&spread["commit_ms"]["max"]) >= f(&spread["commit_ms"]["p50"]));
    assert!(
        v["params"].to_string().contains("\"operations\":4"),
        "{}",
        v["params"]
    );
}
