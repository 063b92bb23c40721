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
//! * version 5 adds `trials.engine_id` (the effective engine: `nft/inet`, `nft-set/ip`,
//!   `iptables-legacy`, `none` — the engine and, where it takes one, its nft table
//!   family) and `trials.engine_kind` (`none`, `nft`, `xtables`, `bpf`), so the report
//!   groups and compares engines by what they are, never by their names; trials of
//!   older files get them from their parameters.
//! * `echo_clients` — per client connection of an echo trial: counters at the four
//!   measurement points, validation failures, unsent/lost, throughput, RTT percentiles.

mod roles;
mod updates;
pub use roles::RoleHost;
pub use updates::UpdateRecord;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use updates::SCHEMA_V5 as UPDATES_V5;
use updates::SCHEMA_V6 as UPDATES_V6;

/// Schema version written by this build. Older files are migrated; newer are refused.
pub const SCHEMA_VERSION: i64 = 6;
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

impl StoreError {
    /// The system failed (a full disk, an I/O error, no memory), not the user's input:
    /// the file named is fine to use once the system is.
    pub fn is_system(&self) -> bool {
        use rusqlite::ffi::ErrorCode;
        match self {
            StoreError::Sqlite {
                source: rusqlite::Error::SqliteFailure(e, _),
                ..
            } => matches!(
                e.code,
                ErrorCode::DiskFull | ErrorCode::SystemIoFailure | ErrorCode::OutOfMemory
            ),
            StoreError::Sqlite { .. }
            | StoreError::NotFwbench { .. }
            | StoreError::NewerSchema { .. }
            | StoreError::Encode(_) => false,
        }
    }
}

/// An SQLite error on the results file at `path`, as the store reports it.
fn sql_at(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + Copy + '_ {
    move |source| StoreError::Sqlite {
        path: path.into(),
        source,
    }
}

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

/// The columns every view takes from a trial's parameters and firewall, in this order
/// after `started_at` (one block, so the views cannot drift apart).
const VIEW_COMMON_COLUMNS: &str = "    json_extract(params, '$.topology') AS topology,
    json_extract(params, '$.engine') AS engine,
    json_extract(params, '$.model') AS model,
    json_extract(params, '$.rules') AS rules_requested,
    rules_installed, set_elements,
    json_extract(params, '$.position') AS rule_position,
    json_extract(params, '$.family') AS ip_family,
";

/// Version 4: `rules` named for what it is; the views ([`VIEWS`], by workload name
/// until version 5).
const SCHEMA_V4: &str = "
ALTER TABLE trials RENAME COLUMN rules TO rules_installed;
";

/// One view (since version 4) per family of workloads, whose columns say what they mean
/// (the `trials` headline columns mean different things per workload: `throughput_bps`
/// is goodput for sessions, `lost` failed sessions …).
struct View {
    name: &'static str,
    /// Whether a row names its workload (a family of several).
    workload: bool,
    /// The family's parameters: JSON path under `params` → column, after the common ones.
    params: &'static [(&'static str, &'static str)],
    /// The family's results, after `duration_s` (SQL, each line ending in a comma).
    results: &'static str,
}

