//! What the controller asks the gateway to install: compact (a model spec and the
//! addresses, or an imported file's text), rendered where it is installed
//! (`firewall::request::render`; rendering is deterministic, so the controller renders
//! the same request for dry runs and pre-flight checks).
//!
//! Owns: [`Request`], as `proto::GatewaySpec::firewall` carries it.
//! Must not: render, run programs or read files.

use crate::model::{Engine, Imported, Ip, NftFamily};
use crate::models::{Addressing, ModelSpec};
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

impl Request {
    /// The engine the request installs with, as the results name it.
    pub fn effective_engine(&self) -> crate::model::EffectiveEngine {
        crate::model::EffectiveEngine::new(self.engine, self.nft_family)
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
        let r: Request = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(r.nft_family, NftFamily::Inet);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            old,
            "the default is not serialized"
        );
        let ip = Request {
            nft_family: NftFamily::Ip,
            ..r
        };
        let v = serde_json::to_value(&ip).unwrap();
        assert_eq!(v["nft_family"], "ip");
        assert_eq!(serde_json::from_value::<Request>(v).unwrap(), ip);
        assert_eq!(ip.effective_engine().to_string(), "nft/ip");
    }
}
