//! `fwbench workload FILE`: the workload language run inside the client namespace,
//! with the trial commands' firewall options (`--engine`, `--rules`, `--model`, …: the
//! rules stand on the gateway while the commands run); its commands (start, duration,
//! exit) and the gateway's rule-set figures stored as one trial of workload `worklang`
//! in the results file, which `fwbench report` reads like any other run.

use crate::error::usage;
use crate::error::Interrupted;
use crate::output;
use crate::params::search::Asked;
use crate::params::topology::Topology;
use crate::params::workload::Workload;
use crate::params::TrialParams;
use crate::plan::axes::AxisValues;
use crate::plan::flags::FirewallArgs;
use crate::process::program_exists;
use crate::run::session::install_interrupt_handler;
use crate::run::session::require_root;
use crate::run::session::Testbeds;
use crate::run::session::INTERRUPTED;
use crate::testbed::launcher::Agent;
use crate::testbed::{Host, Testbed};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// `fwbench workload FILE`: parse (bad input → exit 2 with file:line:col), check that
/// every command exists, then run it inside the client's namespace and summarise.
pub fn run_workload(a: &crate::run::worklang::WorkloadArgs) -> Result<ExitCode> {
    let tags = a.tags.tags()?;
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
    let fw = firewall_params(a)?;
    let request = crate::rules::request(&fw).map_err(usage)?.map(Box::new);
    require_root()?;
    let mut store = match (&a.db, a.no_store) {
        (Some(p), false) => Some(store::Store::open(p).map_err(crate::error::store_error)?),
        _ => None,
    };
    install_interrupt_handler();
    let mut testbeds = Testbeds::new(a.testbed.as_deref())?;
    let run_id = match &store {
        Some(s) => {
            let id = crate::run::session::begin(s, &name, Some(text.clone()), 0, None, &tags)?;
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
        .unwrap_or(fw.topology);
    let tb = testbeds.get(topology)?;
    let client = tb
        .launcher(Host::Client)
        .expect("every testbed has a client host");
    let gateway = match request {
        Some(r) => Some(gateway_up(tb, r)?),
        None => None,
    };
    let (prefix, ns) = (client.prefix, client.host);
    eprintln!(
        "fwbench: {} commands from {name} in {ns}",
        crate::worklang::count(&jobs)
    );
    let t0 = Instant::now();
    let ran = crate::worklang::run(&jobs, &prefix, &INTERRUPTED);
    let total_s = t0.elapsed().as_secs_f64();
    let firewall = match gateway {
        Some(g) => gateway_down(g)?,
        None => None,
    };
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
                "topology": topology.to_string(), "namespace": ns,
                "engine": fw.engine, "model": fw.model, "rules": fw.rules,
                "position": fw.position, "nft_family": fw.nft_family, "import": fw.import}),
            placement: serde_json::json!([]),
            results: serde_json::json!({"worklang": {"total_s": total_s,
                "commands": ran.len(), "failed": failed, "ran": ran},
                "gateway": {"firewall": firewall}}),
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
                "firewall": firewall,
            }))?
        );
    } else {
        print!("{}", output::workload_text(&name, total_s, &ran));
        if let Some(f) = &firewall {
            print!("{}", output::workload_firewall_text(f));
        }
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
    /// Topology of the ephemeral testbed: forward (default), direct, input
    #[arg(long, value_parser = crate::params::values::topology)]
    pub topology: Option<Topology>,
    /// Print one JSON object (every command with start, duration, exit) instead of text
    #[arg(long, short = 'J')]
    pub json: bool,
    /// Results file: the workload is stored as a run of one `worklang` trial
    #[arg(long, value_name = "FILE", default_value = "results.db")]
    pub db: Option<PathBuf>,
    /// Do not store the results
    #[arg(long)]
    pub no_store: bool,
    #[command(flatten)]
    pub tags: crate::run::tags::TagArgs,
    #[command(flatten)]
    pub fw: FirewallArgs,
}

