//! Gateway events on an installed rule set (issue 25): which rules and elements each
//! update of an [`EventSpec`] changes, committing it (timed, start to the last
//! tool's return), and undoing every change still in force.
//!
//! Owns: [`Events`] (what the events put in place, so that [`Events::undo`] — and
//! its drop — takes exactly that out again), [`commit`] (running a change's steps),
//! and the rules and elements an update adds: drop rules for never-matching filler
//! flows (documentation addresses, ports counted down from 65535, so they never equal
//! a model's filler rules) and, first of all, the marker flow's.
//! Must not: know an engine's syntax (the engines render a [`Change`]), touch
//! anything outside fwbench's own chains and sets (every change lands there, so the
//! crash marker's removal of fwbench's rule set covers it too), or read a clock but
//! the commit's own stopwatch.

use crate::change::{Change, Step};
use crate::engine::{backend, batch_steps, write_bpf_maps};
use crate::model::{
    Action, EngineKind, EngineOptions, Hook, Match, Prefix, Role, Rule, RuleSet, SetElem, L4,
};
use crate::models::{filler_addr, FILLER_ADDRS};
use crate::plan::plan;
use crate::render::render_with;
use crate::rendered::{RenderError, Rendered};
use crate::tool::{run, Tool, ToolError};
use proto::{EventSpec, Marker, UpdateKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Tool(#[from] ToolError),
    #[error("{0}")]
    Invalid(String),
    /// A change of many calls stopped between two of them: the traffic phase ended.
    #[error(
        "not finished: the traffic phase ended after {done} of its {of} calls ({secs:.1} s); \
         the rule set was put back as installed"
    )]
    Stopped { done: usize, of: usize, secs: f64 },
}

/// What a commit took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Committed {
    /// Start of the first call to the return of the last, ns.
    pub commit_ns: u64,
    /// Program calls made.
    pub calls: u32,
    /// Handles the calls echoed (nft), in output order.
    pub handles: Vec<u64>,
}

/// Run a change's steps in order, timed; the first failure stops it.
pub fn commit(steps: &[Step]) -> Result<Committed, ToolError> {
    commit_until(steps, &AtomicBool::new(false)).map_err(|e| match e {
        Stop::Tool(e) => e,
        Stop::Stopped(..) => unreachable!("never stopped"),
    })
}

/// Why [`commit_until`] ended early.
enum Stop {
    Tool(ToolError),
    /// (calls made, calls in all, seconds).
    Stopped(usize, usize, f64),
}

/// [`commit`], stopping between two calls once `stop` is set (a per-rule reload of
/// tens of thousands of rules outlives any trial: it must not hold the agent's stop).
fn commit_until(steps: &[Step], stop: &AtomicBool) -> Result<Committed, Stop> {
    let mut out = Committed::default();
    let t0 = Instant::now();
    for (i, s) in steps.iter().enumerate() {
        if i > 0 && stop.load(Ordering::Relaxed) {
            return Err(Stop::Stopped(i, steps.len(), t0.elapsed().as_secs_f64()));
        }
        let argv: Vec<&str> = s.argv.iter().map(String::as_str).collect();
        if argv == Tool::Bpf.argv() {
            // The BPF engines' tables are maps of this process's loaded program.
            out.calls += write_bpf_maps(s.stdin.as_deref().unwrap_or("")).map_err(Stop::Tool)?;
            continue;
        }
        let stdout = match run(&argv, s.stdin.as_deref()) {
            Err(ToolError::Rejected { status, .. })
                if s.none_found_ok && status == "exit status: 1" =>
            {
                String::new()
            }
            r => r.map_err(Stop::Tool)?,
        };
        out.calls += 1;
        if s.echoes_handles {
            out.handles.extend(echoed_handles(&stdout));
        }
    }
    out.commit_ns = t0.elapsed().as_nanos() as u64;
    Ok(out)
}

/// The marker source's conntrack entries deleted (`conntrack -D -s SRC -p PROTO`): its
/// established flow's next packet is new. None left is not a failure.
fn ct_delete(m: &Marker) -> Step {
    let src = m.src.to_string();
    let proto = match m.proto {
        proto::Proto::Udp => "udp",
        proto::Proto::Tcp => "tcp",
        proto::Proto::Sctp => "sctp",
    };
    Step {
        none_found_ok: true,
        ..Step::call(&["conntrack", "-D", "-s", &src, "-p", proto])
    }
}

/// The handles `nft --echo --handle` printed: the number after the last
/// `# handle ` of each echoed rule line.
pub fn echoed_handles(out: &str) -> Vec<u64> {
    out.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once("# handle ")?.1.trim().parse().ok())
        .collect()
}

/// Destination port of an event's filler `j`: counted down from 65535 (a model's
/// fillers count up from 1), one port per [`FILLER_ADDRS`] addresses.
pub fn event_port(j: u32) -> u16 {
    (65535 - (j / FILLER_ADDRS).min(60_000)) as u16
}

