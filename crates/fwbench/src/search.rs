//! Searches made of trials: RFC 2544 throughput (NDR, or PDR with a loss threshold)
//! over the offered rate, and seed 002's degradation point over the rule count.
//!
//! The search itself is [`Bisect`], pure and table-tested; the drivers run one stored
//! trial per step on a [`Session`].

use crate::cli::SearchArgs;
use crate::output;
use crate::run::Session;
use crate::trial::{Outcome, Pinning, Status, TrialParams};
use crate::usage;
use anyhow::{bail, Result};
use proto::Rate;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// How narrow the bracket must get.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Width {
    /// (hi − lo) ≤ r · hi
    Relative(f64),
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
            passes: if lo_known_pass { vec![lo] } else { vec![] },
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
            Width::Relative(r) => w <= r * self.hi,
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
                pass: (self.lo > self.floor || self.passes.contains(&self.lo)).then_some(self.lo),
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
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// Offered packets/s (ndr) or rule count (degrade).
    pub x: f64,
    pub sent: u64,
    pub received: u64,
    pub loss_ratio: f64,
    pub received_pps: f64,
    pub pass: bool,
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
    let pass = if threshold == 0.0 {
        s.lost == 0
    } else {
        s.loss_ratio <= threshold
    };
    Ok(Point {
        x,
        sent: s.sent,
        received: s.received,
        loss_ratio: s.loss_ratio,
        received_pps: s.received_pps,
        pass,
        confirmation,
    })
}

fn progress(i: usize, max: u32, what: &str, p: &Point) {
    eprintln!(
        "[{i:>2}/{max}] {what}: sent {} received {} loss {:.4}% → {}{}",
        p.sent,
        p.received,
        p.loss_ratio * 100.0,
        if p.pass { "pass" } else { "fail" },
        if p.confirmation {
            " (confirmation)"
        } else {
            ""
        }
    );
}

#[derive(Debug, Serialize)]
struct NdrReport {
    mode: &'static str,
    loss_threshold: f64,
    precision: f64,
    duration_s: f64,
    payload: u32,
    frame: u32,
    /// Highest rate that passed, packets/s (None: none did).
    rate_pps: Option<f64>,
    rate_bps_payload: Option<f64>,
    rate_bps_l2: Option<f64>,
    /// Lowest rate that failed (None: the ceiling passed — the sender is the limit).
    fail_pps: Option<f64>,
    ceiling_pps: f64,
    limited_by_sender: bool,
    confirmed: bool,
    converged: bool,
    trials: usize,
    /// Frame loss rate by offered rate (RFC 2544 §26.3), ascending.
    curve: Vec<Point>,
}

