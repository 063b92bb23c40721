//! The schema of each version (`PRAGMA user_version`) and the steps between them.
//!
//! Owns: the SQL text of every schema step, frozen once shipped (a file of any older
//! version is brought up by running the steps after its version, in one transaction),
//! and the legacy tables that give rows from before a step what the step added.
//! Must not: change a shipped step's text (add a new version instead), or name a
//! workload anywhere but in the frozen legacy tables of steps already shipped.

use crate::runs::SCHEMA_V8;
use crate::updates::SCHEMA_V5 as UPDATES_V5;
use crate::updates::SCHEMA_V7;
use crate::views;

/// Schema version written by this build. Older files are migrated; newer are refused.
pub const SCHEMA_VERSION: i64 = 8;
/// "FWB1" — marks a SQLite file as an fwbench results store.
pub const APPLICATION_ID: i64 = 0x4657_4231;

/// Version 1: hosts, runs, trials, echo clients.
pub(crate) const SCHEMA_V1: &str = "
CREATE TABLE hosts (
    id INTEGER PRIMARY KEY,
    hostname TEXT NOT NULL,
    kernel TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    cores INTEGER NOT NULL,
    fwbench_version TEXT NOT NULL,
    sysctls TEXT NOT NULL,
    tools TEXT NOT NULL
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    scenario TEXT NOT NULL,
    scenario_text TEXT,
    seed INTEGER NOT NULL,
    command TEXT NOT NULL,
    host_id INTEGER NOT NULL REFERENCES hosts(id),
    status TEXT NOT NULL
);
CREATE TABLE trials (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    trial_key TEXT NOT NULL,
    rep INTEGER NOT NULL,
    workload TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    params TEXT NOT NULL,
    placement TEXT NOT NULL,
    duration_s REAL,
    throughput_bps REAL,
    transactions_per_s REAL,
    rtt_p50_us REAL,
    rtt_p90_us REAL,
    rtt_p99_us REAL,
    rtt_p999_us REAL,
    rtt_max_us REAL,
    validation_errors INTEGER,
    unsent INTEGER,
    lost INTEGER,
    engine TEXT,
    rules INTEGER,
    set_elements INTEGER,
    install_ms REAL,
    remove_ms REAL,
    verdicts_ok INTEGER,
    verdict_problems TEXT,
    results TEXT NOT NULL,
    UNIQUE (run_id, trial_key)
);
CREATE TABLE echo_clients (
    trial_id INTEGER NOT NULL REFERENCES trials(id),
    client INTEGER NOT NULL,
    source TEXT NOT NULL,
    mp1_frames INTEGER NOT NULL, mp1_bytes INTEGER NOT NULL,
    mp2_frames INTEGER NOT NULL, mp2_bytes INTEGER NOT NULL,
    mp3_frames INTEGER NOT NULL, mp3_bytes INTEGER NOT NULL,
    mp4_frames INTEGER NOT NULL, mp4_bytes INTEGER NOT NULL,
    unsent_client INTEGER NOT NULL,
    unsent_server INTEGER NOT NULL,
    lost INTEGER NOT NULL,
    malformed INTEGER NOT NULL,
    wrong_client INTEGER NOT NULL,
    wrong_size INTEGER NOT NULL,
    gaps INTEGER NOT NULL,
    duplicates INTEGER NOT NULL,
    reordered INTEGER NOT NULL,
    throughput_bps REAL NOT NULL,
    transactions_per_s REAL NOT NULL,
    rtt_p50_us REAL, rtt_p90_us REAL, rtt_p99_us REAL, rtt_p999_us REAL, rtt_max_us REAL,
    error TEXT,
    PRIMARY KEY (trial_id, client)
);
CREATE INDEX trials_run ON trials(run_id);
";

