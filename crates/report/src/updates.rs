//! Gateway events (issue 25): the stored per-update rows of a run's trials read as
//! findings in sentences, figures centred on the updates (background received and
//! mean delay per 1-ms bin, the commit and the stall shaded; a trial's repeated
//! updates overlaid in one figure) and a table of commit latency and stall vs
//! installed size per engine and method.
//!
//! What a row's background counts follows from its trial's workload ([`Unit`]):
//! flows' packets and one-way delay (flood, flow, newflows); echo cycles, ping
//! probes and their round trips; sessions and their connection setup (sessions,
//! bulk, http). Updates of different units are never averaged together.
//!
//! Owns: grouping the updates and these three views. Must not: read the store (it
//! gets the rows, see `lib.rs`) or draw.

use crate::figure::{mean_ci, num, Figure, Marker, Point, Series, Span, Table};
use crate::model::Trial;
use crate::stats::{knee_with_interval, median, KneeBasis};
use results::stored::DoubtStored;
use results::{EventPlace, Status, StoredParams, UpdateKind};
use std::collections::{BTreeMap, BTreeSet};
use store::UpdateRecord;

/// What the background of an update counts: its trial's unit
/// ([`results::StoredWorkload::unit`]), in this module's words ([`Words`]).
pub use results::workload::Unit;

/// A unit in the sentences, figures and ids of the updates' views.
trait Words {
    fn id(self) -> &'static str;
    fn during(self) -> &'static str;
    fn axes(self) -> (&'static str, &'static str);
}

impl Words for Unit {
    /// The figures' id part (none for packets: the ids of before these units).
    fn id(self) -> &'static str {
        match self {
            Unit::Packets => "",
            Unit::Echoes => "echo-",
            Unit::Probes => "ping-",
            Unit::Sessions => "sessions-",
        }
    }

    /// During what (the sentence's "during echo"), none for flows.
    fn during(self) -> &'static str {
        match self {
            Unit::Packets => "",
            Unit::Echoes => " during echo",
            Unit::Probes => " during ping",
            Unit::Sessions => " during sessions",
        }
    }

    /// (what is received per bin, its delay) in the figures' words.
    fn axes(self) -> (&'static str, &'static str) {
        match self {
            Unit::Packets => ("received", "one-way delay"),
            Unit::Echoes => ("echoes completed", "round trip"),
            Unit::Probes => ("probes answered", "round trip"),
            Unit::Sessions => ("sessions set up", "connection setup"),
        }
    }
}

/// One stored update with the engine and workload of its trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub trial_id: i64,
    pub engine: String,
    pub unit: Unit,
    /// The set elements its trial's gateway held (`FirewallRow::set_elements`): a rule
    /// update beside a set of 50 000 is not one beside a set of 1 000 (nft-set's add
    /// took 7.6, 10.9 and 10.5 ms beside 1 000, 20 000 and 50 000 here), though all
    /// count the same two rules.
    pub set_elements: u64,
    /// The rate its trial's event repeated at, updates/s (`None`: once, or not
    /// stored): commits at 1/s and at 100/s are not one series (an envelope's steps).
    pub rate: Option<f64>,
    /// The share of the gateway's capacity its trial's background was offered at
    /// (`event_load`, `--load`), in words ([`Load`]; `None`: the rate as given). A
    /// background at half the capacity is not one at the rate given, which may be far
    /// past it.
    pub load: Option<Load>,
    /// Why its trial's witness does not hold beyond the doubts its updates carry
    /// themselves (a trial flagged limited by fwbench, a verdict mismatch, disturbed,
    /// too few packets; one dropped or failed): then none of its updates' stall, loss,
    /// time to effect or violations is stated, nor its commits fitted (`None`: it holds).
    pub trial: Option<TrialDoubt>,
    pub row: UpdateRecord,
}

/// A trial's background load (`event_load`, `--load`) in words, from its stored
/// parameters ([`load_of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Load {
    /// The share, of what and how sound that is: "50 % of 41000 pps (its capacity,
    /// found by search)", "50 % of at least 41000 pps (the sender's limit, not the
    /// gateway's)", "25 % of 40000 pps" (stated), "an unreadable load". A sentence's,
    /// a row's and a figure's: updates whose labels differ are never pooled.
    pub label: String,
    /// The same for a commit-latency series over installed sizes, each of which has a
    /// capacity of its own: without the figure ("50 % of each size's capacity (found
    /// by search)"); a stated rate's is its label.
    pub over_sizes: String,
    /// The same for a figure's id, stable from run to run: without a searched
    /// capacity's figure ("50 % of its capacity", the ids of before; a stated rate's is
    /// its label).
    pub id: String,
    /// Its capacity is not what it seems (the sender's limit, a search that did not
    /// settle or carries doubts, a figure not stored or not read, a load that does not
    /// read): its words are named in every sentence, row and figure title of its
    /// updates, not only where the run's loads differ.
    pub doubted: bool,
}

impl Load {
    /// A load whose words are the same alone and over sizes.
    fn same(words: String, doubted: bool) -> Load {
        Load {
            label: words.clone(),
            over_sizes: words.clone(),
            id: words,
            doubted,
        }
    }
}

/// Why a trial's updates' figures do not hold, beyond their own doubts.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialDoubt {
    /// The trial's status (never `ok`).
    pub status: Status,
    /// Its doubts the updates do not carry themselves, "kind: why; …", or its error.
    pub why: String,
}

/// The updates of `trials`, each trial's rows as `rows` returns them.
pub fn gather<E>(
    trials: &[Trial],
    mut rows: impl FnMut(i64) -> Result<Vec<UpdateRecord>, E>,
) -> Result<Vec<Update>, E> {
    let mut out = vec![];
    for t in trials {
        let engine = t.p.engine.clone().unwrap_or_else(|| "?".into());
        let unit = t.workload.unit();
        let set_elements = t.firewall.as_ref().map_or(0, |f| f.set_elements);
        let rate = t.p.event_rate();
        let load = load_of(&t.p);
        let stored = rows(t.id)?;
        let trial = trial_doubt(t, &stored);
        out.extend(stored.into_iter().map(|row| Update {
            trial_id: t.id,
            engine: engine.clone(),
            unit,
            set_elements,
            rate,
            load: load.clone(),
            trial: trial.clone(),
            row,
        }));
    }
    Ok(out)
}

/// Why the figures of `t`'s updates (`rows`) do not hold beyond their own doubts
/// (`None`: they hold). A flagged trial's doubts that its updates carry themselves
/// (`EventsSummary::doubts` counts them into the trial's: an overloaded update, one
/// that outlived the traffic, one that failed) judge those updates alone, each by its
/// own; any other (limited by fwbench, a verdict mismatch, disturbed, too few …) is
/// the whole trial's. A trial stored without its doubts, or dropped, unavailable or
/// failed: its error.
fn trial_doubt(t: &Trial, rows: &[UpdateRecord]) -> Option<TrialDoubt> {
    let error = || {
        t.row
            .error
            .clone()
            .unwrap_or_else(|| "no reason recorded".into())
    };
    let why = match t.status {
        Status::Ok => return None,
        Status::Flagged if t.stored.doubts.is_empty() => error(),
        Status::Flagged => {
            let whole: Vec<String> = (t.stored.doubts.iter())
                .filter(|d| !of_updates(d, rows))
                .map(doubt_words)
                .collect();
            if whole.is_empty() {
                return None;
            }
            whole.join("; ")
        }
        Status::Dropped | Status::Unavailable | Status::Failed => error(),
    };
    Some(TrialDoubt {
        status: t.status,
        why,
    })
}

/// Whether a trial's stored doubt `d` is one its updates (`rows`) carry themselves: an
/// update's doubt of that kind, alone ("why") or counted ("2 of 5 updates, e.g. why",
/// as `EventsSummary::doubts` words it); or an update that failed.
fn of_updates(d: &DoubtStored, rows: &[UpdateRecord]) -> bool {
    if d.kind == "update_failed" {
        return rows.iter().any(|r| r.error.is_some());
    }
    rows.iter().any(|r| {
        r.doubts
            .as_deref()
            .and_then(|t| serde_json::from_str::<Vec<serde_json::Value>>(t).ok())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|u| serde_json::from_value::<DoubtStored>(u).ok())
            .any(|u| {
                u.kind == d.kind
                    && (u.why == d.why || d.why.ends_with(&format!(", e.g. {}", u.why)))
            })
    })
}

/// A stored doubt in words, "kind: why", as the trial's reason gives it.
fn doubt_words(d: &DoubtStored) -> String {
    format!("{}: {}", doubt_kind_words(d), d.why)
}

/// A stored doubt's kind in words ("limited by fwbench"); one this report does not
/// know, as stored (escaped).
fn doubt_kind_words(d: &DoubtStored) -> String {
    serde_json::from_value::<results::DoubtKind>(d.kind.clone().into()).map_or_else(
        |_| results::shown(&d.kind.replace('_', " ")),
        |k| k.as_str().to_string(),
    )
}

/// Its `event_load` (`--load`) in words, from a trial's stored parameters ([`Load`]):
/// of a stated rate, "25 % of 40000 pps"; of a capacity found by a search before the
/// trial, its figure and how sound it is — "50 % of 41000 pps (its capacity, found by
/// search)", "50 % of at least 41000 pps (the sender's limit, not the gateway's)" (even
/// an unpaced flood passed), "(a capacity its search did not settle)", the search's
/// doubts by kind "(its search doubted: contradicting trials)"; one stored before the
/// capacity was, "of a
/// capacity found by search, its figure not stored"; a load or a part of it that does
/// not read says so, never "of its capacity". `None`: no load.
pub(crate) fn load_of(p: &StoredParams) -> Option<Load> {
    let l = p.event_load()?;
    let Some(fraction) = l.fraction.filter(|f| f.is_finite()) else {
        return Some(Load::same(
            "an unreadable load (its share not read)".into(),
            true,
        ));
    };
    let share = format!("{} %", num(fraction * 100.0));
    if let Some(r) = &l.of {
        let (of, doubted) = match (r.pps, r.bps) {
            (Some(p), _) => (format!("{} pps", num(p)), false),
            (None, Some(b)) => (format!("{} bit/s", num(b)), false),
            (None, None) => ("a stated rate not read".to_string(), true),
        };
        return Some(Load::same(format!("{share} of {of}"), doubted));
    }
    let Some(c) = &l.capacity else {
        return Some(Load::same(
            format!("{share} of a capacity found by search, its figure not stored"),
            true,
        ));
    };
    let Some(pps) = c.pps.filter(|p| p.is_finite()) else {
        return Some(Load::same(format!("{share} of a capacity not read"), true));
    };
    // What may not be believed of the capacity: none, "its capacity, found by search".
    let mut doubts: Vec<String> = vec![];
    let mut at_least = false;
    match &c.search {
        None => doubts.push("its capacity, how it was found not stored".into()),
        Some(s) => {
            match s.limited_by_sender {
                Some(false) => {}
                Some(true) => {
                    at_least = true;
                    doubts.push("the sender's limit, not the gateway's".into());
                }
                None => doubts.push("whether the sender limited its search not read".into()),
            }
            // Its lowest failing rate failed by fwbench (its sender, its sink): the
            // capacity is a lower bound of the gateway's too.
            if !at_least && s.fail_by_fwbench.is_some() {
                at_least = true;
                doubts.push("fwbench's limit, not the gateway's".into());
            }
            match s.converged {
                Some(true) => {}
                Some(false) => doubts.push("a capacity its search did not settle".into()),
                None => doubts.push("whether its search settled not read".into()),
            }
            // The search's doubts by kind (their reasons are the trial's, where it is
            // flagged for them), those said above left out.
            let mut kinds: Vec<String> = vec![];
            for d in &s.doubts {
                let said = s.converged == Some(false) && d.kind == "not_converged";
                let k = doubt_kind_words(d);
                if !said && !kinds.contains(&k) {
                    kinds.push(k);
                }
            }
            if !kinds.is_empty() {
                doubts.push(format!("its search doubted: {}", kinds.join(", ")));
            }
        }
    }
    let (least, least_over) = if at_least {
        ("at least ", ", at least")
    } else {
        ("", "")
    };
    Some(if doubts.is_empty() {
        Load {
            label: format!(
                "{share} of {} pps (its capacity, found by search)",
                num(pps)
            ),
            over_sizes: format!("{share} of each size's capacity (found by search)"),
            id: format!("{share} of its capacity"),
            doubted: false,
        }
    } else {
        let why = doubts.join("; ");
        Load {
            label: format!("{share} of {least}{} pps ({why})", num(pps)),
            over_sizes: format!("{share} of each size's capacity{least_over} ({why})"),
            id: format!("{share} of {least}its capacity ({why})"),
            doubted: true,
        }
    })
}

