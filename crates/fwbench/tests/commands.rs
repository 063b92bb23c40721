//! Every shipped scenario parsed and dry-run, and every command the other test files do
//! not drive run end to end once: `run --list-axes`, `schema --dir`, `check`,
//! `run --fresh`, `report -f csv|samples`, `testbed cleanup FILE`, and a `degrade`
//! search where the flow really degrades. Each is checked against an answer found
//! without fwbench (the scenario's TOML counted here, docs/schema, the kernel's own
//! lists, sqlite3, nft).

mod util;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use util::*;

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// Every shipped scenario file (default.toml, the seeds, xdp-*, hot-rules …).
fn shipped() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

/// How many values an axis takes: a list, a range `"a..b step s"`, `"each:N"`, else 1.
fn values(v: &toml::Value) -> u64 {
    match v {
        toml::Value::Array(a) => a.len() as u64,
        toml::Value::String(s) => {
            if let Some(n) = s.strip_prefix("each:") {
                return n.parse().unwrap();
            }
            let Some((a, rest)) = s.split_once("..") else {
                return 1;
            };
            let (b, step) = rest.split_once(" step ").unwrap_or((rest, "1"));
            let (a, b, step): (u64, u64, u64) = (
                a.trim().parse().unwrap(),
                b.trim().parse().unwrap(),
                step.trim().parse().unwrap(),
            );
            (b - a) / step + 1
        }
        _ => 1,
    }
}

/// Keys of `[params]`, `[[case]]` and `[[firewall]]` that are not axes.
const NOT_AXES: [&str; 3] = ["label", "workload", "repetitions"];

/// The trial count of a scenario computed from its TOML alone: per case, its
/// repetitions times the product of its axes' values (the case's own over `[params]`),
/// summed; times the `[[firewall]]` entries' values.
fn expected_trials(t: &toml::Table) -> u64 {
    let reps = t
        .get("repetitions")
        .and_then(|r| r.as_integer())
        .unwrap_or(1) as u64;
    let params = t
        .get("params")
        .and_then(|p| p.as_table())
        .cloned()
        .unwrap_or_default();
    let tables = |key: &str| -> Vec<toml::Table> {
        t.get(key)
            .and_then(|c| c.as_array())
            .map(|a| a.iter().map(|c| c.as_table().unwrap().clone()).collect())
            .unwrap_or_else(|| vec![toml::Table::new()])
    };
    let product = |m: &toml::Table| -> u64 {
        m.iter()
            .filter(|(k, _)| !NOT_AXES.contains(&k.as_str()))
            .map(|(_, v)| values(v))
            .product()
    };
    let firewalls: u64 = tables("firewall").iter().map(product).sum();
    let cases: u64 = tables("case")
        .iter()
        .map(|c| {
            let mut m = params.clone();
            m.extend(c.clone());
            let r = c
                .get("repetitions")
                .and_then(|r| r.as_integer())
                .map_or(reps, |r| r as u64);
            r * product(&m)
        })
        .sum();
    cases * firewalls
}

#[test]
fn every_shipped_scenario_parses_and_dry_runs_its_trials() {
    let files = shipped();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in "default seed000 seed001 seed002 seed003 seed004 xdp-drop xdp-cost hot-rules"
        .split_whitespace()
    {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let t: toml::Table = toml::from_str(&text).unwrap();
        let o = fwbench(&["run", path.to_str().unwrap(), "--dry-run"]);
        let ctx = path.display();
        assert!(o.status.success(), "{ctx}: {}", stderr(&o));
        let out = stdout(&o);
        let head = out.lines().next().unwrap_or_default();
        let name = t["name"].as_str().unwrap();
        let want = expected_trials(&t);
        assert_eq!(
            head,
            format!(
                "{name} — {want} trials (seed {})",
                t["seed"].as_integer().unwrap()
            ),
            "{ctx}"
        );
        let listed = out
            .lines()
            .filter(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() > 2 && w[0].parse::<u64>().is_ok() && w[1] == "rep"
            })
            .count() as u64;
        assert_eq!(listed, want, "{ctx}: trials listed");
        // The workload of the scenario is what its trials run (echo lines name none).
        let workload = t["workload"].as_str().unwrap();
        if workload != "echo" {
            assert!(out.contains(&format!(" {workload} ")), "{ctx}");
        }
    }
    // Without a file: the default experiment, the same as scenarios/default.toml.
    let o = fwbench(&["run", "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let file = fwbench(&[
        "run",
        scenarios_dir().join("default.toml").to_str().unwrap(),
        "--dry-run",
    ]);
    assert_eq!(stdout(&o), stdout(&file));
}

