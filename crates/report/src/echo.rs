//! The echo workload (seed 000) as the study drew it: average throughput per client by
//! clients (its figure 3) and by frame size with the "ranged" group (figure 4), the
//! decrease against the F = 0 series by clients, one figure per address family
//! (figures 5 and 6), the throughput loss per rule (its 0.05 %/rule IPv4, 0.03 % IPv6),
//! the threads-vs-epoll difference in % with its turning point (figure 7), and the
//! host load (CPU, memory, context switches) by test series and server mode.
//!
//! Owns: those figures, tables and their findings sentences.
//! Must not: read the store; imports `throughput` only for `crossovers`.

use crate::figure::{
    at_place_of, mean_ci, num, Analysis, Claim, Figure, Kind, Marker, Point, Series, Table,
};
use crate::model::{costed, Config};
use crate::series::{metric, varying, XOf, YOf};
use crate::stats;
use crate::views::{average, averaged_note, averaged_series, proto_family};
use std::collections::{BTreeMap, BTreeSet};

/// The study's loss per rule, % of throughput per simple rule, by address family.
pub const STUDY_LOSS_PER_RULE: [(&str, f64); 2] = [("4", 0.05), ("6", 0.03)];
/// The study's threads/epoll turning point, in clients.
pub const STUDY_TURNING_POINT: f64 = 40.0;

/// Every echo figure and table (in the study's order).
pub(crate) fn figures(echo: &[&Config], a: &mut Analysis) {
    if echo.is_empty() {
        return;
    }
    let vary = varying(echo);
    let varies = |k: &str| vary.iter().any(|v| v == k);
    let per_client: &YOf = &|c: &Config| metric(c, "throughput_per_client_bps", 1e-6);
    let pa = |c: &Config| Some(proto_family(c));
    if varies("clients") {
        let x: &XOf = &|c: &Config| c.param_f64("clients");
        let series = averaged_series(echo, &pa, x, per_client);
        let mut f = Figure::line(
            "echo-per-client-vs-clients",
            "Echo throughput per client vs clients (average, study figure 3)",
            ("clients (n)", "throughput per client (Mb/s)"),
            series,
        );
        f.notes
            .push(averaged_note(echo, &["clients", "proto", "family"]));
        a.figures.push(f);
    }
    if varies("frame_size") {
        a.figures.push(by_frame(echo, per_client));
    }
    decrease(echo, a);
    loss_per_rule(echo, a);
    threads_vs_epoll(echo, a);
    host_load(echo, a);
    gaps(echo, a);
    if varies("clients") {
        host_load_vs_clients(echo, a);
    }
}

/// The study's protocol and family gaps (its section 4): (parameter, slower, faster,
/// study's mean %, min %, max %, how the % is taken).
const STUDY_GAPS: [(&str, &str, &str, f64, f64, f64); 3] = [
    ("proto", "sctp", "tcp", 32.65, 9.28, 48.23),
    ("proto", "tcp", "udp", 8.42, 5.18, 10.64),
    ("family", "6", "4", 9.22, 4.59, 13.8),
];