/// Per-trial metrics of the updates, for `compare` and the configurations: the
/// median `commit_ms` and `stall_ms` of the trial's committed updates of each kind, K,
/// installed size and method, as `update.KIND:K@INSTALLED.METHOD.commit_ms` (the
/// engine is in the configuration's key), and of reloads the must-drop packets that
/// passed them, summed (`….violations`); of a trial of two updates or more (a trace),
/// p50 and p99 of all its commits (`updates.p50.commit_ms`, `updates.p99.commit_ms`, nearest
/// rank).
/// Trial id → metric → value.
pub fn trial_metrics(updates: &[Update]) -> BTreeMap<i64, BTreeMap<String, f64>> {
    // Per trial and update kind: commits, stalls, violations.
    type Seen = (Vec<f64>, Vec<f64>, Option<u64>);
    let mut by: BTreeMap<(i64, String), Seen> = BTreeMap::new();
    for u in updates.iter().filter(|u| u.row.error.is_none()) {
        let r = &u.row;
        let e = by
            .entry((
                u.trial_id,
                format!("update.{}:{}@{}.{}", r.kind, r.k, r.installed, r.method),
            ))
            .or_default();
        e.0.push(r.commit_ms);
        // A stall only where the update's figures hold, over a background.
        if let Some(stall) = r.stall_ms.filter(|_| holds(u) && r.series.is_some()) {
            e.1.push(stall);
        }
        if let Some(n) = r.violations.filter(|_| holds(u)) {
            e.2 = Some(e.2.unwrap_or(0) + n);
        }
    }
    let mut out: BTreeMap<i64, BTreeMap<String, f64>> = BTreeMap::new();
    for ((trial, name), (commit, stall, violations)) in by {
        let m = out.entry(trial).or_default();
        if let Some(c) = median(commit) {
            m.insert(format!("{name}.commit_ms"), c);
        }
        if let Some(s) = median(stall) {
            m.insert(format!("{name}.stall_ms"), s);
        }
        if let Some(n) = violations {
            m.insert(format!("{name}.violations"), n as f64);
        }
    }
    // A trial of two committed updates or more (a replayed trace, a schedule): the
    // spread of all its commits, whatever their kinds and sizes — a trace's figure.
    let mut commits: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    for u in updates.iter().filter(|u| u.row.error.is_none()) {
        commits.entry(u.trial_id).or_default().push(u.row.commit_ms);
    }
    for (trial, c) in commits.into_iter().filter(|(_, c)| c.len() >= 2) {
        if let Some((p50, p99, _)) = quantiles(&c) {
            let m = out.entry(trial).or_default();
            m.insert("updates.p50.commit_ms".into(), p50);
            m.insert("updates.p99.commit_ms".into(), p99);
        }
    }
    out
}

/// What makes updates alike beyond what they did: the rate their event repeated at,
/// where their rules went and the background's `--load`. Commits at 1/s and at
/// 100/s, rules at the head and behind the established-accept rule, a background at
/// half the capacity and one at the rate given are never one sentence, row, line or
/// fit.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Alike {
    /// [`Update::rate`]'s bits (positive rates sort as their bits do; `None`: once).
    rate: Option<u64>,
    /// `UpdateRecord::place` (`None`: at the head).
    place: Option<String>,
    /// [`Update::load`]'s label ([`Load::over_sizes`] in a series over sizes).
    load: Option<String>,
    /// [`Load::doubted`] (of one label, one value).
    load_doubted: bool,
    /// [`Load::id`] (of one label, one value).
    load_id: Option<String>,
}

impl Alike {
    fn of(u: &Update) -> Alike {
        Alike {
            rate: u.rate.map(f64::to_bits),
            place: u.row.place.clone().filter(|p| p != EventPlace::Head.name()),
            load: u.load.as_ref().map(|l| l.label.clone()),
            load_doubted: u.load.as_ref().is_some_and(|l| l.doubted),
            load_id: u.load.as_ref().map(|l| l.id.clone()),
        }
    }

    /// [`Alike::of`] for a figure ([`pooled`]): its load without the capacity's figure
    /// ([`Load::id`]), so that engines whose searches found other capacities are drawn
    /// side by side (each line's note says its own).
    fn figure(u: &Update) -> Alike {
        Alike {
            load: u.load.as_ref().map(|l| l.id.clone()),
            ..Alike::of(u)
        }
    }

    /// [`Alike::of`] for a series over installed sizes ([`growth`]): its load without
    /// the capacity's figure, which each size has its own of.
    fn over_sizes(u: &Update) -> Alike {
        Alike {
            load: u.load.as_ref().map(|l| l.over_sizes.clone()),
            ..Alike::of(u)
        }
    }

    /// What of it `varies` names: "repeated at 100 updates/s, behind the rule accepting
    /// established flows, the background at 50 % of 41000 pps (its capacity, found by
    /// search)" (empty: nothing).
    fn words(&self, varies: &Varies) -> String {
        let mut w = vec![];
        if varies.rate {
            w.push(match self.rate {
                Some(r) => format!("repeated at {} updates/s", num(f64::from_bits(r))),
                None => "once".into(),
            });
        }
        if varies.place {
            w.push(
                match self.place.as_deref().map(|p| (p, p.parse::<EventPlace>())) {
                    None | Some((_, Ok(EventPlace::Head))) => "at the chain's head".into(),
                    Some((_, Ok(EventPlace::AfterEstablished))) => {
                        "behind the rule accepting established flows".into()
                    }
                    Some((_, Ok(EventPlace::AfterEstablishedCtDelete))) => {
                        "behind the rule accepting established flows, the marker's conntrack \
                         entries deleted"
                            .into()
                    }
                    // A place a newer fwbench stored, as stored (escaped).
                    Some((p, Err(_))) => format!("placed {}", results::shown(p)),
                },
            );
        }
        if varies.load {
            w.push(match &self.load {
                Some(l) => format!("the background at {l}"),
                None => "the background at the rate given".into(),
            });
        }
        w.join(", ")
    }

    /// Its parts other than the default, in words: "repeated at 2 updates/s" (empty:
    /// once, at the head, at the rate given).
    fn stated(&self) -> String {
        self.words(&Varies {
            rate: self.rate.is_some(),
            place: self.place.is_some(),
            load: self.load.is_some(),
        })
    }

    /// A figure id's part for it ("" where it is the default: the ids of before).
    fn id(&self) -> String {
        let mut id = String::new();
        if let Some(r) = self.rate {
            id += &format!("-rate-{}", num(f64::from_bits(r)));
        }
        if let Some(p) = &self.place {
            id += &format!("-{p}");
        }
        if let Some(l) = &self.load_id {
            id += &format!("-load-{l}");
        }
        // Letters, digits and dashes only (an id names an element and a file).
        let mut out = String::new();
        for c in id.chars() {
            match c {
                c if c.is_ascii_alphanumeric() => out.push(c),
                _ if out.ends_with('-') => {}
                _ => out.push('-'),
            }
        }
        let out = out.trim_end_matches('-');
        // A load's words can be long (its capacity's doubts): past [`ID_PART_MAX`], the
        // start and a hash of the whole, so that ids stay file names and stay apart.
        if out.len() <= ID_PART_MAX {
            return out.to_string();
        }
        let hash = out.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let head = out[..ID_PART_MAX - 9].trim_end_matches('-');
        format!("{head}-{:08x}", hash as u32)
    }
}

/// The longest [`Alike::id`] part (ASCII): a figure's id names its file.
const ID_PART_MAX: usize = 64;

/// Which of [`Alike`]'s parts take more than one value among updates of one kind, K
/// and size (whatever their engine and method, which are compared side by side):
/// those are named where they are said.
#[derive(Debug, Clone, Copy, Default)]
struct Varies {
    rate: bool,
    place: bool,
    load: bool,
}

/// (unit, kind, K, installed, the set elements beside): what [`Varies`] is judged over.
type Kin = (Unit, String, u32, u64, u64);

impl Varies {
    /// Of each kin of `keys`' groups.
    fn by<'a>(keys: impl IntoIterator<Item = &'a Key>) -> BTreeMap<Kin, Varies> {
        type Seen = (
            BTreeSet<Option<u64>>,
            BTreeSet<Option<String>>,
            BTreeSet<Option<String>>,
        );
        let mut seen: BTreeMap<Kin, Seen> = BTreeMap::new();
        for (unit, _, _, kind, k, installed, elements, alike) in keys {
            let e = seen
                .entry((*unit, kind.clone(), *k, *installed, *elements))
                .or_default();
            e.0.insert(alike.rate);
            e.1.insert(alike.place.clone());
            e.2.insert(alike.load.clone());
        }
        seen.into_iter()
            .map(|(kin, (rate, place, load))| {
                let v = Varies {
                    rate: rate.len() > 1,
                    place: place.len() > 1,
                    load: load.len() > 1,
                };
                (kin, v)
            })
            .collect()
    }

    /// The kin of `key` in `by` (none: nothing varies); a load whose capacity is not
    /// what it seems ([`Load::doubted`]) is named whether or not it varies.
    fn of(by: &BTreeMap<Kin, Varies>, key: &Key) -> Varies {
        let (unit, _, _, kind, k, installed, elements, alike) = key;
        let mut v = by
            .get(&(*unit, kind.clone(), *k, *installed, *elements))
            .copied()
            .unwrap_or_default();
        v.load |= alike.load_doubted;
        v
    }
}

/// (unit, engine, method, kind, K, installed, the set elements beside a rule update's
/// rules, the rest alike): the updates measured alike.
type Key = (Unit, String, String, String, u32, u64, u64, Alike);

