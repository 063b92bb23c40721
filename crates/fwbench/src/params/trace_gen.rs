//! Event traces of three shapes of firewall churn from public descriptions (issue 39,
//! churn replay), for `fwbench trace gen`: deterministic for a seed.
//!
//! * kube-proxy-like Service churn: kube-proxy rewrites a Service's rules whenever its
//!   endpoints change (iptables mode: one `iptables-restore` of its chains; a
//!   Service's chain holds a jump per endpoint and each endpoint's chain its DNAT and
//!   masquerade mark, so about 1 + 2 × endpoints rules). Endpoint changes arrive at
//!   random (Poisson, `rate` per second over all Services); each moves one Service's
//!   endpoint count by one (a pod started or gone) and replaces its rules:
//!   `replace 1+2E`.
//! * fail2ban/CrowdSec-like ban feed: a ban (`add 1`) at random at `bans_per_s`, each
//!   lifted after `ban_time` (fail2ban's `bantime`; `delete 1`).
//! * blocklist refresh: a list of `entries` (up to 100 000) replaced whole every
//!   `every` (as `update-ipsets`-style cron jobs reload a feed): `replace N`, N the
//!   list's size that time (it loses up to `churn` of its entries and gains as many
//!   back at random between refreshes).
//!
//! Owns: the generators' parameters and their operations. Must not: read or write
//! files, or know the trace's replay (that is `params::trace` and the agent).

use crate::params::trace::{format_time, TraceOp, FORMAT};
use proto::UpdateKind;
use traffic::rng::Rng;

/// What every shape shares: when the churn starts and how long it lasts, the seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// First operation no earlier than this, ns after the traffic phase's start.
    pub start_ns: u64,
    /// Operations start within this long after `start_ns`.
    pub duration_ns: u64,
    pub seed: u64,
}

/// kube-proxy-like Service churn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KubeProxy {
    pub span: Span,
    /// Services whose endpoints change.
    pub services: u32,
    /// Endpoints each Service starts with (at least 1).
    pub endpoints: u32,
    /// Endpoint changes per second over all Services.
    pub rate: f64,
}

/// A fail2ban-like ban feed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BanFeed {
    pub span: Span,
    /// Bans per second.
    pub bans_per_s: f64,
    /// How long each ban lasts, ns.
    pub ban_ns: u64,
}

/// A blocklist refreshed whole on a period.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blocklist {
    pub span: Span,
    /// Entries of the list.
    pub entries: u32,
    /// Period of the refresh, ns.
    pub every_ns: u64,
    /// Share of the list that may change between two refreshes (0 to 1).
    pub churn: f64,
}

/// Exponential gap (Poisson arrivals at `rate` per second), ns, rounded to µs so the
/// trace's times stay short.
fn poisson_gap(rng: &mut Rng, rate: f64) -> u64 {
    // Uniform in (0, 1]: never ln(0).
    let u = ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let ns = (-u.ln() / rate * 1e9) as u64;
    (ns / 1_000).max(1) * 1_000
}

fn too_many(n: usize) -> Result<(), String> {
    if n as u64 > u64::from(proto::MAX_UPDATES) {
        return Err(format!(
            "{n} operations: a trace holds at most {} (shorten --duration or lower the rate)",
            proto::MAX_UPDATES
        ));
    }
    Ok(())
}

fn op(at_ns: u64, kind: UpdateKind, k: u32) -> TraceOp {
    TraceOp {
        at_ns,
        kind,
        k,
        line: 0,
    }
}

