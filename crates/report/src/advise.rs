//! "Rules advise": a `rules advise --measure --db` run — floods through the original
//! and the optimised ruleset, told apart by the imported file (`original.nft` and
//! `optimised.nft`, or `original.rules` and `optimised.rules`, in one directory) — as
//! one figure: the time per packet (1 / received packets per second at the highest
//! rate) of each ruleset with its 95 % CI, and the saving per packet (original −
//! optimised) with its 95 % CI (Welch); and the answer in a sentence.
//!
//! Owns: choosing those trials, the figure and the sentence. Must not: read the store
//! (it gets the run's trials) or draw.

use crate::figure::{mean_ci, num, Figure, Kind, Point, Series};
use crate::model::Trial;
use crate::stats::{difference, Difference, Summary};
use std::collections::BTreeMap;

/// One flood's time per packet (ns, 1 / received packets per second) and whether
/// fwbench's own sender or sink limited it: its time is then an upper bound of the
/// gateway's (the gateway passed all it was offered, or forwarded more than the sink
/// counted). A cheap optimised ruleset often passes all a one-thread sender offers.
pub type Flood = (f64, bool);

/// What two rulesets' floods may state of the saving per packet (original −
/// optimised). A side with a flood fwbench limited is a bound: each of its floods is
/// the gateway's time or more, so their mean is an upper bound of the gateway's —
/// never the others alone, which would keep the slow draws (an original side's then
/// overstates the saving).
#[derive(Debug, Clone, PartialEq)]
pub struct Saving {
    pub original: Summary,
    pub optimised: Summary,
    /// The saving: original − optimised, Welch, over every flood of each side.
    pub saving: Difference,
    /// Floods fwbench limited, per side.
    pub limited: [usize; 2],
}

/// What a [`Saving`] states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Both sides the gateway's, the CI clear of 0.
    Measured,
    /// fwbench limited the optimised side only, the saving above 0 with its CI: a
    /// lower bound.
    AtLeast,
    /// Its CI includes 0, or (the optimised side bounded) it is not above 0.
    NotMeasurable,
    /// No CI (one flood a side, or no spread).
    NoCi,
    /// fwbench limited the original side: its time is fwbench's; nothing is stated.
    NotStated,
}

impl Verdict {
    /// Its name in `rules advise -J`'s `measured.saving_is`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Measured => "measured",
            Verdict::AtLeast => "at least",
            Verdict::NotMeasurable => "not measurable",
            Verdict::NoCi => "no CI",
            Verdict::NotStated => "not stated",
        }
    }
}

impl Saving {
    /// The saving of the original's floods (`floods[0]`) and the optimised's; `None`
    /// when a side has none.
    pub fn of(floods: [&[Flood]; 2]) -> Option<Saving> {
        let ns = |f: &[Flood]| f.iter().map(|x| x.0).collect::<Vec<f64>>();
        let limited = |f: &[Flood]| f.iter().filter(|x| x.1).count();
        let (o, n) = (ns(floods[0]), ns(floods[1]));
        Some(Saving {
            original: Summary::of(&o)?,
            optimised: Summary::of(&n)?,
            saving: difference(&n, &o)?,
            limited: [limited(floods[0]), limited(floods[1])],
        })
    }

    /// What it states ([`Verdict`]).
    pub fn verdict(&self) -> Verdict {
        let d = &self.saving;
        let f = results::Figure::difference(
            d.delta,
            d.ci95.map(results::Ci::ci95),
            results::Basis::Trial,
        );
        match (self.limited, d.ci95) {
            ([o, _], _) if o > 0 => Verdict::NotStated,
            (_, None) => Verdict::NoCi,
            _ if !f.holds() => Verdict::NotMeasurable,
            ([_, n], Some(_)) if n > 0 && d.delta > 0.0 => Verdict::AtLeast,
            ([_, n], Some(_)) if n > 0 => Verdict::NotMeasurable,
            _ => Verdict::Measured,
        }
    }