/// The marker flow's (source, port), checked against the protocol `l4` it must use.
fn marker_elem(m: &Marker, l4: L4) -> Result<SetElem, UpdateError> {
    if L4::from(m.proto) != l4 {
        return Err(UpdateError::Invalid(format!(
            "the marker flow is {}, the set matches {}",
            L4::from(m.proto).name(),
            l4.name()
        )));
    }
    Ok(SetElem {
        addr: m.src,
        port: m.dport,
    })
}

/// A rule an event put in place, with its nft handle when known.
#[derive(Debug, Clone, PartialEq)]
struct InForce<T> {
    event: u32,
    item: T,
    handle: Option<u64>,
}

/// The first `k` notes of event `event`, taken out of `notes`; fewer left is refused,
/// naming the event and `what` (the notes taken stay out).
fn take_notes<T>(
    notes: &mut Vec<InForce<T>>,
    event: u32,
    k: u32,
    what: &str,
) -> Result<Vec<InForce<T>>, UpdateError> {
    let mut out = vec![];
    let mut i = 0;
    while i < notes.len() && out.len() < k as usize {
        if notes[i].event == event {
            out.push(notes.remove(i));
        } else {
            i += 1;
        }
    }
    if out.len() < k as usize {
        return Err(UpdateError::Invalid(format!(
            "event {event} has {} {what}, not {k}",
            out.len()
        )));
    }
    Ok(out)
}

/// Elements an `expire-elements` update added to expire together (see [`Events::arm`]).
#[derive(Debug, Clone)]
pub struct Armed {
    event: u32,
    index: u32,
    elements: Vec<SetElem>,
    /// When the last of them has expired at the latest (its add's end plus the
    /// timeout).
    expires_by: Instant,
    /// The update came due: they are out of the set.
    expired: bool,
    /// The first add's timeout, ns: they expire that long after the add began …
    pub timeout_ns: u64,
    /// … or up to this much later (the first add's call, during which the kernel
    /// started the timeout), ns.
    pub slack_ns: u64,
    /// Every add's calls, and their time from the first's start to the last's return.
    pub committed: Committed,
}

/// Events on one installed rule set: what they changed, so it can be undone.
pub struct Events {
    /// The rule set as installed (the base of every replacement and of the undo).
    installed: Rendered,
    rule_set: RuleSet,
    opts: EngineOptions,
    /// Chain the events' rules go to: fwbench's first.
    hook: Option<Hook>,
    rules: Vec<InForce<Rule>>,
    elements: Vec<InForce<SetElem>>,
    /// A replacement is in force (undo: replace with the installed rule set).
    replaced: bool,
    /// Next filler number.
    next: u32,
    /// The installed elements of the drop set a set's reload loads again (its name
    /// and elements), planned once, untimed.
    set_base: Option<(String, Vec<SetElem>)>,
    /// Inserts whose handles are not read yet, oldest first: (hook, place, index of
    /// their first rule in `rules`, how many). Reading them back after each commit
    /// (a `nft -j -a list chain` of the whole chain: ~0.2 s at 10 000 rules) would hold
    /// the next update back — fwbench's bookkeeping on the update path, limiting an
    /// update rate (`fwbench envelope`) by fwbench. They are read once, untimed, when a
    /// change needs them: a deletion, an insert elsewhere, any other change, the undo.
    pending: Vec<(Hook, usize, usize, usize)>,
    /// Elements added to expire, by update.
    armed: Vec<Armed>,
    /// Set when the traffic phase ends: a change of many calls in progress stops
    /// between two (see [`Events::stop_with`]).
    stop: Arc<AtomicBool>,
    /// A replacement stopped so (its counters cover part of the traffic only).
    cut_short: bool,
}

impl Events {
    /// Events on `installed`, the rendering of `rule_set` with `opts`.
    pub fn new(installed: &Rendered, rule_set: RuleSet, opts: EngineOptions) -> Events {
        Events {
            hook: installed.layout.first().map(|c| c.hook),
            installed: installed.clone(),
            rule_set,
            opts,
            rules: vec![],
            elements: vec![],
            replaced: false,
            next: 0,
            pending: vec![],
            set_base: None,
            armed: vec![],
            stop: Arc::new(AtomicBool::new(false)),
            cut_short: false,
        }
    }

    /// The elements fwbench's rule set put in its set `set` (planned from the rule
    /// set as the engines plan it, collapsing filler runs; cached).
    fn set_base(&mut self, set: &str) -> Result<&[SetElem], UpdateError> {
        if self.set_base.as_ref().is_none_or(|(s, _)| s != set) {
            let plan = plan(&self.rule_set, true)?;
            let elements = plan
                .sets
                .into_iter()
                .find(|s| s.name == set)
                .map(|s| s.elements)
                .ok_or_else(|| {
                    UpdateError::Invalid(format!("fwbench's rule set plans no set {set}"))
                })?;
            self.set_base = Some((set.to_string(), elements));
        }
        Ok(self
            .set_base
            .as_ref()
            .map(|(_, e)| e.as_slice())
            .unwrap_or(&[]))
    }

