//! fwbench — what does a packet filter cost the traffic that crosses it?
//!
//! The binary owns the CLI, scenario parsing into a typed plan, the controller, the
//! agent loop and the testbed builder. Measurement lives in `traffic`, storage in
//! `store`, the wire protocol in `proto`, rules in `firewall`, analysis in `report`.
//! The module map, top to bottom (a module imports only modules below it), is in the
//! README's *Architecture* section.

mod agent;
mod cli;
mod clock;
mod error;
mod exec;
mod host;
mod names;
mod outcome;
mod output;
mod params;
mod plan;
mod process;
mod rules;
mod run;
mod search;
mod sys;
mod testbed;
mod textpos;
mod version;
mod worklang;
mod workloads;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run() {
        Ok(code) => code,
        Err(e) => error::exit_code(&e),
    }
}
