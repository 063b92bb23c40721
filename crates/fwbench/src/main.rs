//! fwbench — what does a packet filter cost the traffic that crosses it?
//!
//! The binary owns the CLI, scenario parsing into a typed plan, the controller, the
//! agent loop and the testbed builder. Measurement lives in `traffic`, storage in
//! `store`, the wire protocol in `proto`.
//!
//! Exit codes: 0 success, 1 a measurement or system failure, 2 bad input (flags,
//! scenario files), 130 interrupted by Ctrl-C (finished trials are kept).

mod agent;
mod check;
mod cli;
mod clock;
mod conn;
mod hostinfo;
mod launcher;
mod names;
mod output;
mod packet;
mod probe;
mod rules;
mod run;
mod scenario;
mod search;
mod sweetspot;
mod testbed;
mod trial;
mod workload;

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

pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

fn main() -> ExitCode {
    match cli::run() {
        Ok(code) => code,
        Err(e) => {
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("fwbench: {u}");
                return ExitCode::from(2);
            }
            if e.is::<trial::Interrupted>() {
                eprintln!("fwbench: interrupted");
                return ExitCode::from(130);
            }
            eprintln!("fwbench: {e:#}");
            ExitCode::from(1)
        }
    }
}
