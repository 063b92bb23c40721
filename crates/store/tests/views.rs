//! The per-workload views (`echo_results`, `packet_results`, `conn_results`) share one
//! generated block of columns; their output is the same as that of the views written out
//! in full before (the schema-4 text as first shipped), column for column and row for
//! row, for every kind of trial. The reference is that output, recorded from the old SQL
//! once (`fixtures/views_v4_rows.json`), so the old SQL is not kept as a second copy of
//! the template. `UPDATE_SNAPSHOTS=1` rewrites the file from the current views: only for
//! an intended change of the views' columns, which is a schema change (a new
//! `user_version`).

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::{json, Value};
use store::{FirewallRow, Headline, NewRun, Store, TrialRecord};

const VIEWS: [&str; 3] = ["echo_results", "packet_results", "conn_results"];

fn trial(run_id: i64, workload: &str, params: serde_json::Value, n: u32) -> TrialRecord {
    let x = f64::from(n);
    TrialRecord {
        run_id,
        trial_key: format!("{workload}-{n}"),
        rep: n,
        workload: workload.into(),
        status: if n == 2 { "failed" } else { "ok" }.into(),
        error: (n == 2).then(|| "it broke".into()),
        started_at: format!("t{n}"),
        finished_at: format!("t{}", n + 1),
        params,
        placement: json!([]),
        headline: Headline {
            duration_s: Some(2.0 + x),
            throughput_bps: Some(1e6 * x),
            transactions_per_s: Some(10.0 * x),
            rtt_p50_us: Some(50.0 + x),
            rtt_p90_us: Some(90.0 + x),
            rtt_p99_us: Some(99.0 + x),
            rtt_p999_us: Some(999.0 + x),
            rtt_max_us: Some(2000.0 + x),
            validation_errors: Some(u64::from(n)),
            unsent: Some(u64::from(n) + 1),
            lost: Some(u64::from(n) + 2),
            offered_pps: Some(1e5 * x),
            sent_pps: Some(0.9e5 * x),
            received_pps: Some(0.8e5 * x),
            loss_ratio: Some(0.1),
            owd_p50_us: Some(7.0 + x),
            jitter_us: Some(0.5 * x),
        },
        firewall: (n != 1).then(|| FirewallRow {
            engine: "nft".into(),
            rules_installed: 1000 + u64::from(n),
            ..Default::default()
        }),
        results: json!({"conn": {"sessions": 40 + n, "hold": {"reached": 300 + n, "alive_at_stop": 299}}}),
        ..Default::default()
    }
}

/// The reference: the views' output as the schema-4 SQL gave it for [`trial`]'s rows.
const REFERENCE: &str = "tests/fixtures/views_v4_rows.json";

/// A view's columns and rows, each value typed as SQLite returned it (an integer and a
/// real stay apart: `2` is not `2.0`).
fn rows(c: &Connection, view: &str) -> Value {
    let mut st = c
        .prepare(&format!("SELECT * FROM {view} ORDER BY trial_id"))
        .unwrap();
    let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
    let n = names.len();
    let rows = st
        .query_map([], |r| {
            (0..n)
                .map(|i| {
                    Ok(match r.get_ref(i)? {
                        ValueRef::Null => Value::Null,
                        ValueRef::Integer(i) => json!(i),
                        ValueRef::Real(x) => json!(x),
                        ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                        ValueRef::Blob(b) => panic!("{view}: a blob: {b:?}"),
                    })
                })
                .collect::<Result<Vec<_>, rusqlite::Error>>()
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    json!({"columns": names, "rows": rows})
}

/// `views` (view → columns and rows) as the reference file holds it: a row a line.
fn reference_text(views: &[(&str, Value)]) -> String {
    let one = |v: &Value| serde_json::to_string(v).unwrap();
    let views: Vec<String> = views
        .iter()
        .map(|(name, v)| {
            let rows: Vec<String> = v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| format!("      {}", one(r)))
                .collect();
            format!(
                "  \"{name}\": {{\n    \"columns\": {},\n    \"rows\": [\n{}\n    ]\n  }}",
                one(&v["columns"]),
                rows.join(",\n")
            )
        })
        .collect();
    format!("{{\n{}\n}}\n", views.join(",\n"))
}

/// A new results file at `path`, open, and the id of its one run.
fn with_run(path: &std::path::Path) -> (Store, i64) {
    let s = Store::open(path).unwrap();
    let run = s.begin_run(&NewRun::default()).unwrap();
    (s, run)
}

/// A results file at `path` with one run of three repetitions of every workload of
/// schema 4 ([`trial`]'s rows), closed again.
fn write_every_workload(path: &std::path::Path) {
    let (mut s, run) = with_run(path);
    let common = |extra: serde_json::Value| {
        let mut p = json!({"topology": "forward", "engine": "nft", "model": "linear",
            "rules": 1000, "position": "last", "family": "ipv6"});
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    };
    for n in 1..=3 {
        let echo =
            common(json!({"proto": "udp", "clients": 4, "frame_size": 64, "server": "epoll"}));
        let packet = common(json!({"packet": {"size": {"payload": 18, "frame": 64},
            "rate": {"bps": 1e7, "pps": 1e5}, "flows": 8, "threads": 2}}));
        let conn =
            common(json!({"conn": {"parallel": 16, "request": 100, "size": 4096, "limit": 300}}));
        for (w, p) in [
            ("echo", echo),
            ("flood", packet.clone()),
            ("flow", packet.clone()),
            ("ping", packet.clone()),
            ("ndr", packet.clone()),
            ("degrade", packet),
            ("sessions", conn.clone()),
            ("bulk", conn.clone()),
            ("http", conn.clone()),
            ("connections", conn),
        ] {
            s.insert_trial(&trial(run, w, p, n)).unwrap();
        }
    }
}

#[test]
fn generated_views_equal_the_views_written_out_in_full() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    write_every_workload(&path);
    let c = Connection::open(&path).unwrap();
    let got: Vec<(&str, Value)> = VIEWS.iter().map(|v| (*v, rows(&c, v))).collect();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(REFERENCE);
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::write(&file, reference_text(&got)).unwrap();
    }
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{REFERENCE}: {e}"));
    let want: Value = serde_json::from_str(&text).unwrap();
    for (v, new) in &got {
        let (names, rows) = (&new["columns"], new["rows"].as_array().unwrap());
        assert_eq!(names, &want[v]["columns"], "{v}: columns");
        assert_eq!(new["rows"], want[v]["rows"], "{v}: rows");
        assert!(rows.len() >= 3, "{v}: {} rows", rows.len());
        // The shared block really is read: engine, rules and family of every row.
        for col in ["engine", "rules_requested", "ip_family"] {
            let i = names
                .as_array()
                .unwrap()
                .iter()
                .position(|n| n == col)
                .unwrap();
            assert!(rows.iter().all(|r| !r[i].is_null()), "{v}.{col}: {rows:?}");
        }
    }
}

