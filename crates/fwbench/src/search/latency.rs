//! Latency under load (RFC 2544 §26.2): after a throughput search, flood trials at
//! fixed fractions of the rate it found, each giving its one-way delay percentiles.

use crate::outcome::search::LatencyPoint;
use crate::params::TrialParams;
use crate::search::step_params;
use crate::search::Runner;
use anyhow::{bail, Result};
use proto::Rate;

/// Flood trials of `p`'s duration at each of `fractions` × `rate_pps`.
pub fn latency_at(
    p: &TrialParams,
    rate_pps: f64,
    fractions: &[f64],
    run: &mut Runner,
) -> Result<Vec<LatencyPoint>> {
    let mut q = step_params(p);
    let mut out = vec![];
    for &fraction in fractions {
        let x = rate_pps * fraction;
        if let Some(k) = q.kind.packet_mut() {
            k.rate = Rate::Pps(x);
        }
        let o = run(&q)?;
        let Some(s) = o.packet().filter(|_| o.status.measured()) else {
            bail!(
                "latency trial at {x:.0} pps {}: {}",
                o.status.as_str(),
                o.error.as_deref().unwrap_or("no packet figures")
            );
        };
        let pt = LatencyPoint {
            fraction,
            offered_pps: x,
            sent_pps: s.sent_pps,
            received_pps: s.received_pps,
            loss_ratio: s.loss_ratio,
            elapsed_s: s.elapsed_s,
            owd: s.owd,
            owd_basis: s.owd_clocks.as_ref().map(|c| c.basis),
        };
        let us = |ns: u64| ns as f64 / 1e3;
        let delays = if pt.owd.count == 0 {
            format!("no one-way delays ({})", pt.no_delays())
        } else {
            format!(
                "one-way delay p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
                us(pt.owd.p50_ns),
                us(pt.owd.p99_ns),
                us(pt.owd.max_ns)
            )
        };
        eprintln!(
            "    latency at {:.0} % ({x:.0} pps): {delays}, loss {:.4}%",
            fraction * 100.0,
            pt.loss_ratio * 100.0
        );
        out.push(pt);
    }
    Ok(out)
}
