//! A trial's status: one word stored with it (`trials.status`), read back typed.
//!
//! The rule every family shares ([`judge`]): a trial that ran is `ok` only when none
//! of its figures carries a doubt; otherwise it is `flagged`, with the doubts as its
//! reason. A trial whose verdict check fails is therefore never `ok`.

use crate::witness::Doubt;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It ran and every figure's witness holds.
    Ok,
    /// It ran, but a figure's witness does not hold (its doubts say why): its figures
    /// are shown flagged and no finding is made from them.
    Flagged,
    /// It ran, but the user's imported ruleset dropped (some of) its traffic.
    Dropped,
    /// The testbed or kernel lacks what it needs.
    Unavailable,
    Failed,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Ok,
        Status::Flagged,
        Status::Dropped,
        Status::Unavailable,
        Status::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Flagged => "flagged",
            Status::Dropped => "dropped",
            Status::Unavailable => "unavailable",
            Status::Failed => "failed",
        }
    }

    /// The trial measured its traffic as designed (`ok`, or `flagged` with doubts over
    /// some figures): what a search reads a step's loss from.
    pub fn measured(self) -> bool {
        match self {
            Status::Ok | Status::Flagged => true,
            Status::Dropped | Status::Unavailable | Status::Failed => false,
        }
    }

    /// The trial ran to its end (its figures exist, whatever their witness).
    pub fn ran(self) -> bool {
        match self {
            Status::Ok | Status::Flagged | Status::Dropped => true,
            Status::Unavailable | Status::Failed => false,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored status word fwbench does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown trial status {0:?} (known: ok, flagged, dropped, unavailable, failed)")]
pub struct StatusParseError(pub String);

impl FromStr for Status {
    type Err = StatusParseError;
    fn from_str(s: &str) -> Result<Status, StatusParseError> {
        Status::ALL
            .into_iter()
            .find(|x| x.as_str() == s)
            .ok_or_else(|| StatusParseError(s.to_string()))
    }
}

/// The status of a trial that ended as `status` with these doubts over its figures,
/// and the reason to store beside it: `ok` with doubts becomes `flagged`, the reason
/// naming each doubt. Other statuses stand (a failed trial stays failed).
pub fn judge(status: Status, doubts: &[Doubt]) -> (Status, Option<String>) {
    match status {
        Status::Ok if !doubts.is_empty() => {
            let why = doubts
                .iter()
                .map(Doubt::to_string)
                .collect::<Vec<_>>()
                .join("; ");
            (Status::Flagged, Some(why))
        }
        Status::Ok | Status::Flagged | Status::Dropped | Status::Unavailable | Status::Failed => {
            (status, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::witness::DoubtKind;

    #[test]
    fn an_ok_trial_with_a_doubt_is_flagged_with_its_reason() {
        let d = [Doubt::new(
            DoubtKind::VerdictMismatch,
            "the rule counted 0 of 5000 packets",
        )];
        assert_eq!(
            judge(Status::Ok, &d),
            (
                Status::Flagged,
                Some("verdict mismatch: the rule counted 0 of 5000 packets".into())
            )
        );
        assert_eq!(judge(Status::Ok, &[]), (Status::Ok, None));
        assert_eq!(judge(Status::Failed, &d), (Status::Failed, None));
    }

    #[test]
    fn every_status_reads_back_from_its_stored_word() {
        for s in Status::ALL {
            assert_eq!(s.as_str().parse::<Status>(), Ok(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert!("OK".parse::<Status>().is_err());
        assert!(Status::Flagged.ran() && !Status::Failed.ran());
    }
}