/// The views: echo, packet, conn.
const VIEWS: [View; 3] = [
    View {
        name: "echo_results",
        workload: false,
        params: &[
            ("proto", "transport"),
            ("clients", "clients"),
            ("frame_size", "frame_size_bytes"),
            ("server", "server_mode"),
        ],
        results: "    throughput_bps AS echo_throughput_bps,
    transactions_per_s AS echo_transactions_per_s,
    rtt_p50_us, rtt_p90_us, rtt_p99_us, rtt_p999_us, rtt_max_us,
    validation_errors AS frames_invalid,
    unsent AS frames_unsent,
    lost AS frames_lost,
",
    },
    View {
        name: "packet_results",
        workload: true,
        params: &[
            ("packet.size.payload", "udp_payload_bytes"),
            ("packet.size.frame", "ethernet_frame_bytes"),
            ("packet.rate.bps", "rate_requested_bps"),
            ("packet.rate.pps", "rate_requested_pps"),
            ("packet.flows", "flows"),
            ("packet.threads", "sender_threads"),
        ],
        results: "    offered_pps, sent_pps, received_pps, loss_ratio,
    throughput_bps AS received_bps,
    CASE WHEN workload = 'ping' THEN lost END AS ping_lost,
    CASE WHEN workload = 'ping' THEN rtt_p50_us END AS ping_rtt_p50_us,
    CASE WHEN workload = 'ping' THEN rtt_p99_us END AS ping_rtt_p99_us,
    owd_p50_us AS one_way_delay_p50_us, jitter_us,
    CASE WHEN workload IN ('flood', 'flow') THEN validation_errors END AS duplicates,
",
    },
    View {
        name: "conn_results",
        workload: true,
        params: &[
            ("conn.parallel", "parallel"),
            ("conn.request", "request_bytes"),
            ("conn.size", "response_bytes"),
            ("conn.limit", "connection_limit"),
        ],
        results: "    json_extract(results, '$.conn.sessions') AS sessions,
    transactions_per_s AS sessions_per_s,
    throughput_bps AS goodput_bps,
    rtt_p50_us AS session_p50_us, rtt_p90_us AS session_p90_us,
    rtt_p99_us AS session_p99_us, rtt_max_us AS session_max_us,
    lost AS sessions_failed,
    validation_errors AS sessions_corrupt,
    json_extract(results, '$.conn.hold.reached') AS connections_opened,
    json_extract(results, '$.conn.hold.alive_at_stop') AS connections_alive_at_end,
",
    },
];

/// The views' SQL, each with its row filter (`filters` in the order of [`VIEWS`]).
fn views(filters: [&str; 3]) -> String {
    let mut sql = String::new();
    for (v, filter) in VIEWS.iter().zip(filters) {
        let workload = if v.workload { "workload, " } else { "" };
        let params: String = v
            .params
            .iter()
            .map(|(path, col)| format!("    json_extract(params, '$.{path}') AS {col},\n"))
            .collect();
        sql += &format!(
            "CREATE VIEW {} AS SELECT\n    \
             id AS trial_id, run_id, trial_key, rep, {workload}status, error, started_at,\n\
             {VIEW_COMMON_COLUMNS}{params}    duration_s,\n{}    \
             install_ms AS rules_install_ms, verdicts_ok\nFROM trials WHERE {filter};\n",
            v.name, v.results
        );
    }
    sql
}

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

/// The step to version 5: its columns, the views by family, old rows' kinds.
fn v5() -> String {
    format!(
        "{SCHEMA_V5}{ENGINE_V5}{UPDATES_V5}{}\n{LEGACY_KINDS};\n",
        views_v5()
    )
}

/// Version 5's views: rows by family.
fn views_v5() -> String {
    views(["family = 'echo'", "family = 'packet'", "family = 'conn'"])
}

/// The kinds of trials stored without one (files from before version 5, records
/// that do not say): the workloads of that time, frozen here. New workloads say
/// their kind when they are recorded ([`TrialRecord::kind`]) and never appear here.
const LEGACY_KINDS: &str = "
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
#[derive(Debug, Clone, Default, PartialEq)]
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

/// The engine a trial ran with, as the controller recorded it: what the report groups
/// and compares engines by (their names are only shown).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EngineRow {
    /// `ENGINE` or `ENGINE/FAMILY`: `nft/inet`, `nft-set/ip`, `iptables-legacy`, `none`.
    pub id: String,
    /// `none`, `nft`, `xtables` or `bpf`.
    pub kind: String,
}

impl EngineRow {
    /// The row of an effective engine (how the controller records every trial).
    pub fn of(e: fwmodel::EffectiveEngine) -> EngineRow {
        EngineRow {
            id: e.id(),
            kind: e.kind().name().into(),
        }
    }

