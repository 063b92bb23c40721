//! What the controller asks the gateway to install, rendered where it is installed.
//! The controller renders the same request for dry runs and pre-flight checks;
//! rendering is deterministic.
//!
//! Owns: turning a [`Request`] (plain data in `fwmodel`, re-exported here, carried
//! typed on the wire) into its rule set ([`rule_set`]) and its engine's batches
//! ([`render`]). Must not: run programs or read files.

use crate::model::{EngineOptions, RuleSet};
use crate::models::{generate, ModelError};
use crate::render::{render_with, RenderError, Rendered};
pub use fwmodel::request::Request;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("rule request names neither a model nor an import")]
    Incomplete,
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Render(#[from] RenderError),
}

/// The rule set asked for.
pub fn rule_set(req: &Request) -> Result<RuleSet, RequestError> {
    Ok(match (&req.imported, &req.spec, &req.addressing) {
        (Some(imp), _, _) => RuleSet {
            description: format!("imported from {}", imp.source),
            raw: Some(imp.clone()),
            ..RuleSet::empty(req.ip)
        },
        (None, Some(spec), Some(a)) => generate(spec, a)?,
        _ => return Err(RequestError::Incomplete),
    })
}

/// The rule set asked for, rendered for the request's engine.
pub fn render(req: &Request) -> Result<Rendered, RequestError> {
    render_with_room(req, Room::default())
}

/// Room for what gateway events add to a rule set of fixed size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Room {
    /// More elements in every set (nft sets, ipsets, the BPF set map).
    pub elements: u32,
    /// More rules before the first (the BPF engines' rule table).
    pub rules: u32,
    /// Sets whose elements may expire (`EngineOptions::set_timeouts`).
    pub timeouts: bool,
}

/// The engine options of the request, with `room` for what gateway events add.
pub fn options(req: &Request, room: Room) -> EngineOptions {
    EngineOptions {
        nft_family: req.nft_family,
        set_room: room.elements,
        rule_room: room.rules,
        set_timeouts: room.timeouts,
    }
}

/// [`render`] with `room` for what gateway events add.
pub fn render_with_room(req: &Request, room: Room) -> Result<Rendered, RequestError> {
    Ok(render_with(
        &rule_set(req)?,
        req.engine,
        &options(req, room),
    )?)
}
