//! What the user reads: progress lines, the per-trial line, the run summary table,
//! and the `echo` result as text or JSON.

use crate::scenario::{Plan, PlannedTrial};
use crate::trial::{EchoOutcome, EchoParams, Status};
use serde_json::json;

pub fn params_line(p: &EchoParams) -> String {
    format!(
        "{} {}/IPv{} server={} n={} f={} t={}s",
        p.topology, p.proto, p.family, p.server, p.clients, p.frame_size, p.duration_s
    )
}

fn mbps(bps: f64) -> String {
    format!("{:.2}", bps / 1e6)
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

pub fn outcome_line(o: &EchoOutcome) -> String {
    match (&o.status, &o.summary) {
        (Status::Ok, Some(s)) => format!(
            "ok: {} Mb/s, {:.0} transactions/s, RTT p50 {} µs p99 {} µs, {} validation errors, {} unsent, {} lost",
            mbps(s.throughput_bps),
            s.transactions_per_s,
            us(s.rtt.p50_ns),
            us(s.rtt.p99_ns),
            s.validation_errors,
            s.unsent,
            s.lost
        ),
        (st, _) => format!(
            "{}: {}",
            st.as_str(),
            o.error.as_deref().unwrap_or("no results")
        ),
    }
}

pub fn plan_listing(plan: &Plan, estimate: impl Fn(&EchoParams) -> f64) -> String {
    let mut out = format!(
        "{} — {} trials (seed {})\n",
        plan.name,
        plan.trials.len(),
        plan.seed
    );
    if !plan.description.is_empty() {
        out += &format!("{}\n", plan.description.trim());
    }
    let mut total = 0.0;
    for (i, t) in plan.trials.iter().enumerate() {
        total += estimate(&t.params);
        out += &format!(
            "{:>4}  rep {}  {}  [{}]\n",
            i + 1,
            t.rep,
            params_line(&t.params),
            t.key
        );
    }
    out += &format!("estimated duration: {:.0} s\n", total);
    out
}

/// The table printed at the end of `fwbench run`.
pub fn summary_table(name: &str, rows: &[(PlannedTrial, EchoOutcome)]) -> String {
    let header = [
        "#", "topology", "P", "A", "T", "n", "f", "rep", "Mb/s", "trans/s", "p50 µs", "p99 µs",
        "errors", "unsent", "lost", "status",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for (i, (t, o)) in rows.iter().enumerate() {
        let p = &t.params;
        let mut r = vec![
            (i + 1).to_string(),
            p.topology.to_string(),
            p.proto.to_string(),
            format!("IPv{}", p.family),
            p.server.to_string(),
            p.clients.to_string(),
            p.frame_size.clone(),
            t.rep.to_string(),
        ];
        match &o.summary {
            Some(s) if o.status == Status::Ok => r.extend([
                mbps(s.throughput_bps),
                format!("{:.0}", s.transactions_per_s),
                us(s.rtt.p50_ns),
                us(s.rtt.p99_ns),
                s.validation_errors.to_string(),
                s.unsent.to_string(),
                s.lost.to_string(),
                "ok".into(),
            ]),
            _ => {
                r.extend(std::iter::repeat_n("-".to_string(), 7));
                r.push(o.status.as_str().into());
            }
        }
        table.push(r);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("\n{name}\n");
    for (ri, r) in table.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                let pad = widths[c] - v.chars().count();
                // numbers right-aligned, words left-aligned
                if (8..15).contains(&c) || c == 0 || c == 5 || c == 7 {
                    format!("{}{v}", " ".repeat(pad))
                } else {
                    format!("{v}{}", " ".repeat(pad))
                }
            })
            .collect();
        out += line.join("  ").trim_end();
        out += "\n";
        if ri == 0 {
            out += &widths
                .iter()
                .map(|w| "-".repeat(*w))
                .collect::<Vec<_>>()
                .join("  ");
            out += "\n";
        }
    }
    let notes: Vec<String> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, (_, o))| o.error.as_ref().map(|e| format!("  #{}: {e}", i + 1)))
        .collect();
    if !notes.is_empty() {
        out += "\nnotes:\n";
        out += &notes.join("\n");
        out += "\n";
    }
    out
}

