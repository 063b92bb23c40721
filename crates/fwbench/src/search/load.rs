//! The background of a trial with gateway events at a share of what the gateway
//! forwards at the installed size (`--load`, issue 37). FD.io CSIT's reconfiguration
//! tests first find a throughput (a lower bound of the NDR) without reconfiguration
//! and keep that load during it, so that the update is the only disturbance (their
//! methodology_reconf); here the capacity is found the same way by a short NDR search
//! ([`ndr_search`]) over floods of the trial's shape (flows, sources, sizes) at the
//! same installed rules without the events — or given as a stated rate — and the
//! background offered at a share of it (`--load 1` is CSIT's).
//!
//! Owns: [`with_load`] (the trial's parameters with the background's rate set and
//! the capacity recorded in its `Load`, with the search's doubts: the events trial is
//! flagged by them, `EventsSummary::doubts`), split as [`capacity`] and [`at_capacity`] for
//! a scenario that finds a capacity once and uses it for every repetition, and the
//! search's bounds.
//! Must not: run trials itself (the caller's runner does), store, or change a trial
//! without `--load`.

use crate::error::usage;
use crate::outcome::search::Point;
use crate::params::events::{Capacity, CapacitySearch};
use crate::params::search::SearchParams;
use crate::params::workload::{PacketKind, TrialKind};
use crate::params::TrialParams;
use crate::search::ndr::ndr_search;
use crate::search::Runner;
use anyhow::{anyhow, bail, Result};
use proto::Rate;

/// Length of each of the capacity search's trials, s.
pub const STEP_S: f64 = 1.0;
/// Its bisection steps at most (the ceiling probe and confirmations come on top):
/// from an unpaced flood's rate to within [`PRECISION`] of a gateway that forwards a
/// twentieth of it.
pub const MAX_TRIALS: u32 = 10;
/// The loss it still counts as forwarded: none (an NDR, as CSIT's reconfiguration
/// tests search).
pub const LOSS: f64 = 0.0;
/// It stops when its bracket is this narrow (a share of the rate needs no finer one).
pub const PRECISION: f64 = 0.1;

/// Whether `p` asks for a share of a capacity not yet settled ([`with_load`] sets
/// its rate; a search runs unless the capacity is stated).
pub fn unsettled(p: &TrialParams) -> bool {
    p.events
        .as_ref()
        .and_then(|e| e.load.as_ref())
        .is_some_and(|l| l.capacity.is_none())
}

/// Whether settling `p`'s load runs a capacity search (unsettled, its capacity not
/// stated).
pub fn searches(p: &TrialParams) -> bool {
    unsettled(p)
        && p.events
            .as_ref()
            .and_then(|e| e.load.as_ref())
            .is_some_and(|l| l.of.is_none())
}

/// `p` with its background at the share its `--load` asks for: of the rate stated, or
/// of the rate a short search finds with `run`; the capacity and how it was found
/// recorded in the load (`result.events.load`). Without a load, `p` as it is.
pub fn with_load(p: &TrialParams, run: &mut Runner) -> Result<TrialParams> {
    Ok(match capacity(p, run)? {
        Some(found) => at_capacity(p, &found),
        None => p.clone(),
    })
}

/// What a load's share is taken of: the gateway's capacity, packets/s, and the search
/// that found it (`None`: stated).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub pps: f64,
    pub search: Option<CapacitySearch>,
}

