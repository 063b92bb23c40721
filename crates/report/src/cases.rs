//! Seed 001's summary table as the study drew it: two sections, "accepting all packets"
//! and "rejecting all packets", by the **path** the flood takes through the firewall
//! (its rules accept it, or drop it: [`path_of`], from the row's model and sink — never
//! from its label), each with its own baseline (connection tracking disabled; the drop
//! at the very start of the raw table), the cost of every other row against that
//! baseline with a 95 % CI and the study's value, and the cost against the run's own
//! "no firewall" row.
//!
//! Rows beyond the study (other engines: nft, XDP, tc; or a label saying so) are costed
//! like the others but never serve as a section's baseline and never carry the study's
//! value.
//!
//! Owns: the sectioned table and its findings.
//! Must not: read the store; imports `figure`, `model`, `stats` only.

use crate::figure::{mean_ci, num, Analysis, Claim, Table};
use crate::model::Config;

/// The path a flood takes through the firewall of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// The rules let the flood through to the server's sink ("accepting all packets").
    Accept,
    /// The rules drop the flood at the gateway ("rejecting all packets").
    Drop,
}

impl Path {
    /// The study's name of the section.
    pub fn section(self) -> &'static str {
        match self {
            Path::Accept => "accepting all packets",
            Path::Drop => "rejecting all packets",
        }
    }
}

/// Models whose rules drop the flood (matched and dropped, or all but a rate limit).
pub const DROPPING_MODELS: [&str; 6] = [
    "raw-drop",
    "filter-drop",
    "hashlimit",
    "linear-drop",
    "string-bm-drop",
    "string-kmp-drop",
];

/// The engines of the study (iptables-legacy and ipset over it).
pub const STUDY_ENGINES: [&str; 3] = ["iptables-legacy", "ipset-legacy", "ipset"];

/// The path of a row: `None` for the run's "no firewall" row (engine `none`); `Drop`
/// when its model drops the flood or its packets are counted at the gateway (`sink =
/// "gateway"`: nothing reaches a receiver); `Accept` otherwise.
pub fn path_of(c: &Config) -> Option<Path> {
    if c.no_firewall() {
        return None;
    }
    let dropping = c
        .param("model")
        .is_some_and(|m| DROPPING_MODELS.contains(&m));
    if dropping || c.param("packet.sink") == Some("gateway") {
        Some(Path::Drop)
    } else {
        Some(Path::Accept)
    }
}

/// Is the row one of the study's (its engines, and a label that does not say "beyond
/// the study")?
pub fn in_study(c: &Config) -> bool {
    let engine = c.param("engine").unwrap_or("");
    let beyond = c
        .label
        .as_deref()
        .is_some_and(|l| l.to_lowercase().contains("beyond the study"));
    STUDY_ENGINES.contains(&engine) && !beyond
}

/// The study's cost column (%) of a row of the study, by its path and model.
pub fn study_cost(c: &Config) -> Option<f64> {
    if !in_study(c) {
        return None;
    }
    let rules = c.param_f64("rules").unwrap_or(0.0);
    match (path_of(c)?, c.param("model")?) {
        (Path::Accept, "conntrack") => Some(20.0),
        (Path::Drop, "raw-drop") if rules > 0.0 => Some(12.0),
        (Path::Drop, "filter-drop") => Some(12.0),
        (Path::Drop, "linear-drop") => Some(10.0),
        (Path::Drop, "string-bm-drop") => Some(10.0),
        (Path::Drop, "string-kmp-drop") => Some(17.0),
        (Path::Drop, "hashlimit") => Some(20.0),
        // Every other row has no value in the study's table (its baselines, the
        // miss-then-accept ipset and string rows, rows beyond the study).
        (Path::Accept | Path::Drop, _) => None,
    }
}