/// The `echo --json` object.
pub fn echo_json(p: &EchoParams, o: &EchoOutcome) -> serde_json::Value {
    let mut v = json!({
        "workload": "echo",
        "status": o.status,
        "error": o.error,
        "topology": p.topology,
        "clients": p.clients,
        "duration_s": p.duration_s,
        "frame_size": p.frame_size,
        "proto": p.proto,
        "family": p.family.to_string().parse::<u8>().unwrap_or(0),
        "server": p.server,
        "timeout_ms": p.timeout_ms,
        "seed": p.seed,
        "started_at": o.started_at,
        "finished_at": o.finished_at,
        "placement": o.placement,
        "gateway": o.gateway,
    });
    if let Some(s) = &o.summary {
        let r = s.rtt;
        let f = |ns: u64| ns as f64 / 1e3;
        let extra = json!({
            "elapsed_s": s.elapsed_s,
            "throughput_bps": s.throughput_bps,
            "transactions_per_s": s.transactions_per_s,
            "per_client_throughput_bps": s.per_client_throughput_bps,
            "validation_errors": s.validation_errors,
            "unsent": s.unsent,
            "lost": s.lost,
            "rtt_us": {
                "count": r.count, "min": f(r.min_ns), "mean": r.mean_ns / 1e3,
                "p50": f(r.p50_ns), "p90": f(r.p90_ns), "p99": f(r.p99_ns),
                "p999": f(r.p999_ns), "max": f(r.max_ns),
            },
            "mp": {
                "mp1": s.mp[0], "mp2": s.mp[1], "mp3": s.mp[2], "mp4": s.mp[3],
            },
            "per_client": s.clients,
        });
        if let (Some(a), Some(b)) = (v.as_object_mut(), extra.as_object()) {
            a.extend(b.clone());
        }
    }
    v
}

pub fn echo_text(p: &EchoParams, o: &EchoOutcome) -> String {
    let mut out = format!("echo {}\n", params_line(p));
    let Some(s) = o.summary.as_ref().filter(|_| o.status == Status::Ok) else {
        return out + &format!("{}\n", outcome_line(o));
    };
    out += &format!(
        "  throughput   {} Mb/s ({:.0} transactions/s) over {:.2} s\n",
        mbps(s.throughput_bps),
        s.transactions_per_s,
        s.elapsed_s
    );
    out += &format!(
        "  RTT µs       min {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n",
        us(s.rtt.min_ns),
        us(s.rtt.p50_ns),
        us(s.rtt.p90_ns),
        us(s.rtt.p99_ns),
        us(s.rtt.p999_ns),
        us(s.rtt.max_ns)
    );
    out += &format!(
        "  frames       MP1 {}  MP2 {}  MP3 {}  MP4 {}\n",
        s.mp[0].frames, s.mp[1].frames, s.mp[2].frames, s.mp[3].frames
    );
    out += &format!(
        "  problems     {} validation errors, {} unsent, {} lost\n",
        s.validation_errors, s.unsent, s.lost
    );
    out += "  client  source             Mb/s   trans/s   p50 µs   p99 µs  errors\n";
    for c in &s.clients {
        out += &format!(
            "  {:>6}  {:<16} {:>7} {:>9.0} {:>8} {:>8} {:>7}{}\n",
            c.client,
            c.source,
            mbps(c.throughput_bps),
            c.transactions_per_s,
            us(c.rtt.p50_ns),
            us(c.rtt.p99_ns),
            c.validation_client.total() + c.validation_server.total(),
            c.error
                .as_ref()
                .map(|e| format!("  ({e})"))
                .unwrap_or_default()
        );
    }
    let place: Vec<String> = o
        .placement
        .iter()
        .map(|r| format!("{} on CPUs {}", r.role, r.cpus))
        .collect();
    out += &format!("  placement    {}\n", place.join(", "));
    out
}
