//! What every command that runs trials shares: root check, Ctrl-C, the testbeds of a
//! run, the pre-flight check of rule sets, opening a run in the store, and a
//! [`Session`] of trials stored one by one (single trials, searches from the CLI).

use crate::error::usage;
use crate::error::Interrupted;
use crate::exec::trial::{self};
use crate::host::marker::TrialMark;
use crate::outcome::{Outcome, Status};
use crate::output;
use crate::params::topology::Topology;
use crate::params::{Pinning, Placement, TrialParams};
use crate::plan::scenario::{self, PlannedTrial};
use crate::run::record::record;
use crate::testbed::netns::{EphemeralTestbed, NetnsTestbed};
use crate::testbed::{Host, Testbed};
use anyhow::Result;
use firewall::Engine;
use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use store::{NewRun, Store};

pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub fn install_interrupt_handler() {
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
    if crate::sys::euid() != 0 {
        return Err(usage(
            "this needs root (network namespaces, veth, sysctls): run it with sudo or as root",
        ));
    }
    Ok(())
}

/// Testbeds for a run: one named testbed (local namespaces, or a testbed file of
/// hosts reached through launchers), or ephemeral ones made per topology on demand.
///
/// Every trial should start from the same gateway: each trial is compared with the
/// first snapshot of its testbed's gateway (see [`Outcome::judge_start`]). A trial that
/// leaves what cannot be undone (a legacy x_tables table stays instantiated in its
/// namespace) gets a fresh ephemeral testbed after it; a named testbed of local
/// namespaces (fwbench's, `testbed up --name`) is rebuilt with its name and addresses;
/// one fwbench does not own (a testbed file) is kept, with a warning, and later trials
/// on it are marked. The same when the named testbed's previous trial never ended
/// (interrupted or killed: its trial mark, [`TrialMark`], is still there): rebuilt
/// before this run's first trial, or every trial of this run marked.
pub struct Testbeds {
    pub named: Option<Box<dyn Testbed>>,
    pub ephemeral: HashMap<Topology, EphemeralTestbed>,
    /// Per testbed topology: its gateway's state at the first trial.
    first_state: HashMap<Topology, proto::NetState>,
    /// The named testbed's residue was reported already.
    warned: bool,
    /// Why every trial of this run on the named testbed is not clean at start (its
    /// previous trial was interrupted and it cannot be rebuilt).
    unclean: Option<String>,
    /// A named testbed is used by one run at a time (two would share its table and
    /// wipe each other's rules): held while this lives.
    _lock: Option<crate::lock::Lock>,
    /// Live per-interval output of every trial (`-i/--interval`).
    pub live: Option<crate::exec::live::Live>,
}

impl Testbeds {
    /// `named` is a testbed's name, or a path to a testbed file (see
    /// [`crate::testbed::file::is_file`]); a file's hosts are reached (and given
    /// this binary) now, so an unreachable host is bad input (exit 2).
    pub fn new(named: Option<&str>) -> Result<Testbeds> {
        // A named testbed is locked before anything reaches its hosts.
        let lock = crate::lock::testbed;
        let (named, _lock): (Option<Box<dyn Testbed>>, _) = match named {
            None => (None, None),
            Some(f) if crate::testbed::file::is_file(f) => {
                let tb = crate::testbed::file::load(Path::new(f))?;
                let l = lock(tb.name())?;
                tb.prepare()?;
                (Some(Box::new(tb)), Some(l))
            }
            Some(n) => {
                crate::testbed::netns::check_name(n)?;
                let tb = NetnsTestbed::find(n)?.ok_or_else(|| {
                    usage(format!(
                        "--testbed {n}: no such testbed (create it with `fwbench testbed up --name {n}`)"
                    ))
                })?;
                let l = lock(n)?;
                (Some(Box::new(tb)), Some(l))
            }
        };
        let mut unclean = None;
        if let Some(tb) = &named {
            if let Some(why) = TrialMark::interrupted(tb.name()) {
                if tb.rebuild()? {
                    eprintln!(
                        "fwbench: testbed {}: {why}; rebuilt the testbed (same name and \
                         addresses) so the next trial starts clean",
                        tb.name()
                    );
                } else {
                    eprintln!(
                        "fwbench: testbed {}: {why}; its hosts are not fwbench's to rebuild, \
                         so this run's trials on it are marked 'not clean at start'",
                        tb.name()
                    );
                    unclean = Some(format!("the testbed's previous trial: {why}"));
                }
            }
        }
        Ok(Testbeds {
            named,
            ephemeral: HashMap::new(),
            first_state: HashMap::new(),
            warned: false,
            unclean,
            _lock,
            live: None,
        })
    }

