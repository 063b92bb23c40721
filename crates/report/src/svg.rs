//! Figures drawn as inline SVG: line charts with CI whiskers and bar charts, shaded
//! spans, overlays of many thin lines under a bold one, and marker and span labels set
//! in rows so that no two overlap. No scripts, fonts or links; the same figure always
//! gives the same bytes.
//!
//! Owns: layout, axes, ticks, palette and the SVG text of a [`Figure`].
//! Must not: choose figures or compute statistics; it draws the `figure` types and
//! imports nothing else from this crate.

use crate::figure::{Figure, Kind, Point, Series, Span, DENSE_POINTS};
use std::fmt::Write;

const W: f64 = 720.0;
const PLOT_H: f64 = 300.0;
/// Longest bar category label shown (characters).
const CATEGORY_CHARS: usize = 40;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 40.0;
/// Space under the plot for tick labels and the x label.
const BELOW: f64 = 56.0;
const LEGEND_ROW: f64 = 16.0;
/// Height of one row of marker and span labels above the plot.
const LABEL_ROW: f64 = 13.0;
/// Width of a label character at the figure's font size, a little generous (pixels).
const LABEL_CHAR: f64 = 6.2;
/// Width of a title character (14 px bold), px, and the height of a title line.
const TITLE_CHAR: f64 = 8.0;
const TITLE_ROW: f64 = 17.0;
/// The thin lines of an overlay, and the width of its bold one.
const OVERLAY_THIN: &str = "#7f7f7f";
const OVERLAY_BOLD_WIDTH: &str = "2.5";
const OVERLAY_THIN_WIDTH: &str = "0.75";
const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Escape text for XML content and attribute values.
/// `text` in lines of at most `width` characters, broken at spaces (a longer word
/// stands alone on its line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A "nice" step (1, 2 or 5 × 10^k) giving about `target` intervals over `span`.
pub fn nice_step(span: f64, target: usize) -> f64 {
    if !(span > 0.0 && span.is_finite()) {
        return 1.0;
    }
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Axis range widened to nice multiples of the step, and the tick values.
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (0.0, 1.0)
    } else {
        (lo - lo.abs() * 0.5, hi + hi.abs() * 0.5)
    };
    let step = nice_step(hi - lo, target);
    let (a, b) = ((lo / step).floor() * step, (hi / step).ceil() * step);
    let n = ((b - a) / step).round() as usize;
    let ticks = (0..=n).map(|i| a + i as f64 * step).collect();
    (a, b, ticks)
}

/// Tick label: SI-suffixed above 10 000 (12k, 1.5M), trimmed decimals below.
pub fn tick_label(v: f64, step: f64) -> String {
    let (div, suffix) = if v.abs() >= 1e9 || step >= 1e9 {
        (1e9, "G")
    } else if v.abs() >= 1e6 || step >= 1e6 {
        (1e6, "M")
    } else if v.abs() >= 1e4 || step >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let (v, step) = (v / div, step / div);
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-')
        .trim_matches(|c| c == '0' || c == '.')
        .is_empty()
    {
        return "0".into();
    }
    format!("{s}{suffix}")
}

/// Coordinate text with fixed precision (deterministic output).
fn c(v: f64) -> String {
    format!("{v:.1}")
}

/// Maps data to pixels.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    /// Pixel y of the plot's top (below the title and the rows of labels).
    top: f64,
}

impl Frame {
    /// Pixel x of a data x.
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT)
    }
    /// Pixel y of a data y.
    fn py(&self, y: f64) -> f64 {
        self.top + PLOT_H - (y - self.y0) / (self.y1 - self.y0) * PLOT_H
    }
    /// Pixel y of the plot's bottom.
    fn bottom(&self) -> f64 {
        self.top + PLOT_H
    }
}

/// A marker's or span's label: its text centred at pixel `x`, in label row `row`
/// (0: just above the plot, 1 above that …).
#[derive(Debug, Clone, PartialEq)]
struct Label {
    x: f64,
    row: usize,
    text: String,
}

