//! `fwbench run [SCENARIO]`: plan → trials → store, with progress, ETA and a clean
//! stop on Ctrl-C (the running trial is abandoned, finished ones are kept); resume.

use crate::error::usage;
use crate::error::Interrupted;
use crate::outcome::{Outcome, Status};
use crate::output;
use crate::params::search::Search;
use crate::params::{Pinning, TrialParams};
use crate::plan::scenario::{self, Plan, PlannedTrial};
use crate::run::record::{record, record_step};
use crate::run::session::begin;
use crate::run::session::fresh_seed;
use crate::run::session::install_interrupt_handler;
use crate::run::session::preflight;
use crate::run::session::require_root;
use crate::run::session::Testbeds;
use crate::run::session::INTERRUPTED;
use anyhow::{Context, Result};
use clap::Args;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;
use store::Store;

/// The experiment `fwbench run` runs without arguments.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../../scenarios/default.toml");

/// Rough wall time of one trial: its duration plus agent and setup overhead (measured
/// here: ~0.1 s, plus ~1 ms per client) and its rules (the engine's cost per rule,
/// `Engine::per_rule_s`, measured on seeds 001 and 002); SCTP trials end before any agent starts where
/// SCTP is missing. On an `ephemeral` testbed a trial on legacy xtables is followed by a
/// new testbed (a legacy table, once instantiated, stays: `run::session`).
fn estimate_s(p: &TrialParams, warmup_s: Option<f64>, ephemeral: bool) -> f64 {
    let one = estimate_one(p);
    let rebuilt = if ephemeral && p.engine.legacy_xtables() && one > SKIPPED_S {
        TESTBED_REBUILD_S
    } else {
        0.0
    };
    one + rebuilt + warmup_s.map(|w| w + 0.1).unwrap_or(0.0)
}

/// A trial this kernel cannot run (SCTP missing): refused before any agent starts.
const SKIPPED_S: f64 = 0.05;

/// A local testbed torn down and set up again between two trials, measured here:
/// seed 000's 3 024 trials on iptables-legacy took 0.6 s each beyond their estimate.
const TESTBED_REBUILD_S: f64 = 0.6;

fn estimate_one(p: &TrialParams) -> f64 {
    use std::sync::OnceLock;
    static NO_SCTP: OnceLock<bool> = OnceLock::new();
    if p.proto == proto::Proto::Sctp && *NO_SCTP.get_or_init(traffic::sys::sctp_unavailable) {
        return SKIPPED_S;
    }
    let rules = p.rules as f64 * p.engine.per_rule_s();
    let one = match crate::workloads::traffic(&p.kind).wall_s(p) {
        Some(work) => work + rules,
        None => p.duration_s + 0.1 + p.clients as f64 * 0.001 + rules,
    };
    match &p.search {
        None => one,
        Some(Search::SweetSpot) => one * 9.0, // about 9 steps
        // A binary search to 2 % takes about 7 steps plus the probe and confirmation.
        Some(Search::Ndr(sp)) => one * (sp.max_trials as f64).min(9.0),
        // MLRsearch: about 4 final-duration trials per goal and short ones before them.
        Some(Search::Mlr(sp)) => one * 4.0 * sp.goals.len().max(1) as f64 + 20.0,
        Some(Search::Degrade(sp)) => {
            let steps = 3.0
                + (sp.max_rules as f64 / sp.resolution.max(1) as f64)
                    .log2()
                    .ceil();
            // Rules vary from 0 to max_rules: count half of them per step.
            (one - rules / 2.0) * steps.max(1.0)
        }
        // Bisection to 10 % over a range of 200×: about 8 steps and a confirmation.
        Some(Search::Envelope(sp)) => one * (sp.max_trials as f64).min(9.0),
    }
}

