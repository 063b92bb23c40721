//! Privileged integration tests: real namespaces, veths, agents and traffic.
//! They need root; without it they are reported as ignored (skipped), never passed.
//! Run them with `cargo test -- --include-ignored` as root.

mod util;

use serde_json::Value;
use std::process::Command;
use std::time::Duration;
use util::*;

const ROOT: &str = "needs root: network namespaces (run with --include-ignored as root)";

fn echo_json(tb: &str, extra: &[&str]) -> Value {
    trial_json("echo", tb, extra)
}

#[root_test]
fn echo_matrix_tcp_udp_v4_v6_threads_epoll() {
    let _ = ROOT;
    let tb = TestbedGuard::up("forward");
    for proto in ["tcp", "udp"] {
        for family in ["4", "6"] {
            for server in ["threads", "epoll"] {
                let v = echo_json(
                    &tb.name,
                    &[
                        "-n", "5", "-P", proto, "-A", family, "-T", server, "-f", "64-1024",
                    ],
                );
                let ctx = format!("{proto}/{family}/{server}");
                assert_echo_ok(&v, &ctx);
                assert!(
                    v["result"]["transactions_per_s"].as_f64().unwrap() > 0.0,
                    "{ctx}"
                );
                let per = v["result"]["per_client_throughput_bps"].as_array().unwrap();
                assert_eq!(per.len(), 5, "{ctx}");
                assert!(
                    per.iter().all(|x| x.as_f64().unwrap() > 0.0),
                    "{ctx}: {per:?}"
                );
                let r = &v["result"]["rtt_us"];
                let (p50, p99, max) = (
                    r["p50"].as_f64().unwrap(),
                    r["p99"].as_f64().unwrap(),
                    r["max"].as_f64().unwrap(),
                );
                assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{ctx}: {r}");
                for c in v["result"]["per_client"].as_array().unwrap() {
                    let mp: Vec<u64> = (0..4).map(|i| u(&c["mp"][i]["frames"])).collect();
                    let mb: Vec<u64> = (0..4).map(|i| u(&c["mp"][i]["bytes"])).collect();
                    if proto == "tcp" {
                        assert!(
                            mp.iter().all(|&x| x == mp[0]),
                            "{ctx}: MP frames differ {mp:?}"
                        );
                        assert!(
                            mb.iter().all(|&x| x == mb[0]),
                            "{ctx}: MP bytes differ {mb:?}"
                        );
                    } else {
                        // UDP: each hop may lose, never create; loss = sent − received.
                        assert!(
                            mp[0] >= mp[1] && mp[1] >= mp[2] && mp[2] >= mp[3],
                            "{ctx}: {mp:?}"
                        );
                        assert_eq!(u(&c["lost"]), mp[0] - mp[3], "{ctx}: {mp:?}");
                    }
                    assert!(mp[3] > 0, "{ctx}");
                }
                assert_eq!(v["params"]["clients"], 5);
                assert_eq!(v["params"]["proto"], proto);
            }
        }
    }
}

#[root_test]
fn direct_and_input_topologies_echo() {
    for topo in ["direct", "input"] {
        let tb = TestbedGuard::up(topo);
        let v = echo_json(&tb.name, &["-n", "3", "-P", "tcp", "-A", "6"]);
        assert_eq!(v["status"], "ok", "{topo}: {v}");
        assert_eq!(v["params"]["topology"], topo);
        assert_eq!(u(&v["result"]["validation_errors"]), 0);
        let roles = fields(&v["placement"], "role");
        if topo == "direct" {
            assert_eq!(roles, ["server", "client"]);
        } else {
            assert_eq!(roles, ["gateway", "server", "client"]);
            // the server role runs inside the gateway namespace
            let places = fields(&v["placement"], "place");
            assert_eq!(places[0], places[1]);
        }
    }
}

#[root_test(tb = "forward")]
fn pinning_is_applied_and_recorded() {
    let v = echo_json(
        &tb.name,
        &argv("-n 1 --pin-client 0 --pin-server 1 --pin-gateway 0-1"),
    );
    let cpus = |role: &str| {
        v["placement"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["role"] == role)
            .unwrap()["cpus"]
            .clone()
    };
    assert_eq!(cpus("client"), "0");
    assert_eq!(cpus("server"), "1");
    assert_eq!(cpus("gateway"), "0-1");
}

