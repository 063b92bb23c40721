//! From a scenario file to a typed plan of trials: the axis registry ([`axes`]) and
//! the scenario parser with its cross product, order, baseline and trial keys
//! ([`scenario`]).

pub mod axes;
pub mod scenario;