/// Rough wall time of the capacity searches `event_load` runs for `trials` (one per
/// configuration flooding the same, [`crate::search::load::search_key`]; none for a
/// capacity stated, or one `searched` already): each up to `load::MAX_TRIALS` steps of
/// `load::STEP_S` plus its probe, confirmation and re-tests, each step installing the
/// rule set as a trial does. (The enforcement preset at 100 000 rules: 2 min 17 s said
/// for 5 trials that took 16 min, before this was counted.)
fn load_searches_s<'a>(
    trials: impl Iterator<Item = &'a TrialParams>,
    searched: &std::collections::HashSet<String>,
) -> f64 {
    use crate::search::load;
    let mut seen = std::collections::HashSet::new();
    trials
        .filter(|p| load::searches(p))
        .map(load::search_key)
        .filter(|q| {
            let key = scenario::trial_key(q, 0);
            !searched.contains(&key) && seen.insert(key)
        })
        .map(|mut q| {
            q.duration_s = load::STEP_S;
            estimate_one(&q) * (load::MAX_TRIALS as f64 + 4.0)
        })
        .sum()
}

/// `[######··············]`: trials done out of `n`, 20 cells.
fn bar(done: usize, n: usize) -> String {
    let full = (done * 20).checked_div(n).unwrap_or(0);
    format!("[{}{}]", "#".repeat(full), "·".repeat(20 - full))
}

