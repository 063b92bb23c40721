//! Throughput workloads (seeds 000–002): echo figures (per-client throughput, cost
//! vs baseline, threads vs epoll) and flood/flow figures (pps, loss, time per packet
//! with cost fits and knee, advantage ratio, softirq) against the rules axis.
//!
//! Owns: those figures and the cost fits behind them.
//! Must not: import `conn` or `analysis` (it is one of the analyses the top module
//! assembles), or read the store.

use crate::figure::{
    at_place_of, mean_ci, num, Analysis, Claim, CostEstimate, CostFit, Estimator, Figure, LeftOut,
    Options, Point, Series, SeriesSegments,
};
use crate::model::{costed, main_metric, Config, Paced};
use crate::series::{
    and_list, bar_figure, group, line_figure, metric, metric_label, rules_axis, series_name,
    varying,
};
use crate::stats;
use std::collections::{BTreeMap, BTreeSet};

/// Decrease of the main metric vs the baseline by `x_key`, one series per other setting.
fn cost_figure(configs: &[&Config], x_key: &str, x_label: &str, what: &str, a: &mut Analysis) {
    let costed = costed(configs);
    if costed.is_empty() {
        return;
    }
    let g = group(&costed, &[x_key]);
    let x = |c: &Config| c.param_f64(x_key);
    let y = |c: &Config| c.cost_pct.map(|v| (v, c.cost_ci95));
    let id = format!("{what}-decrease-vs-baseline");
    let title = format!("{} decrease vs baseline", capitalise(what));
    // The rows whose cost is withheld (`Config::rate_doubt`) are no point: said here,
    // and in a finding where none is left to draw.
    let withheld = crate::model::DoubtedBy::count(configs.iter().copied());
    if let Some(mut f) = line_figure(
        &id,
        &title,
        (x_label, "decrease vs baseline (%)"),
        &g,
        &x,
        &y,
    ) {
        for (by, n) in withheld {
            f.notes.push(format!(
                "{n} configuration(s) are not drawn, no decrease: {}.",
                by.because()
            ));
        }
        a.figures.push(f);
    }
}

/// First letter upper-case.
fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// Where the difference a − b changes sign over common x: (x before, x after, linear
/// interpolation of the zero).
pub fn crossovers(a: &[Point], b: &[Point]) -> Vec<(f64, f64, f64)> {
    let d: Vec<(f64, f64)> = a
        .iter()
        .filter_map(|p| {
            let q = b.iter().find(|q| q.x == p.x)?;
            Some((p.x, p.y - q.y))
        })
        .collect();
    d.windows(2)
        .filter(|w| w[0].1 * w[1].1 < 0.0)
        .map(|w| {
            let ((x0, d0), (x1, d1)) = (w[0], w[1]);
            (x0, x1, x0 + (x1 - x0) * d0 / (d0 - d1))
        })
        .collect()
}

/// Flood/flow figures: pps, loss, time per packet (with fits), advantage ratio and
/// softirq vs rules; a bar chart of configurations when there is no rules axis.
pub(crate) fn packet_figures(packet: &[&Config], fallback: bool, opts: &Options, a: &mut Analysis) {
    if packet.is_empty() {
        return;
    }
    let Some(x) = rules_axis(packet) else {
        if fallback && packet.iter().all(|c| c.label.is_none()) {
            a.figures.extend(bar_of_configs(packet));
        }
        return;
    };
    let g = group(packet, &["rules"]);
    // Curves need a series with two rule counts or more: cases that each have their
    // own rule count (seed 001's table) are not a sweep over rules.
    let swept = g.values().any(|s| rule_counts(s, x) >= 2);
    if !swept {
        if fallback && packet.iter().all(|c| c.label.is_none()) {
            a.figures.extend(bar_of_configs(packet));
        }
        return;
    }
    let rules = "rules";
    pps_figures(packet, &g, x, a);
    let reference = advantage_figure(packet, x, opts.reference.as_deref(), "packet-advantage", a);
    // The study's nftables rules came from iptables-nft: the ratio against it too.
    if reference.as_deref() != Some("iptables-nft") {
        advantage_figure(
            packet,
            x,
            Some("iptables-nft"),
            "packet-advantage-iptables-nft",
            a,
        );
    }
    let loss = |c: &Config| metric(c, "loss_ratio", 100.0);
    a.figures.extend(line_figure(
        "packet-loss-vs-rules",
        "Loss vs rules",
        (rules, "loss (%)"),
        &g,
        &x,
        &loss,
    ));
    cost_model(&g, x, a);
    cost_figure(packet, "rules", rules, "packet", a);
    crate::flows::delay_jitter(packet, x, a);
    crate::flows::cpu_per_core(packet, x, a);
}

/// Received pps vs rules: one figure; with several engines a panel per engine (the
/// study's figures 3 and 4: iptables, nftables), a series per case within it.
fn pps_figures(
    packet: &[&Config],
    g: &BTreeMap<String, Vec<&Config>>,
    x: fn(&Config) -> Option<f64>,
    a: &mut Analysis,
) {
    let pps = |c: &Config| metric(c, "received_pps", 1.0);
    let labels = ("rules", "received (packets/s)");
    let engines: BTreeSet<Option<String>> = packet
        .iter()
        .map(|c| crate::series::param_text(c, "engine"))
        .collect();
    if engines.len() < 2 {
        a.figures.extend(line_figure(
            "packet-pps-vs-rules",
            "Received packets/s vs rules",
            labels,
            g,
            &x,
            &pps,
        ));
        return;
    }
    for engine in &engines {
        let cs: Vec<&Config> = packet
            .iter()
            .copied()
            .filter(|c| crate::series::param_text(c, "engine") == *engine)
            .collect();
        let by_case = group(&cs, &["rules", "engine", "nft_family"]);
        let name = engine.as_deref().unwrap_or("all");
        let slug: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect::<String>()
            .split('-')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        if let Some(mut f) = line_figure(
            &format!("packet-pps-vs-rules-{slug}"),
            &format!("Received packets/s vs rules: {name}"),
            labels,
            &by_case,
            &x,
            &pps,
        ) {
            f.group =
                Some("Received packets/s vs rules, per engine (study figures 3 and 4)".into());
            a.figures.push(f);
        }
    }
}

/// Bar chart of the main metric of each configuration (named by what varies).
fn bar_of_configs(configs: &[&Config]) -> Option<Figure> {
    if configs.len() < 2 {
        return None;
    }
    let keys = varying(configs);
    let (m, _) = main_metric(configs[0])?;
    let cats: Vec<String> = configs.iter().map(|c| series_name(c, &keys)).collect();
    let pts = configs
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let (y, ci95) = metric(c, m, 1.0)?;
            Some(Point {
                x: i as f64,
                y,
                ci95,
            })
        })
        .collect();
    Some(bar_figure(
        "packet-configs",
        "Received packets/s by configuration",
        metric_label(m),
        cats,
        pts,
    ))
}

/// The study's advantage of iptables over nftables at 6 000 rules, by packet size
/// (seed 002, figure 5).
pub const STUDY_ADVANTAGE: [(&str, f64); 3] = [("128 B", 5.2), ("512 B", 2.9), ("1280 B", 1.7)];

