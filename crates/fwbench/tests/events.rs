//! Privileged: gateway events during a packet trial (issue 25), end to end — the
//! update that adds a drop rule for the marker flow is seen taking effect at the
//! sink, one row per scheduled update comes back, and the loss counted in the
//! sink's time bins equals the trial's loss. Without root: ignored (skipped).

mod util;

use serde_json::Value;
use util::*;

/// A 2 s flow of 2 sources at 20 kpps through `engine` with 100 rules (must succeed).
fn flow(tb: &str, engine: &str, extra: &[&str]) -> Value {
    let flow = argv("-r 20kpps --flows 2 --sources 2 -t 2 --rules 100");
    let a = [
        &cmd!("flow --testbed", tb, "--no-store --json --engine", engine),
        &flow[..],
        extra,
    ];
    let v = json_of(&a.concat());
    match flagged_for_noise(&v) {
        Some(why) => {
            eprintln!("{engine}: flagged for this machine's noise ({why}): once more");
            json_of(&a.concat())
        }
        None => v,
    }
}

#[root_test(tb = "forward")]
fn an_added_drop_rule_takes_effect_for_every_engine() {
    for &engine in NETFILTER_ENGINES {
        let v = flow(&tb.name, engine, &["--event", "add:1@800ms"]);
        assert_eq!(v["status"], "ok", "{engine}: {v}");
        let r = &v["result"];
        let e = &r["events"];
        let ups = e["updates"].as_array().unwrap();
        assert_eq!(ups.len(), 1, "{engine}: one row per scheduled update");
        assert_eq!(v["gateway"]["updates"].as_array().unwrap().len(), 1);
        let up = &ups[0];
        assert!(up["error"].is_null(), "{engine}: {up}");
        let tte = f(&up["time_to_effect_ms"]);
        // Never negative: within the stamps' resolution a negative estimate is 0, beyond
        // it the figure is withheld (and the trial flagged).
        assert!(
            (0.0..2000.0).contains(&tte),
            "{engine}: time to effect {tte} ms"
        );
        assert!(f(&up["commit_ms"]) > 0.0, "{engine}: {up}");
        // The marker flow is dropped from then on: loss, all of it in the bins.
        assert!(u(&r["lost"]) > 0, "{engine}");
        assert_eq!(
            u(&e["bins_lost"]),
            u(&r["lost"]),
            "{engine}: bins vs trial loss"
        );
        assert_eq!(u(&e["unbinned_lost"]), 0, "{engine}");
        // Undone before the verdicts: the rule set is as installed.
        assert_eq!(v["verdicts"]["ok"], true, "{engine}: {}", v["verdicts"]);
    }
}

/// Issue 37: the marker flow's packets the added rule drops on purpose are the
/// experiment, not the gateway's limit — counted (`events.marker_dropped`), taken out of
/// what `limited_by` judges and said. The trial's loss beyond them decides whether the
/// gateway is named (0 rules at 20 kpps: every measured trial read "loss 33.3 %,
/// limited by gateway" for the marker alone).
#[root_test(tb = "forward")]
fn the_markers_intended_drops_are_not_the_gateways_limit() {
    let a = [
        &cmd!("flow --testbed", &tb.name, "--no-store --json --engine nft")[..],
        &argv("-r 20kpps --flows 2 --sources 2 -t 2 --rules 0 --event add:1@800ms"),
    ];
    let v = json_of(&a.concat());
    let r = &v["result"];
    let dropped = u(&r["events"]["marker_dropped"]);
    let (sent, lost) = (u(&r["sent"]), u(&r["lost"]));
    // The marker is half the packets, dropped for 1.2 s of 2.
    assert!(
        dropped > sent / 5 && dropped <= lost,
        "{dropped} of {lost} lost: {r}"
    );
    let l = &r["limited_by"];
    let why = l["why"].as_str().unwrap_or("");
    assert!(
        why.contains(&format!("{dropped} marker packets")) && why.contains("as intended"),
        "{l}"
    );
    // Only a loss beyond the marker's (more than the judge's 0.1 %) may name the gateway.
    if (lost - dropped) * 1000 <= sent {
        assert_ne!(l["by"], "gateway", "{l}");
    }
}