/// How much slower one protocol (family) is than another: over every pair of
/// configurations that differ in that parameter only, the mean of (fast − slow) / base
/// in % with its 95 % CI over the pairs, the min and max — beside the study's numbers
/// (SCTP 32.65 % slower than TCP, TCP 8.42 % slower than UDP, IPv4 9.22 % faster than
/// IPv6).
fn gaps(echo: &[&Config], a: &mut Analysis) {
    let rest = |c: &Config, k: &str| {
        let mut f = c.flat.clone();
        f.remove(k);
        f.remove("label");
        f
    };
    for (k, slow, fast, study, lo, hi) in STUDY_GAPS {
        let mut pct = Vec::new();
        for s in echo.iter().filter(|c| c.param(k) == Some(slow)) {
            let Some(f) = echo
                .iter()
                .find(|f| f.param(k) == Some(fast) && rest(f, k) == rest(s, k))
            else {
                continue;
            };
            let (Some(vs), Some(vf)) = (s.mean("throughput_bps"), f.mean("throughput_bps")) else {
                continue;
            };
            if vs <= 0.0 || vf <= 0.0 {
                continue;
            }
            // "SCTP is x % slower than TCP" (of TCP); "IPv4 is x % faster than IPv6" (of IPv6).
            pct.push(if k == "family" {
                (vf - vs) / vs * 100.0
            } else {
                (vf - vs) / vf * 100.0
            });
        }
        let Some(sm) = stats::Summary::of(&pct) else {
            continue;
        };
        let (min, max) = pct
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
        let name = |v: &str| match (k, v) {
            ("family", v) => format!("IPv{v}"),
            (_, v) => v.to_uppercase(),
        };
        // A gap whose CI holds 0 (or that has none) is no gap: said so, the figure and
        // why beside it, never "IPv4 is 2.5 ± 6.8 % faster".
        let gap = results::Figure::difference(
            sm.mean,
            sm.ci95.map(results::Ci::ci95),
            results::Basis::Repetitions {
                n: pct.len() as u32,
            },
        );
        let sentence = if !gap.holds() {
            let why = match sm.ci95 {
                Some(_) => "its 95 % CI includes 0",
                None => "no CI: one pair",
            };
            format!(
                "{} vs {}: no measurable difference ({} %: {why})",
                name(fast),
                name(slow),
                mean_ci(sm.mean, sm.ci95)
            )
        } else if k == "family" {
            format!(
                "{} is {} % faster than {}",
                name(fast),
                mean_ci(sm.mean, sm.ci95),
                name(slow)
            )
        } else {
            format!(
                "{} is {} % slower than {}",
                name(slow),
                mean_ci(sm.mean, sm.ci95),
                name(fast)
            )
        };
        a.claims.push(
            Claim::new(
                format!("throughput gap: {} vs {}", name(fast), name(slow)),
                sm.mean,
                sm.ci95,
                "%",
                format!("{} configuration pairs", pct.len()),
            )
            .doubted((!gap.holds()).then(|| gap.reasons())),
        );
        a.findings.push(format!(
            "{sentence} in throughput (95 % CI over {} configuration pairs differing only in \
             it; min {} %, max {} %); the study: {} % (min {}, max {}){}.",
            pct.len(),
            at_place_of(min, sm.ci95),
            at_place_of(max, sm.ci95),
            num(study),
            num(lo),
            num(hi),
            crate::figure::differs(sm.mean, sm.ci95, study)
        ));
    }
}

/// The study's view of the host load (its argument for epoll past ~40 clients): CPU
/// busy, context switches of each role's own process and memory against the number of
/// clients, a series per role and server mode, averaged over the other parameters.
fn host_load_vs_clients(echo: &[&Config], a: &mut Analysis) {
    let views = [
        (
            "cpu_busy",
            "host-cpu-vs-clients",
            "CPU busy vs clients (average)",
            "CPU busy (% per CPU)",
        ),
        (
            "proc_ctxt_per_s",
            "host-ctxt-vs-clients",
            "Context switches of each role's process vs clients (average)",
            "context switches/s (the role's process, all threads)",
        ),
        (
            "mem_mib",
            "host-mem-vs-clients",
            "Memory in use vs clients (average)",
            "memory in use (MiB)",
        ),
    ];
    let x: &XOf = &|c: &Config| c.param_f64("clients");
    for (suffix, id, title, label) in views {
        let mut series = Vec::new();
        for role in ["client", "gateway", "server"] {
            let key = format!("{role}.{suffix}");
            if !echo.iter().any(|c| c.metrics.contains_key(&key)) {
                continue;
            }
            let name = |c: &Config| Some(format!("{role}, {}", c.param("server").unwrap_or("-")));
            let y: &YOf = &|c: &Config| metric(c, &key, 1.0);
            series.extend(averaged_series(echo, &name, x, y));
        }
        if series.is_empty() {
            continue;
        }
        let mut f = Figure::line(id, title, ("clients (n)", label), series);
        f.notes.push(averaged_note(echo, &["clients", "server"]));
        a.figures.push(f);
    }
}

/// Figure 4: bars by frame size, the fixed sizes in order, then "ranged" (a frame size
/// drawn at random per cycle, `64-1024`), one bar per protocol/family.
fn by_frame(echo: &[&Config], y: &YOf) -> Figure {
    let mut fixed: Vec<f64> = echo
        .iter()
        .filter_map(|c| c.param_f64("frame_size"))
        .collect();
    fixed.sort_by(f64::total_cmp);
    fixed.dedup();
    let ranged: BTreeSet<&str> = echo
        .iter()
        .filter_map(|c| c.param("frame_size"))
        .filter(|f| f.parse::<f64>().is_err())
        .collect();
    let mut cats: Vec<String> = fixed.iter().map(|f| num(*f)).collect();
    cats.extend(ranged.iter().map(|r| format!("ranged ({r})")));
    let index = |c: &Config| -> Option<f64> {
        let f = c.param("frame_size")?;
        match f.parse::<f64>() {
            Ok(v) => fixed.iter().position(|x| *x == v),
            Err(_) => ranged.iter().position(|r| *r == f).map(|i| fixed.len() + i),
        }
        .map(|i| i as f64)
    };
    let series = averaged_series(echo, &|c| Some(proto_family(c)), &index, y);
    Figure {
        id: "echo-per-client-vs-frame".into(),
        title: "Echo throughput per client by frame size (average, study figure 4)".into(),
        x_label: "frame size (bytes)".into(),
        y_label: "throughput per client (Mb/s)".into(),
        kind: Kind::Bar,
        series,
        categories: cats,
        markers: vec![],
        spans: vec![],
        overlay: None,
        notes: vec![averaged_note(echo, &["frame_size", "proto", "family"])],
        group: None,
    }
}