/// The engines the study's advantage is of: (engine, reference), as effective engine ids
/// name them (the reference of any nft family).
pub const STUDY_ADVANTAGE_ENGINES: (&str, &str) = ("iptables-legacy", "nft");

/// The rule count the study reads the advantage ratio at.
pub const STUDY_ADVANTAGE_RULES: f64 = 6000.0;

/// The effective engine of a configuration as `ENGINE/FAMILY` options name it (the
/// store's `engine_id`).
fn engine_id(c: &Config) -> Option<String> {
    c.engine.as_ref().map(|e| e.id.clone())
}

/// The reference engine when none is asked for, as `--reference` would name it (every
/// family of it matches, inet first by name).
pub const DEFAULT_REFERENCE: &str = "nft";

/// The reference engine: the requested one (`ENGINE` matches every family of it, the
/// first by name), else [`DEFAULT_REFERENCE`], else the first engine by name.
pub fn reference_of(engines: &BTreeSet<String>, wanted: Option<&str>) -> Option<String> {
    let pick = |w: &str| {
        engines
            .iter()
            .find(|e| *e == w)
            .or_else(|| engines.iter().find(|e| e.split('/').next() == Some(w)))
            .cloned()
    };
    match wanted {
        Some(w) => pick(w),
        None => pick(DEFAULT_REFERENCE).or_else(|| engines.iter().next().cloned()),
    }
}

