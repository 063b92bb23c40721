//! Text reports of searches (ndr/pdr, degradation point, sweet spot).

use crate::outcome::search::DegradeReport;
use crate::outcome::search::NdrReport;
use crate::outcome::search::SearchSummary;
use crate::outcome::search::{pct, LatencyPoint, MlrReport};
use crate::output;
use crate::params::TrialParams;

/// Text report of a search.
pub fn search_text(p: &TrialParams, r: &SearchSummary) -> String {
    let text = match r {
        SearchSummary::Ndr(x) => ndr_text(p, x),
        SearchSummary::Degrade(x) => degrade_text(p, x),
        SearchSummary::Mlr(x) => mlr_text(p, x),
        SearchSummary::SweetSpot(x) => sweet_spot_text(p, x),
        SearchSummary::Envelope(x) => envelope_text(p, x),
    };
    // Said last, where the answer is read: why it may not be believed.
    let flags: String = r
        .doubts()
        .iter()
        .map(|d| format!("  FLAGGED  {d}\n"))
        .collect();
    text + &flags
}

fn sweet_spot_text(p: &TrialParams, r: &crate::outcome::search::SweetSpotReport) -> String {
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
        "sweet spot: {} sessions at once, {:.0} sessions/s (mean session {:.3} ms); within 3 %: {:?} (one trial each, no CI: not told apart)
",
        r.best_parallel,
        r.best_sessions_per_s,
        r.latency_at_best_s * 1e3,
        r.plateau
    );
    out
}

/// The search's parameters line, named by `what` where the line does not already
/// start with it (an ndr's read "ndr ndr forward …"; a pdr's "pdr ndr forward …").
fn headed(what: &str, p: &TrialParams) -> String {
    let line = output::params_line(p);
    match line.starts_with(&format!("{what} ")) {
        true => line,
        false => format!("{what} {line}"),
    }
}

