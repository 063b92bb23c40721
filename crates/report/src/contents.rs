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

    /// The run's one summary line: its trials ok and, when any, its unstable
    /// configurations beside them — "120 trials ok; 30 of 40 configurations unstable
    /// (CV > 5 %) — their CIs are wide" — so that "all ok" is never said alone of a noisy
    /// run (issue 37); "118 of 120 trials ok; …" when some were not, and "120 of 120
    /// trials ok" alone when none is unstable.
    pub fn trials_summary(&self) -> String {
        let (ok, all) = (self.ok_trials(), self.trials.len());
        let trials = format!("{ok} of {all} trials ok");
        // Configurations with a main metric measured, and those whose CV of it over
        // their repetitions is above the limit (as the `unstable` check reads it).
        let cvs: Vec<Option<f64>> = self
            .configs
            .iter()
            .filter(|c| !c.reps.is_empty())
            .filter_map(|c| {
                let (m, _) = crate::model::main_metric(c)?;
                Some(c.metrics.get(m).and_then(|s| s.cv()))
            })
            .collect();
        let unstable = cvs
            .iter()
            .filter(|cv| cv.is_some_and(|v| v > crate::UNSTABLE_CV))
            .count();
        if unstable == 0 {
            return trials;
        }
        // "120 trials ok" beside them: "120 of 120" reads as all being well.
        let trials = if ok == all {
            format!("{ok} trials ok")
        } else {
            trials
        };
        format!(
            "{trials}; {unstable} of {} configurations unstable (CV > {:.0} %) — their CIs \
             are wide",
            cvs.len(),
            crate::UNSTABLE_CV * 100.0
        )
    }
}

/// A report over one run or every run of a store.
#[derive(Debug, Clone)]
pub struct Report {
    /// The store's file name, for the page header.
    pub source: String,
    pub runs: Vec<RunReport>,
}