    /// The engine's name: the id without its family.
    pub fn name(&self) -> &str {
        self.id.split_once('/').map_or(&self.id, |(e, _)| e)
    }

    /// The nft table family, for the engines that take one.
    pub fn family(&self) -> Option<&str> {
        self.id.split_once('/').map(|(_, f)| f)
    }

    /// No rules (the baseline engine).
    pub fn is_none(&self) -> bool {
        self.kind == fwmodel::EngineKind::None.name()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// The effective engine (every trial; `None` only for callers that know none).
    pub engine: Option<EngineRow>,
    pub firewall: Option<FirewallRow>,
    pub results: serde_json::Value,
    /// The trial's kind as the controller knows it (`None`: the pre-v5 names decide).
    pub kind: Option<KindRow>,
    pub echo_clients: Vec<EchoClientRow>,
    pub samples: Vec<SampleRow>,
    /// Gateway events' updates (issue 25), one per scheduled update.
    pub updates: Vec<UpdateRecord>,
}

/// A stored trial read back (without per-client rows and samples).
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// The effective engine (`None`: a trial whose parameters name no known engine).
    pub engine: Option<EngineRow>,
    /// The rule set as the gateway reported it (`None` without rules).
    pub firewall: Option<FirewallRow>,
    /// The whole outcome (JSON), as stored.
    pub results: serde_json::Value,
    /// The trial's kind: its family and main metric.
    pub kind: Option<KindRow>,
}

/// What a trial's kind says about its rows: the family (`echo`, `packet`, `conn`: which
/// view shows it) and the metric that ranks its configurations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KindRow {
    pub family: String,
    /// The main metric's name, as the report names metrics (`received_pps` …);
    /// `None` for a search (its result is the search's).
    pub main_metric: Option<String>,
    /// Higher is better (throughput), else lower (latency).
    pub main_higher: bool,
}

pub struct Store {
    /// Trials imported from recovery files when the file was opened for writing.
    recovered: Vec<Recovered>,
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Open or create a results file for writing. Refuses files that are not
    /// fwbench's (a 0-byte file or a foreign SQLite file is never given fwbench's
    /// schema: only a file this call creates is) and files written by a newer schema.
    /// Older fwbench files are upgraded in place (the writer owns them).
    ///
    /// A new file is built under a temporary name beside it and linked into place
    /// only once complete: two processes creating the same file never see each
    /// other's half-made schema (the loser opens the winner's file), and a creation
    /// that fails (a full disk) leaves nothing behind. Trials left in recovery files
    /// ([`write_recovery`]) are imported ([`Store::recovered`] says which).
    pub fn open(path: &Path) -> Result<Store> {
        let existed = std::fs::symlink_metadata(path).is_ok();
        if existed && !path.is_file() {
            return Err(StoreError::NotFwbench {
                path: path.into(),
                why: "not a regular file".into(),
            });
        }
        if !existed {
            create_atomically(path)?;
        }
        let conn = Connection::open(path).map_err(sql_at(path))?;
        let mut s = Store::on(conn, path);
        s.prepare(true)?;
        s.import_recovery(&recovery_dir())?;
        Ok(s)
    }

    /// Trials imported from recovery files by [`Store::open`] (for a message).
    pub fn recovered(&self) -> &[Recovered] {
        &self.recovered
    }

