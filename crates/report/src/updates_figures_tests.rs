//! Tests of the update figures (`updates::figures`, issue 37): a trial's repeated
//! updates overlaid in one figure, a single update's pair of figures, the commit span
//! shaded and the labels kept apart, checked on the figures and on their SVG.

use super::*;
use crate::svg::render;

/// A committed update `index` of trial `trial` (nft by batch, add 1) at `installed`:
/// its commit, time to effect and window of `bins` (ms, received, lost, owd µs).
fn update(
    trial: i64,
    index: u32,
    installed: u64,
    commit_ms: f64,
    effect: f64,
    bins: &[[f64; 4]],
) -> Update {
    Update {
        trial_id: trial,
        engine: "nft".into(),
        unit: Unit::Packets,
        set_elements: 0,
        rate: None,
        load: None,
        trial: None,
        row: UpdateRecord {
            index,
            kind: "add".into(),
            method: "batch".into(),
            k: 1,
            installed,
            commit_ms,
            marker: true,
            time_to_effect_ms: Some(effect),
            stall_ms: Some(0.0),
            series: Some(serde_json::to_string(bins).unwrap()),
            ..Default::default()
        },
    }
}

/// A window of 1-ms bins from −2 to 5 ms: `rx` received in each bin, but nothing
/// (and 3 lost) in the bins from `gap.0` to `gap.1` ms.
fn window(rx: f64, gap: (f64, f64)) -> Vec<[f64; 4]> {
    (-2..=5)
        .map(|ms| {
            let ms = f64::from(ms);
            if ms >= gap.0 && ms <= gap.1 {
                [ms, 0.0, 3.0, 0.0]
            } else {
                [ms, rx, 0.0, 200.0]
            }
        })
        .collect()
}

/// An `--event-rate` trial: `n` updates of trial 7, one a second (their windows apart),
/// each one more rule installed.
fn repeated(n: u32) -> Vec<Update> {
    (0..n)
        .map(|i| {
            let commit = 2.0 + f64::from(i);
            let w = window(10.0 + f64::from(i), (1.0, 2.0));
            let mut u = update(7, i, 20000 + u64::from(i), commit, 1.5, &w);
            u.row.start_unix_ns = 1_000_000_000 * u64::from(i + 1);
            u
        })
        .collect()
}

/// A figure's spans as (from, to, text).
fn spans(f: &Figure) -> Vec<(f64, f64, &str)> {
    f.spans
        .iter()
        .map(|s| (s.from, s.to, s.text.as_str()))
        .collect()
}

/// The number of `<polyline>`s of `svg` with stroke width `w`.
fn lines_of_width(svg: &str, w: &str) -> usize {
    svg.split("<polyline")
        .skip(1)
        .filter(|p| p[..p.find("/>").unwrap()].contains(&format!("stroke-width=\"{w}\"")))
        .count()
}

#[test]
fn a_trials_repeated_updates_are_one_figure_of_thin_lines_and_a_bold_median() {
    let figs = figures(&repeated(46));
    // One figure, not two per installed size (92 before).
    assert_eq!(
        figs.len(),
        1,
        "{:?}",
        figs.iter().map(|f| &f.id).collect::<Vec<_>>()
    );
    let f = &figs[0];
    assert_eq!(f.id, "updates-trial-7-add-1");
    assert_eq!(
        f.title,
        "Background received around 46 updates of trial 7: adding 1 rule to 20000 … 20045"
    );
    // 24 of the 46 drawn ([`THIN_LINES`]), the bold median over all 46.
    assert_eq!(f.series.len(), THIN_LINES + 1);
    assert_eq!(f.overlay.as_deref(), Some("median of 46 updates"));
    assert_eq!(f.series[0].name, "update 0 (20000 installed)");
    // The median, bin by bin: of 10 … 55 received, 32.5; nothing in the gap.
    let median: Vec<(f64, f64)> = f.series[THIN_LINES]
        .points
        .iter()
        .map(|p| (p.x, p.y))
        .collect();
    assert_eq!(median[0], (-2.0, 32.5));
    assert_eq!(median[3], (1.0, 0.0));
    // The commit shaded from 0 to its median end, the gap where nothing arrived
    // shaded as the stall, the median time to effect marked.
    assert_eq!(
        spans(f),
        [
            (0.0, 24.5, "commit 24.5 ms (median)"),
            (1.0, 3.0, "stall 2 ms")
        ]
    );
    let marks: Vec<(f64, &str)> = f.markers.iter().map(|m| (m.x, m.text.as_str())).collect();
    assert_eq!(marks, [(1.5, "effect 1.5 ms (median)")]);
    assert_eq!(
        f.notes,
        [
            "nft by batch: 46 updates; the commit took 24.5 ms (median), 47 ms at most. 24 of \
          them are drawn (the first carrying the marker, if any, the slowest commit, evenly \
          spaced others); the median is over all 46."
        ]
    );

    // Drawn: 24 thin lines, one bold, two shaded spans, a legend of two rows.
    let svg = render(f);
    assert_eq!(lines_of_width(&svg, "0.75"), THIN_LINES);
    assert_eq!(lines_of_width(&svg, "2.5"), 1);
    assert_eq!(svg.matches(r#"<rect class="span""#).count(), 2);
    assert!(svg.contains(">median of 46 updates</text>"));
    assert!(svg.contains(">24 thin lines, one each</text>"));
    assert!(!svg.contains(">update 0 (20000 installed)</text>"));
    assert_eq!(svg.matches("<circle").count(), 0);
}

/// The envelope preset: a step at 200 updates/s drew 561 thin lines, and its Markdown
/// report tabulated each (87 MB for one run). Beyond [`THIN_LINES`] the overlay draws
/// the update carrying the marker, the slowest commit and evenly spaced others.
#[test]
fn many_updates_draw_the_marker_the_slowest_and_evenly_spaced_others() {
    let mut us = repeated(561);
    for u in &mut us {
        u.row.marker = false;
        u.row.commit_ms = 2.0;
    }
    us[7].row.marker = true;
    us[300].row.commit_ms = 90.0;
    let f = &figures(&us)[0];
    let names: Vec<&str> = f.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), THIN_LINES + 1, "{names:?}");
    assert_eq!(names[0], "update 0 (20000 installed)");
    assert!(names.contains(&"update 7 (20007 installed)"), "{names:?}");
    assert!(names.contains(&"update 300 (20300 installed)"), "{names:?}");
    assert_eq!(names[THIN_LINES - 1], "update 560 (20560 installed)");
    assert_eq!(names[THIN_LINES], "median of 561 updates");
    // In Markdown the bold line alone is tabulated.
    assert!(f.notes[0].contains("24 of them are drawn"), "{:?}", f.notes);
    let md = crate::export::figure_table(&crate::export::bold_only(f));
    assert_eq!(md.columns.len(), 2, "{:?}", md.columns);
    assert!(
        md.columns[1].starts_with("median of 561 updates"),
        "{:?}",
        md.columns
    );
    assert_eq!(md.rows.len(), 8, "one row per bin");
    // Whatever collides with the marker's and the slowest: as many as fit, each kept
    // (26 updates, the marker at 6, the slowest at 12 drew 23 before).
    for n in 25..80u32 {
        for (marker, slow) in [(6, 12), (0, n - 1), (n / 2, n / 3), (n - 2, 1)] {
            let mut us = repeated(n);
            for u in &mut us {
                u.row.marker = false;
                u.row.commit_ms = 2.0;
            }
            us[marker as usize].row.marker = true;
            us[slow as usize].row.commit_ms = 90.0;
            let f = &figures(&us)[0];
            let names: Vec<&str> = f.series.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(names.len(), THIN_LINES + 1, "n {n}: {names:?}");
            for i in [0, marker, slow, n - 1] {
                let want = format!("update {i} ({} installed)", 20000 + i);
                assert!(names.contains(&want.as_str()), "n {n}, {want}: {names:?}");
            }
        }
    }
}

