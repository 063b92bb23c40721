//! The answer first: sentences with numbers and CIs that open a run's section, made from
//! its analysis — the cost per rule per series (and what the CI is over; per segment
//! between rule counts where one line does not fit, or with two rule counts), flat
//! ones, the NDR of searches, the A/B verdicts — before the sentences the
//! workload analyses add (loss per rule, turning point, advantage ratio, section costs,
//! where this machine differs from the study).
//!
//! Owns: the general sentences and their order.
//! Must not: compute statistics of its own beyond combining those of the analysis; it
//! is called by the crate root after `analysis::analyse`.

use crate::conn::{ab_tests, AbTest};
use crate::figure::{
    at_place_of, mean_ci, num, round_ci, zero_slope_words, Analysis, Claim, CostFit, Estimator,
    SeriesSegments,
};
use crate::model::Trial;
use crate::model::{search_of, Config};
use crate::segments::Segment;
use crate::series::{series_name, varying, without_redundant};
use crate::stats::{self, Summary};
use results::stored::{SearchKind, SearchStored};
use results::{LimitedBy, Status};
use std::collections::BTreeMap;

/// The run's findings: the general ones first, then those the analyses made.
pub fn findings(configs: &[Config], trials: &[Trial], a: &Analysis) -> Vec<String> {
    let mut out: Vec<String> = costs(a);
    out.extend(ndr(trials));
    out.extend(envelopes(trials));
    out.extend(placement(trials));
    let conn: Vec<&Config> = configs
        .iter()
        .filter(|c| c.workload.is_conn() && !c.reps.is_empty())
        .collect();
    out.extend(ab_tests(&conn).iter().map(ab_sentence));
    out.extend(a.findings.iter().cloned());
    // A baseline whose every trial fwbench limited gives no cost vs baseline: said.
    let unmeasured = configs
        .iter()
        .filter(|c| c.is_baseline && c.limited_throughout())
        .count();
    if unmeasured > 0 {
        out.push(format!(
            "No cost vs baseline is stated where fwbench's sender or sink limited every \
             trial of the baseline ({unmeasured} baseline configuration{}): its rate is \
             fwbench's limit, not the gateway's (see the run's warnings).",
            if unmeasured == 1 { "" } else { "s" }
        ));
    }
    // Costs withheld where a rate is no measure of the gateway's (`Config::rate_doubt`):
    // said, by what.
    for (by, n) in crate::model::DoubtedBy::count(configs) {
        out.push(format!(
            "No cost vs baseline is stated for {n} configuration{}: {}.",
            if n == 1 { "" } else { "s" },
            by.because()
        ));
    }
    if out.is_empty() && configs.iter().any(|c| !c.reps.is_empty()) {
        out.push(
            "No headline number for this run's design: see the configurations table and the \
             figures below."
                .into(),
        );
    }
    // How much the repetitions varied, once, last (the CIs above carry it).
    out.extend(crate::noise::Spread::of(configs).note());
    out
}

/// Each series' cost per rule, in the order of the series: its line where the line
/// describes the data, else its segments (the only answer with two rule counts).
fn costs(a: &Analysis) -> Vec<String> {
    let fit = |series: &str| a.fits.iter().find(|f| f.series == series);
    // What the series' cost left out, after its sentence: " Left out: 3 trials …";
    // FLAGGED where what is left is no fair sample for the sentence's estimator.
    let left = |series: &str, s: String, e: Estimator| match a.left_out.get(series) {
        Some(w) if w.flag_of(e).is_some() && !s.starts_with(&format!("{series}: FLAGGED")) => {
            format!(
                "{series}: FLAGGED — {} Left out: {}.",
                s.strip_prefix(&format!("{series}: ")).unwrap_or(&s),
                w.text
            )
        }
        Some(w) => format!("{s} Left out: {}.", w.text),
        None => s,
    };
    let mut out: Vec<String> = a
        .segments
        .iter()
        .map(|s| {
            let text = match fit(&s.series) {
                Some(f) => cost_sentence(f, Some(s)),
                None => format!("{}: {}", s.series, segments_text(s)),
            };
            left(&s.series, text, s.estimator)
        })
        .collect();
    out.extend(
        a.fits
            .iter()
            .filter(|f| !a.segments.iter().any(|s| s.series == f.series))
            .map(|f| left(&f.series, cost_sentence(f, None), f.estimator)),
    );
    // A series whose every rate fwbench limited has no cost at all: said, not dropped.
    out.extend(
        a.left_out
            .iter()
            .filter(|(s, _)| !a.segments.iter().any(|x| &x.series == *s))
            .filter(|(s, _)| !a.fits.iter().any(|f| &f.series == *s))
            .map(|(s, w)| format!("{s}: no cost per rule is stated — {}.", w.what)),
    );
    out
}