#[test]
fn list_axes_names_every_axis_the_shipped_scenarios_set() {
    let o = fwbench(&["run", "--list-axes"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let axes: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(axes.len() > 20, "{out}");
    for path in shipped() {
        let t: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut keys: Vec<String> = vec![];
        if let Some(p) = t.get("params").and_then(|p| p.as_table()) {
            keys.extend(p.keys().cloned());
        }
        for section in ["case", "firewall"] {
            for c in t
                .get(section)
                .and_then(|c| c.as_array())
                .into_iter()
                .flatten()
            {
                keys.extend(c.as_table().unwrap().keys().cloned());
            }
        }
        for k in keys.iter().filter(|k| !NOT_AXES.contains(&k.as_str())) {
            assert!(
                axes.contains(&k.as_str()),
                "{}: {k} is not listed by --list-axes: {axes:?}",
                path.display()
            );
        }
    }
}

#[test]
fn schema_dir_writes_the_documented_schemas() {
    let dir = TempDir::new();
    let o = fwbench(&["schema", "--dir", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema");
    for name in ["trial.json", "run-summary.json"] {
        let written = std::fs::read_to_string(dir.file(name))
            .unwrap_or_else(|e| panic!("{name} not written: {e}"));
        let documented = std::fs::read_to_string(docs.join(name)).unwrap();
        let (w, d): (Value, Value) = (
            serde_json::from_str(&written).unwrap(),
            serde_json::from_str(&documented).unwrap(),
        );
        assert_eq!(w, d, "{name} differs from docs/schema/{name}");
    }
    // Into a directory that cannot exist: bad input, nothing half-written elsewhere.
    let o = fwbench(&["schema", "--dir", "/proc/no-such-dir/x"]);
    assert_ne!(o.status.code(), Some(0));
}

#[root_test]
fn check_reports_this_host_as_the_kernel_and_path_see_it() {
    let (pid, o) = fwbench_with_pid(&["check", "-J"]);
    let v: Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&o), stderr(&o)));
    assert_eq!(v["schema"], "fwbench/check/1", "{v}");
    // Its scratch namespace is gone.
    assert!(namespaces_with(&format!("fwb-check-{pid}-")).is_empty());
    let cap = |name: &str| -> bool {
        v["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no capability {name}: {v}"))["ok"]
            .as_bool()
            .unwrap()
    };
    assert!(cap("netns") && cap("veth"), "root can make namespaces: {v}");
    assert_eq!(cap("sctp"), sctp_in_kernel(), "{v}");
    assert_eq!(cap("ipv6"), Path::new("/proc/net/if_inet6").exists(), "{v}");
    // Every tool is where a shell finds it, or missing where it does not.
    for t in v["tools"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .unwrap();
        let path = String::from_utf8_lossy(&found.stdout).trim().to_string();
        assert_eq!(
            t["path"].is_null(),
            path.is_empty(),
            "{name}: {t} vs {path:?}"
        );
    }
    // The text form says the same in a table.
    let o = fwbench(&["check"]);
    assert_prints(&o, "sctp");
}

/// A one-second echo scenario with two trials.
const TINY: &str = "name = \"tiny\"\nworkload = \"echo\"\nrepetitions = 2\nseed = 7\n[params]\nproto = \"udp\"\nclients = 1\nduration = \"500ms\"\n";

fn rows_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_owned)
        .collect()
}

