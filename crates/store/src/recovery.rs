//! Recovery files: a trial the results file could not take (a full disk, an I/O error)
//! is kept as one JSON line, and the next open of that results file for writing
//! imports it (issue 24; made safe on a shared host by issue 38 point 1).
//!
//! Owns: where a results file's recovery files are (beside it, `DB.recovery.jsonl`;
//! else `NAME-HASH.jsonl` in the fallback directory of `place`), the line format (the
//! trial and its run's recovery key: the proof it was written for a run of this file),
//! and the import: a file is taken only if every line proves itself, all its trials in
//! one transaction, then removed; any other file is left alone and said why.
//! Must not: open a file but through `place` (no symbolic links, no one else's files),
//! or print (the controller says what was recovered and what was ignored).

use crate::place::{self, check_dir, make_dir, open_append, open_read};
use crate::{sql_at, trials, Refused, Result, Store, StoreError, TrialRecord};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Root's fallback directory for recovery files (others use
/// `$XDG_STATE_HOME/fwbench/recovery`; `FWBENCH_RECOVERY_DIR` sets it for anyone).
pub const RECOVERY_DIR: &str = place::ROOT_DIR;

/// Trials imported from one recovery file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub file: PathBuf,
    /// Trials inserted (a trial the results file already holds is not inserted again).
    pub imported: usize,
}

/// A recovery file of this results file that was not imported, and why (planted,
/// written for another file, or not a private file of this user's). It is left as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    pub file: PathBuf,
    pub why: String,
}

/// One line of a recovery file.
#[derive(Serialize, Deserialize)]
struct Line {
    /// The recovery key of the trial's run (`runs.recovery_key`).
    key: String,
    trial: TrialRecord,
}

/// The fallback directory of this process (see `place`).
pub(crate) fn fallback_dir() -> Option<PathBuf> {
    place::fallback_dir()
}

/// The recovery files of results file `db`, in the order they are tried: beside it
/// (`DB.recovery.jsonl`), then in the fallback directory ([`RECOVERY_DIR`] for root)
/// under a name made of the file name and a hash of its absolute path.
pub fn recovery_paths(db: &Path) -> Vec<PathBuf> {
    recovery_paths_in(db, fallback_dir().as_deref())
}

fn recovery_paths_in(db: &Path, dir: Option<&Path>) -> Vec<PathBuf> {
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
    let mut paths = vec![db.with_file_name(format!("{name}.recovery.jsonl"))];
    paths.extend(dir.map(|d| d.join(format!("{name}-{h:016x}.jsonl"))));
    paths
}

/// Keep a trial that could not be stored in results file `db` (one line appended to
/// the first of [`recovery_paths`] that takes it); the next [`Store::open`] of `db`
/// imports it. The run's recovery key is read from `db` (read-only); a writer that
/// has its [`Store`] uses [`Store::write_recovery`]. Returns where it went.
pub fn write_recovery(db: &Path, t: &TrialRecord) -> Result<PathBuf> {
    let key = Store::open_read_only(db)?.run_key(t.run_id)?;
    keep(db, t, key, fallback_dir().as_deref())
}

impl Store {
    /// Keep trial `t` in a recovery file of this results file (see [`write_recovery`]),
    /// with the recovery key this store began or reopened its run with.
    pub fn write_recovery(&self, t: &TrialRecord) -> Result<PathBuf> {
        let key = self.run_key(t.run_id)?;
        keep(&self.path, t, key, fallback_dir().as_deref())
    }

    /// Trials imported from recovery files by [`Store::open`] (for a message).
    pub fn recovered(&self) -> &[Recovered] {
        &self.recovered
    }

    /// Recovery files of this results file that [`Store::open`] left alone, and why
    /// (for a warning).
    pub fn ignored(&self) -> &[Ignored] {
        &self.ignored
    }

    /// Import every recovery file of this results file that proves itself (see
    /// [`Store::import_file`]); note the others in [`Store::ignored`].
    pub(crate) fn import_recovery(&mut self, dir: Option<&Path>) -> Result<()> {
        for file in recovery_paths_in(&self.path, dir) {
            if std::fs::symlink_metadata(&file).is_err() {
                continue;
            }
            let in_dir = dir.filter(|d| file.parent() == Some(*d));
            if let Some(Err(why)) = in_dir.map(check_dir) {
                self.ignore(&file, why.to_string());
                continue;
            }
            match open_read(&file) {
                Ok(None) => {}
                Ok(Some(f)) => self.import_file(&file, f)?,
                Err(why) => self.ignore(&file, why.to_string()),
            }
        }
        Ok(())
    }

