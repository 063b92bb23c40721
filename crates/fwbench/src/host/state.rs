//! fwbench's state directory on this host, `/run/fwbench` (a tmpfs: gone at reboot,
//! like everything its files list): the journal of host settings changed outside
//! fwbench's namespaces (the conntrack module's `SAVED`), the crash markers (the marker
//! module's `DIR`) and the locks ([`crate::lock::LOCK_DIR`]).
//!
//! Everything in it makes root undo or rewrite something, so it is root's alone: the
//! directory is made with mode 0700, an existing one must be a real directory owned by
//! this user (it is tightened to 0700), never a symlink; a file in it is read only if
//! it is a regular file of this user that no one else may write; files are written
//! atomically (a fresh file beside it, synced, renamed over).
//!
//! Scratch files (rulesets for a proof, ipsets for a check) go to [`temp_dir`]: a new
//! directory made by `mkdtemp` (mode 0700, a name no one can plant beforehand, never a
//! path followed through a symlink), removed when dropped; `$TMPDIR` is never created.
//!
//! What a command that touches the host does first is `host::at_start` (it restores
//! through the conntrack module, which builds on this one).
//!
//! Owns: the directory's checks, atomic writes, scratch directories. Must not: decide
//! what is journaled (conntrack and marker do).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The state directory.
pub const DIR: &str = "/run/fwbench";

/// Why the state directory, one of its files or a scratch directory could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A file-system call failed: what it was doing, and why.
    #[error("{doing}: {source}")]
    Io {
        doing: String,
        source: std::io::Error,
    },
    /// A symlink or a file where the directory goes.
    #[error(
        "{} is not a directory (a symlink or a file): fwbench keeps root's state there \
         and uses no other; remove it",
        .0.display()
    )]
    NotADirectory(PathBuf),
    /// Another user's directory.
    #[error(
        "{} belongs to uid {owner}, not to this user (uid {me}): fwbench keeps root's \
         state there and trusts no one else's; remove it",
        .path.display()
    )]
    OthersDirectory { path: PathBuf, owner: u32, me: u32 },
    /// A state file that is not a regular file of this user's that only it may write.
    #[error(
        "{}: not a file of uid {me} that only it may write (uid {owner}, mode {mode:o}); \
         not fwbench's, left alone",
        .path.display()
    )]
    NotOurs {
        path: PathBuf,
        me: u32,
        owner: u32,
        mode: u32,
    },
    /// Every temporary name beside a file taken.
    #[error("writing {}: no free temporary name beside it", .0.display())]
    NoTempName(PathBuf),
    /// `$TMPDIR` missing.
    #[error(
        "the temporary directory {} (TMPDIR) does not exist or is not a directory; \
         fwbench does not create it: set TMPDIR to an existing directory",
        .0.display()
    )]
    NoTmpDir(PathBuf),
}

/// A failed file-system call's error, `doing` what it was doing.
fn io(doing: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> StateError {
    move |source| StateError::Io {
        doing: doing.to_string(),
        source,
    }
}

/// Make `dir` a directory of this user's, mode 0700: created if missing (its parent
/// must exist), tightened if ours, refused if a symlink, not a directory, or another
/// user's.
pub fn secure_dir(dir: &Path) -> Result<(), StateError> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(format!("creating {}", dir.display()))(e)),
    }
    let m = std::fs::symlink_metadata(dir).map_err(io(dir.display()))?;
    if m.file_type().is_symlink() || !m.is_dir() {
        return Err(StateError::NotADirectory(dir.into()));
    }
    let me = crate::sys::euid();
    if m.uid() != me {
        return Err(StateError::OthersDirectory {
            path: dir.into(),
            owner: m.uid(),
            me,
        });
    }
    if m.mode() & 0o777 != 0o700 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io(format!("{}: chmod 0700", dir.display())))?;
    }
    Ok(())
}

/// `sub` under a [`secure_dir`] `DIR` (made 0700 too), or any other directory as it is
/// (tests' temp dirs).
pub fn prepare(sub: &Path) -> Result<(), StateError> {
    if sub.starts_with(DIR) {
        secure_dir(Path::new(DIR))?;
        let mut b = std::fs::DirBuilder::new();
        b.mode(0o700).recursive(true);
        b.create(sub)
            .map_err(io(format!("creating {}", sub.display())))?;
        return if sub == Path::new(DIR) {
            Ok(())
        } else {
            secure_dir(sub)
        };
    }
    std::fs::create_dir_all(sub).map_err(io(format!("creating {}", sub.display())))
}

/// Write `bytes` to `path` atomically: a new file beside it (mode 0600, never an
/// existing one), synced, renamed over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or("state".into(), |n| n.to_string_lossy());
    let err = |e| io(format!("writing {}", path.display()))(e);
    for n in 0..100u32 {
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        let mut f = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(err(e)),
        };
        let written = f.write_all(bytes).and_then(|_| f.sync_all());
        if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(err(e));
        }
        return Ok(());
    }
    Err(StateError::NoTempName(path.into()))
}

