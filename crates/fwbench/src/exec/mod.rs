//! Running one trial: the driver that starts the agents on the testbed, runs the
//! traffic phase and collects the results ([`trial`]), and the adaptive stop rule
//! ([`adaptive`]), and the live-interval schedule ([`live`]).

pub mod adaptive;
pub mod live;
pub mod trial;
