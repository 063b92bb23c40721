//! What opening a results file does to it: is it fwbench's, is it whole, bring it to
//! the current schema; and the atomic creation of a new file.
//!
//! Owns: the checks on open (application id, schema version, `PRAGMA quick_check` before
//! anything is written), running the schema steps in one transaction, the pragmas of a
//! writer, and building a new file under a temporary name.
//! Must not: hold schema text (that is `schema`'s) or write to a file that failed a check.

use crate::schema::{steps_from, APPLICATION_ID, SCHEMA_VERSION};
use crate::{sql_at, Result, Store, StoreError};
use rusqlite::Connection;
use std::path::Path;
use std::time::{Duration, Instant};

/// At most this many problems are listed by the integrity check (`PRAGMA quick_check(N)`).
const CHECK_PROBLEMS: u32 = 5;
/// How long the integrity check may take on open for writing (a 744 MB file took 3 s
/// from the page cache and 32 s from disk: docs/results.md).
pub const CHECK_BUDGET: Duration = Duration::from_secs(10);

impl Store {
    /// The schema version of a file that is fwbench's (errors for anything else).
    pub(crate) fn check_ours(&self) -> Result<i64> {
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

    /// Refuse a damaged file before anything is written to it: SQLite's
    /// `PRAGMA quick_check` (every page's structure, without comparing indexes with
    /// their tables; one read of the whole file — docs/results.md has its cost). The
    /// check stops after [`CHECK_BUDGET`]: the file is then used as it is and
    /// [`Store::check_cut_short`] says so.
    pub(crate) fn check_whole(&mut self) -> Result<()> {
        self.check_whole_within(CHECK_BUDGET)
    }

    fn check_whole_within(&mut self, budget: Duration) -> Result<()> {
        let damaged = |problems: String| StoreError::Damaged {
            path: self.path.clone(),
            problems,
        };
        let started = Instant::now();
        // A watchdog interrupts the check once the budget is spent, every millisecond
        // until it stops (an interrupt with no statement running does nothing, so one
        // that came before the statement began is repeated); told the check ended (its
        // sender dropped) it exits, and is joined before the connection is used again.
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let handle = self.conn.get_interrupt_handle();
        let watchdog = std::thread::spawn(move || {
            let mut wait_for = budget;
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(wait_for)
            {
                handle.interrupt();
                wait_for = Duration::from_millis(1);
            }
        });
        let problems: std::result::Result<Vec<String>, _> = self
            .conn
            .prepare(&format!("PRAGMA quick_check({CHECK_PROBLEMS})"))
            .and_then(|mut st| {
                st.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<std::result::Result<_, _>>()
            });
        drop(done);
        let _ = watchdog.join();
        let problems = match problems {
            Ok(problems) => problems,
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::OperationInterrupted =>
            {
                self.check_cut = Some(started.elapsed());
                return Ok(());
            }
            Err(e @ rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::DatabaseCorrupt
                    || f.code == rusqlite::ErrorCode::NotADatabase =>
            {
                return Err(damaged(e.to_string()));
            }
            Err(e) => return Err(self.sql(e)),
        };
        match problems.as_slice() {
            [ok] if ok == "ok" => Ok(()),
            _ => Err(damaged(problems.join("; "))),
        }
    }

    /// How long the integrity check ran before it was stopped, if it was (a file too
    /// large to read within [`CHECK_BUDGET`]: not all of it was checked).
    pub fn check_cut_short(&self) -> Option<Duration> {
        self.check_cut
    }

    /// Bring an fwbench file of `version` up to [`SCHEMA_VERSION`].
    pub(crate) fn migrate(&mut self, version: i64) -> Result<()> {
        if version < SCHEMA_VERSION {
            let steps = steps_from(version);
            self.upgrade(&steps, false)?;
        }
        Ok(())
    }

    /// Check and migrate a file opened for writing (`existed`), or give a new one its
    /// schema; then the writer's pragmas.
    pub(crate) fn prepare(&mut self, existed: bool) -> Result<()> {
        if existed {
            let version = self.check_ours()?;
            self.check_whole()?;
            self.migrate(version)?;
        } else {
            self.upgrade(&steps_from(0), true)?;
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
    fn upgrade(&mut self, steps: &[String], new_file: bool) -> Result<()> {
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
}

/// Build a new results file at a temporary name in `path`'s directory and link it
/// into place if `path` still does not exist (else leave the existing one: another
/// process made it first). The temporary file is removed in every case, so a failed
/// creation (a full disk) leaves no empty or half-made file.
pub(crate) fn create_atomically(path: &Path) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{scratch_run, trial};

    /// A SQLite file of another program (`other.db`, a table `t`) in `dir`.
    fn another_programs_file(dir: &Path) -> std::path::PathBuf {
        let other = dir.join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t(x)")
            .unwrap();
        other
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
    fn duplicate_trial_key_in_a_run_refused_and_nothing_half_written() {
        let (_dir, _, mut s, run) = scratch_run("r.db");
        s.insert_trial(&trial(run, "k")).unwrap();
        assert!(s.insert_trial(&trial(run, "k")).is_err());
        assert_eq!(s.trials(None).unwrap().len(), 1);
    }

    /// Issue 38 point 6: random bytes in the middle of a results file. Opening it for
    /// writing is refused (damaged, a message saying so, not a system failure: exit 2)
    /// and the file is left exactly as it was; a whole file opens.
    #[test]
    fn a_damaged_file_is_refused_for_writing_and_left_as_it_is() {
        let (_dir, p, mut s, run) = scratch_run("r.db");
        for i in 0..40 {
            let mut t = trial(run, &format!("k{i}"));
            t.results = serde_json::json!({"x": "y".repeat(20_000)});
            s.insert_trial(&t).unwrap();
        }
        drop(s);
        drop(Store::open(&p).unwrap());
        let mut bytes = std::fs::read(&p).unwrap();
        let page = 4096;
        assert!(bytes.len() > 20 * page, "{} bytes", bytes.len());
        // Garbage over a page in the middle (not the header: still fwbench's file).
        let mid = (bytes.len() / page / 2) * page;
        let mut x: u32 = 0x1234_5678;
        for b in &mut bytes[mid..mid + page] {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        std::fs::write(&p, &bytes).unwrap();
        let e = Store::open(&p)
            .err()
            .expect("a damaged file opened for writing");
        assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
        assert!(!e.is_system(), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("r.db") && msg.contains("damaged"), "{msg}");
        assert_eq!(std::fs::read(&p).unwrap(), bytes, "written to");
    }

    /// The check is bounded: out of budget it stops, the file is used as it is and
    /// the store says the check was cut short; within its budget it is not.
    #[test]
    fn the_integrity_check_stops_at_its_budget() {
        let (_dir, _, mut s, run) = scratch_run("r.db");
        let id = s.insert_trial(&trial(run, "a")).unwrap();
        // ~40 MB of samples: a check that takes long enough to be stopped.
        s.conn
            .execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 800000)
                 INSERT INTO samples SELECT ?1, 'gateway', i, 'cpu' || (i % 64) || '.softirq', i FROM n",
                [id],
            )
            .unwrap();
        assert_eq!(s.check_cut_short(), None);
        // The watchdog is a thread: on a busy machine it may start late; a few tries.
        for _ in 0..5 {
            s.check_whole_within(Duration::ZERO).unwrap();
            if s.check_cut_short().is_some() {
                break;
            }
        }
        assert!(s.check_cut_short().is_some(), "not stopped");
        s.check_cut = None;
        s.check_whole_within(Duration::from_secs(60)).unwrap();
        assert_eq!(s.check_cut_short(), None);
        // The connection is usable after an interrupted check.
        s.insert_trial(&trial(run, "after")).unwrap();
    }

    #[test]
    fn foreign_files_refused() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "this is not a database, just some text ".repeat(100)).unwrap();
        let e = Store::open(&text).err().unwrap();
        assert!(matches!(e, StoreError::NotFwbench { .. }), "{e}");

        let other = another_programs_file(dir.path());
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

        let other = another_programs_file(dir.path());
        let e = Store::open_read_only(&other).err().unwrap();
        assert!(e.to_string().contains("not an fwbench results file"), "{e}");
        assert!(Store::open_read_only(&dir.path().join("missing.db")).is_err());
        assert!(Store::open(dir.path()).is_err(), "a directory");
    }
}
