//! Gateway events' updates (issue 25): one row per scheduled update of a trial —
//! what was changed, how, how long the commit took, and what the traffic felt.
//!
//! Owns: the `gateway_updates` table (schema version 5, additive; version 7: the
//! witness of each update's figures — a stall may be absent, the loss beyond the
//! window before the update, the effective blocked time, the doubts; version 13: the
//! loss beyond the baseline in no earlier update's window) and its rows.
//! Must not: compute anything (the controller summarises, the report analyses).

use rusqlite::{params, Transaction};
use serde::{Deserialize, Serialize};

/// Version 5: gateway updates during trials.
pub(crate) const SCHEMA_V5: &str = "
CREATE TABLE gateway_updates (
    trial_id INTEGER NOT NULL REFERENCES trials(id),
    event INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    kind TEXT NOT NULL,
    method TEXT NOT NULL,
    k INTEGER NOT NULL,
    installed INTEGER NOT NULL,
    start_unix_ns INTEGER NOT NULL,
    commit_ms REAL NOT NULL,
    calls INTEGER NOT NULL,
    cpu_busy REAL NOT NULL,
    marker INTEGER NOT NULL,
    time_to_effect_ms REAL,
    stall_ms REAL NOT NULL,
    lost INTEGER NOT NULL,
    owd_max_us INTEGER NOT NULL,
    error TEXT,
    series TEXT
);
CREATE INDEX gateway_updates_trial ON gateway_updates(trial_id);
";

/// Version 7: `stall_ms` may be NULL (no background traffic in the window: no stall
/// figure), the loss beyond the window before the update, the effective blocked time
/// and the doubts over the figures (JSON). SQLite cannot relax a NOT NULL: the table is
/// rebuilt, its rows kept.
pub(crate) const SCHEMA_V7: &str = "
CREATE TABLE gateway_updates_v6 (
    trial_id INTEGER NOT NULL REFERENCES trials(id),
    event INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    kind TEXT NOT NULL,
    method TEXT NOT NULL,
    k INTEGER NOT NULL,
    installed INTEGER NOT NULL,
    start_unix_ns INTEGER NOT NULL,
    commit_ms REAL NOT NULL,
    calls INTEGER NOT NULL,
    cpu_busy REAL NOT NULL,
    marker INTEGER NOT NULL,
    time_to_effect_ms REAL,
    stall_ms REAL,
    lost INTEGER NOT NULL,
    owd_max_us INTEGER NOT NULL,
    error TEXT,
    series TEXT,
    lost_beyond_baseline INTEGER,
    blocked_ms REAL,
    doubts TEXT
);
INSERT INTO gateway_updates_v6
    SELECT trial_id, event, idx, kind, method, k, installed, start_unix_ns, commit_ms, calls,
           cpu_busy, marker, time_to_effect_ms, stall_ms, lost, owd_max_us, error, series,
           NULL, NULL, NULL
    FROM gateway_updates;
DROP TABLE gateway_updates;
ALTER TABLE gateway_updates_v6 RENAME TO gateway_updates;
CREATE INDEX gateway_updates_trial ON gateway_updates(trial_id);
";

/// Version 10 (issue 39): a reload's violations — the must-drop probe's packets that
/// passed it — and the window from the first to the last of them (NULL: not a reload);
/// where an add put its rules (`after-established`; NULL: at the head).
pub(crate) const SCHEMA_V10: &str = "
ALTER TABLE gateway_updates ADD COLUMN violations INTEGER;
ALTER TABLE gateway_updates ADD COLUMN violation_window_ms REAL;
ALTER TABLE gateway_updates ADD COLUMN place TEXT;
";

/// Version 11 (issue 39): how long each update waited for the ones before it, from
/// when it was due to its commit's start (NULL: stored before it was measured).
pub(crate) const SCHEMA_V11: &str = "
ALTER TABLE gateway_updates ADD COLUMN wait_ms REAL;
";

/// Version 12 (issue 39): where a reload's violation window starts, ms from its start
/// (the window drawn on the report's timeline; NULL: none passed, or not a reload).
pub(crate) const SCHEMA_V12: &str = "
ALTER TABLE gateway_updates ADD COLUMN violation_from_ms REAL;
";