impl KubeProxy {
    pub fn ops(&self) -> Result<Vec<TraceOp>, String> {
        if self.services == 0 || self.endpoints == 0 || !(self.rate.is_finite() && self.rate > 0.0)
        {
            return Err("kube-proxy: --services, --endpoints and --rate must be above 0".into());
        }
        // The most endpoints a Service may reach: K = 1 + 2E stays within the limit.
        let most = (proto::MAX_UPDATE_K - 1) / 2;
        if self.endpoints > most {
            return Err(format!(
                "kube-proxy: --endpoints {}: expected at most {most} (1 + 2 × endpoints \
                 rules per Service, at most {})",
                self.endpoints,
                proto::MAX_UPDATE_K
            ));
        }
        let mut rng = Rng::for_stream(self.span.seed, 1);
        let mut eps = vec![self.endpoints; self.services as usize];
        let mut out = vec![];
        let mut t = self.span.start_ns + poisson_gap(&mut rng, self.rate);
        while t < self.span.start_ns + self.span.duration_ns {
            let s = rng.range_inclusive(0, self.services - 1) as usize;
            // A pod gone (never the last) or started (never past the limit).
            let up = rng.next_u64() & 1 == 1;
            eps[s] = match (up, eps[s]) {
                (false, 1) => 2,
                (false, e) => e - 1,
                (true, e) if e >= most => e - 1,
                (true, e) => e + 1,
            };
            out.push(op(t, UpdateKind::Replace, 1 + 2 * eps[s]));
            too_many(out.len())?;
            t += poisson_gap(&mut rng, self.rate);
        }
        Ok(out)
    }

    pub fn header(&self) -> String {
        format!(
            "kube-proxy-like Service churn: {} Services of {} endpoints at first, {} \
             endpoint changes/s (Poisson), each replacing one Service's rules (1 + 2 x \
             endpoints); start {}, for {}, seed {}",
            self.services,
            self.endpoints,
            self.rate,
            format_time(self.span.start_ns),
            format_time(self.span.duration_ns),
            self.span.seed
        )
    }
}

impl BanFeed {
    pub fn ops(&self) -> Result<Vec<TraceOp>, String> {
        if !(self.bans_per_s.is_finite() && self.bans_per_s > 0.0) {
            return Err("fail2ban: --bans-per-s must be above 0".into());
        }
        let mut rng = Rng::for_stream(self.span.seed, 2);
        let mut out = vec![];
        let mut t = self.span.start_ns + poisson_gap(&mut rng, self.bans_per_s);
        while t < self.span.start_ns + self.span.duration_ns {
            out.push(op(t, UpdateKind::Add, 1));
            out.push(op(t + self.ban_ns, UpdateKind::Delete, 1));
            too_many(out.len())?;
            t += poisson_gap(&mut rng, self.bans_per_s);
        }
        // By time; at one time a ban before an unban (the sort is stable).
        out.sort_by_key(|o| o.at_ns);
        Ok(out)
    }

    pub fn header(&self) -> String {
        format!(
            "fail2ban-like ban feed: {} bans/s (Poisson), each lifted after {}; start {}, \
             for {}, seed {}",
            self.bans_per_s,
            format_time(self.ban_ns),
            format_time(self.span.start_ns),
            format_time(self.span.duration_ns),
            self.span.seed
        )
    }
}

impl Blocklist {
    pub fn ops(&self) -> Result<Vec<TraceOp>, String> {
        if self.entries == 0 || self.entries > proto::MAX_UPDATE_K {
            return Err(format!(
                "blocklist: --entries {}: expected 1 to {}",
                self.entries,
                proto::MAX_UPDATE_K
            ));
        }
        if self.every_ns == 0 || !(0.0..=1.0).contains(&self.churn) {
            return Err("blocklist: --every must be above 0 and --churn from 0 to 1".to_string());
        }
        let mut rng = Rng::for_stream(self.span.seed, 3);
        let swing = (f64::from(self.entries) * self.churn) as u32;
        let mut n = self.entries;
        let mut out = vec![];
        let mut t = self.span.start_ns;
        while t < self.span.start_ns + self.span.duration_ns {
            out.push(op(t, UpdateKind::Replace, n));
            too_many(out.len())?;
            // Entries expire and new ones come: the next list's size.
            let gone = rng.range_inclusive(0, swing);
            let new = rng.range_inclusive(0, swing);
            n = (n - gone.min(n - 1) + new).min(proto::MAX_UPDATE_K);
            t += self.every_ns;
        }
        Ok(out)
    }

    pub fn header(&self) -> String {
        format!(
            "blocklist refresh: {} entries replaced whole every {} (up to {} % of them \
             changing between refreshes); start {}, for {}, seed {}",
            self.entries,
            format_time(self.every_ns),
            self.churn * 100.0,
            format_time(self.span.start_ns),
            format_time(self.span.duration_ns),
            self.span.seed
        )
    }
}