    /// Import every recovery file of this results file: each trial whose run exists
    /// and whose key that run does not hold yet is inserted; the file is removed once
    /// all its trials are in (a trial of a run this file lacks keeps its file).
    fn import_recovery(&mut self, dir: &Path) -> Result<()> {
        for file in recovery_paths_in(&self.path, dir) {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let (mut imported, mut kept) = (0, 0);
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let Ok(t) = serde_json::from_str::<TrialRecord>(line) else {
                    kept += 1;
                    continue;
                };
                let run_known: bool = self
                    .conn
                    .query_row(
                        "SELECT count(*) > 0 FROM runs WHERE id = ?1",
                        [t.run_id],
                        |r| r.get(0),
                    )
                    .map_err(|e| self.sql(e))?;
                if !run_known {
                    kept += 1;
                    continue;
                }
                let present: bool = self
                    .conn
                    .query_row(
                        "SELECT count(*) > 0 FROM trials WHERE run_id = ?1 AND trial_key = ?2 AND status = ?3",
                        params![t.run_id, t.trial_key, t.status],
                        |r| r.get(0),
                    )
                    .map_err(|e| self.sql(e))?;
                if !present {
                    self.insert_trial(&t)?;
                    imported += 1;
                }
            }
            if kept == 0 {
                let _ = std::fs::remove_file(&file);
            }
            if imported > 0 || kept > 0 {
                self.recovered.push(Recovered {
                    file,
                    imported,
                    kept,
                });
            }
        }
        Ok(())
    }

    /// Open a results file for reading only (`report`): the file is opened read-only,
    /// so it works on a read-only file and can never be changed; an older schema is
    /// upgraded in an in-memory copy, never in place.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        use rusqlite::OpenFlags;
        let sql = sql_at(path);
        if !path.is_file() {
            return Err(StoreError::NotFwbench {
                path: path.into(),
                why: "no such file".into(),
            });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
        let mut s = Store::on(conn, path);
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

    /// The store of the connection `conn` to the results file at `path`.
    fn on(conn: Connection, path: &Path) -> Store {
        Store {
            recovered: Vec::new(),
            conn,
            path: path.into(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self, source: rusqlite::Error) -> StoreError {
        sql_at(&self.path)(source)
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
            1 => self.upgrade(&[SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, &v5(), UPDATES_V6], false),
            2 => self.upgrade(&[SCHEMA_V3, SCHEMA_V4, &v5(), UPDATES_V6], false),
            3 => self.upgrade(&[SCHEMA_V4, &v5(), UPDATES_V6], false),
            4 => self.upgrade(&[&v5(), UPDATES_V6], false),
            5 => self.upgrade(&[UPDATES_V6], false),
            _ => Ok(()),
        }
    }

    fn prepare(&mut self, existed: bool) -> Result<()> {
        if existed {
            let version = self.check_ours()?;
            self.migrate(version)?;
        } else {
            self.upgrade(
                &[
                    SCHEMA_V1,
                    SCHEMA_V2,
                    SCHEMA_V3,
                    SCHEMA_V4,
                    &v5(),
                    UPDATES_V6,
                ],
                true,
            )?;
        }
        self.set_pragmas()
    }

    fn set_pragmas(&mut self) -> Result<()> {
        self.conn
            .execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;")
            .map_err(|e| self.sql(e))
    }

    /// Apply schema steps in one transaction and stamp the current version (and, for a
    /// new file, fwbench's application id).
    fn upgrade(&mut self, steps: &[&str], new_file: bool) -> Result<()> {
        let path = self.path.clone();
        let sql = sql_at(&path);
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
        let sql = sql_at(&path);
        let tx = self.conn.transaction().map_err(sql)?;
        let h = &t.headline;
        let fw = t.firewall.as_ref();
        tx.execute(
            "INSERT INTO trials (run_id, trial_key, rep, workload, status, error, started_at, finished_at,
                params, placement, duration_s, throughput_bps, transactions_per_s,
                rtt_p50_us, rtt_p90_us, rtt_p99_us, rtt_p999_us, rtt_max_us,
                validation_errors, unsent, lost, engine, rules_installed, set_elements, install_ms, remove_ms,
                verdicts_ok, verdict_problems, results,
                offered_pps, sent_pps, received_pps, loss_ratio, owd_p50_us, jitter_us,
                family, main_metric, main_higher, engine_id, engine_kind)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40)",
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
                t.kind.as_ref().map(|k| k.family.clone()),
                t.kind.as_ref().and_then(|k| k.main_metric.clone()),
                t.kind.as_ref().map(|k| k.main_higher),
                t.engine.as_ref().map(|e| e.id.clone()),
                t.engine.as_ref().map(|e| e.kind.clone()),
            ],
        )
        .map_err(sql)?;
        let trial_id = tx.last_insert_rowid();
        if t.kind.is_none() {
            tx.execute_batch(LEGACY_KINDS).map_err(sql)?;
        }
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
                    verdicts_ok, verdict_problems, results, family, main_metric, main_higher, engine_id, engine_kind
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
                    kind: match r.get::<_, Option<String>>(35)? {
                        None => None,
                        Some(family) => Some(KindRow {
                            family,
                            main_metric: r.get(36)?,
                            main_higher: r.get::<_, Option<bool>>(37)?.unwrap_or(true),
                        }),
                    },
                    engine: match (r.get::<_, Option<String>>(38)?, r.get(39)?) {
                        (Some(id), Some(kind)) => Some(EngineRow { id, kind }),
                        _ => None,
                    },
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
    fn a_trial_kept_in_a_recovery_file_is_imported_by_the_next_open() {
        let dir = tempfile::tempdir().unwrap();
        let spare = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.db");
        let mut s = Store::open(&p).unwrap();
        let run = s.begin_run(&NewRun::default()).unwrap();
        s.insert_trial(&trial(run, "a")).unwrap();
        // Beside the file, and (that place refused: a directory in the way) in the
        // spare directory.
        let t = trial(run, "b");
        let w = write_recovery_in(&p, &t, spare.path()).unwrap();
        assert_eq!(w, dir.path().join("r.db.recovery.jsonl"));
        std::fs::rename(&w, spare.path().join("moved")).unwrap();
        std::fs::create_dir(&w).unwrap();
        let t2 = trial(run, "c");
        let w2 = write_recovery_in(&p, &t2, spare.path()).unwrap();
        assert!(w2.starts_with(spare.path()), "{w2:?}");
        std::fs::remove_dir(&w).unwrap();
        std::fs::rename(spare.path().join("moved"), &w).unwrap();
        // A trial of a run this file lacks stays in its file.
        write_recovery_in(&p, &trial(run + 5, "z"), spare.path()).unwrap();
        s.import_recovery(spare.path()).unwrap();
        let keys: Vec<String> = s
            .trials(Some(run))
            .unwrap()
            .into_iter()
            .map(|t| t.trial_key)
            .collect();
        assert_eq!(keys, ["a", "b", "c"].map(String::from).to_vec());
        assert_eq!(
            s.recovered()
                .iter()
                .map(|r| (r.imported, r.kept))
                .collect::<Vec<_>>(),
            vec![(1, 1), (1, 0)]
        );
        assert!(w.is_file() && !w2.exists());
        // Importing again adds nothing.
        s.recovered.clear();
        s.import_recovery(spare.path()).unwrap();
        assert_eq!(s.trials(Some(run)).unwrap().len(), 3);
    }

    #[test]
    fn processes_creating_one_file_at_once_all_get_a_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.db");
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let p = p.clone();
                std::thread::spawn(move || Store::open(&p).map(|_| ()).map_err(|e| e.to_string()))
            })
            .collect();
        for h in handles {
            h.join().unwrap().unwrap();
        }
        // Only the file itself is left (no temporary names).
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["new.db".to_string()]);
    }

    #[test]
    fn a_creation_that_fails_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("missing-dir").join("r.db");
        assert!(Store::open(&p).is_err());
        assert!(!p.exists());
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

