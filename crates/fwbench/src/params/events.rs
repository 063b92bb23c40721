//! Gateway events of a trial (issue 25), as the user wrote them: `--event KIND:K@T`
//! (`add:1@1s`, `delete:100@2.5s`), `--event-rate R` (updates/s), `--event-count N`,
//! `--event-method per-rule|batch|map`, `--load F[@RATE]`, or a trace of updates
//! (`--event-trace FILE`, issue 39: its format is `params::trace`'s); the same as the
//! scenario axes `event`, `event_rate`, `event_count`, `event_method`, `event_load`,
//! `event_trace`.
//!
//! Owns: parsing and checking those values into [`EventParams`] (no syscalls), and
//! which workloads take them ([`check_for`], by what each kind declares,
//! `TrialKind::event_fit`: the ones that refuse say why).
//! Must not: know the testbed (the marker is chosen by `workloads::events`).

use crate::params::topology::Topology;
use crate::params::trace::Trace;
use crate::params::values::ValueError;
use crate::params::workload::{EventFit, TrialKind};
use crate::params::Conflict;
use proto::{EventPlace, MarkerFate, Proto, Rate, UpdateKind, UpdateMethod};
use serde::{Deserialize, Serialize};

/// One scheduled gateway event of a trial.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventParams {
    pub kind: UpdateKind,
    pub k: u32,
    pub at_s: f64,
    /// Updates per second after the first (`None`: once).
    pub rate: Option<f64>,
    /// Updates in all (`None` with a rate: as many as fit before the trial ends).
    pub count: Option<u32>,
    pub method: UpdateMethod,
    /// The background's rate as a share of what the gateway forwards at the installed
    /// size (`None`: the rate as given). Absent from the canonical JSON when unset, so
    /// the keys of trials without it stay what they were.
    pub load: Option<Load>,
    /// Where the update's rules go in fwbench's chain; absent (at the head) from the
    /// canonical JSON, so the keys of trials without it stay what they were.
    #[serde(default, skip_serializing_if = "EventPlace::is_head")]
    pub place: EventPlace,
    /// Churn replay: the updates of a trace file (`--event-trace`), one per operation;
    /// `kind`, `k` and `at_s` are then its first operation's, `rate` and `count` unset.
    /// Absent from the canonical JSON without one (keys stay); with one, its number of
    /// operations and their fingerprint ([`Trace`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

/// The background of a trial with events offered at a share of the gateway's capacity
/// at that installed size, as FD.io CSIT's reconfiguration tests set theirs (a share
/// of the rate a search found first): `--load 0.5` (the capacity found by a short
/// search before the trial, `search::load`) or `--load 0.5@40kpps` (of a rate stated).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Share of the capacity offered, 0 < F <= 1.
    pub fraction: f64,
    /// The capacity as stated (`None`: found by the search).
    pub of: Option<Rate>,
    /// What the share was taken of, once the trial runs (`search::load`); absent as
    /// written.
    pub capacity: Option<Capacity>,
}

/// The capacity a [`Load`] is a share of, and the background's rate from it.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// The gateway's capacity at the installed size, packets/s: stated, or the rate
    /// the search found.
    pub pps: f64,
    /// The background's offered rate: the share of `pps`, packets/s.
    pub background_pps: f64,
    /// How the search found `pps` (`None`: stated).
    pub search: Option<CapacitySearch>,
}

