//! `fwbench rules advise` end to end: a ruleset with no safe rewrite is left alone
//! (unprivileged); a generated 5 000-rule blocklist plus service rules is rewritten,
//! both rulesets give the same verdicts on the testbed and the optimised one costs at
//! least 10× less per packet that passes the whole blocklist (privileged).

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
    let dir = TempDir::new();
    let f = dir.write(
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
    let dir = TempDir::new();
    let f = dir.write("bl.rules", blocklist(300));
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

/// A flood through the nft engine with `file` imported; its JSON whatever the verdict.
fn flood(tb: &str, file: &str, extra: &[&str]) -> Value {
    trial_value(
        "flood",
        tb,
        &[&["--engine", "nft", "--import", file], extra].concat(),
    )
}

#[test]
#[ignore = "needs root: network namespaces (run with --include-ignored as root)"]
fn a_5000_rule_blocklist_is_equivalent_on_the_testbed_and_cheaper() {
    let tb = TestbedGuard::up("input");
    let dir = TempDir::new();
    let f = dir.write("bl.rules", blocklist(5000));
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
        let v = flood(
            &tb.name,
            file,
            &["-t", "1", "-r", "5kpps", "--dport", "5000"],
        );
        assert_eq!(v["status"], "ok", "{file}: {v}");
        let took = v["verdicts"]["took"].as_str().unwrap();
        assert!(took.contains("udp dport 5000"), "{file}: {took}");
        let v = flood(
            &tb.name,
            file,
            &["-t", "1", "-r", "5kpps", "--dport", "7000"],
        );
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
                let v = flood(&tb.name, file, &["-t", "2", "-r", "max", "--dport", "5000"]);
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

#[test]
#[ignore = "needs root: network namespaces (run with --include-ignored as root)"]
fn several_nft_tables_are_met_in_the_hosts_order_and_aimed_at() {
    // `inet raw` (priority -10) counts udp 5000, then `ip filter` (priority 10) jumps
    // to svc, which accepts; udp 7000 is dropped by `ip filter`'s third rule.
    let tb = TestbedGuard::up("input");
    let file = &fixture("nft-two-tables.nft");
    let v = flood(
        &tb.name,
        file,
        &["-t", "1", "-r", "5kpps", "--dport", "5000"],
    );
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
    let v = flood(
        &tb.name,
        file,
        &["-t", "1", "-r", "5kpps", "--dport", "7000"],
    );
    assert_eq!(v["status"], "dropped", "{v}");
    // --aim spans the tables: the rule is named FAMILY/TABLE/CHAIN:N.
    let v = flood(
        &tb.name,
        file,
        &["-t", "1", "-r", "5kpps", "--aim", "inet/raw/input:1"],
    );
    assert_eq!(v["status"], "ok", "{v}");
}

#[test]
#[ignore = "needs root: nft loads the file in a scratch network namespace (run with --include-ignored as root)"]
fn an_nft_ruleset_is_advised_and_its_output_loads() {
    let dir = TempDir::new();
    let file = &fixture("nft-advise.nft");
    let out = dir.file("opt.nft");
    let s = advise_ok(file, &["--out", out.to_str().unwrap()]);
    assert!(s.contains("11 rules → 5 rules"), "{s}");
    assert!(s.contains("handle 2: stateful match `ct`"), "{s}");
    assert_nft_loads(&out);
    // A flush in the file is refused before anything is analysed (exit 2).
    let bad = dir.write("bad.nft", "flush ruleset\ntable inet x {\n}\n");
    let o = advise(bad.to_str().unwrap(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
#[ignore = "needs root: nft loads the file in a scratch network namespace (run with --include-ignored as root)"]
fn an_nft_run_with_different_verdicts_becomes_a_verdict_map_that_loads() {
    // 203.0.113.1 drop, .2 accept, a tcp drop of 203.0.113.0/28, .3 accept, a jump
    // for 198.51.100.0/24, a drop of 192.0.2.7: the tcp drop overlaps .3 (stays after
    // it) and not the last two (they move up into the first map).
    let dir = TempDir::new();
    let file = &fixture("nft-vmap.nft");
    let out = dir.file("opt.nft");
    let s = advise_ok(file, &["--out", out.to_str().unwrap()]);
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

#[test]
#[ignore = "needs root: network namespaces (run with --include-ignored as root)"]
fn measured_floods_are_stored_with_db_and_reported_side_by_side() {
    let tb = TestbedGuard::up("input");
    let dir = TempDir::new();
    let f = dir.write("bl.rules", blocklist(50));
    let db = dir.file("adv.db");
    let o = advise(
        f.to_str().unwrap(),
        &measure(&tb.name, "5000", &["--db", db.to_str().unwrap()]),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_prints(&o, "stored: 4 floods in");
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
}