/// The capacity `p`'s `--load` is a share of: the rate stated, or what a short search
/// run with `run` finds. `None`: `p` asks for no load, or has it settled already.
pub fn capacity(p: &TrialParams, run: &mut Runner) -> Result<Option<Found>> {
    let Some(load) = p.events.as_ref().and_then(|e| e.load.as_ref()) else {
        return Ok(None);
    };
    if load.capacity.is_some() {
        return Ok(None);
    }
    let k = p
        .packet()
        .ok_or_else(|| anyhow!("--load needs a flood or flow (a packet rate to set)"))?;
    let bytes = k.mean_rate_bytes(p.family).map_err(usage)?;
    let found = match load.of {
        Some(r) => Found {
            pps: r
                .pps_mean(bytes)
                .ok_or_else(|| usage("--load F@RATE needs a stated rate, not max"))?,
            search: None,
        },
        None => {
            let steps = capacity_steps(p);
            let sp = SearchParams {
                loss: LOSS,
                precision: PRECISION,
                max_trials: MAX_TRIALS,
                latency_at: vec![],
                queue_fails: true,
                ..SearchParams::default()
            };
            eprintln!(
                "  --load {}: finding what the gateway forwards without loss at {} rules \
                 (NDR, 1-s floods, at most {} steps)",
                load.fraction, p.rules, MAX_TRIALS
            );
            let mut r = ndr_search(&steps, &sp, run)?;
            // Whether the bracket the capacity stands on settled: the search's own
            // word (out of trials, a contradiction that persisted).
            let unsettled = |d: &Vec<results::Doubt>| -> Vec<results::Doubt> {
                (d.iter())
                    .filter(|d| {
                        matches!(
                            d.kind,
                            results::DoubtKind::NotConverged | results::DoubtKind::Contradiction
                        )
                    })
                    .cloned()
                    .collect()
            };
            let mut settled = unsettled(&r.doubts);
            // Its only passes failed again above (a gateway at its limit on a noisy
            // host): once more, below the lowest rate that failed — the passes of both
            // judged against the fails of both.
            let lowest = lowest_fail(&r.curve);
            if below_every_fail(&r.curve).is_none() && lowest.is_finite() {
                eprintln!(
                    "  --load {}: no pass held below every failure; searching again below \
                     {lowest:.0} pps",
                    load.fraction
                );
                let below = SearchParams {
                    max_rate: Some(Rate::Pps(lowest)),
                    ..sp
                };
                let again = ndr_search(&steps, &below, run)?;
                // The first's unsettled bracket is what the second settles below every
                // failure of both: the second's word says whether it did.
                settled = unsettled(&again.doubts);
                r.curve.extend(again.curve);
                r.trials += again.trials;
                r.converged = again.converged;
                r.fail_pps = [r.fail_pps, again.fail_pps]
                    .into_iter()
                    .flatten()
                    .reduce(f64::min);
            }
            let Some(found) = below_every_fail(&r.curve) else {
                bail!(
                    "--load: the gateway forwarded no rate without loss and without a queue \
                     filling through the flood at {} rules in {} trials of {STEP_S} s \
                     (lowest that failed: {}): no capacity to offer a \
                     share of; give one (--load {}@RATE) or a rate (--rate)",
                    p.rules,
                    r.trials,
                    r.fail_pps
                        .map_or_else(|| "none".into(), |x| format!("{x:.0} pps")),
                    load.fraction
                );
            };
            let (doubts, fail_by_fwbench) = witness(&r.curve, found, settled);
            Found {
                pps: found,
                search: Some(CapacitySearch {
                    loss: LOSS,
                    step_s: STEP_S,
                    trials: r.trials,
                    converged: r.converged,
                    fail_pps: r.fail_pps,
                    limited_by_sender: r.limited_by_sender,
                    doubts,
                    fail_by_fwbench,
                }),
            }
        }
    };
    Ok(Some(found))
}

/// `p` with its background at its load's share of the capacity `found` (a capacity
/// found once serves every repetition of a configuration, and every configuration
/// whose search would flood the same: [`search_key`]).
pub fn at_capacity(p: &TrialParams, found: &Found) -> TrialParams {
    at_share(p, found.pps, found.search.clone())
}

/// A search's step `q` (of a search over `planned`, its load settled) with the load
/// and the background's rate as `planned` asked them: what identifies the step whatever
/// capacity the load's search found — a resumed run finds it again from stored floods,
/// and its last bits need not survive the round trip through the store. Without a
/// load, `q` as it is.
pub fn as_asked(q: &TrialParams, planned: &TrialParams) -> TrialParams {
    let mut k = q.clone();
    let asked = planned.events.as_ref().and_then(|e| e.load.clone());
    if let (Some(e), Some(load)) = (k.events.as_mut(), asked) {
        e.load = Some(load);
        if let (Some(r), Some(a)) = (k.kind.packet_mut(), planned.packet()) {
            r.rate = a.rate;
        }
    }
    k
}