/// The model of each section's baseline in the study (the drop one with no rule before it).
fn is_study_baseline(c: &Config, path: Path) -> bool {
    let rules = c.param_f64("rules").unwrap_or(0.0);
    in_study(c)
        && match path {
            Path::Accept => c.param("model") == Some("notrack"),
            Path::Drop => c.param("model") == Some("raw-drop") && rules == 0.0,
        }
}

/// Do the rows follow the study's sections (flood or flow rows on both paths)?
pub fn sectioned(labelled: &[&Config]) -> bool {
    let packet = labelled.iter().all(|c| c.workload.is_stream());
    let has = |p: Path| {
        labelled
            .iter()
            .any(|c| path_of(c) == Some(p) && in_study(c))
    };
    packet && has(Path::Accept) && has(Path::Drop)
}

/// Cost of `x` against `base` in % (the decrease of a higher-is-better metric), with
/// the CI propagated from both means' relative CIs (over the repetitions whose rate is
/// the gateway's: `Config::metrics`).
pub fn cost(x: &Config, base: &Config, m: &str, higher: bool) -> Option<(f64, Option<f64>)> {
    crate::stats::cost_pct(x.metrics.get(m)?, base.metrics.get(m)?, higher)
}

/// A row's cost against `base` (its `against` row: baseline, best) as a table cell:
/// withheld where either rate is no measure of the gateway's ([`Config::rate_doubt`]),
/// marked where the cost is no measurable one, "-" without one.
pub(crate) fn cost_text(
    x: &Config,
    base: &Config,
    against: &str,
    (m, higher): (&str, bool),
) -> String {
    if let Some(why) = x
        .rate_doubt("this row")
        .or_else(|| base.rate_doubt(&format!("the {against} row")))
        .map(|d| d.why)
    {
        return crate::figure::withheld_cell(&why);
    }
    cost(x, base, m, higher)
        .map(crate::figure::cost_cell)
        .unwrap_or_else(|| "-".into())
}

