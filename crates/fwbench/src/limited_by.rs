//! Which role set a packet-rate trial's rate: the sender, the gateway or the sink.
//!
//! Owns: the pure judgement over one trial's counters ([`limited_by`]); it reads no
//! clock and no host, and imports nothing of the crate (any module may call it).
//! Must not: decide pass/fail of a search (that is the search's loss threshold).
//!
//! A packet lost on the way was lost at one stage; the stage that lost the most decides:
//!
//! | stage (counter → counter) | limited by |
//! |---|---|
//! | sender → gateway ingress | the gateway (its receive backlog was full), or the sender's link if the gateway's CPU had room |
//! | gateway ingress → egress | the gateway |
//! | gateway egress → sink interface | the sink (its receive backlog), or the gateway if the sink's CPU had room |
//! | sink interface → sink count | the sink |
//!
//! Nothing lost: an unpaced flood, or a paced one that fell behind its schedule, was
//! limited by the sender (it offered all it could and everything got through: the
//! gateway's limit is higher); a paced one on schedule was limited by nothing (the
//! offered rate got through).

use serde::{Deserialize, Serialize};

/// A CPU busier than this (fraction of the cores the role ran on) counts as saturated.
pub const BUSY: f64 = 0.9;

/// One packet-rate trial's counters, as the roles and the interfaces report them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RateCounters {
    /// Paced (a target rate) or a flood (as fast as possible).
    pub paced: bool,
    /// Packets the pacer scheduled up to the stop (= `sent` for a flood).
    pub scheduled: u64,
    /// Packets the sender got out.
    pub sent: u64,
    /// Packets into the gateway's ingress interface; `None` without a gateway.
    pub gateway_in: Option<u64>,
    /// Packets out of its egress interface; `None` without a gateway.
    pub gateway_out: Option<u64>,
    /// Packets at the sink's interface; `None` when not counted.
    pub sink_in: Option<u64>,
    /// Packets the sink counted (sockets or AF_XDP).
    pub received: u64,
    /// Busy fraction (0..1) of the CPUs each role ran on, where known.
    pub sender_cpu: Option<f64>,
    pub gateway_cpu: Option<f64>,
    pub sink_cpu: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitedBy {
    Sender,
    Gateway,
    Sink,
    /// The offered (paced) rate got through: nothing was the limit.
    Nothing,
}

/// The judgement and the evidence, in words for the report's warning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub by: LimitedBy,
    pub why: String,
}

impl LimitedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitedBy::Sender => "sender",
            LimitedBy::Gateway => "gateway",
            LimitedBy::Sink => "sink",
            LimitedBy::Nothing => "nothing",
        }
    }

    /// fwbench's own roles: a rate they limited says nothing of the gateway's.
    pub fn is_fwbench(self) -> bool {
        match self {
            LimitedBy::Sender | LimitedBy::Sink => true,
            LimitedBy::Gateway | LimitedBy::Nothing => false,
        }
    }
}

fn busy(cpu: Option<f64>) -> bool {
    cpu.is_none_or(|c| c >= BUSY)
}