/// Version 13: what of each update's loss beyond the baseline lies in no earlier
/// update's window (`lost_once`: a trial's updates' sum counts each lost packet once
/// where their windows overlap; NULL: no such figure, or stored before it was counted),
/// and why the background's delays in its window are no figures (`no_delays`: the
/// marker's sender and sink two hosts whose clocks cannot relate them; NULL: they are).
pub(crate) const SCHEMA_V13: &str = "
ALTER TABLE gateway_updates ADD COLUMN lost_once INTEGER;
ALTER TABLE gateway_updates ADD COLUMN no_delays TEXT;
";

/// One update as stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateRecord {
    pub event: u32,
    pub index: u32,
    pub kind: String,
    pub method: String,
    pub k: u32,
    pub installed: u64,
    pub start_unix_ns: u64,
    pub commit_ms: f64,
    pub calls: u32,
    pub cpu_busy: f64,
    pub marker: bool,
    pub time_to_effect_ms: Option<f64>,
    /// `None`: no background traffic in the update's window (see `doubts`).
    pub stall_ms: Option<f64>,
    pub lost: u64,
    pub owd_max_us: u64,
    pub error: Option<String>,
    /// Background per bin around the update, as JSON `[[ms, received, lost, owd_us], …]`.
    pub series: Option<String>,
    /// Background lost beyond the loss rate of the window before the update.
    #[serde(default)]
    pub lost_beyond_baseline: Option<u64>,
    /// Effective blocked time: `lost_beyond_baseline` over the background's rate, ms.
    #[serde(default)]
    pub blocked_ms: Option<f64>,
    /// Why some figures may not be believed, as JSON `[{"kind": …, "why": …}, …]`
    /// (`results::Doubt`); `None`: none.
    #[serde(default)]
    pub doubts: Option<String>,
    /// A reload: the must-drop probe's packets that passed it (`None`: not a reload).
    #[serde(default)]
    pub violations: Option<u64>,
    /// From the first to the last of them, ms.
    #[serde(default)]
    pub violation_window_ms: Option<f64>,
    /// Where an add put its rules (`None`: at the head).
    #[serde(default)]
    pub place: Option<String>,
    /// From when it was due to its commit's start, ms (`None`: stored before it was
    /// measured).
    #[serde(default)]
    pub wait_ms: Option<f64>,
    /// Where the violation window starts, ms from the update's start (schema 12).
    #[serde(default)]
    pub violation_from_ms: Option<f64>,
    /// What of `lost_beyond_baseline` lies in no earlier update's window of its trial
    /// (schema 13): summed over a trial's updates, each lost packet once. `None`: no
    /// such figure, or stored before it was counted.
    #[serde(default)]
    pub lost_once: Option<u64>,
    /// Why the background's delays in the window (`owd_max_us`, the series' delays: 0
    /// then) are no figures: a flow whose sender and sink are two hosts whose clocks
    /// cannot relate its one-way delays (schema 13). `None`: they are figures.
    #[serde(default)]
    pub no_delays: Option<String>,
}

pub(crate) fn insert(
    tx: &Transaction<'_>,
    trial_id: i64,
    rows: &[UpdateRecord],
) -> rusqlite::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut stmt = tx.prepare(
        "INSERT INTO gateway_updates VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,
         ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)",
    )?;
    for u in rows {
        stmt.execute(params![
            trial_id,
            u.event,
            u.index,
            u.kind,
            u.method,
            u.k,
            u.installed as i64,
            u.start_unix_ns as i64,
            u.commit_ms,
            u.calls,
            u.cpu_busy,
            u.marker,
            u.time_to_effect_ms,
            u.stall_ms,
            u.lost as i64,
            u.owd_max_us as i64,
            u.error,
            u.series,
            u.lost_beyond_baseline.map(|n| n as i64),
            u.blocked_ms,
            u.doubts,
            u.violations.map(|n| n as i64),
            u.violation_window_ms,
            u.place,
            u.wait_ms,
            u.violation_from_ms,
            u.lost_once.map(|n| n as i64),
            u.no_delays,
        ])?;
    }
    Ok(())
}

