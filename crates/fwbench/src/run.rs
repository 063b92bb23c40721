//! The controller's run loop: plan → trials → store, with progress, ETA and a clean
//! stop on Ctrl-C (the running trial is abandoned, finished ones are kept).

use crate::cli::RunArgs;
use crate::output;
use crate::scenario::{self, Plan, PlannedTrial};
use crate::testbed::{EphemeralTestbed, Testbed, Topology};
use crate::trial::{self, Interrupted, Outcome, Pinning, Status, TrialParams, Workload};
use crate::usage;
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use store::{EchoClientRow, Headline, NewRun, Store, TrialRecord};

/// The experiment `fwbench run` runs without arguments.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/default.toml");

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn install_interrupt_handler() {
    use std::sync::Once;
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if !INTERRUPTED.swap(true, Ordering::SeqCst) {
                eprintln!("\nfwbench: interrupted — stopping the current trial and cleaning up (finished trials are kept)");
            }
        });
    });
}

pub fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    (t ^ (std::process::id() as u64).rotate_left(32)) & 0x7fff_ffff_ffff_ffff
}

pub fn require_root() -> Result<()> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(usage(
            "this needs root (network namespaces, veth, sysctls): run it with sudo or as root",
        ));
    }
    Ok(())
}

/// Testbeds for a run: one named testbed, or ephemeral ones made per topology on demand.
struct Testbeds {
    named: Option<Testbed>,
    ephemeral: HashMap<Topology, EphemeralTestbed>,
}

impl Testbeds {
    fn new(named: Option<&str>) -> Result<Testbeds> {
        let named = match named {
            None => None,
            Some(n) => {
                crate::testbed::check_name(n)?;
                Some(Testbed::find(n)?.ok_or_else(|| {
                    usage(format!(
                        "--testbed {n}: no such testbed (create it with `fwbench testbed up --name {n}`)"
                    ))
                })?)
            }
        };
        Ok(Testbeds {
            named,
            ephemeral: HashMap::new(),
        })
    }

    fn check(&self, p: &TrialParams) -> Result<()> {
        if let Some(tb) = &self.named {
            if tb.topology != p.topology.testbed() {
                return Err(usage(format!(
                    "testbed '{}' has topology {}, but a trial asks for {}",
                    tb.name, tb.topology, p.topology
                )));
            }
        }
        Ok(())
    }

    fn get(&mut self, topology: Topology) -> Result<&Testbed> {
        if let Some(tb) = &self.named {
            return Ok(tb);
        }
        let e = match self.ephemeral.entry(topology.testbed()) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(EphemeralTestbed::create(topology.testbed())?)
            }
        };
        Ok(&e.tb)
    }
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

fn tools_for_record() -> Vec<(String, String)> {
    crate::check::probe()
        .tools
        .into_iter()
        .map(|t| {
            (
                t.name.to_string(),
                t.version.unwrap_or_else(|| "not found".into()),
            )
        })
        .collect()
}

fn begin(
    store: &Store,
    scenario: &str,
    text: Option<String>,
    seed: u64,
    baseline: Option<serde_json::Value>,
) -> Result<i64> {
    Ok(store.begin_run(&NewRun {
        started_at: crate::clock::now_utc(),
        scenario: scenario.into(),
        scenario_text: text,
        seed,
        command: command_line(),
        host: crate::hostinfo::collect(tools_for_record()),
        baseline,
    })?)
}