fn ndr_text(p: &TrialParams, r: &NdrReport) -> String {
    let mut out = format!("{}\n", headed(r.mode, p));
    out += "  offered pps    received pps   loss %      result\n";
    for q in &r.curve {
        out += &format!(
            "  {:>12.0}  {:>14.0}  {:>8.4}    {}{}\n",
            q.x,
            q.received_pps,
            q.loss_ratio * 100.0,
            if q.pass { "pass" } else { "fail" },
            q.note()
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
                if r.converged { "" } else { " (NOT converged: see FLAGGED)" }
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
        None => out += &format!("{what}: {}\n", no_rate(r.fail_pps)),
    }
    out + &latency_text(&r.latency)
}

/// A search's answer where no rate passed: the lowest that failed, or that none did
/// either (out of trials before a verdict; no rate is invented for it).
fn no_rate(fail: Option<f64>) -> String {
    match fail {
        Some(f) => format!("no rate passed (lowest failing {f:.0} pps)"),
        None => "no rate passed and none failed: no verdict".to_string(),
    }
}

/// One-way delay at fractions of the rate found, one line per fraction.
fn latency_text(l: &[LatencyPoint]) -> String {
    if l.is_empty() {
        return String::new();
    }
    let mut out = "latency under load (one-way delay, µs):\n  % of rate   offered pps    loss %      min      p50      p90      p99    p99.9      max\n".to_string();
    let us = |ns: u64| ns as f64 / 1e3;
    for q in l {
        if q.owd.count == 0 {
            out += &format!(
                "  {:>8.0}  {:>12.0}  {:>8.4}   (no delays: {})\n",
                q.fraction * 100.0,
                q.offered_pps,
                q.loss_ratio * 100.0,
                q.no_delays()
            );
            continue;
        }
        out += &format!(
            "  {:>8.0}  {:>12.0}  {:>8.4}  {:>7.1}  {:>7.1}  {:>7.1}  {:>7.1}  {:>7.1}  {:>7.1}\n",
            q.fraction * 100.0,
            q.offered_pps,
            q.loss_ratio * 100.0,
            us(q.owd.min_ns),
            us(q.owd.p50_ns),
            us(q.owd.p90_ns),
            us(q.owd.p99_ns),
            us(q.owd.p999_ns),
            us(q.owd.max_ns)
        );
    }
    out
}

fn mlr_text(p: &TrialParams, r: &MlrReport) -> String {
    let mut out = format!("{}\n", output::params_line(p));
    out += "  offered pps    duration s   received pps   loss %\n";
    for q in &r.curve {
        out += &format!(
            "  {:>12.0}  {:>10.2}  {:>14.0}  {:>8.4}{}\n",
            q.point.x,
            q.duration_s,
            q.point.received_pps,
            q.counted_loss_ratio * 100.0,
            if q.point.sender_behind {
                " (sender behind schedule: counted as loss)"
            } else {
                ""
            }
        );
    }
    out += &format!(
        "MLRsearch, final trials {} s (first {} s), precision {}: {} trials, {:.0} s of traffic{}\n",
        r.final_duration_s,
        r.initial_duration_s,
        pct(r.precision),
        r.trials,
        r.trial_time_s,
        if r.converged { "" } else { " (NOT converged: see FLAGGED)" }
    );
    for g in &r.goals {
        let what = if g.loss_ratio == 0.0 {
            "no-drop rate (NDR)".to_string()
        } else {
            format!("rate at ≤ {} loss (PDR)", pct(g.loss_ratio))
        };
        out += &match (g.rate_pps, g.fail_pps) {
            (Some(x), f) => format!(
                "  {what}: {x:.0} pps = {:.2} Mb/s UDP payload ({} B) = {:.2} Mb/s Ethernet ({} B frames){}\n",
                g.rate_bps_payload.unwrap_or(0.0) / 1e6,
                r.payload,
                g.rate_bps_l2.unwrap_or(0.0) / 1e6,
                r.frame,
                match f {
                    Some(f) => format!("; fails at {f:.0} pps"),
                    None if r.ceiling_given => " — the upper bound you gave passed: raise --max-rate".into(),
                    None => " — everything the sender offered passed: the sender, not the gateway, is the limit".into(),
                }
            ),
            (None, f) => format!("  {what}: {}\n", no_rate(f)),
        };
    }
    out + &latency_text(&r.latency)
}

fn envelope_text(p: &TrialParams, r: &crate::outcome::search::EnvelopeReport) -> String {
    let t = &r.targets;
    // `--load`: the background's share and what it was taken of, under the header.
    let load = (p.events.as_ref())
        .and_then(|e| e.load.as_ref())
        .and_then(crate::workloads::events::load_text)
        .map_or(String::new(), |l| format!("\n  {l}"));
    let mut out = format!(
        "{}{load}\n  targets: p99 latency (due → committed) ≤ {} ms, time to effect ≤ {} ms, \
         no must-drop packet passing, every update committed\n  \
         updates/s  committed   p99 latency   p99 commit   effect ms  violations  result\n",
        headed("envelope", p),
        t.latency_ms,
        t.effect_ms
    );
    let ms = |q: &Option<crate::workloads::events::Quantiles>| {
        q.as_ref()
            .map_or("-".into(), |q| format!("{:.1} ms", q.p99))
    };
    for q in &r.points {
        out += &format!(
            "  {:>9.2}  {:>9}  {:>12}  {:>11}  {:>10}  {:>10}  {}{}\n",
            q.rate,
            format!("{}/{}", q.committed, q.scheduled),
            ms(&q.latency_ms),
            ms(&q.commit_ms),
            q.effect_ms.map_or("-".into(), |e| format!("{e:.1}")),
            q.violations,
            if q.pass { "held" } else { "missed" },
            q.why.as_ref().map_or(String::new(), |w| format!(": {w}"))
        );
        if let Some(f) = &q.flagged {
            out += &format!("             (trial flagged: {f})\n");
        }
    }
    // Nearest rank: below 100 values the 99th percentile is the largest.
    let few = r
        .points
        .iter()
        .filter(|q| q.latency_ms.as_ref().is_some_and(|l| l.n < 100))
        .count();
    let steps = match (few, r.points.len()) {
        (1, 1) => "its one step".to_string(),
        (f, n) if f == n => format!("all {n} steps"),
        (f, n) => format!("{f} of the {n} steps"),
    };
    if few > 0 {
        out += &format!(
            "  (p99 of fewer than 100 updates is their maximum, by nearest rank: {steps})\n"
        );
    }
    out + &r.answer() + "\n"
}

fn degrade_text(p: &TrialParams, r: &DegradeReport) -> String {
    let mut out = format!(
        "{}\n  rules   received pps   loss %     result\n",
        headed("degrade", p)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A latency point without delays says why: withheld (source and sink on hosts
    /// whose clocks are not known well enough) or nothing arrived; one with delays
    /// prints its percentiles.
    #[test]
    fn a_latency_point_without_delays_says_why() {
        let point = |count, owd_basis| LatencyPoint {
            fraction: 0.5,
            offered_pps: 1000.0,
            sent_pps: 1000.0,
            received_pps: 1000.0,
            loss_ratio: 0.0,
            elapsed_s: 1.0,
            owd: proto::RttSummary {
                count,
                p50_ns: 12_500,
                ..Default::default()
            },
            owd_basis,
        };
        let text = latency_text(&[
            point(0, Some("rtt-only")),
            point(0, Some("corrected")),
            point(0, None),
            point(9, Some("corrected")),
        ]);
        let lines: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[0]
                .ends_with("(no delays: withheld: the hosts' clocks are not known well enough)"),
            "{text}"
        );
        assert!(lines[1].ends_with("(no delays: nothing arrived)"), "{text}");
        assert!(lines[2].ends_with("(no delays: nothing arrived)"), "{text}");
        assert!(
            lines[3].contains("12.5") && !lines[3].contains("no delays"),
            "{text}"
        );
    }

    /// An ndr's header read "ndr ndr forward …": named once; a pdr keeps its name.
    #[test]
    fn a_searchs_header_names_it_once() {
        use crate::params::workload::SearchKind;
        let p = crate::plan::build::try_test_search(SearchKind::Ndr, &[]).unwrap();
        assert!(
            headed("ndr", &p).starts_with("ndr forward "),
            "{}",
            headed("ndr", &p)
        );
        assert!(headed("pdr", &p).starts_with("pdr ndr forward "));
        let d =
            crate::plan::build::try_test_search(SearchKind::Degrade, &[("engine", "nft")]).unwrap();
        assert!(headed("degrade", &d).starts_with("degrade forward "));
    }

    /// A goal with no bound (out of trials before a final trial passed or failed it)
    /// invents no rate: "lowest failing 0 pps" was said of a rate never measured.
    #[test]
    fn a_goal_without_bounds_invents_no_failing_rate() {
        use crate::outcome::search::MlrGoal;
        use crate::params::workload::SearchKind;
        let p = crate::plan::build::try_test_search(SearchKind::Mlr, &[]).unwrap();
        let goal = |loss_ratio, fail_pps| MlrGoal {
            loss_ratio,
            rate_pps: None,
            rate_bps_payload: None,
            rate_bps_l2: None,
            fail_pps,
        };
        let r = MlrReport {
            mode: "mlr",
            goals: vec![goal(0.0, None), goal(0.005, Some(1000.0))],
            rate_pps: None,
            rate_bps_l2: None,
            fail_pps: None,
            precision: 0.02,
            final_duration_s: 2.0,
            initial_duration_s: 1.0,
            payload: 18,
            frame: 64,
            ceiling_pps: 895_463.0,
            ceiling_given: true,
            limited_by_sender: false,
            converged: false,
            trials: 1,
            trial_time_s: 1.0,
            curve: vec![],
            latency: vec![],
            doubts: vec![],
        };
        let text = mlr_text(&p, &r);
        assert!(!text.contains("lowest failing 0 pps"), "{text}");
        assert!(
            text.contains("  no-drop rate (NDR): no rate passed and none failed: no verdict\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  rate at ≤ 0.5 % loss (PDR): no rate passed (lowest failing 1000 pps)\n"
            ),
            "{text}"
        );
    }
}
