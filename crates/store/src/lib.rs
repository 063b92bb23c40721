//! The results store: one SQLite file (`results.db` by default).
//!
//! Owns: the schema (versioned with `PRAGMA user_version`, marked as fwbench's with
//! `PRAGMA application_id`), runs, trials, per-client rows and host metadata.
//! Each trial is committed in its own transaction before the next trial starts.
//! Must not: contain analysis; it stores raw results and reads them back.
//!
//! Schema (version 1):
//! * `hosts`  — kernel, CPU model, cores, fwbench version, sysctls and tools (JSON).
//! * `runs`   — one invocation: scenario name and text, seed, command line, status.
//! * `trials` — one trial: stable key, repetition, workload, status (`ok`, `failed`,
//!   `unavailable`), parameters and CPU placement (JSON), headline metrics as columns,
//!   the gateway's rule set (engine, rules, set elements, install/remove time, verdict
//!   check), full results (JSON).
//! * version 2 adds packet-rate columns to `trials`: `offered_pps`, `sent_pps`,
//!   `received_pps`, `loss_ratio`, `owd_p50_us`, `jitter_us`.
//! * version 3 adds `runs.baseline` (JSON: the axis values of the baseline trials) and
//!   `samples` — metrics sampled during a trial on every role (`trial_id role t_s metric value`).
//! * version 4 renames `trials.rules` to `rules_installed` (the rules the gateway
//!   installed — 1 001 for 1 000 fillers, 2 for an nft set of any size; what was asked
//!   for is `params.rules`, `rules_requested` in the views) and adds one view per kind
//!   of workload with self-explaining columns: `echo_results`, `packet_results`,
//!   `conn_results` (docs/results.md).
//! * `echo_clients` — per client connection of an echo trial: counters at the four
//!   measurement points, validation failures, unsent/lost, throughput, RTT percentiles.

mod roles;
mod updates;
pub use roles::RoleHost;
pub use updates::UpdateRecord;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use updates::SCHEMA_V5;

/// Schema version written by this build. Older files are migrated; newer are refused.
pub const SCHEMA_VERSION: i64 = 5;
/// "FWB1" — marks a SQLite file as an fwbench results store.
pub const APPLICATION_ID: i64 = 0x4657_4231;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: not an fwbench results file ({why})")]
    NotFwbench { path: PathBuf, why: String },
    #[error("{path}: results schema version {found} is newer than this fwbench supports ({supported}); upgrade fwbench")]
    NewerSchema {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
}

pub type Result<T> = std::result::Result<T, StoreError>;

const SCHEMA_V1: &str = "
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
const SCHEMA_V3: &str = "
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

/// Version 4: `rules` named for what it is; one view per kind of workload, whose
/// columns say what they mean (the `trials` headline columns mean different things
/// per workload: `throughput_bps` is goodput for sessions, `lost` failed sessions …).
const SCHEMA_V4: &str = "
ALTER TABLE trials RENAME COLUMN rules TO rules_installed;
CREATE VIEW echo_results AS SELECT
    id AS trial_id, run_id, trial_key, rep, status, error, started_at,
    json_extract(params, '$.topology') AS topology,
    json_extract(params, '$.engine') AS engine,
    json_extract(params, '$.model') AS model,
    json_extract(params, '$.rules') AS rules_requested,
    rules_installed, set_elements,
    json_extract(params, '$.position') AS rule_position,
    json_extract(params, '$.family') AS ip_family,
    json_extract(params, '$.proto') AS transport,
    json_extract(params, '$.clients') AS clients,
    json_extract(params, '$.frame_size') AS frame_size_bytes,
    json_extract(params, '$.server') AS server_mode,
    duration_s,
    throughput_bps AS echo_throughput_bps,
    transactions_per_s AS echo_transactions_per_s,
    rtt_p50_us, rtt_p90_us, rtt_p99_us, rtt_p999_us, rtt_max_us,
    validation_errors AS frames_invalid,
    unsent AS frames_unsent,
    lost AS frames_lost,
    install_ms AS rules_install_ms, verdicts_ok