/// The number of rules per client of a seed 000 test series (`seed000-fK` → K).
fn rules_per_client(c: &Config) -> Option<f64> {
    c.param("model")?.strip_prefix("seed000-f")?.parse().ok()
}

/// Rules of a configuration for the loss-per-rule slope: F · n for seed 000's series,
/// else the installed count.
fn rules_of(c: &Config) -> Option<f64> {
    match (rules_per_client(c), c.param_f64("clients")) {
        (Some(f), Some(n)) => Some(f * n),
        _ => c.rules,
    }
}

/// The address families present (`None` when the family does not vary), each with
/// its configurations.
fn by_family<'a>(cs: &[&'a Config]) -> Vec<(Option<String>, Vec<&'a Config>)> {
    let fams: BTreeSet<&str> = cs.iter().filter_map(|c| c.param("family")).collect();
    let fams: Vec<Option<String>> = if fams.len() < 2 {
        vec![None]
    } else {
        fams.into_iter().map(|f| Some(f.to_string())).collect()
    };
    fams.into_iter()
        .map(|fam| {
            let of: Vec<&Config> = cs
                .iter()
                .copied()
                .filter(|c| fam.as_deref().is_none_or(|f| c.param("family") == Some(f)))
                .collect();
            (fam, of)
        })
        .collect()
}

/// Figures 5 and 6: decrease vs the F = 0 series by clients, one series per protocol and
/// rules per client, averaged over frame size and server mode; one figure per family.
fn decrease(echo: &[&Config], a: &mut Analysis) {
    let costed = costed(echo);
    if costed.is_empty() {
        return;
    }
    let x: &XOf = &|c: &Config| c.param_f64("clients");
    let y: &YOf = &|c: &Config| c.cost_pct.map(|v| (v, c.cost_ci95));
    let name = |c: &Config| {
        let p = c.param("proto").map(str::to_uppercase);
        let f = rules_per_client(c)
            .map(|f| format!("{} rules/client", num(f)))
            .or_else(|| c.param("model").map(String::from));
        Some(match (p, f) {
            (Some(p), Some(f)) => format!("{p}, {f}"),
            (None, Some(f)) => f,
            (Some(p), None) => p,
            (None, None) => "all".into(),
        })
    };
    for (fam, cs) in by_family(&costed) {
        let (id, title) = match &fam {
            None => (
                "echo-decrease-vs-baseline".to_string(),
                "Echo decrease vs baseline (average, study figures 5/6)".to_string(),
            ),
            Some(f) => (
                format!("echo-decrease-vs-baseline-ipv{f}"),
                format!("Echo decrease vs baseline, IPv{f} (average, study figure 5/6)"),
            ),
        };
        let series = averaged_series(&cs, &name, x, y);
        if series.is_empty() {
            continue;
        }
        let mut f = Figure::line(
            &id,
            &title,
            ("clients (n)", "throughput decrease vs F = 0 (%)"),
            series,
        );
        f.notes.push(averaged_note(
            &cs,
            &["clients", "proto", "family", "model", "rules"],
        ));
        a.figures.push(f);
    }
}