/// The stored per-update rows of a trial of 4 scheduled updates: 4, all committed,
/// the first (the marker's) with a time to effect.
/// `o`: the run's output, shown when a count is not what it should be.
fn four_rows_stored(db: &std::path::Path, o: &std::process::Output) {
    updates_stored(db, o, 4);
    assert_eq!(
        sqlite_count(
            db,
            "SELECT count(*) FROM gateway_updates WHERE time_to_effect_ms IS NOT NULL"
        ),
        1,
        "{}\n{}",
        stdout(o),
        stderr(o)
    );
}

#[root_test(tb = "forward")]
fn repeated_updates_are_stored_one_row_each_and_deletions_take_effect() {
    let (_dir, db) = TempDir::with_file("r.db");
    let o = fwbench(&cmd!("flow --testbed", &tb.name, "--db", &db, "-r 20kpps --flows 2 --sources 2 -t 2 --engine nft --rules 100 --event add:2@500ms --event-rate 4 --event-count 4"));
    assert!(o.status.success(), "{}", stderr(&o));
    four_rows_stored(&db, &o);
    // A deletion lets the marker flow through: its first packet dates the effect.
    let v = flow(
        &tb.name,
        "iptables-nft",
        &["--event", "delete:1@800ms", "--event-method", "per-rule"],
    );
    assert_eq!(v["status"], "ok", "{v}");
    let e = &v["result"]["events"];
    let tte = f(&e["updates"][0]["time_to_effect_ms"]);
    assert!(tte > -5.0 && tte < 2000.0, "time to effect {tte} ms");
    assert_eq!(u(&e["bins_lost"]), u(&v["result"]["lost"]));
}

#[root_test(tb = "forward")]
fn an_added_set_element_drops_the_marker_and_the_verdicts_say_whose_packets_they_are() {
    for engine in ["nft-set", "ipset-nft"] {
        let v = flow(&tb.name, engine, &["--event", "add-elements:1@800ms"]);
        assert_eq!(v["status"], "ok", "{engine}: {v}");
        let lost = u(&v["result"]["lost"]);
        assert!(lost > 0, "{engine}: the marker flow is dropped");
        // The set's rule counted the marker flow once its element was in: the
        // events' packets, not a filler's, and every one of them was lost.
        let vd = &v["verdicts"];
        assert_eq!(vd["ok"], true, "{engine}: {vd}");
        assert_eq!(u(&vd["filler_packets"]), 0, "{engine}: {vd}");
        assert_eq!(u(&vd["event_packets"]), lost, "{engine}: {vd}");
    }
}

/// A 2 s trial of `kind` through `engine` with 100 rules and `extra` flags.
fn rr(tb: &str, kind: &str, engine: &str, extra: &[&str]) -> Value {
    let a = [
        &cmd!("-t 2 --rules 100 --event add:1@800ms --engine", engine)[..],
        extra,
    ];
    trial_value(kind, tb, &a.concat())
}

#[root_test(tb = "forward")]
fn an_added_drop_rule_takes_effect_during_echo_ping_and_sessions() {
    // Echo over UDP through every netfilter engine: client 1 (the marker) loses its
    // echoes from then on (one per timeout), the other clients are the background.
    for &engine in NETFILTER_ENGINES {
        let v = rr(&tb.name, "echo", engine, &argv("-P udp -n 3"));
        let r = &v["result"];
        let ctx = format!("echo udp {engine}");
        update_took_effect(&v, &ctx, u(&r["lost"]) + u(&r["unsent"]));
        assert!(u(&r["lost"]) > 0, "{ctx}: the marker's echoes are lost");
        assert_eq!(v["result"]["events"]["background_streams"], 2, "{ctx}");
    }
    for engine in ["nft", "iptables-legacy"] {
        // TCP: the marker's connection stalls; its last echo counts as lost.
        let v = rr(&tb.name, "echo", engine, &argv("-P tcp -n 3"));
        let r = &v["result"];
        let ctx = format!("echo tcp {engine}");
        update_took_effect(&v, &ctx, u(&r["lost"]) + u(&r["unsent"]));
        assert!(u(&r["lost"]) > 0, "{ctx}: {v}");
        // Ping: the marker is a stream of paced probes of its own; the ping itself
        // (the background) keeps its echoes.
        let v = rr(&tb.name, "ping", engine, &[]);
        let ctx = format!("ping {engine}");
        update_took_effect(&v, &ctx, u(&v["result"]["lost"]));
        assert_eq!(v["result"]["events"]["marker_src"], "198.18.1.2", "{ctx}");
        assert_eq!(v["result"]["events"]["unit"], "probe", "{ctx}");
        // Sessions: the marker is a stream of the smallest sessions from client 2;
        // the workload's sessions (client 1) are the background.
        let v = rr(&tb.name, "sessions", engine, &argv("-p 2"));
        let ctx = format!("sessions {engine}");
        update_took_effect(&v, &ctx, u(&v["result"]["failed"]));
        assert!(u(&v["result"]["sessions"]) > 100, "{ctx}: {v}");
    }
}

