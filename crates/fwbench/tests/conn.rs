//! Connection workloads end to end (seeds 003 and 004): sessions, bulk, http (built-in
//! and nginx/curl), concurrent connections, the proxy topology, and their bad input.
//! The privileged tests need root (network namespaces); they are ignored without it.

mod util;

use serde_json::Value;
use util::*;

/// Run a connection workload on a testbed and return its JSON (must succeed).
fn conn(tb: &str, args: &[&str]) -> Value {
    let mut all = vec![args[0], "--testbed", tb, "--no-store", "--json"];
    all.extend_from_slice(&args[1..]);
    let v = json_of(&all);
    assert_eq!(v["status"], "ok", "{args:?}: {v}");
    v
}

/// [`conn`] of a command line written as one string, its result [`clean`] with
/// `sessions` sessions.
fn conn_clean(tb: &str, line: &str, sessions: u64) -> Value {
    let v = conn(tb, &argv(line));
    clean(&v, sessions);
    v
}

fn result(v: &Value) -> &Value {
    &v["result"]
}

/// Checks every connection result must pass: nothing failed, nothing corrupt, and the
/// server answered exactly what the client completed.
fn clean(v: &Value, sessions: u64) {
    let r = result(v);
    assert_eq!(u(&r["sessions"]), sessions, "{r}");
    assert_eq!(u(&r["failed"]), 0, "{r}");
    assert_eq!(u(&r["corrupt"]), 0, "{r}");
    assert_eq!(u(&r["session"]["count"]), sessions, "{r}");
}

#[root_test(tb = "forward")]
fn sessions_sequential_and_parallel_run_exactly_the_count_with_fin_close() {
    let v = conn(&tb.name, &["sessions", "--count", "300"]);
    clean(&v, 300);
    let r = result(&v);
    assert_eq!(u(&r["server"]["sessions"]), 300, "{r}");
    assert_eq!(u(&r["server"]["errors"]), 0, "a reset shows here: {r}");
    assert_eq!(u(&r["server"]["bad_requests"]), 0);
    // 300 × 512 response bytes arrived and were checked.
    assert_eq!(u(&r["bytes"]), 300 * 512);
    let s = &r["session"];
    assert!(
        f(&s["mean_ns"]) > 0.0 && u(&s["p50_ns"]) <= u(&s["p99_ns"]),
        "{s}"
    );
    assert!(f(&r["connect"]["mean_ns"]) <= f(&s["mean_ns"]), "{r}");
    assert_eq!(r["session_us"].as_array().unwrap().len(), 300);

    let v = conn_clean(
        &tb.name,
        "sessions -p 8 --count 800 --request 1K --response 4K",
        800,
    );
    let r = result(&v);
    assert_eq!(u(&r["parallel"]), 8);
    assert_eq!(u(&r["server"]["bytes_received"]), 800 * 1024);
    assert_eq!(u(&r["bytes"]), 800 * 4096);
    assert!(f(&r["sessions_per_s"]) > 0.0);

    // Without a count, sessions run for the duration.
    let v = conn(&tb.name, &["sessions", "-t", "1", "-p", "2"]);
    let r = result(&v);
    assert!(u(&r["sessions"]) > 50, "{r}");
    assert_eq!(u(&r["corrupt"]), 0);
    assert!((0.8..3.0).contains(&f(&r["elapsed_s"])), "{r}");
}

#[root_test(tb = "forward")]
fn bulk_splits_the_session_overhead_out_and_counts_every_byte() {
    let v = conn_clean(
        &tb.name,
        "bulk --size 1.7M --count 6 -p 3 --overhead-sessions 4",
        6,
    );
    let r = result(&v);
    assert_eq!(u(&r["bytes"]), 6 * 1_782_579);
    let o = &r["overhead"];
    assert_eq!(f(&o["sessions_charged"]), 2.0, "{o}");
    let (ov, tr, el) = (f(&o["overhead_s"]), f(&o["transfer_s"]), f(&r["elapsed_s"]));
    assert!((ov + tr - el).abs() < 1e-6 && ov > 0.0, "{o} {el}");
    // Net of the overhead the goodput is higher — unless the zero-byte sessions took
    // so long here (a CI run of 2026-11-28: a retransmitted SYN) that their charge
    // filled the whole time: then there is no net figure, not a made-up one.
    match o["net_goodput_bps"].as_f64() {
        Some(net) => assert!(net >= f(&r["goodput_bps"]), "{o}"),
        None => assert!(
            (ov - el).abs() < 1e-6,
            "no net goodput, yet time left: {o} {el}"
        ),
    }
    // The zero-byte sessions are measured but not counted as transfers.
    assert_eq!(u(&r["server"]["sessions"]), 6 + 4, "{r}");
}