fn fmt_eta(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// After a run: its HTML report, if asked for (or the default experiment).
fn report_after_run(store: &Store, run_id: i64, path: &Path, json: bool) -> Result<()> {
    let r = report::load(store, Some(run_id))?;
    std::fs::write(path, r.html()).with_context(|| format!("writing {}", path.display()))?;
    if json {
        eprintln!("Report: {}", path.display());
    } else {
        println!("Report: {}", path.display());
    }
    Ok(())
}

/// Where the report after a run goes: `--report`, or `report.html` for the default
/// experiment.
fn report_path(args: &RunArgs) -> Option<PathBuf> {
    args.report
        .clone()
        .or_else(|| args.scenario.is_none().then(|| "report.html".into()))
}

/// A scenario that leaves the topology open runs on a named testbed's topology.
fn apply_testbed_topology(plan: &mut Plan, testbeds: &Testbeds) -> Result<()> {
    if let (Some(tb), false) = (&testbeds.named, plan.topology_given) {
        plan.use_topology(tb.topology()).map_err(usage)?;
    }
    Ok(())
}

/// A run stops after this many failed trials in a row: something is broken, and
/// thousands of identical failures help no one.
const MAX_FAILED_IN_A_ROW: usize = 10;

/// `fwbench run [SCENARIO]`.
pub fn run_scenario(args: &RunArgs) -> Result<ExitCode> {
    if args.list_axes {
        print!("{}", crate::output::axes_table());
        return Ok(ExitCode::SUCCESS);
    }
    // Bad labels are bad input before anything runs.
    args.tags.tags()?;
    let (file, text) = scenario_text(args)?;
    let mut plan: Plan = scenario::parse(&file, &text, fresh_seed()).map_err(usage)?;
    if let Some(r) = report_path(args) {
        crate::run::report::refuse_same_file(&args.db, &r, "--report")?;
    }
    let testbed_name = args.testbed.clone().or(plan.testbed.clone());
    if args.dry_run {
        return dry_run(&plan, testbed_name.as_deref());
    }
    require_root()?;
    let mut testbeds = Testbeds::new(testbed_name.as_deref())?;
    // The estimates count a new testbed after each trial on legacy tables (named local
    // testbeds are rebuilt too, but not counted: they run few such trials).
    let ephemeral = testbeds.named.is_none();
    apply_testbed_topology(&mut plan, &testbeds)?;
    for t in &plan.trials {
        testbeds.check(&t.params)?;
    }
    let params: Vec<TrialParams> = plan.trials.iter().map(|t| t.params.clone()).collect();
    preflight(&params)?;
    let mut store = Store::open(&args.db).map_err(crate::error::store_error)?;
    crate::run::recovery::say_recovered(&store);
    install_interrupt_handler();
    let source = (file.as_str(), text.as_str());
    let (run_id, _run_lock) = open_run(args, &store, source, &mut plan, &testbeds)?;
    crate::run::session::record_role_hosts(&store, run_id, &testbeds)?;
    eprintln!(
        "fwbench: {} — {} trials, about {}, results → {} (run {run_id}, seed {})",
        plan.name,
        plan.trials.len(),
        fmt_eta(
            plan.trials
                .iter()
                .map(|t| estimate_s(&t.params, plan.warmup_s, ephemeral))
                .sum()
        ),
        args.db.display(),
        plan.seed
    );
    let local = crate::run::session::local_testbed(testbed_name.as_deref());
    let ran = run_trials(
        args,
        &plan,
        &mut testbeds,
        (&mut store, run_id),
        ephemeral,
        local,
    )?;
    drop(testbeds);
    end_run(args, &store, &plan, run_id, &ran)
}

/// The scenario's name for messages and its text: the file given, or the default
/// experiment.
fn scenario_text(args: &RunArgs) -> Result<(String, String)> {
    Ok(match &args.scenario {
        Some(p) => {
            let text = crate::limits::read_user_file(p, "scenario").map_err(usage)?;
            (p.display().to_string(), text)
        }
        None => (
            "(default scenario)".to_string(),
            DEFAULT_SCENARIO.to_string(),
        ),
    })
}

/// `--dry-run`: the trials checked against the testbed and listed with their
/// estimates; nothing runs.
fn dry_run(plan: &Plan, testbed_name: Option<&str>) -> Result<ExitCode> {
    let params: Vec<TrialParams> = plan.trials.iter().map(|t| t.params.clone()).collect();
    crate::run::session::dry_check(testbed_name, &params)?;
    let searches = load_searches_s(params.iter(), &Default::default());
    print!(
        "{}",
        output::plan_listing(
            plan,
            |p| estimate_s(p, plan.warmup_s, testbed_name.is_none()),
            searches
        )
    );
    Ok(ExitCode::SUCCESS)
}

/// The run the trials are stored in, and its lock (held until the run ends): the newest
/// unfinished run of this very scenario text (`source`: file name and text), resumed
/// with its seed so every trial keeps its key — finished trials are dropped from
/// `plan`, failed ones run again — or a new one (`--fresh`).
fn open_run(
    args: &RunArgs,
    store: &Store,
    (file, text): (&str, &str),
    plan: &mut Plan,
    testbeds: &Testbeds,
) -> Result<(i64, crate::lock::Lock)> {
    // One process per run of a results file: choosing the run (and locking it) is
    // done under the file's lock; the run's lock is held until the run ends.
    let db_key = crate::lock::file_key(&args.db)?;
    let choosing = crate::lock::lock(&db_key)?;
    let run_lock = |id: i64| {
        crate::lock::try_lock(
            &format!("{db_key}-run{id}"),
            &format!(
                "run {id} of {} (this scenario's unfinished run, which this command would resume)",
                args.db.display()
            ),
        )
    };
    let tags = args.tags.tags()?;
    let (run_id, lock) = match store.resumable_run(text)? {
        Some(r) if !args.fresh => {
            let lock = run_lock(r.id)?;
            // A resumed run keeps its labels; a key given again takes its new value.
            store.set_run_tags(r.id, &tags)?;
            if r.seed != plan.seed {
                *plan = scenario::parse(file, text, r.seed).map_err(usage)?;
                apply_testbed_topology(plan, testbeds)?;
            }
            store.drop_failed(r.id)?;
            store.reopen_run(r.id)?;
            let done = store.done_keys(r.id)?;
            let before = plan.trials.len();
            plan.trials.retain(|t| !done.contains(&t.key));
            eprintln!(
                "fwbench: resuming run {} ({}): {} of {before} trials already done, {} to go (--fresh starts over)",
                r.id,
                r.status,
                before - plan.trials.len(),
                plan.trials.len()
            );
            (r.id, lock)
        }
        _ => {
            let id = begin(
                store,
                &plan.name,
                Some(text.to_string()),
                plan.seed,
                plan.baseline.clone(),
                &tags,
            )?;
            (id, run_lock(id)?)
        }
    };
    drop(choosing);
    Ok((run_id, lock))
}

/// What the loop over a run's trials ended with.
struct Ran {
    /// Each trial run, with its outcome, in order.
    rows: Vec<(PlannedTrial, Outcome)>,
    /// Ctrl-C stopped the run.
    interrupted: bool,
    /// [`MAX_FAILED_IN_A_ROW`] trials failed in a row.
    gave_up: bool,
}

/// Run the plan's trials in order, each stored as it ends in run `run_id` of `store`,
/// until the last, Ctrl-C, or too many failures in a row. `local`: on this machine's
/// local testbed (a scenario without pins then gets the default placement).
fn run_trials(
    args: &RunArgs,
    plan: &Plan,
    testbeds: &mut Testbeds,
    (store, run_id): (&mut Store, i64),
    ephemeral: bool,
    local: bool,
) -> Result<Ran> {
    let started = Instant::now();
    let mut ran = Ran {
        rows: Vec::new(),
        interrupted: false,
        gave_up: false,
    };
    let mut failed_in_a_row = 0;
    let mut capacities = Capacities::new();
    let n = plan.trials.len();
    for (i, t) in plan.trials.iter().enumerate() {
        if INTERRUPTED.load(Ordering::SeqCst) {
            ran.interrupted = true;
            break;
        }
        eprintln!(
            "{} {:>w$}/{n} ETA {} {}",
            bar(i, n),
            i + 1,
            fmt_eta(eta_s(plan, i, started, ephemeral)),
            output::params_line(&t.params),
            w = n.to_string().len()
        );
        let pin = crate::run::session::scenario_pinning(&plan.pinning, &t.params, local);
        let on = On {
            testbeds: &mut *testbeds,
            store: &mut *store,
            run_id,
            capacities: &mut capacities,
        };
        let Some((ran_as, outcome)) = run_one(args, plan, t, &pin, on)? else {
            ran.interrupted = true;
            break;
        };
        failed_in_a_row = if outcome.status == Status::Failed {
            failed_in_a_row + 1
        } else {
            0
        };
        // As it ran: the rate its load settled on is the summary's.
        ran.rows.push((ran_as, outcome));
        if failed_in_a_row >= MAX_FAILED_IN_A_ROW {
            eprintln!("fwbench: {MAX_FAILED_IN_A_ROW} trials in a row failed; stopping the run (the errors are in the summary)");
            ran.gave_up = true;
            break;
        }
    }
    Ok(ran)
}

/// The time left before trial `i` of the plan: the estimates of the trials left,
/// scaled by how this run has gone so far.
fn eta_s(plan: &Plan, i: usize, started: Instant, ephemeral: bool) -> f64 {
    let est = |ts: &[PlannedTrial]| -> f64 {
        ts.iter()
            .map(|t| estimate_s(&t.params, plan.warmup_s, ephemeral))
            .sum()
    };
    let keys = |ts: &[PlannedTrial]| -> std::collections::HashSet<String> {
        ts.iter()
            .filter(|t| crate::search::load::unsettled(&t.params))
            .map(|t| scenario::trial_key(&crate::search::load::search_key(&t.params), 0))
            .collect()
    };
    let (done, rest) = plan.trials.split_at(i);
    let none = std::collections::HashSet::new();
    let searches = |ts: &[PlannedTrial], searched: &std::collections::HashSet<String>| {
        load_searches_s(ts.iter().map(|t| &t.params), searched)
    };
    let left = est(rest) + searches(rest, &keys(done));
    if i == 0 {
        left
    } else {
        left * started.elapsed().as_secs_f64() / (est(done) + searches(done, &none)).max(1e-9)
    }
}

/// The capacities `event_load`'s searches found in this run, by the search they rest
/// on ([`crate::search::load::search_key`]'s trial key): one search per configuration
/// (and per configurations flooding the same), not one per repetition or warm-up.
type Capacities = std::collections::HashMap<String, crate::search::load::Found>;

/// Where a planned trial runs and is stored, and what the run found so far.
struct On<'a> {
    testbeds: &'a mut Testbeds,
    store: &'a mut Store,
    run_id: i64,
    capacities: &'a mut Capacities,
}

