//! Rules under load the way FD.io CSIT measures reconfiguration (issue 37 §1): the
//! background offered at a share of what the gateway forwards at the installed size
//! (`--load`, found by a short search first), the update judged against the trial's
//! quiet window. Bad input needs no root; the trials do (ignored without it).

mod util;

use util::*;

/// A `kind` trial (flow, flood) of 2 flows from 2 sources through 5 000 nft rules on a
/// testbed of its own, with `extra` flags; its JSON (it must exit 0).
fn at_5000_nft_rules(kind: &str, extra: &str) -> serde_json::Value {
    let tb = TestbedGuard::up("forward");
    let trial = cmd!(
        kind,
        "--testbed",
        &tb.name,
        "--no-store --json --engine nft --rules 5000 --flows 2 --sources 2"
    );
    json_of(&[&trial[..], &argv(extra)[..]].concat())
}

/// `--load` is refused where it cannot mean anything, before any host is touched.
#[test]
fn a_load_is_refused_where_it_sets_no_rate() {
    refused([
        (
            "echo --event add:1@1s --load 0.5 --engine nft",
            "--load sets the packet rate of a flood or flow",
        ),
        ("flow --load 1.5 --event add:1@1s", "the share '1.5'"),
        ("flow --load 0.5@max --event add:1@1s", "the rate 'max'"),
        (
            "flow --load 0.5 -r 20kpps --event add:1@1s",
            "cannot be used with",
        ),
        ("flow --load 0.5", "--event"),
        (
            "ndr --event add:1@1s --load 0.5 --engine nft",
            "a search over the rate or the rule count sets them",
        ),
        (
            "degrade -r 1kpps --event add:1@1s --load 0.5 --engine nft",
            "a search over the rate or the rule count sets them",
        ),
    ]);
}

/// The README tour's shape at a size this machine carries in test time: nft with 5 000
/// rules, the background at half of what a short search found it forwards there. The
/// update's witness holds (not overloaded before it), it has a stall figure, judged
/// against the trial's quiet window, and the capacity and share are in the JSON.
#[root_test]
fn half_the_capacity_found_first_gives_an_update_whose_witness_holds() {
    let v = at_5000_nft_rules("flow", "-t 3 --event add:1@1500ms --load 0.5");
    let e = &v["result"]["events"];
    let c = &e["load"]["capacity"];
    let pps = f(&c["pps"]);
    assert!(pps > 0.0, "{e}");
    // Half the capacity, to the last bits of a float through JSON.
    let half = f(&c["background_pps"]);
    assert!((half - pps * 0.5).abs() <= 1e-9 * pps, "{c}");
    assert!(u(&c["search"]["trials"]) >= 2, "{c}");
    assert_eq!(f(&e["load"]["fraction"]), 0.5);
    // The trial ran at that share.
    let offered = f(&v["result"]["offered_pps"]);
    assert!(
        (offered - pps * 0.5).abs() < pps * 0.05,
        "offered {offered} of {pps}"
    );
    let up = &e["updates"][0];
    assert!(up["doubts"].is_null(), "{up}");
    assert!(up["stall_ms"].is_number(), "{up}");
    assert_eq!(up["baseline"], "quiet", "{up}");
    assert!(
        e["quiet"]["ms"].as_f64().unwrap() >= 400.0,
        "{}",
        e["quiet"]
    );
    assert!(f(&up["time_to_effect_ms"]) >= 0.0, "{up}");
    assert_ne!(v["status"], "flagged", "{}", v["doubts"]);
}