/// Judge `c`; losses up to `tolerance` (a fraction of the packets sent, e.g. 0.001)
/// count as none.
pub fn limited_by(c: &RateCounters, tolerance: f64) -> Limit {
    let allowed = (c.sent as f64 * tolerance).floor() as u64;
    // (packets lost, role, why) per stage, in path order.
    let mut stages: Vec<(u64, LimitedBy, String)> = vec![];
    let mut at = c.sent;
    let mut from = "sent";
    if let Some(g_in) = c.gateway_in {
        let lost = at.saturating_sub(g_in);
        let by = if busy(c.gateway_cpu) {
            LimitedBy::Gateway
        } else {
            LimitedBy::Sender
        };
        stages.push((
            lost,
            by,
            format!("{lost} of {at} packets {from} did not reach the gateway"),
        ));
        at = g_in;
        from = "into the gateway";
    }
    if let Some(g_out) = c.gateway_out {
        let lost = at.saturating_sub(g_out);
        stages.push((
            lost,
            LimitedBy::Gateway,
            format!("the gateway forwarded {g_out} of {at} packets"),
        ));
        at = g_out;
        from = "forwarded";
    }
    if let Some(s_in) = c.sink_in {
        let lost = at.saturating_sub(s_in);
        let by = if busy(c.sink_cpu) || c.gateway_out.is_none() {
            LimitedBy::Sink
        } else {
            LimitedBy::Gateway
        };
        stages.push((
            lost,
            by,
            format!("{lost} of {at} packets {from} did not reach the sink's interface"),
        ));
        at = s_in;
    }
    let lost = at.saturating_sub(c.received);
    stages.push((
        lost,
        LimitedBy::Sink,
        format!(
            "the sink counted {} of the {at} packets that reached it",
            c.received
        ),
    ));
    let total: u64 = stages.iter().map(|s| s.0).sum();
    if total > allowed {
        // The first stage with the largest loss (path order breaks ties).
        let max = stages.iter().map(|s| s.0).max().unwrap_or(0);
        if let Some((_, by, why)) = stages.into_iter().find(|s| s.0 == max) {
            return Limit { by, why };
        }
    }
    let behind = c.scheduled.saturating_sub(c.sent);
    if !c.paced {
        return Limit {
            by: LimitedBy::Sender,
            why: format!(
                "a flood: the sender got out {} packets, all as fast as it could, and none was lost",
                c.sent
            ),
        };
    }
    if behind > (c.scheduled as f64 * tolerance).floor() as u64 {
        return Limit {
            by: LimitedBy::Sender,
            why: format!(
                "the sender got out {} of the {} packets scheduled, and none was lost",
                c.sent, c.scheduled
            ),
        };
    }
    Limit {
        by: LimitedBy::Nothing,
        why: format!(
            "the offered rate got through: {} packets sent and received",
            c.sent
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(sent: u64, g_in: u64, g_out: u64, s_in: u64, rx: u64) -> RateCounters {
        RateCounters {
            paced: true,
            scheduled: sent,
            sent,
            gateway_in: Some(g_in),
            gateway_out: Some(g_out),
            sink_in: Some(s_in),
            received: rx,
            ..Default::default()
        }
    }

    #[test]
    fn each_stage_names_its_role() {
        let cases = [
            (path(1000, 1000, 1000, 1000, 1000), LimitedBy::Nothing),
            (path(1000, 700, 700, 700, 700), LimitedBy::Gateway),
            (path(1000, 1000, 600, 600, 600), LimitedBy::Gateway),
            (path(1000, 1000, 1000, 500, 500), LimitedBy::Sink),
            (path(1000, 1000, 1000, 1000, 900), LimitedBy::Sink),
            // Two stages lose: the larger loss decides.
            (path(1000, 1000, 950, 950, 700), LimitedBy::Sink),
            (path(1000, 1000, 700, 700, 690), LimitedBy::Gateway),
        ];
        for (c, want) in cases {
            assert_eq!(limited_by(&c, 0.001).by, want, "{c:?}");
        }
    }

    #[test]
    fn idle_cpus_move_the_blame() {
        // Lost before the gateway, whose CPU had room: the sender's link.
        let mut c = path(1000, 700, 700, 700, 700);
        c.gateway_cpu = Some(0.3);
        assert_eq!(limited_by(&c, 0.001).by, LimitedBy::Sender);
        c.gateway_cpu = Some(0.99);
        assert_eq!(limited_by(&c, 0.001).by, LimitedBy::Gateway);
        // Lost between gateway and sink, sink idle: the gateway's egress.
        let mut c = path(1000, 1000, 1000, 600, 600);
        c.sink_cpu = Some(0.2);
        assert_eq!(limited_by(&c, 0.001).by, LimitedBy::Gateway);
    }

    #[test]
    fn lossless_floods_and_late_senders_are_the_senders_limit() {
        let mut flood = path(5000, 5000, 5000, 5000, 5000);
        flood.paced = false;
        let l = limited_by(&flood, 0.001);
        assert_eq!(l.by, LimitedBy::Sender);
        assert!(l.why.contains("flood"), "{}", l.why);
        let mut late = path(4000, 4000, 4000, 4000, 4000);
        late.scheduled = 5000;
        let l = limited_by(&late, 0.001);
        assert_eq!(l.by, LimitedBy::Sender);
        assert!(l.why.contains("4000 of the 5000"), "{}", l.why);
    }

    #[test]
    fn tolerance_and_missing_counters() {
        // 1 lost in 10 000 is within 0.1 %.
        assert_eq!(
            limited_by(&path(10_000, 10_000, 9_999, 9_999, 9_999), 0.001).by,
            LimitedBy::Nothing
        );
        // No gateway, no interface counter at the sink: only sent → received.
        let c = RateCounters {
            paced: true,
            scheduled: 100,
            sent: 100,
            received: 50,
            ..Default::default()
        };
        let l = limited_by(&c, 0.001);
        assert_eq!(l.by, LimitedBy::Sink);
        assert!(l.why.contains("50 of the 100"), "{}", l.why);
    }
}