/// The short search that found a [`Capacity`].
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacitySearch {
    /// Loss ratio still counted as forwarded (0: an NDR).
    pub loss: f64,
    /// Length of each of its trials, s.
    pub step_s: f64,
    /// Its trials (the ceiling probe and confirmations included).
    pub trials: usize,
    /// Its bracket closed and no contradiction persisted.
    pub converged: bool,
    /// The lowest rate it saw fail, packets/s.
    pub fail_pps: Option<f64>,
    /// Even an unpaced flood passed: the capacity is what the sender got out, a lower
    /// bound of the gateway's.
    #[serde(default)]
    pub limited_by_sender: bool,
    /// Why its answer may not be the gateway's capacity, judged on the steps it was
    /// taken from (`search::load`): a bracket that did not settle (out of trials, a
    /// contradiction that persisted — of the second search where one ran below the
    /// lowest failure), a step that decides it whose trial was flagged, a sender behind
    /// its schedule at or below it. Absent when none, so the stored params and keys of
    /// trials without any stay what they were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubts: Vec<results::Doubt>,
    /// Why its lowest failing rate failed by fwbench (its sender behind, its sink):
    /// the capacity is then a lower bound of the gateway's, as with
    /// `limited_by_sender` — no doubt of the share, which is at most the one asked.
    /// Absent otherwise.
    pub fail_by_fwbench: Option<String>,
}

/// `F` or `F@RATE`: `0.5`, `50%`, `0.5@40kpps`.
pub fn parse_load(t: &str) -> Result<Load, ValueError> {
    let (f, of) = match t.split_once('@') {
        Some((f, r)) => (f, Some(r.trim())),
        None => (t, None),
    };
    let share = f.trim();
    let fraction = match share.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => share.parse::<f64>(),
    }
    .ok()
    .filter(|v| *v > 0.0 && *v <= 1.0)
    .ok_or_else(|| {
        ValueError::Other(format!(
            "load '{t}': the share '{share}' (expected 0 < F <= 1, e.g. 0.5 or 50%, \
                 optionally @RATE: 0.5@40kpps)"
        ))
    })?;
    let of = of
        .map(|r| match r.parse::<Rate>() {
            Ok(Rate::Max) | Err(_) => Err(ValueError::Other(format!(
                "load '{t}': the rate '{r}' (expected a stated rate, e.g. 40kpps or 100M; \
                 without @RATE a short search finds it)"
            ))),
            Ok(r) => Ok(r),
        })
        .transpose()?;
    Ok(Load {
        fraction,
        of,
        capacity: None,
    })
}

/// The `event_load` axis: empty (the rate as given) or [`parse_load`]'s.
pub fn parse_opt_load(t: &str) -> Result<Option<Load>, ValueError> {
    (!t.trim().is_empty()).then(|| parse_load(t)).transpose()
}

/// `KIND:K@T`: `add:1@1s`, `replace:20000@500ms`, `add-elements:10@2`.
pub fn parse_event(t: &str) -> Result<(UpdateKind, u32, f64), ValueError> {
    let bad = || ValueError::Other(format!("event '{t}': expected KIND:K@TIME, e.g. add:1@1s"));
    let (kind, rest) = t.split_once(':').ok_or_else(bad)?;
    let (k, at) = rest.split_once('@').ok_or_else(bad)?;
    let kind: UpdateKind = kind.trim().parse()?;
    let k: u32 = k
        .trim()
        .parse()
        .ok()
        .filter(|&k| k > 0 && k <= proto::MAX_UPDATE_K)
        .ok_or_else(|| {
            format!(
                "event '{t}': K = '{k}' (expected 1 to {})",
                proto::MAX_UPDATE_K
            )
        })?;
    let at = at.trim();
    let (num, scale) = if let Some(v) = at.strip_suffix("ms") {
        (v, 1e-3)
    } else if let Some(v) = at.strip_suffix('s') {
        (v, 1.0)
    } else {
        (at, 1.0)
    };
    let at_s = num
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v * scale)
        .ok_or_else(|| {
            ValueError::Other(format!(
                "event '{t}': time '{at}' (expected e.g. 1s, 250ms)"
            ))
        })?;
    Ok((kind, k, at_s))
}

/// An event as written (`KIND:K@T`), the typed `event` axis value.
pub type Event = (UpdateKind, u32, f64);

/// The `event` axis: empty (none) or `KIND:K@T`.
pub fn parse_opt_event(t: &str) -> Result<Option<Event>, ValueError> {
    (!t.trim().is_empty()).then(|| parse_event(t)).transpose()
}

