//! The runs' metrics in the OpenMetrics text format (`fwbench report -f openmetrics`),
//! for a Prometheus or VictoriaMetrics import and a Grafana board (docs/dashboards.md).
//!
//! Owns: the metric families' names, units and help, the labels of a series, the
//! escaping of the format and its timestamps.
//! Must not: compute statistics; it prints the trials' own figures.
//!
//! One sample per `ok` trial, not per configuration summary: a series is one
//! configuration's metric (labels from its parameters, not the run), so the trials of
//! every run and every imported file line up into one history, each at the time its
//! trial finished. A trial that is not `ok` (failed, flagged, dropped, unavailable)
//! gives no sample: its figures' witness does not hold; nor do the rates (and a
//! lagging sink's loss) of a trial fwbench's own sender or sink limited, nor a
//! search's step probes. `# EOF` ends the text.

use crate::contents::{Report, RunReport};
use crate::model::{capped_by, Config, Trial, METRICS};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A metric family: the report's metric name, the family's name (without `fwbench_`,
/// ending in its unit), the OpenMetrics unit, the divisor from the stored value to that
/// unit, and its help.
pub struct Family {
    pub metric: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    pub divisor: f64,
    pub help: &'static str,
}

const fn family(
    metric: &'static str,
    name: &'static str,
    unit: &'static str,
    divisor: f64,
    help: &'static str,
) -> Family {
    Family {
        metric,
        name,
        unit,
        divisor,
        help,
    }
}

/// Every metric of [`METRICS`], as a family (a unit test keeps the two in step). Times
/// are in seconds, as OpenMetrics asks (stored µs / 1e6, ms / 1e3, ns / 1e9).
#[rustfmt::skip]
pub const FAMILIES: &[Family] = &[
    family("throughput_bps", "throughput_bits_per_second", "bits_per_second", 1.0, "Echo: payload throughput; flood/flow: received payload bits per second"),
    family("throughput_per_client_bps", "throughput_per_client_bits_per_second", "bits_per_second", 1.0, "Throughput over the clients parameter (echo: per client)"),
    family("transactions_per_s", "transactions_per_second", "per_second", 1.0, "Echo: transactions per second; ping: replies per second; connection workloads: sessions per second"),
    family("rtt_p50_us", "rtt_p50_seconds", "seconds", 1e6, "Round-trip time, median"),
    family("rtt_p99_us", "rtt_p99_seconds", "seconds", 1e6, "Round-trip time, 99th percentile"),
    family("received_pps", "received_packets_per_second", "per_second", 1.0, "Packets received per second by the sink"),
    family("sent_pps", "sent_packets_per_second", "per_second", 1.0, "Packets sent per second by the sender"),
    family("loss_ratio", "loss_ratio", "ratio", 1.0, "Packets lost over packets sent"),
    family("owd_p50_us", "one_way_delay_p50_seconds", "seconds", 1e6, "One-way delay, median"),
    family("jitter_us", "jitter_seconds", "seconds", 1e6, "One-way delay variation"),
    family("ns_per_packet", "time_per_packet_seconds", "seconds", 1e9, "Time per received packet (1 / received packets per second)"),
    family("sessions_per_s", "sessions_per_second", "per_second", 1.0, "Connection sessions completed per second"),
    family("goodput_bps", "goodput_bits_per_second", "bits_per_second", 1.0, "Connection workloads: application bytes per second, in bits"),
    family("net_goodput_bps", "net_goodput_bits_per_second", "bits_per_second", 1.0, "Bulk: goodput net of session overhead"),
    family("elapsed_s", "elapsed_seconds", "seconds", 1.0, "Connection workloads: the traffic phase's duration"),
    family("session_mean_ms", "session_mean_seconds", "seconds", 1e3, "Connection workloads: mean session duration"),
    family("connect_mean_ms", "connect_mean_seconds", "seconds", 1e3, "Connection workloads: mean connection setup time"),
    family("ttfb_mean_ms", "ttfb_mean_seconds", "seconds", 1e3, "Connection workloads: mean time to first byte"),
    family("ttlb_mean_ms", "ttlb_mean_seconds", "seconds", 1e3, "Connection workloads: mean time to last byte"),
    family("hold_reached", "hold_reached_connections", "connections", 1.0, "Concurrent connections: how many were open at once"),
];

/// A family's series: labels → (timestamp in ms, value) of each sample.
type Series = BTreeMap<Labels, Vec<(i64, f64)>>;

/// The family of the run hosts' facts (an info metric, value 1).
pub const HOST_INFO: &str = "fwbench_host";

/// The OpenMetrics text of every run of the report, and what could not be said (one
/// line each: a trial whose time does not read).
pub fn openmetrics(r: &Report) -> (String, Vec<String>) {
    let mut skipped = vec![];
    // family → its series
    let mut series: BTreeMap<&str, Series> = BTreeMap::new();
    for run in &r.runs {
        // A search's step probes the search at a rate it chose: no configuration asked
        // for, no series of its own.
        for c in run.configs.iter().filter(|c| c.step_of().is_none()) {
            let labels = config_labels(run, c);
            for t in &c.reps {
                let Some(at) = epoch_ms(&t.finished_at) else {
                    skipped.push(format!(
                        "run {} trial {}: its end {:?} is not a UTC time (YYYY-MM-DDTHH:MM:SSZ); no sample",
                        t.run_id, t.id, t.finished_at
                    ));
                    continue;
                };
                for f in FAMILIES {
                    let Some(v) = value(t, f) else { continue };
                    (series.entry(f.name).or_default())
                        .entry(labels.clone())
                        .or_default()
                        .push((at, v));
                }
            }
        }
    }
    let mut o = String::new();
    for f in FAMILIES {
        let Some(by_labels) = series.get(f.name) else {
            continue;
        };
        let name = format!("fwbench_{}", f.name);
        let _ = writeln!(o, "# TYPE {name} gauge");
        let _ = writeln!(o, "# UNIT {name} {}", f.unit);
        let _ = writeln!(
            o,
            "# HELP {name} {} (one sample per ok trial, at its end)",
            escape_help(f.help)
        );
        for (labels, points) in by_labels {
            for (at, v) in distinct_times(points) {
                let _ = writeln!(o, "{name}{} {v:?} {}", labels.text(), timestamp(at));
            }
        }
    }
    host_info(r, &mut o);
    o.push_str("# EOF\n");
    (o, skipped)
}

/// The hosts' facts and the run's tags (`tag_KEY`), one sample per run at its start
/// (`store::Host::facts`, each name's dots and dashes as `_`).
fn host_info(r: &Report, o: &mut String) {
    let mut by_labels = Series::new();
    for run in &r.runs {
        let Some(at) = epoch_ms(&run.run.started_at) else {
            continue;
        };
        let mut l = Labels::default();
        l.set("host", &run.run.host.hostname);
        for (k, v) in run.run.host.facts() {
            if k != "hostname" {
                l.set(&k, &v);
            }
        }
        // The run's tags (`--tag`) with the facts, not on the metrics' series: a tag
        // that changes from run to run (a commit) would split each series per run.
        for (k, v) in &run.run.tags {
            l.set(&format!("tag_{k}"), v);
        }
        by_labels.entry(l).or_default().push((at, 1.0));
    }
    if by_labels.is_empty() {
        return;
    }
    let _ = writeln!(o, "# TYPE {HOST_INFO} info");
    let _ = writeln!(
        o,
        "# HELP {HOST_INFO} The run's host: kernel, CPU, tool versions, sysctls, mitigations; and its tags (tag_KEY; one sample per run, at its start)"
    );
    for (labels, points) in &by_labels {
        for (at, _) in distinct_times(points) {
            let _ = writeln!(o, "{HOST_INFO}_info{} 1 {}", labels.text(), timestamp(at));
        }
    }
}

/// A trial's value of a family, in its unit; none when not measured, not finite, or
/// fwbench's own limit rather than the gateway's (a rate fwbench's sender or sink
/// limited, the loss of a sink that fell behind: [`capped_by`], as the report,
/// `compare` and `trend` leave them out).
fn value(t: &Trial, f: &Family) -> Option<f64> {
    if t.fwbench_limited()
        .is_some_and(|by| capped_by(by, f.metric))
    {
        return None;
    }
    let (_, extract) = METRICS.iter().find(|(m, _)| *m == f.metric)?;
    Some(extract(t)? / f.divisor).filter(|v| v.is_finite())
}

/// A series' points sorted by time, each at its own millisecond: the store keeps
/// times to the second, so trials that ended within one second are placed 1 ms apart
/// in their order (their true ends lie somewhere in that second).
fn distinct_times(points: &[(i64, f64)]) -> Vec<(i64, f64)> {
    let mut p = points.to_vec();
    p.sort_by_key(|(at, _)| *at);
    let mut last: Option<i64> = None;
    for (at, _) in &mut p {
        if let Some(l) = last.filter(|l| *at <= *l) {
            *at = l + 1;
        }
        last = Some(*at);
    }
    p
}

/// Seconds, as OpenMetrics writes timestamps; milliseconds only where a trial was
/// moved by [`distinct_times`]. (Whole seconds also keep clear of a bug of the Python
/// client before 0.21, Debian's 0.16 among them — client_python issue #1037 —, which
/// compares a timestamp with a fraction against a later one without as going backwards.)
fn timestamp(ms: i64) -> String {
    match ms.rem_euclid(1000) {
        0 => ms.div_euclid(1000).to_string(),
        frac => format!("{}.{frac:03}", ms.div_euclid(1000)),
    }
}

/// A series' labels: the configuration's parameters (flattened, names made valid),
/// the workload, and the run host's name.
fn config_labels(run: &RunReport, c: &Config) -> Labels {
    let mut l = Labels::default();
    for (k, v) in &c.flat {
        l.set(k, v);
    }
    l.set_absent("workload", c.workload.as_str());
    l.set_absent("host", &run.run.host.hostname);
    l
}

/// Label names (valid, unique) to values, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Labels(BTreeMap<String, String>);

impl Labels {
    /// Set a label named after `key` (characters other than ASCII letters, digits and
    /// `_` become `_`; a leading digit or `__`, reserved, gets `p_` before it). Two keys
    /// that become one name keep the first value and name the second `NAME_2` ….
    fn set(&mut self, key: &str, value: &str) {
        let base = label_name(key);
        let mut name = base.clone();
        let mut n = 1;
        while self.0.contains_key(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.0.insert(name, value.to_string());
    }

    /// Set a label only if none has its name.
    fn set_absent(&mut self, name: &str, value: &str) {
        self.0
            .entry(label_name(name))
            .or_insert_with(|| value.to_string());
    }

    /// `{a="…",b="…"}` (empty without labels).
    fn text(&self) -> String {
        if self.0.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = (self.0.iter())
            .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
            .collect();
        format!("{{{}}}", parts.join(","))
    }
}

fn label_name(key: &str) -> String {
    let s: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) || s.starts_with("__") {
        format!("p_{s}")
    } else {
        s
    }
}

/// A label value's escapes: backslash, double quote, line feed.
fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// HELP text's escapes: as a label value's (the format's escaped-string).
fn escape_help(v: &str) -> String {
    escape_label(v)
}

/// `YYYY-MM-DDTHH:MM:SSZ` (how fwbench stores times) → milliseconds since the epoch.
/// Hand-written as the inverse of the binary's `clock::format_utc` (Howard Hinnant's
/// days-from-civil) rather than a date crate for one fixed format.
pub fn epoch_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let days_in = match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if d < 1 || d > days_in || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let days = crate::conn::days_from_civil(y, m, d);
    Some((days * 86_400 + hh * 3600 + mm * 60 + ss) * 1000)
}

#[cfg(test)]
#[path = "openmetrics_tests.rs"]
mod tests;
