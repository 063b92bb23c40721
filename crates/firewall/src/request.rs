//! What the controller asks the gateway to install: compact (a model spec and the
//! addresses, or an imported file's text), rendered where it is installed. The
//! controller renders the same request for dry runs and pre-flight checks; rendering
//! is deterministic.
//!
//! Owns: [`Request`] and its one conversion to and from the wire (`proto` carries it
//! as JSON, since `proto` cannot depend on this crate).
//! Must not: run programs or read files.

use crate::model::{Engine, Imported, Ip, RuleSet};
use crate::models::{generate, Addressing, ModelError, ModelSpec};
use crate::render::{render, RenderError, Rendered};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub engine: Engine,
    pub ip: Ip,
    pub spec: Option<ModelSpec>,
    pub addressing: Option<Addressing>,
    pub imported: Option<Imported>,
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
        Ok(render(&self.rule_set()?, self.engine)?)
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
