//! Seed 001's summary table as the study drew it: two sections, "accepting all packets"
//! and "rejecting all packets", each with its own baseline (the section's fastest row:
//! connection tracking disabled; the drop at the very start of the raw table), and the
//! cost of every other row against that baseline, with a 95 % CI and the study's value.
//!
//! Owns: the sectioned table and its findings.
//! Must not: read the store; imports `figure`, `model`, `stats` only.

use crate::figure::{mean_ci, num, Analysis, Table};
use crate::model::Config;

/// The study's cost column (%), by a part of the case label.
pub const STUDY_COST: [(&str, f64); 7] = [
    ("connection tracking enabled", 20.0),
    ("after 5 rules", 12.0),
    ("normal (filter) table", 12.0),
    ("ipset", 10.0),
    ("string matching: bm", 10.0),
    ("string matching: kmp", 17.0),
    ("hashlimit", 20.0),
];

/// The section of a case label: `None` for the run's own baseline (no firewall).
pub fn section_of(label: &str) -> Option<&'static str> {
    let l = label.to_lowercase();
    if l.starts_with("no firewall") {
        None
    } else if l.starts_with("accept") {
        Some("accepting all packets")
    } else {
        Some("rejecting all packets")
    }
}

/// Do the labels follow the study's sections (`accept: …` and `drop: …` cases)?
pub fn sectioned(labelled: &[&Config]) -> bool {
    let has = |p: &str| {
        labelled
            .iter()
            .any(|c| c.label.as_deref().is_some_and(|l| l.starts_with(p)))
    };
    has("accept:") && has("drop:")
}

/// Cost of `x` against `base` in % (the decrease of a higher-is-better metric), with
/// the CI propagated from both means' relative CIs.
pub fn cost(x: &Config, base: &Config, m: &str, higher: bool) -> Option<(f64, Option<f64>)> {
    let (sx, sb) = (x.metrics.get(m)?, base.metrics.get(m)?);
    if sb.mean == 0.0 || sx.mean == 0.0 {
        return None;
    }
    let r = sx.mean / sb.mean;
    let c = if higher {
        (1.0 - r) * 100.0
    } else {
        (r - 1.0) * 100.0
    };
    let ci = match (sx.ci95, sb.ci95) {
        (Some(a), Some(b)) => {
            Some(100.0 * r * ((a / sx.mean).powi(2) + (b / sb.mean).powi(2)).sqrt())
        }
        _ => None,
    };
    Some((c, ci))
}

/// The sectioned table (and findings) of labelled cases; `run_base` is the run's own
/// baseline row (no firewall), shown as a second cost column.
pub(crate) fn sections(
    labelled: &[&Config],
    m: &str,
    higher: bool,
    run_base: Option<&Config>,
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
    let mut rows = Vec::new();
    for section in ["accepting all packets", "rejecting all packets"] {
        let cs: Vec<&Config> = labelled
            .iter()
            .copied()
            .filter(|c| c.label.as_deref().and_then(section_of) == Some(section))
            .collect();
        let Some(base) = cs.iter().max_by(better).copied() else {
            continue;
        };
        let base_label = base.label.clone().unwrap_or_default();
        for c in &cs {
            let s = c.metrics[m];
            let label = c.label.clone().unwrap_or_default();
            let study = STUDY_COST
                .iter()
                .find(|(k, _)| label.to_lowercase().contains(k))
                .map(|x| x.1);
            let (own, vs_run) = if std::ptr::eq(*c, base) {
                ("section baseline".to_string(), None)
            } else {
                let k = cost(c, base, m, higher);
                if let Some((v, ci)) = k {
                    a.findings.push(format!(
                        "{} — {label}: {} % cost against “{base_label}” (the section's \
                         baseline; 95 % CI from both rows' repetitions){}.",
                        capital(section),
                        mean_ci(v, ci),
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
                (
                    k.map(|(v, ci)| mean_ci(v, ci)).unwrap_or_default(),
                    run_base.and_then(|b| cost(c, b, m, higher)),
                )
            };
            rows.push(vec![
                section.to_string(),
                label,
                s.n.to_string(),
                mean_ci(s.mean, s.ci95),
                own,
                study.map(num).unwrap_or_else(|| "-".into()),
                vs_run.map(|(v, ci)| mean_ci(v, ci)).unwrap_or_default(),
            ]);
        }
    }
    if let Some(b) = run_base {
        let s = b.metrics[m];
        rows.insert(
            0,
            vec![
                "-".into(),
                b.label.clone().unwrap_or_default(),
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
