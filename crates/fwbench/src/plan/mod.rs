//! From what the user gave to typed trials: the axis registry and the builder of
//! `TrialParams` ([`axes`]); the one front door every caller builds a trial through —
//! cross-field checks, adaptive length, import paths, trial keys ([`build`]); the flag
//! groups the commands share on it ([`flags`]); and the scenario parser with its cross
//! product, order and baseline ([`scenario`]).

pub mod axes;
pub mod build;
pub mod flags;
pub mod scenario;
