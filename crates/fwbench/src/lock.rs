//! Exclusive locks between fwbench processes: one run per named testbed, one
//! process per run of a results file.
//!
//! A lock is flock(2) on a file under [`LOCK_DIR`] holding the holder's PID (for
//! the message a second process gets). The kernel releases it when the holder
//! exits, however it exits, so the lock of a dead process is simply taken over: a
//! file left behind with a dead PID in it is no lock. flock rather than a PID file
//! alone: no race between "is the PID alive" and "write mine", and no PID reuse
//! confusion. (std's `File::try_lock` would do, but needs Rust 1.89; the crate's
//! minimum is 1.88, so the call is in `sys`, next to the binary's other syscalls.)
//!
//! A released lock removes its file (while still holding the flock), so lock files do
//! not pile up; a process that was waiting on the removed file notices (the path no
//! longer names the file it locked) and opens the path afresh.
//!
//! Owns: lock file names and the held-by message. Must not: decide what is locked
//! (callers do).

use crate::error::usage;
use anyhow::{Context, Result};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Where lock files live (tmpfs: gone at reboot, like every holder).
pub const LOCK_DIR: &str = "/run/fwbench/locks";

/// A held lock; dropping it releases the lock.
#[derive(Debug)]
pub struct Lock {
    _file: File,
    path: PathBuf,
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Remove the file while holding it: whoever opens the path next makes a new one;
        // whoever waits on this one sees it is no longer the path's and retries.
        if names_file(&self.path, &self._file) {
            let _ = std::fs::remove_file(&self.path);
        }
        crate::sys::flock_release(&self._file);
    }
}

/// `path` still names the open file `file` (same device and inode).
fn names_file(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Who holds a lock file (the PID written in it), for messages.
fn holder(file: &mut File) -> String {
    let mut s = String::new();
    let _ = file.rewind().and_then(|_| file.read_to_string(&mut s));
    match s.trim() {
        "" => "another fwbench process".into(),
        pid => format!("fwbench PID {pid}"),
    }
}

fn open(dir: &Path, name: &str) -> Result<(File, PathBuf)> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // A testbed file may name its testbed anything: only a plain file name here.
    let safe: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    let path = dir.join(format!("{safe}.lock"));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("opening lock file {}", path.display()))?;
    Ok((file, path))
}

fn stamp(mut file: File, path: PathBuf) -> Result<Lock> {
    file.set_len(0)
        .and_then(|_| file.rewind())
        .and_then(|_| writeln!(file, "{}", std::process::id()))
        .and_then(|_| file.flush())
        .with_context(|| format!("writing lock file {}", path.display()))?;
    Ok(Lock { _file: file, path })
}

/// Take lock `name` in `dir`, or fail at once with bad input (exit 2): "`what` is in
/// use by fwbench PID N (…)".
pub fn try_lock_in(dir: &Path, name: &str, what: &str) -> Result<Lock> {
    loop {
        let (mut file, path) = open(dir, name)?;
        let got = crate::sys::flock_exclusive(&file, false)
            .with_context(|| format!("locking {}", path.display()))?;
        if !got {
            return Err(usage(format!(
                "{what} is in use by {} (lock {}); wait for it to finish or stop it",
                holder(&mut file),
                path.display()
            )));
        }
        if names_file(&path, &file) {
            return stamp(file, path);
        }
        // Released and removed between our open and our flock: open it again.
    }
}

/// Take lock `name` in `dir`, waiting for its holder to release it.
pub fn lock_in(dir: &Path, name: &str) -> Result<Lock> {
    loop {
        let (file, path) = open(dir, name)?;
        crate::sys::flock_exclusive(&file, true)
            .with_context(|| format!("locking {}", path.display()))?;
        if names_file(&path, &file) {
            return stamp(file, path);
        }
    }
}

