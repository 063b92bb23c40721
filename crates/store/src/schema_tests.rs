//! Unit tests of `schema`, beside `schema.rs`: they plant trials of named
//! workloads, which the module names only in its frozen legacy table.

use super::*;
use crate::tests::{scratch_run, trial};
use crate::{EngineRow, FirewallRow, Headline, KindRow, NewRun, Store, TrialRecord, UpdateRecord};
use rusqlite::{params, Connection};
use std::path::Path;

#[test]
fn gateway_updates_are_stored_with_their_trial_and_a_version_1_file_gets_the_table() {
    let (dir, _, mut s, run) = scratch_run("u.db");
    let rows: Vec<UpdateRecord> = (0..3)
        .map(|i| UpdateRecord {
            index: i,
            kind: "add".into(),
            method: "batch".into(),
            k: 1,
            installed: 20_000,
            start_unix_ns: 1_000 + u64::from(i),
            commit_ms: 4.5,
            marker: i == 0,
            time_to_effect_ms: (i == 0).then_some(2.25),
            ..Default::default()
        })
        .collect();
    let id = s
        .insert_trial(&TrialRecord {
            updates: rows.clone(),
            ..trial(run, "u")
        })
        .unwrap();
    assert_eq!(s.updates(id).unwrap(), rows);
    let v1 = dir.path().join("v1.db");
    v1_file(&v1);
    let s = Store::open(&v1).unwrap();
    let t = s.trials(None).unwrap();
    assert!(s.updates(t[0].id).unwrap().is_empty());
}

#[test]
fn version_1_files_are_migrated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("v1.db");
    old_file(&dir, 1);
    let mut s = Store::open(&dir).unwrap();
    let run = s.begin_run(&NewRun::default()).unwrap();
    s.insert_trial(&trial(run, "k")).unwrap();
    assert_eq!(
        s.trials(None).unwrap()[0].headline.received_pps,
        Some(12_345.5)
    );
    let v: i64 = s
        .conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, SCHEMA_VERSION);
}