    pub fn check(&self, p: &TrialParams) -> Result<()> {
        if let Some(tb) = &self.named {
            if tb.topology() != p.topology.testbed() {
                return Err(usage(format!(
                    "testbed '{}' has topology {}, but a trial asks for {}",
                    tb.name(),
                    tb.topology(),
                    p.topology
                )));
            }
            tb.check_trial(p.family, crate::params::events::client_addresses(p))?;
            check_spread(tb.as_ref(), p)?;
            if tb.gateway_is_external() && p.engine != firewall::Engine::None {
                return Err(usage(format!(
                    "testbed '{}': engine {} needs rules on the gateway, but its gateway is \
                     external (an appliance fwbench has no agent on): only engine none",
                    tb.name(),
                    p.engine
                )));
            }
        }
        Ok(())
    }

    pub fn get(&mut self, topology: Topology) -> Result<&dyn Testbed> {
        if let Some(tb) = self.named.as_mut() {
            tb.bring_up()?;
        }
        if let Some(tb) = &self.named {
            return Ok(tb.as_ref());
        }
        let e = match self.ephemeral.entry(topology.testbed()) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(EphemeralTestbed::create(topology.testbed())?)
            }
        };
        Ok(&e.tb)
    }

    /// Run one trial on the testbed of `topology` (with `--load`, after the short
    /// search for the capacity its background is a share of: `search::load`), mark
    /// whether its gateway started clean, and replace an ephemeral testbed whose
    /// gateway it left changed.
    pub fn run_trial(
        &mut self,
        topology: Topology,
        p: &TrialParams,
        pin: &Pinning,
        stop: &AtomicBool,
    ) -> Result<Outcome> {
        if crate::search::load::unsettled(p) {
            // The search's floods carry no events: they come back here settled.
            let settled = crate::search::load::with_load(p, &mut |q: &TrialParams| {
                self.run_trial(topology, q, pin, stop)
            })?;
            return self.run_trial(topology, &settled, pin, stop);
        }
        // Left in place unless this trial ends and its residue is dealt with.
        let mark = self.named.as_ref().and_then(|tb| {
            TrialMark::begin(tb.name())
                .map_err(|e| tracing::warn!("trial mark of testbed {}: {e}", tb.name()))
                .ok()
        });
        let mut live = self.live.take();
        let res = self
            .get(topology)
            .and_then(|tb| trial::run_trial(tb, p, pin, stop, live.as_mut()));
        self.live = live;
        let mut o = res?;
        let undone = o.gateway.as_ref().and_then(|g| g.residue.as_ref());
        if let Some(r) = undone.filter(|r| !r.removed_before.is_empty()) {
            let tb = self.named.as_ref().map_or("(ephemeral)", |tb| tb.name());
            eprintln!(
                "fwbench: testbed {tb}: an fwbench process that died during an earlier trial \
                 left changes on the gateway; undone before this trial, which started clean: \
                 {}",
                r.removed_before.join("; ")
            );
        }
        let key = topology.testbed();
        if let Some(before) = o.gateway_state_before() {
            let first = self
                .first_state
                .entry(key)
                .or_insert_with(|| before.clone());
            o.judge_start(&first.clone());
            if let Some(why) = &self.unclean {
                o.clean_start = Some(false);
                o.start_differences.push(why.clone());
            }
        }
        let left = residue_of(&o, p, self.named.is_none());
        let left = &left;
        if !left.is_empty() {
            match &self.named {
                Some(tb) if tb.rebuild()? => {
                    if !self.warned {
                        self.warned = true;
                        eprintln!(
                            "fwbench: testbed {}: the gateway kept {} after a trial; rebuilt \
                             the testbed (same name and addresses) so the next trial starts \
                             clean, after each such trial (said once)",
                            tb.name(),
                            left.join(", ")
                        );
                    }
                }
                Some(tb) if !self.warned => {
                    self.warned = true;
                    eprintln!(
                        "fwbench: testbed {}: the gateway keeps {} after a trial; later \
                         trials on it are marked 'not clean at start' (`fwbench testbed \
                         down` and `up` make it new)",
                        tb.name(),
                        left.join(", ")
                    );
                }
                Some(_) => {}
                None => {
                    if !self.warned {
                        self.warned = true;
                        crate::run::report::say_gateway_residue_once(left);
                    }
                    // Dropped: torn down; the next trial gets a new one.
                    self.ephemeral.remove(&key);
                }
            }
        }
        if let Some(m) = mark {
            if !stop.load(Ordering::SeqCst) {
                m.end();
            }
        }
        Ok(o)
    }
}

