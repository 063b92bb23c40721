//! `fwbench run [SCENARIO]`: plan → trials → store, with progress, ETA and a clean
//! stop on Ctrl-C (the running trial is abandoned, finished ones are kept); resume.

use crate::error::usage;
use crate::error::Interrupted;
use crate::outcome::{Outcome, Status};
use crate::output;
use crate::params::search::Search;
use crate::params::workload::Workload;
use crate::params::{Pinning, TrialParams};
use crate::plan::scenario::{self, Plan, PlannedTrial};
use crate::run::record::record;
use crate::run::session::begin;
use crate::run::session::fresh_seed;
use crate::run::session::install_interrupt_handler;
use crate::run::session::preflight;
use crate::run::session::require_root;
use crate::run::session::Testbeds;
use crate::run::session::INTERRUPTED;
use anyhow::{Context, Result};
use clap::Args;
use firewall::Engine;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;
use store::Store;

/// The experiment `fwbench run` runs without arguments.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../../scenarios/default.toml");

/// Rough wall time of one trial: its duration plus agent and setup overhead (measured
/// here: ~0.1 s, plus ~1 ms per client); SCTP trials end before any agent starts where
/// SCTP is missing. On an `ephemeral` testbed a trial on legacy xtables is followed by a
/// new testbed (a legacy table, once instantiated, stays: `run::session`).
fn estimate_s(p: &TrialParams, warmup_s: Option<f64>, ephemeral: bool) -> f64 {
    let one = estimate_one(p);
    let legacy = matches!(p.engine, Engine::IptablesLegacy | Engine::IpsetLegacy);
    let rebuilt = if ephemeral && legacy && one > SKIPPED_S {
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
    let rules = p.rules as f64 * per_rule_s(p.engine);
    let mut one = p.duration_s + 0.1 + p.clients as f64 * 0.001 + rules;
    if let Some(k) = p.conn() {
        // A session of this machine: ~0.2 ms plus its bytes at ~1 GB/s, spread over workers.
        let per = 2e-4 + k.size as f64 / 1e9;
        let work = match (p.workload() == Workload::Connections, k.count) {
            (true, _) => k.limit as f64 * 1e-4 + k.hold_s,
            (false, Some(c)) => c as f64 * per / f64::from(k.parallel.clamp(1, 4)),
            (false, None) => p.duration_s,
        };
        let overhead = f64::from(k.overhead_sessions) * 2e-4;
        one = work + overhead + 0.3 + rules;
    }
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
    }
}