#[test]
fn a_trial_with_one_update_keeps_its_pair_of_figures() {
    let one = vec![update(3, 0, 100, 2.0, 1.0, &window(10.0, (0.0, 0.0)))];
    let figs = figures(&one);
    let ids: Vec<&str> = figs.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        ["updates-add-1-100-received", "updates-add-1-100-delay"]
    );
    let f = &figs[0];
    assert_eq!(f.overlay, None);
    assert_eq!(
        spans(f),
        [(0.0, 2.0, "commit 2 ms (median)"), (0.0, 1.0, "stall 1 ms")]
    );
    assert_eq!(f.markers.len(), 1);
    assert_eq!(f.markers[0].text, "effect 1 ms");
    // Repetitions of one configuration, one update each, stay pooled in that pair.
    let reps = vec![
        update(3, 0, 100, 2.0, 1.0, &window(10.0, (0.0, 0.0))),
        update(4, 0, 100, 4.0, 1.0, &window(20.0, (0.0, 0.0))),
    ];
    let figs = figures(&reps);
    assert_eq!(figs.len(), 2);
    assert_eq!(figs[0].series.len(), 1);
    assert_eq!(figs[0].series[0].points[0].y, 15.0);
}

/// Labels that would overlap at one place (a commit of 0.2 ms, its effect at 0.1 ms)
/// go into separate rows; labels far apart share a row.
#[test]
fn the_labels_of_a_short_commit_do_not_overlap() {
    let one = vec![update(3, 0, 100, 0.2, 0.1, &window(10.0, (9.0, 9.0)))];
    let f = &figures(&one)[0];
    let svg = render(f);
    let labels = |svg: &str| -> Vec<(f64, f64, String)> {
        svg.split("<text x=\"")
            .skip(1)
            .filter(|t| t.contains("text-anchor=\"middle\">"))
            .filter_map(|t| {
                let x: f64 = t.split('"').next()?.parse().ok()?;
                let y: f64 = t.split("y=\"").nth(1)?.split('"').next()?.parse().ok()?;
                let text = t.split('>').nth(1)?.split('<').next()?.to_string();
                Some((x, y, text))
            })
            .filter(|(_, _, text)| text.starts_with("commit") || text.starts_with("effect"))
            .collect()
    };
    let l = labels(&svg);
    assert_eq!(l.len(), 2, "{l:?}");
    let width = |t: &str| t.chars().count() as f64 * 6.2;
    let (a, b) = (&l[0], &l[1]);
    let apart_x = (a.0 - b.0).abs() >= (width(&a.2) + width(&b.2)) / 2.0;
    assert!(apart_x || a.1 != b.1, "labels overlap: {l:?}");
    assert_ne!(a.1, b.1, "they cannot be side by side: {l:?}");
    // The plot moved down to make room for the second row.
    assert!(svg.contains(r#"<rect x="80.0" y="53.0""#), "{svg}");
}

#[test]
fn the_stall_is_the_longest_run_of_bins_that_lost_and_received_nothing() {
    let b = |ms: f64, received: f64, lost: f64| Bin {
        ms,
        received,
        lost,
        delay_ms: None,
    };
    let bins = [
        b(0.0, 0.0, 1.0),
        b(1.0, 5.0, 0.0),
        b(2.0, 0.0, 2.0),
        b(3.0, 0.0, 1.0),
        // Nothing sent here: no traffic, not a stall.
        b(4.0, 0.0, 0.0),
        b(5.0, 0.0, 3.0),
    ];
    assert_eq!(stall_span(&bins), Some((2.0, 4.0)));
    assert_eq!(stall_span(&[b(0.0, 0.0, 0.0), b(1.0, 3.0, 0.0)]), None);
}

/// Commit latency vs installed size (`updates::growth`, issue 39): trials of three
/// adds each at four sizes, two trials a size. A line with noise reads as linear with
/// its slope; a parabola as superlinear, with the largest size's commit against the
/// line through the smaller sizes; two sizes state nothing.
#[test]
fn commit_latency_over_sizes_is_linear_or_superlinear_with_its_evidence() {
    let planted = |f: fn(f64) -> f64| -> Vec<Update> {
        let mut out = vec![];
        for (t, n) in [1000u64, 20_000, 50_000, 100_000].iter().enumerate() {
            for rep in 0..2 {
                let trial = (t * 2 + rep) as i64;
                let noise = if rep == 0 { 0.2 } else { -0.2 };
                for i in 0..3u32 {
                    let installed = n + u64::from(i);
                    let c = f(*n as f64) + noise;
                    out.push(update(trial, i, installed, c, 1.0, &[]));
                }
            }
        }
        out
    };
    let linear = growth(&planted(|n| 10.0 + 3e-4 * n));
    assert_eq!(linear.len(), 1, "{linear:?}");
    assert!(
        linear[0].starts_with(
            "Commit latency of adding 1 rule with nft by batch over 1000–100000 rules \
             (8 trials at 4 sizes) grows linearly: 10.00 ± 0.30 ms + 0.3000 ± 0.0053 ms"
        ),
        "{linear:?}"
    );
    let curved = growth(&planted(|n| 10.0 + 1e-4 * n + 3e-9 * n * n));
    assert_eq!(curved.len(), 1, "{curved:?}");
    assert!(
        curved[0].contains("grows faster than the number of rules: superlinear"),
        "{curved:?}"
    );
    assert!(
        curved[0].contains(
            "at 100000 rules it took 50 ms (the median of its trials' medians) where the line"
        ),
        "{curved:?}"
    );
    // A steep line that starts below 0: flagged, not stated as a model.
    let negative = growth(&planted(|n| -20.0 + 3e-4 * n));
    assert!(
        negative[0].contains("grows linearly: -20.00 ± 0.30 ms + 0.3000 ± ")
            && negative[0].contains("FLAGGED: its intercept, -20.00 ± 0.30 ms, is below 0"),
        "{negative:?}"
    );
    assert!(!linear[0].contains("FLAGGED"), "{linear:?}");
    // Two sizes: no parabola, nothing said.
    let two: Vec<Update> = planted(|n| 10.0 + 3e-4 * n)
        .into_iter()
        .filter(|u| u.row.installed < 20_010)
        .collect();
    assert!(growth(&two).is_empty());
    // An envelope's steps: the first at one rate for every size, the next at rates of
    // their own — one fit, at the rate they share, said; never one over every rate
    // (commits at 100/s compete for the CPUs: 100 ms more here, planted).
    let stepped: Vec<Update> = planted(|n| 10.0 + 3e-4 * n)
        .into_iter()
        .map(|mut u| {
            let first = u.trial_id % 2 == 0;
            u.rate = Some(if first {
                2.0
            } else {
                100.0 + u.trial_id as f64
            });
            if !first {
                u.row.commit_ms += 100.0;
            }
            u
        })
        .collect();
    let f = growth(&stepped);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].starts_with(
            "Commit latency of adding 1 rule repeated at 2 updates/s with nft by batch over \
             1000–100000 rules (4 trials at 4 sizes) grows linearly: "
        ),
        "{f:?}"
    );
    // Every trial at a rate of its own: no line, and why (never silence).
    let own: Vec<Update> = stepped
        .iter()
        .cloned()
        .map(|mut u| {
            u.rate = Some(1.0 + u.trial_id as f64);
            u
        })
        .collect();
    assert_eq!(
        growth(&own),
        [
            "Commit latency of adding 1 rule with nft by batch vs installed rules: not fitted — \
          its trials ran their updates at 8 rates (1–8 updates/s), and none at enough \
          sizes for a curvature's CI (a series is one rate: commits beside other rates \
          compete with other work)."
        ]
    );
    // Once at two sizes, at 2/s at two others: not one series, whatever the count.
    let mixed: Vec<Update> = planted(|n| 10.0 + 3e-4 * n)
        .into_iter()
        .map(|mut u| {
            u.rate = (u.row.installed >= 50_000).then_some(2.0);
            u
        })
        .collect();
    assert_eq!(
        growth(&mixed),
        [
            "Commit latency of adding 1 rule with nft by batch vs installed rules: not fitted — \
          its trials ran their updates once and at 1 rate (2 updates/s), and none at \
          enough sizes for a curvature's CI (a series is one rate: commits beside other \
          rates compete with other work)."
        ]
    );
    // Three sizes, one trial each: no curvature's CI, said.
    let three: Vec<Update> = planted(|n| 10.0 + 3e-4 * n)
        .into_iter()
        .filter(|u| u.trial_id % 2 == 0 && u.row.installed < 60_000)
        .collect();
    assert_eq!(
        growth(&three),
        [
            "Commit latency of adding 1 rule with nft by batch vs installed rules: not fitted — \
          3 trials at 3 sizes are too few for a curvature's CI (a parabola needs four points \
          or more)."
        ]
    );
}