/// [`try_lock_in`] under [`LOCK_DIR`].
pub fn try_lock(name: &str, what: &str) -> Result<Lock> {
    try_lock_in(Path::new(LOCK_DIR), name, what)
}

/// [`lock_in`] under [`LOCK_DIR`].
pub fn lock(name: &str) -> Result<Lock> {
    lock_in(Path::new(LOCK_DIR), name)
}

/// The lock of the testbed named `name`: one run (or one `testbed down`) at a time;
/// fails at once, exit 2, while another process holds it.
pub fn testbed(name: &str) -> Result<Lock> {
    try_lock(&format!("testbed-{name}"), &format!("testbed '{name}'"))
}

/// A lock name for a file (a results file): its device and inode, so every path
/// to it (links, `..`) names one lock.
pub fn file_key(path: &Path) -> Result<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).with_context(|| format!("{}", path.display()))?;
    Ok(format!("db-{}-{}", m.dev(), m.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_refuses_a_second_holder_and_names_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let first = try_lock_in(dir.path(), "testbed-x", "testbed 'x'").unwrap();
        // flock is per open file: a second open, even in this process, is refused.
        let e = try_lock_in(dir.path(), "testbed-x", "testbed 'x'").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("testbed 'x' is in use by fwbench PID")
                && msg.contains(&std::process::id().to_string()),
            "{msg}"
        );
        assert!(e.is::<crate::error::UsageError>());
        // Another name is another lock; any name makes a plain file name.
        let _other = try_lock_in(dir.path(), "testbed-y", "testbed 'y'").unwrap();
        let _odd = try_lock_in(dir.path(), "testbed-../a b/c", "testbed").unwrap();
        assert!(dir.path().join("testbed-.._a_b_c.lock").is_file());
        drop(first);
        // Released: its file is gone (lock files do not pile up).
        assert!(!dir.path().join("testbed-x.lock").exists());
        let _again = try_lock_in(dir.path(), "testbed-x", "testbed 'x'").unwrap();
        assert!(dir.path().join("testbed-x.lock").is_file());
    }

    /// A waiter on a lock whose file is removed at release takes the lock on the
    /// path's new file, never on the removed one: at most one holder at a time.
    #[test]
    fn waiters_on_a_removed_lock_file_never_hold_it_twice() {
        use std::sync::atomic::{AtomicU32, Ordering};
        use std::sync::Arc;
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let inside = Arc::new(AtomicU32::new(0));
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let (dir, inside) = (dir.clone(), inside.clone());
                std::thread::spawn(move || {
                    for _ in 0..30 {
                        let l = lock_in(dir.path(), "db-x").unwrap();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        inside.fetch_sub(1, Ordering::SeqCst);
                        drop(l);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn the_lock_file_of_a_dead_process_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        // A holder that died: its PID is in the file, but no flock is held.
        std::fs::write(dir.path().join("db-1-2.lock"), "999999999\n").unwrap();
        let _l = try_lock_in(dir.path(), "db-1-2", "run 1").unwrap();
        let text = std::fs::read_to_string(dir.path().join("db-1-2.lock")).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
    }

    #[test]
    fn a_lock_held_by_another_process_is_refused_and_freed_at_its_exit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tb.lock");
        // flock(1) holds the lock in our child process while its `sleep` runs (-o:
        // the sleep does not inherit the lock, so killing flock frees it).
        // flock(1) is util-linux, which scripts/setup.sh installs: missing is a failure.
        let mut child = std::process::Command::new("flock")
            .arg("-o")
            .arg(&path)
            .args(["sleep", "5"])
            .spawn()
            .expect("flock(1) (util-linux)");
        assert!(
            (0..100).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                try_lock_in(dir.path(), "tb", "testbed 'tb'").is_err()
            }),
            "the child's lock was never seen"
        );
        let _ = child.kill(); // our own child, by its handle
        let _ = child.wait();
        try_lock_in(dir.path(), "tb", "testbed 'tb'").unwrap();
    }
}
