//! fwbench — what does a packet filter cost the traffic that crosses it?
//!
//! The controller as a library: scenario parsing into a typed plan, the trial driver,
//! searches, testbeds, workloads and the agent loop. `main.rs` is the command line
//! alone (it calls [`cli::run`]); integration tests and benches can drive trials
//! in-process through these modules. Measurement lives in `traffic`, storage in
//! `store`, the wire protocol in `proto`, rules in `firewall`, analysis in `report`.
//! The module map, top to bottom (a module imports only modules below it), is in the
//! README's *Architecture* section.

pub mod agent;
pub mod cli;
pub mod clock;
pub mod error;
pub mod exec;
pub mod fuzzing;
pub mod host;
pub mod limited_by;
pub mod limits;
pub mod lock;
pub mod nftload;
pub mod outcome;
pub mod output;
pub mod params;
pub mod plan;
pub mod process;
pub mod rules;
pub mod run;
pub mod search;
pub mod sys;
pub mod testbed;
pub mod textpos;
pub mod version;
pub mod worklang;
pub mod workloads;