/// What identifies the capacity search `p` needs: the floods it would run (its shape,
/// its installed rules, no events). Configurations that differ only in their events —
/// the method, the share — rest on one search; repetitions of one configuration too.
pub fn search_key(p: &TrialParams) -> TrialParams {
    let mut q = capacity_steps(p);
    if let Some(k) = q.kind.packet_mut() {
        k.rate = Rate::Max;
    }
    q
}

/// The capacity from a search's trials: the highest rate that passed below every rate
/// that failed (confirmations included). On a disturbed testbed a rate can pass once
/// and fail when tried again; the search's own answer may then be that pass, but a
/// background meant to be sustainable takes only what never failed above it.
fn below_every_fail(curve: &[Point]) -> Option<f64> {
    let lowest_fail = lowest_fail(curve);
    curve
        .iter()
        .filter(|q| q.pass && q.x > 0.0 && q.x < lowest_fail)
        .map(|q| q.x)
        .reduce(f64::max)
}

/// The capacity's witness, judged on the steps it was taken from (`curve`, of one
/// search or two): `settled`, what the search said of its bracket (not converged, a
/// contradiction); the steps that decide the capacity `found` — the passes at it and
/// the lowest that failed — flagged by their own trials (traffic that bypassed the
/// rule set passes any rate); a sender behind its schedule at or below it (the pass
/// measured fwbench). Apart: why the lowest failure was fwbench's (its sender, its
/// sink) where it was — the capacity is then a lower bound of the gateway's, no
/// doubt of it ([`CapacitySearch::fail_by_fwbench`]). The ndr's own doubts speak of its
/// answer, which the capacity need not be (a pass above a failure is no capacity).
fn witness(
    curve: &[Point],
    found: f64,
    settled: Vec<results::Doubt>,
) -> (Vec<results::Doubt>, Option<String>) {
    use crate::search::witness as w;
    let fail = Some(lowest_fail(curve)).filter(|f| f.is_finite());
    let mut doubts = settled;
    doubts.extend(w::below_found(curve, Some(found)));
    doubts.extend(w::flagged_bracket(
        curve,
        Some(found),
        fail,
        "pps",
        [
            " that carries the capacity",
            " that bounds the capacity (the lowest that failed)",
        ],
        true,
    ));
    let by_fwbench = w::fail_by_fwbench(curve, Some(found), fail).map(|d| d.why);
    (doubts, by_fwbench)
}

/// The lowest rate of `curve` that failed (infinite when none did).
fn lowest_fail(curve: &[Point]) -> f64 {
    curve
        .iter()
        .filter(|q| !q.pass)
        .map(|q| q.x)
        .fold(f64::INFINITY, f64::min)
}

/// `p` with its background at its load's share of `pps`, the capacity recorded.
fn at_share(p: &TrialParams, pps: f64, search: Option<CapacitySearch>) -> TrialParams {
    let mut q = p.clone();
    if let Some(load) = q.events.as_mut().and_then(|e| e.load.as_mut()) {
        let background_pps = load.fraction * pps;
        load.capacity = Some(Capacity {
            pps,
            background_pps,
            search,
        });
        if let Some(k) = q.kind.packet_mut() {
            k.rate = Rate::Pps(background_pps);
        }
    }
    q
}

/// The capacity search's trials: floods of `p`'s shape at its installed rules, without
/// its events, [`STEP_S`] long (a flow paces at the rate the search sets, as a flood).
fn capacity_steps(p: &TrialParams) -> TrialParams {
    let mut q = p.clone();
    q.events = None;
    q.search = None;
    q.adaptive = None;
    q.duration_s = STEP_S;
    if let TrialKind::Packet(kind, _) = &mut q.kind {
        *kind = PacketKind::Flood;
    }
    q
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