    /// Read the handles of the pending inserts (see `pending`): they stand in their
    /// chain from their place on, the newest first, each insert's rules in order.
    fn resolve(&mut self) -> Result<(), UpdateError> {
        let Some(&(hook, at, ..)) = self.pending.first() else {
            return Ok(());
        };
        let total: usize = self.pending.iter().map(|p| p.3).sum();
        let handles = backend(self.installed.engine).handles(&self.installed, hook, at, total)?;
        if handles.len() != total && !handles.is_empty() {
            return Err(UpdateError::Invalid(format!(
                "reading the handles of {total} rules the events added: the chain holds {} \
                 there (it changed behind fwbench's back)",
                handles.len()
            )));
        }
        let mut next = handles.into_iter();
        for &(_, _, first, k) in self.pending.iter().rev() {
            for r in &mut self.rules[first..first + k] {
                r.handle = next.next();
            }
        }
        self.pending.clear();
        Ok(())
    }

    /// Read what the update `spec` will need before its commit is timed: the handles of
    /// pending inserts, unless it is one more insert where they went. The agent calls
    /// it before it stamps the update's start, so the readback is in the update's wait
    /// (fwbench's bookkeeping, late as a queue is), never in its commit, stall window
    /// or time to effect.
    pub fn settle(&mut self, spec: &EventSpec) -> Result<(), UpdateError> {
        let Some(&(hook, at, ..)) = self.pending.first() else {
            return Ok(());
        };
        let same_place = spec.kind == UpdateKind::Add
            && self.hook == Some(hook)
            && self.place_at(hook, spec.place)? == at;
        if same_place {
            return Ok(());
        }
        self.resolve()
    }

    /// Rules (or elements, for element updates) fwbench's rule set holds now.
    pub fn size(&self, kind: UpdateKind) -> u64 {
        let n = match kind {
            UpdateKind::Add | UpdateKind::Delete | UpdateKind::Replace | UpdateKind::Reload => {
                self.installed.expect_rules + self.rules.len()
            }
            UpdateKind::AddElements
            | UpdateKind::RemoveElements
            | UpdateKind::ReloadSet
            | UpdateKind::ExpireElements => {
                let armed: usize = self
                    .armed
                    .iter()
                    .filter(|a| !a.expired)
                    .map(|a| a.elements.len())
                    .sum();
                self.installed.expect_elements + self.elements.len() + armed
            }
        };
        n as u64
    }

    /// Whether the rules and elements the events put in place are all out again.
    pub fn is_clean(&self) -> bool {
        self.rules.is_empty() && self.elements.is_empty() && !self.replaced && self.armed.is_empty()
    }

    fn hook(&self) -> Result<Hook, UpdateError> {
        self.hook.ok_or_else(|| {
            UpdateError::Invalid(
                "the rule set has no chain of fwbench's to add rules to (install some rules)"
                    .into(),
            )
        })
    }

    fn drop_set(&self) -> Result<(String, L4), UpdateError> {
        let s = self.installed.drop_sets.first().ok_or_else(|| {
            UpdateError::Invalid(format!(
                "engine {} installed no set that a drop rule matches (element updates need \
                 nft-set, ipset-legacy or ipset-nft with filler rules)",
                self.installed.engine
            ))
        })?;
        Ok((s.name.clone(), s.l4))
    }

    /// Rules of `hook`'s chain an update placed at `place` goes behind: none at the
    /// head; after-established, the chain's leading rules that accept established
    /// flows (refused where it has none: the block would meet every packet).
    fn place_at(&self, hook: Hook, place: proto::EventPlace) -> Result<usize, UpdateError> {
        match place {
            proto::EventPlace::Head => Ok(0),
            proto::EventPlace::AfterEstablished | proto::EventPlace::AfterEstablishedCtDelete => {
                let leading = self
                    .rule_set
                    .rules
                    .iter()
                    .filter(|r| r.hook == hook)
                    .take_while(|r| r.m.ct_established && r.action == Action::Accept)
                    .count();
                match leading {
                    0 => Err(UpdateError::Invalid(
                        "event place after-established…: fwbench's chain does not open with a \
                         rule accepting established flows (--model stateful does)"
                            .into(),
                    )),
                    n => Ok(n),
                }
            }
        }
    }

    /// `k` drop rules: the marker flow's first (when given), then fillers.
    fn new_rules(&mut self, hook: Hook, l4: L4, marker: Option<&Marker>, k: u32) -> Vec<Rule> {
        let mut out = Vec::with_capacity(k as usize);
        if let Some(m) = marker {
            out.push(Rule {
                hook,
                m: Match {
                    src: Some(Prefix::host(m.src)),
                    l4: Some(L4::from(m.proto)),
                    dport: Some(m.dport),
                    ..Match::default()
                },
                action: Action::Drop,
                role: Role::Filler,
            });
        }
        while out.len() < k as usize {
            let j = self.next;
            self.next += 1;
            out.push(Rule {
                hook,
                m: Match {
                    src: Some(Prefix::host(filler_addr(self.installed.ip, j))),
                    l4: Some(l4),
                    dport: Some(event_port(j)),
                    ..Match::default()
                },
                action: Action::Drop,
                role: Role::Filler,
            });
        }
        out
    }