pub fn record(run_id: i64, t: &PlannedTrial, o: &Outcome) -> TrialRecord {
    let mut rec = TrialRecord {
        run_id,
        trial_key: t.key.clone(),
        rep: t.rep,
        workload: t.params.workload.as_str().into(),
        status: o.status.as_str().into(),
        error: o.error.clone(),
        started_at: o.started_at.clone(),
        finished_at: o.finished_at.clone(),
        params: serde_json::to_value(&t.params).unwrap_or_default(),
        placement: serde_json::to_value(&o.placement).unwrap_or_default(),
        results: serde_json::to_value(o).unwrap_or_default(),
        samples: o
            .samples
            .iter()
            .map(|(role, s)| store::SampleRow {
                role: role.to_string(),
                t_s: s.t_s,
                metric: s.metric.clone(),
                value: s.value,
            })
            .collect(),
        ..Default::default()
    };
    rec.firewall = o.firewall().map(|f| store::FirewallRow {
        engine: f.engine.to_string(),
        rules: f.rules as u64,
        set_elements: f.elements as u64,
        install_ms: Some(f.install_ms),
        remove_ms: f.remove_ms,
        verdicts_ok: f.verdicts_ok(),
        verdict_problems: f
            .verdicts
            .as_ref()
            .filter(|v| !v.problems.is_empty())
            .map(|v| v.problems.join("; ")),
    });
    let us = |ns: u64| Some(ns as f64 / 1e3);
    if let Some(s) = &o.packet {
        rec.headline = Headline {
            duration_s: Some(s.elapsed_s),
            throughput_bps: Some(s.received_bps),
            lost: Some(s.lost),
            offered_pps: Some(s.offered_pps),
            sent_pps: Some(s.sent_pps),
            received_pps: Some(s.received_pps),
            loss_ratio: Some(s.loss_ratio),
            owd_p50_us: (s.owd.count > 0).then(|| s.owd.p50_ns as f64 / 1e3),
            jitter_us: (s.owd.count > 0).then_some(s.jitter_ns / 1e3),
            validation_errors: Some(s.duplicates),
            ..Default::default()
        };
    }
    if let Some(s) = &o.search {
        rec.headline.received_pps = s.value().filter(|_| t.params.workload == Workload::Ndr);
        rec.headline.loss_ratio = t.params.search.as_ref().map(|sp| sp.loss);
    }
    if let Some(c) = &o.conn {
        // Connection workloads: sessions are the transactions, their durations the "RTT".
        rec.headline = Headline {
            duration_s: Some(c.elapsed_s),
            throughput_bps: Some(c.goodput_bps),
            transactions_per_s: Some(c.sessions_per_s),
            rtt_p50_us: us(c.session.p50_ns),
            rtt_p90_us: us(c.session.p90_ns),
            rtt_p99_us: us(c.session.p99_ns),
            rtt_max_us: us(c.session.max_ns),
            validation_errors: Some(c.corrupt),
            lost: Some(c.failed),
            ..Default::default()
        };
    }
    if let Some(s) = &o.ping {
        rec.headline = Headline {
            duration_s: Some(s.elapsed_s),
            transactions_per_s: Some(s.received as f64 / s.elapsed_s.max(1e-9)),
            rtt_p50_us: us(s.rtt.p50_ns),
            rtt_p90_us: us(s.rtt.p90_ns),
            rtt_p99_us: us(s.rtt.p99_ns),
            rtt_p999_us: us(s.rtt.p999_ns),
            rtt_max_us: us(s.rtt.max_ns),
            validation_errors: Some(s.invalid),
            lost: Some(s.lost),
            loss_ratio: Some(if s.sent == 0 {
                0.0
            } else {
                s.lost as f64 / s.sent as f64
            }),
            ..Default::default()
        };
    }
    if let Some(s) = &o.summary {
        rec.headline = Headline {
            duration_s: Some(s.elapsed_s),
            throughput_bps: Some(s.throughput_bps),
            transactions_per_s: Some(s.transactions_per_s),
            rtt_p50_us: us(s.rtt.p50_ns),
            rtt_p90_us: us(s.rtt.p90_ns),
            rtt_p99_us: us(s.rtt.p99_ns),
            rtt_p999_us: us(s.rtt.p999_ns),
            rtt_max_us: us(s.rtt.max_ns),
            validation_errors: Some(s.validation_errors),
            unsent: Some(s.unsent),
            lost: Some(s.lost),
            ..Default::default()
        };
        rec.echo_clients = s
            .clients
            .iter()
            .map(|c| {
                let mut v = c.validation_client;
                v.merge(&c.validation_server);
                let r = c.rtt;
                let f = |ns: u64| ns as f64 / 1e3;
                EchoClientRow {
                    client: c.client,
                    source: c.source.clone(),
                    mp: c.mp.map(|m| (m.frames, m.bytes)),
                    unsent_client: c.unsent_client,
                    unsent_server: c.unsent_server,
                    lost: c.lost,
                    validation: [
                        v.malformed,
                        v.wrong_client,
                        v.wrong_size,
                        v.gaps,
                        v.duplicates,
                        v.reordered,
                    ],
                    throughput_bps: c.throughput_bps,
                    transactions_per_s: c.transactions_per_s,
                    rtt_us: (r.count > 0).then(|| {
                        [
                            f(r.p50_ns),
                            f(r.p90_ns),
                            f(r.p99_ns),
                            f(r.p999_ns),
                            f(r.max_ns),
                        ]
                    }),
                    error: c.error.clone(),
                }
            })
            .collect();
    }
    rec
}

