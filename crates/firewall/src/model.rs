//! The backend-neutral rule model: one description of a policy, rendered to every
//! engine, so engines are compared on the *same* policy.
//!
//! Owns nothing of its own: the types are plain data in `fwmodel` (so `proto` carries
//! them typed), re-exported here so `firewall::model::X` and `firewall::X` keep
//! naming them. Must not: import another module of this crate.

pub use fwmodel::model::*;