/// Build a new results file at a temporary name in `path`'s directory and link it
/// into place if `path` still does not exist (else leave the existing one: another
/// process made it first). The temporary file is removed in every case, so a failed
/// creation (a full disk) leaves no empty or half-made file.
fn create_atomically(path: &Path) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results.db".into());
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp_name = format!(".{name}.creating-{}-{serial}", std::process::id());
    let tmp = path.with_file_name(&tmp_name);
    let remove_tmp = || {
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(tmp.with_file_name(format!("{tmp_name}-journal")));
    };
    remove_tmp();
    let built = (|| {
        let conn = Connection::open(&tmp).map_err(sql_at(path))?;
        let mut s = Store::on(conn, path);
        s.prepare(false)?;
        s.conn.close().map_err(|(_, source)| sql_at(path)(source))
    })();
    if let Err(e) = built {
        remove_tmp();
        return Err(e);
    }
    // link(2) fails if `path` exists: never replaces another process's file.
    let linked = match std::fs::hard_link(&tmp, path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        // A file system without hard links: a rename (the small race is theirs).
        Err(_) if std::fs::symlink_metadata(path).is_err() => std::fs::rename(&tmp, path),
        Err(_) => Ok(()),
    };
    remove_tmp();
    linked.map_err(|e| StoreError::NotFwbench {
        path: path.into(),
        why: format!("cannot create it: {e}"),
    })
}