/// Where the labels of `f`'s spans (at the middle of their visible part) and markers
/// go: each kept inside the figure, in the lowest row where it overlaps no label
/// already placed, left to right.
fn place_labels(f: &Figure, fr: &Frame) -> Vec<Label> {
    let (l, r) = (LEFT, W - RIGHT);
    let clip = |x: f64| x.clamp(l, r);
    let mut wanted: Vec<(f64, String)> = f
        .spans
        .iter()
        .map(|s| {
            let (a, b) = (clip(fr.px(s.from)), clip(fr.px(s.to)));
            ((a + b) / 2.0, s.text.clone())
        })
        .chain(f.markers.iter().map(|m| (clip(fr.px(m.x)), m.text.clone())))
        .collect();
    wanted.sort_by(|a, b| a.0.total_cmp(&b.0));
    // The right edge of the last label in each row.
    let mut rows: Vec<f64> = vec![];
    let mut out = vec![];
    for (x, text) in wanted {
        let w = text.chars().count() as f64 * LABEL_CHAR;
        let x = x.clamp(w / 2.0 + 2.0, (W - w / 2.0 - 2.0).max(w / 2.0 + 2.0));
        let (left, right) = (x - w / 2.0, x + w / 2.0);
        let row = match rows.iter().position(|end| *end + 4.0 <= left) {
            Some(i) => i,
            None => {
                rows.push(f64::NEG_INFINITY);
                rows.len() - 1
            }
        };
        rows[row] = right;
        out.push(Label { x, row, text });
    }
    out
}

/// Draw a figure as one `<svg>` element for inlining in HTML5 (which needs no `xmlns`,
/// so the output holds no URL at all).
pub fn render(f: &Figure) -> String {
    // Line charts keep their empty series for styling (skipped when drawing), so a
    // series keeps its colour in every panel of small multiples whichever are empty.
    let drawn: Vec<&Series> = f
        .series
        .iter()
        .filter(|s| f.kind == Kind::Line || !s.points.is_empty())
        .collect();
    let shown = drawn.iter().filter(|s| !s.points.is_empty()).count();
    let legend_rows = match (f.kind, &f.overlay) {
        (Kind::Bar, _) if shown <= 1 => 0,
        (Kind::Line, Some(bold)) => overlay_rows(&drawn, bold).len(),
        _ => shown,
    };
    let slant = slant(f);
    let (xr, yr) = ranges(f, &drawn);
    let (x0, x1, xt) = match f.kind {
        Kind::Line => nice_ticks(xr.0, xr.1, 8),
        Kind::Bar => (-0.5, f.categories.len().max(1) as f64 - 0.5, vec![]),
    };
    let (y0, y1, yt) = nice_ticks(yr.0, yr.1, 6);
    let mut fr = Frame {
        x0,
        x1,
        y0,
        y1,
        top: TOP,
    };
    let labels = place_labels(f, &fr);
    // One label row fits between the title and the plot; each more widens the gap.
    let label_rows = labels.iter().map(|l| l.row + 1).max().unwrap_or(0);
    let title = wrap(&f.title, ((W - 16.0) / TITLE_CHAR) as usize);
    fr.top = TOP
        + label_rows.saturating_sub(1) as f64 * LABEL_ROW
        + title.len().saturating_sub(1) as f64 * TITLE_ROW;
    let h = fr.bottom() + BELOW + slant + legend_rows as f64 * LEGEND_ROW + 8.0;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" font-family="sans-serif" font-size="11">"#,
        w = W,
        h = c(h)
    );
    let _ = write!(o, "<title>{}</title>", escape(&f.title));
    let _ = write!(
        o,
        r#"<text y="20" text-anchor="middle" font-size="14" font-weight="bold">"#
    );
    for (i, line) in title.iter().enumerate() {
        let dy = if i == 0 { 0.0 } else { TITLE_ROW };
        let _ = write!(
            o,
            r#"<tspan x="{}" dy="{}">{}</tspan>"#,
            c(W / 2.0),
            c(dy),
            escape(line)
        );
    }
    o.push_str("</text>");
    if f.kind == Kind::Line {
        spans(&mut o, &f.spans, &fr);
    }
    axes(&mut o, f, &fr, &xt, &yt);
    match (f.kind, &f.overlay) {
        (Kind::Line, Some(bold)) => overlay(&mut o, &fr, &drawn, bold),
        (Kind::Line, None) => lines(&mut o, &fr, &drawn),
        (Kind::Bar, _) => bars(&mut o, f, &fr, &drawn),
    }
    markers(&mut o, f, &fr, &labels);
    let below = fr.bottom() + BELOW + slant;
    match (f.kind, &f.overlay) {
        (Kind::Line, Some(bold)) => overlay_legend(&mut o, &drawn, bold, below),
        _ if legend_rows > 0 => legend(&mut o, &drawn, below),
        _ => {}
    }
    o.push_str("</svg>");
    o
}