/// "engine=nft: 11.2 ± 1.1 ns per rule per packet (1/pps estimator; 95 % CI over …)",
/// flat when the CI holds 0, the other estimator beside it. Where the line does not
/// describe the data, the segments answer (`segs`: "5.0 ± 0.3 ns per rule … from 0 to
/// 2000 rules, …"), with the line's flag and its reason after them; without segments
/// it is FLAGGED (not a per-rule cost).
pub fn cost_sentence(f: &CostFit, segs: Option<&SeriesSegments>) -> String {
    let Some(h) = f.headline() else {
        return match segs {
            Some(s) => format!("{}: {}", f.series, segments_text(s)),
            None => format!("{}: no cost line could be fitted.", f.series),
        };
    };
    let l = &h.fit.line;
    if let Some(p) = &h.problem {
        if let Some(s) = segs.filter(|s| s.merged.iter().any(|x| x.ci95.is_some())) {
            return format!(
                "{}: {} One line does not fit (FLAGGED: a line gives {} ns per rule per \
                 packet with intercept {} ns ({} estimator), but {p}).",
                f.series,
                segments_text(s),
                mean_ci(l.b, l.b_ci95),
                mean_ci(l.a, l.a_ci95),
                h.estimator.label()
            );
        }
        return format!(
            "{}: FLAGGED — a line gives {} ns per rule per packet with intercept {} ns ({} \
             estimator), but {p}; it is not a per-rule cost (see the figure: a knee or a \
             curve).",
            f.series,
            mean_ci(l.b, l.b_ci95),
            mean_ci(l.a, l.a_ci95),
            h.estimator.label()
        );
    }
    let what = zero_slope_words(
        l,
        h.fit.x_max,
        |v, c| format!("{} ns", at_place_of(v, Some(c))),
        "a packet's time",
    )
    .unwrap_or_default();
    format!(
        "{}: {} ns per rule per packet{what} ({} estimator; {}), {} ns per packet at 0 rules.{}{}",
        f.series,
        mean_ci(l.b, l.b_ci95),
        h.estimator.label(),
        h.basis(),
        mean_ci(l.a, l.a_ci95),
        beside(f),
        degradation_text(f)
    )
}

/// The other estimator's slope beside the headline's: " By CPU time, beside it: 9.8 ±
/// 1.2 ns per rule per packet." (flagged when its own line does not fit).
fn beside(f: &CostFit) -> String {
    let Some(o) = f.estimate(f.estimator.other()) else {
        return String::new();
    };
    let l = &o.fit.line;
    let flag = if o.problem.is_some() {
        "; its line does not fit"
    } else {
        ""
    };
    format!(
        " By {}, beside it: {} ns per rule per packet{flag}.",
        o.estimator.label(),
        mean_ci(l.b, l.b_ci95)
    )
}

/// One segment in words: "5.0 ± 0.3 ns per rule from 0 to 2000 rules", "no measurable
/// difference from 0 to 1000 rules (± 0.8 ns per rule)", or without a CI "5.2 ns per
/// rule from 0 to 1000 rules (an end with one repetition: no CI)".
fn segment_text(s: &Segment) -> String {
    let span = format!("from {} to {} rules", num(s.from), num(s.to));
    match s.ci95 {
        // Its CI holds 0: the width only, never the estimate as a cost.
        Some(c) if s.flat() => format!(
            "no measurable difference {span} (± {} ns per rule)",
            round_ci(s.cost, c).map_or_else(|| num(c), |(_, c)| c)
        ),
        Some(c) => format!("{} ns per rule {span}", mean_ci(s.cost, Some(c))),
        None => format!(
            "{} ns per rule {span} (an end with one repetition: no CI)",
            num(s.cost)
        ),
    }
}

