//! NAT vs no NAT (issue 26): for a run with NAT models (snat, masquerade, dnat) next to
//! plain forwarding (engine none), what a packet and a new flow cost with each, a table,
//! a figure per workload and findings in sentences.
//!
//! Cost per packet comes from the flood trials: the gateway's kernel CPU time per
//! packet (`cpu_ns_per_packet`) where it was sampled, else the wall time per received
//! packet (`ns_per_packet`, which is the sender's when the sender set the rate). Cost
//! per new flow comes from the connection trials (each session is a new flow whose
//! first packet walks the NAT chain): the mean session time, `1e6 / sessions/s`.
//!
//! Owns: which configurations are NAT, their baseline, the NAT table, figure and
//! sentences.
//! Must not: compute statistics beyond differences of means (with their CIs combined).

use crate::figure::{mean_ci, num, Analysis, Point, Table};
use crate::model::Config;
use crate::series::bar_figure;
use results::StoredWorkload;

/// The models that translate addresses, and the stateful one without translation.
const NAT_MODELS: [&str; 3] = ["snat", "masquerade", "dnat"];
const CONNTRACK: &str = "conntrack";

/// A configuration's cost per unit (ns per packet, or µs per new flow) with its CI.
struct Cost {
    mean: f64,
    ci95: Option<f64>,
}

/// What a workload's unit is measured by: (metric, unit, scale) where cost =
/// scale / metric (sessions/s → µs per session) or the metric itself (scale 0).
fn cost_of(c: &Config) -> Option<(Cost, &'static str, &'static str)> {
    if c.workload.is_stream() {
        for (m, basis) in [
            ("cpu_ns_per_packet", "gateway kernel CPU ns per packet"),
            ("ns_per_packet", "ns per received packet"),
        ] {
            if let Some(s) = c.metrics.get(m) {
                return Some((
                    Cost {
                        mean: s.mean,
                        ci95: s.ci95,
                    },
                    "ns per packet",
                    basis,
                ));
            }
        }
        return None;
    }
    if c.workload.is_conn() {
        let s = c.metrics.get(crate::model::SESSIONS_PER_S)?;
        if s.mean <= 0.0 {
            return None;
        }
        // µs per session; the CI of 1/x by the delta method (relative widths equal).
        let mean = 1e6 / s.mean;
        return Some((
            Cost {
                mean,
                ci95: s.ci95.map(|ci| mean * ci / s.mean),
            },
            "µs per new flow",
            "mean session time (one new flow each)",
        ));
    }
    None
}

fn model_of(c: &Config) -> &str {
    c.param("model").unwrap_or("")
}

fn engine_of(c: &Config) -> &str {
    c.param("engine").unwrap_or("none")
}

fn rules_of(c: &Config) -> u64 {
    c.param("rules").and_then(|r| r.parse().ok()).unwrap_or(0)
}

/// Difference of two means with the CIs combined in quadrature.
fn diff(a: &Cost, b: &Cost) -> Cost {
    Cost {
        mean: a.mean - b.mean,
        ci95: match (a.ci95, b.ci95) {
            (Some(x), Some(y)) => Some((x * x + y * y).sqrt()),
            _ => None,
        },
    }
}

/// The NAT table, figures and findings of a run's configurations (nothing without a
/// NAT model).
pub fn analyse(ok: &[&Config], a: &mut Analysis) {
    if !ok.iter().any(|c| NAT_MODELS.contains(&model_of(c))) {
        return;
    }
    let mut rows = vec![];
    // One block per workload: its baseline is plain forwarding (engine none).
    let mut workloads: Vec<&StoredWorkload> = ok.iter().map(|c| &c.workload).collect();
    workloads.sort();
    workloads.dedup();
    for w in workloads {
        let here: Vec<(&Config, Cost, &str, &str)> = ok
            .iter()
            .filter(|c| &c.workload == w)
            .filter_map(|c| {
                let (cost, unit, basis) = cost_of(c)?;
                Some((*c, cost, unit, basis))
            })
            .collect();
        let plains: Vec<&(&Config, Cost, &str, &str)> =
            here.iter().filter(|(c, ..)| c.no_firewall()).collect();
        let Some(first) = plains.first() else {
            continue;
        };
        let (unit, basis) = (first.2, first.3);
        // Plain forwarding of the same rule count where the run has it (engine none
        // installs nothing either way; a second configuration is a second baseline).
        let plain_for = |c: &Config| {
            plains
                .iter()
                .find(|(p, ..)| rules_of(p) == rules_of(c))
                .unwrap_or(first)
        };
        let mut cats = vec![];
        let mut pts = vec![];
        let mut nat: Vec<&(&Config, Cost, &str, &str)> = here
            .iter()
            .filter(|(c, ..)| {
                let m = model_of(c);
                !c.no_firewall() && (NAT_MODELS.contains(&m) || m == CONNTRACK)
            })
            .collect();
        nat.sort_by_key(|(c, ..)| (engine_of(c).to_owned(), model_of(c).to_owned(), rules_of(c)));
        for (c, cost, ..) in &nat {
            let plain = plain_for(c);
            let d = diff(cost, &plain.1);
            let rules = if model_of(c) == CONNTRACK {
                "-".to_string()
            } else {
                rules_of(c).to_string()
            };
            let name = format!("{} {}", engine_of(c), model_of(c));
            rows.push(vec![
                w.to_string(),
                name.clone(),
                rules.clone(),
                c.reps.len().to_string(),
                format!("{} {unit}", mean_ci(cost.mean, cost.ci95)),
                format!("{:+} {unit}", PlusNum(d.mean)),
                format!(
                    "{:+.1} %",
                    if plain.1.mean > 0.0 {
                        d.mean / plain.1.mean * 100.0
                    } else {
                        0.0
                    }
                ),
            ]);
            cats.push(format!("{name} ({rules})"));
            pts.push(Point {
                x: pts.len() as f64,
                y: d.mean,
                ci95: d.ci95,
            });
            a.findings
                .push(sentence(w, &name, c, &d, cost, plain, &nat, unit, basis));
        }
        if !pts.is_empty() {
            a.figures.push(bar_figure(
                &format!("nat-{w}"),
                &format!("NAT vs plain forwarding ({w}): extra {unit} (rule count in brackets)"),
                &format!("extra {unit} vs plain forwarding"),
                cats,
                pts,
            ));
        }
    }
    if !rows.is_empty() {
        a.tables.push(Table {
            title: "NAT vs plain forwarding (engine none): cost per packet (flood) and per new \
                    flow (sessions)"
                .into(),
            columns: [
                "workload",
                "firewall",
                "NAT rules",
                "n",
                "cost (mean ± 95 % CI)",
                "vs plain forwarding",
                "change",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        });
    }
}

/// A signed number as [`num`] writes it.
struct PlusNum(f64);

impl std::fmt::Display for PlusNum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = num(self.0);
        if f.sign_plus() && self.0 >= 0.0 {
            write!(f, "+{s}")
        } else {
            f.write_str(&s)
        }
    }
}