/// What a trial may have left on its gateway that the next trial must not inherit: what
/// the gateway reported it kept; when it reported nothing because the trial failed or was
/// unavailable after the firewall's setup may have begun (seed 000's SCTP trials: the
/// gateway's legacy tables installed, then the server refused SCTP), that its state is
/// unknown; and a start already not clean (whatever dirtied it: at most one trial runs on
/// such a gateway). Empty: the next trial may use the same gateway. The last two only
/// on an `ephemeral` testbed: a named one keeps the crash marker's way (the next trial's
/// gateway removes what a killed agent listed) and marks later trials not clean.
fn residue_of(o: &Outcome, p: &TrialParams, ephemeral: bool) -> Vec<String> {
    let left = o.gateway_left();
    if !left.is_empty() || !ephemeral {
        return left.to_vec();
    }
    let aborted = matches!(o.status, Status::Failed | Status::Unavailable);
    // Its agent started: it may have set up the firewall before another role failed.
    let gateway_started = o.placement.iter().any(|r| r.role == "gateway");
    if aborted && o.gateway.is_none() && gateway_started && p.engine != Engine::None {
        return vec![format!(
            "an unknown state (a trial on {} ended {} before its gateway reported)",
            p.engine.name(),
            o.status.as_str()
        )];
    }
    o.start_differences.clone()
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

fn tools_for_record() -> Vec<(String, String)> {
    crate::host::check::probe()
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

/// Record the metadata of each role's host of the run's named testbed (testbed files).
pub fn record_role_hosts(store: &Store, run_id: i64, testbeds: &Testbeds) -> Result<()> {
    if let Some(tb) = &testbeds.named {
        let hosts = tb.host_metadata();
        if !hosts.is_empty() {
            store.set_role_hosts(run_id, &hosts)?;
        }
    }
    Ok(())
}

/// Where a session stores its trials: the results file and the run's labels
/// (`--tag KEY=VALUE`, validated: [`crate::run::tags`]).
#[derive(Clone, Copy)]
pub struct StoreAt<'a> {
    pub db: &'a Path,
    pub tags: &'a [(String, String)],
}

pub fn begin(
    store: &Store,
    scenario: &str,
    text: Option<String>,
    seed: u64,
    baseline: Option<serde_json::Value>,
    tags: &[(String, String)],
) -> Result<i64> {
    Ok(store.begin_run(&NewRun {
        started_at: crate::clock::now_utc(),
        scenario: scenario.into(),
        scenario_text: text,
        seed,
        command: command_line(),
        host: crate::host::info::collect(tools_for_record()),
        baseline,
        tags: tags.to_vec(),
    })?)
}

/// What a dry run checks without touching the host: the testbed named (a name is
/// valid, a file parses; its hosts are not contacted) and every import file (it
/// exists, is a regular file within the size limit, and parses).
/// A role spread over several hosts runs only what its workload can spread (bad input
/// otherwise).
fn check_spread(tb: &dyn Testbed, p: &TrialParams) -> Result<()> {
    let (clients, servers) = (tb.hosts_of(Host::Client), tb.hosts_of(Host::Server));
    crate::workloads::traffic(&p.kind)
        .spread(p, clients, servers)
        .map_err(|e| usage(format!("testbed '{}': {e}", tb.name())))
}

pub fn dry_check(testbed: Option<&str>, trials: &[TrialParams]) -> Result<()> {
    match testbed {
        Some(f) if crate::testbed::file::is_file(f) => {
            let tb = crate::testbed::file::load(Path::new(f))?;
            for p in trials {
                check_spread(&tb, p)?;
            }
        }
        Some(n) => crate::testbed::netns::check_name(n)?,
        None => {}
    }
    let mut seen = std::collections::HashSet::new();
    for p in trials {
        if p.model == firewall::models::Model::Import && seen.insert((&p.import, p.family)) {
            crate::rules::build(p).map_err(usage)?;
        }
    }
    Ok(())
}

/// Bad input is found before any testbed exists: every distinct rule set renders,
/// its tools are installed, an import file passes the engine's own check.
pub fn preflight(trials: &[TrialParams]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    // A sweep over `aim` (hot rules) may name rules a flood cannot reach: those
    // trials are unavailable, not the whole run refused.
    let aims: std::collections::HashSet<_> = trials
        .iter()
        .map(|p| p.packet().and_then(|k| k.aim.as_deref()))
        .collect();
    for p in trials {
        if let Some(k) = p.packet() {
            let a = crate::rules::addressing(p.family, p.clients.max(1));
            crate::rules::check_addrs(k, &a.clients, a.server).map_err(usage)?;
        }
        let events = p.events.as_ref();
        let key = serde_json::to_string(&(
            p.engine, p.model, p.rules, p.position, p.chain, p.family, p.proto, p.clients,
            &p.import, p.topology, events,
        ))?;
        if !seen.insert(key) {
            continue;
        }
        match crate::rules::build(p).map_err(usage)? {
            Some(r) => crate::rules::preflight(p, &r, aims.len() <= 1).map_err(usage)?,
            None if events.is_some() => {
                return Err(usage(
                    "--event changes fwbench's rule set on the gateway: give an --engine other than none",
                ))
            }
            None => {}
        }
    }
    Ok(())
}

/// Whether a trial's default placement gives the gateway a CPU of its own: its traffic
/// is packet-rate work ([`crate::workloads::Profile::gateway_cpu`]) through a gateway.
fn own_gateway_cpu(p: &TrialParams) -> bool {
    p.topology.has_gateway() && crate::workloads::traffic(&p.kind).profile().gateway_cpu
}

/// Whether trials on `testbed` (`None`: an ephemeral one) run on this machine's local
/// testbed (not a testbed file's hosts): only there is the default placement pinned.
pub fn local_testbed(testbed: Option<&str>) -> bool {
    testbed.is_none_or(|t| !crate::testbed::file::is_file(t))
}

/// The pinning one trial of a scenario runs with: its `[testbed] pin_*` as given, or,
/// when it gives none, the trial commands' default ([`Placement::resolve`]: a gateway
/// with packet-rate traffic gets a CPU of its own) — a scenario without pins measures
/// what `fwbench flood` measures, not the sender's CPU carrying the gateway's softirq.
pub fn scenario_pinning(pins: &Pinning, p: &TrialParams, local: bool) -> Pinning {
    let placement = if *pins == Pinning::default() {
        Placement::Default
    } else {
        Placement::Given(pins.clone())
    };
    placement.resolve(local && own_gateway_cpu(p), crate::host::probe::cpus())
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
    /// Trials that could not be stored (kept in a recovery file): the first error.
    not_stored: Option<anyhow::Error>,
}

impl Session {
    /// Check everything about `params` (bad input → exit 2) and prepare the testbed.
    /// `params.topology` is set from a named testbed unless the user gave one; the
    /// placement's default is settled by the trial and the testbed.
    pub fn open(
        name: &str,
        params: &mut TrialParams,
        topology_given: bool,
        pin: Placement,
        testbed: Option<&str>,
        db: Option<StoreAt>,
    ) -> Result<Session> {
        require_root()?;
        let testbeds = Testbeds::new(testbed)?;
        if let (Some(tb), false) = (&testbeds.named, topology_given) {
            params.topology = tb.topology();
            params.chain = crate::params::topology::chain_of(tb.topology());
        }
        let local = local_testbed(testbed);
        let pin = pin.resolve(local && own_gateway_cpu(params), crate::host::probe::cpus());
        testbeds.check(params)?;
        preflight(std::slice::from_ref(params))?;
        let store = match db {
            Some(at) => Some(Store::open(at.db).map_err(crate::error::store_error)?),
            None => None,
        };
        let tags = db.map(|at| at.tags).unwrap_or_default();
        store.iter().for_each(crate::run::recovery::say_recovered);
        install_interrupt_handler();
        let run_id = match &store {
            Some(s) => {
                let id = begin(s, name, None, params.seed, None, tags)?;
                record_role_hosts(s, id, &testbeds)?;
                Some(id)
            }
            None => None,
        };
        Ok(Session {
            testbeds,
            store,
            run_id,
            topology: params.topology,
            pin,
            trials: 0,
            not_stored: None,
        })
    }

    /// Run one trial and store it before returning.
    pub fn trial(&mut self, params: &TrialParams) -> Result<Outcome> {
        self.trial_of(params, None)
    }

    /// Run one step of a search (`of`) and store it, marked as one, before returning.
    pub fn step(&mut self, params: &TrialParams, of: results::StepOf) -> Result<Outcome> {
        self.trial_of(params, Some(of))
    }

    fn trial_of(&mut self, params: &TrialParams, of: Option<results::StepOf>) -> Result<Outcome> {
        let planned = self.next(params);
        let outcome = match self
            .testbeds
            .run_trial(self.topology, params, &self.pin, &INTERRUPTED)
        {
            Ok(o) => o,
            Err(e) => {
                if e.is::<Interrupted>() {
                    self.finish("interrupted")?;
                }
                return Err(e);
            }
        };
        self.keep(&planned, &outcome, of);
        Ok(outcome)
    }

    /// The session's next trial of `params` (its repetition number and key).
    fn next(&mut self, params: &TrialParams) -> PlannedTrial {
        self.trials += 1;
        PlannedTrial {
            key: scenario::trial_key(params, self.trials),
            rep: self.trials,
            params: params.clone(),
        }
    }

    /// Store `outcome` (or keep it in the recovery file, the first error noted).
    fn keep(&mut self, planned: &PlannedTrial, outcome: &Outcome, of: Option<results::StepOf>) {
        if let (Some(store), Some(run_id)) = (self.store.as_mut(), self.run_id) {
            let rec = match of {
                Some(of) => crate::run::record::record_step(run_id, planned, outcome, of),
                None => record(run_id, planned, outcome),
            };
            if let Err(e) = crate::run::recovery::store_or_keep(store, &rec) {
                self.not_stored.get_or_insert(e);
            }
        }
    }

    /// Store an outcome the session's trials made (a search's answer from its steps)
    /// as one more trial of `params`, as a scenario stores its searches.
    pub fn store(&mut self, params: &TrialParams, outcome: &Outcome) {
        let planned = self.next(params);
        self.keep(&planned, outcome, None);
    }

    /// The error of the first trial that could not be stored (its result was kept in a
    /// recovery file); the caller prints the trials first, then returns this.
    pub fn take_not_stored(&mut self) -> Option<anyhow::Error> {
        self.not_stored.take()
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

/// How a single trial reports: at the end (text or one JSON object), or live.
pub enum Output {
    Final {
        json: bool,
    },
    /// A line (or, `json_stream`, a JSON object) per interval, then the end. With
    /// `json` (and no stream) the lines go to stderr: stdout keeps its one JSON object.
    Live {
        every: std::time::Duration,
        json_stream: bool,
        json: bool,
    },
}

/// `fwbench echo|flood|flow|ping`: one trial (or `repeat` trials of the same
/// configuration, stored in one run), on an ephemeral or named testbed. With more
/// than one repetition each trial is printed as it ends (`-J`: one JSON array at the
/// end); the exit code is the worst of the trials'.
#[allow(clippy::too_many_arguments)]
pub fn run_single(
    mut params: TrialParams,
    topology_given: bool,
    pin: Placement,
    testbed: Option<&str>,
    db: Option<StoreAt>,
    out: Output,
    repeat: u32,
) -> Result<ExitCode> {
    let name = params.name();
    let mut session = Session::open(name, &mut params, topology_given, pin, testbed, db)?;
    // `--load`: the capacity search's floods stored as trials of the session, and the
    // trial shown and stored at the rate found (`search::load`).
    let params = crate::search::load::with_load(&params, &mut |q| {
        session.step(q, results::StepOf::Capacity)
    })?;
    let (json, stream) = match out {
        Output::Final { json } => (json, None),
        Output::Live {
            every,
            json_stream,
            json,
        } => {
            let iv = std::rc::Rc::new(std::cell::RefCell::new(output::live::Intervals::new(
                &params.kind,
            )));
            let seen = iv.clone();
            session.testbeds.live = Some(crate::exec::live::Live {
                every,
                observe: Box::new(move |t| {
                    if let Some(i) = seen.borrow_mut().tick(t) {
                        if json_stream {
                            println!("{}", i.json());
                        } else if json {
                            eprintln!("{}", i.text());
                        } else {
                            println!("{}", i.text());
                        }
                    }
                }),
            });
            (
                json_stream || json,
                Some(iv).filter(|_| json_stream || !json),
            )
        }
    };
    let repeat = repeat.max(1);
    let mut array = Vec::new();
    let mut code = 0u8;
    for i in 0..repeat {
        if let Some(iv) = &stream {
            *iv.borrow_mut() = output::live::Intervals::new(&params.kind);
        }
        if repeat > 1 && !json {
            println!("repetition {} of {repeat}", i + 1);
        }
        let outcome = session.trial(&params)?;
        if let (Some(iv), false) = (&stream, json) {
            println!("{}", iv.borrow().end_text(&outcome));
        }
        if let Some(iv) = stream.as_ref().filter(|_| json) {
            let trial = output::trial_json(&params, &outcome);
            println!("{}", iv.borrow().end_json(trial, &outcome));
        } else if json && repeat > 1 {
            array.push(output::trial_json(&params, &outcome));
        } else if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&output::trial_json(&params, &outcome))?
            );
        } else {
            print!("{}", output::trial_text(&params, &outcome));
        }
        code = code.max(match outcome.status {
            Status::Ok => 0,
            // Measured: the imported ruleset dropped the traffic, or a figure's witness
            // did not hold, and the status says so.
            Status::Dropped | Status::Flagged => 0,
            Status::Unavailable | Status::Failed => 1,
        });
    }
    let not_stored = session.take_not_stored();
    let finished = session.finish(if not_stored.is_some() {
        "failed"
    } else {
        "complete"
    });
    drop(session);
    if !array.is_empty() {
        println!("{}", serde_json::to_string_pretty(&array)?);
    }
    if let Some(e) = not_stored {
        return Err(e);
    }
    finished?;
    Ok(ExitCode::from(code))
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