/// rules-under-load.toml in full (2026-11-30): at 20 001 and 50 001 rules the 20-kpps
/// background overloaded the gateway (those updates flagged), at 1 and 1 001 it did not,
/// and the commit-latency fit over all four sizes read "superlinear" with no word of it.
/// A fit over sizes where some trials' gateway was saturated says so, FLAGGED, naming
/// them; one where every trial's was says that; one where none was, nothing.
#[test]
fn a_commit_fit_says_where_the_background_overloaded_the_gateway() {
    let flagged = |mut u: Update| {
        u.row.doubts = Some(r#"[{"kind":"overloaded","why":"lost 53.6 %"}]"#.into());
        u
    };
    let ups = |over: fn(u64) -> bool| -> Vec<Update> {
        [1u64, 1001, 20_001, 50_001]
            .iter()
            .enumerate()
            .map(|(t, &n)| {
                let u = update(t as i64, 0, n, 2.0 + 4e-2 * n as f64, 1.0, &[]);
                if over(n) {
                    flagged(u)
                } else {
                    u
                }
            })
            .collect()
    };
    let mixed = growth(&ups(|n| n > 10_000));
    assert_eq!(mixed.len(), 1, "{mixed:?}");
    assert!(
        mixed[0].contains(
            "FLAGGED: the background overloaded the gateway at 20001, 50001 rules (those \
             trials flagged), not in the others"
        ),
        "{mixed:?}"
    );
    let all = growth(&ups(|_| true));
    assert!(
        all[0].contains("in every trial the background overloaded the gateway"),
        "{all:?}"
    );
    let none = growth(&ups(|_| false));
    assert!(!none[0].contains("overloaded"), "{none:?}");
    // One of two trials at 50001 rules overloaded: that size is not said to be.
    let mut two = ups(|_| false);
    two.push(flagged(update(
        9,
        0,
        50_001,
        2.0 + 4e-2 * 50_001.0,
        1.0,
        &[],
    )));
    let f = growth(&two);
    assert!(
        f[0].contains("overloaded the gateway in some trials at 50001 rules (those trials"),
        "{f:?}"
    );
}

/// The knee of a superlinear commit latency: flat to 20 000 rules, then steep
/// (+0.5 ms per 1 000 rules) — the two-line fit puts it at 20 000, with an interval
/// from the trials; three sizes state why none is given.
#[test]
fn a_superlinear_commit_latency_states_its_knee() {
    let stick = |n: f64| 10.0 + 1e-5 * n + (n - 20_000.0).max(0.0) * 5e-4;
    let mut ups = vec![];
    for (t, n) in [1000u64, 5000, 10_000, 20_000, 50_000, 100_000]
        .iter()
        .enumerate()
    {
        for rep in 0..2 {
            let noise = if rep == 0 { 0.1 } else { -0.1 };
            let c = stick(*n as f64) + noise;
            ups.push(update((t * 2 + rep) as i64, 0, *n, c, 1.0, &[]));
        }
    }
    let f = growth(&ups);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].contains("superlinear"), "{f:?}");
    let knee: f64 = f[0]
        .split("the knee at about ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no knee: {f:?}"));
    assert!((19_000.0..=21_000.0).contains(&knee), "{f:?}");
    assert!(f[0].contains("bootstrap resamples of the trials"), "{f:?}");
    let three: Vec<Update> = ups
        .into_iter()
        .filter(|u| [1000, 20_000, 100_000].contains(&u.row.installed))
        .collect();
    let f = growth(&three);
    assert!(
        f[0].contains("no knee stated: 3 sizes (a knee needs 4)"),
        "{f:?}"
    );
}

