//! Conntrack workloads (issue 26) in the report: what the gateway's connection-tracking
//! table did with new flows, read from each trial's stored figures
//! (`results.packet.conntrack`): the findings in sentences (admitted, dropped, the
//! kernel's counters, whether they agree with the loss the traffic saw), and two
//! figures — flows dropped and admitted vs flows offered (around `nf_conntrack_max`),
//! and admitted new flows/s vs rules.
//!
//! Owns: those sentences and figures. Must not: measure, or compute more than means
//! over a configuration's repetitions.

use crate::figure::{num, Figure, Point, Series};
use crate::model::Trial;
use results::Status;
use std::collections::BTreeMap;

/// One trial's conntrack figures, as stored.
#[derive(Debug, Clone, PartialEq)]
struct Ct {
    engine: String,
    rules: u64,
    max: u64,
    offered: f64,
    admitted: f64,
    dropped: f64,
    ct_drop: f64,
    insert_failed: f64,
    early_drop: f64,
    entries_after: f64,
    new_flows_per_s: f64,
    agree: bool,
    global: bool,
    /// fwbench's own sender or sink limited it ("sender", "sink"): its rate
    /// (`new_flows_per_s`) is fwbench's, not the gateway's, and is left out; a sink's
    /// limit also its flows admitted and dropped (the sink's count).
    limited: Option<&'static str>,
}

/// A new-flow trial's figures (flood and flow trials with a conntrack setting count
/// packets, not flows: they are not new-flow findings).
fn of(t: &Trial) -> Option<Ct> {
    if !t.workload.new_flows() {
        return None;
    }
    table_of(t)
}

fn table_of(t: &Trial) -> Option<Ct> {
    // A search's steps probe it (an ndr-newflows' guessed rates each a finding of their
    // own otherwise); the search's row states its answer.
    if t.status != Status::Ok || t.step_of().is_some() {
        return None;
    }
    let c = t.stored.packet.as_ref()?.conntrack.as_ref()?;
    let f = |k: Option<f64>| k.unwrap_or(0.0);
    Some(Ct {
        engine: t.p.engine.clone().unwrap_or_else(|| "-".into()),
        rules: t.p.rules.unwrap_or(0),
        max: c.max.unwrap_or(0),
        offered: f(c.offered),
        admitted: f(c.admitted),
        dropped: f(c.dropped),
        ct_drop: f(c.ct_drop),
        insert_failed: f(c.insert_failed),
        early_drop: f(c.early_drop),
        entries_after: f(c.entries_after),
        new_flows_per_s: f(c.new_flows_per_s),
        agree: c.agree == Some(true),
        global: c.scope.iter().any(|(_, scope)| scope == "global"),
        limited: t.fwbench_limited().map(|b| b.as_str()),
    })
}

/// Of `v`, the trials whose figure is the gateway's — those `counts` does not leave
/// out of the roles `limited` says limited them (the rate: every trial fwbench's sender
/// or sink limited; the flows admitted and dropped, counted at the sink: those its sink
/// limited) — with how many were left out; or why none is stated (every one left out,
/// or most: the rest are no fair sample).
fn kept<T>(
    v: &[T],
    limited: impl Fn(&T) -> Option<&'static str>,
    counts: impl Fn(&str) -> bool,
) -> Result<(Vec<&T>, Option<String>), String> {
    let (out, kept): (Vec<&T>, Vec<&T>) = v.iter().partition(|c| limited(c).is_some_and(&counts));
    let roles: std::collections::BTreeSet<&str> = out.iter().filter_map(|c| limited(c)).collect();
    let roles = roles.into_iter().collect::<Vec<_>>().join(" and ");
    if kept.is_empty() {
        return Err(format!("fwbench's {roles} limited every trial"));
    }
    if 2 * out.len() > v.len() {
        return Err(format!(
            "fwbench's {roles} limited {} of {} trials: the rest are no fair sample",
            out.len(),
            v.len()
        ));
    }
    let left = (!out.is_empty()).then(|| {
        format!(
            "over the {} of {} trials fwbench's {roles} did not limit",
            kept.len(),
            v.len()
        )
    });
    Ok((kept, left))
}

