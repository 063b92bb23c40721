//! What one trial gave: its status, where each role ran, the workload's combined
//! figures, the gateway's report, the samples, and — for a search — the search's
//! result. The controller's single result type, rendered by `output` and stored by
//! `run::record`.
//!
//! Must not: know a family's figures beyond what `workloads::Summary` says of them
//! (their stored key, the packets they sent).

pub mod search;

use crate::workloads::conn::ConnSummary;
use crate::workloads::packet::PacketSummary;
use crate::workloads::{Figures, STORED_LEGACY_KEY};
use proto::{GatewayResults, NetState};
use serde::{Deserialize, Serialize};

/// What an adaptive trial achieved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Precision {
    pub target: f64,
    /// Relative 95 % CI half-width of the per-window rate at the end (None: < 5 windows).
    pub achieved: Option<f64>,
    pub windows: usize,
    pub duration_s: f64,
    /// Stopped because the target was reached (else at the maximum duration).
    pub reached: bool,
}

/// A trial's status (ok, flagged, dropped, unavailable, failed): the `results` crate's.
pub use results::Status;

#[derive(Debug, Clone, Serialize)]
pub struct RoleInfo {
    pub role: &'static str,
    /// Which host of its role (0-based; absent: the first). A role spread over several
    /// hosts has a row per host.
    #[serde(skip_serializing_if = "is_first")]
    pub host: u32,
    pub place: String,
    pub requested_cpus: Option<String>,
    pub cpus: String,
    pub pid: u32,
    /// Remote hosts: the host's clock against the controller's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<crate::testbed::launcher::ClockOffset>,
}

fn is_first(h: &u32) -> bool {
    *h == 0
}

pub use crate::testbed::Sampled;

pub use crate::testbed::EXTERNAL_GATEWAY;

#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: Status,
    pub error: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub placement: Vec<RoleInfo>,
    /// The kind's typed figures (none for a search, or a trial that failed first).
    pub figures: Option<Figures>,
    /// Adaptive trials: the precision asked for and reached.
    pub precision: Option<Precision>,
    /// Metrics each role sampled during the trial (stored in `samples`, not in `results`).
    pub samples: Vec<Sampled>,
    /// ndr and degrade: the search's result (its steps are trials of their own).
    pub search: Option<crate::outcome::search::SearchSummary>,
    pub gateway: Option<GatewayResults>,
    /// Whether the gateway started this trial in the state of the testbed's first
    /// snapshot (None: no gateway, or an agent that does not report its state).
    pub clean_start: Option<bool>,
    /// How the gateway's state at the start differed from the first snapshot.
    pub start_differences: Vec<String>,
    /// Why some of the trial's figures may not be believed (its status is then
    /// `flagged`, these the reason).
    pub doubts: Vec<results::Doubt>,
}

/// The stored form of an [`Outcome`] (`trials.results`, `--json`'s source): each
/// family's figures under its own key ([`crate::workloads::Summary::stored_key`]), as
/// before the figures were one enum, so old results files still read the same.
#[derive(Serialize)]
struct StoredForm<'a> {
    status: Status,
    error: &'a Option<String>,
    started_at: &'a str,
    finished_at: &'a str,
    placement: &'a [RoleInfo],
    /// Always written ([`STORED_LEGACY_KEY`]): the figures stored under it, else null.
    summary: Option<&'a Figures>,
    /// Figures stored under a key of their own, after `summary`.
    #[serde(flatten)]
    figures: Option<Keyed<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    precision: Option<&'a Precision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    search: Option<&'a crate::outcome::search::SearchSummary>,
    gateway: &'a Option<GatewayResults>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clean_start: Option<bool>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    start_differences: &'a [String],
    #[serde(skip_serializing_if = "<[results::Doubt]>::is_empty")]
    doubts: &'a [results::Doubt],
}

/// Figures under their family's key: `{"packet": {…}}`.
struct Keyed<'a>(&'static str, &'a Figures);

impl Serialize for Keyed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(self.0, self.1)?;
        m.end()
    }
}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let key = self.figures.as_ref().map(|f| (f.summary().stored_key(), f));
        StoredForm {
            status: self.status,
            error: &self.error,
            started_at: &self.started_at,
            finished_at: &self.finished_at,
            placement: &self.placement,
            summary: key.filter(|(k, _)| *k == STORED_LEGACY_KEY).map(|(_, f)| f),
            figures: key
                .filter(|(k, _)| *k != STORED_LEGACY_KEY)
                .map(|(k, f)| Keyed(k, f)),
            precision: self.precision.as_ref(),
            search: self.search.as_ref(),
            gateway: &self.gateway,
            clean_start: self.clean_start,
            start_differences: &self.start_differences,
            doubts: &self.doubts,
        }
        .serialize(s)
    }
}