/// A series' cost per rule by segment: "5.0 ± 0.3 ns per rule from 0 to 2000 rules,
/// 1.00 ± 0.08 ns per rule from 2000 to 10000 rules — the cost per rule changes at 2000
/// rules (1/pps estimator; …)."
fn segments_text(s: &SeriesSegments) -> String {
    let parts: Vec<String> = s.merged.iter().map(segment_text).collect();
    // A change is measured where two merged neighbours both have a CI (they were not
    // merged: their CIs do not overlap).
    let changes: Vec<String> = s
        .merged
        .windows(2)
        .filter(|w| w[0].ci95.is_some() && w[1].ci95.is_some())
        .map(|w| num(w[0].to))
        .collect();
    let changes = match changes.len() {
        0 => String::new(),
        _ => format!(
            " — the cost per rule changes at {} rules",
            changes.join(" and ")
        ),
    };
    format!(
        "{}{changes} (per packet, {} estimator; per segment: the difference of the mean \
         time per packet at its ends ÷ the rules between them, 95 % Welch CI over the \
         repetitions at each end; neighbours whose CIs overlap merged).",
        parts.join(", "),
        s.estimator.label()
    )
}

/// The degradation point, when the grid can place it: not when the drop is already at
/// the second rule count (then the grid only says "before it"). Only a measured drop
/// (its CI excludes 0, issue 37): a flat cost's noise says nothing.
fn degradation_text(f: &CostFit) -> String {
    match f.degradation_placed() {
        Some(Ok((good, bad))) => format!(
            " Packets/s fall measurably (95 % Welch CI) more than 5 % below the fewest-rules \
             rate between {} and {} rules.",
            num(good),
            num(bad)
        ),
        Some(Err(bad)) => format!(
            " Packets/s are already measurably (95 % Welch CI) more than 5 % down at {} rules, \
             the second rule count: this grid cannot place a degradation point.",
            num(bad)
        ),
        None => String::new(),
    }
}

/// One search's (rate pps, L2 rate b/s, limited by the sender, its upper bound passed).
type Found = (f64, Option<f64>, bool, bool);

/// How many of `trials` a role limited (`packet.limited_by`), and how many were judged.
fn limited_counts(trials: &[Trial], role: LimitedBy) -> (usize, usize) {
    // A search's ceiling probe at the sender's limit is the search's own answer
    // ("limited by the sender", said in its row): no warning of the run's. A step the
    // sink limited pulled the search down, and a shared CPU holds for its steps too:
    // those are said.
    fn limit(t: &Trial) -> Option<&results::stored::LimitStored> {
        let l = t.stored.packet.as_ref()?.limited_by.as_ref()?;
        (t.step_of().is_none() || l.by != Some(LimitedBy::Sender)).then_some(l)
    }
    let by = trials
        .iter()
        .filter(|t| limit(t).and_then(|l| l.by) == Some(role))
        .count();
    (by, trials.iter().filter(|t| limit(t).is_some()).count())
}

/// A warning when flood/flow trials' rates were set by fwbench's own sender or sink
/// (`packet.limited_by`, issue 28): those numbers are not the gateway's, and the user
/// can act on it (said once per role, with what to do). The crate root lists them
/// among the run's warnings (kind `fwbench-limit`).
pub fn fwbench_limit_warnings(trials: &[Trial]) -> Vec<String> {
    [LimitedBy::Sender, LimitedBy::Sink]
        .into_iter()
        .map(|role| (role, limited_counts(trials, role)))
        .filter(|(_, (n, _))| *n > 0)
        .map(|(role, (n, judged))| {
            // What the user can do about it, said once with the count.
            let act = match role {
                LimitedBy::Sink => {
                    "the sink's CPU did not keep up (other work on it, or one thread too \
                     few): give the sink a CPU of its own (pin_server, --pin-server) or more \
                     threads (sink_threads), or run on a quieter machine"
                }
                _ => {
                    "the sender offered no more: give it more threads (threads) on CPUs \
                     of their own (pin_client, --pin-client)"
                }
            };
            format!(
                "{n} of {judged} packet trials were limited by fwbench's {}, not by the \
                 gateway: their rates are fwbench's limit, not the gateway's; {act}.",
                role.as_str()
            )
        })
        .collect()
}