/// The repetition number in the keys of a load search's floods (stored as trials of
/// the run, `step` added): far above any search step's (`rep * 10 000 + step`).
const LOAD_STEP_KEY: u32 = 4_000_000_000;

/// `t`'s parameters with its `event_load` settled (`search::load`): the capacity this
/// run found for the same search before, or found now by a short search before the
/// warm-up, each of its floods stored as a trial of the run, marked a step (as an
/// ndr's steps are: the report's configurations table lists what the background rests
/// on, its analyses leave them out; a resumed run reuses them).
fn settle_load(t: &PlannedTrial, pin: &Pinning, on: &mut On) -> Result<TrialParams> {
    use crate::search::load;
    if !load::unsettled(&t.params) {
        return Ok(t.params.clone());
    }
    let key = scenario::trial_key(&load::search_key(&t.params), 0);
    if let Some(found) = on.capacities.get(&key) {
        eprintln!(
            "  event_load: the capacity found for this configuration before, {:.0} pps",
            found.pps
        );
        return Ok(load::at_capacity(&t.params, found));
    }
    let (testbeds, store, run_id) = (&mut *on.testbeds, &mut *on.store, on.run_id);
    let mut step = 0u32;
    let mut runner = |q: &TrialParams| -> Result<Outcome> {
        step += 1;
        let key = scenario::trial_key(q, LOAD_STEP_KEY + step);
        let at = StepAt {
            key,
            step,
            of: results::StepOf::Capacity,
        };
        search_step(testbeds, store, run_id, t, pin, q, at)
    };
    let Some(found) = load::capacity(&t.params, &mut runner)? else {
        return Ok(t.params.clone());
    };
    let settled = load::at_capacity(&t.params, &found);
    on.capacities.insert(key, found);
    Ok(settled)
}

