//! The results store: one SQLite file (`results.db` by default).
//!
//! Owns: opening a results file (for writing, or read-only for reports), its error type,
//! and the modules below. Each trial is committed in its own transaction before the next
//! trial starts.
//! Must not: contain analysis; it stores raw results and reads them back.
//!
//! Modules, by what they own:
//! * [`schema`] — the tables of each schema version (`PRAGMA user_version`) and the
//!   steps between them; [`migrate`] — what opening does to a file: fwbench's or not,
//!   integrity (`PRAGMA quick_check`), migration, atomic creation.
//! * [`views`] — the per-family views (`echo_results`, `packet_results`, `conn_results`).
//! * [`runs`] — runs and their hosts; [`trials`] — trials, their kind, engine, rule set
//!   and per-client rows; [`headline`] — a trial's headline columns; [`samples`] —
//!   metrics sampled during a trial; `roles`, `updates` — role hosts, gateway updates.
//! * [`recovery`] — trials kept in recovery files when the results file could not take
//!   them, and their import; [`place`] — where such files may live and how they are
//!   opened (owner, mode, no symlinks).
//!
//! The schema's history (docs/results.md has the columns):
//! * version 1: `hosts`, `runs`, `trials`, `echo_clients`;
//! * version 2 adds packet-rate columns to `trials`;
//! * version 3 adds `runs.baseline` and `samples`;
//! * version 4 renames `trials.rules` to `rules_installed` and adds one view per family;
//! * version 5 adds each trial's effective engine (`engine_id`, `engine_kind`), its kind
//!   (`family`, `main_metric`, `main_higher`) and `gateway_updates`;
//! * version 6 adds `runs.recovery_key` (what proves a recovery file was written for a
//!   run of this file) and views that select by each trial's stored kind, never by a
//!   workload's name.

mod headline;
mod migrate;
mod place;
mod recovery;
mod roles;
mod runs;
mod samples;
mod schema;
mod trials;
mod updates;
mod views;

pub use headline::Headline;
pub use migrate::CHECK_BUDGET;
pub use place::Refused;
pub use recovery::{recovery_paths, write_recovery, Ignored, Recovered, RECOVERY_DIR};
pub use roles::RoleHost;
pub use runs::{Host, NewRun, RunRow, MITIGATION_PREFIX};
pub use samples::SampleRow;
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use trials::{EchoClientRow, EngineRow, FirewallRow, KindRow, TrialRecord, TrialRow};
pub use updates::UpdateRecord;

use rusqlite::Connection;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

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
    #[error("{path}: the results file is damaged (SQLite's quick_check: {problems}); nothing was written to it — restore it from a copy, or give another --db")]
    Damaged { path: PathBuf, problems: String },
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("no recovery file took trial {trial_key} of {db}: {}", place::said(.tried))]
    NotKept {
        db: PathBuf,
        trial_key: String,
        /// Each place tried and why it refused it (none: the run has no recovery key).
        tried: Vec<Refused>,
    },
    #[error("run {run_id} has no recovery key in {db}: its trials cannot be kept for it (a run of a file older than schema 6 gets one when it is resumed)")]
    NoRunKey { db: PathBuf, run_id: i64 },
    #[error("reading /dev/urandom for a run's recovery key: {0}")]
    Random(#[source] std::io::Error),
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
            StoreError::NotKept { .. } | StoreError::Random(_) => true,
            StoreError::NoRunKey { .. } => false,
            StoreError::Sqlite { .. }
            | StoreError::NotFwbench { .. }
            | StoreError::NewerSchema { .. }
            | StoreError::Damaged { .. }
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

pub struct Store {
    /// Trials imported from recovery files when the file was opened for writing.
    recovered: Vec<Recovered>,
    /// Recovery files of this results file that were not imported, and why.
    ignored: Vec<Ignored>,
    /// How long the integrity check ran if it was stopped unfinished.
    check_cut: Option<std::time::Duration>,
    /// The recovery key of each run this store began or reopened (run id → key).
    run_keys: RefCell<HashMap<i64, String>>,
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Open or create a results file for writing. Refuses files that are not
    /// fwbench's (a 0-byte file or a foreign SQLite file is never given fwbench's
    /// schema: only a file this call creates is), files written by a newer schema and
    /// damaged files (`PRAGMA quick_check`; [`StoreError::Damaged`]). Older fwbench
    /// files are upgraded in place (the writer owns them).
    ///
    /// A new file is built under a temporary name beside it and linked into place
    /// only once complete: two processes creating the same file never see each
    /// other's half-made schema (the loser opens the winner's file), and a creation
    /// that fails (a full disk) leaves nothing behind. Trials left in recovery files
    /// ([`write_recovery`]) are imported ([`Store::recovered`] says which, and
    /// [`Store::ignored`] which files were not taken and why).
    pub fn open(path: &Path) -> Result<Store> {
        let existed = std::fs::symlink_metadata(path).is_ok();
        if existed && !path.is_file() {
            return Err(StoreError::NotFwbench {
                path: path.into(),
                why: "not a regular file".into(),
            });
        }
        if !existed {
            migrate::create_atomically(path)?;
        }
        let conn = Connection::open(path).map_err(sql_at(path))?;
        let mut s = Store::on(conn, path);
        s.prepare(true)?;
        s.import_recovery(recovery::fallback_dir().as_deref())?;
        s.end_dead_runs()?;
        Ok(s)
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
            ignored: Vec::new(),
            check_cut: None,
            run_keys: RefCell::new(HashMap::new()),
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

    /// Every row `sql` with `params` gives, read by `row`; an error names the file.
    fn rows<T, C: FromIterator<T>>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<C> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.sql(e))?;
        let rows = stmt.query_map(params, row).map_err(|e| self.sql(e))?;
        rows.collect::<std::result::Result<C, _>>()
            .map_err(|e| self.sql(e))
    }

    /// Run one statement of `sql` with `params`; its error names the file.
    fn execute(&self, sql: &str, params: impl rusqlite::Params) -> Result<usize> {
        self.conn.execute(sql, params).map_err(|e| self.sql(e))
    }
}

#[cfg(test)]
#[path = "lib_tests.rs"]
pub(crate) mod tests;
