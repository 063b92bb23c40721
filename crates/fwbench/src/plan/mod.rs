//! From what the user gave to typed trials: the axis registry and the one builder of
//! `TrialParams` ([`axes`]), the flag groups the commands share on it ([`flags`]), and
//! the scenario parser with its cross product, order, baseline and trial keys
//! ([`scenario`]).

pub mod axes;
pub mod flags;
pub mod scenario;
