//! fwbench's results as plain data: what a trial's status is, and the witness every
//! reported number carries — why it may be believed, or why not.
//!
//! Owns: [`Status`] (a trial's one-word state, as stored), the witness types
//! ([`witness::Figure`], [`witness::Doubt`], [`witness::Basis`], [`witness::LimitedBy`],
//! [`witness::Ci`]) and the rule that turns a trial's doubts into its status
//! ([`status::judge`]), and a trial as stored read back typed ([`stored::StoredTrial`],
//! [`stored::StoredParams`]), and the kinds of gateway update as the agent, the store and
//! the report name them ([`update::UpdateKind`], [`update::UpdateMethod`],
//! [`update::EventPlace`]). The crate sits below `store`, `report` and the binary, as
//! `fwmodel` does for the rule model: they all read the same types.
//!
//! Must not: measure, read clocks, touch files or hosts, or know any workload family's
//! parameters — a family's figures decide for themselves which doubts they carry.

pub mod status;
pub mod stored;
pub mod update;
pub mod witness;
pub mod workload;

pub use status::{judge, Status, StatusParseError};
pub use stored::{StepOf, StoredParams, StoredTrial};
pub use update::{EventPlace, MarkerFate, UpdateKind, UpdateMethod};
pub use witness::{Basis, Ci, Doubt, DoubtKind, Figure, LimitedBy};
pub use workload::StoredWorkload;

/// Text from a stored file as it may be shown: control characters (NUL, ESC, the rest of
/// C0 and C1, DEL; tabs and line breaks kept) escaped as `\u{1b}`, so a label can never
/// send escape sequences to a terminal or break a table.
pub fn shown(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' => c.to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(super::shown("a\u{1b}[31mred\0"), "a\\u{1b}[31mred\\u{0}");
        assert_eq!(super::shown("tab\there\nnext é"), "tab\there\nnext é");
        assert_eq!(super::shown("\u{9b}"), "\\u{9b}");
    }
}