    fn new_elements(
        &mut self,
        l4: L4,
        marker: Option<&Marker>,
        k: u32,
    ) -> Result<Vec<SetElem>, UpdateError> {
        let mut out = Vec::with_capacity(k as usize);
        if let Some(m) = marker {
            out.push(marker_elem(m, l4)?);
        }
        while out.len() < k as usize {
            let j = self.next;
            self.next += 1;
            out.push(SetElem {
                addr: filler_addr(self.installed.ip, j),
                port: event_port(j),
            });
        }
        Ok(out)
    }

    /// The protocol of the events' filler rules: the marker's, else udp.
    fn l4(spec: &EventSpec) -> L4 {
        spec.marker.map(|m| L4::from(m.proto)).unwrap_or(L4::Udp)
    }

    /// Whether this engine can make `spec`'s updates (rendered on a scratch copy;
    /// nothing is applied): the error names what it cannot.
    pub fn check(&self, spec: &EventSpec) -> Result<(), UpdateError> {
        spec.check().map_err(UpdateError::Invalid)?;
        let mut scratch = Events::new(&self.installed, self.rule_set.clone(), self.opts);
        let mut probe = spec.clone();
        // A deletion is checked as the insertion it undoes (nothing is prepared here).
        probe.kind = match spec.kind {
            UpdateKind::Delete => UpdateKind::Add,
            UpdateKind::RemoveElements => UpdateKind::AddElements,
            // Checked as its add (nothing runs when it comes due).
            UpdateKind::ExpireElements => UpdateKind::AddElements,
            // Rendered as the replacement it is (its rules are not prepared here).
            UpdateKind::Reload => UpdateKind::Replace,
            k @ (UpdateKind::Add
            | UpdateKind::Replace
            | UpdateKind::AddElements
            | UpdateKind::ReloadSet) => k,
        };
        probe.k = spec.k.min(2);
        scratch.render(0, 0, &probe)?;
        Ok(())
    }

    /// Untimed, before the traffic phase: put in place what event `event`'s updates
    /// delete or remove (`count × K` rules or elements, the marker flow's first), or
    /// the K rules its reloads load again (one batch: a reload's method is its own).
    pub fn prepare(&mut self, event: u32, spec: &EventSpec) -> Result<(), UpdateError> {
        let n = spec.count.saturating_mul(spec.k);
        match spec.kind {
            UpdateKind::Delete => {
                let hook = self.hook()?;
                let rules = self.new_rules(hook, Self::l4(spec), spec.marker.as_ref(), n);
                self.insert(event, hook, rules, spec.method)?;
            }
            UpdateKind::Reload => {
                let hook = self.hook()?;
                let rules = self.new_rules(hook, Self::l4(spec), spec.marker.as_ref(), spec.k);
                self.insert(event, hook, rules, proto::UpdateMethod::Batch)?;
            }
            UpdateKind::RemoveElements => {
                let (set, l4) = self.drop_set()?;
                let elements = self.new_elements(l4, spec.marker.as_ref(), n)?;
                self.add_elements(event, set, l4, elements, spec.method)?;
            }
            UpdateKind::ReloadSet => {
                let (set, l4) = self.drop_set()?;
                self.set_base(&set)?;
                let elements = self.new_elements(l4, spec.marker.as_ref(), spec.k)?;
                self.add_elements(event, set, l4, elements, proto::UpdateMethod::Batch)?;
            }
            // Added at the start of the traffic phase (`arm`), to expire when due.
            UpdateKind::Add
            | UpdateKind::Replace
            | UpdateKind::AddElements
            | UpdateKind::ExpireElements => {}
        }
        Ok(())
    }

