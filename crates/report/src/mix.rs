//! Size mixes (issue 37): packet trials sent with a mix of frame sizes (`--size imix`,
//! `csit-imix`, `64:7,576:4,1500:1`) as a grouped bar chart per configuration — the
//! packets sent and received of each frame size, summed over its trials — with the
//! loss of each size under it and in a table.
//!
//! Owns: this section's figure, notes and table. Must not: read the store (it gets the
//! typed trials, see `lib.rs`) or draw.

use crate::figure::{num, Figure, Point, Series, Table};
use crate::model::Trial;
use crate::series::bar_figure;
use results::stored::MixStored;
use results::Status;
use std::collections::BTreeMap;

/// One frame size of a configuration's mix, summed over its trials.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Size {
    frame: u32,
    weight: u32,
    sent: u64,
    received: u64,
}

impl Size {
    /// Lost in percent of sent (`None`: nothing sent).
    fn loss_pct(&self) -> Option<f64> {
        (self.sent > 0)
            .then(|| self.sent.saturating_sub(self.received) as f64 * 100.0 / self.sent as f64)
    }
}

/// A configuration's mix: its trials (ids), the mix as given and its sizes in the
/// stored order (the mix's sizes, then any other size received).
struct Mixed<'a> {
    first: &'a Trial,
    ids: Vec<i64>,
    mix: String,
    sizes: Vec<Size>,
    /// A trial received packets but no size was counted (the gateway counted them).
    at_gateway: bool,
}

/// The mixes of `trials` that ran (not failed or unavailable), by configuration.
fn mixes(trials: &[Trial]) -> Vec<Mixed<'_>> {
    let mut by: BTreeMap<&str, Mixed> = BTreeMap::new();
    for t in trials {
        // A search's steps probe it: no case of their own.
        if matches!(t.status, Status::Failed | Status::Unavailable) || t.step_of().is_some() {
            continue;
        }
        let Some(m) = t.stored.packet.as_ref().and_then(|p| p.mix.as_ref()) else {
            continue;
        };
        if m.sizes.is_empty() {
            continue;
        }
        let e = by.entry(t.trial_key.as_str()).or_insert_with(|| Mixed {
            first: t,
            ids: vec![],
            mix: m.mix.clone().unwrap_or_else(|| "?".into()),
            sizes: vec![],
            at_gateway: false,
        });
        e.ids.push(t.id);
        add(&mut e.sizes, m);
        let counted: u64 = m.sizes.iter().filter_map(|r| r.received).sum();
        e.at_gateway |= counted == 0 && t.headline.received_pps.is_some_and(|r| r > 0.0);
    }
    by.into_values().collect()
}

/// Add a trial's rows to `sizes`, size by size (a size first seen appended).
fn add(sizes: &mut Vec<Size>, m: &MixStored) {
    for r in &m.sizes {
        let Some(frame) = r.frame else { continue };
        let i = match sizes.iter().position(|s| s.frame == frame) {
            Some(i) => i,
            None => {
                sizes.push(Size {
                    frame,
                    weight: r.weight.unwrap_or(0),
                    ..Size::default()
                });
                sizes.len() - 1
            }
        };
        sizes[i].sent += r.sent.unwrap_or(0);
        sizes[i].received += r.received.unwrap_or(0);
    }
}

/// "flood with nft, 1000 rules": the configuration in words.
fn case(t: &Trial) -> String {
    let who = t.label_or_engine().unwrap_or_else(|| "?".into());
    match t.p.rules {
        Some(n) => format!("{} with {who}, {n} rules", t.workload),
        None => format!("{} with {who}", t.workload),
    }
}

/// "over trial 4" / "summed over 3 trials (4, 5, 6)".
fn over(ids: &[i64]) -> String {
    match ids {
        [one] => format!("trial {one}"),
        _ => {
            let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
            format!("summed over {} trials ({})", ids.len(), ids.join(", "))
        }
    }
}

/// A grouped bar chart per configuration sent with a size mix: per frame size, the
/// packets sent and received; its notes give each size's loss.
pub fn figures(trials: &[Trial]) -> Vec<Figure> {
    mixes(trials)
        .into_iter()
        .map(|m| {
            let cats: Vec<String> = m.sizes.iter().map(|s| format!("{} B", s.frame)).collect();
            let points = |f: fn(&Size) -> u64| -> Vec<Point> {
                m.sizes
                    .iter()
                    .enumerate()
                    .map(|(i, s)| Point {
                        x: i as f64,
                        y: f(s) as f64,
                        ci95: None,
                    })
                    .collect()
            };
            let mut f = bar_figure(
                &format!("size-mix-{}", m.first.id),
                &format!(
                    "Size mix {}: packets sent and received per frame size ({})",
                    m.mix,
                    case(m.first)
                ),
                "packets",
                cats,
                points(|s| s.sent),
            );
            f.x_label = "Ethernet frame, FCS included".into();
            f.series[0].name = "sent".into();
            if !m.at_gateway {
                f.series.push(Series {
                    name: "received".into(),
                    points: points(|s| s.received),
                    fit: false,
                });
            }
            f.notes.push(if m.at_gateway {
                format!(
                    "{}: the gateway counted what arrived, so received per size is unknown.",
                    over(&m.ids)
                )
            } else {
                let loss: Vec<String> = m
                    .sizes
                    .iter()
                    .filter_map(|s| Some(format!("{} B {} %", s.frame, num(s.loss_pct()?))))
                    .collect();
                format!("{}; lost: {}.", over(&m.ids), loss.join(", "))
            });
            f
        })
        .collect()
}

/// One table per configuration sent with a size mix: per frame size, its weight, the
/// packets sent, received and lost, and the loss in percent; then all sizes together.
pub fn tables(trials: &[Trial]) -> Vec<Table> {
    mixes(trials)
        .into_iter()
        .map(|m| {
            let total = m.sizes.iter().fold(Size::default(), |a, s| Size {
                sent: a.sent + s.sent,
                received: a.received + s.received,
                ..a
            });
            let row = |frame: String, weight: String, s: &Size| {
                let (received, lost, pct) = if m.at_gateway {
                    ("–".into(), "–".into(), "–".into())
                } else {
                    (
                        s.received.to_string(),
                        s.sent.saturating_sub(s.received).to_string(),
                        s.loss_pct().map(num).unwrap_or_else(|| "–".into()),
                    )
                };
                vec![frame, weight, s.sent.to_string(), received, lost, pct]
            };
            let mut rows: Vec<Vec<String>> = m
                .sizes
                .iter()
                .map(|s| row(s.frame.to_string(), s.weight.to_string(), s))
                .collect();
            rows.push(row("all".into(), String::new(), &total));
            Table::new(
                format!(
                    "Size mix {}: loss per frame size ({}, {})",
                    m.mix,
                    case(m.first),
                    over(&m.ids)
                ),
                &["frame (B)", "weight", "sent", "received", "lost", "lost %"],
                rows,
            )
        })
        .collect()
}

#[cfg(test)]
#[path = "mix_tests.rs"]
mod tests;