#[root_test(tb = "forward")]
fn sctp_is_reported_unavailable_not_crashed() {
    let o = fwbench(&trial_args("echo", &tb.name, &["-P", "sctp"]));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // Both kernels are covered: with SCTP the echo must work, without it fwbench must say
    // so clearly. Which one this kernel is comes from the kernel itself, not fwbench.
    if sctp_in_kernel() {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(v["status"], "ok", "{v}");
        assert_eq!(u(&v["result"]["validation_errors"]), 0, "{v}");
        assert!(f(&v["result"]["transactions_per_s"]) > 0.0, "{v}");
    } else {
        assert_eq!(v["status"], "unavailable", "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains("SCTP unavailable in this kernel"), "{e}");
        assert!(e.contains("SCTP is not available in this kernel"), "{e}");
        assert_eq!(o.status.code(), Some(1));
    }
}

#[root_test]
fn ephemeral_testbed_removed_after_echo_and_trial_stored() {
    let (_dir, db) = TempDir::with_file("r.db");
    let (pid, o) = fwbench_with_pid(&cmd!("echo -t 1 -n 2 --db", &db, "--json"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(namespaces_with(&format!("fwb-e{pid}x")).is_empty());
    let n: i64 = sqlite_count(&db, "SELECT count(*) FROM trials WHERE status = 'ok'");
    assert_eq!(n, 1);
    assert_eq!(sqlite_count(&db, "SELECT count(*) FROM echo_clients"), 2);
}

#[root_test]
fn sigkill_of_controller_leaves_nothing_behind() {
    let mut child = spawn_quiet(&["echo", "-t", "60", "-n", "3", "--no-store", "-P", "udp"]);
    let pid = child.id();
    let prefix = format!("fwb-e{pid}x");
    // Wait until all three agents run (client namespace has a process).
    assert!(
        wait_for(20.0, || namespaces_with(&prefix).len() == 3
            && !pids_in(&format!("{prefix}0-cli")).is_empty()),
        "trial never started"
    );
    std::thread::sleep(Duration::from_millis(500));
    let mut agents = Vec::new();
    for ns in namespaces_with(&prefix) {
        agents.extend(pids_in(&ns));
    }
    assert!(agents.len() >= 3, "agents: {agents:?}");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        wait_for(10.0, || namespaces_with(&prefix).is_empty()),
        "namespaces left: {:?}",
        namespaces_with(&prefix)
    );
    assert!(
        wait_for(10.0, || agents.iter().all(|&p| !alive(p))),
        "agents still alive: {agents:?}"
    );
}

#[root_test]
fn ctrl_c_keeps_finished_trials_and_cleans_up() {
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write(
        "s.toml",
        "name = \"ctrlc\"\n[params]\nproto = [\"tcp\", \"udp\"]\nclients = [2, 3]\nduration = \"1500ms\"\n",
    );
    let child = spawn_piped(&cmd!("run", &sc, "--db", &db));
    let pid = child.id();
    // Interrupt once the first trial is committed.
    assert!(wait_for(30.0, || {
        db.exists()
            && Command::new("sqlite3")
                .arg(&db)
                .arg("SELECT count(*) FROM trials")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim() >= "1")
                .unwrap_or(false)
    }));
    // SAFETY-free: send SIGINT to our own child by PID.
    Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted"));
    let stored = sqlite_count(&db, "SELECT count(*) FROM trials WHERE status = 'ok'");
    assert!((1..4).contains(&stored), "stored {stored}");
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(*) FROM runs WHERE status = 'interrupted'"
        ),
        1
    );
    assert!(namespaces_with(&format!("fwb-e{pid}x")).is_empty());
    assert_prints(&o, &format!("{stored} of 4 trials stored"));
}

#[root_test]
fn scenario_run_records_sctp_unavailable_and_summary() {
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write(
        "s.toml",
        "[params]\nproto = [\"tcp\", \"sctp\"]\nfamily = [4, 6]\nclients = 2\nduration = 1\n",
    );
    let o = run_stored(&sc, &db);
    let out = stdout(&o);
    assert!(out.contains("4 of 4 trials stored"), "{out}");
    let sctp_ok = sqlite_count(&db, "SELECT count(*) FROM trials WHERE json_extract(params, '$.proto') = 'sctp' AND status = 'ok'");
    let sctp_unavail = sqlite_count(&db, "SELECT count(*) FROM trials WHERE json_extract(params, '$.proto') = 'sctp' AND status = 'unavailable'");
    // Which of the two comes from the kernel, not from fwbench.
    if sctp_in_kernel() {
        assert_eq!((sctp_ok, sctp_unavail), (2, 0));
    } else {
        assert_eq!((sctp_ok, sctp_unavail), (0, 2));
        assert!(out.contains("unavailable"), "{out}");
    }
    assert_eq!(sqlite_count(&db, "SELECT count(*) FROM trials WHERE json_extract(params, '$.proto') = 'tcp' AND status = 'ok'"), 2);
    // host metadata recorded
    assert_eq!(
        sqlite_count(
            &db,
            "SELECT count(*) FROM hosts WHERE cores > 0 AND kernel != ''"
        ),
        1
    );
}