    /// At the start of the traffic phase (timed, not an update's commit), `elapsed_ns`
    /// into it: add the K elements of `expire-elements` update `index` with a timeout
    /// ending when the update is due, rounded up to the engine's unit — so they expire
    /// together, by the kernel's timer, no sooner than due. The marker's element (the
    /// first update's first) is added alone first, so that when its timeout began is
    /// known to within one short call (`Armed::slack_ns`); the rest follow by `spec`'s
    /// method, each step's timeout counted from its own start. The commit's
    /// `timeout_ns` is the first step's timeout, `slack_ns` its call's length.
    pub fn arm(
        &mut self,
        event: u32,
        index: u32,
        spec: &EventSpec,
        elapsed_ns: u64,
    ) -> Result<Armed, UpdateError> {
        if spec.kind != UpdateKind::ExpireElements {
            return Err(UpdateError::Invalid(format!(
                "{} is not an update that expires",
                spec.kind.name()
            )));
        }
        let (set, l4) = self.drop_set()?;
        let marker = if index == 0 {
            spec.marker.as_ref()
        } else {
            None
        };
        let mut elements = self.new_elements(l4, marker, spec.k)?;
        let rest = match marker {
            Some(_) if elements.len() > 1 => elements.split_off(1),
            _ => vec![],
        };
        let due = spec.due_ns(index);
        let t0 = Instant::now();
        let mut out = Armed {
            event,
            index,
            elements: vec![],
            expires_by: t0,
            expired: false,
            timeout_ns: 0,
            slack_ns: 0,
            committed: Committed::default(),
        };
        for group in [elements, rest].into_iter().filter(|g| !g.is_empty()) {
            let since = t0.elapsed();
            let ms = self.timeout_ms(due.saturating_sub(elapsed_ns + since.as_nanos() as u64));
            let change = Change::AddElements {
                set: set.clone(),
                l4,
                elements: group,
                timeout_ms: Some(ms),
            };
            let steps =
                backend(self.installed.engine).change(&self.installed, &change, spec.method)?;
            let done = commit(&steps)?;
            if out.elements.is_empty() {
                out.timeout_ns = ms * 1_000_000;
                out.slack_ns = done.commit_ns;
            }
            out.committed.calls += done.calls;
            out.expires_by = Instant::now() + Duration::from_millis(ms);
            let Change::AddElements { elements, .. } = change else {
                unreachable!("built as an element addition above")
            };
            out.elements.extend(elements);
        }
        out.committed.commit_ns = t0.elapsed().as_nanos() as u64;
        self.armed.push(out.clone());
        Ok(out)
    }

    /// A timeout of `ns`, in ms rounded up to the engine's unit (at least one).
    fn timeout_ms(&self, ns: u64) -> u64 {
        let step = backend(self.installed.engine).timeout_step_ms().max(1);
        ns.div_ceil(1_000_000).div_ceil(step).max(1) * step
    }

    /// The steps of update `index` of event `event` (rendered, not run), and the
    /// change itself — for dry runs and tests.
    pub fn render(
        &mut self,
        event: u32,
        index: u32,
        spec: &EventSpec,
    ) -> Result<(Change, Vec<Step>), UpdateError> {
        let marker = if index == 0 {
            spec.marker.as_ref()
        } else {
            None
        };
        // The whole rule set a replace or reload loads (a per-rule load adds its rules).
        let mut loaded: Option<RuleSet> = None;
        let change = match spec.kind {
            UpdateKind::Add => {
                let hook = self.hook()?;
                Change::Insert {
                    hook,
                    at: self.place_at(hook, spec.place)?,
                    rules: self.new_rules(hook, Self::l4(spec), marker, spec.k),
                }
            }
            UpdateKind::Delete => {
                let hook = self.hook()?;
                let (rules, handles) = self.take_rules(event, spec.k)?;
                Change::Delete {
                    hook,
                    rules,
                    handles,
                }
            }
            UpdateKind::Replace => {
                let hook = self.hook()?;
                let extra = self.new_rules(hook, Self::l4(spec), marker, spec.k);
                self.replacement(hook, extra, &mut loaded)?
            }
            UpdateKind::Reload => {
                let hook = self.hook()?;
                // The rule set in force: every rule the events put in place, where it
                // stands (this event's, and an earlier event's additions — a trace's
                // `add` before it). A check's scratch copy has none prepared: it
                // renders fresh ones.
                let mut extra: Vec<Rule> = self.rules.iter().map(|r| r.item.clone()).collect();
                if extra.is_empty() {
                    extra = self.new_rules(hook, Self::l4(spec), spec.marker.as_ref(), spec.k);
                }
                self.replacement(hook, extra, &mut loaded)?
            }
            UpdateKind::AddElements | UpdateKind::ExpireElements => {
                let (set, l4) = self.drop_set()?;
                Change::AddElements {
                    elements: self.new_elements(l4, marker, spec.k)?,
                    set,
                    l4,
                    // An expiry's, as `arm` adds them at the start of the traffic.
                    timeout_ms: (spec.kind == UpdateKind::ExpireElements)
                        .then(|| self.timeout_ms(spec.due_ns(index))),
                }
            }
            UpdateKind::RemoveElements => {
                let (set, l4) = self.drop_set()?;
                let taken = self.take_elements(event, spec.k)?;
                Change::RemoveElements {
                    set,
                    l4,
                    elements: taken,
                }
            }
            UpdateKind::ReloadSet => {
                let (set, l4) = self.drop_set()?;
                // The set in force: the installed elements and every one the events
                // put in place (a check's scratch copy has none: it renders fresh ones).
                let mut elements = self.set_base(&set)?.to_vec();
                if self.elements.is_empty() {
                    elements.extend(self.new_elements(l4, spec.marker.as_ref(), spec.k)?);
                }
                elements.extend(self.elements.iter().map(|e| e.item));
                Change::ReloadSet { set, l4, elements }
            }
        };
        let mut steps = match (&change, spec.method, &loaded) {
            (Change::Replace(new), proto::UpdateMethod::FlushLoad, _) => self.flush_load(new)?,
            (Change::Replace(new), proto::UpdateMethod::PerRule, Some(rs)) => {
                self.per_rule_load(new, rs)?
            }
            (_, method, _) => {
                backend(self.installed.engine).change(&self.installed, &change, method)?
            }
        };
        if let (Change::Insert { .. }, Some(m), proto::EventPlace::AfterEstablishedCtDelete) =
            (&change, marker, spec.place)
        {
            steps.push(ct_delete(m));
        }
        Ok((change, steps))
    }

