//! fwbench — what does a packet filter cost the traffic that crosses it?
//!
//! The binary owns the CLI, scenario parsing into a typed plan, the controller, the
//! agent loop and the testbed builder. Measurement lives in `traffic`, storage in
//! `store`, the wire protocol in `proto`, rules in `firewall`, analysis in `report`.
//! The module map, top to bottom (a module imports only modules below it), is in the
//! README's *Architecture* section.

// `cargo fuzz` builds this file as its `scenario` and `worklang` targets (see
// src/fuzzing.rs): libFuzzer provides `main` then.
#![cfg_attr(fuzzing, no_main)]
#![cfg_attr(fuzzing, allow(dead_code, unused_imports))]

mod agent;
mod cli;
mod clock;
mod error;
mod exec;
#[cfg(any(test, fuzzing))]
mod fuzzing;
mod host;
mod limits;
mod lock;
mod names;
mod nftload;
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

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::by_name(env!("CARGO_BIN_NAME"), data));

#[cfg(not(fuzzing))]
fn main() -> ExitCode {
    match cli::run() {
        Ok(code) => code,
        Err(e) => error::exit_code(&e),
    }
}
