//! Where an external program is installed: the one PATH lookup of the workspace.
//!
//! Owns: the search order (PATH, then the sbin dirs that root's tools live in but a
//! user's PATH often lacks). Must not: run anything — it only looks at the file system.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Searched after PATH (nginx, nft, iptables and ip live in sbin, often not on PATH).
pub const SBIN_DIRS: [&str; 3] = ["/usr/local/sbin", "/usr/sbin", "/sbin"];

/// The executable file `name` names: itself if it contains a `/`, else the first
/// match in PATH's directories (empty entries skipped), then in [`SBIN_DIRS`].
pub fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name)).filter(|p| is_executable(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|d| !d.as_os_str().is_empty())
        .chain(SBIN_DIRS.iter().map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_and_not_nonsense() {
        assert!(find_program("sh").is_some());
        assert_eq!(
            find_program("/bin/sh").as_deref(),
            Some(Path::new("/bin/sh"))
        );
        assert!(find_program("fwb-no-such-program").is_none());
        assert!(find_program("/nonexistent/fwb").is_none());
        // A directory is no program.
        assert!(find_program("/usr").is_none());
    }
}
