//! NAT vs no NAT (issue 26): for a run with NAT models (snat, masquerade, dnat) next to
//! plain forwarding (engine none), what a packet and a new flow cost with each, a table,
//! a figure per workload and findings in sentences.
//!
//! Cost per packet comes from the flood trials: the gateway's kernel CPU time per
//! packet (`cpu_ns_per_packet`) where it was sampled, else the wall time per received
//! packet (`ns_per_packet`, which is the sender's when the sender set the rate). Cost
//! per new flow comes from the connection trials (each session is a new flow whose
//! first packet walks the NAT chain): the mean session time, `1e6 / sessions/s`.
//! One measure serves a whole traffic (the first every configuration has), and one
//! baseline per traffic (the workload's parameters but the firewall's: a 1500-byte
//! flood is never set against a 64-byte one): every plain-forwarding trial of it,
//! whatever its rule settings (engine none installs nothing), compared only with
//! configurations placed as it was.
//!
//! Owns: which configurations are NAT, their baseline, the NAT table, figure and
//! sentences.
//! Must not: compute statistics beyond differences of means (with their CIs combined).

use crate::figure::{mean_ci, num, Analysis, Point, Table};
use crate::model::{placements, Config, FwbenchLimit, Paced};
use crate::series::bar_figure;
use results::StoredWorkload;
use std::collections::{BTreeMap, BTreeSet};

/// The models that translate addresses, and the stateful one without translation.
const NAT_MODELS: [&str; 3] = ["snat", "masquerade", "dnat"];
const CONNTRACK: &str = "conntrack";
/// The parameters that say the firewall (a scenario's `[[firewall]]` and rule
/// settings), not the traffic: configurations alike but for them share one traffic,
/// one plain-forwarding baseline and one conntrack-alone comparison.
const FIREWALL_KEYS: [&str; 9] = [
    "engine",
    "model",
    "rules",
    "label",
    "nft_family",
    "position",
    "import",
    "import_ipset",
    "nat_to",
];

