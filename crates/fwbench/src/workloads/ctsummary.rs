//! The figures of the conntrack workloads (issue 26): what the gateway's conntrack
//! table did with a trial's new flows, and its finding in a sentence. Plain data
//! (stored with the packet figures), apart from the workload that makes it
//! (`workloads::conntrack`) so that the packet figures can carry it.
//!
//! Must not: read counters or talk to agents.

use proto::{CtReport, GatewayResults};
use serde::{Deserialize, Serialize};

/// The table settings a trial asks for, for its parameter line (` ct_max=5000 …`).
pub fn settings_text(k: &crate::params::packet::PacketParams) -> String {
    [
        ("ct_max", k.ct_max),
        ("ct_buckets", k.ct_buckets),
        ("ct_udp_timeout", k.ct_udp_timeout),
        ("ct_fill", k.ct_fill),
    ]
    .iter()
    .filter_map(|(n, v)| v.map(|v| format!(" {n}={v}")))
    .collect()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the gateway's conntrack table did with a trial's new flows (`newflows`: one
/// datagram per flow; flood and flow trials with a conntrack setting or a table fill:
/// their flows, each admitted when any of its packets reached the server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtSummary {
    /// New flows the client sent (one datagram each).
    pub offered: u64,
    /// Flows whose datagram reached the server (the sink's count).
    pub admitted: u64,
    /// Flows whose datagram did not (offered − admitted).
    pub dropped: u64,
    /// Admitted new flows per second of sending.
    pub new_flows_per_s: f64,
    /// The gateway's counters over the trial (Start to Stop): new flows refused with the
    /// table full, unreplied entries evicted for room, insertions that lost a race.
    pub ct_drop: u64,
    pub early_drop: u64,
    pub insert_failed: u64,
    pub invalid: u64,
    /// Entries a table fill put in before the trial (0: no fill).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub filled: u64,
    /// Table entries at Start and at Stop.
    pub entries_before: u64,
    pub entries_after: u64,
    /// Settings in force: `nf_conntrack_max`, hash buckets, the unreplied-UDP timeout.
    pub max: u64,
    pub buckets: u64,
    pub udp_timeout_s: u64,
    /// Where each setting the trial asked for was made (`netns` or `global`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scope: Vec<(String, String)>,
    /// The traffic's loss equals the gateway's refusals (`drop` + `insert_failed`).
    pub agree: bool,
    /// The table grew by the admitted flows less those evicted early (false when
    /// entries expired or were evicted by the kernel's garbage collector meanwhile).
    pub entries_agree: bool,
}

impl CtSummary {
    /// The figures of the gateway's conntrack report, if it made one (a trial with a
    /// table setting or fill, or new flows): `offered` flows, `admitted` of them.
    pub fn of_gateway(
        gateway: Option<&GatewayResults>,
        offered: u64,
        admitted: u64,
        elapsed_s: f64,
    ) -> Option<Box<CtSummary>> {
        let r = gateway?.conntrack.as_ref()?;
        Some(Box::new(CtSummary::of(offered, admitted, elapsed_s, r)))
    }

    pub fn of(offered: u64, admitted: u64, elapsed_s: f64, r: &CtReport) -> CtSummary {
        let d = r.after.since(&r.before);
        let dropped = offered.saturating_sub(admitted);
        CtSummary {
            offered,
            admitted,
            dropped,
            new_flows_per_s: admitted as f64 / elapsed_s.max(1e-9),
            ct_drop: d.drop,
            early_drop: d.early_drop,
            insert_failed: d.insert_failed,
            invalid: d.invalid,
            filled: r.filled,
            entries_before: r.before.count,
            entries_after: r.after.count,
            max: r.max,
            buckets: r.buckets,
            udp_timeout_s: r.udp_timeout_s,
            scope: r.scope.clone(),
            agree: dropped == d.drop + d.insert_failed,
            entries_agree: r.after.count + d.early_drop == r.before.count + admitted,
        }
    }

    /// The table around a flood or flow: occupancy and settings.
    pub fn table_text(&self) -> String {
        let filled = if self.filled > 0 {
            format!(" ({} filled before it)", self.filled)
        } else {
            String::new()
        };
        format!(
            "table of {} entries at the start{filled}, {} at the end; nf_conntrack_max {}, \
             {} buckets; drop {}, early_drop {}, insert_failed {}",
            self.entries_before,
            self.entries_after,
            self.max,
            self.buckets,
            self.ct_drop,
            self.early_drop,
            self.insert_failed
        )
    }

    /// The finding, in a sentence.
    pub fn sentence(&self) -> String {
        let global = if self.scope.iter().any(|(_, s)| s == "global") {
            " (set host-wide: global on this kernel)"
        } else {
            ""
        };
        let check = if self.agree {
            "the loss the traffic saw equals the gateway's refusals".to_string()
        } else {
            format!(
                "the traffic lost {} but the gateway counted {} refusals: other losses on the path",
                self.dropped,
                self.ct_drop + self.insert_failed
            )
        };
        format!(
            "with nf_conntrack_max = {}{global} and {} offered flows, the gateway admitted {} \
             and dropped {} new flows (drop counter {}, insert_failed {}, early_drop {}; \
             {} entries at the end); {check}",
            self.max,
            self.offered,
            self.admitted,
            self.dropped,
            self.ct_drop,
            self.insert_failed,
            self.early_drop,
            self.entries_after
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::CtStats;

    fn report(drop: u64, insert_failed: u64) -> CtReport {
        CtReport {
            max: 5000,
            buckets: 262_144,
            udp_timeout_s: 30,
            scope: vec![("nf_conntrack_max".into(), "global".into())],
            filled: 0,
            before: CtStats {
                count: 0,
                drop: 7,
                ..Default::default()
            },
            after: CtStats {
                count: 5000,
                drop: 7 + drop,
                insert_failed,
                ..Default::default()
            },
        }
    }

    #[test]
    fn a_full_table_agrees_with_the_traffic_or_says_it_does_not() {
        let s = CtSummary::of(8000, 5000, 0.5, &report(3000, 0));
        assert!(s.agree && s.entries_agree);
        assert_eq!((s.dropped, s.ct_drop, s.entries_after), (3000, 3000, 5000));
        assert_eq!(s.new_flows_per_s, 10_000.0);
        let t = s.sentence();
        assert!(
            t.contains(
                "with nf_conntrack_max = 5000 (set host-wide: global on this kernel) and 8000 \
                 offered flows, the gateway admitted 5000 and dropped 3000 new flows (drop \
                 counter 3000, insert_failed 0"
            ),
            "{t}"
        );
        // Loss the gateway did not count: said, not hidden.
        let s = CtSummary::of(8000, 4990, 0.5, &report(3000, 0));
        assert!(!s.agree);
        assert!(s
            .sentence()
            .contains("lost 3010 but the gateway counted 3000"));
        // Lost insert races are refusals too.
        assert!(CtSummary::of(10, 8, 1.0, &report(1, 1)).agree);
    }
}
