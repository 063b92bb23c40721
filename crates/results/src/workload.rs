//! A trial's workload as stored (`trials.workload`), read once into a plain enum, and
//! what readers may ask of it: is it a rate-measured UDP stream, a connection
//! workload, new flows through conntrack, what does one unit of its traffic count.
//!
//! Owns: [`StoredWorkload`] — every workload and search name fwbench has written
//! (frozen text: a stored name never changes meaning), names it does not know kept as
//! they are ([`StoredWorkload::Other`]) — and its capability questions, so readers
//! select trials by what they are, never by comparing names.
//! Must not: know a family's parameters or figures (those are the family's stored
//! types in [`crate::stored`]), or fail on a name: any text reads.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A trial's workload, as its stored name says (fwbench's workloads and its searches,
/// which store a name of their own).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StoredWorkload {
    /// Echo cycles: headline and `echo_clients` rows.
    Echo,
    /// Packets at the highest (or a given) rate: `results.packet`.
    Flood,
    /// Paced packets, timed one by one: `results.packet`.
    Flow,
    /// Round trips of one probe at a time: `results.ping`.
    Ping,
    /// Sessions of a request and a response: `results.conn`.
    Sessions,
    /// One transfer per session: `results.conn`.
    Bulk,
    /// Downloads over HTTP/1.1: `results.conn`.
    Http,
    /// Connections opened and held: `results.conn` with its `hold`.
    Connections,
    /// One datagram per new 5-tuple: `results.packet` with its `conntrack`.
    NewFlows,
    /// A no-drop-rate search over floods: `results.search`.
    Ndr,
    /// A search for loss by rules over flows: `results.search`.
    Degrade,
    /// A no-drop-rate search over new flows: `results.search`.
    NdrNewFlows,
    /// MLRsearch over floods: `results.search`.
    Mlr,
    /// The safe envelope of gateway updates: `results.search`.
    Envelope,
    /// The commands of a workload-language file: `results.worklang`.
    Worklang,
    /// A name this build does not know (a newer fwbench's, or a foreign row's).
    Other(String),
}

/// Every known variant and its stored name.
const NAMES: [(StoredWorkload, &str); 15] = [
    (StoredWorkload::Echo, "echo"),
    (StoredWorkload::Flood, "flood"),
    (StoredWorkload::Flow, "flow"),
    (StoredWorkload::Ping, "ping"),
    (StoredWorkload::Sessions, "sessions"),
    (StoredWorkload::Bulk, "bulk"),
    (StoredWorkload::Http, "http"),
    (StoredWorkload::Connections, "connections"),
    (StoredWorkload::NewFlows, "newflows"),
    (StoredWorkload::Ndr, "ndr"),
    (StoredWorkload::Degrade, "degrade"),
    (StoredWorkload::NdrNewFlows, "ndr-newflows"),
    (StoredWorkload::Mlr, "mlr"),
    (StoredWorkload::Envelope, "envelope"),
    (StoredWorkload::Worklang, "worklang"),
];

/// What one unit of a trial's traffic is: what its background counts while the
/// gateway is updated (updates of different units are never averaged together). The
/// one type for it, from the trial that measures (fwbench's events, stored as
/// `events.unit`: frozen names) to the report that reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Unit {
    /// Packets of flows (flood, flow, new flows): one-way delay; a stall is a run of
    /// bins that lost packets and received none.
    #[default]
    #[serde(rename = "packet")]
    Packets,
    /// Echo cycles: round trip; failed: lost or unsent.
    #[serde(rename = "echo")]
    Echoes,
    /// Ping probes: round trip; failed: lost.
    #[serde(rename = "probe")]
    Probes,
    /// Sessions (sessions, bulk, http): connection setup; failed sessions.
    #[serde(rename = "session")]
    Sessions,
}

impl Unit {
    /// "forwarding stalled 3 ms; 20 packets lost" (with `most`: "… 3 ms at most; …"),
    /// in this unit's words; `stall` is the figure as it is to be shown, ms. The one
    /// sentence for it, on the terminal and in the report.
    pub fn disturbance(self, stall: &str, most: bool, lost: u64) -> String {
        let most = if most { " at most" } else { "" };
        match self {
            Unit::Packets => format!("forwarding stalled {stall} ms{most}; {lost} packets lost"),
            Unit::Echoes => format!(
                "the longest background round trip was {stall} ms; {lost} echoes lost or unsent"
            ),
            Unit::Probes => {
                format!("the longest background round trip was {stall} ms; {lost} probes lost")
            }
            Unit::Sessions => format!(
                "the longest background connection setup was {stall} ms; {lost} sessions failed"
            ),
        }
    }

    /// What the background is made of: "packets", "echoes", "probes", "sessions".
    pub fn noun(self) -> &'static str {
        match self {
            Unit::Packets => "packets",
            Unit::Echoes => "echoes",
            Unit::Probes => "probes",
            Unit::Sessions => "sessions",
        }
    }

    /// What the background lost: "background packets lost", ….
    pub fn lost_noun(self) -> &'static str {
        match self {
            Unit::Packets => "background packets lost",
            Unit::Echoes => "background echoes lost or unsent",
            Unit::Probes => "background probes lost",
            Unit::Sessions => "background sessions failed",
        }
    }
}

