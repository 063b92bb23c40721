//! Rulesets written by real tools, generated at test time, imported and aimed at;
//! hostile files refused. Privileged (namespaces); run with `--include-ignored` as root.
//!
//! ufw runs in a scratch network namespace *and* a private mount namespace whose
//! /etc/ufw, /lib/ufw, /etc/default/ufw and /run are copies on a tmpfs: the host's ufw
//! configuration and firewall are never touched.

mod util;

use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use util::*;

/// The issue's ufw ruleset: deny incoming; allow 22/tcp, 80,443/tcp, udp 5000:6000
/// from 198.18.0.0/15; limit 2222/tcp (71 rules in 20 chains of `iptables-save`).
const UFW_SCRIPT: &str = r#"set -e
T=$(mktemp -d /tmp/fwbench-ufw.XXXXXX)
mount --make-rprivate /
mount -t tmpfs fwbench-ufw "$T"
cp -a /etc/ufw "$T/etc-ufw"; : > "$T/etc-ufw/sysctl.conf"
mount --bind "$T/etc-ufw" /etc/ufw
if [ -d /lib/ufw ]; then cp -a /lib/ufw "$T/lib-ufw"; mount --bind "$T/lib-ufw" /lib/ufw; fi
cp /etc/default/ufw "$T/default-ufw"; mount --bind "$T/default-ufw" /etc/default/ufw
mkdir "$T/run"; mount --bind "$T/run" /run
ufw --force reset >/dev/null 2>&1 || true
ufw default deny incoming >/dev/null
ufw allow 22/tcp >/dev/null
ufw allow 80,443/tcp >/dev/null
ufw allow from 198.18.0.0/15 to any port 5000:6000 proto udp >/dev/null
ufw limit 2222/tcp >/dev/null
ufw --force enable >/dev/null
iptables-save
umount /run /etc/default/ufw /etc/ufw
[ -d /lib/ufw ] && umount /lib/ufw || true
umount "$T"
rmdir "$T"
"#;

fn ufw_ruleset() -> String {
    assert!(
        Command::new("sh")
            .args(["-c", "command -v ufw"])
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success(),
        "ufw is not installed (scripts/setup.sh installs it)"
    );
    let o = Command::new("unshare")
        .args(["--net", "--mount", "--", "bash", "-c", UFW_SCRIPT])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "ufw in a scratch namespace: {}",
        stderr(&o)
    );
    let text = stdout(&o);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("-A ")).count(),
        71,
        "{text}"
    );
    text
}