FROM trials WHERE workload = 'echo';
CREATE VIEW packet_results AS SELECT
    id AS trial_id, run_id, trial_key, rep, workload, status, error, started_at,
    json_extract(params, '$.topology') AS topology,
    json_extract(params, '$.engine') AS engine,
    json_extract(params, '$.model') AS model,
    json_extract(params, '$.rules') AS rules_requested,
    rules_installed, set_elements,
    json_extract(params, '$.position') AS rule_position,
    json_extract(params, '$.family') AS ip_family,
    json_extract(params, '$.packet.size.payload') AS udp_payload_bytes,
    json_extract(params, '$.packet.size.frame') AS ethernet_frame_bytes,
    json_extract(params, '$.packet.rate.bps') AS rate_requested_bps,
    json_extract(params, '$.packet.rate.pps') AS rate_requested_pps,
    json_extract(params, '$.packet.flows') AS flows,
    json_extract(params, '$.packet.threads') AS sender_threads,
    duration_s,
    offered_pps, sent_pps, received_pps, loss_ratio,
    throughput_bps AS received_bps,
    CASE WHEN workload = 'ping' THEN lost END AS ping_lost,
    CASE WHEN workload = 'ping' THEN rtt_p50_us END AS ping_rtt_p50_us,
    CASE WHEN workload = 'ping' THEN rtt_p99_us END AS ping_rtt_p99_us,
    owd_p50_us AS one_way_delay_p50_us, jitter_us,
    CASE WHEN workload IN ('flood', 'flow') THEN validation_errors END AS duplicates,
    install_ms AS rules_install_ms, verdicts_ok
FROM trials WHERE workload IN ('flood', 'flow', 'ping', 'ndr', 'degrade');
CREATE VIEW conn_results AS SELECT
    id AS trial_id, run_id, trial_key, rep, workload, status, error, started_at,
    json_extract(params, '$.topology') AS topology,
    json_extract(params, '$.engine') AS engine,
    json_extract(params, '$.model') AS model,
    json_extract(params, '$.rules') AS rules_requested,
    rules_installed, set_elements,
    json_extract(params, '$.position') AS rule_position,
    json_extract(params, '$.family') AS ip_family,
    json_extract(params, '$.conn.parallel') AS parallel,
    json_extract(params, '$.conn.request') AS request_bytes,
    json_extract(params, '$.conn.size') AS response_bytes,
    json_extract(params, '$.conn.limit') AS connection_limit,
    duration_s,
    json_extract(results, '$.conn.sessions') AS sessions,
    transactions_per_s AS sessions_per_s,
    throughput_bps AS goodput_bps,
    rtt_p50_us AS session_p50_us, rtt_p90_us AS session_p90_us,
    rtt_p99_us AS session_p99_us, rtt_max_us AS session_max_us,
    lost AS sessions_failed,
    validation_errors AS sessions_corrupt,
    json_extract(results, '$.conn.hold.reached') AS connections_opened,
    json_extract(results, '$.conn.hold.alive_at_stop') AS connections_alive_at_end,
    install_ms AS rules_install_ms, verdicts_ok
FROM trials WHERE workload IN ('sessions', 'bulk', 'http', 'connections');
";

/// Version 2: packet-rate headline columns.
const SCHEMA_V2: &str = "
ALTER TABLE trials ADD COLUMN offered_pps REAL;
ALTER TABLE trials ADD COLUMN sent_pps REAL;
ALTER TABLE trials ADD COLUMN received_pps REAL;
ALTER TABLE trials ADD COLUMN loss_ratio REAL;
ALTER TABLE trials ADD COLUMN owd_p50_us REAL;
ALTER TABLE trials ADD COLUMN jitter_us REAL;
";

/// Host metadata recorded once per run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cores: u32,
    pub fwbench_version: String,
    pub sysctls: Vec<(String, String)>,
    pub tools: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default)]
pub struct NewRun {
    pub started_at: String,
    pub scenario: String,
    pub scenario_text: Option<String>,
    pub seed: u64,
    pub command: String,
    pub host: Host,
    /// Axis values that select the run's baseline trials, e.g. `{"engine": "none"}`.
    pub baseline: Option<serde_json::Value>,
}

/// A stored run read back.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub scenario: String,
    pub scenario_text: Option<String>,
    pub seed: u64,
    pub command: String,
    pub status: String,
    pub baseline: Option<serde_json::Value>,
    pub host: Host,
    /// Metadata of each testbed role's host (testbed files; empty otherwise).
    pub role_hosts: Vec<RoleHost>,
}