/// The loss per rule: a line through every costed configuration's decrease (%) against
/// its rule count, per family; the table, a figure of decrease vs rules, and findings.
fn loss_per_rule(echo: &[&Config], a: &mut Analysis) {
    let costed: Vec<&Config> = echo
        .iter()
        .copied()
        .filter(|c| c.cost_pct.is_some() && rules_of(c).is_some_and(|r| r > 0.0))
        .collect();
    if costed.is_empty() {
        return;
    }
    let mut rows = Vec::new();
    let mut series = Vec::new();
    for (fam, cs) in by_family(&costed) {
        let pts: Vec<(f64, f64)> = cs
            .iter()
            .filter_map(|c| Some((rules_of(c)?, c.cost_pct?)))
            .collect();
        // A slope that is not a number is no line (said as none).
        let Some(fit) = stats::fit_line(&pts).filter(|f| f.b.is_finite()) else {
            continue;
        };
        let fam_name = fam
            .as_deref()
            .map(|f| format!("IPv{f}"))
            .unwrap_or_else(|| "all".into());
        let study = fam
            .as_deref()
            .and_then(|f| STUDY_LOSS_PER_RULE.iter().find(|s| s.0 == f))
            .map(|s| s.1);
        let doubt = slope_doubt(fit.b, fit.b_ci95);
        rows.push(vec![
            fam_name.clone(),
            match doubt {
                Some(why) => format!("{} (not measurable: {why})", mean_ci(fit.b, fit.b_ci95)),
                None => mean_ci(fit.b, fit.b_ci95),
            },
            mean_ci(fit.a, fit.a_ci95),
            format!("{:.3}", fit.r2),
            pts.len().to_string(),
            study.map(num).unwrap_or_else(|| "-".into()),
        ]);
        a.claims.push(
            Claim::new(
                format!("throughput loss per rule: {fam_name}"),
                fit.b,
                fit.b_ci95,
                "% per rule",
                format!("{} configurations' means, a line's residuals", pts.len()),
            )
            .doubted(doubt.map(String::from)),
        );
        a.findings.push(format!(
            "Throughput loss per rule ({fam_name}): {}{} % per rule{} (95 % CI over {} \
             configurations, each the mean of its repetitions; a line through their decrease \
             vs F = 0 against F·n rules, R² {:.2}){}.",
            if doubt.is_some() {
                "no measurable loss per rule: "
            } else {
                ""
            },
            mean_ci(fit.b, fit.b_ci95),
            doubt.map(|d| format!(", {d}")).unwrap_or_default(),
            pts.len(),
            fit.r2,
            match study {
                Some(s) => format!(
                    "; the study: {} %/rule{}",
                    num(s),
                    crate::figure::differs(fit.b, fit.b_ci95, s)
                ),
                None => String::new(),
            }
        ));
        let x: &XOf = &|c: &Config| rules_of(c);
        let y: &YOf = &|c: &Config| c.cost_pct.map(|v| (v, c.cost_ci95));
        let mut s = averaged_series(&cs, &|_| Some(fam_name.clone()), x, y);
        if let Some(mut s) = s.pop() {
            let (lo, hi) = pts
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(p.0), h.max(p.0)));
            let fitted = Series {
                name: format!("fit: {fam_name}"),
                points: [lo, hi]
                    .map(|v| {
                        let (y, ci95) = fit.at(v);
                        Point { x: v, y, ci95 }
                    })
                    .to_vec(),
                fit: true,
            };
            s.name = fam_name;
            series.push(s);
            series.push(fitted);
        }
    }
    if rows.is_empty() {
        return;
    }
    a.tables.push(Table::new(
        "Throughput loss per rule (line through the decrease vs F = 0 against F·n rules)",
        &[
            "family",
            "loss per rule (% ± 95 % CI over configurations)",
            "intercept (% ± 95 % CI)",
            "R²",
            "configurations",
            "study (%/rule)",
        ],
        rows,
    ));
    let mut f = Figure::line(
        "echo-decrease-vs-rules",
        "Echo decrease vs rules (loss per rule)",
        ("rules (F · n)", "throughput decrease vs F = 0 (%)"),
        series,
    );
    f.notes.push(averaged_note(&costed, &["family", "rules"]));
    a.figures.push(f);
}

/// Why a fitted loss per rule is no finding: its CI holds 0, or the line has none (two
/// configurations); `None` where it is one.
fn slope_doubt(b: f64, ci: Option<f64>) -> Option<&'static str> {
    let ci = ci.filter(|c| c.is_finite());
    match crate::figure::unmeasured_kind(b, ci) {
        Some(results::DoubtKind::TooFew) => Some("no CI: a line through two configurations"),
        _ => crate::figure::unmeasured(b, ci),
    }
}

/// One difference per pair of configurations that differ in the server only (on the
/// F = 0 series when there is one; TCP and SCTP when run, UDP having no per-client
/// connection), as a configuration-like cell: (the pair's threads configuration,
/// threads − epoll in % of epoll, its CI).
fn mode_diffs<'a>(echo: &[&'a Config]) -> Vec<(&'a Config, f64, Option<f64>)> {
    let base: Vec<&Config> = echo.iter().copied().filter(|c| c.is_baseline).collect();
    let pool = if base.is_empty() { echo } else { &base[..] };
    let streams: Vec<&Config> = pool
        .iter()
        .copied()
        .filter(|c| c.param("proto") != Some("udp"))
        .collect();
    let pool: Vec<&Config> = if streams.is_empty() {
        pool.to_vec()
    } else {
        streams
    };
    let rest = |c: &Config| {
        let mut f = c.flat.clone();
        f.remove("server");
        f
    };
    let mut diffs: Vec<(&Config, f64, Option<f64>)> = Vec::new();
    for t in pool.iter().filter(|c| c.param("server") == Some("threads")) {
        let Some(e) = pool
            .iter()
            .find(|e| e.param("server") == Some("epoll") && rest(e) == rest(t))
        else {
            continue;
        };
        let (Some(st), Some(se)) = (
            t.metrics.get(crate::model::THROUGHPUT_BPS),
            e.metrics.get(crate::model::THROUGHPUT_BPS),
        ) else {
            continue;
        };
        if se.mean == 0.0 {
            continue;
        }
        let r = st.mean / se.mean;
        let ci = match (st.ci95, se.ci95) {
            (Some(a), Some(b)) if st.mean != 0.0 => {
                Some(100.0 * r * ((a / st.mean).powi(2) + (b / se.mean).powi(2)).sqrt())
            }
            _ => None,
        };
        diffs.push((t, (r - 1.0) * 100.0, ci));
    }
    diffs
}

