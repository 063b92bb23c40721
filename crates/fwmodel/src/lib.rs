//! fwbench's rule model as plain data: what both the controller and the gateway agent
//! (and the wire between them, `proto`) need to name a rule set, ask for it and report
//! on it.
//!
//! Owns: the engines ([`Engine`] with its names and [`EngineKind`], the
//! [`EffectiveEngine`] a trial records), the backend-neutral rule model ([`model`]),
//! the named models' parameters ([`models`]), the rule [`Request`] and the gateway's
//! [`Report`] — their serde shapes are the wire's, the results files' and (engine,
//! model, position, chain, nft family) part of the trial keys.
//! Must not: do I/O, run programs, or depend on another crate of the workspace
//! (`proto` and `firewall` depend on it; `firewall` re-exports every type here).
//!
//! Layers, top to bottom: `request`, `report` → `models` → `model`.

pub mod model;
pub mod models;
pub mod report;
pub mod request;

pub use model::*;
pub use report::{Dropped, Report, RuleHit, Settings, Verdicts};
pub use request::Request;
