//! Other programs: whether one is installed.

//! The controller's run loop: plan → trials → store, with progress, ETA and a clean
//! stop on Ctrl-C (the running trial is abandoned, finished ones are kept).

use std::path::Path;

/// A program name resolves: a path to a file, or a file in one of PATH's directories.
pub fn program_exists(prog: &str) -> bool {
    if prog.contains('/') {
        return Path::new(prog).is_file();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .any(|d| d.join(prog).is_file())
}