/// The trace's text: a comment saying what made it, `format 1`, one line per
/// operation.
pub fn render(header: &str, ops: &[TraceOp]) -> String {
    let mut out = format!(
        "# fwbench event trace ({} operations): {header}\nformat {FORMAT}\n",
        ops.len()
    );
    for o in ops {
        out += &format!("{} {} {}\n", format_time(o.at_ns), o.kind.name(), o.k);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::trace::parse;

    const S: u64 = 1_000_000_000;

    fn span(seed: u64) -> Span {
        Span {
            start_ns: S,
            duration_ns: 10 * S,
            seed,
        }
    }

    #[test]
    fn kube_proxy_churn_replaces_one_services_rules_at_a_rate() {
        let g = KubeProxy {
            span: span(7),
            services: 10,
            endpoints: 3,
            rate: 2.0,
        };
        let ops = g.ops().unwrap();
        // Seed 7: known count, first times and sizes (a change here changes traces).
        // (2/s over 10 s: 20 expected, Poisson.)
        assert_eq!(ops.len(), 16);
        assert_eq!(format_time(ops[0].at_ns), "2.209167s");
        assert_eq!(ops[0].k, 5, "a Service of 3 endpoints lost one: 1 + 2 × 2");
        assert!(ops.iter().all(|o| o.kind == UpdateKind::Replace
            && o.k % 2 == 1
            && (S..11 * S).contains(&o.at_ns)));
        assert!(ops.windows(2).all(|w| w[0].at_ns < w[1].at_ns));
        assert_eq!(g.ops().unwrap(), ops, "deterministic for a seed");
        assert_ne!(KubeProxy { span: span(8), ..g }.ops().unwrap(), ops);
        // What it writes, the parser reads back as the same operations.
        let back = parse("g", &render(&g.header(), &ops)).unwrap();
        assert_eq!(back.ops.len(), ops.len());
        assert!(back
            .ops
            .iter()
            .zip(&ops)
            .all(|(a, b)| (a.at_ns, a.kind, a.k) == (b.at_ns, b.kind, b.k)));
    }

    #[test]
    fn a_ban_feed_adds_and_lifts_each_ban_after_its_time() {
        let g = BanFeed {
            span: span(1),
            bans_per_s: 5.0,
            ban_ns: 2 * S,
        };
        let ops = g.ops().unwrap();
        let adds: Vec<&TraceOp> = ops.iter().filter(|o| o.kind == UpdateKind::Add).collect();
        let dels: Vec<&TraceOp> = ops
            .iter()
            .filter(|o| o.kind == UpdateKind::Delete)
            .collect();
        // (5/s over 10 s: 50 expected, Poisson.)
        assert_eq!((adds.len(), dels.len()), (44, 44));
        assert_eq!(format_time(adds[0].at_ns), "1.198091s");
        assert!(adds
            .iter()
            .zip(&dels)
            .all(|(a, d)| d.at_ns == a.at_ns + 2 * S && a.k == 1 && d.k == 1));
        assert!(ops.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
        assert!(parse("g", &render(&g.header(), &ops)).is_ok());
    }

    #[test]
    fn a_blocklist_is_replaced_whole_every_period() {
        let g = Blocklist {
            span: span(3),
            entries: 100_000,
            every_ns: 3 * S,
            churn: 0.01,
        };
        let ops = g.ops().unwrap();
        let times: Vec<String> = ops.iter().map(|o| format_time(o.at_ns)).collect();
        assert_eq!(times, ["1s", "4s", "7s", "10s"]);
        assert_eq!(ops[0].k, 100_000);
        assert!(ops
            .iter()
            .all(|o| o.kind == UpdateKind::Replace && (99_000..=100_000).contains(&o.k)));
        assert_eq!(Blocklist { span: span(3), ..g }.ops().unwrap(), ops);
        assert!(Blocklist {
            entries: 100_001,
            ..g
        }
        .ops()
        .unwrap_err()
        .contains("expected 1 to 100000"));
    }

    #[test]
    fn a_trace_longer_than_the_limit_is_refused() {
        let g = BanFeed {
            span: Span {
                start_ns: 0,
                duration_ns: 10_000 * S,
                seed: 1,
            },
            bans_per_s: 10.0,
            ban_ns: S,
        };
        assert!(g.ops().unwrap_err().contains("at most 10000"));
    }
}
