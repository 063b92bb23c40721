//! Seed 002's views of rate-limited flows as small multiples: one-way delay and jitter
//! vs rules (a panel per case, a series per engine and hook), and the gateway's CPU
//! utilisation per core in every state (user, system, softirq, irq, idle) vs rules (a
//! panel per engine and CPU, as the study's figures 6 and 7), averaged over the
//! parameters not shown, with the softirq saturation as a finding.
//!
//! Owns: those panels.
//! Must not: read the store; imports `figure`, `model`, `series`, `views` only.

use crate::figure::{mean_ci, num, Analysis, Figure};
use crate::model::Config;
use crate::series::{metric, param_text, varying, XOf, YOf};
use crate::views::{averaged_note, averaged_series};
use std::collections::BTreeSet;

/// CPU states in the order they are drawn.
pub const STATES: [&str; 5] = ["user", "system", "softirq", "irq", "idle"];

/// A softirq share (%) from which a core counts as saturated (the study: "almost 100 %").
pub const SATURATED: f64 = 90.0;

/// The name of a configuration's series in the delay/jitter panels: what varies among
/// engine, family and topology.
fn engine_hook(c: &Config, keys: &[String]) -> String {
    let parts: Vec<String> = ["engine", "topology"]
        .iter()
        .filter(|k| keys.iter().any(|v| v == *k))
        .filter_map(|k| param_text(c, k))
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join(", ")
    }
}

/// Delay and jitter vs rules, a panel per case (label) when there are several.
pub(crate) fn delay_jitter(packet: &[&Config], x: fn(&Config) -> Option<f64>, a: &mut Analysis) {
    let keys = varying(packet);
    let cases: BTreeSet<Option<&str>> = packet.iter().map(|c| c.param("label")).collect();
    for (metric_name, what, unit) in [
        (
            "owd_p50_us",
            "One-way delay (p50)",
            "one-way delay p50 (µs)",
        ),
        ("jitter_us", "Jitter", "jitter (µs)"),
    ] {
        let y: &YOf = &|c: &Config| metric(c, metric_name, 1.0);
        if !packet.iter().any(|c| y(c).is_some()) {
            continue;
        }
        let group = format!("{what} vs rules");
        for case in &cases {
            let cs: Vec<&Config> = packet
                .iter()
                .copied()
                .filter(|c| c.param("label") == *case)
                .collect();
            let xf: &XOf = &x;
            let series = averaged_series(&cs, &|c| Some(engine_hook(c, &keys)), xf, y);
            let slug = match case {
                Some(c) if cases.len() > 1 => format!("-{}", slug(c)),
                _ => String::new(),
            };
            let title = match case {
                Some(c) if cases.len() > 1 => format!("{what}: {c}"),
                _ => group.clone(),
            };
            let mut f = Figure::line(
                &format!("packet-{metric_name}-vs-rules{slug}"),
                &title,
                ("rules", unit),
                series,
            );
            f.notes.push(averaged_note(
                &cs,
                &["rules", "engine", "nft_family", "topology", "label"],
            ));
            if cases.len() > 1 {
                f.group = Some(group.clone());
            }
            a.figures.push(f);
        }
    }
}

