//! What a report holds once loaded: the runs read from a store, each with its trials,
//! configurations, analysis and warnings. Types only; `load` (the crate root) fills
//! them and `html`/`export` write them out.

use crate::figure::Analysis;
use crate::model::Config;
use crate::model::Trial;
use store::{RunRow, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: run {run} does not exist (runs here: {known})")]
    NoSuchRun {
        path: std::path::PathBuf,
        run: i64,
        known: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Something a reader must not miss, tied to a run (and a trial when there is one).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Warning {
    pub run_id: i64,
    pub trial_id: Option<i64>,
    /// `failed`, `unavailable`, `validation`, `verdict`, `unstable`, `run-status`,
    /// `dirty-gateway` (the gateway did not start the trial clean),
    /// `sessions-failed` (connection sessions that failed), `cost-fit` (a cost line that
    /// does not describe its data), `corrupt` (received bytes
    /// that differ from the pattern: a data-integrity failure, shown first).
    pub kind: String,
    pub message: String,
}

/// One run with its trials, configurations, analysis and warnings.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub run: RunRow,
    /// Every trial of the run, in insertion order.
    pub trials: Vec<Trial>,
    pub configs: Vec<Config>,
    /// The baseline selector used (stored, or implied by seed 000's F values).
    pub baseline: Option<serde_json::Value>,
    pub analysis: Analysis,
    pub warnings: Vec<Warning>,
}

impl RunReport {
    /// How many of its trials are ok (the "N of M trials ok" of every output).
    pub fn ok_trials(&self) -> usize {
        self.trials
            .iter()
            .filter(|t| t.status == results::Status::Ok)
            .count()
    }
}

/// A report over one run or every run of a store.
#[derive(Debug, Clone)]
pub struct Report {
    /// The store's file name, for the page header.
    pub source: String,
    pub runs: Vec<RunReport>,
}