/// Room under the axis for bar categories, written at a slant (the longest's).
fn slant(f: &Figure) -> f64 {
    if f.kind != Kind::Bar {
        return 0.0;
    }
    f.categories
        .iter()
        .map(|c| c.chars().count().min(CATEGORY_CHARS))
        .max()
        .unwrap_or(0) as f64
        * 3.6
}

/// Data ranges: x over points, y over points ± CI, always including y = 0.
fn ranges(f: &Figure, drawn: &[&Series]) -> ((f64, f64), (f64, f64)) {
    let pts = || drawn.iter().flat_map(|s| s.points.iter());
    let fold = |it: &mut dyn Iterator<Item = f64>| {
        it.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        })
    };
    let xr = fold(&mut pts().map(|p| p.x));
    // Quantities that cannot be negative (every mean ≥ 0) keep the axis at 0; their
    // whiskers are cut there.
    let nonneg = pts().all(|p| p.y >= 0.0);
    let ylo = fold(&mut pts().map(|p| {
        let lo = p.y - p.ci95.unwrap_or(0.0);
        if nonneg {
            lo.max(0.0)
        } else {
            lo
        }
    }));
    // A dense series' band does not stretch the axis (one noisy point of 2000 would
    // flatten every line); the band is clipped to the frame instead.
    let yhi = fold(&mut drawn.iter().flat_map(|s| {
        let dense = !s.fit && s.points.len() > DENSE_POINTS;
        s.points
            .iter()
            .map(move |p| p.y + if dense { 0.0 } else { p.ci95.unwrap_or(0.0) })
    }));
    let xr = if xr.0.is_finite() { xr } else { (0.0, 1.0) };
    let yr = (ylo.0.min(0.0), yhi.1.max(0.0));
    let yr = if yr.0.is_finite() && yr.1.is_finite() {
        yr
    } else {
        (0.0, 1.0)
    };
    let _ = f;
    (xr, yr)
}

