//! The gateway's report on its rule set after a trial, built once on the gateway.
//!
//! Owns: [`stop`] (read the verdict counters, remove the rules, time it). The
//! [`Report`] itself is plain data in `fwmodel` (re-exported here), carried typed on
//! the wire. Must not: decide anything about the trial (the controller does).

use crate::install::{verdicts, Installed};
pub use fwmodel::report::Report;

/// Read the verdict counters, then remove the rules (timed). `events_changed_elements`:
/// gateway events added elements to the rule set's drop set (see [`verdicts`]).
pub fn stop(inst: Installed, events_changed_elements: bool) -> Report {
    let events_set = inst
        .rendered
        .drop_sets
        .first()
        .filter(|_| events_changed_elements);
    let verdicts = verdicts(&inst.rendered, events_set);
    let settings = inst.rendered.settings.clone();
    let (engine, rules, elements, install_ms) = (
        inst.rendered.engine,
        inst.rules,
        inst.elements,
        inst.install_ms,
    );
    let removed = inst.remove();
    Report {
        engine,
        rules,
        elements,
        install_ms,
        remove_ms: removed.as_ref().ok().copied(),
        remove_error: removed.as_ref().err().map(|e| e.to_string()),
        verdicts: verdicts.as_ref().ok().cloned(),
        verdicts_error: verdicts.as_ref().err().map(|e| e.to_string()),
        settings,
    }
}
