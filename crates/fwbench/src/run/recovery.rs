//! A trial's result is never lost: when the results file cannot take it (a full
//! disk, an I/O error), it is kept in a recovery file (`Store::write_recovery`: beside
//! the file, else in a directory of this user's only) that the next `Store::open` of
//! that file imports if it proves it was written for one of its runs, and the caller
//! still prints it.
//!
//! Owns: the store-or-keep step and its messages. Must not: print the trial (callers
//! print it before they return this error) or decide exit codes.

use anyhow::{anyhow, Result};
use std::path::Path;
use store::{Store, TrialRecord};

/// Store `rec`; if that fails, keep it in a recovery file. The error (returned after
/// the trial was kept, or not even that) says where the result is and how it comes back.
pub fn store_or_keep(store: &mut Store, rec: &TrialRecord) -> Result<()> {
    let Err(e) = store.insert_trial(rec) else {
        return Ok(());
    };
    let db = store.path().to_path_buf();
    Err(match store.write_recovery(rec) {
        Ok(kept) => anyhow!(
            "storing trial {} in {}: {e}; its result is printed above and kept in {} \
             (the next fwbench command that writes {} imports it)",
            rec.trial_key,
            db.display(),
            kept.display(),
            db.display()
        ),
        Err(why) => anyhow!(
            "storing trial {} in {}: {e}; keeping it failed too ({why}): \
             its result is only what is printed above",
            rec.trial_key,
            db.display()
        ),
    })
}

/// How to resume an unfinished run of a scenario (for errors that leave it `running`).
pub fn resume_hint(run_id: i64, scenario: Option<&Path>, db: &Path) -> String {
    format!(
        "run {run_id} of {db} is left unfinished; `fwbench run {}--db {db}` resumes it \
         (finished and recovered trials are kept; --fresh starts over)",
        scenario
            .map(|s| format!("{} ", s.display()))
            .unwrap_or_default(),
        db = db.display()
    )
}

/// Tell the user which trials of earlier commands were recovered into `store`, and
/// which recovery files were left alone and why (one line each); and if the integrity
/// check on open was stopped at its budget.
pub fn say_recovered(store: &Store) {
    if let Some(took) = store.check_cut_short() {
        eprintln!(
            "fwbench: warning: the integrity check of {} was stopped after {:.1} s \
             (its limit): only part of the file was checked",
            store.path().display(),
            took.as_secs_f64()
        );
    }
    for r in store.recovered().iter().filter(|r| r.imported > 0) {
        eprintln!(
            "fwbench: recovered {} trial(s) from {} into {}",
            r.imported,
            r.file.display(),
            store.path().display(),
        );
    }
    for i in store.ignored() {
        eprintln!(
            "fwbench: warning: recovery file {} ignored (not imported into {}): {}",
            i.file.display(),
            store.path().display(),
            i.why
        );
    }
}