/// The `event_rate` axis: empty (once) or updates/s, 0 < R <= 10000.
pub fn parse_event_rate(r: &str) -> Result<Option<f64>, ValueError> {
    match r.trim() {
        "" => Ok(None),
        r => r
            .trim_end_matches("/s")
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0 && *v <= 10_000.0)
            .map(Some)
            .ok_or_else(|| {
                ValueError::Other(format!(
                    "event rate '{r}' (expected updates/s, 0 < R <= 10000)"
                ))
            }),
    }
}

/// The `event_count` axis: empty or 1 to `proto::MAX_UPDATES`.
pub fn parse_event_count(c: &str) -> Result<Option<u32>, ValueError> {
    match c.trim() {
        "" => Ok(None),
        c => c
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0 && n <= proto::MAX_UPDATES)
            .map(Some)
            .ok_or_else(|| {
                ValueError::Other(format!(
                    "event count '{c}' (expected 1 to {})",
                    proto::MAX_UPDATES
                ))
            }),
    }
}

/// The `event_place` axis: empty (head) or a place name.
pub fn parse_event_place(m: &str) -> Result<EventPlace, ValueError> {
    match m.trim() {
        "" => Ok(EventPlace::Head),
        m => m.parse().map_err(ValueError::from),
    }
}

/// The `event_method` axis: empty (batch) or a method name.
pub fn parse_event_method(m: &str) -> Result<UpdateMethod, ValueError> {
    match m.trim() {
        "" => Ok(UpdateMethod::Batch),
        m => m.parse().map_err(ValueError::from),
    }
}

/// The trial's event from the four typed values (CLI flags or scenario axes); `None`
/// without an event (then rate and count must be unset too).
pub fn combine(
    event: Option<Event>,
    rate: Option<f64>,
    count: Option<u32>,
    method: UpdateMethod,
    load: Option<Load>,
    place: EventPlace,
    trace: Option<String>,
) -> Result<Option<EventParams>, ValueError> {
    if let Some(file) = trace {
        if let Some(what) = [
            ("event", event.is_some()),
            ("event_rate", rate.is_some()),
            ("event_count", count.is_some()),
        ]
        .into_iter()
        .find_map(|(w, set)| set.then_some(w))
        {
            return Err(ValueError::Other(format!(
                "event_trace {file} and {what}: a trace gives every update's kind, K and time \
                 itself; give one or the other (event_method, event_load and event_place \
                 apply to every operation of the trace)"
            )));
        }
        // Its operations are read by the front door (`plan::build`, through
        // [`EventParams::load_trace`]), which sets kind, K and time from the first and
        // checks each; [`check_for`] checks each against the workload.
        return Ok(Some(EventParams {
            kind: UpdateKind::Add,
            k: 1,
            at_s: 0.0,
            rate: None,
            count: None,
            method,
            load,
            place,
            trace: Some(Trace::named(&file)),
        }));
    }
    let Some((kind, k, at_s)) = event else {
        if let Some(what) = [
            ("event_rate", rate.is_some()),
            ("event_count", count.is_some()),
            ("event_load", load.is_some()),
            ("event_place", !place.is_head()),
        ]
        .into_iter()
        .find_map(|(w, set)| set.then_some(w))
        {
            return Err(ValueError::Other(format!(
                "{what} needs an event (e.g. event = \"add:1@1s\")"
            )));
        }
        return Ok(None);
    };
    if count.is_some_and(|n| n > 1) && rate.is_none() {
        return Err("more than one update needs an event rate (updates/s)".into());
    }
    check_kind(kind, method, place)?;
    Ok(Some(EventParams {
        kind,
        k,
        at_s,
        rate,
        count,
        method,
        load,
        place,
        trace: None,
    }))
}