#[root_test(tb = "forward")]
fn http_downloads_time_first_and_last_byte_also_behind_input_rules() {
    let v = conn(&tb.name, &["http", "--size", "8M", "--count", "3"]);
    clean(&v, 3);
    let r = result(&v);
    assert_eq!(u(&r["bytes"]), 3 * (8 << 20));
    assert_eq!(u(&r["server"]["http_requests"]), 3);
    let (fb, lb, s) = (
        f(&r["ttfb"]["mean_ns"]),
        f(&r["ttlb"]["mean_ns"]),
        f(&r["session"]["mean_ns"]),
    );
    assert!(
        0.0 < fb && fb < lb && lb <= s,
        "first {fb} last {lb} session {s}"
    );
    drop(tb);

    // Seed 004: the downloader sits behind INPUT rules (topology input).
    let tb = TestbedGuard::up("input");
    let v = conn_clean(
        &tb.name,
        "http --size 1M --count 2 --engine nft --rules 300 --position none",
        2,
    );
    assert_eq!(u(&v["rules_installed"]), 300, "{v}");
}

#[root_test(tb = "forward")]
fn proxy_relays_sessions_and_bulk_bytes_intact() {
    for buffer in ["1000", "16K"] {
        let v = conn(
            &tb.name,
            &cmd!(
                "bulk --topology proxy --proxy-buffer",
                buffer,
                "--size 3M --count 2 --overhead-sessions 1"
            ),
        );
        // Every byte is checked against the pattern: corrupt = 0 means relayed intact.
        clean(&v, 2);
        let r = result(&v);
        assert_eq!(u(&r["bytes"]), 2 * (3 << 20));
        let p = &v["gateway"]["proxy"];
        assert_eq!(u(&p["connections"]), 3, "{buffer}: {p}");
        assert!(u(&p["bytes_down"]) >= 2 * (3 << 20), "{p}");
        assert_eq!(u(&p["errors"]), 0, "{p}");
    }
    // Many transfers: a FIN the relay fails to pass on shows up as a read timeout.
    conn_clean(
        &tb.name,
        "bulk --topology proxy --count 120 -p 3 --timeout-ms 2000",
        120,
    );
    let v = conn_clean(&tb.name, "sessions --topology proxy --count 200 -p 4", 200);
    assert_eq!(u(&v["gateway"]["proxy"]["connections"]), 200);
    // Forwarding is off in proxy mode: a ping cannot cross, and says so (seed 003: N/A).
    let o = fwbench(&cmd!(
        "ping --testbed",
        &tb.name,
        "--topology proxy --no-store --json -c 5"
    ));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["status"], "unavailable", "{v}");
    assert!(v["error"].as_str().unwrap().contains("N/A"), "{v}");

    // Held connections beyond what the relay can pass on (two descriptors each, at most
    // 4 000 per process here): the client's connects complete into the relay's listen
    // backlog and stay open there, so the client counts 3 000 held while the server
    // accepted about 2 000 — flagged with why, never `ok` (it was: 14 000 "held" through
    // a relay that passed 10 254 at the machine's own limit).
    // Without CAP_SYS_RESOURCE (as here, and on any host by the bounding set) no role
    // may raise its limit past it.
    let o = std::process::Command::new("setpriv")
        .args([
            "--bounding-set",
            "-sys_resource",
            "--",
            "prlimit",
            "--nofile=4000:4000",
        ])
        .arg(bin())
        .args(cmd!(
            "connections --testbed",
            &tb.name,
            "--topology proxy --limit 3000 --hold 1 --timeout-ms 1500 --no-store --json"
        ))
        .output()
        .expect("run prlimit");
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["status"], "flagged", "{}: {v}", stderr(&o));
    let r = result(&v);
    assert!(u(&r["server"]["accepted"]) < 3_000, "{r}");
    let why = v["doubts"].to_string();
    assert!(
        why.contains("did not reach it by the end of the hold"),
        "{why}"
    );
}

