//! `fwbench run` ends with its answer: the findings (ns per rule with its CI) after the
//! trial table, the legacy-table note said once, and `fwbench report --text` prints
//! the same findings. Needs root (namespaces); without it the test is reported as
//! ignored (skipped), never passed.

mod util;

use util::*;

/// A flood over 2 000/4 000/6 000 iptables-legacy rules, 2 repetitions of 1 s: a cost
/// line with a CI, and a legacy table left after every trial. (Over 0, 50 and 100
/// rules the sender was the limit of 5 of the 6 trials: no cost per rule is stated
/// from fwbench's own limit.)
const TINY: &str = "order = \"sequential\"\nrepetitions = 2\nworkload = \"flood\"\n\
[params]\nengine = \"iptables-legacy\"\nmodel = \"linear\"\nrules = [2000, 4000, 6000]\n\
size = 128\nrate = \"max\"\nduration = 1\n";

#[root_test]
fn run_prints_its_findings_last_and_the_legacy_table_once() {
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write("tiny.toml", TINY);
    let o = run_stored(&sc, &db);
    let out = stdout(&o);
    let stored = out.find("6 of 6 trials stored").expect(&out);
    let findings = out.find("Findings of run").expect(&out);
    assert!(stored < findings, "findings after the trial table: {out}");
    let tail = &out[findings..];
    assert!(tail.contains("ns per rule per packet"), "{tail}");
    assert!(tail.contains(" ± "), "a CI: {tail}");
    assert!(
        tail.trim_end()
            .ends_with(&format!("Details: fwbench report {}", db.display())),
        "where the details are, last: {tail}"
    );
    let err = stderr(&o);
    assert_eq!(
        err.matches("legacy table filter instantiated").count(),
        1,
        "said once per run: {err}"
    );
    assert!(
        err.contains("replaces the testbed after each such trial"),
        "{err}"
    );
    let r = fwbench(&["report", db.to_str().unwrap(), "--text"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let text = stdout(&r);
    assert!(text.starts_with("Findings of run"), "{text}");
    assert_eq!(
        text.lines().find(|l| l.contains("ns per rule")),
        tail.lines().find(|l| l.contains("ns per rule"))
    );
    assert!(!dir.file("report.html").exists());
}

/// A scenario that sets no pins (issue 37): nft at 0 and 3 000 rules, 2 repetitions of
/// 1 s. It is placed like `fwbench flood` (the gateway on a CPU of its own where there
/// are two), so the gateway's rate at 3 000 rules — a fraction of the 0-rule rate — is
/// never put down to fwbench's sender (unpinned, the gateway's softirq ran in the
/// sender's context and every trial read "limited by sender"); and with two rule counts
/// (no line) the cost per rule is printed as the segment between them.
#[root_test]
fn a_scenario_without_pins_prints_a_cost_and_never_blames_the_sender() {
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write(
        "nopin.toml",
        "order = \"sequential\"\nrepetitions = 2\nworkload = \"flood\"\n[params]\n\
         engine = \"nft\"\nmodel = \"linear\"\nrules = [0, 3000]\nsize = \"frame:64\"\n\
         rate = \"max\"\nduration = 1\n",
    );
    let o = fwbench(&["run", sc.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    let tail = &out[out.find("Findings of run").expect(&out)..];
    // A cost with its CI, or on a noisy machine "no measurable difference (± …)":
    // either way the segment is stated, never dropped — over the 0-rule trials the
    // sender did not limit: those it limited (the gateway forwarded all it was
    // offered) are left out and said so, and with none left no cost is stated.
    let sender_at_0 = sqlite_count(
        &db,
        "SELECT count(*) FROM trials WHERE json_extract(params, '$.rules') = 0 AND \
         json_extract(results, '$.packet.limited_by.by') = 'sender'",
    );
    let answer = tail
        .lines()
        .find(|l| l.contains("  * all: "))
        .unwrap_or_else(|| panic!("the cost per rule: {tail}"));
    match sender_at_0 {
        0 => assert!(
            answer.contains("from 0 to 3000 rules")
                && answer.contains("ns per rule")
                && answer.contains("± ")
                && !answer.contains("Left out"),
            "{answer}"
        ),
        1 => assert!(
            answer.contains("from 0 to 3000 rules (an end with one repetition: no CI)")
                && answer.contains(
                    "Left out: 1 trial (at 0 rules) limited by fwbench's sender, not by \
                     the gateway"
                ),
            "{answer}"
        ),
        _ => assert!(
            answer.contains(
                "no cost per rule is stated — 2 trials (at 0 rules) limited by fwbench's \
                 sender"
            ),
            "{answer}"
        ),
    }
    assert_eq!(
        err.matches(", limited by ").count(),
        4,
        "a verdict per trial: {err}"
    );
    // At 0 rules, with the gateway on a CPU of its own, the sender may truly be the
    // limit (the gateway forwards all it is offered); at 3 000 rules the gateway
    // forwards a fraction of that, and such a trial is never put down to the sender.
    let sender_at_3000 = sqlite_count(
        &db,
        "SELECT count(*) FROM trials WHERE json_extract(params, '$.rules') = 3000 AND \
         json_extract(results, '$.packet.limited_by.by') = 'sender'",
    );
    assert_eq!(sender_at_3000, 0, "{err}");
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(*) FROM trials WHERE json_extract(params, '$.rules') = 3000"
        ),
        2,
        "{err}"
    );
    // Placed as the trial commands are: the gateway on the last CPU where there are two.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pinned = sqlite_count(
        &db,
        &format!(
            "SELECT count(*) FROM trials WHERE json_extract(results, \
             '$.placement[0].requested_cpus') = '{}'",
            cpus - 1
        ),
    );
    assert_eq!(pinned, if cpus >= 2 { 4 } else { 0 }, "{err}");
}

/// `gateway_cpus` 1 vs 2 (sender and sink on CPU 0, 8 flows): the gateway's agent and
/// its interfaces' RPS/XPS masks get CPU 1, then CPUs 0-1 — recorded in the trial's
/// parameters and placement — and the gateway's softirq time moves: CPU 1 carries a
/// larger share of it with one gateway CPU than with two. The gateway's firewall drops
/// the flood (`filter-drop`), so the softirq time is the gateway's alone: what it
/// forwarded would be received on the sink's own CPU (its receive is steered there).
#[root_test]
fn gateway_cpus_moves_where_the_gateways_softirq_time_lands() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        panic!("this test needs 2 CPUs or more");
    }
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write(
        "g.toml",
        "order = \"sequential\"\nrepetitions = 2\nworkload = \"flood\"\n[testbed]\n\
         pin_client = \"0\"\npin_server = \"0\"\n[params]\nflows = 8\nsize = 128\n\
         rate = \"max\"\nduration = 2\ngateway_cpus = [1, 2]\n\
         engine = \"iptables-legacy\"\nmodel = \"filter-drop\"\n",
    );
    run_stored(&sc, &db);
    let last = std::thread::available_parallelism().unwrap().get() - 1;
    let want = |n: u32| {
        if n == 1 {
            last.to_string()
        } else {
            format!("{}-{last}", last - 1)
        }
    };
    let share = |n: u32| -> f64 {
        let placed = sqlite_count(
            &db,
            &format!(
                "SELECT count(*) FROM trials WHERE json_extract(params, '$.gateway_cpus') = {n} \
                 AND json_extract(results, '$.placement[0].requested_cpus') = '{}'",
                want(n)
            ),
        );
        assert_eq!(
            placed,
            2,
            "gateway_cpus = {n}: the gateway on CPUs {}",
            want(n)
        );
        let soft = |cpu: usize| {
            sqlite_count(
                &db,
                &format!(
                    "SELECT CAST(1000 * avg(s.value) AS INTEGER) FROM samples s JOIN trials t \
                     ON t.id = s.trial_id WHERE s.role = 'gateway' AND s.metric = \
                     'cpu{cpu}.softirq' AND json_extract(t.params, '$.gateway_cpus') = {n}"
                ),
            ) as f64
        };
        let (lo, hi) = (soft(last - 1), soft(last));
        assert!(lo + hi > 0.0, "softirq sampled");
        hi / (lo + hi)
    };
    let (one, two) = (share(1), share(2));
    assert!(
        one > two,
        "CPU {last}'s share of the softirq time: {one:.2} with 1 gateway CPU, {two:.2} with 2"
    );
}