    fn ignore(&mut self, file: &Path, why: String) {
        self.ignored.push(Ignored {
            file: file.into(),
            why,
        });
    }

    /// Import recovery file `file` (open as `f`) if every line carries its run's key:
    /// all its trials that this file does not hold yet in one transaction, then the
    /// file is removed. Else nothing of it is imported and it is noted as ignored.
    fn import_file(&mut self, file: &Path, mut f: std::fs::File) -> Result<()> {
        let mut text = String::new();
        if let Err(e) = f.read_to_string(&mut text) {
            self.ignore(file, format!("cannot read it: {e}"));
            return Ok(());
        }
        let lines = match self.proven(&text)? {
            Ok(lines) => lines,
            Err(why) => {
                self.ignore(file, why.to_string());
                return Ok(());
            }
        };
        let path = self.path.clone();
        let sql = sql_at(&path);
        let tx = self.conn.transaction().map_err(sql)?;
        let mut imported = 0;
        for t in &lines {
            let present: bool = tx
                .query_row(
                    "SELECT count(*) > 0 FROM trials WHERE run_id = ?1 AND trial_key = ?2",
                    rusqlite::params![t.run_id, t.trial_key],
                    |r| r.get(0),
                )
                .map_err(sql)?;
            if !present {
                trials::insert(&tx, t).map_err(sql)?;
                imported += 1;
            }
        }
        tx.commit().map_err(sql)?;
        let _ = std::fs::remove_file(file);
        self.recovered.push(Recovered {
            file: file.into(),
            imported,
        });
        Ok(())
    }

    /// The trials of a recovery file's `text` if each line is a trial of a run of
    /// this file with that run's recovery key; else why not (the first line that fails).
    fn proven(&self, text: &str) -> Result<std::result::Result<Vec<TrialRecord>, Unproven>> {
        let mut trials = Vec::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let n = n + 1;
            let line: Line = match serde_json::from_str(line) {
                Ok(line) => line,
                Err(source) => return Ok(Err(Unproven::NotARecord { line: n, source })),
            };
            let run = line.trial.run_id;
            match self.run_key(run)? {
                Some(key) if key == line.key => trials.push(line.trial),
                Some(_) => return Ok(Err(Unproven::WrongKey { line: n, run })),
                None => return Ok(Err(Unproven::NoKey { line: n, run })),
            }
        }
        Ok(Ok(trials))
    }
}

/// Why a recovery file's lines do not prove they were written for this results file.
#[derive(Debug, thiserror::Error)]
enum Unproven {
    #[error("line {line} is not a recovery record with its run's key ({source})")]
    NotARecord {
        line: usize,
        source: serde_json::Error,
    },
    #[error("line {line}: its key is not run {run}'s (not written for this results file)")]
    WrongKey { line: usize, run: i64 },
    #[error("line {line}: run {run} is not in this results file, or has no recovery key")]
    NoKey { line: usize, run: i64 },
}

/// Append `t` with `key` to the first recovery file of `db` that takes it (the
/// fallback directory `dir` made and checked first).
fn keep(db: &Path, t: &TrialRecord, key: Option<String>, dir: Option<&Path>) -> Result<PathBuf> {
    let Some(key) = key else {
        return Err(StoreError::NoRunKey {
            db: db.into(),
            run_id: t.run_id,
        });
    };
    let line = serde_json::to_string(&Line {
        key,
        trial: t.clone(),
    })? + "\n";
    let mut tried = Vec::new();
    for p in recovery_paths_in(db, dir) {
        let placed = match p.parent() {
            Some(d) if Some(d) == dir => make_dir(d),
            _ => Ok(()),
        };
        match placed.and_then(|()| append(&p, &line)) {
            Ok(()) => return Ok(p),
            Err(refused) => tried.push(refused),
        }
    }
    Err(StoreError::NotKept {
        db: db.into(),
        trial_key: t.trial_key.clone(),
        tried,
    })
}