/// The updates that committed (no error), by key. A trial's repeated updates of one
/// kind (an `--event-rate` trial, an envelope's step) grow or shrink the rule set one
/// after another: they count at the size the trial's first of them saw, not one
/// group per size it passed through (561 adds were 561 findings).
fn groups(updates: &[Update]) -> BTreeMap<Key, Vec<&Update>> {
    let committed = || updates.iter().filter(|u| u.row.error.is_none());
    let series = |u: &Update| {
        let r = &u.row;
        (
            u.trial_id,
            u.engine.clone(),
            r.method.clone(),
            r.kind.clone(),
            r.k,
        )
    };
    // (start, installed) of the earliest: deletions shrink, adds grow the set.
    // (trial, engine, method, kind, K) → its earliest update's (start, installed).
    type Series = (i64, String, String, String, u32);
    let mut first: BTreeMap<Series, (u64, u64)> = BTreeMap::new();
    for u in committed() {
        let at = (u.row.start_unix_ns, u.row.installed);
        let e = first.entry(series(u)).or_insert(at);
        *e = (*e).min(at);
    }
    let mut by: BTreeMap<Key, Vec<&Update>> = BTreeMap::new();
    for u in committed() {
        let r = &u.row;
        by.entry((
            u.unit,
            u.engine.clone(),
            r.method.clone(),
            r.kind.clone(),
            r.k,
            first[&series(u)].1,
            beside(u),
            Alike::of(u),
        ))
        .or_default()
        .push(u);
    }
    by
}

/// The set elements beside an update that counts rules (0 for one that counts
/// elements: its size is theirs).
fn beside(u: &Update) -> u64 {
    let rules = u
        .row
        .kind
        .parse()
        .map_or(true, |k: UpdateKind| k.counts() == "rules");
    if rules {
        u.set_elements
    } else {
        0
    }
}

/// [`doing`], and the set elements beside a rule update's rules where it had some and
/// what else `alike` says of it (its rate, place or load where those differ): "adding 1
/// rule to 2 (beside a set of 50000 elements)", "adding 1 rule to 20000 (repeated at
/// 100 updates/s)".
fn doing_beside(
    kind: &str,
    k: u32,
    installed: u64,
    elements: u64,
    alike: &str,
) -> (String, &'static str) {
    let (what, thing) = doing(kind, k, installed);
    let beside = (elements > 0).then(|| format!("beside a set of {elements} elements"));
    let said: Vec<String> = beside
        .into_iter()
        .chain((!alike.is_empty()).then(|| alike.to_string()))
        .collect();
    if said.is_empty() {
        (what, thing)
    } else {
        (format!("{what} ({})", said.join("; ")), thing)
    }
}

/// "adding 1 rule to 20000", as the CLI's events line says it ([`UpdateKind::doing`]);
/// the stored kind is text: an unknown one, from a newer fwbench, is named as stored.
fn doing(kind: &str, k: u32, installed: u64) -> (String, &'static str) {
    match kind.parse::<UpdateKind>() {
        Ok(kind) => kind.doing(k, installed),
        Err(_) => (
            format!("{kind} of {k} with {installed} installed"),
            "change",
        ),
    }
}

/// One sentence per engine, method, kind, K and installed size (and rate, place and
/// load, named where the run's updates differ in them): "adding 1 rule to
/// 20000 with nft by batch took 33 ms (median of 3); forwarding stalled 0 ms; 0
/// packets lost; the background's one-way delay in the update's window reached 0.05 ms;
/// the rule took effect after 19.9 ms". The stall is the longest of the group's, the
/// loss their sum where no two windows of a trial overlap (else the sum of their loss
/// counted once, or the largest per update for rows stored without it, said so:
/// [`Lost`]), the delay the highest (the window: 50 ms before the commit to 250 ms
/// after it, no baseline taken out), the time to effect the median of the marker
/// updates'; only of updates whose figures hold, and of trials whose witness holds (the
/// others counted, with the first's reason); updates that failed are counted after the
/// sentences.
pub fn findings(updates: &[Update]) -> Vec<String> {
    let mut out = vec![];
    let by = groups(updates);
    let kin = Varies::by(by.keys());
    for (key, rows) in by {
        let varies = Varies::of(&kin, &key);
        let (unit, engine, method, kind, k, installed, elements, alike) = key;
        let Some(commit) = median(rows.iter().map(|u| u.row.commit_ms)) else {
            continue;
        };
        let (what, thing) = doing_beside(&kind, k, installed, elements, &alike.words(&varies));
        // Only updates whose figures hold make the finding; the rest are counted
        // with the first one's reason (an empty window, an overloaded gateway, a
        // trial flagged …).
        let held: Vec<&Update> = rows.iter().copied().filter(|u| holds(u)).collect();
        let left = LeftOut::of(&rows);
        let measured = felt(&held);
        let felt = if held.is_empty() {
            format!("no stall or loss figure ({})", left.why())
        } else if measured.is_empty() {
            "no background traffic to disturb: no stall or loss figure".to_string()
                + &left.counted(rows.len())
        } else {
            let stall = measured
                .iter()
                .filter_map(|u| u.row.stall_ms)
                .fold(0.0, f64::max);
            // What the updates are credited with: the loss beyond each window's
            // baseline, summed only where no two windows of a trial overlap.
            let lost = Lost::of(&measured, updates);
            // The unit's words end with its loss: its note follows.
            let mut t = match lost {
                Lost::Sum(n)
                | Lost::Once {
                    n, at_least: false, ..
                } => unit.disturbance(&num(stall), measured.len() > 1, n),
                Lost::Once {
                    n, at_least: true, ..
                } => at_least(&unit.disturbance(&num(stall), measured.len() > 1, n)),
                Lost::PerUpdate { most, .. } => {
                    unit.disturbance(&num(stall), measured.len() > 1, most)
                }
            } + &lost.note();
            // A stall is a run of bins that lost and received none: a commit that held
            // the packets back and then let them all through shows as their delay only.
            let delay_us = delays(&measured).max().unwrap_or(0);
            if unit == Unit::Packets && delay_us > 0 {
                t += &format!(
                    "; the background's one-way delay in the update's window reached {} ms",
                    num(delay_us as f64 / 1e3)
                );
                // Of how many, where some updates' delays are no figures.
                let of = delays(&measured).count();
                if of < measured.len() {
                    t += &format!(
                        " (of the {of} of {} updates whose delays are figures: the others' \
                         two hosts' clocks could not relate them)",
                        measured.len()
                    );
                }
            }
            t += &left.counted(rows.len());
            t
        };
        let effects = held.iter().filter_map(|u| u.row.time_to_effect_ms);
        // Only the update carrying the marker has one: say of how many, where fewer
        // than the commits held.
        let carrying = held.iter().filter(|u| u.row.marker).count();
        let of = match (effects.clone().count(), carrying) {
            (n, _) if n == held.len() => String::new(),
            (1, 1) => " (the one update carrying the marker)".to_string(),
            (n, m) if n == m => format!(" (median of the {n} updates carrying the marker)"),
            (1, _) => " (one update's)".to_string(),
            (n, _) => format!(" (median of {n})"),
        };
        let effect = median(effects);
        // An expiry runs nothing when due: its commit is its elements' add, earlier.
        let took = if kind.parse().is_ok_and(UpdateKind::runs_nothing_when_due) {
            format!(
                "{what}{} (added with {engine} by {method} at the start of the traffic in {} ms, \
                 median of {})",
                unit.during(),
                num(commit),
                rows.len()
            )
        } else {
            format!(
                "{what} with {engine} by {method}{} took {} ms (median of {})",
                unit.during(),
                num(commit),
                rows.len()
            )
        };
        // Whether the marker's rule reached an established flow: a time to effect's
        // reading, so only of the updates whose figures hold.
        let records: Vec<&UpdateRecord> = held.iter().map(|u| &u.row).collect();
        out.push(format!(
            "{took}; {}{}{}.",
            felt,
            match effect {
                Some(t) => format!(
                    "; the {thing} took effect after {} ms{of}{}",
                    num(t),
                    hole(&records)
                ),
                None => hole(&records),
            },
            violations(&rows)
        ));
    }
    let failed: Vec<&Update> = updates.iter().filter(|u| u.row.error.is_some()).collect();
    if let Some(first) = failed.first() {
        out.push(format!(
            "{} of {} gateway updates failed or did not run (first: {} by {} with {}: {}).",
            failed.len(),
            updates.len(),
            first.row.kind,
            first.row.method,
            first.engine,
            first.row.error.as_deref().unwrap_or("")
        ));
    }
    out
}

/// (engine, method, kind, K, set elements beside): a kind of update of [`growth`].
type Base = (String, String, String, u32, u64);

/// Trial → (smallest installed, installed, commits, whether the background overloaded
/// its gateway): one series of [`growth`].
type SizedTrials = BTreeMap<i64, (u64, Vec<f64>, Vec<f64>, bool)>;

