//! The gateway role (the device under test): what it sets up and what it reports.
//!
//! Owns: the gateway's role spec and results.
//! Must not: import the role enums or messages (`role`, `msg`) that carry these types.

use crate::conn::{ProxyResults, ProxySpec};
use crate::measure::IfCounters;
use serde::{Deserialize, Serialize};

/// What the gateway role sets up. Firewall rules arrive with the firewall issue;
/// today the gateway records its forwarding state and serves as the DUT probe point.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GatewaySpec {
    /// sysctls the gateway must have (name → value); the agent restores old values at teardown.
    pub sysctls: Vec<(String, String)>,
    /// The rule set to install for the trial (a rule request: engine plus model spec
    /// and addresses, or an imported file, as JSON), rendered by the gateway agent,
    /// verified, counted and removed at stop. `None`: no rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firewall: Option<serde_json::Value>,
    /// Steer the packet processing of the gateway's interfaces to these CPUs (RPS), e.g.
    /// "1": on veth, forwarding and filtering otherwise run on the *sender's* CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steer_cpus: Option<String>,
    /// Proxy mode: run a userspace TCP relay in the gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxySpec>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GatewayResults {
    /// sysctl values in force during the trial.
    pub sysctls: Vec<(String, String)>,
    /// Rule set figures: engine, rules, elements, install_ms, remove_ms, verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firewall: Option<serde_json::Value>,
    /// Interface counters of the gateway over the trial (Start to Stop).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<IfCounters>,
    /// Proxy mode: what the relay did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyResults>,
}