/// What a search reads of a step trial, as stored (`results` JSON): read back to
/// reuse the steps a resumed run already has instead of measuring them again.
#[derive(serde::Deserialize)]
struct StoredStep {
    status: Status,
    error: Option<String>,
    started_at: String,
    finished_at: String,
    #[serde(default)]
    packet: Option<PacketSummary>,
    #[serde(default)]
    conn: Option<ConnSummary>,
    /// Its doubts, which steer a search too (a queue that filled fails `--load`'s
    /// capacity step): each read alone, one of a kind this fwbench does not know left out.
    #[serde(default)]
    doubts: Vec<serde_json::Value>,
}

impl Outcome {
    /// A step trial of a search as stored: status, error, times, the packet or
    /// connection figures and the doubts (what searches look at), nothing else.
    pub fn from_stored_step(results: &serde_json::Value) -> Result<Outcome, serde_json::Error> {
        let s = StoredStep::deserialize(results)?;
        Ok(Outcome {
            status: s.status,
            error: s.error,
            finished_at: s.finished_at,
            figures: match (s.packet, s.conn) {
                (Some(p), _) => Some(Figures::Packet(p)),
                (None, Some(c)) => Some(Figures::Conn(Box::new(c))),
                (None, None) => None,
            },
            doubts: s
                .doubts
                .into_iter()
                .filter_map(|d| serde_json::from_value(d).ok())
                .collect(),
            ..Outcome::started(s.started_at)
        })
    }

    /// An `ok` outcome without figures yet.
    pub fn started(started_at: String) -> Outcome {
        Outcome {
            status: Status::Ok,
            error: None,
            finished_at: started_at.clone(),
            started_at,
            placement: vec![],
            figures: None,
            search: None,
            samples: vec![],
            precision: None,
            gateway: None,
            clean_start: None,
            start_differences: vec![],
            doubts: vec![],
        }
    }

    /// Compare the gateway's state at this trial's start with `first`, the testbed's
    /// first snapshot, and mark the trial (nothing to compare: left unmarked).
    pub fn judge_start(&mut self, first: &NetState) {
        let Some(before) = self.gateway_state_before() else {
            return;
        };
        self.start_differences = before.differences(first);
        self.clean_start = Some(self.start_differences.is_empty());
    }

    /// The gateway's netfilter state before its setup, if it reported one.
    pub fn gateway_state_before(&self) -> Option<&NetState> {
        Some(&self.gateway.as_ref()?.residue.as_ref()?.before)
    }

    /// What the gateway could not undo (legacy tables …): later trials pay for it.
    pub fn gateway_left(&self) -> &[String] {
        self.gateway
            .as_ref()
            .and_then(|g| g.residue.as_ref())
            .map_or(&[], |r| &r.left)
    }

    /// An imported ruleset that dropped the trial's traffic turns `ok` into `dropped`,
    /// with e.g. "1408960 of 1408960 packets dropped by the policy of chain INPUT".
    pub fn judge_drops(&mut self) {
        if self.status != Status::Ok {
            return;
        }
        let Some(d) = self
            .firewall()
            .and_then(|f| f.verdicts.as_ref())
            .and_then(|v| v.dropped.clone())
        else {
            return;
        };
        let sent = self
            .figures
            .as_ref()
            .and_then(|f| f.summary().packets_sent());
        let of = sent.map(|n| format!(" of {n}")).unwrap_or_default();
        self.status = Status::Dropped;
        self.error = Some(format!(
            "{}{of} packets dropped by {} (the imported ruleset)",
            d.packets, d.by
        ));
    }

