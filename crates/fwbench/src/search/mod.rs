//! Searches made of trials: RFC 2544 throughput (NDR, or PDR with a loss threshold)
//! over the offered rate, and seed 002's degradation point over the rule count.
//!
//! The search itself is [`Bisect`], pure and table-tested; the drivers run one stored
//! trial per step on a [`Session`].

pub mod sweetspot;

use crate::error::usage;
use crate::exec::trial::{Outcome, Status};
use crate::output;
use crate::run::Session;
use crate::spec::search::SearchParams;
use crate::spec::workload::Workload;
use crate::spec::{Pinning, TrialParams};
use anyhow::{bail, Result};
use proto::Rate;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// How narrow the bracket must get.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Width {
    /// (hi − lo) ≤ r · hi, or hi ≤ the floor value (the search cannot go lower)
    Relative(f64, f64),
    /// (hi − lo) ≤ a
    Absolute(f64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    Try(f64),
    Done(Found),
}

/// Result: the highest value that passed and the lowest that failed (`None`: none did).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Found {
    pub pass: Option<f64>,
    pub fail: Option<f64>,
}

/// Binary search for the boundary between passing (low) and failing (high) values in
/// `[lo, hi]`. Tries the ceiling first (it may pass: the answer is then "at least
/// hi"), the floor if it is not known to pass, then halves the bracket; with
/// `confirm`, the final answer is tried once more (RFC 2544's confirmation trial) and,
/// if it fails now, the search goes on below it.
#[derive(Debug, Clone)]
pub struct Bisect {
    lo: f64,
    hi: f64,
    floor: f64,
    lo_known: bool,
    hi_known: bool,
    ceiling_passed: bool,
    floor_failed: bool,
    width: Width,
    integer: bool,
    confirm: bool,
    confirming: bool,
    confirmed: bool,
    passes: Vec<f64>,
    pending: Option<f64>,
}

impl Bisect {
    pub fn new(lo: f64, hi: f64, lo_known_pass: bool, width: Width) -> Self {
        Bisect {
            lo,
            hi,
            floor: lo,
            lo_known: lo_known_pass,
            hi_known: false,
            ceiling_passed: false,
            floor_failed: false,
            width,
            integer: false,
            confirm: false,
            confirming: false,
            confirmed: false,
            // Values that passed a trial (a floor known to pass was never tried).
            passes: vec![],
            pending: None,
        }
    }

    /// Only whole numbers are tried (rule counts).
    pub fn integer(mut self) -> Self {
        self.integer = true;
        self
    }

    pub fn with_confirmation(mut self) -> Self {
        self.confirm = true;
        self
    }

    /// The ceiling's outcome is already known (e.g. the max-rate probe failed).
    pub fn ceiling_known(mut self, passed: bool) -> Self {
        self.hi_known = true;
        self.ceiling_passed = passed;
        if passed {
            self.passes.push(self.hi);
        }
        self
    }

    pub fn confirmed(&self) -> bool {
        self.confirmed
    }

    fn narrow(&self) -> bool {
        let w = self.hi - self.lo;
        match self.width {
            Width::Relative(r, min) => w <= r * self.hi || self.hi <= min,
            Width::Absolute(a) => w <= a,
        }
    }

    pub fn next(&mut self) -> Step {
        let s = self.step();
        if let Step::Try(x) = s {
            self.pending = Some(x);
        }
        s
    }

    fn step(&mut self) -> Step {
        if !self.hi_known {
            return Step::Try(self.hi);
        }
        if self.ceiling_passed {
            return Step::Done(Found {
                pass: Some(self.hi),
                fail: None,
            });
        }
        if !self.lo_known {
            return Step::Try(self.lo);
        }
        if self.floor_failed {
            return Step::Done(Found {
                pass: None,
                fail: Some(self.lo),
            });
        }
        let mut mid = (self.lo + self.hi) / 2.0;
        if self.integer {
            mid = mid.floor();
        }
        if self.narrow() || mid <= self.lo || mid >= self.hi {
            let found = Found {
                pass: self.passes.contains(&self.lo).then_some(self.lo),
                fail: Some(self.hi),
            };
            if self.confirm && !self.confirmed && self.lo > self.floor {
                self.confirming = true;
                return Step::Try(self.lo);
            }
            return Step::Done(found);
        }
        Step::Try(mid)
    }