    /// The replacement by the installed rule set with `extra` at the head of `hook`'s
    /// chain, rendered; that rule set goes to `loaded` (a per-rule load adds its rules).
    fn replacement(
        &self,
        hook: Hook,
        extra: Vec<Rule>,
        loaded: &mut Option<RuleSet>,
    ) -> Result<Change, UpdateError> {
        let mut rs = self.rule_set.clone();
        let at = rs.rules.iter().position(|r| r.hook == hook).unwrap_or(0);
        rs.rules.splice(at..at, extra);
        let rendered = render_with(&rs, self.installed.engine, &self.opts)?;
        *loaded = Some(rs);
        Ok(Change::Replace(Box::new(rendered)))
    }

    /// A replacement in two steps: `new`'s removal batches (they remove what any
    /// rendering of fwbench's rule set created: its own table, chains and sets, and
    /// the jumps to them), then its install batches. Between the two, none of
    /// fwbench's rules is in force. The BPF engines' program is not reloaded so.
    fn flush_load(&self, new: &Rendered) -> Result<Vec<Step>, UpdateError> {
        match self.installed.engine.kind() {
            EngineKind::Nft | EngineKind::Xtables => Ok(batch_steps(&new.remove)
                .into_iter()
                .chain(batch_steps(&new.install))
                .collect()),
            EngineKind::None | EngineKind::Bpf => {
                Err(UpdateError::Render(RenderError::Unsupported {
                    engine: self.installed.engine,
                    feature: "a reload in two steps (flush-load)".into(),
                    hint: " (its updates are map writes: --event-method map)".into(),
                }))
            }
        }
    }

    /// A load one rule at a time, as a firewall script of `iptables -I` / `nft insert
    /// rule` calls runs it (fail2ban's restart re-adds its bans so): `new`'s removal
    /// batches, then each chain created holding only its last rule (one batch), then
    /// every other rule of `rs` put in by a call of its own, the chain's last first.
    /// Until the last call only the chains' tails are in force: the marker's drop rule,
    /// at the head, comes last. Rule sets whose drops sit in sets, and imported ones,
    /// are refused (their rules are not single rules; `reload-set` refills a set one
    /// element at a time).
    fn per_rule_load(&self, new: &Rendered, rs: &RuleSet) -> Result<Vec<Step>, UpdateError> {
        let engine = self.installed.engine;
        let refuse = |why: &str, hint: &str| {
            Err(UpdateError::Render(RenderError::Unsupported {
                engine,
                feature: format!("a load one rule at a time (per-rule){why}"),
                hint: hint.into(),
            }))
        };
        match engine.kind() {
            EngineKind::Nft | EngineKind::Xtables => {}
            EngineKind::None | EngineKind::Bpf => {
                return refuse("", " (its updates are map writes: --event-method map)")
            }
        }
        if rs.raw.is_some() {
            return refuse(
                " of an imported rule set",
                " (--event-method batch or flush-load)",
            );
        }
        if !rs.sets.is_empty() || !new.drop_sets.is_empty() {
            return refuse(
                " of a rule set whose drops sit in sets",
                " (reload-set --event-method per-rule refills a set element by element)",
            );
        }
        let mut hooks: Vec<Hook> = Vec::new();
        for r in &rs.rules {
            if !hooks.contains(&r.hook) {
                hooks.push(r.hook);
            }
        }
        let last = |h: Hook| rs.rules.iter().rposition(|r| r.hook == h);
        let tails: Vec<usize> = hooks.iter().filter_map(|h| last(*h)).collect();
        let mut skeleton = rs.clone();
        skeleton.rules = tails.iter().map(|i| rs.rules[*i].clone()).collect();
        let base = render_with(&skeleton, engine, &self.opts)?;
        let mut steps: Vec<Step> = batch_steps(&new.remove)
            .into_iter()
            .chain(batch_steps(&base.install))
            .collect();
        for hook in hooks {
            let rules: Vec<Rule> = rs
                .rules
                .iter()
                .enumerate()
                .filter(|(i, r)| r.hook == hook && !tails.contains(i))
                .map(|(_, r)| r.clone())
                .collect();
            if rules.is_empty() {
                continue;
            }
            let change = Change::Insert { hook, at: 0, rules };
            steps.extend(backend(engine).change(
                &self.installed,
                &change,
                proto::UpdateMethod::PerRule,
            )?);
        }
        Ok(steps)
    }

