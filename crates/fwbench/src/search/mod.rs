//! Searches made of trials: RFC 2544 throughput (NDR, or PDR with a loss threshold)
//! over the offered rate, seed 002's degradation point over the rule count, and seed
//! 003's parallelism sweet spot.
//!
//! Each search is a strategy over a workload: the pure state machines ([`bisect`],
//! [`sweetspot`]) are table-tested; the drivers run one step trial at a time through a
//! [`Runner`] that the caller provides (and that stores each step).
//!
//! Must not: know where trials run or how they are stored.

pub mod bisect;
pub mod degrade;
pub mod envelope;
pub mod latency;
pub mod load;
pub mod mlr;
pub mod mlr_search;
pub mod ndr;
pub mod sweetspot;
pub mod witness;

use crate::outcome::search::SearchSummary;
use crate::outcome::Outcome;
use crate::params::search::Search;
use crate::params::TrialParams;
use crate::search::degrade::degrade_search;
use crate::search::ndr::ndr_search;
use anyhow::{bail, Result};

/// Whether `p` runs as a search of stored step trials (ndr, degrade, sessions with
/// parallel auto) rather than as one trial.
pub fn is_search(p: &TrialParams) -> bool {
    p.search.is_some()
}

/// Runs one step trial (stored by the caller) and returns its outcome.
pub type Runner<'a> = dyn FnMut(&TrialParams) -> Result<Outcome> + 'a;

/// The step trials of a search: the search's kind, one trial each.
pub(crate) fn step_params(p: &TrialParams) -> TrialParams {
    let mut q = p.clone();
    q.search = None;
    q
}

/// A search as a scenario trial: run it with `run` for the steps.
pub fn run_search(p: &TrialParams, run: &mut Runner) -> Result<SearchSummary> {
    match &p.search {
        Some(Search::Ndr(sp)) => ndr_search(p, sp, run).map(SearchSummary::Ndr),
        Some(Search::Degrade(sp)) => degrade_search(p, sp, run).map(SearchSummary::Degrade),
        Some(Search::Mlr(sp)) => {
            crate::search::mlr_search::mlr_search(p, sp, run).map(SearchSummary::Mlr)
        }
        Some(Search::Envelope(sp)) => {
            crate::search::envelope::envelope_search(p, sp, run).map(SearchSummary::Envelope)
        }
        Some(Search::SweetSpot) => {
            crate::search::sweetspot::search(p, run).map(SearchSummary::SweetSpot)
        }
        None => bail!("{} is not a search", p.name()),
    }
}

/// The one doubt a test expects of a search's result (its count checked, the doubts
/// shown where it is off).
#[cfg(test)]
pub fn only_doubt(doubts: &[results::Doubt]) -> &results::Doubt {
    assert_eq!(doubts.len(), 1, "{doubts:?}");
    &doubts[0]
}