/// One metric sample of one role during a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    pub role: String,
    /// Seconds since the trial's traffic started.
    pub t_s: f64,
    /// e.g. `cpu1.softirq` (% of that CPU), `ctxt` (switches/s), `mem.used_kib`,
    /// `if.g0.rx_pps`, `if.g0.rx_dropped_ps`.
    pub metric: String,
    pub value: f64,
}

/// Headline metrics of a trial, as columns (NULL when not applicable).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    pub duration_s: Option<f64>,
    pub throughput_bps: Option<f64>,
    pub transactions_per_s: Option<f64>,
    pub rtt_p50_us: Option<f64>,
    pub rtt_p90_us: Option<f64>,
    pub rtt_p99_us: Option<f64>,
    pub rtt_p999_us: Option<f64>,
    pub rtt_max_us: Option<f64>,
    pub validation_errors: Option<u64>,
    pub unsent: Option<u64>,
    pub lost: Option<u64>,
    /// Packet-rate workloads: what the pacer scheduled, what the sender got out and
    /// what arrived (at the sink, or at the gateway when there is none), per second.
    pub offered_pps: Option<f64>,
    pub sent_pps: Option<f64>,
    pub received_pps: Option<f64>,
    /// (sent − received) / sent.
    pub loss_ratio: Option<f64>,
    pub owd_p50_us: Option<f64>,
    pub jitter_us: Option<f64>,
}

/// One echo client connection, both ends' counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EchoClientRow {
    pub client: u32,
    pub source: String,
    pub mp: [(u64, u64); 4],
    pub unsent_client: u64,
    pub unsent_server: u64,
    pub lost: u64,
    /// malformed, wrong_client, wrong_size, gaps, duplicates, reordered (both ends summed)
    pub validation: [u64; 6],
    pub throughput_bps: f64,
    pub transactions_per_s: f64,
    /// p50, p90, p99, p99.9, max in µs
    pub rtt_us: Option<[f64; 5]>,
    pub error: Option<String>,
}

/// The rule set a trial ran with, as the gateway reported it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FirewallRow {
    pub engine: String,
    /// Rules the gateway installed (not the number asked for: that is `params.rules`).
    pub rules_installed: u64,
    pub set_elements: u64,
    pub install_ms: Option<f64>,
    pub remove_ms: Option<f64>,
    pub verdicts_ok: Option<bool>,
    /// Verdict-check problems, `; `-separated.
    pub verdict_problems: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrialRecord {
    pub run_id: i64,
    pub trial_key: String,
    pub rep: u32,
    pub workload: String,
    /// `ok`, `failed` or `unavailable`
    pub status: String,
    pub error: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub params: serde_json::Value,
    pub placement: serde_json::Value,
    pub headline: Headline,
    pub firewall: Option<FirewallRow>,
    pub results: serde_json::Value,
    pub echo_clients: Vec<EchoClientRow>,
    pub samples: Vec<SampleRow>,
    /// Gateway events' updates (issue 25), one per scheduled update.
    pub updates: Vec<UpdateRecord>,
}

/// A stored trial read back (without per-client rows and samples).
#[derive(Debug, Clone, PartialEq)]
pub struct TrialRow {
    pub id: i64,
    pub run_id: i64,
    pub trial_key: String,
    pub rep: u32,
    pub workload: String,
    pub status: String,
    pub error: Option<String>,
    pub params: serde_json::Value,
    pub headline: Headline,
    pub started_at: String,
    pub finished_at: String,
    /// The rule set as the gateway reported it (`None` without rules).
    pub firewall: Option<FirewallRow>,
    /// The whole outcome (JSON), as stored.
    pub results: serde_json::Value,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Open or create a results file for writing. Refuses files that are not
    /// fwbench's (a 0-byte file or a foreign SQLite file is never given fwbench's
    /// schema: only a file this call creates is) and files written by a newer schema.
    /// Older fwbench files are upgraded in place (the writer owns them).
    pub fn open(path: &Path) -> Result<Store> {
        let existed = std::fs::symlink_metadata(path).is_ok();
        if existed && !path.is_file() {
            return Err(StoreError::NotFwbench {
                path: path.into(),
                why: "not a regular file".into(),
            });
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Sqlite {
            path: path.into(),
            source,
        })?;
        let mut s = Store {
            conn,
            path: path.into(),
        };
        s.prepare(existed)?;
        Ok(s)
    }