/// A configuration's traffic: its parameters but the firewall's.
fn traffic_of(c: &Config) -> BTreeMap<&str, &str> {
    c.flat
        .iter()
        .filter(|(k, _)| !FIREWALL_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// A configuration's cost per unit (ns per packet, or µs per new flow) with its CI.
struct Cost {
    mean: f64,
    ci95: Option<f64>,
}

/// How a workload's cost is measured: the metric, the cost's unit, its basis in
/// words, and whether the cost is the metric's reciprocal (sessions/s → µs per session).
#[derive(Clone, Copy)]
struct Measure {
    metric: &'static str,
    unit: &'static str,
    basis: &'static str,
    reciprocal: bool,
    /// What it samples of the gateway, in a sentence ("CPU time per packet").
    sample: &'static str,
    /// Wall time per received packet: where a repetition passed every packet offered,
    /// the sender's pace ([`paced`]).
    wall_per_packet: bool,
}

/// The measures of a workload, in order of preference: the first one every
/// configuration compared has is used for all of them (never one configuration's CPU
/// time against another's wall time).
fn measures(c: &Config) -> &'static [Measure] {
    const STREAM: [Measure; 2] = [
        Measure {
            metric: "cpu_ns_per_packet",
            unit: "ns per packet",
            basis: "kernel CPU ns per packet on the data path's CPUs (sender and sink too: \
                    the differences are the gateway's)",
            reciprocal: false,
            sample: "CPU time per packet",
            wall_per_packet: false,
        },
        Measure {
            metric: "ns_per_packet",
            unit: "ns per packet",
            basis: "ns per received packet",
            reciprocal: false,
            sample: "time per packet",
            wall_per_packet: true,
        },
    ];
    const CONN: [Measure; 1] = [Measure {
        metric: crate::model::SESSIONS_PER_S,
        unit: "µs per new flow",
        basis: "mean session time (one new flow each)",
        reciprocal: true,
        sample: "session rate",
        wall_per_packet: false,
    }];
    if c.workload.is_stream() {
        &STREAM
    } else if c.workload.is_conn() {
        &CONN
    } else {
        &[]
    }
}

/// A configuration's cost by `m`.
fn cost_of(c: &Config, m: &Measure) -> Option<Cost> {
    let s = c.metrics.get(m.metric)?;
    if !m.reciprocal {
        return Some(Cost {
            mean: s.mean,
            ci95: s.ci95,
        });
    }
    if s.mean <= 0.0 {
        return None;
    }
    // µs per session; the CI of 1/x by the delta method (relative widths equal).
    let mean = 1e6 / s.mean;
    Some(Cost {
        mean,
        ci95: s.ci95.map(|ci| mean * ci / s.mean),
    })
}

/// Plain forwarding's cost, one baseline for every comparison of a workload (and an
/// engine's conntrack alone, whose model installs one rule whatever `rules` says): the
/// repetitions of every configuration of engine none pooled, whatever their rule
/// settings (engine none installs nothing, so `rules = 0` and `rules = 1000` are one
/// gateway measured in two groups of trials; comparing each NAT rule count with its
/// own group compared it with a few trials' noise — 17 935 ns against 8 248 in one
/// run). Falls back to the first configuration's summary without per-repetition
/// values. Returns the cost and how many trials it pools.
fn pooled_cost(plains: &[&Config], m: &Measure) -> Option<(Cost, usize)> {
    let values: Vec<f64> = plains
        .iter()
        .flat_map(|c| {
            c.gateway_values
                .get(m.metric)
                .into_iter()
                .flatten()
                .copied()
        })
        .filter(|v| v.is_finite() && (!m.reciprocal || *v > 0.0))
        .map(|v| if m.reciprocal { 1e6 / v } else { v })
        .collect();
    if let Some(s) = crate::stats::Summary::of(&values) {
        return Some((
            Cost {
                mean: s.mean,
                ci95: s.ci95,
            },
            s.n,
        ));
    }
    let first = plains.first()?;
    Some((cost_of(first, m)?, first.metrics.get(m.metric)?.n))
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
    let mut workloads: Vec<&StoredWorkload> = ok.iter().map(|c| &c.workload).collect();
    workloads.sort();
    workloads.dedup();
    for w in workloads {
        let of_w: Vec<&Config> = ok
            .iter()
            .filter(|c| &c.workload == w)
            .filter(|c| {
                let m = model_of(c);
                c.no_firewall() || NAT_MODELS.contains(&m) || m == CONNTRACK
            })
            .copied()
            .collect();
        // One block per traffic (the workload's parameters but the firewall's), its
        // baseline that traffic's plain forwarding (engine none); where a workload ran
        // several, each is named by what sets it apart ("flood (packet.size.frame=1500)").
        let mut traffics: Vec<BTreeMap<&str, &str>> = vec![];
        for c in &of_w {
            let t = traffic_of(c);
            if !traffics.contains(&t) {
                traffics.push(t);
            }
        }
        for (i, t) in traffics.iter().enumerate() {
            let block: Vec<&Config> = of_w
                .iter()
                .filter(|c| traffic_of(c) == *t)
                .copied()
                .collect();
            let (name, id) = if traffics.len() == 1 {
                (w.to_string(), w.to_string())
            } else {
                // Every key some traffic sets differently (one left at its default is
                // absent from the stored parameters: "-").
                let keys: BTreeSet<&str> =
                    traffics.iter().flat_map(|o| o.keys().copied()).collect();
                let apart: Vec<String> = keys
                    .into_iter()
                    .filter(|k| traffics.iter().any(|o| o.get(k) != t.get(k)))
                    .map(|k| format!("{k}={}", t.get(k).copied().unwrap_or("-")))
                    .collect();
                (
                    format!("{w} ({})", apart.join(", ")),
                    format!("{w}-{}", i + 1),
                )
            };
            block_of(&name, &id, &block, &mut rows, a);
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

/// One traffic's block (`w`, its name in the findings; `id`, its figure's): its NAT
/// configurations against its plain forwarding, a table row each, a finding each and
/// the figure.
fn block_of(w: &str, id: &str, block: &[&Config], rows: &mut Vec<Vec<String>>, a: &mut Analysis) {
    let plains: Vec<&Config> = block.iter().filter(|c| c.no_firewall()).copied().collect();
    // Configurations whose every trial fwbench limited have no figure: said, never
    // a block dropped in silence.
    let limited = block.iter().filter(|c| c.limited_throughout()).count();
    let unmeasured = || {
        format!(
            "{w}: no NAT cost is stated — fwbench's sender or sink limited every trial of \
             {limited} of its configurations (their packets/s are fwbench's, not the \
             gateway's; see the run's warnings)."
        )
    };
    // One measure for the whole block: the first every configuration has.
    let Some(m) = block.first().and_then(|c| {
        measures(c)
            .iter()
            .find(|m| block.iter().all(|c| c.metrics.contains_key(m.metric)))
    }) else {
        if limited > 0 {
            a.findings.push(unmeasured());
        }
        return;
    };
    let (unit, basis) = (m.unit, m.basis);
    let Some((plain, pooled)) = pooled_cost(&plains, m) else {
        if limited > 0 {
            a.findings.push(unmeasured());
        } else if plains.is_empty() {
            a.findings.push(format!(
                "{w}: no NAT cost is stated — no plain forwarding (engine none) ran with this \
                 traffic, the baseline its NAT configurations would be set against."
            ));
        }
        return;
    };
    let plain_at = placements(plains.iter().copied());
    let plain_paced = paced(&plains, m);
    let plain_limit = FwbenchLimit::over(plains.iter().copied());
    let plain_basis = plain_basis(&plains, pooled);
    let here = costs(block, m);
    let mut cats = vec![];
    let mut pts = vec![];
    let mut nat: Vec<&Costed> = here.iter().filter(|r| !r.c.no_firewall()).collect();
    nat.sort_by_key(|r| {
        (
            engine_of(r.c).to_owned(),
            model_of(r.c).to_owned(),
            rules_of(r.c),
        )
    });
    for r in &nat {
        let (c, cost) = (r.c, &r.cost);
        let d = diff(cost, &plain);
        let rules = if model_of(c) == CONNTRACK {
            "-".to_string()
        } else {
            rules_of(c).to_string()
        };
        let name = format!("{} {}", engine_of(c), model_of(c));
        // Compared only with a baseline placed as it was.
        let at = placements([c]);
        let apart = (!at.is_empty() && !plain_at.is_empty() && at != plain_at).then(|| {
            format!(
                "{} ran on {}, plain forwarding on {}",
                name,
                at.iter().cloned().collect::<Vec<_>>().join(" / "),
                plain_at.iter().cloned().collect::<Vec<_>>().join(" / ")
            )
        });
        // Without the gateway's CPU time, a cost is the time per received packet: of
        // a flood that passed whole, the sender's pace, not the gateway's time.
        let paced = crate::model::paced_doubt((&name, r.paced), ("plain forwarding", plain_paced))
            .map(|why| format!("{why}; the gateway's CPU time was not sampled"));
        // Where fwbench limited most of either's repetitions, the rest are no fair
        // sample of the gateway's (the faster ones may be those cut off).
        let limited = [
            (name.as_str(), &r.limit),
            ("plain forwarding", &plain_limit),
        ]
        .into_iter()
        .find_map(|(who, l)| l.as_ref()?.doubt(who, m.sample))
        .map(|why| (why, "no fair sample", "see the run's warnings"));
        let apart = apart
            .map(|why| {
                (
                    why,
                    "placed differently",
                    "a baseline counts only in the same placement",
                )
            })
            .or(limited)
            .or(paced.map(|why| {
                // The side the reason names (the row first) says whether in part.
                let whole = if r.paced.any() { r.paced } else { plain_paced };
                let what = if whole.throughout() {
                    "the sender's pace"
                } else {
                    "partly the sender's pace"
                };
                (why, what, "offer more to measure the gateway")
            }));
        let [vs, change] = vs_plain(&d, &plain, apart.as_ref().map(|x| x.1), unit);
        rows.push(vec![
            w.to_string(),
            name.clone(),
            rules.clone(),
            r.n.to_string(),
            format!("{} {unit}", mean_ci(cost.mean, cost.ci95)),
            vs,
            change,
        ]);
        if let Some((why, _, what)) = apart {
            a.findings.push(format!(
                "{w}: {name} ({rules} NAT filler rules) is not compared with plain \
                 forwarding: {why} ({what})."
            ));
            continue;
        }
        cats.push(format!("{name} ({rules})"));
        pts.push(Point {
            x: pts.len() as f64,
            y: d.mean,
            ci95: d.ci95,
        });
        let base = Baseline {
            cost: &plain,
            basis: &plain_basis,
        };
        a.findings
            .push(sentence(w, &name, r, &d, &base, &nat, unit, basis));
    }
    if !pts.is_empty() {
        a.figures.push(bar_figure(
            &format!("nat-{id}"),
            &format!("NAT vs plain forwarding ({w}): extra {unit} (rule count in brackets)"),
            &format!("extra {unit} vs plain forwarding"),
            cats,
            pts,
        ));
    }
}

/// A configuration's cost, over how many trials, and the rule counts it pools (an
/// engine's conntrack alone: one gateway whatever `rules` says).
struct Costed<'a> {
    c: &'a Config,
    cost: Cost,
    n: usize,
    pooled: Option<String>,
    /// Measured by wall time: how many repetitions it rests on passed every packet
    /// offered (where some did, its time per packet is partly the sender's pace, no
    /// measure to compare: [`paced`]); none counted by CPU time.
    paced: Paced,
    /// The repetitions fwbench's own sender or sink limited, left out of its cost
    /// (where most were, the rest are no fair sample).
    limit: Option<FwbenchLimit>,
    /// What its measure samples of the gateway ([`Measure::sample`]).
    sample: &'static str,
}

impl Costed<'_> {
    /// Why its cost is no measure to set another against: fwbench limited most of its
    /// repetitions, or some it kept passed every packet offered; `None`: it is one.
    fn doubt(&self, who: &str) -> Option<String> {
        let limit = self.limit.as_ref().and_then(|l| l.doubt(who, self.sample));
        limit.or_else(|| self.paced.doubt(who))
    }
}

/// Some repetition of `cs` whose rate counts passed every packet offered, where the
/// measure is wall time per received packet (`m` not the gateway's CPU time): that
/// time is the sender's pace, and a mean over it no measure of the gateway.
fn paced(cs: &[&Config], m: &Measure) -> Paced {
    if !m.wall_per_packet {
        return Paced::default();
    }
    Paced::of(cs.iter().flat_map(|c| c.gateway_reps()))
}

/// The cost of each configuration of `block` by `m`; conntrack-alone configurations
/// that differ only in `rules` pooled into one (the first), as plain forwarding's are —
/// measured at `rules = 0` and `1000`, the same one rule stated two costs under one
/// name.
fn costs<'a>(block: &[&'a Config], m: &Measure) -> Vec<Costed<'a>> {
    let mut out = vec![];
    // Those that differ from one only in `rules` (never another family or position).
    let but_rules = |x: &Config| {
        let mut f = x.flat.clone();
        f.remove("rules");
        f
    };
    let mut tracked = vec![];
    for c in block {
        if model_of(c) != CONNTRACK {
            out.extend(cost_of(c, m).map(|cost| Costed {
                c,
                cost,
                n: c.reps.len(),
                pooled: None,
                paced: paced(&[c], m),
                limit: c.fwbench_limit(),
                sample: m.sample,
            }));
            continue;
        }
        let key = but_rules(c);
        if tracked.contains(&key) {
            continue;
        }
        tracked.push(key);
        let group: Vec<&Config> = block
            .iter()
            .filter(|x| model_of(x) == CONNTRACK && but_rules(x) == but_rules(c))
            .copied()
            .collect();
        let counts: BTreeSet<u64> = group.iter().map(|x| rules_of(x)).collect();
        let pooled = (counts.len() > 1).then(|| {
            let list: Vec<String> = counts.iter().map(u64::to_string).collect();
            format!(
                "its rule counts {} pooled: the model installs one rule whatever the count",
                list.join(", ")
            )
        });
        let paced = paced(&group, m);
        let limit = FwbenchLimit::over(group.iter().copied());
        out.extend(pooled_cost(&group, m).map(|(cost, n)| Costed {
            c,
            cost,
            n,
            pooled,
            paced,
            limit,
            sample: m.sample,
        }));
    }
    out
}

