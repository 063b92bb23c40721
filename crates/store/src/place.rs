//! Where recovery files may live, and how they are opened (issue 38 point 1).
//!
//! Owns: the fallback directory (`FWBENCH_RECOVERY_DIR`, else root's
//! `/var/lib/fwbench/recovery`, else the user's `$XDG_STATE_HOME/fwbench/recovery`),
//! made 0700 and checked before every use (a directory, not a symbolic link, owned by
//! this user, writable by no one else), and the opening of a recovery file: never
//! through a symbolic link (`O_NOFOLLOW`), created only new (`O_EXCL`, 0600), and an
//! existing one used only if it is a regular file of this user's with one link and
//! writable by no one else.
//! Must not: read or write a file's contents (that is `recovery`'s), or fall back to a
//! place anyone else can write to (the old `/var/tmp/fwbench-recovery`).

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Root's fallback directory for recovery files.
pub const ROOT_DIR: &str = "/var/lib/fwbench/recovery";

/// The effective user id of this process (the owner every recovery place must have).
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid(2) takes nothing, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() }
}

/// The fallback directory of this process, if it has one: `FWBENCH_RECOVERY_DIR`,
/// else [`ROOT_DIR`] for root, else `$XDG_STATE_HOME/fwbench/recovery` (by default
/// `~/.local/state/fwbench/recovery`); `None` without a home.
pub(crate) fn fallback_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(d) = var("FWBENCH_RECOVERY_DIR") {
        return Some(PathBuf::from(d));
    }
    if euid() == 0 {
        return Some(PathBuf::from(ROOT_DIR));
    }
    let state = var("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| Path::new(&h).join(".local/state")))?;
    Some(state.join("fwbench/recovery"))
}

/// Why a place may not hold recovery files, or could not be used (its text is the
/// one-line reason fwbench prints).
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("{}: a symbolic link (never followed)", .path.display())]
    Symlink { path: PathBuf },
    #[error("{}: not a {want}", .path.display())]
    Kind { path: PathBuf, want: &'static str },
    #[error("{}: the {what} is owned by uid {owner}, not by this user (uid {me})", .path.display())]
    Owner {
        path: PathBuf,
        what: &'static str,
        owner: u32,
        me: u32,
    },
    #[error("{}: the {what} is writable by others (mode {mode:o})", .path.display())]
    Writable {
        path: PathBuf,
        what: &'static str,
        mode: u32,
    },
    #[error("{}: the file has {links} hard links", .path.display())]
    Links { path: PathBuf, links: u64 },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Reasons in one line, `; `-separated.
pub(crate) fn said(reasons: &[Refused]) -> String {
    let text: Vec<String> = reasons.iter().map(ToString::to_string).collect();
    text.join("; ")
}

/// An I/O error on `path`, a symbolic link said as such (`open` gives ELOOP for one
/// under `O_NOFOLLOW`).
fn io_at(path: &Path) -> impl Fn(io::Error) -> Refused + '_ {
    move |source| {
        let path = path.to_path_buf();
        if source.raw_os_error() == Some(libc::ELOOP) {
            Refused::Symlink { path }
        } else {
            Refused::Io { path, source }
        }
    }
}

/// Why `meta` (of `path`, the `what`) may not hold recovery files: anything but a
/// place of this user's that no one else can write to.
fn private(meta: &Metadata, path: &Path, what: &'static str) -> Result<(), Refused> {
    let (me, path) = (euid(), path.to_path_buf());
    if meta.uid() != me {
        return Err(Refused::Owner {
            path,
            what,
            owner: meta.uid(),
            me,
        });
    }
    if meta.mode() & 0o022 != 0 {
        return Err(Refused::Writable {
            path,
            what,
            mode: meta.mode() & 0o7777,
        });
    }
    Ok(())
}

