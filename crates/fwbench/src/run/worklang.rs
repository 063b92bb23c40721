//! `fwbench workload FILE`: the workload language run inside the client namespace; its
//! commands (start, duration, exit) stored as one trial of workload `worklang` in the
//! results file, which `fwbench report` reads like any other run.

use crate::error::usage;
use crate::error::Interrupted;
use crate::output;
use crate::params::topology::Topology;
use crate::process::program_exists;
use crate::run::session::install_interrupt_handler;
use crate::run::session::require_root;
use crate::run::session::Testbeds;
use crate::run::session::INTERRUPTED;
use crate::testbed::Host;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// `fwbench workload FILE`: parse (bad input → exit 2 with file:line:col), check that
/// every command exists, then run it inside the client's namespace and summarise.
pub fn run_workload(a: &crate::run::worklang::WorkloadArgs) -> Result<ExitCode> {
    let name = a.file.display().to_string();
    let text = crate::limits::read_user_file(&a.file, "workload file").map_err(usage)?;
    let jobs = crate::worklang::parse(&name, &text).map_err(usage)?;
    for (prog, (l, c)) in crate::worklang::commands(&jobs) {
        if !program_exists(prog) {
            return Err(usage(format!(
                "{name}:{l}:{c}: command '{prog}' not found (not a file, not in PATH)"
            )));
        }
    }
    require_root()?;
    let mut store = match (&a.db, a.no_store) {
        (Some(p), false) => Some(store::Store::open(p).map_err(|e| usage(e.to_string()))?),
        _ => None,
    };
    install_interrupt_handler();
    let mut testbeds = Testbeds::new(a.testbed.as_deref())?;
    let run_id = match &store {
        Some(s) => {
            let id = crate::run::session::begin(s, &name, Some(text.clone()), 0, None)?;
            crate::run::session::record_role_hosts(s, id, &testbeds)?;
            Some(id)
        }
        None => None,
    };
    let started_at = crate::clock::now_utc();
    let topology = testbeds
        .named
        .as_ref()
        .map(|t| t.topology())
        .unwrap_or(a.topology);
    let client = testbeds
        .get(topology)?
        .launcher(Host::Client)
        .expect("every testbed has a client host");
    let (prefix, ns) = (client.prefix, client.host);
    eprintln!(
        "fwbench: {} commands from {name} in {ns}",
        crate::worklang::count(&jobs)
    );
    let t0 = Instant::now();
    let ran = crate::worklang::run(&jobs, &prefix, &INTERRUPTED);
    let total_s = t0.elapsed().as_secs_f64();
    drop(testbeds);
    let failed = ran.iter().filter(|r| r.exit != Some(0)).count();
    if let (Some(s), Some(id)) = (store.as_mut(), run_id) {
        let interrupted = INTERRUPTED.load(Ordering::SeqCst);
        s.insert_trial(&store::TrialRecord {
            run_id: id,
            trial_key: "worklang".into(),
            rep: 1,
            workload: "worklang".into(),
            status: if failed > 0 { "failed" } else { "ok" }.into(),
            error: (failed > 0).then(|| format!("{failed} of {} commands failed", ran.len())),
            started_at,
            finished_at: crate::clock::now_utc(),
            params: serde_json::json!({"workload": "worklang", "file": name,
                "topology": topology.to_string(), "namespace": ns}),
            placement: serde_json::json!([]),
            results: serde_json::json!({"worklang": {"total_s": total_s,
                "commands": ran.len(), "failed": failed, "ran": ran}}),
            ..Default::default()
        })?;
        let status = if interrupted {
            "interrupted"
        } else {
            "complete"
        };
        s.finish_run(id, &crate::clock::now_utc(), status)?;
        eprintln!(
            "fwbench: stored in {} (run {id})",
            a.db.as_ref().expect("db").display()
        );
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "schema": crate::output::schema("workload"),
                "fwbench": crate::output::build_json(),
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

#[derive(Args)]
pub struct WorkloadArgs {
    /// Workload file (see docs/commands.md: `sequential 30 { command "..." }`)
    pub file: PathBuf,
    /// Run in this existing testbed's client namespace (else an ephemeral testbed)
    #[arg(long, value_name = "NAME")]
    pub testbed: Option<String>,
    /// Topology of the ephemeral testbed: forward, direct, input
    #[arg(long, default_value = "forward", value_parser = crate::params::values::topology)]
    pub topology: Topology,
    /// Print one JSON object (every command with start, duration, exit) instead of text
    #[arg(long, short = 'J')]
    pub json: bool,
    /// Results file: the workload is stored as a run of one `worklang` trial
    #[arg(long, value_name = "FILE", default_value = "results.db")]
    pub db: Option<PathBuf>,
    /// Do not store the results
    #[arg(long)]
    pub no_store: bool,
}