    /// The witness over the trial's figures: what cannot be is withheld (a negative
    /// time to effect), and every doubt — the firewall's verdict check failed, an
    /// update's window held no traffic or an overloaded gateway, a max-rate flood that
    /// reached a tenth of what was sent (`limited_by::overload`), a paced sender late
    /// beyond its bound (`limited_by::late_sender`), a paced trial's queue that filled
    /// through it (`limited_by::queue_filled`), a connection trial whose sessions failed,
    /// came back corrupt or none completed, or whose durations passed what the
    /// histograms hold ([`ConnSummary::doubts`]) — turns `ok` into
    /// `flagged`, the doubts its reason (`results::judge`). Runs after every other
    /// judgement of the trial.
    pub fn judge_witness(&mut self) {
        if let Some(e) = self.figures.as_mut().and_then(Figures::events_mut) {
            e.judge();
        }
        let mut doubts = vec![];
        if let Some(v) = self
            .firewall()
            .and_then(|f| f.verdicts.as_ref())
            .filter(|v| !v.ok)
        {
            doubts.push(results::Doubt::new(
                results::DoubtKind::VerdictMismatch,
                format!(
                    "the firewall's counters do not account for the traffic ({})",
                    v.problems.join("; ")
                ),
            ));
        }
        // Counters that could not be read check nothing: not a verdict that holds.
        if let Some(e) = self
            .firewall()
            .filter(|f| f.verdicts.is_none())
            .and_then(|f| f.verdicts_error.as_ref())
        {
            doubts.push(results::Doubt::new(
                results::DoubtKind::VerdictMismatch,
                format!("the firewall's counters account for nothing: {e}"),
            ));
        }
        if let Some(e) = self.figures.as_ref().and_then(Figures::events) {
            doubts.extend(e.doubts());
        }
        // Sessions that failed, none completed, durations clamped: the rates and times
        // count what completed, as the histograms held it.
        if let Some(c) = self.conn() {
            doubts.extend(c.doubts());
        }
        // A max-rate flood far past the gateway's limit: its rate is no capacity; or
        // on a CPU the machine's other load mostly took: its rate is that load's.
        if let Some(c) = self
            .packet()
            .and_then(|k| k.limited_by.as_ref()?.counters.as_ref())
        {
            if let Some(why) = crate::limited_by::overload(c) {
                doubts.push(results::Doubt::new(results::DoubtKind::Overloaded, why));
            }
            if let Some(why) = crate::limited_by::disturbed(c) {
                doubts.push(results::Doubt::new(results::DoubtKind::Disturbed, why));
            }
        }
        // A paced sender late beyond what the trial can bear: its traffic (and, with
        // events, the updates' figures) was not the one scheduled.
        if let Some(s) = self.packet() {
            // A rate needs a span: a single packet has none (`fwbench newflows` at its
            // default of one flow sent one datagram in 0.45 ms and read "2235 new
            // flows/s admitted").
            if s.sent < 2 {
                doubts.push(results::Doubt::new(
                    results::DoubtKind::TooFew,
                    format!(
                        "{} packet(s) sent: no rate can be timed from fewer than two (a \
                         new-flow trial sends one datagram per flow: give it more --flows)",
                        s.sent
                    ),
                ));
            }
            let updates = s.events.as_ref().is_some_and(|e| !e.updates.is_empty());
            if let Some(why) = crate::limited_by::late_sender(
                s.max_lag_ns,
                (s.elapsed_s * 1e9) as u64,
                updates.then_some(crate::workloads::events::BEFORE_NS),
            ) {
                doubts.push(results::Doubt::new(
                    results::DoubtKind::LimitedByFwbench,
                    why,
                ));
            }
            // A paced trial's queue that filled through it: the rate received counts
            // what it held. (With updates, a queue an update's stall left is the
            // experiment's.)
            let counters = s.limited_by.as_ref().and_then(|l| l.counters.as_ref());
            let queued = counters.filter(|_| !updates).and_then(|c| {
                crate::limited_by::queue_filled(
                    &s.owd,
                    s.elapsed_s,
                    c,
                    s.max_lag_ns,
                    s.received_pps,
                )
            });
            if let Some(why) = queued {
                doubts.push(results::Doubt::new(results::DoubtKind::QueueGrowing, why));
            }
        }
        let (status, why) = results::judge(self.status, &doubts);
        self.status = status;
        if why.is_some() {
            self.error = why;
        }
        self.doubts = doubts;
    }

    /// A search's outcome: its result, and its doubts judged like a trial's (a search
    /// whose trials contradict each other is `flagged`, never `ok`).
    pub fn with_search(mut self, s: crate::outcome::search::SearchSummary) -> Outcome {
        let doubts = s.doubts().to_vec();
        self.search = Some(s);
        let (status, why) = results::judge(self.status, &doubts);
        self.status = status;
        if why.is_some() {
            self.error = why;
        }
        self.doubts = doubts;
        self
    }