/// The trials of a series of [`growth`] left out, their witness not holding: trial →
/// its smallest installed size; their statuses; the first one's reason.
type LeftTrials = (BTreeMap<i64, u64>, BTreeSet<&'static str>, String);

/// Trials left out of a fit ([`LeftTrials`]) in words: "2 flagged trials left out:
/// limited by fwbench: …" (`None`: none); `at`, where the series is one of several
/// alike, says which.
fn left_trials(l: &LeftTrials, at: &str) -> Option<String> {
    let n = l.0.len();
    let at = if at.is_empty() {
        String::new()
    } else {
        format!(" {at}")
    };
    (n > 0).then(|| {
        format!(
            "{n} {} trial{}{at} left out: {}",
            l.1.iter().copied().collect::<Vec<_>>().join(" or "),
            if n == 1 { "" } else { "s" },
            l.2
        )
    })
}

/// Commit latency vs installed size (issue 39; kube-proxy's sync time grows
/// super-linearly with its Services, kubernetes#139513), per engine, method, kind, K,
/// the rate the event repeated at, where its rules went and the background's load,
/// where trials at three sizes or more hold it (and
/// where none does, though the kind's trials span three sizes, why not): each trial
/// one point, its smallest
/// installed size and its median commit (a trial of repeated adds grows its rule set
/// by K each time; the repetitions across trials are the unit). Linear or
/// superlinear by a parabola's curvature and its 95 % CI, with the evidence: the
/// largest size's commit against the line through the smaller ones. Only trials whose
/// witness holds ([`Update::trial`]): the others are counted, with the first's reason.
pub fn growth(updates: &[Update]) -> Vec<String> {
    // (engine, method, kind, K, set elements beside, the rest alike) → its trials:
    // rule updates beside sets of other sizes, or repeated at other rates (an
    // envelope's steps, which compete with each other for the CPUs), at other places
    // or beside another load, are not one series.
    let mut by: BTreeMap<(Base, Alike), SizedTrials> = BTreeMap::new();
    // The same → the trials left out (their witness does not hold): their smallest
    // sizes, their statuses and the first one's reason.
    let mut left: BTreeMap<(Base, Alike), LeftTrials> = BTreeMap::new();
    for u in updates.iter().filter(|u| u.row.error.is_none()) {
        let r = &u.row;
        let key = (
            (
                u.engine.clone(),
                r.method.clone(),
                r.kind.clone(),
                r.k,
                beside(u),
            ),
            Alike::over_sizes(u),
        );
        if let Some(d) = &u.trial {
            let l = left.entry(key).or_default();
            let size = l.0.entry(u.trial_id).or_insert(r.installed);
            *size = (*size).min(r.installed);
            l.1.insert(d.status.as_str());
            if l.2.is_empty() {
                l.2 = d.why.clone();
            }
            continue;
        }
        let t = by.entry(key).or_default().entry(u.trial_id).or_insert((
            r.installed,
            vec![],
            vec![],
            false,
        ));
        t.0 = t.0.min(r.installed);
        t.1.push(r.installed as f64);
        t.2.push(r.commit_ms);
        t.3 |= overloaded(r);
    }
    // Each series fitted; where none of a kind of update's was, though its trials
    // span three sizes or more, why not (never silence where a fit was asked for).
    let mut out = vec![];
    // A kind of update → (the sizes its trials started at, the rest alike of each,
    // how many trials; the sizes of those left out, and the first of them).
    type Spanned = (
        BTreeSet<u64>,
        BTreeSet<Alike>,
        usize,
        BTreeSet<u64>,
        Option<String>,
    );
    let mut sized: BTreeMap<Base, Spanned> = BTreeMap::new();
    let mut said: BTreeSet<Base> = BTreeSet::new();
    for ((base, alike), l) in &left {
        let e = sized.entry(base.clone()).or_default();
        e.3.extend(l.0.values());
        if e.4.is_none() {
            e.4 = left_trials(l, &alike.stated());
        }
    }
    for ((base, alike), trials) in by {
        let e = sized.entry(base.clone()).or_default();
        e.0.extend(trials.values().map(|t| t.0));
        e.1.insert(alike.clone());
        e.2 += trials.len();
        let (engine, method, kind, k, _) = &base;
        let gone = left.get(&(base.clone(), alike.clone()));
        if let Some(s) = fit_growth((engine, method, kind, *k), &alike, &trials, gone) {
            said.insert(base);
            out.push(s);
        }
    }
    for (base, (sizes, alikes, n, left_sizes, left_out)) in sized {
        let all: BTreeSet<u64> = sizes.union(&left_sizes).copied().collect();
        if all.len() < 3 || said.contains(&base) {
            continue;
        }
        let (engine, method, kind, k, _) = base;
        let unit = kind.parse().map_or("rules", UpdateKind::counts);
        let rates: BTreeSet<Option<u64>> = alikes.iter().map(|a| a.rate).collect();
        let why = if let Some(gone) = left_out.filter(|_| sizes.len() < 3) {
            let rest = match n {
                0 => "no other trial remains".to_string(),
                _ => format!(
                    "{n} other trial{} at {} size{} remain{}, too few for a curvature's CI",
                    if n == 1 { "" } else { "s" },
                    sizes.len(),
                    if sizes.len() == 1 { "" } else { "s" },
                    if n == 1 { "s" } else { "" }
                ),
            };
            format!("{gone}; {rest}")
        } else if rates.len() > 1 {
            // Positive rates: their bits sort as they do; `None` (once) first.
            let at: Vec<f64> = rates.iter().flatten().map(|r| f64::from_bits(*r)).collect();
            let range = match at.as_slice() {
                [one] => format!("{} updates/s", num(*one)),
                [lo, .., hi] => format!("{}–{} updates/s", num(*lo), num(*hi)),
                [] => String::new(),
            };
            let once = if rates.contains(&None) {
                "once and "
            } else {
                ""
            };
            format!(
                "its trials ran their updates {once}at {} rate{} ({range}), and none at \
                 enough sizes for a curvature's CI (a series is one rate: commits beside \
                 other rates compete with other work)",
                at.len(),
                if at.len() == 1 { "" } else { "s" }
            )
        } else if alikes.len() > 1 {
            let each: Vec<String> = alikes
                .iter()
                .map(|a| match a.stated() {
                    w if w.is_empty() => "at the head, the background at the rate given".into(),
                    w => w,
                })
                .collect();
            format!(
                "its trials differ in where their rules went or the background's load \
                 ({}), and none at enough sizes for a curvature's CI (a series is one \
                 place and one load)",
                each.join("; ")
            )
        } else {
            format!(
                "{n} trials at {} sizes are too few for a curvature's CI (a parabola needs \
                 four points or more)",
                sizes.len()
            )
        };
        out.push(format!(
            "Commit latency of {} with {engine} by {method} vs installed {unit}: not fitted — \
             {why}.",
            kind_words(&kind, k)
        ));
    }
    out
}

/// One series of [`growth`] — (engine, method, kind, K), the rate its event repeated
/// at, where its rules went and the background's load, its trials, and those left out
/// (counted in its head) — in a sentence; `None` where it says nothing (fewer than three
/// sizes, no curvature's CI).
fn fit_growth(
    (engine, method, kind, k): (&str, &str, &str, u32),
    alike: &Alike,
    trials: &SizedTrials,
    left: Option<&LeftTrials>,
) -> Option<String> {
    // Each trial at the median size its updates saw (561 adds from 1 000 rules
    // saw 1 000 to 1 560), labelled by the size it started at.
    let points: Vec<(f64, f64, f64)> = trials
        .values()
        .filter_map(|(start, n, c, _)| {
            Some((
                *start as f64,
                median(n.iter().copied())?,
                median(c.iter().copied())?,
            ))
        })
        .collect();
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.1, p.2)).collect();
    let q = crate::stats::fit_quadratic(&xy)?;
    let mut sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    if sizes.len() < 3 {
        return None;
    }
    let (lo, hi) = (sizes[0], sizes[sizes.len() - 1]);
    let what = kind_words(kind, k);
    // What the size counts: a set's elements, or rules.
    let unit = kind.parse().map_or("rules", UpdateKind::counts);
    let load = under_load(trials, unit);
    let at = match alike.stated() {
        w if w.is_empty() => w,
        w => format!(" {w}"),
    };
    let gone = left
        .and_then(|l| left_trials(l, ""))
        .map(|l| format!("; {l}"))
        .unwrap_or_default();
    let head = format!(
        "Commit latency of {what}{at} with {engine} by {method} over {}–{} {unit} ({} \
         trials at {} sizes{gone})",
        num(lo),
        num(hi),
        points.len(),
        sizes.len()
    );
    let h = q.c_ci95?;
    let largest: Vec<&(f64, f64, f64)> = points.iter().filter(|p| p.0 == hi).collect();
    let at_hi = median(largest.iter().map(|p| p.2));
    let x_hi = median(largest.iter().map(|p| p.1)).unwrap_or(hi);
    let smaller: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0 < hi)
        .map(|p| (p.1, p.2))
        .collect();
    if q.superlinear() {
        let evidence = match (crate::stats::fit_line(&smaller), at_hi) {
            (Some(l), Some(m)) => {
                let (pred, ci) = l.at(x_hi);
                format!(
                    "; at {} {unit} it took {} ms (the median of its trials' medians) \
                     where the line through the smaller sizes predicts {} ms",
                    num(hi),
                    num(m),
                    mean_ci(pred, ci)
                )
            }
            _ => String::new(),
        };
        // The curvature in what it adds at the largest size (c·n², ms).
        Some(format!(
            "{head} grows faster than the number of {unit}: superlinear (the curvature adds \
             {} ms at {} {unit}, 95 % CI above 0){evidence}{}{load}.",
            mean_ci(q.c * hi * hi, Some(h * hi * hi)),
            num(hi),
            knee(&points, unit)
        ))
    } else if let Some(l) = crate::stats::fit_line(&xy) {
        let curve = if q.c + h < 0.0 {
            "its curvature's 95 % CI lies below 0: sublinear, a fixed cost the larger \
             sets amortise"
        } else {
            "its curvature's 95 % CI includes 0"
        };
        // A commit cannot take less than nothing: a line whose intercept lies
        // below 0 (CI and all) does not describe the small sets.
        let negative = match l.a_ci95 {
            Some(ci) if l.a + ci < 0.0 => format!(
                " — FLAGGED: its intercept, {} ms, is below 0, which no commit can be: \
                 the line is no model of sizes below {} {unit}",
                mean_ci(l.a, Some(ci)),
                num(lo)
            ),
            _ => String::new(),
        };
        // The slope with its CI; one whose CI includes 0 is no growth stated.
        let slope = match l.b_ci95 {
            Some(ci) if (l.b - ci) * (l.b + ci) <= 0.0 => {
                return Some(format!(
                    "{head}: no measurable growth ({} ms per 1 000 {unit}, the CI \
                     includes 0){load}.",
                    mean_ci(l.b * 1000.0, Some(ci * 1000.0))
                ));
            }
            Some(ci) => mean_ci(l.b * 1000.0, Some(ci * 1000.0)),
            None => num(l.b * 1000.0),
        };
        // The intercept with its CI: one below 0 whose CI reaches above it is said
        // as such, never a bare negative time.
        let at_zero = mean_ci(l.a, l.a_ci95);
        Some(format!(
            "{head} grows linearly: {at_zero} ms + {slope} ms per 1 000 {unit} \
             ({curve}){negative}{load}.",
        ))
    } else {
        None
    }
}

/// An update kind in words for a heading ([`UpdateKind::words`]; an unknown one, from a
/// newer fwbench, as stored).
fn kind_words(kind: &str, k: u32) -> String {
    kind.parse().map_or_else(
        |_| format!("{kind} of {k}"),
        |kind: UpdateKind| kind.words(k),
    )
}

/// Adds behind the established-accept rule: whose marker never changed fate, the block
/// did not reach the existing flow — said, not left as a missing figure; whose marker's
/// conntrack entries the update deleted and that took effect, that is how it reached it.
fn hole(rows: &[&UpdateRecord]) -> String {
    let placed = |place: EventPlace| {
        move |r: &&&UpdateRecord| {
            r.marker && r.place.as_deref().and_then(|p| p.parse().ok()) == Some(place)
        }
    };
    let behind = placed(EventPlace::AfterEstablished);
    let deleted = placed(EventPlace::AfterEstablishedCtDelete);
    if rows.iter().any(|r| behind(&r))
        && rows
            .iter()
            .filter(behind)
            .all(|r| r.time_to_effect_ms.is_none())
    {
        "; the rule never reached the marker's established flow: it sits behind the rule \
         accepting established flows, so an existing connection keeps passing until its \
         conntrack entry goes"
            .into()
    } else if rows.iter().any(|r| deleted(&r)) {
        let (reached, kept) = rows
            .iter()
            .filter(deleted)
            .partition::<Vec<&&UpdateRecord>, _>(|r| r.time_to_effect_ms.is_some());
        match (reached.len(), kept.len()) {
            (_, 0) => "; behind the rule accepting established flows, it reached the marker's \
                       established flow only because the update deleted the flow's conntrack \
                       entries (conntrack -D)"
                .into(),
            (r, k) => format!(
                "; the update deleted the marker flow's conntrack entries (conntrack -D), yet \
                 in {k} of {} updates its packets kept passing: a reply in flight, new to the \
                 chain and accepted, made a new entry the flow's packets are replies of",
                r + k
            ),
        }
    } else {
        String::new()
    }
}

/// Where a superlinear commit latency bends (`points`: each trial's starting size,
/// median size and median commit), in words: "; the knee at about 12 000 rules (95 %
/// interval 10 000–15 000 over 1 000 bootstrap resamples of the trials)" — the two-line
/// fit of `stats::knee_with_interval` over the sizes' trials — or why none is stated
/// (fewer than four sizes; a curve no two lines fit fourfold better than one).
fn knee(points: &[(f64, f64, f64)], unit: &str) -> String {
    // Size → (median sizes seen, commits), one of each per trial.
    let mut by: BTreeMap<u64, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for &(start, seen, commit) in points {
        let g = by.entry(start as u64).or_default();
        g.0.push(seen);
        g.1.push(commit);
    }
    if by.len() < 4 {
        return format!("; no knee stated: {} sizes (a knee needs 4)", by.len());
    }
    let groups: Vec<(f64, Vec<f64>)> = by
        .into_values()
        .filter_map(|(seen, commits)| Some((median(seen)?, commits)))
        .collect();
    match knee_with_interval(&groups) {
        Some(k) => {
            let over = match k.basis {
                KneeBasis::Bootstrap { resamples, .. } => {
                    format!("over {resamples} bootstrap resamples of the trials")
                }
                KneeBasis::Bracket => {
                    "the measured sizes around it (one trial at some size)".into()
                }
            };
            format!(
                "; the knee at about {} {unit} (95 % interval {}–{}, {over})",
                num(k.rules),
                num(k.lo),
                num(k.hi)
            )
        }
        None => "; no knee: no two lines fit it four times better than one".into(),
    }
}

