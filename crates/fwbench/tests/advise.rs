//! `fwbench rules advise` end to end: a ruleset with no safe rewrite is left alone
//! (unprivileged); a generated 5 000-rule blocklist plus service rules is rewritten,
//! both rulesets give the same verdicts on the testbed and the optimised one costs at
//! least 3× less per packet that passes the whole blocklist (privileged; the 10× it
//! gives on a quiet machine is `bench/advise_saving.sh`).

mod util;

use serde_json::Value;
use std::process::Output;
use util::*;

/// Policy drop, a jump into a blocklist of `n` documentation addresses, then the
/// services: tcp 22, 80, 443 and udp 5000.
fn blocklist(n: usize) -> String {
    let mut t = String::from(
        "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n\
         :BLOCK - [0:0]\n-A INPUT -j BLOCK\n",
    );
    for i in 0..n {
        let (a, b) = if i < 1024 {
            (198 * 256 + 51, (100 + i / 256) * 256 + i % 256)
        } else {
            (203 * 256, ((i / 256) % 256) * 256 + i % 256)
        };
        t += &format!(
            "-A BLOCK -s {}.{}.{}.{}/32 -j DROP\n",
            a / 256,
            a % 256,
            b / 256,
            b % 256
        );
    }
    t + "-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n\
         -A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\n\
         -A INPUT -p tcp -m tcp --dport 443 -j ACCEPT\n\
         -A INPUT -p udp -m udp --dport 5000 -j ACCEPT\nCOMMIT\n"
}

