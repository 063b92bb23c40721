//! `report --figures`: every figure of a report as a standalone SVG (well-formed XML in
//! the SVG namespace) and a CSV whose rows are exactly the figure's points.

mod common;
mod recorded;
use common::trial;
use recorded::Record;
use report::files::figure_files;
use serde_json::json;
use std::collections::BTreeMap;
use store::{Headline, NewRun, Store};

/// A flood sweep over rules for two engines, 3 repetitions: enough for figures and fits.
fn fixture(path: &std::path::Path) -> Store {
    let mut s = Store::open(path).unwrap();
    let run = s
        .begin_run(&NewRun {
            started_at: "2026-01-01T00:00:00Z".into(),
            scenario: "figures".into(),
            command: "fwbench run figures.toml".into(),
            ..Default::default()
        })
        .unwrap();
    for engine in ["nft", "iptables-legacy"] {
        let per_rule = if engine == "nft" { 10.0 } else { 5.0 };
        for rules in [0u32, 250, 500, 1000] {
            for rep in 0..3u32 {
                let ns = (1000.0 + per_rule * rules as f64) * [1.0, 1.01, 0.99][rep as usize];
                let params = json!({"workload": "flood", "engine": engine, "rules": rules,
                                    "model": "linear", "seed": rep});
                let h = Headline {
                    received_pps: Some(1e9 / ns),
                    sent_pps: Some(1e9 / ns),
                    loss_ratio: Some(0.0),
                    ..Default::default()
                };
                let key = format!("{engine}-{rules}-{rep}");
                s.record(&trial(run, key, rep, "flood", params, h)).unwrap();
            }
        }
    }
    s
}

/// One RFC 4180 line into its fields (quotes undone).
fn split_csv(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[test]
fn each_figure_is_an_svg_and_a_csv_of_its_points() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixture(&dir.path().join("r.db"));
    let r = report::load(&store, None).unwrap();
    let figures = &r.runs[0].analysis.figures;
    assert!(!figures.is_empty(), "the fixture has figures");
    let files: BTreeMap<String, String> = figure_files(&r)
        .into_iter()
        .map(|f| (f.name, f.text))
        .collect();
    assert_eq!(files.len(), 2 * figures.len() + 1, "{:?}", files.keys());
    let index: Vec<&str> = files["index.csv"].lines().skip(1).collect();
    assert_eq!(index.len(), figures.len());
    for (f, line) in figures.iter().zip(&index) {
        let stem = format!("run1-{}", f.id);
        assert!(line.ends_with(&format!(",{stem}.svg,{stem}.csv")), "{line}");
        let svg = &files[&format!("{stem}.svg")];
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(
            doc.root_element().tag_name().namespace(),
            Some("http://www.w3.org/2000/svg")
        );
        // The CSV: one row per point, in order, numbers exact.
        let csv = &files[&format!("{stem}.csv")];
        let rows: Vec<&str> = csv.lines().skip(1).collect();
        let points: Vec<(&str, &report::figure::Point)> = f
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(move |p| (s.name.as_str(), p)))
            .collect();
        assert_eq!(rows.len(), points.len(), "{stem}");
        for (row, (series, p)) in rows.iter().zip(&points) {
            let cells = split_csv(row);
            assert_eq!(cells[0], *series, "{stem}: {row}");
            assert_eq!(cells[2].parse::<f64>().unwrap(), p.x, "{stem}: {row}");
            assert_eq!(cells[4].parse::<f64>().unwrap(), p.y, "{stem}: {row}");
            match p.ci95 {
                Some(c) => assert_eq!(cells[5].parse::<f64>().unwrap(), c),
                None => assert_eq!(cells[5], ""),
            }
        }
    }
}