/// One planned trial, placed by `pin`: its warm-up, the trial (or search), stored and
/// printed (a JSON line with `--json`); it as it ran (its load settled) and its outcome.
/// `None`: interrupted.
fn run_one(
    args: &RunArgs,
    plan: &Plan,
    t: &PlannedTrial,
    pin: &Pinning,
    mut on: On,
) -> Result<Option<(PlannedTrial, Outcome)>> {
    let topology = t.params.topology;
    let params = match settle_load(t, pin, &mut on) {
        Ok(p) => p,
        Err(e) if e.is::<Interrupted>() => return Ok(None),
        Err(e) => return Err(e),
    };
    let On {
        testbeds,
        store,
        run_id,
        ..
    } = on;
    if let Some(w) = plan.warmup_s {
        // Unmeasured traffic first (caches, ARP/ND, conntrack, CPU clocks): a trial
        // of its own, discarded.
        let mut warm = params.clone();
        warm.duration_s = w;
        // A search warms up with one trial of its kind.
        warm.search = None;
        match testbeds.run_trial(topology, &warm, pin, &INTERRUPTED) {
            Err(e) if e.is::<Interrupted>() => return Ok(None),
            Err(e) => return Err(e),
            Ok(_) => {}
        }
    }
    let result = if crate::search::is_search(&t.params) {
        run_search_trial(testbeds, t, &params, pin, store, run_id)
    } else {
        testbeds.run_trial(topology, &params, pin, &INTERRUPTED)
    };
    let outcome = match result {
        Ok(o) => o,
        Err(e) if e.is::<Interrupted>() => return Ok(None),
        Err(e) => return Err(e),
    };
    // Stored with the rate its load settled on (its key stays the planned trial's).
    let ran = PlannedTrial {
        params,
        ..t.clone()
    };
    let stored = crate::run::recovery::store_or_keep(store, &record(run_id, &ran, &outcome));
    eprintln!("    {}", output::outcome_line(&outcome));
    if args.json {
        let mut d = output::doc::TrialDoc::new(&ran.params, &outcome);
        d.trial_key = Some(t.key.clone());
        d.rep = Some(t.rep);
        println!("{}", serde_json::to_string(&d)?);
    }
    stored.map_err(|e| {
        e.context(crate::run::recovery::resume_hint(
            run_id,
            args.scenario.as_deref(),
            &args.db,
        ))
    })?;
    Ok(Some((ran, outcome)))
}