/// "flood: nft snat (0 NAT rules) costs +120 ± 30 ns per packet over plain forwarding
/// (…), of which conntrack alone +90; 1000 NAT rules add …".
#[allow(clippy::too_many_arguments)]
fn sentence(
    w: &StoredWorkload,
    name: &str,
    c: &Config,
    d: &Cost,
    cost: &Cost,
    plain: &(&Config, Cost, &str, &str),
    all: &[&(&Config, Cost, &str, &str)],
    unit: &str,
    basis: &str,
) -> String {
    let m = model_of(c);
    let rules = rules_of(c);
    let head = if m == CONNTRACK {
        format!("{w}: {name} (stateful accept, no NAT)")
    } else {
        format!("{w}: {name} ({rules} NAT filler rules)")
    };
    let mut s = format!(
        "{head} {} over plain forwarding ({} vs {}; {basis}).",
        cost_text(d, unit, "costs"),
        num(cost.mean),
        num(plain.1.mean)
    );
    if NAT_MODELS.contains(&m) {
        // The same engine's conntrack alone: how much of it is tracking.
        let ct_of = |same_rules: bool| {
            all.iter().find(|(x, ..)| {
                engine_of(x) == engine_of(c)
                    && model_of(x) == CONNTRACK
                    && (!same_rules || rules_of(x) == rules)
            })
        };
        if let Some((_, ct, ..)) = ct_of(true).or_else(|| ct_of(false)) {
            let t = diff(cost, ct);
            s += &format!(
                " Against connection tracking alone ({} {}), the translation {}.",
                engine_of(c),
                CONNTRACK,
                cost_text(&t, unit, "adds")
            );
        }
        // The same engine and model with no NAT rules: what the fillers cost.
        if rules > 0 {
            if let Some((_, zero, ..)) = all.iter().find(|(x, ..)| {
                engine_of(x) == engine_of(c) && model_of(x) == m && rules_of(x) == 0
            }) {
                let r = diff(cost, zero);
                let measured = r
                    .ci95
                    .is_some_and(|ci| !results::Ci::ci95(ci).spans_zero(r.mean));
                s += &if measured {
                    format!(
                        " Its {rules} filler rules in the NAT chain add {} {unit} ({} {}).",
                        signed_ci(&r),
                        num(r.mean / rules as f64),
                        unit.replacen(" per ", " per rule per ", 1)
                    )
                } else {
                    format!(
                        " Its {rules} filler rules in the NAT chain add {}.",
                        cost_text(&r, unit, "adds").trim_start_matches("adds ")
                    )
                };
            }
        }
    }
    s
}

/// A difference stated only when measured (`results::witness`): "costs +120 ± 30 ns per
/// packet"; a CI that includes 0 is "has no measurable cost (−9000 ± 47000 ns per
/// packet: its 95 % CI includes 0)"; without a CI it is not called a cost either.
fn cost_text(d: &Cost, unit: &str, verb: &str) -> String {
    let f =
        results::Figure::difference(d.mean, d.ci95.map(results::Ci::ci95), results::Basis::Trial);
    if f.holds() {
        return format!("{verb} {} {unit}", signed_ci(d));
    }
    let why = match d.ci95 {
        Some(_) => "its 95 % CI includes 0",
        None => "no CI: too few repetitions",
    };
    let has = if verb == "adds" { "adds" } else { "has" };
    format!("{has} no measurable cost ({} {unit}: {why})", signed_ci(d))
}

fn signed_ci(d: &Cost) -> String {
    let m = mean_ci(d.mean, d.ci95);
    if d.mean >= 0.0 {
        format!("+{m}")
    } else {
        m
    }
}

#[cfg(test)]
#[path = "nat_tests.rs"]
mod tests;