/// A trial's repeated adds (20000, 20001, … installed) are one finding at the size the
/// first saw, the median over all of them — not one sentence per size passed through.
#[test]
fn a_trials_repeated_updates_are_one_finding_at_its_first_size() {
    let f = findings(&repeated(5));
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].starts_with("adding 1 rule to 20000 with nft by batch took 4 ms (median of 5)"),
        "{f:?}"
    );
}

/// A commit that held the background back and let it all through (churn.toml: a
/// kube-proxy replacement, one-way delay 30 µs → 8.2 ms, nothing lost) stalls nothing by
/// the bins, so the sentence gives the delay beside it — the highest of the group's.
#[test]
fn a_held_back_background_reads_its_delay_beside_a_stall_of_0() {
    let mut ups = repeated(2);
    ups[0].row.owd_max_us = 8_156;
    ups[1].row.owd_max_us = 45;
    let f = findings(&ups);
    assert!(
        f[0].contains(
            "forwarding stalled 0 ms at most; 0 packets lost; the background's one-way delay \
             in the update's window reached 8.156 ms;"
        ),
        "{f:?}"
    );
}

/// A flow between two hosts whose clocks could not relate its one-way delays stores them
/// as 0 beside why (`no_delays`): no figure — said of the updates whose delays are
/// figures only, in the findings, the table and the delay figure (none drawn).
#[test]
fn delays_across_unrelated_clocks_are_no_figure() {
    let mut ups = repeated(2);
    ups[0].row.owd_max_us = 8_156;
    ups[1].row.owd_max_us = 45;
    let mut apart = ups.clone();
    for u in &mut apart {
        u.row.no_delays = Some("two hosts' clocks related only to ± 900 µs".into());
    }
    let f = findings(&apart);
    assert!(!f[0].contains("one-way delay"), "{f:?}");
    let t = table(&apart).unwrap();
    assert_eq!(
        t.rows[0].last().map(String::as_str),
        Some("–"),
        "{:?}",
        t.rows
    );
    // Beside one whose delay is a figure: only its.
    ups[0].row.no_delays = apart[0].row.no_delays.clone();
    let f = findings(&ups);
    assert!(
        f[0].contains(
            "one-way delay in the update's window reached 0.045 ms (of the 1 of 2 updates \
             whose delays are figures: the others' two hosts' clocks could not relate them)"
        ),
        "{f:?}"
    );
    // The delay figure draws no line of delays that are no figures.
    let drawn = |ups: &[Update]| {
        pooled(ups)
            .iter()
            .filter(|f| f.id.ends_with("-delay"))
            .flat_map(|f| f.series.iter().flat_map(|s| s.points.iter()))
            .count()
    };
    assert!(drawn(&repeated(2)) > 0);
    assert_eq!(drawn(&apart), 0);
}

/// A trace's 27 bans took a median of 8 ms, but only the first carried the marker: its
/// time to effect is that one update's, said so — not read as a median of 27.
#[test]
fn a_time_to_effect_says_of_how_many_updates_where_fewer_than_the_commits() {
    let mut ups = repeated(3);
    for u in &mut ups[1..] {
        u.row.marker = false;
        u.row.time_to_effect_ms = None;
    }
    let f = findings(&ups);
    assert!(f[0].contains("(median of 3)"), "{f:?}");
    assert!(
        f[0].contains("the rule took effect after 1.5 ms (the one update carrying the marker)"),
        "{f:?}"
    );
    // Every commit with its time to effect: no such words.
    let f = findings(&repeated(3));
    assert!(f[0].contains("took effect after 1.5 ms."), "{f:?}");
}

/// Reloads one per trial pool into the figure of their kind and size, where the
/// must-drop packets that passed are shaded per engine and method: from the median
/// start of the leaky reloads' windows for their median length, with how many passed
/// in how many reloads; a flagged reload is not in it.
#[test]
fn pooled_reloads_shade_where_must_drop_packets_passed() {
    let reload = |trial: i64, passed: u64, from: f64, len: f64| {
        let mut u = update(trial, 0, 102, 3.0, 0.0, &window(10.0, (9.0, 9.0)));
        u.row.kind = "reload".into();
        u.row.method = "flush-load".into();
        u.row.time_to_effect_ms = None;
        u.row.violations = Some(passed);
        u.row.violation_from_ms = (passed > 0).then_some(from);
        u.row.violation_window_ms = (passed > 0).then_some(len);
        u
    };
    let mut flagged = reload(4, 900, 50.0, 50.0);
    flagged.row.doubts = Some(r#"[{"kind":"unobserved","why":"late"}]"#.into());
    let ups = [
        reload(1, 10, 0.5, 2.0),
        reload(2, 20, 1.5, 3.0),
        reload(3, 0, 0.0, 0.0),
        flagged,
    ];
    let f = figures(&ups);
    let received = f
        .iter()
        .find(|f| f.id == "updates-reload-1-102-received")
        .expect("the pooled figure");
    let leak: Vec<&Span> = received
        .spans
        .iter()
        .filter(|s| s.text.starts_with("must-drop"))
        .collect();
    assert_eq!(leak.len(), 1, "{:?}", received.spans);
    assert_eq!(leak[0].text, "must-drop passed: 30 in 2 of 3 reloads");
    assert_eq!((leak[0].from, leak[0].to), (1.0, 3.5));
}

/// An update whose stall the fwbench withheld: the gateway lost 95 % of the background
/// before it (`overloaded`), its window dark for 254 ms.
fn overloaded(trial: i64, index: u32, commit_ms: f64) -> Update {
    let dark: Vec<[f64; 4]> = (-2..300)
        .map(|ms| {
            let ms = f64::from(ms);
            if (0.0..254.0).contains(&ms) {
                [ms, 0.0, 19.0, 0.0]
            } else {
                [ms, 1.0, 19.0, 300.0]
            }
        })
        .collect();
    let mut u = update(trial, index, 20000, commit_ms, 12.0, &dark);
    u.row.stall_ms = None;
    u.row.doubts = Some(
        r#"[{"kind":"overloaded","why":"the gateway lost 95.0 % of the background packets before it"}]"#
            .into(),
    );
    u
}

/// The 20 000-rule update on a gateway that lost 95 % before it: the table read "–
/// (flagged)", the findings "no stall or loss figure", and its figure shaded "stall 254
/// ms" over a line "mean of 1 updates". Its bins make no line and no stall shade; the
/// note says why. Beside an update that holds, the line is that one's alone, said so.
#[test]
fn a_withheld_stall_is_no_line_and_no_shade_in_the_figures() {
    let f = figures(&[overloaded(1, 0, 30.0)]);
    let rx = f
        .iter()
        .find(|f| f.id == "updates-add-1-20000-received")
        .expect("the pooled figure");
    assert!(rx.series.iter().all(|s| s.points.is_empty()), "{rx:?}");
    assert_eq!(spans(rx), [(0.0, 30.0, "commit 30 ms (median)")]);
    assert!(rx.markers.is_empty(), "{:?}", rx.markers);
    assert_eq!(
        rx.notes,
        [
            "nft by batch: no line, no stall shaded — no update's background figures hold \
             (overloaded: the gateway lost 95.0 % of the background packets before it); the \
             commit took 30 ms (median of 1)."
        ]
    );
    assert!(!render(rx).contains("stall 254"));
    let fine = update(2, 0, 20000, 32.0, 12.0, &window(10.0, (1.0, 2.0)));
    let f = figures(&[overloaded(1, 0, 30.0), fine]);
    let rx = &f[0];
    let p: Vec<(f64, f64)> = rx.series[0].points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(p[0], (-2.0, 10.0), "the mean of the one that holds: {p:?}");
    assert_eq!(
        spans(rx),
        [
            (0.0, 31.0, "commit 31 ms (median)"),
            (1.0, 3.0, "stall 2 ms")
        ]
    );
    assert_eq!(
        rx.notes,
        [
            "nft by batch: mean of 1 of 2 updates (1 left out: overloaded: the gateway lost \
             95.0 % of the background packets before it); the commit took 31 ms (median of \
             all 2)."
        ]
    );
}

/// A trial's repeated updates: the bold median is of those whose figures hold (a
/// flagged one's bins are no part of it, nor a thin line); where none holds — every
/// update of a flagged trial — no line and no stall shaded, and why.
#[test]
fn an_overlays_lines_are_of_the_updates_that_hold() {
    let mut ups = repeated(3);
    // A flagged one whose bins would move the median: 1000 received a bin.
    ups[1].row.series = Some(serde_json::to_string(&window(1000.0, (1.0, 2.0))).unwrap());
    ups[1].row.doubts = Some(r#"[{"kind":"overloaded","why":"lost 95 %"}]"#.into());
    let f = &figures(&ups)[0];
    let names: Vec<&str> = f.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "update 0 (20000 installed)",
            "update 2 (20002 installed)",
            "median of 2 updates"
        ]
    );
    // Of 10 and 12 received: 11 (with the flagged one's 1000, the median was 12).
    assert_eq!(f.series[2].points[0].y, 11.0);
    assert!(
        f.notes[0].ends_with(" 1 of them left out of the lines (overloaded: lost 95 %)."),
        "{:?}",
        f.notes
    );
    // Every update of a trial flagged limited by fwbench.
    let flagged: Vec<Update> = repeated(3)
        .into_iter()
        .map(|mut u| {
            u.trial = Some(TrialDoubt {
                status: Status::Flagged,
                why: "limited by fwbench: the sender ran 80 ms late".into(),
            });
            u
        })
        .collect();
    let f = &figures(&flagged)[0];
    assert!(f.series.is_empty(), "{:?}", f.series);
    assert_eq!(f.overlay, None);
    assert_eq!(spans(f), [(0.0, 3.0, "commit 3 ms (median)")]);
    assert!(f.markers.is_empty(), "{:?}", f.markers);
    assert!(
        f.notes[0].ends_with(
            " No line, no stall shaded: no update's background figures hold (their trials \
             flagged: limited by fwbench: the sender ran 80 ms late)."
        ),
        "{:?}",
        f.notes
    );
    assert!(!render(f).contains("stall"));
}

