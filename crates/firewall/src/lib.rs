//! Firewall engines and rule sets on the gateway.
//!
//! Owns: the backend-neutral rule model ([`model`]), the generators that build rule
//! sets for the studies' experiments ([`models`]), import of a user's ruleset file
//! ([`import`]), one backend per engine behind one trait and registry ([`engine`]),
//! rendering ([`render`]), the installer that applies a rendered rule set atomically,
//! verifies it, reads its counters back and removes it ([`install`]), rendering a
//! request ([`request`]) and building the report ([`report`]). The plain data (rule
//! model, engines, request, report) lives in `fwmodel`, re-exported here.
//! Must not: touch any table, chain or set it did not create. Everything fwbench
//! creates is named `fwbench` / `FWBENCH-*` / `fwbench-*`.
//!
//! Layers, top to bottom (a module imports only modules below it):
//! `request`, `report` → `update`, `install` → `render` → `engine` → `plan`,
//! `change`, `rendered`, `tool` → `advise` → `models`, `import` → `model`. `advise`
//! (rewrites of an imported ruleset, proven on probes) is pure analysis.

pub mod advise;
pub mod change;
pub mod engine;
pub mod import;
pub mod install;
pub mod model;
pub mod models;
mod plan;
pub mod render;
mod rendered;
pub mod report;
pub mod request;
pub mod tool;
pub mod update;

pub use model::*;
pub use report::Report;
pub use request::Request;
