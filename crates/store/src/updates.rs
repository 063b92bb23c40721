//! Gateway events' updates (issue 25): one row per scheduled update of a trial —
//! what was changed, how, how long the commit took, and what the traffic felt.
//!
//! Owns: the `gateway_updates` table (schema version 5, additive) and its rows.
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
    pub stall_ms: f64,
    pub lost: u64,
    pub owd_max_us: u64,
    pub error: Option<String>,
    /// Background per bin around the update, as JSON `[[ms, received, lost, owd_us], …]`.
    pub series: Option<String>,
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
         ?13, ?14, ?15, ?16, ?17, ?18)",
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
                marker, time_to_effect_ms, stall_ms, lost, owd_max_us, error, series
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
        })
    })?;
    rows.collect()
}