/// Whether an update of `kind` can be made by `method` at `place`.
fn check_kind(kind: UpdateKind, method: UpdateMethod, place: EventPlace) -> Result<(), ValueError> {
    if method == UpdateMethod::FlushLoad
        && !matches!(
            kind,
            UpdateKind::Replace | UpdateKind::Reload | UpdateKind::ReloadSet
        )
    {
        return Err(ValueError::Other(format!(
            "event method flush-load empties and loads again the whole rule set or set: it \
             makes a replace, a reload or a reload-set (not {})",
            kind.name()
        )));
    }
    if !place.is_head() && kind != UpdateKind::Add {
        return Err(ValueError::Other(format!(
            "event place {}: only an add puts new rules in the chain (not {})",
            place.name(),
            kind.name()
        )));
    }
    Ok(())
}

impl EventParams {
    /// Read the trace's file, if it has one not read yet (the front door does, once),
    /// take its first operation's kind, K and time, and check every operation with
    /// the method and place as `--event` would be (the file and line named).
    pub fn load_trace(&mut self) -> Result<(), ValueError> {
        let Some(t) = self.trace.as_mut() else {
            return Ok(());
        };
        t.load().map_err(|e| ValueError::Other(e.to_string()))?;
        for op in &t.ops {
            check_kind(op.kind, self.method, self.place).map_err(|e| {
                ValueError::Other(format!(
                    "{}:{}: {} {}: {e}",
                    t.file,
                    op.line,
                    op.kind.name(),
                    op.k
                ))
            })?;
        }
        if let Some(first) = t.first() {
            (self.kind, self.k, self.at_s) = (first.kind, first.k, first.at_s());
        }
        Ok(())
    }

    /// Each update as an event of its own, as `--event KIND:K@T` would make it: the
    /// trace's operations, or this event itself.
    pub fn each(&self) -> Vec<EventParams> {
        match &self.trace {
            None => vec![self.clone()],
            Some(t) => {
                // The trace's operations copied once, not once per operation.
                let base = EventParams {
                    kind: self.kind,
                    k: self.k,
                    at_s: self.at_s,
                    rate: None,
                    count: None,
                    method: self.method,
                    load: self.load.clone(),
                    place: self.place,
                    trace: None,
                };
                t.ops
                    .iter()
                    .map(|op| EventParams {
                        kind: op.kind,
                        k: op.k,
                        at_s: op.at_s(),
                        ..base.clone()
                    })
                    .collect()
            }
        }
    }
}

/// Whether a trial of `kind` (its transport `proto`, on `topology`) can run event `e`;
/// bad input names what refuses it and why.
pub fn check_for(
    e: &EventParams,
    kind: &TrialKind,
    topology: Topology,
    proto: Proto,
) -> Result<(), Conflict> {
    check_load_fits(e, kind)?;
    match &e.trace {
        None => check_one(e, kind, topology, proto),
        Some(t) => t.ops.iter().zip(e.each()).try_for_each(|(op, one)| {
            check_one(&one, kind, topology, proto).map_err(|c| {
                Conflict(format!(
                    "{}:{}: {} {}: {}",
                    t.file,
                    op.line,
                    op.kind.name(),
                    op.k,
                    c.0
                ))
            })
        }),
    }
}

/// [`check_for`] of one event (its load already checked: once for a whole trace).
fn check_one(
    e: &EventParams,
    kind: &TrialKind,
    topology: Topology,
    proto: Proto,
) -> Result<(), Conflict> {
    if e.kind == UpdateKind::ExpireElements && !kind.takes_load() {
        return Err(Conflict(format!(
            "--event {}: its time to effect is dated on a flow's packets (the marker flow's \
             first after its element's expiry, past the gap its add made), not on {}'s: use \
             flood or flow",
            e.kind.name(),
            kind.workload()
        )));
    }
    if e.kind.marker_fate() == MarkerFate::Kept && !kind.takes_load() {
        return Err(Conflict(format!(
            "--event {}: its violations are counted on a flow's packets (the marker \
             flow's that pass), not on {}'s: use flood or flow",
            e.kind.name(),
            kind.workload()
        )));
    }
    match kind.event_fit() {
        EventFit::Any => Ok(()),
        EventFit::ClientConnectsFirst => match proto {
            Proto::Tcp | Proto::Sctp if e.kind.marker_fate() != MarkerFate::Drops => {
                Err(Conflict(format!(
                    "--event {}: {}'s marker is client 1, whose {proto} connection opens \
                 before the traffic phase — while the rule a {} takes out is in place, \
                 so it could not connect; use -P udp",
                    e.kind.name(),
                    kind.workload(),
                    e.kind.name()
                )))
            }
            Proto::Tcp | Proto::Sctp | Proto::Udp => Ok(()),
        },
        EventFit::Refused(why) => Err(Conflict(format!("--event: {why}"))),
        EventFit::TimedSessions => {
            let k = kind.conn();
            if let Some(program) =
                k.and_then(|k| k.client_program.as_ref().or(k.server_program.as_ref()))
            {
                return Err(Conflict(format!(
                    "--event with {program}: an external program's sessions are not timed \
                     one by one, and the marker stream needs the built-in server; use the \
                     built-in client and server"
                )));
            }
            match topology {
                Topology::Input => Err(
                    "--event in topology input: the client runs in the gateway, so no \
                     session crosses fwbench's chain from a client address (use forward \
                     or proxy)"
                        .into(),
                ),
                Topology::Forward | Topology::Direct | Topology::Proxy => Ok(()),
            }
        }
    }
}

