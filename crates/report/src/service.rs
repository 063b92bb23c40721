//! Seed 003's derived quantities, by firewall type: the observed service time (the
//! reciprocal of the parallel session throughput) and the queuing time (the sequential
//! latency minus it); packets/s through the filter during bulk transfers and the packet
//! service time; and, from the extra ping round trip over the null firewall at two
//! sizes, the per-packet and per-byte cost — all with 95 % CIs propagated from the
//! measured ones (independent errors assumed).
//!
//! Owns: those derivations, their table and findings.
//! Must not: read trials; `conn` measures and passes [`Measured`]; imports `figure`.

use crate::figure::{mean_ci, num, Analysis, Claim, Table};

/// A value with its 95 % CI half-width (`None`: no CI).
pub type Est = (f64, Option<f64>);

/// Maximum segment payload assumed for bulk transfers (1500-byte MTU, IPv4, TCP
/// timestamps) and packets per data segment including the delayed ACKs (one per two).
pub const MSS: f64 = 1448.0;
pub const PACKETS_PER_SEGMENT: f64 = 1.5;

/// What `conn` measured for one firewall type.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub name: String,
    /// Is this the null firewall (the reference of the ping costs)?
    pub null: bool,
    /// Mean ping round trip (s) by payload size (bytes).
    pub ping: Vec<(f64, Est)>,
    /// Mean sequential session time (s).
    pub latency_s: Option<Est>,
    /// Parallel sessions per second.
    pub sessions_per_s: Option<Est>,
    /// Bulk goodput, bit/s (the best of sequential and parallel).
    pub bulk_bps: Option<Est>,
    /// Packets/s through the gateway during that bulk row, from its interface counters
    /// (both directions); `None` without gateway samples (then estimated from goodput).
    pub bulk_pps: Option<Est>,
}

/// √(a² + b²) of two optional CIs (both needed).
fn add_ci(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some((a?.powi(2) + b?.powi(2)).sqrt())
}

/// 1/x with its CI (first order).
fn recip(x: Est) -> Option<Est> {
    (x.0 > 0.0).then(|| (1.0 / x.0, x.1.map(|c| c / (x.0 * x.0))))
}

/// Per-packet and per-byte cost (s, s/byte) from the extra round trip over the null
/// firewall at the smallest and the largest ping size: per byte = Δextra / Δsize, per
/// packet = the small ping's extra − per byte · its size.
pub fn ping_costs(fw: &[(f64, Est)], null: &[(f64, Est)]) -> Option<(Est, Est)> {
    let extra: Vec<(f64, Est)> = fw
        .iter()
        .filter_map(|(size, e)| {
            let n = null.iter().find(|(s, _)| s == size)?.1;
            Some((*size, (e.0 - n.0, add_ci(e.1, n.1))))
        })
        .collect();
    let small = extra.iter().min_by(|a, b| a.0.total_cmp(&b.0))?;
    let large = extra.iter().max_by(|a, b| a.0.total_cmp(&b.0))?;
    if large.0 <= small.0 {
        return None;
    }
    let span = large.0 - small.0;
    let per_byte = (
        (large.1 .0 - small.1 .0) / span,
        add_ci(large.1 .1, small.1 .1).map(|c| c / span),
    );
    let per_packet = (
        small.1 .0 - per_byte.0 * small.0,
        add_ci(small.1 .1, per_byte.1.map(|c| c * small.0)),
    );
    Some((per_packet, per_byte))
}

/// A time for reading (µs below 1 ms, else ms).
fn t(e: Option<Est>) -> String {
    match e {
        None => "-".into(),
        Some((v, ci)) if v.abs() < 1e-3 => format!("{} µs", mean_ci(v * 1e6, ci.map(|c| c * 1e6))),
        Some((v, ci)) => format!("{} ms", mean_ci(v * 1e3, ci.map(|c| c * 1e3))),
    }
}

