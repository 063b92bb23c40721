//! fwbench's results as plain data: what a trial's status is, and the witness every
//! reported number carries — why it may be believed, or why not.
//!
//! Owns: [`Status`] (a trial's one-word state, as stored), the witness types
//! ([`witness::Figure`], [`witness::Doubt`], [`witness::Basis`], [`witness::LimitedBy`],
//! [`witness::Ci`]) and the rule that turns a trial's doubts into its status
//! ([`status::judge`]), and a trial as stored read back typed ([`stored::StoredTrial`],
//! [`stored::StoredParams`]). The crate sits below `store`, `report` and the binary, as
//! `fwmodel` does for the rule model: they all read the same types.
//!
//! Must not: measure, read clocks, touch files or hosts, or know any workload family's
//! parameters — a family's figures decide for themselves which doubts they carry.

pub mod status;
pub mod stored;
pub mod witness;

pub use status::{judge, Status, StatusParseError};
pub use stored::{StoredParams, StoredTrial};
pub use witness::{Basis, Ci, Doubt, DoubtKind, Figure, LimitedBy};