/// Append `line` to recovery file `p` and sync it; on failure nothing of the line is
/// left (a half line would make the whole file unprovable) and a file this call made
/// empty is removed.
fn append(p: &Path, line: &str) -> std::result::Result<(), Refused> {
    let mut f = open_append(p)?;
    let r = f.metadata().and_then(|m| {
        let len = m.len();
        let r = f.write_all(line.as_bytes()).and_then(|_| f.sync_all());
        if r.is_err() {
            let _ = f.set_len(len);
            if len == 0 {
                let _ = std::fs::remove_file(p);
            }
        }
        r
    });
    r.map_err(|source| Refused::Io {
        path: p.into(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::trial;
    use crate::NewRun;

    /// A results file with one run and trial `a` stored; its run id.
    fn with_run(p: &Path) -> (Store, i64) {
        let mut s = Store::open(p).unwrap();
        let run = s.begin_run(&NewRun::default()).unwrap();
        s.insert_trial(&trial(run, "a")).unwrap();
        (s, run)
    }

    /// A results file `name` in `dir` with a run and its trial "a", and the fallback
    /// recovery directory in `dir`: (fallback, file, store, run).
    fn with_fallback(dir: &Path, name: &str) -> (PathBuf, PathBuf, Store, i64) {
        let p = dir.join(name);
        let (s, run) = with_run(&p);
        (dir.join("recovery"), p, s, run)
    }

    /// The recovery file beside results file `p` and the one in `fallback`.
    fn both_paths(p: &Path, fallback: &Path) -> [PathBuf; 2] {
        <[PathBuf; 2]>::try_from(recovery_paths_in(p, Some(fallback))).unwrap()
    }

    /// The recovery files the last import passed over, one a `says`, each saying its.
    fn assert_ignored(s: &Store, says: &[&str]) {
        let why: Vec<&str> = s.ignored().iter().map(|i| i.why.as_str()).collect();
        assert_eq!(why.len(), says.len(), "{why:?}");
        for (w, said) in why.iter().zip(says) {
            assert!(w.contains(said), "{why:?}");
        }
    }

    fn keys(s: &Store, run: i64) -> Vec<String> {
        s.trials(Some(run))
            .unwrap()
            .into_iter()
            .map(|t| t.trial_key)
            .collect()
    }

    /// The full-disk fallback: beside the file, and (that place refused: a directory in
    /// the way) in the fallback directory, made 0700; the next open imports both, each
    /// file in one go, and removes them; importing again adds nothing.
    #[test]
    fn a_trial_kept_in_a_recovery_file_is_imported_by_the_next_open() {
        let dir = tempfile::tempdir().unwrap();
        let spare = tempfile::tempdir().unwrap();
        let fallback = spare.path().join("fwbench/recovery");
        let p = dir.path().join("r.db");
        let (mut s, run) = with_run(&p);
        let w = s.keep_in(&trial(run, "b"), &fallback).unwrap();
        assert_eq!(w, dir.path().join("r.db.recovery.jsonl"));
        std::fs::rename(&w, spare.path().join("moved")).unwrap();
        std::fs::create_dir(&w).unwrap();
        let w2 = s.keep_in(&trial(run, "c"), &fallback).unwrap();
        let w3 = s.keep_in(&trial(run, "d"), &fallback).unwrap();
        assert!(w2.starts_with(&fallback) && w3 == w2, "{w2:?} {w3:?}");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&fallback).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o700);
        std::fs::remove_dir(&w).unwrap();
        std::fs::rename(spare.path().join("moved"), &w).unwrap();
        s.import_recovery(Some(&fallback)).unwrap();
        assert_eq!(keys(&s, run), ["a", "b", "c", "d"]);
        let got: Vec<usize> = s.recovered().iter().map(|r| r.imported).collect();
        assert_eq!(got, vec![1, 2]);
        assert!(s.ignored().is_empty(), "{:?}", s.ignored());
        assert!(!w.exists() && !w2.exists());
        // Importing again adds nothing; a line already stored is not stored twice.
        s.recovered.clear();
        s.keep_in(&trial(run, "a"), &fallback).unwrap();
        s.import_recovery(Some(&fallback)).unwrap();
        assert_eq!(keys(&s, run), ["a", "b", "c", "d"]);
        assert_eq!(s.recovered()[0].imported, 0);
    }

    /// Issue 38 point 1: a line planted in the fallback directory (a forged trial, no
    /// key; or a key of another file) is not imported, the file is left alone, and
    /// why is said; a file with one good and one bad line imports nothing of it.
    #[test]
    fn planted_and_foreign_lines_are_ignored_and_said_why() {
        let dir = tempfile::tempdir().unwrap();
        let (fallback, p, mut s, run) = with_fallback(dir.path(), "victim.db");
        let [beside, planted] = both_paths(&p, &fallback);
        std::fs::create_dir(&beside).unwrap();
        assert_eq!(s.keep_in(&trial(run, "good"), &fallback).unwrap(), planted);
        std::fs::remove_dir(&beside).unwrap();
        let mut forged = trial(run, "forged");
        forged.headline.received_pps = Some(99_999_999.0);
        let text = std::fs::read_to_string(&planted).unwrap()
            + &serde_json::to_string(&forged).unwrap()
            + "\n";
        std::fs::write(&planted, &text).unwrap();
        // Another results file's run, with its own key, beside this one.
        let other = dir.path().join("other.db");
        let (o, orun) = with_run(&other);
        assert_eq!(orun, run);
        let theirs = o.keep_in(&trial(orun, "foreign"), &fallback).unwrap();
        std::fs::rename(&theirs, &beside).unwrap();
        s.import_recovery(Some(&fallback)).unwrap();
        assert_eq!(keys(&s, run), ["a"], "imported");
        assert!(s.recovered().is_empty());
        assert_ignored(
            &s,
            &[
                "line 1: its key is not run 1's",
                "line 2 is not a recovery record",
            ],
        );
        assert_eq!(std::fs::read_to_string(&planted).unwrap(), text, "changed");
    }

    /// A symbolic link planted at the fallback path (pointing at a file of root's) is
    /// not followed when a trial is kept there, nor when recovery files are imported.
    #[test]
    fn a_symbolic_link_at_the_fallback_path_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (fallback, p, mut s, run) = with_fallback(dir.path(), "r.db");
        let [beside, there] = both_paths(&p, &fallback);
        let target = dir.path().join("shadow");
        std::fs::write(&target, "root:x:0:\n").unwrap();
        make_dir(&fallback).unwrap();
        std::os::unix::fs::symlink(&target, &there).unwrap();
        std::fs::create_dir(&beside).unwrap();
        let e = s.keep_in(&trial(run, "b"), &fallback).unwrap_err();
        assert!(matches!(e, StoreError::NotKept { .. }), "{e}");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "root:x:0:\n");
        std::fs::remove_dir(&beside).unwrap();
        s.import_recovery(Some(&fallback)).unwrap();
        assert!(
            s.ignored()[0].why.contains("symbolic link"),
            "{:?}",
            s.ignored()
        );
        assert_eq!(keys(&s, run), ["a"]);
    }

    /// `write_recovery` (by path) reads the run's key from the file: its line is
    /// imported; a run the file lacks has no key and nothing is written.
    #[test]
    fn write_recovery_by_path_takes_the_key_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.db");
        let (s, run) = with_run(&p);
        drop(s);
        let w = write_recovery(&p, &trial(run, "b")).unwrap();
        assert_eq!(w, dir.path().join("r.db.recovery.jsonl"));
        let e = write_recovery(&p, &trial(run + 1, "z")).unwrap_err();
        assert!(matches!(e, StoreError::NoRunKey { run_id: 2, .. }), "{e}");
        let s = Store::open(&p).unwrap();
        assert_eq!(keys(&s, run), ["a", "b"]);
        assert!(!w.exists());
    }

    /// Privileged (issue 38 point 1): files and directories another user made are
    /// never read, even with lines that would prove themselves.
    #[test]
    #[ignore = "needs root: chown to another uid (run with --include-ignored as root)"]
    fn files_of_another_user_are_ignored_and_said_so() {
        assert_eq!(place::euid(), 0, "run this test as root");
        let nobody = 65534;
        let dir = tempfile::tempdir().unwrap();
        let (fallback, p, mut s, run) = with_fallback(dir.path(), "r.db");
        let beside = recovery_paths_in(&p, None)[0].clone();
        std::fs::create_dir(&beside).unwrap();
        let file = s.keep_in(&trial(run, "b"), &fallback).unwrap();
        std::fs::remove_dir(&beside).unwrap();
        std::fs::copy(&file, &beside).unwrap();
        std::os::unix::fs::chown(&beside, Some(nobody), None).unwrap();
        std::os::unix::fs::chown(&fallback, Some(nobody), None).unwrap();
        s.import_recovery(Some(&fallback)).unwrap();
        assert_eq!(keys(&s, run), ["a"]);
        assert_ignored(
            &s,
            &[
                "the file is owned by uid 65534",
                "the directory is owned by uid 65534",
            ],
        );
        // Nothing is kept in a directory of another user's either.
        std::fs::remove_file(&beside).unwrap();
        std::fs::create_dir(&beside).unwrap();
        let e = s.keep_in(&trial(run, "c"), &fallback).unwrap_err();
        assert!(e.to_string().contains("owned by uid 65534"), "{e}");
    }

    impl Store {
        /// [`Store::write_recovery`] with fallback directory `dir`.
        fn keep_in(&self, t: &TrialRecord, dir: &Path) -> Result<PathBuf> {
            keep(&self.path, t, self.run_key(t.run_id)?, Some(dir))
        }
    }
}
