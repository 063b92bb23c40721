//! Runs of the workload language (`fwbench workload FILE`, seed 003's `workload`): one
//! stored trial of workload `worklang` holding every command with its start, duration
//! and exit. The table per command (how often it ran, its mean duration with a 95 % CI
//! over its runs, failures) and a finding per workload file.
//!
//! Owns: reading `results.worklang` and its table and finding.
//! Must not: import `conn`, `throughput` or `analysis`; it reads trials, not configs.

use crate::figure::{mean_ci, num, Analysis, Table};
use crate::model::Trial;
use crate::stats::Summary;
use std::collections::BTreeMap;

/// The table and findings of every workload-language trial of a run.
pub(crate) fn analyse(trials: &[Trial], a: &mut Analysis) {
    // A workload-language trial is the one that stored its commands.
    for (t, w) in trials
        .iter()
        .filter_map(|t| Some((t, t.stored.worklang.as_ref()?)))
    {
        let ran = &w.ran;
        // Per command (its argv as one line), in order of first appearance.
        let mut order: Vec<String> = Vec::new();
        // Per command: the durations of its runs that succeeded, its runs, its failures.
        let mut by: BTreeMap<String, (Vec<f64>, usize, usize)> = BTreeMap::new();
        for r in ran {
            let line = results::stored::command_line(&r.argv);
            let e = by.entry(line.clone()).or_insert_with(|| {
                order.push(line.clone());
                (Vec::new(), 0, 0)
            });
            e.1 += 1;
            // A failed run's time is the time to fail: not the command's duration.
            match (r.exit, r.duration_s) {
                (Some(0), Some(d)) => e.0.push(d * 1e3),
                (Some(0), None) => {}
                _ => e.2 += 1,
            }
        }
        let file = t.p.file.as_deref().unwrap_or("-");
        let rows: Vec<Vec<String>> = order
            .iter()
            .map(|line| {
                let (d, runs, failed) = &by[line];
                let s = Summary::of(d);
                vec![
                    line.clone(),
                    runs.to_string(),
                    s.map(|s| mean_ci(s.mean, s.ci95))
                        .unwrap_or_else(|| "-".into()),
                    failed.to_string(),
                ]
            })
            .collect();
        let total = w.total_s.unwrap_or(0.0);
        let failed = w.failed.unwrap_or(0);
        // One duration stands for the file only where it runs one command: a mean over
        // different commands is no command's time.
        let per = match by.values().collect::<Vec<_>>().as_slice() {
            [(d, _, _)] => Summary::of(d)
                .map(|s| match s.ci95 {
                    Some(_) => format!(
                        "; the command takes {} ms (95 % CI over its {} runs that \
                         succeeded)",
                        mean_ci(s.mean, s.ci95),
                        s.n
                    ),
                    None => format!(
                        "; the command took {} ms (one run that succeeded: no CI)",
                        num(s.mean)
                    ),
                })
                .unwrap_or_default(),
            _ => String::new(),
        };
        a.findings.push(format!(
            "Workload {file}: {} commands in {} s, {failed} failed{per}.",
            ran.len(),
            num(total)
        ));
        a.tables.push(Table {
            title: format!("Workload language: the commands of {file}"),
            columns: vec![
                "command".into(),
                "runs".into(),
                "duration of the runs that succeeded, ms (mean ± 95 % CI over them)".into(),
                "failed".into(),
            ],
            rows,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::Value;

    #[test]
    fn commands_are_tabled_with_their_durations_and_failures() {
        let ran: Vec<Value> = (0..4)
            .map(|i| {
                json!({"argv": ["curl", "-s", "http://198.19.0.2/"], "start_s": i as f64,
                       "duration_s": 0.010 + 0.001 * i as f64, "exit": 0})
            })
            .chain([json!({"argv": ["false"], "start_s": 5.0, "duration_s": 0.001, "exit": 1})])
            .collect();
        let t = Trial::new(store::TrialRow {
            trial_key: "worklang".into(),
            status: "failed".into(),
            params: json!({"workload": "worklang", "file": "w.txt"}),
            results: json!({"worklang": {"total_s": 5.5, "commands": 5, "failed": 1, "ran": ran}}),
            ..crate::testing::trial_row(1, "worklang")
        });
        let mut a = Analysis::default();
        analyse(&[t], &mut a);
        assert_eq!(a.tables[0].rows.len(), 2);
        assert_eq!(a.tables[0].rows[0][1], "4");
        assert!(
            a.tables[0].rows[0][2].starts_with("11.5 ± "),
            "{:?}",
            a.tables[0].rows[0]
        );
        assert_eq!(a.tables[0].rows[1][3], "1");
        // A failed run's time is no duration; two commands have no one duration.
        assert_eq!(a.tables[0].rows[1][1..], ["1", "-", "1"]);
        assert_eq!(
            a.findings[0],
            "Workload w.txt: 5 commands in 5.5 s, 1 failed."
        );
    }

    /// A file of one command states its duration, over the runs that succeeded.
    #[test]
    fn one_commands_duration_is_over_its_runs_that_succeeded() {
        let ran: Vec<Value> = [(0.010, 0), (0.012, 0), (0.011, 0), (0.500, 1)]
            .iter()
            .map(|(d, exit)| json!({"argv": ["sh", "-c", "exit 0"], "duration_s": d, "exit": exit}))
            .collect();
        let t = Trial::new(store::TrialRow {
            trial_key: "worklang".into(),
            status: "failed".into(),
            params: json!({"workload": "worklang", "file": "w.txt"}),
            results: json!({"worklang": {"total_s": 1.0, "failed": 1, "ran": ran}}),
            ..crate::testing::trial_row(1, "worklang")
        });
        let mut a = Analysis::default();
        analyse(&[t], &mut a);
        assert_eq!(a.tables[0].rows[0][0], "sh -c 'exit 0'");
        assert!(
            a.tables[0].rows[0][2].starts_with("11.0 ± "),
            "{:?}",
            a.tables[0].rows
        );
        assert!(
            a.findings[0].starts_with(
                "Workload w.txt: 4 commands in 1 s, 1 failed; the command takes 11.0 ± "
            ) && a.findings[0].ends_with("ms (95 % CI over its 3 runs that succeeded)."),
            "{}",
            a.findings[0]
        );
        assert_eq!(a.tables[0].rows[0][1], "4", "every run, failed or not");
        // One run that succeeded has a time, and no CI to claim.
        let once = |exit: i64| {
            let ran = vec![json!({"argv": ["true"], "duration_s": 0.002, "exit": exit})];
            let t = Trial::new(store::TrialRow {
                trial_key: "worklang".into(),
                params: json!({"workload": "worklang", "file": "w.txt"}),
                results: json!({"worklang": {"total_s": 0.01, "failed": u64::from(exit != 0), "ran": ran}}),
                ..crate::testing::trial_row(1, "worklang")
            });
            let mut a = Analysis::default();
            analyse(&[t], &mut a);
            a.findings[0].clone()
        };
        assert_eq!(
            once(0),
            "Workload w.txt: 1 commands in 0.01 s, 0 failed; the command took 2 ms (one run \
             that succeeded: no CI)."
        );
        // Its one run failed: no duration stated.
        assert_eq!(once(1), "Workload w.txt: 1 commands in 0.01 s, 1 failed.");
    }
}