/// A state file's text, if it is there: `Err` when it is not a regular file of this
/// user's that no one else may write (then it is not fwbench's and is left alone).
pub fn read_owned(path: &Path) -> Result<Option<String>, StateError> {
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path.display())(e)),
    };
    let me = crate::sys::euid();
    if !m.file_type().is_file() || m.uid() != me || m.mode() & 0o022 != 0 {
        return Err(StateError::NotOurs {
            path: path.into(),
            me,
            owner: m.uid(),
            mode: m.mode() & 0o7777,
        });
    }
    std::fs::read_to_string(path)
        .map(Some)
        .map_err(io(path.display()))
}

/// A new private scratch directory `fwbench-TAG-XXXXXX` in `$TMPDIR` (else `/tmp`),
/// removed with everything in it when dropped. `$TMPDIR` must exist: it is never made.
pub fn temp_dir(tag: &str) -> Result<tempfile::TempDir, StateError> {
    let base = std::env::temp_dir();
    if !base.is_dir() {
        return Err(StateError::NoTmpDir(base));
    }
    // tempfile's directories are 0777 less the umask unless told: 0700 at creation.
    // The name carries this process's id, so the next start removes what a SIGKILL
    // left ([`remove_dead_scratch`]).
    tempfile::Builder::new()
        .prefix(&format!("fwbench-{tag}-{}-", std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(&base)
        .map_err(io(format!(
            "making a private directory in {}",
            base.display()
        )))
}

/// Remove the scratch directories (`fwbench-TAG-PID-XXXXXX` in `dir`) of fwbench
/// processes that are gone (killed before they could remove them): only directories of
/// this user, never followed through a symlink. What was removed, as messages.
pub fn remove_dead_scratch(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let me = crate::sys::euid();
    let mut done = vec![];
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = scratch_pid(&name) else {
            continue;
        };
        let path = e.path();
        let ours =
            std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir() && m.uid() == me);
        let gone = !Path::new(&format!("/proc/{pid}")).exists();
        if ours && gone && std::fs::remove_dir_all(&path).is_ok() {
            done.push(format!(
                "removed {}: scratch of fwbench pid {pid}, which is gone",
                path.display()
            ));
        }
    }
    done
}

/// The creator's pid of a scratch directory named `fwbench-TAG-PID-XXXXXX`.
fn scratch_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("fwbench-")?;
    let mut parts = rest.rsplitn(3, '-');
    let _random = parts.next().filter(|r| !r.is_empty())?;
    let pid = parts.next()?.parse().ok()?;
    parts.next().filter(|tag| !tag.is_empty())?;
    Some(pid)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_dead_processs_scratch_is_removed_a_live_ones_kept() {
        let base = tempfile::tempdir().unwrap();
        let dead = base.path().join("fwbench-proof-4194304-abc123");
        let live = base
            .path()
            .join(format!("fwbench-proof-{}-def456", std::process::id()));
        let other = base.path().join("fwbench-notours");
        for d in [&dead, &live, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("original.rules"), "x").unwrap();
        }
        let done = remove_dead_scratch(base.path());
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(!dead.exists() && live.exists() && other.exists());
        assert_eq!(scratch_pid("fwbench-advise-12-XyZ9aB"), Some(12));
        assert_eq!(scratch_pid("fwbench-12-XyZ9aB"), None);
        assert_eq!(scratch_pid("fwbench-sets-x-XyZ9aB"), None);
        // What temp_dir makes carries this process's id.
        let t = temp_dir("unit").unwrap();
        let n = t.path().file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(scratch_pid(&n), Some(std::process::id()));
    }

    use super::*;

    #[test]
    fn a_state_dir_is_made_private_and_a_planted_one_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("state");
        secure_dir(&d).unwrap();
        let mode = std::fs::metadata(&d).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // Ours but too open: tightened.
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        secure_dir(&d).unwrap();
        assert_eq!(std::fs::metadata(&d).unwrap().mode() & 0o777, 0o700);
        // A symlink (to a directory of ours, even) is refused, and not followed.
        let target = t.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(secure_dir(&link)
            .unwrap_err()
            .to_string()
            .contains("not a directory"));
        // Another user's directory.
        if crate::sys::euid() == 0 {
            let other = t.path().join("other");
            std::fs::create_dir(&other).unwrap();
            std::os::unix::fs::chown(&other, Some(65534), None).unwrap();
            assert!(secure_dir(&other)
                .unwrap_err()
                .to_string()
                .contains("uid 65534"));
        }
    }

    #[test]
    fn scratch_dirs_are_new_private_and_removed() {
        let d = temp_dir("test").unwrap();
        let p = d.path().to_path_buf();
        assert!(p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("fwbench-test-"));
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o700);
        let again = temp_dir("test").unwrap();
        assert_ne!(again.path(), p);
        drop(d);
        assert!(!p.exists());
    }

    #[test]
    fn state_files_are_written_whole_and_read_only_when_ours_alone() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("s.json");
        assert_eq!(read_owned(&f).unwrap(), None);
        write_atomic(&f, b"{\"a\":1}").unwrap();
        write_atomic(&f, b"{}").unwrap();
        assert_eq!(read_owned(&f).unwrap().as_deref(), Some("{}"));
        assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o777, 0o600);
        // No temporary file left beside it.
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 1);
        // Writable by others: not ours alone.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(read_owned(&f)
            .unwrap_err()
            .to_string()
            .contains("left alone"));
        // A symlink is never read through.
        let g = t.path().join("g.json");
        std::os::unix::fs::symlink(&f, &g).unwrap();
        assert!(read_owned(&g).is_err());
    }
}