#[root_test(tb = "forward")]
fn concurrent_connections_reach_the_limit_or_name_what_stopped_them() {
    let v = conn(
        &tb.name,
        &["connections", "--limit", "10000", "--hold", "0.5"],
    );
    let h = &result(&v)["hold"];
    assert_eq!(u(&h["reached"]), 10_000, "{h}");
    assert_eq!(u(&h["alive_at_stop"]), 10_000, "{h}");
    assert!(h["limiter"].as_str().unwrap().starts_with("limit"), "{h}");
    assert!(u(&result(&v)["server"]["max_open"]) >= 10_000);

    // A connection limit in the gateway: the 301st SYN goes unanswered. The timeout
    // outlasts one SYN retransmission (1 s): with 300 ms a SYN lost on a busy machine
    // timed out and 299 were reached.
    let (_dir, rules) = TempDir::with_text(
        "connlimit.nft",
        "table inet lim {\n  chain forward {\n    type filter hook forward priority 0; policy accept;\n    \
         tcp dport 21000 ct state new ct count over 300 drop\n  }\n}\n",
    );
    let v = trial_json(
        "connections",
        &tb.name,
        &cmd!(
            "--limit 1000 --timeout-ms 1500 --hold 0 --engine nft --import",
            &rules
        ),
    );
    // The imported ruleset dropped SYNs: the trial says so, naming the rule.
    assert_eq!(v["status"], "dropped", "{v}");
    let by = v["verdicts"]["dropped"]["by"].as_str().unwrap();
    assert!(by.starts_with("rule forward:1 (tcp dport 21000"), "{by}");
    let h = &result(&v)["hold"];
    // 300, or 299–298 on a loaded machine. Once a full run reached 299 with the trial
    // `dropped` (checked above): the rule dropped the 300th SYN while only 299
    // connections were open, so it counted one of them twice. The kernel's count is
    // approximate there (nf_conncount): a SYN held up in a starved softirq backlog and
    // its retransmission 1 s later can both pass the rule before either's conntrack
    // entry is confirmed; an unconfirmed tuple is not in the table to be compared with,
    // so both are added, and once one entry is confirmed both match it: that
    // connection counts twice for as long as it lives. Not a timeout of ours (the 1.5 s
    // outlast a retransmission, and a timeout alone would not make the trial
    // `dropped`). Each such pair counts one connection twice; a CI run under load had
    // two (298). A count off by more than two, or a trial the rule did not stop, fails.
    let reached = u(&h["reached"]);
    assert!((298..=300).contains(&reached), "{h}");
    assert!(h["limiter"].as_str().unwrap().contains("timed out"), "{h}");
}