/// The sender on a saturated CPU the gateway's softirq shared: the run's placement
/// (pins given, or `--no-pin`; a scenario without pins gives the gateway a CPU of its
/// own), said once as what it measures, not as a warning per trial.
fn placement(trials: &[Trial]) -> Option<String> {
    let (shared, judged) = limited_counts(trials, LimitedBy::SharedCpu);
    // Native XDP runs in the receive poll of the sender's veth: pinning does not move it.
    let in_driver = trials
        .iter()
        .filter_map(|t| t.stored.packet.as_ref()?.limited_by.as_ref())
        .filter(|l| l.by == Some(LimitedBy::SharedCpu) && l.in_driver == Some(true))
        .count();
    const XDP: &str = "its XDP program runs in the receive poll of the sender's veth, \
                       which pinning does not move: the gateway's own rate needs a sender \
                       on another machine (a testbed file)";
    let act = match (in_driver, shared) {
        (0, _) => {
            "To measure the gateway alone, pin it apart (pin_gateway, --pin-gateway).".to_string()
        }
        (x, n) if x == n => format!("For these trials' gateway {XDP}."),
        (x, _) => format!(
            "To measure the gateway alone, pin it apart (pin_gateway, --pin-gateway); in \
             {x} of them, native XDP, {XDP}."
        ),
    };
    (shared > 0).then(|| {
        format!(
            "Placement: in {shared} of {judged} packet trials the sender and the gateway's \
             packet processing shared the sender's CPU, as this run placed them (shared-cpu): \
             each rate is the cost of the whole path — sending, forwarding, the rules — on \
             one core, not the gateway's limit alone, and a cost per rule over these trials \
             is still the rules' (the sender's share of each packet's time does not grow \
             with them). {act}"
        )
    })
}

/// The rates an ndr or mlr search found, by mode: an ndr's one (mode "ndr"/"pdr"), an
/// mlr's one per goal loss ratio ("MLR NDR", "MLR PDR ≤ 0.5 %").
/// Each rate as (rate pps, rate b/s at layer 2).
fn search_rates(s: &SearchStored) -> Vec<SearchRate> {
    // The upper bound the search was given passed: nothing failed above it.
    let bound_passed = |rate: Option<f64>, fail: Option<f64>| {
        fail.is_none()
            && rate.is_some()
            && s.ceiling_pps == rate
            && s.limited_by_sender != Some(true)
    };
    match s.search {
        Some(SearchKind::Ndr) => vec![SearchRate {
            mode: s.mode.as_deref().unwrap_or("ndr").to_uppercase(),
            rate: s.rate_pps,
            l2: s.rate_bps_l2,
            bound_passed: bound_passed(s.rate_pps, s.fail_pps),
        }],
        Some(SearchKind::Mlr) => s
            .goals
            .iter()
            .map(|g| {
                let r = g.loss_ratio.unwrap_or(0.0);
                let mode = if r == 0.0 {
                    "MLR NDR".to_string()
                } else {
                    format!("MLR PDR ≤ {} %", num(r * 100.0))
                };
                SearchRate {
                    mode,
                    rate: g.rate_pps,
                    l2: g.rate_bps_l2,
                    bound_passed: bound_passed(g.rate_pps, g.fail_pps),
                }
            })
            .collect(),
        Some(SearchKind::Degrade | SearchKind::Sweetspot | SearchKind::Envelope) | None => vec![],
    }
}

/// One rate a search states: an NDR, or one MLR goal's.
struct SearchRate {
    /// "NDR", "PDR", "MLR NDR", "MLR PDR ≤ 0.5 %".
    mode: String,
    rate: Option<f64>,
    l2: Option<f64>,
    /// The upper bound the search was given passed (nothing failed above it): the
    /// gateway's rate is at least this.
    bound_passed: bool,
}