/// Gateway CPU per core in every sampled state vs rules: a panel per engine and CPU,
/// a series per state, averaged over the rest (cases, hooks); a finding per engine and
/// core whose softirq share saturates.
pub(crate) fn cpu_per_core(packet: &[&Config], x: fn(&Config) -> Option<f64>, a: &mut Analysis) {
    let cpus: BTreeSet<usize> = packet
        .iter()
        .flat_map(|c| c.metrics.keys())
        .filter_map(|k| {
            let rest = k.strip_prefix("gateway.cpu")?;
            let (n, state) = rest.split_once('.')?;
            STATES.contains(&state).then(|| n.parse().ok())?
        })
        .collect();
    if cpus.is_empty() {
        return;
    }
    let present: BTreeSet<&str> = packet
        .iter()
        .flat_map(|c| c.metrics.keys())
        .filter_map(|k| k.strip_prefix("gateway.cpu")?.split_once('.').map(|p| p.1))
        .filter(|st| STATES.contains(st))
        .collect();
    let engines: BTreeSet<Option<String>> =
        packet.iter().map(|c| param_text(c, "engine")).collect();
    // The study's figures 6 and 7 are one packet size each: with several cases (the
    // preset's labels are the packet sizes), a panel per engine, case and CPU.
    let cases: BTreeSet<Option<&str>> = packet.iter().map(|c| c.param("label")).collect();
    let group = "Gateway CPU per core vs rules (every state)".to_string();
    for (engine, case) in engines
        .iter()
        .flat_map(|e| cases.iter().map(move |c| (e, c)))
    {
        let cs: Vec<&Config> = packet
            .iter()
            .copied()
            .filter(|c| param_text(c, "engine") == *engine && c.param("label") == *case)
            .collect();
        if cs.is_empty() {
            continue;
        }
        let (case_slug, case_title) = match case {
            Some(c) if cases.len() > 1 => (format!("-{}", slug(c)), format!(", {c}")),
            _ => (String::new(), String::new()),
        };
        for cpu in &cpus {
            let mut series = Vec::new();
            for state in STATES.iter().filter(|s| present.contains(*s)) {
                let key = format!("gateway.cpu{cpu}.{state}");
                let y: &YOf = &|c: &Config| metric(c, &key, 1.0);
                let xf: &XOf = &x;
                let got = averaged_series(&cs, &|_| Some(state.to_string()), xf, y);
                // A state sampled elsewhere but not here stays as an empty series: its
                // colour is the same in every panel.
                if got.is_empty() {
                    series.push(crate::figure::Series {
                        name: state.to_string(),
                        points: vec![],
                        fit: false,
                    });
                }
                series.extend(got);
            }
            if series.iter().all(|s| s.points.is_empty()) {
                continue;
            }
            if let Some(s) = series.iter().find(|s| s.name == "softirq") {
                if let Some(p) = s.points.iter().find(|p| p.y >= SATURATED) {
                    // A mean at 90 % whose CI reaches well below is no saturation
                    // measured (seed 002 here: "92 ± 74 %", forward and input averaged).
                    let said = match p.ci95.map(|c| p.y - c).filter(|low| *low < SATURATED) {
                        Some(low) => format!(
                            "not measurably saturated: its 95 % CI reaches down to {} % (the \
                             repetitions or the configurations averaged there differ; see the \
                             figure)",
                            crate::figure::at_place_of(low.max(0.0), p.ci95)
                        ),
                        None => "that core saturates handling software interrupts".to_string(),
                    };
                    a.findings.push(format!(
                        "Gateway CPU{cpu} softirq reaches {} % from {} rules on ({}{case_title}): \
                         {said}.",
                        mean_ci(p.y, p.ci95),
                        num(p.x),
                        engine.as_deref().unwrap_or("all engines")
                    ));
                }
            }
            let name = engine.as_deref().unwrap_or("all");
            let mut f = Figure::line(
                &format!("packet-cpu{cpu}-{}{case_slug}", slug(name)),
                &format!("CPU{cpu}: {name}{case_title}"),
                ("rules", "CPU (% of the core)"),
                series,
            );
            f.notes
                .push(averaged_note(&cs, &["rules", "engine", "nft_family"]));
            f.group = Some(group.clone());
            a.figures.push(f);
        }
    }
}

/// An identifier part from a label: lower-case letters and digits, dashes between.
fn slug(s: &str) -> String {
    let mut o = String::new();
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() {
            o.push(ch.to_ascii_lowercase());
        } else if !o.ends_with('-') {
            o.push('-');
        }
    }
    o.trim_matches('-').to_string()
}