/// Updates of a trial whose witness does not hold (flagged limited by fwbench: "the
/// updates' stall and loss may be the sender's") state no stall, loss or time to
/// effect in the findings and the table, and their commits are no point of a fit —
/// each says how many were left out, and why.
#[test]
fn updates_of_a_flagged_trial_state_no_figure_and_say_why() {
    let limited = |mut u: Update| {
        u.trial = Some(TrialDoubt {
            status: Status::Flagged,
            why: "limited by fwbench: the paced sender ran 80 ms behind: the updates' stall \
                  and loss may be the sender's"
                .into(),
        });
        u
    };
    let mut late = limited(update(1, 0, 20000, 30.0, 12.0, &window(10.0, (0.0, 2.0))));
    late.row.stall_ms = Some(3.0);
    late.row.lost = 9;
    let f = findings(std::slice::from_ref(&late));
    assert_eq!(
        f,
        [
            "adding 1 rule to 20000 with nft by batch took 30 ms (median of 1); no stall or \
          loss figure (1 update of flagged trials left out: limited by fwbench: the paced \
          sender ran 80 ms behind: the updates' stall and loss may be the sender's)."
        ]
    );
    let t = format!("{:?}", table(std::slice::from_ref(&late)).unwrap().rows);
    assert!(t.contains(r#""30", "30", "– (flagged)", "–", "–""#), "{t}");
    // Beside one that holds: its figures alone, the other counted.
    let mut fine = update(2, 0, 20000, 34.0, 8.0, &window(10.0, (1.0, 1.0)));
    fine.row.stall_ms = Some(1.0);
    fine.row.lost = 3;
    let f = findings(&[late, fine]);
    assert_eq!(
        f,
        [
            "adding 1 rule to 20000 with nft by batch took 32 ms (median of 2); forwarding \
          stalled 1 ms; 3 packets lost (1 update of flagged trials left out: limited by \
          fwbench: the paced sender ran 80 ms behind: the updates' stall and loss may be the \
          sender's); the rule took effect after 8 ms."
        ]
    );
    // A fit over four sizes whose largest size's trials were flagged: over the three
    // others, the two left out said.
    let mut ups = vec![];
    for (t, n) in [1000u64, 20_000, 50_000, 100_000].iter().enumerate() {
        for rep in 0..2 {
            let trial = (t * 2 + rep) as i64;
            let noise = if rep == 0 { 0.2 } else { -0.2 };
            let mut c = 10.0 + 3e-4 * *n as f64 + noise;
            if *n == 100_000 {
                c += 500.0;
            }
            let u = update(trial, 0, *n, c, 1.0, &[]);
            ups.push(if *n == 100_000 { limited(u) } else { u });
        }
    }
    let f = growth(&ups);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].starts_with(
            "Commit latency of adding 1 rule with nft by batch over 1000–50000 rules (6 \
             trials at 3 sizes; 2 flagged trials left out: limited by fwbench: the paced \
             sender ran 80 ms behind"
        ) && f[0].contains("grows linearly"),
        "{f:?}"
    );
}