    /// Record the outcome of the value last returned by `next`.
    pub fn record(&mut self, pass: bool) {
        let Some(x) = self.pending.take() else {
            return;
        };
        if self.confirming {
            self.confirming = false;
            if pass {
                self.confirmed = true;
            } else {
                // It failed now: the answer lies below it.
                self.hi = x;
                self.passes.retain(|p| *p < x);
                self.lo = self.passes.iter().copied().fold(self.floor, f64::max);
            }
            return;
        }
        if !self.hi_known && x == self.hi {
            self.hi_known = true;
            self.ceiling_passed = pass;
            if pass {
                self.passes.push(x);
            }
            return;
        }
        if !self.lo_known && x == self.lo {
            self.lo_known = true;
            self.floor_failed = !pass;
            if pass {
                self.passes.push(x);
            }
            return;
        }
        if pass {
            self.lo = x;
            self.passes.push(x);
        } else {
            self.hi = x;
        }
    }
}

/// Where the search's trials run.
pub struct Env {
    pub topology_given: bool,
    pub pin: Pinning,
    pub testbed: Option<String>,
    pub db: Option<PathBuf>,
    pub json: bool,
}

/// One step of a search, as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// Offered packets/s (ndr) or rule count (degrade).
    pub x: f64,
    pub sent: u64,
    pub received: u64,
    pub loss_ratio: f64,
    /// What the schedule asked for and what the sender got out, packets/s.
    pub offered_pps: f64,
    pub sent_pps: f64,
    pub received_pps: f64,
    pub pass: bool,
    /// The sender fell more than the loss threshold (at least 0.1 %) short of its
    /// schedule: the offered load was not offered, so the step fails.
    pub sender_behind: bool,
    /// The confirmation trial.
    pub confirmation: bool,
}

fn point(x: f64, o: &Outcome, threshold: f64, confirmation: bool) -> Result<Point> {
    if o.status != Status::Ok {
        bail!(
            "trial at {x} {}: {}",
            o.status.as_str(),
            o.error.as_deref().unwrap_or("no results")
        );
    }
    let Some(s) = &o.packet else {
        bail!("trial at {x} returned no packet figures");
    };
    let lossless = if threshold == 0.0 {
        s.lost == 0
    } else {
        s.loss_ratio <= threshold
    };
    let sender_behind = s.sent_pps < s.offered_pps * (1.0 - threshold.max(0.001));
    Ok(Point {
        x,
        sent: s.sent,
        received: s.received,
        loss_ratio: s.loss_ratio,
        offered_pps: s.offered_pps,
        sent_pps: s.sent_pps,
        received_pps: s.received_pps,
        pass: lossless && !sender_behind,
        sender_behind,
        confirmation,
    })
}

/// " (confirmation)", " (sender behind schedule)" or nothing.
fn point_note(p: &Point) -> &'static str {
    match (p.confirmation, p.sender_behind) {
        (true, _) => " (confirmation)",
        (false, true) => " (sender behind schedule)",
        _ => "",
    }
}

fn progress(i: usize, max: usize, what: &str, p: &Point) {
    eprintln!(
        "    [{i:>2}/{max}] {what}: sent {} received {} loss {:.4}% → {}{}",
        p.sent,
        p.received,
        p.loss_ratio * 100.0,
        if p.pass { "pass" } else { "fail" },
        point_note(p)
    );
}

/// The outcome of a search (stored as the `results` of the search's own trial row).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "search", rename_all = "lowercase")]
pub enum SearchSummary {
    Ndr(NdrReport),
    Degrade(DegradeReport),
    /// sessions with `--parallel auto`.
    SweetSpot(crate::search::sweetspot::SweetSpotReport),
}