/// `fwbench workload` stores its commands as a run; `fwbench report --text` states it.
#[root_test]
fn workload_results_are_stored_and_reported() {
    let (dir, db) = TempDir::with_file("w.db");
    let w = dir.write("w.txt", "sequential 3 {\n  command \"true\"\n}\n");
    let o = fwbench(&[
        "workload",
        w.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(*) FROM trials WHERE workload = 'worklang' AND status = 'ok'"
        ),
        1
    );
    let r = fwbench(&["report", db.to_str().unwrap(), "--text"]);
    let text = stdout(&r);
    assert!(text.contains("3 commands in"), "{text}");
    assert!(text.contains("0 failed"), "{text}");
}

/// Seed 001's ipset and string rows on the study's path: the flood is matched (the
/// client's own pair in the set; the probe magic in the payload) and dropped, so
/// nothing reaches a sink and the verdict check counts every packet on the match rule.
#[root_test]
fn ipset_and_string_drop_models_match_and_drop_the_flood() {
    for (engine, model, rules) in [
        ("ipset-legacy", "linear-drop", "1000"),
        ("nft-set", "linear-drop", "1000"),
        ("iptables-legacy", "string-bm-drop", "3"),
        ("iptables-legacy", "string-kmp-drop", "3"),
    ] {
        let v = json_of(&cmd!(
            "flood --engine",
            engine,
            "--model",
            model,
            "--rules",
            rules,
            "--sink gateway --size 128 -t 1 --no-store --json"
        ));
        assert_eq!(v["status"], "ok", "{engine} {model}: {v}");
        let verdicts = &v["gateway"]["firewall"]["verdicts"];
        assert_eq!(verdicts["ok"], true, "{engine} {model}: {verdicts}");
        assert!(
            u(&verdicts["matched_packets"]) > 100,
            "{engine} {model}: {verdicts}"
        );
        assert_eq!(u(&verdicts["filler_packets"]), 0, "{engine} {model}");
    }
}