/// Updates at other rates (`Update::rate`: 1/s and 100/s are not one series), places
/// (the head, behind the established-accept rule) or loads (`event_load`) are never one
/// sentence, row, line or fit; each is named where they differ, and only there.
#[test]
fn updates_at_other_rates_places_or_loads_are_never_pooled() {
    let at = |trial: i64, commit_ms: f64| {
        update(trial, 0, 20000, commit_ms, 12.0, &window(10.0, (1.0, 2.0)))
    };
    let once = at(1, 30.0);
    let mut fast = at(2, 90.0);
    fast.rate = Some(100.0);
    let f = findings(&[once.clone(), fast.clone()]);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f[0].starts_with(
            "adding 1 rule to 20000 (once) with nft by batch took 30 ms (median of 1)"
        ),
        "{f:?}"
    );
    assert!(
        f[1].starts_with(
            "adding 1 rule to 20000 (repeated at 100 updates/s) with nft by batch took 90 ms \
             (median of 1)"
        ),
        "{f:?}"
    );
    let rows = table(&[once.clone(), fast.clone()]).unwrap().rows;
    let cells: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[2].as_str(), r[5].as_str()))
        .collect();
    assert_eq!(
        cells,
        [
            ("add 1 (once)", "30"),
            ("add 1 (repeated at 100 updates/s)", "90")
        ]
    );
    let figs = figures(&[once.clone(), fast]);
    let ids: Vec<&str> = figs.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "updates-add-1-20000-received",
            "updates-add-1-20000-delay",
            "updates-add-1-20000-rate-100-received",
            "updates-add-1-20000-rate-100-delay"
        ]
    );
    assert_eq!(
        figs[2].title,
        "Background received per 1-ms bin around adding 1 rule to 20000 (repeated at 100 \
         updates/s)"
    );
    // Where their rules went.
    let mut behind = at(3, 50.0);
    behind.row.place = Some("after-established".into());
    let f = findings(&[once.clone(), behind]);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f[0].starts_with("adding 1 rule to 20000 (at the chain's head) with"),
        "{f:?}"
    );
    assert!(
        f[1].starts_with(
            "adding 1 rule to 20000 (behind the rule accepting established flows) with nft \
             by batch took 50 ms"
        ),
        "{f:?}"
    );
    // The background's load.
    let mut half = at(4, 20.0);
    half.load = Some(Load::same("50 % of 41000 pps".into(), false));
    let f = findings(&[once.clone(), half]);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f[0].starts_with("adding 1 rule to 20000 (the background at the rate given) with"),
        "{f:?}"
    );
    assert!(
        f[1].starts_with(
            "adding 1 rule to 20000 (the background at 50 % of 41000 pps) with nft by batch \
             took 20 ms"
        ),
        "{f:?}"
    );
    // Alone, nothing is named.
    assert!(findings(&[once])[0].starts_with("adding 1 rule to 20000 with nft"));
    // A fit: the trials at the head at two sizes, those behind at two others — not one
    // series over four sizes.
    let mut ups = vec![];
    for (t, n) in [1000u64, 20_000, 50_000, 100_000].iter().enumerate() {
        for rep in 0..2 {
            let mut u = update(
                (t * 2 + rep) as i64,
                0,
                *n,
                10.0 + 3e-4 * *n as f64,
                1.0,
                &[],
            );
            if *n >= 50_000 {
                u.row.place = Some("after-established".into());
            }
            ups.push(u);
        }
    }
    assert_eq!(
        growth(&ups),
        [
            "Commit latency of adding 1 rule with nft by batch vs installed rules: not fitted — \
          its trials differ in where their rules went or the background's load (at the \
          head, the background at the rate given; behind the rule accepting established \
          flows), and none at enough sizes for a curvature's CI (a series is one place and \
          one load)."
        ]
    );
}

/// An update of `trial` started `at_ms` after 1 s (0: its start not stored), commit
/// 2 ms, credited with `lost` beyond the baseline; its series the CLI's window, 50 ms
/// before the commit's start to 250 ms after its end (bins −50 … 252: the last starts
/// where the window ends, 252 ms, and counts nothing there).
fn lost_at(trial: i64, at_ms: u64, lost: u64) -> Update {
    let bins: Vec<[f64; 4]> = (-50..=252)
        .map(|ms| [f64::from(ms), 10.0, 0.0, 50.0])
        .collect();
    let mut u = update(trial, 0, 20000, 2.0, 1.0, &bins);
    u.row.start_unix_ns = if at_ms == 0 {
        0
    } else {
        1_000_000_000 + at_ms * 1_000_000
    };
    u.row.lost = lost + 10;
    u.row.lost_beyond_baseline = Some(lost);
    u
}

/// A group's loss is the sum of its updates' only where no two windows of one trial
/// share a bin: windows apart (or of different trials, which share no packet) sum;
/// overlapping by one bin, or not placed in time (a start not stored), give the
/// largest per update, never a sum that counts a lost packet twice. A window is its
/// series' bins, else (no readable series) the CLI's 50 ms before to 250 ms after.
#[test]
fn a_groups_loss_is_summed_only_over_windows_apart() {
    let of = |us: &[Update]| Lost::of(&us.iter().collect::<Vec<_>>(), us);
    let overlap = |most| Lost::PerUpdate {
        most,
        why: "windows overlap: per-update loss, not summed",
    };
    // The first window ends at 253 ms (1 + 2 + 250: its series' last bin, at 252 ms
    // from the commit, counts nothing in fwbench's window): the next starts 50 ms
    // before its commit — at 303 they touch, and sum.
    assert_eq!(of(&[lost_at(1, 1, 4), lost_at(1, 304, 6)]), Lost::Sum(10));
    assert_eq!(of(&[lost_at(1, 1, 4), lost_at(1, 303, 6)]), Lost::Sum(10));
    assert_eq!(of(&[lost_at(1, 1, 4), lost_at(1, 302, 6)]), overlap(6));
    // Three at 10/s, given out of order.
    let fast = [lost_at(1, 201, 5), lost_at(1, 1, 7), lost_at(1, 101, 6)];
    assert_eq!(of(&fast), overlap(7));
    // Overlapping, but only one of them lost anything (or none did): nothing is
    // counted twice, the sum is exact.
    let clean = |at_ms| {
        let mut u = lost_at(1, at_ms, 0);
        u.row.lost = 0;
        u
    };
    assert_eq!(
        of(&[clean(201), lost_at(1, 1, 7), clean(101)]),
        Lost::Sum(7)
    );
    assert_eq!(of(&[clean(1), clean(101)]), Lost::Sum(0));
    // One credited 0 of the packets it lost (its baseline, the 50 ms before it, fell in
    // the other's stall): it lost some, and a sum could count them twice.
    assert_eq!(of(&[lost_at(1, 1, 7), lost_at(1, 101, 0)]), overlap(7));
    // Two trials at the same time: no packet of one is the other's.
    assert_eq!(of(&[lost_at(1, 1, 4), lost_at(2, 1, 6)]), Lost::Sum(10));
    // One update at a start not stored: alone it sums; beside another, not.
    assert_eq!(of(&[lost_at(1, 0, 4)]), Lost::Sum(4));
    assert_eq!(
        of(&[lost_at(1, 0, 4), lost_at(1, 5000, 6)]),
        Lost::PerUpdate {
            most: 6,
            why: "windows not placed in time (a start not stored): per-update loss, not \
                  summed"
        }
    );
    // Without a readable series: [start − 50 ms, start + commit + 250 ms).
    let unread = |at_ms, lost| {
        let mut u = lost_at(1, at_ms, lost);
        u.row.series = Some("not bins".into());
        u
    };
    assert_eq!(of(&[unread(1, 4), unread(303, 6)]), Lost::Sum(10));
    assert_eq!(of(&[unread(1, 4), unread(302, 6)]), overlap(6));
    // The sentence: the largest per update, said so.
    let said = findings(&fast).join("\n");
    assert!(
        said.contains(
            "forwarding stalled 0 ms at most; 7 packets lost in one update's window at most \
             (windows overlap: per-update loss, not summed)"
        ),
        "{said}"
    );
}