/// The sectioned table (and findings) of labelled cases; the run's own "no firewall"
/// row (engine `none`, else the scenario's baseline) gives a second cost column.
pub(crate) fn sections(
    labelled: &[&Config],
    namer: &crate::series::Namer,
    (m, higher): (&str, bool),
    a: &mut Analysis,
) {
    let better = |x: &&&Config, y: &&&Config| {
        let (p, q) = (x.mean(m).unwrap_or(f64::NAN), y.mean(m).unwrap_or(f64::NAN));
        if higher {
            p.total_cmp(&q)
        } else {
            q.total_cmp(&p)
        }
    };
    let run_base = labelled
        .iter()
        .copied()
        .find(|c| path_of(c).is_none())
        .or_else(|| labelled.iter().copied().find(|c| c.is_baseline));
    let mut rows = Vec::new();
    for path in [Path::Accept, Path::Drop] {
        let section = path.section();
        let cs: Vec<&Config> = labelled
            .iter()
            .copied()
            .filter(|c| path_of(c) == Some(path))
            .collect();
        // The study's own baseline row, else the section's fastest row of the study:
        // a row beyond the study never is the baseline.
        // A row fwbench mostly limited is no fair sample: never the fastest chosen.
        let fair = |c: &&&Config| c.fair_sample();
        let base = cs
            .iter()
            .copied()
            .find(|c| is_study_baseline(c, path))
            .or_else(|| {
                let study = || cs.iter().filter(|c| in_study(c));
                study()
                    .filter(fair)
                    .max_by(better)
                    .or(study().max_by(better))
                    .copied()
            });
        let Some(base) = base else {
            continue;
        };
        let base_label = namer.name(base);
        for c in &cs {
            let s = c.metrics[m];
            let label = namer.name(c);
            let study = study_cost(c);
            // The drop path's rows count what the gateway took in and dropped; the
            // no-firewall row counts what crossed it: not one quantity, no cost.
            let vs_run = match path {
                Path::Accept => run_base
                    .map(|b| cost_text(c, b, "no-firewall", (m, higher)))
                    .unwrap_or_else(|| "-".into()),
                Path::Drop => {
                    "n/a: counted where the gateway drops, not where traffic crosses".into()
                }
            };
            let paced = c
                .rate_doubt("this row")
                .or_else(|| base.rate_doubt("the section baseline"))
                .map(|d| d.why);
            let own = if std::ptr::eq(*c, base) {
                // The study's baseline, or the only rows left, may be no fair sample:
                // said in its own cell.
                match c.rate_doubt("this row") {
                    Some(d) if d.by == crate::model::DoubtedBy::Fwbench => {
                        crate::figure::withheld_cell(&d.why)
                    }
                    _ => "section baseline".to_string(),
                }
            } else if let Some(why) = paced {
                // Said and claimed doubted, so a second run's check knows why.
                let key = format!("section cost: {section} — {label}, against “{base_label}”");
                if let Some((v, ci)) = cost(c, base, m, higher) {
                    a.claims.push(
                        Claim::new(key, v, ci, "%", "both rows' repetitions".into())
                            .doubted(Some(why.clone())),
                    );
                }
                a.findings.push(format!(
                    "{} — {label}: no cost is stated against “{base_label}”: {why}.",
                    capital(section)
                ));
                crate::figure::withheld_cell(&why)
            } else {
                let k = cost(c, base, m, higher);
                if let Some((v, ci)) = k {
                    let unmeasured = crate::figure::unmeasured(v, ci);
                    a.claims.push(
                        Claim::new(
                            format!("section cost: {section} — {label}, against “{base_label}”"),
                            v,
                            ci,
                            "%",
                            "both rows' repetitions".into(),
                        )
                        .doubted(unmeasured.map(String::from)),
                    );
                    // A cost whose CI holds 0 is no cost (seed 001 here: "tc ingress
                    // BPF: -6.1 ± 8.6 % cost"): its width only, with why.
                    let stated = match unmeasured {
                        // Measurably below 0 (seed 001 here: tc ingress BPF, -5.42 ±
                        // 0.80 %): said as what it is, not read as a cost.
                        None if v < 0.0 => format!(
                            "{} % cost (negative: this row is the faster)",
                            mean_ci(v, ci)
                        ),
                        None => format!("{} % cost", mean_ci(v, ci)),
                        Some(why) => format!("no measurable cost ({} %: {why})", mean_ci(v, ci)),
                    };
                    a.findings.push(format!(
                        "{} — {label}: {stated} against “{base_label}” (the section's \
                         baseline; 95 % CI from both rows' repetitions){}.",
                        capital(section),
                        match study {
                            Some(st) => format!(
                                "; the study: {} %{}",
                                num(st),
                                crate::figure::differs(v, ci, st)
                            ),
                            None => String::new(),
                        }
                    ));
                }
                k.map(crate::figure::cost_cell).unwrap_or_default()
            };
            rows.push(vec![
                section.to_string(),
                label,
                s.n.to_string(),
                mean_ci(s.mean, s.ci95),
                own,
                study.map(num).unwrap_or_else(|| "-".into()),
                vs_run,
            ]);
        }
    }
    if let Some(b) = run_base {
        let s = b.metrics[m];
        rows.insert(
            0,
            vec![
                "-".into(),
                namer.name(b),
                s.n.to_string(),
                mean_ci(s.mean, s.ci95),
                String::new(),
                "-".into(),
                "run baseline".into(),
            ],
        );
    }
    a.tables.push(Table {
        title: format!(
            "Cases by section: {m}, cost % against each section's own baseline (the study's summary table)"
        ),
        columns: vec![
            "section".into(),
            "label".into(),
            "n".into(),
            format!("{m} (mean ± 95 % CI)"),
            "cost vs section baseline (% ± 95 % CI)".into(),
            "study cost (%)".into(),
            "cost vs no firewall (%)".into(),
        ],
        rows,
    });
}

/// First letter upper-case.
fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}
