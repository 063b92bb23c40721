//! Churn replay (issue 39): a trace of gateway updates, one operation per line —
//! `TIME OP [K]` (`0.5s add 1`, `1.2s delete 1`, `3s replace 100`, `4s reload`), `#`
//! comments, times from the start of the traffic phase, non-decreasing — replayed by
//! the gateway agent as one update per operation (`--event-trace FILE`, the scenario
//! axis `event_trace`). The grammar is in docs/events.md ("Churn replay") and
//! docs/schema/event-trace.abnf.
//!
//! Owns: the format ([`parse`], refusing bad input with `file:line:column` and what
//! was expected), its limits (at most [`proto::MAX_UPDATES`] operations, K up to
//! [`proto::MAX_UPDATE_K`]), which operations go together in one trace, reading the
//! file once ([`Trace::load`]) and its content's fingerprint (the trial key's part).
//! Must not: know the testbed, an engine, or how the operations become the agent's
//! schedule (`workloads::events` does that).

use proto::UpdateKind;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;

/// Format version a trace may state on its first line (`format 1`).
pub const FORMAT: u32 = 1;
/// Latest time an operation may have, in seconds (a day).
pub const MAX_TIME_S: u64 = 86_400;
/// Largest trace file read (10 000 operations take ~300 KB; the rest is room for
/// comments): a larger one is refused before it is read whole.
pub const MAX_BYTES: u64 = 4 << 20;

/// One operation of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceOp {
    /// Nanoseconds after the start of the traffic phase.
    pub at_ns: u64,
    pub kind: UpdateKind,
    /// Rules or elements it changes (a reload without K: 1).
    pub k: u32,
    /// Line of the file it was written on (1-based), for messages.
    pub line: u32,
}

impl TraceOp {
    /// Its time in seconds.
    pub fn at_s(&self) -> f64 {
        self.at_ns as f64 / 1e9
    }
}

/// A trace of updates, as read from its file. In the trial's key (canonical JSON)
/// it is only its number of operations and the fingerprint of their canonical text,
/// so the key changes with what the trace does — not with its file's name, its
/// comments or how its times were written (`500ms` = `0.5s`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Trace {
    /// The file as named (resolved against a scenario's directory).
    #[serde(skip)]
    pub file: String,
    #[serde(skip)]
    pub ops: Vec<TraceOp>,
    /// Operations in the trace.
    pub operations: usize,
    /// FNV-1a (64 bits, hex) of the canonical operations: `NS KIND K\n` each.
    pub fnv: String,
}

/// Why a trace was refused: where (`file:line:column`; line 0: the whole file) and
/// what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {msg}", at(*line, *col))]
pub struct TraceError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

fn at(line: u32, col: u32) -> String {
    match (line, col) {
        (0, _) => String::new(),
        (l, 0) => format!(":{l}"),
        (l, c) => format!(":{l}:{c}"),
    }
}

/// The operations by name, in the order the messages list them.
const OPS: &str = "add, delete, replace, reload, reload-set, add-elements or remove-elements";

impl Trace {
    /// A trace named but not read yet (an axis value or a flag, before the front door
    /// reads it: `plan::build`).
    pub fn named(file: &str) -> Trace {
        Trace {
            file: file.to_string(),
            ..Trace::default()
        }
    }

    /// Whether [`Trace::load`] has read it.
    pub fn is_loaded(&self) -> bool {
        !self.ops.is_empty()
    }

    /// Read and parse its file (named by `file`), once.
    pub fn load(&mut self) -> Result<(), TraceError> {
        if self.is_loaded() {
            return Ok(());
        }
        let cannot = |e: std::io::Error| TraceError {
            file: self.file.clone(),
            line: 0,
            col: 0,
            msg: format!("cannot read the event trace: {e}"),
        };
        let mut bytes = vec![];
        std::fs::File::open(Path::new(&self.file))
            .and_then(|f| f.take(MAX_BYTES + 1).read_to_end(&mut bytes))
            .map_err(cannot)?;
        if bytes.len() as u64 > MAX_BYTES {
            return Err(TraceError {
                file: self.file.clone(),
                line: 0,
                col: 0,
                msg: format!(
                    "larger than {} MiB: expected an event trace of at most {} operations",
                    MAX_BYTES >> 20,
                    proto::MAX_UPDATES
                ),
            });
        }
        let text = String::from_utf8(bytes).map_err(|_| TraceError {
            file: self.file.clone(),
            line: 0,
            col: 0,
            msg: "not UTF-8 text: expected an event trace (lines TIME OP ARGS)".into(),
        })?;
        *self = parse(&self.file, &text)?;
        Ok(())
    }

    /// The first operation (a loaded trace has one).
    pub fn first(&self) -> Option<&TraceOp> {
        self.ops.first()
    }
}

/// The canonical text of operations: one `NS KIND K` line each.
pub fn canonical(ops: &[TraceOp]) -> String {
    ops.iter()
        .map(|o| format!("{} {} {}\n", o.at_ns, o.kind.name(), o.k))
        .collect()
}

