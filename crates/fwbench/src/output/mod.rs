//! What the user reads: progress lines, the per-trial line, the run summary table,
//! and the `echo` result as text or JSON.

pub mod doc;
pub mod imported;
pub mod live;
pub mod search;

use crate::outcome::{Outcome, Status};
use crate::params::workload::{ConnKind, PacketKind, TrialKind, Workload};
use crate::params::TrialParams;
use crate::plan::scenario::{Plan, PlannedTrial};
use crate::workloads::Figures;

pub fn params_line(p: &TrialParams) -> String {
    let rules = if p.engine == firewall::Engine::None {
        String::new()
    } else {
        let family = if p.nft_family.is_default() {
            String::new()
        } else {
            format!(" nft_family={}", p.nft_family)
        };
        format!(
            " engine={}{family} model={} rules={} pos={}",
            p.engine, p.model, p.rules, p.position
        )
    };
    let what = match &p.kind {
        TrialKind::Conn(c, k) => conn_what(*c, k, p.duration_s),
        TrialKind::Packet(pk, k) => {
            let what = match pk {
                PacketKind::Ping => format!(
                    "size={}{}{}",
                    k.size,
                    k.count.map(|c| format!(" count={c}")).unwrap_or_default(),
                    if k.interval_ns > 0 {
                        format!(" interval={}µs", k.interval_ns / 1000)
                    } else {
                        String::new()
                    }
                ),
                PacketKind::Flood | PacketKind::Flow => format!(
                    "size={} rate={} flows={}{} threads={} sender={} sink={}{}",
                    k.size,
                    k.rate,
                    k.flows,
                    if k.dsts > 1 {
                        format!(" dsts={}", k.dsts)
                    } else {
                        String::new()
                    },
                    k.threads,
                    k.sender.name(),
                    k.sink.name(),
                    imported::aim_text(k)
                ),
                PacketKind::NewFlows => format!(
                    "flows={} rate={} threads={}{}",
                    k.flows,
                    k.rate,
                    k.threads,
                    crate::workloads::ctsummary::settings_text(k)
                ),
            };
            format!("{what} t={}s", p.duration_s)
        }
        TrialKind::Echo => String::new(),
    };
    if !what.is_empty() {
        let label = p
            .label
            .as_ref()
            .map(|l| format!("[{l}] "))
            .unwrap_or_default();
        return format!(
            "{label}{} {} IPv{} {what}{rules}",
            p.name(),
            p.topology,
            p.family
        );
    }
    format!(
        "{} {}/IPv{} server={} n={} f={} t={}s{rules}",
        p.topology, p.proto, p.family, p.server, p.clients, p.frame_size, p.duration_s
    )
}

/// The connection workload's own parameters, as typed.
fn conn_what(w: ConnKind, k: &crate::params::conn::ConnParams, duration_s: f64) -> String {
    use crate::params::conn::format_size;
    let parallel = match k.parallel {
        0 => "auto".to_string(),
        n => n.to_string(),
    };
    let amount = match k.count {
        Some(c) => format!("count={c}"),
        None => format!("t={duration_s}s"),
    };
    let mut s = match w {
        ConnKind::Sessions => format!(
            "parallel={parallel} request={} response={} {amount}",
            format_size(u64::from(k.request)),
            format_size(k.size)
        ),
        ConnKind::Connections => format!("limit={} hold={}s", k.limit, k.hold_s),
        ConnKind::Bulk | ConnKind::Http => {
            format!("size={} parallel={parallel} {amount}", format_size(k.size))
        }
    };
    for (what, prog) in [("server", &k.server_program), ("client", &k.client_program)] {
        if let Some(p) = prog {
            s += &format!(" {what}={p}");
        }
    }
    s
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// The headline of a connection trial.
fn conn_line(c: &crate::workloads::conn::ConnSummary) -> String {
    let trouble = if c.failed + c.corrupt > 0 {
        format!(", {} failed, {} CORRUPT", c.failed, c.corrupt)
    } else {
        String::new()
    };
    match c.mode {
        proto::ConnMode::Hold => {
            let h = c.hold.clone().unwrap_or_else(|| proto::HoldResults {
                reached: 0,
                limit: 0,
                alive_at_stop: 0,
                limiter: "no result".into(),
                errno: None,
                open_ms: 0.0,
                nofile_before: None,
                nofile: None,
            });
            let ct = match c.scale.as_ref().and_then(|x| x.gateway_conntrack) {
                Some(n) => format!(", gateway conntrack {n} entries"),
                None => String::new(),
            };
            format!(
                "ok: {} connections held ({} still open at stop){ct}, limited by: {}",
                h.reached, h.alive_at_stop, h.limiter
            )
        }
        proto::ConnMode::Sessions => format!(
            "ok: {} sessions, {:.0} sessions/s, session mean {} ms p50 {} p99 {} ms{trouble}",
            c.sessions,
            c.sessions_per_s,
            ms(c.session.mean_ns),
            ms(c.session.p50_ns as f64),
            ms(c.session.p99_ns as f64)
        ),
        _ => {
            format!(
            "ok: {} × {} bytes, {} Mb/s goodput{}, download mean {} ms (first byte {} ms){trouble}",
            c.sessions,
            c.bytes.checked_div(c.sessions).unwrap_or(0),
            mbps(c.goodput_bps),
            c.overhead
                .as_ref()
                .map(|o| format!(" ({} without session overhead)", net_goodput(o)))
                .unwrap_or_default(),
            ms(c.ttlb.mean_ns),
            ms(c.ttfb.mean_ns)
        )
        }
    }
}

fn mbps(bps: f64) -> String {
    format!("{:.2}", bps / 1e6)
}

/// A bulk trial's goodput net of session overhead, or why it has none.
fn net_goodput(o: &crate::workloads::conn::OverheadSplit) -> String {
    match o.net_goodput_bps {
        Some(n) => format!("{} Mb/s", mbps(n)),
        None => "no net goodput (the measured session overhead fills the whole run)".into(),
    }
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

fn pps(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} Mpps", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} kpps", v / 1e3)
    } else {
        format!("{v:.0} pps")
    }
}