/// Each safe-envelope search's answer (issue 39), in a sentence; one that did not
/// converge says so instead of a rate.
fn envelopes(trials: &[Trial]) -> Vec<String> {
    trials
        .iter()
        .filter_map(|t| {
            search_of(t)
                .filter(|s| s.is(SearchKind::Envelope))
                .map(|s| (t, s))
        })
        .map(|(t, s)| {
            // What the rate was held to: the search's targets, from its parameters.
            let target = |k: &str| t.row.params["search"]["envelope"][k].as_f64();
            let targets = match (target("latency_ms"), target("effect_ms")) {
                (Some(l), Some(e)) => format!(
                    ", held to p99 latency (due → committed) ≤ {} ms and time to effect ≤ {} ms",
                    num(l),
                    num(e)
                ),
                _ => String::new(),
            };
            // Its background's load (`--load`): a share of what, and how sound that is.
            let background = crate::updates::load_of(&t.p)
                .map_or(String::new(), |l| format!(", background at {}", l.label));
            let what = format!(
                "Safe envelope of {} updates at {} rules ({}{background}{targets})",
                s.update.as_deref().unwrap_or("?"),
                s.installed.map_or("?".into(), num),
                t.label_or_engine().unwrap_or_else(|| "-".into())
            );
            match (s.converged, s.rate, s.fail_rate) {
                (Some(true), Some(r), Some(f)) => format!(
                    "{what}: {} updates/s kept the targets, {} did not.",
                    num(r),
                    num(f)
                ),
                (Some(true), Some(r), None) => format!(
                    "{what}: at least {} updates/s, the highest searched.",
                    num(r)
                ),
                (Some(true), None, _) => {
                    format!("{what}: not even the lowest rate searched kept the targets.")
                }
                (_, _, _) => {
                    format!("{what}: NOT converged, no rate stated (its doubts: the search's row).")
                }
            }
        })
        .collect()
}

/// Each search trial's case (by trial id): its label or engine, with what tells its
/// configuration from the others of its workload ("nft (rules=10000)", "nft
/// (nft_family=ip)") — the findings' and the search table's one name for it. Where
/// two configurations would still read alike, every parameter that differs names them.
pub(crate) fn search_case_names(trials: &[Trial]) -> BTreeMap<i64, String> {
    let configs = search_configs(trials);
    let names = search_cases(&configs);
    let mut out = BTreeMap::new();
    for c in &configs {
        for t in c.reps.iter().chain(&c.failed) {
            out.insert(t.id, names[c.key.as_str()].clone());
        }
    }
    out
}

/// The configurations of `trials`' searches (each search a repetition of its own).
fn search_configs(trials: &[Trial]) -> Vec<Config> {
    let searched: Vec<Trial> = trials
        .iter()
        .filter(|t| search_of(t).is_some())
        .cloned()
        .collect();
    crate::model::configs(&searched, &BTreeMap::new())
}

/// [`search_case_names`] by configuration key, of configurations built from search
/// trials.
fn search_cases(configs: &[Config]) -> BTreeMap<&str, String> {
    let mut by_workload: BTreeMap<String, Vec<&Config>> = BTreeMap::new();
    for c in configs {
        by_workload
            .entry(c.workload.to_string())
            .or_default()
            .push(c);
    }
    let mut out = BTreeMap::new();
    for cs in by_workload.values() {
        let named = |keys: &[String]| -> Vec<String> {
            cs.iter()
                .map(|c| {
                    let first = c.reps.iter().chain(&c.failed).next();
                    let case = first
                        .and_then(Trial::label_or_engine)
                        .unwrap_or_else(|| "-".into());
                    if keys.is_empty() {
                        case
                    } else {
                        format!("{case} ({})", series_name(c, keys))
                    }
                })
                .collect()
        };
        // The case names them already: what else differs, less what repeats it (a
        // setting that goes with the engine).
        let case = |k: &String| ["label", "engine"].contains(&k.as_str());
        // Where names still collide (one label over two engines): all but the label.
        let differs: Vec<String> = varying(cs).into_iter().filter(|k| k != "label").collect();
        let unique: Vec<String> = without_redundant(cs, varying(cs))
            .into_iter()
            .filter(|k| !case(k))
            .collect();
        let collide = |names: &[String]| {
            let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
            distinct.len() < names.len()
        };
        let mut names = named(&unique);
        if collide(&names) {
            names = named(&differs);
        }
        // Still alike (what differs does not show in its text): numbered, never one.
        if collide(&names) {
            for (i, n) in names.iter_mut().enumerate() {
                *n = format!("{n} [configuration {}]", i + 1);
            }
        }
        for (c, name) in cs.iter().zip(names) {
            out.insert(c.key.as_str(), name);
        }
    }
    out
}