/// 30 000 held connections: more than one process may open here (hard RLIMIT_NOFILE
/// 20 000, not raisable without CAP_SYS_RESOURCE), so the trial shards them over
/// client/server process pairs; the gateway's conntrack table holds every one, and the
/// trial reports its peak count and each process's peak memory.
#[root_test]
fn thirty_thousand_connections_shard_over_processes_and_the_gateway_tracks_each() {
    const N: u64 = 30_000;
    let tb = TestbedGuard::up("forward");
    let v = conn(
        &tb.name,
        &[
            "connections",
            "--limit",
            "30000",
            "--hold",
            "0.5",
            "--timeout-ms",
            "10000",
            "--engine",
            "nft",
            "--model",
            "conntrack",
        ],
    );
    let r = result(&v);
    let h = &r["hold"];
    assert_eq!(u(&h["reached"]), N, "{h}");
    assert_eq!(u(&h["alive_at_stop"]), N, "{h}");
    assert_eq!(h["limiter"], "limit (30000 connections)", "{h}");
    assert_eq!(u(&r["server"]["accepted"]), N, "{r}");
    let x = &r["scale"];
    let nofile = u(&x["nofile"]);
    let per: Vec<u64> = x["per_process"].as_array().unwrap().iter().map(u).collect();
    assert_eq!(per.iter().sum::<u64>(), N, "{x}");
    assert_eq!(u(&x["processes"]), per.len() as u64, "{x}");
    // Each process within its open-file limit, and no more processes than needed.
    assert!(per.iter().all(|&n| n + 256 <= nofile), "{x}");
    assert_eq!(
        per.len() as u64,
        N.div_ceil((nofile - 256).min(50_000)),
        "{x}"
    );
    if nofile < N {
        assert!(per.len() >= 2, "{x}");
    }
    // The gateway tracked every held connection (and little else).
    let ct = u(&x["gateway_conntrack"]);
    assert!((N..N + 1000).contains(&ct), "conntrack {ct}: {x}");
    assert!(u(&x["conntrack_max"]) >= N, "{x}");
    // Peak memory of every process, the controller's far under 2 GiB.
    for k in ["client_hwm_kib", "server_hwm_kib", "gateway_hwm_kib"] {
        assert!(u(&x[k]) > 0, "{k}: {x}");
    }
    assert!(u(&x["controller_hwm_kib"]) < 2 << 20, "{x}");
}

#[root_test]
fn nginx_and_curl_check_the_built_in_pair() {
    let nginx_before = count_processes("nginx");
    let tb = TestbedGuard::up("forward");
    // curl against nginx: software no one here wrote, on both ends.
    let v = conn_clean(
        &tb.name,
        "http --size 2M --count 3 --server-program nginx --client-program curl",
        3,
    );
    let r = result(&v);
    assert_eq!(u(&r["bytes"]), 3 * (2 << 20));
    assert!(
        r["client_program"].as_str().unwrap().starts_with("curl"),
        "{r}"
    );
    assert!(
        r["server"]["external"]
            .as_str()
            .unwrap()
            .starts_with("nginx"),
        "{r}"
    );
    assert_eq!(u(&r["server"]["http_requests"]), 3, "{r}");
    // The built-in client checks nginx's bytes against the pattern, byte for byte.
    conn_clean(
        &tb.name,
        "http --size 1M --count 2 --server-program nginx",
        2,
    );
    // curl against the built-in server.
    conn_clean(
        &tb.name,
        "http --size 1M --count 2 --client-program curl",
        2,
    );
    drop(tb);
    assert_eq!(count_processes("nginx"), nginx_before, "nginx left behind");
}

/// On this noisy machine 0.3-s steps can differ by a third at neighbouring parallelisms,
/// so the search may run out of its 16 trials narrowing: then it must say so (not `ok`,
/// a `not_converged` doubt naming its best so far), and every figure still holds.
#[root_test(tb = "forward")]
fn sessions_parallel_auto_reports_a_sweet_spot() {
    let t = trial_value("sessions", &tb.name, &["--parallel", "auto", "-t", "0.3"]);
    let v = &t["result"];
    let doubts = v["doubts"].as_array().cloned().unwrap_or_default();
    let not_converged = doubts.iter().find(|d| d["kind"] == "not_converged");
    // Other doubts (the best at the largest parallelism searched, its step flagged)
    // flag the trial either way.
    assert_eq!(t["status"] == "ok", doubts.is_empty(), "{t}");
    if v["converged"] == true {
        assert!(not_converged.is_none(), "{t}");
    } else {
        let d = not_converged.unwrap_or_else(|| panic!("not converged, no doubt says so: {t}"));
        let best = format!("best so far: {} parallel", u(&v["best_parallel"]));
        assert!(d["why"].as_str().unwrap().contains(&best), "{t}");
        assert_eq!(u(&v["trials"]), 16, "{t}");
    }
    assert_eq!(v["search"], "sweetspot", "{v}");
    let pts = v["points"].as_array().unwrap();
    assert!(pts.len() >= 3, "{v}");
    let best = u(&v["best_parallel"]);
    let best_rate = f(&v["best_sessions_per_s"]);
    assert!(pts.iter().any(|p| u(&p["parallel"]) == best));
    assert!(pts.iter().all(|p| f(&p["sessions_per_s"]) <= best_rate));
    assert_eq!(u(&pts[0]["parallel"]), 1);
}