/// Reloads' violations in words: "; 251 must-drop packets passed (5 of 5 reloads,
/// the widest window 3 ms)", "; no must-drop packet passed (5 reloads)"; empty for
/// other updates. A reload whose probe was too coarse counts, with its flag, among the
/// ones left out above — not as one that let none through.
fn violations(rows: &[&Update]) -> String {
    let counted: Vec<&UpdateRecord> = rows
        .iter()
        .filter(|u| u.row.violations.is_some() && holds(u))
        .map(|u| &u.row)
        .collect();
    if counted.is_empty() {
        return String::new();
    }
    let passed: u64 = counted.iter().filter_map(|r| r.violations).sum();
    let leaky = counted.iter().filter(|r| r.violations > Some(0)).count();
    if passed == 0 {
        return format!("; no must-drop packet passed ({} reloads)", counted.len());
    }
    let widest = counted
        .iter()
        .filter_map(|r| r.violation_window_ms)
        .fold(0.0, f64::max);
    format!(
        "; {passed} must-drop packets passed ({leaky} of {} reloads, the widest window {} ms)",
        counted.len(),
        num(widest)
    )
}

/// The doubts over a stored update's figures, each "kind: why" (none: they hold).
pub fn doubts(r: &UpdateRecord) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Doubt {
        kind: String,
        why: String,
    }
    let Some(text) = r.doubts.as_deref() else {
        return vec![];
    };
    match serde_json::from_str::<Vec<Doubt>>(text) {
        Ok(d) => d
            .into_iter()
            .map(|d| format!("{}: {}", d.kind.replace('_', " "), d.why))
            .collect(),
        Err(e) => vec![format!("unreadable doubts ({e})")],
    }
}

/// An update's figures hold: it ran, nothing doubts them and its trial's witness holds
/// ([`Update::trial`]). A stall it holds may still be absent: a trial without
/// background traffic (its time to effect holds).
fn holds(u: &Update) -> bool {
    u.row.error.is_none() && u.row.doubts.is_none() && u.trial.is_none()
}

/// The updates of a group whose figures do not hold ([`holds`]), counted with the
/// first one's reason: those their own doubts withhold, and those of trials whose
/// witness does not hold.
struct LeftOut {
    own: usize,
    own_why: String,
    trial: usize,
    /// The status words of those trials ("flagged", "dropped" …).
    statuses: BTreeSet<&'static str>,
    trial_why: String,
}

impl LeftOut {
    fn of(rows: &[&Update]) -> LeftOut {
        let own: Vec<&&Update> = rows.iter().filter(|u| u.row.doubts.is_some()).collect();
        let trial: Vec<&TrialDoubt> = rows
            .iter()
            .filter(|u| u.row.doubts.is_none())
            .filter_map(|u| u.trial.as_ref())
            .collect();
        LeftOut {
            own: own.len(),
            own_why: own
                .iter()
                .find_map(|u| doubts(&u.row).into_iter().next())
                .unwrap_or_default(),
            trial: trial.len(),
            statuses: trial.iter().map(|t| t.status.as_str()).collect(),
            trial_why: trial.first().map(|t| t.why.clone()).unwrap_or_default(),
        }
    }

    /// "2 updates of flagged trials left out: limited by fwbench: …" (`None`: none).
    fn of_trials(&self) -> Option<String> {
        (self.trial > 0).then(|| {
            format!(
                "{} update{} of {} trials left out: {}",
                self.trial,
                if self.trial == 1 { "" } else { "s" },
                self.statuses
                    .iter()
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" or "),
                self.trial_why
            )
        })
    }

    /// Why no update of the group holds: the first own reason, those of the trials.
    fn why(&self) -> String {
        let own = (self.own > 0).then(|| self.own_why.clone());
        own.into_iter()
            .chain(self.of_trials())
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Where some of the group's `n` hold, those left out: " (1 of 2 updates left out:
    /// overloaded: …)", " (2 updates of flagged trials left out: …)"; "" for none.
    fn counted(&self, n: usize) -> String {
        let own = (self.own > 0)
            .then(|| format!("{} of {n} updates left out: {}", self.own, self.own_why));
        let all: Vec<String> = own.into_iter().chain(self.of_trials()).collect();
        if all.is_empty() {
            String::new()
        } else {
            format!(" ({})", all.join("; "))
        }
    }
}

/// Whether the background overloaded the gateway before `r` (its `overloaded` doubt):
/// its commit then competed with a saturated data path.
fn overloaded(r: &UpdateRecord) -> bool {
    // Each doubt read alone: one of a kind this report does not know hides no other.
    r.doubts
        .as_deref()
        .and_then(|t| serde_json::from_str::<Vec<serde_json::Value>>(t).ok())
        .is_some_and(|d| {
            d.into_iter()
                .filter_map(|d| serde_json::from_value::<results::Doubt>(d).ok())
                .any(|d| d.kind == results::DoubtKind::Overloaded)
        })
}

/// What a commit-latency fit says of the load its commits ran under: nothing where no
/// trial's background overloaded its gateway; so where every one did; FLAGGED where
/// some did, as the fit then mixes commits beside a saturated data path with commits
/// beside one that kept up — by size: those where every trial was overloaded, and
/// those where some were.
fn under_load(trials: &SizedTrials, unit: &str) -> String {
    // Size → (trials, overloaded trials).
    let mut by: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    for t in trials.values() {
        let e = by.entry(t.0).or_default();
        e.0 += 1;
        e.1 += usize::from(t.3);
    }
    let list = |keep: &dyn Fn(&(usize, usize)) -> bool| {
        by.iter()
            .filter(|(_, c)| keep(c))
            .map(|(n, _)| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (all, some) = (list(&|c| c.1 == c.0), list(&|c| c.1 > 0 && c.1 < c.0));
    if all.is_empty() && some.is_empty() {
        return String::new();
    }
    if by.values().all(|c| c.1 == c.0) {
        return " — in every trial the background overloaded the gateway (flagged): these \
                are commits beside a saturated data path"
            .into();
    }
    let at = match (all.is_empty(), some.is_empty()) {
        (false, true) => format!("at {all} {unit}"),
        (true, false) => format!("in some trials at {some} {unit}"),
        _ => format!("at {all} {unit}, and in some trials at {some}"),
    };
    format!(
        " — FLAGGED: the background overloaded the gateway {at} (those trials flagged), \
         not in the others: the fit mixes commits beside a saturated data path, which \
         compete with it for the CPUs, with commits beside one that kept up"
    )
}

/// The background's largest delays in the windows of `updates`, of those whose delays
/// are figures (not of a flow between two hosts whose clocks could not relate them:
/// `no_delays`, stored 0).
fn delays<'a>(updates: &'a [&Update]) -> impl Iterator<Item = u64> + 'a {
    updates
        .iter()
        .filter(|u| u.row.no_delays.is_none())
        .map(|u| u.row.owd_max_us)
}

/// Of the updates whose figures hold, those with a stall figure: the background's.
/// Without a series there was no background (rows stored before fwbench said so
/// carry a stall of 0 there: not a figure).
fn felt<'a>(held: &[&'a Update]) -> Vec<&'a Update> {
    held.iter()
        .copied()
        .filter(|u| u.row.stall_ms.is_some() && u.row.series.is_some())
        .collect()
}

/// What the loss of a group's updates whose figures hold ([`felt`]) adds up to.
#[derive(Debug, Clone, PartialEq)]
enum Lost {
    /// Their sum (each update's `lost_beyond_baseline`, else `lost`): no two windows of
    /// one trial overlap, so no packet is counted twice.
    Sum(u64),
    /// Their sum where two windows of one trial overlap, each lost packet counted once:
    /// every update of those trials carries its `lost_once` (fwbench counted each
    /// window's loss beyond the baseline only over the background's bins no earlier
    /// update's window held), the other trials' updates their credited loss as in
    /// [`Lost::Sum`].
    Once {
        n: u64,
        /// An update of one of those trials that is not of this figure (its figures do
        /// not hold, or it is of another group) has a window that started no later
        /// than one of the figure's and overlaps it: the bins it held first are in no
        /// update's share here, so `n` is a lower bound.
        at_least: bool,
        /// Every update of the figure was reckoned against a baseline (one of a trial
        /// whose windows do not overlap may have had none: its whole loss counts).
        baselines: bool,
    },
    /// Not summed: two windows of one trial overlap (above 3–4 updates/s a 300-ms
    /// window holds the next update's start), or a trial's windows cannot be placed in
    /// time, and more than one of its updates lost packets, so a sum would count the
    /// same lost packets two or more times. The stored
    /// rows cannot give their union soundly: each window's loss beyond the baseline is
    /// reckoned against a baseline (the trial's quiet window, or the 50 ms before that
    /// update) whose loss rate is not stored, and a bin of a later window that straddles
    /// an earlier window's end cannot be split. The largest per-update figure instead,
    /// where an update of those trials has no `lost_once` (stored before fwbench
    /// counted it), or a window cannot be placed.
    PerUpdate {
        most: u64,
        /// Why not summed: "windows overlap: per-update loss, not summed".
        why: &'static str,
    },
}

impl Lost {
    /// Of `measured` (a group's updates whose figures hold, [`felt`]), among `all` the
    /// updates of the run (which holds their trials' others).
    fn of(measured: &[&Update], all: &[Update]) -> Lost {
        let credited = |u: &Update| u.row.lost_beyond_baseline.unwrap_or(u.row.lost);
        let mut by_trial: BTreeMap<i64, Vec<&Update>> = BTreeMap::new();
        for u in measured {
            by_trial.entry(u.trial_id).or_default().push(u);
        }
        let mut why = None;
        let mut unplaced = false;
        // The trials whose windows overlap, where more than one update lost packets.
        let mut overlapping: BTreeSet<i64> = BTreeSet::new();
        // A trial where at most one update lost anything counts nothing twice — by what
        // each window lost, not what it is credited with: a window overlapping another's
        // stall measures its baseline there, and may be credited 0 of packets it lost.
        let twice = |us: &&Vec<&Update>| us.iter().filter(|u| u.row.lost > 0).count() > 1;
        for (trial, us) in by_trial.iter().filter(|(_, us)| twice(us)) {
            let windows: Vec<Option<(i128, i128)>> = us.iter().map(|u| window_ns(u)).collect();
            let Some(mut placed) = windows.iter().copied().collect::<Option<Vec<_>>>() else {
                unplaced = true;
                why = why.or(Some(
                    "windows not placed in time (a start not stored): per-update loss, not \
                     summed",
                ));
                continue;
            };
            placed.sort_unstable();
            let mut end = i128::MIN;
            for (from, to) in placed {
                if from < end {
                    why = Some("windows overlap: per-update loss, not summed");
                    overlapping.insert(*trial);
                }
                end = end.max(to);
            }
        }
        let Some(why) = why else {
            return Lost::Sum(measured.iter().map(|u| credited(u)).sum());
        };
        let of_overlapping = |u: &&&Update| overlapping.contains(&u.trial_id);
        let once: Option<u64> = measured
            .iter()
            .map(|u| {
                if overlapping.contains(&u.trial_id) {
                    u.row.lost_once
                } else {
                    Some(credited(u))
                }
            })
            .sum();
        match once {
            Some(n) if !unplaced => Lost::Once {
                n,
                baselines: measured
                    .iter()
                    .all(|u| u.row.lost_beyond_baseline.is_some()),
                at_least: measured
                    .iter()
                    .filter(of_overlapping)
                    .any(|m| held_first_by_another(m, measured, all)),
            },
            _ => Lost::PerUpdate {
                most: measured.iter().map(|u| credited(u)).max().unwrap_or(0),
                why,
            },
        }
    }

