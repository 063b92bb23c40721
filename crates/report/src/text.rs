//! The answer on a terminal, and warnings said once: each run's findings as plain text
//! (what `fwbench run` prints last and `fwbench report --text` prints), and the
//! grouping of a run's warnings of one kind into one line when there are many of them
//! (the HTML and Markdown pages list them in full further down, linked).
//!
//! Owns: [`collapse`] (which warnings share a line) and the plain-text findings.
//! Must not: compute anything new: it only lays out what the analysis and the
//! warnings already hold.

use crate::contents::{Report, Warning};
use std::fmt::Write as _;

/// More warnings of one kind in one run than this share one line.
pub const COLLAPSE_ABOVE: usize = 3;

/// Warnings of one run and kind: said in one line when there are many.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<'a> {
    pub run_id: i64,
    pub kind: &'a str,
    pub items: Vec<&'a Warning>,
}

impl Group<'_> {
    /// Is this group said in one line (with the list elsewhere)?
    pub fn collapsed(&self) -> bool {
        self.items.len() > COLLAPSE_ABOVE
    }

    /// The anchor of the group's full list (HTML).
    pub fn anchor(&self) -> String {
        format!("w{}-{}", self.run_id, self.kind)
    }

    /// The one line of a collapsed group: how many, what kind, the first as example.
    pub fn line(&self) -> String {
        let n = self.items.len();
        let first = self.items.first().map_or("", |w| w.message.as_str());
        match self.kind {
            "unstable" => format!(
                "{n} unstable configurations (the main metric varies more than allowed \
                 over their repetitions), e.g. {first}"
            ),
            k => format!("{n} warnings of kind {k}, e.g. {first}"),
        }
    }
}

/// Group warnings by (run, kind), in the order each group first appears.
pub fn collapse<'a>(warnings: &[&'a Warning]) -> Vec<Group<'a>> {
    let mut groups: Vec<Group<'a>> = Vec::new();
    for w in warnings {
        match groups
            .iter_mut()
            .find(|g| g.run_id == w.run_id && g.kind == w.kind)
        {
            Some(g) => g.items.push(w),
            None => groups.push(Group {
                run_id: w.run_id,
                kind: &w.kind,
                items: vec![w],
            }),
        }
    }
    groups
}

/// Each run's findings (the answer) as plain text, then its warnings — one line per
/// kind when there are many — and nothing else: the details are in the report.
pub fn findings_text(r: &Report) -> String {
    let mut o = String::new();
    for run in &r.runs {
        let _ = writeln!(
            o,
            "Findings of run {} ({}, {}):",
            run.run.id,
            run.run.scenario,
            run.trials_summary()
        );
        if run.analysis.findings.is_empty() {
            o.push_str("  (none: no headline number for this run's design)\n");
        }
        for f in &run.analysis.findings {
            let _ = writeln!(o, "  * {f}");
        }
        let w: Vec<&Warning> = run.warnings.iter().collect();
        if !w.is_empty() {
            let _ = writeln!(o, "Warnings ({}):", w.len());
        }
        for g in collapse(&w) {
            if g.collapsed() {
                let _ = writeln!(o, "  ! {}: {} (all in the report)", g.kind, g.line());
            } else {
                for x in &g.items {
                    let _ = writeln!(o, "  ! {}: {}", x.kind, x.message);
                }
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(run_id: i64, kind: &str, message: &str) -> Warning {
        Warning {
            run_id,
            trial_id: None,
            kind: kind.into(),
            message: message.into(),
        }
    }

    #[test]
    fn many_of_a_kind_share_one_line_few_do_not() {
        let mut all: Vec<Warning> = (0..19)
            .map(|i| w(1, "unstable", &format!("unstable configuration c{i}")))
            .collect();
        all.insert(3, w(1, "failed", "trial 4 failed"));
        all.push(w(2, "unstable", "unstable configuration d"));
        let refs: Vec<&Warning> = all.iter().collect();
        let g = collapse(&refs);
        assert_eq!(g.len(), 3);
        assert_eq!((g[0].kind, g[0].items.len()), ("unstable", 19));
        assert!(g[0].collapsed() && !g[1].collapsed() && !g[2].collapsed());
        assert!(
            g[0].line().starts_with("19 unstable configurations"),
            "{}",
            g[0].line()
        );
        assert!(g[0].line().contains("e.g. unstable configuration c0"));
        assert_eq!(g[0].anchor(), "w1-unstable");
    }
}