    /// The NAT models' check (issue 26). Sessions: the NAT rule counted one packet per
    /// session. Flood and flow trials with a socket sink:
    /// the server saw every packet from an `expected` source (source NAT: the
    /// gateway's server-side address; destination NAT: the clients' own addresses,
    /// and something arrived although the client aimed at the gateway), and the NAT
    /// rule's counter, which sees a flow's first packet only, counted between the
    /// flows the sink saw and the flows the client sent. Otherwise `failed`, saying
    /// what the server saw.
    pub fn judge_nat(&mut self, model: &str, expected: &[std::net::IpAddr]) {
        if self.status != Status::Ok {
            return;
        }
        if let Some(c) = self.conn() {
            // Sessions: each one a new connection, whose first packet (SYN) the NAT rule
            // counts; a failed session may or may not have reached it.
            if c.mode != proto::ConnMode::Sessions {
                return;
            }
            let (lo, hi, failed) = (c.sessions, c.sessions + c.failed, c.failed);
            let nat = self
                .firewall()
                .and_then(|f| f.verdicts.as_ref())
                .map(|v| v.matched_packets);
            if let Some(n) = nat.filter(|n| *n < lo || *n > hi) {
                self.status = Status::Failed;
                self.error = Some(format!(
                    "model {model}: the NAT rule counted {n} new flows for {lo} sessions \
                     ({failed} failed)"
                ));
            }
            return;
        }
        let Some(k) = self.packet() else { return };
        if k.counted_at != "sink" {
            return;
        }
        let sources = k.nat.as_ref().map_or(&[][..], |n| &n.sources[..]);
        let other = k.nat.as_ref().map_or(0, |n| n.other_sources);
        let seen: u64 = sources.iter().map(|s| s.packets).sum::<u64>() + other;
        let mut strangers: Vec<String> = sources
            .iter()
            .filter(|s| !expected.contains(&s.addr))
            .map(|s| format!("{} ({} packets)", s.addr, s.packets))
            .collect();
        // Past the sink's first MAX_SOURCES addresses only a count is kept: a stranger
        // unless every expected address could have been among those counted.
        if other > 0 && expected.len() < proto::MAX_SOURCES {
            strangers.push(format!("{other} packets from further addresses"));
        }
        let want: Vec<String> = expected.iter().map(|a| a.to_string()).collect();
        let sent_flows = k.flows.iter().filter(|f| f.sent > 0).count() as u64;
        let rx_flows = k.flows.iter().filter(|f| f.received > 0).count() as u64;
        let problem = if k.received == 0 {
            Some(format!(
                "model {model}: no packet reached the server through the NAT"
            ))
        } else if seen == 0 {
            Some(format!(
                "model {model}: the sink reported no source addresses to check"
            ))
        } else if !strangers.is_empty() {
            Some(format!(
                "model {model}: the server saw source {} (expected only {})",
                strangers.join(", "),
                want.join(", ")
            ))
        } else {
            let nat = self
                .firewall()
                .and_then(|f| f.verdicts.as_ref())
                .map(|v| v.matched_packets);
            match nat {
                Some(n) if n < rx_flows || n > sent_flows => Some(format!(
                    "model {model}: the NAT rule counted {n} new flows, but the sink saw \
                     {rx_flows} and the client sent {sent_flows}"
                )),
                _ => None,
            }
        };
        if let Some(p) = problem {
            self.status = Status::Failed;
            self.error = Some(p);
        }
    }

    /// A trial aimed at an imported rule (`N` or `CHAIN:N`) whose counter stayed 0
    /// missed it: `failed`, naming the rule that took the traffic instead.
    pub fn judge_aim(&mut self, aim: &str) {
        if !matches!(self.status, Status::Ok | Status::Dropped) {
            return;
        }
        let Some(v) = self.firewall().and_then(|f| f.verdicts.clone()) else {
            return;
        };
        let hit = match aim.rsplit_once(':') {
            Some((chain, n)) => v
                .rules
                .iter()
                .find(|r| r.chain == chain && n.parse() == Ok(r.index)),
            None => aim
                .parse::<usize>()
                .ok()
                .and_then(|n| v.rules.get(n.wrapping_sub(1))),
        };
        match hit {
            Some(r) if r.packets > 0 => {}
            Some(r) => {
                self.status = Status::Failed;
                self.error = Some(format!(
                    "aimed at rule {}:{} ({}), but its counter is 0; taken by {}",
                    r.chain,
                    r.index,
                    r.text,
                    v.took.as_deref().unwrap_or("no rule with a final verdict")
                ));
            }
            None => {
                self.status = Status::Failed;
                self.error = Some(format!(
                    "aimed at rule {aim}, which the gateway did not report"
                ));
            }
        }
    }

    /// Flood, flow and new-flow figures ([`Figures::packet`]).
    pub fn packet(&self) -> Option<&PacketSummary> {
        self.figures.as_ref()?.packet()
    }
    /// Connection figures ([`Figures::conn`]).
    pub fn conn(&self) -> Option<&ConnSummary> {
        self.figures.as_ref()?.conn()
    }

    /// The gateway's rule-set report (engine, rules, install_ms, verdicts …), if any.
    pub fn firewall(&self) -> Option<&firewall::Report> {
        self.gateway.as_ref()?.firewall.as_deref()
    }
}

#[cfg(test)]
pub(crate) mod tests;
