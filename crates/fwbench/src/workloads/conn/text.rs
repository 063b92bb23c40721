//! How connection figures read: the trial line, its text (sessions and their
//! durations, goodput and session overhead, held connections and what bounded them,
//! the proxy), its row in the run's table, its JSON and stored form.
//!
//! Must not: compute figures (`conn` does).

use super::{ConnSummary, HoldScale, OverheadSplit};
use crate::workloads::units::{mbps, ms};
use crate::workloads::{us, Summary, TextOf};
use store::Headline;

/// A rate as `show` writes it, or "-" where there is none (held connections).
fn or_dash(x: Option<f64>, show: impl Fn(f64) -> String) -> String {
    x.map_or_else(|| "-".to_string(), show)
}

/// A duration's column for the store: none where no session was timed.
fn timed(d: &proto::Durations, ns: u64) -> Option<f64> {
    (d.count > 0).then(|| us(ns)).flatten()
}

impl Summary for ConnSummary {
    fn line(&self) -> String {
        conn_line(self)
    }

    /// One aspect per line; then the adaptive line.
    fn text(&self, t: &TextOf) -> String {
        conn_text(self) + &t.adaptive
    }

    /// sessions (connections held), sessions/s, mean ms, Mb/s, failed.
    fn cells(&self) -> Vec<String> {
        let c = self;
        vec![
            match &c.hold {
                Some(h) => h.reached.to_string(),
                None => c.sessions.to_string(),
            },
            or_dash(c.sessions_per_s, |r| format!("{r:.1}")),
            match c.session.count {
                0 => "-".to_string(),
                _ => ms(c.session.mean_ns),
            },
            or_dash(c.goodput_bps, mbps),
            // A corrupt session is counted in `failed` too.
            c.failed.to_string(),
        ]
    }

    /// Connections opened (held), else sessions finished, failed ones too.
    fn live_total(&self) -> Option<u64> {
        Some(match &self.hold {
            Some(h) => h.reached,
            None => self.sessions + self.failed,
        })
    }

    fn stored_key(&self) -> &'static str {
        "conn"
    }

    /// The store's headline columns: sessions are the transactions, their durations the
    /// "RTT". Held connections have neither (no rate, no goodput, no session timed).
    fn headline(&self) -> Headline {
        let d = &self.session;
        Headline {
            duration_s: Some(self.elapsed_s),
            throughput_bps: self.goodput_bps,
            transactions_per_s: self.sessions_per_s,
            rtt_p50_us: timed(d, d.p50_ns),
            rtt_p90_us: timed(d, d.p90_ns),
            rtt_p99_us: timed(d, d.p99_ns),
            rtt_max_us: timed(d, d.max_ns),
            validation_errors: Some(self.corrupt),
            lost: Some(self.failed),
            ..Default::default()
        }
    }
}

/// The trial line of a connection trial (after its status).
fn conn_line(c: &ConnSummary) -> String {
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
                "{} connections held ({} still open at stop){ct}, limited by: {}",
                h.reached, h.alive_at_stop, h.limiter
            )
        }
        proto::ConnMode::Sessions => format!(
            "{} sessions, {} sessions/s, session mean {} ms p50 {} p99 {} ms{trouble}",
            c.sessions,
            or_dash(c.sessions_per_s, |r| format!("{r:.0}")),
            ms(c.session.mean_ns),
            ms(c.session.p50_ns as f64),
            ms(c.session.p99_ns as f64)
        ),
        _ => {
            format!(
                "{} × {} bytes, {} Mb/s goodput{}, download mean {} ms (first byte {} ms){trouble}",
                c.sessions,
                c.bytes.checked_div(c.sessions).unwrap_or(0),
                or_dash(c.goodput_bps, mbps),
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

/// A bulk trial's goodput net of session overhead, or why it has none.
fn net_goodput(o: &OverheadSplit) -> String {
    match o.net_goodput_bps {
        Some(n) => format!("{} Mb/s", mbps(n)),
        None => "no net goodput (the measured session overhead fills the whole run)".into(),
    }
}

/// Held connections: processes, open-file limit, conntrack peak, memory peaks.
fn scale_text(x: &HoldScale) -> String {
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
fn conn_text(c: &ConnSummary) -> String {
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
        "  sessions     {} completed, {} failed, {} corrupt, {} at once, over {:.3} s: {} sessions/s\n",
        c.sessions,
        c.failed,
        c.corrupt,
        c.parallel,
        c.elapsed_s,
        or_dash(c.sessions_per_s, |r| format!("{r:.1}"))
    );
    out += &dist("session", &c.session);
    out += &dist("connect", &c.connect);
    out += &dist("first byte", &c.ttfb);
    out += &dist("last byte", &c.ttlb);
    if c.bytes > 0 {
        out += &format!(
            "  goodput      {} Mb/s ({} bytes in {:.3} s)\n",
            or_dash(c.goodput_bps, mbps),
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