impl StoredWorkload {
    /// Read a stored name (any text: a name this build does not know is kept, its
    /// control characters escaped as [`crate::shown`] does: it is only ever shown).
    pub fn read(name: &str) -> StoredWorkload {
        NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(w, _)| w.clone())
            .unwrap_or_else(|| StoredWorkload::Other(crate::shown(name)))
    }

    /// The stored name.
    pub fn as_str(&self) -> &str {
        match self {
            StoredWorkload::Other(name) => name,
            known => NAMES
                .iter()
                .find(|(w, _)| w == known)
                .map_or("", |(_, n)| n),
        }
    }

    /// The echo cycle (throughput, transactions and round trips per client).
    pub fn is_echo(&self) -> bool {
        *self == StoredWorkload::Echo
    }

    /// A rate-measured UDP stream (flood, flow): packets/s received at a sink, loss
    /// and delay of the datagrams.
    pub fn is_stream(&self) -> bool {
        matches!(self, StoredWorkload::Flood | StoredWorkload::Flow)
    }

    /// A connection workload: its figures are stored under `results.conn`.
    pub fn is_conn(&self) -> bool {
        matches!(
            self,
            StoredWorkload::Sessions
                | StoredWorkload::Bulk
                | StoredWorkload::Http
                | StoredWorkload::Connections
        )
    }

    /// New flows through conntrack (its datagrams, or its search's): one datagram per
    /// flow, so packets/s are new flows/s. Floods and flows over a conntrack setting
    /// count packets of flows already set up, not new flows.
    pub fn new_flows(&self) -> bool {
        matches!(self, StoredWorkload::NewFlows | StoredWorkload::NdrNewFlows)
    }

    /// What one unit of its traffic is (names this build does not know, and
    /// workloads without a background of their own: packets).
    pub fn unit(&self) -> Unit {
        match self {
            StoredWorkload::Echo => Unit::Echoes,
            StoredWorkload::Ping => Unit::Probes,
            StoredWorkload::Sessions | StoredWorkload::Bulk | StoredWorkload::Http => {
                Unit::Sessions
            }
            StoredWorkload::Flood
            | StoredWorkload::Flow
            | StoredWorkload::Connections
            | StoredWorkload::NewFlows
            | StoredWorkload::Ndr
            | StoredWorkload::Degrade
            | StoredWorkload::NdrNewFlows
            | StoredWorkload::Mlr
            | StoredWorkload::Envelope
            | StoredWorkload::Worklang
            | StoredWorkload::Other(_) => Unit::Packets,
        }
    }
}

/// Ordered by name, as tables list workloads (`Other` holds only names no variant has,
/// as [`StoredWorkload::read`] makes it, so equal names are equal workloads).
impl Ord for StoredWorkload {
    fn cmp(&self, other: &StoredWorkload) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for StoredWorkload {
    fn partial_cmp(&self, other: &StoredWorkload) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl From<&str> for StoredWorkload {
    fn from(name: &str) -> StoredWorkload {
        StoredWorkload::read(name)
    }
}

impl fmt::Display for StoredWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_itself_and_unknown_names_are_kept() {
        // The names fwbench has stored: frozen, a stored name never changes.
        let names: Vec<&str> = NAMES.iter().map(|(_, n)| *n).collect();
        assert_eq!(
            names,
            [
                "echo",
                "flood",
                "flow",
                "ping",
                "sessions",
                "bulk",
                "http",
                "connections",
                "newflows",
                "ndr",
                "degrade",
                "ndr-newflows",
                "mlr",
                "envelope",
                "worklang"
            ]
        );
        for (w, name) in &NAMES {
            assert_eq!(&StoredWorkload::read(name), w);
            assert_eq!(w.as_str(), *name);
            assert_eq!(w.to_string(), *name);
        }
        let other = StoredWorkload::read("burst");
        assert_eq!(other, StoredWorkload::Other("burst".into()));
        assert_eq!(other.as_str(), "burst");
        // A foreign name reaches no terminal raw.
        assert_eq!(StoredWorkload::read("x\u{1b}[2J").as_str(), "x\\u{1b}[2J");
        // Names are exact: no case folding, no trimming.
        assert_eq!(
            StoredWorkload::read("Flood"),
            StoredWorkload::Other("Flood".into())
        );
    }

    /// A unit's stored name (`events.unit` in a trial's results) is frozen: the names
    /// fwbench wrote before the measuring and the reading side shared this type.
    #[test]
    fn a_units_stored_name_is_frozen() {
        let units = [
            (Unit::Packets, "packet"),
            (Unit::Echoes, "echo"),
            (Unit::Probes, "probe"),
            (Unit::Sessions, "session"),
        ];
        for (u, name) in units {
            let text = serde_json::to_string(&u).unwrap();
            assert_eq!(text, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<Unit>(&text).unwrap(), u);
        }
        assert_eq!(Unit::default(), Unit::Packets);
    }

    #[test]
    fn capabilities_follow_what_each_workload_measures() {
        let which = |f: fn(&StoredWorkload) -> bool| -> Vec<&str> {
            NAMES
                .iter()
                .filter(|(w, _)| f(w))
                .map(|(_, n)| *n)
                .collect()
        };
        assert_eq!(which(StoredWorkload::is_echo), ["echo"]);
        assert_eq!(which(StoredWorkload::is_stream), ["flood", "flow"]);
        assert_eq!(
            which(StoredWorkload::is_conn),
            ["sessions", "bulk", "http", "connections"]
        );
        assert_eq!(
            which(StoredWorkload::new_flows),
            ["newflows", "ndr-newflows"]
        );
        let units: Vec<(&str, Unit)> = NAMES.iter().map(|(w, n)| (*n, w.unit())).collect();
        for (name, unit) in units {
            let want = match name {
                "echo" => Unit::Echoes,
                "ping" => Unit::Probes,
                "sessions" | "bulk" | "http" => Unit::Sessions,
                _ => Unit::Packets,
            };
            assert_eq!(unit, want, "{name}");
        }
        let other = StoredWorkload::read("burst");
        assert!(!other.is_stream() && !other.is_conn() && !other.new_flows());
        assert_eq!(other.unit(), Unit::Packets);
    }
}