    /// "the optimised ruleset saves 3960 ± 600 ns per packet (95 % CI, Welch; 3 and 3
    /// floods): 2.1× cheaper per packet — original 7650 ± 660 ns, optimised 3690 ± 190
    /// ns per packet"; "at least" that where fwbench limited a flood through the
    /// optimised ruleset; nothing where it limited one through the original; "no
    /// measurable saving" where its CI includes 0; no saving without a CI.
    pub fn text(&self) -> String {
        let (o, n, d) = (&self.original, &self.optimised, &self.saving);
        let times = format!(
            "original {} ns, optimised {} ns per packet",
            mean_ci(o.mean, o.ci95),
            mean_ci(n.mean, n.ci95)
        );
        let floods = format!("95 % CI, Welch; {} and {} floods", o.n, n.n);
        // Why a side's time is a bound: fwbench, not the gateway, set its rate.
        let by = |i: usize| {
            format!(
                "fwbench's sender or sink limited {} of the {} floods through the {} ruleset, \
                 so its time per packet is at most what it measured",
                self.limited[i],
                [o.n, n.n][i],
                ["original", "optimised"][i]
            )
        };
        let bound = match self.limited[1] {
            0 => String::new(),
            _ => format!(" ({})", by(1)),
        };
        match self.verdict() {
            Verdict::NotStated => format!(
                "no saving is stated: {} — fwbench's time, not the gateway's; {times}",
                by(0)
            ),
            Verdict::NoCi => format!(
                "no saving is measured: {} ns per packet has no CI ({} and {} floods, no \
                 spread to test){bound} — {times}",
                num(d.delta),
                o.n,
                n.n
            ),
            Verdict::NotMeasurable => format!(
                "no measurable saving: {} ns per packet ({floods}){bound} — {times}",
                mean_ci(d.delta, d.ci95)
            ),
            Verdict::AtLeast => format!(
                "the optimised ruleset saves at least {} ns per packet ({floods}): at least \
                 {}× cheaper per packet{bound} — {times}",
                mean_ci(d.delta, d.ci95),
                num((o.mean / n.mean * 10.0).floor() / 10.0)
            ),
            Verdict::Measured if d.delta > 0.0 => format!(
                "the optimised ruleset saves {} ns per packet ({floods}): {}× cheaper per \
                 packet — {times}",
                mean_ci(d.delta, d.ci95),
                num((o.mean / n.mean * 10.0).round() / 10.0)
            ),
            Verdict::Measured => format!(
                "the optimised ruleset saves {} ns per packet ({floods}): {}× dearer per \
                 packet — {times}",
                mean_ci(d.delta, d.ci95),
                num((n.mean / o.mean * 10.0).round() / 10.0)
            ),
        }
    }
}

/// The two rulesets' floods of one measurement: each measured flood, and the floods
/// that were not measured.
#[derive(Default)]
struct Pair {
    floods: [Vec<Flood>; 2],
    /// Floods that ended ok but whose traffic did not arrive.
    unmeasured: usize,
    /// Floods that did not end ok (flagged, dropped, failed): their times may not be
    /// stated, and a saving of the rest would rest on the floods that happened to pass
    /// (the command itself states none then).
    not_ok: usize,
}

impl Pair {
    /// Why no saving is stated of it: some flood did not end ok.
    fn withheld(&self) -> Option<String> {
        (self.not_ok > 0).then(|| {
            let (n, floods) = (
                self.not_ok,
                if self.not_ok == 1 { "flood" } else { "floods" },
            );
            format!(
                "no saving stated — {n} {floods} did not end ok (flagged, dropped or failed: \
                 the trials table says why), and a saving of the rest would rest on the \
                 floods that happened to pass"
            )
        })
    }
}

/// Which ruleset a trial's imported file is (0: original, 1: optimised), and the
/// measurement it belongs to (engine, directory, destination port).
fn side(t: &Trial) -> Option<(usize, String)> {
    let import = std::path::Path::new(t.p.import.as_deref()?);
    let which = match import.file_name()?.to_str()? {
        "original.nft" | "original.rules" => 0,
        "optimised.nft" | "optimised.rules" => 1,
        _ => return None,
    };
    let dport =
        t.p.packet
            .as_ref()
            .and_then(|p| p.dport.first())
            .map_or(String::new(), |p| format!(", udp port {p}"));
    let key = format!(
        "engine {}{dport} ({})",
        t.p.engine.as_deref().unwrap_or("?"),
        import.parent()?.display()
    );
    Some((which, key))
}