#[root_test(tb = "forward")]
fn echo_updates_are_stored_one_row_each_and_reported() {
    let (_dir, db) = TempDir::with_file("r.db");
    let o = fwbench(&cmd!(
        "echo --testbed",
        &tb.name,
        "--db",
        db.to_str().unwrap(),
        "-P udp -n 3 -t 2 --engine nft --rules 100 --event add:2@500ms --event-rate 4 --event-count 4"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    four_rows_stored(&db, &o);
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(*) FROM gateway_updates WHERE series IS NOT NULL"
        ),
        4
    );
    // The report reads them in echo's words.
    let o = fwbench(&["report", db.to_str().unwrap(), "-f", "md", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    for want in [
        "with nft by batch during echo took",
        "echoes lost or unsent",
        // The trial's four updates drawn in one figure (issue 37).
        "Background echoes completed around 4 updates of trial",
    ] {
        assert!(md.contains(want), "no {want:?} in\n{md}");
    }
}

#[root_test(tb = "forward")]
fn a_deletion_lets_the_marker_through_during_echo_and_bad_combinations_exit_2() {
    // The marker client's echoes are dropped until the deletion (each lost one waits
    // the timeout: 50 ms here, the precision of this time to effect).
    let v = trial_value(
        "echo",
        &tb.name,
        &argv("-P udp -n 2 -t 2 --timeout-ms 50 --engine iptables-nft --rules 100 --event delete:1@800ms --event-method per-rule"),
    );
    let r = &v["result"];
    let tte = update_took_effect(&v, "echo delete", u(&r["lost"]) + u(&r["unsent"]));
    assert!(
        tte > 0.0 && tte < 200.0,
        "about one timeout after the commit: {tte} ms"
    );
    // Refused before any host is touched, exit 2, saying why.
    for (args, why) in [
        ("echo -P tcp --engine nft --event delete:1@1s", "use -P udp"),
        (
            "sessions --topology input --engine nft --event add:1@1s",
            "topology input",
        ),
        (
            "http --client-program curl --engine nft --event add:1@1s",
            "built-in client",
        ),
        ("ping --event add:1@1s", "give an --engine other than none"),
        // Due at the end of the traffic: it would never run.
        (
            "flow -r 10kpps --engine nft --event add:1@2s",
            "--event add:1@2s: due at 2 s, not before the end of the trial's 2 s of traffic",
        ),
        (
            "flow -r 10kpps --engine nft --event add:1@1s --event-rate 2 --event-count 3",
            "the last is due at 2 s",
        ),
    ] {
        let mut a = argv(args);
        a.extend(["--testbed", &tb.name, "--no-store", "-t", "2"]);
        let o = fwbench(&a);
        assert_refused(&o, why);
    }
}

/// A paced background the gateway cannot carry fills a queue before the first update,
/// with nothing lost yet. At 20 000 nft rules and 4 kpps (measured: about 3 500 pps
/// carried) that trial was `ok`, its update "stalled 0 ms; 0 packets lost"; it is
/// flagged overloaded, saying how much the queue held (15–16 % here). More rules
/// overflow the gateway's backlog within the second (30 000: a step, then loss — the
/// loss check's case, not this). At 100 rules the same background is carried and
/// nothing is said.
#[root_test(serial, tb = "forward")]
fn a_background_queueing_before_the_update_is_an_overload() {
    let flow = |rules: &str| {
        let line = format!(
            "-t 3 --engine nft --rules {rules} -r 4kpps --flows 2 --sources 2 --event add:1@1s"
        );
        trial_value("flow", &tb.name, &argv(&line))
    };
    let queued = |v: &Value| {
        v["doubts"].as_array().into_iter().flatten().any(|d| {
            d["kind"] == "overloaded"
                && d["why"]
                    .as_str()
                    .is_some_and(|w| w.contains("one-way delay grew evenly"))
        })
    };
    let over = flow("20000");
    assert_eq!(over["status"], "flagged", "{}", over["error"]);
    assert!(queued(&over), "{}", over["doubts"]);
    let carried = flow("100");
    assert!(!queued(&carried), "{}", carried["doubts"]);
}