/// Without `--load`, a background far above what the gateway forwards at 5 000 nft
/// rules (an unpaced flood): the update is flagged overloaded, and the flag says what
/// to do.
#[root_test]
fn an_overloaded_background_without_load_is_flagged_with_the_suggestion() {
    let v = at_5000_nft_rules("flood", "-t 2 --event add:1@1s");
    assert_eq!(v["status"], "flagged", "{v}");
    let up = &v["result"]["events"]["updates"][0];
    let doubts = up["doubts"].to_string();
    // Overloaded, with what to do; or (a CI run) the flood's sender, starved by the
    // gateway's softirq, sent nothing in the 50 ms before the update: an empty window,
    // flagged as such — never a stall or loss figure stated.
    let starved = up["doubts"]
        .as_array()
        .is_some_and(|d| d.iter().any(|d| d["kind"] == "empty_window"));
    if !starved {
        assert!(doubts.contains("overloaded"), "{doubts}");
        assert!(doubts.contains("--load 0.5"), "{doubts}");
    }
}

/// `event_load` in a scenario (issue 37): two repetitions of two configurations that
/// differ only in their update method rest on one capacity search, run before the
/// first warm-up and stored as flood trials of the run — not one search per
/// repetition or warm-up. Every trial ran at half of that one capacity.
#[root_test]
fn a_scenario_searches_the_capacity_once_and_stores_its_floods() {
    let (dir, scenario) = TempDir::with_text(
        "load.toml",
        "name = \"load once\"\nworkload = \"flow\"\nrepetitions = 2\nwarmup = \"500ms\"\n\
         [params]\nengine = \"nft\"\nrules = 2000\nflows = 2\nclients = 2\n\
         duration = \"2s\"\nevent = \"add:1@1s\"\nevent_load = \"0.5\"\n\
         event_method = [\"batch\", \"per-rule\"]\n",
    );
    let run = |db: &std::path::Path| fwbench(&["run", scenario.arg(), "--db", db.arg(), "--json"]);
    let mut db = dir.file("r.db");
    let mut o = run(&db);
    // A busy host can contradict every zero-loss flood near the capacity (a CI run: 14
    // trials, each pass failing its confirmation): that search honestly finds none and
    // the run stops. This test's subject is the one search and its stored floods, so it
    // runs once more, in a results file of its own (resuming would reuse those floods).
    if stderr(&o).contains("no capacity to offer a share of") {
        eprintln!("no capacity found on this busy host: once more");
        db = dir.file("r2.db");
        o = run(&db);
    }
    let err = stderr(&o);
    assert!(o.status.success(), "{err}\n{}", stdout(&o));
    assert_eq!(
        err.matches("finding what the gateway forwards").count(),
        1,
        "{err}"
    );
    let trials: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["result"]["events"].is_object())
        .collect();
    assert_eq!(trials.len(), 4, "{}", stdout(&o));
    let loads: Vec<&serde_json::Value> = trials
        .iter()
        .map(|v| &v["result"]["events"]["load"]["capacity"])
        .collect();
    let searched = u(&loads[0]["search"]["trials"]);
    assert!(searched >= 2, "{}", loads[0]);
    for c in &loads {
        assert_eq!(c, &loads[0], "one capacity for every trial");
    }
    for v in &trials {
        let offered = f(&v["result"]["offered_pps"]);
        let half = f(&loads[0]["background_pps"]);
        assert!((offered - half).abs() < half * 0.05, "{offered} vs {half}");
    }
    // The search's floods: trials of the run, once; the four flow trials beside them.
    let floods = sqlite_count(&db, "SELECT count(*) FROM trials WHERE workload = 'flood'");
    assert_eq!(floods as u64, searched, "{err}");
    let flows = sqlite_count(&db, "SELECT count(*) FROM trials WHERE workload = 'flow'");
    assert_eq!(flows, 4);
}