/// `--load` sets a flood's or flow's rate (once for a whole trace).
fn check_load_fits(e: &EventParams, kind: &TrialKind) -> Result<(), Conflict> {
    if e.load.is_some() && !kind.takes_load() {
        return Err(Conflict(format!(
            "--load sets the packet rate of a flood or flow's background (a share of what \
             the gateway forwards), not of {}: give its rate or clients instead",
            kind.workload()
        )));
    }
    Ok(())
}

/// Every update of `e` due before the traffic of a timed trial of `duration_s` ends:
/// one due at its end or later is not sure to run (an adaptive trial may stop right at
/// its duration), and its trial would state an event that did not happen. Elements set
/// to expire go when the engine's timeout, rounded up to its unit (`timeout_step_ms`:
/// ipset's whole seconds), runs out: up to one unit after they are due.
pub fn check_due(e: &EventParams, duration_s: f64, timeout_step_ms: u64) -> Result<(), Conflict> {
    let secs = |s: f64| format!("{} s", (s * 1e3).round() / 1e3);
    let slack_s = if e.kind.runs_nothing_when_due() && timeout_step_ms > 1 {
        timeout_step_ms as f64 / 1e3
    } else {
        0.0
    };
    let late = |due_s: f64| due_s + slack_s >= duration_s - 1e-9;
    if let Some(t) = &e.trace {
        return match t.ops.iter().find(|op| late(op.at_ns as f64 / 1e9)) {
            Some(op) => Err(Conflict(format!(
                "{}:{}: the operation at {} is due at or after the end of the trial's {} of \
                 traffic (duration, -t): lengthen the trial or end the trace sooner",
                t.file,
                op.line,
                secs(op.at_ns as f64 / 1e9),
                secs(duration_s)
            ))),
            None => Ok(()),
        };
    }
    let n = e.updates(duration_s);
    let last = e.at_s + e.rate.map_or(0.0, |r| f64::from(n - 1) / r);
    if !late(last) {
        return Ok(());
    }
    let event = format!(
        "--event {}:{}@{}",
        e.kind.name(),
        e.k,
        secs(e.at_s).replace(' ', "")
    );
    let rounded = if slack_s > 0.0 {
        format!(
            " (its elements' timeout in whole units of {}: they may go up to {} later)",
            secs(slack_s),
            secs(slack_s)
        )
    } else {
        String::new()
    };
    Err(Conflict(if n == 1 {
        format!(
            "{event}: due at {}{rounded}, not before the end of the trial's {} of traffic \
             (duration, -t): lengthen the trial or schedule the update earlier",
            secs(last),
            secs(duration_s)
        )
    } else {
        format!(
            "{event} with {n} updates (--event-count) at {}/s: the last is due at \
             {}{rounded}, not before the end of the trial's {} of traffic (duration, -t): \
             lengthen the trial, lower the count or raise the rate",
            e.rate.unwrap_or_default(),
            secs(last),
            secs(duration_s)
        )
    }))
}

