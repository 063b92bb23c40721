//! `fwbench report DB --figures DIR`: the files exist under stable names, one CSV row
//! per point of the figure as the JSON export has it (no root needed).

mod util;

use serde_json::{json, Value};
use store::{Headline, NewRun, Store, TrialRecord};
use util::*;

#[test]
fn figures_dir_holds_an_svg_and_a_csv_per_figure() {
    let (dir, db) = TempDir::with_file("r.db");
    {
        let mut s = Store::open(&db).unwrap();
        let run = s
            .begin_run(&NewRun {
                started_at: "2026-01-01T00:00:00Z".into(),
                scenario: "fig".into(),
                command: "fwbench run fig.toml".into(),
                ..Default::default()
            })
            .unwrap();
        for rules in [0u32, 500, 1000] {
            for rep in 0..2u32 {
                let ns = (1000.0 + 8.0 * rules as f64) * [1.0, 1.02][rep as usize];
                s.insert_trial(&TrialRecord {
                    run_id: run,
                    trial_key: format!("{rules}-{rep}"),
                    rep,
                    workload: "flood".into(),
                    status: "ok".into(),
                    started_at: "2026-01-01T00:00:00Z".into(),
                    finished_at: "2026-01-01T00:00:01Z".into(),
                    params: json!({"workload": "flood", "engine": "nft", "rules": rules,
                                   "seed": rep}),
                    placement: json!({}),
                    headline: Headline {
                        received_pps: Some(1e9 / ns),
                        ..Default::default()
                    },
                    results: json!({}),
                    ..Default::default()
                })
                .unwrap();
            }
        }
    }
    let figs = dir.file("figs");
    // Run in the temporary directory: without -o no report.html appears there.
    let o = std::process::Command::new(bin())
        .args(["report", "r.db", "--figures", "figs"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!dir.file("report.html").exists(), "no report without -o");
    let j: Value = serde_json::from_slice(
        &fwbench(&["report", db.to_str().unwrap(), "-f", "json", "-o", "-"]).stdout,
    )
    .unwrap();
    let figures = j["runs"][0]["figures"].as_array().unwrap();
    assert!(!figures.is_empty());
    for f in figures {
        let stem = format!("run1-{}", f["id"].as_str().unwrap());
        let svg = std::fs::read_to_string(figs.join(format!("{stem}.svg"))).unwrap();
        assert!(svg.starts_with("<?xml") && svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        let csv = std::fs::read_to_string(figs.join(format!("{stem}.csv"))).unwrap();
        let points: usize = f["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["points"].as_array().unwrap().len())
            .sum();
        assert_eq!(csv.lines().count(), points + 1, "{stem}:\n{csv}");
    }
    let index = std::fs::read_to_string(figs.join("index.csv")).unwrap();
    assert_eq!(index.lines().count(), figures.len() + 1);
}