pub(crate) fn read(
    conn: &rusqlite::Connection,
    trial_id: i64,
) -> rusqlite::Result<Vec<UpdateRecord>> {
    let mut stmt = conn.prepare(
        "SELECT event, idx, kind, method, k, installed, start_unix_ns, commit_ms, calls, cpu_busy,
                marker, time_to_effect_ms, stall_ms, lost, owd_max_us, error, series,
                lost_beyond_baseline, blocked_ms, doubts, violations, violation_window_ms, place,
                wait_ms, violation_from_ms, lost_once, no_delays
         FROM gateway_updates WHERE trial_id = ?1 ORDER BY start_unix_ns, event, idx",
    )?;
    let rows = stmt.query_map([trial_id], |r| {
        Ok(UpdateRecord {
            event: r.get(0)?,
            index: r.get(1)?,
            kind: r.get(2)?,
            method: r.get(3)?,
            k: r.get(4)?,
            installed: r.get::<_, i64>(5)? as u64,
            start_unix_ns: r.get::<_, i64>(6)? as u64,
            commit_ms: r.get(7)?,
            calls: r.get(8)?,
            cpu_busy: r.get(9)?,
            marker: r.get(10)?,
            time_to_effect_ms: r.get(11)?,
            stall_ms: r.get(12)?,
            lost: r.get::<_, i64>(13)? as u64,
            owd_max_us: r.get::<_, i64>(14)? as u64,
            error: r.get(15)?,
            series: r.get(16)?,
            lost_beyond_baseline: r.get::<_, Option<i64>>(17)?.map(|n| n as u64),
            blocked_ms: r.get(18)?,
            doubts: r.get(19)?,
            violations: r.get::<_, Option<i64>>(20)?.map(|n| n as u64),
            violation_window_ms: r.get(21)?,
            place: r.get(22)?,
            wait_ms: r.get(23)?,
            violation_from_ms: r.get(24)?,
            lost_once: r.get::<_, Option<i64>>(25)?.map(|n| n as u64),
            no_delays: r.get(26)?,
        })
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version-5 table's rows survive the rebuild (their stall kept, no doubts) and
    /// version 10's new columns (no violations: not a reload); a version-10 row without
    /// a stall figure, with its doubts, a reload's violations and (version 11) its
    /// wait, reads back whole.
    #[test]
    fn version_7_keeps_old_rows_and_stores_an_absent_stall_with_its_doubts() {
        let mut c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE trials (id INTEGER PRIMARY KEY);")
            .unwrap();
        c.execute_batch(SCHEMA_V5).unwrap();
        c.execute_batch("INSERT INTO trials VALUES (1);").unwrap();
        let old = UpdateRecord {
            kind: "add".into(),
            method: "batch".into(),
            k: 1,
            commit_ms: 2.0,
            stall_ms: Some(7.5),
            lost: 3,
            ..Default::default()
        };
        // A version-5 row: 18 columns.
        c.execute(
            "INSERT INTO gateway_updates VALUES (1, 0, 0, 'add', 'batch', 1, 0, 0, 2.0, 0, 0.0, 0,
             NULL, 7.5, 3, 0, NULL, NULL)",
            [],
        )
        .unwrap();
        c.execute_batch(SCHEMA_V7).unwrap();
        c.execute_batch(SCHEMA_V10).unwrap();
        c.execute_batch(SCHEMA_V11).unwrap();
        c.execute_batch(SCHEMA_V12).unwrap();
        c.execute_batch(SCHEMA_V13).unwrap();
        // Its wait was never measured: absent, not 0; nor its loss counted once.
        assert_eq!(read(&c, 1).unwrap(), vec![old.clone()]);
        let new = UpdateRecord {
            index: 1,
            start_unix_ns: 5,
            stall_ms: None,
            lost_beyond_baseline: Some(0),
            blocked_ms: Some(0.0),
            doubts: Some(r#"[{"kind":"empty_window","why":"no background"}]"#.into()),
            violations: Some(27),
            violation_window_ms: Some(2.9),
            place: Some("after-established".into()),
            wait_ms: Some(41.5),
            violation_from_ms: Some(-0.4),
            lost_once: Some(3),
            no_delays: Some("two hosts' clocks".into()),
            ..old.clone()
        };
        let tx = c.transaction().unwrap();
        insert(&tx, 1, std::slice::from_ref(&new)).unwrap();
        tx.commit().unwrap();
        assert_eq!(read(&c, 1).unwrap(), vec![old, new]);
    }
}
