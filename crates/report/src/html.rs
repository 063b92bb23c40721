//! The HTML page: one file with inline CSS and SVG that opens offline.
//!
//! Owns: the page layout (header, warnings, figures via `svg`, tables, fits).
//! Must not: load scripts, fonts or anything by URL, or compute what it shows.

use crate::contents::{Report, RunReport, Warning};
use crate::export::{fits_table, run_meta};
use crate::figure::{Figure, Table};
use crate::svg::{escape, render};
use crate::text::collapse;
use std::fmt::Write;

pub(crate) const CSS: &str = "body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:2em}h3{margin-top:1.5em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em;display:block;overflow-x:auto;max-width:100%}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2}dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 12px}
dl.meta dt{font-weight:bold}dl.meta dd{margin:0}
.warn{background:#fff4e5;border-left:4px solid #e67e22;padding:.5em 1em}
.ok{background:#eef8ee;border-left:4px solid #2e7d32;padding:.5em 1em}
.bad{background:#fdecea;border-left:8px solid #c62828;padding:.5em 1em;color:#7f0000}
figure{margin:1em 0}.findings{background:#eef3fb;border-left:4px solid #1f77b4;padding:.5em 1em}
.toc ol{columns:2;font-size:.9em}.nodata{color:#666}
.panels{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:4px}
.panels svg{width:100%;height:auto}figcaption{font-size:.9em;color:#444}pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em}";

/// The whole page.
pub fn page(r: &Report) -> String {
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(o, "<title>fwbench report: {}</title>", escape(&r.source));
    let _ = write!(o, "<style>{CSS}</style></head><body>");
    let _ = write!(
        o,
        "<h1>fwbench report</h1><p>Results file: <code>{}</code>, {} run(s).</p>",
        escape(&r.source),
        r.runs.len()
    );
    let all: Vec<&Warning> = r.warnings().collect();
    warnings(&mut o, &all);
    let mut ids = crate::files::UniqueIds::default();
    for run in &r.runs {
        run_section(&mut o, run, &mut ids);
    }
    warnings_in_full(&mut o, &all);
    o.push_str("</body></html>\n");
    o
}

/// The warnings section (a reassuring line when there are none).
fn warnings(o: &mut String, w: &[&Warning]) {
    o.push_str("<h2 id=\"warnings\">Warnings</h2>");
    if w.is_empty() {
        o.push_str(
            "<p class=\"ok\">No warnings: every trial succeeded, validated and was stable.</p>",
        );
        return;
    }
    // Data-integrity failures first, in red: the numbers of those trials are not to be
    // trusted at all.
    let (bad, rest): (Vec<&Warning>, Vec<&Warning>) =
        w.iter().copied().partition(|x| x.kind == "corrupt");
    if !bad.is_empty() {
        o.push_str("<div class=\"bad\"><p><b>Data integrity failure: received bytes differ from what was sent.</b></p><ul>");
        for x in &bad {
            let _ = write!(o, "<li><b>{}: {}</b></li>", run_kind(x), escape(&x.message));
        }
        o.push_str("</ul></div>");
    }
    if rest.is_empty() {
        return;
    }
    o.push_str("<div class=\"warn\"><ul>");
    for g in collapse(&rest) {
        if g.collapsed() {
            let _ = write!(
                o,
                "<li><b>run {} · {}</b>: {} — <a href=\"#{}\">the list</a></li>",
                g.run_id,
                escape(g.kind),
                escape(&g.line()),
                g.anchor()
            );
            continue;
        }
        for x in g.items {
            let _ = write!(o, "<li><b>{}</b>: {}</li>", run_kind(x), escape(&x.message));
        }
    }
    o.push_str("</ul></div>");
}

/// A warning's run and kind, escaped: `run 3 · corrupt`.
fn run_kind(x: &Warning) -> String {
    format!("run {} · {}", x.run_id, escape(&x.kind))
}

/// The full lists of the warnings said in one line at the top, at the page's end.
fn warnings_in_full(o: &mut String, w: &[&Warning]) {
    let rest: Vec<&Warning> = w.iter().copied().filter(|x| x.kind != "corrupt").collect();
    let groups: Vec<_> = collapse(&rest)
        .into_iter()
        .filter(|g| g.collapsed())
        .collect();
    if groups.is_empty() {
        return;
    }
    o.push_str("<h2>Warnings in full</h2>");
    for g in groups {
        let _ = write!(
            o,
            "<h3 id=\"{}\">run {} · {} ({})</h3><ul>",
            g.anchor(),
            g.run_id,
            escape(g.kind),
            g.items.len()
        );
        for x in g.items {
            let _ = write!(o, "<li>{}</li>", escape(&x.message));
        }
        o.push_str("</ul>");
    }
}

/// One run: its answer (findings), a table of contents, metadata, then figures (small
/// multiples side by side), fits and tables.
fn run_section(o: &mut String, run: &RunReport, ids: &mut crate::files::UniqueIds) {
    let r = &run.run;
    let _ = write!(
        o,
        "<h2 id=\"run-{}\">Run {}: {}</h2>",
        r.id,
        r.id,
        escape(&r.scenario)
    );
    findings(o, run);
    contents(o, run);
    o.push_str("<dl class=\"meta\">");
    for (k, v) in run_meta(run) {
        let _ = write!(o, "<dt>{}</dt><dd>{}</dd>", escape(&k), escape(&v));
    }
    o.push_str("</dl>");
    if let Some(t) = crate::hosts::role_hosts_table(r) {
        table(o, &t);
    }
    parameters(o, run);
    if let Some(text) = &r.scenario_text {
        let _ = write!(
            o,
            "<details><summary>Scenario file</summary><pre>{}</pre></details>",
            escape(text)
        );
    }
    let figs = &run.analysis.figures;
    let mut i = 0;
    while i < figs.len() {
        let _ = write!(o, "<span id=\"r{}-f{i}\"></span>", r.id);
        match &figs[i].group {
            Some(g) => {
                let n = figs[i..]
                    .iter()
                    .take_while(|f| f.group.as_ref() == Some(g))
                    .count();
                let _ = write!(o, "<h3>{}</h3><div class=\"panels\">", escape(g));
                for f in &figs[i..i + n] {
                    figure(o, f, ids);
                }
                o.push_str("</div>");
                i += n;
            }
            None => {
                figure(o, &figs[i], ids);
                i += 1;
            }
        }
    }
    if !run.analysis.fits.is_empty() {
        let _ = write!(o, "<span id=\"r{}-fits\"></span>", r.id);
        table(o, &fits_table(&run.analysis.fits, &run.analysis.left_out));
    }
    for (i, t) in run.analysis.tables.iter().enumerate() {
        let _ = write!(o, "<span id=\"r{}-t{i}\"></span>", r.id);
        table(o, t);
    }
}

/// The run's answer in sentences, first.
fn findings(o: &mut String, run: &RunReport) {
    if run.analysis.findings.is_empty() {
        return;
    }
    o.push_str("<div class=\"findings\"><b>Findings</b><ul>");
    for f in &run.analysis.findings {
        let _ = write!(o, "<li>{}</li>", escape(f));
    }
    o.push_str("</ul></div>");
}

/// A table of contents of the run's figures and tables (links within the page).
fn contents(o: &mut String, run: &RunReport) {
    let id = run.run.id;
    let a = &run.analysis;
    if a.figures.is_empty() && a.tables.is_empty() && a.fits.is_empty() {
        return;
    }
    o.push_str("<nav class=\"toc\"><b>Contents</b><ol>");
    let mut last_group: Option<&String> = None;
    for (i, f) in a.figures.iter().enumerate() {
        if f.group.is_some() && f.group.as_ref() == last_group {
            continue;
        }
        last_group = f.group.as_ref();
        let title = f.group.as_ref().unwrap_or(&f.title);
        let _ = write!(
            o,
            "<li><a href=\"#r{id}-f{i}\">Figure: {}</a></li>",
            escape(title)
        );
    }
    if !a.fits.is_empty() {
        let _ = write!(o, "<li><a href=\"#r{id}-fits\">Table: cost model</a></li>");
    }
    for (i, t) in a.tables.iter().enumerate() {
        let _ = write!(
            o,
            "<li><a href=\"#r{id}-t{i}\">Table: {}</a></li>",
            escape(&t.title)
        );
    }
    o.push_str("</ol></nav>");
}

/// A run of one configuration: its parameters (which the tables leave out, as nothing
/// varies).
fn parameters(o: &mut String, run: &RunReport) {
    let [c] = run.configs.as_slice() else {
        return;
    };
    o.push_str("<h3>Parameters (the run's one configuration)</h3><dl class=\"meta\">");
    let _ = write!(
        o,
        "<dt>workload</dt><dd>{}</dd>",
        escape(c.workload.as_str())
    );
    for (k, v) in &c.flat {
        let _ = write!(o, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
    }
    o.push_str("</dl>");
}

/// A figure with its SVG and notes; its element id is the figure's, made unique in
/// the page (`-2`, `-3`… where a figure id repeats, as in the figure files).
fn figure(o: &mut String, f: &Figure, ids: &mut crate::files::UniqueIds) {
    let id = ids.unique(&f.id);
    if f.no_data() {
        let _ = write!(
            o,
            "<p class=\"nodata\" id=\"{}\"><b>{}</b>: no data (no point, or every value is 0: not measured in this run).</p>",
            escape(&id),
            escape(&f.title)
        );
        return;
    }
    let _ = write!(o, "<figure id=\"{}\">{}", escape(&id), render(f));
    if !f.notes.is_empty() {
        o.push_str("<figcaption><ul>");
        for n in &f.notes {
            let _ = write!(o, "<li>{}</li>", escape(n));
        }
        o.push_str("</ul></figcaption>");
    }
    o.push_str("</figure>");
}

/// Tables longer than this are folded (a `<details>` the reader opens): a sweep of
/// 2000 rule counts would otherwise bury everything after it.
const FOLD_ROWS: usize = 100;

/// A table with a heading (folded when long).
fn table(o: &mut String, t: &Table) {
    let fold = t.rows.len() > FOLD_ROWS;
    if fold {
        let _ = write!(
            o,
            "<details><summary><b>{}</b> ({} rows: click to show)</summary>",
            escape(&t.title),
            t.rows.len()
        );
    }
    table_body(o, t, !fold);
    if fold {
        o.push_str("</details>");
    }
}

/// The table itself, with its heading unless folded.
fn table_body(o: &mut String, t: &Table, heading: bool) {
    if heading {
        let _ = write!(o, "<h3>{}</h3>", escape(&t.title));
    }
    o.push_str("<table><thead><tr>");
    for c in &t.columns {
        let _ = write!(o, "<th>{}</th>", escape(c));
    }
    o.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        o.push_str("<tr>");
        for cell in row {
            let _ = write!(o, "<td>{}</td>", escape(cell));
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table>");
}