#[root_test]
fn run_fresh_starts_a_new_run_and_report_writes_csv_and_samples() {
    let (dir, sc) = TempDir::with_text("tiny.toml", TINY);
    let db = dir.file("r.db");
    let (sc, dbs) = (sc.to_str().unwrap(), db.to_str().unwrap());
    let o = fwbench(&["run", sc, "--db", dbs]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sqlite_count(&db, "SELECT count(*) FROM runs"), 1);
    let o = fwbench(&["run", sc, "--db", dbs, "--fresh"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sqlite_count(&db, "SELECT count(*) FROM runs"), 2);
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM trials WHERE status = 'ok'"),
        4
    );
    assert_eq!(
        sqlite_count(&db, "SELECT count(DISTINCT run_id) FROM trials"),
        2,
        "each run has its own trials"
    );
    // CSV: a header and one row per trial of the newest run, as sqlite3 counts them.
    let csv = dir.file("t.csv");
    let o = fwbench(&["report", dbs, "-f", "csv", "-o", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = rows_of(&csv);
    let header: Vec<&str> = rows[0].split(',').collect();
    assert!(header.contains(&"trial_key"), "{header:?}");
    let newest = "(SELECT max(id) FROM runs)";
    let trials = sqlite_count(
        &db,
        &format!("SELECT count(*) FROM trials WHERE run_id = {newest}"),
    );
    let all = sqlite_count(&db, "SELECT count(*) FROM trials");
    let n = rows.len() as i64 - 1;
    assert!(
        n == trials || n == all,
        "{n} rows, {trials} trials: {rows:?}"
    );
    // Samples: one row per stored sample of the same trials.
    let samples = dir.file("s.csv");
    let o = fwbench(&cmd!("report", dbs, "-f samples -o", &samples));
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = rows_of(&samples);
    let stored_newest = sqlite_count(
        &db,
        &format!("SELECT count(*) FROM samples WHERE trial_id IN (SELECT id FROM trials WHERE run_id = {newest})"),
    );
    let stored_all = sqlite_count(&db, "SELECT count(*) FROM samples");
    let n = rows.len() as i64 - 1;
    assert!(stored_newest > 0, "samples are stored during trials");
    assert!(
        n == stored_newest || n == stored_all,
        "{n} rows, {stored_newest} samples stored: {:?}",
        &rows[..rows.len().min(5)]
    );
}

#[root_test(tb = "forward")]
fn testbed_cleanup_file_undoes_what_a_killed_gateway_agent_left() {
    let dir = TempDir::new();
    let ns = |role: &str| format!("fwb-{}-{role}", tb.name);
    let launcher = |role: &str| format!("[\"ip\", \"netns\", \"exec\", \"{}\"]", ns(role));
    let file = dir.write(
        "tb.toml",
        format!(
            "cache_dir = \"{d}/cache\"\n\n[client]\nlauncher = {c}\ninterface = \"c0\"\n\
             prefix = [\"198.18.1.0/16\", \"2001:2:0:1::c:0/64\"]\n\
             gateway_address = [\"198.18.0.1\", \"2001:2:0:1::1\"]\nmanage_addresses = true\n\n\
             [gateway]\nlauncher = {g}\ninterface = \"g0\"\n\n\
             [server]\nlauncher = {s}\naddress = [\"198.19.0.2\", \"2001:2:0:2::2\"]\n",
            d = dir.path().display(),
            c = launcher("cli"),
            g = launcher("gw"),
            s = launcher("srv"),
        ),
    );
    let file = file.to_str().unwrap();
    let gw = ns("gw");
    // SIGKILL the gateway agent (our child's child, in our namespace): it undoes nothing.
    let state = crash_gateway_agent(file, &gw, &["-t", "30", "--engine", "nft", "--rules", "50"]);
    assert!(
        state.contains("fwbench"),
        "expected leftovers after the crash"
    );
    let o = fwbench(&["testbed", "cleanup", file]);
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let left = nft_ruleset(&gw);
    assert!(!left.contains("fwbench"), "left: {left}");
    // Nothing more to do the second time, and still success.
    let o = fwbench(&["testbed", "cleanup", file]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[root_test(tb = "forward")]
fn degrade_finds_where_a_pinned_gateway_starts_losing() {
    // 15 Mb/s of 128-byte packets through a gateway pinned to its own CPU: 15 000
    // linear nft rules lose more than 10 % (packet.rs's pinned test), 0 rules nothing.
    let search = argv("-t 1 --rate 15M --engine nft --max-rules 20000");
    let d = trial_json("degrade", &tb.name, &[&search[..], &PINNED].concat());
    let r = &d["result"];
    let good = u(&r["last_good_rules"]);
    assert!(good < 20_000, "the flow degrades below the ceiling: {r}");
    assert!(u(&r["trials"]) > 2, "a search, not a single probe: {r}");
    // Independently: a flow with twice the last good count (or the ceiling) loses.
    let over = (2 * good.max(500)).min(20_000).to_string();
    let flow = [
        "-t", "1", "--rate", "15M", "--engine", "nft", "--rules", &over,
    ];
    let v = trial_json("flow", &tb.name, &[&flow[..], &PINNED].concat());
    assert!(u(&v["result"]["lost"]) > 0, "{over} rules: {v}");
}