/// ", ±0.8 % (95 % CI) after 3.4 s" for adaptive trials.
fn precision_note(o: &Outcome) -> String {
    match &o.precision {
        None => String::new(),
        Some(p) => format!(
            ", {} after {:.1} s ({} the ±{:.2} % target)",
            p.achieved
                .map(|a| format!("±{:.2} % (95 % CI)", a * 100.0))
                .unwrap_or_else(|| "too few windows for a CI".into()),
            p.duration_s,
            if p.reached { "met" } else { "NOT met:" },
            p.target * 100.0
        ),
    }
}

pub fn outcome_line(o: &Outcome) -> String {
    let mut line = outcome_line_fixed(o);
    if o.clean_start == Some(false) {
        line = format!("[gateway not clean at start] {line}");
    }
    if o.status.measured() {
        line += &precision_note(o);
    }
    if o.status == Status::Flagged {
        line += &format!(
            " [FLAGGED: {}]",
            o.error
                .as_deref()
                .unwrap_or("a figure's witness does not hold")
        );
    }
    line
}

fn outcome_line_fixed(o: &Outcome) -> String {
    let st = o.status.as_str();
    if let (true, Some(s)) = (o.status.measured(), &o.search) {
        return format!("{st}: {}", s.line());
    }
    // Each family's line (echo's below, with the other statuses).
    let figures = o.figures.as_ref().filter(|_| o.status.measured());
    match figures {
        Some(Figures::Packet(s)) => {
            return format!(
                "{st}: offered {}, sent {}, received {} ({} Mb/s payload, {} Mb/s L2), loss {:.4}%{}{}",
                pps(s.offered_pps),
                pps(s.sent_pps),
                pps(s.received_pps),
                mbps(s.received_bps),
                mbps(s.received_l2_bps),
                s.loss_ratio * 100.0,
                if s.owd.count > 0 {
                    format!(
                        ", one-way delay p50 {} µs, jitter {:.1} µs",
                        us(s.owd.p50_ns),
                        s.jitter_ns / 1e3
                    )
                } else {
                    String::new()
                },
                match &s.limited_by {
                    Some(l) => format!(", limited by {}", l.short()),
                    None => String::new(),
                }
            );
        }
        Some(Figures::Conn(c)) => return conn_line(c).replacen("ok:", &format!("{st}:"), 1),
        Some(Figures::Ping(s)) => {
            return format!(
                "{st}: {}/{} replies, RTT min {} avg {:.1} p50 {} p99 {} max {} µs, {} lost",
                s.received,
                s.sent,
                us(s.rtt.min_ns),
                s.rtt.mean_ns / 1e3,
                us(s.rtt.p50_ns),
                us(s.rtt.p99_ns),
                us(s.rtt.max_ns),
                s.lost
            );
        }
        Some(Figures::Echo(_)) | None => {}
    }
    match (&o.status, o.echo()) {
        (status, Some(s)) if status.measured() => format!(
            "{st}: {} Mb/s, {:.0} transactions/s, RTT p50 {} µs p99 {} µs, {} validation errors, {} unsent, {} lost",
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

pub fn plan_listing(plan: &Plan, estimate: impl Fn(&TrialParams) -> f64) -> String {
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

fn external_gateway(o: &Outcome) -> bool {
    o.placement
        .iter()
        .any(|r| r.place == crate::outcome::EXTERNAL_GATEWAY)
}

fn verdict_cell(o: &Outcome) -> String {
    match o.firewall().map(|f| f.verdicts_ok()) {
        None if external_gateway(o) => "external".into(),
        None => "-".into(),
        Some(Some(true)) => "ok".into(),
        Some(_) => "MISMATCH".into(),
    }
}

/// The table printed at the end of `fwbench run`.
pub fn summary_table(name: &str, rows: &[(PlannedTrial, Outcome)]) -> String {
    // (title, right-aligned)
    let header: [(&str, bool); 20] = [
        ("#", true),
        ("topology", false),
        ("engine", false),
        ("model", false),
        ("rules", true),
        ("P", false),
        ("A", false),
        ("T", false),
        ("n", true),
        ("f", false),
        ("rep", true),
        ("Mb/s", true),
        ("trans/s", true),
        ("p50 µs", true),
        ("p99 µs", true),
        ("errors", true),
        ("unsent", true),
        ("lost", true),
        ("verdicts", false),
        ("status", false),
    ];
    let echo = trial_table(&header, rows, |i, t, o| {
        let p = &t.params;
        if p.workload() != Workload::Echo {
            return None;
        }
        let installed = o.firewall().map_or(0, |f| f.rules);
        let mut r = vec![
            (i + 1).to_string(),
            p.topology.to_string(),
            engine_cell(p),
            model_cell(p),
            installed.to_string(),
            p.proto.to_string(),
            format!("IPv{}", p.family),
            p.server.to_string(),
            p.clients.to_string(),
            p.frame_size.clone(),
            t.rep.to_string(),
        ];
        match o.echo() {
            Some(s) if o.status.measured() => r.extend([
                mbps(s.throughput_bps),
                format!("{:.0}", s.transactions_per_s),
                us(s.rtt.p50_ns),
                us(s.rtt.p99_ns),
                s.validation_errors.to_string(),
                s.unsent.to_string(),
                s.lost.to_string(),
            ]),
            _ => r.extend(std::iter::repeat_n("-".to_string(), 7)),
        }
        r.push(verdict_cell(o));
        r.push(o.status.as_str().into());
        Some(r)
    });
    let mut out = format!("\n{name}\n{echo}");
    for extra in [packet_table(rows), conn_table(rows)] {
        if !extra.is_empty() {
            if out.lines().count() > 2 {
                out += "\n";
            }
            out += &extra;
        }
    }
    let mut notes: Vec<String> = Vec::new();
    for (i, (_, o)) in rows.iter().enumerate() {
        if let Some(e) = &o.error {
            notes.push(format!("  #{}: {e}", i + 1));
        }
        if let Some(v) = o.firewall().and_then(|f| f.verdicts.as_ref()) {
            for p in &v.problems {
                notes.push(format!("  #{}: verdict check: {p}", i + 1));
            }
        }
    }
    if !notes.is_empty() {
        out += "\nnotes:\n";
        out += &notes.join("\n");
        out += "\n";
    }
    out
}

pub fn echo_text(p: &TrialParams, o: &Outcome) -> String {
    let mut out = format!("echo {}\n", params_line(p));
    let Some(s) = o
        .echo()
        .filter(|_| matches!(o.status, Status::Ok | Status::Flagged | Status::Dropped))
    else {
        return out + &format!("{}\n", outcome_line(o));
    };
    out += &flagged_text(o);
    out += &format!(
        "  throughput   {} Mb/s ({:.0} transactions/s) over {:.2} s{}\n",
        mbps(s.throughput_bps),
        s.transactions_per_s,
        s.elapsed_s,
        longer_than_asked(p.duration_s, s.elapsed_s, p.clients)
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
    if o.precision.is_some() {
        out += &format!(
            "  adaptive     {}\n",
            precision_note(o).trim_start_matches(", ")
        );
    }
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
    out += &firewall_lines(o);
    out
}

/// The rule-set and placement lines of a trial's text output.
fn firewall_lines(o: &Outcome) -> String {
    let mut out = String::new();
    if let Some(f) = o.firewall() {
        out +=
            &format!(
            "  rules        {} engine: {} rules, {} set elements; install {:.1} ms, remove {} ms\n",
            f.engine,
            f.rules,
            f.elements,
            f.install_ms,
            f.remove_ms.map(|m| format!("{m:.1}")).unwrap_or_else(|| "?".into()),
        );
        if !f.settings.is_empty() {
            out += &format!("  settings     {}\n", f.settings.to_line());
        }
        if let Some(e) = o.figures.as_ref().and_then(|f| f.events()) {
            let engine = f.engine.to_string();
            for line in crate::workloads::events::text(e, &engine).lines().skip(1) {
                out += &format!("  events       {}\n", line.trim_start());
            }
        }
        let v = f.verdicts.as_ref();
        // Counters that could not be read print as JSON's null.
        let n = |x: Option<u64>| x.map_or_else(|| "null".to_string(), |x| x.to_string());
        out += &format!(
            "  verdicts     {}: {} packets matched, filler {}, policy drops {}{}\n",
            if f.verdicts_ok() == Some(true) {
                "ok"
            } else {
                "MISMATCH"
            },
            n(v.map(|v| v.matched_packets)),
            n(v.map(|v| v.filler_packets)),
            n(v.map(|v| v.policy_drops)),
            v.filter(|v| !v.problems.is_empty())
                .map(|v| format!(" ({})", v.problems.join("; ")))
                .unwrap_or_default()
        );
        if let Some(v) = v {
            out += &crate::output::imported::hits_text(v);
        }
    }
    if o.clean_start == Some(false) {
        out += &format!(
            "  gateway: not clean at start: {} (left by an earlier trial)\n",
            o.start_differences.join(", ")
        );
    }
    if external_gateway(o) {
        out += &format!("  gateway      {}\n", crate::outcome::EXTERNAL_GATEWAY);
    }
    // Shards of a role on the same CPUs (held connections) make one entry: "13 × client".
    let mut place: Vec<(String, usize)> = Vec::new();
    for r in o
        .placement
        .iter()
        .filter(|r| r.place != crate::outcome::EXTERNAL_GATEWAY)
    {
        let text = format!("{} on CPUs {}", r.role, r.cpus);
        match place.iter_mut().find(|(t, _)| *t == text) {
            Some((_, n)) => *n += 1,
            None => place.push((text, 1)),
        }
    }
    let place: Vec<String> = place
        .into_iter()
        .map(|(t, n)| if n == 1 { t } else { format!("{n} × {t}") })
        .collect();
    out += &format!("  placement    {}\n", place.join(", "));
    out
}

/// A size mix's line: each frame size with its weight, packets sent and received and
/// the received share.
fn mix_text(m: &crate::workloads::packet::MixSummary) -> String {
    let total: u64 = m.sizes.iter().map(|r| r.received).sum();
    let rows: Vec<String> = m
        .sizes
        .iter()
        .map(|r| {
            format!(
                "{} B ×{}: sent {} received {} ({:.1} %)",
                r.frame,
                r.weight,
                r.sent,
                r.received,
                r.received as f64 * 100.0 / total.max(1) as f64
            )
        })
        .collect();
    format!("  sizes        {}; {}\n", m.mix, rows.join(", "))
}

/// A role spread over several hosts: a line per host (flows, counts, median delay).
fn hosts_text(hosts: &[crate::workloads::packet::HostFigures]) -> String {
    let count = |role: &str| hosts.iter().filter(|h| h.role == role).count();
    hosts
        .iter()
        .map(|h| {
            let label = crate::testbed::file::role_label(&h.role, h.host as usize, count(&h.role));
            let what = if h.role == "client" {
                format!(
                    "flows {}-{}, sent {}, received {}",
                    h.first_flow,
                    (h.first_flow + h.flows).saturating_sub(1),
                    h.sent,
                    h.received
                )
            } else {
                format!("received {}", h.received)
            };
            let owd = if h.owd.count > 0 {
                format!(", one-way p50 {} µs", us(h.owd.p50_ns))
            } else {
                String::new()
            };
            format!("  {label:<12} {} — {what}{owd}\n", h.place)
        })
        .collect()
}

/// A flagged trial's doubts, one line each ("" for any other status): said before
/// its figures, so none is read as a finding.
fn flagged_text(o: &Outcome) -> String {
    if o.status != Status::Flagged {
        return String::new();
    }
    o.doubts
        .iter()
        .map(|d| format!("  FLAGGED      {d}\n"))
        .collect()
}

/// A flood's, flow's or new-flow trial's lines: packets, rates, loss, delays, hosts,
/// the interfaces' counters, conntrack, what limited it, the sender's lag.
fn packet_text(
    p: &TrialParams,
    o: &Outcome,
    s: &crate::workloads::packet::PacketSummary,
) -> String {
    let family = p.family;
    let mut out = String::new();
    let k = p.packet().cloned().unwrap_or_default();
    out += &format!(
        "  packets      {} ({}), counted at the {}\n",
        crate::workloads::packet::size_text(&k, family),
        k.rate,
        s.counted_at
    );
    out += &format!(
        "  rate         offered {}  sent {}  received {} over {:.2} s\n",
        pps(s.offered_pps),
        pps(s.sent_pps),
        pps(s.received_pps),
        s.elapsed_s
    );
    out += &format!(
        "  throughput   {} Mb/s UDP payload, {} Mb/s Ethernet (FCS incl.)\n",
        mbps(s.received_bps),
        mbps(s.received_l2_bps)
    );
    out += &format!(
        "  loss         {} of {} packets ({:.4} %), {} duplicates, {} reordered\n",
        s.lost,
        s.sent,
        s.loss_ratio * 100.0,
        s.duplicates,
        s.reordered
    );
    if let Some(m) = &s.mix {
        out += &mix_text(m);
    }
    let clocks = match &s.owd_clocks {
        None if s.hosts.is_none() => "shared clock of one host".to_string(),
        None => "the hosts share one clock".to_string(),
        Some(c) if !c.pairs.is_empty() => format!(
            "{} pairs of hosts' clocks, each corrected, the least certain by {:.1} ± {:.1} µs",
            c.pairs.len(),
            c.correction_ns as f64 / 1e3,
            c.uncertainty_ns as f64 / 1e3
        ),
        Some(c) => format!(
            "two hosts' clocks, corrected by {:.1} ± {:.1} µs",
            c.correction_ns as f64 / 1e3,
            c.uncertainty_ns as f64 / 1e3
        ),
    };
    if s.owd.count > 0 {
        out += &format!(
            "  one-way µs   min {}  p50 {}  p99 {}  max {}  jitter {:.2} (RFC 3550; {clocks})\n",
            us(s.owd.min_ns),
            us(s.owd.p50_ns),
            us(s.owd.p99_ns),
            us(s.owd.max_ns),
            s.jitter_ns / 1e3
        );
    } else if let Some(c) = s.owd_clocks.as_ref().filter(|c| c.basis == "rtt-only") {
        let which = if c.pairs.is_empty() {
            "the two hosts' clocks are"
        } else {
            "a pair of hosts' clocks is"
        };
        out += &format!(
            "  one-way      not shown: {which} known to ± {:.1} µs only, more than the delay (use `fwbench ping` for round trips); jitter {:.2} µs\n",
            c.uncertainty_ns as f64 / 1e3,
            s.jitter_ns / 1e3
        );
    }
    out += &hosts_text(s.hosts.as_deref().map_or(&[], |h| h.as_slice()));
    let k2 = &s.kernel;
    if k2.rcvbuf_errors + k2.in_errors > 0 {
        out += &format!(
            "  sink kernel  {} receive-buffer overflows, {} UDP input errors\n",
            k2.rcvbuf_errors, k2.in_errors
        );
    }
    let gw = o.gateway.iter().flat_map(|g| g.interfaces.iter());
    for (role, i) in gw
        .map(|i| ("gateway", i))
        .chain(s.sink_interfaces.iter().map(|i| ("server", i)))
    {
        out += &format!(
            "  {role} {:<4} rx {} (dropped {})  tx {} (dropped {})\n",
            i.name, i.rx_packets, i.rx_dropped, i.tx_packets, i.tx_dropped
        );
    }
    match &s.conntrack {
        Some(c) if p.workload() == Workload::NewFlows => {
            out += &format!(
                "  conntrack    {:.0} new flows/s admitted; {}\n",
                c.new_flows_per_s,
                c.sentence()
            );
        }
        Some(c) => out += &format!("  conntrack    {}\n", c.table_text()),
        None => {}
    }
    if let Some(l) = &s.limited_by {
        out += &format!("  limited by   {}: {}\n", l.by.as_str(), l.why);
        if let Some(w) = l.warning() {
            out += &format!("  warning      {w}\n");
        }
    }
    if s.send_errors > 0 || s.max_lag_ns > 10_000_000 {
        out += &format!(
            "  sender       {} refused sends (retried), fell behind its schedule by up to {:.1} ms\n",
            s.send_errors,
            s.max_lag_ns as f64 / 1e6
        );
    }
    out
}

pub fn trial_text(p: &TrialParams, o: &Outcome) -> String {
    if p.workload() == Workload::Echo {
        return echo_text(p, o);
    }
    let mut out = format!("{}\n", params_line(p));
    if o.status == Status::Dropped {
        out += &format!("  DROPPED      {}\n", o.error.as_deref().unwrap_or(""));
    }
    out += &flagged_text(o);
    let figures = o
        .figures
        .as_ref()
        .filter(|_| matches!(o.status, Status::Ok | Status::Flagged | Status::Dropped));
    match figures {
        Some(Figures::Packet(s)) => out += &packet_text(p, o, s),
        Some(Figures::Conn(c)) => out += &conn_text(c),
        Some(Figures::Ping(s)) => {
            out += &format!(
                "  probes       {} sent, {} replies, {} lost, {} invalid over {:.2} s\n",
                s.sent, s.received, s.lost, s.invalid, s.elapsed_s
            );
            out += &format!(
                "  RTT µs       min {}  avg {:.2}  p50 {}  p90 {}  p99 {}  max {}\n",
                us(s.rtt.min_ns),
                s.rtt.mean_ns / 1e3,
                us(s.rtt.p50_ns),
                us(s.rtt.p90_ns),
                us(s.rtt.p99_ns),
                us(s.rtt.max_ns)
            );
        }
        Some(Figures::Echo(_)) | None => return out + &format!("{}\n", outcome_line(o)),
    }
    if o.precision.is_some() {
        out += &format!(
            "  adaptive     {}\n",
            precision_note(o).trim_start_matches(", ")
        );
    }
    out + &firewall_lines(o)
}

/// Held connections: processes, open-file limit, conntrack peak, memory peaks.
fn scale_text(x: &crate::workloads::conn::HoldScale) -> String {
    let mib = |k: Option<u64>| k.map_or("-".into(), |k| format!("{:.0} MiB", k as f64 / 1024.0));
    let mut out = format!(
        "  processes    {} client and {} server process{} ({}); {}\n",
        x.processes,
        x.processes,
        if x.processes == 1 { "" } else { "es" },
        if x.processes == 1 {
            "port 21000".to_string()
        } else {
            format!("ports 21000-{}", 21000 + x.processes - 1)
        },
        x.nofile_text()
    );
    out += &match (x.gateway_conntrack, x.conntrack_max) {
        (Some(0), _) => "  conntrack    0 entries on the gateway: its rules track nothing (--engine nft --model conntrack do)\n".into(),
        (Some(n), Some(m)) => format!("  conntrack    {n} entries at the peak on the gateway (nf_conntrack_max {m})\n"),
        (Some(n), None) => format!("  conntrack    {n} entries at the peak on the gateway\n"),
        (None, _) => "  conntrack    not read (no gateway agent or no conntrack there)\n".into(),
    };
    if let Some((a, b)) = x.conntrack_max_raised {
        out += &format!(
            "  conntrack    raised nf_conntrack_max from {a} to {b} for the trial (restored)\n"
        );
    }
    out += &format!(
        "  peak memory  controller {}, client process {}, server process {}, gateway {} (VmHWM, largest)\n",
        mib(x.controller_hwm_kib),
        mib(x.client_hwm_kib),
        mib(x.server_hwm_kib),
        mib(x.gateway_hwm_kib)
    );
    out
}

/// A connection trial's figures, one aspect per line.
fn conn_text(c: &crate::workloads::conn::ConnSummary) -> String {
    let dist = |name: &str, d: &proto::Durations| {
        format!(
            "  {name:<12} mean {}  sd {}  min {}  p50 {}  p90 {}  p99 {}  max {} ms\n",
            ms(d.mean_ns),
            ms(d.sd_ns),
            ms(d.min_ns as f64),
            ms(d.p50_ns as f64),
            ms(d.p90_ns as f64),
            ms(d.p99_ns as f64),
            ms(d.max_ns as f64)
        )
    };
    let mut out = String::new();
    if let Some(h) = &c.hold {
        out += &format!(
            "  connections  {} of {} opened in {:.0} ms, {} still open after the hold\n",
            h.reached, h.limit, h.open_ms, h.alive_at_stop
        );
        out += &format!("  limited by   {}\n", h.limiter);
        out += &format!(
            "  server       {} accepted, {} open at most, {} accept errors\n",
            c.server.accepted, c.server.max_open, c.server.accept_errors
        );
        if let Some(x) = &c.scale {
            out += &scale_text(x);
        }
        return out;
    }
    out += &format!(
        "  sessions     {} completed, {} failed, {} corrupt, {} at once, over {:.3} s: {:.1} sessions/s\n",
        c.sessions, c.failed, c.corrupt, c.parallel, c.elapsed_s, c.sessions_per_s
    );
    out += &dist("session", &c.session);
    out += &dist("connect", &c.connect);
    out += &dist("first byte", &c.ttfb);
    out += &dist("last byte", &c.ttlb);
    if c.bytes > 0 {
        out += &format!(
            "  goodput      {} Mb/s ({} bytes in {:.3} s)\n",
            mbps(c.goodput_bps),
            c.bytes,
            c.elapsed_s
        );
    }
    if let Some(o) = &c.overhead {
        out += &format!(
            "  overhead     {:.3} ms per session (zero-byte sessions) × {:.1} in sequence = {:.3} ms; \
             transfer {:.3} ms → {}\n",
            o.per_session_s * 1e3,
            o.sessions_charged,
            o.overhead_s * 1e3,
            o.transfer_s * 1e3,
            net_goodput(o)
        );
    }
    for (msg, n) in &c.errors {
        out += &format!("  error        {n} × {msg}\n");
    }
    if let Some(p) = &c.proxy {
        out += &format!(
            "  proxy        {} connections, {} bytes up, {} bytes down, {} upstream failures, {} errors\n",
            p.connections, p.bytes_up, p.bytes_down, p.upstream_failures, p.errors
        );
    }
    for (what, prog) in [
        ("client", &c.client_program),
        ("server", &c.server.external),
    ] {
        if let Some(p) = prog {
            out += &format!("  {what:<12} {p}\n");
        }
    }
    out
}

/// One trial's JSON object, any workload (the shape of docs/schema/trial.json).
pub fn trial_json(p: &TrialParams, o: &Outcome) -> serde_json::Value {
    serde_json::to_value(doc::TrialDoc::new(p, o)).unwrap_or_default()
}

/// Version of each `--json` output's shape. Bump a kind's number when a key changes
/// meaning or goes away (adding keys keeps it); scripts check `schema`.
pub const JSON_VERSION: u32 = 1;

/// The `schema` value of a `--json` output: `fwbench/<kind>/<version>`.
pub fn schema(kind: &str) -> String {
    format!("fwbench/{kind}/{JSON_VERSION}")
}

/// The binary that produced an output (every `--json` object carries it).
pub fn build_json() -> serde_json::Value {
    serde_json::to_value(doc::BuildInfo::this()).unwrap_or_default()
}

/// The model column: `-` without an engine (nothing is installed).
fn model_cell(p: &TrialParams) -> String {
    if p.engine == firewall::Engine::None {
        "-".into()
    } else {
        p.model.to_string()
    }
}

/// One table of a run's trials: a row per trial `cells` gives one for (`None`: not
/// this table's, e.g. another workload's); empty when it gives none.
fn trial_table(
    header: &[(&str, bool)],
    rows: &[(PlannedTrial, Outcome)],
    mut cells: impl FnMut(usize, &PlannedTrial, &Outcome) -> Option<Vec<String>>,
) -> String {
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| h.0.to_string()).collect()];
    table.extend(
        rows.iter()
            .enumerate()
            .filter_map(|(i, (t, o))| cells(i, t, o)),
    );
    if table.len() == 1 {
        return String::new();
    }
    render_table(header, &table)
}

/// Columns aligned, a rule under the header. `header`: (title, right-aligned).
fn render_table(header: &[(&str, bool)], table: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (ri, r) in table.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                let pad = " ".repeat(widths[c] - v.chars().count());
                if header[c].1 {
                    format!("{pad}{v}")
                } else {
                    format!("{v}{pad}")
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
    out
}

/// Flood, flow and ping trials of a run, one row each.
fn packet_table(rows: &[(PlannedTrial, Outcome)]) -> String {
    let header: [(&str, bool); 16] = [
        ("#", true),
        ("workload", false),
        ("topology", false),
        ("engine", false),
        ("model", false),
        ("rules", true),
        ("A", false),
        ("size", false),
        ("rate", false),
        ("rep", true),
        ("sent pps", true),
        ("recv pps", true),
        ("loss %", true),
        ("p50 µs", true),
        ("verdicts", false),
        ("status", false),
    ];
    let mut searches = Vec::new();
    let mut out = trial_table(&header, rows, |i, t, o| {
        let p = &t.params;
        let k = p.packet().filter(|_| p.workload() != Workload::Echo)?;
        let mut r = vec![
            (i + 1).to_string(),
            p.name().into(),
            p.topology.to_string(),
            engine_cell(p),
            model_cell(p),
            o.firewall().map_or(0, |f| f.rules).to_string(),
            format!("IPv{}", p.family),
            k.size.to_string(),
            if p.workload() == Workload::Ping {
                "-".into()
            } else {
                k.rate.to_string()
            },
            t.rep.to_string(),
        ];
        match (o.packet(), o.ping()) {
            (Some(s), _) if o.status.measured() => r.extend([
                format!("{:.0}", s.sent_pps),
                format!("{:.0}", s.received_pps),
                format!("{:.4}", s.loss_ratio * 100.0),
                if s.owd.count > 0 {
                    us(s.owd.p50_ns)
                } else {
                    "-".into()
                },
            ]),
            (_, Some(s)) if o.status.measured() => r.extend([
                format!("{:.0}", s.sent as f64 / s.elapsed_s.max(1e-9)),
                format!("{:.0}", s.received as f64 / s.elapsed_s.max(1e-9)),
                format!("{:.4}", s.lost as f64 * 100.0 / (s.sent.max(1)) as f64),
                us(s.rtt.p50_ns),
            ]),
            _ if o.status.measured() && o.search.is_some() => {
                let s = o.search.as_ref().expect("checked");
                let v = s.value().map(|v| format!("{v:.0}")).unwrap_or("-".into());
                let (recv, rules) = match &p.search {
                    Some(
                        crate::params::search::Search::Ndr(_)
                        | crate::params::search::Search::Mlr(_),
                    ) => (v, "-".to_string()),
                    Some(
                        crate::params::search::Search::Degrade(_)
                        | crate::params::search::Search::SweetSpot,
                    )
                    | None => ("-".to_string(), v),
                };
                r[5] = rules;
                r.extend([
                    "-".into(),
                    recv,
                    format!(
                        "≤{:.3}",
                        p.search_params().map(|x| x.loss).unwrap_or(0.0) * 100.0
                    ),
                    "-".into(),
                ]);
                searches.push(format!("  #{}: {}", i + 1, s.line()));
            }
            _ => r.extend(std::iter::repeat_n("-".to_string(), 4)),
        }
        r.push(verdict_cell(o));
        r.push(o.status.as_str().into());
        Some(r)
    });
    if !searches.is_empty() {
        out += "searches (ndr: recv pps is the rate found; degrade: rules is the first degraded count):\n";
        out += &searches.join("\n");
        out += "\n";
    }
    out
}

/// Connection trials of a run (sessions, bulk, http, connections), one row each.
fn conn_table(rows: &[(PlannedTrial, Outcome)]) -> String {
    let header: [(&str, bool); 13] = [
        ("#", true),
        ("label / workload", false),
        ("topology", false),
        ("engine", false),
        ("rules", true),
        ("parallel", true),
        ("rep", true),
        ("sessions", true),
        ("sessions/s", true),
        ("mean ms", true),
        ("Mb/s", true),
        ("failed", true),
        ("status", false),
    ];
    trial_table(&header, rows, |i, t, o| {
        let p = &t.params;
        let k = p.conn()?;
        let mut r = vec![
            (i + 1).to_string(),
            p.label.clone().unwrap_or_else(|| p.name().to_string()),
            p.topology.to_string(),
            engine_cell(p),
            o.firewall().map_or(0, |f| f.rules).to_string(),
            match k.parallel {
                0 => "auto".into(),
                n => n.to_string(),
            },
            t.rep.to_string(),
        ];
        match (o.conn(), &o.search) {
            (Some(c), _) if o.status.measured() => r.extend([
                match &c.hold {
                    Some(h) => h.reached.to_string(),
                    None => c.sessions.to_string(),
                },
                format!("{:.1}", c.sessions_per_s),
                ms(c.session.mean_ns),
                mbps(c.goodput_bps),
                (c.failed + c.corrupt).to_string(),
            ]),
            (_, Some(s)) if o.status.measured() => {
                r.extend(["-".into(), s.line(), "-".into(), "-".into(), "-".into()])
            }
            _ => r.extend(std::iter::repeat_n("-".to_string(), 5)),
        }
        r.push(o.status.as_str().into());
        Some(r)
    })
}

/// `fwbench workload` text: totals, then per distinct command its count and durations.
pub fn workload_text(file: &str, total_s: f64, ran: &[crate::worklang::Ran]) -> String {
    let failed = ran.iter().filter(|r| r.exit != Some(0)).count();
    let mut out = format!(
        "workload {file}: {} commands in {total_s:.3} s, {failed} failed\n",
        ran.len()
    );
    out += "  count   mean s   p50 s    max s  failed  command\n";
    let mut by: std::collections::BTreeMap<String, Vec<&crate::worklang::Ran>> =
        std::collections::BTreeMap::new();
    for r in ran {
        by.entry(r.argv.join(" ")).or_default().push(r);
    }
    for (cmd, rs) in by {
        let mut d: Vec<f64> = rs.iter().map(|r| r.duration_s).collect();
        d.sort_by(f64::total_cmp);
        out += &format!(
            "  {:>5}  {:>7.4}  {:>6.4}  {:>7.4}  {:>6}  {cmd}\n",
            d.len(),
            d.iter().sum::<f64>() / d.len() as f64,
            d[d.len() / 2],
            d[d.len() - 1],
            rs.iter().filter(|r| r.exit != Some(0)).count()
        );
    }
    for r in ran.iter().filter_map(|r| r.error.as_ref()).take(3) {
        out += &format!("  error: {r}\n");
    }
    out
}

/// The rule set that stood on the gateway during `fwbench workload`.
pub fn workload_firewall_text(f: &firewall::Report) -> String {
    format!(
        "  gateway: {} with {} rules, {} set elements (installed in {:.1} ms)\n",
        f.engine, f.rules, f.elements, f.install_ms
    )
}

/// `fwbench run --list-axes`: the axis registry as a table.
pub fn axes_table() -> String {
    use crate::plan::axes::{Class, AXES};
    let mut out =
        String::from("Scenario axes ([params], [[case]], [[firewall]]; any may be a list):\n\n");
    for a in AXES {
        let users = if a.users.is_empty() {
            "all".to_string()
        } else {
            a.users
                .iter()
                .map(|c| match c {
                    Class::Echo => "echo",
                    Class::Packet => "flood/flow/ping",
                    Class::Search => "ndr/degrade",
                    Class::Conn => "sessions/bulk/http/connections",
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let default = a.default_for(crate::params::search::Asked::Traffic(Workload::Echo));
        out += &format!("  {:<18} {}\n  {:<18} used by: {users}", a.name, a.help, "");
        if !default.is_empty()
            && !a.foreign_to(crate::params::search::Asked::Traffic(Workload::Echo))
        {
            out += &format!("; default (echo): {default}");
        }
        out += "\n";
    }
    out
}

/// The engine as the tables show it: nft engines with their table family, which
/// changes what a rule costs ("nft (inet)", "nft-set (ip)").
fn engine_cell(p: &TrialParams) -> String {
    if p.engine.takes_nft_family() {
        format!("{} ({})", p.engine, p.nft_family)
    } else {
        p.engine.to_string()
    }
}

/// Why the traffic ran longer than asked, when it did by more than 10 % and 0.5 s (an
/// echo of 3 000 threaded clients on two CPUs: the rates are over the time it ran,
/// from the clients' start to the agent's stop).
fn longer_than_asked(asked_s: f64, ran_s: f64, clients: u32) -> String {
    if ran_s <= asked_s * 1.1 || ran_s - asked_s < 0.5 {
        return String::new();
    }
    format!(
        " (asked {asked_s:.2} s: the traffic ran {:.2} s longer, from the clients' start \
         to the stop, which came late with {clients} clients on {} CPUs; the rates are \
         over the {ran_s:.2} s it ran)",
        ran_s - asked_s,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    )
}

#[cfg(test)]
mod longer_tests {
    use super::longer_than_asked;

    #[test]
    fn a_trial_longer_than_asked_says_why() {
        assert_eq!(longer_than_asked(2.0, 2.05, 10), "");
        assert_eq!(longer_than_asked(0.5, 0.9, 10), "");
        let n = longer_than_asked(2.0, 10.23, 3000);
        assert!(
            n.starts_with(" (asked 2.00 s: the traffic ran 8.23 s longer")
                && n.contains("3000 clients")
                && n.ends_with("over the 10.23 s it ran)"),
            "{n}"
        );
    }
}