/// Version 3: metric samples during trials; the run's baseline.
pub(crate) const SCHEMA_V3: &str = "
ALTER TABLE runs ADD COLUMN baseline TEXT;
CREATE TABLE samples (
    trial_id INTEGER NOT NULL REFERENCES trials(id),
    role TEXT NOT NULL,
    t_s REAL NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX samples_trial ON samples(trial_id);
";

/// Version 4: `rules` named for what it is (its views, by workload name, were replaced
/// by version 5's and those by version 6's: no step keeps them).
pub(crate) const SCHEMA_V4: &str = "
ALTER TABLE trials RENAME COLUMN rules TO rules_installed;
";

/// Version 5: each trial says its kind's family and main metric (written by the
/// controller from the kind, so neither the views nor the report list workload names).
const SCHEMA_V5: &str = "
ALTER TABLE trials ADD COLUMN family TEXT;
ALTER TABLE trials ADD COLUMN main_metric TEXT;
ALTER TABLE trials ADD COLUMN main_higher INTEGER;
DROP VIEW IF EXISTS echo_results;
DROP VIEW IF EXISTS packet_results;
DROP VIEW IF EXISTS conn_results;
";

/// The kinds of trials stored without one (files from before version 5, records
/// that do not say): the workloads of that time, frozen here. New workloads say
/// their kind when they are recorded ([`crate::TrialRecord::kind`]) and never appear here.
pub(crate) const LEGACY_KINDS: &str = "
UPDATE trials SET
    family = CASE
        WHEN workload = 'echo' THEN 'echo'
        WHEN workload IN ('flood', 'flow', 'ping', 'ndr', 'degrade') THEN 'packet'
        WHEN workload IN ('sessions', 'bulk', 'http', 'connections') THEN 'conn'
    END,
    main_metric = CASE workload
        WHEN 'echo' THEN 'throughput_bps'
        WHEN 'flood' THEN 'received_pps'
        WHEN 'flow' THEN 'received_pps'
        WHEN 'ping' THEN 'rtt_p50_us'
        WHEN 'sessions' THEN 'sessions_per_s'
        WHEN 'bulk' THEN 'goodput_bps'
        WHEN 'http' THEN 'ttlb_mean_ms'
        WHEN 'connections' THEN 'hold_reached'
    END,
    main_higher = CASE workload WHEN 'ping' THEN 0 WHEN 'http' THEN 0 ELSE 1 END
WHERE family IS NULL";

/// Version 5: the effective engine of each trial and its kind. Trials stored before
/// get them from their parameters: the engines below are every engine fwbench had
/// when version 4 was current (a frozen list: new engines are only ever recorded by
/// the controller, from `fwmodel::EffectiveEngine`).
const ENGINE_V5: &str = "
ALTER TABLE trials ADD COLUMN engine_id TEXT;
ALTER TABLE trials ADD COLUMN engine_kind TEXT;
UPDATE trials SET engine_kind = CASE json_extract(params, '$.engine')
    WHEN 'none' THEN 'none'
    WHEN 'nft' THEN 'nft'
    WHEN 'nft-set' THEN 'nft'
    WHEN 'iptables-legacy' THEN 'xtables'
    WHEN 'iptables-nft' THEN 'xtables'
    WHEN 'ipset-legacy' THEN 'xtables'
    WHEN 'ipset-nft' THEN 'xtables'
    WHEN 'xdp' THEN 'bpf'
    WHEN 'xdp-map' THEN 'bpf'
    WHEN 'xdp-generic' THEN 'bpf'
    WHEN 'tc-bpf' THEN 'bpf'
    END
WHERE json_valid(params);
UPDATE trials SET engine_id = CASE engine_kind
    WHEN 'nft' THEN json_extract(params, '$.engine') || '/'
        || coalesce(json_extract(params, '$.nft_family'), 'inet')
    ELSE json_extract(params, '$.engine')
    END
WHERE engine_kind IS NOT NULL;
";

/// Version 2: packet-rate headline columns.
pub(crate) const SCHEMA_V2: &str = "
ALTER TABLE trials ADD COLUMN offered_pps REAL;
ALTER TABLE trials ADD COLUMN sent_pps REAL;
ALTER TABLE trials ADD COLUMN received_pps REAL;
ALTER TABLE trials ADD COLUMN loss_ratio REAL;
ALTER TABLE trials ADD COLUMN owd_p50_us REAL;
ALTER TABLE trials ADD COLUMN jitter_us REAL;
";

/// The step to version 5: its columns, old rows' kinds (its views are version 6's).
pub(crate) fn v5() -> String {
    format!("{SCHEMA_V5}{ENGINE_V5}{UPDATES_V5}{LEGACY_KINDS};\n")
}

/// Version 6: each run's recovery key (what proves a recovery file was written for a
/// run of this file), and the views selecting by each trial's stored kind and main
/// metric (version 5's views named the workloads `ping`, `flood` and `flow`).
const SCHEMA_V6: &str = "
ALTER TABLE runs ADD COLUMN recovery_key TEXT;
DROP VIEW IF EXISTS echo_results;
DROP VIEW IF EXISTS packet_results;
DROP VIEW IF EXISTS conn_results;
";

/// The step to version 6.
pub(crate) fn v6() -> String {
    format!("{SCHEMA_V6}{}", views::current())
}

// Version 7: the witness of gateway updates' figures (`updates::SCHEMA_V7`).
// Version 8: a running run's process and why a run ended unfinished (`runs::SCHEMA_V8`).

/// The steps that bring a file of `version` to [`SCHEMA_VERSION`] (all of them for a
/// new file, version 0), in order.
pub(crate) fn steps_from(version: i64) -> Vec<String> {
    let all = [
        SCHEMA_V1.to_string(),
        SCHEMA_V2.to_string(),
        SCHEMA_V3.to_string(),
        SCHEMA_V4.to_string(),
        v5(),
        v6(),
        SCHEMA_V7.to_string(),
        SCHEMA_V8.to_string(),
    ];
    let from = usize::try_from(version.max(0)).unwrap_or(usize::MAX);
    all.into_iter().skip(from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::trial;
    use crate::{
        EngineRow, FirewallRow, Headline, KindRow, NewRun, Store, TrialRecord, UpdateRecord,
    };
    use rusqlite::{params, Connection};
    use std::path::Path;

    #[test]
    fn gateway_updates_are_stored_with_their_trial_and_a_version_1_file_gets_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("u.db");
        let mut s = Store::open(&p).unwrap();
        let run = s.begin_run(&NewRun::default()).unwrap();
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
        {
            let c = Connection::open(&dir).unwrap();
            c.execute_batch(SCHEMA_V1).unwrap();
            c.pragma_update(None, "application_id", APPLICATION_ID)
                .unwrap();
            c.pragma_update(None, "user_version", 1).unwrap();
        }
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
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("v4.db");
        {
            let c = Connection::open(&p).unwrap();
            for step in [SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4] {
                c.execute_batch(step).unwrap();
            }
            c.pragma_update(None, "application_id", APPLICATION_ID)
                .unwrap();
            c.pragma_update(None, "user_version", 4).unwrap();
            c.execute_batch(
                "INSERT INTO hosts VALUES (1, 'h', 'k', 'cpu', 2, '0.1.0', '[]', '[]');
                 INSERT INTO runs (id, started_at, scenario, seed, command, host_id, status)
                     VALUES (1, 't', 's', 1, 'c', 1, 'complete');",
            )
            .unwrap();
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
        }
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
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("v3.db");
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch(SCHEMA_V1).unwrap();
            c.execute_batch(SCHEMA_V2).unwrap();
            c.execute_batch(SCHEMA_V3).unwrap();
            c.pragma_update(None, "application_id", APPLICATION_ID)
                .unwrap();
            c.pragma_update(None, "user_version", 3).unwrap();
            c.execute_batch(
                "INSERT INTO hosts VALUES (1, 'h', 'k', 'cpu', 2, '0.1.0', '[]', '[]');
                 INSERT INTO runs (id, started_at, scenario, seed, command, host_id, status)
                     VALUES (1, 't', 's', 1, 'c', 1, 'complete');
                 INSERT INTO trials (run_id, trial_key, rep, workload, status, started_at,
                     finished_at, params, placement, engine, rules, throughput_bps, results)
                     VALUES (1, 'old', 1, 'echo', 'ok', 't0', 't1',
                     '{\"engine\":\"nft\",\"rules\":1000,\"clients\":5,\"proto\":\"tcp\"}',
                     '[]', 'nft', 1001, 2e6, '{}');",
            )
            .unwrap();
        }
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

    fn v1_file(p: &Path) {
        let c = Connection::open(p).unwrap();
        c.execute_batch(SCHEMA_V1).unwrap();
        c.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
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
}