/// NDR/PDR results (ndr and mlr searches), per configuration: the mean ± CI over its
/// searches (one search: the value) — never over searches of other parameters (a
/// scenario's `rules = [0, 1000, 10000]` is three cases, each named by what differs).
/// A search that did not converge, or whose trial is flagged (its trials contradict
/// each other, the sender fell behind below its rate, …), gives no rate: it is counted
/// out, with where its doubts are. A search whose rate is a lower bound only (the
/// sender was the limit, the upper bound passed) is not averaged with others.
fn ndr(trials: &[Trial]) -> Vec<String> {
    let configs = search_configs(trials);
    let case_of = search_cases(&configs);
    let mut by_case: BTreeMap<(String, String), Vec<Found>> = BTreeMap::new();
    // Per case: searches that did not converge, converged ones flagged, and converged
    // ones otherwise not ok (dropped, failed).
    let mut out_of: BTreeMap<(String, String), [usize; 3]> = BTreeMap::new();
    for c in &configs {
        let case = &case_of[c.key.as_str()];
        for t in c.reps.iter().chain(&c.failed) {
            let Some(s) = search_of(t) else { continue };
            for r in search_rates(s) {
                let mut mode = r.mode;
                if t.workload.new_flows() {
                    // One datagram per new flow: the rate is new flows/s (issue 26).
                    mode += " (new flows/s = packets/s)";
                }
                let key = (case.clone(), mode);
                if s.converged != Some(true) || t.status != Status::Ok {
                    let n = out_of.entry(key).or_default();
                    let i = if s.converged != Some(true) {
                        0
                    } else if t.status == Status::Flagged {
                        1
                    } else {
                        2
                    };
                    n[i] += 1;
                    continue;
                }
                let Some(rate) = r.rate else {
                    continue;
                };
                by_case.entry(key).or_default().push((
                    rate,
                    r.l2,
                    s.limited_by_sender == Some(true),
                    r.bound_passed,
                ));
            }
        }
    }
    for key in out_of.keys() {
        by_case.entry(key.clone()).or_default();
    }
    by_case
        .into_iter()
        .map(|((case, mode), v)| {
            let left = out_of.get(&(case.clone(), mode.clone())).copied();
            let mut left_words: Vec<String> = left
                .map(|counts| {
                    let n: usize = counts.iter().sum();
                    let one = n == 1;
                    let whys = [
                        "did not converge",
                        if one { "is flagged" } else { "are flagged" },
                        "did not end ok",
                    ];
                    let why: Vec<&str> =
                        (0..3).filter(|&i| counts[i] > 0).map(|i| whys[i]).collect();
                    let (search, rows) = if one {
                        ("search", "the search's row says why")
                    } else {
                        ("searches", "the searches' rows say why")
                    };
                    format!("{n} {search} that {} ({rows})", why.join(" or "))
                })
                .into_iter()
                .collect();
            if v.is_empty() {
                return format!(
                    "{mode} of {case}: no rate stated — {}.",
                    left_words.join("; ")
                );
            }
            // A lower bound beside measured rates: not averaged with them.
            let (bounds, rates): (Vec<Found>, Vec<Found>) = v.into_iter().partition(|x| x.2 || x.3);
            if rates.is_empty() && bounds.len() > 1 {
                // Only bounds: the rate is at least the largest; a mean and CI of
                // bounds describes nothing of the gateway.
                let most = bounds.iter().map(|x| x.0).fold(f64::MIN, f64::max);
                let why = match (bounds.iter().any(|x| x.2), bounds.iter().any(|x| x.3)) {
                    (true, true) => {
                        "the sender was the limit, or the search's upper bound passed (raise \
                         max_rate)"
                    }
                    (true, false) => "the sender was the limit",
                    _ => "the search's upper bound passed (raise max_rate)",
                };
                let left = if left_words.is_empty() {
                    String::new()
                } else {
                    format!(" Left out: {}.", left_words.join("; "))
                };
                return format!(
                    "{mode} of {case}: at least {} packets/s — the largest of {} searches, \
                     each a lower bound only ({why}): no mean or CI is stated of bounds.{left}",
                    num(most),
                    bounds.len()
                );
            }
            let v = if rates.is_empty() {
                bounds
            } else {
                if !bounds.is_empty() {
                    let n = bounds.len();
                    let (search, its) = if n == 1 {
                        ("search", "its")
                    } else {
                        ("searches", "their")
                    };
                    left_words.push(format!(
                        "{n} {search} whose rate is a lower bound only ({its} sender was the \
                         limit or {its} upper bound passed): not averaged with measured rates"
                    ));
                }
                rates
            };
            let rates: Vec<f64> = v.iter().map(|x| x.0).collect();
            let s = Summary::of(&rates).expect("one rate at least");
            let l2: Vec<f64> = v.iter().filter_map(|x| x.1).collect();
            let bps = stats::mean(&l2)
                .map(|b| format!(" ({} Mb/s on the wire)", num(b / 1e6)))
                .unwrap_or_default();
            let over = if v.len() > 1 {
                format!(", 95 % CI over {} searches", v.len())
            } else {
                ", one search (no CI)".into()
            };
            let sender = if v.iter().any(|x| x.2) {
                "; the sender was the limit, so the firewall's rate is at least this"
            } else if v.iter().any(|x| x.3) {
                "; the search's upper bound passed, so the firewall's rate is at least this \
                 (raise max_rate)"
            } else {
                ""
            };
            let left = if left_words.is_empty() {
                String::new()
            } else {
                format!(" Left out: {}.", left_words.join("; "))
            };
            format!(
                "{mode} of {case}: {} packets/s{bps}{over}{sender}.{left}",
                mean_ci(s.mean, s.ci95)
            )
        })
        .collect()
}

