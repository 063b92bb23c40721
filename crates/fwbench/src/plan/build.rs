//! The one front door from one trial's typed axis values to its checked parameters.
//!
//! [`build`] takes an [`AxisValues`] (set by a command's flags or a scenario row), runs
//! the builder ([`crate::plan::axes::trial_params`]), applies what the caller's
//! [`Context`] adds — the adaptive length, import files named relative to a scenario
//! file — and then every cross-field check ([`check_combination`]), in that order, for
//! every caller: trial commands, scenario files, `rules render`, `workload`, `rules
//! advise --measure` and the proof. A trial's key ([`trial_key`]) is computed from what
//! it returns, after, once.
//!
//! Must not: touch the host, or read files but an event trace (`--event-trace`,
//! `event_trace`: its operations are part of the trial's key, so it is read here,
//! once; import files are only named here).

use crate::params::events::EventParams;
use crate::params::topology::{chain_of, Topology};
use crate::params::values::ValueError;
use crate::params::{Adaptive, Conflict, TrialParams};
use crate::plan::axes::AxisValues;
use std::path::{Path, PathBuf};

/// Why one trial's values do not make a trial (bad input). The messages carry no
/// location: a scenario puts `file: case[2]:` (or the `adaptive` table's line) before
/// them, a command prints them as they are.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// A value that does not fit the trial's workload (a packet size for a connection
    /// workload), or event values that do not combine.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// Values each valid that cannot run together.
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// The adaptive length cannot apply to this trial.
    #[error("{0}")]
    Adaptive(Conflict),
}

/// For callers that carry messages as text (`error::usage`).
impl From<PlanError> for String {
    fn from(e: PlanError) -> String {
        e.to_string()
    }
}

/// What a caller adds to the values: where relative import files are, the adaptive
/// length. `Context::default()`: import files as given (relative to the working
/// directory), fixed length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context {
    /// Relative `import`/`import_ipset`/`event_trace` files are joined to this (a
    /// scenario file's directory); `None`: as given.
    pub import_base: Option<PathBuf>,
    /// The adaptive length of every trial built (`--until-ci`, a scenario's
    /// `adaptive` table).
    pub adaptive: Option<Adaptive>,
}

impl Context {
    /// Import files relative to the directory of the scenario `file` (as written: a
    /// bare file name leaves them as they are).
    pub fn scenario(file: &str) -> Context {
        Context {
            import_base: Some(
                Path::new(file)
                    .parent()
                    .unwrap_or(Path::new(""))
                    .to_path_buf(),
            ),
            adaptive: None,
        }
    }
}

/// One trial's checked parameters from its typed axis values (see the module header).
pub fn build(v: &AxisValues, seed: u64, cx: &Context) -> Result<TrialParams, PlanError> {
    let mut p = crate::plan::axes::trial_params(v, seed)?;
    if let Some(dir) = &cx.import_base {
        for f in [&mut p.import, &mut p.import_ipset] {
            if let Some(rel) = f.as_deref().filter(|r| Path::new(r).is_relative()) {
                *f = Some(dir.join(rel).to_string_lossy().into_owned());
            }
        }
    }
    if let Some(e) = p.events.as_mut() {
        if let (Some(dir), Some(t)) = (&cx.import_base, e.trace.as_mut()) {
            if Path::new(&t.file).is_relative() && !t.is_loaded() {
                t.file = dir.join(&t.file).to_string_lossy().into_owned();
            }
        }
        e.load_trace()?;
    }
    p.adaptive = cx.adaptive.clone();
    check_combination(&p)?;
    Ok(p)
}

/// A built trial moved to `topology` (a named testbed's, for a scenario that names
/// none): what follows from the topology set again and checked, as [`build`] would.
pub fn with_topology(p: &mut TrialParams, topology: Topology) -> Result<(), PlanError> {
    p.topology = topology;
    p.chain = chain_of(topology);
    check_combination(p)
}

/// Cross-field check of one trial's parameters.
pub fn check_combination(p: &TrialParams) -> Result<(), PlanError> {
    if let Some(e) = &p.events {
        crate::params::events::check_for(e, &p.kind, p.topology, p.proto)?;
        crate::params::events::check_load(e, p.search.as_ref())?;
        check_events_due(p, e)?;
    }
    check_adaptive(p).map_err(PlanError::Adaptive)?;
    check_nft_family(p)?;
    if let (Some(sets), None) = (&p.import_ipset, &p.import) {
        return Err(Conflict(format!(
            "import_ipset {sets}: the ipsets of an imported iptables-save file; give its \
             import too"
        ))
        .into());
    }
    match &p.search {
        Some(crate::params::search::Search::Degrade(sp)) => {
            crate::params::search::check_degrade(p, sp)?
        }
        Some(crate::params::search::Search::Envelope(sp)) => {
            crate::params::search::check_envelope(p, sp)?
        }
        Some(
            crate::params::search::Search::Ndr(_)
            | crate::params::search::Search::Mlr(_)
            | crate::params::search::Search::SweetSpot,
        )
        | None => {}
    }
    crate::workloads::check(p).map_err(Into::into)
}