/// Figure 7: (threads − epoll) / epoll in % by clients, per protocol/family (TCP and
/// SCTP when they were run: UDP has no per-client connection), on the F = 0 series when
/// there is one, averaged over the rest; markers where the mean difference changes sign.
fn threads_vs_epoll(echo: &[&Config], a: &mut Analysis) {
    let servers: BTreeSet<&str> = echo.iter().filter_map(|c| c.param("server")).collect();
    if !(servers.contains("threads") && servers.contains("epoll")) {
        return;
    }
    let diffs = mode_diffs(echo);
    if diffs.is_empty() {
        return;
    }
    let by_cfg: BTreeMap<&str, (f64, Option<f64>)> = diffs
        .iter()
        .map(|(c, d, ci)| (c.key.as_str(), (*d, *ci)))
        .collect();
    let cfgs: Vec<&Config> = diffs.iter().map(|d| d.0).collect();
    let x: &XOf = &|c: &Config| c.param_f64("clients");
    let y: &YOf = &|c: &Config| by_cfg.get(c.key.as_str()).copied();
    let mut series = averaged_series(&cfgs, &|c| Some(proto_family(c)), x, y);
    // The mean over every protocol/family: its sign change is the turning point.
    let overall = averaged_series(&cfgs, &|_| Some("mean".into()), x, y);
    if series.len() > 1 {
        series.extend(overall.iter().cloned().map(|mut s| {
            s.name = "mean over protocols/families".into();
            s
        }));
    }
    let mut fig = Figure::line(
        "echo-threads-vs-epoll",
        "Echo throughput: threads vs epoll server (difference in %, study figure 7)",
        ("clients (n)", "threads − epoll (% of epoll)"),
        series,
    );
    fig.notes
        .push("Positive: the threaded server is faster; negative: epoll is faster.".into());
    fig.notes.push(averaged_note(
        &cfgs,
        &["clients", "proto", "family", "server"],
    ));
    let zero = vec![];
    let mean_curve = overall.first().map(|s| &s.points).unwrap_or(&zero);
    if !mean_curve.is_empty() {
        a.findings.push(turning_point(mean_curve, &mut fig));
    }
    a.figures.push(fig);
}