#[test]
fn a_ruleset_with_no_safe_rewrite_is_left_alone() {
    let (dir, f) = TempDir::with_text(
        "host.rules",
        "*filter\n:INPUT DROP [0:0]\n\
         -A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n\
         -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n\
         -A INPUT -m recent --name ssh --set\n\
         -A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\nCOMMIT\n",
    );
    let out = dir.file("opt.rules");
    let s = advise_ok(f.to_str().unwrap(), &["--out", out.to_str().unwrap()]);
    assert!(s.contains("4 rules → 4 rules"), "{s}");
    assert!(
        s.contains("no safe rewrite found: nothing changed, nothing written"),
        "{s}"
    );
    assert!(s.contains("line 3: stateful match `-m conntrack`"), "{s}");
    assert!(!out.exists(), "nothing is written");
    // Bad input: exit 2, naming the file and line.
    std::fs::write(
        &f,
        "*filter\n:INPUT DROP [0:0]\n-A INPUT -s 198.19.0.1\0 -j DROP\nCOMMIT\n",
    )
    .unwrap();
    let o = advise(f.to_str().unwrap(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(&o, "host.rules:3: control character U+0000");
}

#[test]
fn a_blocklist_is_rewritten_into_one_set_with_its_ipset() {
    let (dir, f) = TempDir::with_text("bl.rules", blocklist(300));
    let out = dir.file("bl.opt");
    let o = advise(f.to_str().unwrap(), &["--out", out.to_str().unwrap(), "-J"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (u(&v["rules_before"]), u(&v["rules_after"])),
        (305, 4),
        "{v}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("-A BLOCK -m set --match-set fwbench-advise-1 src -j DROP\n"));
    let ipset = std::fs::read_to_string(dir.file("bl.opt.ipset")).unwrap();
    assert_eq!(ipset.lines().count(), 301, "{ipset}");
}

/// `fwbench rules advise --import FILE ARGS…`.
fn advise(file: &str, args: &[&str]) -> Output {
    fwbench(&[&["rules", "advise", "--import", file], args].concat())
}

/// [`advise`] that must succeed: its stdout.
fn advise_ok(file: &str, args: &[&str]) -> String {
    let o = advise(file, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// [`advise_ok`] of the fixture `name`, the advised ruleset written to `out`.
fn advise_fixture_into(name: &str, out: &std::path::Path) -> String {
    advise_ok(&fixture(name), &["--out", out.to_str().unwrap()])
}

/// `--measure` on a testbed: two interleaved 1 s floods per ruleset to `dport`.
fn measure<'a>(tb: &'a str, dport: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let m = [
        "--measure",
        "--testbed",
        tb,
        "--dport",
        dport,
        "--repeat",
        "2",
        "-t",
        "1",
    ];
    [&m[..], extra].concat()
}

/// A ruleset file of the firewall crate's fixtures.
fn fixture(name: &str) -> String {
    format!(
        "{}/../firewall/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `nft -c` accepts the file, in a throwaway network namespace.
fn assert_nft_loads(path: &std::path::Path) {
    let o = std::process::Command::new("unshare")
        .args(["--net", "nft", "-c", "-f"])
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "nft -c: {}", stderr(&o));
}

/// A flood through the nft engine with `file` imported and the arguments `extra` (split
/// at white space); its JSON whatever the verdict.
fn flood(tb: &str, file: &str, extra: &str) -> Value {
    trial_value(
        "flood",
        tb,
        &[&["--engine", "nft", "--import", file], &argv(extra)[..]].concat(),
    )
}

// Floods and probes of the other tests would slow this one's (one at a time).
#[root_test(serial, tb = "input")]
fn a_5000_rule_blocklist_is_equivalent_on_the_testbed_and_cheaper() {
    let (dir, f) = TempDir::with_text("bl.rules", blocklist(5000));
    let opt = dir.file("bl.nft");
    let s = advise_ok(
        f.to_str().unwrap(),
        &["--out", opt.to_str().unwrap(), "--as", "nft"],
    );
    assert!(s.contains("5005 rules → 4 rules"), "{s}");
    // The iptables output (the input's own format) loads with its ipset, in a
    // throwaway network namespace (ipsets and iptables rules are per namespace).
    let ipt = dir.file("bl.opt");
    let o = advise(f.to_str().unwrap(), &["--out", ipt.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = std::process::Command::new("unshare")
        .args([
            "--net",
            "sh",
            "-ec",
            "ipset restore < \"$1.ipset\"; iptables-legacy-restore < \"$1\"; \
             iptables-legacy-save | grep -c -- '-A '",
            "sh",
            ipt.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        "4",
        "the 4 rules of the optimised ruleset"
    );
    let orig = dir.file("bl.nft.orig.nft");
    let (orig, opt) = (orig.to_str().unwrap(), opt.to_str().unwrap());
    // Same verdicts on the testbed: udp 5000 passes the blocklist and is accepted by
    // the same rule; udp 7000 is dropped by INPUT's policy; in both rulesets.
    for file in [orig, opt] {
        let v = flood(&tb.name, file, "-t 1 -r 5kpps --dport 5000");
        assert_eq!(v["status"], "ok", "{file}: {v}");
        let took = v["verdicts"]["took"].as_str().unwrap();
        assert!(took.contains("udp dport 5000"), "{file}: {took}");
        let v = flood(&tb.name, file, "-t 1 -r 5kpps --dport 7000");
        assert_eq!(v["status"], "dropped", "{file}: {v}");
        let sent = u(&v["result"]["sent"]);
        assert_eq!(u(&v["verdicts"]["policy_drops"]), sent, "{file}: {v}");
    }
    // Cost per packet aimed at the last rule (1 / received packets per second at the
    // highest rate): the set lookup replaces 5 000 rules. The best of two floods each:
    // other work on this shared machine only ever slows a flood down (one flood under
    // load once gave the optimised ruleset a fifth of its usual rate). Issue 24: at a
    // load average of 9–11 the ratio was 10.9–24 (the optimised ruleset's rate is the
    // sender's CPU share), `--measure`'s 16–33; the test asserts 3× (a ruleset that
    // still walks the blocklist is ~1×), the 10× claim is `bench/advise_saving.sh`.
    let pps = |file: &str| {
        (0..2)
            .map(|_| {
                let v = flood(&tb.name, file, "-t 2 -r max --dport 5000");
                assert_eq!(v["status"], "ok", "{file}: {v}");
                util::f(&v["result"]["received_pps"])
            })
            .fold(0.0, f64::max)
    };
    let (before, after) = (pps(orig), pps(opt));
    eprintln!("received pps: original {before:.0}, optimised {after:.0}");
    assert!(
        after >= 3.0 * before,
        "optimised {after:.0} pps vs original {before:.0} pps: less than 3× cheaper"
    );
    // The same, by the command: interleaved floods, the saving with its CI.
    let o = advise(f.to_str().unwrap(), &measure(&tb.name, "5000", &["-J"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The proof on the testbed ran first: every class sent, each blocked source its
    // own class, all met the same fate in both rulesets and the model's. Delivered:
    // udp 5000 from below, between and above the blocklist's two blocks
    // (198.51.100.0-198.51.103.255, 203.0.0.0-…), and tcp 22, 80, 443.
    let p = &v["testbed_proof"];
    assert!(u(&p["classes"]) > 5000, "{p}");
    assert_eq!(u(&p["delivered"]), 6, "{p}");
    assert_eq!(p["not_sent"].as_array().unwrap().len(), 0, "{p}");
    let m = &v["measured"];
    let best = |k: &str| {
        m[k].as_array()
            .unwrap()
            .iter()
            .map(util::f)
            .fold(f64::INFINITY, f64::min)
    };
    eprintln!(
        "measured ns per packet: original {}, optimised {}",
        best("original_ns"),
        best("optimised_ns")
    );
    assert!(best("original_ns") >= 3.0 * best("optimised_ns"), "{m}");
    assert!(
        util::f(&m["saving_ns"]) > 0.0 && m["saving_ci95"].is_number(),
        "{m}"
    );
    for t in m["took"].as_array().unwrap() {
        assert!(t.as_str().unwrap().contains("udp dport 5000"), "{m}");
    }
    // A port the ruleset drops: refused, naming the port (exit 2).
    let o = advise(f.to_str().unwrap(), &measure(&tb.name, "7000", &[]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(&o, "udp port 7000");
}

/// `argv` run in the namespace `ns`, which must succeed: its stdout.
fn in_ns_ok(ns: &str, argv: &[&str]) -> String {
    let o = std::process::Command::new("ip")
        .args([&["netns", "exec", ns], argv].concat())
        .output()
        .unwrap();
    assert!(o.status.success(), "{argv:?} in {ns}: {}", stderr(&o));
    stdout(&o)
}

/// `nft ARGS…` in the namespace `ns` (must succeed).
fn nft_in(ns: &str, args: &[&str]) {
    in_ns_ok(ns, &[&["nft"], args].concat());
}

#[root_test(serial, tb = "input")]
fn the_testbed_proves_each_probe_class_and_refuses_a_disagreement() {
    let (dir, f) = TempDir::with_text("bl.rules", blocklist(300));
    let f = f.to_str().unwrap();
    let proof = ["--verify-on-testbed", "--testbed", &tb.name];
    let o = advise(f, &[&proof[..], &["-J"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let p = &v["testbed_proof"];
    // 300 blocked sources, each its own class (dropped); udp 5000 from below and
    // above the blocklist and tcp 22, 80, 443 (delivered); the policy's tcp packet,
    // the ports next to each service, protocols 5, 7, 16, 18 (dropped).
    assert_eq!(
        (
            u(&p["classes"]),
            u(&p["delivered"]),
            u(&p["dropped"]),
            u(&p["either"])
        ),
        (318, 5, 313, 0),
        "{p}"
    );
    assert_eq!(p["packets"], 3, "{p}");
    assert_eq!(p["not_sent"].as_array().unwrap().len(), 0, "{p}");
    assert_eq!(
        p["maps"][0], "IPv4 sources → 198.18.128.0/17",
        "every source sent from the benchmark range: {p}"
    );
    // Nothing is left on the gateway: the ruleset, the observer, the local route.
    let gw = tb.gw();
    let routes = in_ns_ok(&gw, &["ip", "route", "show", "table", "local"]);
    assert!(!routes.contains("198.19.128.0/17"), "{routes}");
    // Something else on the gateway drops udp 5000 after the ruleset: the classes the
    // model says are delivered never arrive; refused (exit 1), naming the probe, and
    // nothing written.
    nft_in(&gw, &["add", "table", "inet", "t-foreign"]);
    nft_in(
        &gw,
        &["add chain inet t-foreign c { type filter hook input priority 100; }"],
    );
    nft_in(&gw, &["add rule inet t-foreign c udp dport 5000 drop"]);
    let out = dir.file("bl.opt");
    let o = advise(f, &[&proof[..], &["--out", out.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_says(
        &o,
        "refused on the testbed: the probe of the chains' policies (the default packet), \
         proto 17 198.18.0.1:1024 → 198.19.0.1:5000",
    );
    assert_says(&o, "the original ruleset dropped it (0 of 3 packets arrived), the optimised dropped it (0 of 3); the model says delivered for both");
    assert!(!out.exists(), "nothing is written after a refusal");
    // The foreign table is untouched.
    nft_in(&gw, &["list", "table", "inet", "t-foreign"]);
    // An inet ruleset with a stateful rule: an IPv4 and an IPv6 round; the classes the
    // ct rule may accept agree between the two rulesets.
    nft_in(&gw, &["delete", "table", "inet", "t-foreign"]);
    let o = advise(&fixture("nft-advise.nft"), &[&proof[..], &["-J"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let p = &v["testbed_proof"];
    assert_eq!(p["maps"].as_array().unwrap().len(), 4, "{p}");
    assert_eq!(
        (u(&p["classes"]), u(&p["delivered"]), u(&p["either"])),
        (40, 10, 30),
        "{p}"
    );
    // Named sets: their elements written in place, mapped, in the testbed's copy; the
    // sources in @blocked dropped by both rulesets.
    let o = advise(
        &fixture("nft-named-sets.nft"),
        &[&proof[..], &["-J"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let p = &v["testbed_proof"];
    assert!(u(&p["dropped"]) > 0 && u(&p["classes"]) > 40, "{p}");
}

/// `ipset list -n` in the namespace `ns`: the sets there.
fn ipsets_in(ns: &str) -> Vec<String> {
    let list = in_ns_ok(ns, &["ipset", "list", "-n"]);
    list.lines().map(str::to_owned).collect()
}

#[root_test(serial, tb = "input")]
fn an_iptables_import_loads_its_ipsets_and_the_advice_is_measured_as_iptables() {
    let gw = tb.gw();
    // The testbed's client is in the file's set: its flood is dropped by the set rule.
    let (dir, rules) = TempDir::with_text(
        "host.rules",
        "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n\
         -A INPUT -m set --match-set blocked src -j DROP\n\
         -A INPUT -p udp -m udp --dport 5000 -j ACCEPT\nCOMMIT\n",
    );
    let sets = dir.write(
        "host.ipset",
        "create blocked hash:ip family inet hashsize 1024 maxelem 65536\n\
         add blocked 198.18.1.1\nadd blocked 203.0.113.9\n",
    );
    let (rules, sets) = (rules.to_str().unwrap(), sets.to_str().unwrap());
    let ours = |ns: &str| -> Vec<String> {
        ipsets_in(ns)
            .into_iter()
            .filter(|s| s.starts_with("fwbench-"))
            .collect()
    };
    for engine in ["iptables-nft", "iptables-legacy"] {
        // A foreign set on the gateway, with the name the file's own set has.
        in_ns_ok(&gw, &["ipset", "create", "-exist", "blocked", "hash:ip"]);
        let v = trial_value(
            "flood",
            &tb.name,
            &[
                "--engine",
                engine,
                "--import",
                rules,
                "--import-ipset",
                sets,
                "-t",
                "1",
                "-r",
                "5kpps",
                "--dport",
                "5000",
            ],
        );
        assert_eq!(v["status"], "dropped", "{engine}: {v}");
        let sent = u(&v["result"]["sent"]);
        let first = &v["verdicts"]["rules"][0];
        assert_eq!(
            first["text"], "-A INPUT -m set --match-set blocked src -j DROP",
            "{v}"
        );
        assert_eq!(
            u(&first["packets"]),
            sent,
            "{engine}: the set rule took every packet: {v}"
        );
        assert!(
            v["gateway"]["firewall"]["settings"]["sets"]
                .as_str()
                .is_some_and(|s| s.starts_with("1 ipsets of")),
            "{engine}: {v}"
        );
        // fwbench's copy is gone; the foreign set of the same name is untouched
        // (after an iptables-legacy trial the testbed is rebuilt: its legacy table
        // cannot be removed, and the namespaces go with everything in them).
        assert!(ours(&gw).is_empty(), "{engine}: {:?}", ipsets_in(&gw));
        if engine == "iptables-nft" {
            assert_eq!(ipsets_in(&gw), ["blocked"], "{engine}");
        }
    }
    // A rule matching a set the ipset file does not create: exit 2, naming the line.
    let bad = dir.write(
        "bad.rules",
        "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m set --match-set other src -j DROP\nCOMMIT\n",
    );
    let o = fwbench(&trial_args(
        "flood",
        &tb.name,
        &[
            "--engine",
            "iptables-legacy",
            "--import",
            bad.to_str().unwrap(),
            "--import-ipset",
            sets,
            "-t",
            "1",
        ],
    ));
    assert_refused(&o, "bad.rules:3: --match-set other:");
    // The advice's own output measured as iptables: the file as it is, against the
    // optimised one with its ipset.
    let f = dir.write("bl.rules", blocklist(300));
    let o = advise(
        f.to_str().unwrap(),
        &measure(&tb.name, "5000", &["--engine", "iptables-legacy", "-J"]),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let m = &v["measured"];
    assert_eq!(m["engine"], "iptables-legacy", "{m}");
    assert_eq!(m["optimised_ns"].as_array().unwrap().len(), 2, "{m}");
    for t in m["took"].as_array().unwrap() {
        assert!(
            t.as_str().unwrap().contains("--dport 5000 -j ACCEPT"),
            "{m}"
        );
    }
    assert!(ours(&gw).is_empty(), "{:?}", ipsets_in(&gw));
    // An nft ruleset is measured through nft only.
    let o = advise(
        &fixture("nft-advise.nft"),
        &measure(&tb.name, "5000", &["--engine", "iptables-nft"]),
    );
    assert_refused(&o, "is an nft ruleset; measure it with --engine nft");
}

#[root_test(serial, tb = "input")]
fn the_counters_of_a_measured_run_move_the_hot_rules() {
    // No counters in the file: nothing to move on its own.
    let (dir, f) = TempDir::with_text(
        "svc.rules",
        "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n\
         -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n\
         -A INPUT -p icmp -j ACCEPT\n\
         -A INPUT -p udp -m udp --dport 5000 -j ACCEPT\nCOMMIT\n",
    );
    let f = f.to_str().unwrap();
    let s = advise_ok(f, &[]);
    assert!(s.contains("no safe rewrite found"), "{s}");
    // A run whose traffic goes to udp 5000, stored.
    let db = dir.file("run.db");
    let db = db.to_str().unwrap();
    let o = fwbench(&[
        "flood",
        "--testbed",
        &tb.name,
        "--db",
        db,
        "--engine",
        "iptables-nft",
        "--import",
        f,
        "--dport",
        "5000",
        "-r",
        "5kpps",
        "-t",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = advise(f, &["--counters-from", db, "-J"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (
            u(&v["counters_from"]["run"]),
            u(&v["counters_from"]["trials"])
        ),
        (1, 1),
        "{v}"
    );
    let moved = &v["changes"][0];
    assert_eq!(moved["kind"], "moved", "{v}");
    assert_eq!(moved["lines"][0], 7, "{v}");
    assert!(
        moved["reason"]
            .as_str()
            .unwrap()
            .contains("moved 2 place(s) earlier"),
        "{v}"
    );
    // Bad input: a run that does not exist, a file the run did not measure.
    let o = advise(f, &["--counters-from", db, "--run", "9"]);
    assert_refused(&o, "--run 9: ");
    let other = dir.write(
        "other.rules",
        "*filter\n:INPUT DROP [0:0]\n-A INPUT -p tcp -m tcp --dport 23 -j ACCEPT\nCOMMIT\n",
    );
    let o = advise(other.to_str().unwrap(), &["--counters-from", db]);
    assert_refused(
        &o,
        "the counted run's rule INPUT:1 is `-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT`",
    );
    let o = advise(
        f,
        &["--counters-from", dir.file("none.db").to_str().unwrap()],
    );
    assert_refused(&o, "no such results file");
}

// `inet raw` (priority -10) counts udp 5000, then `ip filter` (priority 10) jumps
// to svc, which accepts; udp 7000 is dropped by `ip filter`'s third rule.
#[root_test(tb = "input")]
fn several_nft_tables_are_met_in_the_hosts_order_and_aimed_at() {
    let file = &fixture("nft-two-tables.nft");
    let v = flood(&tb.name, file, "-t 1 -r 5kpps --dport 5000");
    assert_eq!(v["status"], "ok", "{v}");
    let sent = u(&v["result"]["sent"]);
    let rules = v["verdicts"]["rules"].as_array().unwrap();
    let count = |chain: &str, index: u64| {
        rules
            .iter()
            .find(|r| r["chain"] == chain && r["index"] == index)
            .map(|r| u(&r["packets"]))
            .unwrap_or_else(|| panic!("no rule {chain}:{index} in {v}"))
    };
    assert_eq!(count("inet/raw/input", 1), sent, "{v}");
    assert_eq!(count("ip/filter/input", 2), sent, "{v}");
    assert_eq!(count("ip/filter/svc", 1), sent, "{v}");
    let v = flood(&tb.name, file, "-t 1 -r 5kpps --dport 7000");
    assert_eq!(v["status"], "dropped", "{v}");
    // --aim spans the tables: the rule is named FAMILY/TABLE/CHAIN:N.
    let v = flood(&tb.name, file, "-t 1 -r 5kpps --aim inet/raw/input:1");
    assert_eq!(v["status"], "ok", "{v}");
}

#[root_test(needs = "nft loads the file in a scratch network namespace")]
fn an_nft_ruleset_is_advised_and_its_output_loads() {
    let (dir, out) = TempDir::with_file("opt.nft");
    let s = advise_fixture_into("nft-advise.nft", &out);
    assert!(s.contains("11 rules → 5 rules"), "{s}");
    assert!(s.contains("handle 2: stateful match `ct`"), "{s}");
    assert_nft_loads(&out);
    // Named sets read with their elements and kept; a hot rule moved by its counter.
    let s = advise_fixture_into("nft-named-sets.nft", &out);
    assert!(s.contains("9 rules → 8 rules"), "{s}");
    assert!(
        s.contains("shadowed   inet host input handle 6: never matches: handle 5"),
        "{s}"
    );
    assert!(
        s.contains("moved      inet host input handle 12: 900 packets"),
        "{s}"
    );
    assert!(
        s.contains("handle 8: named set @banned: its elements change at runtime"),
        "{s}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("\t\tip saddr @blocked counter packets 10 bytes 600 drop\n"),
        "{text}"
    );
    assert_nft_loads(&out);
    // A flush in the file is refused before anything is analysed (exit 2).
    let bad = dir.write("bad.nft", "flush ruleset\ntable inet x {\n}\n");
    let o = advise(bad.to_str().unwrap(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[root_test(needs = "nft loads the file in a scratch network namespace")]
fn an_nft_run_with_different_verdicts_becomes_a_verdict_map_that_loads() {
    // 203.0.113.1 drop, .2 accept, a tcp drop of 203.0.113.0/28, .3 accept, a jump
    // for 198.51.100.0/24, a drop of 192.0.2.7: the tcp drop overlaps .3 (stays after
    // it) and not the last two (they move up into the first map).
    let (_dir, out) = TempDir::with_file("opt.nft");
    let s = advise_fixture_into("nft-vmap.nft", &out);
    assert!(s.contains("7 rules → 4 rules"), "{s}");
    assert!(s.contains("verdict-map ip gw input handle 4-5, 8-9"), "{s}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains(
            "\t\tcounter ip saddr vmap { 203.0.113.1 : drop, 203.0.113.2 : accept, \
             198.51.100.0/24 : jump svc, 192.0.2.7 : drop }\n\
             \t\tip saddr 203.0.113.0/28 meta l4proto tcp drop\n\
             \t\tip saddr 203.0.113.3 accept\n"
        ),
        "{text}"
    );
    assert_nft_loads(&out);
}

#[root_test(serial, tb = "input")]
fn measured_floods_are_stored_with_db_and_reported_side_by_side() {
    let (dir, f) = TempDir::with_text("bl.rules", blocklist(50));
    let db = dir.file("adv.db");
    let advised = advise(
        f.to_str().unwrap(),
        &measure(&tb.name, "5000", &["--db", db.to_str().unwrap()]),
    );
    assert!(advised.status.success(), "{}", stderr(&advised));
    assert_prints(&advised, "stored: 4 floods in");
    // One row per trial: two floods through each ruleset, told apart by the import.
    let o = fwbench(&["report", db.to_str().unwrap(), "-f", "csv", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    let rows = |name: &str| csv.lines().filter(|l| l.contains(name)).count();
    assert_eq!(
        (rows("original.nft"), rows("optimised.nft")),
        (2, 2),
        "{csv}"
    );
    // One run: the report puts both rulesets and the saving in one figure, and says it.
    assert_eq!(
        sqlite_count(&db, "SELECT count(DISTINCT run_id) FROM trials"),
        1
    );
    let o = fwbench(&["report", db.to_str().unwrap(), "-f", "md", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(
        md.contains("### Rules advise: time per packet, original vs optimised ruleset (engine nft, udp port 5000)")
            && md.contains("| saving (original − optimised) |"),
        "{md}"
    );
    // The finding states what the command printed: one judgement of the same floods,
    // the stored ones read back with what limited each (this 50-rule blocklist is
    // cheap: here the sender often sets both rulesets' rates, and no saving is stated).
    let printed = stdout(&advised);
    let said = printed
        .lines()
        .find_map(|l| l.split_once(" floods each, interleaved): ").map(|(_, s)| s))
        .unwrap_or_else(|| panic!("no measured line: {printed}"));
    assert!(
        md.contains(&format!(
            "* rules advise (engine nft, udp port 5000): {said}."
        )),
        "{said}\n{md}"
    );
}