/// Whether `p` runs as a search of stored step trials (ndr, degrade, sessions with
/// parallel auto) rather than as one trial.
pub fn is_search(p: &TrialParams) -> bool {
    match p.workload {
        Workload::Ndr | Workload::Degrade => true,
        Workload::Sessions => p.conn.as_ref().is_some_and(|k| k.parallel == 0),
        _ => false,
    }
}

/// `fwbench sessions --parallel auto`.
pub fn run_sweet_spot(p: TrialParams, env: &Env) -> Result<ExitCode> {
    cli_search("sessions", p, env, |p, run| {
        crate::search::sweetspot::search(p, run).map(SearchSummary::SweetSpot)
    })
}

impl SearchSummary {
    /// One line for progress output.
    pub fn line(&self) -> String {
        match self {
            SearchSummary::Ndr(r) => match r.rate_pps {
                Some(x) => format!(
                    "{}: {x:.0} pps ({:.2} Mb/s Ethernet) in {} trials{}{}",
                    r.mode,
                    r.rate_bps_l2.unwrap_or(0.0) / 1e6,
                    r.trials,
                    if r.limited_by_sender {
                        ", sender-limited"
                    } else {
                        ""
                    },
                    if r.converged { "" } else { ", NOT converged" }
                ),
                None => format!("{}: no rate passed", r.mode),
            },
            SearchSummary::Degrade(r) => match (r.last_good_rules, r.first_degraded_rules) {
                (_, None) => format!("no degradation up to {} rules", r.max_rules),
                (None, Some(_)) => "degraded even without rules".into(),
                (Some(g), Some(d)) => format!(
                    "degradation point between {g} and {d} rules ({} trials)",
                    r.trials
                ),
            },
            SearchSummary::SweetSpot(r) => format!(
                "sweet spot: {} parallel, {:.0} sessions/s ({} trials)",
                r.best_parallel, r.best_sessions_per_s, r.trials
            ),
        }
    }