/// The role that limited a trial of [`Ct`]s ([`kept`]).
fn role_of(c: &Ct) -> Option<&'static str> {
    c.limited
}

/// A trial's figure, drawn ([`line`]).
type Value = fn(&Ct) -> f64;

/// Which of fwbench's roles leave a trial out of a figure ([`kept`]).
type Role = fn(&str) -> bool;

/// The points of `m` (x → its trials) by `f` over the trials whose figure is the
/// gateway's (`role`: which limits leave a trial out, [`kept`]); each x left without
/// one said in `gone` ("nft at 200 rules: no point — …": `name` the series', `unit`
/// the x's).
fn line(
    m: &BTreeMap<u64, Vec<Ct>>,
    (f, role): (Value, Role),
    (name, unit): (&str, &str),
    gone: &mut Vec<String>,
) -> Vec<Point> {
    let mut points = vec![];
    for (x, v) in m {
        match kept(v, role_of, role) {
            Ok((k, _)) => points.push(Point {
                x: *x as f64,
                y: mean_of(&k, f),
                ci95: None,
            }),
            Err(why) => gone.push(format!("{name} at {x} {unit}: no point — {why}.")),
        }
    }
    points
}

/// Every trial fwbench's sender or sink limited: its new flows/s are fwbench's.
fn any_role(_: &str) -> bool {
    true
}

/// A trial its sink limited: the flows it admitted are those the sink counted.
fn sink_role(role: &str) -> bool {
    role == "sink"
}

/// Mean of `f` over trials.
fn mean_of(v: &[&Ct], f: impl Fn(&Ct) -> f64) -> f64 {
    v.iter().map(|c| f(c)).sum::<f64>() / v.len().max(1) as f64
}

/// Configurations: (engine, rules, max, offered flows) → their trials.
type Configs = BTreeMap<(String, u64, u64, u64), Vec<Ct>>;

fn configs(trials: &[Trial]) -> Configs {
    let mut by: Configs = BTreeMap::new();
    for c in trials.iter().filter_map(of) {
        by.entry((c.engine.clone(), c.rules, c.max, c.offered as u64))
            .or_default()
            .push(c);
    }
    by
}

/// One sentence per configuration: "engine=nft, 10 rules: with nf_conntrack_max = 5000
/// and 8000 offered flows, the gateway admitted 5784 and dropped 2216 new flows (drop
/// counter 2216, insert_failed 0, early_drop 784) …".
pub fn findings(trials: &[Trial]) -> Vec<String> {
    configs(trials)
        .into_iter()
        .map(|((engine, rules, max, offered), v)| {
            let all: Vec<&Ct> = v.iter().collect();
            let m = |f: fn(&Ct) -> f64| num(mean_of(&all, f));
            let over = if v.len() > 1 {
                format!("means of {} trials: ", v.len())
            } else {
                String::new()
            };
            let global = if v.iter().any(|c| c.global) {
                " (host-wide: global on this kernel)"
            } else {
                ""
            };
            let disagree = v.iter().filter(|c| !c.agree).count();
            let check = if disagree == 0 {
                "the loss the traffic saw equals the gateway's refusals (drop + insert_failed)"
                    .to_string()
            } else {
                format!(
                    "in {disagree} of {} trials the traffic lost flows the gateway did not \
                     count as refused (losses elsewhere on the path)",
                    v.len()
                )
            };
            // Flows and their rate only of trials where they are the gateway's; the
            // kernel's counters of every trial.
            let left = |l: Option<String>| l.map(|l| format!(" ({l})")).unwrap_or_default();
            // Where neither is stated for one reason, it is said once, after the
            // kernel's counters.
            let (flows, rate) = (kept(&v, role_of, sink_role), kept(&v, role_of, any_role));
            let (flows, per_s) = match (flows, rate) {
                (Err(why), Err(same)) if why == same => (
                    "no admitted or dropped flows stated".to_string(),
                    format!("; no admitted new flows/s either): {why}"),
                ),
                (flows, rate) => (
                    match flows {
                        Ok((k, l)) => format!(
                            "the gateway admitted {} and dropped {} new flows{}",
                            num(mean_of(&k, |c| c.admitted)),
                            num(mean_of(&k, |c| c.dropped)),
                            left(l)
                        ),
                        Err(why) => format!("no admitted or dropped flows stated ({why})"),
                    },
                    match rate {
                        Ok((k, l)) => format!(
                            "; {} admitted new flows/s{})",
                            num(mean_of(&k, |c| c.new_flows_per_s)),
                            left(l)
                        ),
                        Err(why) => format!("; no admitted new flows/s stated: {why})"),
                    },
                ),
            };
            format!(
                "engine={engine}, {rules} rules: {over}with nf_conntrack_max = {max}{global} and \
                 {offered} offered flows, {flows} (drop counter {}, insert_failed {}, \
                 early_drop {}; {} entries at the end{per_s}; {check}.",
                m(|c| c.ct_drop),
                m(|c| c.insert_failed),
                m(|c| c.early_drop),
                m(|c| c.entries_after),
            )
        })
        .collect()
}

