//! The binary's error kinds and how they map to exit codes: 0 success, 1 a measurement
//! or system failure, 2 bad input (flags, scenario or testbed files), 130 interrupted.
//!
//! Errors travel as `anyhow::Error` with `.context()` at each boundary; the kinds that
//! decide an exit code are the two types here, found again with `downcast_ref`.

use std::process::ExitCode;

/// Bad input from the user: reported in one line, exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);
impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

/// Bad input as an `anyhow::Error` (exit code 2).
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// A results file that could not be opened: bad input (exit 2: not an fwbench file, a
/// newer schema, a path that cannot be a database), or — a full disk, an I/O error — a
/// system failure (exit 1).
pub fn store_error(e: store::StoreError) -> anyhow::Error {
    if e.is_system() {
        anyhow::Error::new(e)
    } else {
        usage(e.to_string())
    }
}

/// The trial was interrupted (Ctrl-C); nothing of it is stored. Exit code 130.
#[derive(Debug)]
pub struct Interrupted;
impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}
impl std::error::Error for Interrupted {}

/// Print the error once (its whole chain) and give the documented exit code.
pub fn exit_code(e: &anyhow::Error) -> ExitCode {
    if let Some(u) = e.downcast_ref::<UsageError>() {
        eprintln!("fwbench: {u}");
        return ExitCode::from(2);
    }
    if e.is::<Interrupted>() {
        eprintln!("fwbench: interrupted");
        return ExitCode::from(130);
    }
    eprintln!("fwbench: {e:#}");
    ExitCode::from(1)
}