fn pairs(trials: &[Trial]) -> BTreeMap<String, Pair> {
    let mut by: BTreeMap<String, Pair> = BTreeMap::new();
    for t in trials {
        let Some((which, key)) = side(t) else {
            continue;
        };
        let p = by.entry(key).or_default();
        if t.status != results::Status::Ok {
            p.not_ok += 1;
            continue;
        }
        match t.headline.received_pps.filter(|p| *p > 0.0) {
            Some(pps) => p.floods[which].push((1e9 / pps, t.fwbench_limited().is_some())),
            None => p.unmeasured += 1,
        }
    }
    // A measurement with a flood that did not end ok is kept to say so, even where it
    // left a side without a flood.
    by.retain(|_, p| p.not_ok > 0 || (!p.floods[0].is_empty() && !p.floods[1].is_empty()));
    by
}

/// The measurement's name without the scratch directory it ran in.
fn short(key: &str) -> &str {
    key.split(" (").next().unwrap_or(key)
}

/// The figure of each measurement in the run: bars for the original, the optimised
/// ruleset and the saving, each with its 95 % CI.
pub fn figures(trials: &[Trial]) -> Vec<Figure> {
    pairs(trials)
        .into_iter()
        .filter_map(|(key, p)| {
            let s = Saving::of([&p.floods[0], &p.floods[1]])?;
            let bar = |x: f64, y: f64, ci95: Option<f64>| Point { x, y, ci95 };
            let mut points = vec![
                bar(0.0, s.original.mean, s.original.ci95),
                bar(1.0, s.optimised.mean, s.optimised.ci95),
            ];
            let mut categories = vec!["original".to_string(), "optimised".to_string()];
            let withheld = p.withheld();
            if withheld.is_none() {
                points.push(bar(2.0, s.saving.delta, s.saving.ci95));
                categories.push("saving (original − optimised)".into());
            }
            let mut notes = vec![format!(
                "{} floods through each ruleset at the highest rate, interleaved; a bar \
                 is the mean time per packet (1 / received packets per second), its \
                 whisker the 95 % CI; the saving's CI is Welch's.",
                p.floods[0].len().min(p.floods[1].len())
            )];
            // What the bars may not say alone: a bound (a side fwbench limited), or
            // no saving.
            if let Some(why) = withheld {
                notes.push(format!("Saving: {why}."));
            } else if s.verdict() != Verdict::Measured {
                notes.push(format!("Saving: {}.", s.text()));
            }
            if p.unmeasured > 0 {
                notes.push(format!(
                    "{} floods are not plotted: their traffic did not arrive.",
                    p.unmeasured
                ));
            }
            Some(Figure {
                id: "advise".into(),
                title: format!(
                    "Rules advise: time per packet, original vs optimised ruleset ({})",
                    short(&key)
                ),
                x_label: "ruleset".into(),
                y_label: "time per packet (ns, 1 / received pps)".into(),
                kind: Kind::Bar,
                series: vec![Series {
                    name: short(&key).to_owned(),
                    points,
                    fit: false,
                }],
                categories,
                markers: vec![],
                spans: vec![],
                overlay: None,
                notes,
                group: None,
            })
        })
        .collect()
}

/// The answer per measurement: the saving per packet with its CI, the ratio, both
/// rulesets' times.
pub fn findings(trials: &[Trial]) -> Vec<String> {
    pairs(trials)
        .into_iter()
        .filter_map(|(key, p)| {
            let text = match p.withheld() {
                Some(why) => why,
                None => Saving::of([&p.floods[0], &p.floods[1]])?.text(),
            };
            Some(format!("rules advise ({}): {text}.", short(&key)))
        })
        .collect()
}

#[cfg(test)]
#[path = "advise_tests.rs"]
mod tests;