    /// What follows the unit's words of the loss: " beyond the baseline (windows
    /// overlap: …)" (empty for a plain sum).
    fn note(&self) -> String {
        match self {
            Lost::Sum(_) => String::new(),
            Lost::Once {
                at_least,
                baselines,
                ..
            } => format!(
                " beyond the baseline{} (windows overlap: each lost packet counted once, in the \
                 earliest window holding it{})",
                if *baselines {
                    ""
                } else {
                    " where one was taken"
                },
                if *at_least {
                    "; an update of the same trial left out of this figure held some of these \
                     windows first"
                } else {
                    ""
                }
            ),
            Lost::PerUpdate { why, .. } => format!(" in one update's window at most ({why})"),
        }
    }
}

/// Whether an update of `m`'s trial outside `measured` — one that ran (no error, a
/// start) — has a window starting no later than `m`'s that overlaps it: fwbench gave the
/// bins both hold to the earlier (at the same start, to the one it reported first, which
/// the stored rows do not tell), so `m`'s `lost_once` lacks them and no update of
/// `measured` counts them.
fn held_first_by_another(m: &Update, measured: &[&Update], all: &[Update]) -> bool {
    let Some((from, _)) = window_ns(m) else {
        return false;
    };
    all.iter()
        .filter(|o| o.trial_id == m.trial_id && !measured.iter().any(|u| std::ptr::eq(*u, *o)))
        .filter(|o| o.row.error.is_none() && o.row.start_unix_ns > 0)
        .filter(|o| o.row.start_unix_ns <= m.row.start_unix_ns)
        .filter_map(window_ns)
        .any(|(_, to)| to > from)
}

/// The unit's words of a disturbance (which end with the loss, "…; 40 packets lost")
/// with the loss a lower bound: "…; at least 40 packets lost".
fn at_least(said: &str) -> String {
    match said.rfind("; ") {
        Some(i) => format!("{}; at least {}", &said[..i], &said[i + 2..]),
        None => format!("at least {said}"),
    }
}

/// The window an update's figures were counted over, [from, to) in ns since the epoch
/// (`None`: its start not stored, 0 — fwbench counts no window for it): its series'
/// bins (their starts are `start_unix_ns` plus their ms, the last one as wide as the
/// one before it, ending no later than `AFTER_NS` after the commit: fwbench's last bin
/// may start where its window ends), else the CLI's window (`events::BEFORE_NS` before the start to
/// `AFTER_NS` after the commit: [`WINDOW_BEFORE_MS`], [`WINDOW_AFTER_MS`]).
fn window_ns(u: &Update) -> Option<(i128, i128)> {
    let r = &u.row;
    if r.start_unix_ns == 0 {
        return None;
    }
    let start = i128::from(r.start_unix_ns);
    // A figure past any clock (a corrupt row) saturates, never overflows.
    let at = |ms: f64| start.saturating_add((ms * 1e6).round() as i128);
    let from_series = r.series.as_deref().and_then(bins).and_then(|b| {
        let width = match b.as_slice() {
            [.., a, z] => z[0] - a[0],
            _ => 1.0,
        };
        Some((at(b.first()?[0]), at(b.last()?[0] + width)))
    });
    // fwbench's window ends AFTER_NS after the commit, before its last bin does where
    // that bin starts at the end (it counts nothing there).
    let end = at(r.commit_ms + WINDOW_AFTER_MS);
    Some(from_series.map_or((at(-WINDOW_BEFORE_MS), end), |(a, z)| (a, z.min(end))))
}

/// An update's window starts this long before its commit's start (fwbench's
/// `events::BEFORE_NS`) …
const WINDOW_BEFORE_MS: f64 = 50.0;
/// … and ends this long after its commit returned (`events::AFTER_NS`).
const WINDOW_AFTER_MS: f64 = 250.0;

/// Whether `u`'s background around it may be drawn as a line and its stall shaded:
/// its figures hold and its stall figure was not withheld (an overloaded gateway's
/// gaps, an empty window) — what the table and the findings state of it.
fn drawn(u: &Update) -> bool {
    holds(u) && u.row.stall_ms.is_some()
}

/// `u`'s bins with their delays NaN where they are no figures (`no_delays`: a flow
/// between two hosts whose clocks could not relate them, stored 0): drawn as none.
fn delays_or_none(mut b: Vec<[f64; 4]>, u: &Update) -> Vec<[f64; 4]> {
    if u.row.no_delays.is_some() {
        b.iter_mut().for_each(|x| x[3] = f64::NAN);
    }
    b
}

/// A stored `series`: `[[ms, received, lost, owd_us], …]` (ms from the commit's start).
fn bins(series: &str) -> Option<Vec<[f64; 4]>> {
    serde_json::from_str(series).ok()
}

/// One bin of the background around updates, combined over several updates bin by
/// bin (their mean or median): ms from the commit's start, received, lost, and the
/// delay in ms over the updates whose bin received something (none: no update did).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bin {
    ms: f64,
    received: f64,
    lost: f64,
    delay_ms: Option<f64>,
}

/// The arithmetic mean (`None` for no values).
fn mean_of(v: Vec<f64>) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// `windows` combined bin by bin with `how` (mean or median) over the bins all of them
/// have.
fn combine(windows: &[Vec<[f64; 4]>], how: fn(Vec<f64>) -> Option<f64>) -> Vec<Bin> {
    let n = windows.iter().map(Vec::len).min().unwrap_or(0);
    let at = |j: usize, f: &dyn Fn(&[f64; 4]) -> Option<f64>| {
        how(windows.iter().filter_map(|w| f(&w[j])).collect())
    };
    (0..n)
        .filter_map(|j| {
            Some(Bin {
                ms: at(j, &|b| Some(b[0]))?,
                received: at(j, &|b| Some(b[1]))?,
                lost: at(j, &|b| Some(b[2]))?,
                // A bin that received nothing has no delay (not 0), nor one whose delays
                // are no figures (NaN: [`delays_or_none`]).
                delay_ms: at(j, &|b| {
                    (b[1] > 0.0 && b[3].is_finite()).then_some(b[3] / 1000.0)
                }),
            })
        })
        .collect()
}

/// A line of `bins`: received per bin, or their delay where there is one.
fn line(name: &str, bins: &[Bin], delay: bool) -> Series {
    Series {
        name: name.into(),
        points: bins
            .iter()
            .filter_map(|b| {
                Some(Point {
                    x: b.ms,
                    y: if delay { b.delay_ms? } else { b.received },
                    ci95: None,
                })
            })
            .collect(),
        fit: false,
    }
}

/// Where forwarding stalled in `bins`: the longest run of bins that lost and received
/// nothing, as (first bin's start, last bin's end) in ms (`None`: no such bin).
fn stall_span(bins: &[Bin]) -> Option<(f64, f64)> {
    let width = match bins {
        [a, b, ..] => b.ms - a.ms,
        _ => 1.0,
    };
    let mut best: Option<(f64, f64)> = None;
    let mut run: Option<(f64, f64)> = None;
    for b in bins {
        if b.received > 0.0 || b.lost == 0.0 {
            run = None;
            continue;
        }
        let (from, to) = (run.map_or(b.ms, |r| r.0), b.ms + width);
        run = Some((from, to));
        if best.is_none_or(|(f, t)| to - from > t - f) {
            best = run;
        }
    }
    best
}

/// The shaded stall of flows' packets in `bins` ("stall 2 ms", with `whose` line when
/// there are several); other units' stall is a round trip, not a place in time.
fn stall(unit: Unit, bins: &[Bin], whose: Option<&str>) -> Option<Span> {
    if unit != Unit::Packets {
        return None;
    }
    let (from, to) = stall_span(bins)?;
    let whose = whose.map(|w| format!(" ({w})")).unwrap_or_default();
    Some(Span {
        from,
        to,
        text: format!("stall {} ms{whose}", num(to - from)),
    })
}

/// Where must-drop packets passed, shaded on the timeline (ms from the commit's start):
/// from the median start of the reloads' violation windows to that plus their median
/// length, labelled with how many passed in how many of the reloads. Only reloads
/// whose figures hold and that let some through; `None` when none did.
fn violation_span<'a>(
    rows: impl IntoIterator<Item = &'a Update>,
    whose: Option<&str>,
) -> Option<Span> {
    let rows: Vec<&UpdateRecord> = rows
        .into_iter()
        .filter(|u| u.row.violations.is_some() && holds(u))
        .map(|u| &u.row)
        .collect();
    let leaky: Vec<&&UpdateRecord> = rows.iter().filter(|r| r.violations > Some(0)).collect();
    let from = median(leaky.iter().filter_map(|r| r.violation_from_ms))?;
    let len = median(leaky.iter().filter_map(|r| r.violation_window_ms)).unwrap_or(0.0);
    let passed: u64 = leaky.iter().filter_map(|r| r.violations).sum();
    let whose = whose.map(|w| format!(" ({w})")).unwrap_or_default();
    Some(Span {
        from,
        to: from + len.max(1.0),
        text: format!(
            "must-drop passed: {passed} in {} of {} reloads{whose}",
            leaky.len(),
            rows.len()
        ),
    })
}

/// The commit, shaded from its start (0) to its end (`commit` ms), labelled `text`.
fn commit_span(commit: f64, text: String) -> Span {
    Span {
        from: 0.0,
        to: commit.max(0.0),
        text,
    }
}

/// The figures of gateway updates: a trial's repeated updates of one kind and K (an
/// `--event-rate` trial) overlaid in one figure (see [`overlay`]); the other updates
/// two figures per kind, K and installed size (see [`pooled`]).
pub fn figures(updates: &[Update]) -> Vec<Figure> {
    // (trial, unit, kind, K, method) → its committed updates with a window of bins.
    let mut by_trial: BTreeMap<(i64, Unit, String, u32, String), Vec<&Update>> = BTreeMap::new();
    for u in updates.iter().filter(|u| u.row.error.is_none()) {
        let r = &u.row;
        if r.series
            .as_deref()
            .and_then(bins)
            .is_some_and(|b| !b.is_empty())
        {
            by_trial
                .entry((u.trial_id, u.unit, r.kind.clone(), r.k, r.method.clone()))
                .or_default()
                .push(u);
        }
    }
    let (repeated, single): (Vec<_>, Vec<_>) = by_trial.into_values().partition(|us| us.len() > 1);
    let single: Vec<Update> = single.into_iter().flatten().cloned().collect();
    let mut out = pooled(&single);
    out.extend(repeated.iter().filter_map(|us| overlay(us)));
    out
}