/// `fwbench ndr`.
pub fn run_ndr(mut p: TrialParams, a: &SearchArgs, env: &Env) -> Result<ExitCode> {
    let k = p.packet.clone().unwrap_or_default();
    let bytes = k.size.rate_bytes(p.family).map_err(|e| usage(e.0))?;
    let payload = k.size.payload(p.family).map_err(|e| usage(e.0))?;
    let frame = k.size.frame(p.family).map_err(|e| usage(e.0))?;
    let mode = if a.loss == 0.0 { "ndr" } else { "pdr" };
    let mut s = Session::open(
        mode,
        &mut p,
        env.topology_given,
        env.pin.clone(),
        env.testbed.as_deref(),
        env.db.as_deref(),
    )?;
    let mut points: Vec<Point> = Vec::new();
    let set_rate = |p: &mut TrialParams, r: Rate| {
        if let Some(k) = p.packet.as_mut() {
            k.rate = r;
        }
    };
    // The ceiling: given, or what an unpaced flood gets out of the sender.
    let mut bisect;
    let ceiling = match a.max_rate.and_then(|r| r.pps(bytes)) {
        Some(c) => {
            bisect = Bisect::new(0.0, c, true, Width::Relative(a.precision));
            c
        }
        None => {
            set_rate(&mut p, Rate::Max);
            let o = s.trial(&p)?;
            let mut pt = point(0.0, &o, a.loss, false)?;
            let c = o.packet.as_ref().map(|x| x.sent_pps).unwrap_or(0.0);
            pt.x = c;
            progress(1, a.max_trials, &format!("max rate {}", fmt_pps(c)), &pt);
            bisect = Bisect::new(0.0, c, true, Width::Relative(a.precision)).ceiling_known(pt.pass);
            points.push(pt);
            c
        }
    };
    if ceiling <= 0.0 {
        bail!("the sender got no packets out; nothing to search");
    }
    bisect = bisect.with_confirmation();
    let mut converged = false;
    let mut found = Found {
        pass: None,
        fail: None,
    };
    while points.len() < a.max_trials as usize + 1 {
        match bisect.next() {
            Step::Done(f) => {
                found = f;
                converged = true;
                break;
            }
            Step::Try(x) => {
                let confirmation = points.iter().any(|q| q.x == x && !q.confirmation);
                set_rate(&mut p, Rate::Pps(x));
                let o = s.trial(&p)?;
                let pt = point(x, &o, a.loss, confirmation)?;
                progress(points.len() + 1, a.max_trials, &fmt_pps(x), &pt);
                bisect.record(pt.pass);
                points.push(pt);
            }
        }
    }
    if !converged {
        // Out of trials: report the bracket so far.
        let best = points
            .iter()
            .filter(|q| q.pass)
            .map(|q| q.x)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        let worst = points
            .iter()
            .filter(|q| !q.pass)
            .map(|q| q.x)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))));
        found = Found {
            pass: best,
            fail: worst,
        };
    }
    s.finish("complete")?;
    drop(s);
    let mut curve = points.clone();
    curve.sort_by(|a, b| a.x.total_cmp(&b.x));
    let r = NdrReport {
        mode,
        loss_threshold: a.loss,
        precision: a.precision,
        duration_s: p.duration_s,
        payload,
        frame,
        rate_pps: found.pass,
        rate_bps_payload: found.pass.map(|x| x * payload as f64 * 8.0),
        rate_bps_l2: found.pass.map(|x| x * frame as f64 * 8.0),
        fail_pps: found.fail,
        ceiling_pps: ceiling,
        limited_by_sender: found.fail.is_none() && found.pass.is_some(),
        confirmed: bisect.confirmed(),
        converged,
        trials: points.len(),
        curve,
    };
    if env.json {
        let mut v = serde_json::to_value(&r)?;
        v["params"] = serde_json::to_value(&p)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", ndr_text(&p, &r));
    }
    Ok(if converged {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn fmt_pps(x: f64) -> String {
    format!("{:.0} pps", x)
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
            if q.confirmation {
                " (confirmation)"
            } else {
                ""
            }
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
            if r.limited_by_sender {
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

#[derive(Debug, Serialize)]
struct DegradeReport {
    loss_threshold: f64,
    resolution: u32,
    max_rules: u32,
    /// Highest rule count without degradation, and the lowest with it.
    last_good_rules: Option<u32>,
    first_degraded_rules: Option<u32>,
    trials: usize,
    converged: bool,
    points: Vec<Point>,
}

/// `fwbench degrade`: smallest rule count at which a paced flow loses more than `loss`.
pub fn run_degrade(
    mut p: TrialParams,
    max_rules: u32,
    resolution: u32,
    loss: f64,
    env: &Env,
) -> Result<ExitCode> {
    if p.engine == firewall::Engine::None {
        return Err(usage(
            "degrade adds rules: choose an --engine (iptables-legacy, iptables-nft, nft, …)",
        ));
    }
    if max_rules == 0 {
        return Err(usage("--max-rules must be at least 1"));
    }
    // Pre-flight with the largest rule set (bad input before any trial).
    p.rules = max_rules;
    let mut s = Session::open(
        "degrade",
        &mut p,
        env.topology_given,
        env.pin.clone(),
        env.testbed.as_deref(),
        env.db.as_deref(),
    )?;
    let mut b = Bisect::new(
        0.0,
        max_rules as f64,
        false,
        Width::Absolute(resolution as f64),
    )
    .integer();
    let mut points: Vec<Point> = Vec::new();
    let max_trials = 2 + (max_rules as f64 / resolution.max(1) as f64).log2().ceil() as usize + 2;
    let found = loop {
        match b.next() {
            Step::Done(f) => break Some(f),
            Step::Try(x) => {
                if points.len() >= max_trials + 4 {
                    break None;
                }
                p.rules = x as u32;
                let o = s.trial(&p)?;
                let pt = point(x, &o, loss, false)?;
                progress(
                    points.len() + 1,
                    max_trials as u32,
                    &format!("{} rules", x as u32),
                    &pt,
                );
                b.record(pt.pass);
                points.push(pt);
            }
        }
    };
    s.finish("complete")?;
    drop(s);
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    let r = DegradeReport {
        loss_threshold: loss,
        resolution,
        max_rules,
        last_good_rules: found.and_then(|f| f.pass).map(|x| x as u32),
        first_degraded_rules: found.and_then(|f| f.fail).map(|x| x as u32),
        trials: points.len(),
        converged: found.is_some(),
        points,
    };
    if env.json {
        let mut v = serde_json::to_value(&r)?;
        v["params"] = serde_json::to_value(&p)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let mut out = format!(
            "degrade {}\n  rules   received pps   loss %     result\n",
            output::params_line(&p)
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
            (_, None) => format!("no degradation up to {max_rules} rules (loss ≤ {:.3} %)\n", loss * 100.0),
            (None, Some(_)) => "degraded even without rules: the flow is too fast for this testbed\n".into(),
            (Some(g), Some(d)) => format!(
                "degradation point: between {g} and {d} rules (loss > {:.3} % from {d}), {} trials\n",
                loss * 100.0,
                r.trials
            ),
        };
        print!("{out}");
    }
    Ok(ExitCode::SUCCESS)
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
        let b = Bisect::new(0.0, 1000.0, true, Width::Relative(0.01)).with_confirmation();
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
        let (f, tried) = run(Bisect::new(0.0, 500.0, true, Width::Relative(0.01)), |_| {
            true
        });
        assert_eq!(
            f,
            Found {
                pass: Some(500.0),
                fail: None
            }
        );
        assert_eq!(tried, vec![500.0]);
        // Known from a probe: no trial at all.
        let b = Bisect::new(0.0, 500.0, true, Width::Relative(0.01)).ceiling_known(true);
        assert_eq!(run(b, |_| true).1, Vec::<f64>::new());
    }

    #[test]
    fn failed_confirmation_searches_lower() {
        // The boundary moves down between the search and the confirmation (noise).
        use std::cell::Cell;
        let limit = Cell::new(600.0);
        let calls = Cell::new(0);
        let b = Bisect::new(0.0, 1000.0, true, Width::Relative(0.02)).with_confirmation();
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