/// Where every update of a trial whose windows overlap carries its loss counted once
/// (`lost_once`), the group's loss is their sum — each lost packet once —, the other
/// trials' updates their credited loss; an update of such a trial outside the figure
/// that ran and whose window started no later than one of the figure's and overlaps it
/// makes the sum a lower bound ("at least"); one of them without `lost_once` (stored
/// before), or a window not placed, keeps the largest per update.
#[test]
fn a_groups_overlapping_windows_sum_the_loss_counted_once() {
    let once = |trial, at_ms, lost, once| {
        let mut u = lost_at(trial, at_ms, lost);
        u.row.lost_once = once;
        u
    };
    // Measured: the first `n` of `all`.
    let of = |all: &[Update], n: usize| Lost::of(&all[..n].iter().collect::<Vec<_>>(), all);
    let fast = [
        once(1, 201, 5, Some(1)),
        once(1, 1, 7, Some(7)),
        once(1, 101, 6, Some(2)),
    ];
    let exact = |n| Lost::Once {
        n,
        at_least: false,
        baselines: true,
    };
    assert_eq!(of(&fast, 3), exact(10));
    // Beside a trial whose windows lie apart (and one that has no `lost_once`): its
    // credited loss.
    let mut beside = fast.to_vec();
    beside.extend([lost_at(2, 1, 4), lost_at(2, 1000, 3)]);
    assert_eq!(of(&beside, 5), exact(17));
    // One of those without a baseline: its whole loss counts, said so.
    beside[4].row.lost_beyond_baseline = None;
    assert_eq!(
        of(&beside, 5),
        Lost::Once {
            n: 27,
            at_least: false,
            baselines: false
        }
    );
    assert!(
        of(&beside, 5)
            .note()
            .starts_with(" beyond the baseline where one was taken (windows overlap"),
        "{}",
        of(&beside, 5).note()
    );
    // One of the overlapping trial's updates stored before it was counted: per update.
    let mut old = fast.to_vec();
    old[2].row.lost_once = None;
    assert_eq!(
        of(&old, 3),
        Lost::PerUpdate {
            most: 7,
            why: "windows overlap: per-update loss, not summed"
        }
    );
    // Apart, the loss counted once is not needed: the credited sum, as before.
    assert_eq!(
        of(&[lost_at(1, 1, 4), lost_at(1, 304, 6)], 2),
        Lost::Sum(10)
    );
    // An update of the trial outside the figure: one that started no later than a measured
    // one, its window overlapping it, held bins first — at least; one that started
    // after every measured one (it holds none of their bins), one that failed or never
    // ran (no window), or one of another trial: exact.
    let outside = |at_ms: u64| {
        let mut all = fast.to_vec();
        all.push(once(1, at_ms, 3, Some(3)));
        all
    };
    assert_eq!(
        of(&outside(51), 3),
        Lost::Once {
            n: 10,
            at_least: true,
            baselines: true
        }
    );
    assert_eq!(
        of(&outside(1), 3),
        Lost::Once {
            n: 10,
            at_least: true,
            baselines: true
        }
    );
    assert_eq!(of(&outside(251), 3), exact(10));
    let mut failed = outside(51);
    failed[3].row.error = Some("exit 1".into());
    assert_eq!(of(&failed, 3), exact(10));
    assert_eq!(of(&outside(0), 3), exact(10));
    let mut other = outside(51);
    other[3].trial_id = 2;
    assert_eq!(of(&other, 3), exact(10));
    // Before the measured windows, apart from them: exact.
    let mut early = fast.to_vec();
    early
        .iter_mut()
        .for_each(|u| u.row.start_unix_ns += 1_000_000_000);
    early.push(once(1, 1, 3, Some(3)));
    assert_eq!(of(&early, 3), exact(10));
    // A window not placed beside overlapping ones: per update.
    let mut unplaced = fast.to_vec();
    unplaced.extend([once(2, 0, 4, Some(4)), once(2, 5000, 6, Some(6))]);
    assert!(matches!(of(&unplaced, 5), Lost::PerUpdate { most: 7, .. }));
    // The sentence: the sum, said so; with an update of the trial left out (its own
    // doubt) that held bins first, "at least".
    let said = findings(&fast).join("\n");
    assert!(
        said.contains(
            "forwarding stalled 0 ms at most; 10 packets lost beyond the baseline (windows \
             overlap: each lost packet counted once, in the earliest window holding it); "
        ),
        "{said}"
    );
    let mut doubted = fast.to_vec();
    doubted[1].row.doubts = Some(r#"[{"kind":"overloaded","why":"lost before it"}]"#.into());
    let said = findings(&doubted).join("\n");
    assert!(
        said.contains(
            "forwarding stalled 0 ms at most; at least 3 packets lost beyond the baseline \
             (windows overlap: each lost packet counted once, in the earliest window holding \
             it; an update of the same trial left out of this figure held some of these \
             windows first)"
        ),
        "{said}"
    );
}

/// `--load` over installed sizes: each size's background is a share of that size's
/// capacity, so the labels (with the figure) differ by size — yet one share found alike
/// is one commit-latency series, named without a figure; a size whose capacity was the
/// sender's limit is not of that series.
#[test]
fn a_load_found_at_each_size_is_one_series_over_sizes() {
    let at = |trial: i64, n: u64, pps: f64, sender: bool| {
        let mut u = update(trial, 0, n, 2.0 + 4e-2 * n as f64, 1.0, &[]);
        let load = serde_json::json!({"fraction": 0.5, "capacity": {"pps": pps,
            "background_pps": pps / 2.0, "search": {"loss": 0.0, "step_s": 1.0,
            "trials": 6, "converged": true, "limited_by_sender": sender}}});
        let p = serde_json::json!({"packet": {"events": {"load": load}}});
        u.load = load_of(&StoredParams::read(&p));
        u
    };
    let sizes = [
        (1u64, 90_000.0),
        (1001, 80_000.0),
        (20_001, 9_000.0),
        (50_001, 4_000.0),
    ];
    let ups: Vec<Update> = (sizes.iter().enumerate())
        .map(|(t, &(n, pps))| at(t as i64, n, pps, false))
        .collect();
    assert_eq!(
        ups[0].load.as_ref().map(|l| l.label.as_str()),
        Some("50 % of 90000 pps (its capacity, found by search)")
    );
    let f = growth(&ups);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].starts_with(
            "Commit latency of adding 1 rule the background at 50 % of each size's capacity \
             (found by search) with nft by batch over 1–50001 rules (4 trials at 4 sizes)"
        ),
        "{f:?}"
    );
    // The smallest size's capacity the sender's: a series apart, too small to fit.
    let mut mixed = ups.clone();
    mixed[0] = at(0, 1, 90_000.0, true);
    let f = growth(&mixed);
    assert!(
        f[0].contains(
            "not fitted — its trials differ in where their rules went or the \
                       background's load"
        ),
        "{f:?}"
    );
    assert!(
        f[0].contains(
            "50 % of each size's capacity, at least (the sender's limit, not the \
                       gateway's)"
        ),
        "{f:?}"
    );
}