/// Two figures per update kind, K and installed size (and rate, place and load where
/// they differ; drawn side by side): the
/// background's received packets and mean one-way delay per 1-ms bin around the
/// update, one line per engine and method (the mean over its updates, bin by bin),
/// with the commit's start at 0, the span to the slowest median commit's end shaded,
/// each line's median time to effect marked and the longest stall shaded. A line is
/// only of updates whose stall and loss the table and findings state ([`drawn`]): one
/// of none is empty, and a note says why (a stall shaded from a flagged update's bins
/// once read "stall 254 ms" beside a table's "– (flagged)").
fn pooled(updates: &[Update]) -> Vec<Figure> {
    // (unit, kind, K, installed, elements, the rest alike) → (what varies among its
    // kin, engine by method → the updates' bins and the updates).
    // Lines by engine and method, and the background's load in words (its capacity).
    type Windows<'a> = BTreeMap<(String, Option<String>), Vec<(Vec<[f64; 4]>, &'a Update)>>;
    type At = (Unit, String, u32, u64, u64, Alike);
    let grouped = groups(updates);
    let kin = Varies::by(grouped.keys());
    let mut by: BTreeMap<At, (Varies, Windows)> = BTreeMap::new();
    for (key, rows) in grouped {
        let varies = Varies::of(&kin, &key);
        let (unit, engine, method, kind, k, installed, elements, _) = key;
        let Some(first) = rows.first() else { continue };
        let load = first.load.as_ref().map(|l| l.label.clone());
        let entry = by
            .entry((unit, kind, k, installed, elements, Alike::figure(first)))
            .or_insert_with(|| (varies, BTreeMap::new()))
            .1
            .entry((format!("{engine} by {method}"), load))
            .or_default();
        for u in rows {
            if let Some(b) = u
                .row
                .series
                .as_deref()
                .and_then(bins)
                .filter(|b| !b.is_empty())
            {
                entry.push((delays_or_none(b, u), u));
            }
        }
    }
    let mut out = vec![];
    for ((unit, kind, k, installed, elements, alike), (varies, windows)) in by {
        let windows: Vec<((String, Option<String>), Vec<_>)> =
            windows.into_iter().filter(|(_, w)| !w.is_empty()).collect();
        if windows.is_empty() {
            continue;
        }
        // A line's name: its engine and method, and its load where one engine and
        // method has lines at two (two capacities); the load said in its note where
        // it is more than the figure's words (a capacity's figure).
        let alike_words = alike.load.clone();
        let windows: Vec<(String, Option<String>, Vec<_>)> = (windows.iter())
            .map(|((name, load), w)| {
                let twice = windows.iter().filter(|((n, _), _)| n == name).count() > 1;
                let name = match load {
                    Some(l) if twice => format!("{name} (the background at {l})"),
                    _ => name.clone(),
                };
                let said = load
                    .clone()
                    .filter(|l| Some(l) != alike_words.as_ref())
                    .map(|l| format!(" The background at {l}."));
                (name, said, w.clone())
            })
            .collect();
        let several = windows.len() > 1;
        let (what, _) = doing_beside(&kind, k, installed, elements, &alike.words(&varies));
        let mut received = vec![];
        let mut delay = vec![];
        let mut notes = vec![];
        let mut markers = vec![];
        let mut slowest: Option<(f64, String)> = None;
        let mut stalls = vec![];
        let mut leaks = vec![];
        for (name, load_note, w) in &windows {
            leaks.extend(violation_span(
                w.iter().map(|x| x.1),
                several.then_some(name.as_str()),
            ));
            // The line: the mean of the updates whose stall and loss hold (none: no
            // line, no stall shaded).
            let shown: Vec<Vec<[f64; 4]>> = w
                .iter()
                .filter(|x| drawn(x.1))
                .map(|x| x.0.clone())
                .collect();
            let mean = combine(&shown, mean_of);
            received.push(line(name, &mean, false));
            delay.push(line(name, &mean, true));
            stalls.extend(stall(unit, &mean, several.then_some(name.as_str())));
            let commit = median(w.iter().map(|x| x.1.row.commit_ms)).unwrap_or(0.0);
            let left: Vec<&Update> = w.iter().map(|x| x.1).filter(|u| !drawn(u)).collect();
            notes.push(
                match (shown.len(), left.is_empty()) {
                    (_, true) => format!(
                        "{name}: mean of {} updates; the commit took {} ms (median).",
                        w.len(),
                        num(commit)
                    ),
                    (0, false) => format!(
                        "{name}: no line, no stall shaded — no update's background figures \
                     hold ({}); the commit took {} ms (median of {}).",
                        not_drawn(&left),
                        num(commit),
                        w.len()
                    ),
                    (n, false) => format!(
                        "{name}: mean of {n} of {} updates ({} left out: {}); the commit took \
                     {} ms (median of all {}).",
                        w.len(),
                        left.len(),
                        not_drawn(&left),
                        num(commit),
                        w.len()
                    ),
                } + load_note.as_deref().unwrap_or(""),
            );
            let effects = w.iter().filter(|x| holds(x.1));
            if let Some(e) = median(effects.filter_map(|x| x.1.row.time_to_effect_ms)) {
                let whose = if several {
                    format!(" ({name})")
                } else {
                    String::new()
                };
                markers.push(Marker {
                    x: e,
                    text: format!("effect {} ms{whose}", num(e)),
                });
            }
            if slowest.as_ref().is_none_or(|(c, _)| commit > *c) {
                slowest = Some((commit, name.clone()));
            }
        }
        // The longest stall of the lines.
        stalls.sort_by(|a, b| (b.to - b.from).total_cmp(&(a.to - a.from)));
        let mut spans: Vec<Span> = slowest
            .map(|(c, name)| {
                let whose = if several {
                    format!(", slowest: {name}")
                } else {
                    String::new()
                };
                commit_span(c, format!("commit {} ms (median{whose})", num(c)))
            })
            .into_iter()
            .collect();
        spans.extend(stalls.into_iter().next());
        spans.extend(leaks);
        let id = match elements {
            0 => format!("updates-{}{kind}-{k}-{installed}", unit.id()),
            n => format!("updates-{}{kind}-{k}-{installed}-beside-{n}", unit.id()),
        } + &alike.id();
        let group = Some(id.clone());
        let (counted, delay_name) = unit.axes();
        let mut f = Figure::line(
            &format!("{id}-received"),
            &format!("Background {counted} per 1-ms bin around {what}"),
            ("ms from the commit's start", &received_axis(unit)),
            received,
        );
        f.markers = markers.clone();
        f.spans = spans.clone();
        f.notes = notes;
        f.group = group.clone();
        let mut g = Figure::line(
            &format!("{id}-delay"),
            &format!("Background {delay_name} per 1-ms bin around {what}"),
            (
                "ms from the commit's start",
                &format!("mean {delay_name} (ms)"),
            ),
            delay,
        );
        g.markers = markers;
        g.spans = spans;
        g.group = group;
        out.push(f);
        out.push(g);
    }
    out
}

/// Why `left`, updates not [`drawn`], are not: the first's own doubt, their trials'
/// (as the findings count them), or a stall figure withheld without a doubt.
fn not_drawn(left: &[&Update]) -> String {
    let l = LeftOut::of(left);
    let own = (l.own > 0).then(|| l.own_why.clone());
    let trials = (l.trial > 0).then(|| {
        let statuses: Vec<&str> = l.statuses.iter().copied().collect();
        format!("their trials {}: {}", statuses.join(" or "), l.trial_why)
    });
    let why: Vec<String> = own.into_iter().chain(trials).collect();
    if why.is_empty() {
        "no stall figure".into()
    } else {
        why.join("; ")
    }
}

/// The y axis of a figure of what the background received per bin.
fn received_axis(unit: Unit) -> String {
    let (counted, _) = unit.axes();
    match unit {
        Unit::Packets => "packets received per bin".to_string(),
        Unit::Echoes | Unit::Probes | Unit::Sessions => format!("{counted} per bin (by start)"),
    }
}

/// One figure of a trial's repeated updates of one kind, K and method (an
/// `--event-rate` trial): the background received per 1-ms bin around each update,
/// time from each commit's start, each update a thin line and their median bin by bin
/// bold; the median commit shaded, the median time to effect marked and, for flows,
/// the median line's stall shaded. The lines are only of updates whose stall and loss
/// hold ([`drawn`]; none: no line, no stall shaded, a note says why). `None` for fewer
/// than two updates with bins.
fn overlay(us: &[&Update]) -> Option<Figure> {
    let windows: Vec<(&Update, Vec<[f64; 4]>)> = us
        .iter()
        .filter_map(|u| Some((*u, u.row.series.as_deref().and_then(bins)?)))
        .filter(|(_, b)| !b.is_empty())
        .collect();
    let first = us.first()?;
    if windows.len() < 2 {
        return None;
    }
    let r = &first.row;
    let unit = first.unit;
    let lo = windows.iter().map(|(u, _)| u.row.installed).min()?;
    let hi = windows.iter().map(|(u, _)| u.row.installed).max()?;
    let (mut what, _) = doing_beside(&r.kind, r.k, lo, beside(first), "");
    if hi != lo {
        what += &format!(" … {hi}");
    }
    let shown: Vec<(&UpdateRecord, Vec<[f64; 4]>)> = windows
        .iter()
        .filter(|(u, _)| drawn(u))
        .map(|(u, b)| (&u.row, b.clone()))
        .collect();
    let left: Vec<&Update> = windows
        .iter()
        .map(|(u, _)| *u)
        .filter(|u| !drawn(u))
        .collect();
    let bins: Vec<Vec<[f64; 4]>> = shown.iter().map(|(_, b)| b.clone()).collect();
    let mid = combine(&bins, median);
    let bold = format!("median of {} updates", shown.len());
    let thin = thin_lines(&shown);
    let mut series: Vec<Series> = thin
        .iter()
        .map(|i| &shown[*i])
        .map(|(r, b)| {
            let one = combine(std::slice::from_ref(b), mean_of);
            line(
                &format!("update {} ({} installed)", r.index, r.installed),
                &one,
                false,
            )
        })
        .collect();
    if !shown.is_empty() {
        series.push(line(&bold, &mid, false));
    }
    let commits = windows.iter().map(|(u, _)| u.row.commit_ms);
    let commit = median(commits.clone()).unwrap_or(0.0);
    let slowest = commits.fold(0.0, f64::max);
    let effect = median(
        windows
            .iter()
            .filter(|(u, _)| holds(u))
            .filter_map(|(u, _)| u.row.time_to_effect_ms),
    );
    let (counted, _) = unit.axes();
    let name = format!("{} by {}", first.engine, r.method);
    let id = format!(
        "updates-{}trial-{}-{}-{}",
        unit.id(),
        first.trial_id,
        r.kind,
        r.k
    );
    let mut f = Figure::line(
        &id,
        &format!(
            "Background {counted} around {} updates of trial {}: {what}",
            windows.len(),
            first.trial_id
        ),
        ("ms from each commit's start", &received_axis(unit)),
        series,
    );
    f.overlay = (!shown.is_empty()).then_some(bold);
    f.spans.push(commit_span(
        commit,
        format!("commit {} ms (median)", num(commit)),
    ));
    f.spans.extend(stall(unit, &mid, None));
    f.spans
        .extend(violation_span(windows.iter().map(|(u, _)| *u), None));
    f.markers.extend(effect.map(|e| Marker {
        x: e,
        text: format!("effect {} ms (median)", num(e)),
    }));
    let all = if left.is_empty() { "all " } else { "" };
    let sample = if thin.len() < shown.len() {
        format!(
            " {} of them are drawn (the first carrying the marker, if any, the slowest \
             commit, evenly spaced others); the median is over {all}{}.",
            thin.len(),
            shown.len()
        )
    } else {
        String::new()
    };
    let left = match (shown.len(), left.len()) {
        (_, 0) => String::new(),
        (0, _) => format!(
            " No line, no stall shaded: no update's background figures hold ({}).",
            not_drawn(&left)
        ),
        (_, n) => format!(" {n} of them left out of the lines ({}).", not_drawn(&left)),
    };
    f.notes.push(format!(
        "{name}: {} updates; the commit took {} ms (median), {} ms at most.{sample}{left}",
        windows.len(),
        num(commit),
        num(slowest)
    ));
    Some(f)
}