/// A trial's wall time per rule of its ruleset beyond its traffic (render, install,
/// count, remove and count again), by engine, measured here on 2026-11-27 from seed
/// 002's trials of 1–25 000 rules (5 engines) and seed 001's ipset of 250 000 entries:
/// 25 000 nft rules add ~4 s to a trial, as many legacy ones ~1 s. The estimate once
/// took 2 µs for every engine and said 875 s for a seed 002 run of 1 127 s.
fn per_rule_s(e: Engine) -> f64 {
    match e {
        Engine::None => 0.0,
        Engine::Nft => 1.7e-4,
        Engine::IptablesNft => 9e-5,
        Engine::IptablesLegacy => 4e-5,
        Engine::Xdp | Engine::XdpGeneric | Engine::TcBpf => 2e-5,
        // Filler rules become set elements.
        Engine::NftSet | Engine::IpsetLegacy | Engine::IpsetNft | Engine::XdpMap => 8e-6,
    }
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
    let (file, text) = match &args.scenario {
        Some(p) => {
            let text = crate::limits::read_user_file(p, "scenario").map_err(usage)?;
            (p.display().to_string(), text)
        }
        None => (
            "(default scenario)".to_string(),
            DEFAULT_SCENARIO.to_string(),
        ),
    };
    let mut plan: Plan = scenario::parse(&file, &text, fresh_seed()).map_err(usage)?;
    if let Some(r) = report_path(args) {
        crate::run::report::refuse_same_file(&args.db, &r, "--report")?;
    }
    let testbed_name = args.testbed.clone().or(plan.testbed.clone());
    if args.dry_run {
        let params: Vec<TrialParams> = plan.trials.iter().map(|t| t.params.clone()).collect();
        crate::run::session::dry_check(testbed_name.as_deref(), &params)?;
        print!(
            "{}",
            output::plan_listing(&plan, |p| {
                estimate_s(p, plan.warmup_s, testbed_name.is_none())
            })
        );
        return Ok(ExitCode::SUCCESS);
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
    let mut held = None;
    // Resume the newest unfinished run of this very scenario text, with its seed, so
    // every trial keeps its key: finished trials are skipped, failed ones run again.
    let resumed = match store.resumable_run(&text)? {
        Some(r) if !args.fresh => {
            held = Some(run_lock(r.id)?);
            if r.seed != plan.seed {
                plan = scenario::parse(&file, &text, r.seed).map_err(usage)?;
                apply_testbed_topology(&mut plan, &testbeds)?;
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
            Some(r.id)
        }
        _ => None,
    };
    let run_id = match resumed {
        Some(id) => id,
        None => begin(
            &store,
            &plan.name,
            Some(text.clone()),
            plan.seed,
            plan.baseline.clone(),
        )?,
    };
    let _run_lock = match held {
        Some(l) => l,
        None => run_lock(run_id)?,
    };
    drop(choosing);
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
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut interrupted = false;
    let mut gave_up = false;
    let mut failed_in_a_row = 0;
    let n = plan.trials.len();
    for (i, t) in plan.trials.iter().enumerate() {
        if INTERRUPTED.load(Ordering::SeqCst) {
            interrupted = true;
            break;
        }
        let left: f64 = plan.trials[i..]
            .iter()
            .map(|t| estimate_s(&t.params, plan.warmup_s, ephemeral))
            .sum();
        let eta = if i == 0 {
            left
        } else {
            // Scale the estimate by how this run has gone so far.
            let done_est: f64 = plan.trials[..i]
                .iter()
                .map(|t| estimate_s(&t.params, plan.warmup_s, ephemeral))
                .sum();
            left * started.elapsed().as_secs_f64() / done_est.max(1e-9)
        };
        eprintln!(
            "{} {:>w$}/{n} ETA {} {}",
            bar(i, n),
            i + 1,
            fmt_eta(eta),
            output::params_line(&t.params),
            w = n.to_string().len()
        );
        let topology = t.params.topology;
        if let Some(w) = plan.warmup_s {
            // Unmeasured traffic first (caches, ARP/ND, conntrack, CPU clocks): a trial
            // of its own, discarded.
            let mut warm = t.params.clone();
            warm.duration_s = w;
            // A search warms up with one trial of its kind.
            warm.search = None;
            match testbeds.run_trial(topology, &warm, &plan.pinning, &INTERRUPTED) {
                Err(e) if e.is::<Interrupted>() => {
                    interrupted = true;
                    break;
                }
                Err(e) => return Err(e),
                Ok(_) => {}
            }
        }
        let result = if crate::search::is_search(&t.params) {
            run_search_trial(&mut testbeds, t, &plan.pinning, &mut store, run_id)
        } else {
            testbeds.run_trial(topology, &t.params, &plan.pinning, &INTERRUPTED)
        };
        let outcome = match result {
            Ok(o) => o,
            Err(e) if e.is::<Interrupted>() => {
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        };
        let stored = crate::run::recovery::store_or_keep(&mut store, &record(run_id, t, &outcome));
        eprintln!("    {}", output::outcome_line(&outcome));
        if args.json {
            let mut d = output::doc::TrialDoc::new(&t.params, &outcome);
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
        failed_in_a_row = if outcome.status == Status::Failed {
            failed_in_a_row + 1
        } else {
            0
        };
        rows.push((t.clone(), outcome));
        if failed_in_a_row >= MAX_FAILED_IN_A_ROW {
            eprintln!("fwbench: {MAX_FAILED_IN_A_ROW} trials in a row failed; stopping the run (the errors are in the summary)");
            gave_up = true;
            break;
        }
    }
    drop(testbeds);
    let status = if interrupted {
        "interrupted"
    } else if gave_up {
        "failed"
    } else {
        "complete"
    };
    store.finish_run(run_id, &crate::clock::now_utc(), status)?;
    let table = output::summary_table(&plan.name, &rows);
    let stored = format!(
        "{} of {} trials stored in {} (run {run_id}).",
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
            unavailable: count(Status::Unavailable),
            failed: count(Status::Failed),
        };
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        println!("{table}");
        println!("{stored}");
        crate::run::report::print_findings(&store, run_id, &args.db, report_path(args).is_some());
    }
    if let Some(path) = report_path(args) {
        if let Err(e) = report_after_run(&store, run_id, &path, args.json) {
            eprintln!("fwbench: the report could not be written: {e:#} (the results are stored; run `fwbench report {}`)", args.db.display());
        }
    }
    if interrupted {
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

/// A search (ndr, degrade) as one planned trial of a scenario: every step is stored
/// as its own flood/flow trial (rep = the search's repetition, key = step), then the
/// search's result is returned as the planned trial's outcome (stored by the caller).
fn run_search_trial(
    testbeds: &mut Testbeds,
    t: &PlannedTrial,
    pin: &Pinning,
    store: &mut Store,
    run_id: i64,
) -> Result<Outcome> {
    let started_at = crate::clock::now_utc();
    let mut step = 0u32;
    let mut runner = |q: &TrialParams| -> Result<Outcome> {
        step += 1;
        let planned = PlannedTrial {
            key: scenario::trial_key(q, t.rep * 10_000 + step),
            rep: t.rep,
            params: q.clone(),
        };
        // A resumed run: the steps stored before the interruption are reused (their
        // outcomes steer the search the same way), not measured and stored again.
        if let Some((status, results)) = store.trial_by_key(run_id, &planned.key)? {
            let o = Outcome::from_stored_step(&results).with_context(|| {
                format!("reading stored search step {} ({status})", planned.key)
            })?;
            eprintln!("    step {step}: stored before the interruption, reused");
            return Ok(o);
        }
        let o = testbeds.run_trial(t.params.topology, q, pin, &INTERRUPTED)?;
        crate::run::recovery::store_or_keep(store, &record(run_id, &planned, &o))?;
        Ok(o)
    };
    let res = crate::search::run_search(&t.params, &mut runner);
    let mut o = Outcome {
        finished_at: crate::clock::now_utc(),
        ..Outcome::started(started_at)
    };
    match res {
        Ok(s) => o.search = Some(s),
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
    use crate::plan::axes::test_params;

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