/// Dropped and admitted flows vs offered flows (per engine and `nf_conntrack_max`), and
/// admitted new flows/s vs rules (per engine); each when the run has two x values.
pub fn figures(trials: &[Trial]) -> Vec<Figure> {
    let by = configs(trials);
    let mut out = vec![];
    // (engine, max) → offered → trials.
    let mut offered: BTreeMap<String, BTreeMap<u64, Vec<Ct>>> = BTreeMap::new();
    // engine → rules → trials.
    let mut rules: BTreeMap<String, BTreeMap<u64, Vec<Ct>>> = BTreeMap::new();
    for ((engine, r, max, o), v) in &by {
        offered
            .entry(format!("{engine}, nf_conntrack_max {max}"))
            .or_default()
            .entry(*o)
            .or_default()
            .extend(v.iter().cloned());
        rules
            .entry(engine.clone())
            .or_default()
            .entry(*r)
            .or_default()
            .extend(v.iter().cloned());
    }
    if offered.values().any(|m| m.len() > 1) {
        let (mut series, mut gone) = (vec![], vec![]);
        for (name, m) in &offered {
            // Dropped and admitted rest on the same trials: one note for both.
            let mut twice = vec![];
            series.push(Series {
                name: format!("{name}: dropped"),
                points: line(
                    m,
                    (|c| c.dropped, sink_role),
                    (name, "offered flows"),
                    &mut gone,
                ),
                fit: false,
            });
            series.push(Series {
                name: format!("{name}: admitted"),
                points: line(
                    m,
                    (|c| c.admitted, sink_role),
                    (name, "offered flows"),
                    &mut twice,
                ),
                fit: false,
            });
        }
        let mut f = Figure::line(
            "conntrack-drops-vs-offered",
            "New flows dropped and admitted vs flows offered (conntrack table full)",
            ("new flows offered", "flows"),
            series,
        );
        f.notes.push(
            "Admitted can exceed nf_conntrack_max: the kernel evicts unreplied entries \
             (early_drop) to make room for new ones."
                .into(),
        );
        let sink = by
            .values()
            .flatten()
            .map(|c| c.limited.filter(|r| sink_role(r)));
        f.notes.extend(left_out(
            sink,
            "their flows are those fwbench's sink counted",
        ));
        f.notes.extend(gone);
        out.push(f);
    }
    out.extend(occupancy(trials));
    if rules.values().any(|m| m.len() > 1) {
        // Each point over the trials fwbench did not limit; none where it limited most.
        let mut gone = vec![];
        let series = rules
            .iter()
            .map(|(engine, m)| Series {
                name: engine.clone(),
                points: line(
                    m,
                    (|c| c.new_flows_per_s, any_role),
                    (engine, "rules"),
                    &mut gone,
                ),
                fit: false,
            })
            .collect();
        let mut f = Figure::line(
            "conntrack-new-flows-vs-rules",
            "Admitted new flows per second vs rules (stateful rule set)",
            ("rules", "new flows/s admitted"),
            series,
        );
        let limited = by.values().flatten().map(|c| c.limited);
        f.notes
            .extend(left_out(limited, "their rate is fwbench's limit"));
        f.notes.extend(gone);
        out.push(f);
    }
    out
}

