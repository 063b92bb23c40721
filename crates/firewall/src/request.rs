//! What the controller asks the gateway to install: compact (a model spec and the
//! addresses, or an imported file's text), rendered where it is installed. The
//! controller renders the same request for dry runs and pre-flight checks; rendering
//! is deterministic.
//!
//! Owns: [`Request`] and its one conversion to and from the wire (`proto` carries it
//! as JSON, since `proto` cannot depend on this crate).
//! Must not: run programs or read files.

use crate::model::{Engine, EngineOptions, Imported, Ip, NftFamily, RuleSet};
use crate::models::{generate, Addressing, ModelError, ModelSpec};
use crate::render::{render_with, RenderError, Rendered};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub engine: Engine,
    pub ip: Ip,
    pub spec: Option<ModelSpec>,
    pub addressing: Option<Addressing>,
    pub imported: Option<Imported>,
    /// Table family of the nft engines (frames of older controllers have none: inet).
    #[serde(default, skip_serializing_if = "NftFamily::is_default")]
    pub nft_family: NftFamily,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("rule request names neither a model nor an import")]
    Incomplete,
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Render(#[from] RenderError),
}

impl Request {
    /// The rule set asked for.
    pub fn rule_set(&self) -> Result<RuleSet, RequestError> {
        Ok(match (&self.imported, &self.spec, &self.addressing) {
            (Some(imp), _, _) => RuleSet {
                description: format!("imported from {}", imp.source),
                raw: Some(imp.clone()),
                ..RuleSet::empty(self.ip)
            },
            (None, Some(spec), Some(a)) => generate(spec, a)?,
            _ => return Err(RequestError::Incomplete),
        })
    }

    /// The rule set asked for, rendered for the request's engine.
    pub fn render(&self) -> Result<Rendered, RequestError> {
        self.render_with_room(0)
    }

    /// The engine options of the request, with room for `set_room` more elements in
    /// every set (gateway events that add elements).
    pub fn options(&self, set_room: u32) -> EngineOptions {
        EngineOptions {
            nft_family: self.nft_family,
            set_room,
        }
    }

    /// [`Request::render`] with room for `set_room` more elements in every set.
    pub fn render_with_room(&self, set_room: u32) -> Result<Rendered, RequestError> {
        Ok(render_with(
            &self.rule_set()?,
            self.engine,
            &self.options(set_room),
        )?)
    }

    /// The request as `proto::GatewaySpec::firewall` carries it.
    pub fn to_wire(&self) -> serde_json::Value {
        // INVARIANT: plain data with string keys; serializing it cannot fail.
        serde_json::to_value(self).expect("a rule request serializes")
    }

    /// The request from `proto::GatewaySpec::firewall`.
    pub fn from_wire(v: &serde_json::Value) -> Result<Request, serde_json::Error> {
        Request::deserialize(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_without_nft_family_is_inet() {
        let old = serde_json::json!({
            "engine": "nft", "ip": "V4", "spec": null, "addressing": null, "imported": null
        });
        let r = Request::from_wire(&old).unwrap();
        assert_eq!(r.nft_family, NftFamily::Inet);
        assert_eq!(r.to_wire(), old, "the default is not serialized");
        let ip = Request {
            nft_family: NftFamily::Ip,
            ..r
        };
        assert_eq!(ip.to_wire()["nft_family"], "ip");
        assert_eq!(Request::from_wire(&ip.to_wire()).unwrap(), ip);
    }
}