    /// The headline number: the rate found (ndr) or the first degraded rule count.
    pub fn value(&self) -> Option<f64> {
        match self {
            SearchSummary::Ndr(r) => r.rate_pps,
            SearchSummary::Degrade(r) => r.first_degraded_rules.map(f64::from),
            SearchSummary::SweetSpot(r) => Some(r.best_sessions_per_s),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdrReport {
    pub mode: &'static str,
    pub loss_threshold: f64,
    pub precision: f64,
    pub duration_s: f64,
    pub payload: u32,
    pub frame: u32,
    /// Highest rate that passed, packets/s (None: none did).
    pub rate_pps: Option<f64>,
    pub rate_bps_payload: Option<f64>,
    pub rate_bps_l2: Option<f64>,
    /// Lowest rate that failed (None: the ceiling passed — the sender is the limit).
    pub fail_pps: Option<f64>,
    pub ceiling_pps: f64,
    /// The ceiling came from `max_rate` (else from an unpaced flood).
    pub ceiling_given: bool,
    /// The gateway passed all the sender could offer: the sender is the limit.
    pub limited_by_sender: bool,
    pub confirmed: bool,
    pub converged: bool,
    pub trials: usize,
    /// Frame loss rate by offered rate (RFC 2544 §26.3), ascending.
    pub curve: Vec<Point>,
}

/// Runs one step trial (stored by the caller) and returns its outcome.
pub type Runner<'a> = dyn FnMut(&TrialParams) -> Result<Outcome> + 'a;

/// The step trials of a search: the search's parameters with the step's workload.
fn step_params(p: &TrialParams, workload: Workload) -> TrialParams {
    let mut q = p.clone();
    q.workload = workload;
    q.search = None;
    q
}

/// RFC 2544 throughput search (NDR, or PDR with `sp.loss` > 0).
pub fn ndr_search(p: &TrialParams, sp: &SearchParams, run: &mut Runner) -> Result<NdrReport> {
    let k = p.packet.clone().unwrap_or_default();
    let bytes = k.rate_bytes(p.family).map_err(usage)?;
    let payload = k.payload(p.family).map_err(usage)?;
    let frame = k.wire_bytes(p.family).map_err(usage)?;
    let mode = if sp.loss == 0.0 { "ndr" } else { "pdr" };
    let mut q = step_params(p, Workload::Flood);
    let mut points: Vec<Point> = Vec::new();
    // Search steps; the ceiling probe and the confirmation trials come on top.
    let max = sp.max_trials as usize;
    let mut steps = 0usize;
    let set_rate = |q: &mut TrialParams, r: Rate| {
        if let Some(k) = q.packet.as_mut() {
            k.rate = r;
        }
    };
    let width = Width::Relative(sp.precision, 1.0);
    // The ceiling: given, or what an unpaced flood gets out of the sender.
    let mut bisect;
    let ceiling = match sp.max_rate.and_then(|r| r.pps(bytes)) {
        Some(c) => {
            bisect = Bisect::new(0.0, c, true, width);
            c
        }
        None => {
            set_rate(&mut q, Rate::Max);
            let o = run(&q)?;
            let mut pt = point(0.0, &o, sp.loss, false)?;
            let c = o.packet.as_ref().map(|x| x.sent_pps).unwrap_or(0.0);
            pt.x = c;
            progress(0, max, &format!("max rate {}", fmt_pps(c)), &pt);
            bisect = Bisect::new(0.0, c, true, width).ceiling_known(pt.pass);
            points.push(pt);
            c
        }
    };
    if ceiling <= 0.0 {
        bail!("the sender got no packets out; nothing to search");
    }
    bisect = bisect.with_confirmation();
    let found = loop {
        match bisect.next() {
            Step::Done(f) => break Some(f),
            Step::Try(x) => {
                let confirmation = points.iter().any(|q| q.x == x && !q.confirmation);
                if !confirmation {
                    if steps == max {
                        break None;
                    }
                    steps += 1;
                }
                set_rate(&mut q, Rate::Pps(x));
                let o = run(&q)?;
                let pt = point(x, &o, sp.loss, confirmation)?;
                progress(steps, max, &fmt_pps(x), &pt);
                bisect.record(pt.pass);
                points.push(pt);
            }
        }
    };
    let converged = found.is_some();
    // Out of trials: report the bracket so far.
    let found = found.unwrap_or_else(|| Found {
        pass: points
            .iter()
            .filter(|q| q.pass)
            .map(|q| q.x)
            .reduce(f64::max),
        fail: points
            .iter()
            .filter(|q| !q.pass)
            .map(|q| q.x)
            .reduce(f64::min),
    });
    let mut curve = points;
    curve.sort_by(|a, b| a.x.total_cmp(&b.x));
    Ok(NdrReport {
        mode,
        loss_threshold: sp.loss,
        precision: sp.precision,
        duration_s: p.duration_s,
        payload,
        frame,
        rate_pps: found.pass,
        rate_bps_payload: found.pass.map(|x| x * payload as f64 * 8.0),
        rate_bps_l2: found.pass.map(|x| x * frame as f64 * 8.0),
        fail_pps: found.fail,
        ceiling_pps: ceiling,
        ceiling_given: sp.max_rate.is_some(),
        limited_by_sender: found.fail.is_none() && found.pass.is_some() && sp.max_rate.is_none(),
        confirmed: bisect.confirmed(),
        converged,
        trials: curve.len(),
        curve,
    })
}

fn fmt_pps(x: f64) -> String {
    format!("{:.0} pps", x)
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
        env.db.as_deref(),
    )?;
    let r = search(&p, &mut |q: &TrialParams| s.trial(q))?;
    s.finish("complete")?;
    drop(s);
    if env.json {
        let mut v = serde_json::to_value(&r)?;
        v["params"] = serde_json::to_value(&p)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", search_text(&p, &r));
    }
    let converged = match &r {
        SearchSummary::Ndr(r) => r.converged,
        SearchSummary::Degrade(r) => r.converged,
        SearchSummary::SweetSpot(_) => true,
    };
    Ok(if converged {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `fwbench ndr`.
pub fn run_ndr(p: TrialParams, env: &Env) -> Result<ExitCode> {
    let sp = p.search.clone().unwrap_or_default();
    let mode = if sp.loss == 0.0 { "ndr" } else { "pdr" };
    cli_search(mode, p, env, |p, run| {
        ndr_search(p, &sp, run).map(SearchSummary::Ndr)
    })
}

/// Text report of a search.
pub fn search_text(p: &TrialParams, r: &SearchSummary) -> String {
    match r {
        SearchSummary::Ndr(r) => ndr_text(p, r),
        SearchSummary::Degrade(r) => degrade_text(p, r),
        SearchSummary::SweetSpot(r) => sweet_spot_text(p, r),
    }
}

fn sweet_spot_text(p: &TrialParams, r: &crate::search::sweetspot::SweetSpotReport) -> String {
    let mut out = format!(
        "sessions, parallel auto {}
  parallel   sessions/s   failed
",
        output::params_line(p)
    );
    for q in &r.points {
        out += &format!(
            "  {:>8}  {:>11.0}  {:>7}{}
",
            q.parallel,
            q.sessions_per_s,
            q.failed,
            if q.parallel == r.best_parallel {
                "   ← sweet spot"
            } else {
                ""
            }
        );
    }
    out += &format!(
        "sweet spot: {} sessions at once, {:.0} sessions/s (mean session {:.3} ms); within 3 %: {:?}
",
        r.best_parallel,
        r.best_sessions_per_s,
        r.latency_at_best_s * 1e3,
        r.plateau
    );
    out
}

fn ndr_text(p: &TrialParams, r: &NdrReport) -> String {
    let mut out = format!("{} {}\n", r.mode, output::params_line(p));
    out += "  offered pps    received pps   loss %      result\n";
    for q in &r.curve {
        out += &format!(
            "  {:>12.0}  {:>14.0}  {:>8.4}    {}{}\n",
            q.x,
            q.received_pps,
            q.loss_ratio * 100.0,
            if q.pass { "pass" } else { "fail" },
            point_note(q)
        );
    }
    let what = if r.mode == "ndr" {
        "zero-loss throughput (RFC 2544)".to_string()
    } else {
        format!("throughput at ≤ {:.4} % loss", r.loss_threshold * 100.0)
    };
    match r.rate_pps {
        Some(x) => {
            out += &format!(
                "{what}: {:.0} pps = {:.2} Mb/s UDP payload ({} B) = {:.2} Mb/s Ethernet ({} B frames), {} trials{}{}\n",
                x,
                r.rate_bps_payload.unwrap_or(0.0) / 1e6,
                r.payload,
                r.rate_bps_l2.unwrap_or(0.0) / 1e6,
                r.frame,
                r.trials,
                if r.confirmed { ", confirmed" } else { "" },
                if r.converged { "" } else { " (NOT converged: out of trials)" }
            );
            if r.ceiling_given && r.fail_pps.is_none() {
                out += &format!(
                    "  note: the upper bound you gave ({:.0} pps) passed; the gateway may do more — raise --max-rate\n",
                    r.ceiling_pps
                );
            } else if r.limited_by_sender {
                out += &format!(
                    "  note: the gateway passed everything the sender could offer ({:.0} pps); the sender, not the gateway, is the limit — try more --threads or --sender raw\n",
                    r.ceiling_pps
                );
            } else if let Some(f) = r.fail_pps {
                out += &format!("  bracket: passes at {:.0} pps, fails at {:.0} pps\n", x, f);
            }
        }
        None => {
            out += &format!(
                "{what}: no rate passed (lowest failing {:.0} pps)\n",
                r.fail_pps.unwrap_or(0.0)
            )
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DegradeReport {
    pub loss_threshold: f64,
    pub resolution: u32,
    pub max_rules: u32,
    /// Highest rule count without degradation, and the lowest with it.
    pub last_good_rules: Option<u32>,
    pub first_degraded_rules: Option<u32>,
    pub trials: usize,
    pub converged: bool,
    pub points: Vec<Point>,
}

/// Check a degradation search's parameters (bad input).
pub fn check_degrade(p: &TrialParams, sp: &SearchParams) -> Result<(), String> {
    if p.engine == firewall::Engine::None {
        return Err(
            "degrade adds rules: choose an engine (iptables-legacy, iptables-nft, nft, …)".into(),
        );
    }
    if sp.max_rules == 0 {
        return Err("max_rules must be at least 1".into());
    }
    Ok(())
}

/// Seed 002's degradation point: the smallest rule count at which a paced flow loses
/// more than `sp.loss`, searched between 0 and `sp.max_rules`.
pub fn degrade_search(
    p: &TrialParams,
    sp: &SearchParams,
    run: &mut Runner,
) -> Result<DegradeReport> {
    check_degrade(p, sp).map_err(usage)?;
    let mut q = step_params(p, Workload::Flow);
    let mut b = Bisect::new(
        0.0,
        sp.max_rules as f64,
        false,
        Width::Absolute(sp.resolution as f64),
    )
    .integer();
    let mut points: Vec<Point> = Vec::new();
    let max = 2
        + (sp.max_rules as f64 / sp.resolution.max(1) as f64)
            .log2()
            .ceil()
            .max(0.0) as usize
        + 2;
    let found = loop {
        match b.next() {
            Step::Done(f) => break Some(f),
            Step::Try(x) => {
                if points.len() >= max + 4 {
                    break None;
                }
                q.rules = x as u32;
                let o = run(&q)?;
                let pt = point(x, &o, sp.loss, false)?;
                progress(points.len() + 1, max, &format!("{} rules", x as u32), &pt);
                b.record(pt.pass);
                points.push(pt);
            }
        }
    };
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    Ok(DegradeReport {
        loss_threshold: sp.loss,
        resolution: sp.resolution,
        max_rules: sp.max_rules,
        last_good_rules: found.and_then(|f| f.pass).map(|x| x as u32),
        first_degraded_rules: found.and_then(|f| f.fail).map(|x| x as u32),
        trials: points.len(),
        converged: found.is_some(),
        points,
    })
}

/// `fwbench degrade`.
pub fn run_degrade(p: TrialParams, env: &Env) -> Result<ExitCode> {
    let sp = p.search.clone().unwrap_or_default();
    cli_search("degrade", p, env, |p, run| {
        degrade_search(p, &sp, run).map(SearchSummary::Degrade)
    })
}

fn degrade_text(p: &TrialParams, r: &DegradeReport) -> String {
    let mut out = format!(
        "degrade {}\n  rules   received pps   loss %     result\n",
        output::params_line(p)
    );
    for q in &r.points {
        out += &format!(
            "  {:>6}  {:>13.0}  {:>8.4}   {}\n",
            q.x as u32,
            q.received_pps,
            q.loss_ratio * 100.0,
            if q.pass { "ok" } else { "degraded" }
        );
    }
    out += &match (r.last_good_rules, r.first_degraded_rules) {
        (_, None) => format!(
            "no degradation up to {} rules (loss ≤ {:.3} %)\n",
            r.max_rules,
            r.loss_threshold * 100.0
        ),
        (None, Some(_)) => {
            "degraded even without rules: the flow is too fast for this testbed\n".into()
        }
        (Some(g), Some(d)) => format!(
            "degradation point: between {g} and {d} rules (loss > {:.3} % from {d}), {} trials\n",
            r.loss_threshold * 100.0,
            r.trials
        ),
    };
    out
}

/// A search as a scenario trial: run it with `run` for the steps.
pub fn run_search(p: &TrialParams, run: &mut Runner) -> Result<SearchSummary> {
    let sp = p.search.clone().unwrap_or_default();
    match p.workload {
        Workload::Ndr => ndr_search(p, &sp, run).map(SearchSummary::Ndr),
        Workload::Degrade => degrade_search(p, &sp, run).map(SearchSummary::Degrade),
        Workload::Sessions if is_search(p) => {
            crate::search::sweetspot::search(p, run).map(SearchSummary::SweetSpot)
        }
        w => bail!("{} is not a search", w.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive a bisection against a known boundary: values ≤ `limit` pass.
    fn run(mut b: Bisect, pass: impl Fn(f64) -> bool) -> (Found, Vec<f64>) {
        let mut tried = vec![];
        loop {
            match b.next() {
                Step::Done(f) => return (f, tried),
                Step::Try(x) => {
                    tried.push(x);
                    b.record(pass(x));
                    assert!(tried.len() < 100, "does not terminate: {tried:?}");
                }
            }
        }
    }

    #[test]
    fn ndr_converges_within_precision_and_confirms() {
        let b = Bisect::new(0.0, 1000.0, true, Width::Relative(0.01, 1.0)).with_confirmation();
        let (f, tried) = run(b, |x| x <= 637.0);
        let (lo, hi) = (f.pass.unwrap(), f.fail.unwrap());
        assert!(lo <= 637.0 && hi > 637.0, "{f:?}");
        assert!(hi - lo <= 0.01 * hi, "{f:?}");
        assert_eq!(tried[0], 1000.0, "ceiling first");
        assert_eq!(tried.last(), Some(&lo), "confirmation at the answer");
        assert!(tried.len() <= 10, "{tried:?}");
    }

    #[test]
    fn ceiling_that_passes_ends_at_once() {
        let (f, tried) = run(
            Bisect::new(0.0, 500.0, true, Width::Relative(0.01, 1.0)),
            |_| true,
        );
        assert_eq!(
            f,
            Found {
                pass: Some(500.0),
                fail: None
            }
        );
        assert_eq!(tried, vec![500.0]);
        // Known from a probe: no trial at all.
        let b = Bisect::new(0.0, 500.0, true, Width::Relative(0.01, 1.0)).ceiling_known(true);
        assert_eq!(run(b, |_| true).1, Vec::<f64>::new());
    }

    #[test]
    fn nothing_passes_ends_at_the_floor_without_a_pass() {
        let b = Bisect::new(0.0, 1e6, true, Width::Relative(0.02, 1.0)).with_confirmation();
        let (f, tried) = run(b, |_| false);
        assert_eq!(f.pass, None, "{f:?}");
        assert!(f.fail.unwrap() <= 1.0, "{f:?}");
        assert!(tried.len() <= 22, "halves down to 1 pps: {}", tried.len());
    }

    #[test]
    fn failed_confirmation_searches_lower() {
        // The boundary moves down between the search and the confirmation (noise).
        use std::cell::Cell;
        let limit = Cell::new(600.0);
        let calls = Cell::new(0);
        let b = Bisect::new(0.0, 1000.0, true, Width::Relative(0.02, 1.0)).with_confirmation();
        let (f, _) = run(b, |x| {
            calls.set(calls.get() + 1);
            if calls.get() == 8 {
                limit.set(500.0);
            }
            x <= limit.get()
        });
        assert!(f.pass.unwrap() <= 500.0, "{f:?}");
    }

    #[test]
    fn degradation_point_on_rule_counts() {
        // Degrades from 5 000 rules on; search 0 ..= 20 000 to within 250.
        let b = Bisect::new(0.0, 20_000.0, false, Width::Absolute(250.0)).integer();
        let (f, tried) = run(b, |x| x < 5000.0);
        assert_eq!(tried[0], 20_000.0);
        assert_eq!(tried[1], 0.0);
        let (g, d) = (f.pass.unwrap(), f.fail.unwrap());
        assert!(g < 5000.0 && d >= 5000.0 && d - g <= 250.0, "{f:?}");
        assert!(tried.iter().all(|x| x.fract() == 0.0));
        // Degraded without rules / never degraded.
        let b = Bisect::new(0.0, 20_000.0, false, Width::Absolute(250.0)).integer();
        assert_eq!(
            run(b, |_| false).0,
            Found {
                pass: None,
                fail: Some(0.0)
            }
        );
        let b = Bisect::new(0.0, 20_000.0, false, Width::Absolute(250.0)).integer();
        assert_eq!(
            run(b, |_| true).0,
            Found {
                pass: Some(20_000.0),
                fail: None
            }
        );
    }
}