/// The turning point of the mean difference `mean_curve` (threads − epoll by n), judged
/// against its CIs: the finding, and on `fig` a marker for each crossing clear of the
/// noise and a note for each crossing.
fn turning_point(mean_curve: &[Point], fig: &mut Figure) -> String {
    let flat: Vec<Point> = mean_curve
        .iter()
        .map(|p| Point {
            x: p.x,
            y: 0.0,
            ci95: None,
        })
        .collect();
    let turns = crate::throughput::crossovers(mean_curve, &flat);
    // Where the mean difference's CI holds 0 (or there is none): there no server mode
    // measurably leads, and a sign change beside it is within the noise.
    let unclear: Vec<f64> = mean_curve
        .iter()
        .filter(|p| p.ci95.is_none_or(|c| p.y.abs() <= c))
        .map(|p| p.x)
        .collect();
    let unclear_at = |xs: &[f64]| {
        let at: Vec<String> = xs.iter().copied().map(num).collect();
        crate::series::and_list(&at)
    };
    let clear = |x0: &f64, x1: &f64| !unclear.contains(x0) && !unclear.contains(x1);
    for (x0, x1, xc) in &turns {
        if clear(x0, x1) {
            fig.markers.push(Marker {
                x: *xc,
                text: format!("n≈{xc:.1}"),
            });
            fig.notes.push(format!(
                "threads − epoll changes sign between n = {x0} and n = {x1} (crossover ≈ \
                 {xc:.1})"
            ));
        } else {
            fig.notes.push(format!(
                "threads − epoll changes sign between n = {x0} and n = {x1} within the noise \
                 (a 95 % CI beside it holds 0, or there is none): no turning point"
            ));
        }
    }
    let kept: Vec<&(f64, f64, f64)> = turns.iter().filter(|(a, b, _)| clear(a, b)).collect();
    let study_at = |x0: f64, x1: f64| {
        if x0 <= STUDY_TURNING_POINT && STUDY_TURNING_POINT <= x1 {
            "the study's ~40 lies in that interval".to_string()
        } else {
            format!(
                "the study found ~{} clients: this machine differs",
                num(STUDY_TURNING_POINT)
            )
        }
    };
    let finding = match (kept.as_slice(), turns.is_empty()) {
        // One measurable crossing: the turning point.
        ([(x0, x1, xc)], _) if turns.len() == 1 => {
            let lead = if mean_curve.first().is_some_and(|p| p.y > 0.0) {
                "threads lead below it, epoll above"
            } else {
                "epoll leads below it, threads above"
            };
            format!(
                "Threads vs epoll: the turning point (crossover of the mean difference) is at \
                 n ≈ {xc:.1} clients, between the measured n = {} and n = {} ({lead}; a \
                 linear interpolation, so the crossover is only known to lie in that \
                 interval); {}.",
                num(*x0),
                num(*x1),
                study_at(*x0, *x1)
            )
        }
        // Several crossings: which mode leads depends on n, no one turning point.
        ([_, ..], _) | ([], false) if turns.len() > 1 => {
            let at: Vec<String> = turns
                .iter()
                .map(|(x0, x1, _)| format!("{}–{}", num(*x0), num(*x1)))
                .collect();
            format!(
                "Threads vs epoll: no single turning point — the mean difference changes sign \
                 {} times (between n = {}; {} of them clear of the noise), so which mode leads \
                 depends on n (the study found one near {} clients).",
                turns.len(),
                crate::series::and_list(&at),
                kept.len(),
                num(STUDY_TURNING_POINT)
            )
        }
        // One crossing within the noise.
        (_, false) => {
            let (x0, x1, _) = turns[0];
            format!(
                "Threads vs epoll: no turning point is stated — the mean difference changes \
                 sign between n = {} and n = {}, but at n = {} it is not clear of 0 (its 95 % \
                 CI holds 0, or one configuration there gave none): within the noise (the \
                 study found one near {} clients).",
                num(x0),
                num(x1),
                unclear_at(&unclear),
                num(STUDY_TURNING_POINT)
            )
        }
        // No crossing: one mode ahead everywhere — measurably where its CI is clear.
        (_, true) => {
            let who = if mean_curve.first().is_some_and(|p| p.y > 0.0) {
                "threads"
            } else {
                "epoll"
            };
            if unclear.len() == mean_curve.len() {
                fig.notes
                    .push("No crossover, and no server mode measurably ahead at any n.".into());
                format!(
                    "Threads vs epoll: no turning point, and no server mode measurably leads \
                     at any n measured ({who} ahead in the means, each 95 % CI holding 0, or \
                     none) (the study found one near {} clients).",
                    num(STUDY_TURNING_POINT)
                )
            } else {
                fig.notes
                    .push("No crossover: one server mode leads at every n.".into());
                let how = if unclear.is_empty() {
                    "(each difference's 95 % CI clear of 0)".to_string()
                } else {
                    format!(
                        "— measurably only where its 95 % CI is clear of 0, not at n = {} (a \
                         CI that holds 0, or none)",
                        unclear_at(&unclear)
                    )
                };
                format!(
                    "Threads vs epoll: no turning point — {who} leads at every n measured \
                     {how} (the study found one near {} clients).",
                    num(STUDY_TURNING_POINT)
                )
            }
        }
    };
    finding
}

/// The host load metrics shown (key suffix, column).
const LOAD: [(&str, &str); 4] = [
    ("cpu_busy", "CPU busy (% per CPU)"),
    ("ctxt_per_s", "context switches/s (whole machine)"),
    ("proc_ctxt_per_s", "context switches/s of its process"),
    ("mem_mib", "memory in use (MiB)"),
];