/// Rough wall time of one trial: its duration plus agent and setup overhead (measured
/// here: ~0.1 s, plus ~1 ms per client); SCTP trials end at setup where SCTP is missing.
fn estimate_s(p: &TrialParams, warmup_s: Option<f64>) -> f64 {
    estimate_one(p) + warmup_s.map(|w| w + 0.1).unwrap_or(0.0)
}

fn estimate_one(p: &TrialParams) -> f64 {
    use std::sync::OnceLock;
    static NO_SCTP: OnceLock<bool> = OnceLock::new();
    if p.proto == proto::Proto::Sctp && *NO_SCTP.get_or_init(traffic::sys::sctp_unavailable) {
        return 0.05;
    }
    let mut one = p.duration_s + 0.1 + p.clients as f64 * 0.001 + p.rules as f64 * 2e-6;
    if let Some(k) = &p.conn {
        // A session of this machine: ~0.2 ms plus its bytes at ~1 GB/s, spread over workers.
        let per = 2e-4 + k.size as f64 / 1e9;
        let work = match (p.workload, k.count) {
            (Workload::Connections, _) => k.limit as f64 * 1e-4 + k.hold_s,
            (_, Some(c)) => c as f64 * per / f64::from(k.parallel.clamp(1, 4)),
            (_, None) => p.duration_s,
        };
        let overhead = f64::from(k.overhead_sessions) * 2e-4;
        one = work + overhead + 0.3 + p.rules as f64 * 2e-6;
        if k.parallel == 0 {
            one *= 9.0; // the sweet-spot search: about 9 steps
        }
    }
    match (p.workload, &p.search) {
        // A binary search to 2 % takes about 7 steps plus the probe and confirmation.
        (Workload::Ndr, Some(sp)) => one * (sp.max_trials as f64).min(9.0),
        (Workload::Degrade, Some(sp)) => {
            let steps = 3.0
                + (sp.max_rules as f64 / sp.resolution.max(1) as f64)
                    .log2()
                    .ceil();
            // Rules vary from 0 to max_rules: count half of them per step.
            (one - p.rules as f64 * 1e-6) * steps.max(1.0)
        }
        _ => one,
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

/// Bad input is found before any testbed exists: every distinct rule set renders,
/// its tools are installed, an import file passes the engine's own check.
fn preflight(trials: &[TrialParams]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for p in trials {
        let key = serde_json::to_string(&(
            p.engine, p.model, p.rules, p.position, p.chain, p.family, p.proto, p.clients,
            &p.import, p.topology,
        ))?;
        if !seen.insert(key) {
            continue;
        }
        if let Some(r) = crate::rules::build(p).map_err(usage)? {
            crate::rules::preflight(p, &r).map_err(usage)?;
        }
    }
    Ok(())
}

/// `fwbench workload FILE`: parse (bad input → exit 2 with file:line:col), check that
/// every command exists, then run it inside the client's namespace and summarise.
pub fn run_workload(a: &crate::cli::WorkloadArgs) -> Result<ExitCode> {
    let name = a.file.display().to_string();
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| usage(format!("{name}: cannot read workload file: {e}")))?;
    let jobs = crate::workload::parse(&name, &text).map_err(usage)?;
    for (prog, (l, c)) in crate::workload::commands(&jobs) {
        if !program_exists(prog) {
            return Err(usage(format!(
                "{name}:{l}:{c}: command '{prog}' not found (not a file, not in PATH)"
            )));
        }
    }
    require_root()?;
    install_interrupt_handler();
    let mut testbeds = Testbeds::new(a.testbed.as_deref())?;
    let topology = testbeds
        .named
        .as_ref()
        .map(|t| t.topology)
        .unwrap_or(a.topology);
    let ns = testbeds.get(topology)?.client_ns();
    let prefix: Vec<String> = ["ip", "netns", "exec", &ns].map(String::from).to_vec();
    eprintln!(
        "fwbench: {} commands from {name} in {ns}",
        crate::workload::count(&jobs)
    );
    let t0 = Instant::now();
    let ran = crate::workload::run(&jobs, &prefix, &INTERRUPTED);
    let total_s = t0.elapsed().as_secs_f64();
    drop(testbeds);
    let failed = ran.iter().filter(|r| r.exit != Some(0)).count();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "file": name, "namespace": ns, "total_s": total_s,
                "commands": ran.len(), "failed": failed, "ran": ran,
            }))?
        );
    } else {
        print!("{}", output::workload_text(&name, total_s, &ran));
    }
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err(Interrupted.into());
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A program name resolves: a path to a file, or a file in one of PATH's directories.
pub fn program_exists(prog: &str) -> bool {
    if prog.contains('/') {
        return Path::new(prog).is_file();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .any(|d| d.join(prog).is_file())
}

/// `fwbench report DB`: read the results file (never writing to it) and write one
/// report. A missing file or one that is not fwbench's is bad input (exit 2).
pub fn write_report(a: &crate::cli::ReportArgs) -> Result<ExitCode> {
    if !a.db.is_file() {
        return Err(usage(format!("{}: no such results file", a.db.display())));
    }
    let store = Store::open(&a.db).map_err(|e| usage(e.to_string()))?;
    let report = match report::load(&store, a.run) {
        Ok(r) => r,
        Err(e @ report::ReportError::NoSuchRun { .. }) => return Err(usage(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    let (text, default) = match a.format.as_str() {
        "md" => (report.markdown(), "report.md"),
        "csv" => (report.csv_trials(), "trials.csv"),
        "json" => (serde_json::to_string_pretty(&report.json())?, "report.json"),
        "samples" => (report.csv_samples(&store)?, "samples.csv"),
        _ => (report.html(), "report.html"),
    };
    let out = a.output.clone().unwrap_or_else(|| default.into());
    if out.as_os_str() == "-" {
        print!("{text}");
    } else {
        std::fs::write(&out, text).with_context(|| format!("writing {}", out.display()))?;
        let warnings = report.warnings().count();
        eprintln!(
            "fwbench: report of {} run(s) written to {}{}",
            report.runs.len(),
            out.display(),
            if warnings > 0 {
                format!(" ({warnings} warnings: see its Warnings section)")
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// After a run: its HTML report, if asked for (or the default experiment).
fn report_after_run(store: &Store, run_id: i64, path: &Path) -> Result<()> {
    let r = report::load(store, Some(run_id))?;
    std::fs::write(path, r.html()).with_context(|| format!("writing {}", path.display()))?;
    println!("Report: {}", path.display());
    Ok(())
}

/// A scenario that leaves the topology open runs on a named testbed's topology.
fn apply_testbed_topology(plan: &mut Plan, testbeds: &Testbeds) {
    if let (Some(tb), false) = (&testbeds.named, plan.topology_given) {
        for t in plan.trials.iter_mut() {
            t.params.topology = tb.topology;
            t.params.chain = crate::rules::chain_of(tb.topology);
            t.key = scenario::trial_key(&t.params, t.rep);
        }
    }
}

/// A run stops after this many failed trials in a row: something is broken, and
/// thousands of identical failures help no one.
const MAX_FAILED_IN_A_ROW: usize = 10;

/// `fwbench run [SCENARIO]`.
pub fn run_scenario(args: &RunArgs) -> Result<ExitCode> {
    let (file, text) = match &args.scenario {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| usage(format!("{}: cannot read scenario: {e}", p.display())))?;
            (p.display().to_string(), text)
        }
        None => (
            "(default scenario)".to_string(),
            DEFAULT_SCENARIO.to_string(),
        ),
    };
    let mut plan: Plan = scenario::parse(&file, &text, fresh_seed()).map_err(usage)?;
    let testbed_name = args.testbed.clone().or(plan.testbed.clone());
    if args.dry_run {
        print!(
            "{}",
            output::plan_listing(&plan, |p| estimate_s(p, plan.warmup_s))
        );
        return Ok(ExitCode::SUCCESS);
    }
    require_root()?;
    let mut testbeds = Testbeds::new(testbed_name.as_deref())?;
    apply_testbed_topology(&mut plan, &testbeds);
    for t in &plan.trials {
        testbeds.check(&t.params)?;
    }
    let params: Vec<TrialParams> = plan.trials.iter().map(|t| t.params.clone()).collect();
    preflight(&params)?;
    let mut store = Store::open(&args.db).map_err(|e| usage(e.to_string()))?;
    install_interrupt_handler();
    // Resume the newest unfinished run of this very scenario text, with its seed, so
    // every trial keeps its key: finished trials are skipped, failed ones run again.
    let resumed = match store.resumable_run(&text)? {
        Some(r) if !args.fresh => {
            if r.seed != plan.seed {
                plan = scenario::parse(&file, &text, r.seed).map_err(usage)?;
                apply_testbed_topology(&mut plan, &testbeds);
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
    eprintln!(
        "fwbench: {} — {} trials, about {}, results → {} (run {run_id}, seed {})",
        plan.name,
        plan.trials.len(),
        fmt_eta(
            plan.trials
                .iter()
                .map(|t| estimate_s(&t.params, plan.warmup_s))
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
            .map(|t| estimate_s(&t.params, plan.warmup_s))
            .sum();
        let eta = if i == 0 {
            left
        } else {
            // Scale the estimate by how this run has gone so far.
            let done_est: f64 = plan.trials[..i]
                .iter()
                .map(|t| estimate_s(&t.params, plan.warmup_s))
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
        let tb = testbeds.get(t.params.topology)?;
        if let Some(w) = plan.warmup_s {
            // Unmeasured traffic first (caches, ARP/ND, conntrack, CPU clocks): a trial
            // of its own, discarded.
            let mut warm = t.params.clone();
            warm.duration_s = w;
            if warm.workload == Workload::Ndr {
                warm.workload = Workload::Flood;
            } else if warm.workload == Workload::Degrade {
                warm.workload = Workload::Flow;
            }
            match trial::run_trial(tb, &warm, &plan.pinning, &INTERRUPTED) {
                Err(e) if e.is::<Interrupted>() => {
                    interrupted = true;
                    break;
                }
                Err(e) => return Err(e),
                Ok(_) => {}
            }
        }
        let result = if crate::search::is_search(&t.params) {
            run_search_trial(tb, t, &plan.pinning, &mut store, run_id)
        } else {
            trial::run_trial(tb, &t.params, &plan.pinning, &INTERRUPTED)
        };
        let outcome = match result {
            Ok(o) => o,
            Err(e) if e.is::<Interrupted>() => {
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        };
        store
            .insert_trial(&record(run_id, t, &outcome))
            .context("storing the trial")?;
        eprintln!("    {}", output::outcome_line(&outcome));
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
    println!("{}", output::summary_table(&plan.name, &rows));
    println!(
        "{} of {} trials stored in {} (run {run_id}).",
        rows.len(),
        n,
        args.db.display()
    );
    let report_path = args
        .report
        .clone()
        .or_else(|| args.scenario.is_none().then(|| "report.html".into()));
    if let Some(path) = report_path {
        if let Err(e) = report_after_run(&store, run_id, &path) {
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
    tb: &Testbed,
    t: &PlannedTrial,
    pin: &Pinning,
    store: &mut Store,
    run_id: i64,
) -> Result<Outcome> {
    let started_at = crate::clock::now_utc();
    let mut step = 0u32;
    let mut runner = |q: &TrialParams| -> Result<Outcome> {
        step += 1;
        let o = trial::run_trial(tb, q, pin, &INTERRUPTED)?;
        let planned = PlannedTrial {
            key: scenario::trial_key(q, t.rep * 10_000 + step),
            rep: t.rep,
            params: q.clone(),
        };
        store
            .insert_trial(&record(run_id, &planned, &o))
            .context("storing a search step")?;
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

/// A series of trials on one testbed, each stored as it finishes (single trials,
/// searches). Ctrl-C ends it with `Interrupted`; the run is marked accordingly.
pub struct Session {
    testbeds: Testbeds,
    store: Option<Store>,
    run_id: Option<i64>,
    topology: Topology,
    pin: Pinning,
    trials: u32,
}

impl Session {
    /// Check everything about `params` (bad input → exit 2) and prepare the testbed.
    /// `params.topology` is set from a named testbed unless the user gave one.
    pub fn open(
        name: &str,
        params: &mut TrialParams,
        topology_given: bool,
        pin: Pinning,
        testbed: Option<&str>,
        db: Option<&Path>,
    ) -> Result<Session> {
        require_root()?;
        let testbeds = Testbeds::new(testbed)?;
        if let (Some(tb), false) = (&testbeds.named, topology_given) {
            params.topology = tb.topology;
            params.chain = crate::rules::chain_of(tb.topology);
        }
        testbeds.check(params)?;
        preflight(std::slice::from_ref(params))?;
        let store = match db {
            Some(p) => Some(Store::open(p).map_err(|e| usage(e.to_string()))?),
            None => None,
        };
        install_interrupt_handler();
        let run_id = match &store {
            Some(s) => Some(begin(s, name, None, params.seed, None)?),
            None => None,
        };
        Ok(Session {
            testbeds,
            store,
            run_id,
            topology: params.topology,
            pin,
            trials: 0,
        })
    }

    /// Run one trial and store it before returning.
    pub fn trial(&mut self, params: &TrialParams) -> Result<Outcome> {
        self.trials += 1;
        let planned = PlannedTrial {
            key: scenario::trial_key(params, self.trials),
            rep: self.trials,
            params: params.clone(),
        };
        let tb = self.testbeds.get(self.topology)?;
        let outcome = match trial::run_trial(tb, params, &self.pin, &INTERRUPTED) {
            Ok(o) => o,
            Err(e) => {
                if e.is::<Interrupted>() {
                    self.finish("interrupted")?;
                }
                return Err(e);
            }
        };
        if let (Some(store), Some(run_id)) = (self.store.as_mut(), self.run_id) {
            store
                .insert_trial(&record(run_id, &planned, &outcome))
                .context("storing the trial")?;
        }
        Ok(outcome)
    }

    pub fn finish(&mut self, status: &str) -> Result<()> {
        if let (Some(store), Some(run_id)) = (self.store.as_ref(), self.run_id.take()) {
            store.finish_run(run_id, &crate::clock::now_utc(), status)?;
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.finish("failed");
    }
}

/// `fwbench echo|flood|flow|ping`: one trial, on an ephemeral or named testbed.
pub fn run_single(
    mut params: TrialParams,
    topology_given: bool,
    pin: Pinning,
    testbed: Option<&str>,
    db: Option<&Path>,
    json: bool,
) -> Result<ExitCode> {
    let name = params.workload.as_str();
    let mut session = Session::open(name, &mut params, topology_given, pin, testbed, db)?;
    let outcome = session.trial(&params)?;
    session.finish("complete")?;
    drop(session);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&output::trial_json(&params, &outcome))?
        );
    } else {
        print!("{}", output::trial_text(&params, &outcome));
    }
    Ok(match outcome.status {
        Status::Ok => ExitCode::SUCCESS,
        Status::Unavailable | Status::Failed => ExitCode::from(1),
    })
}