/// The views' output for the reference's rows, from a results file at `path`.
fn every_view(path: &std::path::Path) -> Vec<(&'static str, Value)> {
    let c = Connection::open(path).unwrap();
    VIEWS.iter().map(|v| (*v, rows(&c, v))).collect()
}

/// `fixtures/v5.db`: the file [`write_every_workload`] wrote with the schema-5 build
/// (commit ef9dbf5), whose views chose their `ping_*` and `duplicates` columns by
/// workload name. Opened by this build (read-only: migrated in memory; for writing:
/// migrated in place to schema 6, whose views choose by the stored main metric), it
/// reads the same: the same trials and runs as a file this build writes, and the same
/// view rows as the reference.
#[test]
fn a_version_5_file_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("v5.db");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v5.db");
    std::fs::copy(&fixture, &old).unwrap();
    let new = dir.path().join("new.db");
    write_every_workload(&new);
    let version = |p: &std::path::Path| -> i64 {
        Connection::open(p)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(version(&old), 5);
    let fresh = Store::open_read_only(&new).unwrap();
    let ro = Store::open_read_only(&old).unwrap();
    assert_eq!(ro.trials(None).unwrap(), fresh.trials(None).unwrap());
    assert_eq!(ro.runs().unwrap(), fresh.runs().unwrap());
    drop(ro);
    assert_eq!(version(&old), 5, "migrated in place by a reader");
    let rw = Store::open(&old).unwrap();
    assert_eq!(rw.trials(None).unwrap(), fresh.trials(None).unwrap());
    drop(rw);
    assert_eq!(version(&old), store::SCHEMA_VERSION);
    assert_eq!(every_view(&old), every_view(&new));
    // The views were replaced: none names a workload any more.
    let c = Connection::open(&old).unwrap();
    let mut st = c
        .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'view'")
        .unwrap();
    let views: Vec<(String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(views.len(), 3);
    for (name, sql) in &views {
        assert!(!sql.contains("workload ="), "{name}: {sql}");
        assert!(!sql.contains("workload IN"), "{name}: {sql}");
    }
    let text =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(REFERENCE))
            .unwrap();
    let want: Value = serde_json::from_str(&text).unwrap();
    for (v, got) in every_view(&old) {
        assert_eq!(got, want[v], "{v}");
    }
}

/// A workload the views have never heard of shows its columns by what it stored: a
/// packet kind ranked by round-trip time fills the `ping_*` columns, one ranked by
/// packets/s the `duplicates`; a search (no main metric) neither.
#[test]
fn a_new_workload_shows_its_columns_by_its_stored_main_metric() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let (mut s, run) = with_run(&path);
    for (w, metric) in [
        ("probe", Some("rtt_p50_us")),
        ("burst", Some("received_pps")),
        ("burst-ndr", None),
    ] {
        let mut t = trial(run, w, json!({}), 1);
        t.kind = Some(store::KindRow {
            family: "packet".into(),
            main_metric: metric.map(String::from),
            main_higher: metric != Some("rtt_p50_us"),
        });
        s.insert_trial(&t).unwrap();
    }
    drop(s);
    let c = Connection::open(&path).unwrap();
    let mut st = c
        .prepare("SELECT workload, ping_lost, ping_rtt_p50_us, duplicates FROM packet_results ORDER BY trial_id")
        .unwrap();
    let got: Vec<String> = st
        .query_map([], |r| {
            Ok(format!(
                "{} {:?} {:?} {:?}",
                r.get::<_, String>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<f64>>(2)?,
                r.get::<_, Option<i64>>(3)?
            ))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(
        got,
        [
            "probe Some(3) Some(51.0) None",
            "burst None None Some(1)",
            "burst-ndr None None None"
        ]
    );
}