/// "A/B (case): rules 0 → 500 changes the mean download time from a to b ms by +d ± ci
/// ms (+x %) (…: significant at 5 %)" — or "no measurable change …" when not
/// significant, "not tested" without a test, "no comparison" for one gateway twice.
pub fn ab_sentence(t: &AbTest) -> String {
    let (d, ci, test) = ab_delta(t);
    let (arm_a, arm_b) = t.arms();
    let rel = if arm_a.mean != 0.0 {
        format!(" ({:+.2} %)", d / arm_a.mean * 100.0)
    } else {
        String::new()
    };
    let sign = if d > 0.0 { "+" } else { "" };
    let diff = match ci {
        Some(c) => mean_ci(d, Some(c)),
        None => num(d),
    };
    if let Some(why) = &t.same_gateway {
        // The two arms are one gateway measured twice (engine none, conntrack alone, …).
        let p = t
            .p()
            .map(|p| format!(", p = {}", p_short(p)))
            .unwrap_or_default();
        let what = if t.p().is_some_and(|p| p < crate::conn::ALPHA) {
            "is significant although nothing differs: the testbed drifted during the run \
             (the order or the machine's other load), so a difference of this size elsewhere \
             in the run is doubtful"
        } else {
            "is the testbed's noise"
        };
        return format!(
            "A/B ({}): no comparison — {why}, so {} {} → {} ran the same gateway twice; \
             the difference of its mean {} ({sign}{diff} ms{rel}; {test}{p}) {what}, not a \
             cost.",
            t.case, t.parameter, t.a_value, t.b_value, t.quantity,
        );
    }
    let verdict = match t.p() {
        Some(p) if p < crate::conn::ALPHA => format!("p = {}: significant at 5 %", p_short(p)),
        Some(p) => format!("p = {}: not significant", p_short(p)),
        None => "fewer than 2 values or no spread".into(),
    };
    let head = format!(
        "A/B ({}): {} {} → {}",
        t.case, t.parameter, t.a_value, t.b_value
    );
    let (a, b, q) = (num(arm_a.mean), num(arm_b.mean), t.quantity);
    match t.p() {
        // Untested: the means, no difference claimed either way.
        None => format!("{head}: not tested ({verdict}) — the mean {q} was {a} vs {b} ms."),
        Some(p) if p < crate::conn::ALPHA => format!(
            "{head} changes the mean {q} from {a} to {b} ms by {sign}{diff} ms{rel} (95 % CI; \
             {test}, {verdict})."
        ),
        // Not significant (or no p at all): no change is stated, only what was measured.
        Some(_) => format!(
            "{head}: no measurable change of the mean {q} ({a} vs {b} ms, {sign}{diff} \
             ms{rel}; 95 % CI; {test}, {verdict})."
        ),
    }
}