fn fnv(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A token of a line: its text and 1-based column (in characters).
struct Token<'a> {
    text: &'a str,
    col: u32,
}

impl Token<'_> {
    /// What a token past the end of a statement is told.
    fn unexpected(&self) -> String {
        format!(
            "unexpected '{}': expected the end of the line or a # comment",
            self.text
        )
    }
}

/// The tokens of a line before its `#` comment.
fn tokens(line: &str) -> Vec<Token<'_>> {
    let body = line.split('#').next().unwrap_or("");
    let mut out = vec![];
    let mut start: Option<(usize, u32)> = None;
    let mut col = 0u32;
    for (i, c) in body.char_indices() {
        col += 1;
        match (c.is_whitespace(), start) {
            (true, Some((s, sc))) => {
                out.push(Token {
                    text: &body[s..i],
                    col: sc,
                });
                start = None;
            }
            (false, None) => start = Some((i, col)),
            (true, None) | (false, Some(_)) => {}
        }
    }
    if let Some((s, sc)) = start {
        out.push(Token {
            text: &body[s..],
            col: sc,
        });
    }
    out
}

/// `0.5s`, `250ms`, `3s`: nanoseconds, exactly (no float rounding).
pub fn parse_time(t: &str) -> Option<u64> {
    let (num, unit_ns) = if let Some(v) = t.strip_suffix("ms") {
        (v, 1_000_000u64)
    } else if let Some(v) = t.strip_suffix('s') {
        (v, 1_000_000_000u64)
    } else {
        return None;
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || (num.contains('.') && frac.is_empty()) {
        return None;
    }
    let int: u64 = int.parse().ok()?;
    // Fractional digits beyond a nanosecond are refused rather than rounded.
    let scale = unit_ns.to_string().len() as u32 - 1;
    if frac.len() as u32 > scale {
        return None;
    }
    let frac_ns = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()? * 10u64.pow(scale - frac.len() as u32)
    };
    let ns = int.checked_mul(unit_ns)?.checked_add(frac_ns)?;
    (ns <= MAX_TIME_S * 1_000_000_000).then_some(ns)
}