/// "plain forwarding over 6 trials, its rule counts 0, 1000 pooled: engine none installs
/// no rules" — what the baseline of `plains` (`pooled` trials) rests on.
fn plain_basis(plains: &[&Config], pooled: usize) -> String {
    let rules: BTreeSet<u64> = plains.iter().map(|c| rules_of(c)).collect();
    if plains.len() > 1 {
        let list: Vec<String> = rules.iter().map(u64::to_string).collect();
        format!(
            "plain forwarding over {pooled} trials, its rule counts {} pooled: engine none \
             installs no rules",
            list.join(", ")
        )
    } else {
        format!("plain forwarding over {pooled} trials")
    }
}

/// The table's "vs plain forwarding" and "change" cells of difference `d` ("–" and
/// why for a configuration not compared with its baseline; a difference below 0
/// flagged).
fn vs_plain(d: &Cost, plain: &Cost, apart: Option<&str>, unit: &str) -> [String; 2] {
    if let Some(why) = apart {
        return [format!("– ({why})"), "–".to_string()];
    }
    let diff = match below(d) {
        Some(_) => format!(
            "{:+} {unit} (FLAGGED: below plain forwarding)",
            PlusNum(d.mean)
        ),
        None => format!("{:+} {unit}", PlusNum(d.mean)),
    };
    let change = if plain.mean > 0.0 {
        d.mean / plain.mean * 100.0
    } else {
        0.0
    };
    [diff, format!("{change:+.1} %")]
}