    /// Stop a change of many calls between two once `stop` is set (the agent sets it
    /// when the traffic phase ends); the rest is refused as [`UpdateError::Stopped`].
    pub fn stop_with(&mut self, stop: Arc<AtomicBool>) {
        self.stop = stop;
    }

    /// Whether a replacement was stopped half-way ([`UpdateError::Stopped`]).
    pub fn cut_short(&self) -> bool {
        self.cut_short
    }

    /// Apply update `index` of event `event` (timed) and note what it put in place.
    pub fn apply(
        &mut self,
        event: u32,
        index: u32,
        spec: &EventSpec,
    ) -> Result<Committed, UpdateError> {
        if spec.kind == UpdateKind::ExpireElements {
            // Nothing runs: the kernel's timer takes them out (`arm`).
            for a in &mut self.armed {
                if (a.event, a.index) == (event, index) {
                    a.expired = true;
                }
            }
            return Ok(Committed::default());
        }
        if spec.kind != UpdateKind::Add {
            self.resolve()?;
        }
        let (change, steps) = self.render(event, index, spec)?;
        if let Change::Insert { hook, at, .. } = &change {
            if self
                .pending
                .first()
                .is_some_and(|p| (p.0, p.1) != (*hook, *at))
            {
                self.resolve()?;
            }
        }
        // Only a replacement stops half-way: the undo puts the installed rule set back
        // (an insert or element change cut short would leave what it made unnoted).
        let never = AtomicBool::new(false);
        let stop = match change {
            Change::Replace(_) => &*self.stop,
            Change::Insert { .. }
            | Change::Delete { .. }
            | Change::AddElements { .. }
            | Change::RemoveElements { .. }
            | Change::ReloadSet { .. } => &never,
        };
        let done = match commit_until(&steps, stop) {
            Ok(d) => d,
            Err(e) => {
                let _ = commit(&backend(self.installed.engine).after_failed(&change));
                // A replacement cut short left part of a rule set: the undo puts the
                // installed one back.
                if let Change::Replace(_) = change {
                    self.replaced = true;
                }
                return Err(match e {
                    Stop::Tool(e) => e.into(),
                    Stop::Stopped(done, of, secs) => {
                        self.cut_short = true;
                        UpdateError::Stopped { done, of, secs }
                    }
                });
            }
        };
        match change {
            Change::Insert { hook, at, rules } => {
                let k = rules.len();
                let first = self.rules.len();
                self.note_rules(event, rules, &done.handles);
                if done.handles.is_empty() && k > 0 {
                    self.pending.push((hook, at, first, k));
                }
            }
            Change::Replace(_) => self.replaced = true,
            Change::AddElements { elements, .. } => {
                self.elements
                    .extend(elements.into_iter().map(|item| InForce {
                        event,
                        item,
                        handle: None,
                    }))
            }
            // A set's reload leaves the elements in force as they were.
            Change::Delete { .. } | Change::RemoveElements { .. } | Change::ReloadSet { .. } => {}
        }
        Ok(done)
    }

    fn insert(
        &mut self,
        event: u32,
        hook: Hook,
        rules: Vec<Rule>,
        method: proto::UpdateMethod,
    ) -> Result<(), UpdateError> {
        self.resolve()?;
        let change = Change::Insert { hook, at: 0, rules };
        let steps = backend(self.installed.engine).change(&self.installed, &change, method)?;
        let done = commit(&steps)?;
        let Change::Insert { rules, .. } = change else {
            unreachable!("built as an insert above")
        };
        let handles = self.handles_after_insert(hook, 0, rules.len(), &done)?;
        self.note_rules(event, rules, &handles);
        Ok(())
    }

    fn add_elements(
        &mut self,
        event: u32,
        set: String,
        l4: L4,
        elements: Vec<SetElem>,
        method: proto::UpdateMethod,
    ) -> Result<(), UpdateError> {
        let change = Change::AddElements {
            set,
            l4,
            elements,
            timeout_ms: None,
        };
        let steps = backend(self.installed.engine).change(&self.installed, &change, method)?;
        commit(&steps)?;
        let Change::AddElements { elements, .. } = change else {
            unreachable!("built as an element addition above")
        };
        self.elements
            .extend(elements.into_iter().map(|item| InForce {
                event,
                item,
                handle: None,
            }));
        Ok(())
    }

    /// Handles of rules just inserted into `hook`'s chain behind its first `at`, in
    /// insertion order (the last rule first): echoed by the commit, else read back
    /// untimed.
    fn handles_after_insert(
        &self,
        hook: Hook,
        at: usize,
        k: usize,
        done: &Committed,
    ) -> Result<Vec<u64>, UpdateError> {
        if !done.handles.is_empty() {
            return Ok(done.handles.clone());
        }
        let b = backend(self.installed.engine);
        let mut h = b.handles(&self.installed, hook, at, k)?;
        h.reverse();
        Ok(h)
    }