/// Table fill: packets/s of the trial's (tracked) flows vs the entries in the table at
/// its start, per engine and bucket count — the cost of a lookup as the table fills.
fn occupancy(trials: &[Trial]) -> Option<Figure> {
    // Series → entries → (packets/s, what of fwbench's limited it).
    type Fills = BTreeMap<u64, Vec<(f64, Option<&'static str>)>>;
    let mut by: BTreeMap<String, Fills> = BTreeMap::new();
    for t in trials.iter().filter(|t| t.workload.is_stream()) {
        let (Some(c), Some(pps)) = (table_of(t), t.headline.received_pps) else {
            continue;
        };
        let stored = t.stored.packet.as_ref().and_then(|p| p.conntrack.as_ref());
        let entries = stored.and_then(|s| s.entries_before).unwrap_or(0);
        let buckets = stored.and_then(|s| s.buckets).unwrap_or(0);
        by.entry(format!("{}, {buckets} buckets", c.engine))
            .or_default()
            .entry(entries)
            .or_default()
            .push((pps, c.limited));
    }
    if !by.values().any(|m| m.len() > 1) {
        return None;
    }
    // A rate fwbench's sender or sink set is not the gateway's lookup cost: each point
    // over the floods it did not limit, none where it limited most.
    let limited: Vec<Option<&'static str>> = by
        .values()
        .flatten()
        .flat_map(|(_, v)| v.iter().map(|p| p.1))
        .collect();
    let mut gone = vec![];
    let mut series = vec![];
    for (name, m) in by {
        let mut points = vec![];
        for (x, v) in m {
            match kept(&v, |p| p.1, any_role) {
                Ok((k, _)) => points.push(Point {
                    x: x as f64,
                    y: k.iter().map(|p| p.0).sum::<f64>() / k.len() as f64,
                    ci95: None,
                }),
                Err(why) => gone.push(format!("{name} at {x} entries: no point — {why}.")),
            }
        }
        series.push(Series {
            name,
            points,
            fit: false,
        });
    }
    let mut f = Figure::line(
        "conntrack-pps-vs-occupancy",
        "Packets/s of a tracked flow vs conntrack table occupancy",
        ("entries in the table at the start", "received packets/s"),
        series,
    );
    f.notes.push(
        "The table was filled with idle entries (--ct-fill) before each trial; the \
         trial's packets are looked up among them."
            .into(),
    );
    f.notes
        .extend(left_out(limited, "their rate is fwbench's limit"));
    f.notes.extend(gone);
    Some(f)
}

/// "2 trials limited by fwbench's sender are not drawn: …" of the roles that limited
/// the trials of a figure (`None` each one fwbench did not limit; `their` what their
/// figure is instead of the gateway's); `None` without any.
fn left_out(
    limited: impl IntoIterator<Item = Option<&'static str>>,
    their: &str,
) -> Option<String> {
    let roles: Vec<&str> = limited.into_iter().flatten().collect();
    let n = roles.len();
    let roles: std::collections::BTreeSet<&str> = roles.into_iter().collect();
    (n > 0).then(|| {
        format!(
            "{n} trial(s) limited by fwbench's {} are not drawn: {their}, not the \
             gateway's.",
            roles.into_iter().collect::<Vec<_>>().join(" and ")
        )
    })
}

#[cfg(test)]
#[path = "conntrack_tests.rs"]
mod tests;