/// The events' updates due before the traffic of every trial `p` runs ends (a search's
/// steps too: MLRsearch's shortest; the envelope sets its steps' rate and count, so
/// there only its first update), where the duration ends that traffic.
fn check_events_due(p: &TrialParams, e: &EventParams) -> Result<(), Conflict> {
    use crate::params::search::Search;
    if !crate::workloads::traffic(&p.kind)
        .profile()
        .ending
        .at_duration(p)
    {
        return Ok(());
    }
    let step = firewall::engine::backend(p.engine).timeout_step_ms();
    let check = |e: &EventParams, d: f64| crate::params::events::check_due(e, d, step);
    match &p.search {
        None | Some(Search::Ndr(_) | Search::Degrade(_) | Search::SweetSpot) => {
            check(e, p.duration_s)
        }
        Some(Search::Mlr(sp)) => check(
            e,
            sp.initial_duration_s
                .map_or(p.duration_s, |i| i.min(p.duration_s)),
        ),
        Some(Search::Envelope(_)) => check(
            &EventParams {
                rate: None,
                count: None,
                ..e.clone()
            },
            p.duration_s,
        ),
    }
}

/// A table family other than the default means something only to the nft engines:
/// refused for the others rather than silently ignored.
fn check_nft_family(p: &TrialParams) -> Result<(), Conflict> {
    if p.nft_family.is_default() || p.engine.takes_nft_family() {
        return Ok(());
    }
    Err(Conflict(format!(
        "nft_family {} applies to engines nft and nft-set only, not {} (it has no nftables \
         table whose family could be chosen)",
        p.nft_family, p.engine
    )))
}

/// Adaptive length needs a role that counts while the trial runs.
pub fn check_adaptive(p: &TrialParams) -> Result<(), Conflict> {
    let Some(a) = &p.adaptive else {
        return Ok(());
    };
    // A search's steps are trials of their own; the search itself has no length.
    let counted = p.search.is_none() && p.kind.counts_while_running();
    if !counted {
        return Err(Conflict(format!(
            "adaptive length works for echo, and flood/flow with a socket sink, not {}",
            p.name()
        )));
    }
    if a.max_s < p.duration_s {
        return Err(Conflict(format!(
            "the longest adaptive trial ({} s) is shorter than the duration ({} s)",
            a.max_s, p.duration_s
        )));
    }
    Ok(())
}

/// FNV-1a over the canonical JSON of the parameters and the repetition.
pub fn trial_key(p: &TrialParams, rep: u32) -> String {
    let canon = serde_json::to_string(p).unwrap_or_default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in canon.bytes().chain(rep.to_be_bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The parameters of one `w` trial from axis values as text, seed 1, through the
/// front door (unit tests elsewhere in the crate).
#[cfg(test)]
pub fn test_params(w: crate::params::workload::Workload, pairs: &[(&str, &str)]) -> TrialParams {
    let v = AxisValues::from_text(crate::params::search::Asked::Traffic(w), pairs).unwrap();
    build(&v, 1, &Context::default()).unwrap()
}

/// The parameters of one `k` search from axis values as text, seed 1, through the front
/// door; what it refuses as text (unit tests elsewhere in the crate).
#[cfg(test)]
pub fn try_test_search(
    k: crate::params::search::SearchKind,
    pairs: &[(&str, &str)],
) -> Result<TrialParams, String> {
    let v = AxisValues::from_text(crate::params::search::Asked::Search(k), pairs)
        .map_err(|e| e.to_string())?;
    build(&v, 1, &Context::default()).map_err(|e| e.to_string())
}

/// The envelope search the unit tests share: `add:1@1s` over 1000 nft rules and a
/// 2-kpps background, 4-s trials.
#[cfg(test)]
pub fn test_envelope() -> TrialParams {
    try_test_search(
        crate::params::search::SearchKind::Envelope,
        &[
            ("engine", "nft"),
            ("rules", "1000"),
            ("rate", "2kpps"),
            ("duration", "4s"),
            ("event", "add:1@1s"),
        ],
    )
    .unwrap()
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