/// The numbers the general findings and the fits table state, under keys free of
/// measured values: each series' cost per rule by each estimator and each A/B difference.
pub fn claims(configs: &[Config], a: &Analysis) -> Vec<Claim> {
    // Every estimator's slope (the report's fits table states each): the headline is
    // one of them, the other is beside it, and the two answer different questions.
    let mut out: Vec<Claim> = a
        .fits
        .iter()
        .flat_map(|f| {
            f.estimates.iter().map(move |h| {
                let l = &h.fit.line;
                let left = a.left_out.get(&f.series);
                let flag = left.and_then(|l| l.flag_of(h.estimator));
                let flagged = if let Some(why) = flag {
                    format!("FLAGGED, {why}; ")
                } else if h.problem.is_some() {
                    "FLAGGED, the line does not describe the data; ".to_string()
                } else {
                    String::new()
                };
                Claim::new(
                    format!(
                        "cost per rule ({} estimator): {}",
                        h.estimator.label(),
                        f.series
                    ),
                    l.b,
                    l.b_ci95,
                    "ns per rule per packet",
                    format!("{flagged}{}", h.basis()),
                )
                .doubted(left.filter(|_| flag.is_some()).map(|l| l.text.clone()))
            })
        })
        .collect();
    let conn: Vec<&Config> = configs
        .iter()
        .filter(|c| c.workload.is_conn() && !c.reps.is_empty())
        .collect();
    out.extend(ab_tests(&conn).iter().map(|t| {
        let (d, ci, test) = ab_delta(t);
        let test = match &t.same_gateway {
            Some(why) => {
                format!("FLAGGED, the same gateway twice ({why}): noise, not a cost; {test}")
            }
            None => test,
        };
        Claim::new(
            format!(
                "A/B ({}): {} {} → {}, mean {}",
                t.case, t.parameter, t.a_value, t.b_value, t.quantity
            ),
            d,
            ci,
            "ms",
            test,
        )
    }));
    out
}

/// B − A of an A/B test with its 95 % CI and the test it comes from: the paired t over
/// the pairs when the arms ran as pairs, else Welch's over the repetitions, else over
/// the values of trials too few for that (said: within trials).
fn ab_delta(t: &AbTest) -> (f64, Option<f64>, String) {
    match (t.paired, t.over_reps, t.welch) {
        (Some(p), _, _) => (p.mean, Some(p.ci95), format!("paired t over {} pairs", p.n)),
        (None, Some(r), _) => {
            let (d, ci) = r.delta();
            let test = format!("Welch over {} + {} repetitions", r.a.n, r.b.n);
            (d, Some(ci), test)
        }
        (None, None, Some(w)) => {
            let se = (t.a.sd.powi(2) / t.a.n as f64 + t.b.sd.powi(2) / t.b.n as f64).sqrt();
            let (d, ci) = (
                t.b.mean - t.a.mean,
                Some(stats::t_quantile(0.975, w.df) * se),
            );
            // Within a trial or two: a rerun's spread is not in it.
            let test = format!(
                "Welch over the {} + {} {} of {} + {} trials, within trials: a rerun may \
                 differ by more",
                t.a.n,
                t.b.n,
                t.values(),
                t.trials.0,
                t.trials.1
            );
            (d, ci, test)
        }
        _ => (t.b.mean - t.a.mean, None, "no test".to_string()),
    }
}

/// A p-value in a sentence.
fn p_short(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        num(p)
    }
}

#[cfg(test)]
#[path = "findings_tests.rs"]
mod tests;