/// An envelope at half the capacity (`--load` with `fwbench envelope`): the capacity is
/// found once, before the steps (its floods stored as the session's capacity steps),
/// every step's background offered at half of it, and the text, the stored answer and
/// the report's finding say so.
#[root_test(tb = "forward")]
fn an_envelope_at_half_the_capacity_finds_it_once() {
    let dir = TempDir::new();
    let db = dir.file("envelope.db");
    let args = cmd!(
        "envelope --testbed",
        &tb.name,
        "--db",
        &db,
        "--engine nft --rules 2000 --flows 2 --sources 2 --event add:1@1s -t 3",
        "--load 0.5 --max-update-rate 20 --max-trials 2"
    );
    let o = fwbench(&args);
    let (out, err) = (stdout(&o), stderr(&o));
    // Two steps need not converge: exit 0 or 1, never a refusal or a failure.
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}\n{out}");
    assert_eq!(
        err.matches("finding what the gateway forwards").count(),
        1,
        "{err}"
    );
    assert!(out.contains("background at 50 % of "), "{out}");
    let q = |sql: &str| sqlite_text(&db, sql);
    let floods = sqlite_count(&db, "SELECT count(*) FROM trials WHERE workload = 'flood'");
    assert!(floods >= 2, "{err}");
    assert_eq!(
        q("SELECT DISTINCT json_extract(results, '$.step_of') FROM trials WHERE workload = 'flood'"),
        "capacity"
    );
    // Every step at half the one capacity, as its parameters record it.
    let capacity: f64 = q("SELECT DISTINCT json_extract(params, \
           '$.packet.events.load.capacity.pps') FROM trials WHERE workload != 'flood'")
    .parse()
    .unwrap();
    let steps = q("SELECT offered_pps FROM trials WHERE workload = 'flow'");
    assert!(!steps.is_empty(), "{err}");
    for offered in steps.lines() {
        let offered: f64 = offered.parse().unwrap();
        let half = capacity / 2.0;
        assert!((offered - half).abs() < half * 0.05, "{offered} vs {half}");
    }
    let o = fwbench(&["report", db.to_str().unwrap(), "-f", "md", "-o", "-"]);
    let report = stdout(&o);
    assert!(
        report.contains(
            "Safe envelope of add:1 (batch) updates at 2000 rules (nft, background at 50 % of"
        ),
        "{report}"
    );
}

/// The same in a scenario (`workload = "envelope"`, `event_load`): the search runs at
/// the settled background, and the summary's rate is the one it ran at, not the rate as
/// written (the flow's default).
#[root_test]
fn a_scenario_envelope_runs_at_its_settled_load() {
    let (dir, scenario) = TempDir::with_text(
        "envelope-load.toml",
        "name = \"envelope under load\"\nworkload = \"envelope\"\n[params]\n\
         engine = \"nft\"\nrules = 1000\nflows = 2\nclients = 2\nduration = \"3s\"\n\
         event = \"add:1@1s\"\nevent_load = \"0.5\"\nmax_update_rate = 20\nmax_trials = 1\n",
    );
    let db = dir.file("r.db");
    let o = fwbench(&["run", scenario.arg(), "--db", db.arg()]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}\n{out}");
    assert_eq!(
        err.matches("finding what the gateway forwards").count(),
        1,
        "{err}"
    );
    let capacity: f64 = sqlite_text(
        &db,
        "SELECT json_extract(params, '$.packet.events.load.capacity.pps') FROM trials \
         WHERE workload = 'envelope'",
    )
    .parse()
    .unwrap();
    let row = out
        .lines()
        .find(|l| l.starts_with("1  envelope"))
        .unwrap_or_else(|| panic!("{out}"));
    // Its rate cell: the settled background (as `Rate` shows it: 6795pps, 6.8kpps).
    let cell = row
        .split_whitespace()
        .find(|w| w.ends_with("pps"))
        .unwrap_or_else(|| panic!("no rate in {row}"));
    let pps: f64 = match cell.trim_end_matches("pps").strip_suffix('k') {
        Some(k) => k.parse::<f64>().unwrap() * 1e3,
        None => cell.trim_end_matches("pps").parse().unwrap(),
    };
    let half = capacity / 2.0;
    assert!(
        (pps - half).abs() <= half * 0.01,
        "{row} (capacity {capacity})"
    );
    let offered = sqlite_text(
        &db,
        "SELECT offered_pps FROM trials WHERE workload = 'flow'",
    );
    let offered: f64 = offered.parse().unwrap();
    assert!(
        (offered - capacity / 2.0).abs() < capacity * 0.025,
        "{offered} vs {capacity}"
    );
    assert!(out.contains("background at 50 % of"), "{out}");
}
