//! fwbench's command line: parse, run, map the outcome to the documented exit codes
//! (0 ok, 1 measured failure, 2 usage or input error, 130 interrupted). Everything else
//! is the library (`lib.rs`).

use std::process::ExitCode;

fn main() -> ExitCode {
    match fwbench::cli::run() {
        Ok(code) => code,
        Err(e) => fwbench::error::exit_code(&e),
    }
}