/// A version-4 file opens (also read-only, in memory) and each old trial gets its
/// effective engine and kind from its parameters; new trials store theirs.
#[test]
fn version_4_trials_get_their_effective_engine() {
    let (_tmp, p, c) = old_file_with_run(4);
    for (key, params) in [
        ("a", r#"{"engine":"nft-set","nft_family":"ip"}"#),
        ("b", r#"{"engine":"iptables-nft"}"#),
        ("c", r#"{"engine":"none"}"#),
        ("d", r#"{"engine":"tc-bpf"}"#),
        ("e", r#"{"engine":"pf"}"#),
    ] {
        c.execute(
            "INSERT INTO trials (run_id, trial_key, rep, workload, status, started_at,
                     finished_at, params, placement, results)
                 VALUES (1, ?1, 1, 'flood', 'ok', 't0', 't1', ?2, '{}', '{}')",
            params![key, params],
        )
        .unwrap();
    }
    drop(c);
    let ids = |s: &Store| -> Vec<Option<(String, String)>> {
        s.trials(None)
            .unwrap()
            .into_iter()
            .map(|t| t.engine.map(|e| (e.id, e.kind)))
            .collect()
    };
    let want = |id: &str, kind: &str| Some((id.to_string(), kind.to_string()));
    let old = vec![
        want("nft-set/ip", "nft"),
        want("iptables-nft", "xtables"),
        want("none", "none"),
        want("tc-bpf", "bpf"),
        None,
    ];
    assert_eq!(ids(&Store::open_read_only(&p).unwrap()), old);
    let mut s = Store::open(&p).unwrap();
    assert_eq!(ids(&s), old);
    let mut t = trial(1, "new");
    t.engine = Some(EngineRow::of(fwmodel::EffectiveEngine::new(
        fwmodel::Engine::Nft,
        fwmodel::NftFamily::Ip,
    )));
    s.insert_trial(&t).unwrap();
    let new = s.trials(None).unwrap().pop().unwrap().engine.unwrap();
    assert_eq!(
        (new.name(), new.family(), new.kind.as_str()),
        ("nft", Some("ip"), "nft")
    );
    assert!(!new.is_none());
}

/// A version-3 file (rules as `rules`) opens, its value reads back as
/// `rules_installed`, and the views see old and new trials alike.
#[test]
fn version_3_rules_become_rules_installed_and_views_read_them() {
    let (_tmp, p, c) = old_file_with_run(3);
    c.execute_batch(
        "INSERT INTO trials (run_id, trial_key, rep, workload, status, started_at,
                 finished_at, params, placement, engine, rules, throughput_bps, results)
                 VALUES (1, 'old', 1, 'echo', 'ok', 't0', 't1',
                 '{\"engine\":\"nft\",\"rules\":1000,\"clients\":5,\"proto\":\"tcp\"}',
                 '[]', 'nft', 1001, 2e6, '{}');",
    )
    .unwrap();
    drop(c);
    let mut s = Store::open(&p).unwrap();
    let old = &s.trials(None).unwrap()[0];
    assert_eq!(old.firewall.as_ref().unwrap().rules_installed, 1001);
    assert_eq!(
        old.engine,
        Some(EngineRow {
            id: "nft/inet".into(),
            kind: "nft".into()
        }),
        "an old nft trial was inet"
    );
    // A new trial of each kind.
    let run = s.begin_run(&NewRun::default()).unwrap();
    let mut flood = trial(run, "flood");
    flood.workload = "flood".into();
    flood.params = serde_json::json!({"engine": "nft-set", "rules": 250000,
            "packet": {"size": {"payload": 18}, "rate": {"bps": 8e7}, "flows": 4}});
    flood.headline = Headline {
        received_pps: Some(50_000.0),
        loss_ratio: Some(0.25),
        ..Default::default()
    };
    flood.firewall = Some(FirewallRow {
        engine: "nft-set".into(),
        rules_installed: 2,
        set_elements: 250_000,
        ..Default::default()
    });
    flood.echo_clients.clear();
    s.insert_trial(&flood).unwrap();
    let mut sess = trial(run, "sessions");
    sess.workload = "sessions".into();
    sess.params = serde_json::json!({"engine": "none", "rules": 0,
            "conn": {"parallel": 4, "request": 64, "size": 512}});
    sess.headline = Headline {
        transactions_per_s: Some(9000.0),
        throughput_bps: Some(3.7e7),
        lost: Some(1),
        ..Default::default()
    };
    sess.results = serde_json::json!({"conn": {"sessions": 27000}});
    sess.echo_clients.clear();
    s.insert_trial(&sess).unwrap();
    let q = |sql: &str| -> Vec<String> {
        let mut st = s.conn.prepare(sql).unwrap();
        let n = st.column_count();
        st.query_map([], |r| {
            Ok((0..n)
                .map(|i| match r.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Null => "NULL".to_string(),
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Real(v) => v.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into(),
                    rusqlite::types::ValueRef::Blob(_) => "blob".into(),
                })
                .collect::<Vec<_>>()
                .join(" "))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
    };
    assert_eq!(
            q("SELECT trial_key, engine, rules_requested, rules_installed, clients, transport, echo_throughput_bps FROM echo_results ORDER BY trial_id"),
            ["old nft 1000 1001 5 tcp 2000000"]
        );
    assert_eq!(
            q("SELECT workload, engine, rules_requested, rules_installed, set_elements, udp_payload_bytes, rate_requested_bps, flows, received_pps, loss_ratio FROM packet_results"),
            ["flood nft-set 250000 2 250000 18 80000000 4 50000 0.25"]
        );
    assert_eq!(
            q("SELECT workload, parallel, request_bytes, response_bytes, sessions, sessions_per_s, goodput_bps, sessions_failed FROM conn_results"),
            ["sessions 4 64 512 27000 9000 37000000 1"]
        );
    // The old row got its kind from its name; a new kind says its own and is
    // shown by its family's view without any list naming it.
    let kinds = s.trials(None).unwrap();
    assert_eq!(
        kinds[0].kind,
        Some(KindRow {
            family: "echo".into(),
            main_metric: Some("throughput_bps".into()),
            main_higher: true
        })
    );
    let mut burst = trial(run, "burst");
    burst.workload = "burst".into();
    burst.echo_clients.clear();
    burst.kind = Some(KindRow {
        family: "packet".into(),
        main_metric: Some("received_pps".into()),
        main_higher: true,
    });
    s.insert_trial(&burst).unwrap();
    let mut st = s
        .conn
        .prepare("SELECT workload FROM packet_results ORDER BY trial_id")
        .unwrap();
    let names: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    drop(st);
    assert_eq!(names, ["flood", "burst"]);
    assert_eq!(s.trials(None).unwrap().last().unwrap().kind, burst.kind);
}

/// Host 1 and its complete run 1, in the columns every version has.
const HOST_AND_RUN: &str = "
    INSERT INTO hosts VALUES (1, 'h', 'k', 'cpu', 2, '0.1.0', '[]', '[]');
    INSERT INTO runs (id, started_at, scenario, seed, command, host_id, status)
        VALUES (1, 't', 's', 1, 'c', 1, 'complete');";

/// A file as fwbench of schema `version` left it: that version's steps, fwbench's
/// application id, no rows.
fn old_file(p: &Path, version: usize) -> Connection {
    let c = Connection::open(p).unwrap();
    for step in steps_from(0).iter().take(version) {
        c.execute_batch(step).unwrap();
    }
    c.pragma_update(None, "application_id", APPLICATION_ID)
        .unwrap();
    c.pragma_update(None, "user_version", version as i64)
        .unwrap();
    c
}

/// [`old_file`] `v{version}.db` in a scratch directory, with its host and run
/// (`HOST_AND_RUN`): the directory, the file, and the connection to add old rows with.
fn old_file_with_run(version: usize) -> (tempfile::TempDir, std::path::PathBuf, Connection) {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join(format!("v{version}.db"));
    let c = old_file(&p, version);
    c.execute_batch(HOST_AND_RUN).unwrap();
    (tmp, p, c)
}

fn v1_file(p: &Path) {
    let c = old_file(p, 1);
    c.execute_batch(
        "INSERT INTO hosts VALUES (1, 'h', 'k', 'cpu', 2, '0', '[]', '[]');
             INSERT INTO runs VALUES (1, 't0', NULL, 's', NULL, 7, 'c', 1, 'complete');
             INSERT INTO trials (run_id, trial_key, rep, workload, status, started_at,
               finished_at, params, placement, results)
             VALUES (1, 'k', 1, 'echo', 'ok', 't0', 't1', '{}', '{}', '{}');",
    )
    .unwrap();
}

#[test]
fn read_only_open_upgrades_a_version_1_file_in_memory_not_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v1.db");
    v1_file(&p);
    let before = std::fs::read(&p).unwrap();
    let mut perms = std::fs::metadata(&p).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&p, perms).unwrap();
    let s = Store::open_read_only(&p).unwrap();
    let rows = s.trials(None).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].headline.received_pps, None);
    assert_eq!(s.runs().unwrap()[0].baseline, None);
    assert!(s.samples(rows[0].id).unwrap().is_empty());
    // Writing through a read-only store fails instead of touching the file.
    assert!(s.begin_run(&NewRun::default()).is_err());
    drop(s);
    assert_eq!(std::fs::read(&p).unwrap(), before, "file changed");
    let v: i64 = Connection::open(&p)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 1);
}