/// The run's end: its status stored, the summary (a table, or with `--json` a summary
/// line), findings, the report; the exit code (1 when a trial failed).
fn end_run(args: &RunArgs, store: &Store, plan: &Plan, run_id: i64, ran: &Ran) -> Result<ExitCode> {
    let rows = &ran.rows;
    let n = plan.trials.len();
    let status = if ran.interrupted {
        "interrupted"
    } else if ran.gave_up {
        "failed"
    } else {
        "complete"
    };
    store.finish_run(run_id, &crate::clock::now_utc(), status)?;
    let table = output::summary_table(&plan.name, rows);
    // The findings count every stored trial of the run: a search's steps (and a
    // `--load` capacity's floods) are trials of their own, and a resumed run keeps
    // those of its earlier sessions.
    let steps = store
        .trial_count(run_id)
        .ok()
        .filter(|all| *all > rows.len())
        .map(|all| {
            format!(
                "; the run holds {all} stored trials in all (searches store each step; a \
                 resumed run keeps its earlier trials)"
            )
        })
        .unwrap_or_default();
    let stored = format!(
        "{} of {} trials stored in {} (run {run_id}){steps}.",
        rows.len(),
        n,
        args.db.display()
    );
    if args.json {
        // The table for the eye on stderr; stdout stays JSON lines.
        eprintln!("{table}\n{stored}");
        let count = |s: Status| rows.iter().filter(|(_, o)| o.status == s).count();
        let summary = output::doc::RunSummaryDoc {
            schema: output::schema("run"),
            fwbench: output::doc::BuildInfo::this(),
            run: plan.name.clone(),
            run_id,
            db: args.db.display().to_string(),
            status: status.to_string(),
            planned: n,
            ok: count(Status::Ok),
            flagged: count(Status::Flagged),
            unavailable: count(Status::Unavailable),
            failed: count(Status::Failed),
        };
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        println!("{table}");
        println!("{stored}");
        crate::run::report::print_findings(store, run_id, &args.db, report_path(args).is_some());
    }
    if let Some(path) = report_path(args) {
        if let Err(e) = report_after_run(store, run_id, &path, args.json) {
            eprintln!("fwbench: the report could not be written: {e:#} (the results are stored; run `fwbench report {}`)", args.db.display());
        }
    }
    if ran.interrupted {
        eprintln!(
            "fwbench: run {run_id} interrupted; run the same command again to resume it ({} trials stored)",
            rows.len()
        );
        return Err(Interrupted.into());
    }
    let failed = rows.iter().any(|(_, o)| o.status == Status::Failed);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Which step of which search a stored step trial is: its key, its number, the search.
struct StepAt {
    key: String,
    step: u32,
    of: results::StepOf,
}

/// One step (`q`, stored under `at.key`, marked `results.step_of`) of a search that is
/// part of planned trial `t` (an ndr's, a load search's): a resumed run reuses a step
/// stored before the interruption (its outcome steers the search the same way), else
/// it is measured and stored as a trial of the run.
fn search_step(
    testbeds: &mut Testbeds,
    store: &mut Store,
    run_id: i64,
    t: &PlannedTrial,
    pin: &Pinning,
    q: &TrialParams,
    at: StepAt,
) -> Result<Outcome> {
    let StepAt { key, step, of } = at;
    let planned = PlannedTrial {
        key,
        rep: t.rep,
        params: q.clone(),
    };
    if let Some((status, results)) = store.trial_by_key(run_id, &planned.key)? {
        let o = Outcome::from_stored_step(&results)
            .with_context(|| format!("reading stored search step {} ({status})", planned.key))?;
        eprintln!("    step {step}: stored before the interruption, reused");
        return Ok(o);
    }
    let o = testbeds.run_trial(t.params.topology, q, pin, &INTERRUPTED)?;
    crate::run::recovery::store_or_keep(store, &record_step(run_id, &planned, &o, of))?;
    Ok(o)
}

/// A search (ndr, degrade) as one planned trial of a scenario: every step is stored
/// as its own flood/flow trial (rep = the search's repetition, key = step), then the
/// search's result is returned as the planned trial's outcome (stored by the caller).
/// `settled`: the planned trial's parameters with its `event_load` settled (an
/// envelope's background, [`settle_load`]).
fn run_search_trial(
    testbeds: &mut Testbeds,
    t: &PlannedTrial,
    settled: &TrialParams,
    pin: &Pinning,
    store: &mut Store,
    run_id: i64,
) -> Result<Outcome> {
    let started_at = crate::clock::now_utc();
    let mut step = 0u32;
    let mut runner = |q: &TrialParams| -> Result<Outcome> {
        step += 1;
        // Keyed as asked: an envelope's steps whatever capacity its load settled on.
        let asked = crate::search::load::as_asked(q, &t.params);
        let key = scenario::trial_key(&asked, t.rep * 10_000 + step);
        let at = StepAt {
            key,
            step,
            of: results::StepOf::Search,
        };
        search_step(testbeds, store, run_id, t, pin, q, at)
    };
    let res = crate::search::run_search(settled, &mut runner);
    let mut o = Outcome {
        finished_at: crate::clock::now_utc(),
        ..Outcome::started(started_at)
    };
    match res {
        Ok(s) => o = o.with_search(s),
        Err(e) if e.is::<Interrupted>() => return Err(e),
        Err(e) => {
            o.status = Status::Failed;
            o.error = Some(format!("{e:#}"));
        }
    }
    Ok(o)
}

#[derive(Args)]
pub struct RunArgs {
    /// Scenario file (TOML); see scenarios/ and docs/scenarios.md. Omit for the default experiment.
    pub scenario: Option<PathBuf>,
    /// Results database
    #[arg(long, default_value = "results.db")]
    pub db: PathBuf,
    #[command(flatten)]
    pub tags: crate::run::tags::TagArgs,
    /// Use this existing testbed (from `fwbench testbed up`) instead of ephemeral ones
    #[arg(long, value_name = "NAME")]
    pub testbed: Option<String>,
    /// List the trials and the estimated duration; run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Start a new run even if an unfinished run of this scenario is in the database
    /// (by default it is resumed: finished trials are kept, the rest run)
    #[arg(long)]
    pub fresh: bool,
    /// Write the HTML report here when the run ends (default: report.html for the
    /// default experiment, none otherwise)
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// List every axis a scenario may set or sweep (name, workloads, default, meaning)
    #[arg(long)]
    pub list_axes: bool,
    /// JSON lines on stdout: one object per trial as it finishes (the shape of `--json`
    /// of a trial command, with `trial_key` and `rep`), then a run summary
    /// (docs/schema/trial.json, docs/schema/run-summary.json)
    #[arg(long, short = 'J', help_heading = "Output")]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::{estimate_s, SKIPPED_S, TESTBED_REBUILD_S};
    use crate::params::workload::Workload;
    use crate::plan::build::test_params;

    fn echo(pairs: &[(&str, &str)]) -> crate::params::TrialParams {
        test_params(Workload::Echo, pairs)
    }

    /// Seed 000 on an ephemeral testbed: every legacy trial is followed by a new testbed
    /// (its estimate once said 31 min for a run of 61); none after nft, none on a named
    /// testbed, none after a trial the kernel refuses.
    #[test]
    fn the_estimate_counts_a_new_testbed_after_each_trial_on_legacy_tables() {
        let legacy = echo(&[("engine", "iptables-legacy"), ("proto", "tcp")]);
        let nft = echo(&[("engine", "nft"), ("proto", "tcp")]);
        let extra = estimate_s(&legacy, None, true) - estimate_s(&legacy, None, false);
        assert!((extra - TESTBED_REBUILD_S).abs() < 1e-9, "{extra}");
        assert_eq!(estimate_s(&nft, None, true), estimate_s(&nft, None, false));
        let ipset = echo(&[("engine", "ipset-legacy"), ("proto", "tcp")]);
        let extra = estimate_s(&ipset, None, true) - estimate_s(&ipset, None, false);
        assert!((extra - TESTBED_REBUILD_S).abs() < 1e-9, "{extra}");
        let sctp = echo(&[("engine", "iptables-legacy"), ("proto", "sctp")]);
        let want = if traffic::sys::sctp_unavailable() {
            SKIPPED_S
        } else {
            estimate_s(&legacy, None, true)
        };
        assert_eq!(estimate_s(&sctp, None, true), want);
    }

    /// The enforcement preset: 48 trials, one capacity search per engine and size (12),
    /// whatever the method or repetition; one searched already is not counted again, a
    /// stated capacity needs none. The listing shows the share, not the flag's rate.
    #[test]
    fn the_estimate_counts_one_capacity_search_per_configuration_it_rests_on() {
        use super::load_searches_s;
        let text = include_str!("../../../../scenarios/enforcement.toml");
        let plan = crate::plan::scenario::parse("enforcement.toml", text, 1).unwrap();
        let params: Vec<_> = plan.trials.iter().map(|t| &t.params).collect();
        let all = load_searches_s(params.iter().copied(), &Default::default());
        let one = |p: &crate::params::TrialParams| {
            let mut q = crate::search::load::search_key(p);
            q.duration_s = crate::search::load::STEP_S;
            super::estimate_one(&q) * (crate::search::load::MAX_TRIALS as f64 + 4.0)
        };
        let each: f64 = {
            let mut seen = std::collections::HashSet::new();
            params
                .iter()
                .filter(|p| {
                    seen.insert(crate::plan::scenario::trial_key(
                        &crate::search::load::search_key(p),
                        0,
                    ))
                })
                .map(|p| one(p))
                .sum()
        };
        assert!(all > 0.0 && (all - each).abs() < 1e-9, "{all} {each}");
        let distinct: std::collections::HashSet<_> = params
            .iter()
            .map(|p| crate::plan::scenario::trial_key(&crate::search::load::search_key(p), 0))
            .collect();
        assert_eq!(distinct.len(), 12);
        let first =
            crate::plan::scenario::trial_key(&crate::search::load::search_key(params[0]), 0);
        let rest = load_searches_s(params.iter().copied(), &[first].into());
        assert!((rest - (all - one(params[0]))).abs() < 1e-9, "{rest} {all}");
        let stated = text.replace("event_load = \"0.5\"", "event_load = \"0.5@40kpps\"");
        let plan = crate::plan::scenario::parse("enforcement.toml", &stated, 1).unwrap();
        assert_eq!(
            load_searches_s(plan.trials.iter().map(|t| &t.params), &Default::default()),
            0.0
        );
        assert!(
            crate::output::params_line(params[0]).contains(" load=0.5 "),
            "{}",
            crate::output::params_line(params[0])
        );
    }

    /// Seed 002's 270 configurations (one repetition) took 1 127 s on 2026-11-27, 1 097 s
    /// of it inside trials of 1–25 000 rules on 5 engines; the estimate said 875 s when it
    /// took 2 µs a rule for every engine. Within 10 % of the run now.
    #[test]
    fn the_estimate_of_seed002_counts_what_its_rules_cost_per_engine() {
        let text = include_str!("../../../../scenarios/seed002.toml");
        let plan = crate::plan::scenario::parse("seed002.toml", text, 1).unwrap();
        let total: f64 = plan
            .trials
            .iter()
            .filter(|t| t.rep == 1)
            .map(|t| estimate_s(&t.params, plan.warmup_s, true))
            .sum();
        assert!((total - 1127.0).abs() < 112.7, "{total}");
    }
}
