//! The per-workload views (`echo_results`, `packet_results`, `conn_results`) share one
//! generated block of columns; their output is the same as the views written out in
//! full before (fixtures/views_v4.sql, the schema-4 text as first shipped), column for
//! column and row for row, for every kind of trial.

use rusqlite::Connection;
use serde_json::json;
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

fn rows(c: &Connection, sql: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut st = c.prepare(sql).unwrap();
    let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
    let n = names.len();
    let rows = st
        .query_map([], |r| {
            (0..n)
                .map(|i| r.get_ref(i).map(|v| format!("{v:?}")))
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (names, rows)
}

#[test]
fn generated_views_equal_the_views_written_out_in_full() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    {
        let mut s = Store::open(&path).unwrap();
        let run = s.begin_run(&NewRun::default()).unwrap();
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
            let conn = common(
                json!({"conn": {"parallel": 16, "request": 100, "size": 4096, "limit": 300}}),
            );
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
    let c = Connection::open(&path).unwrap();
    // The views as first written, under other names, in this connection only.
    let old = include_str!("fixtures/views_v4.sql");
    let mut renamed = old.to_string();
    for v in VIEWS {
        renamed = renamed.replace(
            &format!("CREATE VIEW {v} AS"),
            &format!("CREATE TEMP VIEW old_{v} AS"),
        );
    }
    assert_eq!(renamed.matches("CREATE TEMP VIEW").count(), 3);
    c.execute_batch(&renamed).unwrap();
    for v in VIEWS {
        let (names, new) = rows(&c, &format!("SELECT * FROM {v} ORDER BY trial_id"));
        let (old_names, old) = rows(&c, &format!("SELECT * FROM old_{v} ORDER BY trial_id"));
        assert_eq!(names, old_names, "{v}: columns");
        assert_eq!(new, old, "{v}: rows");
        assert!(new.len() >= 3, "{v}: {} rows", new.len());
        // The shared block really is read: engine, rules and family of every row.
        for col in ["engine", "rules_requested", "ip_family"] {
            let i = names.iter().position(|n| n == col).unwrap();
            assert!(new.iter().all(|r| r[i] != "Null"), "{v}.{col}: {new:?}");
        }
    }
}