/// At most this many of a trial's updates are drawn as thin lines: hundreds (an
/// envelope step at 200 updates/s has 561) are a grey smear and a report of tens of
/// megabytes, and the median says what they share.
pub const THIN_LINES: usize = 24;

/// Which windows an overlay draws, in their order: all up to [`THIN_LINES`]; beyond,
/// the first carrying the marker, the slowest commit and evenly spaced others.
fn thin_lines(windows: &[(&UpdateRecord, Vec<[f64; 4]>)]) -> Vec<usize> {
    let n = windows.len();
    if n <= THIN_LINES {
        return (0..n).collect();
    }
    let mut pick: BTreeSet<usize> = BTreeSet::new();
    pick.extend(windows.iter().position(|(r, _)| r.marker));
    pick.extend((0..n).max_by(|a, b| windows[*a].0.commit_ms.total_cmp(&windows[*b].0.commit_ms)));
    // Beside those, m evenly spaced from the first to the last.
    let m = THIN_LINES - pick.len();
    pick.extend((0..m).map(|j| j * (n - 1) / (m - 1)));
    // Where they collide, the middle of the widest gap left, until full
    // (the first and the last are drawn, so a gap of two or more is left while n > the
    // drawn).
    while pick.len() < THIN_LINES {
        let v: Vec<usize> = pick.iter().copied().collect();
        let Some((a, b)) = v
            .windows(2)
            .map(|w| (w[0], w[1]))
            .max_by_key(|(a, b)| b - a)
        else {
            break;
        };
        if b - a < 2 {
            break;
        }
        pick.insert((a + b) / 2);
    }
    pick.into_iter().collect()
}

/// Commit latency and stall vs installed size, per engine, method, kind and K (and
/// rate, place and load, named in the update's cell where they differ; `None` without
/// updates). A stall, loss, time to effect or violations only of updates whose figures
/// hold, and of trials whose witness holds: none such, "– (flagged)".
pub fn table(updates: &[Update]) -> Option<Table> {
    let by = groups(updates);
    if by.is_empty() {
        return None;
    }
    let kin = Varies::by(by.keys());
    let rows = by
        .into_iter()
        .map(|(key, rows)| {
            let varies = Varies::of(&kin, &key);
            let (unit, engine, method, kind, k, installed, elements, alike) = key;
            let commits = rows.iter().map(|u| u.row.commit_ms);
            let held: Vec<&Update> = rows.iter().copied().filter(|u| holds(u)).collect();
            let measured = felt(&held);
            let effect = median(held.iter().filter_map(|u| u.row.time_to_effect_ms));
            vec![
                engine,
                method,
                match alike.words(&varies) {
                    w if w.is_empty() => format!("{kind} {k}{}", unit.during()),
                    w => format!("{kind} {k}{} ({w})", unit.during()),
                },
                match elements {
                    0 => installed.to_string(),
                    n => format!("{installed} (beside a set of {n} elements)"),
                },
                rows.len().to_string(),
                median(commits.clone()).map(num).unwrap_or_default(),
                num(commits.fold(0.0, f64::max)),
                match (held.is_empty(), measured.is_empty()) {
                    (true, _) => "– (flagged)".into(),
                    (false, true) => "– (no background)".into(),
                    (false, false) => num(measured
                        .iter()
                        .filter_map(|u| u.row.stall_ms)
                        .fold(0.0, f64::max)),
                },
                match (measured.is_empty(), Lost::of(&measured, updates)) {
                    (true, _) => "–".into(),
                    (false, Lost::Sum(n)) => n.to_string(),
                    (false, Lost::Once { n, at_least, .. }) => format!(
                        "{}{n} (windows overlap: each lost packet counted once{})",
                        if at_least { "at least " } else { "" },
                        if at_least {
                            "; an update left out held some windows first"
                        } else {
                            ""
                        }
                    ),
                    (false, Lost::PerUpdate { most, why }) => {
                        format!("{most} in one window at most ({why})")
                    }
                },
                effect.map(num).unwrap_or_else(|| "–".into()),
                // Violations only of reloads whose figures hold (as the findings);
                // the others counted, never summed in.
                match (
                    held.iter()
                        .filter_map(|u| u.row.violations)
                        .reduce(|a, b| a + b),
                    rows.iter()
                        .filter(|u| u.row.violations.is_some() && !holds(u))
                        .count(),
                ) {
                    (Some(n), 0) => n.to_string(),
                    (Some(n), flagged) => format!("{n} ({flagged} flagged left out)"),
                    (None, 0) => "–".into(),
                    (None, _) => "– (flagged)".into(),
                },
                // What a commit that held the background back shows instead of a
                // stall (one-way, round trip or connection setup, by unit).
                match delays(&measured).max() {
                    Some(us) if us > 0 => num(us as f64 / 1e3),
                    _ => "–".into(),
                },
            ]
        })
        .collect();
    Some(Table::new(
        "Gateway updates: commit latency and stall vs installed size",
        &[
            "engine",
            "method",
            "update",
            "installed",
            "updates",
            "commit ms (median)",
            "commit ms (max)",
            "stall ms (max)",
            "lost",
            "time to effect ms (median)",
            "must-drop passed",
            "background delay ms (max in the window)",
        ],
        rows,
    ))
}

/// p50, p99 and max of `v` by nearest rank (the smallest value with at least that
/// share at or below it), as the trial's text gives them (`None`: empty).
fn quantiles(v: &[f64]) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    Some((rank(0.5), rank(0.99), v[v.len() - 1]))
}

/// Per trial of two committed updates or more (a replayed trace, an `--event-rate`
/// schedule): the spread of their commit latencies and times to effect, p50 / p99 /
/// max (`None` without such a trial).
pub fn spread_table(updates: &[Update]) -> Option<Table> {
    let mut by: BTreeMap<i64, Vec<&Update>> = BTreeMap::new();
    for u in updates.iter().filter(|u| u.row.error.is_none()) {
        by.entry(u.trial_id).or_default().push(u);
    }
    let three = |q: Option<(f64, f64, f64)>| match q {
        Some((a, b, c)) => [num(a), num(b), num(c)],
        None => ["–".into(), "–".into(), "–".into()],
    };
    let rows: Vec<Vec<String>> = by
        .into_iter()
        .filter(|(_, us)| us.len() >= 2)
        .map(|(trial, us)| {
            let mut kinds: Vec<&str> = us.iter().map(|u| u.row.kind.as_str()).collect();
            kinds.sort_unstable();
            kinds.dedup();
            let mut methods: Vec<&str> = us.iter().map(|u| u.row.method.as_str()).collect();
            methods.sort_unstable();
            methods.dedup();
            let commits: Vec<f64> = us.iter().map(|u| u.row.commit_ms).collect();
            // Times to effect only where the update's figures hold (as the findings).
            let effects: Vec<f64> = us
                .iter()
                .filter(|u| holds(u))
                .filter_map(|u| u.row.time_to_effect_ms)
                .collect();
            let [c50, c99, cmax] = three(quantiles(&commits));
            let [e50, e99, emax] = three(quantiles(&effects));
            vec![
                trial.to_string(),
                us[0].engine.clone(),
                methods.join(", "),
                kinds.join(", "),
                us.len().to_string(),
                c50,
                c99,
                cmax,
                effects.len().to_string(),
                e50,
                e99,
                emax,
            ]
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Table::new(
        "Gateway updates per trial: commit latency and time to effect (p50 / p99 / max, \
         nearest rank: the p99 of fewer than 100 is their maximum)",
        &[
            "trial",
            "engine",
            "method",
            "updates of",
            "updates",
            "commit ms p50",
            "commit ms p99",
            "commit ms max",
            "times to effect",
            "time to effect ms p50",
            "time to effect ms p99",
            "time to effect ms max",
        ],
        rows,
    ))
}

#[cfg(test)]
mod spread_tests {
    use super::*;

    fn update(trial: i64, kind: &str, commit_ms: f64, effect: Option<f64>) -> Update {
        Update {
            trial_id: trial,
            engine: "nft".into(),
            unit: Unit::Packets,
            set_elements: 0,
            rate: None,
            load: None,
            trial: None,
            row: UpdateRecord {
                kind: kind.into(),
                method: "batch".into(),
                k: 1,
                commit_ms,
                time_to_effect_ms: effect,
                stall_ms: Some(0.0),
                // A background's bins (without them, no background: no stall).
                series: Some("[[0.0, 10, 0, 50.0]]".into()),
                ..UpdateRecord::default()
            },
        }
    }

    /// A trace's updates (several kinds, one trial) give one row of their spread; a
    /// trial of one update none.
    #[test]
    fn a_trials_updates_are_spread_in_one_row() {
        let us = vec![
            update(1, "add", 4.0, Some(3.0)),
            update(1, "delete", 1.0, None),
            update(1, "add", 2.0, None),
            update(1, "replace", 8.0, None),
            update(2, "add", 5.0, Some(1.0)),
            // Flagged: its commit counts, its time to effect is not stated.
            Update {
                row: UpdateRecord {
                    doubts: Some(r#"[{"kind":"overloaded","why":"lost 90 %"}]"#.into()),
                    ..update(1, "replace", 3.0, Some(9134.0)).row
                },
                ..update(1, "replace", 3.0, None)
            },
        ];
        let t = spread_table(&us).unwrap();
        let md = format!("{t:?}");
        assert!(md.contains("\"add, delete, replace\""), "{md}");
        assert!(
            md.contains("\"5\", \"3\", \"8\", \"8\", \"1\", \"3\", \"3\", \"3\""),
            "{md}"
        );
        assert!(
            !md.contains("\"2\", \"nft\""),
            "trial 2 has one update: {md}"
        );
        assert!(spread_table(&us[4..5]).is_none());
    }

    /// Elements expiring together: their commit is their add's, at the start of the
    /// traffic, so the sentence says so instead of "took".
    #[test]
    fn an_expiry_reads_as_elements_running_out_added_earlier() {
        let mut u = update(1, "expire-elements", 12.0, Some(4.5));
        u.row.k = 1000;
        u.row.installed = 2000;
        let said = findings(&[u]).join("\n");
        assert!(
            said.starts_with(
                "1000 set elements of 2000 expiring together (added with nft by batch at the \
                 start of the traffic in 12 ms, median of 1); forwarding stalled 0 ms"
            ),
            "{said}"
        );
        assert!(
            said.contains("the expiry took effect after 4.5 ms"),
            "{said}"
        );
    }

    /// The stored kind is read back typed; one this fwbench does not know (a newer
    /// one's) is named as stored, never taken for another.
    #[test]
    fn a_stored_kind_reads_typed_and_an_unknown_one_as_stored() {
        let mut u = update(1, "remove-elements", 2.0, None);
        u.row.installed = 500;
        assert!(findings(std::slice::from_ref(&u))[0]
            .starts_with("removing 1 set element of 500 with nft by batch took 2 ms"));
        u.row.kind = "flip".into();
        let said = findings(&[u]).join("\n");
        assert!(
            said.starts_with("flip of 1 with 500 installed with nft by batch took 2 ms"),
            "{said}"
        );
        assert_eq!(kind_words("reload-set", 3), "reloading a set");
        assert_eq!(kind_words("flip", 3), "flip of 3");
    }
}

#[cfg(test)]
#[path = "updates_figures_tests.rs"]
mod figures_tests;