/// Version 9 (issue 40): a version-8 file opens, read-only in memory and for writing;
/// its old run has no tags, a new run keeps its tags by key, a key given again takes
/// its new value.
#[test]
fn version_8_files_get_run_tags() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v8.db");
    old_file(&p, 8).execute_batch(HOST_AND_RUN).unwrap();
    let ro = Store::open_read_only(&p).unwrap();
    assert!(ro.runs().unwrap()[0].tags.is_empty());
    drop(ro);
    let s = Store::open(&p).unwrap();
    let v: i64 = s
        .conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, SCHEMA_VERSION);
    let tags = vec![
        ("run".to_string(), "11".to_string()),
        ("kernel".to_string(), "6.18".to_string()),
    ];
    let id = s
        .begin_run(&NewRun {
            tags: tags.clone(),
            ..NewRun::default()
        })
        .unwrap();
    let runs = s.runs().unwrap();
    assert!(runs[0].tags.is_empty());
    assert_eq!(
        runs[1].tags,
        vec![
            ("kernel".to_string(), "6.18".to_string()),
            ("run".to_string(), "11".to_string())
        ]
    );
    s.set_run_tags(id, &[("run".into(), "12".into())]).unwrap();
    assert_eq!(s.run_tags(id).unwrap()[1], ("run".into(), "12".into()));
}

/// Version 13: a version-12 file's gateway updates open (read-only in memory, and for
/// writing) with no loss counted once — absent, never 0 —, and a new update keeps its.
#[test]
fn version_12_updates_read_no_loss_counted_once() {
    let (_tmp, p, c) = old_file_with_run(12);
    c.execute_batch(
        "INSERT INTO trials (id, run_id, trial_key, rep, workload, status, started_at,
                 finished_at, params, placement, results)
                 VALUES (1, 1, 'old', 1, 'flow', 'ok', 't0', 't1', '{}', '{}', '{}');
         INSERT INTO gateway_updates VALUES (1, 0, 0, 'add', 'batch', 1, 20000, 5, 2.0, 1,
                 0.0, 1, NULL, 3.0, 9, 0, NULL, NULL, 7, 0.35, NULL, NULL, NULL, NULL, NULL,
                 NULL);",
    )
    .unwrap();
    drop(c);
    let old = |s: &Store| {
        let u = s.updates(1).unwrap();
        assert_eq!(u.len(), 1);
        (u[0].lost_beyond_baseline, u[0].lost_once)
    };
    assert_eq!(old(&Store::open_read_only(&p).unwrap()), (Some(7), None));
    let mut s = Store::open(&p).unwrap();
    assert_eq!(old(&s), (Some(7), None));
    let id = s
        .insert_trial(&TrialRecord {
            updates: vec![UpdateRecord {
                kind: "add".into(),
                method: "batch".into(),
                start_unix_ns: 9,
                lost_beyond_baseline: Some(7),
                lost_once: Some(4),
                ..Default::default()
            }],
            ..trial(1, "new")
        })
        .unwrap();
    assert_eq!(s.updates(id).unwrap()[0].lost_once, Some(4));
}
