//! The schema of each version (`PRAGMA user_version`) and the steps between them.
//!
//! Owns: the SQL text of every schema step, frozen once shipped (a file of any older
//! version is brought up by running the steps after its version, in one transaction),
//! and the legacy tables that give rows from before a step what the step added.
//! Must not: change a shipped step's text (add a new version instead), or name a
//! workload anywhere but in the frozen legacy tables of steps already shipped.

use crate::runs::{SCHEMA_V8, SCHEMA_V9};
use crate::updates::SCHEMA_V5 as UPDATES_V5;
use crate::updates::{SCHEMA_V10, SCHEMA_V11, SCHEMA_V12, SCHEMA_V13, SCHEMA_V7};
use crate::views;

/// Schema version written by this build. Older files are migrated; newer are refused.
pub const SCHEMA_VERSION: i64 = 13;
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
// Version 9: labels given at run time, `run_tags` (`runs::SCHEMA_V9`).
// Version 10: reloads' violations in `gateway_updates` (`updates::SCHEMA_V10`).
// Version 11: each update's wait for the ones before it (`updates::SCHEMA_V11`).
// Version 12: where a reload's violation window starts (`updates::SCHEMA_V12`).
// Version 13: each update's loss beyond the baseline in no earlier update's window
// (`updates::SCHEMA_V13`).

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
        SCHEMA_V9.to_string(),
        SCHEMA_V10.to_string(),
        SCHEMA_V11.to_string(),
        SCHEMA_V12.to_string(),
        SCHEMA_V13.to_string(),
    ];
    let from = usize::try_from(version.max(0)).unwrap_or(usize::MAX);
    all.into_iter().skip(from).collect()
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