/// Check directory `dir` for holding recovery files (it exists): a directory, not a
/// symbolic link, this user's, writable by no one else.
pub(crate) fn check_dir(dir: &Path) -> Result<(), Refused> {
    let meta = std::fs::symlink_metadata(dir).map_err(io_at(dir))?;
    if meta.file_type().is_symlink() {
        return Err(Refused::Symlink { path: dir.into() });
    }
    if !meta.is_dir() {
        return Err(Refused::Kind {
            path: dir.into(),
            want: "directory",
        });
    }
    private(&meta, dir, "directory")
}

/// Make the fallback directory `dir` if it is missing (0700; its parents as the
/// system makes them), then [`check_dir`] it.
pub(crate) fn make_dir(dir: &Path) -> Result<(), Refused> {
    if std::fs::symlink_metadata(dir).is_err() {
        if let Some(parent) = dir.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_at(dir)(e)),
        }
    }
    check_dir(dir)
}

/// Check an opened recovery file: a regular file of this user's, one link, writable
/// by no one else (a hard link to another file, a file someone else made or can
/// change, is not ours to read or append to).
fn check_file(f: &File, path: &Path) -> Result<(), Refused> {
    let meta = f.metadata().map_err(io_at(path))?;
    if !meta.is_file() {
        return Err(Refused::Kind {
            path: path.into(),
            want: "regular file",
        });
    }
    if meta.nlink() != 1 {
        return Err(Refused::Links {
            path: path.into(),
            links: meta.nlink(),
        });
    }
    private(&meta, path, "file")
}

/// The flags of every open: no symbolic link followed, no wait on a FIFO.
const FLAGS: i32 = libc::O_NOFOLLOW | libc::O_NONBLOCK;

/// Open recovery file `path` for appending: created new (0600, `O_EXCL`), or an
/// existing one that passes [`check_file`]; never through a symbolic link.
pub(crate) fn open_append(path: &Path) -> Result<File, Refused> {
    let mut new = OpenOptions::new();
    new.append(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(FLAGS);
    match new.open(path) {
        Ok(f) => return Ok(f),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_at(path)(e)),
    }
    let f = OpenOptions::new()
        .append(true)
        .custom_flags(FLAGS)
        .open(path)
        .map_err(io_at(path))?;
    check_file(&f, path)?;
    Ok(f)
}

/// Open recovery file `path` for reading: `Ok(None)` if there is none, `Err` for a
/// symbolic link or a file that is not one of this user's private files.
pub(crate) fn open_read(path: &Path) -> Result<Option<File>, Refused> {
    let f = match OpenOptions::new().read(true).custom_flags(FLAGS).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_at(path)(e)),
    };
    check_file(&f, path)?;
    Ok(Some(f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A symbolic link is never opened, for reading or appending, and what it points
    /// at is left as it was.
    #[test]
    fn a_symbolic_link_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "precious\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("r.db.recovery.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = open_append(&link).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = open_read(&link).unwrap_err();
        assert!(matches!(e, Refused::Symlink { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
    }

    /// A new file is made 0600; a hard link or a file others can write is refused.
    #[test]
    fn only_private_files_with_one_link_are_used() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        drop(open_append(&p).unwrap());
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(open_read(&p).unwrap().is_some());
        assert!(open_read(&dir.path().join("none")).unwrap().is_none());
        std::fs::hard_link(&p, dir.path().join("b")).unwrap();
        let e = open_append(&p).unwrap_err().to_string();
        assert!(e.contains("2 hard links"), "{e}");
        std::fs::remove_file(dir.path().join("b")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o622)).unwrap();
        let e = open_read(&p).unwrap_err().to_string();
        assert!(
            e.contains("the file is writable by others (mode 622)"),
            "{e}"
        );
    }

    /// The fallback directory is made 0700; one that is a symbolic link, or writable
    /// by others, is refused.
    #[test]
    fn the_fallback_directory_is_private_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("state/fwbench/recovery");
        make_dir(&d).unwrap();
        let mode = std::fs::metadata(&d).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = make_dir(&d).unwrap_err().to_string();
        assert!(
            e.contains("the directory is writable by others (mode 777)"),
            "{e}"
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&d, &link).unwrap();
        let e = check_dir(&link).unwrap_err();
        assert!(matches!(e, Refused::Symlink { .. }), "{e}");
    }
}