/// `--load` sets one trial's rate, and an envelope's background (its steps vary the
/// updates' rate, not the traffic's: the capacity is found once, before them); the
/// other searches set the traffic's rate or rule count at every step.
pub fn check_load(
    e: &EventParams,
    search: Option<&crate::params::search::Search>,
) -> Result<(), Conflict> {
    use crate::params::search::Search;
    let sets_rate = match search {
        Some(Search::Ndr(_) | Search::Degrade(_) | Search::Mlr(_) | Search::SweetSpot) => true,
        Some(Search::Envelope(_)) | None => false,
    };
    if sets_rate && e.load.is_some() {
        return Err(
            "--load sets the rate of one trial (a share of what the gateway forwards) or an \
             envelope's background; a search over the rate or the rule count sets them at \
             each of its trials: drop --load"
                .into(),
        );
    }
    Ok(())
}

/// Client addresses a trial of `p` sends from: its clients, and with an event a
/// second one for the extra marker stream of ping and the connection workloads
/// (`workloads::events::extra_marker_source`).
pub fn client_addresses(p: &crate::params::TrialParams) -> u32 {
    let extra = p.kind.marker_stream() && p.events.is_some();
    if extra {
        p.clients.max(2)
    } else {
        p.clients
    }
}

/// The event of the four values as written (each parsed, then [`combine`]d).
#[cfg(test)]
fn event_params(
    event: &str,
    rate: &str,
    count: &str,
    method: &str,
) -> Result<Option<EventParams>, ValueError> {
    combine(
        parse_opt_event(event)?,
        parse_event_rate(rate)?,
        parse_event_count(count)?,
        parse_event_method(method)?,
        None,
        EventPlace::Head,
        None,
    )
}