/// The rule set the firewall flags ask for, built as a trial's (a TCP connection
/// workload's: the commands' traffic is the user's own) through the one builder; bad
/// input → exit 2 before anything is touched.
pub fn firewall_params(a: &WorkloadArgs) -> Result<TrialParams> {
    let mut v = AxisValues::defaults(Asked::Traffic(Workload::Sessions));
    a.fw.set(&mut v, a.topology)?;
    let p = crate::plan::build::build(&v, 0, &Default::default()).map_err(usage)?;
    Ok(p)
}

/// The gateway agent with the rule set installed, started (its counters run).
pub(crate) fn gateway_up(tb: &dyn Testbed, firewall: Box<firewall::Request>) -> Result<Agent> {
    let l = tb.launcher(Host::Gateway).ok_or_else(|| {
        usage(format!(
            "testbed {} has no gateway to install the rules on (use topology forward or input)",
            tb.name()
        ))
    })?;
    let mut g = Agent::spawn(&l, "gateway", None)?;
    let spec = proto::GatewaySpec {
        sysctls: vec![],
        firewall: Some(firewall),
        steer_cpus: None,
        proxy: None,
        events: vec![],
        conntrack: None,
    };
    g.request(proto::ToAgent::Setup(proto::RoleSpec::Gateway(spec)))?;
    g.request(proto::ToAgent::Start)?;
    Ok(g)
}

/// Stop the gateway agent, take its rule-set figures, and let it undo its setup.
pub(crate) fn gateway_down(mut g: Agent) -> Result<Option<Box<firewall::Report>>> {
    let firewall = match g.request(proto::ToAgent::Stop)? {
        proto::FromAgent::Results {
            results: proto::RoleResults::Gateway(r),
            ..
        } => r.firewall,
        other => anyhow::bail!("gateway agent answered stop with {}", other.name()),
    };
    g.teardown()?;
    Ok(firewall)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        a: WorkloadArgs,
    }

    fn params(args: &[&str]) -> Result<TrialParams> {
        let cmd = Cmd::try_parse_from([&["workload", "w.txt"][..], args].concat())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        firewall_params(&cmd.a)
    }

    /// The trial commands' firewall options, built through the one builder.
    #[test]
    fn firewall_options_are_the_trial_commands() {
        let none = params(&[]).unwrap();
        assert_eq!(none.engine, firewall::Engine::None);
        assert!(crate::rules::request(&none).unwrap().is_none());
        let p = params(&[
            "--engine",
            "nft",
            "--rules",
            "100",
            "--position",
            "middle",
            "--nft-family",
            "ip",
        ])
        .unwrap();
        assert_eq!(p.engine, firewall::Engine::Nft);
        assert_eq!(p.rules, 100);
        assert_eq!(p.position, firewall::models::Position::Middle);
        assert_eq!(p.model, firewall::models::Model::Linear);
        assert_eq!(p.topology, Topology::Forward);
        let r = crate::rules::request(&p).unwrap().unwrap();
        assert_eq!(r.nft_family, firewall::NftFamily::Ip);
        assert_eq!(
            params(&["--chain", "input"]).unwrap().topology,
            Topology::Input
        );
        // Bad input is a usage error (exit 2), named as for the trial commands.
        for (args, says) in [
            (
                &["--model", "import"][..],
                "--model import needs --import FILE",
            ),
            (
                &["--engine", "iptables-legacy", "--nft-family", "ip"],
                "applies to engines nft and nft-set only",
            ),
            (&["--model", "conntrack"], "choose an --engine"),
        ] {
            let e = params(args).unwrap_err();
            assert!(
                e.downcast_ref::<crate::error::UsageError>().is_some(),
                "{e:#}"
            );
            assert!(format!("{e:#}").contains(says), "{args:?}: {e:#}");
        }
        assert!(params(&["--engine", "pf"]).is_err());
    }
}