/// Why `d`, measured below 0 (its CI clear of it), is flagged — added work that came
/// out cheaper (`results::Figure::added_cost`); `None` when it is not.
fn below(d: &Cost) -> Option<String> {
    let f =
        results::Figure::added_cost(d.mean, d.ci95.map(results::Ci::ci95), results::Basis::Trial);
    let value = f.value;
    f.doubts
        .into_iter()
        .find(|x| x.kind == results::DoubtKind::Impossible)
        .filter(|_| value.is_some())
        .map(|x| x.why)
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

/// Plain forwarding as one comparison's baseline: its cost and what it pools.
struct Baseline<'a> {
    cost: &'a Cost,
    basis: &'a str,
}

/// "flood: nft snat (0 NAT rules) costs +120 ± 30 ns per packet over plain forwarding
/// (…), of which conntrack alone +90; 1000 NAT rules add …".
#[allow(clippy::too_many_arguments)]
fn sentence(
    w: &str,
    name: &str,
    row: &Costed,
    d: &Cost,
    plain: &Baseline,
    all: &[&Costed],
    unit: &str,
    basis: &str,
) -> String {
    let (c, cost) = (row.c, &row.cost);
    let m = model_of(c);
    let rules = rules_of(c);
    let head = if m == CONNTRACK {
        match &row.pooled {
            Some(p) => format!("{w}: {name} (stateful accept, no NAT; {p})"),
            None => format!("{w}: {name} (stateful accept, no NAT)"),
        }
    } else {
        format!("{w}: {name} ({rules} NAT filler rules)")
    };
    let mut s = format!(
        "{head} {} over plain forwarding ({} vs {}; {basis}; {}).",
        cost_text(d, unit, "costs"),
        num(cost.mean),
        num(plain.cost.mean),
        plain.basis
    );
    if NAT_MODELS.contains(&m) {
        // The same engine's conntrack alone (pooled): how much of it is tracking.
        let ct = all
            .iter()
            .find(|x| engine_of(x.c) == engine_of(c) && model_of(x.c) == CONNTRACK);
        if let Some(why) = ct.and_then(|ct| ct.doubt("it")) {
            s += &format!(
                " Against connection tracking alone ({} {}): not compared — {why}.",
                engine_of(c),
                CONNTRACK
            );
        } else if let Some(ct) = ct {
            let t = diff(cost, &ct.cost);
            // Conntrack alone has no filler rules: past 0 they are in the difference.
            let what = if rules > 0 {
                format!("the translation with its {rules} filler rules")
            } else {
                "the translation".to_string()
            };
            s += &format!(
                " Against connection tracking alone ({} {}), {what} {}.",
                engine_of(c),
                CONNTRACK,
                cost_text(&t, unit, "adds")
            );
        }
        // The same engine and model with no NAT rules: what the fillers cost.
        if rules > 0 {
            let zero = all.iter().find(|x| {
                engine_of(x.c) == engine_of(c) && model_of(x.c) == m && rules_of(x.c) == 0
            });
            let paced = zero.and_then(|z| z.doubt("the same NAT with no filler rule"));
            if let Some(why) = paced {
                s += &format!(" What its {rules} filler rules add is not stated: {why}.");
            } else if let Some(zero) = zero {
                let r = diff(cost, &zero.cost);
                let holds = results::Figure::added_cost(
                    r.mean,
                    r.ci95.map(results::Ci::ci95),
                    results::Basis::Trial,
                )
                .holds();
                // Per rule, rounded to its CI as the difference is.
                let per_rule = Cost {
                    mean: r.mean / rules as f64,
                    ci95: r.ci95.map(|ci| ci / rules as f64),
                };
                s += &format!(
                    " Its {rules} filler rules in the NAT chain add {}{}.",
                    cost_text(&r, unit, "adds").trim_start_matches("adds "),
                    if holds {
                        format!(
                            " ({} {})",
                            signed_ci(&per_rule),
                            unit.replacen(" per ", " per rule per ", 1)
                        )
                    } else {
                        String::new()
                    }
                );
            }
        }
    }
    s
}

/// A difference stated only when measured (`results::witness`): "costs +120 ± 30 ns per
/// packet"; a CI that includes 0 is "has no measurable cost (−9000 ± 47000 ns per
/// packet: its 95 % CI includes 0)"; without a CI it is not called a cost either; one
/// measured below 0 is FLAGGED with why (`Figure::added_cost`).
fn cost_text(d: &Cost, unit: &str, verb: &str) -> String {
    let f =
        results::Figure::added_cost(d.mean, d.ci95.map(results::Ci::ci95), results::Basis::Trial);
    if f.holds() {
        return format!("{verb} {} {unit}", signed_ci(d));
    }
    if let Some(why) = below(d) {
        return format!("{verb} {} {unit} — FLAGGED: {why}", signed_ci(d));
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