impl EventParams {
    /// Updates the trial runs: the count asked for, else once, or — with a rate — as
    /// many as fit before `duration_s` ends.
    pub fn updates(&self, duration_s: f64) -> u32 {
        if let Some(t) = &self.trace {
            return t.ops.len() as u32;
        }
        match (self.count, self.rate) {
            (Some(n), _) => n,
            (None, None) => 1,
            // Due before the traffic ends (one due at its end could not be seen, and
            // would not run: it would flag its trial); 1e-9 absorbs the float's error
            // ((1 − 0.41) × 100 is 59.000…01).
            (None, Some(r)) => {
                let n = ((duration_s - self.at_s) * r - 1e-9).ceil() as i64;
                n.clamp(1, i64::from(proto::MAX_UPDATES)) as u32
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_parse_and_bad_ones_are_named() {
        assert_eq!(parse_event("add:1@1s").unwrap(), (UpdateKind::Add, 1, 1.0));
        assert_eq!(
            parse_event("delete:20@250ms").unwrap(),
            (UpdateKind::Delete, 20, 0.25)
        );
        assert!(parse_event("add:0@1s")
            .unwrap_err()
            .to_string()
            .contains("K = '0'"));
        assert!(parse_event("add@1s")
            .unwrap_err()
            .to_string()
            .contains("KIND:K@TIME"));
        assert!(parse_event("swap:1@1s")
            .unwrap_err()
            .to_string()
            .contains("unknown update kind"));
        let e = event_params("add:1@1s", "10", "", "per-rule")
            .unwrap()
            .unwrap();
        assert_eq!(e.method, UpdateMethod::PerRule);
        // Due at 1.0, 1.1, … 2.9 s: none at the traffic's end (3 s).
        assert_eq!(e.updates(3.0), 20);
        assert_eq!(e.updates(3.05), 21);
        let e = event_params("add:1@0.41s", "100", "", "batch")
            .unwrap()
            .unwrap();
        assert_eq!(e.updates(1.0), 59);
        assert_eq!(event_params("", "", "", "").unwrap(), None);
        assert!(event_params("", "10", "", "")
            .unwrap_err()
            .to_string()
            .contains("event_rate"));
        assert!(event_params("add:1@1s", "", "3", "")
            .unwrap_err()
            .to_string()
            .contains("needs an event rate"));
        assert!(event_params("add:1@1s", "", "", "fast")
            .unwrap_err()
            .to_string()
            .contains("unknown update method 'fast'"));
    }

    /// An update due at or after the end of a timed trial's traffic never runs: the
    /// front door refuses it, naming the update, its time and the duration.
    #[test]
    fn an_update_due_after_the_traffic_ends_is_refused() {
        let ev = |at: &str, rate: &str, count: &str| {
            event_params(at, rate, count, "batch").unwrap().unwrap()
        };
        let refused = |e: &EventParams, d: f64| check_due(e, d, 1).unwrap_err().0;
        assert!(check_due(&ev("add:1@1s", "", ""), 2.0, 1).is_ok());
        assert_eq!(
            refused(&ev("add:1@5s", "", ""), 2.0),
            "--event add:1@5s: due at 5 s, not before the end of the trial's 2 s of traffic \
             (duration, -t): lengthen the trial or schedule the update earlier"
        );
        assert!(refused(&ev("add:1@2s", "", ""), 2.0).contains("due at 2 s"));
        // 30 at 10/s from 0.5 s: the last at 3.4 s.
        let many = ev("add:1@500ms", "10", "30");
        assert!(check_due(&many, 3.5, 1).is_ok());
        assert!(
            refused(&many, 2.0).starts_with(
                "--event add:1@0.5s with 30 updates (--event-count) at 10/s: the last is due \
                 at 3.4 s, not before the end of the trial's 2 s"
            ),
            "{}",
            refused(&many, 2.0)
        );
        // Without a count, as many as are due before the end: always fits.
        assert!(check_due(&ev("add:1@500ms", "10", ""), 2.0, 1).is_ok());
        // A trace: its first operation at or after the end, by file and line.
        let mut e = ev("add:1@1s", "", "");
        e.trace = Some(
            crate::params::trace::parse("t.trace", "0.5s add 1\n1s delete 1\n2s add 1\n").unwrap(),
        );
        assert!(check_due(&e, 2.5, 1).is_ok());
        assert!(refused(&e, 2.0).starts_with("t.trace:3: the operation at 2 s is due"));
        // Elements set to expire on ipset (whole seconds): due at 1.5 s, gone by 2.5 s.
        let expiry = ev("expire-elements:10@1500ms", "", "");
        assert!(check_due(&expiry, 2.0, 1).is_ok());
        assert!(check_due(&expiry, 2.6, 1000).is_ok());
        assert!(
            check_due(&expiry, 2.0, 1000).unwrap_err().0.starts_with(
                "--event expire-elements:10@1.5s: due at 1.5 s (its elements' timeout in \
                     whole units of 1 s: they may go up to 1 s later), not before the end"
            ),
            "{:?}",
            check_due(&expiry, 2.0, 1000)
        );
    }

    #[test]
    fn a_load_is_a_share_and_maybe_a_stated_rate() {
        assert_eq!(
            parse_load("0.5").unwrap(),
            Load {
                fraction: 0.5,
                of: None,
                capacity: None
            }
        );
        assert_eq!(
            parse_load("50%@40kpps").unwrap(),
            Load {
                fraction: 0.5,
                of: Some(Rate::Pps(40_000.0)),
                capacity: None
            }
        );
        for (bad, says) in [
            ("0", "the share '0'"),
            ("1.5", "the share '1.5'"),
            ("half", "the share 'half'"),
            ("0.5@max", "the rate 'max'"),
            ("0.5@fast", "the rate 'fast'"),
        ] {
            let e = parse_load(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert_eq!(parse_opt_load(" ").unwrap(), None);
        // A load without an event is refused, naming the axis.
        assert!(combine(
            None,
            None,
            None,
            UpdateMethod::Batch,
            Some(parse_load("0.5").unwrap()),
            EventPlace::Head,
            None
        )
        .unwrap_err()
        .to_string()
        .contains("event_load"));
    }
}
