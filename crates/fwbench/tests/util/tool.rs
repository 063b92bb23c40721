// Running the system's tools (`ip`, `nft`, …) from tests: shared by the test crates of
// the workspace that drive them (each includes this file with `#[path]`, as skip.rs).

use std::process::{Command, Output};

/// Run `argv` (a program and its arguments); panics with the command and its stderr
/// unless it succeeds. Its output.
pub fn run_ok(argv: &[&str]) -> Output {
    let (prog, args) = argv.split_first().expect("a program to run");
    let o = Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {argv:?}: {e}"));
    assert!(
        o.status.success(),
        "{argv:?} failed ({}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr).trim()
    );
    o
}