/// Trials imported from one recovery file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub file: PathBuf,
    pub imported: usize,
    /// Lines not imported (their run is not in this file, or unreadable): the file stays.
    pub kept: usize,
}

/// Where trials that could not be stored in a results file are kept when its own
/// directory cannot take them (a full disk): `/var/tmp/fwbench-recovery`, or the
/// directory in the environment variable `FWBENCH_RECOVERY_DIR`.
pub const RECOVERY_DIR: &str = "/var/tmp/fwbench-recovery";

fn recovery_dir() -> PathBuf {
    std::env::var_os("FWBENCH_RECOVERY_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(RECOVERY_DIR))
}

/// The recovery files of results file `db`, in the order they are tried: beside it
/// (`DB.recovery.jsonl`), then in [`RECOVERY_DIR`] under a name made of the file name
/// and a hash of its absolute path.
pub fn recovery_paths(db: &Path) -> Vec<PathBuf> {
    recovery_paths_in(db, &recovery_dir())
}

fn recovery_paths_in(db: &Path, dir: &Path) -> Vec<PathBuf> {
    let name = db
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results.db".into());
    let parent = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let abs = std::fs::canonicalize(&parent).unwrap_or(parent).join(&name);
    // FNV-1a of the absolute path: one file per results file.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in abs.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    vec![
        db.with_file_name(format!("{name}.recovery.jsonl")),
        dir.join(format!("{name}-{h:016x}.jsonl")),
    ]
}

/// Keep a trial that could not be stored in `db` (one JSON line appended to the first
/// of [`recovery_paths`] that takes it); the next [`Store::open`] of `db` imports it.
/// Returns where it went, or every place's error.
pub fn write_recovery(db: &Path, t: &TrialRecord) -> std::result::Result<PathBuf, String> {
    write_recovery_in(db, t, &recovery_dir())
}

fn write_recovery_in(
    db: &Path,
    t: &TrialRecord,
    dir: &Path,
) -> std::result::Result<PathBuf, String> {
    use std::io::Write;
    let line = serde_json::to_string(t).map_err(|e| e.to_string())? + "\n";
    let mut errors = Vec::new();
    for p in recovery_paths_in(db, dir) {
        if let Some(d) = p.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        let r = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .and_then(|mut f| {
                let len = f.metadata()?.len();
                let r = f.write_all(line.as_bytes()).and_then(|_| f.sync_all());
                if r.is_err() {
                    // Never leave half a line: the next import would skip the trial.
                    let _ = f.set_len(len);
                }
                r
            });
        match r {
            Ok(()) => return Ok(p),
            Err(e) => {
                errors.push(format!("{}: {e}", p.display()));
                // An empty file we just made is no recovery file.
                if std::fs::metadata(&p).is_ok_and(|m| m.len() == 0) {
                    let _ = std::fs::remove_file(&p);
                }
            }
        }
    }
    Err(errors.join("; "))
}