/// Plot frame, grid, ticks and axis labels.
fn axes(o: &mut String, f: &Figure, fr: &Frame, xt: &[f64], yt: &[f64]) {
    let (l, r, t, b) = (LEFT, W - RIGHT, fr.top, fr.bottom());
    let ystep = if yt.len() > 1 { yt[1] - yt[0] } else { 1.0 };
    for y in yt {
        let py = c(fr.py(*y));
        let _ = write!(
            o,
            r##"<line x1="{}" y1="{py}" x2="{}" y2="{py}" stroke="#ddd"/>"##,
            c(l),
            c(r)
        );
        let _ = write!(
            o,
            r#"<text x="{}" y="{py}" text-anchor="end" dy="4">{}</text>"#,
            c(l - 6.0),
            tick_label(*y, ystep)
        );
    }
    let xstep = if xt.len() > 1 { xt[1] - xt[0] } else { 1.0 };
    for x in xt {
        let px = c(fr.px(*x));
        let _ = write!(
            o,
            r##"<line x1="{px}" y1="{}" x2="{px}" y2="{}" stroke="#000"/>"##,
            c(b),
            c(b + 5.0)
        );
        let _ = write!(
            o,
            r#"<text x="{px}" y="{}" text-anchor="middle">{}</text>"#,
            c(b + 17.0),
            tick_label(*x, xstep)
        );
    }
    if f.kind == Kind::Bar {
        for (i, cat) in f.categories.iter().enumerate() {
            let px = c(fr.px(i as f64));
            let short: String = cat.chars().take(CATEGORY_CHARS).collect();
            let _ = write!(
                o,
                r#"<text transform="translate({px} {}) rotate(-35)" text-anchor="end">{}</text>"#,
                c(b + 12.0),
                escape(&short)
            );
        }
    }
    let _ = write!(
        o,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#000"/>"##,
        c(l),
        c(t),
        c(r - l),
        c(b - t)
    );
    let _ = write!(
        o,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        c((l + r) / 2.0),
        // Under the slanted bar categories, if any.
        c(b + 40.0 + slant(f)),
        escape(&f.x_label)
    );
    let _ = write!(
        o,
        r#"<text transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        c((t + b) / 2.0),
        escape(&f.y_label)
    );
}

/// Whisker from y − ci to y + ci at pixel x.
fn whisker(o: &mut String, fr: &Frame, px: f64, p: &Point, color: &str) {
    let Some(ci) = p.ci95.filter(|c| *c > 0.0) else {
        return;
    };
    let low = if p.y >= 0.0 {
        (p.y - ci).max(0.0)
    } else {
        p.y - ci
    };
    let (a, b) = (c(fr.py(low)), c(fr.py(p.y + ci)));
    let _ = write!(
        o,
        r#"<line x1="{x}" y1="{a}" x2="{x}" y2="{b}" stroke="{color}"/>"#,
        x = c(px)
    );
    for y in [&a, &b] {
        let _ = write!(
            o,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{color}"/>"#,
            c(px - 3.0),
            c(px + 3.0)
        );
    }
}

/// Distinct colours before the line styles change: with more series than this, the
/// colours repeat with another dash pattern, so no two series look alike.
const COLOURS: usize = 8;

/// Dash patterns of the series beyond the first [`COLOURS`] (solid, then these).
const DASHES: [&str; 4] = ["", "7 3", "2 2", "9 3 2 3"];

/// Index of the i-th series among the styled ones: a fit series (`fit: NAME`) takes
/// that of NAME; other fit series do not count.
fn style_index(drawn: &[&Series], i: usize) -> usize {
    let s = drawn[i];
    let base = s
        .name
        .strip_prefix("fit: ")
        .filter(|_| s.fit)
        .and_then(|n| drawn.iter().position(|d| !d.fit && d.name == n));
    let j = base.unwrap_or(i);
    drawn[..j].iter().filter(|d| !d.fit).count()
}

/// Colour of the i-th series (see [`style_index`]).
fn color(drawn: &[&Series], i: usize) -> &'static str {
    let n = drawn.iter().filter(|d| !d.fit).count();
    let k = style_index(drawn, i);
    if n <= PALETTE.len() {
        PALETTE[k % PALETTE.len()]
    } else {
        PALETTE[k % COLOURS]
    }
}

