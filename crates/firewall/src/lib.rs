//! Firewall engines and rule sets on the gateway.
//!
//! Owns: the backend-neutral rule model ([`model`]), the generators that build rule
//! sets for the studies' experiments ([`models`]), one renderer per engine
//! ([`render`]), import of a user's ruleset file ([`import`]), and the installer that
//! applies a rendered rule set atomically, verifies it, reads its counters back and
//! removes it ([`install`]).
//! Must not: touch any table, chain or set it did not create. Everything fwbench
//! creates is named `fwbench` / `FWBENCH-*` / `fwbench-*`.

pub mod import;
pub mod install;
pub mod model;
pub mod models;
pub mod render;

pub use model::*;