/// CPU, memory and context switches by test series (F) and by server mode, from the
/// stored samples (the means over the group's configurations with their 95 % CI).
fn host_load(echo: &[&Config], a: &mut Analysis) {
    let keys: BTreeSet<String> = echo
        .iter()
        .flat_map(|c| c.metrics.keys())
        .filter(|k| {
            let per_cpu = k
                .strip_prefix("gateway.cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
            !per_cpu && LOAD.iter().any(|(s, _)| k.ends_with(&format!(".{s}")))
        })
        .cloned()
        .collect();
    if keys.is_empty() {
        return;
    }
    let mut groups: Vec<(String, Vec<&Config>)> = Vec::new();
    for (param, what) in [("model", "test series"), ("server", "server")] {
        let vals: BTreeSet<&str> = echo.iter().filter_map(|c| c.param(param)).collect();
        if vals.len() < 2 {
            continue;
        }
        for v in vals {
            let cs: Vec<&Config> = echo
                .iter()
                .copied()
                .filter(|c| c.param(param) == Some(v))
                .collect();
            groups.push((format!("{what} {v}"), cs));
        }
    }
    if groups.is_empty() {
        groups.push(("all".into(), echo.to_vec()));
    }
    let mut columns = vec!["group".to_string(), "configurations".to_string()];
    let col = |k: &String| {
        let (role, m) = k.split_once('.').unwrap_or(("", k));
        let label = LOAD.iter().find(|l| l.0 == m).map(|l| l.1).unwrap_or(m);
        format!("{role}: {label}")
    };
    columns.extend(keys.iter().map(col));
    let rows = groups
        .iter()
        .map(|(name, cs)| {
            let mut r = vec![name.clone(), cs.len().to_string()];
            r.extend(keys.iter().map(|k| {
                average(cs, &|c: &Config| metric(c, k, 1.0))
                    .map(|(m, ci, _)| mean_ci(m, ci))
                    .unwrap_or_else(|| "-".into())
            }));
            r
        })
        .collect();
    // The findings: the gateway's CPU and the context switches, group by group.
    for (key, what) in [
        ("gateway.cpu_busy", "gateway CPU busy (% per CPU)"),
        (
            "server.proc_ctxt_per_s",
            "server process context switches/s",
        ),
        (
            "client.proc_ctxt_per_s",
            "client process context switches/s",
        ),
        (
            "server.ctxt_per_s",
            "context switches/s of the whole machine (server's view)",
        ),
    ] {
        if !keys.contains(key) {
            continue;
        }
        let parts: Vec<String> = groups
            .iter()
            .filter_map(|(name, cs)| {
                let (m, ci, n) = average(cs, &|c: &Config| metric(c, key, 1.0))?;
                Some(format!("{name}: {} (n = {n})", mean_ci(m, ci)))
            })
            .collect();
        if !parts.is_empty() {
            a.findings.push(format!(
                "Host load, {what}, from the stored samples (95 % CI over configurations): {}.",
                parts.join("; ")
            ));
        }
    }
    a.tables.push(Table {
        title: "Host load by test series and server mode (from the stored samples; mean ± 95 % CI over configurations)".into(),
        columns,
        rows,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo configuration of parameters `flat` with `bps` throughput.
    fn echo(flat: &[(&str, &str)], bps: f64) -> Config {
        let key: Vec<&str> = flat.iter().map(|(_, v)| *v).collect();
        let mut c = crate::testing::config(
            key.join("-"),
            "echo",
            "none",
            flat.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        c.metrics.insert(
            "throughput_bps".into(),
            stats::Summary::of(&[bps, bps]).unwrap(),
        );
        c
    }

    fn gap_sentence(pairs: &[(f64, f64)]) -> String {
        let cs: Vec<Config> = pairs
            .iter()
            .enumerate()
            .flat_map(|(i, (v4, v6))| {
                let n = i.to_string();
                [
                    echo(&[("family", "4"), ("clients", &n)], *v4),
                    echo(&[("family", "6"), ("clients", &n)], *v6),
                ]
            })
            .collect();
        let refs: Vec<&Config> = cs.iter().collect();
        let mut a = Analysis::default();
        gaps(&refs, &mut a);
        a.findings
            .into_iter()
            .find(|f| f.starts_with("IPv4"))
            .expect("a family gap")
    }

    /// Threads and epoll echo configurations at `clients` (two protocols each, so every
    /// n has a CI over configurations): threads `d[i]` % faster than epoll at n = i+1,
    /// the protocols `spread` % apart.
    fn modes(d: &[f64], spread: f64) -> Vec<Config> {
        let mut out = vec![];
        for (i, di) in d.iter().enumerate() {
            for (proto, k) in [
                ("tcp", 1.0 + spread / 100.0),
                ("sctp", 1.0 - spread / 100.0),
            ] {
                for (server, bps) in [
                    ("threads", 100.0 * (1.0 + di / 100.0) * k),
                    ("epoll", 100.0),
                ] {
                    let n = (i + 1).to_string();
                    out.push(echo(
                        &[("clients", &n), ("proto", proto), ("server", server)],
                        bps,
                    ));
                }
            }
        }
        out
    }

    fn modes_finding(d: &[f64], spread: f64) -> String {
        let cs = modes(d, spread);
        let refs: Vec<&Config> = cs.iter().collect();
        let mut a = Analysis::default();
        threads_vs_epoll(&refs, &mut a);
        a.findings
            .into_iter()
            .next()
            .expect("a threads vs epoll finding")
    }

    /// A sign change of the mean difference within its CIs is no turning point, and a
    /// lead that is not clear of 0 somewhere says where.
    #[test]
    fn a_turning_point_within_the_noise_is_not_stated() {
        let clear = modes_finding(&[10.0, 5.0, -5.0, -10.0], 0.1);
        assert!(clear.contains("the turning point (crossover"), "{clear}");
        let noisy = modes_finding(&[10.0, 1.0, -1.0, -10.0], 5.0);
        assert!(
            noisy.starts_with("Threads vs epoll: no turning point is stated")
                && noisy.contains("within the noise"),
            "{noisy}"
        );
        let lead = modes_finding(&[10.0, 0.05, 10.0], 0.1);
        assert!(
            lead.contains("threads leads at every n measured — measurably only where")
                && lead.contains("not at n = 2"),
            "{lead}"
        );
        let none = modes_finding(&[0.05, 0.05], 0.1);
        assert!(
            none.contains("no server mode measurably leads at any n measured")
                && !none.contains("threads leads"),
            "{none}"
        );
        let twice = modes_finding(&[10.0, -10.0, 10.0], 0.1);
        assert!(
            twice.starts_with(
                "Threads vs epoll: no single turning point — the mean difference \
                 changes sign 2 times"
            ),
            "{twice}"
        );
        let sure = modes_finding(&[10.0, 12.0], 0.1);
        assert!(
            sure.contains("(each difference's 95 % CI clear of 0)"),
            "{sure}"
        );
    }

    /// seed000-quick here said "IPv4 is 2.5 ± 6.8 % faster than IPv6": a gap whose CI
    /// holds 0 is no measurable difference; one clear of 0 is stated.
    #[test]
    fn a_gap_whose_ci_holds_zero_is_no_gap() {
        let none = gap_sentence(&[(100.0, 98.0), (100.0, 103.0), (100.0, 99.5)]);
        assert!(
            none.starts_with("IPv4 vs IPv6: no measurable difference (")
                && none.contains("its 95 % CI includes 0")
                && !none.contains("faster"),
            "{none}"
        );
        let gap = gap_sentence(&[(110.0, 100.0), (111.0, 100.0), (109.0, 100.0)]);
        assert!(gap.starts_with("IPv4 is 10"), "{gap}");
        assert!(gap.contains("% faster than IPv6 in throughput"), "{gap}");
    }

    /// Echo configurations with seed 000's F rules per client at n = 2, 4, 8 clients,
    /// each costing `pct(F·n)` ± `ci` % against F = 0.
    fn costed_by_rules(pct: &dyn Fn(f64, usize) -> f64, ci: f64) -> Vec<Config> {
        let mut out = vec![];
        for n in [2.0, 4.0, 8.0] {
            for f in [2.0, 4.0] {
                let (ns, model) = (num(n), format!("seed000-f{f}"));
                let mut c = echo(&[("clients", &ns), ("model", &model)], 100.0);
                c.cost_pct = Some(pct(f * n, out.len()));
                c.cost_ci95 = Some(ci);
                out.push(c);
            }
        }
        out
    }

    fn loss_analysis(cs: &[Config]) -> Analysis {
        let refs: Vec<&Config> = cs.iter().collect();
        let mut a = Analysis::default();
        decrease(&refs, &mut a);
        loss_per_rule(&refs, &mut a);
        a
    }

    /// A loss per rule whose CI holds 0 is no finding (a line through noise), and each
    /// decrease point drawn from one configuration carries that configuration's CI.
    #[test]
    fn a_loss_per_rule_within_the_noise_is_not_stated() {
        // ± 0.4 % by turns: noise about a flat line.
        let wobble = |_: f64, i: usize| if i.is_multiple_of(2) { 0.4 } else { -0.4 };
        let flat = loss_analysis(&costed_by_rules(&wobble, 0.5));
        let claim = &flat.claims[0];
        let ci = claim.ci95.expect("a CI over six configurations");
        assert!(ci > 0.0 && claim.value.abs() <= ci, "{claim:?}");
        let said = &flat.findings[0];
        assert!(
            said.starts_with("Throughput loss per rule (all): no measurable loss per rule: ")
                && said.contains("its 95 % CI includes 0"),
            "{said}"
        );
        assert!(flat.claims[0].doubt.is_some(), "{:?}", flat.claims);
        assert!(flat.tables[0].rows[0][1].contains("(not measurable: "));
        let decrease = &flat.figures[0];
        assert!(decrease.id.starts_with("echo-decrease-vs-baseline"));
        assert!(decrease
            .series
            .iter()
            .flat_map(|s| &s.points)
            .all(|p| p.ci95 == Some(0.5)));

        let sloped = loss_analysis(&costed_by_rules(
            &|r, i| 0.05 * r + wobble(r, i) / 40.0,
            0.01,
        ));
        let said = &sloped.findings[0];
        assert!(
            !said.contains("measurable")
                && said.contains(" % per rule (95 % CI over 6 configurations"),
            "{said}"
        );
        let claim = &sloped.claims[0];
        assert!((claim.value - 0.05).abs() < 0.002, "{claim:?}");
        assert!(claim.doubt.is_none(), "{claim:?}");
    }
}