/// The dash attribute of the i-th series: fits dashed; with more series than the
/// palette, each round of [`COLOURS`] colours gets its own pattern.
fn dash(drawn: &[&Series], i: usize) -> String {
    if drawn[i].fit {
        return r#" stroke-dasharray="6 4""#.into();
    }
    let n = drawn.iter().filter(|d| !d.fit).count();
    let k = style_index(drawn, i);
    match DASHES[(k / COLOURS) % DASHES.len()] {
        p if n > PALETTE.len() && !p.is_empty() => format!(r#" stroke-dasharray="{p}""#),
        _ => String::new(),
    }
}

/// Polylines with point markers and whiskers; fit series dashed without markers;
/// series of more than [`DENSE_POINTS`] points as a thin line in a CI band, drawn
/// first so that the markers of sparser series stay visible on top.
fn lines(o: &mut String, fr: &Frame, drawn: &[&Series]) {
    let is_dense = |s: &Series| !s.fit && s.points.len() > DENSE_POINTS;
    for (i, s) in drawn.iter().enumerate().filter(|(_, s)| is_dense(s)) {
        dense(o, fr, s, color(drawn, i));
    }
    for (i, s) in drawn.iter().enumerate() {
        let color = color(drawn, i);
        if is_dense(s) || s.points.is_empty() {
            continue;
        }
        let path: Vec<String> = s
            .points
            .iter()
            .map(|p| format!("{},{}", c(fr.px(p.x)), c(fr.py(p.y))))
            .collect();
        let dash = dash(drawn, i);
        let _ = write!(
            o,
            r#"<polyline fill="none" stroke="{color}" stroke-width="1.5"{dash} points="{}"/>"#,
            path.join(" ")
        );
        if s.fit {
            continue;
        }
        for p in &s.points {
            whisker(o, fr, fr.px(p.x), p, color);
            let _ = write!(
                o,
                r#"<circle cx="{}" cy="{}" r="3" fill="{color}"/>"#,
                c(fr.px(p.x)),
                c(fr.py(p.y))
            );
        }
    }
}

/// A dense series: the band between the CI bounds (where there are CIs), then the
/// line of means, without markers.
fn dense(o: &mut String, fr: &Frame, s: &Series, color: &str) {
    let xy = |x: f64, y: f64| format!("{},{}", c(fr.px(x)), c(fr.py(y.min(fr.y1))));
    if s.points.iter().any(|p| p.ci95.is_some_and(|c| c > 0.0)) {
        let nonneg = s.points.iter().all(|p| p.y >= 0.0);
        let ci = |p: &Point| p.ci95.unwrap_or(0.0);
        let upper = s.points.iter().map(|p| xy(p.x, p.y + ci(p)));
        let lower = s.points.iter().rev().map(|p| {
            let lo = p.y - ci(p);
            xy(p.x, if nonneg { lo.max(0.0) } else { lo })
        });
        let band: Vec<String> = upper.chain(lower).collect();
        let _ = write!(
            o,
            r#"<polygon fill="{color}" fill-opacity="0.2" stroke="none" points="{}"/>"#,
            band.join(" ")
        );
    }
    let path: Vec<String> = s.points.iter().map(|p| xy(p.x, p.y)).collect();
    let _ = write!(
        o,
        r#"<polyline fill="none" stroke="{color}" stroke-width="1" points="{}"/>"#,
        path.join(" ")
    );
}

/// Grouped bars: one band per category, one bar per series.
fn bars(o: &mut String, f: &Figure, fr: &Frame, drawn: &[&Series]) {
    let band = (W - LEFT - RIGHT) / f.categories.len().max(1) as f64;
    let bw = band * 0.8 / drawn.len().max(1) as f64;
    for (i, s) in drawn.iter().enumerate() {
        let color = color(drawn, i);
        // Beyond the palette: an outline in the series' dash pattern tells bars apart.
        let outline = match dash(drawn, i) {
            d if d.is_empty() => String::new(),
            d => format!(r##" stroke="#000" stroke-width="1.5"{d}"##),
        };
        for p in &s.points {
            let left = fr.px(p.x) - band * 0.4 + i as f64 * bw;
            let (top, base) = (fr.py(p.y.max(0.0)), fr.py(p.y.min(0.0)));
            let _ = write!(
                o,
                r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{color}"{outline}/>"#,
                c(left),
                c(top),
                c(bw),
                c(base - top)
            );
            whisker(o, fr, left + bw / 2.0, p, "#000");
        }
    }
}

/// Vertical dashed markers, then the labels of the markers and spans in their rows.
fn markers(o: &mut String, f: &Figure, fr: &Frame, labels: &[Label]) {
    for m in &f.markers {
        let px = c(fr.px(m.x));
        let _ = write!(
            o,
            r##"<line x1="{px}" y1="{}" x2="{px}" y2="{}" stroke="#555" stroke-dasharray="3 3"/>"##,
            c(fr.top),
            c(fr.bottom())
        );
    }
    for l in labels {
        let _ = write!(
            o,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            c(l.x),
            c(fr.top - 4.0 - l.row as f64 * LABEL_ROW),
            escape(&l.text)
        );
    }
}

/// Translucent bands over the plot's height, each clipped to the plot (drawn first:
/// grid and lines stay visible through them).
fn spans(o: &mut String, spans: &[Span], fr: &Frame) {
    for s in spans {
        let (a, b) = (fr.px(s.from.min(s.to)), fr.px(s.from.max(s.to)));
        let (a, b) = (a.max(LEFT), b.min(W - RIGHT));
        if b < a {
            continue;
        }
        let _ = write!(
            o,
            r##"<rect class="span" x="{}" y="{}" width="{}" height="{}" fill="#7f7f7f" fill-opacity="0.2"/>"##,
            c(a),
            c(fr.top),
            // A span of no width (a commit shorter than a pixel) stays visible.
            c((b - a).max(1.0)),
            c(PLOT_H)
        );
    }
}

/// An overlay: every series but `bold` as a thin grey line, then `bold` on top.
fn overlay(o: &mut String, fr: &Frame, drawn: &[&Series], bold: &str) {
    let path = |s: &Series| -> String {
        let p: Vec<String> = s
            .points
            .iter()
            .map(|p| format!("{},{}", c(fr.px(p.x)), c(fr.py(p.y))))
            .collect();
        p.join(" ")
    };
    for s in drawn
        .iter()
        .filter(|s| s.name != bold && !s.points.is_empty())
    {
        let _ = write!(
            o,
            r#"<polyline fill="none" stroke="{OVERLAY_THIN}" stroke-opacity="0.6" stroke-width="{OVERLAY_THIN_WIDTH}" points="{}"/>"#,
            path(s)
        );
    }
    for s in drawn
        .iter()
        .filter(|s| s.name == bold && !s.points.is_empty())
    {
        let _ = write!(
            o,
            r#"<polyline fill="none" stroke="{}" stroke-width="{OVERLAY_BOLD_WIDTH}" points="{}"/>"#,
            PALETTE[0],
            path(s)
        );
    }
}

/// An overlay's legend rows (colour, width, text): the bold line by its name, then the
/// thin ones in one row, each only where drawn.
fn overlay_rows(drawn: &[&Series], bold: &str) -> Vec<(&'static str, &'static str, String)> {
    let shown = |s: &&&Series| !s.points.is_empty();
    let thin = drawn
        .iter()
        .filter(shown)
        .filter(|s| s.name != bold)
        .count();
    let mut rows = vec![];
    if drawn.iter().filter(shown).any(|s| s.name == bold) {
        rows.push((PALETTE[0], OVERLAY_BOLD_WIDTH, bold.to_string()));
    }
    if thin > 0 {
        let each = format!("{thin} thin lines, one each");
        rows.push((OVERLAY_THIN, OVERLAY_THIN_WIDTH, each));
    }
    rows
}

/// An overlay's legend: the bold line by its name, the thin ones in one row.
fn overlay_legend(o: &mut String, drawn: &[&Series], bold: &str, top: f64) {
    for (row, (color, width, text)) in overlay_rows(drawn, bold).iter().enumerate() {
        let style = format!(r#"stroke="{color}" stroke-width="{width}""#);
        legend_row(o, top, row, &style, text);
    }
}

/// One legend row per series under the chart.
fn legend(o: &mut String, drawn: &[&Series], top: f64) {
    let rows = drawn
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.points.is_empty());
    for (row, (i, s)) in rows.enumerate() {
        let style = format!(
            r#"stroke="{}" stroke-width="2"{}"#,
            color(drawn, i),
            dash(drawn, i)
        );
        legend_row(o, top, row, &style, &s.name);
    }
}

/// Legend row `row` under `top`: a short line drawn in `style` (its attributes), then
/// `text`.
fn legend_row(o: &mut String, top: f64, row: usize, style: &str, text: &str) {
    let y = top + row as f64 * LEGEND_ROW + 8.0;
    let _ = write!(
        o,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" {style}/>"#,
        c(LEFT),
        c(y),
        c(LEFT + 24.0),
        c(y)
    );
    let _ = write!(
        o,
        r#"<text x="{}" y="{}" dy="4">{}</text>"#,
        c(LEFT + 30.0),
        c(y),
        escape(text)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks_are_round() {
        let (a, b, t) = nice_ticks(0.0, 9.3, 6);
        assert_eq!((a, b), (0.0, 10.0));
        assert_eq!(t, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(nice_step(1234.0, 5), 500.0);
        assert_eq!(tick_label(1.5e6, 5e5), "1.5M");
        assert_eq!(tick_label(20000.0, 5000.0), "20k");
        assert_eq!(tick_label(0.25, 0.05), "0.25");
        assert_eq!(tick_label(0.0, 2e5), "0");
        let (_, _, t) = nice_ticks(5.0, 5.0, 6);
        assert!(t.len() >= 2);
    }

    #[test]
    fn a_series_keeps_its_colour_when_another_is_empty() {
        let pts = vec![
            Point {
                x: 0.0,
                y: 1.0,
                ci95: None,
            },
            Point {
                x: 1.0,
                y: 2.0,
                ci95: None,
            },
        ];
        let series = |empty_first: bool| {
            vec![
                Series {
                    name: "user".into(),
                    points: if empty_first { vec![] } else { pts.clone() },
                    fit: false,
                },
                Series {
                    name: "idle".into(),
                    points: pts.clone(),
                    fit: false,
                },
            ]
        };
        let idle = PALETTE[1];
        for empty_first in [false, true] {
            let f = Figure::line("p", "panel", ("x", "y"), series(empty_first));
            let svg = render(&f);
            assert!(
                svg.contains(&format!("stroke=\"{idle}\" stroke-width=\"1.5\"")),
                "{svg}"
            );
            // The empty one has no legend row.
            assert_eq!(svg.contains(">user</text>"), !empty_first);
        }
    }

    #[test]
    fn many_series_never_share_a_style() {
        let series: Vec<Series> = (0..20)
            .map(|i| Series {
                name: format!("s{i}"),
                points: vec![
                    Point {
                        x: 0.0,
                        y: i as f64,
                        ci95: None,
                    },
                    Point {
                        x: 1.0,
                        y: 1.0,
                        ci95: None,
                    },
                ],
                fit: false,
            })
            .collect();
        let drawn: Vec<&Series> = series.iter().collect();
        let styles: std::collections::BTreeSet<(String, String)> = (0..drawn.len())
            .map(|i| (color(&drawn, i).to_string(), dash(&drawn, i)))
            .collect();
        assert_eq!(styles.len(), 20);
        // Up to the palette's size: colours alone, all solid.
        let few: Vec<&Series> = series.iter().take(10).collect();
        assert!((0..10).all(|i| dash(&few, i).is_empty()));
        let colours: std::collections::BTreeSet<&str> = (0..10).map(|i| color(&few, i)).collect();
        assert_eq!(colours.len(), 10);
    }

    /// One series named "s" (not a fit).
    fn one_series(points: Vec<Point>) -> Vec<Series> {
        vec![Series {
            name: "s".into(),
            points,
            fit: false,
        }]
    }

    #[test]
    fn render_is_deterministic_and_escaped() {
        let points = vec![
            Point {
                x: 1.0,
                y: 2.0,
                ci95: Some(0.5),
            },
            Point {
                x: 2.0,
                y: 3.0,
                ci95: None,
            },
        ];
        let f = Figure::line("t", "a < b & c", ("x", "y"), one_series(points));
        let s = render(&f);
        assert_eq!(s, render(&f));
        assert!(s.contains("a &lt; b &amp; c"));
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        // Sparse: a marker per point and a whisker (3 lines) per point with a CI.
        assert_eq!(s.matches("<circle").count(), 2);
        assert_eq!(s.matches(r##"stroke="#1f77b4"/>"##).count(), 3);
        assert!(!s.contains("<polygon"));
    }

    #[test]
    fn dense_series_is_a_band_without_markers_or_whiskers() {
        let points: Vec<Point> = (0..=2000)
            .map(|i| Point {
                x: i as f64,
                y: 1000.0 + (i % 7) as f64,
                ci95: Some(5.0),
            })
            .collect();
        let f = Figure::line("dense", "dense", ("rules", "ms"), one_series(points));
        let s = render(&f);
        assert_eq!(s.matches("<circle").count(), 0);
        assert_eq!(s.matches(r##"stroke="#1f77b4"/>"##).count(), 0);
        assert_eq!(s.matches("<polygon").count(), 1);
        // Band: 2001 upper and 2001 lower corners.
        let band = s.split("<polygon").nth(1).unwrap();
        let band = &band[..band.find("/>").unwrap()];
        assert_eq!(band.matches(',').count(), 2 * 2001);
        // One wild CI (a download that stalled) neither stretches the axis nor leaves
        // the frame: the y axis still ends near the means, the band is clipped.
        let mut g = f.clone();
        g.series[0].points[10].ci95 = Some(1e6);
        let s = render(&g);
        assert_eq!(axis_max(&s), axis_max(&render(&f)));
        let band = s.split("<polygon").nth(1).unwrap();
        let band = &band[..band.find("/>").unwrap()];
        assert!(band
            .split_whitespace()
            .filter_map(|xy| xy.split(',').nth(1)?.trim_matches('"').parse::<f64>().ok())
            .all(|y| y >= TOP - 0.01));
    }

    #[test]
    fn a_bar_charts_x_label_stands_under_its_slanted_categories() {
        let one = Point {
            x: 0.0,
            y: 1.0,
            ci95: None,
        };
        let mut f = Figure::line(
            "b",
            "bars",
            ("frame size", "packets"),
            one_series(vec![one]),
        );
        f.kind = Kind::Bar;
        f.categories = vec!["x".repeat(30)];
        let s = render(&f);
        let before = s.split(">frame size</text>").next().unwrap();
        let y: f64 = before
            .rsplit("y=\"")
            .next()
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(y, TOP + PLOT_H + 40.0 + 30.0 * 3.6);
    }

    /// The largest y tick label of a rendered figure.
    fn axis_max(svg: &str) -> f64 {
        svg.split("<text")
            .filter(|t| t.contains(r#"text-anchor="end""#))
            .filter_map(|t| {
                t.split('>')
                    .nth(1)?
                    .split('<')
                    .next()?
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .fold(f64::MIN, f64::max)
    }

    #[test]
    fn long_titles_wrap_at_spaces_within_the_width() {
        assert_eq!(wrap("short title", 40), ["short title"]);
        assert_eq!(
            wrap("received per 1-ms bin around each update of trial 12", 20),
            ["received per 1-ms", "bin around each", "update of trial 12"]
        );
        assert_eq!(
            wrap("averyveryverylongword x", 5),
            ["averyveryverylongword", "x"]
        );
        // A wrapped title draws one line each and moves the plot down.
        let pts = vec![Point {
            x: 0.0,
            y: 1.0,
            ci95: None,
        }];
        let line = |t: &str| {
            let series = vec![Series {
                name: "s".into(),
                points: pts.clone(),
                fit: false,
            }];
            Figure::line("t", t, ("x", "y"), series)
        };
        let one = render(&line("t"));
        let long = render(&line(&"word ".repeat(60)));
        assert_eq!(long.matches("<tspan").count(), 4);
        let height = |svg: &str| -> f64 {
            let h = svg.split("height=\"").nth(1).unwrap();
            h[..h.find('"').unwrap()].parse().unwrap()
        };
        assert_eq!(height(&long) - height(&one), 3.0 * TITLE_ROW);
    }
}
