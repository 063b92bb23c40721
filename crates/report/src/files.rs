//! Figures as files, for papers: each figure of a report as a standalone SVG document
//! and the CSV of the points behind it, under stable names
//! (`run<RUN>-<figure id>.svg` / `.csv`), plus an `index.csv` listing them.
//!
//! Owns: the file names and the two file formats. Must not: write files (the caller
//! does, so this stays pure) or choose figures.

use crate::contents::Report;
use crate::export::csv_field;
use crate::figure::{Figure, Kind};
use std::collections::BTreeSet;
use std::fmt::Write;

/// One file to write: a name (no directories) and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureFile {
    pub name: String,
    pub text: String,
}

/// `a figure/ID` → `a-figure-id`: lower-case letters, digits, `-`, `_` and `.` only.
fn file_stem(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches(['-', '.']).to_string();
    if s.is_empty() {
        "figure".into()
    } else {
        s
    }
}

/// The standalone SVG document of a figure: an XML declaration and the SVG namespace
/// (which the inline form in HTML leaves out).
pub fn standalone_svg(f: &Figure) -> String {
    let inline = crate::svg::render(f);
    let body = inline.replacen("<svg ", "<svg xmlns=\"http://www.w3.org/2000/svg\" ", 1);
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{body}\n")
}

/// The points of a figure, one row each: `series,fit,x,category,y,ci95` (`category`:
/// the bar's category name, empty for line charts; `ci95`: half-width of the 95 % CI,
/// empty when there is none). Numbers in full precision.
pub fn figure_csv(f: &Figure) -> String {
    let mut o = String::from("series,fit,x,category,y,ci95\n");
    for s in &f.series {
        for p in &s.points {
            let category = match f.kind {
                Kind::Bar => f.categories.get(p.x as usize).cloned().unwrap_or_default(),
                Kind::Line => String::new(),
            };
            let _ = writeln!(
                o,
                "{},{},{},{},{},{}",
                csv_field(&s.name),
                s.fit,
                p.x,
                csv_field(&category),
                p.y,
                p.ci95.map(|c| c.to_string()).unwrap_or_default()
            );
        }
    }
    o
}

/// Names made unique in the order they are asked for: a name seen before gets `-2`,
/// `-3`… (figure files, the HTML page's figure ids).
#[derive(Default)]
pub(crate) struct UniqueIds(BTreeSet<String>);

impl UniqueIds {
    pub(crate) fn unique(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut k = 2;
        while !self.0.insert(name.clone()) {
            name = format!("{base}-{k}");
            k += 1;
        }
        name
    }
}

/// Every figure of every run as an SVG and a CSV file, and `index.csv`
/// (`run,figure,title,x_label,y_label,svg,csv`). A figure id that repeats within a run
/// gets `-2`, `-3`… in the order the report shows them.
pub fn figure_files(r: &Report) -> Vec<FigureFile> {
    let mut out = Vec::new();
    let mut index = String::from("run,figure,title,x_label,y_label,svg,csv\n");
    for run in &r.runs {
        let mut seen = UniqueIds::default();
        for f in &run.analysis.figures {
            let stem = seen.unique(&format!("run{}-{}", run.run.id, file_stem(&f.id)));
            let (svg, csv) = (format!("{stem}.svg"), format!("{stem}.csv"));
            let _ = writeln!(
                index,
                "{},{},{},{},{},{svg},{csv}",
                run.run.id,
                csv_field(&f.id),
                csv_field(&f.title),
                csv_field(&f.x_label),
                csv_field(&f.y_label)
            );
            out.push(FigureFile {
                name: svg,
                text: standalone_svg(f),
            });
            out.push(FigureFile {
                name: csv,
                text: figure_csv(f),
            });
        }
    }
    out.push(FigureFile {
        name: "index.csv".into(),
        text: index,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Point, Series};

    fn fig(kind: Kind) -> Figure {
        Figure {
            id: "Cost vs rules/IPv4".into(),
            title: "a < b & \"c\"".into(),
            x_label: "rules".into(),
            y_label: "ns".into(),
            kind,
            series: vec![
                Series {
                    name: "nft, inet".into(),
                    points: vec![
                        Point {
                            x: 0.0,
                            y: 1.5,
                            ci95: Some(0.25),
                        },
                        Point {
                            x: 1.0,
                            y: 2.0,
                            ci95: None,
                        },
                    ],
                    fit: false,
                },
                Series {
                    name: "fit".into(),
                    points: vec![Point {
                        x: 1.0,
                        y: 1.0 / 3.0,
                        ci95: None,
                    }],
                    fit: true,
                },
            ],
            categories: vec!["small".into(), "large".into()],
            markers: vec![],
            spans: vec![],
            overlay: None,
            notes: vec![],
            group: None,
        }
    }

    #[test]
    fn svg_is_a_standalone_xml_document() {
        for kind in [Kind::Line, Kind::Bar] {
            let svg = standalone_svg(&fig(kind));
            let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
            let root = doc.root_element();
            assert_eq!(root.tag_name().name(), "svg");
            assert_eq!(
                root.tag_name().namespace(),
                Some("http://www.w3.org/2000/svg")
            );
            let title = root
                .descendants()
                .find(|n| n.has_tag_name("title"))
                .and_then(|n| n.text());
            assert_eq!(title, Some("a < b & \"c\""));
        }
    }

    #[test]
    fn csv_rows_are_the_points() {
        let csv = figure_csv(&fig(Kind::Bar));
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "series,fit,x,category,y,ci95");
        assert_eq!(lines[1], "\"nft, inet\",false,0,small,1.5,0.25");
        assert_eq!(lines[2], "\"nft, inet\",false,1,large,2,");
        // Full precision: the value reads back exactly.
        let y: f64 = lines[3].split(',').nth(4).unwrap().parse().unwrap();
        assert_eq!(y, 1.0 / 3.0);
        assert_eq!(lines.len(), 4);
        assert_eq!(file_stem("Cost vs rules/IPv4"), "cost-vs-rules-ipv4");
    }
}