/// Advantage ratio pps(A) / pps(B) vs rules for every engine A against a reference B
/// (see [`reference_of`]; `none` excluded), and the findings at the study's 6 000 rules
/// (or the nearest rule count measured), as figure `id`. Returns the reference used.
/// A second reference (`iptables-nft`) that did not run is passed over in silence.
fn advantage_figure(
    packet: &[&Config],
    x: fn(&Config) -> Option<f64>,
    wanted: Option<&str>,
    id: &str,
    a: &mut Analysis,
) -> Option<String> {
    let engines: BTreeSet<String> = packet
        .iter()
        .filter_map(|c| c.engine.as_ref())
        .filter(|e| !e.is_none())
        .map(|e| e.id.clone())
        .collect();
    if engines.len() < 2 {
        return None;
    }
    let Some(reference) = reference_of(&engines, wanted) else {
        if id != "packet-advantage" {
            return None;
        }
        a.findings.push(format!(
            "Advantage ratio: the reference {} was not run (engines here: {}).",
            wanted.unwrap_or("-"),
            engines.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
        return None;
    };
    let others = group(packet, &["rules", "engine", "nft_family"]);
    let mut series = Vec::new();
    // Where a point is a bound, not a measure: said on the figure, series by series.
    let mut notes = Vec::new();
    for engine in engines.iter().filter(|e| **e != reference) {
        for (name, cs) in &others {
            let RatioPoints {
                mut pts,
                bounds,
                left,
                mut gone,
                reps,
            } = ratio_points(cs, (engine, &reference), x);
            pts.sort_by(|p, q| p.x.total_cmp(&q.x));
            // The case, as the ratio's own sentence names it.
            let suffix = if name == "all" {
                String::new()
            } else {
                format!(" ({name})")
            };
            if !gone.is_empty() {
                gone.sort_by(f64::total_cmp);
                let at: Vec<String> = gone.iter().copied().map(num).collect();
                a.findings.push(format!(
                    "Advantage ratio {engine} / {reference}{suffix}: none at {} rules — \
                     fwbench's sender or sink limited every repetition of an engine there \
                     (see the run's warnings).",
                    and_list(&at)
                ));
            }
            if pts.is_empty() {
                continue;
            }
            let sname = format!("{engine} / {reference}{suffix}");
            let p = at_study_rules(&pts);
            let kept = reps.iter().find(|(x, _)| *x == p.x).map_or(0, |r| r.1);
            let bound = bounds.iter().find(|(x, _)| *x == p.x).map(|b| b.1);
            let mut sentence = advantage_sentence(
                &sname,
                (engine, &reference),
                name,
                (&pts, kept, bound.map(|b| b.kind)),
                cs,
            );
            let left = left.iter().find(|(x, _, _)| *x == p.x);
            if let Some((_, which, _)) = left {
                sentence.push_str(&format!(
                    " Left out there, as fwbench's limit rather than the gateway's (see the \
                     run's warnings): {which}."
                ));
            }
            let unfair = left.filter(|l| l.2).map(|_| {
                "more than half the repetitions of an engine there were limited by fwbench: \
                 what is left is no fair sample of its rate"
                    .to_string()
            });
            if let Some(why) = &unfair {
                sentence.push_str(&format!(" FLAGGED: {why}."));
            }
            if let Some(k) = bound {
                sentence.push_str(&k.sentence(engine, &reference));
            }
            a.findings.push(sentence);
            a.claims.push(
                Claim::at(
                    format!("advantage ratio: {sname} at {} rules", num(p.x)),
                    p,
                    "×",
                    "both means' repetitions",
                )
                .doubted(
                    unfair
                        .or_else(|| bound.map(Bounded::doubt))
                        .or_else(|| crate::figure::ratio_doubt(p.y, p.ci95)),
                ),
            );
            notes.extend(bound_note(&sname, &bounds));
            series.push(Series {
                name: sname,
                points: pts,
                fit: false,
            });
        }
    }
    if series.is_empty() {
        return Some(reference);
    }
    let mut f = Figure::line(
        id,
        &format!("Advantage ratio: received pps of each engine over {reference}"),
        ("rules", &format!("pps ratio (engine / {reference})")),
        series,
    );
    f.notes.push(format!(
        "Reference: {reference} (choose another with `fwbench report --reference ENGINE[/FAMILY]`). \
         Whiskers: 95 % CI of the ratio from both means' CIs (none with one repetition)."
    ));
    f.notes.push(format!(
        "The study (iptables over nftables at 6 000 rules): {}.",
        STUDY_ADVANTAGE
            .iter()
            .map(|(k, v)| format!("{} ({k})", num(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    f.notes.extend(notes);
    a.figures.push(f);
    Some(reference)
}

/// One ratio series' points (engine over reference, by rule count), with where each
/// is a bound, where a repetition of either was left out (which, and whether more than
/// half), where there is none (fwbench limited an engine's every repetition), and the
/// fewer repetitions the two kept at each count.
struct RatioPoints {
    pts: Vec<Point>,
    bounds: Vec<(f64, Bounded)>,
    left: Vec<(f64, String, bool)>,
    gone: Vec<f64>,
    reps: Vec<(f64, usize)>,
}

/// [`RatioPoints`] of the configurations `cs` of one series.
fn ratio_points(
    cs: &[&Config],
    (engine, reference): (&String, &String),
    x: fn(&Config) -> Option<f64>,
) -> RatioPoints {
    let rest = |c: &Config| {
        let mut f = c.flat.clone();
        f.remove("engine");
        f.remove("nft_family");
        f
    };
    let mut pts = Vec::new();
    // Rule counts where an engine passed every packet offered (in some repetition):
    // how that bounds the ratio.
    let mut bounds: Vec<(f64, Bounded)> = Vec::new();
    // Rule counts where a repetition of either was left out: which.
    let mut left: Vec<(f64, String, bool)> = Vec::new();
    // Rule counts with no ratio: fwbench limited an engine's every repetition.
    let mut gone: Vec<f64> = Vec::new();
    // Per rule count, the fewer repetitions the two kept.
    let mut reps: Vec<(f64, usize)> = Vec::new();
    for c in cs.iter().filter(|c| engine_id(c).as_ref() == Some(engine)) {
        let Some(b) = cs
            .iter()
            .find(|b| engine_id(b).as_ref() == Some(reference) && rest(b) == rest(c))
        else {
            continue;
        };
        if let (Some(xv), Some(p)) = (x(c), ratio(c, b)) {
            pts.push(Point {
                x: xv,
                y: p.0,
                ci95: p.1,
            });
            bounds.extend(Bounded::of(c.paced(), b.paced()).map(|k| (xv, k)));
            let kept = |c: &Config| {
                c.gateway_values
                    .get(crate::model::RECEIVED_PPS)
                    .map_or(0, Vec::len)
            };
            reps.push((xv, kept(c).min(kept(b))));
            let limits: Vec<_> = [(engine.as_str(), c), (reference.as_str(), b)]
                .into_iter()
                .filter_map(|(e, c)| Some((e, c.fwbench_limit()?)))
                .collect();
            if !limits.is_empty() {
                let why: Vec<String> = limits
                    .iter()
                    .map(|(e, l)| {
                        format!(
                            "{} of {e}'s {} repetitions, limited by fwbench's {}",
                            l.limited,
                            l.of,
                            l.roles()
                        )
                    })
                    .collect();
                // More than half of either left out: no fair sample (flagged).
                let most = limits.iter().any(|(_, l)| l.most());
                left.push((xv, why.join("; "), most));
            }
        } else if let Some(xv) = x(c) {
            // No ratio where fwbench limited every repetition of either: said.
            if c.limited_throughout() || b.limited_throughout() {
                gone.push(xv);
            }
        }
    }
    RatioPoints {
        pts,
        bounds,
        left,
        gone,
        reps,
    }
}

/// "iptables-legacy / nft/inet: a floor at 5000 and 10000 rules; a ratio of two offered
/// rates at 0 rules (where an engine passed every packet offered: …)" — the points of a
/// ratio series that bound it or are no measure of it; `None` when none is.
fn bound_note(series: &str, bounds: &[(f64, Bounded)]) -> Option<String> {
    let kinds = [Bound::Floor, Bound::Ceiling, Bound::Offered, Bound::Neither];
    let parts: Vec<String> = kinds
        .iter()
        .filter_map(|k| {
            let mut at: Vec<f64> = bounds
                .iter()
                .filter(|(_, b)| b.kind == *k)
                .map(|(x, _)| *x)
                .collect();
            at.sort_by(f64::total_cmp);
            let at: Vec<String> = at.into_iter().map(num).collect();
            let what = match k {
                Bound::Offered => "a ratio of two offered rates",
                Bound::Floor | Bound::Ceiling | Bound::Neither => k.what(),
            };
            (!at.is_empty()).then(|| format!("{what} at {} rules", and_list(&at)))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "{series}: {} (where an engine passed every packet offered in some or all of \
             its repetitions: no measure of the engines — offer more to measure)",
            parts.join("; ")
        )
    })
}

/// The point at the study's 6 000 rules, or the nearest measured count (`pts` not empty).
fn at_study_rules(pts: &[Point]) -> &Point {
    pts.iter()
        .min_by(|p, q| {
            (p.x - STUDY_ADVANTAGE_RULES)
                .abs()
                .total_cmp(&(q.x - STUDY_ADVANTAGE_RULES).abs())
        })
        .expect("points")
}

/// The ratio at the study's 6 000 rules (or the nearest measured count), with the
/// study's value when the pair is iptables-legacy over nft.
fn advantage_sentence(
    sname: &str,
    (engine, reference): (&str, &str),
    case: &str,
    (pts, reps, bound): (&[Point], usize, Option<Bound>),
    cs: &[&Config],
) -> String {
    let p = at_study_rules(pts);
    let ci = match p.ci95 {
        Some(c) => format!(
            "{} (95 % CI over {reps}+ repetitions of each)",
            mean_ci(p.y, Some(c))
        ),
        None => format!("{} (one repetition: no CI)", num(p.y)),
    };
    let labels: Vec<&str> = cs.iter().filter_map(|c| c.param("label")).collect();
    let (study_engine, study_reference) = STUDY_ADVANTAGE_ENGINES;
    let study = (engine == study_engine
        && (reference.split('/').next() == Some(study_reference) || reference == "iptables-nft"))
        .then(|| {
            STUDY_ADVANTAGE
                .iter()
                .find(|(k, _)| case.contains(k) || labels.iter().any(|l| l.contains(k)))
        })
        .flatten()
        .map(|(_, v)| match bound {
            // A bound is no measure to hold the study's against.
            Some(k) => format!(
                "; the study: {} at 6 000 rules — not compared: this ratio is {}",
                num(*v),
                k.what()
            ),
            None => format!(
                "; the study: {} at 6 000 rules{}",
                num(*v),
                crate::figure::differs(p.y, p.ci95, *v)
            ),
        })
        .unwrap_or_default();
    // A ratio whose CI includes 1 states no difference (issue 37: differences stated
    // only when measured; a noisy machine gave "passes 38 times" with ± 41).
    // One repetition has no CI: no difference can be stated either.
    if p.ci95.is_none() {
        return format!(
            "Advantage ratio {sname} at {} rules: {ci} — not stated as a difference between \
             {engine} and {reference}: one repetition has no CI{study}.",
            num(p.x)
        );
    }
    // A ratio of two offered rates, or a bound whose CI holds 1, says nothing of
    // the engines: not even that they do not differ.
    let holds_one = p.ci95.is_some_and(|c| (p.y - 1.0).abs() <= c);
    if let Some(k) = bound.filter(|k| holds_one || matches!(k, Bound::Offered | Bound::Neither)) {
        return format!(
            "Advantage ratio {sname} at {} rules: {ci} — not stated as a difference between \
             {engine} and {reference}: the ratio is {}{study}.",
            num(p.x),
            k.what()
        );
    }
    if holds_one {
        return format!(
            "Advantage ratio {sname} at {} rules: {ci} — no measurable difference between \
             {engine} and {reference} (the CI includes 1){study}.",
            num(p.x)
        );
    }
    // A bound states a difference only on its side of 1: a floor above it, a ceiling
    // below; a ratio of two offered rates none (its CI clear of 1 is the pacing's).
    let times = at_place_of(p.y, p.ci95);
    let said = match bound {
        None => format!("{engine} passes {times} times the packets/s of {reference}"),
        Some(Bound::Floor) if p.y > 1.0 => {
            format!("{engine} passes at least {times} times the packets/s of {reference}")
        }
        Some(Bound::Ceiling) if p.y < 1.0 => {
            format!("{engine} passes at most {times} times the packets/s of {reference}")
        }
        // A floor below 1, a ceiling above it: the engine may be either side.
        Some(k) => format!(
            "not stated as a difference between {engine} and {reference}: the ratio is {}",
            k.what()
        ),
    };
    format!(
        "Advantage ratio {sname} at {} rules: {ci} — {said}{study}.",
        num(p.x)
    )
}

/// How a ratio of received rates is bounded where an engine passed every packet offered
/// in some or all of its repetitions (such a rate is the sender's pace, a floor of what
/// it forwards, and a mean over it a floor too).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bound {
    /// Both engines, in every repetition: a ratio of two offered rates, about 1 whatever
    /// they cost.
    Offered,
    /// The engine (the numerator): the ratio is at least this.
    Floor,
    /// The reference (the denominator): the ratio is at most this.
    Ceiling,
    /// Both, one of them in some repetitions only: a floor over a floor, neither a
    /// measure nor a bound.
    Neither,
}

/// Where a ratio is bounded: its kind and how many repetitions of the engine and of
/// the reference passed every packet offered.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bounded {
    kind: Bound,
    engine: Paced,
    reference: Paced,
}

impl Bounded {
    /// How pacing bounds the ratio of `engine`'s rate over `reference`'s; `None`: it
    /// does not (both rates are the gateway's).
    fn of(engine: Paced, reference: Paced) -> Option<Bounded> {
        let kind = match (engine.any(), reference.any()) {
            (false, false) => return None,
            (true, false) => Bound::Floor,
            (false, true) => Bound::Ceiling,
            _ if engine.throughout() && reference.throughout() => Bound::Offered,
            (true, true) => Bound::Neither,
        };
        Some(Bounded {
            kind,
            engine,
            reference,
        })
    }

    /// The sentence after the ratio's.
    fn sentence(self, engine: &str, reference: &str) -> String {
        let (e, r) = (self.engine, self.reference);
        let partly = |p: Paced| if p.throughout() { "" } else { "partly " };
        match self.kind {
            Bound::Offered => " Both passed every packet offered there (limited by nothing): a \
                               ratio of two offered rates, ≈ 1 whatever the engines cost — \
                               offer more to compare them."
                .to_string(),
            Bound::Floor => format!(
                " A floor: {engine} passed every packet offered there{} (limited by nothing), \
                 so its rate is {}the sender's pace, not its limit, and the ratio is at least \
                 this — offer more to measure it.",
                e.share(),
                partly(e)
            ),
            Bound::Ceiling => format!(
                " A ceiling: {reference} passed every packet offered there{} (limited by \
                 nothing), so its rate is {}the sender's pace, not its limit, and the ratio \
                 is at most this — offer more to measure it.",
                r.share(),
                partly(r)
            ),
            Bound::Neither => format!(
                " Neither a measure nor a bound: {engine} passed every packet offered there in \
                 {} of {} repetitions and {reference} in {} of {} (limited by nothing), so \
                 each rate is the sender's pace in part or in whole — offer more to compare \
                 them.",
                e.paced, e.of, r.paced, r.of
            ),
        }
    }

    /// Why the ratio's claim is no measure a rerun is checked against.
    fn doubt(self) -> String {
        let (e, r) = (self.engine, self.reference);
        let who = match self.kind {
            Bound::Offered => "both engines passed every packet offered".to_string(),
            Bound::Floor => format!("the engine passed every packet offered{}", e.share()),
            Bound::Ceiling => format!("the reference passed every packet offered{}", r.share()),
            Bound::Neither => format!(
                "the engine passed every packet offered in {} of {} repetitions, the reference \
                 in {} of {}",
                e.paced, e.of, r.paced, r.of
            ),
        };
        format!("the ratio is {} ({who})", self.kind.what())
    }
}

impl Bound {
    /// "a floor", in the study's comparison.
    fn what(self) -> &'static str {
        match self {
            Bound::Offered => "of two offered rates",
            Bound::Floor => "a floor",
            Bound::Ceiling => "a ceiling",
            Bound::Neither => "neither a measure nor a bound",
        }
    }
}

/// The repetitions of a series left out of its cost model: "3 trials (at 0 rules)
/// limited by fwbench's sink, not by the gateway: their packets/s are fwbench's
/// limit" — those that fwbench's own sender or sink limited
/// ([`crate::model::Trial::fwbench_limited`]; `Config::gateway_values` holds the
/// rest). A rate capped at 0 rules would move the intercept and the slope alike, so
/// the line, segments, knee and degradation are made of the others. `None` when none
/// was left out.
fn left_out(cs: &[&Config], x: fn(&Config) -> Option<f64>) -> Option<LeftOut> {
    let list = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.dedup();
        and_list(&v.into_iter().map(num).collect::<Vec<_>>())
    };
    let paced = paced_left_out(cs, x, &list).map(|(what, most)| {
        let mut text = what.clone();
        if !most.is_empty() {
            text.push_str(&format!(
                " — FLAGGED: at {} rules more than half the trials passed every packet \
                 offered, and the ones kept are the slower ones: no fair sample of the \
                 gateway's time",
                list(most.clone())
            ));
        }
        LeftOut {
            what,
            text,
            flagged: false,
            paced_flagged: !most.is_empty(),
        }
    });
    let Some(mut w) = fwbench_left_out(cs, x, &list) else {
        return paced;
    };
    if let Some(p) = paced {
        w.what = format!("{}; {}", w.what, p.what);
        w.text = format!("{}; {}", w.text, p.text);
        w.paced_flagged = p.paced_flagged;
    }
    Some(w)
}

/// "2 trials (at 0 and 1000 rules) passed every packet offered (limited by nothing): …"
/// — the repetitions the time per packet (1/pps) leaves out for their rate is the
/// sender's pace ([`groups`]), with the rule counts where they were more than half and
/// some were kept (those kept are the slower ones: flagged, as fwbench's own limit
/// is); `None` when none was.
fn paced_left_out(
    cs: &[&Config],
    x: fn(&Config) -> Option<f64>,
    list: &dyn Fn(Vec<f64>) -> String,
) -> Option<(String, Vec<f64>)> {
    let (mut n, mut at, mut most) = (0, vec![], vec![]);
    for c in cs {
        let counted = c.gateway_reps().count();
        let k = c.gateway_reps().filter(|t| t.paced_through()).count();
        if k > 0 {
            n += k;
            at.extend(x(c));
            if 2 * k > counted && k < counted {
                most.extend(x(c));
            }
        }
    }
    if n == 0 {
        return None;
    }
    let (trials, their) = trials_their(n);
    let what = format!(
        "{n} {trials} (at {} rules) passed every packet offered (limited by nothing): \
         {their} the sender's pace, a floor of what the gateway forwards, so the time per \
         packet (1/pps) leaves them out (the CPU time per packet, where sampled, keeps \
         them; offer more to measure the gateway's time); where some were kept at a rule \
         count, they are the slower ones there",
        list(at)
    );
    Some((what, most))
}

/// ("trial", "its packets/s are") for one, ("trials", "their packets/s are") else.
fn trials_their(n: usize) -> (&'static str, &'static str) {
    if n == 1 {
        ("trial", "its packets/s are")
    } else {
        ("trials", "their packets/s are")
    }
}

/// The repetitions fwbench's own sender or sink limited, as [`left_out`] says them.
fn fwbench_left_out(
    cs: &[&Config],
    x: fn(&Config) -> Option<f64>,
    list: &dyn Fn(Vec<f64>) -> String,
) -> Option<LeftOut> {
    let (mut n, mut at, mut most, mut roles) = (0, vec![], vec![], BTreeSet::new());
    for c in cs {
        if let Some(l) = c.fwbench_limit() {
            n += l.limited;
            roles.extend(l.by.iter().copied());
            at.extend(x(c));
            if l.most() {
                most.extend(x(c));
            }
        }
    }
    if n == 0 {
        return None;
    }
    let (trials, their) = trials_their(n);
    let what = format!(
        "{n} {trials} (at {} rules) limited by fwbench's {}, not by the gateway: {their} \
         fwbench's limit (see the run's warnings for what to do)",
        list(at),
        roles.into_iter().collect::<Vec<_>>().join(" and ")
    );
    let mut text = format!(
        "{what}; where some were kept, they may be the slower ones (fwbench's limit cut \
         off a faster gateway), so the rate there may be understated"
    );
    let flagged = !most.is_empty();
    if flagged {
        text.push_str(&format!(
            " — FLAGGED: at {} rules fwbench limited more than half the trials, and what \
             is left is no fair sample of the gateway's rate",
            list(most)
        ));
    }
    Some(LeftOut {
        what,
        text,
        flagged,
        paced_flagged: false,
    })
}

/// How many distinct rule counts the configurations of a series measured.
fn rule_counts(cs: &[&Config], x: fn(&Config) -> Option<f64>) -> usize {
    let mut xs: Vec<f64> = cs.iter().filter_map(|c| x(c)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs.len()
}

/// received pps of a over b, with the CI propagated from both relative CIs.
/// Only the repetitions whose rate is the gateway's count (`Config::metrics`).
fn ratio(a: &Config, b: &Config) -> Option<(f64, Option<f64>)> {
    stats::ratio(
        a.metrics.get(crate::model::RECEIVED_PPS)?,
        b.metrics.get(crate::model::RECEIVED_PPS)?,
    )
}

/// Time per packet (ns) vs rules per series, with a weighted cost line where a series
/// has ≥ 3 rule counts (never for engine `none`: a baseline); the fits (and knees of pps vs rules) go to `a.fits`.
fn cost_model(g: &BTreeMap<String, Vec<&Config>>, x: fn(&Config) -> Option<f64>, a: &mut Analysis) {
    // What each series left out, said even where too little is left for a figure —
    // where it spans two rule counts (a series at one count never has a cost per rule:
    // nothing of it is missing).
    for (name, cs) in g
        .iter()
        .filter(|(_, cs)| !cs.iter().all(|c| c.ignores_rule_count()) && rule_counts(cs, x) >= 2)
    {
        a.left_out
            .extend(left_out(cs, x).map(|w| (name.clone(), w)));
    }
    let ns = |c: &Config| metric(c, "ns_per_packet", 1.0);
    let Some(mut fig) = line_figure(
        "packet-ns-per-packet",
        "Time per packet vs rules (cost model)",
        ("rules", "time per packet (ns)"),
        g,
        &x,
        &ns,
    ) else {
        return;
    };
    for (name, cs) in g {
        // No firewall: its points are the baseline; a cost per rule of rules never
        // installed means nothing.
        if cs.iter().all(|c| c.no_firewall()) {
            fig.notes.push(format!(
                "{name}: baseline (no firewall: no rules installed, so no cost model)"
            ));
            continue;
        }
        // A model that installs the same rules whatever the count (conntrack alone,
        // hashlimit): its rule counts are one gateway, no cost per rule.
        if cs.iter().all(|c| c.ignores_rule_count()) {
            if rule_counts(cs, x) >= 2 {
                fig.notes.push(format!(
                    "{name}: no cost model (its model installs the same rules whatever the \
                     count)"
                ));
            }
            continue;
        }
        let e = Estimator::HEADLINE;
        a.segments
            .extend(SeriesSegments::of(name, e, &groups(e, cs, x)));
        let left = a.left_out.get(name).map(|l| l.text.clone());
        let Some(cf) = fit_series(name, cs, x) else {
            // With three rule counts measured, what was left out is why there is none.
            let measured: BTreeSet<u64> = cs
                .iter()
                .filter(|c| !c.reps.is_empty())
                .filter_map(|c| x(c))
                .map(f64::to_bits)
                .collect();
            if let Some(w) = left.filter(|_| measured.len() >= 3) {
                fig.notes
                    .push(format!("{name}: no cost line; left out: {w}"));
            }
            continue;
        };
        let xs: Vec<f64> = cs.iter().filter_map(|c| x(c)).collect();
        let (lo, hi) = xs
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
        // The figure plots 1/pps: draw that estimator's line, and none where it has
        // none (its paced repetitions left out: another estimator heads the series).
        match cf.estimate(Estimator::TimePerPacket).map(|e| e.fit.line) {
            Some(drawn) => {
                // Each end of the line with the CI of the line's value there.
                let line = |v: f64| {
                    let (y, ci95) = drawn.at(v);
                    Point { x: v, y, ci95 }
                };
                fig.series.push(Series {
                    name: format!("fit: {name}"),
                    points: vec![line(lo), line(hi)],
                    fit: true,
                });
            }
            None => fig.notes.push(format!(
                "{name}: no 1/pps line: too few rule counts where the gateway set the rate"
            )),
        }
        let mut note = cost_note(name, &cf);
        if let Some(w) = left {
            note.push_str(&format!("; left out: {w}"));
        }
        fig.notes.push(note);
        a.fits.push(cf);
    }
    a.figures.push(fig);
}

/// The sentence under the cost figure for one series: the headline, the other
/// estimator and the unweighted fit for comparison, and any problem.
fn cost_note(name: &str, cf: &CostFit) -> String {
    let one = |e: &CostEstimate| {
        let l = &e.fit.line;
        let rel = e
            .relative_ci()
            .map(|r| format!(", half-width {:.1} %", r * 100.0))
            .unwrap_or_default();
        let ols = e
            .unweighted
            .and_then(|u| Some(format!("; unweighted {}", mean_ci(u.b, Some(u.b_ci95?)))))
            .unwrap_or_default();
        format!(
            "{} {} ns per rule per packet{rel} ({}, weighted R² {:.3}{ols})",
            e.estimator.label(),
            mean_ci(l.b, l.b_ci95),
            e.basis(),
            l.r2,
        )
    };
    let mut s = format!("{name}: ");
    if let Some(h) = cf.headline() {
        s.push_str(&one(h));
        if cf.estimates.len() > 1 {
            s.push_str(" — the headline (the same estimator in every run)");
        }
    }
    for e in cf.estimates.iter().filter(|e| e.estimator != cf.estimator) {
        s.push_str("; ");
        s.push_str(&one(e));
    }
    for e in &cf.estimates {
        if let Some(p) = &e.problem {
            s.push_str(&format!("; FLAGGED ({}): {p}", e.estimator.label()));
        }
    }
    if let Some(g) = estimator_gap(cf) {
        s.push_str(&g);
    }
    s
}

/// Where the two estimators' slopes differ by more than [`ESTIMATOR_GAP`], which one
/// answers which question (they measure different things, so both can be right).
fn estimator_gap(cf: &CostFit) -> Option<String> {
    let b = |want: Estimator| {
        cf.estimates
            .iter()
            .find(|e| e.estimator == want && e.problem.is_none())
            .map(|e| e.fit.line.b)
    };
    let (t, c) = (
        b(Estimator::TimePerPacket)?,
        b(Estimator::CpuTimePerPacket)?,
    );
    let gap = (t - c).abs() / t.abs().max(c.abs());
    (gap > ESTIMATOR_GAP).then(|| {
        format!(
            ". The estimators differ by {:.0} %: 1/pps is what a rule costs the traffic's \
             throughput (the whole path, waits included: use it for \"how many packets/s will \
             cross\"); CPU time is what a rule costs the gateway's CPUs (use it to size a \
             gateway, or where the path is not CPU-bound); see docs/report.md",
            gap * 100.0
        )
    })
}

/// Relative difference of the two estimators' slopes above which the report says which
/// one answers which question.
pub const ESTIMATOR_GAP: f64 = 0.03;

/// Fit both estimators over every repetition of a series with ≥ 3 rule counts; the
/// headline is [`Estimator::HEADLINE`]'s.
fn fit_series(name: &str, cs: &[&Config], x: fn(&Config) -> Option<f64>) -> Option<CostFit> {
    let counts: BTreeSet<u64> = cs
        .iter()
        .filter(|c| c.gateway_values.contains_key(crate::model::RECEIVED_PPS))
        .filter_map(|c| x(c))
        .map(f64::to_bits)
        .collect();
    if counts.len() < 3 {
        return None;
    }
    let estimates: Vec<CostEstimate> = Estimator::ALL
        .iter()
        .filter_map(|e| estimate(*e, cs, x))
        .collect();
    let head = CostEstimate::headline_of(&estimates)?;
    let reps: Vec<(f64, Vec<f64>)> = cs
        .iter()
        .filter_map(|c| {
            let v = c.gateway_values.get(crate::model::RECEIVED_PPS)?;
            Some((x(c)?, v.clone()))
        })
        .collect();
    let knee = stats::knee_with_interval(&reps);
    Some(CostFit {
        series: name.into(),
        rule_counts: head.fit.points,
        fit: head.fit.line,
        estimator: head.estimator,
        knee_rules: knee.map(|k| k.rules),
        knee,
        degradation: stats::degradation_measured(&reps, stats::DEGRADED_DROP),
        estimates,
    })
}

/// One estimator's weighted line over a series' repetitions (≥ 3 rule counts with
/// values), checked against its measured point at the fewest rules.
pub fn estimate(
    e: Estimator,
    cs: &[&Config],
    x: fn(&Config) -> Option<f64>,
) -> Option<CostEstimate> {
    estimate_of(e, &groups(e, cs, x))
}

/// `(rules, [value per repetition])` of an estimator's metric over a series: the
/// repetitions whose rate is the gateway's (`Config::gateway_values`). The time per
/// packet (1/pps) leaves out, besides, the repetitions that passed every packet offered
/// ([`crate::model::Trial::paced_through`]): their 1/pps is the sender's pace. The CPU
/// time per packet counts the gateway's kernel time at any pace, and keeps them.
fn groups(e: Estimator, cs: &[&Config], x: fn(&Config) -> Option<f64>) -> Vec<(f64, Vec<f64>)> {
    let paced = |c: &Config| {
        let kept: Vec<f64> = c
            .gateway_reps()
            .filter(|t| !t.paced_through())
            .filter_map(|t| crate::model::value_of(t, e.metric()))
            .collect();
        (!kept.is_empty()).then_some(kept)
    };
    cs.iter()
        .filter_map(|c| {
            let v = match e {
                Estimator::TimePerPacket => paced(c)?,
                Estimator::CpuTimePerPacket => c.gateway_values.get(e.metric())?.clone(),
            };
            Some((x(c)?, v))
        })
        .collect()
}

/// [`estimate`] over `(rules, [value per repetition])` groups.
pub fn estimate_of(e: Estimator, groups: &[(f64, Vec<f64>)]) -> Option<CostEstimate> {
    let counts: BTreeSet<u64> = groups.iter().map(|g| g.0.to_bits()).collect();
    if counts.len() < 3 {
        return None;
    }
    let fit = stats::fit_line_weighted(groups)?;
    let pts: Vec<(f64, f64)> = groups
        .iter()
        .flat_map(|(xv, ys)| ys.iter().map(move |y| (*xv, *y)))
        .collect();
    let x0 = groups.iter().map(|g| g.0).min_by(f64::total_cmp)?;
    let at_x0: Vec<f64> = groups
        .iter()
        .filter(|g| g.0 == x0)
        .flat_map(|g| g.1.iter().copied())
        .collect();
    let first = stats::Summary::of(&at_x0).map(|s| (x0, s));
    Some(CostEstimate {
        estimator: e,
        problem: line_problem(&fit, first),
        fit,
        unweighted: stats::fit_line(&pts),
        first,
    })
}

/// Does the line describe the data? It does not when its intercept is negative (no
/// packet costs less than nothing), when its value at the fewest rules differs from
/// the measured mean there by more than the 95 % CI of that difference (√(line CI² +
/// point CI²); the point's CI is 0 with one repetition), or when it fails the
/// lack-of-fit test by a material margin (p < [`stats::LACK_OF_FIT_P`] and a miss over
/// [`stats::MATERIAL_MISS`]: a knee or a curve, not a line).
pub fn line_problem(
    fit: &stats::WeightedFit,
    first: Option<(f64, stats::Summary)>,
) -> Option<String> {
    let a = fit.line.a;
    let Some((x0, s0)) = first else {
        return (a < 0.0).then(|| {
            format!(
                "intercept {} ns/packet is negative: the line does not describe this data",
                num(a)
            )
        });
    };
    let (y0, ci) = fit.at(x0);
    let tol = (ci.unwrap_or(0.0).powi(2) + s0.ci95.unwrap_or(0.0).powi(2)).sqrt();
    if a >= 0.0 && (y0 - s0.mean).abs() <= tol {
        let lof = fit.lack_of_fit.filter(|l| {
            l.p < stats::LACK_OF_FIT_P
                && (l.worst_miss.0 > stats::MATERIAL_MISS || l.worst_miss.0.is_nan())
        })?;
        return Some(format!(
            "the line misses the mean at {} rules by {:.0} %, far more than the repetitions \
             spread (lack of fit F = {} on {} and {} df, p < {}): the line does not describe \
             this data",
            num(lof.worst_miss.1),
            lof.worst_miss.0 * 100.0,
            num(lof.f),
            lof.df_line,
            lof.df_error,
            stats::LACK_OF_FIT_P
        ));
    }
    let line = if x0 == 0.0 {
        String::new()
    } else {
        format!(" (the line: {} at {} rules)", num(y0), num(x0))
    };
    Some(format!(
        "intercept {} ns/packet{line} disagrees with the measured {} ns at {} rules: the line does not describe this data",
        num(a),
        mean_ci(s0.mean, s0.ci95),
        num(x0)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Point {
        Point { x, y, ci95: None }
    }

    /// splitmix64 (the report's resampler): a fixed-seed generator, so the synthetic
    /// data are the same every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut g = crate::stats::SplitMix(self.0);
            let z = g.next();
            self.0 = g.0;
            z
        }

        /// Uniform on (0, 1).
        fn uniform(&mut self) -> f64 {
            ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        /// Standard normal (Box–Muller).
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    const RULES: [f64; 5] = [0.0, 1000.0, 2000.0, 5000.0, 10000.0];

    /// t = 2000 + 7·rules ns with noise ∝ t (CV `cv`), `reps` repetitions per rule count.
    fn synthetic(seed: u64, reps: usize, cv: f64) -> Vec<(f64, Vec<f64>)> {
        let mut rng = Rng(seed);
        RULES
            .iter()
            .map(|r| {
                let t = 2000.0 + 7.0 * r;
                (
                    *r,
                    (0..reps).map(|_| t * (1.0 + cv * rng.normal())).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn weighted_fit_recovers_a_known_slope_within_a_narrower_ci() {
        let e = estimate_of(Estimator::TimePerPacket, &synthetic(7, 3, 0.03)).unwrap();
        let (w, u) = (e.fit.line, e.unweighted.unwrap());
        let (wci, uci) = (w.b_ci95.unwrap(), u.b_ci95.unwrap());
        assert!((w.b - 7.0).abs() <= wci, "weighted {} ± {wci}", w.b);
        assert!(wci < uci, "weighted ± {wci} vs unweighted ± {uci}");
        assert!(
            (e.fit.line.a - 2000.0).abs() <= e.fit.line.a_ci95.unwrap(),
            "{e:?}"
        );
        assert_eq!(e.problem, None);
        assert_eq!((w.n, e.fit.points, e.fit.single), (15, 5, 0));
        assert!(e
            .basis()
            .contains("95 % CI over 15 trials at 5 rule counts"));
        // Over 400 seeds: the weighted 95 % CI covers 7 about 95 % of the time (the
        // unweighted one, which assumes equal noise, far less often) and is narrower on
        // average.
        let (mut covered, mut covered_ols, mut width, mut width_ols) = (0, 0, 0.0, 0.0);
        for seed in 1000..1400 {
            let e = estimate_of(Estimator::TimePerPacket, &synthetic(seed, 3, 0.03)).unwrap();
            let (w, u) = (e.fit.line, e.unweighted.unwrap());
            let (wci, uci) = (w.b_ci95.unwrap(), u.b_ci95.unwrap());
            covered += usize::from((w.b - 7.0).abs() <= wci);
            covered_ols += usize::from((u.b - 7.0).abs() <= uci);
            width += wci / 400.0;
            width_ols += uci / 400.0;
        }
        assert!(covered >= 368, "weighted CI covered {covered}/400");
        assert!(covered_ols < 340, "unweighted CI covered {covered_ols}/400");
        assert!(
            width < 0.95 * width_ols,
            "mean half-width {width} vs {width_ols}"
        );
    }

    #[test]
    fn a_line_that_does_not_describe_the_data_is_flagged() {
        // Planted: from 1000 rules on, t = −3000 + 8·rules (a negative intercept), but
        // 2000 ns at 0 rules; and a knee (flat, then steep from 2000 rules). Ordinary
        // least squares gives a negative intercept for both; the weighted line follows
        // the precise low points and misses the high ones: both are flagged.
        let planted = |f: fn(f64) -> f64, seed: u64| {
            let mut rng = Rng(seed);
            let g: Vec<(f64, Vec<f64>)> = RULES
                .iter()
                .map(|r| {
                    (
                        *r,
                        (0..2)
                            .map(|_| f(*r) * (1.0 + 0.01 * rng.normal()))
                            .collect(),
                    )
                })
                .collect();
            estimate_of(Estimator::TimePerPacket, &g).unwrap()
        };
        let negative = planted(|r| if r == 0.0 { 2000.0 } else { -3000.0 + 8.0 * r }, 12);
        let knee = planted(|r| 2000.0 + 20.0 * (r - 2000.0f64).max(0.0), 11);
        for e in [&negative, &knee] {
            assert!(e.unweighted.unwrap().a < 0.0, "{e:?}");
            let p = e.problem.clone().expect("flagged");
            assert!(p.ends_with("the line does not describe this data"), "{p}");
        }
        let e = knee;
        // The brief's case: an intercept of −270 against 2255 measured.
        let mut neg = e.fit;
        neg.line.a = -269.7;
        let zero = stats::Summary::of(&[2250.0, 2260.0]).map(|s| (0.0, s));
        let p = line_problem(&neg, zero).unwrap();
        assert!(
            p.starts_with("intercept -269.7 ns/packet disagrees with the measured 2255"),
            "{p}"
        );
        // In the table the line is never "ok".
        let cf = crate::testing::cost_fit("engine=x", e);
        let t = crate::export::fits_table(&[cf], &Default::default());
        let check = t.rows[0].last().unwrap();
        assert!(check.starts_with("FLAGGED (1/pps): "), "{check}");
    }

    #[test]
    fn a_good_line_passes_its_check() {
        let e = estimate_of(Estimator::TimePerPacket, &synthetic(3, 2, 0.02)).unwrap();
        assert_eq!(e.problem, None, "{e:?}");
    }

    #[test]
    fn one_repetition_per_rule_count_still_fits_and_says_so() {
        let e = estimate_of(Estimator::TimePerPacket, &synthetic(5, 1, 0.02)).unwrap();
        let ci = e.fit.line.b_ci95.unwrap();
        assert!((e.fit.line.b - 7.0).abs() <= ci, "{e:?}");
        assert_eq!((e.fit.single, e.fit.pooled_cv), (5, None));
        assert!(
            e.basis().contains("one repetition per rule count"),
            "{}",
            e.basis()
        );
        // Some single points among repeated ones: their variance is the pooled spread.
        let mut g = synthetic(6, 3, 0.02);
        g[2].1.truncate(1);
        let e = estimate_of(Estimator::TimePerPacket, &g).unwrap();
        assert_eq!(e.fit.single, 1);
        assert!(
            e.basis().contains("1 rule count(s) with one repetition"),
            "{}",
            e.basis()
        );
    }

    #[test]
    fn the_headline_is_the_same_estimator_in_every_run() {
        // 1/pps, whether CPU time is tighter or its own line is flagged (issue 37: the
        // tighter one once switched between runs of one scenario).
        let wide = estimate_of(Estimator::TimePerPacket, &synthetic(8, 3, 0.05)).unwrap();
        let tight = estimate_of(Estimator::CpuTimePerPacket, &synthetic(9, 3, 0.005)).unwrap();
        let headline = CostEstimate::headline_of;
        let both = [tight.clone(), wide.clone()];
        assert_eq!(headline(&both).unwrap().estimator, Estimator::TimePerPacket);
        let mut flagged = wide;
        flagged.problem = Some("bad".into());
        let both = [flagged, tight.clone()];
        assert_eq!(headline(&both).unwrap().estimator, Estimator::TimePerPacket);
        // Without 1/pps (no packets/s): the one there is.
        let only = [tight];
        assert_eq!(
            headline(&only).unwrap().estimator,
            Estimator::CpuTimePerPacket
        );
        assert_eq!(
            Estimator::CpuTimePerPacket.metric(),
            crate::model::CPU_NS_PER_PACKET
        );
    }

    #[test]
    fn a_gap_between_the_estimators_is_said_with_what_each_answers() {
        // The same curve seen by both estimators: no gap, no sentence.
        let t = estimate_of(Estimator::TimePerPacket, &synthetic(8, 3, 0.01)).unwrap();
        let c = estimate_of(Estimator::CpuTimePerPacket, &synthetic(8, 3, 0.01)).unwrap();
        let fit = |t: CostEstimate, c: CostEstimate| CostFit {
            estimator: Estimator::TimePerPacket,
            estimates: vec![t, c],
            ..crate::testing::cost_fit(
                "engine=x",
                estimate_of(Estimator::TimePerPacket, &synthetic(8, 3, 0.01)).unwrap(),
            )
        };
        assert_eq!(estimator_gap(&fit(t.clone(), c)), None);
        // CPU time 20 % below 1/pps: said, with its size.
        let lower: Vec<(f64, Vec<f64>)> = synthetic(8, 3, 0.01)
            .into_iter()
            .map(|(r, v)| (r, v.into_iter().map(|y| y * 0.8).collect()))
            .collect();
        let c = estimate_of(Estimator::CpuTimePerPacket, &lower).unwrap();
        let note = estimator_gap(&fit(t.clone(), c.clone())).expect("a 20 % gap is said");
        assert!(note.contains("differ by 20 %"), "{note}");
        assert!(note.contains("size a"), "{note}");
        // A flagged estimate is not compared.
        let mut flagged = c;
        flagged.problem = Some("bad".into());
        assert_eq!(estimator_gap(&fit(t, flagged)), None);
    }

    /// The decrease vs the baseline is drawn with its CI (it was drawn without one).
    #[test]
    fn the_decrease_vs_baseline_carries_its_ci() {
        let c = |rules: &str, cost: f64, ci: f64| Config {
            cost_pct: Some(cost),
            cost_ci95: Some(ci),
            ..crate::testing::config(
                format!("r{rules}"),
                "flood",
                "nft",
                [("rules".to_string(), rules.to_string())].into(),
            )
        };
        let cs = [c("1000", 5.0, 1.0), c("2000", 10.0, 2.0)];
        let refs: Vec<&Config> = cs.iter().collect();
        let mut a = Analysis::default();
        cost_figure(&refs, "rules", "rules", "packet", &mut a);
        let cis: Vec<Option<f64>> = a.figures[0].series[0]
            .points
            .iter()
            .map(|p| p.ci95)
            .collect();
        assert_eq!(cis, [Some(1.0), Some(2.0)]);
    }

    #[test]
    fn crossover_interpolates_the_sign_change() {
        let a = [p(1.0, 10.0), p(2.0, 8.0), p(4.0, 4.0)];
        let b = [p(1.0, 6.0), p(2.0, 6.0), p(4.0, 6.0)];
        let c = crossovers(&a, &b);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].0, c[0].1), (2.0, 4.0));
        assert!((c[0].2 - 3.0).abs() < 1e-12);
    }
}

#[cfg(test)]
mod advantage_tests {
    use super::*;

    /// A ratio whose CI includes 1 (seen on a busy machine: 38 ± 41) states no
    /// difference; one whose CI excludes 1 states the ratio.
    #[test]
    fn a_ratio_whose_ci_includes_one_is_no_measurable_difference() {
        let at_ci = |y: f64, ci95: Option<f64>| {
            advantage_sentence(
                "a / b",
                ("a", "b"),
                "",
                (&[Point { x: 5000.0, y, ci95 }], 4, None),
                &[],
            )
        };
        let at = |y: f64, ci: f64| at_ci(y, Some(ci));
        // One repetition: no CI, so no difference is stated.
        let once = at_ci(4.2, None);
        assert!(
            once.contains("not stated as a difference between a and b: one repetition has no CI"),
            "{once}"
        );
        assert!(!once.contains("passes"), "{once}");
        let noisy = at(38.0, 41.0);
        assert!(
            noisy.contains("no measurable difference between a and b (the CI includes 1)"),
            "{noisy}"
        );
        assert!(!noisy.contains("passes"), "{noisy}");
        let measured = at(4.2, 0.2);
        assert!(
            measured.contains("a passes 4.20 times the packets/s of b"),
            "{measured}"
        );
    }

    /// An engine that passed every packet offered in some repetitions only still bounds
    /// the ratio (a mean over floors is a floor), said with its share; both partly is
    /// neither a measure nor a bound, never "passes … times".
    #[test]
    fn a_ratio_partly_paced_is_a_bound_with_its_share() {
        let p = |paced, of| Paced { paced, of };
        let kind = |e, r| Bounded::of(e, r).map(|b| b.kind);
        assert_eq!(kind(p(0, 4), p(0, 4)), None);
        assert_eq!(kind(p(1, 4), p(0, 4)), Some(Bound::Floor));
        assert_eq!(kind(p(0, 4), p(4, 4)), Some(Bound::Ceiling));
        assert_eq!(kind(p(4, 4), p(4, 4)), Some(Bound::Offered));
        assert_eq!(kind(p(4, 4), p(1, 4)), Some(Bound::Neither));
        let floor = Bounded::of(p(1, 4), p(0, 4)).unwrap();
        assert!(
            floor
                .sentence("a", "b")
                .contains("a passed every packet offered there in 1 of 4 repetitions"),
            "{}",
            floor.sentence("a", "b")
        );
        assert_eq!(
            floor.doubt(),
            "the ratio is a floor (the engine passed every packet offered in 1 of 4 repetitions)"
        );
        let neither = Point {
            x: 5000.0,
            y: 1.5,
            ci95: Some(0.1),
        };
        let said = advantage_sentence(
            "a / b",
            ("a", "b"),
            "",
            (&[neither], 4, Some(Bound::Neither)),
            &[],
        );
        assert!(
            said.ends_with(
                "not stated as a difference between a and b: the ratio is neither a measure \
                 nor a bound."
            ),
            "{said}"
        );
    }

    /// seed 002 here: "nft/ip passes 0.999966 times the packets/s of iptables-nft" where
    /// both passed every packet offered (a CI clear of 1 from the pacing alone). A bound
    /// states a difference only on its side of 1.
    #[test]
    fn a_bounded_ratio_states_a_difference_only_on_its_side_of_one() {
        let at_ci = |y: f64, ci: f64, bound: Bound| {
            let p = [Point {
                x: 5000.0,
                y,
                ci95: Some(ci),
            }];
            advantage_sentence("a / b", ("a", "b"), "", (&p, 2, Some(bound)), &[])
        };
        let at = |y: f64, bound: Bound| at_ci(y, 0.00002, bound);
        for (y, bound, said) in [
            (
                0.999966,
                Bound::Offered,
                "— not stated as a difference between a and b: the ratio is of two offered rates.",
            ),
            (
                1.5,
                Bound::Floor,
                "— a passes at least 1.500000 times the packets/s of b.",
            ),
            (
                0.8,
                Bound::Floor,
                "— not stated as a difference between a and b: the ratio is a floor.",
            ),
            (
                0.8,
                Bound::Ceiling,
                "— a passes at most 0.800000 times the packets/s of b.",
            ),
            (
                1.5,
                Bound::Ceiling,
                "— not stated as a difference between a and b: the ratio is a ceiling.",
            ),
        ] {
            let sentence = at(y, bound);
            assert!(sentence.ends_with(said), "{sentence}");
        }
        // A bound whose CI holds 1 is no "no measurable difference" either.
        let wide = at_ci(1.2, 1.1, Bound::Floor);
        assert!(
            wide.ends_with("not stated as a difference between a and b: the ratio is a floor.")
                && !wide.contains("no measurable difference"),
            "{wide}"
        );
    }
}