#[root_test]
fn bad_input_exits_2_and_leaves_no_testbed() {
    let (dir, sc) = TempDir::with_text("bad.toml", "[params]\nclients = 5\nproto = \"quic\"\n");
    let o = fwbench_leaving_no_testbed(&[
        "run",
        sc.to_str().unwrap(),
        "--db",
        dir.file("r.db").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("bad.toml:3:9: params.proto: unknown protocol 'quic'"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "one-line error: {e}");
    assert!(
        !dir.file("r.db").exists(),
        "nothing written for a bad scenario"
    );
    std::fs::write(&sc, "[params\n").unwrap();
    assert_eq!(
        fwbench_leaving_no_testbed(&["run", sc.to_str().unwrap()])
            .status
            .code(),
        Some(2)
    );
    std::fs::write(&sc, "[params]\nclients = 2\nspeed = 1\n").unwrap();
    let o = fwbench_leaving_no_testbed(&["run", sc.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("params.speed"));
    assert_eq!(
        fwbench_leaving_no_testbed(&["run", "/nonexistent.toml"])
            .status
            .code(),
        Some(2)
    );
    for args in [
        &["echo", "-P", "icmp"][..],
        &["echo", "-n", "0"],
        &["echo", "-t", "abc"],
        &["echo", "-f", "16"],
        &["echo", "-f", "65537"],
        &["echo", "-A", "5"],
        &["echo", "-T", "fork"],
        &["echo", "--testbed", "no-such-bed"],
        &["echo", "--bogus"],
        &["testbed", "up", "--name", "Bad Name"],
    ] {
        let o = fwbench_leaving_no_testbed(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    // A bad scenario never gets as far as building a testbed.
    std::fs::write(&sc, "[params]\nclients = 2\nproto = \"quic\"\n").unwrap();
    let o = fwbench_leaving_no_testbed(&["run", sc.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[root_test(tb = "forward")]
fn testbed_lifecycle_and_duplicate_name() {
    let o = fwbench(&["testbed", "up", "--name", &tb.name]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("already exists"));
    let o = fwbench(&["testbed", "status", "--name", &tb.name]);
    let s = stdout(&o);
    assert!(
        s.contains("198.18.0.1/16") && s.contains("2001:2:0:2::2/64"),
        "{s}"
    );
    assert!(stdout(&fwbench(&["testbed", "status"])).contains(&tb.name));
    let o = fwbench(&["testbed", "down", "--name", &tb.name]);
    assert!(o.status.success());
    assert!(namespaces_with(&format!("fwb-{}-", tb.name)).is_empty());
    assert_eq!(
        fwbench(&["testbed", "down", "--name", &tb.name])
            .status
            .code(),
        Some(2)
    );
}

// ---- firewall engines (issue 3) ----

/// Kill the gateway agent of a trial (`extra`: its duration and rules) on a new testbed:
/// it cannot undo anything, so `table` stays behind. The next trial (another engine)
/// finds the crash marker and removes what it lists: nothing of fwbench's is left.
fn crash_marker_cleans_up(extra: &str, table: &str) {
    let tb = TestbedGuard::up("forward");
    let ns = tb.gw();
    let state = crash_gateway_agent(&tb.name, &ns, &argv(extra));
    assert!(
        state.contains(table),
        "expected {table} left after the crash"
    );
    let v = echo_json(
        &tb.name,
        &["-n", "1", "--engine", "iptables-legacy", "--rules", "5"],
    );
    assert_eq!(v["status"], "ok", "{v}");
    assert_gateway_clean(&ns, "after the crash marker's cleanup:");
}

#[root_test(tb = "forward")]
fn every_engine_installs_10000_rules_verifies_and_removes_them() {
    for &engine in NETFILTER_ENGINES {
        let v = echo_json(
            &tb.name,
            &[
                "-n", "2", "-P", "udp", "--engine", engine, "--model", "linear", "--rules",
                "10000", "-t", "1",
            ],
        );
        assert_eq!(v["status"], "ok", "{engine}: {v}");
        let fw = &v["gateway"]["firewall"];
        let set_engine = engine.contains("set");
        let (rules, elements) = (u(&fw["rules"]), u(&fw["elements"]));
        if set_engine {
            assert_eq!((rules, elements), (2, 10_000), "{engine}: {fw}");
        } else {
            assert_eq!((rules, elements), (10_001, 0), "{engine}: {fw}");
        }
        assert!(fw["install_ms"].as_f64().unwrap() > 0.0, "{engine}");
        assert!(fw["remove_ms"].as_f64().is_some(), "{engine}: {fw}");
        let verdicts = &fw["verdicts"];
        assert_eq!(verdicts["ok"], true, "{engine}: {verdicts}");
        assert!(u(&verdicts["matched_packets"]) > 0, "{engine}");
        assert_eq!(u(&verdicts["filler_packets"]), 0, "{engine}");
        assert_eq!(u(&v["result"]["validation_errors"]), 0, "{engine}");
        assert_gateway_clean(&tb.gw(), engine);
    }
}

#[root_test(tb = "forward")]
fn nft_table_families_install_verify_and_remove_for_ipv4_and_ipv6() {
    let ns = tb.gw();
    for (nft_family, ip, table) in [
        ("inet", "4", "inet fwbench"),
        ("inet", "6", "inet fwbench"),
        ("ip", "4", "ip fwbench"),
        ("ip", "6", "ip6 fwbench"),
    ] {
        for engine in ["nft", "nft-set"] {
            let what = format!("{engine} --nft-family {nft_family} -A {ip}");
            let v = echo_json(
                &tb.name,
                &cmd!(
                    "-n 2 -P udp -A",
                    ip,
                    "--engine",
                    engine,
                    "--rules 200 --nft-family",
                    nft_family
                ),
            );
            assert_eq!(v["status"], "ok", "{what}: {v}");
            let fw = &v["gateway"]["firewall"];
            let want = if engine == "nft" { (201, 0) } else { (2, 200) };
            assert_eq!((u(&fw["rules"]), u(&fw["elements"])), want, "{what}: {fw}");
            assert_eq!(fw["verdicts"]["ok"], true, "{what}: {fw}");
            assert!(u(&fw["verdicts"]["matched_packets"]) > 0, "{what}");
            assert_eq!(fw["settings"]["table"], table, "{what}: {fw}");
            assert_eq!(v["firewall_settings"]["table"], table, "{what}: {v}");
            assert!(fw["remove_ms"].as_f64().is_some(), "{what}: {fw}");
            let left = gateway_state(&ns);
            assert!(!left.contains("fwbench"), "{what} left: {left}");
        }
    }
    // The rendered text names the table, and a family for iptables is refused (exit 2).
    let o = fwbench(&argv(
        "rules render --engine nft --nft-family ip -A 6 --count 2",
    ));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("# settings: table ip6 fwbench;"), "{text}");
    for bad in [
        &["--engine", "iptables-legacy", "--nft-family", "ip"][..],
        &["--engine", "nft", "--nft-family", "bridge"][..],
    ] {
        let o = fwbench(&[&["echo", "--testbed", &tb.name, "--no-store"][..], bad].concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("nft") && (err.contains("bridge") || err.contains("iptables-legacy")),
            "{err}"
        );
    }
    assert!(!gateway_state(&ns).contains("fwbench"));
}

#[root_test]
fn crash_marker_cleans_an_ip6_table_up() {
    crash_marker_cleans_up(
        "-t 30 -A 6 --engine nft --nft-family ip --rules 50",
        "table ip6 fwbench",
    );
}

#[root_test(tb = "forward")]
fn set_engines_hold_250000_elements() {
    for engine in ["nft-set", "ipset-legacy"] {
        let v = echo_json(
            &tb.name,
            &[
                "-n", "1", "-P", "udp", "--engine", engine, "--rules", "250000", "-t", "1",
            ],
        );
        assert_eq!(v["status"], "ok", "{engine}: {v}");
        assert_eq!(
            u(&v["gateway"]["firewall"]["elements"]),
            250_000,
            "{engine}"
        );
        assert_eq!(v["gateway"]["firewall"]["verdicts"]["ok"], true, "{engine}");
    }
}

#[root_test(tb = "forward")]
fn seed000_rules_permit_clients_and_drop_a_stranger() {
    for engine in ["nft", "iptables-legacy", "iptables-nft"] {
        for family in ["4", "6"] {
            let v = echo_json(
                &tb.name,
                &cmd!(
                    "-n 3 -P tcp -A",
                    family,
                    "--engine",
                    engine,
                    "--model seed000-f4"
                ),
            );
            assert_eq!(v["status"], "ok", "{engine}/{family}: {v}");
            let fw = &v["gateway"]["firewall"];
            assert_eq!(u(&fw["rules"]), 3 * 4 + 1, "{engine}: {fw}");
            assert_eq!(fw["verdicts"]["ok"], true, "{engine}/{family}: {fw}");
            assert_eq!(u(&fw["verdicts"]["policy_drops"]), 0);
        }
    }
    // A source that is not a permitted client is dropped by the policy: install the
    // F=2 rules for 2 clients by hand-held echo with 3 clients — client 3 is a stranger.
    let o = fwbench(&argv(
        "rules render --engine nft --model seed000-f2 --clients 2 -P udp",
    ));
    assert!(o.status.success());
    let text = stdout(&o);
    let batch: String = text
        .lines()
        .filter(|l| !l.starts_with('#') && *l != "EOF")
        .map(|l| format!("{l}\n"))
        .collect();
    let _rules = NftTable::load(&tb.gw(), "inet", "fwbench", &batch);
    let v = echo_json(
        &tb.name,
        &["-n", "3", "-P", "udp", "-t", "1", "--timeout-ms", "100"],
    );
    let per = v["result"]["per_client"].as_array().unwrap();
    assert!(u(&per[0]["mp"][3]["frames"]) > 0, "client 1 permitted");
    assert!(u(&per[1]["mp"][3]["frames"]) > 0, "client 2 permitted");
    assert_eq!(
        u(&per[2]["mp"][3]["frames"]),
        0,
        "client 3 is not permitted: dropped"
    );
}

#[root_test(tb = "forward")]
fn foreign_rules_are_untouched() {
    let ns = tb.gw();
    let run = |argv: &[&str]| {
        assert!(
            Command::new("ip")
                .args(["netns", "exec", &ns])
                .args(argv)
                .status()
                .unwrap()
                .success(),
            "{argv:?}"
        )
    };
    run(&["nft", "add", "table", "inet", "foreign"]);
    run(&[
        "nft",
        "add",
        "chain",
        "inet",
        "foreign",
        "c",
        "{ type filter hook forward priority 10; policy accept; }",
    ]);
    run(&argv(
        "nft add rule inet foreign c ip saddr 203.0.113.9 counter drop",
    ));
    run(&argv("iptables-legacy -A FORWARD -s 198.51.100.7 -j DROP"));
    run(&argv("iptables-nft -A FORWARD -s 198.51.100.8 -j DROP"));
    let before = (
        in_ns(&ns, &["nft", "list", "ruleset"]),
        in_ns(&ns, &["iptables-legacy-save"]),
    );
    for &engine in NETFILTER_ENGINES {
        let v = echo_json(&tb.name, &["-n", "2", "--engine", engine, "--rules", "100"]);
        assert_eq!(v["status"], "ok", "{engine}: {v}");
    }
    // Comments carry timestamps and built-in chains count packets: compare the rest.
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| match l.rsplit_once(" [") {
                Some((head, _)) if l.starts_with(':') => head.to_string(),
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let after = (
        in_ns(&ns, &["nft", "list", "ruleset"]),
        in_ns(&ns, &["iptables-legacy-save"]),
    );
    assert_eq!(
        strip(&before.0),
        strip(&after.0),
        "foreign nft ruleset changed"
    );
    assert_eq!(
        strip(&before.1),
        strip(&after.1),
        "foreign iptables-legacy rules changed"
    );
}

#[root_test(tb = "forward")]
fn rules_removed_after_sigkill_of_controller() {
    let ns = tb.gw();
    for engine in ["nft", "ipset-legacy"] {
        let mut child = spawn_echo(
            &tb.name,
            &["-t", "60", "--engine", engine, "--rules", "1000"],
        );
        assert!(
            wait_for(20.0, || has_fwbench(&gateway_state(&ns))),
            "{engine}: rules never installed"
        );
        std::thread::sleep(Duration::from_millis(500));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            wait_for(10.0, || !has_fwbench(&gateway_state(&ns))),
            "{engine}: left after SIGKILL: {}",
            gateway_state(&ns)
        );
    }
}

#[root_test(tb = "forward")]
fn firewall_bad_input_exits_2_and_leaves_gateway_unchanged() {
    let ns = tb.gw();
    let before = gateway_state(&ns);
    let (_dir, bad_nft) = TempDir::with_text("bad.nft", "table inet mine {\n  chain c {\n    type filter hook forward priority 0;\n    ip saddr 192.0.2.1 frobnicate\n  }\n}\n");
    let bad = bad_nft.to_str().unwrap();
    for args in [
        &["--engine", "pf"][..],
        &["--engine", "nft", "--model", "bogus"],
        &["--engine", "nft", "--rules", "-5"],
        &["--engine", "nft", "--rules", "50000000"],
        &["--engine", "nft", "--model", "string-bm"],
        &["--engine", "nft", "--model", "import", "--import", bad],
        &["--engine", "nft", "--position", "sideways"],
        &["--model", "seed000-f2"],
    ] {
        let mut a = vec!["echo", "--testbed", &tb.name, "--no-store", "-t", "1"];
        a.extend_from_slice(args);
        let o = fwbench(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        if args.contains(&"string-bm") {
            assert_says(&o, "cannot express string match");
        }
        if args.contains(&"50000000") {
            assert!(
                stderr(&o).contains("GiB"),
                "memory estimate: {}",
                stderr(&o)
            );
        }
        if args.contains(&"import") {
            assert!(
                stderr(&o).contains("bad.nft:4"),
                "engine's error with file and line: {}",
                stderr(&o)
            );
        }
    }
    assert_eq!(before, gateway_state(&ns), "gateway changed by bad input");
}

#[root_test(tb = "forward")]
fn import_iptables_save_and_nft_files_run() {
    // Two TCP echo clients through an imported rule set; the trial must be ok.
    let import_echo = |engine: &str, file: &std::path::Path| {
        let file = file.to_str().unwrap();
        let v = echo_json(
            &tb.name,
            &["-n", "2", "-P", "tcp", "--engine", engine, "--import", file],
        );
        assert_eq!(v["status"], "ok", "{engine}: {v}");
        v
    };
    let (dir, ipt) = TempDir::with_text("rules.v4", "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n:web - [0:0]\n-A FORWARD -s 192.0.2.0/24 -j DROP\n-A FORWARD -j web\n-A web -p tcp -j ACCEPT\nCOMMIT\n");
    let v = import_echo("iptables-nft", &ipt);
    assert_eq!(u(&v["result"]["validation_errors"]), 0);
    assert!(
        u(&v["gateway"]["firewall"]["rules"]) >= 3,
        "{}",
        v["gateway"]
    );
    let nft = dir.write("rules.nft", "table inet filter {\n\tset bad {\n\t\ttype ipv4_addr\n\t\telements = { 192.0.2.1, 198.51.100.1 }\n\t}\n\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\tip saddr @bad drop\n\t\tmeta l4proto tcp accept\n\t}\n}\n");
    let v = import_echo("nft", &nft);
    assert_eq!(
        u(&v["gateway"]["firewall"]["elements"]),
        2,
        "{}",
        v["gateway"]
    );
    assert_gateway_clean(&tb.gw(), "after the imports:");
}

#[root_test]
fn crash_marker_lets_the_next_run_clean_up() {
    crash_marker_cleans_up("-t 30 --engine nft --rules 50", "table inet fwbench");
}

#[root_test]
fn killed_run_resumes_without_repeating_or_losing_trials() {
    // No seed: the resumed run must take the interrupted run's seed to keep the keys.
    let (dir, sc) = TempDir::with_text(
        "resume.toml",
        "order = \"random\"\nrepetitions = 2\n[params]\nproto = \"udp\"\nclients = [1, 2, 3]\nduration = \"600ms\"\n",
    );
    let db = dir.file("r.db");
    let args = ["run", sc.to_str().unwrap(), "--db", db.to_str().unwrap()];
    let mut child = spawn_quiet(&args);
    // Kill it (no cleanup chance) once some, not all, trials are stored.
    let stored = |db: &std::path::Path| {
        if db.exists() {
            sqlite_count(db, "SELECT count(*) FROM trials")
        } else {
            0
        }
    };
    assert!(
        wait_for(60.0, || stored(&db) >= 2),
        "trials never got stored"
    );
    child.kill().unwrap();
    let _ = child.wait();
    let before = stored(&db);
    assert!((2..6).contains(&before), "{before} trials before the kill");
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM runs WHERE status = 'running'"),
        1
    );
    let o = fwbench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_says(&o, "resuming run 1");
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM runs"),
        1,
        "same run"
    );
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM trials"),
        6,
        "none lost"
    );
    assert_eq!(
        sqlite_count(&db, "SELECT count(DISTINCT trial_key) FROM trials"),
        6,
        "none repeated"
    );
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM runs WHERE status = 'complete'"),
        1
    );
    // A complete run is not resumed: the next invocation is a new run.
    let o = fwbench(&cmd!("run", &sc, "--db", &db, "--dry-run"));
    assert!(o.status.success());
    // The ephemeral testbed of the killed run is gone.
    assert!(namespaces_with("fwb-e")
        .iter()
        .all(|n| !n.contains(&child.id().to_string())));
}

#[root_test]
fn workload_file_runs_its_commands_inside_the_client_namespace() {
    // `ip link show c0` succeeds only in the client's namespace (the host has no c0).
    let (_dir, w) = TempDir::with_text(
        "w.txt",
        "# seed 003 style\nsequential 3 { command \"ip link show c0\" }\nparallel 2 { sequential 2 { command \"sleep 0.2\" } }\nrandom 2 7 10ms 20ms { command \"false\" }\n",
    );
    let t0 = std::time::Instant::now();
    let o = fwbench(&["workload", w.to_str().unwrap(), "--json"]);
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(
        o.status.code(),
        Some(1),
        "two commands fail: {}",
        stderr(&o)
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["commands"], 9);
    assert_eq!(v["failed"], 2);
    let ran = v["ran"].as_array().unwrap();
    let in_ns = ran
        .iter()
        .filter(|r| r["argv"][0] == "ip")
        .collect::<Vec<_>>();
    assert_eq!(in_ns.len(), 3);
    assert!(
        in_ns.iter().all(|r| r["exit"] == 0),
        "ran in the client namespace: {in_ns:?}"
    );
    // Durations against clocks of our own: each `sleep 0.2` takes at least 0.2 s, every
    // command some time, none longer than the whole fwbench call timed here.
    let sleeps: Vec<f64> = ran
        .iter()
        .filter(|r| r["argv"][0] == "sleep")
        .map(|r| f(&r["duration_s"]))
        .collect();
    assert_eq!(sleeps.len(), 4, "{ran:?}");
    assert!(sleeps.iter().all(|&d| d >= 0.2), "{sleeps:?}");
    assert!(wall >= 0.4, "two sleeps in sequence: {wall} s");
    assert!(
        ran.iter()
            .all(|r| f(&r["duration_s"]) > 0.0 && f(&r["duration_s"]) < wall),
        "{ran:?} within {wall} s"
    );
    // Unknown commands and parse errors are bad input, before any namespace exists.
    std::fs::write(&w, "sequential { command \"no-such-tool-fwbench\" }\n").unwrap();
    let o = fwbench(&["workload", w.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(&o, ":1:14: command 'no-such-tool-fwbench' not found");
}

/// `fwbench workload` takes the trial commands' firewall options: the rule set stands
/// on the gateway while the commands run, and its read-back is printed.
#[root_test]
fn workload_file_runs_with_the_firewall_options() {
    let (_dir, w) = TempDir::with_text("w.txt", "sequential 2 { command \"true\" }\n");
    let file = w.to_str().unwrap();
    let v = json_of(&[
        "workload",
        file,
        "--json",
        "--no-store",
        "--engine",
        "nft",
        "--rules",
        "50",
    ]);
    assert_eq!(v["failed"], 0, "{v}");
    assert_eq!(v["firewall"]["engine"], "nft", "{v}");
    assert!(v["firewall"]["rules"].as_u64().unwrap() >= 50, "{v}");
    assert!(v["firewall"]["remove_ms"].is_number(), "removed after: {v}");
    // Without an engine no gateway agent runs: no rule-set figures.
    let v = json_of(&["workload", file, "--json", "--no-store"]);
    assert!(v["firewall"].is_null(), "{v}");
    // Bad firewall options are bad input, before any namespace exists.
    let o = fwbench(&["workload", file, "--model", "import"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--model import needs --import FILE"));
}

// ---- every trial starts from the same gateway ("numbers to trust", point 1) ----

/// The scenario of the residue tests: iptables-nft (leaves an empty `table ip filter`,
/// which the gateway removes), none, iptables-legacy (leaves its `filter` table
/// instantiated, which no one can remove from a namespace), twice, in this order.
const MIXED_ENGINES: &str = "order = \"sequential\"\nrepetitions = 2\n[params]\nproto = \"udp\"\nclients = 1\nduration = \"500ms\"\nrules = 10\nengine = [\"iptables-nft\", \"none\", \"iptables-legacy\"]\n";

/// Per trial, in run order: engine, clean_start, start differences, removed, left.
fn residue_rows(db: &std::path::Path) -> Vec<Vec<String>> {
    let sql = "SELECT json_extract(params, '$.engine'), \
        ifnull(json_extract(results, '$.clean_start'), 'none'), \
        ifnull(json_extract(results, '$.start_differences'), '[]'), \
        ifnull(json_extract(results, '$.gateway.residue.removed'), '[]'), \
        ifnull(json_extract(results, '$.gateway.residue.left'), '[]') \
        FROM trials ORDER BY id";
    sqlite_rows(db, sql)
}

#[root_test(tb = "forward")]
fn named_testbed_trials_start_clean_after_iptables_nft_and_after_legacy() {
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write("mixed.toml", MIXED_ENGINES);
    let ns = tb.gw();
    // A fresh gateway's state, to compare with after the run.
    let fresh_legacy = in_ns(&ns, &["cat", "/proc/net/ip_tables_names"]);
    // Addresses without the link-local ones (from the veths' random MACs).
    let addrs = |ns: &str| -> String {
        in_ns(ns, &["ip", "-br", "addr"])
            .split_whitespace()
            .filter(|w| !w.starts_with("fe80::"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let fresh_addrs = addrs(&ns);
    let o = fwbench(&cmd!("run", &sc, "--db", &db, "--testbed", &tb.name));
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    assert_says(&o, "rebuilt the testbed (same name and addresses)");
    // Two legacy trials, two rebuilds: said once.
    assert_eq!(
        stderr(&o).matches("rebuilt the testbed").count(),
        1,
        "{}",
        stderr(&o)
    );
    let rows = residue_rows(&db);
    let engines: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        engines,
        ["iptables-nft", "none", "iptables-legacy"].repeat(2),
        "{rows:?}"
    );
    // 1: iptables-nft's empty built-in table is removed by its own trial …
    assert_eq!(rows[0][1], "1", "{rows:?}");
    assert!(rows[0][3].contains("nft table ip filter"), "{rows:?}");
    assert_eq!(rows[0][4], "[]", "{rows:?}");
    // … so the next trial (engine none) starts clean.
    assert_eq!(rows[1][1], "1", "{rows:?}");
    // 3: iptables-legacy starts clean and leaves its table instantiated …
    assert_eq!(rows[2][1], "1", "{rows:?}");
    assert!(
        rows[2][4].contains("legacy table filter instantiated"),
        "{rows:?}"
    );
    // … and the named testbed (fwbench's) is rebuilt: every later trial starts clean.
    for r in &rows[3..] {
        assert_eq!(r[1], "1", "{rows:?}");
    }
    // After the last (legacy) trial too: the gateway equals a fresh one, same addresses.
    assert_eq!(
        in_ns(&ns, &["cat", "/proc/net/ip_tables_names"]),
        fresh_legacy
    );
    assert_eq!(in_ns(&ns, &["nft", "list", "tables"]).trim(), "");
    assert_eq!(addrs(&ns), fresh_addrs);
    assert!(
        !stderr(&o).contains("[gateway not clean at start]"),
        "{}",
        stderr(&o)
    );
}

#[root_test]
fn five_thousand_epoll_echo_clients_and_namespace_limits() {
    let _ = ROOT;
    let tb = TestbedGuard::up("forward");
    let t0 = std::time::Instant::now();
    let v = echo_json(&tb.name, &["-n", "5000", "-T", "epoll", "-t", "2"]);
    assert_eq!(v["status"], "ok", "{}", v["error"]);
    assert_eq!(u(&v["params"]["clients"]), 5000);
    assert_eq!(u(&v["result"]["validation_errors"]), 0);
    let per = v["result"]["per_client"].as_array().unwrap();
    assert_eq!(per.len(), 5000);
    let silent = per
        .iter()
        .filter(|c| u(&c["mp"][3]["frames"]) == 0 || !c["error"].is_null())
        .count();
    assert_eq!(silent, 0, "clients without an echo or with an error");
    // The client block is routed via one next hop: the gateway holds a handful of
    // neighbour entries, not one per client (the table is shared with the host).
    let neigh = in_ns(&tb.gw(), &["ip", "neigh", "show"]);
    assert!(neigh.lines().count() < 10, "{neigh}");
    // Limits raised inside the testbed's namespaces (never in the host's).
    let somaxconn = in_ns(&tb.gw(), &["cat", "/proc/sys/net/core/somaxconn"]);
    assert_eq!(somaxconn.trim(), "65535");
    let ports = in_ns(
        &format!("fwb-{}-cli", tb.name),
        &["cat", "/proc/sys/net/ipv4/ip_local_port_range"],
    );
    assert_eq!(
        ports.split_whitespace().collect::<Vec<_>>(),
        ["1024", "65535"]
    );
    let reserved = in_ns(
        &format!("fwb-{}-cli", tb.name),
        &["cat", "/proc/sys/net/ipv4/ip_local_reserved_ports"],
    );
    assert_eq!(
        reserved.trim(),
        "6000-6010",
        "X11's ports are no source ports"
    );
    eprintln!("5000 echo clients: {:.1} s", t0.elapsed().as_secs_f64());
}

#[root_test]
fn ephemeral_run_mixing_engines_starts_every_trial_clean() {
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write("mixed.toml", MIXED_ENGINES);
    run_stored(&sc, &db);
    let rows = residue_rows(&db);
    assert_eq!(rows.len(), 6, "{rows:?}");
    for r in &rows {
        assert_eq!(r[1], "1", "every trial starts clean: {rows:?}");
        assert_eq!(r[2], "[]", "{rows:?}");
    }
    // The legacy trials left their table; the testbed was replaced after each.
    assert!(rows[2][4].contains("legacy table filter"), "{rows:?}");
    assert!(rows[5][4].contains("legacy table filter"), "{rows:?}");
    // Each stored trial names its effective engine and kind (what the report reads).
    let engines = sqlite_rows(&db, "SELECT engine_id, engine_kind FROM trials ORDER BY id");
    let want = |id: &str, kind: &str| vec![id.to_string(), kind.to_string()];
    let (nft, none, legacy) = (
        want("iptables-nft", "xtables"),
        want("none", "none"),
        want("iptables-legacy", "xtables"),
    );
    assert_eq!(
        engines,
        [&nft, &none, &legacy, &nft, &none, &legacy].map(Clone::clone),
        "{rows:?}"
    );
    // An nft engine's id carries its table family.
    let o = fwbench(&cmd!(
        "echo -t 1 -n 1 -P udp --engine nft-set --rules 10 --nft-family ip --db",
        &db
    ));
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let last = sqlite_rows(
        &db,
        "SELECT engine_id, engine_kind FROM trials ORDER BY id DESC LIMIT 1",
    );
    assert_eq!(last, [want("nft-set/ip", "nft")]);
}

/// An SCTP trial on a kernel without SCTP, on legacy rules: the trial after it starts
/// clean. Before the first fix the gateway's legacy tables went in, the server then
/// refused SCTP, and every later trial of seed 000 ran on a gateway with legacy tables
/// hooked (1 173 of 1 175, each marked not clean); the testbed was then replaced after
/// each such trial (`residue_of`, unit-tested), ~1 s each; now the kernel is asked
/// before any agent starts, and nothing is set up to doubt.
#[root_test]
fn a_trial_that_ends_unavailable_on_legacy_rules_leaves_no_dirty_gateway() {
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write(
        "sctp.toml",
        "order = \"sequential\"\nrepetitions = 1\n[params]\nclients = 1\n\
         duration = \"300ms\"\nrules = 10\n\
         [[case]]\nlabel = \"before\"\nproto = \"udp\"\nengine = \"none\"\n\
         [[case]]\nlabel = \"sctp on legacy\"\nproto = \"sctp\"\nengine = \"iptables-legacy\"\n\
         [[case]]\nlabel = \"after\"\nproto = \"udp\"\nengine = \"none\"\n",
    );
    let o = run_stored(&sc, &db);
    let rows = sqlite_rows(
        &db,
        "SELECT json_extract(params, '$.label'), status, \
         ifnull(json_extract(results, '$.clean_start'), 'none') FROM trials ORDER BY id",
    );
    let want = |l: &str, s: &str, c: &str| vec![l.to_string(), s.to_string(), c.to_string()];
    if rows.get(1).is_some_and(|r| r[1] == "ok") {
        return skip("SCTP is available in this kernel: the unavailable path is not taken");
    }
    assert_eq!(
        rows,
        [
            want("before", "ok", "1"),
            want("sctp on legacy", "unavailable", "none"),
            want("after", "ok", "1")
        ],
        "{}",
        stderr(&o)
    );
    // Refused before any agent started (the kernel's SCTP probed here): no gateway set
    // up its legacy tables, so no testbed had to be replaced for the next trial.
    let sctp = sqlite_rows(
        &db,
        "SELECT json_array_length(results, '$.placement'), json_extract(results, '$.error') \
         FROM trials WHERE json_extract(params, '$.label') = 'sctp on legacy'",
    );
    assert_eq!(sctp[0][0], "0", "{sctp:?}");
    assert!(
        sctp[0][1].contains("SCTP unavailable in this kernel"),
        "{sctp:?}"
    );
    assert!(
        !stderr(&o).contains("before its gateway reported"),
        "{}",
        stderr(&o)
    );
}

/// Rows of a query on a results file, columns tab-separated (sqlite3 CLI).
fn sqlite_rows(db: &std::path::Path, sql: &str) -> Vec<Vec<String>> {
    let o = Command::new("sqlite3")
        .args(["-cmd", ".timeout 5000", "-separator", "\t"])
        .arg(db)
        .arg(sql)
        .output()
        .expect("sqlite3 CLI needed for this check (apt-get install sqlite3)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

#[root_test]
fn threads_mode_refuses_too_many_clients_before_starting() {
    let _ = ROOT;
    let o = fwbench(&["echo", "-n", "5000", "-T", "threads", "--no-store"]);
    assert_refused(&o, "use -T epoll");
}

/// One run per named testbed and one process per run of a results file: a second
/// command is refused with exit 2, naming the holder's PID; once the first has
/// finished, the lock is free again.
#[root_test(tb = "forward")]
fn second_run_on_a_busy_testbed_or_run_is_refused() {
    let (dir, db) = TempDir::with_file("r.db");
    let sc = dir.write(
        "s.toml",
        "[params]\nproto = \"udp\"\nclients = [1, 2]\nduration = \"2s\"\n",
    );
    let args = ["run", sc.to_str().unwrap(), "--db", db.to_str().unwrap()];
    let first = spawn_quiet(&[&args[..], &["--testbed", &tb.name]].concat());
    let pid = first.id().to_string();
    assert!(
        wait_for(30.0, || db.exists()
            && sqlite_count(&db, "SELECT count(*) FROM runs") == 1),
        "the first run never started"
    );
    // Same testbed, another command.
    let o = fwbench(&["echo", "--testbed", &tb.name, "-t", "1", "--no-store"]);
    assert_refused(
        &o,
        &format!("testbed '{}' is in use by fwbench PID {pid}", tb.name),
    );
    // Nor can it be taken down under the run: refused, and still there.
    let o = fwbench(&["testbed", "down", "--name", &tb.name]);
    assert_refused(
        &o,
        &format!("testbed '{}' is in use by fwbench PID {pid}", tb.name),
    );
    let o = fwbench(&["testbed", "status", "--name", &tb.name]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Same results file, same scenario (it would resume run 1), on an ephemeral
    // testbed so the testbed lock is not what refuses it.
    let o = fwbench(&args);
    assert_refused(&o, &format!("run 1 of {}", db.display()));
    assert_refused(&o, &format!("in use by fwbench PID {pid}"));
    let o = first.wait_with_output().unwrap();
    assert!(o.status.success());
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM trials"),
        2,
        "the refused commands stored nothing"
    );
    // Free again.
    let o = fwbench(&["echo", "--testbed", &tb.name, "-t", "1", "--no-store"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A lock file a killed holder left behind is no lock, and `testbed down` removes it.
    let stale = format!("fwbt-stale-{}", std::process::id());
    let file = std::path::Path::new("/run/fwbench/locks").join(format!("testbed-{stale}.lock"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "999999999\n").unwrap();
    let o = fwbench(&["testbed", "down", "--name", &stale]);
    assert_refused(&o, &format!("no testbed named '{stale}'"));
    assert!(!file.exists(), "{} left behind", file.display());
}

/// Cleanup on panic: a test's testbed guard takes its testbed down even while a command
/// the test spawned still uses it (`testbed down` alone is refused then): it stops that
/// command, by the PID in the testbed's lock, and removes every namespace.
#[root_test(tb = "forward")]
fn a_testbed_guard_removes_its_testbed_under_a_running_command() {
    let name = tb.name.clone();
    let mut child = spawn_quiet(&[
        "flow",
        "--testbed",
        &name,
        "-t",
        "60",
        "--rate",
        "1kpps",
        "--no-store",
    ]);
    let lock = format!("/run/fwbench/locks/testbed-{name}.lock");
    let pid = child.id().to_string();
    assert!(
        wait_for(30.0, || std::fs::read_to_string(&lock)
            .is_ok_and(|s| s.trim() == pid)),
        "the flow never took the testbed"
    );
    drop(tb);
    assert!(namespaces_with(&format!("fwb-{name}-")).is_empty());
    let status = child.wait().unwrap();
    assert!(!status.success(), "the flow was stopped: {status}");
}
