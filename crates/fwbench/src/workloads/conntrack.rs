//! Conntrack workloads (issue 26): new flows through a stateful gateway — each UDP
//! datagram a new 5-tuple — and what the gateway's connection-tracking table did with
//! them: admitted, dropped because the table was full, evicted early, insertions that
//! failed, from the kernel's per-CPU statistics read at Start and Stop, checked
//! against the loss the traffic saw.
//!
//! The traffic is the packet family's (a UDP source and sink, counted at the sink);
//! what this module adds is the gateway's conntrack settings for the trial
//! ([`gateway_spec`]) and the figures ([`CtSummary`]). The new-flow rate with no loss
//! is the ndr search over this kind (its rate is new flows/s).
//!
//! Must not: touch the table's settings (the gateway agent does, `host::conntrack`).

use crate::params::workload::{PacketKind, TrialKind};
use crate::params::TrialParams;
use crate::testbed::{Host, Testbed};
use crate::workloads::packet::{role_specs, summarise_packet};
use crate::workloads::{Ending, Figures, MainMetric, Roles, Traffic};
use anyhow::Result;
use proto::{CtReport, CtSpec, GatewayResults, RoleResults};
use serde::{Deserialize, Serialize};

/// The gateway's conntrack settings and report for a trial: asked for by the new-flow
/// workload always (its figures need the counters), by other packet workloads when
/// they set a table setting.
pub fn gateway_spec(p: &TrialParams) -> Option<CtSpec> {
    let k = p.packet()?;
    let new_flows = matches!(p.kind, TrialKind::Packet(PacketKind::NewFlows, _));
    let spec = CtSpec {
        max: k.ct_max,
        buckets: k.ct_buckets,
        udp_timeout_s: k.ct_udp_timeout,
        flush: new_flows,
    };
    (spec != CtSpec::default()).then_some(spec)
}

/// The table settings a trial asks for, for its parameter line (` ct_max=5000 …`).
pub fn settings_text(k: &crate::params::packet::PacketParams) -> String {
    [
        ("ct_max", k.ct_max),
        ("ct_buckets", k.ct_buckets),
        ("ct_udp_timeout", k.ct_udp_timeout),
    ]
    .iter()
    .filter_map(|(n, v)| v.map(|v| format!(" {n}={v}")))
    .collect()
}

/// What the gateway's conntrack table did with a trial's new flows.
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

/// New flows: the packet family's UDP traffic, one datagram per 5-tuple, with the
/// gateway's conntrack figures.
pub struct NewFlows;

impl Traffic for NewFlows {
    fn family(&self) -> &'static str {
        "packet"
    }

    /// Admitted new flows/s (one datagram each: the sink's packets/s).
    fn main_metric(&self) -> MainMetric {
        MainMetric {
            name: "received_pps",
            higher: true,
        }
    }

    fn live_unit(&self) -> &'static str {
        "flows"
    }

    fn roles(&self, tb: &dyn Testbed, p: &TrialParams) -> Result<Roles> {
        let (sink, source) = role_specs(tb, p)?;
        Ok(Roles {
            server: sink.map(|s| (Host::Server, s)),
            client: (Host::Client, source),
            proxy: None,
        })
    }

    fn ending(&self) -> Ending {
        Ending::Timed {
            measuring: "server",
        }
    }

    fn collect(
        &self,
        tb: &dyn Testbed,
        p: &TrialParams,
        results: Vec<RoleResults>,
        gateway: Option<&GatewayResults>,
    ) -> Result<Figures> {
        let mut s = summarise_packet(p, tb, results, gateway)?;
        s.conntrack = gateway
            .and_then(|g| g.conntrack.as_ref())
            .map(|r| Box::new(CtSummary::of(s.sent, s.received, s.elapsed_s, r)));
        Ok(Figures::Packet(s))
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