/// `12.5s`: a time as a trace writes it (the shortest exact seconds).
pub fn format_time(ns: u64) -> String {
    let (s, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
    if frac == 0 {
        return format!("{s}s");
    }
    let f = format!("{frac:09}");
    format!("{s}.{}s", f.trim_end_matches('0'))
}

/// Parse a trace's text; `file` names it in messages. Refuses, at the first fault,
/// naming `file:line:column` and what was expected.
pub fn parse(file: &str, text: &str) -> Result<Trace, TraceError> {
    let err = |line: u32, col: u32, msg: String| TraceError {
        file: file.to_string(),
        line,
        col,
        msg,
    };
    let mut ops: Vec<TraceOp> = vec![];
    let mut statements = 0u32;
    for (n, raw) in text.lines().enumerate() {
        let line = n as u32 + 1;
        let toks = tokens(raw);
        let Some(first) = toks.first() else {
            continue;
        };
        statements += 1;
        if first.text == "format" {
            format_line(&toks, statements).map_err(|(col, msg)| err(line, col, msg))?;
            continue;
        }
        let at_ns = parse_time(first.text).ok_or_else(|| {
            err(
                line,
                first.col,
                format!(
                    "'{}' is not a time: expected seconds or milliseconds with the unit \
                     (0.5s, 250ms), from 0 to {MAX_TIME_S}s",
                    first.text
                ),
            )
        })?;
        if let Some(prev) = ops.last().filter(|p| p.at_ns > at_ns) {
            return Err(err(
                line,
                first.col,
                format!(
                    "time {} is before the previous operation's {} (line {}): expected times \
                     that do not decrease",
                    format_time(at_ns),
                    format_time(prev.at_ns),
                    prev.line
                ),
            ));
        }
        let op = toks.get(1).ok_or_else(|| {
            err(
                line,
                first.col + first.text.chars().count() as u32,
                format!("missing operation after the time: expected {OPS}"),
            )
        })?;
        let kind: UpdateKind = op.text.parse().map_err(|_| {
            err(
                line,
                op.col,
                format!("unknown operation '{}': expected {OPS}", op.text),
            )
        })?;
        let k = count(toks.get(2), kind, op).map_err(|(col, msg)| err(line, col, msg))?;
        if let Some(extra) = toks.get(3) {
            return Err(err(line, extra.col, extra.unexpected()));
        }
        if ops.len() as u32 >= proto::MAX_UPDATES {
            return Err(err(
                line,
                first.col,
                format!(
                    "more than {} operations: expected at most {} in one trace",
                    proto::MAX_UPDATES,
                    proto::MAX_UPDATES
                ),
            ));
        }
        let this = TraceOp {
            at_ns,
            kind,
            k,
            line,
        };
        check_together(&ops, &this).map_err(|msg| err(line, op.col, msg))?;
        ops.push(this);
    }
    if ops.is_empty() {
        return Err(err(
            0,
            0,
            "no operations: expected at least one line TIME OP [K], e.g. 0.5s add 1".into(),
        ));
    }
    Ok(Trace {
        file: file.to_string(),
        operations: ops.len(),
        fnv: fnv(&canonical(&ops)),
        ops,
    })
}

/// A `format` line (`toks[0]` is "format"): the first statement, with this version;
/// else the column and the message.
fn format_line(toks: &[Token<'_>], statements: u32) -> Result<(), (u32, String)> {
    if statements != 1 {
        return Err((
            toks[0].col,
            "'format' after an operation: expected it as the first line that is not blank \
             or a comment"
                .into(),
        ));
    }
    match toks.get(1) {
        Some(v) if v.text == FORMAT.to_string() => {}
        Some(v) => return Err((v.col, format!("format '{}': expected {FORMAT}", v.text))),
        None => {
            return Err((
                toks[0].col + 6,
                format!("missing version: expected 'format {FORMAT}'"),
            ))
        }
    }
    match toks.get(2) {
        Some(extra) => Err((extra.col, extra.unexpected())),
        None => Ok(()),
    }
}

/// An operation's K (`k`, after the operation `op`; a reload's is optional, 1); else
/// the column and the message.
fn count(k: Option<&Token<'_>>, kind: UpdateKind, op: &Token<'_>) -> Result<u32, (u32, String)> {
    match (k, kind) {
        (None, UpdateKind::Reload | UpdateKind::ReloadSet) => Ok(1),
        (None, _) => Err((
            op.col + op.text.chars().count() as u32,
            format!(
                "missing K after '{}': expected the number of rules or elements it changes, \
                 1 to {}",
                kind.name(),
                proto::MAX_UPDATE_K
            ),
        )),
        (Some(k), _) => k
            .text
            .parse::<u32>()
            .ok()
            .filter(|&k| k > 0 && k <= proto::MAX_UPDATE_K)
            .ok_or_else(|| {
                (
                    k.col,
                    format!(
                        "K '{}': expected a whole number from 1 to {}",
                        k.text,
                        proto::MAX_UPDATE_K
                    ),
                )
            }),
    }
}

/// Which operations go together in one trace, each replayed as `--event` runs it
/// alone: a deletion or removal takes out rules or elements put in place before the
/// traffic, which a replacement or reload before it has taken out (or, for nft,
/// renumbered); a reload loads the rule set in force again with the marker's rule in
/// it, which only additions leave standing.
fn check_together(before: &[TraceOp], op: &TraceOp) -> Result<(), String> {
    let rewrites = |o: &&TraceOp| {
        matches!(
            o.kind,
            UpdateKind::Replace | UpdateKind::Reload | UpdateKind::ReloadSet
        )
    };
    match op.kind {
        UpdateKind::Delete | UpdateKind::RemoveElements => {
            if let Some(r) = before.iter().find(rewrites) {
                return Err(format!(
                    "{} after the {} on line {}: the rule set it rewrote no longer holds what \
                     a {} takes out; expected deletions and removals before every replace and \
                     reload",
                    op.kind.name(),
                    r.kind.name(),
                    r.line,
                    op.kind.name()
                ));
            }
        }
        UpdateKind::ExpireElements => {
            return Err(format!(
                "{} is no trace operation: its elements are added at the start of the traffic \
                 and expire by the kernel's timer (a trace removes a ban with remove-elements)",
                op.kind.name()
            ))
        }
        UpdateKind::Add
        | UpdateKind::Replace
        | UpdateKind::AddElements
        | UpdateKind::Reload
        | UpdateKind::ReloadSet => {}
    }
    // A reload loads what is in force again, the marker's drop in it: its violations
    // mean something only beside the additions that leave that standing — rules for a
    // reload, elements for a set's.
    for (reload, companion) in [
        (UpdateKind::Reload, UpdateKind::Add),
        (UpdateKind::ReloadSet, UpdateKind::AddElements),
    ] {
        let all = || before.iter().chain(std::iter::once(op));
        let r = all().find(|o| o.kind == reload);
        let other = all().find(|o| o.kind != reload && o.kind != companion);
        if let (Some(r), Some(o)) = (r, other) {
            let (what, drop) = match reload {
                UpdateKind::ReloadSet => ("a set's reload loads the set in force", "element"),
                _ => ("a reload loads the rule set in force", "rule"),
            };
            return Err(format!(
                "{} (line {}) and {} (line {}) in one trace: {what} again, the marker's drop \
                 {drop} in it, so its violations mean something only beside additions; \
                 expected only {} and {} operations in a trace with {}s",
                r.kind.name(),
                r.line,
                o.kind.name(),
                o.line,
                reload.name(),
                companion.name(),
                reload.name()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;
