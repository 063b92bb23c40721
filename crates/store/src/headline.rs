//! A trial's headline figures: the columns of `trials` every family fills in its way.
//!
//! Owns: [`Headline`], one optional number per column. What a column means for each
//! family is in docs/results.md (and the views give each family's meaning its own name).
//! Must not: compute figures (the controller's families do) or name a family.

use serde::{Deserialize, Serialize};

/// Headline metrics of a trial, as columns (NULL when not applicable).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    pub duration_s: Option<f64>,
    pub throughput_bps: Option<f64>,
    pub transactions_per_s: Option<f64>,
    pub rtt_p50_us: Option<f64>,
    pub rtt_p90_us: Option<f64>,
    pub rtt_p99_us: Option<f64>,
    pub rtt_p999_us: Option<f64>,
    pub rtt_max_us: Option<f64>,
    pub validation_errors: Option<u64>,
    pub unsent: Option<u64>,
    pub lost: Option<u64>,
    /// Packet-rate workloads: what the pacer scheduled, what the sender got out and
    /// what arrived (at the sink, or at the gateway when there is none), per second.
    pub offered_pps: Option<f64>,
    pub sent_pps: Option<f64>,
    pub received_pps: Option<f64>,
    /// (sent − received) / sent.
    pub loss_ratio: Option<f64>,
    pub owd_p50_us: Option<f64>,
    pub jitter_us: Option<f64>,
}