    /// Note inserted rules; handles in insertion order (the last rule first).
    fn note_rules(&mut self, event: u32, rules: Vec<Rule>, handles: &[u64]) {
        let mut handles: Vec<u64> = handles.to_vec();
        handles.reverse();
        for (i, item) in rules.into_iter().enumerate() {
            self.rules.push(InForce {
                event,
                item,
                handle: handles.get(i).copied(),
            });
        }
    }

    /// The first `k` rules event `event` put in place, taken out of the notes.
    fn take_rules(&mut self, event: u32, k: u32) -> Result<(Vec<Rule>, Vec<u64>), UpdateError> {
        let taken = take_notes(&mut self.rules, event, k, "rules left to delete")?;
        let handles = taken.iter().filter_map(|r| r.handle).collect();
        Ok((taken.into_iter().map(|r| r.item).collect(), handles))
    }

    fn take_elements(&mut self, event: u32, k: u32) -> Result<Vec<SetElem>, UpdateError> {
        let taken = take_notes(&mut self.elements, event, k, "elements left to remove")?;
        Ok(taken.into_iter().map(|e| e.item).collect())
    }

    /// Take out everything the events put in place (a replacement: the installed rule
    /// set again), in one batch per kind; the first failure, after trying all.
    pub fn undo(&mut self) -> Result<(), UpdateError> {
        let b = backend(self.installed.engine);
        // One batch per kind; the BPF engines' one mechanism is the map write.
        let method = match self.installed.engine.kind() {
            EngineKind::Bpf => proto::UpdateMethod::Map,
            EngineKind::None | EngineKind::Nft | EngineKind::Xtables => proto::UpdateMethod::Batch,
        };
        let mut first: Option<UpdateError> = self.resolve().err();
        let mut run = |change: Change| {
            let res = b
                .change(&self.installed, &change, method)
                .map_err(UpdateError::from)
                .and_then(|steps| commit(&steps).map_err(UpdateError::from));
            if let Err(e) = res {
                first.get_or_insert(e);
            }
        };
        // Elements set to expire and not expired yet: a group whose timer runs out
        // within the next second is waited for (a removal racing its timer would find
        // some gone and fail); the others are removed in one batch (their timer is far
        // off: every one of them is there). One call per element took minutes at
        // 50 000 of them, holding a Ctrl-C's cleanup.
        let (margin, soon) = (Duration::from_millis(100), Duration::from_secs(1));
        let mut live: Vec<SetElem> = vec![];
        let mut wait_until: Option<Instant> = None;
        for a in std::mem::take(&mut self.armed) {
            let by = a.expires_by + margin;
            match by.checked_duration_since(Instant::now()) {
                None => {}
                Some(left) if left <= soon => wait_until = wait_until.max(Some(by)),
                Some(_) => live.extend(a.elements),
            }
        }
        if let Some(t) = wait_until {
            std::thread::sleep(t.saturating_duration_since(Instant::now()));
        }
        if let (false, Ok((set, l4))) = (live.is_empty(), self.drop_set()) {
            run(Change::RemoveElements {
                set,
                l4,
                elements: live,
            });
        }
        if self.replaced {
            // The installed rule set again: events' rules and elements go with it.
            run(Change::Replace(Box::new(self.installed.clone())));
            self.replaced = false;
            self.rules.clear();
            self.elements.clear();
        }
        if let Some(hook) = self.hook {
            let rules: Vec<InForce<Rule>> = std::mem::take(&mut self.rules);
            if !rules.is_empty() {
                let handles: Vec<u64> = rules.iter().filter_map(|r| r.handle).collect();
                run(Change::Delete {
                    hook,
                    rules: rules.into_iter().map(|r| r.item).collect(),
                    handles,
                });
            }
        }
        let elements: Vec<InForce<SetElem>> = std::mem::take(&mut self.elements);
        if !elements.is_empty() {
            if let Ok((set, l4)) = self.drop_set() {
                run(Change::RemoveElements {
                    set,
                    l4,
                    elements: elements.into_iter().map(|e| e.item).collect(),
                });
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        if !self.is_clean() {
            let _ = self.undo();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_read_from_nft_echo() {
        let out = "insert rule inet fwbench forward handle 6 ip saddr 192.0.2.9 udp dport 65535 \
                   counter packets 0 bytes 0 drop # handle 5\n\
                   insert rule inet fwbench forward ip saddr 192.0.2.8 udp dport 65535 counter \
                   packets 0 bytes 0 drop # handle 6\n# new generation 3 by process 1 (nft)\n";
        assert_eq!(echoed_handles(out), vec![5, 6]);
    }

    #[test]
    fn event_ports_count_down_and_never_meet_model_fillers() {
        assert_eq!(event_port(0), 65535);
        assert_eq!(event_port(FILLER_ADDRS), 65534);
        // A model's fillers use ports 1 + k / 768 for k < 1 000 000: at most 1303.
        assert!(event_port(100_000 * 100) > 1303);
    }
}