/// Every nft table of a namespace (None: the host's), as `nft list ruleset` prints it.
fn nft_ruleset(ns: Option<&str>) -> String {
    let mut argv = vec![];
    if let Some(ns) = ns {
        argv.extend(["ip", "netns", "exec", ns]);
    }
    argv.extend(["nft", "list", "ruleset"]);
    let o = Command::new(argv[0]).args(&argv[1..]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// The legacy iptables rules of a namespace.
fn legacy_rules(ns: &str) -> String {
    let o = Command::new("ip")
        .args(["netns", "exec", ns, "iptables-legacy-save"])
        .output()
        .unwrap();
    stdout(&o)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A 1 s flood at 5 kpps; its JSON whatever the verdict.
fn flood_json(tb: &str, extra: &[&str]) -> Value {
    trial_value("flood", tb, &[&["-t", "1", "-r", "5kpps"], extra].concat())
}

#[root_test(needs = "network and mount namespaces", tb = "input")]
fn ufw_ruleset_imports_with_every_engine_and_counts_exactly() {
    let (dir, v4) = TempDir::with_text("ufw.rules", ufw_ruleset());
    // The same ruleset as nft writes it (iptables-restore-translate; the two `-m
    // recent` rules of `ufw limit` have no nft translation and become comments).
    let o = Command::new("iptables-restore-translate")
        .args(["-f", v4.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let nft = dir.write("ufw.nft", stdout(&o));
    // The default ufw ruleset renders: its long chain names get distinct short ones.
    let o = fwbench(&cmd!("rules render --import", &v4, "--engine iptables-nft"));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mapped = |user: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("#   {user} ")))
            .and_then(|l| l.split_whitespace().nth(2))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no mapping for {user}: {text}"))
    };
    let (a, b) = (
        mapped("ufw-after-logging-forward"),
        mapped("ufw-after-logging-input"),
    );
    assert!(
        a.starts_with("FWBENCH-U-ufw-after-l~") && a.len() <= 28,
        "{a}"
    );
    assert!(
        b.starts_with("FWBENCH-U-ufw-after-l~") && b.len() <= 28 && a != b,
        "{b}"
    );
    for (engine, file) in [
        ("iptables-legacy", &v4),
        ("iptables-nft", &v4),
        ("nft", &nft),
    ] {
        let file = file.to_str().unwrap();
        // Allowed: udp 5000:6000 from the testbed's clients.
        let v = flood_json(
            &tb.name,
            &["--engine", engine, "--import", file, "--dport", "5000"],
        );
        assert_eq!(v["status"], "ok", "{engine}: {v}");
        let sent = u(&v["result"]["sent"]);
        assert!(sent > 1000, "{engine}: {v}");
        let verdicts = &v["verdicts"];
        let hit = verdicts["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["text"].as_str().unwrap().contains("5000"))
            .unwrap_or_else(|| panic!("{engine}: no rule for 5000:6000 in {verdicts}"));
        assert_eq!(u(&hit["packets"]), sent, "{engine}: {hit}");
        assert_eq!(u(&verdicts["policy_drops"]), 0, "{engine}: {verdicts}");
        assert!(
            verdicts["took"].as_str().unwrap().contains("5000"),
            "{engine}: {verdicts}"
        );
        // Blocked: every packet is dropped by INPUT's policy, and the trial says so.
        let v = flood_json(
            &tb.name,
            &["--engine", engine, "--import", file, "--dport", "7000"],
        );
        assert_eq!(v["status"], "dropped", "{engine}: {v}");
        let sent = u(&v["result"]["sent"]);
        let verdicts = &v["verdicts"];
        assert_eq!(u(&verdicts["policy_drops"]), sent, "{engine}: {verdicts}");
        assert_eq!(
            u(&verdicts["dropped"]["packets"]),
            sent,
            "{engine}: {verdicts}"
        );
        let by = verdicts["dropped"]["by"].as_str().unwrap();
        assert!(by.contains("policy of chain INPUT"), "{engine}: {by}");
        assert_eq!(
            v["error"].as_str().unwrap(),
            format!("{sent} of {sent} packets dropped by {by} (the imported ruleset)"),
        );
    }
    // Aimed at the udp rule by its place: derived, sent, counted.
    let v = flood_json(
        &tb.name,
        &cmd!(
            "--engine iptables-nft --import",
            &v4,
            "--aim ufw-user-input:3"
        ),
    );
    assert_eq!(v["status"], "ok", "{v}");
    let hit = v["verdicts"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["chain"] == "ufw-user-input" && r["index"] == 3)
        .cloned()
        .unwrap();
    assert_eq!(u(&hit["packets"]), u(&v["result"]["sent"]), "{hit}");
    // A TCP rule cannot be aimed at by a UDP flood: bad input, before anything runs.
    let o = fwbench(&cmd!(
        "flood --testbed",
        &tb.name,
        "--no-store -t 1 --engine iptables-nft --import",
        &v4,
        "--aim ufw-user-input:1"
    ));
    assert_refused(&o, "matches protocol tcp");
}

#[root_test(tb = "forward")]
fn hostile_files_are_refused_and_change_nothing() {
    let gw = tb.gw();
    let (dir, escape) = TempDir::with_text(
        "escape.nft",
        "table inet t {\n  chain c {\n    type filter hook forward priority 0;\n    \
         ip saddr 192.0.2.1 accept comment \"x\"; }; }; flush ruleset; table ip persist { \
         chain c { type filter hook forward priority 0; policy drop; }; }\n",
    );
    let include = dir.write(
        "include.nft",
        "table inet t {\n  include \"/etc/shadow\"\n}\n",
    );
    let delete = dir.write(
        "delete.nft",
        "table inet t { chain c { counter; }; }\ndelete table inet t\nreset counters\n",
    );
    let many = dir.file("many.nft");
    let mut text = String::from("table inet t {\n");
    for i in 0..90_000 {
        text += &format!("  chain c{i} {{ }}\n");
    }
    text += "}\n";
    std::fs::write(&many, text).unwrap();
    let fifo = dir.fifo("fifo");
    // nft reads up to a NUL byte: the second table (a drop policy) would be ignored.
    let nul = dir.write(
        "nul.nft",
        "table inet t1 {\n  chain c { type filter hook input priority 0; policy accept; }\n}\n\0\
         table inet t2 {\n  chain d { type filter hook input priority 0; policy drop; }\n}\n",
    );
    let builtin = dir.write("builtin.rules", "*filter\n:MINE DROP [0:0]\nCOMMIT\n");
    let family = dir.write(
        "family.rules",
        "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT --source=2001:db8::1 -j DROP\nCOMMIT\n",
    );
    // A table of this test's own in the gateway: it must come through unchanged.
    let own = "table inet fwbtest_keep {\n\tchain c {\n\t\tip saddr 192.0.2.7 counter packets 0 bytes 0 accept\n\t}\n}\n";
    nft_load(&gw, own);
    let host_before = nft_ruleset(None);
    let gw_before = (nft_ruleset(Some(&gw)), legacy_rules(&gw));
    assert!(gw_before.0.contains("fwbtest_keep"));
    let zero = std::path::PathBuf::from("/dev/zero");
    for (file, engine, why) in [
        (&escape, "nft", "deletes or flushes a table"),
        (&include, "nft", ":2: `include` is refused"),
        (&delete, "nft", "deletes or flushes a table"),
        (&many, "nft", "90000 chains; fwbench imports at most 10000"),
        (&fifo, "nft", "a FIFO"),
        (&nul, "nft", ":4: a NUL byte at column 1"),
        (&zero, "nft", "a character device"),
        (&builtin, "iptables-nft", "is not a built-in chain"),
        (&family, "iptables-legacy", "is IPv6 but the trial is IPv4"),
    ] {
        let file = file.to_str().unwrap();
        let t = Instant::now();
        for args in [
            vec!["rules", "render", "--engine", engine, "--import", file],
            cmd!(
                "flood --testbed",
                &tb.name,
                "--no-store -t 1 --engine",
                engine,
                "--import",
                file
            ),
        ] {
            let o = fwbench(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
        }
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "{file}: {:?}",
            t.elapsed()
        );
        assert_eq!(
            nft_ruleset(None),
            host_before,
            "{file} changed the host's tables"
        );
        assert_eq!(
            (nft_ruleset(Some(&gw)), legacy_rules(&gw)),
            gw_before,
            "{file} changed the gateway's tables"
        );
    }
    let o = Command::new("ip")
        .args(cmd!(
            "netns exec",
            &gw,
            "nft delete table inet fwbtest_keep"
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[root_test]
fn hot_rules_sweep_aims_at_each_rule_and_the_report_plots_it() {
    let dir = TempDir::new();
    let mut rules = String::from(
        "table inet mine {\n  chain input {\n    type filter hook input priority filter; policy drop;\n",
    );
    for i in 1..=4 {
        rules += &format!("    udp dport {} accept\n", 5000 + i);
    }
    // Not reachable by a UDP flood from the testbed: unavailable in the sweep.
    rules += "    tcp dport 22 accept\n    ip saddr 203.0.113.0/24 udp dport 7000 accept\n  }\n}\n";
    std::fs::write(dir.file("mine.nft"), rules).unwrap();
    let scenario = dir.write(
        "hot.toml",
        r#"name = "hot"
workload = "flood"
[params]
topology = "input"
rate = "20kpps"
duration = "1s"
engine = "nft"
import = "mine.nft"
aim = "each:6"
"#,
    );
    let db = dir.file("r.db");
    let o = fwbench(&[
        "run",
        scenario.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let count = |sql: &str| sqlite_count(&db, sql);
    assert_eq!(count("SELECT count(*) FROM trials WHERE status = 'ok'"), 4);
    assert_eq!(
        count(
            "SELECT count(*) FROM trials WHERE status = 'unavailable' AND \
             (error LIKE '%protocol tcp%' OR error LIKE '%203.0.113.0/24%')"
        ),
        2
    );
    // Each ok trial's packets were all counted by the rule it aimed at.
    let o = Command::new("sqlite3")
        .arg(&db)
        .arg(
            "SELECT json_extract(params, '$.packet.aim'), json_extract(results, '$.packet.sent'), \
             json_extract(results, '$.gateway.firewall.verdicts.rules') FROM trials \
             WHERE status = 'ok'",
        )
        .output()
        .unwrap();
    for line in stdout(&o).lines() {
        let mut f = line.splitn(3, '|');
        let (aim, sent, rules) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
        let rules: Value = serde_json::from_str(rules).unwrap();
        let n: usize = aim.parse().unwrap();
        assert_eq!(rules[n - 1]["packets"].to_string(), sent, "{line}");
        assert!(sent.parse::<u64>().unwrap() > 1000, "{line}");
    }
    let o = fwbench(&["report", db.to_str().unwrap(), "-f", "json", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let v: Value = serde_json::from_str(&text).unwrap();
    let fig = v["runs"][0]["figures"]
        .as_array()
        .unwrap_or_else(|| panic!("no figures: {text}"))
        .iter()
        .find(|f| f["id"] == "hot-rules")
        .cloned()
        .unwrap_or_else(|| panic!("no hot-rules figure: {text}"));
    // Each aimed rule is plotted, or said not plotted: a trial whose rate fwbench's
    // sender or sink set is no time of the gateway's (on a small machine the sender is
    // often the limit at the first rules).
    let xs: Vec<f64> = fig["series"]
        .as_array()
        .and_then(|s| s.first())
        .and_then(|s| s["points"].as_array())
        .map(|p| p.iter().map(|p| p["x"].as_f64().unwrap()).collect())
        .unwrap_or_default();
    let left: usize = fig["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str()?.split(": not plotted: ").nth(1))
        .filter_map(|n| n.split(' ').next()?.parse::<usize>().ok())
        .sum();
    assert_eq!(xs.len() + left, 4, "{fig}");
    assert!(xs.iter().all(|x| [1.0, 2.0, 3.0, 4.0].contains(x)), "{fig}");
}