/// A capacity of every doubt reads in one label, each said once (the search's doubts
/// by kind, the sender's limit and the unsettled search not again); the figures' ids
/// of such long labels stay short enough for a file name and apart.
#[test]
fn a_doubted_capacity_reads_once_per_doubt_and_its_ids_stay_short() {
    let loaded = |trial: i64, last: &str| {
        let mut u = update(trial, 0, 20000, 2.0, 1.0, &window(10.0, (9.0, 9.0)));
        let load = serde_json::json!({"fraction": 0.5, "capacity": {"pps": 41000.0,
            "search": {"converged": false, "limited_by_sender": true, "doubts": [
                {"kind": "limited_by_fwbench", "why": "the sender"},
                {"kind": "not_converged", "why": "out of trials"},
                {"kind": "contradiction", "why": "a pass above a fail"},
                {"kind": last, "why": "…"}]}}});
        let p = serde_json::json!({"packet": {"events": {"load": load}}});
        u.load = load_of(&StoredParams::read(&p));
        u
    };
    let u = loaded(1, "too_few");
    let l = u.load.clone().unwrap();
    assert_eq!(
        l.label,
        "50 % of at least 41000 pps (the sender's limit, not the gateway's; a capacity its \
         search did not settle; its search doubted: limited by fwbench, contradicting \
         trials, too few measurements)"
    );
    assert!(l.doubted);
    let figs = figures(&[u, loaded(2, "disturbed")]);
    let ids: BTreeSet<&str> = figs.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids.len(), 4, "two labels, two pairs apart: {ids:?}");
    for id in &ids {
        let part = id
            .trim_start_matches("updates-add-1-20000")
            .trim_end_matches("-received")
            .trim_end_matches("-delay");
        assert!(part.len() <= ID_PART_MAX, "{id}");
        assert!(
            part.starts_with("-load-50-of-at-least-its-capacity-the-sender"),
            "{id}"
        );
    }
}

/// A figure's id names a searched capacity's load without its figure, which differs
/// from run to run (the capacity is measured): the file names of two runs stay alike,
/// and those of before ("-load-50-of-its-capacity").
#[test]
fn a_searched_loads_figure_id_is_stable_from_run_to_run() {
    let at = |pps: f64| {
        let mut u = update(1, 0, 20000, 2.0, 1.0, &window(10.0, (9.0, 9.0)));
        let load = serde_json::json!({"fraction": 0.5, "capacity": {"pps": pps,
            "background_pps": pps / 2.0, "search": {"converged": true,
            "limited_by_sender": false, "loss": 0.0, "step_s": 1.0, "trials": 9}}});
        let p = serde_json::json!({"packet": {"events": {"load": load}}});
        u.load = load_of(&StoredParams::read(&p));
        u
    };
    let ids = |u: Update| -> BTreeSet<String> { figures(&[u]).into_iter().map(|f| f.id).collect() };
    let (a, b) = (ids(at(41_000.0)), ids(at(39_500.0)));
    assert!(!a.is_empty());
    assert_eq!(a, b);
    assert!(
        a.iter()
            .all(|id| id.starts_with("updates-add-1-20000-load-50-of-its-capacity")),
        "{a:?}"
    );
    // The label keeps the figure.
    assert_eq!(
        at(41_000.0).load.unwrap().label,
        "50 % of 41000 pps (its capacity, found by search)"
    );
}

/// Engines whose capacity searches found other capacities at one share are drawn side
/// by side in one figure (the share alike), each line's note saying its capacity; one
/// engine and method at two capacities is two lines, each named by its load.
#[test]
fn engines_at_one_share_of_their_own_capacities_share_a_figure() {
    let at = |trial: i64, engine: &str, pps: f64| {
        let mut u = update(trial, 0, 20000, 2.0, 1.0, &window(10.0, (9.0, 9.0)));
        u.engine = engine.into();
        let load = serde_json::json!({"fraction": 0.5, "capacity": {"pps": pps,
            "background_pps": pps / 2.0, "search": {"converged": true,
            "limited_by_sender": false, "loss": 0.0, "step_s": 1.0, "trials": 9}}});
        let p = serde_json::json!({"packet": {"events": {"load": load}}});
        u.load = load_of(&StoredParams::read(&p));
        u
    };
    let figs = figures(&[at(1, "nft", 41_000.0), at(2, "iptables-legacy", 12_000.0)]);
    let received: Vec<&Figure> = figs
        .iter()
        .filter(|f| f.id.ends_with("-received"))
        .collect();
    assert_eq!(
        received.len(),
        1,
        "{:?}",
        figs.iter().map(|f| &f.id).collect::<Vec<_>>()
    );
    let f = received[0];
    assert_eq!(f.id, "updates-add-1-20000-load-50-of-its-capacity-received");
    assert_eq!(f.series.len(), 2, "{:?}", f.series);
    assert!(
        f.notes.iter().any(|n| n.starts_with("nft by batch: ")
            && n.ends_with(
                " The background at 50 % of 41000 pps (its capacity, found by search)."
            )),
        "{:?}",
        f.notes
    );
    assert!(
        f.notes.iter().any(|n| n.starts_with("iptables-legacy by batch: ")
            && n.contains("50 % of 12000 pps")),
        "{:?}",
        f.notes
    );
    // One engine at two capacities: two lines, named by their loads.
    let figs = figures(&[at(1, "nft", 41_000.0), at(2, "nft", 12_000.0)]);
    let f = figs.iter().find(|f| f.id.ends_with("-received")).unwrap();
    let names: Vec<&str> = f.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "nft by batch (the background at 50 % of 12000 pps (its capacity, found by search))",
            "nft by batch (the background at 50 % of 41000 pps (its capacity, found by search))"
        ]
    );
}