/// A firewall's extra time over the null firewall, `shown` (its value and CI as the
/// sentence writes it), `per` what: "120 ± 30 µs per packet" only where it is measured
/// ([`results::Figure::added_cost`]); a CI that holds 0 is no measurable cost (seed 003
/// here said "17 ± 78 µs per packet and −20 ± 100 ns per byte" as figures), and one
/// below 0 is flagged.
fn added(e: (f64, Option<f64>), shown: String, per: &str) -> String {
    match judged(e) {
        Judged::Holds => format!("{shown} {per}"),
        Judged::Below(why) => format!("{shown} {per} — FLAGGED: {why}"),
        Judged::Unmeasured(why) => format!("no measurable cost {per} ({shown}: {why})"),
    }
}

/// How an added time reads in the table: the figure, or the figure marked.
fn added_cell(e: (f64, Option<f64>), shown: String) -> String {
    match judged(e) {
        Judged::Holds => shown,
        Judged::Below(_) => format!("{shown} (FLAGGED: below the null firewall)"),
        Judged::Unmeasured(why) => format!("{shown} (not measurable: {why})"),
    }
}

/// What [`results::Figure::added_cost`] makes of an added time.
enum Judged {
    Holds,
    /// Measured below 0: why it is no saving.
    Below(String),
    /// No measurable cost: why (its CI holds 0, or it has none).
    Unmeasured(&'static str),
}

fn judged(e: (f64, Option<f64>)) -> Judged {
    let f = results::Figure::added_cost(e.0, e.1.map(results::Ci::ci95), results::Basis::Trial);
    if f.holds() {
        return Judged::Holds;
    }
    match f.doubts.first() {
        Some(d) if d.kind == results::DoubtKind::Impossible && f.value.is_some() => {
            Judged::Below(d.why.clone())
        }
        Some(d) if d.kind == results::DoubtKind::SpansZero => {
            Judged::Unmeasured("its 95 % CI includes 0")
        }
        Some(d) if d.kind == results::DoubtKind::Impossible => Judged::Unmeasured("not a number"),
        _ => Judged::Unmeasured("no CI: too few repetitions"),
    }
}

/// The table and findings over every firewall type.
pub(crate) fn derive(types: &[Measured], a: &mut Analysis) {
    let null_ping = types.iter().find(|m| m.null).map(|m| m.ping.clone());
    let mut rows = Vec::new();
    for m in types {
        let service = m.sessions_per_s.and_then(recip);
        let queuing = match (m.latency_s, service) {
            (Some(l), Some(s)) => Some((l.0 - s.0, add_ci(l.1, s.1))),
            _ => None,
        };
        // The gateway's interface counters; without them, estimated from the goodput.
        let estimated = m.bulk_pps.is_none();
        let pps = m.bulk_pps.or_else(|| {
            m.bulk_bps.map(|(b, ci)| {
                let k = PACKETS_PER_SEGMENT / (8.0 * MSS);
                (b * k, ci.map(|c| c * k))
            })
        });
        let pkt_service = pps.and_then(recip);
        let costs = match (&null_ping, m.null) {
            (Some(n), false) => ping_costs(&m.ping, n),
            _ => None,
        };
        // Parallel sessions slower than one at a time: latency − service time is then no
        // queuing time (negative, the model's premise broken), said instead of stated.
        let below = |q: (f64, Option<f64>)| matches!(judged(q), Judged::Below(_));
        match (m.latency_s, service, queuing) {
            (Some(l), Some(s), Some(q)) if below(q) => a.findings.push(format!(
                "{}: a session takes {} in sequence, but the observed service time (1 / \
                 parallel sessions/s) is longer, {}: parallel sessions ran slower than one at \
                 a time, so latency − service time ({}) is no queuing time — none is stated \
                 (95 % CIs over repetitions, propagated).",
                m.name,
                t(Some(l)),
                t(Some(s)),
                t(Some(q))
            )),
            (Some(l), Some(s), Some(q)) => {
                // A queuing time that is not measurable is a doubted claim, as its
                // sentence says.
                let doubt = match judged(q) {
                    Judged::Unmeasured(why) => Some(format!("no queuing time measurable: {why}")),
                    _ => None,
                };
                for (what, e, doubt) in [
                    ("session time in sequence", l, None),
                    ("queuing time", q, doubt),
                ] {
                    a.claims.push(
                        Claim::new(
                            format!("{what}: {}", m.name),
                            e.0 * 1e6,
                            e.1.map(|c| c * 1e6),
                            "µs",
                            "repetitions, propagated".into(),
                        )
                        .doubted(doubt),
                    );
                }
                let queued = match judged(q) {
                    Judged::Unmeasured(why) => {
                        format!("so no queuing time is measurable ({}: {why})", t(Some(q)))
                    }
                    _ => format!("so {} of it is queuing time", t(Some(q))),
                };
                a.findings.push(format!(
                    "{}: a session takes {} in sequence; the observed service time (1 / \
                     parallel sessions/s) is {}, {queued} (latency − service time; 95 % CIs \
                     over repetitions, propagated).",
                    m.name,
                    t(Some(l)),
                    t(Some(s)),
                ));
            }
            _ => {}
        }
        if let Some((pp, pb)) = costs {
            a.findings.push(format!(
                "{}: from the extra ping round trip over the null firewall, {} and {} (two \
                 passes through the firewall per round trip; the study measured 1.1 ms and \
                 0.55 µs per byte on its 1995 hardware).",
                m.name,
                added(pp, t(Some(pp)), "per packet"),
                added(
                    pb,
                    format!("{} ns", mean_ci(pb.0 * 1e9, pb.1.map(|c| c * 1e9))),
                    "per byte"
                )
            ));
        }
        rows.push(vec![
            m.name.clone(),
            t(m.latency_s),
            t(service),
            match queuing.map(|q| (q, judged(q))) {
                Some((q, Judged::Below(_))) => {
                    format!("– ({}: parallel slower than one at a time)", t(Some(q)))
                }
                Some((q, Judged::Unmeasured(why))) => {
                    format!("– ({}: not measurable, {why})", t(Some(q)))
                }
                q => t(q.map(|(q, _)| q)),
            },
            pps.map(|(v, ci)| {
                let from = if estimated {
                    " (est. from goodput)"
                } else {
                    ""
                };
                format!("{}{from}", mean_ci(v, ci))
            })
            .unwrap_or_else(|| "-".into()),
            t(pkt_service),
            costs
                .map(|c| added_cell(c.0, t(Some(c.0))))
                .unwrap_or_else(|| "-".into()),
            costs
                .map(|c| added_cell(c.1, mean_ci(c.1 .0 * 1e9, c.1 .1.map(|x| x * 1e9))))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    table(rows, a);
}

/// The service and queuing table of `rows` (none when every cell is empty), with its
/// note on how packets/s were counted.
fn table(rows: Vec<Vec<String>>, a: &mut Analysis) {
    if rows.iter().all(|r| r[1..].iter().all(|c| c == "-")) {
        return;
    }
    a.tables.push(Table::new(
        "Service and queuing time by firewall type (seed 003, derived; ± 95 % CI)",
        &[
            "firewall",
            "session latency (sequential)",
            "observed service time (1 / parallel sessions/s)",
            "queuing time (latency − service)",
            "bulk: packets/s through the filter (gateway interface counters)",
            "packet service time (1 / packets/s)",
            "per-packet cost (extra ping RTT)",
            "per-byte cost (ns/byte)",
        ],
        rows,
    ));
    a.tables.last_mut().expect("pushed").rows.push(vec![
        format!(
            "packets/s: the gateway's interface counters (rx, every interface); where a \
             run has none, estimated from goodput with {} B segments and {} packets per \
             segment (delayed ACKs)",
            num(MSS),
            num(PACKETS_PER_SEGMENT)
        ),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_packet_and_per_byte_costs_recover_a_planted_line() {
        // Planted: extra RTT = 40 µs + 2 ns/byte; the null firewall at 100 / 150 µs.
        let null = [(8.0, (100e-6, Some(1e-6))), (1000.0, (150e-6, Some(1e-6)))];
        let fw = [
            (8.0, (100e-6 + 40e-6 + 8.0 * 2e-9, Some(1e-6))),
            (1000.0, (150e-6 + 40e-6 + 1000.0 * 2e-9, Some(1e-6))),
        ];
        let (pp, pb) = ping_costs(&fw, &null).unwrap();
        assert!((pp.0 - 40e-6).abs() < 1e-12, "{pp:?}");
        assert!((pb.0 - 2e-9).abs() < 1e-15, "{pb:?}");
        assert!((pb.1.unwrap() - 2e-6 / 992.0).abs() < 1e-15);
    }

    /// Seed 003 here: "17 ± 78 µs per packet and −20 ± 100 ns per byte" were stated as
    /// figures; a CI that holds 0 is no measurable cost, a cost below 0 is flagged.
    #[test]
    fn an_extra_round_trip_is_a_cost_only_where_measured() {
        let shown = |v: &str| v.to_string();
        assert_eq!(
            added((40e-6, Some(1e-6)), shown("40 µs"), "per packet"),
            "40 µs per packet"
        );
        assert_eq!(
            added((17e-6, Some(78e-6)), shown("17 ± 78 µs"), "per packet"),
            "no measurable cost per packet (17 ± 78 µs: its 95 % CI includes 0)"
        );
        assert_eq!(
            added((2e-9, None), shown("2 ns"), "per byte"),
            "no measurable cost per byte (2 ns: no CI: too few repetitions)"
        );
        let below = added((-40e-6, Some(1e-6)), shown("-40 ± 1 µs"), "per packet");
        assert!(
            below.starts_with("-40 ± 1 µs per packet — FLAGGED: below the path without it"),
            "{below}"
        );
        assert_eq!(
            added_cell((17e-6, Some(78e-6)), shown("17 ± 78 µs")),
            "17 ± 78 µs (not measurable: its 95 % CI includes 0)"
        );
    }

    /// The analysis of one firewall type "pf": 10 ± 1 ms a session in sequence, `rate`
    /// sessions/s (± 2.5 %) in parallel.
    fn derived(rate: f64) -> Analysis {
        let m = Measured {
            name: "pf".into(),
            latency_s: Some((0.010, Some(0.001))),
            sessions_per_s: Some((rate, Some(rate / 40.0))),
            ..Default::default()
        };
        let mut a = Analysis::default();
        derive(&[m], &mut a);
        a
    }

    #[test]
    fn service_and_queuing_time() {
        let a = derived(400.0);
        // service 2.5 ms, queuing 7.5 ms
        assert!(
            a.findings[0].contains("is 2.500 ± 0.063 ms"),
            "{}",
            a.findings[0]
        );
        assert!(a.findings[0].contains("7.5 ± "), "{}", a.findings[0]);
        assert_eq!(a.claims.len(), 2);
        // Parallel slower than one at a time (service 12.5 ms > 10 ms): no queuing time.
        let a = derived(80.0);
        assert!(
            a.findings[0].contains("parallel sessions ran slower than one at a time")
                && a.findings[0].contains("is no queuing time — none is stated"),
            "{}",
            a.findings[0]
        );
        assert!(a.claims.is_empty(), "{:?}", a.claims);
        assert!(
            a.tables[0].rows[0][3].contains("parallel slower than one at a time"),
            "{:?}",
            a.tables[0].rows[0]
        );
        // Service 9.8 ms of 10 ± 1: a queuing time whose CI holds 0 — not stated, its
        // claim doubted, its cell marked.
        let a = derived(102.0);
        assert!(
            a.findings[0].contains("so no queuing time is measurable ("),
            "{}",
            a.findings[0]
        );
        let q = a
            .claims
            .iter()
            .find(|c| c.key.starts_with("queuing time"))
            .unwrap();
        assert!(q.doubt.is_some(), "{q:?}");
        assert!(
            a.tables[0].rows[0][3].contains("not measurable"),
            "{:?}",
            a.tables[0].rows[0]
        );
    }
}