fn count_processes(comm: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm"))
                .map(|c| c.trim() == comm)
                .unwrap_or(false)
        })
        .count()
}

/// Bad input: exit 2 with a message naming what is wrong (no root needed: checked first).
#[test]
fn connection_workloads_refuse_bad_input_with_exit_2() {
    for (args, want) in [
        (&["bulk", "--size", "8Q"][..], "bad size '8Q'"),
        (&["http", "--size", "8 MB"][..], "bad size"),
        (&["sessions", "--parallel", "0"][..], "parallel '0'"),
        (
            &["sessions", "--request", "8"][..],
            "below the 16-byte session header",
        ),
        (
            &["bulk", "--topology", "proxy", "--proxy-buffer", "0"][..],
            "--proxy-buffer 0",
        ),
        (
            &["http", "--server-program", "apache2"][..],
            "'apache2' is not supported",
        ),
        (&["bulk", "--parallel", "auto"][..], "auto"),
        (&["connections", "--limit", "0"][..], "at least 1"),
        (&["sessions", "--count", "0"][..], "at least 1"),
        (
            &["sessions", "--topology", "direct", "--engine", "nft"][..],
            "topology direct",
        ),
    ] {
        let o = fwbench(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn seed_scenarios_plan_the_studies_experiments() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let seed004 = format!("{dir}/seed004.toml");
    let seed003 = format!("{dir}/seed003.toml");
    let o = fwbench(&["run", &seed004, "--dry-run"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    // 33 coarse + 2001 fine + 100 A/B pairs (2 trials of 5 downloads each).
    assert!(
        out.contains("2234 trials"),
        "{}",
        &out[..out.len().min(400)]
    );
    let o = fwbench(&["run", &seed003, "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // 3 firewall types × (7 cases + the appendix's 5 proxy buffer sizes) × 3 repetitions.
    assert_prints(&o, "108 trials");
    assert_prints(&o, "proxy: ping 8 B");
}

#[root_test]
fn a_seed003_style_scenario_stores_every_cell_and_reports_the_firewall_types() {
    let (dir, scenario) = TempDir::with_text(
        "s3.toml",
        r#"
name = "mini seed003"
workload = "sessions"
seed = 7
[[firewall]]
label = "null firewall"
topology = "direct"
[[firewall]]
label = "proxy"
topology = "proxy"
proxy_buffer = "4K"
[[case]]
label = "ping 8 B"
workload = "ping"
size = 8
count = 50
[[case]]
label = "sequential sessions"
count = 200
[[case]]
label = "parallel bulk"
workload = "bulk"
size = "256K"
count = 6
parallel = 3
overhead_sessions = 2
"#,
    );
    let db = dir.file("r.db");
    let html = dir.file("r.html");
    let o = fwbench(&cmd!("run", &scenario, "--db", &db, "--report", &html));
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let count = |sql: &str| sqlite_count(&db, sql);
    assert_eq!(count("SELECT count(*) FROM trials"), 6);
    assert_eq!(
        count("SELECT count(*) FROM trials WHERE status = 'unavailable' AND workload = 'ping'"),
        1,
        "the proxy's ping is N/A"
    );
    assert_eq!(count("SELECT count(*) FROM trials WHERE status = 'ok'"), 5);
    assert_eq!(
        count(
            "SELECT count(*) FROM trials WHERE json_extract(results, '$.conn.proxy.connections') = 200"
        ),
        1,
        "the proxy's sessions went through the relay"
    );
    assert_eq!(
        count("SELECT sum(json_extract(results, '$.conn.corrupt')) FROM trials WHERE workload != 'ping'"),
        0
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Firewall types"), "no seed-003 table");
    assert!(page.contains("N/A"), "no N/A cell");
}
