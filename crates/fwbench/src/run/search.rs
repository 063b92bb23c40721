//! `fwbench ndr | degrade | sessions --parallel auto` from the command line: a session
//! of stored step trials, then the search's report.

use crate::outcome::search::SearchSummary;
use crate::output::search::search_text;
use crate::params::{Placement, TrialParams};
use crate::run::session::Session;
use crate::search::degrade::degrade_search;
use crate::search::ndr::ndr_search;
use crate::search::Runner;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

/// Where the search's trials run.
pub struct Env {
    pub topology_given: bool,
    pub pin: Placement,
    pub testbed: Option<String>,
    pub db: Option<PathBuf>,
    /// The run's labels (`--tag`, validated).
    pub tags: Vec<(String, String)>,
    pub json: bool,
}

/// `fwbench sessions --parallel auto`.
pub fn run_sweet_spot(p: TrialParams, env: &Env) -> Result<ExitCode> {
    cli_search(p.name(), p, env, |p, run| {
        crate::search::sweetspot::search(p, run).map(SearchSummary::SweetSpot)
    })
}

/// Run a search from the command line: a session of stored trials, then the report.
fn cli_search(
    name: &str,
    mut p: TrialParams,
    env: &Env,
    search: impl FnOnce(&TrialParams, &mut Runner) -> Result<SearchSummary>,
) -> Result<ExitCode> {
    let mut s = Session::open(
        name,
        &mut p,
        env.topology_given,
        env.pin.clone(),
        env.testbed.as_deref(),
        env.db.as_deref().map(|db| crate::run::session::StoreAt {
            db,
            tags: &env.tags,
        }),
    )?;
    let started_at = crate::clock::now_utc();
    // An envelope's `--load`: the capacity found once, its floods stored as steps of the
    // session, and every step's background at the share of it (`search::load`).
    let p = crate::search::load::with_load(&p, &mut |q| s.step(q, results::StepOf::Capacity))?;
    let r = search(&p, &mut |q: &TrialParams| {
        s.step(q, results::StepOf::Search)
    })?;
    // The answer is stored too, after its steps (flagged with its doubts when it did
    // not converge), as a scenario stores its searches.
    let mut o = crate::outcome::Outcome::started(started_at).with_search(r.clone());
    o.finished_at = crate::clock::now_utc();
    s.store(&p, &o);
    let not_stored = s.take_not_stored();
    s.finish("complete")?;
    drop(s);
    if env.json {
        let v = crate::output::trial_json(&p, &o);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", search_text(&p, &r));
    }
    // A trial kept in a recovery file instead of the store: said after the results.
    if let Some(e) = not_stored {
        return Err(e);
    }
    // Not converged: flagged with its reason (`Outcome::with_search`), and exit 1.
    Ok(if r.converged() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `fwbench ndr`.
pub fn run_ndr(p: TrialParams, env: &Env) -> Result<ExitCode> {
    let sp = p.search_params().cloned().unwrap_or_default();
    let mode = if sp.loss == 0.0 { "ndr" } else { "pdr" };
    cli_search(mode, p, env, |p, run| {
        ndr_search(p, &sp, run).map(SearchSummary::Ndr)
    })
}

/// `fwbench degrade`.
pub fn run_degrade(p: TrialParams, env: &Env) -> Result<ExitCode> {
    let sp = p.search_params().cloned().unwrap_or_default();
    cli_search("degrade", p, env, |p, run| {
        degrade_search(p, &sp, run).map(SearchSummary::Degrade)
    })
}

/// `fwbench mlr`.
pub fn run_mlr(p: TrialParams, env: &Env) -> Result<ExitCode> {
    let sp = p.search_params().cloned().unwrap_or_default();
    cli_search("mlr", p, env, |p, run| {
        crate::search::mlr_search::mlr_search(p, &sp, run).map(SearchSummary::Mlr)
    })
}

/// `fwbench envelope`.
pub fn run_envelope(p: TrialParams, env: &Env) -> Result<ExitCode> {
    let sp = p.search_params().cloned().unwrap_or_default();
    cli_search("envelope", p, env, |p, run| {
        crate::search::envelope::envelope_search(p, &sp, run).map(SearchSummary::Envelope)
    })
}