    /// Open a results file for reading only (`report`): the file is opened read-only,
    /// so it works on a read-only file and can never be changed; an older schema is
    /// upgraded in an in-memory copy, never in place.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        use rusqlite::OpenFlags;
        let sql = |source| StoreError::Sqlite {
            path: path.into(),
            source,
        };
        if !path.is_file() {
            return Err(StoreError::NotFwbench {
                path: path.into(),
                why: "no such file".into(),
            });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
        let mut s = Store {
            conn,
            path: path.into(),
        };
        let version = s.check_ours()?;
        if version < SCHEMA_VERSION {
            let mut mem = Connection::open_in_memory().map_err(sql)?;
            mem.restore(
                rusqlite::DatabaseName::Main,
                path,
                None::<fn(rusqlite::backup::Progress)>,
            )
            .map_err(sql)?;
            s.conn = mem;
            s.migrate(version)?;
        }
        s.conn
            .execute_batch("PRAGMA foreign_keys = ON; PRAGMA query_only = ON;")
            .map_err(|e| s.sql(e))?;
        Ok(s)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// The schema version of a file that is fwbench's (errors for anything else).
    fn check_ours(&self) -> Result<i64> {
        let not_ours = |why: String| StoreError::NotFwbench {
            path: self.path.clone(),
            why,
        };
        let pragma = |name: &str| -> std::result::Result<i64, rusqlite::Error> {
            self.conn
                .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
        };
        let app_id = pragma("application_id").map_err(|e| not_ours(e.to_string()))?;
        let version = pragma("user_version").map_err(|e| not_ours(e.to_string()))?;
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| not_ours(e.to_string()))?;
        if app_id == 0 && tables == 0 {
            let len = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
            return Err(not_ours(if len == 0 {
                "an empty file; fwbench only creates its results files itself".into()
            } else {
                "an empty SQLite database without fwbench's application id".into()
            }));
        }
        if app_id != APPLICATION_ID {
            return Err(not_ours(format!(
                "SQLite database with application_id {app_id:#x} and {tables} tables"
            )));
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: self.path.clone(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version < 1 {
            return Err(not_ours(format!("schema version {version} is unknown")));
        }
        Ok(version)
    }

    /// Bring an fwbench file of `version` up to [`SCHEMA_VERSION`].
    fn migrate(&mut self, version: i64) -> Result<()> {
        match version {
            1 => self.upgrade(&[SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, SCHEMA_V5], false),
            2 => self.upgrade(&[SCHEMA_V3, SCHEMA_V4, SCHEMA_V5], false),
            3 => self.upgrade(&[SCHEMA_V4, SCHEMA_V5], false),
            4 => self.upgrade(&[SCHEMA_V5], false),
            _ => Ok(()),
        }
    }

    fn prepare(&mut self, existed: bool) -> Result<()> {
        if existed {
            let version = self.check_ours()?;
            self.migrate(version)?;
        } else {
            self.upgrade(
                &[SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, SCHEMA_V5],
                true,
            )?;
        }
        self.conn
            .execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;")
            .map_err(|e| self.sql(e))
    }

    /// Apply schema steps in one transaction and stamp the current version (and, for a
    /// new file, fwbench's application id).
    fn upgrade(&mut self, steps: &[&str], new_file: bool) -> Result<()> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(sql)?;
        for step in steps {
            tx.execute_batch(step).map_err(sql)?;
        }
        if new_file {
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(sql)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .and_then(|_| tx.commit())
            .map_err(sql)
    }

    pub fn begin_run(&self, run: &NewRun) -> Result<i64> {
        let h = &run.host;
        self.conn
            .execute(
                "INSERT INTO hosts (hostname, kernel, cpu_model, cores, fwbench_version, sysctls, tools)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    h.hostname,
                    h.kernel,
                    h.cpu_model,
                    h.cores,
                    h.fwbench_version,
                    serde_json::to_string(&h.sysctls)?,
                    serde_json::to_string(&h.tools)?
                ],
            )
            .map_err(|e| self.sql(e))?;
        let host_id = self.conn.last_insert_rowid();
        self.conn
            .execute(
                "INSERT INTO runs (started_at, scenario, scenario_text, seed, command, host_id, status, baseline)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7)",
                params![
                    run.started_at,
                    run.scenario,
                    run.scenario_text,
                    run.seed as i64,
                    run.command,
                    host_id,
                    run.baseline.as_ref().map(|b| b.to_string())
                ],
            )
            .map_err(|e| self.sql(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Mark a run finished (`complete`, `interrupted`, `failed`).
    pub fn finish_run(&self, run_id: i64, finished_at: &str, status: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET finished_at = ?1, status = ?2 WHERE id = ?3",
                params![finished_at, status, run_id],
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    /// Store one trial and its per-client rows atomically; durable on return.
    pub fn insert_trial(&mut self, t: &TrialRecord) -> Result<i64> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(sql)?;
        let h = &t.headline;
        let fw = t.firewall.as_ref();
        tx.execute(
            "INSERT INTO trials (run_id, trial_key, rep, workload, status, error, started_at, finished_at,
                params, placement, duration_s, throughput_bps, transactions_per_s,
                rtt_p50_us, rtt_p90_us, rtt_p99_us, rtt_p999_us, rtt_max_us,
                validation_errors, unsent, lost, engine, rules_installed, set_elements, install_ms, remove_ms,
                verdicts_ok, verdict_problems, results,
                offered_pps, sent_pps, received_pps, loss_ratio, owd_p50_us, jitter_us)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35)",
            params![
                t.run_id,
                t.trial_key,
                t.rep,
                t.workload,
                t.status,
                t.error,
                t.started_at,
                t.finished_at,
                t.params.to_string(),
                t.placement.to_string(),
                h.duration_s,
                h.throughput_bps,
                h.transactions_per_s,
                h.rtt_p50_us,
                h.rtt_p90_us,
                h.rtt_p99_us,
                h.rtt_p999_us,
                h.rtt_max_us,
                h.validation_errors.map(|v| v as i64),
                h.unsent.map(|v| v as i64),
                h.lost.map(|v| v as i64),
                fw.map(|f| f.engine.clone()),
                fw.map(|f| f.rules_installed as i64),
                fw.map(|f| f.set_elements as i64),
                fw.and_then(|f| f.install_ms),
                fw.and_then(|f| f.remove_ms),
                fw.and_then(|f| f.verdicts_ok),
                fw.and_then(|f| f.verdict_problems.clone()),
                t.results.to_string(),
                h.offered_pps,
                h.sent_pps,
                h.received_pps,
                h.loss_ratio,
                h.owd_p50_us,
                h.jitter_us,
            ],
        )
        .map_err(sql)?;
        let trial_id = tx.last_insert_rowid();
        {
            let mut stmt = tx
                .prepare(
                    "INSERT INTO echo_clients VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,
                     ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)",
                )
                .map_err(sql)?;
            for c in &t.echo_clients {
                let r = c.rtt_us;
                let v = &c.validation;
                stmt.execute(params![
                    trial_id,
                    c.client,
                    c.source,
                    c.mp[0].0 as i64,
                    c.mp[0].1 as i64,
                    c.mp[1].0 as i64,
                    c.mp[1].1 as i64,
                    c.mp[2].0 as i64,
                    c.mp[2].1 as i64,
                    c.mp[3].0 as i64,
                    c.mp[3].1 as i64,
                    c.unsent_client as i64,
                    c.unsent_server as i64,
                    c.lost as i64,
                    v[0] as i64,
                    v[1] as i64,
                    v[2] as i64,
                    v[3] as i64,
                    v[4] as i64,
                    v[5] as i64,
                    c.throughput_bps,
                    c.transactions_per_s,
                    r.map(|r| r[0]),
                    r.map(|r| r[1]),
                    r.map(|r| r[2]),
                    r.map(|r| r[3]),
                    r.map(|r| r[4]),
                    c.error,
                ])
                .map_err(sql)?;
            }
            let mut stmt = tx
                .prepare("INSERT INTO samples (trial_id, role, t_s, metric, value) VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(sql)?;
            for x in &t.samples {
                stmt.execute(params![trial_id, x.role, x.t_s, x.metric, x.value])
                    .map_err(sql)?;
            }
        }
        updates::insert(&tx, trial_id, &t.updates).map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(trial_id)
    }

    /// Every run, oldest first, with its host.
    pub fn runs(&self) -> Result<Vec<RunRow>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.started_at, r.finished_at, r.scenario, r.scenario_text, r.seed,
                    r.command, r.status, r.baseline, h.hostname, h.kernel, h.cpu_model, h.cores,
                    h.fwbench_version, h.sysctls, h.tools
                 FROM runs r JOIN hosts h ON h.id = r.host_id ORDER BY r.id",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| {
                let json = |s: Option<String>| -> Option<serde_json::Value> {
                    s.and_then(|s| serde_json::from_str(&s).ok())
                };
                let pairs = |s: String| -> Vec<(String, String)> {
                    serde_json::from_str(&s).unwrap_or_default()
                };
                Ok(RunRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    finished_at: r.get(2)?,
                    scenario: r.get(3)?,
                    scenario_text: r.get(4)?,
                    seed: r.get::<_, i64>(5)? as u64,
                    command: r.get(6)?,
                    status: r.get(7)?,
                    baseline: json(r.get(8)?),
                    host: Host {
                        hostname: r.get(9)?,
                        kernel: r.get(10)?,
                        cpu_model: r.get(11)?,
                        cores: r.get(12)?,
                        fwbench_version: r.get(13)?,
                        sysctls: pairs(r.get(14)?),
                        tools: pairs(r.get(15)?),
                    },
                    role_hosts: vec![],
                })
            })
            .map_err(|e| self.sql(e))?;
        let mut runs: Vec<RunRow> = rows
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| self.sql(e))?;
        for r in &mut runs {
            r.role_hosts = self.role_hosts(r.id)?;
        }
        Ok(runs)
    }

    /// The newest run of this scenario text that did not complete (interrupted, killed
    /// while `running`, or stopped as `failed`): the run a rerun resumes.
    pub fn resumable_run(&self, scenario_text: &str) -> Result<Option<RunRow>> {
        Ok(self
            .runs()?
            .into_iter()
            .rev()
            .find(|r| r.scenario_text.as_deref() == Some(scenario_text))
            .filter(|r| r.status != "complete"))
    }

    /// Mark a run as running again (resumed).
    pub fn reopen_run(&self, run_id: i64) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?1",
                [run_id],
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    /// Keys of the trials of a run that are finished for good (`ok`, `unavailable`);
    /// `failed` trials are run again on resume.
    pub fn done_keys(&self, run_id: i64) -> Result<std::collections::HashSet<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT trial_key FROM trials WHERE run_id = ?1 AND status IN ('ok', 'unavailable')")
            .map_err(|e| self.sql(e))?;
        let keys = stmt
            .query_map([run_id], |r| r.get::<_, String>(0))
            .map_err(|e| self.sql(e))?;
        keys.collect::<std::result::Result<_, _>>()
            .map_err(|e| self.sql(e))
    }

    /// The status and stored results (JSON) of one trial of a run, by key.
    pub fn trial_by_key(
        &self,
        run_id: i64,
        key: &str,
    ) -> Result<Option<(String, serde_json::Value)>> {
        let row: Option<(String, String)> = self
            .conn
            .query_row(
                "SELECT status, results FROM trials WHERE run_id = ?1 AND trial_key = ?2",
                params![run_id, key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        row.map(|(status, results)| Ok((status, serde_json::from_str(&results)?)))
            .transpose()
    }

    /// Forget a run's failed trials (before they are run again on resume).
    pub fn drop_failed(&self, run_id: i64) -> Result<usize> {
        self.conn
            .execute(
                "DELETE FROM echo_clients WHERE trial_id IN (SELECT id FROM trials WHERE run_id = ?1 AND status = 'failed');",
                [run_id],
            )
            .and_then(|_| {
                self.conn.execute(
                    "DELETE FROM samples WHERE trial_id IN (SELECT id FROM trials WHERE run_id = ?1 AND status = 'failed')",
                    [run_id],
                )
            })
            .and_then(|_| {
                self.conn.execute(
                    "DELETE FROM gateway_updates WHERE trial_id IN (SELECT id FROM trials WHERE run_id = ?1 AND status = 'failed')",
                    [run_id],
                )
            })
            .and_then(|_| {
                self.conn.execute(
                    "DELETE FROM trials WHERE run_id = ?1 AND status = 'failed'",
                    [run_id],
                )
            })
            .map_err(|e| self.sql(e))
    }

    /// Gateway updates of one trial, in time order.
    pub fn updates(&self, trial_id: i64) -> Result<Vec<UpdateRecord>> {
        updates::read(&self.conn, trial_id).map_err(|e| self.sql(e))
    }

    /// Metric samples of one trial, in time order.
    pub fn samples(&self, trial_id: i64) -> Result<Vec<SampleRow>> {
        let mut stmt = self
            .conn
            .prepare("SELECT role, t_s, metric, value FROM samples WHERE trial_id = ?1 ORDER BY t_s, role, metric")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([trial_id], |r| {
                Ok(SampleRow {
                    role: r.get(0)?,
                    t_s: r.get(1)?,
                    metric: r.get(2)?,
                    value: r.get(3)?,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(|e| self.sql(e))
    }

    /// Trials of one run (or of every run), in insertion order.
    pub fn trials(&self, run_id: Option<i64>) -> Result<Vec<TrialRow>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, run_id, trial_key, rep, workload, status, error, params,
                    duration_s, throughput_bps, transactions_per_s, rtt_p50_us, rtt_p90_us,
                    rtt_p99_us, rtt_p999_us, rtt_max_us, validation_errors, unsent, lost,
                    offered_pps, sent_pps, received_pps, loss_ratio, owd_p50_us, jitter_us,
                    started_at, finished_at, engine, rules_installed, set_elements, install_ms, remove_ms,
                    verdicts_ok, verdict_problems, results
                 FROM trials WHERE ?1 IS NULL OR run_id = ?1 ORDER BY id",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map(params![run_id], |r| {
                let params: String = r.get(7)?;
                Ok(TrialRow {
                    id: r.get(0)?,
                    run_id: r.get(1)?,
                    trial_key: r.get(2)?,
                    rep: r.get(3)?,
                    workload: r.get(4)?,
                    status: r.get(5)?,
                    error: r.get(6)?,
                    params: serde_json::from_str(&params).unwrap_or(serde_json::Value::Null),
                    headline: Headline {
                        duration_s: r.get(8)?,
                        throughput_bps: r.get(9)?,
                        transactions_per_s: r.get(10)?,
                        rtt_p50_us: r.get(11)?,
                        rtt_p90_us: r.get(12)?,
                        rtt_p99_us: r.get(13)?,
                        rtt_p999_us: r.get(14)?,
                        rtt_max_us: r.get(15)?,
                        validation_errors: r.get::<_, Option<i64>>(16)?.map(|v| v as u64),
                        unsent: r.get::<_, Option<i64>>(17)?.map(|v| v as u64),
                        lost: r.get::<_, Option<i64>>(18)?.map(|v| v as u64),
                        offered_pps: r.get(19)?,
                        sent_pps: r.get(20)?,
                        received_pps: r.get(21)?,
                        loss_ratio: r.get(22)?,
                        owd_p50_us: r.get(23)?,
                        jitter_us: r.get(24)?,
                    },
                    started_at: r.get(25)?,
                    finished_at: r.get(26)?,
                    firewall: match r.get::<_, Option<String>>(27)? {
                        None => None,
                        Some(engine) => Some(FirewallRow {
                            engine,
                            rules_installed: r.get::<_, Option<i64>>(28)?.unwrap_or(0) as u64,
                            set_elements: r.get::<_, Option<i64>>(29)?.unwrap_or(0) as u64,
                            install_ms: r.get(30)?,
                            remove_ms: r.get(31)?,
                            verdicts_ok: r.get(32)?,
                            verdict_problems: r.get(33)?,
                        }),
                    },
                    results: serde_json::from_str(&r.get::<_, String>(34)?)
                        .unwrap_or(serde_json::Value::Null),
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(|e| self.sql(e))
    }

    /// Status of a run, if it exists.
    pub fn run_status(&self, run_id: i64) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT status FROM runs WHERE id = ?1", [run_id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Per-client rows of a trial, ordered by client number.
    pub fn echo_client_count(&self, trial_id: i64) -> Result<i64> {
        self.conn
            .query_row(
                "SELECT count(*) FROM echo_clients WHERE trial_id = ?1",
                [trial_id],
                |r| r.get(0),
            )
            .map_err(|e| self.sql(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(run_id: i64, key: &str) -> TrialRecord {
        TrialRecord {
            run_id,
            trial_key: key.into(),
            rep: 1,
            workload: "echo".into(),
            status: "ok".into(),
            started_at: "t0".into(),
            finished_at: "t1".into(),
            params: serde_json::json!({"clients": 2}),
            placement: serde_json::json!({}),
            headline: Headline {
                throughput_bps: Some(1e6),
                validation_errors: Some(0),
                received_pps: Some(12_345.5),
                ..Default::default()
            },
            results: serde_json::json!({}),
            echo_clients: vec![
                EchoClientRow {
                    client: 1,
                    ..Default::default()
                },
                EchoClientRow {
                    client: 2,
                    rtt_us: Some([1.0, 2.0, 3.0, 4.0, 5.0]),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    }

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
    fn create_write_reopen_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.db");
        let mut s = Store::open(&p).unwrap();
        let run = s.begin_run(&NewRun::default()).unwrap();
        let id = s.insert_trial(&trial(run, "abc")).unwrap();
        s.finish_run(run, "t2", "complete").unwrap();
        drop(s);
        let s = Store::open(&p).unwrap();
        let rows = s.trials(Some(run)).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].headline.throughput_bps, Some(1e6));
        assert_eq!(rows[0].params["clients"], 2);
        assert_eq!(s.echo_client_count(id).unwrap(), 2);
        assert_eq!(s.run_status(run).unwrap().as_deref(), Some("complete"));
    }

    #[test]
    fn duplicate_trial_key_in_a_run_refused_and_nothing_half_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("r.db")).unwrap();
        let run = s.begin_run(&NewRun::default()).unwrap();
        s.insert_trial(&trial(run, "k")).unwrap();
        assert!(s.insert_trial(&trial(run, "k")).is_err());
        assert_eq!(s.trials(None).unwrap().len(), 1);
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
    }

    #[test]
    fn foreign_files_refused() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "this is not a database, just some text ".repeat(100)).unwrap();
        let e = Store::open(&text).err().unwrap();
        assert!(matches!(e, StoreError::NotFwbench { .. }), "{e}");

        let other = dir.path().join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t(x)")
            .unwrap();
        let e = Store::open(&other).err().unwrap();
        assert!(e.to_string().contains("not an fwbench results file"), "{e}");
    }

    #[test]
    fn newer_schema_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.db");
        drop(Store::open(&p).unwrap());
        Connection::open(&p)
            .unwrap()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let e = Store::open(&p).err().unwrap();
        assert!(
            matches!(e, StoreError::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1),
            "{e}"
        );
        assert!(e.to_string().contains("upgrade fwbench"));
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

    #[test]
    fn read_only_open_of_a_current_file_never_writes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.db");
        {
            let mut s = Store::open(&p).unwrap();
            let run = s.begin_run(&NewRun::default()).unwrap();
            s.insert_trial(&trial(run, "abc")).unwrap();
        }
        let before = std::fs::read(&p).unwrap();
        let s = Store::open_read_only(&p).unwrap();
        assert_eq!(s.trials(None).unwrap().len(), 1);
        assert!(s.begin_run(&NewRun::default()).is_err());
        drop(s);
        assert_eq!(std::fs::read(&p).unwrap(), before);
    }

    #[test]
    fn empty_and_foreign_files_are_never_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        for e in [
            Store::open(&empty).err().unwrap(),
            Store::open_read_only(&empty).err().unwrap(),
        ] {
            assert!(matches!(e, StoreError::NotFwbench { .. }), "{e}");
            assert!(e.to_string().contains("empty.db"), "{e}");
        }
        assert_eq!(
            std::fs::metadata(&empty).unwrap().len(),
            0,
            "schema written"
        );

        // A SQLite file without tables and without our application id.
        let bare = dir.path().join("bare.db");
        Connection::open(&bare)
            .unwrap()
            .pragma_update(None, "user_version", 5)
            .unwrap();
        let before = std::fs::read(&bare).unwrap();
        assert!(Store::open(&bare).is_err());
        assert!(Store::open_read_only(&bare).is_err());
        assert_eq!(std::fs::read(&bare).unwrap(), before);

        let other = dir.path().join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t(x)")
            .unwrap();
        let e = Store::open_read_only(&other).err().unwrap();
        assert!(e.to_string().contains("not an fwbench results file"), "{e}");
        assert!(Store::open_read_only(&dir.path().join("missing.db")).is_err());
        assert!(Store::open(dir.path()).is_err(), "a directory");
    }
}
